/* The strict JSON reader: a JSON document parsed from text (malformed JSON
 * reported by line and column), and typed readers that walk its cJSON tree
 * with the JSON path of the value being read, so that every error says what
 * is wrong, where ("groups[1].vehicle.max_speed") and what was expected.
 * Unknown and duplicate keys, wrong types and values out of range are errors.
 *
 * It knows nothing of scenarios: scenario.c and scenario_behaviors.c (the
 * schema) use it to build the in-memory scenario. Nothing outside src/io
 * uses it. */
#ifndef SHOAL_IO_JSON_READER_H
#define SHOAL_IO_JSON_READER_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "shoal/shoal.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#ifdef __GNUC__
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

#define TRY(expr)                                                                                            \
    do {                                                                                                     \
        shoal_status_t try_status_ = (expr);                                                                 \
        if (try_status_ != SHOAL_OK) return try_status_;                                                     \
    } while (0)

#define MEMBER(obj, key) cJSON_GetObjectItemCaseSensitive((obj), (key))

/* Runs `parse` on obj[key], with the key on the path, when the key is there. */
#define PARSE_MEMBER(p, obj, key, parse, out)                                                                \
    do {                                                                                                     \
        const cJSON* member_ = MEMBER((obj), (key));                                                         \
        if (member_ != NULL) {                                                                               \
            size_t old_ = parser_push((p), (key), 0);                                                        \
            shoal_status_t s_ = parse((p), member_, (out));                                                  \
            parser_pop((p), old_);                                                                           \
            TRY(s_);                                                                                         \
        }                                                                                                    \
    } while (0)

struct group_t;
struct shoal_scenario_t;

/* ---- Documents ---- */

/* "<where>: <message>" into err (when not NULL), or the message alone when
 * where is NULL; returns `status`. */
PRINTF_LIKE(4, 5)
shoal_status_t json_error(shoal_error_t* err, shoal_status_t status, const char* where, const char* fmt, ...);

/* Parses `length` bytes of `json` (which need not be terminated) into
 * *root. The whole text must be one JSON value and whitespace: anything
 * else, an embedded NUL included, is "<source>:<line>:<column>: malformed
 * JSON (...)". On failure *root is NULL. */
shoal_status_t json_parse(const char* json, size_t length, const char* source, cJSON** root,
                          shoal_error_t* err);

/* ---- Walking the tree ---- */

/* Parsing state: where errors go, and the JSON path of the object being read
 * ("groups[1].vehicle"); readers name the key within it. `dimensions` is the
 * length of every vector.
 *
 * The last four fields are the schema's, carried here so that every reader
 * takes one state; the reader never looks at them. While a group is read,
 * `groups` holds the groups read so far and `group` is its index, so that
 * references can be checked against earlier groups; `groups_json` is the
 * whole array, so that a reference to a later group can be told apart from a
 * name that does not exist; `scenario` is the scenario being built (its
 * nav goals, read before the groups, are what a group's nav.goal names). */
typedef struct parser_t {
    const char* source;
    shoal_error_t* err;
    /* The text the tree was parsed from, for the readers that need a
     * number's own digits (parser_get_uint64). */
    const char* text;
    size_t text_length;
    const cJSON* root;
    int32_t dimensions;
    size_t path_len;
    char path[256];
    const struct group_t* groups;
    int32_t group;
    const cJSON* groups_json;
    const struct shoal_scenario_t* scenario;
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
shoal_status_t parser_check_object(parser_t* p, const cJSON* obj, const char* const* keys, size_t n);
/* Read obj[key] when present, else leave *out at its default. Floats must be
 * finite, fit a float and be >= min (> min when `exclusive`). */
shoal_status_t parser_get_float(parser_t* p, const cJSON* obj, const char* key, double min, int exclusive,
                                float* out);
shoal_status_t parser_get_integer(parser_t* p, const cJSON* obj, const char* key, double min, double max,
                                  int64_t* out);
/* An unsigned 64-bit integer: a JSON number that is exactly an integer from
 * 0 to 2^53, or, for any value up to 2^64 - 1, a string of decimal digits.
 * Most JSON readers (cJSON among them) hold numbers as doubles, exact only
 * up to 2^53, so a larger number would silently be another one: the
 * number's own text is checked, not the double cJSON made of it. */
shoal_status_t parser_get_uint64(parser_t* p, const cJSON* obj, const char* key, uint64_t* out);
/* A JSON boolean, stored as 0 or 1. */
shoal_status_t parser_get_bool(parser_t* p, const cJSON* obj, const char* key, int32_t* out);
/* A point obj[key] ([x, y] or [x, y, z]) when present. */
shoal_status_t parser_get_point(parser_t* p, const cJSON* obj, const char* key, float out[3]);

/* The value v (obj-member or array element `key`) as a float, checked as
 * parser_get_float checks it. */
shoal_status_t parser_read_float(parser_t* p, const cJSON* v, const char* key, double min, int exclusive,
                                 float* out);

/* The value v (obj-member or array element `key`) as an integer in [min,
 * max], checked as parser_get_integer checks it. */
shoal_status_t parser_read_integer(parser_t* p, const cJSON* v, const char* key, double min, double max,
                                   int64_t* out);

/* The array obj-member `key` (v is that member) of exactly `dimensions`
 * numbers, each >= min; names2/names3 describe it ("[x, y]"). */
shoal_status_t parser_read_vector(parser_t* p, const cJSON* v, const char* key, double min,
                                  const char* names2, const char* names3, float out[3]);
/* One of `names` (*out = its index) or, when `number` is not NULL, a number
 * in radians (*out = -1). */
shoal_status_t parser_read_choice(parser_t* p, const cJSON* v, const char* key, const char* const* names,
                                  size_t n, int32_t* out, float* number);
/* A name: a string of at most `max_bytes` bytes, copied into *out (malloc'd). */
shoal_status_t parser_read_name(parser_t* p, const cJSON* v, const char* key, size_t max_bytes, char** out);

/* ---- Message helpers ---- */

/* "a number", "a string", ... for "expected X, got Y". */
const char* parser_type_name(const cJSON* v);
/* User text made safe to quote in a message (control bytes, length). */
const char* parser_printable(char buf[64], const char* s);
/* The name closest to `s` when it is a likely typo, else NULL. */
const char* parser_suggest(const char* s, const char* const* names, size_t n);
/* Shortest text that reads back as the same double. */
const char* json_format_number(char buf[32], double d);
/* A malloc'd copy of s, or NULL. */
char* json_copy_string(const char* s);

#endif /* SHOAL_IO_JSON_READER_H */
