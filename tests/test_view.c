/* What `shoal view` puts in its page (cli/viewer/view_stream.h): the recording
 * written again from what the library's reader loaded, every N-th frame and
 * at most M agents a frame, read back here with the library's reader; the
 * automatic thinning of big recordings; and the command's options, its
 * errors and what the page says it shows. */
#define _XOPEN_SOURCE 700

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "shoal/recording.h"
#include "cli/viewer/view_stream.h"

#define TINY SHOAL_SOURCE_DIR "/scenarios/tiny.json"

/* tiny.json (200 agents) for 60 steps, recorded: 61 frames, in a fresh
 * directory `dir` (at least 64 bytes) as dir/r.rec. */
static void record_tiny(char* dir, char* rec, size_t size)
{
    strcpy(dir, "/tmp/shoal_view_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(rec, size, "%s/r.rec", dir);
    cli_output_t r;
    run_cli((const char*[]){"run", TINY, "--steps", "60", "--threads", "1", "--quiet", "--record", rec, NULL},
            &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
}

static void remove_dir(const char* dir)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    cr_expect_eq(system(command), 0);
}

typedef struct sink_buffer_t {
    uint8_t* data;
    size_t size;
} sink_buffer_t;

static int to_memory(void* context, const uint8_t* bytes, size_t size)
{
    sink_buffer_t* b = context;
    b->data = realloc(b->data, b->size + size);
    cr_assert_not_null(b->data);
    memcpy(b->data + b->size, bytes, size);
    b->size += size;
    return 0;
}

static shoal_recording_t* load(const char* path)
{
    shoal_recording_t* rec = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_recording_load(path, 0, &rec, &err), SHOAL_OK, "%s", err.message);
    return rec;
}

static shoal_recording_reader_t* open_reader(const char* path)
{
    shoal_recording_reader_t* rd = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_recording_reader_open(path, 0, &rd, &err), SHOAL_OK, "%s", err.message);
    return rd;
}

/* The stream of the recording at `path` for `thin` (written from the frame
 * reader, as `shoal view` does), loaded back with the library's reader. */
static shoal_recording_t* thinned(const char* path, view_thinning_t thin)
{
    sink_buffer_t b = {NULL, 0};
    shoal_recording_reader_t* rd = open_reader(path);
    shoal_error_t err;
    cr_assert_eq(view_stream_write(rd, thin, to_memory, &b, NULL, &err), 0);
    if (!thin.compressed)
        cr_expect_eq(b.size, view_stream_size(rd, thin), "the size it announced is not what it wrote");
    shoal_recording_reader_close(rd);
    shoal_recording_t* out = NULL;
    cr_assert_eq(shoal_recording_load_memory(b.data, b.size, "stream", 0, &out, &err), SHOAL_OK, "%s",
                 err.message);
    free(b.data);
    return out;
}

/* Agent `id` in frame `f`: its index, or -1. */
static int32_t find(const shoal_recording_frame_t* f, uint32_t id)
{
    for (int32_t i = 0; i < f->count; ++i)
        if (f->ids[i] == id) return i;
    return -1;
}

