/* The neighbors module: separation, alignment and cohesion over the grid (neighbors.c). */
#ifndef SHOAL_MODULES_NEIGHBORS_H
#define SHOAL_MODULES_NEIGHBORS_H

#include "modules/registry.h"

/* neighbors: all float but NB_MAX (int32) */
enum {
    NB_SLOT = 0,
    NB_ROW,
    NB_RADIUS,
    NB_FOV,
    NB_FOV_COS,
    NB_MAX,
    NB_K_SEP,
    NB_K_ALI,
    NB_K_COH,
    NB_W_SEP,
    NB_W_ALI,
    NB_W_COH,
    NB_COUNT_
};

/* The module's data: its pass's per-worker packs, sized for each step's
 * grid before the step changes anything (the grid's `sized` hook), and
 * counters of the last pass for benchmarks (never hashed or saved). */
typedef struct neighbors_world_t {
    float* mem; /* the per-worker packs */
    size_t mem_floats;
    size_t per;      /* floats per pack array this step (0: not sized) */
    int32_t largest; /* agents in the largest bucket this step */
    /* candidate pairs examined, neighbors found, agents processed */
    int64_t pair_tests;
    int64_t neighbor_sum;
    int64_t kernel_agents;
} neighbors_world_t;

static inline neighbors_world_t* neighbors_data(const world_t* w)
{
    return (neighbors_world_t*)w->module_data[MOD_NEIGHBORS];
}

extern const module_t neighbors_module;

int64_t neighbors_run(world_t* w, float dt, void* ctx);
/* The module's part of a fresh definition (module_t.defaults). */
void neighbors_defaults(shoal_agent_def_t* d);

/* Run the neighbor pair kernel for `iterations` agents (two per pass, as
 * the flock step runs them) over one pack of `candidates` agents that stays
 * in cache, with no hashing or packing: the ceiling the flock step is
 * measured against. Returns the pair tests done
 * and sets *seconds to the time taken. */
int64_t neighbors_bench_kernel(int dims, int32_t candidates, int64_t iterations, double* seconds);

#endif /* SHOAL_MODULES_NEIGHBORS_H */
