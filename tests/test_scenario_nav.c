/* Navigation in scenario files (src/io/scenario.c, scenario_behaviors.c,
 * scenario_populate.c): the top-level "nav" object (the grid and its
 * goals) and a group's "nav" (goal, arrive_distance) reach the world, and
 * pedestrians walk round a wall to goals of every kind; goals that are
 * exits or several segments, congestion keys, and journeys of stages
 * (scenarios/nav_journey.json: a waiting area, two rooms in round robin,
 * an exit) reach the world and are walked; every bad input is
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

#define SCENARIO_TEST_FILE "nav.json"
#include "scenario_support.h"

#define U_WALL SHOAL_SOURCE_DIR "/scenarios/nav_u_wall.json"
#define JOURNEY SHOAL_SOURCE_DIR "/scenarios/nav_journey.json"

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
    cr_expect_eq(shoal_world_journey_count(w), 0, "the journeys added are taken back");
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
    /* the same with a journey through both goals: added, then taken back */
    expect_populate_fails_cleanly(
        "{" WALL "\"nav\": {\"goals\": [{\"point\": [4, 0]}, {\"name\": \"in_wall\", \"point\": [0, 1]}],"
        "\"journeys\": [{\"stages\": [{\"goal\": 0, \"then\": {\"fixed\": 1}}, {\"goal\": \"in_wall\"}]}]},"
        "\"groups\": [{\"count\": 20, \"behaviors\": {\"navigate\": {}}, \"nav\": {\"journey\": 0}}]}",
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
    cr_expect_eq(json_number(nav, "exited"), 0.0, "the room is no exit");
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
    cr_expect(matches(r.out, "\nnav +40 agents, 0 arrived, 0 exited, 0 no way, 0 off grid, 0 in walls, mean "
                             "remaining [0-9]+\\.[0-9]{2} m\n"),
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

/* A goal's field at the cell holding (x, y) (fields solved). */
static float field_at(shoal_world_t* w, int32_t goal, float x, float y)
{
    shoal_nav_grid_info_t g;
    cr_assert_eq(shoal_world_nav_grid(w, &g), SHOAL_OK);
    int64_t n = (int64_t)g.nx * g.ny, got = 0;
    float* T = malloc((size_t)n * sizeof *T);
    cr_assert_not_null(T);
    cr_assert_eq(shoal_world_nav_field(w, goal, T, n, &got), SHOAL_OK, "%s", shoal_world_last_error(w));
    int32_t i = (int32_t)floorf((x - g.origin[0]) / g.cell), j = (int32_t)floorf((y - g.origin[1]) / g.cell);
    cr_assert(i >= 0 && i < g.nx && j >= 0 && j < g.ny, "(%g, %g) is off the grid", (double)x, (double)y);
    float t = T[(int64_t)j * g.nx + i];
    free(T);
    return t;
}

/* An exit of two segments, one each side of the start, and the congestion
 * keys: both segments start the field, the walkers split between them and
 * all leave the world. */
Test(scenario_nav, an_exit_of_two_segments_and_congestion_reach_the_world, .timeout = 120)
{
    shoal_scenario_t* s = load_text(
        "{\"dt\": 0.05, \"nav\": {\"cell\": 0.2, \"clearance\": 0.3, \"density_weight\": 0.5,"
        "\"density_interval\": 7, \"goals\": [{\"name\": \"doors\", \"exit\": true,"
        "\"line\": [[[-6, -1], [-6, 1]], [[6, -1], [6, 1]]]}, {\"name\": \"stay\", \"point\": [0, 5],"
        "\"exit\": false}]},"
        "\"groups\": [{\"count\": 10, \"spawn\": {\"shape\": \"box\", \"center\": [0, 0], \"size\": "
        "[6, 2]}, \"behaviors\": {\"navigate\": {}}, \"nav\": {\"goal\": \"doors\"},"
        "\"crowd\": {\"preset\": \"pedestrian\"}}]}");
    shoal_world_t* w = serial_world(s);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_nav_params_t p;
    cr_assert_eq(shoal_world_get_nav(w, &p), SHOAL_OK);
    cr_expect_float_eq(p.density_weight, 0.5f, 0.0f);
    cr_expect_eq(p.density_interval, 7);
    /* 0 on both segments */
    cr_expect_lt(field_at(w, 0, -6.0f, 0.0f), 0.2f);
    cr_expect_lt(field_at(w, 0, 6.0f, 0.0f), 0.2f);
    float mid = field_at(w, 0, 0.1f, 0.1f);
    /* 5.9 m to the nearer door, more through the crowd that stands there
     * (congestion) */
    cr_expect(mid > 5.8f && mid < 8.0f, "%g m from the middle to the nearer door", (double)mid);
    int32_t left = 0, right = 0;
    {
        float pos[30];
        shoal_agent_batch_t b = {.positions = pos};
        int32_t n = 0;
        cr_assert_eq(shoal_world_read_agents(w, &b, 10, &n), SHOAL_OK);
        for (int32_t i = 0; i < n; i++) pos[3 * i] < 0.0f ? left++ : right++;
    }
    shoal_nav_stats_t st = {0};
    for (int step = 0; step < 600 && shoal_world_agent_count(w) > 0; step++) {
        cr_assert_eq(shoal_world_step(w, shoal_scenario_dt(s)), SHOAL_OK, "%s", shoal_world_last_error(w));
        if (step == 0) cr_expect_eq(shoal_world_agent_count(w), 10, "nobody is at a door yet");
    }
    cr_assert_eq(shoal_world_nav_stats(w, 0, &st), SHOAL_OK);
    cr_expect_eq(st.exited, 10, "all 10 left through the doors in 30 s (%d left of start, %d right)",
                 (int)left, (int)right);
    cr_expect_eq(shoal_world_agent_count(w), 0);
    cr_expect_gt(left, 0, "the start straddles the middle");
    cr_expect_gt(right, 0);
    cr_assert_eq(shoal_world_nav_stats(w, 1, &st), SHOAL_OK);
    cr_expect_eq(st.exited, 0, "\"exit\": false is no exit");
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* scenarios/nav_journey.json: 40 visitors wait in a lobby, go 3 to 1 to
 * two rooms by round robin, wait there and leave through an exit. The
 * file's goals follow one of the world's own, so the stages' goals are the
 * world's ids 1 to 4. */
Test(scenario_nav, a_journey_through_a_waiting_area_and_rooms_by_round_robin_to_an_exit, .timeout = 180)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = NULL;
    cr_assert_eq(shoal_scenario_load_file(JOURNEY, &s, &err), SHOAL_OK, "%s", err.message);
    shoal_world_t* w = serial_world(s);
    shoal_nav_goal_t own = {.kind = SHOAL_NAV_POINT, .count = 1, .points = {{0, -6}}};
    cr_assert_eq(shoal_world_add_nav_goal(w, &own, NULL), SHOAL_OK);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_nav_goal_count(w), 5);
    cr_expect_eq(shoal_world_journey_count(w), 1);

    enum { N = 40 };
    shoal_agent_t ids[N];
    shoal_agent_batch_t b = {.ids = ids};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, N, &n), SHOAL_OK);
    cr_assert_eq(n, N);
    for (int32_t i = 0; i < N; i++) {
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, ids[i], &d), SHOAL_OK);
        cr_expect_eq(d.nav.journey, 0);
        shoal_nav_agent_t a;
        cr_assert_eq(shoal_agent_get_nav_state(w, ids[i], &a), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_expect_eq(a.stage, 0);
        cr_expect_eq(a.goal, 1, "the lobby is the world's goal 1");
    }

    /* every visitor's stages as it walks them: bit k for stage k */
    int seen[N] = {0}, max_waited_lobby = 0;
    int step = 0;
    for (; step < shoal_scenario_steps(s) && shoal_world_agent_count(w) > 0; step++) {
        cr_assert_eq(shoal_world_step(w, shoal_scenario_dt(s)), SHOAL_OK, "%s", shoal_world_last_error(w));
        for (int32_t i = 0; i < N; i++) {
            shoal_nav_agent_t a;
            if (!shoal_agent_is_valid(w, ids[i])) continue;
            cr_assert_eq(shoal_agent_get_nav_state(w, ids[i], &a), SHOAL_OK);
            cr_assert(a.stage >= 0 && a.stage < 4, "stage %d", (int)a.stage);
            cr_expect_eq(a.goal, a.stage + 1, "stage %d's goal", (int)a.stage);
            seen[i] |= 1 << a.stage;
            if (a.stage == 0 && a.waited > 0.0f) max_waited_lobby = 1;
            cr_expect_leq(a.waited, 2.0f + 1e-4f, "nobody waits past a stage's wait");
        }
    }
    cr_expect_eq(shoal_world_agent_count(w), 0, "all left in %d steps", step);
    shoal_nav_stats_t st;
    cr_assert_eq(shoal_world_nav_stats(w, 4, &st), SHOAL_OK);
    cr_expect_eq(st.exited, N);
    cr_expect(max_waited_lobby, "visitors waited in the lobby");
    int to_a = 0, to_b = 0;
    for (int32_t i = 0; i < N; i++) {
        cr_expect_eq(seen[i] & 1, 1, "visitor %d waited in the lobby: stages seen 0x%x", (int)i, seen[i]);
        cr_expect_neq(seen[i] & 6, 6, "visitor %d saw both rooms", (int)i);
        to_a += (seen[i] & 2) != 0;
        to_b += (seen[i] & 4) != 0;
    }
    cr_expect_eq(to_a, 30, "round robin 3 to 1: 30 of 40 to room_a, got %d", to_a);
    cr_expect_eq(to_b, 10, "and 10 to room_b, got %d", to_b);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    cJSON* root = run_json((const char*[]){"run", JOURNEY, "--threads", "2", "--json", NULL});
    const cJSON* nav = cJSON_GetObjectItemCaseSensitive(root, "nav");
    cr_assert(cJSON_IsObject(nav));
    cr_expect_eq(json_number(nav, "exited"), 40.0, "shoal run reports the 40 who left");
    cr_expect_eq(json_number(nav, "agents"), 0.0);
    cJSON_Delete(root);
}

