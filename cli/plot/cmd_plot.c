/* `shoal plot KIND ... -o FILE.png|FILE.svg`: pictures with cairo.
 *
 * This file parses the options every kind shares, dispatches to the kind
 * and holds the `run` kind (trajectory traces of a recording); `scaling`
 * and `nav` are plot_scaling.c and plot_nav.c, the canvas plot_canvas.c.
 * The experiments' kinds (dseek, pathfollow, trim, search) are in their
 * directories of experiments/ and register themselves (cli_table_plot). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/crowd.h"
#include "shoal/recording.h"
#include "shoal/scenario.h"
#include "shoal/shoal.h"
#include "simd/vec.h"
#include "cli/cli.h"
#include "cli/plot/plot.h"

/* ---- the options every kind shares, and the dispatch ---------------------- */

const cli_option_t plot_shared_options[] = {
    {.name = "--output",
     .alias = "-o",
     .metavar = "FILE",
     .kind = CLI_FILE,
     CLI_AT(plot_options_t, output),
     .help = "the picture: a name ending in .png or .svg (required)"},
    {.name = "--width",
     .metavar = "W",
     .kind = CLI_INT,
     CLI_AT(plot_options_t, width),
     .min = 200,
     .max = 8000,
     .help = "picture width in px, 200..8000 (default 960)"},
    {.name = "--height",
     .metavar = "H",
     .kind = CLI_INT,
     CLI_AT(plot_options_t, height),
     .min = 200,
     .max = 8000,
     .help = "picture height in px, 200..8000 (default 720)"},
};

int plot_parse(const cli_spec_t* spec, int argc, char** argv, void* opts, const plot_options_t* common,
               const char** positionals, int* positional_count)
{
    int stop = cli_parse(spec, argc, argv, opts, positionals, positional_count);
    if (stop >= 0) return stop;
    if (!common->output) return cli_usage_error(spec->command, "-o FILE.png or -o FILE.svg is required");
    if (plot_format(common->output) == 0)
        return cli_usage_error(spec->command, "output '%s': expected a file name ending in .png or .svg",
                               common->output);
    return -1;
}

/* The kinds of cli/plot; the experiments register theirs (cli_table_plot).
 * A name is the kind and, for the help, its arguments. */
static const cli_command_t own_kinds[] = {
    {"run RECORDING", "trajectory traces of every agent in a recording", plot_kind_run},
    {"scaling FILE", "speed-up against threads of a 'shoal bench scaling' sweep", plot_kind_scaling},
    {"nav SCENARIO", "a navigation field of a scenario: travel time, walls, descent, agents", plot_kind_nav},
};
#define OWN_KINDS ((int)(sizeof own_kinds / sizeof own_kinds[0]))
enum { KINDS_MAX = 32 };

/* Every kind: cli/plot's, then the registered ones. */
static int all_kinds(const cli_command_t** out)
{
    int n = 0;
    for (int i = 0; i < OWN_KINDS; ++i) out[n++] = &own_kinds[i];
    for (int i = 0; cli_table_plot[i] && n < KINDS_MAX; ++i) out[n++] = cli_table_plot[i];
    return n;
}

static void plot_help(void)
{
    printf("Usage: shoal plot KIND [options] -o FILE.png|FILE.svg\n\n"
           "Draw a picture with cairo; PNG or SVG by the output's extension. Every\n"
           "panel has one scale for both axes (metres), a grid, ticks and a scale bar;\n"
           "a chart (scaling) has a scale of its own on each axis.\n\n"
           "Kinds ('shoal plot KIND --help' lists a kind's own options):\n");
    const cli_command_t* kinds[KINDS_MAX];
    int n = all_kinds(kinds);
    for (int i = 0; i < n; ++i) printf("  %-15s %s\n", kinds[i]->name, kinds[i]->summary);
    printf("\nOptions of every kind:\n");
    cli_print_options(plot_shared_options, PLOT_SHARED_OPTION_COUNT, stdout);
    printf("\nThe command prints one line: the file, its size and the first panel's\n"
           "mapping from metres to pixels.\n\n");
    fputs(cli_exit_codes_help, stdout);
}

