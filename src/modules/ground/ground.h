/* Ground vehicles as agents of the world: the world-level data they use
 * (paths, terrain, a cylinder copy of the obstacles) and the glue between
 * the public definitions and the COMP_GROUND component.
 *
 * ground_world.c owns the data, the public path/terrain/driving API and the
 * component's columns; ground.c owns the three systems (path_follow,
 * ground_vehicle) and the pose a vehicle gives its agent. */
#ifndef SHOAL_GROUND_H
#define SHOAL_GROUND_H

#include <string.h>

#include "ecs/world.h"
#include "modules/registry.h"
#include "simd/vec.h"
#include "modules/ground/ground_vehicle.h"
#include "modules/ground/path_follow.h"

/* ground: a ground vehicle (modules/ground/ground.c). GR_FOLLOWER, GR_PATH, GR_N,
 * GR_MAX_RECOVERIES, GR_VEHICLE_LIMITS, the counters (GR_FAILED, GR_STUCK_EVENTS, GR_TELEPORTS,
 * GR_FRAMES, GR_INSIDE_FRAMES, GR_STUCK_FRAMES) and the flags (GR_CONTACT,
 * GR_COMPLETED, GR_INSIDE, GR_STUCK) are int32; the rest float. GR_YAW is the vehicle's own heading: the
 * agent's heading and quaternion are written from it each step (integrate
 * does not preserve a 3D yaw bit for bit). */
enum {
    GR_SLOT = 0,
    GR_ROW,
    /* vehicle parameters (gv_params_t) */
    GR_MASS,
    GR_WHEELBASE,
    GR_MAX_STEER,
    GR_STEER_RATE,
    GR_MAX_YAW_RATE,
    GR_ENGINE_FORCE,
    GR_REVERSE_FORCE,
    GR_BRAKE_FORCE,
    GR_DRAG,
    GR_ROLLING,
    GR_TRACTION,
    GR_MAX_SPEED,
    GR_MAX_REVERSE_SPEED,
    GR_RADIUS,
    /* vehicle state (gv_state_t, position aside: the agent's) */
    GR_YAW,
    GR_V,
    GR_V_LAT,
    GR_STEER,
    GR_YAW_RATE,
    GR_CONTACT,
    /* inputs: manual (shoal_agent_set_drive) and last applied */
    GR_DRIVE_THROTTLE,
    GR_DRIVE_STEERING,
    GR_THROTTLE,
    GR_STEERING,
    /* follower parameters (pf_params_t) and path */
    GR_FOLLOWER,
    GR_PATH,
    GR_A_LAT,
    GR_DH,
    GR_N,
    GR_V_MIN,
    GR_V_MAX,
    GR_BASELINE_GAIN,
    GR_LOOKAHEAD_MIN,
    GR_LOOKAHEAD_TIME,
    GR_LOOKAHEAD_MAX,
    GR_KP,
    GR_KI,
    GR_ARRIVE_RADIUS,
    GR_STUCK_WINDOW,
    GR_STUCK_PROGRESS,
    GR_REVERSE_TIME,
    GR_MAX_RECOVERIES,
    GR_VEHICLE_LIMITS,
    /* follower state (pf_state_t) */
    GR_S,
    GR_PI_INTEGRAL,
    GR_WINDOW_TIME,
    GR_WINDOW_S,
    GR_RECOVER_TIME,
    GR_RECOVER_STEER,
    GR_FAILED,
    GR_STUCK_EVENTS,
    GR_TELEPORTS,
    GR_COMPLETED,
    /* last follower outputs (pf_command_t) */
    GR_TARGET_SPEED,
    GR_TARGET_X,
    GR_TARGET_Y,
    GR_TARGET_Z,
    GR_CTE,
    GR_INSIDE,
    GR_STUCK,
    /* run metrics since the path was set */
    GR_FRAMES,
    GR_DRIVE_TIME,
    GR_DISTANCE,
    GR_CTE_SUM,
    GR_INSIDE_FRAMES,
    GR_STUCK_FRAMES,
    GR_COUNT_
};

/* A world-owned path: the waypoints and arc lengths pf_path_build wrote,
 * and the pf_path_t that refers to them. */
typedef struct ground_path {
    vec3* points;
    float* s;
    pf_path_t path;
} ground_path_t;