/* The visitors of scenarios/nav_journey.json walk from their room to the
 * exit line (x = 12) and leave there, not where they stand when they move
 * on from their room (x < 9): the status restarts at a stage change. */
Test(scenario_nav, journey_visitors_leave_at_the_exit_line, .timeout = 180)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = NULL;
    cr_assert_eq(shoal_scenario_load_file(JOURNEY, &s, &err), SHOAL_OK, "%s", err.message);
    shoal_world_t* w = serial_world(s);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    enum { N = 40 };
    shoal_agent_t ids[N];
    shoal_agent_batch_t b = {.ids = ids};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, N, &n), SHOAL_OK);
    float last_x[N] = {0};
    int on_exit_stage[N] = {0};
    for (int step = 0; step < shoal_scenario_steps(s) && shoal_world_agent_count(w) > 0; step++) {
        cr_assert_eq(shoal_world_step(w, shoal_scenario_dt(s)), SHOAL_OK, "%s", shoal_world_last_error(w));
        for (int32_t i = 0; i < N; i++) {
            shoal_agent_state_t a;
            shoal_nav_agent_t na;
            if (!shoal_agent_is_valid(w, ids[i])) continue;
            cr_assert_eq(shoal_agent_get_state(w, ids[i], &a), SHOAL_OK);
            cr_assert_eq(shoal_agent_get_nav_state(w, ids[i], &na), SHOAL_OK);
            last_x[i] = a.position[0];
            on_exit_stage[i] |= na.stage == 3;
        }
    }
    cr_expect_eq(shoal_world_agent_count(w), 0);
    for (int32_t i = 0; i < N; i++) {
        cr_expect(on_exit_stage[i], "visitor %d walked the exit stage", (int)i);
        cr_expect_gt(last_x[i], 11.0f, "visitor %d left from x = %g, not at the exit line", (int)i,
                     (double)last_x[i]);
    }
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

