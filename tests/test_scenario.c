/* Tests of the scenario loader (src/io/scenario.c): the bundled scenarios
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
static void expect_error_n(const char* json, size_t length, shoal_status_t status,
                           const char* expected)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* s = (shoal_scenario_t*)&err; /* must be overwritten with NULL */
    shoal_status_t st = shoal_scenario_load_string(json, length, "test.json", &s, &err);
    cr_expect_eq(st, status, "status %d, expected %d (%s)\nin: %s", (int)st, (int)status,
                 err.message, json);
    cr_expect_eq(err.status, status);
    cr_expect_null(s, "*out is not NULL after a failure");
    cr_expect_not_null(strstr(err.message, expected), "message '%s' lacks '%s'", err.message,
                       expected);
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
    shoal_agent_batch_t b = {a.ids, a.positions, a.velocities, a.headings, NULL, NULL, a.groups};
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

Test(scenario, default_json_has_four_groups_of_5000)
{
    shoal_scenario_t* s = load_path(SCENARIOS "/default.json");
    cr_expect_str_eq(shoal_scenario_name(s), "default");
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
    const shoal_behavior_t shown[4] = {SHOAL_BEHAVIOR_ARRIVE, SHOAL_BEHAVIOR_SEEK,
                                       SHOAL_BEHAVIOR_FLEE, SHOAL_BEHAVIOR_DEPART};
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

Test(scenario, docs_example_loads)
{
    /* The complete example in docs/scenarios.md is the first ```json block. */
    FILE* f = fopen(SHOAL_SOURCE_DIR "/docs/scenarios.md", "rb");
    cr_assert_not_null(f, "docs/scenarios.md: %s", strerror(errno));
    static char doc[65536];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    char* start = strstr(doc, "```json\n");
    cr_assert_not_null(start, "no ```json block in docs/scenarios.md");
    start += 8;
    char* end = strstr(start, "```");
    cr_assert_not_null(end);
    *end = '\0';
    shoal_scenario_t* s = load_text(start);
    cr_expect_str_eq(shoal_scenario_name(s), "example");
    cr_expect_eq(shoal_scenario_agent_count(s), 1300);
    shoal_world_destroy(populated(s));
    shoal_scenario_destroy(s);
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

    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    shoal_vehicle_t v = shoal_vehicle_default();
    for (int32_t i = 0; i < a.count; i++) {
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(w, a.ids[i], &d), SHOAL_OK);
        cr_expect_eq(memcmp(&d.vehicle, &v, sizeof v), 0, "vehicle is not the default");
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
    expect_error("{\"sed\": 3, \"groups\": [{\"count\": 1}]}",
                 "unknown key 'sed'; did you mean 'seed'?");
    expect_error("{\"frobnicate\": 3, \"groups\": [{\"count\": 1}]}", "unknown key 'frobnicate'");
    /* seek has no gain: only arrive and depart do. */
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"seek\": {\"gain\": 2}}"),
                 "unknown key 'groups[0].behaviors.seek.gain'");
    expect_error(ONE_GROUP("", ", \"behaviors\": {\"wander\": {}}"),
                 "unknown key 'groups[0].behaviors.wander'");
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
    expect_error(ONE_GROUP("", ", \"spawn\": {\"shape\": \"disk\"}"),
                 "groups[0].spawn.shape: expected one of \"point\", \"disc\", \"ring\", \"box\", "
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
    expect_error(ONE_GROUP("", ", \"vehicle\": {\"mass\": 0}"),
                 "groups[0].vehicle.mass: must be > 0, got 0");
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
    expect_error(ONE_GROUP("", ", \"spawn\": {\"radius\": 1e400}"),
                 "groups[0].spawn.radius: must be finite");
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

Test(scenario, duplicate_keys_are_errors)
{
    expect_error("{\"groups\": [{\"count\": 1, \"count\": 2}]}",
                 "test.json: duplicate key 'groups[0].count'");
    expect_error("{\"seed\": 1, \"groups\": [{\"count\": 1}], \"seed\": 1}", "duplicate key 'seed'");
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
    cr_expect_not_null(strstr(err.message, strerror(EISDIR)), "%s", err.message);
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
    for (int32_t i = 0; i < a1.count; i++)
        differ += a1.positions[3 * i] != a2.positions[3 * i];
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
    shoal_scenario_t* s = load_text(
        "{\"groups\": [{\"count\": 500, \"spawn\": {\"shape\": \"ring\", \"center\": [10, -20],"
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
            cr_expect(fabsf(x + 50.0f) <= 5.0f && fabsf(y) <= 2.0f, "(%g, %g) outside the box",
                      (double)x, (double)y);
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
    shoal_scenario_t* s = load_text(
        "{\"dimensions\": 3, \"groups\": [{\"count\": 300, \"spawn\": {\"shape\": \"ring\","
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
