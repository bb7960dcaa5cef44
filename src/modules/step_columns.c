/* The names of the agent table's and the built-in components' columns
 * (registry_t.column_name): for the write check's messages, `shoal run
 * --stats` and docs/step.md. Each is its enum's name, lowercase, without
 * the prefix; a test checks that every column has one. */
#include "modules/registry.h"
#include "modules/neighbors/neighbors.h"
#include "modules/wander/wander.h"
#include "modules/pursuit/pursuit.h"
#include "modules/follow/follow.h"
#include "modules/avoid/avoid.h"
#include "modules/dseek/dseek.h"
#include "modules/ground/ground.h"
#include "modules/planner/planner.h"
#include "modules/crowd/crowd.h"
#include "modules/contacts/contacts.h"
#include "modules/step.h"


static const char* const agent_names[AC_COUNT_] = {
    [AC_SLOT] = "slot",
    [AC_POS_X] = "pos_x",
    [AC_POS_Y] = "pos_y",
    [AC_POS_Z] = "pos_z",
    [AC_VEL_X] = "vel_x",
    [AC_VEL_Y] = "vel_y",
    [AC_VEL_Z] = "vel_z",
    [AC_HEADING] = "heading",
    [AC_QW] = "qw",
    [AC_QX] = "qx",
    [AC_QY] = "qy",
    [AC_QZ] = "qz",
    [AC_OMEGA_X] = "omega_x",
    [AC_OMEGA_Y] = "omega_y",
    [AC_OMEGA_Z] = "omega_z",
    [AC_DESIRED_X] = "desired_x",
    [AC_DESIRED_Y] = "desired_y",
    [AC_DESIRED_Z] = "desired_z",
    [AC_FORCE_X] = "force_x",
    [AC_FORCE_Y] = "force_y",
    [AC_FORCE_Z] = "force_z",
    [AC_TORQUE_X] = "torque_x",
    [AC_TORQUE_Y] = "torque_y",
    [AC_TORQUE_Z] = "torque_z",
    [AC_MASS] = "mass",
    [AC_INERTIA] = "inertia",
    [AC_MAX_FORCE] = "max_force",
    [AC_MAX_TORQUE] = "max_torque",
    [AC_MAX_SPEED] = "max_speed",
    [AC_MAX_TURN_RATE] = "max_turn_rate",
    [AC_RADIUS] = "radius",
    [AC_SPEED_GAIN] = "speed_gain",
    [AC_HEADING_GAIN] = "heading_gain",
    [AC_TURN_DAMPING] = "turn_damping",
    [AC_W_SEEK] = "w_seek",
    [AC_W_FLEE] = "w_flee",
    [AC_W_ARRIVE] = "w_arrive",
    [AC_W_DEPART] = "w_depart",
    [AC_ARRIVE_GAIN] = "arrive_gain",
    [AC_DEPART_GAIN] = "depart_gain",
    [AC_TARGET_X] = "target_x",
    [AC_TARGET_Y] = "target_y",
    [AC_TARGET_Z] = "target_z",
    [AC_THREAT_X] = "threat_x",
    [AC_THREAT_Y] = "threat_y",
    [AC_THREAT_Z] = "threat_z",
    [AC_GROUP] = "group",
    [AC_USER_LO] = "user_lo",
    [AC_USER_HI] = "user_hi",
};

static const char* const neighbors_names[NB_COUNT_] = {
    [NB_SLOT] = "slot",       [NB_ROW] = "row",     [NB_RADIUS] = "radius", [NB_FOV] = "fov",
    [NB_FOV_COS] = "fov_cos", [NB_MAX] = "max",     [NB_K_SEP] = "k_sep",   [NB_K_ALI] = "k_ali",
    [NB_K_COH] = "k_coh",     [NB_W_SEP] = "w_sep", [NB_W_ALI] = "w_ali",   [NB_W_COH] = "w_coh",
};

static const char* const wander_names[WD_COUNT_] = {
    [WD_SLOT] = "slot",     [WD_ROW] = "row",       [WD_KEY] = "key",
    [WD_WEIGHT] = "weight", [WD_CRUISE] = "cruise", [WD_STRENGTH] = "strength",
    [WD_NOISE] = "noise",   [WD_VX] = "vx",         [WD_VY] = "vy",
    [WD_VZ] = "vz",
};

static const char* const pursuit_names[PU_COUNT_] = {
    [PU_SLOT] = "slot",
    [PU_ROW] = "row",
    [PU_TARGET_INDEX1] = "target_index1",
    [PU_TARGET_TAG] = "target_tag",
    [PU_W_PURSUE] = "w_pursue",
    [PU_W_EVADE] = "w_evade",
    [PU_MAX_PREDICTION] = "max_prediction",
};

