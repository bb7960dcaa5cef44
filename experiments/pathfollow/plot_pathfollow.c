/* `shoal plot pathfollow`: one ground vehicle on one course (de Schaetzen
 * and Sestini, "Efficient ground vehicle path following in game AI").
 * The run is `shoal pathfollow`'s (pf_run_course_observed through the
 * world); the picture is the course seen from above: terrain shading, the
 * corridor (every point within half_width of the path, which is what the
 * follower's inside_corridor counts), obstacles, the path, and the track
 * coloured by speed with stuck events and teleports marked. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "experiments/pathfollow/courses.h"
#include "experiments/pathfollow/pathfollow_runs.h"
#include "cli/plot/plot.h"

typedef struct pf_sample {
    float x, y, speed;
    int32_t stuck, stuck_events, teleports;
} pf_sample_t;

typedef struct pf_track {
    pf_sample_t* s;
    int count, capacity, failed;
} pf_track_t;

static void observe(void* ctx, int vehicle, double t, const shoal_agent_state_t* s,
                    const shoal_ground_status_t* g)
{
    (void)vehicle;
    (void)t;
    pf_track_t* k = ctx;
    if (k->failed) return;
    if (k->count == k->capacity) {
        int cap = k->capacity ? 2 * k->capacity : 4096;
        pf_sample_t* p = realloc(k->s, (size_t)cap * sizeof *p);
        if (!p) {
            k->failed = 1;
            return;
        }
        k->s = p;
        k->capacity = cap;
    }
    k->s[k->count++] = (pf_sample_t){.x = s->position[0],
                                     .y = s->position[1],
                                     .speed = fabsf(g->speed),
                                     .stuck = g->stuck,
                                     .stuck_events = g->stuck_events,
                                     .teleports = g->teleports};
}

/* Terrain as a hill-shaded image under everything: tint by height, shade by
 * slope toward a light in the north-west. One image pixel per terrain
 * sample, smoothed by cairo's bilinear filter. */
static void draw_terrain(plot_t* p, const course_t* c, float* hmin_out, float* hmax_out)
{
    *hmin_out = *hmax_out = 0.0f;
    if (!c->heights || c->nx < 2 || c->ny < 2) return;
    float hmin = c->heights[0], hmax = c->heights[0];
    for (int i = 0; i < c->nx * c->ny; ++i) {
        hmin = fminf(hmin, c->heights[i]);
        hmax = fmaxf(hmax, c->heights[i]);
    }
    *hmin_out = hmin;
    *hmax_out = hmax;
    cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, c->nx, c->ny);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(img);
        return;
    }
    cairo_surface_flush(img);
    unsigned char* data = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    double span = hmax - hmin > 1e-6 ? hmax - hmin : 1.0;
    for (int j = 0; j < c->ny; ++j)
        for (int i = 0; i < c->nx; ++i) {
            int i0 = i > 0 ? i - 1 : i, i1 = i < c->nx - 1 ? i + 1 : i;
            int j0 = j > 0 ? j - 1 : j, j1 = j < c->ny - 1 ? j + 1 : j;
            double gx = (c->heights[j * c->nx + i1] - c->heights[j * c->nx + i0]) / ((i1 - i0) * c->cell);
            double gy = (c->heights[j1 * c->nx + i] - c->heights[j0 * c->nx + i]) / ((j1 - j0) * c->cell);
            /* normal (-gx, -gy, 1); light from (-1, 1, 1.5) */
            double lambert = (gx - gy + 1.5) / (sqrt(gx * gx + gy * gy + 1.0) * sqrt(4.25));
            double shade = 0.78 + 0.22 * fmin(1.0, fmax(0.0, lambert));
            double t = (c->heights[j * c->nx + i] - hmin) / span;
            double r = (0.90 - 0.10 * t) * shade, g = (0.94 - 0.18 * t) * shade,
                   b = (0.86 - 0.26 * t) * shade;
            uint32_t px = (uint32_t)(r * 255.0) << 16 | (uint32_t)(g * 255.0) << 8 | (uint32_t)(b * 255.0);
            memcpy(data + (size_t)j * (size_t)stride + 4u * (size_t)i, &px, 4);
        }
    cairo_surface_mark_dirty(img);
    cairo_t* cr = p->cr;
    cairo_pattern_t* pat = cairo_pattern_create_for_surface(img);
    cairo_matrix_t m; /* world -> image: (x - origin) / cell + 0.5 (sample centres) */
    cairo_matrix_init(&m, 1.0 / c->cell, 0.0, 0.0, 1.0 / c->cell, 0.5 - c->origin[0] / c->cell,
                      0.5 - c->origin[1] / c->cell);
    cairo_pattern_set_matrix(pat, &m);
    cairo_pattern_set_filter(pat, CAIRO_FILTER_BILINEAR);
    cairo_pattern_set_extend(pat, CAIRO_EXTEND_PAD);
    cairo_set_source(cr, pat);
    cairo_rectangle(cr, c->origin[0], c->origin[1], (c->nx - 1) * c->cell, (c->ny - 1) * c->cell);
    cairo_fill(cr);
    cairo_pattern_destroy(pat);
    cairo_surface_destroy(img);
}

