/* `shoal bench scaling`: one scene swept over thread counts.
 *
 * For each thread count the scene of `shoal bench flock`, `crowd` (grid)
 * or `planner` is built anew (bench_flock_scene and its siblings), warm-up
 * steps run untimed, the world's stats are reset and the timed steps run
 * between two clock reads. Rounds are interleaved (round 1 at every
 * thread count, then round 2, ...) so that a change in the machine's load
 * spreads over the thread counts instead of landing on one of them.
 *
 * Figures per thread count: the best and the median rate over the rounds
 * (agent-steps/s; for the planner the real-time factor, simulated seconds
 * per wall second), the speed-up over the first thread count listed (best
 * over best), and per system (the world's system stats, as
 * benchmark/bench_systems.h reads them) the best ms per step and its speed-up
 * over the first thread count. Every run's state_hash must be the same:
 * a world steps to one state whatever its thread count (docs: "determinism
 * is designed"), so a difference fails the command.
 *
 * --ceiling measures, beside each run, what the machine gives T threads of
 * work that shares nothing: T worlds of about N/T agents each, every one a
 * world of one thread on a thread of its own, built and warmed up there,
 * then stepped at once from one start. Their agent-steps together over the
 * time the slowest took is the ceiling: the rate a parallel step of the
 * same work could reach at best here, with the clock the cores keep under
 * load, the shared caches and the memory bandwidth as they are. A speed-up
 * over it (the efficiency) says how much of the shortfall is the step's
 * own: its loops' starts and ends, their imbalance, the data the cores
 * hand each other. */
#define _POSIX_C_SOURCE 200809L
#include "benchmark/bench_scaling.h"

#include <cjson/cJSON.h>
#include <hwloc.h>
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchmark/bench_crowd.h"
#include "benchmark/bench_flock.h"
#include "benchmark/bench_planner.h"
#include "benchmark/bench_systems.h"
#include "io/atomic_file.h"
#include "shoal/shoal.h"
#include "simd/lanes.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

#define SCALING_MAX_COUNTS 32  /* thread counts in one sweep */
#define SCALING_MAX_SYSTEMS 64 /* distinct systems a scene runs */
#define SCALING_MAX_THREADS 1024

typedef bench_scene_t scaling_scene_t;

static const scaling_scene_t scenes[] = {
    {"flock", BENCH_FLOCK_AGENTS, BENCH_FLOCK_STEPS, BENCH_FLOCK_WARMUP, BENCH_FLOCK_DT, 0,
     bench_flock_scene},
    {"flock3d", BENCH_FLOCK_AGENTS, BENCH_FLOCK_STEPS, BENCH_FLOCK_WARMUP, BENCH_FLOCK_DT, 0,
     bench_flock3d_scene},
    {"crowd", BENCH_CROWD_AGENTS, BENCH_CROWD_STEPS, BENCH_CROWD_WARMUP, BENCH_CROWD_DT, 0,
     bench_crowd_scene},
    {"planner", BENCH_PLANNER_AGENTS, (int64_t)(BENCH_PLANNER_SECONDS * 60.0), 0, BENCH_PLANNER_DT, 1,
     bench_planner_scene},
};
#define SCENE_COUNT ((int)(sizeof scenes / sizeof scenes[0]))

const bench_scene_t* bench_scene_find(const char* name)
{
    if (!name) return &scenes[0];
    for (int i = 0; i < SCENE_COUNT; ++i)
        if (!strcmp(scenes[i].name, name)) return &scenes[i];
    return NULL;
}

typedef struct scaling_opts {
    int32_t threads[SCALING_MAX_COUNTS];
    int counts;                    /* 0: powers of two up to the physical cores */
    int64_t agents, steps, warmup; /* -1: the scene's default */
    int64_t rounds;
    int json;
    const char* csv; /* --csv FILE; "-": stdout */
    int ceiling;     /* --ceiling */
} scaling_opts_t;

/* One system across the sweep: best ms per step at each thread count
 * (NaN where it did not run). */
typedef struct scaling_system {
    char name[48];
    char stage[16];
    double best_ms[SCALING_MAX_COUNTS];
} scaling_system_t;

typedef struct scaling_result {
    const scaling_scene_t* scene;
    int64_t agents, steps, warmup, rounds;
    int counts;
    int32_t threads[SCALING_MAX_COUNTS]; /* as asked */
    int32_t used[SCALING_MAX_COUNTS];    /* as the world reports */
    double* rates;                       /* [count * rounds + round] */
    uint64_t* hashes;                    /* the same layout */
    double* ceiling;                     /* the same layout; NULL without --ceiling */
    double* per_world;                   /* the same: a world's rate together over alone */
    scaling_system_t systems[SCALING_MAX_SYSTEMS];
    int system_count;
    int cores, pus; /* physical cores and hardware threads (hwloc), 0 when unknown */
} scaling_result_t;

/* ---- the machine ------------------------------------------------------------ */

