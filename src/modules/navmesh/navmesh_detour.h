/* The navmesh module's bridge to Recast and Detour (navmesh_detour.cpp, a
 * C++ translation unit built only with SHOAL_WITH_RECAST; without it,
 * navmesh_detour_none.c, which bakes nothing). Plain C on this side: the
 * module never sees a C++ type.
 *
 * Coordinates: shoal's (x, y) floor is Recast's (x, 0, y), Recast being
 * Y-up. A mesh is read-only once baked; each worker plans through a query
 * object of its own (Detour's dtNavMeshQuery keeps its search nodes), so
 * any number of workers may plan at once over one mesh. */
#ifndef SHOAL_MODULES_NAVMESH_DETOUR_H
#define SHOAL_MODULES_NAVMESH_DETOUR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Corners an agent keeps of its path. */
#define NMD_CORNERS 4
/* Points a ground vehicle keeps of its path (nmd_route_t). */
#define NMD_ROUTE_POINTS 16

typedef struct nmd_mesh nmd_mesh_t;
typedef struct nmd_query nmd_query_t;

/* What a mesh is baked from. */
typedef struct nmd_input_t {
    const float (*seg)[4]; /* wall segments x0, y0, x1, y1 */
    int32_t seg_count;
    const float (*disc)[3]; /* static obstacles x, y, r */
    int32_t disc_count;
    float bounds[4]; /* the floor: x0, y0, x1, y1 */
    float cell;      /* m */
    float radius;    /* m: the walkable area keeps this far from walls and obstacles */
} nmd_input_t;

/* 1 when built with Recast and Detour. */
int nmd_available(void);

/* Bake a mesh. 0 and *out (NULL when the floor has no walkable polygon
 * left) on success; else a message in msg and 2 when the mesh is too
 * large for Detour, 1 for any other failure (out of memory). */
int nmd_build(const nmd_input_t* in, nmd_mesh_t** out, char* msg, size_t cap);
void nmd_free(nmd_mesh_t* mesh);
int32_t nmd_polygons(const nmd_mesh_t* mesh);

/* A query object over a mesh; NULL when out of memory. */
nmd_query_t* nmd_query_new(const nmd_mesh_t* mesh);
void nmd_query_free(nmd_query_t* q);

/* A planned path: its first corners after the start. */
typedef struct nmd_path_t {
    float corner[NMD_CORNERS][2];
    int32_t count;   /* corners written (0 to NMD_CORNERS) */
    int32_t end;     /* 1: the last corner is the path's end */
    int32_t partial; /* 1: the path's end is not the goal (no way there) */
    uint32_t poly;   /* the start's polygon */
} nmd_path_t;

enum nmd_plan_status {
    NMD_PLAN_OK = 0,
    NMD_PLAN_START_OFF = 1, /* no polygon near the start */
    NMD_PLAN_GOAL_OFF = 2,  /* no polygon near the goal */
    NMD_PLAN_FAILED = 3,
    NMD_PLAN_NO_MEMORY = 4
};

/* Plan from (sx, sy) to (gx, gy): the start and the goal each go to the
 * nearest point of the mesh within `reach` m, then Detour's A* over the
 * polygons and its funnel give the corners. */
int nmd_plan(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach, nmd_path_t* out);

/* The same path whole: every corner from the start's point on the mesh to
 * the path's end, the first min(capacity, *count) of them in out (x, y),
 * *count all of them; *partial 1 when the end falls short of the goal (no
 * way there, or the search stopped short). NMD_PLAN_NO_MEMORY when the
 * corners' scratch cannot be had. */
int nmd_plan_whole(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach, float (*out)[2],
                   int32_t capacity, int32_t* count, int32_t* partial);

/* A ground vehicle's path: the start's point on the mesh, then the
 * corners, NMD_ROUTE_POINTS points at most; a longer path is cut there. */
typedef struct nmd_route_t {
    float point[NMD_ROUTE_POINTS][2];
    int32_t count;   /* points written (0 to NMD_ROUTE_POINTS) */
    int32_t end;     /* 1: the last point is the path's end (not cut) */
    int32_t partial; /* 1: that end is not the goal (no way there) */
    uint32_t poly;   /* the start's polygon */
} nmd_route_t;

/* The same search as nmd_plan, the path's first NMD_ROUTE_POINTS points
 * kept: through the query's own buffers, nothing allocated. */
int nmd_plan_route(nmd_query_t* q, float sx, float sy, float gx, float gy, float reach, nmd_route_t* out);

/* For `shoal bench navmesh` only, never the module: the same agents
 * stepped by Detour's own crowd (dtCrowd, DetourCrowd) on a baked mesh,
 * for comparison. Agent i starts at start[i] and is sent to the mesh's
 * nearest point within 2 m of goal[i] (requestMoveTarget); every agent has
 * the radius, max speed and max acceleration given, DetourCrowd's
 * collision query range of 12 radii and path optimization range of 30,
 * updateFlags ANTICIPATE_TURNS | OPTIMIZE_VIS | OPTIMIZE_TOPO |
 * OBSTACLE_AVOIDANCE | SEPARATION (separation weight 2) and the
 * obstacle avoidance of DetourCrowd's sample at its highest quality.
 * dtCrowd::update(dt) runs `steps` times or until every agent has
 * arrived; only those calls are timed. */
typedef struct nmd_crowd_run_t {
    double seconds;           /* wall clock of dtCrowd::update alone */
    int32_t steps;            /* updates made */
    int32_t placed;           /* agents dtCrowd took (addAgent) with a target (requestMoveTarget) */
    int32_t arrived;          /* within arrive_distance of their target after the last update */
    int32_t overlapping;      /* agents closer than 0.99 of the radii sum to another, after the last */
    int32_t peak_overlapping; /* the most after any update */
    float closest_pair;       /* smallest center distance over the radii sum after the last; INFINITY: none */
    float min_closest_pair;   /* the smallest after any update */
} nmd_crowd_run_t;

/* The most agents dtCrowd's proximity grid can index (4 items an agent,
 * 16-bit item indices). */
#define NMD_CROWD_MAX_AGENTS 16383

/* 0 on success; else a message in msg and 1. */
int nmd_crowd_run(const nmd_mesh_t* mesh, const float (*start)[2], const float (*goal)[2], int32_t n,
                  float radius, float max_speed, float max_accel, float arrive_distance, float dt,
                  int32_t steps, nmd_crowd_run_t* out, char* msg, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_MODULES_NAVMESH_DETOUR_H */
