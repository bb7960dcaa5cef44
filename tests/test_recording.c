/* Recordings (include/shoal/recording.h, docs/recording.md): write a world
 * whose agents come and go, with walls and obstacles, read it back and
 * compare every value exactly, in format versions 4, 3 (compressed) and 2;
 * then damage the file every way a disk or a crash can (cut at every
 * offset, a flipped byte at every offset, another magic or version,
 * trailing bytes, a damaged geometry record, compressed payloads that lie
 * about their size or decode to bad values) and insist on a clear error
 * and never a crash. Version 1 files (no geometry) still read. Last, the
 * command: `shoal run --record`, its size warning, its files that stop at
 * --record-max, a run a signal ends, and `shoal view`.
 *
 * Worlds are serial (one thread): Criterion forks, and nothing here needs
 * OpenMP. Run under the asan-ubsan preset too. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shoal/recording.h>
#include <zstd.h>

#include "support.h"

extern char** environ;

#define TINY SHOAL_SOURCE_DIR "/scenarios/tiny.json"
#define MAX_FRAMES 16
#define MAX_AGENTS 256

/* What the test saw in the world when it wrote each frame, sorted by id. */
typedef struct expected_frame_t {
    uint64_t step;
    double time;
    int32_t count;
    uint32_t ids[MAX_AGENTS], generations[MAX_AGENTS], groups[MAX_AGENTS];
    uint64_t gids[MAX_AGENTS];
    float positions[3 * MAX_AGENTS], headings[MAX_AGENTS], orientations[4 * MAX_AGENTS];
} expected_frame_t;

#define MAX_SEGMENTS 16
#define MAX_OBSTACLES 8

typedef struct expected_t {
    int dims;
    int version; /* the format written */
    int32_t frames;
    expected_frame_t frame[MAX_FRAMES];
    /* The geometry at frame 0, as the world's API gave it. */
    double geometry_time;
    int32_t segments, obstacles;
    float walls[4 * MAX_SEGMENTS];
    int32_t obstacle_ids[MAX_OBSTACLES];
    float centers[3 * MAX_OBSTACLES], radii[MAX_OBSTACLES], velocities[3 * MAX_OBSTACLES];
} expected_t;

static char scratch_dir[64];

static void scratch_init(void)
{
    strcpy(scratch_dir, "/tmp/shoal_rec_XXXXXX");
    cr_assert_not_null(mkdtemp(scratch_dir), "mkdtemp: %s", strerror(errno));
}

static void scratch_path(char* out, size_t size, const char* name)
{
    snprintf(out, size, "%s/%s", scratch_dir, name);
}

static void scratch_cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
    (void)!system(cmd);
}

/* Capture the world as the recording should show it: the test's own
 * sorting, independent of the writer's. */
static void capture(const shoal_world_t* w, expected_frame_t* f)
{
    int32_t n = shoal_world_agent_count(w);
    cr_assert_leq(n, MAX_AGENTS);
    static shoal_agent_t ids[MAX_AGENTS];
    static uint32_t groups[MAX_AGENTS];
    static float pos[3 * MAX_AGENTS], head[MAX_AGENTS], rot[4 * MAX_AGENTS];
    static uint64_t gids[MAX_AGENTS];
    shoal_agent_batch_t batch = {.ids = ids,
                                 .positions = pos,
                                 .headings = head,
                                 .orientations = rot,
                                 .groups = groups,
                                 .global_ids = gids};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &batch, MAX_AGENTS, &got), SHOAL_OK);
    int32_t order[MAX_AGENTS];
    for (int32_t i = 0; i < got; ++i) order[i] = i;
    for (int32_t i = 1; i < got; ++i) /* insertion sort by index1 */
        for (int32_t j = i; j > 0 && ids[order[j - 1]].index1 > ids[order[j]].index1; --j) {
            int32_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    f->step = shoal_world_step_count(w);
    f->time = shoal_world_time(w);
    f->count = got;
    for (int32_t j = 0; j < got; ++j) {
        int32_t i = order[j];
        f->ids[j] = ids[i].index1;
        f->generations[j] = ids[i].generation;
        f->groups[j] = groups[i];
        f->gids[j] = gids[i];
        memcpy(&f->positions[3 * j], &pos[3 * i], 3 * sizeof(float));
        f->headings[j] = head[i];
        memcpy(&f->orientations[4 * j], &rot[4 * i], 4 * sizeof(float));
    }
}

static shoal_agent_t add_agent(shoal_world_t* w, int i)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = (float)(i % 17) * 3.0f - 20.0f;
    d.position[1] = (float)(i % 5) * 4.0f - 8.0f;
    d.position[2] = shoal_world_dimensions(w) == 3 ? (float)(i % 3) : 0.0f;
    d.heading = (float)i * 0.37f;
    d.pitch = shoal_world_dimensions(w) == 3 ? 0.2f : 0.0f;
    d.target[0] = 30.0f;
    d.target[1] = (float)i;
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.group = (uint32_t)(i % 3) + (i % 11 == 0 ? 1000000u : 0u);
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

/* Walls (2D: an open polyline of 3 points and a closed triangle, 5
 * segments) and obstacles (a static one, a removed one that leaves a hole
 * in the ids, a moving one), and what the geometry record should hold. */
