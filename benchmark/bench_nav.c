/* `shoal bench nav`: navigation fields (shoal/nav.h) on generated floor
 * plans, with crowd pedestrians walking them, and the solve alone.
 *
 * Plans (seeded): an office floor, a corridor spine along x with rooms of
 * 3, 4, 5 or 6 m on both sides, each with one door of 0.9 to 1.2 m onto
 * the corridor; or a maze of R rooms of 4 m, in the most square grid of R
 * cells, joined by 1.2 m doors along a random spanning tree (the maze of
 * tests/test_nav.c). G goals are areas: G distinct rooms, each shrunk by
 * 0.5 m from its walls. Each of N pedestrians (the crowd preset
 * "pedestrian") gets a random goal and a random start: on a walkable cell
 * with a way to its goal, at least the clearance from every wall, at least
 * two radii from every other start, and outside its goal's room.
 *
 * The world: the library's nav defaults, dt 0.05 s, stepped until every
 * agent has arrived or --seconds pass. The fields are solved before the
 * stepping (shoal_world_nav_update, timed alone) and read once; an
 * agent's shortest way is its goal's field at its start cell less the
 * area's offset (an area's field starts at its depth inside it, so the
 * edge is at that depth), in metres at unit speed. An agent has arrived at
 * the first step after which that field at its cell, less the offset, is
 * within its arrive_distance: the library's own rule. Only the steps are
 * timed; the figures are read between steps.
 *
 * --solve-only: one point goal's field on a floor of F x F m (default 200)
 * at the default 0.1 m cell, with a few long walls; then G point goals
 * solved at once, on one thread and on --threads. Each is timed twice:
 * the first shoal_world_nav_update (the grid, the speed near walls and the
 * fields), and the fields alone (the goals removed and added again, so
 * the grid stays). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmark/bench_systems.h"
#include "scenes/maze.h"
#include "shoal/extend.h"
#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

#define NAV_DT 0.05f
#define NAV_CORRIDOR 2.4f     /* m, the office's corridor */
#define NAV_ROOM_MIN 3.0f     /* m, the narrowest office room */
#define NAV_MAZE_ROOM 4.0f    /* m */
#define NAV_MAZE_DOOR 1.2f    /* m */
#define NAV_GOAL_INSET 0.5f   /* m, a goal area inside its room's walls */
#define NAV_SNAP_STEPS 20     /* positions kept every second, */
#define NAV_SNAPS 11          /* the last 10 s of them */
#define NAV_STUCK_STEPS 200   /* 10 s */
#define NAV_STUCK_METRES 0.5f /* moved less than this over them */
#define NAV_CHUNK 65536

enum { PLAN_OFFICE = 0, PLAN_MAZE = 1, PLAN_HALL = 2 };
static const char* const plan_names[] = {"office", "maze", "hall"};

typedef struct nav_opts {
    int plan;
    int64_t agents; /* 0: the plan's default */
    int64_t goals;
    int64_t rooms;
    double width, height;
    double seconds;
    int64_t seed;
    int64_t threads;
    double floor;
    int solve_only;
    int json;
} nav_opts_t;

#define NAV_DEFAULTS                                                                                         \
    {                                                                                                        \
        PLAN_OFFICE, 0, 8, 20, 40.0, 30.0, 300.0, 1, 0, 200.0, 0, 0                                          \
    }

static int64_t default_agents(int plan) { return plan == PLAN_OFFICE ? 1000 : 200; }

/* ---- seeded draws ----------------------------------------------------------- */

/* scenes/maze.h's generator, which the maze is drawn from too. */
static float unif(uint64_t* s, float lo, float hi)
{
    return lo + (hi - lo) * (float)scene_draw(s) / 2147483648.0f;
}
static int below(uint64_t* s, int n) { return scene_below(s, n); }

/* ---- floor plans ------------------------------------------------------------ */

typedef struct nav_room_t {
    float x0, y0, x1, y1;
} nav_room_t;

typedef struct nav_plan_t {
    float (*seg)[4];
    int32_t nseg, seg_cap;
    nav_room_t* room;
    int32_t nrooms, room_cap;
    float w, h;     /* the floor: [0, w] x [0, h] */
    int32_t nx, ny; /* a maze's rooms per row, rows */
} nav_plan_t;

static int plan_seg(nav_plan_t* p, float ax, float ay, float bx, float by)
{
    if (hypotf(bx - ax, by - ay) < 1e-3f) return 1; /* a door at a room's end leaves nothing */
    if (p->nseg == p->seg_cap) {
        int32_t cap = p->seg_cap ? 2 * p->seg_cap : 64;
        void* grown = realloc(p->seg, (size_t)cap * sizeof *p->seg);
        if (!grown) return 0;
        p->seg = grown;
        p->seg_cap = cap;
    }
    float* s = p->seg[p->nseg++];
    s[0] = ax;
    s[1] = ay;
    s[2] = bx;
    s[3] = by;
    return 1;
}

static int plan_room(nav_plan_t* p, float x0, float y0, float x1, float y1)
{
    if (p->nrooms == p->room_cap) {
        int32_t cap = p->room_cap ? 2 * p->room_cap : 32;
        void* grown = realloc(p->room, (size_t)cap * sizeof *p->room);
        if (!grown) return 0;
        p->room = grown;
        p->room_cap = cap;
    }
    p->room[p->nrooms++] = (nav_room_t){x0, y0, x1, y1};
    return 1;
}

static void plan_free(nav_plan_t* p)
{
    free(p->seg);
    free(p->room);
    memset(p, 0, sizeof *p);
}

static int plan_box(nav_plan_t* p)
{
    return plan_seg(p, 0, 0, p->w, 0) && plan_seg(p, p->w, 0, p->w, p->h) &&
           plan_seg(p, p->w, p->h, 0, p->h) && plan_seg(p, 0, p->h, 0, 0);
}

/* The office: W x H m, the corridor along the middle, rooms of a width
 * drawn from 3, 4, 5 and 6 m on each side (the last of a row takes what
 * is left when less than 3 m would remain), each reaching from the outer
 * wall to the corridor, with a door of 0.9 to 1.2 m at a random place in
 * its corridor wall, at least 0.4 m from its side walls. */
