/* The step table (src/modules/step.c) is checked, not only written down:
 * every scenario and a world of every module step with the write check on
 * (world_set_write_check), so a system that changes a column its row does
 * not declare fails here; a wrong declaration is caught; the check changes
 * no result. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <shoal/crowd.h>
#include <shoal/scenario.h>

#include "ecs/world.h"
#include "modules/registry.h"
#include "support.h"

#define CHECK_STEPS 40 /* past a reorder at the default interval (32) */

static void step_checked(shoal_world_t* w, int n, float dt, const char* what)
{
    for (int i = 0; i < n; ++i)
        cr_assert_eq(shoal_world_step(w, dt), SHOAL_OK, "%s, step %d: %s", what, i,
                     shoal_world_last_error(w));
}

static uint64_t scenario_run(const char* file, int check)
{
    char path[512];
    snprintf(path, sizeof path, "%s/scenarios/%s", SHOAL_SOURCE_DIR, file);
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_file(path, &sc, &err), SHOAL_OK, "%s: %s", path, err.message);
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    def.thread_count = 2;
    def.backend = SHOAL_BACKEND_OPENMP;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_scenario_populate(sc, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(world_set_write_check(w, check), SHOAL_OK);
    step_checked(w, CHECK_STEPS, shoal_scenario_dt(sc), file);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
    return h;
}

/* Checked, every system runs alone: the same bits as fused (compared
 * where it is quick). */
#define SCENARIO_CHECK(ident, file, compare)                                                                 \
    Test(step_table, ident, .timeout = 600)                                                                  \
    {                                                                                                        \
        uint64_t checked = scenario_run(file, 1);                                                            \
        if (compare) cr_assert_eq(checked, scenario_run(file, 0), "%s: the check changed the result", file); \
    }

SCENARIO_CHECK(behaviors_writes_what_it_declares, "behaviors.json", 1)
SCENARIO_CHECK(convoy_writes_what_it_declares, "convoy.json", 0)
SCENARIO_CHECK(default_writes_what_it_declares, "default.json", 0)
SCENARIO_CHECK(fish3d_writes_what_it_declares, "fish3d.json", 0)
SCENARIO_CHECK(flock2d_writes_what_it_declares, "flock2d.json", 0)
SCENARIO_CHECK(formation_writes_what_it_declares, "formation.json", 1)
SCENARIO_CHECK(nav_journey_writes_what_it_declares, "nav_journey.json", 1)
SCENARIO_CHECK(nav_u_wall_writes_what_it_declares, "nav_u_wall.json", 1)
SCENARIO_CHECK(nav_zones_writes_what_it_declares, "nav_zones.json", 1)
SCENARIO_CHECK(sphere3d_writes_what_it_declares, "sphere3d.json", 1)
SCENARIO_CHECK(tiny_writes_what_it_declares, "tiny.json", 1)

/* Every file in scenarios/ has a test above. */
Test(step_table, every_scenario_is_checked)
{
    static const char* const checked[] = {"behaviors.json",   "convoy.json",     "default.json",
                                          "fish3d.json",      "flock2d.json",    "formation.json",
                                          "nav_journey.json", "nav_u_wall.json", "nav_zones.json",
                                          "sphere3d.json",    "tiny.json"};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/scenarios", SHOAL_SOURCE_DIR);
    DIR* d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
        int found = 0;
        for (size_t i = 0; i < sizeof checked / sizeof checked[0]; ++i)
            found |= strcmp(checked[i], e->d_name) == 0;
        cr_assert(found, "scenarios/%s has no write-check test in tests/test_step_table.c", e->d_name);
    }
    closedir(d);
}

/* Every module in one 2D torus (tests/test_golden.c's "modules" world,
 * smaller): wander and separation, pursuit, evasion, following, obstacle
 * avoidance round a static and a moving obstacle, directed seek on a route,
 * ground vehicles on paths, planner agents seeking, fleeing and pursuing. */
