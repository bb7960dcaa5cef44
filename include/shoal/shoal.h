/* shoal: a data-oriented, multithreaded crowd and fleet simulator.
 *
 * This is the whole public API. Conventions used throughout:
 *
 * - Units are SI: meters, seconds, radians, kilograms, newtons. Right-handed
 *   frame, z up. A 2D world lives in the x-y plane; heading is measured
 *   counter-clockwise from +x. A 3D world orients agents with unit quaternions
 *   stored (w, x, y, z); the body's forward axis is +x, left is +y, up is +z.
 * - Every function that can fail returns a shoal_status_t. On failure nothing
 *   has changed, and shoal_world_last_error() explains what, where and what was
 *   expected. Functions without a world take an optional shoal_error_t*.
 * - Agents are named by shoal_agent_t handles, passed by value. A handle of a
 *   removed agent is detected as stale (SHOAL_ERR_STALE_HANDLE), never followed.
 *   The all-zero handle is the null handle.
 * - The library keeps no global state: worlds are independent. It never prints,
 *   never aborts on user input, and starts no thread unless the world's thread
 *   count is above one.
 * - A world is not safe to call from two threads at once; calls from inside a
 *   step (a user system) are allowed where documented.
 */
#ifndef SHOAL_SHOAL_H
#define SHOAL_SHOAL_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHOAL_VERSION_MAJOR 0
#define SHOAL_VERSION_MINOR 1
#define SHOAL_VERSION_PATCH 0

/* Version of the library actually linked, as "major.minor.patch". */
SHOAL_API const char* shoal_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                   */
/* ------------------------------------------------------------------------ */

typedef enum shoal_status_t {
    SHOAL_OK = 0,
    SHOAL_ERR_INVALID_ARGUMENT = 1, /* NULL, NaN, out of range, bad def */
    SHOAL_ERR_STALE_HANDLE = 2,     /* removed agent, null or foreign handle */
    SHOAL_ERR_OUT_OF_MEMORY = 3,    /* an allocation failed; nothing changed */
    SHOAL_ERR_PARSE = 4,            /* malformed or invalid file contents */
    SHOAL_ERR_IO = 5,               /* a file could not be opened, read or written */
    SHOAL_ERR_CAPACITY = 6,         /* a documented size limit was reached */
    SHOAL_ERR_BUSY = 7,             /* not allowed while the world is stepping */
    SHOAL_ERR_NOT_FOUND = 8         /* a named thing (system, key) does not exist */
} shoal_status_t;

/* A short constant name for a status ("invalid argument"). Never NULL. */
SHOAL_API const char* shoal_status_string(shoal_status_t status);

/* Error details for calls that have no world to keep them in. */
typedef struct shoal_error_t {
    shoal_status_t status;
    char message[512];
} shoal_error_t;

/* ------------------------------------------------------------------------ */
/* Handles                                                                   */
/* ------------------------------------------------------------------------ */

/* An agent handle. index1 is the slot index plus one (0 means null); world0 is
 * a tag of the world that made it, so that a handle from another world is
 * detected; generation changes each time the slot is reused. */
typedef struct shoal_agent_t {
    uint32_t index1;
    uint16_t world0;
    uint16_t generation;
} shoal_agent_t;

static inline int shoal_agent_is_null(shoal_agent_t id) { return id.index1 == 0; }
static inline int shoal_agent_equal(shoal_agent_t a, shoal_agent_t b)
{
    return a.index1 == b.index1 && a.world0 == b.world0 && a.generation == b.generation;
}

typedef struct shoal_world_t shoal_world_t;

/* ------------------------------------------------------------------------ */
/* Threads and memory                                                        */
/* ------------------------------------------------------------------------ */

/* Work callback handed to a host task system: process items [start, end) as
 * worker `worker` (0 <= worker < thread_count). */
typedef void shoal_task_fn(int32_t start, int32_t end, uint32_t worker, void* task_ctx);

/* Host task system hooks (like an engine's job system). enqueue_task must
 * eventually call fn over [0, item_count) in ranges of at least min_range
 * items, possibly on other threads, passing a worker index unique among the
 * calls running at the same time and below the world's thread_count. It may
 * run everything inline and return NULL. finish_task waits for a task that
 * enqueue_task returned (it is not called for NULL). The calling thread always
 * takes part in the work, so progress never depends on host threads. */
typedef void* shoal_enqueue_task_fn(shoal_task_fn* fn, int32_t item_count, int32_t min_range,
                                    void* task_ctx, void* user_ctx);
typedef void shoal_finish_task_fn(void* task, void* user_ctx);

/* Allocation hooks. alloc returns memory aligned to `align` (a power of two,
 * at most 64) or NULL on failure; free receives the size given to alloc. */
typedef void* shoal_alloc_fn(size_t size, size_t align, void* user_ctx);
typedef void shoal_free_fn(void* ptr, size_t size, void* user_ctx);

typedef enum shoal_backend_t {
    SHOAL_BACKEND_AUTO = 0,   /* host tasks if given, else OpenMP if threads > 1, else serial */
    SHOAL_BACKEND_SERIAL = 1, /* everything on the calling thread */
    SHOAL_BACKEND_OPENMP = 2, /* OpenMP threads (the calling thread is worker 0) */
    SHOAL_BACKEND_HOST = 3    /* enqueue_task / finish_task */
} shoal_backend_t;

/* "auto", "serial", "openmp" or "host"; "unknown" otherwise. Never NULL. */
SHOAL_API const char* shoal_backend_name(shoal_backend_t backend);

/* ------------------------------------------------------------------------ */
/* World                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct shoal_world_def_t {
    int32_t dimensions;        /* 2 or 3. Default 2. */
    uint64_t seed;             /* seeds every random draw in the world. Default 1. */
    int32_t thread_count;      /* 0: $SHOAL_THREADS, else physical cores (hwloc). Default 0. */
    shoal_backend_t backend;   /* Default AUTO. */
    int32_t bind_threads;      /* nonzero: pin OpenMP workers to cores (hwloc). Default 0. */
    int32_t initial_capacity;  /* agents to reserve room for. Default 1024. */
    /* Space. With wrap, the box [bounds_min, bounds_max) is a torus: agents
     * leaving one side enter the other and neighbors see across the edges.
     * Without it space is unbounded (bounds unused). */
    int32_t wrap;              /* Default 0 */
    float bounds_min[3];       /* m. Default 0 */
    float bounds_max[3];       /* m, > bounds_min on used axes when wrap. Default 0 */
    /* Spatial hash cell edge, m; 0 = the largest neighbor radius. Default 0. */
    float cell_size;
    /* Reorder agent storage by cell every this many steps (0 = never), so
     * neighbors are adjacent in memory. Default 32. */
    int32_t reorder_interval;
    shoal_enqueue_task_fn* enqueue_task; /* host task system, optional */
    shoal_finish_task_fn* finish_task;
    void* task_user_ctx;
    shoal_alloc_fn* alloc;     /* optional; both or neither */
    shoal_free_fn* free;
    void* alloc_user_ctx;
    int32_t internal_value;    /* set by shoal_world_default_def(); leave it alone */
} shoal_world_def_t;

