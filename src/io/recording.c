/* Recordings: the writer and the reader of the format in docs/recording.md
 * (the byte layout is repeated below, because the code is checked against
 * it line by line).
 *
 * Decisions:
 * - Little-endian, every field and array 4-byte aligned, arrays not
 *   interleaved: a reader can point typed arrays at a frame (the viewer
 *   does), and one agent costs 24 bytes in 2D, 40 in 3D.
 * - Agents are written in ascending id (handle index1) order. The world's
 *   storage order changes when it reorders by cell; ids do not, so frames
 *   then compare and compress well, the output is the same for any thread
 *   count, and a reader can find an agent by binary search or walk two
 *   frames side by side (the viewer's trails do).
 * - CRC-32 (the zlib and PNG polynomial) per header and per frame, not one
 *   over the whole file: a file cut short keeps checkable frames, and the
 *   viewer computes the same sum in JavaScript with 32-bit integers.
 * - An end record marks a recording its writer closed. Without it the file
 *   is reported as truncated after its last complete frame, so a run that
 *   crashed is never mistaken for a finished one.
 * - The reader checks every record when it opens the file (sizes against
 *   the bytes there are before any allocation, checksums, order), and
 *   every value of a frame when it decodes it (ids ascending, values
 *   finite), before handing it out: a corrupt file costs an error message,
 *   never a crash or a huge allocation, and a consumer need not check
 *   again.
 * - The reader goes frame by frame (shoal_recording_reader_t): a file is
 *   read a record at a time (pread), and decoded frames go into three
 *   buffers that are reused, so its memory follows the largest frame, not
 *   the file's length or its compression ratio (a still crowd of 10,000
 *   compresses a thousandfold: 2 MB of file, 2 GB decoded). The whole-file
 *   reader (shoal_recording_load) is built on it and refuses, before
 *   decoding, a recording whose frames decode to more than
 *   SHOAL_RECORDING_LOAD_LIMIT.
 * - No global state: the CRC table lives in the recorder and on the
 *   reader's stack.
 * - Walls and obstacles (version 2) go in one geometry record, written once
 *   with the first frame, from the world the frame comes from: the header
 *   is written before there is a world, and the geometry is static within
 *   a run (walls are added while the scenario is populated; a moving
 *   obstacle's path follows from its velocity). Later additions and
 *   removals are not recorded. A damaged geometry record is an error even
 *   under ALLOW_TRUNCATED, as a damaged header is: frames without their
 *   walls would be drawn as if the walls were not there. A file that ends
 *   inside it (a crash before the first frame) is truncated after the
 *   header, as before.
 *
 * Layout (offsets in bytes):
 *   header  0 char[8] "SHOALREC"   8 u32 version   12 u32 header_size
 *          16 u32 dimensions      20 u32 flags (0) 24 f32 dt   28 u32 record_every
 *          32 u64 steps_hint      40 u32 wrap      44 f32[3] bounds_min
 *          56 f32[3] bounds_max   68 u32 units, 72 u32 name, 76 u32 groups,
 *          80 u32 scenario lengths; 84 the four strings, zero padding to a
 *          multiple of 4, then u32 CRC-32 of every header byte before it.
 *   frame   0 "FRAM"  4 u32 index  8 u64 step  16 f64 time  24 u32 count n
 *          28 u32 flags (0)  32 u32 ids[n], u32 generations[n], u32 groups[n],
 *          f32 positions[dims n], f32 headings[n] (2D) or f32 quaternions[4n]
 *          (3D), u32 CRC-32 of the frame's bytes before it.
 *   geometry (version 2, between the header and frame 0)
 *           0 "GEOM"  4 u32 flags (0)  8 f64 time  16 u32 segments W
 *          20 u32 obstacles B  24 f32 segments[4W] (x0 y0 x1 y1), u32 ids[B],
 *          f32 centers[3B], f32 radii[B], f32 velocities[3B], u32 CRC-32 of
 *          the record's bytes before it.
 *   end     0 "DONE"  4 u32 frame count  8 u32 CRC-32 of bytes 0..7.
 *   frame, versions 3 and 4 (compressed)
 *           0 "FRAM"  4 u32 index  8 u64 step  16 f64 time  24 u32 count n
 *          28 u32 flags (0)  32 u32 D, the payload's decoded bytes (exactly
 *          n times 24 in 2D, 40 in 3D; in version 4 32 and 48)  36 u32 C,
 *          the zstd frame's bytes
 *          40 the zstd frame, zero padding to L = round_up_4(max(C,
 *          ceil(D / 1024))) bytes, u32 CRC-32 of the frame's bytes before it.
 *   navigation fields (version 5, before a frame: the first it applies to)
 *           0 "NAVF"  4 u32 flags (0)  8 u32 frame  12 u32 goals G
 *          16 u64 step  24 f64 time  32 f32 origin[2]  40 f32 cell
 *          44 u32 nx  48 u32 ny  52 u32 D = nx ny (1 + 2G)  56 u32 C
 *          60 G x (u32 goal id, f32 lo, f32 hi), the zstd frame of the
 *          blocked flags and the quantized fields (src/io/nav_record.h),
 *          zero padding as a compressed frame's, u32 CRC-32.
 *
 * Version 5 is version 4 with navigation field records between frames
 * (src/io/nav_record.h). It is a version of its own, not an optional
 * record in version 4, because readers of versions 1 to 4 stop at a tag
 * they do not know and call the file corrupt: a file with fields says
 * "unsupported version 5" to them instead. Without fields the writer
 * still writes version 4 (shoal_recording_open), the same bytes as
 * before.
 *
 * Version 3 (docs/recording.md, "Frame, version 3"): the frame's payload
 * is the version 2 arrays made predictable, then compressed with zstd:
 * - ids as differences from the previous id (mostly 1), generations and
 *   groups as they are;
 * - version 4 only: each agent's global id, the 64-bit zigzagged
 *   difference from a prediction (the same agent's in the last frame, else
 *   one more than the agent's before it in the frame, else 0) as two words,
 *   every low word, then every high word; an agent in the last frame must
 *   keep its global id there (a reader checks it);
 * - every float (x, y[, z], heading or w x y z) as the zigzagged 32-bit
 *   difference between its bit pattern and a prediction from the same
 *   agent (same id and generation) in the previous frames: 2 b1 - b2 when
 *   it is in both of the last two frames (constant velocity), b1 when only
 *   in the last, 0 otherwise. Integer arithmetic on the bits, modulo 2^32,
 *   so the round trip is exact (lossless, every bit of every float);
 * - the words as four byte planes (every word's low byte, then every
 *   second byte, ...): the high bytes of small differences are zeros that
 *   zstd removes.
 * - a frame thus decodes only after the frames before it; it is still
 *   checked on its own (its CRC, its decoded size, zstd's own checks), and
 *   frames are still read in order, stopping at the first damaged one;
 * - no decompression bombs: the payload's size is declared (D) and must
 *   be exactly what the agent count needs, and a frame stores at least
 *   D / 1024 bytes (the writer pads a frame that zstd shrank further, a
 *   crowd standing still), so a frame decodes to at most 1024 times its
 *   size, and the frame reader's buffers stay bounded by the largest
 *   frame. The file as a whole may still decode to 1024 times its size:
 *   hence frame by frame, and the whole-file reader's limit.
 */
#define _POSIX_C_SOURCE 200809L

#include "shoal/recording.h"

#include "io/atomic_file.h"
#include "base/bytes.h"
#include "io/file_read.h"
#include "io/frame_codec.h"
#include "io/nav_record.h"
#include "modules/nav/nav.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <zstd.h>

#define REC_HEADER_FIXED 84u
#define REC_FRAME_FIXED 32u
#define REC_END_BYTES 12u
#define REC_GEOMETRY_FIXED 24u
#define REC_SEGMENT_BYTES 16u
#define REC_OBSTACLE_BYTES 32u       /* id, center, radius, velocity */
#define REC_TAG_FRAME 0x4D415246u    /* "FRAM" read as a little-endian u32 */
#define REC_TAG_GEOMETRY 0x4D4F4547u /* "GEOM" */
#define REC_TAG_END 0x454E4F44u      /* "DONE" */
#define REC_MAX_UNITS 255u
#define REC_MAX_NAME 4096u
#define REC_MAX_GROUPS ((uint32_t)1 << 20)
#define REC_MAX_SCENARIO ((uint32_t)64 << 20)
#define REC_HEADER_COOKIE 0x52454331 /* shoal_recording_default_header() was used */
#define REC_DEFAULT_UNITS "m,s,rad"

static const char rec_magic[8] = {'S', 'H', 'O', 'A', 'L', 'R', 'E', 'C'};

/* ------------------------------------------------------------------------ */
/* Bytes                                                                      */
/* ------------------------------------------------------------------------ */

static void crc_init(uint32_t table[256])
{
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
}

static uint32_t crc32(const uint32_t table[256], const uint8_t* p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static uint64_t align4(uint64_t n) { return (n + 3u) & ~(uint64_t)3u; }

/* Bytes of one agent in a frame: id, generation, group, position, and a
 * heading (2D) or a quaternion (3D). */
static uint64_t agent_bytes(int32_t dims) { return 12u + 4u * (uint64_t)dims + (dims == 2 ? 4u : 16u); }

/* Bytes of one agent in a decoded frame of format `version`: version 4
 * adds the global id (two 32-bit words). */
static uint64_t payload_bytes(int32_t version, int32_t dims)
{
    return agent_bytes(dims) + (version >= 4 ? 8u : 0u);
}

static uint64_t frame_bytes(int32_t dims, uint64_t count)
{
    return REC_FRAME_FIXED + count * agent_bytes(dims) + 4u;
}

static uint64_t geometry_bytes(uint64_t segments, uint64_t obstacles)
{
    return REC_GEOMETRY_FIXED + segments * REC_SEGMENT_BYTES + obstacles * REC_OBSTACLE_BYTES + 4u;
}

#if defined(__GNUC__)
#define REC_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define REC_PRINTF_LIKE(f, a)
#endif

REC_PRINTF_LIKE(3, 4)
static shoal_status_t fail(shoal_error_t* err, shoal_status_t status, const char* fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

static const char* or_empty(const char* s) { return s != NULL ? s : ""; }

shoal_recording_header_t shoal_recording_default_header(void)
{
    shoal_recording_header_t h;
    memset(&h, 0, sizeof h);
    h.dimensions = 2;
    h.dt = 1.0f / 60.0f;
    h.record_every = 1;
    h.internal_value = REC_HEADER_COOKIE;
    return h;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                    */
/* ------------------------------------------------------------------------ */

/* One frame's agents sorted by id: the one being written and, in version
 * 3, the two before it, which it is predicted from. */
typedef struct sorted_frame_t {
    size_t n;
    uint32_t* ids;
    uint32_t* generations;
    uint32_t* groups;
    float* floats; /* positions, then headings or quaternions (float_index) */
    uint64_t* gids;
} sorted_frame_t;

struct shoal_recorder_t {
    FILE* file;
    char* path;
    int32_t dims;
    int32_t version; /* 2, 3 or 4 */
    int broken;      /* a write failed: the file's tail is unknown */
    int geometry_written;
    int64_t frames;
    uint64_t offset;    /* bytes written so far */
    uint64_t max_bytes; /* the file may not pass it (shoal_recording_set_max_bytes) */
    uint64_t last_step;
    uint32_t crc[256];
    ZSTD_CCtx* zstd;       /* versions 3 to 5, reused for every frame */
    uint64_t nav_revision; /* version 5: the world's fields revision last written */
    int nav_written;       /* a field record was written */
    /* scratch, grown to the largest frame */
    int32_t capacity;
    shoal_agent_t* ids;
    uint32_t* groups;
    float* positions; /* 3 per agent, as read_agents writes them */
    float* headings;
    float* orientations;
    uint64_t* global_ids;
    uint64_t* order;          /* index1 << 32 | row, sorted */
    sorted_frame_t sorted[3]; /* this frame, the last, the one before */
    int32_t* match1;          /* versions 3, 4: each agent's index in the last frame, or -1 */
    int32_t* match2;          /* ... in the one before */
    uint8_t* planes;          /* versions 3, 4: the payload before compression */
    uint8_t* bytes;           /* the frame as written */
    size_t bytes_capacity;
};

static shoal_status_t write_bytes(shoal_recorder_t* r, const uint8_t* p, size_t n, shoal_error_t* err)
{
    /* Flushed at once: a crash later keeps this frame (the reader's
     * ALLOW_TRUNCATED mode reads it back). */
    if (fwrite(p, 1, n, r->file) != n || fflush(r->file) != 0) {
        r->broken = 1;
        return fail(err, SHOAL_ERR_IO, "recording %s: write failed at byte %" PRIu64 ": %s", r->path,
                    r->offset, strerror(errno));
    }
    r->offset += n;
    return SHOAL_OK;
}

static shoal_status_t check_header(const char* path, const shoal_recording_header_t* h, shoal_error_t* err)
{
    if (h->internal_value != REC_HEADER_COOKIE)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT,
                    "recording %s: the header must start from shoal_recording_default_header()", path);
    if (h->dimensions != 2 && h->dimensions != 3)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: dimensions must be 2 or 3, got %d", path,
                    (int)h->dimensions);
    if (!isfinite(h->dt) || h->dt <= 0.0f)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: dt must be finite and > 0, got %g", path,
                    (double)h->dt);
    if (h->record_every < 1)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: record_every must be >= 1, got %d", path,
                    (int)h->record_every);
    if (h->wrap != 0 && h->wrap != 1)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: wrap must be 0 or 1, got %d", path,
                    (int)h->wrap);
    for (int k = 0; k < 3; ++k)
        if (!isfinite(h->bounds_min[k]) || !isfinite(h->bounds_max[k]))
            return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: bounds[%d] is not finite", path, k);
    const char* names[4] = {"units", "scenario_name", "group_names", "scenario_text"};
    const char* texts[4] = {h->units, h->scenario_name, h->group_names, h->scenario_text};
    const uint32_t limits[4] = {REC_MAX_UNITS, REC_MAX_NAME, REC_MAX_GROUPS, REC_MAX_SCENARIO};
    for (int i = 0; i < 4; ++i)
        if (texts[i] != NULL && strlen(texts[i]) > limits[i])
            return fail(err, SHOAL_ERR_CAPACITY, "recording %s: %s is longer than %" PRIu32 " bytes", path,
                        names[i], limits[i]);
    return SHOAL_OK;
}

