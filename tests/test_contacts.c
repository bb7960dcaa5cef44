/* The contact pass for agents other than crowd agents (definition field
 * `contacts`): flocking agents that ask for it and ground vehicles keep
 * their bodies apart, out of obstacles and on their side of walls; without
 * it the same scenes overlap (so each test can fail); the result is one
 * function of the world for any thread count; bad definitions are refused
 * with the world unchanged; snapshots and scenario files carry the flag. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <shoal/scenario.h>
#include <shoal/snapshot.h>

#include "support.h"

/* A seeker with a body of radius 0.5 m bound for (tx, ty). */
static shoal_agent_def_t seeker(float x, float y, float tx, float ty, int contacts)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.position[1] = y;
    d.target[0] = tx;
    d.target[1] = ty;
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.vehicle.radius = 0.5f;
    d.contacts = contacts;
    return d;
}

/* Largest overlap between any two of the first n agents, over the smaller
 * radius (all radii r). */
static float worst_overlap(shoal_world_t* w, int n, float r)
{
    float pos[3 * 512];
    cr_assert_leq(n, 512);
    shoal_agent_batch_t b = {.positions = pos};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
    float worst = 0.0f;
    for (int i = 0; i < got; ++i)
        for (int j = i + 1; j < got; ++j) {
            float dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1],
                  dz = pos[3 * i + 2] - pos[3 * j + 2];
            float o = (2.0f * r - sqrtf(dx * dx + dy * dy + dz * dz)) / r;
            if (o > worst) worst = o;
        }
    return worst;
}

