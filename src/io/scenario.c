/* Scenario files: a JSON description of a world (dimensions, seed, dt, steps,
 * threads) and of groups of agents placed by a spawn shape. docs/scenarios.md
 * is the reference for every key; this file is its only reader.
 *
 * Decisions:
 * - Parsing is strict. An unknown key, a duplicate key, a wrong type or a value
 *   out of range is an error naming its JSON path, because a silently ignored
 *   typo ("max_sped") gives a run that looks right and is not.
 * - cJSON keeps no source positions for values, so only malformed JSON gets a
 *   line:column; every other error names the JSON path instead.
 * - The loaded scenario holds plain structs, not the cJSON tree: the tree is
 *   freed at once and populate has no JSON left to fail on.
 * - Placement draws are rng_unit(seed, agent index in the scenario, draw,
 *   stream) with a fixed draw number per purpose, so an agent's placement is a
 *   pure function of its index: no generator state, no dependence on order.
 * - populate uses only the public API, like any host would, and keeps the
 *   handles it added so that a failure removes exactly those again.
 */
#include "shoal/scenario.h"

#include <cjson/cJSON.h>
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

#define MAX_BYTES ((size_t)64 * 1024 * 1024)
#define MAX_AGENTS 100000000
#define MAX_THREADS 1024
#define MAX_NAME 255
/* JSON integers arrive as doubles, exact only up to 2^53: a larger seed
 * would silently be another seed. */
#define MAX_SEED 9007199254740992.0
/* Random stream of placement, apart from the streams the world draws from. */
#define PLACEMENT_STREAM 0x5ce7a210u
#define PI 3.14159265358979323846
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#ifdef __GNUC__
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        shoal_status_t try_status_ = (expr);                                                       \
        if (try_status_ != SHOAL_OK) return try_status_;                                           \
    } while (0)

enum { SHAPE_POINT, SHAPE_DISC, SHAPE_RING, SHAPE_BOX };
enum { DIR_FIXED, DIR_RANDOM, DIR_INWARD, DIR_OUTWARD }; /* DIR_RANDOM.. as in DIRECTION_NAMES */
/* Draw numbers (rng_unit's counter) of one agent's placement. A box uses
 * draws 0 to 2 for x, y, z. */
enum { DRAW_RADIUS = 0, DRAW_ANGLE = 1, DRAW_AZIMUTH = 2, DRAW_HEADING = 3, DRAW_PITCH = 4 };

typedef struct group_t {
    char* name;
    int32_t count, shape, heading_mode, pitch_mode;
    float heading, pitch; /* rad, used when the mode is DIR_FIXED */
    float center[3], size[3], radius, speed;
    shoal_vehicle_t vehicle;
    shoal_control_t control;
    float weights[SHOAL_BEHAVIOR_SLOTS], arrive_gain, depart_gain;
    int32_t target_antipode;
    float target[3], threat[3];
} group_t;

struct shoal_scenario_t {
    char* name;
    int32_t dimensions, steps, threads, agent_count, group_count;
    uint64_t seed;
    float dt;
    group_t* groups;
};

/* Parsing state: where errors go, and the JSON path of the object being read
 * ("groups[1].vehicle"); readers name the key within it. */
typedef struct parser_t {
    const char* source;
    shoal_error_t* err;
    int32_t dimensions;
    size_t path_len;
    char path[256];
} parser_t;

/* Known keys of each kind of object. Behavior keys follow shoal_behavior_t. */
static const char* const ROOT_KEYS[] = {"name",  "dimensions", "seed",  "dt",
                                        "steps", "threads",    "groups"};
static const char* const GROUP_KEYS[] = {"name",    "count",     "spawn",  "vehicle",
                                         "control", "behaviors", "target", "threat"};
static const char* const SPAWN_KEYS[] = {"shape",   "center", "radius", "size",
                                         "heading", "pitch",  "speed"};
static const char* const VEHICLE_KEYS[] = {"mass",      "inertia",       "max_force", "max_torque",
                                           "max_speed", "max_turn_rate", "radius"};
static const char* const CONTROL_KEYS[] = {"speed_gain", "heading_gain", "turn_damping"};
static const char* const BEHAVIOR_KEYS[] = {"seek", "flee", "arrive", "depart"};
static const char* const WEIGHT_GAIN_KEYS[] = {"weight", "gain"};
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
PRINTF_LIKE(3, 4) static shoal_status_t fail_at(parser_t* p, const char* key, const char* fmt, ...)
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