static void recorder_free(shoal_recorder_t* r)
{
    free(r->path);
    free(r->ids);
    free(r->groups);
    free(r->positions);
    free(r->headings);
    free(r->orientations);
    free(r->global_ids);
    free(r->order);
    for (int k = 0; k < 3; ++k) {
        free(r->sorted[k].gids);
        free(r->sorted[k].ids);
        free(r->sorted[k].generations);
        free(r->sorted[k].groups);
        free(r->sorted[k].floats);
    }
    free(r->match1);
    free(r->match2);
    free(r->planes);
    free(r->bytes);
    ZSTD_freeCCtx(r->zstd);
    free(r);
}

shoal_status_t shoal_recording_open(const char* path, const shoal_recording_header_t* header,
                                    shoal_recorder_t** out, shoal_error_t* err)
{
    return shoal_recording_open_version(path, header, SHOAL_RECORDING_DEFAULT_VERSION, out, err);
}

shoal_status_t shoal_recording_open_version(const char* path, const shoal_recording_header_t* header,
                                            int32_t version, shoal_recorder_t** out, shoal_error_t* err)
{
    if (out != NULL) *out = NULL;
    if (path == NULL || header == NULL || out == NULL)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording: %s is NULL",
                    path == NULL     ? "path"
                    : header == NULL ? "header"
                                     : "out");
    if (version < 2 || version > SHOAL_RECORDING_VERSION)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT,
                    "recording %s: this build writes format versions 2 (uncompressed), 3 "
                    "(compressed), 4 (compressed, with global ids) and 5 (4 with navigation "
                    "fields), not %d",
                    path, (int)version);
    shoal_status_t status = check_header(path, header, err);
    if (status != SHOAL_OK) return status;

    const char* units = header->units != NULL ? header->units : REC_DEFAULT_UNITS;
    const char* texts[4] = {units, or_empty(header->scenario_name), or_empty(header->group_names),
                            or_empty(header->scenario_text)};
    uint32_t lengths[4];
    uint64_t strings = 0;
    for (int i = 0; i < 4; ++i) {
        lengths[i] = (uint32_t)strlen(texts[i]);
        strings += lengths[i];
    }
    uint64_t size = align4(REC_HEADER_FIXED + strings) + 4u;

    shoal_recorder_t* r = calloc(1, sizeof *r);
    uint8_t* h = calloc(1, (size_t)size);
    if (r == NULL || h == NULL || (r->path = strdup(path)) == NULL ||
        (version >= 3 && (r->zstd = ZSTD_createCCtx()) == NULL)) {
        free(h);
        if (r != NULL) recorder_free(r);
        return fail(err, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", path);
    }
    r->dims = header->dimensions;
    r->version = version;
    r->max_bytes = SHOAL_RECORDING_MAX_FILE;
    crc_init(r->crc);

    memcpy(h, rec_magic, sizeof rec_magic);
    put_u32(h + 8, (uint32_t)version);
    put_u32(h + 12, (uint32_t)size);
    put_u32(h + 16, (uint32_t)header->dimensions);
    put_u32(h + 20, 0u);
    put_f32(h + 24, header->dt);
    put_u32(h + 28, (uint32_t)header->record_every);
    put_u64(h + 32, header->steps_hint);
    put_u32(h + 40, (uint32_t)header->wrap);
    for (int k = 0; k < 3; ++k) {
        put_f32(h + 44 + 4 * k, header->bounds_min[k]);
        put_f32(h + 56 + 4 * k, header->bounds_max[k]);
    }
    size_t at = REC_HEADER_FIXED;
    for (int i = 0; i < 4; ++i) {
        put_u32(h + 68 + 4 * i, lengths[i]);
        memcpy(h + at, texts[i], lengths[i]);
        at += lengths[i];
    }
    put_u32(h + size - 4, crc32(r->crc, h, (size_t)size - 4));

    /* Written in place (a crashed run keeps its complete frames), by the
     * one output rule (io/atomic_file.h): no symlink followed, a device or
     * FIFO written through, a directory refused. */
    char why[480];
    r->file = output_open_in_place(path, why, sizeof why);
    if (r->file == NULL) {
        status = fail(err, SHOAL_ERR_IO, "recording: %s", why);
    } else {
        status = write_bytes(r, h, (size_t)size, err);
    }
    free(h);
    if (status != SHOAL_OK) {
        if (r->file != NULL) fclose(r->file);
        recorder_free(r);
        return status;
    }
    *out = r;
    return SHOAL_OK;
}

/* The geometry record of `world` (NULL: an empty one, for a recording
 * closed before its first frame), into a new buffer. */
static shoal_status_t build_geometry(shoal_recorder_t* r, const shoal_world_t* world, uint8_t** out,
                                     size_t* out_size, shoal_error_t* err)
{
    int32_t segments = 0, obstacles = 0;
    if (world != NULL) {
        if (shoal_world_wall_segments(world, NULL, 0, &segments) != SHOAL_OK)
            return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: reading the walls failed: %s",
                        r->path, shoal_world_last_error(world));
        obstacles = shoal_world_obstacle_count(world);
    }
    if (segments < 0 || obstacles < 0)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: negative wall or obstacle count",
                    r->path);
    const size_t w = (size_t)segments, b = (size_t)obstacles;
    const size_t size = (size_t)geometry_bytes(w, b);
    uint8_t* p = calloc(1, size);
    float* seg = malloc(4 * w * sizeof *seg + 1);
    if (p == NULL || seg == NULL) {
        free(p);
        free(seg);
        return fail(err, SHOAL_ERR_OUT_OF_MEMORY,
                    "recording %s: out of memory for %d wall segments and %d obstacles", r->path,
                    (int)segments, (int)obstacles);
    }
    const char* bad = NULL;
    int32_t got = 0;
    if (segments > 0 &&
        (shoal_world_wall_segments(world, seg, segments, &got) != SHOAL_OK || got != segments))
        bad = "the walls changed while they were read";
    for (size_t i = 0; bad == NULL && i < 4 * w; ++i)
        if (!isfinite(seg[i])) bad = "a wall coordinate is not finite";
    put_u32(p, REC_TAG_GEOMETRY);
    put_u32(p + 4, 0u);
    put_f64(p + 8, world != NULL ? shoal_world_time(world) : 0.0);
    put_u32(p + 16, (uint32_t)w);
    put_u32(p + 20, (uint32_t)b);
    uint8_t* at = p + REC_GEOMETRY_FIXED;
    for (size_t i = 0; i < 4 * w; ++i) put_f32(at + 4 * i, seg[i]);
    free(seg);
    uint8_t* ids = at + REC_SEGMENT_BYTES * w;
    uint8_t* centers = ids + 4 * b;
    uint8_t* radii = centers + 12 * b;
    uint8_t* velocities = radii + 4 * b;
    /* Every obstacle in id order, in one read (ids have holes where
     * obstacles were removed). */
    int32_t* oid = b ? malloc(b * sizeof *oid) : NULL;
    float* oc = b ? malloc(b * 3 * sizeof *oc) : NULL;
    float* orad = b ? malloc(b * sizeof *orad) : NULL;
    float* ov = b ? malloc(b * 3 * sizeof *ov) : NULL;
    int32_t listed = 0;
    if (bad == NULL && b > 0) {
        if (!oid || !oc || !orad || !ov)
            bad = "out of memory for the obstacles";
        else if (shoal_world_read_obstacles(world, oid, oc, orad, ov, (int32_t)b, &listed) != SHOAL_OK ||
                 (size_t)listed != b)
            bad = "the obstacles changed while they were read";
    }
    for (size_t i = 0; bad == NULL && i < b; ++i) {
        const float* c = oc + 3 * i;
        const float* v = ov + 3 * i;
        if (!isfinite(c[0]) || !isfinite(c[1]) || !isfinite(c[2]) || !isfinite(orad[i]) || orad[i] < 0.0f ||
            !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
            bad = "an obstacle's center, radius or velocity is not finite";
        put_u32(ids + 4 * i, (uint32_t)oid[i]);
        for (int k = 0; k < 3; ++k) {
            put_f32(centers + 12 * i + 4 * (size_t)k, c[k]);
            put_f32(velocities + 12 * i + 4 * (size_t)k, v[k]);
        }
        put_f32(radii + 4 * i, orad[i]);
    }
    free(oid);
    free(oc);
    free(orad);
    free(ov);
    if (bad != NULL) {
        free(p);
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: geometry: %s", r->path, bad);
    }
    put_u32(p + size - 4, crc32(r->crc, p, size - 4));
    *out = p;
    *out_size = size;
    return SHOAL_OK;
}

/* Write the geometry record once, before the first frame. */
static shoal_status_t write_geometry(shoal_recorder_t* r, const shoal_world_t* world, shoal_error_t* err)
{
    if (r->geometry_written) return SHOAL_OK;
    uint8_t* bytes = NULL;
    size_t size = 0;
    shoal_status_t status = build_geometry(r, world, &bytes, &size, err);
    if (status == SHOAL_OK) status = write_bytes(r, bytes, size, err);
    free(bytes);
    if (status == SHOAL_OK) r->geometry_written = 1;
    return status;
}

/* Version 5: the field record to write before frame r->frames, into a
 * new buffer (*out NULL when there is none to write: the fields did not
 * change since the last record, or are out of date until the next step).
 * Sets *revision to the fields' revision it holds. */
static shoal_status_t build_nav(shoal_recorder_t* r, const shoal_world_t* world, uint8_t** out,
                                size_t* out_size, uint64_t* revision, shoal_error_t* err)
{
    *out = NULL;
    *out_size = 0;
    nav_fields_view_t v;
    nav_fields_view(world, &v);
    if (!v.current || (r->nav_written && v.revision == r->nav_revision)) return SHOAL_OK;
    if (v.grid == NULL && !r->nav_written) return SHOAL_OK; /* no fields, and none written */
    int32_t* ids = malloc((size_t)v.goal_high * sizeof *ids + 1);
    const float** fields = malloc((size_t)v.goal_high * sizeof *fields + 1);
    if (ids == NULL || fields == NULL) {
        free(ids);
        free(fields);
        return fail(err, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory for the navigation fields",
                    r->path);
    }
    rec_nav_source_t src = {.goals = ids, .fields = fields};
    if (v.grid != NULL) {
        src.origin[0] = v.grid->origin[0];
        src.origin[1] = v.grid->origin[1];
        src.cell = v.grid->cell;
        src.nx = v.grid->nx;
        src.ny = v.grid->ny;
        src.blocked = v.grid->blocked;
        for (int32_t g = 0; g < v.goal_high; ++g)
            if (v.goals[g].live && v.goals[g].T != NULL) {
                ids[src.goal_count] = g;
                fields[src.goal_count++] = v.goals[g].T;
            }
    }
    const char* why = "";
    int rc = rec_nav_encode(r->zstd, &src, (uint32_t)r->frames, shoal_world_step_count(world),
                            shoal_world_time(world), out, out_size, &why);
    free(ids);
    free(fields);
    if (rc != 0)
        return fail(err, strcmp(why, "out of memory") == 0 ? SHOAL_ERR_OUT_OF_MEMORY : SHOAL_ERR_CAPACITY,
                    "recording %s: the navigation fields before frame %" PRId64 ": %s", r->path, r->frames,
                    why);
    put_u32(*out + *out_size - 4, crc32(r->crc, *out, *out_size - 4));
    *revision = v.revision;
    return SHOAL_OK;
}

