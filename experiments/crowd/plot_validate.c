/* `shoal validate crowd --plots DIR`: one picture per experiment, from what
 * experiments/crowd/validate_crowd.c measured (validate.h), on the charts and panels of
 * cli/plot/plot.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shoal/shoal.h"
#include "cli/plot/plot.h"
#include "experiments/crowd/validate.h"

enum { WIDTH = 800, HEIGHT = 500 };

static const plot_rgb_t wall_ink = {0.25, 0.25, 0.28};
static const plot_rgb_t reference_ink = {0.35, 0.35, 0.38};
static const plot_rgb_t limit_ink = {0.75, 0.1, 0.1};

int validate_plot_dir(const char* dir, char* err, int err_size)
{
    char path[1024];
    size_t n = strlen(dir);
    if (n >= sizeof path) {
        snprintf(err, (size_t)err_size, "--plots: the directory name is too long");
        return -1;
    }
    memcpy(path, dir, n + 1);
    /* each parent, then dir itself; one that exists is fine (a file there
     * makes the next step fail with ENOTDIR, which names the cause) */
    for (size_t i = 1; i <= n; ++i) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char keep = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            snprintf(err, (size_t)err_size, "--plots '%s': cannot make directory '%s': %s", dir, path,
                     strerror(errno));
            return -1;
        }
        path[i] = keep;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, (size_t)err_size, "--plots '%s': not a directory", dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, (size_t)err_size, "--plots '%s': cannot write into it: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- a picture ------------------------------------------------------------------ */

static int begin(plot_t* p, const char* dir, const char* name, char* err, int err_size)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return plot_open(p, path, WIDTH, HEIGHT, err, err_size);
}

/* The note a subtitle ends with when the figures come from --quick. */
static void note_quick(char* buf, size_t size, const validate_plot_data_t* d)
{
    size_t n = strlen(buf);
    if (d->quick && n < size) snprintf(buf + n, size - n, " (--quick: coarser)");
}

static void line_px(plot_t* p, double x0, double y0, double x1, double y1, double width_px)
{
    cairo_move_to(p->cr, x0, y0);
    cairo_line_to(p->cr, x1, y1);
    plot_stroke_px(p, width_px);
}

/* Pedestrians as discs of their true radius, with a thin rim. */
static void disc(plot_t* p, double x, double y, double r, plot_rgb_t c)
{
    plot_circle(p, x, y, r);
    plot_set_color(p, c, 0.85);
    cairo_fill_preserve(p->cr);
    plot_set_color(p, (plot_rgb_t){0.1, 0.1, 0.12}, 0.6);
    plot_stroke_px(p, 0.8);
}

/* ---- free walking --------------------------------------------------------------- */

