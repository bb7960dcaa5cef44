/* The parallel-for's schedules, and the reorder that runs on it. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ecs/parallel.h"
#include "ecs/world.h"
#include "modules/registry.h"
#include "support.h"

#define MAX_CALLS 256

typedef struct call_log {
    atomic_int calls;
    int32_t begin[MAX_CALLS];
    int32_t end[MAX_CALLS];
    int32_t worker[MAX_CALLS];
} call_log_t;

static void log_call(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    call_log_t* log = (call_log_t*)ctx;
    int k = atomic_fetch_add(&log->calls, 1);
    if (k >= MAX_CALLS) return;
    log->begin[k] = begin;
    log->end[k] = end;
    log->worker[k] = worker;
}

/* Every item in [0, count) is covered by exactly one logged range. */
static void assert_partition(const call_log_t* log, int32_t count)
{
    int calls = atomic_load(&log->calls);
    cr_assert_leq(calls, MAX_CALLS);
    int32_t* seen = calloc((size_t)count, sizeof *seen);
    for (int k = 0; k < calls; ++k) {
        cr_assert(log->begin[k] >= 0 && log->begin[k] < log->end[k] && log->end[k] <= count, "range [%d, %d)",
                  log->begin[k], log->end[k]);
        for (int32_t i = log->begin[k]; i < log->end[k]; ++i) seen[i]++;
    }
    for (int32_t i = 0; i < count; ++i) cr_assert_eq(seen[i], 1, "item %d covered %d times", i, seen[i]);
    free(seen);
}

Test(parallel, static_tasks_give_each_worker_its_own_item)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    call_log_t log = {0};
    par_for(w, 2, 1, PAR_STATIC | PAR_TASKS, log_call, &log);
    assert_partition(&log, 2);
    cr_assert_eq(atomic_load(&log.calls), 2, "two tasks on two threads: one call each");
    cr_assert_neq(log.worker[0], log.worker[1], "both tasks ran on one worker");
    shoal_world_destroy(w);
}

Test(parallel, claimed_tasks_are_claimed_one_at_a_time)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    call_log_t log = {0};
    par_for(w, 5, 1, PAR_CLAIMED | PAR_TASKS, log_call, &log);
    assert_partition(&log, 5);
    cr_assert_eq(atomic_load(&log.calls), 5);
    shoal_world_destroy(w);
}

Test(parallel, row_ranges_start_on_cache_lines)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    call_log_t log = {0};
    par_for(w, 40, 1, PAR_STATIC, log_call, &log);
    assert_partition(&log, 40);
    for (int k = 0; k < atomic_load(&log.calls); ++k)
        cr_assert_eq(log.begin[k] % 16, 0, "a range starts at row %d", log.begin[k]);
    /* The same few rows as tasks would be cut finer; as rows they are not:
     * two items make one range. */
    call_log_t two = {0};
    par_for(w, 2, 1, PAR_STATIC, log_call, &two);
    assert_partition(&two, 2);
    cr_assert_eq(atomic_load(&two.calls), 1);
    shoal_world_destroy(w);
}

static shoal_world_t* make_host_world(int threads)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = threads;
    def.backend = SHOAL_BACKEND_HOST;
    def.enqueue_task = lazy_enqueue;
    def.finish_task = lazy_finish;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    return w;
}

Test(parallel, host_tasks_cover_every_schedule)
{
    shoal_world_t* w = make_host_world(3);
    const int schedules[4] = {PAR_STATIC | PAR_TASKS, PAR_CLAIMED | PAR_TASKS, PAR_AFFINE, PAR_STATIC};
    for (int k = 0; k < 4; ++k) {
        call_log_t log = {0};
        par_for(w, 1000, 64, schedules[k], log_call, &log);
        assert_partition(&log, 1000);
        for (int c = 0; c < atomic_load(&log.calls); ++c)
            cr_assert(log.worker[c] >= 0 && log.worker[c] < 3, "worker %d", log.worker[c]);
    }
    shoal_world_destroy(w);
}

/* Affine shares are an even split of the items cut at cache lines, each
 * cut into blocks from its own start: on 2 threads [0, 496) and [496,
 * 1000), 8 blocks each; on 3, [0, 320), [320, 656) and [656, 1000): 5, 6
 * and 6. */
