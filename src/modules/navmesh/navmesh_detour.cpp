/* The navmesh module's bridge to Recast and Detour (navmesh_detour.h),
 * through their public API only: Recast bakes a solo navmesh from a flat
 * floor with the walls and static obstacles cut out, Detour answers path
 * queries over it (A* over the polygons, then the funnel's corners).
 *
 * The bake, in Recast's order: a floor of two triangles over the bounds is
 * rasterized into a heightfield of `cell` m cells; the compact heightfield
 * is built from it; every wall segment, as a quad 1.5 cells wide, and every
 * static obstacle, as a cylinder, marks its cells unwalkable; erosion by
 * the agent radius then keeps the walkable area that far from them; then
 * watershed regions, contours, the polygon mesh (6 vertices a polygon at
 * most), its detail mesh, and Detour's mesh data of one tile. Nothing
 * here throws: every allocation is Recast's or Detour's, checked. */
#include "modules/navmesh/navmesh_detour.h"

#include <math.h>
#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <DetourCrowd.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <DetourNavMeshQuery.h>
#include <Recast.h>

namespace {

/* Height of a cell (m), the walkable height and climb (m): the floor is
 * flat, so these only have to be consistent. */
const float CELL_HEIGHT = 0.2f;
const float AGENT_HEIGHT = 2.0f;
const float AGENT_CLIMB = 0.4f;
/* Search nodes of a query and polygons of a path. */
const int QUERY_NODES = 8192;
const int MAX_PATH = 2048;
/* Polygon flag of the walkable area (the query filter includes it). */
const unsigned short WALK = 1;

struct Baked {
    rcHeightfield* hf = nullptr;
    rcCompactHeightfield* chf = nullptr;
    rcContourSet* cset = nullptr;
    rcPolyMesh* pmesh = nullptr;
    rcPolyMeshDetail* dmesh = nullptr;
    ~Baked()
    {
        rcFreeHeightField(hf);
        rcFreeCompactHeightfield(chf);
        rcFreeContourSet(cset);
        rcFreePolyMesh(pmesh);
        rcFreePolyMeshDetail(dmesh);
    }
};

int fail(char* msg, size_t cap, const char* what)
{
    snprintf(msg, cap, "Recast: %s", what);
    return 1;
}

} // namespace

struct nmd_mesh {
    dtNavMesh* nav;
    int32_t polys;
};

struct nmd_query {
    dtNavMeshQuery* q;
    dtQueryFilter filter;
    dtPolyRef path[MAX_PATH];
    float straight[(NMD_CORNERS + 1) * 3];
    unsigned char straight_flags[NMD_CORNERS + 1];
    dtPolyRef straight_refs[NMD_CORNERS + 1];
    float route[NMD_ROUTE_POINTS * 3];
    unsigned char route_flags[NMD_ROUTE_POINTS];
    dtPolyRef route_refs[NMD_ROUTE_POINTS];
};

extern "C" int nmd_available(void) { return 1; }

