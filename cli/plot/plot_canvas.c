/* The canvas under every `shoal plot` kind: see plot.h. */
#define _POSIX_C_SOURCE 200809L
#include <cairo-svg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/atomic_file.h"
#include "cli/plot/plot.h"

/* Layout, px: the title band on top, the legend band at the bottom, and
 * room for tick labels left of and below each panel. */
enum { TITLE_H = 52, LEGEND_H = 46, MARGIN_L = 58, MARGIN_R = 18, MARGIN_B = 40 };

static const plot_rgb_t ink = {0.15, 0.15, 0.18};
static const plot_rgb_t grid_ink = {0.86, 0.87, 0.90};

int plot_format(const char* path)
{
    size_t n = path ? strlen(path) : 0;
    if (n > 4 && strcasecmp(path + n - 4, ".png") == 0) return 1;
    if (n > 4 && strcasecmp(path + n - 4, ".svg") == 0) return 2;
    return 0;
}

/* cairo's output callback: every byte of a picture goes into the output
 * file's stream (io/atomic_file.h), so a picture follows the rule of every
 * other output. A short write sets the stream's error flag, which the commit
 * sees; cairo is told too, so that it stops early. */
static cairo_status_t write_output(void* closure, const unsigned char* data, unsigned int length)
{
    atomic_file_t* file = closure;
    if (length != 0 && fwrite(data, 1, length, file->f) != length) return CAIRO_STATUS_WRITE_ERROR;
    return CAIRO_STATUS_SUCCESS;
}