/* n seekers from a ring all bound for the origin: they pile up there. */
static shoal_world_t* pile(int dims, int threads, int n, int contacts)
{
    shoal_world_t* w = make_world(dims, threads, SHOAL_BACKEND_OPENMP);
    for (int i = 0; i < n; ++i) {
        float a = 6.2831853f * (float)i / (float)n;
        shoal_agent_def_t d = seeker(12.0f * cosf(a), 12.0f * sinf(a), 0.0f, 0.0f, contacts);
        if (dims == 3) d.position[2] = (float)(i % 5) - 2.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

static void run_pile(int dims)
{
    enum { n = 120 };
    shoal_world_t* with = pile(dims, 1, n, 1);
    shoal_world_t* without = pile(dims, 1, n, 0);
    float worst_with = 0.0f, worst_without = 0.0f;
    for (int s = 0; s < 400; ++s) {
        cr_assert_eq(shoal_world_step(with, 1.0f / 30.0f), SHOAL_OK, "%s", shoal_world_last_error(with));
        cr_assert_eq(shoal_world_step(without, 1.0f / 30.0f), SHOAL_OK);
        worst_with = fmaxf(worst_with, worst_overlap(with, n, 0.5f));
        worst_without = fmaxf(worst_without, worst_overlap(without, n, 0.5f));
    }
    /* the pass's tolerance is 0.5 % of the smaller radius; the 1 % */
    cr_expect_leq(worst_with, 0.01f, "%dD: two seekers with contacts overlapped by %.4f of a radius", dims,
                  (double)worst_with);
    cr_expect_gt(worst_without, 0.5f, "%dD: without contacts the pile should overlap (%.4f)", dims,
                 (double)worst_without);
    shoal_world_destroy(with);
    shoal_world_destroy(without);
}

Test(contacts, seekers_that_ask_never_overlap_2d) { run_pile(2); }
Test(contacts, seekers_that_ask_never_overlap_3d) { run_pile(3); }

/* Two cars on one straight road, driven at each other. */
static shoal_world_t* head_on(int contacts, shoal_agent_t ids[2])
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float east[6] = {-60.0f, 0.0f, 0.0f, 60.0f, 0.0f, 0.0f};
    const float west[6] = {60.0f, 0.0f, 0.0f, -60.0f, 0.0f, 0.0f};
    int32_t pe = -1, pw = -1;
    cr_assert_eq(shoal_world_add_path(w, east, 2, 3.0f, &pe), SHOAL_OK);
    cr_assert_eq(shoal_world_add_path(w, west, 2, 3.0f, &pw), SHOAL_OK);
    for (int k = 0; k < 2; ++k) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = k ? 50.0f : -50.0f;
        d.heading = k ? 3.14159265f : 0.0f;
        d.ground.enabled = 1;
        d.ground.follow.path = k ? pw : pe;
        d.contacts = contacts;
        cr_assert_eq(shoal_agent_add(w, &d, &ids[k]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

static float closest_cars(int contacts, float* radius_sum)
{
    shoal_agent_t ids[2];
    shoal_world_t* w = head_on(contacts, ids);
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(w, ids[0], &d), SHOAL_OK);
    *radius_sum = 2.0f * d.ground.vehicle.radius;
    float closest = INFINITY;
    for (int s = 0; s < 60 * 20; ++s) {
        cr_assert_eq(shoal_world_step(w, 1.0f / 60.0f), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_agent_state_t a, b;
        cr_assert_eq(shoal_agent_get_state(w, ids[0], &a), SHOAL_OK);
        cr_assert_eq(shoal_agent_get_state(w, ids[1], &b), SHOAL_OK);
        float dx = a.position[0] - b.position[0], dy = a.position[1] - b.position[1];
        closest = fminf(closest, sqrtf(dx * dx + dy * dy));
    }
    shoal_world_destroy(w);
    return closest;
}

Test(contacts, ground_vehicles_head_on_stop_at_their_bodies)
{
    float sum = 0.0f;
    float with = closest_cars(1, &sum), without = closest_cars(0, &sum);
    cr_expect_lt(without, 0.5f * sum, "without contacts the cars pass through each other (closest %.3f m)",
                 (double)without);
    cr_expect_geq(with, 0.99f * sum, "with contacts the cars came within %.3f m (bodies %.3f m)",
                  (double)with, (double)sum);
}

Test(contacts, obstacles_and_walls_are_kept_out_of)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    const float center[3] = {0.0f, 0.0f, 0.0f};
    cr_assert_eq(shoal_world_add_obstacle(w, center, 3.0f, NULL), SHOAL_OK);
    const float wall[4] = {10.0f, -20.0f, 10.0f, 20.0f}; /* x = 10, between the seekers and their goal */
    cr_assert_eq(shoal_world_add_wall(w, wall, 2, 0, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    enum { n = 40 };
    for (int i = 0; i < n; ++i) {
        /* half aim through the obstacle, half through the wall */
        float y = (float)(i % 10) - 4.5f;
        shoal_agent_def_t d = i < n / 2 ? seeker(-15.0f - (float)(i / 10), y, 0.0f, 0.0f, 1)
                                        : seeker(5.0f - 0.3f * (float)(i / 10), y, 30.0f, y, 1);
        d.vehicle.max_speed = 4.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int s = 0; s < 300; ++s) {
        cr_assert_eq(shoal_world_step(w, 1.0f / 30.0f), SHOAL_OK, "%s", shoal_world_last_error(w));
        float pos[3 * n];
        shoal_agent_batch_t b = {.positions = pos};
        int32_t got = 0;
        cr_assert_eq(shoal_world_read_agents(w, &b, n, &got), SHOAL_OK);
        for (int i = 0; i < got; ++i) {
            float r = sqrtf(pos[3 * i] * pos[3 * i] + pos[3 * i + 1] * pos[3 * i + 1]);
            cr_assert_geq(r, 3.5f * (1.0f - 0.01f) - 1e-4f,
                          "step %d: an agent is %.3f m from the obstacle's center", s, (double)r);
            cr_assert_leq(pos[3 * i], 10.0f - 0.5f * (1.0f - 0.01f) + 1e-4f,
                          "step %d: an agent at x = %.3f crossed the wall", s, (double)pos[3 * i]);
        }
    }
    shoal_world_destroy(w);
}

/* Seekers with contacts, cars with contacts and crowd agents in one world:
 * one hash on 1, 2 and 3 threads. */
static uint64_t mixed_hash(int threads)
{
    shoal_world_t* w = make_world(2, threads, SHOAL_BACKEND_OPENMP);
    const float east[6] = {-40.0f, 1.0f, 0.0f, 40.0f, 1.0f, 0.0f};
    int32_t path = -1;
    cr_assert_eq(shoal_world_add_path(w, east, 2, 3.0f, &path), SHOAL_OK);
    for (int i = 0; i < 300; ++i) {
        float a = 6.2831853f * (float)i / 300.0f;
        shoal_agent_def_t d = seeker(15.0f * cosf(a), 15.0f * sinf(a), 0.0f, 0.0f, 1);
        if (i % 3 == 1) {
            cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
            d.target[0] = -d.position[0];
            d.target[1] = -d.position[1];
        }
        if (i % 50 == 2) {
            d.weights[SHOAL_BEHAVIOR_SEEK] = 0.0f;
            d.crowd.enabled = 0;
            d.ground.enabled = 1;
            d.ground.follow.path = path;
            d.position[1] = 1.0f;
        }
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int s = 0; s < 200; ++s) cr_assert_eq(shoal_world_step(w, 1.0f / 30.0f), SHOAL_OK);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

Test(contacts, same_hash_on_1_2_3_threads)
{
    uint64_t h1 = mixed_hash(1);
    cr_expect_eq(mixed_hash(2), h1);
    cr_expect_eq(mixed_hash(3), h1);
}

Test(contacts, bad_definitions_are_refused)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    uint64_t before = shoal_world_state_hash(w);
    shoal_agent_def_t d = seeker(0.0f, 0.0f, 1.0f, 0.0f, 2);
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "contacts must be 0 or 1") != NULL, "%s",
              shoal_world_last_error(w));
    d = seeker(0.0f, 0.0f, 1.0f, 0.0f, 1);
    d.vehicle.radius = 0.0f;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "vehicle.radius must be > 0") != NULL, "%s",
              shoal_world_last_error(w));
    d = seeker(0.0f, 0.0f, 1.0f, 0.0f, 1);
    d.planner.enabled = 1;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "planner agent") != NULL, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_agent_count(w), 0);
    cr_expect_eq(shoal_world_state_hash(w), before);
    shoal_world_destroy(w);
}

