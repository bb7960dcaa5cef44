/* shoal/nav.h: navigation fields, so that agents find their way round
 * walls to a goal (docs/nav.md is the guide).
 *
 * A world's walkable area is a grid of square cells (shoal_nav_params_t):
 * a cell is blocked when its center lies within `clearance` of a wall or
 * of a static obstacle. A goal (a point, a line such as an exit, or an
 * area) gets one travel-time field over that grid, solved by fast
 * marching: the time to reach the goal from every cell, round walls, with
 * a speed that falls near walls so that paths keep clear of corners. An
 * agent with the NAVIGATE behavior reads the field's gradient at its
 * position each step: its desired velocity points down the field, at its
 * max speed times the behavior's weight (then a crowd agent's ORCA and the
 * contact pass act as on any desired velocity). One field serves every
 * agent with that goal: the cost grows with cells times goals, not with
 * agents.
 *
 * Fields are derived: solved again, on the library's workers (one goal a
 * worker), in the step after the walls, obstacles, goals, speed zones or
 * parameters changed, never saved; the same bits for any thread count. The grid and
 * fields take NAV bytes per cell (shoal_nav_memory): 1 for the grid, 4 for
 * the speed near walls, 4 per goal; the solve 4 more a worker.
 *
 * 2D worlds only (INVALID_ARGUMENT in 3D). Every call below refuses bad
 * input with a message naming what and where, and leaves the world as it
 * was; none may be called inside a step (BUSY). */
#ifndef SHOAL_INCLUDE_NAV_H
#define SHOAL_INCLUDE_NAV_H

#include <stdint.h>

#include "shoal/export.h"
#include "shoal/id.h"

typedef struct shoal_agent_def_t shoal_agent_def_t; /* shoal/types.h */