static void machine_cores(int* cores, int* pus)
{
    *cores = *pus = 0;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return;
    if (hwloc_topology_load(topo) == 0) {
        *cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        *pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        if (*cores <= 0) *cores = *pus;
    }
    hwloc_topology_destroy(topo);
    if (*cores < 0) *cores = 0;
    if (*pus < *cores) *pus = *cores;
}

/* "" when t fits the machine; else why not, into buf. */
static const char* oversubscription(const scaling_result_t* r, int32_t t, char* buf, size_t size)
{
    buf[0] = '\0';
    if (r->pus > 0 && t > r->pus)
        snprintf(buf, size, "oversubscribed: %d threads on %d hardware threads", (int)t, r->pus);
    else if (r->cores > 0 && t > r->cores)
        snprintf(buf, size, "%d threads on %d physical cores (SMT)", (int)t, r->cores);
    return buf;
}

/* ---- one run ----------------------------------------------------------------- */

static scaling_system_t* find_system(scaling_result_t* r, const bench_system_t* s)
{
    for (int i = 0; i < r->system_count; ++i)
        if (!strcmp(r->systems[i].name, s->name) && !strcmp(r->systems[i].stage, s->stage))
            return &r->systems[i];
    if (r->system_count == SCALING_MAX_SYSTEMS) return NULL;
    scaling_system_t* sys = &r->systems[r->system_count++];
    snprintf(sys->name, sizeof sys->name, "%s", s->name);
    snprintf(sys->stage, sizeof sys->stage, "%s", s->stage);
    for (int k = 0; k < SCALING_MAX_COUNTS; ++k) sys->best_ms[k] = NAN;
    return sys;
}

/* Build the scene on r->threads[k] threads, step it, and record round
 * `round`. Returns CLI_EXIT_OK or CLI_EXIT_FAILURE (message printed). */
static int run_once(scaling_result_t* r, int k, int64_t round)
{
    const scaling_scene_t* sc = r->scene;
    shoal_world_t* w = NULL;
    if (sc->build("bench scaling", r->agents, r->threads[k], &w) != CLI_EXIT_OK) return CLI_EXIT_FAILURE;
    r->used[k] = shoal_world_thread_count(w);
    for (int64_t s = 0; s < r->warmup; ++s)
        if (shoal_world_step(w, sc->dt) != SHOAL_OK) goto step_failed;
    shoal_world_reset_stats(w);
    double t0 = cli_now_seconds();
    for (int64_t s = 0; s < r->steps; ++s)
        if (shoal_world_step(w, sc->dt) != SHOAL_OK) goto step_failed;
    double seconds = cli_now_seconds() - t0;
    if (seconds <= 0.0) seconds = 1e-9;
    size_t at = (size_t)k * (size_t)r->rounds + (size_t)round;
    r->rates[at] = sc->realtime ? (double)r->steps * (double)sc->dt / seconds
                                : (double)r->agents * (double)r->steps / seconds;
    r->hashes[at] = shoal_world_state_hash(w);
    bench_system_t s;
    for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
        if (!bench_system_read(w, i, &s)) continue;
        scaling_system_t* sys = find_system(r, &s);
        if (!sys) continue; /* more distinct systems than the table holds: not reported */
        if (isnan(sys->best_ms[k]) || s.ms_per_step < sys->best_ms[k]) sys->best_ms[k] = s.ms_per_step;
    }
    shoal_world_destroy(w);
    return CLI_EXIT_OK;
step_failed:
    cli_error("bench scaling: %s on %d threads: step failed: %s", sc->name, (int)r->threads[k],
              shoal_world_last_error(w));
    shoal_world_destroy(w);
    return CLI_EXIT_FAILURE;
}

/* ---- the machine's ceiling (--ceiling) ---------------------------------------- */

/* The copies of one ceiling run: each thread builds and warms up its own
 * world, then waits for the others, awake (spinning, yielding to any
 * thread that needs the core); the last one ready starts them all. */
typedef struct ceiling_run {
    const scaling_result_t* r;
    atomic_int ready, go;
    int copies;
    double start; /* when the last one ready let them go */
} ceiling_run_t;

typedef struct ceiling_copy {
    ceiling_run_t* run;
    int64_t agents;
    double end; /* when its timed steps ended */
    int failed; /* 1: the build failed (reported), 2: a step failed */
    char error[256];
} ceiling_copy_t;

static void ceiling_copy_main(ceiling_copy_t* c)
{
    ceiling_run_t* run = c->run;
    const scaling_scene_t* sc = run->r->scene;
    shoal_world_t* w = NULL;
    if (sc->build("bench scaling --ceiling", c->agents, 1, &w) != CLI_EXIT_OK) {
        c->failed = 1;
        w = NULL;
    }
    for (int64_t s = 0; w && !c->failed && s < run->r->warmup; ++s)
        if (shoal_world_step(w, sc->dt) != SHOAL_OK) {
            c->failed = 2;
            snprintf(c->error, sizeof c->error, "%s", shoal_world_last_error(w));
        }
    if (atomic_fetch_add(&run->ready, 1) == run->copies - 1) {
        run->start = cli_now_seconds();
        atomic_store(&run->go, 1); /* publishes start */
    }
    while (!atomic_load(&run->go)) sched_yield();
    for (int64_t s = 0; w && !c->failed && s < run->r->steps; ++s)
        if (shoal_world_step(w, sc->dt) != SHOAL_OK) {
            c->failed = 2;
            snprintf(c->error, sizeof c->error, "%s", shoal_world_last_error(w));
        }
    c->end = cli_now_seconds();
    if (w) shoal_world_destroy(w);
}

