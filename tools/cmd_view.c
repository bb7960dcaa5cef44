/* `shoal view`: turn a recording into one HTML page that plays it.
 *
 * Decisions worth knowing:
 * - The page is tools/viewer/viewer.html, compiled into the binary
 *   (tools/viewer/embed.cmake), with the recording inside as base64. One
 *   file, no server, no network: it opens from file:// in any browser, can
 *   be mailed or attached to a bug, and an installed `shoal` needs no data
 *   files next to it.
 * - The recording is checked with the library's reader first, so a damaged
 *   file fails here with the reader's message (file, frame, byte offset)
 *   rather than as a blank page. A recording cut short (a crashed run) is
 *   still made into a page, with a warning: its complete frames are worth
 *   seeing, which is the point of writing frames as the run goes.
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
#include "io/atomic_file.h"
#include "io/file_read.h"
#include "cli_options.h"

extern char** environ;

/* The page, from the generated viewer_html.c. */
extern const unsigned char viewer_html[];
extern const size_t viewer_html_size;

/* Where the recording goes: this exact tag, empty, is in viewer.html. */
#define VIEW_SLOT "<script type=\"application/octet-stream\" id=\"recording\"></script>"
/* Past this a browser takes long to decode the page; say so. */
#define VIEW_LARGE_BYTES ((size_t)256 << 20)
#define VIEW_LINE 76 /* base64 characters per line */

typedef struct view_options_t {
    const char* input;
    const char* output; /* NULL: input + ".html" */
    int open;
} view_options_t;

static const cli_option_t view_options[] = {
    {"--output", "-o", "OUT", CLI_STRING, CLI_FIELD(view_options_t, output), 0, 0, 0, NULL,
     "the page to write. Default: FILE.html."},
    {"--open", NULL, NULL, CLI_FLAG, CLI_FIELD(view_options_t, open), 0, 0, 0, NULL,
     "also open the page in the default browser (xdg-open)."},
};

static const cli_spec_t view_spec = {
    .command = "view",
    .usage = "FILE [options]",
    .about = "Write one self-contained HTML page that plays the recording FILE (made by\n"
             "'shoal run --record FILE'), and print its path. The page needs no network and\n"
             "no server: open it in a browser. It shows a 2D top view and a 3D orbit view\n"
             "(drag to rotate, shift-drag to pan, wheel to zoom), with play/pause, a frame\n"
             "slider, speed, trails and colors by group or speed; click an agent to see its\n"
             "id, group, position, heading and speed. Keys: space, left/right, t, v.\n",
    .options = view_options,
    .option_count = CLI_COUNT(view_options),
    .details = "The recording is checked first (docs/recording.md): a damaged one is an error;\n"
               "one cut short (a run that crashed) gives a warning and a page of its complete\n"
               "frames. The viewer itself is tools/viewer/viewer.html; it also opens\n"
               "recordings from a file picker.\n",
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

/* The whole file, or NULL with the error printed: a regular file of at
 * most 4 GiB, opened without blocking (io/file_read.h; /dev/zero grew the
 * buffer until memory ran out, a FIFO without writer blocked). */
static unsigned char* read_file(const char* path, size_t* out_size)
{
    void* data = NULL;
    char why[256];
    if (file_read_all(path, FILE_LIMIT_RECORDING, &data, out_size, why, sizeof why) != FILE_READ_OK) {
        cli_error("recording %s: %s", path, why);
        return NULL;
    }
    return (unsigned char*)data;
}

static int write_base64(FILE* out, const unsigned char* data, size_t size)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char line[VIEW_LINE + 1];
    size_t used = 0;
    for (size_t i = 0; i < size; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < size) v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < size) v |= data[i + 2];
        line[used++] = digits[(v >> 18) & 63];
        line[used++] = digits[(v >> 12) & 63];
        line[used++] = i + 1 < size ? digits[(v >> 6) & 63] : '=';
        line[used++] = i + 2 < size ? digits[v & 63] : '=';
        if (used == VIEW_LINE || i + 3 >= size) {
            line[used++] = '\n';
            if (fwrite(line, 1, used, out) != used) {
                return 0;
            }
            used = 0;
        }
    }
    return 1;
}

/* The file's own name, HTML-escaped for an attribute. */
static void write_name(FILE* out, const char* path)
{
    const char* slash = strrchr(path, '/');
    for (const char* c = slash != NULL ? slash + 1 : path; *c != '\0'; ++c) {
        switch (*c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*c, out);
        }
    }
}

/* Write the page with the recording in its slot to `path`, through a
 * temporary file renamed over it. On failure prints the error, returns 1. */
static int write_page(const char* path, const char* input, const unsigned char* data, size_t size)
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
    /* Everything up to the slot's closing ">", the name and the data, then
     * the rest of the page from "</script>" on. */
    size_t head = (size_t)(slot - page) + strlen(VIEW_SLOT) - strlen("></script>");
    const char* tail = slot + strlen(VIEW_SLOT) - strlen("</script>");
    int ok = fwrite(page, 1, head, out) == head;
    if (ok) {
        fputs(" data-name=\"", out);
        write_name(out, input);
        fputs("\">\n", out);
        ok = write_base64(out, data, size);
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
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cli_error("xdg-open failed: open %s in a browser", path);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

int cmd_view(int argc, char** argv)
{
    view_options_t opt = {NULL, NULL, 0};
    int stop = parse_options(argc, argv, &opt);
    if (stop >= 0) {
        return stop;
    }
    size_t size = 0;
    unsigned char* data = read_file(opt.input, &size);
    if (data == NULL) {
        return CLI_EXIT_FAILURE;
    }
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_recording_t* recording = NULL;
    shoal_status_t status = shoal_recording_load_memory(
        data, size, opt.input, SHOAL_RECORDING_ALLOW_TRUNCATED, &recording, &err);
    if (status != SHOAL_OK) {
        cli_error("%s", err.message[0] != '\0' ? err.message : shoal_status_string(status));
        free(data);
        return CLI_EXIT_FAILURE;
    }
    if (shoal_recording_damage(recording)[0] != '\0') {
        cli_error("warning: %s; the page shows the %d complete frames",
                  shoal_recording_damage(recording), (int)shoal_recording_frame_count(recording));
    }
    if (shoal_recording_frame_count(recording) == 0) {
        cli_error("warning: %s has no frames: the page will show nothing", opt.input);
    }
    shoal_recording_destroy(recording);
    if (size > VIEW_LARGE_BYTES) {
        cli_error("warning: a %zu MiB recording makes a slow page; record fewer frames "
                  "(shoal run --record-every K)",
                  size >> 20);
    }

    char* output = NULL;
    if (opt.output == NULL) {
        size_t length = strlen(opt.input) + sizeof ".html";
        output = malloc(length);
        if (output == NULL) {
            cli_error("out of memory");
            free(data);
            return CLI_EXIT_FAILURE;
        }
        snprintf(output, length, "%s.html", opt.input);
    }
    const char* path = opt.output != NULL ? opt.output : output;
    int exit_code = CLI_EXIT_FAILURE;
    if (write_page(path, opt.input, data, size) == 0) {
        printf("%s\n", path);
        exit_code = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
        if (exit_code == CLI_EXIT_OK && opt.open) {
            exit_code = open_page(path);
        }
    }
    free(output);
    free(data);
    return exit_code;
}
