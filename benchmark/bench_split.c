/* `shoal bench split`: how a step's parallel loops would split over T
 * threads, found on one.
 *
 * The scene of `shoal bench scaling` is built for T threads and stepped
 * with the loop census on (ecs/parallel.h): every parallel loop runs on
 * the calling thread, block by block as T workers would take them, each
 * block timed, and its makespan on T workers of this core's speed is
 * worked out from those times. The step's time on one thread splits into
 * the loops' blocks and the serial code between them; at T threads the
 * loops take their makespans and the serial code what it took. Their sum
 * over the one-thread time is the speed-up the step's split allows (the
 * "split bound"): what is left out is what the split does not decide (a
 * loop's start and end, about a microsecond or two at 16 threads as
 * `shoal bench loops` measures; data handed between cores; the clock and
 * the memory under load: `bench scaling --ceiling` measures those). A
 * machine of 2 cores can so tell where a 16-core step would lose to its
 * own loops: a loop with few blocks, an uneven one, a serial pass. */
#define _POSIX_C_SOURCE 200809L

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmark/bench_scaling.h"
#include "ecs/parallel.h"
#include "ecs/world.h"
#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

typedef struct split_opts {
    int64_t threads, agents, steps, warmup;
    int json;
} split_opts_t;

/* A loop's figures per step. */
typedef struct split_loop {
    const par_census_loop_t* l;
    int index; /* its order among its system's loops */
    double ms, span_ms;
    double median;     /* the median of its calls' speed-ups */
    double typical_ms; /* ms over that median */
} split_loop_t;

