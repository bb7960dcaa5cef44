/* The nav module (shoal/nav.h, nav.h): goals, the walkable grid and a
 * travel-time field per goal; the navigate behavior that follows them; its
 * part of the state hash and its snapshot section NAVI (format version 8;
 * speed zones and start delays since version 10).
 *
 * Decisions:
 * - Goals and the grid's parameters are state (hashed, saved); the grid,
 *   the speed near walls and the fields are derived from them and from the
 *   walls and static obstacles, rebuilt before the first step after any of
 *   them changed (reserve_step, so that a grid too large for its memory
 *   limit or a goal left with no walkable cell fails the step before
 *   anything moved), solved in the sense stage (nav_fields, one goal a
 *   worker), never saved. A world with no goal builds nothing.
 * - The speed near walls: a second fast-marching solve gives every
 *   walkable cell its distance D to the nearest blocked cell (seeded at
 *   h / 2 on the walkable cells beside one); F = s + (1 - s) min(1, D / d)
 *   with s = wall_speed, d = wall_distance. Paths then keep about d from
 *   walls and corners where there is room, and every walkable cell still
 *   has a way out (F > 0). On open floor F = 1: the field is the distance.
 * - A goal's cells are those within 2.5 cells of it (a point's only those
 *   in sight of it), each starting at its exact distance to the goal over
 *   its speed: that keeps the field exact round the goal, where a single
 *   seeded cell would spread its error outward (nav_field.h).
 * - The navigate command: weight times the max speed along the field's
 *   descent (nav_field_gradient); for a point goal within its seeded
 *   cells, straight at the point, slowing as arrive does. Arrived within
 *   arrive_distance of the goal along the field: a point goal keeps
 *   arriving at its point, a line or area goal asks for nothing more.
 *   Outside the grid, straight for the goal's nearest point. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modules/nav/nav.h"
#include "modules/nav/nav_field.h"
#include "modules/crowd/crowd.h"
#include "modules/obstacles/obstacles.h"
#include "modules/walls/walls.h"
#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "modules/agent.h"

/* A goal's seeded band, in cells. */
#define NAV_SEED_CELLS 2.5f
#define NAV_SNAPSHOT_VERSION 8 /* zones and start delays since 10 */

shoal_nav_params_t shoal_nav_params_default(void)
{
    shoal_nav_params_t p;
    memset(&p, 0, sizeof p);
    p.cell = 0.1f;
    p.clearance = 0.25f;
    p.wall_distance = 0.5f;
    p.wall_speed = 0.5f;
    p.margin = 2.0f;
    p.max_bytes = (double)((int64_t)1 << 30);
    p.density_interval = 20;
    return p;
}

shoal_nav_t shoal_nav_default(void)
{
    shoal_nav_t n = {.goal = -1, .arrive_distance = 0.3f, .journey = -1, .start_delay = 0.0f};
    return n;
}

/* ---- geometry of goals ---------------------------------------------------- */

static float seg_dist(const float a[2], const float b[2], float x, float y)
{
    float s[4] = {a[0], a[1], b[0], b[1]};
    return sqrtf(nav_segment_dist2(s, x, y));
}

static int points_contain(const float (*pts)[2], int32_t count, float x, float y)
{
    int in = 0;
    for (int32_t i = 0, j = count - 1; i < count; j = i++) {
        const float *a = pts[i], *b = pts[j];
        if ((a[1] > y) != (b[1] > y) && x < (b[0] - a[0]) * (y - a[1]) / (b[1] - a[1]) + a[0]) in = !in;
    }
    return in;
}

static int polygon_contains(const shoal_nav_goal_t* g, float x, float y)
{
    return points_contain((const float(*)[2])g->points, g->count, x, y);
}

static double points_area(const float (*pts)[2], int32_t count)
{
    double a = 0.0;
    for (int32_t i = 0, j = count - 1; i < count; j = i++)
        a += (double)pts[j][0] * pts[i][1] - (double)pts[i][0] * pts[j][1];
    return 0.5 * fabs(a);
}

/* Distance from (x, y) to the goal (0 inside an area). */
static float goal_dist(const shoal_nav_goal_t* g, float x, float y)
{
    if (g->kind == SHOAL_NAV_POINT) return hypotf(x - g->points[0][0], y - g->points[0][1]);
    if (g->kind == SHOAL_NAV_LINE) {
        float d = INFINITY;
        for (int32_t k = 0; k + 1 < g->count; k += 2)
            d = fminf(d, seg_dist(g->points[k], g->points[k + 1], x, y));
        return d;
    }
    if (polygon_contains(g, x, y)) return 0.0f;
    float d = INFINITY;
    for (int32_t i = 0, j = g->count - 1; i < g->count; j = i++)
        d = fminf(d, seg_dist(g->points[j], g->points[i], x, y));
    return d;
}

/* The goal's point nearest (x, y). */
static void goal_nearest(const shoal_nav_goal_t* g, float x, float y, float* qx, float* qy)
{
    *qx = g->points[0][0];
    *qy = g->points[0][1];
    if (g->kind == SHOAL_NAV_POINT) return;
    if (g->kind == SHOAL_NAV_AREA && polygon_contains(g, x, y)) {
        *qx = x;
        *qy = y;
        return;
    }
    const int line = g->kind == SHOAL_NAV_LINE;
    float best = INFINITY;
    for (int32_t i = 0; i < g->count; i += line ? 2 : 1) {
        const float* a = g->points[i];
        const float* b = g->points[(i + 1) % g->count];
        float s[4] = {a[0], a[1], b[0], b[1]}, px, py;
        walls_nearest(s, x, y, &px, &py);
        float d = (px - x) * (px - x) + (py - y) * (py - y);
        if (d < best) {
            best = d;
            *qx = px;
            *qy = py;
        }
    }
}

static double polygon_area(const shoal_nav_goal_t* g)
{
    return points_area((const float(*)[2])g->points, g->count);
}

static const char* kind_name(int32_t kind)
{
    return kind == SHOAL_NAV_POINT ? "point" : kind == SHOAL_NAV_LINE ? "line" : "area";
}

/* The same with its article, for messages. */
static const char* kind_article(int32_t kind)
{
    return kind == SHOAL_NAV_POINT ? "a point" : kind == SHOAL_NAV_LINE ? "a line" : "an area";
}

/* ---- the grid -------------------------------------------------------------- */

typedef struct nav_box_t {
    double x0, y0, x1, y1;
    int32_t nx, ny;
    double bytes;
} nav_box_t;

static void box_add(nav_box_t* b, double x, double y, double r)
{
    if (x - r < b->x0) b->x0 = x - r;
    if (y - r < b->y0) b->y0 = y - r;
    if (x + r > b->x1) b->x1 = x + r;
    if (y + r > b->y1) b->y1 = y + r;
}

/* Bytes of the grid (1 a cell), the speed (4), the density and the
 * congested speed (8, with congestion), the zones' factors (4, with
 * zones), the fields of `goals` goals (4 each) and the solves' scratch (4
 * a worker solving). */
static double nav_bytes(double cells, int32_t goals, int32_t threads, int dynamic, int zones)
{
    int32_t solving = goals < threads ? goals : threads;
    return cells * (1.0 + 4.0 + (dynamic ? 8.0 : 0.0) + (zones ? 4.0 : 0.0) + 4.0 * goals +
                    4.0 * (solving > 0 ? solving : 1));
}

/* The grid's extent for these parameters, walls, obstacles and goals (and
 * `extra`, a goal being added). */
static nav_box_t nav_box(const world_t* w, const shoal_nav_params_t* p, const shoal_nav_goal_t* extra,
                         int32_t goals)
{
    nav_box_t b = {INFINITY, INFINITY, -INFINITY, -INFINITY, 0, 0, 0.0};
    if (p->bounds[2] > p->bounds[0] || p->bounds[3] > p->bounds[1]) {
        b.x0 = p->bounds[0];
        b.y0 = p->bounds[1];
        b.x1 = p->bounds[2];
        b.y1 = p->bounds[3];
    } else {
        const wall_set_t* ws = walls_of(w);
        for (int32_t i = 0; i < ws->wall_high; ++i) {
            const int32_t* wl = ws->walls[i];
            for (int32_t k = 0; k < wl[WF_COUNT]; ++k)
                box_add(&b, ws->points[wl[WF_FIRST] + k][0], ws->points[wl[WF_FIRST] + k][1], 0.0);
        }
        const obstacle_set_t* os = obstacles_of(w);
        for (int32_t i = 0; i < os->obstacle_high; ++i) {
            const float* o = os->obstacles[i];
            const float* v = os->obstacle_velocities[i];
            if (o[3] < 0.0f || v[0] != 0.0f || v[1] != 0.0f) continue;
            box_add(&b, o[0], o[1], o[3]);
        }
        const nav_world_t* nw = nav_of(w);
        for (int32_t g = 0; g < nw->goal_high; ++g) {
            if (!nw->goals[g].live) continue;
            for (int32_t k = 0; k < nw->goals[g].def.count; ++k)
                box_add(&b, nw->goals[g].def.points[k][0], nw->goals[g].def.points[k][1], 0.0);
        }
        if (extra)
            for (int32_t k = 0; k < extra->count; ++k)
                box_add(&b, extra->points[k][0], extra->points[k][1], 0.0);
        box_add(&b, 0.5 * (b.x0 + b.x1), 0.5 * (b.y0 + b.y1), 0.0); /* nothing: stays empty */
        b.x0 -= p->margin;
        b.y0 -= p->margin;
        b.x1 += p->margin;
        b.y1 += p->margin;
    }
    double nx = ceil((b.x1 - b.x0) / p->cell), ny = ceil((b.y1 - b.y0) / p->cell);
    if (!(nx >= 1.0)) nx = 1.0;
    if (!(ny >= 1.0)) ny = 1.0;
    b.bytes = nav_bytes(nx * ny, goals, w->thread_count > 0 ? w->thread_count : 1, p->density_weight > 0.0f,
                        nav_of(w)->live_zones > 0);
    b.nx = nx < (double)INT32_MAX ? (int32_t)nx : INT32_MAX;
    b.ny = ny < (double)INT32_MAX ? (int32_t)ny : INT32_MAX;
    if (nx * ny > (double)INT32_MAX) b.bytes = INFINITY;
    return b;
}

static shoal_status_t box_check(world_t* w, const char* where, const shoal_nav_params_t* p,
                                const nav_box_t* b, int32_t goals)
{
    if (!(b->bytes <= p->max_bytes))
        return world_fail(
            w, SHOAL_ERR_CAPACITY,
            "%s: the nav grid over [%g, %g] x [%g, %g] m at cells of %g m is %.0f x %.0f cells, "
            "which with %d goal fields need %.3g bytes, more than max_bytes %.3g (a larger "
            "cell, explicit bounds, or a larger max_bytes)",
            where, b->x0, b->x1, b->y0, b->y1, (double)p->cell, ceil((b->x1 - b->x0) / p->cell),
            ceil((b->y1 - b->y0) / p->cell), (int)goals, b->bytes, p->max_bytes);
    return SHOAL_OK;
}

static void free_goal_derived(world_t* w, nav_goal_rec_t* g, size_t cells)
{
    mem_free(&w->alloc, g->T, cells * sizeof *g->T);
    mem_free(&w->alloc, g->seed, (size_t)g->seed_count * sizeof *g->seed);
    mem_free(&w->alloc, g->seed_time, (size_t)g->seed_count * sizeof *g->seed_time);
    g->T = NULL;
    g->seed = NULL;
    g->seed_time = NULL;
    g->seed_count = 0;
    g->solved = 0;
}

static void free_derived(world_t* w, nav_world_t* nw)
{
    size_t cells = (size_t)nw->grid.nx * (size_t)nw->grid.ny;
    for (int32_t g = 0; g < nw->goal_high; ++g) free_goal_derived(w, &nw->goals[g], cells);
    mem_free(&w->alloc, nw->speed, cells * sizeof *nw->speed);
    mem_free(&w->alloc, nw->speed_dyn, cells * sizeof *nw->speed_dyn);
    mem_free(&w->alloc, nw->density, cells * sizeof *nw->density);
    mem_free(&w->alloc, nw->zone_factor, cells * sizeof *nw->zone_factor);
    nw->zone_factor = NULL;
    nw->speed = nw->speed_dyn = NULL;
    nw->density = NULL;
    nw->density_valid = 0;
    if (nw->grid.blocked != NULL) nw->fields_revision++;
    nav_grid_free(&nw->grid);
    nw->blocked = 0;
    nw->built_valid = 0;
}