typedef struct plot_pathfollow_options_t {
    plot_options_t common;
    const char *vehicle, *course, *follower;
} plot_pathfollow_options_t;

static const cli_option_t pathfollow_options[] = {
    {.name = "--vehicle",
     .metavar = "NAME",
     .kind = CLI_STRING,
     CLI_AT(plot_pathfollow_options_t, vehicle),
     .help = "buggy, car, apc, truck, tank or hovercraft (required)"},
    {.name = "--course",
     .metavar = "NAME",
     .kind = CLI_STRING,
     CLI_AT(plot_pathfollow_options_t, course),
     .help = "one of the experiment's courses, as `shoal pathfollow --course` (required)"},
    {.name = "--follower",
     .metavar = "KIND",
     .kind = CLI_STRING,
     CLI_AT(plot_pathfollow_options_t, follower),
     .help = "proposed (default) or baseline"},
};

static const cli_spec_t pathfollow_spec = {
    .command = "plot pathfollow",
    .usage = "--vehicle NAME --course NAME [options] -o FILE.png|FILE.svg",
    .about = "One ground vehicle on one course (as `shoal pathfollow`): path, corridor,\n"
             "obstacles, terrain shading and the track coloured by speed; stuck events and\n"
             "teleports marked.\n",
    .options = pathfollow_options,
    .option_count = CLI_COUNT(pathfollow_options),
    PLOT_SHARED(plot_pathfollow_options_t),
};

