/* The navigation field record of recordings (src/io/nav_record.h). */
#include "io/nav_record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "io/frame_codec.h"

/* The prediction of cell (i, j) from the cells before it in row order:
 * a + b - c (left, below, lower-left), modulo 2^16. */
static inline uint16_t predict(const uint16_t* q, size_t nx, size_t i, size_t j)
{
    const size_t c = j * nx + i;
    if (i > 0 && j > 0) return (uint16_t)(q[c - 1] + q[c - nx] - q[c - nx - 1]);
    if (i > 0) return q[c - 1];
    if (j > 0) return q[c - nx];
    return 0;
}

static inline uint16_t zigzag16(uint16_t r)
{
    return (uint16_t)((uint16_t)(r << 1) ^ (uint16_t)(0u - (r >> 15)));
}
static inline uint16_t unzigzag16(uint16_t z) { return (uint16_t)((z >> 1) ^ (uint16_t)(0u - (z & 1u))); }

int rec_nav_encode(ZSTD_CCtx* zstd, const rec_nav_source_t* src, uint32_t frame, uint64_t step, double time,
                   uint8_t** out, size_t* size, const char** why)
{
    *out = NULL;
    *size = 0;
    const size_t nx = (size_t)src->nx, ny = (size_t)src->ny, cells = nx * ny, goals = (size_t)src->goal_count;
    const uint64_t decoded = rec_nav_decoded(cells, goals);
    if (decoded > UINT32_MAX) {
        *why = "the grid and fields decode to more than 4 GiB, the most one record holds";
        return -1;
    }
    const size_t head = REC_NAV_FIXED + REC_NAV_GOAL_BYTES * goals;
    const size_t bound = ZSTD_compressBound((size_t)decoded);
    const size_t capacity = head + (size_t)rec_frame3_stored(decoded, bound) + 4u;
    uint8_t* rec = calloc(1, capacity);
    uint8_t* planes = malloc((size_t)decoded + 1);
    uint16_t* q = malloc(cells * sizeof *q + 1);
    if (rec == NULL || planes == NULL || q == NULL) {
        free(rec);
        free(planes);
        free(q);
        *why = "out of memory";
        return -1;
    }
    memcpy(planes, src->blocked, cells);
    for (size_t k = 0; k < goals; ++k) {
        const float* T = src->fields[k];
        double lo = INFINITY, hi = -INFINITY;
        for (size_t c = 0; c < cells; ++c)
            if (isfinite(T[c])) {
                lo = fmin(lo, (double)T[c]);
                hi = fmax(hi, (double)T[c]);
            }
        if (!(lo <= hi)) lo = hi = 0.0;
        const double scale = hi > lo ? (double)REC_NAV_LEVELS / (hi - lo) : 0.0;
        for (size_t c = 0; c < cells; ++c) {
            if (!isfinite(T[c])) {
                q[c] = REC_NAV_NONE;
                continue;
            }
            double v = nearbyint(((double)T[c] - lo) * scale);
            q[c] = (uint16_t)(v < 0.0 ? 0.0 : v > REC_NAV_LEVELS ? REC_NAV_LEVELS : v);
        }
        uint8_t* low = planes + cells * (1u + 2u * k);
        uint8_t* high = low + cells;
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                const size_t c = j * nx + i;
                uint16_t z = zigzag16((uint16_t)(q[c] - predict(q, nx, i, j)));
                low[c] = (uint8_t)z;
                high[c] = (uint8_t)(z >> 8);
            }
        uint8_t* g = rec + REC_NAV_FIXED + REC_NAV_GOAL_BYTES * k;
        put_u32(g, (uint32_t)src->goals[k]);
        put_f32(g + 4, (float)lo);
        put_f32(g + 8, (float)hi);
    }
    free(q);
    size_t compressed =
        ZSTD_compressCCtx(zstd, rec + head, capacity - head - 4u, planes, (size_t)decoded, REC_ZSTD_LEVEL);
    free(planes);
    if (ZSTD_isError(compressed)) {
        free(rec);
        *why = ZSTD_getErrorName(compressed);
        return -1;
    }
    put_u32(rec, REC_TAG_NAV);
    put_u32(rec + 4, 0u);
    put_u32(rec + 8, frame);
    put_u32(rec + 12, (uint32_t)goals);
    put_u64(rec + 16, step);
    put_f64(rec + 24, time);
    put_f32(rec + 32, src->origin[0]);
    put_f32(rec + 36, src->origin[1]);
    put_f32(rec + 40, src->cell);
    put_u32(rec + 44, (uint32_t)nx);
    put_u32(rec + 48, (uint32_t)ny);
    put_u32(rec + 52, (uint32_t)decoded);
    put_u32(rec + 56, (uint32_t)compressed);
    /* zstd may have used the bytes past its frame as scratch: the padding
     * is zeros again. */
    const size_t stored = (size_t)rec_frame3_stored(decoded, compressed);
    memset(rec + head + compressed, 0, stored - compressed);
    *out = rec;
    *size = head + stored + 4u;
    return 0;
}

const char* rec_nav_decode(ZSTD_DCtx* zstd, const uint8_t* p, uint8_t* scratch, uint8_t* blocked,
                           float* fields, float* max_error, uint64_t* at)
{
    const size_t goals = get_u32(p + 12), nx = get_u32(p + 44), ny = get_u32(p + 48), cells = nx * ny;
    const size_t decoded = get_u32(p + 52), compressed = get_u32(p + 56);
    const size_t head = REC_NAV_FIXED + REC_NAV_GOAL_BYTES * goals;
    const uint8_t* z = p + head;
    *at = head;
    unsigned long long content = ZSTD_getFrameContentSize(z, compressed);
    size_t frame_size = ZSTD_findFrameCompressedSize(z, compressed);
    if (content == ZSTD_CONTENTSIZE_ERROR || ZSTD_isError(frame_size) || frame_size != compressed)
        return "the compressed payload is not one zstd frame";
    if (content != (unsigned long long)decoded)
        return "the zstd frame's content size is not the declared payload size";
    size_t got = ZSTD_decompressDCtx(zstd, scratch, decoded + 1, z, compressed);
    if (ZSTD_isError(got)) return "the compressed payload does not decompress";
    if (got != decoded) return "the payload decompresses to another size than declared";
    for (size_t c = 0; c < cells; ++c) {
        if (scratch[c] > 1) return "a blocked flag is not 0 or 1 (in the payload)";
        blocked[c] = scratch[c];
    }
    /* A cell's prediction reads only cells before it in row order. */
    uint16_t* q = (uint16_t*)malloc(cells * sizeof *q + 1);
    if (q == NULL) return "out of memory";
    for (size_t k = 0; k < goals; ++k) {
        const uint8_t* low = scratch + cells * (1u + 2u * k);
        const uint8_t* high = low + cells;
        const uint8_t* g = p + REC_NAV_FIXED + REC_NAV_GOAL_BYTES * k;
        const double lo = get_f32(g + 4), hi = get_f32(g + 8);
        const double step = (hi - lo) / (double)REC_NAV_LEVELS;
        float* T = fields + cells * k;
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                const size_t c = j * nx + i;
                uint16_t r = unzigzag16((uint16_t)(low[c] | high[c] << 8));
                q[c] = (uint16_t)(r + predict(q, nx, i, j));
                T[c] = q[c] == REC_NAV_NONE ? INFINITY : (float)(lo + step * (double)q[c]);
            }
        max_error[k] = (float)(step / 2.0);
    }
    free(q);
    return NULL;
}
