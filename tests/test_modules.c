/* A module added the way docs/modules.md says: the odometer (tests/toy/),
 * whose component, system, module-wide data and snapshot section live in
 * its own folder, registered by one module row and one system row after
 * the built-in ones. It must count, take part in the state hash and in
 * snapshots, step the same on any thread count, pass the write check, and
 * change nothing of the built-in modules' results. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "io/snapshot_format.h"
#include "shoal/snapshot.h"
#include "tests/support.h"
#include "tests/toy/odometer.h"

static void position_of(shoal_world_t* w, shoal_agent_t id, float out[3])
{
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, id, &s), SHOAL_OK);
    memcpy(out, s.position, sizeof s.position);
}

static shoal_world_t* odo_world(const registry_t* reg, int threads)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = threads;
    def.seed = 11;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(world_create_with(&def, reg, &w, &err), SHOAL_OK, "%s", err.message);
    return w;
}

/* 60 mixed agents (populate_mixed's behaviors and poses), every third with
 * an odometer; their handles into ids. */
static void odo_populate(shoal_world_t* w, shoal_agent_t* ids)
{
    for (int i = 0; i < 60; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        for (int k = 0; k < 2; ++k) {
            d.position[k] = rng_range(3, (uint64_t)i, 0, (uint32_t)k, -40.0f, 40.0f);
            d.target[k] = rng_range(3, (uint64_t)i, 1, (uint32_t)k, -40.0f, 40.0f);
        }
        d.heading = rng_range(3, (uint64_t)i, 2, 0, -3.0f, 3.0f);
        d.weights[i % 4] = 1.0f;
        if (i % 5 == 0) d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        if (i % 3 == 0) d.user_value = ODOMETER_TAG | (uint64_t)i;
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
}

Test(modules, a_module_of_its_own_counts_what_its_agents_moved)
{
    shoal_world_t* w = odo_world(odometer_registry(1), 2);
    shoal_agent_t ids[60];
    odo_populate(w, ids);
    cr_assert_eq(w->comps[odometer_component(w)].table.count, 20, "every third agent has an odometer");
    /* Sum |x(t+1) - x(t)| from outside, step by step, against the odometer. */
    double walked[60] = {0};
    float before[60][3];
    const float dt = 0.1f;
    for (int s = 0; s < 50; ++s) {
        for (int i = 0; i < 60; ++i) position_of(w, ids[i], before[i]);
        step_n(w, 1, dt);
        for (int i = 0; i < 60; ++i) {
            float now[3];
            position_of(w, ids[i], now);
            walked[i] += hypot(now[0] - before[i][0], now[1] - before[i][1]);
        }
    }
    double total = 0.0;
    for (int i = 0; i < 60; ++i) {
        double d = odometer_distance(w, ids[i]);
        if (i % 3 != 0) {
            cr_assert_eq(d, -1.0, "agent %d has no odometer", i);
            continue;
        }
        cr_assert_gt(walked[i], 1.0, "agent %d moved", i);
        cr_assert(fabs(d - walked[i]) <= 1e-4 * walked[i] + 1e-5, "agent %d: odometer %g m, walked %g m", i,
                  d, walked[i]);
        total += d;
    }
    cr_assert(fabs(odometer_of(w)->total - total) <= 1e-4 * total, "total %g, sum %g", odometer_of(w)->total,
              total);
    cr_assert_eq(odometer_of(w)->steps, 50);
    shoal_world_destroy(w);
}

Test(modules, a_module_of_its_own_changes_nothing_of_the_others)
{
    /* The same agents in a built-in world: every position the same, bit
     * for bit, after 40 steps (the odometer only reads). */
    shoal_world_t* a = odo_world(odometer_registry(1), 2);
    shoal_world_t* b = odo_world(builtin_registry(), 2);
    shoal_agent_t ia[60], ib[60];
    odo_populate(a, ia);
    odo_populate(b, ib);
    step_n(a, 40, 0.1f);
    step_n(b, 40, 0.1f);
    for (int i = 0; i < 60; ++i) {
        float pa[3], pb[3];
        position_of(a, ia[i], pa);
        position_of(b, ib[i], pb);
        cr_assert(memcmp(pa, pb, sizeof pa) == 0, "agent %d moved otherwise", i);
    }
    /* Its column and data are state: the hashes differ. */
    cr_assert_neq(shoal_world_state_hash(a), shoal_world_state_hash(b));
    shoal_world_destroy(a);
    shoal_world_destroy(b);
}

Test(modules, a_module_of_its_own_steps_the_same_on_any_thread_count)
{
    uint64_t hash[3];
    const int threads[3] = {1, 2, 4};
    for (int k = 0; k < 3; ++k) {
        shoal_world_t* w = odo_world(odometer_registry(1), threads[k]);
        shoal_agent_t ids[60];
        odo_populate(w, ids);
        step_n(w, 30, 0.1f);
        hash[k] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    cr_assert_eq(hash[0], hash[1]);
    cr_assert_eq(hash[0], hash[2]);
}

Test(modules, a_module_of_its_own_is_saved_and_loaded_with_its_section)
{
    const registry_t* reg = odometer_registry(1);
    shoal_world_t* w = odo_world(reg, 2);
    shoal_agent_t ids[60];
    odo_populate(w, ids);
    step_n(w, 25, 0.1f);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);

    shoal_world_t* back = NULL;
    shoal_error_t err;
    cr_assert_eq(snapshot_load_memory_with(buf, size, NULL, reg, &back, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_state_hash(back), shoal_world_state_hash(w));
    cr_assert_eq(odometer_of(back)->steps, 25);
    step_n(w, 10, 0.1f);
    step_n(back, 10, 0.1f);
    cr_assert_eq(shoal_world_state_hash(back), shoal_world_state_hash(w),
                 "the loaded world goes on the same");

    /* A loader without the odometer refuses the file, and says why. */
    shoal_world_t* none = NULL;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &none, &err), SHOAL_ERR_PARSE);
    cr_assert_null(none);
    cr_assert(strstr(err.message, "section") != NULL, "%s", err.message);
    free(buf);
    shoal_world_destroy(back);
    shoal_world_destroy(w);
}