static int compare_u64(const void* a, const void* b)
{
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

/* realloc that keeps the old block on failure; 0 then. */
static int grow(void** p, size_t bytes)
{
    void* q = realloc(*p, bytes > 0 ? bytes : 1);
    if (q == NULL) return 0;
    *p = q;
    return 1;
}

/* The bytes a frame of `n` agents may take before it is written. */
static size_t frame_capacity(const shoal_recorder_t* r, size_t n)
{
    const uint64_t decoded = n * payload_bytes(r->version, r->dims);
    if (r->version == 2) return (size_t)frame_bytes(r->dims, n);
    return (size_t)rec_frame3_bytes(decoded, ZSTD_compressBound((size_t)decoded));
}

/* Grow the scratch arrays to `count` agents; 0 on allocation failure (the
 * arrays that did grow are kept, with their contents). */
static int reserve(shoal_recorder_t* r, int32_t count)
{
    /* r->bytes: a world empty at its first frame still needs a frame's
     * buffer (it used to be written through NULL). */
    if (count <= r->capacity && r->bytes != NULL) return 1;
    const size_t n = (size_t)count, f = (size_t)rec_floats_per_agent(r->dims);
    int ok = grow((void**)&r->ids, n * sizeof *r->ids) && grow((void**)&r->groups, n * sizeof *r->groups) &&
             grow((void**)&r->positions, 3 * n * sizeof *r->positions) &&
             grow((void**)&r->headings, n * sizeof *r->headings) &&
             grow((void**)&r->orientations, 4 * n * sizeof *r->orientations) &&
             grow((void**)&r->global_ids, n * sizeof *r->global_ids) &&
             grow((void**)&r->order, n * sizeof *r->order);
    for (int k = 0; ok && k < 3; ++k) {
        sorted_frame_t* s = &r->sorted[k];
        ok = grow((void**)&s->ids, n * sizeof *s->ids) &&
             grow((void**)&s->generations, n * sizeof *s->generations) &&
             grow((void**)&s->groups, n * sizeof *s->groups) &&
             grow((void**)&s->floats, f * n * sizeof *s->floats) &&
             grow((void**)&s->gids, n * sizeof *s->gids);
    }
    if (ok && r->version >= 3)
        ok = grow((void**)&r->match1, n * sizeof *r->match1) &&
             grow((void**)&r->match2, n * sizeof *r->match2) &&
             grow((void**)&r->planes, (size_t)(n * payload_bytes(r->version, r->dims)));
    size_t bytes = frame_capacity(r, n);
    if (ok && (ok = grow((void**)&r->bytes, bytes))) r->bytes_capacity = bytes;
    if (ok) r->capacity = count;
    return ok;
}

/* The version 2 frame of r->sorted[0] into r->bytes (fixed fields set);
 * returns its size. */
static size_t encode_frame2(shoal_recorder_t* r)
{
    const sorted_frame_t* cur = &r->sorted[0];
    const size_t n = cur->n, floats = n * (size_t)rec_floats_per_agent(r->dims);
    uint8_t* at = r->bytes + REC_FRAME_FIXED;
    for (size_t j = 0; j < n; ++j) put_u32(at + 4 * j, cur->ids[j]);
    at += 4 * n;
    for (size_t j = 0; j < n; ++j) put_u32(at + 4 * j, cur->generations[j]);
    at += 4 * n;
    for (size_t j = 0; j < n; ++j) put_u32(at + 4 * j, cur->groups[j]);
    at += 4 * n;
    for (size_t i = 0; i < floats; ++i) put_f32(at + 4 * i, cur->floats[i]);
    return (size_t)frame_bytes(r->dims, n);
}

/* The version 3 or 4 frame of r->sorted[0], predicted from r->sorted[1]
 * and [2] (the frames written before it), into r->bytes (fixed fields set
 * up to the flags); returns its size, 0 on failure. */
static size_t encode_frame3(shoal_recorder_t* r, shoal_error_t* err)
{
    rec_agents_t frames[3];
    for (int k = 0; k < 3; ++k)
        frames[k] = (rec_agents_t){.n = r->sorted[k].n,
                                   .ids = r->sorted[k].ids,
                                   .generations = r->sorted[k].generations,
                                   .groups = r->sorted[k].groups,
                                   .floats = r->sorted[k].floats,
                                   .gids = r->sorted[k].gids};
    const char* why = "";
    size_t bytes = rec_frame3_encode(r->zstd, r->version, r->dims, &frames[0],
                                     r->frames >= 1 ? &frames[1] : NULL, r->frames >= 2 ? &frames[2] : NULL,
                                     r->match1, r->match2, r->planes, r->bytes, r->bytes_capacity, &why);
    if (bytes == 0)
        fail(err, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: frame %" PRId64 ": zstd: %s", r->path, r->frames,
             why);
    return bytes;
}

shoal_status_t shoal_recording_write_frame(shoal_recorder_t* r, const shoal_world_t* world,
                                           shoal_error_t* err)
{
    if (r == NULL || world == NULL)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording: %s is NULL",
                    r == NULL ? "recorder" : "world");
    if (r->broken) return fail(err, SHOAL_ERR_IO, "recording %s: an earlier write failed", r->path);
    if (shoal_world_dimensions(world) != r->dims)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT,
                    "recording %s: the world has %d dimensions, the recording %d", r->path,
                    (int)shoal_world_dimensions(world), (int)r->dims);
    uint64_t step = shoal_world_step_count(world);
    if (r->frames > 0 && step < r->last_step)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT,
                    "recording %s: step %" PRIu64 " is before the last frame's step %" PRIu64, r->path, step,
                    r->last_step);
    if (r->frames >= INT32_MAX)
        return fail(err, SHOAL_ERR_CAPACITY, "recording %s: %d frames is the limit", r->path, INT32_MAX);
    int32_t count = shoal_world_agent_count(world);
    /* Versions 3 and 4 declare a frame's decoded size in 32 bits. */
    const uint64_t per_agent = payload_bytes(r->version, r->dims);
    if (r->version >= 3 && (uint64_t)count * per_agent > UINT32_MAX)
        return fail(err, SHOAL_ERR_CAPACITY,
                    "recording %s: %d agents do not fit one frame of format version %d (at most "
                    "%" PRIu64 " in %dD; version 2 takes more)",
                    r->path, (int)count, (int)r->version, (uint64_t)UINT32_MAX / per_agent, (int)r->dims);
    if (!reserve(r, count))
        return fail(err, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory for %d agents", r->path,
                    (int)count);
    shoal_agent_batch_t batch = {.ids = r->ids,
                                 .positions = r->positions,
                                 .headings = r->headings,
                                 .orientations = r->orientations,
                                 .groups = r->groups,
                                 .global_ids = r->global_ids};
    int32_t n = 0;
    shoal_status_t status = shoal_world_read_agents(world, &batch, count, &n);
    if (status != SHOAL_OK)
        return fail(err, status, "recording %s: reading the agents failed: %s", r->path,
                    shoal_world_last_error(world));

    status = write_geometry(r, world, err);
    if (status != SHOAL_OK) return status;

    for (int32_t i = 0; i < n; ++i) r->order[i] = (uint64_t)r->ids[i].index1 << 32 | (uint32_t)i;
    qsort(r->order, (size_t)n, sizeof *r->order, compare_u64);

    const int32_t dims = r->dims;
    const size_t un = (size_t)n;
    sorted_frame_t* cur = &r->sorted[0];
    cur->n = un;
    for (size_t j = 0; j < un; ++j) {
        size_t i = (size_t)(r->order[j] & 0xFFFFFFFFu);
        cur->ids[j] = r->ids[i].index1;
        cur->generations[j] = r->ids[i].generation;
        cur->groups[j] = r->groups[i];
        cur->gids[j] = r->global_ids[i];
        for (int k = 0; k < dims; ++k)
            cur->floats[rec_float_index(dims, un, j, k)] = r->positions[3 * i + (size_t)k];
        if (dims == 2) {
            cur->floats[rec_float_index(dims, un, j, 2)] = r->headings[i];
        } else {
            for (int k = 0; k < 4; ++k)
                cur->floats[rec_float_index(dims, un, j, 3 + k)] = r->orientations[4 * i + (size_t)k];
        }
    }
    uint8_t* p = r->bytes;
    put_u32(p, REC_TAG_FRAME);
    put_u32(p + 4, (uint32_t)r->frames);
    put_u64(p + 8, step);
    put_f64(p + 16, shoal_world_time(world));
    put_u32(p + 24, (uint32_t)n);
    put_u32(p + 28, 0u);
    size_t bytes = r->version == 2 ? encode_frame2(r) : encode_frame3(r, err);
    if (bytes == 0) return SHOAL_ERR_OUT_OF_MEMORY; /* nothing was written */
    uint8_t* nav = NULL;
    size_t nav_bytes = 0;
    uint64_t nav_revision = 0;
    if (r->version >= 5 && (status = build_nav(r, world, &nav, &nav_bytes, &nav_revision, err)) != SHOAL_OK)
        return status;
    if (r->offset + nav_bytes + bytes + REC_END_BYTES > r->max_bytes) {
        char limit[32];
        file_size_text(r->max_bytes, limit, sizeof limit);
        free(nav);
        return fail(err, SHOAL_ERR_CAPACITY,
                    "recording %s: frame %" PRId64 " (%zu bytes%s) would take the file past its limit of %s "
                    "(%" PRIu64 " bytes written); the recording is intact: close it, and go on in "
                    "another file",
                    r->path, r->frames, bytes + nav_bytes, nav != NULL ? ", with its navigation fields" : "",
                    limit, r->offset);
    }
    if (nav != NULL) {
        status = write_bytes(r, nav, nav_bytes, err);
        free(nav);
        if (status != SHOAL_OK) return status;
        r->nav_written = 1;
        r->nav_revision = nav_revision;
    }
    put_u32(p + bytes - 4, crc32(r->crc, p, bytes - 4));
    status = write_bytes(r, p, bytes, err);
    if (status != SHOAL_OK) return status;
    r->frames += 1;
    r->last_step = step;
    /* This frame is now the last one; the oldest's arrays take the next. */
    sorted_frame_t oldest = r->sorted[2];
    r->sorted[2] = r->sorted[1];
    r->sorted[1] = r->sorted[0];
    r->sorted[0] = oldest;
    return SHOAL_OK;
}

int64_t shoal_recording_frames_written(const shoal_recorder_t* r) { return r != NULL ? r->frames : 0; }

shoal_status_t shoal_recording_set_max_bytes(shoal_recorder_t* r, uint64_t max_bytes)
{
    if (r == NULL || max_bytes > SHOAL_RECORDING_MAX_FILE || max_bytes < r->offset + REC_END_BYTES)
        return SHOAL_ERR_INVALID_ARGUMENT;
    r->max_bytes = max_bytes;
    return SHOAL_OK;
}

uint64_t shoal_recording_bytes_written(const shoal_recorder_t* r) { return r != NULL ? r->offset : 0; }