static int by_time(const void* a, const void* b)
{
    double x = ((const split_loop_t*)a)->ms, y = ((const split_loop_t*)b)->ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int run(const bench_scene_t* sc, const split_opts_t* o)
{
    shoal_world_t* world = NULL;
    if (sc->build("bench split", o->agents, (int32_t)o->threads, &world) != CLI_EXIT_OK)
        return CLI_EXIT_FAILURE;
    world_t* w = (world_t*)world;
    par_census_t* census = (par_census_t*)calloc(1, sizeof *census);
    if (!census) {
        shoal_world_destroy(world);
        cli_error("bench split: out of memory");
        return CLI_EXIT_FAILURE;
    }
    /* The warm-up under the census too: no team of T threads to start. */
    par_census_set(w, census);
    for (int64_t s = 0; s < o->warmup; ++s)
        if (shoal_world_step(world, sc->dt) != SHOAL_OK) goto step_failed;
    par_census_set(w, census); /* cleared */
    double t0 = cli_now_seconds();
    for (int64_t s = 0; s < o->steps; ++s)
        if (shoal_world_step(world, sc->dt) != SHOAL_OK) goto step_failed;
    double seconds = cli_now_seconds() - t0;
    par_census_set(w, NULL);

    const double steps = (double)o->steps;
    const int32_t threads = census->threads;
    split_loop_t loops[PAR_CENSUS_LOOPS];
    double loops_ms = 0.0, span_ms = 0.0, typical_ms = 0.0, rounds = 0.0, moved = 0.0;
    for (int32_t i = 0; i < census->count; ++i) {
        const par_census_loop_t* l = &census->loops[i];
        split_loop_t* x = &loops[i];
        x->l = l;
        x->index = 0;
        for (int32_t j = 0; j < i; ++j)
            if (!strcmp(census->loops[j].system, l->system)) x->index++;
        x->ms = (double)l->ns * 1e-6 / steps;
        x->span_ms = (double)l->span_ns * 1e-6 / steps;
        x->median = par_census_median_speedup(l);
        x->typical_ms = x->median > 0.0 ? x->ms / x->median : x->span_ms;
        loops_ms += x->ms;
        span_ms += x->span_ms;
        typical_ms += x->typical_ms;
        moved += (double)l->moved_items / steps;
        rounds += (double)l->calls / steps;
    }
    qsort(loops, (size_t)census->count, sizeof loops[0], by_time);
    /* The census's own time (clock reads around each block, the
     * makespans) is no part of a step. */
    const double overhead_ms = (double)census->overhead_ns * 1e-6 / steps;
    const double step_ms = seconds * 1e3 / steps - overhead_ms;
    double serial_ms = step_ms - loops_ms;
    if (serial_ms < 0.0) serial_ms = 0.0;
    const double at_t = serial_ms + span_ms;
    const double bound = at_t > 0.0 ? step_ms / at_t : 0.0;
    const double typical_at_t = serial_ms + typical_ms;
    const double typical_bound = typical_at_t > 0.0 ? step_ms / typical_at_t : 0.0;
    const uint64_t hash = shoal_world_state_hash(world);

    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "split");
        cJSON_AddStringToObject(root, "scene", sc->name);
        cJSON_AddNumberToObject(root, "agents", (double)o->agents);
        cJSON_AddNumberToObject(root, "threads", threads);
        cJSON_AddNumberToObject(root, "steps", (double)o->steps);
        cJSON_AddNumberToObject(root, "warmup", (double)o->warmup);
        cJSON_AddNumberToObject(root, "step_ms", step_ms);
        cJSON_AddNumberToObject(root, "census_overhead_ms", overhead_ms);
        cJSON_AddNumberToObject(root, "loops_ms", loops_ms);
        cJSON_AddNumberToObject(root, "serial_ms", serial_ms);
        cJSON_AddNumberToObject(root, "span_ms", span_ms);
        cJSON_AddNumberToObject(root, "step_ms_at_threads", at_t);
        cJSON_AddNumberToObject(root, "split_bound", bound);
        cJSON_AddNumberToObject(root, "typical_span_ms", typical_ms);
        cJSON_AddNumberToObject(root, "typical_split_bound", typical_bound);
        cJSON_AddNumberToObject(root, "loops_per_step", rounds);
        cJSON_AddNumberToObject(root, "moved_per_agent_step", moved / (double)o->agents);
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hash);
        cJSON_AddStringToObject(root, "state_hash", hex);
        cJSON_AddNumberToObject(root, "dropped_calls", (double)census->dropped);
        cJSON* arr = cJSON_AddArrayToObject(root, "loops");
        for (int32_t i = 0; i < census->count; ++i) {
            const split_loop_t* x = &loops[i];
            const par_census_loop_t* l = x->l;
            cJSON* e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "system", l->system);
            cJSON_AddNumberToObject(e, "loop", x->index);
            cJSON_AddNumberToObject(e, "calls_per_step", (double)l->calls / steps);
            cJSON_AddNumberToObject(e, "items_per_call",
                                    l->calls ? (double)l->items / (double)l->calls : 0.0);
            cJSON_AddNumberToObject(e, "blocks_per_call",
                                    l->calls ? (double)l->blocks / (double)l->calls : 0.0);
            cJSON_AddNumberToObject(e, "single_calls", (double)l->single);
            cJSON_AddNumberToObject(e, "ms_per_step", x->ms);
            cJSON_AddNumberToObject(e, "span_ms_per_step", x->span_ms);
            cJSON_AddNumberToObject(e, "speedup", x->span_ms > 0.0 ? x->ms / x->span_ms : 0.0);
            cJSON_AddNumberToObject(e, "median_speedup", x->median);
            cJSON_AddNumberToObject(e, "busiest_share", l->calls ? l->share_sum / (double)l->calls : 0.0);
            if (l->moved_of > 0)
                cJSON_AddNumberToObject(e, "moved_share", (double)l->moved_items / (double)l->moved_of);
            else
                cJSON_AddNullToObject(e, "moved_share");
            cJSON_AddItemToArray(arr, e);
        }
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("split %s: %lld agents, %lld steps (+%lld warm-up), as %d threads would split it, on one\n",
               sc->name, (long long)o->agents, (long long)o->steps, (long long)o->warmup, (int)threads);
        printf("step on one thread %10.3f ms: loops %.3f, serial between them %.3f (the census's own %.3f "
               "left out)\n",
               step_ms, loops_ms, serial_ms, overhead_ms);
        printf("step at %d threads %9.3f ms: the loops' makespans %.3f, the serial part %.3f\n", (int)threads,
               at_t, span_ms, serial_ms);
        printf("split bound        %9.2fx (%.1f %% of %d), %.1f parallel loops a step\n", bound,
               100.0 * bound / threads, (int)threads, rounds);
        printf("typical calls      %9.2fx (each loop at the median of its calls' speed-ups)\n",
               typical_bound);
        printf("rows moved         %9.3f an agent a step (a loop's rows that another worker had in the last "
               "one)\n\n",
               moved / (double)o->agents);
        printf("%-36s %4s %6s %8s %6s %8s %8s %8s %8s %7s %6s\n", "system", "loop", "calls", "items",
               "blocks", "ms/step", "at T", "speed-up", "median", "busiest", "moved");
        for (int32_t i = 0; i < census->count; ++i) {
            const split_loop_t* x = &loops[i];
            const par_census_loop_t* l = x->l;
            if (x->ms < 0.001 * step_ms) continue;
            char mv[16] = "-";
            if (l->moved_of > 0)
                snprintf(mv, sizeof mv, "%.1f%%", 100.0 * (double)l->moved_items / (double)l->moved_of);
            printf("%-36.36s %4d %6.2f %8.0f %6.1f %8.3f %8.3f %7.2fx %7.2fx %6.1f%% %6s\n", l->system,
                   x->index, (double)l->calls / steps, (double)l->items / (double)l->calls,
                   (double)l->blocks / (double)l->calls, x->ms, x->span_ms,
                   x->span_ms > 0.0 ? x->ms / x->span_ms : 0.0, x->median,
                   100.0 * l->share_sum / (double)l->calls, mv);
        }
        printf("(loops under 0.1 %% of the step left out; --json lists them. busiest: the share of a call's\n"
               "items the busiest of the %d workers ran, %.1f %% when even. moved: of a loop over as many\n"
               "items as agents (rows, or sorted agents, about the rows since the last reorder), the items\n"
               "another worker had in the last such loop: data one core reads that another wrote)\n",
               (int)threads, 100.0 / threads);
        printf("state_hash %016llx\n", (unsigned long long)hash);
    }
    free(census);
    shoal_world_destroy(world);
    return CLI_EXIT_OK;
