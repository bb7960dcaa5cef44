/* The nearest agents around a point, from the spatial hash (crowd.c's orca
 * pass and contacts.c's candidates). Each is one function of the world:
 * ties in distance are broken by cell and global id (grid_before), never by
 * bucket, and every SIMD width computes each lane's distance with the
 * scalar arithmetic. */
#ifndef SHOAL_SYSTEMS_NEAREST_H
#define SHOAL_SYSTEMS_NEAREST_H

#include <float.h>
#include <math.h>
#include <string.h>

#include "simd/lanes.h"
#include "modules/grid/grid.h"

/* The most neighbors a list keeps (crowd.max_neighbors is at most this). */
#define NEAREST_MAX 64

/* The nearest neighbors found so far, kept in ascending order of
 * (distance^2, grid_before): while the list is not full, every offer joins
 * it; once full, an offer before its last replaces that one. So the list
 * ends as the cap first by that order whatever order the offers came in. */
typedef struct nearest {
    int32_t count, cap;
    float d2[NEAREST_MAX + 1]; /* + 1: a slot past the cap (nearest_rank) */
    /* + SHOAL_MAX_LANES: the slot past the cap, and room to pad the list
     * to whole lanes for gathers (orca_range) */
    int32_t k[NEAREST_MAX + SHOAL_MAX_LANES];
} nearest_t;

/* Whether candidate (d2a, sorted position a) comes before (d2b, b). */
static inline int nearest_before(const grid_t* g, float d2a, int32_t a, float d2b, int32_t b)
{
    return d2a < d2b || (d2a == d2b && grid_before(g, a, b));
}

static inline void nearest_offer(const grid_t* g, nearest_t* nb, float d2, int32_t k)
{
    int32_t n = nb->count;
    if (n == nb->cap) {
        if (!nearest_before(g, d2, k, nb->d2[n - 1], nb->k[n - 1])) return;
        n--; /* the last goes */
    }
    int32_t j = n;
    while (j > 0 && nearest_before(g, d2, k, nb->d2[j - 1], nb->k[j - 1])) {
        nb->d2[j] = nb->d2[j - 1];
        nb->k[j] = nb->k[j - 1];
        j--;
    }
    nb->d2[j] = d2;
    nb->k[j] = k;
    nb->count = n + 1;
}

/* The bound an offer must beat: r2 until full, then the last. */
static inline float nearest_limit(const nearest_t* nb, float r2)
{
    return nb->count == nb->cap && nb->d2[nb->cap - 1] < r2 ? nb->d2[nb->cap - 1] : r2;
}

/* Lists of k candidates a row (crowd rows, contact rows), `capacity` rows:
 * row r goes and the last row (`last`) moves into it when moved_agent_row
 * >= 0, its list with it; else row r's list is emptied. */
static inline void near_row_removed(int32_t* near, int32_t capacity, int k, int32_t r, int32_t last,
                                    int32_t moved_agent_row)
{
    if (!near || r >= capacity || last >= capacity) return;
    if (moved_agent_row >= 0 && last != r)
        memcpy(near + (size_t)r * (size_t)k, near + (size_t)last * (size_t)k, (size_t)k * sizeof(int32_t));
    else
        for (int m = 0; m < k; ++m) near[(size_t)r * (size_t)k + (size_t)m] = -1;
}

/* Offset from the agent to a sorted candidate, the nearest image on a
 * torus (positions are wrapped into the box, so one correction does). */
static inline float image(const grid_t* g, float d, int axis)
{
    if (!g->wrap) return d;
    float e = g->extent[axis];
    if (d > 0.5f * e) return d - e;
    if (d < -0.5f * e) return d + e;
    return d;
}

/* image() for a lane of offsets. */
static inline lanef lane_image(const grid_t* g, lanef d, int axis)
{
    if (!g->wrap) return d;
    float e = g->extent[axis];
    lanef half = lane_set1(0.5f * e), ext = lane_set1(e);
    d = lane_select(lane_cmp_gt(d, half), lane_sub(d, ext), d);
    return lane_select(lane_cmp_lt(d, lane_neg(half)), lane_add(d, ext), d);
}