/* `t` worlds of `agents` agents in all (world i agents / t, the first
 * agents % t one more), each on a thread of one OpenMP team (the threads
 * the sweep's own runs step with, so that none of them is left spinning
 * beside the copies), stepped at once: the seconds from their start until
 * the last one ended. Returns CLI_EXIT_OK or CLI_EXIT_FAILURE (message
 * printed). */
static int run_copies(const scaling_result_t* r, int32_t t, int64_t agents, double* seconds)
{
    ceiling_copy_t* copies = calloc((size_t)t, sizeof *copies);
    if (!copies) {
        cli_error("bench scaling --ceiling: out of memory");
        return CLI_EXIT_FAILURE;
    }
    ceiling_run_t run;
    run.r = r;
    run.copies = t;
    run.start = 0.0;
    atomic_init(&run.ready, 0);
    atomic_init(&run.go, 0);
    for (int32_t i = 0; i < t; ++i) {
        copies[i].run = &run;
        copies[i].agents = agents / t + (i < agents % t ? 1 : 0);
    }
    int team = t;
#pragma omp parallel num_threads(t)
    {
        /* a team smaller than asked (OMP_THREAD_LIMIT, OMP_DYNAMIC): no run */
#pragma omp single
        team = omp_get_num_threads();
        if (team == t) ceiling_copy_main(&copies[omp_get_thread_num()]);
    }
    int rc = CLI_EXIT_OK;
    if (team != t) {
        cli_error("bench scaling --ceiling: OpenMP gave %d threads of the %d asked (see OMP_THREAD_LIMIT and "
                  "OMP_DYNAMIC)",
                  team, (int)t);
        rc = CLI_EXIT_FAILURE;
    }
    double end = 0.0;
    for (int32_t i = 0; rc == CLI_EXIT_OK && i < t; ++i) {
        if (copies[i].failed == 1)
            rc = CLI_EXIT_FAILURE; /* the build said why */
        else if (copies[i].failed == 2) {
            cli_error("bench scaling --ceiling: %s, world %d of %d (%lld agents): step failed: %s",
                      r->scene->name, (int)i + 1, (int)t, (long long)copies[i].agents, copies[i].error);
            rc = CLI_EXIT_FAILURE;
        }
        if (copies[i].end > end) end = copies[i].end;
    }
    *seconds = end - run.start > 0.0 ? end - run.start : 1e-9;
    free(copies);
    return rc;
}

/* The ceiling at r->threads[k] for round `round`: T worlds of agents / T
 * at once, then (T > 1) the largest of them alone on this thread, for the
 * share of one world's rate each keeps when all run. */
static int run_ceiling(scaling_result_t* r, int k, int64_t round)
{
    const int32_t t = r->threads[k];
    const size_t at = (size_t)k * (size_t)r->rounds + (size_t)round;
    const scaling_scene_t* sc = r->scene;
    double together = 0.0, alone = 0.0;
    if (run_copies(r, t, r->agents, &together) != CLI_EXIT_OK) return CLI_EXIT_FAILURE;
    r->ceiling[at] = sc->realtime ? (double)r->steps * (double)sc->dt / together
                                  : (double)r->agents * (double)r->steps / together;
    const int64_t n = r->agents / t + (r->agents % t ? 1 : 0);
    if (t == 1)
        alone = together;
    else if (run_copies(r, 1, n, &alone) != CLI_EXIT_OK)
        return CLI_EXIT_FAILURE;
    /* the largest world: the time it took alone over the time all took */
    r->per_world[at] = alone / together;
    return CLI_EXIT_OK;
}

/* ---- figures ----------------------------------------------------------------- */

static int compare_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

typedef struct count_figures {
    double best, median;
    double speedup;   /* best over the first count's best */
    int rounds_agree; /* every round's hash the same */
    /* --ceiling (else NaN): the copies' best and median rate, the best
     * over the first count's best run, and speedup over that */
    double ceiling_best, ceiling_median, ceiling_speedup, efficiency;
    double per_world; /* the best round's share of one world's rate alone */
} count_figures_t;

