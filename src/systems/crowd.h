/* Crowd agents (crowd.c): the module's world data and its systems. */
#ifndef SHOAL_SYSTEMS_CROWD_H
#define SHOAL_SYSTEMS_CROWD_H

#include "systems/components.h"

/* The most neighbors a crowd agent takes into account (crowd.max_neighbors). */
#define CROWD_MAX_NEIGHBORS 64

/* Counters of the orca system (not state: never hashed or saved). */
typedef struct crowd_world_t {
    int64_t relaxed_last;  /* agents whose constraints had no common velocity, last step */
    int64_t relaxed_total; /* the same, summed over steps */
} crowd_world_t;

static inline crowd_world_t* crowd_data(const world_t* w) { return (crowd_world_t*)w->module_data[MOD_CROWD]; }

extern const module_t crowd_module;

#endif /* SHOAL_SYSTEMS_CROWD_H */
