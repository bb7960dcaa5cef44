/* `shoal run`: load a scenario, step it, report throughput, the state hash
 * and what each system cost.
 *
 * Decisions worth knowing:
 * - Only the stepping loop is timed (not loading or populating), because
 *   the number people compare is steady-state agent-steps per second.
 * - Agent-steps are counted step by step (agents alive before each step),
 *   so the rate stays right if a scenario spawns or removes agents.
 * - System statistics are reset after populating, so the table describes
 *   exactly the steps that were timed. "share of step" divides a system's
 *   time by the loop's wall time: the shares sum to less than 100% by the
 *   scheduling and stage-boundary overhead, which is worth seeing.
 * - The progress bar goes to stderr and only to a terminal: stdout stays
 *   clean for pipes and --json, and logs never fill with '\r' lines.
 * - --record writes the initial state, every K-th step and the last step
 *   (docs/recording.md). Writing frames is excluded from the timed seconds,
 *   so a recorded run reports the same throughput as an unrecorded one. A
 *   recording never passes --record-max (default and most 4 GiB, what
 *   every reader accepts): the frame that would is the first of the next
 *   file, OUT-2.rec, OUT-3.rec..., each a whole recording.
 * - SIGINT (Ctrl-C) and SIGTERM end the run after the step under way: the
 *   last frame is recorded, the recording closed, --export, --save and
 *   --trace written, the summary printed, and the exit code is 130
 *   (SIGINT) or 143 (SIGTERM), as a shell reports a signal's death. A
 *   second signal kills at once.
 * - The default table lists only the systems that touched agents (a crowd
 *   of seekers need not read about the planner); --stats lists every
 *   system, idle and disabled ones included, and the loop time no system
 *   accounts for. --json always has every system.
 * - --trace records with the library's tracer (shoal_world_set_trace) and
 *   writes Chrome trace-event JSON after the run with
 *   shoal_world_write_trace (atomic: never half a trace under the requested
 *   name). Tracing's own cost (two clock reads and a store per span) stays
 *   inside the timed loop, where it belongs. How many block spans a step
 *   makes depends on the agents, the threads and each system's schedule, so
 *   the buffers are not sized from a guess: they start at a size that holds
 *   the first steps and grow between steps (shoal_world_set_trace_limit),
 *   up to a memory limit that only very long runs reach. --trace-capacity
 *   fixes their size instead.
 * - --seed replaces the scenario's seed before anything is built, so it
 *   seeds both the world and the placement of agents: the run is the one
 *   the same file with that "seed" would give.
 * - A scenario FILE that does not exist as given, and the default one, are
 *   looked for among the files shipped with the command (cli/data_dir.c):
 *   `shoal run flock2d.json` works from any directory, installed or not.
 * - --export goes through a recording (the --record file, or a temporary
 *   one beside OUT) and then `shoal export`'s writers: one path from
 *   frames to files, so an export from a run and one from its recording
 *   are the same bytes. The checks that can fail it (format, existing
 *   file, directory, 3D to SQLite) run before the first step. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "shoal/recording.h"
#include "shoal/scenario.h"
#include "shoal/snapshot.h"
#include "shoal/shoal.h"

#include "cli/cli.h"
#include "io/file_read.h"
#include "modules/step.h"
#include "cli/cli_options.h"
#include "cli/data_dir.h"
#include "cli/export/export.h"
#include "cli/run_measure.h"
#include "cli/run_collect.h"
#include "cli/run_result.h"

#define RUN_DEFAULT_PATH "scenarios/default.json"
#define RUN_SCENARIO_DIR "scenarios"
#define RUN_MAX_THREADS 1024
/* Compressed recordings' (format versions 3 and 4) bytes per agent per
 * frame, for --record's size warning: above the largest the shipped
 * scenarios gave (docs/recording.md), so that the estimate errs large. */
#define RECORD_COMPRESSED_BYTES_2D 10.0
#define RECORD_COMPRESSED_BYTES_3D 24.0

/* Redraw at most this often: a terminal redrawn every step slows a fast
 * run down and flickers. */
#define PROGRESS_INTERVAL_S 0.1
#define PROGRESS_BAR_WIDTH 30

typedef struct run_options_t {
    const char* path;
    int64_t steps;   /* -1: the scenario's own */
    int32_t threads; /* -1: the scenario's own (or its default); 0: automatic */
    int json;
    int quiet;
    const char* record;      /* --record FILE, or NULL */
    int64_t record_every;    /* --record-every K; 0: not given (1) */
    int32_t record_version;  /* --record-version V; 0: not given (the library's) */
    const char* record_max;  /* --record-max SIZE, or NULL (4 GiB) */
    int stats;               /* --stats: the full table of systems */
    const char* trace;       /* --trace FILE, or NULL */
    const char* save;        /* --save FILE, or NULL */
    const char* resume;      /* --resume FILE, or NULL */
    int has_seed;            /* --seed given */
    uint64_t seed;           /* --seed S */
    int32_t trace_capacity;  /* --trace-capacity N; 0: not given (growing buffers) */
    const char* export_path; /* --export FILE, or NULL */
    int force;               /* --force: --export may replace a file */
    const char* measure_csv; /* --measure-csv FILE, or NULL */
    const char* collect;     /* --collect FILE, or NULL */
} run_options_t;

/* The trace buffers' first size, in events each: room for the spans of a
 * few hundred steps (they then grow), at least TRACE_MIN_EVENTS, so the
 * first step, whose count the library cannot know yet, fits. */
#define TRACE_EVENTS_PER_STEP 128
#define TRACE_MIN_EVENTS 4096
#define TRACE_FIRST_EVENTS (1 << 16)
/* What the buffers may grow to, all of them together: 2^25 events of 32
 * bytes, 1 GiB. */
#define TRACE_TOTAL_EVENTS (1 << 25)
#define TRACE_EVENT_BYTES 32


/* A run's recording: frames at step 0 (written by open_recording), every
 * `every` steps and at the last step. */
typedef struct run_recording_t {
    shoal_recorder_t* recorder; /* NULL: not recording */
    int64_t every;
    int32_t version; /* the format version to write */
    double seconds;  /* wall time spent writing frames */
    /* Going on in another file past max_bytes (split: --record, not the
     * temporary recording of --export, which is read as one). */
    uint64_t max_bytes;
    int split;
    const char* base;                /* the path given; part k > 1 is base's stem + "-k" + its extension */
    int32_t part;                    /* the file being written: 1, 2, ... */
    char path[4096];                 /* its path */
    int64_t frames;                  /* frames written to the files closed before this one */
    shoal_recording_header_t header; /* to open the next part with */
    char* group_names;               /* owned: the header's */
    char* scenario_text;             /* owned: the header's */
} run_recording_t;

/* The signal that asked the run to end (SIGINT or SIGTERM), 0 for none. */
static volatile sig_atomic_t run_signal = 0;

static void on_run_signal(int sig) { run_signal = sig; }

/* SIGINT and SIGTERM end the run after the step under way; the handler is
 * one-shot (SA_RESETHAND), so a second signal kills as usual. */
static void catch_run_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_run_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

typedef struct progress_t {
    int enabled;
    double start;
    double last_draw;
    int64_t total;
} progress_t;

#define STR_(x) #x
#define STR(x) STR_(x)

/* --seed: a scenario's seed rules (docs/scenarios.md), on a command line:
 * decimal digits only (no sign, blanks or exponent), up to 2^64 - 1. */
static int parse_seed(const char* command, const char* name, const char* value, void* opts)
{
    run_options_t* opt = (run_options_t*)opts;
    size_t n = strspn(value, "0123456789");
    uint64_t seed = 0;
    int ok = n > 0 && value[n] == '\0';
    for (size_t i = 0; ok && i < n; ++i) {
        uint64_t digit = (uint64_t)(value[i] - '0');
        if (seed > (UINT64_MAX - digit) / 10)
            ok = 0;
        else
            seed = seed * 10 + digit;
    }
    if (!ok) {
        return cli_usage_error(command,
                               "%s needs a seed of decimal digits from 0 to 18446744073709551615 "
                               "(2^64 - 1), not '%s'",
                               name, value);
    }
    opt->seed = seed;
    opt->has_seed = 1;
    return 0;
}