/* A lane of sorted candidates' d^2 from (px, py, pz) at sorted position k
 * on, each lane with the scalar arithmetic (so every width picks the
 * same). */
static inline lanef lane_d2_from(const grid_t* g, int32_t k, lanef px, lanef py, lanef pz, int three)
{
    lanef dx = lane_image(g, lane_sub(lane_loadu(g->sx + k), px), 0);
    lanef dy = lane_image(g, lane_sub(lane_loadu(g->sy + k), py), 1);
    lanef d2 = lane_add(lane_mul(dx, dx), lane_mul(dy, dy));
    if (three) {
        lanef dz = lane_image(g, lane_sub(lane_loadu(g->sz + k), pz), 2);
        d2 = lane_add(d2, lane_mul(dz, dz));
    }
    return d2;
}

/* lane_d2_from in a grid without wrap (no images). */
static inline lanef lane_d2_plain(const grid_t* g, int32_t k, lanef px, lanef py, lanef pz, int three)
{
    const lanef dx = lane_sub(lane_loadu(g->sx + k), px), dy = lane_sub(lane_loadu(g->sy + k), py);
    lanef d2 = lane_add(lane_mul(dx, dx), lane_mul(dy, dy));
    if (three) {
        const lanef dz = lane_sub(lane_loadu(g->sz + k), pz);
        d2 = lane_add(d2, lane_mul(dz, dz));
    }
    return d2;
}

/* Offer the sorted candidates [k0, k1) within r2 of (px, py, pz), but
 * `self`, a lane at a time (the sorted arrays are padded, so a lane past
 * the run stays inside them; those lanes are masked off). Each lane's d^2
 * is the scalar arithmetic, so every SIMD width picks the same. `dedup`:
 * drop those already listed (a block past 64 distinct buckets). */
static inline void offer_run(const grid_t* g, int32_t k0, int32_t k1, lanef px, lanef py, lanef pz, int three,
                             float r2, int32_t self, int dedup, nearest_t* nb)
{
    for (int32_t k = k0; k < k1; k += SHOAL_LANES) {
        lanef d2 = lane_d2_from(g, k, px, py, pz, three);
        /* <=: an offer at the farthest's distance may win on k */
        float limit = nearest_limit(nb, r2);
        uint32_t bits =
            lane_mask_bits(lane_mask_and(lane_cmp_le(d2, lane_set1(limit)), lane_mask_first(k1 - k)));
        if (!bits) continue;
        float v[SHOAL_MAX_LANES];
        lane_storeu(v, d2);
        while (bits) {
            int lane = __builtin_ctz(bits);
            bits &= bits - 1;
            int32_t kk = k + lane;
            if (!(v[lane] < r2) || kk == self) continue;
            if (dedup) {
                int dup = 0;
                for (int32_t s = 0; s < nb->count && !dup; ++s) dup = nb->k[s] == kk;
                if (dup) continue;
            }
            nearest_offer(g, nb, v[lane], kk);
        }
    }
}

/* Scan the block of cells around p for the nearest neighbors of the agent
 * at sorted position `self` (grid_positions; -1: none to leave out). */
