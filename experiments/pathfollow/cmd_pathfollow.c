/* `shoal pathfollow` (one vehicle on one course) and `shoal experiment
 * pathfollow` (the Table I experiment of de Schaetzen and Sestini,
 * "Efficient ground vehicle path following in game AI").
 * Course files (--path FILE): experiments/pathfollow/course_file.c. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"
#include "experiments/pathfollow/courses.h"
#include "experiments/pathfollow/pathfollow_runs.h"
#include "cli/stats.h"

#ifdef _OPENMP
#include <omp.h>
#endif

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

static cJSON* result_json(const run_result_t* r)
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
    if (strcmp(s, "proposed") == 0)
        *out = SHOAL_FOLLOWER_PROPOSED;
    else if (strcmp(s, "baseline") == 0)
        *out = SHOAL_FOLLOWER_BASELINE;
    else
        return 0;
    return 1;
}

/* ---- shoal pathfollow ---------------------------------------------------- */

typedef struct pathfollow_options_t {
    const char *vehicle, *path, *course, *follower, *csv;
    int json;
} pathfollow_options_t;

#define PF_STRING(name, metavar, field, help) CLI_STRING_ROW(name, metavar, pathfollow_options_t, field, help)

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
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(pathfollow_options_t, json),
     .help = "one JSON object instead of text"},
};

static const cli_spec_t pathfollow_spec = {
    .command = "pathfollow",
    .usage = "--vehicle NAME (--path FILE | --course NAME) [options]",
    .about = "Drive one ground vehicle along one path with the path follower and report\n"
             "the run's metrics.\n",
    .options = pathfollow_options,
    .option_count = CLI_COUNT(pathfollow_options),
};

