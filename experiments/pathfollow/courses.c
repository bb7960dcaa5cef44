/* The experiment's courses: see courses.h. Every course is a terrain
 * function sampled onto a 2 m grid, a handful of cylinders and a sparse
 * waypoint list. Waypoints get their z from the sampled terrain. */
#include "experiments/pathfollow/courses.h"

#include "ecs/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI_F 3.14159265358979f
#define GRID_CELL 2.0f
#define GRID_MARGIN 40.0f

typedef float terrain_fn(float x, float y);

/* ---- terrains ------------------------------------------------------------ */

static float flat(float x, float y)
{
    (void)x;
    (void)y;
    return 0.0f;
}

/* One round hill, 22 m high: grades up to 29% on its flanks (the
 * hovercraft climbs that only near full throttle). */
static float big_hill(float x, float y)
{
    float s = 45.0f;
    return 22.0f * expf(-(x * x + y * y) / (2.0f * s * s));
}

/* A smooth step from 0 to `h` over [a, b] (cubic: steepest grade 1.5 h/(b-a)). */
static float smooth_step(float x, float a, float b, float h)
{
    if (x <= a) return 0.0f;
    if (x >= b) return h;
    float t = (x - a) / (b - a);
    return h * t * t * (3.0f - 2.0f * t);
}

/* Up 24 m between x 40 and 140 (steepest 36%), down 20 m between 190 and 270. */
static float ramp(float x, float y)
{
    (void)y;
    return smooth_step(x, 40.0f, 140.0f, 24.0f) - smooth_step(x, 190.0f, 270.0f, 20.0f);
}

/* Rolling hills: grades up to about 40%. */
static float rolling(float x, float y) { return 6.0f * sinf(x / 15.0f) * cosf(y / 22.0f); }

/* A hillside falling toward -y at 30%. */
static float side_slope(float x, float y)
{
    (void)x;
    return 0.30f * y;
}

/* Tuning hill: a lower, wider hill. */
static float tuning_hill(float x, float y)
{
    float s = 50.0f;
    return 18.0f * expf(-(x * x + y * y) / (2.0f * s * s));
}

/* A gentle slope with a dip, for the tuning S-bends. */
static float tuning_slope(float x, float y) { return 0.12f * x + 3.0f * sinf(y / 10.0f); }

/* Tuning: a 28% slope along +y. */
static float tuning_ramp(float x, float y)
{
    (void)x;
    return 0.28f * y;
}

/* Tuning: a crest 20 m high around x = 100 (steepest about 32%). */
static float tuning_crest(float x, float y)
{
    (void)y;
    float d = (x - 100.0f) / 38.0f;
    return 20.0f * expf(-d * d);
}

/* The town's hills. */
static float town_hills(float x, float y) { return 5.0f * sinf(x / 30.0f) * sinf(y / 25.0f); }

/* ---- building ------------------------------------------------------------ */

typedef struct builder {
    float* xy; /* 2D waypoints, z added at the end */
    int32_t n, cap;
    float (*obs)[3];
    int32_t nobs, capobs;
    int failed;
} builder_t;

static void add_point(builder_t* b, float x, float y)
{
    if (b->failed) return;
    if (b->n == b->cap) {
        int32_t cap = b->cap ? 2 * b->cap : 64;
        float* p = realloc(b->xy, (size_t)cap * 2 * sizeof(float));
        if (!p) {
            b->failed = 1;
            return;
        }
        b->xy = p;
        b->cap = cap;
    }
    b->xy[2 * b->n] = x;
    b->xy[2 * b->n + 1] = y;
    b->n++;
}

static void add_obstacle(builder_t* b, float x, float y, float r)
{
    if (b->failed) return;
    if (b->nobs == b->capobs) {
        int32_t cap = b->capobs ? 2 * b->capobs : 32;
        float(*p)[3] = realloc(b->obs, (size_t)cap * sizeof *p);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->obs = p;
        b->capobs = cap;
    }
    b->obs[b->nobs][0] = x;
    b->obs[b->nobs][1] = y;
    b->obs[b->nobs][2] = r;
    b->nobs++;
}

