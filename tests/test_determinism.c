/* One state_hash for every backend and worker count (docs/design.md, "Parallel-for").
 * Runs inside Criterion's forked test child, never in the runner's parent,
 * because libgomp is not fork-safe. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>

#include "support.h"

/* A minimal host task system: each enqueue starts one thread that runs the
 * whole item range as host worker 1 (the library's seats are what index
 * scratch memory, so any host worker numbering is allowed). */
typedef struct host_task {
    pthread_t thread;
    shoal_task_fn* fn;
    int32_t count;
    void* ctx;
} host_task_t;

static void* host_thread(void* arg)
{
    host_task_t* t = (host_task_t*)arg;
    t->fn(0, t->count, 1, t->ctx);
    return NULL;
}

static int host_enqueued = 0;

static void* host_enqueue(shoal_task_fn* fn, int32_t count, int32_t min_range, void* task_ctx, void* user_ctx)
{
    (void)min_range;
    (void)user_ctx;
    host_task_t* t = malloc(sizeof *t);
    t->fn = fn;
    t->count = count;
    t->ctx = task_ctx;
    host_enqueued++;
    if (pthread_create(&t->thread, NULL, host_thread, t) != 0) {
        fn(0, count, 1, task_ctx); /* run inline when no thread can be had */
        free(t);
        return NULL;
    }
    return t;
}

static void host_finish(void* task, void* user_ctx)
{
    (void)user_ctx;
    host_task_t* t = (host_task_t*)task;
    pthread_join(t->thread, NULL);
    free(t);
}

static uint64_t run_hash(int dims, int threads, shoal_backend_t backend, int host_kind)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = threads;
    def.backend = backend;
    def.seed = 99;
    if (host_kind == 1) {
        def.enqueue_task = host_enqueue;
        def.finish_task = host_finish;
    } else if (host_kind == 2) {
        def.enqueue_task = lazy_enqueue;
        def.finish_task = lazy_finish;
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_backend(w), backend);
    populate_mixed(w, 5000, 5);
    step_n(w, 60, 1.0f / 60.0f);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

static void check_all_backends(int dims)
{
    uint64_t ref = run_hash(dims, 1, SHOAL_BACKEND_SERIAL, 0);
    for (int t = 1; t <= 4; ++t) {
        uint64_t h = run_hash(dims, t, SHOAL_BACKEND_OPENMP, 0);
        cr_assert_eq(h, ref, "openmp with %d threads: %016llx != serial %016llx", t, (unsigned long long)h,
                     (unsigned long long)ref);
    }
    for (int t = 2; t <= 4; ++t) {
        host_enqueued = 0;
        uint64_t h = run_hash(dims, t, SHOAL_BACKEND_HOST, 1);
        cr_assert_gt(host_enqueued, 0, "the host task system was used");
        cr_assert_eq(h, ref, "host tasks with %d workers differ", t);
        cr_assert_eq(run_hash(dims, t, SHOAL_BACKEND_HOST, 2), ref, "lazy host with %d workers differs", t);
    }
    cr_assert_eq(run_hash(dims, 2, SHOAL_BACKEND_OPENMP, 0), run_hash(dims, 2, SHOAL_BACKEND_OPENMP, 0),
                 "repeated runs differ");
}

Test(determinism, one_hash_for_every_backend_2d, .timeout = 120) { check_all_backends(2); }
Test(determinism, one_hash_for_every_backend_3d, .timeout = 120) { check_all_backends(3); }

Test(determinism, hash_sees_state_changes)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    populate_mixed(w, 10, 1);
    uint64_t h0 = shoal_world_state_hash(w);
    shoal_agent_t id;
    shoal_agent_batch_t b = {.ids = &id};
    int32_t n;
    shoal_world_read_agents(w, &b, 1, &n);
    float target[3] = {1e-3f, 0, 0};
    cr_assert_eq(shoal_agent_set_target(w, id, target), SHOAL_OK);
    cr_assert_neq(shoal_world_state_hash(w), h0);
    shoal_world_destroy(w);
}

/* Two worlds built alike in one process hash alike, even with behaviors
 * that store handles of other agents (whose world tags, taken from the
 * world's address, differ: both worlds are alive at once). */
