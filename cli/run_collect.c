/* `shoal run --collect FILE`: the scenario's "collect" figures, a sample
 * before the first step, every K-th step and after the last, held as
 * doubles (a row a sample) and written as CSV after the run.
 *
 * The columns: step, time, agents; mean_NAME for each of collect.means
 * ("speed" is the length of each agent's velocity); with collect.crowd the
 * crowd statistics (crowd_arrived, ...); with collect.lines each
 * measurement line's crossings so far (line_NAME_positive, _negative);
 * with collect.areas each measurement area's mean count and density over
 * its samples since the collect sample before (area_NAME_count,
 * _density; empty where it took none). A figure with no value (a mean
 * over no agents, a closest pair with no pair) is an empty field. */
#define _POSIX_C_SOURCE 200809L
#include "cli/run_collect.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "shoal/crowd.h"
#include "shoal/extend.h"
#include "shoal/measure.h"

static const char* const crowd_names[] = {
    "crowd_agents",           "crowd_arrived",           "crowd_closest_pair",
    "crowd_overlapping",      "crowd_relaxed_last_step", "crowd_contact_iterations",
    "crowd_wall_penetration", "crowd_in_walls"};
#define CROWD_FIGURES ((int32_t)(sizeof crowd_names / sizeof crowd_names[0]))

static int add_name(run_collect_t* c, int32_t* at, const char* a, const char* b, const char* d)
{
    size_t n = strlen(a) + strlen(b) + strlen(d) + 1;
    char* s = malloc(n);
    if (s == NULL) return -1;
    snprintf(s, n, "%s%s%s", a, b, d);
    c->names[(*at)++] = s;
    return 0;
}

int run_collect_init(run_collect_t* c, const shoal_scenario_collect_t* spec, shoal_world_t* world, char* why,
                     size_t why_size)
{
    memset(c, 0, sizeof *c);
    c->spec = *spec;
    if (c->spec.every < 1) c->spec.every = 1;
    c->lines = spec->lines ? shoal_world_measure_line_count(world) : 0;
    c->areas = spec->areas ? shoal_world_measure_area_count(world) : 0;
    for (int32_t k = 0; k < spec->mean_count; ++k) {
        shoal_column_t col;
        if (strcmp(spec->means[k], "speed") != 0 &&
            (shoal_world_column(world, spec->means[k], &col) != SHOAL_OK || col.type != SHOAL_COLUMN_F32)) {
            snprintf(why, why_size, "the world has no float column '%s' to average", spec->means[k]);
            return -1;
        }
    }
    const int32_t most =
        3 + spec->mean_count + (spec->crowd ? CROWD_FIGURES : 0) + 2 * c->lines + 2 * c->areas;
    c->names = calloc((size_t)most, sizeof *c->names);
    if (c->names == NULL) goto oom;
    int32_t at = 0;
    if (add_name(c, &at, "step", "", "") || add_name(c, &at, "time", "", "") ||
        add_name(c, &at, "agents", "", ""))
        goto oom;
    for (int32_t k = 0; k < spec->mean_count; ++k)
        if (add_name(c, &at, "mean_", spec->means[k], "")) goto oom;
    for (int32_t k = 0; spec->crowd && k < CROWD_FIGURES; ++k)
        if (add_name(c, &at, crowd_names[k], "", "")) goto oom;
    for (int32_t i = 0; i < c->lines; ++i) {
        shoal_measure_line_stats_t s;
        char index[16];
        snprintf(index, sizeof index, "%d", (int)i);
        const char* name =
            shoal_world_measure_line_stats(world, i, &s) == SHOAL_OK && s.name[0] ? s.name : index;
        if (add_name(c, &at, "line_", name, "_positive") || add_name(c, &at, "line_", name, "_negative"))
            goto oom;
    }
    for (int32_t i = 0; i < c->areas; ++i) {
        shoal_measure_area_stats_t s;
        char index[16];
        snprintf(index, sizeof index, "%d", (int)i);
        const char* name =
            shoal_world_measure_area_stats(world, i, -INFINITY, INFINITY, &s) == SHOAL_OK && s.name[0]
                ? s.name
                : index;
        if (add_name(c, &at, "area_", name, "_count") || add_name(c, &at, "area_", name, "_density"))
            goto oom;
    }
    c->columns = at;
    return 0;
oom:
    c->columns = most;
    run_collect_free(c);
    snprintf(why, why_size, "out of memory");
    return -1;
}