static int plot_kind_pathfollow(int argc, char** argv)
{
    plot_pathfollow_options_t opt = {.common = PLOT_OPTIONS_DEFAULT, .follower = "proposed"};
    int stop = plot_parse(&pathfollow_spec, argc, argv, &opt, &opt.common, NULL, NULL);
    if (stop >= 0) return stop;
    const plot_options_t* o = &opt.common;
    const char *vehicle = opt.vehicle, *course_name = opt.course, *kind = opt.follower;
    if (!vehicle || !course_name)
        return cli_usage_error("plot pathfollow", "--vehicle NAME and --course NAME are required");
    shoal_path_follow_t follow = shoal_path_follow_default();
    if (!strcmp(kind, "proposed"))
        follow.follower = SHOAL_FOLLOWER_PROPOSED;
    else if (!strcmp(kind, "baseline"))
        follow.follower = SHOAL_FOLLOWER_BASELINE;
    else
        return cli_usage_error("plot pathfollow", "--follower: expected proposed or baseline, got '%s'",
                               kind);
    shoal_ground_vehicle_t veh;
    if (shoal_ground_vehicle_preset(vehicle, &veh, NULL) != SHOAL_OK)
        return cli_usage_error("plot pathfollow",
                               "--vehicle: unknown '%s' (buggy, car, apc, truck, tank, "
                               "hovercraft)",
                               vehicle);
    course_t c;
    int found = course_find(course_name, &c);
    if (found < 0) {
        cli_error("plot: out of memory");
        return CLI_EXIT_FAILURE;
    }
    if (found > 0)
        return cli_usage_error("plot pathfollow",
                               "--course: unknown course '%s' (see shoal pathfollow --help)", course_name);

    pf_track_t tr = {0};
    observe(&tr, 0, 0.0, &(shoal_agent_state_t){.position = {c.xyz[0], c.xyz[1], c.xyz[2]}},
            &(shoal_ground_status_t){0});
    run_result_t res;
    memset(&res, 0, sizeof res);
    char err[512];
    const char* csvs[1] = {NULL};
    int rc = CLI_EXIT_FAILURE;
    plot_t p;
    memset(&p, 0, sizeof p);
    if (pf_run_course_observed(&c, 1, &veh, &follow, csvs, observe, &tr, &res, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        goto done;
    }
    if (tr.failed) {
        cli_error("plot: out of memory");
        goto done;
    }

    double b[4] = {1e300, -1e300, 1e300, -1e300};
    for (int i = 0; i < c.count; ++i) {
        b[0] = fmin(b[0], c.xyz[3 * i] - c.half_width);
        b[1] = fmax(b[1], c.xyz[3 * i] + c.half_width);
        b[2] = fmin(b[2], c.xyz[3 * i + 1] - c.half_width);
        b[3] = fmax(b[3], c.xyz[3 * i + 1] + c.half_width);
    }
    for (int i = 0; i < tr.count; ++i) {
        b[0] = fmin(b[0], tr.s[i].x);
        b[1] = fmax(b[1], tr.s[i].x);
        b[2] = fmin(b[2], tr.s[i].y);
        b[3] = fmax(b[3], tr.s[i].y);
    }
    double pad = 0.05 * fmax(b[1] - b[0], b[3] - b[2]) + 2.0;
    if (plot_open(&p, o->output, o->width, o->height, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        goto done;
    }
    char title[256], sub[512];
    snprintf(title, sizeof title, "Path following: %s on %s (%s follower)", vehicle, c.name, kind);
    plot_panel_t panel;
    float hmin, hmax;
    plot_panel_full(&p, &panel, b[0] - pad, b[1] + pad, b[2] - pad, b[3] + pad, "x (m)", "y (m)");
    plot_panel_begin(&p, &panel);
    cairo_t* cr = p.cr;
    draw_terrain(&p, &c, &hmin, &hmax);
    int n = snprintf(sub, sizeof sub,
                     "%s in %.1f s (%.0f m, %.2f m/s mean); cross-track error %.2f m mean, %.1f%% of "
                     "frames in the corridor; stuck events %d, teleports %d",
                     res.completed ? "completed" : "NOT completed", res.time, res.distance, res.speed_mean,
                     res.cte_mean, res.inside_pct, res.stuck_events, res.teleports);
    if (hmax > hmin && n > 0 && (size_t)n < sizeof sub)
        snprintf(sub + n, sizeof sub - (size_t)n, "; terrain %.1f to %.1f m", hmin, hmax);
    /* The corridor: a stroke 2 half_width wide with round joins and caps is
     * exactly the set of points within half_width of the path. */
    for (int i = 0; i < c.count; ++i) cairo_line_to(cr, c.xyz[3 * i], c.xyz[3 * i + 1]);
    const plot_rgb_t corridor_c = {0.337, 0.706, 0.914}, path_c = {0.2, 0.2, 0.25},
                     obst_c = {0.45, 0.42, 0.4}, stuck_c = {0.85, 0.1, 0.1}, tele_c = {0.8, 0.0, 0.6};
    plot_set_color(&p, corridor_c, 0.28);
    cairo_set_line_width(cr, 2.0 * c.half_width);
    cairo_stroke(cr);
    for (int i = 0; i < c.obstacle_count; ++i)
        plot_circle(&p, c.obstacles[i][0], c.obstacles[i][1], c.obstacles[i][2]);
    plot_set_color(&p, obst_c, 0.75);
    cairo_fill_preserve(cr);
    plot_set_color(&p, (plot_rgb_t){0.2, 0.2, 0.2}, 0.9);
    plot_stroke_px(&p, 1.0);
    for (int i = 0; i < c.count; ++i) cairo_line_to(cr, c.xyz[3 * i], c.xyz[3 * i + 1]);
    plot_set_color(&p, path_c, 0.9);
    plot_dash_px(&p, 6, 4);
    plot_stroke_px(&p, 1.4);
    plot_dash_px(&p, 0, 0);
    for (int i = 0; i < c.count; ++i) plot_dot(&p, &panel, c.xyz[3 * i], c.xyz[3 * i + 1], 2.5);

    /* The track, a segment per frame in the colour of its speed. */
    double vmax = 0.0;
    for (int i = 0; i < tr.count; ++i) vmax = fmax(vmax, tr.s[i].speed);
    if (vmax <= 0.0) vmax = 1.0;
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    for (int i = 1; i < tr.count; ++i) {
        const pf_sample_t *a = &tr.s[i - 1], *q = &tr.s[i];
        if (q->teleports != a->teleports) continue; /* a jump, not driving */
        cairo_move_to(cr, a->x, a->y);
        cairo_line_to(cr, q->x, q->y);
        plot_set_color(&p, plot_colormap(q->speed / vmax), 1.0);
        plot_stroke_px(&p, 2.6);
    }
    /* Recovery manoeuvres under a thin red line; events and jumps marked. */
    for (int i = 1; i < tr.count; ++i)
        if (tr.s[i].stuck && tr.s[i - 1].stuck && tr.s[i].teleports == tr.s[i - 1].teleports) {
            cairo_move_to(cr, tr.s[i - 1].x, tr.s[i - 1].y);
            cairo_line_to(cr, tr.s[i].x, tr.s[i].y);
        }
    plot_set_color(&p, stuck_c, 0.9);
    plot_stroke_px(&p, 1.0);
    for (int i = 1; i < tr.count; ++i) {
        const pf_sample_t *a = &tr.s[i - 1], *q = &tr.s[i];
        if (q->teleports > a->teleports) {
            cairo_move_to(cr, a->x, a->y);
            cairo_line_to(cr, q->x, q->y);
            plot_set_color(&p, tele_c, 1.0);
            plot_dash_px(&p, 3, 3);
            plot_stroke_px(&p, 1.5);
            plot_dash_px(&p, 0, 0);
            plot_dot(&p, &panel, q->x, q->y, 4.0);
        } else if (q->stuck_events > a->stuck_events) {
            plot_circle(&p, q->x, q->y, 7.0 / panel.scale);
            plot_set_color(&p, stuck_c, 1.0);
            plot_stroke_px(&p, 2.0);
        }
    }
    plot_set_color(&p, path_c, 1.0);
    plot_text_at(&p, &panel, c.xyz[0], c.xyz[1], 6, -6, "start");
    plot_text_at(&p, &panel, c.xyz[3 * (c.count - 1)], c.xyz[3 * (c.count - 1) + 1], 6, -6, "end");
    plot_panel_end(&p);
    plot_title(&p, title, sub);
    plot_scale_bar(&p, &panel);
    plot_legend(&p, path_c, 2, "path");
    char label[64];
    snprintf(label, sizeof label, "corridor (half-width %g m)", c.half_width);
    plot_legend(&p, corridor_c, 3, label);
    if (c.obstacle_count > 0) plot_legend(&p, obst_c, 1, "obstacles");
    plot_colorbar(&p, 0.0, vmax, "speed (m/s)");
    if (res.stuck_events > 0) {
        plot_legend(&p, stuck_c, 0, "stuck event (ring), recovery");
        if (res.teleports > 0) plot_legend(&p, tele_c, 2, "teleport");
    }
    if (plot_close(&p, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        goto done;
    }
    snprintf(label, sizeof label, "%s on %s, %d frames", vehicle, c.name, tr.count);
    plot_report(&p, &panel, label);
    rc = CLI_EXIT_OK;
done:
    free(tr.s);
    course_free(&c);
    return rc;
}

const cli_command_t cli_plot_pathfollow = {
    "pathfollow", "one ground vehicle on one course, its track coloured by speed", plot_kind_pathfollow};
