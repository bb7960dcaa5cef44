/* The page of `shoal view` and Python's shoal.view (view_page.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/viewer/view_page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "cli/viewer/view_nav.h"

/* The page, from the generated viewer_html.c. */
extern const unsigned char viewer_html[];
extern const size_t viewer_html_size;
extern const int viewer_html_fzstd; /* the page decodes zstd: it gets compressed frames */

/* Where the recording goes: this exact tag, empty, is in viewer.html. */
#define VIEW_SLOT "<script type=\"application/octet-stream\" id=\"recording\"></script>"
#define VIEW_LINE 76 /* base64 characters per line */

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

/* Bytes of a page that carries a stream of `stream` bytes (and its
 * summary, in the 512 bytes on top). */
static uint64_t page_bytes(uint64_t stream)
{
    uint64_t digits = (stream + 2) / 3 * 4;
    return viewer_html_size + digits + (digits + VIEW_LINE - 1) / VIEW_LINE + 512;
}

/* The summary the page reads before it decodes a frame (view_summary_t),
 * as JSON in its own script tag after the recording's. */
static void write_summary(FILE* out, const view_summary_t* s, int32_t dims)
{
    fputs("</script>\n<script type=\"application/json\" id=\"recording-summary\">{\"lo\":", out);
    if (s->lo[0] <= s->hi[0]) {
        for (int side = 0; side < 2; ++side) {
            const float* v = side == 0 ? s->lo : s->hi;
            fprintf(out, "%s[%.9g,%.9g,%.9g]", side == 0 ? "" : ",\"hi\":", (double)v[0], (double)v[1],
                    dims == 3 ? (double)v[2] : 0.0);
        }
    } else {
        fputs("null,\"hi\":null", out);
    }
    fprintf(out, ",\"max_speed\":%.9g,\"groups\":[", s->max_speed);
    for (int32_t k = 0; k < s->group_count; ++k) fprintf(out, "%s%u", k ? "," : "", (unsigned)s->groups[k]);
    fputs("]}\n", out);
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

static void write_attribute(FILE* out, const char* name, const char* value)
{
    if (value[0] == '\0') return;
    fprintf(out, " %s=\"", name);
    write_escaped(out, value);
    fputc('"', out);
}

int view_page_write(const char* path, const view_page_t* about, shoal_recording_reader_t* recording,
                    view_thinning_t thin, char* why_out, size_t why_size)
{
    const char* page = (const char*)viewer_html;
    const char* slot = strstr(page, VIEW_SLOT);
    if (slot == NULL) {
        snprintf(why_out, why_size, "the viewer page has no recording slot (a broken build?)");
        return -1;
    }
    char why[480];
    atomic_file_t file; /* io/atomic_file.h: the one output rule */
    if (atomic_file_open(&file, path, why, sizeof why) != 0) {
        snprintf(why_out, why_size, "%s", why);
        return -1;
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
        view_summary_t summary;
        int rc = view_stream_write(recording, thin, base64_sink, &b64, &summary, &err);
        if (rc < 0) {
            if (rc == -2)
                snprintf(why_out, why_size, "%s; %s not written", err.message, path);
            else
                snprintf(why_out, why_size, "out of memory writing %s", path);
            atomic_file_discard(&file);
            return -1;
        }
        ok = rc == 0 && base64_finish(&b64) == 0;
        if (ok) write_summary(out, &summary, shoal_recording_reader_header(recording)->dimensions);
        /* The navigation fields (version 5) in a tag of their own: the
         * recording's stream stays what a version 4 reader parses. */
        view_nav_t nav;
        memset(&nav, 0, sizeof nav);
        rc = ok ? view_nav_build(recording, thin, &nav, &err) : 0;
        if (rc < 0) {
            if (rc == -2)
                snprintf(why_out, why_size, "%s; %s not written", err.message, path);
            else
                snprintf(why_out, why_size, "out of memory writing %s", path);
            atomic_file_discard(&file);
            return -1;
        }
        if (ok && nav.size > 0) {
            fputs("</script>\n<script type=\"application/octet-stream\" id=\"nav-fields\"", out);
            write_attribute(out, "data-note", nav.note);
            fputs(">\n", out);
            base64_t n64 = {.out = out};
            ok = base64_sink(&n64, nav.bytes, nav.size) == 0 && base64_finish(&n64) == 0;
        }
        view_nav_free(&nav);
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
        snprintf(why_out, why_size, "%s", why);
        return -1;
    }
    return 0;
}

/* 1234567 as "1,234,567". */
const char* view_grouped(int64_t v, char* text, size_t size)
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
                 ordinal_suffix(thin.every), view_grouped(kept, a, sizeof a),
                 view_grouped(frames, b, sizeof b));
    else
        snprintf(part, sizeof part, "all %s frames", view_grouped(frames, a, sizeof a));
    if (fewer_agents)
        snprintf(text, size, "%s, %s of %s agents", part, view_grouped(thin.max_agents, a, sizeof a),
                 view_grouped(largest, b, sizeof b));
    else
        snprintf(text, size, "%s, all %s agents", part, view_grouped(largest, a, sizeof a));
}


void view_page_plan(shoal_recording_reader_t* recording, int32_t every, int32_t max_agents,
                    view_page_plan_t* out)
{
    memset(out, 0, sizeof *out);
    const int32_t compressed = viewer_html_fzstd;
    out->thin = (view_thinning_t){every > 0 ? every : 1, max_agents > 0 ? max_agents : 0, compressed};
    out->whole_bytes = page_bytes(view_stream_size(recording, (view_thinning_t){1, 0, compressed}));
    out->automatic = every <= 0 && max_agents <= 0 && out->whole_bytes > VIEW_AUTO_BYTES;
    if (out->automatic) {
        /* The most stream bytes for which page_bytes() stays within the limit. */
        uint64_t room = (VIEW_AUTO_BYTES - viewer_html_size - 512) / (VIEW_LINE + 1) * VIEW_LINE / 4 * 3;
        out->thin = view_choose_thinning(recording, compressed, room, VIEW_AUTO_FRAMES, VIEW_AUTO_AGENTS);
    }
    describe(recording, out->thin, out->shown, sizeof out->shown);
    out->bytes = page_bytes(view_stream_size(recording, out->thin));
    if (out->automatic) {
        char a[32];
        snprintf(out->note, sizeof out->note,
                 "thinned by shoal view: all of it would make a %s MiB page (--every 1 puts it all in)",
                 view_grouped((int64_t)(out->whole_bytes >> 20), a, sizeof a));
    }
}
