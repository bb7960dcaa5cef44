/* The walls module: the world's walls (shoal/crowd.h, walls.h), their
 * public API, their grid, their part of the state hash and their snapshot
 * section WALL (format version 3).
 *
 * Decisions:
 * - Walls are kept as their points (a closed wall's last segment joins its
 *   last point to its first); segments and the grid are derived, rebuilt
 *   before the first step after a change (the reserve_step hook, so that
 *   running out of memory fails the step before anything moved), and never
 *   saved.
 * - The grid's cell is the mean segment length but at most 2 m (about a
 *   pedestrian's query), at least 1/1024 of the walls' extent and 1 mm,
 *   so a wall of many short segments gets small cells and long walls
 *   cells of a query's size; at most 1024 cells a side.
 *   A segment is listed in the cells it passes through (not every cell of
 *   its box: a diagonal wall across the grid would be a million entries),
 *   counted in 64 bits; past WALL_GRID_ENTRIES_MAX entries the cells grow
 *   until the walls fit.
 * - A query returns every segment within reach, each once (a bit a segment
 *   a worker marks those met), however many: a fixed cap dropped the
 *   segment being crossed among many short ones.
 * - Ids are slots with a generation (below, "ids"): a removed wall's slot
 *   and points are reclaimed, and its id is refused from then on. */
#include <math.h>
#include <string.h>

#include "modules/agent.h"
#include "modules/walls/walls.h"

#define WALL_GRID_MAX 1024
/* Queries reach time_horizon_walls * max_speed + radius: a few meters for
 * pedestrians. Cells no larger than this keep a query to a few cells and
 * the segments near it, however long the segments are. */
#define WALL_CELL_MAX 2.0

_Static_assert(WALL_GRID_ENTRIES_MAX >= SHOAL_MAX_WALL_SEGMENTS,
               "the grid holds every segment once at least");

static int walls_init(world_t* w)
{
    wall_set_t* ws = (wall_set_t*)mem_calloc(&w->alloc, sizeof *ws);
    w->module_data[MOD_WALLS] = ws;
    if (ws) ws->serial = 1; /* a mark taken before any add sees none */
    return ws != NULL;
}

static void free_derived(world_t* w, wall_set_t* ws)
{
    mem_free(&w->alloc, ws->seg, (size_t)ws->seg_capacity * sizeof *ws->seg);
    mem_free(&w->alloc, ws->cell_start, (size_t)ws->cell_start_capacity * sizeof *ws->cell_start);
    mem_free(&w->alloc, ws->cell_items, (size_t)ws->cell_items_capacity * sizeof *ws->cell_items);
    mem_free(&w->alloc, ws->seen, (size_t)ws->seen_workers * (size_t)ws->seen_words * sizeof *ws->seen);
    ws->seen = NULL;
    ws->seen_words = ws->seen_workers = 0;
    ws->seg = NULL;
    ws->cell_start = ws->cell_items = NULL;
    ws->seg_capacity = 0;
    ws->cell_start_capacity = ws->cell_items_capacity = 0;
    ws->seg_count = 0;
    ws->built_valid = 0;
}

static void walls_release(world_t* w)
{
    wall_set_t* ws = walls_of(w);
    if (!ws) return;
    free_derived(w, ws);
    mem_free(&w->alloc, ws->walls, (size_t)ws->wall_capacity * sizeof *ws->walls);
    int32_t words = (ws->wall_capacity + 63) / 64;
    mem_free(&w->alloc, ws->free_bits, (size_t)words * sizeof *ws->free_bits);
    mem_free(&w->alloc, ws->free_sum, (size_t)((words + 63) / 64) * sizeof *ws->free_sum);
    mem_free(&w->alloc, ws->points, (size_t)ws->point_capacity * sizeof *ws->points);
    mem_free(&w->alloc, ws, sizeof *ws);
    w->module_data[MOD_WALLS] = NULL;
}

static int32_t wall_segments(const int32_t wall[WALL_FIELDS])
{
    return wall[WF_COUNT] == 0 ? 0 : wall[WF_CLOSED] ? wall[WF_COUNT] : wall[WF_COUNT] - 1;
}

/* Segment k of a wall. */
static void wall_segment(const wall_set_t* ws, const int32_t wall[WALL_FIELDS], int32_t k, float out[4])
{
    const float* a = ws->points[wall[WF_FIRST] + k];
    const float* b = ws->points[wall[WF_FIRST] + (k + 1 == wall[WF_COUNT] ? 0 : k + 1)];
    out[0] = a[0];
    out[1] = a[1];
    out[2] = b[0];
    out[3] = b[1];
}

