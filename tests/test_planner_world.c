/* Planner agents as agents of a world: execution against the trim table bit
 * for bit, seeking through obstacle fields without collisions, one hash for
 * every thread count, staggered replanning, bad input, trim tables saved and
 * loaded through the world, and ordinary agents and ground vehicles left
 * exactly as they were. The pure modules are tested in test_trim.c and
 * test_planner_search.c. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ecs/world.h"
#include "simd/vec.h"
#include "support.h"
#include "modules/planner/planner.h"

#define HZ 60.0f
#define DT (1.0f / HZ)

static shoal_agent_def_t planner_def(float x, float y, float z, float heading)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.position[1] = y;
    d.position[2] = z;
    d.heading = heading;
    d.planner.enabled = 1;
    return d;
}

static shoal_planner_status_t status_of(shoal_world_t* w, shoal_agent_t id)
{
    shoal_planner_status_t s;
    cr_assert_eq(shoal_agent_get_planner(w, id, &s), SHOAL_OK, "%s", shoal_world_last_error(w));
    return s;
}

static planner_interval_t interval_of(shoal_world_t* w, shoal_agent_t id)
{
    planner_interval_t iv;
    cr_assert(planner_interval_of(w, id, &iv), "not a live planner agent");
    return iv;
}

static trim_spec_t trim_spec_of(const shoal_trim_spec_t* s)
{
    trim_spec_t t;
    memset(&t, 0, sizeof t);
    t.axes = s->axes;
    for (int a = 0; a < 3; ++a) {
        t.samples[a] = s->samples[a];
        t.max_rate[a] = s->max_rate[a];
    }
    t.interval = s->interval;
    t.substeps = s->substeps;
    return t;
}

/* ---- 1. execution equals the table ----------------------------------------- */

/* A planner agent seeking a point behind and to its side (so it turns, and
 * its controls change from interval to interval) is stepped with dt = h *
 * steps_per_substep... Every time an interval ends, the next one must start
 * exactly (memcmp) where trim_apply of a table built from the same spec puts
 * the end of the one that ended, from its start pose, with its controls and
 * speed; and the agent's public position (and 3D orientation) is that pose. */
static void execution_matches_table(int dims, int substeps_per_step)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    shoal_trim_spec_t spec = shoal_trim_spec_default(dims);
    trim_spec_t ts = trim_spec_of(&spec);
    trim_table_t table;
    cr_assert_eq(trim_table_build(&table, &ts, NULL, NULL), 0);
    shoal_agent_def_t d = planner_def(3.0f, -2.0f, dims == 3 ? 1.0f : 0.0f, 0.3f);
    d.pitch = dims == 3 ? 0.2f : 0.0f;
    d.planner.goal_point[0] = -40.0f;
    d.planner.goal_point[1] = 25.0f;
    d.planner.goal_point[2] = dims == 3 ? 15.0f : 0.0f;
    d.planner.speed = 4.0f;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    /* Some obstacles far away: the scene exists but is never hit. */
    const float far[3] = {500.0f, 500.0f, 0.0f};
    cr_assert_eq(shoal_world_add_obstacle(w, far, 3.0f, NULL), SHOAL_OK);

    float dt = (float)substeps_per_step * (spec.interval / (float)spec.substeps);
    planner_interval_t prev = interval_of(w, id);
    int rollovers = 0, turning = 0, changed = 0;
    /* A new agent's first interval is a straight stretch cut short to its
     * phase: not a table entry. Checks start with its first full one. */
    int full = 0;
    for (int step = 0; step < 12 * 60 / substeps_per_step; ++step) {
        step_n(w, 1, dt);
        planner_interval_t now = interval_of(w, id);
        if (now.substeps_done <= prev.substeps_done && !full) {
            full = 1;
        } else if (now.substeps_done <= prev.substeps_done) {
            /* An interval ended during this step and the next began. */
            trim_pose_t expect =
                trim_apply(&table, prev.start, prev.initial_control, prev.final_control, prev.speed);
            cr_assert_eq(memcmp(&now.start, &expect, sizeof expect), 0,
                         "interval %d starts at (%.9g, %.9g, %.9g), the table says (%.9g, %.9g, %.9g)",
                         rollovers, (double)now.start.pos.x, (double)now.start.pos.y, (double)now.start.pos.z,
                         (double)expect.pos.x, (double)expect.pos.y, (double)expect.pos.z);
            cr_assert_eq(now.initial_control, prev.final_control, "the rates carry over");
            rollovers++;
            if (now.final_control != table.straight) turning++;
            if (now.final_control != now.initial_control) changed++;
        }
        if (full && now.substeps_done == spec.substeps) {
            /* At the interval's end, the agent is at the table's end state. */
            trim_pose_t expect =
                trim_apply(&table, now.start, now.initial_control, now.final_control, now.speed);
            cr_assert_eq(memcmp(&now.now, &expect, sizeof expect), 0, "end of interval %d", rollovers);
            shoal_agent_state_t st;
            cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
            const float pos[3] = {expect.pos.x, expect.pos.y, expect.pos.z};
            cr_assert_eq(memcmp(st.position, pos, (size_t)dims * sizeof(float)), 0,
                         "the public position is the table's");
            if (dims == 3) {
                const float q[4] = {expect.rot.w, expect.rot.x, expect.rot.y, expect.rot.z};
                cr_assert_eq(memcmp(st.orientation, q, sizeof q), 0, "the public orientation is the table's");
            }
            vec3 f = quat_forward(expect.rot);
            cr_assert_float_eq(st.velocity[0], f.x * d.planner.speed, 1e-5f, "velocity along the facing");
            cr_assert_float_eq(st.velocity[1], f.y * d.planner.speed, 1e-5f);
        }
        prev = now;
    }
    cr_assert_geq(rollovers, 10, "%d intervals", rollovers);
    cr_assert_geq(turning, 3, "the agent turned in %d intervals", turning);
    cr_assert_geq(changed, 3, "the control changed within %d intervals", changed);
    cr_assert_geq(status_of(w, id).searches, rollovers);
    trim_table_free(&table, NULL, NULL);
    shoal_world_destroy(w);
}

