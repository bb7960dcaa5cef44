/* `shoal bench crowd`: crowd agents (shoal/crowd.h) with RVO2's Circle
 * parameters (the "rvo2" preset: radius 1.5 m, max speed 2 m/s, preferred
 * speed 1 m/s, neighbors within 15 m, the 10 nearest, time horizons 10 s),
 * arrive with gain 1 toward the goal, so the preferred velocity is the goal
 * vector shortened to 1 m/s, exactly as in RVO2's example. The scenes
 * (grid, gridshuf, circle; 2D or 3D) are scenes/crowd_scene.h's, which
 * benchmark/rvo2/driver.cc shares, so RVO2 can be run on the same agents.
 *
 * The world: unbounded, dt 0.25 s, the default cell size (the spatial hash
 * sizes itself from the neighbor distance) and the default reorder interval
 * (storage is sorted by cell every 32 steps, so gridshuf's shuffled order
 * lasts until the first reorder; the shuffle is of the add order only).
 * Agents are added with the bulk add, in the scene's order.
 *
 * Timing: each step alone (shoal_world_step between two clock reads), the
 * sum over the timed steps; warm-up steps are not timed. Quality is
 * measured between steps, outside the timed part, after every
 * --quality-every-th step (warm-up included, counting from the first) and
 * after the last one: the smallest center distance over the sum of radii,
 * the pairs closer than 99 % of it (summed over the measures), and at the
 * end the mean distance to the goal and the fraction of agents within one
 * radius of theirs. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmark/bench_crowd.h"
#include "benchmark/bench_systems.h"
#include "scenes/crowd_scene.h"
#include "ecs/world.h"
#include "shoal/extend.h"
#include "shoal/shoal.h"
#include "modules/contacts/contacts.h"
#include "modules/crowd/crowd.h"
#include "modules/grid/grid.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

#define CROWD_DT BENCH_CROWD_DT
#define CROWD_CHUNK 65536

typedef struct crowd_opts {
    int scenario;
    int dims;
    int64_t agents;
    int64_t steps;
    int64_t warmup;
    int64_t threads;
    int64_t quality_every;
    int64_t seed; /* < 0: the world default's */
    int json;
    int64_t colored_after; /* the contact pass's serial sweeps before colored ones (contacts.h); -1: all */
} crowd_opts_t;

/* The shared definition: the "rvo2" preset, arrive with gain 1. */
static int crowd_agent_def(shoal_agent_def_t* d)
{
    *d = shoal_agent_default_def();
    if (shoal_crowd_preset("rvo2", &d->crowd, &d->vehicle, NULL) != SHOAL_OK) return 0;
    d->weights[SHOAL_BEHAVIOR_ARRIVE] = 1.0f;
    d->arrive_gain = 1.0f;
    return 1;
}

/* Returns 1, 0 for an error of the world, -1 when out of memory here. */
static int populate(shoal_world_t* w, const crowd_opts_t* o)
{
    shoal_agent_def_t def;
    if (!crowd_agent_def(&def)) return 0;
    float* pos = malloc((size_t)o->agents * 3 * sizeof(float));
    float* goal = malloc((size_t)o->agents * 3 * sizeof(float));
    int ok = pos && goal ? 1 : -1;
    if (ok == 1) crowd_layout(o->scenario, o->dims, o->agents, pos, goal);
    for (int64_t first = 0; ok == 1 && first < o->agents; first += CROWD_CHUNK) {
        int64_t n = o->agents - first < CROWD_CHUNK ? o->agents - first : CROWD_CHUNK;
        shoal_agent_arrays_t arrays;
        memset(&arrays, 0, sizeof arrays);
        arrays.positions = pos + 3 * first;
        arrays.targets = goal + 3 * first;
        ok = shoal_agents_add(w, &def, &arrays, (int32_t)n, NULL) == SHOAL_OK;
    }
    free(pos);
    free(goal);
    return ok;
}

/* The zero-copy columns the figures read (z ones NULL in 2D). */
typedef struct crowd_columns_t {
    const float *x, *y, *z, *gx, *gy, *gz, *r;
    int64_t n;
} crowd_columns_t;

static int column(shoal_world_t* w, const char* name, const float** out)
{
    shoal_column_t c;
    if (shoal_world_column(w, name, &c) != SHOAL_OK || c.type != SHOAL_COLUMN_F32) return 0;
    *out = (const float*)c.data;
    return 1;
}