static inline int32_t cell_of(const wall_set_t* ws, float v, int axis)
{
    float c = floorf((v - ws->origin[axis]) * ws->inv_cell);
    int32_t n = axis == 0 ? ws->nx : ws->ny;
    if (!(c >= 0.0f)) return 0;
    if (c >= (float)(n - 1)) return n - 1;
    return (int32_t)c;
}

/* The cells of row cy that segment g passes through (rows ya..yb are the
 * segment's): its part within the row's band of y, padded by a thousandth
 * of a cell and a few float steps of the coordinates, so that every point
 * of the segment that cell_of puts in row cy lies in [*xa, *xb]. Listing
 * a segment in the cells it crosses, not every cell of its box, keeps the
 * grid to about (|dx| + |dy|) / cell entries a segment: a diagonal wall
 * across the grid is a few thousand, not the grid's million. */
static void seg_row_span(const wall_set_t* ws, const float g[4], int32_t cy, int32_t ya, int32_t yb,
                         double cell, int32_t* xa, int32_t* xb)
{
    double lo = fmin(g[0], g[2]), hi = fmax(g[0], g[2]);
    double padx = 1e-3 * cell + 1e-6 * (fmax(fabs(lo), fabs(hi)) + fabs(ws->origin[0]));
    if (ya != yb && g[1] != g[3]) {
        double pady = 1e-3 * cell + 1e-6 * (fmax(fabs(g[1]), fabs(g[3])) + fabs(ws->origin[1]));
        double blo = cy == ya ? -INFINITY : ws->origin[1] + cy * cell - pady;
        double bhi = cy == yb ? INFINITY : ws->origin[1] + (cy + 1) * cell + pady;
        double dy = (double)g[3] - g[1], dx = (double)g[2] - g[0];
        double t0 = (blo - g[1]) / dy, t1 = (bhi - g[1]) / dy;
        if (t0 > t1) {
            double t = t0;
            t0 = t1;
            t1 = t;
        }
        t0 = t0 < 0.0 ? 0.0 : t0;
        t1 = t1 > 1.0 ? 1.0 : t1;
        double u0 = g[0] + t0 * dx, u1 = g[0] + t1 * dx;
        lo = fmin(u0, u1);
        hi = fmax(u0, u1);
    }
    *xa = cell_of(ws, (float)(lo - padx), 0);
    *xb = cell_of(ws, (float)(hi + padx), 0);
}

/* The grid's entries with cells of `cell`, counted into cell_start[c + 1]
 * when counting (fill 0), else listed; counting stops past `limit` and
 * returns what it reached. */
static int64_t grid_pass(wall_set_t* ws, double cell, int fill, int64_t limit)
{
    int64_t items = 0;
    for (int32_t s = 0; s < ws->seg_count; ++s) {
        const float* g = ws->seg[s];
        int32_t ya = cell_of(ws, fminf(g[1], g[3]), 1), yb = cell_of(ws, fmaxf(g[1], g[3]), 1);
        for (int32_t y = ya; y <= yb; ++y) {
            int32_t xa, xb;
            seg_row_span(ws, g, y, ya, yb, cell, &xa, &xb);
            items += xb - xa + 1;
            if (!fill && items > limit) return items;
            for (int32_t x = xa; x <= xb; ++x) {
                int64_t c = (int64_t)y * ws->nx + x;
                if (fill)
                    ws->cell_items[ws->cell_start[c]++] = s;
                else
                    ws->cell_start[c + 1]++;
            }
        }
    }
    return items;
}

/* Segments and grid from the walls; 0 when out of memory (nothing lost:
 * the walls themselves are untouched, the next step tries again). */
