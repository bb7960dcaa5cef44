/* `shoal validate rimea`: the pedestrian model (the `pedestrian` crowd
 * preset walking navigation fields, shoal/nav.h) on the test cases of the
 * RiMEA guideline ("Richtlinie für Mikroskopische Entfluchtungsanalysen",
 * version 3.0 and 4.1.1, Annex 1) that a 2D simulator can run, each with
 * the guideline's pass criterion, and on measured crowds (single file,
 * bottlenecks). Geometries follow the guideline's figures as JuPedSim's
 * encodings of them give them in metres (docs/rimea.md says where each
 * comes from); every test with a crowd runs on several seeds from random
 * starts (positions drawn with a minimum spacing), the fundamental diagram
 * from a lattice too.
 *
 * The figures are measured, not tuned here: each test builds its world
 * through the public API, steps it, and judges what it measured. The exit
 * status is 1 when a test it ran failed; the tests it cannot run are
 * listed with the reason. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/crowd.h"
#include "shoal/nav.h"
#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"
#include "experiments/rimea/rimea_plot.h"
#include "experiments/crowd/validate.h"

#define RPI 3.14159265358979323846
#define DT 0.05f

typedef struct rimea_opts {
    int json;
    int quick;
    int64_t threads;
    int64_t seeds;
    uint64_t tests;    /* bit n: test n to run; 0: all */
    const char* plots; /* --plots DIR, or NULL */
} rimea_opts_t;

/* What one test measured: pass, and a line of figures for people and a
 * JSON object for programs; with --plots, the tests that are drawn also
 * write what they measured into `plot` (NULL without --plots). */
typedef struct rimea_result {
    int pass;
    char text[512];
    cJSON* json;
    rimea_plot_data_t* plot;
} rimea_result_t;

/* ---- worlds ------------------------------------------------------------------ */

/* The navigation every test uses: congestion-aware fields (density_weight
 * 1, solved again every 20 steps), so that crowds spread over the width of
 * a corridor and over exits as people do; the grid's other parameters as
 * the defaults give them. */
static shoal_nav_params_t rw_nav_params(void)
{
    shoal_nav_params_t np = shoal_nav_params_default();
    np.density_weight = 1.0f;
    np.density_interval = 20;
    return np;
}

static shoal_world_t* rw_world(const rimea_opts_t* o, uint64_t seed)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.thread_count = (int32_t)o->threads;
    def.seed = seed;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    if (shoal_world_create(&def, &w, &err) != SHOAL_OK) {
        cli_error("validate rimea: %s", err.message);
        return NULL;
    }
    shoal_nav_params_t np = rw_nav_params();
    if (shoal_world_set_nav(w, &np) != SHOAL_OK) {
        cli_error("validate rimea: %s", shoal_world_last_error(w));
        shoal_world_destroy(w);
        return NULL;
    }
    return w;
}

/* An open or closed polyline of n points (x, y, x, y, ...). */
static int rw_wall(shoal_world_t* w, const float* xy, int n, int closed)
{
    if (shoal_world_add_wall(w, xy, n, closed, NULL) == SHOAL_OK) return 1;
    cli_error("validate rimea: %s", shoal_world_last_error(w));
    return 0;
}

/* An exit line from (x0, y0) to (x1, y1): agents that reach it leave. */
static int rw_exit(shoal_world_t* w, float x0, float y0, float x1, float y1, int32_t* id)
{
    shoal_nav_goal_t g = {.kind = SHOAL_NAV_LINE, .count = 2, .exit = 1};
    g.points[0][0] = x0;
    g.points[0][1] = y0;
    g.points[1][0] = x1;
    g.points[1][1] = y1;
    if (shoal_world_add_nav_goal(w, &g, id) == SHOAL_OK) return 1;
    cli_error("validate rimea: %s", shoal_world_last_error(w));
    return 0;
}

/* A pedestrian (the preset) navigating to goal. */
static shoal_agent_def_t rw_ped(float x, float y, int32_t goal)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL);
    d.position[0] = x;
    d.position[1] = y;
    d.weights[SHOAL_BEHAVIOR_NAVIGATE] = 1.0f;
    d.nav.goal = goal;
    return d;
}

