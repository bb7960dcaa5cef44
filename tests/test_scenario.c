/* Tests of scenario files (src/io/json_reader.c, scenario.c,
 * scenario_behaviors.c, scenario_populate.c): the bundled scenarios
 * load and populate, every documented error gives its status and a message
 * naming where the problem is, and placement is right and reproducible.
 *
 * Worlds here are serial (thread_count 1): nothing in this file needs
 * threads, and the runner's processes stay free of OpenMP. */
#define _POSIX_C_SOURCE 200809L /* opendir, mkstemp, ftruncate */

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/safe_text.h"
#include "shoal/scenario.h"

#define SCENARIOS SHOAL_SOURCE_DIR "/scenarios"

/* A scenario of one group, `group` spliced into it ("count" comes first). */
#define ONE_GROUP(top, group) "{" top "\"groups\": [{\"count\": 4" group "}]}"

static shoal_scenario_t* load_path(const char* path)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = NULL;
    shoal_status_t st = shoal_scenario_load_file(path, &s, &err);
    cr_assert_eq(st, SHOAL_OK, "%s: status %d: %s", path, (int)st, err.message);
    cr_assert_not_null(s);
    cr_assert_eq(err.status, SHOAL_OK, "a success leaves err at OK");
    return s;
}

static shoal_scenario_t* load_text(const char* json)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = NULL;
    shoal_status_t st = shoal_scenario_load_string(json, strlen(json), "test.json", &s, &err);
    cr_assert_eq(st, SHOAL_OK, "status %d: %s\nin: %s", (int)st, err.message, json);
    return s;
}

/* The load fails with `status`, a message containing `expected`, *out
 * NULL, and the same status when err is NULL. */
static void expect_error_n(const char* json, size_t length, shoal_status_t status, const char* expected)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = (shoal_scenario_t*)&err; /* must be overwritten with NULL */
    shoal_status_t st = shoal_scenario_load_string(json, length, "test.json", &s, &err);
    cr_expect_eq(st, status, "status %d, expected %d (%s)\nin: %s", (int)st, (int)status, err.message, json);
    cr_expect_eq(err.status, status);
    cr_expect_null(s, "*out is not NULL after a failure");
    cr_expect_not_null(strstr(err.message, expected), "message '%s' lacks '%s'", err.message, expected);
    shoal_scenario_destroy(s == (shoal_scenario_t*)&err ? NULL : s);
    s = NULL;
    cr_expect_eq(shoal_scenario_load_string(json, length, NULL, &s, NULL), status);
    cr_expect_null(s);
    shoal_scenario_destroy(s);
}

static void expect_error(const char* json, const char* expected)
{
    expect_error_n(json, strlen(json), SHOAL_ERR_PARSE, expected);
}

static shoal_world_t* make_serial_world(const shoal_scenario_t* s, int32_t dims)
{
    shoal_world_def_t def = shoal_scenario_world_def(s);
    def.dimensions = dims;
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    return w;
}

static shoal_world_t* populated(const shoal_scenario_t* s)
{
    shoal_world_t* w = make_serial_world(s, shoal_scenario_world_def(s).dimensions);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_agent_count(w), shoal_scenario_agent_count(s));
    return w;
}

typedef struct agents_t {
    int32_t count;
    shoal_agent_t* ids;
    float* positions;
    float* velocities;
    float* headings;
    uint32_t* groups;
} agents_t;

static agents_t read_agents(const shoal_world_t* w)
{
    agents_t a = {0};
    int32_t n = shoal_world_agent_count(w);
    a.ids = calloc((size_t)n + 1, sizeof *a.ids);
    a.positions = calloc(3 * (size_t)n + 1, sizeof(float));
    a.velocities = calloc(3 * (size_t)n + 1, sizeof(float));
    a.headings = calloc((size_t)n + 1, sizeof(float));
    a.groups = calloc((size_t)n + 1, sizeof(uint32_t));
    shoal_agent_batch_t b = {.ids = a.ids,
                             .positions = a.positions,
                             .velocities = a.velocities,
                             .headings = a.headings,
                             .groups = a.groups};
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &a.count), SHOAL_OK);
    cr_assert_eq(a.count, n);
    return a;
}

static void agents_free(agents_t* a)
{
    free(a->ids);
    free(a->positions);
    free(a->velocities);
    free(a->headings);
    free(a->groups);
}

/* ---- bundled scenarios ---- */

/* The default scenario shows crowd agents crossing a walled plaza: four
 * groups of pedestrians, walls and pillars; behaviors.json keeps the four
 * basic behaviors that were the default before. */
Test(scenario, default_json_is_a_plaza_of_crossing_crowds)
{
    shoal_scenario_t* s = load_path(SCENARIOS "/default.json");
    cr_expect_str_eq(shoal_scenario_name(s), "plaza");
    cr_expect_eq(shoal_scenario_agent_count(s), 1600);
    cr_expect_eq(shoal_scenario_steps(s), 2000);
    cr_expect_eq(shoal_scenario_dt(s), 0.1f);
    shoal_world_t* w = populated(s);
    cr_expect_eq(shoal_world_wall_count(w), 4);
    cr_expect_eq(shoal_world_obstacle_count(w), 4);
    agents_t a = read_agents(w);
    int32_t per_group[5] = {0};
    for (int32_t i = 0; i < a.count; i++) per_group[a.groups[i] < 4 ? a.groups[i] : 4]++;
    for (int g = 0; g < 4; g++) cr_expect_eq(per_group[g], 400, "group %d", g);
    for (int32_t i = 0; i < a.count; i += 97) {
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, a.ids[i], &d), SHOAL_OK);
        cr_expect_eq(d.crowd.enabled, 1);
        cr_expect_eq(d.vehicle.radius, 0.21f, "the pedestrian preset");
        float dx = d.target[0] - d.position[0], dy = d.target[1] - d.position[1];
        cr_expect_eq(dx * dx + dy * dy, 150.0f * 150.0f, "each walks 150 m across");
    }
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, behaviors_json_has_four_groups_of_5000)
{
    shoal_scenario_t* s = load_path(SCENARIOS "/behaviors.json");
    cr_expect_str_eq(shoal_scenario_name(s), "behaviors");
    cr_expect_eq(shoal_scenario_agent_count(s), 20000);
    cr_expect_eq(shoal_scenario_steps(s), 600);
    cr_expect_eq(shoal_scenario_dt(s), 1.0f / 60.0f);
    shoal_world_def_t def = shoal_scenario_world_def(s);
    cr_expect_eq(def.dimensions, 2);
    cr_expect_eq(def.seed, 1);

    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    int32_t per_group[5] = {0};
    for (int32_t i = 0; i < a.count; i++) per_group[a.groups[i] < 4 ? a.groups[i] : 4]++;
    for (int g = 0; g < 4; g++) cr_expect_eq(per_group[g], 5000, "group %d", g);
    cr_expect_eq(per_group[4], 0);

    /* Each group shows its behavior: the weights land in the agent. */
    const shoal_behavior_t shown[4] = {SHOAL_BEHAVIOR_ARRIVE, SHOAL_BEHAVIOR_SEEK, SHOAL_BEHAVIOR_FLEE,
                                       SHOAL_BEHAVIOR_DEPART};
    int seen[4] = {0};
    for (int32_t i = 0; i < a.count; i++) {
        uint32_t g = a.groups[i];
        if (seen[g]) continue;
        seen[g] = 1;
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, a.ids[i], &d), SHOAL_OK);
        for (int b = 0; b < SHOAL_BEHAVIOR_COUNT_; b++)
            cr_expect_eq(d.weights[b] > 0.0f, b == (int)shown[g], "group %u behavior %d", g, b);
    }
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, tiny_and_sphere3d_load_and_populate)
{
    shoal_scenario_t* tiny = load_path(SCENARIOS "/tiny.json");
    cr_expect_eq(shoal_scenario_agent_count(tiny), 200);
    cr_expect_eq(shoal_scenario_steps(tiny), 120);
    cr_expect_eq(shoal_scenario_world_def(tiny).dimensions, 2);
    shoal_world_destroy(populated(tiny));
    shoal_scenario_destroy(tiny);

    shoal_scenario_t* sphere = load_path(SCENARIOS "/sphere3d.json");
    cr_expect_eq(shoal_scenario_agent_count(sphere), 2000);
    cr_expect_eq(shoal_scenario_steps(sphere), 300);
    cr_expect_eq(shoal_scenario_world_def(sphere).dimensions, 3);
    shoal_world_destroy(populated(sphere));
    shoal_scenario_destroy(sphere);
}

Test(scenario, every_file_in_scenarios_loads)
{
    DIR* dir = opendir(SCENARIOS);
    cr_assert_not_null(dir, "%s: %s", SCENARIOS, strerror(errno));
    int files = 0;
    for (struct dirent* e = readdir(dir); e != NULL; e = readdir(dir)) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SCENARIOS, e->d_name);
        shoal_scenario_t* s = load_path(path);
        cr_expect_gt(shoal_scenario_agent_count(s), 0, "%s", path);
        cr_expect_gt(shoal_scenario_dt(s), 0.0f, "%s", path);
        shoal_scenario_destroy(s);
        files++;
    }
    closedir(dir);
    cr_expect_geq(files, 3);
}

/* Whether a scenario's text has a "navmesh" key. */
static int uses_navmesh(const char* text) { return strstr(text, "\"navmesh\"") != NULL; }

Test(scenario, docs_examples_load)
{
    /* Every ```json block in docs/scenarios.md is a whole scenario; the
     * first is the complete example, the second the flocking one. */
    FILE* f = fopen(SHOAL_SOURCE_DIR "/docs/scenarios.md", "rb");
    cr_assert_not_null(f, "docs/scenarios.md: %s", strerror(errno));
    static char doc[131072];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    cr_assert_lt(n, sizeof doc - 1, "docs/scenarios.md outgrew the test's buffer");
    doc[n] = '\0';
    int blocks = 0;
    const char* fence = "```json\n";
    for (char* start = strstr(doc, fence); start != NULL; start = strstr(start, fence)) {
        start += 8;
        char* end = strstr(start, "```");
        cr_assert_not_null(end);
        *end = '\0';
        shoal_scenario_t* s = load_text(start);
        if (blocks == 0) {
            cr_expect_str_eq(shoal_scenario_name(s), "example");
            cr_expect_eq(shoal_scenario_agent_count(s), 1300);
        }
        if (shoal_navmesh_available() || !uses_navmesh(start)) {
            shoal_world_destroy(populated(s));
        } else {
            /* a build without Recast: the documented refusal */
            shoal_world_t* w = make_serial_world(s, shoal_scenario_world_def(s).dimensions);
            cr_expect_eq(shoal_scenario_populate(s, w), SHOAL_ERR_NOT_FOUND);
            cr_expect_not_null(strstr(shoal_world_last_error(w), "built without Recast/Detour"), "%s",
                               shoal_world_last_error(w));
            shoal_world_destroy(w);
        }
        shoal_scenario_destroy(s);
        blocks++;
        start = end + 3;
    }
    cr_expect_geq(blocks, 2, "the complete and the flocking example");
}

/* ---- defaults ---- */

