/* Tests of the `shoal` command as a user or a script sees it: the built
 * binary is spawned with pipes (posix_spawn, never system(), so no shell
 * quoting gets in the way) and its exit code, stdout and stderr examined.
 *
 * The scenarios are the repository's scenarios/tiny.json (fast) and files
 * made here under a mkdtemp directory. The test process itself never starts
 * OpenMP: the threads run in the spawned binary. */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, ptsname: the pty test */

#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <spawn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"

#if SHOAL_WITH_PLOT
#include <cairo.h>
#endif

#define TINY SHOAL_SOURCE_DIR "/scenarios/tiny.json"

static double max_system_calls(const cJSON* root)
{
    const cJSON* systems = cJSON_GetObjectItemCaseSensitive(root, "systems");
    cr_assert(cJSON_IsArray(systems));
    double most = -1.0;
    const cJSON* system;
    cJSON_ArrayForEach(system, systems)
    {
        double calls = json_number(system, "calls");
        most = calls > most ? calls : most;
    }
    return most;
}

/* A scratch directory per test, removed with its files at the end. */
typedef struct scratch_t {
    char dir[64];
    char paths[4][128];
    int count;
} scratch_t;

static const char* scratch_write(scratch_t* s, const char* name, const char* contents)
{
    if (s->dir[0] == '\0') {
        strcpy(s->dir, "/tmp/shoal_cli_XXXXXX");
        cr_assert_not_null(mkdtemp(s->dir), "mkdtemp: %s", strerror(errno));
    }
    cr_assert_lt(s->count, 4);
    /* Build the path in a local buffer: gcc -O3 cannot prove that s->dir
     * and s->paths do not overlap and warns (-Werror=restrict). */
    char buf[128];
    snprintf(buf, sizeof buf, "%s/%s", s->dir, name);
    char* path = s->paths[s->count++];
    memcpy(path, buf, sizeof buf);
    if (contents != NULL) {
        FILE* f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(contents, f);
        fclose(f);
    }
    return path;
}

static void scratch_remove(scratch_t* s)
{
    for (int i = 0; i < s->count; ++i) {
        unlink(s->paths[i]);
    }
    if (s->dir[0] != '\0') {
        rmdir(s->dir);
    }
}

static char* read_text(const char* path)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    buffer_t b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buffer_append(&b, chunk, n);
    }
    fclose(f);
    cr_assert_not_null(b.data, "%s is empty", path);
    return b.data;
}

TestSuite(cli, .timeout = 120);

Test(cli, json_has_every_key_with_its_type)
{
    cJSON* root = run_json((const char*[]){"run", TINY, "--steps", "5", "--json", NULL});
    cr_expect_gt(strlen(json_string(root, "scenario")), 0);
    cr_expect_gt(json_number(root, "agents"), 0);
    double dims = json_number(root, "dimensions");
    cr_expect(dims == 2 || dims == 3, "dimensions %g", dims);
    cr_expect_geq(json_number(root, "threads"), 1);
    const char* backend = json_string(root, "backend");
    cr_expect(strcmp(backend, "serial") == 0 || strcmp(backend, "openmp") == 0 ||
                  strcmp(backend, "host") == 0,
              "backend %s", backend);
    cr_expect_eq(json_number(root, "steps"), 5);
    cr_expect_gt(json_number(root, "dt"), 0);
    cr_expect_geq(json_number(root, "seconds"), 0);
    cr_expect_gt(json_number(root, "agent_steps_per_s"), 0);
    const char* hash = json_string(root, "state_hash");
    cr_expect_eq(strlen(hash), 16, "state_hash %s", hash);
    cr_expect(matches(hash, "^[0-9a-f]{16}$"), "state_hash %s", hash);

    const cJSON* systems = cJSON_GetObjectItemCaseSensitive(root, "systems");
    cr_assert(cJSON_IsArray(systems));
    cr_assert_gt(cJSON_GetArraySize(systems), 0);
    const cJSON* system;
    cJSON_ArrayForEach(system, systems)
    {
        cr_expect(cJSON_IsObject(system));
        cr_expect_gt(strlen(json_string(system, "name")), 0);
        cr_expect_gt(strlen(json_string(system, "stage")), 0);
        cr_expect_leq(json_number(system, "calls"), 5);
        cr_expect_geq(json_number(system, "ms_total"), 0);
        cr_expect_geq(json_number(system, "ms_per_step"), 0);
        cr_expect_geq(json_number(system, "agents"), 0);
    }
    /* Every enabled system runs once per step. */
    cr_expect_eq(max_system_calls(root), 5);
    cJSON_Delete(root);
}

Test(cli, state_hash_same_for_one_and_two_threads)
{
    cJSON* one = run_json((const char*[]){"run", TINY, "--steps", "20", "--threads", "1", "--json", NULL});
    cJSON* two = run_json((const char*[]){"run", TINY, "--steps", "20", "--threads=2", "--json", NULL});
    cr_expect_eq(json_number(one, "threads"), 1);
    cr_expect_eq(json_number(two, "threads"), 2);
    cr_expect_str_eq(json_string(one, "state_hash"), json_string(two, "state_hash"));
    cJSON_Delete(one);
    cJSON_Delete(two);
}

Test(cli, state_hash_same_for_two_runs)
{
    const char* args[] = {"run", TINY, "--steps", "20", "--json", NULL};
    cJSON* first = run_json(args);
    cJSON* second = run_json(args);
    cr_expect_str_eq(json_string(first, "state_hash"), json_string(second, "state_hash"));
    cJSON_Delete(first);
    cJSON_Delete(second);
}

Test(cli, steps_option_sets_step_count)
{
    cJSON* three = run_json((const char*[]){"run", TINY, "--steps", "3", "--json", NULL});
    cJSON* seven = run_json((const char*[]){"run", TINY, "--steps=7", "--json", NULL});
    cJSON* none = run_json((const char*[]){"run", "--json", "--steps", "0", TINY, NULL});
    cr_expect_eq(json_number(three, "steps"), 3);
    cr_expect_eq(json_number(seven, "steps"), 7);
    cr_expect_eq(json_number(none, "steps"), 0);
    cr_expect_eq(max_system_calls(three), 3);
    cr_expect_eq(max_system_calls(seven), 7);
    cr_expect_eq(max_system_calls(none), 0);
    /* The hash covers the step count, so different lengths must differ. */
    cr_expect_str_neq(json_string(three, "state_hash"), json_string(seven, "state_hash"));
    cJSON_Delete(three);
    cJSON_Delete(seven);
    cJSON_Delete(none);
}

Test(cli, text_output_has_summary_and_aligned_table)
{
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "5", NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char* labels[] = {"scenario", "agents",       "dimensions",    "threads",   "backend",
                            "steps",    "wall seconds", "agent-steps/s", "state_hash"};
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; ++i) {
        cr_expect_not_null(strstr(r.out, labels[i]), "no '%s' in:\n%s", labels[i], r.out);
    }
    const char* columns[] = {"system", "stage", "calls", "ms total", "ms/step", "ns/agent"};
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; ++i) {
        cr_expect_not_null(strstr(r.out, columns[i]), "no column '%s' in:\n%s", columns[i], r.out);
    }
    cr_expect(matches(r.out, "state_hash +[0-9a-f]{16}\n"), "%s", r.out);

    /* Aligned: the "calls" header ends in the same column as the counts. */
    const char* header = strstr(r.out, "system ");
    cr_assert_not_null(header);
    const char* calls = strstr(header, "calls");
    cr_assert_not_null(calls);
    size_t calls_end = (size_t)(calls - header) + strlen("calls");
    const char* row = strchr(header, '\n') + 1;
    cr_assert_gt(strlen(row), calls_end);
    cr_expect(row[calls_end - 1] >= '0' && row[calls_end - 1] <= '9', "calls column misaligned:\n%s", header);
    cr_expect_eq(row[calls_end], ' ', "calls column misaligned:\n%s", header);
    /* ... and the total row's "ms total" figure ends under its header. */
    const char* total = strstr(header, "\nall systems");
    cr_assert_not_null(total, "no total row:\n%s", header);
    total += 1;
    size_t ms_end = (size_t)(strstr(header, "ms total") - header) + strlen("ms total");
    cr_assert_gt(strlen(total), ms_end);
    cr_expect(total[ms_end - 1] >= '0' && total[ms_end - 1] <= '9', "total misaligned:\n%s", header);
    cr_expect_eq(total[ms_end], ' ', "total misaligned:\n%s", header);

    /* Same run as JSON: same hash. */
    cJSON* root = run_json((const char*[]){"run", TINY, "--steps", "5", "--json", NULL});
    cr_expect_not_null(strstr(r.out, json_string(root, "state_hash")));
    cJSON_Delete(root);
    output_free(&r);
}

Test(cli, missing_file_names_the_path)
{
    scratch_t s = {0};
    const char* path = scratch_write(&s, "does_not_exist.json", NULL);
    cli_output_t r;
    run_cli((const char*[]){"run", path, "--steps", "1", NULL}, &r);
    cr_expect_eq(r.status, 1);
    cr_expect_str_empty(r.out);
    cr_expect_eq(strncmp(r.err, "shoal: ", 7), 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, path), "stderr: %s", r.err);
    output_free(&r);
    scratch_remove(&s);
}

