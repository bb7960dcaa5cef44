/* The top-level "measure" key of a scenario: measurement lines and areas
 * (shoal/measure.h, docs/measure.md), read after the groups so that a
 * line's or an area's "group" may name one, and added to the world by
 * populate before the agents. docs/scenarios.md is the reference. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/scenario.h"

#include "io/scenario_model.h"

static const char* const MEASURE_KEYS[] = {"lines", "areas"};
static const char* const LINE_KEYS[] = {"name", "from", "to", "group", "window"};
static const char* const AREA_KEYS[] = {"name", "polygon", "every", "group", "cell_radius"};

/* A name: given (at most SHOAL_MEASURE_NAME_MAX - 1 bytes, unique in its
 * list) or "<kind><index>". */
static shoal_status_t read_name(parser_t* p, const cJSON* v, const char* kind, int index, char** out,
                                char* const* earlier, const char* list)
{
    char buf[32], shown[64];
    const cJSON* name = MEMBER(v, "name");
    if (name != NULL) {
        TRY(parser_read_name(p, name, "name", SHOAL_MEASURE_NAME_MAX - 1, out));
    } else {
        snprintf(buf, sizeof buf, "%s%d", kind, index);
        if ((*out = json_copy_string(buf)) == NULL) return parser_out_of_memory(p);
    }
    for (int j = 0; j < index; j++)
        if (strcmp(earlier[j], *out) == 0)
            return parser_fail(p, name != NULL ? "name" : NULL,
                               "'%s' is already the name of measure.%s[%d]: names must be unique in a list",
                               parser_printable(shown, *out), list, j);
    return SHOAL_OK;
}

/* "group": a group of the scenario, by name or index (its agents' group
 * value is its index). */
static shoal_status_t read_group(parser_t* p, const cJSON* v, const shoal_scenario_t* s, int64_t* out)
{
    const cJSON* g = MEMBER(v, "group");
    if (g == NULL) return SHOAL_OK;
    const char** names = calloc(s->group_count > 0 ? (size_t)s->group_count : 1, sizeof *names);
    if (names == NULL) return parser_out_of_memory(p);
    for (int32_t i = 0; i < s->group_count; i++) names[i] = s->groups[i].name;
    int32_t index = -1;
    shoal_status_t st = scenario_read_ref(p, g, "group", names, s->group_count, "group", "groups", &index);
    free(names);
    *out = index;
    return st;
}

static shoal_status_t read_point(parser_t* p, const cJSON* v, const char* key, float out[2])
{
    const cJSON* m = MEMBER(v, key);
    if (m == NULL) return parser_missing(p, key, NULL);
    float q[3] = {0.0f, 0.0f, 0.0f};
    TRY(parser_read_vector(p, m, key, -DBL_MAX, "[x, y]", "[x, y]", q));
    out[0] = q[0];
    out[1] = q[1];
    return SHOAL_OK;
}

static shoal_status_t parse_line(parser_t* p, const cJSON* v, const shoal_scenario_t* s, int index,
                                 measure_line_spec_t* out, char* const* earlier)
{
    TRY(parser_check_object(p, v, LINE_KEYS, COUNT_OF(LINE_KEYS)));
    TRY(read_name(p, v, "line", index, &out->name, earlier, "lines"));
    out->line = shoal_measure_line_default();
    TRY(read_point(p, v, "from", out->line.from));
    TRY(read_point(p, v, "to", out->line.to));
    if (out->line.from[0] == out->line.to[0] && out->line.from[1] == out->line.to[1])
        return parser_fail(p, "to", "is the same point as \"from\": a line needs a length");
    TRY(read_group(p, v, s, &out->line.group));
    return parser_get_float(p, v, "window", 0.0, 1, &out->line.window);
}

