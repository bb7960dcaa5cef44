/* Scenario files: a JSON description of a world (dimensions, seed, dt, steps,
 * threads, space), its obstacles, and groups of agents placed by a spawn
 * shape. docs/scenarios.md is the reference for every key; this file and
 * scenario_behaviors.c (a group's behaviors and their parameters) are its
 * only readers.
 *
 * Decisions:
 * - Parsing is strict. An unknown key, a duplicate key, a wrong type or a value
 *   out of range is an error naming its JSON path, because a silently ignored
 *   typo ("max_sped") gives a run that looks right and is not.
 * - cJSON keeps no source positions for values, so only malformed JSON gets a
 *   line:column; every other error names the JSON path instead.
 * - The loaded scenario holds plain structs, not the cJSON tree: the tree is
 *   freed at once and populate has no JSON left to fail on. References to
 *   agents (pursuit targets, leaders) are checked while parsing too, so that
 *   populate only looks handles up.
 * - Placement draws are rng_unit(seed, agent index in the scenario, draw,
 *   stream) with a fixed draw number per purpose, so an agent's placement is a
 *   pure function of its index: no generator state, no dependence on order.
 * - populate uses only the public API, like any host would, and keeps the
 *   handles and obstacle ids it added so that a failure removes exactly those
 *   again. It adds obstacles first, then groups in file order, which is why a
 *   reference may only point to an earlier group: its handles exist by then.
 * - With "wrap", a spawn region must lie inside the box. The world would wrap
 *   a position outside it silently, which hides a box or spawn mistake.
 */
#include "shoal/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/rng.h"
#include "ecs/world.h"
#include "io/scenario_parse.h"
#include "systems/dseek.h"
#include "systems/obstacles.h"

#define MAX_BYTES ((size_t)64 * 1024 * 1024)
#define MAX_AGENTS 100000000
#define MAX_NAME 255
/* JSON integers arrive as doubles, exact only up to 2^53: a larger seed
 * would silently be another seed. */
#define MAX_SEED 9007199254740992.0
/* Random stream of placement, apart from the streams the world draws from. */
#define PLACEMENT_STREAM 0x5ce7a210u

enum { SHAPE_POINT, SHAPE_DISC, SHAPE_RING, SHAPE_BOX };
enum { DIR_FIXED, DIR_RANDOM, DIR_INWARD, DIR_OUTWARD }; /* DIR_RANDOM.. as in DIRECTION_NAMES */
/* Draw numbers (rng_unit's counter) of one agent's placement. A box uses
 * draws 0 to 2 for x, y, z. */
enum { DRAW_RADIUS = 0, DRAW_ANGLE = 1, DRAW_AZIMUTH = 2, DRAW_HEADING = 3, DRAW_PITCH = 4 };

typedef struct obstacle_t {
    float center[3], radius;
} obstacle_t;

struct shoal_scenario_t {
    char* name;
    int32_t dimensions, steps, threads, agent_count, group_count, obstacle_count;
    uint64_t seed;
    float dt;
    /* "world": space and spatial hash, as in shoal_world_def_t */
    int32_t wrap, reorder_interval;
    float bounds_min[3], bounds_max[3], cell_size;
    group_t* groups;
    obstacle_t* obstacles;
};

/* Known keys of each kind of object (a group's behavior keys are in
 * scenario_behaviors.c). */
static const char* const ROOT_KEYS[] = {"name",    "dimensions", "seed",   "dt",       "steps",
                                        "threads", "world",      "groups", "obstacles"};
static const char* const WORLD_KEYS[] = {"wrap", "bounds_min", "bounds_max", "cell_size",
                                         "reorder_interval"};
static const char* const OBSTACLE_KEYS[] = {"center", "radius"};
static const char* const GROUP_KEYS[] = {"name",      "count",  "spawn",  "vehicle",   "control",
                                         "behaviors", "target", "threat", "neighbors", "wander",
                                         "pursuit",   "follow", "avoid",     "dseek",
                                         "formation"};
static const char* const SPAWN_KEYS[] = {"shape",   "center", "radius", "size",
                                         "heading", "pitch",  "speed"};
static const char* const VEHICLE_KEYS[] = {"mass",      "inertia",       "max_force", "max_torque",
                                           "max_speed", "max_turn_rate", "radius"};
static const char* const CONTROL_KEYS[] = {"speed_gain", "heading_gain", "turn_damping"};
static const char* const SHAPE_NAMES[] = {"point", "disc", "ring", "box"};
static const char* const DIRECTION_NAMES[] = {"random", "inward", "outward"};

/* ---- Messages ---- */

/* Appends to a fixed buffer, keeping the offset clamped so that a long
 * message is cut, never overflowed. */
PRINTF_LIKE(4, 5) static size_t append(char* buf, size_t cap, size_t at, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = at + 1 < cap ? vsnprintf(buf + at, cap - at, fmt, ap) : 0;
    va_end(ap);
    return n < 0 ? at : (size_t)n >= cap - at ? cap - 1 : at + (size_t)n;
}

/* "<where>: <message>" into err, or the message alone when where is NULL. */
static shoal_status_t verror(shoal_error_t* err, shoal_status_t status, const char* where,
                             const char* fmt, va_list ap)
{
    if (err == NULL) return status;
    size_t at = where ? append(err->message, sizeof err->message, 0, "%s: ", where) : 0;
    vsnprintf(err->message + at, sizeof err->message - at, fmt, ap);
    err->status = status;
    return status;
}

PRINTF_LIKE(4, 5) static shoal_status_t set_error(shoal_error_t* err, shoal_status_t status,
                                                   const char* where, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(err, status, where, fmt, ap);
    va_end(ap);
    return status;
}

/* "<source>: <path>.<key>: <message>" for an invalid value. `key` may be
 * NULL (the object itself) or an element index "[2]". */