int cmd_plot(int argc, char** argv)
{
    const cli_command_t* kinds[KINDS_MAX];
    const char* names[KINDS_MAX];
    char first[KINDS_MAX][24];
    int n = all_kinds(kinds);
    for (int i = 0; i < n; ++i) { /* a kind's name is its entry's first word */
        snprintf(first[i], sizeof first[i], "%.*s", (int)strcspn(kinds[i]->name, " "), kinds[i]->name);
        names[i] = first[i];
    }
    if (argc < 2) {
        char list[256];
        cli_kind_list(names, n, list, sizeof list);
        return cli_usage_error("plot", "which kind? (%s)", list);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        plot_help();
        return CLI_EXIT_OK;
    }
    for (int i = 0; i < n; ++i)
        if (!strcmp(names[i], argv[1])) return kinds[i]->run(argc - 1, argv + 1);
    return cli_unknown_kind("plot", "kind", argv[1], names, n);
}

/* ---- run: trajectory traces of a recording --------------------------------- */

/* The scene's static geometry: obstacles and wall segments. */
typedef struct obstacle_list {
    int count;
    float (*c)[4]; /* x, y, z, radius, at `time` */
    float (*v)[3]; /* velocity (moving obstacles) */
    double time;   /* s: when the obstacles were at c */
    int walls;     /* wall segments */
    float* seg;    /* x0, y0, x1, y1 per segment */
} obstacle_list_t;

static void geometry_free(obstacle_list_t* g)
{
    free(g->c);
    free(g->v);
    free(g->seg);
    memset(g, 0, sizeof *g);
}

/* The walls and obstacles a recording holds (version 2 and later). */
static int recorded_geometry(const shoal_recording_geometry_t* g, obstacle_list_t* out, char* err,
                             int err_size)
{
    memset(out, 0, sizeof *out);
    out->c = calloc((size_t)g->obstacle_count + 1, sizeof *out->c);
    out->v = calloc((size_t)g->obstacle_count + 1, sizeof *out->v);
    out->seg = malloc(4 * (size_t)g->wall_count * sizeof *out->seg + 1);
    if (!out->c || !out->v || !out->seg) {
        geometry_free(out);
        snprintf(err, (size_t)err_size, "out of memory");
        return -1;
    }
    for (int i = 0; i < g->obstacle_count; ++i) {
        memcpy(out->c[i], g->obstacles[i].center, 3 * sizeof(float));
        out->c[i][3] = g->obstacles[i].radius;
        memcpy(out->v[i], g->obstacles[i].velocity, 3 * sizeof(float));
    }
    memcpy(out->seg, g->walls, 4 * (size_t)g->wall_count * sizeof *out->seg);
    out->count = g->obstacle_count;
    out->walls = g->wall_count;
    out->time = g->time;
    return 0;
}

/* The obstacles and walls of the scenario a recording was made from, for
 * version 1 recordings (which do not hold them): the scenario text is
 * loaded and populated into a throw-away world, so they are exactly what
 * the run had at time 0. Returns 0; -1 (message in err) when the text does
 * not load, which the caller reports without failing (the traces stand
 * alone). */
