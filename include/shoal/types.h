/* shoal/types.h: definitions, enums and their defaults.
 *
 * Everything a caller fills in or reads back by value: the world and agent
 * definitions with their parts, the behaviors, stages and backends, agent
 * state, statistics and trace events, and the functions that return each
 * definition at its defaults (start from those: a definition not made by
 * shoal_world_default_def / shoal_agent_default_def is rejected). Apart from
 * the functions (shoal/shoal.h) so that the data of the API reads as one
 * page, the way Box2D's types.h sits beside box2d.h. The ground-vehicle and
 * planner parts of an agent definition come from their feature headers. */
#ifndef SHOAL_INCLUDE_TYPES_H
#define SHOAL_INCLUDE_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/crowd.h" /* shoal_crowd_t, a part of shoal_agent_def_t */
#include "shoal/export.h"
#include "shoal/ground.h" /* shoal_ground_t, a part of shoal_agent_def_t */
#include "shoal/id.h"
#include "shoal/nav.h"     /* shoal_nav_t, a part of shoal_agent_def_t */
#include "shoal/navmesh.h" /* shoal_navmesh_t, a part of shoal_agent_def_t */
#include "shoal/planner.h" /* shoal_planner_t, a part of shoal_agent_def_t */

#ifdef __cplusplus
extern "C" {
#endif

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
typedef void* shoal_enqueue_task_fn(shoal_task_fn* fn, int32_t item_count, int32_t min_range, void* task_ctx,
                                    void* user_ctx);
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

/* ------------------------------------------------------------------------ */
/* World                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct shoal_world_def_t {
    int32_t dimensions;       /* 2 or 3. Default 2. */
    uint64_t seed;            /* seeds every random draw in the world. Default 1. */
    int32_t thread_count;     /* 0: $SHOAL_THREADS, else physical cores (hwloc). Default 0. */
    shoal_backend_t backend;  /* Default AUTO. */
    int32_t bind_threads;     /* nonzero: pin OpenMP workers to cores (hwloc). Default 0. */
    int32_t initial_capacity; /* agents to reserve room for. Default 1024. */
    /* Space. With wrap, the box [bounds_min, bounds_max) is a torus: agents
     * leaving one side enter the other and neighbors see across the edges.
     * Without it space is unbounded (bounds unused). */
    int32_t wrap;        /* Default 0 */
    float bounds_min[3]; /* m. Default 0 */
    float bounds_max[3]; /* m, > bounds_min on used axes when wrap. Default 0 */
    /* Spatial hash cell edge, m; 0 = the largest neighbor radius. Default 0. */
    float cell_size;
    /* Reorder agent storage by cell every this many steps (0 = never), so
     * neighbors are adjacent in memory. Default 32. */
    int32_t reorder_interval;
    shoal_enqueue_task_fn* enqueue_task; /* host task system, optional */
    shoal_finish_task_fn* finish_task;
    void* task_user_ctx;
    shoal_alloc_fn* alloc; /* optional; both or neither */
    shoal_free_fn* free;
    void* alloc_user_ctx;
    int32_t internal_value; /* set by shoal_world_default_def(); leave it alone */
} shoal_world_def_t;

/* A definition with every field at its default. Always start from this. */
SHOAL_API shoal_world_def_t shoal_world_default_def(void);

/* ------------------------------------------------------------------------ */
/* Agents                                                                    */
/* ------------------------------------------------------------------------ */

/* Physical limits and inertia of an agent's vehicle ("Basic vehicle
 * dynamics" of "Behavior-based control examples", after Reynolds):
 * m dV/dt = F, I d2(theta)/dt2 = tau, |F| <= max_force,
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
    float speed_gain;   /* 1/s: force = m * speed_gain * velocity error. Default 4 */
    float heading_gain; /* 1/s^2: torque = I * (heading_gain * angle error ... */
    float turn_damping; /* 1/s:            ... - turn_damping * omega). Default 6 */
} shoal_control_t;

/* Steering behaviors. Each produces a desired velocity; an agent's behaviors
 * combine as the weighted sum of those velocities ("Behavior-based control
 * examples", after Reynolds). The weight of separation, alignment and
 * cohesion is that paper's c_separate, c_alignment, c_cohesion; their sum
 * is V_flock. */
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
    SHOAL_BEHAVIOR_NAVIGATE = 13, /* down a navigation field to a goal, round walls (shoal/nav.h) */
    SHOAL_BEHAVIOR_NAVMESH = 14,  /* along its own navmesh path to its goal (shoal/navmesh.h) */
    SHOAL_BEHAVIOR_COUNT_ = 15
} shoal_behavior_t;

/* Neighborhood of the group behaviors (separation, alignment, cohesion). A
 * neighbor is any other agent within `radius`, inside the field of view,
 * and, with a cap, among the `max_neighbors` nearest. Each counts with
 * weight w_i = 1. */
