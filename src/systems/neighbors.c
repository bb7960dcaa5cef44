/* Separation, alignment and cohesion over the spatial hash (seed 003,
 * "Group behaviors"), written once on the lane layer.
 *
 * Work goes cell by cell: the agents of a cell's 3x3 (3x3x3) block of cells
 * lie contiguous in a per-worker buffer (a pack), and every agent of the
 * cell that has the neighbors component runs the pair kernel over it a full
 * lane at a time, two agents per pass. On a direct grid the pack is a
 * window of a strip that grows column by column along a row of cells (see
 * nb_strip), so each cell is copied 3 (9) times per step instead of 9
 * (27); hashed grids and narrow tori pack each block anew.
 *
 * For agent i and each neighbor j (within radius, inside the field of view,
 * not i itself), with d = x_j - x_i (minimal image on a torus) and w_j = 1:
 *   separation  S = sum -d / |d|^2        V_sep = K_sep S
 *   alignment   A = sum v_j               V_ali = K_align A / n
 *   cohesion    C = sum d                 V_coh = K_coh C / n  (= x_cm - x)
 * and desired += c_sep V_sep + c_ali V_ali + c_coh V_coh. Cohesion uses
 * offsets rather than absolute positions, which keeps precision far from
 * the origin and is exact across torus edges.
 *
 * With max_neighbors > 0 and more neighbors than that, only the nearest
 * count (ties broken by packing order); that path is scalar and rare. */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/rng.h"
#include "simd/lanes.h"
#include "simd/vec.h"
#include "systems/spatial_hash.h"
#include "systems/systems.h"

/* Below this squared distance two agents count as coincident: separation
 * then pushes them apart along x as if they were one radius apart, in
 * opposite directions, instead of dividing by zero. */
#define COINCIDENT_D2 1e-12f

#define MAX_BLOCK 27

typedef struct nb_scratch {
    float* cx; float* cy; float* cz;    /* packed candidate positions */
    float* cvx; float* cvy; float* cvz; /* and velocities */
    float* d2;                          /* capped path: distances */
    int32_t* idx;                       /* capped path: pack indices */
} nb_scratch;

typedef struct nb_ctx {
    world_t* w;
    grid_t* g;
    int64_t* worker_agents;
    int64_t* worker_pairs;
    int64_t* worker_found;
} nb_ctx;

/* Integer cell of sorted agent k. */
static void cell_of(const grid_t* g, int32_t k, int32_t c[3])
{
    c[0] = grid_coord(g, g->sx[k], 0);
    c[1] = grid_coord(g, g->sy[k], 1);
    c[2] = g->dims == 3 ? grid_coord(g, g->sz[k], 2) : 0;
}

/* Cell of a bucket of a directly indexed torus grid. */
static void cell_of_bucket(const grid_t* g, uint32_t b, int32_t c[3])
{
    c[0] = (int32_t)(b % (uint32_t)g->n[0]);
    b /= (uint32_t)g->n[0];
    c[1] = (int32_t)(b % (uint32_t)g->n[1]);
    c[2] = (int32_t)(b / (uint32_t)g->n[1]);
}

/* Whether packs carry torus images: on a torus at least 3 cells wide on
 * every axis, the cells across an edge are copied shifted by the box
 * extent, so every candidate sits at its nearest image of the agent's cell
 * and the kernel needs no minimal-image arithmetic. (A neighbor is within
 * one cell, at most a third of the box, so the adjacent image is the
 * nearest.) Narrower tori keep the minimal-image kernel. */
static int packs_shifted(const grid_t* g)
{
    return g->wrap && g->n[0] >= 3 && g->n[1] >= 3 && (g->dims == 2 || g->n[2] >= 3);
}

/* Distinct buckets of the block of cells around `c`, and for each the
 * shift to apply to its positions (nonzero only across a torus edge when
 * packs_shifted()); returns how many. */
static int block_buckets(const grid_t* g, const int32_t c[3], uint32_t* out, float (*shift)[3])
{
    int count = 0;
    int zr = g->dims == 3 ? 1 : 0;
    int shifted = packs_shifted(g);
    /* A direct grid at least 3 cells wide on every axis has 9 (27)
     * distinct cells around any cell: no duplicates to look for. */
    int distinct = g->direct && g->n[0] >= 3 && g->n[1] >= 3 && (!zr || g->n[2] >= 3);
    for (int dz = -zr; dz <= zr; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                int32_t i[3] = {c[0] + dx, c[1] + dy, c[2] + dz};
                float sh[3] = {0.0f, 0.0f, 0.0f};
                if (g->wrap) { /* c is in range, so one correction wraps */
                    for (int k = 0; k < 2 + zr; ++k) {
                        if (i[k] < 0) {
                            i[k] += g->n[k];
                            sh[k] = -g->extent[k];
                        } else if (i[k] >= g->n[k]) {
                            i[k] -= g->n[k];
                            sh[k] = g->extent[k];
                        }
                    }
                }
                uint32_t b = grid_bucket(g, i[0], i[1], i[2]);
                int seen = 0;
                if (!distinct)
                    for (int k = 0; k < count; ++k) seen |= out[k] == b;
                if (seen) continue;
                if (shift) {
                    for (int k = 0; k < 3; ++k) shift[count][k] = shifted ? sh[k] : 0.0f;
                }
                out[count++] = b;
            }
    return count;
}