Test(view, thinning_keeps_every_nth_frame_and_the_same_agents)
{
    char dir[64], path[128];
    record_tiny(dir, path, sizeof path);
    shoal_recording_t* rec = load(path);
    cr_assert_eq(shoal_recording_frame_count(rec), 61);
    cr_expect_eq(view_frames_kept(61, 1), 61);
    cr_expect_eq(view_frames_kept(61, 4), 16);  /* 0, 4, ..., 60 */
    cr_expect_eq(view_frames_kept(61, 7), 10);  /* 0, 7, ..., 56, and 60 */
    cr_expect_eq(view_frames_kept(61, 100), 2); /* 0 and 60 */

    /* Nothing thinned: the same recording, frame for frame. */
    shoal_recording_t* all = thinned(path, (view_thinning_t){1, 0, 0});
    cr_expect_eq(shoal_recording_frame_count(all), 61);
    cr_expect_eq(shoal_recording_version(all), 2);

    shoal_recording_t* t = thinned(path, (view_thinning_t){7, 50, 0});
    cr_assert_eq(shoal_recording_frame_count(t), 10);
    cr_expect_eq(shoal_recording_header(t)->record_every, 7 * shoal_recording_header(rec)->record_every);
    cr_expect_str_eq(shoal_recording_header(t)->scenario_text, shoal_recording_header(rec)->scenario_text);
    shoal_recording_geometry_t g;
    cr_expect_eq(shoal_recording_geometry(t, &g), SHOAL_OK);
    uint32_t first[50];
    for (int32_t k = 0; k < 10; ++k) {
        int32_t source = k < 9 ? 7 * k : 60;
        shoal_recording_frame_t a, b;
        cr_assert_eq(shoal_recording_frame(rec, source, &a), SHOAL_OK);
        cr_assert_eq(shoal_recording_frame(t, k, &b), SHOAL_OK);
        cr_expect_eq(b.step, a.step, "frame %d", k);
        cr_expect_eq(b.time, a.time, "frame %d", k);
        cr_assert_eq(b.count, 50, "frame %d has %d agents", k, b.count);
        for (int32_t i = 0; i < 50; ++i) {
            if (k == 0) first[i] = b.ids[i];
            /* tiny.json keeps its 200 agents: the same 50 in every frame. */
            cr_expect_eq(b.ids[i], first[i], "frame %d: agent %d is %u, was %u", k, i, b.ids[i], first[i]);
            int32_t j = find(&a, b.ids[i]);
            cr_assert_geq(j, 0);
            cr_expect_eq(b.generations[i], a.generations[j]);
            cr_expect_eq(b.groups[i], a.groups[j]);
            cr_expect_eq(b.positions[2 * i], a.positions[2 * j]);
            cr_expect_eq(b.positions[2 * i + 1], a.positions[2 * j + 1]);
            cr_expect_eq(b.headings[i], a.headings[j]);
        }
    }
    /* A sample, not the lowest ids: tiny.json's two groups are both in it. */
    shoal_recording_frame_t b;
    shoal_recording_frame(t, 0, &b);
    int groups[2] = {0, 0};
    for (int32_t i = 0; i < b.count; ++i) groups[b.groups[i] != 0]++;
    cr_expect(groups[0] > 0 && groups[1] > 0, "groups %d and %d", groups[0], groups[1]);
    cr_expect_gt(b.ids[49], 100u, "the 50 lowest ids, not a sample");

    shoal_recording_destroy(t);
    shoal_recording_destroy(all);
    shoal_recording_destroy(rec);
    remove_dir(dir);
}

/* Frames `a` and `b` hold the same agents with the same values, bit for bit. */
static void expect_same_frame(const shoal_recording_frame_t* a, const shoal_recording_frame_t* b,
                              int32_t dims, int32_t k)
{
    cr_assert_eq(b->count, a->count, "frame %d", k);
    cr_expect_eq(b->step, a->step, "frame %d", k);
    const int32_t rot = dims == 2 ? 1 : 4;
    const float* ra = dims == 2 ? a->headings : a->orientations;
    const float* rb = dims == 2 ? b->headings : b->orientations;
    for (int32_t i = 0; i < a->count; ++i) {
        cr_expect_eq(b->ids[i], a->ids[i]);
        cr_expect_eq(b->generations[i], a->generations[i]);
        cr_expect_eq(b->groups[i], a->groups[i]);
        cr_expect_eq(memcmp(b->positions + dims * i, a->positions + dims * i, sizeof(float) * (size_t)dims),
                     0, "frame %d agent %d", k, i);
        cr_expect_eq(memcmp(rb + rot * i, ra + rot * i, sizeof(float) * (size_t)rot), 0);
        if (a->global_ids != NULL && b->global_ids != NULL) cr_expect_eq(b->global_ids[i], a->global_ids[i]);
    }
}

