/* `shoal ensemble`: each run is `shoal run --seed S` with the settings
 * applied; rows in run order whatever the worker count; the summary's
 * statistics over those rows; bad plans refused. (Under mpirun:
 * tests/ensemble_mpi_test.sh.) */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_run.h"
#include "io/file_read.h"

#define TINY SHOAL_SOURCE_DIR "/scenarios/tiny.json"
#define DEFAULT SHOAL_SOURCE_DIR "/scenarios/default.json"

static char* slurp(const char* path)
{
    void* text = NULL;
    size_t size = 0;
    char why[256];
    cr_assert_eq(file_read_all(path, FILE_LIMIT_SCENARIO, &text, &size, why, sizeof why), FILE_READ_OK,
                 "%s: %s", path, why);
    return (char*)text;
}

static cJSON* line_at(const char* text, int k)
{
    const char* p = text;
    for (int i = 0; i < k; ++i) {
        p = strchr(p, '\n');
        cr_assert_not_null(p, "line %d", k);
        ++p;
    }
    const char* end = strchr(p, '\n');
    cJSON* row = cJSON_ParseWithLength(p, end ? (size_t)(end - p) : strlen(p));
    cr_assert_not_null(row, "line %d is not JSON", k);
    return row;
}

static int line_count(const char* text)
{
    int n = 0;
    for (const char* p = text; *p; ++p) n += *p == '\n';
    return n;
}

/* 50 seeds of the default scenario (20 steps each) on 2 workers: every
 * row's state_hash and figures are those of `shoal run --seed S`, and the
 * rows are those of one worker, in the same order. */
Test(ensemble, runs_are_shoal_run_whatever_the_workers, .timeout = 240)
{
    char tmpl[] = "/tmp/shoal_ens_XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    char one[512], two[512];
    snprintf(one, sizeof one, "%s/one.jsonl", tmpl);
    snprintf(two, sizeof two, "%s/two.jsonl", tmpl);
    cJSON* s2 = run_json((const char*[]){"ensemble", DEFAULT, "--seeds", "1-50", "--steps", "20", "--workers",
                                         "2", "--out", two, "--json", NULL});
    cJSON* s1 = run_json((const char*[]){"ensemble", DEFAULT, "--seeds", "1-50", "--steps", "20", "--workers",
                                         "1", "--out", one, "--json", NULL});
    cr_assert_eq(cJSON_GetObjectItem(s2, "workers")->valueint, 2);
    cr_assert_eq(cJSON_GetObjectItem(s1, "workers")->valueint, 1);
    cr_assert_eq(cJSON_GetObjectItem(s2, "runs")->valueint, 50);
    char* a = slurp(one);
    char* b = slurp(two);
    cr_assert_str_eq(a, b, "the rows do not depend on the worker count");
    cr_assert_eq(line_count(b), 50);
    for (int k = 0; k < 50; k += 7) {
        cJSON* row = line_at(b, k);
        char seed[16];
        snprintf(seed, sizeof seed, "%d", k + 1);
        cr_assert_str_eq(cJSON_GetObjectItem(row, "seed")->valuestring, seed);
        cr_assert_eq(cJSON_GetObjectItem(row, "run")->valueint, k);
        cJSON* run =
            run_json((const char*[]){"run", DEFAULT, "--seed", seed, "--steps", "20", "--json", NULL});
        cr_assert_str_eq(cJSON_GetObjectItem(row, "state_hash")->valuestring,
                         cJSON_GetObjectItem(run, "state_hash")->valuestring, "seed %s", seed);
        cJSON* crowd = cJSON_GetObjectItem(run, "crowd");
        cr_assert_eq(cJSON_GetObjectItem(row, "crowd.closest_pair")->valuedouble,
                     cJSON_GetObjectItem(crowd, "closest_pair")->valuedouble);
        cr_assert_eq(cJSON_GetObjectItem(row, "crowd.overlapping")->valuedouble,
                     cJSON_GetObjectItem(crowd, "overlapping")->valuedouble);
        cr_assert_null(cJSON_GetObjectItem(row, "seconds"), "no wall time in a row");
        cJSON_Delete(run);
        cJSON_Delete(row);
    }
    /* the hashes differ from seed to seed */
    cJSON* r0 = line_at(b, 0);
    cJSON* r1 = line_at(b, 1);
    cr_assert_str_neq(cJSON_GetObjectItem(r0, "state_hash")->valuestring,
                      cJSON_GetObjectItem(r1, "state_hash")->valuestring);
    cJSON_Delete(r0);
    cJSON_Delete(r1);
    free(a);
    free(b);
    remove(one);
    remove(two);
    rmdir(tmpl);
    cJSON_Delete(s1);
    cJSON_Delete(s2);
}

/* A grid of two settings: run k is point k / seeds, the first setting
 * slowest; the settings reach the runs (a point's run is `shoal run` of
 * the file with them); the summary is the statistics of the rows. */
