/* `shoal plot dseek`: one directed-seek run (Figure 5 of Jakob,
 * "Directional extensions of seek steering behavior"). The run is
 * `shoal dseek`'s (dseek_simulate: the near-kinematic vehicle through the
 * world); the plan drawn over it is the geometry code's answer at the
 * start pose (dseek_steer_2d), so the picture shows what was planned and
 * what was flown, from the same code that steers. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/dseek/dseek_geom.h"
#include "cli/cli.h"
#include "experiments/dseek/dseek_run.h"
#include "cli/plot/plot.h"

/* DSEEK plans with r = 1.15 V / omega_max (src/modules/dseek/dseek.c,
 * DSEEK_RADIUS_MARGIN), and the run's vehicle turns at V / rmin. */
#define PLOT_DSEEK_MARGIN 1.15

typedef struct track {
    double* xy; /* x, y, heading per sample */
    int count, capacity, failed;
} track_t;

static void collect(void* ctx, int dims, double t, const shoal_agent_state_t* s)
{
    (void)dims;
    (void)t;
    track_t* k = ctx;
    if (k->failed) return;
    if (k->count == k->capacity) {
        int cap = k->capacity ? 2 * k->capacity : 1024;
        double* p = realloc(k->xy, (size_t)cap * 3 * sizeof(double));
        if (!p) {
            k->failed = 1;
            return;
        }
        k->xy = p;
        k->capacity = cap;
    }
    k->xy[3 * k->count] = s->position[0];
    k->xy[3 * k->count + 1] = s->position[1];
    k->xy[3 * k->count + 2] = s->heading;
    k->count++;
}

/* An arc of the plan: from point `from` around centre c by phi (rad) in
 * orientation turn (+1 counter-clockwise). */
static void arc_path(cairo_t* cr, vec2 c, vec2 from, double r, int turn, double phi)
{
    double a0 = atan2(from.y - c.y, from.x - c.x);
    cairo_new_sub_path(cr);
    if (turn > 0)
        cairo_arc(cr, c.x, c.y, r, a0, a0 + phi);
    else
        cairo_arc_negative(cr, c.x, c.y, r, a0, a0 - phi);
}

static void grow(double* b, double x, double y, double r)
{
    b[0] = fmin(b[0], x - r);
    b[1] = fmax(b[1], x + r);
    b[2] = fmin(b[2], y - r);
    b[3] = fmax(b[3], y + r);
}

typedef struct plot_dseek_options_t {
    plot_options_t common;
    const char *from, *to;
    double rmin, speed;
    int64_t replans;
} plot_dseek_options_t;

#define DSEEK_POSITIVE(name, metavar, field, help)                                                           \
    CLI_POSITIVE_ROW(name, metavar, plot_dseek_options_t, field, help)

static const cli_option_t dseek_options[] = {
    {.name = "--from",
     .metavar = "POSE",
     .kind = CLI_STRING,
     CLI_AT(plot_dseek_options_t, from),
     .help = "the start pose x,y,heading (heading in radians from +x; default 0,0,1.5708)"},
    {.name = "--to",
     .metavar = "POSE",
     .kind = CLI_STRING,
     CLI_AT(plot_dseek_options_t, to),
     .help = "the waypoint and the heading wanted there, x,y,heading (default 10,-3,3.1416)"},
    DSEEK_POSITIVE("--rmin", "R", rmin, "minimum turn radius, m (> 0; default 2)"),
    DSEEK_POSITIVE("--speed", "V", speed, "cruise speed, m/s (> 0; default 5)"),
    {.name = "--replans",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(plot_dseek_options_t, replans),
     .max = 50,
     .help = "also the plans of N later poses along the flight, 0..50 (default 0)"},
};

static const cli_spec_t dseek_spec = {
    .command = "plot dseek",
    .usage = "[options] -o FILE.png|FILE.svg",
    .about = "One directed-seek run (as `shoal dseek`, 2D): the flown path, the osculating\n"
             "circles and the planned 3-segment path (arc, tangent, arc) at the start.\n",
    .options = dseek_options,
    .option_count = CLI_COUNT(dseek_options),
    PLOT_SHARED(plot_dseek_options_t),
};