static void free_walk(plot_t* p, const validate_plot_data_t* d)
{
    char sub[320], buf[64];
    snprintf(
        sub, sizeof sub,
        "one pedestrian, pedestrian preset, dt %.2f s: the travel times differ by %.2f %% (at most 1 %%)",
        d->dt, 100.0 * d->spread);
    note_quick(sub, sizeof sub, d);
    plot_title(p, "Free walking: 10 m down a 2 m corridor along 0, 45 and 90 degrees", sub);
    static const plot_line_t lines[3] = {PLOT_LINE_SOLID, PLOT_LINE_DASHED, PLOT_LINE_DOTTED};

    /* left: the corridors (walls at 1 m either side from -2 m to 14 m
     * along, the finish at 10 m) and the paths, in metres */
    double x, y, w, h;
    plot_area(p, 0.0, 0.45, 0.0, 1.0, &x, &y, &w, &h);
    plot_panel_t panel;
    plot_panel_setup(p, &panel, x, y, w, h, -2.5, 14.5, -2.5, 14.5, "x (m)", "y (m)");
    plot_panel_begin(p, &panel);
    for (int k = 0; k < 3; ++k) {
        double a = d->angle_deg[k] * PLOT_PI / 180.0, c = cos(a), s = sin(a);
        plot_rgb_t col = plot_palette(k);
        plot_set_color(p, col, 0.45);
        for (int side = -1; side <= 1; side += 2)
            line_px(p, -2 * c - s * side, -2 * s + c * side, 14 * c - s * side, 14 * s + c * side, 2.0);
        plot_dash_px(p, 3.0, 3.0);
        line_px(p, 10 * c + s, 10 * s - c, 10 * c - s, 10 * s + c, 1.5);
        plot_dash_px(p, 0.0, 0.0);
        plot_set_color(p, col, 1.0);
        for (int i = 0; i < d->path_count[k]; ++i) {
            if (i == 0)
                cairo_move_to(p->cr, d->path[k][0], d->path[k][1]);
            else
                cairo_line_to(p->cr, d->path[k][2 * i], d->path[k][2 * i + 1]);
        }
        plot_stroke_px(p, 2.5);
    }
    plot_panel_end(p);
    plot_text_at(p, &panel, 10.2, -1.9, 0, 0, "10 m");

    /* right: distance along the corridor against time */
    plot_area(p, 0.45, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    double tmax = 0.0;
    for (int k = 0; k < 3; ++k) tmax = fmax(tmax, d->seconds[k]);
    double t0 = 0.0, t1 = tmax + 1.0;
    plot_nice_range(&t0, &t1, 5);
    plot_chart_t chart;
    plot_chart_setup(p, &chart, x, y, w, h, t0, t1, 0.0, 12.0, "time (s)", "distance along the corridor (m)");
    double tt[2] = {t0, t1}, ten[2] = {10.0, 10.0};
    plot_chart_series(p, &chart,
                      &(plot_series_t){
                          .x = tt,
                          .y = ten,
                          .count = 2,
                          .color = reference_ink,
                          .line = PLOT_LINE_DOTTED,
                          .mark = PLOT_MARK_NONE,
                      });
    for (int k = 0; k < 3; ++k) {
        double a = d->angle_deg[k] * PLOT_PI / 180.0, c = cos(a), s = sin(a);
        double t[VALIDATE_PATH_MAX], along[VALIDATE_PATH_MAX];
        for (int i = 0; i < d->path_count[k]; ++i) {
            t[i] = i * d->dt;
            along[i] = d->path[k][2 * i] * c + d->path[k][2 * i + 1] * s;
        }
        snprintf(buf, sizeof buf, "%g deg: %.3f s", d->angle_deg[k], d->seconds[k]);
        plot_chart_series(p, &chart,
                          &(plot_series_t){.x = t,
                                           .y = along,
                                           .count = d->path_count[k],
                                           .color = plot_palette(k),
                                           .line = lines[k],
                                           .mark = PLOT_MARK_NONE,
                                           .label = buf});
        plot_chart_series(p, &chart,
                          &(plot_series_t){
                              .x = &d->seconds[k],
                              .y = &ten[0],
                              .count = 1,
                              .color = plot_palette(k),
                              .line = PLOT_LINE_NONE,
                              .mark = PLOT_MARK_RING,
                          });
    }
    plot_chart_text(p, &chart, t0, 10.0, 6, -6, 0.0, "10 m: the travel time");
}

/* ---- fundamental diagram ---------------------------------------------------------- */

static void fundamental(plot_t* p, const validate_plot_data_t* d)
{
    char sub[320], gap[64], preset[64], curve[96];
    snprintf(sub, sizeof sub,
             "periodic corridor %.0f m x %.0f m, everyone walking one way; the mean speed over %.0f s after "
             "%.0f s",
             d->corridor_length, d->corridor_width, d->measure_s, d->warm_s);
    note_quick(sub, sizeof sub, d);
    plot_title(p, "Fundamental diagram: mean walking speed against density", sub);
    plot_chart_t chart;
    double x, y, w, h;
    plot_area(p, 0.0, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, 5.5, 0.0, 1.6, "density (pedestrians per m\u00b2)",
                     "mean speed (m/s)");
    /* Weidmann's curve, and the requirement (within 0.15 m/s of it up to 3
     * per m^2, 0.2 m/s past it) */
    enum { N = 120 };
    double rho[N], v[N], band_rho[N], lo[N], hi[N];
    for (int i = 0; i < N; ++i) {
        rho[i] = 0.2 + (WEIDMANN_RHO_MAX - 0.2) * i / (N - 1);
        v[i] = validate_weidmann(rho[i]);
        band_rho[i] = 0.2 + (5.3 - 0.2) * i / (N - 1);
        double tol = band_rho[i] <= 3.0 ? 0.15 : 0.2;
        lo[i] = fmax(0.0, validate_weidmann(band_rho[i]) - tol);
        hi[i] = validate_weidmann(band_rho[i]) + tol;
    }
    plot_chart_band(p, &chart, band_rho, lo, hi, N, reference_ink,
                    "within 0.15 m/s up to 3 /m\u00b2, 0.2 m/s past it");
    snprintf(curve, sizeof curve, "Weidmann: v0 %.2f m/s, gamma %.3f /m\u00b2, rho_max %.1f /m\u00b2",
             WEIDMANN_V0, WEIDMANN_GAMMA, WEIDMANN_RHO_MAX);
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = rho,
                                       .y = v,
                                       .count = N,
                                       .color = reference_ink,
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_NONE,
                                       .label = curve});
    shoal_crowd_t crowd = shoal_crowd_default();
    shoal_vehicle_t vehicle = shoal_vehicle_default();
    shoal_crowd_preset("pedestrian", &crowd, &vehicle, NULL);
    snprintf(preset, sizeof preset, "pedestrian preset from a lattice (time_gap %.1f s)",
             (double)crowd.time_gap);
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = d->density,
                                       .y = d->speed,
                                       .count = d->densities,
                                       .color = plot_palette(1),
                                       .line = PLOT_LINE_DASHED,
                                       .mark = PLOT_MARK_SQUARE,
                                       .label = preset});
    snprintf(gap, sizeof gap, "random start");
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = d->density,
                                       .y = d->speed_random,
                                       .count = d->densities,
                                       .color = plot_palette(0),
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_DOT,
                                       .label = gap});
}