static int office_plan(nav_plan_t* p, float W, float H, uint64_t* s)
{
    static const float widths[] = {3.0f, 4.0f, 5.0f, 6.0f};
    p->w = W;
    p->h = H;
    if (!plan_box(p)) return 0;
    const float c0 = 0.5f * (H - NAV_CORRIDOR), c1 = c0 + NAV_CORRIDOR;
    for (int side = 0; side < 2; ++side) {
        const float ya = side ? c1 : 0.0f, yb = side ? H : c0, wall = side ? c1 : c0;
        float x = 0.0f;
        while (W - x > 1e-3f) {
            float w = widths[below(s, 4)];
            if (W - x - w < NAV_ROOM_MIN) w = W - x;
            if (!plan_room(p, x, ya, x + w, yb)) return 0;
            if (x + w < W - 1e-3f && !plan_seg(p, x + w, ya, x + w, yb)) return 0;
            float door = unif(s, 0.9f, 1.2f);
            float m = unif(s, x + 0.4f + 0.5f * door, x + w - 0.4f - 0.5f * door);
            if (!plan_seg(p, x, wall, m - 0.5f * door, wall) ||
                !plan_seg(p, m + 0.5f * door, wall, x + w, wall))
                return 0;
            x += w;
        }
    }
    return 1;
}

static int plan_wall(void* plan, float ax, float ay, float bx, float by)
{
    return plan_seg(plan, ax, ay, bx, by);
}

/* The maze of scenes/maze.h: R rooms of 4 m in nx x ny (ny the largest
 * divisor of R up to its square root: 20 rooms are 5 x 4, a prime count
 * one row), joined by 1.2 m doors in the middle of the walls of a random
 * spanning tree. The hall: the same rooms as areas of one open floor. */
static int maze_plan(nav_plan_t* p, int R, uint64_t* s, int hall)
{
    if (R < 2 || R > 1000000) return 0;
    int ny = 1;
    for (int d = 1; d * d <= R; ++d)
        if (R % d == 0) ny = d;
    const int nx = R / ny;
    const float room = NAV_MAZE_ROOM;
    p->nx = nx;
    p->ny = ny;
    p->w = (float)nx * room;
    p->h = (float)ny * room;
    const size_t rooms = (size_t)(unsigned)R;
    int* parent = malloc(rooms * sizeof *parent);
    unsigned char* open = malloc(2 * rooms);
    int ok = parent && open;
    if (ok) scene_maze_doors(nx, ny, s, parent, open);
    ok = ok && plan_box(p);
    for (int c = 0; ok && c < R; ++c) {
        float x = (float)(c % nx) * room, y = (float)(c / nx) * room;
        ok = plan_room(p, x, y, x + room, y + room);
        if (ok && !hall) ok = scene_maze_room_walls(nx, ny, room, NAV_MAZE_DOOR, open, c, plan_wall, p);
    }
    free(parent);
    free(open);
    return ok;
}

static int room_of(const nav_plan_t* p, float x, float y)
{
    for (int32_t r = 0; r < p->nrooms; ++r) {
        const nav_room_t* q = &p->room[r];
        if (x >= q->x0 && x < q->x1 && y >= q->y0 && y < q->y1) return r;
    }
    return -1;
}

static float seg_dist(const float s[4], float x, float y)
{
    float dx = s[2] - s[0], dy = s[3] - s[1];
    float t = ((x - s[0]) * dx + (y - s[1]) * dy) / (dx * dx + dy * dy);
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    return hypotf(s[0] + t * dx - x, s[1] + t * dy - y);
}

static float wall_dist(const nav_plan_t* p, float x, float y)
{
    float d = INFINITY;
    for (int32_t k = 0; k < p->nseg; ++k) d = fminf(d, seg_dist(p->seg[k], x, y));
    return d;
}

/* ---- the world -------------------------------------------------------------- */

static shoal_world_t* new_world(const char* command, int32_t threads, int64_t capacity, uint64_t seed)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.thread_count = threads;
    def.initial_capacity = capacity > 0 ? (int32_t)capacity : 16;
    def.seed = seed;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    if (shoal_world_create(&def, &w, &err) != SHOAL_OK) {
        cli_error("%s: %s", command, err.message);
        return NULL;
    }
    return w;
}

static int add_walls(shoal_world_t* w, const nav_plan_t* p)
{
    for (int32_t k = 0; k < p->nseg; ++k)
        if (shoal_world_add_wall(w, p->seg[k], 2, 0, NULL) != SHOAL_OK) return 0;
    return 1;
}

static int cell_of(const shoal_nav_grid_info_t* g, float x, float y)
{
    float u = (x - g->origin[0]) / g->cell, v = (y - g->origin[1]) / g->cell;
    if (!(u >= 0.0f && v >= 0.0f && u < (float)g->nx && v < (float)g->ny)) return -1;
    int32_t i = (int32_t)u, j = (int32_t)v;
    if (i >= g->nx) i = g->nx - 1;
    if (j >= g->ny) j = g->ny - 1;
    return j * g->nx + i;
}

/* The offset of an area goal's field: the depth inside the area of its
 * deepest walkable cell center, where the field is 0 (its edge is at the
 * offset). */
static float area_offset(const shoal_nav_grid_info_t* g, const float* blocked, const nav_room_t* a)
{
    float deepest = 0.0f;
    for (int32_t j = 0; j < g->ny; ++j) {
        float y = g->origin[1] + ((float)j + 0.5f) * g->cell;
        if (y < a->y0 || y > a->y1) continue;
        for (int32_t i = 0; i < g->nx; ++i) {
            float x = g->origin[0] + ((float)i + 0.5f) * g->cell;
            if (x < a->x0 || x > a->x1 || blocked[j * g->nx + i] != 0.0f) continue;
            float d = fminf(fminf(x - a->x0, a->x1 - x), fminf(y - a->y0, a->y1 - y));
            deepest = fmaxf(deepest, d);
        }
    }
    return deepest;
}

