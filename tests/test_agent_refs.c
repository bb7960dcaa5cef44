/* References from one agent to another (a pursuit target, a leader, a
 * planner's goal agent), stored as the other agent's global id and found
 * through the world's global-id map: the map against a scan of the slots
 * after random adds, removals, reorders, rollbacks and loads; pursuit and
 * following across reorders, removals of other agents and a save and
 * resume; a removed target gives no command and no later agent is taken
 * for it; the state hash leaves slots out; files of version 12, which
 * stored handles, load as ids. */
#include <criterion/criterion.h>
#include <shoal/planner.h>
#include <shoal/snapshot.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/world.h"
#include "support.h"

#define DT (1.0f / 60.0f)


/* The world's rows in a random order (a Fisher-Yates shuffle from rng), as
 * a reorder would leave them. */
static void permute_at_random(world_t* w, uint64_t* rng)
{
    int32_t n = w->agents.count;
    int32_t* perm = malloc((size_t)n * sizeof *perm);
    cr_assert(perm != NULL);
    for (int32_t i = 0; i < n; ++i) perm[i] = i;
    for (int32_t i = n - 1; i > 0; --i) {
        int32_t j = (int32_t)(rng_splitmix64(rng) % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    cr_assert_eq(world_permute_agents(w, perm), SHOAL_OK);
    free(perm);
}
static uint64_t gid_of(const shoal_world_t* w, shoal_agent_t a)
{
    uint64_t id = UINT64_MAX;
    cr_assert_eq(shoal_agent_global_id(w, a, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

static shoal_agent_t add(shoal_world_t* w, const shoal_agent_def_t* d)
{
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

static shoal_agent_def_t at(float x, float y)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.position[1] = y;
    return d;
}

static float distance(shoal_world_t* w, shoal_agent_t a, shoal_agent_t b)
{
    shoal_agent_state_t sa, sb;
    cr_assert_eq(shoal_agent_get_state(w, a, &sa), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_agent_get_state(w, b, &sb), SHOAL_OK, "%s", shoal_world_last_error(w));
    float x = sa.position[0] - sb.position[0], y = sa.position[1] - sb.position[1],
          z = sa.position[2] - sb.position[2];
    return sqrtf(x * x + y * y + z * z);
}

static float speed_of(shoal_world_t* w, shoal_agent_t a)
{
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, a, &s), SHOAL_OK, "%s", shoal_world_last_error(w));
    return sqrtf(s.velocity[0] * s.velocity[0] + s.velocity[1] * s.velocity[1] +
                 s.velocity[2] * s.velocity[2]);
}

/* ---- the map against a scan ---------------------------------------------- */

#define EVER 4096

/* Every handle the run was given, with its global id. */
typedef struct ever {
    shoal_agent_t ids[EVER];
    uint64_t gids[EVER];
    int32_t count;
} ever_t;

static void note(ever_t* e, const shoal_world_t* w, shoal_agent_t a)
{
    cr_assert_lt(e->count, EVER);
    e->ids[e->count] = a;
    e->gids[e->count++] = gid_of(w, a);
}

/* The map holds exactly the live and pending agents' ids, each to its slot;
 * the id of every agent ever removed, and the next id, find nothing. */
static void check_map(const shoal_world_t* w, const ever_t* e)
{
    uint64_t held = 0;
    for (int32_t s = 0; s < w->slot_high; ++s) {
        uint64_t id;
        if (!agent_slot_global_id(w, (uint32_t)s, &id)) continue;
        held++;
        cr_assert_eq(id_map_find(&w->ids, id), (int64_t)s, "id %llu: slot %lld, not %d",
                     (unsigned long long)id, (long long)id_map_find(&w->ids, id), (int)s);
    }
    cr_assert_eq(w->ids.count, held, "the map holds %llu ids, %llu agents are live or pending",
                 (unsigned long long)w->ids.count, (unsigned long long)held);
    cr_assert_leq(w->ids.count * 4, w->ids.capacity * 3, "over 3/4 full");
    for (int32_t i = 0; i < e->count; ++i) {
        int64_t slot = id_map_find(&w->ids, e->gids[i]);
        if (shoal_agent_is_valid(w, e->ids[i]))
            cr_assert_eq(slot, (int64_t)(e->ids[i].index1 - 1), "agent %llu", (unsigned long long)e->gids[i]);
        else
            cr_assert_eq(slot, -1, "removed agent %llu is still found", (unsigned long long)e->gids[i]);
    }
    cr_assert_eq(id_map_find(&w->ids, w->next_id), -1);
}

typedef struct churn {
    ever_t* e;
    uint64_t rng;
} churn_t;

/* Inside a step: adds (pending until the stage ends) and removals (queued),
 * the map checked with them pending. */
static shoal_status_t churn_in_step(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    churn_t* c = (churn_t*)ctx;
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t d = at(uniform(&c->rng, -20, 20), uniform(&c->rng, -20, 20));
        shoal_agent_t a = add(w, &d);
        note(c->e, w, a);
    }
    shoal_agent_t live[8];
    shoal_agent_batch_t b = {.ids = live};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 8, &n), SHOAL_OK);
    if (n > 0) cr_assert_eq(shoal_agent_remove(w, live[rng_splitmix64(&c->rng) % (uint64_t)n]), SHOAL_OK);
    check_map(w, c->e);
    return SHOAL_OK;
}

