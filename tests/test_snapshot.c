/* World snapshots: bit-identical continuation after a save and a load (2D
 * and 3D, any thread counts, a world that uses every kind of state), round
 * trips through memory and files, damaged and forged snapshots, and saves
 * that fail half way. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <shoal/snapshot.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

#define DT (1.0f / 30.0f)
#define MAX_IDS 160

/* A world that holds every kind of state a snapshot must carry. */
typedef struct mixed {
    shoal_world_t* w;
    shoal_agent_t ids[MAX_IDS];
    int live[MAX_IDS];
    int count;
} mixed_t;

static shoal_agent_t add(mixed_t* m, const shoal_agent_def_t* d)
{
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(m->w, d, &id), SHOAL_OK, "%s", shoal_world_last_error(m->w));
    cr_assert_lt(m->count, MAX_IDS);
    m->live[m->count] = 1;
    m->ids[m->count++] = id;
    return id;
}

static shoal_agent_def_t flock_def(int dims, int i)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    for (int k = 0; k < dims; ++k) {
        d.position[k] = rng_range(3, (uint64_t)i, 0, (uint32_t)k, -40.0f, 40.0f);
        d.velocity[k] = rng_range(3, (uint64_t)i, 1, (uint32_t)k, -2.0f, 2.0f);
        d.target[k] = rng_range(3, (uint64_t)i, 2, (uint32_t)k, -40.0f, 40.0f);
    }
    d.heading = rng_range(3, (uint64_t)i, 3, 0, -3.0f, 3.0f);
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_ALIGN] = 0.5f;
    d.weights[SHOAL_BEHAVIOR_COHERE] = 0.3f;
    d.neighbors.radius = 6.0f;
    if (i % 3 == 0) d.weights[SHOAL_BEHAVIOR_WANDER] = 0.7f;
    if (i % 4 == 0) d.weights[SHOAL_BEHAVIOR_SEEK] = 0.4f;
    if (i % 5 == 0) d.weights[SHOAL_BEHAVIOR_AVOID] = 1.0f;
    if (i % 7 == 0) d.neighbors.max_neighbors = 4;
    return d;
}

static void build_mixed(mixed_t* m, int dims, int threads)
{
    memset(m, 0, sizeof *m);
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    def.seed = 11;
    def.reorder_interval = 5;
    if (dims == 2) { /* a torus in 2D, unbounded space in 3D */
        def.wrap = 1;
        def.bounds_min[0] = def.bounds_min[1] = -100.0f;
        def.bounds_max[0] = def.bounds_max[1] = 100.0f;
    }
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &m->w, &err), SHOAL_OK, "%s", err.message);
    shoal_world_t* w = m->w;

    const float c0[3] = {10, 10, 0}, c1[3] = {-20, 5, 0}, c2[3] = {0, -25, 0}, v2[3] = {1.5f, 0.5f, 0};
    cr_assert_eq(shoal_world_add_obstacle(w, c0, 3.0f, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_obstacle(w, c1, 2.0f, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_moving_obstacle(w, c2, v2, 2.5f, NULL), SHOAL_OK);

    /* Directed seek along a route. */
    shoal_waypoint_t pts[3];
    memset(pts, 0, sizeof pts);
    const float xs[3] = {30, 30, 0}, ys[3] = {0, 30, 30}, dirs[3][2] = {{1, 0}, {0, 1}, {-1, 0}};
    for (int i = 0; i < 3; ++i) {
        pts[i].position[0] = xs[i];
        pts[i].position[1] = ys[i];
        pts[i].direction[0] = dirs[i][0];
        pts[i].direction[1] = dirs[i][1];
    }
    int32_t route = -1;
    cr_assert_eq(shoal_world_add_route(w, pts, 3, &route), SHOAL_OK, "%s", shoal_world_last_error(w));

    /* Ground vehicles: terrain and a path. */
    static float heights[21 * 21];
    for (int j = 0; j < 21; ++j)
        for (int i = 0; i < 21; ++i) heights[j * 21 + i] = 0.05f * (float)i + 0.5f * sinf(0.3f * (float)j);
    shoal_terrain_t t = {.nx = 21, .ny = 21, .origin = {-100.0f, -100.0f}, .cell = 10.0f, .heights = heights};
    cr_assert_eq(shoal_world_set_terrain(w, &t), SHOAL_OK, "%s", shoal_world_last_error(w));
    const float path[] = {-60, 60, 0, 0, 60, 0, 40, 70, 0, 60, 90, 0};
    int32_t path_id = -1;
    cr_assert_eq(shoal_world_add_path(w, path, 4, 2.0f, &path_id), SHOAL_OK, "%s", shoal_world_last_error(w));

    for (int i = 0; i < 60; ++i) {
        shoal_agent_def_t d = flock_def(dims, i);
        add(m, &d);
    }
    for (int i = 0; i < 6; ++i) { /* pursuers of agent 0 and followers of agent 1 */
        shoal_agent_def_t d = flock_def(dims, 100 + i);
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 0.0f;
        if (i % 2) {
            d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
            d.pursuit.target = m->ids[0];
        } else {
            d.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
            d.follow.leader = m->ids[1];
        }
        add(m, &d);
    }
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = -10.0f * (float)i;
        d.position[1] = -40.0f;
        d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
        d.dseek.route = route;
        add(m, &d);
    }
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = -60.0f + 8.0f * (float)i;
        d.position[1] = 58.0f;
        d.ground.enabled = 1;
        d.ground.follow.path = i < 2 ? path_id : -1;
        shoal_agent_t id = add(m, &d);
        if (i == 2) cr_assert_eq(shoal_agent_set_drive(w, id, 0.6f, 0.2f), SHOAL_OK);
    }
    for (int i = 0; i < 4; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = 50.0f + 5.0f * (float)i;
        d.position[1] = -50.0f;
        d.heading = 1.0f * (float)i;
        d.planner.enabled = 1;
        d.planner.max_expansions = 40;
        d.planner.goal_point[0] = -30.0f;
        d.planner.goal_point[1] = 20.0f * (float)i;
        if (dims == 3) d.planner.goal_point[2] = 5.0f;
        if (i == 3) {
            d.planner.goal = SHOAL_PLAN_GOAL_PURSUE;
            d.planner.goal_agent = m->ids[2];
        }
        add(m, &d);
    }
    /* Holes in the slot table, and slots reused with new generations. */
    for (int i = 5; i < 40; i += 5) {
        cr_assert_eq(shoal_agent_remove(w, m->ids[i]), SHOAL_OK);
        m->live[i] = 0;
    }
    for (int i = 0; i < 4; ++i) {
        shoal_agent_def_t d = flock_def(dims, 200 + i);
        add(m, &d);
    }
    cr_assert_eq(shoal_world_set_system_enabled(w, "follow", 0), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_set_system_enabled(w, "follow", 1), SHOAL_OK);
}

