/* `shoal run`'s measurements (run_measure.c): text, JSON and CSV. */
#ifndef SHOAL_CLI_RUN_MEASURE_H
#define SHOAL_CLI_RUN_MEASURE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "shoal/shoal.h"

/* A line of text per line and area (nothing without any). */
void run_measure_print(const shoal_world_t* world);
/* A "measure" object in root (none without any line or area); 0 when out
 * of memory. */
int run_measure_json(const shoal_world_t* world, cJSON* root);
/* The time series as CSV at path; nonzero on failure, with why. */
int run_measure_csv(const shoal_world_t* world, const char* path, char* why, size_t why_size);

#endif /* SHOAL_CLI_RUN_MEASURE_H */