extern "C" int nmd_build(const nmd_input_t* in, nmd_mesh_t** out, char* msg, size_t cap)
{
    *out = nullptr;
    rcContext ctx(false);
    rcConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.cs = in->cell;
    cfg.ch = CELL_HEIGHT;
    cfg.walkableSlopeAngle = 45.0f;
    cfg.walkableHeight = (int)ceilf(AGENT_HEIGHT / cfg.ch);
    cfg.walkableClimb = (int)floorf(AGENT_CLIMB / cfg.ch);
    cfg.walkableRadius = (int)ceilf(in->radius / cfg.cs);
    cfg.maxEdgeLen = (int)(12.0f / cfg.cs);
    cfg.maxSimplificationError = 1.3f;
    cfg.minRegionArea = 8 * 8;
    cfg.mergeRegionArea = 20 * 20;
    cfg.maxVertsPerPoly = 6;
    cfg.detailSampleDist = cfg.cs * 6.0f;
    cfg.detailSampleMaxError = cfg.ch;
    cfg.bmin[0] = in->bounds[0];
    cfg.bmin[1] = -1.0f;
    cfg.bmin[2] = in->bounds[1];
    cfg.bmax[0] = in->bounds[2];
    cfg.bmax[1] = AGENT_HEIGHT + 1.0f;
    cfg.bmax[2] = in->bounds[3];
    rcCalcGridSize(cfg.bmin, cfg.bmax, cfg.cs, &cfg.width, &cfg.height);

    Baked b;
    b.hf = rcAllocHeightfield();
    if (!b.hf || !rcCreateHeightfield(&ctx, *b.hf, cfg.width, cfg.height, cfg.bmin, cfg.bmax, cfg.cs, cfg.ch))
        return fail(msg, cap, "out of memory for the heightfield");
    const float x0 = in->bounds[0], z0 = in->bounds[1], x1 = in->bounds[2], z1 = in->bounds[3];
    const float floor_verts[12] = {x0, 0.0f, z0, x0, 0.0f, z1, x1, 0.0f, z1, x1, 0.0f, z0};
    const int floor_tris[6] = {0, 1, 2, 0, 2, 3};
    const unsigned char areas[2] = {RC_WALKABLE_AREA, RC_WALKABLE_AREA};
    if (!rcRasterizeTriangles(&ctx, floor_verts, 4, floor_tris, areas, 2, *b.hf, cfg.walkableClimb))
        return fail(msg, cap, "rasterizing the floor failed");
    b.chf = rcAllocCompactHeightfield();
    if (!b.chf || !rcBuildCompactHeightfield(&ctx, cfg.walkableHeight, cfg.walkableClimb, *b.hf, *b.chf))
        return fail(msg, cap, "out of memory for the compact heightfield");
    rcFreeHeightField(b.hf);
    b.hf = nullptr;

    /* walls: a quad 1.5 cells wide round each segment, so that a cell
     * center lies in it on every row and column it crosses */
    const float t = 0.75f * cfg.cs;
    for (int32_t i = 0; i < in->seg_count; ++i) {
        const float* s = in->seg[i];
        float dx = s[2] - s[0], dy = s[3] - s[1], len = sqrtf(dx * dx + dy * dy);
        if (len > 0.0f) {
            dx /= len;
            dy /= len;
        } else {
            dx = 1.0f;
            dy = 0.0f;
        }
        const float nx = -dy, ny = dx;
        float quad[12] = {s[0] - t * dx + t * nx, 0.0f, s[1] - t * dy + t * ny,
                          s[0] - t * dx - t * nx, 0.0f, s[1] - t * dy - t * ny,
                          s[2] + t * dx - t * nx, 0.0f, s[3] + t * dy - t * ny,
                          s[2] + t * dx + t * nx, 0.0f, s[3] + t * dy + t * ny};
        rcMarkConvexPolyArea(&ctx, quad, 4, -1.0f, AGENT_HEIGHT, RC_NULL_AREA, *b.chf);
    }
    for (int32_t i = 0; i < in->disc_count; ++i) {
        const float pos[3] = {in->disc[i][0], -1.0f, in->disc[i][1]};
        rcMarkCylinderArea(&ctx, pos, in->disc[i][2], AGENT_HEIGHT + 1.0f, RC_NULL_AREA, *b.chf);
    }
    if (!rcErodeWalkableArea(&ctx, cfg.walkableRadius, *b.chf))
        return fail(msg, cap, "out of memory eroding the walkable area");
    if (!rcBuildDistanceField(&ctx, *b.chf)) return fail(msg, cap, "out of memory for the distance field");
    if (!rcBuildRegions(&ctx, *b.chf, 0, cfg.minRegionArea, cfg.mergeRegionArea))
        return fail(msg, cap, "building the regions failed");
    b.cset = rcAllocContourSet();
    if (!b.cset || !rcBuildContours(&ctx, *b.chf, cfg.maxSimplificationError, cfg.maxEdgeLen, *b.cset))
        return fail(msg, cap, "building the contours failed");
    b.pmesh = rcAllocPolyMesh();
    if (!b.pmesh || !rcBuildPolyMesh(&ctx, *b.cset, cfg.maxVertsPerPoly, *b.pmesh))
        return fail(msg, cap, "building the polygon mesh failed");
    b.dmesh = rcAllocPolyMeshDetail();
    if (!b.dmesh || !rcBuildPolyMeshDetail(&ctx, *b.pmesh, *b.chf, cfg.detailSampleDist,
                                           cfg.detailSampleMaxError, *b.dmesh))
        return fail(msg, cap, "building the detail mesh failed");
    if (b.pmesh->npolys == 0) return 0; /* nothing walkable: no mesh */
    if (b.pmesh->nverts >= 0xffff) {
        fail(msg, cap, "the mesh has 65535 vertices or more (a larger cell)");
        return 2;
    }
    for (int i = 0; i < b.pmesh->npolys; ++i)
        b.pmesh->flags[i] = b.pmesh->areas[i] == RC_WALKABLE_AREA ? WALK : 0;

    dtNavMeshCreateParams p;
    memset(&p, 0, sizeof p);
    p.verts = b.pmesh->verts;
    p.vertCount = b.pmesh->nverts;
    p.polys = b.pmesh->polys;
    p.polyAreas = b.pmesh->areas;
    p.polyFlags = b.pmesh->flags;
    p.polyCount = b.pmesh->npolys;
    p.nvp = b.pmesh->nvp;
    p.detailMeshes = b.dmesh->meshes;
    p.detailVerts = b.dmesh->verts;
    p.detailVertsCount = b.dmesh->nverts;
    p.detailTris = b.dmesh->tris;
    p.detailTriCount = b.dmesh->ntris;
    p.walkableHeight = AGENT_HEIGHT;
    p.walkableRadius = in->radius;
    p.walkableClimb = AGENT_CLIMB;
    rcVcopy(p.bmin, b.pmesh->bmin);
    rcVcopy(p.bmax, b.pmesh->bmax);
    p.cs = cfg.cs;
    p.ch = cfg.ch;
    p.buildBvTree = true;
    unsigned char* data = nullptr;
    int size = 0;
    if (!dtCreateNavMeshData(&p, &data, &size)) return fail(msg, cap, "Detour could not make the mesh data");
    dtNavMesh* nav = dtAllocNavMesh();
    if (!nav) {
        dtFree(data);
        return fail(msg, cap, "out of memory for the Detour mesh");
    }
    if (dtStatusFailed(nav->init(data, size, DT_TILE_FREE_DATA))) {
        dtFree(data);
        dtFreeNavMesh(nav);
        return fail(msg, cap, "Detour could not load the mesh data");
    }
    nmd_mesh* m = static_cast<nmd_mesh*>(calloc(1, sizeof *m));
    if (!m) {
        dtFreeNavMesh(nav);
        return fail(msg, cap, "out of memory for the mesh");
    }
    m->nav = nav;
    m->polys = b.pmesh->npolys;
    *out = m;
    return 0;
}