/* Starts closer than two radii: a bucket grid of that size. */
typedef struct spacing_t {
    int32_t *head, *next;
    const float* xy;
    int32_t bx, by;
    float size;
} spacing_t;

static int spacing_init(spacing_t* sp, float w, float h, float size, int64_t agents, const float* xy)
{
    sp->size = size;
    sp->bx = (int32_t)(w / size) + 1;
    sp->by = (int32_t)(h / size) + 1;
    sp->xy = xy;
    sp->head = malloc((size_t)sp->bx * (size_t)sp->by * sizeof *sp->head);
    sp->next = malloc((size_t)agents * sizeof *sp->next);
    if (!sp->head || !sp->next) return 0;
    for (int64_t b = 0; b < (int64_t)sp->bx * sp->by; ++b) sp->head[b] = -1;
    return 1;
}

static int32_t bucket_of(const spacing_t* sp, float v, int32_t n)
{
    int32_t b = (int32_t)(v / sp->size);
    return b < 0 ? 0 : b >= n ? n - 1 : b;
}

static int spacing_free_at(const spacing_t* sp, float x, float y)
{
    int32_t bi = bucket_of(sp, x, sp->bx), bj = bucket_of(sp, y, sp->by);
    for (int32_t j = bj - 1; j <= bj + 1; ++j)
        for (int32_t i = bi - 1; i <= bi + 1; ++i) {
            if (i < 0 || j < 0 || i >= sp->bx || j >= sp->by) continue;
            for (int32_t k = sp->head[j * sp->bx + i]; k >= 0; k = sp->next[k])
                if (hypotf(sp->xy[2 * k] - x, sp->xy[2 * k + 1] - y) < sp->size) return 0;
        }
    return 1;
}

static void spacing_add(spacing_t* sp, int32_t k)
{
    int32_t b = bucket_of(sp, sp->xy[2 * k + 1], sp->by) * sp->bx + bucket_of(sp, sp->xy[2 * k], sp->bx);
    sp->next[k] = sp->head[b];
    sp->head[b] = k;
}

/* ---- the walk --------------------------------------------------------------- */

typedef struct nav_run_t {
    nav_plan_t plan;
    int32_t goals;
    int32_t* goal_room; /* [goals] */
    int32_t* goal_id;   /* [goals] */
    float* offset;      /* [goals] */
    shoal_nav_grid_info_t grid;
    int64_t cells;
    float* blocked; /* [cells] */
    float* field;   /* [goals][cells] */
    int64_t agents;
    int32_t* goal;  /* [agents]: index into goal_room */
    float* start;   /* [agents][2] */
    float* way;     /* [agents]: the field at the start less the offset, m */
    float* arrived; /* [agents]: seconds, -1 until arrived */
    float* at;      /* [agents][2]: now */
    float* snaps;   /* [NAV_SNAPS][agents][2] */
} nav_run_t;

