/* The world: entity slots, the agent table, systems and threads.
 * Internal; the public face is include/shoal/shoal.h. */
#ifndef SHOAL_WORLD_H
#define SHOAL_WORLD_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ecs/component.h"
#include "ecs/id_map.h"
#include "ecs/memory.h"
#include "ecs/module.h"
#include "ecs/table.h"
#include "shoal/extend.h"
#include "shoal/shoal.h"

/* Columns of the agent table, which every agent has. Grouped hot to cold:
 * state the integrator advances every step, intent and actuation written by
 * decide/control, per-agent parameters read every step, and cold values the
 * library only stores. 2D worlds use HEADING and OMEGA_Z; 3D worlds use the
 * quaternion and the full angular velocity. */
enum agent_column {
    AC_SLOT = 0, /* uint32: owning entity slot */
    /* state */
    AC_POS_X,
    AC_POS_Y,
    AC_POS_Z,
    AC_VEL_X,
    AC_VEL_Y,
    AC_VEL_Z,
    AC_HEADING,
    AC_QW,
    AC_QX,
    AC_QY,
    AC_QZ,
    AC_OMEGA_X,
    AC_OMEGA_Y,
    AC_OMEGA_Z,
    /* intent (decide) and actuation (control) */
    AC_DESIRED_X,
    AC_DESIRED_Y,
    AC_DESIRED_Z,
    AC_FORCE_X,
    AC_FORCE_Y,
    AC_FORCE_Z,
    AC_TORQUE_X,
    AC_TORQUE_Y,
    AC_TORQUE_Z,
    /* vehicle and control parameters */
    AC_MASS,
    AC_INERTIA,
    AC_MAX_FORCE,
    AC_MAX_TORQUE,
    AC_MAX_SPEED,
    AC_MAX_TURN_RATE,
    AC_RADIUS,
    AC_SPEED_GAIN,
    AC_HEADING_GAIN,
    AC_TURN_DAMPING,
    /* behaviors */
    AC_W_SEEK,
    AC_W_FLEE,
    AC_W_ARRIVE,
    AC_W_DEPART,
    AC_ARRIVE_GAIN,
    AC_DEPART_GAIN,
    AC_TARGET_X,
    AC_TARGET_Y,
    AC_TARGET_Z,
    AC_THREAT_X,
    AC_THREAT_Y,
    AC_THREAT_Z,
    /* cold */
    AC_GROUP,   /* uint32 */
    AC_USER_LO, /* uint32: low half of the user value */
    AC_USER_HI, /* uint32: high half (two 4-byte columns keep every
                    * column 4 bytes wide, so reorder scratch stays small) */
    /* identity */
    AC_ID_LO, /* uint32: low half of the agent's global id */
    AC_ID_HI, /* uint32: high half. Ids are given in the order agents are
               * added (0, 1, 2, ...), never reused, independent of slots
               * and of storage order; they key the agent's random numbers
               * and its term of the state hash, and travel in snapshots */
    AC_COUNT_
};

#define AGENT_F(w, col) TABLE_COL(&(w)->agents, float, (col))

/* The parameter columns whose one-value state the world keeps (params_one
 * below): AC_MASS .. AC_DEPART_GAIN, bit k for column AP_FIRST + k. */
#define AP_FIRST AC_MASS
#define AP_COUNT (AC_DEPART_GAIN - AC_MASS + 1)
#define AP_BIT(col) (1u << ((col)-AP_FIRST))

/* A system's view of the agent table: every column's array, fetched once
 * per run (agent_view) instead of column by column in each block. 3D-only
 * columns are NULL in a 2D world. Bytes per agent: 4 per column. */
typedef struct agent_view_t {
    /* state: written by integrate (and the modules that move their agents) */
    float *px, *py, *pz, *vx, *vy, *vz, *heading, *qw, *qx, *qy, *qz, *ox, *oy, *oz;
    /* intent (decide) and actuation (control) */
    float *dx, *dy, *dz, *fx, *fy, *fz, *tx, *ty, *tz;
    /* vehicle, control and behavior parameters */
    float *mass, *inertia, *max_force, *max_torque, *max_speed, *max_turn_rate, *radius;
    float *speed_gain, *heading_gain, *turn_damping;
    float *w_seek, *w_flee, *w_arrive, *w_depart, *arrive_gain, *depart_gain;
    float *target_x, *target_y, *target_z, *threat_x, *threat_y, *threat_z;
    uint32_t* group;
} agent_view_t;

static inline agent_view_t agent_view(const struct shoal_world_t* w);

enum slot_state { SLOT_FREE = 0, SLOT_LIVE = 1, SLOT_PENDING = 2 };

typedef struct slot_t {
    int32_t row;        /* row in the agent table while live */
    uint32_t next_free; /* free-list link while free */
    uint16_t generation;
    uint8_t state;
    uint8_t remove_queued;
} slot_t;

