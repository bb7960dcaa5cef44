/* Extending a world: your own per-agent columns, zero-copy access to every
 * column, bulk adds, removes and writes, and your own systems run in
 * parallel on the library's workers (docs/extending.md).
 *
 * Rows. Agents live in rows 0 .. shoal_world_agent_count() - 1 of one
 * table; every column (built-in or yours) has one element per row, in the
 * same row order. Rows move when agents are added or removed and when the
 * sense stage reorders storage by cell: shoal_world_structure_version()
 * changes whenever that happens, so a pointer or a row number taken at one
 * version is valid until the version changes (between steps, or inside a
 * system of the same step before the stage boundary). */
#ifndef SHOAL_EXTEND_H
#define SHOAL_EXTEND_H

#include <stdint.h>

#include "shoal/shoal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Changes whenever rows move: an agent added or removed (also when a step
 * applies queued adds and removes), and every reorder of storage. Starts
 * at 1 for a new or loaded world. 0 for a NULL world. */
SHOAL_API uint64_t shoal_world_structure_version(const shoal_world_t* world);

typedef enum shoal_column_type_t {
    SHOAL_COLUMN_F32 = 1,
    SHOAL_COLUMN_I32 = 2,
    SHOAL_COLUMN_U32 = 3,
    SHOAL_COLUMN_U64 = 4
} shoal_column_type_t;

/* A column: row i's `width` elements of `type` start at
 * (char*)data + i * width * (size of type). Arrays are 64-byte aligned and
 * padded past `count`. */
typedef struct shoal_column_t {
    void* data;
    int32_t count; /* rows: the live agents */
    int32_t width; /* elements per row */
    shoal_column_type_t type;
    int32_t writable; /* 0: read only (writing through data is undefined) */
    uint64_t version; /* shoal_world_structure_version when taken */
} shoal_column_t;

/* A column by name, without copying. Built-in columns, all f32 of width 1
 * unless said: "position.x", "position.y", "position.z", "velocity.x",
 * "velocity.y", "velocity.z", "heading", "orientation.w", "orientation.x",
 * "orientation.y", "orientation.z" (3D), "angular_velocity.x/y/z",
 * "target.x/y/z", "threat.x/y/z", "max_speed", "radius", "group" (u32),
 * read only; and "desired.x", "desired.y", "desired.z", the desired
 * velocity that the decide stage sums, writable from a system of the decide
 * stage (where a custom steering term adds to it). z and orientation
 * columns exist in 3D worlds only (NOT_FOUND in 2D). User components
 * (shoal_world_add_component) are writable. Errors: NULL arguments,
 * NOT_FOUND for an unknown name. */
SHOAL_API shoal_status_t shoal_world_column(shoal_world_t* world, const char* name,
                                            shoal_column_t* out_column);

/* The handle of each row, rows first .. first + count - 1, into out.
 * Errors: a range past the live rows. */
SHOAL_API shoal_status_t shoal_world_row_handles(const shoal_world_t* world, int32_t first, int32_t count,
                                                 shoal_agent_t* out);
/* The row of a live agent (-1 and an error for a stale, pending or foreign
 * handle). Valid while the structure version is unchanged. */
SHOAL_API int32_t shoal_agent_row(const shoal_world_t* world, shoal_agent_t id);

/* ---- user components ------------------------------------------------------ */

/* A named column that every agent has: `width` elements of `type` per row
 * (1..16), starting from `default_value` (width elements; NULL: zeros) for
 * agents added later and for agents already there. It follows its agents
 * through adds, removes and reorders, is saved in snapshots (the loaded
 * world has it again; systems are the caller's to add again) and is part
 * of the state hash. Names: 1..31 characters of [A-Za-z0-9_.], not a built-in
 * column's name. Between steps only. */
typedef struct shoal_component_def_t {
    const char* name;
    shoal_column_type_t type;
    int32_t width;
    const void* default_value;
} shoal_component_def_t;

#define SHOAL_MAX_USER_COMPONENTS 32

SHOAL_API shoal_status_t shoal_world_add_component(shoal_world_t* world, const shoal_component_def_t* def);
SHOAL_API int32_t shoal_world_component_count(const shoal_world_t* world);

/* ---- bulk adds, removes and writes ----------------------------------------- */

/* Per-agent arrays of a bulk add; NULL arrays take the shared definition's
 * value. xyz arrays hold 3 floats per agent (z ignored in 2D). */
