/* Crowd agents (shoal/crowd.h): ORCA over the spatial hash, then the
 * kinematic move. Agents that cross keep their distance and arrive, the
 * avoidance split follows `responsibility`, obstacles are kept out of,
 * results are the same for any thread count, and bad parameters are
 * refused with the world unchanged. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <shoal/scenario.h>
#include <shoal/snapshot.h>

#include "scenes/crowd_scene.h"
#include "ecs/world.h"
#include "modules/contacts/contacts.h"
#include "modules/crowd/crowd.h"
#include "simd/lanes.h"
#include "support.h"

static shoal_agent_def_t crowd_def(float x, float y, float tx, float ty)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("rvo2", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    d.position[0] = x;
    d.position[1] = y;
    d.target[0] = tx;
    d.target[1] = ty;
    d.weights[SHOAL_BEHAVIOR_ARRIVE] = 1.0f; /* V = goal - x, capped at the preferred speed */
    d.arrive_gain = 1.0f;
    return d;
}

/* Smallest center distance over all pairs, divided by the sum of radii. */
static float min_pair_ratio(shoal_world_t* w, int n)
{
    static float pos[3 * 2048];
    cr_assert_leq(n, 2048);
    const float rad = 1.5f; /* the "rvo2" preset's radius */
    shoal_agent_batch_t b = {.positions = pos};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
    float best = INFINITY;
    for (int i = 0; i < got; ++i)
        for (int j = i + 1; j < got; ++j) {
            float dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1],
                  dz = pos[3 * i + 2] - pos[3 * j + 2];
            float r = sqrtf(dx * dx + dy * dy + dz * dz) / (2.0f * rad);
            if (r < best) best = r;
        }
    return best;
}

/* n agents on a circle, each to its antipode (RVO2's Circle example). */
static shoal_world_t* circle(int dims, int n, int threads, shoal_agent_t* ids)
{
    shoal_world_t* w = make_world(dims, threads, SHOAL_BACKEND_OPENMP);
    float R = 40.0f;
    for (int i = 0; i < n; ++i) {
        /* not quite even: a perfectly even circle is ORCA's known stall */
        float a = 2.0f * 3.14159265f * (float)i / (float)n + 0.2f * sinf(7.0f * (float)i);
        shoal_agent_def_t d = crowd_def(R * cosf(a), R * sinf(a), -R * cosf(a), -R * sinf(a));
        if (dims == 3) { /* tilt the circle out of the plane */
            d.position[2] = 0.3f * d.position[1];
            d.target[2] = -d.position[2];
        }
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

static void run_circle(int dims)
{
    enum { n = 24 };
    shoal_agent_t ids[n];
    shoal_world_t* w = circle(dims, n, 1, ids);
    float worst = INFINITY;
    /* 80 m at 1 m/s is 320 steps alone; the center holds some up */
    for (int s = 0; s < 800; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        float r = min_pair_ratio(w, n);
        if (r < worst) worst = r;
    }
    /* ORCA alone, stepped at dt, lets pairs graze (RVO2 on this scene: 0.987
     * of the sum of radii at worst); the contact pass removes the rest. */
    cr_expect_geq(worst, 0.99f, "%dD: two agents came within %.3f of the sum of radii", dims, (double)worst);
    int arrived = 0;
    for (int i = 0; i < n; ++i) {
        shoal_agent_state_t st;
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_state(w, ids[i], &st), SHOAL_OK);
        cr_assert_eq(shoal_agent_get_def(w, ids[i], &d), SHOAL_OK);
        float e = hypotf(st.position[0] - d.target[0], st.position[1] - d.target[1]);
        arrived += e < 1.5f;
    }
    cr_expect_eq(arrived, n, "%dD: %d of %d agents reached their antipode", dims, arrived, n);
    shoal_world_destroy(w);
}

Test(crowd, circle_2d_keeps_apart_and_arrives) { run_circle(2); }
Test(crowd, circle_3d_keeps_apart_and_arrives) { run_circle(3); }

/* RVO2's Circle at its density (100 agents, radius 80 m): the center
 * jams, ORCA alone lets agents overlap by a fifth of a radius there (RVO2
 * too), the contact pass (its Jacobi iterations, then its serial sweeps)
 * keeps every pair apart, with one result on 1 and 2 threads. */
Test(crowd, dense_center_never_overlaps)
{
    enum { n = 100 };
    uint64_t hashes[2];
    for (int t = 1; t <= 2; ++t) {
        shoal_world_t* w = make_world(2, t, SHOAL_BACKEND_OPENMP);
        for (int i = 0; i < n; ++i) {
            float a = 2.0f * 3.14159265f * (float)i / (float)n, R = 80.0f;
            shoal_agent_def_t d = crowd_def(R * cosf(a), R * sinf(a), -R * cosf(a), -R * sinf(a));
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
        }
        float worst = INFINITY;
        for (int s = 0; s < 500; ++s) {
            cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
            float r = min_pair_ratio(w, n);
            worst = r < worst ? r : worst;
        }
        cr_expect_geq(worst, 0.99f, "%d threads: a pair came within %.4f of the sum of radii", t,
                      (double)worst);
        hashes[t - 1] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    cr_expect_eq(hashes[0], hashes[1]);
}

/* A user system that teleports a crowd agent (between the orca pass and
 * the contact pass when it runs in the control stage). */
typedef struct jump {
    shoal_agent_t who;
    float to[3];
} jump_t;

static shoal_status_t jump_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    const jump_t* j = (const jump_t*)ctx;
    const float still[3] = {0.0f, 0.0f, 0.0f};
    return shoal_agent_teleport(w, j->who, j->to, still, 0.0f, NULL);
}

/* The contact pass's first check passes over crowd agents that were too far
 * from their candidates to touch them when the orca pass listed them, and
 * only crowd_move moved anyone since. A user system can move an agent in
 * between: then every row is checked, and a teleported agent is pushed out
 * of the one it landed on. Two standing agents 10 m apart (radius 1.5, in
 * each other's lists); one is teleported 0.5 m from the other. */
Test(crowd, a_teleport_inside_the_step_is_pushed_out)
{
    for (int t = 1; t <= 2; ++t) {
        shoal_world_t* w = make_world(2, t, SHOAL_BACKEND_OPENMP);
        shoal_agent_def_t a = crowd_def(0.0f, 0.0f, 0.0f, 0.0f), b = crowd_def(10.0f, 0.0f, 10.0f, 0.0f);
        shoal_agent_t ia, ib;
        cr_assert_eq(shoal_agent_add(w, &a, &ia), SHOAL_OK);
        cr_assert_eq(shoal_agent_add(w, &b, &ib), SHOAL_OK);
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        jump_t j = {ia, {10.5f, 0.0f, 0.0f}};
        cr_assert_eq(shoal_world_add_system(w, "jump", SHOAL_STAGE_CONTROL, jump_system, &j), SHOAL_OK);
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        float r = min_pair_ratio(w, 2);
        cr_expect_geq(r, 0.99f, "%d threads: the teleported agent is at %.4f of the sum of radii", t,
                      (double)r);
        shoal_world_destroy(w);
    }
}

/* The same in 3D, on the benchmark's sphere (scenes/crowd_scene.h: 2000
 * agents on a sphere, each bound for its antipode). In the central jam a
 * sphere has more touching neighbors than a 2D disc can (up to 12): with
 * only the 8 nearest kept for the contact pass, a pair left off both lists
 * came within 0.976 of the sum of radii at this seed by step 200. */
Test(crowd, dense_center_3d_never_overlaps)
{
    enum { n = 2000 };
    static float pos[3 * n], goal[3 * n];
    crowd_layout(CROWD_CIRCLE, 3, n, pos, goal);
    shoal_world_def_t wd = shoal_world_default_def();
    wd.dimensions = 3;
    wd.thread_count = 2;
    wd.seed = 3;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&wd, &w, NULL), SHOAL_OK);
    shoal_agent_def_t d = crowd_def(0.0f, 0.0f, 0.0f, 0.0f);
    shoal_agent_arrays_t arrays;
    memset(&arrays, 0, sizeof arrays);
    arrays.positions = pos;
    arrays.targets = goal;
    cr_assert_eq(shoal_agents_add(w, &d, &arrays, n, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    float worst = INFINITY;
    for (int s = 0; s < 200; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        if (s < 100) continue; /* the sphere closes in on its center */
        float r = min_pair_ratio(w, n);
        worst = r < worst ? r : worst;
    }
    cr_expect_geq(worst, 0.99f, "a pair came within %.4f of the sum of radii", (double)worst);
    shoal_world_destroy(w);
}

Test(crowd, same_hash_on_1_2_3_threads)
{
    enum { n = 200 };
    uint64_t hashes[3];
    for (int t = 1; t <= 3; ++t) {
        shoal_agent_t ids[n];
        shoal_world_t* w = circle(2, n, t, ids);
        for (int s = 0; s < 60; ++s) cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK);
        hashes[t - 1] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    cr_expect_eq(hashes[0], hashes[1]);
    cr_expect_eq(hashes[0], hashes[2]);
}

/* Head-on along x: with responsibility r for the left agent and 1 - r
 * for the right one, the sideways dodge splits in that ratio. */
static void dodge(float resp_a, float resp_b, float* side_a, float* side_b)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t a = crowd_def(-10.0f, 0.0f, 10.0f, 0.0f), b = crowd_def(10.0f, 0.0f, -10.0f, 0.0f);
    a.crowd.responsibility = resp_a;
    b.crowd.responsibility = resp_b;
    shoal_agent_t ia, ib;
    cr_assert_eq(shoal_agent_add(w, &a, &ia), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(w, &b, &ib), SHOAL_OK);
    *side_a = *side_b = 0.0f;
    for (int s = 0; s < 120; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK);
        shoal_agent_state_t sa, sb;
        shoal_agent_get_state(w, ia, &sa);
        shoal_agent_get_state(w, ib, &sb);
        if (fabsf(sa.position[1]) > *side_a) *side_a = fabsf(sa.position[1]);
        if (fabsf(sb.position[1]) > *side_b) *side_b = fabsf(sb.position[1]);
        float dx = sa.position[0] - sb.position[0], dy = sa.position[1] - sb.position[1];
        cr_assert_geq(sqrtf(dx * dx + dy * dy), 0.99f * 3.0f, "step %d: the two overlap", s);
    }
    shoal_world_destroy(w);
}

