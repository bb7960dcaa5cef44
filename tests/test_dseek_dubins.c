/* Dubins paths (src/modules/dseek/dseek_dubins.c) and the directed seek's
 * close-range method that follows them: every word's path, integrated as
 * exact arcs and lines, ends at the waypoint pose; the shortest word is no
 * longer than any CSC or CCC path found by a brute-force root search in
 * double; and the kinematic agent of dseek_sim.h, from the 512 close
 * starts of tests/test_dseek_geom.c, arrives on paths close to the Dubins
 * optimum without loops. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "simd/vec.h"
#include "modules/dseek/dseek_dubins.h"
#include "modules/dseek/dseek_geom.h"
#include "support.h"

#include "dseek_sim.h"

static const double PI2_D = 6.28318530717958647692;

/* ---- Exact integration of a returned path -------------------------------- */

typedef struct pose_d {
    double x, y, th;
} pose_d_t;

/* Follows the segments of `p` from (A, d_A) in double: an arc turns the
 * heading by o phi about its centre, a line moves along the heading. */
static pose_d_t integrate(const dseek_dubins_t* p, vec2 A, vec2 dA, double r)
{
    pose_d_t s = {A.x, A.y, atan2(dA.y, dA.x)};
    for (int i = 0; i < 3; ++i) {
        if (p->turn[i] == 0) {
            s.x += p->seg[i] * cos(s.th);
            s.y += p->seg[i] * sin(s.th);
            continue;
        }
        double o = p->turn[i];
        double cx = s.x - o * r * sin(s.th), cy = s.y + o * r * cos(s.th); /* P + o r perp(h) */
        s.th += o * p->seg[i];
        s.x = cx + o * r * sin(s.th);
        s.y = cy - o * r * cos(s.th);
    }
    return s;
}

static double heading_error(double th, vec2 d)
{
    double e = fmod(th - atan2(d.y, d.x), PI2_D);
    if (e > 0.5 * PI2_D) e -= PI2_D;
    if (e < -0.5 * PI2_D) e += PI2_D;
    return fabs(e);
}

/* A random pose pair: W within 30 r of the origin, A within `reach` r of
 * W, a third of them within 2 r and some on special lines (A == W, W
 * straight ahead or behind, parallel headings). */
static void random_poses(uint64_t* s, float r, int i, vec2* A, vec2* dA, vec2* W, vec2* dW)
{
    *W = vec2_make(uniform(s, -30, 30) * r, uniform(s, -30, 30) * r);
    *dW = vec2_from_angle(uniform(s, -VEC_PI, VEC_PI));
    float reach = (i % 3 == 0) ? 2.0f : 8.0f;
    *A = vec2_add(*W, vec2_scale(vec2_from_angle(uniform(s, -VEC_PI, VEC_PI)), uniform(s, 0, reach) * r));
    *dA = vec2_from_angle(uniform(s, -VEC_PI, VEC_PI));
    switch (i % 17) {
    case 1: *dA = *dW; break;                                    /* parallel */
    case 2: *dA = vec2_neg(*dW); break;                          /* anti-parallel */
    case 3: *A = vec2_sub(*W, vec2_scale(*dW, 3.0f * r)); break; /* W ahead on w */
    case 4: *A = *W; break;                                      /* A == W */
    default: break;
    }
}