static int scenario_obstacles(const char* scenario_text, obstacle_list_t* out, char* err, int err_size)
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
    int32_t segments = 0;
    if (shoal_world_wall_segments(w, NULL, 0, &segments) != SHOAL_OK) segments = 0;
    out->c = calloc((size_t)n + 1, sizeof *out->c);
    out->v = calloc((size_t)n + 1, sizeof *out->v);
    out->seg = malloc(4 * (size_t)segments * sizeof *out->seg + 1);
    if (!out->c || !out->v || !out->seg) {
        snprintf(err, (size_t)err_size, "out of memory");
        goto done;
    }
    if (segments > 0 && shoal_world_wall_segments(w, out->seg, segments, &segments) != SHOAL_OK) {
        snprintf(err, (size_t)err_size, "%s", shoal_world_last_error(w));
        goto done;
    }
    out->walls = segments;
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
    if (rc != 0) geometry_free(out);
    shoal_world_destroy(w);
    shoal_scenario_destroy(sc);
    return rc;
}

static const plot_rgb_t wall_ink = {0.22, 0.22, 0.26};

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

typedef struct plot_run_options_t {
    plot_options_t common;
    int64_t every, agents;
    int ay; /* the picture's vertical axis: 1 y (from above) or 2 z (from the side) */
} plot_run_options_t;

static int parse_view(const char* command, const char* name, const char* value, void* opts)
{
    plot_run_options_t* o = opts;
    if (!strcmp(value, "top"))
        o->ay = 1;
    else if (!strcmp(value, "side"))
        o->ay = 2;
    else
        return cli_usage_error(command, "%s: expected top or side, got '%s'", name, value);
    return 0;
}

static const cli_option_t run_options[] = {
    {.name = "--every",
     .metavar = "K",
     .kind = CLI_INT,
     CLI_AT(plot_run_options_t, every),
     .min = 1,
     .max = 1000000,
     .help = "use every K-th frame, 1..1000000 (default 1)"},
    {.name = "--agents",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(plot_run_options_t, agents),
     .min = 1,
     .max = INT32_MAX,
     .help = "draw at most about N agents (every k-th handle index; default all)"},
    {.name = "--view",
     .metavar = "top|side",
     .kind = CLI_CUSTOM,
     .parse = parse_view,
     .help = "3D: seen from above (x-y, default) or from the side (x-z)"},
};

static const cli_spec_t run_spec = {
    .command = "plot run",
    .usage = "RECORDING [options] -o FILE.png|FILE.svg",
    .about = "Trajectory traces of every agent in a recording (shoal run --record), coloured\n"
             "by group, with the walls and obstacles (those the recording holds; for an\n"
             "older recording without them, those of its scenario); lines break where an\n"
             "agent wraps around a torus.\n",
    .arguments = "  RECORDING             a recording file (a truncated one is drawn up to its\n"
                 "                        last complete frame)\n",
    .options = run_options,
    .option_count = CLI_COUNT(run_options),
    .details = "The command prints one line: the file, its size and the panel's mapping from\n"
               "metres to pixels.\n",
    .max_positional = 1,
    .positional = "recording",
    PLOT_SHARED(plot_run_options_t),
};

