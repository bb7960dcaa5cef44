/* ECS: handles, add/remove churn, reorder, definitions and errors. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/world.h"
#include "support.h"

Test(world, create_rejects_bad_defs)
{
    shoal_world_t* w = (shoal_world_t*)0x1;
    shoal_error_t err;
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 4;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_null(w);
    cr_assert(strstr(err.message, "dimensions must be 2 or 3"), "%s", err.message);

    shoal_world_def_t raw;
    memset(&raw, 0, sizeof raw);
    raw.dimensions = 2;
    cr_assert_eq(shoal_world_create(&raw, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "shoal_world_default_def"), "%s", err.message);

    def = shoal_world_default_def();
    def.thread_count = -1;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "thread_count"), "%s", err.message);
}

Test(world, env_threads_is_validated)
{
    setenv("SHOAL_THREADS", "lots", 1);
    shoal_world_t* w = NULL;
    shoal_error_t err;
    shoal_world_def_t def = shoal_world_default_def();
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "SHOAL_THREADS='lots'"), "%s", err.message);
    setenv("SHOAL_THREADS", "3", 1);
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK);
    cr_assert_eq(shoal_world_thread_count(w), 3);
    shoal_world_destroy(w);
}

Test(world, churn_keeps_every_remaining_handle_valid)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    enum { N = 6000 };
    shoal_agent_t* ids = calloc(N, sizeof *ids);
    uint64_t* alive = calloc(N, sizeof *alive);
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < N; ++i) {
            if (alive[i]) continue;
            shoal_agent_def_t d = shoal_agent_default_def();
            d.position[0] = (float)i;
            d.user_value = (uint64_t)i * 1000 + (uint64_t)round + 1;
            cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK);
            alive[i] = d.user_value;
        }
        /* Remove a pseudo-random half, then step so systems see the holes. */
        for (int i = 0; i < N; ++i) {
            if (rng_bits(3, (uint64_t)i, (uint64_t)round, 0) & 1) {
                shoal_agent_t old = ids[i];
                cr_assert_eq(shoal_agent_remove(w, old), SHOAL_OK);
                cr_assert_not(shoal_agent_is_valid(w, old));
                cr_assert_eq(shoal_agent_remove(w, old), SHOAL_ERR_STALE_HANDLE);
                alive[i] = 0;
            }
        }
        step_n(w, 2, 0.01f);
        int live = 0;
        for (int i = 0; i < N; ++i) {
            if (!alive[i]) continue;
            ++live;
            uint64_t v = 0;
            cr_assert(shoal_agent_is_valid(w, ids[i]));
            cr_assert_eq(shoal_agent_get_user_value(w, ids[i], &v), SHOAL_OK);
            cr_assert_eq(v, alive[i], "agent %d carries %llu, expected %llu", i,
                         (unsigned long long)v, (unsigned long long)alive[i]);
        }
        cr_assert_eq(shoal_world_agent_count(w), live);
    }
    free(ids);
    free(alive);
    shoal_world_destroy(w);
}

Test(world, stale_null_and_foreign_handles_are_detected)
{
    shoal_world_t* a = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_world_t* b = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_agent_t ida, idb;
    cr_assert_eq(shoal_agent_add(a, &d, &ida), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(b, &d, &idb), SHOAL_OK);
    float t[3] = {1, 2, 0};
    shoal_agent_t null_id = {0, 0, 0};
    cr_assert_eq(shoal_agent_set_target(a, null_id, t), SHOAL_ERR_STALE_HANDLE);
    cr_assert(strstr(shoal_world_last_error(a), "null"));
    if (ida.world0 != idb.world0) { /* tags collide with probability 1/32768 */
        cr_assert_eq(shoal_agent_set_target(a, idb, t), SHOAL_ERR_STALE_HANDLE);
        cr_assert(strstr(shoal_world_last_error(a), "does not belong"));
    }
    cr_assert_eq(shoal_agent_remove(a, ida), SHOAL_OK);
    shoal_agent_t reused;
    cr_assert_eq(shoal_agent_add(a, &d, &reused), SHOAL_OK);
    cr_assert_eq(reused.index1, ida.index1, "slot is reused");
    cr_assert_neq(reused.generation, ida.generation);
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(a, ida, &s), SHOAL_ERR_STALE_HANDLE);
    cr_assert(strstr(shoal_world_last_error(a), "stale"), "%s", shoal_world_last_error(a));
    shoal_world_destroy(a);
    shoal_world_destroy(b);
}

