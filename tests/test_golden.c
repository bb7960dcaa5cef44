/* Golden state hashes: every scenario in scenarios/ after 300 steps, and one
 * world that holds every module (ground vehicles, planner agents, directed
 * seek routes, pursuit, following, obstacle avoidance with moving obstacles),
 * each on 1 and 2 threads.
 *
 * A refactor moves none of these. A commit that moves one says which
 * behavior changed and why (docs/overview.md, "The step"), and updates the table
 * below with the new values (the failure message prints them).
 *
 * Hashes are pinned per SIMD width: lane_hsum sums a different number of
 * lanes at each width (simd/lanes.h), so a width the table does not list
 * fails with the hashes it computed, never passes quietly. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <shoal/scenario.h>
#include <stdio.h>

#include "simd/lanes.h"
#include "support.h"

#define GOLDEN_STEPS 300

typedef struct golden_t {
    const char* name;
    int lanes;
    uint64_t hash; /* the same on 1 and 2 threads */
} golden_t;

static const golden_t GOLDEN[] = {
#include "golden_hashes.inc"
};

static uint64_t scenario_hash(const char* file, int threads)
{
    char path[512];
    snprintf(path, sizeof path, "%s/scenarios/%s", SHOAL_SOURCE_DIR, file);
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_file(path, &sc, &err), SHOAL_OK, "%s: %s", path, err.message);
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_scenario_populate(sc, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    step_n(w, GOLDEN_STEPS, shoal_scenario_dt(sc));
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
    return h;
}

/* Every module in one 2D torus: ordinary agents (seek/flee/arrive/depart,
 * separation, wander), pursuers and followers of them, obstacle avoiders
 * round static and moving obstacles, directed seek on a route, ground
 * vehicles of four presets on two paths, and planner agents seeking,
 * fleeing and pursuing. */
