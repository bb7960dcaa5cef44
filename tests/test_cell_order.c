/* Neighbor candidates in an order of cells and global ids, not of the
 * spatial hash's table: in unbounded worlds cells are hashed into a table
 * whose size follows the agent count, and a world split over processes
 * has other counts on each. The same world stepped with tables of other
 * sizes (grid_t.buckets_at_least) gives one state hash: flocks in 2D and
 * 3D (lane sums over each agent's block of cells), a sparse torus whose
 * cells are hashed or indexed directly, and crowds (the nearest
 * neighbors, ties in distance and all), on 1 and 2 threads. The nearest
 * lists themselves, as global ids, are the same for any table on a
 * lattice (many neighbors at one distance). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <shoal/scenario.h>
#include <stdio.h>
#include <string.h>

#include "ecs/world.h"
#include "modules/grid/grid.h"
#include "modules/grid/grid_nearest.h"
#include "scenes/crowd_scene.h"
#include "support.h"

/* A 2D flock spread over 160 m x 160 m, about three neighbors each within
 * 2 m: some 100 blocks of 8 x 8 cells, more than a table of 8192 buckets
 * holds without sharing. */
static const char FLOCK2D[] =
    "{\"name\": \"spread\", \"dimensions\": 2, \"seed\": 5, \"dt\": 0.05, \"steps\": 60,"
    " \"groups\": [{\"name\": \"boids\", \"count\": 6000,"
    "  \"spawn\": {\"shape\": \"box\", \"center\": [0, 0], \"size\": [160, 160], \"heading\": \"random\","
    "            \"speed\": 2},"
    "  \"vehicle\": {\"max_speed\": 4, \"max_force\": 16, \"max_turn_rate\": 4, \"radius\": 0.3},"
    "  \"neighbors\": {\"radius\": 2, \"fov_deg\": 300},"
    "  \"wander\": {\"cruise_speed\": 1.5, \"strength\": 0.5, \"noise\": 0.3},"
    "  \"behaviors\": {\"separate\": {\"weight\": 0.75}, \"align\": {\"weight\": 1},"
    "                \"cohere\": {\"weight\": 0.5}, \"wander\": {\"weight\": 1}}}]}";

/* A flock of 2000 in one corner of a torus of 400 m x 400 m: 40,000
 * cells of 2 m, more than four times the buckets 2000 agents ask for, so
 * the torus hashes its cells; with a table of 16,384 buckets or more it
 * indexes them directly. */
static const char TORUS[] =
    "{\"name\": \"sparse torus\", \"dimensions\": 2, \"seed\": 6, \"dt\": 0.05, \"steps\": 60,"
    " \"world\": {\"wrap\": true, \"bounds_min\": [-200, -200], \"bounds_max\": [200, 200]},"
    " \"groups\": [{\"name\": \"boids\", \"count\": 2000,"
    "  \"spawn\": {\"shape\": \"box\", \"center\": [-165, 165], \"size\": [60, 60], \"heading\": \"random\","
    "            \"speed\": 2},"
    "  \"vehicle\": {\"max_speed\": 4, \"max_force\": 16, \"max_turn_rate\": 4, \"radius\": 0.3},"
    "  \"neighbors\": {\"radius\": 2, \"fov_deg\": 300},"
    "  \"wander\": {\"cruise_speed\": 1.5, \"strength\": 0.5, \"noise\": 0.3},"
    "  \"behaviors\": {\"separate\": {\"weight\": 0.75}, \"align\": {\"weight\": 1},"
    "                \"cohere\": {\"weight\": 0.5}, \"wander\": {\"weight\": 1}}}]}";

static shoal_scenario_t* load(const char* file)
{
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    if (!strcmp(file, "spread")) {
        cr_assert_eq(shoal_scenario_load_string(FLOCK2D, strlen(FLOCK2D), "spread.json", &sc, &err), SHOAL_OK,
                     "%s", err.message);
    } else if (!strcmp(file, "torus")) {
        cr_assert_eq(shoal_scenario_load_string(TORUS, strlen(TORUS), "torus.json", &sc, &err), SHOAL_OK,
                     "%s", err.message);
    } else {
        char path[512];
        snprintf(path, sizeof path, "%s/scenarios/%s", SHOAL_SOURCE_DIR, file);
        cr_assert_eq(shoal_scenario_load_file(path, &sc, &err), SHOAL_OK, "%s: %s", path, err.message);
    }
    return sc;
}

/* The state hash after `steps` steps with a table of at least `buckets`
 * buckets (0: the table the agent count asks for). */
