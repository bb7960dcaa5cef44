/* `shoal export` and `shoal run --export` as a user sees them: a small
 * scenario is recorded, exported as CSV and as a JuPedSim trajectory
 * database, and both are read back (the CSV parsed here, the database
 * through SQLite's C API) and compared with the recording as the library
 * reads it. Then every bad input: a truncated recording, one whose end
 * record lies about its frame count, targets that exist, cannot be written
 * or are devices, unknown formats, a 3D recording for SQLite; each must
 * fail with a clear message, a non-zero exit and no file left behind.
 *
 * The test process never starts OpenMP: the runs happen in the spawned
 * binary (cli_run.h). */
#define _XOPEN_SOURCE 700

#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shoal/recording.h"

#include "cli_run.h"

#if SHOAL_WITH_SQLITE
#include <sqlite3.h>
#endif

/* A walled room with three static obstacles and two groups (one name with
 * a comma and a quote, for the CSV's quoting). */
static const char scene_2d[] =
    "{\"name\": \"export room\", \"dimensions\": 2, \"seed\": 3, \"dt\": 0.05, \"steps\": 12,\n"
    " \"walls\": [{\"points\": [[-30, -20], [30, -20], [30, 20]]}, {\"points\": [[-30, 20], [-30, -20]]}],\n"
    " \"obstacles\": [{\"center\": [0, 0], \"radius\": 2}, {\"center\": [10, 5], \"radius\": 1},\n"
    "                 {\"center\": [10.5, 5.5], \"radius\": 1}],\n"
    " \"groups\": [\n"
    "  {\"name\": \"left, \\\"fast\\\"\", \"count\": 20, \"spawn\": {\"shape\": \"box\", \"center\": [-20, "
    "0], \"size\": [8, 8]},\n"
    "   \"vehicle\": {\"max_speed\": 3, \"max_force\": 10}, \"behaviors\": {\"seek\": {}}, \"target\": [25, "
    "0]},\n"
    "  {\"name\": \"right\", \"count\": 10, \"spawn\": {\"shape\": \"box\", \"center\": [20, 10], \"size\": "
    "[6, 6]},\n"
    "   \"vehicle\": {\"max_speed\": 2, \"max_force\": 10}, \"behaviors\": {\"arrive\": {\"gain\": 1}}, "
    "\"target\": [-20, 10]}\n"
    " ]}\n";

static const char scene_3d[] =
    "{\"name\": \"export swarm\", \"dimensions\": 3, \"seed\": 5, \"dt\": 0.02, \"steps\": 6,\n"
    " \"groups\": [{\"name\": \"swarm\", \"count\": 16,\n"
    "   \"spawn\": {\"shape\": \"ring\", \"center\": [0, 0, 10], \"radius\": 8, \"heading\": \"inward\", "
    "\"pitch\": \"inward\"},\n"
    "   \"vehicle\": {\"max_speed\": 5, \"max_force\": 20, \"max_torque\": 20, \"max_turn_rate\": 4},\n"
    "   \"behaviors\": {\"arrive\": {\"gain\": 1}}, \"target\": \"antipode\"}]}\n";

#define STEPS "12"
#define EVERY 5 /* frames at steps 0, 5, 10 and 12: the last is off the grid */

/* ---- a scratch directory ---- */

typedef struct scratch_t {
    char dir[64];
} scratch_t;

static void scratch_open(scratch_t* s)
{
    strcpy(s->dir, "/tmp/shoal_export_XXXXXX");
    cr_assert_not_null(mkdtemp(s->dir), "mkdtemp: %s", strerror(errno));
}

static void scratch_path(const scratch_t* s, const char* name, char* out, size_t size)
{
    cr_assert_lt((size_t)snprintf(out, size, "%s/%s", s->dir, name), size);
}

static void write_text(const char* path, const char* text)
{
    FILE* f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    fputs(text, f);
    fclose(f);
}

static int count_entries(const scratch_t* s)
{
    DIR* d = opendir(s->dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The names in the directory, for messages. */
static void list_entries(const scratch_t* s, char* out, size_t size)
{
    out[0] = '\0';
    DIR* d = opendir(s->dir);
    cr_assert_not_null(d);
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        strncat(out, e->d_name, size - strlen(out) - 2);
        strncat(out, " ", size - strlen(out) - 1);
    }
    closedir(d);
}

static void scratch_close(scratch_t* s)
{
    DIR* d = opendir(s->dir);
    if (d == NULL) return;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", s->dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(s->dir);
}

static int exists(const char* path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static char* read_all(const char* path, size_t* size)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    buffer_t b = {0};
    buffer_append(&b, "", 0);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buffer_append(&b, chunk, n);
    fclose(f);
    if (size != NULL) *size = b.length;
    return b.data;
}

static void write_bytes(const char* path, const void* data, size_t size)
{
    FILE* f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, size, f), size);
    fclose(f);
}

/* Run shoal, expect `status`; returns the output (free with output_free). */
static cli_output_t expect_run(int status, const char* const* args)
{
    cli_output_t r;
    run_cli(args, &r);
    cr_assert_eq(r.status, status, "%s %s: exit %d, want %d; stderr: %s; stdout: %s", args[0],
                 args[1] ? args[1] : "", r.status, status, r.err, r.out);
    return r;
}

