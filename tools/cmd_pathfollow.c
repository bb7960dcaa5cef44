/* `shoal pathfollow` (one vehicle on one course) and `shoal experiment
 * pathfollow` (the Table I experiment of issue 5).
 * Course files (--path FILE): tools/course_file.c. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shoal/shoal.h"
#include "tools/cli.h"
#include "tools/cli_options.h"
#include "tools/courses.h"
#include "tools/pathfollow_runs.h"

static const char* const vehicle_names[6] = {"buggy", "car", "apc", "truck", "tank", "hovercraft"};
/* The Table I columns, and a fourth: the proposed follower with the
 * paper's Algorithm 1 alone (vehicle_limits 0), to show what the extension
 * does. */
enum { VEHICLES = 6, FOLLOWERS = 4 };
static const char* const follower_names[FOLLOWERS] = {"baseline", "proposed", "tuned", "proposed_alg1"};
static const char* const follower_titles[FOLLOWERS] = {"Baseline", "Ours", "Ours (tuned)",
                                                       "Ours (Alg. 1 only)"};

/* ---- follower parameters ------------------------------------------------- */

static shoal_path_follow_t follower_defaults(shoal_follower_t kind)
{
    shoal_path_follow_t f = shoal_path_follow_default();
    f.follower = kind;
    return f;
}

static cJSON* follow_json(const shoal_path_follow_t* f)
{
    cJSON* o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "a_lat", f->a_lat);
    cJSON_AddNumberToObject(o, "kp", f->kp);
    cJSON_AddNumberToObject(o, "ki", f->ki);
    cJSON_AddNumberToObject(o, "lookahead_min", f->lookahead_min);
    cJSON_AddNumberToObject(o, "lookahead_time", f->lookahead_time);
    return o;
}

static cJSON* result_json(const run_result* r)
{
    cJSON* o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "completed", r->completed);
    cJSON_AddNumberToObject(o, "stuck_events", r->stuck_events);
    cJSON_AddNumberToObject(o, "teleports", r->teleports);
    cJSON_AddNumberToObject(o, "time", r->time);
    cJSON_AddNumberToObject(o, "cte_mean", r->cte_mean);
    cJSON_AddNumberToObject(o, "inside_corridor_pct", r->inside_pct);
    cJSON_AddNumberToObject(o, "speed_mean", r->speed_mean);
    cJSON_AddNumberToObject(o, "distance", r->distance);
    return o;
}

static int parse_follower(const char* s, shoal_follower_t* out)
{
    if (strcmp(s, "proposed") == 0) *out = SHOAL_FOLLOWER_PROPOSED;
    else if (strcmp(s, "baseline") == 0) *out = SHOAL_FOLLOWER_BASELINE;
    else return 0;
    return 1;
}

/* ---- shoal pathfollow ---------------------------------------------------- */

typedef struct pathfollow_options_t {
    const char *vehicle, *path, *course, *follower, *csv;
    int json;
} pathfollow_options_t;

#define PF_STRING(name, metavar, field, help)                                                    \
    {name, NULL, metavar, CLI_STRING, CLI_FIELD(pathfollow_options_t, field), 0, 0, 0, NULL, help}

static const cli_option_t pathfollow_options[] = {
    PF_STRING("--vehicle", "NAME", vehicle, "buggy, car, apc, truck, tank or hovercraft"),
    PF_STRING("--path", "FILE", path,
              "a course file (JSON: waypoints, half_width, optional terrain and obstacles; see "
              "docs/vehicles.md, Course files)"),
    PF_STRING("--course", "NAME", course,
              "one of the experiment's courses instead (hairpins, slalom, switchbacks, "
              "uturn-corridor, steep-climb, chicane, spiral, city-blocks, rolling-hills, "
              "side-slope, and the tuning courses oval, zigzag, hill-loop, narrow-s, "
              "ridge-hairpins, gates, crest)"),
    PF_STRING("--follower", "KIND", follower, "proposed (default) or baseline"),
    PF_STRING("--csv", "FILE", csv, "write the trajectory, a line per frame"),
    {"--json", NULL, NULL, CLI_FLAG, CLI_FIELD(pathfollow_options_t, json), 0, 0, 0, NULL,
     "one JSON object instead of text"},
};

