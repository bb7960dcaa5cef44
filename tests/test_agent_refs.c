/* The world's global-id map (each live or pending agent's global id to its
 * slot) against a scan of the slots, after random adds (one at a time, in
 * bulk and inside steps), removals, reorders, rollbacks and snapshot
 * loads. */
#include <criterion/criterion.h>
#include <shoal/snapshot.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/world.h"
#include "support.h"

#define DT (1.0f / 60.0f)

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
            int32_t* perm = malloc((size_t)n * sizeof *perm);
            for (int32_t i = 0; i < n; ++i) perm[i] = i;
            for (int32_t i = n - 1; i > 0; --i) {
                int32_t j = (int32_t)(rng_splitmix64(&rng) % (uint64_t)(i + 1));
                int32_t t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            cr_assert_eq(world_permute_agents(w, perm), SHOAL_OK);
            free(perm);
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