static int walls_build(world_t* w, wall_set_t* ws)
{
    int32_t segs = 0;
    for (int32_t i = 0; i < ws->wall_high; ++i) segs += wall_segments(ws->walls[i]);
    free_derived(w, ws);
    if (segs == 0) {
        ws->built = ws->version;
        ws->built_valid = 1;
        return 1;
    }
    ws->seg = mem_alloc(&w->alloc, (size_t)segs * sizeof *ws->seg);
    if (!ws->seg) return 0;
    ws->seg_capacity = segs;
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    ws->seen_words = (segs + 63) / 64;
    ws->seen = mem_calloc(&w->alloc, (size_t)workers * (size_t)ws->seen_words * sizeof *ws->seen);
    if (!ws->seen) return 0;
    ws->seen_workers = workers;
    float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    double length = 0.0;
    for (int32_t i = 0; i < ws->wall_high; ++i)
        for (int32_t k = 0; k < wall_segments(ws->walls[i]); ++k) {
            float* s = ws->seg[ws->seg_count++];
            wall_segment(ws, ws->walls[i], k, s);
            for (int a = 0; a < 2; ++a) {
                lo[a] = fminf(lo[a], fminf(s[a], s[a + 2]));
                hi[a] = fmaxf(hi[a], fmaxf(s[a], s[a + 2]));
            }
            length += hypot((double)s[2] - s[0], (double)s[3] - s[1]);
        }
    double extent = fmax((double)hi[0] - lo[0], (double)hi[1] - lo[1]);
    double cell = fmax(fmin(length / segs, WALL_CELL_MAX), fmax(extent / WALL_GRID_MAX, 1e-3));
    ws->origin[0] = lo[0];
    ws->origin[1] = lo[1];
    /* Count in 64 bits; past WALL_GRID_ENTRIES_MAX, cells twice as wide
     * (a segment is one entry at least, and there are at most
     * SHOAL_MAX_WALL_SEGMENTS, so this ends). */
    int64_t cells = 0;
    for (;;) {
        ws->inv_cell = (float)(1.0 / cell);
        cell = 1.0 / (double)ws->inv_cell; /* the cell cell_of uses */
        ws->nx = (int32_t)fmin(WALL_GRID_MAX, floor(((double)hi[0] - lo[0]) / cell) + 1);
        ws->ny = (int32_t)fmin(WALL_GRID_MAX, floor(((double)hi[1] - lo[1]) / cell) + 1);
        cells = (int64_t)ws->nx * ws->ny;
        if (!ws->cell_start) {
            ws->cell_start = mem_calloc(&w->alloc, (size_t)(cells + 1) * sizeof *ws->cell_start);
            if (!ws->cell_start) return 0;
            ws->cell_start_capacity = cells + 1;
        } else {
            memset(ws->cell_start, 0, (size_t)(cells + 1) * sizeof *ws->cell_start);
        }
        if (grid_pass(ws, cell, 0, WALL_GRID_ENTRIES_MAX) <= WALL_GRID_ENTRIES_MAX) break;
        cell *= 2.0;
    }
    for (int64_t c = 0; c < cells; ++c) ws->cell_start[c + 1] += ws->cell_start[c];
    int64_t items = ws->cell_start[cells];
    ws->cell_items = mem_alloc(&w->alloc, (size_t)(items ? items : 1) * sizeof *ws->cell_items);
    if (!ws->cell_items) return 0;
    ws->cell_items_capacity = items ? items : 1;
    grid_pass(ws, cell, 1, 0);
    /* The fill advanced each start to the next cell's: shift back. */
    for (int64_t c = cells; c > 0; --c) ws->cell_start[c] = ws->cell_start[c - 1];
    ws->cell_start[0] = 0;
    ws->built = ws->version;
    ws->built_valid = 1;
    return 1;
}

void walls_query_begin(wall_query_t* q, const wall_set_t* ws, int32_t worker, float x, float y, float reach)
{
    q->ws = ws;
    q->x = x;
    q->y = y;
    q->r2 = reach * reach;
    q->k = q->kend = q->marked = q->linear = 0;
    if (!ws->built_valid || ws->seg_count == 0 || !(reach > 0.0f)) {
        q->seen = NULL;
        q->y0 = q->cy = 1;
        q->y1 = 0;
        return;
    }
    q->seen = ws->seen + (size_t)worker * (size_t)ws->seen_words;
    q->x0 = cell_of(ws, x - reach, 0);
    q->x1 = cell_of(ws, x + reach, 0);
    q->y0 = cell_of(ws, y - reach, 1);
    q->y1 = cell_of(ws, y + reach, 1);
    q->cy = q->y0 - 1;
    q->linear = 0;
    /* a window past 8 x 8 cells: its entries (a row's are one run) against
     * the segments */
    if ((int64_t)(q->x1 - q->x0 + 1) * (q->y1 - q->y0 + 1) > 64) {
        int64_t entries = 0;
        for (int32_t cy = q->y0; cy <= q->y1 && entries <= ws->seg_count; ++cy) {
            int64_t row = (int64_t)cy * ws->nx;
            entries += ws->cell_start[row + q->x1 + 1] - ws->cell_start[row + q->x0];
        }
        if (entries > ws->seg_count) {
            q->linear = 1;
            q->k = 0;
            q->kend = ws->seg_count;
            q->cy = q->y1; /* no rows to walk */
        }
    }
}