Test(world, bad_values_are_rejected_and_change_nothing)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    uint64_t before = shoal_world_state_hash(w);

    shoal_vehicle_t v = shoal_vehicle_default();
    v.max_speed = -1.0f;
    cr_assert_eq(shoal_agent_set_vehicle(w, id, &v), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "vehicle.max_speed"), "%s", shoal_world_last_error(w));
    v = shoal_vehicle_default();
    v.mass = NAN;
    cr_assert_eq(shoal_agent_set_vehicle(w, id, &v), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "vehicle.mass"));
    float t[3] = {NAN, 0, 0};
    cr_assert_eq(shoal_agent_set_target(w, id, t), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "target[0]"));
    cr_assert_eq(shoal_agent_set_behavior(w, id, SHOAL_BEHAVIOR_FLEE, -2.0f), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_set_behavior(w, id, (shoal_behavior_t)99, 1.0f), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_set_gains(w, id, 0.0f, 1.0f), SHOAL_ERR_INVALID_ARGUMENT);
    float p[3] = {0, INFINITY, 0}, vel[3] = {0, 0, 0};
    cr_assert_eq(shoal_agent_teleport(w, id, p, vel, 0.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_step(w, 0.0f), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_step(w, NAN), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "dt"));
    d.vehicle.inertia = 0.0f;
    shoal_agent_t bad = {99, 99, 99};
    cr_assert_eq(shoal_agent_add(w, &d, &bad), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(shoal_agent_is_null(bad), "a failed add returns the null handle");
    cr_assert_eq(shoal_world_agent_count(w), 1);
    cr_assert_eq(shoal_world_state_hash(w), before, "failed calls changed the world");
    shoal_world_destroy(w);
}

Test(world, setters_round_trip_through_get_def)
{
    shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = 1;
    d.position[2] = 4;
    d.heading = 0.5f;
    d.pitch = 0.25f;
    d.group = 3;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    shoal_vehicle_t v = shoal_vehicle_default();
    v.max_speed = 11.0f;
    float target[3] = {5, 6, 7};
    cr_assert_eq(shoal_agent_set_vehicle(w, id, &v), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_target(w, id, target), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_behavior(w, id, SHOAL_BEHAVIOR_ARRIVE, 2.0f), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_user_value(w, id, 42), SHOAL_OK);
    shoal_agent_def_t got;
    cr_assert_eq(shoal_agent_get_def(w, id, &got), SHOAL_OK);
    cr_assert_eq(got.vehicle.max_speed, 11.0f);
    cr_assert_eq(got.target[2], 7.0f);
    cr_assert_eq(got.weights[SHOAL_BEHAVIOR_ARRIVE], 2.0f);
    cr_assert_eq(got.user_value, 42);
    cr_assert_eq(got.group, 3);
    cr_assert_float_eq(got.heading, 0.5f, 1e-5f);
    cr_assert_float_eq(got.pitch, 0.25f, 1e-5f);
    cr_assert_eq(got.position[2], 4.0f);
    shoal_world_destroy(w);
}

Test(world, teleport_sets_pose_and_clamps_speed)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    step_n(w, 3, 0.02f);
    float p[3] = {10, -3, 0}, v[3] = {100, 0, 0};
    cr_assert_eq(shoal_agent_teleport(w, id, p, v, 1.0f, NULL), SHOAL_OK);
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, id, &s), SHOAL_OK);
    cr_assert_eq(s.position[0], 10.0f);
    cr_assert_eq(s.position[1], -3.0f);
    cr_assert_float_eq(s.velocity[0], d.vehicle.max_speed, 1e-5f);
    cr_assert_eq(s.heading, 1.0f);
    cr_assert_eq(shoal_world_agent_count(w), 1);
    shoal_world_destroy(w);
}

Test(world, permute_keeps_handles_and_state_hash)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    populate_mixed(w, 500, 11);
    step_n(w, 5, 0.02f);
    int n = shoal_world_agent_count(w);
    shoal_agent_t* ids = calloc((size_t)n, sizeof *ids);
    float* pos = calloc((size_t)n * 3, sizeof *pos);
    shoal_agent_batch_t batch = {.ids = ids, .positions = pos};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &batch, n, &got), SHOAL_OK);
    cr_assert_eq(got, n);
    uint64_t hash = shoal_world_state_hash(w);

    int32_t* perm = calloc((size_t)n, sizeof *perm);
    for (int i = 0; i < n; ++i) perm[i] = n - 1 - i; /* reverse */
    cr_assert_eq(world_permute_agents(w, perm), SHOAL_OK);
    perm[0] = perm[1]; /* no longer a permutation */
    cr_assert_eq(world_permute_agents(w, perm), SHOAL_ERR_INVALID_ARGUMENT);

    cr_assert_eq(shoal_world_state_hash(w), hash, "the hash does not depend on storage order");
    for (int i = 0; i < n; ++i) {
        shoal_agent_state_t s;
        cr_assert_eq(shoal_agent_get_state(w, ids[i], &s), SHOAL_OK);
        cr_assert_eq(s.position[0], pos[3 * i]);
        cr_assert_eq(s.position[1], pos[3 * i + 1]);
    }
    /* Storage order is reversed: the first row now holds the last agent. */
    shoal_agent_t first;
    shoal_agent_batch_t one = {.ids = &first};
    cr_assert_eq(shoal_world_read_agents(w, &one, 1, &got), SHOAL_OK);
    cr_assert(shoal_agent_equal(first, ids[n - 1]));
    free(ids);
    free(pos);
    free(perm);
    shoal_world_destroy(w);
}

