/* Shared helpers for the tests: small worlds built through the public API. */
#ifndef SHOAL_TEST_SUPPORT_H
#define SHOAL_TEST_SUPPORT_H

#include <criterion/criterion.h>
#include <math.h>
#include <shoal/shoal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/rng.h"

/* Uniform in [lo, hi) from the top 24 bits of one draw of the tests'
 * seeded stream (rng_splitmix64). */
static inline float uniform(uint64_t* s, float lo, float hi)
{
    return lo + (hi - lo) * ((float)(rng_splitmix64(s) >> 40) * (1.0f / 16777216.0f));
}

/* A host task system that never runs anything itself: enqueue returns a
 * task that is only executed, on the calling thread, when it is finished.
 * The library's own seat must finish the loop alone, proving progress never
 * depends on host threads. */
typedef struct lazy_task {
    shoal_task_fn* fn;
    int32_t count;
    void* ctx;
} lazy_task_t;

static inline void* lazy_enqueue(shoal_task_fn* fn, int32_t count, int32_t min_range, void* task_ctx,
                                 void* user_ctx)
{
    (void)min_range;
    (void)user_ctx;
    lazy_task_t* t = (lazy_task_t*)malloc(sizeof *t);
    cr_assert_not_null(t);
    *t = (lazy_task_t){fn, count, task_ctx};
    return t;
}

static inline void lazy_finish(void* task, void* user_ctx)
{
    (void)user_ctx;
    lazy_task_t* t = (lazy_task_t*)task;
    t->fn(0, t->count, 0, t->ctx);
    free(t);
}

static inline shoal_world_t* make_world(int dims, int threads, shoal_backend_t backend)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = threads;
    def.backend = backend;
    def.seed = 7;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    shoal_status_t st = shoal_world_create(&def, &w, &err);
    cr_assert_eq(st, SHOAL_OK, "world_create: %s", err.message);
    return w;
}

/* A mixed population: every behavior, random poses, fixed by `seed`. */
static inline void populate_mixed(shoal_world_t* w, int count, uint64_t seed)
{
    int dims = shoal_world_dimensions(w);
    for (int i = 0; i < count; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        for (int k = 0; k < 3; ++k) {
            d.position[k] = rng_range(seed, (uint64_t)i, 0, (uint32_t)k, -50.0f, 50.0f);
            d.target[k] = rng_range(seed, (uint64_t)i, 1, (uint32_t)k, -50.0f, 50.0f);
            d.threat[k] = rng_range(seed, (uint64_t)i, 2, (uint32_t)k, -50.0f, 50.0f);
        }
        if (dims == 2) d.position[2] = d.target[2] = d.threat[2] = 0.0f;
        d.heading = rng_range(seed, (uint64_t)i, 3, 0, -3.1f, 3.1f);
        d.pitch = dims == 3 ? rng_range(seed, (uint64_t)i, 3, 1, -0.5f, 0.5f) : 0.0f;
        d.vehicle.max_speed = rng_range(seed, (uint64_t)i, 4, 0, 2.0f, 8.0f);
        d.weights[i % 4] = 1.0f;
        if (i % 7 == 0) d.weights[(i + 1) % 4] = 0.5f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
}

/* The world of the tests that mix ordinary agents with ground vehicles or
 * planner agents (test_ground_world.c, test_planner_world.c): a 2D torus
 * of 160 m on two OpenMP threads, seed 7, with path 0 along y = 65 for the
 * vehicles, far from the ordinary agents. */
static inline shoal_world_t* make_shared_torus(void)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 2;
    def.backend = SHOAL_BACKEND_OPENMP;
    def.seed = 7;
    def.wrap = 1;
    def.bounds_min[0] = def.bounds_min[1] = -80.0f;
    def.bounds_max[0] = def.bounds_max[1] = 80.0f;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    const float path[] = {-60, 65, 0, 60, 65, 0, 60, 75, 0};
    cr_assert_eq(shoal_world_add_path(w, path, 3, 2.0f, NULL), SHOAL_OK);
    return w;
}

/* Ordinary agent i of that world: seek/flee/arrive/depart in turn, some
 * separating and some wandering, placed by the fixed seed 5. */
static inline shoal_agent_def_t shared_ordinary_def(int i)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = rng_range(5, (uint64_t)i, 0, 0, -50.0f, 50.0f);
    d.position[1] = rng_range(5, (uint64_t)i, 0, 1, -50.0f, 50.0f);
    d.target[0] = rng_range(5, (uint64_t)i, 1, 0, -50.0f, 50.0f);
    d.heading = rng_range(5, (uint64_t)i, 2, 0, -3.0f, 3.0f);
    d.weights[i % 4] = 1.0f;
    if (i % 3 == 0) d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    if (i % 5 == 0) d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
    return d;
}

/* Every system whose name starts with `prefix` or is `also` touched no
 * agent in the last step. */
static inline void assert_systems_idle(shoal_world_t* w, const char* prefix, const char* also)
{
    for (int i = 0; i < shoal_world_system_count(w); ++i) {
        shoal_system_stats_t s;
        shoal_world_system_stats(w, i, &s);
        if (!strncmp(s.name, prefix, strlen(prefix)) || !strcmp(s.name, also))
            cr_assert_eq(s.agents, 0, "%s touched agents", s.name);
    }
}

static inline void step_n(shoal_world_t* w, int n, float dt)
{
    for (int i = 0; i < n; ++i)
        cr_assert_eq(shoal_world_step(w, dt), SHOAL_OK, "%s", shoal_world_last_error(w));
}

#endif
