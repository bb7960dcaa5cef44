/* The scenes and quality figures of `shoal bench crowd` (benchmark/bench_crowd.c),
 * shared with the RVO2 driver (benchmark/rvo2/driver.cc) so that both place the
 * same agents with the same float arithmetic and measure them the same way.
 * C11 and C++; header only.
 *
 * Layouts (agent i of the add order gets pos[3i..3i+2] and goal[3i..3i+2]):
 * - grid: two blocks, N/2 agents and N - N/2, both c columns wide with
 *   c = ceil(sqrt(N - N/2)) (3D: c = ceil(cbrt(N - N/2)) columns and rows),
 *   4 m apart; agent k of a block sits at column k mod c, row k div c
 *   (3D: row (k div c) mod c, layer k div c^2), rows (and layers) centered
 *   on 0; the left block's last column is at x = -10, the right block's
 *   first at x = +10 (a 20 m gap). Each goal is the start mirrored across
 *   x = 0, so the blocks walk through each other.
 * - gridshuf: the grid's agents in an order shuffled by Fisher-Yates with
 *   rng_splitmix64 (seed CROWD_SHUFFLE_SEED), so storage order starts out
 *   spatially incoherent.
 * - circle (2D): N agents on a circle of radius R = 200 N / 250 (RVO2's
 *   Circle example at N = 250), agent i at angle 2 pi i / N, bound for its
 *   antipode; the angle and its cosine and sine in double, so that the
 *   arc between neighbors is 2 pi R / N (5.03 m) at any N up to the
 *   positions' own rounding. (In float, the angle's rounding moved agents
 *   by up to 0.38 m along the arc at 1M agents: the third neighbor on each
 *   side, 15.08 m away, came within the 15 m neighbor distance of many.)
 *   3D: a sphere of radius R3 = R sqrt(pi / N), so that an agent's area
 *   4 pi R3^2 / N is the circle's arc per agent squared,
 *   (2 pi R / N)^2; the agents on a Fibonacci lattice, each bound for its
 *   antipode.
 *
 * Quality: the smallest center distance between two agents divided by the
 * sum of their radii, and the pairs closer than 99 % of that sum, found
 * with a hashed uniform grid of cell 4 x the largest radius (each pair
 * once, O(N) per measure). Every pair closer than the cell is examined, so
 * the minimum is exact whenever it is below 2 (for equal radii); when no
 * two agents are within a cell of each other it is left at +infinity. */
#ifndef SHOAL_BENCH_CROWD_SCENE_H
#define SHOAL_BENCH_CROWD_SCENE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/rng.h"

#define CROWD_SPACING 4.0f   /* m between grid neighbors */
#define CROWD_HALF_GAP 10.0f /* m from x = 0 to each block's inner edge */
#define CROWD_SHUFFLE_SEED 0x5ca1ab1eull
#define CROWD_OVERLAP_SHARE 0.99f

enum { CROWD_GRID = 0, CROWD_GRIDSHUF = 1, CROWD_CIRCLE = 2 };

static inline const char* crowd_scenario_name(int scenario)
{
    return scenario == CROWD_GRID ? "grid" : scenario == CROWD_GRIDSHUF ? "gridshuf" : "circle";
}

/* CROWD_* for a name, -1 for an unknown one. */
static inline int crowd_scenario_of(const char* name)
{
    if (!strcmp(name, "grid")) return CROWD_GRID;
    if (!strcmp(name, "gridshuf")) return CROWD_GRIDSHUF;
    if (!strcmp(name, "circle")) return CROWD_CIRCLE;
    return -1;
}

/* The smallest c with c^dims >= n. */
static inline int64_t crowd_side(int64_t n, int dims)
{
    int64_t c = (int64_t)(dims == 2 ? ceil(sqrt((double)n)) : ceil(cbrt((double)n)));
    if (c < 1) c = 1;
    while (c > 1 && (dims == 2 ? (c - 1) * (c - 1) : (c - 1) * (c - 1) * (c - 1)) >= n) --c;
    while ((dims == 2 ? c * c : c * c * c) < n) ++c;
    return c;
}

