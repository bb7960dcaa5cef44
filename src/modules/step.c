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
 * leave their rows out (`without`, par_for_agents), and ground_vehicle and
 * planner_move write their whole pose, speeds and (zero) actuation. */
#include "modules/grid/grid.h"
#include "modules/motion/motion.h"
#include "modules/neighbors/neighbors.h"
#include "modules/wander/wander.h"
#include "modules/pursuit/pursuit.h"
#include "modules/follow/follow.h"
#include "modules/avoid/avoid.h"
#include "modules/ground/ground.h"
#include "modules/planner/planner.h"
#include "modules/contacts/contacts.h"
#include "modules/crowd/crowd.h"
#include "modules/dseek/dseek.h"
#include "modules/obstacles/obstacles.h"
#include "modules/agent.h"
#include "modules/walls/walls.h"

extern const module_t neighbors_module, wander_module, pursuit_module, follow_module, avoid_module,
    ground_module, planner_module;

/* In enum module_id's order: components are numbered, and module-wide data
 * is hashed and saved, in this order. */
static const module_t* const modules[MOD_COUNT_] = {
    [MOD_GRID] = &grid_module,
    [MOD_NEIGHBORS] = &neighbors_module, [MOD_WANDER] = &wander_module,
    [MOD_PURSUIT] = &pursuit_module,     [MOD_FOLLOW] = &follow_module,
    [MOD_AVOID] = &avoid_module,         [MOD_OBSTACLES] = &obstacles_module,
    [MOD_DSEEK] = &dseek_module,         [MOD_GROUND] = &ground_module,
    [MOD_PLANNER] = &planner_module,     [MOD_WALLS] = &walls_module,
    [MOD_CROWD] = &crowd_module,         [MOD_CONTACT] = &contact_module,
};

/* Agents that a module of their own moves (ground vehicles, planner
 * agents, crowd agents): control and integrate leave them out. */
#define MOVES_ITSELF ((1u << COMP_GROUND) | (1u << COMP_PLANNER) | (1u << COMP_CROWD))

/* Nothing to do this step (system_def_t.idle): so that the passes of
 * wander, control, integrate and wrap may fuse across these systems. */
static int pursuit_idle(const world_t* w) { return w->comps[COMP_PURSUIT].table.count == 0; }
static int follow_idle(const world_t* w) { return w->comps[COMP_FOLLOW].table.count == 0; }
static int dseek_idle(const world_t* w) { return w->comps[COMP_DSEEK].table.count == 0; }
static int avoid_idle(const world_t* w) { return w->comps[COMP_AVOID].table.count == 0; }
static int path_follow_idle(const world_t* w) { return w->comps[COMP_GROUND].table.count == 0; }
static int orca_idle(const world_t* w) { return w->comps[COMP_CROWD].table.count == 0; }
static int planner_idle(const world_t* w) { return w->comps[COMP_PLANNER].table.count == 0; }
static int ground_idle(const world_t* w) { return w->comps[COMP_GROUND].table.count == 0; }
static int planner_move_idle(const world_t* w) { return w->comps[COMP_PLANNER].table.count == 0; }
static int crowd_move_idle(const world_t* w) { return w->comps[COMP_CROWD].table.count == 0; }
static int obstacle_move_idle(const world_t* w) { return obstacles_of(w)->moving_obstacles == 0; }
static int contacts_idle(const world_t* w)
{
    return w->comps[COMP_CROWD].table.count == 0 && w->comps[COMP_CONTACT].table.count == 0;
}