shoal_status_t parser_fail(parser_t* p, const char* key, const char* fmt, ...)
{
    char where[400];
    size_t at = append(where, sizeof where, 0, "%s: %s", p->source, p->path);
    if (key != NULL)
        append(where, sizeof where, at, "%s%s", p->path_len && key[0] != '[' ? "." : "", key);
    va_list ap;
    va_start(ap, fmt);
    verror(p->err, SHOAL_ERR_PARSE, where, fmt, ap);
    va_end(ap);
    return SHOAL_ERR_PARSE;
}

shoal_status_t parser_missing(parser_t* p, const char* key, const char* why)
{
    return set_error(p->err, SHOAL_ERR_PARSE, p->source, "missing required key '%s%s%s'%s%s",
                     p->path, p->path_len ? "." : "", key, why ? " " : "", why ? why : "");
}

shoal_status_t parser_out_of_memory(parser_t* p)
{
    return set_error(p->err, SHOAL_ERR_OUT_OF_MEMORY, p->source, "out of memory");
}

size_t parser_push(parser_t* p, const char* key, int index)
{
    size_t old = p->path_len;
    p->path_len = key ? append(p->path, sizeof p->path, old, "%s%s", old ? "." : "", key)
                      : append(p->path, sizeof p->path, old, "[%d]", index);
    return old;
}

void parser_pop(parser_t* p, size_t old)
{
    p->path_len = old;
    p->path[old] = '\0';
}

const char* parser_type_name(const cJSON* v)
{
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    return "an object";
}

/* Shortest text that reads back as the same double: "0.1", not
 * "0.10000000000000001". */
static const char* format_number(char buf[32], double d)
{
    snprintf(buf, 32, "%.15g", d);
    if (strtod(buf, NULL) != d) snprintf(buf, 32, "%.17g", d);
    return buf;
}

/* User text made safe to quote: control bytes become '?', long text is cut. */
const char* parser_printable(char buf[64], const char* s)
{
    size_t i = 0;
    for (; s[i] != '\0' && i < 56; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (s[i] != '\0') memcpy(buf + i, "...", 3), i += 3;
    buf[i] = '\0';
    return buf;
}

static char* copy_string(const char* s)
{
    size_t n = strlen(s) + 1;
    char* c = malloc(n);
    return c != NULL ? memcpy(c, s, n) : NULL;
}

/* Levenshtein distance, ignoring case; SIZE_MAX for long strings. */
static size_t edit_distance(const char* a, const char* b)
{
    size_t la = strlen(a), lb = strlen(b), row[65];
    if (la > 64 || lb > 64) return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (tolower((unsigned char)a[i - 1]) !=
                                  tolower((unsigned char)b[j - 1]));
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The name closest to `s` when it is a likely typo (one edit for names up to
 * five letters, two for longer ones), else NULL. */
const char* parser_suggest(const char* s, const char* const* names, size_t n)
{
    const char* best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(s, names[i]);
        if (d <= (strlen(names[i]) > 5 ? 2u : 1u) && d < best_d) best = names[i], best_d = d;
    }
    return best;
}

/* ---- Typed readers: each checks one value, `key` naming it in messages ---- */

/* Rejects unknown and duplicate keys in document order. cJSON keeps
 * duplicates as separate children, so they can be seen here. Every key before
 * the first duplicate is a distinct known key, so the inner loop runs at most
 * n times per child whatever the size of the object. */
shoal_status_t parser_check_object(parser_t* p, const cJSON* obj, const char* const* keys, size_t n)
{
    char shown[64];
    if (!cJSON_IsObject(obj))
        return parser_fail(p, NULL, "expected an object, got %s", parser_type_name(obj));
    const cJSON* child = NULL;
    cJSON_ArrayForEach(child, obj)
    {
        size_t i = 0;
        while (i < n && strcmp(child->string, keys[i]) != 0) i++;
        if (i == n) {
            if (p->err == NULL) return SHOAL_ERR_PARSE;
            const char* close = parser_suggest(child->string, keys, n);
            size_t old = parser_push(p, parser_printable(shown, child->string), 0);
            set_error(p->err, SHOAL_ERR_PARSE, p->source, "unknown key '%s'%s%s%s", p->path,
                      close ? "; did you mean '" : "", close ? close : "", close ? "'?" : "");
            parser_pop(p, old);
            return SHOAL_ERR_PARSE;
        }
        for (const cJSON* prev = obj->child; prev != child; prev = prev->next) {
            if (strcmp(prev->string, child->string) == 0) {
                size_t old = parser_push(p, child->string, 0);
                set_error(p->err, SHOAL_ERR_PARSE, p->source, "duplicate key '%s'", p->path);
                parser_pop(p, old);
                return SHOAL_ERR_PARSE;
            }
        }
    }
    return SHOAL_OK;
}

/* A finite number that fits a float and is >= min (> min when `exclusive`).
 * -DBL_MAX as min allows any finite value. */
static shoal_status_t read_float(parser_t* p, const cJSON* v, const char* key, double min,
                                 int exclusive, float* out)
{
    char a[32], b[32], c[32];
    if (!cJSON_IsNumber(v))
        return parser_fail(p, key, "expected a number, got %s", parser_type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d) || fabs(d) > FLT_MAX)
        return parser_fail(p, key, "must be finite and at most %g in magnitude", (double)FLT_MAX);
    if (exclusive ? !(d > min) : !(d >= min))
        return parser_fail(p, key, "must be %s %s, got %s",
                           exclusive ? ">" : ">=", format_number(a, min), format_number(b, d));
    if (exclusive && !((float)d > (float)min)) /* a tiny double can round to a float 0 */
        return parser_fail(p, key, "must be > %s, got %s (%s as a float)", format_number(a, min),
                           format_number(b, d), format_number(c, (double)(float)d));
    *out = (float)d;
    return SHOAL_OK;
}

