/* The nav module: navigation goals, the walkable grid and one travel-time
 * field per goal (module-wide data), and the navigate behavior (nav.c);
 * shoal/nav.h is its public API, nav_grid.h and nav_field.h its parts. */
#ifndef SHOAL_MODULES_NAV_H
#define SHOAL_MODULES_NAV_H

#include <string.h>

#include "modules/registry.h"
#include "modules/nav/nav_grid.h"

/* nav: the behavior's weight and parameters, then what the last step found
 * (not state: derived from the position and the field each step) */
enum {
    NV_SLOT = 0,
    NV_ROW,
    NV_WEIGHT,
    NV_GOAL,
    NV_ARRIVE_DISTANCE,
    NV_JOURNEY,
    NV_STAGE,     /* state: the journey's stage (0 when on none) */
    NV_WAITED,    /* state: s waited at the stage's goal */
    NV_STATUS,    /* enum nav_status */
    NV_REMAINING, /* travel time (m at unit speed) left to the goal; INFINITY when unknown */
    NV_DELAY,     /* state: s the agent still stands before it starts (nav.start_delay), counted
                   * down by navigate; since snapshot version 10 (older files load 0), and hashed
                   * only when not 0, so that rows without a delay hash as before it existed */
    NV_COUNT_
};

enum nav_status {
    NAV_MOVING = 0,
    NAV_ARRIVED = 1,
    NAV_NO_WAY = 2,   /* walled in, or the goal is gone */
    NAV_OFF_GRID = 3, /* outside the grid: straight for the goal */
    NAV_IN_WALLS = 4, /* in a blocked cell: led out by the field */
};

/* A goal, live or removed (ids are never reused), and its field. */
typedef struct nav_goal_rec_t {
    shoal_nav_goal_t def;
    int32_t live;
    int32_t solved;     /* T is this grid's field */
    float* T;           /* the field, grid cells floats, while live and the grid is built */
    int32_t* seed;      /* the goal's cells (nav_field_solve) */
    float* seed_time;   /* and their start times */
    int32_t seed_count; /* entries of seed and seed_time (their capacity too) */
    float offset;       /* an area's field at its edge (its cells start at their depth from the
                         * deepest, so that agents walk on in); 0 for points and lines */
    shoal_status_t solve_status;
    int64_t exited; /* agents that left through it (an exit): state */
} nav_goal_rec_t;

/* A journey and its stages' round-robin counts (state). */
typedef struct nav_journey_rec_t {
    shoal_journey_t def;
    int64_t sent[SHOAL_JOURNEY_STAGES];
} nav_journey_rec_t;

/* A source: its parameters, definition and what it has done (state). */
typedef struct nav_source_rec_t {
    shoal_nav_source_t src; /* src.def points at def */
    shoal_agent_def_t def;
    int64_t added, draws;
} nav_source_rec_t;

/* A speed zone, live or removed (ids are never reused). */
typedef struct nav_zone_rec_t {
    shoal_nav_zone_t def;
    int32_t live;
} nav_zone_rec_t;

typedef struct nav_world_t {
    shoal_nav_params_t params;
    nav_zone_rec_t* zones;
    int32_t zone_high, zone_capacity, live_zones;
    uint32_t zones_version, built_zones;
    /* Derived with the grid while there are live zones: each cell's speed
     * factor (1 outside every zone). */
    float* zone_factor;
    nav_source_rec_t* sources;
    int32_t source_count, source_capacity;
    nav_journey_rec_t* journeys;
    int32_t journey_count, journey_capacity;
    nav_goal_rec_t* goals;
    int32_t goal_high, goal_capacity, live_goals;
    uint32_t params_version, goals_version; /* change with every change of each */
    /* Derived: the grid and the speed near walls (from the parameters, the
     * walls and the static obstacles), every live goal's seeds and field,
     * built before a step when what they come from changed; a goal's field
     * alone when only goals changed. built_valid: all of it current. */
    int32_t built_valid;
    uint32_t built_params, built_goals, built_walls, built_obstacles;
    nav_grid_t grid;
    float* speed;
    int64_t blocked;
    /* Congestion (params.density_weight > 0): the agents' density on the
     * grid, in 1/NAV_DENSITY_ONE agents per m^2 (integers, so that the sum
     * is the same in any order), and the speed the fields are solved with,
     * speed / (1 + density_weight * density). density_valid: computed since
     * the grid was built (or loaded from a snapshot with it). */
    int32_t* density;
    float* speed_dyn;
    int32_t density_valid;
    /* A snapshot's density, until the first build after the load takes it
     * (when its grid has these dimensions). */
    int32_t* loaded_density;
    int32_t loaded_nx, loaded_ny;
    /* A rollback's parameters (mark). */
    shoal_nav_params_t marked_params;
    int32_t marked_sources;
    int32_t marked_zone_high, marked_live_zones;
    /* Counts the solves that changed the fields (and their going with the
     * grid), so that a recorder knows when to copy them again. Not state:
     * neither hashed nor saved. */
    uint64_t fields_revision;
} nav_world_t;

/* A float's bits, for the state hash. */
static inline uint64_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline nav_world_t* nav_of(const world_t* w) { return (nav_world_t*)w->module_data[MOD_NAV]; }

/* The fields as the last solve left them, for a recorder
 * (src/io/recording.c), which copies them when `revision` changed. */
typedef struct nav_fields_view_t {
    uint64_t revision;           /* 0 until a field is solved; changes with every solve after */
    int current;                 /* 1: every live goal's field is solved on this grid */
    const nav_grid_t* grid;      /* NULL: no fields (no live goal, or not built yet) */
    const nav_goal_rec_t* goals; /* goal_high goals; a live one's T is its field when current */
    int32_t goal_high;
} nav_fields_view_t;

void nav_fields_view(const world_t* w, nav_fields_view_t* out);

/* The fields' solve (sense stage): every live goal's field that is out of
 * date, one goal a worker. Idle when none is. */
int64_t nav_fields_run(world_t* w, float dt, void* ctx);
/* The density's unit: 1 / NAV_DENSITY_ONE agents per m^2. */
#define NAV_DENSITY_ONE 1024
int nav_fields_idle(const world_t* w);
/* The navigate behavior (decide stage): desired velocity (+=), status. */
int64_t navigate_run(world_t* w, float dt, void* ctx);
/* After it: agents arrived at an exit leave the world (queued removals,
 * applied at the end of the stage), counted per goal. Serial, in row order.
 * Idle when no live goal is an exit. */
int64_t nav_exits_run(world_t* w, float dt, void* ctx);
/* Between navigate and nav_exits: agents on a journey that arrived (and
 * waited) move on to their next stage. Serial, in row order. Idle with no
 * journey. */
int64_t nav_journeys_run(world_t* w, float dt, void* ctx);
int nav_journeys_idle(const world_t* w);
int nav_exits_idle(const world_t* w);

/* Sources (nav_source.c): the system at the end of the step, and their
 * part of the module's hash, snapshot section and release. */
int64_t nav_sources_run(world_t* w, float dt, void* ctx);
int nav_sources_idle(const world_t* w);
uint64_t nav_sources_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb);
void nav_sources_save(const world_t* w, byte_writer_t* wr);
int nav_sources_load(world_t* w, byte_reader_t* rd);
void nav_sources_release(world_t* w);

extern const module_t nav_module;

#endif /* SHOAL_MODULES_NAV_H */
