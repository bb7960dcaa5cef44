/* `shoal ensemble`: one scenario run over seeds and a grid of parameter
 * values, on worker processes (or MPI ranks), each run with its own
 * threads; a row of results per run and a summary per parameter point.
 *
 * Decisions:
 * - A run is exactly `shoal run FILE --seed S [--steps N] --threads T`
 *   with the settings applied to the file: the same code makes its world
 *   and its figures (run_result_json), so its state_hash and figures are
 *   those of that command. Wall times, thread counts and system timings
 *   are left out of the rows: they are not results of the run.
 * - Settings (--set KEY=V1,V2,...) are dotted paths into the scenario
 *   file. A path whose first name is a top-level key of the format
 *   ("world.reorder_interval", "steps") is set there; any other is set in
 *   every group ("crowd.time_gap" sets each group's crowd.time_gap),
 *   objects made on the way. A number in a path indexes an array
 *   ("groups.1.count"). Values are JSON (numbers, true, "text"...). The
 *   file's own loader then judges the result, so a bad value is refused
 *   as `shoal run` would refuse it, naming the run.
 * - The plan: every point of the grid (the product of the settings'
 *   values, the first setting slowest) times every seed; run k is point
 *   k / seeds, seed k % seeds. Workers take the next run when they free
 *   up; rows are written in run order once all are in, so the output does
 *   not depend on the worker count or on which worker ran what.
 * - Workers are forked processes (a pipe each way), forked before this
 *   process makes any world, so no OpenMP runtime is copied into them.
 *   Built with MPI and started by mpirun, rank 0 hands out the runs and
 *   the other ranks run them (with one rank, rank 0 runs them all).
 * - The summary, per point and figure: count, mean, standard deviation,
 *   a 95 % confidence interval of the mean (Student's t), the 95th
 *   percentile (linear between order statistics, as numpy's default),
 *   minimum and maximum. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#ifdef SHOAL_WITH_MPI
#include <mpi.h>
#endif

#include "shoal/scenario.h"
#include "shoal/shoal.h"

#include "cli/cli.h"
#include "io/file_read.h"
#include "cli/cli_options.h"
#include "cli/data_dir.h"
#include "cli/run_result.h"

#define ENS_MAX_SETS 8
#define ENS_MAX_VALUES 64
#define ENS_MAX_SEEDS 100000
#define ENS_MAX_WORKERS 256

typedef struct ens_set_t {
    char key[128];
    cJSON* values[ENS_MAX_VALUES];
    int32_t count;
} ens_set_t;

typedef struct ens_options_t {
    const char* seeds_text;
    int32_t workers;
    int32_t threads;
    int64_t steps;
    const char* out;
    const char* csv;
    int json;
    int quiet;
    /* parsed */
    uint64_t* seeds;
    int32_t seed_count;
    ens_set_t sets[ENS_MAX_SETS];
    int32_t set_count;
} ens_options_t;

/* "1-50", "1,4,9", "3", "1-10,20": at most ENS_MAX_SEEDS seeds. */
static int parse_seeds(const char* command, const char* name, const char* value, void* vopts)
{
    ens_options_t* o = (ens_options_t*)vopts;
    free(o->seeds);
    o->seeds = NULL;
    o->seed_count = 0;
    o->seeds_text = value;
    const char* p = value;
    while (*p) {
        char* end;
        errno = 0;
        unsigned long long a = strtoull(p, &end, 10), b = a;
        if (end == p || errno || *p == '-') goto bad;
        p = end;
        if (*p == '-') {
            ++p;
            b = strtoull(p, &end, 10);
            if (end == p || errno || b < a) goto bad;
            p = end;
        }
        if (*p == ',')
            ++p;
        else if (*p)
            goto bad;
        if (b - a >= (unsigned long long)(ENS_MAX_SEEDS - o->seed_count)) {
            cli_usage_error(command, "%s: at most %d seeds, got more in '%s'", name, ENS_MAX_SEEDS, value);
            return CLI_EXIT_USAGE;
        }
        uint64_t* grown = realloc(o->seeds, (size_t)(o->seed_count + (int32_t)(b - a) + 1) * sizeof *grown);
        if (!grown) {
            cli_usage_error(command, "%s: out of memory", name);
            return CLI_EXIT_USAGE;
        }
        o->seeds = grown;
        for (unsigned long long s = a;; ++s) {
            o->seeds[o->seed_count++] = s;
            if (s == b) break;
        }
    }
    if (o->seed_count > 0) return 0;
bad:
    cli_usage_error(command,
                    "%s: expected seeds such as 1-50 or 1,4,9 (whole numbers, ranges low-high), got '%s'",
                    name, value);
    return CLI_EXIT_USAGE;
}

/* The values a refused setting had parsed (it is not counted, so the
 * command's end would not free them). */
static void drop_values(ens_set_t* s)
{
    for (int32_t v = 0; v < s->count; ++v) cJSON_Delete(s->values[v]);
    s->count = 0;
}

/* KEY=V1,V2,... Values are JSON; a value that is not JSON is taken as a
 * string. */
