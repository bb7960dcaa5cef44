/* Global agent ids: given in the order agents are added, never reused,
 * independent of slots and storage order, kept by snapshots. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/shoal.h"
#include "shoal/snapshot.h"

static shoal_world_t* make(int32_t threads, int32_t reorder)
{
    shoal_world_def_t wd = shoal_world_default_def();
    wd.thread_count = threads;
    wd.reorder_interval = reorder;
    wd.cell_size = 2.0f;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&wd, &w, &err), SHOAL_OK, "%s", err.message);
    return w;
}

static shoal_agent_def_t walker(float x, float y)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.position[1] = y;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 0.5f; /* neighbors: the spatial hash, which reorders */
    return d;
}

static uint64_t gid(const shoal_world_t* w, shoal_agent_t a)
{
    uint64_t id = UINT64_MAX;
    cr_assert_eq(shoal_agent_global_id(w, a, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

Test(global_id, in_add_order_never_reused_while_slots_are)
{
    shoal_world_t* w = make(1, 0);
    shoal_agent_t a[4];
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t d = walker((float)i, 0.0f);
        cr_assert_eq(shoal_agent_add(w, &d, &a[i]), SHOAL_OK);
        cr_assert_eq(gid(w, a[i]), (uint64_t)i);
    }
    cr_assert_eq(shoal_agent_remove(w, a[1]), SHOAL_OK);
    shoal_agent_def_t d = walker(5.0f, 0.0f);
    cr_assert_eq(shoal_agent_add(w, &d, &a[3]), SHOAL_OK);
    cr_assert_eq(a[3].index1, a[1].index1, "the removed agent's slot is taken again");
    cr_assert_eq(gid(w, a[3]), 3u, "but not its id");
    /* a stale handle has no id; NULL arguments are refused */
    uint64_t id = 77;
    cr_assert_eq(shoal_agent_global_id(w, a[1], &id), SHOAL_ERR_STALE_HANDLE);
    cr_assert_eq(id, 77u);
    cr_assert_eq(shoal_agent_global_id(w, a[0], NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_global_id(NULL, a[0], &id), SHOAL_ERR_INVALID_ARGUMENT);
    /* bulk adds go on from there */
    shoal_agent_t b[5];
    shoal_agent_def_t bd = walker(0.0f, 3.0f);
    cr_assert_eq(shoal_agents_add(w, &bd, NULL, 5, b), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int i = 0; i < 5; ++i) cr_assert_eq(gid(w, b[i]), 4u + (uint64_t)i);
    shoal_world_destroy(w);
}

typedef struct adder {
    shoal_agent_t added;
    uint64_t id_inside;
    shoal_status_t st;
} adder_t;

static shoal_status_t add_one(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    adder_t* a = (adder_t*)ctx;
    if (shoal_world_step_count(w) != 0) return SHOAL_OK;
    shoal_agent_def_t d = walker(9.0f, 9.0f);
    a->st = shoal_agent_add(w, &d, &a->added);
    if (a->st == SHOAL_OK) a->st = shoal_agent_global_id(w, a->added, &a->id_inside);
    return SHOAL_OK;
}

Test(global_id, known_for_an_agent_added_inside_a_step)
{
    shoal_world_t* w = make(2, 0);
    for (int i = 0; i < 4; ++i) {
        shoal_agent_def_t d = walker((float)i, 0.0f);
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    adder_t a;
    memset(&a, 0, sizeof a);
    cr_assert_eq(shoal_world_add_system(w, "adder", SHOAL_STAGE_DECIDE, add_one, &a), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(a.st, SHOAL_OK);
    cr_assert_eq(a.id_inside, 4u);
    cr_assert_eq(gid(w, a.added), 4u, "live now, the id it was given while pending");
    shoal_world_destroy(w);
}

/* Reorders move rows; ids go with their agents, and read_agents gives them
 * in storage order beside the handles. */
Test(global_id, follow_their_agents_through_reorders)
{
    shoal_world_t* w = make(2, 1);
    enum { N = 300 };
    shoal_agent_t h[N];
    for (int i = 0; i < N; ++i) {
        /* added far from spatial order, so the reorder moves them */
        shoal_agent_def_t d = walker((float)((i * 37) % N) * 0.5f, (float)((i * 11) % 17));
        cr_assert_eq(shoal_agent_add(w, &d, &h[i]), SHOAL_OK);
    }
    for (int s = 0; s < 5; ++s) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    shoal_agent_t ids[N];
    uint64_t g[N];
    shoal_agent_batch_t b = {.ids = ids, .global_ids = g};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, N, &got), SHOAL_OK);
    cr_assert_eq(got, N);
    int moved = 0;
    for (int r = 0; r < N; ++r) {
        cr_assert_eq(g[r], gid(w, ids[r]));
        int i = (int)ids[r].index1 - 1;
        cr_assert(shoal_agent_equal(h[i], ids[r]));
        cr_assert_eq(g[r], (uint64_t)i, "agent %d (slot order = add order here)", i);
        moved += r != i;
    }
    cr_assert_gt(moved, N / 2, "the reorder moved most rows (%d)", moved);
    shoal_world_destroy(w);
}

/* A snapshot keeps every id and the next one to give: a resumed world
 * gives the agent it adds next the id the original gives. */
Test(global_id, kept_by_snapshots_with_the_next_id)
{
    shoal_world_t* w = make(1, 0);
    shoal_agent_t h[6];
    for (int i = 0; i < 6; ++i) {
        shoal_agent_def_t d = walker((float)i, 1.0f);
        cr_assert_eq(shoal_agent_add(w, &d, &h[i]), SHOAL_OK);
    }
    cr_assert_eq(shoal_agent_remove(w, h[5]), SHOAL_OK); /* the newest: next id stays 6 */
    cr_assert_eq(shoal_agent_remove(w, h[2]), SHOAL_OK);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* back = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &back, &err), SHOAL_OK, "%s", err.message);
    /* the loaded world has a tag of its own (w is live): its handles */
    shoal_agent_t ids[8];
    uint64_t g[8];
    shoal_agent_batch_t b = {.ids = ids, .global_ids = g};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(back, &b, 8, &got), SHOAL_OK);
    cr_assert_eq(got, 4);
    for (int r = 0; r < got; ++r) {
        cr_assert_eq(g[r], (uint64_t)ids[r].index1 - 1u);
        cr_assert_eq(g[r], gid(back, ids[r]));
        cr_assert_neq(g[r], 2u);
    }
    shoal_agent_def_t d = walker(3.0f, 3.0f);
    shoal_agent_t x, y;
    cr_assert_eq(shoal_agent_add(w, &d, &x), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(back, &d, &y), SHOAL_OK);
    cr_assert_eq(gid(w, x), 6u);
    cr_assert_eq(gid(back, y), 6u);
    cr_assert_eq(shoal_world_state_hash(back), shoal_world_state_hash(w));
    free(buf);
    shoal_world_destroy(back);
    shoal_world_destroy(w);
}

