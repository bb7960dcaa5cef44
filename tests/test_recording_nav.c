/* Navigation fields in recordings (format version 5, docs/recording.md,
 * "Navigation field record"): the U-wall scenario's grid and field read back
 * within the stated error, through both readers; a world without fields
 * writes exactly what version 4 writes; congestion and a goal added write
 * new records where the fields were solved anew; damaged records give
 * errors that name the record; and `shoal view` puts the fields in its page.
 *
 * Worlds are serial (one thread): Criterion forks, and nothing here needs
 * OpenMP. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shoal/recording.h>
#include <shoal/scenario.h>

#include "cli_run.h"

#define U_WALL SHOAL_SOURCE_DIR "/scenarios/nav_u_wall.json"
#define TINY SHOAL_SOURCE_DIR "/scenarios/tiny.json"

static char dir[64];

/* A 200 m x 200 m floor at 0.1 m, with walls across it (docs/recording.md's
 * sizes). */
static const char floor200[] =
    "{\"name\": \"floor200\", \"dimensions\": 2, \"dt\": 0.05, \"walls\": ["
    "{\"points\": [[50, 20], [50, 180]]}, {\"points\": [[100, 0], [100, 90]]},"
    "{\"points\": [[100, 110], [100, 200]]}, {\"points\": [[150, 40], [150, 160], [130, 160]]}],"
    "\"nav\": {\"cell\": 0.1, \"bounds\": [0, 0, 200, 200],"
    "\"goals\": [{\"name\": \"exit\", \"line\": [[199, 90], [199, 110]]}]},"
    "\"groups\": [{\"name\": \"walkers\", \"count\": 10, \"spawn\": {\"shape\": \"box\", "
    "\"center\": [20, 100], \"size\": [20, 100]}, \"behaviors\": {\"navigate\": {\"weight\": 1}},"
    "\"nav\": {\"goal\": \"exit\"}, \"crowd\": {\"preset\": \"pedestrian\"}}]}";


static void make_dir(void)
{
    strcpy(dir, "/tmp/shoal_recnav_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    cr_expect_eq(system(command), 0);
}

static uint8_t* read_bytes(const char* path, size_t* size)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t* data = malloc((size_t)n + 1);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    data[n] = 0;
    *size = (size_t)n;
    return data;
}

/* The base64 of the page's nav-fields tag, decoded; its attributes in
 * `attributes`. */
static uint8_t* page_fields(const char* page, size_t* size, char* attributes, size_t attributes_size)
{
    size_t n = 0;
    char* text = (char*)read_bytes(page, &n);
    const char* tag = strstr(text, "<script type=\"application/octet-stream\" id=\"nav-fields\"");
    cr_assert_not_null(tag, "no field data in the page");
    const char* start = strchr(tag, '>') + 1;
    snprintf(attributes, attributes_size, "%.*s", (int)(start - tag), tag);
    const char* close = strstr(start, "</script>");
    uint8_t* blob = malloc((size_t)(close - start));
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t v = 0;
    int bits = 0;
    *size = 0;
    for (const char* c = start; c < close; ++c) {
        if (*c == '\n' || *c == '=') continue;
        const char* d = strchr(digits, *c);
        cr_assert(d != NULL && *c != '\0');
        v = v << 6 | (uint32_t)(d - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            blob[(*size)++] = (uint8_t)(v >> bits);
        }
    }
    free(text);
    return blob;
}

static shoal_world_t* scenario_world(const char* path)
{
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_file(path, &sc, &err), SHOAL_OK, "%s", err.message);
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    def.thread_count = 1;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_scenario_populate(sc, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_scenario_destroy(sc);
    return w;
}

static shoal_recorder_t* open_version(const char* path, const shoal_world_t* w, int32_t version)
{
    shoal_recording_header_t h = shoal_recording_default_header();
    h.dimensions = shoal_world_dimensions(w);
    h.dt = 0.05f;
    shoal_recorder_t* rec = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_recording_open_version(path, &h, version, &rec, &err), SHOAL_OK, "%s", err.message);
    return rec;
}

static void write_frame(shoal_recorder_t* rec, const shoal_world_t* w)
{
    shoal_error_t err;
    cr_assert_eq(shoal_recording_write_frame(rec, w, &err), SHOAL_OK, "%s", err.message);
}