static size_t path_push(parser_t* p, const char* key, int index)
{
    size_t old = p->path_len;
    p->path_len = key ? append(p->path, sizeof p->path, old, "%s%s", old ? "." : "", key)
                      : append(p->path, sizeof p->path, old, "[%d]", index);
    return old;
}

static void path_pop(parser_t* p, size_t old)
{
    p->path_len = old;
    p->path[old] = '\0';
}

static const char* type_name(const cJSON* v)
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
static const char* printable(char buf[64], const char* s)
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
static const char* suggest(const char* s, const char* const* names, size_t n)
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
static shoal_status_t check_object(parser_t* p, const cJSON* obj, const char* const* keys,
                                   size_t n)
{
    char shown[64];
    if (!cJSON_IsObject(obj)) return fail_at(p, NULL, "expected an object, got %s", type_name(obj));
    const cJSON* child = NULL;
    cJSON_ArrayForEach(child, obj)
    {
        size_t i = 0;
        while (i < n && strcmp(child->string, keys[i]) != 0) i++;
        if (i == n) {
            if (p->err == NULL) return SHOAL_ERR_PARSE;
            const char* close = suggest(child->string, keys, n);
            size_t old = path_push(p, printable(shown, child->string), 0);
            set_error(p->err, SHOAL_ERR_PARSE, p->source, "unknown key '%s'%s%s%s", p->path,
                      close ? "; did you mean '" : "", close ? close : "", close ? "'?" : "");
            path_pop(p, old);
            return SHOAL_ERR_PARSE;
        }
        for (const cJSON* prev = obj->child; prev != child; prev = prev->next) {
            if (strcmp(prev->string, child->string) == 0) {
                size_t old = path_push(p, child->string, 0);
                set_error(p->err, SHOAL_ERR_PARSE, p->source, "duplicate key '%s'", p->path);
                path_pop(p, old);
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
    if (!cJSON_IsNumber(v)) return fail_at(p, key, "expected a number, got %s", type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d) || fabs(d) > FLT_MAX)
        return fail_at(p, key, "must be finite and at most %g in magnitude", (double)FLT_MAX);
    if (exclusive ? !(d > min) : !(d >= min))
        return fail_at(p, key, "must be %s %s, got %s", exclusive ? ">" : ">=",
                       format_number(a, min), format_number(b, d));
    if (exclusive && !((float)d > (float)min)) /* a tiny double can round to a float 0 */
        return fail_at(p, key, "must be > %s, got %s (%s as a float)", format_number(a, min),
                       format_number(b, d), format_number(c, (double)(float)d));
    *out = (float)d;
    return SHOAL_OK;
}

static shoal_status_t read_integer(parser_t* p, const cJSON* v, const char* key, double min,
                                   double max, int64_t* out)
{
    char a[32], b[32];
    if (!cJSON_IsNumber(v)) return fail_at(p, key, "expected an integer, got %s", type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d)) return fail_at(p, key, "must be a finite integer");
    if (d != floor(d)) return fail_at(p, key, "must be an integer, got %s", format_number(a, d));
    if (d < min || d > max)
        return fail_at(p, key, "must be %s %s, got %s", d < min ? ">=" : "<=",
                       format_number(a, d < min ? min : max), format_number(b, d));
    *out = (int64_t)d;
    return SHOAL_OK;
}

/* An array of exactly `dimensions` numbers, each >= min. */
static shoal_status_t read_vector(parser_t* p, const cJSON* v, const char* key, double min,
                                  const char* names2, const char* names3, float out[3])
{
    const char* names = p->dimensions == 3 ? names3 : names2;
    if (!cJSON_IsArray(v))
        return fail_at(p, key, "expected an array %s, got %s", names, type_name(v));
    int n = cJSON_GetArraySize(v);
    if (n != p->dimensions)
        return fail_at(p, key, "expected %d numbers %s in a %dD scenario, got %d", p->dimensions,
                       names, p->dimensions, n);
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
    if (!cJSON_IsString(v)) return fail_at(p, key, "expected %s, got %s", list, type_name(v));
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = (int32_t)i;
            return SHOAL_OK;
        }
    }
    const char* close = suggest(v->valuestring, names, n);
    return fail_at(p, key, "expected %s, got \"%s\"%s%s%s", list, printable(shown, v->valuestring),
                   close ? "; did you mean \"" : "", close ? close : "", close ? "\"?" : "");
}