Test(dseek, dubins_words_end_at_the_waypoint_pose)
{
    uint64_t s = 0xd0b1;
    int found[DSEEK_WORD_COUNT] = {0};
    for (int i = 0; i < 20000; ++i) {
        float r = (i & 1) ? R_MIN : 0.7f;
        vec2 A, dA, W, dW;
        random_poses(&s, r, i, &A, &dA, &W, &dW);
        for (int k = 0; k < DSEEK_WORD_COUNT; ++k) {
            dseek_dubins_t p;
            cr_assert_eq(dseek_dubins_word((dseek_word_t)k, A, dA, W, dW, r, 0.0f, &p), 1);
            if (!p.exists) {
                cr_assert(isinf(p.length));
                /* A missing CSC word has its circles too close; a missing CCC too far apart. */
                continue;
            }
            ++found[k];
            pose_d_t e = integrate(&p, A, dA, r);
            double miss = hypot(e.x - W.x, e.y - W.y), herr = heading_error(e.th, dW);
            cr_assert(miss <= 1e-4 * r && herr <= 1e-4, "%s case %d: ends %g r from W, heading off %g rad",
                      dseek_word_name((dseek_word_t)k), i, miss / r, herr);
            cr_assert(isfinite(p.length) && p.length >= 0.0f);
            double len = 0.0;
            for (int j = 0; j < 3; ++j) {
                cr_assert_eq(p.turn[j], dseek_word_turn((dseek_word_t)k, j));
                if (p.turn[j] != 0) {
                    cr_assert(p.seg[j] >= 0.0f && p.seg[j] < VEC_TWO_PI, "arc %g", p.seg[j]);
                    len += r * p.seg[j];
                } else {
                    cr_assert(p.seg[j] >= 0.0f);
                    len += p.seg[j];
                }
            }
            cr_assert(fabs(len - p.length) <= 1e-5 * (len + r));
            /* Junctions: integrating the first segment, or two, lands there. */
            dseek_dubins_t one = p;
            one.seg[1] = one.seg[2] = 0.0f;
            pose_d_t j1 = integrate(&one, A, dA, r);
            cr_assert(hypot(j1.x - p.junction[0].x, j1.y - p.junction[0].y) <= 1e-4 * r + 1e-5 * fabs(W.x));
            cr_assert(heading_error(j1.th, p.dir[0]) <= 1e-4);
        }
    }
    for (int k = 0; k < DSEEK_WORD_COUNT; ++k)
        cr_assert(found[k] > 2000, "%s found %d times", dseek_word_name((dseek_word_t)k), found[k]);
    cr_log_info("dubins: paths found per word LSL %d RSR %d LSR %d RSL %d RLR %d LRL %d (of 20000 poses)",
                found[0], found[1], found[2], found[3], found[4], found[5]);
}

/* ---- Brute force ---------------------------------------------------------- */

/* Angle turned from heading a to heading b in orientation o, in [0, 2 pi). */
static double turn_d(double a, double b, int o)
{
    double d = fmod(o * (b - a), PI2_D);
    if (d < 0.0) d += PI2_D;
    return d;
}

/* CSC with turns o1, o3, parametrized by the heading th of the line: the
 * first arc ends at F(th) = C1 - o1 r perp(th), the last starts at
 * G(th) = C3 - o3 r perp(th), and th is a path iff G - F is along +th.
 * The roots of cross(u(th), G - F) are found by sampling and bisection. */
typedef struct brute_ctx {
    double c1x, c1y, c3x, c3y, r, ta, tw;
    int o1, o3;
} brute_ctx_t;

static double csc_residual(const brute_ctx_t* c, double th, double* along)
{
    double ux = cos(th), uy = sin(th);
    double fx = c->c1x + c->o1 * c->r * uy, fy = c->c1y - c->o1 * c->r * ux; /* C - o r perp(u) */
    double gx = c->c3x + c->o3 * c->r * uy, gy = c->c3y - c->o3 * c->r * ux;
    *along = ux * (gx - fx) + uy * (gy - fy);
    return ux * (gy - fy) - uy * (gx - fx);
}

static double brute_csc(const brute_ctx_t* c)
{
    const int N = 2048;
    double best = INFINITY, along;
    double prev_th = 0.0, prev = csc_residual(c, 0.0, &along);
    for (int i = 1; i <= N; ++i) {
        double th = PI2_D * i / N, f = csc_residual(c, th, &along);
        if ((prev <= 0.0) != (f <= 0.0)) {
            double lo = prev_th, hi = th, flo = prev;
            for (int it = 0; it < 60; ++it) {
                double mid = 0.5 * (lo + hi), fm = csc_residual(c, mid, &along);
                if ((fm <= 0.0) == (flo <= 0.0)) {
                    lo = mid;
                    flo = fm;
                } else {
                    hi = mid;
                }
            }
            double t = 0.5 * (lo + hi);
            csc_residual(c, t, &along);
            if (along >= -1e-9 * c->r) {
                double len = c->r * (turn_d(c->ta, t, c->o1) + turn_d(t, c->tw, c->o3)) + fmax(along, 0.0);
                best = fmin(best, len);
            }
        }
        prev_th = th;
        prev = f;
    }
    return best;
}

