/* The names of the agent table's and the built-in components' columns
 * (registry_t.column_name): for the write check's messages, `shoal run
 * --stats` and docs/step.md. An agent column's is its enum's name,
 * lowercase, without the prefix; a test checks that every column has one. */
#include <string.h>

#include "modules/registry.h"
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
    [AC_ID_LO] = "id_lo",
    [AC_ID_HI] = "id_hi",
};

/* A component's columns are named by its module's column table
 * (module_t.columns), without the module's own prefix: crowd's
 * "crowd.time_horizon" is its column "time_horizon". */
const char* step_column_name(int32_t comp, int32_t col)
{
    if (comp < 0) return col >= 0 && col < AC_COUNT_ ? agent_names[col] : NULL;
    const registry_t* r = builtin_registry();
    for (int32_t m = 0, k = 0; m < r->module_count; ++m) {
        const module_t* mod = r->modules[m];
        if (mod->column_count <= 0 || k++ != comp) continue;
        if (col < 0 || col >= mod->column_count || !mod->columns) return NULL;
        const char* name = mod->columns[col].name;
        size_t len = strlen(mod->name);
        return strncmp(name, mod->name, len) == 0 && name[len] == '.' ? name + len + 1 : name;
    }
    return NULL;
}