#ifdef __cplusplus
extern "C" {
#endif

/* The world's navigation grid. */
typedef struct shoal_nav_params_t {
    float cell;               /* m, > 0: the cell's side. Default 0.1 (pedestrians) */
    float clearance;          /* m, >= 0: cells whose center is within this of a wall or obstacle are
                          * blocked (the agents' radius). At least cell / 2, so that no wall leaks
                          * between two cells. Default 0.25 */
    float wall_distance;      /* m, >= 0: within this distance of a blocked cell, the field's speed falls
                          * linearly toward wall_speed, so paths keep clear of walls and
                          * corners; 0 = no slowdown. Default 0.5 */
    float wall_speed;         /* in (0, 1]: the speed next to a blocked cell, relative to the open
                          * floor's. Default 0.5 */
    float bounds[4];          /* x0, y0, x1, y1 (m): the grid's extent; all 0 = the box of the walls,
                          * static obstacles and goals, widened by `margin` on every side, found
                          * again whenever they change. Default 0 */
    float margin;             /* m, >= 0: see bounds. Default 2 */
    double max_bytes;         /* the most bytes the grid and fields may take (shoal_nav_memory);
                          * a change that would need more is refused (CAPACITY). Default 2^30 */
    float density_weight;     /* >= 0: congestion: every density_interval steps the fields are solved
                           * again with each cell's speed divided by 1 + density_weight * rho,
                           * rho the agents per m^2 round it (a Gaussian of 0.5 m), so that crowds
                           * spread over routes and exits; 0 = static fields. Default 0 */
    int32_t density_interval; /* steps, 1 to 1000000: see density_weight. Default 20 */
} shoal_nav_params_t;

SHOAL_API shoal_nav_params_t shoal_nav_params_default(void);

/* Set the world's navigation grid (checked: INVALID_ARGUMENT naming the
 * field; CAPACITY when the grid and the fields of the goals there are
 * would take more than max_bytes). The fields are solved again in the
 * next step. */
SHOAL_API shoal_status_t shoal_world_set_nav(shoal_world_t* world, const shoal_nav_params_t* params);
SHOAL_API shoal_status_t shoal_world_get_nav(const shoal_world_t* world, shoal_nav_params_t* out);

/* A goal's shape. */
typedef enum shoal_nav_goal_kind_t {
    SHOAL_NAV_POINT = 0, /* points[0] */
    SHOAL_NAV_LINE = 1,  /* the segments points[0] .. points[1], points[2] .. points[3], ...
                          * (count 2, 4, ..., 16): an exit, a door to cross, or the several
                          * exits of a building, of which each agent takes the quickest */
    SHOAL_NAV_AREA = 2   /* the polygon points[0 .. count): a room, a waiting area */
} shoal_nav_goal_kind_t;

#define SHOAL_NAV_GOAL_POINTS 16
#define SHOAL_MAX_NAV_GOALS 4096

/* A goal: every walkable cell of it starts its field at time 0 (a point's
 * cells near it at their distance to it, which keeps the field exact
 * round it). An agent has arrived when it is within `arrive_distance` of
 * the goal along the field (inside an area or on a line: at once). */
typedef struct shoal_nav_goal_t {
    int32_t kind;                           /* shoal_nav_goal_kind_t */
    int32_t count;                          /* points used: a point 1, a line 2 to 16 (even), an
                                             * area 3 to SHOAL_NAV_GOAL_POINTS */
    int32_t exit;                           /* 1: an exit: an agent that arrives leaves the world at the
                                             * end of the decide stage, counted in the goal's
                                             * shoal_nav_stats_t.exited; 0: it stays. Default 0 */
    float points[SHOAL_NAV_GOAL_POINTS][2]; /* m */
} shoal_nav_goal_t;

/* Add a goal; *out_id (optional) is its id: goals are numbered 0, 1, 2,
 * ... in the order added, and an id is never reused. Refused (world
 * unchanged): a 3D world, a kind or count out of range, points not finite
 * or beyond 1e18 m, a line of zero length, an area of zero area,
 * SHOAL_MAX_NAV_GOALS goals, fields that would take more than the grid's
 * max_bytes (CAPACITY), and a goal with no walkable cell (inside a wall's
 * clearance, or outside explicit bounds): INVALID_ARGUMENT. */
SHOAL_API shoal_status_t shoal_world_add_nav_goal(shoal_world_t* world, const shoal_nav_goal_t* goal,
                                                  int32_t* out_id);
/* Remove a goal: agents navigating to it stop getting a direction from it
 * (their NAVIGATE term is 0). NOT_FOUND for an id that is not a live goal. */
SHOAL_API shoal_status_t shoal_world_remove_nav_goal(shoal_world_t* world, int32_t id);
/* Goals now in the world (removed ones not counted). */
SHOAL_API int32_t shoal_world_nav_goal_count(const shoal_world_t* world);

/* ---- speed zones -----------------------------------------------------------
 *
 * A zone is a polygon where walking is slower (stairs, a slow floor): a
 * navigating agent's desired speed there is multiplied by the
 * zone's speed_factor, and the fields count the time to cross it so
 * (the grid's speed at its cells, which falls near walls, times the
 * factor), so that routes prefer the faster floors. A cell belongs to a
 * zone when its center lies inside the polygon; where zones overlap, the
 * one added last counts. An agent's factor is that of its cell (outside
 * the grid: of the zone containing it). Zones are state (hashed, saved);
 * a change rebuilds the grid's speed and solves every field again in the
 * next step. While there are any, the grid takes 4 bytes more a cell (its
 * factors), counted against max_bytes. */
#define SHOAL_NAV_ZONE_POINTS 16
#define SHOAL_MAX_NAV_ZONES 1024
#define SHOAL_NAV_ZONE_MAX_FACTOR 1.0f

typedef struct shoal_nav_zone_t {
    int32_t count;      /* points used, 3 to SHOAL_NAV_ZONE_POINTS */
    float speed_factor; /* in (0, 1]: 0.5 halves the speed (of a crowd agent: its preferred
                         * speed, else its max speed). Default (shoal_nav_zone_default) 1 */
    float points[SHOAL_NAV_ZONE_POINTS][2]; /* m: the polygon, either winding */
} shoal_nav_zone_t;

SHOAL_API shoal_nav_zone_t shoal_nav_zone_default(void);
/* Add a zone; *out_id (optional) its id: 0, 1, 2, ... in the order added,
 * never reused. Refused (world unchanged, INVALID_ARGUMENT naming the
 * field): a 3D world, a count out of range, points not finite or beyond
 * 1e18 m, a polygon of zero area, a speed_factor not in (0, 1] (NaN
 * included); CAPACITY past SHOAL_MAX_NAV_ZONES zones added, or when the
 * grid and fields would take more than max_bytes. */
SHOAL_API shoal_status_t shoal_world_add_nav_zone(shoal_world_t* world, const shoal_nav_zone_t* zone,
                                                  int32_t* out_id);
/* Remove a zone (NOT_FOUND for an id that is not a live zone). */
SHOAL_API shoal_status_t shoal_world_remove_nav_zone(shoal_world_t* world, int32_t id);
/* Zones now in the world (removed ones not counted). */
SHOAL_API int32_t shoal_world_nav_zone_count(const shoal_world_t* world);

/* NAVIGATE: an agent's part (weights[SHOAL_BEHAVIOR_NAVIGATE] turns it
 * on). Its desired velocity gets weight * v * d, with d the unit direction
 * down the goal's field at the agent's position and v its max speed,
 * slowing as arrive does (arrive_gain, the force limit) over the last
 * meters of a point goal; at the goal (arrived), or where the field has no
 * direction (an agent walled in with no way to the goal), nothing. Outside
 * the grid an agent heads straight for the goal's nearest point. */
typedef struct shoal_nav_t {
    int32_t goal;          /* a goal of this world (shoal_world_add_nav_goal). Default -1 (none) */
    float arrive_distance; /* m, >= 0: arrived within this of the goal along its field. Default 0.3 */
    int32_t journey;       /* a journey of this world (shoal_world_add_journey), which then gives
                            * the goal stage by stage (`goal` is not used); -1: none. Default -1 */
    float start_delay;     /* s, >= 0: the premovement time. The agent stands (its NAVIGATE term is
                            * 0) this long after it is added, or after shoal_agent_set_nav gives it
                            * again ("stand this much longer from now"); it still avoids and is
                            * pushed by others. A definition read back (shoal_agent_get_def) holds
                            * the seconds left. Default 0 */
} shoal_nav_t;

SHOAL_API shoal_nav_t shoal_nav_default(void);
/* Change an agent's navigation (its definition's `nav`), checked as an add
 * checks it; a goal that is not live is refused (NOT_FOUND). */
SHOAL_API shoal_status_t shoal_agent_set_nav(shoal_world_t* world, shoal_agent_t id, const shoal_nav_t* nav);

/* ---- journeys ------------------------------------------------------------
 *
 * A journey (in the spirit of JuPedSim's) is a list of stages, each a goal
 * of this world: an agent on it starts at stage 0, navigates to the
 * stage's goal, waits there `wait` seconds once arrived (a waiting area),
 * then moves on by the stage's transition. A stage whose goal is an exit
 * ends the journey there (the agent leaves). Transitions run after
 * `navigate`, serially in row order, so the same for any thread count:
 * - END: the journey ends here, the agent stays at the goal;
 * - FIXED: to next[0];
 * - ROUND_ROBIN: to next[0 .. next_count) in turn, next_weight[k]
 *   agents to each in a round (the stage's count of agents sent is state);
 * - QUICKEST: to the candidate whose goal the agent would reach soonest
 *   from where it stands (its field's value there; with congestion on,
 *   the least congested): exit choice.
 * Ids are 0, 1, 2, ... in the order added; journeys cannot be removed. */
#define SHOAL_JOURNEY_STAGES 16
#define SHOAL_JOURNEY_NEXT 4
#define SHOAL_MAX_JOURNEYS 1024

typedef enum shoal_transition_kind_t {
    SHOAL_TRANSITION_END = 0,
    SHOAL_TRANSITION_FIXED = 1,
    SHOAL_TRANSITION_ROUND_ROBIN = 2,
    SHOAL_TRANSITION_QUICKEST = 3
} shoal_transition_kind_t;

typedef struct shoal_journey_stage_t {
    int32_t goal;                     /* a nav goal of this world */
    float wait;                       /* s, >= 0: stay this long at the goal once arrived before moving on */
    int32_t transition;               /* shoal_transition_kind_t */
    int32_t next_count;               /* candidates: 0 for END, 1 for FIXED, 1 to SHOAL_JOURNEY_NEXT else */
    int32_t next[SHOAL_JOURNEY_NEXT]; /* stage indices of this journey */
    int32_t next_weight[SHOAL_JOURNEY_NEXT]; /* ROUND_ROBIN: agents to each in a round, >= 1 */
} shoal_journey_stage_t;

typedef struct shoal_journey_t {
    int32_t count; /* stages used, 1 to SHOAL_JOURNEY_STAGES */
    shoal_journey_stage_t stages[SHOAL_JOURNEY_STAGES];
} shoal_journey_t;

/* Add a journey; *out_id (optional) its id. Refused (world unchanged,
 * INVALID_ARGUMENT naming the stage and field): a 3D world, a count out of
 * range, a goal that is not one of this world's, a wait not finite or < 0,
 * a transition out of range or with the wrong number of candidates, a
 * candidate that is not a stage of the journey, a weight < 1; CAPACITY past
 * SHOAL_MAX_JOURNEYS. */
SHOAL_API shoal_status_t shoal_world_add_journey(shoal_world_t* world, const shoal_journey_t* journey,
                                                 int32_t* out_id);
SHOAL_API int32_t shoal_world_journey_count(const shoal_world_t* world);

/* ---- sources ------------------------------------------------------------
 *
 * A source adds agents over time: from world time `start`, `rate` agents a
 * second up to `count` in all, each at a random point of the box `area`
 * (x0, y0, x1, y1) no closer than `spacing` (center to center) to any agent
 * there; a point is drawn up to 32 times, and an agent that finds no room
 * waits for the next step. The agents are `*def` with its position set
 * (its velocity and heading as given): a navigating definition sends them
 * to a goal or along a journey. Sources run at the end of each step
 * (nav_sources, serial; the agents are live for the next step); their
 * draws are a function of the world's seed, the source and the draw's
 * number, so the same for any thread count. The definition is saved in
 * snapshots as its bytes, with their layout's fingerprint: a build with
 * another shoal_agent_def_t refuses such a file. */
#define SHOAL_MAX_SOURCES 256

typedef struct shoal_nav_source_t {
    float area[4];                /* x0, y0, x1, y1 (m), x1 > x0, y1 > y0 */
    float rate;                   /* agents a second, > 0 */
    int32_t count;                /* agents in all, >= 1 */
    float spacing;                /* m, >= 0 */
    float start;                  /* s, >= 0: the world time of the first */
    const shoal_agent_def_t* def; /* copied; checked as shoal_agent_add checks it */
} shoal_nav_source_t;

/* Add a source; *out_id (optional) its id (0, 1, 2, ...). Refused (world
 * unchanged): a 3D world, a box, rate, count, spacing or start out of
 * range (INVALID_ARGUMENT naming the field), a definition shoal_agent_add
 * would refuse (its message), SHOAL_MAX_SOURCES sources (CAPACITY). */
SHOAL_API shoal_status_t shoal_world_add_source(shoal_world_t* world, const shoal_nav_source_t* source,
                                                int32_t* out_id);
/* Agents a source has added so far, and those due that found no room yet. */
SHOAL_API shoal_status_t shoal_world_source_stats(const shoal_world_t* world, int32_t id, int64_t* out_added,
                                                  int64_t* out_waiting);

/* Where a navigating agent stands after the last step. */
typedef struct shoal_nav_agent_t {
    int32_t goal;    /* the goal it heads for (its journey's stage's, on a journey) */
    int32_t stage;   /* its journey's stage, or -1 */
    int32_t status;  /* 0 moving, 1 arrived, 2 no way, 3 off the grid, 4 in a wall's clearance */
    float remaining; /* travel time (m at unit speed) left to the goal; INFINITY unknown */
    float waited;    /* s waited at the stage's goal so far */
    float delay;     /* s it still stands before it starts (shoal_nav_t.start_delay); 0 once walking */
} shoal_nav_agent_t;

/* NOT_FOUND for an agent that does not navigate (no NAVIGATE weight). */
SHOAL_API shoal_status_t shoal_agent_get_nav_state(const shoal_world_t* world, shoal_agent_t id,
                                                   shoal_nav_agent_t* out);

/* The grid as the last step (or the last shoal_world_nav_update) built it. */
typedef struct shoal_nav_grid_info_t {
    float origin[2]; /* lower-left corner of cell (0, 0), m */
    float cell;      /* m */
    int32_t nx, ny;  /* cells per row, rows; cell (i, j) is entry j * nx + i */
    int64_t blocked; /* cells blocked by walls and obstacles */
    double bytes;    /* what the grid and the fields take now */
} shoal_nav_grid_info_t;

/* Build the grid and solve every field that is out of date now, as the
 * next step would (it then has nothing to do): to read fields before the
 * first step, or to pay for the solve outside a timed loop. */
SHOAL_API shoal_status_t shoal_world_nav_update(shoal_world_t* world);
SHOAL_API shoal_status_t shoal_world_nav_grid(const shoal_world_t* world, shoal_nav_grid_info_t* out);
/* A goal's travel-time field (m at unit speed; INFINITY at blocked cells
 * and cells with no way to the goal), nx * ny floats, row after row; the
 * grid's blocked flags with goal -1 (1.0 blocked, 0.0 walkable). Writes at
 * most `capacity` floats and sets *out_count to nx * ny. Fields not yet
 * solved (a change since the last step): SHOAL_ERR_NOT_FOUND naming
 * shoal_world_nav_update. */
SHOAL_API shoal_status_t shoal_world_nav_field(const shoal_world_t* world, int32_t goal, float* out,
                                               int64_t capacity, int64_t* out_count);

/* How the navigating agents stand after the last step, for one goal or
 * (goal -1) all. */
typedef struct shoal_nav_stats_t {
    int32_t agents;        /* agents navigating (NAVIGATE with a nonzero weight) */
    int32_t arrived;       /* within arrive_distance of their goal */
    int32_t no_way;        /* in a walkable cell with no way to the goal, or whose goal was removed */
    int32_t off_grid;      /* outside the grid (heading straight for the goal) */
    int32_t in_walls;      /* in a blocked cell (pushed into a wall's clearance) */
    int64_t exited;        /* agents that left the world through the goal (an exit) so far */
    double mean_remaining; /* mean travel time (m) left over the others, 0 when none */
} shoal_nav_stats_t;

SHOAL_API shoal_status_t shoal_world_nav_stats(const shoal_world_t* world, int32_t goal,
                                               shoal_nav_stats_t* out);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_INCLUDE_NAV_H */
