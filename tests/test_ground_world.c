/* Ground vehicles as agents of a world: path following through the world
 * (both followers), replacing a path mid-run, terrain, obstacles, the stuck
 * manager's teleport, determinism across backends, ordinary agents left
 * exactly as they were, and bad input. The vehicle model and the follower
 * themselves are tested in test_ground_vehicle.c and test_path_follow.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ecs/world.h"
#include "modules/registry.h"
#include "simd/vec.h"
#include "support.h"

#define DT (1.0f / 60.0f)

/* An L: 60 m east, then 60 m north. */
static const float L_PATH[] = {0, 0, 0, 20, 0, 0, 40, 0, 0, 60, 0, 0, 60, 20, 0, 60, 40, 0, 60, 60, 0};
#define L_COUNT 7

static shoal_agent_def_t ground_def(float x, float y, float heading, int32_t path)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.position[1] = y;
    d.heading = heading;
    d.ground.enabled = 1;
    d.ground.follow.path = path;
    return d;
}

static shoal_ground_status_t ground_status(shoal_world_t* w, shoal_agent_t id)
{
    shoal_ground_status_t g;
    cr_assert_eq(shoal_agent_get_ground(w, id, &g), SHOAL_OK, "%s", shoal_world_last_error(w));
    return g;
}

static shoal_agent_state_t agent_state(shoal_world_t* w, shoal_agent_t id)
{
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, id, &s), SHOAL_OK, "%s", shoal_world_last_error(w));
    return s;
}

/* Steps until the vehicle completes its path (or max_steps); returns the
 * largest per-frame cross-track error seen. */
static float drive_to_completion(shoal_world_t* w, shoal_agent_t id, int max_steps)
{
    float worst = 0.0f;
    for (int s = 0; s < max_steps; ++s) {
        step_n(w, 1, DT);
        shoal_ground_status_t g = ground_status(w, id);
        worst = fmaxf(worst, g.cte);
        if (g.completed) break;
    }
    return worst;
}

static void follow_l_path(shoal_follower_t follower)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    int32_t path = -1;
    cr_assert_eq(shoal_world_add_path(w, L_PATH, L_COUNT, 3.0f, &path), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    cr_assert_eq(path, 0);
    cr_assert_eq(shoal_world_path_count(w), 1);
    shoal_agent_def_t d = ground_def(0, 0, 0, path);
    d.ground.follow.follower = follower;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    float worst = drive_to_completion(w, id, 60 * 90);
    shoal_ground_status_t g = ground_status(w, id);
    shoal_agent_state_t st = agent_state(w, id);
    cr_assert(g.completed, "not completed: at (%g, %g), s = %g", (double)st.position[0],
              (double)st.position[1], (double)g.path_s);
    float mean_cte = g.cte_sum / (float)g.frames;
    cr_assert_lt(mean_cte, 0.5f, "mean cte %g m", (double)mean_cte);
    cr_assert_lt(worst, 2.5f, "worst cte %g m", (double)worst);
    cr_assert_geq(g.inside_frames, g.frames * 95 / 100, "inside %d of %d frames", g.inside_frames, g.frames);
    cr_assert_eq(g.stuck_events, 0);
    cr_assert_eq(g.teleports, 0);
    cr_assert_float_eq(g.drive_time, (float)g.frames * DT, 1e-3f);
    cr_assert(g.distance > 110.0f && g.distance < 130.0f, "distance %g m for a 120 m path",
              (double)g.distance);
    float dx = st.position[0] - 60.0f, dy = st.position[1] - 60.0f;
    cr_assert_lt(sqrtf(dx * dx + dy * dy), 6.0f, "ends near the last waypoint");
    /* The agent's heading and velocity are the vehicle's. */
    cr_assert_float_eq(st.heading, atan2f(st.velocity[1], st.velocity[0]), 0.2f);
    /* Completed: it brakes to a stop and stays. */
    step_n(w, 60 * 8, DT);
    g = ground_status(w, id);
    cr_assert_lt(fabsf(g.speed), 0.6f, "stopped after completion, speed %g", (double)g.speed);
    cr_assert_eq(g.frames, (int32_t)(g.drive_time / DT + 0.5f), "metrics stop at completion");
    shoal_world_destroy(w);
}

Test(ground_world, a_car_follows_an_l_path_to_completion) { follow_l_path(SHOAL_FOLLOWER_PROPOSED); }
Test(ground_world, the_baseline_follower_completes_it_too) { follow_l_path(SHOAL_FOLLOWER_BASELINE); }