extern "C" void nmd_free(nmd_mesh_t* mesh)
{
    if (!mesh) return;
    dtFreeNavMesh(mesh->nav);
    free(mesh);
}

extern "C" int32_t nmd_polygons(const nmd_mesh_t* mesh) { return mesh ? mesh->polys : 0; }

extern "C" nmd_query_t* nmd_query_new(const nmd_mesh_t* mesh)
{
    if (!mesh) return nullptr;
    void* mem = malloc(sizeof(nmd_query));
    if (!mem) return nullptr;
    nmd_query* q = new (mem) nmd_query;
    q->q = dtAllocNavMeshQuery();
    if (!q->q || dtStatusFailed(q->q->init(mesh->nav, QUERY_NODES))) {
        nmd_query_free(q);
        return nullptr;
    }
    q->filter.setIncludeFlags(WALK);
    q->filter.setExcludeFlags(0);
    return q;
}

extern "C" void nmd_query_free(nmd_query_t* q)
{
    if (!q) return;
    dtFreeNavMeshQuery(q->q);
    q->~nmd_query();
    free(q);
}

namespace {

/* The polygons from the start to the goal, and where the path ends:
 * NMD_PLAN_OK with *n polygons in q->path, the start's point on the mesh in
 * sp and the path's end in end; *truncated when the search stopped short,
 * *partial when the goal's polygon cannot be reached. */
int plan_polys(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach, int* n, float sp[3],
               float end[3], dtPolyRef* sref, int* truncated, int* partial)
{
    const float ext[3] = {reach, AGENT_HEIGHT, reach};
    const float s[3] = {sx, 0.0f, sy}, g[3] = {gx, 0.0f, gy};
    dtPolyRef gref = 0;
    float gp[3];
    *sref = 0;
    *n = 0;
    *truncated = *partial = 0;
    if (dtStatusFailed(q->q->findNearestPoly(s, ext, &q->filter, sref, sp)) || !*sref)
        return NMD_PLAN_START_OFF;
    if (dtStatusFailed(q->q->findNearestPoly(g, ext, &q->filter, &gref, gp)) || !gref)
        return NMD_PLAN_GOAL_OFF;
    dtStatus st = q->q->findPath(*sref, gref, sp, gp, &q->filter, q->path, n, MAX_PATH);
    if (dtStatusFailed(st) || *n == 0) return NMD_PLAN_FAILED;
    rcVcopy(end, gp);
    if (q->path[*n - 1] != gref) {
        /* the goal's polygon is not reached: the end is the point of the
         * last polygon nearest the goal; no way there unless the search
         * stopped short (out of nodes or of path) */
        if (dtStatusFailed(q->q->closestPointOnPoly(q->path[*n - 1], gp, end, nullptr)))
            return NMD_PLAN_FAILED;
        *truncated = (st & (DT_OUT_OF_NODES | DT_BUFFER_TOO_SMALL)) != 0;
        *partial = !*truncated;
    }
    return NMD_PLAN_OK;
}

} // namespace

