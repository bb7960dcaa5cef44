/* Pre-integrated trim trajectories (section 3.2 of the trim-trajectory
 * planning paper: online path planning over pre-integrated trim
 * trajectories): table layout and control sampling, the table against the
 * online integration bit for bit, Euler physics (arcs, first-order
 * convergence, planarity, mirror symmetry, pitch and roll signs), save/load
 * with its failure modes, spec validation and determinism. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, opendir, unlink */

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simd/vec.h"
#include "io/trim_file.h"
#include "support.h"

_Static_assert(sizeof(trim_entry_t) == 40, "the planning paper's 12 + 12 + 16 bytes per path");

/* The paper's 2D model (Figure 7: 17 control samples) and 3D model (121). */
static trim_spec_t spec_2d(int32_t substeps)
{
    return (trim_spec_t){.axes = 1,
                         .samples = {17, 1, 1},
                         .max_rate = {8.0f, 0.0f, 0.0f},
                         .interval = 1.0f,
                         .substeps = substeps};
}

static trim_spec_t spec_3d(void)
{
    return (trim_spec_t){
        .axes = 2, .samples = {11, 11, 1}, .max_rate = {5.0f, 5.0f, 0.0f}, .interval = 1.0f, .substeps = 60};
}

static trim_spec_t spec_roll(void)
{
    return (trim_spec_t){
        .axes = 3, .samples = {5, 5, 5}, .max_rate = {2.0f, 2.0f, 2.0f}, .interval = 0.5f, .substeps = 30};
}

static void build(trim_table_t* t, const trim_spec_t* spec)
{
    char msg[200] = "";
    cr_assert(trim_spec_valid(spec, msg, sizeof msg), "spec: %s", msg);
    cr_assert_eq(trim_table_build(t, spec, NULL, NULL), 0);
}

static const trim_entry_t* entry(const trim_table_t* t, int32_t ci, int32_t cf)
{
    return &t->entries[(size_t)ci * (size_t)t->controls + (size_t)cf];
}

#define TWO_PI 6.283185307179586

static int32_t pick(uint64_t* s, int32_t n) { return (int32_t)(rng_splitmix64(s) % (uint64_t)n); }

static float qlen(quat q) { return sqrtf(quat_dot(q, q)); }

/* ---- 1. Layout, control sampling, the straight trajectory --------------- */

Test(trim, layout_sampling_and_straight)
{
    cr_assert_eq(sizeof(trim_entry_t), 40);

    trim_spec_t s = spec_2d(60);
    trim_table_t t;
    build(&t, &s);
    cr_assert_eq(t.controls, 17);
    cr_assert_eq(trim_table_bytes(&t), 289 * 40);
    cr_assert_eq(t.straight, 8);

    /* Uniform sampling of [-8, 8] in steps of 1; 0 and the ends exact. */
    float r[TRIM_MAX_AXES];
    for (int32_t c = 0; c < 17; ++c) {
        trim_control_rates(&s, c, r);
        cr_assert_float_eq(r[0], -8.0f + (float)c, 1e-6f, "control %d: %g", c, (double)r[0]);
        cr_assert(r[1] == 0.0f && r[2] == 0.0f);
    }
    trim_control_rates(&s, 0, r);
    cr_assert(r[0] == -8.0f);
    trim_control_rates(&s, 16, r);
    cr_assert(r[0] == 8.0f);
    trim_control_rates(&s, 8, r);
    cr_assert(r[0] == 0.0f);

    /* Any bound: the middle sample is exactly 0, the ends exactly +-max, and
     * mirrored samples exact negatives (what mirror symmetry rests on). */
    const float bounds[] = {0.7f, 0.3f, 1.1f, 2.9f, 6.1f};
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; ++b) {
        trim_spec_t odd = {
            .axes = 1, .samples = {11}, .max_rate = {bounds[b]}, .interval = 1.0f, .substeps = 1};
        float lo[TRIM_MAX_AXES], hi[TRIM_MAX_AXES];
        trim_control_rates(&odd, 5, r);
        cr_assert(r[0] == 0.0f, "max %g: middle %g", (double)bounds[b], (double)r[0]);
        for (int32_t i = 0; i < 11; ++i) {
            trim_control_rates(&odd, i, lo);
            trim_control_rates(&odd, 10 - i, hi);
            cr_assert(lo[0] == -hi[0], "max %g: %d", (double)bounds[b], i);
        }
        trim_control_rates(&odd, 10, r);
        cr_assert(r[0] == bounds[b]);
    }

    /* Straight flight: identity orientation, facing +x, one interval long. */
    const trim_entry_t* e = entry(&t, t.straight, t.straight);
    cr_assert_float_eq(e->pos.x, 1.0f, 1e-6f, "x = %.9g", (double)e->pos.x);
    cr_assert(e->pos.y == 0.0f && e->pos.z == 0.0f, "(%g, %g)", (double)e->pos.y, (double)e->pos.z);
    cr_assert(e->facing.x == 1.0f && e->facing.y == 0.0f && e->facing.z == 0.0f);
    cr_assert(e->rot.w == 1.0f && e->rot.x == 0.0f && e->rot.y == 0.0f && e->rot.z == 0.0f);
    trim_table_free(&t, NULL, NULL);
    cr_assert_null(t.entries);
    cr_assert_eq(trim_table_bytes(&t), 0);

    /* 3D: axis 0 (yaw) varies fastest; the straight control is the middle. */
    trim_spec_t s3 = spec_3d();
    trim_control_rates(&s3, 3 + 11 * 7, r);
    cr_assert_float_eq(r[0], -2.0f, 1e-6f);
    cr_assert_float_eq(r[1], 2.0f, 1e-6f);
    cr_assert(r[2] == 0.0f);
    build(&t, &s3);
    cr_assert_eq(t.controls, 121);
    cr_assert_eq(t.straight, 5 + 11 * 5);
    trim_control_rates(&s3, t.straight, r);
    cr_assert(r[0] == 0.0f && r[1] == 0.0f && r[2] == 0.0f);
    trim_table_free(&t, NULL, NULL);

    /* Even counts have no zero sample: the straight control is the nearest
     * (just below 0). Controls outside the table fly straight. */
    trim_spec_t even = {.axes = 1, .samples = {4}, .max_rate = {3.0f}, .interval = 1.0f, .substeps = 4};
    build(&t, &even);
    cr_assert_eq(t.straight, 1);
    trim_control_rates(&even, 1, r);
    cr_assert_float_eq(r[0], -1.0f, 1e-6f);
    trim_control_rates(&even, 4, r);
    cr_assert(r[0] == 0.0f);
    trim_control_rates(&even, -1, r);
    cr_assert(r[0] == 0.0f);
    trim_table_free(&t, NULL, NULL);
}