shoal_status_t shoal_recording_close(shoal_recorder_t* r, shoal_error_t* err)
{
    if (r == NULL) return SHOAL_OK;
    shoal_status_t status = SHOAL_OK;
    if (r->broken) {
        status = fail(err, SHOAL_ERR_IO, "recording %s: an earlier write failed", r->path);
    } else if ((status = write_geometry(r, NULL, err)) == SHOAL_OK) {
        uint8_t end[REC_END_BYTES];
        put_u32(end, REC_TAG_END);
        put_u32(end + 4, (uint32_t)r->frames);
        put_u32(end + 8, crc32(r->crc, end, 8));
        status = write_bytes(r, end, sizeof end, err);
    }
    if (fclose(r->file) != 0 && status == SHOAL_OK)
        status = fail(err, SHOAL_ERR_IO, "recording %s: close failed: %s", r->path, strerror(errno));
    recorder_free(r);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                    */
/* ------------------------------------------------------------------------ */

/* A frame found valid by the scan at open: where it is and what its fixed
 * part says (40 bytes a frame, whatever its agents). */
typedef struct frame_span_t {
    uint64_t offset;
    uint64_t bytes; /* the whole record, CRC included */
    uint64_t step;
    double time;
    uint32_t count;
} frame_span_t;

/* A navigation field record found valid by the scan (version 5): where it
 * is and its fixed fields. */
typedef struct nav_span_t {
    uint64_t offset;
    uint64_t bytes;             /* the whole record, CRC included */
    shoal_recording_nav_t info; /* arrays NULL */
} nav_span_t;

/* One decoded frame. The reader keeps three: a frame is predicted from the
 * two before it (version 3), and a consumer may want a frame with its
 * neighbours (the CSV export's speeds). */
typedef struct frame_slot_t {
    int32_t index; /* the frame it holds, -1 for none */
    uint64_t used; /* when it was last handed out or decoded (the reader's clock) */
    uint32_t* u32; /* ids[n], generations[n], groups[n] */
    size_t u32_capacity;
    float* f32; /* positions, then headings or quaternions */
    size_t f32_capacity;
    uint64_t* u64; /* version 4: global ids[n] */
    size_t u64_capacity;
} frame_slot_t;

struct shoal_recording_reader_t {
    /* The bytes: the caller's memory, or a file read with pread into buf. */
    const uint8_t* mem;
    FILE* file;
    int fd;
    uint64_t size;
    char* source; /* the name in messages */
    uint8_t* buf;
    size_t buf_capacity;
    shoal_error_t* err; /* where the current call's error goes */
    uint32_t crc[256];
    /* Read at open. */
    shoal_recording_header_t header;
    char* strings; /* the header's four strings, NUL-terminated, back to back */
    int32_t version;
    int32_t dims;
    int has_geometry; /* version 2 and the geometry record was read */
    shoal_recording_geometry_t geometry;
    float* walls;
    shoal_recording_obstacle_t* obstacles;
    frame_span_t* spans;
    int32_t frame_count;
    nav_span_t* navs; /* version 5: the field records, in file order */
    int32_t nav_count, nav_capacity;
    int complete;
    char damage[512];
    /* The field record decoded last (shoal_recording_reader_nav). */
    uint8_t* nav_scratch;
    size_t nav_scratch_capacity;
    uint8_t* nav_blocked;
    size_t nav_blocked_capacity;
    float* nav_fields;
    size_t nav_fields_capacity;
    float* nav_error;
    int32_t* nav_goals;
    size_t nav_goal_capacity;
    /* Decoding. */
    ZSTD_DCtx* zstd;
    uint8_t* planes; /* one frame's decompressed payload */
    size_t planes_capacity;
    int32_t* match1;
    int32_t* match2;
    size_t match_capacity;
    frame_slot_t slots[3];
    uint64_t clock;
    int32_t frontier; /* version 3: the last frame decoded in sequence from frame 0, or -1 */
    int32_t bad_at;   /* the first frame whose payload failed (PARSE or IO), frame_count if none */
    shoal_status_t bad_status;
    char bad_message[512];
};

typedef shoal_recording_reader_t reader_t;

#define SOURCE_FAIL(rd, status, ...) fail((rd)->err, status, __VA_ARGS__)

/* Grow `*p` (of `*capacity` elements of `size` bytes) to hold `needed`;
 * 0 when out of memory. Doubles, so that appending stays linear. */
static int grow_pool(void** p, size_t* capacity, size_t needed, size_t size)
{
    if (needed <= *capacity) return 1;
    size_t want = *capacity < 1024 ? 1024 : *capacity;
    while (want < needed) want = want <= SIZE_MAX / 2 ? want * 2 : needed;
    if (want > SIZE_MAX / size) return 0;
    void* q = realloc(*p, want * size);
    if (q == NULL) return 0;
    *p = q;
    *capacity = want;
    return 1;
}

/* Bytes [off, off + n) of the recording (n <= size - off): a pointer into
 * the caller's memory, or into rd->buf, read from the file, and valid until
 * the next fetch. Reading a file a record at a time keeps the reader's
 * memory to the largest record, whatever the file's size. */
static shoal_status_t fetch(reader_t* rd, uint64_t off, uint64_t n, const uint8_t** out)
{
    *out = NULL;
    if (rd->mem != NULL) {
        *out = rd->mem + off;
        return SHOAL_OK;
    }
    if (n >= SIZE_MAX || !grow_pool((void**)&rd->buf, &rd->buf_capacity, (size_t)n + 1, 1))
        return SOURCE_FAIL(rd, SHOAL_ERR_OUT_OF_MEMORY,
                           "recording %s: out of memory for the %" PRIu64 " bytes at byte %" PRIu64,
                           rd->source, n, off);
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(rd->fd, rd->buf + got, (size_t)n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return SOURCE_FAIL(rd, SHOAL_ERR_IO, "recording %s: read failed at byte %" PRIu64 ": %s",
                               rd->source, off + got,
                               k < 0 ? strerror(errno) : "the file is shorter than when it was opened");
        got += (size_t)k;
    }
    *out = rd->buf;
    return SHOAL_OK;
}

static shoal_status_t parse_header(reader_t* rd, uint64_t* out_size)
{
    const uint64_t size = rd->size;
    const char* src = rd->source;
    const uint8_t* d = NULL;
    shoal_status_t fetched = fetch(rd, 0, size < REC_HEADER_FIXED + 4 ? size : REC_HEADER_FIXED + 4, &d);
    if (fetched != SHOAL_OK) return fetched;
    size_t have = size < sizeof rec_magic ? (size_t)size : sizeof rec_magic;
    /* A stub of another file is "not a recording"; a cut-off one is "truncated". */
    if (memcmp(d, rec_magic, have) != 0)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE, "recording %s: not a shoal recording (bad magic at byte 0)",
                           src);
    if (size < 12)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: truncated in the header: the file has %" PRIu64 " bytes", src,
                           size);
    uint32_t version = get_u32(d + 8);
    if (version < SHOAL_RECORDING_MIN_VERSION || version > SHOAL_RECORDING_VERSION)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: byte 8: unsupported version %" PRIu32
                           " (this build reads versions %d to %d)",
                           src, version, SHOAL_RECORDING_MIN_VERSION, SHOAL_RECORDING_VERSION);
    rd->version = (int32_t)version;
    if (size < REC_HEADER_FIXED + 4)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: truncated in the header: the file has %" PRIu64
                           " bytes, a header at least %u",
                           src, size, REC_HEADER_FIXED + 4);
    const uint32_t limits[4] = {REC_MAX_UNITS, REC_MAX_NAME, REC_MAX_GROUPS, REC_MAX_SCENARIO};
    const char* what[4] = {"units", "scenario name", "group names", "scenario text"};
    uint32_t lengths[4];
    uint64_t strings = 0;
    for (int i = 0; i < 4; ++i) {
        lengths[i] = get_u32(d + 68 + 4 * i);
        if (lengths[i] > limits[i])
            return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                               "recording %s: byte %d: %s length %" PRIu32 " is above its limit %" PRIu32
                               " (corrupt header)",
                               src, 68 + 4 * i, what[i], lengths[i], limits[i]);
        strings += lengths[i];
    }
    uint64_t header_size = align4(REC_HEADER_FIXED + strings) + 4u;
    if (get_u32(d + 12) != header_size)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: byte 12: header size %" PRIu32
                           " does not match its string lengths (%" PRIu64 "; corrupt header)",
                           src, get_u32(d + 12), header_size);
    if (size < header_size)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: truncated in the header: it needs %" PRIu64
                           " bytes, the file has %" PRIu64,
                           src, header_size, size);
    fetched = fetch(rd, 0, header_size, &d);
    if (fetched != SHOAL_OK) return fetched;
    uint32_t stored = get_u32(d + header_size - 4);
    uint32_t computed = crc32(rd->crc, d, (size_t)header_size - 4);
    if (stored != computed)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: byte %" PRIu64 ": header checksum mismatch (stored %08" PRIx32
                           ", computed %08" PRIx32 ")",
                           src, header_size - 4, stored, computed);

    shoal_recording_header_t* h = &rd->header;
    *h = shoal_recording_default_header();
    uint32_t dims = get_u32(d + 16);
    uint32_t flags = get_u32(d + 20);
    uint32_t every = get_u32(d + 28);
    uint32_t wrap = get_u32(d + 40);
    h->dt = get_f32(d + 24);
    h->steps_hint = get_u64(d + 32);
    for (int k = 0; k < 3; ++k) {
        h->bounds_min[k] = get_f32(d + 44 + 4 * k);
        h->bounds_max[k] = get_f32(d + 56 + 4 * k);
    }
    const char* bad = NULL;
    int at = 0;
    if (dims != 2 && dims != 3) {
        bad = "dimensions must be 2 or 3";
        at = 16;
    } else if (flags != 0) {
        bad = "unknown flags";
        at = 20;
    } else if (!isfinite(h->dt) || h->dt <= 0.0f) {
        bad = "dt must be finite and > 0";
        at = 24;
    } else if (every < 1 || every > INT32_MAX) {
        bad = "record_every out of range";
        at = 28;
    } else if (wrap > 1) {
        bad = "wrap must be 0 or 1";
        at = 40;
    }
    for (int k = 0; bad == NULL && k < 3; ++k)
        if (!isfinite(h->bounds_min[k]) || !isfinite(h->bounds_max[k])) {
            bad = "bounds are not finite";
            at = 44;
        }
    if (bad != NULL) return SOURCE_FAIL(rd, SHOAL_ERR_PARSE, "recording %s: byte %d: %s", src, at, bad);
    h->dimensions = (int32_t)dims;
    h->record_every = (int32_t)every;
    h->wrap = (int32_t)wrap;
    rd->dims = (int32_t)dims;

    rd->strings = malloc((size_t)strings + 4);
    if (rd->strings == NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", src);
    const char** fields[4] = {&h->units, &h->scenario_name, &h->group_names, &h->scenario_text};
    size_t from = REC_HEADER_FIXED, to = 0;
    for (int i = 0; i < 4; ++i) {
        memcpy(rd->strings + to, d + from, lengths[i]);
        rd->strings[to + lengths[i]] = '\0';
        *fields[i] = rd->strings + to;
        from += lengths[i];
        to += (size_t)lengths[i] + 1;
    }
    *out_size = header_size;
    return SHOAL_OK;
}

/* Decode the checked geometry record `p` (at byte `off`). */
static shoal_status_t decode_geometry(reader_t* rd, const uint8_t* p)
{
    const size_t w = get_u32(p + 16), b = get_u32(p + 20);
    /* Each took 16 or 32 bytes of the file: these fit as surely as it did. */
    rd->walls = malloc(4 * w * sizeof *rd->walls + 1);
    rd->obstacles = malloc(b * sizeof *rd->obstacles + 1);
    if (rd->walls == NULL || rd->obstacles == NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", rd->source);
    const uint8_t* seg = p + REC_GEOMETRY_FIXED;
    for (size_t i = 0; i < 4 * w; ++i) rd->walls[i] = get_f32(seg + 4 * i);
    const uint8_t* ids = seg + REC_SEGMENT_BYTES * w;
    const uint8_t* centers = ids + 4 * b;
    const uint8_t* radii = centers + 12 * b;
    const uint8_t* velocities = radii + 4 * b;
    for (size_t i = 0; i < b; ++i) {
        shoal_recording_obstacle_t* o = &rd->obstacles[i];
        o->id = (int32_t)get_u32(ids + 4 * i);
        for (size_t k = 0; k < 3; ++k) {
            o->center[k] = get_f32(centers + 12 * i + 4 * k);
            o->velocity[k] = get_f32(velocities + 12 * i + 4 * k);
        }
        o->radius = get_f32(radii + 4 * i);
    }
    rd->geometry.time = get_f64(p + 8);
    rd->geometry.wall_count = (int32_t)w;
    rd->geometry.walls = rd->walls;
    rd->geometry.obstacle_count = (int32_t)b;
    rd->geometry.obstacles = rd->obstacles;
    rd->has_geometry = 1;
    return SHOAL_OK;
}

/* The geometry record at `off` (version 2): checked, then decoded. On
 * success sets the offset after it. A file that ends inside it sets *cut
 * (a crash before the first frame: ALLOW_TRUNCATED keeps the header);
 * anything else wrong with it is damage, an error in every mode. */
static shoal_status_t read_geometry(reader_t* rd, uint64_t off, uint64_t* next, int* cut)
{
    const uint64_t left = rd->size - off;
    const char* src = rd->source;
    *cut = 0;
    const uint8_t* p = NULL;
    shoal_status_t fetched = fetch(rd, off, left < REC_GEOMETRY_FIXED ? left : REC_GEOMETRY_FIXED, &p);
    if (fetched != SHOAL_OK) return fetched;
    if (left >= 4 && get_u32(p) != REC_TAG_GEOMETRY)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: byte %" PRIu64
                           ": expected the geometry record (walls and obstacles), found something "
                           "else (corrupt)",
                           src, off);
    if (left < REC_GEOMETRY_FIXED) {
        *cut = 1;
        if (left == 0)
            return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                               "recording %s: truncated after the header (no complete frame): no "
                               "geometry record at byte %" PRIu64 " (the writer wrote no frame)",
                               src, off);
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: truncated after the header (no complete frame): the "
                           "geometry record at byte %" PRIu64 " is cut off after %" PRIu64 " bytes",
                           src, off, left);
    }
    uint32_t segments = get_u32(p + 16), obstacles = get_u32(p + 20);
    if (segments > INT32_MAX || obstacles > INT32_MAX)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: the geometry record at byte %" PRIu64 ": byte %" PRIu64
                           ": %s count %" PRIu32 " is above 2^31 - 1 (corrupt)",
                           src, off, off + (segments > INT32_MAX ? 16 : 20),
                           segments > INT32_MAX ? "wall segment" : "obstacle",
                           segments > INT32_MAX ? segments : obstacles);
    uint64_t bytes = geometry_bytes(segments, obstacles);
    if (bytes > left) {
        *cut = 1;
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: truncated after the header (no complete frame): the "
                           "geometry record at byte %" PRIu64 " needs %" PRIu64 " bytes for %" PRIu32
                           " wall segments and %" PRIu32 " obstacles, the file ends %" PRIu64 " bytes later",
                           src, off, bytes, segments, obstacles, left);
    }
    fetched = fetch(rd, off, bytes, &p);
    if (fetched != SHOAL_OK) return fetched;
    uint32_t stored = get_u32(p + bytes - 4);
    uint32_t computed = crc32(rd->crc, p, (size_t)bytes - 4);
    if (stored != computed)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: the geometry record at byte %" PRIu64
                           ": checksum mismatch (stored %08" PRIx32 ", computed %08" PRIx32
                           "): the walls and obstacles are corrupt",
                           src, off, stored, computed);
    const char* bad = NULL;
    uint64_t at = off;
    const uint8_t* seg = p + REC_GEOMETRY_FIXED;
    const uint8_t* ids = seg + (size_t)REC_SEGMENT_BYTES * segments;
    const uint8_t* centers = ids + 4 * (size_t)obstacles;
    const uint8_t* radii = centers + 12 * (size_t)obstacles;
    const uint8_t* velocities = radii + 4 * (size_t)obstacles;
    if (get_u32(p + 4) != 0) {
        bad = "unknown flags";
        at = off + 4;
    } else if (!isfinite(get_f64(p + 8))) {
        bad = "time is not finite";
        at = off + 8;
    }
    for (uint64_t i = 0; bad == NULL && i < 4 * (uint64_t)segments; ++i)
        if (!isfinite(get_f32(seg + 4 * i))) {
            bad = "a wall coordinate is not finite";
            at = off + (uint64_t)(seg - p) + 4 * i;
        }
    for (uint32_t i = 0; bad == NULL && i < obstacles; ++i) {
        uint32_t id = get_u32(ids + 4 * i);
        float radius = get_f32(radii + 4 * i);
        if (id > INT32_MAX || (i > 0 && id <= get_u32(ids + 4 * (i - 1)))) {
            bad = "obstacle ids are not ascending";
            at = off + (uint64_t)(ids - p) + 4 * i;
        } else if (!isfinite(radius) || radius < 0.0f) {
            bad = "an obstacle radius is negative or not finite";
            at = off + (uint64_t)(radii - p) + 4 * i;
        }
        for (int k = 0; bad == NULL && k < 3; ++k) {
            if (!isfinite(get_f32(centers + 12 * i + 4 * (uint32_t)k))) {
                bad = "an obstacle center is not finite";
                at = off + (uint64_t)(centers - p) + 12 * i + 4 * (uint32_t)k;
            } else if (!isfinite(get_f32(velocities + 12 * i + 4 * (uint32_t)k))) {
                bad = "an obstacle velocity is not finite";
                at = off + (uint64_t)(velocities - p) + 12 * i + 4 * (uint32_t)k;
            }
        }
    }
    if (bad != NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: the geometry record at byte %" PRIu64 ": byte %" PRIu64 ": %s", src,
                           off, at, bad);
    *next = off + bytes;
    return decode_geometry(rd, p);
}

