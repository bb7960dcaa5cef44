/* Measurements in scenario files (src/io/scenario_measure.c): the
 * top-level "measure" object's lines and areas reach the world with their
 * names, groups and parameters; every bad input is refused with a message
 * naming its key; a populate that fails on one leaves the world as it was;
 * `shoal run` reports them in its text and --json, writes their time
 * series with --measure-csv, and measures a resumed run from the resume.
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

#define SCENARIO_TEST_FILE "measure.json"
#include "scenario_support.h"

#define U_WALL SHOAL_SOURCE_DIR "/scenarios/nav_u_wall.json"

#define GROUPS "\"groups\": [{\"name\": \"a\", \"count\": 3}, {\"name\": \"b\", \"count\": 2}]"

Test(scenario_measure, lines_and_areas_reach_the_world)
{
    shoal_scenario_t* s = load_text(
        "{" GROUPS ", \"measure\": {\"lines\": [{\"name\": \"door\", \"from\": [0, -1], \"to\": [0, 1], "
        "\"group\": \"b\", \"window\": 2.5}, {\"from\": [1, 0], \"to\": [2, 0]}], \"areas\": [{\"name\": "
        "\"hall\", \"polygon\": [[-1, -1], [1, -1], [1, 1], [-1, 1]], \"every\": 4, \"group\": 0, "
        "\"cell_radius\": 1.5}, {\"polygon\": [[0, 0], [1, 0], [0, 1]]}]}}");
    shoal_world_t* w = serial_world(s);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_measure_line_count(w), 2);
    cr_assert_eq(shoal_world_measure_area_count(w), 2);
    shoal_measure_line_stats_t l;
    cr_assert_eq(shoal_world_measure_line_stats(w, 0, &l), SHOAL_OK);
    cr_expect_str_eq(l.name, "door");
    cr_expect_eq(l.group, 1, "group b is the second");
    cr_expect_eq(l.window, 2.5f);
    cr_expect(l.from[0] == 0.0f && l.from[1] == -1.0f && l.to[0] == 0.0f && l.to[1] == 1.0f);
    cr_assert_eq(shoal_world_measure_line_stats(w, 1, &l), SHOAL_OK);
    cr_expect_str_eq(l.name, "line1");
    cr_expect_eq(l.group, -1);
    cr_expect_eq(l.window, 1.0f);
    shoal_measure_area_stats_t a;
    cr_assert_eq(shoal_world_measure_area_stats(w, 0, -INFINITY, INFINITY, &a), SHOAL_OK);
    cr_expect_str_eq(a.name, "hall");
    cr_expect_eq(a.every, 4);
    cr_expect_eq(a.group, 0);
    cr_expect_eq(a.cell_radius, 1.5f);
    cr_expect_float_eq(a.area, 4.0, 1e-9);
    cr_assert_eq(shoal_world_measure_area_stats(w, 1, -INFINITY, INFINITY, &a), SHOAL_OK);
    cr_expect_str_eq(a.name, "area1");
    cr_expect_float_eq(a.area, 0.5, 1e-9);
    cr_expect_eq(a.every, 1);
    cr_expect_eq(a.cell_radius, 2.0f);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

#define M(body) "{" GROUPS ", \"measure\": " body "}"
#define LINE "{\"from\": [0, 0], \"to\": [1, 0]}"
#define BOX "[[0, 0], [1, 0], [1, 1], [0, 1]]"

Test(scenario_measure, bad_keys_are_refused_naming_them)
{
    expect_error(M("[]"), "measure: expected an object, got an array");
    expect_error(M("{\"lnes\": []}"), "lnes");
    expect_error(M("{\"lines\": {}}"), "measure.lines: expected an array");
    expect_error(M("{\"lines\": [{\"to\": [1, 0]}]}"), "missing required key 'measure.lines[0].from'");
    expect_error(M("{\"lines\": [{\"from\": [1, 0], \"to\": [1, 0]}]}"), "measure.lines[0].to");
    expect_error(M("{\"lines\": [{\"from\": [1, 0], \"to\": [1, 0]}]}"), "a line needs a length");
    expect_error(M("{\"lines\": [{\"from\": [1], \"to\": [2, 0]}]}"), "measure.lines[0].from");
    expect_error(M("{\"lines\": [{\"from\": [0, 0], \"to\": [1, 0], \"window\": 0}]}"), "window");
    expect_error(M("{\"lines\": [{\"from\": [0, 0], \"to\": [1, 0], \"group\": \"c\"}]}"), "group");
    expect_error(M("{\"lines\": [{\"from\": [0, 0], \"to\": [1, 0], \"group\": 2}]}"), "group");
    expect_error(M("{\"lines\": [{\"from\": [0, 0], \"to\": [1, 0], \"wdth\": 2}]}"), "wdth");
    expect_error(M("{\"lines\": [{\"name\": \"x\", \"from\": [0, 0], \"to\": [1, 0]}, {\"name\": \"x\", "
                   "\"from\": [0, 0], \"to\": [1, 0]}]}"),
                 "'x' is already the name of measure.lines[0]");
    expect_error(M("{\"lines\": [{\"name\": \"a name of more than thirty-one bytes\", \"from\": [0, 0], "
                   "\"to\": [1, 0]}]}"),
                 "measure.lines[0].name");
    expect_error(M("{\"areas\": [{\"polygon\": [[0, 0], [1, 0]]}]}"),
                 "measure.areas[0].polygon: expected an array of 3 to 16 points [x, y], got 2 points");
    expect_error(M("{\"areas\": [{\"polygon\": [[0, 0], [1, 1], [2, 2]]}]}"), "has zero area");
    expect_error(M("{\"areas\": [{}]}"), "missing required key 'measure.areas[0].polygon'");
    expect_error(M("{\"areas\": [{\"polygon\": " BOX ", \"every\": 0}]}"), "measure.areas[0].every");
    expect_error(M("{\"areas\": [{\"polygon\": " BOX ", \"every\": 1.5}]}"), "measure.areas[0].every");
    expect_error(M("{\"areas\": [{\"polygon\": " BOX ", \"cell_radius\": -1}]}"), "cell_radius");
    expect_error(M("{\"areas\": [{\"polygon\": [[0, 0], [1, 0], [1, \"a\"]]}]}"),
                 "measure.areas[0].polygon[2]");
    expect_error("{\"dimensions\": 3, \"groups\": [{\"count\": 1}], \"measure\": {\"lines\": [" LINE "]}}",
                 "measurement lines and areas are 2D");
    /* the key before the groups it names, any order in the file */
    shoal_scenario_t* s = load_text(
        "{\"measure\": {\"lines\": [{\"from\": [0, 0], \"to\": [1, 0], \"group\": \"b\"}]}, " GROUPS "}");
    shoal_scenario_destroy(s);
}

