/* Directed seek geometry (Jakob, "Directional extensions of seek steering
 * behavior"): the chosen 3-segment path against an independent reference
 * built from angles in double precision, the stage tests of eqs. (2)-(4),
 * kinematic simulations that must arrive from every start of a grid (2D far
 * and close, other integrators, two radii, 3D), and the error paths.
 * Simulations step the heading toward the steer by at most V dt / r_min and
 * move V dt along it, with V dt = 0.02 r_min. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd/vec.h"
#include "modules/dseek/dseek_geom.h"
#include "support.h"

#include "dseek_sim.h"

/* Finite and of unit length (a NaN fails every comparison); finite_unit2
 * is in dseek_sim.h. */
static int finite_unit3(vec3 v) { return fabsf(vec3_length(v) - 1.0f) < 1e-5f; }

/* ---- Reference geometry, from angles, in double ------------------------- */

static const double PI_D = 3.14159265358979323846;

typedef struct ref_path {
    int exists;
    int cross;
    int opposite;
    int o_agent, o_way;
    double cax, cay; /* agent circle centre */
    double fx, fy;   /* tangent point on the agent circle */
    double theta_t;  /* heading of the straight segment */
    double seg;      /* its length */
    double phi1, phi2, total, length;
} ref_path_t;

/* Angle turned from heading a to heading b in orientation o, in [0, 2 pi). */
static double ref_turn(double a, double b, int o)
{
    double d = fmod(o * (b - a), 2.0 * PI_D);
    if (d < 0.0) d += 2.0 * PI_D;
    return d;
}

/* Centre of the circle of radius r tangent to heading theta at (x, y),
 * turning with orientation o (+1 left). */
static void ref_centre(double x, double y, double theta, double r, int o, double* cx, double* cy)
{
    *cx = x + r * cos(theta + o * 0.5 * PI_D);
    *cy = y + r * sin(theta + o * 0.5 * PI_D);
}

/* The 3-segment path from the agent circle (o_a, r_a) to the waypoint
 * circle (o_w, r_w): the tangent line direction theta_t makes
 * |D| sin(theta_D - theta_t) = o_w r_w - o_a r_a with the centre line (the
 * signed distances of the two centres from the line differ by that much),
 * on the branch travelling from the agent circle toward the waypoint circle. */
static ref_path_t ref_make(vec2 A, vec2 dA, vec2 W, vec2 dW, double r_a, double r_w, int o_a, int o_w)
{
    ref_path_t p;
    memset(&p, 0, sizeof p);
    double ta = atan2(dA.y, dA.x), tw = atan2(dW.y, dW.x);
    double cwx, cwy;
    ref_centre(A.x, A.y, ta, r_a, o_a, &p.cax, &p.cay);
    ref_centre(W.x, W.y, tw, r_w, o_w, &cwx, &cwy);
    p.o_agent = o_a;
    p.o_way = o_w;
    p.cross = o_a != o_w;
    double dx = cwx - p.cax, dy = cwy - p.cay, dist = hypot(dx, dy);
    double q = o_w * r_w - o_a * r_a;
    if (!(dist > 0.0) || fabs(q) > dist) return p;
    p.exists = 1;
    p.theta_t = atan2(dy, dx) - asin(q / dist);
    /* The tangent point: the radius to it is perpendicular to the line,
     * on the side away from the turn. */
    p.fx = p.cax + r_a * cos(p.theta_t - o_a * 0.5 * PI_D);
    p.fy = p.cay + r_a * sin(p.theta_t - o_a * 0.5 * PI_D);
    p.phi1 = ref_turn(ta, p.theta_t, o_a);
    p.phi2 = ref_turn(p.theta_t, tw, o_w);
    p.total = p.phi1 + p.phi2;
    p.seg = sqrt(dist * dist - q * q);
    p.length = r_a * p.phi1 + p.seg + r_w * p.phi2;
    return p;
}

/* The candidates Figure 5 compares: direct and cross for k_W (A's side), and
 * for k'_W when asked. Returns how many were written. */
static int ref_candidates(vec2 A, vec2 dA, vec2 W, vec2 dW, double r_a, double r_w, int both,
                          ref_path_t out[4])
{
    double side = (double)dW.x * ((double)A.y - W.y) - (double)dW.y * ((double)A.x - W.x);
    int o = side >= 0.0 ? 1 : -1;
    int n = 0;
    for (int k = 0; k < (both ? 2 : 1); ++k) {
        int ow = k == 0 ? o : -o;
        out[n] = ref_make(A, dA, W, dW, r_a, r_w, ow, ow);
        out[n++].opposite = k;
        out[n] = ref_make(A, dA, W, dW, r_a, r_w, -ow, ow);
        out[n++].opposite = k;
    }
    return n;
}