/* Record `scene` into dir/rec.rec (every EVERY-th step for 2D). */
static void record_scene(const scratch_t* s, const char* scene, char* rec, size_t rec_size)
{
    char json[256];
    scratch_path(s, "scene.json", json, sizeof json);
    write_text(json, scene);
    scratch_path(s, "rec.rec", rec, rec_size);
    char every[16];
    snprintf(every, sizeof every, "%d", EVERY);
    cli_output_t r = expect_run(0, (const char*[]){"run", json, "--steps", STEPS, "--record-every", every,
                                                   "--record", rec, "--quiet", NULL});
    output_free(&r);
}

static shoal_recording_t* load(const char* path)
{
    shoal_recording_t* rec = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_recording_load(path, 0, &rec, &err), SHOAL_OK, "%s", err.message);
    return rec;
}

/* ---- CSV ---- */

/* Split one CSV line into fields (RFC 4180 quotes); returns the count. The
 * fields point into `line`, which is modified. */
static int split_csv(char* line, char** fields, int max)
{
    int n = 0;
    char* p = line;
    for (;;) {
        cr_assert_lt(n, max, "too many fields");
        if (*p == '"') {
            char* out = ++p;
            fields[n++] = out;
            for (;;) {
                cr_assert_neq(*p, '\0', "unterminated quote");
                if (*p == '"' && p[1] == '"') {
                    *out++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p += 1;
                    break;
                } else {
                    *out++ = *p++;
                }
            }
            *out = '\0';
            cr_assert(*p == ',' || *p == '\0', "text after a closing quote");
        } else {
            fields[n++] = p;
            while (*p != ',' && *p != '\0') ++p;
        }
        if (*p == '\0') return n;
        *p++ = '\0';
    }
}

/* Row i of frame f in the recording: the agent's speed from the previous
 * frame (the next one for a first frame), or NAN. */
static double expected_speed(const shoal_recording_t* rec, int32_t f, int32_t i)
{
    shoal_recording_frame_t cur, other;
    shoal_recording_frame(rec, f, &cur);
    int dims = shoal_recording_header(rec)->dimensions;
    for (int pass = 0; pass < 2; ++pass) {
        int32_t g = pass == 0 ? f - 1 : f + 1;
        if (g < 0 || g >= shoal_recording_frame_count(rec)) continue;
        shoal_recording_frame(rec, g, &other);
        for (int32_t j = 0; j < other.count; ++j) {
            if (other.ids[j] != cur.ids[i] || other.generations[j] != cur.generations[i]) continue;
            double d2 = 0.0;
            for (int k = 0; k < dims; ++k) {
                double d = (double)cur.positions[dims * i + k] - other.positions[dims * j + k];
                d2 += d * d;
            }
            return sqrt(d2) / fabs(cur.time - other.time);
        }
    }
    return NAN;
}

/* Parse `csv` and compare every row with the recording. */
static void check_csv(const char* csv_path, const shoal_recording_t* rec)
{
    const shoal_recording_header_t* h = shoal_recording_header(rec);
    const int dims = h->dimensions;
    char* text = read_all(csv_path, NULL);
    char* save = NULL;
    char* line = strtok_r(text, "\n", &save);
    cr_assert_not_null(line, "empty CSV");
    cr_assert_str_eq(
        line, dims == 2 ? "frame,step,time,id,generation,global_id,group,group_name,x,y,heading,speed"
                        : "frame,step,time,id,generation,global_id,group,group_name,x,y,z,qw,qx,qy,qz,speed");
    const int columns = dims == 2 ? 12 : 16;
    int64_t rows = 0, speeds = 0;
    for (int32_t f = 0; f < shoal_recording_frame_count(rec); ++f) {
        shoal_recording_frame_t fr;
        shoal_recording_frame(rec, f, &fr);
        for (int32_t i = 0; i < fr.count; ++i, ++rows) {
            line = strtok_r(NULL, "\n", &save);
            cr_assert_not_null(line, "the CSV ends at row %lld", (long long)rows);
            char* fields[20];
            cr_assert_eq(split_csv(line, fields, 20), columns, "row %lld", (long long)rows);
            cr_assert_eq(strtol(fields[0], NULL, 10), f);
            cr_assert_eq(strtoull(fields[1], NULL, 10), fr.step);
            cr_assert_eq(strtod(fields[2], NULL), fr.time, "time %s vs %.17g", fields[2], fr.time);
            cr_assert_eq(strtoul(fields[3], NULL, 10), fr.ids[i]);
            cr_assert_eq(strtoul(fields[4], NULL, 10), fr.generations[i]);
            if (fr.global_ids != NULL) {
                cr_assert_neq(fields[5][0], '\0');
                cr_assert_eq(strtoull(fields[5], NULL, 10), fr.global_ids[i]);
            } else {
                cr_assert_str_empty(fields[5], "no global ids before format version 4");
            }
            cr_assert_eq(strtoul(fields[6], NULL, 10), fr.groups[i]);
            if (strstr(h->group_names, "right") != NULL) { /* scene_2d's groups */
                cr_assert_str_eq(fields[7], fr.groups[i] == 0 ? "left, \"fast\"" : "right");
            } else if (h->group_names[0] == '\0') {
                cr_assert_str_empty(fields[7]);
            }
            /* %.9g reads back to the very same float. */
            for (int k = 0; k < dims; ++k) {
                cr_assert_eq(strtof(fields[8 + k], NULL), fr.positions[dims * i + k],
                             "frame %d agent %u axis %d: %s vs %.9g", (int)f, fr.ids[i], k, fields[8 + k],
                             (double)fr.positions[dims * i + k]);
            }
            if (dims == 2) {
                cr_assert_eq(strtof(fields[10], NULL), fr.headings[i]);
            } else {
                for (int k = 0; k < 4; ++k)
                    cr_assert_eq(strtof(fields[11 + k], NULL), fr.orientations[4 * i + k]);
            }
            double want = expected_speed(rec, f, i);
            const char* speed = fields[columns - 1];
            if (isnan(want)) {
                cr_assert_str_empty(speed, "frame %d agent %u: no neighbor frame", (int)f, fr.ids[i]);
            } else {
                double got = strtod(speed, NULL);
                cr_assert(fabs(got - want) <= 1e-6 * fmax(1.0, want), "frame %d agent %u speed %s vs %.9g",
                          (int)f, fr.ids[i], speed, want);
                speeds += 1;
            }
        }
    }
    cr_assert_null(strtok_r(NULL, "\n", &save), "rows past the recording's");
    cr_assert_gt(rows, 0);
    cr_assert_eq(speeds, rows, "every agent is in two frames at least: every row has a speed");
    free(text);
}

