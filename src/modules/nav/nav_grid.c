/* The walkable grid of navigation fields: allocation under a size limit,
 * and the rasterization of wall segments with a clearance (nav_grid.h). */
#include "modules/nav/nav_grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"

shoal_status_t nav_grid_init(nav_grid_t* g, float origin_x, float origin_y, float cell, int32_t nx,
                             int32_t ny, size_t max_bytes, char* msg, int msg_size)
{
    return nav_grid_init_with(g, NULL, origin_x, origin_y, cell, nx, ny, max_bytes, msg, msg_size);
}

shoal_status_t nav_grid_init_with(nav_grid_t* g, const allocator_t* alloc, float origin_x, float origin_y,
                                  float cell, int32_t nx, int32_t ny, size_t max_bytes, char* msg,
                                  int msg_size)
{
    if (g == NULL) {
        set_msg(msg, msg_size, "nav grid: NULL grid");
        return SHOAL_ERR_INVALID_ARGUMENT;
    }
    memset(g, 0, sizeof *g);
    if (!isfinite(origin_x) || !isfinite(origin_y)) {
        set_msg(msg, msg_size, "nav grid: origin (%g, %g) is not finite", (double)origin_x, (double)origin_y);
        return SHOAL_ERR_INVALID_ARGUMENT;
    }
    if (!(isfinite(cell) && cell > 0.0f)) {
        set_msg(msg, msg_size, "nav grid: cell size %g is not a finite value > 0", (double)cell);
        return SHOAL_ERR_INVALID_ARGUMENT;
    }
    if (nx < 1 || ny < 1) {
        set_msg(msg, msg_size, "nav grid: %d x %d cells, need at least 1 x 1", (int)nx, (int)ny);
        return SHOAL_ERR_INVALID_ARGUMENT;
    }
    size_t limit = max_bytes != 0 ? max_bytes : NAV_GRID_BYTES_DEFAULT;
    uint64_t cells = (uint64_t)nx * (uint64_t)ny; /* < 2^62: no overflow */
    if (cells * NAV_CELL_BYTES > (uint64_t)limit) {
        set_msg(msg, msg_size,
                "nav grid: %d x %d cells need %llu bytes (%d a cell with a field and its solve), "
                "more than the limit of %llu",
                (int)nx, (int)ny, (unsigned long long)(cells * NAV_CELL_BYTES), NAV_CELL_BYTES,
                (unsigned long long)limit);
        return SHOAL_ERR_CAPACITY;
    }
    if (cells > (uint64_t)INT32_MAX) {
        set_msg(msg, msg_size, "nav grid: %d x %d cells, more than %d (cell indices are 32-bit)", (int)nx,
                (int)ny, (int)INT32_MAX);
        return SHOAL_ERR_CAPACITY;
    }
    allocator_t a = alloc != NULL ? *alloc : allocator_default();
    uint8_t* blocked = mem_calloc(&a, (size_t)cells);
    if (blocked == NULL) {
        set_msg(msg, msg_size, "nav grid: out of memory for %llu cells", (unsigned long long)cells);
        return SHOAL_ERR_OUT_OF_MEMORY;
    }
    g->origin[0] = origin_x;
    g->origin[1] = origin_y;
    g->cell = cell;
    g->nx = nx;
    g->ny = ny;
    g->blocked = blocked;
    g->alloc = a;
    return SHOAL_OK;
}

void nav_grid_free(nav_grid_t* g)
{
    if (g == NULL) return;
    if (g->blocked != NULL) mem_free(&g->alloc, g->blocked, (size_t)g->nx * (size_t)g->ny);
    memset(g, 0, sizeof *g);
}

/* A float cell coordinate clamped to [lo, hi] before the conversion, so
 * that huge or infinite values convert safely. */
static int32_t clamp_index(double u, int32_t lo, int32_t hi)
{
    if (!(u >= (double)lo)) return lo;
    if (u > (double)hi) return hi;
    return (int32_t)u;
}

int64_t nav_grid_block_segments(nav_grid_t* g, const float (*seg)[4], int32_t count, float clearance)
{
    if (g == NULL || g->blocked == NULL || seg == NULL || count <= 0) return 0;
    if (!(clearance >= 0.0f) || !isfinite(clearance)) return 0;
    const double h = g->cell, ox = g->origin[0], oy = g->origin[1];
    const float r2 = clearance * clearance;
    int64_t newly = 0;
    for (int32_t k = 0; k < count; ++k) {
        const float* s = seg[k];
        if (!isfinite(s[0]) || !isfinite(s[1]) || !isfinite(s[2]) || !isfinite(s[3])) continue;
        /* Rows whose centers can be within the clearance: the segment's y
         * range widened by it (one cell more on each side against rounding;
         * the exact predicate decides). */
        double ylo = fmin(s[1], s[3]) - clearance, yhi = fmax(s[1], s[3]) + clearance;
        int32_t j0 = clamp_index(floor((ylo - oy) / h - 0.5) - 1.0, 0, g->ny - 1);
        int32_t j1 = clamp_index(ceil((yhi - oy) / h - 0.5) + 1.0, 0, g->ny - 1);
        if (yhi < oy - h || ylo > oy + (double)g->ny * h + h) continue;
        double dy = (double)s[3] - s[1];
        /* The clearance a little widened: the float predicate may accept a
         * center a rounding error beyond it. */
        double wide = clearance * (1.0 + 1e-5) + 1e-3 * h;
        for (int32_t j = j0; j <= j1; ++j) {
            double yc = oy + ((double)j + 0.5) * h;
            /* The part of the segment within the clearance of this row's
             * line y = yc: its x range, widened by the clearance, bounds
             * every point of the row within the clearance of the segment. */
            double t0 = 0.0, t1 = 1.0;
            if (fabs(dy) > 0.0) {
                double ta = (yc - wide - s[1]) / dy, tb = (yc + wide - s[1]) / dy;
                if (ta > tb) {
                    double t = ta;
                    ta = tb;
                    tb = t;
                }
                t0 = fmax(t0, ta);
                t1 = fmin(t1, tb);
                if (t0 > t1) continue;
            } else if (fabs(yc - s[1]) > wide) {
                continue;
            }
            double xa = s[0] + t0 * ((double)s[2] - s[0]), xb = s[0] + t1 * ((double)s[2] - s[0]);
            double xlo = fmin(xa, xb) - wide, xhi = fmax(xa, xb) + wide;
            int32_t i0 = clamp_index(floor((xlo - ox) / h - 0.5) - 1.0, 0, g->nx - 1);
            int32_t i1 = clamp_index(ceil((xhi - ox) / h - 0.5) + 1.0, 0, g->nx - 1);
            uint8_t* row = g->blocked + (int64_t)j * g->nx;
            for (int32_t i = i0; i <= i1; ++i) {
                if (row[i]) continue;
                float cx, cy;
                nav_grid_center(g, i, j, &cx, &cy);
                if (nav_segment_dist2(s, cx, cy) <= r2) {
                    row[i] = 1;
                    ++newly;
                }
            }
        }
    }
    return newly;
}
