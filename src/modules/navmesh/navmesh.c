/* The navmesh module (shoal/navmesh.h, navmesh.h): the world's navigation
 * mesh and the navmesh behavior, every agent on a path of its own; its
 * part of the state hash and its snapshot section NMSH (format version 9);
 * the paths of ground vehicles on the mesh.
 *
 * Decisions:
 * - The parameters are state (hashed when they differ from the defaults,
 *   so that worlds without navmeshes hash as before; saved). The mesh is
 *   derived from them, the walls and the static obstacles: baked before
 *   the first step after any of them changed (reserve_step, so that a
 *   floor too large fails the step before anything moved), and only for
 *   a world with agents that use it (or on shoal_world_navmesh_update).
 * - An agent's path is state: its next NMD_CORNERS corners, the leg it is
 *   on, the goal planned for, the steps since. Paths are planned in the
 *   sense stage, at most replans_per_step a step, in one order whatever
 *   the threads: agents with no path (new, a new goal, corners used up)
 *   first, then those off their path, then those due by age; within
 *   each, the longest waiting first, then by slot. Each worker plans
 *   through a Detour query of its own over the read-only mesh, and writes
 *   only its agents' rows: the same paths on any thread count.
 * - A corner is passed when the agent is within the agent radius of it or
 *   beyond it along its leg; the end corner never is. An agent farther
 *   than off_path_distance from its leg asks for a new path.
 * - Ground vehicles' paths: navmesh_route.c.
 * - The steer: weight times the max speed toward the next corner,
 *   slowing as arrive does on the last leg to the path's end. An agent
 *   waiting for its first path asks for nothing; one the mesh cannot
 *   place (no polygon within NAVMESH_REACH of it or of its goal) heads
 *   straight for its goal, and tries again every NAVMESH_OFF_RETRY steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/navmesh/navmesh_paths.h"
#include "modules/ground/ground.h"
#include "modules/obstacles/obstacles.h"
#include "modules/walls/walls.h"
#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "modules/agent.h"

#define NAVMESH_SNAPSHOT_VERSION 9
/* The largest floor, in cells: a side, and all. */
#define NAVMESH_MAX_SIDE 32767
#define NAVMESH_MAX_CELLS ((int64_t)1 << 26)
/* A walker slower than this fraction of its max speed edges right, by up
 * to atan(NAVMESH_STALL_TURN) (63 degrees) when it stands (navmesh_steer;
 * measured against fractions of 0.25 and 0.15 and turns of 0.5, 1 and 4
 * on `shoal bench navmesh`: docs/navmesh.md "Measured"). */
#define NAVMESH_STALL_SPEED 0.5f
#define NAVMESH_STALL_TURN 2.0f

static const char* const unavailable =
    "shoal was built without Recast/Detour (SHOAL_WITH_RECAST off): install librecast-dev and "
    "configure again to have navigation meshes";

int32_t shoal_navmesh_available(void) { return nmd_available(); }

shoal_navmesh_params_t shoal_navmesh_params_default(void)
{
    shoal_navmesh_params_t p;
    memset(&p, 0, sizeof p);
    p.cell = 0.1f;
    p.agent_radius = 0.25f;
    p.margin = 2.0f;
    p.replans_per_step = 64;
    p.replan_interval = 100;
    p.off_path_distance = 1.0f;
    return p;
}

shoal_navmesh_t shoal_navmesh_default(void)
{
    shoal_navmesh_t n = {.goal = {0.0f, 0.0f}, .arrive_distance = 0.3f};
    return n;
}

static int32_t workers_of(const world_t* w) { return w->thread_count > 0 ? w->thread_count : 1; }

/* ---- the mesh ---------------------------------------------------------------- */

static void free_queries(world_t* w, navmesh_world_t* nw)
{
    for (int32_t k = 0; k < nw->query_count; ++k) nmd_query_free(nw->queries[k]);
    mem_free(&w->alloc, nw->queries, (size_t)nw->query_count * sizeof *nw->queries);
    nw->queries = NULL;
    nw->query_count = 0;
}

static void free_mesh(world_t* w, navmesh_world_t* nw)
{
    free_queries(w, nw);
    nmd_free(nw->mesh);
    nw->mesh = NULL;
    nw->built_valid = 0;
}

static int navmesh_current(const world_t* w)
{
    const navmesh_world_t* nw = navmesh_of(w);
    return nw->built_valid && nw->built_params == nw->params_version &&
           nw->built_walls == walls_of(w)->version &&
           nw->built_obstacles == obstacles_of(w)->obstacle_version;
}

static int static_obstacle(const obstacle_set_t* os, int32_t i)
{
    const float* o = os->obstacles[i];
    const float* v = os->obstacle_velocities[i];
    return o[3] >= 0.0f && v[0] == 0.0f && v[1] == 0.0f;
}

/* The live wall segments and static obstacles, into memory of the world's
 * allocator (freed by the caller with the counts). 0 when out of memory. */
