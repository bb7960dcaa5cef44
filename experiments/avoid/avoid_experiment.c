/* `shoal experiment avoid`: the obstacle-avoidance grid (experiments/avoid/avoid_grid.h)
 * as a table, one row per dimension, behavior and field. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "experiments/avoid/avoid_grid.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

typedef struct avoid_options_t {
    int64_t dims;
    double gain, lookahead; /* < 0: the default's */
    int json, list;
} avoid_options_t;

static const cli_option_t avoid_options[] = {
    {.name = "--dims",
     .metavar = "D",
     .kind = CLI_INT,
     CLI_AT(avoid_options_t, dims),
     .max = 3,
     .help = "2 or 3; 0 (the default) runs both"},
    {.name = "--gain",
     .metavar = "K",
     .kind = CLI_NUMBER,
     CLI_AT(avoid_options_t, gain),
     .max = 1e6,
     .help = "K_avoid of every run, >= 0 (default: shoal_avoid_default's)"},
    {.name = "--lookahead",
     .metavar = "T",
     .kind = CLI_NUMBER,
     CLI_AT(avoid_options_t, lookahead),
     .max = 1e6,
     .help = "T_avoid of every run, s, >= 0 (default: shoal_avoid_default's)"},
    {.name = "--list",
     .kind = CLI_FLAG,
     CLI_AT(avoid_options_t, list),
     .help = "also list every run that entered the obstacle or did not get past it"},
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(avoid_options_t, json),
     .help = "one JSON object instead of the table"},
};

static const cli_spec_t avoid_spec = {
    .command = "experiment avoid",
    .usage = "[options]",
    .about = "Obstacle avoidance (\"Behavior-based control examples\", after Reynolds)\n"
             "over a grid: one obstacle off the straight path of agents that seek, arrive\n"
             "at, or directed-seek a target behind it, or fly on as a flock of five\n"
             "(without a goal, and seeking the target at weight 0.5);\n"
             "7 lateral offsets (0 to 0.95 of r_o + r_B), max speeds\n"
             "2, 5 and 8 m/s, obstacle radii 0.5, 1, 2 and 4 m: 84 runs per behavior and\n"
             "field, each with the default vehicle, controller and AVOID parameters unless\n"
             "--gain or --lookahead says otherwise. An entry is a run in which an agent's\n"
             "body (radius r_B) overlapped the obstacle at some step.\n",
    .options = avoid_options,
    .option_count = CLI_COUNT(avoid_options),
    .details = "Columns: entries (runs with an entry, of all runs), not past (runs in which\n"
               "some agent never got beyond the obstacle; a flock without a goal that the\n"
               "obstacle turned keeps its new course), least clearance (m, the smallest\n"
               "|p - c_o| - (r_o + r_B) of any agent at any step; negative: how deep).\n",
};