static void close_recorder(shoal_recorder_t* rec)
{
    shoal_error_t err;
    cr_assert_eq(shoal_recording_close(rec, &err), SHOAL_OK, "%s", err.message);
}

/* The record `nav` holds the world's grid and the field of goal `goal`
 * (its k-th), each value within max_error plus float rounding. */
static void expect_world_fields(const shoal_world_t* w, const shoal_recording_nav_t* nav, int32_t k,
                                int32_t goal)
{
    shoal_nav_grid_info_t g;
    cr_assert_eq(shoal_world_nav_grid(w, &g), SHOAL_OK);
    cr_expect_eq(nav->nx, g.nx);
    cr_expect_eq(nav->ny, g.ny);
    cr_expect_eq(nav->cell, g.cell);
    cr_expect_eq(nav->origin[0], g.origin[0]);
    cr_expect_eq(nav->origin[1], g.origin[1]);
    cr_assert_lt(k, nav->goal_count);
    cr_expect_eq(nav->goals[k], goal);
    const int64_t cells = (int64_t)g.nx * g.ny;
    float* blocked = malloc((size_t)cells * sizeof *blocked);
    float* T = malloc((size_t)cells * sizeof *T);
    int64_t n = 0;
    cr_assert_eq(shoal_world_nav_field(w, -1, blocked, cells, &n), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_nav_field(w, goal, T, cells, &n), SHOAL_OK, "%s", shoal_world_last_error(w));
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t c = 0; c < cells; ++c)
        if (isfinite(T[c])) {
            lo = fminf(lo, T[c]);
            hi = fmaxf(hi, T[c]);
        }
    /* The error stated: half of one of 65,534 steps between the least and
     * largest value. */
    const float max_error = nav->max_error[k];
    cr_expect_float_eq(max_error, (hi - lo) / 131068.0f, 1e-6f * hi, "max_error %g", (double)max_error);
    const float* F = nav->fields + (int64_t)k * cells;
    int64_t blocked_cells = 0, worst_at = -1;
    double worst = 0.0;
    for (int64_t c = 0; c < cells; ++c) {
        cr_assert_eq(nav->blocked[c], blocked[c] != 0.0f, "cell %lld", (long long)c);
        blocked_cells += nav->blocked[c];
        cr_assert_eq(isfinite(F[c]), isfinite(T[c]), "cell %lld: %g against %g", (long long)c, (double)F[c],
                     (double)T[c]);
        if (!isfinite(T[c])) continue;
        double e = fabs((double)F[c] - (double)T[c]);
        if (e > worst) {
            worst = e;
            worst_at = c;
        }
    }
    cr_expect_gt(blocked_cells, 0, "the U wall blocks cells");
    cr_expect_leq(worst, (double)max_error + 1e-6 * hi, "cell %lld: %g from the world's field (max_error %g)",
                  (long long)worst_at, worst, (double)max_error);
    free(blocked);
    free(T);
}

