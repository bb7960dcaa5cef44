/* `shoal view`: turn a recording into one HTML page that plays it.
 *
 * Decisions worth knowing:
 * - The page is cli/viewer/viewer.html, compiled into the binary
 *   (cli/viewer/embed.cmake), with the recording inside as base64. One
 *   file, no server, no network: it opens from file:// in any browser, can
 *   be mailed or attached to a bug, and an installed `shoal` needs no data
 *   files next to it.
 * - The recording is read with the library's frame reader, so a damaged file
 *   fails here with the reader's message (file, frame, byte offset) rather
 *   than as a blank page; frame by frame, so a recording of any length or
 *   compression ratio takes the memory of a few frames, not of all of them
 *   decoded (a still crowd compresses a thousandfold). A recording cut short (a crashed run) is still
 *   made into a page, with a warning: its complete frames are worth seeing,
 *   which is the point of writing frames as the run goes.
 * - What the page gets is not the file's bytes but the frames the reader
 *   decodes, written again in a layout the page parses (cli/viewer/view_stream.h:
 *   compressed, versions 3 and 4, where the page has fzstd; else
 *   uncompressed): so the page plays any version the library reads,
 *   and big recordings are thinned on the way (--every, --max-agents; chosen
 *   automatically past VIEW_AUTO_BYTES), the page saying what it shows.
 * - The page is written beside OUT and renamed over it, so OUT is never
 *   left half written; a device is written through and a symlink or
 *   directory refused (io/atomic_file.h, the rule of every output). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shoal/recording.h"

#include "cli/cli.h"
#include "cli/viewer/view_page.h"
#include "cli/viewer/view_stream.h"
#include "io/atomic_file.h"
#include "cli/cli_options.h"

extern char** environ;

typedef struct view_options_t {
    const char* input;
    const char* output; /* NULL: input + ".html" */
    int open;
    int32_t every;      /* 0: not given */
    int32_t max_agents; /* 0: not given */
} view_options_t;

static const cli_option_t view_options[] = {
    {.name = "--output",
     .alias = "-o",
     .metavar = "OUT",
     .kind = CLI_STRING,
     CLI_AT(view_options_t, output),
     .help = "the page to write. Default: FILE.html."},
    {.name = "--open",
     .kind = CLI_FLAG,
     CLI_AT(view_options_t, open),
     .help = "also open the page in the default browser (xdg-open)."},
    {.name = "--every",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(view_options_t, every),
     .min = 1,
     .max = INT32_MAX,
     .help = "put every N-th frame of the recording in the page (frames 0, N, 2N, ... and the last). "
             "Default: 1, or what keeps the page under 128 MiB when neither --every nor --max-agents "
             "is given (see below)."},
    {.name = "--max-agents",
     .metavar = "M",
     .kind = CLI_INT,
     CLI_AT(view_options_t, max_agents),
     .min = 1,
     .max = INT32_MAX,
     .help = "put at most M agents of each frame in the page: a sample of the crowd that does not depend "
             "on where agents are, the same agents in every frame. Default: all (see below)."},
};

static const cli_spec_t view_spec = {
    .command = "view",
    .usage = "FILE [options]",
    .about = "Write one self-contained HTML page that plays the recording FILE (made by\n"
             "'shoal run --record FILE'), and print its path. The page needs no network and\n"
             "no server: open it in a browser. It shows a 2D top view and a 3D orbit view\n"
             "(drag to rotate, shift-drag to pan, wheel to zoom), with play/pause, a frame\n"
             "slider, speed, trails and colors by group, speed or heading; click an agent to\n"
             "see its id, group, position, heading and speed, and to follow it (Esc stops).\n"
             "A recording with navigation fields (format version 5) shows the selected goal's\n"
             "field under the agents in the 2D view, with arrows down it.\n"
             "Keys: space, left/right, t (trails), v (2D/3D), c (colors), f (follow), n (field), Esc.\n",
    .options = view_options,
    .option_count = CLI_COUNT(view_options),
    .details = "The recording is checked first (docs/recording.md): a damaged one is an error;\n"
               "one cut short (a run that crashed) gives a warning and a page of its complete\n"
               "frames. The page gets the frames re-encoded, so it plays every version the\n"
               "library reads. A recording whose page would pass 128 MiB is thinned when\n"
               "neither --every nor --max-agents is given: every N-th frame, and fewer agents\n"
               "where that would leave under 200 frames; shoal view says so and so does the\n"
               "page. --every 1 puts every frame and agent in the page. The viewer itself is\n"
               "cli/viewer/viewer.html; it also opens recordings from a file picker.\n",
    .max_positional = 1,
    .positional = "recording",
};