/* A line the world refuses (beyond 1e18 m) fails the populate, with the
 * world as it was: no agent, line or area. */
Test(scenario_measure, a_populate_that_fails_leaves_no_measurement)
{
    shoal_scenario_t* s = load_text(M("{\"areas\": [{\"polygon\": " BOX "}], \"lines\": [{\"from\": [0, 0], "
                                      "\"to\": [1e30, 0]}]}"));
    shoal_world_t* w = serial_world(s);
    uint64_t before = shoal_world_state_hash(w);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "world_add_measure_line") != NULL, "%s",
              shoal_world_last_error(w));
    cr_expect_eq(shoal_world_agent_count(w), 0);
    cr_expect_eq(shoal_world_measure_line_count(w), 0);
    cr_expect_eq(shoal_world_measure_area_count(w), 0);
    cr_expect_eq(shoal_world_state_hash(w), before);
    cr_assert_eq(shoal_scenario_add_measures(s, w), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_measure_area_count(w), 0, "add_measures is all or nothing too");
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

static const cJSON* item(const cJSON* array, int i)
{
    const cJSON* e = cJSON_GetArrayItem(array, i);
    cr_assert_not_null(e);
    return e;
}

Test(scenario_measure, shoal_run_reports_them_and_writes_their_series, .timeout = 120)
{
    cJSON* root =
        run_json((const char*[]){"run", U_WALL, "--threads", "1", "--steps", "400", "--json", NULL});
    const cJSON* m = cJSON_GetObjectItemCaseSensitive(root, "measure");
    cr_assert(cJSON_IsObject(m), "--json has a \"measure\" object");
    const cJSON* lines = cJSON_GetObjectItemCaseSensitive(m, "lines");
    const cJSON* areas = cJSON_GetObjectItemCaseSensitive(m, "areas");
    cr_assert_eq(cJSON_GetArraySize(lines), 2);
    cr_assert_eq(cJSON_GetArraySize(areas), 1);
    const cJSON* opening = item(lines, 0);
    cr_expect_str_eq(json_string(opening, "name"), "opening");
    cr_expect_eq(json_number(opening, "positive"), 40.0, "all 40 leave the U in 20 s");
    cr_expect_eq(json_number(opening, "negative"), 0.0);
    cr_expect_eq(json_number(opening, "crossings"), 40.0);
    cr_expect_float_eq(json_number(opening, "duration"), 20.0, 1e-4);
    cr_expect_float_eq(json_number(opening, "mean_flow"), 2.0, 1e-4);
    cr_expect_lt(json_number(opening, "first_time"), json_number(opening, "last_time"));
    const cJSON* room = item(areas, 0);
    cr_expect_str_eq(json_string(room, "name"), "room");
    cr_expect_eq(json_number(room, "samples"), 40.0);
    cr_expect_eq(json_number(room, "area"), 16.0);
    for (const char* const* k = (const char* const[]){"mean_count", "mean_density", "mean_voronoi_density",
                                                      "mean_speed", "mean_voronoi_speed", NULL};
         *k; ++k)
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(room, *k)), "%s", *k);
    cJSON_Delete(root);

    /* no line yet: first and last are null */
    root = run_json((const char*[]){"run", U_WALL, "--threads", "1", "--steps", "2", "--json", NULL});
    opening =
        item(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "measure"), "lines"), 0);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(opening, "first_time")));
    cJSON_Delete(root);
    root = run_json(
        (const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/tiny.json", "--steps", "2", "--json", NULL});
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(root, "measure"), "none without lines or areas");
    cJSON_Delete(root);

    char csv[] = "/tmp/shoal_measure_XXXXXX";
    int fd = mkstemp(csv);
    cr_assert_geq(fd, 0);
    close(fd);
    cli_output_t r;
    run_cli((const char*[]){"run", U_WALL, "--threads", "1", "--steps", "100", "--measure-csv", csv, NULL},
            &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(matches(r.out, "\nline opening +[0-9]+ crossings \\(\\+[0-9]+ -0\\), mean flow [0-9.]+ /s"),
              "%s", r.out);
    cr_expect(matches(r.out, "\narea room +10 samples, mean [0-9.]+ agents, density"), "%s", r.out);
    output_free(&r);
    FILE* f = fopen(csv, "r");
    cr_assert_not_null(f);
    char row[512];
    cr_assert_not_null(fgets(row, sizeof row, f));
    cr_expect_str_eq(row, "kind,name,time,step,count,density,voronoi_density,speed,voronoi_speed,positive,"
                          "negative,flow\n");
    int line_rows = 0, area_rows = 0;
    while (fgets(row, sizeof row, f)) {
        line_rows += strncmp(row, "line,\"opening\",", 15) == 0;
        area_rows += strncmp(row, "area,\"room\",", 12) == 0;
    }
    fclose(f);
    cr_expect_eq(line_rows, 5, "5 s in windows of 1 s");
    cr_expect_eq(area_rows, 10);
    remove(csv);
}

/* A snapshot holds no measurement: --resume adds the scenario's again,
 * which count from the resume. */
Test(scenario_measure, a_resumed_run_measures_from_the_resume, .timeout = 120)
{
    char snap[] = "/tmp/shoal_measure_snap_XXXXXX";
    int fd = mkstemp(snap);
    cr_assert_geq(fd, 0);
    close(fd);
    cli_output_t r;
    run_cli((const char*[]){"run", U_WALL, "--threads", "1", "--steps", "40", "--save", snap, NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    cJSON* root = run_json((const char*[]){"run", U_WALL, "--resume", snap, "--steps", "60", "--json", NULL});
    const cJSON* m = cJSON_GetObjectItemCaseSensitive(root, "measure");
    cr_assert(cJSON_IsObject(m));
    const cJSON* opening = item(cJSON_GetObjectItemCaseSensitive(m, "lines"), 0);
    cr_expect_float_eq(json_number(opening, "duration"), 3.0, 1e-4);
    cr_expect_eq(json_number(item(cJSON_GetObjectItemCaseSensitive(m, "areas"), 0), "samples"), 6.0);
    cJSON_Delete(root);
    remove(snap);
}