int32_t walls_query_next(wall_query_t* q)
{
    const wall_set_t* ws = q->ws;
    if (q->linear) {
        while (q->k < q->kend) {
            int32_t s = q->k++;
            float qx, qy;
            walls_nearest(ws->seg[s], q->x, q->y, &qx, &qy);
            if ((qx - q->x) * (qx - q->x) + (qy - q->y) * (qy - q->y) < q->r2) return s;
        }
        return -1;
    }
    for (;;) {
        /* Cells are stored row by row, so a row's cells x0..x1 are one run
         * of items: most rows near an agent hold none, and cost two reads. */
        while (q->k < q->kend) {
            int32_t s = ws->cell_items[q->k++];
            uint64_t bit = 1ull << (s & 63);
            if (q->seen[s >> 6] & bit) continue;
            q->seen[s >> 6] |= bit;
            q->marked++;
            float qx, qy;
            walls_nearest(ws->seg[s], q->x, q->y, &qx, &qy);
            if ((qx - q->x) * (qx - q->x) + (qy - q->y) * (qy - q->y) < q->r2) return s;
        }
        if (q->cy >= q->y1) return -1;
        q->cy++;
        int64_t row = (int64_t)q->cy * ws->nx;
        q->k = ws->cell_start[row + q->x0];
        q->kend = ws->cell_start[row + q->x1 + 1];
    }
}

void walls_query_end(wall_query_t* q)
{
    const wall_set_t* ws = q->ws;
    if (q->marked == 0 || q->linear) return;
    /* the rows met so far: their entries' bits, set or not, go */
    int32_t last = q->cy < q->y1 ? q->cy : q->y1;
    for (int32_t cy = q->y0; cy <= last; ++cy) {
        int64_t row = (int64_t)cy * ws->nx;
        for (int32_t k = ws->cell_start[row + q->x0]; k < ws->cell_start[row + q->x1 + 1]; ++k) {
            int32_t s = ws->cell_items[k];
            q->seen[s >> 6] &= ~(1ull << (s & 63));
        }
    }
}

static int walls_reserve_step(world_t* w)
{
    wall_set_t* ws = walls_of(w);
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    if (ws->built_valid && ws->built == ws->version && (ws->seg_count == 0 || ws->seen_workers == workers))
        return 1;
    if (walls_build(w, ws)) return 1;
    free_derived(w, ws);
    world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "step: out of memory for the grid of %d walls",
               (int)ws->wall_count);
    return 0;
}

/* ---- ids ------------------------------------------------------------------
 *
 * A wall's id is its slot and the slot's generation (the bits above
 * WALL_INDEX_BITS); a removed wall's slot is free, its generation one
 * more, and the next add takes the lowest free slot (a two-level bitmap:
 * a bit a slot, a bit a word of those). A world that never removed a wall
 * numbers its walls 0, 1, 2, ... as before. Points of removed walls are
 * reclaimed once they outnumber the live ones: the live walls' points are
 * copied, in slot order, into an array of their own. */

#define WALL_INDEX_BITS 20
#define WALL_GENERATIONS (1 << (31 - WALL_INDEX_BITS)) /* ids stay >= 0 */
_Static_assert(SHOAL_MAX_WALLS == 1 << WALL_INDEX_BITS, "a wall's slot fits its id's index bits");

static int32_t wall_id(const int32_t wall[WALL_FIELDS], int32_t slot)
{
    return slot | (wall[WF_GENERATION] << WALL_INDEX_BITS);
}

static void free_set(wall_set_t* ws, int32_t slot, int on)
{
    uint64_t bit = 1ull << (slot & 63);
    int32_t word = slot >> 6;
    if (on)
        ws->free_bits[word] |= bit;
    else
        ws->free_bits[word] &= ~bit;
    uint64_t sbit = 1ull << (word & 63);
    if (ws->free_bits[word])
        ws->free_sum[word >> 6] |= sbit;
    else
        ws->free_sum[word >> 6] &= ~sbit;
}

/* The lowest free slot below wall_high, or -1. */
static int32_t free_lowest(const wall_set_t* ws)
{
    int32_t words = (ws->wall_high + 63) / 64, sums = (words + 63) / 64;
    for (int32_t k = 0; k < sums; ++k) {
        if (!ws->free_sum[k]) continue;
        int32_t word = k * 64 + __builtin_ctzll(ws->free_sum[k]);
        return word * 64 + __builtin_ctzll(ws->free_bits[word]);
    }
    return -1;
}