static inline void find_neighbors(const grid_t* g, const float p[3], float range, int32_t self, nearest_t* nb)
{
    const int three = g->dims == 3;
    const float r2 = range * range;
    const lanef px = lane_set1(p[0]), py = lane_set1(p[1]), pz = lane_set1(p[2]);
    /* A block of more cells than there are agents (a range far past the
     * cell, from a huge speed times dt): every agent once instead, which
     * offers the same candidates (the list does not depend on the order of
     * offers) in time bounded by the agents, not by range^dims. */
    const float cells_a_side = 2.0f * ceilf(range * g->inv_cell[0]) + 1.0f;
    if (!(cells_a_side * cells_a_side * (three ? cells_a_side : 1.0f) <= (float)g->count + 64.0f)) {
        offer_run(g, 0, g->count, px, py, pz, three, r2, self, 0, nb);
        return;
    }
    int32_t reach = (int32_t)ceilf(range * g->inv_cell[0]);
    if (reach < 1) reach = 1;
    int32_t c[3] = {grid_coord(g, p[0], 0), grid_coord(g, p[1], 1), three ? grid_coord(g, p[2], 2) : 0};
    int32_t span[3];
    for (int a = 0; a < 3; ++a) {
        span[a] = a < (three ? 3 : 2) ? reach : 0;
        /* a torus narrower than the block: every cell along the axis once */
        if (g->wrap && a < (three ? 3 : 2) && 2 * span[a] + 1 > g->n[a]) span[a] = -1;
    }
    uint32_t seen[64];
    int32_t seen_count = 0, seen_overflow = 0;
    int32_t lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        if (span[a] < 0) {
            lo[a] = 0;
            hi[a] = g->n[a] - 1;
        } else {
            lo[a] = c[a] - span[a];
            hi[a] = c[a] + span[a];
        }
    }
    /* The agent's own cell first: its nearest are likely there, and the
     * bound an offer must beat shrinks soonest. */
    for (int pass = 0; pass < 2; ++pass)
        for (int32_t z = pass ? lo[2] : c[2]; z <= (pass ? hi[2] : c[2]); ++z)
            for (int32_t y = pass ? lo[1] : c[1]; y <= (pass ? hi[1] : c[1]); ++y)
                for (int32_t x = pass ? lo[0] : c[0]; x <= (pass ? hi[0] : c[0]); ++x) {
                    if (pass && x == c[0] && y == c[1] && z == c[2]) continue;
                    int32_t q[3] = {x, y, z};
                    if (g->wrap)
                        for (int a = 0; a < (three ? 3 : 2); ++a) {
                            if (q[a] < 0) q[a] += g->n[a];
                            if (q[a] >= g->n[a]) q[a] -= g->n[a];
                        }
                    uint32_t b = grid_bucket(g, q[0], q[1], q[2]);
                    if (!g->direct) {
                        /* A bucket two cells of the block share is read once. */
                        int dup = 0;
                        for (int32_t s = 0; s < seen_count && !dup; ++s) dup = seen[s] == b;
                        if (dup) continue;
                        if (seen_count < 64)
                            seen[seen_count++] = b;
                        else
                            seen_overflow = 1;
                    }
                    int32_t k0 = g->cell_start[b], k1 = g->cell_start[b + 1];
                    offer_run(g, k0, k1, px, py, pz, three, r2, self, seen_overflow, nb);
                }
}

/* Lane slots find_nearest can scan (a lane of candidates each). */
#define NEAREST_SCAN 1024

/* The rank of each of the m candidates (sd, sk) in (distance^2,
 * grid_before) order, counted a lane at a time; the first cap go to nb in
 * that order. sd is padded with +inf to a whole lane. Where no two are at
 * one distance (nearly always), a lane of candidates is counted against
 * each candidate at once; else each against a lane of them, ties by
 * grid_before. */
