/* Directed seek geometry (Jakob, "Directional extensions of seek steering
 * behavior"): the steering direction that brings an agent with a
 * minimum turn radius to a waypoint W, arriving along the waypoint direction
 * d_W. Pure functions: no state between calls (the stage is found anew from
 * the pose every call, section 3.5), no allocation, no globals; safe to call
 * from any thread.
 *
 * Units: meters for positions and radii, radians for angles. 2D is the x-y
 * plane with angles counter-clockwise from +x (docs/design.md, "Units and frames"); 3D is right-handed.
 *
 * ## The 2D procedure (Figure 5, with the section 6 extensions)
 *
 * Orientations. A turn is an orientation o: +1 counter-clockwise (a left
 * turn), -1 clockwise (a right turn). The paper's "positive" orientation
 * (interior on the right) is our -1: its k_A^+ is our right-turn circle. The
 * agent's osculating circles k_A are centred at A + o r_agent perp(d_A)
 * (perp = +90 degrees). k_W is tangent to d_W at W on A's side of the line
 * w = {W + s d_W}: centre W + o_W r_waypoint perp(d_W), o_W = +1 when A is
 * left of w, and travelled along d_W at W it turns with orientation o_W. k'_W
 * is its mirror image across w.
 *
 * Candidates. Per waypoint circle, two 3-segment paths (arc on k_A, straight
 * tangent, arc on the waypoint circle): direct (the agent circle turning like
 * the waypoint circle) and cross (the other agent circle). The admissible
 * tangent of a pair is the one travelled in both circles' orientations from
 * k_A to k_W; with centre difference D = S_W - S_A and q = o_W r_W - o_A r_A
 * its direction and length are
 *   t = (L D - q perp(D)) / |D|^2,  L = sqrt(|D|^2 - q^2),
 * and it exists iff |D| >= |q|. With equal radii the direct tangent always
 * exists (t = D / |D|) and the cross one iff |D| >= 2r (Figure 5's
 * "||s_cross|| <= 2 r_min: only the direct path"); with different radii
 * either may be missing. Total angle, eq. (1):
 *   Phi = phi^{o_A}(d_A, t) + phi^{o_W}(t, d_W),
 * directed angles measured in each circle's orientation, taken in
 * [-wrap_tol, 2 pi - wrap_tol) rather than [0, 2 pi): an arc within wrap_tol
 * of a full turn is read as a slight overshoot to turn back from, not a
 * loop. Without this, two directions that agree to rounding (or to the
 * wobble of a discrete turn) flip an arc between 0 and 2 pi from one call to
 * the next. The candidate with the smallest Phi is followed (ties: direct
 * before cross, k_W before k'_W).
 *
 * Waypoint circles considered: k_W alone (Figure 5) when
 * consider_both_waypoint_circles is 0, both (section 6) when it is 1, the
 * default. The base case is discontinuous where the straight segment runs
 * along w: the arc on k_W jumps between about 0 and a full turn while the
 * same approach continues, on the other side, as a short arc on k'_W. With
 * a semi-implicit Euler integrator (turn, then move along the new heading,
 * as src/modules/motion/integrate.c does) some starts within 2 r_min lock onto that
 * jump and chatter between a left and a right turn indefinitely (128 of
 * 1,152 such starts in a kinematic sweep); with both circles none did. Both
 * circles are also considered, whatever the flag, when A is within zero_tol
 * of w, where "A's side" is rounding.
 *
 * Stages, eqs. (2)-(4), with s_III = S_W - (A + o_W r_waypoint perp(d_A)):
 * the vector from the centre the agent's own circle of k_W's radius and
 * orientation would have to k_W's centre; with equal radii it is the
 * paper's s_direct.
 *   III  eq. (4): |s_III| <= zero_tol, the agent is on k_W. If it is within
 *        reach of both circles (near W, heading about d_W, its two osculating
 *        circles are k_W and k'_W) the one turning the short way into d_W is
 *        taken. Steer: the turn along k_W, limited by d_W (Figure 5's
 *        min_{d_S}(s_A, d_W)): of the turn direction f and d_W, the one met
 *        first turning from d_A in o_W, or d_W when the agent has turned past
 *        it by at most wrap_tol. f is the side vector o_W perp(d_A), the
 *        tightest turn, when r_agent >= r_waypoint; when the agent could turn
 *        tighter than k_W it is k_W's tangent at the agent's projection onto
 *        k_W, tilted toward the circle by atan(radial error / r_waypoint), so
 *        the agent rides k_W instead of cutting inside it.
 *   II   eq. (3): going straight on reaches stage III. Either the direct
 *        tangent is within parallel_tol of d_A (with equal radii: s_direct
 *        parallel to d_A, read as "same direction": anti-parallel means k_W
 *        is behind), or the centre A + o_W r_waypoint perp(d_A), which moves
 *        along d_A while the agent goes straight, passes k_W's centre within
 *        0.25 zero_tol (a distance form of the same test, which keeps the
 *        last metres of an approach from being re-planned as a loop once the
 *        tangent is too short for an angle test); and s_III points ahead and
 *        is longer than 0.2 zero_tol. On the circle the agent rides, stage II
 *        is tested before stage III: an agent whose circle is still behind
 *        k_W's closes the gap straight, and the handover at 0.2 zero_tol
 *        leaves the window's width for the wobble below. k'_W's stage II
 *        counts only when its path is the best candidate (an agent following
 *        another plan may cross its tangent by chance); k_W's is Figure 5's.
 *        Steer: d_A.
 *   I    eq. (2), otherwise: the best candidate's tightest turn toward its
 *        tangent, limited to a right angle (Figure 5's min_{d_S}(s_A, t)):
 *        t itself when phi^{o_A}(d_A, t) <= pi/2, else the side vector
 *        o_A perp(d_A).
 *   CLOSE the close-range method, below.
 * Every steer is a unit vector within 90 degrees of d_A.
 *
 * ## Close range (the paper's open case, sections 3.2 and 6)
 *
 * Near the waypoint the 3-segment family can fail: with different radii
 * every admissible tangent may be missing (circles inside or overlapping one
 * another), and with any radii the best 3-segment path may wind around more
 * than once (the circles overlap, the cross path is gone, W lies inside the
 * agent's turning circle); and since Phi is not length, the candidate with
 * the lowest Phi can be much longer than need be, and which one it is can
 * flip from call to call while the agent turns. So in stage I (after the
 * stage II and III tests, which are unchanged) the agent follows the
 * shortest Dubins path (dseek_dubins.h: the six words CSC and CCC, radius
 * max(r_agent, r_waypoint)) instead of the best candidate, stage DSEEK_CLOSE,
 * when
 * - no candidate exists or the best Phi exceeds close_total_angle (default
 *   5 pi / 2), or
 * - the best candidate is longer than the Dubins path by more than 1e-3 r
 *   and the whole Dubins path lies within 4 r of W (dseek_dubins_reach).
 * The steer is the end of the Dubins path's first arc, limited to a right
 * angle, as in stage I. Why this is stable without state: the tail of a
 * shortest path is the shortest path from any of its points, so an agent
 * that follows it re-plans the same path; the path's reach only shrinks
 * along it, so an agent that started within 2 r (reach under 4 r) keeps the
 * Dubins method until stage II or III takes over or the best candidate is
 * the Dubins path itself (then both steer alike), and never hands back to
 * a 3-segment candidate that loops. Where two words tie, moving along one
 * makes it strictly shorter than the other. Ties in length go to the first
 * word in the order LSL, RSR, LSR, RSL, RLR, LRL.
 *
 * Planning point. A discrete turn lags: an agent that turns, then moves
 * (semi-implicit Euler, src/modules/motion/integrate.c) turns on a circle half a
 * step behind its osculating circle. Near a word's existence boundary (an
 * RSL whose straight segment is nearly gone, a CCC whose circles are nearly
 * 4 r apart) that half step makes the shortest path vanish and the re-plan
 * jump to a path a loop longer; planned from A itself, close starts with
 * that integrator averaged 2.1 times the optimal length. So the path is
 * planned from A - (zero_tol / 4) d_A, a quarter of the stage III window
 * behind (zero_tol >= 2 V dt puts that at least half a step back): the plan
 * is then never behind the agent, and an agent ahead of its plan reaches
 * the end of a path that still exists. path_length in CLOSE is that plan's.
 *
 * Measured (tests/test_dseek_dubins.c; the 512 starts inside 2 r_min of
 * tests/test_dseek_geom.c, V dt = 0.02 r_min; travelled length over the
 * Dubins optimum from the start): turn-then-move mean 1.009, worst 1.95,
 * 5 runs over 1.10; move-then-turn 1.005, worst 1.02; exact arcs 1.001,
 * worst 1.02; every run arrives within 0.05 r_min and 3 degrees, none turns
 * 2 pi beyond the optimal path's turn, and no run reverses its turn more
 * than 4 times. The earlier method (steer away from W until a candidate
 * with Phi <= close_total_angle exists; close_method
 * DSEEK_CLOSE_STEER_AWAY) measured 1.221 (worst 3.09, 141 runs over 1.10,
 * up to 81 turn reversals), 1.019 and 1.015. Far starts (4 to 40 r_min)
 * enter the Dubins method only within 4 r of W in stage I: in the tests'
 * 1,440-start grid about 80 runs (nearly all from 4 r_min) take at least
 * one such step; the worst figures moved by at most 0.0004 r_min in miss,
 * 0.003 degrees in heading and 0.002 r_min in detour (exact arcs: not at
 * all).
 *
 * The Dubins path is computed (six words) only within 4 r of W or when no
 * candidate will do, so far from W a call costs what it did.
 *
 * ## Tolerances and time steps
 *
 * zero_tol is the width of the stage III window and bounds the arrival
 * error. The osculating centre computed from a discrete heading (the heading
 * of the last step, not the true tangent) circles the true centre at a
 * radius of half a step while the agent turns, so an agent entering the
 * window at 0.2 zero_tol must stay inside it for a whole turn with up to one
 * step (V dt) of wobble: zero_tol >= 2 V dt, or the agent may drop out of
 * stage III and loop back. Default 0.05 r_min. With V dt = 0.02 r_min the
 * tests measured arrival errors of at most 0.016 r_min and 1.4 degrees when
 * the agent turns, then moves (semi-implicit Euler), and 0.048 r_min and
 * 2.2 degrees when it moves, then turns, or follows exact arcs; the window
 * bounds the miss of an agent that drops into it sideways from a close
 * start.
 *
 * ## Limits
 *
 * - r_waypoint < r_agent asks for a final arc tighter than the agent can
 *   turn at its current speed; it works only if the caller slows the agent
 *   so that r_min(v) has come down to r_waypoint by the final arc (section
 *   6's speed-dependent radius). With a constant turn radius pass
 *   max(r_agent, r_waypoint) for both.
 * - Backward motion (section 6) is not supported.
 */