Test(planner_world, table_end_states_equal_the_online_integration_bit_for_bit_2d)
{
    execution_matches_table(2, 1);
}
Test(planner_world, table_end_states_equal_the_online_integration_bit_for_bit_3d)
{
    execution_matches_table(3, 1);
}
Test(planner_world, table_end_states_equal_the_online_integration_with_two_substeps_per_step)
{
    /* Boundaries then fall inside steps: the search runs from the pose the
     * agent will reach one substep into the step. */
    execution_matches_table(2, 2);
    execution_matches_table(3, 2);
}

/* ---- 2. seeking through an obstacle field ------------------------------------ */

/* Obstacles on a jittered grid between the start (the origin, facing +x)
 * and a goal 150 m away, one right on the straight line; nothing within
 * 15 m of the start or the goal. The agent must come within 6 m of the goal
 * without ever overlapping an obstacle. */
static void seek_through_field(int dims, shoal_plan_strategy_t strategy)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    int placed = 0;
    const float goal[3] = {150.0f, 0.0f, 0.0f};
    for (int i = 0; i < 9; ++i)
        for (int j = -3; j <= 3; ++j)
            for (int l = (dims == 3 ? -2 : 0); l <= (dims == 3 ? 2 : 0); ++l) {
                uint64_t key = (uint64_t)(i * 100 + (j + 3) * 10 + (l + 2));
                float c[3] = {25.0f + 13.0f * (float)i + rng_range(9, key, 0, 0, -3.0f, 3.0f),
                              13.0f * (float)j + rng_range(9, key, 0, 1, -3.0f, 3.0f),
                              dims == 3 ? 13.0f * (float)l + rng_range(9, key, 0, 2, -3.0f, 3.0f) : 0.0f};
                if (i == 2 && j == 0 && l == 0) c[1] = c[2] = 0.0f; /* dead ahead */
                float r = rng_range(9, key, 0, 3, 2.5f, 4.5f);
                float dg = sqrtf((c[0] - goal[0]) * (c[0] - goal[0]) + c[1] * c[1] + c[2] * c[2]);
                if (dg < r + 15.0f) continue;
                cr_assert_eq(shoal_world_add_obstacle(w, c, r, NULL), SHOAL_OK);
                placed++;
            }
    shoal_agent_def_t d = planner_def(0, 0, 0, 0);
    memcpy(d.planner.goal_point, goal, sizeof goal);
    d.planner.strategy = strategy;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    float best = INFINITY;
    int steps = 0;
    for (; steps < 60 * 90 && best > 6.0f; ++steps) {
        step_n(w, 1, DT);
        shoal_agent_state_t st;
        cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
        float dx = st.position[0] - goal[0], dy = st.position[1] - goal[1], dz = st.position[2] - goal[2];
        best = fminf(best, sqrtf(dx * dx + dy * dy + dz * dz));
    }
    shoal_planner_status_t s = status_of(w, id);
    cr_assert_lt(best, 6.0f, "%dD %d: closest %g m from the goal after %d steps (%d obstacles)", dims,
                 (int)strategy, (double)best, steps, placed);
    cr_assert_eq(s.collisions, 0, "%dD strategy %d: %d collisions", dims, (int)strategy, s.collisions);
    cr_assert_gt(s.searches, 10);
    cr_assert_gt(s.goodness_sum / (double)s.searches, 0.3, "mean goodness %g",
                 s.goodness_sum / (double)s.searches);
    cr_assert_gt(s.search_ns_sum, 0.0);
    cr_assert_geq(s.states_sum, s.expanded_sum);
    shoal_world_destroy(w);
}

Test(planner_world, seek_2d_adaptive_reaches_the_goal_without_collisions)
{
    seek_through_field(2, SHOAL_PLAN_ADAPTIVE);
}
Test(planner_world, seek_2d_uniform_reaches_the_goal_without_collisions)
{
    seek_through_field(2, SHOAL_PLAN_UNIFORM);
}
Test(planner_world, seek_3d_adaptive_reaches_the_goal_without_collisions, .timeout = 60)
{
    seek_through_field(3, SHOAL_PLAN_ADAPTIVE);
}
Test(planner_world, seek_3d_uniform_reaches_the_goal_without_collisions, .timeout = 120)
{
    seek_through_field(3, SHOAL_PLAN_UNIFORM);
}

/* Collisions are counted: with collision avoidance off, an agent aimed
 * straight through a row of obstacles enters each one once. */
Test(planner_world, collisions_are_counted_per_entry)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 3; ++i) {
        const float c[3] = {20.0f + 15.0f * (float)i, 0.0f, 0.0f};
        cr_assert_eq(shoal_world_add_obstacle(w, c, 2.0f, NULL), SHOAL_OK);
    }
    shoal_agent_def_t d = planner_def(0, 0, 0, 0);
    d.planner.goal = SHOAL_PLAN_GOAL_NONE;
    d.planner.avoid_collisions = 0;
    d.planner.damping = 0.5f; /* with nothing else to score, straight wins */
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    step_n(w, 60 * 15, DT);
    shoal_agent_state_t st;
    cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
    cr_assert_gt(st.position[0], 70.0f, "flew straight on: x = %g", (double)st.position[0]);
    cr_assert_eq(status_of(w, id).collisions, 3);
    shoal_world_destroy(w);
}

/* ---- 3. one hash for every thread count ------------------------------------- */

