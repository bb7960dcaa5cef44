/* The scenes of `shoal bench scaling` (benchmark/bench_scaling.c), which
 * `shoal bench split` runs too. */
#ifndef SHOAL_BENCH_SCALING_H
#define SHOAL_BENCH_SCALING_H

#include <stdint.h>

#include "shoal/shoal.h"

/* The scenes a sweep (and `shoal bench split`) runs: those of `shoal bench
 * flock` (2D and 3D), `crowd` (grid) and `planner`, with their defaults. */
typedef struct bench_scene {
    const char* name;
    int64_t agents, steps, warmup; /* the scene's bench defaults */
    float dt;
    int realtime; /* 1: the rate is the real-time factor, else agent-steps/s */
    int (*build)(const char* command, int64_t agents, int32_t threads, shoal_world_t** out);
} bench_scene_t;

/* The scene called `name` (NULL: the first, flock), or NULL when none is. */
const bench_scene_t* bench_scene_find(const char* name);
#define BENCH_SCENE_NAMES "flock, flock3d, crowd or planner"

#endif /* SHOAL_BENCH_SCALING_H */