static inline void nearest_rank(const grid_t* g, const float* sd, const int32_t* sk, int32_t m, nearest_t* nb)
{
    const int32_t cap = nb->cap;
    enum { RANK_FAST = 128 };
    if (m <= RANK_FAST) {
        /* each one's count of those strictly nearer, lanes of candidates
         * against one candidate at a time: they are the ranks when no two
         * are at one distance, which their sum tells (the i-th nearest has
         * at most i nearer, i exactly when it is past every one before it:
         * the counts sum to m (m - 1) / 2 when none ties, less when any do) */
        int32_t rank[RANK_FAST + SHOAL_MAX_LANES];
        const lanei zero = lanei_set1(0);
        lanei total = zero;
        /* up to three lanes of candidates at a time, each candidate's
         * broadcast compared with all of them (the loads past m stay in
         * sd's lane of room: a lane more is read only past 2 lanes left) */
        for (int32_t i0 = 0; i0 < m; i0 += 3 * SHOAL_LANES) {
            const int32_t left = m - i0;
            const lanef d0 = lane_loadu(sd + i0);
            lanei c0 = zero, c1 = zero, c2 = zero;
            if (left > 2 * SHOAL_LANES) {
                const lanef d1 = lane_loadu(sd + i0 + SHOAL_LANES),
                            d2 = lane_loadu(sd + i0 + 2 * SHOAL_LANES);
                for (int32_t j = 0; j < m; ++j) {
                    const lanef b = lane_set1(sd[j]);
                    c0 = lanei_count(c0, lane_cmp_lt(b, d0));
                    c1 = lanei_count(c1, lane_cmp_lt(b, d1));
                    c2 = lanei_count(c2, lane_cmp_lt(b, d2));
                }
            } else if (left > SHOAL_LANES) {
                const lanef d1 = lane_loadu(sd + i0 + SHOAL_LANES);
                for (int32_t j = 0; j < m; ++j) {
                    const lanef b = lane_set1(sd[j]);
                    c0 = lanei_count(c0, lane_cmp_lt(b, d0));
                    c1 = lanei_count(c1, lane_cmp_lt(b, d1));
                }
            } else {
                for (int32_t j = 0; j < m; ++j) c0 = lanei_count(c0, lane_cmp_lt(lane_set1(sd[j]), d0));
            }
            lanei_storeu(rank + i0, c0);
            total = lanei_add(total, lanei_select(lane_mask_first(left), c0, zero));
            if (left > SHOAL_LANES) {
                lanei_storeu(rank + i0 + SHOAL_LANES, c1);
                total = lanei_add(total, lanei_select(lane_mask_first(left - SHOAL_LANES), c1, zero));
            }
            if (left > 2 * SHOAL_LANES) {
                lanei_storeu(rank + i0 + 2 * SHOAL_LANES, c2);
                total = lanei_add(total, lanei_select(lane_mask_first(left - 2 * SHOAL_LANES), c2, zero));
            }
        }
        int32_t sums[SHOAL_LANES], sum = 0;
        lanei_storeu(sums, total);
        for (int l = 0; l < SHOAL_LANES; ++l) sum += sums[l];
        const int shared = sum != m * (m - 1) / 2;
        if (!shared) {
            for (int32_t i = 0; i < m; ++i) {
                const int32_t at = rank[i] < cap ? rank[i] : cap; /* past the cap: the spare slot */
                nb->d2[at] = sd[i];
                nb->k[at] = sk[i];
            }
            nb->count = m < cap ? m : cap;
            return;
        }
    }
    for (int32_t i = 0; i < m; ++i) {
        const lanef di = lane_set1(sd[i]);
        int32_t rank = 0, equal = 0;
        for (int32_t j = 0; j < m; j += SHOAL_LANES) {
            lanef dj = lane_loadu(sd + j);
            rank += __builtin_popcount(lane_mask_bits(lane_cmp_lt(dj, di)));
            equal += __builtin_popcount(lane_mask_bits(lane_cmp_eq(dj, di)));
        }
        if (equal > 1) /* ties at this distance: grid_before's first */
            for (int32_t j = 0; j < m; ++j) rank += sd[j] == sd[i] && j != i && grid_before(g, sk[j], sk[i]);
        rank = rank < cap ? rank : cap; /* past the cap: the spare slot, never read */
        nb->d2[rank] = sd[i];
        nb->k[rank] = sk[i];
    }
    nb->count = m < cap ? m : cap;
}

/* The runs of the sorted arrays that the cells lo..hi cover, each bucket
 * once (nearest_block_runs), kept for the next query of the same block:
 * consecutive agents of a cell ask for the same block. One cache serves
 * one build of the grid; count -1: nothing kept yet. */
#define NEAREST_RUNS 64
typedef struct nearest_runs {
    const grid_t* g;
    int32_t lo[3], hi[3];
    int32_t count; /* runs; -1: none kept; -2: the block declines (too many) */
    int32_t k0[NEAREST_RUNS], k1[NEAREST_RUNS];
} nearest_runs_t;

/* A cache for find_nearest: one per block shape it scans. */
typedef struct nearest_cache {
    nearest_runs_t hint, full, list;
} nearest_cache_t;

static inline void nearest_cache_init(nearest_cache_t* c)
{
    c->hint.count = -1;
    c->full.count = -1;
    c->list.count = -1;
}

