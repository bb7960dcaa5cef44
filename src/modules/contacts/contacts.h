/* The contact pass (contacts.c): after everything moved, no two agents
 * that take part overlap past a tolerance, and none ends inside an
 * obstacle or across a wall. Crowd agents always take part; any other
 * agent with a body when its definition asks (`contacts`), through the
 * contact module's component. */
#ifndef SHOAL_SYSTEMS_CONTACTS_H
#define SHOAL_SYSTEMS_CONTACTS_H

#include "modules/registry.h"

/* contact: membership only */
enum { CT_SLOT = 0, CT_ROW, CT_COUNT_ };

/* Candidates kept per contact row for the contact pass, found by
 * contacts_prepare (crowd agents keep CROWD_CONTACT_K from the orca pass,
 * which keeps them from packing densely). Bodies pressed together touch
 * up to 6 others in 2D and 12 in 3D. */
#define CONTACT_K 16

/* The module's data: scratch for one step, indexed by participant: the
 * crowd rows first (participant r is crowd row r), then the contact rows
 * (participant crowd count + q is contact row q). The counters are not
 * state (never hashed or saved). */
typedef struct contact_world_t {
    int32_t* near; /* CONTACT_K sorted positions per contact row, -1: none */
    int32_t near_capacity;
    float *cx, *cy, *cz; /* a participant's position after an iteration */
    float *x0, *y0, *z0; /* a contact row's position before this step moved it (walls,
                          * velocities); a crowd row's is the crowd module's (crowd_contacts_t) */
    /* contact rows only (a crowd row's are its agent's radius and mass): */
    float* radius;    /* its body: a ground vehicle's own radius, else vehicle.radius */
    float* inv_mass;  /* 1 / mass (a ground vehicle's own mass): shares of a push */
    uint8_t* active;  /* it overlapped something at its last check */
    uint8_t* touched; /* the pass moved it this step */
    uint8_t* moved;   /* the last Jacobi iteration pushed it (to be applied) */
    /* per agent row: the pass moved it this step (a check of a row none of
     * whose candidates moved since its last check would find what that
     * check found); 0 or 1, in 32 bits to be read a lane at a time; all 0
     * outside the pass, which clears those it set (contact_velocities) */
    int32_t* row_moved;
    /* per agent row on the watch list or pushed off it: where it was when
     * the pass began (a pass whose list does not hold starts again there) */
    float *saved_x, *saved_y, *saved_z;
    int32_t row_moved_capacity;
    int32_t* turns;   /* a serial sweep's participants, in global id order */
    int32_t capacity; /* participants the scratch holds */
    /* The watch list of a step (contacts.c, "Who may touch"): per
     * participant whether it is on it (the first check writes every one),
     * and the list itself, by participant. */
    uint8_t* watch;
    int32_t* watch_list;
    /* The colored sweeps (contacts.c): per sorted position of the spatial
     * hash its color (CS_NONE: none) and bucket, and the participant there
     * that the colored sweeps take (-1: none); the colored participants by
     * color, then sorted position, with their buckets; a flag per
     * participant for those that take their turns on the calling thread. */
    uint8_t* cs_color;
    int32_t* cs_bucket;
    int32_t* cs_part;
    uint8_t* cs_mark; /* per sorted position: a watched participant's (all 0 between plans) */
    int32_t cs_sorted_capacity;
    int32_t* cs_list;
    int32_t* cs_lbucket;
    /* per participant: whether its turns can be parallel (unknown until
     * its first turn, contacts.c); cs_restf is that "serial" answer alone,
     * as 0 or 1, so that the serial pass skips eight at a time */
    uint8_t* cs_elig;
    uint8_t* cs_restf;
    int32_t* cs_entry; /* per participant: its place in cs_list, -1: not colored */
    uint8_t* cs_act;   /* per place in cs_list: its participant's active flag */
    int32_t cs_part_capacity;
    /* The Gauss-Seidel sweeps of a step: the first colored_after on the
     * calling thread by global id, the others colored, by the workers
     * (contacts.c); 0 (the default): all colored; -1: none colored. The
     * colored sweeps give one result for any thread count and any split of
     * the cells; the serial sweeps another. For `bench crowd
     * --colored-sweeps-after` and tests. */
    int32_t colored_after;
    int32_t iterations_last; /* contact iterations of the last step */
    /* The watch list's margin over the largest radius (contacts.c, "Who
     * may touch"): < 0 (the default) CONTACT_WATCH, 0 no list. For tests. */
    float watch_margin;
    /* 1: the first check takes a row at a time, never a lane of them, and
     * every check queries the walls (tests) */
    int32_t runs_off;
    /* The factor on the pushes of a jam's first sweeps (contacts.c,
     * CONTACT_SOR): <= 0 (the default) CONTACT_SOR; 1: plain sweeps. For
     * tests. */
    float sor;
    /* The margin (m) the next pass's list takes at least, from how far the
     * last pass moved those on its list (CONTACT_WATCH_GROW times as far,
     * over CONTACT_WATCH_HOLD) or, when its list did not hold, twice its margin:
     * not state (no result depends on it: a pass with any list gives the
     * pass over everyone's) */
    float watch_next;
    int32_t watch_last;    /* participants on the last pass's watch list, -1: it made none */
    int64_t watch_dropped; /* passes whose watch list did not hold, started again (counter) */
    int64_t watch_widened; /* of those, passes that held with twice the margin (counter) */
    int32_t sweeps_last;   /* of those, Gauss-Seidel sweeps */
    float overlap_last;    /* largest overlap left by the last step, over the smaller radius */
    /* Per sorted position of the spatial hash, for the first check
     * (contacts.c, first_clear_lanes): how far its agent moved this step
     * plus its radius; NULL when the scratch could not grow (the check
     * then goes without: no result depends on it) */
    float* sorted_reach;
    int32_t sorted_reach_capacity;
    /* runs of the first check whose rows the bound left were screened
     * against their candidates a lane of rows at a time (counter, tests) */
    int64_t runs_screened;
} contact_world_t;

static inline contact_world_t* contact_data(const world_t* w)
{
    return (contact_world_t*)w->module_data[MOD_CONTACT];
}

extern const module_t contact_module;

int64_t contacts_prepare_run(world_t* w, float dt, void* ctx);
int64_t contacts_run(world_t* w, float dt, void* ctx);
/* Nothing to do this step: no contact rows. */
int contacts_prepare_idle(const world_t* w);

#endif /* SHOAL_SYSTEMS_CONTACTS_H */
