/* Navigation meshes in scenario files (src/io/scenario.c,
 * scenario_behaviors.c, scenario_populate.c): the top-level "navmesh"
 * object (the mesh's parameters) and a group's "navmesh" (goal,
 * arrive_distance) reach the world, and pedestrians walk round a wall to
 * their group's goal; every bad input is refused with a message naming its
 * key; a populate that fails after the parameters were set leaves the world
 * as it was; `shoal run` reports the navmesh stats. In a build without
 * Recast and Detour the tests that need them check the documented refusal
 * instead: the file loads, and populate and `shoal run` fail with the
 * library's message, the world unchanged.
 *
 * Worlds here are serial; the CLI runs in a spawned binary. */
#define _XOPEN_SOURCE 700 /* cli_run.h's pty */

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "shoal/scenario.h"

#define SCENARIO_TEST_FILE "navmesh.json"
#include "scenario_support.h"

/* Without Recast and Detour: populate fails with NOT_FOUND and the
 * library's message, and the world is as it was. */
static void expect_refused_without_recast(const shoal_scenario_t* s, shoal_world_t* w)
{
    uint64_t hash = shoal_world_state_hash(w);
    int32_t agents = shoal_world_agent_count(w), walls = shoal_world_wall_count(w);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_ERR_NOT_FOUND, "%s", shoal_world_last_error(w));
    const char* msg = shoal_world_last_error(w);
    cr_expect_not_null(strstr(msg, "built without Recast/Detour"), "%s", msg);
    cr_expect_not_null(strstr(msg, "librecast-dev"), "%s", msg);
    cr_expect_eq(shoal_world_agent_count(w), agents);
    cr_expect_eq(shoal_world_wall_count(w), walls);
    cr_expect_eq(shoal_world_state_hash(w), hash, "the state hash moved");
    shoal_navmesh_params_t p, d = shoal_navmesh_params_default();
    cr_assert_eq(shoal_world_get_navmesh(w, &p), SHOAL_OK);
    cr_expect_eq(memcmp(&p, &d, sizeof p), 0, "the navmesh parameters are as before");
}

/* A wall across x = 0 between the start (x < 0) and two goals past it. Six
 * pedestrians cannot all stand within 0.3 m of one point: they arrive
 * within 1 m. */
#define WALL "\"walls\": [{\"points\": [[0, -3], [0, 3]]}],"
#define WALKERS(name, y, goal)                                                                               \
    "{\"name\": \"" name "\", \"count\": 6, \"spawn\": {\"shape\": \"box\", \"center\": [-3, " #y            \
    "], \"size\": [1.5, 1.5]}, \"behaviors\": {\"navmesh\": {}}, \"navmesh\": {\"goal\": " goal              \
    ", \"arrive_distance\": 1}, \"crowd\": {\"preset\": \"pedestrian\"}}"

static const char* const TWO_GOALS =
    "{\"dt\": 0.05," WALL "\"navmesh\": {\"cell\": 0.1, \"agent_radius\": 0.3, \"bounds\": [-8, -8, 8, 8],"
    "\"margin\": 1, \"replans_per_step\": 8, \"replan_interval\": 50, \"off_path_distance\": 0.8},"
    "\"groups\": [" WALKERS("north", 1.2, "[3, 1.5]") "," WALKERS("south", -1.2, "[3.5, -1.5]") "]}";