typedef struct shoal_neighbors_t {
    float radius;          /* m, > 0. Default 2 */
    float fov;             /* rad in (0, 2 pi]: full cone angle around the heading. Default 2 pi */
    int32_t max_neighbors; /* 0: no cap; else only the nearest N count. Default 0 */
    float separation_gain; /* K_separate, m^2/s, >= 0. Default 1 */
    float alignment_gain;  /* K_align, >= 0. Default 1 */
    float cohesion_gain;   /* K_cohesion, 1/s, >= 0. Default 1 */
} shoal_neighbors_t;

/* Wander ("Behavior-based control examples"): each step a random unit vector
 * scaled by `noise` is added to the wander velocity, which is renormalized
 * to `strength`; the desired velocity is V_0 + V_wander with V_0 =
 * cruise_speed along the heading. Random draws are keyed by (world seed,
 * agent, step). */
typedef struct shoal_wander_t {
    float cruise_speed; /* |V_0|, m/s, >= 0. Default 2 */
    float strength;     /* K_wander, m/s, >= 0. Default 1 */
    float noise;        /* K_noise, m/s, >= 0. Default 0.5 */
} shoal_wander_t;

/* Pursuit and evasion of another agent with linear prediction: the target's
 * position after T = min(distance / own max speed, max_prediction). */
typedef struct shoal_pursuit_t {
    shoal_agent_t target; /* an agent of the same world; a stale one is ignored. Stored
                           * as the agent's global id: once it is removed, no later
                           * agent is taken for it, and shoal_agent_get_def gives the
                           * null handle */
    float max_prediction; /* s, >= 0. Default 2 */
} shoal_pursuit_t;

/* Leader following ("Behavior-based control examples"): arrival at a point
 * `behind + behind_per_speed * |V_leader|` meters behind the leader;
 * combine with SEPARATE. */
typedef struct shoal_follow_t {
    shoal_agent_t leader;   /* an agent of the same world; a stale one is ignored. Stored
                             * as pursuit's target is */
    float behind;           /* m, >= 0. Default 2 */
    float behind_per_speed; /* s, >= 0. Default 0.5 */
    float arrive_gain;      /* K_arrival for the follow point, 1/s, > 0. Default 1 */
} shoal_follow_t;

/* A waypoint of directed seek: where, which way to be heading there, and
 * how fast to be going. */
typedef struct shoal_waypoint_t {
    float position[3];  /* m; z ignored in 2D */
    float direction[3]; /* unit heading wanted at the waypoint; z ignored in 2D */
    float speed;        /* m/s at the waypoint, >= 0; 0 = the vehicle's max speed */
} shoal_waypoint_t;

/* Directed seek (Jakob, "Directional extensions of seek steering
 * behavior"): steer along the three-segment path (turn, straight, turn)
 * with the least total turn that arrives at the waypoint along its
 * direction without turning tighter than the minimum turn radius; from
 * closer than about 2 radii, along the shortest (Dubins) path. The
 * waypoint is `waypoint`, or the current one of `route` (see
 * shoal_world_add_route); a route advances when the agent comes within
 * reach_radius.
 *
 * The behavior flies its plan on whatever vehicle it is given (docs/dseek.md):
 * it feeds the planned turn rate forward, starts and ends turns early by
 * the time the torque limit needs, and a control-stage system
 * ("dseek_track") recomputes these agents' force and torque so that the
 * velocity turns with the heading. It derives on its own: the radius (1.15
 * times the tightest turn the turn-rate and force limits allow at the
 * planning speed), the stage tolerance (at least 2 V dt) and the lead. It
 * asks the user only for the waypoint (and, optionally, r_min and
 * reach_radius). With the default vehicle at 60 Hz every start of the
 * 1,000-pose grid arrives within 0.05 R and 3 degrees (R = V /
 * max_turn_rate). */
typedef struct shoal_dseek_t {
    shoal_waypoint_t waypoint; /* used when route < 0 */
    int32_t route;             /* a route of this world, or -1. Default -1 */
    float r_min;               /* m, >= 0: the waypoint circle's radius; 0 = derived from the
                                  vehicle (above). A radius below what the vehicle can turn is
                                  flown as well as it can. Default 0 */
    float reach_radius;        /* m, >= 0; 0 = half the turn radius. Default 0 */
} shoal_dseek_t;