/* "truncated after frame N (N+1 complete frames)" or "after the header". */
static void after_text(char* buf, size_t size, int32_t frames)
{
    if (frames == 0)
        snprintf(buf, size, "truncated after the header (no complete frame)");
    else
        snprintf(buf, size, "truncated after frame %d (%d complete frames)", (int)(frames - 1), (int)frames);
}

/* Check the frame at `off` (index `index`) as far as it can be without
 * decoding it: sizes, checksum, index, order, flags, padding, and in
 * versions 1 and 2 every id and value. On success set its span and the
 * offset after it. A version 3 payload is checked when it is decoded
 * (decode_frame3), which needs the frames before it. */
static shoal_status_t check_frame(reader_t* rd, uint64_t off, int32_t index, uint64_t* last_step,
                                  double* last_time, frame_span_t* span, uint64_t* next)
{
    const uint64_t left = rd->size - off;
    const char* src = rd->source;
    const int v3 = rd->version >= 3; /* or 4: compressed */
    const uint64_t fixed = v3 ? REC_FRAME3_FIXED : REC_FRAME_FIXED;
    char cut[96];
    after_text(cut, sizeof cut, index);
    if (left < fixed)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: %s: frame %d at byte %" PRIu64 " is cut off after %" PRIu64
                           " bytes",
                           src, cut, (int)index, off, left);
    const uint8_t* p = NULL;
    shoal_status_t fetched = fetch(rd, off, fixed, &p);
    if (fetched != SHOAL_OK) return fetched;
    uint32_t index_stored = get_u32(p + 4);
    uint64_t step = get_u64(p + 8);
    double time = get_f64(p + 16);
    uint32_t count = get_u32(p + 24);
    if (count > INT32_MAX)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: frame %d at byte %" PRIu64 ": byte %" PRIu64
                           ": agent count %" PRIu32 " is above 2^31 - 1 (corrupt)",
                           src, (int)index, off, off + 24, count);
    uint64_t bytes = frame_bytes(rd->dims, count);
    uint32_t compressed = 0;
    if (v3) {
        /* The declared payload size must be what the count needs: with
         * the padding rule, the bytes the file must have for it bound
         * what it may decompress to. */
        uint64_t decoded = count * payload_bytes(rd->version, rd->dims);
        if (get_u32(p + 32) != decoded)
            return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                               "recording %s: frame %d at byte %" PRIu64 ": byte %" PRIu64
                               ": declared payload size %" PRIu32 " is not what %" PRIu32
                               " agents need (%" PRIu64 "; corrupt)",
                               src, (int)index, off, off + 32, get_u32(p + 32), count, decoded);
        compressed = get_u32(p + 36);
        bytes = rec_frame3_bytes(decoded, compressed);
    }
    if (bytes > left)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: %s: frame %d at byte %" PRIu64 " needs %" PRIu64
                           " bytes for %" PRIu32 " agents, the file ends %" PRIu64 " bytes later",
                           src, cut, (int)index, off, bytes, count, left);
    fetched = fetch(rd, off, bytes, &p);
    if (fetched != SHOAL_OK) return fetched;
    uint32_t stored = get_u32(p + bytes - 4);
    uint32_t computed = crc32(rd->crc, p, (size_t)bytes - 4);
    if (stored != computed)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: frame %d at byte %" PRIu64 ": checksum mismatch (stored %08" PRIx32
                           ", computed %08" PRIx32 "): the frame is corrupt",
                           src, (int)index, off, stored, computed);
    const char* bad = NULL;
    uint64_t at = off;
    if (index_stored != (uint32_t)index) {
        bad = "wrong frame index";
        at = off + 4;
    } else if (get_u32(p + 28) != 0) {
        bad = "unknown flags";
        at = off + 28;
    } else if (index > 0 && step < *last_step) {
        bad = "step goes back";
        at = off + 8;
    } else if (!isfinite(time) || (index > 0 && time < *last_time)) {
        bad = "time is not finite or goes back";
        at = off + 16;
    }
    if (v3) {
        const uint64_t padding_at = REC_FRAME3_FIXED + (uint64_t)compressed;
        for (uint64_t i = padding_at; bad == NULL && i < bytes - 4; ++i)
            if (p[i] != 0) {
                bad = "nonzero padding after the compressed payload";
                at = off + i;
            }
    } else {
        const uint8_t* ids = p + REC_FRAME_FIXED;
        const uint8_t* gens = ids + 4 * (size_t)count;
        const uint8_t* floats = gens + 8 * (size_t)count; /* after the groups */
        for (uint32_t i = 0; bad == NULL && i < count; ++i) {
            uint32_t id = get_u32(ids + 4 * i);
            if (id == 0 || (i > 0 && id <= get_u32(ids + 4 * (i - 1)))) {
                bad = "agent ids are not ascending and nonzero";
                at = off + REC_FRAME_FIXED + 4 * i;
            } else if (get_u32(gens + 4 * i) > 0xFFFFu) {
                bad = "generation above 65535";
                at = off + (uint64_t)(gens - p) + 4 * i;
            }
        }
        uint64_t float_count = count * (uint64_t)rec_floats_per_agent(rd->dims);
        for (uint64_t i = 0; bad == NULL && i < float_count; ++i) {
            if (!isfinite(get_f32(floats + 4 * i))) {
                bad = "a position or orientation is not finite";
                at = off + (uint64_t)(floats - p) + 4 * i;
            }
        }
    }
    if (bad != NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: frame %d at byte %" PRIu64 ": byte %" PRIu64 ": %s", src,
                           (int)index, off, at, bad);
    *last_step = step;
    *last_time = time;
    span->offset = off;
    span->bytes = bytes;
    span->step = step;
    span->time = time;
    span->count = count;
    *next = off + bytes;
    return SHOAL_OK;
}

#define NAV_WHERE "recording %s: the navigation field record at byte %" PRIu64 " (before frame %d)"

/* Check the field record at `off` (version 5), before frame `frames`, as
 * far as it can be without decoding it: sizes, checksum, fixed fields,
 * order, goal table, padding. On success append its span, move the step
 * and time the next frame may not go back from, and set the offset after
 * it. */
static shoal_status_t check_nav(reader_t* rd, uint64_t off, int32_t frames, uint64_t* last_step,
                                double* last_time, uint64_t* next)
{
    const uint64_t left = rd->size - off;
    const char* src = rd->source;
    char cut[96];
    after_text(cut, sizeof cut, frames);
    if (left < REC_NAV_FIXED)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: %s: the navigation field record at byte %" PRIu64
                           " is cut off after %" PRIu64 " bytes",
                           src, cut, off, left);
    const uint8_t* p = NULL;
    shoal_status_t fetched = fetch(rd, off, REC_NAV_FIXED, &p);
    if (fetched != SHOAL_OK) return fetched;
    const uint32_t goals = get_u32(p + 12), nx = get_u32(p + 44), ny = get_u32(p + 48);
    const uint32_t decoded = get_u32(p + 52), compressed = get_u32(p + 56);
    const char* bad = NULL;
    uint64_t at = off;
    if (goals > INT32_MAX) {
        bad = "goal count above 2^31 - 1";
        at = off + 12;
    } else if (nx > INT32_MAX || ny > INT32_MAX || (uint64_t)nx * ny > INT32_MAX || (nx == 0) != (ny == 0)) {
        bad = "grid size out of range";
        at = off + 44;
    } else if ((uint64_t)decoded != rec_nav_decoded((uint64_t)nx * ny, goals)) {
        bad = "declared payload size is not what the grid and goals need";
        at = off + 52;
    }
    if (bad != NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE, NAV_WHERE ": byte %" PRIu64 ": %s (corrupt)", src, off,
                           (int)frames, at, bad);
    const uint64_t head = REC_NAV_FIXED + (uint64_t)REC_NAV_GOAL_BYTES * goals;
    const uint64_t bytes = head + rec_frame3_stored(decoded, compressed) + 4u;
    if (bytes > left)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: %s: the navigation field record at byte %" PRIu64 " needs %" PRIu64
                           " bytes, the file ends %" PRIu64 " bytes later",
                           src, cut, off, bytes, left);
    fetched = fetch(rd, off, bytes, &p);
    if (fetched != SHOAL_OK) return fetched;
    uint32_t stored = get_u32(p + bytes - 4);
    uint32_t computed = crc32(rd->crc, p, (size_t)bytes - 4);
    if (stored != computed)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           NAV_WHERE ": checksum mismatch (stored %08" PRIx32 ", computed %08" PRIx32
                                     "): the fields are corrupt",
                           src, off, (int)frames, stored, computed);
    const uint64_t step = get_u64(p + 16);
    const double time = get_f64(p + 24);
    const float ox = get_f32(p + 32), oy = get_f32(p + 36), cell = get_f32(p + 40);
    if (get_u32(p + 4) != 0) {
        bad = "unknown flags";
        at = off + 4;
    } else if (get_u32(p + 8) != (uint32_t)frames) {
        bad = "the frame index is not the next frame's";
        at = off + 8;
    } else if (rd->nav_count > 0 && rd->navs[rd->nav_count - 1].info.frame == frames) {
        bad = "a second navigation field record before the same frame";
        at = off;
    } else if (frames > 0 && step < *last_step) {
        bad = "step goes back";
        at = off + 16;
    } else if (!isfinite(time) || (frames > 0 && time < *last_time)) {
        bad = "time is not finite or goes back";
        at = off + 24;
    } else if (!isfinite(ox) || !isfinite(oy)) {
        bad = "the grid's origin is not finite";
        at = off + 32;
    } else if (nx > 0 ? !(isfinite(cell) && cell > 0.0f) : (cell != 0.0f || goals != 0)) {
        bad = nx > 0 ? "the cell size is not finite and > 0" : "a record without a grid has a cell or goals";
        at = off + 40;
    }
    for (uint32_t k = 0; bad == NULL && k < goals; ++k) {
        const uint8_t* g = p + REC_NAV_FIXED + (size_t)REC_NAV_GOAL_BYTES * k;
        const float lo = get_f32(g + 4), hi = get_f32(g + 8);
        at = off + (uint64_t)(g - p);
        if (get_u32(g) > INT32_MAX || (k > 0 && get_u32(g) <= get_u32(g - REC_NAV_GOAL_BYTES)))
            bad = "goal ids are not ascending";
        else if (!isfinite(lo) || !isfinite(hi) || !(lo >= 0.0f) || lo > hi)
            bad = "a field's range is not finite, at least 0 and ordered";
    }
    for (uint64_t i = head + compressed; bad == NULL && i < bytes - 4; ++i)
        if (p[i] != 0) {
            bad = "nonzero padding after the compressed payload";
            at = off + i;
        }
    if (bad != NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE, NAV_WHERE ": byte %" PRIu64 ": %s", src, off, (int)frames, at,
                           bad);
    if (rd->nav_count == rd->nav_capacity) {
        int32_t grown = rd->nav_capacity < 16 ? 16 : rd->nav_capacity * 2;
        nav_span_t* more =
            rd->nav_capacity < INT32_MAX / 2 ? realloc(rd->navs, (size_t)grown * sizeof *more) : NULL;
        if (more == NULL) return SOURCE_FAIL(rd, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", src);
        rd->navs = more;
        rd->nav_capacity = grown;
    }
    nav_span_t* span = &rd->navs[rd->nav_count++];
    memset(span, 0, sizeof *span);
    span->offset = off;
    span->bytes = bytes;
    span->info.frame = frames;
    span->info.step = step;
    span->info.time = time;
    span->info.origin[0] = ox;
    span->info.origin[1] = oy;
    span->info.cell = cell;
    span->info.nx = (int32_t)nx;
    span->info.ny = (int32_t)ny;
    span->info.goal_count = (int32_t)goals;
    *last_step = step;
    *last_time = time;
    *next = off + bytes;
    return SHOAL_OK;
}

/* The end record at `off` after `frames` frames. */
static shoal_status_t check_end(reader_t* rd, uint64_t off, int32_t frames)
{
    char cut[96];
    after_text(cut, sizeof cut, frames);
    if (rd->size - off < REC_END_BYTES)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: %s: the end record at byte %" PRIu64 " is cut off", rd->source, cut,
                           off);
    const uint8_t* p = NULL;
    shoal_status_t fetched = fetch(rd, off, REC_END_BYTES, &p);
    if (fetched != SHOAL_OK) return fetched;
    if (get_u32(p + 8) != crc32(rd->crc, p, 8) || get_u32(p + 4) != (uint32_t)frames)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: the end record at byte %" PRIu64
                           " is corrupt (it must count %d frames)",
                           rd->source, off, (int)frames);
    if (rd->size - off > REC_END_BYTES)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: byte %" PRIu64 ": %" PRIu64
                           " bytes of trailing data after the end record",
                           rd->source, off + REC_END_BYTES, rd->size - off - REC_END_BYTES);
    return SHOAL_OK;
}

