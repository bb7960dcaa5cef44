/* Planner agents as agents of the world: the world-level data they share
 * (the trim table, the adaptive permutation, the planner clock, the per-step
 * obstacle scene and the search memory) and the glue between the public
 * definitions and the COMP_PLANNER component.
 *
 * planner_world.c owns the data, the public trim-table, status and goal
 * API and the component's columns; planner.c owns the four systems
 * (planner, planner_move, obstacle_move). The pure parts
 * are trim.h (tables, the one integrator) and planner_search.h (behaviors,
 * scene, search). */
#ifndef SHOAL_PLANNER_H
#define SHOAL_PLANNER_H

#include <string.h>

#include "ecs/world.h"
#include "modules/registry.h"
#include "modules/planner/planner_search.h"
#include "modules/planner/trim.h"

/* planner: a planner agent (modules/planner/planner.c). Integer columns: PL_GOAL,
 * PL_AVOID, PL_STRATEGY, PL_MAX_DEPTH, PL_MIN_DEPTH, PL_MAX_EXPANSIONS,
 * PL_K_SKIP, PL_N_V, PL_K, PL_LEN, PL_CI, PL_CF, PL_NEXT, PL_PLAN_NOW,
 * PL_OVERLAP, PL_COLLISIONS; uint32: PL_GOAL_ID_LO, PL_GOAL_ID_HI (the goal agent's
 * global id + 1, as pursuit's target), PL_PERM_OFFSET and the halves of the 64-bit statistics
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
    PL_SLOT = 0,
    PL_ROW,
    /* parameters (shoal_planner_t) */
    PL_SPEED,
    PL_RADIUS,
    PL_GOAL,
    PL_GOAL_X,
    PL_GOAL_Y,
    PL_GOAL_Z,
    PL_GOAL_ID_LO,
    PL_GOAL_ID_HI,
    PL_AVOID,
    PL_STRATEGY,
    PL_DISCOUNT,
    PL_OPTIMISM,
    PL_MAX_DEPTH,
    PL_MIN_DEPTH,
    PL_MAX_EXPANSIONS,
    PL_K_SKIP,
    PL_N_V,
    PL_COLLAPSE,
    PL_DAMPING,
    /* interval state */
    PL_START_X,
    PL_START_Y,
    PL_START_Z,
    PL_START_QW,
    PL_START_QX,
    PL_START_QY,
    PL_START_QZ,
    PL_REL_X,
    PL_REL_Y,
    PL_REL_Z,
    PL_REL_QW,
    PL_REL_QX,
    PL_REL_QY,
    PL_REL_QZ,
    PL_K,
    PL_LEN,
    PL_CI,
    PL_CF,
    PL_NEXT,
    PL_PLAN_NOW,
    PL_RUN_SPEED,
    PL_PERM_OFFSET,
    PL_OVERLAP,
    /* statistics */
    PL_SEARCHES_LO,
    PL_SEARCHES_HI,
    PL_GOODNESS_LO,
    PL_GOODNESS_HI,
    PL_NS_LO,
    PL_NS_HI, /* wall time: never hashed */
    PL_STATES_LO,
    PL_STATES_HI,
    PL_EXPANDED_LO,
    PL_EXPANDED_HI,
    PL_COLLISIONS,
    PL_LAST_GOODNESS,
    /* parameters appended later: since snapshot version 5 */
    PL_TIME_BUDGET, /* ms per search, 0 = none (a wall-clock parameter: never hashed) */
    PL_COUNT_
};

/* A planner agent's max_expansions is at most this (the search memory of a
 * worker is 1 + max_expansions * (controls + 1) states, ~60 bytes each). */
#define PLANNER_MAX_EXPANSIONS 1000000
/* ... and a worker's search memory holds at most this many states; a
 * search that would visit more stops there as if its budget were spent. */
