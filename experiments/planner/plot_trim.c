/* `shoal plot trim` and `shoal plot search`: the planner's trim
 * trajectories (Figures 3 and 4 of the trim-trajectory planning paper:
 * online path planning over pre-integrated trim trajectories) and one
 * search tree (its Figure 5).
 *
 * Every curve is integrated with the planner's own integrator
 * (trim_integrate_step and trim_compose, the code planner agents fly), from
 * the default trim table's spec; the dots at the ends of the fans are the
 * table's entries (trim_apply), so a curve that missed its dot would show a
 * disagreement between the table and the integrator. The search tree is the
 * one plan_search leaves in its scratch (plan_tree_node). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/rng.h"
#include "shoal/shoal.h"
#include "modules/planner/planner_search.h"
#include "modules/planner/trim.h"
#include "cli/cli.h"
#include "cli/plot/plot.h"

static void* trim_alloc(void* ctx, size_t bytes)
{
    (void)ctx;
    return malloc(bytes);
}

static void trim_release(void* ctx, void* p, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    free(p);
}

/* The default table of the world's planner agents (shoal_trim_spec_default). */
static int default_table(int dims, trim_table_t* t)
{
    shoal_trim_spec_t pub = shoal_trim_spec_default(dims);
    trim_spec_t s;
    memset(&s, 0, sizeof s);
    s.axes = pub.axes;
    for (int a = 0; a < TRIM_MAX_AXES; ++a) {
        s.samples[a] = pub.samples[a] > 0 ? pub.samples[a] : 1;
        s.max_rate[a] = a < pub.axes ? pub.max_rate[a] : 0.0f;
    }
    s.interval = pub.interval;
    s.substeps = pub.substeps;
    memset(t, 0, sizeof *t);
    return trim_table_build(t, &s, trim_alloc, NULL);
}

/* The curve of one interval from `start`, ci -> cf, at `speed`: substeps+1
 * points (x, y, z) into pts. */
static void interval_curve(const trim_spec_t* spec, trim_pose_t start, int32_t ci, int32_t cf, float speed,
                           float* pts)
{
    trim_rel_t r = trim_rel_start();
    memcpy(pts, &start.pos, 3 * sizeof(float));
    for (int k = 1; k <= spec->substeps; ++k) {
        trim_integrate_step(spec, ci, cf, &r);
        trim_pose_t q = trim_compose(start, r.pos, r.rot, speed);
        pts[3 * k] = q.pos.x;
        pts[3 * k + 1] = q.pos.y;
        pts[3 * k + 2] = q.pos.z;
    }
}

/* Views of 3D points: 0 from above (x, y), 1 from the side (x, z), 2 an
 * oblique orthographic camera (azimuth -30 degrees, elevation 30): an
 * orthographic view keeps lengths in the picture plane, so its axes are
 * still metres (of the picture plane). */
static void project(int view, const float* q, double* sx, double* sy)
{
    if (view == 0) {
        *sx = q[0];
        *sy = q[1];
    } else if (view == 1) {
        *sx = q[0];
        *sy = q[2];
    } else {
        const double ca = 0.8660254037844386, sa = -0.5, ce = 0.8660254037844386, se = 0.5;
        *sx = ca * q[0] + sa * q[1];
        *sy = ce * q[2] + se * (-sa * q[0] + ca * q[1]);
    }
}

static void polyline(cairo_t* cr, const float* pts, int n, int view)
{
    for (int k = 0; k < n; ++k) {
        double x, y;
        project(view, pts + 3 * k, &x, &y);
        if (k == 0)
            cairo_move_to(cr, x, y);
        else
            cairo_line_to(cr, x, y);
    }
}

/* ---- trim fans -------------------------------------------------------------- */

typedef struct plot_trim_options_t {
    plot_options_t common;
    int64_t dims, initial;
    double speed;
} plot_trim_options_t;

static const cli_option_t trim_options[] = {
    {.name = "--dim",
     .metavar = "2|3",
     .kind = CLI_INT,
     CLI_AT(plot_trim_options_t, dims),
     .min = 2,
     .max = 3,
     .help = "2D: one panel per initial yaw rate (0, half, max); 3D: top (x-y) and side (x-z) views "
             "(default 2)"},
    {.name = "--initial",
     .metavar = "C",
     .kind = CLI_INT,
     CLI_AT(plot_trim_options_t, initial),
     .max = 1000000,
     .help = "one panel from control index C instead"},
    {.name = "--speed",
     .metavar = "V",
     .kind = CLI_NUMBER,
     CLI_AT(plot_trim_options_t, speed),
     .max = INFINITY,
     .flags = CLI_ABOVE_MIN,
     .help = "m/s (> 0; default 1: lengths per unit speed)"},
};