/* A definition with every field at its default. Always start from this. */
SHOAL_API shoal_world_def_t shoal_world_default_def(void);

/* Create a world. On failure *out_world is NULL and err (optional) says why. */
SHOAL_API shoal_status_t shoal_world_create(const shoal_world_def_t* def, shoal_world_t** out_world,
                                            shoal_error_t* err);

/* Destroy a world and everything in it. NULL is ignored; so is a call from
 * inside the world's own step (a user system), which records an error. */
SHOAL_API void shoal_world_destroy(shoal_world_t* world);

/* Advance by dt seconds (finite, > 0): one pass through every stage. */
SHOAL_API shoal_status_t shoal_world_step(shoal_world_t* world, float dt);

/* The message of the last failed call on this world ("" if none). Valid until
 * the next call on the world. */
SHOAL_API const char* shoal_world_last_error(const shoal_world_t* world);

SHOAL_API int32_t shoal_world_dimensions(const shoal_world_t* world);
SHOAL_API int32_t shoal_world_agent_count(const shoal_world_t* world);
SHOAL_API int32_t shoal_world_thread_count(const shoal_world_t* world);
SHOAL_API shoal_backend_t shoal_world_backend(const shoal_world_t* world);
SHOAL_API uint64_t shoal_world_step_count(const shoal_world_t* world);
SHOAL_API double shoal_world_time(const shoal_world_t* world); /* simulated seconds */

/* A 64-bit digest of all simulation state (every live agent's handle, state,
 * parameters and behaviors, in handle order, ground vehicles' and planner
 * agents' state included (not their search timings); obstacles with their
 * velocities, routes, paths, terrain and the trim table's spec (not its
 * entries); plus the step count). Equal inputs give equal hashes for any
 * thread count and backend. */
SHOAL_API uint64_t shoal_world_state_hash(const shoal_world_t* world);

/* ------------------------------------------------------------------------ */
/* Agents                                                                    */
/* ------------------------------------------------------------------------ */

/* Physical limits and inertia of an agent's vehicle (seed "Basic vehicle
 * dynamics"): m dV/dt = F, I d2(theta)/dt2 = tau, |F| <= max_force,
 * |tau| <= max_torque, |V| <= max_speed, |omega| <= max_turn_rate. */
typedef struct shoal_vehicle_t {
    float mass;          /* kg, > 0. Default 1 */
    float inertia;       /* kg m^2, > 0. Default 1 */
    float max_force;     /* N, >= 0. Default 20 */
    float max_torque;    /* N m, >= 0. Default 20 */
    float max_speed;     /* m/s, >= 0. Default 5 */
    float max_turn_rate; /* rad/s, >= 0. Default 3 */
    float radius;        /* m, >= 0: bounding sphere. Default 0.5 */
} shoal_vehicle_t;

/* Gains of the controller that turns (V_d, theta_d) into F and tau. */
typedef struct shoal_control_t {
    float speed_gain;    /* 1/s: force = m * speed_gain * velocity error. Default 4 */
    float heading_gain;  /* 1/s^2: torque = I * (heading_gain * angle error ... */
    float turn_damping;  /* 1/s:            ... - turn_damping * omega). Default 6 */
} shoal_control_t;

/* Steering behaviors. Each produces a desired velocity; an agent's behaviors
 * combine as the weighted sum of those velocities (seed 003). The weight of
 * separation, alignment and cohesion is the seed's c_separate, c_alignment,
 * c_cohesion; their sum is V_flock. */
typedef enum shoal_behavior_t {
    SHOAL_BEHAVIOR_SEEK = 0,      /* toward the target at max speed */
    SHOAL_BEHAVIOR_FLEE = 1,      /* away from the threat at max speed */
    SHOAL_BEHAVIOR_ARRIVE = 2,    /* V = K_arrive e: slows to a stop at the target */
    SHOAL_BEHAVIOR_DEPART = 3,    /* V = K_depart (-e)/|e|^2 from the threat */
    SHOAL_BEHAVIOR_SEPARATE = 4,  /* V = K_sep sum d_i/|d_i|^2 over neighbors (see shoal_neighbors_t) */
    SHOAL_BEHAVIOR_ALIGN = 5,     /* V = K_align mean neighbor velocity */
    SHOAL_BEHAVIOR_COHERE = 6,    /* V = K_cohesion (neighbor center - x) */
    SHOAL_BEHAVIOR_WANDER = 7,    /* V = V_0 + V_wander, a seeded random walk (shoal_wander_t) */
    SHOAL_BEHAVIOR_PURSUE = 8,    /* seek the predicted position of pursuit.target */
    SHOAL_BEHAVIOR_EVADE = 9,     /* flee the predicted position of pursuit.target */
    SHOAL_BEHAVIOR_FOLLOW = 10,   /* arrive at a point behind follow.leader */
    SHOAL_BEHAVIOR_AVOID = 11,    /* steer around the world's obstacles (shoal_avoid_t) */
    SHOAL_BEHAVIOR_DSEEK = 12,    /* directed seek: reach a waypoint heading a given way (shoal_dseek_t) */
    SHOAL_BEHAVIOR_COUNT_ = 13
} shoal_behavior_t;

/* Neighborhood of the group behaviors (separation, alignment, cohesion). A
 * neighbor is any other agent within `radius`, inside the field of view,
 * and, with a cap, among the `max_neighbors` nearest. Each counts with
 * weight w_i = 1. */
typedef struct shoal_neighbors_t {
    float radius;            /* m, > 0. Default 2 */
    float fov;               /* rad in (0, 2 pi]: full cone angle around the heading. Default 2 pi */
    int32_t max_neighbors;   /* 0: no cap; else only the nearest N count. Default 0 */
    float separation_gain;   /* K_separate, m^2/s, >= 0. Default 1 */
    float alignment_gain;    /* K_align, >= 0. Default 1 */
    float cohesion_gain;     /* K_cohesion, 1/s, >= 0. Default 1 */
} shoal_neighbors_t;

/* Wander (seed 003): each step a random unit vector scaled by `noise` is
 * added to the wander velocity, which is renormalized to `strength`; the
 * desired velocity is V_0 + V_wander with V_0 = cruise_speed along the
 * heading. Random draws are keyed by (world seed, agent, step). */
