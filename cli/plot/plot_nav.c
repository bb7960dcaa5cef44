/* `shoal plot nav SCENARIO -o OUT`: a navigation field of a scenario
 * (docs/nav.md), as the world has it after populating and `--steps` steps:
 * the travel time to one goal shaded over the grid (bands every metre),
 * blocked cells dark, cells with no way to the goal pale red, the walls,
 * the descent as arrows on a lattice, the goal and the agents. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/scenario.h"
#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/plot/plot.h"

typedef struct plot_nav_options_t {
    plot_options_t common;
    int64_t goal;
    int64_t steps;
    int64_t arrows;
} plot_nav_options_t;

static const cli_option_t nav_options[] = {
    CLI_INT_ROW("--goal", "K", plot_nav_options_t, goal, 0, SHOAL_MAX_NAV_GOALS - 1,
                "the goal whose field is drawn: its id in the world (default 0, the first)"),
    CLI_INT_ROW("--steps", "N", plot_nav_options_t, steps, 0, 1000000,
                "steps to run before drawing (default 0: the fields as populate solved them)"),
    CLI_INT_ROW("--arrows", "N", plot_nav_options_t, arrows, 0, 200,
                "descent arrows across the wider side of the grid (default 32; 0: none)"),
};

static const cli_spec_t nav_spec = {
    .command = "plot nav",
    .usage = "SCENARIO [options] -o FILE.png|FILE.svg",
    .about = "A navigation field of a scenario (docs/nav.md): the travel time to one goal, shaded\n"
             "in bands of 1 m, over the walkable grid; blocked cells dark, cells with no way to\n"
             "the goal pale red; the walls, the descent on a lattice of arrows, the goal's\n"
             "cells and the agents.\n",
    .arguments = "  SCENARIO              a scenario file with a \"nav\" object and goals\n",
    .options = nav_options,
    .option_count = CLI_COUNT(nav_options),
    .max_positional = 1,
    .positional = "scenario file",
    .details = "The command prints one line: the file, its size and what it shows.\n",
    PLOT_SHARED(plot_nav_options_t),
};

/* The colour of travel time t over [0, tmax]: dark blue near the goal to
 * pale yellow far away, each metre band a little lighter than the last
 * half. */
static void shade(double t, double tmax, unsigned char rgb[3])
{
    double u = tmax > 0.0 ? fmin(1.0, t / tmax) : 0.0;
    static const double stops[5][3] = {
        {0.08, 0.19, 0.42}, {0.13, 0.45, 0.56}, {0.27, 0.68, 0.47}, {0.75, 0.85, 0.35}, {0.99, 0.96, 0.75}};
    double x = u * 4.0;
    int k = x >= 4.0 ? 3 : (int)x;
    double f = x - k;
    double band = fmod(t, 1.0) < 0.5 ? 1.0 : 0.92;
    for (int c = 0; c < 3; ++c) {
        double v = (stops[k][c] + f * (stops[k + 1][c] - stops[k][c])) * band;
        rgb[c] = (unsigned char)lrint(255.0 * fmin(1.0, fmax(0.0, v)));
    }
}

