/* The parallel-for's schedules, and the reorder that runs on it. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/world.h"
#include "systems/components.h"
#include "support.h"

#define MAX_CALLS 64

typedef struct call_log {
    atomic_int calls;
    int32_t begin[MAX_CALLS];
    int32_t end[MAX_CALLS];
    int32_t worker[MAX_CALLS];
} call_log;

static void log_call(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    call_log* log = (call_log*)ctx;
    int k = atomic_fetch_add(&log->calls, 1);
    if (k >= MAX_CALLS) return;
    log->begin[k] = begin;
    log->end[k] = end;
    log->worker[k] = worker;
}

/* Every item in [0, count) is covered by exactly one logged range. */
static void assert_partition(const call_log* log, int32_t count)
{
    int calls = atomic_load(&log->calls);
    cr_assert_leq(calls, MAX_CALLS);
    int32_t* seen = calloc((size_t)count, sizeof *seen);
    for (int k = 0; k < calls; ++k) {
        cr_assert(log->begin[k] >= 0 && log->begin[k] < log->end[k] && log->end[k] <= count,
                  "range [%d, %d)", log->begin[k], log->end[k]);
        for (int32_t i = log->begin[k]; i < log->end[k]; ++i) seen[i]++;
    }
    for (int32_t i = 0; i < count; ++i) cr_assert_eq(seen[i], 1, "item %d covered %d times", i, seen[i]);
    free(seen);
}

Test(parallel, static_tasks_give_each_worker_its_own_item)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    call_log log = {0};
    par_for(w, 2, 1, PAR_STATIC | PAR_TASKS, log_call, &log);
    assert_partition(&log, 2);
    cr_assert_eq(atomic_load(&log.calls), 2, "two tasks on two threads: one call each");
    cr_assert_neq(log.worker[0], log.worker[1], "both tasks ran on one worker");
    shoal_world_destroy(w);
}

Test(parallel, claimed_tasks_are_claimed_one_at_a_time)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    call_log log = {0};
    par_for(w, 5, 1, PAR_CLAIMED | PAR_TASKS, log_call, &log);
    assert_partition(&log, 5);
    cr_assert_eq(atomic_load(&log.calls), 5);
    shoal_world_destroy(w);
}

Test(parallel, row_ranges_start_on_cache_lines)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    call_log log = {0};
    par_for(w, 40, 1, PAR_STATIC, log_call, &log);
    assert_partition(&log, 40);
    for (int k = 0; k < atomic_load(&log.calls); ++k)
        cr_assert_eq(log.begin[k] % 16, 0, "a range starts at row %d", log.begin[k]);
    /* The same few rows as tasks would be cut finer; as rows they are not:
     * two items make one range. */
    call_log two = {0};
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
        call_log log = {0};
        par_for(w, 1000, 64, schedules[k], log_call, &log);
        assert_partition(&log, 1000);
        for (int c = 0; c < atomic_load(&log.calls); ++c)
            cr_assert(log.worker[c] >= 0 && log.worker[c] < 3, "worker %d", log.worker[c]);
    }
    shoal_world_destroy(w);
}

static void check_affine(int threads)
{
    shoal_world_t* w = make_world(2, threads, SHOAL_BACKEND_OPENMP);
    call_log log = {0};
    par_for(w, 1000, 64, PAR_AFFINE, log_call, &log);
    assert_partition(&log, 1000);
    cr_assert_eq(atomic_load(&log.calls), 16, "blocks of 64 items: 16 calls");
    for (int k = 0; k < atomic_load(&log.calls); ++k)
        cr_assert(log.worker[k] >= 0 && log.worker[k] < threads, "worker %d", log.worker[k]);
    shoal_world_destroy(w);
}

Test(parallel, affine_blocks_are_each_run_once_on_two_threads) { check_affine(2); }
Test(parallel, affine_blocks_are_each_run_once_on_three_threads) { check_affine(3); }

/* Two worlds built alike; some agents flock and some wander, so one
 * component has every agent and others only some. */
static shoal_world_t* make_reorder_world(int dims, int threads, int all_flock)
{
    shoal_world_t* w = make_world(dims, threads, threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL);
    /* Above 4096 agents the slot and component passes split over workers. */
    for (int i = 0; i < 5000; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        for (int k = 0; k < dims; ++k) d.position[k] = rng_range(3, (uint64_t)i, 0, (uint32_t)k, -80.0f, 80.0f);
        d.heading = rng_range(3, (uint64_t)i, 1, 0, -3.0f, 3.0f);
        if (all_flock || i % 3 == 0) d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        if (i % 4 == 0) d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
        if (i % 5 == 0) d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    step_n(w, 3, 0.02f);
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

static void check_parallel_reorder(int dims, int all_flock)
{
    shoal_world_t* ref = make_reorder_world(dims, 1, all_flock);
    shoal_world_t* par = make_reorder_world(dims, 2, all_flock);
    int32_t n = shoal_world_agent_count(ref);
    int32_t* perm = malloc((size_t)n * sizeof *perm);
    for (int32_t i = 0; i < n; ++i) perm[i] = i;
    uint64_t s = 99;
    for (int32_t i = n - 1; i > 0; --i) { /* a seeded shuffle */
        int32_t j = (int32_t)(rng_splitmix64(&s) % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    cr_assert_eq(world_permute_agents(ref, perm), SHOAL_OK);

    float* spare[4];
    for (int k = 0; k < 4; ++k) spare[k] = malloc((size_t)n * sizeof(float));
    int32_t* comp_perm = malloc((size_t)n * sizeof *comp_perm);
    world_permute_agents_parallel(par, perm, spare, 3, comp_perm);

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

Test(parallel, reorder_on_two_threads_matches_the_serial_one_2d) { check_parallel_reorder(2, 0); }
Test(parallel, reorder_on_two_threads_matches_the_serial_one_3d) { check_parallel_reorder(3, 0); }
Test(parallel, reorder_with_a_component_every_agent_has) { check_parallel_reorder(2, 1); }