/* Append sorted agents [lo, hi) to the pack at m, positions shifted by sh
 * (a zero shift copies: see below). Every array goes through one loop, and
 * the first two lanes are copied whatever the run's length: a run is
 * usually 3 cells of a few agents, so the copy is then branch-free, where a
 * loop per array whose trip count follows the run's length mispredicts on
 * almost every run. Copies run up to 2 lanes past hi in the sorted arrays
 * (their SHOAL_PAD_FLOATS of padding) and past the pack's end (its slack),
 * and the next run or pack_finish overwrites what lies past m + hi - lo. */
static inline int32_t pack_run(const grid_t* g, nb_scratch* s, int32_t m, int32_t lo, int32_t hi,
                               const float sh[3], int three)
{
    const int32_t len = hi - lo;
    /* x + 0 is x for every position but -0, which would become +0: an
     * axis's zero shift is not added, so the pack holds the sorted copies'
     * bits wherever nothing is shifted. */
    const int on_x = sh[0] != 0.0f, on_y = sh[1] != 0.0f, on_z = sh[2] != 0.0f;
    const lanef hx = lane_set1(sh[0]), hy = lane_set1(sh[1]), hz = lane_set1(sh[2]);
    int32_t i = 0;
    do {
        for (int u = 0; u < 2; ++u, i += SHOAL_LANES) {
            lanef x = lane_loadu(g->sx + lo + i), y = lane_loadu(g->sy + lo + i);
            lane_storeu(s->cx + m + i, on_x ? lane_add(x, hx) : x);
            lane_storeu(s->cy + m + i, on_y ? lane_add(y, hy) : y);
            lane_storeu(s->cvx + m + i, lane_loadu(g->svx + lo + i));
            lane_storeu(s->cvy + m + i, lane_loadu(g->svy + lo + i));
            if (three) {
                lanef z = lane_loadu(g->sz + lo + i);
                lane_storeu(s->cz + m + i, on_z ? lane_add(z, hz) : z);
                lane_storeu(s->cvz + m + i, lane_loadu(g->svz + lo + i));
            }
        }
    } while (i < len);
    return m + len;
}

/* One lane past the end of a pack of m: candidates at +infinity with zero
 * velocity. Their distance is infinite (or NaN from an infinite position),
 * which no radius admits, so the kernel needs no mask for a pack's last,
 * partial lane. */
static inline void pack_finish(nb_scratch* s, int32_t m, int three)
{
    lanef z = lane_zero(), far = lane_set1(INFINITY);
    lane_storeu(s->cx + m, far);
    lane_storeu(s->cy + m, far);
    lane_storeu(s->cvx + m, z);
    lane_storeu(s->cvy + m, z);
    if (three) {
        lane_storeu(s->cz + m, far);
        lane_storeu(s->cvz + m, z);
    }
}

/* Pack the agents of `buckets` into s; returns the count and sets
 * *self_base to where bucket `own` starts in the pack. */
static int32_t pack_block(const grid_t* g, const uint32_t* buckets, const float (*shift)[3], int nb,
                          uint32_t own, nb_scratch* s, int32_t* self_base)
{
    int32_t m = 0;
    int three = g->dims == 3;
    for (int b = 0; b < nb;) {
        /* Buckets listed x-fastest are consecutive along a row of a direct
         * grid: copy such a run of cells (with one shift) as one range. */
        int e = b + 1;
        while (e < nb && buckets[e] == buckets[e - 1] + 1 && shift[e][0] == shift[b][0] &&
               shift[e][1] == shift[b][1] && shift[e][2] == shift[b][2])
            ++e;
        int32_t lo = g->cell_start[buckets[b]], hi = g->cell_start[buckets[e - 1] + 1];
        for (int k = b; k < e; ++k)
            if (buckets[k] == own) *self_base = m + (g->cell_start[own] - lo);
        m = pack_run(g, s, m, lo, hi, shift[b], three);
        b = e;
    }
    pack_finish(s, m, three);
    return m;
}

/* Strips. Cells of a direct grid go along x, so the blocks of consecutive
 * cells of a row overlap in two of their three columns of cells (a column:
 * the 3 (9) cells at one x of the rows around the cell's). A worker keeps
 * one strip per row: columns appended in x order, each its cells' agents
 * in (z, y) order, shifted where they lie across a torus edge. The block
 * of cell x is then the strip's columns x - 1 .. x + 1, contiguous, and
 * each cell is copied once per column it belongs to (3 times in 2D, 9 in
 * 3D) instead of once per block (9 and 27 times). A block's content and
 * order do not depend on where its strip began, so results do not depend
 * on how cells are split between workers. */