typedef struct ground_world {
    ground_path_t* paths; /* ids 0 .. path_count - 1 */
    int32_t path_count;
    int32_t path_capacity;
    /* terrain: heights owned here (nx * ny floats), NULL when flat */
    float* heights;
    terrain_t terrain;
    /* the world's obstacles as vertical cylinders, rebuilt by the
     * ground_vehicle system before its parallel pass */
    gv_obstacle_t* obstacles;
    int32_t obstacle_count;
    int32_t obstacle_capacity;
} ground_world_t;

/* The world's ground data (module-wide data of the ground module), NULL
 * until a path or a terrain is set or a ground vehicle steps. */
static inline ground_world_t* ground_data(const world_t* w)
{
    return (ground_world_t*)w->module_data[MOD_GROUND];
}

/* The world's ground data, created on first use; NULL when out of memory. */
ground_world_t* ground_world_get(world_t* w);
/* Free everything of ground_data(w) (world destruction). */
void ground_release(world_t* w);
/* Grow, before a step's first stage, the obstacle list ground_vehicle_run
 * fills (adding: for a vehicle added inside the step, which may be the
 * first), so that a step out of memory fails before anything changed. 0
 * when out of memory (the error is set). */
int ground_reserve_step(world_t* w, int adding);
/* The terrain ground vehicles drive on (flat when none was set). */
terrain_t ground_terrain(const world_t* w);
int32_t ground_path_count(const world_t* w);

/* Check a definition's ground part (only when enabled); the message names
 * the field as "ground.vehicle.mass" etc. */
shoal_status_t ground_validate(world_t* w, const shoal_ground_t* g, const char* where);

/* Follower progress, counters and run metrics back to zero. */
void ground_restart_run(world_t* w, int32_t r);
/* Progress found again over the whole path (after the path or the vehicle
 * moved from outside the follower), with a fresh stuck window. */
void ground_refind_progress(world_t* w, int32_t r);
/* After shoal_agent_teleport: the vehicle's yaw and speeds from the given
 * pose, its run's progress found again. */
void ground_after_teleport(world_t* w, int32_t r, const float velocity[3]);

/* The agent pose of a vehicle at (x, y) with yaw, forward and sideways
 * speeds and yaw rate: position (z on the terrain in 3D), heading, the
 * quaternion (yaw with the terrain's pitch and roll), world velocity and
 * angular velocity, written into agent row `row` of the view `a` (three:
 * the world is 3D). */
void ground_write_agent_pose(const agent_view_t* a, int three, const terrain_t* terrain, int32_t row, float x,
                             float y, float yaw, float v, float v_lat, float yaw_rate);

/* The ground component's columns, fetched once per system run (as
 * agent_view does for the agent table) and indexed by component row. The
 * parameters are read-only to the systems; the int32 columns are those
 * components.h lists. */
typedef struct ground_view_t {
    const int32_t* agent_row;
    /* vehicle parameters (gv_params_t) */
    const float *mass, *wheelbase, *max_steer, *steer_rate, *max_yaw_rate, *engine_force;
    const float *reverse_force, *brake_force, *drag, *rolling, *traction, *max_speed;
    const float *max_reverse_speed, *radius;
    /* vehicle state */
    float *yaw, *v, *v_lat, *steer, *yaw_rate;
    int32_t* contact;
    /* inputs: manual and last applied */
    const float *drive_throttle, *drive_steering;
    float *throttle, *steering;
    /* follower parameters (pf_params_t) and path */
    const int32_t *follower, *path;
    const float *a_lat, *dh;
    const int32_t* n;
    const float *v_min, *v_max, *baseline_gain, *lookahead_min, *lookahead_time, *lookahead_max;
    const float *kp, *ki, *arrive_radius, *stuck_window, *stuck_progress, *reverse_time;
    const int32_t *max_recoveries, *vehicle_limits;
    /* follower state (pf_state_t) */
    float *s, *pi_integral, *window_time, *window_s, *recover_time, *recover_steer;
    int32_t *failed, *stuck_events, *teleports, *completed;
    /* last follower outputs (pf_command_t) */
    float *target_speed, *target_x, *target_y, *target_z, *cte;
    int32_t *inside, *stuck;
    /* run metrics */
    int32_t* frames;
    float *drive_time, *distance, *cte_sum;
    int32_t *inside_frames, *stuck_frames;
} ground_view_t;