/* splitmix64: the draws of a test, from its seed and a counter. */
static double rw_uniform(uint64_t* s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double rw_normal(uint64_t* s)
{
    double u = rw_uniform(s), v = rw_uniform(s);
    return sqrt(-2.0 * log(u)) * cos(2.0 * RPI * v);
}

/* A free speed from Weidmann's data: N(1.34, 0.26) m/s cut at two
 * deviations (0.82-1.86), the max speed above it. */
static void rw_free_speed(uint64_t* s, shoal_agent_def_t* d)
{
    double v = 1.34 + 0.26 * fmax(-2.0, fmin(2.0, rw_normal(s)));
    d->crowd.preferred_speed = (float)v;
    d->vehicle.max_speed = fmaxf(d->vehicle.max_speed, (float)v * 1.2f);
}

/* Up to n centers in the box, drawn uniformly at random, none closer than
 * spacing to another (rejection, a bounded number of draws). Returns how
 * many it placed. */
static int rw_scatter(uint64_t* s, float x0, float y0, float x1, float y1, float spacing, int n, float* xy)
{
    int placed = 0;
    for (long tries = 0; placed < n && tries < 2000L * n; ++tries) {
        float x = (float)(x0 + (x1 - x0) * rw_uniform(s)), y = (float)(y0 + (y1 - y0) * rw_uniform(s));
        int ok = 1;
        for (int k = 0; k < placed && ok; ++k) {
            float dx = xy[2 * k] - x, dy = xy[2 * k + 1] - y;
            ok = dx * dx + dy * dy >= spacing * spacing;
        }
        if (!ok) continue;
        xy[2 * placed] = x;
        xy[2 * placed + 1] = y;
        placed++;
    }
    return placed;
}

/* n centers packed in the box on a hexagonal lattice as wide as lets n fit
 * (at least 0.4 m apart, a pedestrian's width), each nudged by up to 0.01 m
 * from the draws, filled row by row from (x0, y0). Returns how many it
 * placed (n, or fewer when n cannot fit). */
static int rw_pack(uint64_t* s, float x0, float y0, float x1, float y1, int n, float* xy)
{
    double area = (double)(x1 - x0) * (y1 - y0);
    double a = sqrt(2.0 * area / (sqrt(3.0) * n));
    for (; a >= 0.4; a *= 0.98) {
        int placed = 0;
        double dy = a * sqrt(3.0) / 2.0;
        for (int row = 0; placed < n; ++row) {
            double y = y0 + dy * row;
            if (y > y1) break;
            for (int col = 0; placed < n; ++col) {
                double x = x0 + a * (col + 0.5 * (row & 1));
                if (x > x1) break;
                xy[2 * placed] = (float)(x + 0.02 * (rw_uniform(s) - 0.5));
                xy[2 * placed + 1] = (float)(y + 0.02 * (rw_uniform(s) - 0.5));
                placed++;
            }
        }
        if (placed == n) return n;
    }
    cli_error("validate rimea: %d pedestrians do not fit %g m x %g m", n, (double)(x1 - x0),
              (double)(y1 - y0));
    return 0;
}

static int rw_add(shoal_world_t* w, const shoal_agent_def_t* d, shoal_agent_t* id)
{
    if (shoal_agent_add(w, d, id) == SHOAL_OK) return 1;
    cli_error("validate rimea: %s", shoal_world_last_error(w));
    return 0;
}

/* Step until nobody is left or t_max seconds; each agent's last position
 * before it left into last_xy (ids[i]'s), and the time it left into
 * left_at (< 0: still there). Returns the time the last left (t_max + dt
 * when someone is still there), or < 0 on a step failure. */
static double rw_run_out(shoal_world_t* w, const shoal_agent_t* ids, int n, double t_max, float* last_xy,
                         double* left_at)
{
    double t = 0.0;
    for (int i = 0; i < n; ++i) left_at[i] = -1.0;
    int left = 0;
    while (left < n && t < t_max) {
        for (int i = 0; i < n; ++i) {
            if (left_at[i] >= 0.0) continue;
            shoal_agent_state_t st;
            if (shoal_agent_get_state(w, ids[i], &st) != SHOAL_OK) continue;
            last_xy[2 * i] = st.position[0];
            last_xy[2 * i + 1] = st.position[1];
        }
        if (shoal_world_step(w, DT) != SHOAL_OK) {
            cli_error("validate rimea: %s", shoal_world_last_error(w));
            return -1.0;
        }
        t += DT;
        for (int i = 0; i < n; ++i)
            if (left_at[i] < 0.0 && !shoal_agent_is_valid(w, ids[i])) {
                left_at[i] = t;
                left++;
            }
    }
    return left < n ? t_max + DT : t;
}

/* ---- test 1: walking speed in a corridor ------------------------------------- */

/* A 2 m x 40 m corridor; one pedestrian at 1.33 m/s. RiMEA: the time over
 * the 40 m must lie in 26 to 34 s. Run along 0, 45 and 90 degrees. */
static int test1(const rimea_opts_t* o, rimea_result_t* r)
{
    double worst_lo = INFINITY, worst_hi = -INFINITY, times[3];
    for (int k = 0; k < 3; ++k) {
        double a = k * 45.0 * RPI / 180.0, c = cos(a), s = sin(a);
        shoal_world_t* w = rw_world(o, 1);
        if (!w) return 0;
        /* corridor frame: along u = (c, s), across n = (-s, c); walls at 0 and 2 m across */
        int ok = 1;
        for (int side = 0; side <= 1; ++side) {
            float off = 2.0f * (float)side;
            float xy[4] = {(float)(-2 * c - s * off), (float)(-2 * s + c * off), (float)(44 * c - s * off),
                           (float)(44 * s + c * off)};
            ok = ok && rw_wall(w, xy, 2, 0);
        }
        int32_t goal = -1;
        ok = ok && rw_exit(w, (float)(43 * c), (float)(43 * s), (float)(43 * c - 2 * s),
                           (float)(43 * s + 2 * c), &goal);
        shoal_agent_def_t d = rw_ped((float)(-1 * c - s), (float)(-1 * s + c), goal);
        d.crowd.preferred_speed = 1.33f;
        shoal_agent_t id;
        ok = ok && rw_add(w, &d, &id);
        double t0 = -1.0, t1 = -1.0, prev = -1.0, t = 0.0;
        while (ok && t < 60.0 && t1 < 0.0) {
            if (shoal_world_step(w, DT) != SHOAL_OK) break;
            t += DT;
            shoal_agent_state_t st;
            if (shoal_agent_get_state(w, id, &st) != SHOAL_OK) break;
            double along = st.position[0] * c + st.position[1] * s;
            if (t0 < 0.0 && along >= 0.0) t0 = t - DT + DT * (0.0 - prev) / (along - prev);
            if (along >= 40.0) t1 = t - DT + DT * (40.0 - prev) / (along - prev);
            prev = along;
        }
        shoal_world_destroy(w);
        if (!ok) return 0;
        times[k] = t0 >= 0.0 && t1 >= 0.0 ? t1 - t0 : INFINITY;
        worst_lo = fmin(worst_lo, times[k]);
        worst_hi = fmax(worst_hi, times[k]);
    }
    r->pass = worst_lo >= 26.0 && worst_hi <= 34.0;
    snprintf(r->text, sizeof r->text,
             "40 m in %.2f, %.2f, %.2f s along 0, 45, 90 degrees (required: 26 to 34 s)", times[0], times[1],
             times[2]);
    cJSON_AddItemToObject(r->json, "seconds", cJSON_CreateDoubleArray(times, 3));
    return 1;
}

/* ---- tests 2 and 3: walking speed up and down stairs ---------------------------- */

/* A zone of walking speed (shoal/nav.h) along a flight of stairs. */
static int rw_zone(shoal_world_t* w, float x0, float y0, float x1, float y1, float factor)
{
    shoal_nav_zone_t z = shoal_nav_zone_default();
    z.count = 4;
    z.speed_factor = factor;
    const float p[4][2] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
    memcpy(z.points, p, sizeof p);
    if (shoal_world_add_nav_zone(w, &z, NULL) == SHOAL_OK) return 1;
    cli_error("validate rimea: %s", shoal_world_last_error(w));
    return 0;
}

/* Test 1's bounds on its 30.08 s (40 m at 1.33 m/s) as fractions of the
 * time a walker should take: 26/30.08 and 34/30.08. */
#define RW_T1_LO (26.0 / (40.0 / 1.33))
#define RW_T1_HI (34.0 / (40.0 / 1.33))

/* A flight of stairs 2 m wide and 10 m long along the slope, as a speed
 * zone in a closed corridor (x -2 to 16): one pedestrian walking at 1.33 m/s on
 * the level and v_stair on the stairs (the zone's factor v_stair / 1.33).
 * RiMEA: as test 1, with the route, time and speed adjusted; judged with
 * test 1's tolerance on the time over the 10 m, 10 / v_stair. Run along x
 * and along y. */
static int stairs(const rimea_opts_t* o, rimea_result_t* r, double v_stair)
{
    double times[2], want = 10.0 / v_stair;
    for (int k = 0; k < 2; ++k) {
        shoal_world_t* w = rw_world(o, 1);
        if (!w) return 0;
            /* (along, across) to (x, y): along x, or along y */
#define RW_P(u, v) (k ? -(float)(v) : (float)(u)), (k ? (float)(u) : (float)(v))
        /* closed: round its outside is no way to the exit */
        const float box[8] = {RW_P(-2, 0), RW_P(16, 0), RW_P(16, 2), RW_P(-2, 2)};
        const float z0[2] = {RW_P(0, 0)}, z1[2] = {RW_P(10, 2)};
        int32_t goal = -1;
        int ok = rw_wall(w, box, 4, 1) &&
                 rw_zone(w, fminf(z0[0], z1[0]), fminf(z0[1], z1[1]), fmaxf(z0[0], z1[0]),
                         fmaxf(z0[1], z1[1]), (float)(v_stair / 1.33)) &&
                 rw_exit(w, RW_P(15, 0), RW_P(15, 2), &goal);
        const float start[2] = {RW_P(-1.5, 1)};
#undef RW_P
        shoal_agent_def_t d = rw_ped(start[0], start[1], goal);
        d.crowd.preferred_speed = 1.33f;
        shoal_agent_t id;
        ok = ok && rw_add(w, &d, &id);
        double t0 = -1.0, t1 = -1.0, prev = -1.5, t = 0.0;
        while (ok && t < 80.0 && t1 < 0.0) {
            if (shoal_world_step(w, DT) != SHOAL_OK) break;
            t += DT;
            shoal_agent_state_t st;
            if (shoal_agent_get_state(w, id, &st) != SHOAL_OK) break;
            double along = k ? st.position[1] : st.position[0];
            if (t0 < 0.0 && along >= 0.0) t0 = t - DT + DT * (0.0 - prev) / (along - prev);
            if (along >= 10.0) t1 = t - DT + DT * (10.0 - prev) / (along - prev);
            prev = along;
        }
        shoal_world_destroy(w);
        if (!ok) return 0;
        times[k] = t0 >= 0.0 && t1 >= 0.0 ? t1 - t0 : INFINITY;
    }
    double lo = RW_T1_LO * want, hi = RW_T1_HI * want;
    r->pass = times[0] >= lo && times[0] <= hi && times[1] >= lo && times[1] <= hi;
    snprintf(r->text, sizeof r->text,
             "10 m of stairs set to %.2f m/s (from 1.33 on the level): %.2f and %.2f s along x and y "
             "(required, with test 1's tolerance: %.1f to %.1f s)",
             v_stair, times[0], times[1], lo, hi);
    cJSON_AddItemToObject(r->json, "seconds", cJSON_CreateDoubleArray(times, 2));
    cJSON_AddNumberToObject(r->json, "stair_speed", v_stair);
    return 1;
}

/* Up: 0.63 m/s, Predtechenskii and Milinskii's speed up stairs as
 * Burghardt et al. (2014) list it. Down: 1.08 m/s, the SFPE hydraulic
 * model's speed constant k of its example stair (Gwynne and Rosenbaum,
 * "Employing the Hydraulic Model in Assessing Emergency Movement"). The
 * guideline leaves both speeds to the user. */
static int test2(const rimea_opts_t* o, rimea_result_t* r) { return stairs(o, r, 0.63); }
static int test3(const rimea_opts_t* o, rimea_result_t* r) { return stairs(o, r, 1.08); }

/* ---- test 4: the fundamental diagram ------------------------------------------ */

/* A periodic corridor (a torus box) of 26 m x 2 m between walls, the
 * densities 0.5 to 5 per m^2, everyone bound the same way with free speeds
 * as Weidmann's (1.34 +- 0.26 m/s, cut at two deviations), from random
 * and lattice starts; the mean speed of everyone, sampled every 0.5 s
 * after 20 s, over 40 s (the density in a measuring area of 2 m x 1 m in
 * the middle is reported beside it), against Weidmann's curve at the
 * corridor's density: within 0.15 m/s up to 3 per m^2, 0.2 m/s past it.
 * And single file: a ring of 26 m between walls 0.5 m apart, 14 to 45
 * walkers: the fit of 1/rho = a + b v must give a in 0.3-0.45 m and b in
 * 0.9-1.3 s (measured single-file data: a about 0.36 m, b 1.06-1.13 s). */
static double fd_run(const rimea_opts_t* o, uint64_t seed, double rho, int lattice, float width, int single,
                     double* local_rho)
{
    const float L = 26.0f;
    *local_rho = NAN;
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.thread_count = (int32_t)o->threads;
    def.seed = seed;
    def.wrap = 1;
    def.bounds_min[0] = 0.0f;
    def.bounds_min[1] = -1.0f;
    def.bounds_max[0] = L;
    def.bounds_max[1] = width + 1.0f;
    shoal_world_t* w = NULL;
    if (shoal_world_create(&def, &w, NULL) != SHOAL_OK) return NAN;
    const float lo[4] = {0.0f, 0.0f, L, 0.0f}, hi[4] = {0.0f, width, L, width};
    if (!rw_wall(w, lo, 2, 0) || !rw_wall(w, hi, 2, 0)) {
        shoal_world_destroy(w);
        return NAN;
    }
    int n = single ? (int)lround(rho) : (int)lround(rho * L * width);
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + (uint64_t)n;
    const float r = 0.2f;
    int cols = 1, rows = 1;
    if (!single && lattice) {
        rows = (int)floor((width - 2 * r - 0.02f) / sqrt(1.0 / rho)) + 1;
        cols = (n + rows - 1) / rows;
    }
    for (int i = 0; i < n; ++i) {
        float x, y;
        if (single) {
            x = (float)((i + 0.3 * rw_uniform(&s)) * L / n);
            y = 0.5f * width;
        } else if (lattice) {
            int row = i % rows, col = i / rows;
            x = (float)((col + 0.5 * (row & 1)) * L / cols);
            y = rows > 1 ? r + 0.01f + (width - 2 * r - 0.02f) * (float)row / (float)(rows - 1)
                         : 0.5f * width;
        } else {
            x = (float)(L * rw_uniform(&s));
            y = (float)(r + 0.01 + (width - 2 * r - 0.02) * rw_uniform(&s));
        }
        if (x >= L) x -= L;
        shoal_agent_def_t d = shoal_agent_default_def();
        shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL);
        d.position[0] = x;
        d.position[1] = y;
        d.weights[SHOAL_BEHAVIOR_FLEE] = 1.0f; /* bound along +x for ever */
        d.threat[0] = -1e7f;
        d.threat[1] = y;
        double g = rw_normal(&s);
        g = g > 2.0 ? 2.0 : g < -2.0 ? -2.0 : g;
        if (!single) d.crowd.preferred_speed = (float)(WEIDMANN_V0 + 0.26 * g);
        if (!rw_add(w, &d, NULL)) {
            shoal_world_destroy(w);
            return NAN;
        }
    }
    float* pos = malloc(sizeof(float) * 3 * (size_t)n);
    float* vel = malloc(sizeof(float) * 3 * (size_t)n);
    double speed_sum = 0.0, rho_sum = 0.0;
    long speed_n = 0, samples = 0;
    const int warm = (int)(20.0 / DT), total = (int)((o->quick ? 30.0 : 60.0) / DT), every = (int)(0.5 / DT);
    for (int k = 1; pos && vel && k <= total; ++k) {
        if (shoal_world_step(w, DT) != SHOAL_OK) break;
        if (k <= warm || k % every) continue;
        shoal_agent_batch_t b = {.positions = pos, .velocities = vel};
        int32_t got = 0;
        shoal_world_read_agents(w, &b, n, &got);
        int inside = 0;
        for (int i = 0; i < got; ++i) {
            speed_sum += vel[3 * i];
            speed_n++;
            inside += !single && pos[3 * i] >= 12.0f && pos[3 * i] < 14.0f &&
                      fabsf(pos[3 * i + 1] - 0.5f * width) < 0.5f;
        }
        rho_sum += single ? (double)got / L : inside / 2.0;
        samples++;
    }
    free(pos);
    free(vel);
    shoal_world_destroy(w);
    *local_rho = samples ? rho_sum / samples : NAN;
    return speed_n ? speed_sum / speed_n : NAN;
}