static void check_affine(int threads, int calls)
{
    shoal_world_t* w = make_world(2, threads, SHOAL_BACKEND_OPENMP);
    call_log_t log = {0};
    par_for(w, 1000, 64, PAR_AFFINE, log_call, &log);
    assert_partition(&log, 1000);
    cr_assert_eq(atomic_load(&log.calls), calls, "blocks of 64 items from each share's start: %d calls",
                 calls);
    for (int k = 0; k < atomic_load(&log.calls); ++k) {
        cr_assert(log.worker[k] >= 0 && log.worker[k] < threads, "worker %d", log.worker[k]);
        cr_assert_eq(log.begin[k] % 16, 0, "a block starts at item %d", log.begin[k]);
        cr_assert_leq(log.end[k] - log.begin[k], 64);
    }
    shoal_world_destroy(w);
}

Test(parallel, affine_blocks_are_each_run_once_on_two_threads) { check_affine(2, 16); }
Test(parallel, affine_blocks_are_each_run_once_on_three_threads) { check_affine(3, 17); }

/* ---- the loop census ------------------------------------------------------ */

/* A virtual clock: an item costs what cost[] says, in clock ticks, when a
 * loop runs it, so that the census's makespans are exact. */
typedef struct census_costs {
    uint64_t clock;
    const uint64_t* cost; /* per item */
    call_log_t log;
} census_costs_t;

static uint64_t census_clock(void* ctx) { return ((census_costs_t*)ctx)->clock; }

static void costly_items(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    census_costs_t* c = (census_costs_t*)ctx;
    log_call(begin, end, worker, &c->log);
    for (int32_t i = begin; i < end; ++i) c->clock += c->cost[i];
}

/* One loop under a fresh census of `w` (T = its thread count): its one
 * entry, with the run's calls in costs->log. */
static par_census_loop_t census_of(shoal_world_t* w, par_census_t* census, census_costs_t* costs,
                                   int32_t count, int32_t min_block, par_schedule_t schedule)
{
    par_census_set((world_t*)w, census);
    census->now = census_clock;
    census->now_ctx = costs;
    memset(&costs->log, 0, sizeof costs->log);
    costs->clock = 0;
    par_for((world_t*)w, count, min_block, schedule, costly_items, costs);
    par_census_set((world_t*)w, NULL);
    assert_partition(&costs->log, count);
    for (int k = 0; k < atomic_load(&costs->log.calls); ++k)
        cr_assert_eq(costs->log.worker[k], 0, "a census runs every block on the calling thread");
    cr_assert_eq(census->count, 1);
    cr_assert_str_eq(census->loops[0].system, "-", "outside any system");
    cr_assert_eq(census->loops[0].calls, 1u);
    cr_assert_eq(census->loops[0].items, (uint64_t)count);
    cr_assert_eq(census->overhead_ns, 0u, "the virtual clock stands still between blocks");
    return census->loops[0];
}