static int read_columns(shoal_world_t* w, int dims, crowd_columns_t* c)
{
    memset(c, 0, sizeof *c);
    c->n = shoal_world_agent_count(w);
    int ok = column(w, "position.x", &c->x) && column(w, "position.y", &c->y) &&
             column(w, "target.x", &c->gx) && column(w, "target.y", &c->gy) && column(w, "radius", &c->r);
    if (ok && dims == 3) ok = column(w, "position.z", &c->z) && column(w, "target.z", &c->gz);
    return ok;
}

static int measure(shoal_world_t* w, const crowd_opts_t* o, crowd_quality_t* q)
{
    crowd_columns_t c;
    if (!read_columns(w, o->dims, &c)) return 0;
    return crowd_quality_measure(q, c.n, c.x, c.y, c.z, c.r);
}

/* The scene's world on o->threads threads, populated. Returns CLI_EXIT_OK,
 * or prints the error (after "command: ") and returns CLI_EXIT_FAILURE. */
static int crowd_world(const char* command, const crowd_opts_t* o, shoal_world_t** out)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = o->dims;
    def.thread_count = (int32_t)o->threads;
    def.initial_capacity = (int32_t)o->agents;
    if (o->seed >= 0) def.seed = (uint64_t)o->seed;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    if (shoal_world_create(&def, &w, &err) != SHOAL_OK) {
        cli_error("%s: %s", command, err.message);
        return CLI_EXIT_FAILURE;
    }
    contact_data((world_t*)w)->colored_after = (int32_t)o->colored_after;
    int populated = populate(w, o);
    if (populated != 1) {
        cli_error("%s: %s", command, populated < 0 ? "out of memory" : shoal_world_last_error(w));
        shoal_world_destroy(w);
        return CLI_EXIT_FAILURE;
    }
    *out = w;
    return CLI_EXIT_OK;
}

/* The defaults of `shoal bench crowd`: the grid, 2D, quality measured
 * after every step, the library's seed, threads 0 (physical cores). */
#define CROWD_DEFAULTS                                                                                       \
    {                                                                                                        \
        CROWD_GRID, 2, BENCH_CROWD_AGENTS, BENCH_CROWD_STEPS, BENCH_CROWD_WARMUP, 0, 1, -1, 0, 0             \
    }

int bench_crowd_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out)
{
    crowd_opts_t o = CROWD_DEFAULTS;
    o.agents = agents;
    o.threads = threads;
    return crowd_world(command, &o, out);
}