Test(modules, a_module_of_its_own_passes_the_write_check_as_declared)
{
    shoal_world_t* w = odo_world(odometer_registry(1), 2);
    shoal_agent_t ids[60];
    odo_populate(w, ids);
    cr_assert_eq(world_set_write_check(w, 1), SHOAL_OK);
    step_n(w, 20, 0.1f);
    shoal_world_destroy(w);

    /* The same system declaring nothing it writes fails the step, naming
     * itself and the column. */
    w = odo_world(odometer_registry(0), 2);
    odo_populate(w, ids);
    cr_assert_eq(world_set_write_check(w, 1), SHOAL_OK);
    cr_assert_neq(shoal_world_step(w, 0.1f), SHOAL_OK);
    const char* msg = shoal_world_last_error(w);
    cr_assert(strstr(msg, "odometer") != NULL && strstr(msg, "distance") != NULL, "%s", msg);
    shoal_world_destroy(w);
}

Test(modules, a_registry_past_the_limits_is_refused)
{
    const registry_t* b = builtin_registry();
    registry_t big = *b;
    big.module_count = WORLD_MAX_MODULES + 1;
    shoal_world_def_t def = shoal_world_default_def();
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(world_create_with(&def, &big, &w, &err), SHOAL_ERR_CAPACITY);
    cr_assert_null(w);
    cr_assert(strstr(err.message, "registry") != NULL, "%s", err.message);

    /* A component without a column table. */
    static const module_t bare = {.name = "bare", .column_count = 3};
    const module_t* mods[WORLD_MAX_MODULES];
    for (int32_t m = 0; m < b->module_count; ++m) mods[m] = b->modules[m];
    mods[b->module_count] = &bare;
    registry_t with_bare = *b;
    with_bare.modules = mods;
    with_bare.module_count = b->module_count + 1;
    cr_assert_eq(world_create_with(&def, &with_bare, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_null(w);
    cr_assert(strstr(err.message, "column table") != NULL, "%s", err.message);
}
