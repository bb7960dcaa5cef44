/* `shoal run`'s seed, its trace buffers, where it finds scenarios, and the
 * one help format of every subcommand, as a user sees them (the built
 * binary spawned with pipes, cli_run.h). */
#define _XOPEN_SOURCE 700 /* mkdtemp, and cli_run.h's pty */

#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"

#define TINY SHOAL_SOURCE_DIR "/scenarios/tiny.json"
#define FLOCK2D SHOAL_SOURCE_DIR "/scenarios/flock2d.json"

TestSuite(cli_run, .timeout = 240);

static char* hash_of(const char* const* args)
{
    cJSON* root = run_json(args);
    char* hash = strdup(json_string(root, "state_hash"));
    cJSON_Delete(root);
    return hash;
}

static char* read_file_text(const char* path)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    buffer_t b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buffer_append(&b, chunk, n);
    fclose(f);
    cr_assert_not_null(b.data, "%s is empty", path);
    return b.data;
}

/* --threads 0 is the automatic count, as 0 is in scenario files and the
 * library: it runs (the world's count is the machine's, or
 * $SHOAL_THREADS) and gives the state of one thread and of three. */
Test(cli_run, threads_0_is_automatic)
{
    unsetenv("SHOAL_THREADS");
    cJSON* root = run_json((const char*[]){"run", TINY, "--steps", "40", "--threads", "0", "--json", NULL});
    const cJSON* threads = cJSON_GetObjectItemCaseSensitive(root, "threads");
    cr_assert(cJSON_IsNumber(threads));
    cr_expect_geq(threads->valuedouble, 1.0);
    char* auto_hash = strdup(json_string(root, "state_hash"));
    cJSON_Delete(root);
    char* one = hash_of((const char*[]){"run", TINY, "--steps", "40", "--threads", "1", "--json", NULL});
    char* three = hash_of((const char*[]){"run", TINY, "--steps", "40", "--threads", "3", "--json", NULL});
    cr_expect_str_eq(auto_hash, one);
    cr_expect_str_eq(three, one);
    free(auto_hash);
    free(one);
    free(three);
}

/* --seed S runs the world the file with "seed": S gives (placement
 * included); the same seed gives the same hash, another seed another. */
Test(cli_run, seed_replaces_the_scenarios_seed)
{
    char* file7 = hash_of((const char*[]){"run", TINY, "--steps", "10", "--json", NULL});
    char* seed7 = hash_of((const char*[]){"run", TINY, "--steps", "10", "--seed", "7", "--json", NULL});
    char* seed8 = hash_of((const char*[]){"run", TINY, "--steps", "10", "--seed=8", "--json", NULL});
    char* again8 = hash_of(
        (const char*[]){"run", TINY, "--steps", "10", "--seed", "8", "--threads", "1", "--json", NULL});
    char* top = hash_of(
        (const char*[]){"run", TINY, "--steps", "10", "--seed", "18446744073709551615", "--json", NULL});
    cr_expect_str_eq(seed7, file7, "tiny.json says \"seed\": 7: --seed 7 is the same run");
    cr_expect_str_neq(seed8, seed7, "another seed, another world");
    cr_expect_str_eq(again8, seed8, "one seed, one world (for any thread count)");
    cr_expect_str_neq(top, seed7);

    /* The same file saying "seed": 8: the placement follows the seed too. */
    char dir[] = "/tmp/shoal_seed_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/tiny8.json", dir);
    char* text = read_file_text(TINY);
    char* at = strstr(text, "\"seed\": 7");
    cr_assert_not_null(at, "tiny.json no longer says \"seed\": 7");
    at[8] = '8';
    FILE* f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    cJSON* root = run_json((const char*[]){"run", path, "--steps", "10", "--json", NULL});
    cr_expect_str_eq(json_string(root, "state_hash"), seed8, "--seed 8 differs from the file with seed 8");
    cr_expect_str_eq(json_string(root, "seed"), "8");
    cJSON_Delete(root);
    root = run_json(
        (const char*[]){"run", TINY, "--steps", "1", "--seed", "18446744073709551615", "--json", NULL});
    cr_expect_str_eq(json_string(root, "seed"), "18446744073709551615");
    cJSON_Delete(root);
    unlink(path);
    rmdir(dir);
    free(text);
    free(file7);
    free(seed7);
    free(seed8);
    free(again8);
    free(top);
}

