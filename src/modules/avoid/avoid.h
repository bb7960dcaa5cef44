/* The avoid module: obstacle avoidance (avoid.c). */
#ifndef SHOAL_MODULES_AVOID_H
#define SHOAL_MODULES_AVOID_H

#include "modules/registry.h"

/* avoid: AV_TANGENTIAL is uint32 */
enum { AV_SLOT = 0, AV_ROW, AV_WEIGHT, AV_LOOKAHEAD, AV_GAIN, AV_TANGENTIAL, AV_COUNT_ };

int64_t avoid_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_MODULES_AVOID_H */