static int test4(const rimea_opts_t* o, rimea_result_t* r)
{
    const double all_rho[6] = {0.5, 1.0, 2.0, 3.0, 4.0, 5.0}, quick_rho[3] = {0.5, 2.0, 4.0};
    const double* rhos = o->quick ? quick_rho : all_rho;
    const int nr = o->quick ? 3 : 6;
    double worst = 0.0;
    int pass = 1;
    rimea_plot_data_t* pd = r->plot;
    if (pd) {
        pd->fd_count = 0;
        pd->fd_warm_s = 20.0;
        pd->fd_measure_s = o->quick ? 10.0 : 40.0;
    }
    cJSON* pts = cJSON_AddArrayToObject(r->json, "fundamental");
    for (int k = 0; k < nr; ++k)
        for (int lattice = 0; lattice <= 1; ++lattice)
            for (int64_t seed = 1; seed <= o->seeds; ++seed) {
                double local = NAN, v = fd_run(o, (uint64_t)seed, rhos[k], lattice, 2.0f, 0, &local);
                double dev = v - validate_weidmann(rhos[k]), band = rhos[k] <= 3.05 ? 0.15 : 0.2;
                pass &= fabs(dev) <= band;
                if (fabs(dev) > fabs(worst)) worst = dev;
                cJSON* e = cJSON_CreateObject();
                cJSON_AddNumberToObject(e, "density", rhos[k]);
                cJSON_AddStringToObject(e, "start", lattice ? "lattice" : "random");
                cJSON_AddNumberToObject(e, "seed", (double)seed);
                cJSON_AddNumberToObject(e, "speed", v);
                cJSON_AddNumberToObject(e, "area_density", local);
                cJSON_AddNumberToObject(e, "weidmann", validate_weidmann(rhos[k]));
                cJSON_AddItemToArray(pts, e);
                if (pd && pd->fd_count < RIMEA_PLOT_FD_MAX) {
                    pd->fd_density[pd->fd_count] = rhos[k];
                    pd->fd_speed[pd->fd_count] = v;
                    pd->fd_lattice[pd->fd_count++] = (unsigned char)lattice;
                }
            }
    /* single file */
    const int counts[4] = {14, 25, 34, 45};
    double a_lo = INFINITY, a_hi = -INFINITY, b_lo = INFINITY, b_hi = -INFINITY;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int c = 0; c < 4; ++c) {
            double line = NAN, v = fd_run(o, (uint64_t)seed, counts[c], 0, 0.5f, 1, &line);
            if (pd) {
                pd->sf_walkers[c] = counts[c];
                pd->sf_speed[seed - 1][c] = v;
                pd->sf_density[seed - 1][c] = line;
            }
            sx += v;
            sy += 1.0 / line;
            sxx += v * v;
            sxy += v / line;
        }
        double b = (4 * sxy - sx * sy) / (4 * sxx - sx * sx), a = (sy - b * sx) / 4;
        if (pd) {
            pd->sf_a[seed - 1] = a;
            pd->sf_b[seed - 1] = b;
        }
        a_lo = fmin(a_lo, a);
        a_hi = fmax(a_hi, a);
        b_lo = fmin(b_lo, b);
        b_hi = fmax(b_hi, b);
    }
    pass &= a_lo >= 0.3 && a_hi <= 0.45 && b_lo >= 0.9 && b_hi <= 1.3;
    cJSON* sf = cJSON_AddObjectToObject(r->json, "single_file");
    cJSON_AddNumberToObject(sf, "a_min", a_lo);
    cJSON_AddNumberToObject(sf, "a_max", a_hi);
    cJSON_AddNumberToObject(sf, "b_min", b_lo);
    cJSON_AddNumberToObject(sf, "b_max", b_hi);
    if (pd) pd->ran |= RIMEA_PLOT_TEST4;
    r->pass = pass;
    snprintf(r->text, sizeof r->text,
             "2D: largest deviation from Weidmann %+.3f m/s (required: 0.15 up to 3 /m2, 0.2 past it; random "
             "and lattice starts); single file: a %.2f-%.2f m, b %.2f-%.2f s (required: 0.3-0.45, 0.9-1.3)",
             worst, a_lo, a_hi, b_lo, b_hi);
    return 1;
}

/* ---- test 5: premovement time ------------------------------------------------------ */

/* A room of 8 m x 5 m with a 1 m exit in the middle of a 5 m wall; 10
 * pedestrians at random places, with premovement times of 10, 20, ...,
 * 100 s in a random order (nav.start_delay). RiMEA: each starts at its
 * time; judged as JuPedSim: within 0.25 s (two frames at 8 per second) of
 * it, and all leave. A walker needs under 8 s to the exit, so none is in
 * another's way when that one starts. */
static int test5(const rimea_opts_t* o, rimea_result_t* r)
{
    int pass = 1;
    double worst = 0.0, last_out = 0.0, strayed = 0.0;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        shoal_world_t* w = rw_world(o, (uint64_t)seed);
        if (!w) return 0;
        const float room[12] = {8, 3, 8, 5, 0, 5, 0, 0, 8, 0, 8, 2};
        int32_t goal;
        int ok = rw_wall(w, room, 6, 0) && rw_exit(w, 8.5f, 2.0f, 8.5f, 3.0f, &goal);
        enum { N = 10 };
        uint64_t s = (uint64_t)seed * 104729u;
        float xy[2 * N];
        ok = ok && rw_scatter(&s, 0.5f, 0.5f, 7.5f, 4.5f, 0.8f, N, xy) == N;
        double delay[N];
        for (int i = 0; i < N; ++i) delay[i] = 10.0 * (i + 1);
        for (int i = N - 1; i > 0; --i) { /* Fisher-Yates */
            int j = (int)(rw_uniform(&s) * (i + 1));
            double x = delay[i];
            delay[i] = delay[j];
            delay[j] = x;
        }
        shoal_agent_t ids[N];
        for (int i = 0; ok && i < N; ++i) {
            shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], goal);
            d.nav.start_delay = (float)delay[i];
            ok = rw_add(w, &d, &ids[i]);
        }
        /* A walker has started at the end of the first step after which it
         * walks at 0.5 m/s or more: one still standing may step aside for
         * another passing (it still avoids), which is not a start, and is
         * judged by how far it strays */
        double started[N], t = 0.0;
        int gone = 0, out[N] = {0};
        for (int i = 0; i < N; ++i) started[i] = -1.0;
        while (ok && gone < N && t < 130.0) {
            if (shoal_world_step(w, DT) != SHOAL_OK) break;
            t += DT;
            for (int i = 0; i < N; ++i) {
                if (out[i]) continue;
                shoal_agent_state_t st;
                if (shoal_agent_get_state(w, ids[i], &st) != SHOAL_OK) {
                    out[i] = 1;
                    gone++;
                    continue;
                }
                if (started[i] < 0.0 && hypotf(st.velocity[0], st.velocity[1]) >= 0.5f) started[i] = t;
                if (started[i] < 0.0)
                    strayed =
                        fmax(strayed, hypot(st.position[0] - xy[2 * i], st.position[1] - xy[2 * i + 1]));
            }
        }
        shoal_world_destroy(w);
        if (!ok) return 0;
        for (int i = 0; i < N; ++i) {
            double err = started[i] < 0.0 ? INFINITY : fabs(started[i] - delay[i]);
            worst = fmax(worst, err);
            if (r->plot) {
                r->plot->pm_delay[seed - 1][i] = delay[i];
                r->plot->pm_started[seed - 1][i] = started[i];
            }
        }
        pass &= gone == N;
        last_out = fmax(last_out, t);
    }
    if (r->plot) r->plot->ran |= RIMEA_PLOT_TEST5;
    r->pass = pass && worst <= 0.25 && strayed <= 0.5;
    snprintf(r->text, sizeof r->text,
             "10 with premovement times 10, 20, ..., 100 s on %d seed%s: each started within %.2f s of its "
             "time, none strayed more than %.2f m before it, the last out at %.1f s (required: within 0.25 "
             "s, stepping aside at most 0.5 m, and all out)",
             (int)o->seeds, o->seeds == 1 ? "" : "s", worst, strayed, last_out);
    cJSON_AddNumberToObject(r->json, "start_error_s_max", worst);
    cJSON_AddNumberToObject(r->json, "strayed_m_max", strayed);
    cJSON_AddNumberToObject(r->json, "last_out_s", last_out);
    return 1;
}

/* ---- test 6: movement around a corner ------------------------------------------ */

/* A left-turning corner: a horizontal arm x 0-12, y 0-2 and a vertical arm
 * x 10-12, y 2-12, the exit across its top; 20 pedestrians start in x <= 6.
 * RiMEA: they go round without passing through walls: no center ever
 * inside the inner block [0, 10] x [2, 12], and all leave. */