static inline ground_view_t ground_view(const world_t* w)
{
    const table_t* t = &w->comps[COMP_GROUND].table;
#define GV_F(col) TABLE_COL(t, float, col)
#define GV_I(col) TABLE_COL(t, int32_t, col)
    ground_view_t g = {.agent_row = GV_I(GR_ROW),
                       .mass = GV_F(GR_MASS),
                       .wheelbase = GV_F(GR_WHEELBASE),
                       .max_steer = GV_F(GR_MAX_STEER),
                       .steer_rate = GV_F(GR_STEER_RATE),
                       .max_yaw_rate = GV_F(GR_MAX_YAW_RATE),
                       .engine_force = GV_F(GR_ENGINE_FORCE),
                       .reverse_force = GV_F(GR_REVERSE_FORCE),
                       .brake_force = GV_F(GR_BRAKE_FORCE),
                       .drag = GV_F(GR_DRAG),
                       .rolling = GV_F(GR_ROLLING),
                       .traction = GV_F(GR_TRACTION),
                       .max_speed = GV_F(GR_MAX_SPEED),
                       .max_reverse_speed = GV_F(GR_MAX_REVERSE_SPEED),
                       .radius = GV_F(GR_RADIUS),
                       .yaw = GV_F(GR_YAW),
                       .v = GV_F(GR_V),
                       .v_lat = GV_F(GR_V_LAT),
                       .steer = GV_F(GR_STEER),
                       .yaw_rate = GV_F(GR_YAW_RATE),
                       .contact = GV_I(GR_CONTACT),
                       .drive_throttle = GV_F(GR_DRIVE_THROTTLE),
                       .drive_steering = GV_F(GR_DRIVE_STEERING),
                       .throttle = GV_F(GR_THROTTLE),
                       .steering = GV_F(GR_STEERING),
                       .follower = GV_I(GR_FOLLOWER),
                       .path = GV_I(GR_PATH),
                       .a_lat = GV_F(GR_A_LAT),
                       .dh = GV_F(GR_DH),
                       .n = GV_I(GR_N),
                       .v_min = GV_F(GR_V_MIN),
                       .v_max = GV_F(GR_V_MAX),
                       .baseline_gain = GV_F(GR_BASELINE_GAIN),
                       .lookahead_min = GV_F(GR_LOOKAHEAD_MIN),
                       .lookahead_time = GV_F(GR_LOOKAHEAD_TIME),
                       .lookahead_max = GV_F(GR_LOOKAHEAD_MAX),
                       .kp = GV_F(GR_KP),
                       .ki = GV_F(GR_KI),
                       .arrive_radius = GV_F(GR_ARRIVE_RADIUS),
                       .stuck_window = GV_F(GR_STUCK_WINDOW),
                       .stuck_progress = GV_F(GR_STUCK_PROGRESS),
                       .reverse_time = GV_F(GR_REVERSE_TIME),
                       .max_recoveries = GV_I(GR_MAX_RECOVERIES),
                       .vehicle_limits = GV_I(GR_VEHICLE_LIMITS),
                       .s = GV_F(GR_S),
                       .pi_integral = GV_F(GR_PI_INTEGRAL),
                       .window_time = GV_F(GR_WINDOW_TIME),
                       .window_s = GV_F(GR_WINDOW_S),
                       .recover_time = GV_F(GR_RECOVER_TIME),
                       .recover_steer = GV_F(GR_RECOVER_STEER),
                       .failed = GV_I(GR_FAILED),
                       .stuck_events = GV_I(GR_STUCK_EVENTS),
                       .teleports = GV_I(GR_TELEPORTS),
                       .completed = GV_I(GR_COMPLETED),
                       .target_speed = GV_F(GR_TARGET_SPEED),
                       .target_x = GV_F(GR_TARGET_X),
                       .target_y = GV_F(GR_TARGET_Y),
                       .target_z = GV_F(GR_TARGET_Z),
                       .cte = GV_F(GR_CTE),
                       .inside = GV_I(GR_INSIDE),
                       .stuck = GV_I(GR_STUCK),
                       .frames = GV_I(GR_FRAMES),
                       .drive_time = GV_F(GR_DRIVE_TIME),
                       .distance = GV_F(GR_DISTANCE),
                       .cte_sum = GV_F(GR_CTE_SUM),
                       .inside_frames = GV_I(GR_INSIDE_FRAMES),
                       .stuck_frames = GV_I(GR_STUCK_FRAMES)};
#undef GV_F
#undef GV_I
    return g;
}

