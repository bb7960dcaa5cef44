/* `shoal soak --crowd`: pedestrians walking routes through a room's doors,
 * a corridor and round the free ends of a wall, while doors close and open,
 * pedestrians come and go and the worlds are saved and loaded back, with
 * every invariant checked every step.
 *
 * Decisions worth knowing:
 * - The scene (unbounded 2D, metres): a room [-10, 10]^2 of four L-shaped
 *   open walls with a 2 m doorway in the middle of each side; a corridor of
 *   two open walls from x = 14 to 34 at y = +-1.5 with a door across it at
 *   x = 24; a thin wall from (-20, -12) to (-20, 12) whose free ends the
 *   west route walks round; two closed walls (a triangular pillar in the
 *   room, a box outside it) that routes run into. Pedestrians (preset
 *   "pedestrian", radius 0.2 m) seek the next point of one of four looping
 *   routes, each leg of which passes a doorway, the corridor, a wall end or
 *   a closed wall; a pedestrian moves on when within 0.75 m of its point or
 *   after 20 s (a closed door in the way).
 * - A door is a 2.1 m wall (overlapping the doorway's jambs by 5 cm, so no
 *   gap is left at a joint) added with shoal_world_add_wall to close it and
 *   removed to open it. A door closes only when no pedestrian's centre is
 *   within its radius + 0.1 m of the door: a door is never shut on
 *   somebody (a closing that finds the doorway occupied waits for a later
 *   toggle and is counted). A wall added or removed before a step is left
 *   out of that step's crossing check.
 * - The script is seeded: every 40 steps a door toggles; every 50 steps
 *   0-3 pedestrians leave and about as many arrive (the population moves
 *   around --agents), each placed clear of everyone (0.2 m beyond the
 *   radii sum) and of every wall (0.1 m beyond its radius).
 * - Every 1,000 steps (at step 100, 1100, ...) one world is saved and
 *   replaced by the world loaded back: alternately the main world and the
 *   shadow, through memory, a file, a file, memory, and so on. The loaded
 *   world's hash must equal the saved one's, its walls the script's, every
 *   handle must still be valid, and from then on its hash must keep equal
 *   to the other world's, which was never reloaded.
 * - Checked every step, in exact double geometry over the float positions
 *   (differences of floats of these magnitudes and their products are
 *   exact in double; only the last subtraction of an orientation rounds):
 *   no pedestrian's path over the step crosses a wall segment (its ends
 *   strictly on opposite sides of the segment's line and the segment's
 *   ends strictly on opposite sides of the path's line); no pedestrian's
 *   centre nearer a wall than 0.98 of its radius; no two pedestrians nearer
 *   than 0.98 of the radii sum (SOAK_CROWD_OVERLAP: the contact pass holds
 *   pairs at 0.9975 of the sum in docs/crowds.md's scenes; the report gives
 *   the closest seen); state finite, each agent listed once, the counts.
 *   Every 50 steps the state hash equals the shadow world's (another thread
 *   count); every 500 steps and after each load the walls of each world are
 *   the script's; every 256 steps resident memory, bounded as in
 *   cli/cmd_soak.c.
 * - Violations name the step, the agent (slot) and the invariant; the first
 *   ten are printed, any makes the exit code 1. */
#define _POSIX_C_SOURCE 200809L

#include "cli/soak_crowd.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shoal/shoal.h"
#include "shoal/snapshot.h"

#include "ecs/rng.h"

#include "cli/cli.h"

#define SOAK_CROWD_DT (1.0f / 30.0f)
#define SOAK_CROWD_RADIUS 0.2     /* the pedestrian preset's */
#define SOAK_CROWD_OVERLAP 0.98   /* pairs kept at >= this much of the radii sum */
#define SOAK_CROWD_WALL_GAP 0.98  /* centres kept at >= this much of the radius from walls */
#define SOAK_CROWD_REACHED 0.75   /* m: a route point counts as reached */
#define SOAK_CROWD_PATIENCE 600   /* steps (20 s) before moving on to the next point */
#define SOAK_CROWD_DOOR_CLEAR 0.1 /* m beyond the radius: a door closes on nobody */
#define SOAK_CROWD_SAVE_EVERY 1000
#define SOAK_CROWD_RSS_SLACK_MIB 16.0
#define SOAK_CROWD_RSS_SLACK_REL 0.10
#define SOAK_CROWD_PRINT_MAX 10
#define SOAK_CROWD_DOORS 5
#define SOAK_CROWD_MAX_WALL_POINTS 4

/* ---- the scene ---------------------------------------------------------- */

typedef struct fixed_wall_t {
    int count, closed;
    float xy[2 * SOAK_CROWD_MAX_WALL_POINTS];
} fixed_wall_t;

static const fixed_wall_t fixed_walls[] = {
    {3, 0, {1, 10, 10, 10, 10, 1}}, /* the room's corners */
    {3, 0, {-1, 10, -10, 10, -10, 1}},        {3, 0, {-1, -10, -10, -10, -10, -1}},
    {3, 0, {1, -10, 10, -10, 10, -1}},        {2, 0, {14, 1.5f, 34, 1.5f}}, /* the corridor */
    {2, 0, {14, -1.5f, 34, -1.5f}},           {2, 0, {-20, -12, -20, 12}},  /* a thin wall with free ends */
    {3, 1, {3, 3, 6, 3, 4.5f, 5.5f}},                                       /* a pillar in the room */
    {4, 1, {20, 10, 24, 10, 24, 14, 20, 14}},                               /* a box outside */
};