static shoal_status_t read_integer(parser_t* p, const cJSON* v, const char* key, double min,
                                   double max, int64_t* out)
{
    char a[32], b[32];
    if (!cJSON_IsNumber(v))
        return parser_fail(p, key, "expected an integer, got %s", parser_type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d)) return parser_fail(p, key, "must be a finite integer");
    if (d != floor(d))
        return parser_fail(p, key, "must be an integer, got %s", format_number(a, d));
    if (d < min || d > max)
        return parser_fail(p, key, "must be %s %s, got %s",
                           d < min ? ">=" : "<=", format_number(a, d < min ? min : max),
                           format_number(b, d));
    *out = (int64_t)d;
    return SHOAL_OK;
}

/* An array of exactly `dimensions` numbers, each >= min. */
shoal_status_t parser_read_vector(parser_t* p, const cJSON* v, const char* key, double min,
                                  const char* names2, const char* names3, float out[3])
{
    const char* names = p->dimensions == 3 ? names3 : names2;
    if (!cJSON_IsArray(v))
        return parser_fail(p, key, "expected an array %s, got %s", names, parser_type_name(v));
    int n = cJSON_GetArraySize(v);
    if (n != p->dimensions)
        return parser_fail(p, key, "expected %d numbers %s in a %dD scenario, got %d",
                           p->dimensions, names, p->dimensions, n);
    char element[80];
    float tmp[3] = {0.0f, 0.0f, 0.0f};
    int i = 0;
    const cJSON* e = NULL;
    cJSON_ArrayForEach(e, v)
    {
        snprintf(element, sizeof element, "%s[%d]", key, i);
        TRY(read_float(p, e, element, min, 0, &tmp[i]));
        i++;
    }
    memcpy(out, tmp, sizeof tmp);
    return SHOAL_OK;
}

/* One of `names` (*out = its index) or, when `number` is not NULL, a number
 * in radians (*out = -1). */
static shoal_status_t read_choice(parser_t* p, const cJSON* v, const char* key,
                                  const char* const* names, size_t n, int32_t* out, float* number)
{
    char list[128], shown[64];
    size_t at = append(list, sizeof list, 0, "%sone of", number ? "a number or " : "");
    for (size_t i = 0; i < n; i++)
        at = append(list, sizeof list, at, "%s \"%s\"", i ? "," : "", names[i]);
    if (number != NULL && cJSON_IsNumber(v)) {
        *out = -1;
        return read_float(p, v, key, -DBL_MAX, 0, number);
    }
    if (!cJSON_IsString(v))
        return parser_fail(p, key, "expected %s, got %s", list, parser_type_name(v));
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = (int32_t)i;
            return SHOAL_OK;
        }
    }
    const char* close = parser_suggest(v->valuestring, names, n);
    return parser_fail(p, key, "expected %s, got \"%s\"%s%s%s", list,
                       parser_printable(shown, v->valuestring), close ? "; did you mean \"" : "",
                       close ? close : "", close ? "\"?" : "");
}

static shoal_status_t read_name(parser_t* p, const cJSON* v, const char* key, char** out)
{
    if (!cJSON_IsString(v))
        return parser_fail(p, key, "expected a string, got %s", parser_type_name(v));
    size_t n = strlen(v->valuestring);
    if (n > MAX_NAME) return parser_fail(p, key, "must be at most %d bytes, got %zu", MAX_NAME, n);
    if ((*out = copy_string(v->valuestring)) == NULL) return parser_out_of_memory(p);
    return SHOAL_OK;
}

/* Getters: read obj[key] when present, else leave *out at its default. */
shoal_status_t parser_get_float(parser_t* p, const cJSON* obj, const char* key, double min,
                                int exclusive, float* out)
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? read_float(p, v, key, min, exclusive, out) : SHOAL_OK;
}

shoal_status_t parser_get_integer(parser_t* p, const cJSON* obj, const char* key, double min,
                                  double max, int64_t* out)
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? read_integer(p, v, key, min, max, out) : SHOAL_OK;
}

shoal_status_t parser_get_bool(parser_t* p, const cJSON* obj, const char* key, int32_t* out)
{
    const cJSON* v = MEMBER(obj, key);
    if (v == NULL) return SHOAL_OK;
    if (!cJSON_IsBool(v))
        return parser_fail(p, key, "expected true or false, got %s", parser_type_name(v));
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return SHOAL_OK;
}

static shoal_status_t get_point(parser_t* p, const cJSON* obj, const char* key, float out[3])
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? parser_read_vector(p, v, key, -DBL_MAX, "[x, y]", "[x, y, z]", out) : SHOAL_OK;
}

/* heading or pitch: radians, or "random", "inward" or "outward". */
static shoal_status_t get_direction(parser_t* p, const cJSON* obj, const char* key, int32_t* mode,
                                    float* angle)
{
    const cJSON* v = MEMBER(obj, key);
    int32_t choice = 0;
    if (v == NULL) return SHOAL_OK;
    TRY(read_choice(p, v, key, DIRECTION_NAMES, COUNT_OF(DIRECTION_NAMES), &choice, angle));
    *mode = choice < 0 ? DIR_FIXED : DIR_RANDOM + choice;
    return SHOAL_OK;
}

/* ---- Scenario structure ---- */

static shoal_status_t parse_spawn(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, SPAWN_KEYS, COUNT_OF(SPAWN_KEYS)));
    const cJSON* shape = MEMBER(v, "shape");
    if (shape != NULL)
        TRY(read_choice(p, shape, "shape", SHAPE_NAMES, COUNT_OF(SHAPE_NAMES), &g->shape, NULL));
    TRY(get_point(p, v, "center", g->center));
    TRY(parser_get_float(p, v, "radius", 0.0, 0, &g->radius));
    const cJSON* size = MEMBER(v, "size");
    if (size != NULL) TRY(parser_read_vector(p, size, "size", 0.0, "[w, h]", "[w, h, d]", g->size));
    TRY(get_direction(p, v, "heading", &g->heading_mode, &g->heading));
    /* 2D agents have no pitch; accepting one would hide a mistake. */
    if (p->dimensions == 2 && MEMBER(v, "pitch") != NULL)
        return parser_fail(p, "pitch", "only allowed in 3D scenarios (dimensions is 2)");
    TRY(get_direction(p, v, "pitch", &g->pitch_mode, &g->pitch));
    return parser_get_float(p, v, "speed", 0.0, 0, &g->speed);
}