static void add_geometry(shoal_world_t* w, expected_t* ex)
{
    int dims = shoal_world_dimensions(w);
    if (dims == 2) {
        const float fence[6] = {-30.0f, -12.0f, 0.0f, -12.5f, 30.0f, -12.0f};
        const float island[6] = {-5.0f, 20.0f, 5.0f, 20.0f, 0.0f, 28.0f};
        int32_t id = -1;
        cr_assert_eq(shoal_world_add_wall(w, fence, 3, 0, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_world_add_wall(w, island, 3, 1, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    int32_t a = -1, b = -1, c = -1;
    cr_assert_eq(shoal_world_add_obstacle(w, (const float[3]){12.0f, 6.0f, 1.0f}, 2.5f, &a), SHOAL_OK);
    cr_assert_eq(shoal_world_add_obstacle(w, (const float[3]){-12.0f, 6.0f, 0.0f}, 1.0f, &b), SHOAL_OK);
    cr_assert_eq(shoal_world_add_moving_obstacle(w, (const float[3]){0.0f, 40.0f, 2.0f},
                                                 (const float[3]){1.5f, -0.5f, 0.25f}, 0.75f, &c),
                 SHOAL_OK);
    cr_assert_eq(shoal_world_remove_obstacle(w, b), SHOAL_OK); /* ids a and c remain */
    cr_assert_eq(shoal_world_wall_segments(w, ex->walls, MAX_SEGMENTS, &ex->segments), SHOAL_OK);
    cr_assert_eq(ex->segments, dims == 2 ? 5 : 0);
    ex->obstacles = 0;
    for (int32_t id = 0; id < 16; ++id) {
        int32_t k = ex->obstacles;
        if (shoal_world_get_obstacle(w, id, &ex->centers[3 * k], &ex->velocities[3 * k], &ex->radii[k]) ==
            SHOAL_OK) {
            ex->obstacle_ids[k] = id;
            ex->obstacles += 1;
        }
    }
    cr_assert_eq(ex->obstacles, 2);
    cr_assert_lt(ex->obstacle_ids[0] + 1, ex->obstacle_ids[1], "no hole in the ids");
    ex->geometry_time = shoal_world_time(w);
}

/* Bytes of the geometry record of `ex`. */
static size_t geometry_size(const expected_t* ex)
{
    return 28 + 16 * (size_t)ex->segments + 32 * (size_t)ex->obstacles;
}

static void expect_geometry_equal(const shoal_recording_t* rec, const expected_t* ex)
{
    shoal_recording_geometry_t g;
    cr_assert_eq(shoal_recording_geometry(rec, &g), SHOAL_OK);
    cr_expect_eq(g.time, ex->geometry_time);
    cr_assert_eq(g.wall_count, ex->segments);
    cr_assert_eq(g.obstacle_count, ex->obstacles);
    cr_assert_not_null(g.walls);
    cr_assert_not_null(g.obstacles);
    cr_assert_arr_eq(g.walls, ex->walls, 4 * (size_t)ex->segments * sizeof(float));
    for (int32_t k = 0; k < ex->obstacles; ++k) {
        const shoal_recording_obstacle_t* o = &g.obstacles[k];
        cr_expect_eq(o->id, ex->obstacle_ids[k], "obstacle %d", k);
        cr_expect_arr_eq(o->center, &ex->centers[3 * k], 3 * sizeof(float), "obstacle %d", k);
        cr_expect_eq(o->radius, ex->radii[k], "obstacle %d", k);
        cr_expect_arr_eq(o->velocity, &ex->velocities[3 * k], 3 * sizeof(float), "obstacle %d", k);
    }
}

/* Write `frames` frames of a world whose agents come and go: between frames
 * some are removed (their slots are then reused with a new generation) and
 * new ones are added; one frame has no agents at all. The world has walls
 * and obstacles; one more of each is added after frame 0 (the recording
 * keeps the geometry of frame 0). */
static void write_recording_version(const char* path, int dims, int frames, int version, expected_t* ex)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    step_n(w, 3, 0.05f); /* the geometry's time is frame 0's, not 0 */
    add_geometry(w, ex);
    shoal_recording_header_t h = shoal_recording_default_header();
    h.dimensions = dims;
    h.dt = 0.05f;
    h.record_every = 2;
    h.steps_hint = (uint64_t)(2 * frames);
    h.scenario_name = "churn";
    h.group_names = "red\ngreen\nblue";
    h.scenario_text = "{\"name\": \"churn\"}";
    shoal_recorder_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_open_version(path, &h, version, &rec, &err), SHOAL_OK, "%s", err.message);

    shoal_agent_t live[MAX_AGENTS];
    int live_count = 0, next = 0;
    for (; live_count < 40; ++live_count) live[live_count] = add_agent(w, next++);
    ex->dims = dims;
    ex->version = version;
    ex->frames = frames;
    for (int f = 0; f < frames; ++f) {
        capture(w, &ex->frame[f]);
        cr_assert_eq(shoal_recording_write_frame(rec, w, &err), SHOAL_OK, "%s", err.message);
        cr_assert_eq(shoal_recording_frames_written(rec), f + 1);
        if (f == 0) { /* not recorded: the geometry is written once */
            int32_t id = -1;
            if (dims == 2)
                cr_assert_eq(shoal_world_add_wall(w, (const float[4]){50.0f, 0.0f, 60.0f, 0.0f}, 2, 0, &id),
                             SHOAL_OK);
            cr_assert_eq(shoal_world_add_obstacle(w, (const float[3]){-40.0f, -40.0f, 0.0f}, 3.0f, &id),
                         SHOAL_OK);
        }
        if (f == frames / 2) { /* everyone leaves: an empty frame next */
            for (int i = 0; i < live_count; ++i) shoal_agent_remove(w, live[i]);
            live_count = 0;
        } else {
            int kept = 0;
            for (int i = 0; i < live_count; ++i) {
                if ((i + f) % 4 == 0) {
                    cr_assert_eq(shoal_agent_remove(w, live[i]), SHOAL_OK);
                } else {
                    live[kept++] = live[i];
                }
            }
            live_count = kept;
            for (int k = 0; k < 7 + f && live_count < MAX_AGENTS; ++k)
                live[live_count++] = add_agent(w, next++);
        }
        step_n(w, 2, h.dt);
    }
    cr_assert_eq(shoal_recording_close(rec, &err), SHOAL_OK, "%s", err.message);
    shoal_world_destroy(w);
}

/* The same in the version shoal_recording_open writes (4). */
static void write_recording(const char* path, int dims, int frames, expected_t* ex)
{
    write_recording_version(path, dims, frames, SHOAL_RECORDING_DEFAULT_VERSION, ex);
}

static void expect_frames_equal(const shoal_recording_t* rec, const expected_t* ex, int32_t frames)
{
    for (int32_t f = 0; f < frames; ++f) {
        const expected_frame_t* e = &ex->frame[f];
        shoal_recording_frame_t fr;
        cr_assert_eq(shoal_recording_frame(rec, f, &fr), SHOAL_OK);
        cr_assert_eq(fr.step, e->step, "frame %d", f);
        cr_assert_eq(fr.time, e->time, "frame %d", f); /* exact: stored as f64 */
        cr_assert_eq(fr.count, e->count, "frame %d", f);
        size_t n = (size_t)e->count;
        cr_assert_arr_eq(fr.ids, e->ids, n * 4, "frame %d ids", f);
        cr_assert_arr_eq(fr.generations, e->generations, n * 4, "frame %d generations", f);
        cr_assert_arr_eq(fr.groups, e->groups, n * 4, "frame %d groups", f);
        if (ex->version >= 4) {
            cr_assert_not_null(fr.global_ids, "frame %d", f);
            cr_assert_arr_eq(fr.global_ids, e->gids, n * 8, "frame %d global ids", f);
        } else {
            cr_assert_null(fr.global_ids, "frame %d: version %d has no global ids", f, ex->version);
        }
        for (size_t i = 0; i < n; ++i) {
            cr_assert_arr_eq(&fr.positions[(size_t)ex->dims * i], &e->positions[3 * i],
                             (size_t)ex->dims * sizeof(float), "frame %d agent %zu", f, i);
            if (ex->dims == 2) {
                cr_assert_null(fr.orientations);
                cr_assert_arr_eq(&fr.headings[i], &e->headings[i], sizeof(float));
            } else {
                cr_assert_null(fr.headings);
                cr_assert_arr_eq(&fr.orientations[4 * i], &e->orientations[4 * i], 4 * sizeof(float));
            }
        }
    }
}

static void round_trip(int dims, int version)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "churn.rec");
    static expected_t ex;
    write_recording_version(path, dims, 9, version, &ex);

    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load(path, 0, &rec, &err), SHOAL_OK, "%s", err.message);
    const shoal_recording_header_t* h = shoal_recording_header(rec);
    cr_expect_eq(h->dimensions, dims);
    cr_expect_eq(h->dt, 0.05f);
    cr_expect_eq(h->record_every, 2);
    cr_expect_eq(h->steps_hint, 18u);
    cr_expect_str_eq(h->units, "m,s,rad");
    cr_expect_str_eq(h->scenario_name, "churn");
    cr_expect_str_eq(h->group_names, "red\ngreen\nblue");
    cr_expect_str_eq(h->scenario_text, "{\"name\": \"churn\"}");
    cr_expect_eq(shoal_recording_is_complete(rec), 1);
    cr_expect_str_eq(shoal_recording_damage(rec), "");
    cr_expect_eq(shoal_recording_version(rec), version);
    cr_expect_eq(SHOAL_RECORDING_VERSION, 5);
    cr_expect_eq(SHOAL_RECORDING_DEFAULT_VERSION, 4);
    cr_assert_eq(shoal_recording_frame_count(rec), 9);
    expect_frames_equal(rec, &ex, 9);
    /* The geometry of frame 0, at frame 0's time: later walls and obstacles
     * are not in it. */
    expect_geometry_equal(rec, &ex);
    shoal_recording_frame_t zero;
    shoal_recording_frame(rec, 0, &zero);
    shoal_recording_geometry_t g;
    shoal_recording_geometry(rec, &g);
    cr_expect_eq(g.time, zero.time);
    cr_expect_gt(g.time, 0.0);
    cr_expect_eq(shoal_recording_geometry(rec, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_recording_geometry(NULL, &g), SHOAL_ERR_INVALID_ARGUMENT);

    /* Agents did come and go, and a reused slot has a new generation. */
    shoal_recording_frame_t first, last, empty;
    shoal_recording_frame(rec, 0, &first);
    shoal_recording_frame(rec, 8, &last);
    shoal_recording_frame(rec, 5, &empty);
    cr_expect_eq(empty.count, 0);
    cr_expect_neq(first.count, last.count);
    int reused = 0;
    for (int32_t i = 0; i < last.count; ++i) reused |= last.generations[i] > 0;
    cr_expect(reused, "no slot was reused");
    if (version >= 4) { /* a reused slot's agent has an id of its own */
        for (int32_t i = 0; i < last.count; ++i)
            if (last.generations[i] > 0) cr_expect_geq(last.global_ids[i], 40u, "agent %d", i);
    }
    shoal_recording_frame_t none;
    cr_expect_eq(shoal_recording_frame(rec, 9, &none), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_recording_frame(rec, -1, &none), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_recording_destroy(rec);
    scratch_cleanup();
}

TestSuite(recording, .timeout = 120);

Test(recording, round_trip_2d) { round_trip(2, 4); }

Test(recording, round_trip_3d) { round_trip(3, 4); }

Test(recording, round_trip_2d_version_3) { round_trip(2, 3); }

Test(recording, round_trip_3d_version_3) { round_trip(3, 3); }

Test(recording, round_trip_2d_version_2) { round_trip(2, 2); }

Test(recording, round_trip_3d_version_2) { round_trip(3, 2); }

static uint8_t* read_all(const char* path, size_t* size)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t* data = malloc((size_t)n + 1);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* Offsets of frame starts (and of the end record), from the frame sizes. */
static size_t header_bytes(const uint8_t* data)
{
    return (size_t)data[12] | (size_t)data[13] << 8 | (size_t)data[14] << 16;
}

static uint32_t le32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The bytes of the frame at `at`, by docs/recording.md: version 2, 36 +
 * 24n (2D) or 40n (3D); versions 3 and 4, 40 + the zstd frame (C bytes) padded
 * to a multiple of 4 and to at least D / 1024 bytes, + 4. */
static size_t frame_size_at(const uint8_t* data, size_t at, int dims, int version)
{
    if (version == 2) return 36 + (dims == 2 ? 24u : 40u) * (size_t)le32(data + at + 24);
    size_t decoded = le32(data + at + 32), compressed = le32(data + at + 36);
    size_t least = (decoded + 1023) / 1024;
    size_t stored = compressed > least ? compressed : least;
    return 40 + ((stored + 3) & ~(size_t)3) + 4;
}

static void every_truncation(int version)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "cut.rec");
    static expected_t ex;
    write_recording_version(path, 2, 5, version, &ex);
    size_t size = 0;
    uint8_t* data = read_all(path, &size);
    size_t header = header_bytes(data);
    size_t geometry_end = header + geometry_size(&ex);
    size_t frame_end[MAX_FRAMES];
    size_t at = geometry_end;
    for (int f = 0; f < ex.frames; ++f) {
        cr_assert_eq(le32(data + at + 24), (uint32_t)ex.frame[f].count, "frame %d", f);
        if (version >= 3) /* the declared payload: 24 bytes an agent, 32 with global ids */
            cr_assert_eq(le32(data + at + 32), (version == 4 ? 32u : 24u) * (uint32_t)ex.frame[f].count,
                         "frame %d", f);
        at += frame_size_at(data, at, 2, version);
        frame_end[f] = at;
    }
    cr_assert_eq(at + 12, size, "layout as documented");

    for (size_t cut = 0; cut < size; ++cut) {
        shoal_recording_t* rec = NULL;
        shoal_error_t err = {SHOAL_OK, ""};
        shoal_status_t st = shoal_recording_load_memory(data, cut, "cut.rec", 0, &rec, &err);
        cr_assert_eq(st, SHOAL_ERR_PARSE, "cut at %zu: status %d", cut, st);
        cr_assert_null(rec);
        cr_assert_not_null(strstr(err.message, "cut.rec"), "cut %zu: %s", cut, err.message);
        int complete = 0;
        while (complete < ex.frames && frame_end[complete] <= cut) complete++;
        if (cut == 0) {
            cr_assert_not_null(strstr(err.message, "empty"), "%s", err.message);
        } else if (cut < header) {
            cr_assert_not_null(strstr(err.message, "truncated in the header"), "cut %zu: %s", cut,
                               err.message);
        } else {
            char want[64];
            if (complete == 0)
                snprintf(want, sizeof want, "truncated after the header");
            else
                snprintf(want, sizeof want, "truncated after frame %d (%d complete", complete - 1, complete);
            cr_assert_not_null(strstr(err.message, want), "cut %zu: want '%s' in: %s", cut, want,
                               err.message);
        }

        /* The valid prefix, on request. */
        st = shoal_recording_load_memory(data, cut, "cut.rec", SHOAL_RECORDING_ALLOW_TRUNCATED, &rec, &err);
        if (cut < header) {
            cr_assert_eq(st, SHOAL_ERR_PARSE, "cut %zu", cut);
            continue;
        }
        cr_assert_eq(st, SHOAL_OK, "cut %zu: %s", cut, err.message);
        cr_assert_eq(shoal_recording_frame_count(rec), complete, "cut %zu", cut);
        cr_assert_eq(shoal_recording_is_complete(rec), 0);
        cr_assert_not_null(strstr(shoal_recording_damage(rec), "truncated"), "cut %zu", cut);
        expect_frames_equal(rec, &ex, complete);
        /* Cut inside the geometry record: no geometry (and no frame). */
        if (cut < geometry_end) {
            shoal_recording_geometry_t g;
            cr_assert_eq(shoal_recording_geometry(rec, &g), SHOAL_ERR_NOT_FOUND, "cut %zu", cut);
            cr_assert_eq(g.wall_count + g.obstacle_count, 0);
            cr_assert_not_null(strstr(shoal_recording_damage(rec), "geometry record"), "cut %zu: %s", cut,
                               shoal_recording_damage(rec));
        } else {
            expect_geometry_equal(rec, &ex);
        }
        shoal_recording_destroy(rec);
    }
    free(data);
    scratch_cleanup();
}

Test(recording, every_truncation_is_a_clear_error) { every_truncation(4); }

Test(recording, every_truncation_is_a_clear_error_version_3) { every_truncation(3); }

Test(recording, every_truncation_is_a_clear_error_version_2) { every_truncation(2); }