/* A phi within this of 0 or 2 pi is on the implementation's wrap boundary
 * (dseek_params.wrap_tol) where both readings are right. */
static int near_wrap(double phi) { return phi < 0.04 || phi > 2.0 * PI_D - 0.04; }

static void check_choice(vec2 A, vec2 dA, vec2 W, vec2 dW, const dseek_params_t* p, int* checked,
                         int* skipped)
{
    dseek_result2_t res;
    cr_assert_eq(dseek_steer_2d(A, dA, W, dW, p, &res), DSEEK_OK, "%s", res.message);
    /* Within zero_tol of w both circles count, whatever the flag (header). */
    float side = vec2_cross(dW, vec2_sub(A, W));
    ref_path_t c[4];
    int n = ref_candidates(A, dA, W, dW, p->r_agent, p->r_waypoint,
                           p->consider_both_waypoint_circles || fabsf(side) <= p->zero_tol, c);
    int best = -1, second = -1, ambiguous = 0;
    for (int i = 0; i < n; ++i) {
        if (!c[i].exists) continue;
        ambiguous |= near_wrap(c[i].phi1) || near_wrap(c[i].phi2);
        if (best < 0 || c[i].total < c[best].total) {
            second = best;
            best = i;
        } else if (second < 0 || c[i].total < c[second].total) {
            second = i;
        }
    }
    cr_assert(best >= 0, "no reference path at all");
    if (second >= 0 && c[second].total - c[best].total < 1e-3) ambiguous = 1;
    if (res.stage != DSEEK_STAGE_I || ambiguous) {
        ++*skipped;
        return;
    }
    ++*checked;
    const ref_path_t* b = &c[best];
    cr_assert_eq(res.path_is_cross, b->cross, "A (%g, %g) d_A (%g, %g): cross %d, reference %d (%g vs %g)",
                 A.x, A.y, dA.x, dA.y, res.path_is_cross, b->cross, res.total_angle, b->total);
    cr_assert_eq(res.waypoint_opposite, b->opposite);
    cr_assert_eq(res.agent_turn, b->o_agent);
    cr_assert(fabs(res.total_angle - b->total) < 2e-3, "Phi %g, reference %g", res.total_angle, b->total);
    double other = second >= 0 ? c[second].total : INFINITY;
    if (isinf(other))
        cr_assert(isinf(res.other_total_angle));
    else
        cr_assert(fabs(res.other_total_angle - other) < 2e-3, "other %g, reference %g", res.other_total_angle,
                  other);
    cr_assert(fabs(res.path_length - b->length) <= 0.02 * b->length, "length %g, reference %g",
              res.path_length, b->length);
    double tol = 1e-3 * (fabs(A.x) + fabs(A.y) + 10.0 * p->r_agent);
    cr_assert(fabs(res.center_agent.x - b->cax) < tol && fabs(res.center_agent.y - b->cay) < tol);
    cr_assert(fabs(res.tangent_from.x - b->fx) < tol && fabs(res.tangent_from.y - b->fy) < tol,
              "tangent point (%g, %g), reference (%g, %g)", res.tangent_from.x, res.tangent_from.y, b->fx,
              b->fy);
    /* Figure 5's steer: the tangent within a right angle, else the side vector. */
    vec2 want = b->phi1 <= 0.5 * PI_D ? vec2_make((float)cos(b->theta_t), (float)sin(b->theta_t))
                                      : vec2_scale(vec2_perp(dA), (float)b->o_agent);
    cr_assert(vec2_distance(res.steer, want) < 1e-3f, "steer (%g, %g), want (%g, %g)", res.steer.x,
              res.steer.y, want.x, want.y);
}

static void random_choices(int both, float r_way_ratio, uint64_t seed)
{
    uint64_t s = seed;
    int checked = 0, skipped = 0;
    for (int i = 0; i < 4000; ++i) {
        dseek_params_t p = dseek_default_params(R_MIN);
        p.consider_both_waypoint_circles = both;
        p.r_waypoint = R_MIN * r_way_ratio;
        vec2 W = vec2_make(uniform(&s, -50, 50), uniform(&s, -50, 50));
        vec2 dW = vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI));
        float dist = uniform(&s, 4.0f, 40.0f) * R_MIN;
        vec2 A = vec2_add(W, vec2_scale(vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI)), dist));
        vec2 dA = vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI));
        check_choice(A, dA, W, dW, &p, &checked, &skipped);
    }
    cr_assert(checked >= 3600, "only %d of 4000 configurations checked (%d skipped)", checked, skipped);
}