Test(ground_world, the_def_round_trips_and_presets_are_named)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_ground_vehicle_t car;
    cr_assert_eq(shoal_ground_vehicle_preset("car", &car, NULL), SHOAL_OK);
    cr_assert_eq(d.ground.enabled, 0, "disabled by default");
    cr_assert_eq(memcmp(&d.ground.vehicle, &car, sizeof car), 0, "the car preset by default");
    cr_assert_eq(d.ground.follow.path, -1);
    cr_assert_eq(d.ground.follow.follower, SHOAL_FOLLOWER_PROPOSED);
    const char* names[] = {"buggy", "car", "apc", "truck", "tank", "hovercraft"};
    for (int i = 0; i < 6; ++i) {
        shoal_ground_vehicle_t v;
        cr_assert_eq(shoal_ground_vehicle_preset(names[i], &v, NULL), SHOAL_OK, "%s", names[i]);
        cr_assert_gt(v.mass, 0.0f);
    }
    shoal_error_t err;
    shoal_ground_vehicle_t untouched = car;
    cr_assert_eq(shoal_ground_vehicle_preset("bicycle", &untouched, &err), SHOAL_ERR_NOT_FOUND);
    cr_assert(strstr(err.message, "bicycle") && strstr(err.message, "hovercraft") &&
                  strstr(err.message, "buggy"),
              "%s", err.message);
    cr_assert_eq(memcmp(&untouched, &car, sizeof car), 0);
    cr_assert_eq(shoal_ground_vehicle_preset(NULL, &untouched, NULL), SHOAL_ERR_NOT_FOUND);

    shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(shoal_world_add_path(w, L_PATH, L_COUNT, 2.0f, NULL), SHOAL_OK);
    shoal_agent_def_t g = ground_def(1, 2, 0.5f, 0);
    cr_assert_eq(shoal_ground_vehicle_preset("tank", &g.ground.vehicle, NULL), SHOAL_OK);
    g.ground.follow.follower = SHOAL_FOLLOWER_BASELINE;
    g.ground.follow.kp = 0.7f;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &g, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_def_t got;
    cr_assert_eq(shoal_agent_get_def(w, id, &got), SHOAL_OK);
    cr_assert_eq(got.ground.enabled, 1);
    cr_assert_eq(memcmp(&got.ground.vehicle, &g.ground.vehicle, sizeof g.ground.vehicle), 0);
    cr_assert_eq(memcmp(&got.ground.follow, &g.ground.follow, sizeof g.ground.follow), 0);
    /* The ordinary agent next to it reports no ground part. */
    shoal_agent_def_t plain = shoal_agent_default_def();
    shoal_agent_t pid;
    cr_assert_eq(shoal_agent_add(w, &plain, &pid), SHOAL_OK);
    cr_assert_eq(shoal_agent_get_def(w, pid, &got), SHOAL_OK);
    cr_assert_eq(got.ground.enabled, 0);
    /* Disabling turns it back into an ordinary agent. */
    shoal_ground_t off = g.ground;
    off.enabled = 0;
    cr_assert_eq(shoal_agent_set_ground(w, id, &off), SHOAL_OK);
    shoal_ground_status_t gs;
    cr_assert_eq(shoal_agent_get_ground(w, id, &gs), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_world_destroy(w);
}

/* ---- terrain ------------------------------------------------------------- */

/* A 200 m square of terrain, 5 m cells: a 10 % grade up along +x, and a
 * bump around (100, 60). */
#define TN 41
static float terrain_heights[TN * TN];
static void make_terrain(shoal_terrain_t* t)
{
    for (int j = 0; j < TN; ++j)
        for (int i = 0; i < TN; ++i) {
            float x = -50.0f + 5.0f * (float)i, y = -50.0f + 5.0f * (float)j;
            float bx = x - 100.0f, by = y - 60.0f;
            terrain_heights[j * TN + i] = 0.1f * x + 4.0f * expf(-(bx * bx + by * by) / 400.0f);
        }
    t->nx = TN;
    t->ny = TN;
    t->origin[0] = -50.0f;
    t->origin[1] = -50.0f;
    t->cell = 5.0f;
    t->heights = terrain_heights;
}

