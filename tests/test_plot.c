/* `shoal plot` as a user sees it: the built binary is spawned (posix_spawn,
 * output into files under a mkdtemp directory), and the pictures it writes
 * are read back with cairo. A PNG must have the size asked for and a real
 * drawing: coloured pixels (trajectories are coloured, the frame, grid and
 * text are grey), and for recordings, trace pixels exactly where the run's
 * positions say, through the metre-to-pixel mapping the command prints.
 * An SVG must be SVG with path elements. Bad input exits non-zero with a
 * message.
 *
 * Worlds made here are serial (one thread): the test process starts no
 * OpenMP (see tests/CMakeLists.txt). */
#define _XOPEN_SOURCE 700

#include <criterion/criterion.h>

#include <cairo.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shoal/crowd.h>
#include <shoal/recording.h>
#include <shoal/shoal.h>

extern char** environ;

#define PLOT_TEST_PI 3.14159265358979323846

typedef struct plot_run_t {
    int status;
    char out[4096];
    char err[4096];
} plot_run_t;

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/shoal_plot_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void cleanup_tmpdir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    (void)system(cmd);
}

TestSuite(plot, .init = make_tmpdir, .fini = cleanup_tmpdir);

static void slurp(const char* path, char* buf, size_t size)
{
    FILE* f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

/* Run `shoal COMMAND ARGS...` (NULL-terminated); stdout and stderr stay in
 * the files stdout and stderr of the test's directory too. */
static void shoal_cli(plot_run_t* r, const char* command, const char* const* args)
{
    char out_path[300], err_path[300];
    snprintf(out_path, sizeof out_path, "%s/stdout", tmpdir);
    snprintf(err_path, sizeof err_path, "%s/stderr", tmpdir);
    const char* argv[40] = {SHOAL_CLI_PATH, command};
    int n = 2;
    for (int i = 0; args[i] && n < 39; ++i) argv[n++] = args[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, SHOAL_CLI_PATH, &fa, NULL, (char* const*)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "posix_spawn: %s", strerror(rc));
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    slurp(out_path, r->out, sizeof r->out);
    slurp(err_path, r->err, sizeof r->err);
}

/* Run `shoal plot ARGS...` (NULL-terminated). */
static void plot_cli(plot_run_t* r, const char* const* args) { shoal_cli(r, "plot", args); }

static void tmp_path(char* buf, size_t size, const char* name) { snprintf(buf, size, "%s/%s", tmpdir, name); }

/* The mapping the command prints: px = x0 + s x, py = y0 - s y. */
typedef struct view_t {
    double x0, y0, s;
} view_t;

static view_t parse_view(const char* out)
{
    view_t v;
    const char* p = strstr(out, "view: px = ");
    cr_assert_not_null(p, "no view in: %s", out);
    cr_assert_eq(sscanf(p, "view: px = %lf + %lf x, py = %lf", &v.x0, &v.s, &v.y0), 3, "view: %s", p);
    cr_assert_gt(v.s, 0.0);
    return v;
}

typedef struct png_t {
    cairo_surface_t* s;
    int w, h, stride;
    const unsigned char* data;
} png_t;

static png_t load_png(const char* path, int w, int h)
{
    png_t p;
    p.s = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(p.s), CAIRO_STATUS_SUCCESS, "%s: %s", path,
                 cairo_status_to_string(cairo_surface_status(p.s)));
    p.w = cairo_image_surface_get_width(p.s);
    p.h = cairo_image_surface_get_height(p.s);
    cr_assert_eq(p.w, w, "%s: width %d, asked %d", path, p.w, w);
    cr_assert_eq(p.h, h, "%s: height %d, asked %d", path, p.h, h);
    cairo_surface_flush(p.s);
    p.data = cairo_image_surface_get_data(p.s);
    p.stride = cairo_image_surface_get_stride(p.s);
    return p;
}

static void pixel(const png_t* p, int x, int y, int* r, int* g, int* b)
{
    uint32_t v;
    memcpy(&v, p->data + (size_t)y * (size_t)p->stride + 4u * (size_t)x, 4);
    *r = (int)(v >> 16 & 255);
    *g = (int)(v >> 8 & 255);
    *b = (int)(v & 255);
}

/* Coloured: far from grey (background, grid, frame and text are grey). */
static int coloured(const png_t* p, int x, int y)
{
    if (x < 0 || y < 0 || x >= p->w || y >= p->h) return 0;
    int r, g, b;
    pixel(p, x, y, &r, &g, &b);
    int hi = r > g ? (r > b ? r : b) : (g > b ? g : b), lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
    return hi - lo > 50;
}

static int coloured_near(const png_t* p, double x, double y, int reach)
{
    for (int dy = -reach; dy <= reach; ++dy)
        for (int dx = -reach; dx <= reach; ++dx)
            if (coloured(p, (int)floor(x) + dx, (int)floor(y) + dy)) return 1;
    return 0;
}

static int count_coloured(const png_t* p)
{
    int n = 0;
    for (int y = 0; y < p->h; ++y)
        for (int x = 0; x < p->w; ++x) n += coloured(p, x, y);
    return n;
}

static void check_svg(const char* path)
{
    static char buf[1 << 16];
    slurp(path, buf, sizeof buf);
    cr_assert(strncmp(buf, "<?xml", 5) == 0 || strncmp(buf, "<svg", 4) == 0, "%s is not SVG: %.40s", path,
              buf);
    cr_assert_not_null(strstr(buf, "<svg"), "%s: no <svg element", path);
    cr_assert_not_null(strstr(buf, "<path"), "%s: no path element", path);
}

/* ---- recordings ------------------------------------------------------------ */

/* One agent seeking a far target from `start` along +x: a straight track
 * at up to 10 m/s; frames every step, in format `version` (3, compressed,
 * or 2, which write_version_1 can turn into version 1). Positions go to xy
 * (2 per frame). `setup` (optional) adds walls and obstacles to the world
 * first. */