Test(cli, malformed_json_gives_line_and_column)
{
    scratch_t s = {0};
    /* The '@' on line 3 is where a key should be. */
    const char* path = scratch_write(&s, "broken.json", "{\n  \"name\": \"broken\",\n  @\n}\n");
    cli_output_t r;
    run_cli((const char*[]){"run", path, "--json", NULL}, &r);
    cr_expect_eq(r.status, 1);
    cr_expect_str_empty(r.out);
    cr_expect_eq(strncmp(r.err, "shoal: ", 7), 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, path), "stderr: %s", r.err);
    cr_expect(matches(r.err, ":3:[0-9]+"), "no line:col of line 3 in: %s", r.err);
    output_free(&r);
    scratch_remove(&s);
}

Test(cli, unknown_key_names_its_json_path)
{
    /* Take the real tiny scenario and add one key it cannot know, inside
     * the first group if there are groups, so the path has some depth. */
    char* text = read_text(TINY);
    cJSON* root = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(root, "tiny.json does not parse");
    const char* expected = "bogus_key_9";
    cJSON* groups = cJSON_GetObjectItemCaseSensitive(root, "groups");
    cJSON* first = cJSON_IsArray(groups) ? cJSON_GetArrayItem(groups, 0) : NULL;
    if (cJSON_IsObject(first)) {
        cr_assert_not_null(cJSON_AddNumberToObject(first, "bogus_key_9", 1));
        expected = "groups[0].bogus_key_9";
    } else {
        cr_assert_not_null(cJSON_AddNumberToObject(root, "bogus_key_9", 1));
    }
    char* bad = cJSON_Print(root);
    cJSON_Delete(root);
    scratch_t s = {0};
    const char* path = scratch_write(&s, "unknown_key.json", bad);
    cJSON_free(bad);

    cli_output_t r;
    run_cli((const char*[]){"run", path, "--steps", "1", NULL}, &r);
    cr_expect_eq(r.status, 1);
    cr_expect_str_empty(r.out);
    cr_expect_eq(strncmp(r.err, "shoal: ", 7), 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, expected), "no '%s' in: %s", expected, r.err);
    output_free(&r);
    scratch_remove(&s);
}

Test(cli, bad_command_lines_exit_2)
{
    struct {
        const char* args[6];
        const char* named; /* stderr must mention this */
    } cases[] = {
        {{"run", TINY, "--frobnicate", NULL}, "--frobnicate"},
        {{"run", TINY, "--steps", "abc", NULL}, "abc"},
        {{"run", TINY, "--steps", "-1", NULL}, "-1"},
        {{"run", TINY, "--steps=12x", NULL}, "12x"},
        {{"run", TINY, "--steps", NULL}, "--steps"},
        {{"run", TINY, "--threads", "-1", NULL}, "--threads"},
        {{"run", TINY, "--threads", "1025", NULL}, "1025"},
        {{"run", TINY, "--threads=two", NULL}, "two"},
        {{"run", TINY, TINY, NULL}, "one scenario"},
        {{"frobnicate", NULL}, "frobnicate"},
        {{"--frobnicate", NULL}, "--frobnicate"},
        {{NULL}, "run"}, /* no command: the help on stderr lists them */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cli_output_t r;
        run_cli(cases[i].args, &r);
        cr_expect_eq(r.status, 2, "case %zu (%s): exit %d", i, cases[i].named, r.status);
        cr_expect_str_empty(r.out, "case %zu: stdout %s", i, r.out);
        cr_expect_not_null(strstr(r.err, cases[i].named), "case %zu: stderr %s", i, r.err);
        if (cases[i].args[0] != NULL) {
            cr_expect_eq(strncmp(r.err, "shoal: ", 7), 0, "case %zu: stderr %s", i, r.err);
        }
        output_free(&r);
    }
}

/* The commands with kinds find them in the tables that benchmark/ and
 * experiments/ register (cmake/shoal_cli.cmake): each help lists every kind,
 * each kind runs (its own --help), and an unknown kind is a usage error that
 * lists them and guesses the one meant. */
Test(cli, registered_kinds_are_listed_and_run)
{
    struct {
        const char* command;
        const char* kinds[11];
        const char* typo;
        const char* meant;
    } groups[] = {
        {"experiment", {"pathfollow", "planner", "avoid", NULL}, "planer", "planner"},
        {"validate", {"crowd", "rimea", NULL}, "rimae", "rimea"},
        {"bench",
         {"flock", "kernel", "planner", "crowd", "nav", "navmesh", "scaling", "loops", "small", "split",
          NULL},
         "scalng",
         "scaling"},
#if SHOAL_WITH_PLOT
        {"plot", {"run", "scaling", "nav", "dseek", "pathfollow", "trim", "search", NULL}, "serch", "search"},
#endif
    };
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; ++g) {
        cli_output_t r;
        const char* help[] = {groups[g].command, "--help", NULL};
        run_cli(help, &r);
        cr_expect_eq(r.status, 0, "%s --help: exit %d", groups[g].command, r.status);
        for (int k = 0; groups[g].kinds[k]; ++k) {
            char line[64];
            snprintf(line, sizeof line, "\n  %s ", groups[g].kinds[k]);
            cr_expect_not_null(strstr(r.out, line), "%s --help lacks %s:\n%s", groups[g].command,
                               groups[g].kinds[k], r.out);
            const char* kind_help[] = {groups[g].command, groups[g].kinds[k], "--help", NULL};
            cli_output_t h;
            run_cli(kind_help, &h);
            cr_expect_eq(h.status, 0, "%s %s --help: exit %d %s", groups[g].command, groups[g].kinds[k],
                         h.status, h.err);
            cr_expect_not_null(strstr(h.out, "Usage: shoal"), "%s %s --help: %s", groups[g].command,
                               groups[g].kinds[k], h.out);
            output_free(&h);
        }
        output_free(&r);
        const char* bad[] = {groups[g].command, groups[g].typo, NULL};
        run_cli(bad, &r);
        cr_expect_eq(r.status, 2, "%s %s: exit %d", groups[g].command, groups[g].typo, r.status);
        char meant[64];
        snprintf(meant, sizeof meant, "did you mean '%s'?", groups[g].meant);
        cr_expect_not_null(strstr(r.err, meant), "%s %s: %s", groups[g].command, groups[g].typo, r.err);
        cr_expect_not_null(strstr(r.err, groups[g].kinds[0]), "%s %s: %s", groups[g].command, groups[g].typo,
                           r.err);
        output_free(&r);
    }
    /* the registered subcommands are in the command's own help */
    cli_output_t r;
    const char* top[] = {"--help", NULL};
    run_cli(top, &r);
    const char* registered[] = {"bench", "dseek", "pathfollow"};
    for (size_t i = 0; i < 3; ++i) {
        char line[64];
        snprintf(line, sizeof line, "\n  %s ", registered[i]);
        cr_expect_not_null(strstr(r.out, line), "--help lacks %s:\n%s", registered[i], r.out);
    }
    output_free(&r);
}

Test(cli, help_mentions_every_option)
{
    cli_output_t r;
    run_cli((const char*[]){"run", "--help", NULL}, &r);
    cr_expect_eq(r.status, 0);
    cr_expect_str_empty(r.err);
    const char* words[] = {"--steps",     "--threads",    "--json",     "--quiet",           "--help",
                           "FILE",        "default.json", "state_hash", "agent_steps_per_s", "systems",
                           "ms_per_step", "Exit codes",   "--stats",    "--trace",           "--save",
                           "--resume"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i) {
        cr_expect_not_null(strstr(r.out, words[i]), "run --help lacks '%s'", words[i]);
    }
    output_free(&r);

    run_cli((const char*[]){"--help", NULL}, &r);
    cr_expect_eq(r.status, 0);
    cr_expect(matches(r.out, "\n +run +"), "shoal --help lists no run: %s", r.out);
    output_free(&r);

    run_cli((const char*[]){"help", "run", NULL}, &r);
    cr_expect_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "--threads"));
    output_free(&r);

    run_cli((const char*[]){"--version", NULL}, &r);
    cr_expect_eq(r.status, 0);
    cr_expect(matches(r.out, "^shoal [0-9]+\\.[0-9]+\\.[0-9]+"), "version: %s", r.out);
    output_free(&r);
}

Test(cli, no_progress_when_piped)
{
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "200", NULL}, &r);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_eq(strchr(r.err, '\r'), NULL, "progress written to a pipe: %s", r.err);
    cr_expect_eq(strchr(r.out, '\r'), NULL);
    cr_expect_str_empty(r.err);
    output_free(&r);
}

Test(cli, progress_only_on_a_terminal_without_quiet)
{
    cli_output_t r;
    /* Linux always has /dev/ptmx; failing here is louder than a skip. */
    cr_assert(run_cli_with((const char*[]){"run", TINY, "--steps", "50", NULL}, 1, &r),
              "no pseudo-terminal available");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_not_null(strchr(r.err, '\r'), "no progress bar on a terminal");
    cr_expect_not_null(strstr(r.err, "100%"), "progress never reached 100%%: %s", r.err);
    cr_expect_eq(strchr(r.out, '\r'), NULL, "progress leaked into stdout");
    output_free(&r);

    run_cli_with((const char*[]){"run", TINY, "--steps", "50", "--quiet", NULL}, 1, &r);
    cr_expect_eq(r.status, 0);
    cr_expect_eq(strchr(r.err, '\r'), NULL, "progress despite --quiet: %s", r.err);
    output_free(&r);

    run_cli_with((const char*[]){"run", TINY, "--steps", "50", "--json", NULL}, 1, &r);
    cr_expect_eq(r.status, 0);
    cr_expect_eq(strchr(r.err, '\r'), NULL, "progress despite --json: %s", r.err);
    output_free(&r);
}

