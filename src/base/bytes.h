/* Little-endian byte helpers and FNV-1a, shared by the library's binary
 * formats (trim tables, recordings, snapshots). Values are assembled by
 * shifts, so every format is little-endian on any host, and floats travel
 * as their IEEE bit patterns (a NaN's payload, -0.0 and 0.0 survive). */
#ifndef SHOAL_BASE_BYTES_H
#define SHOAL_BASE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE binary32 and binary64");

static inline void put_u32(uint8_t* p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t get_u32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put_i32(uint8_t* p, int32_t v) { put_u32(p, (uint32_t)v); }

static inline int32_t get_i32(const uint8_t* p)
{
    /* Two's complement without relying on an out-of-range conversion. */
    uint32_t u = get_u32(p);
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

static inline void put_u64(uint8_t* p, uint64_t v)
{
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t get_u64(const uint8_t* p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static inline void put_f32(uint8_t* p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    put_u32(p, u);
}

static inline float get_f32(const uint8_t* p)
{
    uint32_t u = get_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline void put_f64(uint8_t* p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    put_u64(p, u);
}

static inline double get_f64(const uint8_t* p)
{
    uint64_t u = get_u64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* FNV-1a 64: start from FNV1A_OFFSET, chain over any number of pieces. */
#define FNV1A_OFFSET 0xcbf29ce484222325ull
#define FNV1A_PRIME 0x100000001b3ull

static inline uint64_t fnv1a(uint64_t h, const uint8_t* p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= FNV1A_PRIME;
    }
    return h;
}

#endif /* SHOAL_BASE_BYTES_H */