static const cli_spec_t pathfollow_spec = {
    .command = "pathfollow",
    .usage = "--vehicle NAME (--path FILE | --course NAME) [options]",
    .about = "Drive one ground vehicle along one path with the path follower and report\n"
             "the run's metrics.\n",
    .options = pathfollow_options,
    .option_count = CLI_COUNT(pathfollow_options),
};

int cmd_pathfollow(int argc, char** argv)
{
    pathfollow_options_t opt = {.follower = "proposed"};
    int stop = cli_parse(&pathfollow_spec, argc, argv, &opt, NULL, NULL);
    if (stop >= 0) return stop;
    const char *vehicle = opt.vehicle, *path = opt.path, *course_name = opt.course,
               *csv = opt.csv, *kind = opt.follower;
    int json = opt.json;
    if (!vehicle) return cli_usage_error("pathfollow", "--vehicle is required");
    if (!path == !course_name) return cli_usage_error("pathfollow", "give one of --path and --course");
    shoal_follower_t follower;
    if (!parse_follower(kind, &follower))
        return cli_usage_error("pathfollow", "--follower: expected proposed or baseline, got '%s'", kind);
    shoal_ground_vehicle_t veh;
    if (shoal_ground_vehicle_preset(vehicle, &veh, NULL) != SHOAL_OK)
        return cli_usage_error("pathfollow",
                               "--vehicle: unknown '%s' (buggy, car, apc, truck, tank, hovercraft)",
                               vehicle);
    char err[512];
    course_t c;
    if (path) {
        if (course_load(path, &c, err, sizeof err) != 0) {
            cli_error("%s", err);
            return CLI_EXIT_FAILURE;
        }
    } else {
        int r = course_find(course_name, &c);
        if (r < 0) {
            cli_error("out of memory");
            return CLI_EXIT_FAILURE;
        }
        if (r > 0) return cli_usage_error("pathfollow", "--course: unknown course '%s'", course_name);
    }
    shoal_path_follow_t f = follower_defaults(follower);
    run_result r;
    memset(&r, 0, sizeof r);
    const char* csvs[1] = {csv};
    int rc = pf_run_course(&c, 1, &veh, &f, csvs, &r, err, sizeof err);
    if (rc != 0) {
        cli_error("%s", err);
        course_free(&c);
        return CLI_EXIT_FAILURE;
    }
    if (json) {
        cJSON* o = result_json(&r);
        cJSON_AddStringToObject(o, "vehicle", vehicle);
        cJSON_AddStringToObject(o, "course", c.name);
        cJSON_AddStringToObject(o, "follower", kind);
        char* text = cJSON_PrintUnformatted(o);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(o);
    } else {
        printf("%s on %s (%s follower): %s in %.1f s, %.0f m at %.2f m/s mean\n"
               "cross-track error mean %.2f m, inside the corridor %.1f%% of frames\n"
               "stuck events %d (teleports %d)\n",
               vehicle, c.name, kind, r.completed ? "completed" : "NOT completed", r.time, r.distance,
               r.speed_mean, r.cte_mean, r.inside_pct, r.stuck_events, r.teleports);
    }
    course_free(&c);
    return CLI_EXIT_OK;
}

/* ---- shoal experiment pathfollow ----------------------------------------- */

typedef struct column {
    run_result runs[COURSE_TEST_COUNT][VEHICLES];
    int stuck_trials, stuck_events, teleports, completed;
    double cte_mean, time_mean, inside_mean, speed_mean;
    int per_vehicle[VEHICLES];
    double soak_drive, soak_spe;
    int soak_stuck, soak_routes;
    int soak_by_vehicle[VEHICLES];
} column;

static void summarize(column* col)
{
    int n = 0;
    for (int c = 0; c < COURSE_TEST_COUNT; ++c)
        for (int v = 0; v < VEHICLES; ++v) {
            const run_result* r = &col->runs[c][v];
            col->stuck_trials += r->stuck_events > 0;
            col->stuck_events += r->stuck_events;
            col->teleports += r->teleports;
            col->completed += r->completed;
            col->cte_mean += r->cte_mean;
            col->time_mean += r->time;
            col->inside_mean += r->inside_pct;
            col->speed_mean += r->speed_mean;
            col->per_vehicle[v] += r->stuck_events;
            n++;
        }
    col->cte_mean /= n;
    col->time_mean /= n;
    col->inside_mean /= n;
    col->speed_mean /= n;
}