Test(scenario_navmesh, pedestrians_walk_round_a_wall_to_their_groups_goal, .timeout = 120)
{
    shoal_scenario_t* s = load_text(TWO_GOALS);
    shoal_world_t* w = serial_world(s);
    if (!shoal_navmesh_available()) {
        expect_refused_without_recast(s, w);
        shoal_world_destroy(w);
        shoal_scenario_destroy(s);
        return;
    }
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_navmesh_params_t p;
    cr_assert_eq(shoal_world_get_navmesh(w, &p), SHOAL_OK);
    cr_expect_float_eq(p.cell, 0.1f, 0.0f);
    cr_expect_float_eq(p.agent_radius, 0.3f, 0.0f);
    cr_expect_float_eq(p.bounds[0], -8.0f, 0.0f);
    cr_expect_float_eq(p.bounds[3], 8.0f, 0.0f);
    cr_expect_float_eq(p.margin, 1.0f, 0.0f);
    cr_expect_eq(p.replans_per_step, 8);
    cr_expect_eq(p.replan_interval, 50);
    cr_expect_float_eq(p.off_path_distance, 0.8f, 0.0f);
    /* populate baked the mesh */
    shoal_navmesh_stats_t st;
    cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
    cr_expect_gt(st.polygons, 2, "%d polygons", st.polygons);

    /* each group's agents carry its goal and arrive_distance */
    shoal_agent_t ids[12];
    uint32_t groups[12];
    shoal_agent_batch_t b = {.ids = ids, .groups = groups};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 12, &n), SHOAL_OK);
    cr_assert_eq(n, 12);
    for (int32_t i = 0; i < n; i++) {
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, ids[i], &d), SHOAL_OK);
        cr_expect_float_eq(d.navmesh.goal[0], groups[i] == 0 ? 3.0f : 3.5f, 0.0f, "agent %d", (int)i);
        cr_expect_float_eq(d.navmesh.goal[1], groups[i] == 0 ? 1.5f : -1.5f, 0.0f, "agent %d", (int)i);
        cr_expect_float_eq(d.navmesh.arrive_distance, 1.0f, 0.0f);
        cr_expect_float_eq(d.weights[SHOAL_BEHAVIOR_NAVMESH], 1.0f, 0.0f);
    }

    int done = 0;
    for (int step = 0; step < 1600 && !done; step++) {
        cr_assert_eq(shoal_world_step(w, shoal_scenario_dt(s)), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
        cr_assert_eq(st.agents, 12);
        cr_assert_eq(st.no_way, 0, "step %d", step);
        cr_assert_eq(st.off_mesh, 0, "step %d", step);
        done = st.arrived == 12;
    }
    cr_expect(done, "%d of 12 arrived in 80 s", st.arrived);
    /* every agent is past the wall, near its group's goal */
    float pos[36];
    shoal_agent_batch_t pb = {.positions = pos, .groups = groups};
    cr_assert_eq(shoal_world_read_agents(w, &pb, 12, &n), SHOAL_OK);
    for (int32_t i = 0; i < n; i++) {
        float gx = groups[i] == 0 ? 3.0f : 3.5f, gy = groups[i] == 0 ? 1.5f : -1.5f;
        cr_expect_lt(hypotf(pos[3 * i] - gx, pos[3 * i + 1] - gy), 1.5f, "agent %d at (%g, %g)", (int)i,
                     (double)pos[3 * i], (double)pos[3 * i + 1]);
    }
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* Every key optional: an empty "navmesh" is shoal_navmesh_params_default(),
 * and a world whose scenario has no "navmesh" keeps the parameters it had. */
Test(scenario_navmesh, omitted_keys_take_the_library_defaults)
{
    shoal_scenario_t* s =
        load_text("{" WALL "\"navmesh\": {}, \"groups\": [{\"count\": 2, \"behaviors\": {\"navmesh\": {}},"
                  "\"navmesh\": {\"goal\": [4, 0]}}]}");
    shoal_world_t* w = serial_world(s);
    if (!shoal_navmesh_available()) {
        expect_refused_without_recast(s, w);
        shoal_world_destroy(w);
        shoal_scenario_destroy(s);
        /* a scenario without navmesh populates as before */
        s = load_text("{\"groups\": [{\"count\": 1, \"navmesh\": {\"goal\": [1, 1]}}]}");
        w = serial_world(s);
        cr_expect_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_expect_eq(shoal_world_agent_count(w), 1);
        shoal_world_destroy(w);
        shoal_scenario_destroy(s);
        return;
    }
    shoal_navmesh_params_t before = shoal_navmesh_params_default();
    before.cell = 0.2f;
    before.replan_interval = 7;
    cr_assert_eq(shoal_world_set_navmesh(w, &before), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_navmesh_params_t p, d = shoal_navmesh_params_default();
    cr_assert_eq(shoal_world_get_navmesh(w, &p), SHOAL_OK);
    cr_expect_eq(memcmp(&p, &d, sizeof p), 0, "an empty navmesh object sets the defaults");
    shoal_agent_t id;
    shoal_agent_batch_t b = {.ids = &id};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 1, &n), SHOAL_OK);
    shoal_agent_def_t def;
    cr_assert_eq(shoal_agent_get_def(w, id, &def), SHOAL_OK);
    cr_expect_float_eq(def.navmesh.goal[0], 4.0f, 0.0f);
    cr_expect_float_eq(def.navmesh.arrive_distance, shoal_navmesh_default().arrive_distance, 0.0f);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    s = load_text("{\"groups\": [{\"count\": 1}]}");
    w = serial_world(s);
    cr_assert_eq(shoal_world_set_navmesh(w, &before), SHOAL_OK);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_get_navmesh(w, &p), SHOAL_OK);
    cr_expect_eq(memcmp(&p, &before, sizeof p), 0, "no navmesh object: the world's parameters stay");
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