/* Walk the frames. Stops at the end record (complete) or the first problem:
 * the error is in rd->err, and rd->frame_count frames before it are valid. */
static shoal_status_t scan_frames(reader_t* rd, uint64_t off)
{
    int32_t n = 0, capacity = 0;
    uint64_t last_step = 0;
    double last_time = 0.0;
    rd->complete = 0;
    for (;;) {
        rd->frame_count = n;
        if (off == rd->size) {
            char cut[96];
            after_text(cut, sizeof cut, n);
            return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                               "recording %s: %s: no end record at byte %" PRIu64
                               " (the writer did not close it)",
                               rd->source, cut, off);
        }
        const uint8_t* p = NULL;
        shoal_status_t fetched = fetch(rd, off, rd->size - off >= 4 ? 4 : 0, &p);
        if (fetched != SHOAL_OK) return fetched;
        uint32_t tag = rd->size - off >= 4 ? get_u32(p) : 0;
        if (tag == REC_TAG_END) {
            if (rd->nav_count > 0 && rd->navs[rd->nav_count - 1].info.frame == n)
                return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                                   "recording %s: the navigation field record at byte %" PRIu64
                                   " is followed by the end record, not by a frame (corrupt)",
                                   rd->source, rd->navs[rd->nav_count - 1].offset);
            shoal_status_t status = check_end(rd, off, n);
            rd->complete = status == SHOAL_OK;
            return status;
        }
        if (tag == REC_TAG_NAV && rd->version >= 5) {
            shoal_status_t status = check_nav(rd, off, n, &last_step, &last_time, &off);
            if (status != SHOAL_OK) return status;
            continue;
        }
        if (tag != REC_TAG_FRAME) {
            char cut[96];
            after_text(cut, sizeof cut, n);
            if (rd->size - off < 4)
                return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                                   "recording %s: %s: frame %d at byte %" PRIu64 " is cut off", rd->source,
                                   cut, (int)n, off);
            return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                               "recording %s: byte %" PRIu64 ": expected frame %d%s or the end record, found "
                               "neither (corrupt)",
                               rd->source, off, (int)n,
                               rd->version >= 5 ? ", a navigation field record" : "");
        }
        if (n == INT32_MAX)
            return SOURCE_FAIL(rd, SHOAL_ERR_PARSE, "recording %s: more than %d frames", rd->source,
                               INT32_MAX);
        if (n == capacity) {
            int32_t grown = capacity < 64 ? 64 : capacity < INT32_MAX / 2 ? capacity * 2 : INT32_MAX;
            frame_span_t* more = realloc(rd->spans, (size_t)grown * sizeof *more);
            if (more == NULL)
                return SOURCE_FAIL(rd, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", rd->source);
            rd->spans = more;
            capacity = grown;
        }
        shoal_status_t status = check_frame(rd, off, n, &last_step, &last_time, &rd->spans[n], &off);
        if (status != SHOAL_OK) return status;
        n += 1;
    }
}

/* Versions 3 and 4: decompress the payload of the checked frame `p`
 * (index `index`, at byte `off`, `count` agents), undo the prediction from
 * the frames before it (`last`, `before`: NULL where there is none) and
 * write its arrays into `slot`, checking every value. */
static shoal_status_t decode_frame3(reader_t* rd, const uint8_t* p, uint64_t off, int32_t index,
                                    uint32_t count, const rec_agents_t* last, const rec_agents_t* before,
                                    frame_slot_t* slot)
{
    const char* src = rd->source;
    const int32_t dims = rd->dims;
    const int f = rec_floats_per_agent(dims);
    const int v4 = rd->version >= 4;
    const size_t n = count, words = n * (3u + (v4 ? 2u : 0u) + (size_t)f), decoded = 4 * words;
    const size_t compressed = get_u32(p + 36);
    const uint8_t* z = p + REC_FRAME3_FIXED;
    /* Bounded by the frame: decoded <= REC_MAX_EXPANSION times its stored
     * bytes, which the file has (check_frame). */
    if (rd->zstd == NULL && (rd->zstd = ZSTD_createDCtx()) == NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", src);
    size_t match1_capacity = rd->match_capacity, match2_capacity = rd->match_capacity;
    int ok = grow_pool((void**)&rd->planes, &rd->planes_capacity, decoded + 1, 1) &&
             grow_pool((void**)&rd->match1, &match1_capacity, n + 1, 4) &&
             grow_pool((void**)&rd->match2, &match2_capacity, n + 1, 4);
    rd->match_capacity = match1_capacity < match2_capacity ? match1_capacity : match2_capacity;
    if (!ok)
        return SOURCE_FAIL(rd, SHOAL_ERR_OUT_OF_MEMORY,
                           "recording %s: out of memory for frame %d (%" PRIu32 " agents)", src, (int)index,
                           count);
    const char* bad = NULL;
    unsigned long long content = ZSTD_getFrameContentSize(z, compressed);
    size_t frame_size = ZSTD_findFrameCompressedSize(z, compressed);
    size_t got = 0;
    if (content == ZSTD_CONTENTSIZE_ERROR || ZSTD_isError(frame_size) || frame_size != compressed) {
        bad = "the compressed payload is not one zstd frame";
    } else if (content != (unsigned long long)decoded) {
        bad = "the zstd frame's content size is not the declared payload size";
    } else {
        got = ZSTD_decompressDCtx(rd->zstd, rd->planes, decoded + 1, z, compressed);
        if (ZSTD_isError(got))
            return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                               "recording %s: frame %d at byte %" PRIu64
                               ": the compressed payload at byte %" PRIu64 " does not decompress (zstd: %s)",
                               src, (int)index, off, off + REC_FRAME3_FIXED, ZSTD_getErrorName(got));
        if (got != decoded) bad = "the payload decompresses to another size than declared";
    }
    if (bad != NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: frame %d at byte %" PRIu64 ": byte %" PRIu64 ": %s", src,
                           (int)index, off, off + REC_FRAME3_FIXED, bad);

    const rec_agents_t none = {0};
    uint32_t* ids = slot->u32;
    uint32_t* generations = ids + n;
    uint32_t* groups = generations + n;
    float* floats = slot->f32;
    const uint8_t* planes = rd->planes;
    size_t w = 0;
    int64_t agent = -1; /* the agent whose value is wrong */
    uint32_t id = 0;
    for (size_t i = 0; i < n; ++i) {
        uint32_t delta = rec_get_planes(planes, words, w++);
        if (delta == 0 || delta > UINT32_MAX - id) {
            if (bad == NULL) {
                bad = "agent ids are not ascending and nonzero";
                agent = (int64_t)i;
            }
            break;
        }
        id += delta;
        ids[i] = id;
    }
    for (size_t i = 0; bad == NULL && i < n; ++i) {
        generations[i] = rec_get_planes(planes, words, n + i);
        if (generations[i] > 0xFFFFu) {
            bad = "generation above 65535";
            agent = (int64_t)i;
        }
    }
    if (bad == NULL) {
        w = 2 * n;
        for (size_t i = 0; i < n; ++i) groups[i] = rec_get_planes(planes, words, w++);
        rec_match_agents(n, ids, generations, last, rd->match1);
        rec_match_agents(n, ids, generations, before, rd->match2);
    }
    const rec_agents_t* p1 = last != NULL ? last : &none;
    const rec_agents_t* p2 = before != NULL ? before : &none;
    if (bad == NULL && v4) {
        /* An agent in the last frame (the same id and generation) keeps
         * its global id. */
        uint64_t* gids = slot->u64;
        for (size_t i = 0; i < n; ++i) {
            uint64_t zz = (uint64_t)rec_get_planes(planes, words, w + i) |
                          (uint64_t)rec_get_planes(planes, words, w + n + i) << 32;
            gids[i] = rec_unzigzag64(zz) + rec_predict_gid(p1, rd->match1[i], gids, i);
            if (rd->match1[i] >= 0 && gids[i] != p1->gids[rd->match1[i]]) {
                bad = "the global id differs from the same agent's in the frame before";
                agent = (int64_t)i;
                break;
            }
        }
        w += 2 * n;
    }
    for (int c = 0; bad == NULL && c < f; ++c)
        for (size_t i = 0; i < n; ++i) {
            uint32_t guess = rec_predict(dims, p1, rd->match1[i], p2, rd->match2[i], c);
            float v = rec_bits_float(rec_unzigzag(rec_get_planes(planes, words, w++)) + guess);
            if (!isfinite(v)) {
                bad = "a position or orientation is not finite";
                agent = (int64_t)i;
                break;
            }
            floats[rec_float_index(dims, n, i, c)] = v;
        }
    if (bad != NULL)
        return SOURCE_FAIL(rd, SHOAL_ERR_PARSE,
                           "recording %s: frame %d at byte %" PRIu64
                           ": in the payload (compressed at byte %" PRIu64 "), agent %" PRId64 " of %" PRIu32
                           ": %s",
                           src, (int)index, off, off + REC_FRAME3_FIXED, agent, count, bad);
    return SHOAL_OK;
}

static frame_slot_t* slot_holding(reader_t* rd, int32_t index)
{
    for (int s = 0; s < 3; ++s)
        if (rd->slots[s].index == index && index >= 0) return &rd->slots[s];
    return NULL;
}

static rec_agents_t slot_view(const reader_t* rd, const frame_slot_t* slot)
{
    const size_t n = rd->spans[slot->index].count;
    rec_agents_t v = {
        .n = n, .ids = slot->u32, .generations = slot->u32 + n, .floats = slot->f32, .gids = slot->u64};
    return v;
}

/* Decode frame `index` into a slot: the least recently used one that holds
 * neither of the two frames before it (its predictors in version 3, and
 * the neighbours a consumer reading in order may still be using). Version
 * 3 needs those two in their slots (the caller decodes in order). */
static shoal_status_t decode_into_slot(reader_t* rd, int32_t index)
{
    frame_slot_t* slot = NULL;
    for (int s = 0; s < 3; ++s) {
        frame_slot_t* c = &rd->slots[s];
        if (c->index >= 0 && (c->index == index - 1 || c->index == index - 2)) continue;
        if (slot == NULL || c->used < slot->used) slot = c;
    }
    const frame_span_t* span = &rd->spans[index];
    const size_t n = span->count;
    const size_t f = (size_t)rec_floats_per_agent(rd->dims);
    slot->index = -1;
    if (!grow_pool((void**)&slot->u32, &slot->u32_capacity, 3 * n + 1, 4) ||
        !grow_pool((void**)&slot->f32, &slot->f32_capacity, f * n + 1, 4) ||
        (rd->version >= 4 && !grow_pool((void**)&slot->u64, &slot->u64_capacity, n + 1, 8)))
        return SOURCE_FAIL(rd, SHOAL_ERR_OUT_OF_MEMORY,
                           "recording %s: out of memory for frame %d (%" PRIu32 " agents)", rd->source,
                           (int)index, span->count);
    const uint8_t* p = NULL;
    shoal_status_t status = fetch(rd, span->offset, span->bytes, &p);
    if (status != SHOAL_OK) return status;
    /* The scan checked this record; a file can change after that. */
    if (rd->mem == NULL && get_u32(p + span->bytes - 4) != crc32(rd->crc, p, (size_t)span->bytes - 4))
        return SOURCE_FAIL(rd, SHOAL_ERR_IO,
                           "recording %s: frame %d at byte %" PRIu64
                           " changed since the recording was opened (checksum mismatch)",
                           rd->source, (int)index, span->offset);
    if (rd->version >= 3) {
        const frame_slot_t* s1 = index >= 1 ? slot_holding(rd, index - 1) : NULL;
        const frame_slot_t* s2 = index >= 2 ? slot_holding(rd, index - 2) : NULL;
        rec_agents_t last = s1 != NULL ? slot_view(rd, s1) : (rec_agents_t){0};
        rec_agents_t before = s2 != NULL ? slot_view(rd, s2) : (rec_agents_t){0};
        status = decode_frame3(rd, p, span->offset, index, span->count, s1 != NULL ? &last : NULL,
                               s2 != NULL ? &before : NULL, slot);
        if (status != SHOAL_OK) return status;
    } else {
        const uint8_t* src = p + REC_FRAME_FIXED;
        for (size_t i = 0; i < 3 * n; ++i) slot->u32[i] = get_u32(src + 4 * i);
        src += 12 * n;
        for (size_t i = 0; i < f * n; ++i) slot->f32[i] = get_f32(src + 4 * i);
    }
    slot->index = index;
    slot->used = ++rd->clock;
    return SHOAL_OK;
}

static void reader_free(reader_t* rd)
{
    if (rd == NULL) return;
    if (rd->file != NULL) fclose(rd->file);
    free(rd->source);
    free(rd->buf);
    free(rd->strings);
    free(rd->walls);
    free(rd->obstacles);
    free(rd->spans);
    free(rd->navs);
    free(rd->nav_scratch);
    free(rd->nav_blocked);
    free(rd->nav_fields);
    free(rd->nav_error);
    free(rd->nav_goals);
    ZSTD_freeDCtx(rd->zstd);
    free(rd->planes);
    free(rd->match1);
    free(rd->match2);
    for (int s = 0; s < 3; ++s) {
        free(rd->slots[s].u32);
        free(rd->slots[s].f32);
        free(rd->slots[s].u64);
    }
    free(rd);
}

