/* shoal/planner.h: planner agents: the trim table of pre-integrated
 * trajectories, the search's definition, goals and each agent's status.
 *
 * One header per feature that brings its own state, world data and calls
 * (ground.h, planner.h), so that a reader finds everything about planner
 * agents on one page. It needs only shoal/id.h; shoal/types.h includes it
 * because the agent definition embeds a shoal_planner_t, and shoal/shoal.h
 * includes it, so user code never has to. */
#ifndef SHOAL_INCLUDE_PLANNER_H
#define SHOAL_INCLUDE_PLANNER_H

#include <stdint.h>

#include "shoal/export.h"
#include "shoal/id.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Planner agents                                                            */
/* ------------------------------------------------------------------------ */

/* A planner agent (after the trim-trajectory planning paper: online path
 * planning over pre-integrated trim trajectories, with the spacecraft of the
 * game Aeternalis) flies like a spacecraft: at a constant forward speed,
 * turning by body rates (yaw; in 3D also pitch and optionally roll) that
 * change linearly over fixed control intervals. At the start of each of its
 * intervals it searches the tree of pre-integrated trim trajectories (the
 * world's trim table) for the best path a few intervals deep, scoring each
 * segment with goodness functions in [0, 1] (seek, flee, pursue, evade, each
 * times AvoidCollision), and flies the first control of that path. Execution
 * follows the table bit for bit.
 *
 * It moves by its trim trajectories, not by forces: its behaviors weights,
 * `vehicle` and `control` are kept but not used (vehicle.max_speed still
 * clamps a teleport's velocity, which is then replaced by speed along the
 * facing). Its position, velocity (speed along its facing), heading,
 * quaternion and angular velocity are written every step, so other agents
 * (pursuers, neighbors) and the bulk read see it like any other agent. */

typedef enum shoal_plan_strategy_t {
    SHOAL_PLAN_SINGLE_STEP = 0, /* score the root's successors only */
    SHOAL_PLAN_UNIFORM = 1,     /* every k_skip-th control at every state */
    SHOAL_PLAN_ADAPTIVE = 2     /* n_v collapse^depth controls per state (circular permutation) */
} shoal_plan_strategy_t;

/* How the world's trim table samples the controls. Controls are the
 * samples' product; every (initial, final) pair is one trajectory. */
typedef struct shoal_trim_spec_t {
    int32_t axes;       /* 1: yaw (2D worlds); 2: yaw + pitch; 3: + roll (3D worlds) */
    int32_t samples[3]; /* per axis, 1..64 (odd counts include the straight rate 0) */
    float max_rate[3];  /* rad/s per axis, > 0: samples span [-max_rate, max_rate] */
    float interval;     /* s, the control interval, > 0 */
    int32_t substeps;   /* Euler steps per interval, 1..100000, with interval / substeps
                           * >= 1e-6 s (each step flies dt / that substeps per agent) */
} shoal_trim_spec_t;

/* The default table of a world of `dimensions`:
 * 2D: axes 1, samples {17}, max_rate {1.6}, interval 1, substeps 60 (17 controls);
 * 3D: axes 2, samples {11, 11}, max_rate {1.0, 1.0}, interval 1, substeps 60 (121). */
SHOAL_API shoal_trim_spec_t shoal_trim_spec_default(int32_t dimensions);

/* Build the world's trim table (one per world; it replaces the previous
 * one). axes must be 1 in 2D worlds and 2 or 3 in 3D worlds; a spec with an
 * empty control set (samples < 1) is rejected. A world without a table
 * builds the default one when its first planner agent is added. While
 * planner agents exist only the same spec is accepted (SHOAL_ERR_BUSY
 * otherwise: set the table before adding them). Not from inside a step. */
SHOAL_API shoal_status_t shoal_world_set_trim_table(shoal_world_t* world, const shoal_trim_spec_t* spec);
/* Save the table to a file (a checksummed little-endian binary, written
 * atomically). SHOAL_ERR_NOT_FOUND when the world has no table yet. */
SHOAL_API shoal_status_t shoal_world_save_trim_table(const shoal_world_t* world, const char* path);
/* Load a saved table as the world's, under the rules of set_trim_table.
 * SHOAL_ERR_IO when the file cannot be opened, SHOAL_ERR_PARSE when it is
 * not a valid table (truncated, corrupted, wrong version). */
SHOAL_API shoal_status_t shoal_world_load_trim_table(shoal_world_t* world, const char* path);