/* ---- 2. The table is the online integration, bit for bit --------------- */

static trim_pose_t random_pose(uint64_t* rng, int planar)
{
    trim_pose_t p;
    p.pos = vec3_make(uniform(rng, -100.0f, 100.0f), uniform(rng, -100.0f, 100.0f),
                      planar ? 0.0f : uniform(rng, -100.0f, 100.0f));
    if (planar)
        p.rot = quat_from_yaw(uniform(rng, -3.1f, 3.1f));
    else
        p.rot = quat_from_yaw_pitch_roll(uniform(rng, -3.1f, 3.1f), uniform(rng, -1.5f, 1.5f),
                                         uniform(rng, -3.1f, 3.1f));
    return p;
}

static void check_online_matches(const trim_spec_t* spec, uint64_t seed, int trials)
{
    trim_table_t t;
    build(&t, spec);
    uint64_t rng = seed;
    int planar = spec->axes == 1;
    for (int i = 0; i < trials; ++i) {
        trim_pose_t start = random_pose(&rng, planar);
        float speed = uniform(&rng, 0.25f, 40.0f);
        int32_t ci = pick(&rng, t.controls), cf = pick(&rng, t.controls);
        if (i == 0) ci = cf = t.straight;

        /* What a planner agent does, frame by frame, from the table's own
         * spec (a copy, as an agent would hold). */
        trim_spec_t own = t.spec;
        trim_rel_t r = trim_rel_start();
        for (int32_t k = 0; k < own.substeps; ++k) trim_integrate_step(&own, ci, cf, &r);
        cr_assert_eq(r.k, own.substeps);
        const trim_entry_t* e = entry(&t, ci, cf);
        cr_assert(memcmp(&r.pos, &e->pos, sizeof r.pos) == 0, "pos of (%d, %d)", ci, cf);
        cr_assert(memcmp(&r.rot, &e->rot, sizeof r.rot) == 0, "rot of (%d, %d)", ci, cf);

        trim_pose_t online = trim_compose(start, r.pos, r.rot, speed);
        trim_pose_t planned = trim_apply(&t, start, ci, cf, speed);
        cr_assert(memcmp(&online, &planned, sizeof online) == 0,
                  "trial %d (%d, %d): online (%.9g, %.9g, %.9g) planned (%.9g, %.9g, %.9g)", i, ci, cf,
                  (double)online.pos.x, (double)online.pos.y, (double)online.pos.z, (double)planned.pos.x,
                  (double)planned.pos.y, (double)planned.pos.z);

        /* The stored facing, carried into the world, is where the vehicle
         * ends up pointing. */
        vec3 f_end = quat_forward(online.rot);
        vec3 f_tab = quat_rotate(start.rot, e->facing);
        cr_assert(vec3_distance(f_end, f_tab) < 1e-6f, "facing (%d, %d) off by %g", ci, cf,
                  (double)vec3_distance(f_end, f_tab));
        /* ... and the composed move has the speed's length scale. */
        cr_assert_float_eq(vec3_distance(online.pos, start.pos), speed * vec3_length(e->pos),
                           1e-5f * speed * 2.0f);
        if (planar) cr_assert(online.pos.z == 0.0f);
    }
    trim_table_free(&t, NULL, NULL);
}

