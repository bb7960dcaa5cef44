/* `shoal bench planner`: the scale scenario asked of planner agents ("10,000 planner
 * agents in 2D, adaptive, seek plus collision avoidance in an asteroid
 * field, each replanning once per 1 s interval, stepped at 60 Hz, at least
 * in real time on 2 threads").
 *
 * The scene: a square of side 25 sqrt(N) m (625 m^2 per agent) holding N/2
 * static asteroids of radius 2 to 8 m (about 7% of the area), N planner
 * agents placed at random clear of them (5 m of margin), each seeking its
 * own random point of the square with the world's default 2D trim table
 * (17 controls, interval 1 s, 60 substeps). Everything is drawn from the
 * counter-based generator, so a given N gives one scene and one
 * state_hash for any thread count.
 *
 * The budget: max_expansions defaults to BENCH_PLANNER_EXPANSIONS below
 * (the library's default is 400). 64 keeps 10,000 agents about 2.7 times
 * faster than real time on the 2-core development VM, margin for a shared
 * machine; 96 gives 2x, and more buys little goodness here (the sweep is in
 * benchmark/README.md). --expansions changes it.
 *
 * Figures: wall_seconds over the whole run (no warm-up: agents spend their
 * first, partial interval flying straight, so the first second has fewer
 * searches than the rest and the figure is slightly conservative),
 * realtime_factor = sim_seconds / wall_seconds, searches_per_s (searches
 * per wall second), ms_per_search (the mean wall time of one search, timed
 * around each search on its worker thread), goodness_mean (over all
 * searches, of the chosen first segment). */
#define _POSIX_C_SOURCE 200809L
#include "benchmark/bench_planner.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/rng.h"
#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

/* Expansions per search of the scale scenario (see the file comment). */
#define BENCH_PLANNER_EXPANSIONS 64

typedef struct planner_opts {
    int64_t agents;
    int64_t threads;
    double sim_seconds;
    int64_t expansions;
    int64_t seed;
    int json;
    int64_t depth;    /* max_depth; 0: the library's default */
    double budget_ms; /* time_budget_ms; 0: none */
} planner_opts_t;

typedef struct asteroid {
    float x, y, r;
} asteroid_t;

/* Asteroids, and agents clear of them (brute force over a coarse grid of
 * buckets: the field is built once). */
