/* The nearest agents around a point, from the spatial hash (crowd.c's orca
 * pass and contacts.c's candidates). Each is one function of the world:
 * ties in distance are broken by sorted position, and every SIMD width
 * computes each lane's distance with the scalar arithmetic. */
#ifndef SHOAL_SYSTEMS_NEAREST_H
#define SHOAL_SYSTEMS_NEAREST_H

#include <math.h>
#include <string.h>

#include "simd/lanes.h"
#include "systems/spatial_hash.h"

/* The most neighbors a list keeps (crowd.max_neighbors is at most this). */
#define NEAREST_MAX 64

/* The nearest neighbors found so far, kept in ascending order of
 * (distance^2, sorted position): while the list is not full, every offer
 * joins it; once full, an offer before its last replaces that one. So the
 * list ends as the cap first by that order whatever order the offers came
 * in. */
typedef struct nearest {
    int32_t count, cap;
    float d2[NEAREST_MAX];
    int32_t k[NEAREST_MAX];
} nearest;

static inline void nearest_offer(nearest* nb, float d2, int32_t k)
{
    int32_t n = nb->count;
    if (n == nb->cap) {
        if (!(d2 < nb->d2[n - 1] || (d2 == nb->d2[n - 1] && k < nb->k[n - 1]))) return;
        n--; /* the last goes */
    }
    int32_t j = n;
    while (j > 0 && (nb->d2[j - 1] > d2 || (nb->d2[j - 1] == d2 && nb->k[j - 1] > k))) {
        nb->d2[j] = nb->d2[j - 1];
        nb->k[j] = nb->k[j - 1];
        j--;
    }
    nb->d2[j] = d2;
    nb->k[j] = k;
    nb->count = n + 1;
}

/* The bound an offer must beat: r2 until full, then the last. */
static inline float nearest_limit(const nearest* nb, float r2)
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

/* Scan the block of cells around p for the nearest neighbors of the agent
 * at sorted position `self` (grid_positions; -1: none to leave out). */
static inline void find_neighbors(const grid_t* g, const float p[3], float range, int32_t self, nearest* nb)
{
    const int three = g->dims == 3;
    const float r2 = range * range;
    const lanef px = lane_set1(p[0]), py = lane_set1(p[1]), pz = lane_set1(p[2]);
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
                /* A lane of candidates at a time (the sorted arrays are
                 * padded, so a lane past the run stays inside them; those
                 * lanes are masked off). Each lane's d^2 is the scalar
                 * arithmetic, so every SIMD width picks the same. */
                for (int32_t k = k0; k < k1; k += SHOAL_LANES) {
                    lanef dx = lane_image(g, lane_sub(lane_loadu(g->sx + k), px), 0);
                    lanef dy = lane_image(g, lane_sub(lane_loadu(g->sy + k), py), 1);
                    lanef d2 = lane_add(lane_mul(dx, dx), lane_mul(dy, dy));
                    if (three) {
                        lanef dz = lane_image(g, lane_sub(lane_loadu(g->sz + k), pz), 2);
                        d2 = lane_add(d2, lane_mul(dz, dz));
                    }
                    /* <=: an offer at the farthest's distance may win on k */
                    float limit = nearest_limit(nb, r2);
                    uint32_t bits = lane_mask_bits(lane_mask_and(lane_cmp_le(d2, lane_set1(limit)),
                                                                 lane_mask_first(k1 - k)));
                    if (!bits) continue;
                    float v[SHOAL_MAX_LANES];
                    lane_storeu(v, d2);
                    while (bits) {
                        int lane = __builtin_ctz(bits);
                        bits &= bits - 1;
                        int32_t kk = k + lane;
                        if (!(v[lane] < r2) || kk == self) continue;
                        if (seen_overflow) {
                            /* past 64 distinct buckets (a block of more than
                             * 64 cells): drop repeats by position instead */
                            int dup = 0;
                            for (int32_t s = 0; s < nb->count && !dup; ++s) dup = nb->k[s] == kk;
                            if (dup) continue;
                        }
                        nearest_offer(nb, v[lane], kk);
                    }
                }
            }
}


#endif /* SHOAL_SYSTEMS_NEAREST_H */
