/* `shoal bench scaling` as a script sees it: tiny sweeps of each scene in
 * every output format, one state_hash across thread counts, the
 * oversubscription mark, and clear errors for bad thread lists. The
 * figures themselves are timings, never checked against a clock here. */
#define _XOPEN_SOURCE 700

#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"

TestSuite(bench_scaling, .timeout = 120);

/* stdout as JSON lines: exactly `want` objects, one a line. */
static void json_lines(const char* out, cJSON** lines, int want)
{
    const char* p = out;
    int n = 0;
    while (*p) {
        const char* eol = strchr(p, '\n');
        cr_assert_not_null(eol, "the last line has no newline: [%s]", p);
        cr_assert_lt(n, want, "more than %d lines: [%s]", want, out);
        char* line = strndup(p, (size_t)(eol - p));
        cr_assert_not_null(line);
        const char* end = NULL;
        lines[n] = cJSON_ParseWithOpts(line, &end, 1);
        cr_assert(cJSON_IsObject(lines[n]), "line %d is not one JSON object: [%s]", n + 1, line);
        free(line);
        ++n;
        p = eol + 1;
    }
    cr_assert_eq(n, want, "%d lines, expected %d: [%s]", n, want, out);
}

static const cJSON* system_named(const cJSON* line, const char* name)
{
    const cJSON* systems = cJSON_GetObjectItemCaseSensitive(line, "systems");
    cr_assert(cJSON_IsArray(systems));
    const cJSON* s;
    cJSON_ArrayForEach(s, systems)
    {
        const cJSON* n = cJSON_GetObjectItemCaseSensitive(s, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name)) return s;
    }
    return NULL;
}

Test(bench_scaling, a_tiny_flock_sweep_is_json_lines_with_one_hash)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "--threads", "1,2", "--agents", "2000", "--steps", "3",
                            "--rounds", "1", "--json", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_empty(r.err);
    cJSON* lines[2];
    json_lines(r.out, lines, 2);
    for (int k = 0; k < 2; ++k) {
        cr_expect_str_eq(json_string(lines[k], "bench"), "scaling");
        cr_expect_str_eq(json_string(lines[k], "scene"), "flock");
        cr_expect_eq(json_number(lines[k], "threads"), k + 1);
        cr_expect_eq(json_number(lines[k], "threads_used"), k + 1);
        cr_expect_eq(json_number(lines[k], "baseline_threads"), 1);
        cr_expect_eq(json_number(lines[k], "agents"), 2000);
        cr_expect_eq(json_number(lines[k], "steps"), 3);
        cr_expect_eq(json_number(lines[k], "rounds"), 1);
        cr_expect_str_eq(json_string(lines[k], "rate_unit"), "agent_steps_per_s");
        double best = json_number(lines[k], "best_rate");
        cr_expect_gt(best, 0.0);
        /* one round: the median is that round */
        cr_expect_eq(json_number(lines[k], "median_rate"), best);
        cr_expect_gt(json_number(lines[k], "ms_per_step"), 0.0);
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lines[k], "hashes_agree")));
        cr_expect(matches(json_string(lines[k], "state_hash"), "^[0-9a-f]{16}$"));
        const cJSON* neighbors = system_named(lines[k], "neighbors");
        cr_assert_not_null(neighbors, "no neighbors system at %d threads", k + 1);
        cr_expect_gt(json_number(neighbors, "ms_per_step"), 0.0);
        cr_expect_gt(json_number(neighbors, "speedup"), 0.0);
    }
    /* the same state on 1 and 2 threads; speed-ups are over the first count */
    cr_expect_str_eq(json_string(lines[0], "state_hash"), json_string(lines[1], "state_hash"));
    cr_expect_eq(json_number(lines[0], "speedup"), 1.0);
    cr_expect_float_eq(json_number(lines[1], "speedup"),
                       json_number(lines[1], "best_rate") / json_number(lines[0], "best_rate"), 1e-9);
    cr_expect_eq(json_number(system_named(lines[0], "neighbors"), "speedup"), 1.0);
    for (int k = 0; k < 2; ++k) cJSON_Delete(lines[k]);
    output_free(&r);
}

/* Split one CSV line (up to its newline) into at most `max` fields, each
 * a copy in field[i] (empty fields stay empty). Returns the count. */
static int csv_fields(const char* line, char field[][40], int max)
{
    int n = 0;
    const char* p = line;
    for (;;) {
        size_t len = strcspn(p, ",\n");
        cr_assert_lt(n, max, "too many fields: %s", line);
        cr_assert_lt(len, 40);
        memcpy(field[n], p, len);
        field[n++][len] = '\0';
        if (p[len] != ',') return n;
        p += len + 1;
    }
}

