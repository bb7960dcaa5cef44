/* Regression tests of the second hostile-input review: each failed on the
 * library before its fix. CLI-level cases are in tests/test_cli.c. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <shoal/recording.h>
#include <shoal/scenario.h>
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

/* ---- world tags: worlds loaded from one snapshot refuse each other's handles */

static void* save_to_memory(shoal_world_t* w, size_t* size)
{
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, size), SHOAL_OK);
    void* buf = malloc(*size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, *size, size), SHOAL_OK);
    return buf;
}

Test(reliability, worlds_loaded_from_one_snapshot_refuse_each_others_handles)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_agent_t ids[3];
    for (int i = 0; i < 3; ++i) {
        d.position[0] = (float)i * 3.0f;
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK);
    }
    /* A pursuer: its stored target handle must follow its world's tag. */
    d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
    d.pursuit.target = ids[0];
    shoal_agent_t pursuer;
    cr_assert_eq(shoal_agent_add(w, &d, &pursuer), SHOAL_OK);
    size_t size = 0;
    void* buf = save_to_memory(w, &size);
    uint64_t hash = shoal_world_state_hash(w);
    shoal_world_destroy(w);

    /* Saved world gone: the first load keeps its tag (kept handles work). */
    shoal_world_t *a = NULL, *b = NULL;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &a, NULL), SHOAL_OK);
    cr_assert(shoal_agent_is_valid(a, ids[1]));
    /* The second load while the first lives: another tag. */
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &b, NULL), SHOAL_OK);
    cr_assert_not(shoal_agent_is_valid(b, ids[1]), "b accepted a's handle");
    cr_assert_eq(shoal_agent_remove(b, ids[1]), SHOAL_ERR_STALE_HANDLE);
    cr_assert(strstr(shoal_world_last_error(b), "does not belong to this world"), "%s",
              shoal_world_last_error(b));
    cr_assert_eq(shoal_world_agent_count(a), 4);
    cr_assert_eq(shoal_world_agent_count(b), 4);
    /* b's own handles, and its pursuer still pursues (its stored handle
     * was re-tagged), so both worlds go on alike. */
    shoal_agent_t b_ids[4];
    int32_t n = 0;
    shoal_agent_batch_t batch = {0};
    batch.ids = b_ids;
    cr_assert_eq(shoal_world_read_agents(b, &batch, 4, &n), SHOAL_OK);
    cr_assert_eq(n, 4);
    for (int i = 0; i < 4; ++i) {
        cr_assert(shoal_agent_is_valid(b, b_ids[i]));
        cr_assert_not(shoal_agent_is_valid(a, b_ids[i]), "a accepted b's handle");
    }
    shoal_agent_def_t got;
    shoal_agent_t b_pursuer = pursuer;
    b_pursuer.world0 = b_ids[0].world0;
    cr_assert_eq(shoal_agent_get_def(b, b_pursuer, &got), SHOAL_OK, "%s", shoal_world_last_error(b));
    cr_assert_eq(got.pursuit.target.world0, b_ids[0].world0);
    cr_assert_eq(shoal_world_state_hash(a), hash);
    cr_assert_eq(shoal_world_state_hash(b), hash);
    for (int s = 0; s < 5; ++s) {
        cr_assert_eq(shoal_world_step(a, 0.05f), SHOAL_OK);
        cr_assert_eq(shoal_world_step(b, 0.05f), SHOAL_OK);
        cr_assert_eq(shoal_world_state_hash(a), shoal_world_state_hash(b), "step %d", s);
    }
    free(buf);
    shoal_world_destroy(a);
    shoal_world_destroy(b);
}

Test(reliability, live_worlds_never_share_a_tag)
{
    enum { N = 64 };
    shoal_world_t* w[N];
    shoal_agent_t id[N];
    shoal_agent_def_t d = shoal_agent_default_def();
    for (int i = 0; i < N; ++i) {
        w[i] = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        cr_assert_eq(shoal_agent_add(w[i], &d, &id[i]), SHOAL_OK);
    }
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j)
            cr_assert_eq(shoal_agent_is_valid(w[i], id[j]), i == j, "world %d, handle of %d", i, j);
    for (int i = 0; i < N; ++i) shoal_world_destroy(w[i]);
}

/* ---- outputs and readers: one rule each (io/atomic_file.h, io/file_read.h) */