static int test6(const rimea_opts_t* o, rimea_result_t* r)
{
    int pass = 1, worst_left = 20;
    double worst_t = 0.0;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        shoal_world_t* w = rw_world(o, (uint64_t)seed);
        if (!w) return 0;
        const float outer[8] = {0, 2, 0, 0, 12, 0, 12, 12.5f}, inner[6] = {0, 2, 10, 2, 10, 12.5f};
        int32_t goal;
        int ok = rw_wall(w, outer, 4, 0) && rw_wall(w, inner, 3, 0) && rw_exit(w, 10, 12, 12, 12, &goal);
        uint64_t s = (uint64_t)seed * 7919u;
        float xy[40];
        ok = ok && rw_scatter(&s, 0.3f, 0.3f, 6.0f, 1.7f, 0.45f, 20, xy) == 20;
        shoal_agent_t ids[20];
        for (int i = 0; ok && i < 20; ++i) {
            shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], goal);
            ok = rw_add(w, &d, &ids[i]);
        }
        int inside = 0, left = 0;
        double t = 0.0;
        while (ok && left < 20 && t < 120.0) {
            if (shoal_world_step(w, DT) != SHOAL_OK) break;
            t += DT;
            left = 0;
            for (int i = 0; i < 20; ++i) {
                shoal_agent_state_t st;
                if (shoal_agent_get_state(w, ids[i], &st) != SHOAL_OK) {
                    left++;
                    continue;
                }
                float x = st.position[0], y = st.position[1];
                inside += x > 0.0f && x < 10.0f && y > 2.0f && y < 12.0f;
            }
        }
        shoal_world_destroy(w);
        if (!ok) return 0;
        pass &= inside == 0 && left == 20;
        worst_left = left < worst_left ? left : worst_left;
        worst_t = fmax(worst_t, t);
        if (inside) worst_left = -inside;
    }
    r->pass = pass;
    snprintf(
        r->text, sizeof r->text,
        "20 round the corner on %d seed%s: %s, the last out by %.1f s; no position inside the walls' block "
        "(required: none, and all out)",
        (int)o->seeds, o->seeds == 1 ? "" : "s",
        worst_left == 20 ? "all out" : "not all out or inside a wall", worst_t);
    cJSON_AddNumberToObject(r->json, "last_out_s", worst_t);
    cJSON_AddBoolToObject(r->json, "all_out_no_wall", worst_left == 20);
    return 1;
}

/* ---- test 7: demographic parameters ----------------------------------------------- */

/* 50 adults whose free speeds follow RiMEA's table after Weidmann: under
 * 30 years 0.58-1.61 m/s, 30-50 years 1.41-1.54, over 50 0.68-1.41, limited
 * mobility 0.46-0.76; drawn as normals at each range's middle with standard
 * deviations 0.2, 0.02, 0.13 and 0.05 (JuPedSim's encoding), cut to the
 * range. Walking alone down a wide hall, each must walk at its drawn speed
 * (within 2 %) and within its group's range. */
static int test7(const rimea_opts_t* o, rimea_result_t* r)
{
    static const double lo[4] = {0.58, 1.41, 0.68, 0.46}, hi[4] = {1.61, 1.54, 1.41, 0.76},
                        sd[4] = {0.2, 0.02, 0.13, 0.05};
    static const int count[4] = {20, 15, 10, 5};
    int pass = 1;
    double worst = 0.0, vmin = INFINITY, vmax = 0.0;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        shoal_world_t* w = rw_world(o, (uint64_t)seed);
        if (!w) return 0;
        int32_t goal;
        int ok = rw_exit(w, 40.0f, -1.0f, 40.0f, 51.0f, &goal);
        uint64_t s = (uint64_t)seed * 104729u;
        shoal_agent_t ids[50];
        double want[50];
        int grp[50], n = 0;
        for (int g = 0; ok && g < 4; ++g)
            for (int k = 0; ok && k < count[g]; ++k, ++n) {
                double v;
                do v = 0.5 * (lo[g] + hi[g]) + sd[g] * rw_normal(&s);
                while (v < lo[g] || v > hi[g]);
                shoal_agent_def_t d = rw_ped(0.0f, 1.0f * (float)n, goal); /* a row 1 m apart */
                d.crowd.preferred_speed = (float)v;
                want[n] = v;
                grp[n] = g;
                ok = rw_add(w, &d, &ids[n]);
            }
        /* each one's speed over 10 m to 30 m */
        double t10[50], t30[50], t = 0.0;
        for (int i = 0; i < 50; ++i) t10[i] = t30[i] = -1.0;
        while (ok && t < 120.0) {
            if (shoal_world_step(w, DT) != SHOAL_OK) break;
            t += DT;
            int done = 1;
            for (int i = 0; i < 50; ++i) {
                shoal_agent_state_t st;
                if (shoal_agent_get_state(w, ids[i], &st) != SHOAL_OK) continue;
                if (t10[i] < 0.0 && st.position[0] >= 10.0f) t10[i] = t;
                if (t30[i] < 0.0 && st.position[0] >= 30.0f) t30[i] = t;
                done &= t30[i] >= 0.0;
            }
            if (done) break;
        }
        shoal_world_destroy(w);
        if (!ok) return 0;
        for (int i = 0; i < 50; ++i) {
            double v = t30[i] > t10[i] && t10[i] >= 0.0 ? 20.0 / (t30[i] - t10[i]) : 0.0;
            double rel = v / want[i] - 1.0;
            worst = fabs(rel) > fabs(worst) ? rel : worst;
            vmin = fmin(vmin, v);
            vmax = fmax(vmax, v);
            /* the range with the 2 % the timing to a step allows */
            pass &= fabs(rel) <= 0.02 && v >= lo[grp[i]] * 0.98 && v <= hi[grp[i]] * 1.02;
        }
    }
    r->pass = pass;
    snprintf(r->text, sizeof r->text,
             "50 adults by age on %d seed%s: walked %.2f-%.2f m/s, at most %+.1f %% off the drawn speed "
             "(required: within 2 %% and each group's range; all within 0.46-1.61)",
             (int)o->seeds, o->seeds == 1 ? "" : "s", vmin, vmax, 100.0 * worst);
    cJSON_AddNumberToObject(r->json, "speed_min", vmin);
    cJSON_AddNumberToObject(r->json, "speed_max", vmax);
    cJSON_AddNumberToObject(r->json, "worst_relative", worst);
    return 1;
}

/* ---- test 9: a crowd leaving a large public room ------------------------------- */

/* A room of 30 m x 20 m with four 1 m exits, at x 4-5 and 25-26 in both
 * long walls; n pedestrians (1000; --quick 300) in [2, 28] x [2, 18], each
 * to the nearest exit by the field (its quickest). Then the same with the
 * two exits in the lower wall shut. RiMEA expects about a doubling of the
 * time to empty; JuPedSim's check: the ratio in 1.6-2.4. */
static double room9(const rimea_opts_t* o, uint64_t seed, int shut, int n)
{
    shoal_world_t* w = rw_world(o, seed);
    if (!w) return -1.0;
    /* the walls, with gaps for the doors that are open */
    int ok = 1;
    if (shut) {
        const float b[4] = {0, 0, 30, 0};
        ok = rw_wall(w, b, 2, 0);
    } else {
        const float b1[4] = {0, 0, 4, 0}, b2[4] = {5, 0, 25, 0}, b3[4] = {26, 0, 30, 0};
        ok = rw_wall(w, b1, 2, 0) && rw_wall(w, b2, 2, 0) && rw_wall(w, b3, 2, 0);
    }
    const float t1[4] = {0, 20, 4, 20}, t2[4] = {5, 20, 25, 20}, t3[4] = {26, 20, 30, 20};
    const float l[4] = {0, 0, 0, 20}, rr[4] = {30, 0, 30, 20};
    ok = ok && rw_wall(w, t1, 2, 0) && rw_wall(w, t2, 2, 0) && rw_wall(w, t3, 2, 0) && rw_wall(w, l, 2, 0) &&
         rw_wall(w, rr, 2, 0);
    /* the exits: lines 0.5 m outside the open doors, one goal */
    shoal_nav_goal_t g = {.kind = SHOAL_NAV_LINE, .exit = 1};
    const float doors[4][2] = {{4, 20.5f}, {25, 20.5f}, {4, -0.5f}, {25, -0.5f}};
    int open = shut ? 2 : 4;
    for (int k = 0; k < open; ++k) {
        g.points[2 * k][0] = doors[k][0];
        g.points[2 * k][1] = doors[k][1];
        g.points[2 * k + 1][0] = doors[k][0] + 1.0f;
        g.points[2 * k + 1][1] = doors[k][1];
    }
    g.count = 2 * open;
    shoal_nav_params_t np = rw_nav_params();
    np.bounds[0] = -1.0f;
    np.bounds[1] = -1.5f;
    np.bounds[2] = 31.0f;
    np.bounds[3] = 21.5f;
    int32_t goal = -1;
    ok = ok && shoal_world_set_nav(w, &np) == SHOAL_OK && shoal_world_add_nav_goal(w, &g, &goal) == SHOAL_OK;
    uint64_t s = seed * 15485863u;
    float* xy = malloc(sizeof(float) * 2 * (size_t)n);
    shoal_agent_t* ids = malloc(sizeof(shoal_agent_t) * (size_t)n);
    float* last = malloc(sizeof(float) * 2 * (size_t)n);
    double* left = malloc(sizeof(double) * (size_t)n);
    ok = ok && xy && ids && last && left && rw_scatter(&s, 2, 2, 28, 18, 0.42f, n, xy) == n;
    for (int i = 0; ok && i < n; ++i) {
        shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], goal);
        ok = rw_add(w, &d, &ids[i]);
    }
    if (!ok) cli_error("validate rimea: test 9: %s", shoal_world_last_error(w));
    double t = ok ? rw_run_out(w, ids, n, 1200.0, last, left) : -1.0;
    free(xy);
    free(ids);
    free(last);
    free(left);
    shoal_world_destroy(w);
    return t;
}