Test(cli, default_file_is_scenarios_default_json)
{
    /* Criterion runs each test in its own process, so chdir stays local. */
    cr_assert_eq(chdir(SHOAL_SOURCE_DIR), 0);
    cJSON* root = run_json((const char*[]){"run", "--steps", "1", "--json", NULL});
    cr_expect_str_eq(json_string(root, "file"), "scenarios/default.json");
    cJSON_Delete(root);
}

/* The benchmarks run and report what benchmark/README.md promises; their
 * figures are checked by people reading them, never against a clock here. */
Test(cli, bench_flock_reports_its_keys)
{
    for (int dim = 2; dim <= 3; ++dim) {
        const char* d = dim == 2 ? "2" : "3";
        cJSON* root = run_json((const char*[]){"bench", "flock", "--dim", d, "--agents", "3000", "--steps",
                                               "3", "--warmup", "1", "--threads", "2", "--json", NULL});
        cr_expect_eq(json_number(root, "agents"), 3000);
        cr_expect_eq(json_number(root, "steps"), 3);
        cr_expect_eq(json_number(root, "threads"), 2);
        cr_expect_gt(json_number(root, "seconds"), 0);
        cr_expect_gt(json_number(root, "agent_steps_per_s"), 0);
        cr_expect_gt(json_number(root, "pair_tests_per_s"), 0);
        /* The box is sized for K = 20: the measured mean is near it. */
        double k = json_number(root, "mean_neighbors");
        cr_expect(k > 14.0 && k < 26.0, "%dD mean_neighbors %g", dim, k);
        cr_expect_gt(json_number(root, "bytes_per_agent"), 0);
        cr_expect(matches(json_string(root, "state_hash"), "^[0-9a-f]{16}$"));
        cr_expect(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "systems")));
        cJSON_Delete(root);
    }
    /* The spatial hash's phases: each within the system's own time (they
     * are timed inside it), and a reorder every step takes some. */
    cJSON* sense = run_json((const char*[]){"bench", "flock", "--agents", "3000", "--steps", "4", "--warmup",
                                            "1", "--reorder", "1", "--threads", "2", "--json", NULL});
    cJSON* phases = cJSON_GetObjectItemCaseSensitive(sense, "sense_phases");
    cr_assert(cJSON_IsObject(phases), "sense_phases");
    static const char* const names[] = {"cell_edge", "count", "prefix", "scatter", "reorder", "copy"};
    double sum = 0.0;
    for (int k = 0; k < 6; ++k) {
        double v = json_number(phases, names[k]);
        cr_expect_geq(v, 0.0, "%s", names[k]);
        sum += v;
    }
    cr_expect_gt(json_number(phases, "reorder"), 0.0);
    double hash_ms = -1.0;
    cJSON* sys;
    cJSON_ArrayForEach(sys, cJSON_GetObjectItemCaseSensitive(sense, "systems"))
    {
        if (strcmp(json_string(sys, "name"), "spatial_hash") == 0) hash_ms = json_number(sys, "ms_per_step");
    }
    cr_expect(sum <= hash_ms * (1.0 + 1e-9) + 1e-9, "phases %g ms, spatial_hash %g ms", sum, hash_ms);
    cJSON_Delete(sense);
    /* Per-agent weights: the same keys, and the flag. */
    cJSON* mixed = run_json((const char*[]){"bench", "flock", "--agents", "3000", "--steps", "2", "--warmup",
                                            "1", "--mixed", "--json", NULL});
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(mixed, "mixed")));
    cr_expect_gt(json_number(mixed, "pair_tests_per_s"), 0);
    cJSON_Delete(mixed);
    /* The library's share of the setup, and no hash when asked. */
    cJSON* lean = run_json((const char*[]){"bench", "flock", "--agents", "3000", "--steps", "1", "--warmup",
                                           "0", "--no-hash", "--json", NULL});
    double add = json_number(lean, "add_seconds");
    cr_expect(add > 0.0 && add <= json_number(lean, "setup_seconds"), "add_seconds %g", add);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(lean, "state_hash")));
    cJSON_Delete(lean);
    cJSON* kernel = run_json((const char*[]){"bench", "kernel", "--steps", "1", "--json", NULL});
    cr_expect_gt(json_number(kernel, "pair_tests_per_s"), 0);
    cJSON_Delete(kernel);
}

Test(cli, bench_loops_reports_the_cost_of_a_loop)
{
    cJSON* root = run_json((const char*[]){"bench", "loops", "--threads", "2", "--loops", "200", "--items",
                                           "64", "--rounds", "2", "--json", NULL});
    cr_expect_str_eq(json_string(root, "bench"), "loops");
    cr_expect_eq(json_number(root, "threads"), 2);
    cr_expect_eq(json_number(root, "loops"), 200);
    double serial = json_number(root, "serial_ns_per_loop");
    double forkjoin = json_number(root, "forkjoin_ns_per_loop");
    double region = json_number(root, "region_ns_per_loop");
    cr_expect(serial > 0 && forkjoin > 0 && region > 0, "%g %g %g", serial, forkjoin, region);
    /* cJSON prints 15 significant digits when they read back within its
     * tolerance, so compare within a relative 1e-9. */
    double overhead = json_number(root, "region_overhead_ns");
    cr_expect(fabs(overhead - (region - serial / 2)) <= 1e-9 * fabs(region) + 1e-9,
              "overhead %.17g, region %.17g, serial %.17g", overhead, region, serial);
    cJSON_Delete(root);
    cli_output_t r;
    run_cli((const char*[]){"bench", "loops", "--threads", "1", NULL}, &r);
    cr_expect_eq(r.status, 2, "one thread has no loop to start: %s", r.err);
    cr_expect_not_null(strstr(r.err, "--threads"), "%s", r.err);
    output_free(&r);
}

Test(cli, bench_planner_reports_its_keys)
{
    /* The same scene on 1 and 2 threads: one hash. */
    char hash[2][17];
    for (int t = 0; t < 2; ++t) {
        cJSON* root = run_json((const char*[]){"bench", "planner", "--agents", "300", "--sim-seconds", "1.5",
                                               "--threads", t ? "2" : "1", "--json", NULL});
        cr_expect_eq(json_number(root, "agents"), 300);
        cr_expect_eq(json_number(root, "threads"), t + 1);
        cr_expect_float_eq(json_number(root, "sim_seconds"), 1.5, 1e-6);
        cr_expect_gt(json_number(root, "wall_seconds"), 0);
        cr_expect_gt(json_number(root, "realtime_factor"), 0);
        cr_expect_gt(json_number(root, "searches_per_s"), 0);
        cr_expect_gt(json_number(root, "ms_per_search"), 0);
        double g = json_number(root, "goodness_mean");
        cr_expect(g > 0.0 && g <= 1.0, "goodness_mean %g", g);
        /* Everyone plans at its first step, then once per 1 s interval. */
        cr_expect_geq(json_number(root, "searches"), 300 + 300 / 2);
        const char* h = json_string(root, "state_hash");
        cr_expect(matches(h, "^[0-9a-f]{16}$"));
        snprintf(hash[t], sizeof hash[t], "%s", h);
        cJSON_Delete(root);
    }
    cr_expect_str_eq(hash[0], hash[1]);
    cli_output_t r;
    run_cli((const char*[]){"bench", "planner", "--sim-seconds", "0", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "--sim-seconds"), "%s", r.err);
    output_free(&r);
}

/* Crowd agents on the grid (2D and 3D), the shuffled grid and the circle:
 * the keys benchmark/README.md lists, figures in their ranges, and the same
 * state on 1 and 2 threads. */
