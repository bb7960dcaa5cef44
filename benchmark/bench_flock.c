/* `shoal bench flock` and `shoal bench kernel`: the flocking throughput
 * benchmarks of benchmark/README.md.
 *
 * flock: N boids (separation, alignment, cohesion, wander) in a torus box
 * sized so that an agent has K neighbors within its radius on average
 * (2D: side = sqrt(N pi R^2 / K); 3D: side = cbrt(N 4/3 pi R^3 / K)).
 * Warm-up steps run first and are not timed; the figures are for the timed
 * steps only. Memory is what the library allocated through the world's
 * allocator hooks at its peak, divided by N. setup_seconds is the world's
 * creation and population, apart from the step figures.
 *
 * kernel: the same pair kernel over one cache-resident pack of candidates,
 * no hashing, no packing: the ceiling the flock step is measured against. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include <cjson/cJSON.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ecs/rng.h"
#include "ecs/world.h"
#include "shoal/shoal.h"
#include "simd/lanes.h"
#include "modules/grid/grid.h"
#include "modules/neighbors/neighbors.h"
#include "benchmark/bench_crowd.h"
#include "benchmark/bench_flock.h"
#include "benchmark/bench_planner.h"
#include "benchmark/bench_scaling.h"
#include "benchmark/bench_systems.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

#define BENCH_PI 3.14159265358979323846

typedef struct bench_opts {
    int dims;
    int64_t agents;
    int64_t steps;
    int64_t warmup;
    int64_t threads;
    double neighbors; /* K */
    double radius;
    int64_t reorder;
    int json;
    int bind;
    int mixed;   /* per-agent weights, so no parameter column is uniform */
    int no_hash; /* leave out the final state_hash (a serial walk of every agent) */
} bench_opts_t;

/* Allocation hooks that count live bytes and remember the peak. */
typedef struct counting_alloc {
    size_t live;
    size_t peak;
} counting_alloc_t;

/* Blocks of 4 MiB and more are aligned to 2 MiB and advised to be backed
 * by huge pages, as the library's default allocator does, so that the
 * bench measures what a world with the default hooks gets. */
#define COUNT_HUGE_BLOCK ((size_t)4 << 20)
#define COUNT_HUGE_PAGE ((size_t)2 << 20)

static void* count_alloc(size_t size, size_t align, void* ctx)
{
    counting_alloc_t* c = (counting_alloc_t*)ctx;
    void* p;
    if (size >= COUNT_HUGE_BLOCK) {
        size_t bytes = (size + COUNT_HUGE_PAGE - 1) / COUNT_HUGE_PAGE * COUNT_HUGE_PAGE;
        p = aligned_alloc(COUNT_HUGE_PAGE, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (p) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    } else {
        p = aligned_alloc(align, (size + align - 1) / align * align);
    }
    if (p) {
        c->live += size;
        if (c->live > c->peak) c->peak = c->live;
    }
    return p;
}

static void count_free(void* p, size_t size, void* ctx)
{
    counting_alloc_t* c = (counting_alloc_t*)ctx;
    c->live -= size;
    free(p);
}

static double box_side(const bench_opts_t* o)
{
    double n = (double)o->agents, r = o->radius, k = o->neighbors;
    if (o->dims == 2) return sqrt(n * BENCH_PI * r * r / k);
    return cbrt(n * 4.0 / 3.0 * BENCH_PI * r * r * r / k);
}

/* The flock's shared definition: everything but the per-agent values. */
static shoal_agent_def_t flock_def(const bench_opts_t* o)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.vehicle.max_speed = 4.0f;
    d.vehicle.radius = 0.3f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.5f;
    d.weights[SHOAL_BEHAVIOR_ALIGN] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_COHERE] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
    d.neighbors.radius = (float)o->radius;
    d.wander.cruise_speed = 2.0f;
    return d;
}

/* Agent i's own values, from the counter-based generator keyed by i: the
 * scene does not depend on how agents are added. */