/* A wall of touching cylinders of radius r from (x0, y0) to (x1, y1). */
static void add_wall(builder_t* b, float x0, float y0, float x1, float y1, float r)
{
    float len = hypotf(x1 - x0, y1 - y0);
    int n = (int)ceilf(len / (1.5f * r));
    for (int i = 0; i <= n; ++i) {
        float t = n ? (float)i / (float)n : 0.0f;
        add_obstacle(b, x0 + t * (x1 - x0), y0 + t * (y1 - y0), r);
    }
}

/* Sample the terrain over the path's bounding box and finish the course. */
static int finish(builder_t* b, course_t* c, terrain_fn* h, const char* name, const char* about,
                  float half_width)
{
    memset(c, 0, sizeof *c);
    if (b->failed || b->n < 2) goto fail;
    float lo[2] = {b->xy[0], b->xy[1]}, hi[2] = {b->xy[0], b->xy[1]};
    for (int32_t i = 0; i < b->n; ++i)
        for (int k = 0; k < 2; ++k) {
            lo[k] = fminf(lo[k], b->xy[2 * i + k]);
            hi[k] = fmaxf(hi[k], b->xy[2 * i + k]);
        }
    c->cell = GRID_CELL;
    c->origin[0] = floorf((lo[0] - GRID_MARGIN) / GRID_CELL) * GRID_CELL;
    c->origin[1] = floorf((lo[1] - GRID_MARGIN) / GRID_CELL) * GRID_CELL;
    c->nx = (int32_t)ceilf((hi[0] + GRID_MARGIN - c->origin[0]) / GRID_CELL) + 1;
    c->ny = (int32_t)ceilf((hi[1] + GRID_MARGIN - c->origin[1]) / GRID_CELL) + 1;
    c->heights = malloc((size_t)c->nx * (size_t)c->ny * sizeof(float));
    c->xyz = malloc((size_t)b->n * 3 * sizeof(float));
    if (!c->heights || !c->xyz) goto fail;
    for (int32_t j = 0; j < c->ny; ++j)
        for (int32_t i = 0; i < c->nx; ++i)
            c->heights[(size_t)j * (size_t)c->nx + (size_t)i] =
                h(c->origin[0] + (float)i * c->cell, c->origin[1] + (float)j * c->cell);
    for (int32_t i = 0; i < b->n; ++i) {
        c->xyz[3 * i] = b->xy[2 * i];
        c->xyz[3 * i + 1] = b->xy[2 * i + 1];
        c->xyz[3 * i + 2] = course_height(c, b->xy[2 * i], b->xy[2 * i + 1]);
    }
    c->count = b->n;
    c->obstacles = b->obs;
    c->obstacle_count = b->nobs;
    c->half_width = half_width;
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->about, sizeof c->about, "%s", about);
    free(b->xy);
    return 0;
fail:
    free(b->xy);
    free(b->obs);
    course_free(c);
    return -1;
}

float course_height(const course_t* c, float x, float y)
{
    if (!c->heights || c->nx < 2 || c->ny < 2) return 0.0f;
    float fx = (x - c->origin[0]) / c->cell, fy = (y - c->origin[1]) / c->cell;
    fx = fminf(fmaxf(fx, 0.0f), (float)(c->nx - 1));
    fy = fminf(fmaxf(fy, 0.0f), (float)(c->ny - 1));
    int32_t i = (int32_t)fx, j = (int32_t)fy;
    if (i > c->nx - 2) i = c->nx - 2;
    if (j > c->ny - 2) j = c->ny - 2;
    float tx = fx - (float)i, ty = fy - (float)j;
    const float* h = c->heights;
    size_t nx = (size_t)c->nx;
    float h00 = h[(size_t)j * nx + (size_t)i], h10 = h[(size_t)j * nx + (size_t)i + 1];
    float h01 = h[(size_t)(j + 1) * nx + (size_t)i], h11 = h[(size_t)(j + 1) * nx + (size_t)i + 1];
    return (h00 * (1 - tx) + h10 * tx) * (1 - ty) + (h01 * (1 - tx) + h11 * tx) * ty;
}

void course_free(course_t* c)
{
    if (!c) return;
    free(c->heights);
    free(c->obstacles);
    free(c->xyz);
    memset(c, 0, sizeof *c);
}

/* ---- the test courses ---------------------------------------------------- */

