/* `shoal bench loops`: what a parallel loop costs to start and end.
 *
 * A step is many short loops (a flock step about twenty), so at many
 * threads a loop's start and end, not its work, can be what a small system
 * costs. The same loop (a few float updates per item, cut as the built-in
 * systems cut their rows) runs N times three ways, in alternating rounds:
 *   - serial: the calling thread alone, no dispatch (the work itself);
 *   - forkjoin: each loop its own OpenMP parallel region, as a loop outside
 *     a step runs;
 *   - region: every loop handed to the threads of one region, as inside a
 *     step (par_region).
 * Per loop: the best round's nanoseconds, and the overhead over the work
 * split evenly (ns per loop minus serial / threads). */
#define _POSIX_C_SOURCE 200809L

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/world.h"
#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

typedef struct loops_opts {
    int64_t threads, loops, items, rounds;
    int json;
} loops_opts_t;

typedef struct loops_ctx {
    float* data;
    int64_t loops;
    int32_t items;
} loops_ctx_t;

static void touch(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    float* d = ((loops_ctx_t*)vctx)->data;
    for (int32_t i = begin; i < end; ++i) d[i] = d[i] * 0.999f + 0.001f;
}

static shoal_status_t run_loops(world_t* w, void* vctx)
{
    loops_ctx_t* c = (loops_ctx_t*)vctx;
    for (int64_t k = 0; k < c->loops; ++k) par_for(w, c->items, 16, PAR_STATIC, touch, c);
    return SHOAL_OK;
}

static double per_loop_ns(world_t* w, loops_ctx_t* c, int how)
{
    uint64_t t0 = world_now_ns();
    if (how == 0)
        for (int64_t k = 0; k < c->loops; ++k) touch(0, c->items, 0, c);
    else if (how == 1)
        run_loops(w, c);
    else
        par_region(w, run_loops, c);
    return (double)(world_now_ns() - t0) / (double)c->loops;
}

static int run(const loops_opts_t* o)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = (int32_t)o->threads;
    def.backend = SHOAL_BACKEND_OPENMP;
    shoal_world_t* world = NULL;
    shoal_error_t err;
    if (shoal_world_create(&def, &world, &err) != SHOAL_OK) {
        cli_error("bench loops: %s", err.message);
        return CLI_EXIT_FAILURE;
    }
    world_t* w = (world_t*)world;
    loops_ctx_t c = {calloc((size_t)o->items, sizeof(float)), o->loops, (int32_t)o->items};
    if (!c.data) {
        shoal_world_destroy(world);
        cli_error("bench loops: out of memory");
        return CLI_EXIT_FAILURE;
    }
    static const char* const names[3] = {"serial", "forkjoin", "region"};
    double best[3] = {0, 0, 0};
    loops_ctx_t warm = c;
    warm.loops = c.loops / 10 + 1;
    for (int how = 0; how < 3; ++how) per_loop_ns(w, &warm, how);
    for (int64_t r = 0; r < o->rounds; ++r)
        for (int how = 0; how < 3; ++how) {
            double ns = per_loop_ns(w, &c, how);
            if (r == 0 || ns < best[how]) best[how] = ns;
        }
    int32_t threads = shoal_world_thread_count(world);
    double even = best[0] / threads;
    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "loops");
        cJSON_AddNumberToObject(root, "threads", threads);
        cJSON_AddNumberToObject(root, "loops", (double)o->loops);
        cJSON_AddNumberToObject(root, "items", (double)o->items);
        cJSON_AddNumberToObject(root, "rounds", (double)o->rounds);
        for (int how = 0; how < 3; ++how) {
            char key[40];
            snprintf(key, sizeof key, "%s_ns_per_loop", names[how]);
            cJSON_AddNumberToObject(root, key, best[how]);
        }
        cJSON_AddNumberToObject(root, "forkjoin_overhead_ns", best[1] - even);
        cJSON_AddNumberToObject(root, "region_overhead_ns", best[2] - even);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("loops of %lld items, %d threads, best of %lld rounds of %lld loops\n", (long long)o->items,
               threads, (long long)o->rounds, (long long)o->loops);
        printf("serial     %9.0f ns per loop (the work on one thread)\n", best[0]);
        printf("forkjoin   %9.0f ns per loop, %7.0f over the work split evenly\n", best[1], best[1] - even);
        printf("region     %9.0f ns per loop, %7.0f over the work split evenly\n", best[2], best[2] - even);
    }
    free(c.data);
    shoal_world_destroy(world);
    return CLI_EXIT_OK;
}

#define LOOPS_INT(name, metavar, field, lo, hi, help)                                                        \
    CLI_INT_ROW(name, metavar, loops_opts_t, field, lo, hi, help)

static const cli_option_t loops_options[] = {
    LOOPS_INT("--threads", "T", threads, 2, 1024, "threads, 2..1024 (default: physical cores, at least 2)"),
    LOOPS_INT("--loops", "N", loops, 1, 100000000, "loops per round (default 20000)"),
    LOOPS_INT("--items", "M", items, 16, 100000000, "items per loop (default 4096)"),
    LOOPS_INT("--rounds", "R", rounds, 1, 1000, "rounds of each way, alternating (default 5)"),
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(loops_opts_t, json),
     .help = "one JSON object on stdout: bench, threads, loops, items, rounds, serial_ns_per_loop, "
             "forkjoin_ns_per_loop, region_ns_per_loop, forkjoin_overhead_ns, region_overhead_ns"},
};

static const cli_spec_t loops_spec = {
    .command = "bench loops",
    .usage = "[options]",
    .about = "What a parallel loop costs to start and end: the same short loop run N times on\n"
             "one thread (the work), each loop in its own OpenMP region (fork and join, as\n"
             "outside a step), and all loops in one region (as inside a step). Prints the\n"
             "best round's nanoseconds per loop, and the overhead over the work split evenly.\n",
    .options = loops_options,
    .option_count = CLI_COUNT(loops_options),
};

static int bench_loops(int argc, char** argv)
{
    loops_opts_t o = {
        .loops = 20000,
        .items = 4096,
        .rounds = 5,
    };
    int stop = cli_parse(&loops_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    if (o.threads == 0) {
        int32_t cores = par_physical_cores(NULL);
        o.threads = cores < 2 ? 2 : cores;
    }
    return run(&o);
}

const cli_command_t cli_bench_loops = {"loops",
                                       "what a parallel loop costs to start and end: one region per "
                                       "loop\nagainst one region for many (as in a step)",
                                       bench_loops};