/* ---- bottleneck ---------------------------------------------------------------------- */

static void bottleneck(plot_t* p, const validate_plot_data_t* d)
{
    char sub[320], buf[96];
    snprintf(sub, sizeof sub,
             "100 pedestrians leave a 10 m x 10 m room for the opening; the flow is 80 over the time from "
             "the 10th to the 90th out%s",
             d->fit ? "" : "; no fit (fewer than two widths flowed)");
    note_quick(sub, sizeof sub, d);
    plot_title(p, "Bottleneck: flow through an opening against its width", sub);

    /* left: flow against width */
    double x, y, w, h;
    plot_area(p, 0.0, 0.5, 0.0, 1.0, &x, &y, &w, &h);
    double top = 0.0;
    for (int k = 0; k < d->widths; ++k) top = fmax(top, d->flow[k]);
    double ymax = fmax(1.0, 1.25 * top), y0 = 0.0;
    plot_nice_range(&y0, &ymax, 5);
    plot_chart_t chart;
    plot_chart_setup(p, &chart, x, y, w, h, 0.6, 2.6, 0.0, ymax, "opening width (m)", "flow (pedestrians/s)");
    double flowed[VALIDATE_WIDTHS], clogged[VALIDATE_WIDTHS], zero[VALIDATE_WIDTHS];
    int any_clogged = 0;
    for (int k = 0; k < d->widths; ++k) {
        flowed[k] = d->flow[k] >= 0.0 ? d->flow[k] : NAN;
        clogged[k] = d->flow[k] >= 0.0 ? NAN : d->width[k];
        zero[k] = 0.0;
        any_clogged |= d->flow[k] < 0.0;
    }
    if (d->fit) {
        double fx[2] = {0.6, 2.6}, fy[2] = {d->slope * 0.6 + d->intercept, d->slope * 2.6 + d->intercept};
        snprintf(buf, sizeof buf, "fit: %.3f w %c %.3f (r\u00b2 %.2f)", d->slope,
                 d->intercept < 0.0 ? '-' : '+', fabs(d->intercept), d->r2);
        plot_chart_series(p, &chart,
                          &(plot_series_t){.x = fx,
                                           .y = fy,
                                           .count = 2,
                                           .color = reference_ink,
                                           .line = PLOT_LINE_DASHED,
                                           .mark = PLOT_MARK_NONE,
                                           .label = buf});
    }
    /* what people do: a specific flow of about 1.9 per m and s through
     * openings of 1 m and more (docs/crowds.md) */
    double rx[2] = {1.0, 2.6}, ry[2] = {1.9, 1.9 * 2.6};
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = rx,
                                       .y = ry,
                                       .count = 2,
                                       .color = plot_palette(2),
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_NONE,
                                       .label = "experiments: about 1.9 w (per m and s)"});
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = d->width,
                                       .y = flowed,
                                       .count = d->widths,
                                       .color = plot_palette(0),
                                       .line = PLOT_LINE_NONE,
                                       .mark = PLOT_MARK_DOT,
                                       .label = "measured"});
    if (any_clogged) {
        plot_chart_series(p, &chart,
                          &(plot_series_t){.x = clogged,
                                           .y = zero,
                                           .count = d->widths,
                                           .color = limit_ink,
                                           .line = PLOT_LINE_NONE,
                                           .mark = PLOT_MARK_CROSS,
                                           .label = "clogged: fewer than 90 out in 200 s"});
        for (int k = 0; k < d->widths; ++k)
            if (d->flow[k] < 0.0) plot_chart_text(p, &chart, d->width[k], 0.0, 0, -10, 0.5, "clogged");
    }

    /* right: how many are out, against time, per width */
    plot_area(p, 0.5, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    double tmax = any_clogged ? 200.0 : 10.0; /* a clogged run went on for 200 s */
    for (int k = 0; k < d->widths; ++k)
        if (d->passed[k] > 0) tmax = fmax(tmax, d->pass_time[k][d->passed[k] - 1]);
    double t0 = 0.0;
    plot_nice_range(&t0, &tmax, 5);
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, tmax, 0.0, 100.0, "time (s)", "pedestrians out");
    double tt[2] = {0.0, tmax}, n10[2] = {10.0, 10.0}, n90[2] = {90.0, 90.0};
    plot_chart_series(p, &chart,
                      &(plot_series_t){
                          .x = tt,
                          .y = n10,
                          .count = 2,
                          .color = reference_ink,
                          .line = PLOT_LINE_DOTTED,
                          .mark = PLOT_MARK_NONE,
                      });
    plot_chart_series(p, &chart,
                      &(plot_series_t){
                          .x = tt,
                          .y = n90,
                          .count = 2,
                          .color = reference_ink,
                          .line = PLOT_LINE_DOTTED,
                          .mark = PLOT_MARK_NONE,
                      });
    for (int k = 0; k < d->widths; ++k) {
        /* a step up at each passing, flat to the end of the run */
        double t[2 * VALIDATE_EVACUEES + 2], count[2 * VALIDATE_EVACUEES + 2];
        int n = 0;
        t[n] = 0.0;
        count[n++] = 0.0;
        for (int i = 0; i < d->passed[k]; ++i) {
            t[n] = d->pass_time[k][i];
            count[n++] = i;
            t[n] = d->pass_time[k][i];
            count[n++] = i + 1;
        }
        t[n] = tmax;
        count[n++] = d->passed[k];
        snprintf(buf, sizeof buf, "%.1f m", d->width[k]);
        plot_chart_series(p, &chart,
                          &(plot_series_t){.x = t,
                                           .y = count,
                                           .count = n,
                                           .color = plot_palette(k + 1),
                                           .line = PLOT_LINE_SOLID,
                                           .mark = PLOT_MARK_NONE,
                                           .label = buf});
    }
}