Test(agent_refs, the_map_agrees_with_a_scan_of_the_slots, .timeout = 120)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.reorder_interval = 1;
    def.initial_capacity = 4; /* the map grows many times */
    def.seed = 3;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    static ever_t e;
    memset(&e, 0, sizeof e);
    churn_t churn = {&e, 99};
    cr_assert_eq(shoal_world_add_system(w, "churn", SHOAL_STAGE_DECIDE, churn_in_step, &churn), SHOAL_OK);
    uint64_t rng = 12345;
    for (int round = 0; round < 300; ++round) {
        int32_t n = shoal_world_agent_count(w);
        shoal_agent_t* live = malloc(((size_t)n + 1) * sizeof *live);
        shoal_agent_batch_t b = {.ids = live};
        cr_assert_eq(shoal_world_read_agents(w, &b, n, &n), SHOAL_OK);
        uint64_t op = rng_splitmix64(&rng) % 10;
        if (op < 3 || n < 8) { /* adds, one or many; some pursue a live agent */
            int32_t k = op == 0 ? 1 + (int32_t)(rng_splitmix64(&rng) % 40) : 1;
            shoal_agent_def_t d = at(uniform(&rng, -30, 30), uniform(&rng, -30, 30));
            d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
            if (n > 0 && op == 1) {
                d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
                d.pursuit.target = live[rng_splitmix64(&rng) % (uint64_t)n];
            }
            shoal_agent_t made[40];
            cr_assert_eq(shoal_agents_add(w, &d, NULL, k, made), SHOAL_OK, "%s", shoal_world_last_error(w));
            for (int32_t i = 0; i < k; ++i) note(&e, w, made[i]);
        } else if (op < 5) { /* removals, one or a few at once */
            int32_t k = op == 3 ? 1 : 1 + (int32_t)(rng_splitmix64(&rng) % 4);
            for (int32_t i = 0; i < k; ++i) { /* k distinct agents from the front */
                int32_t j = i + (int32_t)(rng_splitmix64(&rng) % (uint64_t)(n - i));
                shoal_agent_t t = live[i];
                live[i] = live[j];
                live[j] = t;
            }
            cr_assert_eq(shoal_agents_remove(w, live, k), SHOAL_OK, "%s", shoal_world_last_error(w));
        } else if (op == 5) { /* a reorder by hand */
            permute_at_random(w, &rng);
        } else if (op == 6) { /* adds undone: the ids are given again */
            world_mark_t mark;
            world_mark(w, &mark);
            shoal_agent_t made[5];
            for (int i = 0; i < 5; ++i) {
                shoal_agent_def_t d = at((float)i, 0.0f);
                made[i] = add(w, &d);
            }
            world_rollback(w, &mark, made, 5);
        } else if (op == 7) { /* saved, destroyed and loaded: the same tag, handles kept */
            size_t size = 0;
            cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
            void* buf = malloc(size);
            cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
            shoal_world_destroy(w);
            shoal_world_def_t ld = shoal_world_default_def();
            ld.thread_count = 1;
            ld.initial_capacity = 4;
            cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, &ld, &w, &err), SHOAL_OK, "%s",
                         err.message);
            free(buf);
            cr_assert_eq(shoal_world_add_system(w, "churn", SHOAL_STAGE_DECIDE, churn_in_step, &churn),
                         SHOAL_OK);
        } else { /* a step: a reorder, and adds and removals inside it */
            cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
        free(live);
        check_map(w, &e);
    }
    cr_assert_gt(w->ids.capacity, 64, "the map never grew");
    shoal_world_destroy(w);
}