static int make_test(int index, course_t* c)
{
    builder_t b = {0};
    switch (index) {
    case 0: /* three hairpins, 12 m apart: tighter than the truck can turn */
        add_point(&b, 0, 0);
        for (int k = 0; k < 4; ++k) {
            float y = 12.0f * (float)k;
            if (k % 2 == 0) {
                add_point(&b, 80, y);
                add_point(&b, 80, y + 12.0f);
            } else {
                add_point(&b, 0, y);
                add_point(&b, 0, y + 12.0f);
            }
        }
        b.n--; /* end on the last straight */
        return finish(&b, c, flat, "hairpins", "three 180-degree turns 12 m wide, flat", 4.0f);
    case 1: /* slalom around poles, alternating sides every 20 m */
        add_point(&b, -20, 0);
        for (int k = 0; k < 12; ++k) {
            float x = 20.0f * (float)k;
            add_point(&b, x, (k % 2) ? -6.0f : 6.0f);
            add_obstacle(&b, x, 0.0f, 1.5f);
        }
        add_point(&b, 250, 0);
        return finish(&b, c, flat, "slalom", "12 poles, 20 m apart, path 6 m either side", 3.0f);
    case 2: { /* switchbacks up the west flank of a 22 m hill, then down its east side */
        float xs[4] = {-120, -90, -60, -30};
        add_point(&b, -120, -60);
        for (int k = 0; k < 4; ++k) {
            float y = (k % 2 == 0) ? 50.0f : -50.0f;
            add_point(&b, xs[k], y);
            if (k < 3) add_point(&b, xs[k + 1], y);
        }
        add_point(&b, 0, 0);
        add_point(&b, 60, 0);
        add_point(&b, 110, 10);
        return finish(&b, c, big_hill, "switchbacks", "switchbacks 30 m apart up a 22 m hill, then down",
                      4.0f);
    }
    case 3: /* a U-turn at the end of a walled two-lane corridor */
        add_point(&b, 0, 0);
        add_point(&b, 72, 0);
        add_point(&b, 72, 8);
        add_point(&b, 0, 8);
        add_wall(&b, -5, -4.5f, 80, -4.5f, 1.0f);
        add_wall(&b, -5, 12.5f, 80, 12.5f, 1.0f);
        add_wall(&b, 80, -4.5f, 80, 12.5f, 1.0f);
        add_wall(&b, 5, 4.0f, 62, 4.0f, 0.8f);
        return finish(&b, c, flat, "uturn-corridor", "a U-turn 8 m wide at the end of a walled corridor",
                      2.5f);
    case 4: /* straight up a 36% ramp and down a 28% one, with kinks */
        add_point(&b, 0, 0);
        add_point(&b, 60, 3);
        add_point(&b, 120, -3);
        add_point(&b, 170, 4);
        add_point(&b, 230, -4);
        add_point(&b, 300, 0);
        return finish(&b, c, ramp, "steep-climb", "24 m up at up to 36%, 20 m down at up to 28%", 4.0f);
    case 5: /* gates of poles with 6 m lateral steps every 15 m */
        add_point(&b, 0, 0);
        for (int k = 1; k <= 10; ++k) {
            float x = 15.0f * (float)k, y = (k % 2) ? 6.0f : 0.0f;
            add_point(&b, x, y);
            add_obstacle(&b, x, y - 4.5f, 1.2f);
            add_obstacle(&b, x, y + 4.5f, 1.2f);
        }
        add_point(&b, 180, 0);
        return finish(&b, c, flat, "chicane", "ten gates 9 m wide with 6 m steps between them", 2.5f);
    case 6: /* a spiral tightening from 40 m to 8 m radius */
        for (int k = 0; k <= 45; ++k) {
            float a = (float)k * (20.0f * PI_F / 180.0f);
            float r = 40.0f - 32.0f * (float)k / 45.0f;
            add_point(&b, r * cosf(a), r * sinf(a));
        }
        return finish(&b, c, flat, "spiral", "2.5 turns tightening from 40 m to 8 m radius", 3.5f);
    case 7: { /* city blocks: right-angle corners around buildings */
        float pts[][2] = {{0, 0},   {40, 0},    {40, 40},  {80, 40},  {80, 0},
                          {120, 0}, {120, -40}, {60, -40}, {60, -80}, {0, -80}};
        for (size_t k = 0; k < sizeof pts / sizeof pts[0]; ++k) add_point(&b, pts[k][0], pts[k][1]);
        /* buildings inside the corners, leaving the corridor clear */
        add_obstacle(&b, 20, 20, 12);
        add_obstacle(&b, 60, 20, 12);
        add_obstacle(&b, 100, 20, 12);
        add_obstacle(&b, 100, -20, 12);
        add_obstacle(&b, 80, -60, 12);
        add_obstacle(&b, 30, -60, 12);
        add_obstacle(&b, 30, -20, 12);
        return finish(&b, c, flat, "city-blocks", "nine right-angle corners between buildings", 3.5f);
    }
    case 8: /* S-curves over rolling hills */
        for (int k = 0; k <= 16; ++k) {
            float x = 15.0f * (float)k;
            add_point(&b, x, 18.0f * sinf((float)k * 0.9f));
        }
        return finish(&b, c, rolling, "rolling-hills", "S-curves over 12 m hills at up to 40%", 4.0f);
    case 9: /* hairpins across a 30% side slope */
        add_point(&b, 0, 0);
        add_point(&b, 50, 10);
        add_point(&b, 55, 20);
        add_point(&b, 10, 25);
        add_point(&b, 5, 35);
        add_point(&b, 60, 40);
        add_point(&b, 100, 30);
        add_point(&b, 140, 0);
        return finish(&b, c, side_slope, "side-slope", "switchbacks across a 30% side slope", 3.0f);
    default: return -1;
    }
}

