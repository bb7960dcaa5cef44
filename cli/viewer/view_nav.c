/* The navigation fields of `shoal view`'s page (view_nav.h). */
#include "cli/viewer/view_nav.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"

#define NAV_HEAD 40u
#define NAV_NONE 65535u
#define NAV_LEVELS 65534.0

static size_t pad4(size_t n) { return (n + 3u) & ~(size_t)3u; }

/* The downsampling that brings nx x ny to at most VIEW_NAV_CELLS. */
static int32_t scale_of(int32_t nx, int32_t ny)
{
    int32_t s = 1;
    while ((int64_t)((nx + s - 1) / s) * ((ny + s - 1) / s) > VIEW_NAV_CELLS) s += 1;
    return s;
}

static size_t record_bytes(const shoal_recording_nav_t* in)
{
    const int32_t s = scale_of(in->nx, in->ny);
    const size_t cells = (size_t)((in->nx + s - 1) / s) * (size_t)((in->ny + s - 1) / s);
    const size_t goals = (size_t)in->goal_count;
    return NAV_HEAD + 12u * goals + pad4(cells) + goals * pad4(2u * cells);
}

/* Record `in` (decoded) for page frame `frame`, at `p`. */
static void write_record(uint8_t* p, const shoal_recording_nav_t* in, uint32_t frame)
{
    const int32_t s = scale_of(in->nx, in->ny);
    const size_t nx = (size_t)((in->nx + s - 1) / s), ny = (size_t)((in->ny + s - 1) / s), cells = nx * ny;
    const size_t goals = (size_t)in->goal_count, source = (size_t)in->nx * (size_t)in->ny;
    put_u32(p, frame);
    put_u32(p + 4, (uint32_t)goals);
    put_u32(p + 8, (uint32_t)nx);
    put_u32(p + 12, (uint32_t)ny);
    put_f32(p + 16, in->origin[0]);
    put_f32(p + 20, in->origin[1]);
    put_f32(p + 24, in->cell * (float)s);
    put_u32(p + 28, (uint32_t)s);
    put_f64(p + 32, in->time);
    uint8_t* at = p + NAV_HEAD;
    /* The least and largest finite value of each field: what the page's
     * colors span (the recording's quantized values, read back). */
    double* lo = malloc(goals * sizeof *lo + 1);
    double* hi = malloc(goals * sizeof *hi + 1);
    for (size_t k = 0; k < goals && lo != NULL && hi != NULL; ++k) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
        for (size_t c = 0; c < source; ++c) {
            float v = in->fields[k * source + c];
            if (isfinite(v)) {
                lo[k] = fmin(lo[k], v);
                hi[k] = fmax(hi[k], v);
            }
        }
        if (!(lo[k] <= hi[k])) lo[k] = hi[k] = 0.0;
        put_i32(at, in->goals[k]);
        put_f32(at + 4, (float)lo[k]);
        put_f32(at + 8, (float)hi[k]);
        at += 12;
    }
    uint8_t* blocked = at;
    for (size_t J = 0; J < ny; ++J)
        for (size_t I = 0; I < nx; ++I) {
            uint8_t b = 0;
            for (size_t j = J * (size_t)s; j < (J + 1) * (size_t)s && j < (size_t)in->ny; ++j)
                for (size_t i = I * (size_t)s; i < (I + 1) * (size_t)s && i < (size_t)in->nx; ++i)
                    b |= in->blocked[j * (size_t)in->nx + i];
            blocked[J * nx + I] = b;
        }
    at += pad4(cells);
    for (size_t k = 0; k < goals && lo != NULL && hi != NULL; ++k) {
        const float* T = in->fields + k * source;
        const double scale = hi[k] > lo[k] ? NAV_LEVELS / (hi[k] - lo[k]) : 0.0;
        for (size_t J = 0; J < ny; ++J)
            for (size_t I = 0; I < nx; ++I) {
                float least = INFINITY;
                for (size_t j = J * (size_t)s; j < (J + 1) * (size_t)s && j < (size_t)in->ny; ++j)
                    for (size_t i = I * (size_t)s; i < (I + 1) * (size_t)s && i < (size_t)in->nx; ++i)
                        least = fminf(least, T[j * (size_t)in->nx + i]);
                uint16_t q = NAV_NONE;
                if (isfinite(least)) {
                    double v = nearbyint(((double)least - lo[k]) * scale);
                    q = (uint16_t)(v < 0.0 ? 0.0 : v > NAV_LEVELS ? NAV_LEVELS : v);
                }
                at[2 * (J * nx + I)] = (uint8_t)q;
                at[2 * (J * nx + I) + 1] = (uint8_t)(q >> 8);
            }
        at += pad4(2u * cells);
    }
    free(lo);
    free(hi);
}