Test(cli, bench_crowd_reports_its_keys)
{
    static const char* const scenes[][2] = {
        {"grid", "2"}, {"gridshuf", "2"}, {"circle", "2"}, {"grid", "3"}, {"circle", "3"}};
    for (size_t k = 0; k < sizeof scenes / sizeof scenes[0]; ++k) {
        char hash[2][17];
        for (int t = 0; t < 2; ++t) {
            cJSON* root = run_json((const char*[]){
                "bench", "crowd", "--scenario", scenes[k][0], "--dim", scenes[k][1], "--agents", "200",
                "--steps", "20", "--warmup", "5", "--threads", t ? "2" : "1", "--json", NULL});
            const char* what = scenes[k][0];
            cr_expect_str_eq(json_string(root, "bench"), "crowd");
            cr_expect_str_eq(json_string(root, "scenario"), what);
            cr_expect_eq(json_number(root, "dim"), atoi(scenes[k][1]));
            cr_expect_eq(json_number(root, "agents"), 200);
            cr_expect_eq(json_number(root, "steps"), 20);
            cr_expect_eq(json_number(root, "threads"), t + 1);
            cr_expect_gt(json_number(root, "lanes"), 0);
            cr_expect_gt(json_number(root, "seconds"), 0);
            cr_expect_gt(json_number(root, "agent_steps_per_s"), 0);
            /* every step measured, warm-up included */
            cr_expect_eq(json_number(root, "quality_every"), 1);
            cr_expect_eq(json_number(root, "quality_samples"), 25);
            /* ORCA keeps the agents apart (within the 1 % that stepping at dt allows) */
            double gap = json_number(root, "min_pair_distance");
            cr_expect(gap > 0.9 && gap < 2.0, "%s: min_pair_distance %g", what, gap);
            cr_expect_geq(json_number(root, "overlaps"), 0);
            /* 25 steps of 0.25 s at 1 m/s: no one is home yet */
            cr_expect_gt(json_number(root, "mean_dist_to_goal"), 10.0);
            double arrived = json_number(root, "arrived");
            cr_expect(arrived >= 0.0 && arrived <= 1.0, "%s: arrived %g", what, arrived);
            const char* h = json_string(root, "state_hash");
            cr_expect(matches(h, "^[0-9a-f]{16}$"));
            snprintf(hash[t], sizeof hash[t], "%s", h);
            const cJSON* systems = cJSON_GetObjectItemCaseSensitive(root, "systems");
            cr_expect(cJSON_IsArray(systems));
            int orca = 0;
            double hash_ms = -1.0;
            const cJSON* s;
            cJSON_ArrayForEach(s, systems)
            {
                const cJSON* name = cJSON_GetObjectItemCaseSensitive(s, "name");
                orca += cJSON_IsString(name) && strcmp(name->valuestring, "orca") == 0;
                if (cJSON_IsString(name) && strcmp(name->valuestring, "spatial_hash") == 0)
                    hash_ms = json_number(s, "ms_per_step");
            }
            cr_expect_eq(orca, 1, "%s: no orca system among the costs", what);
            /* the spatial hash's phases, timed inside it: some time, none past its own */
            const cJSON* phases = cJSON_GetObjectItemCaseSensitive(root, "hash_phases");
            cr_assert(cJSON_IsObject(phases), "%s: hash_phases", what);
            static const char* const names[] = {"cell_edge", "count", "prefix", "scatter", "reorder", "copy"};
            double sum = 0.0;
            for (int p = 0; p < 6; ++p) {
                const double v = json_number(phases, names[p]);
                cr_expect_geq(v, 0.0, "%s: %s", what, names[p]);
                sum += v;
            }
            cr_expect_gt(sum, 0.0, "%s: the hash's phases took no time", what);
            cr_expect_leq(sum, hash_ms * 1.0001 + 1e-6, "%s: phases %g ms past the hash's %g", what, sum,
                          hash_ms);
            cJSON_Delete(root);
        }
        cr_expect_str_eq(hash[0], hash[1], "%s %sD: 1 and 2 threads differ", scenes[k][0], scenes[k][1]);
    }
    /* Quality at the end only. */
    cJSON* end = run_json((const char*[]){"bench", "crowd", "--agents", "200", "--steps", "3",
                                          "--quality-every", "0", "--json", NULL});
    cr_expect_eq(json_number(end, "quality_samples"), 1);
    cJSON_Delete(end);
    cli_output_t r;
    run_cli((const char*[]){"bench", "crowd", "--scenario", "square", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "--scenario"), "%s", r.err);
    output_free(&r);
}

Test(cli, bench_rejects_bad_options)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "flock", "--dim", "4", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "--dim"), "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"bench", "swim", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "swim"), "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"bench", "flock", "--neighbors", "-3", NULL}, &r);
    cr_expect_eq(r.status, 2);
    output_free(&r);
}

Test(cli, dseek_reports_an_arrival_and_writes_a_trace)
{
    char dir[] = "/tmp/shoal_dseek_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char trace[128];
    snprintf(trace, sizeof trace, "%s/trace.csv", dir);
    cJSON* root = run_json((const char*[]){"dseek", "--from", "12,0,0.3", "--to", "0,0,0", "--rmin", "2",
                                           "--speed", "5", "--trace", trace, "--json", NULL});
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "reached")));
    cr_expect_leq(json_number(root, "position_error"), 0.1);
    cr_expect_leq(json_number(root, "heading_error_deg"), 3.0);
    /* Longer than the straight line: it has to come round to face +x. */
    cr_expect_gt(json_number(root, "path_length"), 12.0);
    cr_expect_gt(json_number(root, "time"), 0.0);
    cJSON_Delete(root);
    FILE* f = fopen(trace, "r");
    cr_assert_not_null(f, "no trace written");
    char line[256];
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_expect_str_eq(line, "t,x,y,heading\n");
    int rows = 0;
    while (fgets(line, sizeof line, f)) rows++;
    fclose(f);
    cr_expect_gt(rows, 100);
    remove(trace);
    /* --csv is its name now, as pathfollow's; --trace, the old one, above */
    root = run_json((const char*[]){"dseek", "--from", "12,0,0.3", "--to", "0,0,0", "--rmin", "2", "--speed",
                                    "5", "--csv", trace, "--json", NULL});
    cJSON_Delete(root);
    f = fopen(trace, "r");
    cr_assert_not_null(f, "no CSV written");
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_expect_str_eq(line, "t,x,y,heading\n");
    fclose(f);
    remove(trace);
    rmdir(dir);

    cJSON* r3 = run_json((const char*[]){"dseek", "--from", "0,0,0,0,1,0", "--to", "30,5,4,1,0,0", "--rmin",
                                         "2", "--speed", "5", "--json", NULL});
    cr_expect(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(r3, "reached")));
    cr_expect_leq(json_number(r3, "position_error"), 0.6);
    cJSON_Delete(r3);
}

Test(cli, dseek_rejects_bad_usage)
{
    const char* const* cases[] = {
        (const char*[]){"dseek", "--to", "0,0,0", "--rmin", "2", "--speed", "5", NULL},
        (const char*[]){"dseek", "--from", "1,2", "--to", "0,0,0", "--rmin", "2", "--speed", "5", NULL},
        (const char*[]){"dseek", "--from", "1,2,0", "--to", "0,0,0", "--rmin", "-2", "--speed", "5", NULL},
        (const char*[]){"dseek", "--from", "1,2,0", "--to", "0,0,0,1,0,0", "--rmin", "2", "--speed", "5",
                        NULL},
        (const char*[]){"dseek", "--from", "0,0,0,0,0,0", "--to", "5,0,0,1,0,0", "--rmin", "2", "--speed",
                        "5", NULL},
        (const char*[]){"dseek", "--grid", "fast", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cli_output_t r;
        run_cli(cases[i], &r);
        cr_expect_eq(r.status, 2, "case %zu: exit %d, stderr %s", i, r.status, r.err);
        cr_expect_gt(strlen(r.err), 0);
        output_free(&r);
    }
}

/* ---- path following ------------------------------------------------------- */

/* root[object][key]["mean"]: a figure of the experiment, with its interval. */
static double member_mean(const cJSON* root, const char* object, const char* key)
{
    const cJSON* o = cJSON_GetObjectItemCaseSensitive(root, object);
    cr_assert(cJSON_IsObject(o), "\"%s\" must be an object", object);
    const cJSON* m = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsObject(m), "\"%s\".\"%s\" must be an object", object, key);
    return json_number(m, "mean");
}

/* The experiment's must-hold, over 3 trials (the README's table has 20):
 * the proposed column has fewer stuck events per trial and a lower mean
 * total time than the baseline, and the tuned column's time is no worse
 * than the proposed one's. Every figure is a {mean, lo, hi} object; the
 * per-vehicle breakdown adds up to the total. The soak is left out here
 * (0 trials), and the tuner has 20 evaluations per vehicle (the default
 * 60 took two thirds of the run; the tuned column then had 46.1 s against
 * the proposed 49.6 s, with 20 45.1 s). */
Test(cli, pathfollow_experiment_table_i_ordering, .timeout = 600)
{
    cJSON* root = run_json((const char*[]){"experiment", "pathfollow", "--trials", "3", "--tune-evals", "20",
                                           "--soak-trials", "0", "--json", NULL});
    const char* followers[] = {"baseline", "proposed", "tuned", "proposed_alg1"};
    const char* keys[] = {"stuck_events",        "stuck_runs", "cte_mean", "total_time_mean",
                          "inside_corridor_pct", "speed_mean", "completed"};
    for (size_t f = 0; f < 4; ++f)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
            const cJSON* o = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(root, followers[f]), keys[k]);
            double mean = json_number(o, "mean"), lo = json_number(o, "lo"), hi = json_number(o, "hi");
            cr_expect(lo <= mean && mean <= hi, "%s %s: %g not in [%g, %g]", followers[f], keys[k], mean, lo,
                      hi);
        }
    double stuck_b = member_mean(root, "baseline", "stuck_events");
    double stuck_p = member_mean(root, "proposed", "stuck_events");
    double time_b = member_mean(root, "baseline", "total_time_mean");
    double time_p = member_mean(root, "proposed", "total_time_mean");
    double time_t = member_mean(root, "tuned", "total_time_mean");
    cr_expect_lt(stuck_p, stuck_b, "stuck events: proposed %g, baseline %g", stuck_p, stuck_b);
    cr_expect_lt(time_p, time_b, "total time: proposed %g, baseline %g", time_p, time_b);
    cr_expect_leq(time_t, time_p, "total time: tuned %g, proposed %g", time_t, time_p);
    const cJSON* pv =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "proposed"), "per_vehicle");
    double sum = 0.0;
    const char* vehicles[] = {"buggy", "car", "apc", "truck", "tank", "hovercraft"};
    for (size_t v = 0; v < 6; ++v)
        sum += json_number(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pv, vehicles[v]),
                                                            "stuck_events"),
                           "mean");
    cr_expect_float_eq(sum, stuck_p, 1e-9, "the per-vehicle breakdown adds up: %g, %g", sum, stuck_p);
    cr_expect(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "soak")));
    cJSON_Delete(root);
}

/* The trials are reproducible: the same seed gives the same table on 1 and
 * 2 threads, another seed another table (the starts and paths are drawn
 * per course, vehicle and trial, not in the order the threads take them). */