Test(dseek, chooses_the_lower_total_angle_of_the_two_paths) { random_choices(0, 1.0f, 0xd5ee01); }
Test(dseek, chooses_the_lowest_of_four_with_both_waypoint_circles) { random_choices(1, 1.0f, 0xd5ee02); }
Test(dseek, chooses_with_different_radii)
{
    random_choices(0, 1.5f, 0xd5ee03);
    random_choices(1, 0.6f, 0xd5ee04);
}

/* ---- Stages, eqs. (2)-(4) ----------------------------------------------- */

Test(dseek, stage_two_on_the_tangent_segment)
{
    uint64_t s = 0x57a6e2;
    int tested = 0;
    for (int i = 0; i < 1000; ++i) {
        dseek_params_t p = dseek_default_params(R_MIN);
        p.consider_both_waypoint_circles = i & 1;
        vec2 W = vec2_make(uniform(&s, -20, 20), uniform(&s, -20, 20));
        vec2 dW = vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI));
        /* A start pose, its reference paths, then a point on the straight
         * segment of either, heading along it. */
        float dist = uniform(&s, 4.0f, 30.0f) * R_MIN;
        vec2 A0 = vec2_add(W, vec2_scale(vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI)), dist));
        vec2 dA0 = vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI));
        ref_path_t c[4];
        ref_candidates(A0, dA0, W, dW, R_MIN, R_MIN, 0, c);
        const ref_path_t* r = &c[(i >> 1) & 1];
        if (!r->exists) r = &c[0];
        double seg = r->seg, u = uniform(&s, 0.1f, 0.9f);
        vec2 A =
            vec2_make((float)(r->fx + u * seg * cos(r->theta_t)), (float)(r->fy + u * seg * sin(r->theta_t)));
        vec2 dA = vec2_make((float)cos(r->theta_t), (float)sin(r->theta_t));
        /* The segment may start across w (the arc on k_A can cross it); there
         * "A's side" names the other circle, and the segment is not k_W's. */
        if (vec2_cross(dW, vec2_sub(A, W)) * vec2_cross(dW, vec2_sub(A0, W)) <= 0.0f) continue;
        ++tested;
        dseek_result2_t res;
        cr_assert_eq(dseek_steer_2d(A, dA, W, dW, &p, &res), DSEEK_OK);
        cr_assert_eq(res.stage, DSEEK_STAGE_II, "case %d (%s path, %.2f of %.2f m along): stage %d", i,
                     r->cross ? "cross" : "direct", u * seg, seg, res.stage);
        cr_assert(vec2_distance(res.steer, dA) < 1e-6f, "steer (%g, %g) != d_A (%g, %g)", res.steer.x,
                  res.steer.y, dA.x, dA.y);
        /* What is left: the rest of the segment, then the arc on k_W. */
        cr_assert(fabs(res.tangent_length - (1.0 - u) * seg) < 1e-3 * seg + 1e-3, "left %g of %g",
                  res.tangent_length, (1.0 - u) * seg);
        cr_assert(fabs(res.total_angle - r->phi2) < 2e-3 || near_wrap(r->phi2));
    }
    cr_assert(tested > 800, "%d", tested);
}

Test(dseek, stage_three_on_the_waypoint_circle)
{
    uint64_t s = 0x57a6e3;
    for (int i = 0; i < 1000; ++i) {
        dseek_params_t p = dseek_default_params(R_MIN);
        p.consider_both_waypoint_circles = i & 1;
        vec2 W = vec2_make(uniform(&s, -20, 20), uniform(&s, -20, 20));
        float tw = uniform(&s, -VEC_PI, VEC_PI);
        vec2 dW = vec2_from_angle(tw);
        int o = (i & 2) ? 1 : -1;
        double cx, cy;
        ref_centre(W.x, W.y, tw, R_MIN, o, &cx, &cy);
        /* A point on k_W an arc `left` before W, heading along the circle. */
        float left = uniform(&s, 5.0f * DEG, 355.0f * DEG);
        float th = tw - o * left;
        vec2 dA = vec2_from_angle(th);
        double ax, ay;
        ref_centre(cx, cy, th, R_MIN, -o, &ax, &ay); /* the point whose circle is k_W */
        vec2 A = vec2_make((float)ax, (float)ay);
        dseek_result2_t res;
        cr_assert_eq(dseek_steer_2d(A, dA, W, dW, &p, &res), DSEEK_OK);
        cr_assert_eq(res.stage, DSEEK_STAGE_III, "case %d: %g degrees before W, stage %d", i, left / DEG,
                     res.stage);
        cr_assert_eq(res.agent_turn, o);
        cr_assert(fabsf(res.total_angle - left) < 1e-3f, "turn left %g, want %g", res.total_angle, left);
        vec2 want = left <= VEC_HALF_PI ? dW : vec2_scale(vec2_perp(dA), (float)o);
        cr_assert(vec2_distance(res.steer, want) < 1e-5f, "case %d: steer (%g, %g), want (%g, %g)", i,
                  res.steer.x, res.steer.y, want.x, want.y);
    }
    /* At W along d_W: arrived. */
    dseek_params_t p = dseek_default_params(R_MIN);
    dseek_result2_t res;
    vec2 W = vec2_make(1, 2), dW = vec2_from_angle(0.3f);
    cr_assert_eq(dseek_steer_2d(W, dW, W, dW, &p, &res), DSEEK_OK);
    cr_assert_eq(res.stage, DSEEK_STAGE_III);
    cr_assert(vec2_distance(res.steer, dW) < 1e-6f);
}