static void flock_agent(const bench_opts_t* o, double side, int64_t i, shoal_agent_def_t* d)
{
    for (int k = 0; k < o->dims; ++k)
        d->position[k] = rng_range(11, (uint64_t)i, 0, (uint32_t)k, 0.0f, (float)side);
    d->heading = rng_range(11, (uint64_t)i, 1, 0, -3.14159f, 3.14159f);
    d->pitch = o->dims == 3 ? rng_range(11, (uint64_t)i, 1, 1, -0.5f, 0.5f) : 0.0f;
    d->velocity[0] = 2.0f * cosf(d->heading);
    d->velocity[1] = 2.0f * sinf(d->heading);
    if (o->mixed) /* each agent its own weights, within 10 % */
        for (int b = SHOAL_BEHAVIOR_SEPARATE; b <= SHOAL_BEHAVIOR_COHERE; ++b)
            d->weights[b] *= rng_range(11, (uint64_t)i, 2, (uint32_t)b, 0.9f, 1.1f);
}

/* Agents per bulk add: arrays of 7 floats per agent stay a few MB whatever
 * --agents is, and the world is the same as one add for all of them (a
 * bulk add equals its agents added one at a time, in order). */
#define POPULATE_CHUNK 65536

/* Flocks that share one parameter set go through the bulk add, with
 * per-agent positions, velocities, headings and (3D) pitches. --mixed
 * flocks are added one at a time: each agent's own weights are not among
 * the per-agent arrays of shoal_agents_add, and every agent's values
 * differ, so no two agents share a definition to group by.
 * Returns 1, 0 for an error of the world (shoal_world_last_error), -1 when
 * out of memory here. */
static int populate(shoal_world_t* w, const bench_opts_t* o, double side, double* add_seconds)
{
    shoal_agent_def_t shared = flock_def(o);
    if (o->mixed) {
        for (int64_t i = 0; i < o->agents; ++i) {
            shoal_agent_def_t d = shared;
            flock_agent(o, side, i, &d);
            if (shoal_agent_add(w, &d, NULL) != SHOAL_OK) return 0;
        }
        return 1;
    }
    int64_t chunk = o->agents < POPULATE_CHUNK ? o->agents : POPULATE_CHUNK;
    float* positions = malloc((size_t)chunk * 3 * sizeof(float));
    float* velocities = malloc((size_t)chunk * 3 * sizeof(float));
    float* headings = malloc((size_t)chunk * sizeof(float));
    float* pitches = malloc((size_t)chunk * sizeof(float));
    int ok = positions && velocities && headings && pitches ? 1 : -1;
    const int threads = o->threads > 0 ? (int)o->threads : omp_get_num_procs();
    for (int64_t first = 0; ok == 1 && first < o->agents; first += chunk) {
        int64_t n = o->agents - first < chunk ? o->agents - first : chunk;
        /* Each agent's start is a function of its index alone (counter-based
         * draws): drawn on the bench's threads, the same on any count. */
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t j = 0; j < n; ++j) {
            shoal_agent_def_t d = shared;
            flock_agent(o, side, first + j, &d);
            memcpy(positions + 3 * j, d.position, 3 * sizeof(float));
            memcpy(velocities + 3 * j, d.velocity, 3 * sizeof(float));
            headings[j] = d.heading;
            pitches[j] = d.pitch;
        }
        shoal_agent_arrays_t arrays;
        memset(&arrays, 0, sizeof arrays);
        arrays.positions = positions;
        arrays.velocities = velocities;
        arrays.headings = headings;
        arrays.pitches = pitches;
        double t0 = cli_now_seconds();
        ok = shoal_agents_add(w, &shared, &arrays, (int32_t)n, NULL) == SHOAL_OK;
        *add_seconds += cli_now_seconds() - t0;
    }
    free(positions);
    free(velocities);
    free(headings);
    free(pitches);
    return ok;
}

/* The flock's world on o->threads threads, populated; its allocations are
 * counted in `counter` when it is not NULL (it must outlive the world).
 * Returns CLI_EXIT_OK, or prints the error (after "command: ") and returns
 * CLI_EXIT_FAILURE. */
