/* What `shoal run` reports of a run, shared with `shoal ensemble`, whose
 * runs report the same (cli/cmd_run.c). */
#ifndef SHOAL_CLI_RUN_RESULT_H
#define SHOAL_CLI_RUN_RESULT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "shoal/scenario.h"
#include "shoal/shoal.h"

typedef struct run_result_t {
    int64_t steps;        /* steps actually run */
    double seconds;       /* wall time of the stepping loop */
    uint64_t agent_steps; /* sum over steps of the agents alive in that step */
    int interrupted_by;   /* SIGINT or SIGTERM ended the run early; 0: it ran its steps */
} run_result_t;

/* `shoal run --json`'s object for a world after its run (NULL: out of
 * memory): the scenario, seed, agents, steps, state_hash, timings, the
 * crowd, nav, navmesh and measurement figures, the systems; and
 * "interrupted": "SIGINT" or "SIGTERM" when a signal ended the run early. */
cJSON* run_result_json(const shoal_scenario_t* scenario, const shoal_world_t* world, const char* path,
                       int32_t agents, float dt, const run_result_t* result);

/* The scenario file `given` names (NULL: the default scenario), looked for
 * as given, then in the scenarios shipped with shoal; *looked is 1 when the
 * shipped ones were searched. */
const char* scenario_path(const char* given, char* found, size_t size, int* looked);

#endif /* SHOAL_CLI_RUN_RESULT_H */
