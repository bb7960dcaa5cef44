/* The stream `shoal view` embeds in its page (tools/view_stream.h). */
#include "view_stream.h"

#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"

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

static int32_t kept_agents(int32_t count, view_thinning_t thin)
{
    return thin.max_agents > 0 && count > thin.max_agents ? thin.max_agents : count;
}

/* The header, the geometry record and the end record. */
static uint64_t fixed_bytes(const shoal_recording_reader_t* recording)
{
    uint64_t size = header_size(shoal_recording_reader_header(recording)) + 12u;
    shoal_recording_geometry_t g;
    if (has_geometry(recording, &g))
        size += 28u + 16u * (uint64_t)g.wall_count + 32u * (uint64_t)g.obstacle_count;
    return size;
}

uint64_t view_stream_size(const shoal_recording_reader_t* recording, view_thinning_t thin)
{
    const shoal_recording_header_t* h = shoal_recording_reader_header(recording);
    uint64_t size = fixed_bytes(recording);
    int32_t frames = shoal_recording_reader_frame_count(recording);
    for (int32_t f = 0; f < frames; ++f) {
        shoal_recording_frame_t frame;
        if (!view_frame_is_kept(f, frames, thin.every) ||
            shoal_recording_reader_frame_info(recording, f, &frame) != SHOAL_OK)
            continue;
        size += 36u + agent_bytes(h->dimensions) * (uint64_t)kept_agents(frame.count, thin);
    }
    return size;
}

view_thinning_t view_choose_thinning(const shoal_recording_reader_t* rec, uint64_t max_bytes,
                                     int32_t min_frames, int32_t min_agents)
{
    view_thinning_t thin = {1, 0};
    int32_t frames = shoal_recording_reader_frame_count(rec), largest = view_largest_frame(rec);
    if (frames < 1 || view_stream_size(rec, thin) <= max_bytes) return thin;
    uint64_t fixed = fixed_bytes(rec);
    int32_t target = frames < min_frames ? frames : min_frames > 0 ? min_frames : 1;
    uint64_t room = max_bytes > fixed ? (max_bytes - fixed) / (uint64_t)target : 0;
    uint64_t fit = room > 36 ? (room - 36) / agent_bytes(shoal_recording_reader_header(rec)->dimensions) : 0;
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

int view_stream_write(shoal_recording_reader_t* recording, view_thinning_t thin, view_sink_fn* sink,
                      void* context, shoal_error_t* err)
{
    crc_init();
    const shoal_recording_header_t* h = shoal_recording_reader_header(recording);
    shoal_recording_geometry_t g;
    int geometry = has_geometry(recording, &g);
    int rc = write_header(h, geometry ? 2 : 1, thin.every, sink, context);
    if (rc == 0 && geometry) rc = write_geometry(&g, sink, context);
    if (rc != 0) return rc;

    const int32_t dims = h->dimensions, rot = dims == 2 ? 1 : 4;
    const int32_t frames = shoal_recording_reader_frame_count(recording);
    const size_t largest = (size_t)view_largest_frame(recording);
    const int32_t most = kept_agents((int32_t)largest, thin);
    uint8_t* p = malloc(36 + (size_t)agent_bytes(dims) * (size_t)most);
    uint64_t* keys = thin.max_agents > 0 ? malloc(sizeof *keys * (largest > 0 ? largest : 1)) : NULL;
    uint8_t* keep = thin.max_agents > 0 ? malloc(largest > 0 ? largest : 1) : NULL;
    if (p == NULL || (thin.max_agents > 0 && (keys == NULL || keep == NULL))) {
        free(p);
        free(keys);
        free(keep);
        return -1;
    }
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
        put_u32(p, TAG_FRAME);
        put_u32(p + 4, written);
        put_u64(p + 8, fr.step);
        put_f64(p + 16, fr.time);
        put_u32(p + 24, (uint32_t)n);
        put_u32(p + 28, 0);
        uint8_t *ids = p + 32, *gens = ids + 4 * (size_t)n, *groups = gens + 4 * (size_t)n;
        uint8_t *pos = groups + 4 * (size_t)n, *rots = pos + 4 * (size_t)(dims * n);
        const float* rsrc = dims == 2 ? fr.headings : fr.orientations;
        int32_t j = 0;
        for (int32_t i = 0; i < fr.count; ++i) {
            if (n < fr.count && !keep[i]) continue;
            put_u32(ids + 4 * j, fr.ids[i]);
            put_u32(gens + 4 * j, fr.generations[i]);
            put_u32(groups + 4 * j, fr.groups[i]);
            for (int32_t k = 0; k < dims; ++k) put_f32(pos + 4 * (dims * j + k), fr.positions[dims * i + k]);
            for (int32_t k = 0; k < rot; ++k) put_f32(rots + 4 * (rot * j + k), rsrc[rot * i + k]);
            ++j;
        }
        size_t bytes = 36 + (size_t)agent_bytes(dims) * (size_t)n;
        put_u32(p + bytes - 4, crc32(p, bytes - 4));
        rc = sink(context, p, bytes);
        ++written;
    }
    if (rc == 0) {
        uint8_t end[12];
        put_u32(end, TAG_DONE);
        put_u32(end + 4, written);
        put_u32(end + 8, crc32(end, 8));
        rc = sink(context, end, sizeof end);
    }
    free(p);
    free(keys);
    free(keep);
    return rc;
}
