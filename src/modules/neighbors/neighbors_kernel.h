/* The neighbors pass's pair kernels (neighbors.c): separation, alignment
 * and cohesion sums of one agent (or two per pass) over a pack, a lane of
 * candidates at a time, in one copy per (dimensions, torus) variant; the
 * capped (nearest N) path is scalar. Static inline: the agent pass inlines
 * them. Included by neighbors.c only, after neighbors_pack.h. */
#ifndef SHOAL_SYSTEMS_NEIGHBORS_KERNEL_H
#define SHOAL_SYSTEMS_NEIGHBORS_KERNEL_H

#include <math.h>

#include "simd/lanes.h"
#include "modules/neighbors/neighbors_pack.h"

/* Below this squared distance two agents count as coincident: separation
 * then pushes them apart along x as if they were one radius apart, in
 * opposite directions, instead of dividing by zero. */
#define COINCIDENT_D2 1e-12f

/* Minimal image of an offset on a torus axis (|d| < extent on entry). */
static inline lanef lane_min_image(lanef d, lanef ext, lanef half)
{
    d = lane_select(lane_cmp_gt(d, half), lane_sub(d, ext), d);
    return lane_select(lane_cmp_lt(d, lane_neg(half)), lane_add(d, ext), d);
}

static inline float min_image(float d, float ext)
{
    if (d > 0.5f * ext) return d - ext;
    if (d < -0.5f * ext) return d + ext;
    return d;
}

/* Lanes j .. j + SHOAL_LANES - 1 (j a multiple of SHOAL_LANES) other than
 * the agent itself (pack index self), as mask bits: scalar arithmetic,
 * which keeps the vector units and registers for the distances. Lanes past
 * the pack's end need no mask (pack_finish). */
#define LANES_FULL ((uint32_t)((1ull << SHOAL_LANES) - 1))
static inline uint32_t live_bits(int32_t j, int32_t self)
{
    uint32_t off = (uint32_t)(self - j);
    return off < (uint32_t)SHOAL_LANES ? LANES_FULL & ~(1u << off) : LANES_FULL;
}

/* Lanes of j .. j + SHOAL_LANES - 1 whose pack index is below self. */
static inline uint32_t below_bits(int32_t j, int32_t self)
{
    int32_t k = self - j;
    if (k <= 0) return 0;
    return k >= SHOAL_LANES ? LANES_FULL : (1u << k) - 1u;
}

typedef struct sums {
    float n;
    float sep[3], ali[3], coh[3];
} sums_t;

typedef struct agent_in {
    float x[3];
    float fwd[3];
    float r2, radius, fov_cos;
    int32_t self; /* index in the pack */
} agent_in_t;

/* The lane kernel over a pack of m candidates. Always inlined into one
 * copy per (dimensions, torus) pair, so the 2D copy does no z arithmetic
 * and the unbounded copies no minimal-image selects. */
