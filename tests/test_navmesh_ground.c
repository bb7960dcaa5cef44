/* Ground vehicles on navigation meshes (src/modules/navmesh/ with
 * src/modules/ground/): a car with the NAVMESH weight and a goal takes its
 * whole path from the mesh inside the step and its follower follows it.
 * A car in the pocket of an L and of a U wall reaches a goal beyond it with
 * no host call during the run, never nearer a wall than its radius; a
 * second goal given mid-run is reached; a path longer than the 16 points a
 * vehicle keeps is cut and planned again as it goes; a car put off its
 * path plans again; one state hash for 1, 2 and 4 threads and across a
 * snapshot; walkers and cars on one mesh; bad input refused with the world
 * unchanged. In a build without Recast and Detour every test checks the
 * documented refusal instead.
 *
 * NAVMESH_FIGURES=1 prints the measured figures docs/navmesh.md quotes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/snapshot.h>

#include "support.h"

static const float DT = 1.0f / 60.0f;

static shoal_agent_def_t car_def(float x, float y, float heading, float gx, float gy)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.position[1] = y;
    d.heading = heading;
    d.ground.enabled = 1;
    d.weights[SHOAL_BEHAVIOR_NAVMESH] = 1.0f;
    d.navmesh.goal[0] = gx;
    d.navmesh.goal[1] = gy;
    return d;
}

/* Without Recast and Detour a car with the NAVMESH weight is refused,
 * saying why, and nothing is added. Returns 1 when they are there. */
static int with_recast(void)
{
    if (shoal_navmesh_available()) return 1;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    uint64_t h = shoal_world_state_hash(w);
    shoal_agent_def_t d = car_def(0, 0, 0, 10, 10);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_NOT_FOUND);
    cr_assert(strstr(shoal_world_last_error(w), "librecast-dev"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_agent_count(w), 0);
    cr_assert_eq(shoal_world_state_hash(w), h);
    shoal_world_destroy(w);
    return 0;
}