/* Returns -1 to go on, or the exit code to stop with (help, usage error). */
static int parse_options(int argc, char** argv, view_options_t* opt)
{
    int stop = cli_parse(&view_spec, argc, argv, opt, &opt->input, NULL);
    if (stop >= 0) return stop;
    if (opt->input == NULL) {
        return cli_usage_error(view_spec.command, "which recording? (shoal view FILE)");
    }
    return -1;
}

/* Hand the page to the desktop's browser; returns the exit code. */
static int open_page(const char* path)
{
    char* args[] = {"xdg-open", (char*)path, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "xdg-open", NULL, NULL, args, environ);
    if (rc != 0) {
        cli_error("cannot run xdg-open (%s): open %s in a browser", strerror(rc), path);
        return CLI_EXIT_FAILURE;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cli_error("xdg-open failed: open %s in a browser", path);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

int cmd_view(int argc, char** argv)
{
    view_options_t opt = {};
    int stop = parse_options(argc, argv, &opt);
    if (stop >= 0) {
        return stop;
    }
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_recording_reader_t* recording = NULL;
    shoal_status_t status =
        shoal_recording_reader_open(opt.input, SHOAL_RECORDING_ALLOW_TRUNCATED, &recording, &err);
    if (status != SHOAL_OK) {
        cli_error("%s", err.message[0] != '\0' ? err.message : shoal_status_string(status));
        return CLI_EXIT_FAILURE;
    }
    const char* damage = shoal_recording_reader_damage(recording);
    if (damage[0] != '\0') {
        cli_error("warning: %s; the page shows the %d complete frames", damage,
                  (int)shoal_recording_reader_frame_count(recording));
    }
    if (shoal_recording_reader_frame_count(recording) == 0) {
        cli_error("warning: %s has no frames: the page will show nothing", opt.input);
    }

    /* What goes in the page. */
    view_page_plan_t plan;
    view_page_plan(recording, opt.every, opt.max_agents, &plan);
    char a[32], b[32];
    if (plan.automatic) {
        cli_error("note: the whole recording makes a %s MiB page: this one has %s (about %s MiB); "
                  "--every 1 puts all of it in, --every and --max-agents choose",
                  view_grouped((int64_t)(plan.whole_bytes >> 20), a, sizeof a), plan.shown,
                  view_grouped((int64_t)(plan.bytes >> 20), b, sizeof b));
    } else if (plan.bytes > VIEW_LARGE_BYTES) {
        cli_error("warning: a %s MiB page is slow to open; put fewer frames or agents in it "
                  "(--every N, --max-agents M) or record fewer (shoal run --record-every K)",
                  view_grouped((int64_t)(plan.bytes >> 20), a, sizeof a));
    }

    char* output = NULL;
    if (opt.output == NULL) {
        size_t length = strlen(opt.input) + sizeof ".html";
        output = malloc(length);
        if (output == NULL) {
            cli_error("out of memory");
            shoal_recording_reader_close(recording);
            return CLI_EXIT_FAILURE;
        }
        snprintf(output, length, "%s.html", opt.input);
    }
    const char* path = opt.output != NULL ? opt.output : output;
    view_page_t about = {.input = opt.input,
                         .shown = plan.shown,
                         .note = plan.note,
                         .warning = damage,
                         .version = shoal_recording_reader_version(recording)};
    int exit_code = CLI_EXIT_FAILURE;
    char why[600];
    if (view_page_write(path, &about, recording, plan.thin, why, sizeof why) != 0) {
        cli_error("%s", why);
    } else {
        printf("%s\n", path);
        exit_code = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
        if (exit_code == CLI_EXIT_OK && opt.open) {
            exit_code = open_page(path);
        }
    }
    free(output);
    shoal_recording_reader_close(recording);
    return exit_code;
}
