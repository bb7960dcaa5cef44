/* Shared helpers for the tests: small worlds built through the public API. */
#ifndef SHOAL_TEST_SUPPORT_H
#define SHOAL_TEST_SUPPORT_H

#include <criterion/criterion.h>
#include <math.h>
#include <shoal/shoal.h>

#include "ecs/rng.h"

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

static inline void step_n(shoal_world_t* w, int n, float dt)
{
    for (int i = 0; i < n; ++i)
        cr_assert_eq(shoal_world_step(w, dt), SHOAL_OK, "%s", shoal_world_last_error(w));
}

#endif