Test(ensemble, a_grid_of_settings_and_its_summary, .timeout = 120)
{
    char tmpl[] = "/tmp/shoal_ens_XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    char out[512], csv[512];
    snprintf(out, sizeof out, "%s/rows.jsonl", tmpl);
    snprintf(csv, sizeof csv, "%s/rows.csv", tmpl);
    cJSON* sum = run_json((const char*[]){"ensemble", DEFAULT, "--seeds", "3-6", "--steps", "30", "--set",
                                          "crowd.time_gap=0.6,1.4", "--set", "world.reorder_interval=0,5,16",
                                          "--out", out, "--csv", csv, "--json", NULL});
    cr_assert_eq(cJSON_GetObjectItem(sum, "runs")->valueint, 24);
    cJSON* points = cJSON_GetObjectItem(sum, "points");
    cr_assert_eq(cJSON_GetArraySize(points), 6);
    char* rows = slurp(out);
    cr_assert_eq(line_count(rows), 24);
    /* run 13: point 3 (time gap 1.4, reorder 0), seed 4 */
    cJSON* r13 = line_at(rows, 13);
    cr_assert_eq(cJSON_GetObjectItem(r13, "point")->valueint, 3);
    cr_assert_str_eq(cJSON_GetObjectItem(r13, "seed")->valuestring, "4");
    cr_assert_float_eq(cJSON_GetObjectItem(r13, "crowd.time_gap")->valuedouble, 1.4, 1e-12);
    cr_assert_eq(cJSON_GetObjectItem(r13, "world.reorder_interval")->valueint, 0);
    /* the reorder interval changes no result (the hash is the same for any
     * storage order), the time gap does */
    cJSON* r17 = line_at(rows, 17); /* point 4: 1.4, reorder 5, seed 4 */
    cJSON* r1 = line_at(rows, 1);   /* point 0: 0.6, reorder 0, seed 4 */
    cr_assert_str_eq(cJSON_GetObjectItem(r13, "state_hash")->valuestring,
                     cJSON_GetObjectItem(r17, "state_hash")->valuestring);
    cr_assert_str_neq(cJSON_GetObjectItem(r13, "state_hash")->valuestring,
                      cJSON_GetObjectItem(r1, "state_hash")->valuestring);
    /* point 3's closest pair: mean, p95 (linear between order statistics)
     * and min from its four rows */
    double v[4];
    for (int s = 0; s < 4; ++s) {
        cJSON* row = line_at(rows, 12 + s);
        v[s] = cJSON_GetObjectItem(row, "crowd.closest_pair")->valuedouble;
        cJSON_Delete(row);
    }
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j)
            if (v[j] < v[i]) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
            }
    cJSON* fig = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(points, 3), "figures"),
                                     "crowd.closest_pair");
    cr_assert_not_null(fig);
    cr_assert_float_eq(cJSON_GetObjectItem(fig, "mean")->valuedouble, (v[0] + v[1] + v[2] + v[3]) / 4, 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItem(fig, "p95")->valuedouble, v[2] + 0.85 * (v[3] - v[2]), 1e-12);
    cr_assert_float_eq(cJSON_GetObjectItem(fig, "min")->valuedouble, v[0], 1e-12);
    cJSON* ci = cJSON_GetObjectItem(fig, "ci95");
    double lo = cJSON_GetArrayItem(ci, 0)->valuedouble, hi = cJSON_GetArrayItem(ci, 1)->valuedouble;
    cr_assert(lo <= cJSON_GetObjectItem(fig, "mean")->valuedouble && hi >= lo);
    /* the CSV: a header and a row a run */
    char* table = slurp(csv);
    cr_assert_eq(line_count(table), 25);
    cr_assert(strncmp(table, "run,point,seed,crowd.time_gap,world.reorder_interval,state_hash,", 63) == 0,
              "%.80s", table);
    free(table);
    free(rows);
    cJSON_Delete(r13);
    cJSON_Delete(r17);
    cJSON_Delete(r1);
    cJSON_Delete(sum);
    remove(out);
    remove(csv);
    rmdir(tmpl);
}

static void expect_refused(const char* const* args, int status, const char* says)
{
    cli_output_t r;
    run_cli(args, &r);
    cr_assert_eq(r.status, status, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, says), "stderr lacks '%s': %s", says, r.err);
    cr_assert_eq(r.out[0], '\0', "nothing on stdout: %s", r.out);
    output_free(&r);
}

Test(ensemble, bad_plans_are_refused, .timeout = 60)
{
    expect_refused((const char*[]){"ensemble", TINY, "--seeds", "5-3", NULL}, 2,
                   "expected seeds such as 1-50");
    expect_refused((const char*[]){"ensemble", TINY, "--seeds", "1-x", NULL}, 2, "expected seeds");
    expect_refused((const char*[]){"ensemble", TINY, "--set", "crowd.time_gap", NULL}, 2,
                   "expected KEY=V1,V2");
    expect_refused((const char*[]){"ensemble", TINY, "--set", "crowd.time_gap=1,,2", NULL}, 2,
                   "an empty value");
    /* a value the scenario's loader refuses: the run says which, and why */
    expect_refused(
        (const char*[]){"ensemble", TINY, "--seeds", "1-2", "--steps", "5", "--set", "count=10,-4", NULL}, 1,
        "run 2 (seed 1, count=-4)");
    expect_refused((const char*[]){"ensemble", SHOAL_SOURCE_DIR "/scenarios/nope.json", NULL}, 1,
                   "nope.json");
}