static int gather(world_t* w, float (**seg)[4], int32_t* nseg, float (**disc)[3], int32_t* ndisc)
{
    const wall_set_t* ws = walls_of(w);
    const obstacle_set_t* os = obstacles_of(w);
    int32_t n = 0, m = 0;
    for (int32_t i = 0; i < ws->wall_high; ++i) {
        const int32_t* wl = ws->walls[i];
        n += wl[WF_COUNT] == 0 ? 0 : wl[WF_CLOSED] ? wl[WF_COUNT] : wl[WF_COUNT] - 1;
    }
    for (int32_t i = 0; i < os->obstacle_high; ++i) m += static_obstacle(os, i);
    *nseg = n;
    *ndisc = m;
    *seg = n ? mem_alloc(&w->alloc, (size_t)n * sizeof **seg) : NULL;
    *disc = m ? mem_alloc(&w->alloc, (size_t)m * sizeof **disc) : NULL;
    if ((n && !*seg) || (m && !*disc)) {
        mem_free(&w->alloc, *seg, (size_t)n * sizeof **seg);
        mem_free(&w->alloc, *disc, (size_t)m * sizeof **disc);
        return 0;
    }
    n = 0;
    for (int32_t i = 0; i < ws->wall_high; ++i) {
        const int32_t* wl = ws->walls[i];
        int32_t segs = wl[WF_COUNT] == 0 ? 0 : wl[WF_CLOSED] ? wl[WF_COUNT] : wl[WF_COUNT] - 1;
        for (int32_t k = 0; k < segs; ++k, ++n) {
            const float* a = ws->points[wl[WF_FIRST] + k];
            const float* b = ws->points[wl[WF_FIRST] + (k + 1) % wl[WF_COUNT]];
            (*seg)[n][0] = a[0];
            (*seg)[n][1] = a[1];
            (*seg)[n][2] = b[0];
            (*seg)[n][3] = b[1];
        }
    }
    m = 0;
    for (int32_t i = 0; i < os->obstacle_high; ++i) {
        if (!static_obstacle(os, i)) continue;
        (*disc)[m][0] = os->obstacles[i][0];
        (*disc)[m][1] = os->obstacles[i][1];
        (*disc)[m][2] = os->obstacles[i][3];
        m++;
    }
    return 1;
}

/* The floor: explicit bounds, or the box of the walls and obstacles
 * widened by the margin. 0 when there is none (nothing to bound it). */
static int floor_of(const shoal_navmesh_params_t* p, const float (*seg)[4], int32_t nseg,
                    const float (*disc)[3], int32_t ndisc, double b[4])
{
    if (p->bounds[2] > p->bounds[0] && p->bounds[3] > p->bounds[1]) {
        for (int k = 0; k < 4; ++k) b[k] = p->bounds[k];
        return 1;
    }
    if (nseg == 0 && ndisc == 0) return 0;
    b[0] = b[1] = INFINITY;
    b[2] = b[3] = -INFINITY;
    for (int32_t i = 0; i < nseg; ++i)
        for (int e = 0; e < 4; e += 2) {
            b[0] = fmin(b[0], seg[i][e]);
            b[1] = fmin(b[1], seg[i][e + 1]);
            b[2] = fmax(b[2], seg[i][e]);
            b[3] = fmax(b[3], seg[i][e + 1]);
        }
    for (int32_t i = 0; i < ndisc; ++i) {
        b[0] = fmin(b[0], (double)disc[i][0] - disc[i][2]);
        b[1] = fmin(b[1], (double)disc[i][1] - disc[i][2]);
        b[2] = fmax(b[2], (double)disc[i][0] + disc[i][2]);
        b[3] = fmax(b[3], (double)disc[i][1] + disc[i][2]);
    }
    b[0] -= p->margin;
    b[1] -= p->margin;
    b[2] += p->margin;
    b[3] += p->margin;
    return 1;
}

/* Whether a floor fits Recast's limits; else the message, CAPACITY. */
static shoal_status_t floor_check(world_t* w, const char* where, const shoal_navmesh_params_t* p,
                                  const double b[4])
{
    double nx = ceil((b[2] - b[0]) / p->cell), ny = ceil((b[3] - b[1]) / p->cell);
    if (nx <= NAVMESH_MAX_SIDE && ny <= NAVMESH_MAX_SIDE && nx * ny <= (double)NAVMESH_MAX_CELLS)
        return SHOAL_OK;
    return world_fail(w, SHOAL_ERR_CAPACITY,
                      "%s: the navmesh floor [%g, %g] x [%g, %g] m at cells of %g m is %.0f x %.0f cells, "
                      "more than Recast's %d a side or %lld in all (a larger cell, or explicit bounds)",
                      where, b[0], b[2], b[1], b[3], (double)p->cell, nx, ny, NAVMESH_MAX_SIDE,
                      (long long)NAVMESH_MAX_CELLS);
}

/* Query objects for every worker over the mesh. 0 when out of memory. */
static int make_queries(world_t* w, navmesh_world_t* nw)
{
    int32_t n = workers_of(w);
    if (!nw->mesh || nw->query_count >= n) return 1;
    free_queries(w, nw);
    nw->queries = mem_calloc(&w->alloc, (size_t)n * sizeof *nw->queries);
    if (!nw->queries) return 0;
    nw->query_count = n;
    for (int32_t k = 0; k < n; ++k)
        if (!(nw->queries[k] = nmd_query_new(nw->mesh))) return 0;
    return 1;
}

/* Bake the mesh from the parameters, walls and obstacles, and make its
 * queries. A failure records its message and sets w->reserve_status. */
