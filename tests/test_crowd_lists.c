/* Crowd neighbor lists (src/modules/crowd/crowd.c "Neighbor lists") are a cache:
 * a world stepped with them has, after every step, the state hash of the
 * same world stepped without them (and on another thread count), through
 * walking crowds, agents teleported between steps (one to 1e17 m, whose move
 * would swamp a sum of later ones) and by a user system inside a step,
 * agents added and removed, reorders of storage, and in 3D; for walkers
 * that plan a lane of rows at a time (their lists' first tests a packet at
 * a time, lists of one lane checked in registers) as for those that plan
 * one at a time, and where the cells' keys that settle ties wrap.
 * And they are used: most queries are answered by a list kept from an
 * earlier pass, and a reorder of storage moves them with the agents rather
 * than dropping them. */
#include <criterion/criterion.h>
#include <math.h>

#include "ecs/rng.h"
#include "ecs/world.h"
#include "modules/crowd/crowd.h"
#include "modules/grid/grid.h"
#include "support.h"

enum { N = 700, STEPS = 120 };

/* Walker i arrives at its target; some walk fast (the largest move sets
 * how long lists hold), some keep a front (their nearest, in order) longer
 * than the contact pass's. */
static void vary(shoal_agent_def_t* d, uint64_t i)
{
    d->weights[SHOAL_BEHAVIOR_ARRIVE] = 1.0f;
    d->arrive_gain = 1.0f;
    if (i % 17 == 0) d->vehicle.max_speed = 4.0f;
    if (i % 5 == 0) d->crowd.max_neighbors = 16;
    if (i % 11 == 0) d->crowd.max_neighbors = 30;
}

static shoal_agent_def_t walker(int dims, uint64_t seed, uint64_t i)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    const float half = dims == 3 ? 6.0f : 14.0f; /* about 0.9 agents per m^2 (m^3) */
    for (int k = 0; k < dims; ++k) {
        d.position[k] = rng_range(seed, i, 0, (uint32_t)k, -half, half);
        d.target[k] = rng_range(seed, i, 1, (uint32_t)k, -half, half);
    }
    vary(&d, i);
    return d;
}

/* A plain ORCA walker (the "rvo2" preset: no time gap, no keeping
 * right), so that rows plan a lane at a time and their lists are checked
 * a packet at a time: on a ring (2D) or a sphere (3D) about 3.5 m apart,
 * bound for the far side, so that most lists fit in one lane, some in
 * ties (the ring's symmetry), a few with a longer front. */
static shoal_agent_def_t ring_walker(int dims, uint64_t seed, uint64_t i)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("rvo2", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    const float turn = 6.2831853f * (float)(i % 700u) / 700.0f;
    if (dims == 2) {
        const float r = 390.0f;
        d.position[0] = r * cosf(turn);
        d.position[1] = r * sinf(turn);
    } else { /* a spiral over the sphere */
        const float r = 55.0f, z = 1.0f - 2.0f * ((float)(i % 700u) + 0.5f) / 700.0f;
        const float ring = sqrtf(1.0f - z * z), a = 2.39996323f * (float)(i % 700u);
        d.position[0] = r * ring * cosf(a);
        d.position[1] = r * ring * sinf(a);
        d.position[2] = r * z;
    }
    for (int k = 0; k < dims; ++k)
        d.target[k] = -d.position[k] + rng_range(seed, i, 1, (uint32_t)k, -1.0f, 1.0f);
    vary(&d, i);
    return d;
}

/* ring_walker's ring moved to where the cells' keys (crowd.c
 * sorted_cell_key, y * 2^16 + x modulo 2^32) wrap: its x cells across 2^16
 * (x's key carries into y's) and its y cells across -2^15 (the key's sign),
 * the cell measured on a world of such walkers. Ties there, where a float's
 * step is about 6 cm, are many. */
static float wrap_at[2];

static shoal_agent_def_t wrapped_ring_walker(int dims, uint64_t seed, uint64_t i)
{
    shoal_agent_def_t d = ring_walker(dims, seed, i);
    for (int k = 0; k < 2; ++k) {
        d.position[k] += wrap_at[k];
        d.target[k] += wrap_at[k];
    }
    return d;
}

