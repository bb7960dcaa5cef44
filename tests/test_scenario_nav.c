/* Navigation in scenario files (src/io/scenario.c, scenario_behaviors.c,
 * scenario_populate.c): the top-level "nav" object (the grid and its
 * goals) and a group's "nav" (goal, arrive_distance) reach the world, and
 * pedestrians walk round a wall to goals of every kind; every bad input is
 * refused with a message naming its key; a populate that fails in the nav
 * part (a goal in a wall, a grid over its memory limit) leaves the world as
 * it was; `shoal run` reports the nav stats.
 *
 * Worlds here are serial; the CLI runs in a spawned binary. */
#define _XOPEN_SOURCE 700 /* cli_run.h's pty */

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "shoal/scenario.h"

#define U_WALL SHOAL_SOURCE_DIR "/scenarios/nav_u_wall.json"

static shoal_scenario_t* load_text(const char* json)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = NULL;
    shoal_status_t st = shoal_scenario_load_string(json, strlen(json), "nav.json", &s, &err);
    cr_assert_eq(st, SHOAL_OK, "status %d: %s\nin: %s", (int)st, err.message, json);
    return s;
}

/* The load fails with a parse error whose message holds `expected`, and
 * *out is NULL. */
static void expect_error(const char* json, const char* expected)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = (shoal_scenario_t*)&err;
    shoal_status_t st = shoal_scenario_load_string(json, strlen(json), "nav.json", &s, &err);
    cr_expect_eq(st, SHOAL_ERR_PARSE, "status %d (%s)\nin: %s", (int)st, err.message, json);
    cr_expect_null(s, "*out is not NULL after a failure");
    cr_expect_not_null(strstr(err.message, expected), "message '%s' lacks '%s'", err.message, expected);
    if (s != (shoal_scenario_t*)&err) shoal_scenario_destroy(s);
}

static shoal_world_t* serial_world(const shoal_scenario_t* s)
{
    shoal_world_def_t def = shoal_scenario_world_def(s);
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    return w;
}

/* A wall across x = 0 between the start (x < 0) and goals of each kind.
 * Five pedestrians cannot all stand within 0.3 m of one point: the point's
 * group arrives within 1 m. */
#define WALL "\"walls\": [{\"points\": [[0, -3], [0, 3]]}],"
#define GOALS                                                                                                \
    "\"goals\": [{\"name\": \"spot\", \"point\": [5, 2]},"                                                   \
    "{\"name\": \"door\", \"line\": [[5, -1], [5.5, 1]]},"                                                   \
    "{\"area\": [[4, -5], [6, -5], [6, -3], [4, -3]]}]"
#define WALKERS(name, goal, y)                                                                               \
    "{\"name\": \"" name "\", \"count\": 5, \"spawn\": {\"shape\": \"box\", \"center\": [-4, " #y            \
    "], \"size\": [2, 1.5]}, \"behaviors\": {\"navigate\": {}}, \"nav\": {\"goal\": " goal "},"              \
    "\"crowd\": {\"preset\": \"pedestrian\"}}"

static const char* const EACH_KIND =
    "{\"dt\": 0.05," WALL "\"nav\": {\"cell\": 0.2, \"clearance\": 0.3, \"wall_distance\": 0.4,"
    "\"wall_speed\": 0.6, \"margin\": 3, \"max_bytes\": 5e7," GOALS "},"
    "\"groups\": [" WALKERS("to_spot", "\"spot\", \"arrive_distance\": 1", 1.5) "," WALKERS(
        "to_door", "\"door\"", 0) "," WALKERS("to_area", "2, \"arrive_distance\": 0.5", -1.5) "]}";