static int bench_crowd_run(const crowd_opts_t* o)
{
    shoal_world_t* w = NULL;
    double setup_start = cli_now_seconds();
    if (crowd_world("bench crowd", o, &w) != CLI_EXIT_OK) return CLI_EXIT_FAILURE;
    double setup_seconds = cli_now_seconds() - setup_start;

    crowd_quality_t q;
    crowd_quality_init(&q);
    const int64_t total = o->warmup + o->steps;
    double seconds = 0.0, quality_seconds = 0.0;
    int64_t phase_ns[GRID_PHASES] = {0};
    for (int64_t s = 1; s <= total; ++s) {
        if (s == o->warmup + 1) shoal_world_reset_stats(w);
        double t0 = cli_now_seconds();
        if (shoal_world_step(w, CROWD_DT) != SHOAL_OK) goto step_failed;
        double t1 = cli_now_seconds();
        if (s > o->warmup) {
            seconds += t1 - t0;
            const grid_t* g = grid_data(w);
            for (int k = 0; g && k < GRID_PHASES; ++k) phase_ns[k] += g->phase_ns[k];
        }
        if (crowd_quality_due(s, total, o->quality_every)) {
            if (!measure(w, o, &q)) goto measure_failed;
            quality_seconds += cli_now_seconds() - t1;
        }
    }
    crowd_columns_t c;
    if (!read_columns(w, o->dims, &c)) goto measure_failed;
    double mean_dist = 0.0, arrived = 0.0;
    crowd_goal_figures(c.n, c.x, c.y, c.z, c.gx, c.gy, c.gz, c.r, &mean_dist, &arrived);
    double agent_steps = (double)o->agents * (double)o->steps;
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)shoal_world_state_hash(w));
    const char* scenario = crowd_scenario_name(o->scenario);

    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "crowd");
        cJSON_AddStringToObject(root, "sim", "shoal");
        cJSON_AddStringToObject(root, "scenario", scenario);
        cJSON_AddNumberToObject(root, "dim", o->dims);
        cJSON_AddNumberToObject(root, "agents", (double)o->agents);
        cJSON_AddNumberToObject(root, "steps", (double)o->steps);
        cJSON_AddNumberToObject(root, "warmup", (double)o->warmup);
        cJSON_AddNumberToObject(root, "threads", shoal_world_thread_count(w));
        cJSON_AddNumberToObject(root, "seed",
                                (double)(o->seed >= 0 ? (uint64_t)o->seed : shoal_world_default_def().seed));
        cJSON_AddNumberToObject(root, "lanes", crowd_lanes(w));
        cJSON_AddNumberToObject(root, "dt", CROWD_DT);
        cJSON_AddNumberToObject(root, "setup_seconds", setup_seconds);
        cJSON_AddNumberToObject(root, "seconds", seconds);
        cJSON_AddNumberToObject(root, "agent_steps_per_s", agent_steps / seconds);
        cJSON_AddNumberToObject(root, "quality_every", (double)o->quality_every);
        cJSON_AddNumberToObject(root, "colored_sweeps_after", (double)o->colored_after);
        cJSON_AddNumberToObject(root, "quality_samples", (double)q.samples);
        cJSON_AddNumberToObject(root, "quality_seconds", quality_seconds);
        if (isfinite(q.min_ratio))
            cJSON_AddNumberToObject(root, "min_pair_distance", q.min_ratio);
        else
            cJSON_AddNullToObject(root, "min_pair_distance");
        cJSON_AddNumberToObject(root, "overlaps", (double)q.overlaps);
        cJSON_AddNumberToObject(root, "mean_dist_to_goal", mean_dist);
        cJSON_AddNumberToObject(root, "arrived", arrived);
        cJSON_AddStringToObject(root, "state_hash", hash);
        cJSON* phases = cJSON_AddObjectToObject(root, "hash_phases");
        for (int k = 0; k < GRID_PHASES; ++k)
            cJSON_AddNumberToObject(phases, grid_phase_name(k),
                                    o->steps > 0 ? (double)phase_ns[k] * 1e-6 / (double)o->steps : 0.0);
        bench_systems_json(root, w, o->agents);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("crowd %dD %s: %lld agents, %d threads, %d lanes, dt %g s\n", o->dims, scenario,
               (long long)o->agents, (int)shoal_world_thread_count(w), crowd_lanes(w), (double)CROWD_DT);
        printf("steps             %lld (+%lld warm-up)\n", (long long)o->steps, (long long)o->warmup);
        printf("setup seconds     %.4f\n", setup_seconds);
        printf("seconds           %.4f (timed steps only)\n", seconds);
        printf("agent-steps/s     %.4g\n", agent_steps / seconds);
        if (o->quality_every > 0)
            printf("quality           measured every %lld steps and at the end: %lld measures, %.3f s\n",
                   (long long)o->quality_every, (long long)q.samples, quality_seconds);
        else
            printf("quality           measured at the end only\n");
        if (isfinite(q.min_ratio))
            printf("min pair distance %.4f (of the sum of radii)\n", q.min_ratio);
        else
            printf("min pair distance none within %.1f radii\n", 4.0);
        printf("overlaps          %lld (pairs under 99 %% of the sum of radii, summed over measures)\n",
               (long long)q.overlaps);
        printf("mean dist to goal %.3f m\n", mean_dist);
        printf("arrived           %.4f\n", arrived);
        printf("state_hash        %s\n\n", hash);
        bench_systems_table(w, o->agents);
    }
    crowd_quality_free(&q);
    shoal_world_destroy(w);
    return CLI_EXIT_OK;
step_failed:
    cli_error("bench crowd: step failed: %s", shoal_world_last_error(w));
    crowd_quality_free(&q);
    shoal_world_destroy(w);
    return CLI_EXIT_FAILURE;
measure_failed:
    cli_error("bench crowd: could not measure (out of memory or a missing column)");
    crowd_quality_free(&q);
    shoal_world_destroy(w);
    return CLI_EXIT_FAILURE;
}

