/* shoal/navmesh.h: navigation meshes, so that agents with goals of their
 * own find their way round walls (every agent its own path; shoal/nav.h's
 * fields serve many agents that share a few goals).
 *
 * The mesh: Recast bakes the world's walkable floor from its walls and
 * static obstacles (shoal_navmesh_params_t): a floor over the walls' box,
 * the walls and obstacles cut out and the rest eroded by the agent radius,
 * as convex polygons. It is derived: baked again before the first step
 * after the walls, the static obstacles or the parameters changed (or by
 * shoal_world_navmesh_update), never saved.
 *
 * The paths: an agent with the NAVMESH behavior keeps the next corners of
 * its path to its goal (found by Detour: A* over the polygons, then the
 * funnel). Paths are planned again, in the sense stage, when an agent's
 * goal changes, when it has used up its corners, when it strays farther
 * than off_path_distance from its path, or every replan_interval steps;
 * at most replans_per_step agents a step, those that wait longest first
 * (then by slot), each worker planning through a Detour query of its own
 * over the one read-only mesh: the same paths for any thread count. Its
 * desired velocity then gets weight * v * d, d the unit direction to its
 * next corner and v its max speed, slowing as arrive does toward the
 * goal (then a crowd agent's ORCA and the contact pass act on it). A
 * walker slower than half its max speed, short of its last leg, turns d
 * to its right, by up to 63 degrees when it stands: two crowds that meet
 * in a door and hold each other still slide past each other instead
 * (docs/navmesh.md).
 *
 * Ground vehicles (shoal/ground.h: ground.enabled, follow.path -1) with the
 * NAVMESH weight take their whole path from the mesh instead, planned in
 * the same pass, budget and order: the first 16 points of the path from
 * where the vehicle is (a longer one is cut there and planned again before
 * the vehicle gets near the cut), kept in the vehicle's row, which its
 * path follower follows to the goal and stops at. Planned again on a new
 * goal, farther than off_path_distance from the path, every
 * replan_interval steps, never once its follower completed the path to
 * its end. The mesh is baked for one agent_radius and the follower cuts
 * corners: bake it for the vehicle's radius plus about 1.5 m (a car with
 * the default follower; docs/navmesh.md), and give off_path_distance a
 * few metres. A vehicle with a world path (follow.path >= 0) and the
 * NAVMESH weight is refused (INVALID_ARGUMENT).
 *
 * Needs a build with Recast and Detour (SHOAL_WITH_RECAST, on when
 * librecast-dev is installed): shoal_navmesh_available() says. Without
 * them every call that would bake or plan, and an agent with the NAVMESH
 * behavior, is refused with SHOAL_ERR_NOT_FOUND and a message saying so.
 *
 * 2D worlds only (INVALID_ARGUMENT in 3D). Every call refuses bad input
 * with a message naming what and where, and leaves the world as it was;
 * none may be called inside a step (BUSY). */
#ifndef SHOAL_INCLUDE_NAVMESH_H
#define SHOAL_INCLUDE_NAVMESH_H

#include <stdint.h>

#include "shoal/export.h"
#include "shoal/id.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this shoal was built with Recast and Detour, else 0. */
SHOAL_API int32_t shoal_navmesh_available(void);

/* The world's navigation mesh and its replanning. */
typedef struct shoal_navmesh_params_t {
    float cell;               /* m, 0.02 to 10: Recast's cell. Default 0.1 */
    float agent_radius;       /* m, > 0: the mesh keeps this far from walls and obstacles (rounded
                                * up to whole cells). Default 0.25 */
    float bounds[4];          /* x0, y0, x1, y1 (m): the floor; all 0 = the box of the walls and
                                * static obstacles widened by `margin`. Default 0 */
    float margin;             /* m, >= 0: see bounds. Default 2 */
    int32_t replans_per_step; /* 1 to 1000000: the most paths planned in a step. Default 64 */
    int32_t replan_interval;  /* steps, 0 to 1000000: plan again after this many steps; 0 = only
                                * when needed. Default 100 */
    float off_path_distance;  /* m, > 0: plan again when farther than this from the segment to
                                * the next corner. Default 1 */
} shoal_navmesh_params_t;