static int flock_world(const char* command, const bench_opts_t* o, counting_alloc_t* counter,
                       shoal_world_t** out, double* library_seconds)
{
    double unused = 0.0;
    if (!library_seconds) library_seconds = &unused;
    double side = box_side(o);
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = o->dims;
    def.thread_count = (int32_t)o->threads;
    def.bind_threads = o->bind;
    def.initial_capacity = (int32_t)o->agents;
    def.reorder_interval = (int32_t)o->reorder;
    def.wrap = 1;
    for (int k = 0; k < o->dims; ++k) def.bounds_max[k] = (float)side;
    if (counter) {
        def.alloc = count_alloc;
        def.free = count_free;
        def.alloc_user_ctx = counter;
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    double t0 = cli_now_seconds();
    if (shoal_world_create(&def, &w, &err) != SHOAL_OK) {
        cli_error("%s: %s", command, err.message);
        return CLI_EXIT_FAILURE;
    }
    *library_seconds = cli_now_seconds() - t0;
    int populated = populate(w, o, side, library_seconds);
    if (populated != 1) {
        cli_error("%s: %s", command, populated < 0 ? "out of memory" : shoal_world_last_error(w));
        shoal_world_destroy(w);
        return CLI_EXIT_FAILURE;
    }
    *out = w;
    return CLI_EXIT_OK;
}

/* The defaults of `shoal bench flock`: 2D, K = 20, R = 2 m, reorder every
 * 32 steps, threads 0 (the library's default: physical cores). */
#define FLOCK_DEFAULTS                                                                                       \
    {                                                                                                        \
        2, BENCH_FLOCK_AGENTS, BENCH_FLOCK_STEPS, BENCH_FLOCK_WARMUP, 0, 20.0, 2.0, 32, 0, 0, 0, 0           \
    }

int bench_flock_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out)
{
    bench_opts_t o = FLOCK_DEFAULTS;
    o.agents = agents;
    o.threads = threads;
    return flock_world(command, &o, NULL, out, NULL);
}

int bench_flock3d_scene(const char* command, int64_t agents, int32_t threads, shoal_world_t** out)
{
    bench_opts_t o = FLOCK_DEFAULTS;
    o.dims = 3;
    o.agents = agents;
    o.threads = threads;
    return flock_world(command, &o, NULL, out, NULL);
}