Test(scenario, omitted_keys_take_documented_defaults)
{
    shoal_scenario_t* s = load_text("{\"groups\": [{\"count\": 3}]}");
    cr_expect_str_eq(shoal_scenario_name(s), "scenario");
    cr_expect_eq(shoal_scenario_steps(s), 600);
    cr_expect_eq(shoal_scenario_dt(s), 1.0f / 60.0f);
    cr_expect_eq(shoal_scenario_agent_count(s), 3);
    shoal_world_def_t def = shoal_scenario_world_def(s);
    cr_expect_eq(def.dimensions, 2);
    cr_expect_eq(def.seed, 1);
    cr_expect_eq(def.thread_count, 0);

    cr_expect_eq(def.wrap, 0);
    cr_expect_eq(def.cell_size, 0.0f);
    cr_expect_eq(def.reorder_interval, shoal_world_default_def().reorder_interval);

    shoal_world_t* w = populated(s);
    cr_expect_eq(shoal_world_obstacle_count(w), 0);
    agents_t a = read_agents(w);
    shoal_vehicle_t v = shoal_vehicle_default();
    shoal_neighbors_t nb = shoal_neighbors_default();
    shoal_wander_t wa = shoal_wander_default();
    shoal_avoid_t av = shoal_avoid_default();
    shoal_follow_t fo = shoal_follow_default();
    for (int32_t i = 0; i < a.count; i++) {
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, a.ids[i], &d), SHOAL_OK);
        cr_expect_eq(memcmp(&d.vehicle, &v, sizeof v), 0, "vehicle is not the default");
        cr_expect_eq(memcmp(&d.neighbors, &nb, sizeof nb), 0, "neighbors is not the default");
        cr_expect_eq(memcmp(&d.wander, &wa, sizeof wa), 0, "wander is not the default");
        cr_expect_eq(memcmp(&d.avoid, &av, sizeof av), 0, "avoid is not the default");
        cr_expect_eq(d.follow.behind, fo.behind);
        cr_expect(shoal_agent_is_null(d.follow.leader) && shoal_agent_is_null(d.pursuit.target));
        for (int b = 0; b < SHOAL_BEHAVIOR_SLOTS; b++) cr_expect_eq(d.weights[b], 0.0f);
        /* Default spawn: a disc of radius 10 around the origin, at rest. */
        cr_expect_leq(hypotf(a.positions[3 * i], a.positions[3 * i + 1]), 10.0f + 1e-4f);
        cr_expect_eq(a.velocities[3 * i], 0.0f);
        cr_expect_eq(a.groups[i], 0);
    }
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* ---- errors: JSON syntax ---- */

Test(scenario, malformed_json_gives_line_and_column)
{
    expect_error("{\n  \"groups\": [],\n  \"seed\" 2\n}", "test.json:3:10: malformed JSON (");
    /* cJSON may point one character past a missing key; the line is exact. */
    expect_error("{\"groups\": [{\"count\": 1,}]}", "test.json:1:2");
    /* Columns count characters, not bytes: "é" is one column. */
    expect_error("{\"name\": \"é\", \"seed\": x}", "test.json:1:23: malformed JSON");
    expect_error("", "test.json:1:1: malformed JSON (unexpected end of input)");
    expect_error("{\"groups\": [", "test.json:1:13: malformed JSON (unexpected end of input)");
}

Test(scenario, trailing_garbage_is_an_error)
{
    expect_error("{\"groups\": [{\"count\": 1}]}\n\n  x",
                 "test.json:3:3: malformed JSON (unexpected content after the top-level value)");
    expect_error("{\"groups\": [{\"count\": 1}]}{}", "test.json:1:27: malformed JSON");
    /* The given length counts, not a NUL: a NUL inside is not an end. */
    const char text[] = "{\"groups\": [{\"count\": 1}]}\0 {";
    expect_error_n(text, sizeof text - 1, SHOAL_ERR_PARSE, "test.json:1:27: malformed JSON");
    /* Trailing whitespace is fine. */
    shoal_scenario_destroy(load_text("{\"groups\": [{\"count\": 1}]}\n\t \r\n"));
}

Test(scenario, length_bounds_the_text)
{
    /* Only the first `length` bytes are read: here they are a whole scenario. */
    const char* text = "{\"groups\": [{\"count\": 2}]}garbage";
    shoal_scenario_t* s = NULL;
    cr_assert_eq(shoal_scenario_load_string(text, 26, NULL, &s, NULL), SHOAL_OK);
    cr_expect_eq(shoal_scenario_agent_count(s), 2);
    shoal_scenario_destroy(s);
}

/* ---- errors: structure and values ---- */

Test(scenario, unknown_key_names_its_path_and_a_suggestion)
{
    expect_error("{\"groups\": [{\"count\": 1}, {\"count\": 1, \"vehicle\": {\"max_sped\": 3}}]}",
                 "test.json: unknown key 'groups[1].vehicle.max_sped'; did you mean 'max_speed'?");
    expect_error("{\"sed\": 3, \"groups\": [{\"count\": 1}]}", "unknown key 'sed'; did you mean 'seed'?");
    expect_error("{\"frobnicate\": 3, \"groups\": [{\"count\": 1}]}", "unknown key 'frobnicate'");
    /* seek has no gain: only arrive and depart do. */
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"seek\": {\"gain\": 2}}"),
                 "unknown key 'groups[0].behaviors.seek.gain'");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"wobble\": {}}"),
                 "unknown key 'groups[0].behaviors.wobble'");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"wandr\": {}}"),
                 "unknown key 'groups[0].behaviors.wandr'; did you mean 'wander'?");
    expect_error(ONE_GROUP("", ", \"spawn\": {\"radious\": 3}"),
                 "unknown key 'groups[0].spawn.radious'; did you mean 'radius'?");
}

Test(scenario, wrong_type_names_path_and_expected_type)
{
    expect_error("{\"groups\": [{\"count\": \"4\"}]}",
                 "test.json: groups[0].count: expected an integer, got a string");
    expect_error(ONE_GROUP("", ", \"vehicle\": {\"mass\": true}"),
                 "groups[0].vehicle.mass: expected a number, got a boolean");
    expect_error(ONE_GROUP("\"name\": 5, ", ""), "name: expected a string, got a number");
    expect_error("{\"groups\": {\"count\": 4}}", "groups: expected an array");
    expect_error(ONE_GROUP("", ", \"spawn\": []"), "groups[0].spawn: expected an object, got an array");
    expect_error(ONE_GROUP("", ", \"threat\": [1, null]"),
                 "groups[0].threat[1]: expected a number, got null");
    expect_error(
        ONE_GROUP("", ", \"spawn\": {\"shape\": \"disk\"}"),
        "groups[0].spawn.shape: expected one of \"point\", \"disc\", \"ring\", \"box\", \"polygon\", "
        "got \"disk\"; did you mean \"disc\"?");
    expect_error(ONE_GROUP("", ", \"spawn\": {\"heading\": \"sideways\"}"),
                 "groups[0].spawn.heading: expected a number or one of \"random\"");
    expect_error(ONE_GROUP("", ", \"target\": \"antipodes\""), "groups[0].target: expected");
    expect_error("[1, 2]", "test.json: the top level must be an object, got an array");
}

Test(scenario, out_of_range_values_name_path_and_range)
{
    expect_error(ONE_GROUP("", ", \"vehicle\": {\"max_speed\": -1}"),
                 "test.json: groups[0].vehicle.max_speed: must be >= 0, got -1");
    expect_error(ONE_GROUP("", ", \"vehicle\": {\"mass\": 0}"), "groups[0].vehicle.mass: must be > 0, got 0");
    expect_error(ONE_GROUP("", ", \"control\": {\"turn_damping\": -0.5}"),
                 "groups[0].control.turn_damping: must be >= 0, got -0.5");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"arrive\": {\"gain\": 0}}"),
                 "groups[0].behaviors.arrive.gain: must be > 0, got 0");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"flee\": {\"weight\": -2}}"),
                 "groups[0].behaviors.flee.weight: must be >= 0, got -2");
    expect_error(ONE_GROUP("", ", \"spawn\": {\"size\": [10, -1]}"),
                 "groups[0].spawn.size[1]: must be >= 0, got -1");
    expect_error(ONE_GROUP("\"dt\": 0, ", ""), "dt: must be > 0, got 0");
    expect_error(ONE_GROUP("\"seed\": -1, ", ""), "seed: must be >= 0, got -1");
    expect_error(ONE_GROUP("\"steps\": -5, ", ""), "steps: must be >= 0, got -5");
    expect_error(ONE_GROUP("", ", \"spawn\": {\"radius\": 1e400}"), "groups[0].spawn.radius: must be finite");
    expect_error(ONE_GROUP("", ", \"spawn\": {\"speed\": 9}, \"vehicle\": {\"max_speed\": 5}"),
                 "groups[0].spawn.speed: must be <= vehicle.max_speed (5), got 9");
}

Test(scenario, dimensions_must_be_2_or_3)
{
    expect_error(ONE_GROUP("\"dimensions\": 4, ", ""), "test.json: dimensions: must be 2 or 3, got 4");
    expect_error(ONE_GROUP("\"dimensions\": 1, ", ""), "dimensions: must be 2 or 3, got 1");
    expect_error(ONE_GROUP("\"dimensions\": \"3\", ", ""), "dimensions: expected an integer");
    /* pitch belongs to 3D. */
    expect_error(ONE_GROUP("", ", \"spawn\": {\"pitch\": 0.1}"),
                 "groups[0].spawn.pitch: only allowed in 3D scenarios");
}

Test(scenario, vector_length_must_match_dimensions)
{
    expect_error(ONE_GROUP("", ", \"spawn\": {\"center\": [1, 2, 3]}"),
                 "groups[0].spawn.center: expected 2 numbers [x, y] in a 2D scenario, got 3");
    /* dimensions is read first, wherever it is in the file. */
    expect_error("{\"groups\": [{\"count\": 1, \"target\": [1, 2]}], \"dimensions\": 3}",
                 "groups[0].target: expected 3 numbers [x, y, z] in a 3D scenario, got 2");
    shoal_scenario_destroy(
        load_text("{\"groups\": [{\"count\": 1, \"target\": [1, 2, 3]}], \"dimensions\": 3}"));
}

Test(scenario, integers_must_be_integral)
{
    expect_error("{\"groups\": [{\"count\": 1.5}]}", "groups[0].count: must be an integer, got 1.5");
    expect_error(ONE_GROUP("\"steps\": 10.25, ", ""), "steps: must be an integer, got 10.25");
    expect_error(ONE_GROUP("\"seed\": 1e300, ", ""), "seed: must be <= 9007199254740992");
    /* 2.0 is an integer written as a float; that is fine. */
    shoal_scenario_t* s = load_text("{\"groups\": [{\"count\": 2.0}], \"steps\": 3e1}");
    cr_expect_eq(shoal_scenario_agent_count(s), 2);
    cr_expect_eq(shoal_scenario_steps(s), 30);
    shoal_scenario_destroy(s);
}

/* The seed the world def gets from `top` spliced into a one-group scenario. */
static uint64_t seed_of(const char* top)
{
    char json[256];
    snprintf(json, sizeof json, ONE_GROUP("%s", ""), top);
    shoal_scenario_t* s = load_text(json);
    uint64_t seed = shoal_scenario_world_def(s).seed;
    shoal_scenario_destroy(s);
    return seed;
}

Test(scenario, seeds_are_exact_or_an_error)
{
    /* 2^53 + 1 reads as the double 2^53: it was taken for 2^53, silently. */
    expect_error(ONE_GROUP("\"seed\": 9007199254740993, ", ""),
                 "test.json: seed: must be <= 9007199254740992 (2^53) as a JSON number, got "
                 "9007199254740993: larger numbers are not exact in JSON (read as a double, this "
                 "one is 9007199254740992); give it as a string of decimal digits "
                 "instead (up to 2^64 - 1): \"9007199254740993\"");
    /* Exactly representable, but above the limit all the same: another JSON
     * reader may not read it exactly. */
    expect_error(ONE_GROUP("\"seed\": 9007199254740994, ", ""), "(up to 2^64 - 1): \"9007199254740994\"");
    expect_error(ONE_GROUP("\"seed\": 18446744073709551615, ", ""),
                 "(up to 2^64 - 1): \"18446744073709551615\"");
    expect_error(ONE_GROUP("\"seed\": 18446744073709551616, ", ""),
                 "seed: must be <= 9007199254740992 (2^53) as a JSON number, got "
                 "18446744073709551616, which is above 2^64 - 1 too");
    expect_error(ONE_GROUP("\"seed\": 1e300, ", ""), "which is above 2^64 - 1 too");
    expect_error(ONE_GROUP("\"seed\": 1e400, ", ""), "got 1e400, which is above 2^64 - 1 too");
    /* Not integers, though the double they read as is one. */
    expect_error(ONE_GROUP("\"seed\": 1.00000000000000001, ", ""),
                 "seed: must be an integer, got 1.00000000000000001 (which a double rounds to "
                 "an integer)");
    expect_error(ONE_GROUP("\"seed\": 4503599627370497.5, ", ""),
                 "seed: must be an integer, got 4503599627370497.5");
    expect_error(ONE_GROUP("\"seed\": 1e-400, ", ""), "seed: must be an integer, got 1e-400");
    expect_error(ONE_GROUP("\"seed\": 2.5, ", ""), "seed: must be an integer, got 2.5");
    expect_error(ONE_GROUP("\"seed\": -3, ", ""), "seed: must be >= 0, got -3");
    expect_error(ONE_GROUP("\"seed\": -1e30, ", ""), "seed: must be >= 0, got -1e30");
    expect_error(ONE_GROUP("\"seed\": true, ", ""),
                 "seed: expected an integer (or a string of decimal digits), got a boolean");

    /* Up to 2^53, numbers are exact, in any notation that is an integer. */
    cr_expect_eq(seed_of("\"seed\": 9007199254740992, "), 9007199254740992u);
    cr_expect_eq(seed_of("\"seed\": 9007199254740991, "), 9007199254740991u);
    cr_expect_eq(seed_of("\"seed\": 0, "), 0u);
    cr_expect_eq(seed_of("\"seed\": -0, "), 0u);
    cr_expect_eq(seed_of("\"seed\": 3e1, "), 30u);
    cr_expect_eq(seed_of("\"seed\": 2.50e1, "), 25u);
    cr_expect_eq(seed_of("\"seed\": 0.0042e4, "), 42u);
    cr_expect_eq(seed_of("\"seed\": 12345678901234560e-1, "), 1234567890123456u);
    expect_error(ONE_GROUP("\"seed\": 0.0042e3, ", ""), "seed: must be an integer, got 0.0042e3");
}