static const cli_option_t run_options[] = {
    {.name = "--steps",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(run_options_t, steps),
     .max = (double)INT64_MAX,
     .help = "number of steps, an integer >= 0. Default: the scenario's \"steps\"."},
    {.name = "--seed",
     .metavar = "S",
     .kind = CLI_CUSTOM,
     .parse = parse_seed,
     .help = "the seed of the world and of the placement of agents, replacing the scenario's \"seed\" "
             "(the run is the one the file with \"seed\": S gives; the state hash changes with it): "
             "decimal digits, 0 to 18446744073709551615. Default: the scenario's \"seed\" (1 when it "
             "has none). A recording keeps the file as written, its seed included. Not with --resume: a "
             "snapshot's world keeps its own."},
    {.name = "--threads",
     .metavar = "T",
     .kind = CLI_INT,
     CLI_AT(run_options_t, threads),
     .min = 0,
     .max = RUN_MAX_THREADS,
     .help = "worker threads, 0.." STR(RUN_MAX_THREADS) "; 0 is automatic: $SHOAL_THREADS, else the "
                                                        "physical core count, each step on one thread "
                                                        "when that is measured faster. Default: the "
                                                        "scenario's \"threads\" (0 if it has none). The "
                                                        "state hash is the same for every thread count."},
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(run_options_t, json),
     .help = "print one JSON object (one line) on stdout instead of text."},
    {.name = "--quiet",
     .alias = "-q",
     .kind = CLI_FLAG,
     CLI_AT(run_options_t, quiet),
     .help = "no progress bar. (The bar is only ever drawn when stderr is a terminal, and never with "
             "--json.)"},
    {.name = "--record",
     .metavar = "OUT",
     .kind = CLI_STRING,
     CLI_AT(run_options_t, record),
     .help = "write a recording to OUT (docs/recording.md): the initial state, every K-th step and the "
             "last step, with the scenario inside, compressed (lossless). View it with 'shoal view "
             "OUT'. A warning on stderr comes before the run when it may reach 1 GiB."},
    {.name = "--record-max",
     .metavar = "SIZE",
     .kind = CLI_STRING,
     CLI_AT(run_options_t, record_max),
     .help = "the most bytes one recording file may take: a frame that would pass it starts the next "
             "file, OUT-2.rec, OUT-3.rec... (OUT's stem, -k, its extension), each a whole recording. "
             "Bytes, or with KiB, MiB or GiB; 64KiB..4GiB. Default: 4GiB, what every reader accepts."},
    {.name = "--record-every",
     .metavar = "K",
     .kind = CLI_INT,
     CLI_AT(run_options_t, record_every),
     .min = 1,
     .max = INT32_MAX,
     .help = "record (and export) every K-th step, an integer >= 1. Default: 1."},
    {.name = "--record-version",
     .metavar = "V",
     .kind = CLI_INT,
     CLI_AT(run_options_t, record_version),
     .min = 2,
     .max = 5,
     .help = "the recording's format version: 5 (version 4 with the navigation fields: the walkable grid "
             "and each goal's travel time, written again whenever they are solved anew), 4 (compressed, "
             "lossless, with each agent's global id), 3 (the same without global ids, for readers built "
             "before version 4) or 2 (uncompressed, about 4 times larger, without global ids; what the "
             "viewer page's own file button opens). Default: 5 for a scenario with navigation goals, "
             "else 4."},
    {.name = "--export",
     .metavar = "OUT",
     .kind = CLI_FILE,
     CLI_AT(run_options_t, export_path),
     .help = "write the run's trajectories to OUT, in the format its extension names: .csv, or .sqlite "
             "(a JuPedSim trajectory database for PedPy, 2D only). As 'shoal export' does (see "
             "docs/export.md), from the --record file or from a temporary recording beside OUT, removed "
             "afterwards. An existing OUT is an error without --force."},
    {.name = "--force",
     .kind = CLI_FLAG,
     CLI_AT(run_options_t, force),
     .help = "let --export replace an existing file."},
    {.name = "--measure-csv",
     .metavar = "OUT",
     .kind = CLI_FILE,
     CLI_AT(run_options_t, measure_csv),
     .help = "write the time series of the scenario's measurement lines and areas (its \"measure\", "
             "docs/measure.md) to OUT as CSV: a row per line and flow window, a row per area and "
             "sample. With --resume they start at the resume."},
    {.name = "--collect",
     .metavar = "OUT",
     .kind = CLI_FILE,
     CLI_AT(run_options_t, collect),
     .help = "sample the scenario's \"collect\" figures (docs/scenarios.md; without one, the mean speed) "
             "before the first step, every K-th step and after the last, and write them to OUT as CSV: "
             "step, time, agents, then a column a figure."},
    {.name = "--stats",
     .kind = CLI_FLAG,
     CLI_AT(run_options_t, stats),
     .help = "list every system in the table (by default only those that touched agents are listed), "
             "with the loop time no system accounts for. No effect on --json, which has every system."},
    {.name = "--trace",
     .metavar = "OUT",
     .kind = CLI_FILE,
     CLI_AT(run_options_t, trace),
     .help =
         "write a Chrome trace-event JSON file to OUT: a span per step, per system and step, and per "
         "block of agents on each worker thread where a system runs in parallel. Open it in "
         "https://ui.perfetto.dev or chrome://tracing. The buffers grow between steps to hold the "
         "whole run, up to " STR(TRACE_TOTAL_EVENTS) " events (1 GiB) in all; past that, events "
                                                     "are dropped, and a warning on stderr says how many."},
    {.name = "--trace-capacity",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(run_options_t, trace_capacity),
     .min = 1,
     .max = INT32_MAX,
     .help = "with --trace: fixed buffers of N events each (32 bytes an event) instead of growing ones: "
             "one buffer for the step and system spans, and one per worker thread for its block spans. "
             "Events past a full buffer are dropped, and a warning on stderr says how many."},
    {.name = "--save",
     .metavar = "OUT",
     .kind = CLI_FILE,
     CLI_AT(run_options_t, save),
     .help = "after the last step, save the world to the snapshot OUT (docs/snapshot.md), atomically."},
    {.name = "--resume",
     .metavar = "SNAPSHOT",
     .kind = CLI_FILE,
     CLI_AT(run_options_t, resume),
     .help = "start from the world saved in SNAPSHOT instead of populating the scenario, then run "
             "--steps more steps (default: the scenario's \"steps\" minus the steps already done). "
             "Give the scenario that made it: its dt is used. The final state_hash equals that of an "
             "uninterrupted run."},
};

