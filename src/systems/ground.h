/* Ground vehicles as agents of the world (issue 5): the world-level data
 * they use (paths, terrain, a cylinder copy of the obstacles) and the glue
 * between the public definitions and the COMP_GROUND component.
 *
 * ground_world.c owns the data, the public path/terrain/driving API and the
 * component's columns; ground.c owns the three systems (path_follow,
 * ground_vehicle) and the pose a vehicle gives its agent. */
#ifndef SHOAL_GROUND_H
#define SHOAL_GROUND_H

#include <string.h>

#include "ecs/world.h"
#include "systems/components.h"
#include "simd/vec.h"
#include "systems/ground_vehicle.h"
#include "systems/path_follow.h"

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

/* Write the component row r of an agent from its definition. A fresh row
 * also takes the vehicle's motion state from the definition's pose; a new
 * path (or a fresh row) restarts the run (ground_restart_run). */
void ground_write_component(world_t* w, int32_t r, const shoal_agent_def_t* d, int fresh);
void ground_read_component(const world_t* w, int32_t r, shoal_ground_t* out);
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
void ground_write_agent_pose(const agent_view_t* a, int three, const terrain_t* terrain, int32_t row,
                             float x, float y, float yaw, float v, float v_lat, float yaw_rate);

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
#define F(col) TABLE_COL(t, float, col)
#define I(col) TABLE_COL(t, int32_t, col)
    ground_view_t g = {
        .agent_row = I(GR_ROW),
        .mass = F(GR_MASS), .wheelbase = F(GR_WHEELBASE), .max_steer = F(GR_MAX_STEER),
        .steer_rate = F(GR_STEER_RATE), .max_yaw_rate = F(GR_MAX_YAW_RATE),
        .engine_force = F(GR_ENGINE_FORCE), .reverse_force = F(GR_REVERSE_FORCE),
        .brake_force = F(GR_BRAKE_FORCE), .drag = F(GR_DRAG), .rolling = F(GR_ROLLING),
        .traction = F(GR_TRACTION), .max_speed = F(GR_MAX_SPEED),
        .max_reverse_speed = F(GR_MAX_REVERSE_SPEED), .radius = F(GR_RADIUS),
        .yaw = F(GR_YAW), .v = F(GR_V), .v_lat = F(GR_V_LAT), .steer = F(GR_STEER),
        .yaw_rate = F(GR_YAW_RATE), .contact = I(GR_CONTACT),
        .drive_throttle = F(GR_DRIVE_THROTTLE), .drive_steering = F(GR_DRIVE_STEERING),
        .throttle = F(GR_THROTTLE), .steering = F(GR_STEERING),
        .follower = I(GR_FOLLOWER), .path = I(GR_PATH), .a_lat = F(GR_A_LAT), .dh = F(GR_DH),
        .n = I(GR_N), .v_min = F(GR_V_MIN), .v_max = F(GR_V_MAX),
        .baseline_gain = F(GR_BASELINE_GAIN), .lookahead_min = F(GR_LOOKAHEAD_MIN),
        .lookahead_time = F(GR_LOOKAHEAD_TIME), .lookahead_max = F(GR_LOOKAHEAD_MAX),
        .kp = F(GR_KP), .ki = F(GR_KI), .arrive_radius = F(GR_ARRIVE_RADIUS),
        .stuck_window = F(GR_STUCK_WINDOW), .stuck_progress = F(GR_STUCK_PROGRESS),
        .reverse_time = F(GR_REVERSE_TIME), .max_recoveries = I(GR_MAX_RECOVERIES),
        .vehicle_limits = I(GR_VEHICLE_LIMITS),
        .s = F(GR_S), .pi_integral = F(GR_PI_INTEGRAL), .window_time = F(GR_WINDOW_TIME),
        .window_s = F(GR_WINDOW_S), .recover_time = F(GR_RECOVER_TIME),
        .recover_steer = F(GR_RECOVER_STEER), .failed = I(GR_FAILED),
        .stuck_events = I(GR_STUCK_EVENTS), .teleports = I(GR_TELEPORTS),
        .completed = I(GR_COMPLETED),
        .target_speed = F(GR_TARGET_SPEED), .target_x = F(GR_TARGET_X), .target_y = F(GR_TARGET_Y),
        .target_z = F(GR_TARGET_Z), .cte = F(GR_CTE), .inside = I(GR_INSIDE), .stuck = I(GR_STUCK),
        .frames = I(GR_FRAMES), .drive_time = F(GR_DRIVE_TIME), .distance = F(GR_DISTANCE),
        .cte_sum = F(GR_CTE_SUM), .inside_frames = I(GR_INSIDE_FRAMES),
        .stuck_frames = I(GR_STUCK_FRAMES)};
#undef F
#undef I
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

/* Paths and terrain to and from the snapshot section GRND
 * (ground_snapshot.c; the hooks of module.h). */
void ground_save(const world_t* w, byte_writer_t* wr);
int ground_load(world_t* w, byte_reader_t* rd);

/* Paths and terrain into the state hash (nothing when there are none). */
uint64_t ground_hash(const world_t* w, uint64_t h, uint64_t (*absorb)(uint64_t, uint64_t));

#endif /* SHOAL_GROUND_H */
