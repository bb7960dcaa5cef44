/* Navigation fields' numerical core (src/modules/nav/): the walkable grid
 * rasterized from wall segments, the fast marching solve, and the descent
 * direction an agent would follow.
 *
 * Figures measured (gcc -O2, December 2026):
 *   open space (h = 1, a point goal at a cell center, the cells within 5
 *   cells seeded with exact times by nav_field_point_goal), 16 directions
 *   at 20 to 80 cells: max relative error 0.41 % (at 20 cells, on the
 *   diagonals; 0.13 % at 80). Without seeding 1.2 %; first order alone
 *   2.4 % seeded, 4.6 % not.
 *   descent along -gradient in steps of h / 4 (h = 0.1 m, clearance
 *   0.25 m), path length over the shortest path through the wall ends
 *   (clearance ignored, so the bound is strict): straight wall 1.043,
 *   L 1.046, U 1.063 (T at the start: 1.041, 1.052, 1.057).
 *   2000 x 2000 cells solved serially in about 0.85 s (2 cores shared
 *   with other work; measured outside the tests, which time nothing). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "modules/nav/nav_field.h"
#include "modules/nav/nav_grid.h"

#define SEED_RADIUS_CELLS 5.0f

static nav_grid_t make_grid(float h, int32_t nx, int32_t ny)
{
    nav_grid_t g;
    char msg[256];
    shoal_status_t s = nav_grid_init(&g, 0.0f, 0.0f, h, nx, ny, 0, msg, (int)sizeof msg);
    cr_assert_eq(s, SHOAL_OK, "%s", msg);
    return g;
}

/* The field of the point goal (x, y) into a new array. */
static float* solve_point(const nav_grid_t* g, float x, float y)
{
    int32_t goal[256];
    float t0[256];
    int32_t n = nav_field_point_goal(g, NULL, x, y, SEED_RADIUS_CELLS * g->cell, goal, t0, 256);
    cr_assert(n > 0 && n <= 256, "point goal: %d cells", (int)n);
    float* T = malloc((size_t)g->nx * (size_t)g->ny * sizeof *T);
    cr_assert_not_null(T);
    cr_assert_eq(nav_field_solve(g, NULL, goal, t0, n, T), SHOAL_OK);
    return T;
}

Test(nav_field, open_space_matches_euclidean_distance)
{
    nav_grid_t g = make_grid(1.0f, 181, 181);
    const float gx = 90.5f, gy = 90.5f; /* the center of cell (90, 90) */
    float* T = solve_point(&g, gx, gy);
    double worst = 0.0;
    for (int k = 0; k < 16; ++k) {
        double a = k * (3.14159265358979323846 / 8.0);
        for (int d = 20; d <= 80; d += 10) {
            int32_t i = (int32_t)floor(gx + d * cos(a)), j = (int32_t)floor(gy + d * sin(a));
            float cx, cy;
            nav_grid_center(&g, i, j, &cx, &cy);
            double exact = hypot((double)cx - gx, (double)cy - gy);
            double err = fabs((double)T[j * g.nx + i] - exact) / exact;
            if (err > worst) worst = err;
        }
    }
    cr_assert_lt(worst, 0.03, "max relative error %.4f", worst);
    free(T);
    nav_grid_free(&g);
}

/* Follow -gradient from (x, y) in steps of h / 4 until the goal's cell;
 * the path length, or -1 when it stops or enters a blocked cell. */
static double descend(const nav_grid_t* g, const float* T, float x, float y, float goal_x, float goal_y,
                      double max_length)
{
    int32_t target = nav_grid_cell_of(g, goal_x, goal_y);
    const float step = 0.25f * g->cell;
    double length = 0.0;
    while (length < max_length) {
        int32_t c = nav_grid_cell_of(g, x, y);
        if (c < 0 || g->blocked[c]) return -1.0;
        if (c == target) return length;
        float dir[2];
        if (!nav_field_gradient(g, T, x, y, dir)) return -1.0;
        x += step * dir[0];
        y += step * dir[1];
        length += step;
    }
    return -1.0;
}