/* The best and the median of rates[0, rounds). */
static void best_and_median(const double* rates, int64_t rounds, double* best, double* median)
{
    double sorted[1024];
    int64_t n = rounds < 1024 ? rounds : 1024;
    memcpy(sorted, rates, (size_t)n * sizeof(double));
    qsort(sorted, (size_t)n, sizeof(double), compare_double);
    *best = sorted[n - 1];
    *median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

static count_figures_t figures_of(const scaling_result_t* r, int k)
{
    count_figures_t f;
    best_and_median(r->rates + (size_t)k * (size_t)r->rounds, r->rounds, &f.best, &f.median);
    double base = r->rates[0];
    for (int64_t i = 1; i < r->rounds; ++i) base = fmax(base, r->rates[i]);
    f.speedup = base > 0.0 ? f.best / base : NAN;
    f.ceiling_best = f.ceiling_median = f.ceiling_speedup = f.efficiency = f.per_world = NAN;
    if (r->ceiling) {
        best_and_median(r->ceiling + (size_t)k * (size_t)r->rounds, r->rounds, &f.ceiling_best,
                        &f.ceiling_median);
        f.ceiling_speedup = base > 0.0 ? f.ceiling_best / base : NAN;
        f.efficiency = f.ceiling_best > 0.0 ? f.best / f.ceiling_best : NAN;
        const double* ceiling = r->ceiling + (size_t)k * (size_t)r->rounds;
        int64_t top = 0;
        for (int64_t i = 1; i < r->rounds; ++i)
            if (ceiling[i] > ceiling[top]) top = i;
        f.per_world = r->per_world[(size_t)k * (size_t)r->rounds + (size_t)top];
    }
    f.rounds_agree = 1;
    const uint64_t* hashes = r->hashes + (size_t)k * (size_t)r->rounds;
    for (int64_t i = 1; i < r->rounds; ++i) f.rounds_agree &= hashes[i] == hashes[0];
    return f;
}

/* The best ms per step of the whole step at count k: the best rate's. */
static double step_ms(const scaling_result_t* r, const count_figures_t* f)
{
    if (!(f->best > 0.0)) return NAN;
    double seconds = r->scene->realtime ? (double)r->steps * (double)r->scene->dt / f->best
                                        : (double)r->agents * (double)r->steps / f->best;
    return seconds * 1e3 / (double)r->steps;
}

/* A system's speed-up at count k over the first count; NaN when either
 * time is missing or zero. */
static double system_speedup(const scaling_system_t* s, int k)
{
    double base = s->best_ms[0], now = s->best_ms[k];
    return base > 0.0 && now > 0.0 ? base / now : NAN;
}

static int hashes_agree(const scaling_result_t* r)
{
    size_t n = (size_t)r->counts * (size_t)r->rounds;
    for (size_t i = 1; i < n; ++i)
        if (r->hashes[i] != r->hashes[0]) return 0;
    return 1;
}

static const char* rate_unit(const scaling_result_t* r)
{
    return r->scene->realtime ? "realtime_factor" : "agent_steps_per_s";
}

/* ---- output ------------------------------------------------------------------ */

static void add_number_or_null(cJSON* o, const char* key, double x)
{
    if (isfinite(x))
        cJSON_AddNumberToObject(o, key, x);
    else
        cJSON_AddNullToObject(o, key);
}

static void print_json(const scaling_result_t* r)
{
    int agree = hashes_agree(r);
    char note[96], hash[17];
    for (int k = 0; k < r->counts; ++k) {
        count_figures_t f = figures_of(r, k);
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "scaling");
        cJSON_AddStringToObject(root, "scene", r->scene->name);
        cJSON_AddNumberToObject(root, "agents", (double)r->agents);
        cJSON_AddNumberToObject(root, "steps", (double)r->steps);
        cJSON_AddNumberToObject(root, "warmup", (double)r->warmup);
        cJSON_AddNumberToObject(root, "rounds", (double)r->rounds);
        cJSON_AddNumberToObject(root, "threads", r->threads[k]);
        cJSON_AddNumberToObject(root, "threads_used", r->used[k]);
        cJSON_AddNumberToObject(root, "baseline_threads", r->threads[0]);
        cJSON_AddNumberToObject(root, "cores", r->cores);
        cJSON_AddNumberToObject(root, "hardware_threads", r->pus);
        cJSON_AddBoolToObject(root, "oversubscribed",
                              oversubscription(r, r->threads[k], note, sizeof note)[0] != '\0');
        cJSON_AddNumberToObject(root, "lanes", SHOAL_LANES);
        cJSON_AddStringToObject(root, "rate_unit", rate_unit(r));
        cJSON_AddNumberToObject(root, "best_rate", f.best);
        cJSON_AddNumberToObject(root, "median_rate", f.median);
        cJSON* rates = cJSON_AddArrayToObject(root, "rates");
        for (int64_t i = 0; i < r->rounds; ++i)
            cJSON_AddItemToArray(rates,
                                 cJSON_CreateNumber(r->rates[(size_t)k * (size_t)r->rounds + (size_t)i]));
        add_number_or_null(root, "ms_per_step", step_ms(r, &f));
        add_number_or_null(root, "speedup", f.speedup);
        if (r->ceiling) {
            add_number_or_null(root, "ceiling_rate", f.ceiling_best);
            add_number_or_null(root, "ceiling_median_rate", f.ceiling_median);
            cJSON* ceiling = cJSON_AddArrayToObject(root, "ceiling_rates");
            for (int64_t i = 0; i < r->rounds; ++i)
                cJSON_AddItemToArray(
                    ceiling, cJSON_CreateNumber(r->ceiling[(size_t)k * (size_t)r->rounds + (size_t)i]));
            add_number_or_null(root, "ceiling_speedup", f.ceiling_speedup);
            add_number_or_null(root, "efficiency", f.efficiency);
            add_number_or_null(root, "ceiling_per_world", f.per_world);
        }
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)r->hashes[(size_t)k * (size_t)r->rounds]);
        cJSON_AddStringToObject(root, "state_hash", hash);
        cJSON* hashes = cJSON_AddArrayToObject(root, "state_hashes");
        for (int64_t i = 0; i < r->rounds; ++i) {
            snprintf(hash, sizeof hash, "%016llx",
                     (unsigned long long)r->hashes[(size_t)k * (size_t)r->rounds + (size_t)i]);
            cJSON_AddItemToArray(hashes, cJSON_CreateString(hash));
        }
        cJSON_AddBoolToObject(root, "hashes_agree", agree);
        cJSON* systems = cJSON_AddArrayToObject(root, "systems");
        for (int i = 0; i < r->system_count; ++i) {
            const scaling_system_t* s = &r->systems[i];
            if (isnan(s->best_ms[k])) continue;
            cJSON* o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", s->name);
            cJSON_AddStringToObject(o, "stage", s->stage);
            cJSON_AddNumberToObject(o, "ms_per_step", s->best_ms[k]);
            add_number_or_null(o, "speedup", system_speedup(s, k));
            cJSON_AddItemToArray(systems, o);
        }
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    }
}