static void* save_memory(const shoal_world_t* w, size_t* size)
{
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, size), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    void* buf = malloc(*size);
    cr_assert_not_null(buf);
    size_t written = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, *size, &written), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    cr_assert_eq(written, *size);
    return buf;
}

static shoal_world_t* load_memory(const void* buf, size_t size, int threads)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, &def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_not_null(w);
    return w;
}

/* The handle in `copy` of the agent that `id` names in the world `copy`
 * was saved from. While that world lives, the copy has another handle tag
 * (worlds refuse each other's handles); slot and generation are the same. */
static shoal_agent_t in_copy(const shoal_world_t* copy, shoal_agent_t id)
{
    shoal_agent_t any;
    cr_assert_eq(shoal_world_row_handles(copy, 0, 1, &any), SHOAL_OK);
    id.world0 = any.world0;
    return id;
}

/* Save after n steps, go on m steps; load, go on m steps: same hashes at
 * every step, the same agents behind the same handles. */
static void check_continuation(int dims, int save_threads, int load_threads)
{
    mixed_t m;
    build_mixed(&m, dims, save_threads);
    step_n(m.w, 25, DT);
    size_t size = 0;
    void* buf = save_memory(m.w, &size);
    uint64_t at_save = shoal_world_state_hash(m.w);
    shoal_world_t* copy = load_memory(buf, size, load_threads);
    cr_assert_eq(shoal_world_state_hash(copy), at_save, "the loaded world hashes as the saved one");
    cr_assert_eq(shoal_world_step_count(copy), shoal_world_step_count(m.w));
    cr_assert_eq(shoal_world_time(copy), shoal_world_time(m.w));
    cr_assert_eq(shoal_world_agent_count(copy), shoal_world_agent_count(m.w));
    cr_assert_eq(shoal_world_thread_count(copy), load_threads);
    for (int i = 0; i < m.count; ++i) {
        cr_assert_not(shoal_agent_is_valid(copy, m.ids[i]), "the copy refuses handle %d of the original", i);
        cr_assert_eq(shoal_agent_is_valid(copy, in_copy(copy, m.ids[i])), m.live[i], "handle %d", i);
        if (!m.live[i]) continue;
        shoal_agent_state_t a, b;
        cr_assert_eq(shoal_agent_get_state(m.w, m.ids[i], &a), SHOAL_OK);
        cr_assert_eq(shoal_agent_get_state(copy, in_copy(copy, m.ids[i]), &b), SHOAL_OK, "%s",
                     shoal_world_last_error(copy));
        cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "agent %d's state", i);
    }
    for (int s = 0; s < 40; ++s) {
        cr_assert_eq(shoal_world_step(m.w, DT), SHOAL_OK, "%s", shoal_world_last_error(m.w));
        cr_assert_eq(shoal_world_step(copy, DT), SHOAL_OK, "%s", shoal_world_last_error(copy));
        cr_assert_eq(shoal_world_state_hash(copy), shoal_world_state_hash(m.w), "step %d after the load", s);
    }
    /* Agents added after the load get the handles the original gives. */
    shoal_agent_def_t d = flock_def(dims, 300);
    shoal_agent_t a, b;
    cr_assert_eq(shoal_agent_add(m.w, &d, &a), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(copy, &d, &b), SHOAL_OK);
    cr_assert(shoal_agent_equal(in_copy(copy, a), b), "the free list and generations came through");
    step_n(m.w, 3, DT);
    step_n(copy, 3, DT);
    cr_assert_eq(shoal_world_state_hash(copy), shoal_world_state_hash(m.w));
    free(buf);
    shoal_world_destroy(copy);
    shoal_world_destroy(m.w);
}

Test(snapshot, continuation_2d_one_thread) { check_continuation(2, 1, 1); }
Test(snapshot, continuation_2d_two_threads) { check_continuation(2, 2, 2); }
Test(snapshot, continuation_2d_across_thread_counts) { check_continuation(2, 2, 1); }
Test(snapshot, continuation_3d_one_thread) { check_continuation(3, 1, 1); }
Test(snapshot, continuation_3d_two_threads) { check_continuation(3, 2, 2); }
Test(snapshot, continuation_3d_across_thread_counts) { check_continuation(3, 1, 2); }

Test(snapshot, the_uninterrupted_run_and_the_resumed_one_agree)
{
    /* The same run twice from scratch, one of them saved and resumed in the
     * middle: the final hashes agree (the saved world itself is not used
     * after the save). */
    mixed_t a, b;
    build_mixed(&a, 2, 1);
    build_mixed(&b, 2, 1);
    step_n(a.w, 60, DT);
    step_n(b.w, 30, DT);
    size_t size = 0;
    void* buf = save_memory(b.w, &size);
    shoal_world_destroy(b.w);
    shoal_world_t* resumed = load_memory(buf, size, 2);
    step_n(resumed, 30, DT);
    cr_assert_eq(shoal_world_state_hash(resumed), shoal_world_state_hash(a.w));
    free(buf);
    shoal_world_destroy(resumed);
    shoal_world_destroy(a.w);
}