Test(parallel, the_census_splits_loops_as_sixteen_workers_would)
{
    shoal_world_t* w = make_world(2, 16, SHOAL_BACKEND_OPENMP);
    static par_census_t census;
    static uint64_t cost[2048];
    census_costs_t costs = {.cost = cost};

    /* 64 items, two of them dear. As rows a static loop cuts ranges of 16
     * (a cache line of floats): 4 of 16 workers busy, the first with both
     * dear items; as tasks, 4 items each. */
    for (int i = 0; i < 64; ++i) cost[i] = i < 2 ? 1000 : 1;
    par_census_loop_t rows = census_of(w, &census, &costs, 64, 1, PAR_STATIC);
    cr_assert_eq(rows.blocks, 4u);
    cr_assert_eq(rows.ns, 2062u);
    cr_assert_eq(rows.span_ns, 2014u, "the first share: both dear items and 14 more");
    cr_assert_float_eq(rows.share_sum, 0.25, 1e-12);
    par_census_loop_t tasks = census_of(w, &census, &costs, 64, 1, PAR_STATIC | PAR_TASKS);
    cr_assert_eq(tasks.blocks, 16u);
    cr_assert_eq(tasks.span_ns, 2002u, "both dear items are still in worker 0's share of 4");
    cr_assert_float_eq(tasks.share_sum, 4.0 / 64.0, 1e-12);
    /* Claimed one at a time, each to the worker free first: the dear
     * items go to two workers, the cheap ones to the other fourteen. */
    par_census_loop_t claimed = census_of(w, &census, &costs, 64, 1, PAR_CLAIMED | PAR_TASKS);
    cr_assert_eq(claimed.blocks, 64u);
    cr_assert_eq(claimed.ns, 2062u);
    cr_assert_eq(claimed.span_ns, 1000u);
    cr_assert_eq(claimed.samples, 1u);
    cr_assert_float_eq(par_census_median_speedup(&claimed), 2.062, 1e-6);

    /* Affine: 2048 rows in blocks of 64, two blocks to each of 16 shares.
     * Block 0 is dear: worker 0 is on it while the others drain their
     * shares, and worker 15, done first among those after share 0, takes
     * block 1 from it. */
    for (int i = 0; i < 2048; ++i) cost[i] = i < 64 ? 10 : 1;
    par_census_loop_t affine = census_of(w, &census, &costs, 2048, 64, PAR_AFFINE);
    cr_assert_eq(affine.blocks, 32u);
    cr_assert_eq(affine.ns, 640u + 31u * 64u);
    cr_assert_eq(affine.span_ns, 640u);
    cr_assert_float_eq(affine.share_sum, 192.0 / 2048.0, 1e-12, "worker 15: its own two blocks and block 1");

    /* Too few items for a block each: one block, its time whole. */
    par_census_loop_t single = census_of(w, &census, &costs, 50, 64, PAR_STATIC);
    cr_assert_eq(single.single, 1u);
    cr_assert_eq(single.span_ns, single.ns);
    cr_assert_float_eq(single.share_sum, 1.0, 1e-12);
    shoal_world_destroy(w);
}

static uint64_t census_ticks(void* ctx) { return ++*(uint64_t*)ctx; }

/* Under a census a world of 16 threads steps on the calling thread to the
 * state a world of one thread reaches, and names its loops by system. */
Test(parallel, a_census_changes_no_result)
{
    shoal_world_t* one = make_world(2, 1, SHOAL_BACKEND_OPENMP);
    shoal_world_t* many = make_world(2, 16, SHOAL_BACKEND_OPENMP);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_COHERE] = 0.4f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
    enum { N = 6000 };
    float* pos = calloc((size_t)N * 3, sizeof *pos);
    for (int i = 0; i < N; ++i) {
        pos[3 * i] = (float)(i % 80) * 0.9f;
        pos[3 * i + 1] = (float)(i / 80) * 0.9f;
    }
    shoal_agent_arrays_t a;
    memset(&a, 0, sizeof a);
    a.positions = pos;
    cr_assert_eq(shoal_agents_add(one, &d, &a, N, NULL), SHOAL_OK);
    cr_assert_eq(shoal_agents_add(many, &d, &a, N, NULL), SHOAL_OK);
    free(pos);
    static par_census_t census;
    par_census_set((world_t*)many, &census);
    cr_assert_eq(census.threads, 16);
    /* Every block costs one tick of this clock (it moves a tick a read), so
     * which worker takes which block does not hang on the machine's load. */
    uint64_t ticks = 0;
    census.now = census_ticks;
    census.now_ctx = &ticks;
    for (int s = 0; s < 5; ++s) {
        cr_assert_eq(shoal_world_step(one, 0.05f), SHOAL_OK);
        cr_assert_eq(shoal_world_step(many, 0.05f), SHOAL_OK);
    }
    par_census_set((world_t*)many, NULL);
    cr_assert_eq(shoal_world_state_hash(one), shoal_world_state_hash(many));
    int neighbors = 0, fused = 0;
    for (int32_t i = 0; i < census.count; ++i) {
        const par_census_loop_t* l = &census.loops[i];
        neighbors += strcmp(l->system, "neighbors") == 0;
        fused += strncmp(l->system, "fused: ", 7) == 0 && strstr(l->system, "integrate") != NULL;
        cr_assert_leq(l->span_ns, l->ns, "%s: a makespan within the blocks' sum", l->system);
        cr_assert_geq(l->span_ns * 16, l->ns, "%s: and at least an even share of it", l->system);
    }
    cr_assert_eq(neighbors, 1, "the neighbors' loop, once");
    cr_assert_eq(fused, 1, "the fused pass, named by its systems");
    cr_assert_eq(census.dropped, 0u);
    /* The loops over the agents (the sorted copy, the neighbors over
     * sorted agents, steer, the fused pass) give worker j the same share
     * whatever their blocks: a loop's items change workers only where a
     * worker took a block of another's (shares of whole blocks moved most
     * of them: blocks of 1,024 rows left 6 shares of 1,024, blocks of 256
     * agents 12 of 512). */
    uint64_t moved = 0, of = 0;
    for (int32_t i = 0; i < census.count; ++i) {
        moved += census.loops[i].moved_items;
        of += census.loops[i].moved_of;
    }
    cr_assert_gt(of, (uint64_t)N * 5 * 2, "agent-sized loops followed one another");
    cr_assert_lt((double)moved / (double)of, 0.3, "%.1f %% of the items changed workers",
                 100.0 * (double)moved / (double)of);
    shoal_world_destroy(one);
    shoal_world_destroy(many);
}

