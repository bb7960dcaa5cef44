/* Fuzz target: recordings (shoal_recording_load_memory), strict and with
 * SHOAL_RECORDING_ALLOW_TRUNCATED, in every format version (1, 2, 3 and 4
 * with their zstd-compressed frames, and 5 with navigation field records). A loaded recording promises complete,
 * finite frames and geometry (include/shoal/recording.h): every frame, wall
 * segment and obstacle is read back and checked against that promise.
 *
 * Every input is loaded as it is and again with its CRC-32s recomputed
 * (zlib's crc32, the format's polynomial; as libpng's fuzzer ignores CRCs):
 * otherwise almost every mutation stops at a checksum and the checks behind
 * it go unfuzzed. That the resealed seeds load also checks the library's
 * CRC against zlib's. */
#include <math.h>
#include <zlib.h>

#include "shoal/recording.h"
#include "tests/fuzz/fuzz.h"

static void check_recording(const shoal_recording_t* r)
{
    const shoal_recording_header_t* h = shoal_recording_header(r);
    FUZZ_CHECK(h != NULL, "no header");
    FUZZ_CHECK(h->dimensions == 2 || h->dimensions == 3, "dimensions %d", (int)h->dimensions);
    FUZZ_CHECK(isfinite(h->dt) && h->dt > 0.0f, "dt %g", (double)h->dt);
    FUZZ_CHECK(h->units && h->scenario_name && h->group_names && h->scenario_text, "a NULL header string");
    (void)strlen(h->units);
    (void)strlen(h->scenario_name);
    (void)strlen(h->group_names);
    (void)strlen(h->scenario_text);
    (void)strlen(shoal_recording_damage(r));
    int32_t frames = shoal_recording_frame_count(r), dims = h->dimensions;
    FUZZ_CHECK(frames >= 0, "frame count %d", (int)frames);
    const int v4 = shoal_recording_version(r) >= 4;
    for (int32_t f = 0; f < frames; ++f) {
        shoal_recording_frame_t fr;
        FUZZ_CHECK(shoal_recording_frame(r, f, &fr) == SHOAL_OK, "frame %d of %d", (int)f, (int)frames);
        FUZZ_CHECK(v4 ? fr.global_ids != NULL || fr.count == 0 : fr.global_ids == NULL,
                   "frame %d: global ids in a version %d file", (int)f, (int)shoal_recording_version(r));
        FUZZ_CHECK(fr.count >= 0, "frame %d: count %d", (int)f, (int)fr.count);
        FUZZ_CHECK(isfinite(fr.time), "frame %d: time", (int)f);
        for (int32_t i = 0; i < fr.count; ++i) {
            FUZZ_CHECK(i == 0 || fr.ids[i] > fr.ids[i - 1], "frame %d: ids not ascending", (int)f);
            (void)fr.generations[i];
            if (v4) (void)fr.global_ids[i];
            (void)fr.groups[i];
            for (int32_t k = 0; k < dims; ++k)
                FUZZ_CHECK(isfinite(fr.positions[dims * i + k]), "frame %d: position", (int)f);
            if (dims == 2) {
                FUZZ_CHECK(fr.headings && !fr.orientations && isfinite(fr.headings[i]), "frame %d: heading",
                           (int)f);
            } else {
                FUZZ_CHECK(fr.orientations && !fr.headings, "frame %d: orientation", (int)f);
                for (int k = 0; k < 4; ++k)
                    FUZZ_CHECK(isfinite(fr.orientations[4 * i + k]), "frame %d: orientation", (int)f);
            }
        }
    }
    int32_t version = shoal_recording_version(r);
    FUZZ_CHECK(version >= SHOAL_RECORDING_MIN_VERSION && version <= SHOAL_RECORDING_VERSION, "version %d",
               (int)version);
    shoal_recording_geometry_t g;
    shoal_status_t st = shoal_recording_geometry(r, &g);
    if (st == SHOAL_OK) {
        FUZZ_CHECK(version >= 2, "geometry in a version %d file", (int)version);
        FUZZ_CHECK(g.wall_count >= 0 && g.obstacle_count >= 0, "geometry counts");
        FUZZ_CHECK(g.walls && g.obstacles, "geometry arrays");
        FUZZ_CHECK(isfinite(g.time), "geometry time");
        for (int64_t i = 0; i < 4 * (int64_t)g.wall_count; ++i)
            FUZZ_CHECK(isfinite(g.walls[i]), "wall coordinate %lld", (long long)i);
        for (int32_t i = 0; i < g.obstacle_count; ++i) {
            const shoal_recording_obstacle_t* o = &g.obstacles[i];
            FUZZ_CHECK(o->id >= 0 && (i == 0 || o->id > g.obstacles[i - 1].id), "obstacle ids");
            FUZZ_CHECK(isfinite(o->radius) && o->radius >= 0.0f, "obstacle %d radius", (int)i);
            for (int k = 0; k < 3; ++k)
                FUZZ_CHECK(isfinite(o->center[k]) && isfinite(o->velocity[k]), "obstacle %d", (int)i);
        }
    } else {
        FUZZ_CHECK(st == SHOAL_ERR_NOT_FOUND, "geometry status %d", (int)st);
        FUZZ_CHECK(g.wall_count == 0 && g.obstacle_count == 0 && !g.walls && !g.obstacles,
                   "no geometry, yet some");
        /* Only a version 1 file, or one cut off before any frame. */
        FUZZ_CHECK(version == 1 || frames == 0, "frames without geometry in version %d", (int)version);
    }
    /* navigation field records: what recording.h promises of each */
    const int32_t navs = shoal_recording_nav_count(r);
    FUZZ_CHECK(navs >= 0 && (version >= 5 || navs == 0), "%d field records in a version %d file", (int)navs,
               (int)version);
    int32_t last_frame = 0;
    for (int32_t k = 0; k < navs; ++k) {
        shoal_recording_nav_t nv;
        FUZZ_CHECK(shoal_recording_nav(r, k, &nv) == SHOAL_OK, "field record %d of %d", (int)k, (int)navs);
        FUZZ_CHECK(nv.frame >= 0 && nv.frame < frames, "field record %d: frame %d of %d", (int)k,
                   (int)nv.frame, (int)frames);
        FUZZ_CHECK(isfinite(nv.time) && isfinite(nv.origin[0]) && isfinite(nv.origin[1]),
                   "field record %d: time", (int)k);
        FUZZ_CHECK(nv.nx >= 0 && nv.ny >= 0 && nv.goal_count >= 0, "field record %d: sizes", (int)k);
        FUZZ_CHECK(nv.nx == 0 ? nv.ny == 0 && nv.goal_count == 0
                              : nv.ny > 0 && isfinite(nv.cell) && nv.cell > 0.0f,
                   "field record %d: grid", (int)k);
        const int64_t cells = (int64_t)nv.nx * nv.ny;
        FUZZ_CHECK(cells == 0 ||
                       (nv.blocked && (nv.goal_count == 0 || (nv.goals && nv.fields && nv.max_error))),
                   "field record %d: arrays", (int)k);
        for (int64_t c = 0; c < cells; ++c)
            FUZZ_CHECK(nv.blocked[c] <= 1, "field record %d: blocked flag %d", (int)k, (int)nv.blocked[c]);
        for (int32_t q = 0; q < nv.goal_count; ++q) {
            FUZZ_CHECK(nv.goals[q] >= 0 && (q == 0 || nv.goals[q] > nv.goals[q - 1]),
                       "field record %d: goal ids", (int)k);
            FUZZ_CHECK(isfinite(nv.max_error[q]) && nv.max_error[q] >= 0.0f, "field record %d: error",
                       (int)k);
            for (int64_t c = 0; c < cells; ++c) {
                const float t = nv.fields[q * cells + c];
                FUZZ_CHECK(!isnan(t) && t >= 0.0f, "field record %d: travel time %g", (int)k, (double)t);
            }
        }
        FUZZ_CHECK(nv.frame >= last_frame, "field record %d: frame %d before %d", (int)k, (int)nv.frame,
                   (int)last_frame);
        last_frame = nv.frame;
        shoal_recording_nav_t at;
        FUZZ_CHECK(shoal_recording_nav_at(r, nv.frame, &at) == SHOAL_OK && at.frame == nv.frame,
                   "field record %d: not the one at its frame", (int)k);
    }
    shoal_recording_frame_t fr;
    FUZZ_CHECK(shoal_recording_frame(r, frames, &fr) == SHOAL_ERR_INVALID_ARGUMENT, "frame past the end");
    FUZZ_CHECK(shoal_recording_frame(r, -1, &fr) == SHOAL_ERR_INVALID_ARGUMENT, "frame -1");
}