Test(cli_run, bad_seeds_and_trace_capacities_are_usage_errors)
{
    const char* bad_seeds[] = {"-1",
                               "+5",
                               " 5",
                               "5 ",
                               "0x10",
                               "1e3",
                               "7.0",
                               "",
                               "seven",
                               "18446744073709551616",
                               "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_seeds / sizeof bad_seeds[0]; ++i) {
        cli_output_t r;
        run_cli((const char*[]){"run", TINY, "--steps", "1", "--seed", bad_seeds[i], NULL}, &r);
        cr_expect_eq(r.status, 2, "--seed '%s': exit %d", bad_seeds[i], r.status);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "not '%s'", bad_seeds[i]);
        cr_expect_not_null(strstr(r.err, quoted), "--seed '%s': %s", bad_seeds[i], r.err);
        cr_expect_not_null(strstr(r.err, "18446744073709551615"), "the range is not said: %s", r.err);
        cr_expect_str_empty(r.out);
        output_free(&r);
    }
    struct {
        const char* args[10];
        const char* named;
    } cases[] = {
        {{"run", TINY, "--seed", NULL}, "--seed"},
        {{"run", TINY, "--seed", "3", "--resume", "x.snap", NULL}, "--resume"},
        {{"run", TINY, "--trace-capacity", "100", NULL}, "--trace-capacity needs --trace"},
        {{"run", TINY, "--trace", "t.json", "--trace-capacity", "0", NULL}, "'0'"},
        {{"run", TINY, "--trace", "t.json", "--trace-capacity", "2147483648", NULL}, "2147483648"},
        {{"run", TINY, "--trace", "t.json", "--trace-capacity", "many", NULL}, "many"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cli_output_t r;
        run_cli(cases[i].args, &r);
        cr_expect_eq(r.status, 2, "case %zu: exit %d", i, r.status);
        cr_expect_not_null(strstr(r.err, cases[i].named), "case %zu: %s", i, r.err);
        output_free(&r);
    }
}

/* The README's example: `shoal run scenarios/flock2d.json --steps 100
 * --trace FILE` keeps every event: no warning, a step span per step, and
 * every worker's block spans up to the last step. */
Test(cli_run, the_readme_trace_example_drops_nothing)
{
    char dir[] = "/tmp/shoal_trace_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char trace[128];
    snprintf(trace, sizeof trace, "%s/flock.json", dir);
    cli_output_t r;
    run_cli((const char*[]){"run", FLOCK2D, "--steps", "100", "--threads", "2", "--trace", trace, NULL}, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_empty(r.err, "stderr: %s", r.err);
    output_free(&r);

    char* text = read_file_text(trace);
    cJSON* root = cJSON_Parse(text);
    cr_assert_not_null(root, "the trace is not JSON");
    const cJSON* events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    cr_assert(cJSON_IsArray(events));
    int steps = 0;
    double last_block_step[2] = {-1, -1};
    const cJSON* e;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(json_string(e, "ph"), "X") != 0) continue;
        const cJSON* args = cJSON_GetObjectItemCaseSensitive(e, "args");
        double step = json_number(args, "step");
        if (strcmp(json_string(e, "name"), "step") == 0) steps++;
        if (cJSON_GetObjectItemCaseSensitive(args, "items") != NULL) {
            int tid = (int)json_number(e, "tid");
            cr_assert(tid == 0 || tid == 1, "tid %d", tid);
            if (step > last_block_step[tid]) last_block_step[tid] = step;
        }
    }
    cr_expect_eq(steps, 100, "%d step spans for 100 steps", steps);
    cr_expect_eq(last_block_step[0], 99, "worker 0's blocks stop at step %g", last_block_step[0]);
    cr_expect_eq(last_block_step[1], 99, "worker 1's blocks stop at step %g", last_block_step[1]);
    cJSON_Delete(root);
    free(text);

    /* Fixed buffers too small for the run: the run goes on, the warning
     * says how many events were dropped and what to raise. */
    run_cli((const char*[]){"run", TINY, "--steps", "20", "--threads", "2", "--trace", trace,
                            "--trace-capacity", "50", NULL},
            &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(matches(r.err, "warning: trace buffers full \\(--trace-capacity 50 events each, 3 "
                             "buffers\\): [1-9][0-9]* events dropped"),
              "stderr: %s", r.err);
    output_free(&r);
    unlink(trace);
    rmdir(dir);
}

/* From a directory that has no scenarios/: no FILE runs the shipped
 * default.json, and a bare name finds the shipped scenario. */
