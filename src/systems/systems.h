/* The built-in systems, in step order (DESIGN.md "The step"):
 *
 * | stage     | system    | reads                                   | writes           |
 * |-----------|-----------|-----------------------------------------|------------------|
 * | decide    | steer     | pos, vel, heading, limits, behaviors     | desired velocity |
 * | control   | control   | vel, heading/quat, omega, desired, gains | force, torque    |
 * | integrate | integrate | force, torque, limits                    | pos, vel, heading/quat, omega |
 *
 * Each is data-parallel over agents through par_for and writes only its own
 * output columns, so any split of the agents gives the same result. */
#ifndef SHOAL_SYSTEMS_H
#define SHOAL_SYSTEMS_H

#include "ecs/world.h"

/* Below this speed command an agent holds its heading instead of steering
 * toward the (numerically meaningless) direction of a tiny vector. */
#define STEER_HOLD_SPEED 1e-4f

int64_t steer_run(world_t* w, float dt, void* ctx);
int64_t control_run(world_t* w, float dt, void* ctx);
int64_t integrate_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_SYSTEMS_H */