Test(trim, table_matches_online_integration_2d)
{
    trim_spec_t s = spec_2d(60);
    check_online_matches(&s, 11, 500);
}

Test(trim, table_matches_online_integration_3d)
{
    trim_spec_t s = spec_3d();
    check_online_matches(&s, 12, 500);
    trim_spec_t r = spec_roll();
    check_online_matches(&r, 13, 300);
}

/* A chain of intervals: each starts where the last ended, with the last
 * control's rates (the plan's retraced path replayed by the executor). */
Test(trim, chained_intervals_match)
{
    trim_spec_t s = spec_3d();
    trim_table_t t;
    build(&t, &s);
    uint64_t rng = 99;
    trim_pose_t plan = random_pose(&rng, 0), run = plan;
    int32_t prev = t.straight;
    for (int i = 0; i < 40; ++i) {
        int32_t next = pick(&rng, t.controls);
        plan = trim_apply(&t, plan, prev, next, 7.5f);
        trim_rel_t r = trim_rel_start();
        for (int32_t k = 0; k < s.substeps; ++k) trim_integrate_step(&s, prev, next, &r);
        run = trim_compose(run, r.pos, r.rot, 7.5f);
        prev = next;
        cr_assert(memcmp(&plan, &run, sizeof plan) == 0, "interval %d", i);
    }
    cr_assert_float_eq(qlen(run.rot), 1.0f, 1e-6f);
    /* Composition renormalizes: rounding in |q| does not build up over a
     * long flight. */
    trim_pose_t id = {vec3_zero(), quat_identity()};
    trim_pose_t c = trim_compose(id, vec3_zero(), (quat){1.001f, 0.0f, 0.0f, 0.0f}, 1.0f);
    cr_assert(c.rot.w == 1.0f);
    trim_table_free(&t, NULL, NULL);
}

/* ---- 3. Physics: arcs, first-order convergence, planarity, mirrors ------ */

/* Distance of the constant-yaw-rate entry from the exact circle arc. */
static double arc_error(int32_t substeps, int32_t c, double* w_out)
{
    trim_spec_t s = spec_2d(substeps);
    trim_table_t t;
    build(&t, &s);
    float r[TRIM_MAX_AXES];
    trim_control_rates(&s, c, r);
    double w = r[0], T = s.interval;
    const trim_entry_t* e = entry(&t, c, c);
    double ex = sin(w * T) / w, ey = (1.0 - cos(w * T)) / w;
    double err = hypot(e->pos.x - ex, e->pos.y - ey);
    /* The heading turned is w T, up to the Euler quaternion step's
     * O(h^2) shortfall (2 atan(w h / 2) per substep instead of w h). */
    double heading = atan2(e->facing.y, e->facing.x);
    double turned = remainder(w * T, TWO_PI);
    cr_assert(fabs(remainder(heading - turned, TWO_PI)) < 2e-2, "w %g: heading %g vs %g", w, heading, turned);
    trim_table_free(&t, NULL, NULL);
    if (w_out) *w_out = w;
    return err;
}

Test(trim, constant_yaw_gives_euler_arcs)
{
    /* Controls 9, 10, 12, 16: yaw rates 1, 2, 4, 8 rad/s; 7, 0: -1, -8. */
    const int32_t controls[] = {9, 10, 12, 16, 7, 0};
    for (size_t i = 0; i < sizeof controls / sizeof controls[0]; ++i) {
        double w;
        double e60 = arc_error(60, controls[i], &w);
        double e120 = arc_error(120, controls[i], NULL);
        double e240 = arc_error(240, controls[i], NULL);
        cr_assert(e60 < 2e-2, "w %g: error %g with 60 substeps", w, e60);
        /* First order: halving h halves the error. */
        cr_assert(e60 / e120 > 1.7 && e60 / e120 < 2.3, "w %g: %g -> %g", w, e60, e120);
        cr_assert(e120 / e240 > 1.7 && e120 / e240 < 2.3, "w %g: %g -> %g", w, e120, e240);
    }
}