/* 200 planner agents of every strategy and goal (seekers, fleers, pursuers
 * and evaders of other planner agents and of ordinary agents, collision
 * avoidance on and off) among static and moving obstacles, with ordinary
 * flocking agents (the spatial hash reorders storage), a removal, a
 * teleport, a goal change and a late addition on the way. */
static uint64_t mixed_planner_hash(int dims, int threads, shoal_backend_t backend)
{
    shoal_world_t* w = make_world(dims, threads, backend);
    for (int i = 0; i < 60; ++i) {
        float c[3] = {rng_range(21, (uint64_t)i, 0, 0, -120.0f, 120.0f),
                      rng_range(21, (uint64_t)i, 0, 1, -120.0f, 120.0f),
                      dims == 3 ? rng_range(21, (uint64_t)i, 0, 2, -60.0f, 60.0f) : 0.0f};
        float v[3] = {rng_range(21, (uint64_t)i, 1, 0, -2.0f, 2.0f),
                      rng_range(21, (uint64_t)i, 1, 1, -2.0f, 2.0f),
                      rng_range(21, (uint64_t)i, 1, 2, -1.0f, 1.0f)};
        float r = rng_range(21, (uint64_t)i, 2, 0, 1.0f, 5.0f);
        if (i % 3 == 0)
            cr_assert_eq(shoal_world_add_obstacle(w, c, r, NULL), SHOAL_OK);
        else
            cr_assert_eq(shoal_world_add_moving_obstacle(w, c, v, r, NULL), SHOAL_OK);
    }
    shoal_agent_t plain[40];
    for (int i = 0; i < 40; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = rng_range(22, (uint64_t)i, 0, 0, -60.0f, 60.0f);
        d.position[1] = rng_range(22, (uint64_t)i, 0, 1, -60.0f, 60.0f);
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, &plain[i]), SHOAL_OK);
    }
    enum { N = 200 };
    shoal_agent_t ids[N];
    for (int i = 0; i < N; ++i) {
        shoal_agent_def_t d = planner_def(rng_range(23, (uint64_t)i, 0, 0, -150.0f, 150.0f),
                                          rng_range(23, (uint64_t)i, 0, 1, -150.0f, 150.0f),
                                          dims == 3 ? rng_range(23, (uint64_t)i, 0, 2, -50.0f, 50.0f) : 0.0f,
                                          rng_range(23, (uint64_t)i, 0, 3, -3.0f, 3.0f));
        d.planner.strategy = (shoal_plan_strategy_t)(i % 3);
        d.planner.speed = rng_range(23, (uint64_t)i, 1, 0, 3.0f, 7.0f);
        d.planner.max_expansions = 40 + 10 * (i % 7);
        d.planner.avoid_collisions = i % 11 != 0;
        for (int k = 0; k < dims; ++k)
            d.planner.goal_point[k] = rng_range(23, (uint64_t)i, 2, (uint32_t)k, -100.0f, 100.0f);
        switch (i % 5) {
        case 0: d.planner.goal = SHOAL_PLAN_GOAL_SEEK; break;
        case 1: d.planner.goal = SHOAL_PLAN_GOAL_FLEE; break;
        case 2: /* pursue an earlier planner agent */
            d.planner.goal = SHOAL_PLAN_GOAL_PURSUE;
            d.planner.goal_agent = ids[i / 2];
            break;
        case 3: /* evade an ordinary agent */
            d.planner.goal = SHOAL_PLAN_GOAL_EVADE;
            d.planner.goal_agent = plain[i % 40];
            break;
        default: d.planner.goal = SHOAL_PLAN_GOAL_NONE; break;
        }
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    step_n(w, 90, DT);
    cr_assert_eq(shoal_agent_remove(w, ids[4]), SHOAL_OK); /* pursued by ids[9]'s pursuer chain */
    cr_assert_eq(shoal_agent_remove(w, plain[3]), SHOAL_OK);
    const float p[3] = {10, 20, 5}, v[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0};
    cr_assert_eq(shoal_agent_teleport(w, ids[7], p, v, 1.0f, q), SHOAL_OK);
    const float target[3] = {-50, 40, 10};
    cr_assert_eq(shoal_agent_set_planner_goal(w, ids[10], SHOAL_PLAN_GOAL_SEEK, target, ids[0]), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_planner_goal(w, ids[15], SHOAL_PLAN_GOAL_PURSUE, NULL, plain[5]), SHOAL_OK);
    shoal_agent_def_t late = planner_def(0, 0, 0, 0);
    late.planner.goal = SHOAL_PLAN_GOAL_PURSUE;
    late.planner.goal_agent = ids[1];
    cr_assert_eq(shoal_agent_add(w, &late, NULL), SHOAL_OK);
    step_n(w, 150, DT);
    int64_t searches = 0;
    for (int i = 0; i < N; ++i)
        if (i != 4) searches += status_of(w, ids[i]).searches;
    cr_assert_gt(searches, N * 3, "%lld searches", (long long)searches);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

static void one_hash(int dims)
{
    uint64_t ref = mixed_planner_hash(dims, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(mixed_planner_hash(dims, 1, SHOAL_BACKEND_OPENMP), ref, "openmp, 1 thread");
    cr_assert_eq(mixed_planner_hash(dims, 2, SHOAL_BACKEND_OPENMP), ref, "openmp, 2 threads");
    cr_assert_eq(mixed_planner_hash(dims, 3, SHOAL_BACKEND_OPENMP), ref, "openmp, 3 threads");
}

Test(planner_world, one_hash_for_serial_and_openmp_2d, .timeout = 120) { one_hash(2); }
Test(planner_world, one_hash_for_serial_and_openmp_3d, .timeout = 240) { one_hash(3); }

/* ---- 4. staggering ----------------------------------------------------------- */

/* N agents with intervals of S substeps, stepped one substep per step: each
 * plans at its first step (all N at once), then replans once per interval,
 * and every later step's searches are within ceil(N/S) + 1 of N/S. */
static void check_stagger(int32_t n, const shoal_trim_spec_t* spec)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(shoal_world_set_trim_table(w, spec), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int32_t i = 0; i < n; ++i) {
        shoal_agent_def_t d = planner_def((float)(i % 50) * 10.0f, (float)(i / 50) * 10.0f, 0, 0);
        d.planner.max_expansions = 10;
        d.planner.goal_point[0] = 1000.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    int32_t index = -1;
    for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
        shoal_system_stats_t s;
        shoal_world_system_stats(w, i, &s);
        if (!strcmp(s.name, "planner")) index = i;
    }
    cr_assert_geq(index, 0);
    const int32_t S = spec->substeps;
    const double mean = (double)n / (double)S;
    const double bound = ceil(mean) + 1.0;
    float dt = spec->interval / (float)S;
    uint64_t before = 0;
    int64_t window = 0;
    for (int32_t step = 0; step < 3 * S; ++step) {
        step_n(w, 1, dt);
        shoal_system_stats_t s;
        shoal_world_system_stats(w, index, &s);
        int64_t searches = (int64_t)(s.agents - before);
        before = s.agents;
        if (step == 0) {
            /* Every new agent plans its first (shortened) interval at once. */
            cr_assert_eq(searches, n, "step 0: %lld searches", (long long)searches);
            continue;
        }
        cr_assert_leq(fabs((double)searches - mean), bound, "step %d: %lld searches, N/S = %g", step,
                      (long long)searches, mean);
        if (step >= S) window += searches;
    }
    cr_assert_eq(window, 2 * (int64_t)n, "every agent replans once per interval");
    shoal_world_destroy(w);
}

Test(planner_world, replanning_is_staggered_evenly)
{
    shoal_trim_spec_t spec = shoal_trim_spec_default(2);
    check_stagger(500, &spec);
    check_stagger(37, &spec);
    spec.substeps = 24;
    spec.interval = 0.5f;
    check_stagger(1000, &spec);
}

/* ---- 5. bad input -------------------------------------------------------------- */

#define EXPECT_FAIL(call, status, needle)                                                                    \
    do {                                                                                                     \
        cr_assert_eq((call), (status), "%s: %s", #call, shoal_world_last_error(w));                          \
        cr_assert(strstr(shoal_world_last_error(w), (needle)), "%s: message '%s' lacks '%s'", #call,         \
                  shoal_world_last_error(w), (needle));                                                      \
        cr_assert_eq(shoal_world_state_hash(w), h, "%s changed the world", #call);                           \
    } while (0)

Test(planner_world, bad_parameters_are_rejected_and_change_nothing)
{
    /* Before any planner agent: a failed add builds no table either. */
    {
        shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        const uint64_t h = shoal_world_state_hash(w);
        shoal_agent_def_t bad = planner_def(0, 0, 0, 0);
        bad.planner.discount = 1.5f;
        EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                    "agent_add: planner.discount must be in (0, 1), got 1.5");
        shoal_world_destroy(w);
    }
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t good = planner_def(0, 0, 0, 0);
    good.planner.goal_point[0] = 50.0f;
    shoal_agent_t pa, plain, gone;
    cr_assert_eq(shoal_agent_add(w, &good, &pa), SHOAL_OK);
    shoal_agent_def_t pd = shoal_agent_default_def();
    cr_assert_eq(shoal_agent_add(w, &pd, &plain), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(w, &pd, &gone), SHOAL_OK);
    cr_assert_eq(shoal_agent_remove(w, gone), SHOAL_OK);
    step_n(w, 10, DT);
    const uint64_t h = shoal_world_state_hash(w);

#define BAD_ADD(field, value, status, needle)                                                                \
    do {                                                                                                     \
        shoal_agent_def_t bad = good;                                                                        \
        bad.planner.field = value;                                                                           \
        EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), status, needle);                                         \
    } while (0)
    BAD_ADD(discount, 1.5f, SHOAL_ERR_INVALID_ARGUMENT,
            "agent_add: planner.discount must be in (0, 1), got 1.5");
    BAD_ADD(discount, 0.0f, SHOAL_ERR_INVALID_ARGUMENT, "planner.discount");
    BAD_ADD(discount, NAN, SHOAL_ERR_INVALID_ARGUMENT, "planner.discount");
    BAD_ADD(optimism, 1.5f, SHOAL_ERR_INVALID_ARGUMENT, "planner.optimism must be in [-1, 1], got 1.5");
    BAD_ADD(optimism, -1.01f, SHOAL_ERR_INVALID_ARGUMENT, "planner.optimism");
    BAD_ADD(goal_point[0], NAN, SHOAL_ERR_INVALID_ARGUMENT, "planner.goal_point[0] must be finite");
    BAD_ADD(goal_point[1], INFINITY, SHOAL_ERR_INVALID_ARGUMENT, "planner.goal_point[1]");
    BAD_ADD(k_skip, 0, SHOAL_ERR_INVALID_ARGUMENT, "planner.k_skip must be >= 1, got 0");
    BAD_ADD(max_depth, 0, SHOAL_ERR_INVALID_ARGUMENT, "planner.max_depth");
    BAD_ADD(max_depth, 65, SHOAL_ERR_INVALID_ARGUMENT, "planner.max_depth");
    BAD_ADD(min_depth, 7, SHOAL_ERR_INVALID_ARGUMENT, "planner.min_depth");
    BAD_ADD(max_expansions, 0, SHOAL_ERR_INVALID_ARGUMENT, "planner.max_expansions");
    BAD_ADD(max_expansions, 2000000, SHOAL_ERR_INVALID_ARGUMENT, "planner.max_expansions");
    BAD_ADD(n_v, 0, SHOAL_ERR_INVALID_ARGUMENT, "planner.n_v");
    BAD_ADD(collapse, 0.0f, SHOAL_ERR_INVALID_ARGUMENT, "planner.collapse");
    BAD_ADD(damping, 1.0f, SHOAL_ERR_INVALID_ARGUMENT, "planner.damping");
    BAD_ADD(time_budget_ms, -1.0f, SHOAL_ERR_INVALID_ARGUMENT,
            "planner.time_budget_ms must be finite and in [0, 60000] ms (0: no time budget), got -1");
    BAD_ADD(time_budget_ms, NAN, SHOAL_ERR_INVALID_ARGUMENT, "planner.time_budget_ms");
    BAD_ADD(time_budget_ms, INFINITY, SHOAL_ERR_INVALID_ARGUMENT, "planner.time_budget_ms");
    BAD_ADD(time_budget_ms, 60001.0f, SHOAL_ERR_INVALID_ARGUMENT, "planner.time_budget_ms");
    BAD_ADD(speed, 0.0f, SHOAL_ERR_INVALID_ARGUMENT, "planner.speed");
    BAD_ADD(radius, -1.0f, SHOAL_ERR_INVALID_ARGUMENT, "planner.radius");
    BAD_ADD(strategy, (shoal_plan_strategy_t)7, SHOAL_ERR_INVALID_ARGUMENT, "planner.strategy");
    BAD_ADD(goal, (shoal_plan_goal_t)9, SHOAL_ERR_INVALID_ARGUMENT, "planner.goal");
    BAD_ADD(enabled, 2, SHOAL_ERR_INVALID_ARGUMENT, "planner.enabled");
    BAD_ADD(avoid_collisions, 3, SHOAL_ERR_INVALID_ARGUMENT, "planner.avoid_collisions");
    {
        shoal_agent_def_t bad = good;
        bad.ground.enabled = 1;
        EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_INVALID_ARGUMENT, "ground.enabled");
    }
    /* Goal agents: null, removed, of another world. */
    shoal_agent_t null_id = {0, 0, 0};
    {
        shoal_agent_def_t bad = good;
        bad.planner.goal = SHOAL_PLAN_GOAL_PURSUE;
        bad.planner.goal_agent = null_id;
        EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                    "planner.goal_agent is the null handle");
        bad.planner.goal_agent = gone;
        EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_STALE_HANDLE, "planner.goal_agent");
        shoal_world_t* other = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        shoal_agent_t foreign;
        cr_assert_eq(shoal_agent_add(other, &pd, &foreign), SHOAL_OK);
        bad.planner.goal = SHOAL_PLAN_GOAL_EVADE;
        bad.planner.goal_agent = foreign;
        EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_STALE_HANDLE, "does not belong to this world");
        shoal_world_destroy(other);
    }
    /* Goals of a live agent. */
    const float nan_point[3] = {NAN, 0, 0};
    const float point[3] = {1, 2, 3};
    EXPECT_FAIL(shoal_agent_set_planner_goal(w, pa, SHOAL_PLAN_GOAL_SEEK, nan_point, null_id),
                SHOAL_ERR_INVALID_ARGUMENT, "planner.goal_point[0] must be finite");
    EXPECT_FAIL(shoal_agent_set_planner_goal(w, pa, SHOAL_PLAN_GOAL_SEEK, NULL, null_id),
                SHOAL_ERR_INVALID_ARGUMENT, "point is NULL");
    EXPECT_FAIL(shoal_agent_set_planner_goal(w, pa, (shoal_plan_goal_t)5, point, null_id),
                SHOAL_ERR_INVALID_ARGUMENT, "goal must be");
    EXPECT_FAIL(shoal_agent_set_planner_goal(w, pa, SHOAL_PLAN_GOAL_PURSUE, point, gone),
                SHOAL_ERR_STALE_HANDLE, "planner.goal_agent");
    EXPECT_FAIL(shoal_agent_set_planner_goal(w, pa, SHOAL_PLAN_GOAL_PURSUE, point, null_id),
                SHOAL_ERR_INVALID_ARGUMENT, "null handle");
    EXPECT_FAIL(shoal_agent_set_planner_goal(w, pa, SHOAL_PLAN_GOAL_EVADE, NULL, pa),
                SHOAL_ERR_INVALID_ARGUMENT, "itself");
    EXPECT_FAIL(shoal_agent_set_planner_goal(w, plain, SHOAL_PLAN_GOAL_SEEK, point, null_id),
                SHOAL_ERR_INVALID_ARGUMENT, "not a planner agent");
    EXPECT_FAIL(shoal_agent_set_planner_goal(w, gone, SHOAL_PLAN_GOAL_SEEK, point, null_id),
                SHOAL_ERR_STALE_HANDLE, "stale");
    shoal_planner_status_t ps;
    EXPECT_FAIL(shoal_agent_get_planner(w, plain, &ps), SHOAL_ERR_INVALID_ARGUMENT, "not a planner agent");
    EXPECT_FAIL(shoal_agent_get_planner(w, pa, NULL), SHOAL_ERR_INVALID_ARGUMENT, "NULL");

    /* Trim tables: axes against the world, empty control sets, bad fields,
     * a different table while planner agents exist. */
    shoal_trim_spec_t spec = shoal_trim_spec_default(2);
    spec.axes = 2;
    spec.samples[1] = 5;
    spec.max_rate[1] = 1.0f;
    EXPECT_FAIL(shoal_world_set_trim_table(w, &spec), SHOAL_ERR_INVALID_ARGUMENT, "axes must be 1");
    spec = shoal_trim_spec_default(2);
    spec.samples[0] = 0;
    EXPECT_FAIL(shoal_world_set_trim_table(w, &spec), SHOAL_ERR_INVALID_ARGUMENT, "control set is empty");
    spec = shoal_trim_spec_default(2);
    spec.substeps = 0;
    EXPECT_FAIL(shoal_world_set_trim_table(w, &spec), SHOAL_ERR_INVALID_ARGUMENT, "substeps");
    spec = shoal_trim_spec_default(2);
    spec.interval = NAN;
    EXPECT_FAIL(shoal_world_set_trim_table(w, &spec), SHOAL_ERR_INVALID_ARGUMENT, "interval");
    spec = shoal_trim_spec_default(2);
    spec.max_rate[0] = -1.0f;
    EXPECT_FAIL(shoal_world_set_trim_table(w, &spec), SHOAL_ERR_INVALID_ARGUMENT, "max_rate[0]");
    EXPECT_FAIL(shoal_world_set_trim_table(w, NULL), SHOAL_ERR_INVALID_ARGUMENT, "NULL");
    spec = shoal_trim_spec_default(2);
    spec.samples[0] = 9;
    EXPECT_FAIL(shoal_world_set_trim_table(w, &spec), SHOAL_ERR_BUSY,
                "planner agents use the current trim table");
    spec = shoal_trim_spec_default(2);
    cr_assert_eq(shoal_world_set_trim_table(w, &spec), SHOAL_OK, "the same spec is accepted");
    cr_assert_eq(shoal_world_state_hash(w), h);
    EXPECT_FAIL(shoal_world_load_trim_table(w, "/nonexistent/dir/table.trim"), SHOAL_ERR_IO, "cannot open");
    char junk[] = "/tmp/shoal_planner_junkXXXXXX";
    int fd = mkstemp(junk);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "not a trim table at all, not even close....................", 60), 60);
    close(fd);
    EXPECT_FAIL(shoal_world_load_trim_table(w, junk), SHOAL_ERR_PARSE, "not a trim table");
    unlink(junk);

    /* Moving obstacles. */
    const float c[3] = {5, 5, 0}, nan_v[3] = {0, NAN, 0};
    EXPECT_FAIL(shoal_world_add_moving_obstacle(w, c, nan_v, 1.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                "velocity[1] must be finite");
    EXPECT_FAIL(shoal_world_add_moving_obstacle(w, c, NULL, 1.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                "velocity is NULL");
    EXPECT_FAIL(shoal_world_get_obstacle(w, 3, NULL, NULL, NULL), SHOAL_ERR_NOT_FOUND,
                "no obstacle with id 3");
    shoal_world_destroy(w);

    /* A 3D world wants two or three axes. */
    w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    const uint64_t h3 = shoal_world_state_hash(w);
    spec = shoal_trim_spec_default(3);
    spec.axes = 1;
    cr_assert_eq(shoal_world_set_trim_table(w, &spec), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "axes must be 2"), "%s", shoal_world_last_error(w));
    spec = shoal_trim_spec_default(3);
    spec.samples[1] = -3;
    cr_assert_eq(shoal_world_set_trim_table(w, &spec), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "control set is empty"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_state_hash(w), h3);
    shoal_world_destroy(w);
}