static void add_wall(shoal_world_t* w, const float* p, int n)
{
    cr_assert_eq(shoal_world_add_wall(w, p, n, 0, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
}

static float seg_dist(const float* s, float x, float y)
{
    float dx = s[2] - s[0], dy = s[3] - s[1];
    float t = ((x - s[0]) * dx + (y - s[1]) * dy) / (dx * dx + dy * dy);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return hypotf(s[0] + t * dx - x, s[1] + t * dy - y);
}

/* The distance from (x, y) to the nearest wall segment of the world. */
static float wall_dist(shoal_world_t* w, float x, float y)
{
    float seg[4 * 64];
    int32_t n = 0;
    cr_assert_eq(shoal_world_wall_segments(w, seg, 64, &n), SHOAL_OK);
    cr_assert_leq(n, 64);
    float best = INFINITY;
    for (int32_t k = 0; k < n; ++k) best = fminf(best, seg_dist(seg + 4 * k, x, y));
    return best;
}

/* A mesh for cars over [-b, b]^2: cells of 0.25 m, 4 m from the walls
 * (the car's radius, 1.5 m, and what its follower cuts off a corner). */
static void car_mesh(shoal_world_t* w, float b)
{
    shoal_navmesh_params_t p = shoal_navmesh_params_default();
    const float bounds[4] = {-b, -b, b, b};
    memcpy(p.bounds, bounds, sizeof bounds);
    p.cell = 0.25f;
    p.agent_radius = 4.0f;
    p.off_path_distance = 3.0f;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
}

typedef struct drive_t {
    float seconds; /* until its follower completed at the goal; -1: not in time */
    float nearest; /* closest approach to a wall, m */
    int32_t plans; /* paths planned in the world meanwhile */
    float x, y;    /* where it ended */
    int32_t stuck; /* stuck events */
    int32_t teleports;
} drive_t;

/* Step until the car has arrived (its navmesh status, with its follower
 * completed) or `seconds` pass, with no other call on the world. */
static drive_t drive(shoal_world_t* w, shoal_agent_t car, float seconds)
{
    drive_t r = {.seconds = -1.0f, .nearest = INFINITY};
    shoal_agent_state_t s;
    shoal_ground_status_t g;
    shoal_navmesh_stats_t st;
    for (int k = 0; k < (int)(seconds / DT); ++k) {
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_agent_get_state(w, car, &s), SHOAL_OK);
        r.nearest = fminf(r.nearest, wall_dist(w, s.position[0], s.position[1]));
        cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
        r.plans += st.replans;
        cr_assert_eq(shoal_agent_get_ground(w, car, &g), SHOAL_OK);
        if (g.completed && st.arrived >= 1) {
            r.seconds = (float)(k + 1) * DT;
            break;
        }
    }
    r.x = s.position[0];
    r.y = s.position[1];
    r.stuck = g.stuck_events;
    r.teleports = g.teleports;
    return r;
}

static void figures(const char* what, const drive_t* r)
{
    if (getenv("NAVMESH_FIGURES"))
        fprintf(stderr,
                "%s: %.2f s, nearest wall %.2f m, %d plans, stuck %d, teleports %d, at (%.2f, %.2f)\n", what,
                (double)r->seconds, (double)r->nearest, (int)r->plans, (int)r->stuck, (int)r->teleports,
                (double)r->x, (double)r->y);
}

/* An L whose pocket holds the start: (-30, 5) to (5, 5) to (5, -30). */
static const float POCKET_L[] = {-30, 5, 5, 5, 5, -30};
/* A U open to the west: (-30, 12) to (5, 12) to (5, -12) to (-30, -12). */
static const float POCKET_U[] = {-30, 12, 5, 12, 5, -12, -30, -12};

Test(navmesh_ground, a_car_in_an_L_pocket_reaches_a_goal_beyond_it_then_a_second_goal_given_mid_run,
     .timeout = 120)
{
    if (!with_recast()) return;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_wall(w, POCKET_L, 3);
    car_mesh(w, 40);
    shoal_agent_def_t d = car_def(-20, -20, 0.0f, 20, 20);
    shoal_agent_t car;
    cr_assert_eq(shoal_agent_add(w, &d, &car), SHOAL_OK, "%s", shoal_world_last_error(w));
    const float radius = d.ground.vehicle.radius;
    drive_t r = drive(w, car, 60);
    figures("L pocket", &r);
    cr_assert_geq(r.seconds, 0.0f, "not arrived in 60 s: at (%g, %g)", (double)r.x, (double)r.y);
    cr_assert_lt(hypotf(r.x - 20, r.y - 20), 4.0f, "stopped at (%g, %g), short of the goal", (double)r.x,
                 (double)r.y);
    cr_assert_gt(r.nearest, radius, "came %g m from the wall, its radius %g m", (double)r.nearest,
                 (double)radius);
    cr_assert_gt(r.plans, 0);
    cr_assert_eq(r.teleports, 0);
    /* it stays stopped at its goal */
    for (int k = 0; k < 120; ++k) cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK);
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, car, &s), SHOAL_OK);
    cr_assert_lt(hypotf(s.velocity[0], s.velocity[1]), 0.5f);

    /* Off again to (25, -25), and after 4 s, mid-run, sent back round the
     * west end into the pocket's far corner instead. */
    shoal_navmesh_t nm = shoal_navmesh_default();
    nm.goal[0] = 25;
    nm.goal[1] = -25;
    cr_assert_eq(shoal_agent_set_navmesh(w, car, &nm), SHOAL_OK, "%s", shoal_world_last_error(w));
    r = drive(w, car, 4);
    cr_assert_lt(r.seconds, 0.0f, "arrived at the first goal too soon");
    shoal_ground_status_t g;
    cr_assert_eq(shoal_agent_get_ground(w, car, &g), SHOAL_OK);
    cr_assert_gt(g.speed, 2.0f, "moving when the new goal comes");
    nm.goal[0] = -25;
    nm.goal[1] = -25;
    cr_assert_eq(shoal_agent_set_navmesh(w, car, &nm), SHOAL_OK, "%s", shoal_world_last_error(w));
    r = drive(w, car, 90);
    figures("L pocket, second goal", &r);
    cr_assert_geq(r.seconds, 0.0f, "the second goal not reached in 90 s: at (%g, %g)", (double)r.x,
                  (double)r.y);
    cr_assert_lt(hypotf(r.x + 25, r.y + 25), 4.0f, "stopped at (%g, %g)", (double)r.x, (double)r.y);
    cr_assert_gt(r.nearest, radius, "came %g m from the wall on the way back", (double)r.nearest);
    cr_assert_eq(r.teleports, 0);
    shoal_world_destroy(w);
}

