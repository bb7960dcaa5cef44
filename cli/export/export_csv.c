/* A recording as CSV: one row per (frame, agent) (docs/export.md).
 *
 * Decisions worth knowing:
 * - Floats are printed with %.9g, which reads back to the same binary32
 *   value; the time, a double in the recording, with %.17g. The C locale
 *   is never changed by the command, so the decimal separator is '.'.
 * - The recording holds no velocities: the speed is the distance to the
 *   agent's position in the previous frame over the time between the two
 *   frames (a backward difference), or to the next frame where the agent
 *   is new; on a torus the shorter way round. An agent seen in one frame
 *   only has an empty speed.
 * - The group's name is quoted as RFC 4180 says when it holds a comma or a
 *   quote. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"
#include "cli/export/export.h"
#include "io/atomic_file.h"

/* The row of agent (id, generation) in `frame`, or -1. Ids ascend within a
 * frame (docs/recording.md). */
static int32_t find_agent(const shoal_recording_frame_t* frame, uint32_t id, uint32_t generation)
{
    int32_t lo = 0, hi = frame->count;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (frame->ids[mid] < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < frame->count && frame->ids[lo] == id && frame->generations[lo] == generation) return lo;
    return -1;
}

/* Distance between two positions of `dims` floats; on a torus each wrapped
 * axis takes the shorter way round. */
static double distance(const float* a, const float* b, int dims, const shoal_recording_header_t* h)
{
    double sum = 0.0;
    for (int k = 0; k < dims; ++k) {
        double d = (double)b[k] - (double)a[k];
        double length = (double)h->bounds_max[k] - (double)h->bounds_min[k];
        if (h->wrap && length > 0.0) d -= length * floor(d / length + 0.5);
        sum += d * d;
    }
    return sqrt(sum);
}

/* Speed of row `i` of frame `f`, or NAN when the agent is in no neighboring
 * frame. */
static double agent_speed(const shoal_recording_reader_t* rec, int32_t f, const shoal_recording_frame_t* cur,
                          int32_t i, const shoal_recording_frame_t* prev, const shoal_recording_frame_t* next)
{
    const shoal_recording_header_t* h = shoal_recording_reader_header(rec);
    int dims = h->dimensions;
    const float* p = cur->positions + (size_t)dims * (size_t)i;
    if (f > 0) {
        int32_t j = find_agent(prev, cur->ids[i], cur->generations[i]);
        double dt = cur->time - prev->time;
        if (j >= 0 && dt > 0.0) return distance(prev->positions + (size_t)dims * (size_t)j, p, dims, h) / dt;
    }
    if (f + 1 < shoal_recording_reader_frame_count(rec)) {
        int32_t j = find_agent(next, cur->ids[i], cur->generations[i]);
        double dt = next->time - cur->time;
        if (j >= 0 && dt > 0.0) return distance(p, next->positions + (size_t)dims * (size_t)j, dims, h) / dt;
    }
    return NAN;
}

/* Group label k's name: line k of the header's group names, "" if none. */
typedef struct group_names_t {
    const char** names;
    size_t* lengths;
    uint32_t count;
} group_names_t;

static int split_group_names(const char* text, group_names_t* out)
{
    out->count = 0;
    out->names = NULL;
    out->lengths = NULL;
    if (text[0] == '\0') return 0;
    uint32_t lines = 1;
    for (const char* c = text; *c; ++c) lines += *c == '\n';
    out->names = malloc(lines * sizeof *out->names);
    out->lengths = malloc(lines * sizeof *out->lengths);
    if (out->names == NULL || out->lengths == NULL) return -1;
    const char* start = text;
    for (;;) {
        const char* end = strchr(start, '\n');
        size_t n = end != NULL ? (size_t)(end - start) : strlen(start);
        out->names[out->count] = start;
        out->lengths[out->count] = n;
        out->count += 1;
        if (end == NULL) break;
        start = end + 1;
    }
    return 0;
}