typedef enum shoal_plan_goal_t {
    SHOAL_PLAN_GOAL_NONE = 0,   /* only avoid collisions */
    SHOAL_PLAN_GOAL_SEEK = 1,   /* goal_point */
    SHOAL_PLAN_GOAL_FLEE = 2,   /* goal_point */
    SHOAL_PLAN_GOAL_PURSUE = 3, /* goal_agent, linear prediction */
    SHOAL_PLAN_GOAL_EVADE = 4   /* goal_agent */
} shoal_plan_goal_t;

/* A planner agent's definition (see the section's comment). The search
 * parameters are the paper's: discount d, optimism f, depth limit D_max, the
 * best leaf chosen among depth >= min_depth, an expansion budget, and the
 * strategies' sampling. The expansion budget is deterministic: results never
 * depend on the machine or the thread count. The optional time budget
 * (time_budget_ms) makes searches anytime, as the paper's are: a search stops
 * when its wall time runs out and flies the best path found so far. */
typedef struct shoal_planner_t {
    int32_t enabled;                /* 1: a planner agent. 0 or 1. Default 0 */
    float speed;                    /* m/s, constant forward speed, > 0. Default 5 */
    float radius;                   /* m, bounding sphere for collision tests, >= 0. Default 1 */
    shoal_plan_goal_t goal;         /* Default SEEK */
    float goal_point[3];            /* seek / flee point, finite; z ignored in 2D. Default 0 */
    shoal_agent_t goal_agent;       /* pursue / evade target: a live agent of this world when the
                               * goal is set (a target removed later is ignored: the agent
                               * then only avoids collisions, and shoal_agent_get_def gives
                               * the null handle) */
    int32_t avoid_collisions;       /* 1: AvoidCollision with the world's obstacles (static and
                               * moving). 0 or 1. Default 1 */
    shoal_plan_strategy_t strategy; /* Default ADAPTIVE */
    float discount;                 /* d in (0, 1). Default 0.8 */
    float optimism;                 /* f in [-1, 1]. Default 0.5 */
    int32_t max_depth;              /* D_max in 1..64. Default 6 */
    int32_t min_depth;              /* in 1..max_depth. Default 3 */
    int32_t max_expansions;         /* expansions per search, 1..1000000. Default 400 */
    int32_t k_skip;                 /* uniform: every k_skip-th control, >= 1. Default 2 */
    int32_t n_v;                    /* adaptive: controls expanded at depth 0 (capped at the table's
                               * count), >= 1. Default 121: all of them */
    float collapse;                 /* adaptive: c in (0, 1], n_v c^depth controls. Default 0.2 */
    float damping;                  /* bias to straighter paths, in [0, 1). Default 0.02 */
    float time_budget_ms;           /* wall-clock budget per search in ms, finite, in [0, 60000]; 0: none
                               * (max_expansions alone). Default 0. A search stops at whichever
                               * budget runs out first, after at least its root's expansion, and
                               * keeps the best path found so far. Nonzero makes results depend
                               * on the machine, its load and the thread count: the state hash
                               * is then no longer reproducible (the budget itself is a
                               * parameter that is never hashed) */
} shoal_planner_t;

SHOAL_API shoal_planner_t shoal_planner_default(void);

/* ------------------------------------------------------------------------ */
/* Planner agents: status and goals                                          */
/* ------------------------------------------------------------------------ */

typedef struct shoal_planner_status_t {
    int32_t control;      /* the control being executed (index into the trim table) */
    int64_t searches;     /* searches run */
    double goodness_sum;  /* sum over searches of the chosen first segment's goodness */
    double search_ns_sum; /* wall ns spent in this agent's searches (a statistic: it
                               * never feeds back into the simulation, nor into the hash) */
    int64_t states_sum;   /* visited states summed over searches */
    int64_t expanded_sum; /* expanded states summed over searches */
    int32_t collisions;   /* times the agent entered an obstacle (sphere overlap, checked
                               * every substep) */
    float last_goodness;  /* goodness of the last search's chosen first segment */
} shoal_planner_status_t;

/* A planner agent's status. An agent that is not one gives
 * SHOAL_ERR_INVALID_ARGUMENT; one added during the current step, BUSY. */
SHOAL_API shoal_status_t shoal_agent_get_planner(const shoal_world_t* world, shoal_agent_t id,
                                                 shoal_planner_status_t* out);
/* Change a planner agent's goal: `point` (finite; required for SEEK and
 * FLEE, may be NULL otherwise) or `agent` (a live agent of this world other
 * than itself; required for PURSUE and EVADE). Takes effect at its next
 * search. */
SHOAL_API shoal_status_t shoal_agent_set_planner_goal(shoal_world_t* world, shoal_agent_t id,
                                                      shoal_plan_goal_t goal, const float point[3],
                                                      shoal_agent_t agent);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_INCLUDE_PLANNER_H */