Test(scenario_nav, goals_of_each_kind_load_and_pedestrians_reach_them, .timeout = 120)
{
    shoal_scenario_t* s = load_text(EACH_KIND);
    shoal_world_t* w = serial_world(s);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_nav_goal_count(w), 3);
    shoal_nav_params_t p;
    cr_assert_eq(shoal_world_get_nav(w, &p), SHOAL_OK);
    cr_expect_float_eq(p.cell, 0.2f, 0.0f);
    cr_expect_float_eq(p.clearance, 0.3f, 0.0f);
    cr_expect_float_eq(p.wall_distance, 0.4f, 0.0f);
    cr_expect_float_eq(p.wall_speed, 0.6f, 0.0f);
    cr_expect_float_eq(p.margin, 3.0f, 0.0f);
    cr_expect_eq(p.max_bytes, 5e7);
    /* populate built the grid and solved the fields */
    shoal_nav_grid_info_t grid;
    cr_assert_eq(shoal_world_nav_grid(w, &grid), SHOAL_OK);
    cr_expect_gt(grid.nx, 0);
    cr_expect_gt(grid.blocked, 0, "the wall blocks cells");
    int64_t cells = 0;
    float one = 0.0f;
    cr_expect_eq(shoal_world_nav_field(w, 1, &one, 1, &cells), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(cells, (int64_t)grid.nx * grid.ny);

    /* each group's agents carry its goal and arrive_distance */
    shoal_agent_t ids[15];
    uint32_t groups[15];
    shoal_agent_batch_t b = {.ids = ids, .groups = groups};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 15, &n), SHOAL_OK);
    cr_assert_eq(n, 15);
    for (int32_t i = 0; i < n; i++) {
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, ids[i], &d), SHOAL_OK);
        cr_expect_eq(d.nav.goal, (int32_t)groups[i], "agent %d of group %u", (int)i, (unsigned)groups[i]);
        cr_expect_float_eq(d.nav.arrive_distance, groups[i] == 0 ? 1.0f : groups[i] == 2 ? 0.5f : 0.3f, 0.0f);
        cr_expect_float_eq(d.weights[SHOAL_BEHAVIOR_NAVIGATE], 1.0f, 0.0f);
    }

    int done = 0;
    for (int step = 0; step < 1600 && !done; step++) {
        cr_assert_eq(shoal_world_step(w, shoal_scenario_dt(s)), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_nav_stats_t all;
        cr_assert_eq(shoal_world_nav_stats(w, -1, &all), SHOAL_OK);
        cr_assert_eq(all.agents, 15);
        cr_assert_eq(all.no_way, 0, "step %d", step);
        done = all.arrived == 15;
        if (getenv("NAV_DEBUG") && step % 50 == 0)
            fprintf(stderr, "step %d: %d arrived, %d off grid, %d in walls, remaining %g\n", step,
                    all.arrived, all.off_grid, all.in_walls, all.mean_remaining);
    }
    for (int32_t g = 0; g < 3; g++) {
        shoal_nav_stats_t st;
        cr_assert_eq(shoal_world_nav_stats(w, g, &st), SHOAL_OK);
        cr_expect_eq(st.agents, 5, "goal %d", (int)g);
        cr_expect_eq(st.arrived, 5, "goal %d: %d of 5 arrived in 80 s", (int)g, st.arrived);
    }
    /* every agent is past the wall */
    float pos[45];
    shoal_agent_batch_t pb = {.positions = pos};
    cr_assert_eq(shoal_world_read_agents(w, &pb, 15, &n), SHOAL_OK);
    for (int32_t i = 0; i < n; i++) cr_expect_gt(pos[3 * i], 0.0f, "agent %d at x %g", (int)i, pos[3 * i]);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* Every key optional: an empty "nav" is shoal_nav_params_default(), and a
 * world whose scenario has no "nav" keeps the parameters it had. */
Test(scenario_nav, omitted_keys_take_the_library_defaults)
{
    shoal_scenario_t* s = load_text("{\"nav\": {\"goals\": [{\"point\": [3, 0]}]},"
                                    "\"groups\": [{\"count\": 2, \"behaviors\": {\"navigate\": {}},"
                                    "\"nav\": {\"goal\": \"goal0\"}}]}");
    shoal_world_t* w = serial_world(s);
    shoal_nav_params_t before = shoal_nav_params_default();
    before.cell = 0.5f;
    before.clearance = 0.5f;
    cr_assert_eq(shoal_world_set_nav(w, &before), SHOAL_OK);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_nav_params_t p, d = shoal_nav_params_default();
    cr_assert_eq(shoal_world_get_nav(w, &p), SHOAL_OK);
    cr_expect_eq(memcmp(&p, &d, sizeof p), 0, "an empty nav object sets the defaults");
    shoal_agent_t id;
    shoal_agent_batch_t b = {.ids = &id};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 1, &n), SHOAL_OK);
    shoal_agent_def_t def;
    cr_assert_eq(shoal_agent_get_def(w, id, &def), SHOAL_OK);
    cr_expect_eq(def.nav.goal, 0);
    cr_expect_float_eq(def.nav.arrive_distance, shoal_nav_default().arrive_distance, 0.0f);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    s = load_text("{\"groups\": [{\"count\": 1}]}");
    w = serial_world(s);
    cr_assert_eq(shoal_world_set_nav(w, &before), SHOAL_OK);
    uint64_t hash = shoal_world_state_hash(w);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_get_nav(w, &p), SHOAL_OK);
    cr_expect_eq(memcmp(&p, &before, sizeof p), 0, "no nav object: the world's parameters stay");
    cr_expect_eq(shoal_world_nav_goal_count(w), 0);
    cr_expect_neq(shoal_world_state_hash(w), hash, "the agent was added");
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* A group's nav.goal by index, and goals added after a world's own: the
 * file's goal 1 is the world's goal 2 then. */