static int cmd_pathfollow(int argc, char** argv)
{
    pathfollow_options_t opt = {.follower = "proposed"};
    int stop = cli_parse(&pathfollow_spec, argc, argv, &opt, NULL, NULL);
    if (stop >= 0) return stop;
    const char *vehicle = opt.vehicle, *path = opt.path, *course_name = opt.course, *csv = opt.csv,
               *kind = opt.follower;
    int json = opt.json;
    if (!vehicle) return cli_usage_error("pathfollow", "--vehicle is required");
    if (!path == !course_name) return cli_usage_error("pathfollow", "give one of --path and --course");
    shoal_follower_t follower;
    if (!parse_follower(kind, &follower))
        return cli_usage_error("pathfollow", "--follower: expected proposed or baseline, got '%s'", kind);
    shoal_ground_vehicle_t veh;
    if (shoal_ground_vehicle_preset(vehicle, &veh, NULL) != SHOAL_OK)
        return cli_usage_error("pathfollow",
                               "--vehicle: unknown '%s' (buggy, car, apc, truck, tank, hovercraft)", vehicle);
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
    run_result_t r;
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

/* Every run of one follower: runs[t][c][v] is trial t of vehicle v on
 * course c. A trial of the whole table (60 runs, one per course and
 * vehicle, each from its own perturbed start) is the unit the statistics
 * count: its totals are independent from trial to trial, and every
 * follower sees the same starts (pf_trial_start), so differences between
 * followers are paired. */
typedef struct column {
    run_result_t* runs; /* [trials][COURSE_TEST_COUNT][VEHICLES] */
    double soak_drive, soak_spe;
    int soak_stuck, soak_routes;
    int soak_by_vehicle[VEHICLES];
    int64_t soak_touches, soak_touch_frames;
    double soak_overlap_max;
    double* soak_trial_spe; /* seconds per stuck event of each soak trial (INFINITY: none) */
} column_t;

static const run_result_t* run_at(const column_t* col, int t, int c, int v)
{
    return &col->runs[((size_t)t * COURSE_TEST_COUNT + (size_t)c) * VEHICLES + (size_t)v];
}

/* What one trial of the table gives, over a subset of its runs (the whole
 * table, a course or a vehicle). */
enum { M_STUCK, M_STUCK_RUNS, M_TIME, M_CTE, M_INSIDE, M_SPEED, M_COMPLETED, M_TELEPORTS, M_COUNT };

static void trial_metrics(const column_t* col, int t, int course, int vehicle, double m[M_COUNT])
{
    memset(m, 0, sizeof(double) * M_COUNT);
    int n = 0;
    for (int c = 0; c < COURSE_TEST_COUNT; ++c)
        for (int v = 0; v < VEHICLES; ++v) {
            if ((course >= 0 && c != course) || (vehicle >= 0 && v != vehicle)) continue;
            const run_result_t* r = run_at(col, t, c, v);
            m[M_STUCK] += r->stuck_events;
            m[M_STUCK_RUNS] += r->stuck_events > 0;
            m[M_TIME] += r->time;
            m[M_CTE] += r->cte_mean;
            m[M_INSIDE] += r->inside_pct;
            m[M_SPEED] += r->speed_mean;
            m[M_COMPLETED] += r->completed;
            m[M_TELEPORTS] += r->teleports;
            n++;
        }
    m[M_TIME] /= n;
    m[M_CTE] /= n;
    m[M_INSIDE] /= n;
    m[M_SPEED] /= n;
}

/* The mean over trials of metric k, with its 95 % t interval. */
static stats_mean_t over_trials(const column_t* col, int trials, int course, int vehicle, int k,
                                double* scratch)
{
    double m[M_COUNT];
    for (int t = 0; t < trials; ++t) {
        trial_metrics(col, t, course, vehicle, m);
        scratch[t] = m[k];
    }
    return stats_mean_ci(scratch, trials);
}

/* The paired difference follower - baseline of metric k, per trial. */
static stats_mean_t paired_difference(const column_t* col, const column_t* base, int trials, int k,
                                      double* scratch)
{
    double a[M_COUNT], b[M_COUNT];
    for (int t = 0; t < trials; ++t) {
        trial_metrics(col, t, -1, -1, a);
        trial_metrics(base, t, -1, -1, b);
        scratch[t] = a[k] - b[k];
    }
    return stats_mean_ci(scratch, trials);
}

/* Runs (of the subset) with a stuck event, or completed, pooled over trials. */
static stats_prop_t pooled(const column_t* col, int trials, int course, int vehicle, int completed)
{
    int k = 0, n = 0;
    for (int t = 0; t < trials; ++t)
        for (int c = 0; c < COURSE_TEST_COUNT; ++c)
            for (int v = 0; v < VEHICLES; ++v) {
                if ((course >= 0 && c != course) || (vehicle >= 0 && v != vehicle)) continue;
                const run_result_t* r = run_at(col, t, c, v);
                k += completed ? r->completed : r->stuck_events > 0;
                n++;
            }
    return stats_wilson(k, n);
}

static void json_number_or_null(cJSON* o, const char* key, double x)
{
    if (isfinite(x))
        cJSON_AddNumberToObject(o, key, x);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON* mean_json(stats_mean_t s)
{
    cJSON* o = cJSON_CreateObject();
    json_number_or_null(o, "mean", s.mean);
    json_number_or_null(o, "lo", s.lo);
    json_number_or_null(o, "hi", s.hi);
    json_number_or_null(o, "sd", s.sd);
    return o;
}

static cJSON* prop_json(stats_prop_t s)
{
    cJSON* o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "k", s.k);
    cJSON_AddNumberToObject(o, "n", s.n);
    json_number_or_null(o, "p", s.p);
    json_number_or_null(o, "lo", s.lo);
    json_number_or_null(o, "hi", s.hi);
    return o;
}

/* "12.3 [10.1, 14.5]" (the interval left out when there is none). */
static const char* fmt_mean(char* buf, size_t size, stats_mean_t s, int decimals)
{
    if (isfinite(s.lo))
        snprintf(buf, size, "%.*f [%.*f, %.*f]", decimals, s.mean, decimals, s.lo, decimals, s.hi);
    else
        snprintf(buf, size, "%.*f", decimals, s.mean);
    return buf;
}

static const char* fmt_prop(char* buf, size_t size, stats_prop_t s)
{
    snprintf(buf, size, "%.1f%% [%.1f, %.1f]", 100.0 * s.p, 100.0 * s.lo, 100.0 * s.hi);
    return buf;
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
    int json, no_soak_contacts;
    int64_t tune_evals, soak_trials, soak_seconds, trials, seed, threads;
    double spread, jitter;
} experiment_options_t;

static const cli_option_t experiment_options[] = {
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(experiment_options_t, json),
     .help = "one JSON object instead of the tables"},
    {.name = "--trials",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(experiment_options_t, trials),
     .min = 1,
     .max = 1000,
     .help = "trials of the whole table, 1..1000 (default 20): every trial drives each vehicle over "
             "each course once, from a start perturbed by its own seeded draw"},
    {.name = "--seed",
     .metavar = "S",
     .kind = CLI_INT,
     CLI_AT(experiment_options_t, seed),
     .max = 4294967295.0,
     .help = "seed of the trials' starts, 0..4294967295 (default 1)"},
    {.name = "--spread",
     .metavar = "X",
     .kind = CLI_NUMBER,
     CLI_AT(experiment_options_t, spread),
     .max = 10,
     .help = "scale of the start perturbation, 0..10 (default 1: lateral offset up to 1 m, heading "
             "up to 10 degrees, speed 0 to 3 m/s; 0: every trial from the nominal start)"},
    {.name = "--jitter",
     .metavar = "M",
     .kind = CLI_NUMBER,
     CLI_AT(experiment_options_t, jitter),
     .max = 5,
     .help = "each trial moves every waypoint of a course but its ends by up to M m, 0..5 (default 1; "
             "0: every trial on the course's own path)"},
    {.name = "--threads",
     .metavar = "T",
     .kind = CLI_INT,
     CLI_AT(experiment_options_t, threads),
     .max = 1024,
     .help = "runs in parallel, 0..1024 (default 0: every core). Only timings depend on T"},
    {.name = "--runs-dir",
     .metavar = "DIR",
     .kind = CLI_STRING,
     CLI_AT(experiment_options_t, runs_dir),
     .help = "write every run's trajectory as CSV under DIR (FOLLOWER/COURSE-VEHICLE-TRIAL.csv)"},
    {.name = "--tune-evals",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(experiment_options_t, tune_evals),
     .max = 100000,
     .help = "cost evaluations per vehicle for the tuner, 0..100000 (default 60)"},
    {.name = "--soak-seconds",
     .metavar = "S",
     .kind = CLI_INT,
     CLI_AT(experiment_options_t, soak_seconds),
     .max = 86400,
     .help = "length of each soak trial, whole seconds 0..86400 (default 300)"},
    {.name = "--soak-trials",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(experiment_options_t, soak_trials),
     .max = 64,
     .help = "soak trials per follower, 0..64 (default 5)"},
    {.name = "--no-soak-contacts",
     .kind = CLI_FLAG,
     CLI_AT(experiment_options_t, no_soak_contacts),
     .help = "soak vehicles drive through each other (no contact pass), as before contacts"},
    {.name = "--export-courses",
     .metavar = "DIR",
     .kind = CLI_STRING,
     CLI_AT(experiment_options_t, export_dir),
     .help = "write the courses as JSON course files and exit"},
};