static double around(const float (*p)[2], int n)
{
    double sum = 0.0;
    for (int k = 0; k + 1 < n; ++k) sum += hypot(p[k + 1][0] - p[k][0], p[k + 1][1] - p[k][1]);
    return sum;
}

/* A 20 m x 20 m room at 0.1 m, the walls with a 0.25 m clearance; the
 * descent from start must reach the goal's cell within 1.15 times the
 * shortest path through the points `via`. */
static double walk_past(const float (*seg)[4], int32_t count, const float (*via)[2], int nvia)
{
    nav_grid_t g = make_grid(0.1f, 200, 200);
    nav_grid_block_segments(&g, seg, count, 0.25f);
    float sx = via[0][0], sy = via[0][1], gx = via[nvia - 1][0], gy = via[nvia - 1][1];
    float* T = solve_point(&g, gx, gy);
    double shortest = around(via, nvia);
    double length = descend(&g, T, sx, sy, gx, gy, 3.0 * shortest);
    cr_assert_geq(length, 0.0, "the descent stopped or entered a wall");
    cr_assert_leq(length, 1.15 * shortest, "path %.3f, shortest %.3f", length, shortest);
    /* The field itself: T at the start is at least the shortest path
     * (clearance only lengthens it) and within the same bound. */
    float t_start = T[nav_grid_cell_of(&g, sx, sy)];
    cr_assert_leq(t_start, 1.15 * shortest, "T(start) %.3f, shortest %.3f", (double)t_start, shortest);
    free(T);
    nav_grid_free(&g);
    return length / shortest;
}

Test(nav_field, descent_past_a_straight_wall)
{
    const float seg[][4] = {{10.0f, 4.0f, 10.0f, 16.0f}};
    const float via[][2] = {{6.0f, 10.0f}, {10.0f, 16.0f}, {14.05f, 10.05f}};
    walk_past(seg, 1, via, 3);
}

Test(nav_field, descent_out_of_an_l)
{
    const float seg[][4] = {{10.0f, 6.0f, 10.0f, 16.0f}, {10.0f, 16.0f, 3.0f, 16.0f}};
    const float via[][2] = {{7.0f, 12.0f}, {10.0f, 6.0f}, {14.05f, 12.05f}};
    walk_past(seg, 2, via, 3);
}

Test(nav_field, descent_out_of_a_u)
{
    const float seg[][4] = {
        {12.0f, 5.0f, 12.0f, 15.0f}, {12.0f, 15.0f, 6.0f, 15.0f}, {12.0f, 5.0f, 6.0f, 5.0f}};
    const float via[][2] = {{10.0f, 10.0f}, {6.0f, 15.0f}, {12.0f, 15.0f}, {16.05f, 10.05f}};
    walk_past(seg, 3, via, 4);
}

Test(nav_field, enclosed_goal_is_unreachable)
{
    nav_grid_t g = make_grid(0.1f, 200, 200);
    const float box[][4] = {{8.0f, 8.0f, 12.0f, 8.0f},
                            {12.0f, 8.0f, 12.0f, 12.0f},
                            {12.0f, 12.0f, 8.0f, 12.0f},
                            {8.0f, 12.0f, 8.0f, 8.0f}};
    nav_grid_block_segments(&g, box, 4, 0.25f);
    float* T = solve_point(&g, 10.0f, 10.0f);
    int32_t inside = 0, outside_bad = 0;
    for (int32_t j = 0; j < g.ny; ++j)
        for (int32_t i = 0; i < g.nx; ++i) {
            float cx, cy;
            nav_grid_center(&g, i, j, &cx, &cy);
            int in = cx > 8.0f && cx < 12.0f && cy > 8.0f && cy < 12.0f;
            float t = T[j * g.nx + i];
            if (in && isfinite(t)) ++inside;
            if (!in && !isinf(t)) ++outside_bad;
        }
    cr_assert_gt(inside, 0);
    cr_assert_eq(outside_bad, 0, "%d cells outside the box reached", (int)outside_bad);
    float dir[2] = {1.0f, 1.0f};
    cr_assert_eq(nav_field_gradient(&g, T, 4.0f, 4.0f, dir), 0);
    cr_assert(dir[0] == 0.0f && dir[1] == 0.0f);
    /* Just outside a wall, across it from reached cells: still none. */
    cr_assert_eq(nav_field_gradient(&g, T, 12.33f, 10.0f, dir), 0);
    cr_assert_eq(nav_field_gradient(&g, T, 7.67f, 9.0f, dir), 0);
    /* Inside, a direction towards the goal. */
    cr_assert_eq(nav_field_gradient(&g, T, 11.0f, 10.0f, dir), 1);
    cr_assert_lt(dir[0], -0.9f);
    free(T);
    nav_grid_free(&g);
}