Test(dseek, stage_one_turns_with_the_chosen_circle)
{
    uint64_t s = 0x57a6e1;
    int turned = 0;
    for (int i = 0; i < 4000; ++i) {
        dseek_params_t p = dseek_default_params(R_MIN);
        p.consider_both_waypoint_circles = i & 1;
        vec2 W = vec2_make(uniform(&s, -20, 20), uniform(&s, -20, 20));
        vec2 dW = vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI));
        float dist = uniform(&s, 0.1f, 40.0f) * R_MIN;
        vec2 A = vec2_add(W, vec2_scale(vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI)), dist));
        vec2 dA = vec2_from_angle(uniform(&s, -VEC_PI, VEC_PI));
        dseek_result2_t res;
        cr_assert_eq(dseek_steer_2d(A, dA, W, dW, &p, &res), DSEEK_OK);
        cr_assert(finite_unit2(res.steer));
        cr_assert(vec2_dot(res.steer, dA) >= -1e-6f, "steer more than 90 degrees from d_A");
        if (res.stage != DSEEK_STAGE_I) continue;
        float turn = atan2f(vec2_cross(dA, res.steer), vec2_dot(dA, res.steer));
        if (fabsf(turn) < 0.03f) continue; /* within wrap_tol: may turn back */
        cr_assert_eq(turn > 0.0f ? 1 : -1, res.agent_turn, "turns %g rad, chosen circle %d", turn,
                     res.agent_turn);
        cr_assert(fabsf(turn) <= VEC_HALF_PI + 1e-5f);
        ++turned;
    }
    cr_assert(turned > 3000, "%d", turned);
}

Test(dseek, waypoint_behind_is_not_stage_two)
{
    /* On w past W, heading d_W: s_direct is anti-parallel to d_A. Going
     * straight never reaches k_W; the agent has to turn (a loop). */
    dseek_params_t p = dseek_default_params(R_MIN);
    vec2 W = vec2_make(0, 0), dW = vec2_make(1, 0);
    dseek_result2_t res;
    cr_assert_eq(dseek_steer_2d(vec2_make(3.0f * R_MIN, 0.01f), dW, W, dW, &p, &res), DSEEK_OK);
    cr_assert(res.stage == DSEEK_STAGE_I || res.stage == DSEEK_CLOSE, "stage %d", res.stage);
    cr_assert(res.total_angle > 6.0f, "Phi %g", res.total_angle);
    /* Behind W on w, heading d_W: straight on. */
    cr_assert_eq(dseek_steer_2d(vec2_make(-3.0f * R_MIN, 0.0f), dW, W, dW, &p, &res), DSEEK_OK);
    cr_assert_eq(res.stage, DSEEK_STAGE_II);
}

/* ---- Kinematic simulation (simulate2: dseek_sim.h) ---------------------- */

typedef struct grid_stats {
    int runs, close_runs;
    float worst_miss, worst_heading, worst_excess;
} grid_stats_t;

