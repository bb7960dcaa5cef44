/* Planner agents as agents of the world (issue 6, parts 1-4 on the world
 * side): the world-level data they share (the trim table, the adaptive
 * permutation, the planner clock, the per-step obstacle scene and the
 * search memory) and the glue between the public definitions and the
 * COMP_PLANNER component.
 *
 * planner_world.c owns the data, the public trim-table, status and goal
 * API and the component's columns; planner.c owns the four systems
 * (planner, planner_move, obstacle_move). The pure parts
 * are trim.h (tables, the one integrator) and planner_search.h (behaviors,
 * scene, search). */
#ifndef SHOAL_PLANNER_H
#define SHOAL_PLANNER_H

#include "ecs/world.h"
#include "systems/components.h"
#include "systems/planner_search.h"
#include "systems/trim.h"

/* A planner agent's max_expansions is at most this (the search memory of a
 * worker is 1 + max_expansions * (controls + 1) states, ~60 bytes each). */
#define PLANNER_MAX_EXPANSIONS 1000000
/* ... and a worker's search memory holds at most this many states; a
 * search that would visit more stops there as if its budget were spent. */
#define PLANNER_MAX_NODES (1 << 22)
#define PLANNER_MSG 256

typedef struct planner_world {
    /* the trim table (has_table 0 until one is set, loaded or defaulted) */
    int32_t has_table;
    trim_table_t table;
    /* Largest distance, at unit speed, of an interval's substep positions
     * from the straight segment between its ends (over every table entry).
     * Searches test segments; the agents fly arcs. Collision tests of a
     * search use radius + speed * chord_slack, so a planned path whose
     * segments clear the obstacles is clear along its arcs too. */
    float chord_slack;
    /* adaptive sampling: one circular permutation of [0, controls) per
     * world, drawn from the world seed */
    int32_t* permutation;
    int32_t permutation_count;

    /* the planner clock: substeps advanced so far, and unspent time (s)
     * below one substep h = interval / substeps */
    uint64_t substep_clock;
    double leftover;
    /* this step's substep count, valid while step_stamp == step_count + 1 */
    uint64_t step_stamp;
    int32_t step_substeps;
    double step_leftover; /* leftover at this step's start */

    /* the obstacles as plan spheres and the scene over them, made once per
     * step (scene_stamp == step_count + 1) from their positions at the
     * step's start: rebuilt when obstacles move, were added or removed
     * (scene_version) or the look-ahead changed (scene_horizon) */
    plan_sphere_t* spheres;
    int32_t sphere_capacity;
    void* scene_memory;
    size_t scene_bytes;
    plan_scene_t* scene; /* NULL when there are no obstacles */
    uint64_t scene_stamp;
    uint32_t scene_version;
    float scene_horizon;

    /* the step's searches: component rows, in row order */
    int32_t* replan;
    int32_t replan_capacity;
    /* per-worker search memory (thread_count blocks of scratch_bytes) and
     * failure records (the lowest failing list index and its message) */
    void** scratch;
    int32_t* fail_at;
    char (*fail_msg)[PLANNER_MSG];
    int32_t scratch_workers;
    size_t scratch_bytes;
} planner_world_t;

/* The world's planner data (module-wide data of the planner module), NULL
 * until a table is set or a planner agent is added. */
static inline planner_world_t* planner_data(const world_t* w)
{
    return (planner_world_t*)w->module_data[MOD_PLANNER];
}

/* The world's planner data, created on first use; NULL when out of memory. */
planner_world_t* planner_world_get(world_t* w);
/* Free everything of planner_data(w) (world destruction). */
void planner_release(world_t* w);
/* Free the per-worker search memory (it is grown again when needed). */
void planner_free_search_memory(world_t* w, planner_world_t* pw);

/* Make sure the world can take a planner agent: its data and a trim table
 * (the default one of its dimensions when none was set). 0 when out of
 * memory (the world's error is then set, with `where`). */