/* ---- options ---------------------------------------------------------------- */

static int parse_scenario(const char* command, const char* name, const char* value, void* opts)
{
    crowd_opts_t* o = opts;
    int s = crowd_scenario_of(value);
    if (s < 0)
        return cli_usage_error(command, "%s: expected grid, gridshuf or circle, got '%s'", name, value);
    o->scenario = s;
    return 0;
}

#define CROWD_INT(name, metavar, field, lo, hi, help)                                                        \
    CLI_INT_ROW(name, metavar, crowd_opts_t, field, lo, hi, help)

static const cli_option_t crowd_options[] = {
    {.name = "--scenario",
     .metavar = "grid|gridshuf|circle",
     .kind = CLI_CUSTOM,
     .parse = parse_scenario,
     .help = "the scene (default grid): two blocks walking through each other, the same agents "
             "added in a shuffled order, or agents on a circle (3D: a sphere) bound for their antipodes"},
    CROWD_INT("--dim", "2|3", dims, 2, 3, "dimensions (default 2)"),
    CROWD_INT("--agents", "N", agents, 2, 100000000, "agents, 2..100000000 (default 100000)"),
    CROWD_INT("--steps", "S", steps, 1, 1000000000, "timed steps of 0.25 s (default 100)"),
    CROWD_INT("--warmup", "W", warmup, 0, 1000000000, "untimed steps first (default 10)"),
    CROWD_INT("--threads", "T", threads, 1, 1024, "threads, 1..1024 (default: physical cores)"),
    CROWD_INT("--quality-every", "K", quality_every, 0, 1000000000,
              "measure the quality figures after every K-th step, warm-up included, and after the "
              "last; 0 = after the last only (default 1)"),
    CROWD_INT("--seed", "S", seed, 0, 9007199254740992.0,
              "the world's seed (default: the library's default), from which the jitter that breaks "
              "symmetric stalls is drawn: each seed is another sample of the same scene"),
    CROWD_INT("--colored-sweeps-after", "N", colored_after, -1, 512,
              "the contact pass's Gauss-Seidel sweeps of a step: the first N on the calling thread "
              "by global id, then colored sweeps by the workers; 0 (default): all colored; -1: "
              "none (other results; benchmark/README.md)"),
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(crowd_opts_t, json),
     .help = "one JSON object on stdout: see below"},
};

static const cli_spec_t crowd_spec = {
    .command = "bench crowd",
    .usage = "[options]",
    .about = "Crowd agents with RVO2's Circle parameters (the \"rvo2\" preset) heading for their\n"
             "goals, dt 0.25 s, in an unbounded world. Each step is timed alone; warm-up steps\n"
             "are not timed, and quality is measured between steps, outside the timed part.\n"
             "benchmark/rvo2/ runs RVO2 on the same scenes (benchmark/README.md, Crowd).\n",
    .options = crowd_options,
    .option_count = CLI_COUNT(crowd_options),
    .details = "--json prints: bench, sim, scenario, dim, agents, steps, warmup, threads, lanes\n"
               "(the last orca pass's SIMD width), dt, setup_seconds, seconds (the timed steps),\n"
               "agent_steps_per_s, quality_every, quality_samples (measures taken),\n"
               "quality_seconds, min_pair_distance (smallest center distance over the sum of\n"
               "radii, over the measures; null if no two agents ever came within 4 radii),\n"
               "overlaps (pairs under 99 % of the sum of radii, summed over the measures),\n"
               "mean_dist_to_goal and arrived (the fraction within one radius of its goal) at\n"
               "the end, state_hash, hash_phases {cell_edge, count, prefix, scatter, reorder,\n"
               "copy: the spatial hash's phases, ms a timed step on the calling thread},\n"
               "systems [{name, stage, ms_per_step, ns_per_agent}] over the timed steps.\n",
};

static int bench_crowd(int argc, char** argv)
{
    crowd_opts_t o = CROWD_DEFAULTS;
    int stop = cli_parse(&crowd_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    return bench_crowd_run(&o);
}

const cli_command_t cli_bench_crowd = {
    "crowd",
    "crowd agents (ORCA) with RVO2's Circle parameters: two blocks\nwalking through each other, or a circle "
    "bound for its antipodes",
    bench_crowd};
