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

#define COMP_F(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, float, (col))
#define COMP_U(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, uint32_t, (col))
#define COMP_I(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, int32_t, (col))

#endif /* SHOAL_COMPONENTS_H */