Test(crowd, responsibility_splits_the_dodge)
{
    float a, b;
    dodge(0.5f, 0.5f, &a, &b);
    cr_expect_gt(a, 0.5f);
    cr_expect_lt(fabsf(a - b), 0.05f * (a + b), "reciprocal: %.3f and %.3f", (double)a, (double)b);
    dodge(1.0f, 0.0f, &a, &b);
    cr_expect_gt(a, 1.0f, "the yielding agent dodges: %.3f", (double)a);
    cr_expect_lt(b, 0.1f * a, "the other keeps its line: %.3f against %.3f", (double)b, (double)a);
}

Test(crowd, obstacles_are_kept_out_of)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float c[3] = {0.0f, 0.2f, 0.0f};
    cr_assert_eq(shoal_world_add_obstacle(w, c, 3.0f, NULL), SHOAL_OK);
    shoal_agent_def_t d = crowd_def(-20.0f, 0.0f, 20.0f, 0.0f);
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    float closest = INFINITY;
    shoal_agent_state_t st;
    for (int s = 0; s < 200; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK);
        shoal_agent_get_state(w, id, &st);
        float dist = hypotf(st.position[0] - c[0], st.position[1] - c[1]);
        if (dist < closest) closest = dist;
    }
    cr_expect_geq(closest, 0.99f * (3.0f + 1.5f), "came within %.3f m of the obstacle's center",
                  (double)closest);
    cr_expect_lt(fabsf(st.position[0] - 20.0f) + fabsf(st.position[1]), 1.5f, "and still arrived");
    shoal_world_destroy(w);
}

Test(crowd, bad_parameters_are_refused)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = crowd_def(0, 0, 1, 0);
    d.crowd.neighbor_distance = 0.0f;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "crowd.neighbor_distance") != NULL, "%s",
              shoal_world_last_error(w));
    d = crowd_def(0, 0, 1, 0);
    d.crowd.responsibility = 1.5f;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "crowd.responsibility") != NULL, "%s",
              shoal_world_last_error(w));
    d = crowd_def(0, 0, 1, 0);
    d.crowd.max_neighbors = 65;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    d = crowd_def(0, 0, 1, 0);
    d.crowd.time_horizon = NAN;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    d = crowd_def(0, 0, 1, 0);
    d.vehicle.radius = 0.0f;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "vehicle.radius") != NULL, "%s", shoal_world_last_error(w));
    d = crowd_def(0, 0, 1, 0);
    d.ground.enabled = 1;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "ground vehicle") != NULL, "%s", shoal_world_last_error(w));
    d = crowd_def(0, 0, 1, 0);
    d.crowd.enabled = 2;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    d = crowd_def(0, 0, 1, 0);
    d.crowd.side_preference = 1.5f;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "crowd.side_preference must be in [0, 1]") != NULL, "%s",
              shoal_world_last_error(w));
    d.crowd.side_preference = -0.1f;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_agent_count(w), 0, "nothing was added");
    shoal_crowd_t c = shoal_crowd_default();
    shoal_vehicle_t v = shoal_vehicle_default();
    cr_expect_eq(shoal_crowd_preset("nope", &c, &v, NULL), SHOAL_ERR_NOT_FOUND);
    cr_expect_eq(shoal_crowd_preset("pedestrian", NULL, &v, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(c.enabled, 0, "a failed preset leaves its outputs alone");
    shoal_world_destroy(w);
}

Test(crowd, snapshot_round_trip_continues_bit_for_bit)
{
    enum { n = 40 };
    shoal_agent_t ids[n];
    shoal_world_t* w = circle(2, n, 2, ids);
    for (int s = 0; s < 20; ++s) cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* v = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &v, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    for (int s = 0; s < 20; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK);
        cr_assert_eq(shoal_world_step(v, 0.25f), SHOAL_OK);
    }
    cr_expect_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(w, ids[3], &d), SHOAL_OK);
    cr_expect_eq(d.crowd.enabled, 1);
    cr_expect_eq(d.crowd.neighbor_distance, 15.0f);
    free(buf);
    shoal_world_destroy(v);
    shoal_world_destroy(w);
}

Test(crowd, scenario_crowd_key_and_preset)
{
    const char* text = "{\"groups\": [{\"count\": 10, \"spawn\": {\"shape\": \"disc\", \"radius\": 5},"
                       " \"vehicle\": {\"radius\": 0.25},"
                       " \"behaviors\": {\"arrive\": {\"weight\": 1}}, \"target\": [10, 0],"
                       " \"crowd\": {\"preset\": \"pedestrian\", \"time_horizon\": 3}}]}";
    shoal_scenario_t* s = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_string(text, strlen(text), "crowd.json", &s, &err), SHOAL_OK, "%s",
                 err.message);
    shoal_world_def_t def = shoal_scenario_world_def(s);
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_t id;
    shoal_agent_batch_t b = {.ids = &id};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 1, &got), SHOAL_OK);
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(w, id, &d), SHOAL_OK);
    cr_expect_eq(d.crowd.enabled, 1);
    cr_expect_eq(d.crowd.time_horizon, 3.0f, "the group's value over the preset's");
    cr_expect_eq(d.crowd.preferred_speed, 1.34f, "the preset's");
    cr_expect_eq(d.vehicle.radius, 0.25f, "the vehicle object's radius over the preset's");
    cr_expect_eq(d.vehicle.max_speed, 2.0f, "the preset's max speed");
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    const char* bad = "{\"groups\": [{\"count\": 1, \"crowd\": {\"preset\": \"walker\"}}]}";
    cr_expect_eq(shoal_scenario_load_string(bad, strlen(bad), "bad.json", &s, &err), SHOAL_ERR_PARSE);
    cr_expect(strstr(err.message, "groups[0].crowd.preset") != NULL, "%s", err.message);
}

/* ---- walls ---------------------------------------------------------------- */

static shoal_agent_def_t pedestrian(float x, float y, float tx, float ty)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    d.position[0] = x;
    d.position[1] = y;
    d.target[0] = tx;
    d.target[1] = ty;
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    return d;
}

/* Two pedestrians walking at each other on one line: with the preset's
 * side preference each steps to its own right (they pass left side to
 * left side); without it ORCA picks a side from the jitter alone, and each
 * turns away later. */
static void head_on(float side, float y_out[2])
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_t ids[2];
    for (int k = 0; k < 2; ++k) {
        shoal_agent_def_t d = k ? pedestrian(8.0f, 0.0f, -20.0f, 0.0f) : pedestrian(-8.0f, 0.0f, 20.0f, 0.0f);
        d.crowd.side_preference = side;
        cr_assert_eq(shoal_agent_add(w, &d, &ids[k]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int s = 0; s < 55; ++s) cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK); /* 5.5 s: about to meet */
    for (int k = 0; k < 2; ++k) {
        shoal_agent_state_t st;
        cr_assert_eq(shoal_agent_get_state(w, ids[k], &st), SHOAL_OK);
        y_out[k] = st.position[1];
    }
    shoal_world_destroy(w);
}

