/* Tests of a group's population keys (src/io/scenario_spawn.c): the polygon
 * spawn area, placement "random" with min_spacing and the lattices, and the
 * per-agent "distributions": every agent where the rules put it, every
 * pair apart, the lattices' counts, the draws' moments and bounds, the same
 * file giving the same world, and bad input refused with the world as it
 * was.
 *
 * Worlds here are serial (thread_count 1). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/crowd.h"
#include "shoal/scenario.h"

#define SCENARIO_TEST_FILE "test.json"
#include "scenario_support.h"

#define PI_ 3.14159265358979323846

static shoal_world_t* populated(const shoal_scenario_t* s)
{
    shoal_world_t* w = serial_world(s);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_agent_count(w), shoal_scenario_agent_count(s));
    return w;
}

typedef struct agents_t {
    int32_t count;
    shoal_agent_t* ids;
    float* positions;
    uint32_t* groups;
} agents_t;

static agents_t read_agents(const shoal_world_t* w)
{
    agents_t a = {0};
    int32_t n = shoal_world_agent_count(w);
    a.ids = calloc((size_t)n + 1, sizeof *a.ids);
    a.positions = calloc(3 * (size_t)n + 1, sizeof(float));
    a.groups = calloc((size_t)n + 1, sizeof(uint32_t));
    shoal_agent_batch_t b = {.ids = a.ids, .positions = a.positions, .groups = a.groups};
    cr_assert_eq(shoal_world_read_agents(w, &b, n, &a.count), SHOAL_OK);
    cr_assert_eq(a.count, n);
    return a;
}

static void agents_free(agents_t* a)
{
    free(a->ids);
    free(a->positions);
    free(a->groups);
}

/* The smallest distance between two agents of groups in `mask` where at
 * least one is of group `g`. */
static double closest_pair(const agents_t* a, uint32_t g, uint32_t mask)
{
    double best = INFINITY;
    for (int32_t i = 0; i < a->count; i++)
        for (int32_t j = i + 1; j < a->count; j++) {
            if (!((mask >> a->groups[i]) & 1) || !((mask >> a->groups[j]) & 1)) continue;
            if (a->groups[i] != g && a->groups[j] != g) continue;
            double d = hypot((double)a->positions[3 * i] - a->positions[3 * j],
                             (double)a->positions[3 * i + 1] - a->positions[3 * j + 1]);
            if (d < best) best = d;
        }
    return best;
}

/* Crossing-number test, and the distance to the polygon's edges. */
static int inside(const double (*p)[2], int n, double x, double y)
{
    int in = 0;
    for (int i = 0, j = n - 1; i < n; j = i++)
        if ((p[i][1] > y) != (p[j][1] > y) &&
            x < (p[j][0] - p[i][0]) * (y - p[i][1]) / (p[j][1] - p[i][1]) + p[i][0])
            in = !in;
    return in;
}

static double edge_distance(const double (*p)[2], int n, double x, double y)
{
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        const double *a = p[i], *b = p[(i + 1) % n];
        double ux = b[0] - a[0], uy = b[1] - a[1];
        double t = fmin(fmax(((x - a[0]) * ux + (y - a[1]) * uy) / (ux * ux + uy * uy), 0.0), 1.0);
        best = fmin(best, hypot(x - a[0] - t * ux, y - a[1] - t * uy));
    }
    return best;
}

/* A concave polygon (an L with a notch) of area 10*10 - 5*5 = 75. */
static const double L_SHAPE[6][2] = {{0, 0}, {10, 0}, {10, 5}, {5, 5}, {5, 10}, {0, 10}};
#define L_POINTS "[[0, 0], [10, 0], [10, 5], [5, 5], [5, 10], [0, 10]]"

/* ---- polygon ---- */

