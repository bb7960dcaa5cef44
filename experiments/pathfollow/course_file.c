/* Course files: the JSON form of a course_t (experiments/pathfollow/courses.h), read by
 * `shoal pathfollow --path FILE` and written by `shoal experiment pathfollow
 * --export-courses DIR`:
 *   {"name": "...", "half_width": 4,
 *    "waypoints": [[x, y, z], ...]            (or [x, y]: z from the terrain),
 *    "terrain": {"nx": .., "ny": .., "origin": [x, y], "cell": c,
 *                "heights": [row-major, y then x]}        (optional: flat),
 *    "obstacles": [[x, y, radius], ...]}                  (optional)
 * Only the shape of the file is checked here; the library checks the
 * waypoints, terrain and obstacles when they are added to a world. The
 * parser reads bytes in memory, so tests/fuzz/fuzz_path.c fuzzes it
 * directly. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "io/file_read.h"
#include "experiments/pathfollow/courses.h"

/* A regular file of at most 64 MiB, opened without blocking
 * (io/file_read.h), NUL-terminated. */
static char* read_file(const char* path, size_t* size, char* err, int err_size)
{
    void* data = NULL;
    char why[256];
    if (file_read_all(path, FILE_LIMIT_COURSE, &data, size, why, sizeof why) != FILE_READ_OK) {
        snprintf(err, (size_t)err_size, "course file %.300s: %s", path, why);
        return NULL;
    }
    return (char*)data;
}

static int json_float(const cJSON* item, float* out)
{
    /* Finite as a float: a double beyond FLT_MAX (3e39) would become inf. */
    if (!cJSON_IsNumber(item) || !(fabs(item->valuedouble) <= FLT_MAX)) return 0;
    *out = (float)item->valuedouble;
    return 1;
}

int course_parse(const char* text, size_t length, const char* path, course_t* c, char* err, int err_size)
{
    memset(c, 0, sizeof *c);
    if (!path) path = "course";
    cJSON* root = text ? cJSON_ParseWithLength(text, length) : NULL;
    int rc = -1;
    if (!root || !cJSON_IsObject(root)) {
        snprintf(err, (size_t)err_size, "%s: not a JSON object", path);
        goto done;
    }
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(root, "name");
    snprintf(c->name, sizeof c->name, "%s", cJSON_IsString(name) ? name->valuestring : "course");
    if (!json_float(cJSON_GetObjectItemCaseSensitive(root, "half_width"), &c->half_width)) {
        snprintf(err, (size_t)err_size, "%s: half_width: expected a finite number", path);
        goto done;
    }
    const cJSON* terrain = cJSON_GetObjectItemCaseSensitive(root, "terrain");
    if (terrain) {
        const cJSON* nx = cJSON_GetObjectItemCaseSensitive(terrain, "nx");
        const cJSON* ny = cJSON_GetObjectItemCaseSensitive(terrain, "ny");
        const cJSON* origin = cJSON_GetObjectItemCaseSensitive(terrain, "origin");
        const cJSON* heights = cJSON_GetObjectItemCaseSensitive(terrain, "heights");
        if (!cJSON_IsNumber(nx) || !cJSON_IsNumber(ny) || nx->valueint < 2 || ny->valueint < 2 ||
            nx->valueint > 4096 || ny->valueint > 4096 || nx->valuedouble != nx->valueint ||
            ny->valuedouble != ny->valueint) {
            snprintf(err, (size_t)err_size, "%s: terrain.nx, terrain.ny: expected integers in [2, 4096]",
                     path);
            goto done;
        }
        c->nx = nx->valueint;
        c->ny = ny->valueint;
        if (!cJSON_IsArray(origin) || cJSON_GetArraySize(origin) != 2 ||
            !json_float(cJSON_GetArrayItem(origin, 0), &c->origin[0]) ||
            !json_float(cJSON_GetArrayItem(origin, 1), &c->origin[1])) {
            snprintf(err, (size_t)err_size, "%s: terrain.origin: expected [x, y]", path);
            goto done;
        }
        if (!json_float(cJSON_GetObjectItemCaseSensitive(terrain, "cell"), &c->cell) || c->cell <= 0) {
            snprintf(err, (size_t)err_size, "%s: terrain.cell: expected a number > 0", path);
            goto done;
        }
        int n = c->nx * c->ny;
        if (!cJSON_IsArray(heights) || cJSON_GetArraySize(heights) != n) {
            snprintf(err, (size_t)err_size, "%s: terrain.heights: expected %d numbers (nx * ny)", path, n);
            goto done;
        }
        c->heights = malloc((size_t)n * sizeof(float));
        if (!c->heights) goto oom;
        int i = 0;
        for (const cJSON* h = heights->child; h; h = h->next, ++i)
            if (!json_float(h, &c->heights[i])) {
                snprintf(err, (size_t)err_size, "%s: terrain.heights[%d]: expected a finite number", path, i);
                goto done;
            }
    }
    const cJSON* obstacles = cJSON_GetObjectItemCaseSensitive(root, "obstacles");
    if (obstacles) {
        if (!cJSON_IsArray(obstacles)) {
            snprintf(err, (size_t)err_size, "%s: obstacles: expected an array of [x, y, radius]", path);
            goto done;
        }
        int n = cJSON_GetArraySize(obstacles);
        c->obstacles = calloc((size_t)(n > 0 ? n : 1), sizeof *c->obstacles);
        if (!c->obstacles) goto oom;
        int i = 0;
        for (const cJSON* o = obstacles->child; o; o = o->next, ++i) {
            int ok = cJSON_IsArray(o) && cJSON_GetArraySize(o) == 3;
            for (int k = 0; ok && k < 3; ++k) ok = json_float(cJSON_GetArrayItem(o, k), &c->obstacles[i][k]);
            if (!ok || c->obstacles[i][2] <= 0) {
                snprintf(err, (size_t)err_size, "%s: obstacles[%d]: expected [x, y, radius > 0]", path, i);
                goto done;
            }
        }
        c->obstacle_count = n;
    }
    const cJSON* wps = cJSON_GetObjectItemCaseSensitive(root, "waypoints");
    if (!cJSON_IsArray(wps)) {
        snprintf(err, (size_t)err_size, "%s: waypoints: expected an array of [x, y] or [x, y, z]", path);
        goto done;
    }
    int n = cJSON_GetArraySize(wps);
    c->xyz = calloc((size_t)(n > 0 ? 3 * n : 3), sizeof(float));
    if (!c->xyz) goto oom;
    int i = 0;
    for (const cJSON* p = wps->child; p; p = p->next, ++i) {
        int size = cJSON_IsArray(p) ? cJSON_GetArraySize(p) : 0;
        int ok = size == 2 || size == 3;
        for (int k = 0; ok && k < size; ++k) ok = json_float(cJSON_GetArrayItem(p, k), &c->xyz[3 * i + k]);
        if (!ok) {
            snprintf(err, (size_t)err_size, "%s: waypoints[%d]: expected [x, y] or [x, y, z], finite", path,
                     i);
            goto done;
        }
        if (size == 2) c->xyz[3 * i + 2] = course_height(c, c->xyz[3 * i], c->xyz[3 * i + 1]);
    }
    c->count = n;
    rc = 0;
    goto done;
oom:
    snprintf(err, (size_t)err_size, "%s: out of memory", path);
done:
    cJSON_Delete(root);
    if (rc != 0) course_free(c);
    return rc;
}