/* ---- pursuit and following ------------------------------------------------- */

#define RING 8
#define CROWD 240

/* Targets at rest on a ring of radius 30 m (23 m apart), a pursuer and a
 * follower of each starting at the center, and a crowd of wanderers round
 * them that loses a few agents every second. */
typedef struct scene {
    shoal_world_t* w;
    shoal_agent_t target[RING], pursuer[RING], follower[RING];
    shoal_agent_t crowd[CROWD];
} scene_t;

static void build(scene_t* s, int32_t reorder)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 2;
    def.backend = SHOAL_BACKEND_OPENMP;
    def.reorder_interval = reorder;
    def.seed = 5;
    cr_assert_eq(shoal_world_create(&def, &s->w, NULL), SHOAL_OK);
    for (int i = 0; i < CROWD / 2; ++i) { /* before the targets: removals move their rows */
        shoal_agent_def_t d = at(-60.0f + 0.5f * (float)i, -60.0f);
        d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
        s->crowd[i] = add(s->w, &d);
    }
    for (int i = 0; i < RING; ++i) {
        float a = 6.2831853f * (float)i / RING;
        shoal_agent_def_t t = at(30.0f * cosf(a), 30.0f * sinf(a));
        s->target[i] = add(s->w, &t);
        shoal_agent_def_t p = at(0.0f, 0.0f);
        p.heading = a;
        p.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
        p.pursuit.target = s->target[i];
        s->pursuer[i] = add(s->w, &p);
        shoal_agent_def_t f = at(0.0f, 0.0f);
        f.heading = a;
        f.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
        f.follow.leader = s->target[i];
        s->follower[i] = add(s->w, &f);
    }
    for (int i = CROWD / 2; i < CROWD; ++i) {
        shoal_agent_def_t d = at(-60.0f + 0.5f * (float)i, 60.0f);
        d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
        s->crowd[i] = add(s->w, &d);
    }
}

/* 12 s, removing 20 of the crowd every second (from both ends of the
 * table), and with `shuffle` a random permutation of the rows each second. */
static void run(scene_t* s, int shuffle)
{
    uint64_t rng = 77;
    for (int second = 0; second < 12; ++second) {
        step_n(s->w, 60, DT);
        shoal_agent_t gone[20];
        for (int i = 0; i < 10; ++i) {
            gone[i] = s->crowd[second * 10 + i];
            gone[10 + i] = s->crowd[CROWD - 1 - second * 10 - i];
        }
        cr_assert_eq(shoal_agents_remove(s->w, gone, 20), SHOAL_OK, "%s", shoal_world_last_error(s->w));
        if (!shuffle) continue;
        world_t* w = s->w;
        permute_at_random(w, &rng);
    }
}

Test(agent_refs, pursuit_and_following_survive_reorders_and_removals, .timeout = 120)
{
    scene_t moved, still;
    build(&moved, 1); /* the spatial hash reorders every step */
    build(&still, 0);
    run(&moved, 1);
    run(&still, 0);
    for (int i = 0; i < RING; ++i) {
        float p = distance(moved.w, moved.pursuer[i], moved.target[i]);
        float f = distance(moved.w, moved.follower[i], moved.target[i]);
        cr_assert_lt(p, 3.0f, "pursuer %d is %g m from its target", i, p);
        cr_assert_lt(f, 4.0f, "follower %d is %g m from its leader", i, f);
        shoal_agent_def_t d;
        cr_assert_eq(shoal_agent_get_def(moved.w, moved.pursuer[i], &d), SHOAL_OK);
        cr_assert(shoal_agent_equal(d.pursuit.target, moved.target[i]), "pursuer %d reads another target", i);
        cr_assert_eq(shoal_agent_get_def(moved.w, moved.follower[i], &d), SHOAL_OK);
        cr_assert(shoal_agent_equal(d.follow.leader, moved.target[i]), "follower %d reads another leader", i);
    }
    cr_assert_eq(shoal_world_state_hash(moved.w), shoal_world_state_hash(still.w),
                 "the rows' order changed where the agents went");
    shoal_world_destroy(moved.w);
    shoal_world_destroy(still.w);
}