Test(ground_world, in_3d_a_vehicle_drives_on_the_terrain)
{
    shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    shoal_terrain_t t;
    make_terrain(&t);
    cr_assert_eq(shoal_world_set_terrain(w, &t), SHOAL_OK, "%s", shoal_world_last_error(w));
    /* Heading +x + 45 degrees up the grade, on manual inputs. */
    shoal_agent_def_t d = ground_def(0, 0, 0.7853982f, -1);
    d.position[2] = 50.0f; /* put on the ground at once */
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_state_t st = agent_state(w, id);
    cr_assert_float_eq(st.position[2], 0.0f, 1e-4f, "z on the ground at (0, 0): %g", (double)st.position[2]);
    cr_assert_eq(shoal_agent_set_drive(w, id, 0.6f, 0.1f), SHOAL_OK);
    for (int s = 0; s < 60 * 10; ++s) {
        shoal_agent_state_t prev = st;
        step_n(w, 1, DT);
        st = agent_state(w, id);
        float x = st.position[0], y = st.position[1];
        /* The agent's velocity is how it moves (speeds along the ground
         * projected to the plane, plus the climb). */
        for (int k = 0; k < 3 && s > 0; ++k)
            cr_assert_float_eq((st.position[k] - prev.position[k]) / DT, st.velocity[k], 0.1f,
                               "step %d axis %d: moved at %g, velocity %g", s, k,
                               (double)((st.position[k] - prev.position[k]) / DT), (double)st.velocity[k]);
        cr_assert(x > -50.0f && x < 150.0f && y > -50.0f && y < 150.0f, "stays on the grid");
        /* Compare with the planar grade only away from the bump. */
        float bx = x - 100.0f, by = y - 60.0f;
        if (bx * bx + by * by > 6400.0f)
            cr_assert_float_eq(st.position[2], 0.1f * x, 0.05f, "z %g at x %g", (double)st.position[2],
                               (double)x);
        /* Forward and left axes lie in the ground plane: normal . axis = 0. */
        quat q = {st.orientation[0], st.orientation[1], st.orientation[2], st.orientation[3]};
        vec3 f = quat_forward(q), l = quat_rotate(q, (vec3){0, 1, 0});
        vec3 n = vec3_normalize((vec3){-0.1f, 0.0f, 1.0f});
        if (bx * bx + by * by > 6400.0f) {
            cr_assert_lt(fabsf(vec3_dot(f, n)), 2e-3f, "forward leaves the ground: %g",
                         (double)vec3_dot(f, n));
            cr_assert_lt(fabsf(vec3_dot(l, n)), 2e-3f, "left leaves the ground: %g", (double)vec3_dot(l, n));
        }
        cr_assert_float_eq(atan2f(f.y, f.x), st.heading, 1e-4f, "heading is the yaw of the attitude");
    }
    shoal_ground_status_t g = ground_status(w, id);
    cr_assert_gt(g.speed, 2.0f, "it drives uphill (%g m/s)", (double)g.speed);
    cr_assert_eq(g.path, -1);
    cr_assert_float_eq(g.throttle, 0.6f, 1e-6f, "manual inputs applied");
    cr_assert_float_eq(g.steering, 0.1f, 1e-6f);
    /* The velocity climbs with the ground. */
    cr_assert_float_eq(st.velocity[2], 0.1f * st.velocity[0], 0.05f);
    /* Flat again: the next step puts it at z = 0. */
    cr_assert_eq(shoal_world_set_terrain(w, NULL), SHOAL_OK);
    step_n(w, 1, DT);
    cr_assert_eq(agent_state(w, id).position[2], 0.0f);
    shoal_world_destroy(w);
}

/* ---- obstacles and the stuck manager -------------------------------------- */

Test(ground_world, a_vehicle_driving_into_an_obstacle_stops_at_it)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float center[3] = {40, 0, 0};
    cr_assert_eq(shoal_world_add_obstacle(w, center, 3.0f, NULL), SHOAL_OK);
    shoal_agent_def_t d = ground_def(0, 0, 0, -1);
    const float r = d.ground.vehicle.radius;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_drive(w, id, 1.0f, 0.0f), SHOAL_OK);
    int touched = 0;
    for (int s = 0; s < 60 * 15; ++s) {
        step_n(w, 1, DT);
        shoal_agent_state_t st = agent_state(w, id);
        cr_assert_leq(st.position[0], 40.0f - 3.0f - r + 1e-3f, "inside the obstacle at x = %g",
                      (double)st.position[0]);
        touched |= ground_status(w, id).contact;
    }
    shoal_ground_status_t g = ground_status(w, id);
    shoal_agent_state_t st = agent_state(w, id);
    cr_assert(touched && g.contact, "pressed against the obstacle");
    cr_assert_float_eq(st.position[0], 40.0f - 3.0f - r, 0.05f, "stopped at it: x = %g",
                       (double)st.position[0]);
    cr_assert_lt(fabsf(g.speed), 1e-3f, "no speed into it (%g)", (double)g.speed);
    cr_assert_lt(fabsf(st.velocity[0]), 1e-3f);
    shoal_world_destroy(w);
}