static int navmesh_bake(world_t* w, const char* where)
{
    navmesh_world_t* nw = navmesh_of(w);
    free_mesh(w, nw);
    const shoal_navmesh_params_t* p = &nw->params;
    float(*seg)[4] = NULL;
    float(*disc)[3] = NULL;
    int32_t nseg = 0, ndisc = 0;
    if (!gather(w, &seg, &nseg, &disc, &ndisc)) {
        w->reserve_status =
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for the navmesh's walls", where);
        return 0;
    }
    double b[4];
    int ok = 1;
    if (floor_of(p, (const float(*)[4])seg, nseg, (const float(*)[3])disc, ndisc, b)) {
        shoal_status_t st = floor_check(w, where, p, b);
        if (st != SHOAL_OK) {
            w->reserve_status = st;
            ok = 0;
        } else {
            nmd_input_t in = {.seg = (const float(*)[4])seg,
                              .seg_count = nseg,
                              .disc = (const float(*)[3])disc,
                              .disc_count = ndisc,
                              .bounds = {(float)b[0], (float)b[1], (float)b[2], (float)b[3]},
                              .cell = p->cell,
                              .radius = p->agent_radius};
            char msg[256];
            int code = nmd_build(&in, &nw->mesh, msg, sizeof msg);
            if (code != 0) {
                w->reserve_status = world_fail(w, code == 2 ? SHOAL_ERR_CAPACITY : SHOAL_ERR_OUT_OF_MEMORY,
                                               "%s: baking the navmesh: %s", where, msg);
                ok = 0;
            }
        }
    }
    mem_free(&w->alloc, seg, (size_t)nseg * sizeof *seg);
    mem_free(&w->alloc, disc, (size_t)ndisc * sizeof *disc);
    if (ok && !make_queries(w, nw)) {
        w->reserve_status =
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for the navmesh queries", where);
        ok = 0;
    }
    if (!ok) {
        free_mesh(w, nw);
        return 0;
    }
    nw->built_valid = 1;
    nw->built_params = nw->params_version;
    nw->built_walls = walls_of(w)->version;
    nw->built_obstacles = obstacles_of(w)->obstacle_version;
    return 1;
}

static int navmesh_reserve_step(world_t* w)
{
    navmesh_world_t* nw = navmesh_of(w);
    if (w->comps[COMP_NAVMESH].table.count == 0) return 1;
    if (!nmd_available()) {
        w->reserve_status = world_fail(w, SHOAL_ERR_NOT_FOUND, "step: navmesh agents: %s", unavailable);
        return 0;
    }
    if (!navmesh_current(w)) return navmesh_bake(w, "step");
    if (!make_queries(w, nw)) {
        w->reserve_status =
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "step: out of memory for the navmesh queries");
        return 0;
    }
    return 1;
}

/* ---- the paths ----------------------------------------------------------------- */

/* Each row: corners passed, age, and its wish. */
static void advance_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const paths_ctx_t* c = (const paths_ctx_t*)vctx;
    for (int32_t r = begin; r < end; ++r) {
        const int32_t i = c->agent_row[r];
        const float x = c->a.px[i], y = c->a.py[i];
        int32_t age = c->age[r] < INT32_MAX ? c->age[r] + 1 : INT32_MAX;
        c->age[r] = age;
        const int32_t g = vehicle_row(c, r);
        if (g >= 0) {
            c->nw->want[r] = navmesh_vehicle_wish(c, r, g, x, y, age);
            continue;
        }
        const int32_t f = c->flags[r], n = c->corners[r];
        int32_t k = c->next[r];
        uint64_t want = NO_WISH;
        if (!(f & NMF_PLANNED) || c->plan_x[r] != c->gx[r] || c->plan_y[r] != c->gy[r]) {
            c->nw->want[r] = wish(0, age, c->slot[r]);
            continue;
        }
        if (f & NMF_OFF) {
            c->nw->want[r] = age >= NAVMESH_OFF_RETRY ? wish(2, age, c->slot[r]) : NO_WISH;
            continue;
        }
        /* corners passed: within reach, or beyond along the leg; never the end */
        while (k < n && !((f & NMF_END) && k == n - 1)) {
            const float cx = c->corner[2 * k][r], cy = c->corner[2 * k + 1][r];
            const float lx = cx - c->from_x[r], ly = cy - c->from_y[r];
            const float ex = x - cx, ey = y - cy;
            if (ex * ex + ey * ey > c->reach * c->reach && ex * lx + ey * ly < 0.0f) break;
            c->from_x[r] = cx;
            c->from_y[r] = cy;
            k++;
        }
        c->next[r] = k;
        if (k >= n)
            want = wish(0, age, c->slot[r]);
        else if (seg_dist2(c->from_x[r], c->from_y[r], c->corner[2 * k][r], c->corner[2 * k + 1][r], x, y) >
                 c->off * c->off)
            want = wish(1, age, c->slot[r]);
        else if (c->interval > 0 && age >= c->interval)
            want = wish(2, age, c->slot[r]);
        c->nw->want[r] = want;
    }
}

/* The chosen rows' plans, each worker through its own query. */
static void plan_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const paths_ctx_t* c = (const paths_ctx_t*)vctx;
    nmd_query_t* q = worker < c->nw->query_count ? c->nw->queries[worker] : NULL;
    for (int32_t k = begin; k < end; ++k) {
        const int32_t r = c->nw->chosen[k], i = c->agent_row[r];
        const float x = c->a.px[i], y = c->a.py[i];
        if (vehicle_row(c, r) >= 0) {
            c->plan_x[r] = c->gx[r];
            c->plan_y[r] = c->gy[r];
            c->from_x[r] = x;
            c->from_y[r] = y;
            c->next[r] = 0;
            c->age[r] = 0;
            navmesh_plan_vehicle(c, q, r, x, y);
            continue;
        }
        nmd_path_t path;
        int st = q ? nmd_plan(q, x, y, c->gx[r], c->gy[r], NAVMESH_REACH, &path) : NMD_PLAN_START_OFF;
        c->plan_x[r] = c->gx[r];
        c->plan_y[r] = c->gy[r];
        c->from_x[r] = x;
        c->from_y[r] = y;
        c->next[r] = 0;
        c->age[r] = 0;
        if (st != NMD_PLAN_OK || path.count == 0) {
            c->flags[r] = NMF_PLANNED | NMF_OFF;
            c->corners[r] = 0;
            c->poly[r] = 0;
            for (int32_t j = 0; j < 2 * NMD_CORNERS; ++j) c->corner[j][r] = 0.0f;
            continue;
        }
        c->flags[r] = NMF_PLANNED | (path.end ? NMF_END : 0) | (path.partial ? NMF_PARTIAL : 0);
        c->corners[r] = path.count;
        c->poly[r] = path.poly;
        for (int32_t j = 0; j < NMD_CORNERS; ++j) {
            c->corner[2 * j][r] = j < path.count ? path.corner[j][0] : 0.0f;
            c->corner[2 * j + 1][r] = j < path.count ? path.corner[j][1] : 0.0f;
        }
    }
}