static void measure_wrap(void)
{
    shoal_world_def_t def = shoal_world_default_def();
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    for (int32_t i = 0; i < 16; ++i) {
        shoal_agent_def_t d = ring_walker(2, 1, (uint64_t)i);
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
    const grid_t* g = grid_data((const world_t*)w);
    cr_assert(g && g->inv_cell[0] > 0.0f && g->inv_cell[0] == g->inv_cell[1] && !g->direct);
    wrap_at[0] = 65536.0f / g->inv_cell[0];
    wrap_at[1] = -32768.0f / g->inv_cell[1];
    shoal_world_destroy(w);
}

typedef struct jump {
    shoal_agent_t who;
    float to[3];
    int armed, three;
} jump_t;

/* A user system (control stage) that teleports one agent once. */
static shoal_status_t jump_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    jump_t* j = (jump_t*)ctx;
    if (!j->armed) return SHOAL_OK;
    j->armed = 0;
    const float still[3] = {0.0f, 0.0f, 0.0f}, upright[4] = {1.0f, 0.0f, 0.0f, 0.0f};
    return shoal_agent_teleport(w, j->who, j->to, still, 0.0f, j->three ? upright : NULL);
}

typedef struct pair {
    shoal_world_t* w[2]; /* [0] with lists, [1] without */
    shoal_agent_t ids[2][N + 64];
    int32_t count;
    jump_t jumps[2];
} pair_t;

static void both_teleport(pair_t* p, int dims, int32_t who, const float to[3])
{
    const float still[3] = {0.0f, 0.0f, 0.0f}, upright[4] = {1.0f, 0.0f, 0.0f, 0.0f};
    for (int s = 0; s < 2; ++s)
        cr_assert_eq(
            shoal_agent_teleport(p->w[s], p->ids[s][who], to, still, 0.0f, dims == 3 ? upright : NULL),
            SHOAL_OK, "%s", shoal_world_last_error(p->w[s]));
}

static void run_pair(int dims, int reorder, uint64_t seed, shoal_agent_def_t (*make)(int, uint64_t, uint64_t))
{
    static pair_t p;
    for (int s = 0; s < 2; ++s) {
        shoal_world_def_t def = shoal_world_default_def();
        def.dimensions = dims;
        def.thread_count = s == 0 ? 2 : 1;
        def.seed = seed;
        def.reorder_interval = reorder;
        shoal_error_t err;
        cr_assert_eq(shoal_world_create(&def, &p.w[s], &err), SHOAL_OK, "%s", err.message);
        crowd_data((world_t*)p.w[s])->lists_off = s == 1;
        for (int32_t i = 0; i < N; ++i) {
            shoal_agent_def_t d = make(dims, seed, (uint64_t)i);
            cr_assert_eq(shoal_agent_add(p.w[s], &d, &p.ids[s][i]), SHOAL_OK, "%s",
                         shoal_world_last_error(p.w[s]));
        }
        p.jumps[s].armed = 0;
        p.jumps[s].three = dims == 3;
        cr_assert_eq(shoal_world_add_system(p.w[s], "jump", SHOAL_STAGE_CONTROL, jump_system, &p.jumps[s]),
                     SHOAL_OK);
    }
    p.count = N;
    for (int step = 0; step < STEPS; ++step) {
        if (step == 30) { /* teleports between steps: into the crowd, and far off */
            for (int32_t i = 0; i < 6; ++i) {
                float to[3] = {0.0f, 0.0f, 0.0f};
                for (int k = 0; k < dims; ++k)
                    to[k] = rng_range(seed, 1000u + (uint64_t)i, 2, (uint32_t)k, -5.0f, 5.0f);
                both_teleport(&p, dims, 11 * i, to);
            }
            const float far[3] = {500.0f, -500.0f, 0.0f};
            both_teleport(&p, dims, 3, far);
        }
        if (step == 45) { /* back from far off, into the middle */
            const float mid[3] = {0.1f, 0.2f, 0.0f};
            both_teleport(&p, dims, 3, mid);
        }
        if (step == 100) { /* to where a step's moves are below a double's rounding of the sum */
            const float very_far[3] = {1e17f, 0.0f, 0.0f};
            both_teleport(&p, dims, 5, very_far);
        }
        if (step == 55) /* a user system teleports one inside the step */
            for (int s = 0; s < 2; ++s) {
                p.jumps[s].who = p.ids[s][40];
                p.jumps[s].to[0] = 1.0f;
                p.jumps[s].to[1] = -1.0f;
                p.jumps[s].to[2] = 0.0f;
                p.jumps[s].armed = 1;
            }
        if (step == 70) /* some leave */
            for (int32_t i = 0; i < 20; ++i)
                for (int s = 0; s < 2; ++s)
                    cr_assert_eq(shoal_agent_remove(p.w[s], p.ids[s][7 * i + 1]), SHOAL_OK);
        if (step == 85) /* others come */
            for (int32_t i = 0; i < 30; ++i) {
                shoal_agent_def_t d = make(dims, seed + 1, (uint64_t)i);
                for (int s = 0; s < 2; ++s)
                    cr_assert_eq(shoal_agent_add(p.w[s], &d, &p.ids[s][N + i]), SHOAL_OK);
            }
        for (int s = 0; s < 2; ++s)
            cr_assert_eq(shoal_world_step(p.w[s], 0.1f), SHOAL_OK, "%s", shoal_world_last_error(p.w[s]));
        cr_assert_eq(shoal_world_state_hash(p.w[0]), shoal_world_state_hash(p.w[1]),
                     "%dD, reorder every %d: step %d differs with neighbor lists", dims, reorder, step + 1);
    }
    const crowd_world_t* with = crowd_data((const world_t*)p.w[0]);
    const crowd_world_t* without = crowd_data((const world_t*)p.w[1]);
    cr_expect_eq(without->list_held + without->list_built, 0);
    /* most queries of a walking crowd are answered by a kept list (every
     * teleport, add and remove above drops them all) */
    cr_expect_gt(with->list_held, with->list_built, "%dD: %ld held, %ld built", dims, (long)with->list_held,
                 (long)with->list_built);
    for (int s = 0; s < 2; ++s) shoal_world_destroy(p.w[s]);
}

