/* `shoal validate rimea --plots DIR`: pictures of what the RiMEA tests of
 * experiments/rimea/validate_rimea.c measured (experiments/rimea/rimea_plot.h), on the charts
 * of cli/plot/plot.h. Every point is a figure a test measured or judged; the
 * reference curves and bands are the tests' criteria. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/plot/plot.h"
#include "experiments/rimea/rimea_plot.h"
#include "experiments/crowd/validate.h"

const rimea_picture_t rimea_pictures[RIMEA_PICTURES] = {
    {"fundamental.png", RIMEA_PLOT_TEST4, "test 4", 1200, 520},
    {"premovement.png", RIMEA_PLOT_TEST5, "test 5", 800, 500},
    {"evacuation.png", RIMEA_PLOT_TEST9 | RIMEA_PLOT_TEST15, "tests 9 and 15", 800, 500},
    {"stairs.png", RIMEA_PLOT_TEST13, "test 13", 800, 600},
    {"bottleneck.png", RIMEA_PLOT_BOTTLENECK, "bottleneck", 800, 500},
};

static const plot_rgb_t reference_ink = {0.35, 0.35, 0.38};
static const plot_rgb_t limit_ink = {0.75, 0.1, 0.1};

/* A colour mixed with white: ranges drawn behind the points. */
static plot_rgb_t pale(plot_rgb_t c)
{
    return (plot_rgb_t){0.45 * c.r + 0.55, 0.45 * c.g + 0.55, 0.45 * c.b + 0.55};
}

/* The end of every subtitle: the seeds, and --quick. */
static void note_seeds(char* buf, size_t size, const rimea_plot_data_t* d)
{
    size_t n = strlen(buf);
    if (n >= size) return;
    if (d->seeds == 1)
        snprintf(buf + n, size - n, "; seed 1%s", d->quick ? " (--quick)" : "");
    else
        snprintf(buf + n, size - n, "; seeds 1 to %d%s", d->seeds, d->quick ? " (--quick)" : "");
}

/* A chart's name, inside its top left corner. */
static void chart_name(plot_t* p, const plot_chart_t* chart, const char* name)
{
    plot_chart_text(p, chart, chart->xmin, chart->ymax, 8, 16, 0.0, name);
}

/* A horizontal band [lo, hi] across the chart. */
static void hband(plot_t* p, const plot_chart_t* chart, double lo, double hi, plot_rgb_t c, const char* label)
{
    double x[2] = {chart->xmin, chart->xmax}, l[2] = {lo, lo}, h[2] = {hi, hi};
    plot_chart_band(p, chart, x, l, h, 2, c, label);
}

/* A horizontal line across the chart. */
static void hline(plot_t* p, const plot_chart_t* chart, double y, plot_rgb_t c, plot_line_t line,
                  const char* label)
{
    double x[2] = {chart->xmin, chart->xmax}, v[2] = {y, y};
    plot_chart_series(
        p, chart,
        &(plot_series_t){
            .x = x, .y = v, .count = 2, .color = c, .line = line, .mark = PLOT_MARK_NONE, .label = label});
}

static void points(plot_t* p, const plot_chart_t* chart, const double* x, const double* y, int n,
                   plot_rgb_t c, plot_mark_t mark, const char* label)
{
    plot_chart_series(
        p, chart,
        &(plot_series_t){
            .x = x, .y = y, .count = n, .color = c, .line = PLOT_LINE_NONE, .mark = mark, .label = label});
}

/* ---- test 4: the fundamental diagram -------------------------------------------------- */