static shoal_status_t parse_vehicle(parser_t* p, const cJSON* v, shoal_vehicle_t* out)
{
    TRY(parser_check_object(p, v, VEHICLE_KEYS, COUNT_OF(VEHICLE_KEYS)));
    TRY(parser_get_float(p, v, "mass", 0.0, 1, &out->mass));
    TRY(parser_get_float(p, v, "inertia", 0.0, 1, &out->inertia));
    TRY(parser_get_float(p, v, "max_force", 0.0, 0, &out->max_force));
    TRY(parser_get_float(p, v, "max_torque", 0.0, 0, &out->max_torque));
    TRY(parser_get_float(p, v, "max_speed", 0.0, 0, &out->max_speed));
    TRY(parser_get_float(p, v, "max_turn_rate", 0.0, 0, &out->max_turn_rate));
    return parser_get_float(p, v, "radius", 0.0, 0, &out->radius);
}

static shoal_status_t parse_control(parser_t* p, const cJSON* v, shoal_control_t* out)
{
    TRY(parser_check_object(p, v, CONTROL_KEYS, COUNT_OF(CONTROL_KEYS)));
    TRY(parser_get_float(p, v, "speed_gain", 0.0, 0, &out->speed_gain));
    TRY(parser_get_float(p, v, "heading_gain", 0.0, 0, &out->heading_gain));
    return parser_get_float(p, v, "turn_damping", 0.0, 0, &out->turn_damping);
}

static shoal_status_t parse_group(parser_t* p, const cJSON* v, int index, group_t* g,
                                  int64_t* total)
{
    char buf[32];
    TRY(parser_check_object(p, v, GROUP_KEYS, COUNT_OF(GROUP_KEYS)));
    g->shape = SHAPE_DISC;
    g->heading_mode = DIR_RANDOM;
    g->pitch_mode = DIR_FIXED;
    g->radius = 10.0f;
    g->size[0] = g->size[1] = 20.0f;
    g->size[2] = p->dimensions == 3 ? 20.0f : 0.0f;
    g->vehicle = shoal_vehicle_default();
    g->control = shoal_control_default();
    behaviors_set_defaults(g);

    const cJSON* name = MEMBER(v, "name");
    if (name != NULL) {
        TRY(read_name(p, name, "name", &g->name));
    } else {
        snprintf(buf, sizeof buf, "group%d", index);
        if ((g->name = copy_string(buf)) == NULL) return parser_out_of_memory(p);
    }
    if (MEMBER(v, "count") == NULL) return parser_missing(p, "count", NULL);
    int64_t count = 0;
    TRY(parser_get_integer(p, v, "count", 0.0, MAX_AGENTS, &count));
    if ((*total += count) > MAX_AGENTS)
        return parser_fail(p, "count",
                           "the total agent count would be %" PRId64 ", above the limit of %d",
                           *total, MAX_AGENTS);
    g->count = (int32_t)count;

    PARSE_MEMBER(p, v, "spawn", parse_spawn, g);
    PARSE_MEMBER(p, v, "vehicle", parse_vehicle, &g->vehicle);
    PARSE_MEMBER(p, v, "control", parse_control, &g->control);
    const cJSON* target = MEMBER(v, "target");
    if (cJSON_IsString(target)) {
        static const char* const antipode[] = {"antipode"};
        int32_t unused = 0;
        TRY(read_choice(p, target, "target", antipode, 1, &unused, NULL));
        g->target_antipode = 1;
    } else {
        TRY(get_point(p, v, "target", g->target));
    }
    TRY(get_point(p, v, "threat", g->threat));
    TRY(behaviors_parse_group(p, v, g));

    /* The world would clamp a faster start; say so instead of hiding it. */
    if (g->speed > g->vehicle.max_speed) {
        char a[32], b[32];
        return parser_fail(p, "spawn.speed", "must be <= vehicle.max_speed (%s), got %s",
                           format_number(a, g->vehicle.max_speed), format_number(b, g->speed));
    }
    return SHOAL_OK;
}

/* "world": space and the spatial hash. Bounds belong to wrap: without it
 * space is unbounded and a box would be ignored, so giving one is an error. */
static shoal_status_t parse_world(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    char key[32];
    TRY(parser_check_object(p, v, WORLD_KEYS, COUNT_OF(WORLD_KEYS)));
    TRY(parser_get_bool(p, v, "wrap", &s->wrap));
    for (int i = 0; i < 2; i++) {
        const char* name = i == 0 ? "bounds_min" : "bounds_max";
        if (MEMBER(v, name) == NULL) {
            if (s->wrap) return parser_missing(p, name, "(wrap is true: the box is the torus)");
        } else if (!s->wrap) {
            return parser_fail(p, name, "only used with \"wrap\": true (without it space "
                                        "is unbounded)");
        }
        TRY(get_point(p, v, name, i == 0 ? s->bounds_min : s->bounds_max));
    }
    for (int k = 0; s->wrap && k < p->dimensions; k++) {
        if (!(s->bounds_max[k] > s->bounds_min[k])) {
            snprintf(key, sizeof key, "bounds_max[%d]", k);
            return parser_fail(p, key, "must be > bounds_min[%d] (%g) with wrap, got %g", k,
                               (double)s->bounds_min[k], (double)s->bounds_max[k]);
        }
    }
    int64_t reorder = s->reorder_interval;
    TRY(parser_get_float(p, v, "cell_size", 0.0, 0, &s->cell_size));
    TRY(parser_get_integer(p, v, "reorder_interval", 0.0, INT32_MAX, &reorder));
    s->reorder_interval = (int32_t)reorder;
    return SHOAL_OK;
}

/* The first axis on which [lo, hi] leaves the wrapped box, or -1. The box is
 * closed here: on a torus bounds_max is the same place as bounds_min. */
static int outside_box(const shoal_scenario_t* s, const double lo[3], const double hi[3])
{
    for (int k = 0; s->wrap && k < s->dimensions; k++)
        if (lo[k] < s->bounds_min[k] || hi[k] > s->bounds_max[k]) return k;
    return -1;
}