/* A removed target gives no command (an agent that only pursues, or only
 * follows, stays at rest), also once a new agent has its slot; its handle
 * reads back as the null handle, and setting a stale handle stores none. */
Test(agent_refs, a_removed_target_gives_no_command_and_no_new_agent_is_taken_for_it)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t td = at(20.0f, 0.0f);
    shoal_agent_t target = add(w, &td);
    shoal_agent_def_t pd = at(0.0f, 0.0f);
    pd.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
    pd.pursuit.target = target;
    shoal_agent_t pursuer = add(w, &pd);
    shoal_agent_def_t fd = at(0.0f, 5.0f);
    fd.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
    fd.follow.leader = target;
    shoal_agent_t follower = add(w, &fd);
    shoal_agent_def_t ld = at(-20.0f, 0.0f);
    ld.planner.enabled = 1;
    ld.planner.max_expansions = 30;
    ld.planner.goal = SHOAL_PLAN_GOAL_PURSUE;
    ld.planner.goal_agent = target;
    shoal_agent_t planner = add(w, &ld);
    step_n(w, 30, DT);
    cr_assert_gt(speed_of(w, pursuer), 0.0f, "a live target is pursued");
    cr_assert_gt(speed_of(w, follower), 0.0f, "a live leader is followed");
    const float zero[3] = {0, 0, 0}, p0[3] = {0, 0, 0}, f0[3] = {0, 5, 0};
    cr_assert_eq(shoal_agent_teleport(w, pursuer, p0, zero, 0.0f, NULL), SHOAL_OK);
    cr_assert_eq(shoal_agent_teleport(w, follower, f0, zero, 0.0f, NULL), SHOAL_OK);
    uint64_t target_id = gid_of(w, target);
    cr_assert_eq(shoal_agent_remove(w, target), SHOAL_OK);
    step_n(w, 30, DT);
    cr_assert_eq(speed_of(w, pursuer), 0.0f);
    cr_assert_eq(speed_of(w, follower), 0.0f);
    /* A new agent in the target's slot is not it: its id is new. */
    shoal_agent_t reuse = add(w, &td);
    cr_assert_eq(reuse.index1, target.index1, "the slot was not taken again; the test needs it");
    cr_assert_neq(gid_of(w, reuse), target_id);
    step_n(w, 60, DT);
    cr_assert_eq(speed_of(w, pursuer), 0.0f, "the new agent was pursued");
    cr_assert_eq(speed_of(w, follower), 0.0f, "the new agent was followed");
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(w, pursuer, &d), SHOAL_OK);
    cr_assert(shoal_agent_is_null(d.pursuit.target), "a removed target reads back as the null handle");
    cr_assert_eq(shoal_agent_get_def(w, follower, &d), SHOAL_OK);
    cr_assert(shoal_agent_is_null(d.follow.leader));
    cr_assert_eq(shoal_agent_get_def(w, planner, &d), SHOAL_OK);
    cr_assert(shoal_agent_is_null(d.planner.goal_agent));
    cr_assert_eq(d.planner.goal, SHOAL_PLAN_GOAL_PURSUE, "the goal stays; it has no agent");
    /* The planner agent's other setters still take its definition. */
    cr_assert_eq(shoal_agent_set_vehicle(w, planner, &d.vehicle), SHOAL_OK, "%s", shoal_world_last_error(w));
    /* A stale handle set as the target is stored as none. */
    shoal_pursuit_t pu = shoal_pursuit_default();
    pu.target = target;
    cr_assert_eq(shoal_agent_set_pursuit(w, pursuer, &pu), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_agent_get_def(w, pursuer, &d), SHOAL_OK);
    cr_assert(shoal_agent_is_null(d.pursuit.target));
    step_n(w, 30, DT);
    cr_assert_eq(speed_of(w, pursuer), 0.0f);
    /* The new agent, named by its own handle, is pursued. */
    pu.target = reuse;
    cr_assert_eq(shoal_agent_set_pursuit(w, pursuer, &pu), SHOAL_OK);
    step_n(w, 30, DT);
    cr_assert_gt(speed_of(w, pursuer), 0.0f);
    shoal_world_destroy(w);
}