Test(reliability, library_outputs_refuse_symlinks_and_directories, .timeout = 30)
{
    char dir[] = "/tmp/shoal_rel_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char link[64], target[64], sub[64];
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    cr_assert_eq(symlink(target, link), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    populate_mixed(w, 10, 3);
    cr_assert_eq(shoal_world_save_snapshot(w, link), SHOAL_ERR_IO);
    cr_assert(strstr(shoal_world_last_error(w), "symbolic link"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_save_snapshot(w, sub), SHOAL_ERR_IO);
    cr_assert(strstr(shoal_world_last_error(w), "is a directory"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_write_trace(w, link, "x"), SHOAL_ERR_IO);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
    cr_assert_neq(access(target, F_OK), 0, "written through the link");
    cr_assert_eq(shoal_world_save_snapshot(w, "/dev/null"), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode));
    shoal_world_destroy(w);
    unlink(link);
    rmdir(sub);
    rmdir(dir);
}

Test(reliability, library_readers_refuse_fifos_and_devices_without_blocking, .timeout = 30)
{
    char dir[] = "/tmp/shoal_rel_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const char* paths[] = {fifo, "/dev/zero"};
    for (int i = 0; i < 2; ++i) {
        shoal_error_t err;
        shoal_world_t* loaded = NULL;
        cr_expect_eq(shoal_world_load_snapshot(paths[i], NULL, &loaded, &err), SHOAL_ERR_IO, "%s",
                     err.message);
        cr_expect(strstr(err.message, "not a regular file"), "%s", err.message);
        shoal_recording_t* rec = NULL;
        cr_expect_eq(shoal_recording_load(paths[i], 0, &rec, &err), SHOAL_ERR_IO, "%s", err.message);
        cr_expect(strstr(err.message, "not a regular file"), "%s", err.message);
        shoal_scenario_t* sc = NULL;
        cr_expect_eq(shoal_scenario_load_file(paths[i], &sc, &err), SHOAL_ERR_IO, "%s", err.message);
        cr_expect(strstr(err.message, "not a regular file"), "%s", err.message);
        shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        cr_expect_eq(shoal_world_load_trim_table(w, paths[i]), SHOAL_ERR_IO);
        cr_expect(strstr(shoal_world_last_error(w), "not a regular file"), "%s", shoal_world_last_error(w));
        shoal_world_destroy(w);
    }
    unlink(fifo);
    rmdir(dir);
}

/* ---- finite state: no accepted input overflows the step ------------------ */

Test(reliability, huge_vehicle_limits_and_steps_are_refused)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.vehicle.max_speed = 3.4e38f;
    d.vehicle.max_force = 3.4e38f;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "vehicle.max_force must be finite, >= 0 and <= 1e+09"), "%s",
              shoal_world_last_error(w));
    d = shoal_agent_default_def();
    d.vehicle.mass = 1e-30f;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_ERR_INVALID_ARGUMENT);
    /* The largest accepted values, stepped at the longest step: finite, and
     * the world's own snapshot loads. */
    d = shoal_agent_default_def();
    d.vehicle.max_speed = 1e9f;
    d.vehicle.max_force = 1e9f;
    d.vehicle.max_torque = 1e9f;
    d.vehicle.max_turn_rate = 1e9f;
    d.vehicle.mass = 1e-6f;
    d.vehicle.inertia = 1e-6f;
    d.control.speed_gain = d.control.heading_gain = d.control.turn_damping = 1e9f;
    d.target[0] = 1e9f;
    d.position[1] = -1e9f;
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1e9f;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    uint64_t before = shoal_world_state_hash(w);
    cr_assert_eq(shoal_world_step(w, 1e38f), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "dt must be finite, >= 1e-06 and <= 1000 seconds"), "%s",
              shoal_world_last_error(w));
    cr_assert_eq(shoal_world_state_hash(w), before, "a refused step changed the world");
    for (int s = 0; s < 3; ++s) cr_assert_eq(shoal_world_step(w, 1000.0f), SHOAL_OK);
    shoal_agent_state_t st;
    cr_assert_eq(shoal_agent_get_state(w, id, &st), SHOAL_OK);
    for (int k = 0; k < 3; ++k) {
        cr_assert(isfinite(st.position[k]) && isfinite(st.velocity[k]), "state %d not finite", k);
    }
    size_t size = 0;
    void* buf = save_to_memory(w, &size);
    shoal_world_t* copy = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &copy, &err), SHOAL_OK, "%s", err.message);
    free(buf);
    shoal_world_destroy(copy);
    shoal_world_destroy(w);
}