static inline __attribute__((always_inline)) void kernel_impl(const grid_t* g, const nb_scratch_t* s,
                                                              int32_t m, const agent_in_t* a, sums_t* out,
                                                              float* d2_keep, const int three, const int wrap)
{
    int fov = a->fov_cos > -1.0f;
    lanef xi = lane_set1(a->x[0]), yi = lane_set1(a->x[1]), zi = lane_set1(a->x[2]);
    lanef fx = lane_set1(a->fwd[0]), fy = lane_set1(a->fwd[1]), fz = lane_set1(a->fwd[2]);
    lanef r2 = lane_set1(a->r2), fcos = lane_set1(a->fov_cos);
    lanef ex = lane_set1(g->extent[0]), ey = lane_set1(g->extent[1]), ez = lane_set1(g->extent[2]);
    lanef hx = lane_set1(0.5f * g->extent[0]), hy = lane_set1(0.5f * g->extent[1]);
    lanef hz = lane_set1(0.5f * g->extent[2]);
    lanef tiny = lane_set1(COINCIDENT_D2), inv_r = lane_set1(1.0f / a->radius);
    lanef zero = lane_zero();
    lanef sx = zero, sy = zero, sz = zero, ax = zero, ay = zero, az = zero;
    lanef cx = zero, cy = zero, cz = zero;
    int32_t count = 0;
    for (int32_t j = 0; j < m; j += SHOAL_LANES) {
        lanef dx = lane_sub(lane_loadu(s->cx + j), xi);
        lanef dy = lane_sub(lane_loadu(s->cy + j), yi);
        lanef dz = zero;
        if (three) dz = lane_sub(lane_loadu(s->cz + j), zi);
        if (wrap) {
            dx = lane_min_image(dx, ex, hx);
            dy = lane_min_image(dy, ey, hy);
            if (three) dz = lane_min_image(dz, ez, hz);
        }
        lanef d2 = lane_fma_fast(dy, dy, lane_mul(dx, dx));
        if (three) d2 = lane_fma_fast(dz, dz, d2);
        lanem ok = lane_mask_and(lane_mask_from_bits(live_bits(j, a->self)), lane_cmp_le(d2, r2));
        if (fov) {
            lanef dot = lane_add(lane_mul(fx, dx), lane_mul(fy, dy));
            if (three) dot = lane_add(dot, lane_mul(fz, dz));
            ok = lane_mask_and(ok, lane_cmp_ge(dot, lane_mul(fcos, lane_sqrt(d2))));
        }
        if (d2_keep) lane_storeu(d2_keep + j, lane_select(ok, d2, lane_set1(-1.0f)));
        /* No skipping of lanes without neighbors: which lanes have none
         * follows the data, and the mispredicted branch cost more than the
         * masked work it saved (3D pass 15 % faster without it). */
        count += __builtin_popcount(lane_mask_bits(ok));
        /* Coincident pairs (rare) get no d/|d|^2 term (it would be huge or
         * 0/0) but a push along x as if one radius apart, the lower pack
         * index toward -x. */
        lanem coincident = lane_mask_and(ok, lane_cmp_lt(d2, tiny));
        lanem sep_ok = ok;
        if (lane_mask_any(coincident)) {
            sep_ok = lane_mask_andnot(ok, coincident); /* ok and not coincident */
            lanef push = lane_select(lane_mask_from_bits(below_bits(j, a->self)), lane_neg(inv_r), inv_r);
            sx = lane_masked_add(sx, coincident, push);
        }
        /* Separation sums +d/|d|^2 here and is negated once at the end. */
        lanef inv = lane_rcp_fast(lane_max(d2, tiny));
        sx = lane_select(sep_ok, lane_fma_fast(dx, inv, sx), sx);
        sy = lane_select(sep_ok, lane_fma_fast(dy, inv, sy), sy);
        ax = lane_masked_add(ax, ok, lane_loadu(s->cvx + j));
        ay = lane_masked_add(ay, ok, lane_loadu(s->cvy + j));
        cx = lane_masked_add(cx, ok, dx);
        cy = lane_masked_add(cy, ok, dy);
        if (three) {
            sz = lane_select(sep_ok, lane_fma_fast(dz, inv, sz), sz);
            az = lane_masked_add(az, ok, lane_loadu(s->cvz + j));
            cz = lane_masked_add(cz, ok, dz);
        }
    }
    sx = lane_neg(sx);
    sy = lane_neg(sy);
    sz = lane_neg(sz);
    out->n = (float)count;
    float h[4];
    lane_hsum4(sx, sy, ax, ay, h);
    out->sep[0] = h[0];
    out->sep[1] = h[1];
    out->ali[0] = h[2];
    out->ali[1] = h[3];
    if (three) {
        lane_hsum4(cx, cy, sz, az, h);
        out->sep[2] = h[2];
        out->ali[2] = h[3];
        out->coh[2] = lane_hsum(cz);
    } else {
        lane_hsum4(cx, cy, zero, zero, h);
        out->sep[2] = out->ali[2] = out->coh[2] = 0.0f;
    }
    out->coh[0] = h[0];
    out->coh[1] = h[1];
}

static inline __attribute__((always_inline)) void kernel(const grid_t* g, const nb_scratch_t* s, int32_t m,
                                                         const agent_in_t* a, sums_t* out, float* d2_keep)
{
    int wrap = g->wrap && !packs_shifted(g);
    if (g->dims == 3) {
        if (wrap)
            kernel_impl(g, s, m, a, out, d2_keep, 1, 1);
        else
            kernel_impl(g, s, m, a, out, d2_keep, 1, 0);
    } else {
        if (wrap)
            kernel_impl(g, s, m, a, out, d2_keep, 0, 1);
        else
            kernel_impl(g, s, m, a, out, d2_keep, 0, 0);
    }
}