static shoal_status_t parse_area(parser_t* p, const cJSON* v, const shoal_scenario_t* s, int index,
                                 measure_area_spec_t* out, char* const* earlier)
{
    TRY(parser_check_object(p, v, AREA_KEYS, COUNT_OF(AREA_KEYS)));
    TRY(read_name(p, v, "area", index, &out->name, earlier, "areas"));
    shoal_measure_area_t* a = &out->area;
    *a = shoal_measure_area_default();
    const cJSON* poly = MEMBER(v, "polygon");
    if (poly == NULL) return parser_missing(p, "polygon", NULL);
    int n = cJSON_IsArray(poly) ? cJSON_GetArraySize(poly) : -1;
    if (n < 3 || n > SHOAL_MEASURE_AREA_POINTS) {
        char got[48];
        if (n < 0)
            snprintf(got, sizeof got, "%s", parser_type_name(poly));
        else
            snprintf(got, sizeof got, "%d point%s", n, n == 1 ? "" : "s");
        return parser_fail(p, "polygon", "expected an array of 3 to %d points [x, y], got %s",
                           SHOAL_MEASURE_AREA_POINTS, got);
    }
    size_t old = parser_push(p, "polygon", 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    cJSON_ArrayForEach(e, poly)
    {
        char name[24];
        snprintf(name, sizeof name, "[%d]", (int)a->count);
        float q[3] = {0.0f, 0.0f, 0.0f};
        if ((st = parser_read_vector(p, e, name, -DBL_MAX, "[x, y]", "[x, y]", q)) != SHOAL_OK) break;
        a->points[a->count][0] = q[0];
        a->points[a->count][1] = q[1];
        a->count++;
    }
    parser_pop(p, old);
    TRY(st);
    double area2 = 0.0;
    for (int32_t k = 0; k < a->count; k++) {
        const float* u = a->points[k];
        const float* w = a->points[(k + 1) % a->count];
        area2 += (double)u[0] * w[1] - (double)w[0] * u[1];
    }
    if (!(fabs(area2) > 0.0)) return parser_fail(p, "polygon", "has zero area: its points lie on one line");
    int64_t every = a->every;
    TRY(parser_get_integer(p, v, "every", 1.0, 1000000.0, &every));
    a->every = (int32_t)every;
    TRY(read_group(p, v, s, &a->group));
    return parser_get_float(p, v, "cell_radius", 0.0, 1, &a->cell_radius);
}

shoal_status_t scenario_parse_measure(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    if (!cJSON_IsObject(v)) return parser_fail(p, NULL, "expected an object, got %s", parser_type_name(v));
    TRY(parser_check_object(p, v, MEASURE_KEYS, COUNT_OF(MEASURE_KEYS)));
    if (s->dimensions != 2)
        return parser_fail(p, NULL, "measurement lines and areas are 2D; this scenario is %dD",
                           (int)s->dimensions);
    const cJSON* lines = MEMBER(v, "lines");
    if (lines != NULL) {
        if (!cJSON_IsArray(lines))
            return parser_fail(p, "lines", "expected an array of objects, got %s", parser_type_name(lines));
        int n = cJSON_GetArraySize(lines);
        if (n > SHOAL_MAX_MEASURES)
            return parser_fail(p, "lines", "holds %d lines, above the limit of %d", n, SHOAL_MAX_MEASURES);
        if (n > 0 && (s->measure_lines = calloc((size_t)n, sizeof *s->measure_lines)) == NULL)
            return parser_out_of_memory(p);
        char** names = calloc(n > 0 ? (size_t)n : 1, sizeof *names);
        if (names == NULL) return parser_out_of_memory(p);
        size_t old = parser_push(p, "lines", 0);
        const cJSON* e = NULL;
        shoal_status_t st = SHOAL_OK;
        cJSON_ArrayForEach(e, lines)
        {
            size_t at = parser_push(p, NULL, s->measure_line_count);
            int i = s->measure_line_count++; /* freed with the scenario even when it failed */
            st = parse_line(p, e, s, i, &s->measure_lines[i], names);
            names[i] = s->measure_lines[i].name;
            parser_pop(p, at);
            if (st != SHOAL_OK) break;
        }
        parser_pop(p, old);
        free(names);
        TRY(st);
    }
    const cJSON* areas = MEMBER(v, "areas");
    if (areas != NULL) {
        if (!cJSON_IsArray(areas))
            return parser_fail(p, "areas", "expected an array of objects, got %s", parser_type_name(areas));
        int n = cJSON_GetArraySize(areas);
        if (n > SHOAL_MAX_MEASURES)
            return parser_fail(p, "areas", "holds %d areas, above the limit of %d", n, SHOAL_MAX_MEASURES);
        if (n > 0 && (s->measure_areas = calloc((size_t)n, sizeof *s->measure_areas)) == NULL)
            return parser_out_of_memory(p);
        char** names = calloc(n > 0 ? (size_t)n : 1, sizeof *names);
        if (names == NULL) return parser_out_of_memory(p);
        size_t old = parser_push(p, "areas", 0);
        const cJSON* e = NULL;
        shoal_status_t st = SHOAL_OK;
        cJSON_ArrayForEach(e, areas)
        {
            size_t at = parser_push(p, NULL, s->measure_area_count);
            int i = s->measure_area_count++;
            st = parse_area(p, e, s, i, &s->measure_areas[i], names);
            names[i] = s->measure_areas[i].name;
            parser_pop(p, at);
            if (st != SHOAL_OK) break;
        }
        parser_pop(p, old);
        free(names);
        TRY(st);
    }
    return SHOAL_OK;
}

void scenario_free_measure(shoal_scenario_t* s)
{
    for (int32_t i = 0; i < s->measure_line_count; i++) free(s->measure_lines[i].name);
    for (int32_t i = 0; i < s->measure_area_count; i++) free(s->measure_areas[i].name);
    free(s->measure_lines);
    free(s->measure_areas);
}

shoal_status_t scenario_add_measure(const shoal_scenario_t* s, shoal_world_t* world)
{
    shoal_status_t st = SHOAL_OK;
    for (int32_t i = 0; i < s->measure_line_count && st == SHOAL_OK; i++) {
        shoal_measure_line_t l = s->measure_lines[i].line;
        l.name = s->measure_lines[i].name;
        st = shoal_world_add_measure_line(world, &l, NULL);
    }
    for (int32_t i = 0; i < s->measure_area_count && st == SHOAL_OK; i++) {
        shoal_measure_area_t a = s->measure_areas[i].area;
        a.name = s->measure_areas[i].name;
        st = shoal_world_add_measure_area(world, &a, NULL);
    }
    return st;
}