#define GROUP(extra) "\"groups\": [{\"name\": \"walkers\", \"count\": 2" extra "}]}"

Test(scenario_navmesh, bad_parameters_are_refused_naming_the_key)
{
    expect_error("{\"navmesh\": {\"cel\": 1}," GROUP(""), "unknown key 'navmesh.cel'; did you mean 'cell'?");
    expect_error("{\"navmesh\": {\"cell\": 0.01}," GROUP(""), "navmesh.cell: must be >= 0.02, got 0.01");
    expect_error("{\"navmesh\": {\"cell\": 11}," GROUP(""), "navmesh.cell: must be 0.02 to 10 m, got 11");
    expect_error("{\"navmesh\": {\"agent_radius\": 0}," GROUP(""),
                 "navmesh.agent_radius: must be > 0, got 0");
    expect_error("{\"navmesh\": {\"bounds\": [0, 0, 1]}," GROUP(""),
                 "navmesh.bounds: expected an array of 4 numbers [x0, y0, x1, y1]");
    expect_error("{\"navmesh\": {\"bounds\": [0, 0, -1, 1]}," GROUP(""),
                 "navmesh.bounds: must be [x0, y0, x1, y1] with x1 > x0 and y1 > y0 (or all 0: the box of "
                 "the walls and obstacles widened by margin)");
    expect_error("{\"navmesh\": {\"bounds\": [0, \"a\", 1, 1]}," GROUP(""),
                 "navmesh.bounds[1]: expected a number, got a string");
    expect_error("{\"navmesh\": {\"margin\": -1}," GROUP(""), "navmesh.margin: must be >= 0, got -1");
    expect_error("{\"navmesh\": {\"replans_per_step\": 0}," GROUP(""), "navmesh.replans_per_step");
    expect_error("{\"navmesh\": {\"replans_per_step\": 1.5}," GROUP(""), "navmesh.replans_per_step");
    expect_error("{\"navmesh\": {\"replan_interval\": -1}," GROUP(""), "navmesh.replan_interval");
    expect_error("{\"navmesh\": {\"replan_interval\": 1000001}," GROUP(""), "navmesh.replan_interval");
    expect_error("{\"navmesh\": {\"off_path_distance\": 0}," GROUP(""),
                 "navmesh.off_path_distance: must be > 0, got 0");
    expect_error("{\"navmesh\": [1]," GROUP(""), "navmesh: expected an object");
    /* the group's object */
    expect_error("{" GROUP(", \"navmesh\": {\"goal\": [1, 0], \"arive_distance\": 1}"),
                 "unknown key 'groups[0].navmesh.arive_distance'; did you mean 'arrive_distance'?");
    expect_error("{" GROUP(", \"navmesh\": {\"goal\": [1, 0], \"arrive_distance\": -1}"),
                 "groups[0].navmesh.arrive_distance: must be >= 0, got -1");
    expect_error("{" GROUP(", \"navmesh\": {\"goal\": [1, 0, 2]}"), "groups[0].navmesh.goal");
    expect_error("{" GROUP(", \"navmesh\": {\"goal\": \"door\"}"), "groups[0].navmesh.goal");
    expect_error("{" GROUP(", \"navmesh\": {\"goal\": [1, null]}"), "groups[0].navmesh.goal");
    expect_error("{" GROUP(", \"navmesh\": {\"goal\": [1e39, 0]}"), "groups[0].navmesh.goal");
    expect_error("{" GROUP(", \"navmesh\": []"), "groups[0].navmesh: expected an object");
}

