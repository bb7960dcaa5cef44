/* Modules: how the core reaches behaviors, vehicle models and planners
 * without knowing them (docs/design.md, "Modules and the open core").
 *
 * A module is one row of a registry that src/modules/ provides
 * (builtin_registry(), declared here and defined there, so the core links
 * against the modules but includes none of their headers). A module may own
 * a component (an optional per-agent table, see component.h) and module-wide
 * data (the grid, paths and terrain, trim tables, routes, obstacles) behind
 * w->module_data[id]. The core calls its hooks at fixed points; each hook may
 * be NULL. Hooks run between steps or at stage boundaries, on the calling
 * thread, unless they say otherwise.
 *
 * The order of the registry is part of the state hash and of the snapshot
 * format: components are numbered in registry order, and module-wide data is
 * hashed in registry order. */
#ifndef SHOAL_ECS_MODULE_H
#define SHOAL_ECS_MODULE_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "base/byte_io.h"
#include "shoal/shoal.h"
#include "simd/vec.h"

typedef struct shoal_world_t world_t;

/* Column flags of a component. Every column of a component is 4 bytes wide
 * (an f32, i32 or u32); column 0 is the owning slot and column 1 the owning
 * agent's row (COMP_ROW), which the core maintains. */
enum column_flag {
    COLUMN_NOT_STATE = 1u << 1,     /* a statistic such as wall time: never hashed */
    COLUMN_BITS = 1u << 2,          /* not a float that must be finite: an int32 or uint32, a
                                  * bit pattern, or a statistic that may be infinite (the
                                  * snapshot loader checks the other columns are finite) */
    COLUMN_DERIVED = 1u << 3,       /* no definition field, but the module's write_row writes it
                                  * from the definition alone (neighbors' cosine of half the
                                  * field of view): a definition column all the same */
    COLUMN_MODULE_WRITES = 1u << 4, /* from a definition field, which the table reads back and
                                     * checks, but the module's write_row writes it: what it
                                     * writes depends on the value it replaces (a new route
                                     * restarts the route's cursor) */
    COLUMN_HASH_NONZERO = 1u << 5,  /* state hashed only where its bits are not 0: a column
                                     * appended later (a countdown that is 0 for most rows)
                                     * leaves the hash of rows where it is 0 as it was */
};

/* What a column holds. A reference to another agent is two columns, the
 * AGENT_ID_LO column and then its AGENT_ID_HI column, both from one
 * shoal_agent_t field: the halves of that agent's global id + 1, 0 for
 * none (world.h, agent_stored_id). An id, not the handle's slot and
 * generation: slots are local storage, which a world split over processes
 * does not share, and ids are never reused. */
enum column_type {
    COLUMN_F32 = 0,
    COLUMN_I32,
    COLUMN_U32,
    COLUMN_AGENT_ID_LO,
    COLUMN_AGENT_ID_HI,
};

/* The range check of a definition field (columns_check, ecs/columns.h). The
 * messages are def_check_min's (world.h): they name the field, the value
 * and what was expected. Each accepts the values in [lo, hi] (column_def_t),
 * which the row macros below fill in. */
enum column_check {
    COLUMN_CHECK_NONE = 0,   /* none here: the module's validate checks it, if anything does */
    COLUMN_CHECK_FINITE,     /* a float, finite: [-FLT_MAX, FLT_MAX] */
    COLUMN_CHECK_COORDINATE, /* [-DEF_MAX_COORDINATE, DEF_MAX_COORDINATE] */
    COLUMN_CHECK_AT_LEAST,   /* [lo, DEF_MAX_MAGNITUDE], or [lo, hi] with `range` the bound in words */
    COLUMN_CHECK_ABOVE,      /* the same without lo */
    COLUMN_CHECK_INT,        /* an int32 in [lo, hi], `range` saying so ("1 to 64"); the bounds are
                              * whole numbers of at most 2^24, hi COLUMN_INT_NO_MAX for none */
    COLUMN_CHECK_HANDLE,     /* a handle (the AGENT_ID_LO column's field): null or of this world */
};

/* An INT check's hi when there is none: 2^31, above every int32. */
#define COLUMN_INT_NO_MAX 2147483648.0f