#ifndef SHOAL_DSEEK_GEOM_H
#define SHOAL_DSEEK_GEOM_H

#include "simd/vec.h"

typedef enum dseek_status {
    DSEEK_OK = 0,
    DSEEK_ERR_INPUT = 1, /* bad input: the message says what; steer is still a finite unit vector */
} dseek_status_t;

typedef enum dseek_stage {
    DSEEK_STAGE_I = 1,   /* turning toward the tangent (segment I) */
    DSEEK_STAGE_II = 2,  /* on the tangent: no steering (segment II) */
    DSEEK_STAGE_III = 3, /* on the waypoint circle, turning into d_W (segment III) */
    DSEEK_CLOSE = 4,     /* close-range method: following the shortest Dubins path (2D;
                            steering away from W with DSEEK_CLOSE_STEER_AWAY), or turning
                            into the steering plane first (3D guard) */
} dseek_stage_t;

/* The close-range method (header, "Close range"). */
typedef enum dseek_close_method {
    DSEEK_CLOSE_DUBINS = 0,     /* follow the shortest Dubins path (default) */
    DSEEK_CLOSE_STEER_AWAY = 1, /* the earlier method: steer away from W until a 3-segment
                                   path with Phi <= close_total_angle exists */
} dseek_close_method_t;

