/* The samples of a measurement area (shoal/measure.h): the agents inside,
 * their classic density and mean speed, and the Voronoi density and speed
 * of Steffen and Seyfried, "Methods for measuring pedestrian density,
 * flow, speed and direction with minimal scatter" (2010), eq. (6) and (8):
 *
 *     rho_V = sum_i |V_i n A| / (|V_i| |A|),   v_V = sum_i |V_i n A| |v_i| / |A|
 *
 * V_i is agent i's Voronoi cell among every agent, cut to the regular
 * 32-gon of circumradius cell_radius round it (a bounded cell for agents
 * with nobody on a side) and by the walls it faces. Only agents within cell_radius of the area's box
 * can have a cell that meets it, and only agents within 2 cell_radius of
 * one of those can cut its cell: the sample gathers the agents in the box
 * widened by 3 cell_radius, sorts them by (x, slot), cuts the cells in
 * parallel (each one's shares written to its own element) and sums the
 * shares serially in that order, so the sample is the same bits for any
 * thread count and any order of rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/memory.h"
#include "ecs/parallel.h"
#include "modules/measure/measure.h"
#include "modules/walls/walls.h"

#define CELL_SIDES 32
/* Room of a cut polygon: a convex cell gains at most one corner a cut;
 * the area's polygon (16 corners) cut by a convex cell at most two an edge
 * of the cell it crosses. A cut that would not fit is left out (it cannot
 * happen with fewer than some 200 neighbors on one cell's rim). */
#define POLY_MAX 256

double measure_polygon_area(const float (*p)[2], int32_t n)
{
    double a = 0.0;
    for (int32_t i = 0, j = n - 1; i < n; j = i++)
        a += (double)p[j][0] * (double)p[i][1] - (double)p[i][0] * (double)p[j][1];
    return 0.5 * a;
}

int measure_polygon_contains(const float (*p)[2], int32_t n, float x, float y)
{
    int in = 0;
    for (int32_t i = 0, j = n - 1; i < n; j = i++) {
        const float xi = p[i][0], yi = p[i][1], xj = p[j][0], yj = p[j][1];
        if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) in = !in;
    }
    return in;
}

typedef struct poly_t {
    double p[POLY_MAX][2];
    int32_t n;
} poly_t;

static double poly_area(const poly_t* q)
{
    double a = 0.0;
    for (int32_t i = 0, j = q->n - 1; i < q->n; j = i++)
        a += q->p[j][0] * q->p[i][1] - q->p[i][0] * q->p[j][1];
    return 0.5 * a;
}

/* Keep the part of *in where (p - m) . nrm <= 0 (Sutherland-Hodgman, one
 * edge), into *out. 0 when it would not fit (out unchanged). */
static int cut(const poly_t* in, poly_t* out, double mx, double my, double nx, double ny)
{
    int32_t n = 0;
    for (int32_t i = 0; i < in->n; ++i) {
        const double* a = in->p[i];
        const double* b = in->p[(i + 1) % in->n];
        const double da = (a[0] - mx) * nx + (a[1] - my) * ny;
        const double db = (b[0] - mx) * nx + (b[1] - my) * ny;
        if (da <= 0.0) {
            if (n >= POLY_MAX) return 0;
            out->p[n][0] = a[0];
            out->p[n][1] = a[1];
            n++;
        }
        if ((da <= 0.0) != (db <= 0.0)) {
            if (n >= POLY_MAX) return 0;
            const double t = da / (da - db);
            out->p[n][0] = a[0] + t * (b[0] - a[0]);
            out->p[n][1] = a[1] + t * (b[1] - a[1]);
            n++;
        }
    }
    out->n = n;
    return 1;
}

/* The most walls near one agent that its cell heeds (within 2
 * cell_radius): more is a maze no measurement area is drawn in. */
#define WALLS_MAX 64

/* Whether a wall of the list crosses the segment from (x, y) to (x + dx,
 * y + dy): a neighbor behind a wall does not share the floor. */
static int behind_wall(const wall_set_t* ws, const int32_t* walls, int32_t n, double x, double y, double dx,
                       double dy)
{
    for (int32_t k = 0; k < n; ++k) {
        const float* sg = ws->seg[walls[k]];
        const double ax = (double)sg[0] - x, ay = (double)sg[1] - y;
        const double ex = (double)sg[2] - sg[0], ey = (double)sg[3] - sg[1];
        const double den = dx * ey - dy * ex;
        if (den == 0.0) continue;                   /* parallel */
        const double t = (ax * ey - ay * ex) / den; /* along the agents' segment */
        const double u = (ax * dy - ay * dx) / den; /* along the wall */
        if (t > 0.0 && t < 1.0 && u >= 0.0 && u <= 1.0) return 1;
    }
    return 0;
}