static int parse_set(const char* command, const char* name, const char* value, void* vopts)
{
    ens_options_t* o = (ens_options_t*)vopts;
    const char* eq = strchr(value, '=');
    if (!eq || eq == value || !eq[1]) {
        cli_usage_error(command, "%s: expected KEY=V1,V2,... such as crowd.time_gap=0.9,1.1, got '%s'", name,
                        value);
        return CLI_EXIT_USAGE;
    }
    if (o->set_count == ENS_MAX_SETS) {
        cli_usage_error(command, "%s: at most %d settings", name, ENS_MAX_SETS);
        return CLI_EXIT_USAGE;
    }
    ens_set_t* s = &o->sets[o->set_count];
    size_t klen = (size_t)(eq - value);
    if (klen >= sizeof s->key) {
        cli_usage_error(command, "%s: the key of '%s' is longer than %zu characters", name, value,
                        sizeof s->key - 1);
        return CLI_EXIT_USAGE;
    }
    memcpy(s->key, value, klen);
    s->key[klen] = '\0';
    s->count = 0;
    const char* p = eq + 1;
    while (1) {
        const char* comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || s->count == ENS_MAX_VALUES) {
            drop_values(s);
            cli_usage_error(command, "%s: %s in '%s'", name,
                            len == 0 ? "an empty value" : "more than 64 values", value);
            return CLI_EXIT_USAGE;
        }
        char text[256];
        if (len >= sizeof text) {
            drop_values(s);
            cli_usage_error(command, "%s: a value of '%s' is longer than %zu characters", name, value,
                            sizeof text - 1);
            return CLI_EXIT_USAGE;
        }
        memcpy(text, p, len);
        text[len] = '\0';
        cJSON* v = cJSON_Parse(text);
        if (!v) v = cJSON_CreateString(text);
        s->values[s->count++] = v;
        if (!comma) break;
        p = comma + 1;
    }
    o->set_count++;
    return 0;
}

static const cli_option_t ens_option_rows[] = {
    {.name = "--seeds",
     .metavar = "LIST",
     .kind = CLI_CUSTOM,
     .parse = parse_seeds,
     .help = "the seeds of each parameter point: ranges and numbers, such as 1-50 or 1-10,20 (default: the "
             "scenario's seed alone)"},
    {.name = "--set",
     .metavar = "KEY=V1,V2,...",
     .kind = CLI_CUSTOM,
     .parse = parse_set,
     .help = "a setting of the scenario and the values it takes (repeat for a grid, at most 8): a dotted "
             "path, set at the top of the file when its first name is a top-level key of the format "
             "(world.reorder_interval, steps), else in every group (crowd.time_gap); values are JSON"},
    CLI_INT_ROW("--workers", "N", ens_options_t, workers, 1, ENS_MAX_WORKERS,
                "worker processes running runs side by side (default: the cores over --threads); under "
                "mpirun the ranks are the workers and this is not used"),
    CLI_INT_ROW("--threads", "T", ens_options_t, threads, 1, 1024, "threads of each run (default 1)"),
    CLI_INT_ROW("--steps", "N", ens_options_t, steps, 0, 1e15, "steps of each run (default: the scenario's)"),
    CLI_STRING_ROW("--out", "FILE", ens_options_t, out, "write the runs as JSON lines, one object a run"),
    CLI_STRING_ROW("--csv", "FILE", ens_options_t, csv, "write the runs as CSV, a row a run"),
    CLI_FLAG_ROW("--json", ens_options_t, json, "print the summary as one JSON object"),
    CLI_FLAG_ROW("--quiet", ens_options_t, quiet, "no progress on standard error"),
};

static const cli_spec_t ens_spec = {
    .command = "ensemble",
    .usage = "[SCENARIO] [--seeds LIST] [--set KEY=V1,V2,...]... [--workers N] [--threads T] [--out FILE] "
             "[--csv FILE] [--json]",
    .about =
        "Run a scenario over seeds and a grid of parameter values: each run is `shoal run SCENARIO --seed S "
        "--threads T` with the settings applied, on worker processes (or on the ranks of `mpirun -np N "
        "shoal ensemble ...` when built with MPI). Prints a summary per parameter point: for each figure "
        "the count, mean, standard deviation, 95 % confidence interval of the mean, 95th percentile, "
        "minimum and maximum.\n",
    .arguments = "  SCENARIO              a scenario file (default: scenarios/default.json)\n",
    .options = ens_option_rows,
    .option_count = CLI_COUNT(ens_option_rows),
    .details =
        "A run's row: run (its index), point, seed, each setting, state_hash, and the figures of `shoal run "
        "--json` (agents, steps, crowd.*, nav.*, navmesh.*, measure.*), nested names joined by dots; "
        "not its wall time. Rows come in run order whatever the workers; run k is point k / seeds, "
        "seed k % seeds, the first setting varying slowest.\n"
        "The summary (--json): {scenario, runs, workers, ranks, points: [{point, settings, runs, "
        "figures: {name: {n, mean, sd, ci95: [lo, hi], p95, min, max}}}]}.\n",
    .max_positional = 1,
    .positional = "scenario file",
};