int plot_open(plot_t* p, const char* path, int width, int height, char* err, int err_size)
{
    memset(p, 0, sizeof *p);
    int format = plot_format(path);
    if (format == 0) {
        snprintf(err, (size_t)err_size, "output '%s': expected a file name ending in .png or .svg",
                 path ? path : "");
        return -1;
    }
    if (strlen(path) >= sizeof p->path) {
        snprintf(err, (size_t)err_size, "output path is too long");
        return -1;
    }
    snprintf(p->path, sizeof p->path, "%s", path);
    p->width = width;
    p->height = height;
    p->svg = format == 2;
    /* The output rule (io/atomic_file.h), checked before anything is drawn:
     * a link or directory is refused, a regular file replaced only when the
     * whole picture is written, a device written through. */
    p->file = malloc(sizeof *p->file);
    if (p->file == NULL) {
        snprintf(err, (size_t)err_size, "cannot write '%s': out of memory", path);
        return -1;
    }
    if (atomic_file_open(p->file, p->path, err, err_size) != 0) {
        free(p->file);
        p->file = NULL;
        return -1;
    }
    if (p->svg)
        p->surface = cairo_svg_surface_create_for_stream(write_output, p->file, width, height);
    else
        p->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    if (cairo_surface_status(p->surface) != CAIRO_STATUS_SUCCESS) {
        snprintf(err, (size_t)err_size, "cannot create a %dx%d canvas for '%s': %s", width, height, path,
                 cairo_status_to_string(cairo_surface_status(p->surface)));
        cairo_surface_destroy(p->surface);
        p->surface = NULL;
        atomic_file_discard(p->file);
        free(p->file);
        p->file = NULL;
        return -1;
    }
    p->cr = cairo_create(p->surface);
    cairo_set_source_rgb(p->cr, 0.985, 0.985, 0.98); /* light background */
    cairo_paint(p->cr);
    cairo_select_font_face(p->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_line_join(p->cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(p->cr, CAIRO_LINE_CAP_ROUND);
    p->legend_x = 16.0;
    return 0;
}

int plot_close(plot_t* p, char* err, int err_size)
{
    cairo_status_t st = cairo_status(p->cr);
    if (st == CAIRO_STATUS_SUCCESS && !p->svg)
        st = cairo_surface_write_to_png_stream(p->surface, write_output, p->file);
    cairo_destroy(p->cr);
    cairo_surface_finish(p->surface); /* writes the rest of the SVG */
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(p->surface);
    cairo_surface_destroy(p->surface);
    p->cr = NULL;
    p->surface = NULL;
    int rc = 0;
    if (st != CAIRO_STATUS_SUCCESS && st != CAIRO_STATUS_WRITE_ERROR) {
        /* A drawing error: nothing worth keeping was made. */
        snprintf(err, (size_t)err_size, "cannot write '%s': %s", p->path, cairo_status_to_string(st));
        atomic_file_discard(p->file);
        rc = -1;
    } else if (atomic_file_commit(p->file, err, err_size) != 0) {
        /* A write error (a full disk) left the stream's error flag set: the
         * commit names the reason, removes the temporary file and leaves
         * the previous picture as it was. */
        rc = -1;
    }
    free(p->file);
    p->file = NULL;
    return rc;
}

void plot_abandon(plot_t* p)
{
    cairo_destroy(p->cr);
    cairo_surface_finish(p->surface);
    cairo_surface_destroy(p->surface);
    p->cr = NULL;
    p->surface = NULL;
    atomic_file_discard(p->file);
    free(p->file);
    p->file = NULL;
}

void plot_report(const plot_t* p, const plot_panel_t* panel, const char* what)
{
    double x0, y0;
    plot_to_px(panel, 0.0, 0.0, &x0, &y0);
    printf("wrote %s (%s, %dx%d px): %s; view: px = %.3f + %.5f x, py = %.3f - %.5f y\n", p->path,
           p->svg ? "SVG" : "PNG", p->width, p->height, what, x0, panel->scale, y0, panel->scale);
}

/* ---- text ------------------------------------------------------------------ */

static void text(plot_t* p, double x, double y, double size, int bold, double align, const char* s)
{
    cairo_t* cr = p->cr;
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - align * e.x_advance, y);
    cairo_show_text(cr, s);
}

static double text_width(plot_t* p, double size, const char* s)
{
    cairo_select_font_face(p->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(p->cr, size);
    cairo_text_extents_t e;
    cairo_text_extents(p->cr, s, &e);
    return e.x_advance;
}

/* The largest size up to `size` (down to 8 px) at which s fits in width. */
static double fit_size(plot_t* p, double size, int bold, const char* s, double width)
{
    cairo_select_font_face(p->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(p->cr, size);
    cairo_text_extents_t e;
    cairo_text_extents(p->cr, s, &e);
    if (e.x_advance <= width || e.x_advance <= 0.0) return size;
    double fitted = size * width / e.x_advance;
    return fitted < 8.0 ? 8.0 : fitted;
}

void plot_title(plot_t* p, const char* title, const char* subtitle)
{
    double room = p->width - 32.0;
    cairo_set_source_rgb(p->cr, ink.r, ink.g, ink.b);
    text(p, 16, 24, fit_size(p, 17, 1, title, room), 1, 0.0, title);
    if (subtitle && subtitle[0]) {
        cairo_set_source_rgb(p->cr, 0.35, 0.35, 0.4);
        text(p, 16, 44, fit_size(p, 12, 0, subtitle, room), 0, 0.0, subtitle);
    }
}

/* Legend rows: entries go left to right and start the second row when
 * the first is full. */
static double legend_y(const plot_t* p) { return p->height - LEGEND_H + 12 + 20 * p->legend_row; }

static double legend_place(plot_t* p, double width)
{
    if (p->legend_x > 16.0 && p->legend_x + width > p->width - 8 && p->legend_row == 0) {
        p->legend_row = 1;
        p->legend_x = 16.0;
    }
    return p->legend_x;
}

void plot_legend(plot_t* p, plot_rgb_t c, int style, const char* label)
{
    cairo_t* cr = p->cr;
    double x = legend_place(p, 28 + text_width(p, 12, label)), y = legend_y(p);
    cairo_save(cr);
    cairo_set_source_rgba(cr, c.r, c.g, c.b, style == 3 ? 0.35 : 1.0);
    if (style == 1) {
        cairo_arc(cr, x + 10, y, 4.0, 0, 2 * PLOT_PI);
        cairo_fill(cr);
    } else {
        cairo_set_line_width(cr, style == 3 ? 9.0 : 2.2);
        if (style == 2) {
            double dash[2] = {5.0, 4.0};
            cairo_set_dash(cr, dash, 2, 0.0);
        }
        cairo_move_to(cr, x, y);
        cairo_line_to(cr, x + 22, y);
        cairo_stroke(cr);
    }
    cairo_restore(cr);
    cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
    text(p, x + 28, y + 4, 12, 0, 0.0, label);
    p->legend_x = x + 28 + text_width(p, 12, label) + 18;
}

void plot_colorbar(plot_t* p, double lo, double hi, const char* label)
{
    cairo_t* cr = p->cr;
    double x = legend_place(p, 260 + text_width(p, 12, label)), y = legend_y(p);
    char buf[64];
    snprintf(buf, sizeof buf, "%.3g", lo);
    cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
    text(p, x, y + 4, 11, 0, 0.0, buf);
    x += text_width(p, 11, buf) + 4;
    const int steps = 40;
    const double w = 120.0;
    for (int i = 0; i < steps; ++i) {
        plot_rgb_t c = plot_colormap((i + 0.5) / steps);
        cairo_set_source_rgb(cr, c.r, c.g, c.b);
        cairo_rectangle(cr, x + w * i / steps, y - 6, w / steps + 0.5, 12);
        cairo_fill(cr);
    }
    x += w + 4;
    snprintf(buf, sizeof buf, "%.3g", hi);
    cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
    text(p, x, y + 4, 11, 0, 0.0, buf);
    x += text_width(p, 11, buf) + 6;
    text(p, x, y + 4, 12, 0, 0.0, label);
    p->legend_x = x + text_width(p, 12, label) + 18;
}

/* ---- panels ------------------------------------------------------------------ */

double plot_nice_step(double span, int count)
{
    if (!(span > 0.0) || !isfinite(span)) return 1.0;
    double raw = span / (count > 0 ? count : 1);
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
}

void plot_to_px(const plot_panel_t* panel, double x, double y, double* px, double* py)
{
    *px = panel->px0 + (x - panel->xmin) * panel->scale;
    *py = panel->py0 + panel->ph - (y - panel->ymin) * panel->scale;
}

static void format_tick(char* buf, size_t size, double v, double step)
{
    if (fabs(v) < 1e-9 * step) v = 0.0;
    int decimals = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
    snprintf(buf, size, "%.*f", decimals, v);
}

void plot_panel_setup(plot_t* p, plot_panel_t* panel, double x, double y, double w, double h, double xmin,
                      double xmax, double ymin, double ymax, const char* xlabel, const char* ylabel)
{
    cairo_t* cr = p->cr;
    /* A degenerate extent (one point, a straight line) still gets a view. */
    if (!(xmax - xmin > 1e-6)) {
        double c = 0.5 * (xmin + xmax);
        xmin = c - 1.0;
        xmax = c + 1.0;
    }
    if (!(ymax - ymin > 1e-6)) {
        double c = 0.5 * (ymin + ymax);
        ymin = c - 1.0;
        ymax = c + 1.0;
    }
    double sx = w / (xmax - xmin), sy = h / (ymax - ymin);
    double s = sx < sy ? sx : sy;
    double cx = 0.5 * (xmin + xmax), cy = 0.5 * (ymin + ymax);
    panel->px0 = x;
    panel->py0 = y;
    panel->pw = w;
    panel->ph = h;
    panel->scale = s;
    panel->xmin = cx - 0.5 * w / s;
    panel->xmax = cx + 0.5 * w / s;
    panel->ymin = cy - 0.5 * h / s;
    panel->ymax = cy + 0.5 * h / s;
    panel->xlabel = xlabel;
    panel->ylabel = ylabel;

    cairo_save(cr);
    cairo_set_source_rgb(cr, 1.0, 1.0, 1.0);
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill(cr);
    /* Grid and ticks at one round step for both axes (same scale). */
    double step = plot_nice_step(fmax(panel->xmax - panel->xmin, panel->ymax - panel->ymin), 8);
    cairo_set_line_width(cr, 1.0);
    char buf[32];
    for (double v = ceil(panel->xmin / step) * step; v <= panel->xmax; v += step) {
        double px, py;
        plot_to_px(panel, v, 0.0, &px, &py);
        px = floor(px) + 0.5;
        cairo_set_source_rgb(cr, grid_ink.r, grid_ink.g, grid_ink.b);
        cairo_move_to(cr, px, y);
        cairo_line_to(cr, px, y + h);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
        format_tick(buf, sizeof buf, v, step);
        text(p, px, y + h + 15, 11, 0, 0.5, buf);
    }
    for (double v = ceil(panel->ymin / step) * step; v <= panel->ymax; v += step) {
        double px, py;
        plot_to_px(panel, 0.0, v, &px, &py);
        py = floor(py) + 0.5;
        cairo_set_source_rgb(cr, grid_ink.r, grid_ink.g, grid_ink.b);
        cairo_move_to(cr, x, py);
        cairo_line_to(cr, x + w, py);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
        format_tick(buf, sizeof buf, v, step);
        text(p, x - 5, py + 4, 11, 0, 1.0, buf);
    }
    cairo_set_source_rgb(cr, 0.55, 0.56, 0.6);
    cairo_rectangle(cr, x + 0.5, y + 0.5, w - 1.0, h - 1.0);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
    if (xlabel) text(p, x + w, y + h + 32, 12, 0, 1.0, xlabel);
    if (ylabel) {
        cairo_save(cr);
        cairo_translate(cr, x - 42, y);
        cairo_rotate(cr, -PLOT_PI / 2);
        text(p, 0, 0, 12, 0, 1.0, ylabel);
        cairo_restore(cr);
    }
    cairo_restore(cr);
}

void plot_area(const plot_t* p, double fx0, double fx1, double fy0, double fy1, double* x, double* y,
               double* w, double* h)
{
    double full_h = p->height - TITLE_H - LEGEND_H;
    *x = fx0 * p->width + MARGIN_L;
    *y = TITLE_H + fy0 * full_h;
    *w = (fx1 - fx0) * p->width - MARGIN_L - MARGIN_R;
    *h = (fy1 - fy0) * full_h - MARGIN_B;
}

void plot_panel_full(plot_t* p, plot_panel_t* panel, double xmin, double xmax, double ymin, double ymax,
                     const char* xlabel, const char* ylabel)
{
    double x, y, w, h;
    plot_area(p, 0.0, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    plot_panel_setup(p, panel, x, y, w, h, xmin, xmax, ymin, ymax, xlabel, ylabel);
}

void plot_panel_begin(plot_t* p, const plot_panel_t* panel)
{
    cairo_t* cr = p->cr;
    cairo_save(cr);
    cairo_rectangle(cr, panel->px0, panel->py0, panel->pw, panel->ph);
    cairo_clip(cr);
    /* world -> px: x' = px0 + s (x - xmin), y' = py0 + ph - s (y - ymin) */
    cairo_translate(cr, panel->px0 - panel->xmin * panel->scale,
                    panel->py0 + panel->ph + panel->ymin * panel->scale);
    cairo_scale(cr, panel->scale, -panel->scale);
}

void plot_panel_end(plot_t* p) { cairo_restore(p->cr); }

void plot_scale_bar(plot_t* p, const plot_panel_t* panel)
{
    cairo_t* cr = p->cr;
    double len = plot_nice_step((panel->xmax - panel->xmin) * 0.6, 4);
    double lpx = len * panel->scale;
    double x1 = panel->px0 + panel->pw - 14, x0 = x1 - lpx, y = panel->py0 + panel->ph - 14;
    char buf[32];
    if (len >= 1.0)
        snprintf(buf, sizeof buf, "%g m", len);
    else
        snprintf(buf, sizeof buf, "%g cm", len * 100.0);
    /* No backdrop: it would hide data under it. */
    cairo_save(cr);
    cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
    cairo_set_line_width(cr, 2.0);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
    cairo_move_to(cr, x0, y - 4);
    cairo_line_to(cr, x0, y);
    cairo_line_to(cr, x1, y);
    cairo_line_to(cr, x1, y - 4);
    cairo_stroke(cr);
    text(p, 0.5 * (x0 + x1), y - 8, 11, 0, 0.5, buf);
    cairo_restore(cr);
}

/* ---- charts ------------------------------------------------------------------ */

void plot_nice_range(double* lo, double* hi, int count)
{
    double step = plot_nice_step(*hi - *lo, count);
    *lo = floor(*lo / step + 1e-9) * step;
    *hi = ceil(*hi / step - 1e-9) * step;
}

void plot_chart_to_px(const plot_chart_t* chart, double x, double y, double* px, double* py)
{
    *px = chart->px0 + (x - chart->xmin) * chart->pw / (chart->xmax - chart->xmin);
    *py = chart->py0 + chart->ph - (y - chart->ymin) * chart->ph / (chart->ymax - chart->ymin);
}

void plot_chart_setup(plot_t* p, plot_chart_t* chart, double x, double y, double w, double h, double xmin,
                      double xmax, double ymin, double ymax, const char* xlabel, const char* ylabel)
{
    cairo_t* cr = p->cr;
    if (!(xmax - xmin > 0.0)) {
        xmin -= 1.0;
        xmax += 1.0;
    }
    if (!(ymax - ymin > 0.0)) {
        ymin -= 1.0;
        ymax += 1.0;
    }
    *chart = (plot_chart_t){
        .px0 = x, .py0 = y, .pw = w, .ph = h, .xmin = xmin, .xmax = xmax, .ymin = ymin, .ymax = ymax};
    cairo_save(cr);
    cairo_set_source_rgb(cr, 1.0, 1.0, 1.0);
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill(cr);
    cairo_set_line_width(cr, 1.0);
    char buf[32];
    /* A step per axis, about one tick per 80 px across and 50 px up; a
     * tick within a thousandth of a step of an edge still counts. */
    double xstep = plot_nice_step(xmax - xmin, (int)fmax(2.0, w / 80.0));
    double ystep = plot_nice_step(ymax - ymin, (int)fmax(2.0, h / 50.0));
    for (double k = ceil(xmin / xstep - 1e-3); k * xstep <= xmax + 1e-3 * xstep; k += 1.0) {
        double v = k * xstep, px, py;
        plot_chart_to_px(chart, v, ymin, &px, &py);
        px = floor(px) + 0.5;
        cairo_set_source_rgb(cr, grid_ink.r, grid_ink.g, grid_ink.b);
        cairo_move_to(cr, px, y);
        cairo_line_to(cr, px, y + h);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
        format_tick(buf, sizeof buf, v, xstep);
        text(p, px, y + h + 15, 11, 0, 0.5, buf);
    }
    for (double k = ceil(ymin / ystep - 1e-3); k * ystep <= ymax + 1e-3 * ystep; k += 1.0) {
        double v = k * ystep, px, py;
        plot_chart_to_px(chart, xmin, v, &px, &py);
        py = floor(py) + 0.5;
        cairo_set_source_rgb(cr, grid_ink.r, grid_ink.g, grid_ink.b);
        cairo_move_to(cr, x, py);
        cairo_line_to(cr, x + w, py);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
        format_tick(buf, sizeof buf, v, ystep);
        text(p, x - 5, py + 4, 11, 0, 1.0, buf);
    }
    cairo_set_source_rgb(cr, 0.55, 0.56, 0.6);
    cairo_rectangle(cr, x + 0.5, y + 0.5, w - 1.0, h - 1.0);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
    if (xlabel) text(p, x + 0.5 * w, y + h + 32, 12, 0, 0.5, xlabel);
    if (ylabel) {
        cairo_save(cr);
        cairo_translate(cr, x - 42, y + 0.5 * h);
        cairo_rotate(cr, -PLOT_PI / 2);
        text(p, 0, 0, 12, 0, 0.5, ylabel);
        cairo_restore(cr);
    }
    cairo_restore(cr);
}

/* Line styles in pixels: dots are zero-length dashes with round caps. */
static void line_style(cairo_t* cr, plot_line_t line)
{
    static const double dashed[2] = {6.0, 4.0}, dotted[2] = {0.0, 4.0};
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    if (line == PLOT_LINE_DASHED)
        cairo_set_dash(cr, dashed, 2, 0.0);
    else if (line == PLOT_LINE_DOTTED)
        cairo_set_dash(cr, dotted, 2, 0.0);
    else
        cairo_set_dash(cr, NULL, 0, 0.0);
}

/* A marker of radius r px centred on (x, y) px. */
static void marker(cairo_t* cr, plot_mark_t mark, double x, double y, double r)
{
    cairo_new_path(cr);
    switch (mark) {
    case PLOT_MARK_NONE: return;
    case PLOT_MARK_DOT:
        cairo_arc(cr, x, y, r, 0.0, 2.0 * PLOT_PI);
        cairo_fill(cr);
        return;
    case PLOT_MARK_SQUARE:
        cairo_rectangle(cr, x - 0.85 * r, y - 0.85 * r, 1.7 * r, 1.7 * r);
        cairo_fill(cr);
        return;
    case PLOT_MARK_TRIANGLE:
        cairo_move_to(cr, x, y - 1.15 * r);
        cairo_line_to(cr, x + r, y + 0.7 * r);
        cairo_line_to(cr, x - r, y + 0.7 * r);
        cairo_close_path(cr);
        cairo_fill(cr);
        return;
    case PLOT_MARK_CROSS:
        cairo_move_to(cr, x - r, y - r);
        cairo_line_to(cr, x + r, y + r);
        cairo_move_to(cr, x - r, y + r);
        cairo_line_to(cr, x + r, y - r);
        cairo_set_dash(cr, NULL, 0, 0.0);
        cairo_set_line_width(cr, 2.2);
        cairo_stroke(cr);
        return;
    case PLOT_MARK_RING:
        cairo_arc(cr, x, y, r, 0.0, 2.0 * PLOT_PI);
        cairo_set_dash(cr, NULL, 0, 0.0);
        cairo_set_line_width(cr, 1.6);
        cairo_stroke(cr);
        return;
    }
}

enum { MARK_R = 4 };

void plot_chart_series(plot_t* p, const plot_chart_t* chart, const plot_series_t* s)
{
    cairo_t* cr = p->cr;
    cairo_save(cr);
    cairo_set_source_rgb(cr, s->color.r, s->color.g, s->color.b);
    if (s->line != PLOT_LINE_NONE) {
        cairo_save(cr);
        cairo_rectangle(cr, chart->px0, chart->py0, chart->pw, chart->ph);
        cairo_clip(cr);
        cairo_new_path(cr);
        int open = 0;
        for (int i = 0; i < s->count; ++i) {
            if (!isfinite(s->x[i]) || !isfinite(s->y[i])) {
                open = 0;
                continue;
            }
            double px, py;
            plot_chart_to_px(chart, s->x[i], s->y[i], &px, &py);
            if (open)
                cairo_line_to(cr, px, py);
            else
                cairo_move_to(cr, px, py);
            open = 1;
        }
        line_style(cr, s->line);
        cairo_set_line_width(cr, 2.0);
        cairo_stroke(cr);
        cairo_restore(cr);
    }
    if (s->mark != PLOT_MARK_NONE) {
        /* markers on an edge (a zero) show whole */
        cairo_rectangle(cr, chart->px0 - 2 * MARK_R, chart->py0 - 2 * MARK_R, chart->pw + 4 * MARK_R,
                        chart->ph + 4 * MARK_R);
        cairo_clip(cr);
        for (int i = 0; i < s->count; ++i) {
            if (!isfinite(s->x[i]) || !isfinite(s->y[i])) continue;
            double px, py;
            plot_chart_to_px(chart, s->x[i], s->y[i], &px, &py);
            marker(cr, s->mark, px, py, MARK_R);
        }
    }
    cairo_restore(cr);
    if (s->label) plot_legend_series(p, s);
}

void plot_chart_band(plot_t* p, const plot_chart_t* chart, const double* x, const double* lo,
                     const double* hi, int count, plot_rgb_t color, const char* label)
{
    cairo_t* cr = p->cr;
    cairo_save(cr);
    cairo_rectangle(cr, chart->px0, chart->py0, chart->pw, chart->ph);
    cairo_clip(cr);
    cairo_new_path(cr);
    double px, py;
    for (int i = 0; i < count; ++i) {
        plot_chart_to_px(chart, x[i], hi[i], &px, &py);
        cairo_line_to(cr, px, py);
    }
    for (int i = count - 1; i >= 0; --i) {
        plot_chart_to_px(chart, x[i], lo[i], &px, &py);
        cairo_line_to(cr, px, py);
    }
    cairo_close_path(cr);
    cairo_set_source_rgba(cr, color.r, color.g, color.b, 0.2);
    cairo_fill(cr);
    cairo_restore(cr);
    if (label) plot_legend(p, color, 3, label);
}

void plot_chart_text(plot_t* p, const plot_chart_t* chart, double x, double y, double dx, double dy,
                     double align, const char* s)
{
    double px, py;
    plot_chart_to_px(chart, x, y, &px, &py);
    cairo_save(p->cr);
    cairo_set_source_rgb(p->cr, ink.r, ink.g, ink.b);
    text(p, px + dx, py + dy, 11, 0, align, s);
    cairo_restore(p->cr);
}

void plot_legend_series(plot_t* p, const plot_series_t* s)
{
    cairo_t* cr = p->cr;
    double x = legend_place(p, 28 + text_width(p, 12, s->label)), y = legend_y(p);
    cairo_save(cr);
    cairo_set_source_rgb(cr, s->color.r, s->color.g, s->color.b);
    if (s->line != PLOT_LINE_NONE) {
        cairo_move_to(cr, x, y);
        cairo_line_to(cr, x + 22, y);
        line_style(cr, s->line);
        cairo_set_line_width(cr, 2.0);
        cairo_stroke(cr);
    }
    marker(cr, s->mark, x + 11, y, MARK_R);
    cairo_restore(cr);
    cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
    text(p, x + 28, y + 4, 12, 0, 0.0, s->label);
    p->legend_x = x + 28 + text_width(p, 12, s->label) + 18;
}

/* ---- drawing in world coordinates ------------------------------------------ */

void plot_set_color(plot_t* p, plot_rgb_t c, double alpha)
{
    cairo_set_source_rgba(p->cr, c.r, c.g, c.b, alpha);
}

void plot_stroke_px(plot_t* p, double width_px)
{
    /* Widths in device pixels whatever the world scale. */
    double ux = width_px, uy = 0.0;
    cairo_device_to_user_distance(p->cr, &ux, &uy);
    cairo_set_line_width(p->cr, hypot(ux, uy));
    cairo_stroke(p->cr);
}

void plot_dash_px(plot_t* p, double on_px, double off_px)
{
    if (on_px <= 0.0) {
        cairo_set_dash(p->cr, NULL, 0, 0.0);
        return;
    }
    double a = on_px, b = 0.0, c = off_px, d = 0.0;
    cairo_device_to_user_distance(p->cr, &a, &b);
    cairo_device_to_user_distance(p->cr, &c, &d);
    double dash[2] = {hypot(a, b), hypot(c, d)};
    cairo_set_dash(p->cr, dash, 2, 0.0);
}

void plot_circle(plot_t* p, double x, double y, double r)
{
    cairo_new_sub_path(p->cr);
    cairo_arc(p->cr, x, y, r, 0.0, 2.0 * PLOT_PI);
}

void plot_dot(plot_t* p, const plot_panel_t* panel, double x, double y, double r_px)
{
    plot_circle(p, x, y, r_px / panel->scale);
    cairo_fill(p->cr);
}

void plot_arrow(plot_t* p, const plot_panel_t* panel, double x, double y, double heading, double length_px,
                double width_px)
{
    cairo_t* cr = p->cr;
    double L = length_px / panel->scale, head = fmin(0.45 * L, 10.0 / panel->scale);
    double c = cos(heading), s = sin(heading);
    double tx = x + L * c, ty = y + L * s;
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, tx - 0.6 * head * c, ty - 0.6 * head * s);
    plot_stroke_px(p, width_px);
    double hw = 0.5 * head;
    cairo_move_to(cr, tx, ty);
    cairo_line_to(cr, tx - head * c - hw * s, ty - head * s + hw * c);
    cairo_line_to(cr, tx - head * c + hw * s, ty - head * s - hw * c);
    cairo_close_path(cr);
    cairo_fill(cr);
}

void plot_text_at(plot_t* p, const plot_panel_t* panel, double x, double y, double dx, double dy,
                  const char* s)
{
    double px, py;
    plot_to_px(panel, x, y, &px, &py);
    cairo_t* cr = p->cr;
    cairo_save(cr);
    cairo_identity_matrix(cr);
    text(p, px + dx, py + dy, 12, 0, 0.0, s);
    cairo_restore(cr);
}

/* ---- colours ------------------------------------------------------------------ */

plot_rgb_t plot_palette(int index)
{
    /* Okabe-Ito, readable by colour-blind viewers, without its yellow
     * (too pale on white). */
    static const plot_rgb_t colors[] = {
        {0.000, 0.447, 0.698}, {0.835, 0.369, 0.000}, {0.000, 0.620, 0.451}, {0.800, 0.475, 0.655},
        {0.337, 0.706, 0.914}, {0.902, 0.624, 0.000}, {0.3, 0.3, 0.3},       {0.6, 0.2, 0.2},
    };
    int n = (int)(sizeof colors / sizeof colors[0]);
    int i = index % n;
    return colors[i < 0 ? i + n : i];
}

plot_rgb_t plot_colormap(double t)
{
    /* A few stops of a viridis-like map, interpolated linearly. */
    static const plot_rgb_t stops[] = {{0.267, 0.005, 0.329},
                                       {0.230, 0.322, 0.546},
                                       {0.128, 0.567, 0.551},
                                       {0.369, 0.789, 0.383},
                                       {0.880, 0.860, 0.100}};
    const int n = (int)(sizeof stops / sizeof stops[0]);
    if (!(t > 0.0)) t = 0.0;
    if (t > 1.0) t = 1.0;
    double f = t * (n - 1);
    int i = (int)f;
    if (i >= n - 1) return stops[n - 1];
    double u = f - i;
    plot_rgb_t a = stops[i], b = stops[i + 1];
    return (plot_rgb_t){a.r + u * (b.r - a.r), a.g + u * (b.g - a.g), a.b + u * (b.b - a.b)};
}