static const char* const follow_names[FO_COUNT_] = {
    [FO_SLOT] = "slot",
    [FO_ROW] = "row",
    [FO_LEADER_INDEX1] = "leader_index1",
    [FO_LEADER_TAG] = "leader_tag",
    [FO_WEIGHT] = "weight",
    [FO_BEHIND] = "behind",
    [FO_BEHIND_PER_SPEED] = "behind_per_speed",
    [FO_ARRIVE_GAIN] = "arrive_gain",
};

static const char* const avoid_names[AV_COUNT_] = {
    [AV_SLOT] = "slot",           [AV_ROW] = "row",   [AV_WEIGHT] = "weight",
    [AV_LOOKAHEAD] = "lookahead", [AV_GAIN] = "gain", [AV_TANGENTIAL] = "tangential",
};

static const char* const dseek_names[DS_COUNT_] = {
    [DS_SLOT] = "slot",   [DS_ROW] = "row",     [DS_WEIGHT] = "weight", [DS_WP_X] = "wp_x",
    [DS_WP_Y] = "wp_y",   [DS_WP_Z] = "wp_z",   [DS_DIR_X] = "dir_x",   [DS_DIR_Y] = "dir_y",
    [DS_DIR_Z] = "dir_z", [DS_SPEED] = "speed", [DS_ROUTE] = "route",   [DS_INDEX] = "index",
    [DS_R_MIN] = "r_min", [DS_REACH] = "reach", [DS_ARC] = "arc",
};

static const char* const ground_names[GR_COUNT_] = {
    [GR_SLOT] = "slot",
    [GR_ROW] = "row",
    [GR_MASS] = "mass",
    [GR_WHEELBASE] = "wheelbase",
    [GR_MAX_STEER] = "max_steer",
    [GR_STEER_RATE] = "steer_rate",
    [GR_MAX_YAW_RATE] = "max_yaw_rate",
    [GR_ENGINE_FORCE] = "engine_force",
    [GR_REVERSE_FORCE] = "reverse_force",
    [GR_BRAKE_FORCE] = "brake_force",
    [GR_DRAG] = "drag",
    [GR_ROLLING] = "rolling",
    [GR_TRACTION] = "traction",
    [GR_MAX_SPEED] = "max_speed",
    [GR_MAX_REVERSE_SPEED] = "max_reverse_speed",
    [GR_RADIUS] = "radius",
    [GR_YAW] = "yaw",
    [GR_V] = "v",
    [GR_V_LAT] = "v_lat",
    [GR_STEER] = "steer",
    [GR_YAW_RATE] = "yaw_rate",
    [GR_CONTACT] = "contact",
    [GR_DRIVE_THROTTLE] = "drive_throttle",
    [GR_DRIVE_STEERING] = "drive_steering",
    [GR_THROTTLE] = "throttle",
    [GR_STEERING] = "steering",
    [GR_FOLLOWER] = "follower",
    [GR_PATH] = "path",
    [GR_A_LAT] = "a_lat",
    [GR_DH] = "dh",
    [GR_N] = "n",
    [GR_V_MIN] = "v_min",
    [GR_V_MAX] = "v_max",
    [GR_BASELINE_GAIN] = "baseline_gain",
    [GR_LOOKAHEAD_MIN] = "lookahead_min",
    [GR_LOOKAHEAD_TIME] = "lookahead_time",
    [GR_LOOKAHEAD_MAX] = "lookahead_max",
    [GR_KP] = "kp",
    [GR_KI] = "ki",
    [GR_ARRIVE_RADIUS] = "arrive_radius",
    [GR_STUCK_WINDOW] = "stuck_window",
    [GR_STUCK_PROGRESS] = "stuck_progress",
    [GR_REVERSE_TIME] = "reverse_time",
    [GR_MAX_RECOVERIES] = "max_recoveries",
    [GR_VEHICLE_LIMITS] = "vehicle_limits",
    [GR_S] = "s",
    [GR_PI_INTEGRAL] = "pi_integral",
    [GR_WINDOW_TIME] = "window_time",
    [GR_WINDOW_S] = "window_s",
    [GR_RECOVER_TIME] = "recover_time",
    [GR_RECOVER_STEER] = "recover_steer",
    [GR_FAILED] = "failed",
    [GR_STUCK_EVENTS] = "stuck_events",
    [GR_TELEPORTS] = "teleports",
    [GR_COMPLETED] = "completed",
    [GR_TARGET_SPEED] = "target_speed",
    [GR_TARGET_X] = "target_x",
    [GR_TARGET_Y] = "target_y",
    [GR_TARGET_Z] = "target_z",
    [GR_CTE] = "cte",
    [GR_INSIDE] = "inside",
    [GR_STUCK] = "stuck",
    [GR_FRAMES] = "frames",
    [GR_DRIVE_TIME] = "drive_time",
    [GR_DISTANCE] = "distance",
    [GR_CTE_SUM] = "cte_sum",
    [GR_INSIDE_FRAMES] = "inside_frames",
    [GR_STUCK_FRAMES] = "stuck_frames",
};