/* ---- one run -------------------------------------------------------------- */

typedef struct ens_plan_t {
    const char* path;
    cJSON* base; /* the file as JSON, when there are settings */
    const ens_options_t* o;
    int32_t points, runs;
} ens_plan_t;

static void point_values(const ens_plan_t* p, int32_t point, int32_t* index)
{
    for (int32_t s = p->o->set_count - 1; s >= 0; --s) {
        index[s] = point % p->o->sets[s].count;
        point /= p->o->sets[s].count;
    }
}

/* Set `value` at the dotted `path` below `at`, making objects on the way. */
static int set_path(cJSON* at, const char* path, const cJSON* value, char* why, size_t why_size)
{
    char name[128];
    const char* dot = strchr(path, '.');
    size_t len = dot ? (size_t)(dot - path) : strlen(path);
    if (len == 0 || len >= sizeof name) {
        snprintf(why, why_size, "'%s' is not a dotted path of names", path);
        return 0;
    }
    memcpy(name, path, len);
    name[len] = '\0';
    cJSON* next = NULL;
    if (cJSON_IsArray(at)) {
        char* end;
        long k = strtol(name, &end, 10);
        if (*end || k < 0 || k >= cJSON_GetArraySize(at)) {
            snprintf(why, why_size, "'%s' is no index of an array of %d", name, cJSON_GetArraySize(at));
            return 0;
        }
        if (!dot) return cJSON_ReplaceItemInArray(at, (int)k, cJSON_Duplicate(value, 1));
        next = cJSON_GetArrayItem(at, (int)k);
    } else if (cJSON_IsObject(at)) {
        if (!dot) {
            cJSON_DeleteItemFromObjectCaseSensitive(at, name);
            return cJSON_AddItemToObject(at, name, cJSON_Duplicate(value, 1));
        }
        next = cJSON_GetObjectItemCaseSensitive(at, name);
        if (!next) next = cJSON_AddObjectToObject(at, name);
    } else {
        snprintf(why, why_size, "'%s' is below a value that is not an object", name);
        return 0;
    }
    return next && set_path(next, dot + 1, value, why, why_size);
}

/* The top-level keys of a scenario file (docs/scenarios.md). */
static const char* const root_keys[] = {"name",   "dimensions", "seed",  "dt",  "steps",   "threads", "world",
                                        "groups", "obstacles",  "walls", "nav", "navmesh", "measure"};

static int apply_setting(cJSON* root, const char* key, const cJSON* value, char* why, size_t why_size)
{
    char first[128];
    const char* dot = strchr(key, '.');
    size_t len = dot ? (size_t)(dot - key) : strlen(key);
    snprintf(first, sizeof first, "%.*s", (int)len, key);
    for (size_t i = 0; i < sizeof root_keys / sizeof root_keys[0]; ++i)
        if (strcmp(first, root_keys[i]) == 0) return set_path(root, key, value, why, why_size);
    cJSON* groups = cJSON_GetObjectItemCaseSensitive(root, "groups");
    if (!cJSON_IsArray(groups) || cJSON_GetArraySize(groups) == 0) {
        snprintf(why, why_size,
                 "'%s' is not a top-level key of a scenario and the file has no groups to set it in", first);
        return 0;
    }
    cJSON* g;
    cJSON_ArrayForEach(g, groups) if (!set_path(g, key, value, why, why_size)) return 0;
    return 1;
}

/* Add the numbers below `from` to `row`, their names joined by dots;
 * measurement lines and areas by their names. */
static void flatten(cJSON* row, const cJSON* from, const char* prefix)
{
    const cJSON* item;
    int index = 0;
    cJSON_ArrayForEach(item, from)
    {
        char name[256];
        const cJSON* nm = cJSON_IsObject(item) ? cJSON_GetObjectItemCaseSensitive(item, "name") : NULL;
        if (cJSON_IsArray(from))
            snprintf(name, sizeof name, "%s.%s", prefix, cJSON_IsString(nm) ? nm->valuestring : "");
        else
            snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", item->string);
        if (cJSON_IsArray(from) && !cJSON_IsString(nm)) snprintf(name, sizeof name, "%s.%d", prefix, index);
        index++;
        if (cJSON_IsNumber(item))
            cJSON_AddNumberToObject(row, name, item->valuedouble);
        else if (cJSON_IsObject(item) || cJSON_IsArray(item))
            flatten(row, item, name);
    }
}

/* Run `k` of the plan: its row as JSON text (malloc'd), or NULL with the
 * reason in `why`. */