static void run_free(nav_run_t* r)
{
    plan_free(&r->plan);
    free(r->goal_room);
    free(r->goal_id);
    free(r->offset);
    free(r->blocked);
    free(r->field);
    free(r->goal);
    free(r->start);
    free(r->way);
    free(r->arrived);
    free(r->at);
    free(r->snaps);
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* JSON: a number, or null when it is not finite. */
static void add_number(cJSON* o, const char* key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        cli_error(__VA_ARGS__);                                                                              \
        status = CLI_EXIT_FAILURE;                                                                           \
        goto done;                                                                                           \
    } while (0)

static int bench_nav_walk(const nav_opts_t* o)
{
    const char* cmd = "bench nav";
    const int64_t N = o->agents > 0 ? o->agents : default_agents(o->plan);
    nav_run_t r;
    memset(&r, 0, sizeof r);
    shoal_world_t* w = NULL;
    double* ratios = NULL;
    int status = CLI_EXIT_OK;
    uint64_t s = (uint64_t)o->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    double setup_start = cli_now_seconds();

    int planned = o->plan == PLAN_OFFICE ? office_plan(&r.plan, (float)o->width, (float)o->height, &s)
                                         : maze_plan(&r.plan, (int)o->rooms, &s, o->plan == PLAN_HALL);
    if (!planned) FAIL("%s: out of memory for the floor plan", cmd);
    if (o->goals > r.plan.nrooms - (o->plan != PLAN_OFFICE)) {
        status = cli_usage_error(cmd, "--goals %lld: the %s has %d rooms, and goals take one each%s",
                                 (long long)o->goals, plan_names[o->plan], (int)r.plan.nrooms,
                                 o->plan != PLAN_OFFICE ? " (and one room must be left for starts)" : "");
        goto done;
    }
    r.goals = (int32_t)o->goals;
    r.agents = N;

    /* the goal rooms: a partial shuffle */
    int32_t* order = malloc((size_t)r.plan.nrooms * sizeof *order);
    r.goal_room = malloc((size_t)r.goals * sizeof *r.goal_room);
    r.goal_id = malloc((size_t)r.goals * sizeof *r.goal_id);
    r.offset = malloc((size_t)r.goals * sizeof *r.offset);
    if (!order || !r.goal_room || !r.goal_id || !r.offset) {
        free(order);
        FAIL("%s: out of memory", cmd);
    }
    for (int32_t k = 0; k < r.plan.nrooms; ++k) order[k] = k;
    for (int32_t k = 0; k < r.goals; ++k) {
        int32_t pick = k + below(&s, r.plan.nrooms - k);
        int32_t t = order[k];
        order[k] = order[pick];
        order[pick] = t;
        r.goal_room[k] = order[k];
    }
    free(order);

    w = new_world(cmd, (int32_t)o->threads, N, (uint64_t)o->seed);
    if (!w) {
        status = CLI_EXIT_FAILURE;
        goto done;
    }
    if (!add_walls(w, &r.plan)) FAIL("%s: %s", cmd, shoal_world_last_error(w));
    nav_room_t* area = malloc((size_t)r.goals * sizeof *area);
    if (!area) FAIL("%s: out of memory", cmd);
    for (int32_t k = 0; k < r.goals; ++k) {
        const nav_room_t* q = &r.plan.room[r.goal_room[k]];
        area[k] = (nav_room_t){q->x0 + NAV_GOAL_INSET, q->y0 + NAV_GOAL_INSET, q->x1 - NAV_GOAL_INSET,
                               q->y1 - NAV_GOAL_INSET};
        shoal_nav_goal_t g;
        memset(&g, 0, sizeof g);
        g.kind = SHOAL_NAV_AREA;
        g.count = 4;
        const float pts[4][2] = {{area[k].x0, area[k].y0},
                                 {area[k].x1, area[k].y0},
                                 {area[k].x1, area[k].y1},
                                 {area[k].x0, area[k].y1}};
        memcpy(g.points, pts, sizeof pts);
        if (shoal_world_add_nav_goal(w, &g, &r.goal_id[k]) != SHOAL_OK) {
            free(area);
            FAIL("%s: %s", cmd, shoal_world_last_error(w));
        }
    }

    /* the first solve, timed alone; then every field, read once */
    double t0 = cli_now_seconds();
    shoal_status_t st = shoal_world_nav_update(w);
    double first_solve = cli_now_seconds() - t0;
    if (st != SHOAL_OK) {
        free(area);
        FAIL("%s: %s", cmd, shoal_world_last_error(w));
    }
    shoal_world_nav_grid(w, &r.grid);
    r.cells = (int64_t)r.grid.nx * r.grid.ny;
    r.blocked = malloc((size_t)r.cells * sizeof *r.blocked);
    r.field = malloc((size_t)r.cells * (size_t)r.goals * sizeof *r.field);
    if (!r.blocked || !r.field) {
        free(area);
        FAIL("%s: out of memory for %lld cells x %d fields", cmd, (long long)r.cells, (int)r.goals);
    }
    int64_t n = 0;
    int read_ok = shoal_world_nav_field(w, -1, r.blocked, r.cells, &n) == SHOAL_OK;
    for (int32_t k = 0; read_ok && k < r.goals; ++k)
        read_ok = shoal_world_nav_field(w, r.goal_id[k], r.field + (size_t)k * (size_t)r.cells, r.cells,
                                        &n) == SHOAL_OK;
    for (int32_t k = 0; read_ok && k < r.goals; ++k) r.offset[k] = area_offset(&r.grid, r.blocked, &area[k]);
    free(area);
    if (!read_ok) FAIL("%s: %s", cmd, shoal_world_last_error(w));

    /* the agents */
    shoal_agent_def_t def = shoal_agent_default_def();
    if (shoal_crowd_preset("pedestrian", &def.crowd, &def.vehicle, NULL) != SHOAL_OK)
        FAIL("%s: no crowd preset \"pedestrian\"", cmd);
    def.weights[SHOAL_BEHAVIOR_NAVIGATE] = 1.0f;
    shoal_nav_params_t np;
    shoal_world_get_nav(w, &np);
    const float radius = def.vehicle.radius, speed = def.crowd.preferred_speed;
    const float arrive = def.nav.arrive_distance;
    r.goal = malloc((size_t)N * sizeof *r.goal);
    r.start = malloc((size_t)N * 2 * sizeof *r.start);
    r.way = malloc((size_t)N * sizeof *r.way);
    r.arrived = malloc((size_t)N * sizeof *r.arrived);
    r.at = malloc((size_t)N * 2 * sizeof *r.at);
    r.snaps = malloc((size_t)N * 2 * NAV_SNAPS * sizeof *r.snaps);
    spacing_t sp;
    memset(&sp, 0, sizeof sp);
    if (!r.goal || !r.start || !r.way || !r.arrived || !r.at || !r.snaps ||
        !spacing_init(&sp, r.plan.w, r.plan.h, 2.0f * radius, N, r.start)) {
        free(sp.head);
        free(sp.next);
        FAIL("%s: out of memory for %lld agents", cmd, (long long)N);
    }
    for (int64_t i = 0; i < N; ++i) {
        int32_t g = below(&s, r.goals);
        const float* T = r.field + (size_t)g * (size_t)r.cells;
        int placed = 0;
        for (int attempt = 0; attempt < 100000 && !placed; ++attempt) {
            float x = unif(&s, 0.0f, r.plan.w), y = unif(&s, 0.0f, r.plan.h);
            if (room_of(&r.plan, x, y) == r.goal_room[g]) continue;
            int c = cell_of(&r.grid, x, y);
            if (c < 0 || r.blocked[c] != 0.0f || !isfinite(T[c])) continue;
            if (wall_dist(&r.plan, x, y) < np.clearance || !spacing_free_at(&sp, x, y)) continue;
            r.goal[i] = g;
            r.start[2 * i] = x;
            r.start[2 * i + 1] = y;
            r.way[i] = fmaxf(0.0f, T[c] - r.offset[g]);
            spacing_add(&sp, (int32_t)i);
            placed = 1;
        }
        if (!placed) {
            free(sp.head);
            free(sp.next);
            FAIL("%s: found no start for agent %lld of %lld in 100000 draws: the floor is too full", cmd,
                 (long long)i + 1, (long long)N);
        }
    }
    free(sp.head);
    free(sp.next);
    /* added goal by goal (one definition each), the agent's index its user value */
    {
        float* pos = malloc((size_t)NAV_CHUNK * 3 * sizeof *pos);
        uint64_t* index = malloc((size_t)NAV_CHUNK * sizeof *index);
        int ok = pos && index;
        for (int32_t g = 0; ok && g < r.goals; ++g) {
            def.nav.goal = r.goal_id[g];
            int32_t m = 0;
            for (int64_t i = 0; ok && i <= N; ++i) {
                if (i < N && r.goal[i] == g) {
                    pos[3 * m] = r.start[2 * i];
                    pos[3 * m + 1] = r.start[2 * i + 1];
                    pos[3 * m + 2] = 0.0f;
                    index[m++] = (uint64_t)i;
                }
                if (m == NAV_CHUNK || (i == N && m > 0)) {
                    shoal_agent_arrays_t arrays;
                    memset(&arrays, 0, sizeof arrays);
                    arrays.positions = pos;
                    arrays.user_values = index;
                    ok = shoal_agents_add(w, &def, &arrays, m, NULL) == SHOAL_OK;
                    m = 0;
                }
            }
        }
        free(pos);
        free(index);
        if (!ok) FAIL("%s: %s", cmd, shoal_world_last_error(w));
    }
    double setup_seconds = cli_now_seconds() - setup_start;

    /* the walk */
    for (int64_t i = 0; i < N; ++i) {
        r.arrived[i] = -1.0f;
        r.at[2 * i] = r.snaps[2 * i] = r.start[2 * i];
        r.at[2 * i + 1] = r.snaps[2 * i + 1] = r.start[2 * i + 1];
    }
    float* pos = malloc((size_t)N * 3 * sizeof *pos);
    uint64_t* uv = malloc((size_t)N * sizeof *uv);
    if (!pos || !uv) {
        free(pos);
        free(uv);
        FAIL("%s: out of memory", cmd);
    }
    shoal_world_reset_stats(w);
    const int64_t max_steps = (int64_t)ceil(o->seconds / (double)NAV_DT - 1e-6);
    int64_t steps = 0, arrived = 0;
    int32_t peak_overlapping = 0;
    float min_closest = INFINITY;
    double seconds = 0.0;
    shoal_crowd_stats_t cs;
    memset(&cs, 0, sizeof cs);
    while (steps < max_steps && arrived < N) {
        double a = cli_now_seconds();
        st = shoal_world_step(w, NAV_DT);
        seconds += cli_now_seconds() - a;
        if (st != SHOAL_OK) {
            free(pos);
            free(uv);
            FAIL("%s: step failed: %s", cmd, shoal_world_last_error(w));
        }
        steps++;
        shoal_agent_batch_t b;
        memset(&b, 0, sizeof b);
        b.positions = pos;
        b.user_values = uv;
        int32_t got = 0;
        shoal_world_read_agents(w, &b, (int32_t)N, &got);
        for (int32_t k = 0; k < got; ++k) {
            int64_t i = (int64_t)uv[k];
            r.at[2 * i] = pos[3 * k];
            r.at[2 * i + 1] = pos[3 * k + 1];
            if (r.arrived[i] >= 0.0f) continue;
            int c = cell_of(&r.grid, pos[3 * k], pos[3 * k + 1]);
            if (c >= 0 &&
                r.field[(size_t)r.goal[i] * (size_t)r.cells + (size_t)c] - r.offset[r.goal[i]] <= arrive) {
                r.arrived[i] = (float)((double)steps * NAV_DT);
                arrived++;
            }
        }
        if (steps % NAV_SNAP_STEPS == 0)
            memcpy(r.snaps + (size_t)((steps / NAV_SNAP_STEPS) % NAV_SNAPS) * (size_t)N * 2, r.at,
                   (size_t)N * 2 * sizeof *r.at);
        shoal_world_crowd_stats(w, &cs);
        if (cs.overlapping > peak_overlapping) peak_overlapping = cs.overlapping;
        if (cs.closest_pair < min_closest) min_closest = cs.closest_pair;
    }
    free(pos);
    free(uv);

    /* the figures */
    int64_t ref =
        steps <= NAV_STUCK_STEPS ? 0 : (steps - NAV_STUCK_STEPS + NAV_SNAP_STEPS - 1) / NAV_SNAP_STEPS;
    const float* then = r.snaps + (size_t)(ref % NAV_SNAPS) * (size_t)N * 2;
    int64_t stuck = 0, rated = 0;
    ratios = malloc((size_t)N * sizeof *ratios);
    if (!ratios) FAIL("%s: out of memory", cmd);
    double ratio_sum = 0.0, arrive_sum = 0.0;
    for (int64_t i = 0; i < N; ++i) {
        if (r.arrived[i] < 0.0f) {
            stuck += hypotf(r.at[2 * i] - then[2 * i], r.at[2 * i + 1] - then[2 * i + 1]) < NAV_STUCK_METRES;
            continue;
        }
        arrive_sum += r.arrived[i];
        if (!(r.way[i] > 0.0f)) continue;
        ratios[rated] = (double)r.arrived[i] / ((double)r.way[i] / (double)speed);
        ratio_sum += ratios[rated++];
    }
    qsort(ratios, (size_t)rated, sizeof *ratios, cmp_double);
    double mean_ratio = rated ? ratio_sum / (double)rated : NAN;
    double median_ratio = rated ? ratios[rated / 2] : NAN;
    double p90_ratio = rated ? ratios[(rated * 9) / 10 < rated ? (rated * 9) / 10 : rated - 1] : NAN;
    double max_ratio = rated ? ratios[rated - 1] : NAN;
    double way_sum = 0.0;
    for (int64_t i = 0; i < N; ++i) way_sum += r.way[i];
    shoal_nav_stats_t ns;
    shoal_world_nav_stats(w, -1, &ns);
    double navigate_ns = NAN;
    for (int32_t k = 0; k < shoal_world_system_count(w); ++k) {
        shoal_system_stats_t ss;
        shoal_world_system_stats(w, k, &ss);
        if (ss.name && !strcmp(ss.name, "navigate") && steps > 0)
            navigate_ns = (double)ss.ns_total / ((double)N * (double)steps);
    }
    double agent_steps = (double)N * (double)steps;
    double window = (double)(steps - ref * NAV_SNAP_STEPS) * NAV_DT;
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)shoal_world_state_hash(w));
    const char* plan = plan_names[o->plan];

    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "nav");
        cJSON_AddStringToObject(root, "mode", "walk");
        cJSON_AddStringToObject(root, "plan", plan);
        cJSON_AddNumberToObject(root, "seed", (double)o->seed);
        cJSON_AddNumberToObject(root, "width", r.plan.w);
        cJSON_AddNumberToObject(root, "height", r.plan.h);
        cJSON_AddNumberToObject(root, "rooms", r.plan.nrooms);
        cJSON_AddNumberToObject(root, "walls", r.plan.nseg);
        cJSON_AddNumberToObject(root, "goals", r.goals);
        cJSON_AddNumberToObject(root, "agents", (double)N);
        cJSON_AddNumberToObject(root, "threads", shoal_world_thread_count(w));
        cJSON_AddNumberToObject(root, "dt", NAV_DT);
        cJSON_AddNumberToObject(root, "seconds_limit", o->seconds);
        cJSON_AddNumberToObject(root, "steps", (double)steps);
        cJSON_AddNumberToObject(root, "simulated_seconds", (double)steps * NAV_DT);
        cJSON_AddNumberToObject(root, "setup_seconds", setup_seconds);
        cJSON_AddNumberToObject(root, "first_solve_seconds", first_solve);
        cJSON_AddNumberToObject(root, "seconds", seconds);
        add_number(root, "agent_steps_per_s", agent_steps / seconds);
        cJSON_AddNumberToObject(root, "arrived", (double)arrived / (double)N);
        cJSON_AddNumberToObject(root, "arrived_agents", (double)arrived);
        cJSON_AddNumberToObject(root, "arrived_now", (double)ns.arrived / (double)N);
        add_number(root, "mean_time_ratio", mean_ratio);
        add_number(root, "median_time_ratio", median_ratio);
        add_number(root, "p90_time_ratio", p90_ratio);
        add_number(root, "max_time_ratio", max_ratio);
        add_number(root, "mean_arrival_seconds", arrived ? arrive_sum / (double)arrived : NAN);
        cJSON_AddNumberToObject(root, "mean_shortest_way", way_sum / (double)N);
        cJSON_AddNumberToObject(root, "preferred_speed", speed);
        cJSON_AddNumberToObject(root, "overlapping", cs.overlapping);
        add_number(root, "closest_pair", cs.closest_pair);
        cJSON_AddNumberToObject(root, "peak_overlapping", peak_overlapping);
        add_number(root, "min_closest_pair", min_closest);
        cJSON_AddNumberToObject(root, "stuck", (double)stuck);
        cJSON_AddNumberToObject(root, "stuck_window_seconds", window);
        cJSON_AddNumberToObject(root, "no_way", ns.no_way);
        cJSON_AddNumberToObject(root, "in_walls", ns.in_walls);
        add_number(root, "navigate_ns_per_agent_step", navigate_ns);
        cJSON* grid = cJSON_AddObjectToObject(root, "grid");
        cJSON_AddNumberToObject(grid, "nx", r.grid.nx);
        cJSON_AddNumberToObject(grid, "ny", r.grid.ny);
        cJSON_AddNumberToObject(grid, "cell", r.grid.cell);
        cJSON_AddNumberToObject(grid, "cells", (double)r.cells);
        cJSON_AddNumberToObject(grid, "blocked", (double)r.grid.blocked);
        cJSON_AddNumberToObject(grid, "bytes", r.grid.bytes);
        cJSON_AddStringToObject(root, "state_hash", hash);
        bench_systems_json(root, w, N);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("nav %s (seed %lld): %.1f x %.1f m, %d rooms, %d wall segments; %d goals (areas), %lld "
               "pedestrians, %d threads, dt %g s\n",
               plan, (long long)o->seed, (double)r.plan.w, (double)r.plan.h, (int)r.plan.nrooms,
               (int)r.plan.nseg, (int)r.goals, (long long)N, (int)shoal_world_thread_count(w),
               (double)NAV_DT);
        printf("grid               %d x %d cells of %g m, %lld blocked, %.1f MB\n", (int)r.grid.nx,
               (int)r.grid.ny, (double)r.grid.cell, (long long)r.grid.blocked, r.grid.bytes / 1e6);
        printf("first solve        %.4f s (shoal_world_nav_update: the grid and %d fields)\n", first_solve,
               (int)r.goals);
        printf("setup seconds      %.4f\n", setup_seconds);
        printf("steps              %lld (%.2f simulated s of at most %g)\n", (long long)steps,
               (double)steps * NAV_DT, o->seconds);
        printf("seconds            %.4f (the steps only)\n", seconds);
        printf("agent-steps/s      %.4g\n", agent_steps / seconds);
        printf("navigate           %.2f ns per agent-step\n", navigate_ns);
        printf("arrived            %.4f (%lld of %lld; %d in their goal now)\n", (double)arrived / (double)N,
               (long long)arrived, (long long)N, (int)ns.arrived);
        printf("time / shortest    mean %.3f, median %.3f, p90 %.3f, max %.3f (shortest: field / %.2f m/s)\n",
               mean_ratio, median_ratio, p90_ratio, max_ratio, (double)speed);
        printf("mean shortest way  %.2f m\n", way_sum / (double)N);
        printf("overlapping        %d at the end, %d at most (closest pair %.3f, %.3f at least, of the "
               "radii sum)\n",
               (int)cs.overlapping, (int)peak_overlapping, (double)cs.closest_pair, (double)min_closest);
        printf("stuck              %lld (not arrived, moved under %.1f m in the last %.1f s)\n",
               (long long)stuck, (double)NAV_STUCK_METRES, window);
        printf("no way / in walls  %d / %d\n", (int)ns.no_way, (int)ns.in_walls);
        printf("state_hash         %s\n\n", hash);
        bench_systems_table(w, N);
    }
