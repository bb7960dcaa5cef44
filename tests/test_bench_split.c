/* `shoal bench split` as a script sees it: the scene's state as any run
 * of it ends, figures that add up, the planner's chunked passes split for
 * 16 workers, and clear errors. Timings are never checked against a clock. */
#define _XOPEN_SOURCE 700

#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"

TestSuite(bench_split, .timeout = 120);

static cJSON* one_object(const char* const* args, cli_output_t* r)
{
    run_cli(args, r);
    cr_assert_eq(r->status, 0, "exit %d: %s", r->status, r->err);
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithOpts(r->out, &end, 0);
    cr_assert(cJSON_IsObject(root), "not one JSON object: [%s]", r->out);
    return root;
}

/* What every split's figures must satisfy, whatever the clock said. */
static void check_sums(const cJSON* root, int threads)
{
    cr_expect_str_eq(json_string(root, "bench"), "split");
    cr_expect_eq(json_number(root, "threads"), threads);
    cr_expect_eq(json_number(root, "dropped_calls"), 0);
    double loops_ms = 0.0, span_ms = 0.0, rounds = 0.0;
    int n = 0;
    const cJSON* l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(root, "loops"))
    {
        double ms = json_number(l, "ms_per_step"), span = json_number(l, "span_ms_per_step");
        cr_expect_leq(span, ms * (1.0 + 1e-9) + 1e-12, "%s loop %g: makespan over the blocks' sum",
                      json_string(l, "system"), json_number(l, "loop"));
        cr_expect_geq(span * threads, ms * (1.0 - 1e-9), "%s: under an even share", json_string(l, "system"));
        cr_expect_geq(json_number(l, "blocks_per_call"), 1.0);
        double median = json_number(l, "median_speedup");
        cr_expect(median >= 1.0 - 1e-6 && median <= threads * (1.0 + 1e-6), "median speed-up %g", median);
        double share = json_number(l, "busiest_share");
        cr_expect(share >= 1.0 / threads - 1e-9 && share <= 1.0 + 1e-9, "busiest share %g", share);
        loops_ms += ms;
        span_ms += span;
        rounds += json_number(l, "calls_per_step");
        n++;
    }
    cr_expect_gt(n, 0);
    cr_expect_float_eq(json_number(root, "loops_ms"), loops_ms, 1e-9 * loops_ms + 1e-12);
    cr_expect_float_eq(json_number(root, "span_ms"), span_ms, 1e-9 * span_ms + 1e-12);
    cr_expect_float_eq(json_number(root, "loops_per_step"), rounds, 1e-9 * rounds);
    double at = json_number(root, "step_ms_at_threads");
    cr_expect_float_eq(at, span_ms + json_number(root, "serial_ms"), 1e-9 * at);
    cr_expect_float_eq(json_number(root, "split_bound"), json_number(root, "step_ms") / at, 1e-9);
    cr_expect_leq(json_number(root, "split_bound"), threads * (1.0 + 1e-9));
    double typical = json_number(root, "typical_split_bound");
    cr_expect(typical > 0.0 && typical <= threads * (1.0 + 1e-6), "typical_split_bound %g", typical);
}

Test(bench_split, a_flock_split_ends_where_any_run_does)
{
    cli_output_t r, s;
    cJSON* split = one_object((const char*[]){"bench", "split", "flock", "--agents", "3000", "--steps", "3",
                                              "--warmup", "1", "--threads", "16", "--json", NULL},
                              &r);
    check_sums(split, 16);
    cr_expect_eq(json_number(split, "agents"), 3000);
    int neighbors = 0;
    const cJSON* l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(split, "loops")) neighbors +=
        strcmp(json_string(l, "system"), "neighbors") == 0;
    cr_expect_eq(neighbors, 1);
    cJSON* sweep =
        one_object((const char*[]){"bench", "scaling", "flock", "--threads", "1", "--agents", "3000",
                                   "--steps", "3", "--warmup", "1", "--rounds", "1", "--json", NULL},
                   &s);
    cr_expect_str_eq(json_string(split, "state_hash"), json_string(sweep, "state_hash"),
                     "the split's state is a one-thread run's");
    cJSON_Delete(split);
    cJSON_Delete(sweep);
    output_free(&r);
    output_free(&s);

    run_cli((const char*[]){"bench", "split", "--agents", "3000", "--steps", "2", "--threads", "8", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.out, "split flock: 3000 agents, 2 steps (+10 warm-up), as 8 threads would split it") !=
                  NULL,
              "%s", r.out);
    cr_expect(matches(r.out, "\nsplit bound +[0-9.]+x \\([0-9.]+ % of 8\\)"), "%s", r.out);
    cr_expect(matches(r.out, "\nneighbors +0 +1\\.00 "), "%s", r.out);
    output_free(&r);
}

/* The planner's passes over fixed chunks of rows (the list of searches,
 * the tracks' prefix) are tasks: each of 16 workers gets 4 of the 64
 * chunks, not 16 rows' worth of chunks on 4 workers. */
Test(bench_split, the_planners_chunked_passes_give_each_of_sixteen_workers_a_share)
{
    cli_output_t r;
    cJSON* split = one_object((const char*[]){"bench", "split", "planner", "--agents", "5000", "--steps", "2",
                                              "--threads", "16", "--json", NULL},
                              &r);
    check_sums(split, 16);
    int chunked = 0;
    const cJSON* l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(split, "loops"))
    {
        if (json_number(l, "items_per_call") != 64.0) continue;
        chunked++;
        cr_expect_eq(json_number(l, "blocks_per_call"), 16.0, "%s loop %g: %g blocks",
                     json_string(l, "system"), json_number(l, "loop"), json_number(l, "blocks_per_call"));
        cr_expect_float_eq(json_number(l, "busiest_share"), 4.0 / 64.0, 1e-12);
    }
    cr_expect_geq(chunked, 2, "the list of searches' two passes");
    cJSON_Delete(split);
    output_free(&r);
}

Test(bench_split, bad_input_is_a_usage_error)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "split", "swarm", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "unknown scene 'swarm' (expected flock, flock3d, crowd or planner)") != NULL,
              "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"bench", "split", "--threads", "0", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--threads") != NULL, "%s", r.err);
    output_free(&r);
}