/* The runs of the sorted arrays (k0, k1) that hold the agents of cells
 * lo..hi, each bucket read once (the order of the runs is the order the
 * candidates are scanned in, which no result depends on: ranks break ties
 * by grid_before). Hashed cells: a bucket two cells of the block share
 * must be read once. Cells of one block of the hash (8 x 8, 4 x 4 x 4)
 * never share one; cells of two blocks can only when the blocks' runs of
 * 64 buckets coincide. When the few blocks around the cells have distinct
 * runs, no bucket needs checking: block by block, the cells of a row that
 * lie in the block are consecutive buckets, so one run, and a run that
 * starts where the last one ended joins it. Otherwise cell by cell in
 * order (z, y, x). Returns how many runs, or -2 past NEAREST_RUNS runs or
 * 64 distinct buckets. */
static inline int32_t nearest_block_runs(const grid_t* g, const int32_t lo[3], const int32_t hi[3],
                                         int32_t* k0s, int32_t* k1s)
{
    const int three = g->dims == 3;
    int dedup = !g->direct;
    if (dedup && !g->wrap && g->bucket_mask >= 63u) {
        const int sh = three ? 2 : 3;
        int32_t blo[3], bhi[3], blocks = 1;
        for (int a = 0; a < 3; ++a) {
            blo[a] = lo[a] >> sh;
            bhi[a] = hi[a] >> sh;
            blocks *= bhi[a] - blo[a] + 1;
        }
        if (blocks <= 8) {
            uint32_t run[8];
            int32_t nr = 0;
            for (int32_t bz = blo[2]; bz <= bhi[2]; ++bz)
                for (int32_t by = blo[1]; by <= bhi[1]; ++by)
                    for (int32_t bx = blo[0]; bx <= bhi[0]; ++bx)
                        run[nr++] = grid_bucket(g, bx * (1 << sh), by * (1 << sh), bz * (1 << sh));
            int same = 0;
            for (int32_t u = 0; u < nr; ++u)
                for (int32_t v = u + 1; v < nr; ++v) same |= run[u] == run[v];
            if (!same) {
                /* block by block (each block's first bucket from above, a
                 * cell's bucket its place after it), each row of the box in
                 * the block one run of consecutive buckets; a run that
                 * starts where the last ended joins it */
                const int32_t bs = 1 << sh, m = bs - 1;
                int32_t n = 0, bi = 0;
                for (int32_t bz = blo[2]; bz <= bhi[2]; ++bz)
                    for (int32_t by = blo[1]; by <= bhi[1]; ++by)
                        for (int32_t bx = blo[0]; bx <= bhi[0]; ++bx, ++bi) {
                            const int32_t x0 = lo[0] > bx * bs ? lo[0] : bx * bs;
                            const int32_t x1 = hi[0] < bx * bs + m ? hi[0] : bx * bs + m;
                            const int32_t y0 = lo[1] > by * bs ? lo[1] : by * bs;
                            const int32_t y1 = hi[1] < by * bs + m ? hi[1] : by * bs + m;
                            const int32_t z0 = three ? (lo[2] > bz * bs ? lo[2] : bz * bs) : 0;
                            const int32_t z1 = three ? (hi[2] < bz * bs + m ? hi[2] : bz * bs + m) : 0;
                            for (int32_t z = z0; z <= z1; ++z)
                                for (int32_t y = y0; y <= y1; ++y) {
                                    const uint32_t b = run[bi] | grid_within(three, x0, y, z);
                                    const int32_t k0 = g->cell_start[b];
                                    const int32_t k1 = g->cell_start[b + (uint32_t)(x1 - x0) + 1u];
                                    if (k1 <= k0) continue; /* empty cells: nothing to scan */
                                    if (n > 0 && k1s[n - 1] == k0) {
                                        k1s[n - 1] = k1;
                                        continue;
                                    }
                                    if (n == NEAREST_RUNS) return -2;
                                    k0s[n] = k0;
                                    k1s[n] = k1;
                                    n++;
                                }
                        }
                return n;
            }
        }
    }
    /* a cell at a time: direct grids, a torus, or blocks that may share
     * buckets (each bucket read once) */
    uint32_t seen[64];
    int32_t seen_count = 0, n = 0;
    for (int32_t z = lo[2]; z <= hi[2]; ++z)
        for (int32_t y = lo[1]; y <= hi[1]; ++y)
            for (int32_t x = lo[0]; x <= hi[0]; ++x) {
                int32_t q[3] = {x, y, z};
                if (g->wrap)
                    for (int a = 0; a < (three ? 3 : 2); ++a) {
                        if (q[a] < 0) q[a] += g->n[a];
                        if (q[a] >= g->n[a]) q[a] -= g->n[a];
                    }
                const uint32_t b = grid_bucket(g, q[0], q[1], q[2]);
                if (dedup) {
                    int dup = 0;
                    for (int32_t s = 0; s < seen_count; ++s) dup |= seen[s] == b;
                    if (dup) continue;
                    if (seen_count == 64) return -2;
                    seen[seen_count++] = b;
                }
                const int32_t k0 = g->cell_start[b], k1 = g->cell_start[b + 1];
                if (k1 <= k0) continue; /* an empty cell: nothing to scan */
                if (n == NEAREST_RUNS) return -2;
                k0s[n] = k0;
                k1s[n] = k1;
                n++;
            }
    return n;
}