Test(scenario, seeds_as_strings_of_digits_reach_2_to_the_64)
{
    cr_expect_eq(seed_of("\"seed\": \"18446744073709551615\", "), UINT64_MAX);
    cr_expect_eq(seed_of("\"seed\": \"9007199254740993\", "), 9007199254740993u);
    cr_expect_eq(seed_of("\"seed\": \"0\", "), 0u);
    cr_expect_eq(seed_of("\"seed\": \"007\", "), 7u);
    /* A string seed is the number it spells: "7" places agents as 7 does. */
    cr_expect_eq(seed_of("\"seed\": \"7\", "), seed_of("\"seed\": 7, "));
    expect_error(ONE_GROUP("\"seed\": \"18446744073709551616\", ", ""),
                 "seed: must be at most 18446744073709551615 (2^64 - 1), got 18446744073709551616");
    expect_error(ONE_GROUP("\"seed\": \"\", ", ""), "seed: expected a string of decimal digits, got \"\"");
    const char* bad[] = {"-1", "+1", " 1", "1 ", "1e3", "0x10", "1.0", "12a"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char top[64], expected[96];
        snprintf(top, sizeof top, "{\"seed\": \"%s\", \"groups\": [{\"count\": 1}]}", bad[i]);
        snprintf(expected, sizeof expected, "seed: expected a string of decimal digits, got \"%s\"", bad[i]);
        expect_error(top, expected);
    }
}

Test(scenario, duplicate_keys_are_errors)
{
    expect_error("{\"groups\": [{\"count\": 1, \"count\": 2}]}",
                 "test.json: duplicate key 'groups[0].count'");
    expect_error("{\"seed\": 1, \"groups\": [{\"count\": 1}], \"seed\": 1}", "duplicate key 'seed'");
}

/* ---- names and other text that reaches output ---- */

/* The load fails as expect_error says, and its message is safe text. */
static void expect_safe_error(const char* json, const char* expected)
{
    expect_error(json, expected);
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = NULL;
    shoal_scenario_load_string(json, strlen(json), "test.json", &s, &err);
    cr_expect(is_safe_text(err.message), "message is not safe text: %s", err.message);
    shoal_scenario_destroy(s);
}

Test(scenario, names_must_be_utf8_without_control_characters)
{
    /* An escape sequence would recolor the terminal `shoal run` prints to. */
    expect_safe_error("{\"name\": \"red\\u001b[31m\", \"groups\": [{\"count\": 1}]}",
                      "test.json: name: must be UTF-8 text without control characters; got "
                      "\"red?[31m\", whose byte 4 is U+001B, a control character");
    /* Bytes that are not UTF-8 would make `shoal run --json` print invalid JSON. */
    expect_safe_error("{\"groups\": [{\"count\": 1}, {\"name\": \"a\xff"
                      "b\", \"count\": 1}]}",
                      "test.json: groups[1].name: must be UTF-8 text without control "
                      "characters; got \"a?b\", whose byte 2 (0xFF) is not UTF-8");
    const char* bad[] = {
        "\\u0007",          /* BEL */
        "\\t",              /* a C0 control written as its escape */
        "\x01",             /* a raw C0 byte, which cJSON lets through */
        "\\u007f",          /* DEL */
        "\\u0085",          /* NEL, a C1 control */
        "\302\2332J",       /* CSI as raw bytes (octal: C2 9B), then "2J": clears some terminals */
        "\xc0\xaf",         /* an overlong '/' */
        "\xed\xa0\x80",     /* a surrogate encoded in UTF-8 */
        "\xf4\x90\x80\x80", /* above U+10FFFF */
        "\xe2\x82",         /* a cut sequence */
        "\x80",             /* a stray continuation byte */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[128];
        snprintf(json, sizeof json, "{\"groups\": [{\"count\": 1, \"name\": \"x%s\"}]}", bad[i]);
        expect_safe_error(json, "groups[0].name: must be UTF-8 text without control characters");
        snprintf(json, sizeof json, "{\"name\": \"%sx\", \"groups\": [{\"count\": 1}]}", bad[i]);
        expect_safe_error(json, "test.json: name: must be UTF-8 text without control characters");
    }
}

Test(scenario, utf8_names_load_as_written)
{
    /* 2, 3 and 4 byte characters, written raw and as escapes (a surrogate
     * pair for the fish), and U+00A0, the first character after C1. */
    shoal_scenario_t* s = load_text("{\"name\": \"Z\xc3\xbcrich \xe5\x8c\x97\xe4\xba\xac "
                                    "\\ud83d\\udc1f\\u00a0\", \"groups\": [{\"count\": 1, "
                                    "\"name\": \"\xf0\x9f\x90\x9f\"}]}");
    cr_expect_str_eq(shoal_scenario_name(s), "Z\xc3\xbcrich \xe5\x8c\x97\xe4\xba\xac "
                                             "\xf0\x9f\x90\x9f\xc2\xa0");
    cr_expect_str_eq(shoal_scenario_group_name(s, 0), "\xf0\x9f\x90\x9f");
    shoal_scenario_destroy(s);
    /* An escaped backslash before "u0000" is text, not the escape. */
    s = load_text("{\"name\": \"a\\\\u0000\", \"groups\": [{\"count\": 1}]}");
    cr_expect_str_eq(shoal_scenario_name(s), "a\\u0000");
    shoal_scenario_destroy(s);
}

Test(scenario, nul_escapes_in_strings_are_errors)
{
    /* cJSON would cut each of these strings at the NUL: a name "ab", a key
     * "name" and a shape "disc" that the file does not say. */
    expect_safe_error("{\"name\": \"ab\\u0000cd\", \"groups\": [{\"count\": 1}]}",
                      "test.json:1:13: a string holds \\u0000 (NUL), which would end it there");
    expect_safe_error("{\"groups\": [{\"count\": 1,\n  \"name\\u0000x\": \"a\"}]}",
                      "test.json:2:8: a string holds \\u0000 (NUL)");
    expect_safe_error(ONE_GROUP("", ", \"spawn\": {\"shape\": \"disc\\u0000x\"}"),
                      "a string holds \\u0000 (NUL)");
    expect_safe_error("{\"groups\": [{\"count\": 1, \"name\": \"\\u0000\"}]}",
                      "test.json:1:35: a string holds \\u0000 (NUL)");
}

Test(scenario, quoted_user_text_in_messages_is_safe)
{
    /* Unknown keys, names that are not choices and references are quoted
     * in messages; their control characters and stray bytes become '?'. */
    expect_safe_error("{\"\xff\\u001b\\u0085x\": 1, \"groups\": [{\"count\": 1}]}",
                      "test.json: unknown key '???x'");
    expect_safe_error(ONE_GROUP("", ", \"spawn\": {\"shape\": \"d\\u009bisc\"}"), "got \"d?isc\"");
    expect_safe_error("{\"groups\": [{\"name\": \"lead\", \"count\": 1}, {\"count\": 3, \"pursuit\":"
                      " {\"target\": {\"group\": \"\xe2\x82\\u0007\", \"index\": 0}},"
                      " \"behaviors\": {\"pursue\": {}}}]}",
                      "no group is named '?\?\?'");
    /* Long text is cut at a character boundary, never inside one: 40 "é"
     * are 80 bytes, cut after 28 of them. */
    char json[256], name[96] = "", cut[96] = "";
    for (int i = 0; i < 40; i++) strcat(name, "\xc3\xa9");
    for (int i = 0; i < 28; i++) strcat(cut, "\xc3\xa9");
    strcat(cut, "...'");
    snprintf(json, sizeof json, ONE_GROUP("", ", \"spawn\": {\"%s\": 1}"), name);
    expect_safe_error(json, cut);
}

Test(scenario, groups_are_required_and_not_empty)
{
    expect_error("{\"groups\": []}", "test.json: groups: must hold at least one group");
    expect_error("{\"name\": \"x\"}", "test.json: missing required key 'groups'");
    expect_error("{\"groups\": [{\"name\": \"a\"}]}", "missing required key 'groups[0].count'");
    expect_error("{\"groups\": [{\"count\": 60000000}, {\"count\": 60000000}]}",
                 "groups[1].count: the total agent count would be 120000000, above the limit");
}

/* ---- errors: files and arguments ---- */

Test(scenario, missing_file_is_an_io_error)
{
    const char* path = SHOAL_SOURCE_DIR "/scenarios/no_such_scenario.json";
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = (shoal_scenario_t*)&err;
    cr_expect_eq(shoal_scenario_load_file(path, &s, &err), SHOAL_ERR_IO);
    cr_expect_null(s);
    cr_expect_eq(err.status, SHOAL_ERR_IO);
    cr_expect_not_null(strstr(err.message, path), "%s", err.message);
    cr_expect_not_null(strstr(err.message, strerror(ENOENT)), "%s", err.message);

    s = (shoal_scenario_t*)&err;
    cr_expect_eq(shoal_scenario_load_file(SCENARIOS, &s, &err), SHOAL_ERR_IO, "a directory");
    cr_expect_null(s);
    cr_expect_not_null(strstr(err.message, "not a regular file: it is a directory"), "%s", err.message);
}

Test(scenario, files_over_64_mib_are_refused)
{
    char path[] = "/tmp/shoal_scenario_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
    /* A sparse file: its size is what counts, and nothing is written. */
    cr_assert_eq(ftruncate(fd, 64 * 1024 * 1024 + 1), 0);
    close(fd);
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = (shoal_scenario_t*)&err;
    shoal_status_t st = shoal_scenario_load_file(path, &s, &err);
    unlink(path);
    cr_expect_eq(st, SHOAL_ERR_CAPACITY, "%s", err.message);
    cr_expect_null(s);
    cr_expect_not_null(strstr(err.message, "64 MiB"), "%s", err.message);

    size_t n = (size_t)64 * 1024 * 1024 + 1;
    char* big = malloc(n);
    cr_assert_not_null(big);
    memset(big, ' ', n);
    expect_error_n(big, n, SHOAL_ERR_CAPACITY, "64 MiB");
    free(big);
}

