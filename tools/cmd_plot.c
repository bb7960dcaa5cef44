/* `shoal plot KIND ... -o FILE.png|FILE.svg`: pictures with cairo.
 *
 * This file parses the options every kind shares, dispatches to the kind
 * and holds the `run` kind (trajectory traces of a recording). The other
 * kinds are in plot_dseek.c, plot_pathfollow.c and plot_trim.c; the canvas
 * is plot_canvas.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/recording.h"
#include "shoal/scenario.h"
#include "shoal/shoal.h"
#include "simd/vec.h"
#include "tools/cli.h"
#include "tools/plot.h"

static void plot_help(void)
{
    printf("Usage: shoal plot KIND [options] -o FILE.png|FILE.svg\n\n"
           "Draw a picture with cairo; PNG or SVG by the output's extension. Every\n"
           "panel has one scale for both axes (metres), a grid, ticks and a scale bar.\n\n"
           "Kinds:\n"
           "  run RECORDING          trajectory traces of every agent in a recording\n"
           "                         (shoal run --record), coloured by group, with the\n"
           "                         scenario's obstacles; lines break where an agent\n"
           "                         wraps around a torus\n"
           "      --every K          use every K-th frame (default 1)\n"
           "      --agents N         at most about N agents (every k-th handle index)\n"
           "      --view top|side    3D: seen from above (x-y, default) or the side (x-z)\n"
           "  dseek                  one directed-seek run (as `shoal dseek`): the flown\n"
           "                         path, the osculating circles and the planned\n"
           "                         3-segment path (arc, tangent, arc) at the start\n"
           "      --from x,y,heading --to x,y,heading --rmin R --speed V\n"
           "                         (defaults: 0,0,1.5708  10,-3,3.1416  2  5)\n"
           "      --replans N        also the plans of N later poses along the flight\n"
           "  pathfollow             one ground vehicle on one course (as `shoal\n"
           "                         pathfollow`): path, corridor, obstacles, terrain\n"
           "                         shading and the track coloured by speed; stuck\n"
           "                         events and teleports marked\n"
           "      --vehicle NAME --course NAME [--follower proposed|baseline]\n"
           "  trim                   fans of trim trajectories from one initial control to\n"
           "                         every final control (the default trim table)\n"
           "      --dim 2|3          2D: one panel per initial yaw rate (0, half, max);\n"
           "                         3D: top (x-y) and side (x-z) views (default 2)\n"
           "      --initial C        one panel from control index C instead\n"
           "      --speed V          m/s (default 1: lengths per unit speed)\n"
           "  search                 a planner's search tree for one agent seeking a goal\n"
           "                         through an obstacle field: visited trajectories,\n"
           "                         crashed ones, the chosen plan\n"
           "      --strategy single|uniform|adaptive (default adaptive)\n"
           "      --obstacles N --seed S --expansions E --speed V\n"
           "                         (defaults 14, 1, the planner's 400, 5)\n\n"
           "Options of every kind:\n"
           "  -o, --output FILE      .png or .svg (required)\n"
           "  --width W, --height H  picture size in px (default 960 x 720; 200..8000)\n\n"
           "The command prints one line: the file, its size and the first panel's\n"
           "mapping from metres to pixels.\n");
}

typedef struct plot_kind_entry {
    const char* name;
    int (*run)(int argc, char** argv, const plot_options_t* o);
} plot_kind_entry;

static const plot_kind_entry kinds[] = {
    {"run", plot_kind_run},       {"dseek", plot_kind_dseek}, {"pathfollow", plot_kind_pathfollow},
    {"trim", plot_kind_trim},     {"search", plot_kind_search},
};

int cmd_plot(int argc, char** argv)
{
    if (argc < 2) return cli_usage_error("plot", "which kind? (run, dseek, pathfollow, trim, search)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        plot_help();
        return CLI_EXIT_OK;
    }
    const plot_kind_entry* kind = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i)
        if (!strcmp(kinds[i].name, argv[1])) kind = &kinds[i];
    if (!kind)
        return cli_usage_error("plot", "unknown kind '%s' (expected run, dseek, pathfollow, trim or search)",
                               argv[1]);
    /* Take the shared options out; the kind sees the rest. */
    plot_options_t o = {NULL, 960, 720};
    char** rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    int n = 0, rc = CLI_EXIT_OK;
    rest[n++] = argv[1];
    for (int i = 2; i < argc; ++i) {
        const char* v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            plot_help();
            free(rest);
            return CLI_EXIT_OK;
        }
        if ((m = cli_option_value("plot", argc, argv, &i, "-o", &v)) != 0 ||
            (m = cli_option_value("plot", argc, argv, &i, "--output", &v)) != 0) {
            if (m < 0) goto usage;
            o.output = v;
        } else if ((m = cli_option_value("plot", argc, argv, &i, "--width", &v)) != 0 ||
                   (m = cli_option_value("plot", argc, argv, &i, "--height", &v)) != 0) {
            if (m < 0) goto usage;
            /* "--width=W" is one argument; "--width W" two. */
            const char* opt = (!strncmp(argv[i], "--width=", 8) || !strncmp(argv[i], "--height=", 9))
                                  ? argv[i] : argv[i - 1];
            int is_width = strncmp(opt, "--width", 7) == 0;
            int64_t x;
            if (!cli_parse_int(v, 200, 8000, &x)) {
                rc = cli_usage_error("plot", "%s must be an integer in [200, 8000], got '%s'",
                                     is_width ? "--width" : "--height", v);
                goto done;
            }
            if (is_width) o.width = (int)x;
            else o.height = (int)x;
        } else {
            rest[n++] = argv[i];
        }
    }
    if (!o.output) {
        rc = cli_usage_error("plot", "-o FILE.png or -o FILE.svg is required");
        goto done;
    }
    if (plot_format(o.output) == 0) {
        rc = cli_usage_error("plot", "output '%s': expected a file name ending in .png or .svg", o.output);
        goto done;
    }
    rc = kind->run(n, rest, &o);
    goto done;