/* A CSV number: empty when not finite. */
static void csv_number(FILE* out, double x)
{
    if (isfinite(x))
        fprintf(out, ",%.6g", x);
    else
        fprintf(out, ",");
}

static void print_csv(FILE* out, const scaling_result_t* r)
{
    int agree = hashes_agree(r);
    char note[96];
    fprintf(out,
            "scene,agents,steps,warmup,rounds,threads,threads_used,oversubscribed,system,stage,ms_per_step,"
            "speedup,rate_unit,best_rate,median_rate,state_hash,hashes_agree%s\n",
            r->ceiling ? ",ceiling_rate,ceiling_speedup,efficiency,ceiling_per_world" : "");
    for (int k = 0; k < r->counts; ++k) {
        count_figures_t f = figures_of(r, k);
        int over = oversubscription(r, r->threads[k], note, sizeof note)[0] != '\0';
        char head[160];
        snprintf(head, sizeof head, "%s,%lld,%lld,%lld,%lld,%d,%d,%d", r->scene->name, (long long)r->agents,
                 (long long)r->steps, (long long)r->warmup, (long long)r->rounds, (int)r->threads[k],
                 (int)r->used[k], over);
        char tail[40];
        snprintf(tail, sizeof tail, ",%016llx,%d",
                 (unsigned long long)r->hashes[(size_t)k * (size_t)r->rounds], agree);
        fprintf(out, "%s,step,all", head);
        csv_number(out, step_ms(r, &f));
        csv_number(out, f.speedup);
        fprintf(out, ",%s", rate_unit(r));
        csv_number(out, f.best);
        csv_number(out, f.median);
        fprintf(out, "%s", tail);
        if (r->ceiling) {
            csv_number(out, f.ceiling_best);
            csv_number(out, f.ceiling_speedup);
            csv_number(out, f.efficiency);
            csv_number(out, f.per_world);
        }
        fprintf(out, "\n");
        for (int i = 0; i < r->system_count; ++i) {
            const scaling_system_t* s = &r->systems[i];
            if (isnan(s->best_ms[k])) continue;
            fprintf(out, "%s,%s,%s", head, s->name, s->stage);
            csv_number(out, s->best_ms[k]);
            csv_number(out, system_speedup(s, k));
            fprintf(out, ",%s,,%s%s\n", rate_unit(r), tail, r->ceiling ? ",,,," : "");
        }
    }
}

/* --csv FILE: written whole or not at all (io/atomic_file.h). */
static int write_csv_file(const char* path, const scaling_result_t* r)
{
    char why[512];
    atomic_file_t file;
    if (atomic_file_open(&file, path, why, (int)sizeof why) != 0) {
        cli_error("bench scaling: --csv: %s", why);
        return -1;
    }
    print_csv(file.f, r);
    if (atomic_file_commit(&file, why, (int)sizeof why) != 0) {
        cli_error("bench scaling: --csv: %s", why);
        return -1;
    }
    return 0;
}

/* Systems under this share of the step at the first count are left out of
 * the text table: their times are a few microseconds of start and end, and
 * their speed-ups noise. JSON and CSV have them all. */
#define TABLE_MIN_SHARE 0.01