#define PLANNER_MAX_NODES (1 << 22)
#define PLANNER_MSG 256
/* A planner agent's time_budget_ms is at most this (a minute). */
#define PLANNER_MAX_TIME_BUDGET_MS 60000.0f

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

    /* the planner agents as others see them, made once per step (stamp
     * agent_scene_stamp) from their interval state at the step's start:
     * each agent's track (its current interval's chord to where the table
     * says it ends, then straight on along its facing there) as windowed
     * moving spheres, one per interval of look-ahead (planner.c) */
    plan_sphere_t* agent_spheres;  /* each row's track at a stride (made in parallel) */
    plan_sphere_t* agent_packed;   /* the same, packed in row order (the scene's input) */
    int32_t agent_sphere_capacity; /* of each */
    int32_t* agent_track_n;        /* per planner row: its spheres, then where they start; + 1 */
    int32_t agent_track_capacity;
    void* agent_scene_memory;
    size_t agent_scene_bytes;
    plan_scene_t* agent_scene; /* NULL with fewer than two planner agents */
    uint64_t agent_scene_stamp;

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
    /* the most nodes any agent's search may visit, kept while the planner
     * component's version and row count stay as they were (nodes_ok) */
    int64_t nodes_all;
    uint64_t nodes_version;
    int32_t nodes_count;
    int32_t nodes_ok;
    /* From this many planner agents on, the step lists its searches and
     * sums the tracks' counts over chunks in parallel (0: PLANNER_PAR_MIN);
     * tests set it to compare both ways. */
    int32_t par_min;
} planner_world_t;

#define PLANNER_PAR_MIN 4096

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
shoal_status_t planner_restore_table(world_t* w, trim_table_t* fresh, float chord_slack, const char* where);
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
 * be null or of this world here; that it is given and live, by
 * planner_check_goal_agent (at add and set_planner_goal only: a target
 * removed later is ignored, and reads back as the null handle). */
shoal_status_t planner_validate(world_t* w, const shoal_agent_def_t* d, const char* where);
shoal_status_t planner_check_goal_agent(world_t* w, const shoal_planner_t* p, const char* where);
/* After shoal_agent_teleport: a new interval from the new pose. */
void planner_after_teleport(world_t* w, int32_t r);

/* This step's substep count, advancing the planner clock on the first call
 * of a step. */
int32_t planner_step_substeps(world_t* w, float dt);
/* This step's obstacle scene (built on the first call of a step from the
 * obstacles' positions at the step's start), or NULL when there are no
 * obstacles. Sets *failed on out of memory. */
const plan_scene_t* planner_step_scene(world_t* w, float dt, int* failed);
/* This step's scene of the planner agents' predicted tracks (built on the
 * first call of a step from their interval state at the step's start; a
 * sphere's owner is its component row + 1), or NULL with fewer than two
 * planner agents. Sets *failed on out of memory. */
const plan_scene_t* planner_step_agents(world_t* w, float dt, int* failed);

/* The planner component's columns, fetched once per system run (as
 * agent_view does for the agent table) and indexed by component row. The
 * parameters are read-only to the systems; the column types are those
 * components.h lists. */
typedef struct planner_view_t {
    const int32_t* agent_row;
    /* parameters (shoal_planner_t) */
    const float *speed, *radius;
    const int32_t* goal;
    const float *goal_x, *goal_y, *goal_z;
    const uint32_t *goal_id_lo, *goal_id_hi;
    const int32_t *avoid, *strategy;
    const float *discount, *optimism;
    const int32_t *max_depth, *min_depth, *max_expansions, *k_skip, *n_v;
    const float *collapse, *damping, *time_budget;
    /* interval state */
    float *start_x, *start_y, *start_z, *start_qw, *start_qx, *start_qy, *start_qz;
    float *rel_x, *rel_y, *rel_z, *rel_qw, *rel_qx, *rel_qy, *rel_qz;
    int32_t *k, *len, *ci, *cf, *next, *plan_now;
    float* run_speed;
    uint32_t* perm_offset;
    int32_t* overlap;
    /* statistics: 64-bit values in (lo, hi) halves */
    uint32_t *searches_lo, *searches_hi, *goodness_lo, *goodness_hi, *ns_lo, *ns_hi;
    uint32_t *states_lo, *states_hi, *expanded_lo, *expanded_hi;
    int32_t* collisions;
    float* last_goodness;
} planner_view_t;