Test(scenario_navmesh, navmesh_needs_a_goal_and_a_2d_world)
{
    expect_error("{" GROUP(", \"behaviors\": {\"navmesh\": {}}"),
                 "missing required key 'groups[0].navmesh.goal' (behaviors.navmesh of group 'walkers' needs "
                 "a goal: [x, y])");
    expect_error(
        "{" GROUP(", \"behaviors\": {\"navmesh\": {\"weight\": 2}}, \"navmesh\": {\"arrive_distance\": 1}"),
        "missing required key 'groups[0].navmesh.goal'");
    /* weight 0 is off: no goal needed */
    shoal_scenario_destroy(load_text("{" GROUP(", \"behaviors\": {\"navmesh\": {\"weight\": 0}}")));
    expect_error("{\"dimensions\": 3, \"navmesh\": {}," GROUP(""),
                 "navmesh: navigation meshes are 2D; this scenario is 3D");
    expect_error("{\"dimensions\": 3," GROUP(", \"navmesh\": {\"goal\": [1, 1, 1]}"),
                 "groups[0].navmesh: navigation meshes are 2D; this scenario is 3D");
    expect_error("{\"dimensions\": 3," GROUP(", \"behaviors\": {\"navmesh\": {}}"),
                 "missing required key 'groups[0].navmesh.goal'");
}

/* A world with agents and navmesh parameters of its own, so that a failed
 * populate has something to leave as it was. Without Recast the world's
 * parameters stay the defaults. */