/* The mean of column `name` over the agents (NaN with none). */
static double column_mean(shoal_world_t* world, const char* name)
{
    int32_t n = shoal_world_agent_count(world);
    if (n <= 0) return NAN;
    double sum = 0.0;
    if (strcmp(name, "speed") == 0) {
        shoal_column_t axis[3];
        int dims = shoal_world_dimensions(world);
        const char* names[3] = {"velocity.x", "velocity.y", "velocity.z"};
        for (int k = 0; k < dims; ++k)
            if (shoal_world_column(world, names[k], &axis[k]) != SHOAL_OK) return NAN;
        for (int32_t i = 0; i < n; ++i) {
            double s2 = 0.0;
            for (int k = 0; k < dims; ++k) {
                double v = ((const float*)axis[k].data)[i];
                s2 += v * v;
            }
            sum += sqrt(s2);
        }
        return sum / (double)n;
    }
    shoal_column_t col;
    if (shoal_world_column(world, name, &col) != SHOAL_OK) return NAN;
    for (int32_t i = 0; i < n; ++i) sum += ((const float*)col.data)[i];
    return sum / (double)n;
}

int run_collect_sample(run_collect_t* c, shoal_world_t* world)
{
    if (c->samples == c->capacity) {
        size_t grown = c->capacity ? 2 * c->capacity : 64;
        double* more = realloc(c->values, grown * (size_t)c->columns * sizeof *more);
        if (more == NULL) return -1;
        c->values = more;
        c->capacity = grown;
    }
    double* row = c->values + c->samples * (size_t)c->columns;
    const double before = c->samples > 0 ? c->values[(c->samples - 1) * (size_t)c->columns + 1] : -INFINITY;
    int32_t at = 0;
    row[at++] = (double)shoal_world_step_count(world);
    row[at++] = shoal_world_time(world);
    row[at++] = (double)shoal_world_agent_count(world);
    for (int32_t k = 0; k < c->spec.mean_count; ++k) row[at++] = column_mean(world, c->spec.means[k]);
    if (c->spec.crowd) {
        shoal_crowd_stats_t s;
        if (shoal_world_crowd_stats(world, &s) != SHOAL_OK) memset(&s, 0, sizeof s);
        row[at++] = s.agents;
        row[at++] = s.arrived;
        row[at++] = isfinite(s.closest_pair) ? (double)s.closest_pair : NAN;
        row[at++] = s.overlapping;
        row[at++] = s.relaxed_last_step;
        row[at++] = s.contact_iterations;
        row[at++] = s.wall_penetration;
        row[at++] = s.in_walls;
    }
    for (int32_t i = 0; i < c->lines; ++i) {
        shoal_measure_line_stats_t s;
        int ok = shoal_world_measure_line_stats(world, i, &s) == SHOAL_OK;
        row[at++] = ok ? (double)s.positive : NAN;
        row[at++] = ok ? (double)s.negative : NAN;
    }
    for (int32_t i = 0; i < c->areas; ++i) {
        /* the area's samples since the collect sample before (the first:
         * every one so far) */
        shoal_measure_area_stats_t s;
        int ok = shoal_world_measure_area_stats(world, i,
                                                before > -INFINITY ? nextafter(before, INFINITY) : before,
                                                shoal_world_time(world), &s) == SHOAL_OK &&
                 s.samples > 0;
        row[at++] = ok ? s.mean_count : NAN;
        row[at++] = ok ? s.mean_density : NAN;
    }
    c->samples += 1;
    return 0;
}

int run_collect_csv(const run_collect_t* c, const char* path, char* why, size_t why_size)
{
    atomic_file_t file;
    char msg[600];
    if (atomic_file_open(&file, path, msg, sizeof msg) != 0) {
        snprintf(why, why_size, "%s", msg);
        return -1;
    }
    FILE* f = file.f;
    for (int32_t k = 0; k < c->columns; ++k) {
        if (k) fputc(',', f);
        /* names come from measurement names too: quote as RFC 4180 says */
        const char* s = c->names[k];
        if (strpbrk(s, ",\"\n\r") != NULL) {
            fputc('"', f);
            for (; *s; ++s) {
                if (*s == '"') fputc('"', f);
                fputc(*s, f);
            }
            fputc('"', f);
        } else {
            fputs(s, f);
        }
    }
    fputc('\n', f);
    for (size_t r = 0; r < c->samples; ++r) {
        const double* row = c->values + r * (size_t)c->columns;
        fprintf(f, "%" PRIu64 ",%.17g,%.0f", (uint64_t)row[0], row[1], row[2]);
        for (int32_t k = 3; k < c->columns; ++k) {
            fputc(',', f);
            if (!isnan(row[k])) fprintf(f, "%.9g", row[k]);
        }
        fputc('\n', f);
    }
    if (atomic_file_commit(&file, msg, sizeof msg) != 0) {
        snprintf(why, why_size, "%s", msg);
        return -1;
    }
    return 0;
}

void run_collect_free(run_collect_t* c)
{
    for (int32_t k = 0; c->names != NULL && k < c->columns; ++k) free(c->names[k]);
    free(c->names);
    free(c->values);
    memset(c, 0, sizeof *c);
}
