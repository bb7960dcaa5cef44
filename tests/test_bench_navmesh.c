/* `shoal bench navmesh` as a script sees it: the keys benchmark/README.md lists
 * for shoal's side and DetourCrowd's, figures within their ranges, the text
 * report, and usage errors. In a build without Recast and Detour every
 * test checks the documented refusal instead. Timings are never checked
 * against a clock. */
#define _XOPEN_SOURCE 700

#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/navmesh.h>

#include "cli_run.h"

TestSuite(bench_navmesh, .timeout = 120);

/* Without Recast and Detour: exit 2 and a message saying what it needs.
 * Returns 1 when they are there. */
static int with_recast(void)
{
    if (shoal_navmesh_available()) return 1;
    cli_output_t r;
    run_cli((const char*[]){"bench", "navmesh", "--agents", "10", "--steps", "5", NULL}, &r);
    cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_expect_not_null(strstr(r.err, "Recast/Detour"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "librecast-dev"), "%s", r.err);
    cr_expect_str_empty(r.out);
    output_free(&r);
    return 0;
}

static void check_side(const cJSON* root, const char* name, int agents, int steps_limit)
{
    const cJSON* s = cJSON_GetObjectItemCaseSensitive(root, name);
    cr_assert(cJSON_IsObject(s), "no %s", name);
    double steps = json_number(s, "steps");
    cr_expect(steps >= 1 && steps <= steps_limit, "%s: steps %g", name, steps);
    cr_expect_gt(json_number(s, "seconds"), 0.0, "%s", name);
    cr_expect_gt(json_number(s, "agent_steps_per_s"), 0.0, "%s", name);
    double arrived = json_number(s, "arrived"), arrived_agents = json_number(s, "arrived_agents");
    cr_expect(arrived >= 0.0 && arrived <= 1.0, "%s: arrived %g", name, arrived);
    cr_expect_float_eq(arrived * agents, arrived_agents, 1e-6, "%s", name);
    /* a run ends at the step limit unless everyone has arrived */
    if (arrived_agents < agents) cr_expect_eq(steps, steps_limit, "%s", name);
    double over = json_number(s, "overlapping"), peak = json_number(s, "peak_overlapping");
    cr_expect(over >= 0 && over <= agents, "%s: overlapping %g", name, over);
    cr_expect_geq(peak, over, "%s", name);
    /* null: no pair within reach of the count (DetourCrowd's side counts
     * pairs within two sums of radii) at the end */
    const cJSON* cp = cJSON_GetObjectItemCaseSensitive(s, "closest_pair");
    cr_expect(cJSON_IsNull(cp) || (cJSON_IsNumber(cp) && cp->valuedouble > 0.0), "%s: closest_pair", name);
    if (cJSON_IsNumber(cp)) cr_expect_leq(json_number(s, "min_closest_pair"), cp->valuedouble, "%s", name);
}

Test(bench_navmesh, a_small_hall_is_stepped_by_shoal_and_by_detour_crowd)
{
    if (!with_recast()) return;
    cJSON* root = run_json((const char*[]){"bench", "navmesh", "--agents", "100", "--steps", "50", "--size",
                                           "30", "--threads", "2", "--json", NULL});
    cr_expect_str_eq(json_string(root, "bench"), "navmesh");
    cr_expect_eq(json_number(root, "agents"), 100);
    cr_expect_eq(json_number(root, "threads"), 2);
    cr_expect_eq(json_number(root, "steps_limit"), 50);
    cr_expect_float_eq(json_number(root, "dt"), 0.05, 1e-6);
    cr_expect_eq(json_number(root, "size"), 30.0);
    cr_expect_gt(json_number(root, "walls"), 4, "an inner wall across a 30 m hall");
    cr_expect_gt(json_number(root, "polygons"), 0);
    cr_expect_gt(json_number(root, "bake_seconds"), 0.0);
    cr_expect_float_eq(json_number(root, "radius"), 0.21, 1e-6);
    cr_expect_float_eq(json_number(root, "preferred_speed"), 1.34, 1e-6);
    check_side(root, "shoal", 100, 50);
    check_side(root, "detour_crowd", 100, 50);
    const cJSON* sh = cJSON_GetObjectItemCaseSensitive(root, "shoal");
    double replans = json_number(sh, "replans_per_step");
    cr_expect(replans > 0.0 && replans <= json_number(sh, "replans_per_step_limit"), "replans %g", replans);
    const cJSON* dc = cJSON_GetObjectItemCaseSensitive(root, "detour_crowd");
    cr_expect_eq(json_number(dc, "placed"), 100, "every start is on the mesh");
    cr_expect_eq(json_number(dc, "threads"), 1);
    cr_expect_float_eq(json_number(root, "speed_ratio"),
                       json_number(sh, "agent_steps_per_s") / json_number(dc, "agent_steps_per_s"), 1e-9);
    const cJSON* load = cJSON_GetObjectItemCaseSensitive(root, "load_average");
    cr_expect(cJSON_IsArray(load) && cJSON_GetArraySize(load) == 3);
    cJSON_Delete(root);
}

Test(bench_navmesh, the_text_report_names_its_figures)
{
    if (!with_recast()) return;
    cli_output_t r;
    run_cli((const char*[]){"bench", "navmesh", "--agents", "20", "--steps", "10", NULL}, &r);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    const char* keys[] = {"polygons",    "shoal",   "DetourCrowd", "agent-steps/s", "arrived",
                          "overlapping", "replans", "ratio",       "load average"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k)
        cr_expect_not_null(strstr(r.out, keys[k]), "no \"%s\" in: %s", keys[k], r.out);
    output_free(&r);
}

Test(bench_navmesh, bad_options_are_usage_errors)
{
    cli_output_t r;
    run_cli((const char*[]){"bench", "navmesh", "--agents", "0", NULL}, &r);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "--agents"), "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"bench", "navmesh", "--size", "5", NULL}, &r);
    cr_expect_eq(r.status, 2);
    output_free(&r);
}