static void print_text(const scaling_result_t* r)
{
    const char* unit = r->scene->realtime ? "real-time factor" : "agent-steps/s";
    printf("scaling %s: %lld agents, %lld steps (+%lld warm-up), %lld round%s per thread count, %d lanes\n",
           r->scene->name, (long long)r->agents, (long long)r->steps, (long long)r->warmup,
           (long long)r->rounds, r->rounds == 1 ? "" : "s", SHOAL_LANES);
    if (r->cores > 0)
        printf("machine: %d physical cores, %d hardware threads\n", r->cores, r->pus);
    else
        printf("machine: core count unknown (hwloc could not read the topology)\n");
    printf("speed-up: best over the best at %d thread%s\n\n", (int)r->threads[0],
           r->threads[0] == 1 ? "" : "s");
    printf("%7s %14s %14s %9s", "threads", r->scene->realtime ? "best rtf" : "best", "median", "speed-up");
    if (r->ceiling) printf(" %14s %9s %6s %9s", "ceiling", "speed-up", "eff.", "per world");
    printf("  %-16s\n", "state_hash");
    char note[96];
    int over = 0;
    for (int k = 0; k < r->counts; ++k) {
        count_figures_t f = figures_of(r, k);
        char used[32] = "";
        if (r->used[k] != r->threads[k]) snprintf(used, sizeof used, " (ran %d)", (int)r->used[k]);
        printf("%7d %14.4g %14.4g %8.2fx", (int)r->threads[k], f.best, f.median, f.speedup);
        if (r->ceiling)
            printf(" %14.4g %8.2fx %5.0f%% %8.0f%%", f.ceiling_best, f.ceiling_speedup, 100.0 * f.efficiency,
                   100.0 * f.per_world);
        printf("  %016llx%s%s", (unsigned long long)r->hashes[(size_t)k * (size_t)r->rounds],
               f.rounds_agree ? "" : " (rounds differ)", used);
        if (oversubscription(r, r->threads[k], note, sizeof note)[0]) {
            printf("  %s", note);
            over = 1;
        }
        printf("\n");
    }
    printf("(%s; best and median over the rounds)\n", unit);
    if (r->ceiling)
        printf(
            "ceiling: T worlds of agents/T each, a thread each, stepped at once (best over the rounds); its\n"
            "speed-up is over the first count's best; eff.: the best over the ceiling; per world: the rate\n"
            "each of those worlds kept, against one of them stepped alone (the clock and the caches under\n"
            "load)\n");
    if (over)
        printf("Thread counts above the machine's hardware threads share cores: their figures measure\n"
               "oversubscription, not scaling.\n");

    count_figures_t f0 = figures_of(r, 0);
    double base_step = step_ms(r, &f0);
    printf("\nper system: best ms per step at %d thread%s, and the speed-up at each count\n",
           (int)r->threads[0], r->threads[0] == 1 ? "" : "s");
    printf("%-16s %-10s %9s", "system", "stage", "ms/step");
    for (int k = 1; k < r->counts; ++k) {
        char head[16];
        snprintf(head, sizeof head, "x%d", (int)r->threads[k]);
        printf(" %7s", head);
    }
    printf("\n%-16s %-10s %9.3f", "step", "all", base_step);
    for (int k = 1; k < r->counts; ++k) printf(" %6.2fx", figures_of(r, k).speedup);
    printf("\n");
    int hidden = 0;
    for (int i = 0; i < r->system_count; ++i) {
        const scaling_system_t* s = &r->systems[i];
        if (!(s->best_ms[0] >= TABLE_MIN_SHARE * base_step)) {
            hidden++;
            continue;
        }
        printf("%-16s %-10s %9.3f", s->name, s->stage, s->best_ms[0]);
        for (int k = 1; k < r->counts; ++k) {
            double x = system_speedup(s, k);
            if (isfinite(x))
                printf(" %6.2fx", x);
            else
                printf(" %7s", "-");
        }
        printf("\n");
    }
    if (hidden)
        printf("(%d system%s under %.0f %% of the step left out; --json and --csv list them)\n", hidden,
               hidden == 1 ? "" : "s", TABLE_MIN_SHARE * 100.0);
    size_t runs = (size_t)r->counts * (size_t)r->rounds;
    if (hashes_agree(r))
        printf("\nstate_hash: the same in all %zu runs\n", runs);
    else
        printf("\nstate_hash: DIFFERS between runs: the sweep is not deterministic\n");
}

/* ---- options ----------------------------------------------------------------- */

#define STR_(x) #x
#define STR(x) STR_(x)
#define THREADS_EXPECTED                                                                                     \
    "a comma-separated list of thread counts in 1.." STR(SCALING_MAX_THREADS) ", e.g. 1,2,4"

static int parse_threads(const char* command, const char* name, const char* value, void* opts)
{
    scaling_opts_t* o = opts;
    o->counts = 0;
    if (value[0] == '\0')
        return cli_usage_error(command, "%s: expected %s, got an empty value", name, THREADS_EXPECTED);
    const char* p = value;
    for (int item = 1;; ++item) {
        size_t n = strcspn(p, ",");
        if (n == 0)
            return cli_usage_error(command, "%s '%s': item %d is empty (expected %s)", name, value, item,
                                   THREADS_EXPECTED);
        char text[32];
        int64_t t = 0;
        if (n >= sizeof text) n = sizeof text - 1;
        memcpy(text, p, n);
        text[n] = '\0';
        if (!cli_parse_int(text, 1, SCALING_MAX_THREADS, &t))
            return cli_usage_error(command,
                                   "%s '%s': item %d, '%s', is not a thread count in 1..%d (expected %s)",
                                   name, value, item, text, SCALING_MAX_THREADS, THREADS_EXPECTED);
        for (int i = 0; i < o->counts; ++i)
            if (o->threads[i] == (int32_t)t)
                return cli_usage_error(command, "%s '%s': %lld is listed twice", name, value, (long long)t);
        if (o->counts == SCALING_MAX_COUNTS)
            return cli_usage_error(command, "%s '%s': more than %d thread counts", name, value,
                                   SCALING_MAX_COUNTS);
        o->threads[o->counts++] = (int32_t)t;
        p += strcspn(p, ",");
        if (*p == '\0') break;
        ++p; /* past the comma: a trailing one leaves an empty item */
    }
    return 0;
}