static inline planner_view_t planner_view(const world_t* w)
{
    const table_t* t = &w->comps[COMP_PLANNER].table;
#define PV_F(col) TABLE_COL(t, float, col)
#define PV_I(col) TABLE_COL(t, int32_t, col)
#define PV_U(col) TABLE_COL(t, uint32_t, col)
    planner_view_t v = {.agent_row = PV_I(PL_ROW),
                        .speed = PV_F(PL_SPEED),
                        .radius = PV_F(PL_RADIUS),
                        .goal = PV_I(PL_GOAL),
                        .goal_x = PV_F(PL_GOAL_X),
                        .goal_y = PV_F(PL_GOAL_Y),
                        .goal_z = PV_F(PL_GOAL_Z),
                        .goal_id_lo = PV_U(PL_GOAL_ID_LO),
                        .goal_id_hi = PV_U(PL_GOAL_ID_HI),
                        .avoid = PV_I(PL_AVOID),
                        .strategy = PV_I(PL_STRATEGY),
                        .discount = PV_F(PL_DISCOUNT),
                        .optimism = PV_F(PL_OPTIMISM),
                        .max_depth = PV_I(PL_MAX_DEPTH),
                        .min_depth = PV_I(PL_MIN_DEPTH),
                        .max_expansions = PV_I(PL_MAX_EXPANSIONS),
                        .k_skip = PV_I(PL_K_SKIP),
                        .n_v = PV_I(PL_N_V),
                        .collapse = PV_F(PL_COLLAPSE),
                        .damping = PV_F(PL_DAMPING),
                        .time_budget = PV_F(PL_TIME_BUDGET),
                        .start_x = PV_F(PL_START_X),
                        .start_y = PV_F(PL_START_Y),
                        .start_z = PV_F(PL_START_Z),
                        .start_qw = PV_F(PL_START_QW),
                        .start_qx = PV_F(PL_START_QX),
                        .start_qy = PV_F(PL_START_QY),
                        .start_qz = PV_F(PL_START_QZ),
                        .rel_x = PV_F(PL_REL_X),
                        .rel_y = PV_F(PL_REL_Y),
                        .rel_z = PV_F(PL_REL_Z),
                        .rel_qw = PV_F(PL_REL_QW),
                        .rel_qx = PV_F(PL_REL_QX),
                        .rel_qy = PV_F(PL_REL_QY),
                        .rel_qz = PV_F(PL_REL_QZ),
                        .k = PV_I(PL_K),
                        .len = PV_I(PL_LEN),
                        .ci = PV_I(PL_CI),
                        .cf = PV_I(PL_CF),
                        .next = PV_I(PL_NEXT),
                        .plan_now = PV_I(PL_PLAN_NOW),
                        .run_speed = PV_F(PL_RUN_SPEED),
                        .perm_offset = PV_U(PL_PERM_OFFSET),
                        .overlap = PV_I(PL_OVERLAP),
                        .searches_lo = PV_U(PL_SEARCHES_LO),
                        .searches_hi = PV_U(PL_SEARCHES_HI),
                        .goodness_lo = PV_U(PL_GOODNESS_LO),
                        .goodness_hi = PV_U(PL_GOODNESS_HI),
                        .ns_lo = PV_U(PL_NS_LO),
                        .ns_hi = PV_U(PL_NS_HI),
                        .states_lo = PV_U(PL_STATES_LO),
                        .states_hi = PV_U(PL_STATES_HI),
                        .expanded_lo = PV_U(PL_EXPANDED_LO),
                        .expanded_hi = PV_U(PL_EXPANDED_HI),
                        .collisions = PV_I(PL_COLLISIONS),
                        .last_goodness = PV_F(PL_LAST_GOODNESS)};
#undef PV_F
#undef PV_I
#undef PV_U
    return v;
}

