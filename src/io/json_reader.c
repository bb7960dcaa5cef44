/* The strict JSON reader (json_reader.h): text to a cJSON tree, with
 * malformed JSON reported by line and column, and the typed readers that
 * walk the tree with a JSON path, so that every error names what is wrong,
 * where, and what was expected.
 *
 * Decisions:
 * - Parsing is strict. An unknown key, a duplicate key, a wrong type or a value
 *   out of range is an error naming its JSON path, because a silently ignored
 *   typo ("max_sped") gives a run that looks right and is not.
 * - cJSON keeps no source positions for values, so only malformed JSON gets a
 *   line:column; every other error names the JSON path instead.
 * - Messages quote user text through parser_printable, so that a message
 *   never carries control bytes into a terminal or a JSON report.
 */
#include "io/json_reader.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static shoal_status_t verror(shoal_error_t* err, shoal_status_t status, const char* where, const char* fmt,
                             va_list ap)
{
    if (err == NULL) return status;
    size_t at = where ? append(err->message, sizeof err->message, 0, "%s: ", where) : 0;
    vsnprintf(err->message + at, sizeof err->message - at, fmt, ap);
    err->status = status;
    return status;
}

shoal_status_t json_error(shoal_error_t* err, shoal_status_t status, const char* where, const char* fmt, ...)
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
    if (key != NULL) append(where, sizeof where, at, "%s%s", p->path_len && key[0] != '[' ? "." : "", key);
    va_list ap;
    va_start(ap, fmt);
    verror(p->err, SHOAL_ERR_PARSE, where, fmt, ap);
    va_end(ap);
    return SHOAL_ERR_PARSE;
}

shoal_status_t parser_missing(parser_t* p, const char* key, const char* why)
{
    return json_error(p->err, SHOAL_ERR_PARSE, p->source, "missing required key '%s%s%s'%s%s", p->path,
                      p->path_len ? "." : "", key, why ? " " : "", why ? why : "");
}

shoal_status_t parser_out_of_memory(parser_t* p)
{
    return json_error(p->err, SHOAL_ERR_OUT_OF_MEMORY, p->source, "out of memory");
}

size_t parser_push(parser_t* p, const char* key, int index)
{
    size_t old = p->path_len;
    p->path_len = key ? append(p->path, sizeof p->path, old, "%s%s", old && key[0] != '[' ? "." : "", key)
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

/* "0.1", not "0.10000000000000001". */
const char* json_format_number(char buf[32], double d)
{
    snprintf(buf, 32, "%.15g", d);
    if (strtod(buf, NULL) != d) snprintf(buf, 32, "%.17g", d);
    return buf;
}

/* ---- Text that reaches output ----
 *
 * Names end up in terminals, JSON reports, recordings and traces. Text that
 * is not UTF-8 makes a JSON report invalid, and control characters (ESC
 * starts a terminal escape sequence) act on the terminal instead of being
 * shown, so names must be UTF-8 without control characters, and messages
 * quote any other user text through parser_printable. */

/* The UTF-8 character at s[0..n) (n >= 1): its length in bytes, with *cp
 * its code point, or 0 when the bytes there are not UTF-8: a stray
 * continuation byte, a cut sequence, an overlong form, a surrogate or a
 * value above U+10FFFF (RFC 3629). */
static size_t utf8_decode(const unsigned char* s, size_t n, uint32_t* cp)
{
    static const uint32_t smallest[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t len = s[0] < 0x80             ? 1
                 : (s[0] & 0xE0) == 0xC0 ? 2
                 : (s[0] & 0xF0) == 0xE0 ? 3
                 : (s[0] & 0xF8) == 0xF0 ? 4
                                         : 0;
    if (len == 0 || len > n) return 0;
    uint32_t c = len == 1 ? s[0] : s[0] & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3Fu);
    }
    if (c < smallest[len] || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) return 0;
    *cp = c;
    return len;
}

/* C0 controls (U+0000 to U+001F, ESC among them), DEL and the C1 controls
 * (U+0080 to U+009F, which some terminals take as CSI and the like). */