static const float doors[SOAK_CROWD_DOORS][4] = {
    {-1.05f, 10, 1.05f, 10},   /* north */
    {-1.05f, -10, 1.05f, -10}, /* south */
    {10, -1.05f, 10, 1.05f},   /* east */
    {-10, -1.05f, -10, 1.05f}, /* west */
    {24, -1.55f, 24, 1.55f},   /* across the corridor */
};

typedef struct route_t {
    int count;
    float xy[2 * 12];
} route_t;

static const route_t routes[] = {
    /* east: out of the room, through the corridor and its door, and back */
    {10, {0, -6, 7, 0, 13, 0, 22, 0, 30, 0, 40, 0, 30, 0, 22, 0, 13, 0, 7, 0}},
    /* west: out of the room and round both ends of the thin wall */
    {11, {-6, 4, -7, 0, -13, 0, -17, 0, -19, 14.5f, -24, 6, -24, -6, -19, -14.5f, -17, 0, -13, 0, -7, 0}},
    /* north to south through the room */
    {10, {0, 16, 0, 13, 0, 7, 0, -7, 0, -13, 0, -16, 0, -13, 0, -7, 0, 7, 0, 13}},
    /* round through the pillar's, the east door's and the box's way */
    {7, {0, 7, 7, 0, 13, 0, 13, 12, 30, 12, 13, 13, 0, 13}},
};
#define ROUTE_COUNT ((int)(sizeof routes / sizeof routes[0]))

/* ---- state -------------------------------------------------------------- */

typedef struct wall_t {
    int32_t id;     /* the same in both worlds */
    int door;       /* 0..SOAK_CROWD_DOORS-1, or -1 */
    uint64_t added; /* the step before which it was added */
    int segments;
    double seg[4 * SOAK_CROWD_MAX_WALL_POINTS];
} wall_t;

typedef struct walker_t {
    shoal_agent_t id[2];
    int route, point;
    uint64_t since; /* step its point was set */
} walker_t;

typedef struct sample_t {
    double x, y;
    uint32_t slot;
} sample_t;

typedef struct crowd_soak_t {
    soak_crowd_options_t opt;
    shoal_world_t* world[2];
    int worlds;
    uint64_t rng;
    walker_t* walkers;
    int walker_count, walker_cap;
    wall_t walls[64];
    int wall_count;
    int32_t door_wall[SOAK_CROWD_DOORS]; /* index in walls, -1: open */
    /* per slot of the main world */
    double *prev_x, *prev_y;
    uint64_t *prev_step, *seen_stamp;
    int slot_cap;
    /* bulk read */
    shoal_agent_t* ids;
    float* pos;
    sample_t* samples;
    int buf_cap, sample_count;
    float* seg_buf;
    int seg_cap;
    /* figures */
    uint64_t step, agent_steps, checks, violations, hash_compares, path_tests;
    uint64_t adds, removes, spawn_misses, doors_closed, doors_opened, closes_waited;
    uint64_t saves_file, saves_memory, points_reached, points_given_up, wall_checks;
    double closest_pair, closest_wall;
    uint64_t closest_pair_step, closest_wall_step;
    double rss_start_mib, rss_warm_mib, rss_peak_mib, rss_last_mib;
    int warm_done;
    char snapshot_path[128];
    char first_violation[512];
} crowd_soak_t;

/* ---- helpers ------------------------------------------------------------ */

static float uniform(uint64_t* s, float lo, float hi)
{
    return lo + (hi - lo) * ((float)(rng_splitmix64(s) >> 40) * (1.0f / 16777216.0f));
}

static int below(uint64_t* s, int n) { return n > 0 ? (int)(rng_splitmix64(s) % (uint64_t)n) : 0; }

__attribute__((format(printf, 3, 4))) static int check(crowd_soak_t* s, int ok, const char* fmt, ...)
{
    s->checks++;
    if (ok) return 1;
    s->violations++;
    char msg[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);
    if (s->violations == 1) snprintf(s->first_violation, sizeof s->first_violation, "%s", msg);
    if (s->violations <= SOAK_CROWD_PRINT_MAX)
        fprintf(stderr, "shoal: soak: step %llu: %s\n", (unsigned long long)s->step, msg);
    return 0;
}

static int expect_ok(crowd_soak_t* s, int k, shoal_status_t st, const char* what)
{
    return check(s, st == SHOAL_OK, "%s failed in world %d: %s (%s)", what, k, shoal_status_string(st),
                 s->world[k] ? shoal_world_last_error(s->world[k]) : "no world");
}