static int bench_flock(const bench_opts_t* o)
{
    double side = box_side(o);
    counting_alloc_t counter = {0, 0};
    shoal_world_t* w = NULL;
    double setup_start = cli_now_seconds(), add_seconds = 0.0;
    if (flock_world("bench flock", o, &counter, &w, &add_seconds) != CLI_EXIT_OK) return CLI_EXIT_FAILURE;
    double setup_seconds = cli_now_seconds() - setup_start;
    const float dt = BENCH_FLOCK_DT;
    for (int64_t s = 0; s < o->warmup; ++s) {
        if (shoal_world_step(w, dt) != SHOAL_OK) goto step_failed;
    }
    shoal_world_reset_stats(w);
    int64_t pairs = 0, found = 0, kernel_agents = 0, phase_ns[GRID_PHASES] = {0};
    double t0 = cli_now_seconds();
    for (int64_t s = 0; s < o->steps; ++s) {
        if (shoal_world_step(w, dt) != SHOAL_OK) goto step_failed;
        if (grid_data(w)) {
            pairs += neighbors_data(w)->pair_tests;
            found += neighbors_data(w)->neighbor_sum;
            kernel_agents += neighbors_data(w)->kernel_agents;
            for (int k = 0; k < GRID_PHASES; ++k) phase_ns[k] += grid_data(w)->phase_ns[k];
        }
    }
    double phase_ms[GRID_PHASES];
    for (int k = 0; k < GRID_PHASES; ++k)
        phase_ms[k] = o->steps > 0 ? (double)phase_ns[k] * 1e-6 / (double)o->steps : 0.0;
    double seconds = cli_now_seconds() - t0;
    double agent_steps = (double)o->agents * (double)o->steps;
    double bytes_per_agent = (double)counter.peak / (double)o->agents;
    char hash[17];
    double hash_seconds = 0.0; /* the fastest of three state_hash calls */
    if (o->no_hash) {
        snprintf(hash, sizeof hash, "none");
    } else {
        uint64_t h = 0;
        for (int k = 0; k < 3; ++k) {
            double h0 = cli_now_seconds();
            h = shoal_world_state_hash(w);
            double took = cli_now_seconds() - h0;
            if (k == 0 || took < hash_seconds) hash_seconds = took;
        }
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)h);
    }
    double step_seconds = o->steps > 0 ? seconds / (double)o->steps : 0.0;
    double mean_nb = kernel_agents ? (double)found / (double)kernel_agents : 0.0;

    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "flock");
        cJSON_AddNumberToObject(root, "dim", o->dims);
        cJSON_AddNumberToObject(root, "agents", (double)o->agents);
        cJSON_AddNumberToObject(root, "steps", (double)o->steps);
        cJSON_AddNumberToObject(root, "warmup", (double)o->warmup);
        cJSON_AddNumberToObject(root, "threads", shoal_world_thread_count(w));
        cJSON_AddNumberToObject(root, "lanes", SHOAL_LANES);
        cJSON_AddNumberToObject(root, "neighbors_target", o->neighbors);
        cJSON_AddNumberToObject(root, "radius", o->radius);
        cJSON_AddNumberToObject(root, "box_side", side);
        cJSON_AddNumberToObject(root, "reorder_interval", (double)o->reorder);
        cJSON_AddBoolToObject(root, "mixed", o->mixed);
        cJSON_AddNumberToObject(root, "setup_seconds", setup_seconds);
        cJSON_AddNumberToObject(root, "add_seconds", add_seconds);
        cJSON_AddNumberToObject(root, "seconds", seconds);
        cJSON_AddNumberToObject(root, "agent_steps_per_s", agent_steps / seconds);
        cJSON_AddNumberToObject(root, "pair_tests_per_s", (double)pairs / seconds);
        cJSON_AddNumberToObject(root, "mean_neighbors", mean_nb);
        cJSON_AddNumberToObject(root, "bytes_per_agent", bytes_per_agent);
        if (o->no_hash) {
            cJSON_AddNullToObject(root, "state_hash");
        } else {
            cJSON_AddStringToObject(root, "state_hash", hash);
            cJSON_AddNumberToObject(root, "hash_seconds", hash_seconds);
            if (step_seconds > 0.0)
                cJSON_AddNumberToObject(root, "hash_per_step", hash_seconds / step_seconds);
        }
        cJSON* phases = cJSON_AddObjectToObject(root, "sense_phases");
        for (int k = 0; k < GRID_PHASES; ++k)
            cJSON_AddNumberToObject(phases, grid_phase_name(k), phase_ms[k]);
        bench_systems_json(root, w, o->agents);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("flock %dD: %lld agents, K = %g, radius %g m, box %.1f m, %d threads, %d lanes%s\n", o->dims,
               (long long)o->agents, o->neighbors, o->radius, side, (int)shoal_world_thread_count(w),
               SHOAL_LANES, o->mixed ? ", mixed parameters" : "");
        printf("steps            %lld (+%lld warm-up)\n", (long long)o->steps, (long long)o->warmup);
        printf("setup seconds    %.4f (the library's world_create and bulk adds: %.4f)\n", setup_seconds,
               add_seconds);
        printf("seconds          %.4f\n", seconds);
        printf("agent-steps/s    %.4g\n", agent_steps / seconds);
        printf("pair tests/s     %.4g\n", (double)pairs / seconds);
        printf("mean neighbors   %.2f\n", mean_nb);
        printf("bytes per agent  %.1f\n", bytes_per_agent);
        printf("state_hash       %s\n", hash);
        if (!o->no_hash)
            printf("hash seconds     %.4f (%.2f %% of a step)\n", hash_seconds,
                   step_seconds > 0.0 ? 100.0 * hash_seconds / step_seconds : 0.0);
        printf("spatial hash     ms/step:");
        for (int k = 0; k < GRID_PHASES; ++k) printf(" %s %.3f", grid_phase_name(k), phase_ms[k]);
        printf("\n\n");
        bench_systems_table(w, o->agents);
    }
    shoal_world_destroy(w);
    return CLI_EXIT_OK;