/* The crowd's grid as CSV: the header, a "step" row per thread count and a
 * row per system, every round's hash the same. */
Test(bench_scaling, crowd_as_csv_has_a_row_per_count_and_system)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "crowd", "--threads", "2,1", "--agents", "300", "--steps",
                            "3", "--warmup", "1", "--rounds", "2", "--csv", "-", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    const char* header = "scene,agents,steps,warmup,rounds,threads,threads_used,oversubscribed,system,stage,"
                         "ms_per_step,speedup,rate_unit,best_rate,median_rate,state_hash,hashes_agree\n";
    cr_assert_eq(strncmp(r.out, header, strlen(header)), 0, "header: [%s]", r.out);
    int steps = 0, orca = 0;
    char hash[2][40] = {"", ""};
    for (const char* line = r.out + strlen(header); *line; line = strchr(line, '\n') + 1) {
        char f[17][40];
        cr_assert_eq(csv_fields(line, f, 17), 17, "row: %s", line);
        cr_expect_str_eq(f[0], "crowd");
        cr_expect(!strcmp(f[1], "300") && !strcmp(f[2], "3") && !strcmp(f[3], "1") && !strcmp(f[4], "2"),
                  "%s", line);
        int threads = atoi(f[5]);
        cr_assert(threads == 1 || threads == 2, "%s", line);
        cr_expect_str_eq(f[12], "agent_steps_per_s");
        cr_expect(matches(f[15], "^[0-9a-f]{16}$"), "%s", line);
        cr_expect_str_eq(f[16], "1");
        cr_expect_geq(atof(f[10]), 0.0, "ms_per_step: %s", line);
        if (!strcmp(f[8], "step")) {
            cr_expect_str_eq(f[9], "all");
            cr_expect_gt(atof(f[10]), 0.0, "ms_per_step: %s", line);
            cr_expect_gt(atof(f[13]), 0.0, "best_rate: %s", line);
            cr_expect_gt(atof(f[14]), 0.0, "median_rate: %s", line);
            /* the base is the first count listed, 2 */
            if (threads == 2) cr_expect_str_eq(f[11], "1");
            snprintf(hash[threads - 1], sizeof hash[0], "%s", f[15]);
            steps++;
        } else {
            cr_expect(f[13][0] == '\0' && f[14][0] == '\0', "a system row has no rates: %s", line);
        }
        orca += !strcmp(f[8], "orca");
    }
    cr_expect_eq(steps, 2);
    cr_expect_eq(orca, 2, "one orca row per thread count");
    cr_expect_str_eq(hash[0], hash[1]);
    output_free(&r);
}

/* --csv FILE writes the same rows to a file and leaves the text table (or
 * --json) on stdout. */
Test(bench_scaling, csv_to_a_file_beside_the_table)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/shoal_scaling_%d.csv", (int)getpid());
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "crowd", "--threads", "1", "--agents", "200", "--steps", "2",
                            "--warmup", "0", "--rounds", "1", "--json", "--csv", path, NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_eq(r.out[0], '{', "stdout keeps the JSON lines: %s", r.out);
    FILE* f = fopen(path, "r");
    cr_assert_not_null(f, "no %s", path);
    char line[512];
    int rows = 0;
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_expect_eq(strncmp(line, "scene,agents,steps,", 19), 0, "header: %s", line);
    while (fgets(line, sizeof line, f)) rows += strncmp(line, "crowd,200,2,0,1,1,", 18) == 0;
    fclose(f);
    remove(path);
    cr_expect_gt(rows, 1, "a step row and system rows");
    output_free(&r);
}

/* The planner's rate is its real-time factor; the text report says the
 * hashes agree and the speed-up's base. */
Test(bench_scaling, planner_reports_the_realtime_factor)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "planner", "--threads", "1,2", "--agents", "100", "--steps",
                            "30", "--rounds", "1", "--json", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cJSON* lines[2];
    json_lines(r.out, lines, 2);
    cr_expect_str_eq(json_string(lines[0], "rate_unit"), "realtime_factor");
    cr_expect_eq(json_number(lines[0], "warmup"), 0);
    cr_expect_str_eq(json_string(lines[0], "state_hash"), json_string(lines[1], "state_hash"));
    cr_expect_not_null(system_named(lines[1], "planner"));
    for (int k = 0; k < 2; ++k) cJSON_Delete(lines[k]);
    output_free(&r);
    run_cli((const char*[]){"bench", "scaling", "planner", "--threads", "1,2", "--agents", "100", "--steps",
                            "30", "--rounds", "1", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "scaling planner: 100 agents, 30 steps") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "real-time factor") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "state_hash: the same in all 2 runs") != NULL, "%s", r.out);
    cr_expect(matches(r.out, "\n +2 +[0-9.e+]+ +[0-9.e+]+ +[0-9.]+x +[0-9a-f]{16}\n"), "%s", r.out);
    output_free(&r);
}