Test(navmesh_ground, a_car_in_a_U_pocket_facing_its_closed_end_reaches_a_goal_beyond_it, .timeout = 120)
{
    if (!with_recast()) return;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_wall(w, POCKET_U, 4);
    car_mesh(w, 40);
    /* facing east, at the closed end: it has to turn round and leave west */
    shoal_agent_def_t d = car_def(-12, 0, 0.0f, 20, 0);
    shoal_agent_t car;
    cr_assert_eq(shoal_agent_add(w, &d, &car), SHOAL_OK, "%s", shoal_world_last_error(w));
    drive_t r = drive(w, car, 90);
    figures("U pocket", &r);
    cr_assert_geq(r.seconds, 0.0f, "not arrived in 90 s: at (%g, %g)", (double)r.x, (double)r.y);
    cr_assert_lt(hypotf(r.x - 20, r.y), 4.0f, "stopped at (%g, %g)", (double)r.x, (double)r.y);
    cr_assert_gt(r.nearest, d.ground.vehicle.radius, "came %g m from the wall", (double)r.nearest);
    cr_assert_eq(r.teleports, 0);
    shoal_world_destroy(w);
}

/* A slalom: walls across a 200 m x 60 m floor, 20 m apart, open at the top
 * and the bottom in turn; the path through them has more corners than the
 * 16 points a vehicle keeps. */
static void add_slalom(shoal_world_t* w)
{
    for (int k = 0; k < 7; ++k) {
        float x = -60.0f + 20.0f * (float)k;
        float wall[4] = {x, k % 2 ? -30.0f : -12.0f, x, k % 2 ? 12.0f : 30.0f};
        add_wall(w, wall, 2);
    }
    shoal_navmesh_params_t p = shoal_navmesh_params_default();
    const float bounds[4] = {-100, -30, 100, 30};
    memcpy(p.bounds, bounds, sizeof bounds);
    p.cell = 0.25f;
    p.agent_radius = 4.0f;
    p.off_path_distance = 3.0f;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
}