static int build_scene(shoal_world_t* w, const planner_opts_t* o, double side, int64_t* out_asteroids)
{
    uint64_t seed = (uint64_t)o->seed;
    int64_t count = o->agents / 2;
    asteroid_t* rocks = calloc((size_t)(count > 0 ? count : 1), sizeof *rocks);
    if (!rocks) return 0;
    for (int64_t i = 0; i < count; ++i) {
        rocks[i].x = rng_range(seed, (uint64_t)i, 0, 0, 0.0f, (float)side);
        rocks[i].y = rng_range(seed, (uint64_t)i, 0, 1, 0.0f, (float)side);
        rocks[i].r = rng_range(seed, (uint64_t)i, 0, 2, 2.0f, 8.0f);
        const float c[3] = {rocks[i].x, rocks[i].y, 0.0f};
        if (shoal_world_add_obstacle(w, c, rocks[i].r, NULL) != SHOAL_OK) {
            free(rocks);
            return 0;
        }
    }
    /* Buckets of 32 m for the clearance test. */
    const double cell = 32.0;
    int32_t nc = (int32_t)ceil(side / cell);
    if (nc < 1) nc = 1;
    int32_t* start = calloc((size_t)nc * (size_t)nc + 1, sizeof *start);
    int32_t* items = calloc((size_t)(count > 0 ? count : 1), sizeof *items);
    if (!start || !items) {
        free(rocks);
        free(start);
        free(items);
        return 0;
    }
#define BUCKET(px, py)                                                                                       \
    ((int32_t)fmin((double)nc - 1, fmax(0.0, floor((py) / cell))) * nc +                                     \
     (int32_t)fmin((double)nc - 1, fmax(0.0, floor((px) / cell))))
    for (int64_t i = 0; i < count; ++i) start[BUCKET(rocks[i].x, rocks[i].y) + 1]++;
    for (int32_t b = 0; b < nc * nc; ++b) start[b + 1] += start[b];
    int32_t* fill = calloc((size_t)nc * (size_t)nc, sizeof *fill);
    if (!fill) {
        free(rocks);
        free(start);
        free(items);
        return 0;
    }
    for (int64_t i = 0; i < count; ++i) {
        int32_t b = BUCKET(rocks[i].x, rocks[i].y);
        items[start[b] + fill[b]++] = (int32_t)i;
    }
    free(fill);

    shoal_planner_t base = shoal_planner_default();
    base.enabled = 1;
    base.strategy = SHOAL_PLAN_ADAPTIVE;
    base.goal = SHOAL_PLAN_GOAL_SEEK;
    base.avoid_collisions = 1;
    base.speed = 5.0f;
    base.radius = 1.0f;
    base.max_expansions = (int32_t)o->expansions;
    if (o->depth > 0) base.max_depth = (int32_t)o->depth;
    if (base.min_depth > base.max_depth) base.min_depth = base.max_depth;
    base.time_budget_ms = (float)o->budget_ms;
    int ok = 1;
    for (int64_t i = 0; i < o->agents && ok; ++i) {
        float x = 0.0f, y = 0.0f;
        for (uint64_t attempt = 0; attempt < 1000; ++attempt) {
            x = rng_range(seed, (uint64_t)i, 10 + attempt, 0, 0.0f, (float)side);
            y = rng_range(seed, (uint64_t)i, 10 + attempt, 1, 0.0f, (float)side);
            int clear = 1;
            int32_t bx = (int32_t)floor(x / cell), by = (int32_t)floor(y / cell);
            for (int32_t j = by - 1; j <= by + 1 && clear; ++j)
                for (int32_t k = bx - 1; k <= bx + 1 && clear; ++k) {
                    if (j < 0 || k < 0 || j >= nc || k >= nc) continue;
                    int32_t b = j * nc + k;
                    for (int32_t m = start[b]; m < start[b + 1] && clear; ++m) {
                        const asteroid_t* a = &rocks[items[m]];
                        float dx = x - a->x, dy = y - a->y;
                        if (sqrtf(dx * dx + dy * dy) < a->r + base.radius + 5.0f) clear = 0;
                    }
                }
            if (clear) break;
        }
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = x;
        d.position[1] = y;
        d.heading = rng_range(seed, (uint64_t)i, 1, 0, -3.14159265f, 3.14159265f);
        d.planner = base;
        d.planner.goal_point[0] = rng_range(seed, (uint64_t)i, 2, 0, 0.0f, (float)side);
        d.planner.goal_point[1] = rng_range(seed, (uint64_t)i, 2, 1, 0.0f, (float)side);
        ok = shoal_agent_add(w, &d, NULL) == SHOAL_OK;
    }
#undef BUCKET
    free(rocks);
    free(start);
    free(items);
    *out_asteroids = count;
    return ok;
}

/* The scene's world on o->threads threads: the trim table, the asteroids
 * and the agents (their count in *asteroids, the square's side in *side).
 * Returns CLI_EXIT_OK, or prints the error (after "command: ") and returns
 * CLI_EXIT_FAILURE. */
static int planner_world(const char* command, const planner_opts_t* o, shoal_world_t** out,
                         int64_t* asteroids, double* side)
{
    *side = 25.0 * sqrt((double)o->agents);
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.thread_count = (int32_t)o->threads;
    def.seed = (uint64_t)o->seed;
    def.initial_capacity = (int32_t)o->agents;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    if (shoal_world_create(&def, &w, &err) != SHOAL_OK) {
        cli_error("%s: %s", command, err.message);
        return CLI_EXIT_FAILURE;
    }
    shoal_trim_spec_t spec = shoal_trim_spec_default(2);
    if (shoal_world_set_trim_table(w, &spec) != SHOAL_OK || !build_scene(w, o, *side, asteroids)) {
        cli_error("%s: building the scene: %s", command, shoal_world_last_error(w));
        shoal_world_destroy(w);
        return CLI_EXIT_FAILURE;
    }
    *out = w;
    return CLI_EXIT_OK;
}

/* The defaults of `shoal bench planner`: 10 simulated seconds, seed 1,
 * threads 0 (physical cores). */
#define PLANNER_DEFAULTS                                                                                     \
    {                                                                                                        \
        BENCH_PLANNER_AGENTS, 0, BENCH_PLANNER_SECONDS, BENCH_PLANNER_EXPANSIONS, 1, 0, 0, 0.0               \
    }

int bench_planner_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out)
{
    planner_opts_t o = PLANNER_DEFAULTS;
    o.agents = agents;
    o.threads = threads;
    int64_t asteroids = 0;
    double side = 0.0;
    return planner_world(command, &o, out, &asteroids, &side);
}