done:
    free(ratios);
    run_free(&r);
    if (w) shoal_world_destroy(w);
    return status;
}

/* ---- the solve alone --------------------------------------------------------- */

/* The solve floor: F x F m, the outer walls, three long walls across it
 * leaving a gap of F / 10 at alternate ends (a serpentine), and two short
 * ones. */
static int solve_plan(nav_plan_t* p, float F)
{
    p->w = p->h = F;
    return plan_box(p) && plan_seg(p, 0.0f, 0.25f * F, 0.9f * F, 0.25f * F) &&
           plan_seg(p, 0.1f * F, 0.5f * F, F, 0.5f * F) &&
           plan_seg(p, 0.0f, 0.75f * F, 0.9f * F, 0.75f * F) &&
           plan_seg(p, 0.5f * F, 0.05f * F, 0.5f * F, 0.2f * F) &&
           plan_seg(p, 0.3f * F, 0.55f * F, 0.3f * F, 0.7f * F);
}

typedef struct solve_times_t {
    double update; /* the first shoal_world_nav_update */
    double fields; /* the fields alone */
    int32_t threads;
    shoal_nav_grid_info_t grid;
} solve_times_t;

static int solve_once(const nav_opts_t* o, const nav_plan_t* p, const float (*pts)[2], int32_t goals,
                      int32_t threads, solve_times_t* out)
{
    const char* cmd = "bench nav";
    shoal_world_t* w = new_world(cmd, threads, 0, (uint64_t)o->seed);
    if (!w) return 0;
    int32_t* id = malloc((size_t)goals * sizeof *id);
    shoal_nav_params_t np = shoal_nav_params_default();
    np.bounds[2] = np.bounds[3] = (float)o->floor;
    int ok = id && add_walls(w, p) && shoal_world_set_nav(w, &np) == SHOAL_OK;
    shoal_nav_goal_t g;
    memset(&g, 0, sizeof g);
    g.kind = SHOAL_NAV_POINT;
    g.count = 1;
    for (int32_t k = 0; ok && k < goals; ++k) {
        g.points[0][0] = pts[k][0];
        g.points[0][1] = pts[k][1];
        ok = shoal_world_add_nav_goal(w, &g, &id[k]) == SHOAL_OK;
    }
    if (ok) {
        double t0 = cli_now_seconds();
        ok = shoal_world_nav_update(w) == SHOAL_OK;
        out->update = cli_now_seconds() - t0;
    }
    for (int32_t k = 0; ok && k < goals; ++k) ok = shoal_world_remove_nav_goal(w, id[k]) == SHOAL_OK;
    for (int32_t k = 0; ok && k < goals; ++k) {
        g.points[0][0] = pts[k][0];
        g.points[0][1] = pts[k][1];
        ok = shoal_world_add_nav_goal(w, &g, &id[k]) == SHOAL_OK;
    }
    if (ok) {
        double t0 = cli_now_seconds();
        ok = shoal_world_nav_update(w) == SHOAL_OK;
        out->fields = cli_now_seconds() - t0;
    }
    if (ok) ok = shoal_world_nav_grid(w, &out->grid) == SHOAL_OK;
    out->threads = shoal_world_thread_count(w);
    if (!ok) cli_error("%s: %s", cmd, id ? shoal_world_last_error(w) : "out of memory");
    free(id);
    shoal_world_destroy(w);
    return ok;
}

