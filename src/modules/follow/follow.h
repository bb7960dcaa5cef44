/* The follow module: leader following (follow.c). */
#ifndef SHOAL_MODULES_FOLLOW_H
#define SHOAL_MODULES_FOLLOW_H

#include "modules/registry.h"

/* follow: the leader handle as two uint32, like pursuit */
enum {
    FO_SLOT = 0,
    FO_ROW,
    FO_LEADER_INDEX1,
    FO_LEADER_TAG,
    FO_WEIGHT,
    FO_BEHIND,
    FO_BEHIND_PER_SPEED,
    FO_ARRIVE_GAIN,
    FO_COUNT_
};

int64_t follow_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_MODULES_FOLLOW_H */
