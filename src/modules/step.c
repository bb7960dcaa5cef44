/* The step, as one table: every built-in system in step order (docs/overview.md,
 * "The step"), with the columns it reads and writes, and the modules whose
 * hooks the core calls (ecs/module.h). This table is the registration: the
 * world registers its systems from it, in this order, and `shoal run
 * --stats` lists them in this order. Adding a module is adding a folder
 * (src/modules/<name>/), a row of `modules` and its systems' rows
 * (docs/modules.md).
 *
 * Each system is data-parallel over agents through par_for and writes only
 * its own output columns, so any split of the agents gives the same result.
 * steer sets the desired velocity; the decide systems after it each add
 * their weighted term to it, one system after another (never concurrently).
 * Ground vehicles, planner agents and crowd agents move themselves (their
 * modules are flagged MODULE_MOVES_ITSELF): control and integrate leave
 * their rows out (SYSTEM_SKIPS_SELF_MOVING, par_for_agents), and
 * ground_vehicle, planner_move and crowd_move write their whole pose,
 * speeds and (zero) actuation.
 *
 * Rows name their fields. `reads` and `writes` are column sets (world.h
 * column_set_t): agent columns, component columns, module-wide data. A test
 * runs every scenario with the write check on (world_set_write_check), so
 * a system that writes a column its row does not declare fails it; `reads`
 * is not checked. docs/step.md is this table as `shoal step-table
 * --markdown` prints it, and a test compares the two. */
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
#include "modules/nav/nav.h"
#include "modules/navmesh/navmesh.h"
#include "modules/measure/measure.h"
#include "modules/step.h"

extern const module_t neighbors_module, wander_module, pursuit_module, follow_module, avoid_module,
    ground_module, planner_module;

/* In enum module_id's order: components are numbered, and module-wide data
 * is hashed and saved, in this order. */
static const module_t* const modules[MOD_COUNT_] = {
    [MOD_GRID] = &grid_module,           [MOD_NEIGHBORS] = &neighbors_module,
    [MOD_WANDER] = &wander_module,       [MOD_PURSUIT] = &pursuit_module,
    [MOD_FOLLOW] = &follow_module,       [MOD_AVOID] = &avoid_module,
    [MOD_OBSTACLES] = &obstacles_module, [MOD_DSEEK] = &dseek_module,
    [MOD_GROUND] = &ground_module,       [MOD_PLANNER] = &planner_module,
    [MOD_WALLS] = &walls_module,         [MOD_CROWD] = &crowd_module,
    [MOD_CONTACT] = &contact_module,     [MOD_NAV] = &nav_module,
    [MOD_NAVMESH] = &navmesh_module,     [MOD_MEASURE] = &measure_module,
};

/* Column sets. */
#define A(c) (1ull << (c))
#define POS (A(AC_POS_X) | A(AC_POS_Y) | A(AC_POS_Z))
#define VEL (A(AC_VEL_X) | A(AC_VEL_Y) | A(AC_VEL_Z))
#define ORIENT (A(AC_HEADING) | A(AC_QW) | A(AC_QX) | A(AC_QY) | A(AC_QZ))
#define OMEGA (A(AC_OMEGA_X) | A(AC_OMEGA_Y) | A(AC_OMEGA_Z))
#define DESIRED (A(AC_DESIRED_X) | A(AC_DESIRED_Y) | A(AC_DESIRED_Z))
#define FORCE (A(AC_FORCE_X) | A(AC_FORCE_Y) | A(AC_FORCE_Z))
#define TORQUE (A(AC_TORQUE_X) | A(AC_TORQUE_Y) | A(AC_TORQUE_Z))
#define LIMITS                                                                                               \
    (A(AC_MASS) | A(AC_INERTIA) | A(AC_MAX_FORCE) | A(AC_MAX_TORQUE) | A(AC_MAX_SPEED) | A(AC_MAX_TURN_RATE))