static void times_json(cJSON* root, const char* key, const solve_times_t* t)
{
    cJSON* o = cJSON_AddObjectToObject(root, key);
    cJSON_AddNumberToObject(o, "threads", t->threads);
    cJSON_AddNumberToObject(o, "update_seconds", t->update);
    cJSON_AddNumberToObject(o, "fields_seconds", t->fields);
}

static int bench_nav_solve(const nav_opts_t* o)
{
    const char* cmd = "bench nav";
    const float F = (float)o->floor;
    nav_plan_t p;
    memset(&p, 0, sizeof p);
    const int32_t G = (int32_t)o->goals;
    float(*pts)[2] = malloc((size_t)(G + 1) * sizeof *pts);
    if (!pts || !solve_plan(&p, F)) {
        free(pts);
        plan_free(&p);
        cli_error("%s: out of memory", cmd);
        return CLI_EXIT_FAILURE;
    }
    /* the one goal near a corner, behind every long wall from the far one;
     * the G goals anywhere at least 1 m from the walls */
    pts[0][0] = 0.05f * F;
    pts[0][1] = 0.95f * F;
    uint64_t s = (uint64_t)o->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    for (int32_t k = 1; k <= G;) {
        float x = unif(&s, 0.0f, F), y = unif(&s, 0.0f, F);
        if (wall_dist(&p, x, y) < 1.0f) continue;
        pts[k][0] = x;
        pts[k][1] = y;
        ++k;
    }
    solve_times_t one, serial, parallel;
    memset(&one, 0, sizeof one);
    memset(&serial, 0, sizeof serial);
    memset(&parallel, 0, sizeof parallel);
    int ok = solve_once(o, &p, (const float(*)[2])pts, 1, (int32_t)o->threads, &one) &&
             solve_once(o, &p, (const float(*)[2])(pts + 1), G, 1, &serial) &&
             solve_once(o, &p, (const float(*)[2])(pts + 1), G, (int32_t)o->threads, &parallel);
    free(pts);
    plan_free(&p);
    if (!ok) return CLI_EXIT_FAILURE;
    const shoal_nav_grid_info_t* g = &one.grid;
    double field_ratio = serial.fields / parallel.fields, update_ratio = serial.update / parallel.update;
    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "nav");
        cJSON_AddStringToObject(root, "mode", "solve");
        cJSON_AddNumberToObject(root, "floor", F);
        cJSON_AddNumberToObject(root, "seed", (double)o->seed);
        cJSON_AddNumberToObject(root, "cell", g->cell);
        cJSON_AddNumberToObject(root, "nx", g->nx);
        cJSON_AddNumberToObject(root, "ny", g->ny);
        cJSON_AddNumberToObject(root, "cells", (double)g->nx * (double)g->ny);
        cJSON_AddNumberToObject(root, "blocked", (double)g->blocked);
        cJSON_AddNumberToObject(root, "bytes_one_goal", g->bytes);
        cJSON_AddNumberToObject(root, "bytes_goals", parallel.grid.bytes);
        cJSON_AddNumberToObject(root, "goals", G);
        cJSON_AddNumberToObject(root, "threads", parallel.threads);
        times_json(root, "one_goal", &one);
        times_json(root, "goals_one_thread", &serial);
        times_json(root, "goals_threads", &parallel);
        add_number(root, "fields_speedup", field_ratio);
        add_number(root, "update_speedup", update_ratio);
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("nav solve: %g x %g m floor, %d x %d cells of %g m (%lld blocked), seed %lld\n", (double)F,
               (double)F, (int)g->nx, (int)g->ny, (double)g->cell, (long long)g->blocked, (long long)o->seed);
        printf("one point goal, %d threads: first update %.3f s (grid, speed near walls, field), field "
               "alone %.3f s; %.1f MB\n",
               (int)one.threads, one.update, one.fields, g->bytes / 1e6);
        printf("%d point goals, 1 thread:  first update %.3f s, fields alone %.3f s\n", (int)G, serial.update,
               serial.fields);
        printf("%d point goals, %d threads: first update %.3f s, fields alone %.3f s; %.1f MB\n", (int)G,
               (int)parallel.threads, parallel.update, parallel.fields, parallel.grid.bytes / 1e6);
        printf("speed-up (1 thread over %d): fields %.2fx, first update %.2fx\n", (int)parallel.threads,
               field_ratio, update_ratio);
    }
    return CLI_EXIT_OK;
}