TestSuite(export, .timeout = 120);

Test(export, csv_round_trips_the_recording)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], csv[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);
    scratch_path(&s, "out.csv", csv, sizeof csv);
    cli_output_t r = expect_run(0, (const char*[]){"export", rec_path, "--csv", csv, NULL});
    cr_assert_not_null(strstr(r.out, "exported"), "%s", r.out);
    output_free(&r);
    shoal_recording_t* rec = load(rec_path);
    cr_assert_eq(shoal_recording_frame_count(rec), 4); /* steps 0, 5, 10, 12 */
    check_csv(csv, rec);
    shoal_recording_destroy(rec);
    cr_assert_eq(count_entries(&s), 3, "scene, recording, CSV and nothing else");
    scratch_close(&s);
}

Test(export, csv_of_a_3d_recording_has_z_and_the_quaternion)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], csv[256];
    record_scene(&s, scene_3d, rec_path, sizeof rec_path);
    scratch_path(&s, "out3.csv", csv, sizeof csv);
    cli_output_t r = expect_run(0, (const char*[]){"export", rec_path, "-o", csv, NULL});
    output_free(&r);
    shoal_recording_t* rec = load(rec_path);
    cr_assert_eq(shoal_recording_header(rec)->dimensions, 3);
    check_csv(csv, rec);
    shoal_recording_destroy(rec);

#if SHOAL_WITH_SQLITE
    /* JuPedSim's schema is 2D: refused, saying why and what to do instead. */
    char db[256];
    scratch_path(&s, "out3.sqlite", db, sizeof db);
    r = expect_run(1, (const char*[]){"export", rec_path, "--sqlite", db, NULL});
    cr_assert_not_null(strstr(r.err, "3D recording cannot go to SQLite"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "CSV"), "%s", r.err);
    output_free(&r);
    cr_assert(!exists(db));
#endif
    cr_assert_eq(count_entries(&s), 3);
    scratch_close(&s);
}

/* The same trajectories from `run --export` as from `export`, byte for byte
 * (one writer, and runs are deterministic). */
Test(export, run_export_equals_export_of_the_recording)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], a[256], b[256], json[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);
    scratch_path(&s, "scene.json", json, sizeof json);
    scratch_path(&s, "a.csv", a, sizeof a);
    scratch_path(&s, "b.csv", b, sizeof b);
    cli_output_t r = expect_run(0, (const char*[]){"export", rec_path, "--csv", a, NULL});
    output_free(&r);
    r = expect_run(0, (const char*[]){"run", json, "--steps", STEPS, "--record-every", "5", "--export", b,
                                      "--quiet", NULL});
    cr_assert_not_null(strstr(r.out, "exported"), "%s", r.out);
    output_free(&r);
    size_t na = 0, nb = 0;
    char* ta = read_all(a, &na);
    char* tb = read_all(b, &nb);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(ta, tb, na), 0, "run --export and export differ");
    free(ta);
    free(tb);
    char names[512];
    list_entries(&s, names, sizeof names);
    cr_assert_eq(count_entries(&s), 4, "the temporary recording is removed: %s", names);

    /* --json keeps stdout one JSON object with --export. */
    char c[256];
    scratch_path(&s, "c.csv", c, sizeof c);
    cJSON* root = run_json((const char*[]){"run", json, "--steps", "3", "--export", c, "--json", NULL});
    cJSON_Delete(root);
    cr_assert(exists(c));
    scratch_close(&s);
}

