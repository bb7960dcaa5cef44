/* `shoal bench planner` (bench/bench_planner.c), dispatched from
 * `shoal bench` (bench/bench_flock.c): argv[0] is "planner", the options
 * follow. Its scene is shared with `shoal bench scaling`
 * (bench/bench_scaling.c). */
#ifndef SHOAL_BENCH_PLANNER_H
#define SHOAL_BENCH_PLANNER_H

#include <stdint.h>

#include "shoal/shoal.h"

/* `shoal bench planner`'s defaults: agents, simulated seconds, and the
 * step (60 Hz). */
#define BENCH_PLANNER_AGENTS 10000
#define BENCH_PLANNER_SECONDS 10.0
#define BENCH_PLANNER_DT (1.0f / 60.0f)

int bench_planner(int argc, char** argv);

/* The asteroid field with `shoal bench planner`'s other defaults (seed 1,
 * 64 expansions per search): `agents` planner agents on `threads` threads
 * (0: the library's default). Returns CLI_EXIT_OK with the world in *out,
 * or prints the error after "command: " and returns CLI_EXIT_FAILURE. */
int bench_planner_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out);

#endif /* SHOAL_BENCH_PLANNER_H */