/* Twice the signed area of (a, b, c): > 0 when c is left of a->b. */
static double orient(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

static int opposite(double u, double v) { return (u > 0.0 && v < 0.0) || (u < 0.0 && v > 0.0); }

/* Does the path p->q cross the segment a->b (strictly, both ways)? */
static int crosses(const double* seg, double px, double py, double qx, double qy)
{
    return opposite(orient(seg[0], seg[1], seg[2], seg[3], px, py),
                    orient(seg[0], seg[1], seg[2], seg[3], qx, qy)) &&
           opposite(orient(px, py, qx, qy, seg[0], seg[1]), orient(px, py, qx, qy, seg[2], seg[3]));
}

static double segment_distance(const double* seg, double px, double py)
{
    double dx = seg[2] - seg[0], dy = seg[3] - seg[1];
    double t = ((px - seg[0]) * dx + (py - seg[1]) * dy) / (dx * dx + dy * dy);
    t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    double ex = seg[0] + t * dx - px, ey = seg[1] + t * dy - py;
    return sqrt(ex * ex + ey * ey);
}

/* ---- walls -------------------------------------------------------------- */

static int add_wall(crowd_soak_t* s, const float* xy, int count, int closed, int door)
{
    if (s->wall_count == (int)(sizeof s->walls / sizeof s->walls[0]))
        return check(s, 0, "too many walls in the script");
    int32_t got[2] = {-1, -1};
    for (int k = 0; k < s->worlds; ++k)
        if (!expect_ok(s, k, shoal_world_add_wall(s->world[k], xy, count, closed, &got[k]), "add_wall"))
            return 0;
    if (s->worlds > 1) check(s, got[0] == got[1], "wall ids differ: %d and %d", (int)got[0], (int)got[1]);
    wall_t* w = &s->walls[s->wall_count++];
    w->id = got[0];
    w->door = door;
    w->added = s->step;
    w->segments = closed ? count : count - 1;
    for (int i = 0; i < w->segments; ++i) {
        int j = (i + 1) % count;
        w->seg[4 * i + 0] = xy[2 * i];
        w->seg[4 * i + 1] = xy[2 * i + 1];
        w->seg[4 * i + 2] = xy[2 * j];
        w->seg[4 * i + 3] = xy[2 * j + 1];
    }
    if (door >= 0) s->door_wall[door] = s->wall_count - 1;
    return 1;
}

static void remove_wall(crowd_soak_t* s, int index)
{
    for (int k = 0; k < s->worlds; ++k)
        expect_ok(s, k, shoal_world_remove_wall(s->world[k], s->walls[index].id), "remove_wall");
    if (s->walls[index].door >= 0) s->door_wall[s->walls[index].door] = -1;
    /* keep the order of adds (check_walls sorts by slot) */
    memmove(&s->walls[index], &s->walls[index + 1], (size_t)(s->wall_count - index - 1) * sizeof s->walls[0]);
    s->wall_count--;
    for (int d = 0; d < SOAK_CROWD_DOORS; ++d)
        if (s->door_wall[d] > index) s->door_wall[d]--;
}

/* The library's walls of world k equal the script's, segment for segment. */
static void check_walls(crowd_soak_t* s, int k)
{
    int total = 0;
    for (int i = 0; i < s->wall_count; ++i) total += s->walls[i].segments;
    check(s, shoal_world_wall_count(s->world[k]) == s->wall_count, "world %d has %d walls, the script %d", k,
          (int)shoal_world_wall_count(s->world[k]), s->wall_count);
    int32_t n = -1;
    if (!expect_ok(s, k, shoal_world_wall_segments(s->world[k], NULL, 0, &n), "wall_segments")) return;
    if (!check(s, n == total, "world %d has %d wall segments, the script %d", k, (int)n, total)) return;
    if (n > s->seg_cap) {
        float* b = realloc(s->seg_buf, (size_t)n * 4 * sizeof *b);
        if (!check(s, b != NULL, "out of memory for wall segments")) return;
        s->seg_buf = b;
        s->seg_cap = n;
    }
    if (!expect_ok(s, k, shoal_world_wall_segments(s->world[k], s->seg_buf, s->seg_cap, &n), "wall_segments"))
        return;
    /* the library lists segments by slot (id % SHOAL_MAX_WALLS): a
     * removed wall's slot is taken by a later add */
    int order[sizeof s->walls / sizeof s->walls[0]];
    for (int i = 0; i < s->wall_count; ++i) {
        int j = i;
        for (; j > 0 && s->walls[order[j - 1]].id % SHOAL_MAX_WALLS > s->walls[i].id % SHOAL_MAX_WALLS; --j)
            order[j] = order[j - 1];
        order[j] = i;
    }
    int at = 0;
    for (int o = 0; o < s->wall_count; ++o) {
        const int i = order[o];
        for (int g = 0; g < s->walls[i].segments; ++g, ++at)
            for (int c = 0; c < 4; ++c)
                if (!check(s, (double)s->seg_buf[4 * at + c] == s->walls[i].seg[4 * g + c],
                           "world %d: segment %d of wall %d differs from the script's", k, g,
                           (int)s->walls[i].id))
                    return;
    }
}

/* ---- pedestrians -------------------------------------------------------- */

static const float* route_point(int route, int point) { return routes[route].xy + 2 * point; }

static int grow(crowd_soak_t* s, int agents, int slots)
{
    if (agents > s->buf_cap) {
        int cap = agents * 2 + 64;
        shoal_agent_t* i = realloc(s->ids, (size_t)cap * sizeof *i);
        if (i) s->ids = i;
        float* p = realloc(s->pos, (size_t)cap * 3 * sizeof *p);
        if (p) s->pos = p;
        sample_t* m = realloc(s->samples, (size_t)cap * sizeof *m);
        if (m) s->samples = m;
        if (!i || !p || !m) return 0;
        s->buf_cap = cap;
    }
    if (slots > s->slot_cap) {
        int cap = slots * 2 + 64;
        double* x = realloc(s->prev_x, (size_t)cap * sizeof *x);
        if (x) s->prev_x = x;
        double* y = realloc(s->prev_y, (size_t)cap * sizeof *y);
        if (y) s->prev_y = y;
        uint64_t* ps = realloc(s->prev_step, (size_t)cap * sizeof *ps);
        if (ps) s->prev_step = ps;
        uint64_t* ss = realloc(s->seen_stamp, (size_t)cap * sizeof *ss);
        if (ss) s->seen_stamp = ss;
        if (!x || !y || !ps || !ss) return 0;
        for (int n = s->slot_cap; n < cap; ++n) s->prev_step[n] = s->seen_stamp[n] = UINT64_MAX;
        s->slot_cap = cap;
    }
    return 1;
}

/* Is (x, y) at least `gap` beyond the radii sum from every pedestrian (as
 * last read, and those placed since) and `wall_gap` beyond the radius from
 * every wall? */
static int spot_is_clear(const crowd_soak_t* s, double x, double y, double gap, double wall_gap)
{
    for (int i = 0; i < s->sample_count; ++i) {
        double dx = s->samples[i].x - x, dy = s->samples[i].y - y;
        if (dx * dx + dy * dy < (2 * SOAK_CROWD_RADIUS + gap) * (2 * SOAK_CROWD_RADIUS + gap)) return 0;
    }
    for (int i = 0; i < s->wall_count; ++i)
        for (int g = 0; g < s->walls[i].segments; ++g)
            if (segment_distance(s->walls[i].seg + 4 * g, x, y) < SOAK_CROWD_RADIUS + wall_gap) return 0;
    return 1;
}

static void set_point(crowd_soak_t* s, walker_t* w, int point)
{
    w->point = point % routes[w->route].count;
    w->since = s->step;
    const float* p = route_point(w->route, w->point);
    float t[3] = {p[0], p[1], 0.0f};
    for (int k = 0; k < s->worlds; ++k)
        expect_ok(s, k, shoal_agent_set_target(s->world[k], w->id[k], t), "set_target");
}

/* Place a pedestrian near a random route point, clear of everyone and every
 * wall, walking to the next point; 16 tries, then none is added. */
static void add_walker(crowd_soak_t* s)
{
    if (s->walker_count == s->walker_cap) {
        int cap = s->walker_cap ? s->walker_cap * 2 : 256;
        walker_t* w = realloc(s->walkers, (size_t)cap * sizeof *w);
        if (!check(s, w != NULL, "out of memory for walkers")) return;
        s->walkers = w;
        s->walker_cap = cap;
    }
    if (!grow(s, s->sample_count + 1, 0)) {
        check(s, 0, "out of memory for the check buffers");
        return;
    }
    for (int attempt = 0; attempt < 16; ++attempt) {
        int route = below(&s->rng, ROUTE_COUNT);
        int point = below(&s->rng, routes[route].count);
        const float* p = route_point(route, point);
        float x = p[0] + uniform(&s->rng, -1.5f, 1.5f), y = p[1] + uniform(&s->rng, -1.5f, 1.5f);
        if (!spot_is_clear(s, x, y, 0.2, 0.1)) continue;
        shoal_agent_def_t d = shoal_agent_default_def();
        shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL);
        d.position[0] = x;
        d.position[1] = y;
        const float* next = route_point(route, (point + 1) % routes[route].count);
        d.heading = atan2f(next[1] - y, next[0] - x);
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        d.target[0] = next[0];
        d.target[1] = next[1];
        d.user_value = (uint64_t)route;
        walker_t* w = &s->walkers[s->walker_count];
        for (int k = 0; k < s->worlds; ++k)
            if (!expect_ok(s, k, shoal_agent_add(s->world[k], &d, &w->id[k]), "agent_add")) return;
        w->route = route;
        w->point = (point + 1) % routes[route].count;
        w->since = s->step;
        s->walker_count++;
        s->samples[s->sample_count++] = (sample_t){x, y, w->id[0].index1};
        if (w->id[0].index1 < (uint32_t)s->slot_cap) s->prev_step[w->id[0].index1] = UINT64_MAX;
        s->adds++;
        return;
    }
    s->spawn_misses++;
}

