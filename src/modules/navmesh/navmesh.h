/* The navmesh module: the world's navigation mesh, baked by Recast from
 * the walls and static obstacles (module-wide data, derived), and the
 * navmesh behavior, every agent on a path of its own planned by Detour
 * (navmesh.c); shoal/navmesh.h is its public API, navmesh_detour.h its
 * bridge to Recast and Detour. */
#ifndef SHOAL_MODULES_NAVMESH_H
#define SHOAL_MODULES_NAVMESH_H

#include "modules/registry.h"
#include "modules/navmesh/navmesh_detour.h"

/* navmesh: the behavior's weight and parameters, the path (state), what
 * the last step found (not state), then a ground vehicle's path (state,
 * snapshot format version 12; all 0 for other agents, so hashed only where
 * not 0). A walker keeps the next NMD_CORNERS corners and the leg it is
 * on; a ground vehicle keeps its path's first NMD_ROUTE_POINTS points from
 * where it was planned, which its follower follows (ground.c). */
enum {
    NM_SLOT = 0,
    NM_ROW,
    NM_WEIGHT,
    NM_GOAL_X,
    NM_GOAL_Y,
    NM_ARRIVE_DISTANCE,
    NM_PLAN_X, /* the goal the path was planned for */
    NM_PLAN_Y,
    NM_FROM_X, /* where the leg to the next corner starts */
    NM_FROM_Y,
    NM_CORNER,                                /* NMD_CORNERS corners, x and y each */
    NM_CORNERS = NM_CORNER + 2 * NMD_CORNERS, /* corners held */
    NM_NEXT,                                  /* the corner it heads for */
    NM_FLAGS,                                 /* enum navmesh_flag */
    NM_POLY,                                  /* the polygon it started its path on */
    NM_AGE,                                   /* steps since its path was planned */
    NM_STATUS,                                /* enum navmesh_status (not state) */
    NM_ROUTE_COUNT,                           /* a ground vehicle's path: points held */
    NM_ROUTE,                                 /* NMD_ROUTE_POINTS points, x and y each */
    NM_COUNT_ = NM_ROUTE + 2 * NMD_ROUTE_POINTS
};

enum navmesh_flag {
    NMF_PLANNED = 1u << 0, /* it has had a plan */
    NMF_END = 1u << 1,     /* its last corner is the path's end */
    NMF_PARTIAL = 1u << 2, /* ... and that end falls short of the goal */
    NMF_OFF = 1u << 3,     /* the last plan found no polygon near it or its goal */
};

enum navmesh_status {
    NAVMESH_MOVING = 0,
    NAVMESH_ARRIVED = 1,
    NAVMESH_NO_WAY = 2,
    NAVMESH_OFF_MESH = 3,
    NAVMESH_WAITING = 4,
};

typedef struct navmesh_world_t {
    shoal_navmesh_params_t params;
    uint32_t params_version;
    /* Derived: the mesh and a query a worker, baked before a step when the
     * parameters, walls or obstacles changed. built_valid: current. */
    int32_t built_valid;
    uint32_t built_params, built_walls, built_obstacles;
    nmd_mesh_t* mesh;
    nmd_query_t** queries;
    int32_t query_count;
    /* A step's scratch: each row's wish for a plan (its order key, or
     * UINT64_MAX for none), and the rows chosen. */
    uint64_t* want;
    int32_t* chosen;
    int32_t scratch_rows;
    /* Statistics of the last step (not state). */
    int32_t replans, pending;
    /* A rollback's parameters (mark). */
    shoal_navmesh_params_t marked_params;
} navmesh_world_t;

static inline navmesh_world_t* navmesh_of(const world_t* w)
{
    return (navmesh_world_t*)w->module_data[MOD_NAVMESH];
}

/* The snapshot format version that added a ground vehicle's path. */
#define NAVMESH_ROUTE_SINCE 12

/* The paths (sense stage): corners passed, who wants a plan, and up to
 * replans_per_step plans, one query a worker. */
int64_t navmesh_paths_run(world_t* w, float dt, void* ctx);
/* The navmesh behavior (decide stage): desired velocity (+=), status. */
int64_t navmesh_steer_run(world_t* w, float dt, void* ctx);

extern const module_t navmesh_module;

#endif /* SHOAL_MODULES_NAVMESH_H */