typedef struct shoal_wander_t {
    float cruise_speed; /* |V_0|, m/s, >= 0. Default 2 */
    float strength;     /* K_wander, m/s, >= 0. Default 1 */
    float noise;        /* K_noise, m/s, >= 0. Default 0.5 */
} shoal_wander_t;

/* Pursuit and evasion of another agent with linear prediction: the target's
 * position after T = min(distance / own max speed, max_prediction). */
typedef struct shoal_pursuit_t {
    shoal_agent_t target;  /* an agent of the same world; a stale one is ignored */
    float max_prediction;  /* s, >= 0. Default 2 */
} shoal_pursuit_t;

/* Leader following (seed 003): arrival at a point `behind + behind_per_speed
 * * |V_leader|` meters behind the leader; combine with SEPARATE. */
typedef struct shoal_follow_t {
    shoal_agent_t leader;   /* an agent of the same world; a stale one is ignored */
    float behind;           /* m, >= 0. Default 2 */
    float behind_per_speed; /* s, >= 0. Default 0.5 */
    float arrive_gain;      /* K_arrival for the follow point, 1/s, > 0. Default 1 */
} shoal_follow_t;

/* Obstacle avoidance (seed 003): keep a cylinder of radius r_B and length
 * lookahead_time * |V| ahead free of the world's obstacles (bounding
 * spheres). The nearest obstacle in the cylinder repels with magnitude
 * K_avoid V_max / (1 + (|d| - (r_B + r_o))^2), along the normal field -d/|d|
 * or, with `tangential`, the tangential field t = k x n. */
/* A waypoint of directed seek: where, which way to be heading there, and
 * how fast to be going. */
typedef struct shoal_waypoint_t {
    float position[3];  /* m; z ignored in 2D */
    float direction[3]; /* unit heading wanted at the waypoint; z ignored in 2D */
    float speed;        /* m/s at the waypoint, >= 0; 0 = the vehicle's max speed */
} shoal_waypoint_t;

/* Directed seek (Jakob, "Directional extensions of seek steering
 * behavior"): steer along the shorter of the two three-segment paths
 * (turn, straight, turn) that arrive at the waypoint along its direction
 * without turning tighter than the minimum turn radius. The waypoint is
 * `waypoint`, or the current one of `route` (see shoal_world_add_route);
 * a route advances when the agent comes within reach_radius. */
typedef struct shoal_dseek_t {
    shoal_waypoint_t waypoint; /* used when route < 0 */
    int32_t route;             /* a route of this world, or -1. Default -1 */
    float r_min;               /* m, >= 0; 0 = speed / max_turn_rate of the vehicle. Default 0 */
    float reach_radius;        /* m, >= 0; 0 = half the turn radius. Default 0 */
} shoal_dseek_t;

typedef struct shoal_avoid_t {
    float lookahead_time; /* T_avoid, s, >= 0. Default 2 */
    float gain;           /* K_avoid, >= 0. Default 1 */
    int32_t tangential;   /* 0: normal field, 1: tangential field. Default 0 */
} shoal_avoid_t;

/* A ground vehicle (issue 5): a kinematic bicycle with engine, brakes,
 * drag, rolling resistance, gravity along the terrain's slope, reverse, a
 * lateral traction limit beyond which it slides, and collisions that stop
 * motion into the world's obstacles. Every field is a physical parameter;
 * shoal_ground_vehicle_preset() fills one from a named preset. The defaults
 * below are the "car" preset. */
typedef struct shoal_ground_vehicle_t {
    float mass;              /* kg, > 0. Default 1400 */
    float wheelbase;         /* m, front to rear axle, > 0. Default 2.7 */
    float max_steer;         /* rad, largest road-wheel angle, in (0, pi/2). Default 0.5585 (32 deg) */
    float steer_rate;        /* rad/s, how fast the wheel angle follows the command, > 0. Default 1.5 */
    float max_yaw_rate;      /* rad/s, turn-rate cap of the hull (tracks, rudders), >= 0;
                              * 0 = none: a wheeled vehicle, whose turn rate its grip
                              * caps. Default 0 */
    float engine_force;      /* N at throttle +1, forward, > 0. Default 6400 */
    float reverse_force;     /* N at throttle -1 when reversing (below 0.5 m/s forward), >= 0.
                              * Default 3200 */
    float brake_force;       /* N at throttle -1 while rolling forward, >= 0. Default 11000 */
    float drag;              /* N/(m/s)^2, aerodynamic drag, >= 0. Default 0.4 */
    float rolling;           /* rolling resistance, times m g cos(slope), in [0, 1). Default 0.015 */
    float traction;          /* lateral grip: largest lateral acceleration before sliding,
                              * in g, > 0. Default 0.85 */
    float max_speed;         /* m/s, forward governor, > 0. Default 30 */
    float max_reverse_speed; /* m/s, reverse governor, >= 0. Default 6 */
    float radius;            /* m, collision radius against obstacles, >= 0. Default 2.2 */
} shoal_ground_vehicle_t;

/* Fill *out with a preset: "buggy", "car", "apc" (a light wheeled armoured
 * car) are easy to drive; "truck" (large turn radius), "tank" (slow turn
 * rate) and "hovercraft" (poor traction, weak climbing) are hard. An unknown
 * or NULL name gives SHOAL_ERR_NOT_FOUND (NULL out: INVALID_ARGUMENT) with
 * the list of names in err (optional), and leaves *out unchanged. */
SHOAL_API shoal_status_t shoal_ground_vehicle_preset(const char* name, shoal_ground_vehicle_t* out,
                                                     shoal_error_t* err);

/* Which path follower drives a ground vehicle (seed 001). */
typedef enum shoal_follower_t {
    SHOAL_FOLLOWER_PROPOSED = 0, /* the paper's: Bezier-curvature target speed, PI speed control */
    SHOAL_FOLLOWER_BASELINE = 1  /* the comparison: angle-based target speed, P speed control */
} shoal_follower_t;

/* Path following of a ground vehicle: each step the follower projects the
 * vehicle on its path, picks a target speed and a target point a lookahead
 * ahead, and outputs throttle and steering; a stuck manager backs the
 * vehicle out (and teleports it back onto the path as a last resort) when
 * it makes no progress. Both followers share every parameter but the ones
 * marked. shoal_path_follow_default() gives the paper's section III values.
 * Progress, cross-track error and completion are measured in 3D (in a 2D
 * world the path's z is 0). */
