/* Per-system costs as `shoal bench flock` and `shoal bench crowd` report
 * them: the systems that ran, in step order, with ms per step and ns per
 * agent (over `agents`), as a JSON array or a text table. */
#ifndef SHOAL_BENCH_SYSTEMS_H
#define SHOAL_BENCH_SYSTEMS_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "shoal/shoal.h"

/* root.systems = [{name, stage, ms_per_step, ns_per_agent}]. */
static inline void bench_systems_json(cJSON* root, const shoal_world_t* w, int64_t agents)
{
    cJSON* systems = cJSON_AddArrayToObject(root, "systems");
    for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
        shoal_system_stats_t st;
        shoal_world_system_stats(w, i, &st);
        if (st.calls == 0) continue;
        cJSON* s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", st.name);
        cJSON_AddStringToObject(s, "stage", shoal_stage_name(st.stage));
        cJSON_AddNumberToObject(s, "ms_per_step", (double)st.ns_total * 1e-6 / (double)st.calls);
        cJSON_AddNumberToObject(s, "ns_per_agent", (double)st.ns_total / (double)st.calls / (double)agents);
        cJSON_AddItemToArray(systems, s);
    }
}

/* The same as a table on stdout. */
static inline void bench_systems_table(const shoal_world_t* w, int64_t agents)
{
    printf("%-14s %-10s %10s %10s\n", "system", "stage", "ms/step", "ns/agent");
    for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
        shoal_system_stats_t st;
        shoal_world_system_stats(w, i, &st);
        if (st.calls == 0) continue;
        double ms = (double)st.ns_total * 1e-6 / (double)st.calls;
        printf("%-14s %-10s %10.3f %10.2f\n", st.name, shoal_stage_name(st.stage), ms, ms * 1e6 / (double)agents);
    }
}

#endif /* SHOAL_BENCH_SYSTEMS_H */