typedef struct nb_strip {
    int32_t y, z;      /* row of cells (y = INT32_MIN: none) */
    int32_t next;      /* column the next append adds */
    int32_t len;       /* candidates in the strip */
    int32_t room;      /* start over when len passes this */
    int32_t start[4];  /* start of column c at [c & 3] (the last 4 columns) */
    int32_t own[4];    /* where the column's middle cell starts */
    int shifted;       /* some row of the column lies across a torus edge */
    int32_t rows[9];   /* bucket of each row's cell at x = 0, in (z, y) order */
    float shy[9], shz[9];
} nb_strip;

/* Whether cells can go through strips: a direct grid at least 3 cells
 * wide on every axis, so a block's 9 (27) cells are distinct and packs
 * carry torus images. */
static inline int strips_ok(const grid_t* g)
{
    return g->direct && packs_shifted(g);
}

/* Cell index and torus shift of coordinate i (within one cell of the grid)
 * along axis k. */
static inline int32_t strip_wrap(const grid_t* g, int32_t i, int k, float* shift)
{
    *shift = 0.0f;
    if (i < 0) {
        *shift = -g->extent[k];
        return i + g->n[k];
    }
    if (i >= g->n[k]) {
        *shift = g->extent[k];
        return i - g->n[k];
    }
    return i;
}

/* Start an empty strip on the row of cell c, at column x. */
static void strip_row(const grid_t* g, nb_strip* st, const int32_t c[3], int32_t x)
{
    int three = g->dims == 3;
    st->y = c[1];
    st->z = c[2];
    st->next = x;
    st->len = 0;
    st->shifted = 0;
    int r = 0;
    for (int dz = three ? -1 : 0; dz <= (three ? 1 : 0); ++dz) {
        float shz = 0.0f;
        int32_t cz = three ? strip_wrap(g, c[2] + dz, 2, &shz) : 0;
        for (int dy = -1; dy <= 1; ++dy, ++r) {
            float shy;
            int32_t cy = strip_wrap(g, c[1] + dy, 1, &shy);
            st->rows[r] = (cz * g->n[1] + cy) * g->n[0];
            st->shy[r] = shy;
            st->shz[r] = shz;
            st->shifted |= shy != 0.0f || shz != 0.0f;
        }
    }
}

/* Append column x: the cells of the strip's rows at x, each copied a lane
 * at a time (a cell holds a few agents, so one lane is nearly always all
 * of it). Copies run up to a lane past each cell in the sorted arrays
 * (their padding) and in the strip (its slack); the next cell or
 * pack_finish overwrites what lies past the end. `shifted`: some row or
 * the column lies across a torus edge; an axis's zero shift is not added
 * (x + 0 would turn a -0 into +0), so the strip holds the sorted copies'
 * bits wherever nothing is shifted. */
static inline __attribute__((always_inline)) void
strip_column(const grid_t* g, nb_scratch* restrict s, nb_strip* st, int32_t x, const int three,
             const int shifted)
{
    float shx;
    int32_t cx = strip_wrap(g, x, 0, &shx);
    const int32_t* restrict cell_start = g->cell_start;
    const float* restrict sx = g->sx;
    const float* restrict sy = g->sy;
    const float* restrict sz = g->sz;
    const float* restrict svx = g->svx;
    const float* restrict svy = g->svy;
    const float* restrict svz = g->svz;
    float* restrict px = s->cx;
    float* restrict py = s->cy;
    float* restrict pz = s->cz;
    float* restrict pvx = s->cvx;
    float* restrict pvy = s->cvy;
    float* restrict pvz = s->cvz;
    const lanef hx = lane_set1(shx);
    const int nrows = three ? 9 : 3, mid = three ? 4 : 1;
    int32_t m = st->len;
    st->start[x & 3] = m;
    for (int r = 0; r < nrows; ++r) {
        int32_t b = st->rows[r] + cx;
        int32_t lo = cell_start[b], len = cell_start[b + 1] - lo;
        if (r == mid) st->own[x & 3] = m;
        const lanef hy = lane_set1(st->shy[r]), hz = lane_set1(st->shz[r]);
        const int on_x = shifted && shx != 0.0f, on_y = shifted && st->shy[r] != 0.0f;
        const int on_z = shifted && three && st->shz[r] != 0.0f;
        for (int32_t i = 0; i < len; i += SHOAL_LANES) {
            lanef vx = lane_loadu(sx + lo + i), vy = lane_loadu(sy + lo + i);
            lane_storeu(px + m + i, on_x ? lane_add(vx, hx) : vx);
            lane_storeu(py + m + i, on_y ? lane_add(vy, hy) : vy);
            lane_storeu(pvx + m + i, lane_loadu(svx + lo + i));
            lane_storeu(pvy + m + i, lane_loadu(svy + lo + i));
            if (three) {
                lanef vz = lane_loadu(sz + lo + i);
                lane_storeu(pz + m + i, on_z ? lane_add(vz, hz) : vz);
                lane_storeu(pvz + m + i, lane_loadu(svz + lo + i));
            }
        }
        m += len;
    }
    st->len = m;
    st->next = x + 1;
}