static const system_def_t systems[] = {
    /* sense */
    {"spatial_hash", SHOAL_STAGE_SENSE, spatial_hash_run, "pos, vel",
     "grid (sorted copies); agent order every reorder_interval steps", 0, 0, NULL, NULL, NULL},
    /* decide */
    {"steer", SHOAL_STAGE_DECIDE, steer_run, "pos, vel, heading, limits, behavior weights, target, threat",
     "desired velocity (=)", 0, 0, NULL, NULL, NULL},
    {"neighbors", SHOAL_STAGE_DECIDE, neighbors_run, "grid, heading, neighbors component", "desired velocity (+=)", 0, 0,
     NULL, NULL, NULL},
    {"wander", SHOAL_STAGE_DECIDE, wander_run, "heading, wander component (its walk)",
     "desired (+=), wander walk", 0, 0, wander_rows, NULL, wander_covers},
    {"pursuit", SHOAL_STAGE_DECIDE, pursuit_run, "pos, vel of self and target, pursuit component",
     "desired velocity (+=)", 0, 0, NULL, pursuit_idle, NULL},
    {"follow", SHOAL_STAGE_DECIDE, follow_run, "pos, vel of self and leader, follow component",
     "desired velocity (+=)", 0, 0, NULL, follow_idle, NULL},
    {"dseek", SHOAL_STAGE_DECIDE, dseek_run, "pos, vel, heading or quat, routes, dseek component",
     "desired (+=), route index", 0, 0, NULL, dseek_idle, NULL},
    /* after every behavior that adds to the desired velocity: its no-entry
     * guard bounds the whole sum */
    {"avoid", SHOAL_STAGE_DECIDE, avoid_run,
     "pos, vel, heading or quat, limits, gains, radius, obstacles, avoid component, desired",
     "desired velocity (+=, then bounded near obstacles)", 0, 0, NULL, avoid_idle, NULL},
    {"path_follow", SHOAL_STAGE_DECIDE, path_follow_run, "pos, paths, ground component",
     "ground inputs and follower state", 0, 0, NULL, path_follow_idle, NULL},
    /* last of decide: the steering sum is the preferred velocity */
    {"orca", SHOAL_STAGE_DECIDE, orca_run, "grid, pos, vel, radius, desired, obstacles, crowd component",
     "desired velocity (= the avoiding velocity) of crowd rows", 0, 3, NULL, orca_idle, NULL},
    /* plan */
    {"planner", SHOAL_STAGE_PLAN, planner_run, "planner component, obstacles, pos and vel of goal agents",
     "planner component (next control, statistics)", 0, 0, NULL, planner_idle, NULL},
    /* control */
    {"control", SHOAL_STAGE_CONTROL, control_run, "vel, heading or quat, omega, desired, gains", "force, torque",
     MOVES_ITSELF, 0, control_rows, NULL, NULL},
    /* directed seek flies its plan: force and torque of its rows again */
    {"dseek_track", SHOAL_STAGE_CONTROL, dseek_track_run,
     "vel, heading or quat, omega, desired, limits, gains, dseek plans", "force, torque of dseek rows", 0, 6, NULL,
     dseek_track_idle, NULL},
    /* integrate; first, where every agent that takes part in contacts starts */
    {"contacts_prepare", SHOAL_STAGE_INTEGRATE, contacts_prepare_run,
     "grid, pos, vel, radius, mass, max speed of crowd and contact rows",
     "contact scratch (bodies, starts, candidates of contact rows)", 0, 4, NULL, contacts_prepare_idle, NULL},
    {"integrate", SHOAL_STAGE_INTEGRATE, integrate_run, "force, torque, limits", "pos, vel, heading or quat, omega",
     MOVES_ITSELF, 0, integrate_rows, NULL, NULL},
    {"ground_vehicle", SHOAL_STAGE_INTEGRATE, ground_vehicle_run, "pos, ground component, terrain, obstacles",
     "pos, vel, heading or quat, omega, force := 0, torque := 0 of ground rows; ground component", 0, 0, NULL,
     ground_idle, NULL},
    {"planner_move", SHOAL_STAGE_INTEGRATE, planner_move_run, "planner component, obstacles",
     "pos, vel, heading or quat, omega, force := 0, torque := 0 of planner rows; planner component", 0, 0, NULL,
     planner_move_idle, NULL},
    {"crowd_move", SHOAL_STAGE_INTEGRATE, crowd_move_run, "desired of crowd rows",
     "pos, vel := desired, heading or quat, omega := 0, force := 0, torque := 0 of crowd rows", 0, 3, NULL,
     crowd_move_idle, NULL},
    /* obstacles move after everyone has seen them where they were */
    {"obstacle_move", SHOAL_STAGE_INTEGRATE, obstacle_move_run, "obstacle velocities", "obstacle centers", 0, 0, NULL,
     obstacle_move_idle, NULL},
    /* after everything moved, obstacles included */
    {"contacts", SHOAL_STAGE_INTEGRATE, contacts_run,
     "pos of crowd and contact rows and their nearest, contact scratch, obstacles, walls",
     "pos of crowd and contact rows", 0, 3, NULL, contacts_idle, NULL},
    {"wrap", SHOAL_STAGE_INTEGRATE, wrap_run, "pos (torus worlds only)", "pos", 0, 0, wrap_rows, wrap_idle, NULL},
};

static const registry_t registry = {modules, MOD_COUNT_, systems, (int32_t)(sizeof systems / sizeof systems[0])};

const registry_t* builtin_registry(void) { return &registry; }