Test(scenario_nav, goal_indexes_map_to_the_worlds_ids)
{
    shoal_scenario_t* s = load_text("{\"nav\": {\"goals\": [{\"point\": [3, 0]}, {\"point\": [-3, 0]}]},"
                                    "\"groups\": [{\"count\": 2, \"behaviors\": {\"navigate\": {}},"
                                    "\"nav\": {\"goal\": 1}}]}");
    shoal_world_t* w = serial_world(s);
    shoal_nav_goal_t own = {.kind = SHOAL_NAV_POINT, .count = 1, .points = {{0, 5}}};
    int32_t id = -1;
    cr_assert_eq(shoal_world_add_nav_goal(w, &own, &id), SHOAL_OK);
    cr_assert_eq(id, 0);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_nav_goal_count(w), 3);
    shoal_agent_t ids[2];
    shoal_agent_batch_t b = {.ids = ids};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 2, &n), SHOAL_OK);
    for (int32_t i = 0; i < n; i++) {
        shoal_agent_def_t def;
        cr_assert_eq(shoal_agent_get_def(w, ids[i], &def), SHOAL_OK);
        cr_expect_eq(def.nav.goal, 2);
    }
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

#define NAV_GROUP(nav) "\"groups\": [{\"name\": \"walkers\", \"count\": 2" nav "}]}"
#define NAVIGATING(goal) NAV_GROUP(", \"behaviors\": {\"navigate\": {}}, \"nav\": {\"goal\": " goal "}")