Test(crowd_lists, same_hash_as_without_2d) { run_pair(2, 0, 21, walker); }
Test(crowd_lists, same_hash_as_without_2d_reordering) { run_pair(2, 8, 22, walker); }
Test(crowd_lists, same_hash_as_without_3d) { run_pair(3, 0, 23, walker); }
Test(crowd_lists, same_hash_as_without_plain_ring_2d) { run_pair(2, 0, 24, ring_walker); }
Test(crowd_lists, same_hash_as_without_plain_ring_2d_reordering) { run_pair(2, 8, 25, ring_walker); }
Test(crowd_lists, same_hash_as_without_plain_sphere_3d) { run_pair(3, 0, 26, ring_walker); }
Test(crowd_lists, same_hash_as_without_where_cell_keys_wrap_2d)
{
    measure_wrap();
    run_pair(2, 0, 27, wrapped_ring_walker);
}

/* A reorder of storage moves the lists with the agents: over steps that
 * reorder every fourth, a ring of plain walkers (lists of a few entries)
 * builds fewer lists than it has walkers, where dropping them at each
 * reorder would build every one of them three times; and the hash stays
 * that of the world without lists. */
Test(crowd_lists, kept_through_reorders)
{
    shoal_world_t* w[2];
    for (int s = 0; s < 2; ++s) {
        shoal_world_def_t def = shoal_world_default_def();
        def.thread_count = 2;
        def.seed = 27;
        def.reorder_interval = 4;
        shoal_error_t err;
        cr_assert_eq(shoal_world_create(&def, &w[s], &err), SHOAL_OK, "%s", err.message);
        crowd_data((world_t*)w[s])->lists_off = s == 1;
        for (int32_t i = 0; i < N; ++i) {
            shoal_agent_def_t d = ring_walker(2, 27, (uint64_t)i);
            d.crowd.max_neighbors = 10; /* plain lists of one lane */
            d.vehicle.max_speed = 1.0f;
            cr_assert_eq(shoal_agent_add(w[s], &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w[s]));
        }
    }
    const crowd_world_t* cw = crowd_data((const world_t*)w[0]);
    int64_t built = 0;
    for (int step = 0; step < 20; ++step) {
        /* the lists of the first pass, built with a thin skin (no move
         * known yet), expire within a few steps; those built then hold
         * through the reorders of steps 8, 12 and 16 */
        if (step == 6) built = cw->list_built;
        for (int s = 0; s < 2; ++s)
            cr_assert_eq(shoal_world_step(w[s], 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w[s]));
        cr_assert_eq(shoal_world_state_hash(w[0]), shoal_world_state_hash(w[1]), "step %d", step + 1);
    }
    built = cw->list_built - built;
    cr_expect_lt(built, N, "%ld lists built over three reorders of %d walkers", (long)built, (int)N);
    cr_expect_gt(cw->list_held, 8 * (int64_t)N, "%ld held", (long)cw->list_held);
    for (int s = 0; s < 2; ++s) shoal_world_destroy(w[s]);
}

/* Two worlds of N agents from make on two threads, each set up by set(its
 * crowd world, 0 or 1) before its agents come. */
static void two_worlds(shoal_world_t* w[2], int dims, uint64_t seed, int reorder,
                       shoal_agent_def_t (*make)(int, uint64_t, uint64_t), void (*set)(crowd_world_t*, int))
{
    for (int s = 0; s < 2; ++s) {
        shoal_world_def_t def = shoal_world_default_def();
        def.dimensions = dims;
        def.thread_count = 2;
        def.seed = seed;
        def.reorder_interval = reorder;
        shoal_error_t err;
        cr_assert_eq(shoal_world_create(&def, &w[s], &err), SHOAL_OK, "%s", err.message);
        set(crowd_data((world_t*)w[s]), s);
        for (int32_t i = 0; i < N; ++i) {
            shoal_agent_def_t d = make(dims, seed, (uint64_t)i);
            cr_assert_eq(shoal_agent_add(w[s], &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w[s]));
        }
    }
}