Test(contacts, snapshots_and_defs_keep_the_flag)
{
    shoal_world_t* w = pile(2, 1, 60, 1);
    shoal_agent_t extra;
    shoal_agent_def_t d = seeker(30.0f, 0.0f, 0.0f, 0.0f, 0);
    cr_assert_eq(shoal_agent_add(w, &d, &extra), SHOAL_OK);
    for (int s = 0; s < 50; ++s) cr_assert_eq(shoal_world_step(w, 1.0f / 30.0f), SHOAL_OK);
    shoal_agent_def_t back;
    cr_assert_eq(shoal_agent_get_def(w, extra, &back), SHOAL_OK);
    cr_expect_eq(back.contacts, 0);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* copy = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &copy, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_world_state_hash(copy), shoal_world_state_hash(w));
    for (int s = 0; s < 50; ++s) {
        cr_assert_eq(shoal_world_step(w, 1.0f / 30.0f), SHOAL_OK);
        cr_assert_eq(shoal_world_step(copy, 1.0f / 30.0f), SHOAL_OK);
    }
    cr_expect_eq(shoal_world_state_hash(copy), shoal_world_state_hash(w));
    shoal_agent_t first;
    shoal_agent_batch_t b = {.ids = &first};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(copy, &b, 1, &got), SHOAL_OK);
    cr_assert_eq(shoal_agent_get_def(copy, first, &back), SHOAL_OK);
    cr_expect_eq(back.contacts, 1);
    free(buf);
    shoal_world_destroy(copy);
    shoal_world_destroy(w);
}

Test(contacts, scenario_key)
{
    const char* text = "{\"groups\": [{\"count\": 50, \"contacts\": true, \"vehicle\": {\"radius\": 0.5},"
                       "  \"spawn\": {\"shape\": \"disc\", \"radius\": 3},"
                       "  \"behaviors\": {\"seek\": {\"weight\": 1}}, \"target\": [0, 0]}]}";
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_string(text, strlen(text), "contacts.json", &sc, &err), SHOAL_OK, "%s",
                 err.message);
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    cr_assert_eq(shoal_scenario_populate(sc, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int s = 0; s < 200; ++s) cr_assert_eq(shoal_world_step(w, 1.0f / 30.0f), SHOAL_OK);
    cr_expect_leq(worst_overlap(w, 50, 0.5f), 0.01f);
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);

    const char* bad = "{\"groups\": [{\"count\": 5, \"contacts\": 1}]}";
    cr_assert_eq(shoal_scenario_load_string(bad, strlen(bad), "bad.json", &sc, &err), SHOAL_ERR_PARSE);
    cr_expect(strstr(err.message, "groups[0].contacts") && strstr(err.message, "true or false"), "%s",
              err.message);
}

/* Participants removed between steps (crowd rows and contact rows move
 * into the holes): the pass keeps working on the rows that remain, and the
 * result is one function of the world on 1 and 2 threads. */
static uint64_t removal_hash(int threads, float* worst)
{
    shoal_world_t* w = make_world(2, threads, SHOAL_BACKEND_OPENMP);
    enum { n = 90 };
    shoal_agent_t ids[n];
    for (int i = 0; i < n; ++i) {
        float a = 6.2831853f * (float)i / (float)n;
        shoal_agent_def_t d = seeker(10.0f * cosf(a), 10.0f * sinf(a), 0.0f, 0.0f, 1);
        if (i % 2) {
            cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
            d.vehicle.radius = 0.5f;
        }
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    *worst = 0.0f;
    for (int s = 0; s < 240; ++s) {
        if (s == 120)
            for (int i = 0; i < n; i += 5) cr_assert_eq(shoal_agent_remove(w, ids[i]), SHOAL_OK);
        cr_assert_eq(shoal_world_step(w, 1.0f / 30.0f), SHOAL_OK, "%s", shoal_world_last_error(w));
        if (s > 120) *worst = fmaxf(*worst, worst_overlap(w, n - n / 5, 0.5f));
    }
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

Test(contacts, removals_keep_the_pass_working)
{
    float worst1 = 0.0f, worst2 = 0.0f;
    uint64_t h1 = removal_hash(1, &worst1), h2 = removal_hash(2, &worst2);
    cr_expect_eq(h1, h2);
    cr_expect_leq(worst1, 0.01f, "overlap %.4f of a radius after removals", (double)worst1);
}
