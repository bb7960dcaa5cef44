/* `shoal plot`: pictures of runs with cairo (PNG or SVG, chosen by the
 * output file's extension).
 *
 * A picture is a canvas with a title line, a legend line and one or more
 * panels or charts. A panel maps a rectangle of the world (metres) onto a
 * rectangle of pixels at one scale for both axes, so that circles stay
 * circles and distances can be read off the axes: a panel never stretches
 * one axis. Drawing inside a panel is in world coordinates
 * (plot_panel_begin sets cairo's matrix, with y up); line widths are given
 * in pixels. A chart (below) has a scale of its own on each axis, for
 * graphs of one quantity against another.
 *
 * The kinds live in cmd_plot.c (run, the command itself), plot_dseek.c,
 * plot_pathfollow.c, plot_trim.c (trim fans and search trees) and
 * plot_scaling.c (speed-up against threads of `shoal bench scaling`);
 * plot_validate.c draws `shoal validate crowd --plots`.
 */
#ifndef SHOAL_CLI_PLOT_H
#define SHOAL_CLI_PLOT_H

#include <cairo.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/cli_options.h"

#define PLOT_PI 3.14159265358979323846

/* Options every kind takes: rows in plot_shared_options (cmd_plot.c),
 * which each kind's spec lists after its own (PLOT_SHARED), into this
 * struct as the `common` member of the kind's options struct. */
typedef struct plot_options_t {
    const char* output;    /* -o FILE.png | FILE.svg */
    int32_t width, height; /* px; default 960 x 720 */
} plot_options_t;

#define PLOT_OPTIONS_DEFAULT                                                                                 \
    {                                                                                                        \
        NULL, 960, 720                                                                                       \
    }

/* A constant, so that a spec's initializer can use it; the definition in
 * cmd_plot.c must have exactly this many rows (its type would conflict). */
#define PLOT_SHARED_OPTION_COUNT 3
extern const cli_option_t plot_shared_options[PLOT_SHARED_OPTION_COUNT];

/* In a kind's cli_spec_t: the shared rows, stored into `common` of the
 * kind's options struct `type`. */
#define PLOT_SHARED(type)                                                                                    \
    .shared_options = plot_shared_options, .shared_option_count = PLOT_SHARED_OPTION_COUNT,                  \
    .shared_offset = offsetof(type, common)

/* cli_parse for a kind, then the checks of the shared options (-o given,
 * with a .png or .svg name). Returns -1 to go on, or the exit code. */
int plot_parse(const cli_spec_t* spec, int argc, char** argv, void* opts, const plot_options_t* common,
               const char** positionals, int* positional_count);

/* An RGB colour, components in [0, 1]. */
typedef struct plot_rgb_t {
    double r, g, b;
} plot_rgb_t;

/* One panel: a world rectangle shown in a pixel rectangle. */
typedef struct plot_panel_t {
    double px0, py0, pw, ph;       /* the pixel rectangle (top-left corner, size) */
    double xmin, xmax, ymin, ymax; /* world rectangle actually shown (after fitting) */
    double scale;                  /* px per m, the same on both axes */
    const char* xlabel;            /* axis names, e.g. "x (m)" */
    const char* ylabel;
} plot_panel_t;

struct atomic_file_t;

typedef struct plot_t {
    cairo_surface_t* surface;
    cairo_t* cr;
    int width, height;
    int svg; /* 1: SVG surface writing to the file as it draws; 0: image surface saved as PNG */
    char path[1024];
    /* The output file (io/atomic_file.h: the rule every output of the
     * command follows), open from plot_open to plot_close. */
    struct atomic_file_t* file;
    double legend_x; /* where the next legend entry goes */
    int legend_row;  /* 0 or 1 */
} plot_t;

/* Open a canvas for `path` (.png or .svg, any case). The picture is written
 * by the output rule of io/atomic_file.h (docs/errors.md, "Files read and
 * written"): a symbolic link, directory, block device or socket is refused
 * here; a regular file is replaced only once the whole picture is written,
 * so a failed write (a full disk) leaves the previous file as it was; a
 * device or FIFO is written through. Returns 0, or -1 with a message in
 * err: an unknown extension (usage) or an output that cannot be written. */