static void grid2(const float* dists, int n_dists, int n_pos, int n_head, const dseek_params_t* p,
                  float r_turn, integrator_t how, int check_excess, grid_stats_t* g)
{
    memset(g, 0, sizeof *g);
    g->worst_excess = -INFINITY;
    vec2 W = vec2_make(3.0f, -2.0f), dW = vec2_from_angle(0.7f);
    for (int di = 0; di < n_dists; ++di)
        for (int ai = 0; ai < n_pos; ++ai)
            for (int hi = 0; hi < n_head; ++hi) {
                float pa = ai * (VEC_TWO_PI / n_pos) + 0.1f * di;
                float ha = hi * (VEC_TWO_PI / n_head) + 0.05f * ai;
                vec2 A = vec2_add(W, vec2_scale(vec2_from_angle(pa), dists[di] * r_turn));
                sim_out_t o = simulate2(A, vec2_from_angle(ha), W, dW, p, r_turn, how);
                cr_assert(o.arrived, "no arrival from %g r_min, position angle %g, heading %g", dists[di], pa,
                          ha);
                ++g->runs;
                g->close_runs += o.close_steps > 0;
                g->worst_miss = fmaxf(g->worst_miss, o.miss / r_turn);
                g->worst_heading = fmaxf(g->worst_heading, o.heading / DEG);
                float excess = (o.travelled - o.planned) / r_turn;
                g->worst_excess = fmaxf(g->worst_excess, excess);
                /* From afar the agent flies the path it planned at the start. */
                if (check_excess)
                    cr_assert(excess < 0.25f, "from %g r_min (%g, %g): %g r_min longer than planned",
                              dists[di], pa, ha, excess);
            }
}

static const float FAR[] = {4, 6, 8, 12, 16, 20, 25, 30, 35, 40};
static const float NEAR[] = {0.1f, 0.3f, 0.5f, 0.8f, 1.0f, 1.3f, 1.6f, 1.9f};

static void far_and_close(integrator_t how, const char* name)
{
    dseek_params_t p = dseek_default_params(R_MIN);
    grid_stats_t g;
    grid2(FAR, 10, 12, 12, &p, R_MIN, how, 1, &g);
    cr_assert_eq(g.runs, 1440);
    cr_log_info("dseek %s, %d starts at 4..40 r_min: worst miss %.4f r_min, heading %.3f deg, "
                "longest detour %.3f r_min",
                name, g.runs, (double)g.worst_miss, (double)g.worst_heading, (double)g.worst_excess);
    grid2(NEAR, 8, 8, 8, &p, R_MIN, how, 0, &g);
    cr_assert_eq(g.runs, 512);
    cr_assert(g.close_runs > 0, "the close-range method was never used");
    cr_log_info("dseek %s, %d starts inside 2 r_min: worst miss %.4f r_min, heading %.3f deg "
                "(%d used the close-range method)",
                name, g.runs, (double)g.worst_miss, (double)g.worst_heading, g.close_runs);
}

Test(dseek, arrives_from_every_start_2d, .timeout = 120) { far_and_close(TURN_THEN_MOVE, "turn-then-move"); }

Test(dseek, arrives_with_other_integrators, .timeout = 120)
{
    far_and_close(MOVE_THEN_TURN, "move-then-turn");
    far_and_close(EXACT_ARC, "exact arcs");
}

Test(dseek, arrives_from_afar_with_k_w_alone, .timeout = 120)
{
    /* Figure 5 without section 6's k'_W: every far start still arrives
     * (close starts can chatter; see the header). */
    dseek_params_t p = dseek_default_params(R_MIN);
    p.consider_both_waypoint_circles = 0;
    grid_stats_t g;
    grid2(FAR, 10, 12, 12, &p, R_MIN, TURN_THEN_MOVE, 0, &g);
    cr_log_info("dseek k_W alone, %d far starts: worst miss %.4f r_min, heading %.3f deg", g.runs,
                (double)g.worst_miss, (double)g.worst_heading);
}

Test(dseek, arrives_with_a_wider_waypoint_circle, .timeout = 120)
{
    /* Section 6: k_W of 1.5 r_min for an agent that turns at r_min. */
    dseek_params_t p = dseek_default_params(R_MIN);
    p.r_waypoint = 1.5f * R_MIN;
    grid_stats_t g;
    grid2(FAR, 10, 8, 8, &p, R_MIN, TURN_THEN_MOVE, 1, &g);
    grid2(NEAR, 8, 6, 6, &p, R_MIN, TURN_THEN_MOVE, 0, &g);
    cr_log_info("dseek r_waypoint = 1.5 r_agent, close starts: worst miss %.4f r_min, heading %.3f deg",
                (double)g.worst_miss, (double)g.worst_heading);
}

/* ---- 3D ----------------------------------------------------------------- */

static vec3 rotate_toward(vec3 h, vec3 s, float max_angle)
{
    vec3 axis = vec3_cross(h, s);
    float angle = atan2f(vec3_length(axis), vec3_dot(h, s));
    if (angle <= max_angle) return vec3_normalize(s);
    return vec3_normalize(quat_rotate(quat_from_axis_angle(axis, max_angle), h));
}

