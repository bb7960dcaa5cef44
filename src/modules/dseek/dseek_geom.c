/* Directed seek geometry in 2D (Jakob, "Directional extensions of seek
 * steering behavior", Figure 5 and section 6); the header says what is
 * computed and why it arrives, this file how. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modules/dseek/dseek_dubins.h"
#include "modules/dseek/dseek_geom.h"

/* Directions may be off unit length by this much before they are an error. */
#define DSEEK_UNIT_TOL 1e-3f
/* A and W closer than this fraction of r_agent are the same point. */
#define DSEEK_SAME_POINT 1e-6f
/* r_agent below r_waypoint by more than this fraction rides k_W with the
 * follow law instead of the tightest turn (stage III). */
#define DSEEK_RADIUS_RATIO_TOL 1e-4f
/* An arc shorter than this (rad) is no arc (dseek_close_turn). */
#define DSEEK_ARC_EMPTY 1e-6f
/* Stage windows as fractions of zero_tol (header, "Tolerances"): stage II
 * hands over to stage III inside DSEEK_HANDOVER zero_tol, and counts as
 * reaching it when the line along d_A passes within DSEEK_LATERAL zero_tol. */
#define DSEEK_HANDOVER 0.2f
#define DSEEK_LATERAL 0.25f
/* Close range (header): in stage I the agent follows the shortest Dubins
 * path while that path stays within DSEEK_CLOSE_REACH r of W and the best
 * 3-segment candidate is longer by more than DSEEK_SAME_PATH r. */
#define DSEEK_CLOSE_REACH 4.0f
#define DSEEK_SAME_PATH 1e-3f
/* The Dubins path is planned from DSEEK_PLAN_BACK zero_tol behind A (header,
 * "Close range": a discrete turn's heading lag). */
#define DSEEK_PLAN_BACK 0.25f

dseek_params_t dseek_default_params(float r_min)
{
    dseek_params_t p;
    p.r_agent = r_min;
    p.r_waypoint = r_min;
    p.consider_both_waypoint_circles = 1; /* header: the base case can chatter */
    p.parallel_tol = 1e-3f;
    p.wrap_tol = 0.0175f; /* 1 degree */
    p.zero_tol = 0.05f * r_min;
    p.close_total_angle = 2.5f * VEC_PI;
    p.close_method = DSEEK_CLOSE_DUBINS;
    return p;
}

/* One 3-segment path: arc on an agent circle, tangent, arc on a waypoint
 * circle. Orientations are +1 counter-clockwise, -1 clockwise. */
typedef struct candidate {
    int exists;
    int cross;    /* agent and waypoint circle turn opposite ways */
    int opposite; /* the waypoint circle is k'_W */
    float o_agent;
    float o_way;
    vec2 c_agent;
    vec2 c_way;
    vec2 t;      /* direction of the straight segment */
    vec2 p_from; /* tangent point on the agent circle */
    vec2 p_to;   /* tangent point on the waypoint circle */
    float len;   /* tangent length */
    float phi_agent;
    float phi_way;
    float total; /* eq. (1) */
} candidate_t;

/* Directed angle from u to v measured in orientation o (eq. (1)'s phi^o),
 * in [-wrap, 2 pi - wrap) rather than [0, 2 pi): an arc within `wrap` of a
 * full turn is read as a slight overshoot (header, wrap_tol), so that
 * directions wobbling around each other do not flip the arc between 0 and a
 * full loop. */
static float directed_angle(vec2 u, vec2 v, float o, float wrap)
{
    float a = o * atan2f(vec2_cross(u, v), vec2_dot(u, v));
    if (a < -wrap) a += VEC_TWO_PI;
    return a;
}

/* The same angle signed, in (-pi, pi]: positive when v is ahead of u in o. */
static float signed_angle(vec2 u, vec2 v, float o) { return o * atan2f(vec2_cross(u, v), vec2_dot(u, v)); }