static shoal_status_t parse_obstacle(parser_t* p, const cJSON* v, const shoal_scenario_t* s,
                                     obstacle_t* o)
{
    TRY(parser_check_object(p, v, OBSTACLE_KEYS, COUNT_OF(OBSTACLE_KEYS)));
    if (MEMBER(v, "center") == NULL) return parser_missing(p, "center", NULL);
    if (MEMBER(v, "radius") == NULL) return parser_missing(p, "radius", NULL);
    TRY(get_point(p, v, "center", o->center));
    TRY(parser_get_float(p, v, "radius", 0.0, 0, &o->radius));
    const double c[3] = {o->center[0], o->center[1], o->center[2]};
    int k = outside_box(s, c, c);
    if (k >= 0)
        return parser_fail(p, "center", "%c = %g is outside the wrapped world box (%g to %g)",
                           "xyz"[k], (double)o->center[k], (double)s->bounds_min[k],
                           (double)s->bounds_max[k]);
    return SHOAL_OK;
}

/* "obstacles": spheres (circles in 2D) that avoid steers around. */
static shoal_status_t parse_obstacles(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    if (!cJSON_IsArray(v))
        return parser_fail(p, NULL, "expected an array of objects, got %s", parser_type_name(v));
    int n = cJSON_GetArraySize(v);
    if (n > 0 && (s->obstacles = calloc((size_t)n, sizeof *s->obstacles)) == NULL)
        return parser_out_of_memory(p);
    const cJSON* e = NULL;
    cJSON_ArrayForEach(e, v)
    {
        size_t at = parser_push(p, NULL, s->obstacle_count);
        shoal_status_t st = parse_obstacle(p, e, s, &s->obstacles[s->obstacle_count]);
        parser_pop(p, at);
        TRY(st);
        s->obstacle_count++;
    }
    return SHOAL_OK;
}

/* With wrap, the spawn region (its bounding box, which for a disc, ring or
 * box is the region itself as far as leaving an axis-aligned box goes) must
 * lie inside the world box. */
static shoal_status_t check_spawn_in_box(parser_t* p, const shoal_scenario_t* s, const group_t* g)
{
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        double half = g->shape == SHAPE_BOX     ? 0.5 * g->size[k]
                      : g->shape == SHAPE_POINT ? 0.0
                                                : g->radius;
        lo[k] = g->center[k] - half;
        hi[k] = g->center[k] + half;
    }
    int k = outside_box(s, lo, hi);
    if (k < 0) return SHOAL_OK;
    char shown[64];
    return parser_fail(p, "spawn",
                       "group '%s' spawns agents at %c from %g to %g, outside the wrapped world "
                       "box (world.bounds_min[%d] = %g to world.bounds_max[%d] = %g)",
                       parser_printable(shown, g->name), "xyz"[k], lo[k], hi[k], k,
                       (double)s->bounds_min[k], k, (double)s->bounds_max[k]);
}

static shoal_status_t parse_root(parser_t* p, const cJSON* root, shoal_scenario_t* s)
{
    if (!cJSON_IsObject(root))
        return set_error(p->err, SHOAL_ERR_PARSE, p->source,
                         "the top level must be an object, got %s", parser_type_name(root));
    TRY(parser_check_object(p, root, ROOT_KEYS, COUNT_OF(ROOT_KEYS)));

    /* dimensions first, whatever the key order: vector lengths depend on it. */
    const cJSON* dims = MEMBER(root, "dimensions");
    if (dims != NULL) {
        char a[32];
        if (!cJSON_IsNumber(dims))
            return parser_fail(p, "dimensions", "expected an integer, got %s",
                               parser_type_name(dims));
        if (dims->valuedouble != 2.0 && dims->valuedouble != 3.0)
            return parser_fail(p, "dimensions", "must be 2 or 3, got %s",
                               format_number(a, dims->valuedouble));
        s->dimensions = (int32_t)dims->valuedouble;
    }
    p->dimensions = s->dimensions;

    const cJSON* name = MEMBER(root, "name");
    if (name != NULL) TRY(read_name(p, name, "name", &s->name));
    int64_t seed = (int64_t)s->seed, steps = s->steps, threads = s->threads;
    TRY(parser_get_integer(p, root, "seed", 0.0, MAX_SEED, &seed));
    TRY(parser_get_float(p, root, "dt", 0.0, 1, &s->dt));
    TRY(parser_get_integer(p, root, "steps", 0.0, INT32_MAX, &steps));
    TRY(parser_get_integer(p, root, "threads", 0.0, SHOAL_MAX_THREADS, &threads));
    s->seed = (uint64_t)seed;
    s->steps = (int32_t)steps;
    s->threads = (int32_t)threads;
    /* World and obstacles before groups: spawn regions are checked against
     * the world box. */
    PARSE_MEMBER(p, root, "world", parse_world, s);
    PARSE_MEMBER(p, root, "obstacles", parse_obstacles, s);

    const cJSON* groups = MEMBER(root, "groups");
    if (groups == NULL) return parser_missing(p, "groups", NULL);
    if (!cJSON_IsArray(groups))
        return parser_fail(p, "groups", "expected an array of objects, got %s",
                           parser_type_name(groups));
    int n = cJSON_GetArraySize(groups);
    if (n == 0) return parser_fail(p, "groups", "must hold at least one group");
    if ((s->groups = calloc((size_t)n, sizeof *s->groups)) == NULL) return parser_out_of_memory(p);

    int64_t total = 0;
    const cJSON* g = NULL;
    size_t old = parser_push(p, "groups", 0);
    p->groups = s->groups;
    p->groups_json = groups;
    cJSON_ArrayForEach(g, groups)
    {
        size_t at = parser_push(p, NULL, s->group_count);
        /* Counted before parsing so that destroy frees a partly read group. */
        int i = p->group = s->group_count++;
        shoal_status_t st = parse_group(p, g, i, &s->groups[i], &total);
        if (st == SHOAL_OK) st = check_spawn_in_box(p, s, &s->groups[i]);
        parser_pop(p, at);
        TRY(st);
    }
    parser_pop(p, old);
    s->agent_count = (int32_t)total;
    if (s->name == NULL && (s->name = copy_string("scenario")) == NULL)
        return parser_out_of_memory(p);
    return SHOAL_OK;
}