static void sift_down(int32_t* rows, int32_t root, int32_t n, const uint64_t* want)
{
    for (;;) {
        int32_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && want[rows[child]] < want[rows[child + 1]]) child++;
        if (want[rows[root]] >= want[rows[child]]) return;
        int32_t t = rows[root];
        rows[root] = rows[child];
        rows[child] = t;
        root = child;
    }
}

/* The wished rows by their keys (distinct: the slot is in them), a heap
 * sort (qsort has no context in C11). */
static void sort_rows(int32_t* rows, int32_t n, const uint64_t* want)
{
    for (int32_t root = n / 2 - 1; root >= 0; --root) sift_down(rows, root, n, want);
    for (int32_t end = n - 1; end > 0; --end) {
        int32_t t = rows[0];
        rows[0] = rows[end];
        rows[end] = t;
        sift_down(rows, 0, end, want);
    }
}

static paths_ctx_t paths_ctx(world_t* w)
{
    const int k = COMP_NAVMESH;
    navmesh_world_t* nw = navmesh_of(w);
    paths_ctx_t c = {.w = w,
                     .a = agent_view(w),
                     .nw = nw,
                     .slot = COMP_U(w, k, NM_SLOT),
                     .agent_row = COMP_I(w, k, COMP_ROW),
                     .gx = COMP_F(w, k, NM_GOAL_X),
                     .gy = COMP_F(w, k, NM_GOAL_Y),
                     .plan_x = COMP_F(w, k, NM_PLAN_X),
                     .plan_y = COMP_F(w, k, NM_PLAN_Y),
                     .from_x = COMP_F(w, k, NM_FROM_X),
                     .from_y = COMP_F(w, k, NM_FROM_Y),
                     .corners = COMP_I(w, k, NM_CORNERS),
                     .next = COMP_I(w, k, NM_NEXT),
                     .flags = COMP_I(w, k, NM_FLAGS),
                     .age = COMP_I(w, k, NM_AGE),
                     .poly = COMP_U(w, k, NM_POLY),
                     .reach = nw->params.agent_radius,
                     .off = nw->params.off_path_distance,
                     .interval = nw->params.replan_interval};
    for (int j = 0; j < 2 * NMD_CORNERS; ++j) c.corner[j] = COMP_F(w, k, NM_CORNER + j);
    c.route_count = COMP_I(w, k, NM_ROUTE_COUNT);
    for (int j = 0; j < 2 * NMD_ROUTE_POINTS; ++j) c.route[j] = COMP_F(w, k, NM_ROUTE + j);
    if (w->comps[COMP_GROUND].table.count > 0) {
        c.ground = &w->comps[COMP_GROUND];
        c.g_n = COMP_I(w, COMP_GROUND, GR_N);
        c.g_completed = COMP_I(w, COMP_GROUND, GR_COMPLETED);
        c.g_dh = COMP_F(w, COMP_GROUND, GR_DH);
        c.g_lookahead_max = COMP_F(w, COMP_GROUND, GR_LOOKAHEAD_MAX);
        c.g_arrive_radius = COMP_F(w, COMP_GROUND, GR_ARRIVE_RADIUS);
    }
    return c;
}

int64_t navmesh_paths_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    navmesh_world_t* nw = navmesh_of(w);
    const int32_t rows = w->comps[COMP_NAVMESH].table.count;
    nw->replans = nw->pending = 0;
    if (rows == 0) return 0;
    if (rows > nw->scratch_rows) {
        mem_free(&w->alloc, nw->want, (size_t)nw->scratch_rows * sizeof *nw->want);
        mem_free(&w->alloc, nw->chosen, (size_t)nw->scratch_rows * sizeof *nw->chosen);
        nw->want = mem_alloc(&w->alloc, (size_t)rows * sizeof *nw->want);
        nw->chosen = mem_alloc(&w->alloc, (size_t)rows * sizeof *nw->chosen);
        nw->scratch_rows = rows;
        if (!nw->want || !nw->chosen) {
            mem_free(&w->alloc, nw->want, (size_t)rows * sizeof *nw->want);
            mem_free(&w->alloc, nw->chosen, (size_t)rows * sizeof *nw->chosen);
            nw->want = NULL;
            nw->chosen = NULL;
            nw->scratch_rows = 0;
            return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "navmesh_paths: out of memory for %d agents",
                              (int)rows);
        }
    }
    paths_ctx_t c = paths_ctx(w);
    par_for(w, rows, 512, PAR_STATIC, advance_range, &c);
    int32_t n = 0;
    for (int32_t r = 0; r < rows; ++r)
        if (nw->want[r] != NO_WISH) nw->chosen[n++] = r;
    const int32_t budget = nw->params.replans_per_step;
    if (n > budget) sort_rows(nw->chosen, n, nw->want);
    const int32_t take = n < budget ? n : budget;
    par_for(w, take, 4, PAR_CLAIMED | PAR_TASKS, plan_range, &c);
    nw->replans = take;
    nw->pending = n - take;
    return rows;
}

/* ---- the steer ------------------------------------------------------------------- */

