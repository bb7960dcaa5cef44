/* The scenario parser's shared state and typed readers, for the two files
 * that read scenarios: scenario.c (the file, world, obstacles, groups, spawn,
 * vehicle, control; loading and populate) and scenario_behaviors.c (the
 * behaviors of a group and their parameter objects, and references from one
 * group's agents to another's). Nothing outside src/io uses it. */
#ifndef SHOAL_IO_SCENARIO_PARSE_H
#define SHOAL_IO_SCENARIO_PARSE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "shoal/shoal.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#define PI 3.14159265358979323846

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

#define MEMBER(obj, key) cJSON_GetObjectItemCaseSensitive((obj), (key))

/* Runs `parse` on obj[key], with the key on the path, when the key is there. */
#define PARSE_MEMBER(p, obj, key, parse, out)                                                      \
    do {                                                                                           \
        const cJSON* member_ = MEMBER((obj), (key));                                               \
        if (member_ != NULL) {                                                                     \
            size_t old_ = parser_push((p), (key), 0);                                              \
            shoal_status_t s_ = parse((p), member_, (out));                                        \
            parser_pop((p), old_);                                                                 \
            TRY(s_);                                                                               \
        }                                                                                          \
    } while (0)

/* One agent of the scenario named by group and index within it; group -1 is
 * nobody. References are checked while parsing (the group exists, comes
 * before the referring group, and has the index), so populate only looks the
 * handle up. */
typedef struct agent_ref_t {
    int32_t group, index;
} agent_ref_t;

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
    /* Behavior parameters; the handles in pursuit and follow stay null here
     * and are filled from the references below by populate. */
    shoal_neighbors_t neighbors;
    shoal_wander_t wander;
    shoal_pursuit_t pursuit;
    shoal_follow_t follow;
    shoal_avoid_t avoid;
    shoal_dseek_t dseek;
    shoal_waypoint_t* route;       /* dseek.route in the file: made a world route by populate */
    int32_t route_length;
    shoal_waypoint_t formation_anchor;
    float (*formation_offsets)[3]; /* one per agent when the group arrives in formation */
    agent_ref_t pursuit_target, leader, first_leader;
    int32_t follow_previous; /* each agent follows the one added before it in this group */
} group_t;

/* Parsing state: where errors go, and the JSON path of the object being read
 * ("groups[1].vehicle"); readers name the key within it. While a group is
 * read, `groups` holds the groups read so far and `group` is its index, so
 * that references can be checked against earlier groups; `groups_json` is
 * the whole array, so that a reference to a later group can be told apart
 * from a name that does not exist. */
typedef struct parser_t {
    const char* source;
    shoal_error_t* err;
    int32_t dimensions;
    size_t path_len;
    char path[256];
    const group_t* groups;
    int32_t group;
    const cJSON* groups_json;
} parser_t;

/* Error for the value at the current path + `key` (NULL: the object itself;
 * "[2]": an element). Always returns SHOAL_ERR_PARSE. */
PRINTF_LIKE(3, 4) shoal_status_t parser_fail(parser_t* p, const char* key, const char* fmt, ...);
/* "missing required key '<path>.<key>'" plus an optional reason. */
shoal_status_t parser_missing(parser_t* p, const char* key, const char* why);
shoal_status_t parser_out_of_memory(parser_t* p);
/* Append `key` (or "[index]" when key is NULL) to the path; returns what
 * parser_pop needs to restore it. */
size_t parser_push(parser_t* p, const char* key, int index);
void parser_pop(parser_t* p, size_t old);

/* Rejects anything but an object of the given keys (unknown keys get a
 * suggestion; duplicates are errors). */
shoal_status_t parser_check_object(parser_t* p, const cJSON* obj, const char* const* keys,
                                   size_t n);
/* Read obj[key] when present, else leave *out at its default. Floats must be
 * finite, fit a float and be >= min (> min when `exclusive`). */
shoal_status_t parser_get_float(parser_t* p, const cJSON* obj, const char* key, double min,
                                int exclusive, float* out);
shoal_status_t parser_get_integer(parser_t* p, const cJSON* obj, const char* key, double min,
                                  double max, int64_t* out);
/* A JSON boolean, stored as 0 or 1. */
shoal_status_t parser_get_bool(parser_t* p, const cJSON* obj, const char* key, int32_t* out);

/* The array obj-member `key` (v is that member) of exactly `dimensions`
 * numbers, each >= min; names2/names3 describe it ("[x, y]"). */
shoal_status_t parser_read_vector(parser_t* p, const cJSON* v, const char* key, double min,
                                  const char* names2, const char* names3, float out[3]);

/* "a number", "a string", ... for "expected X, got Y". */
const char* parser_type_name(const cJSON* v);
/* User text made safe to quote in a message (control bytes, length). */
const char* parser_printable(char buf[64], const char* s);
/* The name closest to `s` when it is a likely typo, else NULL. */
const char* parser_suggest(const char* s, const char* const* names, size_t n);

/* scenario_behaviors.c: defaults of a group's behavior fields, and the
 * group keys "behaviors", "neighbors", "wander", "pursuit", "follow" and
 * "avoid" of the group object `v` (whose other keys scenario.c reads). */
void behaviors_set_defaults(group_t* g);
shoal_status_t behaviors_parse_group(parser_t* p, const cJSON* v, group_t* g);

#endif /* SHOAL_IO_SCENARIO_PARSE_H */