static void remove_walker(crowd_soak_t* s, int j)
{
    for (int k = 0; k < s->worlds; ++k)
        expect_ok(s, k, shoal_agent_remove(s->world[k], s->walkers[j].id[k]), "agent_remove");
    uint32_t slot = s->walkers[j].id[0].index1;
    for (int i = 0; i < s->sample_count; ++i)
        if (s->samples[i].slot == slot) {
            s->samples[i] = s->samples[--s->sample_count];
            break;
        }
    s->walkers[j] = s->walkers[--s->walker_count];
    s->removes++;
}

/* ---- snapshots ---------------------------------------------------------- */

static shoal_world_def_t world_def(const crowd_soak_t* s, int threads)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.seed = s->opt.seed;
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    def.dimensions = 2;
    def.initial_capacity = s->opt.agents + 64;
    return def;
}

/* Save world k and replace it by the world loaded back, through memory or
 * a file: with a shadow world the first four saves cover each world both
 * ways. */
static void save_and_load(crowd_soak_t* s)
{
    uint64_t n = s->saves_file + s->saves_memory;
    int k = (int)(n % (uint64_t)s->worlds);
    int by_file = (int)((n ^ (n >> 1)) & 1); /* memory, file, file, memory, ... */
    shoal_world_t* old = s->world[k];
    uint64_t hash = shoal_world_state_hash(old);
    uint64_t steps = shoal_world_step_count(old);
    int32_t agents = shoal_world_agent_count(old);
    shoal_world_def_t def = world_def(s, k == 0 ? s->opt.threads : s->opt.shadow_threads);
    shoal_world_t* loaded = NULL;
    shoal_error_t err = {0};
    shoal_status_t st;
    if (by_file) {
        st = shoal_world_save_snapshot(old, s->snapshot_path);
        if (!expect_ok(s, k, st, "save_snapshot")) return;
        shoal_world_destroy(old); /* frees the handle tag for the loaded world */
        s->world[k] = NULL;
        st = shoal_world_load_snapshot(s->snapshot_path, &def, &loaded, &err);
        s->saves_file++;
    } else {
        size_t size = 0;
        if (!expect_ok(s, k, shoal_world_save_snapshot_memory(old, NULL, 0, &size), "save_snapshot_memory"))
            return;
        void* bytes = malloc(size);
        if (!check(s, bytes != NULL, "out of memory for a snapshot of %zu bytes", size)) return;
        st = shoal_world_save_snapshot_memory(old, bytes, size, &size);
        if (!expect_ok(s, k, st, "save_snapshot_memory")) {
            free(bytes);
            return;
        }
        shoal_world_destroy(old);
        s->world[k] = NULL;
        st = shoal_world_load_snapshot_memory(bytes, size, &def, &loaded, &err);
        free(bytes);
        s->saves_memory++;
    }
    if (!check(s, st == SHOAL_OK, "world %d: loading its snapshot failed: %s (%s)", k,
               shoal_status_string(st), err.message)) {
        s->violations += 1000; /* nothing to go on with */
        return;
    }
    s->world[k] = loaded;
    check(s, shoal_world_state_hash(loaded) == hash, "world %d: loaded hash %016llx, saved %016llx", k,
          (unsigned long long)shoal_world_state_hash(loaded), (unsigned long long)hash);
    check(s, shoal_world_step_count(loaded) == steps && shoal_world_agent_count(loaded) == agents,
          "world %d: loaded %llu steps and %d agents, saved %llu and %d", k,
          (unsigned long long)shoal_world_step_count(loaded), (int)shoal_world_agent_count(loaded),
          (unsigned long long)steps, (int)agents);
    for (int j = 0; j < s->walker_count; ++j)
        if (!check(s, shoal_agent_is_valid(loaded, s->walkers[j].id[k]),
                   "world %d: agent %u's handle is not valid after loading", k, s->walkers[j].id[k].index1))
            break;
    check_walls(s, k);
}