static void fundamental(plot_t* p, const rimea_plot_data_t* d)
{
    char sub[400], buf[160];
    snprintf(
        sub, sizeof sub,
        "2D: a periodic corridor of 26 m x 2 m, the mean speed of everyone over %.0f s after %.0f s, one "
        "point per density, start and seed; single file: a 26 m ring, %d to %d walkers",
        d->fd_measure_s, d->fd_warm_s, d->sf_walkers[0], d->sf_walkers[RIMEA_PLOT_RINGS - 1]);
    note_seeds(sub, sizeof sub, d);
    plot_title(p, "RiMEA test 4: the fundamental diagram", sub);

    /* the points from random and from lattice starts */
    static double rx[RIMEA_PLOT_FD_MAX], rv[RIMEA_PLOT_FD_MAX], lv[RIMEA_PLOT_FD_MAX];
    static double rq[RIMEA_PLOT_FD_MAX], lq[RIMEA_PLOT_FD_MAX];
    for (int i = 0; i < d->fd_count; ++i) {
        rx[i] = d->fd_density[i];
        rv[i] = d->fd_lattice[i] ? NAN : d->fd_speed[i];
        lv[i] = d->fd_lattice[i] ? d->fd_speed[i] : NAN;
        rq[i] = rx[i] * rv[i];
        lq[i] = rx[i] * lv[i];
    }
    const plot_rgb_t random_ink = plot_palette(0), lattice_ink = plot_palette(1);

    /* left: speed against density, Weidmann's curve and the test's band
     * (0.15 m/s up to 3 per m^2, 0.2 past it) */
    double x, y, w, h;
    plot_area(p, 0.0, 0.36, 0.0, 1.0, &x, &y, &w, &h);
    plot_chart_t chart;
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, 5.5, 0.0, 1.6, "density (per m\u00b2)", "mean speed (m/s)");
    enum { N = 100 };
    double rho[N], v[N], q[N], brho[2 * N], lo[2 * N], hi[2 * N];
    for (int i = 0; i < N; ++i) {
        rho[i] = 0.2 + (WEIDMANN_RHO_MAX - 0.2) * i / (N - 1);
        v[i] = validate_weidmann(rho[i]);
        q[i] = rho[i] * v[i];
        for (int part = 0; part < 2; ++part) { /* 0.3 to 3, then 3 to 5.3 */
            int k = part * N + i;
            brho[k] = part ? 3.0 + (5.3 - 3.0) * i / (N - 1) : 0.3 + (3.0 - 0.3) * i / (N - 1);
            double tol = part ? 0.2 : 0.15;
            lo[k] = fmax(0.0, validate_weidmann(brho[k]) - tol);
            hi[k] = validate_weidmann(brho[k]) + tol;
        }
    }
    plot_chart_band(p, &chart, brho, lo, hi, 2 * N, reference_ink,
                    "required: within 0.15 m/s of Weidmann up to 3 /m\u00b2, 0.2 past it");
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = rho,
                                       .y = v,
                                       .count = N,
                                       .color = reference_ink,
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_NONE,
                                       .label = "Weidmann's curve"});
    points(p, &chart, rx, rv, d->fd_count, random_ink, PLOT_MARK_DOT, "random start");
    points(p, &chart, rx, lv, d->fd_count, lattice_ink, PLOT_MARK_SQUARE, "lattice start");
    chart_name(p, &chart, "2D: mean speed");

    /* middle: the specific flow, density times the mean speed measured,
     * against the top measured crowds reach */
    plot_area(p, 0.36, 0.68, 0.0, 1.0, &x, &y, &w, &h);
    double top = 2.4;
    for (int i = 0; i < d->fd_count; ++i) top = fmax(top, 1.1 * d->fd_density[i] * d->fd_speed[i]);
    double y0 = 0.0;
    plot_nice_range(&y0, &top, 5);
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, 5.5, 0.0, top, "density (per m\u00b2)",
                     "specific flow (per m and s)");
    hband(p, &chart, 1.2, 2.0, plot_palette(2), "measured crowds: the flow's top 1.2-2.0 /m/s");
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = rho,
                                       .y = q,
                                       .count = N,
                                       .color = reference_ink,
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_NONE});
    points(p, &chart, rx, rq, d->fd_count, random_ink, PLOT_MARK_DOT, NULL);
    points(p, &chart, rx, lq, d->fd_count, lattice_ink, PLOT_MARK_SQUARE, NULL);
    chart_name(p, &chart, "2D: density x mean speed");

    /* right: single file, the space per walker (1/rho) against the speed,
     * each seed's fitted line and the lines the test accepts */
    plot_area(p, 0.68, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    double vmax = 1.6, smax = 2.2;
    static double sv[RIMEA_PLOT_SEEDS * RIMEA_PLOT_RINGS], ss[RIMEA_PLOT_SEEDS * RIMEA_PLOT_RINGS];
    static double fx[3 * RIMEA_PLOT_SEEDS], fy[3 * RIMEA_PLOT_SEEDS];
    int n = 0;
    double a_lo = INFINITY, a_hi = -INFINITY, b_lo = INFINITY, b_hi = -INFINITY;
    for (int s = 0; s < d->seeds; ++s)
        for (int c = 0; c < RIMEA_PLOT_RINGS; ++c, ++n) {
            sv[n] = d->sf_speed[s][c];
            ss[n] = 1.0 / d->sf_density[s][c];
            if (isfinite(sv[n])) vmax = fmax(vmax, 1.05 * sv[n]);
            if (isfinite(ss[n])) smax = fmax(smax, 1.05 * ss[n]);
        }
    y0 = 0.0;
    plot_nice_range(&y0, &smax, 5);
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, vmax, 0.0, smax, "mean speed v (m/s)",
                     "space per walker 1/rho (m)");
    double bx[2] = {0.0, vmax}, blo[2] = {0.3, 0.3 + 0.9 * vmax}, bhi[2] = {0.45, 0.45 + 1.3 * vmax};
    plot_chart_band(p, &chart, bx, blo, bhi, 2, plot_palette(3), "measured: a 0.3-0.45 m, b 0.9-1.3 s");
    for (int s = 0; s < d->seeds; ++s) {
        fx[3 * s] = 0.0;
        fy[3 * s] = d->sf_a[s];
        fx[3 * s + 1] = vmax;
        fy[3 * s + 1] = d->sf_a[s] + d->sf_b[s] * vmax;
        fx[3 * s + 2] = fy[3 * s + 2] = NAN;
        a_lo = fmin(a_lo, d->sf_a[s]);
        a_hi = fmax(a_hi, d->sf_a[s]);
        b_lo = fmin(b_lo, d->sf_b[s]);
        b_hi = fmax(b_hi, d->sf_b[s]);
    }
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = fx,
                                       .y = fy,
                                       .count = 3 * d->seeds,
                                       .color = plot_palette(7),
                                       .line = PLOT_LINE_DASHED,
                                       .mark = PLOT_MARK_NONE,
                                       .label = "fit 1/rho = a + b v, each seed"});
    points(p, &chart, sv, ss, n, plot_palette(7), PLOT_MARK_TRIANGLE, "single file: a ring and seed each");
    chart_name(p, &chart, "single file");
    /* a range where the seeds' fits differ at the figures shown */
    char a[32], b[32];
    snprintf(a, sizeof a, "%.2f", a_lo);
    snprintf(buf, sizeof buf, "%.2f", a_hi);
    if (strcmp(a, buf)) snprintf(a, sizeof a, "%.2f-%.2f", a_lo, a_hi);
    snprintf(b, sizeof b, "%.2f", b_lo);
    snprintf(buf, sizeof buf, "%.2f", b_hi);
    if (strcmp(b, buf)) snprintf(b, sizeof b, "%.2f-%.2f", b_lo, b_hi);
    snprintf(buf, sizeof buf, "%s: a %s m, b %s s", d->seeds == 1 ? "fit" : "fits", a, b);
    plot_chart_text(p, &chart, chart.xmin, chart.ymax, 8, 32, 0.0, buf);
}

