/* `shoal view`: turn a recording into one HTML page that plays it.
 *
 * Decisions worth knowing:
 * - The page is tools/viewer/viewer.html, compiled into the binary
 *   (tools/viewer/embed.cmake), with the recording inside as base64. One
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
 *   decodes, written again in the uncompressed layout the page parses
 *   (tools/view_stream.h): so the page plays any version the library reads,
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

#include "cli.h"
#include "view_stream.h"
#include "io/atomic_file.h"
#include "cli_options.h"

extern char** environ;

/* The page, from the generated viewer_html.c. */
extern const unsigned char viewer_html[];
extern const size_t viewer_html_size;

/* Where the recording goes: this exact tag, empty, is in viewer.html. */
#define VIEW_SLOT "<script type=\"application/octet-stream\" id=\"recording\"></script>"
/* Past this a browser takes long to decode the page; say so. */
#define VIEW_LARGE_BYTES ((uint64_t)256 << 20)
/* Without --every or --max-agents, a page that would be larger than this
 * is thinned to fit: every N-th frame, and where that would leave fewer
 * than VIEW_AUTO_FRAMES frames, fewer agents too (never fewer than
 * VIEW_AUTO_AGENTS a frame). The default plaza's page (2,001 frames of
 * 1,600 agents, 104 MB) opened in about 4 s in headless Chromium on a
 * 2-core VM. */
#define VIEW_AUTO_BYTES ((uint64_t)128 << 20)
#define VIEW_AUTO_FRAMES 200
#define VIEW_AUTO_AGENTS 5000
#define VIEW_LINE 76 /* base64 characters per line */

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
             "Keys: space, left/right, t (trails), v (2D/3D), c (colors), f (follow), Esc.\n",
    .options = view_options,
    .option_count = CLI_COUNT(view_options),
    .details = "The recording is checked first (docs/recording.md): a damaged one is an error;\n"
               "one cut short (a run that crashed) gives a warning and a page of its complete\n"
               "frames. The page gets the frames re-encoded, so it plays every version the\n"
               "library reads. A recording whose page would pass 128 MiB is thinned when\n"
               "neither --every nor --max-agents is given: every N-th frame, and fewer agents\n"
               "where that would leave under 200 frames; shoal view says so and so does the\n"
               "page. --every 1 puts every frame and agent in the page. The viewer itself is\n"
               "tools/viewer/viewer.html; it also opens recordings from a file picker.\n",
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

/* Base64 written as the stream comes, in lines of VIEW_LINE characters. */
typedef struct base64_t {
    FILE* out;
    uint8_t carry[3];
    int carried;
    char line[VIEW_LINE + 1];
    size_t used;
} base64_t;

static const char base64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int base64_flush_line(base64_t* b)
{
    b->line[b->used++] = '\n';
    size_t n = b->used;
    b->used = 0;
    return fwrite(b->line, 1, n, b->out) == n ? 0 : 1;
}

static int base64_triple(base64_t* b, const uint8_t* p, int n)
{
    uint32_t v = (uint32_t)p[0] << 16 | (n > 1 ? (uint32_t)p[1] << 8 : 0) | (n > 2 ? p[2] : 0);
    b->line[b->used++] = base64_digits[(v >> 18) & 63];
    b->line[b->used++] = base64_digits[(v >> 12) & 63];
    b->line[b->used++] = n > 1 ? base64_digits[(v >> 6) & 63] : '=';
    b->line[b->used++] = n > 2 ? base64_digits[v & 63] : '=';
    return b->used == VIEW_LINE ? base64_flush_line(b) : 0;
}

/* view_sink_fn: 0, or 1 once a write failed. */
static int base64_sink(void* context, const uint8_t* bytes, size_t size)
{
    base64_t* b = context;
    size_t i = 0;
    while (b->carried > 0 && b->carried < 3 && i < size) b->carry[b->carried++] = bytes[i++];
    if (b->carried == 3) {
        b->carried = 0;
        if (base64_triple(b, b->carry, 3) != 0) return 1;
    }
    for (; i + 3 <= size; i += 3)
        if (base64_triple(b, bytes + i, 3) != 0) return 1;
    while (i < size) b->carry[b->carried++] = bytes[i++];
    return 0;
}

