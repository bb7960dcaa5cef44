/* The sense stage's sorted copies (src/modules/grid/spatial_hash.c): right after
 * the spatial hash, every sorted position k holds, bit for bit, agent row
 * order[k]'s position (wrapped into a torus box) and velocity, and that
 * agent's neighbors row; the order lists every row once, sorted by bucket,
 * within a bucket by cell (each cell one run, grid_cell_run), within a cell
 * by global id; the runs of buckets of a hashed grid say what they hold.
 * Checked by a user system that runs after the hash in the sense stage,
 * through reorders and the steps between them, with the neighbors
 * component on every agent in agent-row order (the copies go a lane at a
 * time), on every agent out of that order, and on some agents only; with
 * agents teleported out of a torus box between steps (a lane that has left
 * the box is wrapped on its own); with a crowd at the box's corner, so that
 * the first and last buckets are full and agents cross from one end of the
 * buckets to the other (a sort block's keys then wrap around the buckets);
 * with few agents spread over more blocks of cells than the table has runs
 * of buckets (cells sharing buckets); with one agent's radius raised and
 * lowered between reorders (the cells follow it at once); in 2D and 3D, on
 * 1 and 2 threads. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modules/neighbors/neighbors.h"
#include "ecs/component.h"
#include "ecs/world.h"
#include "modules/registry.h"
#include "modules/grid/grid.h"
#include "shoal/snapshot.h"
#include "support.h"

enum { NB_EVERY_IN_ORDER, NB_EVERY_OUT_OF_ORDER, NB_SOME };

typedef struct sense_check {
    int in_order;     /* the neighbors component must be in agent-row order */
    int32_t checks;   /* steps checked */
    int32_t outside;  /* sorted agents whose stored position was outside the box */
    int32_t shared;   /* runs of buckets seen holding several blocks' cells */
    int32_t mixed;    /* buckets seen holding several cells */
    int32_t failures; /* the first one described in `what` */
    char what[200];
} sense_check_t;

