/* ECS: handles, add/remove churn, reorder, definitions and errors. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "modules/wander/wander.h"
#include "ecs/world.h"
#include "modules/registry.h"
#include "shoal/snapshot.h"
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
            cr_assert_eq(v, alive[i], "agent %d carries %llu, expected %llu", i, (unsigned long long)v,
                         (unsigned long long)alive[i]);
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
} spawner_t;

static shoal_status_t spawn_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    spawner_t* s = (spawner_t*)ctx;
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
    spawner_t sp;
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

/* ---- parameter columns that hold one value -------------------------------- */

/* A flock whose agents share every parameter: poses vary, nothing else. */
static shoal_world_t* one_value_flock_in(int dims, int n, int wrap)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = 2;
    def.backend = SHOAL_BACKEND_OPENMP;
    def.seed = 7;
    if (wrap) { /* a torus a little wider than where the agents start */
        def.wrap = 1;
        for (int k = 0; k < 3; ++k) {
            def.bounds_min[k] = -21.0f;
            def.bounds_max[k] = 21.0f;
        }
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    shoal_agent_def_t d = shoal_agent_default_def();
    /* Each parameter its own value, so that a kernel taking one for
     * another gives other results. */
    d.vehicle.mass = 1.3f;
    d.vehicle.inertia = 0.7f;
    d.vehicle.max_force = 9.0f;
    d.vehicle.max_torque = 4.0f;
    d.vehicle.max_speed = 6.0f;
    d.vehicle.max_turn_rate = 2.5f;
    d.control.speed_gain = 2.2f;
    d.control.heading_gain = 5.1f;
    d.control.turn_damping = 1.7f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_COHERE] = 0.3f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
    float* pos = calloc((size_t)n * 3, sizeof *pos);
    float* heads = calloc((size_t)n, sizeof *heads);
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < dims; ++k)
            pos[3 * i + k] = rng_range(11, (uint64_t)i, 0, (uint32_t)k, -20.0f, 20.0f);
        heads[i] = rng_range(11, (uint64_t)i, 1, 0, -3.0f, 3.0f);
    }
    shoal_agent_arrays_t a;
    memset(&a, 0, sizeof a);
    a.positions = pos;
    a.headings = heads;
    cr_assert_eq(shoal_agents_add(w, &d, &a, n, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    free(pos);
    free(heads);
    return w;
}

static shoal_world_t* one_value_flock(int dims, int n) { return one_value_flock_in(dims, n, 0); }

/* Steps both worlds, b always through the columns (its one-value bits
 * dropped before each step), and compares them step by step. */
static void step_against_columns(shoal_world_t* a, shoal_world_t* b, int steps, const char* phase)
{
    for (int s = 0; s < steps; ++s) {
        cr_assert(agent_params_check(a), "%s step %d: a bit claims one value a column does not hold", phase,
                  s);
        world_t* wb = (world_t*)b;
        wb->params_one = 0;
        wb->comps[COMP_WANDER].note_state = 2; /* wander's parameters too */
        wb->comps[COMP_WANDER].note_version = wb->comps[COMP_WANDER].version;
        wb->comps[COMP_WANDER].note_cols =
            1ull << WD_WEIGHT | 1ull << WD_CRUISE | 1ull << WD_STRENGTH | 1ull << WD_NOISE;
        cr_assert_eq(shoal_world_step(a, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(a));
        cr_assert_eq(shoal_world_step(b, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(b));
        cr_assert_eq(shoal_world_state_hash(a), shoal_world_state_hash(b), "%s: step %d differs", phase, s);
    }
}

static void one_value_columns_in(int dims)
{
    enum { N = 700 };
    shoal_world_t* a = one_value_flock(dims, N);
    shoal_world_t* b = one_value_flock(dims, N);
    const world_t* wa = (const world_t*)a;
    /* Everything the kernels broadcast is known to hold one value, the
     * behavior weights that steer skips at zero among them. */
    cr_assert_eq(wa->params_one, (1u << AP_COUNT) - 1u, "bits %x", wa->params_one);
    step_against_columns(a, b, 12, "shared parameters");
    cr_assert_eq(wa->comps[COMP_WANDER].note_state, 1, "wander took its parameters as one value");

    /* One agent's max speed: that column's bit goes, the rest stay. */
    shoal_agent_t ids[N];
    cr_assert_eq(shoal_world_row_handles(a, 0, N, ids), SHOAL_OK);
    shoal_agent_t idb[N];
    cr_assert_eq(shoal_world_row_handles(b, 0, N, idb), SHOAL_OK);
    shoal_agent_def_t got;
    cr_assert_eq(shoal_agent_get_def(a, ids[5], &got), SHOAL_OK);
    shoal_vehicle_t v = got.vehicle;
    cr_assert_eq(shoal_agent_set_vehicle(a, ids[5], &v), SHOAL_OK);
    cr_assert_eq(wa->params_one, (1u << AP_COUNT) - 1u, "the same values keep every bit: %x", wa->params_one);
    v.max_speed *= 0.5f;
    cr_assert_eq(shoal_agent_set_vehicle(a, ids[5], &v), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_vehicle(b, idb[5], &v), SHOAL_OK);
    cr_assert_eq(wa->params_one, ((1u << AP_COUNT) - 1u) & ~AP_BIT(AC_MAX_SPEED), "bits %x", wa->params_one);
    step_against_columns(a, b, 6, "one max speed");

    /* One agent wanders its own way. */
    shoal_wander_t wd = got.wander;
    wd.noise *= 0.5f;
    cr_assert_eq(shoal_agent_set_wander(a, ids[7], &wd), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_wander(b, idb[7], &wd), SHOAL_OK);
    step_against_columns(a, b, 4, "one wanderer");
    cr_assert_eq(wa->comps[COMP_WANDER].note_state, 2);

    /* One agent seeks: steer reads the weights again. */
    cr_assert_eq(shoal_agent_set_behavior(a, ids[9], SHOAL_BEHAVIOR_SEEK, 1.0f), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_behavior(b, idb[9], SHOAL_BEHAVIOR_SEEK, 1.0f), SHOAL_OK);
    cr_assert_eq(wa->params_one & AP_BIT(AC_W_SEEK), 0u);
    step_against_columns(a, b, 6, "one seeker");

    /* Agents added in bulk with other gains, and one by one. */
    shoal_agent_def_t d = got; /* agent 5 as it was: the shared parameters */
    d.control.heading_gain *= 2.0f;
    cr_assert_eq(shoal_agents_add(a, &d, NULL, 40, NULL), SHOAL_OK);
    cr_assert_eq(shoal_agents_add(b, &d, NULL, 40, NULL), SHOAL_OK);
    cr_assert_eq(wa->params_one & AP_BIT(AC_HEADING_GAIN), 0u);
    cr_assert_neq(wa->params_one & AP_BIT(AC_MASS), 0u);
    d.vehicle.mass = 3.0f;
    cr_assert_eq(shoal_agent_add(a, &d, NULL), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(b, &d, NULL), SHOAL_OK);
    cr_assert_eq(wa->params_one & AP_BIT(AC_MASS), 0u);
    step_against_columns(a, b, 6, "added agents");

    /* Removing every agent but one, then writing it, makes its values the
     * one value again. */
    int32_t n = shoal_world_agent_count(a);
    shoal_agent_t* all = calloc((size_t)n, sizeof *all);
    cr_assert_eq(shoal_world_row_handles(a, 0, n, all), SHOAL_OK);
    cr_assert_eq(shoal_agents_remove(a, all + 1, n - 1), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_vehicle(a, all[0], &v), SHOAL_OK);
    cr_assert_eq(wa->params_one, (1u << AP_COUNT) - 1u, "bits %x", wa->params_one);
    cr_assert(agent_params_check(a));
    free(all);
    shoal_world_destroy(a);
    shoal_world_destroy(b);
}

Test(world, one_value_parameter_columns_give_the_columns_results_2d) { one_value_columns_in(2); }
Test(world, one_value_parameter_columns_give_the_columns_results_3d) { one_value_columns_in(3); }

/* A snapshot's columns are read raw: the loaded world finds its one-value
 * columns from them, including one that the saved world had given up on. */
Test(world, one_value_parameter_columns_after_a_snapshot)
{
    enum { N = 300 };
    shoal_world_t* a = one_value_flock(2, N);
    shoal_agent_t ids[N];
    cr_assert_eq(shoal_world_row_handles(a, 0, N, ids), SHOAL_OK);
    shoal_agent_def_t got;
    cr_assert_eq(shoal_agent_get_def(a, ids[3], &got), SHOAL_OK);
    shoal_vehicle_t v = got.vehicle;
    v.max_force *= 2.0f;
    cr_assert_eq(shoal_agent_set_vehicle(a, ids[3], &v), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_behavior(a, ids[4], SHOAL_BEHAVIOR_FLEE, 1.0f), SHOAL_OK);
    cr_assert_eq(shoal_agents_remove(a, &ids[4], 1), SHOAL_OK);
    step_n(a, 3, 0.05f);
    const world_t* wa = (const world_t*)a;
    cr_assert_eq(wa->params_one & (AP_BIT(AC_MAX_FORCE) | AP_BIT(AC_W_FLEE)), 0u);

    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(a, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(a, buf, size, &size), SHOAL_OK);
    shoal_world_t* b = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &b, &err), SHOAL_OK, "%s", err.message);
    free(buf);
    const world_t* wb = (const world_t*)b;
    cr_assert(agent_params_check(b));
    cr_assert_eq(wb->params_one & AP_BIT(AC_MAX_FORCE), 0u);
    cr_assert_neq(wb->params_one & AP_BIT(AC_W_FLEE), 0u, "the fleeing agent is gone: one value again");
    cr_assert_eq(wb->params_one | AP_BIT(AC_MAX_FORCE), (1u << AP_COUNT) - 1u, "bits %x", wb->params_one);
    step_n(a, 5, 0.05f);
    step_n(b, 5, 0.05f);
    cr_assert_eq(shoal_world_state_hash(a), shoal_world_state_hash(b));
    shoal_world_destroy(a);
    shoal_world_destroy(b);
}

/* An agent added inside a step lands at the stage's end, through the same
 * writer. */
static shoal_status_t add_heavy(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    if (shoal_world_step_count(w) != 2) return SHOAL_OK;
    shoal_agent_def_t d = shoal_agent_default_def();
    d.vehicle.inertia = 9.0f;
    return shoal_agent_add(w, &d, NULL);
}

Test(world, one_value_parameter_columns_follow_adds_inside_a_step)
{
    shoal_world_t* a = one_value_flock(2, 200);
    shoal_world_t* b = one_value_flock(2, 200);
    cr_assert_eq(shoal_world_add_system(a, "add_heavy", SHOAL_STAGE_DECIDE, add_heavy, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_system(b, "add_heavy", SHOAL_STAGE_DECIDE, add_heavy, NULL), SHOAL_OK);
    step_against_columns(a, b, 6, "an add inside a step");
    cr_assert_eq(shoal_world_agent_count(a), 201);
    cr_assert_eq(((const world_t*)a)->params_one & AP_BIT(AC_INERTIA), 0u);
    shoal_world_destroy(a);
    shoal_world_destroy(b);
}

/* ---- fused passes -------------------------------------------------------------- */

/* Steps a (passes fused where they may) and b (a trace recording: never
 * fused) and compares them step by step; in each step of a `passes` fused
 * passes of `fused` systems in all (0: none). */
static void step_fused_passes(shoal_world_t* a, shoal_world_t* b, int steps, int passes, int fused,
                              const char* phase)
{
    uint64_t before = ((const world_t*)a)->fused_passes, systems = ((const world_t*)a)->fused_systems;
    for (int s = 0; s < steps; ++s) {
        cr_assert_eq(shoal_world_step(a, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(a));
        cr_assert_eq(shoal_world_step(b, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(b));
        cr_assert_eq(shoal_world_state_hash(a), shoal_world_state_hash(b), "%s: step %d differs", phase, s);
    }
    cr_assert_eq(((const world_t*)b)->fused_passes, 0u, "%s: a traced world fused", phase);
    uint64_t ran = ((const world_t*)a)->fused_passes - before,
             in = ((const world_t*)a)->fused_systems - systems;
    cr_assert_eq(ran, (uint64_t)(steps * passes), "%s: %llu passes fused in %d steps, expected %d a step",
                 phase, (unsigned long long)ran, steps, passes);
    cr_assert_eq(in, (uint64_t)(steps * fused), "%s: %llu systems fused in %d steps, expected %d a step",
                 phase, (unsigned long long)in, steps, fused);
}

/* One fused pass of `fused` systems a step (0: none). */
static void step_fused_against_separate(shoal_world_t* a, shoal_world_t* b, int steps, int fused,
                                        const char* phase)
{
    step_fused_passes(a, b, steps, fused ? 1 : 0, fused, phase);
}

static void fused_passes_in(int dims, int wrap)
{
    enum { N = 900 };
    /* wrap fuses too on a torus */
    const int all = 3 + wrap;
    shoal_world_t* a = one_value_flock_in(dims, N, wrap);
    shoal_world_t* b = one_value_flock_in(dims, N, wrap);
    cr_assert_eq(shoal_world_set_trace(b, 1 << 16), SHOAL_OK);
    /* every agent wanders, its rows in agent-row order: wander, control,
     * integrate (and wrap) */
    step_fused_against_separate(a, b, 8, all, "a flock");
    /* Each system counted as if it ran alone, with a share of the time. */
    for (int i = 0; i < shoal_world_system_count(a); ++i) {
        shoal_system_stats_t st;
        cr_assert_eq(shoal_world_system_stats(a, i, &st), SHOAL_OK);
        if (strcmp(st.name, "wander") != 0 && strcmp(st.name, "control") != 0 &&
            strcmp(st.name, "integrate") != 0 && strcmp(st.name, "wrap") != 0)
            continue;
        cr_assert_eq(st.calls, 8u, "%s", st.name);
        cr_assert_eq(st.agents, strcmp(st.name, "wrap") == 0 && !wrap ? 0u : 8u * N, "%s", st.name);
        if (st.agents > 0) cr_assert_gt(st.ns_total, 0u, "%s", st.name);
    }

    /* Parameters of their own (control and integrate read the columns),
     * and no wander: its rows are no longer every agent's. */
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.target[0] = 30.0f;
    d.vehicle.max_speed = 3.0f;
    enum { SEEKERS = 1200 }; /* past a fused block of rows (1024) */
    static shoal_agent_t seekers_a[SEEKERS], seekers_b[SEEKERS];
    cr_assert_eq(shoal_agents_add(a, &d, NULL, SEEKERS, seekers_a), SHOAL_OK);
    cr_assert_eq(shoal_agents_add(b, &d, NULL, SEEKERS, seekers_b), SHOAL_OK);
    step_fused_against_separate(a, b, 5, all - 1, "mixed parameters");
    /* They wander too now: every agent has a wander row, but the new rows
     * point at agent rows out of order (the even ones first, so wander row
     * 1500 is agent row 901's, in another block of rows) until the next
     * reorder puts them in order (the spatial hash's, every
     * reorder_interval steps). */
    for (int i = 0; i < SEEKERS; i += 2) {
        cr_assert_eq(shoal_agent_set_behavior(a, seekers_a[i], SHOAL_BEHAVIOR_WANDER, 0.25f), SHOAL_OK, "%s",
                     shoal_world_last_error(a));
        cr_assert_eq(shoal_agent_set_behavior(b, seekers_b[i], SHOAL_BEHAVIOR_WANDER, 0.25f), SHOAL_OK);
    }
    step_fused_against_separate(a, b, 2, all - 1, "half of them wander");
    for (int i = 1; i < SEEKERS; i += 2) {
        cr_assert_eq(shoal_agent_set_behavior(a, seekers_a[i], SHOAL_BEHAVIOR_WANDER, 0.25f), SHOAL_OK);
        cr_assert_eq(shoal_agent_set_behavior(b, seekers_b[i], SHOAL_BEHAVIOR_WANDER, 0.25f), SHOAL_OK);
    }
    cr_assert(!world_component_in_agent_order((world_t*)a, COMP_WANDER),
              "wander rows added in another order");
    const int32_t interval = ((const world_t*)a)->reorder_interval;
    cr_assert_gt(interval, 0);
    int reorder_in = (int)(((uint64_t)interval - ((const world_t*)a)->step_count % (uint64_t)interval) %
                           (uint64_t)interval);
    if (reorder_in > 0) step_fused_against_separate(a, b, reorder_in, all - 1, "all wander, out of order");
    step_fused_against_separate(a, b, 3, all, "all wander, reordered");
    cr_assert(world_component_in_agent_order((world_t*)a, COMP_WANDER));
    /* A removal keeps the order (the last row moves into the gap in both
     * tables). */
    cr_assert_eq(shoal_agents_remove(a, &seekers_a[7], 1), SHOAL_OK);
    cr_assert_eq(shoal_agents_remove(b, &seekers_b[7], 1), SHOAL_OK);
    step_fused_against_separate(a, b, 2, all, "one removed");

    /* A system of the user's between them: wander and control fuse before
     * it; on a torus integrate and wrap after it. */
    cr_assert_eq(shoal_world_add_system(a, "between", SHOAL_STAGE_CONTROL, add_heavy, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_system(b, "between", SHOAL_STAGE_CONTROL, add_heavy, NULL), SHOAL_OK);
    step_fused_passes(a, b, 3, 1 + wrap, 2 + 2 * wrap, "a user system between");
    cr_assert_eq(shoal_world_set_system_enabled(a, "between", 0), SHOAL_OK);
    cr_assert_eq(shoal_world_set_system_enabled(b, "between", 0), SHOAL_OK);
    step_fused_against_separate(a, b, 3, all, "that system disabled");

    /* An agent in the contact pass: contacts_prepare has work between
     * control and integrate (it wanders too: wander and control fuse). */
    shoal_agent_def_t c = shoal_agent_default_def();
    c.contacts = 1;
    c.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
    shoal_agent_t ca, cb;
    cr_assert_eq(shoal_agent_add(a, &c, &ca), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(b, &c, &cb), SHOAL_OK);
    step_fused_against_separate(a, b, 3, 2, "a contact agent");
    cr_assert_eq(shoal_agents_remove(a, &ca, 1), SHOAL_OK);
    cr_assert_eq(shoal_agents_remove(b, &cb, 1), SHOAL_OK);
    step_fused_against_separate(a, b, 2, all, "the contact agent gone");

    /* A crowd agent: control and integrate leave its row out, and it does
     * not wander. */
    shoal_agent_def_t k = shoal_agent_default_def();
    k.crowd.enabled = 1;
    k.target[1] = 10.0f;
    cr_assert_eq(shoal_agent_add(a, &k, NULL), SHOAL_OK, "%s", shoal_world_last_error(a));
    cr_assert_eq(shoal_agent_add(b, &k, NULL), SHOAL_OK);
    step_fused_against_separate(a, b, 3, 0, "a crowd agent");

    /* integrate disabled: wander and control still fuse; wander disabled
     * too, control alone: nothing to fuse. */
    shoal_world_t* a2 = one_value_flock(dims, 300);
    shoal_world_t* b2 = one_value_flock(dims, 300);
    cr_assert_eq(shoal_world_set_trace(b2, 1 << 16), SHOAL_OK);
    cr_assert_eq(shoal_world_set_system_enabled(a2, "integrate", 0), SHOAL_OK);
    cr_assert_eq(shoal_world_set_system_enabled(b2, "integrate", 0), SHOAL_OK);
    step_fused_against_separate(a2, b2, 3, 2, "integrate disabled");
    cr_assert_eq(shoal_world_set_system_enabled(a2, "wander", 0), SHOAL_OK);
    cr_assert_eq(shoal_world_set_system_enabled(b2, "wander", 0), SHOAL_OK);
    step_fused_against_separate(a2, b2, 3, 0, "integrate and wander disabled");
    /* A pursuer (that wanders too) between wander and control: control and
     * integrate fuse, wander not. */
    shoal_world_t* a3 = one_value_flock(dims, 300);
    shoal_world_t* b3 = one_value_flock(dims, 300);
    cr_assert_eq(shoal_world_set_trace(b3, 1 << 16), SHOAL_OK);
    shoal_agent_def_t p = shoal_agent_default_def();
    p.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
    shoal_agent_t ta, tb;
    cr_assert_eq(shoal_agent_add(a3, &p, &ta), SHOAL_OK, "%s", shoal_world_last_error(a3));
    cr_assert_eq(shoal_agent_add(b3, &p, &tb), SHOAL_OK);
    p.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
    p.pursuit.target = ta;
    cr_assert_eq(shoal_agent_add(a3, &p, NULL), SHOAL_OK, "%s", shoal_world_last_error(a3));
    p.pursuit.target = tb;
    cr_assert_eq(shoal_agent_add(b3, &p, NULL), SHOAL_OK);
    step_fused_against_separate(a3, b3, 3, 2, "a pursuer");
    shoal_world_destroy(a);
    shoal_world_destroy(b);
    shoal_world_destroy(a2);
    shoal_world_destroy(b2);
    shoal_world_destroy(a3);
    shoal_world_destroy(b3);
}

/* Whether a component's rows follow the agent rows is scanned for once,
 * then known until a row moves: a reorder (which puts every component on
 * every agent in that order) notes it, so steps between and across
 * reorders scan nothing, and the answer is still the truth. */
Test(world, a_reorder_leaves_the_components_order_known)
{
    enum { N = 3000 };
    shoal_world_t* a = one_value_flock_in(2, N, 1);
    world_t* w = (world_t*)a;
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
    shoal_agent_t first;
    cr_assert_eq(shoal_agents_add(a, &d, NULL, 1, &first), SHOAL_OK);
    const int32_t interval = w->reorder_interval;
    cr_assert_gt(interval, 0);
    cr_assert_eq(shoal_world_step(a, 0.05f), SHOAL_OK); /* step 0 reorders */
    uint64_t scans = w->order_scans;
    for (int s = 0; s < 2 * interval + 1; ++s) cr_assert_eq(shoal_world_step(a, 0.05f), SHOAL_OK);
    cr_assert_eq(w->order_scans, scans, "%llu scans in %d steps across two reorders",
                 (unsigned long long)(w->order_scans - scans), 2 * interval + 1);
    for (int k = 0; k < w->comp_count; ++k) {
        const component_t* c = &w->comps[k];
        if (c->table.count != w->agents.count) continue;
        const int32_t* rows = TABLE_COL(&c->table, int32_t, COMP_ROW);
        for (int32_t r = 0; r < c->table.count; ++r)
            cr_assert_eq(rows[r], r, "component %d row %d", k, (int)r);
        cr_assert(world_component_in_agent_order(w, k), "component %d", k);
    }
    cr_assert_eq(w->order_scans, scans, "known: no scan");
    /* An agent edited out of wandering and back: its wander row comes
     * last, the answer is found again (one scan), and it is "no". */
    cr_assert_eq(shoal_agent_set_behavior(a, first, SHOAL_BEHAVIOR_WANDER, 0.0f), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_behavior(a, first, SHOAL_BEHAVIOR_WANDER, 0.5f), SHOAL_OK);
    cr_assert(!world_component_in_agent_order(w, COMP_WANDER));
    cr_assert_eq(w->order_scans, scans + 1);
    shoal_world_destroy(a);
}

Test(world, fused_passes_give_the_results_of_separate_ones_2d) { fused_passes_in(2, 0); }
Test(world, fused_passes_give_the_results_of_separate_ones_3d) { fused_passes_in(3, 0); }
/* On a torus wrap fuses too, after integrate; agents cross its edges. */
Test(world, fused_passes_give_the_results_of_separate_ones_torus_2d) { fused_passes_in(2, 1); }
Test(world, fused_passes_give_the_results_of_separate_ones_torus_3d) { fused_passes_in(3, 1); }