Test(export, refuses_an_existing_target_without_force)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], csv[256], json[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);
    scratch_path(&s, "scene.json", json, sizeof json);
    scratch_path(&s, "keep.csv", csv, sizeof csv);
    write_text(csv, "keep me\n");
    cli_output_t r = expect_run(1, (const char*[]){"export", rec_path, "--csv", csv, NULL});
    cr_assert_not_null(strstr(r.err, csv), "names the file: %s", r.err);
    cr_assert_not_null(strstr(r.err, "--force"), "names --force: %s", r.err);
    output_free(&r);
    char* text = read_all(csv, NULL);
    cr_assert_str_eq(text, "keep me\n");
    free(text);

    /* run --export refuses before the first step: no run, no temporary
     * recording. */
    r = expect_run(1, (const char*[]){"run", json, "--steps", STEPS, "--export", csv, "--quiet", NULL});
    cr_assert_not_null(strstr(r.err, "--force"), "%s", r.err);
    cr_assert_null(strstr(r.out, "state_hash"), "the run should not have started: %s", r.out);
    output_free(&r);
    cr_assert_eq(count_entries(&s), 3);

    /* --force replaces it. */
    r = expect_run(0, (const char*[]){"export", rec_path, "--csv", csv, "--force", NULL});
    output_free(&r);
    text = read_all(csv, NULL);
    cr_assert_eq(strncmp(text, "frame,", 6), 0);
    free(text);
    r = expect_run(0,
                   (const char*[]){"run", json, "--steps", "2", "--export", csv, "--force", "--quiet", NULL});
    output_free(&r);
    r = expect_run(2, (const char*[]){"run", json, "--steps", "2", "--force", NULL});
    cr_assert_not_null(strstr(r.err, "--force needs --export"), "%s", r.err);
    output_free(&r);
    scratch_close(&s);
}

/* Truncated, without its end record, or with an end record that counts
 * other frames than the file holds: each an error naming the problem, and
 * no output file. */
Test(export, damaged_recordings_export_nothing)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], bad[256], csv[256], db[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);
    scratch_path(&s, "bad.rec", bad, sizeof bad);
    scratch_path(&s, "bad.csv", csv, sizeof csv);
    scratch_path(&s, "bad.sqlite", db, sizeof db);
    size_t size = 0;
    unsigned char* data = (unsigned char*)read_all(rec_path, &size);
    cr_assert_gt(size, 200);

    struct {
        const char* what;
        size_t size;
        const char* message;
    } cases[] = {
        {"cut inside a frame", size / 2, "truncated"},
        {"no end record", size - 12, "no end record"},
        {"end record counts 5 frames, the file holds 4", size, "must count 4 frames"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        unsigned char* copy = malloc(size);
        memcpy(copy, data, size);
        if (c == 2) {
            /* The end record: "DONE", u32 frame count, CRC-32 of those 8
             * bytes; lie about the count and reseal, so that the count is
             * what the reader must catch. */
            unsigned char* end = copy + size - 12;
            cr_assert_eq(memcmp(end, "DONE", 4), 0);
            cr_assert_eq(end[4], 4);
            end[4] = 5;
            uint32_t crc = 0xFFFFFFFFu;
            for (int i = 0; i < 8; ++i) {
                crc ^= end[i];
                for (int k = 0; k < 8; ++k) crc = (crc & 1u) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
            }
            crc ^= 0xFFFFFFFFu;
            for (int k = 0; k < 4; ++k) end[8 + k] = (unsigned char)(crc >> (8 * k));
        }
        write_bytes(bad, copy, cases[c].size);
        free(copy);
        cli_output_t r = expect_run(
            1, SHOAL_WITH_SQLITE ? (const char*[]){"export", bad, "--csv", csv, "--sqlite", db, NULL}
                                 : (const char*[]){"export", bad, "--csv", csv, NULL});
        cr_assert_not_null(strstr(r.err, cases[c].message), "%s: want '%s' in: %s", cases[c].what,
                           cases[c].message, r.err);
        cr_assert_not_null(strstr(r.err, bad), "%s: names the file: %s", cases[c].what, r.err);
        cr_assert_not_null(strstr(r.err, "nothing was exported"), "%s", r.err);
        output_free(&r);
        cr_assert(!exists(csv) && !exists(db), "%s: an output was left", cases[c].what);
        cr_assert_eq(count_entries(&s), 3, "%s: only scene, recording and bad recording", cases[c].what);
    }
    free(data);
    scratch_close(&s);
}

Test(export, targets_that_cannot_be_written)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], path[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);

    /* A directory that does not exist. */
    scratch_path(&s, "missing/out.csv", path, sizeof path);
    cli_output_t r = expect_run(1, (const char*[]){"export", rec_path, "--csv", path, NULL});
    cr_assert_not_null(strstr(r.err, path), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "No such file or directory"), "%s", r.err);
    output_free(&r);

    /* A directory in the target's place. */
    scratch_path(&s, "adir.csv", path, sizeof path);
    cr_assert_eq(mkdir(path, 0755), 0);
    r = expect_run(1, (const char*[]){"export", rec_path, "--csv", path, NULL});
    cr_assert_not_null(strstr(r.err, "is a directory"), "%s", r.err);
    output_free(&r);
    rmdir(path);

    /* A file system that takes no new files, even from root: the writer's
     * own create fails, after the checks let it through. */
    r = expect_run(1, (const char*[]){"export", rec_path, "--csv", "/proc/shoal_export_test.csv", NULL});
    cr_assert_not_null(strstr(r.err, "/proc/shoal_export_test.csv"), "%s", r.err);
    output_free(&r);

    /* A read-only directory (root writes there anyway: then only that the
     * export succeeds). */
    char ro[256];
    scratch_path(&s, "ro", ro, sizeof ro);
    cr_assert_eq(mkdir(ro, 0555), 0);
    scratch_path(&s, "ro/out.csv", path, sizeof path);
    if (geteuid() != 0) {
        r = expect_run(1, (const char*[]){"export", rec_path, "--csv", path, NULL});
        cr_assert_not_null(strstr(r.err, "not writable"), "%s", r.err);
        output_free(&r);
        cr_assert(!exists(path));
    }
    unlink(path);
    rmdir(ro);

    /* A full device: written through (as a shell redirection would be), and
     * the failed write is an error, not a success. */
    r = expect_run(1, (const char*[]){"export", rec_path, "--csv", "/dev/full", NULL});
    cr_assert_not_null(strstr(r.err, "/dev/full"), "%s", r.err);
    output_free(&r);