Test(navmesh_ground, a_path_longer_than_a_vehicle_keeps_is_cut_and_planned_again_as_it_goes, .timeout = 120)
{
    if (!with_recast()) return;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_slalom(w);
    const float from[2] = {-80, 0}, to[2] = {80, 0};
    int32_t n = 0;
    cr_assert_eq(shoal_world_navmesh_path(w, from, to, NULL, 0, &n, NULL), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    cr_assert_gt(n, 16, "the whole path has %d points", (int)n);
    shoal_agent_def_t d = car_def(from[0], from[1], 0.0f, to[0], to[1]);
    shoal_agent_t car;
    cr_assert_eq(shoal_agent_add(w, &d, &car), SHOAL_OK, "%s", shoal_world_last_error(w));
    drive_t r = drive(w, car, 180);
    if (getenv("NAVMESH_FIGURES")) fprintf(stderr, "slalom: %d points\n", (int)n);
    figures("slalom", &r);
    cr_assert_geq(r.seconds, 0.0f, "not arrived in 180 s: at (%g, %g)", (double)r.x, (double)r.y);
    cr_assert_lt(hypotf(r.x - to[0], r.y - to[1]), 4.0f, "stopped at (%g, %g)", (double)r.x, (double)r.y);
    cr_assert_gt(r.nearest, d.ground.vehicle.radius, "came %g m from a wall", (double)r.nearest);
    cr_assert_eq(r.teleports, 0);
    shoal_world_destroy(w);
}

/* Put 8 m off its path, a car plans again in the next step (the interval
 * is off), and still arrives. */
Test(navmesh_ground, a_car_put_off_its_path_plans_again_and_arrives, .timeout = 120)
{
    if (!with_recast()) return;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_wall(w, POCKET_L, 3);
    car_mesh(w, 40);
    shoal_navmesh_params_t p;
    cr_assert_eq(shoal_world_get_navmesh(w, &p), SHOAL_OK);
    p.replan_interval = 0;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK);
    shoal_agent_def_t d = car_def(-20, -20, 0.0f, 20, 20);
    shoal_agent_t car;
    cr_assert_eq(shoal_agent_add(w, &d, &car), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_navmesh_stats_t st;
    cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK);
    cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
    cr_assert_eq(st.replans, 1, "the first path");
    cr_assert_eq(st.waiting, 0);
    int32_t later = 0;
    for (int k = 0; k < 60; ++k) {
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK);
        cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
        later += st.replans;
    }
    cr_assert_eq(later, 0, "on its path, no plan without an interval");
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, car, &s), SHOAL_OK);
    const float pos[3] = {s.position[0] - 8.0f, s.position[1], 0};
    cr_assert_eq(shoal_agent_teleport(w, car, pos, s.velocity, s.heading, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK);
    cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
    cr_assert_eq(st.replans, 1, "off its path: planned again");
    drive_t r = drive(w, car, 60);
    cr_assert_geq(r.seconds, 0.0f, "not arrived: at (%g, %g)", (double)r.x, (double)r.y);
    cr_assert_lt(hypotf(r.x - 20, r.y - 20), 4.0f);
    shoal_world_destroy(w);
}

/* Cars and walkers on one mesh, the cars in the pocket of the L, the
 * walkers east of it, with a budget of 3 plans a step. */