/* CCC with outer turns o: the middle centre M = C1 + 2 r u(a); a is a path
 * iff |M - C3| = 2 r. Roots by sampling and bisection; arcs from angles. */
static double ccc_residual(const brute_ctx_t* c, double a)
{
    double mx = c->c1x + 2.0 * c->r * cos(a), my = c->c1y + 2.0 * c->r * sin(a);
    return hypot(mx - c->c3x, my - c->c3y) - 2.0 * c->r;
}

static double ccc_length(const brute_ctx_t* c, double a)
{
    int o = c->o1;
    double mx = c->c1x + 2.0 * c->r * cos(a), my = c->c1y + 2.0 * c->r * sin(a);
    /* Heading on a circle (C, o) at P: the radius direction turned by o 90 degrees. */
    double t1 = atan2(my - c->c1y, mx - c->c1x) + o * 0.25 * PI2_D;
    double t2 = atan2(my - c->c3y, mx - c->c3x) + o * 0.25 * PI2_D;
    return c->r * (turn_d(c->ta, t1, o) + turn_d(t1, t2, -o) + turn_d(t2, c->tw, o));
}

static double brute_ccc(const brute_ctx_t* c)
{
    const int N = 2048;
    double best = INFINITY;
    double prev_a = 0.0, prev = ccc_residual(c, 0.0);
    for (int i = 1; i <= N; ++i) {
        double a = PI2_D * i / N, f = ccc_residual(c, a);
        if ((prev <= 0.0) != (f <= 0.0)) {
            double lo = prev_a, hi = a, flo = prev;
            for (int it = 0; it < 60; ++it) {
                double mid = 0.5 * (lo + hi), fm = ccc_residual(c, mid);
                if ((fm <= 0.0) == (flo <= 0.0)) {
                    lo = mid;
                    flo = fm;
                } else {
                    hi = mid;
                }
            }
            best = fmin(best, ccc_length(c, 0.5 * (lo + hi)));
        }
        prev_a = a;
        prev = f;
    }
    return best;
}

static brute_ctx_t brute_make(vec2 A, vec2 dA, vec2 W, vec2 dW, double r, int o1, int o3)
{
    brute_ctx_t c;
    c.r = r;
    c.o1 = o1;
    c.o3 = o3;
    c.ta = atan2(dA.y, dA.x);
    c.tw = atan2(dW.y, dW.x);
    c.c1x = A.x - o1 * r * sin(c.ta);
    c.c1y = A.y + o1 * r * cos(c.ta);
    c.c3x = W.x - o3 * r * sin(c.tw);
    c.c3y = W.y + o3 * r * cos(c.tw);
    return c;
}

Test(dseek, dubins_shortest_is_no_longer_than_any_path_found_by_brute_force, .timeout = 120)
{
    uint64_t s = 0xd0b2;
    int agree = 0;
    for (int i = 0; i < 3000; ++i) {
        const float r = R_MIN;
        vec2 A, dA, W, dW;
        random_poses(&s, r, i, &A, &dA, &W, &dW);
        dseek_dubins_t best;
        cr_assert_eq(dseek_dubins_shortest(A, dA, W, dW, r, 0.0f, &best), 1);
        cr_assert(best.exists && isfinite(best.length));
        /* The shortest of the six words. */
        for (int k = 0; k < DSEEK_WORD_COUNT; ++k) {
            dseek_dubins_t p;
            dseek_dubins_word((dseek_word_t)k, A, dA, W, dW, r, 0.0f, &p);
            cr_assert(!p.exists || best.length <= p.length, "case %d: %s %g shorter than %s %g", i,
                      dseek_word_name((dseek_word_t)k), p.length, dseek_word_name(best.word), best.length);
            /* Ties go to the first word. */
            if (p.exists && p.length == best.length) cr_assert((int)best.word <= k);
        }
        /* No path of either family is shorter. */
        double brute = INFINITY;
        for (int o1 = -1; o1 <= 1; o1 += 2)
            for (int o3 = -1; o3 <= 1; o3 += 2) {
                brute_ctx_t c = brute_make(A, dA, W, dW, r, o1, o3);
                brute = fmin(brute, brute_csc(&c));
                if (o1 == o3) brute = fmin(brute, brute_ccc(&c));
            }
        double tol = 2e-3 * r + 1e-6 * (fabs(W.x) + fabs(W.y));
        cr_assert(best.length <= brute + tol, "case %d: %s %g r, brute force found %g r", i,
                  dseek_word_name(best.word), best.length / r, brute / r);
        if (fabs(best.length - brute) <= tol) ++agree;
    }
    /* And the formulas find what the search finds (the search can miss a
     * root where a residual only touches zero). */
    cr_assert(agree >= 2950, "only %d of 3000 agree with the brute-force search", agree);
}