static const cli_spec_t experiment_spec = {
    .command = "experiment pathfollow",
    .usage = "[options]",
    .about = "The Table I experiment: ten test courses, six vehicles, four followers\n"
             "(baseline; proposed with the paper's parameters; proposed with per-vehicle\n"
             "parameters from a Nelder-Mead tuner run on seven other courses; proposed with\n"
             "the paper's Algorithm 1 alone, without the vehicle limits), over --trials\n"
             "randomized trials of the whole table, then the soak run (64 vehicles on random\n"
             "routes through a town, their bodies in contact).\n",
    .options = experiment_options,
    .option_count = CLI_COUNT(experiment_options),
    .details = "Statistics: a trial of the table (60 runs) is the unit. Means over trials\n"
               "come with 95 % confidence intervals from Student's t (n - 1 degrees of\n"
               "freedom); proportions of runs (with a stuck event, completed) pooled over\n"
               "trials come with Wilson score intervals. Every follower drives from the same\n"
               "starts, so its difference from the baseline is taken trial by trial (paired).\n"
               "The same seed gives the same figures on any thread count.\n",
};

static void print_row_mean(const char* title, const column_t* cols, int trials, int course, int vehicle,
                           int k, int decimals, double* scratch)
{
    char buf[64];
    printf("%-34s", title);
    for (int f = 0; f < FOLLOWERS; ++f)
        printf(" %24s", fmt_mean(buf, sizeof buf, over_trials(&cols[f], trials, course, vehicle, k, scratch),
                                 decimals));
    printf("\n");
}