#define GAINS (A(AC_SPEED_GAIN) | A(AC_HEADING_GAIN) | A(AC_TURN_DAMPING))
#define WEIGHTS                                                                                              \
    (A(AC_W_SEEK) | A(AC_W_FLEE) | A(AC_W_ARRIVE) | A(AC_W_DEPART) | A(AC_ARRIVE_GAIN) | A(AC_DEPART_GAIN))
#define TARGET (A(AC_TARGET_X) | A(AC_TARGET_Y) | A(AC_TARGET_Z))
#define THREAT (A(AC_THREAT_X) | A(AC_THREAT_Y) | A(AC_THREAT_Z))
#define MOVED (POS | VEL | ORIENT | OMEGA | FORCE | TORQUE) /* what a module that moves its agents writes */
/* Columns a..b of a component (bit 63: column 63 and after, column_set_t). */
#define COLS(a, b) ((2ull << ((b) < 63 ? (b) : 63)) - (1ull << ((a) < 63 ? (a) : 63)))
#define COL(c) COLS(c, c)
#define DATA(m) (1u << (m))

/* Nothing to do this step, other than their module's component being empty
 * (system_def_t.idle): so that the passes of wander, control, integrate and
 * wrap may fuse across these systems. */
static int obstacle_move_idle(const world_t* w) { return obstacles_of(w)->moving_obstacles == 0; }
static int contacts_idle(const world_t* w)
{
    return w->comps[COMP_CROWD].table.count == 0 && w->comps[COMP_CONTACT].table.count == 0;
}