step_failed:
    par_census_set(w, NULL);
    cli_error("bench split: %s: step failed: %s", sc->name, shoal_world_last_error(world));
    free(census);
    shoal_world_destroy(world);
    return CLI_EXIT_FAILURE;
}

#define SPLIT_INT(name, metavar, field, lo, hi, help)                                                        \
    CLI_INT_ROW(name, metavar, split_opts_t, field, lo, hi, help)

static const cli_option_t split_options[] = {
    SPLIT_INT("--threads", "T", threads, 1, 1024, "the thread count to split for, 1..1024 (default 16)"),
    SPLIT_INT("--agents", "N", agents, 2, 100000000,
              "agents (default: the scene's bench default: flock 100000, crowd 100000, planner 10000)"),
    SPLIT_INT("--steps", "S", steps, 1, 1000000000, "timed steps (default: the scene's, as bench scaling)"),
    SPLIT_INT("--warmup", "W", warmup, 0, 1000000000, "untimed steps first (default: the scene's)"),
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(split_opts_t, json),
     .help = "one JSON object on stdout (see below)"},
};

static const cli_spec_t split_spec = {
    .command = "bench split",
    .usage = "[flock|flock3d|crowd|planner] [options]",
    .about = "How the step's parallel loops would split over T threads, found on one thread:\n"
             "the scene of 'shoal bench scaling', built for T threads, is stepped with every\n"
             "loop run on the calling thread block by block as T workers would take them,\n"
             "each block timed. A loop's time at T is the makespan of its blocks on T workers\n"
             "of this core's speed; the serial code between loops keeps its time. The split\n"
             "bound, the one-thread step over that sum, is the speed-up the split allows:\n"
             "what it leaves out (loop starts and ends, data handed between cores, the clock\n"
             "and memory under load) is for 'bench loops' and 'bench scaling --ceiling'.\n",
    .arguments = "  flock|flock3d|crowd|planner\n"
                 "                        the scene (default flock)\n",
    .options = split_options,
    .option_count = CLI_COUNT(split_options),
    .details = "--json prints one object: bench (\"split\"), scene, agents, threads, steps,\n"
               "warmup, step_ms (one thread, the census's own time left out),\n"
               "census_overhead_ms (that time: clock reads, makespans), loops_ms (the loops'\n"
               "blocks), serial_ms (the rest), span_ms (the loops' makespans at T),\n"
               "step_ms_at_threads (span_ms + serial_ms), split_bound, typical_span_ms (each\n"
               "loop's ms over the median of its calls' speed-ups: little moved by a block that\n"
               "a busy machine slowed), typical_split_bound, loops_per_step,\n"
               "moved_per_agent_step (rows the step's loops hand from one worker to another,\n"
               "per agent), state_hash (the same as a run on any thread count), dropped_calls (calls of "
               "loops past the\n"
               "census's table), loops [{system (\"fused: a+b\" for a fused pass, \"-\" outside\n"
               "systems), loop (its order in the system), calls_per_step, items_per_call,\n"
               "blocks_per_call, single_calls (run as one block), ms_per_step,\n"
               "span_ms_per_step, speedup, median_speedup (of its first 256 calls),\n"
               "busiest_share, moved_share (of a loop over as many items as agents, the items\n"
               "another worker had in the last such loop; null for others)}], the longest\n"
               "first.\n",
    .max_positional = 1,
    .positional = "scene",
};

static int bench_split(int argc, char** argv)
{
    split_opts_t o = {
        .threads = 16,
        .agents = -1,
        .steps = -1,
        .warmup = -1,
    };
    const char* name = NULL;
    int stop = cli_parse(&split_spec, argc, argv, &o, &name, NULL);
    if (stop >= 0) return stop;
    const bench_scene_t* sc = bench_scene_find(name);
    if (!sc)
        return cli_usage_error("bench split", "unknown scene '%s' (expected " BENCH_SCENE_NAMES ")", name);
    if (o.agents < 0) o.agents = sc->agents;
    if (o.steps < 0) o.steps = sc->steps;
    if (o.warmup < 0) o.warmup = sc->warmup;
    return run(sc, &o);
}

const cli_command_t cli_bench_split = {"split",
                                       "how a scene's parallel loops would split over T threads, found "
                                       "on\none thread: each loop's makespan on T workers, the split bound",
                                       bench_split};