/* Depth of (x, y) inside an area goal: its distance to the boundary. */
static float area_depth(const shoal_nav_goal_t* g, float x, float y)
{
    float d = INFINITY;
    for (int32_t i = 0, j = g->count - 1; i < g->count; j = i++)
        d = fminf(d, seg_dist(g->points[j], g->points[i], x, y));
    return d;
}

/* A goal's cells and their start times: those within NAV_SEED_CELLS cells
 * of it (a point's: in sight of it, nav_field_point_goal), walkable, at
 * their distance to it over their speed. An area's inside cells start at
 * offset - depth, offset the largest depth, and the band outside it at
 * offset + distance: the field leads on to the area's middle. With seed
 * NULL only counts (and finds *offset). */
static int32_t goal_seeds(const nav_world_t* nw, const shoal_nav_goal_t* goal, int32_t* seed,
                          float* seed_time, int32_t cap, float* offset)
{
    const nav_grid_t* g = &nw->grid;
    const float h = g->cell, band = NAV_SEED_CELLS * h;
    *offset = 0.0f;
    if (goal->kind == SHOAL_NAV_POINT)
        return nav_field_point_goal(g, nw->speed, goal->points[0][0], goal->points[0][1], band, seed,
                                    seed_time, cap);
    float x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (int32_t k = 0; k < goal->count; ++k) {
        x0 = fminf(x0, goal->points[k][0]);
        y0 = fminf(y0, goal->points[k][1]);
        x1 = fmaxf(x1, goal->points[k][0]);
        y1 = fmaxf(y1, goal->points[k][1]);
    }
    double i0 = floor((x0 - band - g->origin[0]) / h), i1 = floor((x1 + band - g->origin[0]) / h);
    double j0 = floor((y0 - band - g->origin[1]) / h), j1 = floor((y1 + band - g->origin[1]) / h);
    i0 = fmax(i0, 0.0);
    j0 = fmax(j0, 0.0);
    i1 = fmin(i1, g->nx - 1.0);
    j1 = fmin(j1, g->ny - 1.0);
    if (!(i0 <= i1 && j0 <= j1)) return 0;
    float deepest = 0.0f;
    if (goal->kind == SHOAL_NAV_AREA)
        for (int32_t j = (int32_t)j0; j <= (int32_t)j1; ++j)
            for (int32_t i = (int32_t)i0; i <= (int32_t)i1; ++i) {
                float x, y;
                nav_grid_center(g, i, j, &x, &y);
                if (!g->blocked[j * g->nx + i] && polygon_contains(goal, x, y))
                    deepest = fmaxf(deepest, area_depth(goal, x, y));
            }
    *offset = deepest;
    int32_t n = 0;
    for (int32_t j = (int32_t)j0; j <= (int32_t)j1; ++j)
        for (int32_t i = (int32_t)i0; i <= (int32_t)i1; ++i) {
            int32_t c = j * g->nx + i;
            if (g->blocked[c]) continue;
            float x, y;
            nav_grid_center(g, i, j, &x, &y);
            float d = goal_dist(goal, x, y), t = d;
            if (!(d <= band)) continue;
            if (goal->kind == SHOAL_NAV_AREA)
                t = d > 0.0f ? deepest + d : fmaxf(0.0f, deepest - area_depth(goal, x, y));
            if (n < cap) {
                seed[n] = c;
                seed_time[n] = t / (nw->speed ? nw->speed[c] : 1.0f);
            }
            ++n;
        }
    return n;
}

/* Every live segment of the walls, from their points (the walls' own
 * derived list may not be built yet outside a step). */
static float (*wall_segments_copy(world_t* w, int32_t* count))[4]
{
    int32_t n = 0;
    shoal_world_wall_segments(w, NULL, 0, &n);
    *count = n;
    if (n == 0) return NULL;
    float(*seg)[4] = mem_alloc(&w->alloc, (size_t)n * sizeof *seg);
    if (seg) shoal_world_wall_segments(w, &seg[0][0], n, &n);
    return seg;
}

/* Whether the derived data is current. */
static int nav_current(const world_t* w)
{
    const nav_world_t* nw = nav_of(w);
    return nw->built_valid && nw->built_goals == nw->goals_version &&
           nw->built_params == nw->params_version && nw->built_zones == nw->zones_version &&
           nw->built_walls == walls_of(w)->version &&
           nw->built_obstacles == obstacles_of(w)->obstacle_version;
}

/* Whether the grid built is the one these parameters, walls, obstacles
 * and the box b give. */
static int geometry_current(const world_t* w, const nav_box_t* b)
{
    const nav_world_t* nw = nav_of(w);
    return nw->grid.blocked != NULL && nw->built_params == nw->params_version &&
           nw->built_zones == nw->zones_version && nw->built_walls == walls_of(w)->version &&
           nw->built_obstacles == obstacles_of(w)->obstacle_version && nw->grid.origin[0] == (float)b->x0 &&
           nw->grid.origin[1] == (float)b->y0 && nw->grid.nx == b->nx && nw->grid.ny == b->ny;
}

/* The grid, blocked by walls and static obstacles, and the speed near
 * walls. 0 on failure, with the message recorded. */
static int build_grid_walls(world_t* w, const char* where, const nav_box_t* b)
{
    nav_world_t* nw = nav_of(w);
    const shoal_nav_params_t* p = &nw->params;
    char msg[256];
    shoal_status_t st = nav_grid_init_with(&nw->grid, &w->alloc, (float)b->x0, (float)b->y0, p->cell, b->nx,
                                           b->ny, (size_t)-1, msg, sizeof msg);
    if (st != SHOAL_OK) {
        w->reserve_status = world_fail(w, st, "%s: %s", where, msg);
        return 0;
    }
    const size_t cells = (size_t)b->nx * (size_t)b->ny;
    int32_t nseg = 0;
    float(*seg)[4] = wall_segments_copy(w, &nseg);
    if (nseg > 0 && !seg) return 0;
    nw->blocked = nav_grid_block_segments(&nw->grid, (const float(*)[4])seg, nseg, p->clearance);
    mem_free(&w->alloc, seg, (size_t)nseg * sizeof *seg);
    /* static obstacles: a circle of radius r + clearance */
    const obstacle_set_t* os = obstacles_of(w);
    for (int32_t i = 0; i < os->obstacle_high; ++i) {
        const float* o = os->obstacles[i];
        const float* v = os->obstacle_velocities[i];
        if (o[3] < 0.0f || v[0] != 0.0f || v[1] != 0.0f) continue;
        float dot[1][4] = {{o[0], o[1], o[0], o[1]}};
        nw->blocked += nav_grid_block_segments(&nw->grid, (const float(*)[4])dot, 1, o[3] + p->clearance);
    }
    nw->speed = mem_alloc(&w->alloc, cells * sizeof *nw->speed);
    if (!nw->speed) return 0;
    for (size_t c = 0; c < cells; ++c) nw->speed[c] = 1.0f;
    if (p->density_weight > 0.0f) {
        nw->density = mem_calloc(&w->alloc, cells * sizeof *nw->density);
        nw->speed_dyn = mem_alloc(&w->alloc, cells * sizeof *nw->speed_dyn);
        if (!nw->density || !nw->speed_dyn) return 0;
        if (nw->loaded_density && nw->loaded_nx == b->nx && nw->loaded_ny == b->ny) {
            memcpy(nw->density, nw->loaded_density, cells * sizeof *nw->density);
            nw->density_valid = 1;
        }
    }
    if (nw->loaded_density) {
        mem_free(&w->alloc, nw->loaded_density,
                 (size_t)nw->loaded_nx * nw->loaded_ny * sizeof *nw->loaded_density);
        nw->loaded_density = NULL;
    }
    if (nw->blocked == 0 || !(p->wall_distance > 0.0f) || p->wall_speed >= 1.0f) return 1;
    /* D: distance to the nearest blocked cell, from the walkable cells
     * beside one (at h / 2), into the speed array, then F from it */
    const nav_grid_t* g = &nw->grid;
    int32_t n = 0;
    for (int32_t j = 0; j < g->ny; ++j)
        for (int32_t i = 0; i < g->nx; ++i) {
            int32_t c = j * g->nx + i;
            n += !g->blocked[c] &&
                 ((i > 0 && g->blocked[c - 1]) || (i + 1 < g->nx && g->blocked[c + 1]) ||
                  (j > 0 && g->blocked[c - g->nx]) || (j + 1 < g->ny && g->blocked[c + g->nx]));
        }
    int32_t* cell = mem_alloc(&w->alloc, (size_t)n * sizeof *cell);
    float* t0 = mem_alloc(&w->alloc, (size_t)n * sizeof *t0);
    if (n > 0 && (!cell || !t0)) {
        mem_free(&w->alloc, cell, (size_t)n * sizeof *cell);
        mem_free(&w->alloc, t0, (size_t)n * sizeof *t0);
        return 0;
    }
    int32_t k = 0;
    for (int32_t j = 0; j < g->ny; ++j)
        for (int32_t i = 0; i < g->nx; ++i) {
            int32_t c = j * g->nx + i;
            if (!g->blocked[c] &&
                ((i > 0 && g->blocked[c - 1]) || (i + 1 < g->nx && g->blocked[c + 1]) ||
                 (j > 0 && g->blocked[c - g->nx]) || (j + 1 < g->ny && g->blocked[c + g->nx]))) {
                cell[k] = c;
                t0[k++] = 0.5f * g->cell;
            }
        }
    st = nav_field_solve_within(g, NULL, cell, t0, n, p->wall_distance, nw->speed);
    mem_free(&w->alloc, cell, (size_t)n * sizeof *cell);
    mem_free(&w->alloc, t0, (size_t)n * sizeof *t0);
    if (st != SHOAL_OK) return 0;
    const float s = p->wall_speed, d = p->wall_distance;
    for (size_t c = 0; c < cells; ++c) {
        float D = nw->speed[c];
        nw->speed[c] = g->blocked[c] ? 1.0f : s + (1.0f - s) * fminf(1.0f, (isfinite(D) ? D : d) / d);
    }
    return 1;
}

/* Each cell's zone factor (the zone added last whose polygon holds the
 * cell's center; 1 in none), and the speed of the walkable cells times it. */
static int apply_zones(world_t* w, nav_world_t* nw)
{
    if (nw->live_zones == 0) return 1;
    const nav_grid_t* g = &nw->grid;
    const size_t cells = (size_t)g->nx * (size_t)g->ny;
    nw->zone_factor = mem_alloc(&w->alloc, cells * sizeof *nw->zone_factor);
    if (!nw->zone_factor) return 0;
    for (size_t c = 0; c < cells; ++c) nw->zone_factor[c] = 1.0f;
    const float h = g->cell;
    for (int32_t z = 0; z < nw->zone_high; ++z) {
        const nav_zone_rec_t* zr = &nw->zones[z];
        if (!zr->live) continue;
        float x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
        for (int32_t k = 0; k < zr->def.count; ++k) {
            x0 = fminf(x0, zr->def.points[k][0]);
            y0 = fminf(y0, zr->def.points[k][1]);
            x1 = fmaxf(x1, zr->def.points[k][0]);
            y1 = fmaxf(y1, zr->def.points[k][1]);
        }
        double i0 = fmax(floor((x0 - g->origin[0]) / h), 0.0),
               i1 = fmin(floor((x1 - g->origin[0]) / h), g->nx - 1.0);
        double j0 = fmax(floor((y0 - g->origin[1]) / h), 0.0),
               j1 = fmin(floor((y1 - g->origin[1]) / h), g->ny - 1.0);
        if (!(i0 <= i1 && j0 <= j1)) continue;
        for (int32_t j = (int32_t)j0; j <= (int32_t)j1; ++j)
            for (int32_t i = (int32_t)i0; i <= (int32_t)i1; ++i) {
                float x, y;
                nav_grid_center(g, i, j, &x, &y);
                if (points_contain((const float(*)[2])zr->def.points, zr->def.count, x, y))
                    nw->zone_factor[j * g->nx + i] = zr->def.speed_factor;
            }
    }
    for (size_t c = 0; c < cells; ++c)
        if (!g->blocked[c]) nw->speed[c] *= nw->zone_factor[c];
    return 1;
}

static int build_grid(world_t* w, const char* where, const nav_box_t* b)
{
    return build_grid_walls(w, where, b) && apply_zones(w, nav_of(w));
}

