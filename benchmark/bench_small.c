/* `shoal bench small`: small worlds on the default thread count against
 * one thread.
 *
 * A world of a few agents to a few thousand spends more on waking and
 * joining worker threads than it gains from them, and far more when
 * another process holds a core (an engine's own threads beside an
 * embedded crowd). The automatic thread count (thread_count 0) chooses,
 * step by step, the workers or the calling thread alone by measured time
 * (par_auto_begin in src/ecs/parallel.c); this benchmark checks the choice
 * never costs much: for each scene and size it builds a world with the
 * default thread count and one with one thread, and times the same steps
 * on both in alternating rounds. With --busy a child process spins on the
 * processors for the whole run. The figure is the median over the rounds
 * of the default's time over one thread's in the same round (rounds run
 * back to back, so a machine's slow drifts cancel; on a shared 2-core
 * machine two identical worlds still differ by up to about 10 % a round):
 * the target is at most 1.10. */
#define _POSIX_C_SOURCE 200809L

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchmark/bench_crowd.h"
#include "benchmark/bench_flock.h"
#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

#define SMALL_TARGET 1.10
#define SMALL_MAX_SIZES 16

typedef struct small_opts {
    const char* scenes; /* "flock,crowd" */
    const char* sizes;  /* "8,64,200,1000,3000,10000" */
    int64_t rounds;
    int64_t steps; /* 0: about 60 ms of one thread's work a round */
    int busy;
    int json;
} small_opts_t;

typedef int scene_fn(const char* command, int64_t agents, int32_t threads, shoal_world_t** out);

typedef struct small_scene {
    const char* name;
    scene_fn* make;
    float dt;
} small_scene_t;

static const small_scene_t small_scenes[] = {
    {"flock", bench_flock_scene, BENCH_FLOCK_DT},
    {"crowd", bench_crowd_scene, BENCH_CROWD_DT},
};

static int compare_double(const void* x, const void* y)
{
    double a = *(const double*)x, b = *(const double*)y;
    return a < b ? -1 : a > b;
}

/* Seconds for `steps` steps of w; negative when a step fails. */
static double time_steps(shoal_world_t* w, int64_t steps, float dt)
{
    double t0 = cli_now_seconds();
    for (int64_t s = 0; s < steps; ++s)
        if (shoal_world_step(w, dt) != SHOAL_OK) return -1.0;
    return cli_now_seconds() - t0;
}

/* A child process that spins until killed, or 0 when none could start. */
static pid_t start_busy(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        volatile unsigned long x = 0;
        for (;;) x = x + 1;
    }
    return pid > 0 ? pid : 0;
}

static void stop_busy(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
}