static inline void crowd_grid(int dims, int64_t n, float* pos, float* goal)
{
    const int64_t block[2] = {n / 2, n - n / 2};
    const int64_t c = crowd_side(block[1], dims);
    int64_t i = 0;
    for (int b = 0; b < 2; ++b) {
        const int64_t m = block[b];
        /* rows (and layers) this block fills, for centering */
        int64_t rows, layers = 1;
        if (dims == 2) {
            rows = (m + c - 1) / c;
        } else {
            rows = m >= c * c ? c : (m + c - 1) / c;
            layers = (m + c * c - 1) / (c * c);
        }
        const float x0 = b == 0 ? -CROWD_HALF_GAP - CROWD_SPACING * (float)(c - 1) : CROWD_HALF_GAP;
        for (int64_t k = 0; k < m; ++k, ++i) {
            const int64_t col = k % c;
            const int64_t row = dims == 2 ? k / c : (k / c) % c;
            const int64_t layer = dims == 2 ? 0 : k / (c * c);
            float* p = pos + 3 * i;
            float* g = goal + 3 * i;
            p[0] = x0 + CROWD_SPACING * (float)col;
            p[1] = CROWD_SPACING * ((float)row - 0.5f * (float)(rows - 1));
            p[2] = dims == 2 ? 0.0f : CROWD_SPACING * ((float)layer - 0.5f * (float)(layers - 1));
            g[0] = -p[0];
            g[1] = p[1];
            g[2] = p[2];
        }
    }
}

static inline void crowd_circle(int dims, int64_t n, float* pos, float* goal)
{
    const float radius = 200.0f * (float)n / 250.0f;
    const double pi = 3.14159265358979323846;
    if (dims == 2) {
        for (int64_t i = 0; i < n; ++i) {
            const double a = 2.0 * pi * (double)i / (double)n;
            float* p = pos + 3 * i;
            p[0] = (float)((double)radius * cos(a));
            p[1] = (float)((double)radius * sin(a));
            p[2] = 0.0f;
            goal[3 * i] = -p[0];
            goal[3 * i + 1] = -p[1];
            goal[3 * i + 2] = 0.0f;
        }
        return;
    }
    const double r3 = (double)radius * sqrt(pi / (double)n);
    const double golden = pi * (3.0 - sqrt(5.0));
    for (int64_t i = 0; i < n; ++i) {
        const double z = 1.0 - (2.0 * (double)i + 1.0) / (double)n;
        const double r = sqrt(1.0 - z * z);
        const double phi = golden * (double)i;
        float* p = pos + 3 * i;
        p[0] = (float)(r3 * r * cos(phi));
        p[1] = (float)(r3 * r * sin(phi));
        p[2] = (float)(r3 * z);
        for (int k = 0; k < 3; ++k) goal[3 * i + k] = -p[k];
    }
}

/* Fill pos and goal (3 floats per agent, n agents, in add order). */
static inline void crowd_layout(int scenario, int dims, int64_t n, float* pos, float* goal)
{
    if (scenario == CROWD_CIRCLE) {
        crowd_circle(dims, n, pos, goal);
        return;
    }
    crowd_grid(dims, n, pos, goal);
    if (scenario != CROWD_GRIDSHUF) return;
    uint64_t state = CROWD_SHUFFLE_SEED;
    for (int64_t i = n - 1; i > 0; --i) {
        const int64_t j = (int64_t)(rng_splitmix64(&state) % (uint64_t)(i + 1));
        for (int k = 0; k < 3; ++k) {
            float t = pos[3 * i + k];
            pos[3 * i + k] = pos[3 * j + k];
            pos[3 * j + k] = t;
            t = goal[3 * i + k];
            goal[3 * i + k] = goal[3 * j + k];
            goal[3 * j + k] = t;
        }
    }
}

/* ---- quality ----------------------------------------------------------------- */

typedef struct crowd_quality {
    double min_ratio; /* smallest distance / (r_i + r_j) seen, +inf if none within a cell */
    int64_t overlaps; /* pairs closer than 99 % of r_i + r_j, summed over the measures */
    int64_t samples;  /* measures taken */
    /* scratch, kept between measures */
    int64_t capacity;
    int32_t *cell, *start, *order;
    int64_t table;
} crowd_quality_t;

static inline void crowd_quality_init(crowd_quality_t* q)
{
    memset(q, 0, sizeof *q);
    q->min_ratio = INFINITY;
}

static inline void crowd_quality_free(crowd_quality_t* q)
{
    free(q->cell);
    free(q->start);
    free(q->order);
    q->cell = q->start = q->order = NULL;
    q->capacity = 0;
}

static inline uint64_t crowd_cell_hash(int32_t x, int32_t y, int32_t z)
{
    return rng_mix64((uint64_t)(uint32_t)x ^ ((uint64_t)(uint32_t)y << 21) ^ ((uint64_t)(uint32_t)z << 42));
}

/* One measure over n agents at (x[i], y[i], z[i]) (z NULL in 2D) with radii
 * r[i]. Returns 0 when out of memory. */