/* Bring the strip to the block of cell c: columns c[0] - 1 .. c[0] + 1 of
 * its row. Sets *base (where the block starts in the strip) and
 * *self_base (where cell c starts in the block); returns the block's
 * candidates. */
static inline __attribute__((always_inline)) int32_t
strip_block(const grid_t* g, nb_scratch* s, nb_strip* st, const int32_t c[3], int32_t* base,
            int32_t* self_base, const int three)
{
    int32_t x = c[0];
    /* A new row, or a gap of empty cells: start over at column x - 1. */
    if (c[1] != st->y || c[2] != st->z) strip_row(g, st, c, x - 1);
    if (st->next < x - 1) {
        st->next = x - 1;
        st->len = 0;
    }
    while (st->next <= x + 1) {
        int32_t col = st->next;
        if (st->len > st->room) {
            /* Full: move the columns still needed (x - 1 .. col - 1) to the
             * front. */
            int32_t keep = col > x - 1 ? st->start[(x - 1) & 3] : st->len;
            int32_t moved = st->len - keep;
            if (moved > 0) {
                memmove(s->cx, s->cx + keep, (size_t)moved * sizeof(float));
                memmove(s->cy, s->cy + keep, (size_t)moved * sizeof(float));
                memmove(s->cvx, s->cvx + keep, (size_t)moved * sizeof(float));
                memmove(s->cvy, s->cvy + keep, (size_t)moved * sizeof(float));
                if (three) {
                    memmove(s->cz, s->cz + keep, (size_t)moved * sizeof(float));
                    memmove(s->cvz, s->cvz + keep, (size_t)moved * sizeof(float));
                }
            }
            for (int32_t k = x - 1; k < col; ++k) {
                st->start[k & 3] -= keep;
                st->own[k & 3] -= keep;
            }
            st->len = moved;
        }
        if (st->shifted || col < 0 || col >= g->n[0])
            strip_column(g, s, st, col, three, 1);
        else
            strip_column(g, s, st, col, three, 0);
    }
    pack_finish(s, st->len, three);
    *base = st->start[(x - 1) & 3];
    *self_base = st->own[x & 3] - *base;
    return st->len - *base;
}

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
} sums;

typedef struct agent_in {
    float x[3];
    float fwd[3];
    float r2, radius, fov_cos;
    int32_t self; /* index in the pack */
} agent_in;

/* The lane kernel over a pack of m candidates. Always inlined into one
 * copy per (dimensions, torus) pair, so the 2D copy does no z arithmetic
 * and the unbounded copies no minimal-image selects. */