/* The pose of component row r after `ahead` more substeps of its current
 * interval (0: now): trim_compose(start, rel advanced, run speed), exactly
 * what planner_move will compute (spec: the world's trim table's). */
trim_pose_t planner_pose_ahead(const trim_spec_t* spec, const planner_view_t* v, int32_t r, int32_t ahead);
/* A pose's position wrapped into a torus world's box (unchanged otherwise),
 * as every interval's start is. */
trim_pose_t planner_wrap_pose(const world_t* w, trim_pose_t p);
/* The stagger phase of an agent (by its global id), in [0, substeps). */
int32_t planner_phase(uint64_t global_id, int32_t substeps);

/* Component row r's interval state: the start pose (PL_START_*) and the
 * motion relative to it (PL_REL_* and the substeps done, PL_K). */
static inline trim_pose_t planner_load_start(const planner_view_t* v, int32_t r)
{
    trim_pose_t p;
    p.pos = (vec3){v->start_x[r], v->start_y[r], v->start_z[r]};
    p.rot = (quat){v->start_qw[r], v->start_qx[r], v->start_qy[r], v->start_qz[r]};
    return p;
}

static inline void planner_store_start(const planner_view_t* v, int32_t r, trim_pose_t p)
{
    v->start_x[r] = p.pos.x;
    v->start_y[r] = p.pos.y;
    v->start_z[r] = p.pos.z;
    v->start_qw[r] = p.rot.w;
    v->start_qx[r] = p.rot.x;
    v->start_qy[r] = p.rot.y;
    v->start_qz[r] = p.rot.z;
}

static inline trim_rel_t planner_load_rel(const planner_view_t* v, int32_t r)
{
    trim_rel_t rel;
    rel.pos = (vec3){v->rel_x[r], v->rel_y[r], v->rel_z[r]};
    rel.rot = (quat){v->rel_qw[r], v->rel_qx[r], v->rel_qy[r], v->rel_qz[r]};
    rel.k = v->k[r];
    return rel;
}

static inline void planner_store_rel(const planner_view_t* v, int32_t r, trim_rel_t rel)
{
    v->rel_x[r] = rel.pos.x;
    v->rel_y[r] = rel.pos.y;
    v->rel_z[r] = rel.pos.z;
    v->rel_qw[r] = rel.rot.w;
    v->rel_qx[r] = rel.rot.x;
    v->rel_qy[r] = rel.rot.y;
    v->rel_qz[r] = rel.rot.z;
    v->k[r] = rel.k;
}

/* Write the agent row's pose columns (position, heading or quaternion,
 * velocity = speed along the facing, angular velocity from the rates) into
 * the view `a` (three: the world is 3D). */
void planner_write_agent_pose(const agent_view_t* a, int three, int32_t row, trim_pose_t pose, float speed,
                              const float rates[TRIM_MAX_AXES]);

/* 64-bit statistics in two uint32 columns (the low and high halves). */
static inline uint64_t planner_get_u64(const uint32_t* lo, const uint32_t* hi, int32_t r)
{
    return (uint64_t)lo[r] | (uint64_t)hi[r] << 32;
}

static inline void planner_set_u64(uint32_t* lo, uint32_t* hi, int32_t r, uint64_t v)
{
    lo[r] = (uint32_t)v;
    hi[r] = (uint32_t)(v >> 32);
}

static inline double planner_get_f64(const uint32_t* lo, const uint32_t* hi, int32_t r)
{
    uint64_t u = planner_get_u64(lo, hi, r);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline void planner_set_f64(uint32_t* lo, uint32_t* hi, int32_t r, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    planner_set_u64(lo, hi, r, u);
}

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

int64_t planner_run(world_t* w, float dt, void* ctx);
int64_t planner_move_run(world_t* w, float dt, void* ctx);

#endif /* SHOAL_PLANNER_H */