static int test9(const rimea_opts_t* o, rimea_result_t* r)
{
    const int n = o->quick ? 300 : 1000;
    int pass = 1;
    double lo = INFINITY, hi = -INFINITY, t4s = 0, t2s = 0;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        double t4 = room9(o, (uint64_t)seed, 0, n), t2 = room9(o, (uint64_t)seed, 1, n);
        if (t4 < 0.0 || t2 < 0.0) return 0;
        double ratio = t2 / t4;
        pass &= ratio >= 1.6 && ratio <= 2.4 && t4 < 1200.0 && t2 < 1200.0;
        if (r->plot) {
            r->plot->ev9_four[seed - 1] = t4;
            r->plot->ev9_two[seed - 1] = t2;
        }
        lo = fmin(lo, ratio);
        hi = fmax(hi, ratio);
        t4s = t4;
        t2s = t2;
    }
    if (r->plot) {
        r->plot->ev9_walkers = n;
        r->plot->ran |= RIMEA_PLOT_TEST9;
    }
    r->pass = pass;
    snprintf(
        r->text, sizeof r->text,
        "%d leave through 4 exits and through 2: emptied in %.1f and %.1f s (last seed); the ratio %.2f-%.2f "
        "over %d seed%s (required: 1.6 to 2.4, about a doubling)",
        n, t4s, t2s, lo, hi, (int)o->seeds, o->seeds == 1 ? "" : "s");
    cJSON_AddNumberToObject(r->json, "ratio_min", lo);
    cJSON_AddNumberToObject(r->json, "ratio_max", hi);
    return 1;
}

/* ---- test 10: allocation of escape routes ----------------------------------------- */

/* A corridor (x 0-18, y 4.5-6.5) with 12 rooms of 3 m x 4.5 m, six above
 * (1-6, left to right) and six below (7-12), each with a 1 m door onto
 * it; the main exit (1.2 m) at the corridor's left end, the secondary
 * (1 m) at its right end, as JuPedSim's encoding sizes them. 23 adults,
 * two a room (one in room 12): rooms 1-4 and 7-10 are sent to the main
 * exit, the others to the secondary, so that rooms 4 and 10 walk past the
 * nearer exit. RiMEA: everyone uses the exit allotted. */
static int test10(const rimea_opts_t* o, rimea_result_t* r)
{
    int pass = 1, wrong = 0, missing = 0;
    double last_out = 0.0;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        shoal_world_t* w = rw_world(o, (uint64_t)seed);
        if (!w) return 0;
        int ok = 1;
        /* the corridor's walls with the doors (x 1-2, 4-5, ... 16-17) left open */
        for (int side = 0; side < 2 && ok; ++side) {
            float y = side ? 6.5f : 4.5f;
            for (int k = 0; k <= 6 && ok; ++k) {
                float x0 = k == 0 ? 0.0f : 3.0f * (float)k - 1.0f,
                      x1 = k == 6 ? 18.0f : 3.0f * (float)k + 1.0f;
                const float seg[4] = {x0, y, x1, y};
                ok = rw_wall(w, seg, 2, 0);
            }
        }
        const float top[4] = {0, 11, 18, 11}, bottom[4] = {0, 0, 18, 0};
        const float left_lo[4] = {0, 0, 0, 4.9f}, left_hi[4] = {0, 6.1f, 0, 11};
        const float right_lo[4] = {18, 0, 18, 5}, right_hi[4] = {18, 6, 18, 11};
        ok = ok && rw_wall(w, top, 2, 0) && rw_wall(w, bottom, 2, 0) && rw_wall(w, left_lo, 2, 0) &&
             rw_wall(w, left_hi, 2, 0) && rw_wall(w, right_lo, 2, 0) && rw_wall(w, right_hi, 2, 0);
        for (int k = 1; k < 6 && ok; ++k) {
            const float up[4] = {3.0f * (float)k, 6.5f, 3.0f * (float)k, 11.0f};
            const float dn[4] = {3.0f * (float)k, 0.0f, 3.0f * (float)k, 4.5f};
            ok = rw_wall(w, up, 2, 0) && rw_wall(w, dn, 2, 0);
        }
        int32_t main_exit = -1, second = -1;
        ok = ok && rw_exit(w, -0.5f, 4.9f, -0.5f, 6.1f, &main_exit) &&
             rw_exit(w, 18.5f, 5.0f, 18.5f, 6.0f, &second);
        enum { N = 23 };
        shoal_agent_t ids[N];
        int allotted[N]; /* 0: main, 1: secondary */
        uint64_t s = (uint64_t)seed * 7368787u;
        int n = 0;
        for (int room = 1; room <= 12 && ok; ++room) {
            int col = (room - 1) % 6, above = room <= 6, count = room == 12 ? 1 : 2;
            float x0 = 3.0f * (float)col + 0.4f, x1 = 3.0f * (float)(col + 1) - 0.4f;
            float y0 = above ? 6.9f : 0.4f, y1 = above ? 10.6f : 4.1f;
            float xy[4];
            ok = rw_scatter(&s, x0, y0, x1, y1, 0.6f, count, xy) == count;
            for (int i = 0; ok && i < count; ++i, ++n) {
                allotted[n] = col >= 4;
                shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], allotted[n] ? second : main_exit);
                ok = rw_add(w, &d, &ids[n]);
            }
        }
        float last[2 * N];
        double left[N];
        double t = ok ? rw_run_out(w, ids, N, 120.0, last, left) : -1.0;
        shoal_world_destroy(w);
        if (!ok || t < 0.0) return 0;
        for (int i = 0; i < N; ++i) {
            if (left[i] < 0.0) {
                missing++;
                continue;
            }
            int through_second = last[2 * i] > 9.0f;
            wrong += through_second != allotted[i];
        }
        last_out = fmax(last_out, t);
        pass &= t <= 120.0;
    }
    r->pass = pass && wrong == 0 && missing == 0;
    snprintf(r->text, sizeof r->text,
             "23 from 12 rooms on %d seed%s: %d through an exit not allotted, %d not out; the last out at "
             "%.1f s (required: everyone through the exit allotted)",
             (int)o->seeds, o->seeds == 1 ? "" : "s", wrong, missing, last_out);
    cJSON_AddNumberToObject(r->json, "wrong_exit", wrong);
    cJSON_AddNumberToObject(r->json, "not_out", missing);
    cJSON_AddNumberToObject(r->json, "last_out_s", last_out);
    return 1;
}

/* ---- test 11: choice of escape route ---------------------------------------------- */

/* A room of 30 m x 20 m with two 1 m exits in its upper wall, at x 21-22
 * (exit 1) and 27-28 (exit 2); n pedestrians (1000; --quick 300) packed in
 * its left part [2, 15] x [2, 18]. RiMEA: most use the nearer exit 1, some
 * exit 2 once exit 1 is congested (the congestion-aware fields: with static
 * ones everyone takes exit 1). Judged: both are used, exit 1 by more. */
static int test11(const rimea_opts_t* o, rimea_result_t* r)
{
    const int n = o->quick ? 300 : 1000;
    int pass = 1, e1_sum = 0, e2_sum = 0;
    double t_last = 0.0;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        shoal_world_t* w = rw_world(o, (uint64_t)seed);
        if (!w) return 0;
        const float top1[4] = {0, 20, 21, 20}, top2[4] = {22, 20, 27, 20}, top3[4] = {28, 20, 30, 20};
        const float box[8] = {30, 20, 30, 0, 0, 0, 0, 20};
        int ok = rw_wall(w, top1, 2, 0) && rw_wall(w, top2, 2, 0) && rw_wall(w, top3, 2, 0) &&
                 rw_wall(w, box, 4, 0);
        shoal_nav_goal_t g = {.kind = SHOAL_NAV_LINE, .count = 4, .exit = 1};
        const float pts[4][2] = {{21, 20.5f}, {22, 20.5f}, {27, 20.5f}, {28, 20.5f}};
        memcpy(g.points, pts, sizeof pts);
        shoal_nav_params_t np = rw_nav_params();
        np.bounds[0] = -1.0f;
        np.bounds[1] = -1.0f;
        np.bounds[2] = 31.0f;
        np.bounds[3] = 21.5f;
        int32_t goal;
        ok = ok && shoal_world_set_nav(w, &np) == SHOAL_OK &&
             shoal_world_add_nav_goal(w, &g, &goal) == SHOAL_OK;
        uint64_t s = (uint64_t)seed * 32452843u;
        float* xy = malloc(sizeof(float) * 2 * (size_t)n);
        shoal_agent_t* ids = malloc(sizeof(shoal_agent_t) * (size_t)n);
        float* last = malloc(sizeof(float) * 2 * (size_t)n);
        double* left = malloc(sizeof(double) * (size_t)n);
        int placed = xy ? rw_pack(&s, 2.0f, 2.0f, 15.0f, 18.0f, n, xy) : 0;
        ok = ok && ids && last && left && placed == n;
        for (int i = 0; ok && i < n; ++i) {
            shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], goal);
            ok = rw_add(w, &d, &ids[i]);
        }
        if (!ok) cli_error("validate rimea: test 11: could not place %d pedestrians", n);
        double t = ok ? rw_run_out(w, ids, n, 1200.0, last, left) : -1.0;
        int e1 = 0, e2 = 0;
        for (int i = 0; ok && i < n; ++i) {
            if (left[i] < 0.0) continue;
            e1 += last[2 * i] < 24.5f;
            e2 += last[2 * i] >= 24.5f;
        }
        free(xy);
        free(ids);
        free(last);
        free(left);
        shoal_world_destroy(w);
        if (t < 0.0) return 0;
        pass &= e1 + e2 == n && e1 > e2 && e2 > 0;
        e1_sum += e1;
        e2_sum += e2;
        t_last = t;
    }
    r->pass = pass;
    snprintf(r->text, sizeof r->text,
             "%d from the left of the room: %d through the near exit 1, %d through exit 2 (all seeds), the "
             "last out at %.1f s (last seed) (required: both used, most through exit 1)",
             n, e1_sum, e2_sum, t_last);
    cJSON_AddNumberToObject(r->json, "exit1", e1_sum);
    cJSON_AddNumberToObject(r->json, "exit2", e2_sum);
    return 1;
}

/* ---- test 12: effect of bottlenecks ------------------------------------------------ */