/* Loops over the same rows with other block sizes, static or affine, give
 * worker j the same share (the census's simulated workers: its busiest
 * worker's items are the share's). */
Test(parallel, shares_are_the_same_rows_whatever_the_blocks)
{
    shoal_world_t* w = make_world(2, 16, SHOAL_BACKEND_OPENMP);
    static par_census_t census;
    static uint64_t cost[100000];
    for (int i = 0; i < 100000; ++i) cost[i] = 1;
    census_costs_t costs = {.cost = cost};
    const int32_t blocks[3] = {1024, 784, 512};
    for (int k = 0; k < 3; ++k) {
        par_census_loop_t l = census_of(w, &census, &costs, 100000, blocks[k], PAR_AFFINE);
        /* shares of 6,240 or 6,256 rows: the busiest worker ran its own
         * share, nothing stolen (every block costs its rows) */
        cr_assert_float_eq(l.share_sum, 6256.0 / 100000.0, 1e-12, "blocks of %d: busiest %g", blocks[k],
                           l.share_sum * 100000.0);
    }
    par_census_loop_t st = census_of(w, &census, &costs, 100000, 1, PAR_STATIC);
    cr_assert_float_eq(st.share_sum, 6256.0 / 100000.0, 1e-12);
    shoal_world_destroy(w);
}

/* Two worlds built alike; some agents flock and some wander, so one
 * component has every agent and others only some. all_flock 1: every agent
 * flocks; 2: every agent flocks and wanders, and some lose the neighbors
 * component and get it back after the steps, so that the wander component
 * is on every agent in agent-row order (it moves as the agents do) and the
 * neighbors component on every agent out of that order. */