/* A target added inside a step and set as a live pursuer's target there:
 * the pursuer's row stores the pending agent's id, its definition names it
 * while it is pending, and it pursues it once it is live. */
typedef struct pair {
    shoal_agent_t target, pursuer;
    int done;
} pair_t;

static shoal_status_t add_target(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    pair_t* p = (pair_t*)ctx;
    if (p->done) return SHOAL_OK;
    p->done = 1;
    shoal_agent_def_t t = at(25.0f, 0.0f);
    cr_assert_eq(shoal_agent_add(w, &t, &p->target), SHOAL_OK);
    shoal_pursuit_t pu = shoal_pursuit_default();
    pu.target = p->target;
    cr_assert_eq(shoal_agent_set_pursuit(w, p->pursuer, &pu), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_def_t back;
    cr_assert_eq(shoal_agent_get_def(w, p->pursuer, &back), SHOAL_OK);
    cr_assert(shoal_agent_equal(back.pursuit.target, p->target), "a pending target reads back");
    return SHOAL_OK;
}

Test(agent_refs, a_target_added_inside_a_step_is_pursued)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    pair_t p = {0};
    shoal_agent_def_t d = at(0.0f, 0.0f);
    d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
    p.pursuer = add(w, &d);
    cr_assert_eq(shoal_world_add_system(w, "target", SHOAL_STAGE_SENSE, add_target, &p), SHOAL_OK);
    step_n(w, 1, DT);
    float before = distance(w, p.pursuer, p.target);
    step_n(w, 60, DT);
    cr_assert_lt(distance(w, p.pursuer, p.target), before - 1.0f);
    shoal_world_destroy(w);
}

/* ---- the state hash and snapshots ---------------------------------------- */

/* Two worlds with the same agents, ids and references whose slots differ:
 * the first frees its first slots in order, the second in reverse, so the
 * agents added after take them in opposite orders. */
static shoal_world_t* slotted(int reverse, shoal_agent_t* target, shoal_agent_t* pursuer)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_t first[6];
    for (int i = 0; i < 6; ++i) {
        shoal_agent_def_t d = at((float)i, -10.0f);
        first[i] = add(w, &d);
    }
    for (int i = 0; i < 6; ++i) cr_assert_eq(shoal_agent_remove(w, first[reverse ? 5 - i : i]), SHOAL_OK);
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t t = at(10.0f * (float)i, 20.0f);
        target[i] = add(w, &t);
    }
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t d = at(10.0f * (float)i, 0.0f);
        if (i == 2) {
            d.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
            d.follow.leader = target[i];
        } else {
            d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
            d.pursuit.target = target[2 - i];
        }
        pursuer[i] = add(w, &d);
    }
    return w;
}

Test(agent_refs, the_state_hash_leaves_the_targets_slots_out)
{
    shoal_agent_t ta[3], pa[3], tb[3], pb[3];
    shoal_world_t* a = slotted(0, ta, pa);
    shoal_world_t* b = slotted(1, tb, pb);
    for (int i = 0; i < 3; ++i) cr_assert_eq(gid_of(a, ta[i]), gid_of(b, tb[i]));
    cr_assert_neq(ta[0].index1, tb[0].index1, "the slots are the same; the test needs them to differ");
    cr_assert_eq(shoal_world_state_hash(a), shoal_world_state_hash(b));
    step_n(a, 60, DT);
    step_n(b, 60, DT);
    cr_assert_eq(shoal_world_state_hash(a), shoal_world_state_hash(b));
    shoal_world_destroy(a);
    shoal_world_destroy(b);
}

static void* save(const shoal_world_t* w, size_t* size)
{
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, size), SHOAL_OK);
    void* buf = malloc(*size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, *size, size), SHOAL_OK);
    return buf;
}

static void set_checksum(unsigned char* p, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < size - 8; ++k) h = (h ^ p[k]) * 0x100000001b3ull;
    for (int k = 0; k < 8; ++k) p[size - 8 + k] = (unsigned char)(h >> (8 * k));
}

