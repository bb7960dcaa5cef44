/* `shoal run --collect FILE` (run_collect.c): the scenario's "collect"
 * figures sampled as the run goes, written as CSV after it. */
#ifndef SHOAL_CLI_RUN_COLLECT_H
#define SHOAL_CLI_RUN_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/scenario.h"
#include "shoal/shoal.h"

typedef struct run_collect_t {
    shoal_scenario_collect_t spec;
    int32_t columns; /* figures a sample holds, step, time and agents first */
    char** names;    /* the CSV header's names, `columns` of them */
    double* values;  /* samples x columns */
    size_t samples, capacity;
    int32_t lines, areas; /* the world's measurement lines and areas when collecting began */
} run_collect_t;

/* Ready to sample `world` as `spec` says (the columns follow from it and
 * from the world's measurement lines and areas). 0, or -1 when out of
 * memory or a mean's column is not in the world (why says which). */
int run_collect_init(run_collect_t* c, const shoal_scenario_collect_t* spec, shoal_world_t* world, char* why,
                     size_t why_size);
/* One sample of the world as it is now; 0, or -1 when out of memory. */
int run_collect_sample(run_collect_t* c, shoal_world_t* world);
/* The samples as CSV at `path` (written whole or not at all); 0, or -1 with
 * why. */
int run_collect_csv(const run_collect_t* c, const char* path, char* why, size_t why_size);
void run_collect_free(run_collect_t* c);

#endif /* SHOAL_CLI_RUN_COLLECT_H */