/* Open a reader on `mem` (size bytes) or on the open `file` (size bytes),
 * named `source` in messages: read the header and the geometry, and scan
 * the frames. */
static shoal_status_t reader_open(const uint8_t* mem, FILE* file, uint64_t size, const char* source,
                                  uint32_t flags, reader_t** out, shoal_error_t* err)
{
    *out = NULL;
    reader_t* rd = calloc(1, sizeof *rd);
    char* name = malloc(strlen(source) + 1);
    if (rd == NULL || name == NULL) {
        free(rd);
        free(name);
        if (file != NULL) fclose(file);
        return fail(err, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", source);
    }
    strcpy(name, source);
    rd->mem = mem;
    rd->file = file;
    rd->fd = file != NULL ? fileno(file) : -1;
    rd->size = size;
    rd->source = name;
    rd->err = err;
    rd->frontier = -1;
    for (int s = 0; s < 3; ++s) rd->slots[s].index = -1;
    crc_init(rd->crc);

    uint64_t off = 0;
    shoal_status_t status = size == 0 ? fail(err, SHOAL_ERR_PARSE, "recording %s: the file is empty", name)
                                      : parse_header(rd, &off);
    int scan = status == SHOAL_OK;
    /* Problems that ALLOW_TRUNCATED forgives go to a local error first, so
     * that the message can become the damage note instead. */
    shoal_error_t frame_err = {SHOAL_OK, ""};
    if (status == SHOAL_OK && rd->version >= 2) {
        int cut = 0;
        rd->err = &frame_err;
        status = read_geometry(rd, off, &off, &cut);
        rd->err = err;
        if (cut && status == SHOAL_ERR_PARSE && (flags & SHOAL_RECORDING_ALLOW_TRUNCATED)) {
            snprintf(rd->damage, sizeof rd->damage, "%s", frame_err.message);
            status = SHOAL_OK;
            scan = 0;
        } else if (status != SHOAL_OK) {
            fail(err, status, "%s", frame_err.message);
        }
        scan = scan && status == SHOAL_OK;
    }
    if (scan) {
        rd->err = &frame_err;
        status = scan_frames(rd, off);
        rd->err = err;
        if (status == SHOAL_ERR_PARSE && (flags & SHOAL_RECORDING_ALLOW_TRUNCATED)) {
            snprintf(rd->damage, sizeof rd->damage, "%s", frame_err.message);
            status = SHOAL_OK;
        } else if (status != SHOAL_OK) {
            fail(err, status, "%s", frame_err.message);
        }
    }
    if (status != SHOAL_OK) {
        reader_free(rd);
        return status;
    }
    rd->bad_at = rd->frame_count;
    /* A field record after the last complete frame (a file cut short)
     * applies to no frame. */
    while (rd->nav_count > 0 && rd->navs[rd->nav_count - 1].info.frame >= rd->frame_count) rd->nav_count--;
    /* The scan's buffer held the largest record; decoding needs only one
     * frame's, which fetch grows again as needed. */
    free(rd->buf);
    rd->buf = NULL;
    rd->buf_capacity = 0;
    *out = rd;
    return SHOAL_OK;
}

static shoal_status_t check_flags(const char* source, uint32_t flags, shoal_error_t* err)
{
    if ((flags & ~(uint32_t)SHOAL_RECORDING_ALLOW_TRUNCATED) != 0)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: unknown flags 0x%" PRIx32, source, flags);
    return SHOAL_OK;
}

/* The file at `path`: a regular file of at most FILE_LIMIT_RECORDING,
 * opened without blocking (io/file_read.h). */
static shoal_status_t reader_open_path(const char* path, uint32_t flags, reader_t** out, shoal_error_t* err)
{
    uint64_t size = 0;
    file_read_error_t e = FILE_READ_OK;
    char msg[256];
    FILE* file = file_open_regular(path, FILE_LIMIT_RECORDING, &size, &e, msg, sizeof msg);
    if (file == NULL)
        return fail(err,
                    e == FILE_READ_TOO_LARGE   ? SHOAL_ERR_CAPACITY
                    : e == FILE_READ_NO_MEMORY ? SHOAL_ERR_OUT_OF_MEMORY
                                               : SHOAL_ERR_IO,
                    "recording %s: %s", path, msg);
    return reader_open(NULL, file, size, path, flags, out, err);
}

shoal_status_t shoal_recording_reader_open(const char* path, uint32_t flags, shoal_recording_reader_t** out,
                                           shoal_error_t* err)
{
    if (out != NULL) *out = NULL;
    if (path == NULL || out == NULL)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording reader: %s is NULL",
                    path == NULL ? "path" : "out");
    shoal_status_t status = check_flags(path, flags, err);
    if (status != SHOAL_OK) return status;
    return reader_open_path(path, flags, out, err);
}

void shoal_recording_reader_close(shoal_recording_reader_t* reader) { reader_free(reader); }

const shoal_recording_header_t* shoal_recording_reader_header(const shoal_recording_reader_t* rd)
{
    return rd != NULL ? &rd->header : NULL;
}

int32_t shoal_recording_reader_version(const shoal_recording_reader_t* rd)
{
    return rd != NULL ? rd->version : 0;
}

int32_t shoal_recording_reader_frame_count(const shoal_recording_reader_t* rd)
{
    return rd != NULL ? rd->frame_count : 0;
}

int shoal_recording_reader_is_complete(const shoal_recording_reader_t* rd)
{
    return rd != NULL && rd->complete;
}

const char* shoal_recording_reader_damage(const shoal_recording_reader_t* rd)
{
    return rd != NULL ? rd->damage : "";
}

shoal_status_t shoal_recording_reader_geometry(const shoal_recording_reader_t* rd,
                                               shoal_recording_geometry_t* out)
{
    if (out == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (rd == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!rd->has_geometry) return SHOAL_ERR_NOT_FOUND;
    *out = rd->geometry;
    return SHOAL_OK;
}

shoal_status_t shoal_recording_reader_frame_info(const shoal_recording_reader_t* rd, int32_t index,
                                                 shoal_recording_frame_t* out_frame)
{
    if (out_frame != NULL) memset(out_frame, 0, sizeof *out_frame);
    if (rd == NULL || out_frame == NULL || index < 0 || index >= rd->frame_count)
        return SHOAL_ERR_INVALID_ARGUMENT;
    const frame_span_t* span = &rd->spans[index];
    out_frame->step = span->step;
    out_frame->time = span->time;
    out_frame->count = (int32_t)span->count;
    return SHOAL_OK;
}

uint64_t shoal_recording_reader_decoded_bytes(const shoal_recording_reader_t* rd)
{
    if (rd == NULL) return 0;
    uint64_t agents = 0;
    for (int32_t f = 0; f < rd->frame_count; ++f) agents += rd->spans[f].count;
    return agents * payload_bytes(rd->version, rd->dims);
}

shoal_status_t shoal_recording_reader_frame(shoal_recording_reader_t* rd, int32_t index,
                                            shoal_recording_frame_t* out_frame, shoal_error_t* err)
{
    if (out_frame != NULL) memset(out_frame, 0, sizeof *out_frame);
    if (rd == NULL || out_frame == NULL)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording reader: %s is NULL",
                    rd == NULL ? "reader" : "out_frame");
    if (index < 0 || index >= rd->frame_count)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT,
                    "recording %s: frame %d does not exist (the recording has %d frames)", rd->source,
                    (int)index, (int)rd->frame_count);
    if (index >= rd->bad_at) return fail(err, rd->bad_status, "%s", rd->bad_message);
    rd->err = err;
    frame_slot_t* slot = slot_holding(rd, index);
    if (slot == NULL) {
        shoal_error_t e = {SHOAL_OK, ""};
        rd->err = &e;
        shoal_status_t status = SHOAL_OK;
        int32_t at = index;
        if (rd->version >= 3) {
            /* Each frame is predicted from the two before it: decode on
             * from the last one decoded in order, or again from frame 0. */
            if (index <= rd->frontier) {
                rd->frontier = -1;
                for (int s = 0; s < 3; ++s) rd->slots[s].index = -1;
            }
            while (status == SHOAL_OK && rd->frontier < index) {
                at = rd->frontier + 1;
                status = decode_into_slot(rd, at);
                if (status == SHOAL_OK) rd->frontier = at;
            }
        } else {
            status = decode_into_slot(rd, index);
        }
        rd->err = err;
        if (status != SHOAL_OK) {
            /* Damage stays: this frame and every later one fail alike.
             * Running out of memory may pass: it is not remembered. */
            if (status != SHOAL_ERR_OUT_OF_MEMORY) {
                rd->bad_at = at;
                rd->bad_status = status;
                snprintf(rd->bad_message, sizeof rd->bad_message, "%s", e.message);
            }
            return fail(err, status, "%s", e.message);
        }
        slot = slot_holding(rd, index);
    }
    slot->used = ++rd->clock;
    const frame_span_t* span = &rd->spans[index];
    const size_t n = span->count;
    out_frame->step = span->step;
    out_frame->time = span->time;
    out_frame->count = (int32_t)n;
    out_frame->ids = slot->u32;
    out_frame->generations = slot->u32 + n;
    out_frame->groups = slot->u32 + 2 * n;
    out_frame->positions = slot->f32;
    out_frame->headings = rd->dims == 2 ? slot->f32 + 2 * n : NULL;
    out_frame->orientations = rd->dims == 3 ? slot->f32 + 3 * n : NULL;
    out_frame->global_ids = rd->version >= 4 ? slot->u64 : NULL;
    return SHOAL_OK;
}

int32_t shoal_recording_reader_nav_count(const shoal_recording_reader_t* rd)
{
    return rd != NULL ? rd->nav_count : 0;
}

shoal_status_t shoal_recording_reader_nav_info(const shoal_recording_reader_t* rd, int32_t index,
                                               shoal_recording_nav_t* out)
{
    if (out != NULL) memset(out, 0, sizeof *out);
    if (rd == NULL || out == NULL || index < 0 || index >= rd->nav_count) return SHOAL_ERR_INVALID_ARGUMENT;
    *out = rd->navs[index].info;
    return SHOAL_OK;
}

int32_t shoal_recording_reader_nav_index(const shoal_recording_reader_t* rd, int32_t frame)
{
    if (rd == NULL) return -1;
    int32_t lo = 0, hi = rd->nav_count; /* the first record after `frame` */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (rd->navs[mid].info.frame <= frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

shoal_status_t shoal_recording_reader_nav(shoal_recording_reader_t* rd, int32_t index,
                                          shoal_recording_nav_t* out, shoal_error_t* err)
{
    if (out != NULL) memset(out, 0, sizeof *out);
    if (rd == NULL || out == NULL)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording reader: %s is NULL",
                    rd == NULL ? "reader" : "out");
    if (index < 0 || index >= rd->nav_count)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT,
                    "recording %s: navigation field record %d does not exist (the recording has %d)",
                    rd->source, (int)index, (int)rd->nav_count);
    const nav_span_t* span = &rd->navs[index];
    const size_t cells = (size_t)span->info.nx * (size_t)span->info.ny, goals = (size_t)span->info.goal_count;
    const size_t decoded = (size_t)rec_nav_decoded(cells, goals);
    size_t goal_capacity = rd->nav_goal_capacity, error_capacity = rd->nav_goal_capacity;
    int ok = grow_pool((void**)&rd->nav_scratch, &rd->nav_scratch_capacity, decoded + 1, 1) &&
             grow_pool((void**)&rd->nav_blocked, &rd->nav_blocked_capacity, cells + 1, 1) &&
             grow_pool((void**)&rd->nav_fields, &rd->nav_fields_capacity, goals * cells + 1, sizeof(float)) &&
             grow_pool((void**)&rd->nav_goals, &goal_capacity, goals + 1, sizeof(int32_t)) &&
             grow_pool((void**)&rd->nav_error, &error_capacity, goals + 1, sizeof(float));
    rd->nav_goal_capacity = goal_capacity < error_capacity ? goal_capacity : error_capacity;
    if (!ok || (rd->zstd == NULL && (rd->zstd = ZSTD_createDCtx()) == NULL))
        return fail(err, SHOAL_ERR_OUT_OF_MEMORY,
                    "recording %s: out of memory for the navigation field record at byte %" PRIu64,
                    rd->source, span->offset);
    rd->err = err;
    const uint8_t* p = NULL;
    shoal_status_t status = fetch(rd, span->offset, span->bytes, &p);
    if (status != SHOAL_OK) return status;
    if (rd->mem == NULL && get_u32(p + span->bytes - 4) != crc32(rd->crc, p, (size_t)span->bytes - 4))
        return fail(err, SHOAL_ERR_IO,
                    NAV_WHERE " changed since the recording was opened (checksum mismatch)", rd->source,
                    span->offset, (int)span->info.frame);
    uint64_t at = 0;
    const char* bad =
        rec_nav_decode(rd->zstd, p, rd->nav_scratch, rd->nav_blocked, rd->nav_fields, rd->nav_error, &at);
    if (bad != NULL)
        return fail(err, strcmp(bad, "out of memory") == 0 ? SHOAL_ERR_OUT_OF_MEMORY : SHOAL_ERR_PARSE,
                    NAV_WHERE ": byte %" PRIu64 ": %s", rd->source, span->offset, (int)span->info.frame,
                    span->offset + at, bad);
    for (size_t k = 0; k < goals; ++k)
        rd->nav_goals[k] = (int32_t)get_u32(p + REC_NAV_FIXED + REC_NAV_GOAL_BYTES * k);
    *out = span->info;
    out->goals = rd->nav_goals;
    out->blocked = rd->nav_blocked;
    out->fields = rd->nav_fields;
    out->max_error = rd->nav_error;
    return SHOAL_OK;
}

