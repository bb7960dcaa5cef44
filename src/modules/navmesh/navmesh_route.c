/* Ground vehicles on the navigation mesh (shoal/navmesh.h, docs/navmesh.md):
 * their part of the paths pass. A vehicle keeps its path's first
 * NMD_ROUTE_POINTS points in its navmesh row (state, snapshot format
 * version 12), planned in the same pass, budget and order as walkers'
 * corners (navmesh.c), and its follower follows them (ground.c).
 *
 * Decisions:
 * - Points in columns, not a world path (ground_world.c): no allocation in
 *   the step, rows that move with the agent, the hash and snapshots for
 *   free; 0 for walkers, hashed only where not 0.
 * - The follower needs a path ahead of it, not a next corner: a cut path
 *   is planned again before less of it is left than the follower looks
 *   ahead, and "off its path" is the distance to the whole path.
 * - Once its follower has completed its path to the end it is done: its
 *   braking may carry it past the end, which must not ask for a new path. */
#include <math.h>
#include <string.h>

#include "modules/navmesh/navmesh_paths.h"

/* Where (x, y) is against a vehicle's path: the distance to it, and the
 * length of the path beyond its nearest point (the first, in order). */
static void route_where(const paths_ctx_t* c, int32_t r, float x, float y, float* dist, float* left)
{
    const int32_t n = c->route_count[r];
    const float* const* p = (const float* const*)c->route;
    float best = INFINITY, rest = 0.0f;
    if (n == 1) best = (p[0][r] - x) * (p[0][r] - x) + (p[1][r] - y) * (p[1][r] - y);
    for (int32_t k = 0; k + 1 < n; ++k) {
        const float ax = p[2 * k][r], ay = p[2 * k + 1][r], bx = p[2 * k + 2][r], by = p[2 * k + 3][r];
        const float len = hypotf(bx - ax, by - ay), d2 = seg_dist2(ax, ay, bx, by, x, y);
        if (d2 < best) {
            float t = len > 0.0f ? ((x - ax) * (bx - ax) + (y - ay) * (by - ay)) / (len * len) : 0.0f;
            t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
            best = d2;
            rest = (1.0f - t) * len;
        } else {
            rest += len;
        }
    }
    *dist = sqrtf(best);
    *left = rest;
}

/* A ground vehicle's wish: a path when it has none or a new goal; when a
 * cut path (not reaching the path's end) has less left than its follower
 * looks ahead (lookahead_max, the resampled points, arrive_radius: its
 * follower would otherwise slow for that end); when it is farther than
 * off_path_distance from its path (a stuck recovery reversed it off); by
 * age. Not once its follower has completed its path to the end. */
uint64_t navmesh_vehicle_wish(const paths_ctx_t* c, int32_t r, int32_t g, float x, float y, int32_t age)
{
    const int32_t f = c->flags[r];
    const uint32_t slot = c->slot[r];
    if (!(f & NMF_PLANNED) || c->plan_x[r] != c->gx[r] || c->plan_y[r] != c->gy[r] || c->route_count[r] == 0)
        return wish(0, age, slot);
    if (f & NMF_OFF) return age >= NAVMESH_OFF_RETRY ? wish(2, age, slot) : NO_WISH;
    /* stopped at its path's end: done, until a new goal (its braking may
     * carry it past the end, off the path) */
    if ((f & NMF_END) && c->g_completed[g]) return NO_WISH;
    float dist, left;
    route_where(c, r, x, y, &dist, &left);
    const float horizon = c->g_lookahead_max[g] + (float)(c->g_n[g] - 1) * c->g_dh[g] + c->g_arrive_radius[g];
    if (!(f & NMF_END) && left < horizon) return wish(0, age, slot);
    if (dist > c->off) return wish(1, age, slot);
    if (c->interval > 0 && age >= c->interval) return wish(2, age, slot);
    return NO_WISH;
}

/* Points of a vehicle's path closer than this to the one before are left
 * out (a start on a corner): the follower wants segments. */
#define NAVMESH_ROUTE_GAP 0.01f

/* A ground vehicle's path from (x, y), into its row: the first
 * NMD_ROUTE_POINTS points (cut there), without repeats; one the mesh
 * cannot place gets the straight line to its goal, as a walker heads
 * straight for it. The unused points are 0, so that the row's state is
 * the same whatever it held before. */
void navmesh_plan_vehicle(const paths_ctx_t* c, nmd_query_t* q, int32_t r, float x, float y)
{
    nmd_route_t route;
    int st = q ? nmd_plan_route(q, x, y, c->gx[r], c->gy[r], NAVMESH_REACH, &route) : NMD_PLAN_START_OFF;
    if (st != NMD_PLAN_OK || route.count == 0) {
        memset(&route, 0, sizeof route);
        route.point[0][0] = x;
        route.point[0][1] = y;
        route.point[1][0] = c->gx[r];
        route.point[1][1] = c->gy[r];
        route.count = 2;
        c->flags[r] = NMF_PLANNED | NMF_OFF;
    } else {
        c->flags[r] = NMF_PLANNED | (route.end ? NMF_END : 0) | (route.partial ? NMF_PARTIAL : 0);
    }
    c->poly[r] = st == NMD_PLAN_OK ? route.poly : 0u;
    int32_t n = 0;
    for (int32_t k = 0; k < route.count; ++k) {
        const float px = route.point[k][0], py = route.point[k][1];
        if (n > 0 && hypotf(px - c->route[2 * n - 2][r], py - c->route[2 * n - 1][r]) < NAVMESH_ROUTE_GAP)
            continue;
        c->route[2 * n][r] = px;
        c->route[2 * n + 1][r] = py;
        n++;
    }
    for (int32_t k = 2 * n; k < 2 * NMD_ROUTE_POINTS; ++k) c->route[k][r] = 0.0f;
    c->route_count[r] = n;
}

/* A ground vehicle's status: arrived (or at the end of a path short of
 * its goal) once its follower has completed its path to the end, or has
 * a single point left (planned at its goal). */
int navmesh_vehicle_status(const paths_ctx_t* c, int32_t r, int32_t g)
{
    const int32_t f = c->flags[r];
    if (!(f & NMF_PLANNED)) return NAVMESH_WAITING;
    if (f & NMF_OFF) return NAVMESH_OFF_MESH;
    if (!(f & NMF_END) || !(c->g_completed[g] || c->route_count[r] < 2)) return NAVMESH_MOVING;
    return (f & NMF_PARTIAL) ? NAVMESH_NO_WAY : NAVMESH_ARRIVED;
}