static float wrapped(float p, float origin, float extent)
{
    float f = p - origin;
    if (f >= 0.0f && f < extent) return p;
    f -= extent * floorf(f / extent);
    if (f >= extent) f = 0.0f;
    return origin + f;
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static void fail(sense_check_t* c, const char* what, int32_t k)
{
    if (c->failures++ == 0) snprintf(c->what, sizeof c->what, "sorted position %d: %s", (int)k, what);
}

static shoal_status_t check_sorted(shoal_world_t* sw, float dt, void* ctx)
{
    (void)dt;
    sense_check_t* c = (sense_check_t*)ctx;
    world_t* w = (world_t*)sw;
    const grid_t* g = grid_data(w);
    if (!g || g->count != w->agents.count) {
        fail(c, "no grid of every agent", -1);
        return SHOAL_OK;
    }
    const component_t* nb = &w->comps[COMP_NEIGHBORS];
    const uint32_t* slots = table_slots(&w->agents);
    const float* p[3] = {AGENT_F(w, AC_POS_X), AGENT_F(w, AC_POS_Y),
                         w->dims == 3 ? AGENT_F(w, AC_POS_Z) : NULL};
    const float* v[3] = {AGENT_F(w, AC_VEL_X), AGENT_F(w, AC_VEL_Y),
                         w->dims == 3 ? AGENT_F(w, AC_VEL_Z) : NULL};
    float* const sp[3] = {g->sx, g->sy, g->sz};
    float* const sv[3] = {g->svx, g->svy, g->svz};
    char* seen = calloc((size_t)g->count, 1);
    cr_assert_not_null(seen);
    for (int32_t k = 0; k < g->count; ++k) {
        int32_t r = g->order[k];
        if (r < 0 || r >= g->count || seen[r]) {
            fail(c, "the order is not a permutation of the rows", k);
            break;
        }
        seen[r] = 1;
        int outside = 0;
        for (int a = 0; a < w->dims; ++a) {
            float want = p[a][r];
            if (w->wrap) {
                float origin = w->bounds_min[a], extent = w->bounds_max[a] - w->bounds_min[a];
                outside |= !(want - origin >= 0.0f && want - origin < extent);
                want = wrapped(want, origin, extent);
            }
            if (!same_bits(sp[a][k], want)) fail(c, "a position is not the row's", k);
            if (!same_bits(sv[a][k], v[a][r])) fail(c, "a velocity is not the row's", k);
        }
        c->outside += outside;
        if (g->scomp[k] != component_row(nb, slots[r])) fail(c, "the neighbors row is not the agent's", k);
    }
    free(seen);
    if (c->in_order) { /* the path that takes a sorted agent's row for its component row */
        const int32_t* crow = TABLE_COL(&nb->table, int32_t, COMP_ROW);
        if (nb->table.count != w->agents.count) fail(c, "the component is not on every agent", -1);
        for (int32_t r = 0; r < nb->table.count; ++r)
            if (crow[r] != r) {
                fail(c, "the component is out of agent-row order", r);
                break;
            }
    }
    /* Cells at least as wide as the largest neighbor radius. */
    const float* radius = TABLE_COL(&nb->table, float, NB_RADIUS);
    float largest = 0.0f;
    for (int32_t r = 0; r < nb->table.count; ++r) largest = radius[r] > largest ? radius[r] : largest;
    for (int a = 0; a < w->dims; ++a)
        if (!(1.0f / g->inv_cell[a] >= largest)) fail(c, "cells narrower than the largest radius", -1);
    /* Each sorted agent's cell, from its sorted position (a hashed grid
     * keeps them: grid_t.scell). */
    int32_t* cells = malloc(((size_t)g->count + 1) * 3 * sizeof(int32_t));
    cr_assert_not_null(cells);
    for (int32_t k = 0; k < g->count; ++k) {
        int32_t* cell = cells + 3 * (size_t)k;
        for (int a = 0; a < 3; ++a) cell[a] = a < w->dims ? grid_coord(g, sp[a][k], a) : 0;
        int32_t kept[3];
        grid_sorted_cell(g, k, kept);
        if (memcmp(kept, cell, sizeof kept)) fail(c, "a sorted cell is not the position's", k);
    }
    /* Buckets in order, each one's agents in order of cell, each cell's
     * in global id order, in the bucket of their cell. */
    if (g->cell_start[0] != 0 || g->cell_start[g->bucket_count] != g->count)
        fail(c, "buckets do not cover the rows", -1);
    for (int32_t q = 0; q < g->bucket_count; ++q) {
        if (g->cell_start[q + 1] < g->cell_start[q]) fail(c, "bucket starts go back", g->cell_start[q]);
        for (int32_t k = g->cell_start[q]; k < g->cell_start[q + 1]; ++k) {
            const int32_t* cell = cells + 3 * (size_t)k;
            if (grid_bucket(g, cell[0], cell[1], cell[2]) != (uint32_t)q)
                fail(c, "an agent in another bucket", k);
            if (k == g->cell_start[q]) continue;
            const int32_t* before = cells + 3 * (size_t)(k - 1);
            const int same = !memcmp(before, cell, 3 * sizeof(int32_t));
            c->mixed += !same;
            if (!same && !grid_cell_less(before, cell)) fail(c, "cells out of order within a bucket", k);
            if (same && agent_global_id(w, g->order[k - 1]) >= agent_global_id(w, g->order[k]))
                fail(c, "agents out of id order within a cell", k);
        }
    }
    /* Each agent's cell is one run that holds it; a hashed grid's runs of
     * buckets say which block's cells they hold, or that they hold more
     * than one block's. */
    for (int32_t k = 0; k < g->count; ++k) {
        const int32_t* cell = cells + 3 * (size_t)k;
        int32_t lo, hi;
        grid_cell_run(g, cell[0], cell[1], cell[2], &lo, &hi);
        if (!(lo <= k && k < hi)) fail(c, "an agent outside its cell's run", k);
        for (int32_t j = lo; j < hi; ++j)
            if (memcmp(cells + 3 * (size_t)j, cell, 3 * sizeof(int32_t)))
                fail(c, "an agent of another cell in a cell's run", j);
    }
    const int sh = GRID_BLOCK_SHIFT(g->dims);
    if (g->cell_runs != !g->direct) fail(c, "a hashed grid without cells' runs", -1);
    for (int32_t r = 0; !g->direct && r < g->bucket_count >> GRID_RUN_SHIFT; ++r) {
        const int32_t* run = g->runs + (size_t)r * GRID_RUN_FIELDS;
        const int32_t k0 = g->cell_start[r << GRID_RUN_SHIFT], k1 = g->cell_start[(r + 1) << GRID_RUN_SHIFT];
        int blocks = 0;
        int32_t first[3] = {0, 0, 0};
        for (int32_t k = k0; k < k1; ++k) {
            int32_t block[3];
            for (int a = 0; a < 3; ++a) block[a] = cells[3 * (size_t)k + (size_t)a] >> sh;
            if (k == k0) memcpy(first, block, sizeof first);
            blocks = k == k0 ? 1 : memcmp(first, block, sizeof first) ? 2 : blocks;
        }
        const int want = blocks == 0 ? GRID_RUN_EMPTY : blocks == 1 ? GRID_RUN_ONE : GRID_RUN_SHARED;
        if (run[3] != want) fail(c, "a run of buckets misreads what it holds", k0);
        c->shared += want == GRID_RUN_SHARED;
        if (want == GRID_RUN_ONE && memcmp(run, first, sizeof first))
            fail(c, "a run's block is not its cells'", k0);
    }
    free(cells);
    c->checks++;
    return SHOAL_OK;
}

static void check_sense_n(int dims, int wrap, int threads, int layout, int n, int steps)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    def.seed = 11;
    def.wrap = wrap;
    def.reorder_interval = 3;
    /* as dense as 6000 agents in a box of side 80 */
    float half = 40.0f * (dims == 3 ? cbrtf((float)n / 6000.0f) : sqrtf((float)n / 6000.0f));
    for (int k = 0; k < 3; ++k) {
        def.bounds_min[k] = -half;
        def.bounds_max[k] = half;
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    /* Above 4096 agents the hash's blocks and the reorder's passes split
     * over the workers; the count is not a multiple of any lane width. */
    const int N = n;
    shoal_agent_t* ids = malloc((size_t)N * sizeof *ids);
    char* gone = calloc((size_t)N, 1);
    cr_assert(ids && gone);
    uint64_t s = 5;
    shoal_agent_def_t d0 = shoal_agent_default_def();
    d0.neighbors.radius = 2.0f;
    d0.weights[SHOAL_BEHAVIOR_WANDER] = 0.3f;
    for (int i = 0; i < N; ++i) {
        shoal_agent_def_t d = d0;
        for (int k = 0; k < dims; ++k) d.position[k] = uniform(&s, 0.98f * -half, 0.98f * half);
        if (i % 16 == 0) /* a crowd at the box's corner: the first and the last cells full, and crossings */
            for (int k = 0; k < dims; ++k)
                d.position[k] = uniform(&s, -1.0f, 1.0f) < 0.0f ? uniform(&s, -half, -half + 2.5f)
                                                                : uniform(&s, half - 2.5f, half);
        d.velocity[0] = uniform(&s, -3.0f, 3.0f);
        d.velocity[1] = uniform(&s, -3.0f, 3.0f);
        d.heading = uniform(&s, -3.0f, 3.0f);
        if (layout != NB_SOME || i % 3 == 0) d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    sense_check_t c = {0};
    cr_assert_eq(shoal_world_add_system(w, "check_sorted", SHOAL_STAGE_SENSE, check_sorted, &c), SHOAL_OK);
    for (int step = 0; step < steps; ++step) {
        c.in_order = layout == NB_EVERY_IN_ORDER && step > 0;
        if (layout == NB_EVERY_IN_ORDER && step == 2) {
            /* Removals and adds between reorders keep agent-row order. */
            for (int i = 5; i < N; i += 61) {
                cr_assert_eq(shoal_agent_remove(w, ids[i]), SHOAL_OK);
                gone[i] = 1;
            }
            for (int i = 0; i < 7; ++i) {
                shoal_agent_def_t d = d0;
                d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
                d.position[0] = 0.5f * (float)i;
                cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
            }
        }
        if (layout == NB_EVERY_OUT_OF_ORDER && step % 3 == 1) {
            /* Some agents lose the component and get it back: their rows
             * go to the end of its table, out of agent-row order, until
             * the next reorder puts them back. */
            for (int i = step; i < N; i += 7)
                if (!gone[i])
                    cr_assert_eq(shoal_agent_set_behavior(w, ids[i], SHOAL_BEHAVIOR_SEPARATE, 0.0f),
                                 SHOAL_OK);
            for (int i = step; i < N; i += 7)
                if (!gone[i])
                    cr_assert_eq(shoal_agent_set_behavior(w, ids[i], SHOAL_BEHAVIOR_SEPARATE, 1.0f),
                                 SHOAL_OK);
        }
        if (step == 4) {
            /* One agent looks farther, between reorders (the cells must
             * widen at once), and at step 5 back as before. */
            shoal_neighbors_t nbd = shoal_agent_default_def().neighbors;
            nbd.radius = 3.5f;
            cr_assert_eq(shoal_agent_set_neighbors(w, ids[3 * 41], &nbd), SHOAL_OK, "%s",
                         shoal_world_last_error(w));
        }
        if (step == 5) {
            shoal_neighbors_t nbd = shoal_agent_default_def().neighbors;
            nbd.radius = 2.0f;
            cr_assert_eq(shoal_agent_set_neighbors(w, ids[3 * 41], &nbd), SHOAL_OK, "%s",
                         shoal_world_last_error(w));
        }
        if (wrap && step % 2 == 1) {
            /* A few agents out of the box, before wrap brings them back. */
            for (int i = step; i < N; i += 97) {
                if (gone[i]) continue;
                shoal_agent_state_t st;
                cr_assert_eq(shoal_agent_get_state(w, ids[i], &st), SHOAL_OK);
                float pos[3] = {st.position[0], st.position[1], st.position[2]};
                pos[i % dims] += (i & 1) ? 80.5f : -81.25f;
                float q[4] = {1.0f, 0.0f, 0.0f, 0.0f};
                cr_assert_eq(shoal_agent_teleport(w, ids[i], pos, st.velocity, st.heading, q), SHOAL_OK, "%s",
                             shoal_world_last_error(w));
            }
        }
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(c.failures, 0, "step %d (%dD, wrap %d, %d threads): %d failures, first: %s", step, dims,
                     wrap, threads, c.failures, c.what);
    }
    cr_assert_eq(c.checks, steps);
    if (wrap) cr_assert_gt(c.outside, 0, "no agent was outside the box when sensed");
    if (layout == NB_EVERY_OUT_OF_ORDER) {
        /* Between reorders the component is out of agent-row order. */
        const component_t* nb = &((world_t*)w)->comps[COMP_NEIGHBORS];
        const int32_t* crow = TABLE_COL(&nb->table, int32_t, COMP_ROW);
        int32_t off = 0;
        for (int32_t r = 0; r < nb->table.count; ++r) off += crow[r] != r;
        cr_assert_eq(nb->table.count, shoal_world_agent_count(w));
        cr_assert_gt(off, 0, "the neighbors rows are all in agent-row order");
    }
    free(ids);
    free(gone);
    shoal_world_destroy(w);
}

static void check_sense(int dims, int wrap, int threads, int layout)
{
    check_sense_n(dims, wrap, threads, layout, 6003, 8);
}

Test(sense, sorted_copies_2d_torus_in_order) { check_sense(2, 1, 1, NB_EVERY_IN_ORDER); }
Test(sense, sorted_copies_2d_torus_in_order_two_threads) { check_sense(2, 1, 2, NB_EVERY_IN_ORDER); }
Test(sense, sorted_copies_2d_torus_out_of_order) { check_sense(2, 1, 2, NB_EVERY_OUT_OF_ORDER); }
Test(sense, sorted_copies_2d_torus_some_agents) { check_sense(2, 1, 2, NB_SOME); }
Test(sense, sorted_copies_2d_unbounded) { check_sense(2, 0, 2, NB_EVERY_IN_ORDER); }
Test(sense, sorted_copies_3d_torus_in_order) { check_sense(3, 1, 2, NB_EVERY_IN_ORDER); }
Test(sense, sorted_copies_3d_torus_out_of_order) { check_sense(3, 1, 1, NB_EVERY_OUT_OF_ORDER); }
Test(sense, sorted_copies_3d_unbounded) { check_sense(3, 0, 1, NB_EVERY_IN_ORDER); }
/* Above COPY_LANES_MAX agents the copies go one agent at a time. */
Test(sense, big_world_sorted_copies_2d) { check_sense_n(2, 1, 2, NB_EVERY_IN_ORDER, 140001, 5); }
Test(sense, big_world_sorted_copies_3d_out_of_order)
{
    check_sense_n(3, 1, 2, NB_EVERY_OUT_OF_ORDER, 140001, 5);
}

/* The grid is a module of its own: no component, state hash or snapshot
 * section (so its place in the registry changes no number, hash or file),
 * and the modules that use it say so through module_t.grid. */
/* Few agents spread far: more blocks of cells than a table of 1024
 * buckets has runs (16), so runs hold several blocks' cells, and buckets
 * several cells, each one run by global id. */
static void check_shared_buckets(int dims)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.seed = 3;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    uint64_t s = 9;
    const float half = dims == 3 ? 40.0f : 200.0f; /* 10^3 blocks of 8 m, 25^2 of 16 m */
    for (int i = 0; i < 1000; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.neighbors.radius = 2.0f;
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        for (int k = 0; k < dims; ++k) d.position[k] = uniform(&s, -half, half);
        if (i % 10 == 0) /* some neighbors */
            for (int k = 0; k < dims; ++k) d.position[k] = 0.5f * (float)(i % 7) + (float)k;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    sense_check_t c = {0};
    cr_assert_eq(shoal_world_add_system(w, "check_sorted", SHOAL_STAGE_SENSE, check_sorted, &c), SHOAL_OK);
    step_n(w, 3, 0.05f);
    cr_assert_eq(c.failures, 0, "%dD: %d failures, first: %s", dims, c.failures, c.what);
    cr_assert_eq(c.checks, 3);
    cr_assert_gt(c.shared, 0, "%dD: no run of buckets held several blocks' cells", dims);
    cr_assert_gt(c.mixed, 0, "%dD: no bucket held several cells", dims);
    shoal_world_destroy(w);
}

Test(sense, cells_that_share_buckets_2d) { check_shared_buckets(2); }
Test(sense, cells_that_share_buckets_3d) { check_shared_buckets(3); }

/* A block's run in Z order, computed a bit at a time: the block's
 * coordinates modulo 1 << shift, bit i of x at bit dims * i, of y next, of
 * z next, the bits past the table's runs dropped. */
static uint32_t z_order_run(int dims, uint32_t shift, uint32_t runs, int32_t bx, int32_t by, int32_t bz)
{
    const uint32_t c[3] = {(uint32_t)bx, (uint32_t)by, (uint32_t)bz};
    uint32_t run = 0;
    for (uint32_t i = 0; i < shift; ++i)
        for (int a = 0; a < dims; ++a) run |= (c[a] >> i & 1u) << ((uint32_t)dims * i + (uint32_t)a);
    return run & (runs - 1u);
}

/* Blocks of cells take their runs of buckets in Z order (grid_bucket): each
 * block the run the bits of its coordinates interleaved give, so that the
 * 2 x 2 (2 x 2 x 2) blocks of even corner take consecutive runs; and a box
 * of blocks as large as the table's runs, 1 << block_shift along x and the
 * rest halved along y (then z), takes each run once, on either side of the
 * origin. */
static void check_block_z_order(int dims, int agents)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    for (int i = 0; i < agents; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        d.position[0] = (float)(i % 100);
        d.position[1] = (float)(i / 100);
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    step_n(w, 1, 0.05f);
    const grid_t* g = (const grid_t*)((world_t*)w)->module_data[MOD_GRID];
    cr_assert(g && g->count == agents && !g->direct);
    const int side = dims == 3 ? 4 : 8; /* cells a block a side */
    const uint32_t runs = (uint32_t)g->bucket_count >> 6, shift = (uint32_t)g->block_shift;
    uint32_t runs_log = 0;
    while ((1u << runs_log) < runs) runs_log++;
    cr_assert_eq(1u << runs_log, runs);
    const uint32_t rest = runs_log - shift;
    const uint32_t nx = 1u << shift, ny = dims == 3 ? 1u << ((rest + 1) / 2) : 1u << rest,
                   nz = dims == 3 ? 1u << (rest / 2) : 1u;
    cr_assert(shift >= 2 && ny >= 2 && ny <= nx && nz <= ny && nx * ny * nz == runs,
              "%dD: %u runs, %u x %u x %u", dims, runs, nx, ny, nz);
    uint8_t* seen = calloc(runs, 1);
    cr_assert_not_null(seen);
    for (uint32_t z = 0; z < nz; ++z)
        for (uint32_t y = 0; y < ny; ++y)
            for (uint32_t x = 0; x < nx; ++x) {
                const int32_t bx = (int32_t)x - (int32_t)nx / 2 - 3, by = (int32_t)y - (int32_t)ny / 2 + 1,
                              bz = dims == 3 ? (int32_t)z - (int32_t)nz / 2 : 0;
                const uint32_t run = grid_bucket(g, side * bx, side * by, side * bz) >> 6;
                cr_assert_eq(run, z_order_run(dims, shift, runs, bx, by, bz), "%dD: block (%d, %d, %d)", dims,
                             bx, by, bz);
                cr_assert_eq(seen[run], 0, "%dD: block (%d, %d, %d) takes a run taken", dims, bx, by, bz);
                seen[run] = 1;
                /* a cell's bucket: its block's run, its place in the block's rows */
                cr_assert_eq(
                    grid_bucket(g, side * bx + 1, side * by + side - 1, side * bz),
                    run << 6 | (dims == 3 ? (uint32_t)(side - 1) << 2 | 1u : (uint32_t)(side - 1) << 3 | 1u));
                /* the block of even corner and the ones after it along x, y (z) */
                const uint32_t ex = (uint32_t)bx & 1u, ey = (uint32_t)by & 1u, ez = (uint32_t)bz & 1u;
                const uint32_t corner = grid_bucket(g, side * (bx - (int32_t)ex), side * (by - (int32_t)ey),
                                                    side * (bz - (int32_t)ez)) >>
                                        6;
                cr_assert_eq(run, corner + ex + 2u * ey + 4u * ez, "%dD: block (%d, %d, %d)", dims, bx, by,
                             bz);
            }
    free(seen);
    shoal_world_destroy(w);
}

Test(sense, blocks_take_runs_in_z_order_2d) { check_block_z_order(2, 5000); }
Test(sense, blocks_take_runs_in_z_order_3d) { check_block_z_order(3, 40000); }

Test(sense, grid_module_in_the_registry)
{
    const registry_t* reg = builtin_registry();
    cr_assert_gt(reg->module_count, MOD_GRID);
    const module_t* grid = reg->modules[MOD_GRID];
    cr_assert_eq(grid, &grid_module);
    cr_assert_eq(grid->column_count, 0);
    cr_assert_null(grid->hash);
    cr_assert_null(grid->save);
    cr_assert_null(grid->load);
    cr_assert_null(grid->grid);
    int users = 0, sorted = 0;
    for (int32_t m = 0; m < reg->module_count; ++m) {
        const grid_use_t* use = reg->modules[m]->grid;
        if (!use) continue;
        users++;
        cr_assert_not_null(use->reach, "%s", reg->modules[m]->name);
        if (use->sorted_rows) {
            sorted++;
            cr_assert_eq(m, MOD_NEIGHBORS, "%s asks for sorted rows", reg->modules[m]->name);
        }
    }
    cr_assert_eq(users, 3, "neighbors, crowd and contacts use the grid");
    cr_assert_eq(sorted, 1);
}

/* Cell edge of the last sense stage. */
static float cell_of(shoal_world_t* w)
{
    const grid_t* g = grid_data((const world_t*)w);
    cr_assert_not_null(g);
    return 1.0f / g->inv_cell[0];
}

/* The grid is built when the agents of some module that uses it are there,
 * with cells as wide as the largest reach any of them declares; it stays
 * empty in steps without them, and grid_data stays NULL until one. */
Test(sense, grid_follows_the_modules_that_use_it)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_null(grid_data((const world_t*)w));

    /* A seeker uses no grid. */
    shoal_agent_def_t seek = shoal_agent_default_def();
    seek.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    seek.target[0] = 10.0f;
    cr_assert_eq(shoal_agent_add(w, &seek, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_null(grid_data((const world_t*)w));

    /* Crowd agents look as far as their neighbor distance. */
    shoal_agent_def_t walker = shoal_agent_default_def();
    walker.crowd.enabled = 1;
    walker.crowd.neighbor_distance = 7.0f;
    walker.position[1] = 5.0f;
    shoal_agent_t crowd_id;
    cr_assert_eq(shoal_agent_add(w, &walker, &crowd_id), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(grid_data((const world_t*)w)->count, 2);
    cr_assert_geq(cell_of(w), 7.0f);
    cr_assert_lt(cell_of(w), 7.001f);

    /* A ground vehicle in contacts needs two of its own radii (not its
     * agent's vehicle.radius). */
    shoal_agent_def_t car = shoal_agent_default_def();
    car.ground.enabled = 1;
    car.ground.vehicle.radius = 4.5f;
    car.vehicle.radius = 0.5f;
    car.contacts = 1;
    car.position[0] = -30.0f;
    shoal_agent_t car_id;
    cr_assert_eq(shoal_agent_add(w, &car, &car_id), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_geq(cell_of(w), 9.0f);
    cr_assert_lt(cell_of(w), 9.001f);

    /* Without them, the grid is empty, but it was built. */
    cr_assert_eq(shoal_agent_remove(w, crowd_id), SHOAL_OK);
    cr_assert_eq(shoal_agent_remove(w, car_id), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_not_null(grid_data((const world_t*)w));
    cr_assert_eq(grid_data((const world_t*)w)->count, 0);

    /* A snapshot keeps that the grid was built, and a world that never
     * built one loads without. */
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_not_null(buf);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* back = NULL;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &back, &err), SHOAL_OK, "%s", err.message);
    cr_assert_not_null(grid_data((const world_t*)back));
    shoal_world_destroy(back);
    free(buf);
    shoal_world_destroy(w);

    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    buf = malloc(size);
    cr_assert_not_null(buf);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &back, &err), SHOAL_OK, "%s", err.message);
    cr_assert_null(grid_data((const world_t*)back));
    shoal_world_destroy(back);
    free(buf);
    shoal_world_destroy(w);
}