/* The speed factor at (x, y): its cell's, or outside the grid the zone's
 * added last that contains it. */
static float zone_factor_at(const nav_world_t* nw, int32_t cell, float x, float y)
{
    if (cell >= 0) return nw->zone_factor[cell];
    float f = 1.0f;
    for (int32_t z = 0; z < nw->zone_high; ++z)
        if (nw->zones[z].live &&
            points_contain((const float(*)[2])nw->zones[z].def.points, nw->zones[z].def.count, x, y))
            f = nw->zones[z].def.speed_factor;
    return f;
}

/* Bring the derived data up to date: the grid and speed when their
 * inputs changed (every field then unsolved), and the seeds and field
 * memory of every live goal that has none (unsolved). A failure records
 * its message and sets w->reserve_status. */
static int nav_build(world_t* w, const char* where)
{
    nav_world_t* nw = nav_of(w);
    nw->built_valid = 0;
    if (nw->live_goals == 0) {
        free_derived(w, nw);
        return 1;
    }
    const shoal_nav_params_t* p = &nw->params;
    nav_box_t b = nav_box(w, p, NULL, nw->live_goals);
    shoal_status_t st = box_check(w, where, p, &b, nw->live_goals);
    if (st != SHOAL_OK) {
        w->reserve_status = st;
        return 0;
    }
    if (!geometry_current(w, &b)) {
        free_derived(w, nw);
        if (!build_grid(w, where, &b)) goto fail;
        nw->built_params = nw->params_version;
        nw->built_zones = nw->zones_version;
        nw->built_walls = walls_of(w)->version;
        nw->built_obstacles = obstacles_of(w)->obstacle_version;
    }
    const size_t cells = (size_t)b.nx * (size_t)b.ny;
    for (int32_t gi = 0; gi < nw->goal_high; ++gi) {
        nav_goal_rec_t* gr = &nw->goals[gi];
        if (!gr->live || gr->T) continue;
        int32_t n = goal_seeds(nw, &gr->def, NULL, NULL, 0, &gr->offset);
        if (n == 0) {
            w->reserve_status =
                world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                           "%s: nav goal %d (%s at (%g, %g)) has no walkable cell: it lies within the "
                           "clearance %g m of a wall or obstacle%s",
                           where, (int)gi, kind_article(gr->def.kind), (double)gr->def.points[0][0],
                           (double)gr->def.points[0][1], (double)p->clearance,
                           p->bounds[2] > p->bounds[0] ? ", or outside the nav bounds" : "");
            return 0;
        }
        gr->seed = mem_alloc(&w->alloc, (size_t)n * sizeof *gr->seed);
        gr->seed_time = mem_alloc(&w->alloc, (size_t)n * sizeof *gr->seed_time);
        gr->seed_count = n;
        gr->T = mem_alloc(&w->alloc, cells * sizeof *gr->T);
        if (!gr->seed || !gr->seed_time || !gr->T) {
            free_goal_derived(w, gr, cells);
            goto fail;
        }
        goal_seeds(nw, &gr->def, gr->seed, gr->seed_time, n, &gr->offset);
        gr->solved = 0;
    }
    nw->built_valid = 1;
    nw->built_goals = nw->goals_version;
    return 1;
fail:
    free_derived(w, nw);
    w->reserve_status =
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for the nav grid of %d x %d cells", where,
                   (int)b.nx, (int)b.ny);
    return 0;
}

static int nav_reserve_step(world_t* w)
{
    nav_world_t* nw = nav_of(w);
    if (nw->live_goals == 0) {
        if (nw->built_valid || nw->grid.blocked) free_derived(w, nw);
        return 1;
    }
    if (nav_current(w)) return 1;
    return nav_build(w, "step");
}

/* ---- the solve ------------------------------------------------------------- */

typedef struct solve_ctx_t {
    nav_world_t* nw;
    const int32_t* todo;
} solve_ctx_t;

static void solve_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const solve_ctx_t* c = (const solve_ctx_t*)vctx;
    nav_world_t* nw = c->nw;
    const float* speed = nw->density_valid ? nw->speed_dyn : nw->speed;
    for (int32_t k = begin; k < end; ++k) {
        nav_goal_rec_t* g = &nw->goals[c->todo[k]];
        g->solve_status = nav_field_solve(&nw->grid, speed, g->seed, g->seed_time, g->seed_count, g->T);
        g->solved = g->solve_status == SHOAL_OK;
    }
}

/* Whether this step solves the fields again for congestion. */
static int density_due(const world_t* w)
{
    const nav_world_t* nw = nav_of(w);
    return nw->density != NULL &&
           (!nw->density_valid || w->step_count % (uint64_t)nw->params.density_interval == 0);
}

/* The Gaussian of the density (0.5 m), cut at 2 of it. */
#define NAV_DENSITY_SIGMA 0.5f
#define NAV_DENSITY_REACH 1.0f

/* Every agent's Gaussian, centred on its cell, summed into the density in
 * integers (any order gives the same sums); then the congested speed. */
static void density_update(world_t* w, nav_world_t* nw)
{
    const nav_grid_t* g = &nw->grid;
    const size_t cells = (size_t)g->nx * (size_t)g->ny;
    memset(nw->density, 0, cells * sizeof *nw->density);
    const float h = g->cell;
    int32_t reach = (int32_t)ceilf(NAV_DENSITY_REACH / h);
    const float norm = (float)NAV_DENSITY_ONE / (2.0f * 3.14159265f * NAV_DENSITY_SIGMA * NAV_DENSITY_SIGMA);
    const float* px = AGENT_F(w, AC_POS_X);
    const float* py = AGENT_F(w, AC_POS_Y);
    for (int32_t a = 0; a < w->agents.count; ++a) {
        int32_t c = nav_grid_cell_of(g, px[a], py[a]);
        if (c < 0) continue;
        int32_t i0 = c % g->nx, j0 = c / g->nx;
        for (int32_t dj = -reach; dj <= reach; ++dj) {
            int32_t j = j0 + dj;
            if (j < 0 || j >= g->ny) continue;
            for (int32_t di = -reach; di <= reach; ++di) {
                int32_t i = i0 + di;
                if (i < 0 || i >= g->nx) continue;
                float d2 = h * h * (float)(di * di + dj * dj);
                if (d2 > NAV_DENSITY_REACH * NAV_DENSITY_REACH) continue;
                nw->density[j * g->nx + i] +=
                    (int32_t)(norm * expf(-d2 / (2.0f * NAV_DENSITY_SIGMA * NAV_DENSITY_SIGMA)) + 0.5f);
            }
        }
    }
    nw->density_valid = 1;
}

static void congested_speed(nav_world_t* nw)
{
    const size_t cells = (size_t)nw->grid.nx * (size_t)nw->grid.ny;
    const float k = nw->params.density_weight / (float)NAV_DENSITY_ONE;
    for (size_t c = 0; c < cells; ++c) nw->speed_dyn[c] = nw->speed[c] / (1.0f + k * (float)nw->density[c]);
}

int nav_fields_idle(const world_t* w)
{
    const nav_world_t* nw = nav_of(w);
    if (!nw->built_valid) return 1;
    if (density_due(w)) return 0;
    for (int32_t g = 0; g < nw->goal_high; ++g)
        if (nw->goals[g].live && !nw->goals[g].solved) return 0;
    return 1;
}

int64_t nav_fields_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    nav_world_t* nw = nav_of(w);
    if (!nw->built_valid) return 0;
    if (density_due(w)) {
        density_update(w, nw);
        for (int32_t g = 0; g < nw->goal_high; ++g) nw->goals[g].solved = 0;
    }
    if (nw->density_valid) congested_speed(nw);
    int32_t n = 0;
    for (int32_t g = 0; g < nw->goal_high; ++g) n += nw->goals[g].live && !nw->goals[g].solved;
    if (n == 0) return 0;
    int32_t* todo = mem_alloc(&w->alloc, (size_t)n * sizeof *todo);
    if (!todo)
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "nav_fields: out of memory for %d goals", (int)n);
    n = 0;
    for (int32_t g = 0; g < nw->goal_high; ++g)
        if (nw->goals[g].live && !nw->goals[g].solved) todo[n++] = g;
    solve_ctx_t c = {nw, todo};
    par_for(w, n, 1, PAR_CLAIMED | PAR_TASKS, solve_range, &c);
    int64_t done = n;
    for (int32_t k = 0; k < n; ++k) {
        const nav_goal_rec_t* g = &nw->goals[todo[k]];
        if (g->solve_status != SHOAL_OK) {
            done = world_fail(w, g->solve_status, "nav_fields: the field of goal %d: out of memory",
                              (int)todo[k]);
            break;
        }
    }
    mem_free(&w->alloc, todo, (size_t)n * sizeof *todo);
    nw->fields_revision++;
    return done;
}

void nav_fields_view(const world_t* w, nav_fields_view_t* out)
{
    const nav_world_t* nw = nav_of(w);
    memset(out, 0, sizeof *out);
    out->revision = nw->fields_revision;
    out->goals = nw->goals;
    out->goal_high = nw->goal_high;
    if (nw->live_goals == 0 && !nw->built_valid) {
        out->current = 1;
        return;
    }
    out->current = nav_current(w);
    for (int32_t g = 0; out->current && g < nw->goal_high; ++g)
        if (nw->goals[g].live && !nw->goals[g].solved) out->current = 0;
    if (nw->built_valid) out->grid = &nw->grid;
}

/* ---- navigate -------------------------------------------------------------- */

/* The goal an agent heads for: its journey's stage's, else its own. */
static inline int32_t agent_goal(const nav_world_t* nw, int32_t goal, int32_t journey, int32_t stage)
{
    if (journey < 0) return goal;
    if (journey >= nw->journey_count || stage < 0 || stage >= nw->journeys[journey].def.count) return -1;
    return nw->journeys[journey].def.stages[stage].goal;
}

typedef struct navigate_ctx_t {
    world_t* w;
    agent_view_t a;
    const nav_world_t* nw;
    const int32_t *agent_row, *goal, *journey, *stage;
    const float *weight, *arrive;
    int32_t* status;
    float *remaining, *delay;
    float dt;
    const component_t* crowd; /* the crowd agents' preferred speed, for zones */
    const float* pref_speed;
} navigate_ctx_t;

/* A start delay's seconds left below this share of the step count as
 * none: the float sum of the steps must not keep an agent one step more. */
#define NAV_DELAY_SNAP 0.01f

/* An agent deep in a wall's clearance, where no corner of its square of
 * cells is walkable (the field has no gradient there): the direction to
 * the nearest walkable cell with a way to the goal, within NAV_OUT_CELLS
 * cells (ties: the lower field). 0 when there is none. */
#define NAV_OUT_CELLS 8
static int way_out(const nav_grid_t* g, const float* T, float x, float y, float dir[2])
{
    int32_t c0 = nav_grid_cell_of(g, x, y);
    if (c0 < 0) return 0;
    int32_t i0 = c0 % g->nx, j0 = c0 / g->nx;
    float best = INFINITY, best_t = INFINITY, bx = 0.0f, by = 0.0f;
    for (int32_t j = j0 - NAV_OUT_CELLS; j <= j0 + NAV_OUT_CELLS; ++j) {
        if (j < 0 || j >= g->ny) continue;
        for (int32_t i = i0 - NAV_OUT_CELLS; i <= i0 + NAV_OUT_CELLS; ++i) {
            if (i < 0 || i >= g->nx) continue;
            int32_t c = j * g->nx + i;
            if (g->blocked[c] || !isfinite(T[c])) continue;
            float cx, cy;
            nav_grid_center(g, i, j, &cx, &cy);
            float d = (cx - x) * (cx - x) + (cy - y) * (cy - y);
            if (d < best || (d == best && T[c] < best_t)) {
                best = d;
                best_t = T[c];
                bx = cx;
                by = cy;
            }
        }
    }
    if (!(best > 0.0f) || !isfinite(best)) return 0;
    float e = sqrtf(best);
    dir[0] = (bx - x) / e;
    dir[1] = (by - y) / e;
    return 1;
}

/* The descent where the four cell centers round (x, y) all have a way to
 * the goal (blocked cells have none): the bilinear interpolant's gradient,
 * as nav_field_gradient gives it there, without its cases for walls. 0
 * elsewhere, or where the gradient vanishes: the caller asks
 * nav_field_gradient. Most agents of a crowd stand in such squares. */
