/* A byte writer and a bounded byte reader over the little-endian helpers
 * of bytes.h, for the library's binary formats: the snapshot encoder and
 * loader (src/io/) and the modules' snapshot hooks (src/modules/), which
 * write and read their own sections through these without knowing the
 * file around them.
 *
 * The writer counts when it has no buffer (data == NULL), so one encoder
 * can first size its output and then write it. The reader never reads past
 * `end`; its first failure is kept in `msg` (prefixed by the section name)
 * and every later read returns zeros, so a loader can read a record and
 * test `failed` once. */
#ifndef SHOAL_BASE_BYTE_IO_H
#define SHOAL_BASE_BYTE_IO_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"

/* A section tag: four ASCII letters read as a little-endian u32. */
#define BYTE_TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

typedef struct byte_writer {
    uint8_t* data; /* NULL: count only */
    size_t size;
    size_t capacity;
} byte_writer_t;

/* Room for n more bytes: a pointer into the buffer, or NULL when counting
 * (or past the capacity, which a sized second pass never reaches). */
static inline uint8_t* bw_room(byte_writer_t* wr, size_t n)
{
    uint8_t* p = NULL;
    if (wr->data && wr->size + n <= wr->capacity) p = wr->data + wr->size;
    wr->size += n;
    return p;
}

static inline void bw_u32(byte_writer_t* wr, uint32_t v)
{
    uint8_t* p = bw_room(wr, 4);
    if (p) put_u32(p, v);
}

static inline void bw_i32(byte_writer_t* wr, int32_t v) { bw_u32(wr, (uint32_t)v); }

static inline void bw_u64(byte_writer_t* wr, uint64_t v)
{
    uint8_t* p = bw_room(wr, 8);
    if (p) put_u64(p, v);
}

static inline void bw_f32(byte_writer_t* wr, float v)
{
    uint8_t* p = bw_room(wr, 4);
    if (p) put_f32(p, v);
}

static inline void bw_f64(byte_writer_t* wr, double v)
{
    uint8_t* p = bw_room(wr, 8);
    if (p) put_f64(p, v);
}

static inline void bw_bytes(byte_writer_t* wr, const void* src, size_t n)
{
    uint8_t* p = bw_room(wr, n);
    if (p && n) memcpy(p, src, n);
}

/* `count` 4-byte words (a column of floats or integers) as their bit
 * patterns. */
static inline void bw_words(byte_writer_t* wr, const void* words, int32_t count)
{
    const uint32_t* v = (const uint32_t*)words;
    uint8_t* p = bw_room(wr, (size_t)count * 4);
    if (!p) return;
    for (int32_t i = 0; i < count; ++i) put_u32(p + (size_t)i * 4, v[i]);
}

typedef struct byte_reader {
    const uint8_t* p;
    size_t off;
    size_t end;          /* of the current section */
    const char* section; /* its name, for messages */
    char msg[480];
    int failed;
    uint32_t version; /* of the snapshot being read (0: not a snapshot) */
} byte_reader_t;

/* Record the first failure ("section NAME: text"); returns 0. */
static inline int br_fail(byte_reader_t* rd, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int br_fail(byte_reader_t* rd, const char* fmt, ...)
{
    if (rd->failed) return 0;
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(rd->msg, sizeof rd->msg, "section %s: %s", rd->section ? rd->section : "?", text);
    rd->failed = 1;
    return 0;
}

/* Bytes left in the current section. */
static inline size_t br_left(const byte_reader_t* rd) { return rd->end - rd->off; }

static inline const uint8_t* br_take(byte_reader_t* rd, size_t n)
{
    if (rd->failed) return NULL;
    if (br_left(rd) < n) {
        br_fail(rd, "ends at byte %zu, %zu bytes short", rd->end, n - br_left(rd));
        return NULL;
    }
    const uint8_t* p = rd->p + rd->off;
    rd->off += n;
    return p;
}

static inline uint32_t br_u32(byte_reader_t* rd)
{
    const uint8_t* p = br_take(rd, 4);
    return p ? get_u32(p) : 0;
}

static inline int32_t br_i32(byte_reader_t* rd)
{
    const uint8_t* p = br_take(rd, 4);
    return p ? get_i32(p) : 0;
}

static inline uint64_t br_u64(byte_reader_t* rd)
{
    const uint8_t* p = br_take(rd, 8);
    return p ? get_u64(p) : 0;
}

static inline float br_f32(byte_reader_t* rd)
{
    const uint8_t* p = br_take(rd, 4);
    return p ? get_f32(p) : 0.0f;
}

static inline double br_f64(byte_reader_t* rd)
{
    const uint8_t* p = br_take(rd, 8);
    return p ? get_f64(p) : 0.0;
}

/* A count of items of `item_bytes` each that must be at most `limit` and
 * fit in what is left of the section: checked before anything is
 * allocated. */
static inline int br_count(byte_reader_t* rd, uint32_t count, size_t item_bytes, uint32_t limit,
                           const char* what)
{
    if (rd->failed) return 0;
    if (count > limit) return br_fail(rd, "%s %u is above the limit %u", what, count, limit);
    if (item_bytes && (uint64_t)count * item_bytes > br_left(rd))
        return br_fail(rd, "%s %u needs %llu bytes, only %zu are left", what, count,
                       (unsigned long long)count * item_bytes, br_left(rd));
    return 1;
}

static inline int br_finite(byte_reader_t* rd, float v, const char* what, int32_t index)
{
    if (isfinite(v)) return 1;
    return br_fail(rd, "%s %d is not finite (%g)", what, (int)index, (double)v);
}

#endif /* SHOAL_BASE_BYTE_IO_H */