typedef struct shoal_agent_arrays_t {
    const float* positions;      /* count * 3 */
    const float* velocities;     /* count * 3 */
    const float* headings;       /* count (2D heading, 3D yaw) */
    const float* targets;        /* count * 3 */
    const uint32_t* groups;      /* count */
    const uint64_t* user_values; /* count */
    const float* pitches;        /* count (3D; ignored in 2D) */
} shoal_agent_arrays_t;

/* Add `count` agents of definition `def`, each with its values from
 * `arrays` where given, in one call: validated first (every value of every
 * agent), then written on the world's workers. All or nothing. out_ids
 * (count handles) may be NULL. Between steps only (BUSY inside a step). */
SHOAL_API shoal_status_t shoal_agents_add(shoal_world_t* world, const shoal_agent_def_t* def,
                                          const shoal_agent_arrays_t* arrays, int32_t count,
                                          shoal_agent_t* out_ids);
/* Remove `count` agents; all handles are checked first (a stale or repeated
 * handle changes nothing). Between steps only (inside a step, queue
 * removals with shoal_agent_remove). */
SHOAL_API shoal_status_t shoal_agents_remove(shoal_world_t* world, const shoal_agent_t* ids, int32_t count);
/* Bulk writes: targets (xyz per agent) of `count` agents, or positions and
 * velocities (a teleport of each; velocities may be NULL: zero). All
 * handles and values are checked first. Between steps only. */
SHOAL_API shoal_status_t shoal_agents_set_targets(shoal_world_t* world, const shoal_agent_t* ids,
                                                  int32_t count, const float* targets);
SHOAL_API shoal_status_t shoal_agents_teleport(shoal_world_t* world, const shoal_agent_t* ids, int32_t count,
                                               const float* positions, const float* velocities);

/* ---- parallel user systems ------------------------------------------------- */

/* A block of rows for a parallel system: agent rows first .. first + count
 * - 1, or, for a system over the agents with a component, the agent rows
 * rows[0 .. count) (in increasing order within a block). worker is the
 * index of the thread running the block (0 .. thread count - 1), for
 * per-worker scratch. */
typedef struct shoal_block_t {
    int32_t first;
    int32_t count;
    const int32_t* rows;
    int32_t worker;
} shoal_block_t;

typedef void shoal_block_fn(shoal_world_t* world, const shoal_block_t* block, void* user_ctx);

/* Run fn over the agents in blocks on the library's workers (the world's
 * backend: OpenMP, your task system or serial), in `stage`, after the
 * built-in systems of that stage and the user systems added before it.
 * `component` (NULL: every agent) names a built-in component ("neighbors",
 * "wander", "pursuit", "follow", "avoid", "dseek", "ground", "planner"):
 * only the agents that have it. min_block is the fewest rows per block (0:
 * 1024). Timed and traced like the built-in systems. Between steps only.
 *
 * The callback runs on several threads at once. On this world it may call
 * only these functions, which change nothing in it: shoal_world_column,
 * shoal_world_row_handles, shoal_agent_row, shoal_world_structure_version,
 * shoal_world_component_count, shoal_world_agent_count,
 * shoal_world_dimensions, shoal_world_thread_count, shoal_world_step_count,
 * shoal_world_time, shoal_world_last_error (the message from before the
 * system: see below), shoal_agent_is_valid, shoal_agent_get_state,
 * shoal_agent_get_def and shoal_agent_get_user_value; and the functions
 * that take no world (shoal_status_string, shoal_stage_name, ...). Any
 * other call on this world (a step, adds, removes, setters, systems,
 * tracing, snapshots, the state hash) is undefined: a data race. Through
 * columns it may read any row of a column that no block writes, and write
 * writable columns in its own block's rows only; then the result is the
 * same for any thread count.
 *
 * Errors raised there. A call that fails inside the callback returns its
 * status as anywhere else, but its message is not written to the world's
 * last error while the blocks run (the workers would write one message at
 * once): each block's errors are kept apart, and once every block has run
 * the world records one of them, the first error raised in the first block
 * that raised any (blocks in row order; over a component, in the order of
 * its agent list): for a callback that goes through its rows in order, the
 * error of the lowest row. Recorded as "system 'NAME': MESSAGE", it is the same
 * error for any thread count, backend and block split. The step goes on
 * and returns SHOAL_OK (a block cannot fail it; a callback that must stop
 * the step records what it needs and a serial system, shoal_world_add_system,
 * after it returns the failure); shoal_world_last_error after the step
 * gives that message unless a later call replaced it. */
SHOAL_API shoal_status_t shoal_world_add_parallel_system(shoal_world_t* world, const char* name,
                                                         shoal_stage_t stage, const char* component,
                                                         int32_t min_block, shoal_block_fn* fn,
                                                         void* user_ctx);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_EXTEND_H */