typedef struct dseek_params {
    float r_agent;                      /* m, > 0: radius of the agent circles k_A; pass r_min(v_A) for a
                         speed-dependent radius (section 6) */
    float r_waypoint;                   /* m, > 0: radius of k_W, r_min(v_W); equal to r_agent in the base
                         case. Passing max(r_min(v_A), r_min(v_W)) for both is the
                         paper's simplest speed-dependent variant; below r_agent see
                         "Limits". */
    int consider_both_waypoint_circles; /* 1 (default): k_W and k'_W, the lowest Phi of
                                           all four candidates wins (section 6); 0: k_W
                                           on A's side only (Figure 5), see above */
    float parallel_tol;                 /* rad, in [0, pi/4): tolerance of eq. (3); default 1e-3 */
    float wrap_tol;                     /* rad, in [0, pi/4): directed angles of eq. (1) are taken in
                                [-wrap_tol, 2 pi - wrap_tol); default 1 degree (header) */
    float zero_tol;                     /* m, >= 0: tolerance of eq. (4) (stage III window); default
                                0.05 r_min; keep it >= 2 V dt ("Tolerances") */
    float close_total_angle;            /* rad, > 2 pi (may be +inf to disable): in stage I, a best
                                Phi above this starts the close-range method;
                                default 5 pi / 2 */
    dseek_close_method_t close_method;  /* default DSEEK_CLOSE_DUBINS */
} dseek_params_t;

