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

enum component_id {
    COMP_NEIGHBORS = 0, /* separation, alignment, cohesion */
    COMP_WANDER,
    COMP_PURSUIT,       /* pursue, evade */
    COMP_FOLLOW,
    COMP_AVOID,
    COMP_DSEEK,
    COMP_GROUND,        /* ground vehicles: an agent has it when ground.enabled */
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

/* Column 1 of every component. */
#define COMP_ROW 1

/* dseek: DS_ROUTE and DS_INDEX are int32 */
enum {
    DS_SLOT = 0, DS_ROW,
    DS_WEIGHT, DS_WP_X, DS_WP_Y, DS_WP_Z, DS_DIR_X, DS_DIR_Y, DS_DIR_Z, DS_SPEED,
    DS_ROUTE, DS_INDEX, DS_R_MIN, DS_REACH,
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

#define COMP_F(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, float, (col))
#define COMP_U(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, uint32_t, (col))
#define COMP_I(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, int32_t, (col))

#endif /* SHOAL_COMPONENTS_H */
