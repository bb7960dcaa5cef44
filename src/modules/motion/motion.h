/* Motion: the systems every agent goes through (no module of its own):
 * steer writes the desired velocity from seek, flee, arrive and the other
 * per-agent behaviors; control turns it into force and torque; integrate
 * advances the pose under the vehicle limits. */
#ifndef SHOAL_MODULES_MOTION_H
#define SHOAL_MODULES_MOTION_H

#include "ecs/world.h"

int64_t steer_run(world_t* w, float dt, void* ctx);
int64_t control_run(world_t* w, float dt, void* ctx);
int64_t integrate_run(world_t* w, float dt, void* ctx);
/* Their passes, for the scheduler to fuse (system_def_t.rows). */
rows_fn* control_rows(world_t* w, float dt, void* ctx);
rows_fn* integrate_rows(world_t* w, float dt, void* ctx);

#endif /* SHOAL_MODULES_MOTION_H */