static inline __attribute__((always_inline)) void
kernel_impl(const grid_t* g, const nb_scratch* s, int32_t m, const agent_in* a, sums* out,
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

static inline __attribute__((always_inline)) void
kernel(const grid_t* g, const nb_scratch* s, int32_t m, const agent_in* a, sums* out,
       float* d2_keep)
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
static inline __attribute__((always_inline)) void
kernel2_impl(const grid_t* g, const nb_scratch* s, int32_t m, const agent_in* a,
             const agent_in* b, sums* oa, sums* ob, const int three, const int wrap)
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
            sxa = lane_masked_add(sxa, coa, lane_select(lane_mask_from_bits(below_bits(j, a->self)), lane_neg(ira), ira));
            sxb = lane_masked_add(sxb, cob, lane_select(lane_mask_from_bits(below_bits(j, b->self)), lane_neg(irb), irb));
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

static inline __attribute__((always_inline)) void kernel2(const grid_t* g, const nb_scratch* s, int32_t m, const agent_in* a,
                    const agent_in* b, sums* oa, sums* ob)
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
static void nearest_sums(const grid_t* g, const nb_scratch* s, int32_t m, const agent_in* a,
                         int32_t cap, sums* out)
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
typedef struct nb_out {
    const float *k_sep, *k_ali, *k_coh, *w_sep, *w_ali, *w_coh;
    float *dx, *dy, *dz; /* dz NULL in 2D */
} nb_out;

/* desired += c_sep V_sep + c_ali V_ali + c_coh V_coh, with the parameters
 * of component row cr. */
static inline void apply_sums(const nb_out* o, int32_t cr, int32_t row, const sums* r)
{
    if (r->n == 0.0f) return;
    float inv_n = 1.0f / r->n;
    float ks = o->k_sep[cr] * o->w_sep[cr];
    float ka = o->k_ali[cr] * o->w_ali[cr] * inv_n;
    float kc = o->k_coh[cr] * o->w_coh[cr] * inv_n;
    o->dx[row] += ks * r->sep[0] + ka * r->ali[0] + kc * r->coh[0];
    o->dy[row] += ks * r->sep[1] + ka * r->ali[1] + kc * r->coh[1];
    if (o->dz) o->dz[row] += ks * r->sep[2] + ka * r->ali[2] + kc * r->coh[2];
}

/* What the agent passes of one range read and write. */
typedef struct nb_env {
    world_t* w;
    const grid_t* g;
    nb_out out;
    const float* radius;
    const float* fov_cos;
    const int32_t* max;
    /* Parameters of component row cr are at row cr & pmask: 0 when every
     * parameter column holds one value, so all agents read row 0 (a few
     * cache lines) instead of their own rows (several misses per agent
     * once rows drift from the sorted order between reorders). */
    int32_t pmask;
} nb_env;

typedef struct nb_counts {
    int64_t touched, pairs, found;
} nb_counts;

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

static inline __attribute__((always_inline)) void
kernel_v(const grid_t* g, const nb_scratch* s, int32_t m, const agent_in* a, sums* out,
         float* d2_keep, const int variant)
{
    if (variant < 0) kernel(g, s, m, a, out, d2_keep);
    else kernel_impl(g, s, m, a, out, d2_keep, variant >= KV_3D, variant & 1);
}

static inline __attribute__((always_inline)) void
kernel2_v(const grid_t* g, const nb_scratch* s, int32_t m, const agent_in* a, const agent_in* b,
          sums* oa, sums* ob, const int variant)
{
    if (variant < 0) kernel2(g, s, m, a, b, oa, ob);
    else kernel2_impl(g, s, m, a, b, oa, ob, variant >= KV_3D, variant & 1);
}

/* The pack of bucket q of a direct grid (one cell) too narrow for strips. */
static inline int32_t pack_cell(const grid_t* g, uint32_t q, nb_scratch* s, int32_t* self_base)
{
    int32_t cell[3];
    cell_of_bucket(g, q, cell);
    uint32_t buckets[MAX_BLOCK];
    float shift[MAX_BLOCK][3];
    int nb = block_buckets(g, cell, buckets, shift);
    return pack_block(g, buckets, (const float(*)[3])shift, nb, q, s, self_base);
}

/* First bucket in [q, end) holding agents, or end. */
static inline int32_t next_occupied(const grid_t* g, int32_t q, int32_t end)
{
    while (q < end && g->cell_start[q + 1] == g->cell_start[q]) ++q;
    return q;
}

/* Agent inputs of sorted agent k (component row cr) at pack index self. */
static inline __attribute__((always_inline)) void
agent_load(const nb_env* e, int32_t k, int32_t cr, int32_t self, agent_in* a)
{
    const grid_t* g = e->g;
    a->x[0] = g->sx[k];
    a->x[1] = g->sy[k];
    a->x[2] = g->dims == 3 ? g->sz[k] : 0.0f;
    a->radius = e->radius[cr & e->pmask];
    a->r2 = a->radius * a->radius;
    a->fov_cos = e->fov_cos[cr & e->pmask];
    a->self = self;
    a->fwd[0] = a->fwd[1] = a->fwd[2] = 0.0f;
    if (a->fov_cos > -1.0f) {
        vec3 f = agent_forward(e->w, g->order[k]);
        a->fwd[0] = f.x;
        a->fwd[1] = f.y;
        a->fwd[2] = f.z;
    }
}

/* The agents [first, hi) of one cell, whose block is packed in s (m
 * candidates, sorted agent k at pack index k + self0): capped agents run
 * alone, the others in pairs through kernel2, an odd one last alone. */
static inline __attribute__((always_inline)) void
cell_agents(const nb_env* e, nb_scratch* s, int32_t m, int32_t self0, int32_t first, int32_t hi,
            nb_counts* n, const int variant)
{
    const grid_t* g = e->g;
    int32_t pend = -1, touched = 0;
    for (int32_t k = first; k < hi; ++k) {
        int32_t cr = g->scomp[k];
        if (cr < 0) continue;
        ++touched;
        if (e->max[cr & e->pmask] > 0) {
            agent_in a;
            agent_load(e, k, cr, k + self0, &a);
            sums r;
            kernel_v(g, s, m, &a, &r, s->d2, variant);
            int32_t cap = e->max[cr & e->pmask];
            if (r.n > (float)cap) nearest_sums(g, s, m, &a, cap, &r);
            n->found += (int64_t)r.n;
            apply_sums(&e->out, cr & e->pmask, g->order[k], &r);
            continue;
        }
        if (pend < 0) {
            pend = k;
            continue;
        }
        int32_t pcr = g->scomp[pend];
        agent_in a, b;
        agent_load(e, pend, pcr, pend + self0, &a);
        agent_load(e, k, cr, k + self0, &b);
        sums ra, rb;
        kernel2_v(g, s, m, &a, &b, &ra, &rb, variant);
        n->found += (int64_t)ra.n + (int64_t)rb.n;
        apply_sums(&e->out, pcr & e->pmask, g->order[pend], &ra);
        apply_sums(&e->out, cr & e->pmask, g->order[k], &rb);
        pend = -1;
    }
    if (pend >= 0) {
        int32_t pcr = g->scomp[pend];
        agent_in a;
        agent_load(e, pend, pcr, pend + self0, &a);
        sums r;
        kernel_v(g, s, m, &a, &r, NULL, variant);
        n->found += (int64_t)r.n;
        apply_sums(&e->out, pcr & e->pmask, g->order[pend], &r);
    }
    n->touched += touched;
    n->pairs += (int64_t)touched * m;
}

/* A direct grid: a bucket is one cell, packed once for all its agents,
 * through strips when the grid allows them. */
static inline __attribute__((always_inline)) void
range_direct_v(const nb_env* e, nb_scratch* s, int32_t begin, int32_t end, nb_counts* n,
               const int variant)
{
    const grid_t* g = e->g;
    const int strips = strips_ok(g);
    /* A strip holds nb_per - 2 lanes: a column appended past `room` would
     * not fit for sure, so the strip moves its last columns to the front. */
    const int32_t column_most = g->nb_largest * (g->dims == 3 ? 9 : 3);
    nb_strip st = {.y = INT32_MIN, .room = (int32_t)g->nb_per - 2 * SHOAL_MAX_LANES - column_most};
    for (int32_t q = next_occupied(g, begin, end); q < end; q = next_occupied(g, q + 1, end)) {
        int32_t lo = g->cell_start[q], hi = g->cell_start[q + 1];
        int32_t first = lo; /* a cell without the component is not packed */
        while (first < hi && g->scomp[first] < 0) ++first;
        if (first == hi) continue;
        int32_t self_base = 0, m;
        if (strips) {
            int32_t cell[3], base;
            cell_of_bucket(g, (uint32_t)q, cell);
            m = strip_block(g, s, &st, cell, &base, &self_base, variant >= KV_3D);
            nb_scratch v = *s;
            v.cx += base;
            v.cy += base;
            v.cz += base;
            v.cvx += base;
            v.cvy += base;
            v.cvz += base;
            cell_agents(e, &v, m, self_base - lo, first, hi, n, variant);
        } else {
            m = pack_cell(g, (uint32_t)q, s, &self_base);
            cell_agents(e, s, m, self_base - lo, first, hi, n, variant);
        }
    }
}

#define RANGE_DIRECT(name, variant)                                                          \
    static __attribute__((noinline)) void name(const nb_env* e, nb_scratch* s, int32_t begin, \
                                               int32_t end, nb_counts* n)                   \
    {                                                                                        \
        range_direct_v(e, s, begin, end, n, variant);                                        \
    }
RANGE_DIRECT(range_direct_2d, KV_2D)
RANGE_DIRECT(range_direct_2d_wrap, KV_2D_WRAP)
RANGE_DIRECT(range_direct_3d, KV_3D)
RANGE_DIRECT(range_direct_3d_wrap, KV_3D_WRAP)

static void range_direct(const nb_env* e, nb_scratch* s, int32_t begin, int32_t end, nb_counts* n)
{
    static void (*const by_variant[4])(const nb_env*, nb_scratch*, int32_t, int32_t, nb_counts*) = {
        range_direct_2d, range_direct_2d_wrap, range_direct_3d, range_direct_3d_wrap};
    by_variant[kernel_variant(e->g)](e, s, begin, end, n);
}

/* A hashed grid: a bucket may hold agents of several cells, in row order;
 * the pack is rebuilt whenever the cell changes, and each run of agents of
 * one cell goes through cell_agents. */
static void range_hashed(const nb_env* e, nb_scratch* s, int32_t begin, int32_t end, nb_counts* n)
{
    const grid_t* g = e->g;
    uint32_t buckets[MAX_BLOCK];
    float shift[MAX_BLOCK][3];
    for (int32_t q = begin; q < end; ++q) {
        int32_t lo = g->cell_start[q], hi = g->cell_start[q + 1];
        int32_t packed[3] = {INT32_MIN, 0, 0};
        int32_t m = 0, self_base = 0;
        int32_t k = lo;
        while (k < hi && g->scomp[k] < 0) ++k;
        while (k < hi) {
            int32_t cell[3], other[3];
            cell_of(g, k, cell);
            /* The run: up to the next agent with the component in another cell. */
            int32_t run_end = k + 1;
            for (; run_end < hi; ++run_end) {
                if (g->scomp[run_end] < 0) continue;
                cell_of(g, run_end, other);
                if (other[0] != cell[0] || other[1] != cell[1] || other[2] != cell[2]) break;
            }
            if (cell[0] != packed[0] || cell[1] != packed[1] || cell[2] != packed[2]) {
                int nb = block_buckets(g, cell, buckets, shift);
                m = pack_block(g, buckets, (const float(*)[3])shift, nb, (uint32_t)q, s, &self_base);
                memcpy(packed, cell, sizeof packed);
            }
            cell_agents(e, s, m, self_base - lo, k, run_end, n, -1);
            k = run_end;
        }
    }
}

/* Floats of one worker's scratch: a pack (6 arrays) and the capped path's
 * d2 and idx. */
#define NB_ARRAYS 8

/* Candidates a worker's pack arrays hold at least. */
#define NB_STRIP_FLOATS 2048

static void worker_scratch(const grid_t* g, int32_t worker, nb_scratch* s)
{
    size_t per = g->nb_per;
    float* block = g->nb_mem + (size_t)worker * per * NB_ARRAYS;
    s->cx = block;
    s->cy = block + per;
    s->cz = block + 2 * per;
    s->cvx = block + 3 * per;
    s->cvy = block + 4 * per;
    s->cvz = block + 5 * per;
    s->d2 = block + 6 * per;
    s->idx = (int32_t*)(block + 7 * per);
}

static void neighbors_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    nb_ctx* c = (nb_ctx*)vctx;
    world_t* w = c->w;
    const grid_t* g = c->g;
    const component_t* comp = &w->comps[COMP_NEIGHBORS];
    const nb_env e = {
        w, g,
        {TABLE_COL(&comp->table, float, NB_K_SEP), TABLE_COL(&comp->table, float, NB_K_ALI),
         TABLE_COL(&comp->table, float, NB_K_COH), TABLE_COL(&comp->table, float, NB_W_SEP),
         TABLE_COL(&comp->table, float, NB_W_ALI), TABLE_COL(&comp->table, float, NB_W_COH),
         AGENT_F(w, AC_DESIRED_X), AGENT_F(w, AC_DESIRED_Y),
         g->dims == 3 ? AGENT_F(w, AC_DESIRED_Z) : NULL},
        TABLE_COL(&comp->table, float, NB_RADIUS), TABLE_COL(&comp->table, float, NB_FOV_COS),
        TABLE_COL(&comp->table, int32_t, NB_MAX), g->nb_params_state == 1 ? 0 : -1};
    nb_scratch s;
    worker_scratch(g, worker, &s);
    nb_counts n = {0, 0, 0};
    if (g->direct)
        range_direct(&e, &s, begin, end, &n);
    else
        range_hashed(&e, &s, begin, end, &n);
    c->worker_agents[worker] += n.touched;
    c->worker_pairs[worker] += n.pairs;
    c->worker_found[worker] += n.found;
}