static uint32_t get32(const unsigned char* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(unsigned char* p, uint32_t v)
{
    for (int k = 0; k < 4; ++k) p[k] = (unsigned char)(v >> (8 * k));
}

/* Each reference to an agent in the COMP sections of a snapshot of w: fn
 * gets its two words and rewrites them. */
typedef void ref_fn(unsigned char* lo, unsigned char* hi, void* ctx);
static int each_reference(const shoal_world_t* w, unsigned char* p, size_t size, ref_fn* fn, void* ctx)
{
    int seen = 0;
    for (size_t at = 32; at < size - 8;) {
        uint64_t bytes = (uint64_t)get32(p + at + 8) | (uint64_t)get32(p + at + 12) << 32;
        if (memcmp(p + at, "COMP", 4) == 0) {
            uint32_t k = get32(p + at + 16), rows = get32(p + at + 20);
            const module_t* m = w->comp_module[k];
            for (int32_t c = 0; c < m->column_count; ++c) {
                if (m->columns[c].type != COLUMN_AGENT_ID_LO) continue;
                unsigned char* lo = p + at + 28 + (size_t)c * rows * 4;
                for (uint32_t r = 0; r < rows; ++r, ++seen)
                    fn(lo + 4 * r, lo + (size_t)rows * 4 + 4 * r, ctx);
            }
        }
        at += 16 + (size_t)bytes;
    }
    return seen;
}

/* A world's references back to handles, as version 12 stored them: index1
 * and tag << 16 | generation. */
typedef struct to_handles {
    const shoal_agent_t* ids;
    const uint64_t* gids;
    int32_t count;
} to_handles_t;

static void id_to_handle(unsigned char* lo, unsigned char* hi, void* vctx)
{
    const to_handles_t* c = (const to_handles_t*)vctx;
    uint64_t stored = (uint64_t)get32(hi) << 32 | get32(lo);
    if (stored == 0) return; /* the null handle is 0, 0 in both */
    for (int32_t i = 0; i < c->count; ++i)
        if (c->gids[i] == stored - 1) {
            put32(lo, c->ids[i].index1);
            put32(hi, (uint32_t)c->ids[i].world0 << 16 | c->ids[i].generation);
            return;
        }
    cr_assert_fail("a reference to id %llu, given to no handle", (unsigned long long)(stored - 1));
}

static void id_past_next(unsigned char* lo, unsigned char* hi, void* vctx)
{
    uint64_t next = *(const uint64_t*)vctx;
    if (get32(lo) == 0 && get32(hi) == 0) return;
    put32(lo, (uint32_t)(next + 1));
    put32(hi, (uint32_t)((next + 1) >> 32));
}

/* Pursuers, followers and a planner agent whose targets sit in slots other
 * than their ids (slots freed and taken again), one of whom was removed
 * before the save. */
typedef struct refs {
    shoal_world_t* w;
    shoal_agent_t ids[32];
    uint64_t gids[32];
    int32_t count;
    shoal_agent_t chaser[4], gone;
} refs_t;

static shoal_agent_t keep(refs_t* r, shoal_agent_t a)
{
    r->ids[r->count] = a;
    r->gids[r->count++] = gid_of(r->w, a);
    return a;
}

static void make_refs(refs_t* r)
{
    memset(r, 0, sizeof *r);
    r->w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_t early[5];
    for (int i = 0; i < 5; ++i) {
        shoal_agent_def_t d = at((float)i, -30.0f);
        early[i] = keep(r, add(r->w, &d));
    }
    for (int i = 0; i < 4; ++i) cr_assert_eq(shoal_agent_remove(r->w, early[i]), SHOAL_OK);
    shoal_agent_t target[4];
    for (int i = 0; i < 4; ++i) { /* slots 3, 2, 1, 0, generation 2: slot and id differ */
        shoal_agent_def_t t = at(15.0f * (float)i, 25.0f);
        t.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
        target[i] = keep(r, add(r->w, &t));
        cr_assert_neq(target[i].index1 - 1, r->gids[r->count - 1]);
    }
    for (int i = 0; i < 4; ++i) {
        shoal_agent_def_t d = at(15.0f * (float)i, 0.0f);
        if (i == 3) {
            d.planner.enabled = 1;
            d.planner.max_expansions = 30;
            d.planner.goal = SHOAL_PLAN_GOAL_PURSUE;
            d.planner.goal_agent = target[0];
        } else if (i == 2) {
            d.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
            d.follow.leader = target[1];
        } else {
            d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
            d.pursuit.target = target[i + 2];
        }
        r->chaser[i] = keep(r, add(r->w, &d));
    }
    r->gone = target[3]; /* chaser 1's target */
    step_n(r->w, 20, DT);
    cr_assert_eq(shoal_agent_remove(r->w, r->gone), SHOAL_OK);
    step_n(r->w, 10, DT);
}

Test(agent_refs, references_survive_a_save_and_resume)
{
    refs_t r;
    make_refs(&r);
    size_t size = 0;
    void* buf = save(r.w, &size);
    shoal_world_t* copy = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &copy, &err), SHOAL_OK, "%s", err.message);
    free(buf);
    for (int i = 0; i < 4; ++i) {
        shoal_agent_def_t a, b;
        shoal_agent_t mine = r.chaser[i];
        cr_assert_eq(shoal_agent_get_def(r.w, mine, &a), SHOAL_OK);
        mine.world0 = (uint16_t)copy->tag; /* the saved world lives: the copy has a tag of its own */
        cr_assert_eq(shoal_agent_get_def(copy, mine, &b), SHOAL_OK, "%s", shoal_world_last_error(copy));
        shoal_agent_t ra = i == 3 ? a.planner.goal_agent : i == 2 ? a.follow.leader : a.pursuit.target;
        shoal_agent_t rb = i == 3 ? b.planner.goal_agent : i == 2 ? b.follow.leader : b.pursuit.target;
        cr_assert_eq(shoal_agent_is_null(ra), i == 1, "chaser %d", i);
        cr_assert_eq(shoal_agent_is_null(rb), i == 1, "chaser %d", i);
        if (i != 1) cr_assert_eq(gid_of(r.w, ra), gid_of(copy, rb), "chaser %d names another agent", i);
    }
    for (int s = 0; s < 60; ++s) {
        step_n(r.w, 1, DT);
        step_n(copy, 1, DT);
        cr_assert_eq(shoal_world_state_hash(r.w), shoal_world_state_hash(copy), "step %d", s);
    }
    shoal_world_destroy(copy);
    shoal_world_destroy(r.w);
}