Test(scenario, null_arguments_are_rejected)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = (shoal_scenario_t*)&err;
    cr_expect_eq(shoal_scenario_load_string(NULL, 4, NULL, &s, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_null(s);
    cr_expect_eq(shoal_scenario_load_string("{}", 2, NULL, NULL, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_scenario_load_file(NULL, &s, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_scenario_populate(NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_scenario_destroy(NULL);
}

/* ---- populate ---- */

Test(scenario, populate_into_wrong_dimensions_leaves_world_empty)
{
    shoal_scenario_t* s2 = load_path(SCENARIOS "/tiny.json");
    shoal_world_t* w3 = make_serial_world(s2, 3);
    cr_expect_eq(shoal_scenario_populate(s2, w3), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_agent_count(w3), 0);
    cr_expect(strstr(shoal_world_last_error(w3), "is 2D but the world is 3D") != NULL, "%s",
              shoal_world_last_error(w3));
    cr_expect_eq(shoal_scenario_group_count(s2), 2);
    cr_expect_not_null(shoal_scenario_group_name(s2, 1));
    cr_expect_null(shoal_scenario_group_name(s2, 2));
    cr_expect_eq(shoal_scenario_group_size(s2, 0) + shoal_scenario_group_size(s2, 1),
                 shoal_scenario_agent_count(s2));

    shoal_scenario_t* s3 = load_path(SCENARIOS "/sphere3d.json");
    shoal_world_t* w2 = make_serial_world(s3, 2);
    cr_expect_eq(shoal_scenario_populate(s3, w2), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_agent_count(w2), 0);

    shoal_world_destroy(w2);
    shoal_world_destroy(w3);
    shoal_scenario_destroy(s2);
    shoal_scenario_destroy(s3);
}

/* An allocator that can be told to fail, to make populate fail halfway. */
static int alloc_fails;

static void* test_alloc(size_t size, size_t align, void* ctx)
{
    (void)ctx;
    if (alloc_fails) return NULL;
    size_t rounded = (size + align - 1) / align * align;
    return aligned_alloc(align, rounded ? rounded : align);
}

static void test_free(void* ptr, size_t size, void* ctx)
{
    (void)size;
    (void)ctx;
    free(ptr);
}

Test(scenario, failed_populate_removes_what_it_added)
{
    shoal_scenario_t* s = load_path(SCENARIOS "/tiny.json");
    shoal_world_def_t def = shoal_scenario_world_def(s);
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    def.initial_capacity = 16; /* the scenario's 200 agents need the world to grow */
    def.alloc = test_alloc;
    def.free = test_free;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    shoal_agent_t mine[3];
    for (int i = 0; i < 3; i++) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)i;
        cr_assert_eq(shoal_agent_add(w, &d, &mine[i]), SHOAL_OK);
    }

    alloc_fails = 1;
    shoal_status_t st = shoal_scenario_populate(s, w);
    alloc_fails = 0;
    cr_expect_eq(st, SHOAL_ERR_OUT_OF_MEMORY, "status %d: %s", (int)st, shoal_world_last_error(w));
    cr_expect_eq(shoal_world_agent_count(w), 3, "the world is back to its own agents");
    for (int i = 0; i < 3; i++) cr_expect(shoal_agent_is_valid(w, mine[i]));
    cr_expect_neq(shoal_world_last_error(w)[0], '\0', "the failed add left its message");

    /* With memory back, the same call succeeds. */
    cr_expect_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_agent_count(w), 203);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

static char* scenario_with_seed(int seed)
{
    static const char* fmt =
        "{\"seed\": %d, \"groups\": ["
        "{\"count\": 300, \"spawn\": {\"shape\": \"disc\", \"radius\": 50}},"
        "{\"count\": 300, \"spawn\": {\"shape\": \"box\", \"center\": [100, 0], \"size\": [30, 40]}}"
        "]}";
    char* text = malloc(512);
    snprintf(text, 512, fmt, seed);
    return text;
}

Test(scenario, same_seed_same_positions_other_seed_other_positions)
{
    char* text1 = scenario_with_seed(1);
    char* text2 = scenario_with_seed(2);
    shoal_scenario_t* s1 = load_text(text1);
    shoal_scenario_t* s1b = load_text(text1);
    shoal_scenario_t* s2 = load_text(text2);
    shoal_world_t* w1 = populated(s1);
    shoal_world_t* w1b = populated(s1b);
    shoal_world_t* w2 = populated(s2);
    agents_t a1 = read_agents(w1), a1b = read_agents(w1b), a2 = read_agents(w2);

    size_t bytes = 3 * (size_t)a1.count * sizeof(float);
    cr_expect_eq(memcmp(a1.positions, a1b.positions, bytes), 0, "same seed, other positions");
    cr_expect_eq(memcmp(a1.headings, a1b.headings, (size_t)a1.count * sizeof(float)), 0);
    cr_expect_eq(shoal_world_state_hash(w1), shoal_world_state_hash(w1b));
    int differ = 0;
    for (int32_t i = 0; i < a1.count; i++) differ += a1.positions[3 * i] != a2.positions[3 * i];
    cr_expect_gt(differ, a1.count * 9 / 10, "only %d of %d positions moved", differ, a1.count);

    agents_free(&a1);
    agents_free(&a1b);
    agents_free(&a2);
    shoal_world_destroy(w1);
    shoal_world_destroy(w1b);
    shoal_world_destroy(w2);
    shoal_scenario_destroy(s1);
    shoal_scenario_destroy(s1b);
    shoal_scenario_destroy(s2);
    free(text1);
    free(text2);
}

/* ---- placement geometry ---- */

Test(scenario, ring_inward_heading_speed_and_antipode_in_2d)
{
    shoal_scenario_t* s =
        load_text("{\"groups\": [{\"count\": 500, \"spawn\": {\"shape\": \"ring\", \"center\": [10, -20],"
                  " \"radius\": 30, \"heading\": \"inward\", \"speed\": 2}, \"target\": \"antipode\","
                  " \"threat\": [7, 8]}]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    double min_angle = 10.0, max_angle = -10.0;
    for (int32_t i = 0; i < a.count; i++) {
        float x = a.positions[3 * i] - 10.0f, y = a.positions[3 * i + 1] + 20.0f;
        cr_expect_float_eq(hypotf(x, y), 30.0f, 1e-3f, "agent %d off the ring", i);
        /* inward: the heading points at the center */
        float h = a.headings[i];
        cr_expect_float_eq(cosf(h), -x / 30.0f, 1e-3f);
        cr_expect_float_eq(sinf(h), -y / 30.0f, 1e-3f);
        cr_expect_float_eq(a.velocities[3 * i], 2.0f * cosf(h), 1e-3f);
        cr_expect_float_eq(a.velocities[3 * i + 1], 2.0f * sinf(h), 1e-3f);
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, a.ids[i], &d), SHOAL_OK);
        cr_expect_float_eq(d.target[0], 10.0f - x, 1e-3f, "antipode x");
        cr_expect_float_eq(d.target[1], -20.0f - y, 1e-3f, "antipode y");
        cr_expect_eq(d.threat[0], 7.0f);
        cr_expect_eq(d.threat[1], 8.0f);
        double angle = atan2(y, x);
        if (angle < min_angle) min_angle = angle;
        if (angle > max_angle) max_angle = angle;
    }
    cr_expect_lt(min_angle, -3.0, "agents cover the whole ring");
    cr_expect_gt(max_angle, 3.0);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, disc_box_and_point_stay_inside_their_shape)
{
    shoal_scenario_t* s = load_text(
        "{\"groups\": ["
        "{\"count\": 400, \"spawn\": {\"shape\": \"disc\", \"center\": [5, 5], \"radius\": 8}},"
        "{\"count\": 400, \"spawn\": {\"shape\": \"box\", \"center\": [-50, 0], \"size\": [10, 4]}},"
        "{\"count\": 10, \"spawn\": {\"shape\": \"point\", \"center\": [3, 4], \"heading\": 1.25}}"
        "]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    int inner = 0; /* disc agents inside half the radius: a quarter if uniform over area */
    for (int32_t i = 0; i < a.count; i++) {
        float x = a.positions[3 * i], y = a.positions[3 * i + 1];
        if (a.groups[i] == 0) {
            float r = hypotf(x - 5.0f, y - 5.0f);
            cr_expect_leq(r, 8.0f + 1e-4f);
            inner += r < 4.0f;
        } else if (a.groups[i] == 1) {
            cr_expect(fabsf(x + 50.0f) <= 5.0f && fabsf(y) <= 2.0f, "(%g, %g) outside the box", (double)x,
                      (double)y);
        } else {
            cr_expect(x == 3.0f && y == 4.0f);
            cr_expect_float_eq(a.headings[i], 1.25f, 1e-6f);
        }
    }
    cr_expect(inner > 60 && inner < 140, "%d of 400 inside half the radius", inner);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, sphere_shell_with_inward_pitch_in_3d)
{
    shoal_scenario_t* s =
        load_text("{\"dimensions\": 3, \"groups\": [{\"count\": 300, \"spawn\": {\"shape\": \"ring\","
                  " \"center\": [0, 0, 50], \"radius\": 20, \"heading\": \"inward\", \"pitch\": \"inward\","
                  " \"speed\": 1}, \"target\": \"antipode\"}]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    int above = 0;
    for (int32_t i = 0; i < a.count; i++) {
        float x = a.positions[3 * i], y = a.positions[3 * i + 1], z = a.positions[3 * i + 2] - 50.0f;
        cr_expect_float_eq(sqrtf(x * x + y * y + z * z), 20.0f, 1e-3f, "agent %d off the sphere", i);
        above += z > 0.0f;
        /* heading and pitch inward: the velocity points at the center */
        cr_expect_float_eq(a.velocities[3 * i], -x / 20.0f, 1e-3f);
        cr_expect_float_eq(a.velocities[3 * i + 1], -y / 20.0f, 1e-3f);
        cr_expect_float_eq(a.velocities[3 * i + 2], -z / 20.0f, 1e-3f);
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, a.ids[i], &d), SHOAL_OK);
        cr_expect_float_eq(d.target[2], 50.0f - z, 1e-3f, "antipode z");
    }
    cr_expect(above > 100 && above < 200, "%d of 300 above the equator", above);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* ---- flocking: world, obstacles, group behaviors, references ---- */

#define TWO_PI_F 6.28318530717958647692f

/* Handles of the agents labeled `group`, in storage order; returns how many. */
static int32_t group_ids(const shoal_world_t* w, uint32_t group, shoal_agent_t* out, int32_t cap)
{
    agents_t a = read_agents(w);
    int32_t n = 0;
    for (int32_t i = 0; i < a.count; i++)
        if (a.groups[i] == group && n < cap) out[n++] = a.ids[i];
    agents_free(&a);
    return n;
}

static shoal_agent_def_t def_of(const shoal_world_t* w, shoal_agent_t id)
{
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(w, id, &d), SHOAL_OK);
    return d;
}

/* The agents of a group that follows "previous" (no first_leader), in the
 * order they were added: the first follows nobody, each next one the one
 * before. Fails unless the leaders form exactly that chain. */
static void chain_order(const shoal_world_t* w, const shoal_agent_t* ids, int32_t n,
                        shoal_agent_t first_leader, shoal_agent_t* out)
{
    shoal_agent_t at = first_leader;
    for (int32_t k = 0; k < n; k++) {
        int found = 0;
        for (int32_t i = 0; i < n; i++) {
            if (!shoal_agent_equal(def_of(w, ids[i]).follow.leader, at)) continue;
            cr_assert_eq(found, 0, "two agents follow the same leader at link %d", k);
            out[k] = ids[i];
            found = 1;
        }
        cr_assert_eq(found, 1, "the chain breaks at link %d", k);
        at = out[k];
    }
}

Test(scenario, flock2d_is_a_wrapped_boid_flock)
{
    shoal_scenario_t* s = load_path(SCENARIOS "/flock2d.json");
    cr_expect_eq(shoal_scenario_agent_count(s), 50000);
    cr_expect_eq(shoal_scenario_steps(s), 600);
    cr_expect_eq(shoal_scenario_dt(s), 1.0f / 60.0f);
    shoal_world_def_t def = shoal_scenario_world_def(s);
    cr_expect_eq(def.dimensions, 2);
    cr_expect_eq(def.wrap, 1);
    cr_expect(def.bounds_min[0] == -100.0f && def.bounds_min[1] == -100.0f);
    cr_expect(def.bounds_max[0] == 100.0f && def.bounds_max[1] == 100.0f);

    shoal_world_t* w = populated(s);
    cr_expect_eq(shoal_world_obstacle_count(w), 0);
    agents_t a = read_agents(w);
    for (int32_t i = 0; i < a.count; i++) {
        float x = a.positions[3 * i], y = a.positions[3 * i + 1];
        cr_assert(x >= -100.0f && x <= 100.0f && y >= -100.0f && y <= 100.0f,
                  "agent %d at (%g, %g) is outside the box", i, (double)x, (double)y);
    }
    shoal_agent_def_t d = def_of(w, a.ids[0]);
    const shoal_behavior_t boids[4] = {SHOAL_BEHAVIOR_SEPARATE, SHOAL_BEHAVIOR_ALIGN, SHOAL_BEHAVIOR_COHERE,
                                       SHOAL_BEHAVIOR_WANDER};
    for (int b = 0; b < SHOAL_BEHAVIOR_COUNT_; b++) {
        int on = 0;
        for (int k = 0; k < 4; k++) on |= b == (int)boids[k];
        cr_expect_eq(d.weights[b] > 0.0f, on, "behavior %s", shoal_behavior_name(b));
    }
    cr_expect_eq(d.neighbors.radius, 2.0f);
    cr_expect_eq(d.neighbors.fov, TWO_PI_F, "fov_deg 360 is the full circle");
    /* Sized for about 10 to 20 neighbors within the radius at the start. */
    double area = (double)(def.bounds_max[0] - def.bounds_min[0]) * (def.bounds_max[1] - def.bounds_min[1]);
    double expected = a.count / area * 3.14159265358979 * d.neighbors.radius * d.neighbors.radius;
    cr_expect(expected >= 10.0 && expected <= 20.0, "%.1f neighbors expected", expected);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, fish3d_is_a_school_among_obstacles)
{
    shoal_scenario_t* s = load_path(SCENARIOS "/fish3d.json");
    int32_t n = shoal_scenario_agent_count(s);
    cr_expect(n >= 2000 && n <= 4000, "%d fish", n);
    shoal_world_def_t def = shoal_scenario_world_def(s);
    cr_expect_eq(def.dimensions, 3);
    cr_expect_eq(def.wrap, 0, "unbounded");

    shoal_world_t* w = populated(s);
    int32_t obstacles = shoal_world_obstacle_count(w);
    cr_expect(obstacles >= 8 && obstacles <= 12, "%d obstacles", obstacles);
    agents_t a = read_agents(w);
    shoal_agent_def_t d = def_of(w, a.ids[0]);
    const shoal_behavior_t used[5] = {SHOAL_BEHAVIOR_SEPARATE, SHOAL_BEHAVIOR_ALIGN, SHOAL_BEHAVIOR_COHERE,
                                      SHOAL_BEHAVIOR_WANDER, SHOAL_BEHAVIOR_AVOID};
    for (int k = 0; k < 5; k++) cr_expect_gt(d.weights[used[k]], 0.0f, "%s", shoal_behavior_name(used[k]));
    cr_expect_eq(d.avoid.tangential, 1);
    cr_expect_float_eq(d.neighbors.fov, 300.0f * TWO_PI_F / 360.0f, 1e-5f);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, convoy_follows_previous_behind_the_lead)
{
    shoal_scenario_t* s = load_path(SCENARIOS "/convoy.json");
    cr_assert_eq(shoal_scenario_group_count(s), 2);
    cr_expect_str_eq(shoal_scenario_group_name(s, 0), "lead");
    cr_expect_str_eq(shoal_scenario_group_name(s, 1), "convoy");
    cr_assert_eq(shoal_scenario_group_size(s, 0), 1);
    int32_t n = shoal_scenario_group_size(s, 1);
    cr_assert(n >= 10 && n <= 30, "%d vehicles in the convoy", n);

    shoal_world_t* w = populated(s);
    shoal_agent_t lead, ids[30], chain[30];
    cr_assert_eq(group_ids(w, 0, &lead, 1), 1);
    cr_assert_eq(group_ids(w, 1, ids, 30), n);
    /* The first vehicle follows the lead, each next one the one before. */
    chain_order(w, ids, n, lead, chain);
    for (int32_t k = 0; k < n; k++) {
        shoal_agent_def_t d = def_of(w, chain[k]);
        cr_expect_gt(d.weights[SHOAL_BEHAVIOR_FOLLOW], 0.0f);
        cr_expect_gt(d.weights[SHOAL_BEHAVIOR_SEPARATE], 0.0f);
        cr_expect_eq(d.follow.behind, 3.0f);
        cr_expect_eq(d.follow.behind_per_speed, 0.5f);
        cr_expect_eq(d.follow.arrive_gain, 1.5f);
    }
    shoal_agent_def_t l = def_of(w, lead);
    cr_expect(shoal_agent_is_null(l.follow.leader), "the lead follows nobody");
    cr_expect_gt(l.weights[SHOAL_BEHAVIOR_ARRIVE], 0.0f);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, references_become_handles_of_earlier_groups)
{
    shoal_scenario_t* s =
        load_text("{\"groups\": ["
                  " {\"name\": \"a\", \"count\": 3, \"follow\": {\"leader\": \"previous\"},"
                  "  \"behaviors\": {\"follow\": {}}},"
                  " {\"count\": 2, \"behaviors\": {\"pursue\": {\"weight\": 2}, \"follow\": {}},"
                  "  \"pursuit\": {\"target\": {\"group\": \"a\", \"index\": 2}, \"max_prediction\": 1.5},"
                  "  \"follow\": {\"leader\": {\"group\": \"a\"}, \"behind\": 4}},"
                  " {\"count\": 1, \"behaviors\": {\"evade\": {}},"
                  "  \"pursuit\": {\"target\": {\"group\": \"group1\", \"index\": 1}}}"
                  "]}");
    shoal_world_t* w = populated(s);
    shoal_agent_t a[3], b[2], c, a_added[3];
    cr_assert_eq(group_ids(w, 0, a, 3), 3);
    cr_assert_eq(group_ids(w, 1, b, 2), 2);
    cr_assert_eq(group_ids(w, 2, &c, 1), 1);
    /* "previous" without first_leader: a's first agent follows nobody. (The
     * world keeps follow parameters only for agents that follow, hence the
     * behavior in group a.) */
    const shoal_agent_t null_handle = {0, 0, 0};
    chain_order(w, a, 3, null_handle, a_added);
    for (int i = 0; i < 2; i++) {
        shoal_agent_def_t d = def_of(w, b[i]);
        cr_expect(shoal_agent_equal(d.pursuit.target, a_added[2]), "target is a's agent 2");
        cr_expect(shoal_agent_equal(d.follow.leader, a_added[0]), "index defaults to 0");
        cr_expect_eq(d.pursuit.max_prediction, 1.5f);
        cr_expect_eq(d.follow.behind, 4.0f);
        cr_expect_eq(d.weights[SHOAL_BEHAVIOR_PURSUE], 2.0f);
        cr_expect_eq(d.weights[SHOAL_BEHAVIOR_FOLLOW], 1.0f);
    }
    /* group1 is the default name of the unnamed second group. Which of b is
     * its agent 1 is fixed by add order: the one that is not b's first. */
    shoal_agent_def_t dc = def_of(w, c);
    cr_expect(shoal_agent_equal(dc.pursuit.target, b[0]) || shoal_agent_equal(dc.pursuit.target, b[1]));
    cr_expect_eq(dc.weights[SHOAL_BEHAVIOR_EVADE], 1.0f);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, behavior_parameter_objects_reach_the_agents)
{
    shoal_scenario_t* s = load_text(ONE_GROUP(
        "", ", \"neighbors\": {\"radius\": 3.5, \"fov_deg\": 180, \"max_neighbors\": 7,"
            " \"separation_gain\": 0.5, \"alignment_gain\": 2, \"cohesion_gain\": 0.25},"
            " \"wander\": {\"cruise_speed\": 3, \"strength\": 2, \"noise\": 0.1},"
            " \"avoid\": {\"lookahead_time\": 0.5, \"gain\": 4, \"tangential\": true},"
            " \"behaviors\": {\"separate\": {\"weight\": 0.5}, \"align\": {}, \"cohere\": {\"weight\": 0},"
            " \"wander\": {\"weight\": 3}, \"avoid\": {}}"));
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    for (int32_t i = 0; i < a.count; i++) {
        shoal_agent_def_t d = def_of(w, a.ids[i]);
        cr_expect_eq(d.neighbors.radius, 3.5f);
        cr_expect_float_eq(d.neighbors.fov, TWO_PI_F / 2.0f, 1e-6f, "180 degrees is pi");
        cr_expect_eq(d.neighbors.max_neighbors, 7);
        cr_expect_eq(d.neighbors.separation_gain, 0.5f);
        cr_expect_eq(d.neighbors.alignment_gain, 2.0f);
        cr_expect_eq(d.neighbors.cohesion_gain, 0.25f);
        cr_expect(d.wander.cruise_speed == 3.0f && d.wander.strength == 2.0f && d.wander.noise == 0.1f);
        cr_expect(d.avoid.lookahead_time == 0.5f && d.avoid.gain == 4.0f && d.avoid.tangential == 1);
        cr_expect_eq(d.weights[SHOAL_BEHAVIOR_SEPARATE], 0.5f);
        cr_expect_eq(d.weights[SHOAL_BEHAVIOR_ALIGN], 1.0f, "{} is weight 1");
        cr_expect_eq(d.weights[SHOAL_BEHAVIOR_COHERE], 0.0f);
        cr_expect_eq(d.weights[SHOAL_BEHAVIOR_WANDER], 3.0f);
        cr_expect_eq(d.weights[SHOAL_BEHAVIOR_AVOID], 1.0f);
    }
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    /* fov in radians, up to and including the full circle. */
    s = load_text(ONE_GROUP("", ", \"neighbors\": {\"fov\": 6.283185307179586}"));
    w = populated(s);
    agents_t b = read_agents(w);
    cr_expect_eq(def_of(w, b.ids[0]).neighbors.fov, TWO_PI_F);
    agents_free(&b);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, world_object_fills_the_world_def)
{
    shoal_scenario_t* s =
        load_text("{\"dimensions\": 3, \"world\": {\"wrap\": true, \"bounds_min\": [-10, -20, 0],"
                  " \"bounds_max\": [10, 20, 5], \"cell_size\": 2.5, \"reorder_interval\": 0},"
                  " \"groups\": [{\"count\": 50, \"spawn\": {\"shape\": \"box\", \"center\": [0, 0, 2.5],"
                  " \"size\": [20, 40, 5]}}]}");
    shoal_world_def_t def = shoal_scenario_world_def(s);
    cr_expect_eq(def.wrap, 1);
    const float lo[3] = {-10.0f, -20.0f, 0.0f}, hi[3] = {10.0f, 20.0f, 5.0f};
    cr_expect_eq(memcmp(def.bounds_min, lo, sizeof lo), 0);
    cr_expect_eq(memcmp(def.bounds_max, hi, sizeof hi), 0);
    cr_expect_eq(def.cell_size, 2.5f);
    cr_expect_eq(def.reorder_interval, 0);
    /* A spawn box exactly the world box is inside it; the world accepts it. */
    shoal_world_destroy(populated(s));
    shoal_scenario_destroy(s);

    s = load_text(ONE_GROUP("\"world\": {\"wrap\": false, \"reorder_interval\": 3}, ", ""));
    def = shoal_scenario_world_def(s);
    cr_expect_eq(def.wrap, 0);
    cr_expect_eq(def.reorder_interval, 3);
    shoal_scenario_destroy(s);
}

Test(scenario, obstacles_are_added_before_the_agents)
{
    shoal_scenario_t* s = load_text(
        "{\"obstacles\": [{\"center\": [0, 5], \"radius\": 1}, {\"center\": [3, -2], \"radius\": 0},"
        " {\"center\": [-7, 1], \"radius\": 2.5}], \"groups\": [{\"count\": 4}]}");
    shoal_world_t* w = populated(s);
    cr_expect_eq(shoal_world_obstacle_count(w), 3);
    /* A second populate adds them again, like the agents. */
    cr_expect_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_obstacle_count(w), 6);
    cr_expect_eq(shoal_world_agent_count(w), 8);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* ---- errors of the flocking keys ---- */

Test(scenario, flocking_keys_unknown_or_of_wrong_type)
{
    expect_error(ONE_GROUP("\"world\": {\"wrapp\": true}, ", ""),
                 "test.json: unknown key 'world.wrapp'; did you mean 'wrap'?");
    expect_error(ONE_GROUP("\"obstacles\": [{\"center\": [0, 0], \"radius\": 1},"
                           " {\"centre\": [0, 0], \"radius\": 1}], ",
                           ""),
                 "unknown key 'obstacles[1].centre'; did you mean 'center'?");
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"radus\": 2}"),
                 "unknown key 'groups[0].neighbors.radus'; did you mean 'radius'?");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"separate\": {\"gain\": 2}}"),
                 "unknown key 'groups[0].behaviors.separate.gain'");
    expect_error(ONE_GROUP("", ", \"wander\": {\"cruise\": 2}"), "unknown key 'groups[0].wander.cruise'");
    expect_error(ONE_GROUP("", ", \"avoid\": {\"lookahed_time\": 2}"),
                 "unknown key 'groups[0].avoid.lookahed_time'; did you mean 'lookahead_time'?");
    expect_error("{\"groups\": [{\"name\": \"l\", \"count\": 1}, {\"count\": 1, \"follow\":"
                 " {\"leader\": {\"group\": \"l\", \"idx\": 0}}}]}",
                 "unknown key 'groups[1].follow.leader.idx'");
    expect_error(ONE_GROUP("\"world\": {\"wrap\": 1}, ", ""),
                 "test.json: world.wrap: expected true or false, got a number");
    expect_error(ONE_GROUP("", ", \"avoid\": {\"tangential\": \"yes\"}"),
                 "groups[0].avoid.tangential: expected true or false, got a string");
    expect_error(ONE_GROUP("\"world\": [], ", ""), "world: expected an object, got an array");
    expect_error(ONE_GROUP("\"obstacles\": {}, ", ""),
                 "obstacles: expected an array of objects, got an object");
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"max_neighbors\": 2.5}"),
                 "groups[0].neighbors.max_neighbors: must be an integer, got 2.5");
    expect_error(ONE_GROUP("", ", \"follow\": {\"leader\": 3}"),
                 "groups[0].follow.leader: expected {\"group\": name, \"index\": i} or "
                 "\"previous\", got a number");
    expect_error(ONE_GROUP("", ", \"follow\": {\"leader\": \"previus\"}"),
                 "groups[0].follow.leader: expected {\"group\": name, \"index\": i} or "
                 "\"previous\", got \"previus\"; did you mean \"previous\"?");
}