/* As simulate2, in 3D: the heading rotates toward the steer about their
 * common normal, by at most V dt / r_min; turn, then move. */
static sim_out_t simulate3(vec3 A, vec3 h, vec3 W, vec3 dW, const dseek_params_t* p)
{
    sim_out_t o;
    memset(&o, 0, sizeof o);
    const int steps = (int)((vec3_distance(A, W) + 60.0f * R_MIN) / STEP);
    pass_watch_t pass = {INFINITY, 0.0f, 0};
    for (int i = 0; i < steps; ++i) {
        dseek_result3_t res;
        cr_assert_eq(dseek_steer_3d(A, h, W, dW, p, &res), DSEEK_OK, "%s", res.message);
        cr_assert(finite_unit3(res.steer) && vec3_dot(res.steer, h) >= -1e-5f);
        if (i == 0) o.planned = res.path_length;
        o.close_steps += res.stage == DSEEK_CLOSE;
        vec3 h_new = rotate_toward(h, res.steer, STEP / R_MIN);
        float made = atan2f(vec3_length(vec3_cross(h, h_new)), vec3_dot(h, h_new));
        cr_assert(made <= STEP / R_MIN + 1e-5f, "turned %g rad in one step", made);
        vec3 next = vec3_add(A, vec3_scale(h_new, STEP));
        vec3 ab = vec3_sub(next, A);
        float t = fminf(fmaxf(vec3_dot(vec3_sub(W, A), ab) / vec3_length_sq(ab), 0.0f), 1.0f);
        float d = vec3_distance(vec3_add(A, vec3_scale(ab, t)), W);
        float herr = atan2f(vec3_length(vec3_cross(h_new, dW)), vec3_dot(h_new, dW));
        if (arrival(&pass, d, herr, &o)) return o;
        A = next;
        h = h_new;
        o.travelled += STEP;
    }
    return o;
}

/* Starts on spheres around W (elevations -69 to 69 degrees), headings at 8
 * angles in the steering plane of the start (eqs. (5)-(7)), each tilted out
 * of it by 0, +-max_tilt / 2 or +-max_tilt. */
static void grid3(const float* dists, int n_dists, float max_tilt, grid_stats_t* g)
{
    memset(g, 0, sizeof *g);
    g->worst_excess = -INFINITY;
    dseek_params_t p = dseek_default_params(R_MIN);
    vec3 W = vec3_make(3, -2, 5), dW = vec3_normalize(vec3_make(0.6f, 0.3f, -0.5f));
    for (int di = 0; di < n_dists; ++di)
        for (int ai = 0; ai < 50; ++ai)
            for (int hi = 0; hi < 8; ++hi) {
                float th = (ai % 10) * (VEC_TWO_PI / 10) + 0.3f * di, ph = -1.2f + 0.6f * (ai / 10);
                vec3 dir = vec3_make(cosf(ph) * cosf(th), cosf(ph) * sinf(th), sinf(ph));
                vec3 A = vec3_add(W, vec3_scale(dir, dists[di] * R_MIN));
                vec3 rel = vec3_sub(A, W);
                vec3 fy = vec3_normalize(vec3_sub(rel, vec3_scale(dW, vec3_dot(rel, dW))));
                vec3 fz = vec3_cross(dW, fy);
                float psi = hi * (VEC_TWO_PI / 8) + 0.2f * (ai % 10);
                float tilt = ((hi + ai) % 5 - 2) * 0.5f * max_tilt;
                vec3 in_plane = vec3_add(vec3_scale(dW, cosf(psi)), vec3_scale(fy, sinf(psi)));
                vec3 h =
                    vec3_normalize(vec3_add(vec3_scale(in_plane, cosf(tilt)), vec3_scale(fz, sinf(tilt))));
                sim_out_t o = simulate3(A, h, W, dW, &p);
                cr_assert(o.arrived, "3D: no arrival from %g r_min (%d, %d), tilt %g deg", dists[di], ai, hi,
                          tilt / DEG);
                ++g->runs;
                g->close_runs += o.close_steps > 0;
                g->worst_miss = fmaxf(g->worst_miss, o.miss / R_MIN);
                g->worst_heading = fmaxf(g->worst_heading, o.heading / DEG);
                g->worst_excess = fmaxf(g->worst_excess, (o.travelled - o.planned) / R_MIN);
            }
}