/* Defaults for a turn radius r_min (m) used for both circles: both waypoint
 * circles, parallel_tol 1e-3 rad, wrap_tol 1 degree, zero_tol 0.05 r_min,
 * close_total_angle 5 pi / 2, close_method DSEEK_CLOSE_DUBINS. */
dseek_params_t dseek_default_params(float r_min);

/* What one 2D call decided. Every float is finite unless said otherwise.
 * The path fields describe the path followed from the current pose (in
 * CLOSE the Dubins path: agent_turn and phi_agent its first arc,
 * waypoint_turn and phi_waypoint its last, phi_middle the middle arc of a
 * CCC word, tangent_length the straight of a CSC word), for plots, tests
 * and a turn-rate feed-forward; steering needs only steer and stage. */
typedef struct dseek_result2 {
    vec2 steer; /* unit steering direction d_s, never NaN, at most 90 degrees
                                from d_A */
    dseek_stage_t stage;
    int path_is_cross;       /* chosen path: 0 direct, 1 cross */
    int agent_turn;          /* orientation of the chosen agent circle: +1 left
                                (counter-clockwise), -1 right (clockwise) */
    int waypoint_turn;       /* orientation of the chosen waypoint circle, same sign rule */
    int waypoint_opposite;   /* 1 when the chosen waypoint circle is k'_W (not on A's side) */
    float total_angle;       /* rad, in [-2 wrap_tol, 6 pi): Phi of eq. (1) of the chosen
                                path (stage II: the arc left on k_W; stage III: the turn
                                left to d_W). In CLOSE the Dubins path's three arcs
                                (DSEEK_CLOSE_STEER_AWAY: the best candidate's, or +inf
                                when no 3-segment path exists). */
    float other_total_angle; /* rad: lowest Phi among the candidates not chosen, +inf when
                                there is none */
    float phi_agent;         /* rad, [-wrap_tol, 2 pi - wrap_tol): the arc on k_A of the
                                chosen path (0 in stages II, III; CLOSE: [0, 2 pi)) */
    float phi_waypoint;      /* rad, same range: the arc on the waypoint circle */
    float tangent_length;    /* m: the straight segment of the chosen path (0 for CCC) */
    float phi_middle;        /* rad: the middle arc of a CCC Dubins path in CLOSE, else 0 */
    int dubins_word;         /* in CLOSE with DSEEK_CLOSE_DUBINS: the dseek_word followed
                                (dseek_dubins.h); -1 otherwise */
    float path_length;       /* m: r_agent phi_agent + tangent_length + r_waypoint
                                phi_waypoint; +inf with total_angle */
    vec2 center_agent;       /* chosen agent circle's centre (m) */
    vec2 center_waypoint;    /* chosen waypoint circle's centre (m) */
    vec2 tangent_from;       /* where the straight segment leaves k_A (m; A in stages II,
                                III and in CLOSE without a path) */
    vec2 tangent_to;         /* where it meets the waypoint circle (m) */
    char message[128];       /* on DSEEK_ERR_INPUT: what was wrong; else empty */
} dseek_result2_t;