Test(snapshot, saving_is_repeatable_and_a_loaded_world_saves_the_same_bytes)
{
    mixed_t m;
    build_mixed(&m, 3, 1);
    step_n(m.w, 10, DT);
    uint64_t hash = shoal_world_state_hash(m.w);
    size_t n1 = 0, n2 = 0, n3 = 0;
    void* one = save_memory(m.w, &n1);
    void* two = save_memory(m.w, &n2);
    cr_assert_eq(shoal_world_state_hash(m.w), hash, "saving changes nothing");
    cr_assert_eq(n1, n2);
    cr_assert_eq(memcmp(one, two, n1), 0, "two saves, the same bytes");
    /* A buffer too small: CAPACITY, the size, nothing written. */
    unsigned char small[64];
    memset(small, 0xab, sizeof small);
    size_t need = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(m.w, small, sizeof small, &need), SHOAL_ERR_CAPACITY);
    cr_assert_eq(need, n1);
    for (size_t i = 0; i < sizeof small; ++i) cr_assert_eq(small[i], 0xab);
    /* Loaded once the saved world is gone, the copy keeps its handle tag
     * (while it lives, a copy gets another one, which is saved too). */
    shoal_world_destroy(m.w);
    shoal_world_t* copy = load_memory(one, n1, 1);
    void* three = save_memory(copy, &n3);
    cr_assert_eq(n3, n1);
    cr_assert_eq(memcmp(one, three, n1), 0, "a loaded world saves the bytes it came from");
    free(one);
    free(two);
    free(three);
    shoal_world_destroy(copy);
}

static char* temp_dir(void)
{
    char templ[] = "/tmp/shoal_snapshot_XXXXXX";
    char* dir = mkdtemp(templ);
    cr_assert_not_null(dir);
    return strdup(dir);
}

static void* read_all(const char* path, size_t* size)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void* buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* Entries of `dir` other than . and .. */
static int dir_entries(const char* dir)
{
    DIR* d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

Test(snapshot, file_round_trip)
{
    mixed_t m;
    build_mixed(&m, 2, 2);
    step_n(m.w, 12, DT);
    char* dir = temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/world.snap", dir);
    cr_assert_eq(shoal_world_save_snapshot(m.w, path), SHOAL_OK, "%s", shoal_world_last_error(m.w));
    cr_assert_eq(dir_entries(dir), 1, "no temporary file is left");
    size_t fsize = 0, msize = 0;
    void* fbytes = read_all(path, &fsize);
    void* mbytes = save_memory(m.w, &msize);
    cr_assert_eq(fsize, msize);
    cr_assert_eq(memcmp(fbytes, mbytes, fsize), 0, "the file holds the memory snapshot");
    shoal_world_t* copy = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot(path, NULL, &copy, &err), SHOAL_OK, "%s", err.message);
    step_n(m.w, 10, DT);
    step_n(copy, 10, DT);
    cr_assert_eq(shoal_world_state_hash(copy), shoal_world_state_hash(m.w));
    /* Missing files are I/O errors. */
    shoal_world_t* none = (shoal_world_t*)&err;
    snprintf(path, sizeof path, "%s/missing.snap", dir);
    cr_assert_eq(shoal_world_load_snapshot(path, NULL, &none, &err), SHOAL_ERR_IO);
    cr_assert_null(none);
    cr_assert(strstr(err.message, "missing.snap") != NULL, "%s", err.message);
    cr_assert_eq(shoal_world_load_snapshot(dir, NULL, &none, &err), SHOAL_ERR_IO, "a directory");
    cr_assert(strstr(err.message, "not a regular file") != NULL, "%s", err.message);
    snprintf(path, sizeof path, "%s/world.snap", dir);
    remove(path);
    rmdir(dir);
    free(dir);
    free(fbytes);
    free(mbytes);
    shoal_world_destroy(copy);
    shoal_world_destroy(m.w);
}

/* A small world for the damage tests: every section non-empty, few agents,
 * so that thousands of loads stay fast. */
static shoal_world_t* small_world(void)
{
    mixed_t m;
    build_mixed(&m, 2, 1);
    for (int i = 0; i < m.count; i += 1)
        if (m.live[i] && i % 8 != 0 && i < 60) shoal_agent_remove(m.w, m.ids[i]);
    step_n(m.w, 6, DT);
    return m.w;
}

static void expect_rejected(const void* buf, size_t size, const char* what)
{
    shoal_world_t* w = (shoal_world_t*)(uintptr_t)1;
    shoal_error_t err;
    shoal_status_t st = shoal_world_load_snapshot_memory(buf, size, NULL, &w, &err);
    cr_assert_eq(st, SHOAL_ERR_PARSE, "%s: status %d (%s)", what, (int)st, err.message);
    cr_assert_null(w, "%s: no world", what);
    cr_assert_eq(err.status, st);
    cr_assert(strlen(err.message) > 10, "%s: a message (%s)", what, err.message);
}

Test(snapshot, every_truncation_is_rejected)
{
    shoal_world_t* w = small_world();
    size_t size = 0;
    unsigned char* buf = save_memory(w, &size);
    for (size_t n = 0; n < size; ++n) {
        /* A copy of exactly n bytes, so that ASan sees any read past it. */
        unsigned char* cut = malloc(n ? n : 1);
        memcpy(cut, buf, n);
        expect_rejected(cut, n, "truncated");
        free(cut);
    }
    shoal_error_t err;
    shoal_world_t* out = NULL;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size - 1, NULL, &out, &err), SHOAL_ERR_PARSE);
    cr_assert(strstr(err.message, "truncated") != NULL, "%s", err.message);
    unsigned char* longer = calloc(size + 4, 1);
    memcpy(longer, buf, size);
    cr_assert_eq(shoal_world_load_snapshot_memory(longer, size + 4, NULL, &out, &err), SHOAL_ERR_PARSE);
    cr_assert(strstr(err.message, "trailing") != NULL, "%s", err.message);
    free(longer);
    free(buf);
    shoal_world_destroy(w);
}

Test(snapshot, single_byte_corruptions_are_rejected)
{
    shoal_world_t* w = small_world();
    size_t size = 0;
    unsigned char* buf = save_memory(w, &size);
    uint64_t rng = 99;
    /* Every byte of the header and the first sections, then a dense sample. */
    for (size_t i = 0; i < size; i += i < 4096 ? 1 : 7) {
        unsigned char keep = buf[i];
        buf[i] = (unsigned char)(keep ^ (1u + (unsigned)(rng_splitmix64(&rng) % 255u)));
        expect_rejected(buf, size, "corrupted");
        buf[i] = keep;
    }
    shoal_world_destroy(load_memory(buf, size, 1)); /* restored: loads again */
    free(buf);
    shoal_world_destroy(w);
}

/* Recompute the checksum after an edit, as a forger would. */
static void reseal(unsigned char* buf, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size - 8; ++i) {
        h ^= buf[i];
        h *= 0x100000001b3ull;
    }
    for (int k = 0; k < 8; ++k) buf[size - 8 + (size_t)k] = (unsigned char)(h >> (8 * k));
}