/* ---- the script --------------------------------------------------------- */

static void toggle_door(crowd_soak_t* s)
{
    int d = below(&s->rng, SOAK_CROWD_DOORS);
    if (s->door_wall[d] >= 0) {
        remove_wall(s, s->door_wall[d]);
        s->doors_opened++;
        return;
    }
    double seg[4] = {doors[d][0], doors[d][1], doors[d][2], doors[d][3]};
    for (int i = 0; i < s->sample_count; ++i)
        if (segment_distance(seg, s->samples[i].x, s->samples[i].y) <
            SOAK_CROWD_RADIUS + SOAK_CROWD_DOOR_CLEAR) {
            s->closes_waited++;
            return;
        }
    if (add_wall(s, doors[d], 2, 0, d)) s->doors_closed++;
}

/* The changes made before step s->step runs. */
static void script(crowd_soak_t* s)
{
    uint64_t t = s->step;
    if (t % SOAK_CROWD_SAVE_EVERY == 100) save_and_load(s);
    if (t % 40 == 20) toggle_door(s);
    if (t % 50 == 25) {
        int r = below(&s->rng, 4);
        for (int n = 0; n < r && s->walker_count > 0; ++n) remove_walker(s, below(&s->rng, s->walker_count));
        int a = s->walker_count < s->opt.agents ? r + 1 : (r > 0 ? r - 1 : 0);
        if (s->opt.agents == 0) a = 0;
        for (int n = 0; n < a; ++n) add_walker(s);
    }
    /* move on: a point reached, or given up on */
    for (int j = 0; j < s->walker_count; ++j) {
        walker_t* w = &s->walkers[j];
        uint32_t slot = w->id[0].index1;
        if (slot >= (uint32_t)s->slot_cap || s->prev_step[slot] != t) continue;
        const float* p = route_point(w->route, w->point);
        double dx = s->prev_x[slot] - p[0], dy = s->prev_y[slot] - p[1];
        if (dx * dx + dy * dy < SOAK_CROWD_REACHED * SOAK_CROWD_REACHED) {
            set_point(s, w, w->point + 1);
            s->points_reached++;
        } else if (t - w->since >= SOAK_CROWD_PATIENCE) {
            set_point(s, w, w->point + 1);
            s->points_given_up++;
        }
    }
}