static shoal_status_t read_name(parser_t* p, const cJSON* v, const char* key, char** out)
{
    if (!cJSON_IsString(v)) return fail_at(p, key, "expected a string, got %s", type_name(v));
    size_t n = strlen(v->valuestring);
    if (n > MAX_NAME) return fail_at(p, key, "must be at most %d bytes, got %zu", MAX_NAME, n);
    if ((*out = copy_string(v->valuestring)) == NULL)
        return set_error(p->err, SHOAL_ERR_OUT_OF_MEMORY, p->source, "out of memory");
    return SHOAL_OK;
}

/* Getters: read obj[key] when present, else leave *out at its default. */
#define MEMBER(obj, key) cJSON_GetObjectItemCaseSensitive((obj), (key))

static shoal_status_t get_float(parser_t* p, const cJSON* obj, const char* key, double min,
                                int exclusive, float* out)
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? read_float(p, v, key, min, exclusive, out) : SHOAL_OK;
}

static shoal_status_t get_integer(parser_t* p, const cJSON* obj, const char* key, double min,
                                  double max, int64_t* out)
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? read_integer(p, v, key, min, max, out) : SHOAL_OK;
}

static shoal_status_t get_point(parser_t* p, const cJSON* obj, const char* key, float out[3])
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? read_vector(p, v, key, -DBL_MAX, "[x, y]", "[x, y, z]", out) : SHOAL_OK;
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

/* Runs `parse` on obj[key], with the key on the path, when the key is there. */
#define PARSE_MEMBER(p, obj, key, parse, out)                                                      \
    do {                                                                                           \
        const cJSON* member_ = MEMBER((obj), (key));                                               \
        if (member_ != NULL) {                                                                     \
            size_t old_ = path_push((p), (key), 0);                                                \
            shoal_status_t s_ = parse((p), member_, (out));                                        \
            path_pop((p), old_);                                                                   \
            TRY(s_);                                                                               \
        }                                                                                          \
    } while (0)

/* ---- Scenario structure ---- */

static shoal_status_t parse_spawn(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(check_object(p, v, SPAWN_KEYS, COUNT_OF(SPAWN_KEYS)));
    const cJSON* shape = MEMBER(v, "shape");
    if (shape != NULL)
        TRY(read_choice(p, shape, "shape", SHAPE_NAMES, COUNT_OF(SHAPE_NAMES), &g->shape, NULL));
    TRY(get_point(p, v, "center", g->center));
    TRY(get_float(p, v, "radius", 0.0, 0, &g->radius));
    const cJSON* size = MEMBER(v, "size");
    if (size != NULL) TRY(read_vector(p, size, "size", 0.0, "[w, h]", "[w, h, d]", g->size));
    TRY(get_direction(p, v, "heading", &g->heading_mode, &g->heading));
    /* 2D agents have no pitch; accepting one would hide a mistake. */
    if (p->dimensions == 2 && MEMBER(v, "pitch") != NULL)
        return fail_at(p, "pitch", "only allowed in 3D scenarios (dimensions is 2)");
    TRY(get_direction(p, v, "pitch", &g->pitch_mode, &g->pitch));
    return get_float(p, v, "speed", 0.0, 0, &g->speed);
}

static shoal_status_t parse_vehicle(parser_t* p, const cJSON* v, shoal_vehicle_t* out)
{
    TRY(check_object(p, v, VEHICLE_KEYS, COUNT_OF(VEHICLE_KEYS)));
    TRY(get_float(p, v, "mass", 0.0, 1, &out->mass));
    TRY(get_float(p, v, "inertia", 0.0, 1, &out->inertia));
    TRY(get_float(p, v, "max_force", 0.0, 0, &out->max_force));
    TRY(get_float(p, v, "max_torque", 0.0, 0, &out->max_torque));
    TRY(get_float(p, v, "max_speed", 0.0, 0, &out->max_speed));
    TRY(get_float(p, v, "max_turn_rate", 0.0, 0, &out->max_turn_rate));
    return get_float(p, v, "radius", 0.0, 0, &out->radius);
}

static shoal_status_t parse_control(parser_t* p, const cJSON* v, shoal_control_t* out)
{
    TRY(check_object(p, v, CONTROL_KEYS, COUNT_OF(CONTROL_KEYS)));
    TRY(get_float(p, v, "speed_gain", 0.0, 0, &out->speed_gain));
    TRY(get_float(p, v, "heading_gain", 0.0, 0, &out->heading_gain));
    return get_float(p, v, "turn_damping", 0.0, 0, &out->turn_damping);
}