Test(scenario_nav, bad_goals_are_refused_naming_the_key)
{
    expect_error("{\"nav\": {\"goals\": [{\"name\": \"exit\", \"point\": [1, 0]}]}," NAVIGATING("\"exut\""),
                 "groups[0].nav.goal: no nav goal is named 'exut'; did you mean 'exit'?");
    expect_error("{" NAVIGATING("\"exit\""), "groups[0].nav.goal: no nav goal is named 'exit': the "
                                             "scenario has no nav.goals");
    expect_error("{\"nav\": {\"goals\": [{\"point\": [1, 0]}]}," NAVIGATING("1"),
                 "groups[0].nav.goal: must be <= 0, got 1");
    expect_error("{\"nav\": {\"goals\": [{\"point\": [1, 0]}]}," NAVIGATING("0.5"),
                 "groups[0].nav.goal: must be an integer");
    expect_error(
        "{\"nav\": {\"goals\": [{\"point\": [1, 0]}]}," NAVIGATING("true"),
        "groups[0].nav.goal: expected a goal name (a string) or an index of nav.goals, got a boolean");
    expect_error("{\"nav\": {\"goals\": [{\"name\": \"exit\", \"point\": [1, 0]},"
                 "{\"name\": \"exit\", \"point\": [2, 0]}]}," NAV_GROUP(""),
                 "nav.goals[1].name: 'exit' is already the name of nav.goals[0]: goal names must be unique");
    expect_error("{\"nav\": {\"goals\": [{\"name\": \"goal1\", \"point\": [1, 0]},"
                 "{\"point\": [2, 0]}]}," NAV_GROUP(""),
                 "nav.goals[1]: 'goal1' is already the name of nav.goals[0]");
    expect_error("{\"nav\": {\"goals\": [{\"line\": [[1, 2], [1, 2]]}]}," NAV_GROUP(""),
                 "nav.goals[0].line: the two points are equal: a line goal needs a length");
    expect_error("{\"nav\": {\"goals\": [{\"line\": [[1, 2]]}]}," NAV_GROUP(""),
                 "nav.goals[0].line: expected an array of 2 points [x, y], got 1 point");
    expect_error("{\"nav\": {\"goals\": [{\"area\": [[0, 0], [1, 0]]}]}," NAV_GROUP(""),
                 "nav.goals[0].area: expected an array of 3 to 16 points [x, y], got 2 points");
    expect_error("{\"nav\": {\"goals\": [{\"area\": [[0, 0], [1, 1], [2, 2]]}]}," NAV_GROUP(""),
                 "nav.goals[0].area: the polygon has zero area");
    expect_error("{\"nav\": {\"goals\": [{\"area\": [[0, 0], [1, 0], [1, \"x\"]]}]}," NAV_GROUP(""),
                 "nav.goals[0].area[2][1]: expected a number, got a string");
    expect_error("{\"nav\": {\"goals\": [{\"point\": [0, 0, 0]}]}," NAV_GROUP(""),
                 "nav.goals[0].point: expected 2 numbers [x, y]");
    expect_error(
        "{\"nav\": {\"goals\": [{\"point\": [0, 0], \"area\": [[0, 0], [1, 0], [1, 1]]}]}," NAV_GROUP(""),
        "nav.goals[0].area: a goal is one shape: give one of \"point\", \"line\" or \"area\", not "
        "both \"point\" and \"area\"");
    expect_error("{\"nav\": {\"goals\": [{\"name\": \"x\"}]}," NAV_GROUP(""),
                 "missing required key 'nav.goals[0].point' (or \"line\" or \"area\": a goal needs a shape)");
    expect_error("{\"nav\": {\"goals\": [{\"pont\": [0, 0]}]}," NAV_GROUP(""),
                 "unknown key 'nav.goals[0].pont'; did you mean 'point'?");
    expect_error("{\"nav\": {\"goals\": {\"point\": [0, 0]}}," NAV_GROUP(""),
                 "nav.goals: expected an array of objects, got an object");
}

Test(scenario_nav, bad_grid_parameters_are_refused_naming_the_key)
{
    expect_error("{\"nav\": {\"cel\": 1}," NAV_GROUP(""), "unknown key 'nav.cel'; did you mean 'cell'?");
    expect_error("{\"nav\": {\"cell\": 0}," NAV_GROUP(""), "nav.cell: must be > 0, got 0");
    expect_error("{\"nav\": {\"cell\": 1}," NAV_GROUP(""),
                 "nav.cell: clearance (0.25 m) must be at least half the cell (0.5 m)");
    expect_error("{\"nav\": {\"clearance\": 0.01}," NAV_GROUP(""),
                 "nav.clearance: clearance (0.01 m) must be at least half the cell (0.05 m)");
    expect_error("{\"nav\": {\"wall_distance\": -1}," NAV_GROUP(""),
                 "nav.wall_distance: must be >= 0, got -1");
    expect_error("{\"nav\": {\"wall_speed\": 0}," NAV_GROUP(""), "nav.wall_speed: must be > 0, got 0");
    expect_error("{\"nav\": {\"wall_speed\": 1.5}," NAV_GROUP(""),
                 "nav.wall_speed: must be in (0, 1], got 1.5");
    expect_error("{\"nav\": {\"bounds\": [0, 0, 1]}," NAV_GROUP(""),
                 "nav.bounds: expected an array of 4 numbers [x0, y0, x1, y1]");
    expect_error("{\"nav\": {\"bounds\": [0, 0, -1, 1]}," NAV_GROUP(""),
                 "nav.bounds: must be [x0, y0, x1, y1] with x1 > x0 and y1 > y0");
    expect_error("{\"nav\": {\"bounds\": [0, 0, null, 1]}," NAV_GROUP(""),
                 "nav.bounds[2]: expected a number, got null");
    expect_error("{\"nav\": {\"margin\": -2}," NAV_GROUP(""), "nav.margin: must be >= 0, got -2");
    expect_error("{\"nav\": {\"max_bytes\": 0}," NAV_GROUP(""),
                 "nav.max_bytes: must be > 0 and <= 1e+18, got 0");
    expect_error("{\"nav\": []," NAV_GROUP(""), "nav: expected an object");
    expect_error(
        "{\"nav\": {\"goals\": [{\"point\": [1, 0]}]}," NAV_GROUP(", \"nav\": {\"goal\": 0, \"arive\": 1}"),
        "unknown key 'groups[0].nav.arive'");
    expect_error(
        "{\"nav\": {\"goals\": [{\"point\": [1, 0]}]}," NAV_GROUP(", \"nav\": {\"arrive_distance\": -1}"),
        "groups[0].nav.arrive_distance: must be >= 0, got -1");
}

