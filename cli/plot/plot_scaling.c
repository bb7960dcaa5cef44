/* `shoal plot scaling FILE -o OUT`: the speed-up against the thread count
 * of a `shoal bench scaling` sweep (benchmark/README.md, Thread sweeps), read
 * back from its JSON lines (--json) or its CSV (--csv), on a chart of
 * cli/plot/plot.h: the whole step, the costliest systems, and the ideal line
 * (speed-up = threads over the first count's threads). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file_read.h"
#include "cli/cli.h"
#include "cli/plot/plot.h"

#define MAX_COUNTS 64  /* thread counts in one file */
#define MAX_SYSTEMS 64 /* distinct systems in one file */
#define SCALING_FILE_LIMIT ((uint64_t)64 << 20)

typedef struct scaling_curve {
    char name[48];
    double speedup[MAX_COUNTS]; /* NaN where missing */
    double base_ms;             /* ms per step at the first count; NaN when not given */
} scaling_curve_t;

/* A sweep as read from the file, its thread counts in file order (the
 * first is the speed-ups' base). */
typedef struct scaling_data {
    char scene[32];
    double agents, rounds; /* NaN when not given */
    int counts;
    double threads[MAX_COUNTS];
    double step[MAX_COUNTS];    /* the step's speed-up */
    double ceiling[MAX_COUNTS]; /* the ceiling's speed-up (bench scaling --ceiling), NaN when not given */
    int over[MAX_COUNTS];       /* oversubscribed */
    double step_base_ms;        /* NaN when not given */
    int agree;                  /* hashes_agree: 1, 0, or -1 when not given */
    scaling_curve_t systems[MAX_SYSTEMS];
    int system_count;
} scaling_data_t;

/* The error of line `line` (0: the file as a whole) into err; returns -1. */
static int bad(char* err, int size, const char* path, int line, const char* what)
{
    if (line > 0)
        snprintf(err, (size_t)size, "%s line %d: %s", path, line, what);
    else
        snprintf(err, (size_t)size, "%s: %s", path, what);
    return -1;
}

/* The index of thread count t, added when new; -1 when the table is full. */
static int count_index(scaling_data_t* d, double t)
{
    for (int k = 0; k < d->counts; ++k)
        if (d->threads[k] == t) return k;
    if (d->counts == MAX_COUNTS) return -1;
    int k = d->counts++;
    d->threads[k] = t;
    d->step[k] = NAN;
    d->ceiling[k] = NAN;
    for (int i = 0; i < MAX_SYSTEMS; ++i) d->systems[i].speedup[k] = NAN;
    return k;
}

