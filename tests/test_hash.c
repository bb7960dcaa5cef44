/* The state hash as a sum over agents: the same for any storage order,
 * reorder interval, thread count and save/resume; moved by any change of
 * state, a lost or a duplicated agent. (Backends and thread counts of a
 * mixed population: test_determinism.c.) */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <shoal/scenario.h>
#include <shoal/snapshot.h>
#include <stdio.h>
#include <stdlib.h>

#include "ecs/world.h"
#include "support.h"

static shoal_world_t* scenario_world(const char* file, int threads, int32_t reorder, shoal_scenario_t** out)
{
    char path[512];
    snprintf(path, sizeof path, "%s/scenarios/%s", SHOAL_SOURCE_DIR, file);
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_file(path, out, &err), SHOAL_OK, "%s: %s", path, err.message);
    shoal_world_def_t def = shoal_scenario_world_def(*out);
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    if (reorder >= 0) def.reorder_interval = reorder;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_scenario_populate(*out, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    return w;
}

static uint64_t scenario_hash(const char* file, int threads, int32_t reorder, int steps)
{
    shoal_scenario_t* sc = NULL;
    shoal_world_t* w = scenario_world(file, threads, reorder, &sc);
    step_n(w, steps, shoal_scenario_dt(sc));
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
    return h;
}

/* Flocks sum over their neighbors in SIMD lanes, so the order in which
 * candidates come decides the bits: the spatial hash gives each cell's
 * agents by global id, whatever the storage order a reorder left. */
static void one_hash_for_every_reorder(const char* file, int steps)
{
    uint64_t ref = scenario_hash(file, 1, 0, steps);
    static const int32_t reorders[] = {1, 7, 32};
    static const int threads[] = {1, 2, 3, 8};
    for (int i = 0; i < 3; ++i)
        for (int t = 0; t < 4; ++t) {
            uint64_t h = scenario_hash(file, threads[t], reorders[i], steps);
            cr_assert_eq(h, ref, "%s: reorder every %d steps on %d threads: %016llx, never: %016llx", file,
                         (int)reorders[i], threads[t], (unsigned long long)h, (unsigned long long)ref);
        }
}

Test(hash, one_value_for_every_reorder_interval_flock2d, .timeout = 120)
{
    one_hash_for_every_reorder("flock2d.json", 120);
}
Test(hash, one_value_for_every_reorder_interval_fish3d, .timeout = 120)
{
    one_hash_for_every_reorder("fish3d.json", 120);
}
Test(hash, one_value_for_every_reorder_interval_convoy, .timeout = 120)
{
    one_hash_for_every_reorder("convoy.json", 120);
}
/* Pedestrians pressed round a wall: the contact pass falls back to serial
 * Gauss-Seidel sweeps (three times in 300 steps), whose turns go by global
 * id. */
Test(hash, one_value_for_every_reorder_interval_nav_u_wall, .timeout = 120)
{
    one_hash_for_every_reorder("nav_u_wall.json", 300);
}

/* The same world in another storage order hashes alike: the rows are
 * permuted (handles, ids and every column with them) between steps. */
Test(hash, the_same_for_any_storage_order)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    populate_mixed(w, 3000, 11);
    step_n(w, 10, 1.0f / 60.0f);
    uint64_t h = shoal_world_state_hash(w);
    int32_t n = w->agents.count;
    int32_t* perm = malloc((size_t)n * sizeof *perm);
    for (int32_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
    for (int32_t i = 0; i + 7 < n; i += 7) { /* and some swaps */
        int32_t t = perm[i];
        perm[i] = perm[i + 5];
        perm[i + 5] = t;
    }
    cr_assert_eq(world_permute_agents(w, perm), SHOAL_OK);
    cr_assert_eq(shoal_world_state_hash(w), h, "a permuted table hashes alike");
    /* and it steps on alike: neighbors come by id, not by row */
    shoal_world_t* v = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    populate_mixed(v, 3000, 11);
    step_n(v, 10, 1.0f / 60.0f);
    step_n(w, 20, 1.0f / 60.0f);
    step_n(v, 20, 1.0f / 60.0f);
    cr_assert_eq(shoal_world_state_hash(w), shoal_world_state_hash(v));
    free(perm);
    shoal_world_destroy(v);
    shoal_world_destroy(w);
}

/* An agent lost, or one more just like another, moves the hash: a sum,
 * not an exclusive or, under which two equal terms would cancel. */