static void set_width(crowd_world_t* cw, int s) { cw->lanes_forced = s == 0 ? 8 : 16; }

/* The orca pass's two widths (16 lanes and 8, where the build has both:
 * crowd.c, CROWD_HAS_WIDE) give the same bits: a world at each, stepped
 * side by side, through lists of one lane with ties (the ring) and longer
 * ones (the walkers), 2D and 3D. */
static void run_widths(int dims, uint64_t seed, shoal_agent_def_t (*make)(int, uint64_t, uint64_t))
{
    shoal_world_t* w[2];
    two_worlds(w, dims, seed, shoal_world_default_def().reorder_interval, make, set_width);
    for (int step = 0; step < STEPS; ++step) {
        for (int s = 0; s < 2; ++s)
            cr_assert_eq(shoal_world_step(w[s], 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w[s]));
        cr_assert_eq(shoal_world_state_hash(w[0]), shoal_world_state_hash(w[1]),
                     "%dD: step %d differs between the widths (%d and %d lanes)", dims, step + 1,
                     crowd_lanes((world_t*)w[0]), crowd_lanes((world_t*)w[1]));
    }
    /* each ran at the width asked where the build has it, else at its own */
    const int narrow = crowd_lanes((world_t*)w[0]), wide = crowd_lanes((world_t*)w[1]);
    cr_expect(narrow == 8 || narrow == wide, "%d and %d lanes", narrow, wide);
    cr_expect(wide == 16 || wide == narrow, "%d and %d lanes", narrow, wide);
    for (int s = 0; s < 2; ++s) shoal_world_destroy(w[s]);
}

Test(crowd_lists, same_hash_at_both_widths_ring_2d) { run_widths(2, 31, ring_walker); }
Test(crowd_lists, same_hash_at_both_widths_walkers_2d) { run_widths(2, 32, walker); }
Test(crowd_lists, same_hash_at_both_widths_sphere_3d) { run_widths(3, 33, ring_walker); }

/* The orca pass reads its packets' neighbors either from the sorted records
 * or by gathers from the sorted copies (crowd_world_t.rec_reads, set for the
 * machine): the same values, so the same bits, whichever the machine gets. */
static void set_reads(crowd_world_t* cw, int s) { cw->rec_reads = s == 0; }

static void run_reads(int dims, uint64_t seed, shoal_agent_def_t (*make)(int, uint64_t, uint64_t))
{
    shoal_world_t* w[2];
    two_worlds(w, dims, seed, 8, make, set_reads);
    for (int step = 0; step < STEPS; ++step) {
        for (int s = 0; s < 2; ++s)
            cr_assert_eq(shoal_world_step(w[s], 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w[s]));
        cr_assert_eq(shoal_world_state_hash(w[0]), shoal_world_state_hash(w[1]),
                     "%dD: step %d differs between records and gathers", dims, step + 1);
    }
    /* the records were kept in the one and not in the other */
    cr_expect_not_null(crowd_data((world_t*)w[0])->sorted_rec);
    cr_expect_null(crowd_data((world_t*)w[1])->sorted_rec);
    for (int s = 0; s < 2; ++s) shoal_world_destroy(w[s]);
}

/* walker's crowd of plain ORCA walkers (ring_walker's preset), which plan
 * a lane of rows at once, bound every way: their lines bind */
static shoal_agent_def_t plain_walker(int dims, uint64_t seed, uint64_t i)
{
    shoal_agent_def_t d = walker(dims, seed, i);
    shoal_agent_def_t p = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("rvo2", &p.crowd, &p.vehicle, NULL), SHOAL_OK);
    const int32_t max_nb = d.crowd.max_neighbors;
    d.crowd = p.crowd;
    d.crowd.max_neighbors = max_nb == 16 || max_nb == 30 ? max_nb : p.crowd.max_neighbors;
    return d;
}

Test(crowd_lists, same_hash_from_records_and_gathers_ring_2d) { run_reads(2, 34, ring_walker); }
Test(crowd_lists, same_hash_from_records_and_gathers_plain_2d) { run_reads(2, 35, plain_walker); }
Test(crowd_lists, same_hash_from_records_and_gathers_plain_3d) { run_reads(3, 36, plain_walker); }
Test(crowd_lists, same_hash_from_records_and_gathers_sphere_3d) { run_reads(3, 37, ring_walker); }