Test(planner_world, the_def_round_trips_and_goals_change)
{
    shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_planner_t dflt = shoal_planner_default();
    cr_assert_eq(memcmp(&d.planner, &dflt, sizeof dflt), 0);
    cr_assert_eq(dflt.enabled, 0);
    cr_assert_eq(dflt.strategy, SHOAL_PLAN_ADAPTIVE);
    cr_assert_eq(dflt.goal, SHOAL_PLAN_GOAL_SEEK);
    cr_assert_float_eq(dflt.discount, 0.8f, 1e-7f);
    cr_assert_eq(dflt.max_expansions, 400);
    cr_assert_eq(dflt.time_budget_ms, 0.0f, "no time budget: deterministic by default");
    shoal_agent_t target;
    cr_assert_eq(shoal_agent_add(w, &d, &target), SHOAL_OK);
    d = planner_def(1, 2, 3, 0.5f);
    d.planner.strategy = SHOAL_PLAN_UNIFORM;
    d.planner.goal = SHOAL_PLAN_GOAL_EVADE;
    d.planner.goal_agent = target;
    d.planner.k_skip = 3;
    d.planner.speed = 6.5f;
    d.planner.radius = 0.25f;
    d.planner.max_depth = 5;
    d.planner.time_budget_ms = 2.5f;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_def_t back;
    cr_assert_eq(shoal_agent_get_def(w, id, &back), SHOAL_OK);
    cr_assert_eq(memcmp(&back.planner, &d.planner, sizeof d.planner), 0, "get_def returns the planner part");
    const float point[3] = {9, 8, 7};
    cr_assert_eq(shoal_agent_set_planner_goal(w, id, SHOAL_PLAN_GOAL_SEEK, point, target), SHOAL_OK);
    cr_assert_eq(shoal_agent_get_def(w, id, &back), SHOAL_OK);
    cr_assert_eq(back.planner.goal, SHOAL_PLAN_GOAL_SEEK);
    cr_assert_eq(memcmp(back.planner.goal_point, point, sizeof point), 0);
    cr_assert_eq(back.planner.k_skip, 3, "the rest is kept");
    /* Other setters keep the planner part and its state. */
    step_n(w, 30, DT);
    planner_interval_t before = interval_of(w, id);
    shoal_vehicle_t v = shoal_vehicle_default();
    cr_assert_eq(shoal_agent_set_vehicle(w, id, &v), SHOAL_OK);
    planner_interval_t after = interval_of(w, id);
    cr_assert_eq(memcmp(&before, &after, sizeof before), 0);
    /* The moving obstacle API. */
    const float c[3] = {1, 2, 3}, vel[3] = {0.5f, -1.0f, 2.0f};
    int32_t oid;
    cr_assert_eq(shoal_world_add_moving_obstacle(w, c, vel, 2.0f, &oid), SHOAL_OK);
    step_n(w, 60, DT);
    float oc[3], ov[3], orad;
    cr_assert_eq(shoal_world_get_obstacle(w, oid, oc, ov, &orad), SHOAL_OK);
    cr_assert_float_eq(oc[0], 1.5f, 1e-4f);
    cr_assert_float_eq(oc[1], 1.0f, 1e-4f);
    cr_assert_float_eq(oc[2], 5.0f, 1e-4f);
    cr_assert_eq(memcmp(ov, vel, sizeof vel), 0);
    cr_assert_eq(orad, 2.0f);
    shoal_world_destroy(w);
}

