/* The scene of `shoal bench crowd` (benchmark/bench_crowd.c), shared with
 * `shoal bench scaling` (benchmark/bench_scaling.c). */
#ifndef SHOAL_BENCH_CROWD_H
#define SHOAL_BENCH_CROWD_H

#include <stdint.h>

#include "shoal/shoal.h"

/* `shoal bench crowd`'s defaults: agents, timed steps, untimed steps
 * first, and the step (s). */
#define BENCH_CROWD_AGENTS 100000
#define BENCH_CROWD_STEPS 100
#define BENCH_CROWD_WARMUP 10
#define BENCH_CROWD_DT 0.25f

/* The grid scene with `shoal bench crowd`'s other defaults (2D, the
 * "rvo2" preset, the library's seed): `agents` crowd agents on `threads`
 * threads (0: the library's default). Returns CLI_EXIT_OK with the world in
 * *out, or prints the error after "command: " and returns
 * CLI_EXIT_FAILURE. */
int bench_crowd_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out);

#endif /* SHOAL_BENCH_CROWD_H */
