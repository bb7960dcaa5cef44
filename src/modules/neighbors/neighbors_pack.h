/* The neighbors pass's packing (neighbors.c): the candidates of a cell's
 * block of cells copied, position and velocity, into a per-worker buffer
 * (a pack) that the pair kernels walk a lane at a time; on direct grids a
 * strip that grows column by column along a row of cells, so each cell is
 * copied 3 (2D) or 9 (3D) times per step. Static inline: the agent pass
 * inlines them into each of its variants. Included by neighbors.c only. */
#ifndef SHOAL_SYSTEMS_NEIGHBORS_PACK_H
#define SHOAL_SYSTEMS_NEIGHBORS_PACK_H

#include <string.h>

#include "simd/lanes.h"
#include "modules/grid/grid.h"

#define MAX_BLOCK 27 /* cells in a block around a cell */

typedef struct nb_scratch {
    float* cx;
    float* cy;
    float* cz; /* packed candidate positions */
    float* cvx;
    float* cvy;
    float* cvz;   /* and velocities */
    float* d2;    /* capped path: distances */
    int32_t* idx; /* capped path: pack indices */
} nb_scratch_t;


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

/* The cells of the block around cell `c` (in range on a torus), each
 * once, in the order their agents go into a pack, each with the shift to
 * apply to its positions (nonzero only across a torus edge when
 * packs_shifted()); returns how many, and in *own the index of c. The
 * order is one of cell offsets alone, never of buckets: z, then y, then x
 * (x fastest), or, where packs carry torus images, the strips' order (x,
 * then z, then y: see nb_strip), so that a torus gives the same packs
 * whether its cells are indexed directly or hashed (a sparse torus with
 * few agents). Only a torus under 3 cells wide has a cell twice around
 * another. */
static int block_cells(const grid_t* g, const int32_t c[3], int32_t (*cells)[3], float (*shift)[3], int* own)
{
    int count = 0;
    const int three = g->dims == 3;
    const int shifted = packs_shifted(g);
    const int distinct = !g->wrap || shifted;
    *own = 0;
    for (int u = 0; u < (three ? 27 : 9); ++u) {
        int32_t d[3];
        if (shifted) {
            const int rows = three ? 9 : 3, r = u % rows;
            d[0] = u / rows - 1;
            d[1] = r % 3 - 1;
            d[2] = three ? r / 3 - 1 : 0;
        } else {
            d[0] = u % 3 - 1;
            d[1] = u / 3 % 3 - 1;
            d[2] = three ? u / 9 - 1 : 0;
        }
        int32_t i[3] = {c[0] + d[0], c[1] + d[1], c[2] + d[2]};
        float sh[3] = {0.0f, 0.0f, 0.0f};
        if (g->wrap) { /* c is in range, so one correction wraps */
            for (int k = 0; k < 2 + three; ++k) {
                if (i[k] < 0) {
                    i[k] += g->n[k];
                    sh[k] = -g->extent[k];
                } else if (i[k] >= g->n[k]) {
                    i[k] -= g->n[k];
                    sh[k] = g->extent[k];
                }
            }
        }
        int seen = -1;
        if (!distinct)
            for (int k = 0; k < count && seen < 0; ++k)
                if (cells[k][0] == i[0] && cells[k][1] == i[1] && cells[k][2] == i[2]) seen = k;
        if (seen < 0) {
            memcpy(cells[count], i, sizeof i);
            for (int k = 0; k < 3; ++k) shift[count][k] = shifted ? sh[k] : 0.0f;
            seen = count++;
        }
        if (d[0] == 0 && d[1] == 0 && d[2] == 0) *own = seen;
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
static inline int32_t pack_run(const grid_t* g, nb_scratch_t* s, int32_t m, int32_t lo, int32_t hi,
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
static inline void pack_finish(nb_scratch_t* s, int32_t m, int three)
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

/* Pack the agents of `cells` (block_cells) into s, each cell's run
 * (grid_cell_run) in turn, runs that follow each other in the sorted
 * arrays with one shift copied as one range; returns the count and sets
 * *self_base to where cell `own` starts in the pack. */
static int32_t pack_block(const grid_t* g, const int32_t (*cells)[3], const float (*shift)[3], int count,
                          int own, nb_scratch_t* s, int32_t* self_base)
{
    int32_t m = 0, lo = 0, hi = 0;
    const float* at = NULL; /* the shift of [lo, hi) */
    const int three = g->dims == 3;
    for (int i = 0; i < count; ++i) {
        int32_t a, b;
        grid_cell_run(g, cells[i][0], cells[i][1], cells[i][2], &a, &b);
        if (a == b) continue;
        if (!(hi > lo && a == hi && shift[i][0] == at[0] && shift[i][1] == at[1] && shift[i][2] == at[2])) {
            if (hi > lo) m = pack_run(g, s, m, lo, hi, at, three);
            lo = a;
            at = shift[i];
        }
        if (i == own) *self_base = m + (a - lo);
        hi = b;
    }
    if (hi > lo) m = pack_run(g, s, m, lo, hi, at, three);
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
    int32_t y, z;     /* row of cells (y = INT32_MIN: none) */
    int32_t next;     /* column the next append adds */
    int32_t len;      /* candidates in the strip */
    int32_t room;     /* start over when len passes this */
    int32_t start[4]; /* start of column c at [c & 3] (the last 4 columns) */
    int32_t own[4];   /* where the column's middle cell starts */
    int shifted;      /* some row of the column lies across a torus edge */
    int32_t rows[9];  /* bucket of each row's cell at x = 0, in (z, y) order */
    float shy[9], shz[9];
} nb_strip_t;

/* Whether cells can go through strips: a direct grid at least 3 cells
 * wide on every axis, so a block's 9 (27) cells are distinct and packs
 * carry torus images. */
static inline int strips_ok(const grid_t* g) { return g->direct && packs_shifted(g); }

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
static void strip_row(const grid_t* g, nb_strip_t* st, const int32_t c[3], int32_t x)
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
static inline __attribute__((always_inline)) void strip_column(const grid_t* g, nb_scratch_t* restrict s,
                                                               nb_strip_t* st, int32_t x, const int three,
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
static inline __attribute__((always_inline)) int32_t strip_block(const grid_t* g, nb_scratch_t* s,
                                                                 nb_strip_t* st, const int32_t c[3],
                                                                 int32_t* base, int32_t* self_base,
                                                                 const int three)
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

#endif /* SHOAL_SYSTEMS_NEIGHBORS_PACK_H */