static uint64_t hash_with_table(const char* file, int threads, int32_t buckets, int steps)
{
    shoal_scenario_t* sc = load(file);
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_scenario_populate(sc, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    ((grid_t*)((world_t*)w)->module_data[MOD_GRID])->buckets_at_least = buckets;
    step_n(w, steps, shoal_scenario_dt(sc));
    const grid_t* g = grid_data((const world_t*)w);
    cr_assert(g->direct || g->bucket_count >= buckets);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
    return h;
}

static void one_hash_for_every_table(const char* file, int steps)
{
    static const int32_t tables[] = {1 << 12, 1 << 16, 1 << 20};
    for (int threads = 1; threads <= 2; ++threads) {
        uint64_t ref = hash_with_table(file, threads, 0, steps);
        for (size_t t = 0; t < sizeof tables / sizeof tables[0]; ++t) {
            uint64_t h = hash_with_table(file, threads, tables[t], steps);
            cr_expect_eq(h, ref, "%s on %d threads: %016llx with %d buckets or more, %016llx as sized", file,
                         threads, (unsigned long long)h, (int)tables[t], (unsigned long long)ref);
        }
    }
}

Test(cell_order, one_hash_for_every_table_flock2d, .timeout = 300) { one_hash_for_every_table("spread", 60); }

Test(cell_order, one_hash_hashed_or_direct_on_a_torus, .timeout = 300)
{
    one_hash_for_every_table("torus", 60);
}

Test(cell_order, one_hash_for_every_table_fish3d, .timeout = 300)
{
    one_hash_for_every_table("fish3d.json", 60);
}

Test(cell_order, one_hash_for_every_table_plaza, .timeout = 300)
{
    one_hash_for_every_table("default.json", 100);
}

/* The crowd benchmark's grid (scenes/crowd_scene.h): two lattices 4 m
 * apart walking through each other, so that many neighbors are at one
 * distance, the "rvo2" preset; `agents` agents in `dims` dimensions. */
static uint64_t crowd_hash(int dims, int64_t agents, int threads, int32_t buckets, int steps)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("rvo2", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    d.weights[SHOAL_BEHAVIOR_ARRIVE] = 1.0f;
    d.arrive_gain = 1.0f;
    float* pos = malloc((size_t)agents * 3 * sizeof(float));
    float* goal = malloc((size_t)agents * 3 * sizeof(float));
    cr_assert(pos && goal);
    crowd_layout(CROWD_GRID, dims, agents, pos, goal);
    shoal_agent_arrays_t arrays;
    memset(&arrays, 0, sizeof arrays);
    arrays.positions = pos;
    arrays.targets = goal;
    cr_assert_eq(shoal_agents_add(w, &d, &arrays, (int32_t)agents, NULL), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    free(pos);
    free(goal);
    ((grid_t*)((world_t*)w)->module_data[MOD_GRID])->buckets_at_least = buckets;
    step_n(w, steps, 0.25f);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

static void crowd_one_hash_for_every_table(int dims, int64_t agents, int steps)
{
    static const int32_t tables[] = {1 << 14, 1 << 18};
    for (int threads = 1; threads <= 2; ++threads) {
        uint64_t ref = crowd_hash(dims, agents, threads, 0, steps);
        for (size_t t = 0; t < sizeof tables / sizeof tables[0]; ++t) {
            uint64_t h = crowd_hash(dims, agents, threads, tables[t], steps);
            cr_expect_eq(h, ref,
                         "crowd grid %dD on %d threads: %016llx with %d buckets or more, %016llx as sized",
                         dims, threads, (unsigned long long)h, (int)tables[t], (unsigned long long)ref);
        }
    }
}

Test(cell_order, one_hash_for_every_table_crowd_grid, .timeout = 300)
{
    crowd_one_hash_for_every_table(2, 20000, 40);
}

Test(cell_order, one_hash_for_every_table_crowd_grid3d, .timeout = 300)
{
    crowd_one_hash_for_every_table(3, 3000, 40);
}


/* The nearest lists (cap 8, within 2.5 lattice spacings) of every agent
 * of a lattice with a table of at least `buckets` buckets, as global ids:
 * NEAREST_CAP a global id, -1 past a list's end; both searches agree. */
#define NEAREST_CAP 8
typedef struct lists {
    int64_t* ids; /* NEAREST_CAP per global id */
    int32_t n;
    int done;
} lists_t;

static shoal_status_t take_lists(shoal_world_t* sw, float dt, void* ctx)
{
    (void)dt;
    lists_t* l = (lists_t*)ctx;
    const world_t* w = (const world_t*)sw;
    const grid_t* g = grid_data(w);
    if (l->done || !g) return SHOAL_OK;
    l->done = 1;
    nearest_cache_t cache;
    nearest_cache_init(&cache);
    for (int32_t k = 0; k < g->count; ++k) {
        const float p[3] = {g->sx[k], g->sy[k], g->dims == 3 ? g->sz[k] : 0.0f};
        nearest_t nb = {.count = 0, .cap = NEAREST_CAP}, fast = {.count = 0, .cap = NEAREST_CAP};
        find_neighbors(g, p, 5.0f, k, &nb);
        if (find_nearest(g, p, 5.0f, k, 0.0f, &cache, &fast)) {
            cr_assert_eq(fast.count, nb.count);
            for (int32_t m = 0; m < nb.count; ++m) cr_assert_eq(fast.k[m], nb.k[m]);
        }
        const uint64_t id = agent_global_id(w, g->order[k]);
        cr_assert_lt(id, (uint64_t)l->n);
        for (int32_t m = 0; m < NEAREST_CAP; ++m)
            l->ids[id * NEAREST_CAP + m] = m < nb.count ? (int64_t)agent_global_id(w, g->order[nb.k[m]]) : -1;
    }
    return SHOAL_OK;
}

static void lattice_lists(int dims, int32_t buckets, lists_t* l)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = 1;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    const int side = dims == 3 ? 16 : 64;
    l->n = dims == 3 ? side * side * side : side * side;
    for (int32_t i = 0; i < l->n; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        const int c[3] = {i % side, i / side % side, i / (side * side)};
        for (int a = 0; a < dims; ++a) d.position[a] = 2.0f * (float)(c[a] - side / 2);
        d.neighbors.radius = 2.0f;
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    ((grid_t*)((world_t*)w)->module_data[MOD_GRID])->buckets_at_least = buckets;
    cr_assert_eq(shoal_world_add_system(w, "lists", SHOAL_STAGE_SENSE, take_lists, l), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.01f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert(l->done);
    shoal_world_destroy(w);
}

static void one_list_for_every_table(int dims)
{
    lists_t ref = {.ids = NULL}, got = {.ids = NULL};
    const int32_t most = 1 << 16; /* agents */
    ref.ids = malloc((size_t)most * NEAREST_CAP * sizeof(int64_t));
    got.ids = malloc((size_t)most * NEAREST_CAP * sizeof(int64_t));
    cr_assert(ref.ids && got.ids);
    lattice_lists(dims, 0, &ref);
    static const int32_t tables[] = {1 << 16, 1 << 20};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; ++t) {
        got.done = 0;
        lattice_lists(dims, tables[t], &got);
        for (int32_t i = 0; i < ref.n * NEAREST_CAP; ++i)
            cr_assert_eq(got.ids[i], ref.ids[i],
                         "%dD: agent %d's neighbor %d is %lld with %d buckets, %lld as sized", dims,
                         i / NEAREST_CAP, i % NEAREST_CAP, (long long)got.ids[i], (int)tables[t],
                         (long long)ref.ids[i]);
    }
    free(ref.ids);
    free(got.ids);
}

Test(cell_order, one_nearest_list_for_every_table_2d, .timeout = 120) { one_list_for_every_table(2); }
Test(cell_order, one_nearest_list_for_every_table_3d, .timeout = 120) { one_list_for_every_table(3); }

/* The hash counts and scatters its agents in the last hash's sorted order
 * while no row has moved since (grid_t.order_ok), else in row order; the
 * buckets, each sorted by id, are the same either way. The same world
 * stepped both ways (the order forgotten before every step) has the same
 * sorted order and state hash after every step, over reorders of storage
 * (every 32 steps), in a 2D flock, the plaza and a 3D school. */
static void last_order_or_rows(const char* file, int steps, int threads)
{
    shoal_world_t* w[2];
    shoal_scenario_t* sc = load(file);
    for (int k = 0; k < 2; ++k) {
        shoal_world_def_t def = shoal_scenario_world_def(sc);
        def.thread_count = threads;
        def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
        shoal_error_t err;
        cr_assert_eq(shoal_world_create(&def, &w[k], &err), SHOAL_OK, "%s", err.message);
        cr_assert_eq(shoal_scenario_populate(sc, w[k]), SHOAL_OK, "%s", shoal_world_last_error(w[k]));
    }
    int kept = 0;
    for (int s = 0; s < steps; ++s) {
        grid_t* rows = (grid_t*)((world_t*)w[1])->module_data[MOD_GRID];
        rows->order_ok = 0;
        kept += ((grid_t*)((world_t*)w[0])->module_data[MOD_GRID])->order_ok;
        for (int k = 0; k < 2; ++k)
            cr_assert_eq(shoal_world_step(w[k], shoal_scenario_dt(sc)), SHOAL_OK, "%s",
                         shoal_world_last_error(w[k]));
        const grid_t* a = grid_data((const world_t*)w[0]);
        const grid_t* b = grid_data((const world_t*)w[1]);
        cr_assert_eq(a->count, b->count);
        cr_assert_eq(memcmp(a->order, b->order, (size_t)a->count * sizeof(int32_t)), 0,
                     "%s, %d threads, step %d: the sorted orders differ", file, threads, s);
        cr_assert_eq(shoal_world_state_hash(w[0]), shoal_world_state_hash(w[1]),
                     "%s, %d threads, step %d: the state hashes differ", file, threads, s);
    }
    /* the last order taken on every step but the first (a reorder leaves
     * its order, the identity, for the next) */
    cr_expect_eq(kept, steps - 1, "%s: the last order taken on %d of %d steps", file, kept, steps);
    for (int k = 0; k < 2; ++k) shoal_world_destroy(w[k]);
    shoal_scenario_destroy(sc);
}

Test(cell_order, last_order_or_rows_flock2d, .timeout = 300)
{
    last_order_or_rows("spread", 70, 1);
    last_order_or_rows("spread", 70, 2);
}
Test(cell_order, last_order_or_rows_plaza, .timeout = 300) { last_order_or_rows("default.json", 70, 2); }
Test(cell_order, last_order_or_rows_fish3d, .timeout = 300) { last_order_or_rows("fish3d.json", 70, 2); }