/* Room 1 (10 m x 10 m), a corridor 5 m long and 1 m wide, room 2 (10 m x
 * 10 m) with a 1 m exit opposite; 150 pedestrians in room 1. RiMEA:
 * congestion only in room 1, not at room 2's exit. Judged as JuPedSim
 * here: a congestion (5 or more standing, slower than 0.3 m/s, within 2 m
 * of a door) lasts at least 20 s at the corridor's entrance and at most 5 s
 * in all at room 2's exit. The two doors' flows (the 10th to the 140th
 * through each) are reported. */
static int test12(const rimea_opts_t* o, rimea_result_t* r)
{
    int pass = 1;
    double jam_exit = 0.0, jam_corridor = INFINITY;
    double worst = INFINITY, j_b_last = 0, j_e_last = 0;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        shoal_world_t* w = rw_world(o, (uint64_t)seed);
        if (!w) return 0;
        const float room1[10] = {10, 4.5f, 10, 0, 0, 0, 0, 10, 10, 10};
        const float up1[4] = {10, 10, 10, 5.5f};
        const float corr_lo[4] = {10, 4.5f, 15, 4.5f}, corr_hi[4] = {10, 5.5f, 15, 5.5f};
        const float room2_lo[8] = {15, 4.5f, 15, 0, 25, 0, 25, 4.5f};
        const float room2_hi[8] = {15, 5.5f, 15, 10, 25, 10, 25, 5.5f};
        int32_t goal;
        int ok = rw_wall(w, room1, 5, 0) && rw_wall(w, up1, 2, 0) && rw_wall(w, corr_lo, 2, 0) &&
                 rw_wall(w, corr_hi, 2, 0) && rw_wall(w, room2_lo, 4, 0) && rw_wall(w, room2_hi, 4, 0) &&
                 rw_exit(w, 25.5f, 4.5f, 25.5f, 5.5f, &goal);
        enum { N = 150 };
        uint64_t s = (uint64_t)seed * 49979687u;
        float xy[2 * N];
        ok = ok && rw_scatter(&s, 0.5f, 0.5f, 9.5f, 9.5f, 0.5f, N, xy) == N;
        shoal_agent_t ids[N];
        for (int i = 0; ok && i < N; ++i) {
            shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], goal);
            ok = rw_add(w, &d, &ids[i]);
        }
        /* when each entered the corridor (x >= 10) and left the world */
        double into[N], out[N], t = 0.0, exit_jammed = 0.0, corridor_jammed = 0.0;
        for (int i = 0; i < N; ++i) into[i] = out[i] = -1.0;
        int gone = 0;
        while (ok && gone < N && t < 600.0) {
            if (shoal_world_step(w, DT) != SHOAL_OK) break;
            t += DT;
            int waiting = 0, queued = 0;
            for (int i = 0; i < N; ++i) {
                if (out[i] >= 0.0) continue;
                shoal_agent_state_t st;
                if (shoal_agent_get_state(w, ids[i], &st) != SHOAL_OK) {
                    out[i] = t;
                    gone++;
                    if (into[i] < 0.0) into[i] = t;
                    continue;
                }
                if (into[i] < 0.0 && st.position[0] >= 10.0f) into[i] = t;
                float dx = st.position[0] - 25.0f, dy = st.position[1] - 5.0f;
                float ex = st.position[0] - 10.0f, ey = st.position[1] - 5.0f;
                int standing = hypotf(st.velocity[0], st.velocity[1]) < 0.3f;
                waiting += dx * dx + dy * dy < 4.0f && standing;
                queued += ex * ex + ey * ey < 4.0f && standing;
            }
            exit_jammed += waiting >= 5 ? DT : 0.0;
            corridor_jammed += queued >= 5 ? DT : 0.0;
        }
        shoal_world_destroy(w);
        if (!ok) return 0;
        /* flows between the 10th and the 140th through each */
        double a[N], b[N];
        memcpy(a, into, sizeof a);
        memcpy(b, out, sizeof b);
        for (int i = 1; i < N; ++i)
            for (int k = i; k > 0 && a[k] < a[k - 1]; --k) {
                double x = a[k];
                a[k] = a[k - 1];
                a[k - 1] = x;
            }
        for (int i = 1; i < N; ++i)
            for (int k = i; k > 0 && b[k] < b[k - 1]; --k) {
                double x = b[k];
                b[k] = b[k - 1];
                b[k - 1] = x;
            }
        if (gone < N || a[0] < 0.0) {
            pass = 0;
            continue;
        }
        double j_b = 130.0 / (a[139] - a[9]), j_e = 130.0 / (b[139] - b[9]);
        worst = fmin(worst, j_e - j_b);
        jam_exit = fmax(jam_exit, exit_jammed);
        jam_corridor = fmin(jam_corridor, corridor_jammed);
        pass &= exit_jammed <= 5.0 && corridor_jammed >= 20.0;
        j_b_last = j_b;
        j_e_last = j_e;
    }
    r->pass = pass;
    snprintf(
        r->text, sizeof r->text,
        "150 through a 1 m corridor and a 1 m exit: corridor %.2f /s, exit %.2f /s (last seed), the exit's "
        "flow at worst %+.3f /s from the corridor's; congested (5 or more standing within 2 m) at least %.1f "
        "s "
        "at the corridor, at most %.1f s at the exit (required: at least 20 s and at most 5 s)",
        j_b_last, j_e_last, worst, jam_corridor, jam_exit);
    cJSON_AddNumberToObject(r->json, "flow_corridor", j_b_last);
    cJSON_AddNumberToObject(r->json, "flow_exit", j_e_last);
    cJSON_AddNumberToObject(r->json, "congested_s_exit_max", jam_exit);
    cJSON_AddNumberToObject(r->json, "congested_s_corridor_min", jam_corridor);
    return 1;
}

/* ---- test 13: congestion before stairs --------------------------------------------- */

/* The counts of test 13's seed into its plot data (capacity for the
 * test's 600 s). Returns 0 when out of memory. */
static int stairs_plot_begin(rimea_stairs_run_t* s)
{
    free(s->door);
    free(s->foot);
    free(s->corridor);
    *s = (rimea_stairs_run_t){.capacity = (int)(600.0 / DT) + 2, .queue_t = {-1.0, -1.0}, .queue = {-1, -1}};
    s->door = malloc(sizeof(int) * (size_t)s->capacity);
    s->foot = malloc(sizeof(int) * (size_t)s->capacity);
    s->corridor = malloc(sizeof(int) * (size_t)s->capacity);
    if (s->door && s->foot && s->corridor) return 1;
    cli_error("validate rimea: out of memory");
    return 0;
}

/* A room of 5 m x 8 m (x 0-5, y 0-8), a corridor 12 m long and 2 m wide
 * (x 5-17, y 3-5), then 3 m of stairs up (x 17-20, a speed zone of factor
 * 0.675 / 1.34: JuPedSim's mean speed up stairs, 0.675 m/s, for a walker
 * of the mean free speed), the exit at their top. 150 adults packed in
 * the room, free speeds drawn from Weidmann's N(1.34, 0.26) cut at two
 * deviations. RiMEA: congestion at the room's exit, a steady flow in the
 * corridor, and a jam growing at the foot of the stairs. Judged here: the
 * room's exit (the 2 m x 2 m before it) and the foot of the stairs (the
 * corridor's last 2 m) each hold 2 or more per m^2 for at least 10 s, and
 * the walkers in the corridor grow in number over the 20 s after the
 * first reaches the stairs; all leave. */