extern "C" int nmd_plan(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach, nmd_path_t* out)
{
    memset(out, 0, sizeof *out);
    int n = 0, truncated = 0, partial = 0;
    float sp[3], end[3];
    dtPolyRef sref = 0;
    int rc = plan_polys(q, sx, sy, gx, gy, reach, &n, sp, end, &sref, &truncated, &partial);
    if (rc != NMD_PLAN_START_OFF && rc != NMD_PLAN_GOAL_OFF) out->poly = sref; /* both ends on the mesh */
    if (rc != NMD_PLAN_OK) return rc;
    out->partial = partial;
    int m = 0;
    dtStatus st = q->q->findStraightPath(sp, end, q->path, n, q->straight, q->straight_flags,
                                         q->straight_refs, &m, NMD_CORNERS + 1, 0);
    if (dtStatusFailed(st) || m == 0) return NMD_PLAN_FAILED;
    /* the first point is the start itself */
    int first = m > 1 ? 1 : 0;
    for (int k = first; k < m; ++k) {
        out->corner[out->count][0] = q->straight[3 * k];
        out->corner[out->count][1] = q->straight[3 * k + 2];
        out->count++;
    }
    /* a search stopped short ends nowhere: its last corner is a waypoint */
    out->end = !truncated && (q->straight_flags[m - 1] & DT_STRAIGHTPATH_END) != 0;
    if (!out->end) out->partial = 0; /* decided when the end comes in sight */
    return NMD_PLAN_OK;
}

extern "C" int nmd_plan_route(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach,
                              nmd_route_t* out)
{
    memset(out, 0, sizeof *out);
    int n = 0, truncated = 0, partial = 0;
    float sp[3], end[3];
    dtPolyRef sref = 0;
    int rc = plan_polys(q, sx, sy, gx, gy, reach, &n, sp, end, &sref, &truncated, &partial);
    if (rc != NMD_PLAN_START_OFF && rc != NMD_PLAN_GOAL_OFF) out->poly = sref;
    if (rc != NMD_PLAN_OK) return rc;
    int m = 0;
    dtStatus st = q->q->findStraightPath(sp, end, q->path, n, q->route, q->route_flags, q->route_refs, &m,
                                         NMD_ROUTE_POINTS, 0);
    if (dtStatusFailed(st) || m == 0) return NMD_PLAN_FAILED;
    for (int k = 0; k < m; ++k) {
        out->point[k][0] = q->route[3 * k];
        out->point[k][1] = q->route[3 * k + 2];
    }
    out->count = m;
    /* a full buffer may still hold the end: its flag says */
    out->end = !truncated && (q->route_flags[m - 1] & DT_STRAIGHTPATH_END) != 0;
    out->partial = out->end && partial;
    return NMD_PLAN_OK;
}