static void steer_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const paths_ctx_t* c = (const paths_ctx_t*)vctx;
    const world_t* w = c->w;
    const float* weight = COMP_F(w, COMP_NAVMESH, NM_WEIGHT);
    const float* arrive = COMP_F(w, COMP_NAVMESH, NM_ARRIVE_DISTANCE);
    int32_t* status = COMP_I(w, COMP_NAVMESH, NM_STATUS);
    for (int32_t r = begin; r < end; ++r) {
        const int32_t i = c->agent_row[r], f = c->flags[r], n = c->corners[r];
        const int32_t g = vehicle_row(c, r);
        if (g >= 0) { /* its follower drives it: the status alone */
            status[r] = navmesh_vehicle_status(c, r, g);
            continue;
        }
        const float x = c->a.px[i], y = c->a.py[i];
        float tx, ty;
        int last; /* the target is where the walk ends: slow down */
        int st = NAVMESH_MOVING;
        if (!(f & NMF_PLANNED)) {
            status[r] = NAVMESH_WAITING;
            continue;
        }
        if ((f & NMF_OFF) || n == 0) {
            tx = c->gx[r];
            ty = c->gy[r];
            last = 1;
            st = NAVMESH_OFF_MESH;
        } else {
            int32_t k = c->next[r] < n ? c->next[r] : n - 1;
            tx = c->corner[2 * k][r];
            ty = c->corner[2 * k + 1][r];
            last = (f & NMF_END) && k == n - 1;
        }
        const float ex = tx - x, ey = ty - y, e = hypotf(ex, ey);
        if (last && e <= arrive[r]) st = (f & NMF_PARTIAL) ? NAVMESH_NO_WAY : NAVMESH_ARRIVED;
        status[r] = st;
        if (!(e > 0.0f)) continue;
        float vmax = c->a.max_speed[i], speed = vmax;
        if (last)
            speed = braking_speed(c->a.arrive_gain[i] * e, e, 0.0f, vmax, c->a.max_force[i], c->a.mass[i]);
        float kk = weight[r] * speed / e, wx = ex, wy = ey;
        /* Stalled, edge right: a walker slower than NAVMESH_STALL_SPEED of
         * its max speed turns its way to the corner to the right, up to
         * atan(NAVMESH_STALL_TURN) when it stands. In a door, two crowds
         * pressing the other way hold each other still, so the crowd
         * model's keep-right (which needs the other to come toward it)
         * never starts; turned to their own right both sides slide past
         * left side to left side and the door clears (tests/
         * test_navmesh.c, docs/navmesh.md "Measured"). Not on the last
         * leg: a walker arriving slows on purpose. */
        const float stall = NAVMESH_STALL_SPEED * vmax, now = hypotf(c->a.vx[i], c->a.vy[i]);
        if (!last && now < stall) {
            const float turn = NAVMESH_STALL_TURN * (1.0f - now / stall);
            wx = ex + ey * turn;
            wy = ey - ex * turn;
            kk /= sqrtf(1.0f + turn * turn); /* (wx, wy) is e sqrt(1 + turn^2) long */
        }
        c->a.dx[i] += kk * wx;
        c->a.dy[i] += kk * wy;
    }
}

int64_t navmesh_steer_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    const int32_t rows = w->comps[COMP_NAVMESH].table.count;
    paths_ctx_t c = paths_ctx(w);
    par_for(w, rows, 512, PAR_STATIC, steer_range, &c);
    return rows;
}

/* ---- the component ------------------------------------------------------------------ */

static void navmesh_defaults(shoal_agent_def_t* d) { d->navmesh = shoal_navmesh_default(); }

static int navmesh_needs(const shoal_agent_def_t* d) { return d->weights[SHOAL_BEHAVIOR_NAVMESH] != 0.0f; }

static const column_def_t navmesh_columns[NM_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [NM_WEIGHT] = COLUMN_WEIGHT("weights[navmesh]", SHOAL_BEHAVIOR_NAVMESH),
    [NM_GOAL_X] = COLUMN_COORDINATE("navmesh.goal[0]", navmesh.goal[0]),
    [NM_GOAL_Y] = COLUMN_COORDINATE("navmesh.goal[1]", navmesh.goal[1]),
    [NM_ARRIVE_DISTANCE] = COLUMN_AT_LEAST("navmesh.arrive_distance", navmesh.arrive_distance, 0.0),
    [NM_PLAN_X] = COLUMN_STATE_F32("plan[0]"),
    [NM_PLAN_Y] = COLUMN_STATE_F32("plan[1]"),
    [NM_FROM_X] = COLUMN_STATE_F32("from[0]"),
    [NM_FROM_Y] = COLUMN_STATE_F32("from[1]"),
    [NM_CORNER + 0] = COLUMN_STATE_F32("corner[0][0]"),
    [NM_CORNER + 1] = COLUMN_STATE_F32("corner[0][1]"),
    [NM_CORNER + 2] = COLUMN_STATE_F32("corner[1][0]"),
    [NM_CORNER + 3] = COLUMN_STATE_F32("corner[1][1]"),
    [NM_CORNER + 4] = COLUMN_STATE_F32("corner[2][0]"),
    [NM_CORNER + 5] = COLUMN_STATE_F32("corner[2][1]"),
    [NM_CORNER + 6] = COLUMN_STATE_F32("corner[3][0]"),
    [NM_CORNER + 7] = COLUMN_STATE_F32("corner[3][1]"),
    [NM_CORNERS] = COLUMN_STATE_I32("corners"),
    [NM_NEXT] = COLUMN_STATE_I32("next"),
    [NM_FLAGS] = COLUMN_STATE_I32("flags"),
    [NM_POLY] = COLUMN_STATE_U32("poly"),
    [NM_AGE] = COLUMN_STATE_I32("age"),
    [NM_STATUS] = {.name = "status",
                   .field = COLUMN_NO_FIELD,
                   .type = COLUMN_I32,
                   .flags = COLUMN_BITS | COLUMN_NOT_STATE},
    [NM_ROUTE_COUNT] = {.name = "route_count",
                        .field = COLUMN_NO_FIELD,
                        .type = COLUMN_I32,
                        .flags = COLUMN_BITS | COLUMN_HASH_NONZERO,
                        .since = NAVMESH_ROUTE_SINCE},
#define ROUTE_POINT(k)                                                                                       \
    [NM_ROUTE + 2 * (k)] = {.name = "route[" #k "][0]",                                                      \
                            .field = COLUMN_NO_FIELD,                                                        \
                            .type = COLUMN_F32,                                                              \
                            .flags = COLUMN_HASH_NONZERO,                                                    \
                            .since = NAVMESH_ROUTE_SINCE},                                                   \
                    [NM_ROUTE + 2 * (k) + 1] = {.name = "route[" #k "][1]",                                  \
                                                .field = COLUMN_NO_FIELD,                                    \
                                                .type = COLUMN_F32,                                          \
                                                .flags = COLUMN_HASH_NONZERO,                                \
                                                .since = NAVMESH_ROUTE_SINCE}
    ROUTE_POINT(0),
    ROUTE_POINT(1),
    ROUTE_POINT(2),
    ROUTE_POINT(3),
    ROUTE_POINT(4),
    ROUTE_POINT(5),
    ROUTE_POINT(6),
    ROUTE_POINT(7),
    ROUTE_POINT(8),
    ROUTE_POINT(9),
    ROUTE_POINT(10),
    ROUTE_POINT(11),
    ROUTE_POINT(12),
    ROUTE_POINT(13),
    ROUTE_POINT(14),
    ROUTE_POINT(15),
#undef ROUTE_POINT
};
_Static_assert(NMD_CORNERS == 4, "a column name per corner coordinate");
_Static_assert(NMD_ROUTE_POINTS == 16, "a column name per route point coordinate");