int planner_prepare(world_t* w, const char* where);
/* Make a table read from a file the world's (io/trim_file.c): its spec
 * checked, then installed; freed on failure. planner_table_alloc and
 * planner_table_free are the hooks of the world's tables (over its
 * allocator, ctx = &w->alloc). */
shoal_status_t planner_install_loaded_table(world_t* w, trim_table_t* fresh, const char* where);
void* planner_table_alloc(void* ctx, size_t bytes);
void planner_table_free(void* ctx, void* p, size_t bytes);

/* Make `fresh` (its entries from the world's allocator) the world's trim
 * table with the given chord slack, as a snapshot recorded them: checked
 * against the world's dimensions; the permutation is drawn from the seed.
 * Takes ownership of `fresh` in every case (freed on failure). */
shoal_status_t planner_restore_table(world_t* w, trim_table_t* fresh, float chord_slack,
                                     const char* where);
/* The trim table and the planner clock to and from the snapshot section
 * PLAN, and the check of the loaded planner rows against them
 * (planner_snapshot.c; the hooks of module.h). */
void planner_save(const world_t* w, byte_writer_t* wr);
int planner_load(world_t* w, byte_reader_t* rd);
int planner_check_loaded(const world_t* w, byte_reader_t* rd);

/* Grow, before a step's first stage, everything planner_run can allocate
 * in it (list, scene, every worker's search memory for the largest search
 * of the planner agents now live), so that a step out of memory fails
 * before anything changed. 0 when out of memory (the error is set). */
int planner_reserve_step(world_t* w);
/* The same for one more planner agent added inside a step (its search
 * memory), so that the plan stage after it goes live cannot fail. */
int planner_reserve_def(world_t* w, const shoal_agent_def_t* d);

/* Check a definition's planner part (fully only when enabled); the message
 * names the field as "planner.discount" etc. The goal agent is checked to
 * belong to this world here; that it is live, by planner_check_goal_agent
 * (at add and set_planner_goal only: a target removed later is ignored). */
shoal_status_t planner_validate(world_t* w, const shoal_agent_def_t* d, const char* where);
shoal_status_t planner_check_goal_agent(world_t* w, const shoal_planner_t* p, const char* where);

/* Write component row r from a definition. A fresh row starts its first
 * interval from the agent's pose (written just before), planned at the next
 * step and cut short so that its intervals end on its phase (planner.c). */
void planner_write_component(world_t* w, int32_t r, const shoal_agent_def_t* d, int fresh);
void planner_read_component(const world_t* w, int32_t r, shoal_planner_t* out);
/* After shoal_agent_teleport: a new interval from the new pose. */
void planner_after_teleport(world_t* w, int32_t r);

/* This step's substep count, advancing the planner clock on the first call
 * of a step. */
int32_t planner_step_substeps(world_t* w, float dt);
/* This step's obstacle scene (built on the first call of a step from the
 * obstacles' positions at the step's start), or NULL when there are no
 * obstacles. Sets *failed on out of memory. */
const plan_scene_t* planner_step_scene(world_t* w, float dt, int* failed);

/* The pose of component row r after `ahead` more substeps of its current
 * interval (0: now): trim_compose(start, rel advanced, run speed), exactly
 * what planner_move will compute. */
trim_pose_t planner_pose_ahead(const world_t* w, int32_t r, int32_t ahead);
/* A pose's position wrapped into a torus world's box (unchanged otherwise),
 * as every interval's start is. */
trim_pose_t planner_wrap_pose(const world_t* w, trim_pose_t p);
/* The stagger phase of a slot, in [0, substeps). */
int32_t planner_phase(uint32_t slot, int32_t substeps);

/* Component row r's interval state: the start pose (PL_START_*) and the
 * motion relative to it (PL_REL_* and the substeps done, PL_K). */