#define SCALING_INT(name, metavar, field, lo, hi, help)                                                      \
    CLI_INT_ROW(name, metavar, scaling_opts_t, field, lo, hi, help)

static const cli_option_t scaling_options[] = {
    {.name = "--threads",
     .metavar = "T1,T2,...",
     .kind = CLI_CUSTOM,
     .parse = parse_threads,
     .help =
         "the thread counts, in the order run; speed-ups are over the first (default: 1 and the powers of "
         "two below the physical cores, then the core count: 1,2 on 2 cores, 1,2,4,8,16 on 16). Counts "
         "above the machine's hardware threads run, oversubscribed, and are marked so"},
    SCALING_INT("--agents", "N", agents, 2, 100000000,
                "agents, 2..100000000 (default: the scene's bench default: flock 100000, crowd 100000, "
                "planner 10000)"),
    SCALING_INT("--steps", "S", steps, 1, 1000000000,
                "timed steps (default: flock 100, crowd 100 of 0.25 s, planner 600 of 1/60 s)"),
    SCALING_INT("--warmup", "W", warmup, 0, 1000000000,
                "untimed steps first (default: flock 10, crowd 10, planner 0)"),
    SCALING_INT("--rounds", "R", rounds, 1, 1000, "runs per thread count, 1..1000 (default 3)"),
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(scaling_opts_t, json),
     .help = "JSON lines on stdout: one object per thread count (see below)"},
    {.name = "--csv",
     .metavar = "FILE",
     .kind = CLI_STRING,
     CLI_AT(scaling_opts_t, csv),
     .help =
         "also write CSV to FILE ('-': instead of the table on stdout): a header, then one row per thread "
         "count and system (see below)"},
    {.name = "--ceiling",
     .kind = CLI_FLAG,
     CLI_AT(scaling_opts_t, ceiling),
     .help = "also measure the machine's ceiling at each count T: T worlds of agents/T each, one a thread, "
             "stepped at once, sharing nothing (see below); two to three times the sweep's time"},
};

static const cli_spec_t scaling_spec = {
    .command = "bench scaling",
    .usage = "[flock|flock3d|crowd|planner] [options]",
    .about = "One scene swept over thread counts: for each count the scene is built anew and\n"
             "run R times (rounds interleaved over the counts), warm-up steps untimed. The\n"
             "scenes are those of 'shoal bench flock', 'shoal bench crowd' (grid) and 'shoal\n"
             "bench planner' with their defaults. Every run must end in the same state_hash:\n"
             "exit 1 when one differs.\n",
    .arguments = "  flock|flock3d|crowd|planner\n"
                 "                        the scene (default flock; flock3d: bench flock --dim 3)\n",
    .options = scaling_options,
    .option_count = CLI_COUNT(scaling_options),
    .details = "Rate: agent-steps/s (flock, crowd) or the real-time factor, simulated over wall\n"
               "seconds (planner). Speed-up: the best rate over the first count's best rate; a\n"
               "system's: its best ms per step at the first count over that at this count.\n"
               "--json prints one object per thread count and line: bench (\"scaling\"), scene,\n"
               "agents, steps, warmup, rounds, threads, threads_used, baseline_threads, cores,\n"
               "hardware_threads, oversubscribed, lanes, rate_unit (agent_steps_per_s or\n"
               "realtime_factor), best_rate, median_rate, rates (each round's), ms_per_step\n"
               "(the best), speedup, state_hash (round 1's), state_hashes, hashes_agree (over\n"
               "the whole sweep), systems [{name, stage, ms_per_step, speedup}].\n"
               "--csv FILE (- for stdout) columns: scene, agents, steps, warmup, rounds, threads,\n"
               "threads_used, oversubscribed, system (\"step\" for the whole step, stage \"all\"), stage,\n"
               "ms_per_step, speedup, rate_unit, best_rate, median_rate (step rows only),\n"
               "state_hash, hashes_agree. 'shoal plot scaling' draws either.\n"
               "--ceiling: beside each run, T worlds of agents/T agents (the scene at that size),\n"
               "each a world of one thread on its own thread, built and warmed up there, then\n"
               "stepped at once; their agent-steps (planner: simulated seconds) over the time\n"
               "the slowest took is the ceiling rate: what this machine gives T threads of the\n"
               "same work when they share nothing (the clock under load, shared caches and\n"
               "memory bandwidth included). JSON adds ceiling_rate (the best), ceiling_median_rate,\n"
               "ceiling_rates, ceiling_speedup (over the first count's best run) and efficiency\n"
               "(best_rate over ceiling_rate), and ceiling_per_world: at the best ceiling round,\n"
               "the time the largest of the T worlds takes stepped alone right after over the\n"
               "time the T took at once, the share of a core's speed each core keeps when all\n"
               "work (1 at T = 1). CSV adds the columns ceiling_rate, ceiling_speedup,\n"
               "efficiency and ceiling_per_world (step rows only).\n",
    .max_positional = 1,
    .positional = "scene",
};