#if SHOAL_WITH_SQLITE
    /* SQLite needs a file it can seek in. */
    r = expect_run(1, (const char*[]){"export", rec_path, "--sqlite", "/dev/null", NULL});
    cr_assert_not_null(strstr(r.err, "regular file"), "%s", r.err);
    output_free(&r);
#endif
    char names[512];
    list_entries(&s, names, sizeof names);
    cr_assert_eq(count_entries(&s), 2, "nothing left behind: %s", names);
    scratch_close(&s);
}

Test(export, unknown_formats_and_missing_outputs_are_usage_errors)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], path[256], json[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);
    scratch_path(&s, "scene.json", json, sizeof json);
    scratch_path(&s, "out.parquet", path, sizeof path);
    cli_output_t r = expect_run(2, (const char*[]){"export", rec_path, "-o", path, NULL});
    cr_assert_not_null(strstr(r.err, "unknown export format"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, ".csv or .sqlite"), "%s", r.err);
    output_free(&r);
    r = expect_run(2, (const char*[]){"run", json, "--steps", "2", "--export", path, NULL});
    cr_assert_not_null(strstr(r.err, "unknown export format"), "%s", r.err);
    output_free(&r);
    r = expect_run(2, (const char*[]){"export", rec_path, NULL});
    cr_assert_not_null(strstr(r.err, "nothing to write"), "%s", r.err);
    output_free(&r);
    r = expect_run(2, (const char*[]){"export", rec_path, "--csv", rec_path, NULL});
    cr_assert_not_null(strstr(r.err, "is the recording"), "%s", r.err);
    output_free(&r);
    cr_assert(!exists(path));
    cr_assert_eq(count_entries(&s), 2);
    scratch_close(&s);
}

#if SHOAL_WITH_SQLITE

static sqlite3* open_db(const char* path)
{
    sqlite3* db = NULL;
    cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "%s",
                 db ? sqlite3_errmsg(db) : path);
    return db;
}

