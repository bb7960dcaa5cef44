/* The frame codec of recordings, versions 3 and 4 (src/io/frame_codec.h). */
#include "io/frame_codec.h"

#include "base/bytes.h"

/* Word w of `words` into the four byte planes of `planes`. */
static void put_planes(uint8_t* planes, size_t words, size_t w, uint32_t v)
{
    planes[w] = (uint8_t)v;
    planes[words + w] = (uint8_t)(v >> 8);
    planes[2 * words + w] = (uint8_t)(v >> 16);
    planes[3 * words + w] = (uint8_t)(v >> 24);
}

size_t rec_frame3_encode(ZSTD_CCtx* zstd, int32_t version, int32_t dims, const rec_agents_t* cur,
                         const rec_agents_t* p1, const rec_agents_t* p2, int32_t* match1, int32_t* match2,
                         uint8_t* planes, uint8_t* frame, size_t capacity, const char** why)
{
    const int f = rec_floats_per_agent(dims);
    const int v4 = version >= 4;
    const size_t n = cur->n, words = rec_frame3_words(version, dims, n);
    rec_match_agents(n, cur->ids, cur->generations, p1, match1);
    rec_match_agents(n, cur->ids, cur->generations, p2, match2);
    size_t w = 0;
    for (size_t i = 0; i < n; ++i) put_planes(planes, words, w++, cur->ids[i] - (i ? cur->ids[i - 1] : 0u));
    for (size_t i = 0; i < n; ++i) put_planes(planes, words, w++, cur->generations[i]);
    for (size_t i = 0; i < n; ++i) put_planes(planes, words, w++, cur->groups[i]);
    if (v4) {
        for (size_t i = 0; i < n; ++i) {
            uint64_t z = rec_zigzag64(cur->gids[i] - rec_predict_gid(p1, match1[i], cur->gids, i));
            put_planes(planes, words, w + i, (uint32_t)z);
            put_planes(planes, words, w + n + i, (uint32_t)(z >> 32));
        }
        w += 2 * n;
    }
    for (int c = 0; c < f; ++c)
        for (size_t i = 0; i < n; ++i) {
            uint32_t bits = rec_float_bits(cur->floats[rec_float_index(dims, n, i, c)]);
            uint32_t guess = rec_predict(dims, p1, match1[i], p2, match2[i], c);
            put_planes(planes, words, w++, rec_zigzag(bits - guess));
        }
    const size_t decoded = 4 * words;
    const size_t room = capacity - REC_FRAME3_FIXED - 4u;
    size_t compressed =
        ZSTD_compressCCtx(zstd, frame + REC_FRAME3_FIXED, room, planes, decoded, REC_ZSTD_LEVEL);
    if (ZSTD_isError(compressed)) {
        /* With a ZSTD_compressBound() buffer, only its memory can fail. */
        *why = ZSTD_getErrorName(compressed);
        return 0;
    }
    const size_t stored = (size_t)rec_frame3_stored(decoded, compressed);
    memset(frame + REC_FRAME3_FIXED + compressed, 0, stored - compressed);
    put_u32(frame + 32, (uint32_t)decoded);
    put_u32(frame + 36, (uint32_t)compressed);
    return REC_FRAME3_FIXED + stored + 4u;
}