static scaling_curve_t* curve_named(scaling_data_t* d, const char* name)
{
    for (int i = 0; i < d->system_count; ++i)
        if (!strcmp(d->systems[i].name, name)) return &d->systems[i];
    if (d->system_count == MAX_SYSTEMS) return NULL;
    scaling_curve_t* c = &d->systems[d->system_count++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->base_ms = NAN;
    for (int k = 0; k < MAX_COUNTS; ++k) c->speedup[k] = NAN;
    return c;
}

/* A thread count as the files write it: a whole number >= 1. */
static int valid_threads(double t) { return isfinite(t) && t >= 1.0 && t <= 1e6 && t == floor(t); }

/* ---- JSON lines (bench scaling --json) --------------------------------------- */

static double number_or_nan(const cJSON* o, const char* key)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int read_json_line(scaling_data_t* d, cJSON* root, const char* path, int line, char* err, int size)
{
    char what[160];
    if (!cJSON_IsObject(root)) return bad(err, size, path, line, "expected one JSON object per line");
    const cJSON* t = cJSON_GetObjectItemCaseSensitive(root, "threads");
    if (!cJSON_IsNumber(t) || !valid_threads(t->valuedouble))
        return bad(err, size, path, line,
                   "\"threads\" must be a whole number >= 1 (a line of 'shoal bench scaling --json')");
    const cJSON* s = cJSON_GetObjectItemCaseSensitive(root, "speedup");
    if (!cJSON_IsNumber(s) && !cJSON_IsNull(s))
        return bad(err, size, path, line, "\"speedup\" must be a number or null");
    int k = count_index(d, t->valuedouble);
    if (k < 0) {
        snprintf(what, sizeof what, "more than %d thread counts", MAX_COUNTS);
        return bad(err, size, path, line, what);
    }
    if (isfinite(d->step[k])) {
        snprintf(what, sizeof what, "thread count %g again (one sweep per file)", t->valuedouble);
        return bad(err, size, path, line, what);
    }
    d->step[k] = cJSON_IsNumber(s) ? s->valuedouble : NAN;
    d->ceiling[k] = number_or_nan(root, "ceiling_speedup");
    d->over[k] = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "oversubscribed"));
    if (k == 0) {
        const cJSON* scene = cJSON_GetObjectItemCaseSensitive(root, "scene");
        if (cJSON_IsString(scene)) snprintf(d->scene, sizeof d->scene, "%s", scene->valuestring);
        d->agents = number_or_nan(root, "agents");
        d->rounds = number_or_nan(root, "rounds");
        d->step_base_ms = number_or_nan(root, "ms_per_step");
    }
    const cJSON* agree = cJSON_GetObjectItemCaseSensitive(root, "hashes_agree");
    if (cJSON_IsBool(agree)) d->agree = (d->agree != 0) && cJSON_IsTrue(agree);
    const cJSON* systems = cJSON_GetObjectItemCaseSensitive(root, "systems");
    if (systems && !cJSON_IsArray(systems)) return bad(err, size, path, line, "\"systems\" must be an array");
    const cJSON* sys;
    cJSON_ArrayForEach(sys, systems)
    {
        const cJSON* name = cJSON_GetObjectItemCaseSensitive(sys, "name");
        if (!cJSON_IsString(name)) return bad(err, size, path, line, "a system without a \"name\" string");
        scaling_curve_t* c = curve_named(d, name->valuestring);
        if (!c) continue; /* more systems than the table: not drawn */
        c->speedup[k] = number_or_nan(sys, "speedup");
        if (k == 0) c->base_ms = number_or_nan(sys, "ms_per_step");
    }
    return 0;
}

static int read_json_lines(scaling_data_t* d, char* text, const char* path, char* err, int size)
{
    int line = 0;
    for (char* p = text; *p;) {
        char* eol = strchr(p, '\n');
        if (eol) *eol = '\0';
        ++line;
        if (p[strspn(p, " \t\r")] != '\0') {
            const char* end = NULL;
            cJSON* root = cJSON_ParseWithOpts(p, &end, 1);
            if (!root) {
                char what[128];
                snprintf(what, sizeof what, "not JSON at column %d (expected one object per line)",
                         (int)(end && end >= p ? end - p : 0) + 1);
                return bad(err, size, path, line, what);
            }
            int rc = read_json_line(d, root, path, line, err, size);
            cJSON_Delete(root);
            if (rc != 0) return rc;
        }
        if (!eol) break;
        p = eol + 1;
    }
    return 0;
}

/* ---- CSV (bench scaling --csv) ------------------------------------------------- */

#define CSV_MAX_FIELDS 32

/* Split `line` in place at commas. Returns the field count. */
static int split(char* line, char** fields)
{
    int n = 0;
    for (char* p = line;; ++p) {
        if (n == CSV_MAX_FIELDS) return n + 1;
        fields[n++] = p;
        p += strcspn(p, ",");
        if (*p == '\0') return n;
        *p = '\0';
    }
}