static int record_line(const char* path, int version, int wrap, const float start[2], int steps, float* xy,
                       void (*setup)(shoal_world_t*))
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    def.wrap = wrap;
    if (wrap) {
        def.bounds_max[0] = def.bounds_max[1] = 100.0f;
    }
    shoal_world_t* w = NULL;
    shoal_error_t e;
    cr_assert_eq(shoal_world_create(&def, &w, &e), SHOAL_OK, "%s", e.message);
    if (setup) setup(w);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = start[0];
    d.position[1] = start[1];
    d.heading = 0.0f;
    d.velocity[0] = 10.0f;
    d.vehicle.max_speed = 10.0f;
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.target[0] = start[0] + 1000.0f;
    d.target[1] = start[1];
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_recording_header_t h = shoal_recording_default_header();
    h.dt = 0.05f;
    h.scenario_name = "line";
    h.group_names = "runner";
    h.wrap = wrap;
    if (wrap) h.bounds_max[0] = h.bounds_max[1] = 100.0f;
    shoal_recorder_t* rec = NULL;
    cr_assert_eq(shoal_recording_open_version(path, &h, version, &rec, &e), SHOAL_OK, "%s", e.message);
    int frames = 0;
    for (int k = 0; k <= steps; ++k) {
        cr_assert_eq(shoal_recording_write_frame(rec, w, &e), SHOAL_OK, "%s", e.message);
        shoal_agent_state_t s;
        shoal_agent_get_state(w, id, &s);
        xy[2 * frames] = s.position[0];
        xy[2 * frames + 1] = s.position[1];
        frames++;
        if (k < steps) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    }
    cr_assert_eq(shoal_recording_close(rec, &e), SHOAL_OK, "%s", e.message);
    shoal_world_destroy(w);
    return frames;
}