/* The runs of cells lo..hi from the cache when it holds that block, else
 * built and kept. Returns the count, or -2 (declined). */
static inline int32_t nearest_runs_of(const grid_t* g, const int32_t lo[3], const int32_t hi[3],
                                      nearest_runs_t* c)
{
    if (c->count != -1 && c->g == g && c->lo[0] == lo[0] && c->lo[1] == lo[1] && c->lo[2] == lo[2] &&
        c->hi[0] == hi[0] && c->hi[1] == hi[1] && c->hi[2] == hi[2])
        return c->count;
    c->g = g;
    for (int a = 0; a < 3; ++a) {
        c->lo[a] = lo[a];
        c->hi[a] = hi[a];
    }
    c->count = nearest_block_runs(g, lo, hi, c->k0, c->k1);
    return c->count;
}

/* nearest_scan for constant dims, wrap and keep (whether every candidate
 * within r2 is kept), so that the lane loop tests none of them. */
static inline __attribute__((always_inline)) int nearest_scan_as(const grid_t* g, const float p[3],
                                                                 const nearest_runs_t* c, float r2,
                                                                 int32_t self, float keep2, float* cd,
                                                                 int32_t* ck, int32_t* kept, const int three,
                                                                 const int wrap, const int keep_all)
{
    const lanef px = lane_set1(p[0]), py = lane_set1(p[1]), pz = lane_set1(p[2]);
    const lanef vr2 = lane_set1(r2), vkeep = lane_set1(keep2);
    int32_t pos = 0, m = *kept;
    for (int32_t run = 0; run < c->count; ++run) {
        const int32_t k0 = c->k0[run], k1 = c->k1[run];
        /* the slots this run scans, checked once (a lane keeps at most a
         * lane: m grows by no more than pos does) */
        const int32_t slots = (k1 - k0 + SHOAL_LANES - 1) / SHOAL_LANES * SHOAL_LANES;
        pos += slots;
        if (pos > NEAREST_SCAN || m + slots > NEAREST_SCAN) return 0;
        for (int32_t k = k0; k < k1; k += SHOAL_LANES) {
            /* as find_neighbors computes it */
            const lanef d2 =
                wrap ? lane_d2_from(g, k, px, py, pz, three) : lane_d2_plain(g, k, px, py, pz, three);
            lanem in = lane_cmp_lt(d2, vr2);
            if (!keep_all) in = lane_mask_and(in, lane_cmp_le(d2, vkeep));
            if (k1 - k < SHOAL_LANES) in = lane_mask_and(in, lane_mask_first(k1 - k)); /* past the run */
            uint32_t bits = lane_mask_bits(in);
            uint32_t own = (uint32_t)(self - k);
            if (own < (uint32_t)SHOAL_LANES) bits &= ~(1u << own);
            if (bits) { /* the kept lanes, in order */
                lanei_compress_store(ck + m, lanei_add(lanei_set1(k), lanei_iota()), bits);
                m += lane_compress_store(cd + m, d2, bits);
            }
        }
    }
    *kept = m;
    return 1;
}

/* The candidates in the runs of c around p (d^2 as find_neighbors computes
 * it; those at or past r2, past the run or the agent itself left out) with
 * d^2 <= keep2 appended to (cd, ck) from *kept on: d^2 and sorted
 * position, in scan order. Returns 0 when the block declines (c->count <
 * 0) or past NEAREST_SCAN slots scanned. */