/* The admissible tangent of two oriented circles (section 3.3), from the
 * agent circle to the waypoint circle: the line travelled in both circles'
 * orientations. Tangent points satisfy P = C - o r perp(t) (a circle of
 * orientation o at P with velocity t has its centre at P + o r perp(t)), so
 * P_to - P_from = D - q perp(t) with q = o_w r_w - o_a r_a, which is along t
 * iff perp(t).D = q; with t.D = L >= 0 that gives the unique
 * t = (L D - q perp(D)) / |D|^2, L = sqrt(|D|^2 - q^2). No tangent when
 * |D| < |q|: oppositely oriented circles that overlap, or one circle inside
 * the other. */
static void tangent(candidate_t* c, float r_agent, float r_way)
{
    vec2 D = vec2_sub(c->c_way, c->c_agent);
    float d2 = vec2_length_sq(D);
    float q = c->o_way * r_way - c->o_agent * r_agent;
    c->exists = d2 > 0.0f && d2 >= q * q;
    if (!c->exists) return;
    float L = sqrtf(fmaxf(d2 - q * q, 0.0f));
    vec2 t = vec2_scale(vec2_sub(vec2_scale(D, L), vec2_scale(vec2_perp(D), q)), 1.0f / d2);
    c->t = vec2_normalize(t);
    c->len = L;
    c->p_from = vec2_sub(c->c_agent, vec2_scale(vec2_perp(c->t), c->o_agent * r_agent));
    c->p_to = vec2_sub(c->c_way, vec2_scale(vec2_perp(c->t), c->o_way * r_way));
}

static int finite2(vec2 v) { return isfinite(v.x) && isfinite(v.y); }

/* d normalized into *unit when its length is 1 within DSEEK_UNIT_TOL. */
static int unit_ok2(vec2 d, vec2* unit)
{
    float len = vec2_length(d);
    if (!(fabsf(len - 1.0f) <= DSEEK_UNIT_TOL)) return 0;
    *unit = vec2_scale(d, 1.0f / len);
    return 1;
}

const char* dseek_check_params(const dseek_params_t* p)
{
    if (!p) return "dseek: params is NULL";
    if (!(p->r_agent > 0.0f && isfinite(p->r_agent))) return "dseek: r_agent must be finite and > 0";
    if (!(p->r_waypoint > 0.0f && isfinite(p->r_waypoint))) return "dseek: r_waypoint must be finite and > 0";
    if (!(p->parallel_tol >= 0.0f && p->parallel_tol < 0.25f * VEC_PI))
        return "dseek: parallel_tol must be in [0, pi/4)";
    if (!(p->wrap_tol >= 0.0f && p->wrap_tol < 0.25f * VEC_PI)) return "dseek: wrap_tol must be in [0, pi/4)";
    if (!(p->zero_tol >= 0.0f && isfinite(p->zero_tol))) return "dseek: zero_tol must be finite and >= 0";
    if (!(p->close_total_angle > VEC_TWO_PI)) return "dseek: close_total_angle must be > 2 pi";
    if (p->close_method != DSEEK_CLOSE_DUBINS && p->close_method != DSEEK_CLOSE_STEER_AWAY)
        return "dseek: close_method must be DSEEK_CLOSE_DUBINS or DSEEK_CLOSE_STEER_AWAY";
    return NULL;
}

static dseek_status_t fail2(dseek_result2_t* out, vec2 dA, vec2 dW, const char* msg)
{
    memset(out, 0, sizeof *out);
    vec2 s = vec2_normalize(dA);
    if (s.x == 0.0f && s.y == 0.0f) s = vec2_normalize(dW);
    if (s.x == 0.0f && s.y == 0.0f) s = vec2_make(1.0f, 0.0f);
    out->steer = s;
    out->stage = DSEEK_STAGE_II;
    out->other_total_angle = INFINITY;
    out->dubins_word = -1;
    snprintf(out->message, sizeof out->message, "%s", msg);
    return DSEEK_ERR_INPUT;
}

/* The close-range method (header, "Close range"): whether the agent follows
 * the shortest Dubins path (into *path) instead of the best 3-segment
 * candidate. */