Test(scenario_population, polygon_spawn_puts_every_agent_inside_uniformly)
{
    shoal_scenario_t* s =
        load_text("{\"seed\": 7, \"groups\": [{\"count\": 3000, \"spawn\": {\"shape\": \"polygon\", "
                  "\"points\": " L_POINTS ", \"heading\": \"outward\"}}]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    int in_top = 0; /* the arm above y = 5: area 25 of 75 */
    for (int32_t i = 0; i < a.count; i++) {
        double x = a.positions[3 * i], y = a.positions[3 * i + 1];
        cr_expect(inside(L_SHAPE, 6, x, y) || edge_distance(L_SHAPE, 6, x, y) < 1e-4,
                  "agent %d at (%g, %g) outside the polygon", (int)i, x, y);
        in_top += y > 5.0;
    }
    /* A third, within 4 standard deviations (sqrt(3000 * 1/3 * 2/3) = 25.8). */
    cr_expect(abs(in_top - 1000) < 104, "%d of 3000 in the upper arm, expected about 1000", in_top);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario_population, polygon_winding_either_way_gives_the_same_area)
{
    /* The same L clockwise: its agents are inside too. */
    shoal_scenario_t* s =
        load_text("{\"groups\": [{\"count\": 500, \"spawn\": {\"shape\": \"polygon\", \"points\": "
                  "[[0, 10], [5, 10], [5, 5], [10, 5], [10, 0], [0, 0]], \"min_spacing\": 0.3}}]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    for (int32_t i = 0; i < a.count; i++) {
        double x = a.positions[3 * i], y = a.positions[3 * i + 1];
        cr_expect(inside(L_SHAPE, 6, x, y) || edge_distance(L_SHAPE, 6, x, y) < 1e-4, "(%g, %g)", x, y);
    }
    cr_expect_geq(closest_pair(&a, 0, 1u), 0.3 - 1e-5);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* ---- min_spacing ---- */

Test(scenario_population, random_min_spacing_holds_for_every_pair_and_from_earlier_groups_and_walls)
{
    shoal_scenario_t* s =
        load_text("{\"seed\": 11, \"walls\": [{\"points\": [[-10, 0.5], [10, 0.5]]}], \"groups\": ["
                  "{\"count\": 150, \"spawn\": {\"shape\": \"disc\", \"radius\": 6}},"
                  "{\"count\": 150, \"vehicle\": {\"radius\": 0.25}, \"spawn\": {\"shape\": \"box\", "
                  "\"size\": [12, 12], "
                  "\"min_spacing\": 0.55}},"
                  "{\"count\": 100, \"spawn\": {\"shape\": \"polygon\", \"points\": " L_POINTS
                  ", \"min_spacing\": 0.5}},"
                  "{\"count\": 30, \"spawn\": {\"shape\": \"ring\", \"center\": [20, 0], \"radius\": 5, "
                  "\"min_spacing\": 0.5}}"
                  "]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    /* Group 1 keeps 0.55 from group 0 (placed before, unspaced) and itself;
     * group 2 keeps 0.5 from groups 0, 1 and itself; group 3 on its ring. */
    cr_expect_geq(closest_pair(&a, 1, 0x3u), 0.55 - 1e-5);
    cr_expect_geq(closest_pair(&a, 2, 0x7u), 0.5 - 1e-5);
    cr_expect_geq(closest_pair(&a, 3, 0xfu), 0.5 - 1e-5);
    for (int32_t i = 0; i < a.count; i++) {
        double x = a.positions[3 * i], y = a.positions[3 * i + 1];
        if (a.groups[i] == 1) {
            cr_expect(fabs(x) <= 6.0 && fabs(y) <= 6.0, "(%g, %g) outside the box", x, y);
            /* The wall y = 0.5 from x = -10 to 10 crosses the box: a radius clear of it. */
            cr_expect_geq(fabs(y - 0.5), 0.25 - 1e-5, "agent at (%g, %g) within its radius of the wall", x,
                          y);
        }
        if (a.groups[i] == 3) cr_expect_float_eq(hypot(x - 20.0, y), 5.0, 1e-4);
    }
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario_population, spacing_keeps_a_radius_from_every_segment_of_long_walls)
{
    /* A closed 64-gon of radius 3 and a zig-zag of 200 segments across the
     * box: every agent a radius (0.2) clear of all of them. */
    char text[16384];
    int at = snprintf(text, sizeof text, "{\"seed\": 4, \"walls\": [{\"closed\": true, \"points\": [");
    double seg[264][4];
    int n = 0;
    for (int k = 0; k < 64; k++) {
        double a = 2.0 * PI_ * k / 64.0, b = 2.0 * PI_ * (k + 1) / 64.0;
        at += snprintf(text + at, sizeof text - (size_t)at, "%s[%.17g, %.17g]", k ? ", " : "",
                       (double)(float)(3.0 * cos(a)), (double)(float)(3.0 * sin(a)));
        seg[n][0] = (float)(3.0 * cos(a)), seg[n][1] = (float)(3.0 * sin(a));
        seg[n][2] = (float)(3.0 * cos(b)), seg[n][3] = (float)(3.0 * sin(b));
        n++;
    }
    at += snprintf(text + at, sizeof text - (size_t)at, "]}, {\"points\": [");
    for (int k = 0; k <= 200; k++) {
        double x = -10.0 + 0.1 * k, y = k % 2 ? 6.0 : 5.0;
        at += snprintf(text + at, sizeof text - (size_t)at, "%s[%g, %g]", k ? ", " : "", x, y);
        if (k > 0) {
            seg[n][0] = x - 0.1, seg[n][1] = k % 2 ? 5.0 : 6.0, seg[n][2] = x, seg[n][3] = y;
            n++;
        }
    }
    snprintf(text + at, sizeof text - (size_t)at,
             "]}], \"groups\": [{\"count\": 200, \"vehicle\": {\"radius\": 0.2}, \"spawn\": {\"shape\": "
             "\"box\", \"size\": [16, 16], \"min_spacing\": 0.5}}]}");
    shoal_scenario_t* s = load_text(text);
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    for (int32_t i = 0; i < a.count; i++) {
        double x = a.positions[3 * i], y = a.positions[3 * i + 1];
        for (int k = 0; k < n; k++) {
            double ux = seg[k][2] - seg[k][0], uy = seg[k][3] - seg[k][1];
            double t =
                fmin(fmax(((x - seg[k][0]) * ux + (y - seg[k][1]) * uy) / (ux * ux + uy * uy), 0.0), 1.0);
            double d = hypot(x - seg[k][0] - t * ux, y - seg[k][1] - t * uy);
            cr_expect_geq(d, 0.2 - 1e-5, "agent at (%g, %g) is %g from wall segment %d", x, y, d, k);
        }
    }
    cr_expect_geq(closest_pair(&a, 0, 1u), 0.5 - 1e-5);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario_population, placement_random_without_spacing_is_the_old_placement)
{
    const char* plain = "{\"seed\": 5, \"groups\": [{\"count\": 300, \"spawn\": {\"shape\": \"box\", "
                        "\"size\": [30, 20]}}, {\"count\": 100, \"spawn\": {\"radius\": 9}}]}";
    const char* named = "{\"seed\": 5, \"groups\": [{\"count\": 300, \"spawn\": {\"shape\": \"box\", "
                        "\"size\": [30, 20], \"placement\": \"random\"}}, {\"count\": 100, \"spawn\": "
                        "{\"radius\": 9, \"placement\": \"random\"}}]}";
    shoal_scenario_t *s1 = load_text(plain), *s2 = load_text(named);
    shoal_world_t *w1 = populated(s1), *w2 = populated(s2);
    cr_expect_eq(shoal_world_state_hash(w1), shoal_world_state_hash(w2));
    shoal_world_destroy(w1);
    shoal_world_destroy(w2);
    shoal_scenario_destroy(s1);
    shoal_scenario_destroy(s2);
}

/* ---- lattices ---- */

Test(scenario_population, hexagonal_lattice_fills_a_box_to_its_count)
{
    /* At 1 m in a 10 x 10 box centered on the origin: 11 rows 0.866 m
     * apart (|y| <= 5), 11 points on even rows and 10 on odd ones (six odd
     * rows, five even): 115 points, 1.15 a square meter (the hexagonal
     * density is 1 / 0.866 = 1.155). */
    const char* fmt = "{\"groups\": [{\"name\": \"block\", \"count\": %d, \"spawn\": {\"shape\": \"box\", "
                      "\"size\": [10, 10], \"placement\": \"lattice\", \"min_spacing\": 1}}]}";
    char text[256];
    snprintf(text, sizeof text, fmt, 115);
    shoal_scenario_t* s = load_text(text);
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    cr_expect_geq(closest_pair(&a, 0, 1u), 1.0 - 1e-5);
    int six = 0; /* agents with six neighbors at 1 m: the interior of a hexagonal lattice */
    for (int32_t i = 0; i < a.count; i++) {
        int near = 0;
        for (int32_t j = 0; j < a.count; j++)
            near += j != i && hypot((double)a.positions[3 * i] - a.positions[3 * j],
                                    (double)a.positions[3 * i + 1] - a.positions[3 * j + 1]) < 1.0 + 1e-4;
        cr_expect_leq(near, 6);
        six += near == 6;
    }
    /* The interior: 9 of each of the 5 inner even rows, 8 of each of the 4
     * inner odd rows (their ends at x = 4.5 miss a neighbor at 5.5). */
    cr_expect_eq(six, 77, "%d of 115 agents have six neighbors at the spacing", six);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    snprintf(text, sizeof text, fmt, 116);
    s = load_text(text);
    w = serial_world(s);
    cr_expect_eq(shoal_scenario_populate(s, w), SHOAL_ERR_CAPACITY);
    const char* msg = shoal_world_last_error(w);
    cr_expect_not_null(strstr(msg,
                              "group 'block' (groups[0]): 116 agents do not fit its spawn area (100 m^2) on "
                              "a hexagonal lattice at min_spacing 1 m: it has 115 free points"),
                       "%s", msg);
    cr_expect_eq(shoal_world_agent_count(w), 0);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario_population, square_lattice_counts_and_compact_partial_fill)
{
    /* 11 x 11 points at 1 m in a 10 x 10 box. */
    shoal_scenario_t* s =
        load_text("{\"groups\": [{\"count\": 121, \"spawn\": {\"shape\": \"box\", \"size\": [10, 10], "
                  "\"placement\": \"square_lattice\", \"min_spacing\": 1}}]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    for (int32_t i = 0; i < a.count; i++) {
        double x = a.positions[3 * i], y = a.positions[3 * i + 1];
        cr_expect(x == round(x) && y == round(y) && fabs(x) <= 5 && fabs(y) <= 5, "(%g, %g)", x, y);
    }
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    /* 21 agents of a large disc: the points nearest its center, a compact
     * block (within sqrt(21 / pi) + 1 m), not spread over the disc. */
    s = load_text(
        "{\"groups\": [{\"count\": 21, \"spawn\": {\"shape\": \"disc\", \"center\": [3, 4], \"radius\": "
        "40, \"placement\": \"square_lattice\", \"min_spacing\": 1}}]}");
    w = populated(s);
    a = read_agents(w);
    for (int32_t i = 0; i < a.count; i++)
        cr_expect_leq(hypot(a.positions[3 * i] - 3.0, a.positions[3 * i + 1] - 4.0), sqrt(21.0 / PI_) + 1.0);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

Test(scenario_population, lattice_in_a_polygon_keeps_clear_of_earlier_agents_and_walls)
{
    shoal_scenario_t* s =
        load_text("{\"walls\": [{\"points\": [[5, -1], [5, 11]]}], \"groups\": ["
                  "{\"count\": 30, \"spawn\": {\"shape\": \"disc\", \"center\": [2, 2], \"radius\": 1.5}},"
                  "{\"count\": 40, \"vehicle\": {\"radius\": 0.3}, \"spawn\": {\"shape\": \"polygon\", "
                  "\"points\": " L_POINTS ", \"placement\": \"lattice\", \"min_spacing\": 0.8}}]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    cr_expect_geq(closest_pair(&a, 1, 0x3u), 0.8 - 1e-5);
    for (int32_t i = 0; i < a.count; i++) {
        double x = a.positions[3 * i], y = a.positions[3 * i + 1];
        if (a.groups[i] != 1) continue;
        cr_expect(inside(L_SHAPE, 6, x, y) || edge_distance(L_SHAPE, 6, x, y) < 1e-4, "(%g, %g)", x, y);
        cr_expect_geq(fabs(x - 5.0), 0.3 - 1e-5, "(%g, %g) within its radius of the wall x = 5", x, y);
    }
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* ---- distributions ---- */

static double phi(double x) { return exp(-0.5 * x * x) / sqrt(2.0 * PI_); }
static double cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* Values of each agent: preferred speed, time gap, radius, max speed. */
static void agent_values(const shoal_world_t* w, shoal_agent_t id, double out[4])
{
    shoal_agent_def_t def;
    cr_assert_eq(shoal_agent_get_def(w, id, &def), SHOAL_OK);
    out[0] = def.crowd.preferred_speed;
    out[1] = def.crowd.time_gap;
    out[2] = def.vehicle.radius;
    out[3] = def.vehicle.max_speed;
}

Test(scenario_population, distributions_have_their_moments_and_bounds_on_three_seeds)
{
    /* normal(1.34, 0.26) truncated to [0.46, 1.61] (Weidmann's walking
     * speeds), uniform radii, a two-value table of time gaps. */
    const double mu = 1.34, sd = 0.26, lo = 0.46, hi = 1.61;
    const double al = (lo - mu) / sd, be = (hi - mu) / sd, z = cdf(be) - cdf(al);
    const double tmean = mu + sd * (phi(al) - phi(be)) / z;
    const double tvar =
        sd * sd * (1.0 + (al * phi(al) - be * phi(be)) / z - pow((phi(al) - phi(be)) / z, 2.0));
    const int n = 2000;
    for (int seed = 1; seed <= 3; seed++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"seed\": %d, \"groups\": [{\"count\": %d, \"crowd\": {\"preset\": \"pedestrian\"}, "
                 "\"spawn\": {\"radius\": 100}, \"distributions\": {"
                 "\"crowd.preferred_speed\": {\"normal\": {\"mean\": 1.34, \"sd\": 0.26}, \"min\": 0.46, "
                 "\"max\": 1.61}, \"vehicle.radius\": {\"uniform\": [0.18, 0.22]}, "
                 "\"crowd.time_gap\": {\"table\": [[0.4, 1], [0.8, 3]]}}}]}",
                 seed, n);
        shoal_scenario_t* s = load_text(text);
        shoal_world_t* w = populated(s);
        agents_t a = read_agents(w);
        double sum[3] = {0}, sq[3] = {0};
        int long_gap = 0;
        for (int32_t i = 0; i < a.count; i++) {
            double v[4];
            agent_values(w, a.ids[i], v);
            cr_expect(v[0] >= (float)lo && v[0] <= (float)hi, "preferred speed %g outside [0.46, 1.61]",
                      v[0]);
            cr_expect(v[2] >= 0.18f && v[2] <= 0.22f, "radius %g outside [0.18, 0.22]", v[2]);
            cr_expect(v[1] == 0.4f || v[1] == 0.8f, "time gap %g not in the table", v[1]);
            cr_expect_eq(v[3], 2.0, "max speed of the preset");
            long_gap += v[1] == 0.8f;
            for (int k = 0; k < 3; k++) {
                double x = k == 0 ? v[0] : k == 1 ? v[2] : v[1];
                sum[k] += x;
                sq[k] += x * x;
            }
        }
        double mean = sum[0] / n, var = sq[0] / n - mean * mean;
        /* Within 4 standard errors of the truncated normal's moments. */
        cr_expect_leq(fabs(mean - tmean), 4.0 * sqrt(tvar / n), "seed %d: mean %g, expected %g", seed, mean,
                      tmean);
        cr_expect_leq(fabs(var - tvar), 4.0 * tvar * sqrt(2.0 / n), "seed %d: variance %g, expected %g", seed,
                      var, tvar);
        double rmean = sum[1] / n, rvar = sq[1] / n - rmean * rmean, uvar = 0.04 * 0.04 / 12.0;
        cr_expect_leq(fabs(rmean - 0.2), 4.0 * sqrt(uvar / n), "seed %d: radius mean %g", seed, rmean);
        cr_expect_leq(fabs(rvar - uvar), 4.0 * uvar * sqrt(0.8 / n), "seed %d: radius variance %g", seed,
                      rvar);
        cr_expect_leq(abs(long_gap - 1500), (int)(4.0 * sqrt(n * 0.75 * 0.25)), "seed %d: %d of %d at 0.8 s",
                      seed, long_gap, n);
        agents_free(&a);
        shoal_world_destroy(w);
        shoal_scenario_destroy(s);
    }
}

Test(scenario_population, preferred_speed_is_clamped_to_each_agents_max_speed)
{
    shoal_scenario_t* s = load_text(
        "{\"groups\": [{\"count\": 1000, \"crowd\": {\"preset\": \"pedestrian\"}, \"distributions\": {"
        "\"crowd.preferred_speed\": {\"uniform\": [1.0, 1.6]}, "
        "\"vehicle.max_speed\": {\"table\": [[1.2, 0.3], [1.4, 0.7]]}}}]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    int clamped = 0, slow = 0;
    for (int32_t i = 0; i < a.count; i++) {
        double v[4];
        agent_values(w, a.ids[i], v);
        cr_expect(v[3] == 1.2f || v[3] == 1.4f, "max speed %g", v[3]);
        cr_expect_leq(v[0], v[3], "preferred speed %g above max speed %g", v[0], v[3]);
        clamped += v[0] == v[3];
        slow += v[3] == 1.2f;
    }
    /* P(clamped) = 0.3 * 0.4 / 0.6 + 0.7 * 0.2 / 0.6 = 0.433 */
    cr_expect(clamped > 370 && clamped < 500, "%d of 1000 clamped", clamped);
    cr_expect(slow > 250 && slow < 350, "%d of 1000 at 1.2 m/s", slow);
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}

/* ---- reproducibility ---- */

static const char* const POPULATION =
    "{\"seed\": 21, \"walls\": [{\"points\": [[-6, -6], [6, -6], [6, 6], [-6, 6]], \"closed\": true}], "
    "\"groups\": ["
    "{\"count\": 80, \"crowd\": {\"preset\": \"pedestrian\"}, \"target\": [0, 30], "
    "\"behaviors\": {\"seek\": {\"weight\": 1}}, \"spawn\": {\"shape\": \"polygon\", \"points\": [[-5, -5], "
    "[5, -5], [0, "
    "0]], "
    "\"placement\": \"lattice\", \"min_spacing\": 0.5}, \"distributions\": {"
    "\"crowd.preferred_speed\": {\"normal\": {\"mean\": 1.34, \"sd\": 0.26}, \"min\": 0.46, \"max\": 1.61}, "
    "\"vehicle.radius\": {\"uniform\": [0.18, 0.22]}}},"
    "{\"count\": 60, \"crowd\": {\"preset\": \"pedestrian\"}, \"target\": [0, -30], "
    "\"behaviors\": {\"seek\": {\"weight\": 1}}, \"spawn\": {\"shape\": \"box\", \"center\": [0, 3], "
    "\"size\": [10, 4], "
    "\"min_spacing\": 0.6}, \"distributions\": {\"vehicle.max_speed\": {\"uniform\": [1.5, 2.5]}}}]}";

static uint64_t hash_after(const shoal_scenario_t* s, int steps)
{
    shoal_world_t* w = populated(s);
    for (int i = 0; i < steps; i++) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

Test(scenario_population, same_file_same_state_hash_other_seed_another)
{
    shoal_scenario_t* s = load_text(POPULATION);
    shoal_scenario_t* t = load_text(POPULATION);
    uint64_t a = hash_after(s, 0), b = hash_after(t, 0);
    cr_expect_eq(a, b);
    cr_expect_eq(hash_after(s, 20), hash_after(t, 20));
    shoal_scenario_set_seed(t, 22);
    cr_expect_neq(hash_after(t, 0), a, "another seed draws other values");
    shoal_scenario_destroy(s);
    shoal_scenario_destroy(t);
}

/* ---- errors ---- */

#define GROUP(spawn_and_more) "{\"groups\": [{\"count\": 4" spawn_and_more "}]}"

Test(scenario_population, bad_spawn_keys_name_what_where_and_what_is_expected)
{
    expect_error(GROUP(", \"spawn\": {\"shape\": \"polygon\"}"),
                 "missing required key 'groups[0].spawn.points'");
    expect_error(GROUP(", \"spawn\": {\"shape\": \"polygon\", \"points\": [[0, 0], [1, 0]]}"),
                 "groups[0].spawn.points: expected an array of 3 to 64 points [x, y], got 2 points");
    expect_error(GROUP(", \"spawn\": {\"shape\": \"polygon\", \"points\": [[0, 0], [1, 0], [2, 0]]}"),
                 "groups[0].spawn.points: the polygon has no area");
    expect_error(GROUP(", \"spawn\": {\"shape\": \"polygon\", \"points\": [[0, 0], [2, 2], [2, 0], [0, 1]]}"),
                 "groups[0].spawn.points: edges 0-1 and 2-3 meet: a spawn polygon must be simple");
    expect_error(GROUP(", \"spawn\": {\"shape\": \"polygon\", \"points\": [[0, 0], [1, 0], [\"a\", 1]]}"),
                 "groups[0].spawn.points[2][0]: expected a number");
    expect_error(
        GROUP(", \"spawn\": {\"shape\": \"polygon\", \"center\": [1, 1], \"points\": [[0, 0], [1, 0], "
              "[0, 1]]}"),
        "groups[0].spawn.center: not used with shape \"polygon\"");
    expect_error(GROUP(", \"spawn\": {\"points\": [[0, 0], [1, 0], [0, 1]]}"),
                 "groups[0].spawn.points: only used with \"shape\": \"polygon\"");
    expect_error(
        GROUP(", \"spawn\": {\"placement\": \"lattice\"}"),
        "missing required key 'groups[0].spawn.min_spacing' (a lattice's points are min_spacing apart)");
    expect_error(GROUP(", \"spawn\": {\"placement\": \"grid\"}"),
                 "groups[0].spawn.placement: expected one of \"random\", \"lattice\", \"square_lattice\"");
    expect_error(
        GROUP(", \"spawn\": {\"shape\": \"ring\", \"placement\": \"lattice\", \"min_spacing\": 1}"),
        "groups[0].spawn.placement: \"lattice\" fills an area: shape must be disc, box or polygon, got ring");
    expect_error(GROUP(", \"spawn\": {\"shape\": \"point\", \"min_spacing\": 1}"),
                 "groups[0].spawn.min_spacing: needs room between agents");
    expect_error(GROUP(", \"spawn\": {\"min_spacing\": 0}"), "groups[0].spawn.min_spacing: must be > 0");
    expect_error("{\"dimensions\": 3, \"groups\": [{\"count\": 4, \"spawn\": {\"min_spacing\": 1}}]}",
                 "groups[0].spawn.min_spacing: placement rules are only allowed in 2D scenarios");
    expect_error("{\"dimensions\": 3, \"groups\": [{\"count\": 4, \"spawn\": {\"shape\": \"polygon\"}}]}",
                 "groups[0].spawn.shape: a polygon is only allowed in 2D scenarios");
    expect_error(
        "{\"world\": {\"wrap\": true, \"bounds_min\": [0, 0], \"bounds_max\": [5, 5]}, "
        "\"groups\": [{\"count\": 4, \"spawn\": {\"shape\": \"polygon\", \"points\": " L_POINTS "}}]}",
        "groups[0].spawn: group 'group0' spawns agents at x from 0 to 10, outside the wrapped world box");
}

Test(scenario_population, bad_distributions_name_what_where_and_what_is_expected)
{
#define CROWD ", \"crowd\": {}, \"distributions\": "
    expect_error(
        GROUP(CROWD "{\"crowd.prefered_speed\": {\"uniform\": [1, 2]}}"),
        "unknown key 'groups[0].distributions.crowd.prefered_speed'; did you mean 'crowd.preferred_speed'?");
    expect_error(GROUP(", \"distributions\": {\"crowd.time_gap\": {\"uniform\": [1, 2]}}"),
                 "groups[0].distributions.crowd.time_gap: the group has no \"crowd\" object to draw it for");
    expect_error(GROUP(CROWD "{\"vehicle.radius\": 0.2}"),
                 "groups[0].distributions.vehicle.radius: expected an object {\"normal\": ...}");
    expect_error(GROUP(CROWD "{\"vehicle.radius\": {\"uniform\": [0.1, 0.2], \"table\": [[0.2, 1]]}}"),
                 "groups[0].distributions.vehicle.radius: expected exactly one of \"normal\", \"uniform\" or "
                 "\"table\", got 2");
    expect_error(GROUP(CROWD "{\"vehicle.radius\": {\"uniform\": [0.1, 0.2], \"max\": 1}}"),
                 "groups[0].distributions.vehicle.radius.max: only used with \"normal\"");
    expect_error(GROUP(CROWD "{\"vehicle.radius\": {\"uniform\": [0.3, 0.2]}}"),
                 "groups[0].distributions.vehicle.radius.uniform[1]: must be >= lo (0.3), got 0.2");
    expect_error(GROUP(CROWD "{\"vehicle.radius\": {\"uniform\": [-0.1, 0.2]}}"),
                 "groups[0].distributions.vehicle.radius.uniform[0]: must be >= 0");
    expect_error(GROUP(CROWD "{\"vehicle.radius\": {\"uniform\": [0, 0.2]}}"),
                 "groups[0].distributions.vehicle.radius: a crowd agent needs a radius > 0, and this draws "
                 "down to 0");
    expect_error(GROUP(CROWD "{\"vehicle.max_speed\": {\"normal\": {\"mean\": 1}}}"),
                 "missing required key 'groups[0].distributions.vehicle.max_speed.normal.sd'");
    expect_error(GROUP(CROWD "{\"vehicle.max_speed\": {\"normal\": {\"mean\": 1, \"sd\": 0}}}"),
                 "groups[0].distributions.vehicle.max_speed.normal.sd: must be > 0");
    expect_error(GROUP(CROWD "{\"vehicle.max_speed\": {\"normal\": {\"mean\": 1, \"sd\": 1}, \"min\": 2, "
                             "\"max\": 1}}"),
                 "groups[0].distributions.vehicle.max_speed.max: must be > min (2), got 1");
    expect_error(
        GROUP(CROWD "{\"crowd.preferred_speed\": {\"normal\": {\"mean\": 1, \"sd\": 0.1}, \"min\": 3}}"),
        "groups[0].distributions.crowd.preferred_speed: min 3 to max inf holds almost none of "
        "normal(mean 1, sd 0.1)");
    expect_error(GROUP(CROWD "{\"crowd.time_gap\": {\"table\": []}}"),
                 "groups[0].distributions.crowd.time_gap.table: expected an array of 1 to 64 pairs [value, "
                 "weight]");
    expect_error(GROUP(CROWD "{\"crowd.time_gap\": {\"table\": [[0.5, 0], [1, 0]]}}"),
                 "groups[0].distributions.crowd.time_gap.table: the weights must not all be 0");
    expect_error(GROUP(CROWD "{\"crowd.time_gap\": {\"table\": [[0.5, 1], [1]]}}"),
                 "groups[0].distributions.crowd.time_gap.table[1]: expected a pair [value, weight]");
    expect_error(
        GROUP(", \"spawn\": {\"speed\": 1}, \"distributions\": {\"vehicle.max_speed\": {\"normal\": "
              "{\"mean\": 2, \"sd\": 0.5}}}"),
        "groups[0].distributions.vehicle.max_speed: draws down to 0, below spawn.speed (1): give it a min");
#undef CROWD
}

Test(scenario_population, a_group_that_does_not_fit_leaves_the_world_as_it_was)
{
    shoal_scenario_t* s = load_text("{\"groups\": ["
                                    "{\"count\": 50, \"spawn\": {\"shape\": \"box\", \"size\": [20, 20], "
                                    "\"min_spacing\": 1}},"
                                    "{\"name\": \"packed\", \"count\": 500, \"spawn\": {\"shape\": \"box\", "
                                    "\"center\": [40, 0], \"size\": [10, 10], \"min_spacing\": 0.5}}]}");
    shoal_world_t* w = serial_world(s);
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_agent_t mine;
    cr_assert_eq(shoal_agent_add(w, &d, &mine), SHOAL_OK);
    uint64_t before = shoal_world_state_hash(w);
    cr_expect_eq(shoal_scenario_populate(s, w), SHOAL_ERR_CAPACITY);
    const char* msg = shoal_world_last_error(w);
    cr_expect_not_null(strstr(msg, "group 'packed' (groups[1]): placed "), "%s", msg);
    cr_expect_not_null(strstr(msg, "of 500 agents in its spawn area (100 m^2) at min_spacing 0.5 m"), "%s",
                       msg);
    cr_expect_eq(shoal_world_agent_count(w), 1);
    cr_expect_eq(shoal_world_state_hash(w), before);
    cr_expect(shoal_agent_is_valid(w, mine));

    /* More than any packing holds: refused before drawing. */
    shoal_scenario_t* t =
        load_text("{\"groups\": [{\"name\": \"packed\", \"count\": 1000, \"spawn\": {\"shape\": "
                  "\"disc\", \"radius\": 5, \"min_spacing\": 0.5}}]}");
    cr_expect_eq(shoal_scenario_populate(t, w), SHOAL_ERR_CAPACITY);
    msg = shoal_world_last_error(w);
    cr_expect_not_null(
        strstr(msg, "group 'packed' (groups[0]): 1000 agents cannot fit its spawn area (78.5398 m^2) "
                    "at min_spacing 0.5 m however placed"),
        "%s", msg);
    cr_expect_eq(shoal_world_state_hash(w), before);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
    shoal_scenario_destroy(t);
}

Test(scenario_population, a_polygons_center_is_its_centroid_for_inward_and_antipode)
{
    /* A rectangle from (0, 0) to (4, 2): centroid (2, 1). */
    shoal_scenario_t* s =
        load_text("{\"groups\": [{\"count\": 50, \"target\": \"antipode\", \"spawn\": {\"shape\": "
                  "\"polygon\", \"points\": [[0, 0], [4, 0], [4, 2], [0, 2]], \"heading\": "
                  "\"inward\", \"min_spacing\": 0.2}}]}");
    shoal_world_t* w = populated(s);
    agents_t a = read_agents(w);
    for (int32_t i = 0; i < a.count; i++) {
        shoal_agent_def_t def;
        cr_assert_eq(shoal_agent_get_def(w, a.ids[i], &def), SHOAL_OK);
        double x = def.position[0], y = def.position[1];
        cr_expect_float_eq(def.target[0], 4.0 - x, 1e-5);
        cr_expect_float_eq(def.target[1], 2.0 - y, 1e-5);
        double want = atan2(1.0 - y, 2.0 - x), d = fabs(remainder(def.heading - want, 2.0 * PI_));
        cr_expect_leq(d, 1e-4, "agent at (%g, %g) heads %g, not at the centroid (%g)", x, y,
                      (double)def.heading, want);
    }
    agents_free(&a);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);
}