static int test13(const rimea_opts_t* o, rimea_result_t* r)
{
    int pass = 1;
    double door_min = INFINITY, foot_min = INFINITY, last_out = 0.0, flow_mid = 0.0;
    int q0 = 0, q1 = 0, queue_grew = 1;
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        shoal_world_t* w = rw_world(o, (uint64_t)seed);
        if (!w) return 0;
        const float room[12] = {5, 3, 5, 0, 0, 0, 0, 8, 5, 8, 5, 5};
        const float lo[4] = {5, 3, 20, 3}, hi[4] = {5, 5, 20, 5};
        int32_t goal;
        int ok = rw_wall(w, room, 6, 0) && rw_wall(w, lo, 2, 0) && rw_wall(w, hi, 2, 0) &&
                 rw_zone(w, 17.0f, 2.5f, 20.5f, 5.5f, (float)(0.675 / 1.34)) &&
                 rw_exit(w, 20.5f, 3.0f, 20.5f, 5.0f, &goal);
        enum { N = 150 };
        uint64_t s = (uint64_t)seed * 39916801u;
        float xy[2 * N];
        ok = ok && rw_pack(&s, 0.3f, 0.3f, 4.7f, 7.7f, N, xy) == N;
        shoal_agent_t ids[N];
        for (int i = 0; ok && i < N; ++i) {
            shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], goal);
            rw_free_speed(&s, &d);
            ok = rw_add(w, &d, &ids[i]);
        }
        double t = 0.0, door_s = 0.0, foot_s = 0.0, t_stairs = -1.0, mid[N];
        int gone = 0, out[N] = {0}, past_mid[N] = {0}, n_mid = 0, queue_at[2] = {-1, -1};
        rimea_stairs_run_t* sp = r->plot ? &r->plot->stairs[seed - 1] : NULL;
        ok = ok && (!sp || stairs_plot_begin(sp));
        while (ok && gone < N && t < 600.0) {
            if (shoal_world_step(w, DT) != SHOAL_OK) break;
            t += DT;
            int door = 0, foot = 0, corridor = 0;
            for (int i = 0; i < N; ++i) {
                if (out[i]) continue;
                shoal_agent_state_t st;
                if (shoal_agent_get_state(w, ids[i], &st) != SHOAL_OK) {
                    out[i] = 1;
                    gone++;
                    if (t_stairs < 0.0) t_stairs = t;
                    continue;
                }
                float x = st.position[0], y = st.position[1];
                door += x >= 3.0f && x < 5.0f && y >= 3.0f && y <= 5.0f;
                foot += x >= 15.0f && x < 17.0f;
                corridor += x >= 5.0f && x < 17.0f;
                if (x >= 17.0f && t_stairs < 0.0) t_stairs = t;
                if (x >= 11.0f && !past_mid[i]) {
                    past_mid[i] = 1;
                    mid[n_mid++] = t;
                }
            }
            door_s += door >= 8 ? DT : 0.0; /* 2 per m^2 over 4 m^2 */
            foot_s += foot >= 8 ? DT : 0.0;
            if (t_stairs >= 0.0 && queue_at[0] < 0) {
                queue_at[0] = corridor;
                if (sp) sp->queue_t[0] = t;
            }
            if (t_stairs >= 0.0 && queue_at[1] < 0 && t >= t_stairs + 20.0) {
                queue_at[1] = corridor;
                if (sp) sp->queue_t[1] = t;
            }
            if (sp && sp->steps < sp->capacity) {
                sp->door[sp->steps] = door;
                sp->foot[sp->steps] = foot;
                sp->corridor[sp->steps++] = corridor;
            }
        }
        shoal_world_destroy(w);
        if (!ok) return 0;
        door_min = fmin(door_min, door_s);
        foot_min = fmin(foot_min, foot_s);
        last_out = fmax(last_out, t);
        q0 = queue_at[0];
        q1 = queue_at[1];
        if (sp) {
            sp->door_s = door_s;
            sp->foot_s = foot_s;
            sp->queue[0] = q0;
            sp->queue[1] = q1;
        }
        queue_grew &= q1 > q0;
        flow_mid = n_mid >= 140 ? 130.0 / (mid[139] - mid[9]) : 0.0;
        pass &= gone == N && door_s >= 10.0 && foot_s >= 10.0 && q1 > q0;
    }
    if (r->plot) r->plot->ran |= RIMEA_PLOT_TEST13;
    r->pass = pass;
    snprintf(
        r->text, sizeof r->text,
        "150 from a room through a 2 m corridor to stairs at half speed: 2 or more per m^2 at the room's "
        "exit for at least %.1f s and at the foot of the stairs %.1f s, %d then %d in the corridor 20 s "
        "after the first reached the stairs (last seed), %.2f /s past its middle, the last out at %.1f s "
        "(required: both congested 10 s or more, the corridor's count %s)",
        door_min, foot_min, q0, q1, flow_mid, last_out, queue_grew ? "grew" : "growing; it did not");
    cJSON_AddNumberToObject(r->json, "congested_s_room_exit_min", door_min);
    cJSON_AddNumberToObject(r->json, "congested_s_stairs_min", foot_min);
    cJSON_AddNumberToObject(r->json, "flow_corridor", flow_mid);
    cJSON_AddNumberToObject(r->json, "last_out_s", last_out);
    return 1;
}

/* ---- test 15: a large crowd round a corner ------------------------------------------ */

/* 500 pedestrians (--quick 200) in a start area of 6 m x 20 m at the closed
 * end of a 20 m wide corridor, as JuPedSim encodes the guideline's figure:
 * a short straight one (50 m), a long straight one (81 m), and a corner:
 * 60 m down a 20 m arm whose outer corner is cut at 45 degrees over 10 m,
 * then 10 m along a 20 m arm to the exit. RiMEA: the corner's time to
 * empty lies between the short's and the long's. */
static double corridor15(const rimea_opts_t* o, uint64_t seed, int kind, int n)
{
    shoal_world_t* w = rw_world(o, seed);
    if (!w) return -1.0;
    int ok = 1;
    int32_t goal = -1;
    float sx0 = 0.3f, sx1 = 19.7f, sy0, sy1;
    if (kind < 2) {
        float len = kind == 0 ? 50.0f : 81.0f;
        const float u[8] = {0, -1, 0, len, 20, len, 20, -1};
        ok = ok && rw_wall(w, u, 4, 0) && rw_exit(w, 0.0f, -0.5f, 20.0f, -0.5f, &goal);
        sy0 = len - 6.0f;
        sy1 = len - 0.3f;
    } else {
        const float outer[10] = {73, 0, 52, 0, 42, 10, 42, 60, 62, 60}, inner[6] = {62, 60, 62, 20, 73, 20};
        ok = rw_wall(w, outer, 5, 0) && rw_wall(w, inner, 3, 0) &&
             rw_exit(w, 72.5f, 0.0f, 72.5f, 20.0f, &goal);
        sx0 = 42.3f;
        sx1 = 61.7f;
        sy0 = 54.0f;
        sy1 = 59.7f;
    }
    uint64_t s = seed * 86028121u + (uint64_t)kind;
    float* xy = malloc(sizeof(float) * 2 * (size_t)n);
    shoal_agent_t* ids = malloc(sizeof(shoal_agent_t) * (size_t)n);
    float* last = malloc(sizeof(float) * 2 * (size_t)n);
    double* left = malloc(sizeof(double) * (size_t)n);
    ok = ok && xy && ids && last && left && rw_pack(&s, sx0, sy0, sx1, sy1, n, xy) == n;
    for (int i = 0; ok && i < n; ++i) {
        shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], goal);
        ok = rw_add(w, &d, &ids[i]);
    }
    double t = ok ? rw_run_out(w, ids, n, 600.0, last, left) : -1.0;
    free(xy);
    free(ids);
    free(last);
    free(left);
    shoal_world_destroy(w);
    return t;
}

static int test15(const rimea_opts_t* o, rimea_result_t* r)
{
    const int n = o->quick ? 200 : 500;
    int pass = 1;
    double t[3] = {0};
    for (int64_t seed = 1; seed <= o->seeds; ++seed) {
        for (int k = 0; k < 3; ++k) {
            t[k] = corridor15(o, (uint64_t)seed, k, n);
            if (t[k] < 0.0) return 0;
        }
        pass &= t[0] <= t[2] && t[2] <= t[1] && t[1] < 600.0;
        if (r->plot) {
            r->plot->ev15_short[seed - 1] = t[0];
            r->plot->ev15_long[seed - 1] = t[1];
            r->plot->ev15_corner[seed - 1] = t[2];
        }
    }
    if (r->plot) {
        r->plot->ev15_walkers = n;
        r->plot->ran |= RIMEA_PLOT_TEST15;
    }
    r->pass = pass;
    snprintf(
        r->text, sizeof r->text,
        "%d through a short straight corridor %.1f s, the corner %.1f s, a long straight one %.1f s (last of "
        "%d seed%s) (required: short <= corner <= long)",
        n, t[0], t[2], t[1], (int)o->seeds, o->seeds == 1 ? "" : "s");
    cJSON_AddItemToObject(r->json, "seconds_short_corner_long",
                          cJSON_CreateDoubleArray((double[]){t[0], t[2], t[1]}, 3));
    return 1;
}

/* ---- bottlenecks against measured crowds -------------------------------------------- */

/* Flow through openings of 0.8 to 2.4 m (the `validate crowd` room: 150
 * from a 10 m room, the 10th to the 140th), against J = 1.6 to 2.2 b per s
 * measured (Seyfried et al. 2009, Kretz et al. 2006, Liao et al. 2014). */
static int test_bottleneck(const rimea_opts_t* o, rimea_result_t* r)
{
    const double widths[5] = {0.8, 1.2, 1.6, 2.0, 2.4};
    double lo = INFINITY, hi = -INFINITY;
    cJSON* pts = cJSON_AddArrayToObject(r->json, "points");
    for (int k = 0; k < 5; ++k)
        for (int64_t seed = 1; seed <= o->seeds; ++seed) {
            shoal_world_t* w = rw_world(o, (uint64_t)seed);
            if (!w) return 0;
            float h = (float)(widths[k] / 2);
            const float room[8] = {0.0f, 5.0f, -10.0f, 5.0f, -10.0f, -5.0f, 0.0f, -5.0f};
            const float up[4] = {0, 5, 0, h}, dn[4] = {0, -h, 0, -5};
            int32_t goal;
            int ok = rw_wall(w, room, 4, 0) && rw_wall(w, up, 2, 0) && rw_wall(w, dn, 2, 0) &&
                     rw_exit(w, 20.0f, -5.0f, 20.0f, 5.0f, &goal);
            enum { N = 150 };
            uint64_t s = (uint64_t)seed * 2654435761u + (uint64_t)k;
            float xy[2 * N];
            ok = ok && rw_scatter(&s, -9.6f, -4.6f, -0.6f, 4.6f, 0.45f, N, xy) == N;
            shoal_agent_t ids[N];
            for (int i = 0; ok && i < N; ++i) {
                shoal_agent_def_t d = rw_ped(xy[2 * i], xy[2 * i + 1], goal);
                rw_free_speed(&s, &d);
                ok = rw_add(w, &d, &ids[i]);
            }
            double when[N];
            int passed[N] = {0}, count = 0;
            double t = 0.0;
            while (ok && count < N && t < 300.0) {
                if (shoal_world_step(w, DT) != SHOAL_OK) break;
                t += DT;
                for (int i = 0; i < N; ++i) {
                    if (passed[i]) continue;
                    shoal_agent_state_t st;
                    if (shoal_agent_get_state(w, ids[i], &st) != SHOAL_OK || st.position[0] > 0.0f) {
                        passed[i] = 1;
                        when[count++] = t;
                    }
                }
            }
            shoal_world_destroy(w);
            if (!ok) return 0;
            double flow = count >= 140 ? 130.0 / (when[139] - when[9]) : 0.0;
            double per_m = flow / widths[k];
            if (r->plot) {
                r->plot->bn_width[k] = widths[k];
                r->plot->bn_per_m[k][seed - 1] = per_m;
            }
            lo = fmin(lo, per_m);
            hi = fmax(hi, per_m);
            cJSON* e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "width", widths[k]);
            cJSON_AddNumberToObject(e, "seed", (double)seed);
            cJSON_AddNumberToObject(e, "flow", flow);
            cJSON_AddItemToArray(pts, e);
        }
    if (r->plot) r->plot->ran |= RIMEA_PLOT_BOTTLENECK;
    r->pass = lo >= 1.6 && hi <= 2.2;
    snprintf(r->text, sizeof r->text,
             "150 through 0.8-2.4 m from random starts: %.2f-%.2f per m and s (measured crowds: 1.6 to 2.2)",
             lo, hi);
    return 1;
}