static uint64_t modules_hash(int threads)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    def.seed = 7;
    def.wrap = 1;
    def.bounds_min[0] = def.bounds_min[1] = -80.0f;
    def.bounds_max[0] = def.bounds_max[1] = 80.0f;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    const float path0[] = {-60, 65, 0, 60, 65, 0, 60, 75, 0};
    const float path1[] = {-60, -65, 0, 0, -70, 0, 60, -60, 0};
    cr_assert_eq(shoal_world_add_path(w, path0, 3, 2.0f, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_path(w, path1, 3, 2.0f, NULL), SHOAL_OK);
    const float c0[3] = {10, 10, 0}, c1[3] = {-20, 5, 0}, v1[3] = {0.5f, -0.25f, 0};
    cr_assert_eq(shoal_world_add_obstacle(w, c0, 3.0f, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_moving_obstacle(w, c1, v1, 2.0f, NULL), SHOAL_OK);
    shoal_waypoint_t route[2] = {{{0, 0, 0}, {1, 0, 0}, 0}, {{30, 20, 0}, {0, 1, 0}, 0}};
    int32_t route_id = -1;
    cr_assert_eq(shoal_world_add_route(w, route, 2, &route_id), SHOAL_OK, "%s", shoal_world_last_error(w));

    shoal_agent_t ordinary[400];
    for (int i = 0; i < 400; ++i) {
        shoal_agent_def_t d = shared_ordinary_def(i);
        cr_assert_eq(shoal_agent_add(w, &d, &ordinary[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int i = 0; i < 40; ++i) {
        shoal_agent_def_t d = shared_ordinary_def(1000 + i);
        memset(d.weights, 0, sizeof d.weights);
        if (i % 4 == 0) {
            d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
            d.pursuit.target = ordinary[i];
        } else if (i % 4 == 1) {
            d.weights[SHOAL_BEHAVIOR_EVADE] = 1.0f;
            d.pursuit.target = ordinary[i];
        } else if (i % 4 == 2) {
            d.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
            d.follow.leader = ordinary[i];
        } else {
            d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
            d.weights[SHOAL_BEHAVIOR_AVOID] = 1.0f;
            d.avoid.tangential = i % 8 == 3;
            d.avoid.gain = 8.0f;
            d.target[0] = 10.0f;
            d.target[1] = 10.0f;
        }
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int i = 0; i < 6; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = -30.0f + 2.0f * (float)i;
        d.position[1] = -30.0f;
        d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
        d.dseek.route = route_id;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    static const char* const presets[] = {"car", "tank", "hovercraft", "truck"};
    for (int n = 0; n < 8; ++n) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = -50.0f + 4.0f * (float)n;
        d.position[1] = n % 2 ? -66.0f : 64.0f;
        d.ground.enabled = 1;
        cr_assert_eq(shoal_ground_vehicle_preset(presets[n % 4], &d.ground.vehicle, NULL), SHOAL_OK);
        d.ground.follow.path = n % 2;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int n = 0; n < 6; ++n) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = 40.0f;
        d.position[1] = -40.0f + 6.0f * (float)n;
        d.planner.enabled = 1;
        d.planner.max_expansions = 40 + 10 * n;
        d.planner.goal = n == 4 ? SHOAL_PLAN_GOAL_FLEE : SHOAL_PLAN_GOAL_SEEK;
        d.planner.goal_point[0] = -40.0f;
        if (n == 3) {
            d.planner.goal = SHOAL_PLAN_GOAL_PURSUE;
            d.planner.goal_agent = ordinary[7];
        }
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    /* Removes between steps and from the middle of the population. */
    step_n(w, GOLDEN_STEPS / 2, 1.0f / 60.0f);
    for (int i = 100; i < 400; i += 37)
        cr_assert_eq(shoal_agent_remove(w, ordinary[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    step_n(w, GOLDEN_STEPS / 2, 1.0f / 60.0f);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

static void check(const char* name, uint64_t h1, uint64_t h2)
{
    cr_assert_eq(h1, h2, "%s: 1 thread %016" PRIx64 ", 2 threads %016" PRIx64, name, h1, h2);
    for (size_t i = 0; i < sizeof GOLDEN / sizeof GOLDEN[0]; ++i) {
        if (GOLDEN[i].lanes != SHOAL_LANES || strcmp(GOLDEN[i].name, name) != 0) continue;
        if (GOLDEN[i].hash == 0) {
            /* Not pinned at this width (golden_hashes.inc says why): the
             * threads still agree; the value to record goes to the log. */
            cr_log_warn("%s: not pinned at %d lanes; record {\"%s\", %d, 0x%016" PRIx64 "ull}", name,
                        SHOAL_LANES, name, SHOAL_LANES, h1);
            return;
        }
        cr_assert_eq(h1, GOLDEN[i].hash,
                     "%s moved: pinned 0x%016" PRIx64 ", got 0x%016" PRIx64 " (%d lanes); a "
                     "commit that moves it says which behavior changed and why",
                     name, GOLDEN[i].hash, h1, SHOAL_LANES);
        return;
    }
    cr_assert_fail("%s: no golden hash for %d lanes; add {\"%s\", %d, 0x%016" PRIx64
                   "ull} to tests/golden_hashes.inc",
                   name, SHOAL_LANES, name, SHOAL_LANES, h1);
}

#define SCENARIO_TEST(ident, file)                                                                           \
    Test(golden, ident, .timeout = 600) { check(file, scenario_hash(file, 1), scenario_hash(file, 2)); }

SCENARIO_TEST(behaviors, "behaviors.json")
SCENARIO_TEST(convoy, "convoy.json")
SCENARIO_TEST(default_scenario, "default.json")
SCENARIO_TEST(fish3d, "fish3d.json")
SCENARIO_TEST(flock2d, "flock2d.json")
SCENARIO_TEST(formation, "formation.json")
SCENARIO_TEST(nav_journey, "nav_journey.json")
SCENARIO_TEST(nav_u_wall, "nav_u_wall.json")
SCENARIO_TEST(nav_zones, "nav_zones.json")
SCENARIO_TEST(sphere3d, "sphere3d.json")
SCENARIO_TEST(tiny, "tiny.json")

Test(golden, modules, .timeout = 600) { check("modules", modules_hash(1), modules_hash(2)); }

/* Every file in scenarios/ has a test above: a new scenario gets its
 * golden hash when it lands. */
Test(golden, every_scenario_is_pinned)
{
    static const char* const pinned[] = {"behaviors.json",   "convoy.json",     "default.json",
                                         "fish3d.json",      "flock2d.json",    "formation.json",
                                         "nav_journey.json", "nav_u_wall.json", "nav_zones.json",
                                         "sphere3d.json",    "tiny.json"};
    char dir_path[512];
    snprintf(dir_path, sizeof dir_path, "%s/scenarios", SHOAL_SOURCE_DIR);
    DIR* dir = opendir(dir_path);
    cr_assert_not_null(dir, "cannot list %s", dir_path);
    int files = 0;
    for (struct dirent* e = readdir(dir); e; e = readdir(dir)) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        files++;
        int found = 0;
        for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; ++i) found |= !strcmp(pinned[i], e->d_name);
        cr_assert(found, "scenarios/%s has no golden hash test (tests/test_golden.c)", e->d_name);
    }
    closedir(dir);
    cr_assert_eq(files, (int)(sizeof pinned / sizeof pinned[0]));
}