static shoal_world_t* chase_world(void)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t lead = shoal_agent_default_def();
    lead.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
    shoal_agent_t leader;
    cr_assert_eq(shoal_agent_add(w, &lead, &leader), SHOAL_OK);
    for (int i = 0; i < 20; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)i;
        d.weights[i % 2 ? SHOAL_BEHAVIOR_PURSUE : SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
        d.pursuit.target = leader;
        d.follow.leader = leader;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    step_n(w, 30, 1.0f / 60.0f);
    return w;
}

Test(determinism, stored_handles_do_not_leak_world_addresses_into_the_hash)
{
    shoal_world_t* a = chase_world();
    shoal_world_t* b = chase_world();
    shoal_agent_t ida, idb;
    shoal_agent_batch_t ba = {.ids = &ida}, bb = {.ids = &idb};
    int32_t n;
    shoal_world_read_agents(a, &ba, 1, &n);
    shoal_world_read_agents(b, &bb, 1, &n);
    cr_assert_neq(ida.world0, idb.world0, "the two worlds have different tags");
    cr_assert_eq(shoal_world_state_hash(a), shoal_world_state_hash(b));
    shoal_world_destroy(a);
    shoal_world_destroy(b);
}

Test(determinism, bound_threads_give_the_same_hash)
{
    /* Pinning workers to cores (hwloc) changes where they run, not what
     * they compute. */
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 2;
    def.backend = SHOAL_BACKEND_OPENMP;
    def.bind_threads = 1;
    def.seed = 99;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    populate_mixed(w, 5000, 5);
    step_n(w, 60, 1.0f / 60.0f);
    uint64_t bound = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    cr_assert_eq(bound, run_hash(2, 1, SHOAL_BACKEND_SERIAL, 0));
}

/* A flock big enough that the spatial hash cuts it into one sort block per
 * worker (up to 9 blocks of 4096+ agents), whose prefix over the buckets
 * runs in parallel chunks, and that reorders its storage every 3 steps:
 * some agents without the neighbors component and half of them wandering,
 * so components with fewer rows than agents are permuted too. */
static uint64_t big_flock_hash(int threads, int wrap, int host)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = threads;
    def.seed = 21;
    def.reorder_interval = 3;
    def.wrap = wrap;
    def.bounds_min[0] = def.bounds_min[1] = -300.0f;
    def.bounds_max[0] = def.bounds_max[1] = 300.0f;
    if (host) {
        def.backend = SHOAL_BACKEND_HOST;
        def.enqueue_task = host_enqueue;
        def.finish_task = host_finish;
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    const int n = 40000;
    for (int i = 0; i < n; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = rng_range(21, (uint64_t)i, 0, 0, -290.0f, 290.0f);
        d.position[1] = rng_range(21, (uint64_t)i, 0, 1, -290.0f, 290.0f);
        d.heading = rng_range(21, (uint64_t)i, 1, 0, -3.1f, 3.1f);
        d.neighbors.radius = 3.0f;
        if (i % 11 == 0) {
            d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f; /* no neighbors component */
        } else {
            d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.5f;
            d.weights[SHOAL_BEHAVIOR_ALIGN] = 1.0f;
            d.weights[SHOAL_BEHAVIOR_COHERE] = 1.0f;
        }
        if (i % 2 == 0) d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    step_n(w, 7, 1.0f / 30.0f);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

static void check_big_flock(int wrap)
{
    uint64_t ref = big_flock_hash(1, wrap, 0);
    const int counts[] = {2, 3, 16};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
        uint64_t h = big_flock_hash(counts[k], wrap, 0);
        cr_assert_eq(h, ref, "%d threads: %016llx != 1 thread %016llx", counts[k], (unsigned long long)h,
                     (unsigned long long)ref);
    }
    cr_assert_eq(big_flock_hash(5, wrap, 1), ref, "host tasks with 5 workers differ");
}

Test(determinism, sort_blocks_one_hash_for_1_2_3_16_threads_torus, .timeout = 240) { check_big_flock(1); }
Test(determinism, sort_blocks_one_hash_for_1_2_3_16_threads_unbounded, .timeout = 240) { check_big_flock(0); }