/* Internal system callback: returns the number of agents it touched, or a
 * negative shoal_status_t to stop the step. */
typedef int64_t system_run_fn(world_t* world, float dt, void* ctx);

/* A built-in system's pass over agent rows, which the scheduler may run
 * fused with the next such pass (scheduler.c, "Fused passes"): it fills
 * ctx (at most ROWS_CTX_BYTES, aligned for lanes) and returns the function
 * that runs rows [begin, end) of the agent table, or NULL when the system
 * has nothing to run this step. It reads the world and writes only ctx. */
typedef void rows_fn(int32_t begin, int32_t end, int32_t worker, void* ctx);
typedef rows_fn* rows_prepare_fn(world_t* w, float dt, void* ctx);
#define ROWS_CTX_BYTES 4096

/* A set of columns: what a system reads or writes (system_def_t). agent:
 * bit c for agent column c. comp[k]: bit c for column c of component k,
 * bit 63 standing for column 63 and every column after it (a component may
 * have more than 64: ground's), so COLUMNS_ALL is the whole component.
 * data: bit m for module m's module-wide data (the grid, obstacles,
 * routes), which the write check sees through the module's hash hook. */
#define COLUMNS_ALL UINT64_MAX
typedef struct column_set_t {
    uint64_t agent;
    uint64_t comp[WORLD_MAX_COMPONENTS];
    uint32_t data;
} column_set_t;

/* Whether set s has column c of component k. */
static inline int column_set_has(const column_set_t* s, int32_t k, int32_t c)
{
    return (int)(s->comp[k] >> (c < 63 ? c : 63) & 1u);
}

/* system_def_t.flags. */
enum system_flag {
    /* A pass over agent rows that leaves out the agents a module moves
     * itself (module_t MODULE_MOVES_ITSELF): the world makes its `without`
     * from the modules' flags (par_for_agents). */
    SYSTEM_SKIPS_SELF_MOVING = 1u << 0,
    /* It may reorder the rows of the agent table and of every component
     * (spatial_hash, every reorder_interval steps): the values of each
     * column stay, their rows change, and each component's COMP_ROW is
     * rewritten to the agent rows' new places. */
    SYSTEM_PERMUTES_ROWS = 1u << 1,
};

/* One row of the step table (modules/step.c): the built-in systems in step
 * order. Rows name their fields. `writes` is checked in worlds that ask
 * for it (world_set_write_check): a system that changes a column outside
 * it fails the step. `reads` is documentation. */
struct system_def_t {
    const char* name;
    shoal_stage_t stage;
    system_run_fn* run;
    /* The module whose component's rows it runs over, NULL for none (a
     * pass over every agent, or module-wide work): with it empty, the
     * system is idle (see idle). */
    const module_t* module;
    column_set_t reads;
    column_set_t writes;
    uint32_t flags; /* enum system_flag */
    /* The first snapshot format version that lists it (0: version 1), so
     * that older snapshots, which do not, still load. */
    uint32_t snapshot_since;
    /* What the column sets do not say (which rows, = or +=). */
    const char* note;
    /* Its run as a pass over every row that leaves none of `without` out
     * (a system with rows runs the same pass through run otherwise). */
    rows_prepare_fn* rows;
    /* 1 when it has nothing to do this step, so that passes before and
     * after it may fuse (its run is still called, and changes nothing).
     * NULL: idle when its module's component has no rows (never when it
     * has no module or the module no component). */
    int (*idle)(const world_t* w);
    /* A pass over a component's rows (rows set, `without` 0): 1 when this
     * step those rows are the agent rows, row for row (the component on
     * every agent, in agent-row order), so that its rows function may run
     * over agent rows in a fused pass. NULL: a pass over agent rows, which
     * covers them all when no agent of `without` is left out. */
    int (*covers)(world_t* w);
};

/* The most threads a world may have (thread_count and $SHOAL_THREADS):
 * per-worker tables on the stack are this long. */
#define SHOAL_MAX_THREADS 1024

#define SYSTEM_NAME_MAX 32
#define WORLD_MAX_SYSTEMS 64

typedef struct system_t {
    char name[SYSTEM_NAME_MAX];
    shoal_stage_t stage;
    int32_t enabled;
    system_run_fn* run;
    shoal_system_fn* user_fn;
    /* A parallel user system: fn per block of rows, over every agent
     * (comp < 0) or over the rows of component comp. */
    shoal_block_fn* block_fn;
    int32_t block_comp;
    int32_t min_block;
    uint32_t without;        /* a built-in system skips the agents of these components */
    const system_def_t* def; /* a built-in system's row of the step table */
    int32_t comp;            /* its module's component, -1 for none */
    rows_prepare_fn* rows;   /* system_def_t's */
    int (*idle)(const world_t* w);
    int (*covers)(world_t* w);
    void* ctx;
    int32_t id; /* registration order: stable while systems are inserted */
    uint64_t calls;
    uint64_t ns_total;
    uint64_t agents;
    uint64_t fused_calls; /* calls run inside a fused pass */
} system_t;