static inline int nearest_scan(const grid_t* g, const float p[3], const nearest_runs_t* c, float r2,
                               int32_t self, float keep2, float* cd, int32_t* ck, int32_t* kept)
{
    if (c->count < 0) return 0;
    const int keep_all = keep2 >= r2; /* all within r2 kept: one compare a lane */
    if (g->wrap) return nearest_scan_as(g, p, c, r2, self, keep2, cd, ck, kept, g->dims == 3, 1, keep_all);
    if (g->dims == 3)
        return keep_all ? nearest_scan_as(g, p, c, r2, self, keep2, cd, ck, kept, 1, 0, 1)
                        : nearest_scan_as(g, p, c, r2, self, keep2, cd, ck, kept, 1, 0, 0);
    return keep_all ? nearest_scan_as(g, p, c, r2, self, keep2, cd, ck, kept, 0, 0, 1)
                    : nearest_scan_as(g, p, c, r2, self, keep2, cd, ck, kept, 0, 0, 0);
}

/* The cells within `radius` of p (unbounded grids): widened by a
 * thousandth of a cell against rounding at cell edges, and by a few ulps of
 * the coordinate far from the origin. Axes past the grid's are 0..0. */
static inline void nearest_cells_within(const grid_t* g, const float p[3], float radius, int32_t lo[3],
                                        int32_t hi[3])
{
    const int dims = g->dims == 3 ? 3 : 2;
    float reach = radius * 1.0001f + 1e-3f / g->inv_cell[0];
    for (int a = 0; a < 3; ++a) {
        lo[a] = hi[a] = 0;
        if (a >= dims) continue;
        float ra = reach + fabsf(p[a]) * 1e-6f;
        lo[a] = grid_coord(g, p[a] - ra, a);
        hi[a] = grid_coord(g, p[a] + ra, a);
    }
}

/* Of the m candidates (sd, sk; sd 64-byte aligned, both with room for a
 * lane past m), hi_n are at or within d^2 *hi_d (all of them: m). When more than
 * most, a bound that keeps from least to most of them (ties may keep
 * more), found by counting a lane at a time, goes to *hi_d and only those
 * within it stay, in their order. Returns how many stay; sd is padded with
 * +inf to a whole lane past them. */
static inline int32_t nearest_cut(float* sd, int32_t* sk, int32_t m, int32_t least, int32_t most, float* hi_d,
                                  int32_t hi_n)
{
    for (int32_t j = m; j < m + SHOAL_LANES; ++j) sd[j] = INFINITY;
    if (hi_n <= most) return m;
    float lo_d = 0.0f, top = *hi_d;
    int32_t lo_n = 0;
    const int32_t want = (least + most) / 2;
    for (int it = 0; it < 24; ++it) {
        float t = lo_d + (top - lo_d) * ((float)(want - lo_n) / (float)(hi_n - lo_n));
        if (!(t > lo_d && t < top)) t = 0.5f * (lo_d + top);
        if (!(t > lo_d && t < top)) break; /* adjacent floats */
        const lanef vt = lane_set1(t);
        int32_t n = 0;
        for (int32_t i = 0; i < m; i += SHOAL_LANES)
            n += __builtin_popcount(lane_mask_bits(lane_cmp_le(lane_load(sd + i), vt)));
        if (n < least) {
            lo_d = t;
            lo_n = n;
        } else if (n > most) {
            top = t;
            hi_n = n;
        } else {
            top = t;
            hi_n = n;
            break;
        }
    }
    /* compacted in place, a lane at a time: a lane is read before any of
     * it is written, and writes never pass reads */
    int32_t w = 0;
    const lanef vtop = lane_set1(top);
    for (int32_t i = 0; i < m; i += SHOAL_LANES) {
        const lanef d = lane_load(sd + i);
        const uint32_t keep = lane_mask_bits(lane_mask_and(lane_cmp_le(d, vtop), lane_mask_first(m - i)));
        lanei_compress_store(sk + w, lanei_loadu(sk + i), keep);
        w += lane_compress_store(sd + w, d, keep);
    }
    for (int32_t j = w; j < w + SHOAL_LANES; ++j) sd[j] = INFINITY;
    *hi_d = top;
    return w;
}