static inline int open_gradient(const nav_grid_t* g, const float* T, float x, float y, float dir[2])
{
    const float inv_h = 1.0f / g->cell;
    float u = (x - g->origin[0]) * inv_h - 0.5f, v = (y - g->origin[1]) * inv_h - 0.5f;
    float fu = floorf(u), fv = floorf(v);
    if (!(fu >= 0.0f && fv >= 0.0f && fu < (float)(g->nx - 1) && fv < (float)(g->ny - 1))) return 0;
    int32_t c = (int32_t)fv * g->nx + (int32_t)fu;
    float t0 = T[c], t1 = T[c + 1], t2 = T[c + g->nx], t3 = T[c + g->nx + 1];
    if (!(t0 + t1 + t2 + t3 < INFINITY)) return 0;
    float fx = u - fu, fy = v - fv;
    float gx = (1.0f - fy) * (t1 - t0) + fy * (t3 - t2);
    float gy = (1.0f - fx) * (t2 - t0) + fx * (t3 - t1);
    float len2 = gx * gx + gy * gy;
    if (!(len2 > 1e-12f)) return 0;
    float inv = -1.0f / sqrtf(len2);
    dir[0] = gx * inv;
    dir[1] = gy * inv;
    return 1;
}

#define NAV_PREFETCH 16

static void navigate_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const navigate_ctx_t* c = (const navigate_ctx_t*)vctx;
    const nav_world_t* nw = c->nw;
    const nav_grid_t* grid = &nw->grid;
    const float h = grid->cell, inv_h = 1.0f / grid->cell;
    for (int32_t r = begin; r < end; ++r) {
        /* The field's cells an agent reads are a cache miss or two away
         * (the agents walk all over the grid): ask for those of the agent
         * NAV_PREFETCH rows on while this one is worked out. */
        if (r + NAV_PREFETCH < end) {
            int32_t pr = r + NAV_PREFETCH, pi = c->agent_row[pr];
            int32_t pg = agent_goal(nw, c->goal[pr], c->journey[pr], c->stage[pr]);
            /* the square of cell centers round it, as open_gradient reads it */
            float u = (c->a.px[pi] - grid->origin[0]) * inv_h - 0.5f,
                  v = (c->a.py[pi] - grid->origin[1]) * inv_h - 0.5f;
            if (pg >= 0 && pg < nw->goal_high && nw->goals[pg].T && u >= 0.0f && v >= 0.0f &&
                u < (float)(grid->nx - 1) && v < (float)(grid->ny - 1)) {
                const float* t = nw->goals[pg].T + (int32_t)v * grid->nx + (int32_t)u;
                __builtin_prefetch(t);
                __builtin_prefetch(t + grid->nx);
            }
        }
        int32_t i = c->agent_row[r], gi = agent_goal(nw, c->goal[r], c->journey[r], c->stage[r]);
        /* the start delay: the agent stands through the steps that begin
         * with some of it left, and it counts down by the step */
        const float wait = c->delay[r];
        if (wait > 0.0f) {
            float left = wait - c->dt;
            c->delay[r] = left > NAV_DELAY_SNAP * c->dt ? left : 0.0f;
        }
        c->status[r] = NAV_NO_WAY;
        c->remaining[r] = INFINITY;
        if (gi < 0 || gi >= nw->goal_high || !nw->goals[gi].live || !nw->goals[gi].solved) continue;
        const nav_goal_rec_t* g = &nw->goals[gi];
        const int kind = g->def.kind;
        const float x = c->a.px[i], y = c->a.py[i];
        int32_t cell = nav_grid_cell_of(grid, x, y);
        float dir[2] = {0.0f, 0.0f};
        float to_end;     /* how far along the field the agent's walk ends: a point, an area's middle */
        int straight = 0; /* head straight for the goal's nearest point */
        int status = NAV_MOVING;
        if (cell < 0) {
            status = NAV_OFF_GRID;
            straight = 1;
            to_end = goal_dist(&g->def, x, y) + g->offset;
        } else if (isfinite(g->T[cell]) || !grid->blocked[cell]) {
            /* a finite time: a walkable cell (blocked ones have none), so the
             * blocked flag is read only where the time is not finite */
            to_end = g->T[cell];
            if (!isfinite(to_end)) continue; /* no way */
            if (kind == SHOAL_NAV_POINT && to_end <= NAV_SEED_CELLS * h * 1.5f) {
                /* in sight of the point: straight at it, exactly */
                straight = 1;
                to_end = goal_dist(&g->def, x, y);
            } else if (!open_gradient(grid, g->T, x, y, dir) && !nav_field_gradient(grid, g->T, x, y, dir)) {
                dir[0] = dir[1] = 0.0f;                          /* at the field's bottom */
                if (to_end > g->offset + c->arrive[r]) continue; /* a pit with no way on */
            }
        } else {
            status = NAV_IN_WALLS;
            to_end = INFINITY;
            if (!nav_field_gradient(grid, g->T, x, y, dir) && !way_out(grid, g->T, x, y, dir)) {
                c->status[r] = NAV_IN_WALLS;
                continue;
            }
        }
        float remaining = fmaxf(0.0f, to_end - g->offset);
        if (remaining <= c->arrive[r]) status = NAV_ARRIVED;
        c->status[r] = status;
        c->remaining[r] = remaining;
        if (status == NAV_ARRIVED && kind == SHOAL_NAV_LINE) continue; /* on the line: done */
        if (wait > 0.0f) continue;                                     /* standing: its status only */
        if (straight) {
            float qx, qy;
            goal_nearest(&g->def, x, y, &qx, &qy);
            float ex = qx - x, ey = qy - y, e = hypotf(ex, ey);
            if (e > 0.0f) {
                dir[0] = ex / e;
                dir[1] = ey / e;
            }
        }
        /* a point and an area's middle are arrived at, slowing; a line is
         * crossed at speed */
        float vmax = c->a.max_speed[i], factor = 1.0f;
        if (nw->zone_factor) {
            factor = zone_factor_at(nw, cell, x, y);
            /* a crowd agent walks at its preferred speed where it has one:
             * the zone scales that */
            int32_t cr = factor != 1.0f ? component_row(c->crowd, table_slots(&c->w->agents)[i]) : -1;
            if (cr >= 0 && c->pref_speed[cr] > 0.0f) vmax = fminf(vmax, c->pref_speed[cr]);
        }
        float speed = vmax;
        if (kind != SHOAL_NAV_LINE && isfinite(to_end))
            speed = braking_speed(c->a.arrive_gain[i] * to_end, to_end, 0.0f, vmax, c->a.max_force[i],
                                  c->a.mass[i]);
        float k = c->weight[r] * speed * factor;
        c->a.dx[i] += k * dir[0];
        c->a.dy[i] += k * dir[1];
    }
}

int64_t navigate_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    const int k = COMP_NAV;
    int32_t count = w->comps[k].table.count;
    navigate_ctx_t c = {.w = w,
                        .a = agent_view(w),
                        .nw = nav_of(w),
                        .agent_row = COMP_I(w, k, COMP_ROW),
                        .goal = COMP_I(w, k, NV_GOAL),
                        .journey = COMP_I(w, k, NV_JOURNEY),
                        .stage = COMP_I(w, k, NV_STAGE),
                        .weight = COMP_F(w, k, NV_WEIGHT),
                        .arrive = COMP_F(w, k, NV_ARRIVE_DISTANCE),
                        .status = COMP_I(w, k, NV_STATUS),
                        .remaining = COMP_F(w, k, NV_REMAINING),
                        .delay = COMP_F(w, k, NV_DELAY),
                        .dt = dt,
                        .crowd = &w->comps[COMP_CROWD],
                        .pref_speed = COMP_F(w, COMP_CROWD, CR_PREFERRED_SPEED)};
    par_for(w, count, 512, PAR_STATIC, navigate_range, &c);
    return count;
}

/* ---- exits ------------------------------------------------------------------ */

int nav_exits_idle(const world_t* w)
{
    const nav_world_t* nw = nav_of(w);
    if (w->comps[COMP_NAV].table.count == 0) return 1;
    for (int32_t g = 0; g < nw->goal_high; ++g)
        if (nw->goals[g].live && nw->goals[g].def.exit) return 0;
    return 1;
}

int64_t nav_exits_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    if (nav_exits_idle(w)) return 0;
    nav_world_t* nw = nav_of(w);
    const int k = COMP_NAV;
    const int32_t rows = w->comps[k].table.count;
    const uint32_t* slot = COMP_U(w, k, 0);
    const int32_t* goal = COMP_I(w, k, NV_GOAL);
    const int32_t* journey = COMP_I(w, k, NV_JOURNEY);
    const int32_t* stage = COMP_I(w, k, NV_STAGE);
    const int32_t* status = COMP_I(w, k, NV_STATUS);
    int64_t left = 0;
    for (int32_t r = 0; r < rows; ++r) {
        int32_t g = agent_goal(nw, goal[r], journey[r], stage[r]);
        if (status[r] != NAV_ARRIVED || g < 0 || g >= nw->goal_high || !nw->goals[g].live ||
            !nw->goals[g].def.exit)
            continue;
        shoal_agent_t id = {
            .index1 = slot[r] + 1, .world0 = w->tag, .generation = w->slots[slot[r]].generation};
        if (w->slots[slot[r]].remove_queued) continue; /* the user removes it already */
        shoal_status_t st = shoal_agent_remove(w, id);
        if (st != SHOAL_OK) return st;
        nw->goals[g].exited++;
        left++;
    }
    return left;
}

static shoal_status_t nav_entry(world_t* w, const char* where);

/* ---- journeys ---------------------------------------------------------------- */

int nav_journeys_idle(const world_t* w)
{
    return nav_of(w)->journey_count == 0 || w->comps[COMP_NAV].table.count == 0;
}

/* The travel time from (x, y) to goal g: its field at the point's cell,
 * straight-line outside the grid; INFINITY with no way. */
static float time_to(const nav_world_t* nw, int32_t g, float x, float y)
{
    if (g < 0 || g >= nw->goal_high || !nw->goals[g].live || !nw->goals[g].solved) return INFINITY;
    const nav_goal_rec_t* gr = &nw->goals[g];
    int32_t cell = nav_grid_cell_of(&nw->grid, x, y);
    if (cell < 0) return goal_dist(&gr->def, x, y);
    return fmaxf(0.0f, gr->T[cell] - gr->offset);
}

/* The next stage after stage s of journey j for an agent at (x, y). */
static int32_t next_stage(nav_world_t* nw, int32_t j, int32_t s, float x, float y)
{
    nav_journey_rec_t* jr = &nw->journeys[j];
    const shoal_journey_stage_t* st = &jr->def.stages[s];
    switch (st->transition) {
    case SHOAL_TRANSITION_FIXED: return st->next[0];
    case SHOAL_TRANSITION_ROUND_ROBIN: {
        int64_t round = 0;
        for (int32_t k = 0; k < st->next_count; ++k) round += st->next_weight[k];
        int64_t at = jr->sent[s]++ % round;
        for (int32_t k = 0; k < st->next_count; ++k) {
            if (at < st->next_weight[k]) return st->next[k];
            at -= st->next_weight[k];
        }
        return st->next[st->next_count - 1];
    }
    case SHOAL_TRANSITION_QUICKEST: {
        int32_t best = st->next[0];
        float best_t = INFINITY;
        for (int32_t k = 0; k < st->next_count; ++k) {
            float t = time_to(nw, jr->def.stages[st->next[k]].goal, x, y);
            if (t < best_t) {
                best_t = t;
                best = st->next[k];
            }
        }
        return best;
    }
    default: return -1; /* END */
    }
}