static shoal_world_t* mixed_world(int threads, shoal_agent_t cars[4])
{
    shoal_world_t* w = make_world(2, threads, SHOAL_BACKEND_OPENMP);
    add_wall(w, POCKET_L, 3);
    car_mesh(w, 40);
    shoal_navmesh_params_t p;
    cr_assert_eq(shoal_world_get_navmesh(w, &p), SHOAL_OK);
    p.replans_per_step = 3;
    p.replan_interval = 30;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK);
    /* two leave the pocket west, round the end of the horizontal arm, and
     * two south, round the end of the vertical one, each facing its way */
    static const float car[4][5] = {{-20, -12, 3.14159265f, -25, 22},
                                    {-20, -20, 3.14159265f, -12, 22},
                                    {-8, -16, -1.57079633f, 15, -5},
                                    {-4, -22, -1.57079633f, 25, -10}};
    for (int k = 0; k < 4; ++k) {
        shoal_agent_def_t d = car_def(car[k][0], car[k][1], car[k][2], car[k][3], car[k][4]);
        cr_assert_eq(shoal_agent_add(w, &d, &cars[k]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int k = 0; k < 20; ++k) {
        shoal_agent_def_t d = shoal_agent_default_def();
        cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
        d.position[0] = 14.0f + 2.0f * (float)(k % 5);
        d.position[1] = -20.0f + 2.0f * (float)(k / 5);
        d.weights[SHOAL_BEHAVIOR_NAVMESH] = 1.0f;
        d.navmesh.goal[0] = 12.0f + 3.0f * (float)(k % 5);
        d.navmesh.goal[1] = 12.0f + 3.0f * (float)(k / 5);
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

Test(navmesh_ground, walkers_and_cars_on_one_mesh_all_arrive, .timeout = 120)
{
    if (!with_recast()) return;
    shoal_agent_t cars[4];
    shoal_world_t* w = mixed_world(1, cars);
    shoal_navmesh_stats_t st;
    float nearest = INFINITY;
    int steps = 0;
    for (; steps < 90 * 60; ++steps) {
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_leq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
        cr_assert_leq(st.replans, 3, "the budget");
        cr_assert_eq(st.agents, 24);
        for (int k = 0; k < 4; ++k) {
            shoal_agent_state_t s;
            cr_assert_eq(shoal_agent_get_state(w, cars[k], &s), SHOAL_OK);
            float wd = wall_dist(w, s.position[0], s.position[1]);
            if (wd < 1.5f && getenv("NAVMESH_DEBUG"))
                fprintf(stderr, "step %d car %d at (%.2f, %.2f) %.2f m from a wall\n", steps, k,
                        (double)s.position[0], (double)s.position[1], (double)wd);
            nearest = fminf(nearest, wd);
        }
        if (st.arrived == 24) break;
    }
    if (getenv("NAVMESH_FIGURES"))
        fprintf(stderr, "mixed: all 24 arrived in %.2f s, cars' nearest wall %.2f m\n",
                (double)(steps + 1) * DT, (double)nearest);
    cr_assert_eq(st.arrived, 24, "arrived %d of 24 (waiting %d, no way %d, off mesh %d)", st.arrived,
                 st.waiting, st.no_way, st.off_mesh);
    cr_assert_gt(nearest, 1.5f, "a car came %g m from the wall", (double)nearest);
    for (int k = 0; k < 4; ++k) {
        shoal_ground_status_t g;
        cr_assert_eq(shoal_agent_get_ground(w, cars[k], &g), SHOAL_OK);
        cr_assert(g.completed);
        cr_assert_eq(g.path, -1);
        cr_assert_eq(g.teleports, 0);
    }
    shoal_world_destroy(w);
}

Test(navmesh_ground, one_state_hash_for_1_2_and_4_threads, .timeout = 120)
{
    if (!with_recast()) return;
    uint64_t h[3];
    const int threads[3] = {1, 2, 4};
    for (int t = 0; t < 3; ++t) {
        shoal_agent_t cars[4];
        shoal_world_t* w = mixed_world(threads[t], cars);
        int64_t plans = 0;
        for (int s = 0; s < 900; ++s) {
            cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
            shoal_navmesh_stats_t st;
            shoal_world_navmesh_stats(w, &st);
            plans += st.replans;
        }
        cr_assert_gt(plans, 100, "%lld plans", (long long)plans);
        h[t] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    cr_assert_eq(h[0], h[1]);
    cr_assert_eq(h[0], h[2]);
}

/* Saved mid-run (cars on their way round the wall, paths held), loaded,
 * and both stepped on: one hash; and a file of the version before cars
 * kept paths loads them without one, planned again in the next step. */
Test(navmesh_ground, a_snapshot_resumes_cars_on_their_paths_alike, .timeout = 120)
{
    if (!with_recast()) return;
    shoal_agent_t cars[4];
    shoal_world_t* w = mixed_world(2, cars);
    for (int s = 0; s < 300; ++s)
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* v = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &v, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    for (int s = 0; s < 2100; ++s) {
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK);
        cr_assert_eq(shoal_world_step(v, DT), SHOAL_OK, "%s", shoal_world_last_error(v));
    }
    cr_assert_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    shoal_navmesh_stats_t st;
    cr_assert_eq(shoal_world_navmesh_stats(v, &st), SHOAL_OK);
    cr_assert_eq(st.arrived, 24, "arrived %d", st.arrived);
    free(buf);
    shoal_world_destroy(v);
    shoal_world_destroy(w);
}

Test(navmesh_ground, bad_input_is_refused_and_the_world_is_unchanged)
{
    if (!with_recast()) return;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_wall(w, POCKET_L, 3);
    car_mesh(w, 40);
    const float xyz[6] = {-20, -20, 0, -10, -20, 0};
    int32_t path = -1;
    cr_assert_eq(shoal_world_add_path(w, xyz, 2, 2.0f, &path), SHOAL_OK);
    shoal_agent_def_t d = car_def(-20, -20, 0.0f, 20, 20);
    shoal_agent_t car;
    cr_assert_eq(shoal_agent_add(w, &d, &car), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int s = 0; s < 30; ++s) cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK);
    const uint64_t h = shoal_world_state_hash(w);
    /* a world path and the mesh's at once */
    shoal_agent_def_t both = car_def(-20, -15, 0.0f, 20, 20);
    both.ground.follow.path = path;
    cr_assert_eq(shoal_agent_add(w, &both, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "ground.follow.path must be -1, got 0"), "%s",
              shoal_world_last_error(w));
    cr_assert_eq(shoal_agent_set_path(w, car, path), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "takes its path from the mesh"), "%s",
              shoal_world_last_error(w));
    shoal_ground_t g = d.ground;
    g.follow.path = path;
    cr_assert_eq(shoal_agent_set_ground(w, car, &g), SHOAL_ERR_INVALID_ARGUMENT);
    /* a goal that is no coordinate */
    shoal_navmesh_t nm = shoal_navmesh_default();
    nm.goal[0] = NAN;
    cr_assert_eq(shoal_agent_set_navmesh(w, car, &nm), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "navmesh.goal[0]"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_agent_count(w), 1);
    cr_assert_eq(shoal_world_state_hash(w), h);
    shoal_ground_status_t st;
    cr_assert_eq(shoal_agent_get_ground(w, car, &st), SHOAL_OK);
    cr_assert_eq(st.path, -1);
    /* stepping on is as if nothing had been asked */
    shoal_world_t* twin = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_wall(twin, POCKET_L, 3);
    car_mesh(twin, 40);
    cr_assert_eq(shoal_world_add_path(twin, xyz, 2, 2.0f, &path), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(twin, &d, NULL), SHOAL_OK);
    for (int s = 0; s < 90; ++s) {
        if (s >= 30) cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK);
        cr_assert_eq(shoal_world_step(twin, DT), SHOAL_OK);
    }
    cr_assert_eq(shoal_world_state_hash(w), shoal_world_state_hash(twin));
    shoal_world_destroy(twin);
    shoal_world_destroy(w);
    /* no navigation meshes in 3D */
    shoal_world_t* w3 = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d3 = car_def(0, 0, 0.0f, 10, 10);
    cr_assert_eq(shoal_agent_add(w3, &d3, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w3), "3D"), "%s", shoal_world_last_error(w3));
    cr_assert_eq(shoal_world_agent_count(w3), 0);
    shoal_world_destroy(w3);
}