static int column(char** names, int n, const char* name)
{
    for (int i = 0; i < n; ++i)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

/* A CSV number: empty is NaN (the command writes nothing where it has
 * no value); returns 0 for text that is not a number. */
static int csv_number(const char* text, double* out)
{
    if (text[0] == '\0') {
        *out = NAN;
        return 1;
    }
    char* end = NULL;
    *out = strtod(text, &end);
    return end != text && *end == '\0';
}

static int read_csv(scaling_data_t* d, char* text, const char* path, char* err, int size)
{
    char* header[CSV_MAX_FIELDS];
    char what[200];
    char* eol = strchr(text, '\n');
    if (eol) *eol = '\0';
    if (eol && eol > text && eol[-1] == '\r') eol[-1] = '\0';
    int columns = split(text, header);
    int c_threads = column(header, columns, "threads"), c_system = column(header, columns, "system"),
        c_speedup = column(header, columns, "speedup"), c_ms = column(header, columns, "ms_per_step"),
        c_over = column(header, columns, "oversubscribed"), c_scene = column(header, columns, "scene"),
        c_agree = column(header, columns, "hashes_agree"), c_agents = column(header, columns, "agents"),
        c_rounds = column(header, columns, "rounds"), c_ceiling = column(header, columns, "ceiling_speedup");
    if (columns > CSV_MAX_FIELDS || c_threads < 0 || c_system < 0 || c_speedup < 0)
        return bad(err, size, path, 1,
                   "expected JSON lines or a CSV header with the columns threads, system and speedup "
                   "(the output of 'shoal bench scaling --json' or '--csv')");
    int line = 1;
    for (char* p = eol ? eol + 1 : NULL; p && *p;) {
        eol = strchr(p, '\n');
        if (eol) *eol = '\0';
        if (eol && eol > p && eol[-1] == '\r') eol[-1] = '\0';
        ++line;
        char* row = p;
        p = eol ? eol + 1 : NULL;
        if (row[strspn(row, " \t")] == '\0') continue;
        char* f[CSV_MAX_FIELDS];
        int n = split(row, f);
        if (n != columns) {
            snprintf(what, sizeof what, "%d fields, the header has %d", n, columns);
            return bad(err, size, path, line, what);
        }
        double t = 0.0, speedup = 0.0, ms = NAN;
        if (!csv_number(f[c_threads], &t) || !valid_threads(t)) {
            snprintf(what, sizeof what, "threads '%.40s' is not a whole number >= 1", f[c_threads]);
            return bad(err, size, path, line, what);
        }
        if (!csv_number(f[c_speedup], &speedup)) {
            snprintf(what, sizeof what, "speedup '%.40s' is not a number", f[c_speedup]);
            return bad(err, size, path, line, what);
        }
        if (c_ms >= 0 && !csv_number(f[c_ms], &ms)) {
            snprintf(what, sizeof what, "ms_per_step '%.40s' is not a number", f[c_ms]);
            return bad(err, size, path, line, what);
        }
        int k = count_index(d, t);
        if (k < 0) {
            snprintf(what, sizeof what, "more than %d thread counts", MAX_COUNTS);
            return bad(err, size, path, line, what);
        }
        if (c_over >= 0) d->over[k] = !strcmp(f[c_over], "1");
        if (c_agree >= 0 && f[c_agree][0]) d->agree = (d->agree != 0) && !strcmp(f[c_agree], "1");
        if (k == 0) {
            if (c_scene >= 0) snprintf(d->scene, sizeof d->scene, "%s", f[c_scene]);
            if (c_agents >= 0 && !csv_number(f[c_agents], &d->agents)) d->agents = NAN;
            if (c_rounds >= 0 && !csv_number(f[c_rounds], &d->rounds)) d->rounds = NAN;
        }
        if (!strcmp(f[c_system], "step")) {
            d->step[k] = speedup;
            if (k == 0) d->step_base_ms = ms;
            if (c_ceiling >= 0 && !csv_number(f[c_ceiling], &d->ceiling[k])) {
                snprintf(what, sizeof what, "ceiling_speedup '%.40s' is not a number", f[c_ceiling]);
                return bad(err, size, path, line, what);
            }
        } else {
            scaling_curve_t* c = curve_named(d, f[c_system]);
            if (!c) continue;
            c->speedup[k] = speedup;
            if (k == 0) c->base_ms = ms;
        }
    }
    return 0;
}

/* Read FILE: JSON lines when its first non-blank character is '{', CSV
 * otherwise. Returns 0, or -1 with the message in err. */
static int read_sweep(const char* path, scaling_data_t* d, char* err, int size)
{
    memset(d, 0, sizeof *d);
    d->agents = d->rounds = d->step_base_ms = NAN;
    d->agree = -1;
    void* data = NULL;
    size_t bytes = 0;
    char why[256];
    if (file_read_all(path, SCALING_FILE_LIMIT, &data, &bytes, why, sizeof why) != FILE_READ_OK) {
        snprintf(err, (size_t)size, "%s: %s", path, why);
        return -1;
    }
    char* text = data;
    const char* first = text + strspn(text, " \t\r\n");
    if (*first == '\0') {
        free(data);
        return bad(err, size, path, 0, "empty: no thread counts");
    }
    int rc = *first == '{' ? read_json_lines(d, text, path, err, size) : read_csv(d, text, path, err, size);
    free(data);
    if (rc != 0) return rc;
    if (d->counts == 0) return bad(err, size, path, 0, "no thread counts (an empty sweep)");
    for (int k = 0; k < d->counts; ++k)
        if (isnan(d->step[k])) {
            char what[96];
            snprintf(what, sizeof what, "no speed-up of the step at %g thread%s", d->threads[k],
                     d->threads[k] == 1.0 ? "" : "s");
            return bad(err, size, path, 0, what);
        }
    return 0;
}

/* ---- the picture ----------------------------------------------------------------- */

/* The systems drawn: the costliest at the first count, at least `share`
 * of the step, at most this many (the legend has two lines). */
#define MAX_DRAWN 6

static int by_cost(const void* a, const void* b)
{
    const scaling_curve_t* x = *(const scaling_curve_t* const*)a;
    const scaling_curve_t* y = *(const scaling_curve_t* const*)b;
    double cx = isnan(x->base_ms) ? -1.0 : x->base_ms, cy = isnan(y->base_ms) ? -1.0 : y->base_ms;
    return (cx < cy) - (cx > cy);
}

static int pick_systems(scaling_data_t* d, double share, scaling_curve_t** drawn)
{
    scaling_curve_t* all[MAX_SYSTEMS];
    int n = 0;
    for (int i = 0; i < d->system_count; ++i) {
        scaling_curve_t* c = &d->systems[i];
        int any = 0;
        for (int k = 0; k < d->counts; ++k) any |= isfinite(c->speedup[k]);
        if (!any) continue;
        /* without times (a CSV without ms_per_step), every system competes */
        if (isfinite(c->base_ms) && isfinite(d->step_base_ms) && c->base_ms < share * d->step_base_ms)
            continue;
        all[n++] = c;
    }
    qsort(all, (size_t)n, sizeof all[0], by_cost); /* stable enough: ties keep no order that matters */
    if (n > MAX_DRAWN) n = MAX_DRAWN;
    memcpy(drawn, all, (size_t)n * sizeof all[0]);
    return n;
}

/* Thread counts in increasing order, as indices. */
static void sorted_counts(const scaling_data_t* d, int* order)
{
    for (int k = 0; k < d->counts; ++k) order[k] = k;
    for (int i = 1; i < d->counts; ++i)
        for (int j = i; j > 0 && d->threads[order[j]] < d->threads[order[j - 1]]; --j) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

typedef struct plot_scaling_options_t {
    plot_options_t common;
    double min_share; /* percent */
} plot_scaling_options_t;

static const cli_option_t scaling_options[] = {
    {.name = "--min-share",
     .metavar = "P",
     .kind = CLI_NUMBER,
     CLI_AT(plot_scaling_options_t, min_share),
     .max = 100,
     .help = "draw the systems that take at least P % of the step at the first thread count, the 6 costliest "
             "at most (default 2)"},
};

static const cli_spec_t scaling_spec = {
    .command = "plot scaling",
    .usage = "FILE.jsonl|FILE.csv [options] -o FILE.png|FILE.svg",
    .about = "The speed-up against the thread count of a 'shoal bench scaling' sweep: the whole\n"
             "step, the costliest systems, the ideal line (threads over the first count's\n"
             "threads) and, from a sweep run with --ceiling, the machine's ceiling. Counts\n"
             "above the machine's hardware threads are shaded.\n",
    .arguments = "  FILE                  the sweep as 'shoal bench scaling --json' (JSON lines) or\n"
                 "                        '--csv' wrote it; JSON lines when its first character\n"
                 "                        is '{'\n",
    .options = scaling_options,
    .option_count = CLI_COUNT(scaling_options),
    .details = "The command prints one line: the file, its size and what it shows.\n",
    .max_positional = 1,
    .positional = "sweep file",
    PLOT_SHARED(plot_scaling_options_t),
};

static const plot_rgb_t step_ink = {0.1, 0.1, 0.12};
static const plot_rgb_t ideal_ink = {0.45, 0.45, 0.48};
static const plot_rgb_t over_ink = {0.85, 0.35, 0.2};

int plot_kind_scaling(int argc, char** argv)
{
    plot_scaling_options_t opt = {.common = PLOT_OPTIONS_DEFAULT, .min_share = 2.0};
    const char* path = NULL;
    int stop = plot_parse(&scaling_spec, argc, argv, &opt, &opt.common, &path, NULL);
    if (stop >= 0) return stop;
    if (!path)
        return cli_usage_error("plot scaling", "which sweep? (shoal plot scaling FILE.jsonl -o OUT.png)");
    scaling_data_t* d = malloc(sizeof *d);
    if (!d) {
        cli_error("plot scaling: out of memory");
        return CLI_EXIT_FAILURE;
    }
    char err[512];
    if (read_sweep(path, d, err, sizeof err) != 0) {
        cli_error("plot scaling: %s", err);
        free(d);
        return CLI_EXIT_FAILURE;
    }
    scaling_curve_t* drawn[MAX_DRAWN];
    int shown = pick_systems(d, opt.min_share / 100.0, drawn);
    int order[MAX_COUNTS] = {0};
    sorted_counts(d, order);
    double base = d->threads[0];
    double tmin = d->threads[order[0]], tmax = d->threads[order[d->counts - 1]];

    /* Extent: every count, the ideal line's end, every speed-up drawn. */
    double ymax = tmax / base;
    for (int k = 0; k < d->counts; ++k) {
        if (isfinite(d->step[k])) ymax = fmax(ymax, d->step[k]);
        if (isfinite(d->ceiling[k])) ymax = fmax(ymax, d->ceiling[k]);
        for (int i = 0; i < shown; ++i)
            if (isfinite(drawn[i]->speedup[k])) ymax = fmax(ymax, drawn[i]->speedup[k]);
    }
    double x0 = 0.0, x1 = tmax, y0 = 0.0, y1 = ymax * 1.05;
    plot_nice_range(&x0, &x1, 8);
    plot_nice_range(&y0, &y1, 8);

    plot_t p;
    if (plot_open(&p, opt.common.output, opt.common.width, opt.common.height, err, sizeof err) != 0) {
        cli_error("plot scaling: %s", err);
        free(d);
        return CLI_EXIT_FAILURE;
    }
    char title[160], sub[512], what[64] = "", rounds[48] = "";
    if (isfinite(d->agents)) snprintf(what, sizeof what, ", %.0f agents", d->agents);
    snprintf(title, sizeof title, "Thread scaling: %s%s", d->scene[0] ? d->scene : "sweep", what);
    if (isfinite(d->rounds)) snprintf(rounds, sizeof rounds, ", best of %.0f rounds", d->rounds);
    snprintf(sub, sizeof sub, "%s: speed-up over %g thread%s (best over best%s)%s", path, base,
             base == 1.0 ? "" : "s", rounds,
             d->agree == 1   ? "; one state_hash in every run"
             : d->agree == 0 ? "; state_hash DIFFERS between runs"
                             : "");
    plot_title(&p, title, sub);
    plot_chart_t chart;
    double x, y, w, h;
    plot_area(&p, 0.0, 1.0, 0.0, 1.0, &x, &y, &w, &h);
    plot_chart_setup(&p, &chart, x, y, w, h, x0, x1, y0, y1, "threads", "speed-up");

    /* Oversubscribed counts: a band from the last count that fits. */
    double fits = 0.0, over_from = INFINITY;
    for (int k = 0; k < d->counts; ++k) {
        if (d->over[k])
            over_from = fmin(over_from, d->threads[k]);
        else
            fits = fmax(fits, d->threads[k]);
    }
    if (isfinite(over_from)) {
        double bx[2] = {fmin(fits > 0.0 ? fits : over_from, over_from), x1}, lo[2] = {y0, y0},
               hi[2] = {y1, y1};
        plot_chart_band(&p, &chart, bx, lo, hi, 2, over_ink,
                        "oversubscribed (more threads than the machine has)");
    }
    double ix[2] = {tmin, tmax}, iy[2] = {tmin / base, tmax / base};
    plot_chart_series(&p, &chart,
                      &(plot_series_t){.x = ix,
                                       .y = iy,
                                       .count = 2,
                                       .color = ideal_ink,
                                       .line = PLOT_LINE_DOTTED,
                                       .mark = PLOT_MARK_NONE,
                                       .label = "ideal"});
    double xs[MAX_COUNTS], ys[MAX_COUNTS];
    /* The machine's ceiling, when measured: the same work as separate
     * worlds, one a thread. */
    int ceiling = 0;
    for (int j = 0; j < d->counts; ++j) {
        xs[j] = d->threads[order[j]];
        ys[j] = d->ceiling[order[j]];
        ceiling |= isfinite(ys[j]);
    }
    if (ceiling)
        plot_chart_series(&p, &chart,
                          &(plot_series_t){.x = xs,
                                           .y = ys,
                                           .count = d->counts,
                                           .color = ideal_ink,
                                           .line = PLOT_LINE_SOLID,
                                           .mark = PLOT_MARK_RING,
                                           .label = "ceiling (the same work as one world a thread)"});
    static const plot_mark_t marks[] = {PLOT_MARK_SQUARE, PLOT_MARK_TRIANGLE, PLOT_MARK_CROSS,
                                        PLOT_MARK_RING};
    for (int i = 0; i < shown; ++i) {
        for (int j = 0; j < d->counts; ++j) {
            xs[j] = d->threads[order[j]];
            ys[j] = drawn[i]->speedup[order[j]];
        }
        plot_chart_series(&p, &chart,
                          &(plot_series_t){.x = xs,
                                           .y = ys,
                                           .count = d->counts,
                                           .color = plot_palette(i),
                                           .line = PLOT_LINE_DASHED,
                                           .mark = marks[i % 4],
                                           .label = drawn[i]->name});
    }
    for (int j = 0; j < d->counts; ++j) {
        xs[j] = d->threads[order[j]];
        ys[j] = d->step[order[j]];
    }
    plot_chart_series(&p, &chart,
                      &(plot_series_t){.x = xs,
                                       .y = ys,
                                       .count = d->counts,
                                       .color = step_ink,
                                       .line = PLOT_LINE_SOLID,
                                       .mark = PLOT_MARK_DOT,
                                       .label = "step"});
    int counts = d->counts;
    free(d);
    if (plot_close(&p, err, sizeof err) != 0) {
        cli_error("plot scaling: %s", err);
        return CLI_EXIT_FAILURE;
    }
    printf("wrote %s (%s, %dx%d px): speed-up of the step and %d system%s at %d thread counts\n", p.path,
           p.svg ? "SVG" : "PNG", p.width, p.height, shown, shown == 1 ? "" : "s", counts);
    return CLI_EXIT_OK;
}