Test(hash, moved_by_a_lost_or_a_duplicated_agent)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    populate_mixed(w, 50, 3);
    uint64_t h0 = shoal_world_state_hash(w);
    shoal_agent_t ids[50];
    shoal_agent_batch_t b = {.ids = ids};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 50, &n), SHOAL_OK);
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(w, ids[7], &d), SHOAL_OK);
    shoal_agent_t twin;
    cr_assert_eq(shoal_agent_add(w, &d, &twin), SHOAL_OK);
    uint64_t h1 = shoal_world_state_hash(w);
    cr_assert_neq(h1, h0, "a duplicate moves it");
    cr_assert_eq(shoal_agent_remove(w, ids[7]), SHOAL_OK);
    uint64_t h2 = shoal_world_state_hash(w);
    cr_assert_neq(h2, h0, "the same state under another id is another world");
    cr_assert_neq(h2, h1);
    cr_assert_eq(shoal_agent_remove(w, twin), SHOAL_OK);
    cr_assert_neq(shoal_world_state_hash(w), h0, "one agent fewer");
    shoal_world_destroy(w);
}

/* Every agent column and every state column of a component is in it: one
 * bit of any of them moves the hash. */
static int flip_every_column(shoal_world_t* w)
{
    uint64_t h0 = shoal_world_state_hash(w);
    int32_t row = 17;
    const table_t* t = &w->agents;
    for (int32_t c = 1; c < t->column_count; ++c) {
        if (t->elem_size[c] == 0 || c == AC_ID_LO || c == AC_ID_HI) continue;
        uint32_t* v = (uint32_t*)t->columns[c] + row;
        *v ^= 1u;
        cr_assert_neq(shoal_world_state_hash(w), h0, "agent column %d", (int)c);
        *v ^= 1u;
    }
    int checked = 0;
    for (int k = 0; k < w->comp_count; ++k) {
        const table_t* ct = &w->comps[k].table;
        if (ct->count == 0) continue;
        for (int32_t c = COMP_ROW + 1; c < ct->column_count; ++c) {
            uint8_t f = w->comp_module[k]->columns[c].flags;
            if (f & COLUMN_NOT_STATE) continue;
            uint32_t* v = (uint32_t*)ct->columns[c];
            uint32_t was = *v;
            *v = (f & COLUMN_HASH_NONZERO) && was == 0 ? 1u : was ^ 1u;
            cr_assert_neq(shoal_world_state_hash(w), h0, "component %d column %d", k, (int)c);
            *v = was;
            checked++;
        }
    }
    cr_assert_eq(shoal_world_state_hash(w), h0);
    return checked;
}

/* Every agent column and every state column of a component is in it: one
 * bit of any of them moves the hash. */
Test(hash, moved_by_one_bit_of_any_column, .timeout = 60)
{
    static const char* const files[] = {"flock2d.json", "default.json", "nav_journey.json", "convoy.json"};
    int checked = 0;
    for (int i = 0; i < 4; ++i) {
        shoal_scenario_t* sc = NULL;
        shoal_world_t* w = scenario_world(files[i], 1, -1, &sc);
        step_n(w, 3, shoal_scenario_dt(sc));
        checked += flip_every_column(w);
        shoal_world_destroy(w);
        shoal_scenario_destroy(sc);
    }
    cr_assert_gt(checked, 30, "component columns checked: %d", checked);
}

/* Saved and resumed between reorders, on other thread counts: the resumed
 * world reaches the same hash as the one that ran through. */
Test(hash, the_same_across_save_and_resume, .timeout = 60)
{
    shoal_scenario_t* sc = NULL;
    shoal_world_t* w = scenario_world("flock2d.json", 2, 5, &sc);
    float dt = shoal_scenario_dt(sc);
    step_n(w, 23, dt);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    uint64_t saved = shoal_world_state_hash(w);
    step_n(w, 40, dt);
    uint64_t ran = shoal_world_state_hash(w);
    for (int threads = 1; threads <= 3; threads += 2) {
        shoal_world_def_t def = shoal_world_default_def();
        def.thread_count = threads;
        shoal_world_t* back = NULL;
        shoal_error_t err;
        cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, &def, &back, &err), SHOAL_OK, "%s",
                     err.message);
        cr_assert_eq(shoal_world_state_hash(back), saved);
        step_n(back, 40, dt);
        cr_assert_eq(shoal_world_state_hash(back), ran, "resumed on %d threads", threads);
        shoal_world_destroy(back);
    }
    free(buf);
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
}