/* ---- options ---------------------------------------------------------------- */

static int parse_plan(const char* command, const char* name, const char* value, void* opts)
{
    nav_opts_t* o = opts;
    for (int k = 0; k < 3; ++k)
        if (!strcmp(value, plan_names[k])) {
            o->plan = k;
            return 0;
        }
    return cli_usage_error(command, "%s: expected office, maze or hall, got '%s'", name, value);
}

#define NAV_INT(name, metavar, field, lo, hi, help)                                                          \
    CLI_INT_ROW(name, metavar, nav_opts_t, field, lo, hi, help)
#define NAV_NUMBER(name_, metavar_, field, lo, hi, help_)                                                    \
    {                                                                                                        \
        .name = (name_), .metavar = (metavar_), .kind = CLI_NUMBER, CLI_AT(nav_opts_t, field), .min = (lo),  \
        .max = (hi), .help = (help_)                                                                         \
    }

static const cli_option_t nav_options[] = {
    {.name = "--plan",
     .metavar = "office|maze|hall",
     .kind = CLI_CUSTOM,
     .parse = parse_plan,
     .help = "the floor plan (default office): a corridor with rooms of 3 to 6 m on both sides, a door "
             "of 0.9 to 1.2 m each; or a maze of 4 m rooms joined by 1.2 m doors along a random "
             "spanning tree; or a hall, the maze's rooms as areas of one open floor (no inner walls)"},
    NAV_INT("--agents", "N", agents, 1, 10000000,
            "pedestrians (default 1000 in the office, 200 in the maze and the hall)"),
    NAV_INT("--goals", "G", goals, 1, 4096,
            "area goals, each in a room of its own (default 8); with --solve-only, point goals"),
    NAV_INT("--rooms", "R", rooms, 2, 1000000, "the maze's rooms (default 20: 5 x 4)"),
    NAV_NUMBER("--width", "M", width, 12.0, 2000.0, "the office's width along its corridor, m (default 40)"),
    NAV_NUMBER("--height", "M", height, 12.0, 2000.0,
               "the office's depth across its corridor, m (default 30)"),
    NAV_NUMBER("--seconds", "S", seconds, 0.05, 1e6,
               "simulated seconds at most; the walk ends sooner when every agent has arrived (default 300)"),
    NAV_INT("--seed", "S", seed, 0, 9007199254740992.0,
            "the plan's, the starts' and the world's seed (default 1)"),
    NAV_INT("--threads", "T", threads, 1, 1024, "threads, 1..1024 (default: physical cores)"),
    CLI_FLAG_ROW("--solve-only", nav_opts_t, solve_only,
                 "no agents: time one point goal's field on an F x F m floor, then G goals' fields on 1 "
                 "thread and on T"),
    NAV_NUMBER("--floor", "F", floor, 10.0, 2000.0, "the side of --solve-only's floor, m (default 200)"),
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(nav_opts_t, json),
     .help = "one JSON object on stdout: see below"},
};