Test(scenario, flocking_values_out_of_range)
{
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"radius\": 0}"),
                 "test.json: groups[0].neighbors.radius: must be > 0, got 0");
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"max_neighbors\": -1}"),
                 "groups[0].neighbors.max_neighbors: must be >= 0, got -1");
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"cohesion_gain\": -1}"),
                 "groups[0].neighbors.cohesion_gain: must be >= 0, got -1");
    expect_error(ONE_GROUP("", ", \"wander\": {\"noise\": -0.5}"),
                 "groups[0].wander.noise: must be >= 0, got -0.5");
    expect_error(ONE_GROUP("", ", \"pursuit\": {\"max_prediction\": -1}"),
                 "groups[0].pursuit.max_prediction: must be >= 0, got -1");
    expect_error(ONE_GROUP("", ", \"follow\": {\"arrive_gain\": 0}"),
                 "groups[0].follow.arrive_gain: must be > 0, got 0");
    expect_error(ONE_GROUP("", ", \"avoid\": {\"gain\": -2}"), "groups[0].avoid.gain: must be >= 0, got -2");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"align\": {\"weight\": -1}}"),
                 "groups[0].behaviors.align.weight: must be >= 0, got -1");
    expect_error(ONE_GROUP("\"world\": {\"cell_size\": -1}, ", ""), "world.cell_size: must be >= 0, got -1");
    expect_error(ONE_GROUP("\"world\": {\"reorder_interval\": -1}, ", ""),
                 "world.reorder_interval: must be >= 0, got -1");
    expect_error(ONE_GROUP("\"obstacles\": [{\"center\": [1, 2], \"radius\": -1}], ", ""),
                 "test.json: obstacles[0].radius: must be >= 0, got -1");
    expect_error(ONE_GROUP("\"obstacles\": [{\"center\": [1, 2]}], ", ""),
                 "missing required key 'obstacles[0].radius'");
    expect_error(ONE_GROUP("\"obstacles\": [{\"radius\": 1}], ", ""),
                 "missing required key 'obstacles[0].center'");
    expect_error(ONE_GROUP("\"obstacles\": [{\"center\": [1, 2, 3], \"radius\": 1}], ", ""),
                 "obstacles[0].center: expected 2 numbers [x, y] in a 2D scenario, got 3");
}

