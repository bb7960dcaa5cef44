/* Directed seek in 3D (section 4 of Jakob, "Directional extensions of seek
 * steering behavior"): the 2D procedure in a steering plane through A, W
 * and d_W, with the plane guard described in the header. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modules/dseek/dseek_geom.h"

#define DSEEK_UNIT_TOL 1e-3f
#define DSEEK_SAME_POINT 1e-6f
/* The guard band around the line w, as a fraction of r_agent at least
 * (header: h_guard = max(zero_tol, this * r_agent)). */
#define DSEEK_GUARD_MIN 1e-3f
/* The out-of-plane guard: within DSEEK_GUARD_RANGE (r_agent + r_waypoint)
 * of W, when r_agent sin(beta) > DSEEK_GUARD_SWING h (header). */
#define DSEEK_GUARD_RANGE 2.0f
#define DSEEK_GUARD_SWING 0.5f
/* A part of d_A orthogonal to d_W shorter than this has no direction worth
 * building a plane on. */
#define DSEEK_PLANE_MIN 1e-4f

static int finite3(vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }
static int is_zero3(vec3 v) { return v.x == 0.0f && v.y == 0.0f && v.z == 0.0f; }

static int unit_ok3(vec3 d, vec3* unit)
{
    float len = vec3_length(d);
    if (!(fabsf(len - 1.0f) <= DSEEK_UNIT_TOL)) return 0;
    *unit = vec3_scale(d, 1.0f / len);
    return 1;
}

static dseek_status_t fail3(dseek_result3_t* out, vec3 dA, vec3 dW, const char* msg)
{
    memset(out, 0, sizeof *out);
    vec3 s = vec3_normalize(dA);
    if (is_zero3(s)) s = vec3_normalize(dW);
    if (is_zero3(s)) s = vec3_make(1.0f, 0.0f, 0.0f);
    out->steer = s;
    out->stage = DSEEK_STAGE_II;
    snprintf(out->message, sizeof out->message, "%s", msg);
    return DSEEK_ERR_INPUT;
}

/* A unit vector orthogonal to the unit x: the coordinate axis least aligned
 * with x, orthogonalized (deterministic, never degenerate). */
static vec3 any_perpendicular(vec3 x)
{
    vec3 e = vec3_make(1.0f, 0.0f, 0.0f);
    if (fabsf(x.y) < fabsf(x.x) && fabsf(x.y) <= fabsf(x.z))
        e = vec3_make(0.0f, 1.0f, 0.0f);
    else if (fabsf(x.z) < fabsf(x.x) && fabsf(x.z) < fabsf(x.y))
        e = vec3_make(0.0f, 0.0f, 1.0f);
    return vec3_normalize(vec3_sub(e, vec3_scale(x, vec3_dot(e, x))));
}

/* f_y of the frame F (eqs. (6)-(7)) with the guard near the line w. */
static vec3 plane_y(vec3 rel, vec3 fx, vec3 dA, float guard)
{
    vec3 h_vec = vec3_sub(rel, vec3_scale(fx, vec3_dot(rel, fx)));
    float h = vec3_length(h_vec);
    if (h >= guard && h > 0.0f) return vec3_scale(h_vec, 1.0f / h);
    vec3 g = vec3_sub(dA, vec3_scale(fx, vec3_dot(dA, fx)));
    vec3 y = h_vec;
    if (vec3_length(g) > DSEEK_PLANE_MIN) {
        g = vec3_normalize(g);
        if (vec3_dot(g, h_vec) < 0.0f) g = vec3_neg(g); /* blend, never cancel */
        y = vec3_add(h_vec, vec3_scale(g, guard - h));
    }
    y = vec3_normalize(y);
    return is_zero3(y) ? any_perpendicular(fx) : y;
}

