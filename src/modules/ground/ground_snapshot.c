/* The ground module's snapshot section GRND: whether the world has ground
 * data; then its paths (waypoint count, half width, the waypoints as the
 * world keeps them, z = 0 in 2D) and its terrain (nx, ny, origin, cell,
 * heights; nx = ny = 0 and zeros for flat ground). Arc lengths are rebuilt
 * from the waypoints by pf_path_build, bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/ground/ground.h"

void ground_save(const world_t* w, byte_writer_t* wr)
{
    const ground_world_t* g = ground_data(w);
    bw_u32(wr, g != NULL);
    if (!g) return;
    bw_u32(wr, (uint32_t)g->path_count);
    for (int32_t i = 0; i < g->path_count; ++i) {
        const pf_path_t* p = &g->paths[i].path;
        bw_u32(wr, (uint32_t)p->count);
        bw_f32(wr, p->half_width);
        for (int32_t k = 0; k < p->count; ++k) {
            bw_f32(wr, p->points[k].x);
            bw_f32(wr, p->points[k].y);
            bw_f32(wr, p->points[k].z);
        }
    }
    const terrain_t* t = &g->terrain;
    int flat = g->heights == NULL;
    bw_u32(wr, flat ? 0u : (uint32_t)t->nx);
    bw_u32(wr, flat ? 0u : (uint32_t)t->ny);
    bw_f32(wr, flat ? 0.0f : t->origin_x);
    bw_f32(wr, flat ? 0.0f : t->origin_y);
    bw_f32(wr, flat ? 0.0f : t->cell);
    if (!flat) {
        size_t n = (size_t)t->nx * (size_t)t->ny;
        for (size_t i = 0; i < n; ++i) bw_f32(wr, g->heights[i]);
    }
}

static int load_path(byte_reader_t* rd, world_t* w, ground_world_t* g, uint32_t i)
{
    uint32_t count = br_u32(rd);
    float half_width = br_f32(rd);
    if (!br_count(rd, count, 12, INT32_MAX / 16, "waypoint count")) return 0;
    const uint8_t* raw = br_take(rd, (size_t)count * 12);
    if (!raw) return 0;
    size_t n = count;
    float* xyz = (float*)malloc(n * 3 * sizeof(float) + 1);
    vec3* points = (vec3*)mem_alloc(&w->alloc, n * sizeof(vec3));
    float* s = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    int ok = xyz && (points || n == 0) && (s || n == 0);
    char why[256] = "out of memory";
    ground_path_t* p = &g->paths[i];
    if (ok) {
        for (size_t k = 0; k < 3 * n; ++k) xyz[k] = get_f32(raw + 4 * k);
        for (size_t k = 0; ok && w->dims == 2 && k < n; ++k)
            if (xyz[3 * k + 2] != 0.0f) {
                snprintf(why, sizeof why, "waypoint %zu: z must be 0 in a 2D world", k);
                ok = 0;
            }
        ok = ok && pf_path_build(&p->path, points, s, xyz, (int32_t)count, half_width, why, sizeof why);
    }
    free(xyz);
    if (!ok) {
        mem_free(&w->alloc, points, n * sizeof(vec3));
        mem_free(&w->alloc, s, n * sizeof(float));
        memset(p, 0, sizeof *p);
        return br_fail(rd, "path %u: %s", i, why);
    }
    p->points = points;
    p->s = s;
    g->path_count = (int32_t)i + 1; /* owned by the world from here on */
    return 1;
}

int ground_load(world_t* w, byte_reader_t* rd)
{
    uint32_t present = br_u32(rd);
    if (rd->failed) return 0;
    if (present > 1) return br_fail(rd, "presence flag must be 0 or 1, got %u", present);
    if (!present) return 1;
    ground_world_t* g = ground_world_get(w);
    if (!g) return br_fail(rd, "out of memory");
    uint32_t paths = br_u32(rd);
    /* A path takes at least 8 + 2 * 12 bytes. */
    if (!br_count(rd, paths, 32, INT32_MAX / 64, "path count")) return 0;
    if (paths > 0) {
        g->paths = (ground_path_t*)mem_calloc(&w->alloc, (size_t)paths * sizeof *g->paths);
        if (!g->paths) return br_fail(rd, "out of memory for %u paths", paths);
        g->path_capacity = (int32_t)paths;
    }
    for (uint32_t i = 0; i < paths; ++i)
        if (!load_path(rd, w, g, i)) return 0;
    uint32_t nx = br_u32(rd), ny = br_u32(rd);
    float ox = br_f32(rd), oy = br_f32(rd), cell = br_f32(rd);
    if (rd->failed) return 0;
    if (nx == 0 || ny == 0) {
        if (nx != 0 || ny != 0 || ox != 0.0f || oy != 0.0f || cell != 0.0f)
            return br_fail(rd, "flat ground must be stored as nx = ny = 0 and zeros");
        return 1;
    }
    if (nx < 2 || ny < 2) return br_fail(rd, "terrain of %u x %u samples: both must be >= 2", nx, ny);
    if ((uint64_t)nx * ny > (uint64_t)(INT32_MAX / (int64_t)sizeof(float)))
        return br_fail(rd, "terrain of %u x %u samples is too large", nx, ny);
    if (!br_count(rd, nx * ny, 4, UINT32_MAX, "terrain samples")) return 0;
    if (!isfinite(ox) || !isfinite(oy) || !(isfinite(cell) && cell > 0.0f))
        return br_fail(rd, "terrain origin must be finite and its cell finite and > 0");
    size_t n = (size_t)nx * ny;
    float* heights = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    if (!heights) return br_fail(rd, "out of memory for %zu terrain samples", n);
    g->heights = heights;
    g->terrain.nx = (int32_t)nx;
    g->terrain.ny = (int32_t)ny;
    g->terrain.origin_x = ox;
    g->terrain.origin_y = oy;
    g->terrain.cell = cell;
    g->terrain.heights = heights;
    for (size_t i = 0; i < n; ++i) {
        heights[i] = br_f32(rd);
        if (!br_finite(rd, heights[i], "terrain height", (int32_t)i)) return 0;
    }
    return 1;
}