Test(dseek, arrives_in_3d_from_out_of_plane_headings, .timeout = 120)
{
    static const float d3[] = {6, 8, 12, 20, 30, 40};
    grid_stats_t g;
    grid3(d3, 6, 60.0f * DEG, &g);
    cr_assert_eq(g.runs, 2400);
    cr_log_info("dseek 3D, %d starts at 6..40 r_min tilted up to 60 deg: worst miss %.4f r_min, heading "
                "%.3f deg, longest detour %.3f r_min",
                g.runs, (double)g.worst_miss, (double)g.worst_heading, (double)g.worst_excess);
}

Test(dseek, arrives_in_3d_from_close_with_the_plane_guard, .timeout = 120)
{
    static const float d3[] = {0.5f, 1, 2, 3, 4, 5};
    grid_stats_t g;
    grid3(d3, 6, 60.0f * DEG, &g);
    cr_assert_eq(g.runs, 2400);
    cr_log_info("dseek 3D, %d starts at 0.5..5 r_min tilted up to 60 deg: worst miss %.4f r_min, heading "
                "%.3f deg (%d used CLOSE)",
                g.runs, (double)g.worst_miss, (double)g.worst_heading, g.close_runs);
}

Test(dseek, steer_3d_is_the_2d_steer_in_the_plane)
{
    /* A heading in the plane of A, W and d_W: the 3D answer is the 2D one
     * mapped back with eq. (8). */
    uint64_t s = 0x3d3d;
    for (int i = 0; i < 500; ++i) {
        dseek_params_t p = dseek_default_params(R_MIN);
        vec3 W = vec3_make(uniform(&s, -9, 9), uniform(&s, -9, 9), uniform(&s, -9, 9));
        vec3 dW = vec3_normalize(vec3_make(uniform(&s, -1, 1), uniform(&s, -1, 1), uniform(&s, -1, 1)));
        vec3 rel = vec3_make(uniform(&s, -40, 40), uniform(&s, -40, 40), uniform(&s, -40, 40));
        vec3 A = vec3_add(W, rel);
        vec3 fy = vec3_normalize(vec3_sub(rel, vec3_scale(dW, vec3_dot(rel, dW))));
        float psi = uniform(&s, -VEC_PI, VEC_PI);
        vec3 dA = vec3_add(vec3_scale(dW, cosf(psi)), vec3_scale(fy, sinf(psi)));
        dseek_result3_t r3;
        cr_assert_eq(dseek_steer_3d(A, dA, W, dW, &p, &r3), DSEEK_OK);
        cr_assert(vec3_distance(r3.plane_y, fy) < 1e-4f);
        vec2 A2 = vec2_make(vec3_dot(rel, dW), vec3_dot(rel, fy));
        dseek_result2_t r2;
        cr_assert_eq(dseek_steer_2d(A2, vec2_from_angle(psi), vec2_zero(), vec2_make(1, 0), &p, &r2),
                     DSEEK_OK);
        vec3 want = vec3_add(vec3_scale(dW, r2.steer.x), vec3_scale(fy, r2.steer.y));
        cr_assert(vec3_distance(r3.steer, want) < 1e-4f, "case %d", i);
        cr_assert_eq(r3.stage, r2.stage);
    }
}

/* ---- Bad input ---------------------------------------------------------- */

static void expect_error2(vec2 A, vec2 dA, vec2 W, vec2 dW, const dseek_params_t* p, const char* what)
{
    dseek_result2_t res;
    memset(&res, 0x7f, sizeof res); /* garbage in, nothing must leak out */
    cr_assert_eq(dseek_steer_2d(A, dA, W, dW, p, &res), DSEEK_ERR_INPUT, "%s: accepted", what);
    cr_assert(res.message[0] != '\0', "%s: no message", what);
    cr_assert(memchr(res.message, '\0', sizeof res.message) != NULL);
    cr_assert(finite_unit2(res.steer), "%s: steer (%g, %g)", what, res.steer.x, res.steer.y);
}

static void expect_error3(vec3 A, vec3 dA, vec3 W, vec3 dW, const dseek_params_t* p, const char* what)
{
    dseek_result3_t res;
    memset(&res, 0x7f, sizeof res);
    cr_assert_eq(dseek_steer_3d(A, dA, W, dW, p, &res), DSEEK_ERR_INPUT, "%s: accepted", what);
    cr_assert(res.message[0] != '\0', "%s: no message", what);
    cr_assert(finite_unit3(res.steer), "%s: steer (%g, %g, %g)", what, res.steer.x, res.steer.y, res.steer.z);
}