/* No definition field (column_def_t.field): state, or COLUMN_DERIVED. */
#define COLUMN_NO_FIELD (-1)

/* One column of a component, declared once: the module's table of these
 * (module_t.columns), indexed by its column enum, is what the core writes
 * from a definition, reads back into one, checks, hashes and loads. */
typedef struct column_def_t {
    const char* name;  /* as messages name it: "follow.behind", "dseek.waypoint.position[2]" */
    int32_t field;     /* offsetof into shoal_agent_def_t, or COLUMN_NO_FIELD */
    uint8_t type;      /* enum column_type */
    uint8_t flags;     /* enum column_flag (COLUMN_BITS for every integer type) */
    uint8_t check;     /* enum column_check */
    uint8_t since;     /* the first snapshot format version with the column (0: every version
                        * with the component); files of earlier versions load it as 0 bits */
    float lo, hi;      /* the values the check accepts (ABOVE: but lo) */
    const char* range; /* the check's upper bound in words ("[0, 1]"), or NULL for none */
} column_def_t;

/* Rows of a column table, for designated initializers indexed by the
 * module's column enum. The definition field is a member designator of
 * shoal_agent_def_t ("follow.behind", "weights[SHOAL_BEHAVIOR_FOLLOW]"). */
#define COLUMN_FIELD(member) ((int32_t)offsetof(shoal_agent_def_t, member))
/* Columns 0 and 1 of every component: the owning slot and agent row. */
#define COLUMNS_SLOT_ROW                                                                                     \
    [0] = {.name = "slot", .field = COLUMN_NO_FIELD, .type = COLUMN_U32, .flags = COLUMN_BITS},              \
    [1] = {.name = "row", .field = COLUMN_NO_FIELD, .type = COLUMN_I32, .flags = COLUMN_BITS}
/* A float parameter >= lo (COLUMN_CHECK_AT_LEAST) or > lo (ABOVE), and at
 * most DEF_MAX_MAGNITUDE (world.h), or at most hi, which `range` says in
 * words ("[0, 1]"). */
#define COLUMN_AT_LEAST(nm, member, lo_) COLUMN_AT_LEAST_IN(nm, member, lo_, DEF_MAX_MAGNITUDE, NULL)
#define COLUMN_ABOVE(nm, member, lo_) COLUMN_ABOVE_IN(nm, member, lo_, DEF_MAX_MAGNITUDE, NULL)
#define COLUMN_AT_LEAST_IN(nm, member, lo_, hi_, range_)                                                     \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_F32, .check = COLUMN_CHECK_AT_LEAST,       \
        .lo = lo_, .hi = hi_, .range = range_                                                                \
    }
#define COLUMN_ABOVE_IN(nm, member, lo_, hi_, range_)                                                        \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_F32, .check = COLUMN_CHECK_ABOVE,          \
        .lo = lo_, .hi = hi_, .range = range_                                                                \
    }
/* A float state a definition sets: finite, or a coordinate. */
#define COLUMN_FINITE(nm, member)                                                                            \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_F32, .check = COLUMN_CHECK_FINITE,         \
        .lo = -FLT_MAX, .hi = FLT_MAX                                                                        \
    }
#define COLUMN_COORDINATE(nm, member)                                                                        \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_F32, .check = COLUMN_CHECK_COORDINATE,     \
        .lo = -DEF_MAX_COORDINATE, .hi = DEF_MAX_COORDINATE                                                  \
    }
/* A behavior's weight (agent_validate_def checks the weights). */
#define COLUMN_WEIGHT(nm, behavior)                                                                          \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(weights[behavior]), .type = COLUMN_F32                             \
    }
/* An int32 parameter in [lo, hi]. */
#define COLUMN_INT_IN(nm, member, lo_, hi_, range_)                                                          \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_I32, .flags = COLUMN_BITS,                 \
        .check = COLUMN_CHECK_INT, .lo = lo_, .hi = hi_, .range = range_                                     \
    }
/* State no definition carries. */
#define COLUMN_STATE_F32(nm)                                                                                 \
    {                                                                                                        \
        .name = nm, .field = COLUMN_NO_FIELD, .type = COLUMN_F32                                             \
    }