static const cli_spec_t run_spec = {
    .command = "run",
    .usage = "[FILE] [options]",
    .about = "Load the scenario FILE, build its world, step it N times at the scenario's dt\n"
             "and report throughput, the final state hash and the cost of every system.\n",
    .arguments = "  FILE                  scenario file (JSON, see docs/scenarios.md). A relative\n"
                 "                        FILE not found from the current directory is looked\n"
                 "                        for among the scenarios shipped with shoal (installed:\n"
                 "                        PREFIX/share/shoal/scenarios; in a build tree, the\n"
                 "                        source's scenarios/), as FILE and as scenarios/FILE.\n"
                 "                        Default: " RUN_DEFAULT_PATH " in the current\n"
                 "                        directory, else the shipped default.json.\n",
    .options = run_options,
    .option_count = CLI_COUNT(run_options),
    .details = "Text output: the scenario, seed, agents, dimensions, threads, backend, steps, wall\n"
               "seconds of the stepping loop, agent-steps per second and state_hash, with crowd\n"
               "agents a line on them (arrived, closest pair, overlapping: docs/crowds.md), then a\n"
               "table of systems in step order (those that touched agents; all with --stats):\n"
               "stage, calls, ms total, ms/step, share of step (percent of the loop's wall\n"
               "time; the rest is scheduling overhead) and ns/agent (time per agent touched).\n"
               "\n"
               "JSON keys:\n"
               "  scenario (string), file (string), seed (string of decimal digits: the seed\n"
               "  the run used), agents (number, after populating),\n"
               "  dimensions, threads, backend (\"serial\", \"openmp\" or \"host\"), steps, dt\n"
               "  (seconds), seconds (wall time of the stepping loop only), agent_steps,\n"
               "  agent_steps_per_s, state_hash (string of 16 lowercase hex digits), version,\n"
               "  crowd (only with crowd agents): {agents, arrived (within one radius of the\n"
               "  target), closest_pair (center distance over the radii sum, null: none seen),\n"
               "  overlapping (agents below 0.99 of it with any agent), relaxed_last_step,\n"
               "  contact_iterations, wall_penetration (deepest reach into a wall over the\n"
               "  radius), in_walls (agents over 1 % of their radius into one)},\n"
               "  measure (only with measurement lines or areas): {lines: array of {name,\n"
               "  from, to, group, positive, negative, crossings, first_time, last_time\n"
               "  (seconds, null: none), duration, mean_flow (crossings per second)}, areas:\n"
               "  array of {name, area (m^2), every, group, samples, mean_count,\n"
               "  mean_density, mean_voronoi_density (per m^2), mean_speed,\n"
               "  mean_voronoi_speed (m/s)}},\n"
               "  systems: array of {name, stage, enabled, calls, ms_total, ms_per_step,\n"
               "  share (0..1 of the loop's wall time), agents (agents touched over all\n"
               "  calls), ns_per_agent}; interrupted (\"SIGINT\" or \"SIGTERM\", only when a\n"
               "  signal ended the run).\n"
               "\n"
               "Ctrl-C (SIGINT) or SIGTERM ends the run after the step under way: its frame is\n"
               "recorded, the recording closed whole, --export, --save and --trace written and\n"
               "the summary printed (\"interrupted\"); the exit code is then 130 (SIGINT) or 143\n"
               "(SIGTERM). A second signal kills at once.\n",
    .max_positional = 1,
    .positional = "scenario file",
};

/* --record-max's SIZE: bytes, or a number with KiB, MiB or GiB; 0 when
 * it is not one, or out of 64 KiB..4 GiB. */
static uint64_t parse_record_max(const char* text)
{
    char* end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno != 0 || !(v > 0.0)) return 0;
    double unit = !strcmp(end, "") || !strcmp(end, "B") ? 1.0
                  : !strcmp(end, "KiB")                 ? 1024.0
                  : !strcmp(end, "MiB")                 ? 1024.0 * 1024.0
                  : !strcmp(end, "GiB")                 ? 1024.0 * 1024.0 * 1024.0
                                                        : 0.0;
    double bytes = v * unit;
    if (!(bytes >= 65536.0) || bytes > (double)SHOAL_RECORDING_MAX_FILE) return 0;
    return (uint64_t)bytes;
}

/* Returns -1 to go on, or the exit code to stop with (help, usage error). */
static int parse_options(int argc, char** argv, run_options_t* opt)
{
    int count = 0;
    int stop = cli_parse(&run_spec, argc, argv, opt, &opt->path, &count);
    if (stop >= 0) return stop;
    if (opt->record_every > 0 && opt->record == NULL && opt->export_path == NULL) {
        return cli_usage_error(run_spec.command, "--record-every needs --record or --export");
    }
    if (opt->record_version > 0 && opt->record == NULL) {
        return cli_usage_error(run_spec.command, "--record-version needs --record");
    }
    if (opt->record_max != NULL && opt->record == NULL) {
        return cli_usage_error(run_spec.command, "--record-max needs --record");
    }
    if (opt->record_max != NULL && parse_record_max(opt->record_max) == 0) {
        return cli_usage_error(run_spec.command,
                               "--record-max needs a size from 64KiB to 4GiB (bytes, or a number with KiB, "
                               "MiB or GiB), not '%s'",
                               opt->record_max);
    }
    if (opt->force && opt->export_path == NULL) {
        return cli_usage_error(run_spec.command, "--force needs --export (it lets --export "
                                                 "replace a file)");
    }
    if (opt->export_path != NULL && export_format_of(opt->export_path) == EXPORT_UNKNOWN) {
        return cli_usage_error(run_spec.command,
                               "--export %s: unknown export format: the name must end in .csv "
                               "or .sqlite",
                               opt->export_path);
    }
    if (opt->export_path != NULL && opt->record != NULL && strcmp(opt->export_path, opt->record) == 0) {
        return cli_usage_error(run_spec.command, "--export and --record name the same file");
    }
    if (opt->trace_capacity > 0 && opt->trace == NULL) {
        return cli_usage_error(run_spec.command, "--trace-capacity needs --trace");
    }
    if (opt->has_seed && opt->resume != NULL) {
        return cli_usage_error(run_spec.command,
                               "--seed cannot be used with --resume: the snapshot's world keeps "
                               "the seed it was made with");
    }
    return -1;
}

/* The scenario file to load: `given` where it is, else a shipped one
 * (cli/data_dir.c) as given or under scenarios/; NULL given: the default.
 * Returns `given` itself when nothing matches, so that loading it fails with
 * an error naming what was asked for; *looked says whether the shipped
 * scenarios were searched (for the error message). */
const char* scenario_path(const char* given, char* found, size_t size, int* looked)
{
    const char* name = given != NULL ? given : RUN_DEFAULT_PATH;
    *looked = 0;
    if (access(name, F_OK) == 0 || name[0] == '/') return name;
    *looked = 1;
    if (cli_find_data(name, found, size)) return found;
    char under[CLI_PATH_MAX];
    int n = snprintf(under, sizeof under, RUN_SCENARIO_DIR "/%s", name);
    if (n > 0 && (size_t)n < sizeof under && cli_find_data(under, found, size)) return found;
    return name;
}

static void progress_draw(progress_t* progress, int64_t done, double now)
{
    double fraction = progress->total > 0 ? (double)done / (double)progress->total : 1.0;
    int filled = (int)(fraction * PROGRESS_BAR_WIDTH);
    char bar[PROGRESS_BAR_WIDTH + 1];
    for (int i = 0; i < PROGRESS_BAR_WIDTH; ++i) {
        bar[i] = i < filled ? '#' : '.';
    }
    bar[PROGRESS_BAR_WIDTH] = '\0';
    fprintf(stderr, "\r[%s] %3d%%  step %" PRId64 "/%" PRId64 "  %.1f s", bar, (int)(fraction * 100.0), done,
            progress->total, now - progress->start);
    fflush(stderr);
    progress->last_draw = now;
}

static void progress_clear(const progress_t* progress)
{
    if (progress->enabled) {
        /* Wide enough for any line progress_draw writes. */
        fprintf(stderr, "\r%*s\r", PROGRESS_BAR_WIDTH + 60, "");
        fflush(stderr);
    }
}

/* Part `part` of the recording `base`: base itself for part 1, else its
 * stem, "-part", and its extension ("run.rec" -> "run-2.rec", "out" ->
 * "out-2"). 0, or -1 when it does not fit. */