/* ---- 6. trim tables saved and loaded ------------------------------------------ */

static uint64_t run_with_table(int dims, const char* load_path, const shoal_trim_spec_t* spec,
                               const char* save_path)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    if (load_path)
        cr_assert_eq(shoal_world_load_trim_table(w, load_path), SHOAL_OK, "%s", shoal_world_last_error(w));
    else
        cr_assert_eq(shoal_world_set_trim_table(w, spec), SHOAL_OK, "%s", shoal_world_last_error(w));
    if (save_path)
        cr_assert_eq(shoal_world_save_trim_table(w, save_path), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int i = 0; i < 12; ++i) {
        const float c[3] = {20.0f + 9.0f * (float)(i % 4), -15.0f + 10.0f * (float)(i / 4),
                            dims == 3 ? (float)(i % 3) * 4.0f - 4.0f : 0.0f};
        cr_assert_eq(shoal_world_add_obstacle(w, c, 2.0f, NULL), SHOAL_OK);
    }
    for (int i = 0; i < 8; ++i) {
        shoal_agent_def_t d = planner_def(0.0f, -20.0f + 5.0f * (float)i, 0.0f, 0.1f * (float)i);
        d.planner.goal_point[0] = 80.0f;
        d.planner.strategy = (shoal_plan_strategy_t)(i % 3);
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    step_n(w, 240, DT);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

static void round_trip(int dims, shoal_trim_spec_t spec)
{
    char path[] = "/tmp/shoal_trim_roundtripXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    uint64_t built = run_with_table(dims, NULL, &spec, path);
    uint64_t loaded = run_with_table(dims, path, NULL, NULL);
    cr_assert_eq(loaded, built, "%dD: a loaded table runs as the one it was saved from", dims);
    /* A different table does not. */
    shoal_trim_spec_t other = spec;
    other.max_rate[0] *= 0.5f;
    cr_assert_neq(run_with_table(dims, NULL, &other, NULL), built, "the hash sees the table");
    /* A loaded table under agents that use another one: refused. */
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(shoal_world_set_trim_table(w, &other), SHOAL_OK);
    shoal_agent_def_t d = planner_def(0, 0, 0, 0);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    uint64_t h = shoal_world_state_hash(w);
    EXPECT_FAIL(shoal_world_load_trim_table(w, path), SHOAL_ERR_BUSY, "planner agents");
    shoal_world_destroy(w);
    /* A loaded table of the wrong dimensions: refused. */
    w = make_world(dims == 2 ? 3 : 2, 1, SHOAL_BACKEND_SERIAL);
    h = shoal_world_state_hash(w);
    EXPECT_FAIL(shoal_world_load_trim_table(w, path), SHOAL_ERR_INVALID_ARGUMENT, "axes must be");
    shoal_world_destroy(w);
    /* A corrupted file: refused, nothing changes. */
    FILE* f = fopen(path, "r+b");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, 100, SEEK_SET), 0);
    cr_assert_eq(fputc(0x5a, f), 0x5a);
    fclose(f);
    w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    h = shoal_world_state_hash(w);
    EXPECT_FAIL(shoal_world_load_trim_table(w, path), SHOAL_ERR_PARSE, "checksum");
    shoal_world_destroy(w);
    unlink(path);
}