static int make_tuning(int index, course_t* c)
{
    builder_t b = {0};
    switch (index) {
    case 0: /* a stadium oval: two half circles of 25 m joined by 60 m straights */
        for (int k = 0; k <= 18; ++k) {
            float a = -0.5f * PI_F + (float)k * (10.0f * PI_F / 180.0f);
            add_point(&b, 30.0f + 25.0f * cosf(a), 25.0f * sinf(a));
        }
        for (int k = 0; k <= 18; ++k) {
            float a = 0.5f * PI_F + (float)k * (10.0f * PI_F / 180.0f);
            add_point(&b, -30.0f + 25.0f * cosf(a), 25.0f * sinf(a));
        }
        return finish(&b, c, flat, "oval", "an oval: 60 m straights, 25 m bends", 4.0f);
    case 1: /* a zigzag with 60-degree corners */
        for (int k = 0; k <= 10; ++k) add_point(&b, 20.0f * (float)k, (k % 2) ? 20.0f : 0.0f);
        return finish(&b, c, flat, "zigzag", "ten 120-degree direction changes", 3.5f);
    case 2: /* around and over a hill */
        for (int k = 0; k <= 24; ++k) {
            float a = (float)k * (15.0f * PI_F / 180.0f);
            add_point(&b, 70.0f * cosf(a), 50.0f * sinf(a));
        }
        add_point(&b, 0, 20);
        add_point(&b, -40, -20);
        return finish(&b, c, tuning_hill, "hill-loop", "a loop around an 18 m hill, then over it", 4.0f);
    case 3: /* narrow S-bends on a slope, with rocks */
        for (int k = 0; k <= 12; ++k) {
            float x = 12.0f * (float)k;
            float y = 10.0f * sinf((float)k * 1.3f);
            add_point(&b, x, y);
            if (k % 3 == 1) add_obstacle(&b, x, y + 5.0f, 1.5f);
        }
        return finish(&b, c, tuning_slope, "narrow-s", "tight S-bends up a 12% slope", 2.5f);
    case 4: /* hairpins 16 m wide on a 28% slope */
        add_point(&b, 0, 0);
        for (int k = 0; k < 3; ++k) {
            float y = 16.0f * (float)k;
            add_point(&b, (k % 2 == 0) ? 60.0f : 0.0f, y);
            add_point(&b, (k % 2 == 0) ? 60.0f : 0.0f, y + 16.0f);
        }
        add_point(&b, 0, 48);
        return finish(&b, c, tuning_ramp, "ridge-hairpins", "hairpins 16 m wide climbing a 28% slope", 3.5f);
    case 5: /* gates of poles, 8 m steps every 22 m */
        add_point(&b, 0, 0);
        for (int k = 1; k <= 7; ++k) {
            float x = 22.0f * (float)k, y = (k % 2) ? -8.0f : 0.0f;
            add_point(&b, x, y);
            add_obstacle(&b, x, y - 5.0f, 1.0f);
            add_obstacle(&b, x, y + 5.0f, 1.0f);
        }
        add_point(&b, 180, 0);
        return finish(&b, c, flat, "gates", "seven gates 10 m wide with 8 m steps", 3.0f);
    case 6: /* straight up and over a steep crest, with a dog-leg on top */
        add_point(&b, 0, 0);
        add_point(&b, 90, 0);
        add_point(&b, 110, 20);
        add_point(&b, 200, 20);
        return finish(&b, c, tuning_crest, "crest", "up 32% to a crest with a dog-leg, then down", 4.0f);
    default: return -1;
    }
}