static inline int crowd_quality_measure(crowd_quality_t* q, int64_t n, const float* x, const float* y,
                                        const float* z, const float* r)
{
    if (n < 2) {
        q->samples += 1;
        return 1;
    }
    if (q->capacity < n) {
        crowd_quality_free(q);
        int64_t table = 1;
        while (table < 2 * n) table *= 2;
        q->cell = (int32_t*)malloc((size_t)n * 3 * sizeof(int32_t));
        q->order = (int32_t*)malloc((size_t)n * sizeof(int32_t));
        q->start = (int32_t*)malloc((size_t)(table + 1) * sizeof(int32_t));
        if (!q->cell || !q->order || !q->start) {
            crowd_quality_free(q);
            return 0;
        }
        q->capacity = n;
        q->table = table;
    }
    float rmax = 0.0f;
    for (int64_t i = 0; i < n; ++i)
        if (r[i] > rmax) rmax = r[i];
    const float cell = rmax > 0.0f ? 4.0f * rmax : 1.0f;
    const float inv = 1.0f / cell;
    const uint64_t mask = (uint64_t)q->table - 1;
    memset(q->start, 0, (size_t)(q->table + 1) * sizeof(int32_t));
    for (int64_t i = 0; i < n; ++i) {
        int32_t* c = q->cell + 3 * i;
        c[0] = (int32_t)floorf(x[i] * inv);
        c[1] = (int32_t)floorf(y[i] * inv);
        c[2] = z ? (int32_t)floorf(z[i] * inv) : 0;
        q->start[(crowd_cell_hash(c[0], c[1], c[2]) & mask) + 1] += 1;
    }
    for (int64_t b = 0; b < q->table; ++b) q->start[b + 1] += q->start[b];
    /* place, then shift start back (start[b] is bucket b's first entry) */
    for (int64_t i = 0; i < n; ++i) {
        const int32_t* c = q->cell + 3 * i;
        const uint64_t b = crowd_cell_hash(c[0], c[1], c[2]) & mask;
        q->order[q->start[b]++] = (int32_t)i;
    }
    for (int64_t b = q->table; b > 0; --b) q->start[b] = q->start[b - 1];
    q->start[0] = 0;

    double best = q->min_ratio;
    int64_t overlaps = 0;
    const int zr = z ? 1 : 0;
    for (int64_t i = 0; i < n; ++i) {
        const int32_t* c = q->cell + 3 * i;
        for (int dz = -zr; dz <= zr; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const int32_t cx = c[0] + dx, cy = c[1] + dy, cz = c[2] + dz;
                    const uint64_t b = crowd_cell_hash(cx, cy, cz) & mask;
                    for (int32_t e = q->start[b]; e < q->start[b + 1]; ++e) {
                        const int32_t j = q->order[e];
                        if (j <= i) continue;
                        const int32_t* cj = q->cell + 3 * j;
                        if (cj[0] != cx || cj[1] != cy || cj[2] != cz) continue;
                        const float ddx = x[i] - x[j], ddy = y[i] - y[j], ddz = z ? z[i] - z[j] : 0.0f;
                        const float d = sqrtf(ddx * ddx + ddy * ddy + ddz * ddz);
                        const float sum = r[i] + r[j];
                        if (sum <= 0.0f) continue;
                        const double ratio = (double)d / (double)sum;
                        if (ratio < best) best = ratio;
                        overlaps += d < CROWD_OVERLAP_SHARE * sum;
                    }
                }
    }
    q->min_ratio = best;
    q->overlaps += overlaps;
    q->samples += 1;
    return 1;
}

/* Mean distance to the goal and the fraction within one radius of it. */
static inline void crowd_goal_figures(int64_t n, const float* x, const float* y, const float* z,
                                      const float* gx, const float* gy, const float* gz, const float* r,
                                      double* mean_dist, double* arrived)
{
    double sum = 0.0;
    int64_t in = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float dx = x[i] - gx[i], dy = y[i] - gy[i], dz = z ? z[i] - gz[i] : 0.0f;
        const float d2 = dx * dx + dy * dy + dz * dz;
        sum += sqrt((double)d2);
        in += d2 <= r[i] * r[i];
    }
    *mean_dist = n > 0 ? sum / (double)n : 0.0;
    *arrived = n > 0 ? (double)in / (double)n : 0.0;
}

/* Whether measure number `step` (1-based, warm-up included) of a run of
 * `total` steps is taken: every `every` steps, and always after the last. */
static inline int crowd_quality_due(int64_t step, int64_t total, int64_t every)
{
    return step == total || (every > 0 && step % every == 0);
}

#endif /* SHOAL_BENCH_CROWD_SCENE_H */
