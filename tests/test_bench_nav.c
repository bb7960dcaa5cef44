/* `shoal bench nav` as a script sees it: the keys benchmark/README.md lists,
 * figures that agree with each other, a small maze and a small office that
 * every pedestrian gets through, one state hash for 1 and 2 threads, the
 * solve alone, and clear usage errors. Timings are never checked against a
 * clock. */
#define _XOPEN_SOURCE 700

#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"

TestSuite(bench_nav, .timeout = 120);

/* What every walk's figures must satisfy. */
static void check_walk(const cJSON* root, int agents, double seconds_limit)
{
    cr_expect_str_eq(json_string(root, "bench"), "nav");
    cr_expect_str_eq(json_string(root, "mode"), "walk");
    cr_expect_eq(json_number(root, "agents"), agents);
    double steps = json_number(root, "steps"), dt = json_number(root, "dt");
    cr_expect_float_eq(dt, 0.05, 1e-6);
    cr_expect_gt(steps, 0);
    cr_expect_leq(steps, ceil(seconds_limit / dt - 1e-6));
    cr_expect_float_eq(json_number(root, "simulated_seconds"), steps * dt, 1e-6 * steps);
    cr_expect_gt(json_number(root, "seconds"), 0.0);
    cr_expect_gt(json_number(root, "agent_steps_per_s"), 0.0);
    cr_expect_gt(json_number(root, "first_solve_seconds"), 0.0);
    double arrived = json_number(root, "arrived"), arrived_agents = json_number(root, "arrived_agents");
    cr_expect(arrived >= 0.0 && arrived <= 1.0, "arrived %g", arrived);
    cr_expect_float_eq(arrived * agents, arrived_agents, 1e-6);
    /* the walk ends at the time limit unless everyone has arrived */
    if (arrived_agents < agents) cr_expect_eq(steps, ceil(seconds_limit / dt - 1e-6));
    double stuck = json_number(root, "stuck");
    cr_expect(stuck >= 0 && stuck <= agents - arrived_agents, "stuck %g", stuck);
    cr_expect_geq(json_number(root, "overlapping"), 0);
    cr_expect_geq(json_number(root, "peak_overlapping"), json_number(root, "overlapping"));
    cr_expect_gt(json_number(root, "navigate_ns_per_agent_step"), 0.0);
    cr_expect_float_eq(json_number(root, "preferred_speed"), 1.34, 1e-6);
    cr_expect_gt(json_number(root, "mean_shortest_way"), 0.0);
    const cJSON* grid = cJSON_GetObjectItemCaseSensitive(root, "grid");
    cr_assert(cJSON_IsObject(grid));
    double nx = json_number(grid, "nx"), ny = json_number(grid, "ny");
    cr_expect_gt(nx, 0);
    cr_expect_eq(json_number(grid, "cells"), nx * ny);
    cr_expect_gt(json_number(grid, "blocked"), 0, "the walls block cells");
    cr_expect_gt(json_number(grid, "bytes"), nx * ny, "at least a byte a cell");
    cr_expect_eq(strlen(json_string(root, "state_hash")), 16);
    int navigate = 0;
    const cJSON* s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(root, "systems")) navigate +=
        strcmp(json_string(s, "name"), "navigate") == 0;
    cr_expect_eq(navigate, 1, "the navigate system is listed");
}

Test(bench_nav, a_small_maze_is_walked_through_alike_on_1_and_2_threads)
{
    cJSON* run[2];
    const char* threads[2] = {"1", "2"};
    for (int t = 0; t < 2; ++t) {
        run[t] = run_json((const char*[]){"bench", "nav", "--plan", "maze", "--rooms", "6", "--goals", "2",
                                          "--agents", "20", "--seconds", "60", "--threads", threads[t],
                                          "--json", NULL});
        check_walk(run[t], 20, 60.0);
    }
    cr_expect_str_eq(json_string(run[0], "plan"), "maze");
    cr_expect_eq(json_number(run[0], "rooms"), 6);
    cr_expect_eq(json_number(run[0], "width"), 12.0, "3 x 2 rooms of 4 m");
    cr_expect_eq(json_number(run[0], "height"), 8.0);
    cr_expect_gt(json_number(run[0], "arrived"), 0.9);
    /* nobody walks faster than the field's shortest way allows by much:
     * the field is slower near walls, so a little under 1 is possible */
    double ratio = json_number(run[0], "mean_time_ratio");
    cr_expect(ratio > 0.8 && ratio < 10.0, "mean time ratio %g", ratio);
    cr_expect_leq(json_number(run[0], "median_time_ratio"), json_number(run[0], "max_time_ratio"));
    cr_expect_str_eq(json_string(run[0], "state_hash"), json_string(run[1], "state_hash"));
    cr_expect_eq(json_number(run[0], "arrived_agents"), json_number(run[1], "arrived_agents"));
    cr_expect_eq(json_number(run[0], "steps"), json_number(run[1], "steps"));
    cr_expect_eq(json_number(run[0], "mean_time_ratio"), json_number(run[1], "mean_time_ratio"));
    cJSON_Delete(run[0]);
    cJSON_Delete(run[1]);
}