extern "C" int nmd_plan_whole(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach,
                              float (*out)[2], int32_t capacity, int32_t* count, int32_t* partial)
{
    *count = 0;
    *partial = 0;
    int n = 0, truncated = 0, short_of_goal = 0;
    float sp[3], end[3];
    dtPolyRef sref = 0;
    int rc = plan_polys(q, sx, sy, gx, gy, reach, &n, sp, end, &sref, &truncated, &short_of_goal);
    if (rc != NMD_PLAN_OK) return rc;
    /* without crossings, a straight path has at most a corner a polygon,
     * and the start and the end */
    const int room = n + 2;
    float* pts = (float*)malloc(sizeof(float) * 3 * (size_t)room);
    unsigned char* flags = (unsigned char*)malloc((size_t)room);
    dtPolyRef* refs = (dtPolyRef*)malloc(sizeof(dtPolyRef) * (size_t)room);
    int m = 0;
    if (!pts || !flags || !refs) {
        rc = NMD_PLAN_NO_MEMORY;
    } else if (dtStatusFailed(q->q->findStraightPath(sp, end, q->path, n, pts, flags, refs, &m, room, 0)) ||
               m == 0) {
        rc = NMD_PLAN_FAILED;
    } else {
        for (int k = 0; k < m && k < capacity; ++k) {
            out[k][0] = pts[3 * k];
            out[k][1] = pts[3 * k + 2];
        }
        *count = m;
        *partial = short_of_goal || truncated;
    }
    free(pts);
    free(flags);
    free(refs);
    return rc;
}

/* ---- DetourCrowd, for `shoal bench navmesh` only --------------------------- */

namespace {

double now_seconds()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Agents (all of one radius) closer than 0.99 of the radii sum to another,
 * and the smallest center distance over the radii sum, through a grid of
 * cells one radii sum wide. */
struct OverlapGrid {
    int32_t* head = nullptr;
    int32_t* next = nullptr;
    int32_t nx = 0, ny = 0;
    float x0 = 0, y0 = 0, cell = 1;
    ~OverlapGrid()
    {
        free(head);
        free(next);
    }
    bool init(const float* bmin, const float* bmax, float sum, int32_t n)
    {
        cell = sum;
        x0 = bmin[0];
        y0 = bmin[2];
        nx = (int32_t)((bmax[0] - bmin[0]) / cell) + 1;
        ny = (int32_t)((bmax[2] - bmin[2]) / cell) + 1;
        head = static_cast<int32_t*>(malloc((size_t)nx * (size_t)ny * sizeof *head));
        next = static_cast<int32_t*>(malloc((size_t)(n > 0 ? n : 1) * sizeof *next));
        return head && next;
    }
    int32_t index(float v, float o, int32_t m) const
    {
        int32_t i = (int32_t)floorf((v - o) / cell);
        return i < 0 ? 0 : i >= m ? m - 1 : i;
    }
    void count(const float (*xy)[2], int32_t n, int32_t* overlapping, float* closest)
    {
        for (int64_t b = 0; b < (int64_t)nx * ny; ++b) head[b] = -1;
        for (int32_t k = 0; k < n; ++k) {
            int32_t b = index(xy[k][1], y0, ny) * nx + index(xy[k][0], x0, nx);
            next[k] = head[b];
            head[b] = k;
        }
        int32_t over = 0;
        float best = INFINITY;
        for (int32_t k = 0; k < n; ++k) {
            const int32_t bi = index(xy[k][0], x0, nx), bj = index(xy[k][1], y0, ny);
            float mine = INFINITY;
            for (int32_t j = bj - 1; j <= bj + 1; ++j)
                for (int32_t i = bi - 1; i <= bi + 1; ++i) {
                    if (i < 0 || j < 0 || i >= nx || j >= ny) continue;
                    for (int32_t o = head[j * nx + i]; o >= 0; o = next[o]) {
                        if (o == k) continue;
                        float d = hypotf(xy[o][0] - xy[k][0], xy[o][1] - xy[k][1]);
                        if (d < mine) mine = d;
                    }
                }
            mine /= cell;
            over += mine < 0.99f;
            if (mine < best) best = mine;
        }
        *overlapping = over;
        *closest = best;
    }
};

} // namespace