static int is_control(uint32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

/* User text made safe to quote: a control character or a byte that is not
 * UTF-8 becomes '?', and long text is cut at a character boundary. */
const char* parser_printable(char buf[64], const char* s)
{
    const unsigned char* u = (const unsigned char*)s;
    size_t n = strlen(s), i = 0, at = 0;
    while (i < n && at < 56) {
        uint32_t cp = 0;
        size_t len = utf8_decode(u + i, n - i, &cp);
        if (len == 0 || is_control(cp)) {
            buf[at++] = '?';
            i += len > 0 ? len : 1;
            continue;
        }
        if (at + len > 56) break;
        memcpy(buf + at, u + i, len);
        at += len, i += len;
    }
    if (i < n) memcpy(buf + at, "...", 3), at += 3;
    buf[at] = '\0';
    return buf;
}

char* json_copy_string(const char* s)
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
            size_t best = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
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
            json_error(p->err, SHOAL_ERR_PARSE, p->source, "unknown key '%s'%s%s%s", p->path,
                       close ? "; did you mean '" : "", close ? close : "", close ? "'?" : "");
            parser_pop(p, old);
            return SHOAL_ERR_PARSE;
        }
        for (const cJSON* prev = obj->child; prev != child; prev = prev->next) {
            if (strcmp(prev->string, child->string) == 0) {
                size_t old = parser_push(p, child->string, 0);
                json_error(p->err, SHOAL_ERR_PARSE, p->source, "duplicate key '%s'", p->path);
                parser_pop(p, old);
                return SHOAL_ERR_PARSE;
            }
        }
    }
    return SHOAL_OK;
}

/* A finite number that fits a float and is >= min (> min when `exclusive`).
 * -DBL_MAX as min allows any finite value. */
shoal_status_t parser_read_float(parser_t* p, const cJSON* v, const char* key, double min, int exclusive,
                                 float* out)
{
    char a[32], b[32], c[32];
    if (!cJSON_IsNumber(v)) return parser_fail(p, key, "expected a number, got %s", parser_type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d) || fabs(d) > FLT_MAX)
        return parser_fail(p, key, "must be finite and at most %g in magnitude", (double)FLT_MAX);
    if (exclusive ? !(d > min) : !(d >= min))
        return parser_fail(p, key, "must be %s %s, got %s",
                           exclusive ? ">" : ">=", json_format_number(a, min), json_format_number(b, d));
    if (exclusive && !((float)d > (float)min)) /* a tiny double can round to a float 0 */
        return parser_fail(p, key, "must be > %s, got %s (%s as a float)", json_format_number(a, min),
                           json_format_number(b, d), json_format_number(c, (double)(float)d));
    *out = (float)d;
    return SHOAL_OK;
}

shoal_status_t parser_read_integer(parser_t* p, const cJSON* v, const char* key, double min, double max,
                                   int64_t* out)
{
    char a[32], b[32];
    if (!cJSON_IsNumber(v)) return parser_fail(p, key, "expected an integer, got %s", parser_type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d)) return parser_fail(p, key, "must be a finite integer");
    if (d != floor(d)) return parser_fail(p, key, "must be an integer, got %s", json_format_number(a, d));
    if (d < min || d > max)
        return parser_fail(p, key, "must be %s %s, got %s",
                           d < min ? ">=" : "<=", json_format_number(a, d < min ? min : max),
                           json_format_number(b, d));
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
        return parser_fail(p, key, "expected %d numbers %s in a %dD scenario, got %d", p->dimensions, names,
                           p->dimensions, n);
    char element[80];
    float tmp[3] = {0.0f, 0.0f, 0.0f};
    int i = 0;
    const cJSON* e = NULL;
    cJSON_ArrayForEach(e, v)
    {
        snprintf(element, sizeof element, "%s[%d]", key, i);
        TRY(parser_read_float(p, e, element, min, 0, &tmp[i]));
        i++;
    }
    memcpy(out, tmp, sizeof tmp);
    return SHOAL_OK;
}

/* One of `names` (*out = its index) or, when `number` is not NULL, a number
 * in radians (*out = -1). */
shoal_status_t parser_read_choice(parser_t* p, const cJSON* v, const char* key, const char* const* names,
                                  size_t n, int32_t* out, float* number)
{
    char list[128], shown[64];
    size_t at = append(list, sizeof list, 0, "%sone of", number ? "a number or " : "");
    for (size_t i = 0; i < n; i++) at = append(list, sizeof list, at, "%s \"%s\"", i ? "," : "", names[i]);
    if (number != NULL && cJSON_IsNumber(v)) {
        *out = -1;
        return parser_read_float(p, v, key, -DBL_MAX, 0, number);
    }
    if (!cJSON_IsString(v)) return parser_fail(p, key, "expected %s, got %s", list, parser_type_name(v));
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = (int32_t)i;
            return SHOAL_OK;
        }
    }
    const char* close = parser_suggest(v->valuestring, names, n);
    return parser_fail(p, key, "expected %s, got \"%s\"%s%s%s", list, parser_printable(shown, v->valuestring),
                       close ? "; did you mean \"" : "", close ? close : "", close ? "\"?" : "");
}