#define COLUMN_STATE_I32(nm)                                                                                 \
    {                                                                                                        \
        .name = nm, .field = COLUMN_NO_FIELD, .type = COLUMN_I32, .flags = COLUMN_BITS                       \
    }
#define COLUMN_STATE_U32(nm)                                                                                 \
    {                                                                                                        \
        .name = nm, .field = COLUMN_NO_FIELD, .type = COLUMN_U32, .flags = COLUMN_BITS                       \
    }
/* A reference to another agent at columns col and col + 1 (its global id's
 * halves), from a shoal_agent_t field that must be null or of this world. */
#define COLUMNS_AGENT_ID(col, nm, member)                                                                    \
    [col] = {.name = nm,                                                                                     \
             .field = COLUMN_FIELD(member),                                                                  \
             .type = COLUMN_AGENT_ID_LO,                                                                     \
             .flags = COLUMN_BITS,                                                                           \
             .check = COLUMN_CHECK_HANDLE},                                                                  \
    [(col) + 1] = {                                                                                          \
        .name = nm ".hi", .field = COLUMN_FIELD(member), .type = COLUMN_AGENT_ID_HI, .flags = COLUMN_BITS}

/* Column 1 of every component. */
#define COMP_ROW 1

typedef uint64_t hash_absorb_fn(uint64_t h, uint64_t word);

/* Words a module may note for a rollback (see mark). */
#define WORLD_MARK_WORDS 3

/* module_t.flags: what the core reads of a module. */
enum module_flag {
    /* Its systems move its agents themselves (their pose, speeds and
     * actuation): the passes that move the others (control, integrate:
     * SYSTEM_SKIPS_SELF_MOVING) leave its component's agents out. */
    MODULE_MOVES_ITSELF = 1u << 0,
};