static int close_dubins(vec2 A, vec2 dA, vec2 W, vec2 dW, const dseek_params_t* p, const candidate_t* cand,
                        int best, dseek_dubins_t* path)
{
    const float r = fmaxf(p->r_agent, p->r_waypoint);
    int cannot = best < 0 || cand[best].total > p->close_total_angle;
    /* The path reaches at least as far from W as A is. */
    if (!cannot && !(vec2_distance(A, W) < DSEEK_CLOSE_REACH * r)) return 0;
    vec2 from = vec2_sub(A, vec2_scale(dA, DSEEK_PLAN_BACK * p->zero_tol));
    if (!dseek_dubins_shortest(from, dA, W, dW, r, 0.0f, path)) return 0; /* not reached: input checked */
    if (cannot) return 1;
    const candidate_t* c = &cand[best];
    float len = p->r_agent * fabsf(c->phi_agent) + c->len + p->r_waypoint * fabsf(c->phi_way);
    if (!(len > path->length + DSEEK_SAME_PATH * r)) return 0; /* the paper's path is as short */
    return dseek_dubins_reach(path, A, dA, W, r) < DSEEK_CLOSE_REACH * r;
}

/* Reports the Dubins path followed in CLOSE. */
static void report_dubins(dseek_result2_t* out, const dseek_dubins_t* path, float base_o)
{
    int ccc = path->turn[1] != 0;
    out->path_is_cross = path->turn[0] != path->turn[2];
    out->agent_turn = path->turn[0];
    out->waypoint_turn = path->turn[2];
    out->waypoint_opposite = (float)path->turn[2] != base_o;
    out->total_angle = path->total_angle;
    out->phi_agent = path->seg[0];
    out->phi_middle = ccc ? path->seg[1] : 0.0f;
    out->phi_waypoint = path->seg[2];
    out->tangent_length = ccc ? 0.0f : path->seg[1];
    out->path_length = path->length;
    out->dubins_word = (int)path->word;
    out->center_agent = path->centre[0];
    out->center_waypoint = path->centre[2];
    out->tangent_from = path->junction[0];
    out->tangent_to = path->junction[1];
}

static void report_candidate(dseek_result2_t* out, const candidate_t* c, float r_agent, float r_way)
{
    out->path_is_cross = c->cross;
    out->agent_turn = (int)c->o_agent;
    out->waypoint_turn = (int)c->o_way;
    out->waypoint_opposite = c->opposite;
    out->total_angle = c->total;
    out->phi_agent = c->phi_agent;
    out->phi_waypoint = c->phi_way;
    out->tangent_length = c->len;
    out->path_length = r_agent * c->phi_agent + c->len + r_way * c->phi_way;
    out->center_agent = c->c_agent;
    out->center_waypoint = c->c_way;
    out->tangent_from = c->p_from;
    out->tangent_to = c->p_to;
}

/* Of the candidates other than `chosen` (an index, or -1), the lowest Phi. */
static float lowest_other(const candidate_t* c, int n, int chosen)
{
    float best = INFINITY;
    for (int i = 0; i < n; ++i)
        if (i != chosen && c[i].exists && c[i].total < best) best = c[i].total;
    return best;
}

/* The path of an agent already in stage II or III on waypoint circle k:
 * straight for `ahead` metres (0 in stage III), then the arc on k_W. */
static void report_on_circle(dseek_result2_t* out, vec2 A, vec2 dA, vec2 dW, vec2 c_way, float o, float ahead,
                             const dseek_params_t* p)
{
    out->path_is_cross = 0;
    out->agent_turn = (int)o;
    out->waypoint_turn = (int)o;
    out->phi_agent = 0.0f;
    out->phi_waypoint = directed_angle(dA, dW, o, p->wrap_tol);
    out->total_angle = out->phi_waypoint;
    out->tangent_length = ahead;
    out->path_length = ahead + p->r_waypoint * out->phi_waypoint;
    out->center_agent = vec2_add(A, vec2_scale(vec2_perp(dA), o * p->r_agent));
    out->center_waypoint = c_way;
    out->tangent_from = A;
    out->tangent_to = vec2_add(A, vec2_scale(dA, ahead));
}

/* Stage III steering on waypoint circle (c_way, o): along the circle, but
 * never past d_W (Figure 5's min_{d_S}(s_A, d_W)). */