Test(scenario, fov_and_fov_deg)
{
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"fov\": 3, \"fov_deg\": 180}"),
                 "test.json: groups[0].neighbors.fov_deg: give either fov (radians) or fov_deg "
                 "(degrees), not both");
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"fov\": 7}"),
                 "groups[0].neighbors.fov: must be in (0, 2 pi = 6.283185], got 7");
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"fov_deg\": 361}"),
                 "groups[0].neighbors.fov_deg: must be in (0, 360], got 361");
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"fov\": 0}"),
                 "groups[0].neighbors.fov: must be > 0, got 0");
    expect_error(ONE_GROUP("", ", \"neighbors\": {\"fov_deg\": -90}"),
                 "groups[0].neighbors.fov_deg: must be > 0, got -90");
}

Test(scenario, references_must_name_an_earlier_group_and_a_real_index)
{
    /* forward: populate adds groups in file order */
    expect_error("{\"groups\": [{\"name\": \"f\", \"count\": 2, \"behaviors\": {\"follow\": {}},"
                 " \"follow\": {\"leader\": {\"group\": \"l\"}}}, {\"name\": \"l\", \"count\": 1}]}",
                 "test.json: groups[0].follow.leader.group: 'l' is groups[1], which comes later: "
                 "a forward reference");
    expect_error("{\"groups\": [{\"count\": 2, \"follow\": {\"leader\": \"previous\", \"first_leader\":"
                 " {\"group\": \"l\"}}}, {\"name\": \"l\", \"count\": 1}]}",
                 "groups[0].follow.first_leader.group: 'l' is groups[1], which comes later");
    expect_error("{\"groups\": [{\"count\": 2, \"pursuit\": {\"target\": {\"group\": \"group1\"}}},"
                 " {\"count\": 1}]}",
                 "groups[0].pursuit.target.group: 'group1' is groups[1], which comes later");
    /* the group itself: only "previous" may point into it */
    expect_error("{\"groups\": [{\"name\": \"a\", \"count\": 2, \"pursuit\":"
                 " {\"target\": {\"group\": \"a\", \"index\": 1}}}]}",
                 "groups[0].pursuit.target.group: 'a' is this group");
    /* no such group */
    expect_error("{\"groups\": [{\"name\": \"lead\", \"count\": 1}, {\"count\": 3, \"pursuit\":"
                 " {\"target\": {\"group\": \"leed\"}}}]}",
                 "test.json: groups[1].pursuit.target.group: no group is named 'leed'; did you "
                 "mean 'lead'?");
    expect_error("{\"groups\": [{\"name\": \"lead\", \"count\": 1}, {\"count\": 3, \"pursuit\":"
                 " {\"target\": {\"group\": \"zebra\"}}}]}",
                 "groups[1].pursuit.target.group: no group is named 'zebra'");
    /* index outside the group */
    expect_error("{\"groups\": [{\"name\": \"lead\", \"count\": 1}, {\"count\": 3, \"follow\":"
                 " {\"leader\": \"previous\", \"first_leader\": {\"group\": \"lead\", \"index\": 1}}}]}",
                 "test.json: groups[1].follow.first_leader.index: must be < 1, the size of group "
                 "'lead', got 1");
    expect_error("{\"groups\": [{\"name\": \"e\", \"count\": 0}, {\"count\": 3, \"follow\":"
                 " {\"leader\": {\"group\": \"e\"}}}]}",
                 "groups[1].follow.leader.index: group 'e' has no agents");
    expect_error("{\"groups\": [{\"name\": \"a\", \"count\": 4}, {\"count\": 3, \"pursuit\":"
                 " {\"target\": {\"group\": \"a\", \"index\": -1}}}]}",
                 "groups[1].pursuit.target.index: must be >= 0, got -1");
    /* malformed references */
    expect_error("{\"groups\": [{\"name\": \"a\", \"count\": 4}, {\"count\": 3, \"pursuit\":"
                 " {\"target\": {\"index\": 0}}}]}",
                 "missing required key 'groups[1].pursuit.target.group'");
    expect_error("{\"groups\": [{\"name\": \"a\", \"count\": 4}, {\"count\": 3, \"pursuit\":"
                 " {\"target\": {\"group\": 0}}}]}",
                 "groups[1].pursuit.target.group: expected a group name (a string), got a number");
    expect_error("{\"groups\": [{\"name\": \"a\", \"count\": 1}, {\"name\": \"a\", \"count\": 1},"
                 " {\"count\": 1, \"pursuit\": {\"target\": {\"group\": \"a\"}}}]}",
                 "groups[2].pursuit.target.group: 'a' names more than one group (groups[0] and "
                 "groups[1])");
    expect_error("{\"groups\": [{\"name\": \"a\", \"count\": 1}, {\"count\": 1, \"follow\":"
                 " {\"leader\": {\"group\": \"a\"}, \"first_leader\": {\"group\": \"a\"}}}]}",
                 "groups[1].follow.first_leader: only used with \"leader\": \"previous\"");
}

Test(scenario, behaviors_that_need_an_agent_must_have_one)
{
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"pursue\": {}}"),
                 "test.json: missing required key 'groups[0].pursuit.target' (behaviors.pursue "
                 "needs an agent)");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"evade\": {}}, \"pursuit\": {}"),
                 "missing required key 'groups[0].pursuit.target' (behaviors.evade needs an "
                 "agent)");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"follow\": {\"weight\": 0.5}}"),
                 "missing required key 'groups[0].follow.leader' (behaviors.follow needs a "
                 "leader)");
    /* Weight 0 is off: nothing to steer by is then fine. So is "previous"
     * without first_leader: the first agent follows nobody. */
    shoal_scenario_destroy(load_text(ONE_GROUP("", ", \"behaviors\": {\"pursue\": {\"weight\": 0}}")));
    shoal_scenario_destroy(load_text(
        ONE_GROUP("", ", \"behaviors\": {\"follow\": {}}, \"follow\": {\"leader\": \"previous\"}")));
}