/* The cells a segment blocks, against every cell checked by brute force:
 * the same predicate bit for bit, and against double precision away from
 * the boundary. */
static void check_raster(const float s[4], float clearance)
{
    nav_grid_t g = make_grid(0.1f, 200, 150);
    nav_grid_block_segments(&g, (const float(*)[4])s, 1, clearance);
    int64_t blocked = 0;
    for (int32_t j = 0; j < g.ny; ++j)
        for (int32_t i = 0; i < g.nx; ++i) {
            float cx, cy;
            nav_grid_center(&g, i, j, &cx, &cy);
            int want = nav_segment_dist2(s, cx, cy) <= clearance * clearance;
            int got = g.blocked[j * g.nx + i];
            cr_assert_eq(got, want, "cell (%d, %d): blocked %d, want %d", (int)i, (int)j, got, want);
            blocked += got;
            /* In double precision, from the segment's own definition. */
            double dx = (double)s[2] - s[0], dy = (double)s[3] - s[1], len2 = dx * dx + dy * dy;
            double t = len2 > 0.0 ? (((double)cx - s[0]) * dx + ((double)cy - s[1]) * dy) / len2 : 0.0;
            t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
            double d = hypot(s[0] + t * dx - cx, s[1] + t * dy - cy);
            if (fabs(d - clearance) > 1e-4) cr_assert_eq(got, d < clearance, "cell (%d, %d)", (int)i, (int)j);
        }
    cr_assert_gt(blocked, 0);
    nav_grid_free(&g);
}

Test(nav_field, rasterization_blocks_exactly_the_cells_within_clearance)
{
    const float diagonal[4] = {2.13f, 3.07f, 17.4f, 12.9f};
    check_raster(diagonal, 0.37f);
    check_raster(diagonal, 0.05f); /* thinner than a cell: a broken line of cells */
    const float steep[4] = {5.01f, 1.0f, 5.3f, 14.2f};
    check_raster(steep, 0.25f);
    const float flat[4] = {1.0f, 7.55f, 19.0f, 7.55f};
    check_raster(flat, 0.2f);
    const float outside[4] = {-5.0f, -3.0f, 8.0f, 30.0f}; /* crosses the grid's edge */
    check_raster(outside, 0.3f);
    const float dot[4] = {9.0f, 9.0f, 9.0f, 9.0f}; /* a point */
    check_raster(dot, 0.5f);
}