/* Floats of the per-worker scratch this step needs (NB_ARRAYS arrays of
 * `*per` floats per worker): a block of 9 (27) buckets holds at most that
 * many times the largest, and never more than all agents. */
static size_t pack_floats(const world_t* w, const grid_t* g, int32_t count, int32_t largest,
                          size_t* per_out)
{
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    int64_t most = (int64_t)largest * (g->dims == 3 ? 27 : 9);
    if (most > count) most = count;
    /* Strips want room for many columns before they have to start over. */
    if (most < NB_STRIP_FLOATS) most = NB_STRIP_FLOATS;
    size_t per = (size_t)most + 2 * SHOAL_MAX_LANES;
    per = (per + 15) / 16 * 16; /* keep every array 64-byte aligned */
    *per_out = per;
    return per * NB_ARRAYS * (size_t)workers;
}

int neighbors_reserve(world_t* w, grid_t* g, int32_t count, int32_t largest)
{
    size_t per;
    size_t need = pack_floats(w, g, count, largest, &per);
    g->nb_per = 0;
    if (need > g->nb_mem_floats) {
        float* mem = mem_alloc(&w->alloc, need * sizeof(float));
        if (!mem) {
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "neighbors: out of memory for packs of %zu candidates", per);
            return 0;
        }
        mem_free(&w->alloc, g->nb_mem, g->nb_mem_floats * sizeof(float));
        g->nb_mem = mem;
        g->nb_mem_floats = need;
    }
    g->nb_per = per;
    g->nb_largest = largest;
    return 1;
}

