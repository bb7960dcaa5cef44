/* shoal/crowd.h: crowd agents, which hold their space: reciprocal
 * collision avoidance (ORCA) over their neighbors and then move at the
 * velocity it picked.
 *
 * One header per feature that brings its own state and calls (ground.h,
 * planner.h, crowd.h). It needs only shoal/id.h; shoal/types.h includes it
 * because the agent definition embeds a shoal_crowd_t, and shoal/shoal.h
 * includes it, so user code never has to. docs/crowds.md is the guide. */
#ifndef SHOAL_INCLUDE_CROWD_H
#define SHOAL_INCLUDE_CROWD_H

#include <stdint.h>

#include "shoal/export.h"
#include "shoal/id.h"

typedef struct shoal_vehicle_t shoal_vehicle_t; /* shoal/types.h */

#ifdef __cplusplus
extern "C" {
#endif

/* A crowd agent (crowd.enabled = 1). Each step its behaviors sum a
 * preferred velocity as for any agent (seek, arrive, flocking, directed
 * seek, ...); then ORCA (van den Berg, Guy, Lin and Manocha, "Reciprocal
 * n-body collision avoidance", 2011) replaces it with the velocity closest
 * to it that avoids, for `time_horizon` seconds, the `max_neighbors`
 * nearest agents within `neighbor_distance` (every agent with a radius
 * counts, crowd agent or not; a neighbor that is not a crowd agent is
 * avoided fully, as if it would not move aside), within |v| <=
 * vehicle.max_speed. The agent then moves at that velocity: a crowd agent
 * is holonomic and kinematic (a pedestrian, a robot on omni wheels), so
 * control and integrate leave it out; its heading follows its velocity.
 * Its size is vehicle.radius (> 0 for a crowd agent). */
typedef struct shoal_crowd_t {
    int32_t enabled;          /* 0 or 1. Default 0 */
    float neighbor_distance;  /* m, > 0: how far neighbors are looked for. Default 5 */
    int32_t max_neighbors;    /* 1 to 64: the nearest this many count. Default 10 */
    float time_horizon;       /* s, > 0: how far ahead other agents are avoided. Default 2 */
    float time_horizon_walls; /* s, > 0: the same for the world's obstacles. Default 1 */
    float responsibility;     /* in [0, 1]: this agent's share of avoiding another crowd agent;
                               * 0.5 is reciprocal, 0 ignores others, 1 yields fully. Default 0.5 */
    float preferred_speed;    /* m/s, >= 0: the behaviors' sum is shortened to this length
                               * before ORCA; 0 = no cap (vehicle.max_speed). Default 0 */
    float time_gap;           /* s, >= 0: the pedestrian model (docs/crowds.md "The walking
                               * model"): keep this many seconds of free walk to the leader,
                               * the nearest neighbor ahead that walks the agent's way and whose
                               * body the agent's would touch walking straight on: the preferred
                               * speed is capped at that free walk (the distance less 0.85 of
                               * the sum of radii) over time_gap, never below 0.05 of it (the
                               * collision-free speed model of Tordeux, Chraibi and Seyfried,
                               * 2016); an agent so held up takes, of its way turned by up to 45
                               * degrees to either side, the one that gains most along its way
                               * (overtaking, filling gaps), and shares avoidance with a crowd
                               * neighbor by who is ahead along their common way. 0 = off (pure
                               * ORCA). Default 0 */
    float side_preference;    /* in [0, 1]: keep right (2D): when a neighbor comes the other
                               * way within time_horizon of walking, ahead and near the agent's
                               * line, the preferred velocity turns right, up to the angle
                               * atan(side_preference) when that neighbor is close (lanes form in
                               * counter-flows; docs/crowds.md); 0 = off (pure ORCA). Default 0 */
} shoal_crowd_t;

SHOAL_API shoal_crowd_t shoal_crowd_default(void);

/* Fill a crowd agent's parameters (crowd.enabled = 1) and the vehicle
 * fields a crowd agent uses (radius, max_speed) from a named preset:
 * - "pedestrian": radius 0.21 m, preferred speed 1.34 m/s, max speed
 *   2 m/s, neighbors within 3 m (the 10 nearest), time horizons 2 s for
 *   agents and 0.3 s for obstacles and walls, reciprocal, a time gap of
 *   1.1 s, keeping right (side preference 1) (docs/crowds.md says why);
 * - "rvo2": the parameters of RVO2's Circle example (radius 1.5 m, max
 *   speed 2 m/s, preferred speed 1 m/s, neighbors within 15 m, the 10
 *   nearest, time horizons 10 s and 10 s), which `shoal bench crowd` runs.
 * An unknown or NULL name gives SHOAL_ERR_NOT_FOUND (NULL outputs:
 * SHOAL_ERR_INVALID_ARGUMENT) with the list of names in err (optional),
 * and leaves both outputs unchanged. */
SHOAL_API shoal_status_t shoal_crowd_preset(const char* name, shoal_crowd_t* crowd, shoal_vehicle_t* vehicle,
                                            shoal_error_t* err);

/* Change an agent's crowd parameters (its definition's `crowd`), live or
 * added inside the current step (then the change goes live with it). The
 * agent's whole definition with the change is checked as shoal_agent_add
 * checks it (INVALID_ARGUMENT naming the field, and nothing changed):
 * crowd.enabled 1 makes the agent a crowd agent from the next step (it
 * needs vehicle.radius > 0 and may not be a ground vehicle or a planner
 * agent), 0 makes it an ordinary agent again. A stale handle gives
 * STALE_HANDLE. */
SHOAL_API shoal_status_t shoal_agent_set_crowd(shoal_world_t* world, shoal_agent_t id,
                                               const shoal_crowd_t* crowd);
/* An agent's crowd parameters, as shoal_agent_set_crowd or the definition
 * set them; an agent that is not a crowd agent keeps none: it reads
 * shoal_crowd_default() (crowd.enabled 0). */
SHOAL_API shoal_status_t shoal_agent_get_crowd(const shoal_world_t* world, shoal_agent_t id,
                                               shoal_crowd_t* out_crowd);

/* How the crowd agents stand now (after the last step, or as added). Every
 * pair of a crowd agent and any agent with a radius is judged, through a
 * grid of cells built for the call (outside the step: it costs about as
 * much as sorting the agents), and every crowd agent against every wall
 * segment within its radius. OUT_OF_MEMORY when the grid cannot be made
 * (out unchanged). */
typedef struct shoal_crowd_stats_t {
    int32_t agents;             /* crowd agents */
    int32_t arrived;            /* within one radius of their target (seek's and arrive's) */
    float closest_pair;         /* smallest center distance over the sum of radii; INFINITY: none */
    int32_t overlapping;        /* crowd agents closer than 0.99 of the radii sum to any agent */
    int32_t relaxed_last_step;  /* agents whose constraints had no common velocity (ORCA's fallback) */
    int32_t contact_iterations; /* iterations and sweeps of the last contact pass */
    float wall_penetration;     /* the deepest a crowd agent's body reaches into a wall, over its
                                 * radius; 0: none (2D) */
    int32_t in_walls;           /* crowd agents more than 1 % of their radius into a wall (2D) */
} shoal_crowd_stats_t;

SHOAL_API shoal_status_t shoal_world_crowd_stats(const shoal_world_t* world, shoal_crowd_stats_t* out);

/* ------------------------------------------------------------------------ */
/* Walls                                                                     */
/* ------------------------------------------------------------------------ */

/* Walls are line segments in a 2D world: an open polyline of `count` >= 2
 * points, or (closed = 1) a polygon of `count` >= 3 points whose last point
 * joins the first. `points` holds x, y for each point (2 floats a point),
 * copied. Crowd agents treat walls as obstacles (ORCA, within
 * crowd.time_horizon_walls) and the contact pass keeps them out of and
 * from crossing every wall. An id is a slot (id % SHOAL_MAX_WALLS) and
 * its generation (id / SHOAL_MAX_WALLS): a world
 * that never removed a wall numbers them 0, 1, 2, ... in creation order; a
 * removed wall's slot and points are reclaimed, the next add takes the
 * lowest free slot with the next generation, and the removed id is refused
 * (NOT_FOUND) until that slot has been reused 2,048 times. At most
 * SHOAL_MAX_WALLS walls at once (CAPACITY). Walls live in a grid of their own, rebuilt at
 * the next step after a change. A 3D world has no walls: its obstacles
 * (spheres) play their part. Refused, with the world unchanged: a 3D world,
 * NULL points, a count out of range (at most SHOAL_MAX_WALL_POINTS),
 * coordinates not finite or beyond 1e18 m, two consecutive points equal (a
 * zero-length segment), and calls inside a step. */
#define SHOAL_MAX_WALL_POINTS (1 << 20)
/* The most segments all of a world's walls have together (a wall that
 * would pass it is refused with SHOAL_ERR_CAPACITY). */
#define SHOAL_MAX_WALL_SEGMENTS (1 << 24)
#define SHOAL_MAX_WALLS (1 << 20)
SHOAL_API shoal_status_t shoal_world_add_wall(shoal_world_t* world, const float* points, int32_t count,
                                              int32_t closed, int32_t* out_id);
SHOAL_API shoal_status_t shoal_world_remove_wall(shoal_world_t* world, int32_t id);
/* Walls now in the world (removed ones not counted). */
SHOAL_API int32_t shoal_world_wall_count(const shoal_world_t* world);
/* Every segment of every wall, as x0, y0, x1, y1 (4 floats a segment), in
 * slot order (id % SHOAL_MAX_WALLS; ids in a world that never removed a
 * wall): writes at most `capacity` segments and sets *out_count to the
 * number there are (so a first call with capacity 0 sizes the array). */
SHOAL_API shoal_status_t shoal_world_wall_segments(const shoal_world_t* world, float* out, int32_t capacity,
                                                   int32_t* out_count);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_INCLUDE_CROWD_H */