/* Vehicle and follower parameters of component row r. */
static inline gv_params_t ground_view_gv_params(const ground_view_t* g, int32_t r)
{
    gv_params_t p;
    memset(&p, 0, sizeof p);
    p.mass = g->mass[r];
    p.wheelbase = g->wheelbase[r];
    p.max_steer = g->max_steer[r];
    p.steer_rate = g->steer_rate[r];
    p.max_yaw_rate = g->max_yaw_rate[r];
    p.engine_force = g->engine_force[r];
    p.reverse_force = g->reverse_force[r];
    p.brake_force = g->brake_force[r];
    p.drag = g->drag[r];
    p.rolling = g->rolling[r];
    p.traction = g->traction[r];
    p.max_speed = g->max_speed[r];
    p.max_reverse_speed = g->max_reverse_speed[r];
    p.radius = g->radius[r];
    return p;
}

static inline pf_params_t ground_view_pf_params(const ground_view_t* g, int32_t r)
{
    pf_kind_t kind = g->follower[r] == SHOAL_FOLLOWER_BASELINE ? PF_BASELINE : PF_PROPOSED;
    pf_params_t p = pf_params_default(kind);
    p.a_lat = g->a_lat[r];
    p.dh = g->dh[r];
    p.n = g->n[r];
    p.v_min = g->v_min[r];
    p.v_max = g->v_max[r];
    p.baseline_gain = g->baseline_gain[r];
    p.lookahead_min = g->lookahead_min[r];
    p.lookahead_time = g->lookahead_time[r];
    p.lookahead_max = g->lookahead_max[r];
    p.kp = g->kp[r];
    p.ki = g->ki[r];
    p.arrive_radius = g->arrive_radius[r];
    p.stuck_window = g->stuck_window[r];
    p.stuck_progress = g->stuck_progress[r];
    p.reverse_time = g->reverse_time[r];
    p.max_recoveries = g->max_recoveries[r];
    p.vehicle_limits = g->vehicle_limits[r];
    return p;
}

/* A ground vehicle's body, for modules that keep bodies apart (the contact
 * pass): the vehicle's own radius and mass (shoal_ground_vehicle_t), which
 * the agent's columns do not hold (they keep vehicle.radius and .mass as
 * defined, state that the hash and snapshots carry), and its largest speed
 * either way. 0, with nothing written, when the agent of `slot` is no
 * ground vehicle. */
static inline int ground_body(const world_t* w, uint32_t slot, float* radius, float* mass, float* max_speed)
{
    const component_t* c = &w->comps[COMP_GROUND];
    int32_t r = c->table.count == 0 ? -1 : component_row(c, slot);
    if (r < 0) return 0;
    *radius = TABLE_COL(&c->table, float, GR_RADIUS)[r];
    *mass = TABLE_COL(&c->table, float, GR_MASS)[r];
    *max_speed = fmaxf(TABLE_COL(&c->table, float, GR_MAX_SPEED)[r],
                       TABLE_COL(&c->table, float, GR_MAX_REVERSE_SPEED)[r]);
    return 1;
}

/* Whether the agent of `slot` is a ground vehicle (which keeps its model's
 * own velocity state). */
static inline int ground_is_vehicle(const world_t* w, uint32_t slot)
{
    const component_t* c = &w->comps[COMP_GROUND];
    return c->table.count > 0 && component_row(c, slot) >= 0;
}

/* A ground vehicle on a navmesh path (the NAVMESH weight; its follower
 * takes the path the navmesh module plans for it, ground.c): the navmesh
 * row of ground row r's agent, or -1. */
int32_t ground_navmesh_row(const world_t* w, int32_t r);
/* Its path as the follower's, over points and s (room for
 * NMD_ROUTE_POINTS each); 0 when it has none to follow (no plan yet, or
 * a single point: at its goal). */
int ground_navmesh_path(const world_t* w, int32_t nr, pf_path_t* out, vec3* points, float* s);

/* The largest body radius of any ground vehicle (0: none). */
float ground_radius_max(const world_t* w);

/* Paths and terrain to and from the snapshot section GRND
 * (ground_snapshot.c; the hooks of module.h). */
void ground_save(const world_t* w, byte_writer_t* wr);
int ground_load(world_t* w, byte_reader_t* rd);

/* Paths and terrain into the state hash (nothing when there are none). */
uint64_t ground_hash(const world_t* w, uint64_t h, uint64_t (*absorb)(uint64_t, uint64_t));

int64_t path_follow_run(world_t* w, float dt, void* ctx);
int64_t ground_vehicle_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_GROUND_H */