Test(bench_nav, a_small_office_is_walked_through_and_a_seed_is_its_plan)
{
    const char* args[] = {"bench",     "nav", "--plan",  "office", "--width",  "20",
                          "--height",  "14",  "--goals", "2",      "--agents", "30",
                          "--seconds", "60",  "--seed",  "3",      "--json",   NULL};
    cJSON* a = run_json(args);
    check_walk(a, 30, 60.0);
    cr_expect_str_eq(json_string(a, "plan"), "office");
    cr_expect_eq(json_number(a, "width"), 20.0);
    cr_expect_geq(json_number(a, "rooms"), 4, "rooms of at most 9 m on both sides of 20 m");
    cr_expect_gt(json_number(a, "arrived"), 0.9);
    cJSON* b = run_json(args);
    cr_expect_str_eq(json_string(a, "state_hash"), json_string(b, "state_hash"));
    args[15] = "4";
    cJSON* c = run_json(args);
    cr_expect_str_neq(json_string(a, "state_hash"), json_string(c, "state_hash"),
                      "another seed, another floor");
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

/* The hall: the maze's rooms as areas of one open floor, its four outer
 * walls only; walkers reach their rooms about as fast as the field's
 * shortest way allows. */
Test(bench_nav, a_small_hall_has_only_its_outer_walls_and_is_walked_through)
{
    cJSON* run = run_json((const char*[]){"bench", "nav", "--plan", "hall", "--rooms", "9", "--goals", "2",
                                          "--agents", "20", "--seconds", "40", "--json", NULL});
    check_walk(run, 20, 40.0);
    cr_expect_str_eq(json_string(run, "plan"), "hall");
    cr_expect_eq(json_number(run, "walls"), 4, "the outer box only");
    cr_expect_gt(json_number(run, "arrived"), 0.9);
    cJSON_Delete(run);
}

Test(bench_nav, the_text_report_names_its_figures)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "nav", "--plan", "maze", "--rooms", "4", "--goals", "1", "--agents", "5",
                            "--seconds", "5", NULL},
            &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    const char* keys[] = {"first solve",     "agent-steps/s", "navigate", "arrived",
                          "time / shortest", "stuck",         "ms/step"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k)
        cr_expect_not_null(strstr(r.out, keys[k]), "no \"%s\" in: %s", keys[k], r.out);
    output_free(&r);
}

Test(bench_nav, solve_only_times_one_field_and_g_fields_on_1_and_t_threads)
{
    cJSON* root = run_json((const char*[]){"bench", "nav", "--solve-only", "--floor", "12", "--goals", "3",
                                           "--threads", "2", "--json", NULL});
    cr_expect_str_eq(json_string(root, "mode"), "solve");
    cr_expect_eq(json_number(root, "floor"), 12.0);
    cr_expect_eq(json_number(root, "nx"), 120, "12 m at 0.1 m");
    cr_expect_eq(json_number(root, "ny"), 120);
    cr_expect_eq(json_number(root, "cells"), 120 * 120);
    cr_expect_gt(json_number(root, "blocked"), 0);
    cr_expect_gt(json_number(root, "bytes_goals"), json_number(root, "bytes_one_goal"), "a field per goal");
    cr_expect_eq(json_number(root, "goals"), 3);
    cr_expect_eq(json_number(root, "threads"), 2);
    const char* parts[] = {"one_goal", "goals_one_thread", "goals_threads"};
    const double threads[] = {2, 1, 2};
    for (int k = 0; k < 3; ++k) {
        const cJSON* p = cJSON_GetObjectItemCaseSensitive(root, parts[k]);
        cr_assert(cJSON_IsObject(p), "%s", parts[k]);
        cr_expect_eq(json_number(p, "threads"), threads[k], "%s", parts[k]);
        cr_expect_gt(json_number(p, "update_seconds"), 0.0, "%s", parts[k]);
        cr_expect_gt(json_number(p, "fields_seconds"), 0.0, "%s", parts[k]);
    }
    cr_expect_gt(json_number(root, "fields_speedup"), 0.0);
    cr_expect_gt(json_number(root, "update_speedup"), 0.0);
    cJSON_Delete(root);
}

Test(bench_nav, bad_options_are_usage_errors)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "nav", "--plan", "cave", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "cave"), "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"bench", "nav", "--plan", "maze", "--rooms", "6", "--goals", "6", NULL}, &r);
    cr_expect_eq(r.status, 2, "a goal in every room leaves none to start in");
    cr_expect_not_null(strstr(r.err, "--goals"), "%s", r.err);
    cr_expect_str_empty(r.out);
    output_free(&r);
    run_cli((const char*[]){"bench", "nav", "--width", "5", NULL}, &r);
    cr_expect_eq(r.status, 2);
    output_free(&r);
}