int plot_open(plot_t* p, const char* path, int width, int height, char* err, int err_size);
/* Finish and write the file (into its temporary file, then renamed over
 * `path`). Returns 0, or -1 with a message in err and `path` untouched.
 * Frees the canvas either way. */
int plot_close(plot_t* p, char* err, int err_size);
/* Give the picture up (a failure half-way): free the canvas and write
 * nothing; `path` is left as it was (a device or FIFO keeps what an SVG
 * wrote through to it). */
void plot_abandon(plot_t* p);
/* The extension check alone: 1 for .png, 2 for .svg, 0 otherwise. */
int plot_format(const char* path);

/* Title (top line, bold) and a smaller subtitle under it (may be NULL). */
void plot_title(plot_t* p, const char* title, const char* subtitle);

/* Legend entries along the bottom line, left to right. style: 0 line,
 * 1 filled dot, 2 dashed line, 3 thick translucent band. */
void plot_legend(plot_t* p, plot_rgb_t color, int style, const char* label);

/* Fit a world rectangle into the pixel rectangle (x, y, w, h) with one
 * scale for both axes (the shorter side gets the slack, centred), then
 * draw the panel's background, grid, ticks and labels. */
void plot_panel_setup(plot_t* p, plot_panel_t* panel, double x, double y, double w, double h, double xmin,
                      double xmax, double ymin, double ymax, const char* xlabel, const char* ylabel);
/* The standard single panel: the canvas minus title, legend and margins. */
void plot_panel_full(plot_t* p, plot_panel_t* panel, double xmin, double xmax, double ymin, double ymax,
                     const char* xlabel, const char* ylabel);
/* Draw in world coordinates, clipped to the panel, until plot_panel_end. */
void plot_panel_begin(plot_t* p, const plot_panel_t* panel);
void plot_panel_end(plot_t* p);
/* A scale bar in the panel's lower right corner (a round length). */
void plot_scale_bar(plot_t* p, const plot_panel_t* panel);

/* World -> pixel for a panel. */
void plot_to_px(const plot_panel_t* panel, double x, double y, double* px, double* py);

/* Helpers valid between plot_panel_begin and plot_panel_end (world units
 * for geometry, pixels for widths and marker sizes). */
void plot_set_color(plot_t* p, plot_rgb_t c, double alpha);
void plot_stroke_px(plot_t* p, double width_px);           /* stroke with a width in pixels */
void plot_dash_px(plot_t* p, double on_px, double off_px); /* 0, 0: solid */
void plot_circle(plot_t* p, double x, double y, double r); /* adds a circle path */
void plot_dot(plot_t* p, const plot_panel_t* panel, double x, double y, double r_px);
/* An arrow of `length_px` from (x, y) along heading (rad), filled head. */
void plot_arrow(plot_t* p, const plot_panel_t* panel, double x, double y, double heading, double length_px,
                double width_px);
/* Text at a world point, offset by (dx, dy) pixels. */
void plot_text_at(plot_t* p, const plot_panel_t* panel, double x, double y, double dx, double dy,
                  const char* text);

/* Colours: a qualitative palette (index wraps) and a sequential map of
 * t in [0, 1] (dark blue - teal - yellow, readable on white). */
plot_rgb_t plot_palette(int index);
plot_rgb_t plot_colormap(double t);
/* A colour bar for the sequential map, in the legend line. */
void plot_colorbar(plot_t* p, double lo, double hi, const char* label);

/* Round "nice" step (1, 2 or 5 times a power of ten) near span / count. */
double plot_nice_step(double span, int count);

/* The part [fx0, fx1] x [fy0, fy1] (fractions, y down) of the canvas
 * between the title and the legend, less room left of and below it for
 * tick labels and axis titles: where a panel or a chart of a picture
 * with several of them goes (0, 1, 0, 1 is plot_panel_full's rectangle). */