static shoal_status_t navmesh_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    shoal_status_t st = columns_check(w, d, where, navmesh_columns, NM_COUNT_);
    if (st != SHOAL_OK || d->weights[SHOAL_BEHAVIOR_NAVMESH] == 0.0f) return st;
    if (!nmd_available())
        return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: weights[navmesh]: %s", where, unavailable);
    if (w->dims != 2)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: weights[navmesh]: navigation meshes are 2D, this world is 3D", where);
    if (d->ground.enabled && d->ground.follow.path != -1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: weights[navmesh]: a ground vehicle on the navmesh takes its path from the "
                          "mesh, so ground.follow.path must be -1, got %d",
                          where, (int)d->ground.follow.path);
    return SHOAL_OK;
}

static void navmesh_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                              int fresh)
{
    (void)slot;
    (void)forward;
    columns_write(w, COMP_NAVMESH, r, d, navmesh_columns, NM_COUNT_);
    if (!fresh) return;
    for (int32_t c = NM_PLAN_X; c < NM_COUNT_; ++c) COMP_U(w, COMP_NAVMESH, c)[r] = 0u;
    COMP_I(w, COMP_NAVMESH, NM_STATUS)[r] = NAVMESH_WAITING;
}

static void navmesh_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_NAVMESH, r, d, navmesh_columns, NM_COUNT_);
}

static void edit_navmesh(shoal_agent_def_t* d, const void* a) { d->navmesh = *(const shoal_navmesh_t*)a; }

shoal_status_t shoal_agent_set_navmesh(shoal_world_t* w, shoal_agent_t id, const shoal_navmesh_t* navmesh)
{
    REQUIRE_PTR(w, navmesh, "agent_set_navmesh", "navmesh");
    return agent_edit(w, id, "agent_set_navmesh", edit_navmesh, navmesh, AGENT_EDIT_COMPONENT(COMP_NAVMESH));
}

/* ---- the API ------------------------------------------------------------------------ */

static shoal_status_t check_params(world_t* w, const char* where, const shoal_navmesh_params_t* p)
{
    if (!def_check_min(w, where, "cell", p->cell, 0.02f, 0)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!(p->cell <= 10.0f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: cell must be 0.02 to 10 m, got %g", where,
                          (double)p->cell);
    if (!def_check_min(w, where, "agent_radius", p->agent_radius, 0.0f, 1)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_min(w, where, "margin", p->margin, 0.0f, 0)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_min(w, where, "off_path_distance", p->off_path_distance, 0.0f, 1))
        return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_coordinates(w, where, "bounds", p->bounds, 4)) return SHOAL_ERR_INVALID_ARGUMENT;
    int any = p->bounds[0] != 0.0f || p->bounds[1] != 0.0f || p->bounds[2] != 0.0f || p->bounds[3] != 0.0f;
    if (any && !(p->bounds[2] > p->bounds[0] && p->bounds[3] > p->bounds[1]))
        return world_fail(
            w, SHOAL_ERR_INVALID_ARGUMENT,
            "%s: bounds must be x0, y0, x1, y1 with x1 > x0 and y1 > y0 (or all 0), got %g, %g, %g, %g",
            where, (double)p->bounds[0], (double)p->bounds[1], (double)p->bounds[2], (double)p->bounds[3]);
    if (p->replans_per_step < 1 || p->replans_per_step > 1000000)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: replans_per_step must be 1 to 1000000, got %d",
                          where, (int)p->replans_per_step);
    if (p->replan_interval < 0 || p->replan_interval > 1000000)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: replan_interval must be 0 to 1000000 steps, got %d", where,
                          (int)p->replan_interval);
    return SHOAL_OK;
}

static shoal_status_t navmesh_entry(world_t* w, const char* where)
{
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (!nmd_available()) return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: %s", where, unavailable);
    if (w->dims != 2)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: navigation meshes are 2D, this world is 3D",
                          where);
    return SHOAL_OK;
}