/* 1 and the powers of two below `cores`, then `cores`. */
static int default_threads(int cores, int32_t* out)
{
    if (cores < 1) cores = 1;
    int n = 0;
    for (int32_t t = 1; t < cores && n < SCALING_MAX_COUNTS - 1; t *= 2) out[n++] = t;
    out[n++] = cores > SCALING_MAX_THREADS ? SCALING_MAX_THREADS : cores;
    return n;
}

static int bench_scaling(int argc, char** argv)
{
    scaling_opts_t o;
    memset(&o, 0, sizeof o);
    o.agents = o.steps = o.warmup = -1;
    o.rounds = 3;
    const char* name = NULL;
    int stop = cli_parse(&scaling_spec, argc, argv, &o, &name, NULL);
    if (stop >= 0) return stop;
    int csv_stdout = o.csv != NULL && strcmp(o.csv, "-") == 0;
    if (o.json && csv_stdout)
        return cli_usage_error("bench scaling", "--json and --csv -: one format on stdout at a time (give "
                                                "--csv a file)");
    const scaling_scene_t* scene = bench_scene_find(name);
    if (!scene)
        return cli_usage_error("bench scaling", "unknown scene '%s' (expected " BENCH_SCENE_NAMES ")", name);

    scaling_result_t r;
    memset(&r, 0, sizeof r);
    r.scene = scene;
    r.agents = o.agents >= 0 ? o.agents : scene->agents;
    r.steps = o.steps >= 0 ? o.steps : scene->steps;
    r.warmup = o.warmup >= 0 ? o.warmup : scene->warmup;
    r.rounds = o.rounds;
    machine_cores(&r.cores, &r.pus);
    if (o.counts > 0) {
        r.counts = o.counts;
        memcpy(r.threads, o.threads, sizeof r.threads);
    } else {
        r.counts = default_threads(r.cores, r.threads);
    }
    for (int k = 0; o.ceiling && k < r.counts; ++k)
        if (r.agents / r.threads[k] < 2)
            return cli_usage_error(
                "bench scaling",
                "--ceiling at %d threads needs %d agents or more (2 a world), got --agents %lld",
                (int)r.threads[k], 2 * (int)r.threads[k], (long long)r.agents);
    size_t runs = (size_t)r.counts * (size_t)r.rounds;
    r.rates = calloc(runs, sizeof *r.rates);
    r.hashes = calloc(runs, sizeof *r.hashes);
    if (o.ceiling) {
        r.ceiling = calloc(runs, sizeof *r.ceiling);
        r.per_world = calloc(runs, sizeof *r.per_world);
    }
    int rc = CLI_EXIT_OK;
    if (!r.rates || !r.hashes || (o.ceiling && (!r.ceiling || !r.per_world))) {
        cli_error("bench scaling: out of memory");
        rc = CLI_EXIT_FAILURE;
    }
    int progress = isatty(STDERR_FILENO);
    for (int64_t round = 0; rc == CLI_EXIT_OK && round < r.rounds; ++round) {
        for (int k = 0; rc == CLI_EXIT_OK && k < r.counts; ++k) {
            if (progress)
                fprintf(stderr, "\rbench scaling: %s, round %lld of %lld, %d threads%s   ", scene->name,
                        (long long)round + 1, (long long)r.rounds, (int)r.threads[k],
                        o.ceiling ? " (and ceiling)" : "");
            rc = run_once(&r, k, round);
            if (rc == CLI_EXIT_OK && r.ceiling) rc = run_ceiling(&r, k, round);
        }
    }
    if (progress) fprintf(stderr, "\r%60s\r", "");
    if (rc == CLI_EXIT_OK) {
        if (o.json)
            print_json(&r);
        else if (csv_stdout)
            print_csv(stdout, &r);
        else
            print_text(&r);
        if (o.csv != NULL && !csv_stdout && write_csv_file(o.csv, &r) != 0) rc = CLI_EXIT_FAILURE;
        if (!hashes_agree(&r)) {
            cli_error("bench scaling: %s: the state_hash differs between runs (thread counts or rounds): "
                      "stepping is not deterministic",
                      scene->name);
            rc = CLI_EXIT_FAILURE;
        }
    }
    free(r.rates);
    free(r.hashes);
    free(r.ceiling);
    free(r.per_world);
    return rc;
}

const cli_command_t cli_bench_scaling = {"scaling",
                                         "flock, crowd or planner swept over thread counts: rates, "
                                         "speed-ups\nper system, and one state_hash for every count",
                                         bench_scaling};