Test(plot, run_traces_are_where_the_agent_went)
{
    char rec[300], png[300];
    tmp_path(rec, sizeof rec, "line.rec");
    tmp_path(png, sizeof png, "line.png");
    float xy[2 * 101];
    int frames = record_line(rec, 3, 0, (const float[2]){-20.0f, 5.0f}, 100, xy, NULL);
    plot_run_t r;
    plot_cli(&r, (const char*[]){"run", rec, "-o", png, "--width", "640", "--height", "480", NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    view_t v = parse_view(r.out);
    png_t p = load_png(png, 640, 480);
    /* Every recorded position is on the trace; 4 m off the line is not. */
    for (int k = 0; k < frames; k += 5) {
        double px = v.x0 + v.s * xy[2 * k], py = v.y0 - v.s * xy[2 * k + 1];
        cr_assert(coloured_near(&p, px, py, 1), "frame %d at (%.2f, %.2f) -> px (%.1f, %.1f) not drawn", k,
                  xy[2 * k], xy[2 * k + 1], px, py);
        double qy = v.y0 - v.s * (xy[2 * k + 1] + 4.0);
        if (k + 5 < frames) /* the last pose has an arrow head */
            cr_assert(!coloured_near(&p, px, qy, 0), "frame %d: pixels 4 m above the track are coloured", k);
    }
    cairo_surface_destroy(p.s);
    /* A side view needs a third dimension. */
    plot_cli(&r, (const char*[]){"run", rec, "--view", "side", "-o", png, NULL});
    cr_assert_eq(r.status, 2, "exit %d", r.status);
    cr_assert_not_null(strstr(r.err, "needs a 3D recording"), "%s", r.err);
}

Test(plot, run_breaks_lines_at_torus_edges)
{
    char rec[300], png[300];
    tmp_path(rec, sizeof rec, "wrap.rec");
    tmp_path(png, sizeof png, "wrap.png");
    float xy[2 * 41];
    /* 40 steps of 0.5 m from x = 85: across the edge at 100, back in at 0. */
    int frames = record_line(rec, 3, 1, (const float[2]){85.0f, 50.0f}, 40, xy, NULL);
    int wrapped = 0;
    for (int k = 1; k < frames; ++k) wrapped |= xy[2 * k] < xy[2 * k - 2];
    cr_assert(wrapped, "the agent never wrapped (last x %.2f)", xy[2 * (frames - 1)]);
    plot_run_t r;
    plot_cli(&r, (const char*[]){"run", rec, "-o", png, NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    view_t v = parse_view(r.out);
    png_t p = load_png(png, 960, 720);
    /* Both pieces drawn, nothing across the middle of the box. */
    for (int k = 0; k < frames; k += 4)
        cr_assert(coloured_near(&p, v.x0 + v.s * xy[2 * k], v.y0 - v.s * xy[2 * k + 1], 1),
                  "frame %d not drawn", k);
    for (double x = 20.0; x <= 80.0; x += 5.0)
        cr_assert(!coloured_near(&p, v.x0 + v.s * x, v.y0 - v.s * 50.0, 1),
                  "a line crosses the box at x = %.0f: the wrap was not broken", x);
    cairo_surface_destroy(p.s);
}

Test(plot, run_of_a_scenario_recording_png_and_svg)
{
    char rec[300], png[300], svg[300];
    tmp_path(rec, sizeof rec, "tiny.rec");
    tmp_path(png, sizeof png, "tiny.png");
    tmp_path(svg, sizeof svg, "tiny.svg");
    /* A real scenario through `shoal run --record`, on one thread. */
    const char* argv[] = {SHOAL_CLI_PATH,
                          "run",
                          SHOAL_SOURCE_DIR "/scenarios/tiny.json",
                          "--threads",
                          "1",
                          "--steps",
                          "60",
                          "--quiet",
                          "--record",
                          rec,
                          NULL};
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    cr_assert_eq(posix_spawn(&pid, SHOAL_CLI_PATH, &fa, NULL, (char* const*)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "shoal run --record failed");
    plot_run_t r;
    plot_cli(&r, (const char*[]){"run", rec, "-o", png, "--width=800", "--height=500", NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.out, "200 agents"), "%s", r.out);
    png_t p = load_png(png, 800, 500);
    int all = count_coloured(&p);
    cr_assert_gt(all, 3000, "too few coloured pixels for 200 traces");
    cairo_surface_destroy(p.s);
    /* --agents 10: every 20th agent, far less ink. */
    plot_cli(&r,
             (const char*[]){"run", rec, "--agents", "10", "-o", png, "--width=800", "--height=500", NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.out, "every 20-th"), "%s", r.out);
    p = load_png(png, 800, 500);
    int some = count_coloured(&p);
    cr_assert(some > 100 && some < all / 4, "--agents 10: %d coloured pixels, all 200: %d", some, all);
    cairo_surface_destroy(p.s);
    plot_cli(&r, (const char*[]){"run", rec, "-o", svg, NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    check_svg(svg);
}

/* ---- walls and obstacles ------------------------------------------------------ */

/* Grey and darker than `level` in every channel: the walls' ink (about
 * 56) below 130, an obstacle's thin rim (about 80, antialiased) below 170;
 * the background (251), the grid (220 to 230) and an obstacle's fill (about
 * 205) are lighter. */
static int dark(const png_t* p, int x, int y, int level)
{
    if (x < 0 || y < 0 || x >= p->w || y >= p->h) return 0;
    int r, g, b;
    pixel(p, x, y, &r, &g, &b);
    return r < level && g < level && b < level && !coloured(p, x, y);
}

static int dark_near_at(const png_t* p, const view_t* v, double x, double y, int reach, int level)
{
    double px = v->x0 + v->s * x, py = v->y0 - v->s * y;
    for (int dy = -reach; dy <= reach; ++dy)
        for (int dx = -reach; dx <= reach; ++dx)
            if (dark(p, (int)floor(px) + dx, (int)floor(py) + dy, level)) return 1;
    return 0;
}

static int dark_near(const png_t* p, const view_t* v, double x, double y, int reach)
{
    return dark_near_at(p, v, x, y, reach, 130);
}

/* A fence below the agent's track (an open polyline), a closed box above
 * it, a pillar and a moving obstacle. */
static const float fence[6] = {-20.0f, -6.0f, 0.0f, -8.0f, 25.0f, -6.0f};
static const float box[8] = {-10.0f, 14.0f, 10.0f, 14.0f, 10.0f, 22.0f, -10.0f, 22.0f};
static const float pillar[3] = {20.0f, 18.0f, 0.0f}, mover[3] = {-15.0f, -20.0f, 0.0f};
static const float mover_velocity[3] = {4.0f, 0.0f, 0.0f};

static void add_walls(shoal_world_t* w)
{
    int32_t id;
    cr_assert_eq(shoal_world_add_wall(w, fence, 3, 0, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_add_wall(w, box, 4, 1, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_add_obstacle(w, pillar, 2.0f, &id), SHOAL_OK);
    cr_assert_eq(shoal_world_add_moving_obstacle(w, mover, mover_velocity, 1.5f, &id), SHOAL_OK);
}

/* Every segment is inked along its length, and not 2 m to its side (away
 * from the other walls and the track). */
static void expect_walls(const png_t* p, const view_t* v, const float* seg, int count, int drawn)
{
    for (int i = 0; i < count; ++i) {
        const float* s = seg + 4 * i;
        double len = hypot(s[2] - s[0], s[3] - s[1]), nx = -(s[3] - s[1]) / len, ny = (s[2] - s[0]) / len;
        for (double t = 0.1; t < 0.95; t += 0.2) {
            double x = s[0] + t * (s[2] - s[0]), y = s[1] + t * (s[3] - s[1]);
            cr_assert_eq(dark_near(p, v, x, y, 1), drawn, "segment %d (%.1f, %.1f)-(%.1f, %.1f) at %.1f: %s",
                         i, s[0], s[1], s[2], s[3], t, drawn ? "not drawn" : "drawn");
            if (drawn)
                cr_assert(!dark_near(p, v, x + 2.0 * nx, y + 2.0 * ny, 0) ||
                              !dark_near(p, v, x - 2.0 * nx, y - 2.0 * ny, 0),
                          "segment %d: ink 2 m on both sides", i);
        }
    }
}

/* An obstacle's rim is inked all round, its inside is not. */
static void expect_obstacle(const png_t* p, const view_t* v, const float c[2], float r, int drawn)
{
    for (int k = 0; k < 8; ++k) {
        double a = k * PLOT_TEST_PI / 4;
        cr_assert_eq(dark_near_at(p, v, c[0] + r * cos(a), c[1] + r * sin(a), 1, 170), drawn,
                     "obstacle at (%.1f, %.1f): rim at %d/8 %s", c[0], c[1], k,
                     drawn ? "not drawn" : "drawn");
    }
    /* (Above the center: a moving one's path starts there.) */
    cr_assert(!dark_near_at(p, v, c[0], c[1] + 0.5 * r, 0, 170),
              "obstacle at (%.1f, %.1f): its inside is inked", c[0], c[1]);
}

/* The version 2 recording without its geometry record, as version 1 wrote
 * it (version 1 frames are version 2's; version 3's are compressed). */
static void write_version_1(const char* from, const char* to)
{
    FILE* f = fopen(from, "rb");
    cr_assert_not_null(f);
    static uint8_t d[1 << 22];
    size_t n = fread(d, 1, sizeof d, f);
    fclose(f);
    cr_assert_lt(n, sizeof d);
    size_t h = (size_t)d[12] | (size_t)d[13] << 8 | (size_t)d[14] << 16;
    cr_assert_eq(d[8], 2, "write_version_1 takes a version 2 recording");
    cr_assert_eq(memcmp(d + h, "GEOM", 4), 0);
    uint32_t walls = (uint32_t)d[h + 16] | (uint32_t)d[h + 17] << 8,
             obstacles = (uint32_t)d[h + 20] | (uint32_t)d[h + 21] << 8;
    size_t g = 28 + 16 * (size_t)walls + 32 * (size_t)obstacles;
    memmove(d + h, d + h + g, n - h - g);
    n -= g;
    d[8] = 1;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < h - 4; ++i) {
        c ^= d[i];
        for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    c ^= 0xFFFFFFFFu;
    for (int k = 0; k < 4; ++k) d[h - 4 + (size_t)k] = (uint8_t)(c >> (8 * k));
    f = fopen(to, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(d, 1, n, f), n);
    fclose(f);
}

Test(plot, run_draws_walls_and_obstacles)
{
    char rec[300], old[300], png[300];
    tmp_path(rec, sizeof rec, "walls.rec");
    tmp_path(old, sizeof old, "walls-v1.rec");
    tmp_path(png, sizeof png, "walls.png");
    float xy[2 * 41];
    int frames = record_line(rec, 2, 0, (const float[2]){-20.0f, 5.0f}, 40, xy, add_walls);
    float seg[4 * 6];
    memcpy(seg, fence, 2 * sizeof(float));
    memcpy(seg + 2, fence + 2, 2 * sizeof(float));
    memcpy(seg + 4, fence + 2, 4 * sizeof(float));
    for (int k = 0; k < 4; ++k) { /* the box, closed */
        seg[8 + 4 * k] = box[2 * k];
        seg[9 + 4 * k] = box[2 * k + 1];
        seg[10 + 4 * k] = box[(2 * k + 2) % 8];
        seg[11 + 4 * k] = box[(2 * k + 3) % 8];
    }
    plot_run_t r;
    plot_cli(&r, (const char*[]){"run", rec, "-o", png, "--width", "800", "--height", "600", NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_null(strstr(r.err, "shoal:"), "stderr: %s", r.err); /* (a sanitizer may add its report) */
    view_t v = parse_view(r.out);
    png_t p = load_png(png, 800, 600);
    /* The fence (2 segments) and the box (4). */
    expect_walls(&p, &v, seg, 6, 1);
    expect_obstacle(&p, &v, pillar, 2.0f, 1);
    expect_obstacle(&p, &v, mover, 1.5f, 1); /* where it was at the first frame */
    /* The track is still drawn (over the walls' picture, between them). */
    for (int k = 0; k < frames; k += 8)
        cr_assert(coloured_near(&p, v.x0 + v.s * xy[2 * k], v.y0 - v.s * xy[2 * k + 1], 1), "frame %d", k);
    cairo_surface_destroy(p.s);

    /* The same run as a version 1 recording: no geometry, and no scenario
     * text to take it from, so no walls or obstacles (the ink above was
     * theirs). */
    write_version_1(rec, old);
    plot_cli(&r, (const char*[]){"run", old, "-o", png, "--width", "800", "--height", "600", NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    view_t v1 = parse_view(r.out);
    p = load_png(png, 800, 600);
    expect_walls(&p, &v1, seg, 6, 0);
    expect_obstacle(&p, &v1, pillar, 2.0f, 0);
    cairo_surface_destroy(p.s);
}

/* The default plaza through `shoal run --record` (version 2, to make the
 * version 1 file from): its 8 wall segments and 4 pillars from the
 * recording; and, for the same run as a version 1 recording, from the
 * scenario text in its header. */
Test(plot, run_of_the_plaza_draws_its_walls)
{
    char rec[300], old[300], png[300];
    tmp_path(rec, sizeof rec, "plaza.rec");
    tmp_path(old, sizeof old, "plaza-v1.rec");
    tmp_path(png, sizeof png, "plaza.png");
    const char* argv[] = {SHOAL_CLI_PATH,
                          "run",
                          SHOAL_SOURCE_DIR "/scenarios/default.json",
                          "--threads",
                          "1",
                          "--steps",
                          "5",
                          "--quiet",
                          "--record",
                          rec,
                          "--record-version",
                          "2",
                          NULL};
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    cr_assert_eq(posix_spawn(&pid, SHOAL_CLI_PATH, &fa, NULL, (char* const*)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "shoal run --record failed");
    write_version_1(rec, old);
    /* scenarios/default.json: four open polylines of three points. */
    const float walls[8][4] = {{-40, -10, -40, -40}, {-40, -40, -10, -40}, {10, -40, 40, -40},
                               {40, -40, 40, -10},   {40, 10, 40, 40},     {40, 40, 10, 40},
                               {-10, 40, -40, 40},   {-40, 40, -40, 10}};
    const float pillars[4][2] = {{-15, -15}, {15, -15}, {15, 15}, {-15, 15}};
    const char* files[2] = {rec, old};
    for (int k = 0; k < 2; ++k) {
        plot_run_t r;
        plot_cli(&r, (const char*[]){"run", files[k], "-o", png, "--width", "900", "--height", "700", NULL});
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", files[k], r.status, r.err);
        cr_assert_null(strstr(r.err, "shoal:"), "%s: stderr: %s", files[k], r.err);
        view_t v = parse_view(r.out);
        png_t p = load_png(png, 900, 700);
        expect_walls(&p, &v, &walls[0][0], 8, 1);
        for (int i = 0; i < 4; ++i) expect_obstacle(&p, &v, pillars[i], 1.5f, 1);
        cairo_surface_destroy(p.s);
    }
}

/* ---- the other kinds ---------------------------------------------------------- */

/* Run a kind to a PNG and an SVG; returns the PNG's coloured pixel count
 * and the view. */
static int kind_pictures(const char* const* kind_args, const char* name, view_t* view)
{
    char png[300], svg[300];
    snprintf(png, sizeof png, "%s/%s.png", tmpdir, name);
    snprintf(svg, sizeof svg, "%s/%s.svg", tmpdir, name);
    const char* args[32];
    int n = 0;
    for (; kind_args[n]; ++n) args[n] = kind_args[n];
    args[n] = "-o";
    args[n + 1] = png;
    args[n + 2] = "--width";
    args[n + 3] = "700";
    args[n + 4] = "--height";
    args[n + 5] = "520";
    args[n + 6] = NULL;
    plot_run_t r;
    plot_cli(&r, args);
    cr_assert_eq(r.status, 0, "%s: exit %d: %s", name, r.status, r.err);
    /* No message of ours (a sanitizer build may add its own report). */
    cr_assert_null(strstr(r.err, "shoal:"), "%s: stderr: %s", name, r.err);
    if (view) *view = parse_view(r.out);
    png_t p = load_png(png, 700, 520);
    int count = count_coloured(&p);
    cairo_surface_destroy(p.s);
    args[n + 1] = svg;
    plot_cli(&r, args);
    cr_assert_eq(r.status, 0, "%s (svg): exit %d: %s", name, r.status, r.err);
    check_svg(svg);
    return count;
}

Test(plot, dseek_draws_start_waypoint_and_plan)
{
    view_t v;
    int count = kind_pictures(
        (const char*[]){"dseek", "--from", "0,0,1.5708", "--to", "12,-4,3.1416", "--replans", "4", NULL},
        "dseek", &v);
    cr_assert_gt(count, 1500, "dseek: %d coloured pixels", count);
    char png[300];
    tmp_path(png, sizeof png, "dseek.png");
    png_t p = load_png(png, 700, 520);
    /* The flown path leaves A (under the start arrow, so look beside it)
     * and the waypoint's arrow sits on W. */
    cr_assert(coloured_near(&p, v.x0, v.y0, 8), "nothing drawn at the start");
    cr_assert(coloured_near(&p, v.x0 + 12.0 * v.s, v.y0 + 4.0 * v.s, 2), "nothing drawn at the waypoint");
    cairo_surface_destroy(p.s);
}

Test(plot, pathfollow_draws_the_course_and_track)
{
    view_t v;
    int count = kind_pictures((const char*[]){"pathfollow", "--vehicle", "car", "--course", "slalom", NULL},
                              "pathfollow", &v);
    cr_assert_gt(count, 2000, "pathfollow: %d coloured pixels", count);
}

Test(plot, trim_fans_2d_and_3d)
{
    int c2 = kind_pictures((const char*[]){"trim", NULL}, "trim2", NULL);
    cr_assert_gt(c2, 3000, "trim 2D: %d coloured pixels", c2);
    int c3 = kind_pictures((const char*[]){"trim", "--dim", "3", "--speed", "5", NULL}, "trim3", NULL);
    cr_assert_gt(c3, 3000, "trim 3D: %d coloured pixels", c3);
    int c1 = kind_pictures((const char*[]){"trim", "--initial", "0", NULL}, "trim1", NULL);
    cr_assert_gt(c1, 1000, "trim, one initial control: %d coloured pixels", c1);
}

Test(plot, search_tree_for_each_strategy)
{
    const char* strategies[3] = {"single", "uniform", "adaptive"};
    int counts[3];
    for (int i = 0; i < 3; ++i) {
        char name[32];
        snprintf(name, sizeof name, "search_%s", strategies[i]);
        counts[i] = kind_pictures(
            (const char*[]){"search", "--strategy", strategies[i], "--expansions", "100", NULL}, name, NULL);
        cr_assert_gt(counts[i], 500, "%s: %d coloured pixels", strategies[i], counts[i]);
    }
    /* A one-step fan draws far less than a 100-expansion tree. */
    cr_assert_lt(counts[0], counts[1], "single %d, uniform %d", counts[0], counts[1]);
}

static void expect_failure(const char* const* args, int status, const char* message)
{
    plot_run_t r;
    plot_cli(&r, args);
    cr_assert_eq(r.status, status, "exit %d (wanted %d); stderr: %s", r.status, status, r.err);
    cr_assert_not_null(strstr(r.err, message), "stderr \"%s\" lacks \"%s\"", r.err, message);
}

/* ---- scaling: speed-up against threads of a sweep ------------------------------ */

/* The same sweep as `bench scaling --json` and `--csv` write it (fewer
 * keys and columns than they have, which the reader does not need):
 * 1, 2 and 4 threads, 4 oversubscribed, the step and three systems, one
 * of them under 2 % of the step. */
static const char scaling_jsonl[] =
    "{\"bench\":\"scaling\",\"scene\":\"flock\",\"agents\":20000,\"rounds\":2,\"threads\":1,"
    "\"oversubscribed\":false,\"ms_per_step\":2.0,\"speedup\":1,\"hashes_agree\":true,\"systems\":["
    "{\"name\":\"neighbors\",\"stage\":\"decide\",\"ms_per_step\":1.5,\"speedup\":1},"
    "{\"name\":\"spatial_hash\",\"stage\":\"sense\",\"ms_per_step\":0.3,\"speedup\":1},"
    "{\"name\":\"wrap\",\"stage\":\"integrate\",\"ms_per_step\":0.01,\"speedup\":1}]}\n"
    "{\"bench\":\"scaling\",\"scene\":\"flock\",\"agents\":20000,\"rounds\":2,\"threads\":2,"
    "\"oversubscribed\":false,\"ms_per_step\":1.1,\"speedup\":1.8,\"hashes_agree\":true,\"systems\":["
    "{\"name\":\"neighbors\",\"stage\":\"decide\",\"ms_per_step\":0.8,\"speedup\":1.9},"
    "{\"name\":\"spatial_hash\",\"stage\":\"sense\",\"ms_per_step\":0.2,\"speedup\":1.5},"
    "{\"name\":\"wrap\",\"stage\":\"integrate\",\"ms_per_step\":0.01,\"speedup\":null}]}\n"
    "{\"bench\":\"scaling\",\"scene\":\"flock\",\"agents\":20000,\"rounds\":2,\"threads\":4,"
    "\"oversubscribed\":true,\"ms_per_step\":1.6,\"speedup\":1.25,\"hashes_agree\":true,\"systems\":["
    "{\"name\":\"neighbors\",\"stage\":\"decide\",\"ms_per_step\":0.9,\"speedup\":1.7},"
    "{\"name\":\"spatial_hash\",\"stage\":\"sense\",\"ms_per_step\":0.6,\"speedup\":0.5},"
    "{\"name\":\"wrap\",\"stage\":\"integrate\",\"ms_per_step\":0.02,\"speedup\":0.5}]}\n";

static const char scaling_csv[] =
    "scene,agents,steps,warmup,rounds,threads,threads_used,oversubscribed,system,stage,ms_per_step,speedup,"
    "rate_unit,best_rate,median_rate,state_hash,hashes_agree\n"
    "flock,20000,20,10,2,1,1,0,step,all,2.0,1,agent_steps_per_s,1e7,1e7,00000000000000aa,1\n"
    "flock,20000,20,10,2,1,1,0,neighbors,decide,1.5,1,agent_steps_per_s,,,00000000000000aa,1\n"
    "flock,20000,20,10,2,1,1,0,spatial_hash,sense,0.3,1,agent_steps_per_s,,,00000000000000aa,1\n"
    "flock,20000,20,10,2,1,1,0,wrap,integrate,0.01,1,agent_steps_per_s,,,00000000000000aa,1\n"
    "flock,20000,20,10,2,2,2,0,step,all,1.1,1.8,agent_steps_per_s,1.8e7,1.8e7,00000000000000aa,1\n"
    "flock,20000,20,10,2,2,2,0,neighbors,decide,0.8,1.9,agent_steps_per_s,,,00000000000000aa,1\n"
    "flock,20000,20,10,2,2,2,0,spatial_hash,sense,0.2,1.5,agent_steps_per_s,,,00000000000000aa,1\n"
    "flock,20000,20,10,2,2,2,0,wrap,integrate,0.01,,agent_steps_per_s,,,00000000000000aa,1\n"
    "flock,20000,20,10,2,4,4,1,step,all,1.6,1.25,agent_steps_per_s,1.25e7,1.2e7,00000000000000aa,1\n"
    "flock,20000,20,10,2,4,4,1,neighbors,decide,0.9,1.7,agent_steps_per_s,,,00000000000000aa,1\n"
    "flock,20000,20,10,2,4,4,1,spatial_hash,sense,0.6,0.5,agent_steps_per_s,,,00000000000000aa,1\n"
    "flock,20000,20,10,2,4,4,1,wrap,integrate,0.02,0.5,agent_steps_per_s,,,00000000000000aa,1\n";

/* Pixels tinted red (the oversubscribed band, the orange line): red well
 * above blue, in a 700 x 520 picture. */
static int count_reddish(const char* path)
{
    png_t p = load_png(path, 700, 520);
    int n = 0;
    for (int y = 0; y < p.h; ++y)
        for (int x = 0; x < p.w; ++x) {
            int r, g, b;
            pixel(&p, x, y, &r, &g, &b);
            n += r - b > 20 && r > g;
        }
    cairo_surface_destroy(p.s);
    return n;
}

static void write_text(const char* path, const char* text)
{
    FILE* f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* JSON lines and CSV of one sweep give the same picture (its coloured
 * pixels: the text, which names the file, is grey); the step, two systems
 * (wrap is under 2 % of the step) and the shaded oversubscribed count. */
Test(plot, scaling_from_json_lines_and_csv_alike)
{
    char jsonl[300], csv[300];
    tmp_path(jsonl, sizeof jsonl, "sweep.jsonl");
    tmp_path(csv, sizeof csv, "sweep.csv");
    write_text(jsonl, scaling_jsonl);
    write_text(csv, scaling_csv);
    int from_json = kind_pictures((const char*[]){"scaling", jsonl, NULL}, "scaling_json", NULL);
    int from_csv = kind_pictures((const char*[]){"scaling", csv, NULL}, "scaling_csv", NULL);
    cr_expect_gt(from_json, 1500, "scaling: %d coloured pixels", from_json);
    cr_expect_eq(from_json, from_csv, "JSON lines %d, CSV %d coloured pixels", from_json, from_csv);
    /* the pale red band over 2..4 threads is half the chart */
    char png_json[300];
    tmp_path(png_json, sizeof png_json, "scaling_json.png");
    int band = count_reddish(png_json);
    cr_expect_gt(band, 60000, "oversubscribed band: %d reddish pixels", band);
    char png[300];
    tmp_path(png, sizeof png, "scaling.png");
    plot_run_t r;
    plot_cli(&r, (const char*[]){"scaling", jsonl, "-o", png, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "speed-up of the step and 2 systems at 3 thread counts"), "%s", r.out);
    plot_cli(&r, (const char*[]){"scaling", csv, "--min-share", "0", "-o", png, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "speed-up of the step and 3 systems at 3 thread counts"), "%s", r.out);
    /* without the oversubscribed count, far less is coloured */
    char two[300];
    tmp_path(two, sizeof two, "two.jsonl");
    write_text(two, scaling_jsonl);
    FILE* f = fopen(two, "r+");
    cr_assert_not_null(f);
    const char* third = strstr(scaling_jsonl, "\n") + 1;
    third = strstr(third, "\n") + 1;
    cr_assert_eq(ftruncate(fileno(f), (off_t)(third - scaling_jsonl)), 0);
    fclose(f);
    kind_pictures((const char*[]){"scaling", two, NULL}, "scaling_two", NULL);
    char png_two[300];
    tmp_path(png_two, sizeof png_two, "scaling_two.png");
    int no_band = count_reddish(png_two);
    cr_expect_lt(no_band, band / 4, "no band: %d reddish pixels, with the band %d", no_band, band);
}

/* A sweep run with --ceiling draws the ceiling too: the same sweep with
 * and without ceiling_speedup differ where its line is. */
Test(plot, scaling_draws_the_ceiling_when_measured)
{
    static const char plain[] = "{\"threads\":1,\"speedup\":1,\"ms_per_step\":2}\n"
                                "{\"threads\":2,\"speedup\":1.5}\n{\"threads\":4,\"speedup\":2.5}\n";
    static const char ceiling[] = "{\"threads\":1,\"speedup\":1,\"ms_per_step\":2,\"ceiling_speedup\":1}\n"
                                  "{\"threads\":2,\"speedup\":1.5,\"ceiling_speedup\":1.9}\n"
                                  "{\"threads\":4,\"speedup\":2.5,\"ceiling_speedup\":3.2}\n";
    char a[300], b[300];
    tmp_path(a, sizeof a, "plain.jsonl");
    tmp_path(b, sizeof b, "ceiling.jsonl");
    write_text(a, plain);
    write_text(b, ceiling);
    kind_pictures((const char*[]){"scaling", a, NULL}, "scaling_plain", NULL);
    kind_pictures((const char*[]){"scaling", b, NULL}, "scaling_ceiling", NULL);
    char pa[300], pb[300];
    tmp_path(pa, sizeof pa, "scaling_plain.png");
    tmp_path(pb, sizeof pb, "scaling_ceiling.png");
    png_t x = load_png(pa, 700, 520), y = load_png(pb, 700, 520);
    int differ = 0;
    for (int j = 80; j < y.h; ++j) /* below the title, which names the file */
        for (int i = 0; i < y.w; ++i) {
            int r0, g0, b0, r1, g1, b1;
            pixel(&x, i, j, &r0, &g0, &b0);
            pixel(&y, i, j, &r1, &g1, &b1);
            differ += r0 != r1 || g0 != g1 || b0 != b1;
        }
    cairo_surface_destroy(x.s);
    cairo_surface_destroy(y.s);
    cr_expect_gt(differ, 800, "%d pixels differ with the ceiling drawn", differ);
}

/* A real sweep, as the command writes it, draws. */
Test(plot, scaling_of_a_bench_sweep, .timeout = 120)
{
    plot_run_t r;
    shoal_cli(&r, "bench",
              (const char*[]){"scaling", "--threads", "1,2", "--agents", "2000", "--steps", "3", "--rounds",
                              "1", "--json", NULL});
    cr_assert_eq(r.status, 0, "bench scaling: %s", r.err);
    char out[300], sweep[300];
    tmp_path(out, sizeof out, "stdout");
    tmp_path(sweep, sizeof sweep, "bench.jsonl");
    cr_assert_eq(rename(out, sweep), 0);
    int count = kind_pictures((const char*[]){"scaling", sweep, NULL}, "scaling_bench", NULL);
    cr_expect_gt(count, 500, "scaling: %d coloured pixels", count);
}

Test(plot, scaling_refuses_bad_sweeps_naming_the_line)
{
    char png[300], missing[300], bad[300];
    tmp_path(png, sizeof png, "s.png");
    tmp_path(missing, sizeof missing, "missing.jsonl");
    tmp_path(bad, sizeof bad, "bad.txt");
    expect_failure((const char*[]){"scaling", "-o", png, NULL}, 2, "which sweep?");
    expect_failure((const char*[]){"scaling", missing, "-o", png, NULL}, 1, "missing.jsonl");
    static const char* const cases[][2] = {
        {"{\"threads\":1,\"speedup\":1}\n{\"threads\":2,\"speedup\":1.5\n", "bad.txt line 2: not JSON"},
        {"{\"threads\":0,\"speedup\":1}\n", "line 1: \"threads\" must be a whole number >= 1"},
        {"{\"speedup\":1}\n", "line 1: \"threads\" must be"},
        {"{\"threads\":1,\"speedup\":\"fast\"}\n", "line 1: \"speedup\" must be a number or null"},
        {"{\"threads\":1,\"speedup\":1}\n{\"threads\":1,\"speedup\":1}\n", "line 2: thread count 1 again"},
        {"a,b,c\n1,2,3\n",
         "line 1: expected JSON lines or a CSV header with the columns threads, system and speedup"},
        {"threads,system,speedup\n1,step,1\n2,step\n", "line 3: 2 fields, the header has 3"},
        {"threads,system,speedup\n1,step,1\nx,step,2\n", "line 3: threads 'x' is not a whole number >= 1"},
        {"threads,system,speedup\n1,step,1\n2,step,quick\n", "line 3: speedup 'quick' is not a number"},
        {"threads,system,speedup,ceiling_speedup\n1,step,1,1\n2,step,2,high\n",
         "line 3: ceiling_speedup 'high' is not a number"},
        {"threads,system,speedup\n1,neighbors,1\n", "no speed-up of the step at 1 thread"},
        {"", "empty: no thread counts"},
        {" \n\n", "empty: no thread counts"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        write_text(bad, cases[i][0]);
        expect_failure((const char*[]){"scaling", bad, "-o", png, NULL}, 1, cases[i][1]);
    }
    cr_assert_neq(access(png, F_OK), 0, "a refused command wrote %s", png);
}

/* ---- bad input -------------------------------------------------------------- */

Test(plot, bad_input_is_refused_with_a_message)
{
    char png[300], rec[300], bad[300];
    tmp_path(png, sizeof png, "x.png");
    tmp_path(rec, sizeof rec, "missing.rec");
    tmp_path(bad, sizeof bad, "garbage.rec");
    FILE* f = fopen(bad, "wb");
    cr_assert_not_null(f);
    fputs("not a recording", f);
    fclose(f);
    expect_failure((const char*[]){NULL}, 2, "which kind");
    expect_failure((const char*[]){"pie", "-o", png, NULL}, 2, "unknown kind 'pie'");
    expect_failure((const char*[]){"trim", NULL}, 2, "-o FILE.png");
    expect_failure((const char*[]){"trim", "-o", "picture.jpg", NULL}, 2,
                   "expected a file name ending in .png or .svg");
    expect_failure((const char*[]){"trim", "-o", png, "--width", "10", NULL}, 2,
                   "--width needs an integer in 200..8000");
    expect_failure((const char*[]){"trim", "--dim", "4", "-o", png, NULL}, 2,
                   "--dim needs an integer in 2..3");
    expect_failure((const char*[]){"trim", "--initial", "999", "-o", png, NULL}, 2, "controls 0 to 16");
    expect_failure((const char*[]){"run", "-o", png, NULL}, 2, "which recording");
    expect_failure((const char*[]){"run", rec, "-o", png, NULL}, 1, "missing.rec");
    expect_failure((const char*[]){"run", bad, "-o", png, NULL}, 1, "garbage.rec");
    expect_failure((const char*[]){"dseek", "--from", "1,2", "-o", png, NULL}, 2, "is not x,y,heading");
    expect_failure((const char*[]){"dseek", "--rmin", "-1", "-o", png, NULL}, 2, "--rmin needs a number > 0");
    expect_failure((const char*[]){"pathfollow", "--course", "slalom", "-o", png, NULL}, 2, "--vehicle NAME");
    expect_failure((const char*[]){"pathfollow", "--vehicle", "bike", "--course", "slalom", "-o", png, NULL},
                   2, "unknown 'bike'");
    expect_failure((const char*[]){"pathfollow", "--vehicle", "car", "--course", "moon", "-o", png, NULL}, 2,
                   "unknown course 'moon'");
    expect_failure((const char*[]){"search", "--strategy", "greedy", "-o", png, NULL}, 2, "--strategy");
    expect_failure((const char*[]){"trim", "-o", "/nonexistent-dir/x.png", NULL}, 1,
                   "No such file or directory");
    expect_failure((const char*[]){"trim", "-o", "/nonexistent-dir/x.svg", NULL}, 1,
                   "No such file or directory");
    /* Nothing was written by any of them. */
    cr_assert_neq(access(png, F_OK), 0, "a refused command wrote %s", png);
}

/* ---- the output rule -------------------------------------------------------- */

static void* read_bytes(const char* path, size_t* size)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* data = malloc((size_t)n + 1);
    cr_assert_not_null(data);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* Files in the test's directory whose name starts with `prefix`. */
static int files_starting(const char* prefix)
{
    DIR* d = opendir(tmpdir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* -o through a symbolic link is refused as every other output refuses it
 * (docs/errors.md, "Files read and written"): the link's target keeps its
 * bytes and the link stays a link. */
Test(plot, a_link_as_output_is_refused_and_its_target_kept)
{
    const char* names[2] = {"link.png", "link.svg"};
    for (int i = 0; i < 2; ++i) {
        char target[300], link[300];
        tmp_path(target, sizeof target, "precious.txt");
        tmp_path(link, sizeof link, names[i]);
        write_text(target, "not to be overwritten\n");
        cr_assert_eq(symlink(target, link), 0, "%s", strerror(errno));
        plot_run_t r;
        plot_cli(&r, (const char*[]){"trim", "-o", link, NULL});
        cr_expect_eq(r.status, 1, "-o %s: exit %d: %s", names[i], r.status, r.err);
        cr_expect_not_null(strstr(r.err, "symbolic link"), "-o %s: %s", names[i], r.err);
        char text[64];
        slurp(target, text, sizeof text);
        cr_expect_str_eq(text, "not to be overwritten\n", "-o %s wrote through the link", names[i]);
        struct stat st;
        cr_assert_eq(lstat(link, &st), 0);
        cr_expect(S_ISLNK(st.st_mode), "-o %s: the link was replaced", names[i]);
        cr_expect_eq(files_starting(names[i]), 1, "-o %s: a temporary file was left", names[i]);
        unlink(link);
    }
}

/* A write that fails half-way (the file size limit, as a full disk would)
 * leaves the previous picture byte for byte and no temporary file; the
 * command says which file and exits 1. This test runs in a process of its
 * own, whose limit the command inherits. */
Test(plot, a_failed_write_keeps_the_previous_picture)
{
    const char* names[2] = {"kept.png", "kept.svg"};
    for (int i = 0; i < 2; ++i) {
        char out[300];
        tmp_path(out, sizeof out, names[i]);
        plot_run_t r;
        plot_cli(&r, (const char*[]){"trim", "-o", out, NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        size_t before_size = 0;
        void* before = read_bytes(out, &before_size);
        cr_assert_gt(before_size, 8192, "%s: %zu bytes", names[i], before_size);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {(rlim_t)4096, (rlim_t)RLIM_INFINITY};
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
        /* Another picture, so that a partial write would differ. */
        plot_cli(&r, (const char*[]){"trim", "--dim", "3", "-o", out, NULL});
        lim.rlim_cur = RLIM_INFINITY;
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
        cr_expect_eq(r.status, 1, "%s: exit %d: %s", names[i], r.status, r.err);
        cr_expect_not_null(strstr(r.err, names[i]), "%s: %s", names[i], r.err);
        size_t after_size = 0;
        void* after = read_bytes(out, &after_size);
        cr_expect_eq(after_size, before_size, "%s: %zu bytes, were %zu", names[i], after_size, before_size);
        cr_expect(after_size == before_size && memcmp(before, after, before_size) == 0,
                  "%s: the previous picture was changed", names[i]);
        cr_expect_eq(files_starting(names[i]), 1, "%s: a temporary file was left", names[i]);
        free(before);
        free(after);
    }
}

/* ---- nav: a navigation field ---------------------------------------------------- */

/* scenarios/nav_u_wall.json: the field is darkest (blue) in the goal's
 * middle at (5, 0), pale inside the U's pocket at (-2, 0) (the way round
 * is long), and dark grey on the wall at (0, 2). */
Test(plot, nav_shades_the_field_round_the_walls)
{
    char png[300];
    tmp_path(png, sizeof png, "nav.png");
    plot_run_t r;
    plot_cli(&r, (const char*[]){"nav", SHOAL_SOURCE_DIR "/scenarios/nav_u_wall.json", "--arrows", "0", "-o",
                                 png, "--width", "900", "--height", "700", NULL});
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    view_t v = parse_view(r.out);
    png_t p = load_png(png, 900, 700);
    int gr, gg, gb, ur, ug, ub, wr, wg, wb;
    pixel(&p, (int)(v.x0 + 5.0 * v.s), (int)v.y0, &gr, &gg, &gb);
    pixel(&p, (int)(v.x0 - 2.0 * v.s), (int)v.y0, &ur, &ug, &ub);
    pixel(&p, (int)(v.x0), (int)(v.y0 - 2.0 * v.s), &wr, &wg, &wb);
    cr_assert(gb > gr + 40 && gb > 80, "the goal's middle is not blue: %d %d %d", gr, gg, gb);
    cr_assert(ur + ug > 2 * (gr + gg) + 100, "the pocket (%d %d %d) is not paler than the goal (%d %d %d)",
              ur, ug, ub, gr, gg, gb);
    cr_assert(wr < 80 && wg < 80 && wb < 80, "the wall is not dark: %d %d %d", wr, wg, wb);
    cairo_surface_destroy(p.s);
    /* a scenario without goals: a clear error */
    plot_cli(&r, (const char*[]){"nav", SHOAL_SOURCE_DIR "/scenarios/tiny.json", "-o", png, NULL});
    cr_assert_neq(r.status, 0);
    cr_assert(strstr(r.err, "no navigation goals"), "%s", r.err);
}