static int run_planner_bench(const planner_opts_t* o)
{
    shoal_world_t* w = NULL;
    int64_t asteroids = 0;
    double side = 0.0;
    if (planner_world("bench planner", o, &w, &asteroids, &side) != CLI_EXIT_OK) return CLI_EXIT_FAILURE;
    const float dt = BENCH_PLANNER_DT;
    int64_t steps = (int64_t)llround(o->sim_seconds * 60.0);
    double t0 = cli_now_seconds();
    for (int64_t s = 0; s < steps; ++s) {
        if (shoal_world_step(w, dt) != SHOAL_OK) {
            cli_error("bench planner: step failed: %s", shoal_world_last_error(w));
            shoal_world_destroy(w);
            return CLI_EXIT_FAILURE;
        }
    }
    double wall = cli_now_seconds() - t0;
    double sim = (double)steps * (double)dt;

    /* Per-agent statistics, summed in storage order (a fixed order for a
     * given run; the sums are statistics, not state). */
    int32_t n = shoal_world_agent_count(w);
    shoal_agent_t* ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    if (!ids) {
        cli_error("bench planner: out of memory");
        shoal_world_destroy(w);
        return CLI_EXIT_FAILURE;
    }
    shoal_agent_batch_t batch;
    memset(&batch, 0, sizeof batch);
    batch.ids = ids;
    int32_t got = 0;
    shoal_world_read_agents(w, &batch, n, &got);
    double searches = 0.0, goodness = 0.0, ns = 0.0, states = 0.0, expanded = 0.0;
    int64_t collisions = 0;
    const int32_t depth = o->depth > 0 ? (int32_t)o->depth : shoal_planner_default().max_depth;
    for (int32_t i = 0; i < got; ++i) {
        shoal_planner_status_t st;
        if (shoal_agent_get_planner(w, ids[i], &st) != SHOAL_OK) continue;
        searches += (double)st.searches;
        goodness += st.goodness_sum;
        ns += st.search_ns_sum;
        states += (double)st.states_sum;
        expanded += (double)st.expanded_sum;
        collisions += st.collisions;
    }
    free(ids);
    double planner_ms = 0.0, move_ms = 0.0, calls = 0.0;
    for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
        shoal_system_stats_t st;
        shoal_world_system_stats(w, i, &st);
        if (!strcmp(st.name, "planner")) {
            planner_ms = (double)st.ns_total * 1e-6;
            calls = (double)st.calls;
        }
        if (!strcmp(st.name, "planner_move")) move_ms = (double)st.ns_total * 1e-6;
    }
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)shoal_world_state_hash(w));
    double per = searches > 0.0 ? 1.0 / searches : 0.0;
    double rtf = wall > 0.0 ? sim / wall : 0.0;
    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "planner");
        cJSON_AddNumberToObject(root, "agents", (double)o->agents);
        cJSON_AddNumberToObject(root, "threads", shoal_world_thread_count(w));
        cJSON_AddNumberToObject(root, "sim_seconds", sim);
        cJSON_AddNumberToObject(root, "wall_seconds", wall);
        cJSON_AddNumberToObject(root, "realtime_factor", rtf);
        cJSON_AddNumberToObject(root, "searches_per_s", wall > 0.0 ? searches / wall : 0.0);
        cJSON_AddNumberToObject(root, "ms_per_search", ns * per * 1e-6);
        cJSON_AddNumberToObject(root, "goodness_mean", goodness * per);
        cJSON_AddStringToObject(root, "state_hash", hash);
        cJSON_AddNumberToObject(root, "searches", searches);
        cJSON_AddNumberToObject(root, "states_per_search", states * per);
        cJSON_AddNumberToObject(root, "expanded_per_search", expanded * per);
        cJSON_AddNumberToObject(root, "max_expansions", (double)o->expansions);
        cJSON_AddNumberToObject(root, "max_depth", (double)depth);
        cJSON_AddNumberToObject(root, "time_budget_ms", o->budget_ms);
        cJSON_AddNumberToObject(root, "collisions", (double)collisions);
        cJSON_AddNumberToObject(root, "asteroids", (double)asteroids);
        cJSON_AddNumberToObject(root, "side_m", side);
        cJSON_AddNumberToObject(root, "planner_ms_per_step", calls > 0.0 ? planner_ms / calls : 0.0);
        cJSON_AddNumberToObject(root, "planner_move_ms_per_step", calls > 0.0 ? move_ms / calls : 0.0);
        cJSON* systems = cJSON_AddArrayToObject(root, "systems");
        for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
            shoal_system_stats_t st;
            shoal_world_system_stats(w, i, &st);
            if (st.calls == 0) continue;
            cJSON* sys = cJSON_CreateObject();
            cJSON_AddStringToObject(sys, "name", st.name);
            cJSON_AddStringToObject(sys, "stage", shoal_stage_name(st.stage));
            cJSON_AddNumberToObject(sys, "ms_per_step", (double)st.ns_total * 1e-6 / (double)st.calls);
            cJSON_AddItemToArray(systems, sys);
        }
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("planner 2D: %lld agents, %lld asteroids in %.0f m x %.0f m, %d threads, max_expansions %lld, "
               "max_depth %d%s\n",
               (long long)o->agents, (long long)asteroids, side, side, (int)shoal_world_thread_count(w),
               (long long)o->expansions, (int)depth, o->budget_ms > 0.0 ? ", time budget on" : "");
        printf("sim seconds        %.3f\n", sim);
        printf("wall seconds       %.3f\n", wall);
        printf("realtime factor    %.3f\n", rtf);
        printf("searches/s         %.0f\n", wall > 0.0 ? searches / wall : 0.0);
        printf("ms per search      %.4f\n", ns * per * 1e-6);
        printf("states per search  %.1f\n", states * per);
        printf("expanded/search    %.1f\n", expanded * per);
        printf("goodness mean      %.4f\n", goodness * per);
        printf("collisions         %lld\n", (long long)collisions);
        printf("planner ms/step    %.3f (planner_move %.3f)\n", calls > 0.0 ? planner_ms / calls : 0.0,
               calls > 0.0 ? move_ms / calls : 0.0);
        printf("state_hash         %s\n", hash);
    }
    shoal_world_destroy(w);
    return CLI_EXIT_OK;
}