/* A user system that spawns and removes agents mid-step. */
typedef struct spawner {
    shoal_agent_t spawned;
    shoal_agent_t victim;
    int count_seen;
} spawner;

static shoal_status_t spawn_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    spawner* s = (spawner*)ctx;
    s->count_seen = shoal_world_agent_count(w);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = 99.0f;
    shoal_status_t st = shoal_agent_add(w, &d, &s->spawned);
    if (st != SHOAL_OK) return st;
    /* A pending agent accepts edits; they apply when it goes live. */
    float target[3] = {1, 2, 3};
    st = shoal_agent_set_target(w, s->spawned, target);
    if (st != SHOAL_OK) return st;
    return shoal_agent_remove(w, s->victim);
}

Test(world, changes_inside_a_step_apply_at_the_stage_boundary)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    spawner sp;
    memset(&sp, 0, sizeof sp);
    cr_assert_eq(shoal_agent_add(w, &d, &sp.victim), SHOAL_OK);
    cr_assert_eq(shoal_world_add_system(w, "spawner", SHOAL_STAGE_DECIDE, spawn_system, &sp), SHOAL_OK);
    cr_assert_eq(shoal_world_add_system(w, "spawner", SHOAL_STAGE_DECIDE, spawn_system, &sp),
                 SHOAL_ERR_INVALID_ARGUMENT, "names are unique");
    cr_assert_eq(shoal_world_step(w, 0.01f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(sp.count_seen, 1);
    cr_assert_eq(shoal_world_agent_count(w), 1);
    cr_assert_not(shoal_agent_is_valid(w, sp.victim));
    cr_assert(shoal_agent_is_valid(w, sp.spawned));
    shoal_agent_def_t got;
    cr_assert_eq(shoal_agent_get_def(w, sp.spawned, &got), SHOAL_OK);
    cr_assert_eq(got.target[1], 2.0f);
    cr_assert_eq(got.target[2], 0.0f, "z is dropped in a 2D world");
    cr_assert_eq(shoal_world_step(w, 0.01f), SHOAL_ERR_STALE_HANDLE, "victim is already gone");
    shoal_world_destroy(w);
}

Test(world, systems_are_timed_and_can_be_disabled)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    populate_mixed(w, 100, 1);
    step_n(w, 10, 0.01f);
    int n = shoal_world_system_count(w);
    cr_assert_geq(n, 3);
    int last_stage = -1;
    for (int i = 0; i < n; ++i) {
        shoal_system_stats_t s;
        cr_assert_eq(shoal_world_system_stats(w, i, &s), SHOAL_OK);
        cr_assert_geq((int)s.stage, last_stage, "systems are listed in step order");
        last_stage = (int)s.stage;
        cr_assert_eq(s.calls, 10, "%s ran %llu times", s.name, (unsigned long long)s.calls);
        /* Systems of components nobody has touch no agent. */
        int core = !strcmp(s.name, "steer") || !strcmp(s.name, "control") || !strcmp(s.name, "integrate");
        if (core) {
            cr_assert_eq(s.agents, 1000, "%s", s.name);
            cr_assert_gt(s.ns_total, 0);
        } else if (strcmp(s.name, "wrap") && strcmp(s.name, "spatial_hash")) {
            cr_assert_eq(s.agents, 0, "%s touched agents that lack its component", s.name);
        }
    }
    cr_assert_eq(shoal_world_set_system_enabled(w, "integrate", 0), SHOAL_OK);
    cr_assert_eq(shoal_world_set_system_enabled(w, "nope", 0), SHOAL_ERR_NOT_FOUND);
    uint64_t before = shoal_world_state_hash(w);
    shoal_agent_t id;
    shoal_agent_batch_t b = {.ids = &id};
    int32_t got;
    shoal_world_read_agents(w, &b, 1, &got);
    shoal_agent_state_t s0, s1;
    shoal_agent_get_state(w, id, &s0);
    step_n(w, 5, 0.01f);
    shoal_agent_get_state(w, id, &s1);
    cr_assert_eq(memcmp(s0.position, s1.position, sizeof s0.position), 0,
                 "with integrate disabled nothing moves");
    cr_assert_neq(shoal_world_state_hash(w), before, "the step count still advances");
    shoal_world_destroy(w);
}