static int experiment_pathfollow(int argc, char** argv)
{
    experiment_options_t opt = {.tune_evals = 60,
                                .soak_trials = 5,
                                .soak_seconds = 300,
                                .trials = 20,
                                .seed = 1,
                                .spread = 1.0,
                                .jitter = 1.0};
    int stop = cli_parse(&experiment_spec, argc, argv, &opt, NULL, NULL);
    if (stop >= 0) return stop;
    const char *runs_dir = opt.runs_dir, *export_dir = opt.export_dir;
    int json = opt.json, soak_contacts = !opt.no_soak_contacts;
    int64_t tune_evals = opt.tune_evals, soak_trials = opt.soak_seconds > 0 ? opt.soak_trials : 0,
            soak_seconds = opt.soak_seconds, threads = opt.threads;
    const int trials = (int)opt.trials;
    const uint64_t seed = (uint64_t)opt.seed;
    const float spread = (float)opt.spread, jitter = (float)opt.jitter;
    if (export_dir) return export_courses(export_dir);
#ifdef _OPENMP
    if (threads == 0) threads = omp_get_num_procs();
#else
    threads = 1;
#endif
    if (threads < 1) threads = 1;
    const int nthreads = (int)threads;
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
    column_t cols[FOLLOWERS];
    memset(cols, 0, sizeof cols);
    course_t* courses = calloc(COURSE_TEST_COUNT, sizeof *courses);
    double* scratch = calloc((size_t)trials + 64, sizeof *scratch);
    int failed = !courses || !scratch;
    for (int f = 0; f < FOLLOWERS && !failed; ++f) {
        cols[f].runs = calloc((size_t)trials * COURSE_TEST_COUNT * VEHICLES, sizeof *cols[f].runs);
        cols[f].soak_trial_spe = calloc(64, sizeof *cols[f].soak_trial_spe);
        failed = !cols[f].runs || !cols[f].soak_trial_spe;
    }
    shoal_ground_vehicle_t veh[VEHICLES];
    shoal_path_follow_t params[FOLLOWERS][VEHICLES];
    double tuned_cost[VEHICLES];
    int tuned_evals[VEHICLES];
    char err[512] = "out of memory";
    if (failed) goto out;
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
        snprintf(err, sizeof err, "out of memory building the courses");
        goto out;
    }
    /* the tuner, one vehicle per thread (on the tuning courses' nominal starts) */
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
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
    /* followers x trials x courses: one world each, the six vehicles in it
     * (they do not touch: no contact pass), results stored by index */
    const int jobs = FOLLOWERS * trials * COURSE_TEST_COUNT;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int j = 0; j < jobs; ++j) {
        if (failed) continue;
        int f = j / (trials * COURSE_TEST_COUNT);
        int t = (j / COURSE_TEST_COUNT) % trials;
        int c = j % COURSE_TEST_COUNT;
        char e[512];
        char names[VEHICLES][1024];
        const char* csvs[VEHICLES];
        pf_start_t starts[VEHICLES];
        for (int v = 0; v < VEHICLES; ++v) {
            starts[v] = pf_trial_start(seed, v, c, t, spread);
            csvs[v] = NULL;
            if (runs_dir) {
                snprintf(names[v], sizeof names[v], "%s/%s/%s-%s-%d.csv", runs_dir, follower_names[f],
                         courses[c].name, vehicle_names[v], t);
                csvs[v] = names[v];
            }
        }
        run_result_t* out = &cols[f].runs[((size_t)t * COURSE_TEST_COUNT + (size_t)c) * VEHICLES];
        course_t trial_course = courses[c]; /* the terrain and obstacles shared, its own path */
        float* xyz = malloc((size_t)courses[c].count * 3 * sizeof(float));
        int rc = -1;
        snprintf(e, sizeof e, "out of memory");
        if (xyz) {
            pf_trial_path(&courses[c], seed, c, t, jitter, xyz);
            trial_course.xyz = xyz;
            rc = pf_run_course_from(&trial_course, VEHICLES, veh, params[f], starts, csvs, out, e, sizeof e);
        }
        free(xyz);
        if (rc != 0) {
#pragma omp critical
            {
                failed = 1;
                snprintf(err, sizeof err, "%s", e);
            }
        }
    }
    double t_runs = cli_now_seconds() - t0 - t_tune;
    /* soak: every follower, every trial */
    soak_result_t soak[FOLLOWERS][64];
    memset(soak, 0, sizeof soak);