void plot_area(const plot_t* p, double fx0, double fx1, double fy0, double fy1, double* x, double* y,
               double* w, double* h);

/* ---- charts ------------------------------------------------------------------
 * A chart is a panel with a linear scale of its own on each axis (speed
 * against density, a count against time): unlike a map panel it stretches.
 * It has grid lines and numbered ticks at round steps on both axes, and the
 * axes' titles. Series are drawn in pixels over the chart (a line or a
 * marker keeps its size whatever the scales), clipped to it. */
typedef struct plot_chart_t {
    double px0, py0, pw, ph;       /* the pixel rectangle (top-left corner, size) */
    double xmin, xmax, ymin, ymax; /* the values at its edges */
} plot_chart_t;

typedef enum plot_line_t { PLOT_LINE_NONE, PLOT_LINE_SOLID, PLOT_LINE_DASHED, PLOT_LINE_DOTTED } plot_line_t;
typedef enum plot_mark_t {
    PLOT_MARK_NONE,
    PLOT_MARK_DOT,
    PLOT_MARK_SQUARE,
    PLOT_MARK_TRIANGLE,
    PLOT_MARK_CROSS,
    PLOT_MARK_RING
} plot_mark_t;

/* One series: count points (x[i], y[i]); a point with a NaN coordinate is
 * skipped and breaks the line. The label (NULL: none) becomes a legend
 * entry that shows the line and the marker. */
typedef struct plot_series_t {
    const double* x;
    const double* y;
    int count;
    plot_rgb_t color;
    plot_line_t line;
    plot_mark_t mark;
    const char* label;
} plot_series_t;

/* Widen [*lo, *hi] to multiples of the round step for about `count`
 * ticks, so that a chart's edges fall on ticks. */
void plot_nice_range(double* lo, double* hi, int count);
/* Set a chart over the pixel rectangle (x, y, w, h) showing [xmin, xmax]
 * x [ymin, ymax] (an empty range is widened by 1 each way), and draw its
 * background, grid, ticks, tick values and axis titles (may be NULL). */
void plot_chart_setup(plot_t* p, plot_chart_t* chart, double x, double y, double w, double h, double xmin,
                      double xmax, double ymin, double ymax, const char* xlabel, const char* ylabel);
/* Value -> pixel for a chart. */
void plot_chart_to_px(const plot_chart_t* chart, double x, double y, double* px, double* py);
/* Draw a series (and its legend entry when it has a label). */
void plot_chart_series(plot_t* p, const plot_chart_t* chart, const plot_series_t* series);
/* A translucent band between lo[i] and hi[i] over x[i] (i < count, x
 * increasing), drawn first so that series stay on top; label: a legend
 * entry (style 3), or NULL. */
void plot_chart_band(plot_t* p, const plot_chart_t* chart, const double* x, const double* lo,
                     const double* hi, int count, plot_rgb_t color, const char* label);
/* Text at a chart point, offset by (dx, dy) pixels; align 0 left, 0.5
 * centre, 1 right of the point. */
void plot_chart_text(plot_t* p, const plot_chart_t* chart, double x, double y, double dx, double dy,
                     double align, const char* text);
/* The legend entry of a series alone (plot_chart_series adds it). */
void plot_legend_series(plot_t* p, const plot_series_t* series);

/* Kinds, each a subcommand of its own (argv[0] is the kind's name) that
 * parses its options and the shared ones with plot_parse. */
int plot_kind_run(int argc, char** argv);
int plot_kind_scaling(int argc, char** argv); /* plot_scaling.c */
int plot_kind_nav(int argc, char** argv);     /* plot_nav.c */

/* Print the summary line every kind ends with: the file, its size, and the
 * first panel's mapping (px = x0 + scale * x, py = y0 - scale * y), which
 * lets scripts and tests find a world point in the picture. */
void plot_report(const plot_t* p, const plot_panel_t* panel, const char* what);

#endif /* SHOAL_CLI_PLOT_H */