shoal_status_t parser_read_name(parser_t* p, const cJSON* v, const char* key, size_t max_bytes, char** out)
{
    if (!cJSON_IsString(v)) return parser_fail(p, key, "expected a string, got %s", parser_type_name(v));
    size_t n = strlen(v->valuestring);
    if (n > max_bytes) return parser_fail(p, key, "must be at most %zu bytes, got %zu", max_bytes, n);
    const unsigned char* u = (const unsigned char*)v->valuestring;
    for (size_t i = 0; i < n;) {
        char shown[64];
        uint32_t cp = 0;
        size_t len = utf8_decode(u + i, n - i, &cp);
        if (len == 0)
            return parser_fail(p, key,
                               "must be UTF-8 text without control characters; got \"%s\", "
                               "whose byte %zu (0x%02X) is not UTF-8",
                               parser_printable(shown, v->valuestring), i + 1, u[i]);
        if (is_control(cp))
            return parser_fail(p, key,
                               "must be UTF-8 text without control characters; got \"%s\", "
                               "whose byte %zu is U+%04X, a control character",
                               parser_printable(shown, v->valuestring), i + 1, (unsigned)cp);
        i += len;
    }
    if ((*out = json_copy_string(v->valuestring)) == NULL) return parser_out_of_memory(p);
    return SHOAL_OK;
}

/* Getters: read obj[key] when present, else leave *out at its default. */
shoal_status_t parser_get_float(parser_t* p, const cJSON* obj, const char* key, double min, int exclusive,
                                float* out)
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? parser_read_float(p, v, key, min, exclusive, out) : SHOAL_OK;
}

shoal_status_t parser_get_integer(parser_t* p, const cJSON* obj, const char* key, double min, double max,
                                  int64_t* out)
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? parser_read_integer(p, v, key, min, max, out) : SHOAL_OK;
}

/* ---- Exact integers beyond what a double holds ---- */

#define TWO_TO_53 9007199254740992.0

/* Counts, in document order, the numbers of the tree at `node` (and its
 * siblings) that come before `target`; 1 when target was reached. The
 * recursion is as deep as the JSON nests, which cJSON bounds (1000). */
static int count_numbers_before(const cJSON* node, const cJSON* target, size_t* k)
{
    for (; node != NULL; node = node->next) {
        if (node == target) return 1;
        if (cJSON_IsNumber(node)) ++*k;
        if (node->child != NULL && count_numbers_before(node->child, target, k)) return 1;
    }
    return 0;
}

/* The text of the number `v` of the parsed document: the k-th number token
 * of the text, k counted in the tree. cJSON keeps no positions, but its tree
 * and the text hold the same numbers in the same order, and outside strings
 * a number is the only token that starts with '-' or a digit. 0 when not
 * found, which a text cJSON accepted does not give. */
static int number_text(const parser_t* p, const cJSON* v, const char** lit, size_t* len)
{
    size_t k = 0;
    if (p->text == NULL || !count_numbers_before(p->root, v, &k)) return 0;
    const char* t = p->text;
    int in_string = 0;
    for (size_t i = 0; i < p->text_length; i++) {
        if (in_string) {
            if (t[i] == '\\')
                i++;
            else if (t[i] == '"')
                in_string = 0;
        } else if (t[i] == '"') {
            in_string = 1;
        } else if (t[i] == '-' || (t[i] >= '0' && t[i] <= '9')) {
            size_t start = i;
            while (i < p->text_length && t[i] != '\0' && strchr("0123456789+-.eE", t[i])) i++;
            if (k-- == 0) {
                *lit = t + start, *len = i - start;
                return 1;
            }
            i--;
        }
    }
    return 0;
}

/* The decimal digits of the integer a JSON number literal denotes (its sign
 * aside), without leading zeros ("0" for zero), into digits[0..32): 1 when
 * they fit, 0 for an integer of more than 30 digits, -1 when the literal is
 * not exactly an integer ("1.5", "1e-400", "1.00000000000000001"). Exact:
 * digits are moved, never computed with. */