/* ---- the checks --------------------------------------------------------- */

static int by_x(const void* a, const void* b)
{
    double u = ((const sample_t*)a)->x, v = ((const sample_t*)b)->x;
    return (u > v) - (u < v);
}

/* After step t (s->step = t + 1): every pedestrian's state and path. */
static void check_step(crowd_soak_t* s, uint64_t t)
{
    shoal_world_t* w = s->world[0];
    int32_t count = shoal_world_agent_count(w);
    check(s, count == s->walker_count, "agent count %d, the script's %d", (int)count, s->walker_count);
    uint32_t max_slot = 0;
    for (int j = 0; j < s->walker_count; ++j)
        if (s->walkers[j].id[0].index1 > max_slot) max_slot = s->walkers[j].id[0].index1;
    if (!grow(s, count, (int)max_slot + 1)) {
        check(s, 0, "out of memory for the check buffers");
        return;
    }
    shoal_agent_batch_t b = {.ids = s->ids, .positions = s->pos};
    int32_t got = -1;
    if (!expect_ok(s, 0, shoal_world_read_agents(w, &b, s->buf_cap, &got), "read_agents")) return;
    check(s, got == count, "read_agents returned %d of %d agents", (int)got, (int)count);
    s->sample_count = 0;
    for (int32_t i = 0; i < got; ++i) {
        uint32_t slot = s->ids[i].index1;
        const float* p = s->pos + 3 * i;
        if (!check(s, isfinite(p[0]) && isfinite(p[1]) && p[2] == 0.0f,
                   "agent %u: position not finite or off the plane", slot))
            continue;
        if (!check(s, slot < (uint32_t)s->slot_cap && s->seen_stamp[slot] != s->step,
                   "agent %u listed twice (or out of range)", slot))
            continue;
        s->seen_stamp[slot] = s->step;
        double x = p[0], y = p[1];
        s->samples[s->sample_count++] = (sample_t){x, y, slot};
        int has_prev = s->prev_step[slot] == t;
        for (int n = 0; n < s->wall_count; ++n) {
            const wall_t* wl = &s->walls[n];
            /* a wall removed before this step is no longer listed; one added
             * before it (added == t) may lie across a path that started on
             * its other side, so only its clearance is checked */
            int fresh = wl->added >= t && t > 0;
            for (int g = 0; g < wl->segments; ++g) {
                const double* seg = wl->seg + 4 * g;
                if (has_prev && !fresh) {
                    s->path_tests++;
                    check(s, !crosses(seg, s->prev_x[slot], s->prev_y[slot], x, y),
                          "agent %u crossed wall %d (segment %d, (%g, %g)-(%g, %g)%s) from (%.9g, %.9g) to "
                          "(%.9g, %.9g)",
                          slot, (int)wl->id, g, seg[0], seg[1], seg[2], seg[3],
                          wl->door >= 0 ? ", a door" : "", s->prev_x[slot], s->prev_y[slot], x, y);
                }
                double gap = segment_distance(seg, x, y) / SOAK_CROWD_RADIUS;
                s->wall_checks++;
                if (gap < s->closest_wall) {
                    s->closest_wall = gap;
                    s->closest_wall_step = s->step;
                }
                check(
                    s, gap >= SOAK_CROWD_WALL_GAP,
                    "agent %u at (%.9g, %.9g) is %.4f of its radius from wall %d (segment %d%s), under %.2f",
                    slot, x, y, gap, (int)wl->id, g, wl->door >= 0 ? ", a door" : "", SOAK_CROWD_WALL_GAP);
            }
        }
        s->prev_x[slot] = x;
        s->prev_y[slot] = y;
        s->prev_step[slot] = s->step;
    }
    /* pairs: a sweep along x over the sorted samples */
    sample_t* m = s->samples;
    int n = s->sample_count;
    qsort(m, (size_t)n, sizeof *m, by_x);
    const double sum = 2 * SOAK_CROWD_RADIUS;
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n && m[j].x - m[i].x < sum; ++j) {
            double dx = m[j].x - m[i].x, dy = m[j].y - m[i].y;
            if (fabs(dy) >= sum) continue;
            double ratio = sqrt(dx * dx + dy * dy) / sum;
            if (ratio < s->closest_pair) {
                s->closest_pair = ratio;
                s->closest_pair_step = s->step;
            }
            check(s, ratio >= SOAK_CROWD_OVERLAP, "agents %u and %u at %.4f of the radii sum, under %.2f",
                  m[i].slot, m[j].slot, ratio, SOAK_CROWD_OVERLAP);
        }
}