/* ---- the command ---------------------------------------------------------------------- */

typedef int (*rimea_fn)(const rimea_opts_t*, rimea_result_t*);

typedef struct rimea_case {
    int number; /* the guideline's test, 0 for a comparison with measured data */
    const char* key;
    const char* name;
    rimea_fn run;        /* NULL: cannot run */
    const char* why_not; /* when it cannot */
} rimea_case_t;

static const rimea_case_t cases[] = {
    {1, "1", "walking speed in a corridor", test1, NULL},
    {2, "2", "walking speed up stairs", test2, NULL},
    {3, "3", "walking speed down stairs", test3, NULL},
    {4, "4", "fundamental diagram (2D and single file)", test4, NULL},
    {5, "5", "premovement time", test5, NULL},
    {6, "6", "movement around a corner", test6, NULL},
    {7, "7", "demographic parameters", test7, NULL},
    {8, "8", "parameter study on a three-storey building", NULL,
     "several floors joined by stairs: shoal's worlds are one plane"},
    {9, "9", "crowd leaving a large public room", test9, NULL},
    {10, "10", "allocation of escape routes", test10, NULL},
    {11, "11", "choice of escape route", test11, NULL},
    {12, "12", "effect of bottlenecks", test12, NULL},
    {13, "13", "congestion before stairs", test13, NULL},
    {14, "14", "choice of route over several floors", NULL,
     "several floors joined by stairs: shoal's worlds are one plane"},
    {15, "15", "large crowd round a corner", test15, NULL},
    {0, "bottleneck", "bottleneck flow against measured crowds", test_bottleneck, NULL},
};
enum { CASES = (int)(sizeof cases / sizeof cases[0]) };

static int parse_tests(const char* command, const char* name, const char* value, void* opts)
{
    rimea_opts_t* o = opts;
    const char* at = value;
    for (;;) {
        size_t len = strcspn(at, ",");
        int found = -1;
        for (int k = 0; k < CASES; ++k)
            if (strlen(cases[k].key) == len && !strncmp(at, cases[k].key, len)) found = k;
        if (found < 0)
            return cli_usage_error(
                command, "%s: expected test numbers 1 to 15 or 'bottleneck' (comma-separated), got '%s'",
                name, value);
        o->tests |= 1ull << found;
        if (!at[len]) return 0;
        at += len + 1;
    }
}

#if SHOAL_WITH_PLOT
#define RIMEA_PLOTS_AVAILABILITY ""
#else
#define RIMEA_PLOTS_AVAILABILITY " (not in this build, which has no plot support: see 'shoal plot')"
#endif

static const cli_option_t rimea_options[] = {
    {.name = "--test",
     .metavar = "N[,N]",
     .kind = CLI_CUSTOM,
     .parse = parse_tests,
     .help =
         "run only these tests: the guideline's numbers 1 to 15, and 'bottleneck' (flows against measured "
         "crowds); the others are listed as not run"},
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(rimea_opts_t, json),
     .help =
         "one JSON object on stdout: tests [{test, name, ran, pass, summary, why_not, ...figures}], pass"},
    {.name = "--quick",
     .kind = CLI_FLAG,
     CLI_AT(rimea_opts_t, quick),
     .help = "smaller crowds and fewer densities (for tests; figures are coarser)"},
    {.name = "--plots",
     .metavar = "DIR",
     .kind = CLI_FILE,
     CLI_AT(rimea_opts_t, plots),
     .help =
         "also draw what the tests measured as PNGs in DIR (made if missing): fundamental.png (test 4), "
         "premovement.png (5), evacuation.png (9 and 15), stairs.png (13) and bottleneck.png; with "
         "--test, those whose tests did not run are not drawn (and said so); what the tests print does not "
         "change" RIMEA_PLOTS_AVAILABILITY},
    {.name = "--seeds",
     .metavar = "K",
     .kind = CLI_INT,
     CLI_AT(rimea_opts_t, seeds),
     .min = 1,
     .max = 100,
     .help = "run each test on seeds 1 to K (default 3; --quick 1): random starts, free speeds and the "
             "jitter that breaks symmetric stalls draw from the seed"},
    {.name = "--threads",
     .metavar = "T",
     .kind = CLI_INT,
     CLI_AT(rimea_opts_t, threads),
     .min = 1,
     .max = 1024,
     .help = "threads (default: physical cores); results are the same for any count"},
};

static const cli_spec_t rimea_spec = {
    .command = "validate rimea",
    .usage = "[options]",
    .about = "The pedestrian model on the RiMEA guideline's test cases that a 2D simulator\n"
             "can run, each with the guideline's pass criterion, and bottleneck flows\n"
             "against measured crowds (docs/rimea.md).\n",
    .options = rimea_options,
    .option_count = CLI_COUNT(rimea_options),
    .details = "Tests that cannot run here are listed with the reason. Exit status 1 when a test\n"
               "that ran failed.\n",
};

/* Test 13's series, then the data. */
static void plot_data_free(rimea_plot_data_t* pd)
{
    if (!pd) return;
    for (int k = 0; k < RIMEA_PLOT_SEEDS; ++k) {
        free(pd->stairs[k].door);
        free(pd->stairs[k].foot);
        free(pd->stairs[k].corridor);
    }
    free(pd);
}

#if SHOAL_WITH_PLOT
/* Draw the pictures whose tests ran and say where they went (and which
 * were left out), after the tests' output. Returns 0, or -1 when a
 * picture could not be written. */
static int write_plots(const rimea_opts_t* o, const rimea_plot_data_t* pd)
{
    char err[1200];
    int drawn[RIMEA_PICTURES] = {0};
    if (rimea_write_plots(o->plots, pd, drawn, err, sizeof err) != 0) {
        cli_error("validate rimea: %s", err);
        return -1;
    }
    if (o->json) return 0;
    int drawn_count = 0;
    for (int k = 0; k < RIMEA_PICTURES; ++k) drawn_count += drawn[k];
    if (drawn_count) {
        printf("plots in %s:", o->plots);
        for (int k = 0, n = 0; k < RIMEA_PICTURES; ++k)
            if (drawn[k]) printf("%s %s", n++ ? "," : "", rimea_pictures[k].file);
        printf("\n");
    }
    if (drawn_count < RIMEA_PICTURES) {
        printf("%s, as their tests did not run (--test):", drawn_count ? "not drawn" : "no plots drawn");
        for (int k = 0, n = 0; k < RIMEA_PICTURES; ++k)
            if (!drawn[k])
                printf("%s %s (%s)", n++ ? "," : "", rimea_pictures[k].file, rimea_pictures[k].from);
        printf("\n");
    }
    return 0;
}
#endif

static int validate_rimea(int argc, char** argv)
{
    rimea_opts_t o = {0};
    int stop = cli_parse(&rimea_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    if (!o.seeds) o.seeds = o.quick ? 1 : 3;
    rimea_plot_data_t* pd = NULL;
#if SHOAL_WITH_PLOT
    if (o.plots) {
        /* before the tests, which take a while */
        char err[1200];
        if (validate_plot_dir(o.plots, err, sizeof err) != 0) {
            cli_error("validate rimea: %s", err);
            return CLI_EXIT_FAILURE;
        }
        pd = calloc(1, sizeof *pd);
        if (!pd) {
            cli_error("validate rimea: out of memory");
            return CLI_EXIT_FAILURE;
        }
        pd->quick = o.quick;
        pd->seeds = (int)o.seeds;
        pd->dt = DT;
    }
#else
    if (o.plots) return cli_no_plot("validate rimea --plots");
#endif
    int all_pass = 1;
    cJSON* root = o.json ? cJSON_CreateObject() : NULL;
    cJSON* list = root ? cJSON_AddArrayToObject(root, "tests") : NULL;
    for (int k = 0; k < CASES; ++k) {
        const rimea_case_t* c = &cases[k];
        int asked = !o.tests || (o.tests >> k & 1u);
        rimea_result_t r = {.pass = 0, .json = cJSON_CreateObject(), .plot = pd};
        int ran = 0;
        if (asked && c->run) {
            if (!c->run(&o, &r)) {
                cJSON_Delete(r.json);
                cJSON_Delete(root);
                plot_data_free(pd);
                return CLI_EXIT_FAILURE;
            }
            ran = 1;
            all_pass &= r.pass;
        }
        if (root) {
            cJSON* e = r.json;
            if (c->number)
                cJSON_AddNumberToObject(e, "test", c->number);
            else
                cJSON_AddStringToObject(e, "test", c->key);
            cJSON_AddStringToObject(e, "name", c->name);
            cJSON_AddBoolToObject(e, "ran", ran);
            if (ran) {
                cJSON_AddBoolToObject(e, "pass", r.pass);
                cJSON_AddStringToObject(e, "summary", r.text);
            } else {
                cJSON_AddStringToObject(e, "why_not", c->run ? "not asked for (--test)" : c->why_not);
            }
            cJSON_AddItemToArray(list, e);
        } else {
            cJSON_Delete(r.json);
            if (ran)
                printf("%-10s %-44s %s\n           %s\n", c->key, c->name, r.pass ? "pass" : "FAIL", r.text);
            else
                printf("%-10s %-44s not run: %s\n", c->key, c->name,
                       c->run ? "not asked for (--test)" : c->why_not);
            fflush(stdout);
        }
    }
    if (root) {
        cJSON_AddBoolToObject(root, "pass", all_pass);
        char* text = cJSON_PrintUnformatted(root);
        if (text) puts(text);
        cJSON_free(text);
        cJSON_Delete(root);
    } else {
        printf("\n%s\n", all_pass ? "pass" : "FAIL");
    }
    int rc = all_pass ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
#if SHOAL_WITH_PLOT
    if (pd && write_plots(&o, pd) != 0) rc = CLI_EXIT_FAILURE;
#endif
    plot_data_free(pd);
    return rc;
}

const cli_command_t cli_validate_rimea = {
    "rimea", "the RiMEA tests 1 to 16 (guideline for microscopic evacuation analysis)", validate_rimea};