Test(planner_world, trim_tables_round_trip_through_files, .timeout = 60)
{
    shoal_trim_spec_t s2 = shoal_trim_spec_default(2);
    s2.samples[0] = 13;
    s2.max_rate[0] = 1.2f;
    s2.substeps = 30;
    s2.interval = 0.5f;
    round_trip(2, s2);
    round_trip(3, shoal_trim_spec_default(3));
    /* Saving needs a table. */
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(shoal_world_save_trim_table(w, "/tmp/never_written.trim"), SHOAL_ERR_NOT_FOUND);
    shoal_world_destroy(w);
}

/* ---- 7. nothing changes for everyone else ---------------------------------------- */

Test(planner_world, idle_planner_systems_leave_ordinary_agents_and_ground_vehicles_alone)
{
    /* No planner agent: ordinary agents of every kind and ground vehicles
     * among static obstacles hash the same with the planner systems off. */
    uint64_t h[2];
    for (int off = 0; off < 2; ++off) {
        shoal_world_t* w = make_world(3, 2, SHOAL_BACKEND_OPENMP);
        populate_mixed(w, 500, 4);
        for (int i = 0; i < 6; ++i) {
            const float c[3] = {-40.0f + 16.0f * (float)i, 10.0f, 0.0f};
            cr_assert_eq(shoal_world_add_obstacle(w, c, 3.0f, NULL), SHOAL_OK);
        }
        const float path[] = {-50, -50, 0, 0, -40, 0, 50, -50, 0};
        int32_t pid;
        cr_assert_eq(shoal_world_add_path(w, path, 3, 3.0f, &pid), SHOAL_OK);
        for (int i = 0; i < 6; ++i) {
            shoal_agent_def_t d = shoal_agent_default_def();
            d.position[0] = -50.0f + (float)i;
            d.position[1] = -50.0f;
            d.ground.enabled = 1;
            d.ground.follow.path = pid;
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
        }
        if (off) {
            cr_assert_eq(shoal_world_set_system_enabled(w, "planner", 0), SHOAL_OK);
            cr_assert_eq(shoal_world_set_system_enabled(w, "planner_move", 0), SHOAL_OK);
            cr_assert_eq(shoal_world_set_system_enabled(w, "obstacle_move", 0), SHOAL_OK);
        }
        step_n(w, 60, DT);
        h[off] = shoal_world_state_hash(w);
        assert_systems_idle(w, "planner", "obstacle_move");
        shoal_world_destroy(w);
    }
    cr_assert_eq(h[0], h[1]);
}