shoal_status_t shoal_world_set_navmesh(shoal_world_t* w, const shoal_navmesh_params_t* params)
{
    static const char* where = "world_set_navmesh";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, params, where, "params");
    shoal_status_t st = navmesh_entry(w, where);
    if (st == SHOAL_OK) st = check_params(w, where, params);
    if (st != SHOAL_OK) return st;
    if (params->bounds[2] > params->bounds[0]) {
        double b[4] = {params->bounds[0], params->bounds[1], params->bounds[2], params->bounds[3]};
        st = floor_check(w, where, params, b);
        if (st != SHOAL_OK) return st;
    }
    navmesh_world_t* nw = navmesh_of(w);
    nw->params = *params;
    nw->params_version++;
    return SHOAL_OK;
}

shoal_status_t shoal_world_get_navmesh(const shoal_world_t* w, shoal_navmesh_params_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "world_get_navmesh: out is NULL");
    *out = navmesh_of(w)->params;
    return SHOAL_OK;
}

shoal_status_t shoal_world_navmesh_update(shoal_world_t* w)
{
    static const char* where = "world_navmesh_update";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    shoal_status_t st = navmesh_entry(w, where);
    if (st != SHOAL_OK) return st;
    w->reserve_status = SHOAL_ERR_OUT_OF_MEMORY;
    if (!navmesh_current(w) && !navmesh_bake(w, where)) return w->reserve_status;
    return SHOAL_OK;
}

shoal_status_t shoal_world_navmesh_path(shoal_world_t* w, const float from[2], const float to[2],
                                        float* out_xy, int32_t capacity, int32_t* out_count,
                                        int32_t* out_partial)
{
    static const char* where = "world_navmesh_path";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, from, where, "from");
    REQUIRE_PTR(w, to, where, "to");
    REQUIRE_PTR(w, out_count, where, "out_count");
    if (capacity < 0 || (capacity > 0 && !out_xy))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: capacity must be >= 0, with out_xy not NULL when > 0 (got %d%s)", where,
                          (int)capacity, out_xy ? "" : " and NULL");
    for (int k = 0; k < 2; ++k)
        if (!isfinite(from[k]) || !isfinite(to[k]) || fabsf(from[k]) > 1e18f || fabsf(to[k]) > 1e18f)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: from and to must be finite and within 1e18 m, got (%g, %g) and (%g, %g)",
                              where, (double)from[0], (double)from[1], (double)to[0], (double)to[1]);
    shoal_status_t st = navmesh_entry(w, where);
    if (st != SHOAL_OK) return st;
    w->reserve_status = SHOAL_ERR_OUT_OF_MEMORY;
    if (!navmesh_current(w) && !navmesh_bake(w, where)) return w->reserve_status;
    navmesh_world_t* nw = navmesh_of(w);
    if (!nw->mesh || nw->query_count < 1)
        return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: the navigation mesh has no walkable polygon", where);
    int32_t count = 0, partial = 0;
    int rc = nmd_plan_whole(nw->queries[0], from[0], from[1], to[0], to[1], NAVMESH_REACH,
                            (float(*)[2])out_xy, capacity, &count, &partial);
    switch (rc) {
    case NMD_PLAN_OK: break;
    case NMD_PLAN_START_OFF:
    case NMD_PLAN_GOAL_OFF:
        return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: %s (%g, %g) has no walkable polygon within %g m",
                          where, rc == NMD_PLAN_START_OFF ? "from" : "to",
                          (double)(rc == NMD_PLAN_START_OFF ? from[0] : to[0]),
                          (double)(rc == NMD_PLAN_START_OFF ? from[1] : to[1]), (double)NAVMESH_REACH);
    case NMD_PLAN_NO_MEMORY:
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for the path's corners", where);
    default: return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: Detour found no path", where);
    }
    *out_count = count;
    if (out_partial) *out_partial = partial;
    return SHOAL_OK;
}

shoal_status_t shoal_world_navmesh_stats(const shoal_world_t* w, shoal_navmesh_stats_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "world_navmesh_stats: out is NULL");
    memset(out, 0, sizeof *out);
    const navmesh_world_t* nw = navmesh_of(w);
    const int32_t rows = w->comps[COMP_NAVMESH].table.count;
    const int32_t* status = COMP_I(w, COMP_NAVMESH, NM_STATUS);
    out->agents = rows;
    for (int32_t r = 0; r < rows; ++r) switch (status[r]) {
        case NAVMESH_ARRIVED: out->arrived++; break;
        case NAVMESH_NO_WAY: out->no_way++; break;
        case NAVMESH_OFF_MESH: out->off_mesh++; break;
        case NAVMESH_WAITING: out->waiting++; break;
        default: break;
        }
    out->replans = nw->replans;
    out->pending = nw->pending;
    out->polygons = nw->built_valid ? nmd_polygons(nw->mesh) : 0;
    return SHOAL_OK;
}

/* ---- the module's data: init, hash, rollback, snapshot ---------------------------------- */

static int navmesh_init(world_t* w)
{
    navmesh_world_t* nw = (navmesh_world_t*)mem_calloc(&w->alloc, sizeof *nw);
    w->module_data[MOD_NAVMESH] = nw;
    if (!nw) return 0;
    nw->params = shoal_navmesh_params_default();
    return 1;
}

static void navmesh_release(world_t* w)
{
    navmesh_world_t* nw = navmesh_of(w);
    if (!nw) return;
    free_mesh(w, nw);
    mem_free(&w->alloc, nw->want, (size_t)nw->scratch_rows * sizeof *nw->want);
    mem_free(&w->alloc, nw->chosen, (size_t)nw->scratch_rows * sizeof *nw->chosen);
    mem_free(&w->alloc, nw, sizeof *nw);
}