/* A user component's description (shoal_world_add_component). */
#define USER_VALUE_BYTES 128 /* the widest element: 16 u64 */
typedef struct user_column_t {
    char name[32];
    shoal_column_type_t type;
    int32_t width;
    uint16_t elem_size;                           /* width * size of type */
    uint32_t default_value[USER_VALUE_BYTES / 4]; /* words: the snapshot writes them as they are */
} user_column_t;

/* A change requested from inside a step, applied at the next stage boundary. */
typedef struct command_t {
    uint32_t slot;
    int32_t is_add;
    uint64_t id;           /* for adds: the global id taken when it was queued */
    shoal_agent_def_t def; /* for adds */
} command_t;

struct shoal_world_t {
    allocator_t alloc;
    int32_t dims;
    uint64_t seed;
    uint16_t tag;      /* handles' world0 (world_tag.c) */
    uint8_t tag_owned; /* this world holds its tag in the live-tag set */
    int32_t in_step;

    /* entities */
    slot_t* slots;
    int32_t slot_capacity;
    int32_t slot_high;  /* slots [0, slot_high) have been used */
    uint32_t free_head; /* UINT32_MAX when empty */
    int32_t pending_adds;
    uint64_t next_id; /* the global id the next added agent gets */
    /* Every live or pending agent's global id to its slot (id_map.h): an
     * entry is put when an add takes the slot and erased when the agent
     * is removed. */
    id_map_t ids;

    table_t agents;
    /* Components (optional per-agent tables), numbered in registry order;
     * comp_module[k] is the module that owns component k. */
    component_t comps[WORLD_MAX_COMPONENTS];
    const module_t* comp_module[WORLD_MAX_COMPONENTS];
    int32_t comp_count;
    /* The modules (ecs/module.h) and their module-wide data, by module
     * index: the spatial hash's grid, obstacles, routes, ground vehicles'
     * paths and terrain, planner agents' trim table and search memory. */
    const registry_t* registry;
    void* module_data[WORLD_MAX_MODULES];

    /* User components (user.c): a table of their own whose row i belongs
     * to agent row i (column 0 the slot, then one column per component,
     * each element `width` values wide). Nothing is allocated until the
     * first one is added. user_scratch holds one column while a reorder
     * permutes them. */
    table_t user;
    user_column_t user_cols[SHOAL_MAX_USER_COMPONENTS];
    int32_t user_count;
    void* user_scratch;
    size_t user_scratch_size;
    /* Changes whenever rows move (shoal_world_structure_version). */
    uint64_t structure_version;
    /* par_for_agents: the components whose agents the running system
     * leaves out, and a bit per agent row to mark them. */
    uint32_t running_without;
    uint64_t* row_mask;
    size_t row_mask_words;
    /* What the mask was made for, kept while it holds: the rows (structure
     * version), the components left out, and each one's row count and
     * version (a component row added to a live agent bumps its version, a
     * removed one lowers its count). */
    int row_mask_ok;
    uint32_t row_mask_without;
    uint64_t row_mask_structure;
    int32_t row_mask_counts[WORLD_MAX_COMPONENTS];
    uint64_t row_mask_versions[WORLD_MAX_COMPONENTS];
    /* Parameter columns that hold one value in every live row (bit k:
     * column AP_FIRST + k holds params_bits[k], compared as bits), so that
     * a system broadcasts the value instead of streaming the column: at
     * 10M agents a flock's control and integrate read 12 such columns a
     * row. Every writer of these columns keeps it exact (agent_params_note
     * and agent_params_rescan, agent_row.c); a column that may hold two
     * values has its bit cleared, and a removal leaves the bits as they
     * are (the rows left hold the values they held). */
    uint32_t params_one;
    uint32_t params_bits[AP_COUNT];

    /* space */
    int32_t wrap;
    float bounds_min[3];
    float bounds_max[3];
    float cell_size;
    int32_t reorder_interval;

    command_t* commands;
    int32_t command_count;
    int32_t command_capacity;

    system_t systems[WORLD_MAX_SYSTEMS];
    int32_t system_count;
    /* The write check (world_set_write_check): NULL when off, else a
     * fingerprint per agent column and per component column (comp_count
     * blocks of each component's column count). */
    uint64_t* write_check;
    uint64_t fused_passes;  /* passes run fused (scheduler.c), for tests */
    uint64_t fused_systems; /* the systems in them, summed */
    /* Scans of a component's rows for agent-row order (permute.c), for
     * tests: a reorder leaves the answer known, so a step scans none. */
    uint64_t order_scans;