static int recording_part_path(const char* base, int32_t part, char* out, size_t size)
{
    if (part <= 1) return snprintf(out, size, "%s", base) < (int)size ? 0 : -1;
    const char* slash = strrchr(base, '/');
    const char* dot = strrchr(base, '.');
    if (dot == NULL || (slash != NULL && dot < slash) || dot == (slash != NULL ? slash + 1 : base))
        dot = base + strlen(base);
    int n = snprintf(out, size, "%.*s-%d%s", (int)(dot - base), base, (int)part, dot);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* Open recording->path with recording->header and its byte limit. On
 * failure prints the error, returns nonzero. */
static int open_recording_part(run_recording_t* recording)
{
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_status_t status = shoal_recording_open_version(recording->path, &recording->header,
                                                         recording->version, &recording->recorder, &err);
    if (status == SHOAL_OK &&
        shoal_recording_set_max_bytes(recording->recorder, recording->max_bytes) != SHOAL_OK)
        status = SHOAL_ERR_INVALID_ARGUMENT;
    if (status != SHOAL_OK) {
        cli_error("%s", err.message[0] != '\0' ? err.message : shoal_status_string(status));
        return 1;
    }
    return 0;
}

/* Close the file being written, counting its frames. On failure prints the
 * error, returns nonzero. */
static int close_recording_part(run_recording_t* recording)
{
    shoal_recorder_t* recorder = recording->recorder;
    recording->recorder = NULL;
    recording->frames += shoal_recording_frames_written(recorder);
    shoal_error_t err = {SHOAL_OK, ""};
    if (shoal_recording_close(recorder, &err) != SHOAL_OK) {
        cli_error("%s", err.message[0] != '\0' ? err.message : "closing the recording failed");
        return 1;
    }
    return 0;
}

/* Append the world's current state to the recording, if there is one: to
 * the next part when this one would pass its limit. On failure prints the
 * error and returns nonzero. */
static int record_frame(run_recording_t* recording, const shoal_world_t* world)
{
    if (recording->recorder == NULL) {
        return 0;
    }
    double start = cli_now_seconds();
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_status_t status = shoal_recording_write_frame(recording->recorder, world, &err);
    if (status == SHOAL_ERR_CAPACITY && recording->split &&
        shoal_recording_frames_written(recording->recorder) > 0) {
        /* This file is full: close it whole and go on in the next. */
        if (close_recording_part(recording) != 0) return 1;
        recording->part += 1;
        if (recording_part_path(recording->base, recording->part, recording->path, sizeof recording->path) !=
            0) {
            cli_error("--record %s: the path of part %d is too long", recording->base, (int)recording->part);
            return 1;
        }
        if (open_recording_part(recording) != 0) return 1;
        err = (shoal_error_t){SHOAL_OK, ""};
        status = shoal_recording_write_frame(recording->recorder, world, &err);
    }
    recording->seconds += cli_now_seconds() - start;
    if (status != SHOAL_OK) {
        if (status == SHOAL_ERR_CAPACITY && !recording->split)
            cli_error("%s (an --export reads one recording: record fewer frames with --record-every)",
                      err.message);
        else
            cli_error("%s", err.message[0] != '\0' ? err.message : shoal_status_string(status));
        return 1;
    }
    return 0;
}

/* Step `steps` times. On failure prints the error and returns nonzero;
 * result->steps says how far it got. */
static int step_world(shoal_world_t* world, int64_t steps, float dt, int show_progress,
                      run_recording_t* recording, run_collect_t* collect, run_result_t* result)
{
    progress_t progress = {show_progress, 0.0, 0.0, steps};
    double start = cli_now_seconds();
    progress.start = start;
    if (progress.enabled) {
        progress_draw(&progress, 0, start);
    }
    int failed = 0; /* 1: a step failed, 2: recording failed (already reported) */
    int64_t step = 0;
    double recording_before = recording->seconds;
    for (; step < steps; ++step) {
        result->agent_steps += (uint64_t)shoal_world_agent_count(world);
        if (shoal_world_step(world, dt) != SHOAL_OK) {
            failed = 1;
            break;
        }
        const int asked_to_end = run_signal != 0;
        if (((step + 1) % recording->every == 0 || step + 1 == steps || asked_to_end) &&
            record_frame(recording, world) != 0) {
            failed = 2;
            step += 1;
            break;
        }
        if (collect != NULL && ((step + 1) % collect->spec.every == 0 || step + 1 == steps || asked_to_end) &&
            run_collect_sample(collect, world) != 0) {
            cli_error("--collect: out of memory after step %" PRId64, step + 1);
            failed = 2;
            step += 1;
            break;
        }
        if (asked_to_end) {
            result->interrupted_by = (int)run_signal;
            step += 1;
            break;
        }
        if (progress.enabled) {
            double now = cli_now_seconds();
            if (now - progress.last_draw >= PROGRESS_INTERVAL_S || step + 1 == steps) {
                progress_draw(&progress, step + 1, now);
            }
        }
    }
    result->seconds = cli_now_seconds() - start - (recording->seconds - recording_before);
    result->steps = step;
    progress_clear(&progress);
    if (failed == 1) {
        cli_error("step %" PRId64 ": %s", step + 1, shoal_world_last_error(world));
    }
    return failed;
}

static double ms_per_step(const shoal_system_stats_t* stats, int64_t steps)
{
    return steps > 0 ? (double)stats->ns_total * 1e-6 / (double)steps : 0.0;
}

static double share_of_loop(const shoal_system_stats_t* stats, double seconds)
{
    return seconds > 0.0 ? (double)stats->ns_total * 1e-9 / seconds : 0.0;
}

static double agent_steps_per_s(const run_result_t* result)
{
    return result->seconds > 0.0 ? (double)result->agent_steps / result->seconds : 0.0;
}

/* A system worth a line in the default table: it did work. */
static int system_listed(const shoal_system_stats_t* stats, int all) { return all || stats->agents > 0; }

/* --stats: the step table (modules/step.h) of the world that ran, with how
 * often each pass ran fused. */
static void print_step_table(const shoal_world_t* world)
{
    size_t n = step_table_write(world, 0, NULL, 0);
    char* text = (char*)malloc(n + 1);
    if (!text) return;
    step_table_write(world, 0, text, n + 1);
    printf("\n%s", text);
    free(text);
}

static void print_text(const shoal_scenario_t* scenario, const shoal_world_t* world, int32_t agents, float dt,
                       const run_result_t* result, int all)
{
    printf("scenario         %s\n", shoal_scenario_name(scenario));
    printf("seed             %" PRIu64 "\n", shoal_scenario_seed(scenario));
    printf("agents           %" PRId32 "\n", agents);
    printf("dimensions       %" PRId32 "\n", shoal_world_dimensions(world));
    printf("threads          %" PRId32 "\n", shoal_world_thread_count(world));
    printf("backend          %s\n", shoal_backend_name(shoal_world_backend(world)));
    printf("steps            %" PRId64 " (dt %g s)\n", result->steps, (double)dt);
    if (result->interrupted_by != 0)
        printf("interrupted      by %s: the run ended after step %" PRId64 "\n",
               result->interrupted_by == SIGINT ? "SIGINT" : "SIGTERM", result->steps);
    printf("wall seconds     %.6f\n", result->seconds);
    printf("agent-steps/s    %.0f\n", agent_steps_per_s(result));
    printf("state_hash       %016" PRIx64 "\n", shoal_world_state_hash(world));
    shoal_crowd_stats_t crowd;
    if (shoal_world_crowd_stats(world, &crowd) == SHOAL_OK && crowd.agents > 0) {
        char closest[64];
        if (isfinite(crowd.closest_pair))
            snprintf(closest, sizeof closest, "closest pair %.3f of the radii sum",
                     (double)crowd.closest_pair);
        else
            snprintf(closest, sizeof closest, "no pair within neighbor distance");
        printf("crowd            %" PRId32 " agents, %" PRId32 " arrived, %s, %" PRId32
               " overlapping, %" PRId32 " into walls (deepest %.3f of a radius)\n",
               crowd.agents, crowd.arrived, closest, crowd.overlapping, crowd.in_walls,
               (double)crowd.wall_penetration);
    }
    shoal_nav_stats_t nav;
    if (shoal_world_nav_goal_count(world) > 0 && shoal_world_nav_stats(world, -1, &nav) == SHOAL_OK)
        printf("nav              %" PRId32 " agents, %" PRId32 " arrived, %" PRId64 " exited, %" PRId32
               " no way, %" PRId32 " off grid, %" PRId32 " in walls, mean remaining %.2f m\n",
               nav.agents, nav.arrived, nav.exited, nav.no_way, nav.off_grid, nav.in_walls,
               nav.mean_remaining);
    shoal_navmesh_stats_t mesh;
    if (shoal_world_navmesh_stats(world, &mesh) == SHOAL_OK && mesh.agents > 0)
        printf("navmesh          %" PRId32 " agents, %" PRId32 " arrived, %" PRId32 " no way, %" PRId32
               " off mesh, %" PRId32 " waiting, %" PRId32 " polygons, %" PRId32 " replans and %" PRId32
               " pending in the last step\n",
               mesh.agents, mesh.arrived, mesh.no_way, mesh.off_mesh, mesh.waiting, mesh.polygons,
               mesh.replans, mesh.pending);
    run_measure_print(world);

    int32_t count = shoal_world_system_count(world);
    /* The total rows' labels are the narrowest the column may be. */
    int name_width = (int)strlen(all ? "outside systems" : "all systems");
    int stage_width = (int)strlen("stage");
    for (int32_t i = 0; i < count; ++i) {
        shoal_system_stats_t stats;
        if (shoal_world_system_stats(world, i, &stats) != SHOAL_OK) {
            continue;
        }
        if (!system_listed(&stats, all)) {
            continue;
        }
        int n = (int)strlen(stats.name);
        int s = (int)strlen(shoal_stage_name(stats.stage));
        name_width = n > name_width ? n : name_width;
        stage_width = s > stage_width ? s : stage_width;
    }
    printf("\n%-*s  %-*s  %8s  %10s  %9s  %8s  %9s\n", name_width, "system", stage_width, "stage", "calls",
           "ms total", "ms/step", "% step", "ns/agent");
    uint64_t ns_sum = 0;
    int32_t hidden = 0;
    for (int32_t i = 0; i < count; ++i) {
        shoal_system_stats_t stats;
        if (shoal_world_system_stats(world, i, &stats) != SHOAL_OK) {
            continue;
        }
        ns_sum += stats.ns_total;
        if (!system_listed(&stats, all)) {
            hidden++;
            continue;
        }
        char per_agent[32];
        if (stats.agents > 0) {
            snprintf(per_agent, sizeof per_agent, "%.2f", (double)stats.ns_total / (double)stats.agents);
        } else {
            snprintf(per_agent, sizeof per_agent, "-");
        }
        printf("%-*s  %-*s  %8" PRIu64 "  %10.3f  %9.4f  %8.1f  %9s%s\n", name_width, stats.name, stage_width,
               shoal_stage_name(stats.stage), stats.calls, (double)stats.ns_total * 1e-6,
               ms_per_step(&stats, result->steps), 100.0 * share_of_loop(&stats, result->seconds), per_agent,
               stats.enabled ? "" : "  (disabled)");
    }
    /* The total row shows how much of the loop the systems account for. */
    shoal_system_stats_t total = {0};
    total.ns_total = ns_sum;
    printf("%-*s  %-*s  %8s  %10.3f  %9.4f  %8.1f\n", name_width, "all systems", stage_width, "", "",
           (double)ns_sum * 1e-6, ms_per_step(&total, result->steps),
           100.0 * share_of_loop(&total, result->seconds));
    if (all) {
        /* What the loop spent outside systems: stage boundaries (applying
         * adds and removes), scheduling, the driver's own bookkeeping. */
        double loop_ns = result->seconds * 1e9;
        shoal_system_stats_t rest = {0};
        rest.ns_total = loop_ns > (double)ns_sum ? (uint64_t)(loop_ns - (double)ns_sum) : 0;
        printf("%-*s  %-*s  %8s  %10.3f  %9.4f  %8.1f\n", name_width, "outside systems", stage_width, "", "",
               (double)rest.ns_total * 1e-6, ms_per_step(&rest, result->steps),
               100.0 * share_of_loop(&rest, result->seconds));
        /* Most of the loop outside the systems: a world too small for its
         * threads (waking and joining them), or steps too short to time. */
        if (result->seconds > 0.0 && (double)rest.ns_total > 0.5 * loop_ns)
            printf("(%.0f %% of the loop is outside the systems: waking and joining %" PRId32
                   " threads, stage boundaries; for a world this small, --threads 1, or 0 to let each "
                   "step choose)\n",
                   100.0 * share_of_loop(&rest, result->seconds), shoal_world_thread_count(world));
        print_step_table(world);
    } else if (hidden > 0) {
        printf("(%" PRId32 " system%s that touched no agents not listed; --stats lists all)\n", hidden,
               hidden == 1 ? "" : "s");
    }
}

/* cJSON's add functions return NULL on allocation failure (and accept a
 * NULL parent), so it is enough to remember whether any of them failed. */
static int add_number(cJSON* object, const char* key, double value)
{
    return cJSON_AddNumberToObject(object, key, value) != NULL;
}

static int add_string(cJSON* object, const char* key, const char* value)
{
    return cJSON_AddStringToObject(object, key, value) != NULL;
}

static cJSON* systems_json(const shoal_world_t* world, const run_result_t* result)
{
    cJSON* systems = cJSON_CreateArray();
    int ok = systems != NULL;
    int32_t count = shoal_world_system_count(world);
    for (int32_t i = 0; ok && i < count; ++i) {
        shoal_system_stats_t stats;
        if (shoal_world_system_stats(world, i, &stats) != SHOAL_OK) {
            continue;
        }
        cJSON* system = cJSON_CreateObject();
        if (system == NULL || !cJSON_AddItemToArray(systems, system)) {
            cJSON_Delete(system);
            ok = 0;
            break;
        }
        ok &= add_string(system, "name", stats.name);
        ok &= add_string(system, "stage", shoal_stage_name(stats.stage));
        ok &= cJSON_AddBoolToObject(system, "enabled", stats.enabled != 0) != NULL;
        ok &= add_number(system, "calls", (double)stats.calls);
        ok &= add_number(system, "ms_total", (double)stats.ns_total * 1e-6);
        ok &= add_number(system, "ms_per_step", ms_per_step(&stats, result->steps));
        ok &= add_number(system, "share", share_of_loop(&stats, result->seconds));
        ok &= add_number(system, "agents", (double)stats.agents);
        ok &= add_number(system, "ns_per_agent",
                         stats.agents > 0 ? (double)stats.ns_total / (double)stats.agents : 0.0);
    }
    if (!ok) {
        cJSON_Delete(systems);
        return NULL;
    }
    return systems;
}

cJSON* run_result_json(const shoal_scenario_t* scenario, const shoal_world_t* world, const char* path,
                       int32_t agents, float dt, const run_result_t* result)
{
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, shoal_world_state_hash(world));

    cJSON* root = cJSON_CreateObject();
    int ok = root != NULL;
    ok &= add_string(root, "scenario", shoal_scenario_name(scenario));
    ok &= add_string(root, "file", path);
    /* A string: JSON numbers are doubles, exact only up to 2^53. */
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, shoal_scenario_seed(scenario));
    ok &= add_string(root, "seed", seed);
    ok &= add_number(root, "agents", agents);
    ok &= add_number(root, "dimensions", shoal_world_dimensions(world));
    ok &= add_number(root, "threads", shoal_world_thread_count(world));
    ok &= add_string(root, "backend", shoal_backend_name(shoal_world_backend(world)));
    ok &= add_number(root, "steps", (double)result->steps);
    if (result->interrupted_by != 0)
        ok &= add_string(root, "interrupted", result->interrupted_by == SIGINT ? "SIGINT" : "SIGTERM");
    ok &= add_number(root, "dt", (double)dt);
    ok &= add_number(root, "seconds", result->seconds);
    ok &= add_number(root, "agent_steps", (double)result->agent_steps);
    ok &= add_number(root, "agent_steps_per_s", agent_steps_per_s(result));
    ok &= add_string(root, "state_hash", hash);
    ok &= add_string(root, "version", shoal_version());
    shoal_crowd_stats_t crowd;
    if (ok && shoal_world_crowd_stats(world, &crowd) == SHOAL_OK && crowd.agents > 0) {
        cJSON* c = cJSON_AddObjectToObject(root, "crowd");
        ok &= c != NULL;
        ok = ok && add_number(c, "agents", crowd.agents) && add_number(c, "arrived", crowd.arrived) &&
             add_number(c, "overlapping", crowd.overlapping) &&
             add_number(c, "relaxed_last_step", crowd.relaxed_last_step) &&
             add_number(c, "contact_iterations", crowd.contact_iterations) &&
             add_number(c, "wall_penetration", (double)crowd.wall_penetration) &&
             add_number(c, "in_walls", crowd.in_walls);
        /* JSON has no infinity: no pair seen is null */
        if (ok && isfinite(crowd.closest_pair))
            ok &= add_number(c, "closest_pair", (double)crowd.closest_pair);
        else if (ok)
            ok &= cJSON_AddNullToObject(c, "closest_pair") != NULL;
    }
    shoal_nav_stats_t nav;
    if (ok && shoal_world_nav_goal_count(world) > 0 && shoal_world_nav_stats(world, -1, &nav) == SHOAL_OK) {
        cJSON* n = cJSON_AddObjectToObject(root, "nav");
        ok = n != NULL && add_number(n, "goals", shoal_world_nav_goal_count(world)) &&
             add_number(n, "agents", nav.agents) && add_number(n, "arrived", nav.arrived) &&
             add_number(n, "exited", (double)nav.exited) && add_number(n, "no_way", nav.no_way) &&
             add_number(n, "off_grid", nav.off_grid) && add_number(n, "in_walls", nav.in_walls) &&
             add_number(n, "mean_remaining", nav.mean_remaining);
    }
    shoal_navmesh_stats_t mesh;
    if (ok && shoal_world_navmesh_stats(world, &mesh) == SHOAL_OK && mesh.agents > 0) {
        cJSON* m = cJSON_AddObjectToObject(root, "navmesh");
        ok = m != NULL && add_number(m, "agents", mesh.agents) && add_number(m, "arrived", mesh.arrived) &&
             add_number(m, "no_way", mesh.no_way) && add_number(m, "off_mesh", mesh.off_mesh) &&
             add_number(m, "waiting", mesh.waiting) && add_number(m, "polygons", mesh.polygons) &&
             add_number(m, "replans", mesh.replans) && add_number(m, "pending", mesh.pending);
    }
    ok = ok && run_measure_json(world, root);
    cJSON* systems = ok ? systems_json(world, result) : NULL;
    if (systems != NULL && !cJSON_AddItemToObject(root, "systems", systems)) {
        cJSON_Delete(systems);
        systems = NULL;
    }
    if (!ok || systems == NULL) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static int print_json(const shoal_scenario_t* scenario, const shoal_world_t* world, const char* path,
                      int32_t agents, float dt, const run_result_t* result)
{
    cJSON* root = run_result_json(scenario, world, path, agents, dt, result);
    char* text = root != NULL ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL) {
        cli_error("out of memory while writing JSON");
        return 1;
    }
    puts(text);
    cJSON_free(text);
    return 0;
}