/* "<source>:<line>:<column>: malformed JSON (...)" for the byte at `pos`.
 * Lines and columns are 1-based; columns count UTF-8 characters, as editors
 * do, and ignore a byte-order mark (cJSON skips it too). */
static shoal_status_t malformed(const char* source, const char* text, size_t length, size_t pos,
                                int after_value, shoal_error_t* err)
{
    char what[64];
    size_t line = 1, start = 0, column = 1;
    for (size_t i = 0; i < pos; i++)
        if (text[i] == '\n') line++, start = i + 1;
    if (start == 0 && pos >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) start = 3;
    for (size_t i = start; i < pos; i++) column += ((unsigned char)text[i] & 0xC0) != 0x80;

    unsigned char c = pos < length ? (unsigned char)text[pos] : 0;
    if (pos >= length)
        snprintf(what, sizeof what, "unexpected end of input");
    else if (c == 0)
        snprintf(what, sizeof what, "unexpected NUL byte");
    else if (after_value)
        snprintf(what, sizeof what, "unexpected content after the top-level value");
    else if (c == '\n' || c == '\r')
        snprintf(what, sizeof what, "unexpected end of line");
    else if (c < 0x20 || c >= 0x7f)
        snprintf(what, sizeof what, "unexpected byte 0x%02X", c);
    else
        snprintf(what, sizeof what, "unexpected '%c'", c);
    return set_error(err, SHOAL_ERR_PARSE, NULL, "%s:%zu:%zu: malformed JSON (%s)", source, line,
                     column, what);
}

/* ---- Loading ---- */

shoal_status_t shoal_scenario_load_string(const char* json, size_t length, const char* source_name,
                                          shoal_scenario_t** out, shoal_error_t* err)
{
    const char* source = source_name != NULL ? source_name : "<string>";
    if (out != NULL) *out = NULL;
    if (out == NULL || (json == NULL && length > 0))
        return set_error(err, SHOAL_ERR_INVALID_ARGUMENT, source, "%s is NULL",
                         out == NULL ? "out" : "json");
    if (length > MAX_BYTES)
        return set_error(err, SHOAL_ERR_CAPACITY, source,
                         "%zu bytes is above the 64 MiB limit for a scenario", length);

    /* cJSON wants a terminated string; the caller's text need not be one. */
    char* text = malloc(length + 1);
    if (text == NULL) return set_error(err, SHOAL_ERR_OUT_OF_MEMORY, source, "out of memory");
    if (length > 0) memcpy(text, json, length);
    text[length] = '\0';

    /* Parsed without require_null_terminated and the rest checked here: the
     * same test, but the message can then say what is wrong. The rest must be
     * cJSON whitespace (bytes 1 to 32) up to `length`, so an embedded NUL is
     * caught too. A NULL tree may also mean cJSON ran out of memory; it does
     * not say which. */
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithOpts(text, &end, 0);
    size_t pos = end != NULL ? (size_t)(end - text) : 0;
    shoal_status_t status = SHOAL_OK;
    if (root == NULL) {
        status = malformed(source, text, length, pos, 0, err);
    } else {
        while (pos < length && (unsigned char)text[pos] <= 32 && text[pos] != '\0') pos++;
        if (pos < length) status = malformed(source, text, length, pos, 1, err);
    }

    shoal_scenario_t* s = NULL;
    if (status == SHOAL_OK && (s = calloc(1, sizeof *s)) == NULL)
        status = set_error(err, SHOAL_ERR_OUT_OF_MEMORY, source, "out of memory");
    if (status == SHOAL_OK) {
        s->dimensions = 2;
        s->seed = 1;
        s->dt = 1.0f / 60.0f;
        s->steps = 600;
        shoal_world_def_t world = shoal_world_default_def();
        s->wrap = world.wrap;
        memcpy(s->bounds_min, world.bounds_min, sizeof s->bounds_min);
        memcpy(s->bounds_max, world.bounds_max, sizeof s->bounds_max);
        s->cell_size = world.cell_size;
        s->reorder_interval = world.reorder_interval;
        parser_t p = {.source = source, .err = err, .dimensions = 2};
        status = parse_root(&p, root, s);
    }
    cJSON_Delete(root);
    free(text);
    if (status != SHOAL_OK) {
        shoal_scenario_destroy(s);
        return status;
    }
    if (err != NULL) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    *out = s;
    return SHOAL_OK;
}

/* Reads a whole file of at most MAX_BYTES, growing the buffer as it goes so
 * that pipes work too; one byte more than the limit tells a file too large. */
static shoal_status_t read_file(const char* path, char** out, size_t* out_length,
                                shoal_error_t* err)
{
    FILE* f = fopen(path, "rb");
    if (f == NULL) return set_error(err, SHOAL_ERR_IO, path, "cannot open: %s", strerror(errno));
    size_t cap = 0, length = 0;
    char* buf = NULL;
    shoal_status_t status = SHOAL_OK;
    while (status == SHOAL_OK) {
        if (length == cap) {
            size_t grown = cap == 0 ? 65536 : (cap * 2 < MAX_BYTES + 1 ? cap * 2 : MAX_BYTES + 1);
            char* bigger = grown > cap ? realloc(buf, grown) : NULL;
            if (grown <= cap)
                status = set_error(err, SHOAL_ERR_CAPACITY, path,
                                   "file is above the 64 MiB limit for a scenario");
            else if (bigger == NULL)
                status = set_error(err, SHOAL_ERR_OUT_OF_MEMORY, path, "out of memory");
            else
                buf = bigger, cap = grown;
            continue;
        }
        errno = 0;
        size_t want = cap - length, got = fread(buf + length, 1, want, f);
        length += got;
        if (got < want && ferror(f)) /* e.g. EISDIR: a directory opens but does not read */
            status = set_error(err, SHOAL_ERR_IO, path, "cannot read: %s",
                               strerror(errno ? errno : EIO));
        else if (got < want)
            break;
    }
    fclose(f);
    if (status != SHOAL_OK) {
        free(buf);
        return status;
    }
    *out = buf;
    *out_length = length;
    return SHOAL_OK;
}