static void every_flipped_byte(int version)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "flip.rec");
    static expected_t ex;
    write_recording_version(path, 3, 4, version, &ex);
    size_t size = 0;
    uint8_t* data = read_all(path, &size);
    const size_t geometry_at = header_bytes(data), geometry_end = geometry_at + geometry_size(&ex);
    const uint8_t masks[] = {0x01, 0x80, 0xFF};
    for (size_t at = 0; at < size; ++at) {
        for (size_t m = 0; m < sizeof masks; ++m) {
            data[at] ^= masks[m];
            shoal_recording_t* rec = NULL;
            shoal_error_t err = {SHOAL_OK, ""};
            shoal_status_t st = shoal_recording_load_memory(data, size, "flip.rec", 0, &rec, &err);
            cr_assert_eq(st, SHOAL_ERR_PARSE, "byte %zu ^ %02x: status %d", at, masks[m], st);
            cr_assert_null(rec);
            cr_assert_not_null(strstr(err.message, "flip.rec"), "%s", err.message);
            cr_assert_not_null(strstr(err.message, "byte"), "no offset in: %s", err.message);
            /* The prefix reader never crashes and keeps only intact frames. */
            if (at >= geometry_at && at < geometry_end)
                cr_assert_not_null(strstr(err.message, "geometry record"), "byte %zu: %s", at, err.message);
            st = shoal_recording_load_memory(data, size, "flip.rec", SHOAL_RECORDING_ALLOW_TRUNCATED, &rec,
                                             &err);
            /* A damaged geometry record is refused even then, unless its
             * counts now claim more bytes than the file has: the file
             * reads as cut off before its first frame. */
            if (at >= geometry_at && at < geometry_end && st == SHOAL_OK) {
                cr_assert_eq(shoal_recording_frame_count(rec), 0, "byte %zu", at);
                cr_assert_not_null(strstr(shoal_recording_damage(rec), "geometry record at byte"),
                                   "byte %zu: %s", at, shoal_recording_damage(rec));
                cr_assert(at >= geometry_at + 16 && at < geometry_at + 24, "byte %zu", at);
            } else if (at >= geometry_at && at < geometry_end) {
                cr_assert_eq(st, SHOAL_ERR_PARSE, "byte %zu", at);
                cr_assert_not_null(strstr(err.message, "geometry record"), "byte %zu: %s", at, err.message);
            }
            if (st == SHOAL_OK) {
                int32_t n = shoal_recording_frame_count(rec);
                cr_assert_leq(n, ex.frames);
                expect_frames_equal(rec, &ex, n);
                cr_assert_neq(shoal_recording_damage(rec)[0], '\0');
                shoal_recording_destroy(rec);
            }
            data[at] ^= masks[m];
        }
    }
    free(data);
    scratch_cleanup();
}

Test(recording, every_flipped_byte_is_detected) { every_flipped_byte(4); }

Test(recording, every_flipped_byte_is_detected_version_3) { every_flipped_byte(3); }

Test(recording, every_flipped_byte_is_detected_version_2) { every_flipped_byte(2); }

/* Rewrite the header's CRC after patching it, so that the check under test
 * is the one that fires, not the checksum. */
static void fix_header_crc(uint8_t* data)
{
    size_t h = header_bytes(data);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < h - 4; ++i) {
        c ^= data[i];
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    c ^= 0xFFFFFFFFu;
    for (int k = 0; k < 4; ++k) data[h - 4 + (size_t)k] = (uint8_t)(c >> (8 * k));
}

static void expect_load_error(const uint8_t* data, size_t size, const char* text)
{
    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(
        shoal_recording_load_memory(data, size, "bad.rec", SHOAL_RECORDING_ALLOW_TRUNCATED, &rec, &err),
        SHOAL_ERR_PARSE);
    cr_assert_null(rec);
    cr_assert_not_null(strstr(err.message, text), "want '%s' in: %s", text, err.message);
}

Test(recording, bad_magic_version_and_trailing_data)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "bad.rec");
    static expected_t ex;
    write_recording(path, 2, 3, &ex);
    size_t size = 0;
    uint8_t* data = read_all(path, &size);

    data[3] = 'X';
    expect_load_error(data, size, "not a shoal recording (bad magic at byte 0)");
    expect_load_error((const uint8_t*)"{\"name\": 1}", 11, "not a shoal recording");
    data[3] = 'A';

    data[8] = 6;
    fix_header_crc(data);
    expect_load_error(data, size, "unsupported version 6 (this build reads versions 1 to 5)");
    data[8] = 0;
    fix_header_crc(data);
    expect_load_error(data, size, "unsupported version 0");
    /* Version 3 frames under a version 2 header are not version 2 frames
     * (ALLOW_TRUNCATED would keep none of them). */
    data[8] = 2;
    fix_header_crc(data);
    {
        shoal_recording_t* none = NULL;
        shoal_error_t e = {SHOAL_OK, ""};
        cr_assert_eq(shoal_recording_load_memory(data, size, "bad.rec", 0, &none, &e), SHOAL_ERR_PARSE);
        cr_expect_not_null(strstr(e.message, "frame 0 at byte"), "%s", e.message);
    }
    /* Version 4 frames under a version 3 header: each declares the payload
     * of 32 bytes an agent, not 24. */
    data[8] = 3;
    fix_header_crc(data);
    {
        shoal_recording_t* none = NULL;
        shoal_error_t e = {SHOAL_OK, ""};
        cr_assert_eq(shoal_recording_load_memory(data, size, "bad.rec", 0, &none, &e), SHOAL_ERR_PARSE);
        cr_expect_not_null(strstr(e.message, "frame 0 at byte"), "%s", e.message);
        cr_expect_not_null(strstr(e.message, "is not what 40 agents need (960; corrupt)"), "%s", e.message);
    }
    data[8] = 4;
    data[16] = 4; /* dimensions */
    fix_header_crc(data);
    expect_load_error(data, size, "byte 16: dimensions must be 2 or 3");
    data[16] = 2;
    fix_header_crc(data);

    uint8_t* longer = malloc(size + 5);
    memcpy(longer, data, size);
    memcpy(longer + size, "extra", 5);
    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load_memory(longer, size + 5, "bad.rec", 0, &rec, &err), SHOAL_ERR_PARSE);
    cr_expect_not_null(strstr(err.message, "5 bytes of trailing data after the end record"), "%s",
                       err.message);
    /* Without the end record: the writer did not close it. */
    cr_assert_eq(shoal_recording_load_memory(data, size - 12, "bad.rec", 0, &rec, &err), SHOAL_ERR_PARSE);
    cr_expect_not_null(strstr(err.message, "truncated after frame 2 (3 complete frames): no end record"),
                       "%s", err.message);
    cr_assert_eq(shoal_recording_load_memory(data, size, "bad.rec", 0, &rec, &err), SHOAL_OK, "%s",
                 err.message);
    shoal_recording_destroy(rec);
    free(longer);
    free(data);
    scratch_cleanup();
}

/* A version 1 file: the same bytes less the geometry record, version 1. */
static uint8_t* as_version_1(const uint8_t* data, size_t size, const expected_t* ex, size_t* out_size)
{
    size_t header = header_bytes(data), geometry = geometry_size(ex);
    uint8_t* old = malloc(size);
    memcpy(old, data, header);
    memcpy(old + header, data + header + geometry, size - header - geometry);
    old[8] = 1;
    fix_header_crc(old);
    *out_size = size - geometry;
    return old;
}

Test(recording, version_1_still_reads)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "v2.rec");
    static expected_t ex;
    write_recording_version(path, 2, 6, 2, &ex);
    size_t size = 0, old_size = 0;
    uint8_t* data = read_all(path, &size);
    uint8_t* old = as_version_1(data, size, &ex, &old_size);

    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load_memory(old, old_size, "v1.rec", 0, &rec, &err), SHOAL_OK, "%s",
                 err.message);
    cr_expect_eq(shoal_recording_version(rec), 1);
    cr_expect_eq(shoal_recording_is_complete(rec), 1);
    cr_assert_eq(shoal_recording_frame_count(rec), 6);
    expect_frames_equal(rec, &ex, 6);
    shoal_recording_geometry_t g;
    memset(&g, 0xAB, sizeof g);
    cr_expect_eq(shoal_recording_geometry(rec, &g), SHOAL_ERR_NOT_FOUND);
    cr_expect_eq(g.wall_count, 0);
    cr_expect_eq(g.obstacle_count, 0);
    cr_expect_null(g.walls);
    cr_expect_null(g.obstacles);
    shoal_recording_destroy(rec);
    /* Cut short, it reads as version 1 files always did. */
    cr_assert_eq(shoal_recording_load_memory(old, old_size - 30, "v1.rec", SHOAL_RECORDING_ALLOW_TRUNCATED,
                                             &rec, &err),
                 SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_recording_frame_count(rec), 5);
    cr_expect_not_null(strstr(shoal_recording_damage(rec), "truncated after frame 4"), "%s",
                       shoal_recording_damage(rec));
    shoal_recording_destroy(rec);
    /* A version 1 header before a geometry record: the record is not a frame. */
    data[8] = 1;
    fix_header_crc(data);
    cr_assert_eq(shoal_recording_load_memory(data, size, "mixed.rec", 0, &rec, &err), SHOAL_ERR_PARSE);
    cr_expect_not_null(strstr(err.message, "expected frame 0 or the end record"), "%s", err.message);
    free(old);
    free(data);

    /* The version 1 files `shoal run --record` wrote before version 2 (the
     * fuzz seeds, kept as they were). */
    const char* seeds[] = {"tiny-2d.rec", "sphere-3d.rec", "flock-wrap-every2.rec", "convoy-0steps.rec"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; ++i) {
        char seed[512];
        snprintf(seed, sizeof seed, "%s/tests/fuzz/corpus/recording/%s", SHOAL_SOURCE_DIR, seeds[i]);
        cr_assert_eq(shoal_recording_load(seed, 0, &rec, &err), SHOAL_OK, "%s", err.message);
        cr_expect_eq(shoal_recording_version(rec), 1, "%s", seeds[i]);
        cr_expect_gt(shoal_recording_frame_count(rec), 0, "%s", seeds[i]);
        cr_expect_eq(shoal_recording_geometry(rec, &g), SHOAL_ERR_NOT_FOUND, "%s", seeds[i]);
        shoal_recording_destroy(rec);
    }
    scratch_cleanup();
}

/* Files of the versions before 4 read without global ids; the version 4
 * seed (12 wandering agents, 4 removed after frame 2 and 3 added in their
 * slots) gives each agent its own. */
Test(recording, version_3_seeds_read_without_global_ids_and_version_4_with_them)
{
    const char* seeds[] = {"tiny-2d-v3.rec", "fish3d-obstacles-v3.rec", "wander-reuse-v4.rec"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; ++i) {
        char seed[512];
        snprintf(seed, sizeof seed, "%s/tests/fuzz/corpus/recording/%s", SHOAL_SOURCE_DIR, seeds[i]);
        shoal_recording_t* rec = NULL;
        shoal_error_t err = {SHOAL_OK, ""};
        cr_assert_eq(shoal_recording_load(seed, 0, &rec, &err), SHOAL_OK, "%s", err.message);
        const int v4 = i == 2;
        cr_expect_eq(shoal_recording_version(rec), v4 ? 4 : 3, "%s", seeds[i]);
        int seen[16] = {0};
        for (int32_t f = 0; f < shoal_recording_frame_count(rec); ++f) {
            shoal_recording_frame_t fr;
            cr_assert_eq(shoal_recording_frame(rec, f, &fr), SHOAL_OK);
            if (!v4) {
                cr_assert_null(fr.global_ids, "%s frame %d", seeds[i], f);
                continue;
            }
            cr_assert_not_null(fr.global_ids);
            cr_assert_eq(fr.count, f <= 2 ? 12 : 11, "frame %d", f);
            for (int32_t a = 0; a < fr.count; ++a) {
                cr_assert_lt(fr.global_ids[a], 15u);
                seen[fr.global_ids[a]] = 1;
                /* the first twelve in slots 1..12; the newcomers 12, 13, 14 in
                 * the slots 4, 3, 2 that removed agents left (generation 2) */
                if (fr.global_ids[a] < 12) {
                    cr_assert_eq(fr.ids[a], (uint32_t)fr.global_ids[a] + 1u);
                    cr_assert_eq(fr.generations[a], 1u);
                } else {
                    cr_assert_eq(fr.ids[a], (uint32_t)(16u - fr.global_ids[a]), "gid %llu",
                                 (unsigned long long)fr.global_ids[a]);
                    cr_assert_eq(fr.generations[a], 2u);
                }
            }
        }
        for (int k = 0; v4 && k < 15; ++k) cr_expect(seen[k], "global id %d never seen", k);
        shoal_recording_destroy(rec);
    }
}