/* The 2D procedure above. A, W in m; dA, dW headings whose length is within
 * 1e-3 of 1 (they are normalized here). p: see dseek_params (NULL is an
 * error; read only). out: written in full, owned by the caller; when it is
 * NULL, DSEEK_ERR_INPUT is returned and nothing is written.
 * Errors (DSEEK_ERR_INPUT, message set, steer = d_A when d_A is usable, else
 * d_W, else +x; stage II, other numbers zero): any NaN or infinity, a
 * direction of length 0 or off unit length by more than 1e-3, a radius <= 0,
 * a tolerance out of range, and A == W (within 1e-6 r_agent) with d_A != d_W
 * (beyond parallel_tol). A == W with d_A == d_W is arrival: stage III,
 * steer d_W. */
dseek_status_t dseek_steer_2d(vec2 A, vec2 dA, vec2 W, vec2 dW, const dseek_params_t* p,
                              dseek_result2_t* out);

/* Pseudo-3D (section 4). The steering plane Omega contains A, W and d_W;
 * its frame F has origin W, f_x = d_W (eq. (5)) and f_y the unit part of
 * d_WA = (A - W)/|A - W| (eq. (7)) orthogonal to f_x (eq. (6), normalized:
 * the printed formula is unit only when A - W is perpendicular to d_W). A,
 * d_A, W, d_W are expressed in F (d_A by its in-plane part, normalized), the
 * 2D procedure runs there, and its steer comes back as
 * d_S = d_Sx f_x + d_Sy f_y (eq. (8)).
 *
 * Plane guard: within h_guard = max(zero_tol, 1e-3 r_agent) of the line w the
 * plane through A is ill-defined (it spins with millimetres of A), so f_y is
 * blended toward the plane that contains d_A and d_W: at distance h from
 * the line, f_y = unit(h_vec + (1 - h / h_guard) h_guard g), g the unit part of
 * d_A orthogonal to d_W (signed toward h_vec). The blend is continuous, and
 * on the line the agent keeps steering in the plane of its own heading. When
 * d_A is parallel to d_W as well, any plane through w will do: f_y is the
 * coordinate axis least aligned with d_W, orthogonalized. When d_A is
 * perpendicular to the plane (no in-plane part), the 2D heading is taken
 * toward W in the plane.
 *
 * Out-of-plane heading (the paper's minimum-distance remark): the steer is
 * in Omega, so the agent's heading rotates into the plane as it turns, and
 * the plane turns with A, which is what lets headings start out of it. But
 * the plane swings about w at V sin(beta) / h as the agent leaves it (beta
 * the heading's angle out of Omega, h the distance of A from w), and a turn
 * toward the in-plane side vector does nothing to beta; close to W the
 * plane can keep pace with the heading and the agent never settles into it.
 * Guard: within 2 (r_agent + r_waypoint) of W, in stage I or CLOSE, when
 * r_agent sin(beta) > h / 2 (the swing would exceed half the turn rate), the
 * steer is d_A's in-plane part instead: the agent turns into the plane
 * first (stage DSEEK_CLOSE) and plans once there. Tested: starts at >= 6
 * r_min with headings up to 60 degrees out of the plane, and at 0.5 to 5
 * r_min with the same headings, arrive within 0.05 r_min and 3 degrees;
 * without the guard one close start in 2,400 circled forever.
 *
 * Results as in 2D; errors as in 2D (A == W with d_A != d_W included). */