Test(dseek, dubins_degenerate_input_gives_no_nan)
{
    vec2 x = vec2_make(1, 0), y = vec2_make(0, 1);
    dseek_dubins_t p;
    /* A == W: the same heading is the empty path, another a loop. */
    cr_assert_eq(dseek_dubins_shortest(vec2_make(1, 2), x, vec2_make(1, 2), x, 1.0f, 0.0f, &p), 1);
    cr_assert(p.length < 1e-5f && p.first_turn == 0, "length %g", p.length);
    cr_assert_eq(dseek_dubins_shortest(vec2_make(1, 2), x, vec2_make(1, 2), y, 1.0f, 0.0f, &p), 1);
    cr_assert(isfinite(p.length) && p.length > 1.0f);
    /* W straight ahead or behind on the same heading; reversed headings. */
    cr_assert_eq(dseek_dubins_shortest(vec2_zero(), x, vec2_make(5, 0), x, 1.0f, 0.0f, &p), 1);
    cr_assert(fabsf(p.length - 5.0f) < 1e-5f && p.first_turn == 0 && fabsf(p.first_left - 5.0f) < 1e-5f);
    cr_assert_eq(dseek_dubins_shortest(vec2_make(5, 0), x, vec2_zero(), x, 1.0f, 0.0f, &p), 1);
    cr_assert(isfinite(p.length) && p.length > 5.0f);
    cr_assert_eq(dseek_dubins_shortest(vec2_zero(), x, vec2_make(0, 2), vec2_neg(x), 1.0f, 0.0f, &p), 1);
    cr_assert(fabsf(p.length - VEC_PI) < 1e-4f && p.word == DSEEK_LSL, "%s %g", dseek_word_name(p.word),
              p.length);
    /* Far apart, huge and tiny scales: finite. */
    static const float scales[] = {1e-30f, 1e-3f, 1e6f, 1e20f, 1e36f};
    for (int i = 0; i < 5; ++i)
        for (int k = 0; k < DSEEK_WORD_COUNT; ++k) {
            vec2 A = vec2_make(-scales[i], 0.5f * scales[i]), W = vec2_make(scales[i], -scales[i]);
            dseek_dubins_word((dseek_word_t)k, A, y, W, x, 1.0f, 0.05f, &p);
            cr_assert(!isnan(p.length) && !isnan(p.seg[0]) && !isnan(p.seg[1]) && !isnan(p.seg[2]));
            cr_assert(!isnan(p.centre[1].x) && !isnan(p.junction[1].y) && !isnan(p.first_left));
            cr_assert(!p.exists || isfinite(p.length));
            dseek_dubins_word((dseek_word_t)k, A, y, W, x, 1e-30f, 0.0f, &p);
            cr_assert(!isnan(p.length) && !isnan(p.seg[1]) && !isnan(p.total_angle));
        }
    cr_assert_eq(dseek_dubins_shortest(vec2_make(-FLT_MAX, 0), x, vec2_make(FLT_MAX, 0), y, 1.0f, 0.0f, &p),
                 1);
    cr_assert(p.exists && isfinite(p.length));
    /* Unusable input. */
    cr_assert_eq(dseek_dubins_shortest(vec2_zero(), vec2_zero(), x, x, 1.0f, 0.0f, &p), 0);
    cr_assert(!p.exists);
    cr_assert_eq(dseek_dubins_shortest(vec2_zero(), x, x, x, 0.0f, 0.0f, &p), 0);
    cr_assert_eq(dseek_dubins_shortest(vec2_make(NAN, 0), x, x, x, 1.0f, 0.0f, &p), 0);
    cr_assert_eq(dseek_dubins_word((dseek_word_t)7, vec2_zero(), x, x, x, 1.0f, 0.0f, &p), 0);
    cr_assert_eq(dseek_dubins_shortest(vec2_zero(), x, x, x, 1.0f, -1.0f, &p), 0);
}