/* A step of 1e-40 s was accepted: 1 / dt and the contact pass's velocities
 * (what an agent moved over dt) went to inf and NaN, and the world's own
 * snapshot then failed to load. The shortest step is 1e-6 s; at it, crowd
 * agents pressed together, against a wall, stay finite and save. */
Test(reliability, tiny_steps_are_refused_and_the_shortest_stays_finite)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    const float box[] = {-2, -2, 2, -2, 2, 2, -2, 2};
    cr_assert_eq(shoal_world_add_wall(w, box, 4, 1, NULL), SHOAL_OK);
    for (int i = 0; i < 30; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
        /* overlapping starts: the contact pass moves them apart at once */
        d.position[0] = -1.5f + 0.1f * (float)(i % 6);
        d.position[1] = -1.5f + 0.1f * (float)(i / 6);
        d.target[0] = 10.0f;
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    uint64_t before = shoal_world_state_hash(w);
    const float bad[] = {1e-40f, 1e-20f, 9.9e-7f};
    for (int k = 0; k < 3; ++k) {
        cr_assert_eq(shoal_world_step(w, bad[k]), SHOAL_ERR_INVALID_ARGUMENT, "dt %g", (double)bad[k]);
        cr_assert(strstr(shoal_world_last_error(w), ">= 1e-06"), "%s", shoal_world_last_error(w));
    }
    cr_assert_eq(shoal_world_state_hash(w), before, "a refused step changed the world");
    for (int s = 0; s < 5; ++s)
        cr_assert_eq(shoal_world_step(w, 1e-6f), SHOAL_OK, "%s", shoal_world_last_error(w));
    float pos[3 * 30], vel[3 * 30];
    shoal_agent_batch_t b = {.positions = pos, .velocities = vel};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 30, &got), SHOAL_OK);
    for (int i = 0; i < 3 * got; ++i)
        cr_assert(isfinite(pos[i]) && isfinite(vel[i]), "agent %d not finite", i / 3);
    size_t size = 0;
    void* buf = save_to_memory(w, &size);
    shoal_world_t* copy = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &copy, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_state_hash(copy), shoal_world_state_hash(w));
    free(buf);
    shoal_world_destroy(copy);
    shoal_world_destroy(w);
    const char* json = "{\"name\": \"x\", \"dimensions\": 2, \"dt\": 1e-40, \"groups\": [{\"count\": 1}]}";
    shoal_scenario_t* sc = NULL;
    cr_assert_neq(shoal_scenario_load_string(json, strlen(json), "dt.json", &sc, &err), SHOAL_OK);
    cr_assert(strstr(err.message, "dt") && strstr(err.message, ">= 1e-06"), "%s", err.message);
}

/* Coordinates are bounded (DEF_MAX_COORDINATE, 1e18 m) where they enter:
 * with speeds of at most 1e9 m/s and steps of at most 1000 s, no accepted
 * position grows out of float's range in any run of practical length. */
Test(reliability, coordinates_beyond_range_are_refused)
{
    shoal_world_def_t wd = shoal_world_default_def();
    wd.thread_count = 1;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&wd, &w, NULL), SHOAL_OK);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = 3e38f;
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "position[0]"), "%s", shoal_world_last_error(w));
    d.position[0] = 1e18f;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    const float far[3] = {-2e18f, 0, 0}, zero[3] = {0, 0, 0};
    cr_assert_eq(shoal_agent_teleport(w, id, far, zero, 0.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_set_target(w, id, far), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agents_set_targets(w, &id, 1, far), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agents_teleport(w, &id, 1, far, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_add_obstacle(w, far, 1.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    const float fast[3] = {1e10f, 0, 0};
    cr_assert_eq(shoal_world_add_moving_obstacle(w, zero, fast, 1.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_agent_arrays_t a = {
        .positions = far,
    };
    cr_assert_eq(shoal_agents_add(w, &d, &a, 1, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    /* the largest accepted values step and stay finite */
    d.vehicle.max_speed = 1e9f;
    d.vehicle.max_force = 1e9f;
    d.velocity[0] = 1e9f;
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.target[0] = -1e18f;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int i = 0; i < 50; ++i)
        cr_assert_eq(shoal_world_step(w, 1000.0f), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, id, &s), SHOAL_OK);
    cr_assert(isfinite(s.position[0]) && isfinite(s.velocity[0]), "%g %g", (double)s.position[0],
              (double)s.velocity[0]);
    shoal_world_destroy(w);
}