Test(trim, planar_and_mirror_symmetric_2d)
{
    trim_spec_t s = spec_2d(60);
    trim_table_t t;
    build(&t, &s);
    int32_t n = t.controls;
    for (int32_t ci = 0; ci < n; ++ci) {
        for (int32_t cf = 0; cf < n; ++cf) {
            const trim_entry_t* e = entry(&t, ci, cf);
            /* Exactly in the x-y plane, a pure yaw quaternion. */
            cr_assert(e->pos.z == 0.0f && e->facing.z == 0.0f, "(%d, %d)", ci, cf);
            cr_assert(e->rot.x == 0.0f && e->rot.y == 0.0f, "(%d, %d)", ci, cf);
            cr_assert_float_eq(qlen(e->rot), 1.0f, 1e-6f);
            /* Left turns that turn less than half a circle ((wi + wf) T / 2
             * <= pi, rates ci - 8 and cf - 8) end on the left. */
            if (ci >= 8 && cf >= 8 && (ci > 8 || cf > 8) && (ci - 8) + (cf - 8) <= 6)
                cr_assert(e->pos.y > 0.0f, "(%d, %d): y %g", ci, cf, (double)e->pos.y);
            /* The opposite rates mirror the trajectory across the x axis. */
            const trim_entry_t* m = entry(&t, n - 1 - ci, n - 1 - cf);
            cr_assert_float_eq(e->pos.x, m->pos.x, 1e-6f);
            cr_assert_float_eq(e->pos.y, -m->pos.y, 1e-6f);
            cr_assert_float_eq(e->facing.x, m->facing.x, 1e-6f);
            cr_assert_float_eq(e->facing.y, -m->facing.y, 1e-6f);
        }
    }
    /* The rate ramps linearly: from 0 to w turns (0 + w) T / 2, the same
     * as holding w / 2 (for matching sample indices, to O(h^2)). */
    float ramp = atan2f(entry(&t, 8, 12)->facing.y, entry(&t, 8, 12)->facing.x);
    float hold = atan2f(entry(&t, 10, 10)->facing.y, entry(&t, 10, 10)->facing.x);
    cr_assert_float_eq(ramp, hold, 1e-3f, "ramp %g hold %g", (double)ramp, (double)hold);
    trim_table_free(&t, NULL, NULL);
}

/* ---- 4. 3D: pitch and roll signs, unit quaternions --------------------- */

Test(trim, pitch_roll_and_unit_quaternions_3d)
{
    trim_spec_t s = spec_3d();
    trim_table_t t;
    build(&t, &s);
    /* Yaw index 5 is 0; pitch index 6 is +1 rad/s, 4 is -1, 10 is +5. */
    int32_t up = 5 + 11 * 6, down = 5 + 11 * 4, steep = 5 + 11 * 10;
    const trim_entry_t* e = entry(&t, up, up);
    cr_assert(e->pos.z > 0.4f, "nose-up pitch rises: z %g", (double)e->pos.z);
    cr_assert(fabsf(e->pos.y) < 1e-6f);
    cr_assert_float_eq(quat_pitch(e->rot), 1.0f, 1e-3f, "pitch %g", (double)quat_pitch(e->rot));
    e = entry(&t, down, down);
    cr_assert(e->pos.z < -0.4f, "nose-down pitch sinks: z %g", (double)e->pos.z);
    e = entry(&t, t.straight, steep);
    cr_assert(e->pos.z > 0.0f && e->facing.z > 0.0f);
    /* Yaw left and pitch up together: left and up. */
    int32_t left_up = 8 + 11 * 8;
    e = entry(&t, left_up, left_up);
    cr_assert(e->pos.y > 0.0f && e->pos.z > 0.0f);

    for (int32_t i = 0; i < t.controls * t.controls; ++i) {
        const trim_entry_t* x = &t.entries[i];
        cr_assert_float_eq(qlen(x->rot), 1.0f, 1e-6f, "entry %d: |q| %.9g", i, (double)qlen(x->rot));
        cr_assert_float_eq(vec3_length(x->facing), 1.0f, 1e-6f);
        cr_assert(vec3_distance(x->facing, quat_forward(x->rot)) == 0.0f);
        /* At unit speed a path is never longer than the interval. */
        cr_assert(vec3_length(x->pos) <= s.interval * (1.0f + 1e-5f));
    }
    trim_table_free(&t, NULL, NULL);

    /* Roll turns the body about its forward axis: the path stays straight
     * and a positive rate lifts the left wing (+y toward +z). */
    trim_spec_t rs = spec_roll();
    build(&t, &rs);
    int32_t roll = 2 + 5 * 2 + 25 * 4; /* yaw 0, pitch 0, roll +2 rad/s */
    e = entry(&t, roll, roll);
    cr_assert_float_eq(e->pos.x, rs.interval, 1e-6f);
    cr_assert(fabsf(e->pos.y) < 1e-6f && fabsf(e->pos.z) < 1e-6f);
    vec3 left = quat_rotate(e->rot, vec3_make(0.0f, 1.0f, 0.0f));
    cr_assert_float_eq(atan2f(left.z, left.y), 2.0f * rs.interval, 1e-3f);
    trim_table_free(&t, NULL, NULL);
}

