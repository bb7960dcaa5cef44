/* Path following for ground vehicles (de Schaetzen and Sestini, "Efficient
 * ground vehicle path following in game AI").
 *
 * The follower's five modules (the paper's Figure 2):
 *   1. target speed: Algorithm 1, the largest curvature of the quadratic
 *      Bezier curves through points resampled dh apart ahead of the vehicle
 *      (eqs. (3)/(4)), turned into a speed by eq. (1) and clamped;
 *   2. target point: the point on the path a lookahead distance ahead;
 *   3. speed control: PI on the speed error with anti-windup;
 *   4. steering: pure pursuit toward the target point;
 *   5. stuck manager: no progress along the path within a time window
 *      triggers a recovery (reverse with counter-steer, then retry) and, after
 *      repeated failures, a teleport back onto the path (counted apart).
 * The baseline follower (the paper's comparison) differs only in modules 1
 * and 3: a target speed inversely proportional to the largest angle between
 * the forward vector and the path segments within the lookahead, and a
 * P-only speed controller.
 *
 * Pure functions: no world, no allocation, no printing.
 */
#ifndef SHOAL_PATH_FOLLOW_H
#define SHOAL_PATH_FOLLOW_H

#include <stdint.h>

#include "simd/vec.h"

/* A path: waypoints in 3D, the cumulative arc length at each, and the
 * corridor half-width. The path does not own its arrays (the caller or the
 * world does). */
typedef struct pf_path {
    const vec3* points;
    const float* s; /* s[0] = 0, s[i] = arc length at points[i] */
    int32_t count;  /* >= 2 */
    float length;   /* s[count - 1] */
    float half_width;
} pf_path_t;

/* Checks waypoints (xyz triples) and writes the arc lengths: count >= 2,
 * all finite, consecutive points at least PF_MIN_SEGMENT apart, half_width
 * finite and > 0. On failure returns 0 and writes a message naming the
 * waypoint index and what was expected; `out` is then untouched. points_out
 * and s_out have room for count entries; the path refers to them. */
#define PF_MIN_SEGMENT 1e-3f
int pf_path_build(pf_path_t* out, vec3* points_out, float* s_out, const float* xyz, int32_t count,
                  float half_width, char* msg, int msg_size);

/* The point at arc length s (clamped to [0, length]), and the unit tangent
 * there when tangent is not NULL. */
vec3 pf_path_point_at(const pf_path_t* path, float s, vec3* tangent);

/* Projection of pos onto the path, searched within arc lengths
 * [s_from, s_to] (so that a path that doubles back on itself does not make
 * progress jump). Returns the arc length of the nearest point; writes the
 * distance (the cross-track error, in 3D) when cte is not NULL. */
float pf_path_project(const pf_path_t* path, vec3 pos, float s_from, float s_to, float* cte);

/* Eqs. (3) and (4): the largest curvature of the quadratic Bezier curve with
 * control points p1, p2, p3. Case (3) when p2 lies outside both spheres of
 * radius |p1 - m| / 2 around (p1 + m) / 2 and (p3 + m) / 2, m the midpoint of
 * p1 p3; case (4) otherwise. Degenerate triangles: 0 when p2 lies on the
 * segment p1 p3 (straight), INFINITY when the curve folds back (cusp). */
float pf_bezier_max_curvature(vec3 p1, vec3 p2, vec3 p3);

/* Curvature of the same curve at parameter t in [0, 1] (for tests). */
float pf_bezier_curvature_at(vec3 p1, vec3 p2, vec3 p3, float t);

/* Which follower. */
typedef enum pf_kind { PF_PROPOSED = 0, PF_BASELINE = 1 } pf_kind_t;

/* Every parameter of the follower. pf_params_default gives the paper's
 * section III values (a_lat 0.4, dh 6 m, N 5, v_min 1, v_max 10) and the
 * documented defaults of the rest. */
typedef struct pf_params {
    pf_kind_t kind;
    /* target speed (Algorithm 1) */
    float a_lat;        /* in g */
    float dh;           /* m, resampling distance */
    int32_t n;          /* points of the resampled path, vehicle included (>= 3) */
    float v_min, v_max; /* m/s */
    /* baseline target speed: v_max / (1 + baseline_gain * largest angle) */
    float baseline_gain; /* 1/rad */
    /* target point: lookahead = clamp(lookahead_min + lookahead_time * |v|,
     * lookahead_min, lookahead_max) */
    float lookahead_min, lookahead_time, lookahead_max;
    /* speed control: throttle = kp e + ki integral(e) (ki unused by baseline) */
    float kp, ki;
    /* completion: within this distance of the last waypoint while the
     * progress is within lookahead_max + arrive_radius of the path's end (a
     * loop passes its end point at its start), or progress within half of
     * it of the end */
    float arrive_radius;
    /* stuck manager */
    float stuck_window;     /* s: progress must exceed stuck_progress within it */
    float stuck_progress;   /* m of arc length */
    float reverse_time;     /* s of reverse with counter-steer per recovery */
    int32_t max_recoveries; /* recoveries without progress before a teleport */
    /* proposed only: 1 = the target speed also respects the vehicle itself
     * (pf_vehicle_t): a_lat no higher than its grip, v no higher than
     * max_yaw_rate / kappa, and one more curve, the Bezier (pos - dh
     * forward, pos, P~[2]), so that a vehicle not yet facing along the path
     * (mid-corner, off the path) is slowed until it is, its curvature
     * counted no higher than the vehicle's tightest turn
     * (pf_vehicle_max_curvature); 0 = Algorithm 1 as
     * the paper gives it (which sees only the vehicle's position) */
    int32_t vehicle_limits;
} pf_params_t;