static const char* const planner_names[PL_COUNT_] = {
    [PL_SLOT] = "slot",
    [PL_ROW] = "row",
    [PL_SPEED] = "speed",
    [PL_RADIUS] = "radius",
    [PL_GOAL] = "goal",
    [PL_GOAL_X] = "goal_x",
    [PL_GOAL_Y] = "goal_y",
    [PL_GOAL_Z] = "goal_z",
    [PL_GOAL_INDEX1] = "goal_index1",
    [PL_GOAL_TAG] = "goal_tag",
    [PL_AVOID] = "avoid",
    [PL_STRATEGY] = "strategy",
    [PL_DISCOUNT] = "discount",
    [PL_OPTIMISM] = "optimism",
    [PL_MAX_DEPTH] = "max_depth",
    [PL_MIN_DEPTH] = "min_depth",
    [PL_MAX_EXPANSIONS] = "max_expansions",
    [PL_K_SKIP] = "k_skip",
    [PL_N_V] = "n_v",
    [PL_COLLAPSE] = "collapse",
    [PL_DAMPING] = "damping",
    [PL_START_X] = "start_x",
    [PL_START_Y] = "start_y",
    [PL_START_Z] = "start_z",
    [PL_START_QW] = "start_qw",
    [PL_START_QX] = "start_qx",
    [PL_START_QY] = "start_qy",
    [PL_START_QZ] = "start_qz",
    [PL_REL_X] = "rel_x",
    [PL_REL_Y] = "rel_y",
    [PL_REL_Z] = "rel_z",
    [PL_REL_QW] = "rel_qw",
    [PL_REL_QX] = "rel_qx",
    [PL_REL_QY] = "rel_qy",
    [PL_REL_QZ] = "rel_qz",
    [PL_K] = "k",
    [PL_LEN] = "len",
    [PL_CI] = "ci",
    [PL_CF] = "cf",
    [PL_NEXT] = "next",
    [PL_PLAN_NOW] = "plan_now",
    [PL_RUN_SPEED] = "run_speed",
    [PL_PERM_OFFSET] = "perm_offset",
    [PL_OVERLAP] = "overlap",
    [PL_SEARCHES_LO] = "searches_lo",
    [PL_SEARCHES_HI] = "searches_hi",
    [PL_GOODNESS_LO] = "goodness_lo",
    [PL_GOODNESS_HI] = "goodness_hi",
    [PL_NS_LO] = "ns_lo",
    [PL_NS_HI] = "ns_hi",
    [PL_STATES_LO] = "states_lo",
    [PL_STATES_HI] = "states_hi",
    [PL_EXPANDED_LO] = "expanded_lo",
    [PL_EXPANDED_HI] = "expanded_hi",
    [PL_COLLISIONS] = "collisions",
    [PL_LAST_GOODNESS] = "last_goodness",
    [PL_TIME_BUDGET] = "time_budget",
};

static const char* const crowd_names[CR_COUNT_] = {
    [CR_SLOT] = "slot",
    [CR_ROW] = "row",
    [CR_NEIGHBOR_DISTANCE] = "neighbor_distance",
    [CR_MAX_NEIGHBORS] = "max_neighbors",
    [CR_TAU] = "tau",
    [CR_TAU_WALLS] = "tau_walls",
    [CR_RESPONSIBILITY] = "responsibility",
    [CR_PREFERRED_SPEED] = "preferred_speed",
    [CR_TIME_GAP] = "time_gap",
    [CR_SIDE_PREFERENCE] = "side_preference",
};

static const char* const contacts_names[CT_COUNT_] = {
    [CT_SLOT] = "slot",
    [CT_ROW] = "row",
};

static const struct {
    const char* const* names;
    int32_t count;
} comp_names[COMP_COUNT_] = {
    [COMP_NEIGHBORS] = {neighbors_names, NB_COUNT_}, [COMP_WANDER] = {wander_names, WD_COUNT_},
    [COMP_PURSUIT] = {pursuit_names, PU_COUNT_},     [COMP_FOLLOW] = {follow_names, FO_COUNT_},
    [COMP_AVOID] = {avoid_names, AV_COUNT_},         [COMP_DSEEK] = {dseek_names, DS_COUNT_},
    [COMP_GROUND] = {ground_names, GR_COUNT_},       [COMP_PLANNER] = {planner_names, PL_COUNT_},
    [COMP_CROWD] = {crowd_names, CR_COUNT_},         [COMP_CONTACT] = {contacts_names, CT_COUNT_},
};

const char* step_column_name(int32_t comp, int32_t col)
{
    if (comp < 0) return col >= 0 && col < AC_COUNT_ ? agent_names[col] : NULL;
    if (comp >= COMP_COUNT_ || col < 0 || col >= comp_names[comp].count) return NULL;
    return comp_names[comp].names[col];
}
