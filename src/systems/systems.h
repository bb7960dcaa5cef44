/* The built-in systems, in step order (DESIGN.md "The step"):
 *
 * | stage     | system    | reads                                   | writes           |
 * |-----------|-----------|-----------------------------------------|------------------|
 * | sense     | spatial_hash | pos, vel                              | grid (sorted copies), agent order |
 * | decide    | steer     | pos, vel, heading, limits, behaviors     | desired velocity (=) |
 * | decide    | neighbors | grid, heading, neighbors component       | desired velocity (+=) |
 * | decide    | wander    | heading, wander component (its state)    | desired (+=), wander velocity |
 * | decide    | pursuit   | pos/vel of self and target, pursuit comp | desired velocity (+=) |
 * | decide    | follow    | pos/vel of self and leader, follow comp  | desired velocity (+=) |
 * | decide    | avoid     | pos, vel, radius, obstacles, avoid comp  | desired velocity (+=) |
 * | decide    | dseek     | pos, vel, heading/quat, routes, dseek comp | desired (+=), route index |
 * | control   | control   | vel, heading/quat, omega, desired, gains | force, torque    |
 * | integrate | integrate | force, torque, limits                    | pos, vel, heading/quat, omega |
 * | integrate | wrap      | pos (torus worlds only)                  | pos                |
 *
 * Each is data-parallel over agents through par_for and writes only its own
 * output columns, so any split of the agents gives the same result. steer
 * sets the desired velocity; the decide systems after it each add their
 * weighted term to it, one system after another (never concurrently). */
#ifndef SHOAL_SYSTEMS_H
#define SHOAL_SYSTEMS_H

#include "ecs/world.h"

/* Below this speed command an agent holds its heading instead of steering
 * toward the (numerically meaningless) direction of a tiny vector. */
#define STEER_HOLD_SPEED 1e-4f

int64_t spatial_hash_run(world_t* w, float dt, void* ctx);
int64_t steer_run(world_t* w, float dt, void* ctx);
int64_t neighbors_run(world_t* w, float dt, void* ctx);
int64_t wander_run(world_t* w, float dt, void* ctx);
int64_t pursuit_run(world_t* w, float dt, void* ctx);
int64_t follow_run(world_t* w, float dt, void* ctx);
int64_t avoid_run(world_t* w, float dt, void* ctx);
int64_t dseek_run(world_t* w, float dt, void* ctx);
int64_t control_run(world_t* w, float dt, void* ctx);
int64_t integrate_run(world_t* w, float dt, void* ctx);
int64_t wrap_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_SYSTEMS_H */