static int literal_integer(const char* lit, size_t len, char digits[32])
{
    char sig[80]; /* significant digits: cJSON reads at most 63 characters */
    size_t n = 0, i = 0;
    long exp10 = 0, e = 0;
    int point = 0, esign = 1;
    if (i < len && lit[i] == '-') i++;
    for (; i < len && lit[i] != 'e' && lit[i] != 'E'; i++) {
        if (lit[i] == '.') {
            point = 1;
        } else if (n == 0 && lit[i] == '0') {
            exp10 -= point; /* a leading zero: only its place counts */
        } else {
            if (n == sizeof sig) return -1;
            sig[n++] = lit[i];
            exp10 -= point;
        }
    }
    if (i < len) {
        i++;
        if (i < len && (lit[i] == '+' || lit[i] == '-')) esign = lit[i++] == '-' ? -1 : 1;
        for (; i < len; i++) e = e < 100000 ? e * 10 + (lit[i] - '0') : e;
    }
    if (n == 0) { /* zero, whatever its exponent */
        memcpy(digits, "0", 2);
        return 1;
    }
    exp10 += esign * e;
    while (n > 0 && sig[n - 1] == '0') n--, exp10++;
    if (exp10 < 0) return -1;
    if ((long)n + exp10 > 30) return 0;
    memcpy(digits, sig, n);
    memset(digits + n, '0', (size_t)exp10);
    digits[n + (size_t)exp10] = '\0';
    return 1;
}

/* Decimal digits to a uint64_t; 0 when they exceed 2^64 - 1. */
static int digits_to_uint64(const char* digits, uint64_t* out)
{
    uint64_t n = 0;
    for (const char* c = digits; *c != '\0'; c++) {
        unsigned d = (unsigned)(*c - '0');
        if (n > (UINT64_MAX - d) / 10) return 0;
        n = n * 10 + d;
    }
    *out = n;
    return 1;
}

shoal_status_t parser_get_uint64(parser_t* p, const cJSON* obj, const char* key, uint64_t* out)
{
    char shown[64], digits[32], a[32];
    const cJSON* v = MEMBER(obj, key);
    if (v == NULL) return SHOAL_OK;
    if (cJSON_IsString(v)) {
        const char* s = v->valuestring;
        size_t n = strspn(s, "0123456789");
        if (n == 0 || s[n] != '\0')
            return parser_fail(p, key, "expected a string of decimal digits, got \"%s\"",
                               parser_printable(shown, s));
        if (!digits_to_uint64(s, out))
            return parser_fail(p, key, "must be at most 18446744073709551615 (2^64 - 1), got %s",
                               parser_printable(shown, s));
        return SHOAL_OK;
    }
    if (!cJSON_IsNumber(v))
        return parser_fail(p, key, "expected an integer (or a string of decimal digits), got %s",
                           parser_type_name(v));
    /* No test of the double alone: "1e400" reads as inf, but its text says
     * better what is wrong with it. */
    double d = v->valuedouble;
    const char* lit = NULL;
    size_t len = 0;
    if (!number_text(p, v, &lit, &len)) {
        /* Not reached with a tree cJSON parsed from p->text. Without the
         * text, only values below 2^53 are surely what the file says. */
        if (d != floor(d) || d < 0.0 || d >= TWO_TO_53)
            return parser_fail(p, key, "must be an integer from 0 to 2^53 - 1, got %s",
                               json_format_number(a, d));
        *out = (uint64_t)d;
        return SHOAL_OK;
    }
    snprintf(shown, sizeof shown, "%.*s%s", (int)(len < 56 ? len : 56), lit, len > 56 ? "..." : "");
    int whole = literal_integer(lit, len, digits);
    if (whole < 0)
        return parser_fail(p, key, "must be an integer, got %s%s", shown,
                           d == floor(d) ? " (which a double rounds to an integer)" : "");
    if (lit[0] == '-' && (whole == 0 || strcmp(digits, "0") != 0))
        return parser_fail(p, key, "must be >= 0, got %s", shown);
    uint64_t n = 0;
    if (whole == 0 || !digits_to_uint64(digits, &n))
        return parser_fail(p, key,
                           "must be <= 9007199254740992 (2^53) as a JSON number, got %s, which "
                           "is above 2^64 - 1 too",
                           shown);
    if (n > (uint64_t)TWO_TO_53)
        return parser_fail(p, key,
                           "must be <= 9007199254740992 (2^53) as a JSON number, got %s: larger "
                           "numbers are not exact in JSON (read as a double, this one is %s); "
                           "give it as a string of decimal digits instead (up to 2^64 - 1): "
                           "\"%s\"",
                           shown, json_format_number(a, d), digits);
    *out = n;
    return SHOAL_OK;
}