/* Rewrite the CRC of the geometry record at `at` (`bytes` long). */
static void fix_record_crc(uint8_t* data, size_t at, size_t bytes)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = at; i < at + bytes - 4; ++i) {
        c ^= data[i];
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    c ^= 0xFFFFFFFFu;
    for (int k = 0; k < 4; ++k) data[at + bytes - 4 + (size_t)k] = (uint8_t)(c >> (8 * k));
}

static void put_le32(uint8_t* p, uint32_t v)
{
    for (int k = 0; k < 4; ++k) p[k] = (uint8_t)(v >> (8 * k));
}

static void put_f32_le(uint8_t* p, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    put_le32(p, v);
}

/* Damage one field of the geometry record (then reseal it, so that the
 * check under test is the one that fires) and expect `text` in the error,
 * in the strict and the tolerant load alike. */
static void expect_geometry_error(const uint8_t* data, size_t size, size_t at, size_t bytes, size_t field,
                                  const uint8_t value[4], int reseal, const char* text)
{
    uint8_t* bad = malloc(size);
    memcpy(bad, data, size);
    memcpy(bad + field, value, 4);
    if (reseal) fix_record_crc(bad, at, bytes);
    for (int k = 0; k < 2; ++k) {
        shoal_recording_t* rec = NULL;
        shoal_error_t err = {SHOAL_OK, ""};
        uint32_t flags = k == 0 ? 0 : SHOAL_RECORDING_ALLOW_TRUNCATED;
        cr_assert_eq(shoal_recording_load_memory(bad, size, "geo.rec", flags, &rec, &err), SHOAL_ERR_PARSE,
                     "field at %zu, flags %u: loaded", field, flags);
        cr_assert_null(rec);
        cr_assert_not_null(strstr(err.message, "geo.rec"), "%s", err.message);
        cr_assert_not_null(strstr(err.message, text), "want '%s' in: %s", text, err.message);
    }
    free(bad);
}

Test(recording, damaged_geometry_is_refused)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "geo.rec");
    static expected_t ex;
    write_recording(path, 2, 3, &ex);
    size_t size = 0;
    uint8_t* data = read_all(path, &size);
    const size_t at = header_bytes(data), bytes = geometry_size(&ex);
    const size_t walls = at + 24, ids = walls + 16 * (size_t)ex.segments;
    const size_t radii = ids + 16 * (size_t)ex.obstacles;
    const size_t velocities = radii + 4 * (size_t)ex.obstacles;
    char want[160];
    uint8_t v[4];

    /* A changed coordinate: the checksum. */
    memcpy(v, data + walls + 8, 4);
    v[1] ^= 0x10;
    snprintf(want, sizeof want, "the geometry record at byte %zu: checksum mismatch", at);
    expect_geometry_error(data, size, at, bytes, walls + 8, v, 0, want);
    /* Values that a resealed record still may not hold. */
    put_f32_le(v, NAN);
    snprintf(want, sizeof want, "byte %zu: a wall coordinate is not finite", walls + 8);
    expect_geometry_error(data, size, at, bytes, walls + 8, v, 1, want);
    put_f32_le(v, -1.0f);
    snprintf(want, sizeof want, "byte %zu: an obstacle radius is negative", radii + 4);
    expect_geometry_error(data, size, at, bytes, radii + 4, v, 1, want);
    put_f32_le(v, INFINITY);
    expect_geometry_error(data, size, at, bytes, velocities + 12, v, 1, "an obstacle velocity is not finite");
    put_le32(v, (uint32_t)ex.obstacle_ids[0]);
    expect_geometry_error(data, size, at, bytes, ids + 4, v, 1, "obstacle ids are not ascending");
    put_le32(v, 1);
    expect_geometry_error(data, size, at, bytes, at + 4, v, 1, "unknown flags");
    put_le32(v, 0x80000000u);
    expect_geometry_error(data, size, at, bytes, at + 20, v, 1, "obstacle count 2147483648");
    memcpy(v, "FRAM", 4);
    snprintf(want, sizeof want, "byte %zu: expected the geometry record", at);
    expect_geometry_error(data, size, at, bytes, at, v, 1, want);

    /* Intact, it loads (the damage above was in copies). */
    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load_memory(data, size, "geo.rec", 0, &rec, &err), SHOAL_OK, "%s",
                 err.message);
    expect_geometry_equal(rec, &ex);
    shoal_recording_destroy(rec);
    free(data);
    scratch_cleanup();
}

/* ---- version 2 files and version 3 payloads ---- */