step_failed:
    cli_error("bench flock: step failed: %s", shoal_world_last_error(w));
    shoal_world_destroy(w);
    return CLI_EXIT_FAILURE;
}

static int bench_kernel(const bench_opts_t* o)
{
    /* Candidates per pack: what a 3x3 (3x3x3) block holds at density K. */
    double per_cell = o->dims == 2 ? o->neighbors / BENCH_PI : o->neighbors * 3.0 / (4.0 * BENCH_PI);
    int32_t candidates = (int32_t)ceil(per_cell * (o->dims == 2 ? 9.0 : 27.0));
    int64_t iterations = o->steps > 0 ? o->steps * 10000 : 2000000;
    double seconds = 0.0;
    int64_t pairs = neighbors_bench_kernel(o->dims, candidates, iterations, &seconds);
    if (pairs == 0 || seconds <= 0.0) {
        cli_error("bench kernel: could not run");
        return CLI_EXIT_FAILURE;
    }
    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "kernel");
        cJSON_AddNumberToObject(root, "dim", o->dims);
        cJSON_AddNumberToObject(root, "lanes", SHOAL_LANES);
        cJSON_AddNumberToObject(root, "candidates", candidates);
        cJSON_AddNumberToObject(root, "iterations", (double)iterations);
        cJSON_AddNumberToObject(root, "seconds", seconds);
        cJSON_AddNumberToObject(root, "pair_tests_per_s", (double)pairs / seconds);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("kernel %dD: %d candidates per pack, %lld agents, %d lanes, one thread\n", o->dims,
               (int)candidates, (long long)iterations, SHOAL_LANES);
        printf("seconds          %.4f\n", seconds);
        printf("pair tests/s     %.4g\n", (double)pairs / seconds);
    }
    return CLI_EXIT_OK;
}

/* ---- options ---------------------------------------------------------------- */

#define FLOCK_INT(name, metavar, field, lo, hi, help)                                                        \
    CLI_INT_ROW(name, metavar, bench_opts_t, field, lo, hi, help)
#define FLOCK_FLAG(name, field, help) CLI_FLAG_ROW(name, bench_opts_t, field, help)
#define FLOCK_POSITIVE(name, metavar, field, help) CLI_POSITIVE_ROW(name, metavar, bench_opts_t, field, help)

/* flock and kernel fill one struct; kernel's table has the rows it reads. */
#define DIM_ROW FLOCK_INT("--dim", "2|3", dims, 2, 3, "dimensions (default 2)")
#define NEIGHBORS_ROW                                                                                        \
    FLOCK_POSITIVE("--neighbors", "K", neighbors, "mean neighbor count to size the box for (default 20)")
#define JSON_ROW(what) FLOCK_FLAG("--json", json, "one JSON object on stdout: " what)

static const cli_option_t flock_options[] = {
    DIM_ROW,
    FLOCK_INT("--agents", "N", agents, 1, 100000000, "agents, 1..100000000 (default 100000)"),
    FLOCK_INT("--steps", "S", steps, 1, 1000000000, "timed steps (default 100)"),
    FLOCK_INT("--warmup", "W", warmup, 0, 1000000000, "untimed steps first (default 10)"),
    FLOCK_INT("--threads", "T", threads, 1, 1024, "threads, 1..1024 (default: physical cores)"),
    NEIGHBORS_ROW,
    FLOCK_POSITIVE("--radius", "R", radius, "neighbor radius, m (default 2)"),
    FLOCK_INT("--reorder", "N", reorder, 0, 1000000,
              "reorder storage by cell every N steps, 0 = never (default 32)"),
    FLOCK_FLAG("--bind", bind, "pin threads to cores (hwloc)"),
    FLOCK_FLAG("--no-hash", no_hash,
               "leave out the final state_hash (null in JSON) and its timing, hash_seconds (the "
               "fastest of three calls) and hash_per_step (that over the mean step time)"),
    FLOCK_FLAG("--mixed", mixed,
               "every agent its own behavior weights (within 10 %), so the neighbors pass reads "
               "each agent's parameter row; by default the flock shares one parameter set"),
    JSON_ROW("see below"),
};