static int64_t query_int(sqlite3* db, const char* sql)
{
    sqlite3_stmt* st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The text of the first column of the first row (malloc'ed). */
static char* query_text(sqlite3* db, const char* sql)
{
    sqlite3_stmt* st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
    char* v = strdup((const char*)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

/* A table's columns, comma-separated, as PRAGMA table_info lists them. */
static void columns_of(sqlite3* db, const char* table, char* out, size_t size)
{
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
    sqlite3_stmt* st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    out[0] = '\0';
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (out[0] != '\0') strncat(out, ",", size - strlen(out) - 1);
        strncat(out, (const char*)sqlite3_column_text(st, 1), size - strlen(out) - 1);
    }
    sqlite3_finalize(st);
}

Test(export, sqlite_is_a_jupedsim_trajectory_database)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], db_path[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);
    scratch_path(&s, "out.sqlite", db_path, sizeof db_path);
    cli_output_t r = expect_run(0, (const char*[]){"export", rec_path, "--sqlite", db_path, NULL});
    cr_assert_not_null(strstr(r.out, "1 frame off the record-every grid left out"), "%s", r.out);
    if (SHOAL_WITH_GEOS) /* every static obstacle cut out, overlaps merged */
        cr_assert_null(strstr(r.out, "obstacle"), "none left out: %s", r.out);
    else
        cr_assert_not_null(strstr(r.out, "1 obstacle"), "the overlapping obstacle: %s", r.out);
    output_free(&r);

    shoal_recording_t* rec = load(rec_path);
    const shoal_recording_header_t* h = shoal_recording_header(rec);
    sqlite3* db = open_db(db_path);

    /* JuPedSim's version 2 tables, column for column. */
    char cols[256];
    columns_of(db, "trajectory_data", cols, sizeof cols);
    cr_assert_str_eq(cols, "frame,id,pos_x,pos_y,ori_x,ori_y");
    columns_of(db, "metadata", cols, sizeof cols);
    cr_assert_str_eq(cols, "key,value");
    columns_of(db, "geometry", cols, sizeof cols);
    cr_assert_str_eq(cols, "hash,wkt");
    columns_of(db, "frame_data", cols, sizeof cols);
    cr_assert_str_eq(cols, "frame,geometry_hash");
    char* version = query_text(db, "SELECT value FROM metadata WHERE key = 'version'");
    cr_assert_str_eq(version, "2");
    free(version);

    /* fps: one JuPedSim frame per record_every steps. */
    char* fps_text = query_text(db, "SELECT value FROM metadata WHERE key = 'fps'");
    double fps = strtod(fps_text, NULL);
    free(fps_text);
    cr_assert_eq(h->record_every, EVERY);
    double want_fps = 1.0 / ((double)h->dt * EVERY);
    cr_assert(fabs(fps - want_fps) <= 1e-6 * want_fps, "fps %.9g, want %.9g", fps, want_fps);

    /* Rows: frames on the grid x agents; the step-12 frame is left out. */
    int32_t on_grid = 0;
    int64_t want_rows = 0;
    for (int32_t f = 0; f < shoal_recording_frame_count(rec); ++f) {
        shoal_recording_frame_t fr;
        shoal_recording_frame(rec, f, &fr);
        if (fr.step % EVERY != 0) continue;
        on_grid += 1;
        want_rows += fr.count;
        cr_assert_eq(fr.count, 30);
    }
    cr_assert_eq(on_grid, 3);
    cr_assert_eq(query_int(db, "SELECT count(*) FROM trajectory_data"), want_rows);
    cr_assert_eq(query_int(db, "SELECT count(*) FROM frame_data"), on_grid);
    cr_assert_eq(query_int(db, "SELECT count(DISTINCT id) FROM trajectory_data"), 30);

    /* Every row against the recording: positions exactly (a float is a
     * double exactly), the orientation as the heading's unit vector. PedPy
     * reads these columns with this very query. */
    sqlite3_stmt* st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT frame, id, pos_x AS x, pos_y AS y, ori_x, ori_y "
                                    "FROM trajectory_data ORDER BY frame, id",
                                    -1, &st, NULL),
                 SQLITE_OK);
    int64_t checked = 0;
    for (int32_t f = 0; f < shoal_recording_frame_count(rec); ++f) {
        shoal_recording_frame_t fr;
        shoal_recording_frame(rec, f, &fr);
        if (fr.step % EVERY != 0) continue;
        for (int32_t i = 0; i < fr.count; ++i, ++checked) {
            cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
            cr_assert_eq(sqlite3_column_int64(st, 0), (int64_t)(fr.step / EVERY));
            cr_assert_eq(fr.generations[i], 1u);
            cr_assert_eq(sqlite3_column_int64(st, 1), (int64_t)fr.global_ids[i]);
            cr_assert_eq(sqlite3_column_double(st, 2), (double)fr.positions[2 * i]);
            cr_assert_eq(sqlite3_column_double(st, 3), (double)fr.positions[2 * i + 1]);
            cr_assert_float_eq(sqlite3_column_double(st, 4), cos(fr.headings[i]), 1e-12);
            cr_assert_float_eq(sqlite3_column_double(st, 5), sin(fr.headings[i]), 1e-12);
        }
    }
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    cr_assert_eq(checked, want_rows);

    /* The walkable area: one polygon, which frame_data points at, and
     * shoal's own tables. With GEOS, three holes: the walls (one U of
     * segments inside the box) and the obstacles, the two that overlap
     * merged into one; without it, the two obstacles that do not overlap
     * (the third overlaps the second and is left out), and no walls. */
    char* wkt = query_text(db, "SELECT wkt FROM geometry");
    cr_assert_eq(strncmp(wkt, "POLYGON ((", 10), 0, "%.80s", wkt);
    int holes = 0;
    for (const char* p = wkt; (p = strstr(p, "), (")) != NULL; ++p) holes += 1;
    cr_assert_eq(holes, SHOAL_WITH_GEOS ? 3 : 2, "%s", wkt);
    free(wkt);
    char* walls_in = query_text(db, "SELECT value FROM metadata WHERE key = 'shoal_walls_in_walkable_area'");
    cr_assert_str_eq(walls_in, SHOAL_WITH_GEOS ? "1" : "0");
    free(walls_in);
    cr_assert_eq(query_int(db, "SELECT count(*) FROM geometry"), 1);
    cr_assert_eq(query_int(db, "SELECT count(*) FROM frame_data JOIN geometry "
                               "ON frame_data.geometry_hash = geometry.hash"),
                 on_grid);
    shoal_recording_geometry_t g;
    cr_assert_eq(shoal_recording_geometry(rec, &g), SHOAL_OK);
    cr_assert_eq(query_int(db, "SELECT count(*) FROM shoal_walls"), g.wall_count);
    cr_assert_eq(g.wall_count, 3);
    cr_assert_eq(query_int(db, "SELECT count(*) FROM shoal_obstacles"), 3);
    cr_assert_eq(query_int(db, "SELECT sum(in_walkable_area) FROM shoal_obstacles"), SHOAL_WITH_GEOS ? 3 : 2);
    /* The box holds every agent and wall. */
    char* xmin = query_text(db, "SELECT value FROM metadata WHERE key = 'xmin'");
    char* xmax = query_text(db, "SELECT value FROM metadata WHERE key = 'xmax'");
    cr_assert_leq(strtod(xmin, NULL), -30.0 - 1.0 + 1e-6);
    cr_assert_geq(strtod(xmax, NULL), 30.0 + 1.0 - 1e-6);
    free(xmin);
    free(xmax);
    /* Groups: in shoal_agents, by id. */
    char* name = query_text(db, "SELECT group_name FROM shoal_agents WHERE group_label = 0 LIMIT 1");
    cr_assert_str_eq(name, "left, \"fast\"");
    free(name);
    cr_assert_eq(query_int(db, "SELECT count(*) FROM shoal_agents"), 30);
    sqlite3_close(db);
    shoal_recording_destroy(rec);

    /* An existing database is kept without --force and replaced with it. */
    struct stat before;
    cr_assert_eq(stat(db_path, &before), 0);
    r = expect_run(1, (const char*[]){"export", rec_path, "--sqlite", db_path, NULL});
    cr_assert_not_null(strstr(r.err, "--force"), "%s", r.err);
    output_free(&r);
    r = expect_run(0, (const char*[]){"export", rec_path, "--sqlite", db_path, "--force", NULL});
    output_free(&r);
    struct stat after;
    cr_assert_eq(stat(db_path, &after), 0);
    cr_assert_neq(before.st_ino, after.st_ino, "replaced by a new file, not written in place");
    cr_assert_eq(count_entries(&s), 3, "no journal or temporary file left");
    scratch_close(&s);
}