static void sample_memory(crowd_soak_t* s, double elapsed, double warmup)
{
    double rss = soak_rss_mib();
    s->rss_last_mib = rss;
    if (!s->warm_done) {
        if (elapsed >= warmup) {
            s->warm_done = 1;
            s->rss_warm_mib = rss;
        }
        return;
    }
    if (rss > s->rss_peak_mib) s->rss_peak_mib = rss;
    double bound =
        s->rss_warm_mib + fmax(SOAK_CROWD_RSS_SLACK_MIB, SOAK_CROWD_RSS_SLACK_REL * s->rss_warm_mib);
    check(s, rss <= bound, "resident memory %.1f MiB over the bound %.1f MiB (warm %.1f)", rss, bound,
          s->rss_warm_mib);
}

/* ---- the run ------------------------------------------------------------ */

static int setup(crowd_soak_t* s)
{
    s->worlds = s->opt.shadow_threads > 0 ? 2 : 1;
    for (int k = 0; k < s->worlds; ++k) {
        shoal_world_def_t def = world_def(s, k == 0 ? s->opt.threads : s->opt.shadow_threads);
        shoal_error_t err;
        if (shoal_world_create(&def, &s->world[k], &err) != SHOAL_OK) {
            check(s, 0, "world_create: %s", err.message);
            return 0;
        }
    }
    snprintf(s->snapshot_path, sizeof s->snapshot_path, "/tmp/shoal-soak-crowd-%ld.snapshot", (long)getpid());
    s->rng = s->opt.seed ^ 0xc0ffee5eedull;
    s->closest_pair = s->closest_wall = INFINITY;
    for (int d = 0; d < SOAK_CROWD_DOORS; ++d) s->door_wall[d] = -1;
    for (size_t i = 0; i < sizeof fixed_walls / sizeof fixed_walls[0]; ++i)
        add_wall(s, fixed_walls[i].xy, fixed_walls[i].count, fixed_walls[i].closed, -1);
    for (int d = 0; d < SOAK_CROWD_DOORS; ++d)
        if (below(&s->rng, 2)) add_wall(s, doors[d], 2, 0, d);
    for (int i = 0; i < s->opt.agents; ++i) add_walker(s);
    s->rss_start_mib = soak_rss_mib();
    return s->violations == 0;
}

static void report(const crowd_soak_t* s, double seconds)
{
    double rate = seconds > 0 ? (double)s->agent_steps / seconds : 0.0;
    double peak = soak_peak_rss_mib();
    if (s->opt.json) {
        printf(
            "{\"scene\": \"crowd\", \"seed\": %llu, \"threads\": %d, \"shadow_threads\": %d, \"steps\": "
            "%llu, "
            "\"seconds\": %.1f, \"agents_final\": %d, \"agent_steps\": %llu, \"agent_steps_per_second\": "
            "%.0f, "
            "\"checks\": %llu, \"violations\": %llu, \"hash_compares\": %llu, \"path_tests\": %llu, "
            "\"adds\": %llu, \"removes\": %llu, \"spawn_misses\": %llu, \"doors_closed\": %llu, "
            "\"doors_opened\": %llu, \"closes_waited\": %llu, \"saves_file\": %llu, \"saves_memory\": %llu, "
            "\"points_reached\": %llu, \"points_given_up\": %llu, \"closest_pair\": %.6f, "
            "\"closest_wall\": %.6f, \"rss_start_mib\": %.1f, \"rss_warm_mib\": %.1f, "
            "\"rss_peak_after_warmup_mib\": %.1f, \"rss_final_mib\": %.1f, \"peak_rss_mib\": %.1f, "
            "\"first_violation\": \"",
            (unsigned long long)s->opt.seed, s->opt.threads, s->opt.shadow_threads,
            (unsigned long long)s->step, seconds, s->walker_count, (unsigned long long)s->agent_steps, rate,
            (unsigned long long)s->checks, (unsigned long long)s->violations,
            (unsigned long long)s->hash_compares, (unsigned long long)s->path_tests,
            (unsigned long long)s->adds, (unsigned long long)s->removes, (unsigned long long)s->spawn_misses,
            (unsigned long long)s->doors_closed, (unsigned long long)s->doors_opened,
            (unsigned long long)s->closes_waited, (unsigned long long)s->saves_file,
            (unsigned long long)s->saves_memory, (unsigned long long)s->points_reached,
            (unsigned long long)s->points_given_up, isfinite(s->closest_pair) ? s->closest_pair : -1.0,
            isfinite(s->closest_wall) ? s->closest_wall : -1.0, s->rss_start_mib, s->rss_warm_mib,
            s->rss_peak_mib, s->rss_last_mib, peak);
        for (const char* c = s->first_violation; *c; ++c)
            if (*c == '"' || *c == '\\')
                printf("\\%c", *c);
            else if ((unsigned char)*c >= 0x20)
                putchar(*c);
        printf("\"}\n");
        return;
    }
    printf("soak --crowd: seed %llu, %d thread(s), shadow world on %d\n", (unsigned long long)s->opt.seed,
           s->opt.threads, s->opt.shadow_threads);
    printf("  steps             %llu (%.1f s of wall time, %.1f s simulated)\n", (unsigned long long)s->step,
           seconds, (double)s->step * SOAK_CROWD_DT);
    printf("  pedestrians       %d at the end; %llu agent-steps (%.0f per second)\n", s->walker_count,
           (unsigned long long)s->agent_steps, rate);
    printf("  invariant checks  %llu (%llu path-segment crossing tests)\n", (unsigned long long)s->checks,
           (unsigned long long)s->path_tests);
    printf("  hash comparisons  %llu (shadow world)\n", (unsigned long long)s->hash_compares);
    printf("  doors             %llu closed, %llu opened, %llu closings waited (doorway occupied)\n",
           (unsigned long long)s->doors_closed, (unsigned long long)s->doors_opened,
           (unsigned long long)s->closes_waited);
    printf("  saves             %llu through a file, %llu through memory, each loaded back\n",
           (unsigned long long)s->saves_file, (unsigned long long)s->saves_memory);
    printf("  changes           %llu adds, %llu removes (%llu placements found no room)\n",
           (unsigned long long)s->adds, (unsigned long long)s->removes, (unsigned long long)s->spawn_misses);
    printf("  route points      %llu reached, %llu given up after %d s\n",
           (unsigned long long)s->points_reached, (unsigned long long)s->points_given_up,
           SOAK_CROWD_PATIENCE / 30);
    printf("  closest pair      %.4f of the radii sum (step %llu; bound %.2f)\n", s->closest_pair,
           (unsigned long long)s->closest_pair_step, SOAK_CROWD_OVERLAP);
    printf("  closest to a wall %.4f of the radius (step %llu; bound %.2f)\n", s->closest_wall,
           (unsigned long long)s->closest_wall_step, SOAK_CROWD_WALL_GAP);
    printf(
        "  resident memory   %.1f MiB at the start, %.1f MiB after warm-up, %.1f MiB peak after, %.1f MiB at "
        "the end; peak RSS %.1f MiB\n",
        s->rss_start_mib, s->rss_warm_mib, s->rss_peak_mib, s->rss_last_mib, peak);
    printf("  violations        %llu%s%s\n", (unsigned long long)s->violations,
           s->violations ? ": first: " : "", s->first_violation);
}