static int plot_kind_dseek(int argc, char** argv)
{
    plot_dseek_options_t opt = {.common = PLOT_OPTIONS_DEFAULT,
                                .from = "0,0,1.5708",
                                .to = "10,-3,3.1416",
                                .rmin = 2.0,
                                .speed = 5.0};
    int stop = plot_parse(&dseek_spec, argc, argv, &opt, &opt.common, NULL, NULL);
    if (stop >= 0) return stop;
    const plot_options_t* o = &opt.common;
    const char *from = opt.from, *to = opt.to;
    double rmin = opt.rmin, speed = opt.speed;
    int64_t replans = opt.replans;
    dseek_pose_t a, b;
    if (!dseek_parse_pose(from, 2, &a))
        return cli_usage_error("plot dseek", "--from '%s' is not x,y,heading (plots are 2D)", from);
    if (!dseek_parse_pose(to, 2, &b))
        return cli_usage_error("plot dseek", "--to '%s' is not x,y,heading (plots are 2D)", to);

    /* The run, exactly as `shoal dseek --from .. --to .. --rmin .. --speed ..`. */
    double dt = 0.02 * rmin / speed;
    double dist0 = hypot(a.p[0] - b.p[0], a.p[1] - b.p[1]);
    double max_time = 20.0 * (dist0 / speed + 2.0 * PLOT_PI * rmin / speed);
    track_t tr = {0};
    dseek_sim_result_t res;
    if (!dseek_simulate(2, &a, &b, rmin, speed, dt, max_time, DSEEK_VEHICLE_KINEMATIC, collect, &tr, &res)) {
        free(tr.xy);
        return CLI_EXIT_FAILURE;
    }
    if (tr.failed) {
        free(tr.xy);
        cli_error("plot: out of memory");
        return CLI_EXIT_FAILURE;
    }

    /* The plan at the start pose. */
    double r = PLOT_DSEEK_MARGIN * rmin;
    dseek_params_t prm = dseek_default_params((float)r);
    vec2 A = {a.p[0], a.p[1]}, dA = {a.d[0], a.d[1]}, W = {b.p[0], b.p[1]}, dW = {b.d[0], b.d[1]};
    dseek_result2_t plan;
    int have_plan = dseek_steer_2d(A, dA, W, dW, &prm, &plan) == DSEEK_OK && isfinite(plan.total_angle) &&
                    plan.stage != DSEEK_CLOSE;
    vec2 kA[2] = {{A.x - (float)r * dA.y, A.y + (float)r * dA.x},
                  {A.x + (float)r * dA.y, A.y - (float)r * dA.x}};
    vec2 kW[2] = {{W.x - (float)r * dW.y, W.y + (float)r * dW.x},
                  {W.x + (float)r * dW.y, W.y - (float)r * dW.x}};

    double bounds[4] = {1e300, -1e300, 1e300, -1e300};
    for (int i = 0; i < tr.count; ++i) grow(bounds, tr.xy[3 * i], tr.xy[3 * i + 1], 0.0);
    for (int i = 0; i < 2; ++i) {
        grow(bounds, kA[i].x, kA[i].y, r);
        grow(bounds, kW[i].x, kW[i].y, r);
    }
    double pad = 0.06 * fmax(bounds[1] - bounds[0], bounds[3] - bounds[2]);

    char err[512];
    plot_t p;
    if (plot_open(&p, o->output, o->width, o->height, err, sizeof err) != 0) {
        free(tr.xy);
        cli_error("plot: %s", err);
        return CLI_EXIT_FAILURE;
    }
    char title[256], sub[256];
    snprintf(title, sizeof title, "Directed seek: (%g, %g) heading %.0f deg to (%g, %g) heading %.0f deg",
             a.p[0], a.p[1], a.heading * 180.0 / PLOT_PI, b.p[0], b.p[1], b.heading * 180.0 / PLOT_PI);
    snprintf(sub, sizeof sub,
             "turn radius %g m at %g m/s (plans with r = %.3g m); %s: miss %.3f m, heading error %.2f deg, "
             "path %.1f m in %.2f s",
             rmin, speed, r, res.reached ? "reached" : "NOT reached", res.position_error,
             res.heading_error_deg, res.path_length, res.time);
    plot_title(&p, title, sub);
    plot_panel_t panel;
    plot_panel_full(&p, &panel, bounds[0] - pad, bounds[1] + pad, bounds[2] - pad, bounds[3] + pad, "x (m)",
                    "y (m)");
    plot_panel_begin(&p, &panel);
    cairo_t* cr = p.cr;
    const plot_rgb_t grey = {0.55, 0.55, 0.6}, plan_c = {0.835, 0.369, 0.0}, flown_c = {0.0, 0.447, 0.698},
                     mark_c = {0.15, 0.15, 0.18}, way_c = {0.0, 0.62, 0.451};
    /* Every osculating circle: the agent's two, and k_W and k'_W. */
    for (int i = 0; i < 2; ++i) {
        plot_circle(&p, kA[i].x, kA[i].y, r);
        plot_circle(&p, kW[i].x, kW[i].y, r);
    }
    plot_set_color(&p, grey, 0.8);
    plot_dash_px(&p, 5, 4);
    plot_stroke_px(&p, 1.0);
    plot_dash_px(&p, 0, 0);
    /* The plans of later poses along the flight, faint: how the plan the
     * agent follows changes as it goes (it replans every step). */
    for (int j = 1; j <= replans; ++j) {
        int k = (int)((int64_t)j * tr.count / (replans + 1));
        vec2 P = {(float)tr.xy[3 * k], (float)tr.xy[3 * k + 1]};
        vec2 dP = {cosf((float)tr.xy[3 * k + 2]), sinf((float)tr.xy[3 * k + 2])};
        dseek_result2_t later;
        if (dseek_steer_2d(P, dP, W, dW, &prm, &later) != DSEEK_OK || !isfinite(later.total_angle) ||
            later.stage == DSEEK_CLOSE)
            continue;
        if (later.stage == DSEEK_STAGE_I)
            arc_path(cr, later.center_agent, P, r, later.agent_turn, later.phi_agent);
        else
            cairo_move_to(cr, P.x, P.y);
        if (later.stage != DSEEK_STAGE_III) cairo_line_to(cr, later.tangent_to.x, later.tangent_to.y);
        vec2 arc_from = later.stage == DSEEK_STAGE_III ? P : later.tangent_to;
        arc_path(cr, later.center_waypoint, arc_from, r, later.waypoint_turn, later.phi_waypoint);
        plot_set_color(&p, plan_c, 0.35);
        plot_stroke_px(&p, 1.2);
        plot_dot(&p, &panel, P.x, P.y, 2.0);
    }
    if (have_plan) {
        /* The chosen circles, then the path: arc on k_A, tangent, arc on k_W. */
        plot_circle(&p, plan.center_agent.x, plan.center_agent.y, r);
        plot_circle(&p, plan.center_waypoint.x, plan.center_waypoint.y, r);
        plot_set_color(&p, plan_c, 0.45);
        plot_stroke_px(&p, 1.2);
        plot_set_color(&p, plan_c, 1.0);
        plot_dot(&p, &panel, plan.center_agent.x, plan.center_agent.y, 2.5);
        plot_dot(&p, &panel, plan.center_waypoint.x, plan.center_waypoint.y, 2.5);
        arc_path(cr, plan.center_agent, A, r, plan.agent_turn, plan.phi_agent);
        cairo_line_to(cr, plan.tangent_to.x, plan.tangent_to.y);
        arc_path(cr, plan.center_waypoint, plan.tangent_to, r, plan.waypoint_turn, plan.phi_waypoint);
        plot_set_color(&p, plan_c, 0.9);
        plot_dash_px(&p, 9, 5);
        plot_stroke_px(&p, 3.0);
        plot_dash_px(&p, 0, 0);
        plot_set_color(&p, plan_c, 1.0);
        plot_dot(&p, &panel, plan.tangent_from.x, plan.tangent_from.y, 3.5);
        plot_dot(&p, &panel, plan.tangent_to.x, plan.tangent_to.y, 3.5);
    }
    /* What was flown. */
    for (int i = 0; i < tr.count; ++i) {
        if (i == 0)
            cairo_move_to(cr, tr.xy[0], tr.xy[1]);
        else
            cairo_line_to(cr, tr.xy[3 * i], tr.xy[3 * i + 1]);
    }
    plot_set_color(&p, flown_c, 1.0);
    plot_stroke_px(&p, 2.0);
    plot_set_color(&p, mark_c, 1.0);
    plot_arrow(&p, &panel, A.x, A.y, a.heading, 34, 2.2);
    plot_set_color(&p, way_c, 1.0);
    plot_arrow(&p, &panel, W.x, W.y, b.heading, 34, 2.2);
    plot_dot(&p, &panel, W.x, W.y, 4);
    plot_set_color(&p, mark_c, 1.0);
    plot_text_at(&p, &panel, A.x, A.y, -14, 18, "A");
    plot_text_at(&p, &panel, W.x, W.y, -14, 18, "W");
    if (have_plan) {
        plot_text_at(&p, &panel, plan.center_agent.x, plan.center_agent.y, 6, -6, "k_A");
        plot_text_at(&p, &panel, plan.center_waypoint.x, plan.center_waypoint.y, 6, -6, "k_W");
    }
    plot_panel_end(&p);
    plot_scale_bar(&p, &panel);
    plot_legend(&p, flown_c, 0, "flown path");
    if (have_plan) {
        char label[128];
        snprintf(label, sizeof label, "plan at start (%s: arc %.0f deg, tangent %.1f m, arc %.0f deg)",
                 plan.path_is_cross ? "cross" : "direct", plan.phi_agent * 180.0 / PLOT_PI,
                 plan.tangent_length, plan.phi_waypoint * 180.0 / PLOT_PI);
        plot_legend(&p, plan_c, 2, label);
    }
    if (replans > 0) {
        char label[64];
        snprintf(label, sizeof label, "plans at %d later poses", (int)replans);
        plot_legend(&p, plan_c, 0, label);
    }
    plot_legend(&p, grey, 2, "osculating circles");
    plot_legend(&p, way_c, 0, "waypoint heading");
    free(tr.xy);
    if (plot_close(&p, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        return CLI_EXIT_FAILURE;
    }
    snprintf(title, sizeof title, "directed seek, %s", res.reached ? "reached" : "not reached");
    plot_report(&p, &panel, title);
    return CLI_EXIT_OK;
}

const cli_command_t cli_plot_dseek = {"dseek", "one directed-seek run: the flown path and the planned one",
                                      plot_kind_dseek};