extern "C" int nmd_crowd_run(const nmd_mesh_t* mesh, const float (*start)[2], const float (*goal)[2],
                             int32_t n, float radius, float max_speed, float max_accel, float arrive_distance,
                             float dt, int32_t steps, nmd_crowd_run_t* out, char* msg, size_t cap)
{
    memset(out, 0, sizeof *out);
    out->closest_pair = out->min_closest_pair = INFINITY;
    if (!mesh || n < 1 || n > NMD_CROWD_MAX_AGENTS) {
        snprintf(msg, cap, "DetourCrowd: %d agents: a mesh and 1 to %d agents are needed", (int)n,
                 NMD_CROWD_MAX_AGENTS);
        return 1;
    }
    dtCrowd* crowd = dtAllocCrowd();
    dtNavMeshQuery* q = dtAllocNavMeshQuery();
    float(*xy)[2] = static_cast<float(*)[2]>(malloc((size_t)n * sizeof *xy));
    float(*target)[2] = static_cast<float(*)[2]>(malloc((size_t)n * sizeof *target));
    int* idx = static_cast<int*>(malloc((size_t)n * sizeof *idx));
    OverlapGrid grid;
    int rc = 1;
    const dtNavMesh* nav = mesh->nav;
    const float* bmin = nav->getTile(0)->header->bmin;
    const float* bmax = nav->getTile(0)->header->bmax;
    if (!crowd || !q || !xy || !target || !idx || !grid.init(bmin, bmax, 2.0f * radius, n)) {
        snprintf(msg, cap, "DetourCrowd: out of memory for %d agents", (int)n);
    } else if (!crowd->init(n, radius, mesh->nav) || dtStatusFailed(q->init(mesh->nav, QUERY_NODES))) {
        snprintf(msg, cap, "DetourCrowd: dtCrowd::init failed for %d agents", (int)n);
    } else {
        /* DetourCrowd sample's highest obstacle avoidance quality */
        dtObstacleAvoidanceParams oa = *crowd->getObstacleAvoidanceParams(0);
        oa.velBias = 0.5f;
        oa.adaptiveDivs = 7;
        oa.adaptiveRings = 3;
        oa.adaptiveDepth = 3;
        crowd->setObstacleAvoidanceParams(0, &oa);
        dtCrowdAgentParams ap;
        memset(&ap, 0, sizeof ap);
        ap.radius = radius;
        ap.height = AGENT_HEIGHT;
        ap.maxAcceleration = max_accel;
        ap.maxSpeed = max_speed;
        ap.collisionQueryRange = 12.0f * radius;
        ap.pathOptimizationRange = 30.0f * radius;
        ap.updateFlags = DT_CROWD_ANTICIPATE_TURNS | DT_CROWD_OPTIMIZE_VIS | DT_CROWD_OPTIMIZE_TOPO |
                         DT_CROWD_OBSTACLE_AVOIDANCE | DT_CROWD_SEPARATION;
        ap.obstacleAvoidanceType = 0;
        ap.separationWeight = 2.0f;
        dtQueryFilter filter;
        filter.setIncludeFlags(WALK);
        filter.setExcludeFlags(0);
        const float ext[3] = {2.0f, AGENT_HEIGHT, 2.0f};
        for (int32_t i = 0; i < n; ++i) {
            idx[i] = -1;
            const float p[3] = {start[i][0], 0.0f, start[i][1]};
            const float g[3] = {goal[i][0], 0.0f, goal[i][1]};
            dtPolyRef gref = 0;
            float gp[3];
            if (dtStatusFailed(q->findNearestPoly(g, ext, &filter, &gref, gp)) || !gref) continue;
            int a = crowd->addAgent(p, &ap);
            if (a < 0) continue;
            if (!crowd->requestMoveTarget(a, gref, gp)) {
                crowd->removeAgent(a);
                continue;
            }
            idx[i] = a;
            target[i][0] = gp[0];
            target[i][1] = gp[2];
            out->placed++;
        }
        out->min_closest_pair = INFINITY;
        for (int32_t s = 0; s < steps; ++s) {
            const double t0 = now_seconds();
            crowd->update(dt, nullptr);
            out->seconds += now_seconds() - t0;
            out->steps++;
            int32_t m = 0, arrived = 0;
            for (int32_t i = 0; i < n; ++i) {
                if (idx[i] < 0) continue;
                const dtCrowdAgent* ag = crowd->getAgent(idx[i]);
                xy[m][0] = ag->npos[0];
                xy[m][1] = ag->npos[2];
                arrived += hypotf(xy[m][0] - target[i][0], xy[m][1] - target[i][1]) <= arrive_distance;
                m++;
            }
            grid.count(xy, m, &out->overlapping, &out->closest_pair);
            out->arrived = arrived;
            if (out->overlapping > out->peak_overlapping) out->peak_overlapping = out->overlapping;
            if (out->closest_pair < out->min_closest_pair) out->min_closest_pair = out->closest_pair;
            if (arrived == out->placed) break;
        }
        rc = 0;
    }
    free(xy);
    free(target);
    free(idx);
    dtFreeNavMeshQuery(q);
    dtFreeCrowd(crowd);
    return rc;
}