/* dseek_dubins_reach against the path sampled densely. */
Test(dseek, dubins_reach_is_the_farthest_point_of_the_path)
{
    uint64_t s = 0xd0b3;
    for (int i = 0; i < 2000; ++i) {
        const float r = R_MIN;
        vec2 A, dA, W, dW;
        random_poses(&s, r, i, &A, &dA, &W, &dW);
        vec2 P = vec2_add(W, vec2_make(uniform(&s, -3, 3) * r, uniform(&s, -3, 3) * r));
        dseek_dubins_t p;
        dseek_dubins_shortest(A, dA, W, dW, r, 0.0f, &p);
        double far = 0.0;
        for (int k = 0; k <= 600; ++k) {
            /* The path cut at fraction k / 600 of its length. */
            dseek_dubins_t cut = p;
            double left = p.length * k / 600.0;
            for (int j = 0; j < 3; ++j) {
                double len = p.turn[j] ? r * p.seg[j] : p.seg[j];
                double take = fmin(len, left);
                cut.seg[j] = (float)(p.turn[j] ? take / r : take);
                left -= take;
            }
            pose_d_t e = integrate(&cut, A, dA, r);
            far = fmax(far, hypot(e.x - P.x, e.y - P.y));
        }
        float reach = dseek_dubins_reach(&p, A, dA, P, r);
        cr_assert(reach >= far - 1e-3 * r && reach <= far + 1e-2 * r, "case %d: reach %g, sampled %g", i,
                  reach / r, far / r);
    }
}

/* ---- Closed loop: the close-range method on the kinematic agent ------------ */

static const float NEAR_DISTS[] = {0.1f, 0.3f, 0.5f, 0.8f, 1.0f, 1.3f, 1.6f, 1.9f};

typedef struct close_stats {
    int runs, arrived, close_runs, over, loops, max_reversals;
    double sum_ratio;
    float worst_ratio, worst_miss, worst_heading, worst_loop;
    int worst_index;
} close_stats_t;

/* The 512 close starts of tests/test_dseek_geom.c (grid2 over NEAR, 8 x 8
 * x 8): travelled length over the Dubins optimum from the start pose. */
static void close_grid(const dseek_params_t* p, integrator_t how, close_stats_t* g)
{
    memset(g, 0, sizeof *g);
    vec2 W = vec2_make(3.0f, -2.0f), dW = vec2_from_angle(0.7f);
    for (int di = 0; di < 8; ++di)
        for (int ai = 0; ai < 8; ++ai)
            for (int hi = 0; hi < 8; ++hi) {
                float pa = ai * (VEC_TWO_PI / 8) + 0.1f * di;
                float ha = hi * (VEC_TWO_PI / 8) + 0.05f * ai;
                vec2 A = vec2_add(W, vec2_scale(vec2_from_angle(pa), NEAR_DISTS[di] * R_MIN));
                vec2 dA = vec2_from_angle(ha);
                dseek_dubins_t opt;
                cr_assert_eq(dseek_dubins_shortest(A, dA, W, dW, R_MIN, 0.0f, &opt), 1);
                sim_out_t o = simulate2(A, dA, W, dW, p, R_MIN, how);
                int index = g->runs++;
                if (!o.arrived) continue;
                ++g->arrived;
                g->close_runs += o.close_steps > 0;
                g->worst_miss = fmaxf(g->worst_miss, o.miss / R_MIN);
                g->worst_heading = fmaxf(g->worst_heading, o.heading / DEG);
                float ratio = o.travelled / opt.length;
                g->sum_ratio += ratio;
                g->over += ratio > 1.10f;
                if (ratio > g->worst_ratio) {
                    g->worst_ratio = ratio;
                    g->worst_index = index;
                }
                float arcs = fabsf(opt.seg[0]) + fabsf(opt.seg[2]) + (opt.turn[1] ? fabsf(opt.seg[1]) : 0.0f);
                float loop = o.turned - arcs;
                g->worst_loop = fmaxf(g->worst_loop, loop);
                g->loops += loop > VEC_TWO_PI;
                if (o.reversals > g->max_reversals) g->max_reversals = o.reversals;
            }
}