Test(cli, pathfollow_trials_reproducible, .timeout = 600)
{
    const char* base[] = {"experiment", "pathfollow", "--trials",  "2", "--tune-evals", "0", "--soak-trials",
                          "0",          "--json",     "--threads", "1", "--seed",       "7", NULL};
    cJSON* one = run_json(base);
    const char* two_args[] = {"experiment", "pathfollow",    "--trials", "2",      "--tune-evals",
                              "0",          "--soak-trials", "0",        "--json", "--threads",
                              "2",          "--seed",        "7",        NULL};
    cJSON* two = run_json(two_args);
    const char* other_args[] = {"experiment", "pathfollow",    "--trials", "2",      "--tune-evals",
                                "0",          "--soak-trials", "0",        "--json", "--threads",
                                "2",          "--seed",        "8",        NULL};
    cJSON* other = run_json(other_args);
    cJSON_DeleteItemFromObjectCaseSensitive(one, "wall_seconds");
    cJSON_DeleteItemFromObjectCaseSensitive(two, "wall_seconds");
    cJSON_DeleteItemFromObjectCaseSensitive(other, "wall_seconds");
    cr_expect_eq(json_number(one, "trials"), 2);
    cr_expect(cJSON_Compare(one, two, 1), "1 and 2 threads gave different tables");
    cJSON_ReplaceItemInObjectCaseSensitive(other, "seed", cJSON_CreateNumber(7));
    cr_expect(!cJSON_Compare(one, other, 1), "seeds 7 and 8 gave the same table");
    cJSON_Delete(one);
    cJSON_Delete(two);
    cJSON_Delete(other);
}

/* The switchbacks' last hairpin turns 150 degrees onto the climb to the
 * hilltop. The proposed follower used to slow the apc there to a crawl at
 * full lock (its heading curve asked for v_min), and it stalled: 4 stuck
 * events and a teleport. It now keeps the speed of its tightest turn. */
Test(cli, pathfollow_uphill_hairpin_without_a_stall)
{
    cJSON* root = run_json(
        (const char*[]){"pathfollow", "--vehicle", "apc", "--course", "switchbacks", "--json", NULL});
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "completed")));
    cr_expect_eq(json_number(root, "stuck_events"), 0);
    cJSON_Delete(root);
    root = run_json(
        (const char*[]){"pathfollow", "--vehicle", "truck", "--course", "switchbacks", "--json", NULL});
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "completed")));
    cr_expect_leq(json_number(root, "stuck_events"), 1);
    cr_expect_eq(json_number(root, "teleports"), 0);
    cJSON_Delete(root);
}

static void write_text(const char* path, const char* text)
{
    FILE* f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

Test(cli, pathfollow_single_runs_and_bad_paths)
{
    cJSON* root =
        run_json((const char*[]){"pathfollow", "--vehicle", "car", "--course", "hairpins", "--json", NULL});
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "completed")));
    cr_expect_lt(json_number(root, "cte_mean"), 1.0);
    cr_expect_gt(json_number(root, "speed_mean"), 3.0);
    cJSON_Delete(root);

    char dir[] = "/tmp/shoal_paths_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char good[128], one[128], repeated[128], empty[128];
    snprintf(good, sizeof good, "%s/good.json", dir);
    snprintf(one, sizeof one, "%s/one.json", dir);
    snprintf(repeated, sizeof repeated, "%s/repeated.json", dir);
    snprintf(empty, sizeof empty, "%s/empty.json", dir);
    write_text(good, "{\"half_width\": 3, \"waypoints\": [[0, 0], [40, 0], [40, 30]]}");
    write_text(one, "{\"half_width\": 3, \"waypoints\": [[0, 0]]}");
    write_text(repeated, "{\"half_width\": 3, \"waypoints\": [[0, 0], [10, 0], [10, 0], [20, 5]]}");
    write_text(empty, "{\"half_width\": 3, \"waypoints\": []}");
    root = run_json((const char*[]){"pathfollow", "--vehicle", "tank", "--path", good, "--follower",
                                    "baseline", "--json", NULL});
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "completed")));
    cJSON_Delete(root);
    struct {
        const char* path;
        const char* says;
    } bad[] = {{one, "one waypoint"}, {repeated, "repeats"}, {empty, "empty"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cli_output_t r;
        run_cli((const char*[]){"pathfollow", "--vehicle", "car", "--path", bad[i].path, NULL}, &r);
        cr_expect_eq(r.status, 1, "%s: exit %d", bad[i].path, r.status);
        cr_expect_not_null(strstr(r.err, bad[i].says), "%s: stderr [%s]", bad[i].path, r.err);
        output_free(&r);
    }
    cli_output_t r;
    run_cli((const char*[]){"pathfollow", "--vehicle", "bicycle", "--course", "hairpins", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "bicycle"));
    output_free(&r);
    remove(good);
    remove(one);
    remove(repeated);
    remove(empty);
    rmdir(dir);
}

/* --trace writes Chrome trace-event JSON naming every system; --stats lists
 * every system, idle ones included; a trace that cannot be written fails
 * the run with the path in the message and leaves no temporary file. */
Test(cli, trace_and_stats_cover_every_system)
{
    scratch_t s = {0};
    const char* trace = scratch_write(&s, "trace.json", NULL);
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "5", "--threads", "2", "--trace", trace, "--stats", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
    cr_expect_not_null(strstr(r.out, "outside systems"), "%s", r.out);

    char* text = read_text(trace);
    cJSON* root = cJSON_Parse(text);
    cr_assert_not_null(root, "the trace is not JSON");
    cr_expect_str_eq(json_string(root, "displayTimeUnit"), "ms");
    const cJSON* events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    cr_assert(cJSON_IsArray(events));
    int complete = 0, thread_names = 0;
    const cJSON* e;
    cJSON_ArrayForEach(e, events)
    {
        const char* ph = json_string(e, "ph");
        if (strcmp(ph, "M") == 0) {
            thread_names += strcmp(json_string(e, "name"), "thread_name") == 0;
            continue;
        }
        cr_assert_str_eq(ph, "X");
        complete++;
        json_string(e, "name");
        json_string(e, "cat");
        cr_expect_geq(json_number(e, "ts"), 0.0);
        cr_expect_geq(json_number(e, "dur"), 0.0);
        cr_expect_eq(json_number(e, "pid"), 1.0);
        cr_expect_geq(json_number(e, "tid"), 0.0);
    }
    cr_expect_gt(complete, 0);
    cr_expect_eq(thread_names, 2, "one thread_name per worker");

    cJSON* run = run_json((const char*[]){"run", TINY, "--steps", "5", "--json", NULL});
    const cJSON* systems = cJSON_GetObjectItemCaseSensitive(run, "systems");
    cr_assert(cJSON_IsArray(systems));
    const cJSON* system;
    cJSON_ArrayForEach(system, systems)
    {
        const char* name = json_string(system, "name");
        int spans = 0;
        cJSON_ArrayForEach(e, events)
        {
            if (strcmp(json_string(e, "ph"), "X") == 0 && strcmp(json_string(e, "name"), name) == 0) {
                spans++;
            }
        }
        cr_expect_geq(spans, 5, "system %s: %d spans for 5 steps", name, spans);
        char row[64];
        snprintf(row, sizeof row, "\n%s ", name);
        cr_expect_not_null(strstr(r.out, row), "--stats lacks %s:\n%s", name, r.out);
    }
    cJSON_Delete(run);
    cJSON_Delete(root);
    free(text);
    output_free(&r);

    /* An unwritable trace: exit 1, the path named, nothing left behind. */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/missing/trace.json", s.dir);
    run_cli((const char*[]){"run", TINY, "--steps", "2", "--trace", bad, NULL}, &r);
    cr_expect_eq(r.status, 1, "exit %d", r.status);
    cr_expect_not_null(strstr(r.err, bad), "stderr: %s", r.err);
    output_free(&r);
    run_cli((const char*[]){"run", TINY, "--trace", NULL}, &r);
    cr_expect_eq(r.status, 2, "--trace without a file is a usage error");
    output_free(&r);
    scratch_remove(&s);
}

/* `run --steps 200` and `run --steps 100 --save F` then `run --resume F
 * --steps 100` end in the same state, for any thread counts. */
static void check_resume(const char* scenario, const char* threads_a, const char* threads_b)
{
    scratch_t s = {0};
    const char* snap = scratch_write(&s, "half.snap", NULL);
    cJSON* whole = run_json((const char*[]){"run", scenario, "--steps", "200", "--json", NULL});
    cJSON* first = run_json((const char*[]){"run", scenario, "--steps", "100", "--threads", threads_a,
                                            "--save", snap, "--json", NULL});
    cJSON* second = run_json((const char*[]){"run", scenario, "--resume", snap, "--steps", "100", "--threads",
                                             threads_b, "--json", NULL});
    cr_expect_str_neq(json_string(first, "state_hash"), json_string(whole, "state_hash"));
    cr_expect_str_eq(json_string(second, "state_hash"), json_string(whole, "state_hash"), "%s", scenario);
    cr_expect_eq(json_number(second, "steps"), 100);
    cJSON_Delete(whole);
    cJSON_Delete(first);
    cJSON_Delete(second);
    scratch_remove(&s);
}

Test(cli, resume_continues_like_an_uninterrupted_run)
{
    check_resume(TINY, "1", "2");
    check_resume(SHOAL_SOURCE_DIR "/scenarios/formation.json", "2", "1");
}

