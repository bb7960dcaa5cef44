/* Optional per-agent components and their columns. An agent has a component
 * exactly when one of its behaviors that needs it has a nonzero weight; the
 * component's table holds that behavior's parameters (and state, for
 * wander). Column 0 of every component is the owning slot (uint32).
 *
 * Column 1 is the owning agent's current row in the agent table (int32),
 * kept up to date by the world through removals and reorders, so systems
 * reach agent columns without a random lookup in the slot table.
 *
 * Component rows are kept in agent-row order after every reorder of the
 * agent table, so a system that walks a component densely also walks the
 * agent columns forward. */
#ifndef SHOAL_COMPONENTS_H
#define SHOAL_COMPONENTS_H

#include "ecs/world.h"

/* The built-in modules, in registry order (step.c): the order of their
 * components in w->comps, and of their module-wide data in the state hash
 * and in snapshots. */
enum module_id {
    MOD_NEIGHBORS = 0, /* component NEIGHBORS; data: the spatial hash (grid_t) */
    MOD_WANDER,
    MOD_PURSUIT,
    MOD_FOLLOW,
    MOD_AVOID,
    MOD_OBSTACLES,     /* no component; data: the world's obstacles (obstacles.h) */
    MOD_DSEEK,         /* data: routes */
    MOD_GROUND,        /* data: paths, terrain (ground_world_t) */
    MOD_PLANNER,       /* data: trim table, scene, search memory (planner_world_t) */
    MOD_WALLS,         /* no component; data: the world's walls (walls.h) */
    MOD_CROWD,         /* component CROWD; data: statistics (crowd_world_t) */
    MOD_CONTACT,       /* component CONTACT; data: the contact pass's scratch (contact_world_t) */
    MOD_COUNT_
};

enum component_id {
    COMP_NEIGHBORS = 0, /* separation, alignment, cohesion */
    COMP_WANDER,
    COMP_PURSUIT,       /* pursue, evade */
    COMP_FOLLOW,
    COMP_AVOID,
    COMP_DSEEK,
    COMP_GROUND,        /* ground vehicles: an agent has it when ground.enabled */
    COMP_PLANNER,       /* planner agents: an agent has it when planner.enabled */
    COMP_CROWD,         /* crowd agents: an agent has it when crowd.enabled */
    COMP_CONTACT,       /* agents other than crowd agents that take part in contacts */
    COMP_COUNT_
};

/* neighbors: all float but NB_MAX (int32) */
enum {
    NB_SLOT = 0, NB_ROW,
    NB_RADIUS, NB_FOV, NB_FOV_COS, NB_MAX,
    NB_K_SEP, NB_K_ALI, NB_K_COH,
    NB_W_SEP, NB_W_ALI, NB_W_COH,
    NB_COUNT_
};

/* wander: weight and parameters, then the wander velocity (state) */
enum {
    WD_SLOT = 0, WD_ROW,
    WD_KEY, /* uint32: the slot's generation, the high half of the random key */
    WD_WEIGHT, WD_CRUISE, WD_STRENGTH, WD_NOISE,
    WD_VX, WD_VY, WD_VZ,
    WD_COUNT_
};

/* pursuit: the target handle as two uint32 (index1, world0 << 16 | generation) */
enum {
    PU_SLOT = 0, PU_ROW,
    PU_TARGET_INDEX1, PU_TARGET_TAG,
    PU_W_PURSUE, PU_W_EVADE, PU_MAX_PREDICTION,
    PU_COUNT_
};

/* follow: the leader handle as two uint32, like pursuit */
enum {
    FO_SLOT = 0, FO_ROW,
    FO_LEADER_INDEX1, FO_LEADER_TAG,
    FO_WEIGHT, FO_BEHIND, FO_BEHIND_PER_SPEED, FO_ARRIVE_GAIN,
    FO_COUNT_
};