/* The id columns sit last in the AGNT section: a file whose ids repeat, or
 * reach the world's next id, is refused by name. */
static void reseal(unsigned char* p, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < size - 8; ++k) h = (h ^ p[k]) * 0x100000001b3ull;
    for (int k = 0; k < 8; ++k) p[size - 8 + k] = (unsigned char)(h >> (8 * k));
}

static unsigned char* id_low_words(unsigned char* p, size_t size, uint32_t* rows)
{
    for (size_t at = 32; at + 16 < size;) {
        uint64_t bytes = 0;
        for (int k = 0; k < 8; ++k) bytes |= (uint64_t)p[at + 8 + k] << (8 * k);
        if (memcmp(p + at, "AGNT", 4) == 0) {
            *rows = (uint32_t)p[at + 16] | (uint32_t)p[at + 17] << 8;
            return p + at + 16 + bytes - 2 * 4 * (size_t)*rows;
        }
        at += 16 + (size_t)bytes;
    }
    return NULL;
}

Test(global_id, damaged_ids_are_refused)
{
    shoal_world_t* w = make(1, 0);
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t d = walker((float)i, 1.0f);
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    unsigned char* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    uint32_t rows = 0;
    unsigned char* lo = id_low_words(buf, size, &rows);
    cr_assert_not_null(lo);
    cr_assert_eq(rows, 3u);
    cr_assert_eq(lo[4], 1, "the second agent's id, low word");
    const char* want[2] = {"two agents have the id 0", "agent id 3 is not below the world's next id 3"};
    for (int c = 0; c < 2; ++c) {
        unsigned char* bad = malloc(size);
        memcpy(bad, buf, size);
        id_low_words(bad, size, &rows)[4] = c == 0 ? 0 : 3;
        reseal(bad, size);
        shoal_world_t* back = NULL;
        shoal_error_t err;
        cr_assert_eq(shoal_world_load_snapshot_memory(bad, size, NULL, &back, &err), SHOAL_ERR_PARSE);
        cr_assert_null(back);
        cr_assert(strstr(err.message, want[c]) != NULL, "%s", err.message);
        free(bad);
    }
    free(buf);
    shoal_world_destroy(w);
}
