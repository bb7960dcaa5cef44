/* Scenario files: JSON descriptions of a world and groups of agents.
 * Every key, unit and default is documented in docs/scenarios.md. */
#ifndef SHOAL_SCENARIO_H
#define SHOAL_SCENARIO_H

#include "shoal/shoal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shoal_scenario_t shoal_scenario_t;

/* Parse a scenario. Errors name the file, line and column for malformed JSON
 * and the JSON path (e.g. groups[1].vehicle.max_speed) for an unknown key, a
 * wrong type or an invalid value. On failure *out is NULL. */
SHOAL_API shoal_status_t shoal_scenario_load_file(const char* path, shoal_scenario_t** out,
                                                  shoal_error_t* err);
/* `source_name` is used in error messages only (may be NULL). */
SHOAL_API shoal_status_t shoal_scenario_load_string(const char* json, size_t length, const char* source_name,
                                                    shoal_scenario_t** out, shoal_error_t* err);
SHOAL_API void shoal_scenario_destroy(shoal_scenario_t* scenario);

SHOAL_API const char* shoal_scenario_name(const shoal_scenario_t* scenario);
SHOAL_API int32_t shoal_scenario_steps(const shoal_scenario_t* scenario);
SHOAL_API float shoal_scenario_dt(const shoal_scenario_t* scenario);
SHOAL_API int32_t shoal_scenario_agent_count(const shoal_scenario_t* scenario);

/* The seed (the file's "seed", default 1, or the last set_seed): it seeds
 * the world definition and the placement of agents. */
SHOAL_API uint64_t shoal_scenario_seed(const shoal_scenario_t* scenario);
/* Replace the seed, as if the file said "seed": seed; every value of 64 bits
 * is one. The world definitions and populations made afterwards use it. */
SHOAL_API void shoal_scenario_set_seed(shoal_scenario_t* scenario, uint64_t seed);

/* Groups, in file order; an agent's `group` label is its group's index. */
SHOAL_API int32_t shoal_scenario_group_count(const shoal_scenario_t* scenario);
/* The group's name, or NULL when index is out of range. Owned by the scenario. */
SHOAL_API const char* shoal_scenario_group_name(const shoal_scenario_t* scenario, int32_t index);
SHOAL_API int32_t shoal_scenario_group_size(const shoal_scenario_t* scenario, int32_t index);

/* The scenario's "collect" (docs/scenarios.md): the figures `shoal run
 * --collect FILE` samples as the run goes, written as CSV, a row a sample
 * (the step, time and agents, then each figure). */
#define SHOAL_SCENARIO_MAX_MEANS 16
typedef struct shoal_scenario_collect_t {
    int32_t given;      /* 1: the file has "collect"; 0: these are the defaults */
    int32_t every;      /* steps between samples, >= 1 (and one before the first step and after the
                         * last). Default 1 */
    int32_t mean_count; /* 0..SHOAL_SCENARIO_MAX_MEANS */
    const char* means[SHOAL_SCENARIO_MAX_MEANS]; /* columns averaged over the agents ("position.x", ...;
                                                  * "speed": the velocity's length). Default {"speed"} */
    int32_t crowd; /* the crowd statistics (shoal_world_crowd_stats). Default 0 */
    int32_t lines; /* each measurement line's crossings so far. Default 0 */
    int32_t areas; /* each measurement area's last sample: count and density. Default 0 */
} shoal_scenario_collect_t;

/* The scenario's "collect", or the defaults when it has none (given 0).
 * The strings are the library's, valid for the program's life. */
SHOAL_API shoal_scenario_collect_t shoal_scenario_collect(const shoal_scenario_t* scenario);

/* A world definition with the scenario's dimensions, seed, threads and
 * "world" settings (wrap, bounds, cell_size, reorder_interval); the rest at
 * defaults. */
SHOAL_API shoal_world_def_t shoal_scenario_world_def(const shoal_scenario_t* scenario);

/* Add the scenario's obstacles, then every agent, group by group in file
 * order, to `world` (which must have the scenario's dimensions; create it
 * from shoal_scenario_world_def). Placement is random but fixed by the
 * scenario's seed. On failure the obstacles and agents added so far are
 * removed again. */
SHOAL_API shoal_status_t shoal_scenario_populate(const shoal_scenario_t* scenario, shoal_world_t* world);

/* Add only the scenario's measurement lines and areas (its "measure", which
 * populate adds too) to `world`: to measure a world loaded from a snapshot,
 * which holds none (shoal/measure.h). All or nothing: on failure the world
 * is as it was, and its last error says why. */
SHOAL_API shoal_status_t shoal_scenario_add_measures(const shoal_scenario_t* scenario, shoal_world_t* world);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_SCENARIO_H */