/* ---- test 5: premovement ---------------------------------------------------------------- */

static void premovement(plot_t* p, const rimea_plot_data_t* d)
{
    enum { M = RIMEA_PLOT_SEEDS * RIMEA_PLOT_PREMOVEMENT };
    static double delay[M], started[M], off[M], never[M], never_y[M];
    int n = 0, missing = 0;
    double worst = 0.0, tmax = 0.0;
    for (int s = 0; s < d->seeds; ++s)
        for (int i = 0; i < RIMEA_PLOT_PREMOVEMENT; ++i, ++n) {
            delay[n] = d->pm_delay[s][i];
            int did = d->pm_started[s][i] >= 0.0;
            started[n] = did ? d->pm_started[s][i] : NAN;
            off[n] = did ? d->pm_started[s][i] - d->pm_delay[s][i] : NAN;
            never[n] = did ? NAN : delay[n];
            missing += !did;
            if (did) worst = fmax(worst, fabs(off[n]));
            tmax = fmax(tmax, fmax(delay[n], did ? started[n] : 0.0));
        }
    char sub[400];
    snprintf(sub, sizeof sub,
             "10 walkers, premovement 10, 20, ..., 100 s; started: the first step at 0.5 m/s or more; at "
             "worst %.2f s off%s",
             worst, missing ? ", some never started" : "");
    note_seeds(sub, sizeof sub, d);
    plot_title(p, "RiMEA test 5: premovement time", sub);

    /* left: the start against the premovement time */
    double x, y, w, h, t0 = 0.0, t1 = tmax + 10.0;
    plot_nice_range(&t0, &t1, 5);
    plot_area(p, 0.0, 0.5, 0.0, 1.0, &x, &y, &w, &h);
    plot_chart_t chart;
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, t1, 0.0, t1, "premovement time (s)", "started at (s)");
    double id[2] = {0.0, t1}, id_lo[2] = {-0.25, t1 - 0.25}, id_hi[2] = {0.25, t1 + 0.25};
    plot_chart_band(p, &chart, id, id_lo, id_hi, 2, reference_ink, "required: within 0.25 s");
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = id,
                                       .y = id,
                                       .count = 2,
                                       .color = reference_ink,
                                       .line = PLOT_LINE_DOTTED,
                                       .mark = PLOT_MARK_NONE,
                                       .label = "started on time"});
    points(p, &chart, delay, started, n, plot_palette(0), PLOT_MARK_DOT,
           d->seeds == 1 ? "a walker" : "a walker (all seeds)");

    /* right: how far off, at a scale where the tolerance shows */
    plot_area(p, 0.5, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    double span = fmax(0.4, 1.2 * worst), lo = -span;
    plot_nice_range(&lo, &span, 4);
    span = fmax(span, -lo);
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, t1, -span, span, "premovement time (s)",
                     "started minus premovement time (s)");
    hband(p, &chart, -0.25, 0.25, reference_ink, NULL);
    hline(p, &chart, 0.0, reference_ink, PLOT_LINE_DOTTED, NULL);
    points(p, &chart, delay, off, n, plot_palette(0), PLOT_MARK_DOT, NULL);
    if (missing) {
        for (int i = 0; i < n; ++i) never_y[i] = span;
        points(p, &chart, never, never_y, n, limit_ink, PLOT_MARK_CROSS, "never started (drawn at the top)");
    }
    chart_name(p, &chart, "how far off");
}