/* One behavior entry: {"weight"} or, for arrive and depart, {"weight", "gain"}.
 * A "gain" on seek or flee is an unknown key: they have none. */
static shoal_status_t parse_behavior(parser_t* p, const cJSON* v, float* weight, float* gain)
{
    *weight = 1.0f;
    TRY(check_object(p, v, WEIGHT_GAIN_KEYS, gain != NULL ? 2 : 1));
    TRY(get_float(p, v, "weight", 0.0, 0, weight));
    return gain != NULL ? get_float(p, v, "gain", 0.0, 1, gain) : SHOAL_OK;
}

static shoal_status_t parse_behaviors(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(check_object(p, v, BEHAVIOR_KEYS, COUNT_OF(BEHAVIOR_KEYS)));
    for (int b = 0; b < (int)COUNT_OF(BEHAVIOR_KEYS); b++) {
        const cJSON* e = MEMBER(v, BEHAVIOR_KEYS[b]);
        if (e == NULL) continue;
        float* gain = b == SHOAL_BEHAVIOR_ARRIVE   ? &g->arrive_gain
                      : b == SHOAL_BEHAVIOR_DEPART ? &g->depart_gain
                                                   : NULL;
        size_t old = path_push(p, BEHAVIOR_KEYS[b], 0);
        shoal_status_t s = parse_behavior(p, e, &g->weights[b], gain);
        path_pop(p, old);
        TRY(s);
    }
    return SHOAL_OK;
}

static shoal_status_t parse_group(parser_t* p, const cJSON* v, int index, group_t* g,
                                  int64_t* total)
{
    char buf[32];
    TRY(check_object(p, v, GROUP_KEYS, COUNT_OF(GROUP_KEYS)));
    g->shape = SHAPE_DISC;
    g->heading_mode = DIR_RANDOM;
    g->pitch_mode = DIR_FIXED;
    g->radius = 10.0f;
    g->size[0] = g->size[1] = 20.0f;
    g->size[2] = p->dimensions == 3 ? 20.0f : 0.0f;
    g->vehicle = shoal_vehicle_default();
    g->control = shoal_control_default();
    shoal_agent_def_t defaults = shoal_agent_default_def();
    g->arrive_gain = defaults.arrive_gain;
    g->depart_gain = defaults.depart_gain;

    const cJSON* name = MEMBER(v, "name");
    if (name != NULL) {
        TRY(read_name(p, name, "name", &g->name));
    } else {
        snprintf(buf, sizeof buf, "group%d", index);
        if ((g->name = copy_string(buf)) == NULL)
            return set_error(p->err, SHOAL_ERR_OUT_OF_MEMORY, p->source, "out of memory");
    }
    if (MEMBER(v, "count") == NULL)
        return set_error(p->err, SHOAL_ERR_PARSE, p->source, "missing required key '%s.count'",
                         p->path);
    int64_t count = 0;
    TRY(get_integer(p, v, "count", 0.0, MAX_AGENTS, &count));
    if ((*total += count) > MAX_AGENTS)
        return fail_at(p, "count", "the total agent count would be %" PRId64
                       ", above the limit of %d", *total, MAX_AGENTS);
    g->count = (int32_t)count;

    PARSE_MEMBER(p, v, "spawn", parse_spawn, g);
    PARSE_MEMBER(p, v, "vehicle", parse_vehicle, &g->vehicle);
    PARSE_MEMBER(p, v, "control", parse_control, &g->control);
    PARSE_MEMBER(p, v, "behaviors", parse_behaviors, g);
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

    /* The world would clamp a faster start; say so instead of hiding it. */
    if (g->speed > g->vehicle.max_speed) {
        char a[32], b[32];
        return fail_at(p, "spawn.speed", "must be <= vehicle.max_speed (%s), got %s",
                       format_number(a, g->vehicle.max_speed), format_number(b, g->speed));
    }
    return SHOAL_OK;
}