int64_t nav_journeys_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    if (nav_journeys_idle(w)) return 0;
    nav_world_t* nw = nav_of(w);
    const int k = COMP_NAV;
    const int32_t rows = w->comps[k].table.count;
    const int32_t* agent_row = COMP_I(w, k, COMP_ROW);
    const int32_t* journey = COMP_I(w, k, NV_JOURNEY);
    int32_t* status = COMP_I(w, k, NV_STATUS);
    int32_t* stage = COMP_I(w, k, NV_STAGE);
    float* waited = COMP_F(w, k, NV_WAITED);
    const float* px = AGENT_F(w, AC_POS_X);
    const float* py = AGENT_F(w, AC_POS_Y);
    int64_t moved = 0;
    for (int32_t r = 0; r < rows; ++r) {
        int32_t j = journey[r];
        if (j < 0 || j >= nw->journey_count || status[r] != NAV_ARRIVED) continue;
        const shoal_journey_stage_t* st = &nw->journeys[j].def.stages[stage[r]];
        int32_t g = st->goal;
        if (g >= 0 && g < nw->goal_high && nw->goals[g].def.exit) continue; /* leaves there */
        if (st->transition == SHOAL_TRANSITION_END) continue;
        waited[r] += dt;
        if (waited[r] < st->wait) continue;
        int32_t i = agent_row[r];
        int32_t next = next_stage(nw, j, stage[r], px[i], py[i]);
        if (next < 0) continue;
        stage[r] = next;
        waited[r] = 0.0f;
        status[r] = NAV_MOVING; /* arrived at the last stage's goal, not at this one's */
        moved++;
    }
    return moved;
}

static shoal_status_t check_journey(world_t* w, const char* where, const shoal_journey_t* jy)
{
    if (jy->count < 1 || jy->count > SHOAL_JOURNEY_STAGES)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: count must be 1 to %d stages, got %d", where,
                          SHOAL_JOURNEY_STAGES, (int)jy->count);
    const nav_world_t* nw = nav_of(w);
    for (int32_t s = 0; s < jy->count; ++s) {
        const shoal_journey_stage_t* st = &jy->stages[s];
        if (st->goal < 0 || st->goal >= nw->goal_high || !nw->goals[st->goal].live)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: stages[%d].goal must be a live nav goal of this world, got %d", where,
                              (int)s, (int)st->goal);
        if (!(isfinite(st->wait) && st->wait >= 0.0f))
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: stages[%d].wait must be a finite value >= 0, got %g", where, (int)s,
                              (double)st->wait);
        if (st->transition < SHOAL_TRANSITION_END || st->transition > SHOAL_TRANSITION_QUICKEST)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: stages[%d].transition must be 0 (end), 1 (fixed), 2 (round robin) or 3 "
                              "(quickest), got %d",
                              where, (int)s, (int)st->transition);
        int32_t lo = st->transition == SHOAL_TRANSITION_END ? 0 : 1;
        int32_t hi = st->transition == SHOAL_TRANSITION_END     ? 0
                     : st->transition == SHOAL_TRANSITION_FIXED ? 1
                                                                : SHOAL_JOURNEY_NEXT;
        if (st->next_count < lo || st->next_count > hi)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: stages[%d].next_count must be %d to %d, got %d", where, (int)s, (int)lo,
                              (int)hi, (int)st->next_count);
        for (int32_t k = 0; k < st->next_count; ++k) {
            if (st->next[k] < 0 || st->next[k] >= jy->count)
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "%s: stages[%d].next[%d] must be a stage of the journey (0 to %d), got %d",
                                  where, (int)s, (int)k, (int)jy->count - 1, (int)st->next[k]);
            if (st->transition == SHOAL_TRANSITION_ROUND_ROBIN &&
                (st->next_weight[k] < 1 || st->next_weight[k] > 1000000))
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "%s: stages[%d].next_weight[%d] must be 1 to 1000000, got %d", where,
                                  (int)s, (int)k, (int)st->next_weight[k]);
        }
    }
    return SHOAL_OK;
}

static int grow_journeys(world_t* w, nav_world_t* nw, int32_t need)
{
    if (need <= nw->journey_capacity) return 1;
    int32_t cap = nw->journey_capacity ? nw->journey_capacity * 2 : 4;
    while (cap < need) cap *= 2;
    nav_journey_rec_t* j = mem_calloc(&w->alloc, (size_t)cap * sizeof *j);
    if (!j) return 0;
    if (nw->journey_count) memcpy(j, nw->journeys, (size_t)nw->journey_count * sizeof *j);
    mem_free(&w->alloc, nw->journeys, (size_t)nw->journey_capacity * sizeof *j);
    nw->journeys = j;
    nw->journey_capacity = cap;
    return 1;
}

shoal_status_t shoal_world_add_journey(shoal_world_t* w, const shoal_journey_t* journey, int32_t* out_id)
{
    static const char* where = "world_add_journey";
    if (out_id) *out_id = -1;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, journey, where, "journey");
    shoal_status_t st = nav_entry(w, where);
    if (st == SHOAL_OK) st = check_journey(w, where, journey);
    if (st != SHOAL_OK) return st;
    nav_world_t* nw = nav_of(w);
    if (nw->journey_count >= SHOAL_MAX_JOURNEYS)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: %d journeys, the most a world takes", where,
                          SHOAL_MAX_JOURNEYS);
    if (!grow_journeys(w, nw, nw->journey_count + 1))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for a journey", where);
    nav_journey_rec_t* jr = &nw->journeys[nw->journey_count];
    memset(jr, 0, sizeof *jr);
    jr->def.count = journey->count;
    for (int32_t s = 0; s < journey->count; ++s) {
        shoal_journey_stage_t stg = journey->stages[s];
        for (int32_t k = stg.next_count; k < SHOAL_JOURNEY_NEXT; ++k) stg.next[k] = stg.next_weight[k] = 0;
        if (stg.transition != SHOAL_TRANSITION_ROUND_ROBIN)
            for (int32_t k = 0; k < SHOAL_JOURNEY_NEXT; ++k) stg.next_weight[k] = 0;
        jr->def.stages[s] = stg;
    }
    if (out_id) *out_id = nw->journey_count;
    nw->journey_count++;
    return SHOAL_OK;
}

int32_t shoal_world_journey_count(const shoal_world_t* w) { return w ? nav_of(w)->journey_count : 0; }

shoal_status_t shoal_agent_get_nav_state(const shoal_world_t* w, shoal_agent_t id, shoal_nav_agent_t* out)
{
    static const char* where = "agent_get_nav_state";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out is NULL", where);
    int32_t slot = world_resolve(w, id, 0, where);
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    int32_t r = component_row(&w->comps[COMP_NAV], (uint32_t)slot);
    if (r < 0) return world_failc(w, SHOAL_ERR_NOT_FOUND, "%s: the agent does not navigate", where);
    const nav_world_t* nw = nav_of(w);
    const int k = COMP_NAV;
    int32_t j = COMP_I(w, k, NV_JOURNEY)[r];
    out->stage = j >= 0 ? COMP_I(w, k, NV_STAGE)[r] : -1;
    out->goal = agent_goal(nw, COMP_I(w, k, NV_GOAL)[r], j, COMP_I(w, k, NV_STAGE)[r]);
    out->status = COMP_I(w, k, NV_STATUS)[r];
    out->remaining = COMP_F(w, k, NV_REMAINING)[r];
    out->waited = COMP_F(w, k, NV_WAITED)[r];
    out->delay = COMP_F(w, k, NV_DELAY)[r];
    return SHOAL_OK;
}

/* ---- the component --------------------------------------------------------- */

static void nav_defaults(shoal_agent_def_t* d) { d->nav = shoal_nav_default(); }

static int nav_needs(const shoal_agent_def_t* d) { return d->weights[SHOAL_BEHAVIOR_NAVIGATE] != 0.0f; }

static const column_def_t nav_columns[NV_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [NV_WEIGHT] = COLUMN_WEIGHT("weights[navigate]", SHOAL_BEHAVIOR_NAVIGATE),
    [NV_GOAL] = COLUMN_INT_IN("nav.goal", nav.goal, -1.0f, (float)(SHOAL_MAX_NAV_GOALS - 1), "-1 to 4095"),
    [NV_ARRIVE_DISTANCE] = COLUMN_AT_LEAST("nav.arrive_distance", nav.arrive_distance, 0.0),
    [NV_JOURNEY] =
        COLUMN_INT_IN("nav.journey", nav.journey, -1.0f, (float)(SHOAL_MAX_JOURNEYS - 1), "-1 to 1023"),
    [NV_STAGE] = COLUMN_STATE_I32("stage"),
    [NV_WAITED] = COLUMN_STATE_F32("waited"),
    [NV_STATUS] = {.name = "status",
                   .field = COLUMN_NO_FIELD,
                   .type = COLUMN_I32,
                   .flags = COLUMN_BITS | COLUMN_NOT_STATE},
    [NV_REMAINING] = {.name = "remaining",
                      .field = COLUMN_NO_FIELD,
                      .type = COLUMN_F32,
                      .flags = COLUMN_BITS | COLUMN_NOT_STATE},
    [NV_DELAY] = {.name = "start_delay",
                  .field = COLUMN_NO_FIELD,
                  .type = COLUMN_F32,
                  .flags = COLUMN_HASH_NONZERO,
                  .since = 10},
};

/* The goal of a navigating agent: one of this world's (a removed one
 * gives no direction); a new agent's must be live (nav_validate_add). */
static shoal_status_t nav_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    shoal_status_t st = columns_check(w, d, where, nav_columns, NV_COUNT_);
    if (st != SHOAL_OK) return st;
    if (!def_check_min(w, where, "nav.start_delay", d->nav.start_delay, 0.0f, 0))
        return SHOAL_ERR_INVALID_ARGUMENT;
    if (d->weights[SHOAL_BEHAVIOR_NAVIGATE] == 0.0f) return SHOAL_OK;
    if (w->dims != 2)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: weights[navigate]: navigation fields are 2D, this world is 3D", where);
    const nav_world_t* nw = nav_of(w);
    int32_t g = d->nav.goal;
    if (d->nav.journey >= nw->journey_count)
        return world_fail(
            w, SHOAL_ERR_INVALID_ARGUMENT,
            "%s: nav.journey must be -1 or a journey of this world (shoal_world_add_journey), got %d (%d "
            "journeys)",
            where, (int)d->nav.journey, (int)nw->journey_count);
    if (d->nav.journey < 0 && (g < 0 || g >= nw->goal_high))
        return world_fail(
            w, SHOAL_ERR_INVALID_ARGUMENT,
            "%s: nav.goal must be a nav goal of this world (shoal_world_add_nav_goal), got %d (%d "
            "goals added)",
            where, (int)g, (int)nw->goal_high);
    return SHOAL_OK;
}

static shoal_status_t nav_validate_add(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    const nav_world_t* nw = nav_of(w);
    int32_t g = d->nav.goal;
    if (d->weights[SHOAL_BEHAVIOR_NAVIGATE] != 0.0f && d->nav.journey < 0 && g >= 0 && g < nw->goal_high &&
        !nw->goals[g].live)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: nav.goal %d was removed", where, (int)g);
    return SHOAL_OK;
}

static void nav_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                          int fresh)
{
    (void)slot;
    (void)forward;
    /* a new journey starts at its first stage */
    int restart = fresh || COMP_I(w, COMP_NAV, NV_JOURNEY)[r] != d->nav.journey;
    columns_write(w, COMP_NAV, r, d, nav_columns, NV_COUNT_);
    /* "stand this long from now", whatever was left */
    COMP_F(w, COMP_NAV, NV_DELAY)[r] = d->nav.start_delay;
    if (restart) {
        COMP_I(w, COMP_NAV, NV_STAGE)[r] = 0;
        COMP_F(w, COMP_NAV, NV_WAITED)[r] = 0.0f;
    }
    if (fresh) {
        COMP_I(w, COMP_NAV, NV_STATUS)[r] = NAV_MOVING;
        COMP_F(w, COMP_NAV, NV_REMAINING)[r] = INFINITY;
    }
}

static void nav_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_NAV, r, d, nav_columns, NV_COUNT_);
    d->nav.start_delay = COMP_F(w, COMP_NAV, NV_DELAY)[r];
}

static void edit_nav(shoal_agent_def_t* d, const void* a) { d->nav = *(const shoal_nav_t*)a; }

shoal_status_t shoal_agent_set_nav(shoal_world_t* w, shoal_agent_t id, const shoal_nav_t* nav)
{
    REQUIRE_PTR(w, nav, "agent_set_nav", "nav");
    return agent_edit(w, id, "agent_set_nav", edit_nav, nav, AGENT_EDIT_COMPONENT(COMP_NAV));
}

/* ---- the API --------------------------------------------------------------- */