static int base64_finish(base64_t* b)
{
    if (b->carried > 0 && base64_triple(b, b->carry, b->carried) != 0) return 1;
    b->carried = 0;
    return b->used > 0 ? base64_flush_line(b) : 0;
}

/* Bytes of a page that carries a stream of `stream` bytes. */
static uint64_t page_bytes(uint64_t stream)
{
    uint64_t digits = (stream + 2) / 3 * 4;
    return viewer_html_size + digits + (digits + VIEW_LINE - 1) / VIEW_LINE + 256;
}

/* Text HTML-escaped for an attribute. */
static void write_escaped(FILE* out, const char* text)
{
    for (const char* c = text; *c != '\0'; ++c) {
        switch (*c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*c, out);
        }
    }
}

/* What the page says about itself, on top of the recording. */
typedef struct view_page_t {
    const char* input;   /* its file name goes in data-name */
    const char* shown;   /* data-shown: what of the recording it holds ("" for all of it) */
    const char* note;    /* data-note: why (shoal view chose it), or "" */
    const char* warning; /* data-warning: the reader's damage message, or "" */
    int32_t version;     /* data-version: the source file's format version */
} view_page_t;

static void write_attribute(FILE* out, const char* name, const char* value)
{
    if (value[0] == '\0') return;
    fprintf(out, " %s=\"", name);
    write_escaped(out, value);
    fputc('"', out);
}

/* Write the page with the (thinned) recording in its slot to `path`, through
 * a temporary file renamed over it. On failure prints the error, returns 1. */
static int write_page(const char* path, const view_page_t* about, shoal_recording_reader_t* recording,
                      view_thinning_t thin)
{
    const char* page = (const char*)viewer_html;
    const char* slot = strstr(page, VIEW_SLOT);
    if (slot == NULL) {
        cli_error("the viewer page has no recording slot (a broken build?)");
        return 1;
    }
    char why[480];
    atomic_file_t file; /* io/atomic_file.h: the one output rule */
    if (atomic_file_open(&file, path, why, sizeof why) != 0) {
        cli_error("%s", why);
        return 1;
    }
    FILE* out = file.f;
    /* Everything up to the slot's closing ">", the attributes and the data,
     * then the rest of the page from "</script>" on. */
    size_t head = (size_t)(slot - page) + strlen(VIEW_SLOT) - strlen("></script>");
    const char* tail = slot + strlen(VIEW_SLOT) - strlen("</script>");
    int ok = fwrite(page, 1, head, out) == head;
    if (ok) {
        const char* slash = strrchr(about->input, '/');
        write_attribute(out, "data-name", slash != NULL ? slash + 1 : about->input);
        write_attribute(out, "data-shown", about->shown);
        write_attribute(out, "data-note", about->note);
        write_attribute(out, "data-warning", about->warning);
        fprintf(out, " data-version=\"%d\">\n", (int)about->version);
        base64_t b64 = {.out = out};
        shoal_error_t err = {SHOAL_OK, ""};
        int rc = view_stream_write(recording, thin, base64_sink, &b64, &err);
        if (rc < 0) {
            if (rc == -2)
                cli_error("%s; %s not written", err.message, path);
            else
                cli_error("out of memory writing %s", path);
            atomic_file_discard(&file);
            return 1;
        }
        ok = rc == 0 && base64_finish(&b64) == 0;
    }
    if (ok) {
        size_t rest = viewer_html_size - (size_t)(tail - page);
        ok = fwrite(tail, 1, rest, out) == rest;
    }
    /* A failed write set the stream's error flag (ok only skips the writes
     * after it): the commit then fails with its reason, removes the
     * temporary file and leaves OUT as it was. */
    (void)ok;
    if (atomic_file_commit(&file, why, sizeof why) != 0) {
        cli_error("%s", why);
        return 1;
    }
    return 0;
}