static shoal_status_t parse_root(parser_t* p, const cJSON* root, shoal_scenario_t* s)
{
    if (!cJSON_IsObject(root))
        return set_error(p->err, SHOAL_ERR_PARSE, p->source,
                         "the top level must be an object, got %s", type_name(root));
    TRY(check_object(p, root, ROOT_KEYS, COUNT_OF(ROOT_KEYS)));

    /* dimensions first, whatever the key order: vector lengths depend on it. */
    const cJSON* dims = MEMBER(root, "dimensions");
    if (dims != NULL) {
        char a[32];
        if (!cJSON_IsNumber(dims))
            return fail_at(p, "dimensions", "expected an integer, got %s", type_name(dims));
        if (dims->valuedouble != 2.0 && dims->valuedouble != 3.0)
            return fail_at(p, "dimensions", "must be 2 or 3, got %s",
                           format_number(a, dims->valuedouble));
        s->dimensions = (int32_t)dims->valuedouble;
    }
    p->dimensions = s->dimensions;

    const cJSON* name = MEMBER(root, "name");
    if (name != NULL) TRY(read_name(p, name, "name", &s->name));
    int64_t seed = (int64_t)s->seed, steps = s->steps, threads = s->threads;
    TRY(get_integer(p, root, "seed", 0.0, MAX_SEED, &seed));
    TRY(get_float(p, root, "dt", 0.0, 1, &s->dt));
    TRY(get_integer(p, root, "steps", 0.0, INT32_MAX, &steps));
    TRY(get_integer(p, root, "threads", 0.0, MAX_THREADS, &threads));
    s->seed = (uint64_t)seed;
    s->steps = (int32_t)steps;
    s->threads = (int32_t)threads;

    const cJSON* groups = MEMBER(root, "groups");
    if (groups == NULL)
        return set_error(p->err, SHOAL_ERR_PARSE, p->source, "missing required key 'groups'");
    if (!cJSON_IsArray(groups))
        return fail_at(p, "groups", "expected an array of objects, got %s", type_name(groups));
    int n = cJSON_GetArraySize(groups);
    if (n == 0) return fail_at(p, "groups", "must hold at least one group");
    if ((s->groups = calloc((size_t)n, sizeof *s->groups)) == NULL)
        return set_error(p->err, SHOAL_ERR_OUT_OF_MEMORY, p->source, "out of memory");

    int64_t total = 0;
    const cJSON* g = NULL;
    size_t old = path_push(p, "groups", 0);
    cJSON_ArrayForEach(g, groups)
    {
        size_t at = path_push(p, NULL, s->group_count);
        /* Counted before parsing so that destroy frees a partly read group. */
        int i = s->group_count++;
        shoal_status_t st = parse_group(p, g, i, &s->groups[i], &total);
        path_pop(p, at);
        TRY(st);
    }
    path_pop(p, old);
    s->agent_count = (int32_t)total;
    if (s->name == NULL && (s->name = copy_string("scenario")) == NULL)
        return set_error(p->err, SHOAL_ERR_OUT_OF_MEMORY, p->source, "out of memory");
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
    for (int32_t i = 0; i < scenario->group_count; i++) free(scenario->groups[i].name);
    free(scenario->groups);
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

shoal_status_t shoal_scenario_populate(const shoal_scenario_t* scenario, shoal_world_t* world)
{
    if (scenario == NULL || world == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    if (shoal_world_dimensions(world) != scenario->dimensions)
        return world_fail(world, SHOAL_ERR_INVALID_ARGUMENT,
                          "scenario_populate: scenario '%s' is %dD but the world is %dD",
                          scenario->name, (int)scenario->dimensions,
                          (int)shoal_world_dimensions(world));

    size_t n = scenario->agent_count > 0 ? (size_t)scenario->agent_count : 1;
    shoal_agent_t* added = malloc(n * sizeof *added);
    if (added == NULL)
        return world_fail(world, SHOAL_ERR_OUT_OF_MEMORY,
                          "scenario_populate: out of memory for %zu handles", n);

    shoal_status_t status = SHOAL_OK;
    int32_t done = 0;
    uint64_t key = 0;
    for (int32_t gi = 0; gi < scenario->group_count && status == SHOAL_OK; gi++) {
        const group_t* g = &scenario->groups[gi];
        shoal_agent_def_t def = shoal_agent_default_def();
        def.vehicle = g->vehicle;
        def.control = g->control;
        memcpy(def.weights, g->weights, sizeof def.weights);
        def.arrive_gain = g->arrive_gain;
        def.depart_gain = g->depart_gain;
        def.group = (uint32_t)gi;
        for (int32_t i = 0; i < g->count && status == SHOAL_OK; i++, key++) {
            place_agent(scenario, g, key, &def);
            status = shoal_agent_add(world, &def, &added[done]);
            done += status == SHOAL_OK;
        }
    }
    /* Undo newest first. The world's last error still describes the add that
     * failed: removing a live agent does not fail. */
    if (status != SHOAL_OK)
        while (done > 0) shoal_agent_remove(world, added[--done]);
    free(added);
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