dseek_status_t dseek_steer_3d(vec3 A, vec3 dA, vec3 W, vec3 dW, const dseek_params_t* p, dseek_result3_t* out)
{
    if (!out) return DSEEK_ERR_INPUT;
    const char* bad = dseek_check_params(p);
    if (bad) return fail3(out, dA, dW, bad);
    if (!finite3(A) || !finite3(W)) return fail3(out, dA, dW, "dseek: A or W is not finite");
    if (!finite3(dA) || !finite3(dW)) return fail3(out, dA, dW, "dseek: d_A or d_W is not finite");
    vec3 ua, uw;
    if (!unit_ok3(dA, &ua)) {
        char msg[128];
        snprintf(msg, sizeof msg, "dseek: d_A has length %g, must be 1 within 1e-3", (double)vec3_length(dA));
        return fail3(out, dA, dW, msg);
    }
    if (!unit_ok3(dW, &uw)) {
        char msg[128];
        snprintf(msg, sizeof msg, "dseek: d_W has length %g, must be 1 within 1e-3", (double)vec3_length(dW));
        return fail3(out, ua, dW, msg);
    }
    dA = ua;
    dW = uw;
    vec3 rel = vec3_sub(A, W);
    float heading_gap = atan2f(vec3_length(vec3_cross(dA, dW)), vec3_dot(dA, dW));
    if (vec3_length(rel) <= DSEEK_SAME_POINT * p->r_agent && heading_gap > p->parallel_tol)
        return fail3(out, dA, dW, "dseek: A == W with d_A != d_W: no path to take");

    /* The frame F: eq. (5), then eqs. (6)-(7) normalized, with the guard. */
    vec3 fx = dW;
    vec3 fy = plane_y(rel, fx, dA, fmaxf(p->zero_tol, DSEEK_GUARD_MIN * p->r_agent));
    vec2 A2 = vec2_make(vec3_dot(rel, fx), vec3_dot(rel, fy));
    vec2 dA2 = vec2_normalize(vec2_make(vec3_dot(dA, fx), vec3_dot(dA, fy)));
    if (dA2.x == 0.0f && dA2.y == 0.0f) {
        /* d_A is normal to the plane: every in-plane direction is a right
         * angle away; start by heading toward W. */
        dA2 = vec2_normalize(vec2_neg(A2));
        if (dA2.x == 0.0f && dA2.y == 0.0f) dA2 = vec2_make(1.0f, 0.0f);
    }

    dseek_result2_t r2;
    dseek_status_t st = dseek_steer_2d(A2, dA2, vec2_zero(), vec2_make(1.0f, 0.0f), p, &r2);
    memset(out, 0, sizeof *out);
    out->plane_x = fx;
    out->plane_y = fy;
    if (st != DSEEK_OK) {
        /* Only reachable within rounding of A == W, where the plane's
         * projection of A vanishes. */
        dseek_status_t s3 = fail3(out, dA, dW, r2.message);
        out->plane_x = fx;
        out->plane_y = fy;
        return s3;
    }
    /* eq. (8) */
    vec3 s = vec3_add(vec3_scale(fx, r2.steer.x), vec3_scale(fy, r2.steer.y));
    /* The minimum-distance guard (section 4's closing remark): the plane
     * turns about w at V sin(beta) / h as the agent leaves it (beta the
     * heading's angle out of the plane, h the distance from w), while an
     * in-plane turn at the side vector does nothing to beta. Close to W, when
     * that swing would exceed half the turn rate V / r_agent, turn into the
     * plane first: steer along d_A's in-plane part. */
    if (r2.stage == DSEEK_STAGE_I || r2.stage == DSEEK_CLOSE) {
        float sin_beta = fabsf(vec3_dot(dA, vec3_cross(fx, fy)));
        if (vec2_length(A2) < DSEEK_GUARD_RANGE * (p->r_agent + p->r_waypoint) &&
            p->r_agent * sin_beta > DSEEK_GUARD_SWING * fabsf(A2.y)) {
            s = vec3_add(vec3_scale(fx, dA2.x), vec3_scale(fy, dA2.y));
            r2.stage = DSEEK_CLOSE;
        }
    }
    s = vec3_normalize(s);
    /* The 2D steer is within 90 degrees of the in-plane heading, hence of
     * d_A; only the toward-W fallback above can miss by rounding. */
    float along = vec3_dot(s, dA);
    if (along < 0.0f) {
        vec3 t = vec3_normalize(vec3_sub(s, vec3_scale(dA, along)));
        s = is_zero3(t) ? dA : t;
    }
    if (is_zero3(s)) s = dA;
    out->steer = s;
    out->stage = r2.stage;
    out->path_is_cross = r2.path_is_cross;
    out->total_angle = r2.total_angle;
    out->path_length = r2.path_length;
    out->turn_axis = vec3_normalize(vec3_cross(fx, fy));
    if (out->stage == DSEEK_STAGE_I) {
        out->turn = r2.agent_turn;
        out->turn_left = r2.phi_agent;
    } else if (out->stage == DSEEK_STAGE_III) {
        out->turn = r2.waypoint_turn;
        out->turn_left = r2.phi_waypoint;
    } else if (out->stage == DSEEK_STAGE_II) {
        out->next_turn = r2.waypoint_turn;
        out->straight_left = r2.tangent_length;
    } else if (r2.stage == DSEEK_CLOSE && r2.dubins_word >= 0) {
        dseek_close_turn(&r2, &out->turn, &out->turn_left);
    }
    return DSEEK_OK;
}

void dseek_follow_circle_3d(vec3 A, vec3 dA, vec3 W, vec3 dW, float o, const dseek_params_t* p,
                            dseek_arc3_t* out)
{
    dA = vec3_normalize(dA);
    dW = vec3_normalize(dW);
    vec3 rel = vec3_sub(A, W);
    vec3 fx = dW;
    vec3 fy = plane_y(rel, fx, dA, fmaxf(p->zero_tol, DSEEK_GUARD_MIN * p->r_agent));
    vec2 A2 = vec2_make(vec3_dot(rel, fx), vec3_dot(rel, fy));
    vec2 dA2 = vec2_normalize(vec2_make(vec3_dot(dA, fx), vec3_dot(dA, fy)));
    if (dA2.x == 0.0f && dA2.y == 0.0f) dA2 = vec2_make(1.0f, 0.0f);
    dseek_arc2_t a2;
    dseek_follow_circle_2d(A2, dA2, vec2_zero(), vec2_make(1.0f, 0.0f), o, p, &a2);
    vec3 s = vec3_normalize(vec3_add(vec3_scale(fx, a2.steer.x), vec3_scale(fy, a2.steer.y)));
    float along = vec3_dot(s, dA);
    if (along < 0.0f) {
        vec3 t = vec3_normalize(vec3_sub(s, vec3_scale(dA, along)));
        s = is_zero3(t) ? dA : t;
    }
    out->steer = is_zero3(s) ? dA : s;
    out->turn_axis = vec3_scale(vec3_normalize(vec3_cross(fx, fy)), o);
    out->arc_left = a2.arc_left;
    out->radial_error = a2.radial_error;
    /* The heading's angle out of the plane counts as error too. */
    float out_of_plane = asinf(fminf(1.0f, fabsf(vec3_dot(dA, vec3_cross(fx, fy)))));
    out->heading_error = a2.heading_error + out_of_plane;
    out->past = a2.past;
}