/* The clearance comes from the mesh: Detour's corners lie on its edge,
 * agent_radius from the wall, and the car's follower cuts each corner by
 * about 1.5 m. Round the L, the closest approach grows with the mesh's
 * radius, and only from 3.5 m on does the car keep its own radius (1.5 m)
 * from the wall. */
Test(navmesh_ground, the_meshs_radius_sets_a_cars_clearance, .timeout = 120)
{
    if (!with_recast()) return;
    const float radii[4] = {2.5f, 3.0f, 3.5f, 4.0f};
    float before = 0.0f;
    for (int k = 0; k < 4; ++k) {
        shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        add_wall(w, POCKET_L, 3);
        car_mesh(w, 40);
        shoal_navmesh_params_t p;
        cr_assert_eq(shoal_world_get_navmesh(w, &p), SHOAL_OK);
        p.agent_radius = radii[k];
        cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK);
        shoal_agent_def_t d = car_def(-20, -20, 0.0f, 20, 20);
        shoal_agent_t car;
        cr_assert_eq(shoal_agent_add(w, &d, &car), SHOAL_OK, "%s", shoal_world_last_error(w));
        drive_t r = drive(w, car, 60);
        char what[64];
        snprintf(what, sizeof what, "L pocket, agent_radius %.1f m", (double)radii[k]);
        figures(what, &r);
        cr_assert_geq(r.seconds, 0.0f, "%s: not arrived", what);
        cr_assert_gt(r.nearest, before, "%s: %g m, no more than on the smaller mesh", what,
                     (double)r.nearest);
        cr_assert(r.nearest > radii[k] - 2.0f && r.nearest < radii[k] - 1.2f, "%s: %g m from the wall", what,
                  (double)r.nearest);
        cr_assert_eq(r.nearest > d.ground.vehicle.radius, radii[k] >= 3.5f, "%s: %g m from the wall", what,
                     (double)r.nearest);
        before = r.nearest;
        shoal_world_destroy(w);
    }
}