Test(scenario, wrap_needs_a_box_that_holds_every_spawn)
{
    expect_error(ONE_GROUP("\"world\": {\"wrap\": true}, ", ""),
                 "test.json: missing required key 'world.bounds_min' (wrap is true");
    expect_error(ONE_GROUP("\"world\": {\"wrap\": true, \"bounds_min\": [0, 0]}, ", ""),
                 "missing required key 'world.bounds_max' (wrap is true");
    expect_error(ONE_GROUP("\"world\": {\"bounds_min\": [0, 0], \"bounds_max\": [1, 1]}, ", ""),
                 "test.json: world.bounds_min: only used with \"wrap\": true");
    expect_error(ONE_GROUP("\"world\": {\"wrap\": false, \"bounds_max\": [1, 1]}, ", ""),
                 "world.bounds_max: only used with \"wrap\": true");
    expect_error(ONE_GROUP("\"world\": {\"wrap\": true, \"bounds_min\": [-50, 5],"
                           " \"bounds_max\": [50, 5]}, ",
                           ""),
                 "world.bounds_max[1]: must be > bounds_min[1] (5) with wrap, got 5");
    expect_error(ONE_GROUP("\"world\": {\"wrap\": true, \"bounds_min\": [-50, -50, -50],"
                           " \"bounds_max\": [50, 50, 50]}, ",
                           ""),
                 "world.bounds_min: expected 2 numbers [x, y] in a 2D scenario, got 3");
    /* spawn regions outside the box, named by group */
    const char* box = "\"world\": {\"wrap\": true, \"bounds_min\": [-50, -50],"
                      " \"bounds_max\": [50, 50]}, ";
    char text[1024];
    snprintf(text, sizeof text,
             "{%s\"groups\": [{\"count\": 1}, {\"name\": \"g\", \"count\": 5, \"spawn\":"
             " {\"center\": [45, 0], \"radius\": 10}}]}",
             box);
    expect_error(text, "test.json: groups[1].spawn: group 'g' spawns agents at x from 35 to 55, "
                       "outside the wrapped world box (world.bounds_min[0] = -50 to "
                       "world.bounds_max[0] = 50)");
    snprintf(text, sizeof text,
             "{%s\"groups\": [{\"count\": 5, \"spawn\": {\"shape\": \"box\", \"center\": [0, 0],"
             " \"size\": [20, 101]}}]}",
             box);
    expect_error(text, "groups[0].spawn: group 'group0' spawns agents at y from -50.5 to 50.5");
    snprintf(text, sizeof text,
             "{%s\"groups\": [{\"count\": 5, \"spawn\": {\"shape\": \"point\","
             " \"center\": [0, -51]}}]}",
             box);
    expect_error(text, "groups[0].spawn: group 'group0' spawns agents at y from -51 to -51");
    /* The default spawn (a disc of radius 10) counts too. */
    expect_error(ONE_GROUP("\"world\": {\"wrap\": true, \"bounds_min\": [-5, -5],"
                           " \"bounds_max\": [5, 5]}, ",
                           ""),
                 "groups[0].spawn: group 'group0' spawns agents at x from -10 to 10");
    snprintf(text, sizeof text,
             "{%s\"obstacles\": [{\"center\": [60, 0], \"radius\": 1}],"
             " \"groups\": [{\"count\": 1}]}",
             box);
    expect_error(text, "obstacles[0].center: x = 60 is outside the wrapped world box (-50 to 50)");
}

/* An allocator that fails once `alloc_budget` allocations have been made. */
static int alloc_budget = -1;

static void* budget_alloc(size_t size, size_t align, void* ctx)
{
    (void)ctx;
    if (alloc_budget == 0) return NULL;
    if (alloc_budget > 0) alloc_budget--;
    size_t rounded = (size + align - 1) / align * align;
    return aligned_alloc(align, rounded ? rounded : align);
}

Test(scenario, failed_populate_removes_agents_and_obstacles)
{
    /* Make populate fail at every allocation it can make in turn: each time
     * the world must be left as it was, without the scenario's obstacles and
     * agents (including those that follow and pursue others). */
    shoal_scenario_t* s = load_text(
        "{\"obstacles\": [{\"center\": [0, 5], \"radius\": 1}, {\"center\": [3, -2], \"radius\": 2},"
        " {\"center\": [9, 9], \"radius\": 3}],"
        " \"groups\": [{\"name\": \"lead\", \"count\": 1, \"behaviors\": {\"wander\": {}}},"
        " {\"count\": 40,"
        "  \"follow\": {\"leader\": \"previous\", \"first_leader\": {\"group\": \"lead\"}},"
        "  \"behaviors\": {\"follow\": {}, \"separate\": {}, \"avoid\": {}}},"
        " {\"count\": 30, \"pursuit\": {\"target\": {\"group\": \"lead\"}},"
        "  \"behaviors\": {\"pursue\": {}, \"cohere\": {}}},"
        " {\"count\": 4, \"behaviors\": {\"dseek\": {}}, \"dseek\": {\"route\": ["
        "  {\"position\": [5, 5], \"direction\": [1, 0]}, {\"position\": [9, 0], \"direction\": [0, -1]}]}},"
        " {\"count\": 2, \"formation\": {\"anchor\": {\"position\": [0, 0], \"direction\": [1, 0]},"
        "  \"offsets\": [[0, 0], [-3, 0]]}}]}");
    shoal_world_def_t def = shoal_scenario_world_def(s);
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    def.initial_capacity = 16; /* the scenario's agents need the world to grow */
    def.alloc = budget_alloc;
    def.free = test_free;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    shoal_agent_def_t mine = shoal_agent_default_def();
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &mine, &id), SHOAL_OK);
    const float center[3] = {-20.0f, 0.0f, 0.0f};
    cr_assert_eq(shoal_world_add_obstacle(w, center, 1.0f, NULL), SHOAL_OK);

    int failures = 0, after_obstacles = 0;
    shoal_status_t st = SHOAL_ERR_OUT_OF_MEMORY;
    for (int budget = 0; budget < 10000 && st != SHOAL_OK; budget++) {
        alloc_budget = budget;
        st = shoal_scenario_populate(s, w);
        alloc_budget = -1;
        if (st == SHOAL_OK) break;
        cr_assert_eq(st, SHOAL_ERR_OUT_OF_MEMORY, "budget %d: %s", budget, shoal_world_last_error(w));
        cr_assert_eq(shoal_world_agent_count(w), 1, "budget %d: agents left behind", budget);
        cr_assert_eq(shoal_world_obstacle_count(w), 1, "budget %d: obstacles left behind", budget);
        cr_assert_eq(shoal_world_route_count(w), 0, "budget %d: routes left behind", budget);
        cr_assert(shoal_agent_is_valid(w, id));
        after_obstacles += strstr(shoal_world_last_error(w), "obstacle") == NULL;
        failures++;
    }
    cr_expect_eq(st, SHOAL_OK, "populate never succeeded: %s", shoal_world_last_error(w));
    cr_expect_gt(failures, 0, "no allocation could be made to fail");
    cr_expect_gt(after_obstacles, 0, "no failure happened after the obstacles were in");
    cr_expect_eq(shoal_world_agent_count(w), 78);
    cr_expect_eq(shoal_world_obstacle_count(w), 4);
    cr_expect_eq(shoal_world_route_count(w), 1);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* A world with its own agents, a freed obstacle id below the highest and a
 * route, so that a populate's rollback has slots, ids and routes to give
 * back as they were. */
static shoal_world_t* world_before_populate(const shoal_scenario_t* s)
{
    shoal_world_def_t def = shoal_scenario_world_def(s);
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    def.initial_capacity = 4;
    def.alloc = budget_alloc;
    def.free = test_free;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    shoal_agent_t a[3];
    for (int i = 0; i < 3; i++) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)i;
        cr_assert_eq(shoal_agent_add(w, &d, &a[i]), SHOAL_OK);
    }
    cr_assert_eq(shoal_agent_remove(w, a[1]), SHOAL_OK); /* a free slot with generation 2 */
    int32_t id = -1;
    const float c0[3] = {50, 50, 0}, c1[3] = {-50, 50, 0};
    cr_assert_eq(shoal_world_add_obstacle(w, c0, 2.0f, &id), SHOAL_OK);
    cr_assert_eq(shoal_world_add_obstacle(w, c1, 2.0f, &id), SHOAL_OK);
    cr_assert_eq(shoal_world_remove_obstacle(w, 0), SHOAL_OK); /* id 0 free below the highest */
    shoal_waypoint_t wp = {{10, 0, 0}, {1, 0, 0}, 0};
    int32_t route = -1;
    cr_assert_eq(shoal_world_add_route(w, &wp, 1, &route), SHOAL_OK);
    return w;
}

/* What a world hands out next: an agent handle, an obstacle id, a route. */
static void next_ids(shoal_world_t* w, shoal_agent_t* agent, int32_t* obstacle, int32_t* route)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_agent_add(w, &d, agent), SHOAL_OK, "%s", shoal_world_last_error(w));
    const float c[3] = {0, 80, 0};
    cr_assert_eq(shoal_world_add_obstacle(w, c, 1.0f, obstacle), SHOAL_OK);
    shoal_waypoint_t wp = {{20, 0, 0}, {0, 1, 0}, 0};
    cr_assert_eq(shoal_world_add_route(w, &wp, 1, route), SHOAL_OK);
}

Test(scenario, failed_populate_rolls_back_handles_ids_routes_and_hash)
{
    /* Obstacles (one reusing the freed id 0), a routed group, then a group
     * large enough to make the tables grow. */
    const char* text = "{\"seed\": 7, \"obstacles\": [{\"center\": [0, 40], \"radius\": 3},"
                       "{\"center\": [0, -40], \"radius\": 3}, {\"center\": [40, 0], \"radius\": 3}],"
                       "\"groups\": [{\"count\": 4, \"behaviors\": {\"dseek\": {\"weight\": 1}},"
                       "\"dseek\": {\"route\": [{\"position\": [0, 0], \"direction\": [1, 0]},"
                       "{\"position\": [30, 0], \"direction\": [0, 1]}]}},"
                       "{\"count\": 300, \"spawn\": {\"shape\": \"disc\", \"radius\": 30}}]}";
    shoal_scenario_t* s = load_text(text);
    shoal_world_t* control = world_before_populate(s);
    uint64_t hash = shoal_world_state_hash(control);
    shoal_agent_t agent;
    int32_t obstacle, route;
    next_ids(control, &agent, &obstacle, &route);
    cr_expect_eq(obstacle, 0, "the freed id is handed out next");

    int failures = 0, successes = 0;
    for (int budget = 0; budget < 200 && successes == 0; budget++) {
        shoal_world_t* w = world_before_populate(s);
        alloc_budget = budget;
        shoal_status_t st = shoal_scenario_populate(s, w);
        alloc_budget = -1;
        if (st == SHOAL_OK) {
            successes++;
            cr_expect_eq(shoal_world_agent_count(w), 2 + 304);
        } else {
            failures++;
            cr_expect_eq(st, SHOAL_ERR_OUT_OF_MEMORY, "budget %d: %s", budget, shoal_world_last_error(w));
            cr_expect_eq(shoal_world_agent_count(w), 2, "budget %d", budget);
            cr_expect_eq(shoal_world_obstacle_count(w), 1, "budget %d", budget);
            cr_expect_eq(shoal_world_route_count(w), 1, "budget %d", budget);
            cr_expect_eq(shoal_world_state_hash(w), hash, "budget %d: the state hash moved", budget);
            shoal_agent_t a;
            int32_t o, r;
            next_ids(w, &a, &o, &r);
            cr_expect(a.index1 == agent.index1 && a.generation == agent.generation,
                      "budget %d: next handle %u/%u, expected %u/%u", budget, (unsigned)a.index1,
                      (unsigned)a.generation, (unsigned)agent.index1, (unsigned)agent.generation);
            cr_expect_eq(o, obstacle, "budget %d: next obstacle id", budget);
            cr_expect_eq(r, route, "budget %d: next route id", budget);
        }
        shoal_world_destroy(w);
    }
    cr_expect_gt(failures, 3, "populate failed at %d points", failures);
    cr_expect_eq(successes, 1, "and succeeded once the memory sufficed");
    shoal_world_destroy(control);
    shoal_scenario_destroy(s);
}

/* Directed seek to one waypoint from a scenario file. */
Test(scenario, dseek_keys_reach_the_agents)
{
    shoal_scenario_t* s =
        load_text("{\"groups\": [{\"count\": 3, \"behaviors\": {\"dseek\": {\"weight\": 1}},"
                  " \"dseek\": {\"waypoint\": [10, -4], \"direction\": [0, 2], \"speed\": 3, \"r_min\": 2.5,"
                  " \"reach_radius\": 0.5}}]}");
    shoal_world_t* w = populated(s);
    shoal_agent_t ids[3];
    cr_assert_eq(group_ids(w, 0, ids, 3), 3);
    shoal_agent_def_t d = def_of(w, ids[2]);
    cr_expect_eq(d.weights[SHOAL_BEHAVIOR_DSEEK], 1.0f);
    cr_expect_eq(d.dseek.waypoint.position[0], 10.0f);
    cr_expect_eq(d.dseek.waypoint.position[1], -4.0f);
    cr_expect_eq(d.dseek.waypoint.direction[1], 1.0f, "the direction is normalized");
    cr_expect_eq(d.dseek.waypoint.speed, 3.0f);
    cr_expect_eq(d.dseek.r_min, 2.5f);
    cr_expect_eq(d.dseek.reach_radius, 0.5f);
    cr_expect_eq(d.dseek.route, -1);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    expect_error("{\"groups\": [{\"count\": 1, \"dseek\": {\"waypoint\": [1, 2], \"direction\": [0, 0]}}]}",
                 "groups[0].dseek.direction: must be a nonzero vector");
    expect_error("{\"groups\": [{\"count\": 1, \"dseek\": {\"direction\": [1, 0]}}]}",
                 "groups[0].dseek.waypoint");
    expect_error(
        "{\"groups\": [{\"count\": 1, \"dseek\": {\"waypoint\": [1, 2, 3], \"direction\": [1, 0]}}]}",
        "groups[0].dseek.waypoint");
}