static int grow(world_t* w, void** p, int32_t* cap, int32_t need, size_t elem)
{
    if (need <= *cap) return 1;
    int32_t fresh = *cap < 8 ? 8 : *cap;
    while (fresh < need) fresh = fresh > INT32_MAX / 2 ? need : fresh * 2;
    void* q = mem_alloc(&w->alloc, (size_t)fresh * elem);
    if (!q) return 0;
    if (*p) memcpy(q, *p, (size_t)*cap * elem);
    mem_free(&w->alloc, *p, (size_t)*cap * elem);
    *p = q;
    *cap = fresh;
    return 1;
}

/* Room for `slots` slots and their free bits (zeroed past the old ones). */
static int grow_slots(world_t* w, wall_set_t* ws, int32_t slots)
{
    int32_t cap = ws->wall_capacity;
    if (slots <= cap) return 1;
    int32_t fresh = cap < 8 ? 8 : cap;
    while (fresh < slots) fresh = fresh > SHOAL_MAX_WALLS / 2 ? SHOAL_MAX_WALLS : fresh * 2;
    int32_t old_words = (cap + 63) / 64, words = (fresh + 63) / 64;
    int32_t old_sums = (old_words + 63) / 64, sums = (words + 63) / 64;
    int32_t(*walls)[WALL_FIELDS] = mem_alloc(&w->alloc, (size_t)fresh * sizeof *walls);
    uint64_t* bits = mem_calloc(&w->alloc, (size_t)words * sizeof *bits);
    uint64_t* sum = mem_calloc(&w->alloc, (size_t)sums * sizeof *sum);
    if (!walls || !bits || !sum) {
        mem_free(&w->alloc, walls, (size_t)fresh * sizeof *walls);
        mem_free(&w->alloc, bits, (size_t)words * sizeof *bits);
        mem_free(&w->alloc, sum, (size_t)sums * sizeof *sum);
        return 0;
    }
    if (cap > 0) {
        memcpy(walls, ws->walls, (size_t)cap * sizeof *walls);
        memcpy(bits, ws->free_bits, (size_t)old_words * sizeof *bits);
        memcpy(sum, ws->free_sum, (size_t)old_sums * sizeof *sum);
    }
    mem_free(&w->alloc, ws->walls, (size_t)cap * sizeof *ws->walls);
    mem_free(&w->alloc, ws->free_bits, (size_t)old_words * sizeof *ws->free_bits);
    mem_free(&w->alloc, ws->free_sum, (size_t)old_sums * sizeof *ws->free_sum);
    ws->walls = walls;
    ws->free_bits = bits;
    ws->free_sum = sum;
    ws->wall_capacity = fresh;
    return 1;
}

/* The live walls' points, in slot order, in an array of their own; nothing
 * changes when out of memory (the garbage stays until the next remove). */
static void compact_points(world_t* w, wall_set_t* ws)
{
    int32_t live = 0;
    for (int32_t i = 0; i < ws->wall_high; ++i) live += ws->walls[i][WF_COUNT];
    int32_t cap = live > 8 ? live : 8;
    float(*points)[2] = mem_alloc(&w->alloc, (size_t)cap * sizeof *points);
    if (!points) return;
    int32_t n = 0;
    for (int32_t i = 0; i < ws->wall_high; ++i) {
        int32_t* wl = ws->walls[i];
        if (wl[WF_COUNT] > 0)
            memcpy(points[n], ws->points[wl[WF_FIRST]], (size_t)wl[WF_COUNT] * sizeof *points);
        wl[WF_FIRST] = n;
        n += wl[WF_COUNT];
    }
    mem_free(&w->alloc, ws->points, (size_t)ws->point_capacity * sizeof *ws->points);
    ws->points = points;
    ws->point_capacity = cap;
    ws->point_count = n;
}

/* ---- the public API --------------------------------------------------------- */