Test(view, the_compressed_stream_holds_the_same_frames_as_the_recording)
{
    char dir[64], path[128];
    record_tiny(dir, path, sizeof path);
    shoal_recording_t* rec = load(path); /* version 4: global ids */
    cr_assert_eq(shoal_recording_version(rec), 4);
    shoal_recording_t* all = thinned(path, (view_thinning_t){1, 0, 1});
    cr_expect_eq(shoal_recording_version(all), 4);
    cr_assert_eq(shoal_recording_frame_count(all), 61);
    for (int32_t k = 0; k < 61; ++k) {
        shoal_recording_frame_t a, b;
        shoal_recording_frame(rec, k, &a);
        shoal_recording_frame(all, k, &b);
        cr_assert_not_null(b.global_ids);
        expect_same_frame(&a, &b, 2, k);
    }
    /* Thinned, each kept frame is predicted from the kept ones before it. */
    shoal_recording_t* t = thinned(path, (view_thinning_t){7, 50, 1});
    cr_assert_eq(shoal_recording_frame_count(t), 10);
    for (int32_t k = 0; k < 10; ++k) {
        shoal_recording_frame_t a, b;
        shoal_recording_frame(rec, k < 9 ? 7 * k : 60, &a);
        shoal_recording_frame(t, k, &b);
        cr_assert_eq(b.count, 50);
        for (int32_t i = 0; i < 50; ++i) {
            int32_t j = find(&a, b.ids[i]);
            cr_assert_geq(j, 0);
            cr_expect_eq(b.global_ids[i], a.global_ids[j]);
            cr_expect_eq(memcmp(b.positions + 2 * i, a.positions + 2 * j, 2 * sizeof(float)), 0);
            cr_expect_eq(memcmp(b.headings + i, a.headings + j, sizeof(float)), 0);
        }
    }
    /* The estimate errs within a factor of three of what was written. */
    sink_buffer_t b = {NULL, 0};
    shoal_recording_reader_t* rd = open_reader(path);
    shoal_error_t err;
    view_summary_t summary;
    cr_assert_eq(view_stream_write(rd, (view_thinning_t){1, 0, 1}, to_memory, &b, &summary, &err), 0);
    /* Unthinned, a version 4 file's stream is the file, byte for byte: the
     * library's writer compresses each frame the same way. */
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f);
    uint8_t* file = malloc(b.size + 1);
    size_t n = fread(file, 1, b.size + 1, f);
    fclose(f);
    cr_expect(n == b.size && memcmp(file, b.data, b.size) == 0,
              "the stream differs from the file (%zu and %zu bytes)", b.size, n);
    free(file);
    uint64_t estimate = view_stream_size(rd, (view_thinning_t){1, 0, 1});
    cr_expect(estimate < 3 * b.size && b.size < 3 * estimate, "estimated %llu, wrote %zu",
              (unsigned long long)estimate, b.size);
    /* ... and the summary covers every agent's position and both groups. */
    cr_expect_eq(summary.group_count, 2);
    cr_expect_gt(summary.max_speed, 0.0);
    for (int32_t k = 0; k < 61; ++k) {
        shoal_recording_frame_t a;
        shoal_recording_frame(rec, k, &a);
        for (int32_t i = 0; i < 2 * a.count; ++i)
            cr_expect(a.positions[i] >= summary.lo[i % 2] && a.positions[i] <= summary.hi[i % 2]);
    }
    free(b.data);
    shoal_recording_reader_close(rd);
    shoal_recording_destroy(t);
    shoal_recording_destroy(all);
    shoal_recording_destroy(rec);
    remove_dir(dir);
}

Test(view, a_version_2_or_1_recording_compresses_to_version_3)
{
    const char* path = SHOAL_SOURCE_DIR "/tests/fuzz/corpus/recording/tiny-2d.rec";
    shoal_recording_t* rec = load(path);
    shoal_recording_t* t = thinned(path, (view_thinning_t){1, 0, 1});
    cr_expect_eq(shoal_recording_version(t), 3);
    shoal_recording_geometry_t g;
    cr_expect_eq(shoal_recording_geometry(t, &g), SHOAL_OK);
    cr_expect_eq(g.wall_count + g.obstacle_count, 0, "a recording without geometry gets an empty one");
    cr_assert_eq(shoal_recording_frame_count(t), shoal_recording_frame_count(rec));
    for (int32_t k = 0; k < shoal_recording_frame_count(rec); ++k) {
        shoal_recording_frame_t a, b;
        shoal_recording_frame(rec, k, &a);
        shoal_recording_frame(t, k, &b);
        cr_expect_null(b.global_ids);
        expect_same_frame(&a, &b, shoal_recording_header(rec)->dimensions, k);
    }
    shoal_recording_destroy(t);
    shoal_recording_destroy(rec);
}