Test(crowd, side_preference_passes_on_the_right)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    cr_expect_eq(d.crowd.side_preference, 1.0f, "the pedestrian preset keeps right");
    cr_expect_eq(d.crowd.time_gap, 1.1f, "and keeps a time gap of 1.1 s");
    cr_expect_eq(d.crowd.time_horizon_walls, 0.3f, "and brushes past walls (0.3 s)");
    cr_assert_eq(shoal_crowd_preset("rvo2", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    cr_expect_eq(d.crowd.side_preference, 0.0f, "the rvo2 preset is ORCA alone");
    float y[2];
    head_on(1.0f, y);
    /* eastbound's right is -y, westbound's +y */
    cr_expect_lt(y[0], -0.1f, "the eastbound walker is at y = %.3f", (double)y[0]);
    cr_expect_gt(y[1], 0.1f, "the westbound walker is at y = %.3f", (double)y[1]);
    float y0[2];
    head_on(0.0f, y0);
    cr_expect_lt(fabsf(y0[0]) + fabsf(y0[1]), fabsf(y[0]) + fabsf(y[1]),
                 "without it they step aside less early");
}

Test(crowd, bad_walls_are_refused_and_change_nothing)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float ok[] = {0, 0, 1, 0, 1, 1};
    cr_assert_eq(shoal_world_add_wall(w, ok, 3, 1, NULL), SHOAL_OK);
    uint64_t h = shoal_world_state_hash(w);
    const float same[] = {0, 0, 2, 0, 2, 0};
    int32_t id = 7;
    cr_expect_eq(shoal_world_add_wall(w, same, 3, 0, &id), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "zero-length") != NULL, "%s", shoal_world_last_error(w));
    cr_expect_eq(id, -1);
    const float loop[] = {0, 0, 2, 0, 0, 0};
    cr_expect_eq(shoal_world_add_wall(w, loop, 3, 1, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                 "the closing segment");
    const float bad[] = {0, 0, NAN, 1};
    cr_expect_eq(shoal_world_add_wall(w, bad, 2, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "points[1]") != NULL, "%s", shoal_world_last_error(w));
    const float far[] = {0, 0, 2e18f, 1};
    cr_expect_eq(shoal_world_add_wall(w, far, 2, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_add_wall(w, ok, 1, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_add_wall(w, ok, 2, 1, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                 "a closed wall needs 3");
    cr_expect_eq(shoal_world_add_wall(w, ok, SHOAL_MAX_WALL_POINTS + 1, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_add_wall(w, NULL, 2, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_add_wall(w, ok, 2, 2, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_remove_wall(w, 1), SHOAL_ERR_NOT_FOUND);
    cr_expect_eq(shoal_world_wall_count(w), 1);
    cr_expect_eq(shoal_world_state_hash(w), h, "failed calls changed the world");
    int32_t segs = 0;
    float out[12];
    cr_assert_eq(shoal_world_wall_segments(w, out, 3, &segs), SHOAL_OK);
    cr_expect_eq(segs, 3, "a closed triangle has three segments");
    cr_expect(out[8] == 1.0f && out[9] == 1.0f && out[10] == 0.0f && out[11] == 0.0f, "the closing one");
    cr_assert_eq(shoal_world_remove_wall(w, 0), SHOAL_OK);
    cr_expect_eq(shoal_world_wall_count(w), 0);
    cr_expect_neq(shoal_world_state_hash(w), h);
    shoal_world_destroy(w);
    shoal_world_t* w3 = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    cr_expect_eq(shoal_world_add_wall(w3, ok, 2, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w3), "2D") != NULL, "%s", shoal_world_last_error(w3));
    shoal_world_destroy(w3);
}

/* Pedestrians seeking a point behind a long wall never cross it, with
 * ORCA's wall constraints and the contact pass together. */
Test(crowd, nobody_crosses_a_wall)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    const float wall[] = {0, -20, 0, 20};
    cr_assert_eq(shoal_world_add_wall(w, wall, 2, 0, NULL), SHOAL_OK);
    enum { n = 60 };
    for (int i = 0; i < n; ++i) {
        shoal_agent_def_t d = pedestrian(-3.0f - 0.5f * (float)(i % 6), -5.0f + (float)(i / 6), 10.0f, 0.0f);
        d.vehicle.max_speed = 4.0f; /* fast, to tempt a step across */
        d.crowd.preferred_speed = 4.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    float pos[3 * n];
    shoal_agent_batch_t b = {.positions = pos};
    float worst = -INFINITY;
    for (int s = 0; s < 300; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
        int32_t got = 0;
        cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
        for (int i = 0; i < got; ++i) worst = pos[3 * i] > worst ? pos[3 * i] : worst;
    }
    cr_expect_leq(worst, -0.2f * 0.99f, "an agent's center reached x = %.4f (the wall is at 0, radius 0.2)",
                  (double)worst);
    shoal_world_destroy(w);
}

/* A crowd pressed into one side of a closed 5 m box at 5.8 agents/m^2
 * (area fraction 0.73): no pair overlaps past the tolerance, nobody
 * leaves the box, on 1 and 2 threads alike. */
Test(crowd, compressed_crowd_in_a_box)
{
    uint64_t hashes[2];
    for (int t = 1; t <= 2; ++t) {
        shoal_world_t* w = make_world(2, t, SHOAL_BACKEND_OPENMP);
        const float box[] = {0, 0, 5, 0, 5, 5, 0, 5};
        cr_assert_eq(shoal_world_add_wall(w, box, 4, 1, NULL), SHOAL_OK);
        enum { side = 12, n = side * side };
        for (int i = 0; i < n; ++i) {
            float x = 0.21f + (float)(i % side) * (4.58f / (side - 1));
            float y = 0.21f + (float)(i / side) * (4.58f / (side - 1));
            shoal_agent_def_t d = pedestrian(x, y, 100.0f, 2.5f);
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
        float pos[3 * n];
        shoal_agent_batch_t b = {.positions = pos};
        float worst_pair = INFINITY, worst_out = 0.0f;
        for (int s = 0; s < 200; ++s) {
            cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
            int32_t got = 0;
            cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
            for (int i = 0; i < got; ++i) {
                float x = pos[3 * i], y = pos[3 * i + 1];
                float out = fmaxf(fmaxf(0.2f - x, x - 4.8f), fmaxf(0.2f - y, y - 4.8f));
                worst_out = out > worst_out ? out : worst_out;
                for (int j = i + 1; j < got; ++j) {
                    float d = hypotf(x - pos[3 * j], y - pos[3 * j + 1]) / 0.4f;
                    worst_pair = d < worst_pair ? d : worst_pair;
                }
            }
        }
        cr_expect_geq(worst_pair, 0.99f, "%d threads: a pair at %.4f of the radii sum", t,
                      (double)worst_pair);
        cr_expect_leq(worst_out, 0.01f * 0.2f, "%d threads: an agent %.4f m into a wall", t,
                      (double)worst_out);
        hashes[t - 1] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    cr_expect_eq(hashes[0], hashes[1]);
}

Test(crowd, walls_in_snapshots_and_scenarios)
{
    const char* text = "{\"walls\": [{\"points\": [[-5, -5], [5, -5], [5, 5], [-5, 5]], \"closed\": true},"
                       " {\"points\": [[0, -3], [0, 3]]}],"
                       " \"groups\": [{\"count\": 20, \"spawn\": {\"shape\": \"box\", \"center\": [-2.5, 0], "
                       "\"size\": [3, 8]},"
                       " \"behaviors\": {\"seek\": {\"weight\": 1}}, \"target\": [3, 0], \"crowd\": "
                       "{\"preset\": \"pedestrian\"}}]}";
    shoal_scenario_t* s = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_string(text, strlen(text), "walls.json", &s, &err), SHOAL_OK, "%s",
                 err.message);
    shoal_world_def_t def = shoal_scenario_world_def(s);
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_wall_count(w), 2);
    for (int k = 0; k < 30; ++k) cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* v = NULL;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &v, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_world_wall_count(v), 2);
    for (int k = 0; k < 30; ++k) {
        cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK);
        cr_assert_eq(shoal_world_step(v, 0.1f), SHOAL_OK);
    }
    cr_expect_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    free(buf);
    shoal_world_destroy(v);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    const char* zero = "{\"walls\": [{\"points\": [[1, 1], [1, 1]]}], \"groups\": [{\"count\": 1}]}";
    cr_assert_eq(shoal_scenario_load_string(zero, strlen(zero), "zero.json", &s, &err), SHOAL_OK, "%s",
                 err.message);
    def = shoal_scenario_world_def(s);
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    cr_expect_eq(shoal_scenario_populate(s, w), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "zero-length") != NULL, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_wall_count(w), 0, "the failed populate added no wall");
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
    const char* three =
        "{\"dimensions\": 3, \"walls\": [{\"points\": [[0, 0], [1, 1]]}], \"groups\": [{\"count\": 1}]}";
    cr_expect_eq(shoal_scenario_load_string(three, strlen(three), "3d.json", &s, &err), SHOAL_ERR_PARSE);
    cr_expect(strstr(err.message, "walls") != NULL, "%s", err.message);
}

/* crowd.time_gap: a follower keeps time_gap seconds of free walk to the
 * neighbor ahead that walks its way (the distance less 0.85 of the sum of
 * radii); one coming the other way or crossing its way does not slow it
 * (ORCA steers round it instead), and a walker ahead off its line by more
 * than the sum of radii does not either. */
Test(crowd, time_gap_slows_a_follower_only)
{
    for (int oncoming = 0; oncoming <= 3; ++oncoming) {
        shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        shoal_agent_def_t lead = pedestrian(0.9f, 0.0f, 100.0f, 0.0f);
        lead.velocity[0] = 1.34f;
        if (oncoming == 1) { /* walks toward the follower, off its line by 0.1 m */
            lead.target[0] = -100.0f;
            lead.velocity[0] = -1.34f;
            lead.position[1] = 0.1f;
        } else if (oncoming == 2) { /* crosses the follower's way, a little forward */
            lead.target[0] = 23.0f;
            lead.target[1] = 100.0f;
            lead.velocity[0] = 0.3f;
            lead.velocity[1] = 1.3f;
        } else if (oncoming == 3) { /* walks its way 0.6 m ahead, off its line by 0.45 m */
            lead.position[0] = 0.6f;
            lead.position[1] = 0.45f;
            lead.target[1] = 0.45f;
        }
        shoal_agent_def_t follower = pedestrian(0.0f, 0.0f, 100.0f, 0.0f);
        follower.velocity[0] = 1.34f;
        follower.crowd.time_gap = 0.5f;
        shoal_agent_t a, b;
        cr_assert_eq(shoal_agent_add(w, &lead, &a), SHOAL_OK);
        cr_assert_eq(shoal_agent_add(w, &follower, &b), SHOAL_OK);
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
        shoal_agent_state_t st;
        shoal_agent_get_state(w, b, &st);
        float speed = hypotf(st.velocity[0], st.velocity[1]);
        if (oncoming)
            cr_expect_gt(speed, 1.1f, "case %d does not cap the speed: %.3f m/s", oncoming, (double)speed);
        else /* free walk 0.9 - 0.85 x 0.42 = 0.543 m over 0.5 s: 1.086 m/s */
            cr_expect(fabsf(speed - 1.086f) < 0.02f, "follower at %.3f m/s, expected 1.086", (double)speed);
        shoal_world_destroy(w);
    }
}

/* A walker held up by a slower one ahead looks for a freer way and passes
 * it when there is room (a 4 m corridor), from straight behind and from a
 * little off its line; in a corridor too narrow to pass (0.9 m) it follows
 * at the slower one's pace without touching it. */
Test(crowd, a_faster_walker_overtakes_when_there_is_room)
{
    for (int narrow = 0; narrow <= 1; ++narrow)
        for (int off = 0; off <= 2; ++off) {
            shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
            const float half = narrow ? 0.45f : 2.0f;
            const float lo[4] = {-5.0f, -half, 200.0f, -half}, hi[4] = {-5.0f, half, 200.0f, half};
            cr_assert_eq(shoal_world_add_wall(w, lo, 2, 0, NULL), SHOAL_OK);
            cr_assert_eq(shoal_world_add_wall(w, hi, 2, 0, NULL), SHOAL_OK);
            shoal_agent_def_t slow = pedestrian(2.0f, 0.0f, 300.0f, 0.0f);
            slow.crowd.preferred_speed = 0.6f;
            shoal_agent_def_t fast = pedestrian(0.0f, 0.05f * (float)off, 300.0f, 0.05f * (float)off);
            shoal_agent_t a, b;
            cr_assert_eq(shoal_agent_add(w, &slow, &a), SHOAL_OK);
            cr_assert_eq(shoal_agent_add(w, &fast, &b), SHOAL_OK);
            float passed_at = -1.0f, closest = INFINITY;
            for (int k = 1; k <= 600 && passed_at < 0.0f; ++k) {
                cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
                shoal_agent_state_t sa, sb;
                shoal_agent_get_state(w, a, &sa);
                shoal_agent_get_state(w, b, &sb);
                closest =
                    fminf(closest, hypotf(sb.position[0] - sa.position[0], sb.position[1] - sa.position[1]));
                if (sb.position[0] > sa.position[0] + 0.5f) passed_at = 0.05f * (float)k;
            }
            if (narrow) {
                cr_expect_lt(passed_at, 0.0f, "0.9 m corridor, offset %d: passed at %.1f s", off,
                             (double)passed_at);
                cr_expect_geq(closest, 0.99f * 0.4f, "0.9 m corridor: closest %.3f m", (double)closest);
            } else {
                cr_expect_gt(passed_at, 0.0f, "offset %d: never passed in 30 s", off);
                cr_expect_lt(passed_at, 10.0f, "offset %d: passed only at %.1f s", off, (double)passed_at);
            }
            shoal_world_destroy(w);
        }
}

/* Two walkers converging on one point from either side, side by side: the
 * one ahead along their common way is the other's leader, not both each
 * other's, so neither is held at the floor speed. */
Test(crowd, converging_walkers_are_not_each_others_leaders)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t l = pedestrian(0.0f, 0.21f, 10.0f, 0.0f), r = pedestrian(0.02f, -0.21f, 10.0f, 0.0f);
    shoal_agent_t a, b;
    cr_assert_eq(shoal_agent_add(w, &l, &a), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(w, &r, &b), SHOAL_OK);
    float fastest = 0.0f;
    for (int k = 0; k < 10; ++k) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
        shoal_agent_state_t sa, sb;
        shoal_agent_get_state(w, a, &sa);
        shoal_agent_get_state(w, b, &sb);
        fastest = fmaxf(
            fastest, fmaxf(hypotf(sa.velocity[0], sa.velocity[1]), hypotf(sb.velocity[0], sb.velocity[1])));
    }
    cr_expect_gt(fastest, 0.5f, "both held: the faster walks %.3f m/s", (double)fastest);
    shoal_world_destroy(w);
}