/* The lane kernel for two agents of the same pack in one pass: the
 * candidate loads and the range mask are shared, every per-agent sum is
 * accumulated exactly as kernel_impl does, so each agent gets the same bits
 * as from its own pass. No capped path (d2_keep). */
static inline __attribute__((always_inline)) void kernel2_impl(const grid_t* g, const nb_scratch_t* s,
                                                               int32_t m, const agent_in_t* a,
                                                               const agent_in_t* b, sums_t* oa, sums_t* ob,
                                                               const int three, const int wrap)
{
    int fova = a->fov_cos > -1.0f, fovb = b->fov_cos > -1.0f;
    lanef xa = lane_set1(a->x[0]), ya = lane_set1(a->x[1]), za = lane_set1(a->x[2]);
    lanef xb = lane_set1(b->x[0]), yb = lane_set1(b->x[1]), zb = lane_set1(b->x[2]);
    lanef r2a = lane_set1(a->r2), r2b = lane_set1(b->r2);
    lanef ex = lane_set1(g->extent[0]), ey = lane_set1(g->extent[1]), ez = lane_set1(g->extent[2]);
    lanef hx = lane_set1(0.5f * g->extent[0]), hy = lane_set1(0.5f * g->extent[1]);
    lanef hz = lane_set1(0.5f * g->extent[2]);
    lanef tiny = lane_set1(COINCIDENT_D2);
    lanef zero = lane_zero();
    lanef sxa = zero, sya = zero, sza = zero, axa = zero, aya = zero, aza = zero;
    lanef cxa = zero, cya = zero, cza = zero;
    lanef sxb = zero, syb = zero, szb = zero, axb = zero, ayb = zero, azb = zero;
    lanef cxb = zero, cyb = zero, czb = zero;
    int32_t ca = 0, cb = 0;
    for (int32_t j = 0; j < m; j += SHOAL_LANES) {
        lanef px = lane_loadu(s->cx + j), py = lane_loadu(s->cy + j);
        lanef pz = three ? lane_loadu(s->cz + j) : zero;
        lanef dxa = lane_sub(px, xa), dya = lane_sub(py, ya), dza = zero;
        lanef dxb = lane_sub(px, xb), dyb = lane_sub(py, yb), dzb = zero;
        if (three) {
            dza = lane_sub(pz, za);
            dzb = lane_sub(pz, zb);
        }
        if (wrap) {
            dxa = lane_min_image(dxa, ex, hx);
            dya = lane_min_image(dya, ey, hy);
            dxb = lane_min_image(dxb, ex, hx);
            dyb = lane_min_image(dyb, ey, hy);
            if (three) {
                dza = lane_min_image(dza, ez, hz);
                dzb = lane_min_image(dzb, ez, hz);
            }
        }
        lanef d2a = lane_fma_fast(dya, dya, lane_mul(dxa, dxa));
        lanef d2b = lane_fma_fast(dyb, dyb, lane_mul(dxb, dxb));
        if (three) {
            d2a = lane_fma_fast(dza, dza, d2a);
            d2b = lane_fma_fast(dzb, dzb, d2b);
        }
        lanem oka = lane_mask_and(lane_mask_from_bits(live_bits(j, a->self)), lane_cmp_le(d2a, r2a));
        lanem okb = lane_mask_and(lane_mask_from_bits(live_bits(j, b->self)), lane_cmp_le(d2b, r2b));
        if (fova) {
            lanef dot = lane_add(lane_mul(lane_set1(a->fwd[0]), dxa), lane_mul(lane_set1(a->fwd[1]), dya));
            if (three) dot = lane_add(dot, lane_mul(lane_set1(a->fwd[2]), dza));
            oka = lane_mask_and(oka, lane_cmp_ge(dot, lane_mul(lane_set1(a->fov_cos), lane_sqrt(d2a))));
        }
        if (fovb) {
            lanef dot = lane_add(lane_mul(lane_set1(b->fwd[0]), dxb), lane_mul(lane_set1(b->fwd[1]), dyb));
            if (three) dot = lane_add(dot, lane_mul(lane_set1(b->fwd[2]), dzb));
            okb = lane_mask_and(okb, lane_cmp_ge(dot, lane_mul(lane_set1(b->fov_cos), lane_sqrt(d2b))));
        }
        /* No skip of lanes without neighbors: see kernel_impl. */
        ca += __builtin_popcount(lane_mask_bits(oka));
        cb += __builtin_popcount(lane_mask_bits(okb));
        lanef vx = lane_loadu(s->cvx + j), vy = lane_loadu(s->cvy + j);
        lanef vz = three ? lane_loadu(s->cvz + j) : zero;
        /* Coincident pairs: see kernel_impl. */
        lanem seqa = oka, seqb = okb;
        lanem coa = lane_mask_and(oka, lane_cmp_lt(d2a, tiny));
        lanem cob = lane_mask_and(okb, lane_cmp_lt(d2b, tiny));
        if (lane_mask_any(lane_mask_or(coa, cob))) {
            seqa = lane_mask_andnot(oka, coa);
            seqb = lane_mask_andnot(okb, cob);
            lanef ira = lane_set1(1.0f / a->radius), irb = lane_set1(1.0f / b->radius);
            sxa = lane_masked_add(
                sxa, coa, lane_select(lane_mask_from_bits(below_bits(j, a->self)), lane_neg(ira), ira));
            sxb = lane_masked_add(
                sxb, cob, lane_select(lane_mask_from_bits(below_bits(j, b->self)), lane_neg(irb), irb));
        }
        lanef inva = lane_rcp_fast(lane_max(d2a, tiny)), invb = lane_rcp_fast(lane_max(d2b, tiny));
        sxa = lane_select(seqa, lane_fma_fast(dxa, inva, sxa), sxa);
        sya = lane_select(seqa, lane_fma_fast(dya, inva, sya), sya);
        axa = lane_masked_add(axa, oka, vx);
        aya = lane_masked_add(aya, oka, vy);
        cxa = lane_masked_add(cxa, oka, dxa);
        cya = lane_masked_add(cya, oka, dya);
        sxb = lane_select(seqb, lane_fma_fast(dxb, invb, sxb), sxb);
        syb = lane_select(seqb, lane_fma_fast(dyb, invb, syb), syb);
        axb = lane_masked_add(axb, okb, vx);
        ayb = lane_masked_add(ayb, okb, vy);
        cxb = lane_masked_add(cxb, okb, dxb);
        cyb = lane_masked_add(cyb, okb, dyb);
        if (three) {
            sza = lane_select(seqa, lane_fma_fast(dza, inva, sza), sza);
            aza = lane_masked_add(aza, oka, vz);
            cza = lane_masked_add(cza, oka, dza);
            szb = lane_select(seqb, lane_fma_fast(dzb, invb, szb), szb);
            azb = lane_masked_add(azb, okb, vz);
            czb = lane_masked_add(czb, okb, dzb);
        }
    }
    oa->n = (float)ca;
    ob->n = (float)cb;
    float h[4];
    lane_hsum4(lane_neg(sxa), lane_neg(sya), lane_neg(sxb), lane_neg(syb), h);
    oa->sep[0] = h[0];
    oa->sep[1] = h[1];
    ob->sep[0] = h[2];
    ob->sep[1] = h[3];
    lane_hsum4(axa, aya, axb, ayb, h);
    oa->ali[0] = h[0];
    oa->ali[1] = h[1];
    ob->ali[0] = h[2];
    ob->ali[1] = h[3];
    lane_hsum4(cxa, cya, cxb, cyb, h);
    oa->coh[0] = h[0];
    oa->coh[1] = h[1];
    ob->coh[0] = h[2];
    ob->coh[1] = h[3];
    if (three) {
        lane_hsum4(lane_neg(sza), aza, cza, lane_neg(szb), h);
        oa->sep[2] = h[0];
        oa->ali[2] = h[1];
        oa->coh[2] = h[2];
        ob->sep[2] = h[3];
        ob->ali[2] = lane_hsum(azb);
        ob->coh[2] = lane_hsum(czb);
    } else {
        oa->sep[2] = oa->ali[2] = oa->coh[2] = 0.0f;
        ob->sep[2] = ob->ali[2] = ob->coh[2] = 0.0f;
    }
}