static void log_close(const char* what, const close_stats_t* g)
{
    cr_log_info(
        "dseek close starts, %s: %d of %d arrived, travelled / Dubins mean %.4f worst %.3f (start %d), "
        "%d over 1.10, worst miss %.4f r_min heading %.3f deg, turn beyond the optimum's at most %.3f rad "
        "(%d loops), at most %d reversals, %d used CLOSE",
        what, g->arrived, g->runs, g->runs ? g->sum_ratio / g->arrived : 0.0, (double)g->worst_ratio,
        g->worst_index, g->over, (double)g->worst_miss, (double)g->worst_heading, (double)g->worst_loop,
        g->loops, g->max_reversals, g->close_runs);
}

static const char* const INTEGRATOR_NAMES[] = {"turn-then-move", "move-then-turn", "exact arcs"};

/* Every close start arrives within POS_TOL and HEAD_TOL (simulate2's
 * arrival), and the paths average within 10 % of the Dubins optimum, for
 * each integrator; the earlier steer-away method, measured the same way,
 * is logged for comparison. */
Test(dseek, close_starts_follow_near_optimal_paths, .timeout = 120)
{
    for (int how = 0; how < 3; ++how) {
        dseek_params_t p = dseek_default_params(R_MIN);
        close_stats_t g, old;
        close_grid(&p, (integrator_t)how, &g);
        p.close_method = DSEEK_CLOSE_STEER_AWAY;
        close_grid(&p, (integrator_t)how, &old);
        char what[96];
        snprintf(what, sizeof what, "%s, steer away (earlier method)", INTEGRATOR_NAMES[how]);
        log_close(what, &old);
        snprintf(what, sizeof what, "%s, Dubins", INTEGRATOR_NAMES[how]);
        log_close(what, &g);
        cr_assert_eq(g.runs, 512);
        cr_assert_eq(g.arrived, 512, "%s: %d of 512 arrived", INTEGRATOR_NAMES[how], g.arrived);
        cr_assert(g.worst_miss <= 0.05f && g.worst_heading <= 3.0f);
        double mean = g.sum_ratio / g.arrived;
        cr_assert(mean <= 1.10, "%s: travelled / Dubins %.4f on average", INTEGRATOR_NAMES[how], mean);
        cr_assert(g.close_runs > 0, "the close-range method was never used");
    }
}

/* No close start makes a full loop: the heading never turns more than
 * 2 pi beyond the optimal path's total turn, and the turn does not
 * chatter (the optimal paths reverse at most twice). */
Test(dseek, close_starts_make_no_loop, .timeout = 120)
{
    for (int how = 0; how < 3; ++how) {
        dseek_params_t p = dseek_default_params(R_MIN);
        close_stats_t g;
        close_grid(&p, (integrator_t)how, &g);
        cr_assert_eq(g.loops, 0, "%s: %d runs looped (up to %.3f rad beyond the optimum's turn)",
                     INTEGRATOR_NAMES[how], g.loops, (double)g.worst_loop);
        cr_assert(g.max_reversals <= 8, "%s: %d turn reversals", INTEGRATOR_NAMES[how], g.max_reversals);
    }
}