Test(nav_field, size_limit_is_refused)
{
    nav_grid_t g;
    char msg[256] = "";
    cr_assert_eq(nav_grid_init(&g, 0.0f, 0.0f, 0.1f, 100000, 100000, 0, msg, (int)sizeof msg),
                 SHOAL_ERR_CAPACITY);
    cr_assert(strstr(msg, "limit") != NULL, "%s", msg);
    cr_assert_null(g.blocked);
    nav_grid_free(&g);
    cr_assert_eq(nav_grid_init(&g, 0.0f, 0.0f, 0.1f, 1000, 1000, 1000 * 1000, msg, (int)sizeof msg),
                 SHOAL_ERR_CAPACITY);
    cr_assert_eq(nav_grid_init(&g, 0.0f, 0.0f, 0.1f, 70000, 70000, SIZE_MAX, msg, (int)sizeof msg),
                 SHOAL_ERR_CAPACITY);
    cr_assert(strstr(msg, "32-bit") != NULL, "%s", msg);
    cr_assert_eq(nav_grid_init(&g, 0.0f, 0.0f, 0.0f, 10, 10, 0, NULL, 0), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(nav_grid_init(&g, NAN, 0.0f, 1.0f, 10, 10, 0, NULL, 0), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(nav_grid_init(&g, 0.0f, 0.0f, 1.0f, 0, 10, 0, NULL, 0), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(nav_grid_init(&g, 0.0f, 0.0f, 1.0f, 10, 10, 10 * 10 * NAV_CELL_BYTES, NULL, 0), SHOAL_OK);
    float T[100];
    int32_t bad = 100;
    cr_assert_eq(nav_field_solve(&g, NULL, &bad, NULL, 1, T), SHOAL_ERR_INVALID_ARGUMENT);
    nav_grid_free(&g);
}

/* 200 m x 200 m at 0.1 m, 4e6 cells, with a few walls: correct, and the
 * same bits when solved again. Timing is measured outside the tests. */
Test(nav_field, large_grid_solves)
{
    nav_grid_t g = make_grid(0.1f, 2000, 2000);
    const float walls[][4] = {{50.0f, 20.0f, 50.0f, 180.0f}, {150.0f, 20.0f, 150.0f, 180.0f}};
    nav_grid_block_segments(&g, walls, 2, 0.3f);
    float* T = solve_point(&g, 100.0f, 100.0f);
    const float probe[][2] = {{100.0f, 190.0f}, {190.0f, 100.0f}, {160.0f, 160.0f}, {100.0f, 5.0f}};
    for (int k = 0; k < 4; ++k) {
        double exact = hypot(probe[k][0] - 100.0, probe[k][1] - 100.0);
        double t = T[nav_grid_cell_of(&g, probe[k][0], probe[k][1])];
        if (probe[k][0] < 150.0f)
            cr_assert_lt(fabs(t - exact) / exact, 0.03, "probe %d: %g vs %g", k, t, exact);
    }
    /* Behind the right wall: around its end at (150, 180) or (150, 20). */
    double behind = hypot(50.0, 80.0) + hypot(20.0, 80.0);
    double t = T[nav_grid_cell_of(&g, 170.0f, 100.0f)];
    cr_assert(t >= behind && t < 1.02 * behind, "behind the wall: %g vs %g", t, behind);
    int64_t unreached = 0;
    for (int64_t c = 0; c < (int64_t)g.nx * g.ny; ++c) unreached += !g.blocked[c] && !isfinite(T[c]);
    cr_assert_eq(unreached, 0);
    free(T);
    nav_grid_free(&g);
}

Test(nav_field, solve_is_deterministic)
{
    nav_grid_t g = make_grid(0.1f, 200, 200);
    const float seg[][4] = {{10.0f, 4.0f, 10.0f, 16.0f}, {3.0f, 3.0f, 7.0f, 9.0f}};
    nav_grid_block_segments(&g, seg, 2, 0.25f);
    float* a = solve_point(&g, 15.0f, 10.0f);
    float* b = solve_point(&g, 15.0f, 10.0f);
    cr_assert_eq(memcmp(a, b, 200 * 200 * sizeof *a), 0);
    free(a);
    free(b);
    nav_grid_free(&g);
}

/* A per-cell speed: half speed everywhere doubles every time; a cell of
 * speed 0 is a wall. */
Test(nav_field, speed_scales_time)
{
    nav_grid_t g = make_grid(0.1f, 100, 80);
    int32_t goal = 40 * 100 + 50;
    float* one = malloc(100 * 80 * sizeof *one);
    float* half = malloc(100 * 80 * sizeof *half);
    float* speed = malloc(100 * 80 * sizeof *speed);
    cr_assert(one != NULL && half != NULL && speed != NULL);
    for (int32_t c = 0; c < 100 * 80; ++c) speed[c] = 0.5f;
    cr_assert_eq(nav_field_solve(&g, NULL, &goal, NULL, 1, one), SHOAL_OK);
    cr_assert_eq(nav_field_solve(&g, speed, &goal, NULL, 1, half), SHOAL_OK);
    for (int32_t c = 0; c < 100 * 80; ++c)
        cr_assert_leq(fabsf(half[c] - 2.0f * one[c]), 1e-5f * one[c] + 1e-6f, "cell %d", (int)c);
    /* A column of speed 0 from the bottom to just below the goal's row:
     * the cells right of it, low down, are reached around its top. */
    for (int32_t j = 0; j < 38; ++j) speed[j * 100 + 60] = 0.0f;
    cr_assert_eq(nav_field_solve(&g, speed, &goal, NULL, 1, half), SHOAL_OK);
    cr_assert(isinf(half[10 * 100 + 60]));
    /* Around the column's top cell center (6.05, 3.75) at half speed. */
    double around = 2.0 * (hypot(6.05 - 5.05, 4.05 - 3.75) + hypot(6.15 - 6.05, 3.75 - 0.05));
    double t = half[0 * 100 + 61];
    cr_assert(t >= 0.97 * around && t <= 1.1 * around, "%g vs %g", t, around);
    free(one);
    free(half);
    free(speed);
    nav_grid_free(&g);
}

/* From 500 random points of a room with several walls, every reached one
 * descends to the goal's cell without entering a blocked cell, within
 * 1.05 T of path (measured: 1.025 at most); and points inside the walls'
 * clearance that get a direction are led out of it within 1 m. */
Test(nav_field, descent_from_anywhere_reaches_the_goal)
{
    nav_grid_t g = make_grid(0.1f, 200, 200);
    const float walls[][4] = {{12.0f, 5.0f, 12.0f, 15.0f}, {12.0f, 15.0f, 6.0f, 15.0f},
                              {12.0f, 5.0f, 6.0f, 5.0f},   {3.0f, 3.0f, 8.0f, 1.0f},
                              {2.0f, 12.0f, 4.0f, 18.0f},  {14.0f, 2.0f, 18.0f, 8.0f}};
    nav_grid_block_segments(&g, walls, 6, 0.25f);
    float* T = solve_point(&g, 16.05f, 10.05f);
    uint32_t s = 12345;
    int32_t tried = 0, led_out = 0;
    for (int k = 0; k < 500 + 5000; ++k) {
        s = s * 1664525u + 1013904223u;
        float x = (float)(s >> 8) * (20.0f / 16777216.0f);
        s = s * 1664525u + 1013904223u;
        float y = (float)(s >> 8) * (20.0f / 16777216.0f);
        int32_t c = nav_grid_cell_of(&g, x, y);
        if (k < 500) {
            if (c < 0 || g.blocked[c] || !isfinite(T[c])) continue;
            ++tried;
            double length = descend(&g, T, x, y, 16.05f, 10.05f, 100.0);
            cr_assert_geq(length, 0.0, "from (%g, %g)", (double)x, (double)y);
            cr_assert_leq(length, 1.05 * T[c] + 0.1, "from (%g, %g): %g vs T %g", (double)x, (double)y,
                          length, (double)T[c]);
        } else if (c >= 0 && g.blocked[c]) {
            float dir[2];
            if (!nav_field_gradient(&g, T, x, y, dir)) continue;
            int out = 0;
            for (int step = 0; step < 40 && !out; ++step) {
                x += 0.025f * dir[0];
                y += 0.025f * dir[1];
                int32_t cc = nav_grid_cell_of(&g, x, y);
                out = cc >= 0 && !g.blocked[cc];
                if (!out && !nav_field_gradient(&g, T, x, y, dir)) break;
            }
            cr_assert(out, "not led out of the clearance from (%g, %g)", (double)x, (double)y);
            ++led_out;
        }
    }
    cr_assert_gt(tried, 400);
    cr_assert_gt(led_out, 10);
    free(T);
    nav_grid_free(&g);
}