Test(agent_refs, version_12_files_load_their_handles_as_ids)
{
    refs_t r;
    make_refs(&r);
    size_t size = 0;
    unsigned char* buf = save(r.w, &size);
    cr_assert_eq(get32(buf + 8), 13u);
    to_handles_t c = {r.ids, r.gids, r.count};
    cr_assert_eq(each_reference(r.w, buf, size, id_to_handle, &c), 4, "four references");
    put32(buf + 8, 12);
    set_checksum(buf, size);
    /* The file names chaser 1's removed target by a stale handle, which
     * loads as none; the saved world kept the removed agent's id. */
    shoal_pursuit_t none = shoal_pursuit_default();
    cr_assert_eq(shoal_agent_set_pursuit(r.w, r.chaser[1], &none), SHOAL_OK);
    uint64_t h = shoal_world_state_hash(r.w);
    shoal_world_destroy(r.w); /* the copy then keeps the saved tag, as the handles in the file do */
    shoal_world_t* v12 = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &v12, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_state_hash(v12), h, "the handles did not become the ids saved");
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(v12, r.chaser[0], &d), SHOAL_OK);
    cr_assert(shoal_agent_equal(d.pursuit.target, r.ids[7]), "chaser 0 pursues target 2");
    cr_assert_eq(shoal_agent_get_def(v12, r.chaser[1], &d), SHOAL_OK);
    cr_assert(shoal_agent_is_null(d.pursuit.target), "a target removed before the save is none");
    shoal_world_destroy(v12);
    free(buf);
}

Test(agent_refs, a_file_naming_an_id_not_yet_given_is_refused)
{
    refs_t r;
    make_refs(&r);
    size_t size = 0;
    unsigned char* buf = save(r.w, &size);
    uint64_t next = r.w->next_id;
    cr_assert_eq(each_reference(r.w, buf, size, id_past_next, &next), 4);
    set_checksum(buf, size);
    shoal_world_t* bad = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &bad, &err), SHOAL_ERR_PARSE);
    cr_assert_null(bad);
    cr_assert(strstr(err.message, "not below the next id"), "%s", err.message);
    free(buf);
    shoal_world_destroy(r.w);
}