static uint32_t get_u32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_crc(uint8_t* p, size_t covered)
{
    uint32_t c = (uint32_t)crc32(0L, p, (uInt)covered);
    for (int i = 0; i < 4; ++i) p[covered + (size_t)i] = (uint8_t)(c >> (8 * i));
}

/* The bytes of the frame at `at` as its fields claim (docs/recording.md):
 * version 3, 40 + the zstd frame padded to at least D / 1024 bytes and to
 * a multiple of 4 + 4; before, 36 + 24 or 40 bytes an agent. */
static uint64_t frame_size(const uint8_t* f, uint32_t version, uint64_t per_agent)
{
    if (version < 3) return 36 + per_agent * get_u32(f + 24);
    uint64_t decoded = get_u32(f + 32), compressed = get_u32(f + 36);
    uint64_t least = (decoded + 1023) / 1024;
    uint64_t stored = compressed > least ? compressed : least;
    return 40 + ((stored + 3) & ~(uint64_t)3) + 4;
}

/* Recompute the header's, the geometry record's, every whole frame's and
 * the end record's CRC where docs/recording.md puts them, walking the sizes
 * the bytes claim. */
static void reseal(uint8_t* d, size_t size)
{
    if (size < 20) return;
    uint64_t h = get_u32(d + 12);
    if (h < 8 || h > size) return;
    put_crc(d, (size_t)h - 4);
    uint32_t version = get_u32(d + 8);
    uint64_t per_agent = get_u32(d + 16) == 3 ? 40 : 24;
    for (uint64_t at = h; at + 12 <= size;) {
        if (memcmp(d + at, "GEOM", 4) == 0 && at + 24 <= size) {
            uint64_t bytes = 28 + 16 * (uint64_t)get_u32(d + at + 16) + 32 * (uint64_t)get_u32(d + at + 20);
            if (at + bytes > size) return;
            put_crc(d + at, (size_t)bytes - 4);
            at += bytes;
        } else if (memcmp(d + at, "NAVF", 4) == 0 && at + 60 <= size) {
            uint64_t decoded = get_u32(d + at + 52), compressed = get_u32(d + at + 56);
            uint64_t least = (decoded + 1023) / 1024, stored = compressed > least ? compressed : least;
            uint64_t bytes = 60 + 12 * (uint64_t)get_u32(d + at + 12) + ((stored + 3) & ~(uint64_t)3) + 4;
            if (at + bytes > size) return;
            put_crc(d + at, (size_t)bytes - 4);
            at += bytes;
        } else if (memcmp(d + at, "FRAM", 4) == 0 && at + (version < 3 ? 32u : 40u) <= size) {
            uint64_t bytes = frame_size(d + at, version, per_agent);
            if (at + bytes > size) return;
            put_crc(d + at, (size_t)bytes - 4);
            at += bytes;
        } else {
            if (memcmp(d + at, "DONE", 4) == 0) put_crc(d + at, 8);
            return;
        }
    }
}

