/* The nearest neighbors from the spatial hash (src/modules/grid/grid_nearest.h):
 * find_nearest, the crowd's search with few unpredictable branches, gives
 * find_neighbors' list entry for entry (same count, same sorted positions in
 * the same order) in 2D and 3D, on unbounded worlds (hashed cells, runs of a
 * block merged) and on tori (cells indexed directly), for caps from 1 to 64,
 * ranges up to the cell edge, agents with ties in distance (a lattice) and
 * more candidates than it can scan (where it hands over, and says so). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ecs/rng.h"
#include "ecs/world.h"
#include "modules/grid/grid_nearest.h"
#include "modules/grid/grid.h"
#include "support.h"

enum { LAYOUT_RANDOM, LAYOUT_LATTICE, LAYOUT_PILE };

/* n agents with a neighbor radius of `cell` (the cell edge), stepped once
 * so that the spatial hash holds them. */
static shoal_world_t* world_of(int dims, int wrap, int n, int layout, float cell, uint64_t seed)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = 1;
    def.seed = seed;
    def.wrap = wrap;
    for (int k = 0; k < 3; ++k) {
        def.bounds_min[k] = -100.0f;
        def.bounds_max[k] = 100.0f;
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    int side = dims == 3 ? (int)ceilf(cbrtf((float)n)) : (int)ceilf(sqrtf((float)n));
    for (int i = 0; i < n; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        for (int k = 0; k < dims; ++k) {
            if (layout == LAYOUT_LATTICE) {
                int c = k == 0 ? i % side : k == 1 ? (i / side) % side : i / (side * side);
                d.position[k] = -40.0f + 2.0f * (float)c; /* many pairs at one distance */
            } else {
                float half = layout == LAYOUT_PILE ? 3.0f : 95.0f;
                d.position[k] = rng_range(seed, (uint64_t)i, 0, (uint32_t)k, -half, half);
            }
        }
        d.neighbors.radius = cell;
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    cr_assert_eq(shoal_world_step(w, 0.01f), SHOAL_OK, "%s", shoal_world_last_error(w));
    return w;
}

/* Every sorted agent as the query point (itself left out), and as many
 * random points between them (nobody left out): both searches, compared.
 * Returns how many queries find_nearest answered itself. */
static int64_t compare_all(shoal_world_t* sw, float range, int cap, uint64_t seed)
{
    const world_t* w = (const world_t*)sw;
    const grid_t* g = grid_data(w);
    cr_assert(g && g->count > 0);
    int64_t answered = 0;
    /* one cache over every query, one per kind of hint, and none kept */
    nearest_cache_t shared, per_hint[5];
    nearest_cache_init(&shared);
    for (int h = 0; h < 5; ++h) nearest_cache_init(&per_hint[h]);
    for (int32_t q = 0; q < 2 * g->count; ++q) {
        float p[3] = {0.0f, 0.0f, 0.0f};
        int32_t self = -1;
        if (q < g->count) {
            self = q;
            p[0] = g->sx[q];
            p[1] = g->sy[q];
            if (g->dims == 3) p[2] = g->sz[q];
        } else {
            int32_t k = q - g->count;
            p[0] = g->sx[k] + rng_range(seed, (uint64_t)q, 0, 0, -0.5f * range, 0.5f * range);
            p[1] = g->sy[k] + rng_range(seed, (uint64_t)q, 0, 1, -0.5f * range, 0.5f * range);
            if (g->dims == 3)
                p[2] = g->sz[k] + rng_range(seed, (uint64_t)q, 0, 2, -0.5f * range, 0.5f * range);
            if (g->wrap) /* the searches take points inside the box */
                for (int a = 0; a < g->dims; ++a) {
                    float e = g->extent[a], f = p[a] - g->origin[a];
                    f -= e * floorf(f / e);
                    if (!(f < e)) f = 0.0f;
                    p[a] = g->origin[a] + f;
                }
        }
        nearest_t ref;
        ref.count = 0;
        ref.cap = cap;
        find_neighbors(g, p, range, self, &ref);
        /* hints: none, the cap-th's d^2 itself (it holds the list exactly
         * at its edge), a little less (too few within: the whole block is
         * scanned), more, and far more than the range */
        float kth = ref.count > 0 ? ref.d2[ref.count - 1] : 0.0f;
        const float hints[] = {0.0f, kth, kth * 0.98f, kth * 1.5f + 1.0f, 4.0f * range * range};
        for (size_t h = 0; h < sizeof hints / sizeof *hints; ++h) {
            nearest_t got = {.count = 0, .cap = cap};
            nearest_cache_t fresh;
            nearest_cache_init(&fresh);
            nearest_cache_t* cache = q % 3 == 0 ? &fresh : q % 3 == 1 ? &shared : &per_hint[h];
            if (!find_nearest(g, p, range, self, hints[h], cache, &got)) continue;
            answered++;
            cr_assert_eq(got.count, ref.count,
                         "query %d (cap %d, range %g, hint %g): %d neighbors, find_neighbors %d", q, cap,
                         (double)range, (double)hints[h], got.count, ref.count);
            for (int32_t m = 0; m < ref.count; ++m) {
                cr_assert_eq(got.k[m], ref.k[m],
                             "query %d (cap %d, range %g, hint %g): neighbor %d is %d, find_neighbors %d", q,
                             cap, (double)range, (double)hints[h], m, got.k[m], ref.k[m]);
                cr_assert_eq(got.d2[m], ref.d2[m]);
            }
        }
    }
    return answered;
}

static void check(int dims, int wrap, int layout, int n)
{
    const float cell = 6.0f;
    shoal_world_t* w = world_of(dims, wrap, n, layout, cell, 11u + (uint64_t)layout);
    const grid_t* g = grid_data((const world_t*)w);
    /* unbounded worlds hash their cells; the 2D torus indexes them, the 3D
     * one (more cells than agents) hashes them and wraps */
    cr_assert_eq(g->direct, wrap && dims == 2);
    const int caps[] = {1, 8, 10, 24, 64};
    const float ranges[] = {cell, 0.6f * cell, 0.2f * cell};
    for (size_t c = 0; c < sizeof caps / sizeof *caps; ++c)
        for (size_t r = 0; r < sizeof ranges / sizeof *ranges; ++r) {
            int64_t answered = compare_all(w, ranges[r] * 0.999f, caps[c], 5u + c);
            /* these layouts fit the scan: it answers every query itself */
            cr_expect_eq(answered, 5 * 2 * (int64_t)g->count, "%dD wrap %d: find_nearest answered %ld of %d",
                         dims, wrap, (long)answered, 5 * 2 * g->count);
        }
    shoal_world_destroy(w);
}

Test(nearest_t, same_list_2d_unbounded) { check(2, 0, LAYOUT_RANDOM, 3000); }
Test(nearest_t, same_list_2d_torus) { check(2, 1, LAYOUT_RANDOM, 3000); }
Test(nearest_t, same_list_2d_lattice_ties) { check(2, 0, LAYOUT_LATTICE, 1600); }
Test(nearest_t, same_list_3d_unbounded) { check(3, 0, LAYOUT_RANDOM, 3000); }
Test(nearest_t, same_list_3d_torus) { check(3, 1, LAYOUT_RANDOM, 3000); }
Test(nearest_t, same_list_3d_lattice_ties) { check(3, 0, LAYOUT_LATTICE, 1000); }

/* 1500 agents within 6 m: the block around each holds more candidates than
 * find_nearest scans, so it declines and find_neighbors answers (the crowd
 * system falls back the same way). */
Test(nearest_t, declines_past_its_scan)
{
    shoal_world_t* w = world_of(2, 0, 1500, LAYOUT_PILE, 6.0f, 3);
    const grid_t* g = grid_data((const world_t*)w);
    nearest_t got = {.count = 0, .cap = 10};
    float p[3] = {g->sx[0], g->sy[0], 0.0f};
    nearest_cache_t cache;
    nearest_cache_init(&cache);
    cr_expect_eq(find_nearest(g, p, 6.0f, 0, 0.0f, &cache, &got), 0);
    cr_expect_eq(got.count, 0, "a declined search leaves the list alone");
    /* without a hint every query declines (a hint that keeps the scan to
     * a few cells may fit); whatever it answers agrees */
    cr_expect_lt(compare_all(w, 5.9f, 10, 9), 5 * 2 * (int64_t)g->count);
    shoal_world_destroy(w);
}