    /* threads */
    int32_t thread_count;
    shoal_backend_t backend;
    int32_t bind_threads;
    int32_t threads_bound;
    shoal_enqueue_task_fn* enqueue_task;
    shoal_finish_task_fn* finish_task;
    void* task_user_ctx;
    void* topology; /* hwloc_topology_t, or NULL */
    /* The team of the parallel region a step holds (par_region), NULL
     * outside one; par_spin, how long its workers spin between jobs
     * before they sleep (from $OMP_WAIT_POLICY at world_create). */
    struct par_team* team;
    int32_t par_spin;
    /* Processors the process may run on, counted at world_create before
     * any thread of this world is bound (par_processors). */
    int32_t par_procs;
    /* The automatic thread count's per-step choice (par_auto_begin). */
    struct par_auto {
        int32_t on;             /* thread_count was automatic (0, no $SHOAL_THREADS) */
        int32_t serial;         /* this step runs on the calling thread alone */
        int32_t mode;           /* the mode in use: 0 serial, 1 the workers */
        int32_t used;           /* the mode of this step, -1 none */
        int32_t timed;          /* ns_per_agent holds a time */
        double ns_per_agent;    /* the mode in use's step time per agent, smoothed */
        double other_ns;        /* the other mode's at its last try, 0: none */
        int32_t slow_blocks;    /* blocks in a row slower than other_ns by a quarter */
        double min_step_ns;     /* PAR_AUTO_MIN_STEP_NS (tests lower it) */
        int32_t block_mode;     /* the mode of the block being timed */
        int32_t block_left;     /* its steps still to time */
        int32_t warming;        /* this step is not timed */
        int32_t probing;        /* the block tries the mode not in use */
        int32_t confirming;     /* and the try before it won */
        uint64_t block_ns;      /* the block's time so far */
        uint64_t block_agents;  /* and its agent-steps */
        uint64_t next_probe;    /* the step that tries the mode not in use, at the earliest */
        uint64_t next_probe_ns; /* and the time */
        uint64_t probe_started_ns;
        uint32_t probe_factor; /* the wait after a try, over what it cost */
        uint64_t started_ns;   /* when this step started */
        int32_t agents;        /* agents when it started */
        uint64_t steps[2];     /* steps timed or warming in each mode (tests) */
        uint64_t probes;       /* tries of the mode not in use (tests) */
    } par_auto;

    uint64_t step_count;
    double time;

    /* tracing (ecs/trace.h): NULL when off; trace_system is the id of the
     * system running now, -1 outside systems; trace_limit, the most
     * records a buffer may grow to between steps (0: fixed buffers) */
    struct trace_t* trace;
    int32_t trace_system;
    int32_t trace_limit;
    /* The loop census (ecs/parallel.h), NULL when off, and the system
     * running now for it (index in systems, -1 outside systems, -2 a fused
     * pass: census_fused names it). */
    struct par_census* census;
    int32_t census_system;
    char census_fused[64];

    char error[512];
    uint32_t error_count; /* errors recorded so far: tells a fresh message from an old one */
    /* What a failed reserve_step hook (module.h) makes the step return:
     * SHOAL_ERR_OUT_OF_MEMORY unless the hook sets another (a navigation
     * goal with no walkable cell is INVALID_ARGUMENT). */
    shoal_status_t reserve_status;
    /* Errors raised by calls made from a parallel user system's blocks
     * (world_fail on the workers, see world_block_enter) never touch
     * `error`, which several workers would write at once: each offers its
     * message here, under block_error_lock, and the error of the block
     * that starts at the lowest item is kept (within a block, the first
     * raised), whatever the thread count or the split. After the loop,
     * world_block_errors_end moves it into `error`. */
    atomic_int block_error_lock;
    int32_t block_error_first; /* the kept error's block, INT32_MAX: none */
    shoal_status_t block_error_status;
    char block_error[512];
};

/* Record an error message and return `status` (printf-style). */
/* shoal_world_create with a registry of one's own instead of the built-in
 * one (modules/step.c): the built-in modules and systems and more after
 * them (tests/toy/, docs/modules.md). The registry outlives the world. */
shoal_status_t world_create_with(const shoal_world_def_t* def, const registry_t* registry,
                                 shoal_world_t** out_world, shoal_error_t* err);