#define JGOALS                                                                                               \
    "\"goals\": [{\"name\": \"lobby\", \"area\": [[0, 0], [2, 0], [2, 2]]},"                                 \
    "{\"name\": \"exit\", \"line\": [[5, 0], [5, 2]], \"exit\": true}]"
#define JOURNEYS(stages)                                                                                     \
    "{\"nav\": {" JGOALS ", \"journeys\": [{\"name\": \"visit\", \"stages\": " stages "}]},"
#define STAGE0(then)                                                                                         \
    "[{\"name\": \"in\", \"goal\": \"lobby\", \"then\": " then "}, {\"name\": \"out\", \"goal\": 1}]"
#define J_ERR(stages, expected) expect_error(JOURNEYS(stages) NAV_GROUP(""), expected)

Test(scenario_nav, bad_exits_segments_and_congestion_keys_are_refused_naming_the_key)
{
    expect_error("{\"nav\": {\"goals\": [{\"point\": [1, 0], \"exit\": 1}]}," NAV_GROUP(""),
                 "nav.goals[0].exit: expected true or false, got a number");
    expect_error("{\"nav\": {\"goals\": [{\"line\": [[[0, 0], [1, 0]], [[2, 2], [2, 2]]]}]}," NAV_GROUP(""),
                 "nav.goals[0].line[1]: the two points are equal: a segment needs a length");
    expect_error("{\"nav\": {\"goals\": [{\"line\": [[[0, 0], [1, 0], [2, 0]]]}]}," NAV_GROUP(""),
                 "nav.goals[0].line[0]: expected an array of 2 points [x, y], got 3 points");
    expect_error("{\"nav\": {\"goals\": [{\"line\": [[[0, 0], [1, 0]], [[0, 1], \"x\"]]}]}," NAV_GROUP(""),
                 "nav.goals[0].line[1][1]: expected an array [x, y], got a string");
    expect_error(
        "{\"nav\": {\"goals\": [{\"line\": [[[0,0],[1,0]], [[0,1],[1,1]], [[0,2],[1,2]], [[0,3],[1,3]],"
        "[[0,4],[1,4]], [[0,5],[1,5]], [[0,6],[1,6]], [[0,7],[1,7]], [[0,8],[1,8]]]}]}," NAV_GROUP(""),
        "nav.goals[0].line: holds 9 segments, above the limit of 8");
    expect_error("{\"nav\": {\"density_weight\": -1}," NAV_GROUP(""),
                 "nav.density_weight: must be >= 0, got -1");
    expect_error("{\"nav\": {\"density_interval\": 0}," NAV_GROUP(""),
                 "nav.density_interval: must be >= 1, got 0");
    expect_error("{\"nav\": {\"density_interval\": 2.5}," NAV_GROUP(""),
                 "nav.density_interval: must be an integer, got 2.5");
    expect_error("{\"nav\": {\"density_interval\": 1000001}," NAV_GROUP(""),
                 "nav.density_interval: must be <= 1000000, got 1000001");
}

