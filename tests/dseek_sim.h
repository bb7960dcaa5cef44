/* The kinematic agent of the directed seek tests (tests/test_dseek_geom.c,
 * tests/test_dseek_dubins.c): the heading steps toward the steer by at most
 * V dt / r_turn and the agent moves V dt along it, with V dt = 0.02 r_min,
 * under three integrators; arrival is a pass within POS_TOL of W with the
 * heading within HEAD_TOL of d_W. Static functions: each test file gets its
 * own copy. */
#ifndef SHOAL_TEST_DSEEK_SIM_H
#define SHOAL_TEST_DSEEK_SIM_H

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "simd/vec.h"
#include "modules/dseek/dseek_geom.h"

#define DEG (VEC_PI / 180.0f)
#define R_MIN 2.5f           /* m, turn radius of the simulated agents */
#define STEP (0.02f * R_MIN) /* V dt, m */
#define POS_TOL (0.05f * R_MIN)
#define HEAD_TOL (3.0f * DEG)

/* Finite and of unit length (a NaN fails every comparison). */
static inline int finite_unit2(vec2 v) { return fabsf(vec2_length(v) - 1.0f) < 1e-5f; }

typedef enum integrator {
    TURN_THEN_MOVE, /* semi-implicit Euler, as src/modules/motion/integrate.c */
    MOVE_THEN_TURN, /* explicit Euler */
    EXACT_ARC,      /* the heading turns uniformly during the step */
} integrator_t;

typedef struct sim_out {
    int arrived;
    float miss;      /* closest approach on the arrival pass, m */
    float heading;   /* heading error there, rad */
    float travelled; /* m, until arrival */
    float planned;   /* path_length of the first call, m */
    int close_steps; /* calls that answered DSEEK_CLOSE */
    float turned;    /* rad: the heading changes summed in magnitude, until arrival */
    int reversals;   /* turns of at least max_turn / 4 the other way from the last such */
} sim_out_t;

static inline float seg_dist2(vec2 a, vec2 b, vec2 w)
{
    vec2 ab = vec2_sub(b, a);
    float l2 = vec2_length_sq(ab);
    float t = l2 > 0.0f ? vec2_dot(vec2_sub(w, a), ab) / l2 : 0.0f;
    t = fminf(fmaxf(t, 0.0f), 1.0f);
    return vec2_distance(vec2_add(a, vec2_scale(ab, t)), w);
}

/* Arrival: a local minimum of the distance to W (measured on the segments
 * travelled) within POS_TOL, with the heading within HEAD_TOL of d_W there.
 * Passes through W at a wrong heading are allowed (close starts may cross W
 * before they can turn); the budget is the start distance plus 60 r_min. */
typedef struct pass_watch {
    float prev, prev_heading; /* the last segment's distance and heading error */
    int falling;
} pass_watch_t;

static inline int arrival(pass_watch_t* w, float d, float herr, sim_out_t* o)
{
    if (d > w->prev && w->falling && w->prev <= POS_TOL && w->prev_heading <= HEAD_TOL) {
        o->arrived = 1;
        o->miss = w->prev;
        o->heading = w->prev_heading;
        return 1;
    }
    w->falling = d < w->prev ? 1 : (d > w->prev ? 0 : w->falling); /* equal: keep the trend */
    w->prev = d;
    w->prev_heading = herr;
    return 0;
}

static inline sim_out_t simulate2(vec2 A, vec2 h, vec2 W, vec2 dW, const dseek_params_t* p, float r_turn,
                                  integrator_t how)
{
    sim_out_t o;
    memset(&o, 0, sizeof o);
    const float max_turn = STEP / r_turn;
    const int steps = (int)((vec2_distance(A, W) + 60.0f * r_turn) / STEP);
    pass_watch_t pass = {INFINITY, 0.0f, 0};
    int last_side = 0;
    for (int i = 0; i < steps; ++i) {
        dseek_result2_t res;
        cr_assert_eq(dseek_steer_2d(A, h, W, dW, p, &res), DSEEK_OK, "%s", res.message);
        cr_assert(finite_unit2(res.steer) && vec2_dot(res.steer, h) >= -1e-6f);
        if (i == 0) o.planned = res.path_length;
        o.close_steps += res.stage == DSEEK_CLOSE;
        float want = atan2f(vec2_cross(h, res.steer), vec2_dot(h, res.steer));
        float turn = fminf(fmaxf(want, -max_turn), max_turn);
        vec2 h_new = vec2_normalize(vec2_rotate(h, turn));
        float chord = fabsf(turn) > 1e-6f ? STEP * sinf(0.5f * turn) / (0.5f * turn) : STEP;
        vec2 next = how == TURN_THEN_MOVE   ? vec2_add(A, vec2_scale(h_new, STEP))
                    : how == MOVE_THEN_TURN ? vec2_add(A, vec2_scale(h, STEP))
                                            : vec2_add(A, vec2_scale(vec2_rotate(h, 0.5f * turn), chord));
        /* The turn actually made, from the headings: the path's curvature
         * never exceeds 1 / r_turn. */
        float made = fabsf(atan2f(vec2_cross(h, h_new), vec2_dot(h, h_new)));
        cr_assert(made <= max_turn + 1e-5f, "turned %g rad in one step (limit %g)", made, max_turn);
        if (fabsf(turn) >= 0.25f * max_turn) {
            int side = turn > 0.0f ? 1 : -1;
            o.reversals += last_side != 0 && side != last_side;
            last_side = side;
        }
        vec2 seg_h = how == MOVE_THEN_TURN ? h : h_new;
        float d = seg_dist2(A, next, W);
        float herr = fabsf(atan2f(vec2_cross(seg_h, dW), vec2_dot(seg_h, dW)));
        if (arrival(&pass, d, herr, &o)) return o;
        A = next;
        h = h_new;
        o.travelled += STEP;
        o.turned += made;
    }
    return o;
}

#endif /* SHOAL_TEST_DSEEK_SIM_H */