Test(scenario_nav, navigate_needs_a_goal_and_a_2d_world)
{
    expect_error(
        "{\"nav\": {\"goals\": [{\"point\": [1, 0]}]}," NAV_GROUP(", \"behaviors\": {\"navigate\": {}}"),
        "missing required key 'groups[0].nav.goal' (behaviors.navigate of group 'walkers' needs a "
        "goal");
    expect_error("{" NAV_GROUP(", \"behaviors\": {\"navigate\": {\"weight\": 2}}, \"nav\": {}"),
                 "missing required key 'groups[0].nav.goal'");
    /* weight 0 is off: no goal needed */
    shoal_scenario_destroy(load_text("{" NAV_GROUP(", \"behaviors\": {\"navigate\": {\"weight\": 0}}")));
    expect_error("{\"dimensions\": 3, \"nav\": {}," NAV_GROUP(""),
                 "nav: navigation fields are 2D; this scenario is 3D");
    expect_error("{\"dimensions\": 3," NAV_GROUP(", \"nav\": {\"arrive_distance\": 1}"),
                 "groups[0].nav: navigation fields are 2D; this scenario is 3D");
    expect_error("{\"dimensions\": 3," NAV_GROUP(", \"behaviors\": {\"navigate\": {}}"),
                 "missing required key 'groups[0].nav.goal'");
}

/* A world with agents, a wall, its own nav parameters and a goal, so that a
 * failed populate has something to leave as it was. */
