/* The pursuit module: pursue and evade a target agent (pursuit.c). */
#ifndef SHOAL_MODULES_PURSUIT_H
#define SHOAL_MODULES_PURSUIT_H

#include "modules/registry.h"

/* pursuit: the target as two uint32, the halves of its global id + 1 (0: none) */
enum {
    PU_SLOT = 0,
    PU_ROW,
    PU_TARGET_ID_LO,
    PU_TARGET_ID_HI,
    PU_W_PURSUE,
    PU_W_EVADE,
    PU_MAX_PREDICTION,
    PU_COUNT_
};

int64_t pursuit_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_MODULES_PURSUIT_H */