Test(export, run_export_sqlite_matches_the_recording)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], json[256], db_path[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);
    scratch_path(&s, "scene.json", json, sizeof json);
    scratch_path(&s, "run.sqlite", db_path, sizeof db_path);
    cli_output_t r = expect_run(0, (const char*[]){"run", json, "--steps", STEPS, "--record-every", "5",
                                                   "--export", db_path, "--quiet", NULL});
    output_free(&r);
    sqlite3* db = open_db(db_path);
    cr_assert_eq(query_int(db, "SELECT count(*) FROM trajectory_data"), 90);
    /* The same run recorded: the same last on-grid positions. */
    shoal_recording_t* rec = load(rec_path);
    shoal_recording_frame_t fr;
    shoal_recording_frame(rec, 2, &fr); /* step 10: JuPedSim frame 2 */
    cr_assert_eq(fr.step, 10u);
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT pos_x FROM trajectory_data WHERE frame = 2 AND id = %llu",
             (unsigned long long)fr.global_ids[7]);
    sqlite3_stmt* st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_eq(sqlite3_column_double(st, 0), (double)fr.positions[14], "%.17g vs %.9g",
                 sqlite3_column_double(st, 0), (double)fr.positions[14]);
    sqlite3_finalize(st);
    sqlite3_close(db);
    shoal_recording_destroy(rec);

    /* A 3D world is refused before the run. */
    char json3[256], db3[256];
    scratch_path(&s, "scene3.json", json3, sizeof json3);
    write_text(json3, scene_3d);
    scratch_path(&s, "run3.sqlite", db3, sizeof db3);
    r = expect_run(1, (const char*[]){"run", json3, "--export", db3, "--quiet", NULL});
    cr_assert_not_null(strstr(r.err, "3D recording cannot go to SQLite"), "%s", r.err);
    cr_assert_null(strstr(r.out, "state_hash"), "%s", r.out);
    output_free(&r);
    cr_assert(!exists(db3));
    cr_assert_eq(count_entries(&s), 4);
    scratch_close(&s);
}

#else /* !SHOAL_WITH_SQLITE */

Test(export, sqlite_says_how_to_get_it)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], db_path[256];
    record_scene(&s, scene_2d, rec_path, sizeof rec_path);
    scratch_path(&s, "out.sqlite", db_path, sizeof db_path);
    cli_output_t r = expect_run(2, (const char*[]){"export", rec_path, "--sqlite", db_path, NULL});
    cr_assert_not_null(strstr(r.err, "libsqlite3-dev"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "SHOAL_WITH_SQLITE"), "%s", r.err);
    output_free(&r);
    cr_assert(!exists(db_path));
    scratch_close(&s);
}

#endif

/* A removed agent's slot reused by a new agent (generation 2): the CSV
 * keeps both columns of the handle and the global id, the database gives
 * the newcomer an id of its own (its global id; in a recording without
 * them, one made from the handle), so PedPy never joins the two into one
 * trajectory. The recording is written through the library, in this
 * process (serial backend: no OpenMP here), in format `version`. */
static void record_slot_reuse(const char* path, int version)
{
    shoal_world_def_t wd = shoal_world_default_def();
    wd.backend = SHOAL_BACKEND_SERIAL;
    wd.thread_count = 1;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&wd, &w, &err), SHOAL_OK, "%s", err.message);
    shoal_agent_t ids[3];
    for (int i = 0; i < 3; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)(5 * i);
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK);
    }
    shoal_recording_header_t h = shoal_recording_default_header();
    h.dt = 0.1f;
    shoal_recorder_t* rec = NULL;
    cr_assert_eq(shoal_recording_open_version(path, &h, version, &rec, &err), SHOAL_OK, "%s", err.message);
    for (int f = 0; f < 4; ++f) {
        if (f == 2) { /* the middle agent leaves, a newcomer takes its slot */
            cr_assert_eq(shoal_agent_remove(w, ids[1]), SHOAL_OK);
            shoal_agent_def_t d = shoal_agent_default_def();
            d.position[1] = 50.0f;
            shoal_agent_t fresh;
            cr_assert_eq(shoal_agent_add(w, &d, &fresh), SHOAL_OK);
            cr_assert_eq(fresh.index1, ids[1].index1, "the slot is reused");
            cr_assert_eq(fresh.generation, 2);
        }
        cr_assert_eq(shoal_recording_write_frame(rec, w, &err), SHOAL_OK, "%s", err.message);
        cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK);
    }
    cr_assert_eq(shoal_recording_close(rec, &err), SHOAL_OK, "%s", err.message);
    shoal_world_destroy(w);
}

#if SHOAL_WITH_SQLITE && SHOAL_WITH_GEOS
/* A closed room with no one in it, and agents around it: the walls cut the
 * box in two parts; the walkable area is the one with the agents (the box
 * with the room as a hole), the room counted as a part left out. */