static shoal_world_t* make_reorder_world(int dims, int threads, int all_flock)
{
    shoal_world_t* w = make_world(dims, threads, threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL);
    /* Above 4096 agents the slot and component passes split over workers. */
    enum { N = 5000 };
    shoal_agent_t ids[N];
    for (int i = 0; i < N; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        for (int k = 0; k < dims; ++k)
            d.position[k] = rng_range(3, (uint64_t)i, 0, (uint32_t)k, -80.0f, 80.0f);
        d.heading = rng_range(3, (uint64_t)i, 1, 0, -3.0f, 3.0f);
        if (all_flock || i % 3 == 0) d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        if (all_flock == 2 || i % 4 == 0) d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
        if (i % 5 == 0) d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        if (all_flock == 2 && i == N - 1) { /* columns that differ in their last row alone */
            d.group = 7;
            d.vehicle.max_speed = 4.5f;
            d.wander.noise *= 0.5f;
        }
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    step_n(w, 3, 0.02f);
    if (all_flock == 2) {
        for (int i = 0; i < N; i += 7)
            cr_assert_eq(shoal_agent_set_behavior(w, ids[i], SHOAL_BEHAVIOR_SEPARATE, 0.0f), SHOAL_OK);
        for (int i = 0; i < N; i += 7)
            cr_assert_eq(shoal_agent_set_behavior(w, ids[i], SHOAL_BEHAVIOR_SEPARATE, 1.0f), SHOAL_OK);
        const world_t* iw = (const world_t*)w;
        const int32_t* nb_row = TABLE_COL(&iw->comps[COMP_NEIGHBORS].table, int32_t, COMP_ROW);
        const int32_t* wd_row = TABLE_COL(&iw->comps[COMP_WANDER].table, int32_t, COMP_ROW);
        int32_t nb_off = 0, wd_off = 0;
        for (int32_t r = 0; r < N; ++r) {
            nb_off += nb_row[r] != r;
            wd_off += wd_row[r] != r;
        }
        cr_assert_gt(nb_off, 0, "the neighbors component is out of agent-row order");
        cr_assert_eq(wd_off, 0, "the wander component is in agent-row order");
    }
    return w;
}

static void assert_tables_equal(const table_t* a, const table_t* b, const char* what)
{
    cr_assert_eq(a->count, b->count, "%s: count", what);
    cr_assert_eq(a->column_count, b->column_count, "%s: columns", what);
    for (int32_t c = 0; c < a->column_count; ++c) {
        size_t bytes = (size_t)a->count * a->elem_size[c];
        if (bytes == 0) continue; /* an unused column (3D only) or an empty table */
        cr_assert(!memcmp(a->columns[c], b->columns[c], bytes), "%s: column %d differs", what, c);
    }
}

/* Both worlds' tables, slots and sparse indices are the same. */
static void assert_worlds_equal(const world_t* ref, const world_t* par, int32_t n)
{
    assert_tables_equal(&ref->agents, &par->agents, "agents");
    int32_t used = 0;
    for (int k = 0; k < ref->comp_count; ++k) {
        const component_t* a = &ref->comps[k];
        const component_t* b = &par->comps[k];
        assert_tables_equal(&a->table, &b->table, "component");
        used += a->table.count > 0;
        const uint32_t* slots = table_slots(&a->table);
        for (int32_t r = 0; r < a->table.count; ++r)
            cr_assert_eq(component_row(b, slots[r]), r, "component %d: sparse index of row %d", k, r);
    }
    cr_assert_geq(used, 2, "the worlds have at least two components");
    for (uint32_t slot = 0; slot < (uint32_t)n; ++slot)
        cr_assert_eq(ref->slots[slot].row, par->slots[slot].row, "slot %u", slot);
}

/* The agent at `row` gets another neighbor radius and wander strength:
 * definition columns that held one value no longer do. */
static void change_definition(shoal_world_t* w, int32_t row)
{
    shoal_agent_t id;
    cr_assert_eq(shoal_world_row_handles(w, row, 1, &id), SHOAL_OK);
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(w, id, &d), SHOAL_OK);
    d.neighbors.radius *= 1.5f;
    d.wander.strength *= 0.5f;
    cr_assert_eq(shoal_agent_set_neighbors(w, id, &d.neighbors), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_agent_set_wander(w, id, &d.wander), SHOAL_OK, "%s", shoal_world_last_error(w));
}

/* `rounds` reorders by seeded shuffles, the parallel one against the
 * serial one; between them an agent's definition changes (the second
 * reorder must not take columns for one value because the first found
 * them so). */
