/* Regression tests of issue 18 (hostile-input review, second round): each
 * failed on the library before its fix. CLI-level cases are in
 * tests/test_cli.c. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include <shoal/snapshot.h>

#include "support.h"

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- obstacle ids: O(1) amortized, lowest free id first ------------------ */

Test(reliability, obstacle_adds_are_not_quadratic)
{
    /* 200,000 adds took 7.6 s (each scanned every id for a free one). */
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    double t0 = seconds_now();
    for (int32_t i = 0; i < 200000; ++i) {
        float c[3] = {(float)(i % 1000), (float)(i / 1000), 0.0f};
        int32_t id = -1;
        cr_assert_eq(shoal_world_add_obstacle(w, c, 0.5f, &id), SHOAL_OK);
        cr_assert_eq(id, i);
    }
    double took = seconds_now() - t0;
    cr_assert_lt(took, 2.0, "200,000 obstacle adds took %.2f s", took);
    shoal_world_destroy(w);
}

Test(reliability, obstacle_ids_reuse_the_lowest_free_one)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float c[3] = {1.0f, 2.0f, 0.0f};
    for (int32_t i = 0; i < 300; ++i) cr_assert_eq(shoal_world_add_obstacle(w, c, 1.0f, NULL), SHOAL_OK);
    const int32_t removed[] = {299, 7, 200, 64, 65, 0, 130};
    for (size_t i = 0; i < sizeof removed / sizeof *removed; ++i)
        cr_assert_eq(shoal_world_remove_obstacle(w, removed[i]), SHOAL_OK);
    const int32_t expect[] = {0, 7, 64, 65, 130, 200, 299, 300, 301};
    for (size_t i = 0; i < sizeof expect / sizeof *expect; ++i) {
        int32_t id = -1;
        cr_assert_eq(shoal_world_add_obstacle(w, c, 1.0f, &id), SHOAL_OK);
        cr_assert_eq(id, expect[i], "add %zu: id %d, expected %d", i, (int)id, (int)expect[i]);
    }
    /* Through a snapshot (the free ids are rebuilt from the loaded radii). */
    cr_assert_eq(shoal_world_remove_obstacle(w, 150), SHOAL_OK);
    cr_assert_eq(shoal_world_remove_obstacle(w, 3), SHOAL_OK);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* copy = NULL;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &copy, NULL), SHOAL_OK);
    int32_t id = -1;
    cr_assert_eq(shoal_world_add_obstacle(copy, c, 1.0f, &id), SHOAL_OK);
    cr_assert_eq(id, 3);
    cr_assert_eq(shoal_world_add_obstacle(copy, c, 1.0f, &id), SHOAL_OK);
    cr_assert_eq(id, 150);
    cr_assert_eq(shoal_world_add_obstacle(copy, c, 1.0f, &id), SHOAL_OK);
    cr_assert_eq(id, 302);
    free(buf);
    shoal_world_destroy(copy);
    shoal_world_destroy(w);
}