/* Single file on a ring (a torus 26 m long, walls 0.5 m apart): the mean
 * speed at each density fits the measured speed-headway line 1/rho = a +
 * b v (Seyfried, Steffen, Klingsch and Boltes, "The fundamental diagram of
 * pedestrian movement revisited", 2005: a about 0.36 m, b about 1.06 s)
 * with a in 0.3-0.45 m and b in 0.9-1.3 s, on two seeds. */
Test(crowd, single_file_fits_the_measured_speed_headway_line, .timeout = 120)
{
    const float L = 26.0f;
    const int counts[4] = {14, 25, 34, 45};
    for (uint64_t seed = 1; seed <= 2; ++seed) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int c = 0; c < 4; ++c) {
            shoal_world_def_t def = shoal_world_default_def();
            def.dimensions = 2;
            def.thread_count = 1;
            def.seed = seed;
            def.wrap = 1;
            def.bounds_min[0] = 0.0f;
            def.bounds_min[1] = -1.0f;
            def.bounds_max[0] = L;
            def.bounds_max[1] = 1.5f;
            shoal_world_t* w = NULL;
            cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
            const float lo[4] = {0.0f, 0.0f, L, 0.0f}, hi[4] = {0.0f, 0.5f, L, 0.5f};
            cr_assert_eq(shoal_world_add_wall(w, lo, 2, 0, NULL), SHOAL_OK);
            cr_assert_eq(shoal_world_add_wall(w, hi, 2, 0, NULL), SHOAL_OK);
            const int n = counts[c];
            for (int i = 0; i < n; ++i) {
                /* evenly spaced, each nudged by up to 0.15 of the spacing */
                float jitter =
                    0.15f * (float)(((i * 2654435761u + (uint32_t)seed * 40503u) >> 8) % 1000) / 1000.0f;
                shoal_agent_def_t d = pedestrian(((float)i + jitter) * L / (float)n, 0.25f, 0.0f, 0.25f);
                d.weights[SHOAL_BEHAVIOR_SEEK] = 0.0f;
                d.weights[SHOAL_BEHAVIOR_FLEE] = 1.0f;
                d.threat[0] = -1e7f;
                d.threat[1] = 0.25f;
                cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
            }
            float vel[3 * 64];
            shoal_agent_batch_t b = {.velocities = vel};
            double sum = 0.0;
            long samples = 0;
            for (int k = 0; k < 1000; ++k) { /* 20 s to settle, 30 s measured */
                cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
                if (k < 400) continue;
                int32_t got = 0;
                shoal_world_read_agents(w, &b, 64, &got);
                for (int i = 0; i < got; ++i) sum += vel[3 * i];
                samples += got;
            }
            double v = sum / (double)samples, inv = L / (double)n;
            sx += v;
            sy += inv;
            sxx += v * v;
            sxy += v * inv;
            shoal_world_destroy(w);
        }
        double bb = (4 * sxy - sx * sy) / (4 * sxx - sx * sx), aa = (sy - bb * sx) / 4;
        cr_expect(aa >= 0.3 && aa <= 0.45, "seed %d: a = %.3f m (b = %.3f s)", (int)seed, aa, bb);
        cr_expect(bb >= 0.9 && bb <= 1.3, "seed %d: b = %.3f s (a = %.3f m)", (int)seed, bb, aa);
    }
}

/* shoal_world_read_obstacles lists live obstacles in id order, holes
 * skipped, and sizes its arrays with capacity 0. */