Test(ground_world, a_boxed_in_vehicle_is_teleported_and_counted)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float path[] = {0, 0, 0, 100, 0, 0};
    cr_assert_eq(shoal_world_add_path(w, path, 2, 2.0f, NULL), SHOAL_OK);
    /* Eight posts touching the car all round, 12 m off the path: it cannot
     * move. */
    const float touch = ground_def(0, 12, 0, 0).ground.vehicle.radius + 1.5f;
    for (int k = 0; k < 8; ++k) {
        float a = (float)k * 0.7853982f;
        const float c[3] = {touch * cosf(a), 12.0f + touch * sinf(a), 0};
        cr_assert_eq(shoal_world_add_obstacle(w, c, 1.5f, NULL), SHOAL_OK);
    }
    shoal_agent_def_t d = ground_def(0, 12, 0, 0);
    d.ground.follow.stuck_window = 1.0f;
    d.ground.follow.reverse_time = 0.5f;
    d.ground.follow.max_recoveries = 2;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    int stuck_seen = 0;
    shoal_ground_status_t g;
    for (int s = 0; s < 60 * 10; ++s) {
        cr_assert_float_eq(agent_state(w, id).position[1], 12.0f, 1e-3f, "boxed in");
        step_n(w, 1, DT);
        g = ground_status(w, id);
        stuck_seen |= g.stuck;
        if (g.teleports > 0) break;
    }
    cr_assert(stuck_seen, "recoveries ran first");
    cr_assert_eq(g.teleports, 1, "teleported once");
    cr_assert_geq(g.stuck_events, 3, "two failed recoveries, then the teleport (%d events)", g.stuck_events);
    cr_assert_gt(g.stuck_frames, 0);
    /* Put on the path 10 m ahead of its progress (s = 0), along it, at rest. */
    shoal_agent_state_t st = agent_state(w, id);
    cr_assert_float_eq(st.position[0], 10.0f, 1e-3f);
    cr_assert_float_eq(st.position[1], 0.0f, 1e-3f);
    cr_assert_float_eq(st.heading, 0.0f, 1e-3f, "along the path");
    cr_assert_float_eq(g.path_s, 10.0f, 1e-3f);
    /* Free again, it drives on; its counters stay. */
    step_n(w, 60 * 3, DT);
    g = ground_status(w, id);
    cr_assert_gt(g.speed, 2.0f);
    cr_assert_eq(g.teleports, 1);
    cr_assert_gt(agent_state(w, id).position[0], 5.0f);
    shoal_world_destroy(w);
}

/* ---- paths replaced mid-run --------------------------------------------- */

Test(ground_world, set_path_replaces_a_path_and_the_vehicle_follows_the_new_one)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float east[] = {0, 0, 0, 200, 0, 0};
    int32_t pid;
    cr_assert_eq(shoal_world_add_path(w, east, 2, 2.0f, &pid), SHOAL_OK);
    shoal_agent_def_t d = ground_def(0, 0, 0, pid);
    shoal_agent_t id, other;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    d.position[0] = -30.0f; /* a second vehicle on the same path, behind */
    cr_assert_eq(shoal_agent_add(w, &d, &other), SHOAL_OK);
    step_n(w, 60 * 5, DT);
    shoal_agent_state_t st = agent_state(w, id);
    shoal_ground_status_t before = ground_status(w, id);
    cr_assert_gt(st.position[0], 15.0f, "driving east");
    cr_assert_float_eq(before.path_s, st.position[0], 0.5f);
    /* New path: on from here to the east a little, then north. */
    float x = st.position[0];
    const float north[] = {x - 10.0f, 0, 0, x + 20.0f, 0, 0, x + 20.0f, 40.0f, 0, x + 20.0f, 80.0f, 0};
    uint64_t h = shoal_world_state_hash(w);
    cr_assert_eq(shoal_world_set_path(w, pid, north, 4, 2.5f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_neq(shoal_world_state_hash(w), h, "the hash sees the new path");
    shoal_ground_status_t after = ground_status(w, id);
    cr_assert_float_eq(after.path_s, 10.0f, 0.5f, "progress found on the new path: %g", (double)after.path_s);
    cr_assert_eq(after.frames, before.frames, "run metrics are kept");
    cr_assert_eq(after.completed, 0);
    float worst = drive_to_completion(w, id, 60 * 60);
    shoal_ground_status_t g = ground_status(w, id);
    st = agent_state(w, id);
    cr_assert(g.completed, "completed the new path");
    cr_assert_lt(worst, 4.0f);
    float dx = st.position[0] - (x + 20.0f), dy = st.position[1] - 80.0f;
    cr_assert_lt(sqrtf(dx * dx + dy * dy), 6.0f, "at the new end (%g, %g)", (double)st.position[0],
                 (double)st.position[1]);
    /* set_path on the agent restarts the run, even on the same path. */
    cr_assert_eq(shoal_agent_set_path(w, id, pid), SHOAL_OK, "%s", shoal_world_last_error(w));
    g = ground_status(w, id);
    cr_assert_eq(g.frames, 0);
    cr_assert_eq(g.completed, 0);
    cr_assert_eq(g.path_s, 0.0f);
    /* -1: manual driving on the (zero) drive inputs. */
    cr_assert_eq(shoal_agent_set_path(w, id, -1), SHOAL_OK);
    step_n(w, 2, DT);
    g = ground_status(w, id);
    cr_assert_eq(g.path, -1);
    cr_assert_eq(g.throttle, 0.0f);
    cr_assert_eq(g.frames, 0, "no metrics without a path");
    shoal_world_destroy(w);
}

Test(ground_world, a_teleported_vehicle_takes_its_pose_and_finds_its_progress)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float east[] = {0, 0, 0, 200, 0, 0};
    cr_assert_eq(shoal_world_add_path(w, east, 2, 2.0f, NULL), SHOAL_OK);
    shoal_agent_def_t d = ground_def(0, 0, 0, 0);
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    step_n(w, 60, DT);
    /* 120 m ahead at 12 m/s: above vehicle.max_speed (5), within the car's
     * governor (30). */
    const float p[3] = {120, 0.5f, 0}, v[3] = {12, 0, 0};
    cr_assert_eq(shoal_agent_teleport(w, id, p, v, 0.0f, NULL), SHOAL_OK);
    shoal_ground_status_t g = ground_status(w, id);
    cr_assert_float_eq(g.path_s, 120.0f, 1e-3f, "progress found at %g", (double)g.path_s);
    cr_assert_float_eq(g.speed, 12.0f, 1e-4f);
    cr_assert_float_eq(agent_state(w, id).velocity[0], 12.0f, 1e-4f);
    step_n(w, 30, DT);
    g = ground_status(w, id);
    cr_assert_gt(g.path_s, 123.0f, "drives on from there (s = %g)", (double)g.path_s);
    cr_assert_lt(g.cte, 1.0f);
    shoal_world_destroy(w);
}