static const cli_spec_t flock_spec = {
    .command = "bench flock",
    .usage = "[options]",
    .about = "Boids (separation, alignment, cohesion, wander) in a torus box sized so that an\n"
             "agent has K neighbors within its radius on average. Warm-up steps are not\n"
             "timed; the figures are for the timed steps only.\n",
    .options = flock_options,
    .option_count = CLI_COUNT(flock_options),
    .details =
        "--json prints: bench, dim, agents, steps, warmup, threads, lanes,\n"
        "neighbors_target, radius, box_side, reorder_interval, mixed, setup_seconds\n"
        "(world creation and population), add_seconds (of which in the library:\n"
        "shoal_world_create and the bulk adds, not the bench making its arrays),\n"
        "seconds, agent_steps_per_s,\n"
        "pair_tests_per_s, mean_neighbors, bytes_per_agent, state_hash (null with\n"
        "--no-hash), hash_seconds, hash_per_step, sense_phases {cell_edge, count, prefix, scatter, reorder,\n"
        "copy: the spatial hash's phases, ms per step on the calling thread's clock},\n"
        "systems [{name, stage, ms_per_step, ns_per_agent}].\n",
};

static const cli_option_t kernel_options[] = {
    DIM_ROW,
    FLOCK_INT("--steps", "S", steps, 1, 1000000000,
              "run the kernel for S x 10000 agents (default 100: 1,000,000)"),
    NEIGHBORS_ROW,
    JSON_ROW("bench, dim, lanes, candidates, iterations, seconds, pair_tests_per_s"),
};

static const cli_spec_t kernel_spec = {
    .command = "bench kernel",
    .usage = "[options]",
    .about = "The flock's pair kernel over one cache-resident pack of candidates (what a\n"
             "3x3 (3x3x3) block of cells holds at K neighbors), no hashing, no packing, one\n"
             "thread: the ceiling for flock's pair_tests_per_s.\n",
    .options = kernel_options,
    .option_count = CLI_COUNT(kernel_options),
};

static void bench_help(FILE* out)
{
    fprintf(out, "Usage: shoal bench KIND [options]\n\n"
                 "Measure the simulation's throughput on fixed scenes (benchmark/README.md).\n\n"
                 "Kinds ('shoal bench KIND --help' lists a kind's own options):\n");
    cli_print_kinds(out, cli_table_bench, 8);
    fputc('\n', out);
    fputs(cli_exit_codes_help, out);
}

static int cmd_bench(int argc, char** argv)
{
    return cli_run_kind("bench", "benchmark", cli_table_bench, argc, argv, bench_help);
}

static int run_flock_or_kernel(int argc, char** argv, int flock)
{
    bench_opts_t o = FLOCK_DEFAULTS;
    int stop = cli_parse(flock ? &flock_spec : &kernel_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    return flock ? bench_flock(&o) : bench_kernel(&o);
}

static int run_flock(int argc, char** argv) { return run_flock_or_kernel(argc, argv, 1); }

static int run_kernel(int argc, char** argv) { return run_flock_or_kernel(argc, argv, 0); }

const cli_command_t cli_command_bench = {
    "bench",
    "throughput benchmarks: flock (boids at K neighbors), kernel (pair ceiling), planner, crowd, nav "
    "(navigation fields), scaling (thread sweep)",
    cmd_bench};
const cli_command_t cli_bench_flock = {"flock",
                                       "boids (separation, alignment, cohesion, wander) in a torus box "
                                       "sized\nso that an agent has K neighbors within its radius on average",
                                       run_flock};
const cli_command_t cli_bench_kernel = {
    "kernel",
    "the same pair kernel on one cache-resident pack, one thread: the\nceiling for flock's pair_tests_per_s",
    run_kernel};
