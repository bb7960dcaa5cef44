/* The world's walls (walls.c): line segments in 2D, module-wide data of
 * the walls module, in a static grid of their own for the crowd's queries
 * (orca and contacts). */
#ifndef SHOAL_SYSTEMS_WALLS_H
#define SHOAL_SYSTEMS_WALLS_H

#include "modules/registry.h"

/* The most entries (a segment listed in a cell) the grid may hold: the
 * cell grows until the walls fit (walls_build). */
#define WALL_GRID_ENTRIES_MAX (1 << 26)

/* A wall slot's fields. */
enum { WF_FIRST, WF_COUNT, WF_CLOSED, WF_GENERATION, WF_SERIAL, WALL_FIELDS };

typedef struct wall_set_t {
    /* Walls by slot: first point in `points`, point count (0: free),
     * closed flag, generation (of the id), serial (the add's number, for
     * rollback). */
    int32_t (*walls)[WALL_FIELDS];
    int32_t wall_high, wall_capacity, wall_count;
    uint64_t *free_bits, *free_sum; /* free slots: a bit a slot, a bit a word */
    uint32_t serial;                /* adds so far */
    int32_t segments, live_points;  /* of the live walls */
    float (*points)[2];
    int32_t point_count, point_capacity;
    uint32_t version; /* changes with every add and remove */
    /* Derived, rebuilt before a step when `built` differs from version:
     * every live segment (x0, y0, x1, y1) and a uniform grid over their
     * bounding box, each cell listing the segments whose box overlaps it. */
    uint32_t built;
    int32_t built_valid;
    float (*seg)[4];
    int32_t seg_count, seg_capacity;
    float origin[2], inv_cell;
    int32_t nx, ny;
    int32_t* cell_start; /* nx * ny + 1 */
    int32_t* cell_items;
    int64_t cell_start_capacity, cell_items_capacity;
    /* Per worker, a bit a segment: the segments a query met so far (it
     * clears them at its end); seen_words words a worker. */
    uint64_t* seen;
    int32_t seen_words, seen_workers;
} wall_set_t;

static inline wall_set_t* walls_of(const world_t* w) { return (wall_set_t*)w->module_data[MOD_WALLS]; }

/* A query: every segment whose distance to (x, y) is below `reach`, each
 * once, in the order the grid's cells list them first (rows of cells from
 * the lowest, each row's cells from the left), however many there are:
 *
 *     wall_query_t q;
 *     walls_query_begin(&q, ws, worker, x, y, reach);
 *     for (int32_t s; (s = walls_query_next(&q)) >= 0;) ...
 *     walls_query_end(&q);
 *
 * `worker` is the caller's worker index (parallel.h): concurrent queries
 * need distinct ones. A query may stop early; walls_query_end is still
 * called. A window whose cells list more entries than there are segments
 * (a reach across much of the grid: a huge radius or step) returns them in
 * index order instead, each tested once: the cost is then the segments',
 * not the grid's. */
typedef struct wall_query_t {
    const wall_set_t* ws;
    uint64_t* seen;
    float x, y, r2;
    int32_t x0, x1, y0, y1, cy, k, kend;
    int32_t marked; /* bits set so far: none, nothing to clear */
    int32_t linear; /* every segment once, in index order (a window of more entries than segments) */
} wall_query_t;

void walls_query_begin(wall_query_t* q, const wall_set_t* ws, int32_t worker, float x, float y, float reach);
int32_t walls_query_next(wall_query_t* q);
void walls_query_end(wall_query_t* q);

/* Point of segment s nearest (x, y). */
static inline void walls_nearest(const float s[4], float x, float y, float* qx, float* qy)
{
    float dx = s[2] - s[0], dy = s[3] - s[1];
    float len2 = dx * dx + dy * dy;
    float t = len2 > 0.0f ? ((x - s[0]) * dx + (y - s[1]) * dy) / len2 : 0.0f;
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    *qx = s[0] + t * dx;
    *qy = s[1] + t * dy;
}

extern const module_t walls_module;

#endif /* SHOAL_SYSTEMS_WALLS_H */