static shoal_world_t* every_module_world(void)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 2;
    def.backend = SHOAL_BACKEND_OPENMP;
    def.seed = 7;
    def.wrap = 1;
    def.reorder_interval = 8;
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
    shoal_agent_t ordinary[200];
    for (int i = 0; i < 200; ++i) {
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
        d.contacts = n % 2;
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
    return w;
}

/* Crowd agents between walls with seekers and cars that take part in
 * contacts (tests/test_contacts.c's mixed world, a wall added). */
static shoal_world_t* crowd_world(void)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    const float east[6] = {-40.0f, 1.0f, 0.0f, 40.0f, 1.0f, 0.0f};
    int32_t path = -1;
    cr_assert_eq(shoal_world_add_path(w, east, 2, 3.0f, &path), SHOAL_OK);
    const float wall[4] = {25.0f, -20.0f, 25.0f, 20.0f};
    cr_assert_eq(shoal_world_add_wall(w, wall, 2, 0, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    const float center[3] = {0.0f, 0.0f, 0.0f};
    cr_assert_eq(shoal_world_add_obstacle(w, center, 2.0f, NULL), SHOAL_OK);
    for (int i = 0; i < 300; ++i) {
        float a = 6.2831853f * (float)i / 300.0f;
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = 15.0f * cosf(a);
        d.position[1] = 15.0f * sinf(a);
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        d.vehicle.radius = 0.5f;
        d.contacts = 1;
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
    return w;
}

/* The 3D paths of the behaviors: wander, pursuit, following, obstacle
 * avoidance and directed seek in a 3D world. */
static shoal_world_t* world_3d(void)
{
    shoal_world_t* w = make_world(3, 2, SHOAL_BACKEND_OPENMP);
    const float c0[3] = {10, 10, 5};
    cr_assert_eq(shoal_world_add_obstacle(w, c0, 3.0f, NULL), SHOAL_OK);
    shoal_waypoint_t route[2] = {{{0, 0, 0}, {1, 0, 0}, 0}, {{30, 20, 10}, {0, 0, 1}, 0}};
    int32_t route_id = -1;
    cr_assert_eq(shoal_world_add_route(w, route, 2, &route_id), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_t first[20];
    for (int i = 0; i < 120; ++i) {
        shoal_agent_def_t d = shared_ordinary_def(i);
        d.position[2] = (float)(i % 7) - 3.0f;
        if (i >= 20) {
            memset(d.weights, 0, sizeof d.weights);
            int kind = i % 5;
            if (kind == 0) {
                d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
                d.pursuit.target = first[i % 20];
            } else if (kind == 1) {
                d.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
                d.follow.leader = first[i % 20];
            } else if (kind == 2) {
                d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
                d.weights[SHOAL_BEHAVIOR_AVOID] = 1.0f;
                d.target[0] = d.target[1] = d.target[2] = 10.0f;
            } else if (kind == 3) {
                d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
                d.dseek.route = route_id;
            } else {
                d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
            }
        }
        cr_assert_eq(shoal_agent_add(w, &d, i < 20 ? &first[i] : NULL), SHOAL_OK, "%s",
                     shoal_world_last_error(w));
    }
    return w;
}

Test(step_table, every_module_writes_what_it_declares, .timeout = 600)
{
    shoal_world_t* w = every_module_world();
    cr_assert_eq(world_set_write_check(w, 1), SHOAL_OK);
    step_checked(w, 120, 1.0f / 60.0f, "every module");
    shoal_world_destroy(w);
    w = crowd_world();
    cr_assert_eq(world_set_write_check(w, 1), SHOAL_OK);
    step_checked(w, 120, 1.0f / 30.0f, "crowd");
    shoal_world_destroy(w);
    w = world_3d();
    cr_assert_eq(world_set_write_check(w, 1), SHOAL_OK);
    step_checked(w, 80, 1.0f / 60.0f, "3D");
    shoal_world_destroy(w);
}

static system_t* system_named(shoal_world_t* w, const char* name)
{
    for (int32_t i = 0; i < w->system_count; ++i)
        if (strcmp(w->systems[i].name, name) == 0) return &w->systems[i];
    cr_assert_fail("no system '%s'", name);
    return NULL;
}

/* A step with a system whose row declares less than it writes fails, and
 * the message names the system and the column. */
static void expect_caught(shoal_world_t* w, const char* system, void (*narrow)(system_def_t*),
                          const char* column)
{
    system_t* s = system_named(w, system);
    system_def_t wrong = *s->def;
    narrow(&wrong);
    const system_def_t* right = s->def;
    s->def = &wrong;
    shoal_status_t st = SHOAL_OK;
    for (int i = 0; i < 10 && st == SHOAL_OK; ++i) st = shoal_world_step(w, 1.0f / 60.0f);
    cr_assert_eq(st, SHOAL_ERR_INVALID_ARGUMENT, "the check let '%s' write '%s' undeclared", system, column);
    const char* msg = shoal_world_last_error(w);
    cr_assert(strstr(msg, system) && strstr(msg, column), "message: %s", msg);
    s->def = right;
}

static void no_position(system_def_t* d) { d->writes.agent &= ~(1ull << AC_POS_X); }
static void no_walk(system_def_t* d) { d->writes.comp[COMP_WANDER] = 0; }
static void no_permute(system_def_t* d) { d->flags &= ~(uint32_t)SYSTEM_PERMUTES_ROWS; }
static void no_data(system_def_t* d) { d->writes.data = 0; }

Test(step_table, an_undeclared_write_fails_the_step)
{
    shoal_world_t* w = every_module_world();
    cr_assert_eq(world_set_write_check(w, 1), SHOAL_OK);
    expect_caught(w, "integrate", no_position, "'pos_x'");
    expect_caught(w, "wander", no_walk, "'velocity[0]'");
    /* A reorder is declared: without the flag it moves every column. */
    expect_caught(w, "spatial_hash", no_permute, "column");
    /* Module-wide data: the moving obstacle's center. */
    expect_caught(w, "obstacle_move", no_data, "'obstacles'");
    /* Declared again, the same world steps on. */
    step_checked(w, 10, 1.0f / 60.0f, "declared again");
    shoal_world_destroy(w);
}

Test(step_table, every_column_has_a_name)
{
    const registry_t* r = builtin_registry();
    for (int32_t c = 0; c < AC_COUNT_; ++c) cr_assert_not_null(r->column_name(-1, c), "agent column %d", c);
    int32_t k = 0;
    for (int32_t m = 0; m < r->module_count; ++m) {
        const module_t* mod = r->modules[m];
        if (mod->column_count <= 0) continue;
        for (int32_t c = 0; c < mod->column_count; ++c)
            cr_assert_not_null(r->column_name(k, c), "column %d of %s", c, mod->name);
        cr_assert_null(r->column_name(k, mod->column_count), "%s has more names than columns", mod->name);
        k++;
    }
}

/* Idle follows from a system's module: with its component empty it is
 * idle, and the fused pass of control, integrate and wrap runs across it. */
Test(step_table, idle_follows_from_the_module)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    step_n(w, 1, 0.1f);
    for (int32_t i = 0; i < w->system_count; ++i) {
        const system_t* s = &w->systems[i];
        if (s->def && s->def->module && s->comp >= 0)
            cr_assert(system_idle(w, s), "%s is not idle with its component empty", s->name);
    }
    cr_assert_eq(system_idle(w, system_named(w, "steer")), 0);
    shoal_world_destroy(w);
}

/* control and integrate leave out the agents of the modules that move
 * their agents themselves, and only those. */
Test(step_table, self_moving_modules_are_left_out)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    uint32_t flagged = 0;
    for (int32_t k = 0; k < w->comp_count; ++k)
        if (w->comp_module[k]->flags & MODULE_MOVES_ITSELF) flagged |= 1u << k;
    cr_assert_eq(flagged, (1u << COMP_GROUND) | (1u << COMP_PLANNER) | (1u << COMP_CROWD));
    cr_assert_eq(system_named(w, "control")->without, flagged);
    cr_assert_eq(system_named(w, "integrate")->without, flagged);
    cr_assert_eq(system_named(w, "steer")->without, 0);
    shoal_world_destroy(w);
}