static int make_dir(const char* path)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) return 0;
    return -1;
}

static int export_courses(const char* dir)
{
    if (make_dir(dir) != 0) {
        cli_error("cannot create %s: %s", dir, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    char err[512], path[1024];
    for (int tuning = 0; tuning < 2; ++tuning)
        for (int i = 0; i < (tuning ? COURSE_TUNING_COUNT : COURSE_TEST_COUNT); ++i) {
            course_t c;
            if (course_make(i, tuning, &c) != 0) {
                cli_error("out of memory");
                return CLI_EXIT_FAILURE;
            }
            snprintf(path, sizeof path, "%s/%s%s.json", dir, tuning ? "tuning-" : "", c.name);
            int rc = course_save(&c, path, err, sizeof err);
            course_free(&c);
            if (rc != 0) {
                cli_error("%s", err);
                return CLI_EXIT_FAILURE;
            }
        }
    return CLI_EXIT_OK;
}

typedef struct experiment_options_t {
    const char *runs_dir, *export_dir;
    int json;
    int64_t tune_evals, soak_trials, soak_seconds;
} experiment_options_t;

static const cli_option_t experiment_options[] = {
    {"--json", NULL, NULL, CLI_FLAG, CLI_FIELD(experiment_options_t, json), 0, 0, 0, NULL,
     "one JSON object instead of the table"},
    {"--runs-dir", NULL, "DIR", CLI_STRING, CLI_FIELD(experiment_options_t, runs_dir), 0, 0, 0,
     NULL, "write every run's trajectory as CSV under DIR"},
    {"--tune-evals", NULL, "N", CLI_INT, CLI_FIELD(experiment_options_t, tune_evals), 0, 100000,
     0, NULL, "cost evaluations per vehicle for the tuner, 0..100000 (default 60)"},
    {"--soak-seconds", NULL, "S", CLI_INT, CLI_FIELD(experiment_options_t, soak_seconds), 0,
     86400, 0, NULL, "length of each soak trial, whole seconds 0..86400 (default 300)"},
    {"--soak-trials", NULL, "N", CLI_INT, CLI_FIELD(experiment_options_t, soak_trials), 0, 1000,
     0, NULL, "soak trials per follower, 0..1000 (default 5)"},
    {"--export-courses", NULL, "DIR", CLI_STRING, CLI_FIELD(experiment_options_t, export_dir), 0,
     0, 0, NULL, "write the courses as JSON course files and exit"},
};

static const cli_spec_t experiment_spec = {
    .command = "experiment pathfollow",
    .usage = "[options]",
    .about = "The Table I experiment: ten test courses, six vehicles, four followers\n"
             "(baseline; proposed with the paper's parameters; proposed with per-vehicle\n"
             "parameters from a Nelder-Mead tuner run on seven other courses; proposed with\n"
             "the paper's Algorithm 1 alone, without the vehicle limits), then the soak run\n"
             "(64 vehicles on random routes through a town).\n",
    .options = experiment_options,
    .option_count = CLI_COUNT(experiment_options),
};

static int experiment_pathfollow(int argc, char** argv)
{
    experiment_options_t opt = {.tune_evals = 60, .soak_trials = 5, .soak_seconds = 300};
    int stop = cli_parse(&experiment_spec, argc, argv, &opt, NULL, NULL);
    if (stop >= 0) return stop;
    const char *runs_dir = opt.runs_dir, *export_dir = opt.export_dir;
    int json = opt.json;
    int64_t tune_evals = opt.tune_evals, soak_trials = opt.soak_trials,
            soak_seconds = opt.soak_seconds;
    if (export_dir) return export_courses(export_dir);
    if (runs_dir) {
        char sub[1024];
        int bad = make_dir(runs_dir) != 0;
        for (int f = 0; f < FOLLOWERS && !bad; ++f) {
            snprintf(sub, sizeof sub, "%s/%s", runs_dir, follower_names[f]);
            bad = make_dir(sub) != 0;
        }
        if (bad) {
            cli_error("cannot create the run directories under %s: %s", runs_dir, strerror(errno));
            return CLI_EXIT_FAILURE;
        }
    }
    double t0 = cli_now_seconds();
    column* cols = calloc(FOLLOWERS, sizeof *cols);
    course_t* courses = calloc(COURSE_TEST_COUNT, sizeof *courses);
    shoal_ground_vehicle_t veh[VEHICLES];
    shoal_path_follow_t params[FOLLOWERS][VEHICLES];
    double tuned_cost[VEHICLES];
    int tuned_evals[VEHICLES];
    int failed = 0;
    char err[512] = "";
    if (!cols || !courses) {
        cli_error("out of memory");
        free(cols);
        free(courses);
        return CLI_EXIT_FAILURE;
    }
    for (int c = 0; c < COURSE_TEST_COUNT; ++c)
        if (course_make(c, 0, &courses[c]) != 0) failed = 1;
    for (int v = 0; v < VEHICLES; ++v) {
        if (shoal_ground_vehicle_preset(vehicle_names[v], &veh[v], NULL) != SHOAL_OK) failed = 1;
        params[0][v] = follower_defaults(SHOAL_FOLLOWER_BASELINE);
        params[1][v] = follower_defaults(SHOAL_FOLLOWER_PROPOSED);
        params[3][v] = follower_defaults(SHOAL_FOLLOWER_PROPOSED);
        params[3][v].vehicle_limits = 0;
    }
    if (failed) {
        cli_error("out of memory building the courses");
        goto out;
    }
    /* the tuner, one vehicle per thread */
#pragma omp parallel for schedule(dynamic, 1)
    for (int v = 0; v < VEHICLES; ++v) {
        char e[512];
        tuned_evals[v] = pf_tune_vehicle(&veh[v], &params[1][v], (int)tune_evals, &params[2][v],
                                         &tuned_cost[v], e, sizeof e);
        if (tuned_evals[v] < 0) {
#pragma omp critical
            {
                failed = 1;
                snprintf(err, sizeof err, "%s", e);
            }
        }
    }
    double t_tune = cli_now_seconds() - t0;
    /* the 3 x 10 courses, six vehicles in each world */
#pragma omp parallel for schedule(dynamic, 1) collapse(2)
    for (int f = 0; f < FOLLOWERS; ++f)
        for (int c = 0; c < COURSE_TEST_COUNT; ++c) {
            if (failed) continue;
            char e[512];
            char names[VEHICLES][1024];
            const char* csvs[VEHICLES];
            for (int v = 0; v < VEHICLES; ++v) {
                csvs[v] = NULL;
                if (runs_dir) {
                    snprintf(names[v], sizeof names[v], "%s/%s/%s-%s.csv", runs_dir, follower_names[f],
                             courses[c].name, vehicle_names[v]);
                    csvs[v] = names[v];
                }
            }
            if (pf_run_course(&courses[c], VEHICLES, veh, params[f], csvs, cols[f].runs[c], e,
                              sizeof e) != 0) {
#pragma omp critical
                {
                    failed = 1;
                    snprintf(err, sizeof err, "%s", e);
                }
            }
        }
    double t_runs = cli_now_seconds() - t0 - t_tune;
    /* soak: every follower, every trial */
    soak_result soak[FOLLOWERS][64];
    memset(soak, 0, sizeof soak);
    if (soak_trials > 64) soak_trials = 64;
#pragma omp parallel for schedule(dynamic, 1) collapse(2)
    for (int f = 0; f < FOLLOWERS; ++f)
        for (int t = 0; t < (int)soak_trials; ++t) {
            if (failed) continue;
            char e[512];
            shoal_follower_t kind = f == 0 ? SHOAL_FOLLOWER_BASELINE : SHOAL_FOLLOWER_PROPOSED;
            if (pf_soak(kind, params[f], 64, (double)soak_seconds, 1000u + (uint64_t)t, &soak[f][t], e,
                        sizeof e) != 0) {
#pragma omp critical
                {
                    failed = 1;
                    snprintf(err, sizeof err, "%s", e);
                }
            }
        }
    double t_soak = cli_now_seconds() - t0 - t_tune - t_runs;
    if (failed) {
        cli_error("%s", err);
        goto out;
    }
    for (int f = 0; f < FOLLOWERS; ++f) {
        summarize(&cols[f]);
        for (int t = 0; t < (int)soak_trials; ++t) {
            cols[f].soak_drive += soak[f][t].drive_seconds;
            cols[f].soak_stuck += soak[f][t].stuck_events;
            cols[f].soak_routes += soak[f][t].routes_completed;
            for (int v = 0; v < VEHICLES; ++v) cols[f].soak_by_vehicle[v] += soak[f][t].stuck_by_preset[v];
        }
        cols[f].soak_spe = cols[f].soak_stuck > 0 ? cols[f].soak_drive / cols[f].soak_stuck : INFINITY;
    }
    int runs = COURSE_TEST_COUNT * VEHICLES;
    if (json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "experiment", "pathfollow");
        cJSON_AddNumberToObject(root, "runs_per_follower", runs);
        cJSON_AddNumberToObject(root, "dt", PF_RUN_DT);
        cJSON_AddNumberToObject(root, "time_limit", PF_RUN_TIME_LIMIT);
        cJSON* soak_o = cJSON_CreateObject();
        for (int f = 0; f < FOLLOWERS; ++f) {
            const column* col = &cols[f];
            cJSON* o = cJSON_AddObjectToObject(root, follower_names[f]);
            cJSON_AddNumberToObject(o, "stuck_trials", col->stuck_trials);
            cJSON_AddNumberToObject(o, "stuck_events", col->stuck_events);
            cJSON_AddNumberToObject(o, "teleports", col->teleports);
            cJSON_AddNumberToObject(o, "cte_mean", col->cte_mean);
            cJSON_AddNumberToObject(o, "total_time_mean", col->time_mean);
            cJSON_AddNumberToObject(o, "inside_corridor_pct", col->inside_mean);
            cJSON_AddNumberToObject(o, "speed_mean", col->speed_mean);
            cJSON_AddNumberToObject(o, "completed", col->completed);
            cJSON* pv = cJSON_AddObjectToObject(o, "per_vehicle");
            for (int v = 0; v < VEHICLES; ++v) cJSON_AddNumberToObject(pv, vehicle_names[v], col->per_vehicle[v]);
            if (f == 2) {
                cJSON* tp = cJSON_AddObjectToObject(o, "tuned_parameters");
                for (int v = 0; v < VEHICLES; ++v) {
                    cJSON* p = follow_json(&params[2][v]);
                    cJSON_AddNumberToObject(p, "evaluations", tuned_evals[v]);
                    cJSON_AddNumberToObject(p, "cost", tuned_cost[v]);
                    cJSON_AddItemToObject(tp, vehicle_names[v], p);
                }
            }
            cJSON* runs_o = cJSON_AddObjectToObject(o, "runs");
            for (int c = 0; c < COURSE_TEST_COUNT; ++c) {
                cJSON* co = cJSON_AddObjectToObject(runs_o, courses[c].name);
                for (int v = 0; v < VEHICLES; ++v)
                    cJSON_AddItemToObject(co, vehicle_names[v], result_json(&col->runs[c][v]));
            }
            cJSON* so = cJSON_AddObjectToObject(soak_o, follower_names[f]);
            cJSON_AddNumberToObject(so, "drive_seconds", col->soak_drive);
            cJSON_AddNumberToObject(so, "stuck_events", col->soak_stuck);
            cJSON_AddNumberToObject(so, "routes_completed", col->soak_routes);
            cJSON* spv = cJSON_AddObjectToObject(so, "per_vehicle");
            for (int v = 0; v < VEHICLES; ++v) cJSON_AddNumberToObject(spv, vehicle_names[v], col->soak_by_vehicle[v]);
            if (isfinite(col->soak_spe)) cJSON_AddNumberToObject(so, "seconds_per_stuck", col->soak_spe);
            else cJSON_AddNullToObject(so, "seconds_per_stuck");
        }
        cJSON_AddNumberToObject(soak_o, "vehicles", 64);
        cJSON_AddNumberToObject(soak_o, "trials", (double)soak_trials);
        cJSON_AddNumberToObject(soak_o, "seconds_per_trial", (double)soak_seconds);
        cJSON_AddItemToObject(root, "soak", soak_o);
        cJSON* tm = cJSON_AddObjectToObject(root, "wall_seconds");
        cJSON_AddNumberToObject(tm, "tuning", t_tune);
        cJSON_AddNumberToObject(tm, "runs", t_runs);
        cJSON_AddNumberToObject(tm, "soak", t_soak);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("%-36s", "");
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %19s", follower_titles[f]);
        printf("\n");
#define ROW_I(title, field)                                                              \
    do {                                                                                 \
        printf("%-36s", title);                                                          \
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %19d", cols[f].field);              \
        printf("\n");                                                                    \
    } while (0)
#define ROW_F(title, fmt, field)                                                         \
    do {                                                                                 \
        printf("%-36s", title);                                                          \
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %19" fmt, cols[f].field);           \
        printf("\n");                                                                    \
    } while (0)
        ROW_I("Total stuck trials (/60) (lower)", stuck_trials);
        ROW_I("Total stuck events (lower)", stuck_events);
        ROW_F("Cross track error mean (m) (lower)", ".2f", cte_mean);
        ROW_F("Total time mean (s) (lower)", ".1f", time_mean);
        ROW_F("Inside corridor mean (%) (higher)", ".0f", inside_mean);
        ROW_F("Speed mean (m/s) (higher)", ".2f", speed_mean);
        ROW_I("Completed (/60) (higher)", completed);
        ROW_I("Teleports (of the stuck events)", teleports);
        printf("Breakdown of stuck events by vehicle (lower)\n");
        for (int v = 0; v < VEHICLES; ++v) {
            printf("  %-34s", vehicle_names[v]);
            for (int f = 0; f < FOLLOWERS; ++f) printf(" %19d", cols[f].per_vehicle[v]);
            printf("\n");
        }
        printf("Soak: 64 vehicles, %d x %d s: seconds of driving per stuck event\n", (int)soak_trials,
               (int)soak_seconds);
        ROW_F("  seconds per stuck (higher)", ".0f", soak_spe);
        ROW_I("  stuck events", soak_stuck);
        for (int v = 0; v < VEHICLES; ++v) {
            printf("    %-32s", vehicle_names[v]);
            for (int f = 0; f < FOLLOWERS; ++f) printf(" %19d", cols[f].soak_by_vehicle[v]);
            printf("\n");
        }
#undef ROW_I
#undef ROW_F
        printf("(wall time: tuning %.1f s, runs %.1f s, soak %.1f s)\n", t_tune, t_runs, t_soak);
    }
out:
    for (int c = 0; c < COURSE_TEST_COUNT; ++c) course_free(&courses[c]);
    free(courses);
    free(cols);
    return failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

static void experiment_list_help(void)
{
    printf("Usage: shoal experiment KIND [options]\n\n"
           "Run one of the papers' experiments and report what it measures.\n\n"
           "Kinds ('shoal experiment KIND --help' lists a kind's own options):\n"
           "  pathfollow   ground-vehicle path following: Table I of the paper and a soak run\n"
           "  planner      planner agents: Figures 6 and 7 of seed 004 and a 15 v 15 fleet battle\n"
           "  avoid        obstacle avoidance (seed 003) over offsets, speeds and radii: entries\n\n");
    fputs(cli_exit_codes_help, stdout);
}

int cmd_experiment(int argc, char** argv)
{
    if (argc < 2) {
        experiment_list_help();
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        experiment_list_help();
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "pathfollow") == 0) return experiment_pathfollow(argc - 1, argv + 1);
    if (strcmp(argv[1], "planner") == 0) return experiment_planner(argc - 1, argv + 1);
    if (strcmp(argv[1], "avoid") == 0) return experiment_avoid(argc - 1, argv + 1);
    return cli_usage_error("experiment", "unknown experiment '%s' (pathfollow, planner, avoid)", argv[1]);
}