Test(view, a_version_1_recording_stays_without_geometry)
{
    const char* path = SHOAL_SOURCE_DIR "/tests/fuzz/corpus/recording/tiny-2d.rec";
    shoal_recording_t* rec = load(path);
    cr_assert_eq(shoal_recording_version(rec), 1);
    shoal_recording_t* t = thinned(path, (view_thinning_t){2, 0, 0});
    cr_expect_eq(shoal_recording_version(t), 1);
    shoal_recording_geometry_t g;
    cr_expect_eq(shoal_recording_geometry(t, &g), SHOAL_ERR_NOT_FOUND);
    cr_expect_eq(shoal_recording_frame_count(t), view_frames_kept(shoal_recording_frame_count(rec), 2));
    shoal_recording_destroy(t);
    shoal_recording_destroy(rec);
}

Test(view, the_automatic_choice_fits_and_thins_no_more_than_it_must)
{
    char dir[64], path[128];
    record_tiny(dir, path, sizeof path);
    shoal_recording_reader_t* rec = open_reader(path);
    uint64_t whole = view_stream_size(rec, (view_thinning_t){1, 0, 0});

    view_thinning_t t = view_choose_thinning(rec, 0, whole, 20, 10);
    cr_expect(t.every == 1 && t.max_agents == 0, "it fits: nothing thinned (%d, %d)", t.every, t.max_agents);

    /* A third of the bytes: fewer frames (61 -> 21 leaves more than 20), all agents. */
    t = view_choose_thinning(rec, 0, whole / 3, 20, 10);
    cr_expect_eq(t.max_agents, 0);
    cr_expect_leq(view_stream_size(rec, t), whole / 3);
    cr_expect_gt(view_stream_size(rec, (view_thinning_t){t.every - 1, 0, 0}), whole / 3,
                 "every %d: %d would fit too", t.every, t.every - 1);

    /* A tenth, wanting 40 frames: fewer agents too. */
    t = view_choose_thinning(rec, 0, whole / 10, 40, 10);
    cr_expect(t.max_agents >= 10 && t.max_agents < 200, "max_agents %d", t.max_agents);
    cr_expect_leq(view_stream_size(rec, t), whole / 10);
    cr_expect_geq(view_frames_kept(61, t.every), 30, "every %d", t.every);
    shoal_recording_reader_close(rec);
    remove_dir(dir);
}

static char* read_all(const char* path)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* text = malloc((size_t)n + 1);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* The recording inside a page, loaded with the library's reader; `attributes`
 * gets the recording tag's attributes. */
static shoal_recording_t* page_recording(const char* page, char* attributes, size_t size)
{
    char* text = read_all(page);
    const char* tag = strstr(text, "<script type=\"application/octet-stream\" id=\"recording\"");
    cr_assert_not_null(tag);
    const char* end = strchr(tag, '>');
    snprintf(attributes, size, "%.*s", (int)(end - tag), tag);
    const char* close = strstr(end, "</script>");
    uint8_t* bytes = malloc((size_t)(close - end));
    size_t n = 0;
    uint32_t v = 0;
    int bits = 0;
    for (const char* c = end + 1; c < close; ++c) {
        const char* digit = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", *c);
        if (*c == '\n' || *c == '=') continue;
        cr_assert(digit != NULL && *c != '\0', "not base64: '%c'", *c);
        v = v << 6 | (uint32_t)(digit - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes[n++] = (uint8_t)(v >> bits);
        }
    }
    shoal_recording_t* rec = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_recording_load_memory(bytes, n, page, 0, &rec, &err), SHOAL_OK, "%s", err.message);
    free(bytes);
    free(text);
    return rec;
}