Test(cli, resume_runs_the_remaining_steps_and_rejects_bad_snapshots)
{
    scratch_t s = {0};
    const char* snap = scratch_write(&s, "w.snap", NULL);
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "30", "--save", snap, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect(matches(r.out, "snapshot +.*w\\.snap \\(step 30\\)"), "%s", r.out);
    output_free(&r);
    cJSON* full = run_json((const char*[]){"run", TINY, "--json", NULL});
    cJSON* rest = run_json((const char*[]){"run", TINY, "--resume", snap, "--json", NULL});
    cr_expect_eq(json_number(rest, "steps") + 30, json_number(full, "steps"),
                 "the scenario's remaining steps");
    cr_expect_str_eq(json_string(rest, "state_hash"), json_string(full, "state_hash"));
    cJSON_Delete(full);
    cJSON_Delete(rest);

    /* A damaged snapshot: exit 1, a message naming the file, no output. */
    FILE* f = fopen(snap, "r+b");
    cr_assert_not_null(f);
    fseek(f, 100, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    run_cli((const char*[]){"run", TINY, "--resume", snap, NULL}, &r);
    cr_expect_eq(r.status, 1);
    cr_expect(matches(r.err, "^shoal: cannot resume: .*w\\.snap: checksum mismatch"), "%s", r.err);
    cr_expect_str_empty(r.out);
    output_free(&r);
    const char* missing = scratch_write(&s, "missing.snap", NULL);
    run_cli((const char*[]){"run", TINY, "--resume", missing, NULL}, &r);
    cr_expect_eq(r.status, 1);
    cr_expect(matches(r.err, "missing\\.snap: cannot open"), "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"run", TINY, "--save", NULL}, &r);
    cr_expect_eq(r.status, 2);
    output_free(&r);
    scratch_remove(&s);
}

/* ---- outputs, readers, extreme options, --resume checks ----------------- */

/* Files under a scratch directory, by name (the scratch_t above holds four). */
typedef struct scratch_dir_t {
    char dir[64];
    char path[256];
} scratch_dir_t;

static const char* in_dir(scratch_dir_t* d, const char* name)
{
    if (d->dir[0] == '\0') {
        strcpy(d->dir, "/tmp/shoal_cli_XXXXXX");
        cr_assert_not_null(mkdtemp(d->dir), "mkdtemp: %s", strerror(errno));
    }
    snprintf(d->path, sizeof d->path, "%s/%s", d->dir, name);
    return d->path;
}

static void scratch_dir_remove(scratch_dir_t* d)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", d->dir);
    if (d->dir[0] != '\0') cr_expect_eq(system(command), 0);
}

Test(cli, outputs_refuse_links_and_directories_and_write_devices_through)
{
    scratch_dir_t d = {0};
    char link[256], dir[256], target[256];
    snprintf(target, sizeof target, "%s", in_dir(&d, "target.snap"));
    snprintf(link, sizeof link, "%s", in_dir(&d, "link"));
    snprintf(dir, sizeof dir, "%s", in_dir(&d, "dir"));
    cr_assert_eq(symlink(target, link), 0);
    cr_assert_eq(mkdir(dir, 0755), 0);
    const char* flags[] = {"--save", "--trace", "--record"};
    for (int i = 0; i < 3; ++i) {
        cli_output_t r;
        run_cli((const char*[]){"run", TINY, "--steps", "2", flags[i], link, NULL}, &r);
        cr_expect_eq(r.status, 1, "%s to a symlink: exit %d", flags[i], r.status);
        cr_expect(matches(r.err, "link: it is a symbolic link"), "%s: %s", flags[i], r.err);
        output_free(&r);
        struct stat st;
        cr_expect_eq(lstat(link, &st), 0);
        cr_expect(S_ISLNK(st.st_mode), "%s replaced the symlink", flags[i]);
        cr_expect_neq(access(target, F_OK), 0, "%s wrote through the symlink", flags[i]);
        run_cli((const char*[]){"run", TINY, "--steps", "2", flags[i], dir, NULL}, &r);
        cr_expect_eq(r.status, 1);
        cr_expect(matches(r.err, "dir: it is a directory"), "%s: %s", flags[i], r.err);
        output_free(&r);
        /* A device is written through and stays a device. */
        run_cli((const char*[]){"run", TINY, "--steps", "2", flags[i], "/dev/null", NULL}, &r);
        cr_expect_eq(r.status, 0, "%s /dev/null: %s", flags[i], r.err);
        output_free(&r);
        cr_expect_eq(stat("/dev/null", &st), 0);
        cr_expect(S_ISCHR(st.st_mode), "/dev/null is no longer a device");
    }
    /* shoal view -o: the same rule. */
    const char* rec = in_dir(&d, "r.rec");
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "2", "--record", rec, NULL}, &r);
    output_free(&r);
    run_cli((const char*[]){"view", d.path, "-o", link, NULL}, &r);
    cr_expect_eq(r.status, 1);
    cr_expect(matches(r.err, "symbolic link"), "%s", r.err);
    output_free(&r);
    scratch_dir_remove(&d);
}

Test(cli, a_save_removes_temporaries_of_dead_writers)
{
    scratch_dir_t d = {0};
    char snap[256], stale[300], alive[300];
    snprintf(snap, sizeof snap, "%s", in_dir(&d, "w.snap"));
    snprintf(stale, sizeof stale, "%s.tmp.%d", snap, 999999999); /* beyond pid_max */
    snprintf(alive, sizeof alive, "%s.tmp.%d", snap, (int)getpid());
    FILE* f = fopen(stale, "w");
    fputs("half a snapshot", f);
    fclose(f);
    f = fopen(alive, "w"); /* a live process's save: left alone */
    fclose(f);
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "2", "--save", snap, NULL}, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    cr_expect_neq(access(stale, F_OK), 0, "the dead writer's temporary is still there");
    cr_expect_eq(access(alive, F_OK), 0, "a live writer's temporary was removed");
    scratch_dir_remove(&d);
}

Test(cli, readers_refuse_devices_and_fifos_without_blocking, .timeout = 30)
{
    scratch_dir_t d = {0};
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s", in_dir(&d, "fifo"));
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const char* const* cases[] = {
        (const char*[]){"view", "/dev/zero", NULL},
        (const char*[]){"view", fifo, NULL},
        (const char*[]){"run", fifo, NULL},
        (const char*[]){"run", "/dev/zero", NULL},
        (const char*[]){"run", TINY, "--resume", fifo, NULL},
        (const char*[]){"run", TINY, "--resume", "/dev/zero", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        cli_output_t r;
        run_cli(cases[i], &r);
        cr_expect_eq(r.status, 1, "case %zu: exit %d", i, r.status);
        cr_expect(matches(r.err, "not a regular file: it is a (FIFO|character device)"), "case %zu: %s", i,
                  r.err);
        output_free(&r);
    }
    scratch_dir_remove(&d);
}

Test(cli, snapshots_of_the_same_run_are_identical)
{
    scratch_dir_t d = {0};
    char a[256], b[256];
    snprintf(a, sizeof a, "%s", in_dir(&d, "a.snap"));
    snprintf(b, sizeof b, "%s", in_dir(&d, "b.snap"));
    cli_output_t r;
    run_cli((const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/formation.json", "--steps", "5", "--save", a,
                            NULL},
            &r);
    output_free(&r);
    run_cli((const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/formation.json", "--steps", "5", "--save", b,
                            NULL},
            &r);
    output_free(&r);
    char* x = read_text(a);
    char* y = read_text(b);
    FILE* fa = fopen(a, "rb");
    fseek(fa, 0, SEEK_END);
    long size = ftell(fa);
    fclose(fa);
    cr_assert_gt(size, 64);
    cr_expect_eq(memcmp(x, y, (size_t)size), 0, "two runs saved different bytes");
    free(x);
    free(y);
    scratch_dir_remove(&d);
}

Test(cli, resume_checks_the_snapshot_against_the_scenario)
{
    scratch_dir_t d = {0};
    char snap[256];
    snprintf(snap, sizeof snap, "%s", in_dir(&d, "w.snap"));
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "3", "--save", snap, NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    /* Another dimension count: an error. */
    run_cli((const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/fish3d.json", "--resume", snap, "--steps",
                            "1", NULL},
            &r);
    cr_expect_eq(r.status, 1);
    cr_expect(
        matches(r.err, "cannot resume: .*w\\.snap holds a 2D world, the scenario .*fish3d\\.json is 3D"),
        "%s", r.err);
    output_free(&r);
    /* Another agent count: a warning, and the run goes on. */
    run_cli((const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/formation.json", "--resume", snap, "--steps",
                            "1", NULL},
            &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(matches(r.err, "warning: .*w\\.snap holds 200 agents, the scenario .*formation\\.json has"),
              "%s", r.err);
    output_free(&r);
    scratch_dir_remove(&d);
}

/* --steps near 2^63 with --trace: the trace buffer's size overflowed int64
 * (UBSan: signed integer overflow). The run would take for ever: it is
 * stopped after a second and its stderr read for a sanitizer report. */
Test(cli, huge_steps_with_trace_computes_no_overflow)
{
    scratch_dir_t d = {0};
    char trace[256], err_path[256];
    snprintf(trace, sizeof trace, "%s", in_dir(&d, "t.json"));
    snprintf(err_path, sizeof err_path, "%s", in_dir(&d, "stderr"));
    const char* argv[] = {SHOAL_CLI_PATH,        "run",     TINY,  "--steps",
                          "9223372036854775807", "--trace", trace, "-q",
                          "--threads",           "1",       NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, SHOAL_CLI_PATH, &actions, NULL, (char* const*)argv, environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    sleep(1);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    struct stat st;
    cr_assert_eq(stat(err_path, &st), 0);
    if (st.st_size > 0) { /* read_text refuses an empty file */
        char* text = read_text(err_path);
        cr_expect_null(strstr(text, "runtime error"), "%s", text);
        free(text);
    }
    scratch_dir_remove(&d);
}

/* shoal validate rimea --quick --json: every test of the guideline is
 * listed, run or with the reason it cannot run; each guideline test that
 * runs passes its criterion (the comparison of bottleneck flows with
 * measured crowds reports flows, judged by the command itself); the exit
 * status says whether all passed. */
Test(cli, validate_rimea_runs_the_guideline_tests, .timeout = 300)
{
    cli_output_t r;
    run_cli((const char*[]){"validate", "rimea", "--quick", "--json", "--threads", "2", NULL}, &r);
    cJSON* root = cJSON_Parse(r.out);
    cr_assert_not_null(root, "stdout is not JSON: [%s] stderr: %s", r.out, r.err);
    const cJSON* pass = cJSON_GetObjectItemCaseSensitive(root, "pass");
    cr_assert(cJSON_IsBool(pass));
    cr_expect_eq(r.status, cJSON_IsTrue(pass) ? 0 : 1, "exit %d", r.status);
    const cJSON* tests = cJSON_GetObjectItemCaseSensitive(root, "tests");
    cr_assert(cJSON_IsArray(tests));
    cr_expect_eq(cJSON_GetArraySize(tests), 16, "tests 1 to 15 and the bottleneck comparison");
    int ran = 0;
    const cJSON* e;
    cJSON_ArrayForEach(e, tests)
    {
        const cJSON* t = cJSON_GetObjectItemCaseSensitive(e, "test");
        const cJSON* did = cJSON_GetObjectItemCaseSensitive(e, "ran");
        cr_assert(cJSON_IsBool(did));
        if (!cJSON_IsTrue(did)) {
            const cJSON* why = cJSON_GetObjectItemCaseSensitive(e, "why_not");
            cr_expect(cJSON_IsString(why) && strlen(why->valuestring) > 10, "a test not run says why");
            continue;
        }
        ran++;
        if (cJSON_IsNumber(t))
            cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "pass")), "test %d failed: %s",
                      (int)t->valuedouble,
                      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "summary")));
    }
    cr_expect_eq(ran, 14,
                 "tests 1 to 7, 9 to 13, 15 and the bottleneck comparison run (8 and 14 need floors)");
    cJSON_Delete(root);
    output_free(&r);
}