/* Obstacle avoidance ("Behavior-based control examples"): keep a cylinder
 * of radius r_B and length lookahead_time * |V| ahead free of the world's
 * obstacles (bounding spheres). The nearest obstacle in the cylinder repels
 * with magnitude K_avoid V_max / (1 + (|d| - (r_B + r_o))^2), along the
 * normal field -d/|d| or, with `tangential`, the tangential field t = k x n.
 * Then a no-entry guard bounds the agent's whole desired velocity (every
 * behavior's sum) near each obstacle: how steeply it may point in, from the
 * vehicle's turn radius and turning lag, and how fast the agent may drive
 * along a heading that points in, from the gap. With it, at these defaults
 * and the default vehicle and controller, agents that seek, arrive, flock or
 * directed-seek past an obstacle do not enter it, with either field
 * (docs/avoidance.md, `shoal experiment avoid`). The guard is part of AVOID:
 * an agent without the behavior has none. */
typedef struct shoal_avoid_t {
    float lookahead_time; /* T_avoid, s, >= 0. Default 2 */
    float gain;           /* K_avoid, >= 0. Default 1 */
    int32_t tangential;   /* 0: normal field, 1: tangential field. Default 0 */
} shoal_avoid_t;

#define SHOAL_BEHAVIOR_SLOTS 16

typedef struct shoal_agent_def_t {
    float position[3]; /* m; z ignored in 2D */
    float velocity[3]; /* m/s, world frame; z ignored in 2D */
    float heading;     /* rad: 2D heading; in 3D the initial yaw */
    float pitch;       /* rad: 3D initial pitch (nose up positive); ignored in 2D */
    shoal_vehicle_t vehicle;
    shoal_control_t control;
    float weights[SHOAL_BEHAVIOR_SLOTS]; /* per shoal_behavior_t; 0 = off. Default all 0 */
    float arrive_gain;                   /* K_arrival, 1/s, > 0. Default 1 */
    float depart_gain;                   /* K_departure, m^2/s, > 0. Default 10 */
    float target[3];                     /* seek and arrive toward this point */
    float threat[3];                     /* flee and depart from this point */
    shoal_neighbors_t neighbors;         /* used when SEPARATE, ALIGN or COHERE has weight */
    shoal_wander_t wander;               /* used when WANDER has weight */
    shoal_pursuit_t pursuit;             /* used when PURSUE or EVADE has weight */
    shoal_follow_t follow;               /* used when FOLLOW has weight */
    shoal_avoid_t avoid;                 /* used when AVOID has weight */
    shoal_dseek_t dseek;                 /* used when DSEEK has weight */
    shoal_ground_t ground;               /* a ground vehicle when ground.enabled (see shoal_ground_t) */
    shoal_planner_t planner;             /* a planner agent when planner.enabled (see shoal_planner_t) */
    shoal_crowd_t crowd;                 /* a crowd agent when crowd.enabled (see shoal/crowd.h) */
    shoal_nav_t nav;                     /* used when NAVIGATE has weight (see shoal/nav.h) */
    shoal_navmesh_t navmesh;             /* used when NAVMESH has weight (see shoal/navmesh.h) */
    int32_t contacts;       /* 1: the contact pass keeps this agent's body (vehicle.radius; a ground
                           * vehicle's ground.vehicle.radius) out of the other agents that take part,
                           * obstacles and walls (docs/crowds.md "Contacts"). Crowd agents always take
                           * part. 0 or 1. Default 0 */
    uint32_t group;         /* a label for the user (colors, statistics). Default 0 */
    uint64_t user_value;    /* opaque to the library. Default 0 */
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

/* The kinematic state of one agent. */
typedef struct shoal_agent_state_t {
    float position[3];
    float velocity[3];         /* world frame */
    float heading;             /* 2D heading; in 3D the yaw of the forward axis */
    float orientation[4];      /* unit quaternion (w, x, y, z); in 2D a yaw rotation */
    float angular_velocity[3]; /* rad/s, world frame; 2D uses [2] */
} shoal_agent_state_t;


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
    uint64_t* global_ids; /* shoal_agent_global_id's ids */
} shoal_agent_batch_t;

/* ------------------------------------------------------------------------ */
/* Stages, systems, statistics and trace events                             */
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

typedef struct shoal_system_stats_t {
    const char* name; /* owned by the world */
    shoal_stage_t stage;
    int32_t enabled;
    uint64_t calls;    /* times run */
    uint64_t ns_total; /* wall nanoseconds over all calls */
    uint64_t agents;   /* agents touched over all calls */
} shoal_system_stats_t;

/* One span recorded by the tracer (see shoal_world_set_trace). */
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

/* A user system: called once per step at its place in its stage, on the
 * thread that called shoal_world_step. It may read agents and call the
 * shoal_agent_* setters; adds and removes are applied at the stage boundary.
 * Returning non-OK stops the step with that status after the current stage's
 * pending changes are applied. */
typedef shoal_status_t shoal_system_fn(shoal_world_t* world, float dt, void* user_ctx);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_INCLUDE_TYPES_H */
