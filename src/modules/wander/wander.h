/* The wander module: a smoothed random walk per agent (wander.c). */
#ifndef SHOAL_MODULES_WANDER_H
#define SHOAL_MODULES_WANDER_H

#include "modules/registry.h"

/* wander: weight and parameters, then the wander velocity (state) */
enum {
    WD_SLOT = 0,
    WD_ROW,
    WD_KEY, /* uint32: the slot's generation when the walk began; the draws
             * were keyed by it before global ids, which key them now (the
             * column stays for the snapshot format and the hash) */
    WD_WEIGHT,
    WD_CRUISE,
    WD_STRENGTH,
    WD_NOISE,
    WD_VX,
    WD_VY,
    WD_VZ,
    WD_COUNT_
};

int64_t wander_run(world_t* w, float dt, void* ctx);
/* Its pass, for the scheduler to fuse (system_def_t.rows). */
rows_fn* wander_rows(world_t* w, float dt, void* ctx);
/* Whether the wander rows are the agent rows this step (system_def_t.covers). */
int wander_covers(world_t* w);

#endif /* SHOAL_MODULES_WANDER_H */
