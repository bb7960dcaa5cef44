/* The follow module: leader following (follow.c). */
#ifndef SHOAL_MODULES_FOLLOW_H
#define SHOAL_MODULES_FOLLOW_H

#include "modules/registry.h"

/* follow: the leader as two uint32, its global id + 1 as pursuit's target */
enum {
    FO_SLOT = 0,
    FO_ROW,
    FO_LEADER_ID_LO,
    FO_LEADER_ID_HI,
    FO_WEIGHT,
    FO_BEHIND,
    FO_BEHIND_PER_SPEED,
    FO_ARRIVE_GAIN,
    FO_COUNT_
};

int64_t follow_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_MODULES_FOLLOW_H */