Test(view, the_page_holds_what_the_options_ask_and_says_so)
{
    char dir[64], path[128], page[160], attributes[512];
    record_tiny(dir, path, sizeof path);
    snprintf(page, sizeof page, "%s/p.html", dir);
    cli_output_t r;
    run_cli((const char*[]){"view", path, "-o", page, "--every", "4", "--max-agents", "50", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    shoal_recording_t* rec = page_recording(page, attributes, sizeof attributes);
    cr_expect_eq(shoal_recording_frame_count(rec), 16);
    shoal_recording_frame_t f;
    shoal_recording_frame(rec, 15, &f);
    cr_expect_eq(f.count, 50);
    cr_expect_eq(f.step, 60u);
    cr_expect(matches(attributes, "data-shown=\"every 4th frame \\(16 of 61\\), 50 of 200 agents\""), "%s",
              attributes);
    /* the version of the file read (shoal run records version 4); the page
     * holds version 4 too where it decodes zstd, else version 2 */
    cr_expect(matches(attributes, "data-version=\"4\""), "%s", attributes);
    shoal_recording_destroy(rec);

    /* --every alone: all agents. */
    run_cli((const char*[]){"view", path, "-o", page, "--every=2", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    output_free(&r);
    rec = page_recording(page, attributes, sizeof attributes);
    cr_expect_eq(shoal_recording_frame_count(rec), 31);
    cr_expect(matches(attributes, "data-shown=\"every 2nd frame \\(31 of 61\\), all 200 agents\""), "%s",
              attributes);
    shoal_recording_destroy(rec);

    /* Small enough: all of it, and the page says nothing about thinning. */
    run_cli((const char*[]){"view", path, "-o", page, NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.err, "");
    output_free(&r);
    rec = page_recording(page, attributes, sizeof attributes);
    cr_expect_eq(shoal_recording_frame_count(rec), 61);
    cr_expect(!matches(attributes, "data-shown"), "%s", attributes);
    shoal_recording_destroy(rec);
    remove_dir(dir);
}

Test(view, bad_values_are_usage_errors_and_write_nothing)
{
    char dir[64], path[128], page[160];
    record_tiny(dir, path, sizeof path);
    snprintf(page, sizeof page, "%s/p.html", dir);
    const char* cases[][2] = {{"--every", "0"},       {"--every", "-3"},       {"--every", "x"},
                              {"--every", "2.5"},     {"--every", ""},         {"--max-agents", "0"},
                              {"--max-agents", "-1"}, {"--max-agents", "1e3"}, {"--every", "99999999999"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cli_output_t r;
        run_cli((const char*[]){"view", path, "-o", page, cases[i][0], cases[i][1], NULL}, &r);
        cr_expect_eq(r.status, 2, "%s %s: exit %d", cases[i][0], cases[i][1], r.status);
        cr_expect(matches(r.err, "needs an integer in 1\\.\\.2147483647, not '"), "%s %s: %s", cases[i][0],
                  cases[i][1], r.err);
        output_free(&r);
        cr_expect_neq(access(page, F_OK), 0, "%s %s: a page was written", cases[i][0], cases[i][1]);
    }
    /* A damaged recording: an error, no page, nothing left beside it. */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/bad.rec", dir);
    FILE* f = fopen(bad, "wb");
    fputs("SHOALREC but not really", f);
    fclose(f);
    cli_output_t r;
    run_cli((const char*[]){"view", bad, "-o", page, "--every", "2", NULL}, &r);
    cr_expect_eq(r.status, 1);
    cr_expect(matches(r.err, "recording .*bad\\.rec"), "%s", r.err);
    output_free(&r);
    cr_expect_neq(access(page, F_OK), 0, "a page was written for a damaged recording");
    remove_dir(dir);
}

Test(view, a_recording_cut_short_gives_its_warning_to_the_page)
{
    char dir[64], path[128], cut[160], page[160], attributes[512];
    record_tiny(dir, path, sizeof path);
    snprintf(cut, sizeof cut, "%s/cut.rec", dir);
    snprintf(page, sizeof page, "%s/p.html", dir);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(truncate(path, st.st_size - 100), 0); /* inside the last frame */
    cli_output_t r;
    run_cli((const char*[]){"view", path, "-o", page, "--every", "3", NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(matches(r.err, "warning: .*truncated after frame 59 \\(60 complete frames\\)"), "%s", r.err);
    output_free(&r);
    shoal_recording_t* rec = page_recording(page, attributes, sizeof attributes);
    cr_expect_eq(shoal_recording_frame_count(rec), 21); /* 0, 3, ..., 57, and 59 */
    cr_expect(matches(attributes, "data-warning=\"[^\"]*truncated after frame 59"), "%s", attributes);
    shoal_recording_destroy(rec);
    (void)cut;
    remove_dir(dir);
}