shoal_status_t world_fail(world_t* w, shoal_status_t status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, but for const access paths where the message buffer is still ours. */
shoal_status_t world_failc(const world_t* w, shoal_status_t status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The errors of a parallel user system's blocks. world_block_errors_begin
 * before its loop; each block's callback between world_block_enter (its
 * first item) and world_block_leave (given what enter returned), which
 * route the world's errors raised on that thread meanwhile to the block
 * error; world_block_errors_end after the loop records the kept one, if
 * any, as "system 'NAME': MESSAGE". */
typedef struct world_block_scope_t {
    const world_t* w;
    int32_t first;
} world_block_scope_t;
void world_block_errors_begin(world_t* w);
world_block_scope_t world_block_enter(const world_t* w, int32_t first);
void world_block_leave(world_block_scope_t outer);
void world_block_errors_end(world_t* w, const char* system_name);

/* Fill a caller's shoal_error_t (when err is not NULL) and return `status`
 * (printf-style): for calls that have no world to hold the message. */
shoal_status_t error_set(shoal_error_t* err, shoal_status_t status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Handle to slot index, or -1 (and an error recorded) when not valid. With
 * allow_pending, agents queued for addition count as valid. */
int32_t world_resolve(const world_t* w, shoal_agent_t id, int allow_pending, const char* where);
/* Handle to the row of a live agent in component comp, or -1 with *st set
 * and the error recorded: stale, still pending (added during this step) or
 * without the component. `kind` names what the agent is not ("a ground
 * vehicle") and `field` the definition part that enables it ("ground"). */
int32_t world_component_row(const world_t* w, shoal_agent_t id, int comp, const char* kind, const char* field,
                            const char* where, shoal_status_t* st);

/* Systems. */
shoal_status_t world_register_system(world_t* w, const char* name, shoal_stage_t stage, system_run_fn* run,
                                     shoal_system_fn* user_fn, void* ctx);
/* The write check, for tests: with it on, every built-in system runs alone
 * (no fused passes) and the columns it does not declare written
 * (system_def_t.writes), and the module-wide data as far as the modules
 * hash it, are fingerprinted before and after it runs; a
 * change fails the step with SHOAL_ERR_INVALID_ARGUMENT (the declaration is wrong) and a message naming the
 * system and the column. Off (the default) it costs a test of one pointer
 * per system run. Between steps; OUT_OF_MEMORY when its memory cannot be
 * had (the check then stays off). */
shoal_status_t world_set_write_check(world_t* w, int on);
/* The component index of module m, -1 when it has none. */
int32_t world_module_component(const world_t* w, const module_t* m);
/* Whether system s has nothing to do this step (system_def_t.idle). */
int system_idle(const world_t* w, const system_t* s);
/* One system run, timed and traced; a failure is recorded with its name. */
shoal_status_t world_run_system(world_t* w, system_t* s, float dt);
/* Where a step stands: the stage, the next system index in it, and the
 * first failure. */
typedef struct step_cursor_t {
    float dt;
    int32_t stage;
    int32_t next;
    shoal_status_t status;
} step_cursor_t;
/* Runs the step from the cursor on (a step_cursor_t*), stage by stage, each
 * stage's commands applied after it, until the end or a failure; inside a
 * parallel region (w->team) it stops before a user system instead, which
 * the caller runs outside the region and steps over. A par_body_fn. */
shoal_status_t world_run_step(world_t* w, void* cursor);

/* Agents (agent.c). */
shoal_status_t agent_validate_def(world_t* w, const shoal_agent_def_t* def, const char* where);
void agent_write_row(world_t* w, int32_t row, const shoal_agent_def_t* def);
shoal_status_t world_apply_commands(world_t* w);
void world_register_builtin_systems(world_t* w);

/* Return INVALID_ARGUMENT from a public call when the world or pointer p is
 * NULL, naming the argument. */
#define REQUIRE_PTR(w, p, where, name)                                                                       \
    do {                                                                                                     \
        if (!(w)) return SHOAL_ERR_INVALID_ARGUMENT;                                                         \
        if (!(p)) return world_fail((w), SHOAL_ERR_INVALID_ARGUMENT, "%s: %s is NULL", where, name);         \
    } while (0)

/* Checks of a definition's fields that record the error ("%s: <field> must
 * be finite ...") and return 0 when they fail: every element finite, and
 * finite and >= lo (> lo when strict). */
int def_check_finite(world_t* w, const char* where, const char* field, const float* v, int n);
/* The largest parameter of a definition (agent.c says why),
 * the smallest mass and inertia, and the longest step (world.c). */
#define DEF_MAX_MAGNITUDE 1e9f
/* Coordinates (positions, targets, threats, waypoints, obstacle centers)
 * are at most this far from the origin, m: with speeds at most 1e9 m/s and
 * steps at most 1000 s, an agent moves at most 1e12 m a step, so a
 * position reaches float's range (3.4e38) only after some 1e26 steps, and
 * differences of coordinates and their squares (4e36) stay finite. */
#define DEF_MAX_COORDINATE 1e18f
#define DEF_MIN_MASS 1e-6f
#define WORLD_MAX_DT 1e3f
/* The shortest step, s: 1 / dt and a contact's velocity (what it moved over
 * dt, at most about a radius, 1e9 m) stay finite, as do their squares;
 * dt = 1e-40 made both inf. A microsecond is far below any step a crowd,
 * a vehicle or a spacecraft here needs. */
#define WORLD_MIN_DT 1e-6f
int def_check_min(world_t* w, const char* where, const char* field, float v, float lo, int strict);
/* Finite and within +-DEF_MAX_COORDINATE. */
int def_check_coordinates(world_t* w, const char* where, const char* field, const float* v, int n);

/* 1 if an agent of definition d has component comp (its module's needs). */
int agent_needs_component(const world_t* w, const shoal_agent_def_t* d, int comp);

/* 1 if column `col` of the agent table exists in a world of `dims`. */
int agent_column_used(int dims, int col);

/* Handle tags (world_tag.c). claim: a tag no live world holds (at
 * creation); release: give it back (at destroy); adopt: take `saved`
 * instead when no live world holds it (a snapshot load). */
void world_tag_claim(world_t* w);
void world_tag_release(world_t* w);
void world_tag_adopt(world_t* w, uint16_t saved);
/* References to other agents in components (a pursuit target, a leader, a
 * planner's goal agent; module.h's COLUMNS_AGENT_ID) are stored as the
 * agent's global id + 1, 0 for none, and found through the global-id map
 * (w->ids). agent_stored_id: what handle `id` is stored as: its agent's
 * global id + 1 when it names a live or pending agent of w, else 0 (the
 * null handle, or a stale one: that agent is gone, and no agent will ever
 * have its id again). agent_stored_handle: the handle of the live or
 * pending agent a stored value names, the null handle when none does (0,
 * or the agent was removed since). */
uint64_t agent_stored_id(const world_t* w, shoal_agent_t id);
shoal_agent_t agent_stored_handle(const world_t* w, uint64_t stored);
/* The global id of a live or pending agent's slot into *out; 0 when the
 * slot holds neither. */
int agent_slot_global_id(const world_t* w, uint32_t slot, uint64_t* out);
/* The agent row of a stored reference (its two halves), or -1 when that
 * agent is not live (none, removed, or added during this step and still
 * pending). Read-only: safe from parallel systems. */
static inline int32_t world_row_of_stored_id(const world_t* w, uint32_t lo, uint32_t hi);
/* The same for n references (their halves lo[i], hi[i]) into rows[i], in
 * passes over the n of them (the map's buckets, then the slots), so that
 * the cache misses of many look-ups overlap: a pass over a component's
 * rows resolves a block of them before it uses them. */
#define STORED_ID_BLOCK 256
void world_rows_of_stored_ids(const world_t* w, const uint32_t* lo, const uint32_t* hi, int32_t n,
                              int32_t* rows);

/* Room for `rows` more agents of definition d in every component d needs
 * (beyond the queued adds), so that turning it on for them cannot run out
 * of memory half-way through a group. 0 when out of memory. */
int world_reserve_def_rows(world_t* w, const shoal_agent_def_t* d, int32_t rows);

/* Read-modify-validate-write of a live or pending agent's definition (the
 * setters' one path, agent.c's file comment): `edit` changes the current
 * definition, which is validated and written back only if valid. `writes`
 * says what of a live agent the edit may change, and only that is written:
 * AGENT_EDIT_PARAMS, the agent table's parameter columns (target, threat,
 * vehicle, control, the core's behavior weights, gains, user value); and
 * AGENT_EDIT_COMPONENT(k), the row of component k (a module's setter
 * names its own). Whatever `writes` says, a component that the edited
 * definition calls for and the agent lacks is added, and one it no longer
 * calls for is dropped (crowd.enabled takes the agent out of the contact
 * component). */
typedef void def_edit_fn(shoal_agent_def_t* def, const void* arg);
shoal_status_t agent_edit(world_t* w, shoal_agent_t id, const char* where, def_edit_fn* edit, const void* arg,
                          uint64_t writes);
#define AGENT_EDIT_COMPONENT(k) (1ull << (k))
#define AGENT_EDIT_PARAMS (1ull << WORLD_MAX_COMPONENTS)
#define AGENT_EDIT_ALL (~0ull)
/* The definition of a live or pending agent; errors name `where`. */
shoal_status_t agent_read_def(const world_t* w, shoal_agent_t id, shoal_agent_def_t* out, const char* where);

/* Room for the row mask of par_for_agents (parallel.c): one bit per agent
 * row of the table's capacity, grown with it. 0 when out of memory. */
int world_reserve_row_mask(world_t* w);

/* An agent's rows (agent_row.c): the agent table's parameter columns and
 * pose from a definition (the pose's speed clamped to max speed, spin
 * zeroed); the component rows from a definition (added or dropped to match
 * it, and those in `rewrite` written again; capacity reserved beforehand
 * with agent_reserve_components, which is all or nothing in effect); one
 * component row dropped; the
 * orientation, forward axis and user value of a row; the whole definition
 * read back from a live row. */
void agent_write_params(world_t* w, int32_t row, const shoal_agent_def_t* d);
/* The parameter columns' one-value state after rows were written with the
 * values `vals` (AP_COUNT floats in column order, the same for every row
 * written) while `others` live rows kept theirs. */
void agent_params_note(world_t* w, const float* vals, int32_t others);
/* The state from the columns themselves (after a snapshot is read). */
void agent_params_rescan(world_t* w);
/* 1 when every column in `cols` (n of them, each in AP range) holds one
 * value in every live row; its values then go to out[0 .. n). */
int agent_params_one(const world_t* w, const int* cols, int n, float* out);
/* Whether the state is true of the columns: for tests. */
int agent_params_check(const world_t* w);
void agent_write_pose(world_t* w, int32_t row, const float p[3], const float v[3], float heading, quat q);
void agent_write_components(world_t* w, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                            uint64_t rewrite, int changed);
int agent_reserve_components(world_t* w, const shoal_agent_def_t* d, int32_t extra);
void agent_remove_component(world_t* w, int k, uint32_t slot);
quat agent_row_quat(const world_t* w, int32_t row);
vec3 agent_row_forward(const world_t* w, int32_t row);
uint64_t agent_row_user_value(const world_t* w, int32_t row);
void agent_read_row(const world_t* w, int32_t row, shoal_agent_def_t* d);

/* Pieces of an add, for bulk adds (bulk.c): room for `extra` more slots;
 * take a slot; write an agent row's parameters and pose from d, returning
 * the forward axis; module-wide and step memory for agents of d; remove a
 * live agent at once. */
int agent_reserve_slots(world_t* w, int32_t extra);
uint32_t agent_take_slot(world_t* w);
/* An agent row's global id (AC_ID_LO, AC_ID_HI), and writing it. */
static inline uint64_t agent_global_id(const world_t* w, int32_t row);
static inline void agent_set_global_id(world_t* w, int32_t row, uint64_t id);
vec3 agent_write_state(world_t* w, int32_t row, const shoal_agent_def_t* d);
shoal_status_t agent_prepare_modules(world_t* w, const shoal_agent_def_t* d, const char* where);
void agent_remove_live(world_t* w, uint32_t slot);

/* User components (user.c), kept row for row with the agent table. */
int user_reserve(world_t* w, int32_t capacity);
void user_push(world_t* w, uint32_t slot);
void user_swap_remove(world_t* w, int32_t row);
void user_permute(world_t* w, const int32_t* perm);
void user_release(world_t* w);
/* The state hash in two halves (hash.c): the sum of the agents' terms
 * (agent rows, component rows, user columns), and the final value from
 * such a sum, the agent count and the world-wide and module data. A world
 * split over processes adds the sums of its parts before finishing. */
uint64_t world_hash_agent_sum(const world_t* w);
uint64_t world_hash_finish(const world_t* w, uint64_t agent_sum, uint64_t agent_count);
/* Whether a system was added by the user (saved as listed, not restored). */
static inline int system_is_user(const system_t* s) { return s->user_fn != NULL || s->block_fn != NULL; }

/* All or nothing for loaders that make many calls (a scenario's
 * populate), between steps: world_mark notes the world's extent (slots and
 * each module's data, module.h's mark hook); world_rollback, after the
 * caller has removed the obstacles it added (newest first), removes the
 * agents it added, newest first, each slot put back as it was (the
 * generation it had, or unused again when it was fresh), and has every
 * module forget what was added after the mark. Handles, ids and the state
 * hash are then as at the mark. */
typedef struct world_mark_t {
    int32_t slot_high;
    uint64_t next_id;
    int64_t module_note[WORLD_MAX_MODULES][WORLD_MARK_WORDS];
} world_mark_t;

void world_mark(const world_t* w, world_mark_t* mark);
void world_rollback(world_t* w, const world_mark_t* mark, const shoal_agent_t* added, int32_t added_count);

/* Time in nanoseconds from a monotonic clock. */
uint64_t world_now_ns(void);


/* Reorder the agent table: new row i = old row perm[i]. Handles stay valid
 * (slots are re-pointed at their new rows). perm must be a permutation of
 * [0, agent count); it is checked. Needs scratch memory: fails with
 * SHOAL_ERR_OUT_OF_MEMORY, changing nothing, when that cannot be had. */
shoal_status_t world_permute_agents(world_t* w, const int32_t* perm);
/* The same without checks or allocation, for the sense stage: perm must be a
 * permutation, scratch hold world_permute_scratch_size() bytes and
 * component_perm room for one int32 per agent. */
void world_permute_agents_unchecked(world_t* w, const int32_t* perm, void* scratch, int32_t* component_perm);
size_t world_permute_scratch_size(const world_t* w);
/* table_reserve_within with the copying and zeroing spread over the
 * world's workers, so that the pages of a big table are first touched by
 * them, not all by the calling thread; all or nothing. */
int world_table_reserve(world_t* w, table_t* t, int32_t capacity, int32_t limit);
/* world_permute_agents_unchecked spread over the world's workers (the same
 * result for any thread count). Every column is 4 bytes wide, so each of
 * the `spares` arrays, of at least agent-count floats, can be a column's
 * scratch; up to `spares` columns are permuted at once. Columns of one
 * value (found by one scan, or known from params_one) are left as they
 * are, and a component on every agent in agent-row order (what a reorder
 * leaves) moves by `perm` itself, with no look-up of its rows. */
void world_permute_agents_parallel(world_t* w, const int32_t* perm, float* const* spare, int32_t spares,
                                   int32_t* component_perm);
/* Whether component k is on every agent with its row r at agent row r, for
 * every r (what a reorder leaves, and adds and removals keep): then a pass
 * over its rows is a pass over the agent rows. Scanned by the workers, and
 * kept while the rows, the agent count and the component's version are
 * as they were. */
int world_component_in_agent_order(world_t* w, int k);
static inline agent_view_t agent_view(const world_t* w)
{
    const table_t* t = &w->agents;
#define C(col) TABLE_COL(t, float, col)
    agent_view_t v = {.px = C(AC_POS_X),
                      .py = C(AC_POS_Y),
                      .pz = C(AC_POS_Z),
                      .vx = C(AC_VEL_X),
                      .vy = C(AC_VEL_Y),
                      .vz = C(AC_VEL_Z),
                      .heading = C(AC_HEADING),
                      .qw = C(AC_QW),
                      .qx = C(AC_QX),
                      .qy = C(AC_QY),
                      .qz = C(AC_QZ),
                      .ox = C(AC_OMEGA_X),
                      .oy = C(AC_OMEGA_Y),
                      .oz = C(AC_OMEGA_Z),
                      .dx = C(AC_DESIRED_X),
                      .dy = C(AC_DESIRED_Y),
                      .dz = C(AC_DESIRED_Z),
                      .fx = C(AC_FORCE_X),
                      .fy = C(AC_FORCE_Y),
                      .fz = C(AC_FORCE_Z),
                      .tx = C(AC_TORQUE_X),
                      .ty = C(AC_TORQUE_Y),
                      .tz = C(AC_TORQUE_Z),
                      .mass = C(AC_MASS),
                      .inertia = C(AC_INERTIA),
                      .max_force = C(AC_MAX_FORCE),
                      .max_torque = C(AC_MAX_TORQUE),
                      .max_speed = C(AC_MAX_SPEED),
                      .max_turn_rate = C(AC_MAX_TURN_RATE),
                      .radius = C(AC_RADIUS),
                      .speed_gain = C(AC_SPEED_GAIN),
                      .heading_gain = C(AC_HEADING_GAIN),
                      .turn_damping = C(AC_TURN_DAMPING),
                      .w_seek = C(AC_W_SEEK),
                      .w_flee = C(AC_W_FLEE),
                      .w_arrive = C(AC_W_ARRIVE),
                      .w_depart = C(AC_W_DEPART),
                      .arrive_gain = C(AC_ARRIVE_GAIN),
                      .depart_gain = C(AC_DEPART_GAIN),
                      .target_x = C(AC_TARGET_X),
                      .target_y = C(AC_TARGET_Y),
                      .target_z = C(AC_TARGET_Z),
                      .threat_x = C(AC_THREAT_X),
                      .threat_y = C(AC_THREAT_Y),
                      .threat_z = C(AC_THREAT_Z),
                      .group = TABLE_COL(t, uint32_t, AC_GROUP)};
#undef C
    return v;
}

static inline int32_t world_row_of_stored_id(const world_t* w, uint32_t lo, uint32_t hi)
{
    uint64_t stored = (uint64_t)hi << 32 | lo;
    if (stored == 0) return -1;
    int64_t slot = id_map_find(&w->ids, stored - 1);
    if (slot < 0) return -1;
    const slot_t* s = &w->slots[slot];
    return s->state == SLOT_LIVE ? s->row : -1;
}

static inline uint64_t agent_global_id(const world_t* w, int32_t row)
{
    return (uint64_t)TABLE_COL(&w->agents, uint32_t, AC_ID_LO)[row] |
           (uint64_t)TABLE_COL(&w->agents, uint32_t, AC_ID_HI)[row] << 32;
}

static inline void agent_set_global_id(world_t* w, int32_t row, uint64_t id)
{
    TABLE_COL(&w->agents, uint32_t, AC_ID_LO)[row] = (uint32_t)id;
    TABLE_COL(&w->agents, uint32_t, AC_ID_HI)[row] = (uint32_t)(id >> 32);
}

#endif /* SHOAL_WORLD_H */
