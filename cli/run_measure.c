/* `shoal run`'s measurements (shoal/measure.h, docs/measure.md): a summary
 * line per line and area in the text output, a "measure" object in --json,
 * and the time series as CSV (--measure-csv). */
#include "cli/run_measure.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void run_measure_print(const shoal_world_t* world)
{
    const int32_t lines = shoal_world_measure_line_count(world);
    const int32_t areas = shoal_world_measure_area_count(world);
    for (int32_t i = 0; i < lines; ++i) {
        shoal_measure_line_stats_t s;
        if (shoal_world_measure_line_stats(world, i, &s) != SHOAL_OK) continue;
        printf("line %-11s %" PRId64 " crossings (+%" PRId64 " -%" PRId64 "), mean flow %.3f /s", s.name,
               s.positive + s.negative, s.positive, s.negative, s.mean_flow);
        if (s.positive + s.negative > 0) printf(", first %.2f s, last %.2f s", s.first_time, s.last_time);
        printf("\n");
    }
    for (int32_t i = 0; i < areas; ++i) {
        shoal_measure_area_stats_t s;
        if (shoal_world_measure_area_stats(world, i, -INFINITY, INFINITY, &s) != SHOAL_OK) continue;
        printf("area %-11s %" PRId64 " samples, mean %.2f agents, density %.3f /m^2 (Voronoi %.3f), speed "
               "%.3f m/s (Voronoi %.3f)\n",
               s.name, s.samples, s.mean_count, s.mean_density, s.mean_voronoi_density, s.mean_speed,
               s.mean_voronoi_speed);
    }
}

static int add_number(cJSON* o, const char* key, double v)
{
    /* JSON has no NaN: a time that does not exist is null */
    if (isnan(v)) return cJSON_AddNullToObject(o, key) != NULL;
    return cJSON_AddNumberToObject(o, key, v) != NULL;
}

static int add_point(cJSON* o, const char* key, const float p[2])
{
    const double d[2] = {p[0], p[1]};
    cJSON* a = cJSON_CreateDoubleArray(d, 2);
    return a != NULL && cJSON_AddItemToObject(o, key, a);
}

int run_measure_json(const shoal_world_t* world, cJSON* root)
{
    const int32_t lines = shoal_world_measure_line_count(world);
    const int32_t areas = shoal_world_measure_area_count(world);
    if (lines == 0 && areas == 0) return 1;
    cJSON* m = cJSON_AddObjectToObject(root, "measure");
    cJSON* la = m ? cJSON_AddArrayToObject(m, "lines") : NULL;
    cJSON* aa = m ? cJSON_AddArrayToObject(m, "areas") : NULL;
    if (!la || !aa) return 0;
    for (int32_t i = 0; i < lines; ++i) {
        shoal_measure_line_stats_t s;
        if (shoal_world_measure_line_stats(world, i, &s) != SHOAL_OK) return 0;
        cJSON* o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(la, o)) return 0;
        int ok = cJSON_AddStringToObject(o, "name", s.name) != NULL && add_point(o, "from", s.from) &&
                 add_point(o, "to", s.to) && add_number(o, "group", (double)s.group) &&
                 add_number(o, "positive", (double)s.positive) &&
                 add_number(o, "negative", (double)s.negative) &&
                 add_number(o, "crossings", (double)(s.positive + s.negative)) &&
                 add_number(o, "first_time", s.first_time) && add_number(o, "last_time", s.last_time) &&
                 add_number(o, "duration", s.duration) && add_number(o, "mean_flow", s.mean_flow);
        if (!ok) return 0;
    }
    for (int32_t i = 0; i < areas; ++i) {
        shoal_measure_area_stats_t s;
        if (shoal_world_measure_area_stats(world, i, -INFINITY, INFINITY, &s) != SHOAL_OK) return 0;
        cJSON* o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(aa, o)) return 0;
        int ok = cJSON_AddStringToObject(o, "name", s.name) != NULL && add_number(o, "area", s.area) &&
                 add_number(o, "every", s.every) && add_number(o, "group", (double)s.group) &&
                 add_number(o, "samples", (double)s.samples) && add_number(o, "mean_count", s.mean_count) &&
                 add_number(o, "mean_density", s.mean_density) &&
                 add_number(o, "mean_voronoi_density", s.mean_voronoi_density) &&
                 add_number(o, "mean_speed", s.mean_speed) &&
                 add_number(o, "mean_voronoi_speed", s.mean_voronoi_speed);
        if (!ok) return 0;
    }
    return 1;
}