typedef struct shoal_path_follow_t {
    shoal_follower_t follower; /* Default PROPOSED */
    int32_t path;          /* a path of this world (shoal_world_add_path), or -1: no
                            * path, the vehicle drives on shoal_agent_set_drive's
                            * inputs. Default -1 */
    /* target speed */
    float a_lat;           /* proposed: lateral acceleration allowed in turns, in g, > 0. Default 0.4 */
    float dh;              /* proposed: m between the resampled path points, > 0. Default 6 */
    int32_t n;             /* proposed: resampled points, vehicle included, 3..1000. Default 5 */
    float v_min;           /* m/s, lowest target speed, >= 0. Default 1 */
    float v_max;           /* m/s, highest target speed, > 0 and >= v_min. Default 10 */
    float baseline_gain;   /* baseline: v_max / (1 + gain * largest angle), 1/rad, >= 0. Default 1.5 */
    /* target point: lookahead = clamp(min + time * |speed|, min, max) */
    float lookahead_min;   /* m, > 0. Default 5 */
    float lookahead_time;  /* s, >= 0. Default 0.6 */
    float lookahead_max;   /* m, >= lookahead_min. Default 15 */
    /* speed control: throttle = kp e + ki integral(e) (the baseline has no ki) */
    float kp;              /* throttle per m/s of speed error, >= 0. Default 0.5 */
    float ki;              /* throttle per m of accumulated error, >= 0. Default 0.25 */
    float arrive_radius;   /* m: the path is completed within this of its end (and with its
                            * progress near the end: a loop passes its end at its start),
                            * >= 0. Default 3 */
    /* stuck manager */
    float stuck_window;    /* s: progress must exceed stuck_progress within it, > 0. Default 4 */
    float stuck_progress;  /* m of path, > 0. Default 1.5 */
    float reverse_time;    /* s of reversing with counter-steer per recovery, >= 0. Default 2 */
    int32_t max_recoveries; /* recoveries without progress before a teleport, >= 0. Default 3 */
    /* proposed follower: 1 = the target speed also respects the vehicle
     * itself, an extension of the paper: a_lat no higher than its traction,
     * v no higher than max_yaw_rate / curvature, and one more Bezier curve
     * that bends by the angle between its facing and the path ahead (so it
     * is slowed until it faces along the path); 0 = the paper's Algorithm 1
     * exactly, which sees only the vehicle's position. Default 1 */
    int32_t vehicle_limits;
} shoal_path_follow_t;

/* An agent that is a ground vehicle. It then ignores its behaviors,
 * `vehicle` and `control` (they are kept, not used): its motion comes from
 * the ground-vehicle model driven by its follower (follow.path >= 0) or by
 * shoal_agent_set_drive's inputs. It moves in the x-y plane at the terrain's
 * height (3D worlds: z and the attitude follow the ground from its first
 * step; the pitch of the def is ignored); its velocity is the world-frame
 * velocity of the model, which other agents see. */
typedef struct shoal_ground_t {
    int32_t enabled;                /* 0 or 1. Default 0 */
    shoal_ground_vehicle_t vehicle; /* Default the "car" preset */
    shoal_path_follow_t follow;     /* Default shoal_path_follow_default() */
} shoal_ground_t;

/* ------------------------------------------------------------------------ */
/* Planner agents                                                            */
/* ------------------------------------------------------------------------ */

/* A planner agent (issue 6, seed 004) flies like a spacecraft: at a
 * constant forward speed, turning by body rates (yaw; in 3D also pitch and
 * optionally roll) that change linearly over fixed control intervals. At
 * the start of each of its intervals it searches the tree of pre-integrated
 * trim trajectories (the world's trim table) for the best path a few
 * intervals deep, scoring each segment with goodness functions in [0, 1]
 * (seek, flee, pursue, evade, each times AvoidCollision), and flies the
 * first control of that path. Execution follows the table bit for bit.
 *
 * It moves by its trim trajectories, not by forces: its behaviors weights,
 * `vehicle` and `control` are kept but not used (vehicle.max_speed still
 * clamps a teleport's velocity, which is then replaced by speed along the
 * facing). Its position, velocity (speed along its facing), heading,
 * quaternion and angular velocity are written every step, so other agents
 * (pursuers, neighbors) and the bulk read see it like any other agent. */

typedef enum shoal_plan_strategy_t {
    SHOAL_PLAN_SINGLE_STEP = 0, /* score the root's successors only */
    SHOAL_PLAN_UNIFORM = 1,     /* every k_skip-th control at every state */
    SHOAL_PLAN_ADAPTIVE = 2     /* n_v collapse^depth controls per state (circular permutation) */
} shoal_plan_strategy_t;

/* How the world's trim table samples the controls. Controls are the
 * samples' product; every (initial, final) pair is one trajectory. */
typedef struct shoal_trim_spec_t {
    int32_t axes;         /* 1: yaw (2D worlds); 2: yaw + pitch; 3: + roll (3D worlds) */
    int32_t samples[3];   /* per axis, 1..64 (odd counts include the straight rate 0) */
    float max_rate[3];    /* rad/s per axis, > 0: samples span [-max_rate, max_rate] */
    float interval;       /* s, the control interval, > 0 */
    int32_t substeps;     /* Euler steps per interval, 1..100000, with interval / substeps
                           * >= 1e-6 s (each step flies dt / that substeps per agent) */
} shoal_trim_spec_t;

/* The default table of a world of `dimensions`:
 * 2D: axes 1, samples {17}, max_rate {1.6}, interval 1, substeps 60 (17 controls);
 * 3D: axes 2, samples {11, 11}, max_rate {1.0, 1.0}, interval 1, substeps 60 (121). */
SHOAL_API shoal_trim_spec_t shoal_trim_spec_default(int32_t dimensions);

/* Build the world's trim table (one per world; it replaces the previous
 * one). axes must be 1 in 2D worlds and 2 or 3 in 3D worlds; a spec with an
 * empty control set (samples < 1) is rejected. A world without a table
 * builds the default one when its first planner agent is added. While
 * planner agents exist only the same spec is accepted (SHOAL_ERR_BUSY
 * otherwise: set the table before adding them). Not from inside a step. */
SHOAL_API shoal_status_t shoal_world_set_trim_table(shoal_world_t* world, const shoal_trim_spec_t* spec);
/* Save the table to a file (a checksummed little-endian binary, written
 * atomically). SHOAL_ERR_NOT_FOUND when the world has no table yet. */
SHOAL_API shoal_status_t shoal_world_save_trim_table(const shoal_world_t* world, const char* path);
/* Load a saved table as the world's, under the rules of set_trim_table.
 * SHOAL_ERR_IO when the file cannot be opened, SHOAL_ERR_PARSE when it is
 * not a valid table (truncated, corrupted, wrong version). */
SHOAL_API shoal_status_t shoal_world_load_trim_table(shoal_world_t* world, const char* path);