static shoal_world_t* world_with_nav(const shoal_scenario_t* s, shoal_nav_params_t* params)
{
    shoal_world_t* w = serial_world(s);
    for (int i = 0; i < 3; i++) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)i;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    *params = shoal_nav_params_default();
    params->cell = 0.2f;
    params->clearance = 0.3f;
    cr_assert_eq(shoal_world_set_nav(w, params), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_nav_goal_t own = {.kind = SHOAL_NAV_POINT, .count = 1, .points = {{-20, 20}}};
    cr_assert_eq(shoal_world_add_nav_goal(w, &own, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    return w;
}

static void expect_populate_fails_cleanly(const char* json, shoal_status_t status, const char* expected)
{
    shoal_scenario_t* s = load_text(json);
    shoal_nav_params_t params;
    shoal_world_t* w = world_with_nav(s, &params);
    uint64_t hash = shoal_world_state_hash(w);
    cr_assert_eq(shoal_scenario_populate(s, w), status, "%s", shoal_world_last_error(w));
    cr_expect_not_null(strstr(shoal_world_last_error(w), expected), "message '%s' lacks '%s'",
                       shoal_world_last_error(w), expected);
    cr_expect_eq(shoal_world_agent_count(w), 3);
    cr_expect_eq(shoal_world_wall_count(w), 0);
    cr_expect_eq(shoal_world_nav_goal_count(w), 1);
    shoal_nav_params_t now;
    cr_assert_eq(shoal_world_get_nav(w, &now), SHOAL_OK);
    cr_expect_eq(memcmp(&now, &params, sizeof now), 0, "the nav parameters are as before");
    cr_expect_eq(shoal_world_state_hash(w), hash, "the state hash moved");
    /* the next goal gets the id it would have got; the world still steps */
    shoal_nav_goal_t g = {.kind = SHOAL_NAV_POINT, .count = 1, .points = {{20, 20}}};
    int32_t id = -1;
    cr_expect_eq(shoal_world_add_nav_goal(w, &g, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(id, 1);
    cr_expect_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario_nav, a_goal_inside_a_wall_fails_the_populate_and_leaves_the_world_as_it_was)
{
    /* the second goal's point lies on the wall: no walkable cell */
    expect_populate_fails_cleanly(
        "{" WALL "\"nav\": {\"goals\": [{\"point\": [4, 0]}, {\"name\": \"in_wall\", \"point\": [0, 1]}]},"
        "\"groups\": [{\"count\": 20, \"behaviors\": {\"navigate\": {}}, \"nav\": {\"goal\": 0}}]}",
        SHOAL_ERR_INVALID_ARGUMENT, "no walkable cell");
    /* a closed room whose inside is all clearance */
    expect_populate_fails_cleanly("{\"walls\": [{\"points\": [[0, 0], [0.3, 0], [0.3, 0.3], [0, 0.3]], "
                                  "\"closed\": true}], \"nav\": {\"goals\": [{\"area\": [[0.1, 0.1], [0.2, "
                                  "0.1], [0.2, 0.2]]}]}, \"groups\": [{\"count\": 1}]}",
                                  SHOAL_ERR_INVALID_ARGUMENT, "no walkable cell");
}

Test(scenario_nav, a_grid_over_its_memory_limit_fails_the_populate_and_leaves_the_world_as_it_was)
{
    expect_populate_fails_cleanly("{" WALL "\"nav\": {\"max_bytes\": 1000, \"goals\": [{\"point\": [4, 0]}]},"
                                  "\"groups\": [{\"count\": 2}]}",
                                  SHOAL_ERR_CAPACITY, "max_bytes");
}

/* `shoal run` adds the nav stats to the summary and to --json when the
 * world has goals, and nothing otherwise. */
Test(scenario_nav, shoal_run_reports_the_nav_stats, .timeout = 120)
{
    cJSON* root = run_json((const char*[]){"run", U_WALL, "--threads", "1", "--json", NULL});
    const cJSON* nav = cJSON_GetObjectItemCaseSensitive(root, "nav");
    cr_assert(cJSON_IsObject(nav), "--json has a \"nav\" object");
    cr_expect_eq(json_number(nav, "goals"), 1.0);
    cr_expect_eq(json_number(nav, "agents"), 40.0);
    cr_expect_eq(json_number(nav, "arrived"), 40.0, "all 40 pedestrians leave the U and reach the room");
    cr_expect_eq(json_number(nav, "no_way"), 0.0);
    cr_expect_eq(json_number(nav, "off_grid"), 0.0);
    cr_expect_eq(json_number(nav, "in_walls"), 0.0);
    cr_expect_eq(json_number(nav, "mean_remaining"), 0.0);
    cr_expect_eq(json_number(root, "steps"), 2400.0);
    cJSON_Delete(root);

    /* after a few steps nobody is there yet, and the way left is long */
    root = run_json((const char*[]){"run", U_WALL, "--steps", "5", "--threads", "1", "--json", NULL});
    nav = cJSON_GetObjectItemCaseSensitive(root, "nav");
    cr_assert(cJSON_IsObject(nav));
    cr_expect_eq(json_number(nav, "arrived"), 0.0);
    cr_expect_gt(json_number(nav, "mean_remaining"), 8.0, "out of the U and round it: more than 8 m");
    cJSON_Delete(root);

    cli_output_t r;
    run_cli((const char*[]){"run", U_WALL, "--steps", "5", "--threads", "1", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(matches(r.out, "\nnav +40 agents, 0 arrived, 0 no way, 0 off grid, 0 in walls, mean remaining "
                             "[0-9]+\\.[0-9]{2} m\n"),
              "%s", r.out);
    output_free(&r);

    run_cli((const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/tiny.json", "--steps", "2", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_null(strstr(r.out, "\nnav "), "no nav line without goals: %s", r.out);
    output_free(&r);
    root = run_json(
        (const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/tiny.json", "--steps", "2", "--json", NULL});
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(root, "nav"));
    cJSON_Delete(root);
}