shoal_status_t shoal_world_add_wall(shoal_world_t* w, const float* points, int32_t count, int32_t closed,
                                    int32_t* out_id)
{
    static const char* where = "add_wall";
    if (out_id) *out_id = -1;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (w->dims != 2)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: walls are line segments of a 2D world; a 3D world uses obstacles (spheres)",
                          where);
    if (!points) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: points is NULL", where);
    if (closed != 0 && closed != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: closed must be 0 or 1, got %d", where,
                          (int)closed);
    int32_t least = closed ? 3 : 2;
    if (count < least || count > SHOAL_MAX_WALL_POINTS)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: count must be %d to %d for %s wall, got %d",
                          where, (int)least, SHOAL_MAX_WALL_POINTS, closed ? "a closed" : "an open",
                          (int)count);
    for (int32_t i = 0; i < count; ++i) {
        char field[48];
        snprintf(field, sizeof field, "points[%d]", (int)i);
        float p3[3] = {points[2 * i], points[2 * i + 1], 0.0f};
        if (!def_check_coordinates(w, where, field, p3, 2)) return SHOAL_ERR_INVALID_ARGUMENT;
        int32_t prev = i > 0 ? i - 1 : closed ? count - 1 : -1;
        if (prev >= 0 && points[2 * prev] == points[2 * i] && points[2 * prev + 1] == points[2 * i + 1])
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: points[%d] equals points[%d]: a zero-length segment", where, (int)i,
                              (int)prev);
    }
    wall_set_t* ws = walls_of(w);
    int32_t segs = closed ? count : count - 1;
    if (segs > SHOAL_MAX_WALL_SEGMENTS - ws->segments)
        return world_fail(
            w, SHOAL_ERR_CAPACITY,
            "%s: %d more segments would make %lld, past the walls' limit of %d (SHOAL_MAX_WALL_SEGMENTS)",
            where, (int)segs, (long long)ws->segments + segs, SHOAL_MAX_WALL_SEGMENTS);
    int32_t slot = free_lowest(ws);
    if (slot < 0 && ws->wall_high == SHOAL_MAX_WALLS)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: %d walls, the most a world holds (SHOAL_MAX_WALLS)",
                          where, SHOAL_MAX_WALLS);
    if ((slot < 0 && !grow_slots(w, ws, ws->wall_high + 1)) || ws->point_count > INT32_MAX - count ||
        !grow(w, (void**)&ws->points, &ws->point_capacity, ws->point_count + count, sizeof *ws->points))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for %d points", where, (int)count);
    if (slot < 0) {
        slot = ws->wall_high++;
        ws->walls[slot][WF_GENERATION] = 0;
    } else {
        free_set(ws, slot, 0);
    }
    int32_t* wl = ws->walls[slot];
    wl[WF_FIRST] = ws->point_count;
    wl[WF_COUNT] = count;
    wl[WF_CLOSED] = closed;
    wl[WF_SERIAL] = (int32_t)ws->serial++;
    memcpy(ws->points[ws->point_count], points, (size_t)count * 2 * sizeof(float));
    ws->point_count += count;
    ws->segments += segs;
    ws->live_points += count;
    ws->wall_count++;
    ws->version++;
    if (out_id) *out_id = wall_id(wl, slot);
    return SHOAL_OK;
}

/* The slot of a live wall's id, or -1. */
static int32_t wall_slot(const wall_set_t* ws, int32_t id)
{
    if (id < 0) return -1;
    int32_t slot = id & (SHOAL_MAX_WALLS - 1);
    if (slot >= ws->wall_high || ws->walls[slot][WF_COUNT] == 0 || wall_id(ws->walls[slot], slot) != id)
        return -1;
    return slot;
}

/* Slot `slot` free, with generation `generation` (next: the one after the
 * removed wall's; rollback: the one it had before the add). */
static void release_slot(wall_set_t* ws, int32_t slot, int32_t generation)
{
    int32_t* wl = ws->walls[slot];
    ws->segments -= wall_segments(wl);
    ws->live_points -= wl[WF_COUNT];
    wl[WF_COUNT] = 0;
    wl[WF_CLOSED] = 0;
    wl[WF_GENERATION] = generation;
    ws->wall_count--;
    free_set(ws, slot, 1);
    ws->version++;
}

shoal_status_t shoal_world_remove_wall(shoal_world_t* w, int32_t id)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "remove_wall: called from inside a step");
    wall_set_t* ws = walls_of(w);
    int32_t slot = wall_slot(ws, id);
    if (slot < 0) {
        int32_t s = id & (SHOAL_MAX_WALLS - 1);
        int stale = id >= 0 && s < ws->wall_high && ws->walls[s][WF_COUNT] > 0;
        return world_fail(w, SHOAL_ERR_NOT_FOUND, "remove_wall: no wall with id %d%s", (int)id,
                          stale ? " (its slot holds a newer wall: the id is stale)" : "");
    }
    /* the slot keeps its next generation, the last slot too: an id of a
     * removed wall is refused until its slot has gone round
     * WALL_GENERATIONS adds and removes */
    release_slot(ws, slot, (ws->walls[slot][WF_GENERATION] + 1) % WALL_GENERATIONS);
    if (ws->point_count - ws->live_points > ws->live_points && ws->point_count - ws->live_points > 1024)
        compact_points(w, ws);
    return SHOAL_OK;
}