Test(snapshot, forged_snapshots_load_whole_or_not_at_all)
{
    /* With the checksum forged, a changed byte must give an error or a
     * world that steps: never a crash (ASan and UBSan watch this run), a
     * leak, or a half-built world. */
    shoal_world_t* w = small_world();
    size_t size = 0;
    unsigned char* buf = save_memory(w, &size);
    unsigned char* work = malloc(size);
    uint64_t rng = 5;
    int rejected = 0, loaded = 0;
    /* One thread: no hwloc probe per load. */
    shoal_world_def_t serial = shoal_world_default_def();
    serial.thread_count = 1;
    for (int trial = 0; trial < 2000; ++trial) {
        memcpy(work, buf, size);
        size_t at = trial < 1000 ? (size_t)trial % (size < 1000 ? size - 8 : 1000)
                                 : (size_t)(rng_splitmix64(&rng) % (size - 8));
        uint64_t r = rng_splitmix64(&rng);
        switch (r % 4) {
        case 0: work[at] ^= (unsigned char)(1u << ((r >> 8) % 8)); break;
        case 1: work[at] = 0xff; break;
        case 2: work[at] = 0x00; break;
        default: work[at] = (unsigned char)(r >> 16); break;
        }
        reseal(work, size);
        shoal_world_t* out = NULL;
        shoal_error_t err;
        shoal_status_t st = shoal_world_load_snapshot_memory(work, size, &serial, &out, &err);
        if (st != SHOAL_OK) {
            cr_assert_null(out);
            cr_assert(st == SHOAL_ERR_PARSE || st == SHOAL_ERR_OUT_OF_MEMORY, "byte %zu: %d %s", at, (int)st,
                      err.message);
            cr_assert(err.message[0] != '\0');
            rejected++;
            continue;
        }
        loaded++;
        for (int s = 0; s < 2; ++s) shoal_world_step(out, DT);
        shoal_world_destroy(out);
    }
    cr_assert_gt(rejected, 100, "forged counts and indexes are caught (%d)", rejected);
    cr_assert_gt(loaded, 10, "a changed float is still a world (%d)", loaded);
    free(work);
    free(buf);
    shoal_world_destroy(w);
}