/* ---- 5. Save and load -------------------------------------------------- */

/* An allocator that counts what is live, to see failures free their
 * entries. */
typedef struct counting {
    int64_t live_blocks;
    int64_t live_bytes;
    int fail;
} counting_t;

static void* count_alloc(void* ctx, size_t bytes)
{
    counting_t* c = ctx;
    if (c->fail) return NULL;
    c->live_blocks += 1;
    c->live_bytes += (int64_t)bytes;
    return malloc(bytes);
}

static void count_free(void* ctx, void* p, size_t bytes)
{
    counting_t* c = ctx;
    c->live_blocks -= 1;
    c->live_bytes -= (int64_t)bytes;
    free(p);
}

static long read_file(const char* path, unsigned char** out)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    rewind(f);
    *out = malloc((size_t)n + 1);
    cr_assert_eq(fread(*out, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return n;
}

static void write_file(const char* path, const unsigned char* p, long n)
{
    FILE* f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(p, 1, (size_t)n, f), (size_t)n);
    cr_assert_eq(fclose(f), 0);
}

static uint64_t fnv1a(const unsigned char* p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void reseal(unsigned char* p, long n)
{
    uint64_t h = fnv1a(p, (size_t)n - 8);
    for (int i = 0; i < 8; ++i) p[n - 8 + i] = (unsigned char)(h >> (8 * i));
}

/* Load must fail with `want` in the message, leaving t as it was and no
 * allocation alive. */
static void expect_load_fails(const char* path, const char* want)
{
    counting_t c = {0};
    trim_table_t t, before;
    memset(&t, 0xab, sizeof t);
    before = t;
    char msg[300] = "";
    cr_assert_eq(trim_table_load(&t, path, count_alloc, count_free, &c, msg, sizeof msg), -1, "%s loaded",
                 path);
    cr_assert(strstr(msg, want) != NULL, "message \"%s\" lacks \"%s\"", msg, want);
    cr_assert(strstr(msg, path) != NULL, "message \"%s\" lacks the path", msg);
    cr_assert(memcmp(&t, &before, sizeof t) == 0, "t was written");
    cr_assert_eq(c.live_blocks, 0);
    cr_assert_eq(c.live_bytes, 0);
}

static int dir_entries(const char* dir)
{
    DIR* d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent* de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) ++n;
    closedir(d);
    return n;
}