Test(dseek, bad_input_2d)
{
    dseek_params_t p = dseek_default_params(R_MIN);
    vec2 A = vec2_make(10, 3), W = vec2_make(-2, 1), x = vec2_make(1, 0), y = vec2_make(0, 1);
    expect_error2(vec2_make(NAN, 0), x, W, y, &p, "NaN A");
    expect_error2(A, x, vec2_make(0, INFINITY), y, &p, "infinite W");
    expect_error2(A, vec2_make(NAN, 1), W, y, &p, "NaN d_A");
    expect_error2(A, x, W, vec2_make(-INFINITY, 0), &p, "infinite d_W");
    expect_error2(A, vec2_zero(), W, y, &p, "zero d_A");
    expect_error2(A, x, W, vec2_zero(), &p, "zero d_W");
    expect_error2(A, vec2_make(1.01f, 0), W, y, &p, "long d_A");
    expect_error2(A, x, W, vec2_make(0, 0.5f), &p, "short d_W");
    expect_error2(W, x, W, y, &p, "A == W, d_A != d_W");
    /* Parameters out of range, one at a time. */
    static const struct {
        size_t offset;
        float value;
        const char* what;
    } bad[] = {
        {offsetof(dseek_params_t, r_agent), 0.0f, "r_agent 0"},
        {offsetof(dseek_params_t, r_agent), NAN, "r_agent NaN"},
        {offsetof(dseek_params_t, r_waypoint), -1.0f, "r_waypoint < 0"},
        {offsetof(dseek_params_t, zero_tol), -1.0f, "zero_tol < 0"},
        {offsetof(dseek_params_t, parallel_tol), NAN, "parallel_tol NaN"},
        {offsetof(dseek_params_t, wrap_tol), 1.0f, "wrap_tol 1"},
        {offsetof(dseek_params_t, close_total_angle), 3.0f, "close_total_angle < 2 pi"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        dseek_params_t q = p;
        memcpy((char*)&q + bad[i].offset, &bad[i].value, sizeof(float));
        expect_error2(A, x, W, y, &q, bad[i].what);
    }
    expect_error2(A, x, W, y, NULL, "NULL params");
    cr_assert_eq(dseek_steer_2d(A, x, W, y, &p, NULL), DSEEK_ERR_INPUT);
    /* Headings off unit length by less than 1e-3 are fine. */
    dseek_result2_t res;
    cr_assert_eq(dseek_steer_2d(A, vec2_make(1.0009f, 0), W, vec2_make(0, 0.9992f), &p, &res), DSEEK_OK);
    cr_assert(finite_unit2(res.steer));
    p.close_total_angle = INFINITY;
    cr_assert_eq(dseek_steer_2d(A, x, W, y, &p, &res), DSEEK_OK);
}

Test(dseek, bad_input_3d)
{
    dseek_params_t p = dseek_default_params(R_MIN);
    vec3 A = vec3_make(10, 3, 1), W = vec3_make(-2, 1, 0), x = vec3_make(1, 0, 0), z = vec3_make(0, 0, 1);
    expect_error3(vec3_make(0, NAN, 0), x, W, z, &p, "NaN A");
    expect_error3(A, x, vec3_make(0, 0, INFINITY), z, &p, "infinite W");
    expect_error3(A, vec3_zero(), W, z, &p, "zero d_A");
    expect_error3(A, x, W, vec3_make(0, 0, 2), &p, "long d_W");
    expect_error3(W, x, W, z, &p, "A == W, d_A != d_W");
    dseek_params_t q = p;
    q.r_waypoint = 0.0f;
    expect_error3(A, x, W, z, &q, "r_waypoint 0");
    expect_error3(A, x, W, z, NULL, "NULL params");
    cr_assert_eq(dseek_steer_3d(A, x, W, z, &p, NULL), DSEEK_ERR_INPUT);
    /* Degenerate but valid: at W along d_W; on the line w; d_A normal to
     * the plane; d_A along d_W on w. */
    dseek_result3_t res;
    cr_assert_eq(dseek_steer_3d(W, z, W, z, &p, &res), DSEEK_OK);
    cr_assert(finite_unit3(res.steer) && vec3_distance(res.steer, z) < 1e-5f);
    cr_assert_eq(dseek_steer_3d(vec3_make(-2, 1, -20), x, W, z, &p, &res), DSEEK_OK);
    cr_assert(finite_unit3(res.steer) && vec3_dot(res.steer, x) >= -1e-6f);
    cr_assert_eq(dseek_steer_3d(vec3_make(-2, 1, -20), z, W, z, &p, &res), DSEEK_OK);
    cr_assert_eq(res.stage, DSEEK_STAGE_II);
    cr_assert_eq(dseek_steer_3d(vec3_make(8, 1, 0), vec3_make(0, 1, 0), W, z, &p, &res), DSEEK_OK);
    cr_assert(finite_unit3(res.steer));
}
