/* The step, as one table: every built-in system in step order (DESIGN.md
 * "The step"), with the columns it reads and writes, and the modules whose
 * hooks the core calls (ecs/module.h). This table is the registration: the
 * world registers its systems from it, in this order, and `shoal run
 * --stats` lists them in this order. Adding a module is adding a file, a
 * row of `modules` and its systems' rows.
 *
 * Each system is data-parallel over agents through par_for and writes only
 * its own output columns, so any split of the agents gives the same result.
 * steer sets the desired velocity; the decide systems after it each add
 * their weighted term to it, one system after another (never concurrently).
 * Ground vehicles and planner agents move themselves: control and integrate
 * run over their rows too, and ground_control and planner_control zero their
 * force, torque and speeds after control so that integrate leaves them in
 * place, bit for bit. */
#include "systems/dseek.h"
#include "systems/obstacles.h"
#include "systems/systems.h"

extern const module_t neighbors_module, wander_module, pursuit_module, follow_module, avoid_module,
    ground_module, planner_module;

/* In enum module_id's order: components are numbered, and module-wide data
 * is hashed and saved, in this order. */
static const module_t* const modules[MOD_COUNT_] = {
    [MOD_NEIGHBORS] = &neighbors_module, [MOD_WANDER] = &wander_module,
    [MOD_PURSUIT] = &pursuit_module,     [MOD_FOLLOW] = &follow_module,
    [MOD_AVOID] = &avoid_module,         [MOD_OBSTACLES] = &obstacles_module,
    [MOD_DSEEK] = &dseek_module,         [MOD_GROUND] = &ground_module,
    [MOD_PLANNER] = &planner_module,
};

static const system_def_t systems[] = {
    /* sense */
    {"spatial_hash", SHOAL_STAGE_SENSE, spatial_hash_run, "pos, vel",
     "grid (sorted copies); agent order every reorder_interval steps"},
    /* decide */
    {"steer", SHOAL_STAGE_DECIDE, steer_run, "pos, vel, heading, limits, behavior weights, target, threat",
     "desired velocity (=)"},
    {"neighbors", SHOAL_STAGE_DECIDE, neighbors_run, "grid, heading, neighbors component", "desired velocity (+=)"},
    {"wander", SHOAL_STAGE_DECIDE, wander_run, "heading, wander component (its walk)",
     "desired (+=), wander walk"},
    {"pursuit", SHOAL_STAGE_DECIDE, pursuit_run, "pos, vel of self and target, pursuit component",
     "desired velocity (+=)"},
    {"follow", SHOAL_STAGE_DECIDE, follow_run, "pos, vel of self and leader, follow component",
     "desired velocity (+=)"},
    {"avoid", SHOAL_STAGE_DECIDE, avoid_run, "pos, vel, radius, obstacles, avoid component",
     "desired velocity (+=)"},
    {"dseek", SHOAL_STAGE_DECIDE, dseek_run, "pos, vel, heading or quat, routes, dseek component",
     "desired (+=), route index"},
    {"path_follow", SHOAL_STAGE_DECIDE, path_follow_run, "pos, paths, ground component",
     "ground inputs and follower state"},
    /* plan */
    {"planner", SHOAL_STAGE_PLAN, planner_run, "planner component, obstacles, pos and vel of goal agents",
     "planner component (next control, statistics)"},
    /* control */
    {"control", SHOAL_STAGE_CONTROL, control_run, "vel, heading or quat, omega, desired, gains", "force, torque"},
    {"ground_control", SHOAL_STAGE_CONTROL, ground_control_run, "ground component",
     "force, torque, vel, omega of ground rows := 0"},
    {"planner_control", SHOAL_STAGE_CONTROL, planner_control_run, "planner component",
     "force, torque, vel, omega of planner rows := 0"},
    /* integrate */
    {"integrate", SHOAL_STAGE_INTEGRATE, integrate_run, "force, torque, limits", "pos, vel, heading or quat, omega"},
    {"ground_vehicle", SHOAL_STAGE_INTEGRATE, ground_vehicle_run, "pos, ground component, terrain, obstacles",
     "pos, vel, heading or quat, omega of ground rows; ground component"},
    {"planner_move", SHOAL_STAGE_INTEGRATE, planner_move_run, "planner component, obstacles",
     "pos, vel, heading or quat, omega of planner rows; planner component"},
    /* obstacles move after everyone has seen them where they were */
    {"obstacle_move", SHOAL_STAGE_INTEGRATE, obstacle_move_run, "obstacle velocities", "obstacle centers"},
    {"wrap", SHOAL_STAGE_INTEGRATE, wrap_run, "pos (torus worlds only)", "pos"},
};

static const registry_t registry = {modules, MOD_COUNT_, systems, (int32_t)(sizeof systems / sizeof systems[0])};

const registry_t* builtin_registry(void) { return &registry; }