/* Ordinary agents and ground vehicles move exactly as before when planner
 * agents fly among them in storage (their slots kept by placeholders): the
 * planner systems write only planner rows. Far apart, as in
 * test_ground_world.c, so no neighbor list mixes them. */
static shoal_world_t* shared_world(int with_planners, shoal_agent_t* ids, int n)
{
    shoal_world_t* w = make_shared_torus();
    for (int i = 0; i < n; ++i) {
        shoal_agent_def_t d = shared_ordinary_def(i);
        if (i % 100 == 0) {
            d.ground.enabled = 1;
            d.ground.follow.path = 0;
            d.position[0] = -60.0f + (float)(i / 100);
            d.position[1] = 63.0f;
            d.weights[SHOAL_BEHAVIOR_SEPARATE] = 0.0f;
        }
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK);
        if (i % 50 == 0) { /* planner agents interleaved with the others, flying a circle far away */
            shoal_agent_def_t p = planner_def(-70.0f + (float)(i / 50) * 3.0f, -70.0f, 0, 0);
            p.planner.enabled = with_planners;
            p.planner.goal_point[0] = -65.0f;
            p.planner.goal_point[1] = -72.0f;
            cr_assert_eq(shoal_agent_add(w, &p, NULL), SHOAL_OK);
        }
    }
    step_n(w, 120, DT);
    return w;
}