static const cli_spec_t trim_spec = {
    .command = "plot trim",
    .usage = "[options] -o FILE.png|FILE.svg",
    .about = "Fans of trim trajectories from one initial control to every final control\n"
             "(the default trim table).\n",
    .options = trim_options,
    .option_count = CLI_COUNT(trim_options),
    PLOT_SHARED(plot_trim_options_t),
};

static int plot_kind_trim(int argc, char** argv)
{
    plot_trim_options_t opt = {.common = PLOT_OPTIONS_DEFAULT, .dims = 2, .initial = -1, .speed = 1.0};
    int stop = plot_parse(&trim_spec, argc, argv, &opt, &opt.common, NULL, NULL);
    if (stop >= 0) return stop;
    const plot_options_t* o = &opt.common;
    int64_t dims = opt.dims, initial = opt.initial;
    double speed = opt.speed;
    trim_table_t t;
    if (default_table((int)dims, &t) != 0) {
        cli_error("plot: out of memory building the trim table");
        return CLI_EXIT_FAILURE;
    }
    const trim_spec_t* spec = &t.spec;
    if (initial >= t.controls) {
        int32_t controls = t.controls;
        trim_table_free(&t, trim_release, NULL);
        return cli_usage_error("plot trim", "--initial %lld: the %dD table has controls 0 to %d",
                               (long long)initial, (int)dims, controls - 1);
    }
    /* Initial controls: 2D three panels (yaw rate 0, half, max) like
     * Figure 3's row; 3D the straight one, seen from above and the side. */
    int32_t inits[3];
    int panels = 0;
    if (initial >= 0)
        inits[panels++] = (int32_t)initial;
    else if (dims == 2) {
        int32_t n = spec->samples[0];
        inits[panels++] = t.straight;
        inits[panels++] = t.straight + (n - 1 - t.straight + 1) / 2;
        inits[panels++] = n - 1;
    } else {
        inits[panels++] = t.straight;
    }
    int views = dims == 3 ? 3 : panels; /* 3D: top, side and oblique views of one fan */
    int npts = spec->substeps + 1;
    float* pts = malloc((size_t)t.controls * (size_t)npts * 3 * sizeof(float) * (size_t)panels);
    if (!pts) {
        trim_table_free(&t, trim_release, NULL);
        cli_error("plot: out of memory");
        return CLI_EXIT_FAILURE;
    }
    trim_pose_t origin = {vec3_zero(), quat_identity()};
    /* Extents per view; in 2D the panels share one, so fans compare. */
    double b[3][4];
    for (int v = 0; v < 3; ++v) b[v][0] = b[v][1] = b[v][2] = b[v][3] = 0.0;
    for (int pi = 0; pi < panels; ++pi)
        for (int32_t cf = 0; cf < t.controls; ++cf) {
            float* c = pts + ((size_t)pi * (size_t)t.controls + (size_t)cf) * (size_t)npts * 3;
            interval_curve(spec, origin, inits[pi], cf, (float)speed, c);
            for (int k = 0; k < npts; ++k)
                for (int v = 0; v < 3; ++v) {
                    double x, y;
                    project(v, c + 3 * k, &x, &y);
                    b[v][0] = fmin(b[v][0], x);
                    b[v][1] = fmax(b[v][1], x);
                    b[v][2] = fmin(b[v][2], y);
                    b[v][3] = fmax(b[v][3], y);
                }
        }
    char err[512], title[256], sub[512];
    plot_t p;
    if (plot_open(&p, o->output, o->width, o->height, err, sizeof err) != 0) {
        free(pts);
        trim_table_free(&t, trim_release, NULL);
        cli_error("plot: %s", err);
        return CLI_EXIT_FAILURE;
    }
    snprintf(title, sizeof title,
             "Trim trajectories, %dD: one control interval from an initial control to all %d final ones",
             (int)dims, t.controls);
    float r_first[TRIM_MAX_AXES];
    trim_control_rates(spec, inits[0], r_first);
    char init_note[96] = "";
    if (dims == 3)
        snprintf(init_note, sizeof init_note, "; initial control %d: yaw %.2g, pitch %.2g rad/s", inits[0],
                 r_first[0], r_first[1]);
    snprintf(sub, sizeof sub,
             "default table: %d controls (%s up to %.2g rad/s), interval %g s, %d substeps; %g m/s; "
             "dots: the table's end points%s",
             t.controls, dims == 3 ? "yaw, pitch" : "yaw", spec->max_rate[0], spec->interval, spec->substeps,
             speed, init_note);
    plot_title(&p, title, sub);
    /* Panels side by side, each as large as the canvas allows. */
    double gap = 64, x0 = 58, y0 = 52, W = p.width - 58 - 18, H = p.height - 52 - 46 - 40;
    double pw = (W - gap * (views - 1)) / views;
    plot_panel_t first;
    double pad = 0.06 * speed * spec->interval;
    for (int v = 0; v < views; ++v) {
        int pi = dims == 3 ? 0 : v;
        int view = dims == 3 ? v : 0;
        static const char* const xlabels[3] = {"x (m)", "x (m)", "picture x (m)"};
        static const char* const ylabels[3] = {"y (m)", "z (m)", "picture y (m)"};
        plot_panel_t panel;
        plot_panel_setup(&p, &panel, x0 + v * (pw + gap), y0, pw, H, b[view][0] - pad, b[view][1] + pad,
                         b[view][2] - pad, b[view][3] + pad, xlabels[view], ylabels[view]);
        if (v == 0) first = panel;
        plot_panel_begin(&p, &panel);
        for (int32_t cf = 0; cf < t.controls; ++cf) {
            float rates[TRIM_MAX_AXES];
            trim_control_rates(spec, cf, rates);
            int axis = view == 1 ? 1 : 0; /* colour: final yaw rate; the side view: pitch rate */
            double u = spec->max_rate[axis] > 0 ? 0.5 + 0.5 * rates[axis] / spec->max_rate[axis] : 0.5;
            const float* c = pts + ((size_t)pi * (size_t)t.controls + (size_t)cf) * (size_t)npts * 3;
            polyline(p.cr, c, npts, view);
            plot_set_color(&p, plot_colormap(u), dims == 3 ? 0.6 : 0.9);
            plot_stroke_px(&p, dims == 3 ? 1.0 : 1.6);
            trim_pose_t end = trim_apply(&t, origin, inits[pi], cf, (float)speed);
            float e[3] = {end.pos.x, end.pos.y, end.pos.z};
            double ex, ey;
            project(view, e, &ex, &ey);
            plot_dot(&p, &panel, ex, ey, dims == 3 ? 1.6 : 2.2);
        }
        plot_set_color(&p, (plot_rgb_t){0.15, 0.15, 0.18}, 1.0);
        plot_dot(&p, &panel, 0, 0, 3.5);
        plot_panel_end(&p);
        float r0[TRIM_MAX_AXES];
        trim_control_rates(spec, inits[pi], r0);
        char label[160];
        static const char* const view_names[3] = {"from above (x-y)", "from the side (x-z)",
                                                  "oblique (az -30, el 30 deg)"};
        if (dims == 3)
            snprintf(label, sizeof label, "%s", view_names[view]);
        else
            snprintf(label, sizeof label, "initial control %d: yaw rate %.2g rad/s", inits[pi], r0[0]);
        cairo_set_source_rgb(p.cr, 0.15, 0.15, 0.18);
        cairo_set_font_size(p.cr, 12);
        cairo_move_to(p.cr, panel.px0 + 6, panel.py0 + 16);
        cairo_show_text(p.cr, label);
        if (v == views - 1) plot_scale_bar(&p, &panel);
    }
    plot_colorbar(&p, -spec->max_rate[0], spec->max_rate[0], "final yaw rate (rad/s)");
    if (dims == 3) plot_colorbar(&p, -spec->max_rate[1], spec->max_rate[1], "final pitch rate, side view");
    free(pts);
    int controls = t.controls;
    trim_table_free(&t, trim_release, NULL);
    if (plot_close(&p, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        return CLI_EXIT_FAILURE;
    }
    snprintf(title, sizeof title, "%d fan%s of %d trim trajector%s", panels, panels == 1 ? "" : "s", controls,
             controls == 1 ? "y" : "ies");
    plot_report(&p, &first, title);
    return CLI_EXIT_OK;
}

/* ---- search tree -------------------------------------------------------------- */

typedef struct plot_search_options_t {
    plot_options_t common;
    int64_t obstacles, seed, expansions;
    double speed;
    plan_strategy_t strategy;
    const char* strategy_name;
} plot_search_options_t;

static int parse_strategy(const char* command, const char* name, const char* value, void* opts)
{
    plot_search_options_t* o = opts;
    if (!strcmp(value, "single"))
        o->strategy = PLAN_SINGLE_STEP;
    else if (!strcmp(value, "uniform"))
        o->strategy = PLAN_UNIFORM;
    else if (!strcmp(value, "adaptive"))
        o->strategy = PLAN_ADAPTIVE;
    else
        return cli_usage_error(command, "%s: expected single, uniform or adaptive, got '%s'", name, value);
    o->strategy_name = value;
    return 0;
}

static const cli_option_t search_options[] = {
    {.name = "--strategy",
     .metavar = "single|uniform|adaptive",
     .kind = CLI_CUSTOM,
     .parse = parse_strategy,
     .help = "the search (default adaptive)"},
    {.name = "--obstacles",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(plot_search_options_t, obstacles),
     .max = 1000,
     .help = "circles in the field, 0..1000 (default 14)"},
    {.name = "--seed",
     .metavar = "S",
     .kind = CLI_INT,
     CLI_AT(plot_search_options_t, seed),
     .max = (double)INT64_MAX,
     .help = "the field's seed, an integer >= 0 (default 1)"},
    {.name = "--expansions",
     .metavar = "E",
     .kind = CLI_INT,
     CLI_AT(plot_search_options_t, expansions),
     .min = 1,
     .max = 20000,
     .help = "max_expansions of the search, 1..20000 (default: the planner's 400)"},
    {.name = "--speed",
     .metavar = "V",
     .kind = CLI_NUMBER,
     CLI_AT(plot_search_options_t, speed),
     .max = 100,
     .flags = CLI_ABOVE_MIN,
     .help = "m/s, in (0, 100] (default 5)"},
};

static const cli_spec_t search_spec = {
    .command = "plot search",
    .usage = "[options] -o FILE.png|FILE.svg",
    .about = "A planner's search tree for one agent seeking a goal through an obstacle\n"
             "field: visited trajectories, crashed ones, the chosen plan.\n",
    .options = search_options,
    .option_count = CLI_COUNT(search_options),
    PLOT_SHARED(plot_search_options_t),
};

static int plot_kind_search(int argc, char** argv)
{
    plot_search_options_t opt = {.common = PLOT_OPTIONS_DEFAULT,
                                 .obstacles = 14,
                                 .seed = 1,
                                 .expansions = -1,
                                 .speed = 5.0,
                                 .strategy = PLAN_ADAPTIVE,
                                 .strategy_name = "adaptive"};
    int stop = plot_parse(&search_spec, argc, argv, &opt, &opt.common, NULL, NULL);
    if (stop >= 0) return stop;
    const plot_options_t* o = &opt.common;
    int64_t obstacles = opt.obstacles, seed = opt.seed, expansions = opt.expansions;
    double speed = opt.speed;
    plan_strategy_t strategy = opt.strategy;
    const char* strategy_name = opt.strategy_name;
    plan_params_t prm = plan_params_default(strategy);
    if (expansions > 0) prm.max_expansions = (int32_t)expansions;
    trim_table_t t;
    if (default_table(2, &t) != 0) {
        cli_error("plot: out of memory building the trim table");
        return CLI_EXIT_FAILURE;
    }
    const trim_spec_t* spec = &t.spec;
    /* The scene: the agent at the origin heading +x, a goal straight ahead
     * beyond a field of random circles (fixed by --seed) that keeps a clear
     * disc around the start. */
    const float radius = 1.0f;
    const double reach = speed * spec->interval * prm.max_depth;
    const vec3 goal = vec3_make((float)(1.6 * reach), 0.0f, 0.0f);
    int n = (int)obstacles;
    plan_sphere_t* spheres = calloc((size_t)n + 1, sizeof *spheres);
    int32_t* perm = malloc((size_t)t.controls * sizeof *perm);
    size_t scene_bytes = plan_scene_bytes(n) + 16;
    void* scene_mem = malloc(scene_bytes);
    int32_t capacity = 1 + prm.max_expansions * (t.controls + 1);
    void* scratch_mem = malloc(plan_scratch_bytes(capacity));
    float* pts = malloc((size_t)(spec->substeps + 1) * 3 * sizeof(float));
    int32_t* children = NULL;
    int rc = CLI_EXIT_FAILURE;
    plot_t p;
    memset(&p, 0, sizeof p);
    char err[512], title[256], sub[512];
    if (!spheres || !perm || !scene_mem || !scratch_mem || !pts) {
        cli_error("plot: out of memory");
        goto done;
    }
    /* Counter-based draws (ecs/rng.h): obstacle i, try k, one stream per value. */
    for (int i = 0; i < n; ++i) {
        float r, x, y;
        uint64_t k = 0;
        do { /* keep the start free: nothing within 2 m + r of the agent */
            r = rng_range((uint64_t)seed, (uint64_t)i, k, 0, 1.5f, 4.0f);
            x = rng_range((uint64_t)seed, (uint64_t)i, k, 1, (float)(0.15 * reach), (float)(1.4 * reach));
            y = rng_range((uint64_t)seed, (uint64_t)i, k, 2, (float)(-0.6 * reach), (float)(0.6 * reach));
            ++k;
        } while (hypotf(x, y) < r + 2.0f + radius);
        spheres[i].center = vec3_make(x, y, 0.0f);
        spheres[i].radius = r;
        spheres[i].velocity = vec3_zero();
    }
    /* Adaptive sampling reads a permutation of the controls (the world
     * draws one per seed): Fisher-Yates on the same generator. */
    for (int32_t i = 0; i < t.controls; ++i) perm[i] = i;
    for (int32_t i = t.controls - 1; i > 0; --i) {
        int32_t j = (int32_t)(rng_bits((uint64_t)seed, (uint64_t)i, 0, 3) % (uint64_t)(i + 1)), tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    void* aligned = (void*)(((uintptr_t)scene_mem + 15u) & ~(uintptr_t)15u);
    plan_scene_t* scene = plan_scene_build(aligned, spheres, n, (float)(prm.max_depth * spec->interval));
    plan_behavior_t beh[2] = {{PLAN_SEEK, goal, vec3_zero()},
                              {PLAN_AVOID_COLLISION, vec3_zero(), vec3_zero()}};
    plan_query_t q;
    memset(&q, 0, sizeof q);
    q.table = &t;
    q.pose = (trim_pose_t){vec3_zero(), quat_identity()};
    q.control = t.straight;
    q.speed = (float)speed;
    q.radius = radius;
    q.behaviors = beh;
    q.behavior_count = 2;
    q.scene = scene;
    q.permutation = perm;
    q.permutation_offset = 0;
    plan_scratch_t scratch;
    plan_scratch_init(&scratch, scratch_mem, plan_scratch_bytes(capacity));
    plan_result_t res;
    if (plan_search(&prm, &q, &scratch, &res, err, sizeof err) != 0) {
        cli_error("plot: search: %s", err);
        goto done;
    }
    children = calloc((size_t)res.visited, sizeof *children);
    if (!children) {
        cli_error("plot: out of memory");
        goto done;
    }
    double b[4] = {-2.0, goal.x + 4.0, -0.3 * reach, 0.3 * reach};
    int crashed = 0;
    for (int32_t i = 1; i < res.visited; ++i) {
        plan_tree_node_t nd;
        plan_tree_node(&scratch, i, &nd);
        children[nd.parent]++;
        crashed += nd.crashed;
        b[0] = fmin(b[0], nd.pose.pos.x - 2.0);
        b[1] = fmax(b[1], nd.pose.pos.x + 2.0);
        b[2] = fmin(b[2], nd.pose.pos.y - 2.0);
        b[3] = fmax(b[3], nd.pose.pos.y + 2.0);
    }
    if (plot_open(&p, o->output, o->width, o->height, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        goto done;
    }
    snprintf(title, sizeof title, "Planner search tree (%s): one agent seeking a goal through %d obstacles",
             strategy_name, n);
    snprintf(sub, sizeof sub,
             "%d states visited, %d expanded (budget %d%s), %d crashed; plan depth %d, value %.3f; "
             "%g m/s, depth limit %d, agent radius %g m",
             res.visited, res.expanded, prm.max_expansions, res.budget_hit ? ", spent" : "", crashed,
             res.depth, res.value, speed, prm.max_depth, radius);
    plot_title(&p, title, sub);
    plot_panel_t panel;
    plot_panel_full(&p, &panel, b[0], b[1], b[2], b[3], "x (m)", "y (m)");
    plot_panel_begin(&p, &panel);
    cairo_t* cr = p.cr;
    const plot_rgb_t obst_c = {0.45, 0.45, 0.48}, leaf_c = {0.55, 0.6, 0.7}, inner_c = {0.0, 0.447, 0.698},
                     crash_c = {0.85, 0.15, 0.1}, plan_c = {0.835, 0.369, 0.0}, goal_c = {0.0, 0.62, 0.451};
    for (int i = 0; i < n; ++i) {
        plot_circle(&p, spheres[i].center.x, spheres[i].center.y, spheres[i].radius);
        plot_set_color(&p, obst_c, 0.45);
        cairo_fill_preserve(cr);
        plot_set_color(&p, obst_c, 1.0);
        plot_stroke_px(&p, 1.0);
        /* what the segment test sees: the circle grown by the agent's radius */
        plot_circle(&p, spheres[i].center.x, spheres[i].center.y, spheres[i].radius + radius);
        plot_dash_px(&p, 2, 3);
        plot_stroke_px(&p, 0.8);
        plot_dash_px(&p, 0, 0);
    }
    /* Three passes, lightest first: leaves, expanded states, crashes. */
    for (int pass = 0; pass < 3; ++pass) {
        for (int32_t i = 1; i < res.visited; ++i) {
            plan_tree_node_t nd, par;
            plan_tree_node(&scratch, i, &nd);
            int cls = nd.crashed ? 2 : children[i] > 0 ? 1 : 0;
            if (cls != pass) continue;
            plan_tree_node(&scratch, nd.parent, &par);
            interval_curve(spec, par.pose, par.control, nd.control, (float)speed, pts);
            polyline(cr, pts, spec->substeps + 1, 0);
        }
        plot_set_color(&p, pass == 0 ? leaf_c : pass == 1 ? inner_c : crash_c, pass == 0 ? 0.55 : 0.8);
        plot_stroke_px(&p, pass == 1 ? 1.2 : 0.9);
    }
    /* The chosen plan: the leaf back to the root. */
    for (int32_t i = res.leaf; i > 0;) {
        plan_tree_node_t nd, par;
        plan_tree_node(&scratch, i, &nd);
        plan_tree_node(&scratch, nd.parent, &par);
        interval_curve(spec, par.pose, par.control, nd.control, (float)speed, pts);
        polyline(cr, pts, spec->substeps + 1, 0);
        plot_set_color(&p, plan_c, 1.0);
        plot_stroke_px(&p, 3.2);
        plot_dot(&p, &panel, nd.pose.pos.x, nd.pose.pos.y, 3.0);
        i = nd.parent;
    }
    plot_set_color(&p, (plot_rgb_t){0.15, 0.15, 0.18}, 1.0);
    plot_arrow(&p, &panel, 0.0, 0.0, 0.0, 26, 2.2);
    plot_set_color(&p, goal_c, 1.0);
    plot_dot(&p, &panel, goal.x, goal.y, 6.0);
    plot_text_at(&p, &panel, goal.x, goal.y, -12, -12, "goal");
    plot_panel_end(&p);
    plot_scale_bar(&p, &panel);
    plot_legend(&p, plan_c, 0, "chosen plan");
    plot_legend(&p, inner_c, 0, "expanded");
    plot_legend(&p, leaf_c, 0, "visited, not expanded");
    plot_legend(&p, crash_c, 0, "hits an obstacle (dead end)");
    plot_legend(&p, obst_c, 3, "obstacles (dotted: + agent radius)");
    if (plot_close(&p, err, sizeof err) != 0) {
        cli_error("plot: %s", err);
        goto done;
    }
    snprintf(title, sizeof title, "search tree of %d states", res.visited);
    plot_report(&p, &panel, title);
    rc = CLI_EXIT_OK;
done:
    free(children);
    free(pts);
    free(scratch_mem);
    free(scene_mem);
    free(perm);
    free(spheres);
    trim_table_free(&t, trim_release, NULL);
    return rc;
}

const cli_command_t cli_plot_trim = {"trim", "fans of trim trajectories from one initial control",
                                     plot_kind_trim};
const cli_command_t cli_plot_search = {"search", "a planner's search tree through an obstacle field",
                                       plot_kind_search};