shoal_status_t shoal_scenario_load_file(const char* path, shoal_scenario_t** out,
                                        shoal_error_t* err)
{
    if (out != NULL) *out = NULL;
    if (path == NULL || out == NULL)
        return set_error(err, SHOAL_ERR_INVALID_ARGUMENT, NULL, "%s is NULL",
                         path == NULL ? "path" : "out");
    char* text = NULL;
    size_t length = 0;
    TRY(read_file(path, &text, &length, err));
    shoal_status_t status = shoal_scenario_load_string(text, length, path, out, err);
    free(text);
    return status;
}

void shoal_scenario_destroy(shoal_scenario_t* scenario)
{
    if (scenario == NULL) return;
    for (int32_t i = 0; i < scenario->group_count; i++) {
        free(scenario->groups[i].name);
        free(scenario->groups[i].route);
        free(scenario->groups[i].formation_offsets);
    }
    free(scenario->groups);
    free(scenario->obstacles);
    free(scenario->name);
    free(scenario);
}

const char* shoal_scenario_name(const shoal_scenario_t* scenario)
{
    return scenario != NULL ? scenario->name : "";
}

int32_t shoal_scenario_steps(const shoal_scenario_t* scenario)
{
    return scenario != NULL ? scenario->steps : 0;
}

float shoal_scenario_dt(const shoal_scenario_t* scenario)
{
    return scenario != NULL ? scenario->dt : 0.0f;
}

int32_t shoal_scenario_agent_count(const shoal_scenario_t* scenario)
{
    return scenario != NULL ? scenario->agent_count : 0;
}

shoal_world_def_t shoal_scenario_world_def(const shoal_scenario_t* scenario)
{
    shoal_world_def_t def = shoal_world_default_def();
    if (scenario != NULL) {
        def.dimensions = scenario->dimensions;
        def.seed = scenario->seed;
        def.thread_count = scenario->threads;
        def.wrap = scenario->wrap;
        memcpy(def.bounds_min, scenario->bounds_min, sizeof def.bounds_min);
        memcpy(def.bounds_max, scenario->bounds_max, sizeof def.bounds_max);
        def.cell_size = scenario->cell_size;
        def.reorder_interval = scenario->reorder_interval;
    }
    return def;
}

/* ---- Placement ---- */

/* Angle of direction (x, y, z) for an "inward" (sign -1) or "outward" (+1)
 * heading or pitch. The center itself has no direction: 0 there. */
static double radial_angle(const double off[3], double sign, int pitch)
{
    if (off[0] == 0.0 && off[1] == 0.0 && (!pitch || off[2] == 0.0)) return 0.0;
    return pitch ? atan2(sign * off[2], hypot(off[0], off[1]))
                 : atan2(sign * off[1], sign * off[0]);
}

/* Fills the placed fields of def for agent `key` (its index in the scenario).
 * A disc's radius is R sqrt(u) in 2D and R cbrt(u) in 3D so that density is
 * uniform over the area or volume; a 3D direction is uniform on the sphere
 * (z uniform in [-1, 1], azimuth uniform). */
static void place_agent(const shoal_scenario_t* s, const group_t* g, uint64_t key,
                        shoal_agent_def_t* def)
{
    const int d3 = s->dimensions == 3;
    double u[5], off[3] = {0.0, 0.0, 0.0};
    for (uint32_t k = 0; k < 5; k++) u[k] = rng_unit(s->seed, key, k, PLACEMENT_STREAM);

    if (g->shape == SHAPE_DISC || g->shape == SHAPE_RING) {
        int disc = g->shape == SHAPE_DISC;
        if (d3) {
            double r = g->radius * (disc ? cbrt(u[DRAW_RADIUS]) : 1.0);
            double z = 1.0 - 2.0 * u[DRAW_ANGLE], phi = 2.0 * PI * u[DRAW_AZIMUTH];
            double rho = sqrt(fmax(0.0, 1.0 - z * z));
            off[0] = r * rho * cos(phi);
            off[1] = r * rho * sin(phi);
            off[2] = r * z;
        } else {
            double r = g->radius * (disc ? sqrt(u[DRAW_RADIUS]) : 1.0);
            double a = 2.0 * PI * u[DRAW_ANGLE];
            off[0] = r * cos(a);
            off[1] = r * sin(a);
        }
    } else if (g->shape == SHAPE_BOX) {
        for (int k = 0; k < (d3 ? 3 : 2); k++) off[k] = (u[k] - 0.5) * g->size[k];
    }

    double heading = g->heading, pitch = 0.0;
    if (g->heading_mode == DIR_RANDOM) heading = 2.0 * PI * u[DRAW_HEADING] - PI;
    if (g->heading_mode >= DIR_INWARD)
        heading = radial_angle(off, g->heading_mode == DIR_INWARD ? -1.0 : 1.0, 0);
    if (d3) {
        pitch = g->pitch;
        if (g->pitch_mode == DIR_RANDOM) pitch = (u[DRAW_PITCH] - 0.5) * (PI / 2.0);
        if (g->pitch_mode >= DIR_INWARD)
            pitch = radial_angle(off, g->pitch_mode == DIR_INWARD ? -1.0 : 1.0, 1);
    }
    const double forward[3] = {cos(pitch) * cos(heading), cos(pitch) * sin(heading), sin(pitch)};

    for (int k = 0; k < 3; k++) {
        def->position[k] = (float)(g->center[k] + off[k]);
        def->velocity[k] = g->speed > 0.0f ? (float)(g->speed * forward[k]) : 0.0f; /* no -0 */
        /* The antipode: the spawn position reflected through the center. */
        def->target[k] = g->target_antipode ? (float)(g->center[k] - off[k]) : g->target[k];
        def->threat[k] = g->threat[k];
    }
    def->heading = (float)heading;
    def->pitch = (float)pitch;
}

