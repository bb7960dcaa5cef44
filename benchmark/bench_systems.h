/* Per-system costs as `shoal bench flock`, `shoal bench crowd` and
 * `shoal bench scaling` report them: the systems that ran, in step order,
 * with ms per step and ns per agent (over `agents`), as a JSON array or a
 * text table. */
#ifndef SHOAL_BENCH_SYSTEMS_H
#define SHOAL_BENCH_SYSTEMS_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "shoal/shoal.h"

/* One system's figures since the world's stats were last reset. */
typedef struct bench_system_t {
    const char* name;   /* owned by the world */
    const char* stage;  /* shoal_stage_name */
    double ms_per_step; /* wall ms per call */
} bench_system_t;

/* System i (0 .. shoal_world_system_count - 1) into *out; 0 when it has
 * not run (nothing to report), 1 otherwise. */
static inline int bench_system_read(const shoal_world_t* w, int32_t i, bench_system_t* out)
{
    shoal_system_stats_t st;
    shoal_world_system_stats(w, i, &st);
    if (st.calls == 0) return 0;
    out->name = st.name;
    out->stage = shoal_stage_name(st.stage);
    out->ms_per_step = (double)st.ns_total * 1e-6 / (double)st.calls;
    return 1;
}

/* root.systems = [{name, stage, ms_per_step, ns_per_agent}]. */
static inline void bench_systems_json(cJSON* root, const shoal_world_t* w, int64_t agents)
{
    cJSON* systems = cJSON_AddArrayToObject(root, "systems");
    bench_system_t sys;
    for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
        if (!bench_system_read(w, i, &sys)) continue;
        cJSON* s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", sys.name);
        cJSON_AddStringToObject(s, "stage", sys.stage);
        cJSON_AddNumberToObject(s, "ms_per_step", sys.ms_per_step);
        cJSON_AddNumberToObject(s, "ns_per_agent", sys.ms_per_step * 1e6 / (double)agents);
        cJSON_AddItemToArray(systems, s);
    }
}

/* The same as a table on stdout. */
static inline void bench_systems_table(const shoal_world_t* w, int64_t agents)
{
    printf("%-14s %-10s %10s %10s\n", "system", "stage", "ms/step", "ns/agent");
    bench_system_t sys;
    for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
        if (!bench_system_read(w, i, &sys)) continue;
        printf("%-14s %-10s %10.3f %10.2f\n", sys.name, sys.stage, sys.ms_per_step,
               sys.ms_per_step * 1e6 / (double)agents);
    }
}

#endif /* SHOAL_BENCH_SYSTEMS_H */