Test(scenario_nav, bad_journeys_are_refused_naming_the_key)
{
    expect_error("{\"nav\": {" JGOALS ", \"journeys\": {}}," NAV_GROUP(""),
                 "nav.journeys: expected an array of objects, got an object");
    expect_error("{\"nav\": {" JGOALS ", \"journeys\": [{\"name\": \"visit\"}]}," NAV_GROUP(""),
                 "missing required key 'nav.journeys[0].stages'");
    expect_error("{\"nav\": {" JGOALS ", \"journeys\": [{\"stagse\": []}]}," NAV_GROUP(""),
                 "unknown key 'nav.journeys[0].stagse'; did you mean 'stages'?");
    J_ERR("[]", "nav.journeys[0].stages: expected an array of 1 to 16 objects, got 0");
    J_ERR("{}", "nav.journeys[0].stages: expected an array of 1 to 16 objects, got an object");
    expect_error(
        "{\"nav\": {" JGOALS ", \"journeys\": [{\"name\": \"j\", \"stages\": [{\"goal\": 0}]},"
        "{\"name\": \"j\", \"stages\": [{\"goal\": 0}]}]}," NAV_GROUP(""),
        "nav.journeys[1].name: 'j' is already the name of nav.journeys[0]: journey names must be unique");
    J_ERR("[{\"name\": \"a\", \"goal\": 0}, {\"name\": \"a\", \"goal\": 1}]",
          "nav.journeys[0].stages[1].name: 'a' is already the name of stages[0]: stage names must be unique "
          "in a journey");
    J_ERR("[{\"goal\": 0, \"wiat\": 1}]", "unknown key 'nav.journeys[0].stages[0].wiat'");
    J_ERR("[{\"wait\": 1}]",
          "missing required key 'nav.journeys[0].stages[0].goal' (a stage is a goal to walk to)");
    J_ERR("[{\"goal\": \"lobbby\"}]",
          "nav.journeys[0].stages[0].goal: no nav goal is named 'lobbby'; did you mean "
          "'lobby'?");
    J_ERR("[{\"goal\": 5}]", "nav.journeys[0].stages[0].goal: must be <= 1, got 5");
    J_ERR("[{\"goal\": [0]}]",
          "nav.journeys[0].stages[0].goal: expected a nav goal name (a string) or an index of "
          "nav.goals, got an array");
    J_ERR("[{\"goal\": 0, \"wait\": -1}]", "nav.journeys[0].stages[0].wait: must be >= 0, got -1");
    J_ERR(STAGE0("\"next\""),
          "nav.journeys[0].stages[0].then: expected \"end\" or an object of one transition");
    J_ERR(STAGE0("1"), "nav.journeys[0].stages[0].then: expected \"end\" or an object of one transition: "
                       "{\"fixed\": stage}, {\"round_robin\": [stage or [stage, weight], ...]} or "
                       "{\"quickest\": [stage, ...]}, got a number");
    J_ERR(STAGE0("{}"), "nav.journeys[0].stages[0].then: expected \"end\" or an object of one transition");
    J_ERR(STAGE0("{\"fixed\": 1, \"quickest\": [1]}"),
          "nav.journeys[0].stages[0].then.quickest: a stage has one transition: not both \"fixed\" and "
          "\"quickest\"");
    J_ERR(STAGE0("{\"round_robbin\": [1]}"),
          "unknown key 'nav.journeys[0].stages[0].then.round_robbin'; did you mean 'round_robin'?");
    J_ERR(STAGE0("{\"fixed\": \"oot\"}"),
          "nav.journeys[0].stages[0].then.fixed: no stage is named 'oot'; did you mean 'out'?");
    J_ERR(STAGE0("{\"fixed\": 2}"), "nav.journeys[0].stages[0].then.fixed: must be <= 1, got 2");
    J_ERR(STAGE0("{\"round_robin\": [[\"out\", 2], [1, 0]]}"),
          "nav.journeys[0].stages[0].then.round_robin[1][1]: must be >= 1, got 0");
    J_ERR(STAGE0("{\"round_robin\": [[\"out\", 2, 3]]}"),
          "nav.journeys[0].stages[0].then.round_robin[0]: expected [stage, weight], got 3 elements");
    J_ERR(STAGE0("{\"round_robin\": [[\"uot\", 2]]}"),
          "nav.journeys[0].stages[0].then.round_robin[0][0]: no stage is named 'uot'");
    J_ERR(STAGE0("{\"quickest\": [1, 1, 1, 1, 1]}"),
          "nav.journeys[0].stages[0].then.quickest: expected an array of 1 to 4 stages, got 5");
    J_ERR(STAGE0("{\"quickest\": \"out\"}"),
          "nav.journeys[0].stages[0].then.quickest: expected an array of 1 to 4 stages, got a string");
    J_ERR(STAGE0("{\"quickest\": [[\"out\", 1]]}"),
          "nav.journeys[0].stages[0].then.quickest[0]: expected a stage name (a string) or an index of this "
          "journey's stages, got an array");
    J_ERR("[{\"goal\": 0, \"then\": {\"fixed\": 1}}, {\"goal\": \"exit\", \"then\": {\"fixed\": 0}}]",
          "nav.journeys[0].stages[1].then: goal 'exit' is an exit: agents leave on arriving there, so the "
          "journey ends there (leave \"then\" out)");
    J_ERR("[{\"goal\": \"exit\", \"wait\": 3}]",
          "nav.journeys[0].stages[0].wait: goal 'exit' is an exit: agents leave on arriving there, so they "
          "never wait");

    /* 17 stages */
    char json[2048];
    int at = snprintf(json, sizeof json, "{\"nav\": {" JGOALS ", \"journeys\": [{\"stages\": [");
    for (int k = 0; k < 17; k++)
        at += snprintf(json + at, sizeof json - (size_t)at, "%s{\"goal\": 0}", k ? "," : "");
    snprintf(json + at, sizeof json - (size_t)at, "]}]}, " NAV_GROUP(""));
    expect_error(json, "nav.journeys[0].stages: expected an array of 1 to 16 objects, got 17");

    /* a group's journey */
    expect_error(JOURNEYS("[{\"goal\": 0}]") NAV_GROUP(", \"nav\": {\"goal\": 0, \"journey\": \"visit\"}"),
                 "groups[0].nav.journey: give either \"goal\" or \"journey\", not both");
    expect_error(JOURNEYS("[{\"goal\": 0}]") NAV_GROUP(", \"nav\": {\"journey\": \"vist\"}"),
                 "groups[0].nav.journey: no journey is named 'vist'; did you mean 'visit'?");
    expect_error(JOURNEYS("[{\"goal\": 0}]") NAV_GROUP(", \"nav\": {\"journey\": 1}"),
                 "groups[0].nav.journey: must be <= 0, got 1");
    expect_error("{\"nav\": {" JGOALS "}," NAV_GROUP(", \"nav\": {\"journey\": \"visit\"}"),
                 "groups[0].nav.journey: no journey is named 'visit': the scenario has no nav.journeys");
    expect_error("{\"dimensions\": 3," NAV_GROUP(", \"nav\": {\"journey\": 0}"),
                 "groups[0].nav: navigation fields are 2D; this scenario is 3D");
    /* a journey is a goal for navigate; a stage by index, "end" spelled out */
    shoal_scenario_destroy(load_text(JOURNEYS(
        "[{\"goal\": 0, \"then\": {\"quickest\": [1]}}, {\"goal\": 1, "
        "\"then\": \"end\"}]") NAV_GROUP(", \"behaviors\": {\"navigate\": {}}, \"nav\": {\"journey\": "
                                         "\"visit\"}")));
}