/* The scenario file's text, for the recording's header; NULL if it cannot
 * be read again (the recording then goes without it). */
static char* read_scenario_text(const char* path)
{
    /* io/file_read.h: a regular file, bounded, opened without blocking. */
    void* text = NULL;
    size_t size = 0;
    if (file_read_all(path, (uint64_t)64 << 20, &text, &size, NULL, 0) != FILE_READ_OK) return NULL;
    if (memchr(text, '\0', size) != NULL) {
        free(text);
        return NULL;
    }
    return (char*)text; /* NUL-terminated by file_read_all */
}

/* The scenario's group names, one per line (group label k is line k). */
static char* group_names(const shoal_scenario_t* scenario)
{
    int32_t count = shoal_scenario_group_count(scenario);
    size_t length = 1;
    for (int32_t i = 0; i < count; ++i) {
        length += strlen(shoal_scenario_group_name(scenario, i)) + 1;
    }
    char* names = malloc(length);
    if (names == NULL) {
        return NULL;
    }
    size_t at = 0;
    for (int32_t i = 0; i < count; ++i) {
        const char* name = shoal_scenario_group_name(scenario, i);
        size_t n = strlen(name);
        memcpy(names + at, name, n);
        at += n;
        if (i + 1 < count) {
            names[at++] = '\n';
        }
    }
    names[at] = '\0';
    return names;
}