typedef enum shoal_plan_goal_t {
    SHOAL_PLAN_GOAL_NONE = 0,   /* only avoid collisions */
    SHOAL_PLAN_GOAL_SEEK = 1,   /* goal_point */
    SHOAL_PLAN_GOAL_FLEE = 2,   /* goal_point */
    SHOAL_PLAN_GOAL_PURSUE = 3, /* goal_agent, linear prediction */
    SHOAL_PLAN_GOAL_EVADE = 4   /* goal_agent */
} shoal_plan_goal_t;

/* A planner agent's definition (see the section's comment). The search
 * parameters are the seed's: discount d, optimism f, depth limit D_max, the
 * best leaf chosen among depth >= min_depth, an expansion budget, and the
 * strategies' sampling. There is no time budget: results never depend on
 * the machine. */
typedef struct shoal_planner_t {
    int32_t enabled;          /* 1: a planner agent. 0 or 1. Default 0 */
    float speed;              /* m/s, constant forward speed, > 0. Default 5 */
    float radius;             /* m, bounding sphere for collision tests, >= 0. Default 1 */
    shoal_plan_goal_t goal;   /* Default SEEK */
    float goal_point[3];      /* seek / flee point, finite; z ignored in 2D. Default 0 */
    shoal_agent_t goal_agent; /* pursue / evade target: a live agent of this world when the
                               * goal is set (a target removed later is ignored: the agent
                               * then only avoids collisions) */
    int32_t avoid_collisions; /* 1: AvoidCollision with the world's obstacles (static and
                               * moving). 0 or 1. Default 1 */
    shoal_plan_strategy_t strategy; /* Default ADAPTIVE */
    float discount;           /* d in (0, 1). Default 0.8 */
    float optimism;           /* f in [-1, 1]. Default 0.5 */
    int32_t max_depth;        /* D_max in 1..64. Default 6 */
    int32_t min_depth;        /* in 1..max_depth. Default 3 */
    int32_t max_expansions;   /* expansions per search, 1..1000000. Default 400 */
    int32_t k_skip;           /* uniform: every k_skip-th control, >= 1. Default 2 */
    int32_t n_v;              /* adaptive: controls expanded at depth 0 (capped at the table's
                               * count), >= 1. Default 121: all of them */
    float collapse;           /* adaptive: c in (0, 1], n_v c^depth controls. Default 0.2 */
    float damping;            /* bias to straighter paths, in [0, 1). Default 0.02 */
} shoal_planner_t;

SHOAL_API shoal_planner_t shoal_planner_default(void);

#define SHOAL_BEHAVIOR_SLOTS 16

/* Short lower-case name ("seek"), or NULL for an unknown behavior. */
SHOAL_API const char* shoal_behavior_name(shoal_behavior_t behavior);

typedef struct shoal_agent_def_t {
    float position[3];    /* m; z ignored in 2D */
    float velocity[3];    /* m/s, world frame; z ignored in 2D */
    float heading;        /* rad: 2D heading; in 3D the initial yaw */
    float pitch;          /* rad: 3D initial pitch (nose up positive); ignored in 2D */
    shoal_vehicle_t vehicle;
    shoal_control_t control;
    float weights[SHOAL_BEHAVIOR_SLOTS]; /* per shoal_behavior_t; 0 = off. Default all 0 */
    float arrive_gain;    /* K_arrival, 1/s, > 0. Default 1 */
    float depart_gain;    /* K_departure, m^2/s, > 0. Default 10 */
    float target[3];      /* seek and arrive toward this point */
    float threat[3];      /* flee and depart from this point */
    shoal_neighbors_t neighbors; /* used when SEPARATE, ALIGN or COHERE has weight */
    shoal_wander_t wander;       /* used when WANDER has weight */
    shoal_pursuit_t pursuit;     /* used when PURSUE or EVADE has weight */
    shoal_follow_t follow;       /* used when FOLLOW has weight */
    shoal_avoid_t avoid;         /* used when AVOID has weight */
    shoal_dseek_t dseek;         /* used when DSEEK has weight */
    shoal_ground_t ground;       /* a ground vehicle when ground.enabled (see shoal_ground_t) */
    shoal_planner_t planner;     /* a planner agent when planner.enabled (see shoal_planner_t) */
    uint32_t group;       /* a label for the user (colors, statistics). Default 0 */
    uint64_t user_value;  /* opaque to the library. Default 0 */
    int32_t internal_value; /* set by shoal_agent_default_def(); leave it alone */
} shoal_agent_def_t;

SHOAL_API shoal_agent_def_t shoal_agent_default_def(void);
SHOAL_API shoal_vehicle_t shoal_vehicle_default(void);
SHOAL_API shoal_control_t shoal_control_default(void);
SHOAL_API shoal_neighbors_t shoal_neighbors_default(void);
SHOAL_API shoal_wander_t shoal_wander_default(void);
SHOAL_API shoal_pursuit_t shoal_pursuit_default(void);
SHOAL_API shoal_follow_t shoal_follow_default(void);
SHOAL_API shoal_avoid_t shoal_avoid_default(void);
SHOAL_API shoal_dseek_t shoal_dseek_default(void);
SHOAL_API shoal_path_follow_t shoal_path_follow_default(void);

/* Add an agent. Between steps it is live at once; from inside a step (a user
 * system) the handle is returned at once and the agent goes live at the next
 * stage boundary. */
SHOAL_API shoal_status_t shoal_agent_add(shoal_world_t* world, const shoal_agent_def_t* def,
                                         shoal_agent_t* out_id);

/* Remove an agent; its handle and every copy of it become stale. From inside
 * a step the removal is applied at the next stage boundary. */
SHOAL_API shoal_status_t shoal_agent_remove(shoal_world_t* world, shoal_agent_t id);

/* 1 if the handle names a live (or pending) agent of this world, else 0. */
SHOAL_API int shoal_agent_is_valid(const shoal_world_t* world, shoal_agent_t id);

/* The kinematic state of one agent. */
typedef struct shoal_agent_state_t {
    float position[3];
    float velocity[3];     /* world frame */
    float heading;         /* 2D heading; in 3D the yaw of the forward axis */
    float orientation[4];  /* unit quaternion (w, x, y, z); in 2D a yaw rotation */
    float angular_velocity[3]; /* rad/s, world frame; 2D uses [2] */
} shoal_agent_state_t;

/* An agent added inside the current step has no state until it goes live
 * at the stage boundary: SHOAL_ERR_BUSY. */
SHOAL_API shoal_status_t shoal_agent_get_state(const shoal_world_t* world, shoal_agent_t id,
                                               shoal_agent_state_t* out_state);