/* avoid: AV_TANGENTIAL is uint32 */
enum {
    AV_SLOT = 0, AV_ROW,
    AV_WEIGHT, AV_LOOKAHEAD, AV_GAIN, AV_TANGENTIAL,
    AV_COUNT_
};

/* dseek: DS_ROUTE, DS_INDEX and DS_ARC are int32. DS_ARC (since snapshot
 * version 6): the waypoint circle the agent flies its final arc on (+1 or
 * -1, its orientation; dseek_follow_circle_2d/3d), 0 while it plans. */
enum {
    DS_SLOT = 0, DS_ROW,
    DS_WEIGHT, DS_WP_X, DS_WP_Y, DS_WP_Z, DS_DIR_X, DS_DIR_Y, DS_DIR_Z, DS_SPEED,
    DS_ROUTE, DS_INDEX, DS_R_MIN, DS_REACH, DS_ARC,
    DS_COUNT_
};

/* ground: a ground vehicle (systems/ground.c). GR_FOLLOWER, GR_PATH, GR_N,
 * GR_MAX_RECOVERIES, GR_VEHICLE_LIMITS, the counters (GR_FAILED, GR_STUCK_EVENTS, GR_TELEPORTS,
 * GR_FRAMES, GR_INSIDE_FRAMES, GR_STUCK_FRAMES) and the flags (GR_CONTACT,
 * GR_COMPLETED, GR_INSIDE, GR_STUCK) are int32; the rest float. GR_YAW is the vehicle's own heading: the
 * agent's heading and quaternion are written from it each step (integrate
 * does not preserve a 3D yaw bit for bit). */
enum {
    GR_SLOT = 0, GR_ROW,
    /* vehicle parameters (gv_params_t) */
    GR_MASS, GR_WHEELBASE, GR_MAX_STEER, GR_STEER_RATE, GR_MAX_YAW_RATE, GR_ENGINE_FORCE,
    GR_REVERSE_FORCE, GR_BRAKE_FORCE, GR_DRAG, GR_ROLLING, GR_TRACTION, GR_MAX_SPEED,
    GR_MAX_REVERSE_SPEED, GR_RADIUS,
    /* vehicle state (gv_state_t, position aside: the agent's) */
    GR_YAW, GR_V, GR_V_LAT, GR_STEER, GR_YAW_RATE, GR_CONTACT,
    /* inputs: manual (shoal_agent_set_drive) and last applied */
    GR_DRIVE_THROTTLE, GR_DRIVE_STEERING, GR_THROTTLE, GR_STEERING,
    /* follower parameters (pf_params_t) and path */
    GR_FOLLOWER, GR_PATH, GR_A_LAT, GR_DH, GR_N, GR_V_MIN, GR_V_MAX, GR_BASELINE_GAIN,
    GR_LOOKAHEAD_MIN, GR_LOOKAHEAD_TIME, GR_LOOKAHEAD_MAX, GR_KP, GR_KI, GR_ARRIVE_RADIUS,
    GR_STUCK_WINDOW, GR_STUCK_PROGRESS, GR_REVERSE_TIME, GR_MAX_RECOVERIES, GR_VEHICLE_LIMITS,
    /* follower state (pf_state_t) */
    GR_S, GR_PI_INTEGRAL, GR_WINDOW_TIME, GR_WINDOW_S, GR_RECOVER_TIME, GR_RECOVER_STEER,
    GR_FAILED, GR_STUCK_EVENTS, GR_TELEPORTS, GR_COMPLETED,
    /* last follower outputs (pf_command_t) */
    GR_TARGET_SPEED, GR_TARGET_X, GR_TARGET_Y, GR_TARGET_Z, GR_CTE, GR_INSIDE, GR_STUCK,
    /* run metrics since the path was set */
    GR_FRAMES, GR_DRIVE_TIME, GR_DISTANCE, GR_CTE_SUM, GR_INSIDE_FRAMES, GR_STUCK_FRAMES,
    GR_COUNT_
};