#if SHOAL_WITH_PLOT
/* A PNG that cairo reads back at w x h px. */
static void expect_png(const char* dir, const char* name, int w, int h)
{
    char path[320];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cairo_surface_t* s = cairo_image_surface_create_from_png(path);
    cr_expect_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s: %s", path,
                 cairo_status_to_string(cairo_surface_status(s)));
    if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
        cr_expect_eq(cairo_image_surface_get_width(s), w, "%s: width %d", path,
                     cairo_image_surface_get_width(s));
        cr_expect_eq(cairo_image_surface_get_height(s), h, "%s: height %d", path,
                     cairo_image_surface_get_height(s));
    }
    cairo_surface_destroy(s);
}

/* shoal validate rimea --quick --plots DIR: DIR (and its parent) made, a
 * PNG per picture in it at its size, where they went said after the tests'
 * output (which --plots leaves as it was). */
Test(cli, validate_rimea_plots_what_the_tests_measured, .timeout = 300)
{
    scratch_dir_t d = {0};
    char dir[256];
    snprintf(dir, sizeof dir, "%s", in_dir(&d, "made/plots"));
    cli_output_t r;
    run_cli((const char*[]){"validate", "rimea", "--quick", "--threads", "2", "--plots", dir, NULL}, &r);
    /* 1 is a failed test (the bottleneck comparison), not a failed plot */
    cr_expect(r.status == 0 || r.status == 1, "exit %d: %s", r.status, r.err);
    cr_expect_str_empty(r.err);
    char line[400];
    snprintf(line, sizeof line,
             "\nplots in %s: fundamental.png, premovement.png, evacuation.png, stairs.png, bottleneck.png\n",
             dir);
    cr_expect(strstr(r.out, line) != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "not drawn") == NULL, "%s", r.out);
    expect_png(dir, "fundamental.png", 1200, 520);
    expect_png(dir, "premovement.png", 800, 500);
    expect_png(dir, "evacuation.png", 800, 500);
    expect_png(dir, "stairs.png", 800, 600);
    expect_png(dir, "bottleneck.png", 800, 500);
    output_free(&r);
    scratch_dir_remove(&d);
}

/* With --test, the pictures whose tests ran are drawn and the others are
 * named as not drawn; a --plots path that cannot be a directory (a file,
 * or below one) exits 1 naming it before any test runs. */
Test(cli, validate_rimea_plots_only_the_tests_run_and_refuse_a_file, .timeout = 60)
{
    scratch_dir_t d = {0};
    char dir[256], file[256], below[256];
    snprintf(dir, sizeof dir, "%s", in_dir(&d, "plots"));
    snprintf(file, sizeof file, "%s", in_dir(&d, "a_file"));
    snprintf(below, sizeof below, "%s", in_dir(&d, "a_file/plots"));
    cli_output_t r;
    run_cli((const char*[]){"validate", "rimea", "--test", "5", "--seeds", "1", "--threads", "2", "--plots",
                            dir, NULL},
            &r);
    cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "plots in ") != NULL && strstr(r.out, ": premovement.png\n") != NULL, "%s",
              r.out);
    cr_expect(strstr(r.out, "not drawn, as their tests did not run (--test): fundamental.png (test 4), "
                            "evacuation.png (tests 9 and 15), stairs.png (test 13), bottleneck.png "
                            "(bottleneck)\n") != NULL,
              "%s", r.out);
    expect_png(dir, "premovement.png", 800, 500);
    struct stat st;
    char path[320];
    snprintf(path, sizeof path, "%s/stairs.png", dir);
    cr_expect_neq(stat(path, &st), 0, "stairs.png drawn without test 13");
    output_free(&r);

    FILE* f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    const char* paths[2] = {file, below};
    for (int i = 0; i < 2; ++i) {
        run_cli((const char*[]){"validate", "rimea", "--quick", "--plots", paths[i], NULL}, &r);
        cr_expect_eq(r.status, 1, "--plots %s: exit %d", paths[i], r.status);
        cr_expect(strstr(r.err, "validate rimea: --plots") != NULL && strstr(r.err, paths[i]) != NULL,
                  "the error does not name %s: %s", paths[i], r.err);
        cr_expect_str_empty(r.out, "ran anyway: %s", r.out);
        output_free(&r);
    }
    scratch_dir_remove(&d);
}
#endif

/* shoal validate crowd --quick --json: every experiment reports, the exit
 * status says whether the stated requirements held, and the ones this
 * model meets (free walking within 1 %, no overlap past 1 % of a radius
 * under compression) are checked here. */
Test(cli, validate_crowd_reports_every_experiment, .timeout = 300)
{
    cli_output_t r;
    run_cli((const char*[]){"validate", "crowd", "--quick", "--json", "--threads", "2", NULL}, &r);
    cJSON* root = cJSON_Parse(r.out);
    cr_assert_not_null(root, "stdout is not JSON: [%s] stderr: %s", r.out, r.err);
    const cJSON* pass = cJSON_GetObjectItemCaseSensitive(root, "pass");
    cr_assert(cJSON_IsBool(pass));
    cr_expect_eq(r.status, cJSON_IsTrue(pass) ? 0 : 1, "exit %d", r.status);
    const cJSON* fw = cJSON_GetObjectItemCaseSensitive(root, "free_walk");
    cr_expect_lt(json_number(fw, "spread"), 0.01);
    const cJSON* fd = cJSON_GetObjectItemCaseSensitive(root, "fundamental");
    cr_assert(cJSON_IsArray(fd));
    cr_expect_eq(cJSON_GetArraySize(fd), 3);
    const cJSON* e;
    cJSON_ArrayForEach(e, fd)
    {
        double rho = json_number(e, "density"), v = json_number(e, "speed_random");
        cr_expect(rho > 0.3 && rho < 5.5, "density %g", rho);
        /* from both starts the speed falls with density, near Weidmann's */
        cr_expect_lt(fabs(json_number(e, "deviation_random")), 0.2, "random start at %g /m2: %g m/s", rho, v);
        cr_expect_lt(fabs(json_number(e, "deviation")), 0.2, "lattice at %g /m2: %g m/s", rho,
                     json_number(e, "speed"));
    }
    const cJSON* bn = cJSON_GetObjectItemCaseSensitive(root, "bottleneck");
    cr_expect(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(bn, "points")));
    const cJSON* cf = cJSON_GetObjectItemCaseSensitive(root, "counterflow");
    cr_expect_gt(json_number(cf, "lane_order_end"), json_number(cf, "lane_order_start"), "lanes form");
    const cJSON* cp = cJSON_GetObjectItemCaseSensitive(root, "compression");
    cr_expect_leq(json_number(cp, "overlap"), 0.01);
    cr_expect_leq(json_number(cp, "penetration"), 0.01);
    cJSON_Delete(root);
    output_free(&r);
}

/* --seed: one seed gives one result (any thread count); another seed is
 * another sample (shown on the counter-flow, whose mixed start draws from
 * the seed like the others; the compression now ends with no overlap at
 * all on most seeds, the same figures for any); a seed that is not a whole
 * number is refused. */