static void check_parallel_reorder_rounds(int dims, int all_flock, int rounds)
{
    shoal_world_t* ref = make_reorder_world(dims, 1, all_flock);
    shoal_world_t* par = make_reorder_world(dims, 2, all_flock);
    int32_t n = shoal_world_agent_count(ref);
    int32_t* perm = malloc((size_t)n * sizeof *perm);
    float* spare[4];
    for (int k = 0; k < 4; ++k) spare[k] = malloc((size_t)n * sizeof(float));
    int32_t* comp_perm = malloc((size_t)n * sizeof *comp_perm);
    uint64_t s = 99;
    for (int round = 0; round < rounds; ++round) {
        if (round > 0) {
            change_definition(ref, 17 * round);
            change_definition(par, 17 * round);
        }
        for (int32_t i = 0; i < n; ++i) perm[i] = i;
        for (int32_t i = n - 1; i > 0; --i) { /* a seeded shuffle */
            int32_t j = (int32_t)(rng_splitmix64(&s) % (uint64_t)(i + 1));
            int32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        cr_assert_eq(world_permute_agents(ref, perm), SHOAL_OK);
        world_permute_agents_parallel(par, perm, spare, 3, comp_perm);
        assert_worlds_equal(ref, par, n);
    }

    /* They go on stepping alike. */
    step_n(ref, 5, 0.02f);
    step_n(par, 5, 0.02f);
    cr_assert_eq(shoal_world_state_hash(ref), shoal_world_state_hash(par));
    for (int k = 0; k < 4; ++k) free(spare[k]);
    free(comp_perm);
    free(perm);
    shoal_world_destroy(ref);
    shoal_world_destroy(par);
}

static void check_parallel_reorder(int dims, int all_flock)
{
    check_parallel_reorder_rounds(dims, all_flock, 1);
}

Test(parallel, reorder_on_two_threads_matches_the_serial_one_2d) { check_parallel_reorder(2, 0); }
Test(parallel, reorder_on_two_threads_matches_the_serial_one_3d) { check_parallel_reorder(3, 0); }
Test(parallel, reorder_with_a_component_every_agent_has) { check_parallel_reorder(2, 1); }
Test(parallel, reorder_with_components_every_agent_has_in_and_out_of_order_2d)
{
    check_parallel_reorder(2, 2);
}
Test(parallel, reorder_with_components_every_agent_has_in_and_out_of_order_3d)
{
    check_parallel_reorder(3, 2);
}
Test(parallel, reorders_after_definitions_change_in_order) { check_parallel_reorder_rounds(2, 1, 3); }
Test(parallel, reorders_after_definitions_change_some_agents) { check_parallel_reorder_rounds(2, 0, 3); }

/* ---- one parallel region per step (par_region) -------------------------- */

#define REGION_LOOPS 40

/* What a body saw; asserted after the region, on the test's thread alone. */
typedef struct region_run {
    call_log_t logs[REGION_LOOPS];
    int32_t counts[REGION_LOOPS];
    int team_inside;
    int sleep_us; /* between loops: long enough for the workers to sleep */
    int nested;   /* each callback runs a loop of its own */
    atomic_int nested_items;
} region_run_t;

static void nested_item(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    (void)worker;
    atomic_fetch_add((atomic_int*)ctx, end - begin);
}

static void log_call_nesting(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    log_call(begin, end, worker, ctx);
}

typedef struct nest_ctx {
    call_log_t* log;
    world_t* w;
    atomic_int* items;
} nest_ctx_t;

static void log_and_nest(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    nest_ctx_t* c = (nest_ctx_t*)vctx;
    log_call(begin, end, worker, c->log);
    par_for(c->w, 100, 1, PAR_STATIC, nested_item, c->items);
}

static shoal_status_t region_body(world_t* w, void* vctx)
{
    region_run_t* r = (region_run_t*)vctx;
    r->team_inside = w->team != NULL;
    static const int schedules[4] = {PAR_STATIC | PAR_TASKS, PAR_CLAIMED | PAR_TASKS, PAR_AFFINE, PAR_STATIC};
    for (int k = 0; k < REGION_LOOPS; ++k) {
        r->counts[k] = k % 4 < 2 ? 3 + k % 5 : 200 + 37 * k;
        if (r->nested) {
            nest_ctx_t c = {&r->logs[k], w, &r->nested_items};
            par_for(w, r->counts[k], 1, PAR_STATIC | PAR_TASKS, log_and_nest, &c);
        } else {
            par_for(w, r->counts[k], k % 4 < 2 ? 1 : 64, schedules[k % 4], log_call_nesting, &r->logs[k]);
        }
        if (r->sleep_us) {
            struct timespec ts = {0, (long)r->sleep_us * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return SHOAL_ERR_NOT_FOUND; /* passed back unchanged */
}

static void check_region(int threads, int spin, int sleep_us, int nested)
{
    shoal_world_t* w = make_world(2, threads, SHOAL_BACKEND_OPENMP);
    w->par_spin = spin;
    region_run_t* r = calloc(1, sizeof *r);
    r->sleep_us = sleep_us;
    r->nested = nested;
    cr_assert_eq(par_region(w, region_body, r), SHOAL_ERR_NOT_FOUND, "the body's status comes back");
    cr_assert(r->team_inside, "the body ran without a team");
    cr_assert_null(w->team, "the team outlived its region");
    for (int k = 0; k < REGION_LOOPS; ++k) {
        assert_partition(&r->logs[k], r->counts[k]);
        int workers_seen = 0;
        for (int c = 0; c < atomic_load(&r->logs[k].calls); ++c) {
            cr_assert(r->logs[k].worker[c] >= 0 && r->logs[k].worker[c] < threads, "worker %d",
                      r->logs[k].worker[c]);
            workers_seen |= 1 << r->logs[k].worker[c];
        }
        /* Static tasks, a multiple of the threads: every worker woken. */
        if (k % 4 == 0 && r->counts[k] % threads == 0)
            cr_assert_eq(workers_seen, (1 << threads) - 1, "loop %d: workers 0x%x took part", k,
                         workers_seen);
    }
    if (nested) {
        int expect = 0;
        for (int k = 0; k < REGION_LOOPS; ++k) expect += 100 * atomic_load(&r->logs[k].calls);
        cr_assert_eq(atomic_load(&r->nested_items), expect, "nested loops ran every item once");
    }
    free(r);
    /* The world steps after the region as before. */
    cr_assert_eq(shoal_world_step(w, 0.01f), SHOAL_OK);
    shoal_world_destroy(w);
}

Test(parallel, region_hands_many_loops_to_one_team, .timeout = 30) { check_region(2, 300000, 0, 0); }
/* On a machine of fewer than three processors the waiters sleep at once. */
Test(parallel, region_of_three_threads, .timeout = 30) { check_region(3, 300000, 0, 0); }
Test(parallel, region_workers_wake_from_sleep, .timeout = 30) { check_region(3, 0, 2000, 0); }
Test(parallel, region_workers_that_spin_briefly_sleep_and_wake, .timeout = 30)
{
    check_region(2, 50, 500, 0);
}
Test(parallel, loops_inside_a_regions_loop_run_on_their_thread, .timeout = 30)
{
    check_region(2, 1000, 0, 1);
}

/* Bound threads keep spinning: the processor count is the world's, not
 * that of the caller's mask once bound to one core (with libgomp that
 * mask made every team look oversubscribed, and waiters slept after every
 * loop). */
static shoal_status_t spin_body(world_t* w, void* ctx)
{
    *(int32_t*)ctx = par_region_spin(w);
    return SHOAL_OK;
}

Test(parallel, bound_threads_spin_as_unbound_ones)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 2;
    def.backend = SHOAL_BACKEND_OPENMP;
    def.bind_threads = 1;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_geq(w->par_procs, 1);
    w->par_spin = 12345;
    int32_t expect = w->par_procs >= 2 ? 12345 : 0;
    for (int round = 0; round < 3; ++round) { /* the first region binds the threads */
        int32_t spin = -2;
        cr_assert_eq(par_region(w, spin_body, &spin), SHOAL_OK);
        cr_assert_eq(spin, expect, "round %d: spin %d with %d processors", round, spin, w->par_procs);
    }
    cr_assert_eq(par_region_spin(w), -1, "outside a region");
    shoal_world_destroy(w);
}

Test(parallel, a_world_of_one_thread_has_no_region)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_OPENMP);
    region_run_t* r = calloc(1, sizeof *r);
    cr_assert_eq(par_region(w, region_body, r), SHOAL_ERR_NOT_FOUND);
    cr_assert_not(r->team_inside);
    for (int k = 0; k < REGION_LOOPS; ++k) assert_partition(&r->logs[k], r->counts[k]);
    free(r);
    shoal_world_destroy(w);
}

/* A user system runs between the step's regions: its own OpenMP loops get
 * the threads (inside a region they would get a team of one). Its failure
 * stops the step with its message, after the stage's commands, and the
 * next step runs again. */
typedef struct omp_probe {
    int team;
    int fail;
} omp_probe_t;

static shoal_status_t user_omp_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)w;
    (void)dt;
    omp_probe_t* p = (omp_probe_t*)ctx;
    int team = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp master
        team = omp_get_num_threads();
    }
    p->team = team;
    return p->fail ? SHOAL_ERR_INVALID_ARGUMENT : SHOAL_OK;
}