Test(planner_world, ordinary_agents_move_exactly_as_without_planner_agents, .timeout = 60)
{
    enum { N = 2000 };
    static shoal_agent_t a[N], b[N];
    shoal_world_t* with = shared_world(1, a, N);
    shoal_world_t* without = shared_world(0, b, N);
    for (int i = 0; i < N; ++i) {
        shoal_agent_state_t sa, sb;
        cr_assert_eq(shoal_agent_get_state(with, a[i], &sa), SHOAL_OK);
        cr_assert_eq(shoal_agent_get_state(without, b[i], &sb), SHOAL_OK);
        cr_assert_eq(memcmp(sa.position, sb.position, sizeof sa.position), 0, "agent %d moved otherwise", i);
        cr_assert_eq(memcmp(sa.velocity, sb.velocity, sizeof sa.velocity), 0, "agent %d", i);
        cr_assert_eq(sa.heading, sb.heading, "agent %d", i);
    }
    shoal_world_destroy(with);
    shoal_world_destroy(without);
}

/* From PLANNER_PAR_MIN planner agents on, the step lists its searches, and
 * sums its agents' track pieces, over chunks of the rows in parallel: the
 * same states as the loops on one thread, for every backend and thread
 * count (the switch par_min moves the threshold for the test). An agent
 * added later with a far larger budget than the others still searches (the
 * step's memory is sized from the largest budget of any agent, found again
 * when rows are written or their count changes). */
static uint64_t many_planners_hash(int threads, shoal_backend_t backend, int32_t par_min)
{
    shoal_world_t* w = make_world(2, threads, backend);
    enum { N = 600 };
    for (int i = 0; i < N; ++i) {
        shoal_agent_def_t d = planner_def(rng_range(31, (uint64_t)i, 0, 0, -150.0f, 150.0f),
                                          rng_range(31, (uint64_t)i, 0, 1, -150.0f, 150.0f), 0.0f,
                                          rng_range(31, (uint64_t)i, 0, 2, -3.0f, 3.0f));
        d.planner.strategy = (shoal_plan_strategy_t)(i % 3);
        d.planner.max_expansions = 8 + i % 5;
        d.planner.goal = SHOAL_PLAN_GOAL_SEEK;
        d.planner.goal_point[0] = rng_range(31, (uint64_t)i, 1, 0, -150.0f, 150.0f);
        d.planner.goal_point[1] = rng_range(31, (uint64_t)i, 1, 1, -150.0f, 150.0f);
        d.planner.avoid_collisions = i % 2 == 0; /* those read the agents' scene */
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    planner_data((world_t*)w)->par_min = par_min;
    step_n(w, 30, DT);
    shoal_agent_def_t big = planner_def(0, 0, 0, 0);
    big.planner.strategy = SHOAL_PLAN_ADAPTIVE;
    big.planner.max_expansions = 2000;
    big.planner.goal = SHOAL_PLAN_GOAL_SEEK;
    big.planner.goal_point[0] = 100.0f;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &big, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    step_n(w, 70, DT);
    cr_assert_geq(status_of(w, id).searches, 1);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

Test(planner_world, the_parallel_lists_are_the_serial_ones, .timeout = 240)
{
    uint64_t ref = many_planners_hash(1, SHOAL_BACKEND_SERIAL, INT32_MAX);
    cr_assert_eq(many_planners_hash(1, SHOAL_BACKEND_SERIAL, 16), ref, "serial backend, chunks");
    cr_assert_eq(many_planners_hash(2, SHOAL_BACKEND_OPENMP, 16), ref, "openmp, 2 threads");
    cr_assert_eq(many_planners_hash(3, SHOAL_BACKEND_OPENMP, 16), ref, "openmp, 3 threads");
    cr_assert_eq(many_planners_hash(3, SHOAL_BACKEND_OPENMP, 0), ref,
                 "openmp, 3 threads, the default threshold");
}