/* Set position, velocity and orientation directly (no removal, no dynamics).
 * Angular velocity is set to zero. In 2D `orientation` is ignored and
 * `heading` used; in 3D `orientation` (normalized here) is used. velocity is
 * clamped to the vehicle's max speed. */
SHOAL_API shoal_status_t shoal_agent_teleport(shoal_world_t* world, shoal_agent_t id,
                                              const float position[3], const float velocity[3],
                                              float heading, const float orientation[4]);

SHOAL_API shoal_status_t shoal_agent_set_target(shoal_world_t* world, shoal_agent_t id,
                                                const float target[3]);
SHOAL_API shoal_status_t shoal_agent_set_threat(shoal_world_t* world, shoal_agent_t id,
                                                const float threat[3]);
SHOAL_API shoal_status_t shoal_agent_set_vehicle(shoal_world_t* world, shoal_agent_t id,
                                                 const shoal_vehicle_t* vehicle);
SHOAL_API shoal_status_t shoal_agent_set_control(shoal_world_t* world, shoal_agent_t id,
                                                 const shoal_control_t* control);
/* Weight 0 turns a behavior off. */
SHOAL_API shoal_status_t shoal_agent_set_behavior(shoal_world_t* world, shoal_agent_t id,
                                                  shoal_behavior_t behavior, float weight);
SHOAL_API shoal_status_t shoal_agent_set_neighbors(shoal_world_t* world, shoal_agent_t id,
                                                   const shoal_neighbors_t* neighbors);
SHOAL_API shoal_status_t shoal_agent_set_wander(shoal_world_t* world, shoal_agent_t id,
                                                const shoal_wander_t* wander);
SHOAL_API shoal_status_t shoal_agent_set_pursuit(shoal_world_t* world, shoal_agent_t id,
                                                 const shoal_pursuit_t* pursuit);
SHOAL_API shoal_status_t shoal_agent_set_follow(shoal_world_t* world, shoal_agent_t id,
                                                const shoal_follow_t* follow);
SHOAL_API shoal_status_t shoal_agent_set_avoid(shoal_world_t* world, shoal_agent_t id,
                                               const shoal_avoid_t* avoid);
SHOAL_API shoal_status_t shoal_agent_set_dseek(shoal_world_t* world, shoal_agent_t id,
                                               const shoal_dseek_t* dseek);
SHOAL_API shoal_status_t shoal_agent_set_gains(shoal_world_t* world, shoal_agent_t id,
                                               float arrive_gain, float depart_gain);
SHOAL_API shoal_status_t shoal_agent_set_user_value(shoal_world_t* world, shoal_agent_t id,
                                                    uint64_t value);
SHOAL_API shoal_status_t shoal_agent_get_user_value(const shoal_world_t* world, shoal_agent_t id,
                                                    uint64_t* out_value);
/* The definition that would recreate this agent as it is now. */
SHOAL_API shoal_status_t shoal_agent_get_def(const shoal_world_t* world, shoal_agent_t id,
                                             shoal_agent_def_t* out_def);

/* Bulk read, in the world's storage order (which may change between steps).
 * Every pointer is optional. Arrays hold `capacity` entries: ids[n],
 * positions[3n], velocities[3n], headings[n], orientations[4n] (w,x,y,z).
 * Writes min(capacity, agent count) entries and sets *out_count to that. */
typedef struct shoal_agent_batch_t {
    shoal_agent_t* ids;
    float* positions;
    float* velocities;
    float* headings;
    float* orientations;
    uint64_t* user_values;
    uint32_t* groups;
} shoal_agent_batch_t;

SHOAL_API shoal_status_t shoal_world_read_agents(const shoal_world_t* world,
                                                 const shoal_agent_batch_t* batch,
                                                 int32_t capacity, int32_t* out_count);

/* ------------------------------------------------------------------------ */
/* Obstacles                                                                 */
/* ------------------------------------------------------------------------ */

/* Obstacles (bounding spheres; circles in 2D) that AVOID steers around,
 * ground vehicles stop at and planner agents plan around. Ids are small
 * integers, stable until removed. */
SHOAL_API shoal_status_t shoal_world_add_obstacle(shoal_world_t* world, const float center[3],
                                                  float radius, int32_t* out_id);
SHOAL_API shoal_status_t shoal_world_remove_obstacle(shoal_world_t* world, int32_t id);
SHOAL_API int32_t shoal_world_obstacle_count(const shoal_world_t* world);

/* A moving obstacle (an asteroid): the world moves it linearly, center +=
 * velocity dt, every step (after the agents have moved). velocity is m/s,
 * finite; z ignored in 2D. Static obstacles have velocity 0. AVOID and
 * ground vehicles see obstacles where they are; planner agents also predict
 * where moving ones will be. */
SHOAL_API shoal_status_t shoal_world_add_moving_obstacle(shoal_world_t* world, const float center[3],
                                                         const float velocity[3], float radius,
                                                         int32_t* out_id);
/* An obstacle's current center, velocity and radius (each output optional).
 * SHOAL_ERR_NOT_FOUND for an id that is not in use. */
SHOAL_API shoal_status_t shoal_world_get_obstacle(const shoal_world_t* world, int32_t id,
                                                  float center[3], float velocity[3], float* radius);

/* ------------------------------------------------------------------------ */
/* Directed seek as a stateless function                                     */
/* ------------------------------------------------------------------------ */

/* The steering direction of directed seek for an agent at `position` heading
 * along `heading` (unit), toward `waypoint` with wanted heading `direction`
 * (unit), turning no tighter than `r_min` (m, > 0): the behavior the DSEEK
 * system runs, for callers with vehicles of their own. Writes a unit vector
 * at most 90 degrees from `heading` to out_steer (2 floats in 2D, 3 in 3D).
 * Bad input (NaN, r_min <= 0, a direction not of unit length, position on
 * the waypoint with another heading) gives SHOAL_ERR_INVALID_ARGUMENT, the
 * reason in err, and still a finite out_steer (the heading). */
SHOAL_API shoal_status_t shoal_dseek_steer_2d(const float position[2], const float heading[2],
                                              const float waypoint[2], const float direction[2],
                                              float r_min, float out_steer[2], shoal_error_t* err);
SHOAL_API shoal_status_t shoal_dseek_steer_3d(const float position[3], const float heading[3],
                                              const float waypoint[3], const float direction[3],
                                              float r_min, float out_steer[3], shoal_error_t* err);

/* ------------------------------------------------------------------------ */
/* Routes and formations (directed seek)                                     */
/* ------------------------------------------------------------------------ */

/* A chain of waypoints that agents with DSEEK can follow (dseek.route).
 * The points are copied. Route ids are 0, 1, 2, ... in creation order. */