pf_params_t pf_params_default(pf_kind_t kind);
int pf_params_valid(const pf_params_t* p, char* msg, int msg_size);

/* Algorithm 1: target speed for a vehicle at pos whose projection on the path
 * is at arc length s_vehicle. */
float pf_target_speed(const pf_params_t* p, const pf_path_t* path, vec3 pos, float s_vehicle);
/* Lines 1-9 of Algorithm 1 alone: the largest curvature of the Bezier curves
 * through the resampled points (0 straight, INFINITY at a cusp). When
 * first is not NULL it receives P~[2], the first resampled point after the
 * vehicle (pos itself when there is none). */
float pf_max_curvature(const pf_params_t* p, const pf_path_t* path, vec3 pos, float s_vehicle, vec3* first);

/* Baseline target speed: from the largest angle between `forward` and the
 * path segments between s_vehicle and s_vehicle + lookahead. */
float pf_baseline_target_speed(const pf_params_t* p, const pf_path_t* path, vec3 forward, float s_vehicle,
                               float lookahead);

/* PI speed controller with anti-windup: the integral stops growing while the
 * output saturates in the direction of the error, and stays within
 * [-1/ki, 1/ki]. Returns the throttle in [-1, 1]. */
typedef struct pf_pi {
    float integral;
} pf_pi_t;
float pf_pi_update(pf_pi_t* pi, float kp, float ki, float error, float dt);

/* Pure pursuit: road-wheel angle (rad, + left) that steers a bicycle of the
 * given wheelbase at pos/yaw onto the circle through target_point; in
 * reverse (reverse != 0) the geometry uses the rear direction. A target
 * more than 90 degrees off the axis gets the 90-degree turn toward its side
 * (left when straight behind), so the vehicle comes round instead of
 * driving away. */
float pf_pure_pursuit(vec3 pos, float yaw, float wheelbase, vec3 target_point, int reverse);

/* Per-vehicle follower state. Zero-initialize, or pf_state_init. */
typedef struct pf_state {
    float s; /* progress: arc length of the projection */
    pf_pi_t pi;
    float window_time;         /* time since the window started */
    float window_s;            /* progress at the window's start */
    float recover_time;        /* > 0 while a recovery manoeuvre runs */
    float recover_steer;       /* counter-steer of the running recovery */
    int32_t failed_recoveries; /* recoveries in a row without progress */
    int32_t stuck_events;
    int32_t teleports;
    int32_t completed;
} pf_state_t;
void pf_state_init(pf_state_t* st);

/* What the vehicle reports to the follower each frame. */
typedef struct pf_vehicle {
    vec3 pos;
    float yaw;
    float v; /* signed forward speed */
    float wheelbase;
    float max_steer;
    float max_yaw_rate; /* rad/s, 0 = none (used with vehicle_limits) */
    float traction;     /* g, lateral grip, 0 = unknown (used with vehicle_limits) */
} pf_vehicle_t;

/* The vehicle's tightest turn, 1/m: tan(max_steer) / wheelbase (0 when
 * either is not positive). */
float pf_vehicle_max_curvature(const pf_vehicle_t* veh);

/* What the follower returns each frame. */
typedef struct pf_command {
    float throttle, steering; /* in [-1, 1] */
    float target_speed;
    vec3 target_point;
    float cte; /* cross-track error, m */
    int32_t inside_corridor;
    int32_t stuck;           /* a recovery manoeuvre is running */
    int32_t new_stuck_event; /* a stuck event started this frame */
    int32_t teleport;        /* the caller must put the vehicle at teleport_pos/yaw */
    vec3 teleport_pos;
    float teleport_yaw;
} pf_command_t;

/* A vehicle with no path to follow, or at its path's end, held: brake to
 * a stop, then release, wheels straight, target speed 0 (the other
 * outputs 0). Below PF_STOP_SPEED (m/s) it stops braking: the vehicle
 * model reverses under negative throttle near standstill
 * (ground_vehicle.h, GV_REVERSE_SPEED_GATE), and braking past zero would
 * back it away; rolling backward it brakes with a positive throttle. */
#define PF_STOP_SPEED 0.5f
void pf_hold(float v, pf_command_t* out);

/* One frame of the follower. */
void pf_follow(const pf_params_t* p, const pf_path_t* path, pf_state_t* st, const pf_vehicle_t* veh, float dt,
               pf_command_t* out);

#endif