static shoal_status_t check_params(world_t* w, const char* where, const shoal_nav_params_t* p)
{
    if (!def_check_min(w, where, "cell", p->cell, 0.0f, 1)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_min(w, where, "clearance", p->clearance, 0.0f, 0)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_min(w, where, "wall_distance", p->wall_distance, 0.0f, 0))
        return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_min(w, where, "margin", p->margin, 0.0f, 0)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_coordinates(w, where, "bounds", p->bounds, 4)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (p->clearance < 0.5f * p->cell)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: clearance %g m is below half the cell (%g m): a wall could leak between cells",
                          where, (double)p->clearance, (double)(0.5f * p->cell));
    if (!(p->wall_speed > 0.0f && p->wall_speed <= 1.0f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: wall_speed must be in (0, 1], got %g", where,
                          (double)p->wall_speed);
    int any = p->bounds[0] != 0.0f || p->bounds[1] != 0.0f || p->bounds[2] != 0.0f || p->bounds[3] != 0.0f;
    if (any && !(p->bounds[2] > p->bounds[0] && p->bounds[3] > p->bounds[1]))
        return world_fail(
            w, SHOAL_ERR_INVALID_ARGUMENT,
            "%s: bounds must be x0, y0, x1, y1 with x1 > x0 and y1 > y0 (or all 0), got %g, %g, "
            "%g, %g",
            where, (double)p->bounds[0], (double)p->bounds[1], (double)p->bounds[2], (double)p->bounds[3]);
    if (!def_check_min(w, where, "density_weight", p->density_weight, 0.0f, 0))
        return SHOAL_ERR_INVALID_ARGUMENT;
    if (p->density_interval < 1 || p->density_interval > 1000000)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: density_interval must be 1 to 1000000 steps, got %d", where,
                          (int)p->density_interval);
    if (!(p->max_bytes > 0.0 && p->max_bytes <= 1e18))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: max_bytes must be in (0, 1e18], got %g", where,
                          p->max_bytes);
    return SHOAL_OK;
}

static shoal_status_t nav_entry(world_t* w, const char* where)
{
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (w->dims != 2)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: navigation fields are 2D, this world is 3D",
                          where);
    return SHOAL_OK;
}

shoal_status_t shoal_world_set_nav(shoal_world_t* w, const shoal_nav_params_t* params)
{
    static const char* where = "world_set_nav";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, params, where, "params");
    shoal_status_t st = nav_entry(w, where);
    if (st == SHOAL_OK) st = check_params(w, where, params);
    if (st != SHOAL_OK) return st;
    nav_world_t* nw = nav_of(w);
    if (nw->live_goals > 0) {
        nav_box_t b = nav_box(w, params, NULL, nw->live_goals);
        st = box_check(w, where, params, &b, nw->live_goals);
        if (st != SHOAL_OK) return st;
    }
    nw->params = *params;
    nw->params_version++;
    return SHOAL_OK;
}

shoal_status_t shoal_world_get_nav(const shoal_world_t* w, shoal_nav_params_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "world_get_nav: out is NULL");
    *out = nav_of(w)->params;
    return SHOAL_OK;
}

static shoal_status_t check_goal(world_t* w, const char* where, const shoal_nav_goal_t* g)
{
    if (g->kind < SHOAL_NAV_POINT || g->kind > SHOAL_NAV_AREA)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: kind must be 0 (point), 1 (line) or 2 (area), got %d", where, (int)g->kind);
    int32_t lo = g->kind == SHOAL_NAV_POINT ? 1 : g->kind == SHOAL_NAV_LINE ? 2 : 3;
    int32_t hi = g->kind == SHOAL_NAV_POINT ? 1 : SHOAL_NAV_GOAL_POINTS;
    if (g->count < lo || g->count > hi || (g->kind == SHOAL_NAV_LINE && g->count % 2 != 0))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: a %s goal has %d to %d points%s, got count %d",
                          where, kind_name(g->kind), (int)lo, (int)hi,
                          g->kind == SHOAL_NAV_LINE ? " (two a segment)" : "", (int)g->count);
    for (int32_t k = 0; k < g->count; ++k) {
        char field[32];
        snprintf(field, sizeof field, "points[%d]", (int)k);
        if (!def_check_coordinates(w, where, field, g->points[k], 2)) return SHOAL_ERR_INVALID_ARGUMENT;
    }
    for (int32_t k = 0; g->kind == SHOAL_NAV_LINE && k + 1 < g->count; k += 2)
        if (g->points[k][0] == g->points[k + 1][0] && g->points[k][1] == g->points[k + 1][1])
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: a line goal's segment %d has two equal points (a zero length)", where,
                              (int)(k / 2));
    if (g->exit != 0 && g->exit != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: exit must be 0 or 1, got %d", where,
                          (int)g->exit);
    if (g->kind == SHOAL_NAV_AREA && !(polygon_area(g) > 0.0))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: an area goal's polygon has zero area", where);
    return SHOAL_OK;
}

static int grow_goals(world_t* w, nav_world_t* nw, int32_t need)
{
    if (need <= nw->goal_capacity) return 1;
    int32_t cap = nw->goal_capacity ? nw->goal_capacity : 8;
    while (cap < need) cap *= 2;
    if (cap > SHOAL_MAX_NAV_GOALS) cap = SHOAL_MAX_NAV_GOALS;
    nav_goal_rec_t* g = mem_calloc(&w->alloc, (size_t)cap * sizeof *g);
    if (!g) return 0;
    if (nw->goal_high) memcpy(g, nw->goals, (size_t)nw->goal_high * sizeof *g);
    mem_free(&w->alloc, nw->goals, (size_t)nw->goal_capacity * sizeof *g);
    nw->goals = g;
    nw->goal_capacity = cap;
    return 1;
}

/* A goal with no walkable cell is refused here when the grid built is the
 * one the world with it would have (after a step or nav_update with the
 * same walls); else the next step (or nav_update) refuses it. */
static shoal_status_t check_goal_cells(world_t* w, const char* where, const shoal_nav_goal_t* goal)
{
    nav_world_t* nw = nav_of(w);
    nav_box_t b = nav_box(w, &nw->params, goal, nw->live_goals + 1);
    float offset;
    if (!geometry_current(w, &b) || goal_seeds(nw, goal, NULL, NULL, 0, &offset) > 0) return SHOAL_OK;
    return world_fail(
        w, SHOAL_ERR_INVALID_ARGUMENT,
        "%s: the %s goal at (%g, %g) has no walkable cell: it lies within the clearance %g m of "
        "a wall or obstacle%s",
        where, kind_name(goal->kind), (double)goal->points[0][0], (double)goal->points[0][1],
        (double)nw->params.clearance,
        nw->params.bounds[2] > nw->params.bounds[0] ? ", or outside the nav bounds" : "");
}

shoal_status_t shoal_world_add_nav_goal(shoal_world_t* w, const shoal_nav_goal_t* goal, int32_t* out_id)
{
    static const char* where = "world_add_nav_goal";
    if (out_id) *out_id = -1;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, goal, where, "goal");
    shoal_status_t st = nav_entry(w, where);
    if (st == SHOAL_OK) st = check_goal(w, where, goal);
    if (st != SHOAL_OK) return st;
    nav_world_t* nw = nav_of(w);
    if (nw->goal_high >= SHOAL_MAX_NAV_GOALS)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: %d goals were added, the most a world takes", where,
                          SHOAL_MAX_NAV_GOALS);
    nav_box_t b = nav_box(w, &nw->params, goal, nw->live_goals + 1);
    st = box_check(w, where, &nw->params, &b, nw->live_goals + 1);
    if (st != SHOAL_OK) return st;
    st = check_goal_cells(w, where, goal);
    if (st != SHOAL_OK) return st;
    if (!grow_goals(w, nw, nw->goal_high + 1))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for %d goals", where,
                          (int)nw->goal_high + 1);
    int32_t id = nw->goal_high;
    nav_goal_rec_t* gr = &nw->goals[id];
    memset(gr, 0, sizeof *gr);
    gr->def = *goal;
    for (int32_t k = goal->count; k < SHOAL_NAV_GOAL_POINTS; ++k)
        gr->def.points[k][0] = gr->def.points[k][1] = 0.0f;
    gr->live = 1;
    nw->goal_high++;
    nw->live_goals++;
    nw->goals_version++;
    if (out_id) *out_id = id;
    return SHOAL_OK;
}

shoal_status_t shoal_world_remove_nav_goal(shoal_world_t* w, int32_t id)
{
    static const char* where = "world_remove_nav_goal";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    shoal_status_t st = nav_entry(w, where);
    if (st != SHOAL_OK) return st;
    nav_world_t* nw = nav_of(w);
    if (id < 0 || id >= nw->goal_high || !nw->goals[id].live)
        return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: %d is not a live nav goal (%d added)", where, (int)id,
                          (int)nw->goal_high);
    free_goal_derived(w, &nw->goals[id], (size_t)nw->grid.nx * (size_t)nw->grid.ny);
    nw->goals[id].live = 0;
    nw->live_goals--;
    nw->goals_version++;
    return SHOAL_OK;
}

int32_t shoal_world_nav_goal_count(const shoal_world_t* w) { return w ? nav_of(w)->live_goals : 0; }

/* ---- speed zones ------------------------------------------------------------ */

shoal_nav_zone_t shoal_nav_zone_default(void)
{
    shoal_nav_zone_t z;
    memset(&z, 0, sizeof z);
    z.speed_factor = 1.0f;
    return z;
}

static shoal_status_t check_zone(world_t* w, const char* where, const shoal_nav_zone_t* z)
{
    if (z->count < 3 || z->count > SHOAL_NAV_ZONE_POINTS)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: a zone's polygon has 3 to %d points, got count %d", where,
                          SHOAL_NAV_ZONE_POINTS, (int)z->count);
    for (int32_t k = 0; k < z->count; ++k) {
        char field[32];
        snprintf(field, sizeof field, "points[%d]", (int)k);
        if (!def_check_coordinates(w, where, field, z->points[k], 2)) return SHOAL_ERR_INVALID_ARGUMENT;
    }
    if (!(points_area((const float(*)[2])z->points, z->count) > 0.0))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: the zone's polygon has zero area", where);
    if (!(z->speed_factor > 0.0f && z->speed_factor <= SHOAL_NAV_ZONE_MAX_FACTOR))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: speed_factor must be in (0, %g], got %g", where,
                          (double)SHOAL_NAV_ZONE_MAX_FACTOR, (double)z->speed_factor);
    return SHOAL_OK;
}

static int grow_zones(world_t* w, nav_world_t* nw, int32_t need)
{
    if (need <= nw->zone_capacity) return 1;
    int32_t cap = nw->zone_capacity ? nw->zone_capacity : 4;
    while (cap < need) cap *= 2;
    if (cap > SHOAL_MAX_NAV_ZONES) cap = SHOAL_MAX_NAV_ZONES;
    nav_zone_rec_t* z = mem_calloc(&w->alloc, (size_t)cap * sizeof *z);
    if (!z) return 0;
    if (nw->zone_high) memcpy(z, nw->zones, (size_t)nw->zone_high * sizeof *z);
    mem_free(&w->alloc, nw->zones, (size_t)nw->zone_capacity * sizeof *z);
    nw->zones = z;
    nw->zone_capacity = cap;
    return 1;
}

shoal_status_t shoal_world_add_nav_zone(shoal_world_t* w, const shoal_nav_zone_t* zone, int32_t* out_id)
{
    static const char* where = "world_add_nav_zone";
    if (out_id) *out_id = -1;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, zone, where, "zone");
    shoal_status_t st = nav_entry(w, where);
    if (st == SHOAL_OK) st = check_zone(w, where, zone);
    if (st != SHOAL_OK) return st;
    nav_world_t* nw = nav_of(w);
    if (nw->zone_high >= SHOAL_MAX_NAV_ZONES)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: %d zones were added, the most a world takes", where,
                          SHOAL_MAX_NAV_ZONES);
    if (nw->live_goals > 0 && nw->live_zones == 0) { /* the zones' factors now take memory too */
        nw->live_zones = 1;
        nav_box_t b = nav_box(w, &nw->params, NULL, nw->live_goals);
        nw->live_zones = 0;
        st = box_check(w, where, &nw->params, &b, nw->live_goals);
        if (st != SHOAL_OK) return st;
    }
    if (!grow_zones(w, nw, nw->zone_high + 1))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for %d zones", where,
                          (int)nw->zone_high + 1);
    int32_t id = nw->zone_high;
    nav_zone_rec_t* zr = &nw->zones[id];
    memset(zr, 0, sizeof *zr);
    zr->def = *zone;
    for (int32_t k = zone->count; k < SHOAL_NAV_ZONE_POINTS; ++k)
        zr->def.points[k][0] = zr->def.points[k][1] = 0.0f;
    zr->live = 1;
    nw->zone_high++;
    nw->live_zones++;
    nw->zones_version++;
    if (out_id) *out_id = id;
    return SHOAL_OK;
}

