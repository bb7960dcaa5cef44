/* Crowd agents (crowd.c): the module's world data and its systems. */
#ifndef SHOAL_SYSTEMS_CROWD_H
#define SHOAL_SYSTEMS_CROWD_H

#include "modules/registry.h"

/* crowd: parameters of shoal_crowd_t; CR_MAX_NEIGHBORS is int32.
 * CR_SIDE_PREFERENCE since snapshot version 4 (files of version 3 have the
 * columns before it: it loads as 0). */
enum {
    CR_SLOT = 0,
    CR_ROW,
    CR_NEIGHBOR_DISTANCE,
    CR_MAX_NEIGHBORS,
    CR_TAU,
    CR_TAU_WALLS,
    CR_RESPONSIBILITY,
    CR_PREFERRED_SPEED,
    CR_TIME_GAP,
    CR_SIDE_PREFERENCE,
    CR_COUNT_
};

/* The most neighbors a crowd agent takes into account (crowd.max_neighbors). */
#define CROWD_MAX_NEIGHBORS 64

/* Nearest neighbors kept per crowd agent from the orca pass for the
 * contact pass of the same step: CROWD_CONTACT_K_2D in 2D, and in 3D
 * CROWD_CONTACT_K, the most equal spheres that can touch one (12): a
 * sphere pressed in a 3D jam has more touching neighbors than 8, and one
 * left off every list is never pushed out. A row's candidates are
 * crowd_near_stride apart: as many as the dimension keeps, so that a 2D
 * step writes 32 bytes a row rather than 48. */
#define CROWD_CONTACT_K 12
#define CROWD_CONTACT_K_2D 8

/* The candidates kept per crowd row in a world of `three` (1: 3D), and the
 * stride of crowd_world_t.near. */
static inline int crowd_near_stride(int three) { return three ? CROWD_CONTACT_K : CROWD_CONTACT_K_2D; }
/* The most candidates a crowd row's neighbor list keeps (crowd.c
 * "Neighbor lists"). */
#define CROWD_LIST_MAX 40

/* crowd_world_t.sorted_rec: the floats of a record and where each value is */
enum { CROWD_REC = 8 };
enum {
    CROWD_REC_X,
    CROWD_REC_Y,
    CROWD_REC_VX,
    CROWD_REC_VY,
    CROWD_REC_R,
    CROWD_REC_CROW,
    CROWD_REC_Z,
    CROWD_REC_VZ
};

/* The module's data. Scratch lives for one step; the counters are not
 * state (never hashed or saved). */
typedef struct crowd_world_t {
    int32_t* near;       /* crowd_near_stride sorted positions per crowd row, -1: none */
    float* intent;       /* 2 per crowd row: the behaviors' velocity before orca (2D), read by neighbors */
    float* bold;         /* per crowd row, this step: the agent's boldness in [0, 1), from its global id
                               (who yields when two meet evenly, crowd.c attention_share) */
    float* hint;         /* per crowd row: last step's farthest kept neighbor's d^2, with room for
                               motion (find_nearest's hint; any value gives the same list), 0: none */
    float* clear;        /* per crowd row, this step: the center distance of its nearest
                               contact candidate when the orca pass found it (INFINITY: none) */
    float* wall_clear;   /* per crowd row, this step: no wall is nearer than this to where the
                               orca pass found it (0: not known; in clear's allocation) */
    float *x0, *y0, *z0; /* per crowd row, this step: where crowd_move found it (the contact
                               pass's start of the step) */
    float* travel;       /* per crowd row, this step: how far crowd_move moved it, |v| dt (in
                               x0's allocation) */
    int32_t capacity;    /* crowd rows the scratch holds */
    /* Per sorted position of the spatial hash, this step: the agent's crowd
     * row (-1: none) and radius, read in one pass rather than once per
     * neighbor that lists it. */
    int32_t* sorted_crow;
    float* sorted_radius;
    /* The same step's ORCA inputs per sorted position as one 32-byte
     * record, for a lane of neighbors read a record a lane (lane_rows4)
     * rather than a gather a value: x, y, vx, vy, radius, crowd row (its
     * bits), z, vz (CROWD_REC_*). */
    float* sorted_rec;
    int32_t sorted_capacity;
    /* Whether the orca pass reads its packets' neighbors from sorted_rec
     * (else by gathers from the sorted copies: the same values). Set at
     * creation for the machine (crowd.c, crowd_records_pay); tests set it
     * either way. */
    int rec_reads;
    /* For the contact pass's first check (contacts.c), with the step each
     * was computed in (-1: never): the largest radius of any agent in the
     * spatial hash (the orca pass), and the largest distance a crowd agent
     * moved (crowd_move). */
    float radius_max, travel_max;
    int64_t radius_step, travel_step;
    /* Neighbor lists (crowd.c "Neighbor lists"), per crowd row: the agent
     * rows of the candidates (CROWD_LIST_MAX each, nearest first as last
     * found), how many (0: none), the d^2 below which every agent was
     * listed when it was built, `moved` then and where the agent was then
     * (list_ax, list_ay, list_az); and where each crowd agent was at the
     * last orca pass and its sorted position then (prev, 4 per row: x, y,
     * z, in 2D its cell's key (crowd.c sorted_cell_key) as int32_t bits,
     * and the position's int32_t bits; the same allocation as list_a*). */
    int32_t* list;
    int32_t* list_n;
    float* list_r2;
    double* list_base;
    float* prev;
    float *list_ax, *list_ay, *list_az;
    /* The world the lists and prev belong to (structure version, crowd rows,
     * which are all the agents there are, crowd rows removed): any change
     * drops them. moved: the largest distance any agent moved between orca
     * passes, summed since then; moved_last: the last pass's. */
    uint64_t list_structure, list_removed, removed;
    int32_t list_rows;
    int prev_ok;
    double moved;
    float moved_last;
    /* Queries a list answered as it was, and lists built, summed over
     * steps; lists_off (tests): none are used. */
    int64_t list_held, list_built;
    int lists_off;
    /* The last orca pass: the lanes it ran at (0: none yet), and whether
     * the lists its packets tested held more than 12 entries on average */
    int orca_lanes, list_long;
    int lanes_forced;      /* tests: 8 or 16, every pass at that width where both are built */
    int move_rows;         /* tests: crowd_move takes a row at a time, never a lane of rows */
    int64_t relaxed_last;  /* agents whose constraints had no common velocity, last step */
    int64_t relaxed_total; /* the same, summed over steps */
} crowd_world_t;