Test(cli, validate_crowd_seed_is_a_sample, .timeout = 300)
{
    cli_output_t a, b, c, bad;
    run_cli((const char*[]){"validate", "crowd", "--quick", "--json", "--seed", "3", "--threads", "1", NULL},
            &a);
    run_cli((const char*[]){"validate", "crowd", "--quick", "--json", "--seed=3", "--threads", "2", NULL},
            &b);
    run_cli((const char*[]){"validate", "crowd", "--quick", "--json", "--only", "counterflow", "--seed", "4",
                            "--threads", "2", NULL},
            &c);
    cr_expect_str_eq(a.out, b.out, "the same seed on 1 and 2 threads");
    cJSON* ja = cJSON_Parse(a.out);
    cJSON* jc = cJSON_Parse(c.out);
    cr_assert(ja && jc, "stdout is not JSON: [%s] [%s]", a.out, c.out);
    const cJSON* ca = cJSON_GetObjectItemCaseSensitive(ja, "counterflow");
    const cJSON* cc = cJSON_GetObjectItemCaseSensitive(jc, "counterflow");
    cr_assert(cJSON_IsObject(ca) && cJSON_IsObject(cc), "no counterflow: [%s] [%s]", a.out, c.out);
    cr_expect(!cJSON_Compare(ca, cc, 1), "seeds 3 and 4 should be different samples: %s", c.out);
    cJSON_Delete(ja);
    cJSON_Delete(jc);
    run_cli((const char*[]){"validate", "crowd", "--seed", "x", NULL}, &bad);
    cr_expect_eq(bad.status, 2, "exit %d", bad.status);
    cr_expect(strstr(bad.err, "--seed") != NULL, "%s", bad.err);
    output_free(&a);
    output_free(&b);
    output_free(&c);
    output_free(&bad);
}

/* --only: the experiments named and no others, in the same JSON form; the
 * exit status judges those; a name that is not an experiment, or --only
 * with --plots, is a usage error. */
Test(cli, validate_crowd_only_runs_those_named, .timeout = 300)
{
    cli_output_t r, bad, plots;
    run_cli((const char*[]){"validate", "crowd", "--quick", "--json", "--only", "counterflow,compression",
                            "--threads", "2", NULL},
            &r);
    cJSON* root = cJSON_Parse(r.out);
    cr_assert_not_null(root, "stdout is not JSON: [%s] stderr: %s", r.out, r.err);
    static const char* const keys[] = {"free_walk", "fundamental", "bottleneck", "counterflow",
                                       "compression"};
    for (int k = 0; k < 5; ++k)
        cr_expect_eq(cJSON_GetObjectItemCaseSensitive(root, keys[k]) != NULL, k >= 3, "%s", keys[k]);
    const cJSON* cf = cJSON_GetObjectItemCaseSensitive(root, "counterflow");
    cr_expect_eq(json_number(cf, "agents"), 160.0);
    const cJSON* pass = cJSON_GetObjectItemCaseSensitive(root, "pass");
    cr_assert(cJSON_IsBool(pass));
    cr_expect_eq(cJSON_IsTrue(pass), json_number(cf, "stuck") == 0.0,
                 "pass judges the counter-flow and compression");
    cr_expect_eq(r.status, cJSON_IsTrue(pass) ? 0 : 1, "exit %d", r.status);
    cJSON_Delete(root);
    run_cli((const char*[]){"validate", "crowd", "--only", "counterflow,lanes", NULL}, &bad);
    cr_expect_eq(bad.status, 2, "exit %d", bad.status);
    cr_expect(strstr(bad.err, "lanes") != NULL, "%s", bad.err);
    run_cli((const char*[]){"validate", "crowd", "--only", "counterflow", "--plots", "/tmp/unused", NULL},
            &plots);
    cr_expect_eq(plots.status, 2, "exit %d", plots.status);
    output_free(&r);
    output_free(&bad);
    output_free(&plots);
}

#if SHOAL_WITH_PLOT
/* shoal validate crowd --quick --plots DIR: DIR (and its parent) made, one
 * PNG per experiment in it. */
Test(cli, validate_crowd_plots_one_png_per_experiment, .timeout = 300)
{
    scratch_dir_t d = {0};
    char dir[256];
    snprintf(dir, sizeof dir, "%s", in_dir(&d, "made/plots"));
    cli_output_t r;
    run_cli((const char*[]){"validate", "crowd", "--quick", "--threads", "2", "--plots", dir, NULL}, &r);
    /* 1 is a failed requirement (the counter-flow), not a failed plot */
    cr_expect(r.status == 0 || r.status == 1, "exit %d: %s", r.status, r.err);
    cr_expect_str_empty(r.err);
    cr_expect(strstr(r.out, "plots in ") != NULL, "%s", r.out);
    static const char* const files[] = {"free_walk.png", "fundamental.png", "bottleneck.png",
                                        "counterflow.png", "compression.png"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        char path[320];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        FILE* f = fopen(path, "rb");
        cr_assert_not_null(f, "%s was not written", path);
        unsigned char head[8] = {0};
        size_t n = fread(head, 1, sizeof head, f);
        fclose(f);
        cr_expect(n == 8 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0, "%s is not a PNG", path);
    }
    output_free(&r);
    scratch_dir_remove(&d);
}

/* A --plots path that cannot be a directory: exit 1, the path named, and
 * nothing run (it is checked before the experiments). */
Test(cli, validate_crowd_plots_to_an_unwritable_path_fails_naming_it)
{
    scratch_dir_t d = {0};
    char file[256], below[256];
    snprintf(file, sizeof file, "%s", in_dir(&d, "a_file"));
    snprintf(below, sizeof below, "%s", in_dir(&d, "a_file/plots"));
    FILE* f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    const char* paths[2] = {below, file};
    for (int i = 0; i < 2; ++i) {
        cli_output_t r;
        run_cli((const char*[]){"validate", "crowd", "--quick", "--plots", paths[i], NULL}, &r);
        cr_expect_eq(r.status, 1, "--plots %s: exit %d", paths[i], r.status);
        cr_expect(strstr(r.err, paths[i]) != NULL, "the error does not name %s: %s", paths[i], r.err);
        cr_expect_str_empty(r.out, "ran anyway: %s", r.out);
        output_free(&r);
    }
    scratch_dir_remove(&d);
}
#else
/* A build without cairo has every command but `plot`: `plot` (any kind,
 * --help too), `validate crowd --plots` and `validate rimea --plots` say
 * so and how to get it, exit 2, and run nothing; validate without --plots
 * still runs. */
Test(cli, plot_says_this_build_has_none_and_how_to_get_it)
{
    static const char* const lines[][8] = {
        {"plot", NULL},
        {"plot", "--help", NULL},
        {"plot", "scaling", "sweep.jsonl", "-o", "scaling.png", NULL},
        {"plot", "run", "x.rec", "-o", "x.png", NULL},
        {"validate", "crowd", "--quick", "--plots", "/nonexistent/plots", NULL},
        {"validate", "rimea", "--quick", "--plots", "/nonexistent/plots", NULL},
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i) {
        cli_output_t r;
        run_cli(lines[i], &r);
        cr_expect_eq(r.status, 2, "%s %s: exit %d", lines[i][0], lines[i][1] ? lines[i][1] : "", r.status);
        cr_expect_str_empty(r.out, "ran anyway: %s", r.out);
        cr_expect(strstr(r.err, "this build of shoal has no plot support") != NULL, "%s", r.err);
        cr_expect(strstr(r.err, "libcairo2-dev") != NULL && strstr(r.err, "-DSHOAL_WITH_PLOT=ON") != NULL,
                  "%s", r.err);
        output_free(&r);
    }
    cli_output_t r;
    run_cli((const char*[]){"--help", NULL}, &r);
    cr_expect(strstr(r.out, "plot         not in this build") != NULL, "%s", r.out);
    output_free(&r);
}
#endif /* SHOAL_WITH_PLOT */

/* A likely typo of a command, a kind, a suite, an experiment, a benchmark,
 * an option or a shipped scenario's name gets the nearest name. */
Test(cli, typos_get_the_nearest_name)
{
    struct {
        const char* args[5];
        const char* hint;
        int status;
    } cases[] = {
        {{"ensembl", NULL}, "did you mean 'ensemble'?", 2},
        {{"help", "vew", NULL}, "did you mean 'view'?", 2},
        {{"plot", "rn", NULL}, "did you mean 'run'?", 2},
        {{"bench", "flok", NULL}, "did you mean 'flock'?", 2},
        {{"validate", "crwd", NULL}, "did you mean 'crowd'?", 2},
        {{"experiment", "planer", NULL}, "did you mean 'planner'?", 2},
        {{"run", TINY, "--thread", "2", NULL}, "did you mean '--threads'?", 2},
        {{"dseek", "--rmni", "2", NULL}, "did you mean '--rmin'?", 2},
        {{"run", "defualt.json", NULL}, "did you mean 'default.json'?", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        /* a build without cairo says so for any plot kind (test_plot.c) */
        if (!SHOAL_WITH_PLOT && strcmp(cases[i].args[0], "plot") == 0) continue;
        cli_output_t r;
        run_cli(cases[i].args, &r);
        cr_expect_eq(r.status, cases[i].status, "case %zu: status %d", i, r.status);
        cr_expect_not_null(strstr(r.err, cases[i].hint), "case %zu: want '%s' in: %s", i, cases[i].hint,
                           r.err);
        output_free(&r);
    }
    /* a word far from every name gets none */
    cli_output_t r;
    run_cli((const char*[]){"bench", "histogram", NULL}, &r);
    cr_expect_null(strstr(r.err, "did you mean"), "%s", r.err);
    output_free(&r);
}