Test(recording, version_2_still_reads)
{
    /* Files `shoal run --record` wrote in version 2 (the fuzz seeds, kept
     * as they were): the plaza's walls, fish3d's obstacles, a moving
     * obstacle; and one cut inside its geometry record. */
    const char* seeds[] = {"plaza-walls-v2.rec", "fish3d-obstacles-v2.rec", "moving-obstacle-v2.rec"};
    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_recording_geometry_t g;
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; ++i) {
        char seed[512];
        snprintf(seed, sizeof seed, "%s/tests/fuzz/corpus/recording/%s", SHOAL_SOURCE_DIR, seeds[i]);
        cr_assert_eq(shoal_recording_load(seed, 0, &rec, &err), SHOAL_OK, "%s", err.message);
        cr_expect_eq(shoal_recording_version(rec), 2, "%s", seeds[i]);
        cr_expect_eq(shoal_recording_is_complete(rec), 1, "%s", seeds[i]);
        cr_expect_gt(shoal_recording_frame_count(rec), 0, "%s", seeds[i]);
        cr_expect_eq(shoal_recording_geometry(rec, &g), SHOAL_OK, "%s", seeds[i]);
        cr_expect_gt(g.wall_count + g.obstacle_count, 0, "%s", seeds[i]);
        shoal_recording_destroy(rec);
    }
    char cut[512];
    snprintf(cut, sizeof cut, "%s/tests/fuzz/corpus/recording/plaza-v2-cut-in-geometry.rec",
             SHOAL_SOURCE_DIR);
    cr_assert_eq(shoal_recording_load(cut, SHOAL_RECORDING_ALLOW_TRUNCATED, &rec, &err), SHOAL_OK, "%s",
                 err.message);
    cr_expect_eq(shoal_recording_version(rec), 2);
    cr_expect_eq(shoal_recording_frame_count(rec), 0);
    shoal_recording_destroy(rec);

    /* The writer still writes version 2 on request, and nothing else. */
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "v9.rec");
    shoal_recording_header_t h = shoal_recording_default_header();
    shoal_recorder_t* w = NULL;
    cr_expect_eq(shoal_recording_open_version(path, &h, 1, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_not_null(strstr(err.message, "versions 2 (uncompressed), 3"), "%s", err.message);
    cr_expect_eq(shoal_recording_open_version(path, &h, 6, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_null(w);
    cr_expect_neq(access(path, F_OK), 0, "a refused version creates no file");
    scratch_cleanup();
}

/* Where frame `index` starts (after the header and geometry record). */
static size_t frame_at(const uint8_t* data, const expected_t* ex, int index, int version)
{
    size_t at = header_bytes(data) + geometry_size(ex);
    for (int f = 0; f < index; ++f) at += frame_size_at(data, at, ex->dims, version);
    return at;
}

static void set_word(uint8_t* planes, size_t words, size_t w, uint32_t v)
{
    for (int k = 0; k < 4; ++k) planes[(size_t)k * words + w] = (uint8_t)(v >> (8 * k));
}

/* A copy of the version 3 file with frame `at`'s payload decompressed,
 * edited by `edit` (its words as byte planes, docs/recording.md),
 * compressed again and the frame resealed: the checks after the checksum
 * and zstd are the ones under test. */
static uint8_t* with_payload(const uint8_t* data, size_t size, size_t at, int dims,
                             void (*edit)(uint8_t* planes, size_t words, size_t n), size_t* out_size)
{
    const size_t old = frame_size_at(data, at, dims, 3);
    const size_t n = le32(data + at + 24), decoded = le32(data + at + 32);
    uint8_t* planes = malloc(decoded + 1);
    cr_assert_eq(ZSTD_decompress(planes, decoded, data + at + 40, le32(data + at + 36)), decoded);
    edit(planes, decoded / 4, n);
    const size_t bound = ZSTD_compressBound(decoded);
    uint8_t* out = calloc(1, size + bound + decoded / 1024 + 64);
    memcpy(out, data, at + 40);
    size_t compressed = ZSTD_compress(out + at + 40, bound, planes, decoded, 1);
    cr_assert(!ZSTD_isError(compressed));
    put_le32(out + at + 36, (uint32_t)compressed);
    const size_t fresh = frame_size_at(out, at, dims, 3);
    fix_record_crc(out, at, fresh);
    memcpy(out + at + fresh, data + at + old, size - at - old);
    *out_size = size - old + fresh;
    free(planes);
    return out;
}

/* Words: id differences [0, n), generations [n, 2n), groups [2n, 3n), in
 * version 4 the global ids' zigzagged differences from their predictions,
 * low words [3n, 4n) then high words [4n, 5n), then each float's zigzagged
 * difference from its prediction, x of every agent, then y, then the
 * heading (2D). */
static size_t floats_from; /* 3 (version 3) or 5 (version 4) */
static size_t gid_agent;   /* edit_gid's agent */

static void edit_gid(uint8_t* planes, size_t words, size_t n)
{
    set_word(planes, words, 3 * n + gid_agent, 2); /* zigzag: one more than predicted */
}

static void edit_repeat_id(uint8_t* planes, size_t words, size_t n)
{
    (void)n;
    set_word(planes, words, 1, 0); /* agent 1's id = agent 0's */
}

static void edit_generation(uint8_t* planes, size_t words, size_t n)
{
    set_word(planes, words, n + 2, 70000);
}

static void edit_nan(uint8_t* planes, size_t words, size_t n)
{
    /* Frame 0 predicts nothing: the word is the zigzagged bits, and
     * zigzag(0x7FC00000), a quiet NaN, is 0xFF800000. */
    set_word(planes, words, floats_from * n, 0xFF800000u);
}

/* Expect `text` in the strict load's error and `kept` frames (and the same
 * text in the damage note) under ALLOW_TRUNCATED. */
static void expect_v3_error(const uint8_t* data, size_t size, const expected_t* ex, const char* text,
                            int32_t kept)
{
    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load_memory(data, size, "v3.rec", 0, &rec, &err), SHOAL_ERR_PARSE,
                 "want '%s'", text);
    cr_assert_null(rec);
    cr_assert_not_null(strstr(err.message, "v3.rec"), "%s", err.message);
    cr_assert_not_null(strstr(err.message, text), "want '%s' in: %s", text, err.message);
    cr_assert_eq(
        shoal_recording_load_memory(data, size, "v3.rec", SHOAL_RECORDING_ALLOW_TRUNCATED, &rec, &err),
        SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_recording_frame_count(rec), kept, "want '%s'", text);
    cr_assert_not_null(strstr(shoal_recording_damage(rec), text), "%s", shoal_recording_damage(rec));
    expect_frames_equal(rec, ex, kept);
    shoal_recording_destroy(rec);
}

/* Version 3 and 4 frames that lie: about their agent count, their decoded
 * size (a decompression bomb), their zstd frame, their padding, or that
 * decode to values a frame may not hold (in version 4, an agent whose
 * global id changed). Each a clear error naming the frame; the frames
 * before it still read under ALLOW_TRUNCATED. */
static void payloads_that_lie(int version)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "v3.rec");
    static expected_t ex;
    write_recording_version(path, 2, 6, version, &ex);
    const uint32_t per_agent = version == 4 ? 32u : 24u;
    floats_from = version == 4 ? 5u : 3u;
    size_t size = 0;
    uint8_t* data = read_all(path, &size);
    uint8_t* bad = malloc(size);
    const size_t f2 = frame_at(data, &ex, 2, 3);
    const uint32_t n2 = le32(data + f2 + 24);
    cr_assert_geq(n2, 2);
    char want[200];

    /* One agent more than the payload holds. */
    memcpy(bad, data, size);
    put_le32(bad + f2 + 24, n2 + 1);
    snprintf(want, sizeof want,
             "frame 2 at byte %zu: byte %zu: declared payload size %u is not what %u agents need", f2,
             f2 + 32, per_agent * n2, n2 + 1);
    expect_v3_error(bad, size, &ex, want, 2);

    /* A bomb: 100,000,000 agents, the payload size they need (2.4 GB in
     * version 3, 3.2 GB in 4), in a few bytes of zstd. The frame must then
     * store 1/1024 of that, which the file does not have: refused before
     * any allocation. */
    memcpy(bad, data, size);
    put_le32(bad + f2 + 24, 100000000u);
    put_le32(bad + f2 + 32, per_agent * 100000000u);
    snprintf(want, sizeof want, "frame 2 at byte %zu needs %u bytes for 100000000 agents", f2,
             version == 4 ? 3125044u : 2343796u);
    expect_v3_error(bad, size, &ex, want, 2);

    /* One agent fewer, with the payload size to match: the zstd frame
     * still holds the old size. */
    memcpy(bad, data, size);
    put_le32(bad + f2 + 24, n2 - 1);
    put_le32(bad + f2 + 32, per_agent * (n2 - 1));
    fix_record_crc(bad, f2, frame_size_at(bad, f2, 2, 3));
    expect_v3_error(bad, size, &ex, "the zstd frame's content size is not the declared payload size", 2);

    /* Not zstd at all. */
    memcpy(bad, data, size);
    memset(bad + f2 + 40, 0x5A, 4);
    fix_record_crc(bad, f2, frame_size_at(bad, f2, 2, 3));
    expect_v3_error(bad, size, &ex, "is not one zstd frame", 2);

    /* A nonzero byte in the padding after a zstd frame. */
    int padded = 0;
    for (int f = 0; f < ex.frames && !padded; ++f) {
        size_t at = frame_at(data, &ex, f, 3), compressed = le32(data + at + 36);
        if (40 + compressed + 4 == frame_size_at(data, at, 2, 3)) continue; /* no padding */
        padded = 1;
        memcpy(bad, data, size);
        bad[at + 40 + compressed] = 1;
        fix_record_crc(bad, at, frame_size_at(bad, at, 2, 3));
        snprintf(want, sizeof want, "frame %d at byte %zu: byte %zu: nonzero padding", f, at,
                 at + 40 + compressed);
        expect_v3_error(bad, size, &ex, want, f);
    }
    cr_assert(padded, "no frame had padding to damage");

    /* Payloads that decompress well but decode to what no frame holds. */
    size_t edited_size = 0;
    uint8_t* edited = with_payload(data, size, f2, 2, edit_repeat_id, &edited_size);
    expect_v3_error(edited, edited_size, &ex, "agent 1 of", 2);
    expect_v3_error(edited, edited_size, &ex, "agent ids are not ascending and nonzero", 2);
    free(edited);
    edited = with_payload(data, size, f2, 2, edit_generation, &edited_size);
    expect_v3_error(edited, edited_size, &ex, "agent 2 of", 2);
    expect_v3_error(edited, edited_size, &ex, "generation above 65535", 2);
    free(edited);
    const size_t f0 = frame_at(data, &ex, 0, 3);
    edited = with_payload(data, size, f0, 2, edit_nan, &edited_size);
    snprintf(want, sizeof want, "frame 0 at byte %zu: in the payload (compressed at byte %zu), agent 0", f0,
             f0 + 40);
    expect_v3_error(edited, edited_size, &ex, want, 0);
    expect_v3_error(edited, edited_size, &ex, "a position or orientation is not finite", 0);
    free(edited);
    if (version == 4) { /* an agent of frame 1 with another global id in frame 2 */
        const expected_frame_t *e1 = &ex.frame[1], *e2 = &ex.frame[2];
        int found = 0;
        for (int32_t i = 0; i < e2->count && !found; ++i)
            for (int32_t j = 0; j < e1->count && !found; ++j)
                if (e1->ids[j] == e2->ids[i] && e1->generations[j] == e2->generations[i]) {
                    gid_agent = (size_t)i;
                    found = 1;
                }
        cr_assert(found, "no agent in both frames");
        edited = with_payload(data, size, f2, 2, edit_gid, &edited_size);
        snprintf(want, sizeof want,
                 "agent %zu of %u: the global id differs from the same agent's in the frame before",
                 gid_agent, n2);
        expect_v3_error(edited, edited_size, &ex, want, 2);
        free(edited);
    }

    /* Untouched, it loads (the damage above was in copies). */
    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load_memory(data, size, "v3.rec", 0, &rec, &err), SHOAL_OK, "%s",
                 err.message);
    expect_frames_equal(rec, &ex, ex.frames);
    shoal_recording_destroy(rec);
    free(bad);
    free(data);
    scratch_cleanup();
}

Test(recording, version_4_payloads_that_lie_are_refused) { payloads_that_lie(4); }

Test(recording, version_3_payloads_that_lie_are_refused) { payloads_that_lie(3); }

/* A crowd standing still: every difference is 0 and zstd shrinks a frame
 * of 5000 agents (160,000 bytes in version 4) to a few dozen. The writer
 * pads it to 160,000 / 1024 bytes, so that no frame decodes to more than
 * 1024 times what it stores, and it reads back bit for bit. */
Test(recording, version_4_still_crowd_is_padded_and_exact)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "still.rec");
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 5000; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)(i % 100) * 0.7f - 35.0f;
        d.position[1] = (float)(i / 100) * 0.9f - 20.0f;
        d.heading = (float)i * 0.01f - 3.0f;
        d.group = (uint32_t)(i / 1000);
        shoal_agent_t id;
        cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    shoal_recording_header_t h = shoal_recording_default_header();
    shoal_recorder_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_open(path, &h, &rec, &err), SHOAL_OK, "%s", err.message);
    for (int f = 0; f < 4; ++f)
        cr_assert_eq(shoal_recording_write_frame(rec, w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_recording_close(rec, &err), SHOAL_OK, "%s", err.message);

    size_t size = 0;
    uint8_t* data = read_all(path, &size);
    size_t at = header_bytes(data) + 28; /* an empty geometry record */
    for (int f = 0; f < 4; ++f) {
        size_t compressed = le32(data + at + 36), bytes = frame_size_at(data, at, 2, 3);
        cr_assert_eq(le32(data + at + 32), 160000u);
        if (f > 0) { /* predicted exactly: all zeros but the ids, groups */
            cr_expect_lt(compressed, 157u, "frame %d: %zu bytes of zstd", f, compressed);
            cr_expect_eq(bytes, 40u + 160u + 4u,
                         "frame %d: padded to ceil(160000 / 1024) = 157, "
                         "then to 160",
                         f);
            for (size_t i = at + 40 + compressed; i < at + bytes - 4; ++i)
                cr_assert_eq(data[i], 0, "padding byte %zu", i);
        }
        at += bytes;
    }
    cr_assert_eq(at + 12, size);

    shoal_recording_t* loaded = NULL;
    cr_assert_eq(shoal_recording_load(path, 0, &loaded, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_recording_frame_count(loaded), 4);
    expected_frame_t* e = malloc(sizeof *e);
    shoal_agent_t* ids = malloc(5000 * sizeof *ids);
    float* pos = malloc(3 * 5000 * sizeof *pos);
    float* head = malloc(5000 * sizeof *head);
    uint32_t* groups = malloc(5000 * sizeof *groups);
    uint64_t* gids = malloc(5000 * sizeof *gids);
    shoal_agent_batch_t batch = {
        .ids = ids, .positions = pos, .headings = head, .groups = groups, .global_ids = gids};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(w, &batch, 5000, &got), SHOAL_OK);
    cr_assert_eq(got, 5000);
    for (int32_t f = 0; f < 4; ++f) {
        shoal_recording_frame_t fr;
        shoal_recording_frame(loaded, f, &fr);
        cr_assert_eq(fr.count, 5000);
        for (int32_t i = 0; i < got; ++i) { /* a serial world unreordered: row i is id i + 1 */
            cr_assert_eq(fr.ids[i], ids[i].index1);
            cr_assert_eq(fr.global_ids[i], gids[i]);
            cr_assert_eq(fr.global_ids[i], (uint64_t)i);
            cr_assert_eq(fr.groups[i], groups[i]);
            cr_assert_arr_eq(&fr.positions[2 * i], &pos[3 * i], 2 * sizeof(float));
            cr_assert_arr_eq(&fr.headings[i], &head[i], sizeof(float));
        }
    }
    free(e);
    free(ids);
    free(pos);
    free(head);
    free(groups);
    free(gids);
    shoal_recording_destroy(loaded);
    shoal_world_destroy(w);
    free(data);
    scratch_cleanup();
}

/* A world with no agent at its first frame: frames of 0 agents, in both
 * versions (the writer used to write the first one through a NULL
 * buffer). */
Test(recording, empty_world_from_the_first_frame)
{
    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "empty.rec");
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int version = 2; version <= 4; ++version) {
        shoal_recording_header_t h = shoal_recording_default_header();
        shoal_recorder_t* rec = NULL;
        shoal_error_t err = {SHOAL_OK, ""};
        cr_assert_eq(shoal_recording_open_version(path, &h, version, &rec, &err), SHOAL_OK, "%s",
                     err.message);
        for (int f = 0; f < 3; ++f)
            cr_assert_eq(shoal_recording_write_frame(rec, w, &err), SHOAL_OK, "%s", err.message);
        cr_assert_eq(shoal_recording_close(rec, &err), SHOAL_OK, "%s", err.message);
        shoal_recording_t* loaded = NULL;
        cr_assert_eq(shoal_recording_load(path, 0, &loaded, &err), SHOAL_OK, "%s", err.message);
        cr_expect_eq(shoal_recording_version(loaded), version);
        cr_assert_eq(shoal_recording_frame_count(loaded), 3);
        shoal_recording_frame_t fr;
        cr_assert_eq(shoal_recording_frame(loaded, 2, &fr), SHOAL_OK);
        cr_expect_eq(fr.count, 0);
        shoal_recording_destroy(loaded);
    }
    shoal_world_destroy(w);
    scratch_cleanup();
}