/* ---- tests 9 and 15: times to empty --------------------------------------------------------- */

/* An x axis of seeds 1 to K (whole ticks for the widths used here). */
static double seed_axis(const rimea_plot_data_t* d) { return (d->seeds < 3 ? 3 : d->seeds) + 1.0; }

/* Vertical segments from lo[i] to hi[i] at seed i + 1, broken apart. */
static void ranges(plot_t* p, const plot_chart_t* chart, const double* lo, const double* hi, int seeds,
                   plot_rgb_t c, const char* label)
{
    static double x[3 * RIMEA_PLOT_SEEDS], y[3 * RIMEA_PLOT_SEEDS];
    for (int s = 0; s < seeds; ++s) {
        x[3 * s] = x[3 * s + 1] = s + 1.0;
        y[3 * s] = lo[s];
        y[3 * s + 1] = hi[s];
        x[3 * s + 2] = y[3 * s + 2] = NAN;
    }
    plot_chart_series(p, chart,
                      &(plot_series_t){.x = x,
                                       .y = y,
                                       .count = 3 * seeds,
                                       .color = c,
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_NONE,
                                       .label = label});
}

static void not_run(plot_t* p, double x, double y, double w, double h, const char* what)
{
    cairo_save(p->cr);
    cairo_set_source_rgb(p->cr, 0.55, 0.56, 0.6);
    cairo_set_line_width(p->cr, 1.0);
    cairo_rectangle(p->cr, x + 0.5, y + 0.5, w - 1.0, h - 1.0);
    cairo_stroke(p->cr);
    cairo_restore(p->cr);
    plot_chart_t frame = {
        .px0 = x, .py0 = y, .pw = w, .ph = h, .xmin = 0.0, .xmax = 1.0, .ymin = 0.0, .ymax = 1.0};
    plot_chart_text(p, &frame, 0.5, 0.5, 0, 0, 0.5, what);
}