Test(parallel, user_systems_run_outside_the_steps_region)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    for (int i = 0; i < 3000; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)(i % 60);
        d.position[1] = (float)(i / 60);
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    omp_probe_t p = {0, 0};
    cr_assert_eq(shoal_world_add_system(w, "omp_probe", SHOAL_STAGE_DECIDE, user_omp_system, &p), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.01f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(p.team, 2, "the user system's OpenMP loop got %d threads", p.team);
    p.fail = 1;
    uint64_t steps = shoal_world_step_count(w);
    cr_assert_eq(shoal_world_step(w, 0.01f), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "omp_probe") != NULL, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_step_count(w), steps, "a failed step is not counted");
    p.fail = 0;
    cr_assert_eq(shoal_world_step(w, 0.01f), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_world_destroy(w);
}

/* The automatic thread count (thread_count 0, no $SHOAL_THREADS) steps
 * each block of steps on one thread or on the workers, as measured; the
 * state is the same either way. Tries of the other mode are forced here
 * every 20 steps, so that both modes run many times whatever this
 * machine's timings say. */
Test(parallel, the_automatic_thread_count_gives_one_state_on_one_thread_or_the_workers)
{
    unsetenv("SHOAL_THREADS");
    shoal_world_t* w = make_world(2, 0, SHOAL_BACKEND_OPENMP);
    world_t* iw = (world_t*)w;
    cr_assert(iw->par_auto.on, "thread_count 0 is automatic");
    if (iw->thread_count < 2) iw->thread_count = 2; /* a one-core machine still has two modes */
    iw->par_auto.min_step_ns = 0.0;                 /* try the workers however short a step */
    shoal_world_t* ref = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    populate_mixed(w, 300, 11);
    populate_mixed(ref, 300, 11);
    for (int s = 0; s < 400; ++s) {
        if (s % 20 == 0) {
            iw->par_auto.next_probe = 0;
            iw->par_auto.next_probe_ns = 0;
        }
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_world_step(ref, 0.05f), SHOAL_OK);
    }
    cr_expect_gt(iw->par_auto.steps[0], 0u, "no step on one thread");
    cr_expect_gt(iw->par_auto.steps[1], 0u, "no step on the workers");
    cr_expect_geq(iw->par_auto.probes, 10u, "%llu tries", (unsigned long long)iw->par_auto.probes);
    cr_expect_eq(shoal_world_state_hash(w), shoal_world_state_hash(ref));
    shoal_world_destroy(w);
    shoal_world_destroy(ref);
}