typedef struct cells_ctx_t {
    const measure_world_t* mw;
    const measure_area_rec_t* a;
    const wall_set_t* ws;
    int64_t n;
    double unit[CELL_SIDES][2]; /* the 32-gon of circumradius 1 */
    /* The candidates in a grid of square cells of side h from (x0, y0):
     * cell (cx, cy)'s candidates are items[start[k] .. start[k + 1]), k =
     * cy nx + cx, in (x, slot) order. */
    double x0, y0, h;
    int32_t nx, ny;
} cells_ctx_t;

static int32_t grid_coord(double v, double v0, double h, int32_t n)
{
    double c = floor((v - v0) / h);
    return c < 0.0 ? 0 : c > (double)(n - 1) ? n - 1 : (int32_t)c;
}

/* Cut the cell by neighbor j's bisector unless it is too far or behind a
 * wall; the cell's reach (its farthest corner) follows. */
static void cut_by(const cells_ctx_t* c, poly_t** cell, poly_t** spare, double* reach, double x, double y,
                   int32_t j, const int32_t* walls, int32_t wall_count)
{
    const measure_cand_t* q = &c->mw->cand[j];
    const double dx = (double)q->x - x, dy = (double)q->y - y;
    const double d2 = dx * dx + dy * dy;
    if (d2 >= 4.0 * *reach * *reach || d2 == 0.0) return;
    if (behind_wall(c->ws, walls, wall_count, x, y, dx, dy)) return;
    if (!cut(*cell, *spare, 0.5 * dx, 0.5 * dy, dx, dy)) return;
    poly_t* t = *cell;
    *cell = *spare;
    *spare = t;
    double r2 = 0.0;
    for (int32_t k = 0; k < (*cell)->n; ++k)
        r2 = fmax(r2, (*cell)->p[k][0] * (*cell)->p[k][0] + (*cell)->p[k][1] * (*cell)->p[k][1]);
    *reach = sqrt(r2);
}

/* Agent i's cell (relative to the agent, for precision) cut by its
 * neighbors in (x, slot) order, then the area cut by the cell: its shares
 * |V_i n A| / |V_i| and |V_i n A| |v_i|. */
