/* The walkable area of a navigation field (nav_grid.c): a uniform grid of
 * square cells, each walkable or blocked, rasterized from wall segments
 * with a clearance.
 *
 * Why a grid: one travel-time field per goal serves every agent heading to
 * it, read in O(1) per agent (docs/nav.md); a grid is what the
 * eikonal solver (nav_field.h) marches over, and rasterizing segments into
 * it needs no polygon clipping, so it cannot fail on awkward geometry.
 *
 * Cells: cell (i, j), 0 <= i < nx, 0 <= j < ny, has index j * nx + i and
 * its center at origin + ((i + 0.5) h, (j + 0.5) h). A point belongs to
 * the cell whose square holds it (nav_grid_cell_of).
 *
 * Memory per cell: 1 byte here (the blocked flag); a field is 4 more (a
 * float), and a solve 4 more while it runs, plus 8 bytes per cell of its
 * front (nav_field.h): NAV_CELL_BYTES in all, which the size limit of
 * nav_grid_init counts. 200 m x 200 m at 0.1 m is 4e6 cells: 4 MB of
 * grid, 16 MB per field, 16 MB more while solving.
 *
 * Internal, no public API yet. Next: the nav module (goals, fields per
 * goal, their state), the navigate behavior that follows a field's
 * gradient, and dynamic costs (density, re-solved every k steps). */
#ifndef SHOAL_MODULES_NAV_GRID_H
#define SHOAL_MODULES_NAV_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "shoal/id.h"
#include "ecs/memory.h"

/* What a grid, one field and a solve's scratch take per cell (bytes):
 * blocked flag 1 + travel time 4 + heap position 4. The heap holds only
 * the front (about the perimeter of the reached area: some 1e4 cells of
 * 8 bytes for 4e6 cells) and is not counted. */
#define NAV_CELL_BYTES 9
/* The limit nav_grid_init applies when given none (max_bytes 0): 1 GiB,
 * about 8e7 cells (a 9 km square at 1 m, a 900 m square at 0.1 m). */
#define NAV_GRID_BYTES_DEFAULT ((size_t)1 << 30)

typedef struct nav_grid_t {
    float origin[2];   /* lower-left corner of cell (0, 0), m */
    float cell;        /* cell side h, m (> 0) */
    int32_t nx, ny;    /* cells per row, rows */
    uint8_t* blocked;  /* nx * ny: 1 blocked, 0 walkable */
    allocator_t alloc; /* the grid's memory and every solve's scratch over it */
} nav_grid_t;

/* Make an all-walkable grid. SHOAL_ERR_INVALID_ARGUMENT for a NULL grid, a
 * non-finite origin, a cell that is not finite and > 0, or nx, ny < 1;
 * SHOAL_ERR_CAPACITY when nx * ny * NAV_CELL_BYTES exceeds max_bytes (0:
 * NAV_GRID_BYTES_DEFAULT) or nx * ny exceeds INT32_MAX; SHOAL_ERR_OUT_OF_MEMORY
 * when the allocation fails. On failure *g is zeroed (nav_grid_free is then
 * harmless) and msg (optional, base/msg.h) says why. Never aborts. */
shoal_status_t nav_grid_init(nav_grid_t* g, float origin_x, float origin_y, float cell, int32_t nx,
                             int32_t ny, size_t max_bytes, char* msg, int msg_size);
/* The same, with the memory of the grid and of every solve over it from
 * `alloc` (a world's; NULL: allocator_default()). */
shoal_status_t nav_grid_init_with(nav_grid_t* g, const allocator_t* alloc, float origin_x, float origin_y,
                                  float cell, int32_t nx, int32_t ny, size_t max_bytes, char* msg,
                                  int msg_size);
void nav_grid_free(nav_grid_t* g);

/* Block every cell whose center lies within `clearance` of one of the
 * `count` segments seg[k] = (x0, y0, x1, y1) (distance <= clearance,
 * nav_segment_dist2): the walls of walls.h as they are (wall_set_t.seg),
 * clearance usually the agents' radius. Cells already blocked stay so.
 * Each segment visits only the cells its capsule can touch, row by row.
 * A clearance of at least h / 2 makes every wall a barrier to the
 * 4-neighbor solver: two 4-neighbors on opposite sides of a segment are h
 * apart across it, so one of them is within h / 2. Non-finite segments are
 * skipped. Returns the number of cells that became blocked. */
int64_t nav_grid_block_segments(nav_grid_t* g, const float (*seg)[4], int32_t count, float clearance);

/* Center of cell (i, j). */
static inline void nav_grid_center(const nav_grid_t* g, int32_t i, int32_t j, float* x, float* y)
{
    *x = g->origin[0] + ((float)i + 0.5f) * g->cell;
    *y = g->origin[1] + ((float)j + 0.5f) * g->cell;
}

/* Index of the cell holding (x, y), or -1 outside the grid (or NaN). */
static inline int32_t nav_grid_cell_of(const nav_grid_t* g, float x, float y)
{
    float u = (x - g->origin[0]) / g->cell, v = (y - g->origin[1]) / g->cell;
    if (!(u >= 0.0f && v >= 0.0f && u < (float)g->nx && v < (float)g->ny)) return -1;
    int32_t i = (int32_t)u, j = (int32_t)v;
    if (i >= g->nx) i = g->nx - 1;
    if (j >= g->ny) j = g->ny - 1;
    return j * g->nx + i;
}

/* Squared distance from (x, y) to segment s = (x0, y0, x1, y1): the one
 * predicate the rasterization uses, so that a check can repeat it. */
static inline float nav_segment_dist2(const float s[4], float x, float y)
{
    float dx = s[2] - s[0], dy = s[3] - s[1];
    float len2 = dx * dx + dy * dy;
    float t = len2 > 0.0f ? ((x - s[0]) * dx + (y - s[1]) * dy) / len2 : 0.0f;
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    float ex = s[0] + t * dx - x, ey = s[1] + t * dy - y;
    return ex * ex + ey * ey;
}

#endif /* SHOAL_MODULES_NAV_GRID_H */