/* More threads than the machine has run, and are marked. */
Test(bench_scaling, oversubscribed_counts_are_marked)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "--threads", "1", "--agents", "200", "--steps", "1",
                            "--rounds", "1", "--json", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cJSON* line;
    json_lines(r.out, &line, 1);
    int pus = (int)json_number(line, "hardware_threads");
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(line, "oversubscribed")));
    cJSON_Delete(line);
    output_free(&r);
    cr_assert_gt(pus, 0, "hwloc found no hardware threads");
    char over[16];
    snprintf(over, sizeof over, "1,%d", 2 * pus);
    run_cli((const char*[]){"bench", "scaling", "--threads", over, "--agents", "200", "--steps", "1",
                            "--rounds", "1", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    char note[96];
    snprintf(note, sizeof note, "oversubscribed: %d threads on %d hardware threads", 2 * pus, pus);
    cr_expect(strstr(r.out, note) != NULL, "no '%s' in:\n%s", note, r.out);
    output_free(&r);
}

Test(bench_scaling, bad_thread_lists_are_usage_errors)
{
    static const char* const cases[][2] = {
        {"0", "item 1, '0', is not a thread count in 1..1024"},
        {"1,,2", "item 2 is empty"},
        {"x", "item 1, 'x', is not a thread count"},
        {"", "got an empty value"},
        {"1,2,", "item 3 is empty"},
        {"2,-1", "item 2, '-1', is not a thread count"},
        {"1025", "not a thread count in 1..1024"},
        {"1,2,1", "1 is listed twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cli_output_t r;
        run_cli((const char*[]){"bench", "scaling", "--threads", cases[i][0], NULL}, &r);
        cr_expect_eq(r.status, 2, "--threads '%s': exit %d", cases[i][0], r.status);
        cr_expect_str_empty(r.out, "--threads '%s' ran: %s", cases[i][0], r.out);
        cr_expect(strstr(r.err, "bench scaling: --threads") != NULL, "%s", r.err);
        cr_expect(strstr(r.err, cases[i][1]) != NULL, "--threads '%s': no '%s' in: %s", cases[i][0],
                  cases[i][1], r.err);
        output_free(&r);
    }
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "swarm", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "unknown scene 'swarm' (expected flock, flock3d, crowd or planner)") != NULL,
              "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"bench", "scaling", "--json", "--csv", "-", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "one format on stdout at a time") != NULL, "%s", r.err);
    output_free(&r);
    /* --csv takes a file, as it does in every other command */
    run_cli((const char*[]){"bench", "scaling", "--csv", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "option '--csv' needs a value (FILE)") != NULL, "%s", r.err);
    output_free(&r);
}

Test(bench_scaling, the_3d_flock_sweeps_with_one_hash)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "flock3d", "--threads", "1,3", "--agents", "6000", "--steps",
                            "2", "--rounds", "1", "--json", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cJSON* lines[2];
    json_lines(r.out, lines, 2);
    for (int k = 0; k < 2; ++k) {
        cr_expect_str_eq(json_string(lines[k], "scene"), "flock3d");
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lines[k], "hashes_agree")));
    }
    /* Not the 2D flock's world: another hash for the same agents and steps. */
    cli_output_t r2;
    run_cli((const char*[]){"bench", "scaling", "flock", "--threads", "1", "--agents", "6000", "--steps", "2",
                            "--rounds", "1", "--json", NULL},
            &r2);
    cr_assert_eq(r2.status, 0, "exit %d: %s", r2.status, r2.err);
    cJSON* flat[1];
    json_lines(r2.out, flat, 1);
    cr_expect_str_neq(json_string(flat[0], "state_hash"), json_string(lines[0], "state_hash"));
    cJSON_Delete(flat[0]);
    for (int k = 0; k < 2; ++k) cJSON_Delete(lines[k]);
    output_free(&r2);
    output_free(&r);
}

/* --ceiling: beside each count, T worlds of agents/T stepped at once. Its
 * figures are what the command says they are, computed from the rates it
 * prints; without the flag there are none. */
