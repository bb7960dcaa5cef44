/* The navmesh module's paths pass (navmesh_paths, navmesh_steer): its
 * context, shared by navmesh.c (the mesh, walkers' corners, the pass) and
 * navmesh_route.c (ground vehicles' paths). Private to the module. */
#ifndef SHOAL_MODULES_NAVMESH_PATHS_H
#define SHOAL_MODULES_NAVMESH_PATHS_H

#include "modules/navmesh/navmesh.h"
#include "modules/agent.h"

/* How far (m) from the mesh a start or a goal may be. */
#define NAVMESH_REACH 2.0f
/* Steps before an agent the mesh could not place tries again. */
#define NAVMESH_OFF_RETRY 20

/* The columns of one pass over the navmesh rows (paths_ctx, navmesh.c). */
typedef struct paths_ctx_t {
    world_t* w;
    agent_view_t a;
    navmesh_world_t* nw;
    const uint32_t* slot;
    const int32_t* agent_row;
    const float *gx, *gy;
    float *plan_x, *plan_y, *from_x, *from_y, *corner[2 * NMD_CORNERS];
    int32_t *corners, *next, *flags, *age;
    uint32_t* poly;
    float reach, off;
    int32_t interval;
    /* ground vehicles: their paths, and what of their follower decides
     * when a path runs out (the ground component; none when it is empty) */
    int32_t* route_count;
    float* route[2 * NMD_ROUTE_POINTS];
    const component_t* ground;
    const int32_t *g_n, *g_completed;
    const float *g_dh, *g_lookahead_max, *g_arrive_radius;
} paths_ctx_t;

/* The ground row of a navmesh row's agent, or -1: not a ground vehicle. */
static inline int32_t vehicle_row(const paths_ctx_t* c, int32_t r)
{
    return c->ground ? component_row(c->ground, c->slot[r]) : -1;
}

/* The squared distance from (x, y) to the segment a b. */
static inline float seg_dist2(float ax, float ay, float bx, float by, float x, float y)
{
    float dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
    float t = len2 > 0.0f ? ((x - ax) * dx + (y - ay) * dy) / len2 : 0.0f;
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    float ex = ax + t * dx - x, ey = ay + t * dy - y;
    return ex * ex + ey * ey;
}

/* No plan wished. */
#define NO_WISH UINT64_MAX

/* Order key of a wish: class (0 no path, 1 off it, 2 due by age), then
 * the longest waiting, then the slot. */
static inline uint64_t wish(int cls, int32_t age, uint32_t slot)
{
    uint64_t waited = (uint64_t)(age < 0 ? 0 : age > 0x3fffffff ? 0x3fffffff : age);
    return (uint64_t)cls << 62 | (0x3fffffffull - waited) << 32 | slot;
}

/* A ground vehicle's wish for a plan (NO_WISH: none). */
uint64_t navmesh_vehicle_wish(const paths_ctx_t* c, int32_t r, int32_t g, float x, float y, int32_t age);
/* A ground vehicle's path from (x, y), planned through q into its row. */
void navmesh_plan_vehicle(const paths_ctx_t* c, nmd_query_t* q, int32_t r, float x, float y);
/* A ground vehicle's status (enum navmesh_status). */
int navmesh_vehicle_status(const paths_ctx_t* c, int32_t r, int32_t g);

#endif /* SHOAL_MODULES_NAVMESH_PATHS_H */