int view_nav_build(shoal_recording_reader_t* rec, view_thinning_t thin, view_nav_t* out, shoal_error_t* err)
{
    memset(out, 0, sizeof *out);
    out->scale = 1;
    const int32_t frames = shoal_recording_reader_frame_count(rec);
    if (shoal_recording_reader_nav_count(rec) == 0 || frames == 0) return 0;
    /* Each record that applies to a page frame, with the first page frame
     * it applies to: the latest record at or before each kept frame. */
    int32_t* which = malloc((size_t)frames * sizeof *which);
    int32_t* first = malloc((size_t)frames * sizeof *first);
    if (which == NULL || first == NULL) {
        free(which);
        free(first);
        return -1;
    }
    int32_t n = 0, page = 0;
    for (int32_t f = 0; f < frames; ++f) {
        if (!view_frame_is_kept(f, frames, thin.every)) continue;
        int32_t r = shoal_recording_reader_nav_index(rec, f);
        if (r >= 0 && (n == 0 || which[n - 1] != r)) {
            which[n] = r;
            first[n++] = page;
        }
        page += 1;
    }
    out->source_records = n;
    uint64_t total = 4;
    for (int32_t k = 0; k < n; ++k) {
        shoal_recording_nav_t in;
        shoal_recording_reader_nav_info(rec, which[k], &in);
        total += record_bytes(&in);
        int32_t s = scale_of(in.nx, in.ny);
        if (s > out->scale) out->scale = s;
    }
    /* Past the budget, every k-th record (the first always). */
    int32_t every = total > VIEW_NAV_BYTES ? (int32_t)((total + VIEW_NAV_BYTES - 1) / VIEW_NAV_BYTES) : 1;
    size_t size = 4;
    int32_t kept = 0;
    for (int32_t k = 0; k < n; k += every) {
        shoal_recording_nav_t in;
        shoal_recording_reader_nav_info(rec, which[k], &in);
        size += record_bytes(&in);
        kept += 1;
    }
    uint8_t* bytes = calloc(1, size);
    if (bytes == NULL) {
        free(which);
        free(first);
        return -1;
    }
    put_u32(bytes, (uint32_t)kept);
    size_t at = 4;
    for (int32_t k = 0; k < n; k += every) {
        shoal_recording_nav_t in;
        if (shoal_recording_reader_nav(rec, which[k], &in, err) != SHOAL_OK) {
            free(bytes);
            free(which);
            free(first);
            return -2;
        }
        write_record(bytes + at, &in, (uint32_t)first[k]);
        at += record_bytes(&in);
    }
    free(which);
    free(first);
    out->bytes = bytes;
    out->size = size;
    out->records = kept;
    char part[2][128] = {"", ""};
    if (out->scale > 1)
        snprintf(part[0], sizeof part[0], "fields at 1/%d of the grid's resolution", (int)out->scale);
    if (kept < n) snprintf(part[1], sizeof part[1], "%d of %d field records", (int)kept, (int)n);
    snprintf(out->note, sizeof out->note, "%s%s%s", part[0], part[0][0] && part[1][0] ? ", " : "", part[1]);
    return 0;
}

void view_nav_free(view_nav_t* nav)
{
    free(nav->bytes);
    nav->bytes = NULL;
    nav->size = 0;
}