#pragma omp parallel for schedule(dynamic, 1) collapse(2) num_threads(nthreads)
    for (int f = 0; f < FOLLOWERS; ++f)
        for (int t = 0; t < (int)soak_trials; ++t) {
            if (failed) continue;
            char e[512];
            shoal_follower_t kind = f == 0 ? SHOAL_FOLLOWER_BASELINE : SHOAL_FOLLOWER_PROPOSED;
            if (pf_soak(kind, params[f], 64, (double)soak_seconds, 1000u + (uint64_t)t, soak_contacts,
                        &soak[f][t], e, sizeof e) != 0) {
#pragma omp critical
                {
                    failed = 1;
                    snprintf(err, sizeof err, "%s", e);
                }
            }
        }
    double t_soak = cli_now_seconds() - t0 - t_tune - t_runs;
    if (failed) goto out;
    for (int f = 0; f < FOLLOWERS; ++f) {
        column_t* col = &cols[f];
        for (int t = 0; t < (int)soak_trials; ++t) {
            const soak_result_t* s = &soak[f][t];
            col->soak_drive += s->drive_seconds;
            col->soak_stuck += s->stuck_events;
            col->soak_routes += s->routes_completed;
            col->soak_touches += s->touches;
            col->soak_touch_frames += s->touch_frames;
            if (s->overlap_max > col->soak_overlap_max) col->soak_overlap_max = s->overlap_max;
            for (int v = 0; v < VEHICLES; ++v) col->soak_by_vehicle[v] += s->stuck_by_preset[v];
            col->soak_trial_spe[t] = s->stuck_events > 0 ? s->drive_seconds / s->stuck_events : INFINITY;
        }
        col->soak_spe = col->soak_stuck > 0 ? col->soak_drive / col->soak_stuck : INFINITY;
    }
    /* A trial's seconds per stuck event, when every trial had one. */
    stats_mean_t soak_spe_ci[FOLLOWERS];
    for (int f = 0; f < FOLLOWERS; ++f) {
        int all = 1;
        for (int t = 0; t < (int)soak_trials; ++t) all &= isfinite(cols[f].soak_trial_spe[t]);
        soak_spe_ci[f] = all ? stats_mean_ci(cols[f].soak_trial_spe, (int)soak_trials)
                             : (stats_mean_t){
                                   .mean = NAN,
                                   .sd = NAN,
                                   .lo = NAN,
                                   .hi = NAN,
                               };
    }
    static const char* const metric_keys[M_COUNT] = {
        "stuck_events",        "stuck_runs", "total_time_mean", "cte_mean",
        "inside_corridor_pct", "speed_mean", "completed",       "teleports"};
    const int runs = COURSE_TEST_COUNT * VEHICLES;
    if (json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "experiment", "pathfollow");
        cJSON_AddNumberToObject(root, "trials", trials);
        cJSON_AddNumberToObject(root, "seed", (double)seed);
        cJSON_AddNumberToObject(root, "spread", spread);
        cJSON_AddNumberToObject(root, "jitter", jitter);
        cJSON_AddNumberToObject(root, "runs_per_trial", runs);
        cJSON_AddNumberToObject(root, "dt", PF_RUN_DT);
        cJSON_AddNumberToObject(root, "time_limit", PF_RUN_TIME_LIMIT);
        cJSON_AddStringToObject(root, "intervals",
                                "95 %: Student's t over trials for means (a trial: the 60 runs), "
                                "Wilson for proportions of runs pooled over trials");
        cJSON* soak_o = cJSON_CreateObject();
        for (int f = 0; f < FOLLOWERS; ++f) {
            const column_t* col = &cols[f];
            cJSON* o = cJSON_AddObjectToObject(root, follower_names[f]);
            for (int k = 0; k < M_COUNT; ++k)
                cJSON_AddItemToObject(o, metric_keys[k],
                                      mean_json(over_trials(col, trials, -1, -1, k, scratch)));
            cJSON_AddItemToObject(o, "stuck_run_fraction", prop_json(pooled(col, trials, -1, -1, 0)));
            cJSON_AddItemToObject(o, "completed_fraction", prop_json(pooled(col, trials, -1, -1, 1)));
            if (f > 0) {
                cJSON* d = cJSON_AddObjectToObject(o, "minus_baseline");
                for (int k = 0; k < M_COUNT; ++k)
                    cJSON_AddItemToObject(d, metric_keys[k],
                                          mean_json(paired_difference(col, &cols[0], trials, k, scratch)));
            }
            cJSON* pv = cJSON_AddObjectToObject(o, "per_vehicle");
            for (int v = 0; v < VEHICLES; ++v) {
                cJSON* vo = cJSON_AddObjectToObject(pv, vehicle_names[v]);
                cJSON_AddItemToObject(vo, "stuck_events",
                                      mean_json(over_trials(col, trials, -1, v, M_STUCK, scratch)));
                cJSON_AddItemToObject(vo, "stuck_run_fraction", prop_json(pooled(col, trials, -1, v, 0)));
                cJSON_AddItemToObject(vo, "total_time_mean",
                                      mean_json(over_trials(col, trials, -1, v, M_TIME, scratch)));
            }
            cJSON* pc = cJSON_AddObjectToObject(o, "per_course");
            for (int c = 0; c < COURSE_TEST_COUNT; ++c) {
                cJSON* co = cJSON_AddObjectToObject(pc, courses[c].name);
                cJSON_AddItemToObject(co, "stuck_events",
                                      mean_json(over_trials(col, trials, c, -1, M_STUCK, scratch)));
                cJSON_AddItemToObject(co, "stuck_run_fraction", prop_json(pooled(col, trials, c, -1, 0)));
                cJSON_AddItemToObject(co, "total_time_mean",
                                      mean_json(over_trials(col, trials, c, -1, M_TIME, scratch)));
                cJSON_AddItemToObject(co, "completed_fraction", prop_json(pooled(col, trials, c, -1, 1)));
            }
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
                for (int v = 0; v < VEHICLES; ++v) {
                    cJSON* ro = cJSON_AddObjectToObject(co, vehicle_names[v]);
                    cJSON_AddItemToObject(ro, "stuck_events",
                                          mean_json(over_trials(col, trials, c, v, M_STUCK, scratch)));
                    cJSON_AddItemToObject(ro, "stuck_run_fraction", prop_json(pooled(col, trials, c, v, 0)));
                    cJSON_AddItemToObject(ro, "time",
                                          mean_json(over_trials(col, trials, c, v, M_TIME, scratch)));
                    cJSON_AddItemToObject(ro, "completed_fraction", prop_json(pooled(col, trials, c, v, 1)));
                    if (trials == 1) cJSON_AddItemToObject(ro, "run", result_json(run_at(col, 0, c, v)));
                }
            }
            cJSON* so = cJSON_AddObjectToObject(soak_o, follower_names[f]);
            cJSON_AddNumberToObject(so, "drive_seconds", col->soak_drive);
            cJSON_AddNumberToObject(so, "stuck_events", col->soak_stuck);
            cJSON_AddNumberToObject(so, "routes_completed", col->soak_routes);
            cJSON* spv = cJSON_AddObjectToObject(so, "per_vehicle");
            for (int v = 0; v < VEHICLES; ++v)
                cJSON_AddNumberToObject(spv, vehicle_names[v], col->soak_by_vehicle[v]);
            json_number_or_null(so, "seconds_per_stuck", col->soak_spe);
            cJSON_AddItemToObject(so, "seconds_per_stuck_per_trial", mean_json(soak_spe_ci[f]));
            cJSON_AddNumberToObject(so, "touches", (double)col->soak_touches);
            cJSON_AddNumberToObject(so, "touch_frames", (double)col->soak_touch_frames);
            cJSON_AddNumberToObject(so, "overlap_max", col->soak_overlap_max);
        }
        cJSON_AddNumberToObject(soak_o, "vehicles", 64);
        cJSON_AddNumberToObject(soak_o, "trials", (double)soak_trials);
        cJSON_AddNumberToObject(soak_o, "seconds_per_trial", (double)soak_seconds);
        cJSON_AddBoolToObject(soak_o, "contacts", soak_contacts);
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
        char buf[64];
        printf("Table I: %d trial%s of %d runs (seed %llu, spread %g, jitter %g m); mean per trial [95 %% "
               "CI, t]\n",
               trials, trials == 1 ? "" : "s", runs, (unsigned long long)seed, (double)spread,
               (double)jitter);
        printf("%-34s", "");
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %24s", follower_titles[f]);
        printf("\n");
        print_row_mean("Stuck events (/60 runs) (lower)", cols, trials, -1, -1, M_STUCK, 2, scratch);
        print_row_mean("Stuck runs (/60) (lower)", cols, trials, -1, -1, M_STUCK_RUNS, 2, scratch);
        printf("%-34s", "Stuck runs, pooled [Wilson]");
        for (int f = 0; f < FOLLOWERS; ++f)
            printf(" %24s", fmt_prop(buf, sizeof buf, pooled(&cols[f], trials, -1, -1, 0)));
        printf("\n");
        print_row_mean("Cross track error mean (m) (lower)", cols, trials, -1, -1, M_CTE, 2, scratch);
        print_row_mean("Total time mean (s) (lower)", cols, trials, -1, -1, M_TIME, 1, scratch);
        print_row_mean("Inside corridor mean (%) (higher)", cols, trials, -1, -1, M_INSIDE, 1, scratch);
        print_row_mean("Speed mean (m/s) (higher)", cols, trials, -1, -1, M_SPEED, 2, scratch);
        print_row_mean("Completed (/60) (higher)", cols, trials, -1, -1, M_COMPLETED, 2, scratch);
        print_row_mean("Teleports (of the stuck events)", cols, trials, -1, -1, M_TELEPORTS, 2, scratch);
        printf("Minus the baseline, trial by trial\n");
        static const int diff_keys[3] = {M_STUCK, M_STUCK_RUNS, M_TIME};
        static const char* const diff_titles[3] = {"  stuck events", "  stuck runs", "  total time mean (s)"};
        for (int d = 0; d < 3; ++d) {
            printf("%-34s %24s", diff_titles[d], "");
            for (int f = 1; f < FOLLOWERS; ++f)
                printf(" %24s", fmt_mean(buf, sizeof buf,
                                         paired_difference(&cols[f], &cols[0], trials, diff_keys[d], scratch),
                                         diff_keys[d] == M_TIME ? 1 : 2));
            printf("\n");
        }
        printf("Stuck events by vehicle (/10 runs)\n");
        for (int v = 0; v < VEHICLES; ++v) {
            char title[64];
            snprintf(title, sizeof title, "  %s", vehicle_names[v]);
            print_row_mean(title, cols, trials, -1, v, M_STUCK, 2, scratch);
        }
        printf("Stuck events by course (/6 runs)\n");
        for (int c = 0; c < COURSE_TEST_COUNT; ++c) {
            char title[64];
            snprintf(title, sizeof title, "  %s", courses[c].name);
            print_row_mean(title, cols, trials, c, -1, M_STUCK, 2, scratch);
        }
        printf("Total time mean by course (s)\n");
        for (int c = 0; c < COURSE_TEST_COUNT; ++c) {
            char title[64];
            snprintf(title, sizeof title, "  %s", courses[c].name);
            print_row_mean(title, cols, trials, c, -1, M_TIME, 1, scratch);
        }
        printf("Per run: mean stuck events over the trials / runs with a stuck event / not completed\n");
        for (int f = 0; f < FOLLOWERS; ++f) {
            printf("  %s\n  %-16s", follower_titles[f], "");
            for (int v = 0; v < VEHICLES; ++v) printf(" %15s", vehicle_names[v]);
            printf("\n");
            for (int c = 0; c < COURSE_TEST_COUNT; ++c) {
                printf("  %-16s", courses[c].name);
                for (int v = 0; v < VEHICLES; ++v) {
                    stats_mean_t m = over_trials(&cols[f], trials, c, v, M_STUCK, scratch);
                    stats_prop_t s = pooled(&cols[f], trials, c, v, 0);
                    stats_prop_t d = pooled(&cols[f], trials, c, v, 1);
                    snprintf(buf, sizeof buf, "%.2f/%d/%d", m.mean, s.k, d.n - d.k);
                    printf(" %15s", buf);
                }
                printf("\n");
            }
        }
        printf("Soak: 64 vehicles, %d x %d s, %s\n", (int)soak_trials, (int)soak_seconds,
               soak_contacts ? "bodies in contact" : "no contacts (they drive through each other)");
        printf("%-34s", "  seconds per stuck (higher)");
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %24.0f", cols[f].soak_spe);
        printf("\n%-34s", "  per trial [95% CI, t]");
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %24s", fmt_mean(buf, sizeof buf, soak_spe_ci[f], 0));
        printf("\n%-34s", "  stuck events");
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %24d", cols[f].soak_stuck);
        printf("\n");
        for (int v = 0; v < VEHICLES; ++v) {
            printf("    %-30s", vehicle_names[v]);
            for (int f = 0; f < FOLLOWERS; ++f) printf(" %24d", cols[f].soak_by_vehicle[v]);
            printf("\n");
        }
        printf("%-34s", "  vehicle pairs that touched");
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %24lld", (long long)cols[f].soak_touches);
        printf("\n%-34s", "  deepest overlap (m)");
        for (int f = 0; f < FOLLOWERS; ++f) printf(" %24.3f", cols[f].soak_overlap_max);
        printf("\n(wall time: tuning %.1f s, runs %.1f s, soak %.1f s, %d threads)\n", t_tune, t_runs, t_soak,
               nthreads);
    }
out:
    if (failed) cli_error("%s", err);
    if (courses)
        for (int c = 0; c < COURSE_TEST_COUNT; ++c) course_free(&courses[c]);
    free(courses);
    free(scratch);
    for (int f = 0; f < FOLLOWERS; ++f) {
        free(cols[f].runs);
        free(cols[f].soak_trial_spe);
    }
    return failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

const cli_command_t cli_command_pathfollow = {
    "pathfollow", "one ground vehicle following one path (the Table I follower or the baseline)",
    cmd_pathfollow};
const cli_command_t cli_experiment_pathfollow = {
    "pathfollow",
    "ground-vehicle path following: Table I of de Schaetzen and Sestini's\npaper and a soak run",
    experiment_pathfollow};