/* The first nb->cap of the m candidates (sd, sk) in (d^2, grid_before)
 * order into nb. hi_n of them are at or within d^2 hi_d (all of them: m).
 * sd is 64-byte aligned; both have room for a lane past m. */
static inline void nearest_pick(const grid_t* g, float* sd, int32_t* sk, int32_t m, float hi_d, int32_t hi_n,
                                nearest_t* nb)
{
    m = nearest_cut(sd, sk, m, nb->cap, nb->cap + 8, &hi_d, hi_n);
    nearest_rank(g, sd, sk, m, nb);
}

/* find_neighbors' list, the same bit for bit, with few branches that the
 * processor cannot predict: the candidates in range (within the hint,
 * below) go to a buffer as the scan meets them, a distance bound that
 * keeps between cap and cap + 8 of them is found by counting a lane at a
 * time, and only those are ranked. Returns 0, leaving nb alone, when the
 * block around p holds more than NEAREST_SCAN lane slots or more than 64
 * distinct buckets; find_neighbors then does the work.
 *
 * hint (unbounded worlds; 0: none) is a guess of the cap-th nearest's d^2,
 * last step's with room for motion: only the cells within its distance are
 * scanned first, and when they hold cap candidates within it, the list is
 * all there (the cells left out hold nobody that near). Otherwise the
 * whole block is scanned. Either way the list is the same.
 *
 * cache (nearest_cache_init, then any number of queries of one build of
 * the grid) keeps the runs of the last hint block and the last whole block
 * scanned: queries from one cell mostly ask for the same ones. */
static inline int find_nearest(const grid_t* g, const float p[3], float range, int32_t self, float hint,
                               nearest_cache_t* cache, nearest_t* nb)
{
    const int three = g->dims == 3;
    const float r2 = range * range;
    int32_t reach = (int32_t)ceilf(range * g->inv_cell[0]);
    if (reach < 1) reach = 1;
    int32_t c[3] = {grid_coord(g, p[0], 0), grid_coord(g, p[1], 1), three ? grid_coord(g, p[2], 2) : 0};
    int32_t lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        int32_t span = a < (three ? 3 : 2) ? reach : 0;
        if (g->wrap && a < (three ? 3 : 2) && 2 * span + 1 > g->n[a]) {
            lo[a] = 0;
            hi[a] = g->n[a] - 1;
        } else {
            lo[a] = c[a] - span;
            hi[a] = c[a] + span;
        }
    }
    /* the candidates kept by the scan: d^2 (padded to whole lanes) and
     * sorted position */
    _Alignas(64) float sd[NEAREST_SCAN + SHOAL_MAX_LANES];
    int32_t sk[NEAREST_SCAN];
    int32_t m = 0;
    const int32_t cap = nb->cap;
    /* (hi_d, hi_n): a d^2 and how many candidates are at or within it */
    float hi_d = r2 < FLT_MAX ? r2 : FLT_MAX;
    int32_t hi_n = -1;
    if (hint > 0.0f && hint < r2 && !g->wrap && !g->direct) {
        int32_t l2[3], h2[3];
        nearest_cells_within(g, p, sqrtf(hint), l2, h2);
        for (int a = 0; a < (three ? 3 : 2); ++a) {
            l2[a] = l2[a] > lo[a] ? l2[a] : lo[a];
            h2[a] = h2[a] < hi[a] ? h2[a] : hi[a];
        }
        /* those within the hint */
        nearest_runs_of(g, l2, h2, &cache->hint);
        if (!nearest_scan(g, p, &cache->hint, r2, self, hint, sd, sk, &m)) return 0;
        if (m >= cap) {
            hi_d = hint;
            hi_n = m;
        }
    }
    if (hi_n < 0) {
        m = 0; /* every candidate in range */
        nearest_runs_of(g, lo, hi, &cache->full);
        if (!nearest_scan(g, p, &cache->full, r2, self, r2, sd, sk, &m)) return 0;
        hi_n = m;
    }
    nearest_pick(g, sd, sk, m, hi_d, hi_n, nb);
    return 1;
}


#endif /* SHOAL_SYSTEMS_NEAREST_H */