Test(recording_nav, the_u_wall_grid_and_field_read_back_within_the_stated_error)
{
    make_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/u.rec", dir);
    shoal_world_t* w = scenario_world(U_WALL);
    shoal_recorder_t* rec = open_version(path, w, 5);
    write_frame(rec, w); /* frame 0, with the record before it (populating solved the fields) */
    for (int s = 0; s < 6; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
        write_frame(rec, w); /* no congestion: no new record */
    }
    close_recorder(rec);

    shoal_recording_t* r = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_recording_load(path, 0, &r, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_recording_version(r), 5);
    cr_assert_eq(shoal_recording_nav_count(r), 1);
    shoal_recording_nav_t nav;
    cr_expect_eq(shoal_recording_nav_at(r, -1, &nav), SHOAL_ERR_NOT_FOUND);
    cr_expect_eq(nav.fields, NULL);
    cr_assert_eq(shoal_recording_nav_at(r, 6, &nav), SHOAL_OK);
    cr_expect_eq(nav.frame, 0);
    cr_expect_eq(nav.step, 0u);
    cr_expect_eq(nav.goal_count, 1);
    expect_world_fields(w, &nav, 0, 0);
    shoal_recording_destroy(r);

    /* The same through the frame reader. */
    shoal_recording_reader_t* rd = NULL;
    cr_assert_eq(shoal_recording_reader_open(path, 0, &rd, &err), SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_recording_reader_nav_count(rd), 1);
    cr_expect_eq(shoal_recording_reader_nav_index(rd, -1), -1);
    cr_expect_eq(shoal_recording_reader_nav_index(rd, 0), 0);
    cr_expect_eq(shoal_recording_reader_nav_index(rd, 6), 0);
    cr_assert_eq(shoal_recording_reader_nav_info(rd, 0, &nav), SHOAL_OK);
    cr_expect_eq(nav.fields, NULL);
    cr_expect_eq(nav.goal_count, 1);
    cr_expect_eq(shoal_recording_reader_nav(rd, 1, &nav, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_recording_reader_nav(rd, 0, &nav, &err), SHOAL_OK, "%s", err.message);
    expect_world_fields(w, &nav, 0, 0);
    shoal_recording_reader_close(rd);
    shoal_world_destroy(w);
    remove_dir();
}

/* A world without navigation fields: version 5 writes what version 4
 * writes, byte for byte but for the version and the header's checksum, and
 * `shoal run --record` writes version 4 for it. */
Test(recording_nav, a_world_without_fields_writes_what_version_4_writes)
{
    make_dir();
    char v4[128], v5[128];
    snprintf(v4, sizeof v4, "%s/v4.rec", dir);
    snprintf(v5, sizeof v5, "%s/v5.rec", dir);
    shoal_world_t* w = scenario_world(TINY);
    shoal_recorder_t* a = open_version(v4, w, 4);
    shoal_recorder_t* b = open_version(v5, w, 5);
    for (int s = 0; s < 6; ++s) {
        write_frame(a, w);
        write_frame(b, w);
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    }
    close_recorder(a);
    close_recorder(b);
    shoal_world_destroy(w);
    size_t n4 = 0, n5 = 0;
    uint8_t* d4 = read_bytes(v4, &n4);
    uint8_t* d5 = read_bytes(v5, &n5);
    cr_assert_eq(n4, n5);
    cr_expect_eq(d4[8], 4);
    cr_expect_eq(d5[8], 5);
    uint32_t header =
        (uint32_t)d4[12] | (uint32_t)d4[13] << 8 | (uint32_t)d4[14] << 16 | (uint32_t)d4[15] << 24;
    size_t differ = 0;
    for (size_t i = 0; i < n4; ++i)
        if (d4[i] != d5[i]) {
            cr_expect(i == 8 || (i >= header - 4 && i < header), "byte %zu differs", i);
            differ += 1;
        }
    cr_expect_geq(differ, 1u);
    free(d4);
    free(d5);

    /* The command: version 4 without goals, version 5 with them. */
    char tiny[128], u[128];
    snprintf(tiny, sizeof tiny, "%s/tiny.rec", dir);
    snprintf(u, sizeof u, "%s/u.rec", dir);
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "3", "--threads", "1", "--quiet", "--record", tiny, NULL},
            &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"run", U_WALL, "--steps", "3", "--threads", "1", "--quiet", "--record", u, NULL},
            &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    d4 = read_bytes(tiny, &n4);
    d5 = read_bytes(u, &n5);
    cr_expect_eq(d4[8], 4);
    cr_expect_eq(d5[8], 5);
    cr_expect_not_null(memmem(d5, n5, "NAVF", 4));
    cr_expect_null(memmem(d4, n4, "NAVF", 4));
    free(d4);
    free(d5);
    remove_dir();
}

/* A room whose walkers crowd a door: congestion solves the fields again
 * every 5 steps, each time with another density, and a goal added later
 * is solved at the next step. */