SHOAL_API shoal_navmesh_params_t shoal_navmesh_params_default(void);
/* Set them (checked: INVALID_ARGUMENT naming the field); the mesh is baked
 * again before the next step. */
SHOAL_API shoal_status_t shoal_world_set_navmesh(shoal_world_t* world, const shoal_navmesh_params_t* params);
SHOAL_API shoal_status_t shoal_world_get_navmesh(const shoal_world_t* world, shoal_navmesh_params_t* out);
/* Bake the mesh now if it is out of date, as the next step would. A floor
 * too large for Recast (more than 2^15 cells a side) is refused
 * (CAPACITY) here and by a step. */
SHOAL_API shoal_status_t shoal_world_navmesh_update(shoal_world_t* world);

/* The whole path the mesh gives from `from` to `to` (each taken to the
 * mesh's nearest point within 2 m), as the NAVMESH behavior plans it: its
 * corners from the start's point on the mesh to the path's end. The first
 * min(capacity, *out_count) points (x, y) go to out_xy (NULL with capacity
 * 0 asks for the count); *out_count is the path's length in points (call
 * again with that much room when it is larger); *out_partial (optional) is
 * 1 when the end falls short of `to` (no way there: the end is the nearest
 * point the mesh reaches). Bakes the mesh first if it is out of date, as
 * shoal_world_navmesh_update does. For a host's own use, or a ground
 * vehicle's world path that the host plans itself (shoal/ground.h:
 * shoal_world_add_path with z 0, shoal_world_set_path to plan again; the
 * NAVMESH weight has the step plan it instead, above).
 * NOT_FOUND: a build without Recast, an end with no polygon within 2 m,
 * a mesh with nothing walkable; INVALID_ARGUMENT: a 3D world, ends not
 * finite or beyond 1e18 m, capacity < 0 or out_xy NULL with capacity > 0;
 * BUSY inside a step. The world is not changed (but for the bake). */
SHOAL_API shoal_status_t shoal_world_navmesh_path(shoal_world_t* world, const float from[2],
                                                  const float to[2], float* out_xy, int32_t capacity,
                                                  int32_t* out_count, int32_t* out_partial);

/* NAVMESH: an agent's part (weights[SHOAL_BEHAVIOR_NAVMESH] turns it on;
 * for a ground vehicle any nonzero weight: its follower sets its speed). */
typedef struct shoal_navmesh_t {
    float goal[2];         /* m: where it goes (the mesh's nearest point within 2 m). Default 0, 0 */
    float arrive_distance; /* m, >= 0: arrived within this of the path's end. Default 0.3 */
} shoal_navmesh_t;

SHOAL_API shoal_navmesh_t shoal_navmesh_default(void);
/* Change an agent's goal or arrive distance (its definition's `navmesh`),
 * checked as an add checks it; a new goal is planned for in the next step
 * (within the budget). */
SHOAL_API shoal_status_t shoal_agent_set_navmesh(shoal_world_t* world, shoal_agent_t id,
                                                 const shoal_navmesh_t* navmesh);

/* The mesh and the agents after the last step. */
typedef struct shoal_navmesh_stats_t {
    int32_t agents;   /* with the NAVMESH behavior */
    int32_t arrived;  /* within arrive_distance of their path's end (the goal); a ground
                       * vehicle: its follower completed its path to the end */
    int32_t no_way;   /* at the end of a path that stops short of the goal */
    int32_t off_mesh; /* no polygon within 2 m of them or of their goal: straight for the goal */
    int32_t waiting;  /* no path yet (the budget): standing */
    int32_t replans;  /* paths planned in the last step */
    int32_t polygons; /* polygons of the mesh (0: none baked, or nothing walkable) */
    int32_t pending;  /* agents that wanted a path in the last step and did not get one */
} shoal_navmesh_stats_t;

SHOAL_API shoal_status_t shoal_world_navmesh_stats(const shoal_world_t* world, shoal_navmesh_stats_t* out);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_INCLUDE_NAVMESH_H */
