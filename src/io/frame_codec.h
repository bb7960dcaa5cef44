/* The frame codec of recordings, format versions 3 and 4 (the layout is in
 * src/io/recording.c's header comment and docs/recording.md, "Frame,
 * versions 3 and 4"): ids, generations, groups, global ids and the floats of
 * a frame's agents, each predicted from the same agent in the frames before,
 * zigzagged, laid out as byte planes and compressed with zstd. The recorder
 * (src/io/recording.c) writes and reads frames with it; the stream that
 * `shoal view` puts in its page (cli/viewer/view_stream.c) writes the same
 * frames with it, so an unthinned stream is the file byte for byte. */
#ifndef SHOAL_IO_FRAME_CODEC_H
#define SHOAL_IO_FRAME_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#define REC_FRAME3_FIXED 40u    /* versions 3, 4: D and C follow the flags */
#define REC_MAX_EXPANSION 1024u /* versions 3, 4: decoded bytes per stored byte, at most */
#define REC_ZSTD_LEVEL 1        /* as small as 3 here, and faster (docs/recording.md) */

/* One frame's agents sorted by id, as written or as decoded: what the next
 * frames are predicted from. `floats`: positions (dims an agent), then the
 * headings (2D) or quaternions w x y z (3D) (rec_float_index). `groups` may
 * be NULL in a frame that only predicts; `gids` is read in version 4. */
typedef struct rec_agents_t {
    size_t n;
    const uint32_t* ids;
    const uint32_t* generations;
    const uint32_t* groups;
    const float* floats;
    const uint64_t* gids;
} rec_agents_t;

/* Floats per agent: x y (z), then a heading (2D) or w x y z (3D). */
static inline int rec_floats_per_agent(int32_t dims) { return dims == 2 ? 3 : 7; }

/* Where float c (0 <= c < rec_floats_per_agent) of agent j is among a
 * frame's floats for n agents. */
static inline size_t rec_float_index(int32_t dims, size_t n, size_t j, int c)
{
    const size_t rot = dims == 2 ? 1u : 4u;
    return c < dims ? (size_t)dims * j + (size_t)c : (size_t)dims * n + rot * j + (size_t)(c - dims);
}

static inline uint32_t rec_float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float rec_bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Small differences of either sign to small unsigned numbers: 0, -1, 1,
 * -2, ... become 0, 1, 2, 3, ... */
static inline uint32_t rec_zigzag(uint32_t r) { return (r << 1) ^ (0u - (r >> 31)); }
static inline uint32_t rec_unzigzag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1u)); }
static inline uint64_t rec_zigzag64(uint64_t r) { return (r << 1) ^ (0u - (r >> 63)); }
static inline uint64_t rec_unzigzag64(uint64_t z) { return (z >> 1) ^ (0u - (z & 1u)); }

/* match[i]: the index in `prev` of agent i (the same id and generation),
 * or -1; -1 for all when prev is NULL. Both id lists ascend. */
static inline void rec_match_agents(size_t n, const uint32_t* ids, const uint32_t* generations,
                                    const rec_agents_t* prev, int32_t* match)
{
    size_t j = 0;
    for (size_t i = 0; i < n; ++i) {
        match[i] = -1;
        if (prev == NULL) continue;
        while (j < prev->n && prev->ids[j] < ids[i]) ++j;
        if (j < prev->n && prev->ids[j] == ids[i] && prev->generations[j] == generations[i])
            match[i] = (int32_t)j;
    }
}

/* The prediction of float c of an agent, as a bit pattern: 2 b1 - b2 from
 * the last two frames (m1, m2: its index there, or -1), b1 from the last
 * only, 0 without it. Modulo 2^32. */
static inline uint32_t rec_predict(int32_t dims, const rec_agents_t* p1, int32_t m1, const rec_agents_t* p2,
                                   int32_t m2, int c)
{
    if (m1 < 0) return 0u;
    uint32_t b1 = rec_float_bits(p1->floats[rec_float_index(dims, p1->n, (size_t)m1, c)]);
    if (m2 < 0) return b1;
    uint32_t b2 = rec_float_bits(p2->floats[rec_float_index(dims, p2->n, (size_t)m2, c)]);
    return 2u * b1 - b2;
}

/* Version 4: the prediction of agent i's global id: the same agent's in
 * the last frame (m1: its index there, or -1), else one more than the
 * agent's before it in this frame (agents added together have slots and
 * ids in the same order), else 0. */
static inline uint64_t rec_predict_gid(const rec_agents_t* p1, int32_t m1, const uint64_t* gids, size_t i)
{
    if (m1 >= 0) return p1->gids[m1];
    return i > 0 ? gids[i - 1] + 1u : 0u;
}

/* Word w of `words` from the four byte planes of `planes`. */
static inline uint32_t rec_get_planes(const uint8_t* planes, size_t words, size_t w)
{
    return (uint32_t)planes[w] | (uint32_t)planes[words + w] << 8 | (uint32_t)planes[2 * words + w] << 16 |
           (uint32_t)planes[3 * words + w] << 24;
}

/* Words of a version 3 or 4 payload of n agents. */
static inline size_t rec_frame3_words(int32_t version, int32_t dims, size_t n)
{
    return n * (3u + (version >= 4 ? 2u : 0u) + (size_t)rec_floats_per_agent(dims));
}

/* The bytes a payload of `decoded` bytes takes in the file when its zstd
 * frame has `compressed` bytes: the zstd frame, padded with zeros to at
 * least decoded / REC_MAX_EXPANSION bytes and to a multiple of 4. */
static inline uint64_t rec_frame3_stored(uint64_t decoded, uint64_t compressed)
{
    uint64_t least = (decoded + REC_MAX_EXPANSION - 1u) / REC_MAX_EXPANSION;
    uint64_t stored = compressed > least ? compressed : least;
    return (stored + 3u) & ~(uint64_t)3u;
}

/* A whole frame of either version: fixed fields, stored payload, CRC. */
static inline uint64_t rec_frame3_bytes(uint64_t decoded, uint64_t compressed)
{
    return REC_FRAME3_FIXED + rec_frame3_stored(decoded, compressed) + 4u;
}

/* The version 3 or 4 payload of `cur`, predicted from p1 and p2 (the last
 * two frames written, NULL when there are fewer), compressed into `frame`
 * (whose fixed fields up to the flags the caller writes; this writes D and
 * C, the zstd frame and its padding). `match1`, `match2` (n each) and
 * `planes` (4 * rec_frame3_words bytes) are scratch; `capacity` is
 * frame's size, at least rec_frame3_bytes(decoded, ZSTD_compressBound).
 * Returns the frame's bytes with its CRC (not written), or 0 when zstd
 * fails (only its memory can), with zstd's message in *why. */
size_t rec_frame3_encode(ZSTD_CCtx* zstd, int32_t version, int32_t dims, const rec_agents_t* cur,
                         const rec_agents_t* p1, const rec_agents_t* p2, int32_t* match1, int32_t* match2,
                         uint8_t* planes, uint8_t* frame, size_t capacity, const char** why);

#endif /* SHOAL_IO_FRAME_CODEC_H */
