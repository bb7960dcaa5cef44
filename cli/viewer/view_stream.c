/* The stream `shoal view` embeds in its page (cli/viewer/view_stream.h). */
#include "cli/viewer/view_stream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/bytes.h"
#include "io/frame_codec.h"

#define TAG_FRAME 0x4D415246u    /* "FRAM" */
#define TAG_GEOMETRY 0x4D4F4547u /* "GEOM" */
#define TAG_DONE 0x454E4F44u     /* "DONE" */

static uint32_t crc_table[256];

static void crc_init(void)
{
    if (crc_table[1] != 0) return;
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32(const uint8_t* p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) c = crc_table[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static uint64_t align4(uint64_t n) { return (n + 3u) & ~(uint64_t)3u; }

int32_t view_frames_kept(int32_t frame_count, int32_t every)
{
    if (frame_count <= 0) return 0;
    int32_t kept = (frame_count - 1) / every + 1;           /* 0, N, 2N, ... */
    return kept + ((frame_count - 1) % every != 0 ? 1 : 0); /* and the last */
}

int view_frame_is_kept(int32_t index, int32_t frame_count, int32_t every)
{
    return index % every == 0 || index == frame_count - 1;
}

int32_t view_largest_frame(const shoal_recording_reader_t* recording)
{
    int32_t most = 0;
    for (int32_t f = 0; f < shoal_recording_reader_frame_count(recording); ++f) {
        shoal_recording_frame_t frame;
        if (shoal_recording_reader_frame_info(recording, f, &frame) == SHOAL_OK && frame.count > most)
            most = frame.count;
    }
    return most;
}

static int has_geometry(const shoal_recording_reader_t* recording, shoal_recording_geometry_t* g)
{
    return shoal_recording_reader_geometry(recording, g) == SHOAL_OK;
}

static uint64_t header_size(const shoal_recording_header_t* h)
{
    return align4(84u + strlen(h->units) + strlen(h->scenario_name) + strlen(h->group_names) +
                  strlen(h->scenario_text)) +
           4u;
}

static uint64_t agent_bytes(int32_t dims) { return dims == 2 ? 24u : 40u; }

/* A compressed frame's stored bytes, estimated (view_stream.h). */
static uint64_t agent_bytes_compressed(int32_t dims) { return dims == 2 ? VIEW_BYTES_2D : VIEW_BYTES_3D; }

/* Compressed: version 4 where the source has global ids. */
static int32_t stream_version(const shoal_recording_reader_t* recording, view_thinning_t thin, int geometry)
{
    if (thin.compressed) return shoal_recording_reader_version(recording) >= 4 ? 4 : 3;
    return geometry ? 2 : 1;
}

static int32_t kept_agents(int32_t count, view_thinning_t thin)
{
    return thin.max_agents > 0 && count > thin.max_agents ? thin.max_agents : count;
}

/* The header, the geometry record and the end record. */
static uint64_t fixed_bytes(const shoal_recording_reader_t* recording, int32_t compressed)
{
    uint64_t size = header_size(shoal_recording_reader_header(recording)) + 12u;
    shoal_recording_geometry_t g;
    if (has_geometry(recording, &g))
        size += 28u + 16u * (uint64_t)g.wall_count + 32u * (uint64_t)g.obstacle_count;
    else if (compressed)
        size += 28u;
    return size;
}

uint64_t view_stream_size(const shoal_recording_reader_t* recording, view_thinning_t thin)
{
    const shoal_recording_header_t* h = shoal_recording_reader_header(recording);
    uint64_t size = fixed_bytes(recording, thin.compressed);
    int32_t frames = shoal_recording_reader_frame_count(recording);
    for (int32_t f = 0; f < frames; ++f) {
        shoal_recording_frame_t frame;
        if (!view_frame_is_kept(f, frames, thin.every) ||
            shoal_recording_reader_frame_info(recording, f, &frame) != SHOAL_OK)
            continue;
        if (thin.compressed)
            size += 44u + agent_bytes_compressed(h->dimensions) * (uint64_t)kept_agents(frame.count, thin);
        else
            size += 36u + agent_bytes(h->dimensions) * (uint64_t)kept_agents(frame.count, thin);
    }
    return size;
}

view_thinning_t view_choose_thinning(const shoal_recording_reader_t* rec, int32_t compressed,
                                     uint64_t max_bytes, int32_t min_frames, int32_t min_agents)
{
    view_thinning_t thin = {1, 0, compressed};
    int32_t frames = shoal_recording_reader_frame_count(rec), largest = view_largest_frame(rec);
    if (frames < 1 || view_stream_size(rec, thin) <= max_bytes) return thin;
    uint64_t fixed = fixed_bytes(rec, compressed);
    int32_t target = frames < min_frames ? frames : min_frames > 0 ? min_frames : 1;
    uint64_t room = max_bytes > fixed ? (max_bytes - fixed) / (uint64_t)target : 0;
    const int32_t dims = shoal_recording_reader_header(rec)->dimensions;
    const uint64_t per_frame = compressed ? 44u : 36u;
    uint64_t fit = room > per_frame
                       ? (room - per_frame) / (compressed ? agent_bytes_compressed(dims) : agent_bytes(dims))
                       : 0;
    if ((uint64_t)largest > fit) thin.max_agents = fit > (uint64_t)min_agents ? (int32_t)fit : min_agents;
    if (thin.max_agents >= largest) thin.max_agents = 0;
    /* The smallest N that fits: a first guess from the ratio, then upwards. */
    uint64_t all = view_stream_size(rec, thin);
    if (all > max_bytes) {
        uint64_t n = all / max_bytes;
        thin.every = n < 1 ? 1 : n > (uint64_t)frames ? frames : (int32_t)n;
    }
    while (thin.every < frames && view_stream_size(rec, thin) > max_bytes) ++thin.every;
    return thin;
}

static uint32_t agent_hash(uint32_t id, uint32_t generation)
{
    uint64_t x = (uint64_t)generation << 32 | id; /* splitmix64's finalizer */
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((x ^ (x >> 31)) >> 32);
}

static int by_key(const void* a, const void* b)
{
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

static void put_string(uint8_t** at, const char* s)
{
    size_t n = strlen(s);
    memcpy(*at, s, n);
    *at += n;
}

/* The header, as the source's with record_every times `every`. */
static int write_header(const shoal_recording_header_t* h, int32_t version, int32_t every, view_sink_fn* sink,
                        void* context)
{
    uint64_t size = header_size(h);
    uint8_t* p = calloc(1, (size_t)size);
    if (p == NULL) return -1;
    memcpy(p, "SHOALREC", 8);
    put_u32(p + 8, (uint32_t)version);
    put_u32(p + 12, (uint32_t)size);
    put_u32(p + 16, (uint32_t)h->dimensions);
    put_u32(p + 20, 0);
    put_f32(p + 24, h->dt);
    int64_t record_every = (int64_t)h->record_every * every;
    put_u32(p + 28, (uint32_t)(record_every > INT32_MAX ? INT32_MAX : record_every));
    put_u64(p + 32, h->steps_hint);
    put_u32(p + 40, h->wrap ? 1u : 0u);
    for (int k = 0; k < 3; ++k) {
        put_f32(p + 44 + 4 * k, h->bounds_min[k]);
        put_f32(p + 56 + 4 * k, h->bounds_max[k]);
    }
    const char* strings[4] = {h->units, h->scenario_name, h->group_names, h->scenario_text};
    uint8_t* at = p + 84;
    for (int k = 0; k < 4; ++k) {
        put_u32(p + 68 + 4 * k, (uint32_t)strlen(strings[k]));
        put_string(&at, strings[k]);
    }
    put_u32(p + size - 4, crc32(p, (size_t)size - 4));
    int rc = sink(context, p, (size_t)size);
    free(p);
    return rc;
}

static int write_geometry(const shoal_recording_geometry_t* g, view_sink_fn* sink, void* context)
{
    size_t W = (size_t)g->wall_count, B = (size_t)g->obstacle_count, size = 28 + 16 * W + 32 * B;
    uint8_t* p = calloc(1, size);
    if (p == NULL) return -1;
    put_u32(p, TAG_GEOMETRY);
    put_u32(p + 4, 0);
    put_f64(p + 8, g->time);
    put_u32(p + 16, (uint32_t)W);
    put_u32(p + 20, (uint32_t)B);
    uint8_t* at = p + 24;
    for (size_t i = 0; i < 4 * W; ++i, at += 4) put_f32(at, g->walls[i]);
    for (size_t o = 0; o < B; ++o, at += 4) put_u32(at, (uint32_t)g->obstacles[o].id);
    for (size_t o = 0; o < B; ++o)
        for (int k = 0; k < 3; ++k, at += 4) put_f32(at, g->obstacles[o].center[k]);
    for (size_t o = 0; o < B; ++o, at += 4) put_f32(at, g->obstacles[o].radius);
    for (size_t o = 0; o < B; ++o)
        for (int k = 0; k < 3; ++k, at += 4) put_f32(at, g->obstacles[o].velocity[k]);
    put_u32(at, crc32(p, size - 4));
    int rc = sink(context, p, size);
    free(p);
    return rc;
}

/* The kept agents of one frame, in ascending id order: what is written and
 * what the next compressed frames are predicted from. */
typedef struct kept_frame_t {
    int32_t n;
    double time;
    uint32_t *ids, *generations, *groups;
    float* floats;  /* positions, then headings (2D) or quaternions (3D): rec_float_index */
    uint64_t* gids; /* version 4 */
} kept_frame_t;

static int kept_alloc(kept_frame_t* k, size_t n, int floats)
{
    n = n > 0 ? n : 1;
    k->ids = malloc(n * sizeof *k->ids);
    k->generations = malloc(n * sizeof *k->generations);
    k->groups = malloc(n * sizeof *k->groups);
    k->floats = malloc((size_t)floats * n * sizeof *k->floats);
    k->gids = malloc(n * sizeof *k->gids);
    return k->ids != NULL && k->generations != NULL && k->groups != NULL && k->floats != NULL &&
           k->gids != NULL;
}

static void kept_free(kept_frame_t* k)
{
    free(k->ids);
    free(k->generations);
    free(k->groups);
    free(k->floats);
    free(k->gids);
}

/* Scratch of the writer. */
typedef struct writer_t {
    int32_t dims, version, floats; /* floats an agent: 3 (2D) or 7 (3D) */
    kept_frame_t kept[3];          /* this frame, the one before, the one before that */
    int32_t *match1, *match2;
    uint8_t *planes, *bytes;
    size_t bytes_capacity;
    ZSTD_CCtx* zstd;
} writer_t;

/* The version 3 or 4 frame of w->kept[0] (src/io/frame_codec.h), predicted
 * from the `written` frames before it, into w->bytes after the fixed fields
 * up to the flags; its size, or 0 when zstd fails (only its memory can). */
static size_t encode_compressed(writer_t* w, uint32_t written)
{
    rec_agents_t frames[3];
    for (int k = 0; k < 3; ++k)
        frames[k] = (rec_agents_t){.n = (size_t)w->kept[k].n,
                                   .ids = w->kept[k].ids,
                                   .generations = w->kept[k].generations,
                                   .groups = w->kept[k].groups,
                                   .floats = w->kept[k].floats,
                                   .gids = w->kept[k].gids};
    const char* why = "";
    return rec_frame3_encode(w->zstd, w->version, w->dims, &frames[0], written >= 1 ? &frames[1] : NULL,
                             written >= 2 ? &frames[2] : NULL, w->match1, w->match2, w->planes, w->bytes,
                             w->bytes_capacity, &why);
}

/* The version 1 or 2 frame of w->kept[0] into w->bytes; its size. */
static size_t encode_plain(writer_t* w)
{
    const kept_frame_t* cur = &w->kept[0];
    const size_t n = (size_t)cur->n, floats = n * (size_t)w->floats;
    uint8_t* at = w->bytes + 32;
    for (size_t j = 0; j < n; ++j, at += 4) put_u32(at, cur->ids[j]);
    for (size_t j = 0; j < n; ++j, at += 4) put_u32(at, cur->generations[j]);
    for (size_t j = 0; j < n; ++j, at += 4) put_u32(at, cur->groups[j]);
    for (size_t i = 0; i < floats; ++i, at += 4) put_f32(at, cur->floats[i]);
    return 36 + (size_t)agent_bytes(w->dims) * n;
}

static void summarize(view_summary_t* s, const writer_t* w, int speed)
{
    const kept_frame_t *cur = &w->kept[0], *prev = &w->kept[1];
    const int32_t d = w->dims;
    for (int32_t i = 0; i < cur->n; ++i) {
        for (int32_t k = 0; k < d; ++k) {
            float v = cur->floats[d * i + k];
            if (v < s->lo[k]) s->lo[k] = v;
            if (v > s->hi[k]) s->hi[k] = v;
        }
        uint32_t g = cur->groups[i];
        int32_t at = 0;
        while (at < s->group_count && s->groups[at] < g) ++at;
        if ((at < s->group_count && s->groups[at] == g) || at >= VIEW_GROUPS) continue;
        if (s->group_count == VIEW_GROUPS) --s->group_count; /* keep the smallest */
        memmove(s->groups + at + 1, s->groups + at, sizeof *s->groups * (size_t)(s->group_count - at));
        s->groups[at] = g;
        ++s->group_count;
    }
    const double dt = cur->time - prev->time;
    if (!speed || !(dt > 0)) return;
    int32_t j = 0;
    for (int32_t i = 0; i < cur->n; ++i) {
        while (j < prev->n && prev->ids[j] < cur->ids[i]) ++j;
        if (j >= prev->n || prev->ids[j] != cur->ids[i] || prev->generations[j] != cur->generations[i])
            continue;
        double sum = 0;
        for (int32_t k = 0; k < d; ++k) {
            double v = (double)cur->floats[d * i + k] - (double)prev->floats[d * j + k];
            sum += v * v;
        }
        double speed_i = sqrt(sum) / dt;
        if (speed_i > s->max_speed) s->max_speed = speed_i;
    }
}

int view_stream_write(shoal_recording_reader_t* recording, view_thinning_t thin, view_sink_fn* sink,
                      void* context, view_summary_t* summary, shoal_error_t* err)
{
    crc_init();
    const shoal_recording_header_t* h = shoal_recording_reader_header(recording);
    view_summary_t sum = {.lo = {INFINITY, INFINITY, INFINITY}, .hi = {-INFINITY, -INFINITY, -INFINITY}};
    shoal_recording_geometry_t g;
    int geometry = has_geometry(recording, &g);
    if (!geometry) {
        memset(&g, 0, sizeof g);
        shoal_recording_frame_t first;
        if (shoal_recording_reader_frame_info(recording, 0, &first) == SHOAL_OK) g.time = first.time;
    }
    writer_t w = {.dims = h->dimensions, .version = stream_version(recording, thin, geometry)};
    w.floats = w.dims == 2 ? 3 : 7;
    int rc = write_header(h, w.version, thin.every, sink, context);
    if (rc == 0 && w.version >= 2) rc = write_geometry(&g, sink, context);
    if (rc != 0) return rc;

    const int32_t frames = shoal_recording_reader_frame_count(recording);
    const int32_t kept_count = view_frames_kept(frames, thin.every),
                  sample = kept_count / 20 > 1 ? kept_count / 20 : 1;
    const size_t largest = (size_t)view_largest_frame(recording);
    const size_t most = (size_t)kept_agents((int32_t)largest, thin);
    const size_t words = most * (3u + 2u + (size_t)w.floats);
    w.bytes_capacity = thin.compressed ? (size_t)rec_frame3_bytes(4 * words, ZSTD_compressBound(4 * words))
                                       : 36 + (size_t)agent_bytes(w.dims) * most;
    w.bytes = malloc(w.bytes_capacity);
    int ok = w.bytes != NULL;
    for (int k = 0; k < 3; ++k) ok = kept_alloc(&w.kept[k], most, w.floats) && ok;
    if (thin.compressed) {
        w.match1 = malloc(sizeof *w.match1 * (most > 0 ? most : 1));
        w.match2 = malloc(sizeof *w.match2 * (most > 0 ? most : 1));
        w.planes = malloc(4 * words > 0 ? 4 * words : 1);
        w.zstd = ZSTD_createCCtx();
        ok = ok && w.match1 != NULL && w.match2 != NULL && w.planes != NULL && w.zstd != NULL;
    }
    uint64_t* keys = thin.max_agents > 0 ? malloc(sizeof *keys * (largest > 0 ? largest : 1)) : NULL;
    uint8_t* keep = thin.max_agents > 0 ? malloc(largest > 0 ? largest : 1) : NULL;
    if (thin.max_agents > 0 && (keys == NULL || keep == NULL)) ok = 0;
    rc = ok ? 0 : -1;
    uint32_t written = 0;
    for (int32_t f = 0; f < frames && rc == 0; ++f) {
        shoal_recording_frame_t fr;
        if (!view_frame_is_kept(f, frames, thin.every)) continue;
        if (shoal_recording_reader_frame(recording, f, &fr, err) != SHOAL_OK) {
            rc = -2;
            break;
        }
        const int32_t n = kept_agents(fr.count, thin);
        if (n < fr.count) { /* the n smallest hashes; the index breaks ties */
            for (int32_t i = 0; i < fr.count; ++i)
                keys[i] = (uint64_t)agent_hash(fr.ids[i], fr.generations[i]) << 32 | (uint32_t)i;
            qsort(keys, (size_t)fr.count, sizeof *keys, by_key);
            memset(keep, 0, (size_t)fr.count);
            for (int32_t k = 0; k < n; ++k) keep[(uint32_t)keys[k]] = 1;
        }
        kept_frame_t* cur = &w.kept[0];
        const int32_t dims = w.dims, rot = dims == 2 ? 1 : 4;
        const float* rsrc = dims == 2 ? fr.headings : fr.orientations;
        cur->n = n;
        cur->time = fr.time;
        int32_t j = 0;
        for (int32_t i = 0; i < fr.count; ++i) {
            if (n < fr.count && !keep[i]) continue;
            cur->ids[j] = fr.ids[i];
            cur->generations[j] = fr.generations[i];
            cur->groups[j] = fr.groups[i];
            cur->gids[j] = fr.global_ids != NULL ? fr.global_ids[i] : 0;
            for (int32_t k = 0; k < dims; ++k) cur->floats[dims * j + k] = fr.positions[dims * i + k];
            for (int32_t k = 0; k < rot; ++k)
                cur->floats[(size_t)dims * (size_t)n + (size_t)(rot * j + k)] = rsrc[rot * i + k];
            ++j;
        }
        summarize(&sum, &w, written >= 1 && (written - 1) % (uint32_t)sample == 0);
        size_t bytes = thin.compressed ? encode_compressed(&w, written) : encode_plain(&w);
        if (bytes == 0) {
            rc = -1;
            break;
        }
        uint8_t* p = w.bytes;
        put_u32(p, TAG_FRAME);
        put_u32(p + 4, written);
        put_u64(p + 8, fr.step);
        put_f64(p + 16, fr.time);
        put_u32(p + 24, (uint32_t)n);
        put_u32(p + 28, 0);
        put_u32(p + bytes - 4, crc32(p, bytes - 4));
        rc = sink(context, p, bytes);
        ++written;
        kept_frame_t oldest = w.kept[2]; /* this frame becomes the one before */
        w.kept[2] = w.kept[1];
        w.kept[1] = w.kept[0];
        w.kept[0] = oldest;
    }
    if (rc == 0) {
        uint8_t end[12];
        put_u32(end, TAG_DONE);
        put_u32(end + 4, written);
        put_u32(end + 8, crc32(end, 8));
        rc = sink(context, end, sizeof end);
    }
    if (summary != NULL) *summary = sum;
    free(w.bytes);
    for (int k = 0; k < 3; ++k) kept_free(&w.kept[k]);
    free(w.match1);
    free(w.match2);
    free(w.planes);
    ZSTD_freeCCtx(w.zstd);
    free(keys);
    free(keep);
    return rc;
}