static inline trim_pose_t planner_load_start(const world_t* w, int32_t r)
{
    const int k = COMP_PLANNER;
    trim_pose_t p;
    p.pos = (vec3){COMP_F(w, k, PL_START_X)[r], COMP_F(w, k, PL_START_Y)[r], COMP_F(w, k, PL_START_Z)[r]};
    p.rot = (quat){COMP_F(w, k, PL_START_QW)[r], COMP_F(w, k, PL_START_QX)[r],
                   COMP_F(w, k, PL_START_QY)[r], COMP_F(w, k, PL_START_QZ)[r]};
    return p;
}

static inline void planner_store_start(world_t* w, int32_t r, trim_pose_t p)
{
    const int k = COMP_PLANNER;
    COMP_F(w, k, PL_START_X)[r] = p.pos.x;
    COMP_F(w, k, PL_START_Y)[r] = p.pos.y;
    COMP_F(w, k, PL_START_Z)[r] = p.pos.z;
    COMP_F(w, k, PL_START_QW)[r] = p.rot.w;
    COMP_F(w, k, PL_START_QX)[r] = p.rot.x;
    COMP_F(w, k, PL_START_QY)[r] = p.rot.y;
    COMP_F(w, k, PL_START_QZ)[r] = p.rot.z;
}

static inline trim_rel_t planner_load_rel(const world_t* w, int32_t r)
{
    const int k = COMP_PLANNER;
    trim_rel_t rel;
    rel.pos = (vec3){COMP_F(w, k, PL_REL_X)[r], COMP_F(w, k, PL_REL_Y)[r], COMP_F(w, k, PL_REL_Z)[r]};
    rel.rot = (quat){COMP_F(w, k, PL_REL_QW)[r], COMP_F(w, k, PL_REL_QX)[r], COMP_F(w, k, PL_REL_QY)[r],
                     COMP_F(w, k, PL_REL_QZ)[r]};
    rel.k = COMP_I(w, k, PL_K)[r];
    return rel;
}

static inline void planner_store_rel(world_t* w, int32_t r, trim_rel_t rel)
{
    const int k = COMP_PLANNER;
    COMP_F(w, k, PL_REL_X)[r] = rel.pos.x;
    COMP_F(w, k, PL_REL_Y)[r] = rel.pos.y;
    COMP_F(w, k, PL_REL_Z)[r] = rel.pos.z;
    COMP_F(w, k, PL_REL_QW)[r] = rel.rot.w;
    COMP_F(w, k, PL_REL_QX)[r] = rel.rot.x;
    COMP_F(w, k, PL_REL_QY)[r] = rel.rot.y;
    COMP_F(w, k, PL_REL_QZ)[r] = rel.rot.z;
    COMP_I(w, k, PL_K)[r] = rel.k;
}

/* Write the agent row's pose columns (position, heading or quaternion,
 * velocity = speed along the facing, angular velocity from the rates). */
void planner_write_agent_pose(world_t* w, int32_t row, trim_pose_t pose, float speed,
                              const float rates[TRIM_MAX_AXES]);

/* 64-bit statistics in two uint32 columns. */
uint64_t planner_get_u64(const world_t* w, int col_lo, int32_t r);
void planner_set_u64(world_t* w, int col_lo, int32_t r, uint64_t v);
double planner_get_f64(const world_t* w, int col_lo, int32_t r);
void planner_set_f64(world_t* w, int col_lo, int32_t r, double v);

/* The interval state of a live planner agent, for tests and tools that
 * check plans against execution: start pose, current pose, the controls
 * (initial -> final), substeps done of the interval's length (the table's
 * substeps but for a first interval cut to the agent's phase) and the run
 * speed. 0 if the agent is not a live planner agent. */
typedef struct planner_interval {
    trim_pose_t start;
    trim_pose_t now;
    int32_t initial_control, final_control;
    int32_t substeps_done, substeps;
    float speed;
} planner_interval_t;
int planner_interval_of(const world_t* w, shoal_agent_t id, planner_interval_t* out);

/* The table's spec and the planner clock into the state hash (nothing when
 * the world has no planner data). */
uint64_t planner_hash(const world_t* w, uint64_t h, uint64_t (*absorb)(uint64_t, uint64_t));

#endif /* SHOAL_PLANNER_H */