Test(snapshot, an_interrupted_save_leaves_the_previous_file)
{
    mixed_t m;
    build_mixed(&m, 3, 1);
    char* dir = temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/world.snap", dir);
    cr_assert_eq(shoal_world_save_snapshot(m.w, path), SHOAL_OK, "%s", shoal_world_last_error(m.w));
    size_t before_size = 0;
    void* before = read_all(path, &before_size);
    step_n(m.w, 3, DT);
    for (int i = 0; i < 40; ++i) {
        shoal_agent_def_t d = flock_def(3, 400 + i);
        add(&m, &d);
    }
    /* The file size limit makes the write fail half way, as a full disk
     * would (this test runs in a process of its own). */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {(rlim_t)(before_size / 2), (rlim_t)RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    shoal_status_t st = shoal_world_save_snapshot(m.w, path);
    lim.rlim_cur = RLIM_INFINITY;
    setrlimit(RLIMIT_FSIZE, &lim);
    cr_assert_eq(st, SHOAL_ERR_IO, "%s", shoal_world_last_error(m.w));
    cr_assert(strstr(shoal_world_last_error(m.w), "world.snap") != NULL, "%s", shoal_world_last_error(m.w));
    cr_assert_eq(dir_entries(dir), 1, "the temporary file was removed");
    size_t after_size = 0;
    void* after = read_all(path, &after_size);
    cr_assert_eq(after_size, before_size);
    cr_assert_eq(memcmp(before, after, before_size), 0, "the previous snapshot is intact");
    shoal_world_t* old = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot(path, NULL, &old, &err), SHOAL_OK, "%s", err.message);
    shoal_world_destroy(old);

    /* A directory that does not exist, and a destination that is a
     * directory (the rename fails): I/O errors, nothing left behind. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/w.snap", dir);
    cr_assert_eq(shoal_world_save_snapshot(m.w, bad), SHOAL_ERR_IO);
    snprintf(bad, sizeof bad, "%s/sub", dir);
    cr_assert_eq(mkdir(bad, 0700), 0);
    cr_assert_eq(shoal_world_save_snapshot(m.w, bad), SHOAL_ERR_IO);
    cr_assert_eq(dir_entries(dir), 2, "the snapshot and the directory, no temporary file");
    rmdir(bad);
    remove(path);
    rmdir(dir);
    free(dir);
    free(before);
    free(after);
    shoal_world_destroy(m.w);
}

static shoal_status_t saving_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    size_t size = 0;
    *(shoal_status_t*)ctx = shoal_world_save_snapshot_memory(w, NULL, 0, &size);
    return SHOAL_OK;
}

static shoal_status_t nudge_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    shoal_agent_t id = *(const shoal_agent_t*)ctx;
    const float target[3] = {(float)shoal_world_step_count(w), 3.0f, 0.0f};
    return shoal_agent_set_target(w, id, target);
}

Test(snapshot, user_systems_are_added_again_by_the_caller)
{
    mixed_t m;
    build_mixed(&m, 2, 1);
    shoal_status_t inside = SHOAL_OK;
    cr_assert_eq(shoal_world_add_system(m.w, "saver", SHOAL_STAGE_OBSERVE, saving_system, &inside), SHOAL_OK);
    cr_assert_eq(shoal_world_add_system(m.w, "nudge", SHOAL_STAGE_DECIDE, nudge_system, &m.ids[3]), SHOAL_OK);
    step_n(m.w, 5, DT);
    cr_assert_eq(inside, SHOAL_ERR_BUSY, "no saving from inside a step");
    size_t size = 0;
    void* buf = save_memory(m.w, &size);
    shoal_world_t* copy = load_memory(buf, size, 1);
    cr_assert_eq(shoal_world_system_count(copy), shoal_world_system_count(m.w) - 2,
                 "user systems are not restored");
    cr_assert_eq(shoal_world_add_system(copy, "saver", SHOAL_STAGE_OBSERVE, saving_system, &inside),
                 SHOAL_OK);
    shoal_agent_t nudged = in_copy(copy, m.ids[3]);
    cr_assert_eq(shoal_world_add_system(copy, "nudge", SHOAL_STAGE_DECIDE, nudge_system, &nudged), SHOAL_OK);
    step_n(m.w, 10, DT);
    step_n(copy, 10, DT);
    cr_assert_eq(shoal_world_state_hash(copy), shoal_world_state_hash(m.w));
    free(buf);
    shoal_world_destroy(copy);
    shoal_world_destroy(m.w);
}

Test(snapshot, disabled_systems_stay_disabled)
{
    mixed_t m;
    build_mixed(&m, 2, 1);
    cr_assert_eq(shoal_world_set_system_enabled(m.w, "wander", 0), SHOAL_OK);
    size_t size = 0;
    void* buf = save_memory(m.w, &size);
    shoal_world_t* copy = load_memory(buf, size, 1);
    for (int i = 0; i < shoal_world_system_count(copy); ++i) {
        shoal_system_stats_t a, b;
        shoal_world_system_stats(m.w, i, &a);
        shoal_world_system_stats(copy, i, &b);
        cr_assert_str_eq(a.name, b.name);
        cr_assert_eq(a.enabled, b.enabled, "%s", a.name);
    }
    step_n(m.w, 8, DT);
    step_n(copy, 8, DT);
    cr_assert_eq(shoal_world_state_hash(copy), shoal_world_state_hash(m.w));
    free(buf);
    shoal_world_destroy(copy);
    shoal_world_destroy(m.w);
}

/* A version-3 snapshot rewritten as an older version: its sections copied
 * but those the older version lacks (the crowd component, COMP id 8, and
 * WALL before version 3; USER before version 2), with that version's header, size and
 * checksum. Returns the new size; out has room for `size` bytes. References
 * to agents are copied as they are (global ids, which versions before 13
 * held as handles): the worlds here have none but null ones, the same bits
 * in both (test_agent_refs.c rewrites them for version 12). */
static size_t older_version(const unsigned char* in, size_t size, uint32_t version, unsigned char* out)
{
    memcpy(out, in, 32);
    size_t at = 32, to = 32;
    uint32_t sections = 0;
    while (at < size - 8) {
        uint32_t tag = (uint32_t)in[at] | (uint32_t)in[at + 1] << 8 | (uint32_t)in[at + 2] << 16 |
                       (uint32_t)in[at + 3] << 24;
        uint64_t bytes = 0;
        for (int k = 0; k < 8; ++k) bytes |= (uint64_t)in[at + 8 + k] << (8 * k);
        size_t whole = 16 + (size_t)bytes;
        int drop = (memcmp(in + at, "USER", 4) == 0 && version < 2) ||
                   (memcmp(in + at, "COMP", 4) == 0 && in[at + 16] == 8 && version < 3) ||
                   (memcmp(in + at, "COMP", 4) == 0 && in[at + 16] == 9 && version < 4) ||
                   (memcmp(in + at, "WALL", 4) == 0 && version < 3) ||
                   (memcmp(in + at, "COMP", 4) == 0 && in[at + 16] == 10 && version < 8) ||
                   (memcmp(in + at, "NAVI", 4) == 0 && version < 8) ||
                   (memcmp(in + at, "COMP", 4) == 0 && in[at + 16] == 11 && version < 9) ||
                   (memcmp(in + at, "NMSH", 4) == 0 && version < 9);
        (void)tag;
        if (!drop && memcmp(in + at, "SYST", 4) == 0 && version < 10) {
            /* the systems of version 3 (orca, crowd_move, contacts), 4
             * (contacts_prepare), 6 (dseek_track) and 8 (nav_fields,
             * navigate, nav_exits), 9 (navmesh_paths, navmesh_steer) and 10
             * (measure_start, measure) out of the list */
            size_t rec = 32 + 12, start = to;
            uint32_t count = (uint32_t)in[at + 16] | (uint32_t)in[at + 17] << 8, kept = 0;
            memcpy(out + to, in + at, 20);
            to += 20;
            for (uint32_t i = 0; i < count; ++i) {
                const unsigned char* r = in + at + 20 + i * rec;
                const char* name = (const char*)r;
                if (!strcmp(name, "measure_start") || !strcmp(name, "measure") ||
                    (version < 9 && (!strcmp(name, "navmesh_paths") || !strcmp(name, "navmesh_steer"))) ||
                    (version < 8 && (!strcmp(name, "nav_fields") || !strcmp(name, "navigate") ||
                                     !strcmp(name, "nav_exits") || !strcmp(name, "nav_journeys") ||
                                     !strcmp(name, "nav_sources"))) ||
                    (version < 6 && !strcmp(name, "dseek_track")) ||
                    (version < 4 && !strcmp(name, "contacts_prepare")) ||
                    (version < 3 &&
                     (!strcmp(name, "orca") || !strcmp(name, "crowd_move") || !strcmp(name, "contacts"))))
                    continue;
                memcpy(out + to, r, rec);
                to += rec;
                kept++;
            }
            out[start + 16] = (unsigned char)kept;
            out[start + 17] = (unsigned char)(kept >> 8);
            uint64_t payload = to - start - 16;
            for (int k = 0; k < 8; ++k) out[start + 8 + k] = (unsigned char)(payload >> (8 * k));
            sections++;
        } else if (!drop && memcmp(in + at, "WALL", 4) == 0 && version < 7) {
            /* each slot without its generation (version 7); the points
             * after them as they are */
            uint32_t slots = (uint32_t)in[at + 16] | (uint32_t)in[at + 17] << 8 |
                             (uint32_t)in[at + 18] << 16 | (uint32_t)in[at + 19] << 24;
            size_t start = to;
            memcpy(out + to, in + at, 24);
            to += 24;
            for (uint32_t i = 0; i < slots; ++i) {
                memcpy(out + to, in + at + 24 + 16 * (size_t)i, 12);
                to += 12;
            }
            size_t rest = whole - 24 - 16 * (size_t)slots;
            memcpy(out + to, in + at + 24 + 16 * (size_t)slots, rest);
            to += rest;
            uint64_t payload = to - start - 16;
            for (int k = 0; k < 8; ++k) out[start + 8 + k] = (unsigned char)(payload >> (8 * k));
            sections++;
        } else if (!drop && memcmp(in + at, "COMP", 4) == 0 &&
                   ((in[at + 16] == 8 && version < 4) || (in[at + 16] == 7 && version < 5) ||
                    (in[at + 16] == 5 && version < 6) || (in[at + 16] == 10 && version < 10))) {
            /* the crowd component without its last column (side_preference,
             * version 4), the planner component without its last column
             * (time_budget_ms, version 5), the directed-seek component
             * without its last column (the final arc, version 6), the nav
             * component without its last column (the start delay, version
             * 10) */
            uint32_t rows = (uint32_t)in[at + 20] | (uint32_t)in[at + 21] << 8 | (uint32_t)in[at + 22] << 16 |
                            (uint32_t)in[at + 23] << 24;
            size_t keep = whole - (size_t)rows * 4;
            memmove(out + to, in + at, keep);
            uint32_t columns = ((uint32_t)in[at + 24] | (uint32_t)in[at + 25] << 8) - 1;
            out[to + 24] = (unsigned char)columns;
            out[to + 25] = (unsigned char)(columns >> 8);
            uint64_t payload = keep - 16;
            for (int k = 0; k < 8; ++k) out[to + 8 + k] = (unsigned char)(payload >> (8 * k));
            to += keep;
            sections++;
        } else if (!drop && memcmp(in + at, "COMP", 4) == 0 && in[at + 16] == 11 && version < 12) {
            /* the navmesh component without its last 33 columns, a ground
             * vehicle's path (version 12) */
            uint32_t rows = (uint32_t)in[at + 20] | (uint32_t)in[at + 21] << 8 | (uint32_t)in[at + 22] << 16 |
                            (uint32_t)in[at + 23] << 24;
            size_t keep = whole - (size_t)rows * 4 * 33;
            memmove(out + to, in + at, keep);
            uint32_t columns = ((uint32_t)in[at + 24] | (uint32_t)in[at + 25] << 8) - 33;
            out[to + 24] = (unsigned char)columns;
            out[to + 25] = (unsigned char)(columns >> 8);
            uint64_t payload = keep - 16;
            for (int k = 0; k < 8; ++k) out[to + 8 + k] = (unsigned char)(payload >> (8 * k));
            to += keep;
            sections++;
        } else if (!drop && (memcmp(in + at, "WRLD", 4) == 0 || memcmp(in + at, "AGNT", 4) == 0) &&
                   version < 11) {
            /* the world without its last word, the next global id, and the
             * agent table without its last two columns, the ids (version
             * 11) */
            int agents = memcmp(in + at, "AGNT", 4) == 0;
            uint32_t rows = (uint32_t)in[at + 16] | (uint32_t)in[at + 17] << 8 | (uint32_t)in[at + 18] << 16 |
                            (uint32_t)in[at + 19] << 24;
            size_t keep = whole - (agents ? (size_t)rows * 8 : 8);
            memmove(out + to, in + at, keep);
            if (agents) {
                uint32_t columns = ((uint32_t)in[at + 20] | (uint32_t)in[at + 21] << 8) - 2;
                out[to + 20] = (unsigned char)columns;
                out[to + 21] = (unsigned char)(columns >> 8);
            }
            uint64_t payload = keep - 16;
            for (int k = 0; k < 8; ++k) out[to + 8 + k] = (unsigned char)(payload >> (8 * k));
            to += keep;
            sections++;
        } else if (!drop && memcmp(in + at, "NAVI", 4) == 0 && version < 10) {
            /* without its last word, the count of speed zones (version 10;
             * the worlds here have none) */
            size_t keep = whole - 4;
            memmove(out + to, in + at, keep);
            uint64_t payload = keep - 16;
            for (int k = 0; k < 8; ++k) out[to + 8 + k] = (unsigned char)(payload >> (8 * k));
            to += keep;
            sections++;
        } else if (!drop) {
            memmove(out + to, in + at, whole);
            to += whole;
            sections++;
        }
        at += whole;
    }
    to += 8;
    out[8] = (unsigned char)version;
    for (int k = 0; k < 4; ++k) out[24 + k] = (unsigned char)(sections >> (8 * k));
    for (int k = 0; k < 8; ++k) out[16 + k] = (unsigned char)((uint64_t)to >> (8 * k));
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < to - 8; ++k) h = (h ^ out[k]) * 0x100000001b3ull;
    for (int k = 0; k < 8; ++k) out[to - 8 + k] = (unsigned char)(h >> (8 * k));
    return to;
}