Test(bench_scaling, the_ceiling_adds_its_figures)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "--threads", "1,2", "--agents", "2000", "--steps", "3",
                            "--rounds", "2", "--ceiling", "--json", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect_str_empty(r.err);
    cJSON* lines[2];
    json_lines(r.out, lines, 2);
    double base = json_number(lines[0], "best_rate");
    for (int k = 0; k < 2; ++k) {
        const cJSON* rates = cJSON_GetObjectItemCaseSensitive(lines[k], "ceiling_rates");
        cr_assert(cJSON_IsArray(rates) && cJSON_GetArraySize(rates) == 2, "ceiling_rates at %d threads",
                  k + 1);
        double a = cJSON_GetArrayItem(rates, 0)->valuedouble, b = cJSON_GetArrayItem(rates, 1)->valuedouble;
        cr_expect(a > 0.0 && b > 0.0, "ceiling rates %g %g", a, b);
        double best = json_number(lines[k], "ceiling_rate");
        cr_expect_eq(best, a > b ? a : b, "the ceiling is the best round's");
        cr_expect_float_eq(json_number(lines[k], "ceiling_median_rate"), 0.5 * (a + b), 1e-9 * best);
        cr_expect_float_eq(json_number(lines[k], "ceiling_speedup"), best / base, 1e-12);
        cr_expect_float_eq(json_number(lines[k], "efficiency"), json_number(lines[k], "best_rate") / best,
                           1e-12);
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lines[k], "hashes_agree")));
    }
    /* one world on one thread is the world stepped alone */
    cr_expect_eq(json_number(lines[0], "ceiling_per_world"), 1.0);
    double share = json_number(lines[1], "ceiling_per_world");
    cr_expect(share > 0.0 && share < 10.0, "per world at 2 threads: %g", share);
    for (int k = 0; k < 2; ++k) cJSON_Delete(lines[k]);
    output_free(&r);

    /* CSV: four more columns, filled on the step rows only */
    run_cli((const char*[]){"bench", "scaling", "crowd", "--threads", "1,2", "--agents", "300", "--steps",
                            "2", "--warmup", "1", "--rounds", "1", "--ceiling", "--csv", "-", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    const char* header = "scene,agents,steps,warmup,rounds,threads,threads_used,oversubscribed,system,stage,"
                         "ms_per_step,speedup,rate_unit,best_rate,median_rate,state_hash,hashes_agree,"
                         "ceiling_rate,ceiling_speedup,efficiency,ceiling_per_world\n";
    cr_assert_eq(strncmp(r.out, header, strlen(header)), 0, "header: [%s]", r.out);
    int steps = 0;
    for (const char* line = r.out + strlen(header); *line; line = strchr(line, '\n') + 1) {
        char f[21][40];
        cr_assert_eq(csv_fields(line, f, 21), 21, "row: %s", line);
        if (!strcmp(f[8], "step")) {
            steps++;
            cr_expect_gt(atof(f[17]), 0.0, "ceiling_rate: %s", line);
            cr_expect_float_eq(atof(f[19]), atof(f[13]) / atof(f[17]), 1e-4, "efficiency: %s", line);
            if (!strcmp(f[5], "1")) cr_expect_str_eq(f[20], "1", "%s", line);
        } else {
            for (int i = 17; i < 21; ++i)
                cr_expect_str_empty(f[i], "column %d of a system row: %s", i + 1, line);
        }
    }
    cr_expect_eq(steps, 2);
    output_free(&r);

    /* the text report's columns, and none without --ceiling */
    run_cli((const char*[]){"bench", "scaling", "planner", "--threads", "1,2", "--agents", "40", "--steps",
                            "10", "--rounds", "1", "--ceiling", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(matches(r.out, "\n +2 +[0-9.e+]+ +[0-9.e+]+ +[0-9.]+x +[0-9.e+]+ +[0-9.]+x +[0-9]+% +[0-9]+% +"
                             "[0-9a-f]{16}\n"),
              "%s", r.out);
    cr_expect(strstr(r.out, "ceiling: T worlds of agents/T each") != NULL, "%s", r.out);
    output_free(&r);
    run_cli((const char*[]){"bench", "scaling", "--threads", "1", "--agents", "200", "--steps", "1",
                            "--rounds", "1", "--json", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "ceiling") == NULL, "%s", r.out);
    output_free(&r);
}

/* Too few agents to give every thread a world of two: a usage error before
 * anything runs. */
Test(bench_scaling, a_ceiling_needs_two_agents_a_world)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "scaling", "--threads", "1,2", "--agents", "3", "--ceiling", NULL}, &r);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect_str_empty(r.out);
    cr_expect(strstr(r.err, "--ceiling at 2 threads needs 4 agents or more (2 a world), got --agents 3") !=
                  NULL,
              "%s", r.err);
    output_free(&r);
}