static char* run_one(const ens_plan_t* p, int32_t k, char* why, size_t why_size)
{
    const ens_options_t* o = p->o;
    int32_t point = k / o->seed_count;
    uint64_t seed = o->seeds[k % o->seed_count];
    int32_t index[ENS_MAX_SETS];
    point_values(p, point, index);
    shoal_scenario_t* sc = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_status_t st;
    if (p->base) {
        cJSON* doc = cJSON_Duplicate(p->base, 1);
        for (int32_t s = 0; doc && s < o->set_count; ++s)
            if (!apply_setting(doc, o->sets[s].key, o->sets[s].values[index[s]], why, why_size)) {
                cJSON_Delete(doc);
                return NULL;
            }
        char* text = doc ? cJSON_PrintUnformatted(doc) : NULL;
        cJSON_Delete(doc);
        if (!text) {
            snprintf(why, why_size, "out of memory");
            return NULL;
        }
        st = shoal_scenario_load_string(text, strlen(text), p->path, &sc, &err);
        free(text);
    } else {
        st = shoal_scenario_load_file(p->path, &sc, &err);
    }
    if (st != SHOAL_OK) {
        snprintf(why, why_size, "%s", err.message[0] ? err.message : shoal_status_string(st));
        return NULL;
    }
    shoal_scenario_set_seed(sc, seed);
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    def.thread_count = o->threads;
    shoal_world_t* w = NULL;
    char* line = NULL;
    st = shoal_world_create(&def, &w, &err);
    if (st != SHOAL_OK) {
        snprintf(why, why_size, "cannot create the world: %s", err.message);
        goto done;
    }
    if (shoal_scenario_populate(sc, w) != SHOAL_OK) {
        snprintf(why, why_size, "cannot populate the world: %s", shoal_world_last_error(w));
        goto done;
    }
    int64_t steps = o->steps >= 0 ? o->steps : (int64_t)shoal_scenario_steps(sc);
    float dt = shoal_scenario_dt(sc);
    int32_t agents = shoal_world_agent_count(w);
    run_result_t result = {0, 0.0, 0, 0};
    for (; result.steps < steps; ++result.steps) {
        result.agent_steps += (uint64_t)shoal_world_agent_count(w);
        if (shoal_world_step(w, dt) != SHOAL_OK) {
            snprintf(why, why_size, "step %" PRId64 ": %s", result.steps, shoal_world_last_error(w));
            goto done;
        }
    }
    cJSON* full = run_result_json(sc, w, p->path, agents, dt, &result);
    cJSON* row = cJSON_CreateObject();
    if (full && row) {
        char seed_text[24];
        snprintf(seed_text, sizeof seed_text, "%" PRIu64, seed);
        cJSON_AddNumberToObject(row, "run", k);
        cJSON_AddNumberToObject(row, "point", point);
        cJSON_AddStringToObject(row, "seed", seed_text);
        for (int32_t s = 0; s < o->set_count; ++s)
            cJSON_AddItemToObject(row, o->sets[s].key, cJSON_Duplicate(o->sets[s].values[index[s]], 1));
        cJSON_AddItemToObject(row, "state_hash",
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(full, "state_hash"), 1));
        static const char* const skip[] = {"scenario",         "file", "seed",    "threads", "backend",
                                           "seconds",          "dt",   "version", "systems", "state_hash",
                                           "agent_steps_per_s"};
        const cJSON* item;
        cJSON_ArrayForEach(item, full)
        {
            int skipped = 0;
            for (size_t i = 0; i < sizeof skip / sizeof skip[0]; ++i)
                skipped |= strcmp(item->string, skip[i]) == 0;
            if (skipped) continue;
            if (cJSON_IsNumber(item))
                cJSON_AddNumberToObject(row, item->string, item->valuedouble);
            else if (cJSON_IsObject(item))
                flatten(row, item, item->string);
        }
        line = cJSON_PrintUnformatted(row);
    }
    if (!line) snprintf(why, why_size, "out of memory");
    cJSON_Delete(full);
    cJSON_Delete(row);
done:
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
    return line;
}

/* ---- workers ---------------------------------------------------------------- */

/* A message on a pipe: i32 run (-1: stop; in a reply, the run it is for),
 * i32 ok, u32 bytes, the text (the row, or why it failed). */
static int write_all(int fd, const void* data, size_t n)
{
    const char* p = (const char*)data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

static int read_all(int fd, void* data, size_t n)
{
    char* p = (char*)data;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return 0;
        p += r;
        n -= (size_t)r;
    }
    return 1;
}

static int send_reply(int fd, int32_t k, int ok, const char* text)
{
    uint32_t bytes = (uint32_t)strlen(text);
    int32_t head[3] = {k, ok, (int32_t)bytes};
    return write_all(fd, head, sizeof head) && write_all(fd, text, bytes);
}

static void worker_loop(const ens_plan_t* p, int tasks, int replies)
{
    int32_t k;
    while (read_all(tasks, &k, sizeof k) && k >= 0) {
        char why[1024] = "";
        char* line = run_one(p, k, why, sizeof why);
        int sent = send_reply(replies, k, line != NULL, line ? line : why);
        free(line);
        if (!sent) break;
    }
}

typedef struct ens_results_t {
    char** rows; /* per run: the row, or NULL */
    char** why;  /* per run: why it failed */
    int32_t done, failed;
} ens_results_t;