/* Create the recording with the scenario in its header and write the
 * initial state as frame 0. On failure prints the error, returns nonzero. */
static int open_recording(const char* out, const char* path, const shoal_scenario_t* scenario,
                          const shoal_world_def_t* def, const shoal_world_t* world, int64_t steps, float dt,
                          run_recording_t* recording)
{
    shoal_recording_header_t header = shoal_recording_default_header();
    header.dimensions = shoal_world_dimensions(world);
    header.dt = dt;
    header.record_every = (int32_t)recording->every;
    header.steps_hint = (uint64_t)steps;
    header.wrap = def->wrap != 0;
    for (int k = 0; k < 3; ++k) {
        header.bounds_min[k] = def->bounds_min[k];
        header.bounds_max[k] = def->bounds_max[k];
    }
    header.scenario_name = shoal_scenario_name(scenario);
    recording->group_names = group_names(scenario);
    recording->scenario_text = read_scenario_text(path);
    header.group_names = recording->group_names;
    header.scenario_text = recording->scenario_text;
    recording->header = header;
    recording->base = out;
    recording->part = 1;
    if (recording->group_names == NULL) {
        cli_error("out of memory");
        return 1;
    }
    if (recording_part_path(out, 1, recording->path, sizeof recording->path) != 0) {
        cli_error("--record: the path is too long");
        return 1;
    }
    if (open_recording_part(recording) != 0) {
        return 1;
    }
    return record_frame(recording, world);
}

/* --record warns before the run when the recording's estimated size
 * reaches this. */
#define RECORD_WARN_BYTES ((double)(1u << 30))

/* Bytes per agent per frame that the estimate assumes (docs/recording.md):
 * in version 2 the exact size; in versions 3 and 4 a bound above what
 * compression gave on the shipped scenarios, so that the estimate errs
 * large. */
static double recording_agent_bytes(int32_t version, int32_t dims)
{
    if (version == 2) return dims == 2 ? 24.0 : 40.0;
    return dims == 2 ? RECORD_COMPRESSED_BYTES_2D : RECORD_COMPRESSED_BYTES_3D;
}

/* Frames a run of `steps` steps records: step 0, every K-th step and the
 * last. */
static double recording_frames(int64_t steps, int64_t every)
{
    return 1.0 + (double)(steps / every) + (steps % every != 0 ? 1.0 : 0.0);
}

static void format_bytes(char* out, size_t size, double bytes)
{
    if (bytes >= (double)(1u << 30)) {
        snprintf(out, size, "%.1f GiB", bytes / (double)(1u << 30));
    } else {
        snprintf(out, size, "%.0f MiB", bytes / (double)(1u << 20));
    }
}

/* A one-line warning on stderr when the recording to OUT is estimated at
 * RECORD_WARN_BYTES or more: agents (as populated; agents that spawn
 * later are not counted) x frames x bytes per agent, with the --record-every
 * that would bring it under. */
static void warn_huge_recording(const char* out, int32_t version, int32_t dims, int32_t agents, int64_t steps,
                                int64_t every)
{
    const double per_agent = recording_agent_bytes(version, dims);
    const double per_frame = 48.0 + (double)agents * per_agent;
    const double frames = recording_frames(steps, every);
    const double bytes = frames * per_frame;
    if (bytes < RECORD_WARN_BYTES) return;
    char size[32];
    format_bytes(size, sizeof size, bytes);
    /* A round K (1, 2 or 5 times a power of 10) that brings it under the
     * threshold: K grows until it does or covers the whole run. */
    int64_t suggest = every + 1;
    for (int64_t scale = 1; scale <= INT32_MAX / 10; scale *= 10) {
        const int64_t round[3] = {scale, 2 * scale, 5 * scale};
        int found = 0;
        for (int i = 0; i < 3 && !found; ++i) {
            suggest = round[i];
            found = suggest > every &&
                    (suggest >= steps || recording_frames(steps, suggest) * per_frame < RECORD_WARN_BYTES);
        }
        if (found) break;
    }
    double smaller = recording_frames(steps, suggest) * per_frame;
    char hint[160];
    if (smaller < RECORD_WARN_BYTES) {
        char small[32];
        format_bytes(small, sizeof small, smaller);
        snprintf(hint, sizeof hint, "--record-every %" PRId64 " would make it about %s", suggest, small);
    } else {
        snprintf(hint, sizeof hint, "even 2 frames are that large: record fewer agents");
    }
    fprintf(stderr,
            "shoal: warning: the recording %s may take up to about %s (%" PRId32
            " agents x %.0f frames x %.0f bytes per agent, format version %d); %s\n",
            out, size, agents, frames, per_agent, (int)version, hint);
}