static const cli_spec_t nav_spec = {
    .command = "bench nav",
    .usage = "[options]",
    .about = "Pedestrians (the crowd preset \"pedestrian\") with area goals in the rooms of a\n"
             "generated floor plan, each following its goal's navigation field, dt 0.05 s, until\n"
             "all have arrived or --seconds pass. The fields are solved before the first step,\n"
             "timed alone; the steps are timed; the figures are read between steps\n"
             "(benchmark/README.md, Navigation).\n",
    .options = nav_options,
    .option_count = CLI_COUNT(nav_options),
    .details = "--json prints: bench (\"nav\"), mode (\"walk\"), plan, seed, width, height, rooms,\n"
               "walls (segments), goals, agents, threads, dt, seconds_limit, steps,\n"
               "simulated_seconds, setup_seconds, first_solve_seconds (shoal_world_nav_update),\n"
               "seconds (the steps), agent_steps_per_s, arrived (the fraction that reached its\n"
               "goal), arrived_agents, arrived_now (in their goal at the end), mean_, median_,\n"
               "p90_ and max_time_ratio (time to arrive over the shortest time, the field at the\n"
               "start over the preferred speed), mean_arrival_seconds, mean_shortest_way (m),\n"
               "preferred_speed, overlapping and closest_pair at the end, peak_overlapping and\n"
               "min_closest_pair over the steps, stuck (not arrived and moved under 0.5 m in the\n"
               "last stuck_window_seconds, 10), no_way, in_walls, navigate_ns_per_agent_step,\n"
               "grid {nx, ny, cell, cells, blocked, bytes}, state_hash, systems [{name, stage,\n"
               "ms_per_step, ns_per_agent}].\n"
               "With --solve-only: bench, mode (\"solve\"), floor, seed, cell, nx, ny, cells,\n"
               "blocked, bytes_one_goal, bytes_goals, goals, threads, one_goal, goals_one_thread\n"
               "and goals_threads {threads, update_seconds (the first shoal_world_nav_update),\n"
               "fields_seconds (the fields alone)}, fields_speedup and update_speedup (1 thread\n"
               "over T).\n",
};

static int bench_nav(int argc, char** argv)
{
    nav_opts_t o = NAV_DEFAULTS;
    int stop = cli_parse(&nav_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    return o.solve_only ? bench_nav_solve(&o) : bench_nav_walk(&o);
}

const cli_command_t cli_bench_nav = {"nav",
                                     "pedestrians following navigation fields to rooms of an office "
                                     "floor\nor a maze; --solve-only times the fields' solve alone",
                                     bench_nav};