/* Whether every column the agent passes read holds one value (compared as
 * bits), rechecked only when the component's rows were written since. */
static void params_uniform(const world_t* w, grid_t* g)
{
    const component_t* comp = &w->comps[COMP_NEIGHBORS];
    if (g->nb_params_state != 0 && g->nb_params_version == comp->version) return;
    static const int cols[] = {NB_RADIUS, NB_FOV_COS, NB_MAX, NB_K_SEP, NB_K_ALI,
                               NB_K_COH, NB_W_SEP, NB_W_ALI, NB_W_COH};
    int uniform = 1;
    for (size_t c = 0; c < sizeof cols / sizeof cols[0] && uniform; ++c)
        uniform = table_column_uniform(&comp->table, cols[c]);
    g->nb_params_state = uniform ? 1 : 2;
    g->nb_params_version = comp->version;
}

int64_t neighbors_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    grid_t* g = grid_data(w);
    if (!g || g->count == 0) return 0;
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    int64_t wagents[SHOAL_MAX_THREADS], wpairs[SHOAL_MAX_THREADS], wfound[SHOAL_MAX_THREADS];
    memset(wagents, 0, (size_t)workers * sizeof *wagents);
    memset(wpairs, 0, (size_t)workers * sizeof *wpairs);
    memset(wfound, 0, (size_t)workers * sizeof *wfound);
    nb_ctx c = {w, g, wagents, wpairs, wfound};
    params_uniform(w, g);
    /* The spatial hash sized and grew the packs (neighbors_reserve) before
     * the step changed anything. */
    size_t per = g->nb_per;
    if (per == 0 || per * NB_ARRAYS * (size_t)workers > g->nb_mem_floats) {
        world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "neighbors: the spatial hash did not run this step");
        return -(int64_t)SHOAL_ERR_INVALID_ARGUMENT;
    }
    /* Each worker starts on its own contiguous share of cells, whose agents
     * the static systems around this one also give it, and then helps with
     * what is left of the others. */
    par_for(w, g->bucket_count, 64, PAR_AFFINE, neighbors_range, &c);
    int64_t touched = 0;
    g->pair_tests = g->neighbor_sum = 0;
    for (int32_t i = 0; i < workers; ++i) {
        touched += wagents[i];
        g->pair_tests += wpairs[i];
        g->neighbor_sum += wfound[i];
    }
    g->kernel_agents = touched;
    return touched;
}