int course_make(int index, int tuning, course_t* out)
{
    return tuning ? make_tuning(index, out) : make_test(index, out);
}

/* ---- the town ------------------------------------------------------------ */

#define TOWN_SPACING 40.0f
#define TOWN_LO (-120.0f)

void town_node_xy(int32_t i, int32_t j, float* x, float* y)
{
    *x = TOWN_LO + TOWN_SPACING * (float)i;
    *y = TOWN_LO + TOWN_SPACING * (float)j;
}

int town_make(course_t* out)
{
    builder_t b = {0};
    /* the path is unused; its corners set the terrain's extent */
    add_point(&b, TOWN_LO, TOWN_LO);
    add_point(&b, -TOWN_LO, -TOWN_LO);
    for (int32_t i = 0; i + 1 < TOWN_N; ++i)
        for (int32_t j = 0; j + 1 < TOWN_N; ++j) {
            float x, y;
            town_node_xy(i, j, &x, &y);
            float cx = x + 0.5f * TOWN_SPACING, cy = y + 0.5f * TOWN_SPACING;
            /* a building in the block, and a rock beside one of its
             * streets, its edge 5 m from the street's centre line */
            add_obstacle(&b, cx, cy, 11.0f);
            float ox = ((i + j) % 2) ? 13.0f : -13.0f;
            add_obstacle(&b, cx + ox, cy, 2.0f);
        }
    return finish(&b, out, town_hills, "town", "7x7 street grid over 5 m hills", 4.0f);
}

int32_t town_route(const course_t* town, int32_t ix, int32_t iy, int legs, uint64_t* rng, float* xyz,
                   int32_t max, int32_t* end_ix, int32_t* end_iy, int32_t* dir)
{
    static const int32_t dirs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    int32_t n = 0, last = *dir, first = 1;
    float x, y;
    town_node_xy(ix, iy, &x, &y);
    if (n < max) {
        xyz[3 * n] = x;
        xyz[3 * n + 1] = y;
        xyz[3 * n + 2] = course_height(town, x, y);
        n++;
    }
    for (int leg = 0; leg < legs && n < max; ++leg) {
        int32_t options[4], count = 0;
        for (int32_t d = 0; d < 4; ++d) {
            if (last >= 0 && d == (last + 2) % 4) continue; /* no U-turns */
            int32_t nx = ix + dirs[d][0], ny = iy + dirs[d][1];
            if (nx < 0 || ny < 0 || nx >= TOWN_N || ny >= TOWN_N) continue;
            options[count++] = d;
        }
        if (count == 0) break;
        int32_t d = options[(uint32_t)(rng_splitmix64(rng) >> 32) % (uint32_t)count];
        ix += dirs[d][0];
        iy += dirs[d][1];
        town_node_xy(ix, iy, &x, &y);
        if (d == last && !first) n--; /* straight on: extend the last leg */
        first = 0;
        xyz[3 * n] = x;
        xyz[3 * n + 1] = y;
        xyz[3 * n + 2] = course_height(town, x, y);
        n++;
        last = d;
    }
    *end_ix = ix;
    *end_iy = iy;
    *dir = last;
    return n;
}

int course_find(const char* name, course_t* c)
{
    for (int tuning = 0; tuning < 2; ++tuning) {
        int count = tuning ? COURSE_TUNING_COUNT : COURSE_TEST_COUNT;
        for (int i = 0; i < count; ++i) {
            if (course_make(i, tuning, c) != 0) return -1;
            if (strcmp(c->name, name) == 0) return 0;
            course_free(c);
        }
    }
    return 1;
}