typedef struct module_t {
    const char* name;
    uint32_t flags; /* enum module_flag */
    /* Its component: column_count > 0 gives the module one, whose index in
     * w->comps is its position among the registry's modules that have one,
     * and whose columns are columns[0 .. column_count) (column_def_t). Its
     * write_row, read_row and validate do the table's part with
     * columns_write, columns_read and columns_check (ecs/columns.h), then
     * what the table cannot say. */
    int32_t column_count;
    const column_def_t* columns;

    /* Module-wide data: w->module_data[module index]. init makes it when a
     * world is created (0 when out of memory); release frees it. */
    int (*init)(world_t* w);
    void (*release)(world_t* w);

    /* Fill the module's part of a fresh definition: shoal_agent_default_def
     * zeroes the definition, sets the core's parts (vehicle, control, gains)
     * and then calls this for every module in registry order. A module
     * touches only its own part, so the order changes nothing. */
    void (*defaults)(shoal_agent_def_t* d);
    /* Whether an agent of definition d has the component. A module whose
     * rows hold a behavior's weight has it whenever that weight is nonzero:
     * a change of the weight (shoal_agent_set_behavior) writes again the
     * rows of the modules that a definition with that behavior alone has. */
    int (*needs)(const shoal_agent_def_t* d);
    /* Check the module's part of a definition (whether or not the agent
     * needs the component, unless the module says otherwise): its table's
     * checks (columns_check), then the rest; the message names the field. */
    shoal_status_t (*validate)(world_t* w, const shoal_agent_def_t* d, const char* where);
    /* Extra checks for a new agent only (a goal agent that must be live). */
    shoal_status_t (*validate_add)(world_t* w, const shoal_agent_def_t* d, const char* where);
    /* Module-wide memory a definition that needs the component calls for
     * (a planner agent's trim table); 0 when out of memory, with the error
     * recorded. */
    int (*prepare)(world_t* w, const shoal_agent_def_t* d, const char* where);
    /* Step memory for an agent of definition d added (or changed) inside a
     * step, which goes live at a stage boundary after the step reserved its
     * memory; 0 when out of memory. */
    int (*reserve_add_in_step)(world_t* w, const shoal_agent_def_t* d);
    /* Step memory, before the first stage, so that a step out of memory
     * fails before anything changed; 0 when out of memory, or when the
     * step cannot run for another reason, which the hook then records
     * (world_fail) and sets as w->reserve_status. */
    int (*reserve_step)(world_t* w);

    /* Write row r of the component from a definition (the agent row, pose
     * included, is already written): the table's columns (columns_write),
     * then the derived columns and state. `fresh`: the row was just added.
     * `forward` is the agent's forward axis. */
    void (*write_row)(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                      int fresh);
    /* Read row r back into the module's part of a definition: the table's
     * columns (columns_read), then what they do not say. */
    void (*read_row)(const world_t* w, int32_t r, shoal_agent_def_t* d);
    /* The agent of `agent_row` lost its row r of the component; the last row
     * moved into r, and its agent's row is moved_agent_row (-1 when r was the
     * last). Called before the rows move. */
    void (*row_removed)(world_t* w, int32_t agent_row, int32_t r, int32_t moved_agent_row);
    /* An agent row moved from `from` to `to` (a removal's swap). */
    void (*agent_row_moved)(world_t* w, int32_t from, int32_t to);
    /* The sense stage's reorder moved the agent rows (new row i = old row
     * perm[i], every component now in agent-row order): was_version is the
     * structure version before it, in_order[k] whether component k was in
     * agent-row order before it (its rows moved by perm too). For data a
     * module keeps across steps by row, which it may move along rather
     * than drop. */
    void (*agents_permuted)(world_t* w, const int32_t* perm, uint64_t was_version, const uint8_t* in_order);
    /* The agent of row r of the component was teleported; velocity is the
     * one given. */
    void (*teleported)(world_t* w, int32_t r, const float velocity[3]);

    /* What the module's agents need of the spatial hash, which the grid
     * module builds (modules/grid/grid.h defines the struct; the core never
     * reads it): NULL for none. */
    const struct grid_use_t* grid;

    /* Module-wide state into the state hash (after every agent). */
    uint64_t (*hash)(const world_t* w, uint64_t h, hash_absorb_fn* absorb);

    /* All-or-nothing loaders (world_mark / world_rollback, world.h): note
     * the extent of the module-wide data, and later forget what was added
     * after the note (its ids and counts as at the mark, so that the ids
     * to come and the state hash are as before). The caller removes the
     * live things it added first, newest first. */
    void (*mark)(const world_t* w, int64_t note[WORLD_MARK_WORDS]);
    void (*rollback)(world_t* w, const int64_t note[WORLD_MARK_WORDS]);

    /* Snapshots (docs/snapshot.md). The module's component is one COMP
     * section; a module with `save` has a section of its own for its
     * module-wide data, tagged `snapshot_tag` (BYTE_TAG's four letters),
     * written after the components in registry order. `snapshot_since` is
     * the first format version that has them (0 or 1 for the first modules; a
     * loader of older files leaves the module's component and data empty;
     * a column appended later says so in its table row, column_def_t.since).
     * `load` reads the payload into a world whose agents and components are
     * already loaded; it checks what it reads (counts against the bytes
     * left before allocating) and returns 0 after br_fail. `check_loaded`
     * runs once every section is read: state columns that no agent
     * definition carries, judged against the module-wide data. */
    uint32_t snapshot_tag;
    uint32_t snapshot_since;
    void (*save)(const world_t* w, byte_writer_t* wr);
    int (*load)(world_t* w, byte_reader_t* rd);
    int (*check_loaded)(const world_t* w, byte_reader_t* rd);
} module_t;

#define WORLD_MAX_MODULES 32
#define WORLD_MAX_COMPONENTS 32

typedef struct system_def_t system_def_t;

/* The built-in modules and systems (src/modules/step.c). */
typedef struct registry_t {
    const module_t* const* modules;
    int32_t module_count;
    const system_def_t* systems;
    int32_t system_count;
    /* The name of column `col` of component `comp` (by component index),
     * or of the agent table when comp is -1; NULL when it has none. For
     * messages and the step table's listing. */
    const char* (*column_name)(int32_t comp, int32_t col);
} registry_t;

const registry_t* builtin_registry(void);

#endif /* SHOAL_ECS_MODULE_H */