static void progress(const ens_options_t* o, const ens_results_t* r, int32_t runs)
{
    if (!o->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\rshoal ensemble: %d of %d runs%s", (int)r->done, (int)runs,
                r->done == runs ? "\n" : "");
}

static void store(ens_results_t* r, int32_t k, int ok, char* text)
{
    if (ok) {
        r->rows[k] = text;
    } else {
        r->why[k] = text;
        r->failed++;
    }
    r->done++;
}

/* Forked workers; returns 0, or 1 when the workers could not be had. */
static int run_forked(const ens_plan_t* p, int32_t workers, ens_results_t* r)
{
    int to[ENS_MAX_WORKERS][2], from[ENS_MAX_WORKERS][2];
    pid_t pid[ENS_MAX_WORKERS];
    int32_t started = 0;
    fflush(NULL);
    for (; started < workers; ++started) {
        int32_t i = started;
        if (pipe(to[i]) != 0 || pipe(from[i]) != 0) break;
        pid[i] = fork();
        if (pid[i] < 0) break;
        if (pid[i] == 0) {
            for (int32_t j = 0; j < i; ++j) {
                close(to[j][1]);
                close(from[j][0]);
            }
            close(to[i][1]);
            close(from[i][0]);
            signal(SIGPIPE, SIG_IGN);
            worker_loop(p, to[i][0], from[i][1]);
            _exit(0);
        }
        close(to[i][0]);
        close(from[i][1]);
    }
    if (started == 0) {
        cli_error("ensemble: cannot start a worker process: %s", strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    int32_t next = 0, busy = 0;
    struct pollfd fds[ENS_MAX_WORKERS];
    for (int32_t i = 0; i < started; ++i) {
        int32_t k = next < p->runs ? next++ : -1;
        write_all(to[i][1], &k, sizeof k);
        busy += k >= 0;
        fds[i] = (struct pollfd){.fd = k >= 0 ? from[i][0] : -1, .events = POLLIN};
    }
    while (busy > 0) {
        if (poll(fds, (nfds_t)started, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int32_t i = 0; i < started; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            int32_t head[3];
            char* text = NULL;
            int ok = read_all(fds[i].fd, head, sizeof head) && head[0] >= 0 && head[0] < p->runs &&
                     head[2] >= 0 && (text = malloc((size_t)head[2] + 1)) != NULL &&
                     read_all(fds[i].fd, text, (size_t)head[2]);
            busy--;
            if (!ok) { /* the worker died: what it held is lost, so the ensemble fails */
                free(text);
                cli_error("ensemble: worker %d stopped unexpectedly", (int)i);
                fds[i].fd = -1;
                continue;
            }
            text[head[2]] = '\0';
            store(r, head[0], head[1], text);
            progress(p->o, r, p->runs);
            int32_t k = next < p->runs ? next++ : -1;
            if (k >= 0 && write_all(to[i][1], &k, sizeof k)) {
                busy++;
            } else {
                fds[i].fd = -1;
            }
        }
    }
    for (int32_t i = 0; i < started; ++i) {
        int32_t stop = -1;
        write_all(to[i][1], &stop, sizeof stop);
        close(to[i][1]);
        close(from[i][0]);
    }
    for (int32_t i = 0; i < started; ++i) waitpid(pid[i], NULL, 0);
    return 0;
}

#ifdef SHOAL_WITH_MPI
/* Started by mpirun (or asked for): the launcher's variables say so. */
static int launched_by_mpirun(void)
{
    static const char* const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i)
        if (getenv(vars[i])) return 1;
    return 0;
}

enum { TAG_TASK = 1, TAG_HEAD = 2, TAG_TEXT = 3 };

/* Rank 0 hands out runs as ranks ask (each reply is a request for more);
 * the others run them. One rank runs them all. */
static void run_mpi(const ens_plan_t* p, int rank, int ranks, ens_results_t* r)
{
    if (ranks == 1) {
        for (int32_t k = 0; k < p->runs; ++k) {
            char why[1024] = "";
            char* line = run_one(p, k, why, sizeof why);
            store(r, k, line != NULL, line ? line : strdup(why));
            progress(p->o, r, p->runs);
        }
        return;
    }
    if (rank != 0) {
        int32_t k;
        while (1) {
            MPI_Recv(&k, 1, MPI_INT32_T, 0, TAG_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (k < 0) break;
            char why[1024] = "";
            char* line = run_one(p, k, why, sizeof why);
            const char* text = line ? line : why;
            int32_t head[3] = {k, line != NULL, (int32_t)strlen(text)};
            MPI_Send(head, 3, MPI_INT32_T, 0, TAG_HEAD, MPI_COMM_WORLD);
            MPI_Send(text, head[2], MPI_CHAR, 0, TAG_TEXT, MPI_COMM_WORLD);
            free(line);
        }
        return;
    }
    int32_t next = 0, busy = 0;
    for (int w = 1; w < ranks; ++w) {
        int32_t k = next < p->runs ? next++ : -1;
        MPI_Send(&k, 1, MPI_INT32_T, w, TAG_TASK, MPI_COMM_WORLD);
        busy += k >= 0;
    }
    while (busy > 0) {
        int32_t head[3];
        MPI_Status status;
        MPI_Recv(head, 3, MPI_INT32_T, MPI_ANY_SOURCE, TAG_HEAD, MPI_COMM_WORLD, &status);
        char* text = malloc((size_t)head[2] + 1);
        MPI_Recv(text, head[2], MPI_CHAR, status.MPI_SOURCE, TAG_TEXT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        text[head[2]] = '\0';
        store(r, head[0], head[1], text);
        progress(p->o, r, p->runs);
        busy--;
        int32_t k = next < p->runs ? next++ : -1;
        MPI_Send(&k, 1, MPI_INT32_T, status.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD);
        busy += k >= 0;
    }
}
#endif

/* ---- output ----------------------------------------------------------------- */

/* Student's t at 97.5 % for n - 1 degrees of freedom (1..30), then the
 * normal 1.96 (within 4 % of t from 30 on). */
static double t975(int64_t dof)
{
    static const double t[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    return dof >= 1 && dof <= 30 ? t[dof - 1] : 1.960;
}

static int compare_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* The statistics of one figure over a point's runs. */
static cJSON* figure_stats(double* v, int32_t n)
{
    cJSON* f = cJSON_CreateObject();
    double mean = 0.0, ss = 0.0;
    for (int32_t i = 0; i < n; ++i) mean += v[i];
    mean /= n;
    for (int32_t i = 0; i < n; ++i) ss += (v[i] - mean) * (v[i] - mean);
    double sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0, half = n > 1 ? t975(n - 1) * sd / sqrt((double)n) : 0.0;
    qsort(v, (size_t)n, sizeof *v, compare_double);
    double at = 0.95 * (n - 1);
    int32_t lo = (int32_t)floor(at);
    double p95 = lo + 1 < n ? v[lo] + (at - lo) * (v[lo + 1] - v[lo]) : v[lo];
    cJSON_AddNumberToObject(f, "n", n);
    cJSON_AddNumberToObject(f, "mean", mean);
    cJSON_AddNumberToObject(f, "sd", sd);
    cJSON* ci = cJSON_AddArrayToObject(f, "ci95");
    cJSON_AddItemToArray(ci, cJSON_CreateNumber(mean - half));
    cJSON_AddItemToArray(ci, cJSON_CreateNumber(mean + half));
    cJSON_AddNumberToObject(f, "p95", p95);
    cJSON_AddNumberToObject(f, "min", v[0]);
    cJSON_AddNumberToObject(f, "max", v[n - 1]);
    return f;
}

static int is_setting(const ens_options_t* o, const char* name)
{
    for (int32_t s = 0; s < o->set_count; ++s)
        if (strcmp(o->sets[s].key, name) == 0) return 1;
    return strcmp(name, "run") == 0 || strcmp(name, "point") == 0;
}

static cJSON* summary(const ens_plan_t* p, cJSON** rows, int32_t workers, int32_t ranks)
{
    const ens_options_t* o = p->o;
    cJSON* root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "scenario", p->path);
    cJSON_AddNumberToObject(root, "runs", p->runs);
    cJSON_AddNumberToObject(root, "seeds", o->seed_count);
    cJSON_AddNumberToObject(root, "workers", workers);
    cJSON_AddNumberToObject(root, "ranks", ranks);
    cJSON* points = cJSON_AddArrayToObject(root, "points");
    double* v = malloc((size_t)o->seed_count * sizeof *v);
    for (int32_t pt = 0; v && pt < p->points; ++pt) {
        cJSON* P = cJSON_CreateObject();
        cJSON_AddItemToArray(points, P);
        cJSON_AddNumberToObject(P, "point", pt);
        cJSON* settings = cJSON_AddObjectToObject(P, "settings");
        int32_t index[ENS_MAX_SETS];
        point_values(p, pt, index);
        for (int32_t s = 0; s < o->set_count; ++s)
            cJSON_AddItemToObject(settings, o->sets[s].key, cJSON_Duplicate(o->sets[s].values[index[s]], 1));
        cJSON_AddNumberToObject(P, "runs", o->seed_count);
        cJSON* figures = cJSON_AddObjectToObject(P, "figures");
        const cJSON* first = rows[(int64_t)pt * o->seed_count];
        const cJSON* item;
        cJSON_ArrayForEach(item, first)
        {
            if (!cJSON_IsNumber(item) || is_setting(o, item->string)) continue;
            int32_t n = 0;
            for (int32_t s = 0; s < o->seed_count; ++s) {
                const cJSON* x =
                    cJSON_GetObjectItemCaseSensitive(rows[(int64_t)pt * o->seed_count + s], item->string);
                if (cJSON_IsNumber(x)) v[n++] = x->valuedouble;
            }
            if (n > 0) cJSON_AddItemToObject(figures, item->string, figure_stats(v, n));
        }
    }
    free(v);
    return root;
}

static void csv_value(FILE* f, const cJSON* v)
{
    if (!v) return;
    if (cJSON_IsString(v)) {
        fputc('"', f);
        for (const char* c = v->valuestring; *c; ++c) {
            if (*c == '"') fputc('"', f);
            fputc(*c, f);
        }
        fputc('"', f);
    } else {
        char* text = cJSON_PrintUnformatted(v);
        if (text) fputs(text, f);
        cJSON_free(text);
    }
}

/* The CSV's columns: every name of every row, in the order first seen. */
static int write_csv(const char* path, cJSON** rows, int32_t runs)
{
    FILE* f = fopen(path, "w");
    if (!f) return 0;
    cJSON* names = cJSON_CreateObject();
    cJSON* order = cJSON_CreateArray();
    for (int32_t k = 0; k < runs; ++k) {
        const cJSON* item;
        cJSON_ArrayForEach(item, rows[k]) if (!cJSON_GetObjectItemCaseSensitive(names, item->string))
        {
            cJSON_AddTrueToObject(names, item->string);
            cJSON_AddItemToArray(order, cJSON_CreateString(item->string));
        }
    }
    const cJSON* nm;
    int col = 0;
    cJSON_ArrayForEach(nm, order) fprintf(f, "%s%s", col++ ? "," : "", nm->valuestring);
    fputc('\n', f);
    for (int32_t k = 0; k < runs; ++k) {
        col = 0;
        cJSON_ArrayForEach(nm, order)
        {
            if (col++) fputc(',', f);
            csv_value(f, cJSON_GetObjectItemCaseSensitive(rows[k], nm->valuestring));
        }
        fputc('\n', f);
    }
    cJSON_Delete(names);
    cJSON_Delete(order);
    return fclose(f) == 0;
}

static void print_text(const cJSON* sum)
{
    printf("ensemble %s: %d runs (%d seeds a point) on %d workers, %d ranks\n",
           cJSON_GetObjectItemCaseSensitive(sum, "scenario")->valuestring,
           (int)cJSON_GetObjectItemCaseSensitive(sum, "runs")->valuedouble,
           (int)cJSON_GetObjectItemCaseSensitive(sum, "seeds")->valuedouble,
           (int)cJSON_GetObjectItemCaseSensitive(sum, "workers")->valuedouble,
           (int)cJSON_GetObjectItemCaseSensitive(sum, "ranks")->valuedouble);
    const cJSON* P;
    cJSON_ArrayForEach(P, cJSON_GetObjectItemCaseSensitive(sum, "points"))
    {
        char* settings = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(P, "settings"));
        printf("\npoint %d %s\n", (int)cJSON_GetObjectItemCaseSensitive(P, "point")->valuedouble,
               settings ? settings : "");
        cJSON_free(settings);
        printf("  %-34s %12s %12s %25s %12s %12s %12s\n", "figure", "mean", "sd", "95% CI of the mean", "p95",
               "min", "max");
        const cJSON* F;
        cJSON_ArrayForEach(F, cJSON_GetObjectItemCaseSensitive(P, "figures"))
        {
            const cJSON* ci = cJSON_GetObjectItemCaseSensitive(F, "ci95");
            char range[64];
            snprintf(range, sizeof range, "[%.5g, %.5g]", cJSON_GetArrayItem(ci, 0)->valuedouble,
                     cJSON_GetArrayItem(ci, 1)->valuedouble);
            printf("  %-34s %12.5g %12.5g %25s %12.5g %12.5g %12.5g\n", F->string,
                   cJSON_GetObjectItemCaseSensitive(F, "mean")->valuedouble,
                   cJSON_GetObjectItemCaseSensitive(F, "sd")->valuedouble, range,
                   cJSON_GetObjectItemCaseSensitive(F, "p95")->valuedouble,
                   cJSON_GetObjectItemCaseSensitive(F, "min")->valuedouble,
                   cJSON_GetObjectItemCaseSensitive(F, "max")->valuedouble);
        }
    }
}

/* ---- the command -------------------------------------------------------------- */

static int finish(const ens_plan_t* p, ens_results_t* r, int32_t workers, int32_t ranks)
{
    const ens_options_t* o = p->o;
    if (r->done != p->runs || r->failed > 0) {
        for (int32_t k = 0; k < p->runs; ++k) {
            if (r->why[k] == NULL && r->rows[k] != NULL) continue;
            int32_t index[ENS_MAX_SETS];
            point_values(p, k / o->seed_count, index);
            char at[512] = "";
            size_t used = 0;
            for (int32_t s = 0; s < o->set_count && used < sizeof at; ++s) {
                char* v = cJSON_PrintUnformatted(o->sets[s].values[index[s]]);
                used += (size_t)snprintf(at + used, sizeof at - used, ", %s=%s", o->sets[s].key, v ? v : "?");
                cJSON_free(v);
            }
            cli_error("ensemble: run %d (seed %" PRIu64 "%s): %s", (int)k, o->seeds[k % o->seed_count], at,
                      r->why[k] ? r->why[k] : "no result (its worker stopped)");
        }
        return CLI_EXIT_FAILURE;
    }
    cJSON** rows = calloc((size_t)p->runs, sizeof *rows);
    int ok = rows != NULL;
    for (int32_t k = 0; ok && k < p->runs; ++k) ok = (rows[k] = cJSON_Parse(r->rows[k])) != NULL;
    FILE* out = ok && o->out ? fopen(o->out, "w") : NULL;
    if (ok && o->out && !out) {
        cli_error("ensemble: cannot write %s: %s", o->out, strerror(errno));
        ok = 0;
    }
    for (int32_t k = 0; out && k < p->runs; ++k) fprintf(out, "%s\n", r->rows[k]);
    if (out && fclose(out) != 0) {
        cli_error("ensemble: cannot write %s", o->out);
        ok = 0;
    }
    if (ok && o->csv && !write_csv(o->csv, rows, p->runs)) {
        cli_error("ensemble: cannot write %s: %s", o->csv, strerror(errno));
        ok = 0;
    }
    cJSON* sum = ok ? summary(p, rows, workers, ranks) : NULL;
    if (sum && o->json) {
        char* text = cJSON_PrintUnformatted(sum);
        if (text) puts(text);
        cJSON_free(text);
    } else if (sum) {
        print_text(sum);
    }
    cJSON_Delete(sum);
    for (int32_t k = 0; rows && k < p->runs; ++k) cJSON_Delete(rows[k]);
    free(rows);
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

int cmd_ensemble(int argc, char** argv)
{
    ens_options_t o;
    memset(&o, 0, sizeof o);
    o.steps = -1;
    o.threads = 1;
    const char* positional[1] = {NULL};
    int npos = 0;
    int stop = cli_parse(&ens_spec, argc, argv, &o, positional, &npos);
    int code = CLI_EXIT_FAILURE;
    ens_results_t r = {NULL, NULL, 0, 0};
    ens_plan_t p = {NULL, NULL, &o, 1, 0};
    if (stop >= 0) {
        code = stop;
        goto done;
    }
    char found[CLI_PATH_MAX];
    int looked = 0;
    p.path = scenario_path(npos ? positional[0] : NULL, found, sizeof found, &looked);
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* sc = NULL;
    if (shoal_scenario_load_file(p.path, &sc, &err) != SHOAL_OK) { /* judged once, before any run */
        cli_error("%s", err.message);
        goto done;
    }
    if (o.seed_count == 0) {
        o.seeds = malloc(sizeof *o.seeds);
        if (!o.seeds) goto done;
        o.seeds[0] = shoal_scenario_seed(sc);
        o.seed_count = 1;
    }
    shoal_scenario_destroy(sc);
    if (o.set_count > 0) { /* the file as JSON, to write the settings into */
        void* text = NULL;
        size_t size = 0;
        char why[256];
        if (file_read_all(p.path, FILE_LIMIT_SCENARIO, &text, &size, why, sizeof why) != FILE_READ_OK) {
            cli_error("ensemble: %s: %s", p.path, why);
            goto done;
        }
        p.base = cJSON_ParseWithLength((const char*)text, size);
        free(text);
        if (!p.base) {
            cli_error("ensemble: cannot read %s as JSON", p.path);
            goto done;
        }
    }
    for (int32_t s = 0; s < o.set_count; ++s) {
        if ((int64_t)p.points * o.sets[s].count > 1000000) {
            cli_error("ensemble: more than a million parameter points");
            goto done;
        }
        p.points *= o.sets[s].count;
    }
    if ((int64_t)p.points * o.seed_count > INT32_MAX / 2) {
        cli_error("ensemble: %lld runs are too many", (long long)p.points * o.seed_count);
        goto done;
    }
    p.runs = p.points * o.seed_count;
    r.rows = calloc((size_t)p.runs, sizeof *r.rows);
    r.why = calloc((size_t)p.runs, sizeof *r.why);
    if (!r.rows || !r.why) {
        cli_error("ensemble: out of memory for %d runs", (int)p.runs);
        goto done;
    }
#ifdef SHOAL_WITH_MPI
    if (launched_by_mpirun()) {
        int provided = 0, rank = 0, ranks = 1;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        run_mpi(&p, rank, ranks, &r);
        code = rank == 0 ? finish(&p, &r, ranks > 1 ? ranks - 1 : 1, ranks) : CLI_EXIT_OK;
        MPI_Finalize();
        goto done;
    }
#endif
    int32_t workers = o.workers;
    if (workers == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        workers = (int32_t)(cores > 0 ? cores : 1) / o.threads;
        if (workers < 1) workers = 1;
    }
    if (workers > p.runs) workers = p.runs;
    if (run_forked(&p, workers, &r) != 0) goto done;
    code = finish(&p, &r, workers, 1);
done:
    for (int32_t k = 0; r.rows && k < p.runs; ++k) {
        free(r.rows[k]);
        free(r.why[k]);
    }
    free(r.rows);
    free(r.why);
    cJSON_Delete(p.base);
    for (int32_t s = 0; s < o.set_count; ++s)
        for (int32_t v = 0; v < o.sets[s].count; ++v) cJSON_Delete(o.sets[s].values[v]);
    free(o.seeds);
    return code;
}