static void evacuation(plot_t* p, const rimea_plot_data_t* d)
{
    char sub[400], nine[128] = "", fifteen[128] = "";
    if (d->ran & RIMEA_PLOT_TEST9)
        snprintf(nine, sizeof nine, "test 9: %d leave a 30 m x 20 m room by four 1 m exits, then by two",
                 d->ev9_walkers);
    if (d->ran & RIMEA_PLOT_TEST15)
        snprintf(fifteen, sizeof fifteen, "test 15: %d down 20 m wide corridors", d->ev15_walkers);
    snprintf(sub, sizeof sub, "%s%s%s", nine, nine[0] && fifteen[0] ? "; " : "", fifteen);
    note_seeds(sub, sizeof sub, d);
    plot_title(p, "RiMEA tests 9 and 15: times to empty, each seed", sub);
    static double s9lo[RIMEA_PLOT_SEEDS], s9hi[RIMEA_PLOT_SEEDS], seed[RIMEA_PLOT_SEEDS];
    double top = 10.0;
    for (int s = 0; s < d->seeds; ++s) {
        seed[s] = s + 1.0;
        s9lo[s] = 1.6 * d->ev9_four[s];
        s9hi[s] = 2.4 * d->ev9_four[s];
        if (d->ran & RIMEA_PLOT_TEST9) top = fmax(top, fmax(s9hi[s], d->ev9_two[s]));
        if (d->ran & RIMEA_PLOT_TEST15) top = fmax(top, d->ev15_long[s]);
    }
    double y0 = 0.0;
    top *= 1.1;
    plot_nice_range(&y0, &top, 5);
    double x, y, w, h;
    plot_chart_t chart;

    /* left: test 9, four exits and two, and where two must lie */
    plot_area(p, 0.0, 0.5, 0.0, 1.0, &x, &y, &w, &h);
    if (d->ran & RIMEA_PLOT_TEST9) {
        plot_chart_setup(p, &chart, x, y, w, h, 0.0, seed_axis(d), 0.0, top, "seed", "time to empty (s)");
        ranges(p, &chart, s9lo, s9hi, d->seeds, pale(plot_palette(1)), "required: 1.6-2.4 x the time with 4");
        points(p, &chart, seed, d->ev9_four, d->seeds, plot_palette(0), PLOT_MARK_DOT, "4 exits");
        points(p, &chart, seed, d->ev9_two, d->seeds, plot_palette(1), PLOT_MARK_SQUARE, "2 exits");
        chart_name(p, &chart, "test 9: a large public room");
    } else {
        not_run(p, x, y, w, h, "test 9 not run (--test)");
    }

    /* right: test 15, the corner between the short and the long corridor */
    plot_area(p, 0.5, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    if (d->ran & RIMEA_PLOT_TEST15) {
        plot_chart_setup(p, &chart, x, y, w, h, 0.0, seed_axis(d), 0.0, top, "seed", "time to empty (s)");
        ranges(p, &chart, d->ev15_short, d->ev15_long, d->seeds, pale(plot_palette(3)),
               "required: short <= corner <= long");
        points(p, &chart, seed, d->ev15_short, d->seeds, plot_palette(2), PLOT_MARK_DOT, "short (50 m)");
        points(p, &chart, seed, d->ev15_corner, d->seeds, plot_palette(3), PLOT_MARK_TRIANGLE, "corner");
        points(p, &chart, seed, d->ev15_long, d->seeds, plot_palette(4), PLOT_MARK_SQUARE, "long (81 m)");
        chart_name(p, &chart, "test 15: a large crowd round a corner");
    } else {
        not_run(p, x, y, w, h, "test 15 not run (--test)");
    }
}

/* ---- test 13: congestion before stairs ------------------------------------------------------ */

static void stairs(plot_t* p, const rimea_plot_data_t* d)
{
    static const plot_line_t styles[3] = {PLOT_LINE_SOLID, PLOT_LINE_DASHED, PLOT_LINE_DOTTED};
    double door_min = INFINITY, foot_min = INFINITY, tmax = 10.0;
    int most = 1, steps = 0;
    for (int s = 0; s < d->seeds; ++s) {
        const rimea_stairs_run_t* r = &d->stairs[s];
        door_min = fmin(door_min, r->door_s);
        foot_min = fmin(foot_min, r->foot_s);
        tmax = fmax(tmax, r->steps * d->dt);
        steps = r->steps > steps ? r->steps : steps;
        for (int i = 0; i < r->steps; ++i) most = r->corridor[i] > most ? r->corridor[i] : most;
    }
    char sub[400];
    snprintf(sub, sizeof sub,
             "150 from a room down a 2 m x 12 m corridor to stairs at 0.675 m/s; 2 /m\u00b2 or more at "
             "least %.1f s before the exit, %.1f s at the foot",
             door_min, foot_min);
    note_seeds(sub, sizeof sub, d);
    plot_title(p, "RiMEA test 13: congestion before stairs", sub);

    double* t = malloc(sizeof(double) * (size_t)(steps > 0 ? steps : 1));
    double* a = malloc(sizeof(double) * (size_t)(steps > 0 ? steps : 1));
    double* b = malloc(sizeof(double) * (size_t)(steps > 0 ? steps : 1));
    if (!t || !a || !b) {
        free(t);
        free(a);
        free(b);
        return;
    }
    for (int i = 0; i < steps; ++i) t[i] = (i + 1) * d->dt;
    double t0 = 0.0;
    plot_nice_range(&t0, &tmax, 6);

    /* top: the densities (the count in 4 m^2 over 4) */
    double x, y, w, h, dmax = 4.0, y0 = 0.0;
    for (int s = 0; s < d->seeds; ++s)
        for (int i = 0; i < d->stairs[s].steps; ++i)
            dmax = fmax(dmax, fmax(d->stairs[s].door[i], d->stairs[s].foot[i]) / 4.0);
    plot_nice_range(&y0, &dmax, 4);
    plot_area(p, 0.0, 1.0, 0.0, 0.55, &x, &y, &w, &h);
    plot_chart_t chart;
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, tmax, 0.0, dmax, "time (s)", "density (per m\u00b2)");
    if (d->seeds > 1)
        plot_chart_text(p, &chart, chart.xmax, chart.ymax, -8, 16, 1.0,
                        d->seeds > 3 ? "seeds 1, 2, 3, 4, ...: solid, dashed, dotted, solid, ..."
                                     : "seeds 1, 2, 3: solid, dashed, dotted");
    hline(p, &chart, 2.0, limit_ink, PLOT_LINE_DASHED, "2 per m\u00b2: congested");
    for (int s = 0; s < d->seeds; ++s) {
        const rimea_stairs_run_t* r = &d->stairs[s];
        for (int i = 0; i < r->steps; ++i) {
            a[i] = r->door[i] / 4.0;
            b[i] = r->foot[i] / 4.0;
        }
        plot_chart_series(p, &chart,
                          &(plot_series_t){.x = t,
                                           .y = a,
                                           .count = r->steps,
                                           .color = plot_palette(0),
                                           .line = styles[s % 3],
                                           .mark = PLOT_MARK_NONE,
                                           .label = s ? NULL : "before the room's exit (2 m x 2 m)"});
        plot_chart_series(p, &chart,
                          &(plot_series_t){.x = t,
                                           .y = b,
                                           .count = r->steps,
                                           .color = plot_palette(1),
                                           .line = styles[s % 3],
                                           .mark = PLOT_MARK_NONE,
                                           .label = s ? NULL : "the stairs' foot (corridor's last 2 m)"});
    }

    /* bottom: the walkers in the corridor, and the two counts judged */
    double cmax = 1.1 * most;
    y0 = 0.0;
    plot_nice_range(&y0, &cmax, 4);
    plot_area(p, 0.0, 1.0, 0.55, 1.0, &x, &y, &w, &h);
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, tmax, 0.0, cmax, "time (s)", "in the corridor");
    static double qt[2 * RIMEA_PLOT_SEEDS], qn[2 * RIMEA_PLOT_SEEDS];
    int nq = 0;
    for (int s = 0; s < d->seeds; ++s) {
        const rimea_stairs_run_t* r = &d->stairs[s];
        for (int i = 0; i < r->steps; ++i) a[i] = r->corridor[i];
        plot_chart_series(p, &chart,
                          &(plot_series_t){.x = t,
                                           .y = a,
                                           .count = r->steps,
                                           .color = plot_palette(2),
                                           .line = styles[s % 3],
                                           .mark = PLOT_MARK_NONE,
                                           .label = s ? NULL : "walkers in the corridor"});
        for (int k = 0; k < 2; ++k) {
            qt[nq] = r->queue_t[k] >= 0.0 ? r->queue_t[k] : NAN;
            qn[nq++] = r->queue[k];
        }
    }
    points(p, &chart, qt, qn, nq, (plot_rgb_t){0, 0, 0}, PLOT_MARK_RING,
           "judged: when the first reaches the stairs, 20 s on (must grow)");
    free(t);
    free(a);
    free(b);
}