Test(snapshot, bad_arguments)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot(NULL, "x"), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_save_snapshot(w, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, NULL, &err), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_world_t* out = NULL;
    cr_assert_eq(shoal_world_load_snapshot_memory(NULL, 5, NULL, &out, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_load_snapshot(NULL, NULL, &out, &err), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_world_def_t def;
    memset(&def, 0, sizeof def); /* not from shoal_world_default_def() */
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, &def, &out, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_null(out);
    cr_assert(strstr(err.message, "default_def") != NULL, "%s", err.message);
    /* An empty world round-trips too. */
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &out, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_state_hash(out), shoal_world_state_hash(w));
    /* Another version is refused by number. */
    unsigned char* other = malloc(size);
    memcpy(other, buf, size);
    other[8] = (unsigned char)(SHOAL_SNAPSHOT_VERSION + 1);
    shoal_world_t* none = NULL;
    cr_assert_eq(shoal_world_load_snapshot_memory(other, size, NULL, &none, &err), SHOAL_ERR_PARSE);
    char want[32];
    snprintf(want, sizeof want, "version %d", SHOAL_SNAPSHOT_VERSION + 1);
    cr_assert(strstr(err.message, want) != NULL, "%s", err.message);
    /* Files of the older versions still load: version 2 had no crowd
     * component (COMP section 8), version 1 no USER section either. */
    for (uint32_t version = 1; version < SHOAL_SNAPSHOT_VERSION; ++version) {
        size_t n = older_version(buf, size, version, other);
        cr_assert_eq(shoal_world_load_snapshot_memory(other, n, NULL, &none, &err), SHOAL_OK,
                     "version %u: %s", version, err.message);
        cr_assert_eq(shoal_world_state_hash(none), shoal_world_state_hash(w));
        shoal_world_destroy(none);
    }
    free(other);
    free(buf);
    shoal_world_destroy(out);
    shoal_world_destroy(w);
}