int32_t shoal_world_wall_count(const shoal_world_t* w) { return w ? walls_of(w)->wall_count : 0; }

shoal_status_t shoal_world_wall_segments(const shoal_world_t* w, float* out, int32_t capacity,
                                         int32_t* out_count)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out_count) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "wall_segments: out_count is NULL");
    if (capacity < 0 || (capacity > 0 && !out))
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "wall_segments: capacity %d with %s array",
                           (int)capacity, out ? "an" : "no");
    const wall_set_t* ws = walls_of(w);
    int32_t n = 0;
    for (int32_t i = 0; i < ws->wall_high; ++i)
        for (int32_t k = 0; k < wall_segments(ws->walls[i]); ++k, ++n)
            if (n < capacity) wall_segment(ws, ws->walls[i], k, out + 4 * (size_t)n);
    *out_count = n;
    return SHOAL_OK;
}

/* ---- hash, rollback, snapshot ------------------------------------------------- */

/* Live walls by slot: id, closed, count, points (nothing when there are
 * none, so worlds without walls hash as before walls existed; a world that
 * never removed a wall has ids equal to slots, as before). */
static uint64_t walls_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb)
{
    const wall_set_t* ws = walls_of(w);
    for (int32_t i = 0; i < ws->wall_high; ++i) {
        const int32_t* wl = ws->walls[i];
        if (wl[WF_COUNT] == 0) continue;
        h = absorb(h, 0x3a11000000000000ull | (uint64_t)(uint32_t)wall_id(wl, i));
        h = absorb(h, ((uint64_t)(uint32_t)wl[WF_CLOSED] << 32) | (uint32_t)wl[WF_COUNT]);
        for (int32_t k = 0; k < wl[WF_COUNT]; ++k) {
            uint32_t v[2];
            memcpy(v, ws->points[wl[WF_FIRST] + k], sizeof v);
            h = absorb(h, ((uint64_t)v[0] << 32) | v[1]);
        }
    }
    return h;
}

/* A mark: slots, points and the add counter then. A rollback (a failed
 * scenario populate, which only adds) frees every wall added since, each
 * slot with the generation it had, and forgets the slots and points past
 * the mark's. */
static void walls_mark(const world_t* w, int64_t note[WORLD_MARK_WORDS])
{
    const wall_set_t* ws = walls_of(w);
    note[0] = ws->wall_high;
    note[1] = ws->point_count;
    note[2] = ws->serial;
}

static void walls_rollback(world_t* w, const int64_t note[WORLD_MARK_WORDS])
{
    wall_set_t* ws = walls_of(w);
    uint32_t since = ws->serial - (uint32_t)note[2];
    if (since == 0) return;
    for (int32_t i = 0; i < ws->wall_high; ++i) {
        const int32_t* wl = ws->walls[i];
        if (wl[WF_COUNT] > 0 && ws->serial - (uint32_t)wl[WF_SERIAL] <= since)
            release_slot(ws, i, wl[WF_GENERATION]);
    }
    while (ws->wall_high > (int32_t)note[0]) free_set(ws, --ws->wall_high, 0);
    ws->point_count = (int32_t)note[1];
    ws->serial = (uint32_t)note[2];
}

/* Section WALL: u32 slots, u32 points, then per slot {u32 first point, u32
 * count (0: free), u32 closed, and since version 7 u32 generation}, then
 * the points (f32 x, y). */
static void walls_save(const world_t* w, byte_writer_t* wr)
{
    /* the live walls' points only, in slot order: what removed walls left
     * behind is not saved */
    const wall_set_t* ws = walls_of(w);
    bw_u32(wr, (uint32_t)ws->wall_high);
    bw_u32(wr, (uint32_t)ws->live_points);
    int32_t first = 0;
    for (int32_t i = 0; i < ws->wall_high; ++i) {
        const int32_t* wl = ws->walls[i];
        bw_i32(wr, wl[WF_COUNT] ? first : 0);
        bw_i32(wr, wl[WF_COUNT]);
        bw_i32(wr, wl[WF_CLOSED]);
        bw_i32(wr, wl[WF_GENERATION]);
        first += wl[WF_COUNT];
    }
    for (int32_t i = 0; i < ws->wall_high; ++i) {
        const int32_t* wl = ws->walls[i];
        for (int32_t k = 0; k < wl[WF_COUNT]; ++k) {
            bw_f32(wr, ws->points[wl[WF_FIRST] + k][0]);
            bw_f32(wr, ws->points[wl[WF_FIRST] + k][1]);
        }
    }
}