/* The handle of the agent `ref` names, from the handles added so far: groups
 * are added in file order, so group j's agents follow the earlier groups'. */
static shoal_agent_t ref_handle(const shoal_scenario_t* s, const shoal_agent_t* added,
                                agent_ref_t ref)
{
    const shoal_agent_t none = {0, 0, 0};
    if (ref.group < 0) return none;
    int32_t first = 0;
    for (int32_t j = 0; j < ref.group; j++) first += s->groups[j].count;
    return added[first + ref.index];
}

shoal_status_t shoal_scenario_populate(const shoal_scenario_t* scenario, shoal_world_t* world)
{
    if (scenario == NULL || world == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    if (shoal_world_dimensions(world) != scenario->dimensions)
        return world_fail(world, SHOAL_ERR_INVALID_ARGUMENT,
                          "scenario_populate: scenario '%s' is %dD but the world is %dD",
                          scenario->name, (int)scenario->dimensions,
                          (int)shoal_world_dimensions(world));

    if (world->in_step)
        return world_fail(world, SHOAL_ERR_BUSY, "scenario_populate: called from inside a step");
    /* Scratch from the world's allocator: a host that gives the world its
     * memory gives it for this too. */
    size_t n = scenario->agent_count > 0 ? (size_t)scenario->agent_count : 1;
    size_t m = scenario->obstacle_count > 0 ? (size_t)scenario->obstacle_count : 1;
    shoal_agent_t* added = mem_alloc(&world->alloc, n * sizeof *added);
    int32_t* obstacle_ids = mem_alloc(&world->alloc, m * sizeof *obstacle_ids);
    if (added == NULL || obstacle_ids == NULL) {
        mem_free(&world->alloc, added, n * sizeof *added);
        mem_free(&world->alloc, obstacle_ids, m * sizeof *obstacle_ids);
        return world_fail(world, SHOAL_ERR_OUT_OF_MEMORY,
                          "scenario_populate: out of memory for %zu handles", n + m);
    }
    int32_t slot_high_before = world->slot_high;
    int32_t obstacle_high_before = obstacles_of(world)->obstacle_high;

    shoal_status_t status = SHOAL_OK;
    int32_t obstacles = 0;
    for (int32_t i = 0; i < scenario->obstacle_count && status == SHOAL_OK; i++) {
        const obstacle_t* o = &scenario->obstacles[i];
        status = shoal_world_add_obstacle(world, o->center, o->radius, &obstacle_ids[obstacles]);
        obstacles += status == SHOAL_OK;
    }

    /* Routes first (agents name them); undone by truncation on failure. */
    int32_t routes_before = shoal_world_route_count(world);
    int32_t done = 0;
    uint64_t key = 0;
    for (int32_t gi = 0; gi < scenario->group_count && status == SHOAL_OK; gi++) {
        const group_t* g = &scenario->groups[gi];
        int32_t route = -1;
        if (g->route_length > 0)
            status = shoal_world_add_route(world, g->route, g->route_length, &route);
        if (status != SHOAL_OK) break;
        int32_t group_start = done;
        shoal_agent_def_t def = shoal_agent_default_def();
        def.vehicle = g->vehicle;
        def.control = g->control;
        memcpy(def.weights, g->weights, sizeof def.weights);
        def.arrive_gain = g->arrive_gain;
        def.depart_gain = g->depart_gain;
        def.neighbors = g->neighbors;
        def.wander = g->wander;
        def.pursuit = g->pursuit;
        def.pursuit.target = ref_handle(scenario, added, g->pursuit_target);
        def.follow = g->follow;
        def.follow.leader = ref_handle(scenario, added, g->leader);
        def.avoid = g->avoid;
        def.dseek = g->dseek;
        if (route >= 0) def.dseek.route = route;
        def.group = (uint32_t)gi;
        for (int32_t i = 0; i < g->count && status == SHOAL_OK; i++, key++) {
            /* "previous": the agent added just before, in this group. */
            if (g->follow_previous)
                def.follow.leader =
                    i == 0 ? ref_handle(scenario, added, g->first_leader) : added[done - 1];
            place_agent(scenario, g, key, &def);
            status = shoal_agent_add(world, &def, &added[done]);
            done += status == SHOAL_OK;
        }
        if (status == SHOAL_OK && g->formation_offsets)
            status = shoal_formation_arrive(world, added + group_start, g->count,
                                            (const float(*)[3])g->formation_offsets, &g->formation_anchor);
    }
    /* Undo newest first, exactly: the handles, obstacle ids and routes to
     * come are those the world would have given without this call. The
     * world's last error still describes the add that failed: undoing does
     * not fail. */
    if (status != SHOAL_OK) {
        while (done > 0) world_undo_add(world, added[--done], slot_high_before);
        while (obstacles > 0) shoal_world_remove_obstacle(world, obstacle_ids[--obstacles]);
        world_truncate_obstacles(world, obstacle_high_before);
        world_truncate_routes(world, routes_before);
    }
    mem_free(&world->alloc, added, n * sizeof *added);
    mem_free(&world->alloc, obstacle_ids, m * sizeof *obstacle_ids);
    return status;
}

int32_t shoal_scenario_group_count(const shoal_scenario_t* scenario)
{
    return scenario ? scenario->group_count : 0;
}

const char* shoal_scenario_group_name(const shoal_scenario_t* scenario, int32_t index)
{
    if (!scenario || index < 0 || index >= scenario->group_count) return NULL;
    return scenario->groups[index].name;
}

int32_t shoal_scenario_group_size(const shoal_scenario_t* scenario, int32_t index)
{
    if (!scenario || index < 0 || index >= scenario->group_count) return 0;
    return scenario->groups[index].count;
}