shoal_status_t shoal_world_remove_nav_zone(shoal_world_t* w, int32_t id)
{
    static const char* where = "world_remove_nav_zone";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    shoal_status_t st = nav_entry(w, where);
    if (st != SHOAL_OK) return st;
    nav_world_t* nw = nav_of(w);
    if (id < 0 || id >= nw->zone_high || !nw->zones[id].live)
        return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: %d is not a live nav zone (%d added)", where, (int)id,
                          (int)nw->zone_high);
    nw->zones[id].live = 0;
    nw->live_zones--;
    nw->zones_version++;
    return SHOAL_OK;
}

int32_t shoal_world_nav_zone_count(const shoal_world_t* w) { return w ? nav_of(w)->live_zones : 0; }

shoal_status_t shoal_world_nav_update(shoal_world_t* w)
{
    static const char* where = "world_nav_update";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    shoal_status_t st = nav_entry(w, where);
    if (st != SHOAL_OK) return st;
    w->reserve_status = SHOAL_ERR_OUT_OF_MEMORY;
    nav_world_t* nw = nav_of(w);
    if (nw->live_goals > 0 && !nav_current(w) && !nav_build(w, where)) return w->reserve_status;
    int64_t done = nav_fields_run(w, 0.0f, NULL);
    return done < 0 ? (shoal_status_t)done : SHOAL_OK;
}

shoal_status_t shoal_world_nav_grid(const shoal_world_t* w, shoal_nav_grid_info_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "world_nav_grid: out is NULL");
    const nav_world_t* nw = nav_of(w);
    memset(out, 0, sizeof *out);
    if (!nw->built_valid) return SHOAL_OK;
    out->origin[0] = nw->grid.origin[0];
    out->origin[1] = nw->grid.origin[1];
    out->cell = nw->grid.cell;
    out->nx = nw->grid.nx;
    out->ny = nw->grid.ny;
    out->blocked = nw->blocked;
    out->bytes = nav_bytes((double)nw->grid.nx * nw->grid.ny, nw->live_goals, 0,
                           nw->params.density_weight > 0.0f, nw->zone_factor != NULL);
    return SHOAL_OK;
}

shoal_status_t shoal_world_nav_field(const shoal_world_t* w, int32_t goal, float* out, int64_t capacity,
                                     int64_t* out_count)
{
    static const char* where = "world_nav_field";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out_count) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out_count is NULL", where);
    *out_count = 0;
    if (capacity < 0 || (capacity > 0 && !out))
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: capacity %lld with %s array", where,
                           (long long)capacity, out ? "an" : "no");
    const nav_world_t* nw = nav_of(w);
    if (goal < -1 || goal >= nw->goal_high || (goal >= 0 && !nw->goals[goal].live))
        return world_failc(w, SHOAL_ERR_NOT_FOUND, "%s: %d is not a live nav goal (or -1, the grid)", where,
                           (int)goal);
    if (!nav_current(w) || (goal >= 0 && !nw->goals[goal].solved))
        return world_failc(w, SHOAL_ERR_NOT_FOUND,
                           "%s: the fields are not solved since the last change: step, or call "
                           "shoal_world_nav_update",
                           where);
    int64_t cells = (int64_t)nw->grid.nx * nw->grid.ny;
    *out_count = cells;
    int64_t n = capacity < cells ? capacity : cells;
    for (int64_t c = 0; c < n; ++c) out[c] = goal < 0 ? (float)nw->grid.blocked[c] : nw->goals[goal].T[c];
    return SHOAL_OK;
}

shoal_status_t shoal_world_nav_stats(const shoal_world_t* w, int32_t goal, shoal_nav_stats_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "world_nav_stats: out is NULL");
    memset(out, 0, sizeof *out);
    const nav_world_t* nw = nav_of(w);
    if (goal < -1 || goal >= nw->goal_high)
        return world_failc(w, SHOAL_ERR_NOT_FOUND, "world_nav_stats: %d is not a nav goal (or -1, all)",
                           (int)goal);
    const int k = COMP_NAV;
    int32_t rows = w->comps[k].table.count;
    const int32_t* g = COMP_I(w, k, NV_GOAL);
    const int32_t* status = COMP_I(w, k, NV_STATUS);
    const float* remaining = COMP_F(w, k, NV_REMAINING);
    double sum = 0.0;
    int32_t summed = 0;
    for (int32_t gi = 0; gi < nw->goal_high; ++gi)
        if (goal < 0 || gi == goal) out->exited += nw->goals[gi].exited;
    for (int32_t r = 0; r < rows; ++r) {
        if (goal >= 0 && g[r] != goal) continue;
        out->agents++;
        switch (status[r]) {
        case NAV_ARRIVED: out->arrived++; break;
        case NAV_NO_WAY: out->no_way++; break;
        case NAV_OFF_GRID: out->off_grid++; break;
        case NAV_IN_WALLS: out->in_walls++; break;
        default: break;
        }
        if (status[r] != NAV_ARRIVED && isfinite(remaining[r])) {
            sum += remaining[r];
            summed++;
        }
    }
    out->mean_remaining = summed ? sum / summed : 0.0;
    return SHOAL_OK;
}

/* ---- the module's data: init, hash, rollback, snapshot ---------------------- */

static int nav_init(world_t* w)
{
    nav_world_t* nw = (nav_world_t*)mem_calloc(&w->alloc, sizeof *nw);
    w->module_data[MOD_NAV] = nw;
    if (!nw) return 0;
    nw->params = shoal_nav_params_default();
    return 1;
}

static void nav_release(world_t* w)
{
    nav_world_t* nw = nav_of(w);
    if (!nw) return;
    free_derived(w, nw);
    if (nw->loaded_density)
        mem_free(&w->alloc, nw->loaded_density,
                 (size_t)nw->loaded_nx * nw->loaded_ny * sizeof *nw->loaded_density);
    mem_free(&w->alloc, nw->goals, (size_t)nw->goal_capacity * sizeof *nw->goals);
    mem_free(&w->alloc, nw->journeys, (size_t)nw->journey_capacity * sizeof *nw->journeys);
    mem_free(&w->alloc, nw->zones, (size_t)nw->zone_capacity * sizeof *nw->zones);
    nav_sources_release(w);
    mem_free(&w->alloc, nw, sizeof *nw);
}


/* Nothing when no goal, source or zone was ever added, so worlds without
 * navigation hash as before it existed; else the parameters, every goal
 * slot, and the zone slots when a zone was ever added (worlds without
 * zones hash as before zones existed). */
static uint64_t nav_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb)
{
    const nav_world_t* nw = nav_of(w);
    if (nw->goal_high == 0 && nw->source_count == 0 && nw->zone_high == 0) return h;
    const shoal_nav_params_t* p = &nw->params;
    h = absorb(h, 0x6e61760000000000ull | (uint32_t)nw->goal_high);
    h = absorb(h, f32_bits(p->cell) << 32 | f32_bits(p->clearance));
    h = absorb(h, f32_bits(p->wall_distance) << 32 | f32_bits(p->wall_speed));
    h = absorb(h, f32_bits(p->bounds[0]) << 32 | f32_bits(p->bounds[1]));
    h = absorb(h, f32_bits(p->bounds[2]) << 32 | f32_bits(p->bounds[3]));
    uint64_t mb;
    memcpy(&mb, &p->max_bytes, sizeof mb);
    h = absorb(h, f32_bits(p->margin));
    h = absorb(h, mb);
    h = absorb(h, f32_bits(p->density_weight) << 32 | (uint32_t)p->density_interval);
    for (int32_t j = 0; j < nw->journey_count; ++j) {
        const nav_journey_rec_t* jr = &nw->journeys[j];
        h = absorb(h, 0x6a6f75726e657900ull | (uint32_t)jr->def.count);
        for (int32_t s = 0; s < jr->def.count; ++s) {
            const shoal_journey_stage_t* st = &jr->def.stages[s];
            h = absorb(h, (uint64_t)(uint32_t)st->goal << 32 | f32_bits(st->wait));
            h = absorb(h, (uint64_t)(uint32_t)st->transition << 32 | (uint32_t)st->next_count);
            for (int32_t k = 0; k < st->next_count; ++k)
                h = absorb(h, (uint64_t)(uint32_t)st->next[k] << 32 | (uint32_t)st->next_weight[k]);
            h = absorb(h, (uint64_t)jr->sent[s]);
        }
    }
    for (int32_t g = 0; g < nw->goal_high; ++g) {
        const nav_goal_rec_t* gr = &nw->goals[g];
        h = absorb(h, (uint64_t)(uint32_t)gr->live << 32 |
                          (uint32_t)(gr->def.exit << 24 | gr->def.kind << 16 | gr->def.count));
        h = absorb(h, (uint64_t)gr->exited);
        if (!gr->live) continue;
        for (int32_t k = 0; k < gr->def.count; ++k)
            h = absorb(h, f32_bits(gr->def.points[k][0]) << 32 | f32_bits(gr->def.points[k][1]));
    }
    if (nw->zone_high > 0) h = absorb(h, 0x7a6f6e6500000000ull | (uint32_t)nw->zone_high);
    for (int32_t z = 0; z < nw->zone_high; ++z) {
        const nav_zone_rec_t* zr = &nw->zones[z];
        h = absorb(h, (uint64_t)(uint32_t)zr->live << 32 | (uint32_t)zr->def.count);
        if (!zr->live) continue;
        h = absorb(h, f32_bits(zr->def.speed_factor));
        for (int32_t k = 0; k < zr->def.count; ++k)
            h = absorb(h, f32_bits(zr->def.points[k][0]) << 32 | f32_bits(zr->def.points[k][1]));
    }
    return nav_sources_hash(w, h, absorb);
}

static void nav_mark(const world_t* w, int64_t note[WORLD_MARK_WORDS])
{
    nav_world_t* nw = nav_of(w);
    note[0] = nw->goal_high;
    note[1] = nw->live_goals;
    note[2] = nw->journey_count;
    nw->marked_params = nw->params;
    nw->marked_sources = nw->source_count;
    nw->marked_zone_high = nw->zone_high;
    nw->marked_live_zones = nw->live_zones;
}

static void nav_rollback(world_t* w, const int64_t note[WORLD_MARK_WORDS])
{
    nav_world_t* nw = nav_of(w);
    free_derived(w, nw);
    nw->goal_high = (int32_t)note[0];
    nw->live_goals = (int32_t)note[1];
    nw->journey_count = (int32_t)note[2];
    nw->source_count = nw->marked_sources;
    nw->zone_high = nw->marked_zone_high;
    nw->live_zones = nw->marked_live_zones;
    nw->zones_version++;
    nw->params = nw->marked_params;
    nw->params_version++;
    nw->goals_version++;
}

/* Section NAVI: the parameters (f32 cell, clearance, wall_distance,
 * wall_speed, bounds[4], margin, f64 max_bytes), u32 goals, then per goal
 * u32 live, kind, count, exit, u64 agents exited, and count points (f32 x,
 * y). */