/* A version-3 file of crowd agents (no side_preference column) loads with
 * side_preference 0: the walk it had. */
Test(snapshot, version_3_crowd_loads_without_side_preference)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 5; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        cr_assert_eq(shoal_crowd_preset("rvo2", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
        d.position[0] = 4.0f * (float)i;
        d.target[1] = 30.0f;
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    cr_assert_eq(shoal_world_step(w, 0.25f), SHOAL_OK);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    unsigned char* buf = malloc(size);
    unsigned char* old = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    size_t n = older_version(buf, size, 3, old);
    cr_assert_lt(n, size, "the version-3 file lacks a column");
    shoal_world_t* back = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(old, n, NULL, &back, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_world_state_hash(back), shoal_world_state_hash(w));
    shoal_agent_t id;
    shoal_agent_batch_t b = {.ids = &id};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(back, &b, 1, &got), SHOAL_OK);
    shoal_agent_def_t d;
    cr_assert_eq(shoal_agent_get_def(back, id, &d), SHOAL_OK);
    cr_expect_eq(d.crowd.enabled, 1);
    cr_expect_eq(d.crowd.side_preference, 0.0f);
    cr_expect_eq(d.crowd.neighbor_distance, 15.0f);
    /* the same bytes called version 4 (with its section count): the crowd
     * component's column count is refused */
    old[8] = 4;
    old[24] = (unsigned char)(old[24] + 1);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < n - 8; ++k) h = (h ^ old[k]) * 0x100000001b3ull;
    for (int k = 0; k < 8; ++k) old[n - 8 + k] = (unsigned char)(h >> (8 * k));
    shoal_world_t* none = NULL;
    cr_expect_eq(shoal_world_load_snapshot_memory(old, n, NULL, &none, &err), SHOAL_ERR_PARSE);
    cr_expect(strstr(err.message, "columns, version 4 has") != NULL, "%s", err.message);
    free(buf);
    free(old);
    shoal_world_destroy(back);
    shoal_world_destroy(w);
}

/* A version-4 file of planner agents (no time_budget_ms column) loads with
 * no time budget; one with a time budget out of range is refused. */
/* A version-9 file of navigating agents (no start delay column, no zones
 * at the end of NAVI) loads with no delay and no zone: the world it was. */
Test(snapshot, version_9_nav_loads_without_start_delays_or_zones)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_nav_goal_t g;
    memset(&g, 0, sizeof g);
    g.kind = SHOAL_NAV_POINT;
    g.count = 1;
    g.points[0][0] = 10.0f;
    int32_t goal = -1;
    cr_assert_eq(shoal_world_add_nav_goal(w, &g, &goal), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int i = 0; i < 5; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
        d.position[1] = 1.0f * (float)i;
        d.weights[SHOAL_BEHAVIOR_NAVIGATE] = 1.0f;
        d.nav.goal = goal;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    unsigned char* buf = malloc(size);
    unsigned char* old = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    size_t n = older_version(buf, size, 9, old);
    cr_assert_eq(
        n, size - 4 - 5 * 4 - 2 * (32 + 12) - 8 - 2 * 5 * 4,
        "the version-9 file lacks the zone count, a column of 5 rows, the two measurement systems, the next "
        "global id and the id columns");
    shoal_world_t* back = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(old, n, NULL, &back, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_world_state_hash(back), shoal_world_state_hash(w));
    cr_expect_eq(shoal_world_nav_zone_count(back), 0);
    shoal_agent_t id;
    shoal_agent_batch_t b = {.ids = &id};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(back, &b, 1, &got), SHOAL_OK);
    shoal_nav_agent_t st;
    cr_assert_eq(shoal_agent_get_nav_state(back, id, &st), SHOAL_OK);
    cr_expect_eq(st.delay, 0.0f);
    cr_assert_eq(shoal_world_step(back, 0.05f), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    cr_expect_eq(shoal_world_state_hash(back), shoal_world_state_hash(w));
    shoal_world_destroy(back);
    free(buf);
    free(old);
    shoal_world_destroy(w);
}

Test(snapshot, version_4_planner_loads_without_time_budget)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.planner.enabled = 1;
        d.planner.max_expansions = 30;
        d.planner.time_budget_ms = i == 0 ? 5.0f : 0.0f;
        d.position[1] = 6.0f * (float)i;
        d.planner.goal_point[0] = 50.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    cr_assert_eq(shoal_world_step(w, 1.0f / 60.0f), SHOAL_OK);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    unsigned char* buf = malloc(size);
    unsigned char* old = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    /* This version's file keeps the budget. */
    shoal_world_t* back = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &back, &err), SHOAL_OK, "%s", err.message);
    shoal_agent_t ids[3];
    shoal_agent_batch_t b = {.ids = ids};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(back, &b, 3, &got), SHOAL_OK);
    cr_assert_eq(got, 3);
    shoal_agent_def_t d;
    float budgets = 0.0f;
    for (int i = 0; i < 3; ++i) {
        cr_assert_eq(shoal_agent_get_def(back, ids[i], &d), SHOAL_OK);
        budgets += d.planner.time_budget_ms;
    }
    cr_expect_eq(budgets, 5.0f);
    shoal_world_destroy(back);
    /* Version 4: no budget column. */
    size_t v7 = older_version(buf, size, 7, old); /* no navigation (version 8) */
    size_t n = older_version(buf, size, 4, old);
    cr_assert_eq(n, v7 - 3 * 4 - (32 + 12),
                 "the version-4 file lacks one column of 3 rows and one system (dseek_track, version 6)");
    cr_assert_eq(shoal_world_load_snapshot_memory(old, n, NULL, &back, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_world_state_hash(back), shoal_world_state_hash(w), "the budget is not state");
    cr_assert_eq(shoal_world_read_agents(back, &b, 3, &got), SHOAL_OK);
    for (int i = 0; i < 3; ++i) {
        cr_assert_eq(shoal_agent_get_def(back, ids[i], &d), SHOAL_OK);
        cr_expect_eq(d.planner.time_budget_ms, 0.0f);
        cr_expect_eq(d.planner.max_expansions, 30);
    }
    cr_assert_eq(shoal_world_step(back, 1.0f / 60.0f), SHOAL_OK, "%s", shoal_world_last_error(back));
    shoal_world_destroy(back);
    /* A budget out of range in a file is refused: the last column of the
     * planner component's section is the budget (rows x f32, little endian). */
    size_t at = 32;
    size_t budget_at = 0;
    while (at < size - 8) {
        uint64_t bytes = 0;
        for (int k = 0; k < 8; ++k) bytes |= (uint64_t)buf[at + 8 + k] << (8 * k);
        if (memcmp(buf + at, "COMP", 4) == 0 && buf[at + 16] == 7)
            budget_at = at + 16 + (size_t)bytes - 3 * 4;
        at += 16 + (size_t)bytes;
    }
    cr_assert_neq(budget_at, 0);
    const float neg = -1.0f;
    memcpy(buf + budget_at, &neg, 4);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < size - 8; ++k) h = (h ^ buf[k]) * 0x100000001b3ull;
    for (int k = 0; k < 8; ++k) buf[size - 8 + k] = (unsigned char)(h >> (8 * k));
    shoal_world_t* none = NULL;
    cr_expect_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &none, &err), SHOAL_ERR_PARSE);
    cr_expect(strstr(err.message, "time budget -1 ms") != NULL, "%s", err.message);
    free(buf);
    free(old);
    shoal_world_destroy(w);
}