static inline __attribute__((always_inline)) void kernel2(const grid_t* g, const nb_scratch_t* s, int32_t m,
                                                          const agent_in_t* a, const agent_in_t* b,
                                                          sums_t* oa, sums_t* ob)
{
    int wrap = g->wrap && !packs_shifted(g);
    if (g->dims == 3) {
        if (wrap)
            kernel2_impl(g, s, m, a, b, oa, ob, 1, 1);
        else
            kernel2_impl(g, s, m, a, b, oa, ob, 1, 0);
    } else {
        if (wrap)
            kernel2_impl(g, s, m, a, b, oa, ob, 0, 1);
        else
            kernel2_impl(g, s, m, a, b, oa, ob, 0, 0);
    }
}

/* The nearest `cap` of the neighbors the kernel marked (d2_keep >= 0),
 * summed in pack order. Selection by (d2, pack index): a total order, so
 * the result is unique. */
static void nearest_sums(const grid_t* g, const nb_scratch_t* s, int32_t m, const agent_in_t* a, int32_t cap,
                         sums_t* out)
{
    int32_t k = 0;
    for (int32_t j = 0; j < m; ++j)
        if (s->d2[j] >= 0.0f) s->idx[k++] = j;
    /* Partial selection sort: cap is small next to the candidates. */
    for (int32_t i = 0; i < cap && i < k; ++i) {
        int32_t best = i;
        for (int32_t j = i + 1; j < k; ++j) {
            float dj = s->d2[s->idx[j]], db = s->d2[s->idx[best]];
            if (dj < db || (dj == db && s->idx[j] < s->idx[best])) best = j;
        }
        int32_t t = s->idx[i];
        s->idx[i] = s->idx[best];
        s->idx[best] = t;
    }
    if (k > cap) k = cap;
    /* Sum in pack order for a fixed rounding. */
    for (int32_t i = 1; i < k; ++i)
        for (int32_t j = i; j > 0 && s->idx[j - 1] > s->idx[j]; --j) {
            int32_t t = s->idx[j];
            s->idx[j] = s->idx[j - 1];
            s->idx[j - 1] = t;
        }
    memset(out, 0, sizeof *out);
    int three = g->dims == 3;
    for (int32_t i = 0; i < k; ++i) {
        int32_t j = s->idx[i];
        float d[3] = {s->cx[j] - a->x[0], s->cy[j] - a->x[1], three ? s->cz[j] - a->x[2] : 0.0f};
        if (g->wrap)
            for (int c = 0; c < g->dims; ++c) d[c] = min_image(d[c], g->extent[c]);
        float d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        float v[3] = {s->cvx[j], s->cvy[j], three ? s->cvz[j] : 0.0f};
        out->n += 1.0f;
        if (d2 < COINCIDENT_D2) {
            out->sep[0] += j < a->self ? 1.0f / a->radius : -1.0f / a->radius;
        } else {
            for (int c = 0; c < 3; ++c) out->sep[c] += -d[c] * (1.0f / d2);
        }
        for (int c = 0; c < 3; ++c) {
            out->ali[c] += v[c];
            out->coh[c] += d[c];
        }
    }
}

