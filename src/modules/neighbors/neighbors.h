/* The neighbors module: separation, alignment and cohesion over the grid (neighbors.c). */
#ifndef SHOAL_MODULES_NEIGHBORS_H
#define SHOAL_MODULES_NEIGHBORS_H

#include "modules/registry.h"

/* neighbors: all float but NB_MAX (int32) */
enum {
    NB_SLOT = 0, NB_ROW,
    NB_RADIUS, NB_FOV, NB_FOV_COS, NB_MAX,
    NB_K_SEP, NB_K_ALI, NB_K_COH,
    NB_W_SEP, NB_W_ALI, NB_W_COH,
    NB_COUNT_
};

int64_t neighbors_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_MODULES_NEIGHBORS_H */