Test(scenario, dseek_routes_and_formations)
{
    shoal_scenario_t* s = load_path(SCENARIOS "/formation.json");
    shoal_world_t* w = populated(s);
    cr_expect_eq(shoal_world_route_count(w), 1);
    shoal_agent_t patrol[3], wedge[5];
    cr_assert_eq(group_ids(w, 0, patrol, 3), 3);
    cr_assert_eq(group_ids(w, 1, wedge, 5), 5);
    shoal_agent_def_t d = def_of(w, patrol[1]);
    cr_expect_eq(d.dseek.route, 0);
    cr_expect_eq(d.weights[SHOAL_BEHAVIOR_DSEEK], 1.0f);
    /* Wedge slot 3: 12 m behind (+y, since the anchor faces -y) and 12 m to
     * the left (+x when facing -y... left of -y is +x). */
    d = def_of(w, wedge[3]);
    cr_expect_eq(d.weights[SHOAL_BEHAVIOR_DSEEK], 1.0f, "formation arrival turns dseek on");
    cr_expect_float_eq(d.dseek.waypoint.position[0], 92.0f, 1e-4f);
    cr_expect_float_eq(d.dseek.waypoint.position[1], -48.0f, 1e-4f);
    cr_expect_float_eq(d.dseek.waypoint.direction[1], -1.0f, 1e-6f);
    cr_expect_float_eq(d.dseek.waypoint.speed, 3.0f, 1e-6f);
    /* Run it: every patrol agent completes the route. */
    for (int step = 0; step < shoal_scenario_steps(s); ++step)
        cr_assert_eq(shoal_world_step(w, shoal_scenario_dt(s)), SHOAL_OK);
    for (int i = 0; i < 3; ++i) {
        int32_t index = -1;
        cr_assert_eq(shoal_agent_route_index(w, patrol[i], &index), SHOAL_OK);
        cr_expect_eq(index, 3, "patrol %d stopped at waypoint %d", i, index);
    }
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    expect_error("{\"groups\": [{\"count\": 1, \"dseek\": {\"route\": [], \"r_min\": 1}}]}",
                 "groups[0].dseek.route: expected a non-empty array");
    expect_error("{\"groups\": [{\"count\": 1, \"dseek\": {\"route\": [{\"position\": [0, 0]}]}}]}",
                 "groups[0].dseek.route[0].direction");
    expect_error("{\"groups\": [{\"count\": 1, \"dseek\": {\"waypoint\": [0, 0], \"direction\": [1, 0],"
                 " \"route\": [{\"position\": [0, 0], \"direction\": [1, 0]}]}}]}",
                 "groups[0].dseek.route: give either");
    expect_error("{\"groups\": [{\"count\": 2, \"formation\": {\"anchor\": {\"position\": [0, 0],"
                 " \"direction\": [1, 0]}, \"offsets\": [[0, 0]]}}]}",
                 "groups[0].formation.offsets: expected an array of 2 offsets");
}

/* A dt the world would refuse at its first step is refused when loading
 * (found by fuzzing: "dt": 01016666666666666666 loaded, then failed). */
Test(scenario, dt_above_the_step_limit_is_refused)
{
    const char* json = "{\"name\": \"x\", \"dimensions\": 2, \"dt\": 1e18, \"groups\": [{\"count\": 1}]}";
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_neq(shoal_scenario_load_string(json, strlen(json), "dt.json", &sc, &err), SHOAL_OK);
    cr_assert(strstr(err.message, "dt") && strstr(err.message, "1000"), "%s", err.message);
    const char* ok = "{\"name\": \"x\", \"dimensions\": 2, \"dt\": 1000, \"groups\": [{\"count\": 1}]}";
    cr_assert_eq(shoal_scenario_load_string(ok, strlen(ok), "dt.json", &sc, &err), SHOAL_OK, "%s",
                 err.message);
    shoal_scenario_destroy(sc);
}

/* ---- planner agents ---- */

/* A "planner" object makes a group planner agents with every shoal_planner_t
 * field from the file; pursue and evade name their target agent. */
Test(scenario, planner_groups_carry_every_field)
{
    const char* json =
        "{\"dimensions\": 3, \"groups\": ["
        " {\"name\": \"red\", \"count\": 2, \"spawn\": {\"shape\": \"point\", \"center\": [0, 0, 0]},"
        "  \"planner\": {\"speed\": 6, \"radius\": 1.5, \"goal\": \"seek\", \"point\": [100, 5, -5],"
        "   \"strategy\": \"uniform\", \"discount\": 0.9, \"optimism\": -0.25, \"max_depth\": 12,"
        "   \"min_depth\": 4, \"max_expansions\": 800, \"k_skip\": 3, \"n_v\": 40, \"collapse\": 0.5,"
        "   \"damping\": 0.1, \"time_budget_ms\": 2.5, \"avoid_collisions\": false}},"
        " {\"name\": \"blue\", \"count\": 1, \"spawn\": {\"shape\": \"point\", \"center\": [50, 0, 0]},"
        "  \"planner\": {\"goal\": \"pursue\", \"target\": {\"group\": \"red\", \"index\": 1}, "
        "\"max_depth\": 2}}]}";
    shoal_scenario_t* s = load_text(json);
    shoal_world_t* w = populated(s);
    shoal_agent_t red[2], blue[1];
    cr_assert_eq(group_ids(w, 0, red, 2), 2);
    cr_assert_eq(group_ids(w, 1, blue, 1), 1);
    shoal_agent_def_t d = def_of(w, red[0]);
    cr_expect_eq(d.planner.enabled, 1);
    cr_expect_eq(d.planner.speed, 6.0f);
    cr_expect_eq(d.planner.radius, 1.5f);
    cr_expect_eq(d.planner.goal, SHOAL_PLAN_GOAL_SEEK);
    cr_expect(d.planner.goal_point[0] == 100.0f && d.planner.goal_point[1] == 5.0f &&
              d.planner.goal_point[2] == -5.0f);
    cr_expect_eq(d.planner.strategy, SHOAL_PLAN_UNIFORM);
    cr_expect_eq(d.planner.discount, 0.9f);
    cr_expect_eq(d.planner.optimism, -0.25f);
    cr_expect_eq(d.planner.max_depth, 12);
    cr_expect_eq(d.planner.min_depth, 4);
    cr_expect_eq(d.planner.max_expansions, 800);
    cr_expect_eq(d.planner.k_skip, 3);
    cr_expect_eq(d.planner.n_v, 40);
    cr_expect_eq(d.planner.collapse, 0.5f);
    cr_expect_eq(d.planner.damping, 0.1f);
    cr_expect_eq(d.planner.time_budget_ms, 2.5f);
    cr_expect_eq(d.planner.avoid_collisions, 0);
    shoal_agent_def_t b = def_of(w, blue[0]);
    cr_expect_eq(b.planner.goal, SHOAL_PLAN_GOAL_PURSUE);
    cr_expect(shoal_agent_equal(b.planner.goal_agent, red[1]) ||
              shoal_agent_equal(b.planner.goal_agent, red[0]));
    cr_expect_eq(b.planner.max_depth, 2);
    cr_expect_eq(b.planner.min_depth, 2, "the default min_depth follows a smaller max_depth");
    cr_expect_eq(b.planner.time_budget_ms, 0.0f, "no time budget unless asked");
    cr_assert_eq(shoal_world_step(w, 1.0f / 60.0f), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario, bad_planner_objects_are_refused)
{
#define PL(body) "{\"groups\": [{\"name\": \"a\", \"count\": 1, \"planner\": {" body "}}]}"
    expect_error(PL("\"time_budget_ms\": -1"), "groups[0].planner.time_budget_ms");
    expect_error(PL("\"time_budget_ms\": -1"), "must be >= 0, got -1");
    expect_error(PL("\"time_budget_ms\": 1e999"), "must be finite");
    expect_error(PL("\"time_budget_ms\": \"NaN\""), "expected a number, got a string");
    expect_error(PL("\"time_budget_ms\": 60001"), "must be in [0, 60000], got 60001");
    expect_error(PL("\"discount\": 1"), "discount: must be in (0, 1), got 1");
    expect_error(PL("\"optimism\": -2"), "optimism");
    expect_error(PL("\"max_depth\": 65"), "max_depth: must be <= 64");
    expect_error(PL("\"max_depth\": 4, \"min_depth\": 5"), "min_depth: must be <= 4");
    expect_error(PL("\"max_expansions\": 0"), "max_expansions");
    expect_error(PL("\"strategy\": \"adaptiv\""), "did you mean \"adaptive\"");
    expect_error(PL("\"goal\": \"pursue\""), "missing required key 'groups[0].planner.target'");
    expect_error(PL("\"goal\": \"seek\", \"target\": {\"group\": \"a\"}"), "target");
    expect_error(PL("\"speed\": 0"), "speed: must be > 0");
    expect_error(PL("\"sped\": 5"), "sped");
#undef PL
}

/* "collect": what `shoal run --collect` samples; its defaults without
 * one; a wrong name is an error at its JSON path, with the nearest. */
Test(scenario, collect_reads_its_figures_and_refuses_wrong_ones)
{
    const char* group = "\"groups\": [{\"name\": \"a\", \"count\": 3}]";
    char json[1024];
    snprintf(json, sizeof json, "{%s}", group);
    shoal_scenario_t* s = load_text(json);
    shoal_scenario_collect_t c = shoal_scenario_collect(s);
    cr_expect_eq(c.given, 0);
    cr_expect_eq(c.every, 1);
    cr_assert_eq(c.mean_count, 1);
    cr_expect_str_eq(c.means[0], "speed");
    cr_expect_eq(c.crowd + c.lines + c.areas, 0);
    shoal_scenario_destroy(s);

    snprintf(
        json, sizeof json,
        "{\"collect\": {\"every\": 5, \"means\": [\"position.x\", \"speed\", \"max_speed\"], \"crowd\": true,"
        " \"areas\": true}, %s}",
        group);
    s = load_text(json);
    c = shoal_scenario_collect(s);
    cr_expect_eq(c.given, 1);
    cr_expect_eq(c.every, 5);
    cr_assert_eq(c.mean_count, 3);
    cr_expect_str_eq(c.means[0], "position.x");
    cr_expect_str_eq(c.means[2], "max_speed");
    cr_expect_eq(c.crowd, 1);
    cr_expect_eq(c.lines, 0);
    cr_expect_eq(c.areas, 1);
    shoal_scenario_destroy(s);

    snprintf(json, sizeof json, "{\"collect\": {\"means\": [\"speed\", \"postion.x\"]}, %s}", group);
    expect_error(json, "collect.means[1]: \"postion.x\" is no column to average");
    expect_error(json, "did you mean \"position.x\"?");
    snprintf(json, sizeof json, "{\"collect\": {\"means\": [\"position.z\"]}, %s}", group);
    expect_error(json, "collect.means[0]: \"position.z\" is a column of 3D worlds; this scenario is 2D");
    snprintf(json, sizeof json, "{\"collect\": {\"every\": 0}, %s}", group);
    expect_error(json, "collect.every");
    snprintf(json, sizeof json, "{\"collect\": {\"evry\": 2}, %s}", group);
    expect_error(json, "did you mean 'every'?");
    snprintf(json, sizeof json, "{\"collect\": {\"means\": \"speed\"}, %s}", group);
    expect_error(json, "collect.means: expected an array of column names, got a string");
}