Test(crowd, read_obstacles_lists_live_ids)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float c0[3] = {1, 2, 0}, c1[3] = {3, 4, 0}, c2[3] = {5, 6, 0}, v2[3] = {0.5f, 0, 0};
    cr_assert_eq(shoal_world_add_obstacle(w, c0, 1.0f, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_obstacle(w, c1, 2.0f, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_moving_obstacle(w, c2, v2, 3.0f, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_remove_obstacle(w, 1), SHOAL_OK);
    int32_t n = -1;
    cr_assert_eq(shoal_world_read_obstacles(w, NULL, NULL, NULL, NULL, 0, &n), SHOAL_OK);
    cr_expect_eq(n, 2);
    int32_t ids[2];
    float centers[6], radii[2], vel[6];
    cr_assert_eq(shoal_world_read_obstacles(w, ids, centers, radii, vel, 2, &n), SHOAL_OK);
    cr_expect(ids[0] == 0 && ids[1] == 2, "ids %d %d", ids[0], ids[1]);
    cr_expect(centers[3] == 5.0f && centers[4] == 6.0f && radii[1] == 3.0f && vel[3] == 0.5f);
    cr_expect_eq(shoal_world_last_error(w)[0], '\0', "reading sets no error");
    cr_expect_eq(shoal_world_read_obstacles(w, ids, NULL, NULL, NULL, 2, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_read_obstacles(w, ids, NULL, NULL, NULL, -1, &n), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_world_destroy(w);
}

/* A walker caught in the other direction's lane: one eastbound pedestrian
 * in the middle of a packed westbound lane that carries it along at the
 * lane's speed. ORCA plans from the current velocities: against
 * neighbors at its own velocity every constraint forbids closing in, and
 * the lane's velocity is the one they all allow. Keeping right, a walker
 * carried backwards takes no share in avoiding those who walk head-on
 * against it, so it presses out of the lane and walks its own way; the
 * contact pass keeps the bodies apart. */
static uint64_t carried_walker(int threads, shoal_agent_state_t* a0, shoal_agent_state_t* a1, float* closest)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    def.wrap = 1;
    def.bounds_min[0] = 0.0f;
    def.bounds_min[1] = -1.0f;
    def.bounds_max[0] = 20.0f;
    def.bounds_max[1] = 5.0f;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    const float lo[4] = {0.0f, 0.0f, 20.0f, 0.0f}, hi[4] = {0.0f, 4.0f, 20.0f, 4.0f};
    cr_assert_eq(shoal_world_add_wall(w, lo, 2, 0, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_wall(w, hi, 2, 0, NULL), SHOAL_OK);
    /* the westbound lane: 4 rows of 14, 0.42 m apart, in the upper half */
    shoal_agent_t walker = {0};
    for (int row = 0; row < 4; ++row)
        for (int col = 0; col < 14; ++col) {
            int me = row == 1 && col == 7;
            float x = 4.0f + 0.42f * (float)col + (row & 1) * 0.21f, y = 2.3f + 0.42f * (float)row;
            shoal_agent_def_t d = pedestrian(x, y, me ? 1e7f : -1e7f, y);
            d.velocity[0] = -1.34f; /* everyone, the walker too, moving with the lane */
            cr_assert_eq(shoal_agent_add(w, &d, me ? &walker : NULL), SHOAL_OK, "%s",
                         shoal_world_last_error(w));
        }
    for (int s = 0; s < 100; ++s) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK); /* 5 s */
    cr_assert_eq(shoal_agent_get_state(w, walker, a0), SHOAL_OK);
    for (int s = 0; s < 100; ++s) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK); /* 5 s more */
    cr_assert_eq(shoal_agent_get_state(w, walker, a1), SHOAL_OK);
    float pos[3 * 56];
    shoal_agent_batch_t b = {.positions = pos};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 56, &got), SHOAL_OK);
    *closest = INFINITY;
    for (int i = 0; i < got; ++i)
        for (int j = i + 1; j < got; ++j) {
            float ex = fabsf(pos[3 * i] - pos[3 * j]), ey = pos[3 * i + 1] - pos[3 * j + 1];
            if (ex > 10.0f) ex = 20.0f - ex;
            *closest = fminf(*closest, hypotf(ex, ey) / 0.4f);
        }
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

Test(crowd, a_walker_carried_by_the_other_lane_gets_out)
{
    shoal_agent_state_t a0, a1;
    float closest;
    uint64_t h1 = carried_walker(1, &a0, &a1, &closest);
    float dx = a1.position[0] - a0.position[0];
    if (dx < -10.0f) dx += 20.0f;
    if (dx > 10.0f) dx -= 20.0f;
    cr_expect_gt(dx / 5.0f, 0.5f, "the walker went %.2f m/s its own way (the lane walks -1.34)",
                 (double)(dx / 5.0f));
    cr_expect_lt(a1.position[1], 2.0f, "it left the lane for the lower half: y = %.2f",
                 (double)a1.position[1]);
    cr_expect_geq(closest, 0.99f, "a pair came within %.4f of the sum of radii", (double)closest);
    for (int t = 2; t <= 3; ++t)
        cr_expect_eq(carried_walker(t, &a0, &a1, &closest), h1, "the same world on %d threads", t);
}

/* A world of crowd agents and plain ones: integrate and control run over
 * the plain rows only, through a mask of the crowd rows that is kept from
 * step to step while the rows and the crowd component stay as they were.
 * Agents removed and added between steps must not leave it stale: each
 * step is compared with a copy of the world loaded from a snapshot just
 * before it (a fresh world makes its mask anew). */
Test(crowd, the_rows_left_to_integrate_follow_adds_and_removes)
{
    enum { n = 30, plain = 8 };
    shoal_agent_t ids[n], walkers[plain + 1];
    shoal_world_t* w = circle(2, n, 2, ids);
    for (int i = 0; i <= plain; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = 100.0f + 5.0f * (float)i;
        d.position[1] = 100.0f;
        d.target[0] = 100.0f + 5.0f * (float)i;
        d.target[1] = 300.0f;
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        if (i < plain)
            cr_assert_eq(shoal_agent_add(w, &d, &walkers[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    size_t cap = 0;
    void* buf = NULL;
    for (int s = 0; s < 14; ++s) {
        if (s == 3) cr_assert_eq(shoal_agent_remove(w, walkers[2]), SHOAL_OK);
        if (s == 5) cr_assert_eq(shoal_agent_remove(w, ids[4]), SHOAL_OK);
        if (s == 7) { /* a plain agent again, in the removed one's place */
            shoal_agent_def_t d = shoal_agent_default_def();
            d.position[0] = 110.0f;
            d.position[1] = 90.0f;
            d.target[1] = 300.0f;
            d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
            cr_assert_eq(shoal_agent_add(w, &d, &walkers[plain]), SHOAL_OK);
        }
        if (s == 9) {
            shoal_agent_def_t d = crowd_def(0.0f, -60.0f, 0.0f, 60.0f);
            cr_assert_eq(shoal_agent_add(w, &d, &ids[4]), SHOAL_OK);
        }
        if (s == 11) { /* the same counts, other rows: one of each out, one of each in */
            cr_assert_eq(shoal_agent_remove(w, walkers[0]), SHOAL_OK);
            cr_assert_eq(shoal_agent_remove(w, ids[7]), SHOAL_OK);
            shoal_agent_def_t d = crowd_def(0.0f, 70.0f, 0.0f, -70.0f);
            cr_assert_eq(shoal_agent_add(w, &d, &ids[7]), SHOAL_OK);
            d = shoal_agent_default_def();
            d.position[0] = 90.0f;
            d.target[1] = 300.0f;
            d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
            cr_assert_eq(shoal_agent_add(w, &d, &walkers[0]), SHOAL_OK);
        }
        size_t size = 0;
        cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
        if (size > cap) {
            free(buf);
            buf = malloc(size);
            cap = size;
        }
        cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, cap, &size), SHOAL_OK);
        shoal_world_t* v = NULL;
        shoal_error_t err;
        cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &v, &err), SHOAL_OK, "%s",
                     err.message);
        shoal_agent_state_t before, after;
        cr_assert_eq(shoal_agent_get_state(w, walkers[1], &before), SHOAL_OK);
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_world_step(v, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(v));
        cr_assert_eq(shoal_world_state_hash(w), shoal_world_state_hash(v),
                     "step %d: the kept mask and a fresh one differ", s);
        cr_assert_eq(shoal_agent_get_state(w, walkers[1], &after), SHOAL_OK);
        if (s > 0)
            cr_expect_gt(after.position[1], before.position[1], "step %d: a plain agent was not integrated",
                         s);
        shoal_world_destroy(v);
    }
    free(buf);
    shoal_world_destroy(w);
}

/* The contact pass's colored sweeps (contacts.c; the default): in the
 * benchmark's grid, two blocks of 900 walking through each other, a step's
 * sweeps are colored from the first (colored_after 0) or after one serial
 * sweep (1). One result on 1, 2 and 3 threads, not the serial sweeps' (-1;
 * so they ran), and no pair closer than 99 % of the sum of radii after any
 * step. */
enum { JAM_AGENTS = 1800 };

/* The benchmark's grid of JAM_AGENTS crowd agents on `threads` threads. */
static shoal_world_t* jam_world(int dims, int threads)
{
    enum { n = JAM_AGENTS };
    static float pos[3 * n], goal[3 * n];
    crowd_grid(dims, n, pos, goal);
    shoal_world_t* w = make_world(dims, threads, SHOAL_BACKEND_OPENMP);
    for (int i = 0; i < n; ++i) {
        shoal_agent_def_t d = crowd_def(pos[3 * i], pos[3 * i + 1], goal[3 * i], goal[3 * i + 1]);
        d.position[2] = pos[3 * i + 2];
        d.target[2] = goal[3 * i + 2];
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

static uint64_t colored_jam(int dims, int threads, int32_t colored_after, float* worst)
{
    enum { n = JAM_AGENTS };
    shoal_world_t* w = jam_world(dims, threads);
    contact_data((world_t*)w)->colored_after = colored_after;
    *worst = INFINITY;
    int swept = 0;
    for (int s = 0; s < 70; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        swept |= contact_data((world_t*)w)->sweeps_last > 0;
        if (s % 5 == 4) {
            float r = min_pair_ratio(w, n);
            *worst = r < *worst ? r : *worst;
        }
    }
    cr_assert(swept, "%dD: no step needed the sweeps", dims);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

static void colored_sweeps(int dims)
{
    float worst;
    const uint64_t serial = colored_jam(dims, 2, -1, &worst);
    for (int32_t after = 0; after <= 1; ++after) {
        const uint64_t ref = colored_jam(dims, 1, after, &worst);
        cr_expect_geq(worst, 0.99f, "%dD, after %d, 1 thread: a pair came within %.4f of the sum of radii",
                      dims, after, (double)worst);
        cr_expect_neq(ref, serial, "%dD, after %d: the colored sweeps gave the serial sweeps' result", dims,
                      after);
        for (int t = 2; t <= 3; ++t) {
            cr_expect_eq(colored_jam(dims, t, after, &worst), ref, "%dD, after %d: %d threads", dims, after,
                         t);
            cr_expect_geq(worst, 0.99f, "%dD, after %d, %d threads: a pair came within %.4f", dims, after, t,
                          (double)worst);
        }
    }
}

Test(crowd, colored_sweeps_one_result_for_any_thread_count_2d, .timeout = 240) { colored_sweeps(2); }

/* A jam's first sweeps over-relaxed (contacts.c, CONTACT_SOR): in the
 * benchmark's grid of 1800, the same 70 steps take fewer sweeps in all
 * than with plain sweeps (sor 1), and neither lets a pair come within 99 %
 * of the sum of radii. */
static int32_t jam_sweeps(int dims, float sor, float* worst)
{
    enum { n = JAM_AGENTS };
    shoal_world_t* w = jam_world(dims, 2);
    contact_data((world_t*)w)->sor = sor;
    *worst = INFINITY;
    int32_t sweeps = 0;
    for (int s = 0; s < 70; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        sweeps += contact_data((world_t*)w)->sweeps_last;
        if (s % 5 == 4) {
            float r = min_pair_ratio(w, n);
            *worst = r < *worst ? r : *worst;
        }
    }
    shoal_world_destroy(w);
    return sweeps;
}

static void over_relaxed(int dims)
{
    float worst_sor, worst_plain;
    const int32_t sor = jam_sweeps(dims, 0.0f, &worst_sor), plain = jam_sweeps(dims, 1.0f, &worst_plain);
    cr_log_info("%dD jam: %d sweeps over-relaxed, %d plain", dims, sor, plain);
    cr_expect_gt(plain, 0, "%dD: no step needed the sweeps", dims);
    cr_expect_lt(sor, plain, "%dD: %d sweeps over-relaxed, %d plain", dims, sor, plain);
    cr_expect_geq(worst_sor, 0.99f, "%dD over-relaxed: a pair came within %.4f", dims, (double)worst_sor);
    cr_expect_geq(worst_plain, 0.99f, "%dD plain: a pair came within %.4f", dims, (double)worst_plain);
}

Test(crowd, a_jams_over_relaxed_sweeps_take_fewer_2d, .timeout = 120) { over_relaxed(2); }
Test(crowd, a_jams_over_relaxed_sweeps_take_fewer_3d, .timeout = 120) { over_relaxed(3); }
Test(crowd, colored_sweeps_one_result_for_any_thread_count_3d, .timeout = 240) { colored_sweeps(3); }

/* The contact pass's watch list (contacts.c, "Who may touch"): the pass
 * takes those that may touch alone, and its result is the pass over
 * everyone's (without a list, its first check a row at a time), bit for
 * bit, step by step: in the benchmark's grid jam (2D and 3D; in 2D also
 * with an obstacle and walls in the way), at the default margin, on 1 and
 * 2 threads, and at margins so small that lists do not hold and passes
 * start again (once with twice the margin, then over everyone). The list
 * was made and held (it is not the whole crowd), the small margins dropped
 * some, and twice 0.05 radii held some. */
enum { WATCH_N = 1800, WATCH_STEPS = 60 };
static void watched_jam(int dims, int threads, float margin, int blocked, uint64_t* hash, int32_t* listed,
                        int64_t* dropped, int64_t* widened, int64_t* screened)
{
    static float pos[3 * WATCH_N], goal[3 * WATCH_N];
    crowd_grid(dims, WATCH_N, pos, goal);
    shoal_world_t* w = make_world(dims, threads, SHOAL_BACKEND_OPENMP);
    contact_world_t* cw = contact_data((world_t*)w);
    cw->watch_margin = margin;
    cw->runs_off = margin == 0.0f;
    if (blocked) {
        /* in the jam's way, and far from it a wall that runners alone
         * reach (much faster than their wall horizon lets them see it) */
        const float center[3] = {0.0f, 10.0f, 0.0f}, wall[] = {-4.0f, -20.0f, 4.0f, -20.0f};
        const float far[] = {290.0f, 30.0f, 500.0f, 30.0f};
        cr_assert_eq(shoal_world_add_obstacle(w, center, 3.0f, NULL), SHOAL_OK);
        cr_assert_eq(shoal_world_add_wall(w, wall, 2, 0, NULL), SHOAL_OK);
        cr_assert_eq(shoal_world_add_wall(w, far, 2, 0, NULL), SHOAL_OK);
        /* far off too, walkers spawned in an obstacle, alone */
        const float inside[3] = {-300.0f, 0.0f, 0.0f};
        cr_assert_eq(shoal_world_add_obstacle(w, inside, 5.0f, NULL), SHOAL_OK);
        for (int k = 0; k < 8; ++k) {
            const float a = 0.785398f * (float)k, x = -300.0f + 3.0f * cosf(a), y = 3.0f * sinf(a);
            shoal_agent_def_t d = crowd_def(x, y, x, y);
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
        for (int k = 0; k < 8; ++k) {
            shoal_agent_def_t d =
                crowd_def(300.0f + 25.0f * (float)k, 0.0f, 300.0f + 25.0f * (float)k, 100.0f);
            d.vehicle.max_speed = d.vehicle.max_force = d.crowd.preferred_speed = 100.0f;
            d.crowd.time_horizon_walls = 1e-3f;
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
    }
    for (int i = 0; i < WATCH_N; ++i) {
        shoal_agent_def_t d = crowd_def(pos[3 * i], pos[3 * i + 1], goal[3 * i], goal[3 * i + 1]);
        d.position[2] = pos[3 * i + 2];
        d.target[2] = goal[3 * i + 2];
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    *listed = -1;
    for (int s = 0; s < WATCH_STEPS; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        hash[s] = shoal_world_state_hash(w);
        *listed = cw->watch_last > *listed ? cw->watch_last : *listed;
    }
    *dropped = cw->watch_dropped;
    *widened = cw->watch_widened;
    *screened = cw->runs_screened;
    shoal_world_destroy(w);
}

static void watch_list_same_bits(int dims, int blocked)
{
    uint64_t ref[WATCH_STEPS], got[WATCH_STEPS];
    int32_t listed;
    int64_t dropped, widened, screened;
    watched_jam(dims, 1, 0.0f, blocked, ref, &listed, &dropped, &widened, &screened);
    cr_assert_eq(listed, -1, "%dD: no margin made a list", dims); /* and a row at a time */
    cr_assert_eq(screened, 0, "%dD: a row at a time screened %lld runs", dims, (long long)screened);
    const struct {
        int threads;
        float margin;
    } runs[] = {{1, -1.0f}, {2, -1.0f}, {1, 1e-3f}, {2, 0.05f}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; ++k) {
        watched_jam(dims, runs[k].threads, runs[k].margin, blocked, got, &listed, &dropped, &widened,
                    &screened);
        /* with lanes, runs whose rows the bound left were screened a lane
         * of rows at a time (contacts.c, run_apart) */
        if (SHOAL_LANES >= 4)
            cr_expect_gt(screened, 0, "%dD, %d threads: no run was screened", dims, runs[k].threads);
        for (int s = 0; s < WATCH_STEPS; ++s)
            cr_assert_eq(got[s], ref[s],
                         "%dD%s, margin %g, %d threads: step %d differs from the pass over everyone", dims,
                         blocked ? " blocked" : "", (double)runs[k].margin, runs[k].threads, s);
        if (runs[k].margin < 0.0f) {
            cr_expect(listed > 0 && listed < WATCH_N / 2, "%dD: the largest list held %d of %d", dims,
                      (int)listed, WATCH_N);
        } else {
            cr_expect_gt(dropped, 0, "%dD: a margin of %g radii dropped no list", dims,
                         (double)runs[k].margin);
            /* 1e-3 is too small to hold doubled; 0.05 often holds doubled */
            if (runs[k].margin > 0.01f)
                cr_expect_gt(widened, 0, "%dD: no list held with twice a margin of %g radii", dims,
                             (double)runs[k].margin);
        }
    }
}

Test(crowd, watch_list_gives_the_pass_over_everyone_2d, .timeout = 240) { watch_list_same_bits(2, 0); }
Test(crowd, watch_list_gives_the_pass_over_everyone_blocked, .timeout = 240) { watch_list_same_bits(2, 1); }
Test(crowd, watch_list_gives_the_pass_over_everyone_3d, .timeout = 240) { watch_list_same_bits(3, 0); }

/* The contact pass's first check bounds a row's candidates' moves by the
 * largest move among its own candidates, not everyone's: a formation that
 * walks with room between its members is cleared without a look at any
 * candidate (no run screened) while one runner, far off, moves a hundred
 * times farther a step; the bits are those of the check a row at a time. */
static uint64_t formation_with_runner(int runs_off, float* travel_max, int64_t* screened)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_OPENMP);
    contact_world_t* cw = contact_data((world_t*)w);
    cw->runs_off = runs_off;
    for (int k = 0; k < 64; ++k) {
        const float x = 5.0f * (float)(k % 8), y = 5.0f * (float)(k / 8);
        shoal_agent_def_t d = crowd_def(x, y, x + 1000.0f, y);
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    shoal_agent_def_t d = crowd_def(-2000.0f, 0.0f, -2000.0f, 5000.0f);
    d.vehicle.max_speed = d.vehicle.max_force = d.crowd.preferred_speed = 100.0f;
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    *travel_max = 0.0f;
    for (int s = 0; s < 12; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
        const float t = crowd_contacts((world_t*)w).travel_max;
        *travel_max = s == 0 || t < *travel_max ? t : *travel_max;
    }
    *screened = cw->runs_screened;
    const uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

Test(crowd, first_check_bounds_by_the_rows_own_candidates)
{
    float travel_max;
    int64_t screened;
    const uint64_t ref = formation_with_runner(1, &travel_max, &screened);
    const uint64_t got = formation_with_runner(0, &travel_max, &screened);
    cr_expect_eq(got, ref, "the first check by lanes gave other bits than a row at a time");
    /* the runner's move alone is past any gap in the formation */
    cr_expect_gt(travel_max, 20.0f, "the runner moved %g m a step at least", (double)travel_max);
    cr_expect_eq(screened, 0, "%lld runs of the formation were screened", (long long)screened);
}

/* shoal_world_crowd_stats against every pair and every wall segment,
 * counted by brute force: before the first step (a packed random start
 * overlaps), in an unbounded world and on a torus whose edges some pairs
 * straddle, and after a step (the walls' grid then answers). */
static void stats_by_brute_force(shoal_world_t* w, int n, float torus, const float* wall, const float* radius)
{
    float pos[3 * 400], rad[400];
    uint64_t index[400];
    cr_assert_leq(n, 400);
    shoal_agent_batch_t b = {.positions = pos, .user_values = index};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
    cr_assert_eq(got, n);
    for (int i = 0; i < n; ++i) rad[i] = radius[index[i]];
    float closest = INFINITY, deepest = 0.0f;
    int over = 0, in_walls = 0;
    for (int i = 0; i < n; ++i) {
        int o = 0;
        for (int j = 0; j < n; ++j) {
            if (j == i) continue;
            float d[2] = {pos[3 * j] - pos[3 * i], pos[3 * j + 1] - pos[3 * i + 1]};
            for (int ax = 0; ax < 2 && torus > 0.0f; ++ax) d[ax] -= torus * roundf(d[ax] / torus);
            float ratio = sqrtf(d[0] * d[0] + d[1] * d[1]) / (rad[i] + rad[j]);
            closest = fminf(closest, ratio);
            o |= ratio < 0.99f;
        }
        over += o;
        float ex = wall[2] - wall[0], ey = wall[3] - wall[1];
        float t = ((pos[3 * i] - wall[0]) * ex + (pos[3 * i + 1] - wall[1]) * ey) / (ex * ex + ey * ey);
        t = fminf(fmaxf(t, 0.0f), 1.0f);
        float dist = hypotf(wall[0] + t * ex - pos[3 * i], wall[1] + t * ey - pos[3 * i + 1]);
        float deep = dist < rad[i] ? (rad[i] - dist) / rad[i] : 0.0f;
        deepest = fmaxf(deepest, deep);
        in_walls += deep > 0.01f;
    }
    shoal_crowd_stats_t st;
    cr_assert_eq(shoal_world_crowd_stats(w, &st), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(st.agents, n);
    cr_expect_gt(over, 0, "the start should overlap somewhere, or this checks nothing");
    cr_expect_float_eq(st.closest_pair, closest, 1e-5, "closest pair %g, by brute force %g",
                       (double)st.closest_pair, (double)closest);
    cr_expect_eq(st.overlapping, over, "overlapping %d, by brute force %d", (int)st.overlapping, over);
    cr_expect_float_eq(st.wall_penetration, deepest, 1e-5);
    cr_expect_eq(st.in_walls, in_walls);
}

static void stats_world(int wrap)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.thread_count = 2;
    def.backend = SHOAL_BACKEND_OPENMP;
    def.wrap = wrap;
    const float side = 8.0f;
    if (wrap) def.bounds_max[0] = def.bounds_max[1] = side;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    const float wall[] = {2.0f, 1.0f, 6.0f, 5.0f};
    cr_assert_eq(shoal_world_add_wall(w, wall, 2, 0, NULL), SHOAL_OK);
    enum { n = 300 }; /* 4.7 per m^2 thrown at random */
    float radius[n];
    uint32_t s = 12345u;
    for (int i = 0; i < n; ++i) {
        float u[3];
        for (int k = 0; k < 3; ++k) {
            s = s * 1664525u + 1013904223u;
            u[k] = (float)(s >> 8) / 16777216.0f;
        }
        shoal_agent_def_t d = pedestrian(side * u[0], side * u[1], side * u[1], side * u[0]);
        d.vehicle.radius = radius[i] = 0.15f + 0.1f * u[2];
        d.user_value = (uint64_t)i;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    stats_by_brute_force(w, n, wrap ? side : 0.0f, wall, radius);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    stats_by_brute_force(w, n, wrap ? side : 0.0f, wall, radius);
    shoal_world_destroy(w);
}

Test(crowd, stats_judge_every_pair_and_wall) { stats_world(0); }
Test(crowd, stats_judge_every_pair_on_a_torus) { stats_world(1); }

/* A moving crowd agent faces where it walks: its heading is atan2 of its
 * velocity and, in 3D, its orientation quat_from_yaw_pitch_roll(yaw,
 * pitch, 0) with the pitch from the velocity too (lane_atan2 and
 * lane_sincos: within a few 1e-7 of libm's); a standing one keeps what it
 * had. Agents in every direction, with rows made non-consecutive by a
 * removal (the move's other path), on 1 and 2 threads. */
static void faces_where_it_walks(int dims, int threads)
{
    enum { n = 300 };
    shoal_world_t* w = make_world(dims, threads, SHOAL_BACKEND_OPENMP);
    shoal_agent_t ids[n];
    uint64_t s = 12345;
    for (int i = 0; i < n; ++i) {
        /* far apart, each to a target in a direction of its own */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const float a = (float)(s >> 40) / 16777216.0f * 6.2831853f;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const float e = dims == 3 ? ((float)(s >> 40) / 16777216.0f - 0.5f) * 3.0f : 0.0f;
        const float x = 100.0f * (float)(i % 20), y = 100.0f * (float)(i / 20);
        shoal_agent_def_t d = crowd_def(x, y, x + 40.0f * cosf(a) * cosf(e), y + 40.0f * sinf(a) * cosf(e));
        if (dims == 3) d.target[2] = 40.0f * sinf(e);
        if (i % 7 == 3) d.target[0] = x, d.target[1] = y, d.target[2] = 0.0f; /* stands */
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    cr_assert_eq(shoal_agent_remove(w, ids[5]), SHOAL_OK);
    cr_assert_eq(shoal_agent_remove(w, ids[77]), SHOAL_OK);
    static float vel[3 * n], head[n], ori[4 * n], head0[n], ori0[4 * n];
    shoal_agent_batch_t b = {.velocities = vel, .headings = head0, .orientations = ori0};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK, "%s", shoal_world_last_error(w));
    b.headings = head;
    b.orientations = ori;
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
    cr_assert_eq(got, n - 2);
    int moving = 0, standing = 0;
    for (int i = 0; i < got; ++i) {
        const float vx = vel[3 * i], vy = vel[3 * i + 1], vz = dims == 3 ? vel[3 * i + 2] : 0.0f;
        const float horiz = sqrtf(vx * vx + vy * vy);
        if (horiz * horiz + vz * vz < 1e-4f) { /* no move: as it was (storage order kept) */
            cr_assert_eq(head[i], head0[i], "agent %d", i);
            for (int c = 0; c < 4; ++c) cr_assert_eq(ori[4 * i + c], ori0[4 * i + c], "agent %d", i);
            standing++;
            continue;
        }
        moving++;
        const float yaw = atan2f(vy, vx);
        float dy = fabsf(head[i] - yaw);
        dy = fminf(dy, 6.2831853f - dy); /* across -pi and pi */
        cr_assert_leq(dy, 5e-7f, "agent %d: heading %.9g, atan2f %.9g", i, (double)head[i], (double)yaw);
        if (dims != 3) continue;
        const float pitch = atan2f(vz, horiz);
        const float q[4] = {cosf(0.5f * yaw) * cosf(0.5f * pitch), sinf(0.5f * yaw) * sinf(0.5f * pitch),
                            -cosf(0.5f * yaw) * sinf(0.5f * pitch), sinf(0.5f * yaw) * cosf(0.5f * pitch)};
        float sign =
            q[0] * ori[4 * i] + q[1] * ori[4 * i + 1] + q[2] * ori[4 * i + 2] + q[3] * ori[4 * i + 3];
        sign = sign < 0.0f ? -1.0f : 1.0f; /* yaw at -pi against pi: the same rotation */
        for (int c = 0; c < 4; ++c)
            cr_assert_leq(fabsf(sign * ori[4 * i + c] - q[c]), 1e-6f,
                          "agent %d, component %d: %.9g against %.9g", i, c, (double)ori[4 * i + c],
                          (double)q[c]);
    }
    cr_assert_geq(moving, 200);
    cr_assert_geq(standing, 20);
    shoal_world_destroy(w);
}

Test(crowd, faces_where_it_walks_2d) { faces_where_it_walks(2, 1); }
Test(crowd, faces_where_it_walks_3d) { faces_where_it_walks(3, 1); }
Test(crowd, faces_where_it_walks_3d_two_threads) { faces_where_it_walks(3, 2); }

/* Plain crowd rows (no time gap, no keeping right) of a world without walls
 * and obstacles plan a lane of rows at a time (crowd.c orca_packet,
 * orca_packet3); an obstacle far off puts every row back to one at a time
 * (in 2D a wall far off too). Both give the same bits, for a crowd that
 * takes every branch of the lanes: 203 agents (a last lane part full) in
 * two blocks walking into each other, some with a time gap (their lane
 * planned row by row), some taking no share, some without a speed cap (the
 * program's limit clamps them), a few spawned inside a neighbor (lines
 * from the scalar function). */
static void lanes_or_rows(int dims, int threads, int far, float* pos, float* vel, int n)
{
    shoal_world_t* w = make_world(dims, threads, SHOAL_BACKEND_OPENMP);
    if (far == 1) {
        const float at[3] = {5000.0f, 5000.0f, 0.0f};
        cr_assert_eq(shoal_world_add_obstacle(w, at, 1.0f, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    } else if (far == 2) {
        const float seg[] = {5000.0f, 5000.0f, 5001.0f, 5000.0f};
        cr_assert_eq(shoal_world_add_wall(w, seg, 2, 0, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int i = 0; i < n; ++i) {
        const int left = i % 2 == 0, k = i / 2;
        const float side = left ? -1.0f : 1.0f;
        float x = side * (12.0f + 3.2f * (float)(k % 8)), y = 3.2f * (float)(k / 8 % 4) - 6.0f;
        float z = dims == 3 ? 3.2f * (float)(k / 32) - 6.0f : 0.0f;
        if (dims == 2) y = 3.2f * (float)(k / 8) - 20.0f;
        x += i % 29 == 28 ? -side * 0.4f : 0.01f * (float)(i % 7);
        shoal_agent_def_t d = crowd_def(x, y, -x, y + 1.0f);
        d.position[2] = z;
        d.target[2] = z - 0.5f;
        if (i % 13 == 5) d.crowd.time_gap = 1.0f;
        if (i % 17 == 3) d.crowd.responsibility = 0.0f;
        if (i % 11 == 7) d.crowd.preferred_speed = 0.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int s = 0; s < 80; ++s)
        cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_batch_t b = {.positions = pos, .velocities = vel};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
    cr_assert_eq(got, n);
    shoal_world_destroy(w);
}

static void lanes_give_rows_bits(int dims)
{
    enum { n = 203, runs = 6 };
    static float pos[runs][3 * n], vel[runs][3 * n];
    const int far[runs] = {0, 1, 2, 0, 1, 2}; /* a wall only in 2D */
    for (int v = 0; v < runs; ++v)
        lanes_or_rows(dims, v < 3 ? 1 : 2, dims == 3 && far[v] == 2 ? 1 : far[v], pos[v], vel[v], n);
    for (int v = 1; v < runs; ++v) {
        cr_expect_eq(memcmp(pos[0], pos[v], sizeof pos[0]), 0,
                     "positions: run %d differs from lanes on 1 thread", v);
        cr_expect_eq(memcmp(vel[0], vel[v], sizeof vel[0]), 0, "velocities: run %d differs", v);
    }
    /* they walked */
    int moved = 0;
    for (int i = 0; i < n; ++i) moved += fabsf(vel[0][3 * i]) > 0.1f;
    cr_expect_gt(moved, n / 2, "%d of %d walking", moved, n);
}

/* crowd_move takes a lane of crowd rows at once where they are consecutive
 * agent rows (every lane of a world of crowd agents alone), with the row at
 * a time's operations: the same state, orientations and all, step by step,
 * in 2D and 3D, for 203 agents (a last lane part full) some of which stand
 * still (their heading and orientation kept). */
static void move_lanes_or_rows(int dims, int rows, uint64_t* hash, int steps, float* turned)
{
    enum { n = 203 };
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_OPENMP);
    crowd_data((world_t*)w)->move_rows = rows;
    for (int i = 0; i < n; ++i) {
        const int k = i / 2;
        const float side = i % 2 == 0 ? -1.0f : 1.0f;
        const float x = side * (10.0f + 3.2f * (float)(k % 8)), y = 3.2f * (float)(k / 8 % 4) - 6.0f;
        const float z = dims == 3 ? 3.2f * (float)(k / 32) - 6.0f : 0.0f;
        shoal_agent_def_t d = crowd_def(x, y, -x, y + 2.0f);
        d.position[2] = z;
        d.target[2] = z - 3.0f;
        if (i % 9 == 4) d.crowd.preferred_speed = 0.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int s = 0; s < steps; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
        hash[s] = shoal_world_state_hash(w);
    }
    static float q[4 * n];
    shoal_agent_batch_t b = {.orientations = q};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
    *turned = 0.0f;
    for (int i = 0; i < got; ++i) *turned = fmaxf(*turned, fabsf(q[4 * i + 2]) + fabsf(q[4 * i + 3]));
    shoal_world_destroy(w);
}

static void move_lanes_give_rows_bits(int dims)
{
    enum { steps = 40 };
    uint64_t lanes[steps], rows[steps];
    float turned_lanes, turned_rows;
    move_lanes_or_rows(dims, 0, lanes, steps, &turned_lanes);
    move_lanes_or_rows(dims, 1, rows, steps, &turned_rows);
    for (int s = 0; s < steps; ++s)
        cr_assert_eq(lanes[s], rows[s], "%dD: step %d, lanes 0x%016llx, rows 0x%016llx", dims, s,
                     (unsigned long long)lanes[s], (unsigned long long)rows[s]);
    cr_expect_gt(turned_lanes, 0.05f, "%dD: no agent turned", dims);
}

Test(crowd, move_in_lanes_gives_the_row_at_a_time_bits_2d) { move_lanes_give_rows_bits(2); }
Test(crowd, move_in_lanes_gives_the_row_at_a_time_bits_3d) { move_lanes_give_rows_bits(3); }

Test(crowd, plain_rows_in_lanes_give_the_row_at_a_time_bits_2d, .timeout = 120) { lanes_give_rows_bits(2); }
Test(crowd, plain_rows_in_lanes_give_the_row_at_a_time_bits_3d, .timeout = 120) { lanes_give_rows_bits(3); }