static uint64_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static int params_default(const shoal_navmesh_params_t* p)
{
    const shoal_navmesh_params_t d = shoal_navmesh_params_default();
    return p->cell == d.cell && p->agent_radius == d.agent_radius && p->margin == d.margin &&
           p->bounds[0] == 0.0f && p->bounds[1] == 0.0f && p->bounds[2] == 0.0f && p->bounds[3] == 0.0f &&
           p->replans_per_step == d.replans_per_step && p->replan_interval == d.replan_interval &&
           p->off_path_distance == d.off_path_distance;
}

/* Nothing while the parameters are the defaults, so that worlds without
 * navmeshes hash as before the module existed. */
static uint64_t navmesh_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb)
{
    const shoal_navmesh_params_t* p = &navmesh_of(w)->params;
    if (params_default(p)) return h;
    h = absorb(h, 0x6e766d0000000000ull);
    h = absorb(h, f32_bits(p->cell) << 32 | f32_bits(p->agent_radius));
    h = absorb(h, f32_bits(p->bounds[0]) << 32 | f32_bits(p->bounds[1]));
    h = absorb(h, f32_bits(p->bounds[2]) << 32 | f32_bits(p->bounds[3]));
    h = absorb(h, f32_bits(p->margin) << 32 | f32_bits(p->off_path_distance));
    h = absorb(h, (uint64_t)(uint32_t)p->replans_per_step << 32 | (uint32_t)p->replan_interval);
    return h;
}

static void navmesh_mark(const world_t* w, int64_t note[WORLD_MARK_WORDS])
{
    (void)note;
    navmesh_world_t* nw = navmesh_of(w);
    nw->marked_params = nw->params;
}

static void navmesh_rollback(world_t* w, const int64_t note[WORLD_MARK_WORDS])
{
    (void)note;
    navmesh_world_t* nw = navmesh_of(w);
    nw->params = nw->marked_params;
    nw->params_version++;
}

/* Section NMSH: f32 cell, agent_radius, bounds[4], margin,
 * off_path_distance, i32 replans_per_step, replan_interval. */
static void navmesh_save(const world_t* w, byte_writer_t* wr)
{
    const shoal_navmesh_params_t* p = &navmesh_of(w)->params;
    bw_f32(wr, p->cell);
    bw_f32(wr, p->agent_radius);
    for (int k = 0; k < 4; ++k) bw_f32(wr, p->bounds[k]);
    bw_f32(wr, p->margin);
    bw_f32(wr, p->off_path_distance);
    bw_i32(wr, p->replans_per_step);
    bw_i32(wr, p->replan_interval);
}

static int navmesh_load(world_t* w, byte_reader_t* rd)
{
    shoal_navmesh_params_t p;
    memset(&p, 0, sizeof p);
    p.cell = br_f32(rd);
    p.agent_radius = br_f32(rd);
    for (int k = 0; k < 4; ++k) p.bounds[k] = br_f32(rd);
    p.margin = br_f32(rd);
    p.off_path_distance = br_f32(rd);
    p.replans_per_step = br_i32(rd);
    p.replan_interval = br_i32(rd);
    if (rd->failed) return 0;
    if (check_params(w, "navmesh", &p) != SHOAL_OK) return br_fail(rd, "%s", w->error);
    navmesh_world_t* nw = navmesh_of(w);
    nw->params = p;
    nw->params_version++;
    return 1;
}

/* Agents on navmesh paths need Recast and Detour; their counts and flags
 * must be a path's. */
static int navmesh_check_loaded(const world_t* w, byte_reader_t* rd)
{
    const int32_t rows = w->comps[COMP_NAVMESH].table.count;
    if (rows > 0 && !nmd_available()) return br_fail(rd, "%d navmesh agents: %s", (int)rows, unavailable);
    const int32_t* n = COMP_I(w, COMP_NAVMESH, NM_CORNERS);
    const int32_t* next = COMP_I(w, COMP_NAVMESH, NM_NEXT);
    const int32_t* flags = COMP_I(w, COMP_NAVMESH, NM_FLAGS);
    const int32_t* route = COMP_I(w, COMP_NAVMESH, NM_ROUTE_COUNT);
    for (int32_t r = 0; r < rows; ++r) {
        if (n[r] < 0 || n[r] > NMD_CORNERS || next[r] < 0 || next[r] > n[r] || (flags[r] & ~0xf) != 0)
            return br_fail(rd, "navmesh row %d: corners %d, next %d, flags %d are not a path's", (int)r,
                           (int)n[r], (int)next[r], (int)flags[r]);
        if (route[r] < 0 || route[r] > NMD_ROUTE_POINTS)
            return br_fail(rd, "navmesh row %d: a vehicle's path of %d points (0 to %d)", (int)r,
                           (int)route[r], NMD_ROUTE_POINTS);
    }
    return 1;
}

const module_t navmesh_module = {
    .name = "navmesh",
    .column_count = NM_COUNT_,
    .columns = navmesh_columns,
    .init = navmesh_init,
    .release = navmesh_release,
    .defaults = navmesh_defaults,
    .needs = navmesh_needs,
    .validate = navmesh_validate,
    .reserve_step = navmesh_reserve_step,
    .write_row = navmesh_write_row,
    .read_row = navmesh_read_row,
    .hash = navmesh_hash,
    .mark = navmesh_mark,
    .rollback = navmesh_rollback,
    .snapshot_tag = BYTE_TAG('N', 'M', 'S', 'H'),
    .snapshot_since = NAVMESH_SNAPSHOT_VERSION,
    .save = navmesh_save,
    .load = navmesh_load,
    .check_loaded = navmesh_check_loaded,
};