SHOAL_API shoal_status_t shoal_world_add_route(shoal_world_t* world, const shoal_waypoint_t* points,
                                               int32_t count, int32_t* out_route);
SHOAL_API int32_t shoal_world_route_count(const shoal_world_t* world);
/* Index of the waypoint an agent is heading for on its route; equals the
 * route's length once the last one is reached. */
SHOAL_API shoal_status_t shoal_agent_route_index(const shoal_world_t* world, shoal_agent_t id,
                                                 int32_t* out_index);

/* Directed formation arrival: give each member (DSEEK weight 1) the
 * waypoint of its slot, anchor.position + R offsets[i], where R turns the
 * formation frame (+x along anchor.direction, +y to its left, +z up) into
 * the world, all arriving along anchor.direction at anchor.speed. All or
 * nothing: if any member is stale, nothing changes. */
SHOAL_API shoal_status_t shoal_formation_arrive(shoal_world_t* world, const shoal_agent_t* members,
                                                int32_t count, const float (*offsets)[3],
                                                const shoal_waypoint_t* anchor);

/* ------------------------------------------------------------------------ */
/* Ground vehicles: terrain, paths, driving                                  */
/* ------------------------------------------------------------------------ */

/* A height field: heights[j * nx + i] is the ground height (m) at
 * (origin[0] + i * cell, origin[1] + j * cell); bilinear between samples,
 * flat (edge values) outside the grid. Ground vehicles drive on it: in 3D
 * worlds their z and attitude follow it; in 2D worlds only its slopes act
 * (gravity along the slope). Other agents ignore it. */
typedef struct shoal_terrain_t {
    int32_t nx, ny;      /* samples along x and y: both >= 2, or nx = 0 for flat ground */
    float origin[2];     /* m, the position of sample (0, 0) */
    float cell;          /* m between samples, > 0 */
    const float* heights; /* nx * ny finite heights, m; copied */
} shoal_terrain_t;

/* Set the world's terrain; the heights are copied. NULL, or nx == 0, makes
 * the ground flat at z = 0 (the default). Not from inside a step (BUSY). */
SHOAL_API shoal_status_t shoal_world_set_terrain(shoal_world_t* world,
                                                 const shoal_terrain_t* terrain);

/* A path for ground vehicles: `count` waypoints as xyz triples (copied; z
 * ignored in 2D; in 3D it should lie on the ground) and a corridor
 * half-width (m, > 0) for the inside-corridor metric. A path needs at least
 * 2 finite waypoints with consecutive ones at least 1 mm apart; the error
 * message names the offending waypoint. Path ids are 0, 1, 2, ... in
 * creation order; paths are never removed. Not from inside a step (BUSY). */
SHOAL_API shoal_status_t shoal_world_add_path(shoal_world_t* world, const float* xyz, int32_t count,
                                              float half_width, int32_t* out_id);
/* Replace path `id` between frames (same rules as add_path). Vehicles on
 * it find their progress again over the whole new path (the nearest point)
 * and start a fresh stuck window; their counters (stuck events, teleports)
 * and run metrics are kept, and `completed` is cleared. */
SHOAL_API shoal_status_t shoal_world_set_path(shoal_world_t* world, int32_t id, const float* xyz,
                                              int32_t count, float half_width);
SHOAL_API int32_t shoal_world_path_count(const shoal_world_t* world);

/* Make a ground vehicle follow path `path_id`, or stop following (-1: it
 * then drives on shoal_agent_set_drive's inputs). Restarts the run: the
 * follower's progress, counters and the run metrics start from zero, even
 * for the same path. An agent that is not a ground vehicle gives
 * SHOAL_ERR_INVALID_ARGUMENT. */
SHOAL_API shoal_status_t shoal_agent_set_path(shoal_world_t* world, shoal_agent_t id,
                                              int32_t path_id);

/* Manual inputs of a ground vehicle, used whenever it follows no path:
 * throttle (+ forward, - brake then reverse) and steering (+ left), both
 * finite, clamped to [-1, 1]. They are kept until changed (0 at first). Not
 * for agents added inside the current step (BUSY until it ends). */
SHOAL_API shoal_status_t shoal_agent_set_drive(shoal_world_t* world, shoal_agent_t id, float throttle,
                                               float steering);

/* Change a ground vehicle's definition (or make an agent one, or stop it
 * being one with enabled = 0). The vehicle's motion state is kept; a new
 * path (follow.path) restarts the run as shoal_agent_set_path does. */
SHOAL_API shoal_status_t shoal_agent_set_ground(shoal_world_t* world, shoal_agent_t id,
                                                const shoal_ground_t* ground);

/* What a ground vehicle is doing, and the metrics of its run: accumulated
 * since its path was set (shoal_agent_set_path, or its addition), over the
 * steps in which it followed the path and had not completed it. */
typedef struct shoal_ground_status_t {
    float throttle;         /* last applied, [-1, 1] */
    float steering;         /* last applied, [-1, 1] */
    float speed;            /* m/s along the forward axis; < 0 in reverse */
    float lateral_speed;    /* m/s sideways (sliding), to the left */
    float steer_angle;      /* rad, road-wheel angle, + left */
    float yaw_rate;         /* rad/s over the last step */
    int32_t contact;        /* 1 when an obstacle stopped motion in the last step */
    int32_t path;           /* the path followed, or -1 */
    /* follower (zero when following no path) */
    float target_speed;     /* m/s */
    float target_point[3];  /* m, the lookahead point on the path */
    float path_s;           /* m, progress: arc length of the projection on the path */
    float cte;              /* m, cross-track error (distance to the path) */
    int32_t inside_corridor; /* cte <= the path's half-width */
    int32_t stuck;          /* 1 while a recovery manoeuvre runs */
    int32_t stuck_events;   /* stuck detections, teleports included */
    int32_t teleports;      /* last-resort teleports back onto the path */
    int32_t completed;      /* the end of the path was reached */
    /* run metrics */
    int32_t frames;         /* steps counted */
    float drive_time;       /* s: frames times dt (the run's total time once completed) */
    float distance;         /* m driven (teleport jumps not included) */
    float cte_sum;          /* m: sum of the per-frame cte; mean = cte_sum / frames */
    int32_t inside_frames;  /* frames with inside_corridor */
    int32_t stuck_frames;   /* frames with stuck */
} shoal_ground_status_t;

/* A ground vehicle's status. An agent that is not a ground vehicle gives
 * SHOAL_ERR_INVALID_ARGUMENT. */
SHOAL_API shoal_status_t shoal_agent_get_ground(const shoal_world_t* world, shoal_agent_t id,
                                                shoal_ground_status_t* out_status);