static void cell_shares(const cells_ctx_t* c, int64_t i, int32_t worker, double share[2])
{
    const measure_cand_t* cand = c->mw->cand;
    const measure_area_rec_t* a = c->a;
    const double R = a->def.cell_radius, x = cand[i].x, y = cand[i].y;
    poly_t bufs[2];
    poly_t* cell = &bufs[0];
    poly_t* spare = &bufs[1];
    cell->n = CELL_SIDES;
    for (int32_t k = 0; k < CELL_SIDES; ++k) {
        cell->p[k][0] = R * c->unit[k][0];
        cell->p[k][1] = R * c->unit[k][1];
    }
    /* Walls the agent faces (the foot of its perpendicular on the segment,
     * strictly inside it) cut the cell along their line: the floor behind
     * a corridor's wall is nobody's. A wall seen end-on cuts nothing, so
     * that a door's opening stays in the cells of those before it. */
    int32_t walls[WALLS_MAX];
    int32_t wall_count = 0;
    if (c->ws->seg_count > 0) {
        wall_query_t q;
        walls_query_begin(&q, c->ws, worker, (float)x, (float)y, (float)(2.0 * R));
        for (int32_t k; (k = walls_query_next(&q)) >= 0;) {
            if (wall_count < WALLS_MAX) walls[wall_count++] = k;
            const float* sg = c->ws->seg[k];
            const double ax = (double)sg[0] - x, ay = (double)sg[1] - y;
            const double dx = (double)sg[2] - sg[0], dy = (double)sg[3] - sg[1];
            const double len2 = dx * dx + dy * dy;
            if (!(len2 > 0.0)) continue;
            const double t = -(ax * dx + ay * dy) / len2;
            if (!(t > 0.0 && t < 1.0)) continue;
            const double fx = ax + t * dx, fy = ay + t * dy; /* the foot, from the agent */
            if (fx * fx + fy * fy == 0.0) continue;          /* on the wall: no side */
            if (cut(cell, spare, fx, fy, fx, fy)) {
                poly_t* tmp = cell;
                cell = spare;
                spare = tmp;
            }
        }
        walls_query_end(&q);
    }
    double reach = 0.0; /* the farthest corner: a neighbor beyond 2 reach cannot cut */
    for (int32_t k = 0; k < cell->n; ++k)
        reach = fmax(reach, cell->p[k][0] * cell->p[k][0] + cell->p[k][1] * cell->p[k][1]);
    reach = sqrt(reach);
    /* The neighbors ring by ring of grid cells round the agent's, until
     * the ring is farther than twice the cell's reach (a point k rings
     * away is at least (k - 1) h away) */
    const int32_t ci = grid_coord(x, c->x0, c->h, c->nx), cj = grid_coord(y, c->y0, c->h, c->ny);
    const int32_t* start = c->mw->grid_start;
    const int32_t* items = c->mw->grid_items;
    for (int32_t k = 0; k <= c->nx + c->ny && cell->n >= 3; ++k) {
        if (k >= 1 && (double)(k - 1) * c->h >= 2.0 * reach) break;
        for (int32_t cy = cj - k; cy <= cj + k; ++cy) {
            if (cy < 0 || cy >= c->ny) continue;
            const int32_t edge = cy == cj - k || cy == cj + k;
            for (int32_t cx = ci - k; cx <= ci + k; cx += edge || k == 0 ? 1 : 2 * k) {
                if (cx < 0 || cx >= c->nx) continue;
                const int32_t g = cy * c->nx + cx;
                for (int32_t e = start[g]; e < start[g + 1]; ++e)
                    if (items[e] != (int32_t)i)
                        cut_by(c, &cell, &spare, &reach, x, y, items[e], walls, wall_count);
            }
        }
    }
    const double cell_area = cell->n >= 3 ? poly_area(cell) : 0.0;
    share[0] = share[1] = 0.0;
    if (!(cell_area > 0.0)) return;
    /* the area, relative to the agent, cut by each edge of the cell
     * (counterclockwise: inside is on the left of every edge) */
    poly_t area_buf[2];
    poly_t* sub = &area_buf[0];
    sub->n = a->def.count;
    for (int32_t k = 0; k < a->def.count; ++k) {
        sub->p[k][0] = (double)a->def.points[k][0] - x;
        sub->p[k][1] = (double)a->def.points[k][1] - y;
    }
    poly_t* other = &area_buf[1];
    for (int32_t k = 0; k < cell->n && sub->n >= 3; ++k) {
        const double* p0 = cell->p[k];
        const double* p1 = cell->p[(k + 1) % cell->n];
        /* outward normal of a counterclockwise edge: (ey, -ex) */
        const double ex = p1[0] - p0[0], ey = p1[1] - p0[1];
        /* an edge the cuts left a rounding error long has no direction to
         * cut along: skipping it moves the area by that error at most */
        if (ex * ex + ey * ey <= 1e-16 * R * R) continue;
        if (!cut(sub, other, p0[0], p0[1], ey, -ex)) continue;
        poly_t* t = sub;
        sub = other;
        other = t;
    }
    const double inter = sub->n >= 3 ? poly_area(sub) : 0.0;
    if (!(inter > 0.0)) return;
    share[0] = inter / cell_area;
    share[1] = inter * (double)cand[i].speed;
}

static void cells_range(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    const cells_ctx_t* c = ctx;
    double(*share)[2] = c->mw->share;
    for (int32_t i = begin; i < end; ++i) {
        if (c->mw->cand[i].counted)
            cell_shares(c, i, worker, share[i]);
        else
            share[i][0] = share[i][1] = 0.0;
    }
}

static int cand_cmp(const void* pa, const void* pb)
{
    const measure_cand_t *a = pa, *b = pb;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

static int in_box(const float b[4], float x, float y)
{
    return x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3];
}