Test(export, a_closed_room_of_walls_is_left_out_of_the_walkable_area)
{
    static const char room[] =
        "{\"name\": \"room\", \"dimensions\": 2, \"seed\": 3, \"dt\": 0.05, \"steps\": 12,\n"
        " \"walls\": [{\"points\": [[-5, -5], [5, -5], [5, 5], [-5, 5]], \"closed\": true}],\n"
        " \"groups\": [{\"name\": \"out\", \"count\": 12, \"spawn\": {\"shape\": \"box\", \"center\": [15, "
        "0], "
        "\"size\": [4, 8]},\n"
        "   \"vehicle\": {\"max_speed\": 1, \"max_force\": 10}, \"behaviors\": {\"seek\": {}}, \"target\": "
        "[15, "
        "10]}]}\n";
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], db_path[256];
    record_scene(&s, room, rec_path, sizeof rec_path);
    scratch_path(&s, "room.sqlite", db_path, sizeof db_path);
    cli_output_t r = expect_run(0, (const char*[]){"export", rec_path, "--sqlite", db_path, NULL});
    output_free(&r);
    sqlite3* db = open_db(db_path);
    char* parts = query_text(db, "SELECT value FROM metadata WHERE key = 'shoal_area_parts_left_out'");
    cr_expect_str_eq(parts, "1");
    free(parts);
    char* wkt = query_text(db, "SELECT wkt FROM geometry");
    cr_assert_eq(strncmp(wkt, "POLYGON ((", 10), 0, "%.80s", wkt);
    int holes = 0;
    for (const char* p = wkt; (p = strstr(p, "), (")) != NULL; ++p) holes += 1;
    cr_expect_eq(holes, 1, "the room and its walls, one hole: %s", wkt);
    free(wkt);
    sqlite3_close(db);
    scratch_close(&s);
}
#endif

static void reused_slot(int version)
{
    scratch_t s;
    scratch_open(&s);
    char rec_path[256], csv[256];
    scratch_path(&s, "reuse.rec", rec_path, sizeof rec_path);
    record_slot_reuse(rec_path, version);
    scratch_path(&s, "reuse.csv", csv, sizeof csv);
    cli_output_t r = expect_run(0, (const char*[]){"export", rec_path, "--csv", csv, NULL});
    output_free(&r);
    shoal_recording_t* rec = load(rec_path);
    check_csv(csv, rec); /* speeds only within one generation: the rows say which */
    shoal_recording_destroy(rec);
    char* text = read_all(csv, NULL);
    cr_assert_not_null(strstr(text, "\n2,2,"), "frame 2 is there: %.200s", text);
    /* ",id,generation,global_id,group,group_name,": agents 0, 1, 2 were
     * added first, the newcomer is agent 3 */
    const char* first = version == 4 ? ",2,1,1,0,," : ",2,1,,0,,";
    const char* second = version == 4 ? ",2,2,3,0,," : ",2,2,,0,,";
    int count = 0;
    for (const char* p = text; (p = strstr(p, first)) != NULL; ++p) count += 1;
    cr_assert_eq(count, 2, "id 2 of generation 1 in frames 0 and 1: %s", text);
    count = 0;
    for (const char* p = text; (p = strstr(p, second)) != NULL; ++p) count += 1;
    cr_assert_eq(count, 2, "id 2 of generation 2 in frames 2 and 3: %s", text);
    free(text);
#if SHOAL_WITH_SQLITE
    char db_path[256];
    scratch_path(&s, "reuse.sqlite", db_path, sizeof db_path);
    r = expect_run(0, (const char*[]){"export", rec_path, "--sqlite", db_path, NULL});
    output_free(&r);
    sqlite3* db = open_db(db_path);
    cr_assert_eq(query_int(db, "SELECT count(DISTINCT id) FROM trajectory_data"), 4);
    char* kind = query_text(db, "SELECT value FROM metadata WHERE key = 'shoal_agent_ids'");
    cr_assert_str_eq(kind, version == 4 ? "global" : "handle");
    free(kind);
    if (version == 4) { /* the global ids 0..3 */
        cr_assert_eq(query_int(db, "SELECT count(*) FROM trajectory_data WHERE id = 1"), 2);
        cr_assert_eq(query_int(db, "SELECT count(*) FROM trajectory_data WHERE id = 3"), 2);
        cr_assert_eq(query_int(db, "SELECT max(id) FROM trajectory_data"), 3);
        cr_assert_eq(query_int(db, "SELECT handle_generation FROM shoal_agents WHERE id = 3"), 2);
        cr_assert_eq(query_int(db, "SELECT handle_index FROM shoal_agents WHERE id = 3"), 2);
        cr_assert_eq(query_int(db, "SELECT handle_index FROM shoal_agents WHERE id = 1"), 2);
    } else {
        cr_assert_eq(query_int(db, "SELECT count(*) FROM trajectory_data WHERE id = 2"), 2);
        cr_assert_eq(query_int(db, "SELECT count(*) FROM trajectory_data WHERE id = 2 + 4294967296"), 2);
        cr_assert_eq(query_int(db, "SELECT handle_generation FROM shoal_agents WHERE id = 4294967298"), 2);
        cr_assert_eq(query_int(db, "SELECT handle_index FROM shoal_agents WHERE id = 4294967298"), 2);
    }
    sqlite3_close(db);
#endif
    scratch_close(&s);
}

Test(export, a_reused_slot_is_another_agent) { reused_slot(4); }

Test(export, a_reused_slot_is_another_agent_version_3) { reused_slot(3); }