/* ---- the bottleneck against measured crowds --------------------------------------------------- */

static void bottleneck(plot_t* p, const rimea_plot_data_t* d)
{
    char sub[400];
    snprintf(sub, sizeof sub,
             "150 from random starts in a 10 m room; J from the 10th to the 140th through (0 when fewer got "
             "through)");
    note_seeds(sub, sizeof sub, d);
    plot_title(p, "Bottleneck flow against measured crowds: flow per metre of width", sub);
    double top = 3.0, y0 = 0.0;
    for (int k = 0; k < RIMEA_PLOT_WIDTHS; ++k)
        for (int s = 0; s < d->seeds; ++s)
            if (isfinite(d->bn_per_m[k][s])) top = fmax(top, 1.15 * d->bn_per_m[k][s]);
    plot_nice_range(&y0, &top, 5);
    double x, y, w, h;
    plot_area(p, 0.0, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    plot_chart_t chart;
    plot_chart_setup(p, &chart, x, y, w, h, 0.6, 2.6, 0.0, top, "opening width b (m)", "J / b (per m and s)");
    hband(p, &chart, 1.6, 2.2, plot_palette(2), "measured crowds: 1.6-2.2 per m and s");
    static const plot_mark_t marks[5] = {PLOT_MARK_DOT, PLOT_MARK_SQUARE, PLOT_MARK_TRIANGLE, PLOT_MARK_RING,
                                         PLOT_MARK_CROSS};
    double per_m[RIMEA_PLOT_WIDTHS];
    char label[32];
    for (int s = 0; s < d->seeds; ++s) {
        for (int k = 0; k < RIMEA_PLOT_WIDTHS; ++k) per_m[k] = d->bn_per_m[k][s];
        /* a colour and mark per seed while they can be told apart */
        int each = d->seeds <= 5;
        snprintf(label, sizeof label, "seed %d", s + 1);
        points(p, &chart, d->bn_width, per_m, RIMEA_PLOT_WIDTHS, each ? plot_palette(s) : plot_palette(0),
               each ? marks[s] : PLOT_MARK_DOT,
               each ? label
               : s  ? NULL
                    : "each seed");
    }
}

/* ---- all of them ------------------------------------------------------------------------- */

int rimea_write_plots(const char* dir, const rimea_plot_data_t* d, int* drawn, char* err, int err_size)
{
    static void (*const draw[RIMEA_PICTURES])(plot_t*, const rimea_plot_data_t*) = {
        fundamental, premovement, evacuation, stairs, bottleneck};
    for (int k = 0; k < RIMEA_PICTURES; ++k) {
        const rimea_picture_t* pic = &rimea_pictures[k];
        drawn[k] = 0;
        if (!(d->ran & pic->needs)) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, pic->file);
        plot_t p;
        if (plot_open(&p, path, pic->width, pic->height, err, err_size) != 0) return -1;
        draw[k](&p, d);
        if (plot_close(&p, err, err_size) != 0) return -1;
        drawn[k] = 1;
    }
    return 0;
}