static int walls_load(world_t* w, byte_reader_t* rd)
{
    wall_set_t* ws = walls_of(w);
    const int fields = rd->version >= 7 ? 4 : 3;
    uint32_t high = br_u32(rd), points = br_u32(rd);
    if (!br_count(rd, high, 4u * (uint32_t)fields, SHOAL_MAX_WALLS, "wall slots")) return 0;
    if (!br_count(rd, points, 8, INT32_MAX / 16, "wall points")) return 0;
    if (high > 0 && w->dims != 2)
        return br_fail(rd, "%u walls in a %dD world: walls are 2D", high, (int)w->dims);
    if (high > 0 && !grow_slots(w, ws, (int32_t)high)) return br_fail(rd, "out of memory for %u walls", high);
    if (points > 0) {
        ws->points = mem_alloc(&w->alloc, (size_t)points * sizeof *ws->points);
        if (!ws->points) return br_fail(rd, "out of memory for %u wall points", points);
        ws->point_capacity = (int32_t)points;
    }
    int32_t live = 0, live_points = 0;
    for (uint32_t i = 0; i < high; ++i) {
        int32_t first = br_i32(rd), count = br_i32(rd), closed = br_i32(rd);
        int32_t generation = fields == 4 ? br_i32(rd) : 0;
        if (rd->failed) return 0;
        if (count == 0 ? closed != 0
                       : (closed != 0 && closed != 1) || count < (closed ? 3 : 2) || first < 0 ||
                             (int64_t)first + count > (int64_t)points)
            return br_fail(rd, "wall %u: points [%d, %d + %d), closed %d are not a wall of the %u points", i,
                           (int)first, (int)first, (int)count, (int)closed, points);
        if (generation < 0 || generation >= WALL_GENERATIONS)
            return br_fail(rd, "wall %u: generation %d is not in [0, %d)", i, (int)generation,
                           WALL_GENERATIONS);
        int32_t* wl = ws->walls[i];
        wl[WF_FIRST] = count ? first : 0;
        wl[WF_COUNT] = count;
        wl[WF_CLOSED] = closed;
        wl[WF_GENERATION] = generation;
        wl[WF_SERIAL] = 0;
        if (count == 0) free_set(ws, (int32_t)i, 1);
        live += count != 0;
        live_points += count;
    }
    for (uint32_t i = 0; i < points; ++i) {
        ws->points[i][0] = br_f32(rd);
        ws->points[i][1] = br_f32(rd);
        if (!br_finite(rd, ws->points[i][0], "x of wall point", (int32_t)i) ||
            !br_finite(rd, ws->points[i][1], "y of wall point", (int32_t)i))
            return 0;
        if (fabsf(ws->points[i][0]) > DEF_MAX_COORDINATE || fabsf(ws->points[i][1]) > DEF_MAX_COORDINATE)
            return br_fail(rd, "wall point %u is beyond %g m", i, (double)DEF_MAX_COORDINATE);
    }
    /* No zero-length segment, as add_wall checks; no more segments than it
     * allows. */
    int64_t segments = 0;
    for (uint32_t i = 0; i < high; ++i) {
        const int32_t* wl = ws->walls[i];
        segments += wall_segments(wl);
        if (segments > SHOAL_MAX_WALL_SEGMENTS)
            return br_fail(rd, "walls: more than %d segments (SHOAL_MAX_WALL_SEGMENTS)",
                           SHOAL_MAX_WALL_SEGMENTS);
        for (int32_t k = 0; k < wall_segments(wl); ++k) {
            float s[4];
            wall_segment(ws, wl, k, s);
            if (s[0] == s[2] && s[1] == s[3])
                return br_fail(rd, "wall %u: segment %d has zero length", i, (int)k);
        }
    }
    ws->wall_high = (int32_t)high;
    ws->point_count = (int32_t)points;
    ws->wall_count = live;
    ws->live_points = live_points;
    ws->segments = (int32_t)segments;
    ws->serial = 1; /* past the loaded walls' 0 */
    ws->version = 1;
    /* a version-6 file's removed walls become free slots, taken by the
     * next adds lowest first; their points are reclaimed at the next
     * remove */
    return 1;
}

const module_t walls_module = {
    .name = "walls",
    .init = walls_init,
    .release = walls_release,
    .reserve_step = walls_reserve_step,
    .hash = walls_hash,
    .mark = walls_mark,
    .rollback = walls_rollback,
    .snapshot_tag = BYTE_TAG('W', 'A', 'L', 'L'),
    .snapshot_since = 3,
    .save = walls_save,
    .load = walls_load,
};