/* Create the temporary recording of --export beside OUT (the same file
 * system, which the user chose to have room): OUT.recording.XXXXXX. On
 * failure prints the error, returns nonzero. */
static int make_export_recording(const char* out, char* tmp, size_t tmp_size)
{
    int n = snprintf(tmp, tmp_size, "%s.recording.XXXXXX", out);
    if (n < 0 || (size_t)n >= tmp_size) {
        tmp[0] = '\0';
        cli_error("export: %s: the path is too long", out);
        return 1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cli_error("export: cannot create the temporary recording %s: %s", tmp, strerror(errno));
        tmp[0] = '\0';
        return 1;
    }
    close(fd);
    return 0;
}

/* Report a scenario error so that it always names the file, whatever the
 * loader's message says; `looked`: the shipped scenarios were searched too,
 * in vain, which the message then says. */
static void scenario_error(const char* path, const shoal_error_t* err, shoal_status_t status, int looked)
{
    const char* message = err->message[0] != '\0' ? err->message : shoal_status_string(status);
    char where[2 * CLI_PATH_MAX + 128] = "";
    if (looked) {
        char dirs[2][CLI_PATH_MAX];
        int count = cli_data_dirs(dirs, 2);
        size_t at = (size_t)snprintf(where, sizeof where, " (not in the current directory");
        for (int i = 0; i < count && at < sizeof where; ++i)
            at += (size_t)snprintf(where + at, sizeof where - at, "%s%s/" RUN_SCENARIO_DIR,
                                   i == 0 ? ", nor in " : " or ", dirs[i]);
        if (at < sizeof where)
            at += (size_t)snprintf(where + at, sizeof where - at, "%s)",
                                   count == 0 ? "; the scenarios shipped with shoal were not found" : "");
        /* The shipped scenario whose name is closest to the one asked. */
        if (count > 0 && at < sizeof where) {
            char dir[CLI_PATH_MAX + 16];
            snprintf(dir, sizeof dir, "%s/" RUN_SCENARIO_DIR, dirs[0]);
            DIR* d = opendir(dir);
            const char* base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
            char names[64][64];
            const char* list[64];
            int n = 0;
            for (struct dirent* e; d != NULL && n < 64 && (e = readdir(d)) != NULL;) {
                size_t len = strlen(e->d_name);
                if (len < 6 || len >= 64 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
                snprintf(names[n], sizeof names[n], "%s", e->d_name);
                list[n] = names[n];
                n += 1;
            }
            if (d != NULL) closedir(d);
            const char* close = cli_closest(base, list, n);
            if (close != NULL) snprintf(where + at, sizeof where - at, "; did you mean '%s'?", close);
        }
    }
    if (strstr(message, path) != NULL) {
        cli_error("%s%s", message, where);
    } else {
        cli_error("%s: %s%s", path, message, where);
    }
}

/* A snapshot given to --resume against the scenario that names the run.
 * Other dimensions make the scenario's dt, steps and name describe another
 * world: an error. Another agent count may be meant (a world saved by a
 * host that added or removed agents) but often is the wrong file: a
 * warning. (A snapshot carries no scenario name to compare.) */
static int check_resume(const char* snapshot, const char* path, const shoal_scenario_t* scenario,
                        const shoal_world_t* world)
{
    int32_t dims = shoal_world_dimensions(world);
    shoal_world_def_t def = shoal_scenario_world_def(scenario);
    if (dims != def.dimensions) {
        cli_error("cannot resume: %s holds a %dD world, the scenario %s is %dD", snapshot, (int)dims, path,
                  (int)def.dimensions);
        return 1;
    }
    int32_t have = shoal_world_agent_count(world), want = shoal_scenario_agent_count(scenario);
    if (have != want) {
        fprintf(stderr,
                "shoal: warning: %s holds %" PRId32 " agents, the scenario %s has %" PRId32
                "; running the snapshot's world (is it from this scenario?)\n",
                snapshot, have, path, want);
    }
    return 0;
}

int cmd_run(int argc, char** argv)
{
    run_options_t opt = {.steps = -1, .threads = -1}; /* designated: the other fields start at zero */
    int stop = parse_options(argc, argv, &opt);
    if (stop >= 0) {
        return stop;
    }
    char found[CLI_PATH_MAX];
    int looked = 0;
    const char* path = scenario_path(opt.path, found, sizeof found, &looked);

    shoal_error_t err = {SHOAL_OK, ""};
    shoal_scenario_t* scenario = NULL;
    shoal_status_t status = shoal_scenario_load_file(path, &scenario, &err);
    if (status != SHOAL_OK) {
        scenario_error(path, &err, status, looked && status == SHOAL_ERR_IO);
        return CLI_EXIT_FAILURE;
    }
    if (opt.has_seed) {
        shoal_scenario_set_seed(scenario, opt.seed);
    }

    int exit_code = CLI_EXIT_FAILURE;
    shoal_world_t* world = NULL;
    run_recording_t recording = {.recorder = NULL, .every = 1, .version = SHOAL_RECORDING_DEFAULT_VERSION};
    run_collect_t collect;
    memset(&collect, 0, sizeof collect);
    char export_recording[4096] = ""; /* the temporary recording of --export */
    shoal_world_def_t def = shoal_scenario_world_def(scenario);
    if (opt.threads >= 0) {
        def.thread_count = opt.threads;
    }
    err = (shoal_error_t){SHOAL_OK, ""};
    if (opt.resume != NULL) {
        /* The snapshot's world replaces the scenario's population; the
         * scenario still gives dt and the step budget. */
        status = shoal_world_load_snapshot(opt.resume, &def, &world, &err);
        if (status != SHOAL_OK) {
            cli_error("cannot resume: %s",
                      err.message[0] != '\0' ? err.message : shoal_status_string(status));
            goto done;
        }
        if (check_resume(opt.resume, path, scenario, world) != 0) goto done;
        /* Measurements are not saved: the scenario's start again here. */
        if (shoal_scenario_add_measures(scenario, world) != SHOAL_OK) {
            cli_error("%s: cannot add the measurements: %s", path, shoal_world_last_error(world));
            goto done;
        }
    } else {
        status = shoal_world_create(&def, &world, &err);
        if (status != SHOAL_OK) {
            cli_error("cannot create the world: %s",
                      err.message[0] != '\0' ? err.message : shoal_status_string(status));
            goto done;
        }
        if (shoal_scenario_populate(scenario, world) != SHOAL_OK) {
            cli_error("%s: cannot populate the world: %s", path, shoal_world_last_error(world));
            goto done;
        }
    }
    shoal_world_reset_stats(world);

    int64_t steps = opt.steps >= 0 ? opt.steps : (int64_t)shoal_scenario_steps(scenario);
    if (opt.resume != NULL && opt.steps < 0) {
        uint64_t done_steps = shoal_world_step_count(world);
        steps = done_steps < (uint64_t)steps ? steps - (int64_t)done_steps : 0;
    }
    float dt = shoal_scenario_dt(scenario);
    int32_t agents = shoal_world_agent_count(world);
    int show_progress = !opt.json && !opt.quiet && isatty(STDERR_FILENO);
    run_result_t result = {0, 0.0, 0, 0};
    /* From here a signal ends the run after its step (before the files are
     * opened: one that came earlier kills, and leaves nothing behind). */
    run_signal = 0;
    catch_run_signals();
    recording.every = opt.record_every > 0 ? opt.record_every : 1;
    recording.max_bytes =
        opt.record_max != NULL ? parse_record_max(opt.record_max) : SHOAL_RECORDING_MAX_FILE;
    /* An --export reads its recording as one file: that one does not split. */
    recording.split = opt.record != NULL && opt.export_path == NULL;
    /* A world with navigation goals records their fields (version 5);
     * without, the file is version 4, as before version 5 existed. */
    if (shoal_world_nav_goal_count(world) > 0) recording.version = SHOAL_RECORDING_VERSION;
    if (opt.record_version > 0) recording.version = opt.record_version;
    if (opt.export_path != NULL) {
        /* Before the run, what can be known: a long run must not fail at
         * its end over a file that exists or a 3D world for SQLite. */
        export_format_t format = export_format_of(opt.export_path);
        int code = cli_export_check(format, opt.export_path, opt.force);
        if (code != CLI_EXIT_OK) {
            exit_code = code;
            goto done;
        }
        char why[600];
        if (export_check_dimensions(format, shoal_world_dimensions(world), why, sizeof why) != 0) {
            cli_error("export: %s: %s", opt.export_path, why);
            goto done;
        }
        if (opt.record == NULL &&
            make_export_recording(opt.export_path, export_recording, sizeof export_recording) != 0) {
            goto done;
        }
    }
    const char* record_path = opt.record != NULL            ? opt.record
                              : export_recording[0] != '\0' ? export_recording
                                                            : NULL;
    if (opt.record != NULL) {
        warn_huge_recording(opt.record, recording.version, shoal_world_dimensions(world), agents, steps,
                            recording.every);
    }
    if (record_path != NULL &&
        open_recording(record_path, path, scenario, &def, world, steps, dt, &recording) != 0) {
        goto done;
    }
    int32_t trace_limit = 0; /* events per buffer the growth stops at; 0: fixed */
    if (opt.trace != NULL) {
        int64_t per_buffer = opt.trace_capacity;
        if (per_buffer == 0) {
            trace_limit = TRACE_TOTAL_EVENTS / (shoal_world_thread_count(world) + 1);
            /* (steps + 1) * 128 overflowed int64 (undefined behavior) for
             * --steps near 2^63: compare steps with the first size first. */
            per_buffer = steps < TRACE_FIRST_EVENTS / TRACE_EVENTS_PER_STEP
                             ? (steps + 1) * TRACE_EVENTS_PER_STEP
                             : TRACE_FIRST_EVENTS;
            per_buffer = per_buffer > TRACE_MIN_EVENTS ? per_buffer : TRACE_MIN_EVENTS;
            per_buffer = per_buffer < trace_limit ? per_buffer : trace_limit;
        }
        if (shoal_world_set_trace_limit(world, trace_limit) != SHOAL_OK ||
            shoal_world_set_trace(world, (int32_t)per_buffer) != SHOAL_OK) {
            cli_error("cannot trace: %s", shoal_world_last_error(world));
            goto done;
        }
    }
    if (opt.collect != NULL) {
        const shoal_scenario_collect_t spec = shoal_scenario_collect(scenario);
        char why[300];
        if (run_collect_init(&collect, &spec, world, why, sizeof why) != 0 ||
            (run_collect_sample(&collect, world) != 0 && snprintf(why, sizeof why, "out of memory") > 0)) {
            cli_error("--collect %s: %s", opt.collect, why);
            goto done;
        }
    }
    if (step_world(world, steps, dt, show_progress, &recording, opt.collect != NULL ? &collect : NULL,
                   &result) != 0) {
        goto done;
    }
    /* Closed here, not at `done`, so that a failure to finish the file is
     * reported and fails the run. */
    if (recording.recorder != NULL && close_recording_part(&recording) != 0) {
        goto done;
    }
    const int64_t frames = recording.frames;
    export_summary_t exported = {0};
    if (opt.export_path != NULL) {
        int code = cli_export_recording(record_path, export_format_of(opt.export_path), opt.export_path,
                                        opt.force, &exported);
        if (code != CLI_EXIT_OK) {
            exit_code = code;
            goto done;
        }
    }

    if (opt.save != NULL && shoal_world_save_snapshot(world, opt.save) != SHOAL_OK) {
        cli_error("cannot save the snapshot: %s", shoal_world_last_error(world));
        goto done;
    }
    if (opt.trace != NULL) {
        if (shoal_world_write_trace(world, opt.trace, shoal_scenario_name(scenario)) != SHOAL_OK) {
            cli_error("cannot write the trace '%s': %s", opt.trace, shoal_world_last_error(world));
            goto done;
        }
        uint64_t dropped = shoal_world_trace_dropped(world);
        int32_t buffers = shoal_world_thread_count(world) + 1;
        if (dropped > 0 && trace_limit > 0) {
            fprintf(stderr,
                    "shoal: warning: the trace buffers reached their limit of %" PRId32
                    " events each (%" PRId32 " buffers, %d MiB in all): %" PRIu64
                    " events dropped, the last steps' spans are missing; trace fewer steps, or "
                    "give --trace-capacity N for larger buffers\n",
                    trace_limit, buffers, (TRACE_TOTAL_EVENTS / (1 << 20)) * TRACE_EVENT_BYTES, dropped);
        } else if (dropped > 0) {
            fprintf(stderr,
                    "shoal: warning: trace buffers full (--trace-capacity %" PRId32 " events each, %" PRId32
                    " buffers): %" PRIu64 " events dropped, the last steps' spans are missing; give a larger "
                    "--trace-capacity, or leave it out for buffers that grow\n",
                    opt.trace_capacity, buffers, dropped);
        }
    }
    if (opt.collect != NULL) {
        char why[700];
        if (run_collect_csv(&collect, opt.collect, why, sizeof why) != 0) {
            cli_error("--collect %s: %s", opt.collect, why);
            goto done;
        }
    }
    if (opt.measure_csv != NULL) {
        char why[600];
        if (run_measure_csv(world, opt.measure_csv, why, sizeof why) != 0) {
            cli_error("--measure-csv %s: %s", opt.measure_csv, why);
            goto done;
        }
    }
    if (opt.json) {
        if (print_json(scenario, world, path, agents, dt, &result) != 0) {
            goto done;
        }
    } else {
        print_text(scenario, world, agents, dt, &result, opt.stats);
        if (opt.record != NULL) {
            /* The seconds spent writing frames (compressing, in version
             * 3), which the throughput above leaves out. */
            if (recording.part > 1)
                printf("\nrecording        %s .. %s (%d files of at most %" PRIu64 " bytes, %" PRId64
                       " frames) in format version %d, %.2f s writing\n",
                       opt.record, recording.path, (int)recording.part, recording.max_bytes, frames,
                       (int)recording.version, recording.seconds);
            else
                printf("\nrecording        %s (%" PRId64 " frames) in format version %d, %.2f s "
                       "writing\n",
                       opt.record, frames, (int)recording.version, recording.seconds);
        }
        if (opt.trace != NULL) {
            printf("%strace            %s (%" PRId32 " events)\n", opt.record != NULL ? "" : "\n", opt.trace,
                   shoal_world_trace_count(world));
        }
        if (opt.resume != NULL) {
            printf("%sresumed from     %s\n", opt.record != NULL || opt.trace != NULL ? "" : "\n",
                   opt.resume);
        }
        if (opt.save != NULL) {
            printf("%ssnapshot         %s (step %" PRIu64 ")\n",
                   opt.record != NULL || opt.trace != NULL || opt.resume != NULL ? "" : "\n", opt.save,
                   shoal_world_step_count(world));
        }
        if (opt.export_path != NULL) {
            printf("%s", opt.record != NULL || opt.trace != NULL || opt.resume != NULL || opt.save != NULL
                             ? ""
                             : "\n");
            export_print_summary(export_format_of(opt.export_path), opt.export_path, &exported);
        }
    }
    /* A full disk or closed pipe must not look like success to a script. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("cannot write the output");
        goto done;
    }
    /* As a shell reports a process a signal ended: 128 + the signal. */
    exit_code = result.interrupted_by != 0 ? 128 + result.interrupted_by : CLI_EXIT_OK;

done:
    /* After a failure the frames so far are kept, closed as a whole file. */
    shoal_recording_close(recording.recorder, NULL);
    free(recording.group_names);
    free(recording.scenario_text);
    run_collect_free(&collect);
    if (export_recording[0] != '\0') unlink(export_recording);
    shoal_world_destroy(world);
    shoal_scenario_destroy(scenario);
    return exit_code;
}