int64_t neighbors_bench_kernel(int dims, int32_t candidates, int64_t iterations, double* seconds)
{
    /* A cube (square) of candidates of side 2, radius 1 around its center:
     * about half (a third in 3D) of the candidates are neighbors, which is
     * what a 3x3 block with K neighbors per agent looks like. */
    if (candidates < 1) candidates = 1;
    if (candidates > 1 << 16) candidates = 1 << 16;
    size_t per = ((size_t)candidates + 2 * SHOAL_MAX_LANES + 15) / 16 * 16;
    allocator_t alloc = allocator_default();
    float* mem = mem_alloc(&alloc, per * 8 * sizeof(float));
    if (!mem) {
        *seconds = 0.0;
        return 0;
    }
    grid_t g;
    memset(&g, 0, sizeof g);
    g.dims = dims;
    /* The copy of the kernel `bench flock` runs: its torus packs carry
     * shifted images, so it uses the kernel without minimal image. */
    g.wrap = 0;
    nb_scratch s = {mem, mem + per, mem + 2 * per, mem + 3 * per, mem + 4 * per, mem + 5 * per,
                    mem + 6 * per, (int32_t*)(mem + 7 * per)};
    for (int32_t j = 0; j < candidates + SHOAL_LANES; ++j) {
        int live = j < candidates;
        /* Past the end: what pack_finish leaves there. */
        s.cx[j] = live ? rng_range(1, (uint64_t)j, 0, 0, -1.5f, 1.5f) : INFINITY;
        s.cy[j] = live ? rng_range(1, (uint64_t)j, 0, 1, -1.5f, 1.5f) : INFINITY;
        s.cz[j] = !live ? INFINITY : dims == 3 ? rng_range(1, (uint64_t)j, 0, 2, -1.5f, 1.5f) : 0.0f;
        s.cvx[j] = live ? rng_range(1, (uint64_t)j, 1, 0, -1.0f, 1.0f) : 0.0f;
        s.cvy[j] = live ? rng_range(1, (uint64_t)j, 1, 1, -1.0f, 1.0f) : 0.0f;
        s.cvz[j] = 0.0f;
    }
    agent_in a;
    memset(&a, 0, sizeof a);
    a.radius = 1.0f;
    a.r2 = 1.0f;
    a.fov_cos = -1.0f;
    a.self = 0;
    float sink[20] = {0.0f};
    uint64_t t0 = world_now_ns();
    /* Agents go through in pairs, as the flock step runs them (kernel2);
     * each pass is two agents' worth of pair tests. */
    agent_in b = a;
    for (int64_t it = 0; it < iterations; it += 2) {
        /* Move the agents around so the compiler cannot hoist the kernel. */
        int32_t ia = (int32_t)(it % candidates), ib = (int32_t)((it + 1) % candidates);
        a.x[0] = s.cx[ia];
        a.x[1] = s.cy[ia];
        a.x[2] = s.cz[ia];
        a.self = ia;
        b.x[0] = s.cx[ib];
        b.x[1] = s.cy[ib];
        b.x[2] = s.cz[ib];
        b.self = ib;
        sums ra, rb;
        kernel2(&g, &s, candidates, &a, &b, &ra, &rb);
        /* Every sum is used, as the step uses them (otherwise the compiler
         * drops the alignment and cohesion sums from the loop), each into
         * its own total so that no chain of additions sets the pace. */
        for (int c = 0; c < 3; ++c) {
            sink[c] += ra.sep[c];
            sink[3 + c] += ra.ali[c];
            sink[6 + c] += ra.coh[c];
            sink[9 + c] += rb.sep[c];
            sink[12 + c] += rb.ali[c];
            sink[15 + c] += rb.coh[c];
        }
        sink[18] += ra.n;
        sink[19] += rb.n;
    }
    *seconds = (double)(world_now_ns() - t0) * 1e-9;
    float total = 0.0f;
    for (int k = 0; k < 20; ++k) total += sink[k];
    volatile float keep = total;
    (void)keep;
    mem_free(&alloc, mem, per * 8 * sizeof(float));
    return (iterations + 1) / 2 * 2 * candidates;
}