static const system_def_t systems[] = {
    /* sense */
    /* the reach each module that uses the grid asks for (grid_use_t) */
    {.name = "spatial_hash",
     .stage = SHOAL_STAGE_SENSE,
     .run = spatial_hash_run,
     .module = &grid_module,
     .reads = {.agent = POS | VEL | A(AC_RADIUS),
               .comp = {[COMP_NEIGHBORS] = COL(NB_RADIUS),
                        [COMP_CROWD] = COL(CR_NEIGHBOR_DISTANCE),
                        [COMP_GROUND] = COL(GR_RADIUS)}},
     .writes = {.data = DATA(MOD_GRID) | DATA(MOD_NEIGHBORS)},
     .flags = SYSTEM_PERMUTES_ROWS,
     .note = "grid (sorted copies); reorders every table by cell every reorder_interval steps"},
    /* the fields out of date after a change of goals, walls or obstacles */
    {.name = "nav_fields",
     .stage = SHOAL_STAGE_SENSE,
     .run = nav_fields_run,
     .module = &nav_module,
     .idle = nav_fields_idle,
     .writes = {.data = DATA(MOD_NAV)},
     .snapshot_since = 8,
     .note = "travel-time fields of the goals, one goal a worker"},
    /* before decide: the corners the navmesh behavior heads for, and the
     * paths its ground vehicles' followers follow */
    {.name = "navmesh_paths",
     .stage = SHOAL_STAGE_SENSE,
     .run = navmesh_paths_run,
     .module = &navmesh_module,
     .reads = {.agent = POS,
               .comp = {[COMP_NAVMESH] = COLUMNS_ALL,
                        [COMP_GROUND] = COL(GR_SLOT) | COL(GR_DH) | COL(GR_N) | COL(GR_LOOKAHEAD_MAX) |
                                        COL(GR_ARRIVE_RADIUS) | COL(GR_COMPLETED)},
               .data = DATA(MOD_NAVMESH)},
     .writes = {.comp = {[COMP_NAVMESH] = COLS(NM_PLAN_X, NM_AGE) | COLS(NM_ROUTE_COUNT, NM_COUNT_ - 1)},
                .data = DATA(MOD_NAVMESH)},
     .snapshot_since = 9,
     .note = "corners passed; paths planned again (a ground vehicle's first 16 points), at most "
             "replans_per_step, one Detour query a worker"},
    /* last of sense: where every agent starts the step, for the lines */
    {.name = "measure_start",
     .stage = SHOAL_STAGE_SENSE,
     .run = measure_start_run,
     .module = &measure_module,
     .idle = measure_start_idle,
     .reads = {.agent = A(AC_POS_X) | A(AC_POS_Y) | A(AC_SLOT)},
     .writes = {.data = DATA(MOD_MEASURE)},
     .snapshot_since = 10,
     .note = "each agent's position by slot, in worlds with a measurement line; not state"},
    /* decide */
    {.name = "steer",
     .stage = SHOAL_STAGE_DECIDE,
     .run = steer_run,
     .reads = {.agent = POS | ORIENT | A(AC_RADIUS) | A(AC_MASS) | A(AC_MAX_FORCE) | A(AC_MAX_SPEED) |
                        WEIGHTS | TARGET | THREAT},
     .writes = {.agent = DESIRED},
     .note = "desired velocity (=)"},
    {.name = "neighbors",
     .stage = SHOAL_STAGE_DECIDE,
     .run = neighbors_run,
     .module = &neighbors_module,
     .reads = {.agent = POS | VEL | ORIENT | A(AC_MAX_SPEED) | A(AC_GROUP),
               .comp = {[COMP_NEIGHBORS] = COLUMNS_ALL},
               .data = DATA(MOD_GRID)},
     .writes = {.agent = DESIRED, .data = DATA(MOD_NEIGHBORS)},
     .note = "desired velocity (+=)"},
    {.name = "wander",
     .stage = SHOAL_STAGE_DECIDE,
     .run = wander_run,
     .module = &wander_module,
     .reads = {.agent = ORIENT | A(AC_ID_LO) | A(AC_ID_HI), .comp = {[COMP_WANDER] = COLUMNS_ALL}},
     .writes = {.agent = DESIRED, .comp = {[COMP_WANDER] = COLS(WD_VX, WD_VZ)}},
     .note = "desired (+=), its walk",
     .rows = wander_rows,
     .covers = wander_covers},
    {.name = "pursuit",
     .stage = SHOAL_STAGE_DECIDE,
     .run = pursuit_run,
     .module = &pursuit_module,
     .reads = {.agent = POS | VEL | LIMITS, .comp = {[COMP_PURSUIT] = COLUMNS_ALL}},
     .writes = {.agent = DESIRED},
     .note = "desired velocity (+=); reads the target agent's pos and vel"},
    {.name = "follow",
     .stage = SHOAL_STAGE_DECIDE,
     .run = follow_run,
     .module = &follow_module,
     .reads = {.agent = POS | VEL | ORIENT | LIMITS, .comp = {[COMP_FOLLOW] = COLUMNS_ALL}},
     .writes = {.agent = DESIRED},
     .note = "desired velocity (+=); reads the leader's pos and vel"},
    {.name = "dseek",
     .stage = SHOAL_STAGE_DECIDE,
     .run = dseek_run,
     .module = &dseek_module,
     .reads = {.agent = POS | VEL | ORIENT | LIMITS,
               .comp = {[COMP_DSEEK] = COLUMNS_ALL},
               .data = DATA(MOD_DSEEK)},
     .writes = {.agent = DESIRED,
                .comp = {[COMP_DSEEK] = COL(DS_INDEX) | COL(DS_ARC)},
                .data = DATA(MOD_DSEEK)},
     .note = "desired (+=), route index; its plans"},
    {.name = "navigate",
     .stage = SHOAL_STAGE_DECIDE,
     .run = navigate_run,
     .module = &nav_module,
     .reads = {.agent = POS | LIMITS | A(AC_ARRIVE_GAIN),
               .comp = {[COMP_NAV] = COLUMNS_ALL, [COMP_CROWD] = COL(CR_PREFERRED_SPEED)},
               .data = DATA(MOD_NAV)},
     .writes = {.agent = DESIRED, .comp = {[COMP_NAV] = COLS(NV_STATUS, NV_DELAY)}},
     .snapshot_since = 8,
     .note = "desired velocity (+=) down the goal's field; status; start delays counted down"},
    {.name = "nav_journeys",
     .stage = SHOAL_STAGE_DECIDE,
     .run = nav_journeys_run,
     .module = &nav_module,
     .idle = nav_journeys_idle,
     .reads = {.agent = POS, .comp = {[COMP_NAV] = COLUMNS_ALL}, .data = DATA(MOD_NAV)},
     .writes = {.comp = {[COMP_NAV] = COLS(NV_STAGE, NV_STATUS)}, .data = DATA(MOD_NAV)},
     .snapshot_since = 8,
     .note = "agents on a journey that arrived (and waited) move on to the next stage; serial"},
    {.name = "nav_exits",
     .stage = SHOAL_STAGE_DECIDE,
     .run = nav_exits_run,
     .module = &nav_module,
     .idle = nav_exits_idle,
     .reads = {.comp = {[COMP_NAV] = COLUMNS_ALL}, .data = DATA(MOD_NAV)},
     .writes = {.data = DATA(MOD_NAV)},
     .snapshot_since = 8,
     .note = "agents arrived at an exit leave (at the stage's end), counted; serial"},
    {.name = "navmesh_steer",
     .stage = SHOAL_STAGE_DECIDE,
     .run = navmesh_steer_run,
     .module = &navmesh_module,
     .reads = {.agent = POS | LIMITS | A(AC_ARRIVE_GAIN),
               .comp = {[COMP_NAVMESH] = COLUMNS_ALL, [COMP_GROUND] = COL(GR_SLOT) | COL(GR_COMPLETED)}},
     .writes = {.agent = DESIRED, .comp = {[COMP_NAVMESH] = COL(NM_STATUS)}},
     .snapshot_since = 9,
     .note = "desired velocity (+=) to the next corner of the path (not for ground vehicles); status"},
    /* after every behavior that adds to the desired velocity: its no-entry
     * guard bounds the whole sum */
    {.name = "avoid",
     .stage = SHOAL_STAGE_DECIDE,
     .run = avoid_run,
     .module = &avoid_module,
     .reads = {.agent = POS | VEL | ORIENT | LIMITS | GAINS | A(AC_RADIUS) | DESIRED,
               .comp = {[COMP_AVOID] = COLUMNS_ALL},
               .data = DATA(MOD_OBSTACLES)},
     .writes = {.agent = DESIRED},
     .note = "desired velocity (+=, then bounded near obstacles)"},
    {.name = "path_follow",
     .stage = SHOAL_STAGE_DECIDE,
     .run = path_follow_run,
     .module = &ground_module,
     .reads = {.agent = POS,
               .comp = {[COMP_GROUND] = COLUMNS_ALL,
                        [COMP_NAVMESH] =
                            COL(NM_SLOT) | COL(NM_FLAGS) | COL(NM_AGE) | COLS(NM_ROUTE_COUNT, NM_COUNT_ - 1)},
               .data = DATA(MOD_GROUND) | DATA(MOD_NAVMESH)},
     .writes = {.agent = MOVED,
                .comp = {[COMP_GROUND] = COLS(GR_YAW, GR_YAW_RATE) | COLS(GR_THROTTLE, GR_STEERING) |
                                         COLS(GR_S, GR_COUNT_ - 1)}},
     .note = "applied inputs, follower state, outputs and metrics of ground rows; the pose and vehicle state "
             "only when the stuck manager puts a vehicle back on its path (at rest)"},
    /* last of decide: the steering sum is the preferred velocity */
    {.name = "orca",
     .stage = SHOAL_STAGE_DECIDE,
     .run = orca_run,
     .module = &crowd_module,
     .reads = {.agent = POS | VEL | A(AC_RADIUS) | A(AC_MAX_SPEED) | DESIRED | A(AC_ID_LO) | A(AC_ID_HI),
               .comp = {[COMP_CROWD] = COLUMNS_ALL},
               .data = DATA(MOD_GRID) | DATA(MOD_OBSTACLES) | DATA(MOD_WALLS)},
     .writes = {.agent = DESIRED, .data = DATA(MOD_CROWD)},
     .snapshot_since = 3,
     .note = "desired velocity (= the avoiding velocity) of crowd rows"},
    /* plan */
    {.name = "planner",
     .stage = SHOAL_STAGE_PLAN,
     .run = planner_run,
     .module = &planner_module,
     .reads = {.agent = POS | VEL,
               .comp = {[COMP_PLANNER] = COLUMNS_ALL},
               .data = DATA(MOD_OBSTACLES) | DATA(MOD_PLANNER)},
     .writes = {.comp = {[COMP_PLANNER] = COLS(PL_START_X, PL_LAST_GOODNESS)}, .data = DATA(MOD_PLANNER)},
     .note = "next control, interval state, statistics; reads goal agents' pos and vel"},
    /* control */
    {.name = "control",
     .stage = SHOAL_STAGE_CONTROL,
     .run = control_run,
     .reads = {.agent = VEL | ORIENT | OMEGA | DESIRED | A(AC_MASS) | A(AC_INERTIA) | A(AC_MAX_FORCE) |
                        A(AC_MAX_TORQUE) | A(AC_MAX_SPEED) | GAINS},
     .writes = {.agent = FORCE | TORQUE},
     .flags = SYSTEM_SKIPS_SELF_MOVING,
     .rows = control_rows},
    /* directed seek flies its plan: force and torque of its rows again */
    {.name = "dseek_track",
     .stage = SHOAL_STAGE_CONTROL,
     .run = dseek_track_run,
     .module = &dseek_module,
     .reads = {.agent = VEL | ORIENT | OMEGA | DESIRED | LIMITS | GAINS,
               .comp = {[COMP_DSEEK] = COLUMNS_ALL},
               .data = DATA(MOD_DSEEK)},
     .writes = {.agent = FORCE | TORQUE},
     .snapshot_since = 6,
     .note = "force, torque of dseek rows",
     .idle = dseek_track_idle},
    /* integrate; first, where every agent that takes part in contacts starts */
    {.name = "contacts_prepare",
     .stage = SHOAL_STAGE_INTEGRATE,
     .run = contacts_prepare_run,
     .module = &contact_module,
     .reads = {.agent = POS | VEL | A(AC_RADIUS) | A(AC_MASS) | A(AC_MAX_SPEED),
               .comp = {[COMP_CROWD] = COL(COMP_ROW),
                        [COMP_CONTACT] = COL(COMP_ROW),
                        [COMP_GROUND] =
                            COL(GR_MASS) | COL(GR_MAX_SPEED) | COL(GR_MAX_REVERSE_SPEED) | COL(GR_RADIUS)},
               .data = DATA(MOD_GRID)},
     .writes = {.data = DATA(MOD_CONTACT)},
     .snapshot_since = 4,
     .note = "contact scratch (bodies, starts, candidates) of crowd and contact rows",
     .idle = contacts_prepare_idle},
    {.name = "integrate",
     .stage = SHOAL_STAGE_INTEGRATE,
     .run = integrate_run,
     .reads = {.agent = POS | VEL | ORIENT | OMEGA | FORCE | TORQUE | A(AC_MASS) | A(AC_INERTIA) |
                        A(AC_MAX_SPEED) | A(AC_MAX_TURN_RATE)},
     .writes = {.agent = POS | VEL | ORIENT | OMEGA},
     .flags = SYSTEM_SKIPS_SELF_MOVING,
     .rows = integrate_rows},
    {.name = "ground_vehicle",
     .stage = SHOAL_STAGE_INTEGRATE,
     .run = ground_vehicle_run,
     .module = &ground_module,
     .reads = {.agent = POS,
               .comp = {[COMP_GROUND] = COLUMNS_ALL, [COMP_NAVMESH] = COL(NM_SLOT)},
               .data = DATA(MOD_GROUND) | DATA(MOD_OBSTACLES)},
     .writes = {.agent = MOVED, .comp = {[COMP_GROUND] = COLS(GR_YAW, GR_CONTACT) | COL(GR_DISTANCE)}},
     .note = "pose, speeds, force := 0, torque := 0 of ground rows; vehicle state, distance driven"},
    {.name = "planner_move",
     .stage = SHOAL_STAGE_INTEGRATE,
     .run = planner_move_run,
     .module = &planner_module,
     .reads = {.comp = {[COMP_PLANNER] = COLUMNS_ALL}, .data = DATA(MOD_OBSTACLES) | DATA(MOD_PLANNER)},
     .writes = {.agent = MOVED, .comp = {[COMP_PLANNER] = COLS(PL_START_X, PL_LAST_GOODNESS)}},
     .note = "force := 0, torque := 0 of planner rows; interval state"},
    {.name = "crowd_move",
     .stage = SHOAL_STAGE_INTEGRATE,
     .run = crowd_move_run,
     .module = &crowd_module,
     .reads = {.agent = POS | DESIRED, .comp = {[COMP_CROWD] = COL(COMP_ROW)}},
     .writes = {.agent = MOVED, .data = DATA(MOD_CROWD)},
     .snapshot_since = 3,
     .note =
         "vel := desired, omega := 0, force := 0, torque := 0 of crowd rows; their starts (for contacts)"},
    /* obstacles move after everyone has seen them where they were */
    {.name = "obstacle_move",
     .stage = SHOAL_STAGE_INTEGRATE,
     .run = obstacle_move_run,
     .module = &obstacles_module,
     .reads = {.data = DATA(MOD_OBSTACLES)},
     .writes = {.data = DATA(MOD_OBSTACLES)},
     .note = "obstacle centers from their velocities",
     .idle = obstacle_move_idle},
    /* after everything moved, obstacles included */
    {.name = "contacts",
     .stage = SHOAL_STAGE_INTEGRATE,
     .run = contacts_run,
     .module = &contact_module,
     .reads = {.agent = POS | VEL | A(AC_RADIUS) | A(AC_SLOT),
               .comp = {[COMP_CROWD] = COL(COMP_ROW), [COMP_CONTACT] = COL(COMP_ROW)},
               .data = DATA(MOD_CONTACT) | DATA(MOD_CROWD) | DATA(MOD_OBSTACLES) | DATA(MOD_WALLS)},
     .writes = {.agent = POS | VEL, .data = DATA(MOD_CONTACT)},
     .snapshot_since = 3,
     .note = "pos of crowd and contact rows it moved, vel := what they moved over dt (ground vehicles keep "
             "theirs)",
     .idle = contacts_idle},
    {.name = "wrap",
     .stage = SHOAL_STAGE_INTEGRATE,
     .run = wrap_run,
     .reads = {.agent = POS},

     .writes = {.agent = POS},
     .note = "torus worlds only",
     .rows = wrap_rows,
     .idle = wrap_idle},
    /* first of observe: what the step did, before sources add agents */
    {.name = "measure",
     .stage = SHOAL_STAGE_OBSERVE,
     .run = measure_run,
     .module = &measure_module,
     .idle = measure_idle,
     .reads = {.agent = A(AC_POS_X) | A(AC_POS_Y) | A(AC_VEL_X) | A(AC_VEL_Y) | A(AC_SLOT) | A(AC_GROUP),
               .data = DATA(MOD_WALLS) | DATA(MOD_MEASURE)},
     .writes = {.data = DATA(MOD_MEASURE)},
     .snapshot_since = 10,
     .note = "lines' crossings, areas' samples (Voronoi cells one agent a worker, cut by walls); not state"},
    /* last: agents added over time, live for the next step */
    {.name = "nav_sources",
     .stage = SHOAL_STAGE_OBSERVE,
     .run = nav_sources_run,
     .module = &nav_module,
     .idle = nav_sources_idle,
     .reads = {.agent = POS, .data = DATA(MOD_NAV)},
     .writes = {.data = DATA(MOD_NAV)},
     .snapshot_since = 8,
     .note = "sources add the agents due (queued adds, live for the next step); serial"},
};

static const registry_t registry = {.modules = modules,
                                    .module_count = MOD_COUNT_,
                                    .systems = systems,
                                    .system_count = (int32_t)(sizeof systems / sizeof systems[0]),
                                    .column_name = step_column_name};

const registry_t* builtin_registry(void) { return &registry; }
