/* The world's walls (walls.c): line segments in 2D, module-wide data of
 * the walls module, in a static grid of their own for the crowd's queries
 * (orca and contacts). */
#ifndef SHOAL_SYSTEMS_WALLS_H
#define SHOAL_SYSTEMS_WALLS_H

#include "systems/components.h"

/* The most segments one query returns (the nearest are not preferred: a
 * query past it returns the first found in cell order). */
#define WALL_QUERY_MAX 64

typedef struct wall_set_t {
    /* Walls by id: first point in `points`, point count (0: removed),
     * closed flag. */
    int32_t (*walls)[3];
    int32_t wall_high, wall_capacity, wall_count;
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
} wall_set_t;

static inline wall_set_t* walls_of(const world_t* w) { return (wall_set_t*)w->module_data[MOD_WALLS]; }

/* Segments whose distance to (x, y) may be below `reach`, each once, at
 * most WALL_QUERY_MAX, into out (indexes into seg); returns the count. */
int32_t walls_query(const wall_set_t* ws, float x, float y, float reach, int32_t* out);

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
