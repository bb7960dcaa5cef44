/* The scene of `shoal bench planner` (benchmark/bench_planner.c), shared
 * with `shoal bench scaling` (benchmark/bench_scaling.c). */
#ifndef SHOAL_BENCH_PLANNER_H
#define SHOAL_BENCH_PLANNER_H

#include <stdint.h>

#include "shoal/shoal.h"

/* `shoal bench planner`'s defaults: agents, simulated seconds, and the
 * step (60 Hz). */
#define BENCH_PLANNER_AGENTS 10000
#define BENCH_PLANNER_SECONDS 10.0
#define BENCH_PLANNER_DT (1.0f / 60.0f)

/* The asteroid field with `shoal bench planner`'s other defaults (seed 1,
 * 64 expansions per search): `agents` planner agents on `threads` threads
 * (0: the library's default). Returns CLI_EXIT_OK with the world in *out,
 * or prints the error after "command: " and returns CLI_EXIT_FAILURE. */
int bench_planner_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out);

#endif /* SHOAL_BENCH_PLANNER_H */