/* ---- determinism and ordinary agents --------------------------------------- */

/* A 3D world with terrain and obstacles: ordinary agents of every kind
 * (seek, flee, arrive, depart; some flocking) and ground vehicles of every
 * preset on paths over the terrain, with removals and additions on the
 * way (the spatial hash reorders the table every 32 steps, the default). */
static uint64_t mixed_ground_hash(int threads, shoal_backend_t backend, int check_rows)
{
    shoal_world_t* w = make_world(3, threads, backend);
    shoal_terrain_t t;
    make_terrain(&t);
    cr_assert_eq(shoal_world_set_terrain(w, &t), SHOAL_OK);
    populate_mixed(w, 3000, 11);
    for (int i = 0; i < 200; ++i) { /* flockers, so the spatial hash reorders */
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = rng_range(3, (uint64_t)i, 0, 0, -40.0f, 40.0f);
        d.position[1] = rng_range(3, (uint64_t)i, 0, 1, -40.0f, 40.0f);
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    const float rock[3] = {30, 30, 0};
    cr_assert_eq(shoal_world_add_obstacle(w, rock, 4.0f, NULL), SHOAL_OK);
    const char* presets[] = {"buggy", "car", "apc", "truck", "tank", "hovercraft"};
    shoal_agent_t vehicles[24];
    for (int p = 0; p < 4; ++p) {
        float xyz[4 * 3];
        for (int k = 0; k < 4; ++k) {
            float x = -30.0f + 30.0f * (float)k, y = -20.0f + 25.0f * (float)p + 10.0f * (float)(k % 2);
            xyz[3 * k] = x;
            xyz[3 * k + 1] = y;
            xyz[3 * k + 2] = 0.1f * x;
        }
        cr_assert_eq(shoal_world_add_path(w, xyz, 4, 3.0f, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int i = 0; i < 24; ++i) {
        shoal_agent_def_t d = ground_def(-30.0f + (float)(i % 3), -20.0f + 25.0f * (float)(i % 4), 0.0f,
                                         i % 5 == 4 ? -1 : i % 4);
        cr_assert_eq(shoal_ground_vehicle_preset(presets[i % 6], &d.ground.vehicle, NULL), SHOAL_OK);
        d.ground.follow.follower = i % 2 ? SHOAL_FOLLOWER_BASELINE : SHOAL_FOLLOWER_PROPOSED;
        cr_assert_eq(shoal_agent_add(w, &d, &vehicles[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
        if (d.ground.follow.path < 0) shoal_agent_set_drive(w, vehicles[i], 0.5f, (float)(i % 3) - 1.0f);
    }
    step_n(w, 40, DT);
    for (int i = 0; i < 24; i += 5) cr_assert_eq(shoal_agent_remove(w, vehicles[i]), SHOAL_OK);
    shoal_agent_def_t late = ground_def(0, 0, 1.0f, 2);
    cr_assert_eq(shoal_agent_add(w, &late, NULL), SHOAL_OK);
    step_n(w, 80, DT);
    if (check_rows) {
        /* The component's rows point at their agents' rows, and come in
         * agent-row order after a reorder. */
        const component_t* c = &w->comps[COMP_GROUND];
        const uint32_t* slots = table_slots(&c->table);
        const int32_t* rows = TABLE_COL(&c->table, int32_t, COMP_ROW);
        cr_assert_eq(c->table.count, 24 - 5 + 1);
        for (int32_t r = 0; r < c->table.count; ++r) {
            cr_assert_eq(rows[r], w->slots[slots[r]].row);
            cr_assert_eq(table_slots(&w->agents)[rows[r]], slots[r]);
            if (r > 0) cr_assert_gt(rows[r], rows[r - 1], "component rows in agent-row order");
        }
    }
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

Test(ground_world, one_hash_for_serial_and_openmp, .timeout = 120)
{
    uint64_t ref = mixed_ground_hash(1, SHOAL_BACKEND_SERIAL, 1);
    cr_assert_eq(mixed_ground_hash(1, SHOAL_BACKEND_OPENMP, 0), ref, "openmp, 1 thread");
    cr_assert_eq(mixed_ground_hash(2, SHOAL_BACKEND_OPENMP, 1), ref, "openmp, 2 threads");
    cr_assert_eq(mixed_ground_hash(3, SHOAL_BACKEND_OPENMP, 0), ref, "openmp, 3 threads");
}

/* Ordinary agents (seek/flee/arrive/depart, wander, flockers) in a world
 * with ground vehicles driving among them in storage, and in one where each
 * vehicle is replaced by a parked ordinary agent: bit-identical positions,
 * velocities and headings. Placeholders keep every ordinary agent's slot
 * (wander's random draws are keyed by it). The small torus (79 x 79 cells
 * for about 2,000 agents) indexes its cells directly, so the vehicles, 12 m
 * from every flocker, never share a neighbor candidate list with them. (In
 * unbounded space, or a torus with many more cells than agents, cells are
 * hashed into buckets and a far agent can land in a flocker's bucket; that
 * changes the rounding of its neighbor sum: a property of the neighbor
 * kernel, whatever the far agent is.) */
static shoal_world_t* ordinary_world(int with_vehicles, shoal_agent_t* ids, int n)
{
    shoal_world_t* w = make_shared_torus();
    for (int i = 0; i < n; ++i) {
        shoal_agent_def_t d = shared_ordinary_def(i);
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK);
        if (i % 50 == 0) { /* interleaved in storage with the others */
            shoal_agent_def_t g = ground_def(-60.0f + (float)(i / 50) * 2.0f, 63.0f, 0.0f, 0);
            g.ground.enabled = with_vehicles;
            if (with_vehicles) g.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f; /* ignored by a vehicle */
            cr_assert_eq(shoal_agent_add(w, &g, NULL), SHOAL_OK);
        }
    }
    step_n(w, 120, DT);
    return w;
}

Test(ground_world, ordinary_agents_move_exactly_as_without_ground_vehicles, .timeout = 60)
{
    enum { N = 2000 };
    static shoal_agent_t a[N], b[N];
    shoal_world_t* with = ordinary_world(1, a, N);
    shoal_world_t* without = ordinary_world(0, b, N);
    cr_assert_eq(shoal_world_agent_count(with), shoal_world_agent_count(without));
    for (int i = 0; i < N; ++i) {
        shoal_agent_state_t sa = agent_state(with, a[i]), sb = agent_state(without, b[i]);
        cr_assert_eq(memcmp(sa.position, sb.position, sizeof sa.position), 0, "agent %d moved otherwise", i);
        cr_assert_eq(memcmp(sa.velocity, sb.velocity, sizeof sa.velocity), 0, "agent %d", i);
        cr_assert_eq(sa.heading, sb.heading, "agent %d", i);
    }
    /* ... while the vehicles did drive. */
    static float pos[3 * (N + N / 50)], vel[3 * (N + N / 50)];
    shoal_agent_batch_t batch = {.positions = pos, .velocities = vel};
    int32_t got = 0, driving = 0;
    cr_assert_eq(shoal_world_read_agents(with, &batch, N + N / 50, &got), SHOAL_OK);
    for (int32_t i = 0; i < got; ++i)
        if (pos[3 * i + 1] > 60.0f && fabsf(vel[3 * i]) + fabsf(vel[3 * i + 1]) > 1.0f) driving++;
    cr_assert_eq(driving, N / 50, "%d of %d vehicles driving", driving, N / 50);
    shoal_world_destroy(with);
    shoal_world_destroy(without);
}

Test(ground_world, idle_ground_systems_leave_the_hash_alone)
{
    /* No ground vehicle, no path, no terrain: the ground systems do nothing
     * and the hash is the one with them switched off. */
    uint64_t h[2];
    for (int off = 0; off < 2; ++off) {
        shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
        populate_mixed(w, 500, 4);
        if (off) {
            cr_assert_eq(shoal_world_set_system_enabled(w, "path_follow", 0), SHOAL_OK);
            cr_assert_eq(shoal_world_set_system_enabled(w, "ground_vehicle", 0), SHOAL_OK);
        }
        step_n(w, 30, DT);
        h[off] = shoal_world_state_hash(w);
        assert_systems_idle(w, "ground", "path_follow");
        shoal_world_destroy(w);
    }
    cr_assert_eq(h[0], h[1]);
}

/* ---- bad input ----------------------------------------------------------- */

#define EXPECT_FAIL(call, status, needle)                                                                    \
    do {                                                                                                     \
        cr_assert_eq((call), (status), "%s: %s", #call, shoal_world_last_error(w));                          \
        cr_assert(strstr(shoal_world_last_error(w), (needle)), "%s: message '%s' lacks '%s'", #call,         \
                  shoal_world_last_error(w), (needle));                                                      \
        cr_assert_eq(shoal_world_state_hash(w), h, "%s changed the world", #call);                           \
    } while (0)

Test(ground_world, bad_input_is_rejected_and_changes_nothing)
{
    shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    int32_t pid;
    cr_assert_eq(shoal_world_add_path(w, L_PATH, L_COUNT, 2.0f, &pid), SHOAL_OK);
    shoal_terrain_t t;
    make_terrain(&t);
    cr_assert_eq(shoal_world_set_terrain(w, &t), SHOAL_OK);
    shoal_agent_def_t gd = ground_def(0, 0, 0, pid);
    shoal_agent_t car, plain;
    cr_assert_eq(shoal_agent_add(w, &gd, &car), SHOAL_OK);
    shoal_agent_def_t pd = shoal_agent_default_def();
    cr_assert_eq(shoal_agent_add(w, &pd, &plain), SHOAL_OK);
    step_n(w, 10, DT);
    const uint64_t h = shoal_world_state_hash(w);

    /* Degenerate paths. */
    const float one[] = {1, 2, 3};
    const float repeated[] = {0, 0, 0, 5, 0, 0, 5, 0, 0};
    const float with_nan[] = {0, 0, 0, NAN, 1, 0};
    EXPECT_FAIL(shoal_world_add_path(w, L_PATH, 0, 2.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT, "empty");
    EXPECT_FAIL(shoal_world_add_path(w, NULL, 0, 2.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT, "empty");
    EXPECT_FAIL(shoal_world_add_path(w, one, 1, 2.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT, "one waypoint");
    EXPECT_FAIL(shoal_world_add_path(w, repeated, 3, 2.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                "waypoint 2 repeats waypoint 1");
    EXPECT_FAIL(shoal_world_add_path(w, with_nan, 2, 2.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT, "NaN");
    EXPECT_FAIL(shoal_world_add_path(w, L_PATH, L_COUNT, 0.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                "half_width");
    EXPECT_FAIL(shoal_world_set_path(w, pid, repeated, 3, 2.0f), SHOAL_ERR_INVALID_ARGUMENT, "repeats");
    EXPECT_FAIL(shoal_world_set_path(w, 7, L_PATH, L_COUNT, 2.0f), SHOAL_ERR_NOT_FOUND, "no path with id 7");
    cr_assert_eq(shoal_world_path_count(w), 1);

    /* Unknown path ids. */
    EXPECT_FAIL(shoal_agent_set_path(w, car, 3), SHOAL_ERR_INVALID_ARGUMENT, "ground.follow.path");
    EXPECT_FAIL(shoal_agent_set_path(w, car, -2), SHOAL_ERR_INVALID_ARGUMENT, "ground.follow.path");
    shoal_agent_def_t bad = ground_def(0, 0, 0, 5);
    EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_INVALID_ARGUMENT, "ground.follow.path");
    bad = ground_def(0, 0, 0, -1);
    bad.ground.vehicle.wheelbase = 0.0f;
    EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_INVALID_ARGUMENT, "ground.vehicle.wheelbase");
    bad = ground_def(0, 0, 0, -1);
    bad.ground.follow.a_lat = NAN;
    EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_INVALID_ARGUMENT, "ground.follow.a_lat");
    bad = ground_def(0, 0, 0, -1);
    bad.ground.follow.follower = (shoal_follower_t)7;
    EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_INVALID_ARGUMENT, "ground.follow.follower");
    bad = ground_def(0, 0, 0, -1);
    bad.ground.enabled = 2;
    EXPECT_FAIL(shoal_agent_add(w, &bad, NULL), SHOAL_ERR_INVALID_ARGUMENT, "ground.enabled");
    shoal_ground_t g = gd.ground;
    g.vehicle.max_steer = 2.0f;
    EXPECT_FAIL(shoal_agent_set_ground(w, car, &g), SHOAL_ERR_INVALID_ARGUMENT, "ground.vehicle.max_steer");

    /* Terrain. */
    float bumpy[4] = {0, 1, NAN, 0};
    shoal_terrain_t bt = {.nx = 2, .ny = 2, .origin = {0, 0}, .cell = 1.0f, .heights = bumpy};
    EXPECT_FAIL(shoal_world_set_terrain(w, &bt), SHOAL_ERR_INVALID_ARGUMENT, "heights[2]");
    bumpy[2] = 0.0f;
    bt.cell = 0.0f;
    EXPECT_FAIL(shoal_world_set_terrain(w, &bt), SHOAL_ERR_INVALID_ARGUMENT, "cell");
    bt.cell = 1.0f;
    bt.ny = 1;
    EXPECT_FAIL(shoal_world_set_terrain(w, &bt), SHOAL_ERR_INVALID_ARGUMENT, ">= 2");
    bt.ny = 2;
    bt.heights = NULL;
    EXPECT_FAIL(shoal_world_set_terrain(w, &bt), SHOAL_ERR_INVALID_ARGUMENT, "heights is NULL");
    bt.heights = bumpy;
    bt.origin[0] = INFINITY;
    EXPECT_FAIL(shoal_world_set_terrain(w, &bt), SHOAL_ERR_INVALID_ARGUMENT, "origin[0]");

    /* Driving. */
    EXPECT_FAIL(shoal_agent_set_drive(w, plain, 1.0f, 0.0f), SHOAL_ERR_INVALID_ARGUMENT,
                "not a ground vehicle");
    EXPECT_FAIL(shoal_agent_set_drive(w, car, NAN, 0.0f), SHOAL_ERR_INVALID_ARGUMENT, "finite");
    EXPECT_FAIL(shoal_agent_set_drive(w, car, 0.0f, INFINITY), SHOAL_ERR_INVALID_ARGUMENT, "finite");
    EXPECT_FAIL(shoal_agent_set_path(w, plain, pid), SHOAL_ERR_INVALID_ARGUMENT, "not a ground vehicle");
    shoal_ground_status_t gs;
    EXPECT_FAIL(shoal_agent_get_ground(w, plain, &gs), SHOAL_ERR_INVALID_ARGUMENT, "not a ground vehicle");
    EXPECT_FAIL(shoal_agent_get_ground(w, car, NULL), SHOAL_ERR_INVALID_ARGUMENT, "NULL");
    shoal_agent_t gone;
    cr_assert_eq(shoal_agent_add(w, &gd, &gone), SHOAL_OK);
    cr_assert_eq(shoal_agent_remove(w, gone), SHOAL_OK);
    EXPECT_FAIL(shoal_agent_set_drive(w, gone, 0.5f, 0.0f), SHOAL_ERR_STALE_HANDLE, "stale");
    EXPECT_FAIL(shoal_agent_get_ground(w, gone, &gs), SHOAL_ERR_STALE_HANDLE, "stale");

    /* Out-of-range inputs are clamped, not rejected. */
    cr_assert_eq(shoal_agent_set_path(w, car, -1), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_drive(w, car, 5.0f, -3.0f), SHOAL_OK);
    step_n(w, 1, DT);
    gs = ground_status(w, car);
    cr_assert_eq(gs.throttle, 1.0f);
    cr_assert_eq(gs.steering, -1.0f);
    shoal_world_destroy(w);
}

/* From inside a step paths and terrain cannot change; adds are queued and
 * their ground part applies when they go live. */
static shoal_status_t in_step_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    shoal_agent_t* spawned = (shoal_agent_t*)ctx;
    const float pts[] = {0, 0, 0, 10, 0, 0};
    cr_assert_eq(shoal_world_add_path(w, pts, 2, 1.0f, NULL), SHOAL_ERR_BUSY);
    cr_assert_eq(shoal_world_set_path(w, 0, pts, 2, 1.0f), SHOAL_ERR_BUSY);
    cr_assert_eq(shoal_world_set_terrain(w, NULL), SHOAL_ERR_BUSY);
    if (shoal_agent_is_null(*spawned)) {
        shoal_agent_def_t d = ground_def(5, 5, 0, -1);
        cr_assert_eq(shoal_agent_add(w, &d, spawned), SHOAL_OK);
        cr_assert_eq(shoal_agent_set_drive(w, *spawned, 1.0f, 0.0f), SHOAL_ERR_BUSY);
        cr_assert_eq(shoal_agent_set_path(w, *spawned, 0), SHOAL_OK, "edits the queued def");
    }
    return SHOAL_OK;
}

Test(ground_world, changes_from_inside_a_step)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float pts[] = {5, 5, 0, 50, 5, 0};
    cr_assert_eq(shoal_world_add_path(w, pts, 2, 1.0f, NULL), SHOAL_OK);
    shoal_agent_t spawned = {0, 0, 0};
    cr_assert_eq(shoal_world_add_system(w, "probe", SHOAL_STAGE_DECIDE, in_step_system, &spawned), SHOAL_OK);
    step_n(w, 60, DT);
    shoal_ground_status_t g = ground_status(w, spawned);
    cr_assert_eq(g.path, 0);
    cr_assert_gt(g.speed, 1.0f, "it follows the path set while it was queued");
    shoal_world_destroy(w);
}