shoal_status_t parser_get_bool(parser_t* p, const cJSON* obj, const char* key, int32_t* out)
{
    const cJSON* v = MEMBER(obj, key);
    if (v == NULL) return SHOAL_OK;
    if (!cJSON_IsBool(v)) return parser_fail(p, key, "expected true or false, got %s", parser_type_name(v));
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return SHOAL_OK;
}

shoal_status_t parser_get_point(parser_t* p, const cJSON* obj, const char* key, float out[3])
{
    const cJSON* v = MEMBER(obj, key);
    return v != NULL ? parser_read_vector(p, v, key, -DBL_MAX, "[x, y]", "[x, y, z]", out) : SHOAL_OK;
}

/* ---- Documents ---- */

/* The line and column of byte `pos`, both 1-based. Columns count UTF-8
 * characters, as editors do, and ignore a byte-order mark (cJSON skips it
 * too). */
static void text_position(const char* text, size_t pos, size_t* line, size_t* column)
{
    size_t start = 0;
    *line = 1, *column = 1;
    for (size_t i = 0; i < pos; i++)
        if (text[i] == '\n') ++*line, start = i + 1;
    if (start == 0 && pos >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) start = 3;
    for (size_t i = start; i < pos; i++) *column += ((unsigned char)text[i] & 0xC0) != 0x80;
}

/* "<source>:<line>:<column>: malformed JSON (...)" for the byte at `pos`. */
static shoal_status_t malformed(const char* source, const char* text, size_t length, size_t pos,
                                int after_value, shoal_error_t* err)
{
    char what[64];
    size_t line, column;
    text_position(text, pos, &line, &column);

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
    return json_error(err, SHOAL_ERR_PARSE, NULL, "%s:%zu:%zu: malformed JSON (%s)", source, line, column,
                      what);
}

/* Where the first \u0000 escape inside a string of text[0, end) starts, or
 * SIZE_MAX. cJSON decodes \u0000 into a NUL byte inside the string and keeps
 * no length, so every reader would see the string end there: "name\u0000x"
 * would be the key "name", "disc\u0000x" the shape "disc". cJSON does not
 * say how long a string it parsed was, so the text of a document it accepted
 * is scanned instead: inside a string a backslash escapes the character
 * after it, and outside strings there are no escapes. */
static size_t find_escaped_nul(const char* text, size_t end)
{
    int in_string = 0;
    for (size_t i = 0; i < end; i++) {
        if (text[i] == '"') {
            in_string = !in_string;
        } else if (in_string && text[i] == '\\') {
            if (end - i > 5 && memcmp(text + i + 1, "u0000", 5) == 0) return i;
            i++;
        }
    }
    return SIZE_MAX;
}

shoal_status_t json_parse(const char* json, size_t length, const char* source, cJSON** root,
                          shoal_error_t* err)
{
    *root = NULL;
    /* cJSON wants a terminated string; the caller's text need not be one. */
    char* text = malloc(length + 1);
    if (text == NULL) return json_error(err, SHOAL_ERR_OUT_OF_MEMORY, source, "out of memory");
    if (length > 0) memcpy(text, json, length);
    text[length] = '\0';

    /* Parsed without require_null_terminated and the rest checked here: the
     * same test, but the message can then say what is wrong. The rest must be
     * cJSON whitespace (bytes 1 to 32) up to `length`, so an embedded NUL is
     * caught too. A NULL tree may also mean cJSON ran out of memory; it does
     * not say which. */
    const char* end = NULL;
    cJSON* tree = cJSON_ParseWithOpts(text, &end, 0);
    size_t pos = end != NULL ? (size_t)(end - text) : 0;
    shoal_status_t status = SHOAL_OK;
    if (tree == NULL) {
        status = malformed(source, text, length, pos, 0, err);
    } else {
        while (pos < length && (unsigned char)text[pos] <= 32 && text[pos] != '\0') pos++;
        if (pos < length) status = malformed(source, text, length, pos, 1, err);
    }
    size_t nul = status == SHOAL_OK ? find_escaped_nul(text, pos) : SIZE_MAX;
    if (nul != SIZE_MAX) {
        size_t line, column;
        text_position(text, nul, &line, &column);
        status = json_error(err, SHOAL_ERR_PARSE, NULL,
                            "%s:%zu:%zu: a string holds \\u0000 (NUL), which would end it "
                            "there; strings must not hold NUL",
                            source, line, column);
    }
    free(text);
    if (status != SHOAL_OK) {
        cJSON_Delete(tree);
        return status;
    }
    *root = tree;
    return SHOAL_OK;
}