Test(cli_run, shipped_scenarios_from_any_directory)
{
    char* want_default = hash_of(
        (const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/default.json", "--steps", "2", "--json", NULL});
    char* want_tiny = hash_of((const char*[]){"run", TINY, "--steps", "2", "--json", NULL});
    char dir[] = "/tmp/shoal_cwd_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chdir(dir), 0);
    cJSON* root = run_json((const char*[]){"run", "--steps", "2", "--json", NULL});
    cr_expect_str_eq(json_string(root, "state_hash"), want_default);
    const char* file = json_string(root, "file");
    const char* tail = "/scenarios/default.json";
    cr_expect(strlen(file) > strlen(tail) && strcmp(file + strlen(file) - strlen(tail), tail) == 0 &&
                  file[0] == '/',
              "ran %s", file);
    cJSON_Delete(root);
    const char* names[] = {"tiny.json", "scenarios/tiny.json"};
    for (int i = 0; i < 2; ++i) {
        root = run_json((const char*[]){"run", names[i], "--steps", "2", "--json", NULL});
        cr_expect_str_eq(json_string(root, "state_hash"), want_tiny, "%s", names[i]);
        cJSON_Delete(root);
    }
    cli_output_t r;
    run_cli((const char*[]){"run", "no_such_scenario.json", NULL}, &r);
    cr_expect_eq(r.status, 1);
    cr_expect(
        matches(r.err, "^shoal: no_such_scenario.json: .*not in the current directory, nor in /.*/scenarios"),
        "stderr: %s", r.err);
    output_free(&r);
    cr_assert_eq(chdir("/"), 0);
    rmdir(dir);
    free(want_default);
    free(want_tiny);
}

/* Every subcommand's help, and every kind's, has the one layout that
 * cli_print_help writes: "Usage: shoal CMD ... [options]", the option table
 * under its heading (each row "  --name" with its text from column 24),
 * -h/--help among them, then the Exit codes section. A command of kinds
 * (bench, plot, experiment) lists them under "Kinds (...)". */
Test(cli_run, every_help_page_has_one_format)
{
    const char* pages[][3] = {
        {"run"},
        {"view"},
        {"dseek"},
        {"pathfollow"},
        {"soak"},
        {"validate", "crowd"},
        {"bench", "flock"},
        {"bench", "kernel"},
        {"bench", "planner"},
        {"bench", "crowd"},
        {"bench", "scaling"},
        {"experiment", "pathfollow"},
        {"experiment", "planner"},
#if SHOAL_WITH_PLOT
        {"plot", "run"},
        {"plot", "dseek"},
        {"plot", "pathfollow"},
        {"plot", "trim"},
        {"plot", "search"},
        {"plot", "scaling"},
#endif
    };
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; ++i) {
        const char* args[4] = {pages[i][0], pages[i][1] ? pages[i][1] : "--help",
                               pages[i][1] ? "--help" : NULL, NULL};
        cli_output_t r;
        run_cli(args, &r);
        char name[64];
        snprintf(name, sizeof name, "%s%s%s", pages[i][0], pages[i][1] ? " " : "",
                 pages[i][1] ? pages[i][1] : "");
        cr_expect_eq(r.status, 0, "%s --help: exit %d", name, r.status);
        char usage[96];
        snprintf(usage, sizeof usage, "Usage: shoal %s ", name);
        cr_expect_eq(strncmp(r.out, usage, strlen(usage)), 0, "%s: %.80s", name, r.out);
        const char* first_line_end = strchr(r.out, '\n');
        cr_assert_not_null(first_line_end);
        char* options_at = strstr(r.out, " [options]");
        cr_expect(options_at != NULL && options_at < first_line_end,
                  "%s: the usage line does not say [options]: %.*s", name, (int)(first_line_end - r.out),
                  r.out);
        cr_expect_not_null(
            strstr(r.out, "\nOptions (a value can be given as --option VALUE or --option=VALUE):\n"),
            "%s: no option table heading", name);
        cr_expect(matches(r.out, "\n  -h, --help            show this help\\.\n"), "%s: no -h, --help row",
                  name);
        cr_expect_not_null(strstr(r.out, "\nExit codes:\n  0  success\n"), "%s: no Exit codes", name);
        cr_expect_str_empty(r.err, "%s: %s", name, r.err);
        output_free(&r);
    }
    const char* kinds[] = {
        "bench",
        "experiment",
#if SHOAL_WITH_PLOT
        "plot"
#endif
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        cli_output_t r;
        run_cli((const char*[]){kinds[i], "--help", NULL}, &r);
        cr_expect_eq(r.status, 0);
        char usage[64], heading[96];
        snprintf(usage, sizeof usage, "Usage: shoal %s KIND [options]", kinds[i]);
        snprintf(heading, sizeof heading, "\nKinds ('shoal %s KIND --help' lists a kind's own options):\n",
                 kinds[i]);
        cr_expect_eq(strncmp(r.out, usage, strlen(usage)), 0, "%s: %.80s", kinds[i], r.out);
        cr_expect_not_null(strstr(r.out, heading), "%s --help: no Kinds heading:\n%s", kinds[i], r.out);
        cr_expect_not_null(strstr(r.out, "\nExit codes:\n  0  success\n"), "%s: no Exit codes", kinds[i]);
        output_free(&r);
    }
}

/* `shoal soak --crowd` for a few seconds: pedestrians through doors that
 * close and open, both worlds saved and loaded back once (memory, then a
 * file), every invariant held (docs/dev/reliability.md). */
Test(cli_run, soak_crowd_holds_its_invariants)
{
    cJSON* root = run_json((const char*[]){"soak", "--crowd", "--steps", "1200", "--agents", "120",
                                           "--threads", "2", "--json", NULL});
    cr_expect_str_eq(json_string(root, "scene"), "crowd");
    cr_expect_eq(json_number(root, "steps"), 1200);
    cr_expect_eq(json_number(root, "violations"), 0, "first: %s", json_string(root, "first_violation"));
    cr_expect_eq(json_number(root, "hash_compares"), 24);
    cr_expect_eq(json_number(root, "saves_memory"), 1);
    cr_expect_eq(json_number(root, "saves_file"), 1);
    cr_expect_gt(json_number(root, "doors_closed") + json_number(root, "doors_opened"), 10);
    cr_expect_gt(json_number(root, "path_tests"), 1000000);
    cr_expect_geq(json_number(root, "closest_pair"), 0.98);
    cr_expect_geq(json_number(root, "closest_wall"), 0.98);
    cJSON_Delete(root);
}

/* --collect FILE: the scenario's "collect" figures, a row before the first
 * step, every K-th step and after the last, the last row's line crossings
 * those of the run's own summary. */
Test(cli_run, collect_writes_a_row_a_sample)
{
    char dir[] = "/tmp/shoal_collect_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char scene[128], csv[128];
    snprintf(scene, sizeof scene, "%s/door.json", dir);
    snprintf(csv, sizeof csv, "%s/figures.csv", dir);
    FILE* f = fopen(scene, "w");
    cr_assert_not_null(f);
    fputs(
        "{\"name\": \"door\", \"dimensions\": 2, \"seed\": 3, \"dt\": 0.1, \"steps\": 45,\n"
        " \"walls\": [{\"points\": [[0, -10], [0, -1]]}, {\"points\": [[0, 1], [0, 10]]}],\n"
        " \"measure\": {\"lines\": [{\"name\": \"door\", \"from\": [0, -1], \"to\": [0, 1]}]},\n"
        " \"collect\": {\"every\": 10, \"means\": [\"speed\", \"position.x\"], \"crowd\": true, \"lines\": "
        "true},\n"
        " \"groups\": [{\"name\": \"a\", \"count\": 30, \"spawn\": {\"shape\": \"box\", \"center\": [-5, 0], "
        "\"size\": [4, 8]},\n"
        "   \"crowd\": {\"preset\": \"pedestrian\"}, \"behaviors\": {\"seek\": {}}, \"target\": [8, 0]}]}\n",
        f);
    fclose(f);
    cJSON* root = run_json((const char*[]){"run", scene, "--threads", "1", "--collect", csv, "--json", NULL});
    const cJSON* lines =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "measure"), "lines");
    cr_assert(cJSON_IsArray(lines));
    const double positive = json_number(cJSON_GetArrayItem(lines, 0), "positive");
    cJSON_Delete(root);
    char* text = read_file_text(csv);
    char* save = NULL;
    char* line = strtok_r(text, "\n", &save);
    cr_expect_str_eq(line,
                     "step,time,agents,mean_speed,mean_position.x,crowd_agents,crowd_arrived,"
                     "crowd_closest_pair,crowd_overlapping,crowd_relaxed_last_step,"
                     "crowd_contact_iterations,crowd_wall_penetration,crowd_in_walls,line_door_positive,"
                     "line_door_negative");
    const long steps[] = {0, 10, 20, 30, 40, 45};
    char* last = NULL;
    for (int r = 0; r < 6; ++r) {
        line = strtok_r(NULL, "\n", &save);
        cr_assert_not_null(line, "row %d missing", r);
        cr_expect_eq(strtol(line, NULL, 10), steps[r], "%s", line);
        last = line;
    }
    cr_expect_null(strtok_r(NULL, "\n", &save), "rows past the last step");
    /* the last row's door crossings: the 14th column */
    char* field = last;
    for (int k = 0; k < 13; ++k) field = strchr(field, ',') + 1;
    cr_expect_eq(strtod(field, NULL), positive, "%s", last);
    cr_expect_gt(positive, 0.0, "someone went through the door");
    free(text);
    remove(csv);
    remove(scene);
    rmdir(dir);
}