static int experiment_avoid(int argc, char** argv)
{
    avoid_options_t opt = {.gain = -1.0, .lookahead = -1.0};
    int stop = cli_parse(&avoid_spec, argc, argv, &opt, NULL, NULL);
    if (stop >= 0) return stop;
    if (opt.dims == 1) return cli_usage_error("experiment avoid", "--dims: 0, 2 or 3, got 1");
    shoal_avoid_t base = shoal_avoid_default();
    if (opt.gain >= 0.0) base.gain = (float)opt.gain;
    if (opt.lookahead >= 0.0) base.lookahead_time = (float)opt.lookahead;

    cJSON* root = opt.json ? cJSON_CreateObject() : NULL;
    cJSON* rows = opt.json ? cJSON_AddArrayToObject(root, "rows") : NULL;
    if (opt.json) {
        cJSON_AddNumberToObject(root, "gain", base.gain);
        cJSON_AddNumberToObject(root, "lookahead_time", base.lookahead_time);
    } else {
        printf("Obstacle avoidance grid: %d offsets x %d speeds x %d radii = %d runs a row; "
               "K_avoid %g, T_avoid %g s\n\n",
               AVOID_GRID_OFFSETS, AVOID_GRID_SPEEDS, AVOID_GRID_RADII, AVOID_GRID_RUNS, (double)base.gain,
               (double)base.lookahead_time);
        printf("%-4s %-10s %-11s %9s %9s %20s\n", "dims", "behavior", "field", "entries", "not past",
               "least clearance (m)");
    }
    int total_entries = 0, total_not_passed = 0;
    for (int dims = 2; dims <= 3; ++dims) {
        if (opt.dims != 0 && opt.dims != dims) continue;
        for (int b = 0; b < AVOID_GRID_BEHAVIORS; ++b)
            for (int t = 0; t <= 1; ++t) {
                shoal_avoid_t av = base;
                av.tangential = t;
                avoid_grid_summary_t s;
                shoal_status_t st = avoid_grid_summarize(dims, (avoid_grid_behavior_t)b, &av, &s);
                if (st != SHOAL_OK) {
                    cli_error("experiment avoid: a run failed with status %d", (int)st);
                    cJSON_Delete(root);
                    return CLI_EXIT_FAILURE;
                }
                total_entries += s.entries;
                total_not_passed += s.not_passed;
                const char* field = t ? "tangential" : "normal";
                if (opt.json) {
                    cJSON* row = cJSON_CreateObject();
                    cJSON_AddNumberToObject(row, "dims", dims);
                    cJSON_AddStringToObject(row, "behavior",
                                            avoid_grid_behavior_name((avoid_grid_behavior_t)b));
                    cJSON_AddStringToObject(row, "field", field);
                    cJSON_AddNumberToObject(row, "runs", s.runs);
                    cJSON_AddNumberToObject(row, "entries", s.entries);
                    cJSON_AddNumberToObject(row, "not_passed", s.not_passed);
                    cJSON_AddNumberToObject(row, "least_clearance", s.clearance);
                    cJSON_AddItemToArray(rows, row);
                } else {
                    char entries[32];
                    snprintf(entries, sizeof entries, "%d/%d", s.entries, s.runs);
                    printf("%-4s %-10s %-11s %9s %9d %20.2f\n", dims == 2 ? "2D" : "3D",
                           avoid_grid_behavior_name((avoid_grid_behavior_t)b), field, entries, s.not_passed,
                           (double)s.clearance);
                }
                if (!opt.list || opt.json) continue;
                for (int o = 0; o < AVOID_GRID_OFFSETS; ++o)
                    for (int v = 0; v < AVOID_GRID_SPEEDS; ++v)
                        for (int r = 0; r < AVOID_GRID_RADII; ++r) {
                            avoid_grid_case_t c = {.dims = dims,
                                                   .behavior = (avoid_grid_behavior_t)b,
                                                   .offset = o,
                                                   .speed = v,
                                                   .radius = r,
                                                   .avoid = av};
                            avoid_grid_outcome_t res;
                            if (avoid_grid_run(&c, &res) != SHOAL_OK || (!res.entered && res.passed))
                                continue;
                            printf("     offset %5.2f  speed %g  r_o %g: clearance %.2f m%s\n",
                                   (double)avoid_grid_offsets[o], (double)avoid_grid_speeds[v],
                                   (double)avoid_grid_radii[r], (double)res.clearance,
                                   res.passed ? "" : ", not past");
                        }
            }
    }
    if (opt.json) {
        cJSON_AddNumberToObject(root, "entries", total_entries);
        cJSON_AddNumberToObject(root, "not_passed", total_not_passed);
        char* text = cJSON_PrintUnformatted(root);
        if (text) puts(text);
        cJSON_free(text);
        cJSON_Delete(root);
    } else {
        printf("\nentries %d, not past %d\n", total_entries, total_not_passed);
    }
    return CLI_EXIT_OK;
}

const cli_command_t cli_experiment_avoid = {
    "avoid", "obstacle avoidance (Reynolds' behaviors) over offsets, speeds and radii:\nentries",
    experiment_avoid};