static shoal_world_t* world_with_navmesh(const shoal_scenario_t* s, shoal_navmesh_params_t* params)
{
    shoal_world_t* w = serial_world(s);
    for (int i = 0; i < 3; i++) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)i;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    *params = shoal_navmesh_params_default();
    if (shoal_navmesh_available()) {
        params->cell = 0.2f;
        params->replans_per_step = 3;
        cr_assert_eq(shoal_world_set_navmesh(w, params), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

/* The floor of a 2 km wall at the default 0.1 m cell is 20,000 cells long
 * but within Recast's side; at 0.02 m it is 100,000: too large. The
 * parameters are set and the agents added before the bake refuses it. */
Test(scenario_navmesh, a_floor_too_large_fails_the_populate_and_leaves_the_world_as_it_was, .timeout = 60)
{
    shoal_scenario_t* s = load_text("{\"walls\": [{\"points\": [[0, 0], [2000, 0]]}],"
                                    "\"navmesh\": {\"cell\": 0.02, \"agent_radius\": 0.3},"
                                    "\"groups\": [{\"count\": 4, \"spawn\": {\"shape\": \"box\", \"center\": "
                                    "[5, 5], \"size\": [2, 2]}, \"behaviors\": {\"navmesh\": {}},"
                                    "\"navmesh\": {\"goal\": [10, 5]}}]}");
    shoal_navmesh_params_t params;
    shoal_world_t* w = world_with_navmesh(s, &params);
    if (!shoal_navmesh_available()) {
        expect_refused_without_recast(s, w);
        cr_expect_eq(shoal_world_agent_count(w), 3);
        shoal_world_destroy(w);
        shoal_scenario_destroy(s);
        return;
    }
    uint64_t hash = shoal_world_state_hash(w);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_ERR_CAPACITY, "%s", shoal_world_last_error(w));
    cr_expect_not_null(strstr(shoal_world_last_error(w), "world_navmesh_update"), "%s",
                       shoal_world_last_error(w));
    cr_expect_eq(shoal_world_agent_count(w), 3);
    cr_expect_eq(shoal_world_wall_count(w), 0);
    shoal_navmesh_params_t now;
    cr_assert_eq(shoal_world_get_navmesh(w, &now), SHOAL_OK);
    cr_expect_eq(memcmp(&now, &params, sizeof now), 0, "the navmesh parameters are as before");
    cr_expect_eq(shoal_world_state_hash(w), hash, "the state hash moved");
    cr_expect_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

static void write_text(const char* path, const char* text)
{
    FILE* f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* `shoal run` adds the navmesh stats to the summary and to --json when
 * agents navigate by mesh, and nothing otherwise; without Recast it stops
 * with the library's message. */
Test(scenario_navmesh, shoal_run_reports_the_navmesh_stats, .timeout = 120)
{
    char dir[] = "/tmp/shoal_navmesh_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/two_goals.json", dir);
    write_text(path, TWO_GOALS);
    cli_output_t r;
    if (!shoal_navmesh_available()) {
        run_cli((const char*[]){"run", path, "--steps", "5", "--threads", "1", NULL}, &r);
        cr_expect_neq(r.status, 0, "%s", r.out);
        cr_expect_not_null(strstr(r.err, "built without Recast/Detour"), "%s", r.err);
        output_free(&r);
        remove(path);
        rmdir(dir);
        return;
    }
    cJSON* root = run_json((const char*[]){"run", path, "--steps", "1600", "--threads", "1", "--json", NULL});
    const cJSON* mesh = cJSON_GetObjectItemCaseSensitive(root, "navmesh");
    cr_assert(cJSON_IsObject(mesh), "--json has a \"navmesh\" object");
    cr_expect_eq(json_number(mesh, "agents"), 12.0);
    cr_expect_eq(json_number(mesh, "arrived"), 12.0, "all 12 pedestrians walk round the wall");
    cr_expect_eq(json_number(mesh, "no_way"), 0.0);
    cr_expect_eq(json_number(mesh, "off_mesh"), 0.0);
    cr_expect_eq(json_number(mesh, "waiting"), 0.0);
    cr_expect_gt(json_number(mesh, "polygons"), 2.0);
    cr_expect_geq(json_number(mesh, "replans"), 0.0);
    cr_expect_geq(json_number(mesh, "pending"), 0.0);
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(root, "nav"), "no nav goals: no nav object");
    cJSON_Delete(root);

    /* after one step the budget (8 a step) has planned 8 of the 12 */
    root = run_json((const char*[]){"run", path, "--steps", "1", "--threads", "1", "--json", NULL});
    mesh = cJSON_GetObjectItemCaseSensitive(root, "navmesh");
    cr_assert(cJSON_IsObject(mesh));
    cr_expect_eq(json_number(mesh, "arrived"), 0.0);
    cr_expect_eq(json_number(mesh, "replans"), 8.0);
    cr_expect_eq(json_number(mesh, "pending"), 4.0);
    cr_expect_eq(json_number(mesh, "waiting"), 4.0);
    cJSON_Delete(root);

    run_cli((const char*[]){"run", path, "--steps", "1", "--threads", "1", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(matches(r.out,
                      "\nnavmesh +12 agents, 0 arrived, 0 no way, 0 off mesh, 4 waiting, [0-9]+ polygons, "
                      "8 replans and 4 pending in the last step\n"),
              "%s", r.out);
    output_free(&r);
    remove(path);
    rmdir(dir);

    run_cli((const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/tiny.json", "--steps", "2", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_null(strstr(r.out, "\nnavmesh "), "no navmesh line without navmesh agents: %s", r.out);
    output_free(&r);
    root = run_json(
        (const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/tiny.json", "--steps", "2", "--json", NULL});
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(root, "navmesh"));
    cJSON_Delete(root);
}

/* Ground vehicles: a group with a "ground" object and the navmesh
 * behavior is cars that take their paths from the mesh. Two cars in the
 * pocket of an L wall, facing south, drive round its end to a goal beyond
 * it; the mesh keeps 4 m from the wall for them. */
static const char* const CARS =
    "{\"dt\": 0.02, \"walls\": [{\"points\": [[-30, 5], [5, 5], [5, -30]]}],"
    "\"navmesh\": {\"cell\": 0.25, \"agent_radius\": 4, \"bounds\": [-40, -40, 40, 40],"
    "\"off_path_distance\": 3},"
    "\"groups\": [{\"name\": \"cars\", \"count\": 2, \"spawn\": {\"shape\": \"box\", \"center\": [-10, -15],"
    "\"size\": [10, 2], \"heading\": -1.5708}, \"ground\": {\"preset\": \"car\", \"radius\": 1.4, \"v_max\": "
    "8},"
    "\"behaviors\": {\"navmesh\": {}}, \"navmesh\": {\"goal\": [20, 20]}}]}";

Test(scenario_navmesh, cars_take_their_paths_from_the_mesh_round_a_wall, .timeout = 120)
{
    shoal_scenario_t* s = load_text(CARS);
    shoal_world_t* w = serial_world(s);
    if (!shoal_navmesh_available()) {
        expect_refused_without_recast(s, w);
        shoal_world_destroy(w);
        shoal_scenario_destroy(s);
        return;
    }
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_t ids[2];
    shoal_agent_batch_t b = {.ids = ids};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 2, &n), SHOAL_OK);
    cr_assert_eq(n, 2);
    for (int32_t i = 0; i < n; i++) {
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, ids[i], &d), SHOAL_OK);
        cr_expect_eq(d.ground.enabled, 1);
        cr_expect_float_eq(d.ground.vehicle.radius, 1.4f, 0.0f);
        cr_expect_float_eq(d.ground.follow.v_max, 8.0f, 0.0f);
        cr_expect_eq(d.ground.follow.path, -1);
        cr_expect_float_eq(d.weights[SHOAL_BEHAVIOR_NAVMESH], 1.0f, 0.0f);
    }
    shoal_navmesh_stats_t st;
    int done = 0;
    for (int step = 0; step < 3000 && !done; step++) {
        cr_assert_eq(shoal_world_step(w, shoal_scenario_dt(s)), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
        cr_assert_eq(st.agents, 2);
        done = st.arrived == 2;
    }
    cr_expect(done, "%d of 2 arrived in 60 s", st.arrived);
    float pos[6];
    shoal_agent_batch_t pb = {.positions = pos};
    cr_assert_eq(shoal_world_read_agents(w, &pb, 2, &n), SHOAL_OK);
    for (int32_t i = 0; i < n; i++)
        cr_expect_lt(hypotf(pos[3 * i] - 20.0f, pos[3 * i + 1] - 20.0f), 5.0f, "car %d at (%g, %g)", (int)i,
                     (double)pos[3 * i], (double)pos[3 * i + 1]);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

#define CAR_GROUP(extra) GROUP(", \"behaviors\": {\"navmesh\": {}}, \"navmesh\": {\"goal\": [1, 0]}" extra)

Test(scenario_navmesh, bad_ground_vehicles_are_refused_naming_the_key)
{
    expect_error("{" CAR_GROUP(", \"ground\": {\"presett\": \"car\"}"),
                 "unknown key 'groups[0].ground.presett'; did you mean 'preset'?");
    expect_error("{" CAR_GROUP(", \"ground\": {\"preset\": \"bus\"}"), "groups[0].ground.preset");
    expect_error("{" CAR_GROUP(", \"ground\": {\"preset\": 3}"), "groups[0].ground.preset");
    expect_error("{" CAR_GROUP(", \"ground\": {\"radius\": -1}"),
                 "groups[0].ground.radius: must be >= 0, got -1");
    expect_error("{" CAR_GROUP(", \"ground\": {\"v_max\": 0}"), "groups[0].ground.v_max: must be > 0, got 0");
    expect_error("{" CAR_GROUP(", \"ground\": {\"v_max\": 0.5}"),
                 "groups[0].ground.v_max: must be >= the follower's v_min (1 m/s), got 0.5");
    expect_error("{" CAR_GROUP(", \"ground\": true"), "groups[0].ground: expected an object");
    expect_error("{" GROUP(", \"ground\": {}"),
                 "groups[0].ground: the ground vehicles of group 'walkers' need behaviors.navmesh (and "
                 "navmesh.goal): their path comes from the navigation mesh");
    expect_error(
        "{" GROUP(", \"behaviors\": {\"navmesh\": {}, \"seek\": {}}, \"navmesh\": {\"goal\": [1, 0]}, "
                  "\"ground\": {}"),
        "groups[0].ground: the ground vehicles of group 'walkers' are driven by their path follower: "
        "behaviors.seek would do nothing (navmesh is their only behavior)");
    expect_error("{" CAR_GROUP(", \"ground\": {}, \"crowd\": {\"preset\": \"pedestrian\"}"),
                 "groups[0].ground: group 'walkers' cannot be ground vehicles and crowd agents at once");
    expect_error("{\"dimensions\": 3," GROUP(", \"ground\": {}"),
                 "groups[0].ground: ground vehicles in scenarios drive on navigation meshes, which are 2D; "
                 "this scenario is 3D");
}
