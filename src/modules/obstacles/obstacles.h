/* The world's obstacles: spheres (circles in 2D) that avoid, ground
 * vehicles and planner agents steer round, some of them moving at a
 * constant velocity (obstacles.c owns them; they are module-wide data of
 * the obstacles module). */
#ifndef SHOAL_SYSTEMS_OBSTACLES_H
#define SHOAL_SYSTEMS_OBSTACLES_H

#include "modules/registry.h"

/* center xyz, radius; radius < 0 marks a free id. Velocities (m/s, zero
 * for static ones and free ids) in a parallel array of the same capacity;
 * the obstacle_move system moves the moving ones every step. */
typedef struct obstacle_set_t {
    float (*obstacles)[4];
    float (*obstacle_velocities)[3];
    int32_t obstacle_high;
    int32_t obstacle_capacity;
    int32_t obstacle_count;
    int32_t moving_obstacles;
    uint32_t obstacle_version; /* changes with every add and remove */
    /* Free ids, so that an add finds the lowest free id without scanning
     * every obstacle (that made loading n obstacles O(n^2)): bit i of
     * free_bits is set when id i (< obstacle_high) is free, bit j of
     * free_summary when free_bits[j] is nonzero; no summary word below
     * free_hint is nonzero. Built on demand by obstacles.c from the radii
     * (free_valid 0: not built, or stale after a snapshot load, a truncate
     * or growth), so code that writes the arrays directly needs no care. */
    uint64_t* free_bits;
    uint64_t* free_summary;
    int32_t free_bit_words;
    int32_t free_summary_words;
    int32_t free_hint;
    int32_t free_valid;
} obstacle_set_t;

static inline obstacle_set_t* obstacles_of(const world_t* w)
{
    return (obstacle_set_t*)w->module_data[MOD_OBSTACLES];
}

extern const module_t obstacles_module;

int64_t obstacle_move_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_SYSTEMS_OBSTACLES_H */