/* The neighbors component's gains and weights, and the desired velocity
 * columns, looked up once per range. */

/* The agent pass below comes in one copy per (dimensions, torus) pair,
 * with that pair's kernels inlined and no others: each copy's registers go
 * to its own kernel (with all eight kernels inlined into one function, the
 * 3D pair kernel spilled its constants to the stack). `variant` -1 picks
 * the variant at run time (the hashed grids' path). */
#define KV_2D 0
#define KV_2D_WRAP 1
#define KV_3D 2
#define KV_3D_WRAP 3

static inline int kernel_variant(const grid_t* g)
{
    int wrap = g->wrap && !packs_shifted(g);
    return (g->dims == 3 ? 2 : 0) + wrap;
}

static inline __attribute__((always_inline)) void kernel_v(const grid_t* g, const nb_scratch_t* s, int32_t m,
                                                           const agent_in_t* a, sums_t* out, float* d2_keep,
                                                           const int variant)
{
    if (variant < 0)
        kernel(g, s, m, a, out, d2_keep);
    else
        kernel_impl(g, s, m, a, out, d2_keep, variant >= KV_3D, variant & 1);
}

static inline __attribute__((always_inline)) void kernel2_v(const grid_t* g, const nb_scratch_t* s, int32_t m,
                                                            const agent_in_t* a, const agent_in_t* b,
                                                            sums_t* oa, sums_t* ob, const int variant)
{
    if (variant < 0)
        kernel2(g, s, m, a, b, oa, ob);
    else
        kernel2_impl(g, s, m, a, b, oa, ob, variant >= KV_3D, variant & 1);
}

#endif /* SHOAL_SYSTEMS_NEIGHBORS_KERNEL_H */