Test(recording_nav, congestion_and_a_new_goal_write_new_field_records)
{
    make_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/c.rec", dir);
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    const float room[] = {6, 1, 6, 4, 0, 4, 0, -4, 6, -4, 6, -1};
    cr_assert_eq(shoal_world_add_wall(w, room, 6, 0, NULL), SHOAL_OK);
    shoal_nav_params_t p = shoal_nav_params_default();
    p.cell = 0.2f;
    p.density_weight = 2.0f;
    p.density_interval = 5;
    cr_assert_eq(shoal_world_set_nav(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_nav_goal_t out = {.kind = SHOAL_NAV_POINT, .count = 1, .points = {{8, 0}}};
    int32_t goal = -1;
    cr_assert_eq(shoal_world_add_nav_goal(w, &out, &goal), SHOAL_OK);
    for (int i = 0; i < 24; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
        d.position[0] = 3.5f + 0.6f * (float)(i % 4);
        d.position[1] = -1.5f + 0.6f * (float)(i / 4);
        d.weights[SHOAL_BEHAVIOR_NAVIGATE] = 1.0f;
        d.nav.goal = goal;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    shoal_recorder_t* rec = open_version(path, w, 5);
    write_frame(rec, w);
    int32_t second = -1;
    for (int s = 1; s <= 12; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
        if (s == 7) {
            shoal_nav_goal_t back = {.kind = SHOAL_NAV_POINT, .count = 1, .points = {{1, 0}}};
            cr_assert_eq(shoal_world_add_nav_goal(w, &back, &second), SHOAL_OK);
            write_frame(rec, w); /* the new goal is not solved yet: no record */
        } else {
            write_frame(rec, w);
        }
    }
    close_recorder(rec);

    shoal_recording_t* r = NULL;
    cr_assert_eq(shoal_recording_load(path, 0, &r, &err), SHOAL_OK, "%s", err.message);
    int32_t count = shoal_recording_nav_count(r);
    int32_t frames[16] = {0}, goals[16] = {0};
    for (int32_t k = 0; k < count && k < 16; ++k) {
        shoal_recording_nav_t nav;
        cr_assert_eq(shoal_recording_nav(r, k, &nav), SHOAL_OK);
        frames[k] = nav.frame;
        goals[k] = nav.goal_count;
    }
    /* Solved in step 1 (the first), in steps 6 and 11 (congestion: they
     * start at step counts 5 and 10) and in step 8 (the new goal); each
     * record comes before the frame written after that step. Frame 0 has
     * none: a world built through the API solves its fields in its first
     * step. */
    cr_assert_eq(count, 4, "records before frames %d %d %d %d %d", frames[0], frames[1], frames[2], frames[3],
                 frames[4]);
    cr_expect_eq(frames[0], 1);
    cr_expect_eq(frames[1], 6);
    cr_expect_eq(frames[2], 8);
    cr_expect_eq(frames[3], 11);
    cr_expect_eq(goals[0], 1);
    cr_expect_eq(goals[1], 1);
    cr_expect_eq(goals[2], 2);
    cr_expect_eq(goals[3], 2);
    /* The congestion update changed the field (the crowd at the door). */
    shoal_recording_nav_t a, b;
    cr_expect_eq(shoal_recording_nav_at(r, 0, &a), SHOAL_ERR_NOT_FOUND);
    cr_assert_eq(shoal_recording_nav_at(r, 5, &a), SHOAL_OK);
    cr_assert_eq(shoal_recording_nav_at(r, 6, &b), SHOAL_OK);
    cr_expect_eq(a.frame, 1);
    cr_expect_eq(b.frame, 6);
    int64_t changed = 0, cells = (int64_t)a.nx * a.ny;
    for (int64_t c = 0; c < cells; ++c) changed += a.fields[c] != b.fields[c];
    cr_expect_gt(changed, 0, "the congestion update left the field as it was");
    /* The last record holds the world's fields as they are now. */
    shoal_recording_nav_t last;
    cr_assert_eq(shoal_recording_nav_at(r, 12, &last), SHOAL_OK);
    cr_expect_eq(last.frame, 11);
    expect_world_fields(w, &last, 1, second);
    shoal_recording_destroy(r);
    shoal_world_destroy(w);
    remove_dir();
}

static void fix_crc(uint8_t* p, size_t n)
{
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i + 4 < n; ++i) c = table[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
    c ^= 0xFFFFFFFFu;
    for (int k = 0; k < 4; ++k) p[n - 4 + (size_t)k] = (uint8_t)(c >> (8 * k));
}

static uint32_t u32_at(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void expect_error(const uint8_t* data, size_t size, uint32_t flags, const char* text)
{
    shoal_recording_t* r = NULL;
    shoal_error_t err = {SHOAL_OK, ""};
    cr_expect_eq(shoal_recording_load_memory(data, size, "u.rec", flags, &r, &err), SHOAL_ERR_PARSE,
                 "no error for '%s'", text);
    cr_expect_not_null(strstr(err.message, text), "'%s' not in: %s", text, err.message);
    shoal_recording_destroy(r);
}

Test(recording_nav, a_damaged_field_record_gives_an_error_naming_it)
{
    make_dir();
    char path[128];
    snprintf(path, sizeof path, "%s/u.rec", dir);
    cli_output_t r;
    run_cli(
        (const char*[]){"run", U_WALL, "--steps", "4", "--threads", "1", "--quiet", "--record", path, NULL},
        &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    size_t size = 0;
    uint8_t* data = read_bytes(path, &size);
    const uint8_t* tag = memmem(data, size, "NAVF", 4);
    cr_assert_not_null(tag);
    const size_t at = (size_t)(tag - data);
    const uint32_t goals = u32_at(tag + 12), compressed = u32_at(tag + 56);
    const size_t head = 60 + 12 * (size_t)goals;
    size_t bytes = head + ((compressed + 3u) & ~3u) + 4;
    cr_assert_lt(at + bytes, size);
    cr_assert_eq(memcmp(data + at + bytes, "FRAM", 4), 0, "a frame follows the record");
    char where[96];
    snprintf(where, sizeof where, "recording u.rec: the navigation field record at byte %zu (before frame 0)",
             at);

    /* A flipped byte in the payload: the checksum. */
    data[at + head + 3] ^= 0x40;
    expect_error(data, size, 0, where);
    expect_error(data, size, 0, "checksum mismatch");
    /* The frames before it are kept on request. */
    shoal_recording_t* kept = NULL;
    shoal_error_t err;
    cr_assert_eq(
        shoal_recording_load_memory(data, size, "u.rec", SHOAL_RECORDING_ALLOW_TRUNCATED, &kept, &err),
        SHOAL_OK, "%s", err.message);
    cr_expect_eq(shoal_recording_frame_count(kept), 0);
    cr_expect_eq(shoal_recording_nav_count(kept), 0);
    cr_expect_not_null(strstr(shoal_recording_damage(kept), where), "%s", shoal_recording_damage(kept));
    shoal_recording_destroy(kept);

    /* The same byte with a checksum that fits: zstd finds it. */
    fix_crc(data + at, bytes);
    expect_error(data, size, 0, where);
    char payload[64];
    snprintf(payload, sizeof payload, "byte %zu: the compressed payload", at + head);
    expect_error(data, size, 0, payload);
    data[at + head + 3] ^= 0x40;
    fix_crc(data + at, bytes);

    /* Fixed fields that lie. */
    data[at + 8] = 3; /* the frame it comes before */
    fix_crc(data + at, bytes);
    expect_error(data, size, 0, "the frame index is not the next frame's");
    data[at + 8] = 0;
    data[at + 52] ^= 1; /* the decoded size */
    fix_crc(data + at, bytes);
    expect_error(data, size, 0, "declared payload size is not what the grid and goals need (corrupt)");
    data[at + 52] ^= 1;
    fix_crc(data + at, bytes);
    shoal_recording_t* whole = NULL;
    cr_assert_eq(shoal_recording_load_memory(data, size, "u.rec", 0, &whole, &err), SHOAL_OK, "%s",
                 err.message);
    cr_expect_eq(shoal_recording_nav_count(whole), 1);
    shoal_recording_destroy(whole);

    /* A version 4 header over a version 5 body: a tag version 4 does not
     * have. */
    data[8] = 4;
    fix_crc(data, u32_at(data + 12));
    expect_error(data, size, 0, "expected frame 0 or the end record, found neither (corrupt)");
    free(data);
    remove_dir();
}

/* The page holds the field of each record that applies to its frames, as
 * the recording has it: the grid, the blocked flags and each cell's travel
 * time, quantized between the field's least and largest value. */
Test(recording_nav, the_view_page_holds_the_fields)
{
    make_dir();
    char path[128], page[160];
    snprintf(path, sizeof path, "%s/u.rec", dir);
    snprintf(page, sizeof page, "%s/u.html", dir);
    cli_output_t r;
    run_cli(
        (const char*[]){"run", U_WALL, "--steps", "6", "--threads", "1", "--quiet", "--record", path, NULL},
        &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"view", path, "-o", page, "--every", "2", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    size_t n = 0;
    char attributes[256];
    uint8_t* blob = page_fields(page, &n, attributes, sizeof attributes);
    cr_expect_null(strstr(attributes, "data-note"), "%s", attributes);
    shoal_recording_t* rec = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_recording_load(path, 0, &rec, &err), SHOAL_OK, "%s", err.message);
    shoal_recording_nav_t nav;
    cr_assert_eq(shoal_recording_nav_at(rec, 2, &nav), SHOAL_OK);
    /* One record, before frame 0 (populating solved the fields). */
    cr_assert_eq(u32_at(blob), 1u);
    const uint8_t* p = blob + 4;
    cr_expect_eq(u32_at(p), 0u);
    cr_assert_eq(u32_at(p + 4), 1u);
    cr_assert_eq(u32_at(p + 8), (uint32_t)nav.nx);
    cr_assert_eq(u32_at(p + 12), (uint32_t)nav.ny);
    cr_expect_eq(u32_at(p + 28), 1u, "no downsampling");
    float lo, hi;
    memcpy(&lo, p + 44, 4);
    memcpy(&hi, p + 48, 4);
    const size_t cells = (size_t)nav.nx * (size_t)nav.ny;
    const uint8_t* blocked = p + 52;
    const uint8_t* q = blocked + ((cells + 3) & ~(size_t)3);
    cr_assert_leq((size_t)(q - blob) + 2 * cells, n);
    size_t finite = 0;
    for (size_t c = 0; c < cells; ++c) {
        cr_assert_eq(blocked[c], nav.blocked[c], "cell %zu", c);
        uint16_t value = (uint16_t)(q[2 * c] | q[2 * c + 1] << 8);
        if (!isfinite(nav.fields[c])) {
            cr_assert_eq(value, 65535, "cell %zu", c);
            continue;
        }
        finite += 1;
        double expected = (nav.fields[c] - lo) / (hi - lo) * 65534.0;
        cr_assert_leq(fabs(value - expected), 0.5 + 1e-3, "cell %zu: %u against %g", c, value, expected);
    }
    cr_expect_gt(finite, cells / 2);
    shoal_recording_destroy(rec);
    free(blob);
    remove_dir();
}

/* A grid of more than 512 x 512 cells goes in the page downsampled, and
 * the page says so: the 200 m floor's 2,000 x 2,000 cells as 500 x 500 of
 * 0.4 m, each blocked when any of its 16 cells is, with the least travel
 * time of the others. */
Test(recording_nav, the_view_page_downsamples_a_big_grid_and_says_so)
{
    make_dir();
    char scenario[128], path[128], page[160];
    snprintf(scenario, sizeof scenario, "%s/floor200.json", dir);
    snprintf(path, sizeof path, "%s/f.rec", dir);
    snprintf(page, sizeof page, "%s/f.html", dir);
    FILE* f = fopen(scenario, "w");
    cr_assert_not_null(f);
    fputs(floor200, f);
    fclose(f);
    cli_output_t r;
    run_cli(
        (const char*[]){"run", scenario, "--steps", "0", "--threads", "1", "--quiet", "--record", path, NULL},
        &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    run_cli((const char*[]){"view", path, "-o", page, NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    size_t n = 0;
    char attributes[256];
    uint8_t* blob = page_fields(page, &n, attributes, sizeof attributes);
    cr_expect_not_null(strstr(attributes, "data-note=\"fields at 1/4 of the grid's resolution\""), "%s",
                       attributes);
    shoal_recording_t* rec = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_recording_load(path, 0, &rec, &err), SHOAL_OK, "%s", err.message);
    shoal_recording_nav_t nav;
    cr_assert_eq(shoal_recording_nav_at(rec, 0, &nav), SHOAL_OK);
    cr_assert_eq(nav.nx, 2000);
    const uint8_t* p = blob + 4;
    cr_assert_eq(u32_at(p + 8), 500u);
    cr_assert_eq(u32_at(p + 12), 500u);
    cr_expect_eq(u32_at(p + 28), 4u);
    float cell, lo, hi;
    memcpy(&cell, p + 24, 4);
    memcpy(&lo, p + 44, 4);
    memcpy(&hi, p + 48, 4);
    cr_expect_float_eq(cell, 0.4f, 1e-6f);
    const uint8_t* blocked = p + 52;
    const uint8_t* q = blocked + 500 * 500;
    int64_t walls = 0;
    for (int J = 0; J < 500; ++J)
        for (int I = 0; I < 500; ++I) {
            uint8_t any = 0;
            float least = INFINITY;
            for (int j = 4 * J; j < 4 * J + 4; ++j)
                for (int i = 4 * I; i < 4 * I + 4; ++i) {
                    any |= nav.blocked[j * 2000 + i];
                    least = fminf(least, nav.fields[j * 2000 + i]);
                }
            cr_assert_eq(blocked[J * 500 + I], any, "page cell %d %d", I, J);
            walls += any;
            uint16_t value = (uint16_t)(q[2 * (J * 500 + I)] | q[2 * (J * 500 + I) + 1] << 8);
            if (!isfinite(least)) {
                cr_assert_eq(value, 65535, "page cell %d %d", I, J);
                continue;
            }
            double expected = (least - lo) / (hi - lo) * 65534.0;
            cr_assert_leq(fabs(value - expected), 0.5 + 1e-3, "page cell %d %d: %u against %g", I, J, value,
                          expected);
        }
    cr_expect_gt(walls, 4 * 500, "the walls show in the page's grid");
    shoal_recording_destroy(rec);
    free(blob);
    remove_dir();
}

/* Floors of several sizes, up to 200 m x 200 m at 0.1 m (4 million cells,
 * walls across it): the padding after the compressed payload must be
 * zeros whatever zstd left in the buffer past its frame (it leaves bytes
 * there on this floor; the reader refuses anything but zeros), and the
 * field must read back. */
Test(recording_nav, floors_of_several_sizes_read_back)
{
    make_dir();
    const float sides[] = {13.7f, 31.3f, 60.0f};
    for (int k = 0; k < 3; ++k) {
        char path[128];
        snprintf(path, sizeof path, "%s/f%d.rec", dir, k);
        shoal_world_def_t def = shoal_world_default_def();
        def.thread_count = 1;
        shoal_world_t* w = NULL;
        shoal_error_t err;
        cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
        const float wall[] = {sides[k] / 2, 1, sides[k] / 2, sides[k] - 1};
        cr_assert_eq(shoal_world_add_wall(w, wall, 2, 0, NULL), SHOAL_OK);
        shoal_nav_params_t p = shoal_nav_params_default();
        p.bounds[0] = p.bounds[1] = 0.0f;
        p.bounds[2] = p.bounds[3] = sides[k];
        cr_assert_eq(shoal_world_set_nav(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_nav_goal_t goal = {
            .kind = SHOAL_NAV_POINT, .count = 1, .points = {{sides[k] - 1, sides[k] / 2}}};
        cr_assert_eq(shoal_world_add_nav_goal(w, &goal, NULL), SHOAL_OK);
        cr_assert_eq(shoal_world_nav_update(w), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_recorder_t* rec = open_version(path, w, 5);
        write_frame(rec, w);
        close_recorder(rec);
        shoal_recording_t* r = NULL;
        cr_assert_eq(shoal_recording_load(path, 0, &r, &err), SHOAL_OK, "%s", err.message);
        shoal_recording_nav_t nav;
        cr_assert_eq(shoal_recording_nav_at(r, 0, &nav), SHOAL_OK);
        expect_world_fields(w, &nav, 0, 0);
        shoal_recording_destroy(r);
        shoal_world_destroy(w);
    }
    /* The 200 m floor of docs/recording.md's sizes, with its walls. */
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_string(floor200, strlen(floor200), "floor200", &sc, &err), SHOAL_OK,
                 "%s", err.message);
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    def.thread_count = 1;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_scenario_populate(sc, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_scenario_destroy(sc);
    char path[128];
    snprintf(path, sizeof path, "%s/floor200.rec", dir);
    shoal_recorder_t* rec = open_version(path, w, 5);
    write_frame(rec, w);
    close_recorder(rec);
    shoal_recording_t* r = NULL;
    cr_assert_eq(shoal_recording_load(path, 0, &r, &err), SHOAL_OK, "%s", err.message);
    shoal_recording_nav_t nav;
    cr_assert_eq(shoal_recording_nav_at(r, 0, &nav), SHOAL_OK);
    cr_expect_eq(nav.nx, 2000);
    expect_world_fields(w, &nav, 0, 0);
    shoal_recording_destroy(r);
    shoal_world_destroy(w);
    remove_dir();
}