static vec2 stage3_steer(vec2 A, vec2 dA, vec2 dW, vec2 c_way, float o, const dseek_params_t* p)
{
    vec2 f = vec2_scale(vec2_perp(dA), o); /* the tightest turn, a right angle from d_A */
    if (p->r_agent < p->r_waypoint * (1.0f - DSEEK_RADIUS_RATIO_TOL)) {
        /* The agent could cut inside k_W: steer along k_W's tangent at the
         * agent's projection, tilted toward the circle by the radial error,
         * which holds the agent on k_W at any step length small against
         * r_waypoint. */
        vec2 u = vec2_normalize(vec2_sub(A, c_way));
        if (u.x != 0.0f || u.y != 0.0f) {
            float err = vec2_distance(A, c_way) - p->r_waypoint;
            vec2 tp = vec2_scale(vec2_perp(u), o);
            f = vec2_rotate(tp, o * atanf(err / p->r_waypoint));
        }
    }
    /* d_W wins when it lies on the short arc from d_A to f (on either side:
     * the follow direction can be slightly behind d_A), or when the agent has
     * just turned past it (within wrap_tol: turn back rather than loop). */
    float af = signed_angle(dA, f, o);
    float aw = signed_angle(dA, dW, o);
    if (aw <= 0.0f && aw >= -p->wrap_tol) return dW;
    if ((af >= 0.0f && aw >= 0.0f && aw <= af) || (af < 0.0f && aw < 0.0f && aw >= af)) return dW;
    return f;
}

void dseek_close_turn(const dseek_result2_t* r, int* turn, float* arc_left)
{
    *turn = 0;
    *arc_left = 0.0f;
    if (r->stage != DSEEK_CLOSE || r->dubins_word < 0) return;
    if (r->phi_agent > DSEEK_ARC_EMPTY) {
        *turn = r->agent_turn;
        *arc_left = r->phi_agent;
    } else if (r->phi_middle > DSEEK_ARC_EMPTY) { /* CCC: the middle arc turns the other way */
        *turn = -r->agent_turn;
        *arc_left = r->phi_middle;
    }
}

void dseek_follow_circle_2d(vec2 A, vec2 dA, vec2 W, vec2 dW, float o, const dseek_params_t* p,
                            dseek_arc2_t* out)
{
    dA = vec2_normalize(dA);
    dW = vec2_normalize(dW);
    vec2 c_way = vec2_add(W, vec2_scale(vec2_perp(dW), o * p->r_waypoint));
    dseek_params_t tracking = *p;
    if (!(tracking.r_agent < p->r_waypoint * (1.0f - DSEEK_RADIUS_RATIO_TOL)))
        tracking.r_agent = 0.5f * p->r_waypoint; /* stage3_steer tracks the circle below its radius */
    out->steer = stage3_steer(A, dA, dW, c_way, o, &tracking);
    out->arc_left = directed_angle(dA, dW, o, p->wrap_tol);
    float dist = vec2_distance(A, c_way);
    out->radial_error = dist - p->r_waypoint;
    vec2 u = vec2_normalize(vec2_sub(A, c_way));
    vec2 tp = (u.x == 0.0f && u.y == 0.0f) ? dA : vec2_scale(vec2_perp(u), o);
    out->heading_error = fabsf(signed_angle(tp, dA, 1.0f));
    out->past = vec2_dot(vec2_sub(A, W), dW) > 0.0f;
}