int plot_kind_nav(int argc, char** argv)
{
    plot_nav_options_t opt = {.common = PLOT_OPTIONS_DEFAULT, .goal = 0, .steps = 0, .arrows = 32};
    const char* path = NULL;
    int stop = plot_parse(&nav_spec, argc, argv, &opt, &opt.common, &path, NULL);
    if (stop >= 0) return stop;
    if (!path) return cli_usage_error("plot nav", "a scenario file is required");
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    if (shoal_scenario_load_file(path, &sc, &err) != SHOAL_OK) {
        cli_error("plot nav: %s", err.message);
        return CLI_EXIT_FAILURE;
    }
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    shoal_world_t* w = NULL;
    if (shoal_world_create(&def, &w, &err) != SHOAL_OK) {
        shoal_scenario_destroy(sc);
        cli_error("plot nav: %s", err.message);
        return CLI_EXIT_FAILURE;
    }
    int code = CLI_EXIT_FAILURE;
    float* T = NULL;
    float* blocked = NULL;
    float* seg = NULL;
    float* pos = NULL;
    cairo_surface_t* img = NULL;
    if (shoal_scenario_populate(sc, w) != SHOAL_OK) {
        cli_error("plot nav: %s", shoal_world_last_error(w));
        goto done;
    }
    for (int64_t s = 0; s < opt.steps; ++s)
        if (shoal_world_step(w, shoal_scenario_dt(sc)) != SHOAL_OK) {
            cli_error("plot nav: step %lld: %s", (long long)s, shoal_world_last_error(w));
            goto done;
        }
    if (shoal_world_nav_goal_count(w) == 0) {
        cli_error("plot nav: %s has no navigation goals (a \"nav\" object with \"goals\")", path);
        goto done;
    }
    if (shoal_world_nav_update(w) != SHOAL_OK) {
        cli_error("plot nav: %s", shoal_world_last_error(w));
        goto done;
    }
    shoal_nav_grid_info_t grid;
    shoal_world_nav_grid(w, &grid);
    int64_t cells = (int64_t)grid.nx * grid.ny, n = 0;
    T = malloc((size_t)cells * sizeof *T);
    blocked = malloc((size_t)cells * sizeof *blocked);
    if (!T || !blocked) {
        cli_error("plot nav: out of memory for %lld cells", (long long)cells);
        goto done;
    }
    if (shoal_world_nav_field(w, (int32_t)opt.goal, T, cells, &n) != SHOAL_OK ||
        shoal_world_nav_field(w, -1, blocked, cells, &n) != SHOAL_OK) {
        cli_error("plot nav: --goal %lld: %s", (long long)opt.goal, shoal_world_last_error(w));
        goto done;
    }
    double tmax = 0.0;
    for (int64_t c = 0; c < cells; ++c)
        if (isfinite(T[c])) tmax = fmax(tmax, T[c]);
    /* the field as an image, one pixel a cell, row 0 at the bottom */
    img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, grid.nx, grid.ny);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cli_error("plot nav: a %d x %d image: %s", grid.nx, grid.ny,
                  cairo_status_to_string(cairo_surface_status(img)));
        goto done;
    }
    cairo_surface_flush(img);
    unsigned char* px = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    for (int32_t j = 0; j < grid.ny; ++j)
        for (int32_t i = 0; i < grid.nx; ++i) {
            int64_t c = (int64_t)j * grid.nx + i;
            unsigned char rgb[3] = {46, 46, 52};
            if (blocked[c] == 0.0f) {
                if (isfinite(T[c]))
                    shade(T[c], tmax, rgb);
                else
                    rgb[0] = 240, rgb[1] = 200, rgb[2] = 200;
            }
            uint32_t* p = (uint32_t*)(px + (size_t)j * (size_t)stride) + i;
            *p = (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | rgb[2];
        }
    cairo_surface_mark_dirty(img);

    int32_t nseg = 0;
    shoal_world_wall_segments(w, NULL, 0, &nseg);
    seg = malloc((size_t)(nseg > 0 ? nseg : 1) * 4 * sizeof *seg);
    int32_t agents = shoal_world_agent_count(w);
    pos = malloc((size_t)(agents > 0 ? agents : 1) * 3 * sizeof *pos);
    if (!seg || !pos) {
        cli_error("plot nav: out of memory");
        goto done;
    }
    shoal_world_wall_segments(w, seg, nseg, &nseg);
    shoal_agent_batch_t batch = {.positions = pos};
    shoal_world_read_agents(w, &batch, agents, &agents);

    double x0 = grid.origin[0], y0 = grid.origin[1];
    double x1 = x0 + grid.cell * grid.nx, y1 = y0 + grid.cell * grid.ny;
    char msg[512];
    plot_t p;
    if (plot_open(&p, opt.common.output, opt.common.width, opt.common.height, msg, sizeof msg) != 0) {
        cli_error("plot: %s", msg);
        goto done;
    }
    char title[256], sub[256];
    snprintf(title, sizeof title, "Navigation field of goal %lld: %s", (long long)opt.goal,
             shoal_scenario_name(sc));
    snprintf(
        sub, sizeof sub,
        "%d x %d cells of %g m, %lld blocked; travel time up to %.1f m at unit speed; %d agents, step %lld",
        grid.nx, grid.ny, (double)grid.cell, (long long)grid.blocked, tmax, (int)agents,
        (long long)opt.steps);
    plot_title(&p, title, sub);
    plot_panel_t panel;
    plot_panel_full(&p, &panel, x0, x1, y0, y1, "x (m)", "y (m)");
    plot_panel_begin(&p, &panel);
    cairo_t* cr = p.cr;
    cairo_save(cr);
    cairo_translate(cr, x0, y0);
    cairo_scale(cr, grid.cell, grid.cell);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr, 0, 0, grid.nx, grid.ny);
    cairo_fill(cr);
    cairo_restore(cr);
    /* the walls */
    for (int32_t k = 0; k < nseg; ++k) {
        cairo_move_to(cr, seg[4 * k], seg[4 * k + 1]);
        cairo_line_to(cr, seg[4 * k + 2], seg[4 * k + 3]);
    }
    const plot_rgb_t wall_c = {0.0, 0.0, 0.0}, arrow_c = {1.0, 1.0, 1.0}, agent_c = {0.84, 0.15, 0.16};
    plot_set_color(&p, wall_c, 1.0);
    plot_stroke_px(&p, 2.0);
    /* the descent on a lattice: central differences of the field where
     * both neighbours along an axis have a way (else the one-sided one) */
    if (opt.arrows > 0) {
        double step = fmax(x1 - x0, y1 - y0) / (double)opt.arrows;
        double len_px = 0.55 * step * panel.scale;
        plot_set_color(&p, arrow_c, 0.8);
        for (double y = y0 + 0.5 * step; y < y1; y += step)
            for (double x = x0 + 0.5 * step; x < x1; x += step) {
                int32_t i = (int32_t)((x - x0) / grid.cell), j = (int32_t)((y - y0) / grid.cell);
                if (i < 1 || j < 1 || i >= grid.nx - 1 || j >= grid.ny - 1) continue;
                int64_t c = (int64_t)j * grid.nx + i;
                if (!isfinite(T[c]) || blocked[c] != 0.0f || T[c] <= 0.0f) continue;
                double tw = T[c - 1], te = T[c + 1], ts = T[c - grid.nx], tn = T[c + grid.nx];
                double gx = isfinite(tw) && isfinite(te) ? (te - tw) * 0.5
                            : isfinite(te)               ? te - T[c]
                                                         : T[c] - tw;
                double gy = isfinite(ts) && isfinite(tn) ? (tn - ts) * 0.5
                            : isfinite(tn)               ? tn - T[c]
                                                         : T[c] - ts;
                if (!isfinite(gx) || !isfinite(gy) || (gx == 0.0 && gy == 0.0)) continue;
                plot_arrow(&p, &panel, x, y, atan2(-gy, -gx), len_px, 1.2);
            }
    }
    for (int32_t a = 0; a < agents; ++a) {
        plot_set_color(&p, agent_c, 0.9);
        plot_dot(&p, &panel, pos[3 * a], pos[3 * a + 1], 2.5);
    }
    plot_panel_end(&p);
    plot_scale_bar(&p, &panel);
    plot_legend(&p, (plot_rgb_t){0.08, 0.19, 0.42}, 0, "near the goal (travel time 0)");
    plot_legend(&p, (plot_rgb_t){0.99, 0.96, 0.75}, 0, "far from it; bands every metre");
    plot_legend(&p, (plot_rgb_t){0.18, 0.18, 0.2}, 0, "blocked (walls grown by the clearance)");
    plot_legend(&p, agent_c, 0, "agents");
    if (plot_close(&p, msg, sizeof msg) != 0) {
        cli_error("plot: %s", msg);
        goto done;
    }
    snprintf(title, sizeof title, "the field of goal %lld, %d x %d cells", (long long)opt.goal, grid.nx,
             grid.ny);
    plot_report(&p, &panel, title);
    code = CLI_EXIT_OK;
done:
    if (img) cairo_surface_destroy(img);
    free(T);
    free(blocked);
    free(seg);
    free(pos);
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
    return code;
}