Test(trim, save_load_round_trip_and_failures)
{
    char dir[] = "/tmp/shoal_trim_XXXXXX";
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    char path[256], bad[256], missing[256];
    snprintf(path, sizeof path, "%s/model3d.trim", dir);
    snprintf(bad, sizeof bad, "%s/bad.trim", dir);
    snprintf(missing, sizeof missing, "%s/none.trim", dir);

    trim_spec_t s = spec_3d();
    trim_table_t t;
    build(&t, &s);
    char msg[300] = "";
    cr_assert_eq(trim_table_save(&t, path, msg, sizeof msg), 0, "%s", msg);
    /* Saving again replaces the file through the rename; no temp is left. */
    cr_assert_eq(trim_table_save(&t, path, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(dir_entries(dir), 1);

    unsigned char* bytes;
    long n = read_file(path, &bytes);
    long want = 52 + 40L * 121 * 121 + 8;
    cr_assert_eq(n, want);
    /* Little-endian fields at fixed offsets, whatever the host. */
    cr_assert(memcmp(bytes, "SHOALTRM", 8) == 0);
    cr_assert(bytes[8] == 1 && bytes[9] == 0 && bytes[10] == 0 && bytes[11] == 0);
    cr_assert(bytes[12] == 2 && bytes[16] == 11 && bytes[20] == 11);
    cr_assert(bytes[48] == 121 && bytes[49] == 0);
    uint32_t u = (uint32_t)bytes[52] | (uint32_t)bytes[53] << 8 | (uint32_t)bytes[54] << 16 |
                 (uint32_t)bytes[55] << 24;
    float first;
    memcpy(&first, &u, sizeof first);
    cr_assert(memcmp(&first, &t.entries[0].pos.x, sizeof first) == 0);
    uint64_t sum = 0;
    for (int i = 0; i < 8; ++i) sum |= (uint64_t)bytes[n - 8 + i] << (8 * i);
    cr_assert_eq(sum, fnv1a(bytes, (size_t)n - 8));

    /* Round trip, bit for bit. */
    counting_t c = {0};
    trim_table_t back;
    cr_assert_eq(trim_table_load(&back, path, count_alloc, count_free, &c, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(c.live_blocks, 1);
    cr_assert(memcmp(&back.spec, &t.spec, sizeof t.spec) == 0);
    cr_assert_eq(back.controls, t.controls);
    cr_assert_eq(back.straight, t.straight);
    cr_assert(memcmp(back.entries, t.entries, trim_table_bytes(&t)) == 0);
    trim_table_free(&back, count_free, &c);
    cr_assert_eq(c.live_blocks, 0);
    cr_assert_eq(c.live_bytes, 0);

    /* Truncated: cut in the entries, and cut inside the header. */
    write_file(bad, bytes, n - 100);
    char expect[128];
    snprintf(expect, sizeof expect, "truncated: expected %ld bytes, got %ld", want, n - 100);
    expect_load_fails(bad, expect);
    write_file(bad, bytes, 30);
    expect_load_fails(bad, "truncated");
    write_file(bad, bytes, 0);
    expect_load_fails(bad, "truncated");

    /* One flipped bit in an entry, then in the stored checksum. */
    unsigned char* copy = malloc((size_t)n);
    memcpy(copy, bytes, (size_t)n);
    copy[52 + 40 * 5000 + 13] ^= 0x04;
    write_file(bad, copy, n);
    expect_load_fails(bad, "checksum mismatch");
    memcpy(copy, bytes, (size_t)n);
    copy[n - 3] ^= 0x80;
    write_file(bad, copy, n);
    expect_load_fails(bad, "checksum mismatch");

    /* Not a trim table. */
    memcpy(copy, bytes, (size_t)n);
    copy[0] = 'X';
    write_file(bad, copy, n);
    expect_load_fails(bad, "not a trim table (bad magic)");
    write_file(bad, (const unsigned char*)"{\"json\": 1}\n", 12);
    expect_load_fails(bad, "not a trim table (bad magic)");

    /* Another version, and a header that disagrees with itself. */
    memcpy(copy, bytes, (size_t)n);
    copy[8] = 2;
    reseal(copy, n);
    write_file(bad, copy, n);
    expect_load_fails(bad, "unsupported version 2");
    memcpy(copy, bytes, (size_t)n);
    copy[48] = 120;
    reseal(copy, n);
    write_file(bad, copy, n);
    expect_load_fails(bad, "controls 120 does not match");
    memcpy(copy, bytes, (size_t)n);
    copy[44] = 0; /* substeps 60 -> 0 */
    reseal(copy, n);
    write_file(bad, copy, n);
    expect_load_fails(bad, "substeps must be in [1, 100000], got 0");

    /* Trailing bytes. */
    unsigned char* longer = malloc((size_t)n + 4);
    memcpy(longer, bytes, (size_t)n);
    memset(longer + n, 0, 4);
    write_file(bad, longer, n + 4);
    expect_load_fails(bad, "trailing data");
    free(longer);

    /* A correct checksum over a NaN: refused, and the entries freed. */
    memcpy(copy, bytes, (size_t)n);
    float nan = NAN;
    uint32_t nu;
    memcpy(&nu, &nan, sizeof nu);
    size_t at = 52 + 40 * 777 + 4 * 7;
    for (int i = 0; i < 4; ++i) copy[at + (size_t)i] = (unsigned char)(nu >> (8 * i));
    reseal(copy, n);
    write_file(bad, copy, n);
    expect_load_fails(bad, "entry 777 (initial 6, final 51) holds a non-finite value");

    /* Missing, and an allocator that fails. */
    expect_load_fails(missing, "cannot open");
    counting_t failing = {.fail = 1};
    trim_table_t untouched = {0};
    cr_assert_eq(trim_table_load(&untouched, path, count_alloc, count_free, &failing, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "out of memory") != NULL, "%s", msg);
    cr_assert_null(untouched.entries);

    /* Saving into a directory that does not exist fails cleanly. */
    snprintf(bad, sizeof bad, "%s/no/such/dir.trim", dir);
    cr_assert_eq(trim_table_save(&t, bad, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "cannot create") != NULL, "%s", msg);

    free(copy);
    free(bytes);
    trim_table_free(&t, NULL, NULL);
    snprintf(bad, sizeof bad, "%s/bad.trim", dir);
    unlink(bad);
    unlink(path);
    cr_assert_eq(rmdir(dir), 0, "%s left behind: %s", dir, strerror(errno));
}

/* The memory load is the file load's parser: the same table from the same
 * bytes, and the same messages (with the caller's name) for damaged bytes. */
Test(trim, load_memory_matches_the_file_load)
{
    char dir[] = "/tmp/shoal_trim_XXXXXX";
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    char path[256];
    snprintf(path, sizeof path, "%s/roll.trim", dir);
    trim_spec_t s = spec_roll();
    trim_table_t t;
    build(&t, &s);
    char msg[300] = "";
    cr_assert_eq(trim_table_save(&t, path, msg, sizeof msg), 0, "%s", msg);
    unsigned char* bytes;
    long n = read_file(path, &bytes);
    cr_assert_gt(n, 60);

    counting_t c = {0};
    trim_table_t back;
    cr_assert_eq(
        trim_table_load_memory(&back, bytes, (size_t)n, "roll", count_alloc, count_free, &c, msg, sizeof msg),
        0, "%s", msg);
    cr_assert(memcmp(&back.spec, &t.spec, sizeof t.spec) == 0);
    cr_assert_eq(back.controls, t.controls);
    cr_assert_eq(back.straight, t.straight);
    cr_assert(memcmp(back.entries, t.entries, trim_table_bytes(&t)) == 0);
    trim_table_free(&back, count_free, &c);
    cr_assert_eq(c.live_bytes, 0);

    /* Damaged bytes: cut short at every length around the header and the
     * end, one flipped bit, one byte too many; every one fails with the
     * name in the message and nothing kept. */
    long cuts[] = {0, 1, 7, 8, 51, 52, 59, 60, n - 9, n - 8, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
        trim_table_t untouched = {0};
        cr_assert_eq(trim_table_load_memory(&untouched, bytes, (size_t)cuts[i], "roll", count_alloc,
                                            count_free, &c, msg, sizeof msg),
                     -1, "cut at %ld loaded", cuts[i]);
        cr_assert(strstr(msg, "trim table roll: truncated") != NULL, "cut at %ld: %s", cuts[i], msg);
        cr_assert_null(untouched.entries);
        cr_assert_eq(c.live_bytes, 0);
    }
    unsigned char* copy = malloc((size_t)n + 1);
    cr_assert_not_null(copy);
    memcpy(copy, bytes, (size_t)n);
    copy[n / 2] ^= 0x10;
    cr_assert_eq(
        trim_table_load_memory(&back, copy, (size_t)n, NULL, count_alloc, count_free, &c, msg, sizeof msg),
        -1);
    cr_assert(strstr(msg, "trim table (memory): checksum mismatch") != NULL, "%s", msg);
    memcpy(copy, bytes, (size_t)n);
    copy[n] = 0;
    cr_assert_eq(
        trim_table_load_memory(&back, copy, (size_t)n + 1, "roll", NULL, NULL, NULL, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "trailing data") != NULL, "%s", msg);
    cr_assert_eq(c.live_bytes, 0);
    cr_assert_eq(trim_table_load_memory(&back, NULL, 4, "roll", NULL, NULL, NULL, msg, sizeof msg), -1);

    free(copy);
    free(bytes);
    trim_table_free(&t, NULL, NULL);
    unlink(path);
    cr_assert_eq(rmdir(dir), 0, "%s left behind: %s", dir, strerror(errno));
}

/* ---- 6. Spec validation ------------------------------------------------ */

Test(trim, spec_valid_names_the_field)
{
    char msg[200];
    trim_spec_t ok = spec_3d();
    cr_assert(trim_spec_valid(&ok, msg, sizeof msg), "%s", msg);
    /* Unused axes are ignored. */
    trim_spec_t flat = spec_2d(60);
    flat.samples[1] = 0;
    flat.max_rate[2] = NAN;
    cr_assert(trim_spec_valid(&flat, msg, sizeof msg), "%s", msg);

    struct {
        trim_spec_t spec;
        const char* want;
    } bad[] = {
        {{.axes = 0, .samples = {3}, .max_rate = {1}, .interval = 1, .substeps = 1},
         "axes must be in [1, 3], got 0"},
        {{.axes = 4, .samples = {3}, .max_rate = {1}, .interval = 1, .substeps = 1},
         "axes must be in [1, 3], got 4"},
        {{.axes = 2, .samples = {3, 0}, .max_rate = {1, 1}, .interval = 1, .substeps = 1},
         "samples[1] must be in [1, 64], got 0"},
        {{.axes = 1, .samples = {65}, .max_rate = {1}, .interval = 1, .substeps = 1},
         "samples[0] must be in [1, 64], got 65"},
        {{.axes = 1, .samples = {3}, .max_rate = {NAN}, .interval = 1, .substeps = 1},
         "max_rate[0] must be finite and > 0"},
        {{.axes = 2, .samples = {3, 3}, .max_rate = {1, 0}, .interval = 1, .substeps = 1},
         "max_rate[1] must be finite and > 0, got 0"},
        {{.axes = 3, .samples = {3, 3, 3}, .max_rate = {1, 1, -INFINITY}, .interval = 1, .substeps = 1},
         "max_rate[2] must be finite and > 0"},
        {{.axes = 1, .samples = {3}, .max_rate = {1}, .interval = 0, .substeps = 1},
         "interval must be finite and > 0, got 0"},
        {{.axes = 1, .samples = {3}, .max_rate = {1}, .interval = INFINITY, .substeps = 1},
         "interval must be finite and > 0"},
        {{.axes = 1, .samples = {3}, .max_rate = {1}, .interval = 1, .substeps = 0},
         "substeps must be in [1, 100000], got 0"},
        {{.axes = 1, .samples = {3}, .max_rate = {1}, .interval = 1, .substeps = 100001},
         "substeps must be in [1, 100000], got 100001"},
        {{.axes = 2, .samples = {64, 64}, .max_rate = {1, 1}, .interval = 1, .substeps = 1},
         "samples give 4096 controls"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        msg[0] = '\0';
        cr_assert_not(trim_spec_valid(&bad[i].spec, msg, sizeof msg), "case %zu accepted", i);
        cr_assert(strstr(msg, bad[i].want) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, msg, bad[i].want);
        /* A bad spec builds nothing. */
        trim_table_t t = {.controls = 77};
        cr_assert_eq(trim_table_build(&t, &bad[i].spec, NULL, NULL), -1);
        cr_assert(t.controls == 77 && t.entries == NULL);
    }
    cr_assert_not(trim_spec_valid(NULL, msg, sizeof msg));
    /* The cap is on bytes (controls^2 * 40 <= 256 MiB), about 2590
     * controls. */
    trim_spec_t big = {.axes = 2,
                       .samples = {37, 64},
                       .max_rate = {1, 1},
                       .interval = 1,
                       .substeps = 1}; /* 2368 controls: 224 MB, allowed */
    cr_assert(trim_spec_valid(&big, msg, sizeof msg), "%s", msg);
    big.samples[0] = 41; /* 2624 controls: 275 MB, refused */
    cr_assert_not(trim_spec_valid(&big, msg, sizeof msg));
    /* A substep below a microsecond: refused, it would only cost time. */
    trim_spec_t tiny = ok;
    tiny.interval = 1e-40f;
    cr_assert_not(trim_spec_valid(&tiny, msg, sizeof msg));
    cr_assert(strstr(msg, "interval / substeps (the Euler substep) must be at least 1e-06 s") != NULL, "%s",
              msg);
    tiny.interval = 1.0f;
    tiny.substeps = 100000;
    cr_assert(trim_spec_valid(&tiny, msg, sizeof msg), "1e-5 s substeps are fine: %s", msg);
}

/* ---- 7. Determinism ---------------------------------------------------- */

Test(trim, build_is_deterministic)
{
    trim_spec_t s = spec_3d();
    trim_table_t a, b;
    build(&a, &s);
    /* Garbage in the unused axis changes nothing. */
    s.samples[2] = 9;
    s.max_rate[2] = 123.0f;
    build(&b, &s);
    cr_assert(memcmp(&a.spec, &b.spec, sizeof a.spec) == 0);
    cr_assert(a.spec.samples[2] == 1 && a.spec.max_rate[2] == 0.0f);
    cr_assert_eq(trim_table_bytes(&a), trim_table_bytes(&b));
    cr_assert(memcmp(a.entries, b.entries, trim_table_bytes(&a)) == 0);
    trim_table_free(&a, NULL, NULL);
    trim_table_free(&b, NULL, NULL);

    /* The integrator uses only IEEE-rounded + - * / and sqrt, so the 2D
     * table's bits are the same on every machine. If this hash moves, the
     * integrator changed and saved tables no longer match the online
     * integration: bump the file version with it. */
    trim_spec_t s2 = spec_2d(60);
    build(&a, &s2);
    build(&b, &s2);
    cr_assert(memcmp(a.entries, b.entries, trim_table_bytes(&a)) == 0);
    uint64_t h = 0xcbf29ce484222325ull;
    const float* f = (const float*)a.entries;
    for (size_t i = 0; i < trim_table_bytes(&a) / sizeof(float); ++i) {
        uint32_t bits;
        memcpy(&bits, &f[i], sizeof bits);
        for (int k = 0; k < 4; ++k) h = (h ^ ((bits >> (8 * k)) & 0xffu)) * 0x100000001b3ull;
    }
    cr_assert_eq(h, 0x04530ff6dac8b3b5ull, "2D table hash %016llx", (unsigned long long)h);
    trim_table_free(&a, NULL, NULL);
    trim_table_free(&b, NULL, NULL);

    /* A failing allocator builds nothing. */
    counting_t failing = {.fail = 1};
    trim_table_t t = {.controls = 5};
    cr_assert_eq(trim_table_build(&t, &s2, count_alloc, &failing), -1);
    cr_assert(t.controls == 5 && t.entries == NULL);
}