usage:
    rc = CLI_EXIT_USAGE;
done:
    free(rest);
    return rc;
}

/* ---- run: trajectory traces of a recording --------------------------------- */

typedef struct obstacle_list {
    int count;
    float (*c)[4]; /* x, y, z, radius */
    float (*v)[3]; /* velocity (moving obstacles) */
} obstacle_list;

/* The obstacles of the scenario a recording was made from: the scenario
 * text is loaded and populated into a throw-away world, so they are exactly
 * what the run had. Returns 0; -1 (message in err) when the text does not
 * load, which the caller reports without failing (the traces stand alone). */
static int scenario_obstacles(const char* scenario_text, obstacle_list* out, char* err, int err_size)
{
    memset(out, 0, sizeof *out);
    if (!scenario_text || !scenario_text[0]) return 0;
    shoal_scenario_t* sc = NULL;
    shoal_error_t e;
    if (shoal_scenario_load_string(scenario_text, strlen(scenario_text), "the recording's scenario", &sc,
                                   &e) != SHOAL_OK) {
        snprintf(err, (size_t)err_size, "%s", e.message);
        return -1;
    }
    shoal_world_def_t def = shoal_scenario_world_def(sc);
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    shoal_world_t* w = NULL;
    int rc = -1;
    if (shoal_world_create(&def, &w, &e) != SHOAL_OK) {
        snprintf(err, (size_t)err_size, "%s", e.message);
        goto done;
    }
    if (shoal_scenario_populate(sc, w) != SHOAL_OK) {
        snprintf(err, (size_t)err_size, "%s", shoal_world_last_error(w));
        goto done;
    }
    int n = shoal_world_obstacle_count(w);
    out->c = calloc((size_t)n + 1, sizeof *out->c);
    out->v = calloc((size_t)n + 1, sizeof *out->v);
    if (!out->c || !out->v) {
        snprintf(err, (size_t)err_size, "out of memory");
        goto done;
    }
    /* Ids are small integers; scan until every obstacle is found. */
    for (int32_t id = 0; out->count < n && id < 4 * n + 64; ++id) {
        float c[3], v[3], r;
        if (shoal_world_get_obstacle(w, id, c, v, &r) != SHOAL_OK) continue;
        memcpy(out->c[out->count], c, sizeof c);
        out->c[out->count][3] = r;
        memcpy(out->v[out->count], v, sizeof v);
        out->count++;
    }
    rc = 0;
done:
    if (rc != 0) {
        free(out->c);
        free(out->v);
        memset(out, 0, sizeof *out);
    }
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
    return rc;
}

/* The direction an agent faces in the picture: its heading (2D), or its
 * forward axis projected on the view's plane (3D: x-y, or x-z for `ay` 2). */
static float frame_heading(const shoal_recording_frame_t* f, int dims, int i, int ay)
{
    if (dims == 2) return f->headings[i];
    const float* q = f->orientations + 4 * i;
    vec3 fwd = quat_forward((quat){q[0], q[1], q[2], q[3]});
    return atan2f(ay == 2 ? fwd.z : fwd.y, fwd.x);
}