typedef struct dseek_result3 {
    vec3 steer; /* unit, never NaN, at most 90 degrees from d_A */
    dseek_stage_t stage;
    int path_is_cross;
    float total_angle; /* rad, as in 2D */
    float path_length; /* m, as in 2D (in the plane) */
    vec3 plane_x;      /* f_x = d_W */
    vec3 plane_y;      /* f_y as used (after the guard) */
    /* The segment being flown, for a caller that feeds the turn rate
     * forward: turn is +1 for a counter-clockwise turn in the (plane_x,
     * plane_y) frame, -1 clockwise, 0 for none (stage II, CLOSE); in stage
     * II the coming arc's orientation is in next_turn and the straight
     * left in straight_left. turn_left is the arc left on the current
     * circle (rad, stages I and III), turn_axis the world axis of a turn
     * with orientation +1 (plane_x x plane_y). */
    int turn, next_turn;
    float turn_left;     /* rad */
    float straight_left; /* m */
    vec3 turn_axis;
    char message[128];
} dseek_result3_t;

dseek_status_t dseek_steer_3d(vec3 A, vec3 dA, vec3 W, vec3 dW, const dseek_params_t* p,
                              dseek_result3_t* out);

/* Flying the final arc once it has begun (for a caller that keeps which
 * waypoint circle it is on): the waypoint circle of orientation o (+1: the
 * circle turning counter-clockwise into d_W, centre W + r_waypoint
 * perp(d_W); -1 the other), followed as stage III follows it (k_W's tangent
 * at the agent's projection tilted toward the circle by the radial error,
 * limited by d_W), whatever r_agent is. Inputs as dseek_steer_2d's, not
 * checked (the caller has passed them to it). */
typedef struct dseek_arc2 {
    vec2 steer;          /* unit, within 90 degrees of d_A */
    float arc_left;      /* rad: the turn from d_A to d_W in orientation o, in
                            [-wrap_tol, 2 pi - wrap_tol) */
    float radial_error;  /* m: distance from the circle, + outside */
    float heading_error; /* rad: |angle| between d_A and the circle's tangent there */
    int past;            /* 1 once A is beyond W along d_W (the arc is over) */
} dseek_arc2_t;

void dseek_follow_circle_2d(vec2 A, vec2 dA, vec2 W, vec2 dW, float o, const dseek_params_t* p,
                            dseek_arc2_t* out);

/* The same in 3D, in the steering plane dseek_steer_3d builds from A; o as
 * in the plane's frame (+1: the circle on A's side, k_W). steer is in 3D;
 * turn_axis the world axis of the circle's turn (o (plane_x x plane_y)). */
typedef struct dseek_arc3 {
    vec3 steer;
    vec3 turn_axis;
    float arc_left, radial_error, heading_error;
    int past;
} dseek_arc3_t;

void dseek_follow_circle_3d(vec3 A, vec3 dA, vec3 W, vec3 dW, float o, const dseek_params_t* p,
                            dseek_arc3_t* out);

/* In DSEEK_CLOSE on a Dubins path (dubins_word >= 0): the orientation of
 * the arc being flown (+1, -1, or 0 on the straight) and the angle left on
 * it (rad), for a turn-rate feed-forward; its radius is max(r_agent,
 * r_waypoint). */
void dseek_close_turn(const dseek_result2_t* r, int* turn, float* arc_left);

/* Shared by the 2D and 3D entry points: NULL when p is usable, else a
 * static message saying why not. */
const char* dseek_check_params(const dseek_params_t* p);

#endif /* SHOAL_DSEEK_GEOM_H */