static void load(const uint8_t* data, size_t size)
{
    static const uint32_t flags[2] = {0, SHOAL_RECORDING_ALLOW_TRUNCATED};
    int loaded[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
        shoal_recording_t* r = (shoal_recording_t*)(uintptr_t)1;
        shoal_error_t err;
        memset(&err, 0, sizeof err);
        shoal_status_t st = shoal_recording_load_memory(data, size, "fuzz", flags[k], &r, &err);
        if (st != SHOAL_OK) {
            FUZZ_CHECK(r == NULL, "a failed load left *out set");
            FUZZ_CHECK(err.status == st && err.message[0] != '\0', "a failed load gave no message");
            continue;
        }
        loaded[k] = 1;
        FUZZ_CHECK(r != NULL, "load succeeded without a recording");
        if (k == 0) FUZZ_CHECK(shoal_recording_is_complete(r), "a strict load of an incomplete file");
        check_recording(r);
        shoal_recording_destroy(r);
    }
    /* Whatever loads strictly also loads when truncation is allowed. */
    FUZZ_CHECK(!loaded[0] || loaded[1], "strict load passed, tolerant load failed");
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    load(data, size);
    uint8_t* sealed = malloc(size > 0 ? size : 1);
    if (!sealed) return 0;
    memcpy(sealed, data, size);
    reseal(sealed, size);
    if (memcmp(sealed, data, size) != 0) load(sealed, size);
    free(sealed);
    return 0;
}