int plot_kind_run(int argc, char** argv)
{
    plot_run_options_t opt = {.common = PLOT_OPTIONS_DEFAULT, .every = 1, .ay = 1};
    const char* path = NULL;
    int stop = plot_parse(&run_spec, argc, argv, &opt, &opt.common, &path, NULL);
    if (stop >= 0) return stop;
    if (!path) return cli_usage_error("plot run", "which recording? (shoal plot run FILE -o OUT.png)");
    const plot_options_t* o = &opt.common;
    int64_t every = opt.every, max_agents = opt.agents;
    int ay = opt.ay;

    /* Frame by frame (one pass for the extent, one a colour): the memory of
     * a few frames, whatever the recording's length or compression. */
    shoal_recording_reader_t* rec = NULL;
    shoal_error_t e = {SHOAL_OK, ""};
    if (shoal_recording_reader_open(path, SHOAL_RECORDING_ALLOW_TRUNCATED, &rec, &e) != SHOAL_OK) {
        cli_error("plot: %s", e.message);
        return CLI_EXIT_FAILURE;
    }
    const shoal_recording_header_t* h = shoal_recording_reader_header(rec);
    int dims = h->dimensions, frames = shoal_recording_reader_frame_count(rec);
    if (ay == 2 && dims != 3) {
        shoal_recording_reader_close(rec);
        return cli_usage_error("plot run", "--view side needs a 3D recording (%s is 2D)", path);
    }
    if (frames == 0) {
        cli_error("plot: %s has no complete frame to draw", path);
        shoal_recording_reader_close(rec);
        return CLI_EXIT_FAILURE;
    }
    char err[512];
    obstacle_list_t obs;
    shoal_recording_geometry_t recorded;
    if (shoal_recording_reader_geometry(rec, &recorded) == SHOAL_OK) {
        if (recorded_geometry(&recorded, &obs, err, sizeof err) != 0)
            cli_error("plot: walls and obstacles not drawn: %s", err);
    } else if (scenario_obstacles(h->scenario_text, &obs, err, sizeof err) != 0) {
        cli_error("plot: walls and obstacles not drawn: %s", err);
    }

    /* Extent: the torus box, else everything the agents and obstacles cover. */
    uint32_t max_id = 0, max_group = 0;
    double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
    shoal_recording_frame_t f;
    int64_t agents_seen = 0;
    for (int k = 0; k < frames; ++k) {
        if (shoal_recording_reader_frame(rec, k, &f, &e) != SHOAL_OK) {
            cli_error("plot: %s", e.message);
            geometry_free(&obs);
            shoal_recording_reader_close(rec);
            return CLI_EXIT_FAILURE;
        }
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
    shoal_recording_reader_frame_info(rec, 0, &f);
    double t0 = f.time;
    shoal_recording_reader_frame_info(rec, frames - 1, &f);
    double t1 = f.time;
    /* Obstacles where they were at the first and the last frame (a moving
     * one goes in a straight line), and the walls. */
    for (int i = 0; i < obs.count; ++i) {
        for (int k = 0; k < 2; ++k) {
            double dt = (k == 0 ? t0 : t1) - obs.time;
            double x = obs.c[i][0] + obs.v[i][0] * dt, y = obs.c[i][ay] + obs.v[i][ay] * dt;
            xmin = fmin(xmin, x - obs.c[i][3]);
            xmax = fmax(xmax, x + obs.c[i][3]);
            ymin = fmin(ymin, y - obs.c[i][3]);
            ymax = fmax(ymax, y + obs.c[i][3]);
        }
    }
    for (int i = 0; i < 2 * obs.walls; ++i) {
        xmin = fmin(xmin, obs.seg[2 * i]);
        xmax = fmax(xmax, obs.seg[2 * i]);
        ymin = fmin(ymin, obs.seg[2 * i + 1]);
        ymax = fmax(ymax, obs.seg[2 * i + 1]);
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
        geometry_free(&obs);
        shoal_recording_reader_close(rec);
        return CLI_EXIT_FAILURE;
    }
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
             dims == 2 ? ""
             : ay == 2 ? " seen from the side (x-z)"
                       : " seen from above (x-y)",
             h->wrap ? ", torus (lines break at the edges)" : "");
    plot_title(&p, title, sub);
    plot_panel_t panel;
    plot_panel_full(&p, &panel, xmin, xmax, ymin, ymax, "x (m)", ay == 2 ? "z (m)" : "y (m)");
    plot_panel_begin(&p, &panel);
    cairo_t* cr = p.cr;

    for (int i = 0; i < obs.count; ++i) { /* where it was at the first frame */
        double x = obs.c[i][0] + obs.v[i][0] * (t0 - obs.time),
               y = obs.c[i][ay] + obs.v[i][ay] * (t0 - obs.time);
        plot_circle(&p, x, y, obs.c[i][3]);
        plot_set_color(&p, (plot_rgb_t){0.45, 0.45, 0.48}, 0.35);
        cairo_fill_preserve(cr);
        plot_set_color(&p, (plot_rgb_t){0.3, 0.3, 0.33}, 0.9);
        plot_stroke_px(&p, 1.2);
        double dur = t1 - t0;
        if (obs.v[i][0] != 0.0f || obs.v[i][ay] != 0.0f) { /* where a moving one went */
            cairo_move_to(cr, x, y);
            cairo_line_to(cr, x + obs.v[i][0] * dur, y + obs.v[i][ay] * dur);
            plot_dash_px(&p, 4, 3);
            plot_stroke_px(&p, 1.0);
            plot_dash_px(&p, 0, 0);
        }
    }
    /* Walls: one path of segments, drawn under the traces (agents keep off them). */
    for (int i = 0; i < obs.walls; ++i) {
        const float* s = obs.seg + 4 * (size_t)i;
        cairo_move_to(cr, s[0], s[1]);
        cairo_line_to(cr, s[2], s[3]);
    }
    if (obs.walls > 0) {
        plot_set_color(&p, wall_ink, 1.0);
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
        plot_stroke_px(&p, 2.4);
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
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
            if (shoal_recording_reader_frame(rec, k, &f, &e) != SHOAL_OK) break;
            for (int i = 0; i < f.count; ++i) {
                uint32_t id = f.ids[i];
                if ((int)(f.groups[i] % 8) != color || id % stride != 0) continue;
                float x = f.positions[dims * i], y = f.positions[dims * i + ay];
                int joined = last_frame[id] == drawn && drawn >= 0 && last_gen[id] == f.generations[i];
                if (joined && h->wrap) /* crossed an edge of the torus: break the line */
                    joined =
                        fabs(x - last[2 * id]) < 0.5 * wrap_w && fabs(y - last[2 * id + 1]) < 0.5 * wrap_h;
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
    if (e.status == SHOAL_OK) shoal_recording_reader_frame(rec, frames - 1, &f, &e);
    if (e.status != SHOAL_OK) { /* the extent pass read every frame: a file changed since */
        cli_error("plot: %s", e.message);
        rc = CLI_EXIT_FAILURE;
        plot_panel_end(&p);
        goto close;
    }
    int arrows = shown <= 400;
    for (int color = 0; color < colors; ++color) {
        plot_set_color(&p, plot_palette(color), 1.0);
        for (int i = 0; i < f.count; ++i) {
            if ((int)(f.groups[i] % 8) != color || f.ids[i] % stride != 0) continue;
            double x = f.positions[dims * i], y = f.positions[dims * i + ay];
            if (arrows)
                plot_arrow(&p, &panel, x, y, frame_heading(&f, dims, i, ay), 9.0, 1.6);
            else
                plot_dot(&p, &panel, x, y, 1.4);
        }
    }
    plot_panel_end(&p);
    plot_scale_bar(&p, &panel);
    for (int g = 0; g <= (int)max_group && g < 8; ++g) {
        char name[64];
        plot_legend(&p, plot_palette(g), 0, group_name(h->group_names, g, name, sizeof name));
    }
    if (max_group >= 8) plot_legend(&p, plot_palette(0), 0, "(colours repeat past 8 groups)");
    if (obs.walls > 0) plot_legend(&p, wall_ink, 0, "walls");
    if (obs.count > 0) plot_legend(&p, (plot_rgb_t){0.45, 0.45, 0.48}, 3, "obstacles");
    plot_legend(&p, (plot_rgb_t){0.15, 0.15, 0.18}, 1, arrows ? "arrow: last pose" : "dot: last position");
    if (h->wrap) plot_legend(&p, (plot_rgb_t){0.3, 0.3, 0.33}, 2, "torus box");
close:
    free(last);
    free(last_frame);
    free(last_gen);
    geometry_free(&obs);
    shoal_recording_reader_close(rec);
    if (rc != CLI_EXIT_OK) {
        plot_abandon(&p); /* no half-drawn picture over the previous one */
        return rc;
    }
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