/* ---- counter-flow ---------------------------------------------------------------------- */

static void counterflow(plot_t* p, const validate_plot_data_t* d)
{
    char sub[320];
    snprintf(
        sub, sizeof sub,
        "periodic corridor %.0f m x %.0f m, %d pedestrians (2 /m\u00b2) half each way from a mixed start; "
        "%d stuck",
        d->corridor_length, d->corridor_width, d->agents, d->stuck);
    note_quick(sub, sizeof sub, d);
    plot_title(p, "Counter-flow: do lanes form?", sub);

    /* top: the lane order against time */
    double x, y, w, h;
    plot_area(p, 0.0, 1.0, 0.0, 0.55, &x, &y, &w, &h);
    plot_chart_t chart;
    plot_chart_setup(p, &chart, x, y, w, h, 0.0, d->counter_seconds, 0.0, 1.0, "time (s)", "lane order");
    double tt[2] = {0.0, d->counter_seconds}, half[2] = {0.5, 0.5};
    plot_chart_series(p, &chart,
                      &(plot_series_t){
                          .x = tt,
                          .y = half,
                          .count = 2,
                          .color = reference_ink,
                          .line = PLOT_LINE_DOTTED,
                          .mark = PLOT_MARK_NONE,
                      });
    plot_chart_text(p, &chart, d->counter_seconds, 0.5, -6, -6, 1.0, "0.5: mixed");
    plot_chart_series(
        p, &chart,
        &(plot_series_t){.x = d->order_time,
                         .y = d->order,
                         .count = d->order_count,
                         .color = plot_palette(2),
                         .line = PLOT_LINE_SOLID,
                         .mark = PLOT_MARK_NONE,
                         .label = "lane order: share of neighbours within 1 m that walk one's way"});

    /* bottom: where everyone ended, to scale */
    plot_area(p, 0.0, 1.0, 0.55, 1.0, &x, &y, &w, &h);
    plot_panel_t panel;
    double L = d->corridor_length, W = d->corridor_width;
    plot_panel_setup(p, &panel, x, y, w, h, 0.0, L, -0.3, W + 0.3, "x (m)", "y (m)");
    plot_panel_begin(p, &panel);
    plot_set_color(p, wall_ink, 1.0);
    line_px(p, -1.0, 0.0, L + 1.0, 0.0, 2.5);
    line_px(p, -1.0, W, L + 1.0, W, 2.5);
    for (int i = 0; i < d->agents; ++i)
        disc(p, d->final_xy[2 * i], d->final_xy[2 * i + 1], d->radius,
             plot_palette(d->final_group[i] ? 1 : 0));
    for (int i = 0; i < d->agents; ++i) {
        if (!d->final_stuck[i]) continue;
        plot_set_color(p, (plot_rgb_t){0, 0, 0}, 1.0);
        plot_circle(p, d->final_xy[2 * i], d->final_xy[2 * i + 1], 1.6 * d->radius);
        plot_stroke_px(p, 1.8);
    }
    plot_panel_end(p);
    plot_legend(p, plot_palette(0), 1, "walking +x");
    plot_legend(p, plot_palette(1), 1, "walking -x");
    plot_legend_series(p, &(plot_series_t){.color = (plot_rgb_t){0, 0, 0},
                                           .line = PLOT_LINE_NONE,
                                           .mark = PLOT_MARK_RING,
                                           .label = "stuck: under 0.1 m/s over the last 10 s"});
}