/* 1234567 as "1,234,567". */
static const char* grouped(int64_t v, char* text, size_t size)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", (long long)(v < 0 ? -v : v));
    size_t n = strlen(digits), at = 0;
    if (v < 0 && at + 1 < size) text[at++] = '-';
    for (size_t i = 0; i < n && at + 2 < size; ++i) {
        if (i > 0 && (n - i) % 3 == 0) text[at++] = ',';
        text[at++] = digits[i];
    }
    text[at] = '\0';
    return text;
}

static const char* ordinal_suffix(int32_t n)
{
    if (n % 100 >= 11 && n % 100 <= 13) return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* "every 4th frame (1,876 of 7,501), 10,000 of 50,000 agents", or "" when
 * the thinning keeps everything. */
static void describe(const shoal_recording_reader_t* rec, view_thinning_t thin, char* text, size_t size)
{
    int32_t frames = shoal_recording_reader_frame_count(rec), largest = view_largest_frame(rec);
    int32_t kept = view_frames_kept(frames, thin.every);
    int fewer_agents = thin.max_agents > 0 && thin.max_agents < largest;
    text[0] = '\0';
    if (kept == frames && !fewer_agents) return;
    char a[32], b[32], part[160];
    if (kept < frames)
        snprintf(part, sizeof part, "every %d%s frame (%s of %s)", (int)thin.every,
                 ordinal_suffix(thin.every), grouped(kept, a, sizeof a), grouped(frames, b, sizeof b));
    else
        snprintf(part, sizeof part, "all %s frames", grouped(frames, a, sizeof a));
    if (fewer_agents)
        snprintf(text, size, "%s, %s of %s agents", part, grouped(thin.max_agents, a, sizeof a),
                 grouped(largest, b, sizeof b));
    else
        snprintf(text, size, "%s, all %s agents", part, grouped(largest, a, sizeof a));
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
    view_thinning_t thin = {opt.every > 0 ? opt.every : 1, opt.max_agents};
    char shown[256], note[256] = "", a[32], b[32];
    uint64_t whole = page_bytes(view_stream_size(recording, (view_thinning_t){1, 0}));
    int automatic = opt.every == 0 && opt.max_agents == 0 && whole > VIEW_AUTO_BYTES;
    if (automatic) {
        /* The most stream bytes for which page_bytes() stays within the limit. */
        uint64_t room = (VIEW_AUTO_BYTES - viewer_html_size - 256) / (VIEW_LINE + 1) * VIEW_LINE / 4 * 3;
        thin = view_choose_thinning(recording, room, VIEW_AUTO_FRAMES, VIEW_AUTO_AGENTS);
    }
    describe(recording, thin, shown, sizeof shown);
    uint64_t bytes = page_bytes(view_stream_size(recording, thin));
    if (automatic) {
        snprintf(note, sizeof note,
                 "thinned by shoal view: all of it would make a %s MiB page (--every 1 puts it all in)",
                 grouped((int64_t)(whole >> 20), a, sizeof a));
        cli_error("note: the whole recording makes a %s MiB page: this one has %s (about %s MiB); "
                  "--every 1 puts all of it in, --every and --max-agents choose",
                  grouped((int64_t)(whole >> 20), a, sizeof a), shown,
                  grouped((int64_t)(bytes >> 20), b, sizeof b));
    } else if (bytes > VIEW_LARGE_BYTES) {
        cli_error("warning: a %s MiB page is slow to open; put fewer frames or agents in it "
                  "(--every N, --max-agents M) or record fewer (shoal run --record-every K)",
                  grouped((int64_t)(bytes >> 20), a, sizeof a));
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
                         .shown = shown,
                         .note = note,
                         .warning = damage,
                         .version = shoal_recording_reader_version(recording)};
    int exit_code = CLI_EXIT_FAILURE;
    if (write_page(path, &about, recording, thin) == 0) {
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
