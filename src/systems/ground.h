/* Ground vehicles as agents of the world (issue 5): the world-level data
 * they use (paths, terrain, a cylinder copy of the obstacles) and the glue
 * between the public definitions and the COMP_GROUND component.
 *
 * ground_world.c owns the data, the public path/terrain/driving API and the
 * component's columns; ground.c owns the three systems (path_follow,
 * ground_vehicle) and the pose a vehicle gives its agent. */
#ifndef SHOAL_GROUND_H
#define SHOAL_GROUND_H

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
 * angular velocity. */
void ground_write_agent_pose(world_t* w, const terrain_t* terrain, int32_t row, float x, float y,
                             float yaw, float v, float v_lat, float yaw_rate);

/* Vehicle and follower parameters of component row r. */
gv_params_t ground_gv_params(const world_t* w, int32_t r);
pf_params_t ground_pf_params(const world_t* w, int32_t r);

/* Paths and terrain to and from the snapshot section GRND
 * (ground_snapshot.c; the hooks of module.h). */
void ground_save(const world_t* w, byte_writer_t* wr);
int ground_load(world_t* w, byte_reader_t* rd);

/* Paths and terrain into the state hash (nothing when there are none). */
uint64_t ground_hash(const world_t* w, uint64_t h, uint64_t (*absorb)(uint64_t, uint64_t));

#endif /* SHOAL_GROUND_H */