static void release(crowd_soak_t* s)
{
    for (int k = 0; k < 2; ++k) shoal_world_destroy(s->world[k]);
    if (s->snapshot_path[0]) remove(s->snapshot_path);
    free(s->walkers);
    free(s->prev_x);
    free(s->prev_y);
    free(s->prev_step);
    free(s->seen_stamp);
    free(s->ids);
    free(s->pos);
    free(s->samples);
    free(s->seg_buf);
}

int soak_crowd_run(const soak_crowd_options_t* options)
{
    crowd_soak_t* s = calloc(1, sizeof *s);
    if (s == NULL) {
        cli_error("soak: out of memory");
        return CLI_EXIT_FAILURE;
    }
    s->opt = *options;
    double start = cli_now_seconds();
    double limit = s->opt.minutes > 0 ? s->opt.minutes * 60.0 : INFINITY;
    double warmup = fmin(60.0, 0.2 * (isfinite(limit) ? limit : 300.0));
    double next_progress = s->opt.progress > 0 ? s->opt.progress : INFINITY;
    if (!setup(s)) {
        cli_error("soak: setup failed: %s", s->first_violation);
        release(s);
        free(s);
        return CLI_EXIT_FAILURE;
    }
    for (;;) {
        double elapsed = cli_now_seconds() - start;
        if (elapsed >= limit || (s->opt.steps > 0 && s->step >= (uint64_t)s->opt.steps)) break;
        if (s->violations >= 1000) break;
        uint64_t t = s->step;
        script(s);
        if (s->violations >= 1000) break;
        for (int k = 0; k < s->worlds; ++k)
            expect_ok(s, k, shoal_world_step(s->world[k], SOAK_CROWD_DT), "world_step");
        s->step++;
        s->agent_steps += (uint64_t)shoal_world_agent_count(s->world[0]);
        check_step(s, t);
        if (s->worlds > 1 && s->step % 50 == 0) {
            uint64_t a = shoal_world_state_hash(s->world[0]);
            uint64_t b = shoal_world_state_hash(s->world[1]);
            check(s, a == b, "state hash %016llx differs from the shadow world's %016llx",
                  (unsigned long long)a, (unsigned long long)b);
            s->hash_compares++;
        }
        if (s->step % 500 == 0)
            for (int k = 0; k < s->worlds; ++k) check_walls(s, k);
        if (s->step % 256 == 0) sample_memory(s, elapsed, warmup);
        if (elapsed >= next_progress) {
            printf(
                "soak: %.0f s, step %llu, %d pedestrians, %llu checks, %llu violations, closest pair %.4f, "
                "RSS %.1f MiB\n",
                elapsed, (unsigned long long)s->step, s->walker_count, (unsigned long long)s->checks,
                (unsigned long long)s->violations, s->closest_pair, s->rss_last_mib);
            fflush(stdout);
            next_progress += s->opt.progress;
        }
    }
    if (!s->warm_done) s->rss_warm_mib = s->rss_peak_mib = s->rss_last_mib = soak_rss_mib();
    report(s, cli_now_seconds() - start);
    int code = s->violations ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
    release(s);
    free(s);
    return code;
}