dseek_status_t dseek_steer_2d(vec2 A, vec2 dA, vec2 W, vec2 dW, const dseek_params_t* p, dseek_result2_t* out)
{
    if (!out) return DSEEK_ERR_INPUT;
    const char* bad = dseek_check_params(p);
    if (bad) return fail2(out, dA, dW, bad);
    if (!finite2(A) || !finite2(W)) return fail2(out, dA, dW, "dseek: A or W is not finite");
    if (!finite2(dA) || !finite2(dW)) return fail2(out, dA, dW, "dseek: d_A or d_W is not finite");
    vec2 ua, uw;
    if (!unit_ok2(dA, &ua)) {
        char msg[128];
        snprintf(msg, sizeof msg, "dseek: d_A has length %g, must be 1 within 1e-3", (double)vec2_length(dA));
        return fail2(out, dA, dW, msg);
    }
    if (!unit_ok2(dW, &uw)) {
        char msg[128];
        snprintf(msg, sizeof msg, "dseek: d_W has length %g, must be 1 within 1e-3", (double)vec2_length(dW));
        return fail2(out, ua, dW, msg);
    }
    dA = ua;
    dW = uw;
    const float ra = p->r_agent, rw = p->r_waypoint, z = p->zero_tol, tol = p->parallel_tol;
    vec2 rel = vec2_sub(A, W);
    if (vec2_length(rel) <= DSEEK_SAME_POINT * ra && fabsf(signed_angle(dA, dW, 1.0f)) > tol)
        return fail2(out, dA, dW, "dseek: A == W with d_A != d_W: no path to take");

    memset(out, 0, sizeof *out);
    out->other_total_angle = INFINITY;
    out->dubins_word = -1;

    /* Waypoint circles: k_W on A's side of w (Figure 5's S_W), then k'_W
     * when asked (section 6) or when A is within zero_tol of w, where the
     * side flips with rounding and an agent arriving on k_W with an offset
     * may dip across w just before W. */
    float side = vec2_cross(dW, rel);
    float base_o = side >= 0.0f ? 1.0f : -1.0f;
    int n_way = (p->consider_both_waypoint_circles || fabsf(side) <= z) ? 2 : 1;
    float way_o[2] = {base_o, -base_o};
    vec2 way_c[2];
    vec2 s3[2]; /* eq. (4)'s s_direct, generalized: S_W minus the centre of
                   the agent's r_waypoint circle with k_W's orientation */
    for (int k = 0; k < n_way; ++k) {
        way_c[k] = vec2_add(W, vec2_scale(vec2_perp(dW), way_o[k] * rw));
        vec2 c_as_way = vec2_add(A, vec2_scale(vec2_perp(dA), way_o[k] * rw));
        s3[k] = vec2_sub(way_c[k], c_as_way);
    }

    /* All candidates (Figure 5's direct and cross per waypoint circle). */
    candidate_t cand[4];
    int n_cand = 0;
    for (int k = 0; k < n_way; ++k) {
        for (int cross = 0; cross <= 1; ++cross) {
            candidate_t* c = &cand[n_cand++];
            memset(c, 0, sizeof *c);
            c->cross = cross;
            c->opposite = k;
            c->o_way = way_o[k];
            c->o_agent = cross ? -way_o[k] : way_o[k];
            c->c_agent = vec2_add(A, vec2_scale(vec2_perp(dA), c->o_agent * ra));
            c->c_way = way_c[k];
            tangent(c, ra, rw);
            if (!c->exists) continue;
            c->phi_agent = directed_angle(dA, c->t, c->o_agent, p->wrap_tol);
            c->phi_way = directed_angle(c->t, dW, c->o_way, p->wrap_tol);
            c->total = c->phi_agent + c->phi_way; /* eq. (1) */
        }
    }

    /* Stages II and III, eqs. (3)-(4). The circle the agent is on (the
     * nearest within zero_tol) settles it; only when it is on none does any
     * circle's stage II count. On that circle stage II is tested first, so
     * that an agent whose circle is still ahead of k_W closes the gap going
     * straight (header, "Tolerances"). */
    int k3 = -1;
    float k3_phi = 0.0f;
    for (int k = 0; k < n_way; ++k) {
        if (!(vec2_length(s3[k]) <= z)) continue;
        /* Near W, heading about d_W, the agent is within zero_tol of both
         * circles (its two osculating circles are k_W and k'_W): the one that
         * turns the short way into d_W is the one it is on. */
        float phi = directed_angle(dA, dW, way_o[k], p->wrap_tol);
        if (k3 < 0 || phi < k3_phi) {
            k3 = k;
            k3_phi = phi;
        }
    }
    int k2 = -1;
    float k2_phi = 0.0f;
    for (int k = 0; k < n_way; ++k) {
        if (k3 >= 0 && k != k3) continue;
        const candidate_t* d = &cand[2 * k];
        float ahead = vec2_dot(s3[k], dA);
        if (!(ahead > 0.0f) || !(vec2_length(s3[k]) > DSEEK_HANDOVER * z)) continue;
        int aligned = d->exists && fabsf(signed_angle(dA, d->t, 1.0f)) <= tol;
        int passes = fabsf(vec2_cross(dA, s3[k])) <= DSEEK_LATERAL * z;
        if (!aligned && !passes) continue;
        float phi = directed_angle(dA, dW, way_o[k], p->wrap_tol);
        /* k'_W (section 6) counts only when its path is the best: being
         * aligned by chance with a worse path's tangent must not override the
         * plan. k_W's stage II is Figure 5's, unconditional (judging it too
         * made paths longer in the tests: Phi is not length). */
        if (k > 0 && phi > lowest_other(cand, n_cand, -1)) continue;
        if (k2 < 0 || phi < k2_phi) {
            k2 = k;
            k2_phi = phi;
        }
    }
    if (k2 >= 0) {
        out->stage = DSEEK_STAGE_II;
        out->steer = dA;
        report_on_circle(out, A, dA, dW, way_c[k2], way_o[k2], vec2_dot(s3[k2], dA), p);
        out->waypoint_opposite = k2;
        out->other_total_angle = lowest_other(cand, n_cand, 2 * k2);
        return DSEEK_OK;
    }
    if (k3 >= 0) {
        out->stage = DSEEK_STAGE_III;
        out->steer = stage3_steer(A, dA, dW, way_c[k3], way_o[k3], p);
        report_on_circle(out, A, dA, dW, way_c[k3], way_o[k3], 0.0f, p);
        out->waypoint_opposite = k3;
        out->other_total_angle = lowest_other(cand, n_cand, 2 * k3);
        return DSEEK_OK;
    }

    /* Stage I, eq. (2): the candidate with the lowest total angle (section
     * 3.4; strict < keeps the first of equals: direct before cross, k_W
     * before k'_W). */
    int best = -1;
    for (int i = 0; i < n_cand; ++i)
        if (cand[i].exists && (best < 0 || cand[i].total < cand[best].total)) best = i;

    if (p->close_method == DSEEK_CLOSE_DUBINS) {
        dseek_dubins_t path;
        if (close_dubins(A, dA, W, dW, p, cand, best, &path)) {
            out->stage = DSEEK_CLOSE;
            report_dubins(out, &path, base_o);
            out->other_total_angle = lowest_other(cand, n_cand, -1);
            out->steer = dseek_dubins_steer(&path, dA);
            return DSEEK_OK;
        }
    } else if (best < 0 || cand[best].total > p->close_total_angle) {
        /* Close range (header): steer away from W to gain room, within a
         * right angle of d_A like every other steer. */
        out->stage = DSEEK_CLOSE;
        vec2 away = vec2_normalize(rel);
        if (away.x == 0.0f && away.y == 0.0f) away = dA; /* only at A == W, d_A = d_W */
        if (vec2_dot(away, dA) >= 0.0f)
            out->steer = away;
        else
            out->steer = vec2_scale(vec2_perp(dA), vec2_cross(dA, away) >= 0.0f ? 1.0f : -1.0f);
        if (best >= 0) {
            report_candidate(out, &cand[best], ra, rw);
            out->other_total_angle = lowest_other(cand, n_cand, best);
        } else {
            out->agent_turn = out->waypoint_turn = (int)base_o;
            out->total_angle = out->path_length = INFINITY;
            out->center_agent = vec2_add(A, vec2_scale(vec2_perp(dA), base_o * ra));
            out->center_waypoint = way_c[0];
            out->tangent_from = out->tangent_to = A;
        }
        return DSEEK_OK;
    }

    const candidate_t* c = &cand[best];
    out->stage = DSEEK_STAGE_I;
    report_candidate(out, c, ra, rw);
    out->other_total_angle = lowest_other(cand, n_cand, best);
    /* Figure 5's min_{d_S}(s_A, t): the tangent direction once it is within
     * a right angle of the turn, before that the side vector (the tightest
     * turn, and never more than 90 degrees from d_A). */
    out->steer = c->phi_agent <= VEC_HALF_PI ? c->t : vec2_scale(vec2_perp(dA), c->o_agent);
    return DSEEK_OK;
}