static void nav_save(const world_t* w, byte_writer_t* wr)
{
    const nav_world_t* nw = nav_of(w);
    const shoal_nav_params_t* p = &nw->params;
    bw_f32(wr, p->cell);
    bw_f32(wr, p->clearance);
    bw_f32(wr, p->wall_distance);
    bw_f32(wr, p->wall_speed);
    for (int k = 0; k < 4; ++k) bw_f32(wr, p->bounds[k]);
    bw_f32(wr, p->margin);
    bw_f64(wr, p->max_bytes);
    bw_f32(wr, p->density_weight);
    bw_i32(wr, p->density_interval);
    bw_u32(wr, (uint32_t)nw->goal_high);
    for (int32_t g = 0; g < nw->goal_high; ++g) {
        const nav_goal_rec_t* gr = &nw->goals[g];
        bw_i32(wr, gr->live);
        bw_i32(wr, gr->def.kind);
        bw_i32(wr, gr->def.count);
        bw_i32(wr, gr->def.exit);
        bw_u64(wr, (uint64_t)gr->exited);
        for (int32_t k = 0; k < gr->def.count; ++k) {
            bw_f32(wr, gr->def.points[k][0]);
            bw_f32(wr, gr->def.points[k][1]);
        }
    }
    bw_u32(wr, (uint32_t)nw->journey_count);
    for (int32_t j = 0; j < nw->journey_count; ++j) {
        const nav_journey_rec_t* jr = &nw->journeys[j];
        bw_i32(wr, jr->def.count);
        for (int32_t s = 0; s < jr->def.count; ++s) {
            const shoal_journey_stage_t* st = &jr->def.stages[s];
            bw_i32(wr, st->goal);
            bw_f32(wr, st->wait);
            bw_i32(wr, st->transition);
            bw_i32(wr, st->next_count);
            for (int32_t k = 0; k < SHOAL_JOURNEY_NEXT; ++k) {
                bw_i32(wr, st->next[k]);
                bw_i32(wr, st->next_weight[k]);
            }
            bw_u64(wr, (uint64_t)jr->sent[s]);
        }
    }
    nav_sources_save(w, wr);
    /* the congestion's density, so that a resumed run solves its fields
     * from the same one until the next update */
    int with = nw->density != NULL && nw->density_valid;
    bw_u32(wr, (uint32_t)with);
    if (with) {
        bw_i32(wr, nw->grid.nx);
        bw_i32(wr, nw->grid.ny);
        bw_words(wr, nw->density, nw->grid.nx * nw->grid.ny);
    }
    /* since version 10: the speed zones */
    bw_u32(wr, (uint32_t)nw->zone_high);
    for (int32_t z = 0; z < nw->zone_high; ++z) {
        const nav_zone_rec_t* zr = &nw->zones[z];
        bw_i32(wr, zr->live);
        bw_i32(wr, zr->def.count);
        bw_f32(wr, zr->def.speed_factor);
        for (int32_t k = 0; k < zr->def.count; ++k) {
            bw_f32(wr, zr->def.points[k][0]);
            bw_f32(wr, zr->def.points[k][1]);
        }
    }
}

static int nav_load(world_t* w, byte_reader_t* rd)
{
    nav_world_t* nw = nav_of(w);
    shoal_nav_params_t p;
    memset(&p, 0, sizeof p);
    p.cell = br_f32(rd);
    p.clearance = br_f32(rd);
    p.wall_distance = br_f32(rd);
    p.wall_speed = br_f32(rd);
    for (int k = 0; k < 4; ++k) p.bounds[k] = br_f32(rd);
    p.margin = br_f32(rd);
    p.max_bytes = br_f64(rd);
    p.density_weight = br_f32(rd);
    p.density_interval = br_i32(rd);
    uint32_t goals = br_u32(rd);
    if (rd->failed) return 0;
    if (!br_count(rd, goals, 24, SHOAL_MAX_NAV_GOALS, "nav goals")) return 0;
    if (goals > 0 && w->dims != 2) return br_fail(rd, "%u nav goals in a 3D world: navigation is 2D", goals);
    if (check_params(w, "nav", &p) != SHOAL_OK) return br_fail(rd, "%s", w->error);
    if (goals > 0 && !grow_goals(w, nw, (int32_t)goals))
        return br_fail(rd, "out of memory for %u nav goals", goals);
    int32_t live = 0;
    for (uint32_t g = 0; g < goals; ++g) {
        nav_goal_rec_t* gr = &nw->goals[g];
        memset(gr, 0, sizeof *gr);
        gr->live = br_i32(rd);
        gr->def.kind = br_i32(rd);
        gr->def.count = br_i32(rd);
        gr->def.exit = br_i32(rd);
        uint64_t exited = br_u64(rd);
        if (rd->failed) return 0;
        if (exited > (uint64_t)INT64_MAX)
            return br_fail(rd, "nav goal %u: %llu agents exited", g, (unsigned long long)exited);
        gr->exited = (int64_t)exited;
        if ((gr->live != 0 && gr->live != 1) || gr->def.count < 1 || gr->def.count > SHOAL_NAV_GOAL_POINTS)
            return br_fail(rd, "nav goal %u: live %d, count %d are not a goal's", g, (int)gr->live,
                           (int)gr->def.count);
        for (int32_t k = 0; k < gr->def.count; ++k) {
            gr->def.points[k][0] = br_f32(rd);
            gr->def.points[k][1] = br_f32(rd);
        }
        if (rd->failed) return 0;
        if (check_goal(w, "nav", &gr->def) != SHOAL_OK) return br_fail(rd, "nav goal %u: %s", g, w->error);
        live += gr->live;
    }
    /* goals first: the journeys' checks read them */
    nw->goal_high = (int32_t)goals;
    nw->live_goals = live;
    uint32_t journeys = br_u32(rd);
    if (rd->failed) return 0;
    if (!br_count(rd, journeys, 4, SHOAL_MAX_JOURNEYS, "journeys")) return 0;
    if (journeys > 0 && !grow_journeys(w, nw, (int32_t)journeys))
        return br_fail(rd, "out of memory for %u journeys", journeys);
    for (uint32_t j = 0; j < journeys; ++j) {
        nav_journey_rec_t* jr = &nw->journeys[j];
        memset(jr, 0, sizeof *jr);
        jr->def.count = br_i32(rd);
        if (rd->failed) return 0;
        if (jr->def.count < 1 || jr->def.count > SHOAL_JOURNEY_STAGES)
            return br_fail(rd, "journey %u: %d stages", j, (int)jr->def.count);
        for (int32_t s = 0; s < jr->def.count; ++s) {
            shoal_journey_stage_t* st = &jr->def.stages[s];
            st->goal = br_i32(rd);
            st->wait = br_f32(rd);
            st->transition = br_i32(rd);
            st->next_count = br_i32(rd);
            for (int32_t k = 0; k < SHOAL_JOURNEY_NEXT; ++k) {
                st->next[k] = br_i32(rd);
                st->next_weight[k] = br_i32(rd);
            }
            uint64_t sent = br_u64(rd);
            if (rd->failed) return 0;
            if (sent > (uint64_t)INT64_MAX)
                return br_fail(rd, "journey %u stage %d: sent %llu", j, (int)s, (unsigned long long)sent);
            jr->sent[s] = (int64_t)sent;
        }
        /* removed goals are fine here: the check wants live ones for new journeys */
        for (int32_t s = 0; s < jr->def.count; ++s)
            if (jr->def.stages[s].goal < 0 || jr->def.stages[s].goal >= (int32_t)goals)
                return br_fail(rd, "journey %u stage %d: goal %d is not one of the %u goals", j, (int)s,
                               (int)jr->def.stages[s].goal, goals);
        shoal_journey_t probe = jr->def;
        for (int32_t s = 0; s < probe.count; ++s) probe.stages[s].goal = -1;
        int32_t first_live = -1;
        for (int32_t g = 0; g < (int32_t)goals && first_live < 0; ++g)
            if (nw->goals[g].live) first_live = g;
        for (int32_t s = 0; s < probe.count; ++s) probe.stages[s].goal = first_live;
        if (first_live >= 0 && check_journey(w, "journey", &probe) != SHOAL_OK)
            return br_fail(rd, "journey %u: %s", j, w->error);
    }
    nw->journey_count = (int32_t)journeys;
    if (!nav_sources_load(w, rd)) return 0;
    uint32_t with = br_u32(rd);
    if (rd->failed) return 0;
    if (with > 1) return br_fail(rd, "nav: density flag %u is not 0 or 1", with);
    if (with) {
        int32_t nx = br_i32(rd), ny = br_i32(rd);
        if (rd->failed) return 0;
        if (nx < 1 || ny < 1 || (int64_t)nx * ny > INT32_MAX / 4)
            return br_fail(rd, "nav: a density of %d x %d cells", (int)nx, (int)ny);
        if (!br_count(rd, (uint32_t)((int64_t)nx * ny), 4, INT32_MAX / 4, "nav density cells")) return 0;
        nw->loaded_density = mem_alloc(&w->alloc, (size_t)nx * (size_t)ny * sizeof *nw->loaded_density);
        if (!nw->loaded_density)
            return br_fail(rd, "out of memory for a nav density of %d x %d cells", nx, ny);
        nw->loaded_nx = nx;
        nw->loaded_ny = ny;
        for (int64_t c = 0; c < (int64_t)nx * ny; ++c) {
            int32_t v = br_i32(rd);
            if (v < 0) return br_fail(rd, "nav: density cell %lld is negative", (long long)c);
            nw->loaded_density[c] = v;
        }
        if (rd->failed) return 0;
    }
    uint32_t zones = rd->version >= 10 ? br_u32(rd) : 0;
    if (rd->failed) return 0;
    if (!br_count(rd, zones, 12, SHOAL_MAX_NAV_ZONES, "nav zones")) return 0;
    if (zones > 0 && w->dims != 2) return br_fail(rd, "%u nav zones in a 3D world: navigation is 2D", zones);
    if (zones > 0 && !grow_zones(w, nw, (int32_t)zones))
        return br_fail(rd, "out of memory for %u nav zones", zones);
    int32_t live_zones = 0;
    for (uint32_t z = 0; z < zones; ++z) {
        nav_zone_rec_t* zr = &nw->zones[z];
        memset(zr, 0, sizeof *zr);
        zr->live = br_i32(rd);
        zr->def.count = br_i32(rd);
        zr->def.speed_factor = br_f32(rd);
        if (rd->failed) return 0;
        if ((zr->live != 0 && zr->live != 1) || zr->def.count < 3 || zr->def.count > SHOAL_NAV_ZONE_POINTS)
            return br_fail(rd, "nav zone %u: live %d, count %d are not a zone's", z, (int)zr->live,
                           (int)zr->def.count);
        for (int32_t k = 0; k < zr->def.count; ++k) {
            zr->def.points[k][0] = br_f32(rd);
            zr->def.points[k][1] = br_f32(rd);
        }
        if (rd->failed) return 0;
        if (check_zone(w, "nav", &zr->def) != SHOAL_OK) return br_fail(rd, "nav zone %u: %s", z, w->error);
        live_zones += zr->live;
    }
    nw->zone_high = (int32_t)zones;
    nw->live_zones = live_zones;
    nw->zones_version++;
    nw->params = p;
    nw->goal_high = (int32_t)goals;
    nw->live_goals = live;
    nw->params_version++;
    nw->goals_version++;
    return 1;
}

/* Every navigating agent's goal is a goal of the file (live, or removed
 * since the agent took it). */
static int nav_check_loaded(const world_t* w, byte_reader_t* rd)
{
    const nav_world_t* nw = nav_of(w);
    const int32_t* g = COMP_I(w, COMP_NAV, NV_GOAL);
    const int32_t* j = COMP_I(w, COMP_NAV, NV_JOURNEY);
    const int32_t* stage = COMP_I(w, COMP_NAV, NV_STAGE);
    const float* delay = COMP_F(w, COMP_NAV, NV_DELAY);
    for (int32_t r = 0; r < w->comps[COMP_NAV].table.count; ++r) {
        if (!(delay[r] >= 0.0f && delay[r] <= DEF_MAX_MAGNITUDE))
            return br_fail(rd, "nav row %d: start delay %g s left is not a value >= 0", (int)r,
                           (double)delay[r]);
        if (j[r] >= nw->journey_count)
            return br_fail(rd, "nav row %d: journey %d is not one of the file's %d", (int)r, (int)j[r],
                           (int)nw->journey_count);
        if (j[r] >= 0 && (stage[r] < 0 || stage[r] >= nw->journeys[j[r]].def.count))
            return br_fail(rd, "nav row %d: stage %d is not one of its journey's", (int)r, (int)stage[r]);
        if (j[r] >= 0) continue;
        if (g[r] < 0 || g[r] >= nw->goal_high)
            return br_fail(rd, "nav row %d: goal %d is not a nav goal of the file (%d goals)", (int)r,
                           (int)g[r], (int)nw->goal_high);
    }
    return 1;
}

const module_t nav_module = {
    .name = "nav",
    .column_count = NV_COUNT_,
    .columns = nav_columns,
    .init = nav_init,
    .release = nav_release,
    .defaults = nav_defaults,
    .needs = nav_needs,
    .validate = nav_validate,
    .validate_add = nav_validate_add,
    .reserve_step = nav_reserve_step,
    .write_row = nav_write_row,
    .read_row = nav_read_row,
    .hash = nav_hash,
    .mark = nav_mark,
    .rollback = nav_rollback,
    .snapshot_tag = BYTE_TAG('N', 'A', 'V', 'I'),
    .snapshot_since = NAV_SNAPSHOT_VERSION,
    .save = nav_save,
    .load = nav_load,
    .check_loaded = nav_check_loaded,
};