int measure_area_sample(world_t* w, measure_world_t* mw, measure_area_rec_t* a, double time, uint64_t step)
{
    if (a->sample_count >= a->sample_capacity) {
        int64_t cap = a->sample_capacity ? 2 * a->sample_capacity : 64;
        shoal_measure_sample_t* s = mem_alloc(&w->alloc, (size_t)cap * sizeof *s);
        if (!s) {
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "measure: out of memory for area '%s''s samples", a->name);
            return 0;
        }
        if (a->sample_count) memcpy(s, a->samples, (size_t)a->sample_count * sizeof *s);
        mem_free(&w->alloc, a->samples, (size_t)a->sample_capacity * sizeof *s);
        a->samples = s;
        a->sample_capacity = cap;
    }
    const float R = a->def.cell_radius;
    const float meets[4] = {a->box[0] - R, a->box[1] - R, a->box[2] + R, a->box[3] + R};
    const float near[4] = {a->box[0] - 3 * R, a->box[1] - 3 * R, a->box[2] + 3 * R, a->box[3] + 3 * R};
    const float* px = AGENT_F(w, AC_POS_X);
    const float* py = AGENT_F(w, AC_POS_Y);
    const float* vx = AGENT_F(w, AC_VEL_X);
    const float* vy = AGENT_F(w, AC_VEL_Y);
    const uint32_t* slot = TABLE_COL(&w->agents, uint32_t, AC_SLOT);
    const uint32_t* group = TABLE_COL(&w->agents, uint32_t, AC_GROUP);
    int64_t n = 0;
    for (int32_t r = 0; r < w->agents.count; ++r) n += in_box(near, px[r], py[r]);
    if (!measure_reserve_candidates(w, mw, n)) {
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "measure: out of memory for area '%s''s %lld agents", a->name,
                   (long long)n);
        return 0;
    }
    n = 0;
    for (int32_t r = 0; r < w->agents.count; ++r) {
        if (!in_box(near, px[r], py[r])) continue;
        measure_cand_t* c = &mw->cand[n++];
        const int of_group = a->def.group < 0 || (int64_t)group[r] == a->def.group;
        c->x = px[r];
        c->y = py[r];
        c->speed = sqrtf(vx[r] * vx[r] + vy[r] * vy[r]);
        c->slot = slot[r];
        c->counted = of_group && in_box(meets, px[r], py[r]);
        c->inside = of_group && in_box(a->box, px[r], py[r]) &&
                    measure_polygon_contains(a->def.points, a->def.count, px[r], py[r]);
    }
    if (n > 1) qsort(mw->cand, (size_t)n, sizeof *mw->cand, cand_cmp); /* none: no candidates array */
    cells_ctx_t ctx = {.mw = mw, .a = a, .ws = walls_of(w), .n = n};
    for (int32_t k = 0; k < CELL_SIDES; ++k) {
        const double th = 6.283185307179586 * (double)k / CELL_SIDES;
        ctx.unit[k][0] = cos(th);
        ctx.unit[k][1] = sin(th);
    }
    /* the grid: cells of R / 2, fewer when they would outnumber the
     * candidates four to one */
    ctx.x0 = near[0];
    ctx.y0 = near[1];
    const double wx = (double)near[2] - near[0], wy = (double)near[3] - near[1];
    ctx.h = 0.5 * (double)R;
    const double most = 4.0 * (double)(n > 16 ? n : 16);
    if ((wx / ctx.h + 1.0) * (wy / ctx.h + 1.0) > most) ctx.h = sqrt(wx * wy / most) + 1e-9 * (wx + wy);
    while ((floor(wx / ctx.h) + 1.0) * (floor(wy / ctx.h) + 1.0) > 2.0 * most) ctx.h *= 1.5;
    ctx.nx = (int32_t)floor(wx / ctx.h) + 1;
    ctx.ny = (int32_t)floor(wy / ctx.h) + 1;
    if (!measure_reserve_grid(w, mw, (int64_t)ctx.nx * ctx.ny + 1, n)) {
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "measure: out of memory for area '%s''s grid", a->name);
        return 0;
    }
    const int32_t cells = ctx.nx * ctx.ny;
    memset(mw->grid_start, 0, ((size_t)cells + 1) * sizeof *mw->grid_start);
    for (int64_t i = 0; i < n; ++i) {
        const int32_t g = grid_coord(mw->cand[i].y, ctx.y0, ctx.h, ctx.ny) * ctx.nx +
                          grid_coord(mw->cand[i].x, ctx.x0, ctx.h, ctx.nx);
        mw->grid_start[g + 1]++;
    }
    for (int32_t g = 0; g < cells; ++g) mw->grid_start[g + 1] += mw->grid_start[g];
    for (int64_t i = 0; i < n; ++i) { /* in (x, slot) order within each cell */
        const int32_t g = grid_coord(mw->cand[i].y, ctx.y0, ctx.h, ctx.ny) * ctx.nx +
                          grid_coord(mw->cand[i].x, ctx.x0, ctx.h, ctx.nx);
        mw->grid_items[mw->grid_start[g]++] = (int32_t)i;
    }
    for (int32_t g = cells; g > 0; --g) mw->grid_start[g] = mw->grid_start[g - 1];
    mw->grid_start[0] = 0;
    if (n > 0) par_for(w, (int32_t)n, 16, PAR_CLAIMED, cells_range, &ctx);
    int32_t inside = 0;
    double speed = 0.0, rho = 0.0, flow = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        if (mw->cand[i].inside) {
            inside++;
            speed += (double)mw->cand[i].speed;
        }
        rho += mw->share[i][0];
        flow += mw->share[i][1];
    }
    shoal_measure_sample_t* s = &a->samples[a->sample_count++];
    memset(s, 0, sizeof *s);
    s->time = time;
    s->step = step;
    s->count = inside;
    s->density = (float)((double)inside / a->area);
    s->voronoi_density = (float)(rho / a->area);
    s->speed = inside ? (float)(speed / inside) : 0.0f;
    s->voronoi_speed = (float)(flow / a->area);
    return 1;
}