#define STR_(x) #x
#define STR(x) STR_(x)

static const cli_option_t planner_options[] = {
    {.name = "--agents",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(planner_opts_t, agents),
     .min = 1,
     .max = 10000000,
     .help = "planner agents, 1..10000000 (default 10000)"},
    {.name = "--threads",
     .metavar = "T",
     .kind = CLI_INT,
     CLI_AT(planner_opts_t, threads),
     .min = 1,
     .max = 1024,
     .help = "threads, 1..1024 (default: physical cores)"},
    {.name = "--sim-seconds",
     .metavar = "S",
     .kind = CLI_NUMBER,
     CLI_AT(planner_opts_t, sim_seconds),
     .max = 1e6,
     .flags = CLI_ABOVE_MIN,
     .help = "simulated seconds, in (0, 1e6] (default 10)"},
    {.name = "--expansions",
     .metavar = "E",
     .kind = CLI_INT,
     CLI_AT(planner_opts_t, expansions),
     .min = 1,
     .max = 1000000,
     .help = "max_expansions per search, 1..1000000 (default " STR(BENCH_PLANNER_EXPANSIONS) ")"},
    {.name = "--seed",
     .metavar = "S",
     .kind = CLI_INT,
     CLI_AT(planner_opts_t, seed),
     .max = (double)INT64_MAX,
     .help = "scene seed, an integer >= 0 (default 1)"},
    {.name = "--depth",
     .metavar = "D",
     .kind = CLI_INT,
     CLI_AT(planner_opts_t, depth),
     .min = 1,
     .max = 64,
     .help = "max_depth of every search, 1..64 (default: the library's)"},
    {.name = "--time-budget-ms",
     .metavar = "MS",
     .kind = CLI_NUMBER,
     CLI_AT(planner_opts_t, budget_ms),
     .max = 60000,
     .help = "time_budget_ms of every search, in [0, 60000] (default 0: none; nonzero makes the "
             "state_hash depend on the machine)"},
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(planner_opts_t, json),
     .help = "one JSON object on stdout: agents, threads, sim_seconds, wall_seconds, realtime_factor, "
             "searches_per_s, ms_per_search, goodness_mean, state_hash, and more"},
};

static const cli_spec_t planner_spec = {
    .command = "bench planner",
    .usage = "[options]",
    .about = "N planner agents in 2D (adaptive search, seek plus collision avoidance) among\n"
             "N/2 static asteroids in a square of side 25 sqrt(N) m, 1 s control intervals,\n"
             "60 Hz steps.\n",
    .options = planner_options,
    .option_count = CLI_COUNT(planner_options),
};

static int bench_planner(int argc, char** argv)
{
    planner_opts_t o = PLANNER_DEFAULTS;
    int stop = cli_parse(&planner_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    return run_planner_bench(&o);
}

const cli_command_t cli_bench_planner = {"planner", "planner agents in an asteroid field", bench_planner};