/* A count the caller chose, or $SHOAL_THREADS, is kept for every step; a
 * world under PAR_AUTO_SERIAL_BELOW agents steps on one thread untimed. */
Test(parallel, a_chosen_thread_count_is_kept_and_tiny_worlds_step_on_one_thread)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    cr_assert_not(((world_t*)w)->par_auto.on);
    populate_mixed(w, 300, 3);
    step_n(w, 30, 0.05f);
    cr_expect_eq(((world_t*)w)->par_auto.steps[0] + ((world_t*)w)->par_auto.steps[1], 0u);
    shoal_world_destroy(w);

    setenv("SHOAL_THREADS", "2", 1);
    w = make_world(2, 0, SHOAL_BACKEND_OPENMP);
    cr_expect_eq(shoal_world_thread_count(w), 2);
    cr_assert_not(((world_t*)w)->par_auto.on, "$SHOAL_THREADS is a chosen count");
    shoal_world_destroy(w);
    unsetenv("SHOAL_THREADS");

    w = make_world(2, 0, SHOAL_BACKEND_OPENMP);
    world_t* iw = (world_t*)w;
    if (iw->thread_count < 2) iw->thread_count = 2;
    populate_mixed(w, PAR_AUTO_SERIAL_BELOW - 1, 5);
    step_n(w, 30, 0.05f);
    cr_expect_eq(iw->par_auto.steps[0] + iw->par_auto.steps[1], 0u, "a tiny world is not timed");
    cr_expect_eq(iw->par_auto.used, -1);
    shoal_world_destroy(w);
}
