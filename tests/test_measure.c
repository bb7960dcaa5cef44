/* The measure module (src/modules/measure/): lines count every agent that
 * walks through them once, in its direction, at its time to within a
 * step; their flow is the count over the time; areas give a lattice's
 * density exactly (classic, where no agent is on the edge, and Voronoi) and
 * the speed of walkers; the same bits for 1 and 2 threads; the state hash
 * the same with and without them; bad input refused with nothing changed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/snapshot.h>

#include "support.h"

#define DT 0.05f
#define SPEED 1.25f

/* An agent that seeks a far target straight along x at SPEED, starting at
 * that speed: no force, so it walks at SPEED exactly. */
static shoal_agent_t walker(shoal_world_t* w, float x, float y, float dir, uint32_t group)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.position[1] = y;
    d.target[0] = dir * 1e6f;
    d.target[1] = y;
    d.velocity[0] = dir * SPEED;
    d.heading = dir > 0 ? 0.0f : 3.14159265f;
    d.vehicle.max_speed = SPEED;
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.group = group;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

/* An agent that stands still. */
static void stander(shoal_world_t* w, float x, float y)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.position[1] = y;
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
}

static int32_t add_line(shoal_world_t* w, const char* name, float x0, float y0, float x1, float y1,
                        int64_t group)
{
    shoal_measure_line_t l = shoal_measure_line_default();
    l.name = name;
    l.from[0] = x0;
    l.from[1] = y0;
    l.to[0] = x1;
    l.to[1] = y1;
    l.group = group;
    int32_t id = -1;
    cr_assert_eq(shoal_world_add_measure_line(w, &l, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

static int32_t add_box(shoal_world_t* w, float x0, float y0, float x1, float y1, int32_t every)
{
    shoal_measure_area_t a = shoal_measure_area_default();
    a.count = 4;
    float p[4][2] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
    memcpy(a.points, p, sizeof p);
    a.every = every;
    int32_t id = -1;
    cr_assert_eq(shoal_world_add_measure_area(w, &a, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

static void steps(shoal_world_t* w, int n)
{
    for (int i = 0; i < n; ++i)
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
}

Test(measure, walkers_through_a_line_are_counted_once_each_way_at_their_time)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    enum { EAST = 20, WEST = 8 };
    shoal_agent_t east[EAST], west[WEST];
    float x_east[EAST], x_west[WEST];
    for (int i = 0; i < EAST; ++i) {
        x_east[i] = -0.37f - 0.61f * (float)i;
        east[i] = walker(w, x_east[i], -9.0f + 0.9f * (float)i, 1.0f, (uint32_t)(i % 2));
    }
    for (int i = 0; i < WEST; ++i) {
        x_west[i] = 0.53f + 0.77f * (float)i;
        west[i] = walker(w, x_west[i], -8.5f + 2.1f * (float)i, -1.0f, 0);
    }
    /* drawn toward +y: walking east is positive */
    int32_t all = add_line(w, "door", 0.0f, -10.0f, 0.0f, 10.0f, -1);
    int32_t odd = add_line(w, NULL, 0.0f, -10.0f, 0.0f, 10.0f, 1);
    int32_t aside = add_line(w, "aside", 0.0f, 20.0f, 0.0f, 30.0f, -1); /* nobody passes there */
    cr_assert_eq(shoal_world_measure_line_count(w), 3);
    steps(w, 400); /* 20 s: every walker is through by 15 s */

    shoal_measure_line_stats_t s;
    cr_assert_eq(shoal_world_measure_line_stats(w, all, &s), SHOAL_OK);
    cr_assert_str_eq(s.name, "door");
    cr_assert_eq(s.positive, EAST);
    cr_assert_eq(s.negative, WEST);
    cr_assert_float_eq(s.duration, 400 * (double)DT, 1e-9);
    cr_assert_float_eq(s.mean_flow, (EAST + WEST) / s.duration, 1e-12);
    shoal_measure_crossing_t c[64];
    int64_t n = shoal_world_measure_line_crossings(w, all, c, 64);
    cr_assert_eq(n, EAST + WEST);
    for (int64_t k = 1; k < n; ++k) cr_assert_leq(c[k - 1].time, c[k].time, "in time order");
    cr_assert_float_eq(s.first_time, c[0].time, 0.0);
    cr_assert_float_eq(s.last_time, c[n - 1].time, 0.0);
    for (int i = 0; i < EAST + WEST; ++i) {
        const shoal_agent_t id = i < EAST ? east[i] : west[i - EAST];
        const double expect = i < EAST ? -x_east[i] / SPEED : x_west[i - EAST] / SPEED;
        int found = 0;
        for (int64_t k = 0; k < n; ++k)
            if (shoal_agent_equal(c[k].agent, id)) {
                found++;
                cr_assert_eq(c[k].direction, i < EAST ? 1 : -1, "walker %d", i);
                cr_assert_float_eq(c[k].time, expect, 1e-3, "walker %d: crossed at %.6f, expected %.6f", i,
                                   c[k].time, expect);
                cr_assert_eq(c[k].step, (uint64_t)ceil(c[k].time / DT - 1e-9), "walker %d: step", i);
            }
        cr_assert_eq(found, 1, "walker %d crossed %d times", i, found);
    }
    /* the flow series: every crossing in one window, the sum the count */
    double flow[64];
    int64_t windows = shoal_world_measure_line_flow(w, all, flow, 64);
    cr_assert_eq(windows, 20);
    double sum = 0.0;
    for (int64_t k = 0; k < windows; ++k) sum += flow[k] * 1.0;
    cr_assert_float_eq(sum, (double)(EAST + WEST), 1e-9);
    for (int64_t k = 16; k < windows; ++k) cr_assert_eq(flow[k], 0.0);
    /* by group: the odd walkers east, none west */
    cr_assert_eq(shoal_world_measure_line_stats(w, odd, &s), SHOAL_OK);
    cr_assert_str_eq(s.name, "line1");
    cr_assert_eq(s.positive, EAST / 2);
    cr_assert_eq(s.negative, 0);
    cr_assert_eq(shoal_world_measure_line_stats(w, aside, &s), SHOAL_OK);
    cr_assert_eq(s.positive + s.negative, 0);
    cr_assert(isnan(s.first_time) && isnan(s.last_time));
    shoal_world_destroy(w);
}

Test(measure, a_walker_that_stops_on_the_line_and_walks_back_is_counted_each_time)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_t a = walker(w, -0.5f, 0.0f, 1.0f, 0);
    int32_t l = add_line(w, "l", 0.0f, -1.0f, 0.0f, 1.0f, -1);
    steps(w, 20); /* at 0.75 */
    float v[3] = {-SPEED, 0.0f, 0.0f};
    cr_assert_eq(shoal_agent_set_target(w, a, (float[3]){-1e6f, 0.0f, 0.0f}), SHOAL_OK);
    cr_assert_eq(shoal_agent_teleport(w, a, (float[3]){0.75f, 0.0f, 0.0f}, v, 3.14159265f, NULL), SHOAL_OK);
    steps(w, 40);
    shoal_measure_line_stats_t s;
    cr_assert_eq(shoal_world_measure_line_stats(w, l, &s), SHOAL_OK);
    cr_assert_eq(s.positive, 1);
    cr_assert_eq(s.negative, 1);
    /* a teleport between steps is no crossing */
    cr_assert_eq(shoal_agent_teleport(w, a, (float[3]){5.0f, 0.0f, 0.0f}, v, 3.14159265f, NULL), SHOAL_OK);
    steps(w, 1);
    cr_assert_eq(shoal_world_measure_line_stats(w, l, &s), SHOAL_OK);
    cr_assert_eq(s.positive + s.negative, 2);
    shoal_world_destroy(w);
}

/* A square lattice of spacing 0.8 m (1.5625 per m^2), points at 0.8 (i +
 * 1/2): no point on the edges of the boxes below. */
#define GAP 0.8f
static void lattice(shoal_world_t* w)
{
    for (int i = -14; i < 14; ++i)
        for (int j = -14; j < 14; ++j) stander(w, GAP * ((float)i + 0.5f), GAP * ((float)j + 0.5f));
}

Test(measure, a_lattice_has_its_density_classic_exactly_and_voronoi_within_a_tenth_of_a_percent)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    lattice(w);
    const double rho = 1.0 / ((double)GAP * GAP);
    int32_t aligned = add_box(w, -2.4f, -2.4f, 2.4f, 2.4f, 1); /* 6 x 6 cells exactly */
    int32_t offset = add_box(w, -2.1f, -1.9f, 2.5f, 2.35f, 5); /* cuts cells */
    shoal_measure_area_t l = shoal_measure_area_default();
    l.name = "ell";
    l.count = 6; /* an L, clockwise: non-convex and either orientation */
    float p[6][2] = {{-3.0f, -3.0f}, {-3.0f, 3.3f}, {-1.1f, 3.3f},
                     {-1.1f, -0.7f}, {4.1f, -0.7f}, {4.1f, -3.0f}};
    memcpy(l.points, p, sizeof p);
    l.cell_radius = 1.5f;
    int32_t ell = -1;
    cr_assert_eq(shoal_world_add_measure_area(w, &l, &ell), SHOAL_OK, "%s", shoal_world_last_error(w));
    steps(w, 20);

    shoal_measure_sample_t s[32];
    cr_assert_eq(shoal_world_measure_area_samples(w, aligned, s, 32), 20);
    for (int k = 0; k < 20; ++k) {
        cr_assert_eq(s[k].step, (uint64_t)k + 1);
        cr_assert_float_eq(s[k].time, (k + 1) * (double)DT, 1e-9);
        cr_assert_eq(s[k].count, 36);
        cr_assert_float_eq(s[k].density, (float)rho, 1e-6);
        cr_assert_float_eq(s[k].voronoi_density, (float)rho, 1e-3 * rho, "sample %d: %g", k,
                           (double)s[k].voronoi_density);
        cr_assert_float_eq(s[k].speed, 0.0f, 1e-9);
    }
    cr_assert_eq(shoal_world_measure_area_samples(w, offset, s, 32), 4, "every 5 steps");
    cr_assert_eq(s[0].step, 5);
    cr_assert_float_eq(s[0].voronoi_density, (float)rho, 1e-3 * rho, "got %g", (double)s[0].voronoi_density);
    cr_assert_eq(shoal_world_measure_area_samples(w, ell, s, 32), 20);
    cr_assert_float_eq(s[19].voronoi_density, (float)rho, 1e-3 * rho, "got %g",
                       (double)s[19].voronoi_density);

    shoal_measure_area_stats_t st;
    cr_assert_eq(shoal_world_measure_area_stats(w, aligned, -INFINITY, INFINITY, &st), SHOAL_OK);
    cr_assert_eq(st.samples, 20);
    cr_assert_float_eq(st.area, 4.8 * 4.8, 1e-5);
    cr_assert_float_eq(st.mean_count, 36.0, 1e-12);
    cr_assert_float_eq(st.mean_density, rho, 1e-5);
    cr_assert_eq(shoal_world_measure_area_stats(w, ell, 0.49, 0.76, &st), SHOAL_OK);
    cr_assert_str_eq(st.name, "ell");
    cr_assert_eq(st.samples, 6, "samples at 0.5, 0.55, ..., 0.75: got %lld", (long long)st.samples);
    shoal_world_destroy(w);
}

Test(measure, a_sparse_agent_has_a_cell_of_the_cut_disc)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    stander(w, 0.0f, 0.0f);
    shoal_measure_area_t a = shoal_measure_area_default();
    a.count = 4;
    float p[4][2] = {{-10, -10}, {10, -10}, {10, 10}, {-10, 10}};
    memcpy(a.points, p, sizeof p);
    a.cell_radius = 2.0f;
    cr_assert_eq(shoal_world_add_measure_area(w, &a, NULL), SHOAL_OK);
    steps(w, 1);
    shoal_measure_sample_t s;
    cr_assert_eq(shoal_world_measure_area_samples(w, 0, &s, 1), 1);
    cr_assert_eq(s.count, 1);
    cr_assert_float_eq(s.density, 1.0f / 400.0f, 1e-9);
    /* the whole cell inside: its share is 1, rho_V = 1 / |A| */
    cr_assert_float_eq(s.voronoi_density, 1.0f / 400.0f, 1e-7);
    shoal_world_destroy(w);
}

/* A row of agents 1 m apart in a corridor 1 m wide: walls cut each cell
 * to its 1 m square, so rho_V is 1 per m^2 (the cells would be 1 by 4 m
 * with no walls); behind a wall, a second row cuts nothing. */
Test(measure, walls_cut_the_cells_they_face)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float lo[4] = {-20.0f, -0.5f, 20.0f, -0.5f}, hi[4] = {-20.0f, 0.5f, 20.0f, 0.5f};
    cr_assert_eq(shoal_world_add_wall(w, lo, 2, 0, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_add_wall(w, hi, 2, 0, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int i = -10; i < 10; ++i) {
        stander(w, (float)i + 0.5f, 0.0f);
        stander(w, (float)i + 0.5f, 0.7f); /* beyond the upper wall */
    }
    int32_t a = add_box(w, -3.0f, -0.5f, 3.0f, 0.5f, 1);
    steps(w, 2);
    shoal_measure_sample_t s[2];
    cr_assert_eq(shoal_world_measure_area_samples(w, a, s, 2), 2);
    cr_assert_eq(s[1].count, 6);
    cr_assert_float_eq(s[1].density, 1.0f, 1e-6);
    cr_assert_float_eq(s[1].voronoi_density, 1.0f, 1e-4, "got %g", (double)s[1].voronoi_density);
    shoal_world_destroy(w);
}

Test(measure, walkers_at_a_known_speed_have_it_in_the_area)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int i = -20; i < 20; ++i)
        for (int j = -6; j < 6; ++j) walker(w, (float)i + 0.5f, (float)j + 0.5f, 1.0f, 0);
    int32_t a = add_box(w, -3.0f, -3.0f, 3.0f, 3.0f, 2);
    steps(w, 40);
    shoal_measure_area_stats_t st;
    cr_assert_eq(shoal_world_measure_area_stats(w, a, -INFINITY, INFINITY, &st), SHOAL_OK);
    cr_assert_eq(st.samples, 20);
    cr_assert_float_eq(st.mean_speed, SPEED, 1e-5);
    cr_assert_float_eq(st.mean_density, 1.0, 1e-6);
    cr_assert_float_eq(st.mean_voronoi_density, 1.0, 1e-3);
    cr_assert_float_eq(st.mean_voronoi_speed, SPEED, 1e-3);
    shoal_world_destroy(w);
}

/* Walkers both ways through two lines and an area, on `threads` threads:
 * every crossing and sample, and the state hash. */
typedef struct run_t {
    shoal_measure_crossing_t c[2][256];
    int64_t nc[2];
    shoal_measure_sample_t s[64];
    int64_t ns;
    uint64_t hash;
} run_t;

static void crowd_run(int threads, int measured, run_t* out)
{
    shoal_world_t* w = make_world(2, threads, threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 150; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
        const float dir = i % 2 ? 1.0f : -1.0f;
        d.position[0] = -dir * (4.0f + 0.37f * (float)(i % 23));
        d.position[1] = -4.0f + 8.0f * (float)((i * 37) % 150) / 150.0f;
        d.target[0] = dir * 30.0f;
        d.target[1] = d.position[1];
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        d.group = (uint32_t)(i % 3);
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    if (measured) {
        add_line(w, "a", 0.0f, -5.0f, 0.0f, 5.0f, -1);
        add_line(w, "b", 1.0f, -5.0f, 2.0f, 5.0f, 2);
        add_box(w, -2.0f, -4.0f, 2.0f, 4.0f, 3);
    }
    steps(w, 150);
    memset(out, 0, sizeof *out);
    if (measured) {
        for (int k = 0; k < 2; ++k) {
            out->nc[k] = shoal_world_measure_line_crossings(w, k, out->c[k], 256);
            for (int64_t i = 0; i < out->nc[k] && i < 256; ++i)
                out->c[k][i].agent.world0 = 0; /* the world's tag */
        }
        out->ns = shoal_world_measure_area_samples(w, 0, out->s, 64);
    }
    out->hash = shoal_world_state_hash(w);
    shoal_world_destroy(w);
}

Test(measure, one_result_for_1_and_2_threads_and_the_state_hash_unchanged, .timeout = 120)
{
    static run_t one, two, bare;
    crowd_run(1, 1, &one);
    crowd_run(2, 1, &two);
    crowd_run(1, 0, &bare);
    cr_assert_gt(one.nc[0], 50, "crossings: %lld", (long long)one.nc[0]);
    cr_assert_gt(one.nc[1], 10, "crossings: %lld", (long long)one.nc[1]);
    cr_assert_eq(one.ns, 50);
    cr_assert_eq(one.hash, two.hash, "1 and 2 threads: the state differs");
    for (int k = 0; k < 2; ++k) {
        cr_assert_eq(one.nc[k], two.nc[k], "line %d", k);
        for (int64_t i = 0; i < one.nc[k]; ++i)
            cr_assert_eq(memcmp(&one.c[k][i], &two.c[k][i], sizeof one.c[k][i]), 0,
                         "line %d crossing %lld: %.17g %u vs %.17g %u", k, (long long)i, one.c[k][i].time,
                         one.c[k][i].agent.index1, two.c[k][i].time, two.c[k][i].agent.index1);
    }
    for (int64_t i = 0; i < one.ns; ++i)
        cr_assert_eq(memcmp(&one.s[i], &two.s[i], sizeof one.s[i]), 0,
                     "sample %lld: %d %.9g %.9g vs %d %.9g %.9g", (long long)i, one.s[i].count,
                     (double)one.s[i].voronoi_density, (double)one.s[i].voronoi_speed, two.s[i].count,
                     (double)two.s[i].voronoi_density, (double)two.s[i].voronoi_speed);
    cr_assert_eq(memcmp(&one, &two, sizeof one), 0, "1 and 2 threads differ");
    cr_assert_eq(one.hash, bare.hash, "measurements changed the state hash");
    int32_t most = 0;
    for (int k = 0; k < one.ns; ++k) most = one.s[k].count > most ? one.s[k].count : most;
    cr_assert_gt(most, 20);
}

Test(measure, bad_input_is_refused_with_the_world_unchanged)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_measure_line_t l = shoal_measure_line_default();
    l.from[0] = l.to[0] = 1.0f;
    l.from[1] = l.to[1] = 2.0f;
    int32_t id = 7;
    cr_assert_eq(shoal_world_add_measure_line(w, &l, &id), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(id, -1);
    cr_assert(strstr(shoal_world_last_error(w), "world_add_measure_line: from and to are the same point"),
              "%s", shoal_world_last_error(w));
    l.to[0] = NAN;
    cr_assert_eq(shoal_world_add_measure_line(w, &l, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "to"), "%s", shoal_world_last_error(w));
    l.to[0] = 3.0f;
    l.window = 0.0f;
    cr_assert_eq(shoal_world_add_measure_line(w, &l, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "window"), "%s", shoal_world_last_error(w));
    l.window = 1.0f;
    l.group = -2;
    cr_assert_eq(shoal_world_add_measure_line(w, &l, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "group"), "%s", shoal_world_last_error(w));
    l.group = -1;
    l.name = "a name of more than thirty-one bytes, far too long";
    cr_assert_eq(shoal_world_add_measure_line(w, &l, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "longer than 31 bytes"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_measure_line_count(w), 0);

    shoal_measure_area_t a = shoal_measure_area_default();
    a.count = 3;
    float flat[3][2] = {{0, 0}, {1, 1}, {2, 2}};
    memcpy(a.points, flat, sizeof flat);
    cr_assert_eq(shoal_world_add_measure_area(w, &a, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "zero area"), "%s", shoal_world_last_error(w));
    a.count = 2;
    cr_assert_eq(shoal_world_add_measure_area(w, &a, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "3 to 16 corners, got count 2"), "%s",
              shoal_world_last_error(w));
    a.count = 17;
    cr_assert_eq(shoal_world_add_measure_area(w, &a, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    a.count = 3;
    a.points[2][0] = 5.0f;
    a.every = 0;
    cr_assert_eq(shoal_world_add_measure_area(w, &a, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "every must be 1 to 1000000"), "%s",
              shoal_world_last_error(w));
    a.every = 1;
    a.cell_radius = 0.0f;
    cr_assert_eq(shoal_world_add_measure_area(w, &a, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "cell_radius"), "%s", shoal_world_last_error(w));
    a.cell_radius = 2.0f;
    a.points[1][1] = INFINITY;
    cr_assert_eq(shoal_world_add_measure_area(w, &a, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "points[1]"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_measure_area_count(w), 0);

    /* reads of ids that are not there */
    shoal_measure_line_stats_t ls;
    cr_assert_eq(shoal_world_measure_line_stats(w, 0, &ls), SHOAL_ERR_NOT_FOUND);
    cr_assert(strstr(shoal_world_last_error(w), "no measurement line 0 (0 added)"), "%s",
              shoal_world_last_error(w));
    cr_assert_eq(shoal_world_measure_line_crossings(w, 3, NULL, 0), -1);
    cr_assert_eq(shoal_world_measure_area_samples(w, -1, NULL, 0), -1);
    a.points[1][1] = 1.0f;
    cr_assert_eq(shoal_world_add_measure_area(w, &a, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_measure_area_stats_t as;
    cr_assert_eq(shoal_world_measure_area_stats(w, 0, 2.0, 1.0, &as), SHOAL_ERR_INVALID_ARGUMENT);
    uint64_t h = shoal_world_state_hash(w);
    cr_assert_eq(shoal_world_state_hash(w), h);
    shoal_world_destroy(w);

    shoal_world_t* w3 = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    l = shoal_measure_line_default();
    l.to[0] = 1.0f;
    cr_assert_eq(shoal_world_add_measure_line(w3, &l, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w3), "this world is 3D"), "%s", shoal_world_last_error(w3));
    cr_assert_eq(shoal_world_measure_line_count(w3), 0);
    shoal_world_destroy(w3);
}

Test(measure, measurements_are_not_saved_and_a_loaded_world_steps_on_alike)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 10; ++i) walker(w, -3.0f - (float)i, (float)i, 1.0f, 0);
    add_line(w, "l", 0.0f, -1.0f, 0.0f, 20.0f, -1);
    add_box(w, -5.0f, -1.0f, 5.0f, 11.0f, 1);
    steps(w, 40);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    void* bytes = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, bytes, size, &size), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    shoal_world_def_t def = shoal_world_default_def();
    shoal_world_t* copy = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(bytes, size, &def, &copy, &err), SHOAL_OK, "%s",
                 err.message);
    free(bytes);
    cr_assert_eq(shoal_world_measure_line_count(copy), 0);
    cr_assert_eq(shoal_world_measure_area_count(copy), 0);
    steps(w, 40);
    steps(copy, 40);
    cr_assert_eq(shoal_world_state_hash(w), shoal_world_state_hash(copy));
    shoal_world_destroy(copy);
    shoal_world_destroy(w);
}