/* The sizes of a comma list, at most SMALL_MAX_SIZES; -1 on a bad one. */
static int parse_sizes(const char* text, int64_t* out)
{
    int n = 0;
    const char* p = text;
    while (*p) {
        char* end = NULL;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 2 || v > 1000000 || n == SMALL_MAX_SIZES || (*end != ',' && *end != '\0'))
            return -1;
        out[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static int run_small(const small_opts_t* o)
{
    int64_t sizes[SMALL_MAX_SIZES];
    int size_count = parse_sizes(o->sizes, sizes);
    if (size_count <= 0)
        return cli_usage_error("bench small", "--agents needs a comma list of sizes in 2..1000000, not '%s'",
                               o->sizes);
    int want[2] = {strstr(o->scenes, "flock") != NULL, strstr(o->scenes, "crowd") != NULL};
    if (!want[0] && !want[1])
        return cli_usage_error("bench small", "--scenes needs flock, crowd or both, not '%s'", o->scenes);
    pid_t busy = o->busy ? start_busy() : 0;
    if (o->busy && busy == 0) {
        cli_error("bench small: cannot start the busy process");
        return CLI_EXIT_FAILURE;
    }
    int exit_code = CLI_EXIT_OK;
    double worst = 0.0;
    if (!o->json)
        printf("%-6s %7s %8s %12s %12s %7s  %s\n", "scene", "agents", "threads", "1 thread ms", "default ms",
               "ratio",
               o->busy ? "(a busy process beside; ms: best round, ratio: median round)"
                       : "(idle; ms: best round, ratio: median round)");
    cJSON* rows = o->json ? cJSON_CreateArray() : NULL;
    for (int s = 0; s < 2 && exit_code == CLI_EXIT_OK; ++s) {
        if (!want[s]) continue;
        const small_scene_t* sc = &small_scenes[s];
        for (int k = 0; k < size_count && exit_code == CLI_EXIT_OK; ++k) {
            shoal_world_t *one = NULL, *dflt = NULL;
            if (sc->make("bench small", sizes[k], 1, &one) != CLI_EXIT_OK ||
                sc->make("bench small", sizes[k], 0, &dflt) != CLI_EXIT_OK) {
                shoal_world_destroy(one);
                exit_code = CLI_EXIT_FAILURE;
                break;
            }
            /* Warm up both (the default's first steps measure both of its
             * ways), and size a round at about 60 ms of one thread. */
            double warm = time_steps(one, 8, sc->dt);
            time_steps(dflt, 8, sc->dt);
            int64_t steps = o->steps;
            if (steps <= 0) {
                double per = warm > 0.0 ? warm / 8.0 : 1e-3;
                steps = (int64_t)(0.06 / (per > 1e-6 ? per : 1e-6));
                steps = steps < 10 ? 10 : steps > 50000 ? 50000 : steps;
            }
            double best[2] = {0.0, 0.0};
            double ratios[1000];
            for (int64_t r = 0; r < o->rounds; ++r) {
                double a = time_steps(one, steps, sc->dt), b = time_steps(dflt, steps, sc->dt);
                if (a < 0.0 || b < 0.0) {
                    cli_error("bench small: a step failed: %s", shoal_world_last_error(a < 0.0 ? one : dflt));
                    exit_code = CLI_EXIT_FAILURE;
                    break;
                }
                if (r == 0 || a < best[0]) best[0] = a;
                if (r == 0 || b < best[1]) best[1] = b;
                ratios[r] = b / a;
            }
            if (exit_code != CLI_EXIT_OK) {
                shoal_world_destroy(one);
                shoal_world_destroy(dflt);
                break;
            }
            qsort(ratios, (size_t)o->rounds, sizeof ratios[0], compare_double);
            const double ratio = o->rounds % 2 ? ratios[o->rounds / 2]
                                               : 0.5 * (ratios[o->rounds / 2 - 1] + ratios[o->rounds / 2]);
            const int same = shoal_world_state_hash(one) == shoal_world_state_hash(dflt);
            if (!same) {
                cli_error("bench small: %s %lld agents: the default thread count gave another state_hash",
                          sc->name, (long long)sizes[k]);
                exit_code = CLI_EXIT_FAILURE;
            }
            if (ratio > worst) worst = ratio;
            const int threads = shoal_world_thread_count(dflt);
            const double ms1 = 1e3 * best[0] / (double)steps, msd = 1e3 * best[1] / (double)steps;
            if (rows) {
                cJSON* row = cJSON_CreateObject();
                cJSON_AddStringToObject(row, "scene", sc->name);
                cJSON_AddNumberToObject(row, "agents", (double)sizes[k]);
                cJSON_AddNumberToObject(row, "threads", threads);
                cJSON_AddNumberToObject(row, "steps", (double)steps);
                cJSON_AddNumberToObject(row, "one_thread_ms_per_step", ms1);
                cJSON_AddNumberToObject(row, "default_ms_per_step", msd);
                cJSON_AddNumberToObject(row, "ratio", ratio);
                cJSON_AddBoolToObject(row, "same_state_hash", same);
                cJSON_AddItemToArray(rows, row);
            } else {
                printf("%-6s %7lld %8d %12.4f %12.4f %7.2f%s\n", sc->name, (long long)sizes[k], threads, ms1,
                       msd, ratio, ratio > SMALL_TARGET ? "  over the target" : "");
            }
            shoal_world_destroy(one);
            shoal_world_destroy(dflt);
        }
    }
    stop_busy(busy);
    if (rows) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "small");
        cJSON_AddBoolToObject(root, "busy", o->busy);
        cJSON_AddNumberToObject(root, "rounds", (double)o->rounds);
        cJSON_AddNumberToObject(root, "worst_ratio", worst);
        cJSON_AddNumberToObject(root, "target", SMALL_TARGET);
        cJSON_AddItemToObject(root, "rows", rows);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else if (exit_code == CLI_EXIT_OK) {
        printf("worst ratio %.2f (target at most %.2f)\n", worst, SMALL_TARGET);
    }
    return exit_code;
}

static const cli_option_t small_options[] = {
    {.name = "--scenes",
     .metavar = "LIST",
     .kind = CLI_STRING,
     CLI_AT(small_opts_t, scenes),
     .help = "flock, crowd or flock,crowd (default): the scenes of 'shoal bench flock' and "
             "'shoal bench crowd' (grid)"},
    {.name = "--agents",
     .metavar = "N1,N2,...",
     .kind = CLI_STRING,
     CLI_AT(small_opts_t, sizes),
     .help = "world sizes (default 8,64,200,1000,3000,10000)"},
    CLI_INT_ROW("--rounds", "R", small_opts_t, rounds, 1, 1000,
                "rounds of each world, alternating (default 9)"),
    CLI_INT_ROW("--steps", "S", small_opts_t, steps, 1, 100000000,
                "steps a round (default: about 60 ms of one thread's work, 10..50000)"),
    {.name = "--busy",
     .kind = CLI_FLAG,
     CLI_AT(small_opts_t, busy),
     .help = "a child process spins beside the benchmark for the whole run (a loaded machine)"},
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(small_opts_t, json),
     .help = "one JSON object on stdout: bench, busy, rounds, worst_ratio, target, rows [{scene, "
             "agents, threads, steps, one_thread_ms_per_step, default_ms_per_step, ratio, "
             "same_state_hash}]"},
};

static const cli_spec_t small_spec = {
    .command = "bench small",
    .usage = "[options]",
    .about = "Small worlds on the default thread count (0: automatic) against one thread: the same\n"
             "steps on both, alternating rounds. The ratio is the median over rounds of the\n"
             "default's time over one thread's (target: at most 1.10, idle and with --busy); the\n"
             "milliseconds per step are each world's best round. Exit 1 when a world fails or\n"
             "the two end in different states.\n",
    .options = small_options,
    .option_count = CLI_COUNT(small_options),
};

static int bench_small(int argc, char** argv)
{
    small_opts_t o = {.scenes = "flock,crowd", .sizes = "8,64,200,1000,3000,10000", .rounds = 9};
    int stop = cli_parse(&small_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    return run_small(&o);
}

const cli_command_t cli_bench_small = {"small",
                                       "worlds of 8 to 10,000 agents on the default thread count "
                                       "against\none thread, idle or beside a busy process",
                                       bench_small};