/* A name as one CSV field: quoted, quotes doubled (RFC 4180). */
static void put_name(FILE* f, const char* name)
{
    fputc('"', f);
    for (const char* c = name; *c; ++c) {
        if (*c == '"') fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

int run_measure_csv(const shoal_world_t* world, const char* path, char* why, size_t why_size)
{
    FILE* f = fopen(path, "w");
    if (!f) {
        snprintf(why, why_size, "cannot open it for writing");
        return 1;
    }
    int failed = 0;
    fprintf(f, "kind,name,time,step,count,density,voronoi_density,speed,voronoi_speed,positive,negative,"
               "flow\n");
    const int32_t lines = shoal_world_measure_line_count(world);
    for (int32_t i = 0; i < lines && !failed; ++i) {
        shoal_measure_line_stats_t s;
        int64_t nc = shoal_world_measure_line_crossings(world, i, NULL, 0);
        int64_t nw = shoal_world_measure_line_flow(world, i, NULL, 0);
        if (shoal_world_measure_line_stats(world, i, &s) != SHOAL_OK || nc < 0 || nw < 0) {
            failed = 1;
            break;
        }
        shoal_measure_crossing_t* c = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *c);
        int64_t(*each)[2] = calloc((size_t)(nw > 0 ? nw : 1), sizeof *each);
        if (!c || !each) {
            free(c);
            free(each);
            snprintf(why, why_size, "out of memory");
            fclose(f);
            return 1;
        }
        shoal_world_measure_line_crossings(world, i, c, nc);
        for (int64_t k = 0; k < nc; ++k) {
            int64_t win = (int64_t)floor((c[k].time - s.start_time) / (double)s.window);
            if (win >= nw) win = nw - 1;
            if (win >= 0) each[win][c[k].direction > 0 ? 0 : 1]++;
        }
        /* one row a window: its start, its crossings each way, its flow */
        for (int64_t k = 0; k < nw; ++k) {
            fputs("line,", f);
            put_name(f, s.name);
            fprintf(f, ",%.9g,,,,,,,%" PRId64 ",%" PRId64 ",%.9g\n", s.start_time + (double)k * s.window,
                    each[k][0], each[k][1], (double)(each[k][0] + each[k][1]) / (double)s.window);
        }
        free(c);
        free(each);
    }
    const int32_t areas = shoal_world_measure_area_count(world);
    for (int32_t i = 0; i < areas && !failed; ++i) {
        shoal_measure_area_stats_t st;
        int64_t n = shoal_world_measure_area_samples(world, i, NULL, 0);
        if (shoal_world_measure_area_stats(world, i, -INFINITY, INFINITY, &st) != SHOAL_OK || n < 0) {
            failed = 1;
            break;
        }
        shoal_measure_sample_t* s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
        if (!s) {
            snprintf(why, why_size, "out of memory");
            fclose(f);
            return 1;
        }
        shoal_world_measure_area_samples(world, i, s, n);
        for (int64_t k = 0; k < n; ++k) {
            fputs("area,", f);
            put_name(f, st.name);
            fprintf(f, ",%.9g,%" PRIu64 ",%d,%.9g,%.9g,%.9g,%.9g,,,\n", s[k].time, s[k].step, (int)s[k].count,
                    (double)s[k].density, (double)s[k].voronoi_density, (double)s[k].speed,
                    (double)s[k].voronoi_speed);
        }
        free(s);
    }
    if (failed) snprintf(why, why_size, "%s", shoal_world_last_error(world));
    if (fclose(f) != 0 && !failed) {
        snprintf(why, why_size, "cannot write it (disk full?)");
        failed = 1;
    }
    return failed;
}