/* ------------------------------------------------------------------------ */
/* The whole file at once                                                     */
/* ------------------------------------------------------------------------ */

struct shoal_recording_t {
    shoal_recording_header_t header;
    char* strings;
    int32_t version;
    int has_geometry;
    shoal_recording_geometry_t geometry;
    float* walls;
    shoal_recording_obstacle_t* obstacles;
    int32_t frame_count;
    int complete;
    char damage[512];
    shoal_recording_frame_t* frames;
    uint32_t* u32_pool; /* ids, generations, groups of every frame */
    float* f32_pool;    /* positions, then headings or quaternions, of every frame */
    uint64_t* u64_pool; /* version 4: the global ids of every frame */
    int32_t nav_count;  /* version 5: the field records, decoded */
    shoal_recording_nav_t* navs;
    uint8_t* nav_u8_pool;  /* their blocked flags */
    float* nav_f32_pool;   /* their fields, then their errors */
    int32_t* nav_i32_pool; /* their goal ids */
};

/* Every frame of the reader `rd` (opened with ALLOW_TRUNCATED, so that a
 * payload that fails before a damaged record is the error reported, as
 * frames are read in order) into a recording. The decoded total is known
 * from the frames' counts before anything is decoded, and refused above
 * SHOAL_RECORDING_LOAD_LIMIT: a few megabytes of a still crowd compress a
 * thousandfold. */
static shoal_status_t load_all(reader_t* rd, uint32_t flags, shoal_recording_t** out, shoal_error_t* err)
{
    const int strict = (flags & SHOAL_RECORDING_ALLOW_TRUNCATED) == 0;
    const uint64_t decoded = shoal_recording_reader_decoded_bytes(rd);
    /* The field records, decoded: flags, fields, errors and goal ids. */
    uint64_t nav_cells = 0, nav_values = 0, nav_goals = 0;
    for (int32_t k = 0; k < rd->nav_count; ++k) {
        const shoal_recording_nav_t* in = &rd->navs[k].info;
        const uint64_t cells = (uint64_t)in->nx * (uint64_t)in->ny;
        nav_cells += cells;
        nav_values += cells * (uint64_t)in->goal_count;
        nav_goals += (uint64_t)in->goal_count;
    }
    const uint64_t nav_decoded = nav_cells + 4u * nav_values + 8u * nav_goals;
    if (decoded + nav_decoded > SHOAL_RECORDING_LOAD_LIMIT) {
        char limit[32];
        file_size_text(SHOAL_RECORDING_LOAD_LIMIT, limit, sizeof limit);
        return fail(err, SHOAL_ERR_CAPACITY,
                    "recording %s: its %d frames%s decode to %" PRIu64
                    " bytes, above the %s limit of the whole-file reader "
                    "(SHOAL_RECORDING_LOAD_LIMIT); read it frame by frame "
                    "(shoal_recording_reader_open)",
                    rd->source, (int)rd->frame_count,
                    rd->nav_count > 0 ? " and navigation field records" : "", decoded + nav_decoded, limit);
    }
    shoal_recording_t* rec = calloc(1, sizeof *rec);
    if (rec == NULL) return fail(err, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", rd->source);
    /* The header's strings and the geometry change owners. */
    rec->header = rd->header;
    rec->strings = rd->strings;
    rec->version = rd->version;
    rec->has_geometry = rd->has_geometry;
    rec->geometry = rd->geometry;
    rec->walls = rd->walls;
    rec->obstacles = rd->obstacles;
    rd->strings = NULL;
    rd->walls = NULL;
    rd->obstacles = NULL;
    rec->complete = rd->complete;
    snprintf(rec->damage, sizeof rec->damage, "%s", rd->damage);

    const int32_t dims = rd->dims, count = rd->frame_count;
    const int v4 = rd->version >= 4;
    const uint64_t agents = decoded / payload_bytes(rd->version, dims);
    const size_t f = (size_t)rec_floats_per_agent(dims);
    rec->frames = calloc((size_t)count + 1, sizeof *rec->frames);
    rec->u32_pool = malloc((size_t)(3 * agents + 1) * sizeof(uint32_t));
    rec->f32_pool = malloc((size_t)(f * agents + 1) * sizeof(float));
    if (v4) rec->u64_pool = malloc((size_t)(agents + 1) * sizeof(uint64_t));
    shoal_status_t status = SHOAL_OK;
    rec->navs = calloc((size_t)rd->nav_count + 1, sizeof *rec->navs);
    rec->nav_u8_pool = malloc((size_t)nav_cells + 1);
    rec->nav_f32_pool = malloc((size_t)(nav_values + nav_goals + 1) * sizeof(float));
    rec->nav_i32_pool = malloc((size_t)(nav_goals + 1) * sizeof(int32_t));
    if (rec->frames == NULL || rec->u32_pool == NULL || rec->f32_pool == NULL ||
        (v4 && rec->u64_pool == NULL) || rec->navs == NULL || rec->nav_u8_pool == NULL ||
        rec->nav_f32_pool == NULL || rec->nav_i32_pool == NULL)
        status = fail(err, SHOAL_ERR_OUT_OF_MEMORY, "recording %s: out of memory", rd->source);
    size_t u = 0, fl = 0;
    size_t nav_u8 = 0, nav_f32 = 0, nav_i32 = 0;
    int32_t done = 0;
    shoal_error_t e = {SHOAL_OK, ""};
    for (; status == SHOAL_OK && done < count; ++done) {
        /* The field records before this frame, in file order: a damaged
         * one ends the frames kept, as a damaged frame does. */
        while (status == SHOAL_OK && rec->nav_count < rd->nav_count &&
               rd->navs[rec->nav_count].info.frame == done) {
            shoal_recording_nav_t nv;
            status = shoal_recording_reader_nav(rd, rec->nav_count, &nv, &e);
            if (status != SHOAL_OK) break;
            const size_t cells = (size_t)nv.nx * (size_t)nv.ny, goals = (size_t)nv.goal_count;
            shoal_recording_nav_t* to = &rec->navs[rec->nav_count++];
            *to = nv;
            memcpy(rec->nav_u8_pool + nav_u8, nv.blocked, cells);
            memcpy(rec->nav_f32_pool + nav_f32, nv.fields, goals * cells * sizeof(float));
            memcpy(rec->nav_f32_pool + nav_f32 + goals * cells, nv.max_error, goals * sizeof(float));
            memcpy(rec->nav_i32_pool + nav_i32, nv.goals, goals * sizeof(int32_t));
            to->blocked = rec->nav_u8_pool + nav_u8;
            to->fields = rec->nav_f32_pool + nav_f32;
            to->max_error = rec->nav_f32_pool + nav_f32 + goals * cells;
            to->goals = rec->nav_i32_pool + nav_i32;
            nav_u8 += cells;
            nav_f32 += goals * cells + goals;
            nav_i32 += goals;
        }
        if (status != SHOAL_OK) break;
        shoal_recording_frame_t fr;
        status = shoal_recording_reader_frame(rd, done, &fr, &e);
        if (status != SHOAL_OK) break;
        const size_t n = (size_t)fr.count;
        memcpy(rec->u32_pool + u, fr.ids, 3 * n * sizeof(uint32_t));
        memcpy(rec->f32_pool + fl, fr.positions, f * n * sizeof(float));
        if (v4) memcpy(rec->u64_pool + u / 3, fr.global_ids, n * sizeof(uint64_t));
        shoal_recording_frame_t* to = &rec->frames[done];
        *to = fr;
        to->ids = rec->u32_pool + u;
        to->generations = to->ids + n;
        to->groups = to->ids + 2 * n;
        to->positions = rec->f32_pool + fl;
        to->headings = dims == 2 ? to->positions + 2 * n : NULL;
        to->orientations = dims == 3 ? to->positions + 3 * n : NULL;
        to->global_ids = v4 ? rec->u64_pool + u / 3 : NULL;
        u += 3 * n;
        fl += f * n;
    }
    rec->frame_count = done;
    /* A damaged frame drops the field records before it too: they apply
     * to no frame kept. */
    while (rec->nav_count > 0 && rec->navs[rec->nav_count - 1].frame >= done) rec->nav_count--;
    if (status == SHOAL_ERR_PARSE && !strict) {
        rec->complete = 0;
        snprintf(rec->damage, sizeof rec->damage, "%s", e.message);
        status = SHOAL_OK;
    } else if (status != SHOAL_OK && e.message[0] != '\0') {
        fail(err, status, "%s", e.message);
    } else if (status == SHOAL_OK && strict && rd->damage[0] != '\0') {
        status = fail(err, SHOAL_ERR_PARSE, "%s", rd->damage);
    }
    if (status != SHOAL_OK) {
        shoal_recording_destroy(rec);
        return status;
    }
    *out = rec;
    return SHOAL_OK;
}

shoal_status_t shoal_recording_load_memory(const void* data, size_t size, const char* source_name,
                                           uint32_t flags, shoal_recording_t** out, shoal_error_t* err)
{
    const char* source = source_name != NULL ? source_name : "<memory>";
    if (out != NULL) *out = NULL;
    if (out == NULL || (data == NULL && size > 0))
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording %s: %s is NULL", source,
                    out == NULL ? "out" : "data");
    shoal_status_t status = check_flags(source, flags, err);
    if (status != SHOAL_OK) return status;
    reader_t* rd = NULL;
    status = reader_open((const uint8_t*)data, NULL, (uint64_t)size, source, SHOAL_RECORDING_ALLOW_TRUNCATED,
                         &rd, err);
    if (status == SHOAL_OK) status = load_all(rd, flags, out, err);
    reader_free(rd);
    return status;
}

shoal_status_t shoal_recording_load(const char* path, uint32_t flags, shoal_recording_t** out,
                                    shoal_error_t* err)
{
    if (out != NULL) *out = NULL;
    if (path == NULL || out == NULL)
        return fail(err, SHOAL_ERR_INVALID_ARGUMENT, "recording: %s is NULL", path == NULL ? "path" : "out");
    shoal_status_t status = check_flags(path, flags, err);
    if (status != SHOAL_OK) return status;
    reader_t* rd = NULL;
    status = reader_open_path(path, SHOAL_RECORDING_ALLOW_TRUNCATED, &rd, err);
    if (status == SHOAL_OK) status = load_all(rd, flags, out, err);
    reader_free(rd);
    return status;
}

void shoal_recording_destroy(shoal_recording_t* rec)
{
    if (rec == NULL) return;
    free(rec->strings);
    free(rec->walls);
    free(rec->obstacles);
    free(rec->frames);
    free(rec->u32_pool);
    free(rec->f32_pool);
    free(rec->u64_pool);
    free(rec->navs);
    free(rec->nav_u8_pool);
    free(rec->nav_f32_pool);
    free(rec->nav_i32_pool);
    free(rec);
}

const shoal_recording_header_t* shoal_recording_header(const shoal_recording_t* rec)
{
    return rec != NULL ? &rec->header : NULL;
}

int32_t shoal_recording_frame_count(const shoal_recording_t* rec)
{
    return rec != NULL ? rec->frame_count : 0;
}

int shoal_recording_is_complete(const shoal_recording_t* rec) { return rec != NULL && rec->complete; }

const char* shoal_recording_damage(const shoal_recording_t* rec) { return rec != NULL ? rec->damage : ""; }

shoal_status_t shoal_recording_frame(const shoal_recording_t* rec, int32_t index,
                                     shoal_recording_frame_t* out_frame)
{
    if (rec == NULL || out_frame == NULL || index < 0 || index >= rec->frame_count)
        return SHOAL_ERR_INVALID_ARGUMENT;
    *out_frame = rec->frames[index];
    return SHOAL_OK;
}

int32_t shoal_recording_version(const shoal_recording_t* rec) { return rec != NULL ? rec->version : 0; }

shoal_status_t shoal_recording_geometry(const shoal_recording_t* rec, shoal_recording_geometry_t* out)
{
    if (out == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (rec == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!rec->has_geometry) return SHOAL_ERR_NOT_FOUND;
    *out = rec->geometry;
    return SHOAL_OK;
}

int32_t shoal_recording_nav_count(const shoal_recording_t* rec) { return rec != NULL ? rec->nav_count : 0; }

shoal_status_t shoal_recording_nav(const shoal_recording_t* rec, int32_t index, shoal_recording_nav_t* out)
{
    if (out != NULL) memset(out, 0, sizeof *out);
    if (rec == NULL || out == NULL || index < 0 || index >= rec->nav_count) return SHOAL_ERR_INVALID_ARGUMENT;
    *out = rec->navs[index];
    return SHOAL_OK;
}

shoal_status_t shoal_recording_nav_at(const shoal_recording_t* rec, int32_t frame, shoal_recording_nav_t* out)
{
    if (out != NULL) memset(out, 0, sizeof *out);
    if (rec == NULL || out == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    int32_t lo = 0, hi = rec->nav_count; /* the first record after `frame` */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (rec->navs[mid].frame <= frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return SHOAL_ERR_NOT_FOUND;
    *out = rec->navs[lo - 1];
    return SHOAL_OK;
}