/* ---- compression ---------------------------------------------------------------------- */

static void compression(plot_t* p, const validate_plot_data_t* d)
{
    char sub[320];
    snprintf(
        sub, sizeof sub,
        "all seek a point far to the right, dt 0.1 s: largest overlap %.2f %% of a radius, deepest into a "
        "wall %.2f %% (at most 1 %%)",
        100.0 * d->overlap, 100.0 * d->penetration);
    note_quick(sub, sizeof sub, d);
    plot_title(p, "Compression: 144 pedestrians pressed into one side of a closed 5 m box", sub);

    /* left: each step's worst, in % of a radius */
    double x, y, w, h;
    plot_area(p, 0.0, 0.58, 0.0, 1.0, &x, &y, &w, &h);
    double t[VALIDATE_BOX_STEPS], pair[VALIDATE_BOX_STEPS], wall[VALIDATE_BOX_STEPS], top = 1.0;
    for (int k = 0; k < d->box_steps; ++k) {
        t[k] = (k + 1) * 0.1;
        pair[k] = 100.0 * d->step_overlap[k];
        wall[k] = 100.0 * d->step_penetration[k];
        top = fmax(top, fmax(pair[k], wall[k]));
    }
    double y0 = 0.0, y1 = 1.25 * top, t0 = 0.0, t1 = d->box_steps * 0.1;
    plot_nice_range(&y0, &y1, 5);
    plot_chart_t chart;
    plot_chart_setup(p, &chart, x, y, w, h, t0, t1, 0.0, y1, "time (s)", "% of a radius (worst of the step)");
    double tt[2] = {t0, t1}, limit[2] = {1.0, 1.0};
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = tt,
                                       .y = limit,
                                       .count = 2,
                                       .color = limit_ink,
                                       .line = PLOT_LINE_DASHED,
                                       .mark = PLOT_MARK_NONE,
                                       .label = "the limit: 1 %"});
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = t,
                                       .y = pair,
                                       .count = d->box_steps,
                                       .color = plot_palette(0),
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_NONE,
                                       .label = "largest overlap of two"});
    plot_chart_series(p, &chart,
                      &(plot_series_t){.x = t,
                                       .y = wall,
                                       .count = d->box_steps,
                                       .color = plot_palette(1),
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_NONE,
                                       .label = "deepest into a wall"});

    /* right: the box and where everyone ended */
    plot_area(p, 0.58, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    plot_panel_t panel;
    double s = d->box_side;
    plot_panel_setup(p, &panel, x, y, w, h, -0.2, s + 0.2, -0.2, s + 0.2, "x (m)", "y (m)");
    plot_panel_begin(p, &panel);
    plot_set_color(p, wall_ink, 1.0);
    cairo_rectangle(p->cr, 0.0, 0.0, s, s);
    plot_stroke_px(p, 2.5);
    for (int i = 0; i < VALIDATE_BOX_AGENTS; ++i)
        disc(p, d->box_xy[2 * i], d->box_xy[2 * i + 1], d->radius, plot_palette(4));
    plot_panel_end(p);
    plot_legend(p, plot_palette(4), 1, "pedestrians at the end (r 0.2 m, to scale)");
}

/* ---- all of them ------------------------------------------------------------------------- */

int validate_write_plots(const char* dir, const validate_plot_data_t* d, char* err, int err_size)
{
    static const struct {
        const char* file;
        void (*draw)(plot_t*, const validate_plot_data_t*);
    } pictures[] = {
        {"free_walk.png", free_walk},     {"fundamental.png", fundamental}, {"bottleneck.png", bottleneck},
        {"counterflow.png", counterflow}, {"compression.png", compression},
    };
    for (size_t i = 0; i < sizeof pictures / sizeof pictures[0]; ++i) {
        plot_t p;
        if (begin(&p, dir, pictures[i].file, err, err_size) != 0) return -1;
        pictures[i].draw(&p, d);
        if (plot_close(&p, err, err_size) != 0) return -1;
    }
    return 0;
}
