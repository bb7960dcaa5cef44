/* The scene of `shoal bench flock` (benchmark/bench_flock.c), for the
 * benchmarks that reuse it (`shoal bench scaling`, benchmark/bench_scaling.c). */
#ifndef SHOAL_BENCH_FLOCK_H
#define SHOAL_BENCH_FLOCK_H

#include <stdint.h>

#include "shoal/shoal.h"

/* `shoal bench flock`'s defaults: agents, timed steps, untimed steps first. */
#define BENCH_FLOCK_AGENTS 100000
#define BENCH_FLOCK_STEPS 100
#define BENCH_FLOCK_WARMUP 10
#define BENCH_FLOCK_DT (1.0f / 60.0f)

/* The flock with `shoal bench flock`'s other defaults (2D, K = 20, R = 2 m,
 * storage reordered every 32 steps, one parameter set): `agents` boids on
 * `threads` threads (0: the library's default). Returns CLI_EXIT_OK with
 * the world in *out, or prints the error after "command: " and returns
 * CLI_EXIT_FAILURE. */
int bench_flock_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out);
/* The same in 3D (`bench flock --dim 3`). */
int bench_flock3d_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out);

#endif /* SHOAL_BENCH_FLOCK_H */