/* planner: a planner agent (systems/planner.c). Integer columns: PL_GOAL,
 * PL_AVOID, PL_STRATEGY, PL_MAX_DEPTH, PL_MIN_DEPTH, PL_MAX_EXPANSIONS,
 * PL_K_SKIP, PL_N_V, PL_K, PL_LEN, PL_CI, PL_CF, PL_NEXT, PL_PLAN_NOW,
 * PL_OVERLAP, PL_COLLISIONS; uint32: PL_GOAL_INDEX1, PL_GOAL_TAG (a stored handle, as
 * pursuit's), PL_PERM_OFFSET and the halves of the 64-bit statistics
 * (*_LO, *_HI: int64 or double bits); the rest float.
 *
 * The interval state: the pose at the interval's start (PL_START_*), the
 * relative state of the trim integration (PL_REL_*, PL_K substeps done of
 * PL_LEN: the table's substeps but for a first interval cut short to the
 * agent's phase), the controls it runs from and to (PL_CI -> PL_CF), the
 * speed it runs at (PL_RUN_SPEED, taken from PL_SPEED at each interval's
 * start), the control planned for the next interval (PL_NEXT, -1 for none)
 * and PL_PLAN_NOW, set on a new (or teleported) agent whose current interval
 * is still to be planned. The agent's pose is trim_compose(start, rel, run
 * speed), rewritten every step. */
enum {
    PL_SLOT = 0, PL_ROW,
    /* parameters (shoal_planner_t) */
    PL_SPEED, PL_RADIUS, PL_GOAL, PL_GOAL_X, PL_GOAL_Y, PL_GOAL_Z, PL_GOAL_INDEX1, PL_GOAL_TAG,
    PL_AVOID, PL_STRATEGY, PL_DISCOUNT, PL_OPTIMISM, PL_MAX_DEPTH, PL_MIN_DEPTH,
    PL_MAX_EXPANSIONS, PL_K_SKIP, PL_N_V, PL_COLLAPSE, PL_DAMPING,
    /* interval state */
    PL_START_X, PL_START_Y, PL_START_Z, PL_START_QW, PL_START_QX, PL_START_QY, PL_START_QZ,
    PL_REL_X, PL_REL_Y, PL_REL_Z, PL_REL_QW, PL_REL_QX, PL_REL_QY, PL_REL_QZ,
    PL_K, PL_LEN, PL_CI, PL_CF, PL_NEXT, PL_PLAN_NOW, PL_RUN_SPEED, PL_PERM_OFFSET, PL_OVERLAP,
    /* statistics */
    PL_SEARCHES_LO, PL_SEARCHES_HI, PL_GOODNESS_LO, PL_GOODNESS_HI,
    PL_NS_LO, PL_NS_HI, /* wall time: never hashed */
    PL_STATES_LO, PL_STATES_HI, PL_EXPANDED_LO, PL_EXPANDED_HI,
    PL_COLLISIONS, PL_LAST_GOODNESS,
    /* parameters appended later: since snapshot version 5 */
    PL_TIME_BUDGET, /* ms per search, 0 = none (a wall-clock parameter: never hashed) */
    PL_COUNT_
};

/* crowd: parameters of shoal_crowd_t; CR_MAX_NEIGHBORS is int32.
 * CR_SIDE_PREFERENCE since snapshot version 4 (files of version 3 have the
 * columns before it: it loads as 0). */
enum {
    CR_SLOT = 0, CR_ROW,
    CR_NEIGHBOR_DISTANCE, CR_MAX_NEIGHBORS, CR_TAU, CR_TAU_WALLS, CR_RESPONSIBILITY,
    CR_PREFERRED_SPEED, CR_TIME_GAP,
    CR_SIDE_PREFERENCE,
    CR_COUNT_
};

/* contact: membership only */
enum {
    CT_SLOT = 0, CT_ROW,
    CT_COUNT_
};

#define COMP_F(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, float, (col))
#define COMP_U(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, uint32_t, (col))
#define COMP_I(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, int32_t, (col))

#endif /* SHOAL_COMPONENTS_H */