/* ------------------------------------------------------------------------ */
/* Planner agents: status and goals                                          */
/* ------------------------------------------------------------------------ */

typedef struct shoal_planner_status_t {
    int32_t control;          /* the control being executed (index into the trim table) */
    int64_t searches;         /* searches run */
    double goodness_sum;      /* sum over searches of the chosen first segment's goodness */
    double search_ns_sum;     /* wall ns spent in this agent's searches (a statistic: it
                               * never feeds back into the simulation, nor into the hash) */
    int64_t states_sum;       /* visited states summed over searches */
    int64_t expanded_sum;     /* expanded states summed over searches */
    int32_t collisions;       /* times the agent entered an obstacle (sphere overlap, checked
                               * every substep) */
    float last_goodness;      /* goodness of the last search's chosen first segment */
} shoal_planner_status_t;

/* A planner agent's status. An agent that is not one gives
 * SHOAL_ERR_INVALID_ARGUMENT; one added during the current step, BUSY. */
SHOAL_API shoal_status_t shoal_agent_get_planner(const shoal_world_t* world, shoal_agent_t id,
                                                 shoal_planner_status_t* out);
/* Change a planner agent's goal: `point` (finite; required for SEEK and
 * FLEE, may be NULL otherwise) or `agent` (a live agent of this world other
 * than itself; required for PURSUE and EVADE). Takes effect at its next
 * search. */
SHOAL_API shoal_status_t shoal_agent_set_planner_goal(shoal_world_t* world, shoal_agent_t id,
                                                      shoal_plan_goal_t goal, const float point[3],
                                                      shoal_agent_t agent);

/* ------------------------------------------------------------------------ */
/* Stages, systems and statistics                                            */
/* ------------------------------------------------------------------------ */

typedef enum shoal_stage_t {
    SHOAL_STAGE_SENSE = 0,     /* spatial structures, neighbor data */
    SHOAL_STAGE_DECIDE = 1,    /* behaviors write desired velocity */
    SHOAL_STAGE_PLAN = 2,      /* planner searches */
    SHOAL_STAGE_CONTROL = 3,   /* intent -> force and torque */
    SHOAL_STAGE_INTEGRATE = 4, /* dynamics; the only writer of positions/velocities */
    SHOAL_STAGE_OBSERVE = 5,   /* metrics, recordings */
    SHOAL_STAGE_COUNT_ = 6
} shoal_stage_t;

SHOAL_API const char* shoal_stage_name(shoal_stage_t stage);

typedef struct shoal_system_stats_t {
    const char* name;   /* owned by the world */
    shoal_stage_t stage;
    int32_t enabled;
    uint64_t calls;     /* times run */
    uint64_t ns_total;  /* wall nanoseconds over all calls */
    uint64_t agents;    /* agents touched over all calls */
} shoal_system_stats_t;

/* Systems run in stage order, then registration order within a stage. */
SHOAL_API int32_t shoal_world_system_count(const shoal_world_t* world);
SHOAL_API shoal_status_t shoal_world_system_stats(const shoal_world_t* world, int32_t index,
                                                  shoal_system_stats_t* out_stats);
SHOAL_API shoal_status_t shoal_world_set_system_enabled(shoal_world_t* world, const char* name,
                                                        int enabled);
SHOAL_API void shoal_world_reset_stats(shoal_world_t* world);

/* Tracing: an opt-in recorder of when each system ran, for profilers
 * (`shoal run --trace` turns it into Chrome trace-event JSON for Perfetto
 * and chrome://tracing). While on, every step records a span for the whole
 * step, one per enabled system run, and, inside systems that use the
 * library's parallel-for, one per block of agents a worker processed (with
 * several threads, a system thus shows on every thread it ran on). Worker 0
 * is the thread that called shoal_world_step, so its block spans nest inside
 * the system span. Times come from a monotonic clock in nanoseconds.
 *
 * Events go into fixed buffers allocated when tracing is turned on (one for
 * step and system spans, one per worker, `capacity` events each), so
 * recording never allocates or locks; once a buffer is full its further
 * events are dropped and counted. Tracing never changes simulation results.
 * Off (the default), it costs one branch per system and per parallel loop. */
typedef struct shoal_trace_event_t {
    const char* name;    /* system name, or "step" (owned by the world; valid
                          * while the system exists) */
    shoal_stage_t stage; /* the system's stage; SHOAL_STAGE_COUNT_ for a step */
    int32_t worker;      /* -1: a step or whole-system span on the stepping
                          * thread; >= 0: a block span of that worker */
    int32_t items;       /* agents (items) in a block span; agents a system
                          * touched for a system span; agents for a step */
    uint64_t step;       /* the step it belongs to (step count before the step) */
    uint64_t start_ns;   /* monotonic clock, ns */
    uint64_t end_ns;
} shoal_trace_event_t;

/* Turn tracing on with room for `capacity` events (> 0) per buffer, or off
 * with 0. Either way the events recorded so far are discarded. Fails with
 * BUSY inside a step, OUT_OF_MEMORY (tracing stays as it was) if the
 * buffers cannot be had, INVALID_ARGUMENT for capacity < 0. */
SHOAL_API shoal_status_t shoal_world_set_trace(shoal_world_t* world, int32_t capacity);
/* Events recorded since tracing was turned on or cleared (0 when off). */
SHOAL_API int32_t shoal_world_trace_count(const shoal_world_t* world);
/* Event `index` in [0, count): step and system spans first, in the order
 * they ended, then each worker's block spans in worker order. */
SHOAL_API shoal_status_t shoal_world_trace_event(const shoal_world_t* world, int32_t index,
                                                 shoal_trace_event_t* out_event);
/* Events dropped because a buffer was full since the last clear. */
SHOAL_API uint64_t shoal_world_trace_dropped(const shoal_world_t* world);
/* Discard the recorded events (and the dropped count), keeping tracing on. */
SHOAL_API void shoal_world_clear_trace(shoal_world_t* world);

/* A user system: called once per step at its place in its stage, on the
 * thread that called shoal_world_step. It may read agents and call the
 * shoal_agent_* setters; adds and removes are applied at the stage boundary.
 * Returning non-OK stops the step with that status after the current stage's
 * pending changes are applied. */
typedef shoal_status_t shoal_system_fn(shoal_world_t* world, float dt, void* user_ctx);

SHOAL_API shoal_status_t shoal_world_add_system(shoal_world_t* world, const char* name,
                                                shoal_stage_t stage, shoal_system_fn* fn,
                                                void* user_ctx);

#ifdef __cplusplus
}
#endif

/* Extending a world: user components, columns, bulk calls, parallel systems. */
#include "shoal/extend.h"

#endif /* SHOAL_SHOAL_H */