Test(recording, writer_errors_name_the_file)
{
    shoal_recorder_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    shoal_recording_header_t h = shoal_recording_default_header();
    cr_expect_eq(shoal_recording_open("/nonexistent-dir/x.rec", &h, &rec, &err), SHOAL_ERR_IO);
    cr_expect_null(rec);
    cr_expect_not_null(strstr(err.message, "/nonexistent-dir/x.rec: cannot create"), "%s", err.message);

    shoal_recording_header_t raw;
    memset(&raw, 0, sizeof raw);
    raw.dimensions = 2;
    raw.dt = 0.1f;
    raw.record_every = 1;
    cr_expect_eq(shoal_recording_open("/tmp/x.rec", &raw, &rec, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_not_null(strstr(err.message, "shoal_recording_default_header"), "%s", err.message);
    h.dt = -1.0f;
    cr_expect_eq(shoal_recording_open("/tmp/x.rec", &h, &rec, &err), SHOAL_ERR_INVALID_ARGUMENT);

    scratch_init();
    char path[128];
    scratch_path(path, sizeof path, "dims.rec");
    h = shoal_recording_default_header();
    cr_assert_eq(shoal_recording_open(path, &h, &rec, &err), SHOAL_OK, "%s", err.message);
    shoal_world_t* w3 = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    cr_expect_eq(shoal_recording_write_frame(rec, w3, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_not_null(strstr(err.message, "3 dimensions, the recording 2"), "%s", err.message);
    cr_expect_eq(shoal_recording_close(rec, &err), SHOAL_OK);
    cr_expect_eq(shoal_recording_close(NULL, &err), SHOAL_OK);
    shoal_world_destroy(w3);

    /* Closed with no frames: a valid, empty, complete recording, with an
     * empty geometry record. */
    shoal_recording_t* loaded = NULL;
    cr_assert_eq(shoal_recording_load(path, 0, &loaded, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_recording_frame_count(loaded), 0);
    cr_expect_eq(shoal_recording_is_complete(loaded), 1);
    shoal_recording_geometry_t g;
    cr_expect_eq(shoal_recording_geometry(loaded, &g), SHOAL_OK);
    cr_expect_eq(g.wall_count, 0);
    cr_expect_eq(g.obstacle_count, 0);
    shoal_recording_destroy(loaded);
    cr_expect_eq(shoal_recording_load("/nonexistent-dir/x.rec", 0, &loaded, &err), SHOAL_ERR_IO);
    cr_expect_not_null(strstr(err.message, "/nonexistent-dir/x.rec: cannot open"), "%s", err.message);
    scratch_cleanup();
}

/* ---- the command ---- */

/* Run `shoal args...` with stdout and stderr into files; returns the exit code. */
static int run_shoal(const char* const* args, const char* out_path, const char* err_path)
{
    const char* argv[16] = {SHOAL_CLI_PATH};
    int argc = 1;
    for (; args[argc - 1] != NULL; ++argc) argv[argc] = args[argc - 1];
    argv[argc] = NULL;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, SHOAL_CLI_PATH, &actions, NULL, (char* const*)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    cr_assert_eq(rc, 0, "spawn: %s", strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) cr_assert_eq(errno, EINTR);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char* slurp(const char* path)
{
    size_t size = 0;
    uint8_t* data = read_all(path, &size);
    data[size] = '\0';
    return (char*)data;
}

Test(recording, cli_run_record_is_readable)
{
    scratch_init();
    char rec_path[128], out[128], errf[128];
    scratch_path(rec_path, sizeof rec_path, "tiny.rec");
    scratch_path(out, sizeof out, "out.txt");
    scratch_path(errf, sizeof errf, "err.txt");
    int code = run_shoal((const char*[]){"run", TINY, "--steps", "10", "--record", rec_path,
                                         "--record-every=3", "--quiet", "--threads", "1", NULL},
                         out, errf);
    char* text = slurp(errf);
    cr_assert_eq(code, 0, "stderr: %s", text);
    free(text);
    text = slurp(out);
    cr_expect_not_null(strstr(text, "(5 frames)"), "%s", text);
    free(text);

    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load(rec_path, 0, &rec, &err), SHOAL_OK, "%s", err.message);
    const shoal_recording_header_t* h = shoal_recording_header(rec);
    cr_expect_eq(h->dimensions, 2);
    cr_expect_eq(h->record_every, 3);
    cr_expect_eq(h->steps_hint, 10u);
    cr_expect_str_eq(h->scenario_name, "tiny");
    cr_expect_str_eq(h->group_names, "crossers\nseekers");
    cr_expect_not_null(strstr(h->scenario_text, "\"antipode\""));
    const uint64_t steps[] = {0, 3, 6, 9, 10}; /* every 3rd step and the last */
    cr_assert_eq(shoal_recording_frame_count(rec), 5);
    for (int32_t f = 0; f < 5; ++f) {
        shoal_recording_frame_t fr;
        shoal_recording_frame(rec, f, &fr);
        cr_expect_eq(fr.step, steps[f]);
        cr_expect_float_eq(fr.time, (double)steps[f] * (double)h->dt, 1e-6);
        cr_expect_eq(fr.count, 200);
        cr_expect_eq(fr.groups[0], 0u);
        cr_expect_eq(fr.groups[199], 1u); /* seekers are added last */
    }
    shoal_recording_geometry_t g;
    cr_expect_eq(shoal_recording_geometry(rec, &g), SHOAL_OK); /* none, recorded as none */
    cr_expect_eq(g.wall_count, 0);
    cr_expect_eq(g.obstacle_count, 0);
    shoal_recording_destroy(rec);

    /* `shoal view`: one HTML file with the recording inside. */
    char html[128];
    scratch_path(html, sizeof html, "tiny.html");
    code = run_shoal((const char*[]){"view", rec_path, "-o", html, NULL}, out, errf);
    text = slurp(errf);
    cr_assert_eq(code, 0, "stderr: %s", text);
    free(text);
    text = slurp(out);
    cr_expect_not_null(strstr(text, html), "prints the page's path: %s", text);
    free(text);
    text = slurp(html);
    cr_expect_not_null(
        strstr(text, "id=\"recording\" data-name=\"tiny.rec\" data-version=\"4\">\nU0hPQUxSRU"),
        "the recording is embedded as base64 (read from version 4, written as version 2)");
    /* no address outside the libraries the page carries (three.js and
     * fzstd name some in their text) */
    static const char* const libraries[] = {"<script id=\"three-js\">", "<script id=\"fzstd-js\">"};
    for (int k = 0; k < 2; ++k) {
        char* open = strstr(text, libraries[k]);
        char* close = open ? strstr(open, "</script>") : NULL;
        if (open && close) memset(open, ' ', (size_t)(close - open));
    }
    cr_expect_null(strstr(text, "http://"), "no network");
    cr_expect_null(strstr(text, "https://"), "no network");
    free(text);

    /* A damaged recording: a clear error, exit 1, no page. */
    FILE* f = fopen(rec_path, "r+b");
    fseek(f, 300, SEEK_SET);
    fputc('!', f);
    fclose(f);
    char html2[128];
    scratch_path(html2, sizeof html2, "bad.html");
    code = run_shoal((const char*[]){"view", rec_path, "-o", html2, NULL}, out, errf);
    text = slurp(errf);
    cr_expect_eq(code, 1, "stderr: %s", text);
    cr_expect_not_null(strstr(text, "checksum mismatch"), "%s", text);
    cr_expect_neq(access(html2, F_OK), 0, "no page for a bad recording");
    free(text);
    scratch_cleanup();
}

/* The default scenario's plaza: 4 open polylines of 3 points (8 segments)
 * and 4 pillars, as the scenario file has them. */
Test(recording, cli_record_keeps_the_plaza_geometry)
{
    scratch_init();
    char rec_path[128], out[128], errf[128];
    scratch_path(rec_path, sizeof rec_path, "plaza.rec");
    scratch_path(out, sizeof out, "out.txt");
    scratch_path(errf, sizeof errf, "err.txt");
    int code = run_shoal((const char*[]){"run", SHOAL_SOURCE_DIR "/scenarios/default.json", "--steps", "2",
                                         "--record", rec_path, "--quiet", "--threads", "1", NULL},
                         out, errf);
    char* text = slurp(errf);
    cr_assert_eq(code, 0, "stderr: %s", text);
    free(text);
    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load(rec_path, 0, &rec, &err), SHOAL_OK, "%s", err.message);
    shoal_recording_geometry_t g;
    cr_assert_eq(shoal_recording_geometry(rec, &g), SHOAL_OK);
    cr_expect_eq(g.time, 0.0);
    cr_assert_eq(g.wall_count, 8);
    const float first[4] = {-40.0f, -10.0f, -40.0f, -40.0f}, last[4] = {-40.0f, 40.0f, -40.0f, 10.0f};
    cr_expect_arr_eq(g.walls, first, sizeof first);
    cr_expect_arr_eq(g.walls + 4 * 7, last, sizeof last);
    cr_assert_eq(g.obstacle_count, 4);
    const float pillars[4][2] = {{-15.0f, -15.0f}, {15.0f, -15.0f}, {15.0f, 15.0f}, {-15.0f, 15.0f}};
    for (int k = 0; k < 4; ++k) {
        cr_expect_eq(g.obstacles[k].id, k);
        cr_expect_eq(g.obstacles[k].center[0], pillars[k][0]);
        cr_expect_eq(g.obstacles[k].center[1], pillars[k][1]);
        cr_expect_eq(g.obstacles[k].radius, 1.5f);
        cr_expect_eq(g.obstacles[k].velocity[0], 0.0f);
    }
    cr_expect_eq(shoal_recording_frame_count(rec), 3);
    shoal_recording_destroy(rec);
    scratch_cleanup();
}

/* A run killed mid-way (SIGKILL: no close, no end record) leaves its
 * finished frames readable: frames are flushed as they are written. */
Test(recording, killed_run_keeps_its_frames)
{
    scratch_init();
    char rec_path[128];
    scratch_path(rec_path, sizeof rec_path, "killed.rec");
    const char* argv[] = {SHOAL_CLI_PATH, "run",      TINY,     "--steps", "100000000", "--threads", "1",
                          "--quiet",      "--record", rec_path, NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    /* (and the size warning of 10^8 frames) */
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, SHOAL_CLI_PATH, &actions, NULL, (char* const*)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    cr_assert_eq(rc, 0, "spawn: %s", strerror(rc));
    /* Wait for 96,720 bytes: 20 frames of 200 agents uncompressed (4836
     * bytes each), more compressed; at most 60 s. */
    for (int i = 0; i < 6000; ++i) {
        FILE* f = fopen(rec_path, "rb");
        long size = 0;
        if (f != NULL) {
            fseek(f, 0, SEEK_END);
            size = ftell(f);
            fclose(f);
        }
        if (size > 20 * 4836) break;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) cr_assert_eq(errno, EINTR);
    cr_assert(WIFSIGNALED(status), "the run ended before it was killed");

    shoal_recording_t* rec = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load(rec_path, 0, &rec, &err), SHOAL_ERR_PARSE);
    cr_expect_not_null(strstr(err.message, "truncated after frame"), "%s", err.message);
    cr_assert_eq(shoal_recording_load(rec_path, SHOAL_RECORDING_ALLOW_TRUNCATED, &rec, &err), SHOAL_OK, "%s",
                 err.message);
    cr_expect_geq(shoal_recording_frame_count(rec), 20);
    cr_expect_eq(shoal_recording_is_complete(rec), 0);
    for (int32_t f = 0; f < shoal_recording_frame_count(rec); ++f) {
        shoal_recording_frame_t fr;
        shoal_recording_frame(rec, f, &fr);
        cr_expect_eq(fr.step, (uint64_t)f);
        cr_expect_eq(fr.count, 200);
    }
    shoal_recording_destroy(rec);
    scratch_cleanup();
}

/* Start `shoal run ARGS... --record REC`, wait until REC has its header
 * (the size warning comes before the file is opened, so by then it is on
 * stderr), then kill the run. Returns what the run wrote on stderr. */
static char* start_then_kill(const char* const* args, const char* rec_path, const char* err_path)
{
    const char* argv[24] = {SHOAL_CLI_PATH};
    int argc = 1;
    for (; args[argc - 1] != NULL; ++argc) argv[argc] = args[argc - 1];
    argv[argc] = NULL;
    unlink(rec_path); /* a file from an earlier run would end the wait at once */
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, SHOAL_CLI_PATH, &actions, NULL, (char* const*)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    cr_assert_eq(rc, 0, "spawn: %s", strerror(rc));
    long size = 0;
    for (int i = 0; i < 6000 && size < 64; ++i) { /* at most 60 s */
        FILE* f = fopen(rec_path, "rb");
        if (f != NULL) {
            fseek(f, 0, SEEK_END);
            size = ftell(f);
            fclose(f);
        }
        if (size < 64) nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) cr_assert_eq(errno, EINTR);
    cr_assert_geq(size, 64, "the run never wrote its recording's header");
    return slurp(err_path);
}

/* `--record` estimates the recording's size (agents x frames x bytes per
 * agent, 10 in 2D for versions 3 and 4, 24 for version 2) and warns on stderr,
 * before the run, when it reaches 1 GiB, with the --record-every that
 * brings it under; below that it says nothing. */
Test(recording, cli_record_warns_before_a_huge_recording)
{
    scratch_init();
    char rec_path[128], errf[128];
    scratch_path(rec_path, sizeof rec_path, "huge.rec");
    scratch_path(errf, sizeof errf, "err.txt");
    /* 200 agents x 2,000,000,001 frames x (48 + 200 x 10) bytes: 3814.7 GiB;
     * every 5000th step, 400,002 frames: 781 MiB. */
    char* text = start_then_kill((const char*[]){"run", TINY, "--steps", "2000000000", "--threads", "1",
                                                 "--quiet", "--record", rec_path, NULL},
                                 rec_path, errf);
    char want[512];
    snprintf(want, sizeof want,
             "shoal: warning: the recording %s may take up to about 3814.7 GiB (200 agents x "
             "2000000001 frames x 10 bytes per agent, format version 4); --record-every 5000 would "
             "make it about 781 MiB\n",
             rec_path);
    cr_expect_str_eq(text, want);
    free(text);

    /* 300,000 steps: 1.4 GiB in version 2, 586 MiB in version 4. */
    text = start_then_kill((const char*[]){"run", TINY, "--steps", "300000", "--threads", "1", "--quiet",
                                           "--record", rec_path, "--record-version", "2", NULL},
                           rec_path, errf);
    cr_expect_not_null(strstr(text, "may take up to about 1.4 GiB (200 agents x 300001 frames x 24 "
                                    "bytes per agent, format version 2); --record-every 2"),
                       "%s", text);
    free(text);
    text = start_then_kill((const char*[]){"run", TINY, "--steps", "300000", "--threads", "1", "--quiet",
                                           "--record", rec_path, NULL},
                           rec_path, errf);
    cr_expect_str_eq(text, "", "no warning under 1 GiB");
    free(text);
    scratch_cleanup();
}

/* `--record-version 2` writes the uncompressed format, 3 the compressed
 * one without global ids; every version holds the same frames, bit for
 * bit; other versions are usage errors. */
Test(recording, cli_record_versions_2_3_and_4_hold_the_same_frames)
{
    scratch_init();
    char v2[128], v3[128], v4[128], out[128], errf[128];
    scratch_path(v2, sizeof v2, "v2.rec");
    scratch_path(v3, sizeof v3, "v3.rec");
    scratch_path(v4, sizeof v4, "v4.rec");
    scratch_path(out, sizeof out, "out.txt");
    scratch_path(errf, sizeof errf, "err.txt");
    int code = run_shoal((const char*[]){"run", TINY, "--steps", "30", "--threads", "1", "--quiet",
                                         "--record", v2, "--record-version", "2", NULL},
                         out, errf);
    cr_assert_eq(code, 0);
    char* text = slurp(out);
    cr_expect_not_null(strstr(text, "(31 frames) in format version 2, "), "%s", text);
    free(text);
    code = run_shoal((const char*[]){"run", TINY, "--steps", "30", "--threads", "1", "--quiet", "--record",
                                     v3, "--record-version", "3", NULL},
                     out, errf);
    cr_assert_eq(code, 0);
    text = slurp(out);
    cr_expect_not_null(strstr(text, "(31 frames) in format version 3, "), "%s", text);
    free(text);
    code = run_shoal(
        (const char*[]){"run", TINY, "--steps", "30", "--threads", "1", "--quiet", "--record", v4, NULL}, out,
        errf);
    cr_assert_eq(code, 0);
    text = slurp(out);
    cr_expect_not_null(strstr(text, "(31 frames) in format version 4, "), "%s", text);
    free(text);
    shoal_recording_t *a = NULL, *b = NULL, *c = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load(v2, 0, &a, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_recording_load(v3, 0, &b, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_recording_load(v4, 0, &c, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_recording_version(a), 2);
    cr_expect_eq(shoal_recording_version(b), 3);
    cr_expect_eq(shoal_recording_version(c), 4);
    cr_expect_str_eq(shoal_recording_header(a)->scenario_text, shoal_recording_header(b)->scenario_text);
    cr_assert_eq(shoal_recording_frame_count(a), 31);
    cr_assert_eq(shoal_recording_frame_count(b), 31);
    for (int32_t f = 0; f < 31; ++f) {
        shoal_recording_frame_t x, y;
        shoal_recording_frame(a, f, &x);
        shoal_recording_frame(b, f, &y);
        cr_assert_eq(x.count, y.count);
        cr_assert_eq(x.step, y.step);
        cr_assert_eq(x.time, y.time);
        size_t n = (size_t)x.count;
        cr_assert_arr_eq(x.ids, y.ids, 4 * n);
        cr_assert_arr_eq(x.generations, y.generations, 4 * n);
        cr_assert_arr_eq(x.groups, y.groups, 4 * n);
        cr_assert_arr_eq(x.positions, y.positions, 8 * n, "frame %d", f);
        cr_assert_arr_eq(x.headings, y.headings, 4 * n, "frame %d", f);
        shoal_recording_frame_t z;
        shoal_recording_frame(c, f, &z);
        cr_assert_eq(z.count, x.count);
        cr_assert_arr_eq(z.ids, x.ids, 4 * n);
        cr_assert_arr_eq(z.positions, x.positions, 8 * n, "frame %d", f);
        cr_assert_null(x.global_ids);
        cr_assert_null(y.global_ids);
        /* tiny.json adds its agents at once and removes none: ids 0..n-1
         * in slot order */
        for (size_t i = 0; i < n; ++i) cr_assert_eq(z.global_ids[i], (uint64_t)z.ids[i] - 1u);
    }
    shoal_recording_destroy(a);
    shoal_recording_destroy(b);
    shoal_recording_destroy(c);
    size_t s2 = 0, s3 = 0, s4 = 0;
    free(read_all(v2, &s2));
    free(read_all(v3, &s3));
    free(read_all(v4, &s4));
    cr_expect_gt(s2, 3 * s3, "version 2: %zu bytes, version 3: %zu", s2, s3);
    /* The global ids, predicted from the frame before, cost almost nothing. */
    cr_expect_lt((double)s4, 1.02 * (double)s3, "version 3: %zu bytes, version 4: %zu", s3, s4);

    char none[128];
    scratch_path(none, sizeof none, "none.rec");
    code = run_shoal(
        (const char*[]){"run", TINY, "--steps", "3", "--record", none, "--record-version", "1", NULL}, out,
        errf);
    cr_expect_eq(code, 2);
    text = slurp(errf);
    cr_expect_not_null(strstr(text, "--record-version needs an integer in 2..5, not '1'"), "%s", text);
    free(text);
    cr_expect_neq(access(none, F_OK), 0, "a usage error leaves no file");
    code = run_shoal((const char*[]){"run", TINY, "--steps", "3", "--record-version", "2", NULL}, out, errf);
    cr_expect_eq(code, 2);
    text = slurp(errf);
    cr_expect_not_null(strstr(text, "--record-version needs --record"), "%s", text);
    free(text);
    scratch_cleanup();
}

/* The aim: the default scenario's recording at least 4 times smaller than
 * uncompressed (its first 100 steps here; the whole run is 5.6 times,
 * docs/recording.md). */
Test(recording, cli_default_scenario_records_4x_smaller)
{
    scratch_init();
    char v2[128], v3[128], out[128], errf[128];
    scratch_path(v2, sizeof v2, "v2.rec");
    scratch_path(v3, sizeof v3, "v3.rec");
    scratch_path(out, sizeof out, "out.txt");
    scratch_path(errf, sizeof errf, "err.txt");
    const char* scene = SHOAL_SOURCE_DIR "/scenarios/default.json";
    cr_assert_eq(run_shoal((const char*[]){"run", scene, "--steps", "100", "--threads", "1", "--quiet",
                                           "--record", v2, "--record-version", "2", NULL},
                           out, errf),
                 0);
    cr_assert_eq(run_shoal((const char*[]){"run", scene, "--steps", "100", "--threads", "1", "--quiet",
                                           "--record", v3, NULL},
                           out, errf),
                 0);
    size_t s2 = 0, s3 = 0;
    free(read_all(v2, &s2));
    free(read_all(v3, &s3));
    cr_expect_geq(s2, 4 * s3, "version 2: %zu bytes, version 3: %zu (%.2f times smaller)", s2, s3,
                  (double)s2 / (double)s3);
    scratch_cleanup();
}

/* ---- memory bounded per frame, not per file ---- */

/* Peak resident memory of this process so far, MiB (Linux: VmHWM). */
static double peak_rss_mib(void)
{
    FILE* f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    char line[256];
    double kib = -1.0;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0) kib = strtod(line + 6, NULL);
    fclose(f);
    cr_assert_geq(kib, 0.0);
    return kib / 1024.0;
}

/* A crowd of 10,000 standing still, recorded 3,400 times: about 1.3 MB of
 * file (each frame stores D / 1024 bytes at least) that decodes to 1.09 GB,
 * above SHOAL_RECORDING_LOAD_LIMIT. The whole-file reader refuses it before
 * decoding, naming the limit; the frame reader reads every frame with a few
 * frames' memory. */
Test(recording, a_recording_decoding_past_the_load_limit_is_refused_whole_and_read_frame_by_frame,
     .timeout = 300)
{
    enum { AGENTS = 10000, FRAMES = 3400 };
    scratch_init();
    char path[256];
    scratch_path(path, sizeof path, "still.rec");
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    shoal_error_t e;
    cr_assert_eq(shoal_world_create(&def, &w, &e), SHOAL_OK, "%s", e.message);
    for (int i = 0; i < AGENTS; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)(i % 100);
        d.position[1] = (float)(i / 100);
        d.heading = 0.25f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    shoal_recording_header_t h = shoal_recording_default_header();
    shoal_recorder_t* r = NULL;
    cr_assert_eq(shoal_recording_open(path, &h, &r, &e), SHOAL_OK, "%s", e.message);
    for (int k = 0; k < FRAMES; ++k)
        cr_assert_eq(shoal_recording_write_frame(r, w, &e), SHOAL_OK, "frame %d: %s", k, e.message);
    cr_assert_eq(shoal_recording_close(r, &e), SHOAL_OK, "%s", e.message);
    shoal_world_destroy(w);
    size_t file_size = 0;
    free(read_all(path, &file_size));
    cr_assert_lt(file_size, (size_t)4 << 20, "%zu bytes", file_size);

    double before = peak_rss_mib();
    shoal_recording_t* rec = NULL;
    cr_assert_eq(shoal_recording_load(path, 0, &rec, &e), SHOAL_ERR_CAPACITY, "%s", e.message);
    cr_assert_null(rec);
    cr_expect_not_null(strstr(e.message, "still.rec"), "%s", e.message);
    cr_expect_not_null(strstr(e.message, "1 GiB"), "%s", e.message);
    cr_expect_not_null(strstr(e.message, "SHOAL_RECORDING_LOAD_LIMIT"), "%s", e.message);
    cr_expect_not_null(strstr(e.message, "frame by frame"), "%s", e.message);

    shoal_recording_reader_t* rd = NULL;
    cr_assert_eq(shoal_recording_reader_open(path, 0, &rd, &e), SHOAL_OK, "%s", e.message);
    cr_assert_eq(shoal_recording_reader_frame_count(rd), FRAMES);
    cr_expect(shoal_recording_reader_is_complete(rd));
    cr_expect_eq(shoal_recording_reader_decoded_bytes(rd), (uint64_t)FRAMES * AGENTS * 32u);
    cr_expect_gt(shoal_recording_reader_decoded_bytes(rd), SHOAL_RECORDING_LOAD_LIMIT);
    for (int32_t k = 0; k < FRAMES; ++k) {
        shoal_recording_frame_t f;
        cr_assert_eq(shoal_recording_reader_frame(rd, k, &f, &e), SHOAL_OK, "frame %d: %s", k, e.message);
        cr_assert_eq(f.count, AGENTS, "frame %d", k);
        /* Agent ids ascend from 1: agent i stands where it was added. */
        int32_t i = (k * 7919) % AGENTS;
        cr_assert_eq(f.ids[i], (uint32_t)i + 1u, "frame %d", k);
        cr_assert_eq(f.global_ids[i], (uint64_t)i, "frame %d", k);
        cr_assert_eq(f.positions[2 * i], (float)(i % 100), "frame %d agent %d", k, i);
        cr_assert_eq(f.positions[2 * i + 1], (float)(i / 100), "frame %d agent %d", k, i);
        cr_assert_eq(f.headings[i], 0.25f, "frame %d agent %d", k, i);
    }
    /* Back to the start, and a frame with its two neighbours still valid. */
    shoal_recording_frame_t a, b, c;
    cr_assert_eq(shoal_recording_reader_frame(rd, 10, &a, &e), SHOAL_OK, "%s", e.message);
    cr_assert_eq(shoal_recording_reader_frame(rd, 11, &b, &e), SHOAL_OK, "%s", e.message);
    cr_assert_eq(shoal_recording_reader_frame(rd, 12, &c, &e), SHOAL_OK, "%s", e.message);
    cr_expect_eq(a.positions[2 * 4321], 21.0f);
    cr_expect_eq(b.positions[2 * 4321 + 1], 43.0f);
    cr_expect_eq(c.ids[AGENTS - 1], (uint32_t)AGENTS);
    cr_expect_eq(shoal_recording_reader_frame(rd, FRAMES, &a, &e), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_recording_reader_close(rd);
    double after = peak_rss_mib();
    /* 1.09 GB decoded in all; one frame is 320 KB. */
    cr_expect_lt(after - before, 32.0, "peak resident memory grew by %.1f MiB reading it", after - before);
    scratch_cleanup();
}

/* SIGINT and SIGTERM end `shoal run` after the step under way: the last
 * step's frame is recorded and the file closed whole, the summary says so,
 * and the exit code is 128 + the signal. */
static void interrupted_run(int sig, const char* name)
{
    scratch_init();
    char rec[128], out[128], errf[128];
    scratch_path(rec, sizeof rec, "cut.rec");
    scratch_path(out, sizeof out, "out.json");
    scratch_path(errf, sizeof errf, "err.txt");
    const char* argv[] = {SHOAL_CLI_PATH,
                          "run",
                          SHOAL_SOURCE_DIR "/scenarios/default.json",
                          "--steps",
                          "100000000",
                          "--threads",
                          "1",
                          "--record",
                          rec,
                          "--json",
                          NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, SHOAL_CLI_PATH, &actions, NULL, (char* const*)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    cr_assert_eq(rc, 0, "spawn: %s", strerror(rc));
    long size = 0; /* a few frames: the run is stepping */
    for (int i = 0; i < 6000 && size < 40000; ++i) {
        FILE* f = fopen(rec, "rb");
        if (f != NULL) {
            fseek(f, 0, SEEK_END);
            size = ftell(f);
            fclose(f);
        }
        if (size < 40000) nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(pid, sig);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) cr_assert_eq(errno, EINTR);
    cr_assert_geq(size, 40000, "the run never recorded a few frames");
    cr_assert(WIFEXITED(status), "the signal killed the run (status %d)", status);
    cr_assert_eq(WEXITSTATUS(status), 128 + sig, "%s", slurp(errf));
    char* text = slurp(out);
    char want[64];
    snprintf(want, sizeof want, "\"interrupted\":\"%s\"", name);
    cr_assert_not_null(strstr(text, want), "%s", text);
    const char* at = strstr(text, "\"steps\":");
    cr_assert_not_null(at);
    long long steps = strtoll(at + 8, NULL, 10);
    cr_assert(steps > 0 && steps < 100000000, "steps %lld", steps);
    free(text);
    shoal_recording_t* r = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_load(rec, 0, &r, &err), SHOAL_OK, "%s", err.message);
    cr_expect(shoal_recording_is_complete(r));
    cr_assert_eq(shoal_recording_frame_count(r), steps + 1, "frame 0 and one a step");
    shoal_recording_frame_t last;
    shoal_recording_frame(r, (int32_t)steps, &last);
    cr_expect_eq(last.step, (uint64_t)steps, "the last step's frame");
    shoal_recording_destroy(r);
    scratch_cleanup();
}

Test(recording, cli_sigint_ends_the_run_with_its_files_whole) { interrupted_run(SIGINT, "SIGINT"); }

Test(recording, cli_sigterm_ends_the_run_with_its_files_whole) { interrupted_run(SIGTERM, "SIGTERM"); }

/* --record-max: no file passes it; the frame that would is the first of
 * the next file (OUT-2.rec, ...), each a whole recording, together every
 * frame once in order. The library refuses a frame past its limit and
 * stays usable. */
Test(recording, cli_record_max_goes_on_in_numbered_files)
{
    scratch_init();
    char rec[128], out[128], errf[128];
    scratch_path(rec, sizeof rec, "part.rec");
    scratch_path(out, sizeof out, "out.txt");
    scratch_path(errf, sizeof errf, "err.txt");
    int code = run_shoal((const char*[]){"run", TINY, "--steps", "300", "--threads", "1", "--quiet",
                                         "--record", rec, "--record-max", "64KiB", NULL},
                         out, errf);
    cr_assert_eq(code, 0, "%s", slurp(errf));
    char* text = slurp(out);
    cr_expect_not_null(strstr(text, "files of at most 65536 bytes, 301 frames"), "%s", text);
    free(text);
    uint64_t next_step = 0;
    int parts = 0;
    for (int k = 1; k < 100; ++k) {
        char path[160];
        if (k == 1)
            snprintf(path, sizeof path, "%s", rec);
        else
            snprintf(path, sizeof path, "%s/part-%d.rec", scratch_dir, k);
        if (access(path, F_OK) != 0) break;
        size_t size = 0;
        free(read_all(path, &size));
        cr_assert_leq(size, 65536u, "%s", path);
        shoal_recording_t* r = NULL;
        shoal_error_t err = {SHOAL_OK, ""};
        cr_assert_eq(shoal_recording_load(path, 0, &r, &err), SHOAL_OK, "%s", err.message);
        for (int32_t f = 0; f < shoal_recording_frame_count(r); ++f) {
            shoal_recording_frame_t fr;
            shoal_recording_frame(r, f, &fr);
            cr_assert_eq(fr.step, next_step, "%s frame %d", path, f);
            next_step += 1;
        }
        shoal_recording_destroy(r);
        parts = k;
    }
    cr_expect_geq(parts, 3, "tiny.json's 301 frames take more than 128 KiB");
    cr_expect_eq(next_step, 301u);

    code = run_shoal((const char*[]){"run", TINY, "--record", rec, "--record-max", "1MB", NULL}, out, errf);
    cr_expect_eq(code, 2);
    text = slurp(errf);
    cr_expect_not_null(strstr(text, "--record-max needs a size from 64KiB to 4GiB"), "%s", text);
    free(text);

    /* The library: a frame past the limit is refused, nothing of it written. */
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 50; ++i) add_agent(w, i);
    shoal_recording_header_t h = shoal_recording_default_header();
    shoal_recorder_t* rw = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_assert_eq(shoal_recording_open(rec, &h, &rw, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_recording_set_max_bytes(rw, SHOAL_RECORDING_MAX_FILE + 1), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_recording_set_max_bytes(rw, 10), SHOAL_ERR_INVALID_ARGUMENT);
    const uint64_t written = shoal_recording_bytes_written(rw);
    cr_assert_gt(written, 0u);
    cr_assert_eq(shoal_recording_set_max_bytes(rw, written + 200), SHOAL_OK);
    cr_assert_eq(shoal_recording_write_frame(rw, w, &err), SHOAL_ERR_CAPACITY);
    cr_expect_not_null(strstr(err.message, "past its limit"), "%s", err.message);
    cr_assert_eq(shoal_recording_set_max_bytes(rw, SHOAL_RECORDING_MAX_FILE), SHOAL_OK);
    cr_assert_eq(shoal_recording_write_frame(rw, w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_recording_close(rw, &err), SHOAL_OK, "%s", err.message);
    shoal_recording_t* r = NULL;
    cr_assert_eq(shoal_recording_load(rec, 0, &r, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_recording_frame_count(r), 1);
    shoal_recording_destroy(r);
    shoal_world_destroy(w);
    scratch_cleanup();
}
