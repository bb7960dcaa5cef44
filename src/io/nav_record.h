/* The navigation field record of recordings, format version 5 (the layout
 * is in docs/recording.md, "Navigation field record", and in
 * src/io/recording.c's header comment): a world's walkable grid and every
 * goal's travel-time field, written before the first frame that has them
 * and again before the first frame after they were solved anew.
 *
 * Decisions:
 * - Travel time is quantized to 16 bits per cell between the field's least
 *   and largest finite values (65,535 levels, one for "no value"): a field
 *   of 4 million cells is 16 MB as float, and what a recording is read for
 *   (seeing the field, its gradient, which way agents were sent) needs
 *   nothing like float's precision. The error is at most (hi - lo) /
 *   131,068 plus float rounding: 2.3 mm over a 300 m field, against cells
 *   of 0.1 m.
 * - Each cell is predicted from its left, lower and lower-left neighbours
 *   (a + b - c: exact on a plane, and a travel-time field is nearly one
 *   plane over a few cells), the differences zigzagged into byte planes
 *   and compressed with zstd, as frames are (src/io/frame_codec.h).
 * - One record holds the grid and every live goal's field, so "the fields
 *   at frame k" is one record: the latest before it. A new goal or a
 *   congestion update writes them all again; goals that did not change
 *   compress as well as the first time. */
#ifndef SHOAL_IO_NAV_RECORD_H
#define SHOAL_IO_NAV_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#define REC_TAG_NAV 0x4656414Eu /* "NAVF" read as a little-endian u32 */
#define REC_NAV_FIXED 60u       /* the fields before the goal table */
#define REC_NAV_GOAL_BYTES 12u  /* id, lo, hi */
#define REC_NAV_NONE 65535u     /* a cell without a travel time (blocked, or no way) */
#define REC_NAV_LEVELS 65534u   /* q in [0, REC_NAV_LEVELS] spans [lo, hi] */

/* Fields to write: the grid, and each goal's float field of nx * ny cells
 * (INFINITY where there is no value). nx = ny = 0 with no goals: the world
 * has no fields (any more). */
typedef struct rec_nav_source_t {
    float origin[2];
    float cell;
    int32_t nx, ny;
    const uint8_t* blocked;
    int32_t goal_count;
    const int32_t* goals;       /* ascending ids */
    const float* const* fields; /* goal_count fields */
} rec_nav_source_t;

/* Bytes of the decoded payload: the blocked flags and 2 bytes a cell a goal. */
static inline uint64_t rec_nav_decoded(uint64_t cells, uint64_t goals) { return cells * (1u + 2u * goals); }

/* The record for frame index `frame` into a new buffer (*out, *size; the
 * last 4 bytes are left for the caller's CRC-32). 0, or -1 with why: out
 * of memory, zstd, or a payload of more than 4 GiB. */
int rec_nav_encode(ZSTD_CCtx* zstd, const rec_nav_source_t* src, uint32_t frame, uint64_t step, double time,
                   uint8_t** out, size_t* size, const char** why);

/* Decode the payload of the record `p` (its fixed part and size already
 * checked) into blocked[cells], fields[goals * cells] and max_error[goals],
 * with `scratch` of the decoded payload's bytes. NULL, or why it failed
 * with *at the byte (from the record's start) it concerns. */
const char* rec_nav_decode(ZSTD_DCtx* zstd, const uint8_t* p, uint8_t* scratch, uint8_t* blocked,
                           float* fields, float* max_error, uint64_t* at);

#endif /* SHOAL_IO_NAV_RECORD_H */