static inline crowd_world_t* crowd_data(const world_t* w)
{
    return (crowd_world_t*)w->module_data[MOD_CROWD];
}

/* What the contact pass (contacts.c) reads of the crowd: crowd agents
 * always take part in contacts, as its first participants (participant r
 * is crowd row r). Everything is the crowd module's, read only. */
typedef struct crowd_contacts_t {
    const component_t* comp;   /* the crowd component (component_row of a slot) */
    int32_t count;             /* crowd rows */
    const int32_t* agent_row;  /* per crowd row */
    const int32_t* near;       /* crowd_near_stride per crowd row, from the orca pass, and a lane past */
    const float *x0, *y0, *z0; /* per crowd row: where crowd_move found it this step */
    /* For the contact pass's first check: per crowd row the center distance
     * of its nearest candidate when the orca pass found it (NULL: none yet),
     * the largest radius the orca pass saw and the largest distance a crowd
     * agent moved in crowd_move, and the steps they were computed in (-1:
     * never). */
    const float* clear;
    const float* wall_clear; /* per crowd row: no wall nearer (crowd_world_t) */
    /* per crowd row, how far crowd_move moved it (valid at travel_step),
     * and per sorted position of the hash, its crowd row or -1 and its
     * radius (at radius_step) */
    const float* travel;
    const int32_t* sorted_crow;
    const float* sorted_radius;
    float radius_max, travel_max;
    int64_t radius_step, travel_step;
} crowd_contacts_t;

static inline crowd_contacts_t crowd_contacts(const world_t* w)
{
    const crowd_world_t* cw = crowd_data(w);
    const component_t* c = &w->comps[COMP_CROWD];
    crowd_contacts_t v = {.comp = c,
                          .count = c->table.count,
                          .agent_row = TABLE_COL(&c->table, int32_t, COMP_ROW),
                          .near = cw->near,
                          .x0 = cw->x0,
                          .y0 = cw->y0,
                          .z0 = cw->z0,
                          .clear = cw->clear,
                          .wall_clear = cw->wall_clear,
                          .travel = cw->travel,
                          .sorted_crow = cw->sorted_crow,
                          .sorted_radius = cw->sorted_radius,
                          .radius_max = cw->radius_max,
                          .travel_max = cw->travel_max,
                          .radius_step = cw->radius_step,
                          .travel_step = cw->travel_step};
    return v;
}

extern const module_t crowd_module;

int64_t orca_run(world_t* w, float dt, void* ctx);
int64_t crowd_move_run(world_t* w, float dt, void* ctx);
/* The lanes the last orca pass ran at (crowd.c: 8 or 16 where the build's
 * are 16), the build's before any. */
int crowd_lanes(const world_t* w);

#endif /* SHOAL_SYSTEMS_CROWD_H */