/* Allocation hooks that count what is outstanding, and can fail the n-th
 * allocation. */
typedef struct counting_alloc {
    int64_t bytes;
    int64_t calls;
    int64_t fail_at; /* 0: never */
} counting_alloc_t;

static void* count_alloc(size_t size, size_t align, void* ctx)
{
    counting_alloc_t* c = (counting_alloc_t*)ctx;
    if (c->fail_at && ++c->calls == c->fail_at) return NULL;
    void* p = aligned_alloc(align, (size + align - 1) / align * align);
    if (p) c->bytes += (int64_t)size;
    return p;
}

static void count_free(void* p, size_t size, void* ctx)
{
    ((counting_alloc_t*)ctx)->bytes -= (int64_t)size;
    free(p);
}

Test(snapshot, loads_use_the_given_allocator_and_give_back_everything)
{
    mixed_t m;
    build_mixed(&m, 3, 1);
    step_n(m.w, 4, DT);
    size_t size = 0;
    void* buf = save_memory(m.w, &size);
    counting_alloc_t c = {0, 0, 0};
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.alloc = count_alloc;
    def.free = count_free;
    def.alloc_user_ctx = &c;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, &def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_gt(c.bytes, 0, "the world's memory comes from the hooks");
    step_n(w, 2, DT);
    shoal_world_destroy(w);
    cr_assert_eq(c.bytes, 0, "all of it is given back");
    /* Every allocation of a load failing in turn: out of memory, nothing
     * left allocated. */
    int64_t total_calls = 0;
    {
        counting_alloc_t probe = {0, 0, INT64_MAX};
        def.alloc_user_ctx = &probe;
        cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, &def, &w, &err), SHOAL_OK);
        total_calls = probe.calls;
        shoal_world_destroy(w);
    }
    cr_assert_gt(total_calls, 10);
    for (int64_t k = 1; k <= total_calls; ++k) {
        counting_alloc_t f = {0, 0, k};
        def.alloc_user_ctx = &f;
        w = (shoal_world_t*)(uintptr_t)1;
        shoal_status_t st = shoal_world_load_snapshot_memory(buf, size, &def, &w, &err);
        cr_assert_eq(st, SHOAL_ERR_OUT_OF_MEMORY, "allocation %lld: %d %s", (long long)k, (int)st,
                     err.message);
        cr_assert_null(w);
        cr_assert_eq(f.bytes, 0, "allocation %lld failing leaks %lld bytes", (long long)k,
                     (long long)f.bytes);
    }
    free(buf);
    shoal_world_destroy(m.w);
}

/* A version-11 file of a car on a navigation mesh (no path columns) loads
 * with no path: the car plans again in its next step and still reaches its
 * goal beyond the wall. */
Test(snapshot, version_11_navmesh_car_loads_without_its_path_and_plans_again, .timeout = 60)
{
    if (!shoal_navmesh_available()) return; /* test_navmesh_ground.c checks the refusal */
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    static const float ell[] = {-30, 5, 5, 5, 5, -30};
    cr_assert_eq(shoal_world_add_wall(w, ell, 3, 0, NULL), SHOAL_OK);
    shoal_navmesh_params_t p = shoal_navmesh_params_default();
    const float bounds[4] = {-40, -40, 40, 40};
    memcpy(p.bounds, bounds, sizeof bounds);
    p.cell = 0.25f;
    p.agent_radius = 4.0f;
    p.off_path_distance = 3.0f;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = d.position[1] = -20.0f;
    d.ground.enabled = 1;
    d.weights[SHOAL_BEHAVIOR_NAVMESH] = 1.0f;
    d.navmesh.goal[0] = d.navmesh.goal[1] = 20.0f;
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int s = 0; s < 120; ++s) cr_assert_eq(shoal_world_step(w, 1.0f / 60.0f), SHOAL_OK);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    unsigned char* buf = malloc(size);
    unsigned char* old = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    size_t n = older_version(buf, size, 11, old);
    cr_assert_eq(n, size - 33 * 4, "one row of 33 columns fewer");
    shoal_world_t* v = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(old, n, NULL, &v, &err), SHOAL_OK, "%s", err.message);
    cr_assert_neq(shoal_world_state_hash(v), shoal_world_state_hash(w), "the path is not in the file");
    shoal_navmesh_stats_t st;
    cr_assert_eq(shoal_world_step(v, 1.0f / 60.0f), SHOAL_OK, "%s", shoal_world_last_error(v));
    cr_assert_eq(shoal_world_navmesh_stats(v, &st), SHOAL_OK);
    cr_assert_eq(st.replans, 1, "planned again");
    for (int s = 0; s < 60 * 30 && st.arrived < 1; ++s) {
        cr_assert_eq(shoal_world_step(v, 1.0f / 60.0f), SHOAL_OK);
        cr_assert_eq(shoal_world_navmesh_stats(v, &st), SHOAL_OK);
    }
    cr_assert_eq(st.arrived, 1);
    free(buf);
    free(old);
    shoal_world_destroy(v);
    shoal_world_destroy(w);
}