/* The k-th line of the group names ("" when missing), into buf. */
static const char* group_name(const char* names, int k, char* buf, size_t size)
{
    const char* s = names;
    for (int i = 0; i < k && s; ++i) {
        s = strchr(s, '\n');
        if (s) ++s;
    }
    size_t n = 0;
    if (s) {
        const char* e = strchr(s, '\n');
        n = e ? (size_t)(e - s) : strlen(s);
    }
    if (n == 0) {
        snprintf(buf, size, "group %d", k);
    } else {
        if (n >= size) n = size - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
    }
    return buf;
}

int plot_kind_run(int argc, char** argv, const plot_options_t* o)
{
    const char* path = NULL;
    int64_t every = 1, max_agents = 0;
    int ay = 1; /* the picture's vertical axis: y (from above) or z (from the side) */
    for (int i = 1; i < argc; ++i) {
        const char* v = NULL;
        int m = cli_option_value("plot", argc, argv, &i, "--every", &v);
        if (m < 0) return CLI_EXIT_USAGE;
        if (m > 0) {
            if (!cli_parse_int(v, 1, 1000000, &every))
                return cli_usage_error("plot", "--every must be an integer >= 1, got '%s'", v);
        } else if ((m = cli_option_value("plot", argc, argv, &i, "--agents", &v)) != 0) {
            if (m < 0) return CLI_EXIT_USAGE;
            if (!cli_parse_int(v, 1, INT32_MAX, &max_agents))
                return cli_usage_error("plot", "--agents must be an integer >= 1, got '%s'", v);
        } else if ((m = cli_option_value("plot", argc, argv, &i, "--view", &v)) != 0) {
            if (m < 0) return CLI_EXIT_USAGE;
            if (!strcmp(v, "top")) ay = 1;
            else if (!strcmp(v, "side")) ay = 2;
            else return cli_usage_error("plot", "run: --view: expected top or side, got '%s'", v);
        } else if (argv[i][0] == '-') {
            return cli_usage_error("plot", "run: unknown option '%s'", argv[i]);
        } else if (path) {
            return cli_usage_error("plot", "run: one recording only (got '%s' and '%s')", path, argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (!path) return cli_usage_error("plot", "run: which recording? (shoal plot run FILE -o OUT.png)");

    shoal_recording_t* rec = NULL;
    shoal_error_t e;
    if (shoal_recording_load(path, SHOAL_RECORDING_ALLOW_TRUNCATED, &rec, &e) != SHOAL_OK) {
        cli_error("plot: %s", e.message);
        return CLI_EXIT_FAILURE;
    }
    const shoal_recording_header_t* h = shoal_recording_header(rec);
    int dims = h->dimensions, frames = shoal_recording_frame_count(rec);
    if (ay == 2 && dims != 3) {
        shoal_recording_destroy(rec);
        return cli_usage_error("plot", "run: --view side needs a 3D recording (%s is 2D)", path);
    }
    if (frames == 0) {
        cli_error("plot: %s has no complete frame to draw", path);
        shoal_recording_destroy(rec);
        return CLI_EXIT_FAILURE;
    }
    char err[512];
    obstacle_list obs;
    if (scenario_obstacles(h->scenario_text, &obs, err, sizeof err) != 0)
        cli_error("plot: obstacles not drawn: %s", err);

    /* Extent: the torus box, else everything the agents and obstacles cover. */
    uint32_t max_id = 0, max_group = 0;
    double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
    shoal_recording_frame_t f;
    int64_t agents_seen = 0;
    for (int k = 0; k < frames; ++k) {
        shoal_recording_frame(rec, k, &f);
        for (int i = 0; i < f.count; ++i) {
            double x = f.positions[dims * i], y = f.positions[dims * i + ay];
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            ymin = fmin(ymin, y);
            ymax = fmax(ymax, y);
            if (f.ids[i] > max_id) max_id = f.ids[i];
            if (f.groups[i] > max_group) max_group = f.groups[i];
        }
        if (f.count > agents_seen) agents_seen = f.count;
    }
    for (int i = 0; i < obs.count; ++i) {
        xmin = fmin(xmin, obs.c[i][0] - obs.c[i][3]);
        xmax = fmax(xmax, obs.c[i][0] + obs.c[i][3]);
        ymin = fmin(ymin, obs.c[i][ay] - obs.c[i][3]);
        ymax = fmax(ymax, obs.c[i][ay] + obs.c[i][3]);
    }
    double wrap_w = 0.0, wrap_h = 0.0;
    if (h->wrap) {
        xmin = h->bounds_min[0];
        xmax = h->bounds_max[0];
        ymin = h->bounds_min[ay];
        ymax = h->bounds_max[ay];
        wrap_w = xmax - xmin;
        wrap_h = ymax - ymin;
    } else if (xmin <= xmax) {
        double pad = 0.04 * fmax(xmax - xmin, ymax - ymin) + 1.0;
        xmin -= pad;
        xmax += pad;
        ymin -= pad;
        ymax += pad;
    } else {
        xmin = ymin = -1.0;
        xmax = ymax = 1.0;
    }

    plot_t p;
    if (plot_open(&p, o->output, o->width, o->height, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        free(obs.c);
        free(obs.v);
        shoal_recording_destroy(rec);
        return CLI_EXIT_FAILURE;
    }
    shoal_recording_frame(rec, 0, &f);
    double t0 = f.time;
    shoal_recording_frame(rec, frames - 1, &f);
    double t1 = f.time;
    /* --agents N: a fixed subset, every stride-th handle index. */
    uint32_t stride = 1;
    if (max_agents > 0 && agents_seen > max_agents)
        stride = (uint32_t)((agents_seen + max_agents - 1) / max_agents);
    char title[256], sub[512], subset[64] = "";
    if (stride > 1) snprintf(subset, sizeof subset, " (every %u-th by id drawn)", stride);
    snprintf(title, sizeof title, "%s: trajectories of %lld agents%s, t = %.2f to %.2f s",
             h->scenario_name[0] ? h->scenario_name : "recording", (long long)agents_seen, subset, t0, t1);
    char every_note[48] = "";
    if (every > 1) snprintf(every_note, sizeof every_note, " (every %lld-th drawn)", (long long)every);
    snprintf(sub, sizeof sub, "%s: %d frames%s, %dD%s%s", path, frames, every_note, dims,
             dims == 2 ? "" : ay == 2 ? " seen from the side (x-z)" : " seen from above (x-y)",
             h->wrap ? ", torus (lines break at the edges)" : "");
    plot_title(&p, title, sub);
    plot_panel_t panel;
    plot_panel_full(&p, &panel, xmin, xmax, ymin, ymax, "x (m)", ay == 2 ? "z (m)" : "y (m)");
    plot_panel_begin(&p, &panel);
    cairo_t* cr = p.cr;

    for (int i = 0; i < obs.count; ++i) {
        plot_circle(&p, obs.c[i][0], obs.c[i][ay], obs.c[i][3]);
        plot_set_color(&p, (plot_rgb_t){0.45, 0.45, 0.48}, 0.35);
        cairo_fill_preserve(cr);
        plot_set_color(&p, (plot_rgb_t){0.3, 0.3, 0.33}, 0.9);
        plot_stroke_px(&p, 1.2);
        double dur = t1 - t0;
        if (obs.v[i][0] != 0.0f || obs.v[i][ay] != 0.0f) { /* where a moving one went */
            cairo_move_to(cr, obs.c[i][0], obs.c[i][ay]);
            cairo_line_to(cr, obs.c[i][0] + obs.v[i][0] * dur, obs.c[i][ay] + obs.v[i][ay] * dur);
            plot_dash_px(&p, 4, 3);
            plot_stroke_px(&p, 1.0);
            plot_dash_px(&p, 0, 0);
        }
    }

    /* Per agent slot (handle index): where it was in the last drawn frame. */
    size_t slots = (size_t)max_id + 1;
    float* last = malloc(slots * 2 * sizeof(float));
    int32_t* last_frame = malloc(slots * sizeof(int32_t));
    uint32_t* last_gen = malloc(slots * sizeof(uint32_t));
    int rc = CLI_EXIT_OK;
    if (!last || !last_frame || !last_gen) {
        cli_error("plot: out of memory");
        rc = CLI_EXIT_FAILURE;
        plot_panel_end(&p);
        goto close;
    }
    if (h->wrap) { /* the torus box */
        cairo_rectangle(cr, xmin, ymin, xmax - xmin, ymax - ymin);
        plot_set_color(&p, (plot_rgb_t){0.3, 0.3, 0.33}, 0.8);
        plot_dash_px(&p, 6, 4);
        plot_stroke_px(&p, 1.0);
        plot_dash_px(&p, 0, 0);
    }
    int64_t shown = (agents_seen + stride - 1) / stride; /* about how many are drawn */
    double alpha = shown <= 50 ? 0.85 : shown <= 1000 ? 0.5 : 0.25;
    double width = shown <= 50 ? 1.6 : 1.0;
    /* Segments of one colour must not darken where they cross or join, so
     * each colour is composited once. PNG: a group per colour, stroked
     * opaque in pieces of a few thousand segments (cairo rasterizes one
     * huge path far slower than many small ones), then painted with alpha.
     * SVG: one path per colour with the alpha (nothing is rasterized; and
     * cairo 1.16's SVG surface leaks groups). */
    int colors = (int)max_group + 1 < 8 ? (int)max_group + 1 : 8;
    int grouped = !p.svg;
    for (int color = 0; color < colors; ++color) {
        for (size_t s = 0; s < slots; ++s) last_frame[s] = -1;
        int drawn = -1, pending = 0;
        if (grouped) cairo_push_group(cr);
        plot_set_color(&p, plot_palette(color), grouped ? 1.0 : alpha);
        for (int k = 0; k < frames; k += (int)every) {
            shoal_recording_frame(rec, k, &f);
            for (int i = 0; i < f.count; ++i) {
                uint32_t id = f.ids[i];
                if ((int)(f.groups[i] % 8) != color || id % stride != 0) continue;
                float x = f.positions[dims * i], y = f.positions[dims * i + ay];
                int joined = last_frame[id] == drawn && drawn >= 0 && last_gen[id] == f.generations[i];
                if (joined && h->wrap) /* crossed an edge of the torus: break the line */
                    joined = fabs(x - last[2 * id]) < 0.5 * wrap_w && fabs(y - last[2 * id + 1]) < 0.5 * wrap_h;
                if (joined) {
                    cairo_move_to(cr, last[2 * id], last[2 * id + 1]);
                    cairo_line_to(cr, x, y);
                    if (grouped && ++pending == 4096) {
                        plot_stroke_px(&p, width);
                        pending = 0;
                    }
                }
                last[2 * id] = x;
                last[2 * id + 1] = y;
                last_frame[id] = k;
                last_gen[id] = f.generations[i];
            }
            drawn = k;
        }
        plot_stroke_px(&p, width);
        if (grouped) {
            cairo_pop_group_to_source(cr);
            cairo_paint_with_alpha(cr, alpha);
        }
    }
    /* Where every agent ended: facing its heading when few, else a dot.
     * (A dot is filled on its own: cairo fills one path of 50,000
     * overlapping circles several times slower than 50,000 small ones.) */
    shoal_recording_frame(rec, frames - 1, &f);
    int arrows = shown <= 400;
    for (int color = 0; color < colors; ++color) {
        plot_set_color(&p, plot_palette(color), 1.0);
        for (int i = 0; i < f.count; ++i) {
            if ((int)(f.groups[i] % 8) != color || f.ids[i] % stride != 0) continue;
            double x = f.positions[dims * i], y = f.positions[dims * i + ay];
            if (arrows) plot_arrow(&p, &panel, x, y, frame_heading(&f, dims, i, ay), 9.0, 1.6);
            else plot_dot(&p, &panel, x, y, 1.4);
        }
    }
    plot_panel_end(&p);
    plot_scale_bar(&p, &panel);
    for (int g = 0; g <= (int)max_group && g < 8; ++g) {
        char name[64];
        plot_legend(&p, plot_palette(g), 0, group_name(h->group_names, g, name, sizeof name));
    }
    if (max_group >= 8) plot_legend(&p, plot_palette(0), 0, "(colours repeat past 8 groups)");
    if (obs.count > 0) plot_legend(&p, (plot_rgb_t){0.45, 0.45, 0.48}, 3, "obstacles");
    plot_legend(&p, (plot_rgb_t){0.15, 0.15, 0.18}, 1, arrows ? "arrow: last pose" : "dot: last position");
    if (h->wrap) plot_legend(&p, (plot_rgb_t){0.3, 0.3, 0.33}, 2, "torus box");
close:
    free(last);
    free(last_frame);
    free(last_gen);
    free(obs.c);
    free(obs.v);
    shoal_recording_destroy(rec);
    if (plot_close(&p, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        return CLI_EXIT_FAILURE;
    }
    if (rc == CLI_EXIT_OK) {
        snprintf(title, sizeof title, "%lld agents%s, %d frames", (long long)agents_seen, subset, frames);
        plot_report(&p, &panel, title);
    }
    return rc;
}