int course_load(const char* path, course_t* c, char* err, int err_size)
{
    memset(c, 0, sizeof *c);
    size_t size = 0;
    char* text = read_file(path, &size, err, err_size);
    if (!text) return -1;
    int rc = course_parse(text, size, path, c, err, err_size);
    free(text);
    return rc;
}

static cJSON* float_array(const float* v, int n)
{
    cJSON* a = cJSON_CreateArray();
    for (int i = 0; a && i < n; ++i)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(round((double)v[i] * 1e4) / 1e4));
    return a;
}

int course_save(const course_t* c, const char* path, char* err, int err_size)
{
    cJSON* root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", c->name);
    cJSON_AddStringToObject(root, "about", c->about);
    cJSON_AddNumberToObject(root, "half_width", c->half_width);
    cJSON* t = cJSON_AddObjectToObject(root, "terrain");
    cJSON_AddNumberToObject(t, "nx", c->nx);
    cJSON_AddNumberToObject(t, "ny", c->ny);
    cJSON_AddItemToObject(t, "origin", float_array(c->origin, 2));
    cJSON_AddNumberToObject(t, "cell", c->cell);
    cJSON_AddItemToObject(t, "heights", float_array(c->heights, c->nx * c->ny));
    cJSON* obs = cJSON_AddArrayToObject(root, "obstacles");
    for (int i = 0; i < c->obstacle_count; ++i) cJSON_AddItemToArray(obs, float_array(c->obstacles[i], 3));
    cJSON* wps = cJSON_AddArrayToObject(root, "waypoints");
    for (int i = 0; i < c->count; ++i) cJSON_AddItemToArray(wps, float_array(c->xyz + 3 * i, 3));
    char* text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    /* Through the one output rule (io/atomic_file.h): written whole or not
     * at all, no symlink followed, a device written through. */
    if (!text) {
        snprintf(err, (size_t)err_size, "cannot write %.400s: out of memory", path);
        return -1;
    }
    size_t length = strlen(text);
    text[length] = '\n'; /* replaces the NUL: written by size, not as a string */
    int failed = atomic_write_file(path, text, length + 1, err, err_size);
    free(text);
    return failed ? -1 : 0;
}