static void write_group_name(FILE* f, const group_names_t* groups, uint32_t group)
{
    if (group >= groups->count) return;
    const char* name = groups->names[group];
    size_t n = groups->lengths[group];
    int quote = 0;
    for (size_t k = 0; k < n; ++k) quote |= name[k] == ',' || name[k] == '"' || name[k] == '\r';
    if (!quote) {
        fwrite(name, 1, n, f);
        return;
    }
    fputc('"', f);
    for (size_t k = 0; k < n; ++k) {
        if (name[k] == '"') fputc('"', f);
        fputc(name[k], f);
    }
    fputc('"', f);
}

int export_csv(shoal_recording_reader_t* rec, const char* path, int force, export_summary_t* summary,
               char* msg, int msg_size)
{
    const shoal_recording_header_t* h = shoal_recording_reader_header(rec);
    const int dims = h->dimensions;
    group_names_t groups;
    if (split_group_names(h->group_names, &groups) != 0) {
        free(groups.names);
        free(groups.lengths);
        set_msg(msg, msg_size, "%s: out of memory", path);
        return -1;
    }
    atomic_file_t file;
    if (atomic_file_open_with(&file, path, force ? 0 : ATOMIC_FILE_NO_REPLACE, msg, msg_size) != 0) {
        free(groups.names);
        free(groups.lengths);
        return -1;
    }
    FILE* f = file.f;
    fputs(dims == 2 ? "frame,step,time,id,generation,global_id,group,group_name,x,y,heading,speed\n"
                    : "frame,step,time,id,generation,global_id,group,group_name,x,y,z,qw,qx,qy,qz,speed\n",
          f);
    const int32_t frames = shoal_recording_reader_frame_count(rec);
    /* In order: reading frame fi + 1 leaves fi and fi - 1 valid (the
     * reader keeps three frames), the neighbours of the speeds. */
    shoal_recording_frame_t prev = {0}, cur = {0}, next = {0};
    shoal_error_t err = {SHOAL_OK, ""};
    int read_ok = frames == 0 || shoal_recording_reader_frame(rec, 0, &cur, &err) == SHOAL_OK;
    int64_t rows = 0;
    for (int32_t fi = 0; read_ok && fi < frames && !ferror(f); ++fi) {
        if (fi + 1 < frames && shoal_recording_reader_frame(rec, fi + 1, &next, &err) != SHOAL_OK) {
            read_ok = 0;
            break;
        }
        for (int32_t i = 0; i < cur.count; ++i) {
            fprintf(f, "%d,%llu,%.17g,%u,%u,", (int)fi, (unsigned long long)cur.step, cur.time,
                    (unsigned)cur.ids[i], (unsigned)cur.generations[i]);
            /* Recordings before format version 4 hold no global ids. */
            if (cur.global_ids != NULL) fprintf(f, "%llu", (unsigned long long)cur.global_ids[i]);
            fprintf(f, ",%u,", (unsigned)cur.groups[i]);
            write_group_name(f, &groups, cur.groups[i]);
            const float* p = cur.positions + (size_t)dims * (size_t)i;
            if (dims == 2) {
                fprintf(f, ",%.9g,%.9g,%.9g,", (double)p[0], (double)p[1], (double)cur.headings[i]);
            } else {
                const float* q = cur.orientations + 4 * (size_t)i;
                fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,", (double)p[0], (double)p[1], (double)p[2],
                        (double)q[0], (double)q[1], (double)q[2], (double)q[3]);
            }
            double speed = agent_speed(rec, fi, &cur, i, &prev, &next);
            if (!isnan(speed)) fprintf(f, "%.9g", speed);
            fputc('\n', f);
        }
        rows += cur.count;
        prev = cur;
        cur = next;
    }
    free(groups.names);
    free(groups.lengths);
    if (!read_ok) {
        set_msg(msg, msg_size, "%s; %s not written", err.message, path);
        atomic_file_discard(&file);
        return -1;
    }
    /* A failed write left the stream's error flag set: the commit then
     * fails with the reason and removes the temporary file. */
    if (atomic_file_commit(&file, msg, msg_size) != 0) return -1;
    summary->rows = rows;
    summary->frames = frames;
    return 0;
}
