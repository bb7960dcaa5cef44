/* `shoal soak`: a long run of a mixed world that checks every invariant it
 * can state, every step, and reports what it checked.
 *
 * Decisions worth knowing:
 * - The world mixes everything that runs per step: a flock (separation,
 *   alignment, cohesion, wander, obstacle avoidance) on a torus, static and
 *   moving obstacles, ground vehicles of every preset following two loop
 *   paths (one of them replaced now and then), and planner agents whose
 *   goals change. Agents are added, removed and teleported every so often.
 *   A seeded script decides every change, so a run is reproducible from its
 *   seed and options alone.
 * - Determinism is checked against a shadow world: a second world given the
 *   very same calls in lockstep (on --shadow-threads threads) whose state
 *   hash must equal the main world's at every comparison. There is no
 *   snapshot API to rerun a window from, and the shadow costs one more world
 *   but checks every step of the run, not samples of it.
 * - Limits have stated tolerances (SOAK_* below): speeds within 0.01 % of
 *   the cap (float rounding of a clamp), turn rates within 0.1 % plus
 *   1e-3 rad/s (the heading difference of one step is rounded), ground
 *   vehicles' yaw within 5 % of the kinematic bicycle's at full lock, at
 *   the end-of-step speed plus the most one step's forces can change it
 *   (the model turns at the speed before its change; after an obstacle
 *   contact, which cuts the speed after the turn, at the governor's).
 * - Memory: resident set size from /proc/self/statm, sampled every 256
 *   steps. After a warm-up (a fifth of the run, at most 60 s) no sample may
 *   exceed the warm-up's last sample by more than 16 MiB or 10 %, whichever
 *   is larger: the population moves around its target (adds and removes
 *   every 50 steps) but its capacity should not creep.
 * - Misuse probes every 100 steps (a NaN dt, stale, foreign and forged
 *   handles, NaN targets) must fail with the documented status and leave
 *   the state hash unchanged.
 * - Violations are counted; the first few are printed with the step and the
 *   agent. Any violation makes the exit code 1. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shoal/shoal.h"

#include "ecs/rng.h"

#include "cli/cli.h"
#include "cli/cli_options.h"
#include "cli/soak_crowd.h"

#define SOAK_SPEED_TOL 1e-4f   /* relative, on |V| <= max_speed */
#define SOAK_TURN_TOL 1e-3f    /* relative, on |omega| <= max_turn_rate */
#define SOAK_TURN_ABS 1e-3f    /* rad/s */
#define SOAK_GROUND_TOL 0.05f  /* relative, on ground speed and yaw bounds */
#define SOAK_PLANNER_TOL 1e-3f /* relative, on |V| = planner speed */
#define SOAK_RSS_SLACK_MIB 16.0
#define SOAK_RSS_SLACK_REL 0.10
#define SOAK_HALF 120.0f /* the torus is [-120, 120)^2 m */
#define SOAK_DT (1.0f / 30.0f)
#define SOAK_PRINT_MAX 10 /* violations printed in full */
#define SOAK_STALE_RING 64
#define SOAK_FLOCK_SPEED 5.0f
#define SOAK_FLOCK_TURN 3.0f
#define SOAK_PLANNER_SPEED 4.0f
#define SOAK_PLANNER_RATE 1.6f /* the 2D default trim table's max rate */
#define SOAK_PATH_POINTS 24
#define SOAK_PI 3.14159265358979f

enum { KIND_FLOCK = 1, KIND_GROUND = 2, KIND_PLANNER = 3 };

typedef struct soak_options_t {
    double minutes; /* 0: only --steps limits the run */
    int64_t steps;  /* 0: only --minutes limits the run */
    int threads;
    int shadow_threads; /* 0: no shadow world */
    int agents;         /* flock agents targeted */
    int vehicles;
    int planners;
    uint64_t seed;
    int json;
    double progress; /* s between progress lines; 0 = none */
    int crowd;       /* the crowd scene instead (cli/soak_crowd.c) */
} soak_options_t;

/* The agents the script knows, with their handles in each world. */
typedef struct roster_t {
    shoal_agent_t* id[2];
    int* kind;
    int count, capacity;
} roster_t;

typedef struct soak_t {
    soak_options_t opt;
    shoal_world_t* world[2];
    int worlds;
    roster_t roster;
    uint64_t rng;
    int flock_count, vehicle_count, planner_count;
    int path_shape;
    shoal_agent_t stale[SOAK_STALE_RING];
    int stale_count;
    /* per slot (index1) of the main world: heading after the last step and
     * the step it was recorded at (UINT64_MAX: none) */
    float* prev_heading;
    uint64_t* prev_step;
    uint64_t* seen_stamp;
    int slot_cap;
    /* bulk read buffers */
    shoal_agent_t* ids;
    float *pos, *vel, *head;
    uint64_t* user;
    int buf_cap;
    /* figures */
    uint64_t step, agent_steps, checks, violations, hash_compares, probes;
    uint64_t adds, removes, teleports, path_sets, goal_changes;
    double rss_warm_mib, rss_peak_mib, rss_last_mib;
    int warm_done;
    char first_violation[512];
} soak_t;

#define SOAK_INT(name, metavar, field, lo, hi, help)                                                         \
    CLI_INT_ROW(name, metavar, soak_options_t, field, lo, hi, help)

static const cli_option_t soak_options[] = {
    {.name = "--minutes",
     .metavar = "M",
     .kind = CLI_NUMBER,
     CLI_AT(soak_options_t, minutes),
     .max = 1e6,
     .flags = CLI_ABOVE_MIN,
     .help = "run for M minutes (a decimal). Default 1 unless --steps."},
    SOAK_INT("--steps", "N", steps, 1, (double)INT64_MAX,
             "stop after N steps (with --minutes: whichever comes first)."),
    SOAK_INT("--threads", "T", threads, 1, 256, "threads of the main world, 1..256. Default 1."),
    SOAK_INT("--shadow-threads", "T", shadow_threads, 0, 256,
             "threads of the shadow world, 0 = no shadow. Default 1."),
    SOAK_INT("--agents", "N", agents, 0, 1000000,
             "flock agents, or pedestrians with --crowd (the population moves around N). "
             "Default 2000 (300 with --crowd)."),
    SOAK_INT("--vehicles", "N", vehicles, 0, 1000, "ground vehicles (not with --crowd). Default 12."),
    SOAK_INT("--planners", "N", planners, 0, 1000, "planner agents (not with --crowd). Default 12."),
    SOAK_INT("--seed", "S", seed, 0, (double)INT64_MAX, "seed of the world and of the script. Default 1."),
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(soak_options_t, json),
     .help = "print the report as one JSON object."},
    {.name = "--progress",
     .metavar = "SECONDS",
     .kind = CLI_NUMBER,
     CLI_AT(soak_options_t, progress),
     .max = 1e6,
     .help = "print a progress line this often (stdout). Default none."},
    {.name = "--crowd",
     .kind = CLI_FLAG,
     CLI_AT(soak_options_t, crowd),
     .help = "soak the crowd scene instead: pedestrians walking through a room's doors, a "
             "corridor and round wall ends, in an unbounded 2D world, while doors close and "
             "open, pedestrians come and go and the worlds are saved and loaded back; checks "
             "that no path crosses a wall, no pair overlaps (2 % of the radii sum) and no "
             "centre comes within 0.98 of its radius of a wall (docs/dev/reliability.md)."},
};

static const cli_spec_t soak_spec = {
    .command = "soak",
    .usage = "[options]",
    .about = "Run a mixed world (a flock with neighbors, wander and obstacle avoidance on a\n"
             "torus; static and moving obstacles; ground vehicles of every preset on two loop\n"
             "paths; planner agents) for a long time, adding, removing and teleporting agents\n"
             "as it goes, and check every invariant every step: finite state, speeds and turn\n"
             "rates within the limits, positions on the torus, handles valid and stale ones\n"
             "rejected, agent counts, misuse probes rejected without changing the world, the\n"
             "state hash equal to a shadow world's given the same calls, and resident memory\n"
             "not growing after warm-up. Prints a report; exits 1 on any violation (or a\n"
             "failed setup). With --crowd it soaks pedestrians among walls and doors instead.\n",
    .options = soak_options,
    .option_count = CLI_COUNT(soak_options),
};

static int parse_options(int argc, char** argv, soak_options_t* o)
{
    *o = (soak_options_t){
        .threads = 1, .shadow_threads = 1, .agents = -1, .vehicles = 12, .planners = 12, .seed = 1};
    int stop = cli_parse(&soak_spec, argc, argv, o, NULL, NULL);
    if (stop >= 0) return stop;
    if (o->agents < 0) o->agents = o->crowd ? 300 : 2000;
    if (o->minutes == 0.0 && o->steps == 0) o->minutes = 1.0;
    return -1;
}

/* ---- small helpers ---------------------------------------------------- */

static float uniform(uint64_t* s, float lo, float hi)
{
    return lo + (hi - lo) * ((float)(rng_splitmix64(s) >> 40) * (1.0f / 16777216.0f));
}

static int below(uint64_t* s, int n) { return n > 0 ? (int)(rng_splitmix64(s) % (uint64_t)n) : 0; }

double soak_rss_mib(void)
{
    FILE* f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f == NULL) return 0.0;
    int ok = fscanf(f, "%ld %ld", &pages, &resident) == 2;
    fclose(f);
    return ok ? (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0) : 0.0;
}

double soak_peak_rss_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0.0;
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static float wrap_angle(float a)
{
    while (a > SOAK_PI) a -= 2.0f * SOAK_PI;
    while (a < -SOAK_PI) a += 2.0f * SOAK_PI;
    return a;
}

/* Count one check; record a violation when `ok` is false. */
__attribute__((format(printf, 3, 4))) static int check(soak_t* s, int ok, const char* fmt, ...)
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
    if (s->violations <= SOAK_PRINT_MAX)
        fprintf(stderr, "shoal: soak: step %llu: %s\n", (unsigned long long)s->step, msg);
    return 0;
}

/* A script call that must succeed in every world. */
static int expect_ok(soak_t* s, int k, shoal_status_t st, const char* what)
{
    return check(s, st == SHOAL_OK, "%s failed in world %d: %s (%s)", what, k, shoal_status_string(st),
                 shoal_world_last_error(s->world[k]));
}

/* ---- the script ------------------------------------------------------- */

static int roster_push(soak_t* s, const shoal_agent_t id[2], int kind)
{
    roster_t* r = &s->roster;
    if (r->count == r->capacity) {
        int cap = r->capacity ? r->capacity * 2 : 1024;
        shoal_agent_t* a = realloc(r->id[0], (size_t)cap * sizeof *a);
        if (a) r->id[0] = a;
        shoal_agent_t* b = realloc(r->id[1], (size_t)cap * sizeof *b);
        if (b) r->id[1] = b;
        int* c = realloc(r->kind, (size_t)cap * sizeof *c);
        if (c) r->kind = c;
        if (!a || !b || !c) return 0;
        r->capacity = cap;
    }
    r->id[0][r->count] = id[0];
    r->id[1][r->count] = id[1];
    r->kind[r->count] = kind;
    r->count++;
    return 1;
}

static shoal_agent_def_t flock_def(soak_t* s)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = uniform(&s->rng, -SOAK_HALF, SOAK_HALF);
    d.position[1] = uniform(&s->rng, -SOAK_HALF, SOAK_HALF);
    d.heading = uniform(&s->rng, -3.1f, 3.1f);
    d.velocity[0] = 2.0f * cosf(d.heading);
    d.velocity[1] = 2.0f * sinf(d.heading);
    d.vehicle.max_speed = SOAK_FLOCK_SPEED;
    d.vehicle.max_turn_rate = SOAK_FLOCK_TURN;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.5f;
    d.weights[SHOAL_BEHAVIOR_ALIGN] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_COHERE] = 0.5f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
    d.weights[SHOAL_BEHAVIOR_AVOID] = 2.0f;
    d.neighbors.radius = 4.0f;
    d.group = 0;
    d.user_value = KIND_FLOCK;
    return d;
}

static const char* const presets[] = {"car", "buggy", "apc", "truck", "tank", "hovercraft"};

/* Point i of path `path` in shape `shape`: closed loops around the center. */
static void path_points(int path, int shape, float* xyz)
{
    float rx = path == 0 ? 80.0f : (shape ? 40.0f : 55.0f);
    float ry = path == 0 ? 80.0f : (shape ? 60.0f : 35.0f);
    for (int i = 0; i < SOAK_PATH_POINTS; ++i) {
        float a = 2.0f * SOAK_PI * (float)(i % (SOAK_PATH_POINTS - 1)) / (SOAK_PATH_POINTS - 1);
        if (path == 1) a = -a; /* the other way round */
        xyz[3 * i + 0] = rx * cosf(a);
        xyz[3 * i + 1] = ry * sinf(a);
        xyz[3 * i + 2] = 0.0f;
    }
}

static shoal_agent_def_t ground_def(soak_t* s, int n)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    int path = n % 2;
    float xyz[3 * SOAK_PATH_POINTS];
    path_points(path, path ? s->path_shape : 0, xyz);
    int at = below(&s->rng, SOAK_PATH_POINTS - 1);
    d.position[0] = xyz[3 * at];
    d.position[1] = xyz[3 * at + 1];
    d.heading = atan2f(xyz[3 * at + 4] - xyz[3 * at + 1], xyz[3 * at + 3] - xyz[3 * at]);
    d.ground.enabled = 1;
    shoal_ground_vehicle_preset(presets[n % 6], &d.ground.vehicle, NULL);
    d.ground.follow.path = path;
    d.group = 1;
    d.user_value = KIND_GROUND;
    return d;
}

static shoal_agent_def_t planner_def(soak_t* s)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = uniform(&s->rng, -SOAK_HALF, SOAK_HALF);
    d.position[1] = uniform(&s->rng, -SOAK_HALF, SOAK_HALF);
    d.heading = uniform(&s->rng, -3.1f, 3.1f);
    d.planner.enabled = 1;
    d.planner.speed = SOAK_PLANNER_SPEED;
    d.planner.goal = SHOAL_PLAN_GOAL_SEEK;
    d.planner.goal_point[0] = uniform(&s->rng, -100.0f, 100.0f);
    d.planner.goal_point[1] = uniform(&s->rng, -100.0f, 100.0f);
    d.planner.max_expansions = 200;
    d.group = 2;
    d.user_value = KIND_PLANNER;
    return d;
}

static int add_agent(soak_t* s, const shoal_agent_def_t* d, int kind)
{
    shoal_agent_t id[2] = {{0}, {0}};
    for (int k = 0; k < s->worlds; ++k)
        if (!expect_ok(s, k, shoal_agent_add(s->world[k], d, &id[k]), "agent_add")) return 0;
    if (!roster_push(s, id, kind)) return check(s, 0, "out of memory in the roster");
    /* a reused slot: the heading recorded there was its previous agent's */
    if (id[0].index1 < (uint32_t)s->slot_cap) s->prev_step[id[0].index1] = UINT64_MAX;
    s->adds++;
    if (kind == KIND_FLOCK) s->flock_count++;
    if (kind == KIND_GROUND) s->vehicle_count++;
    if (kind == KIND_PLANNER) s->planner_count++;
    return 1;
}

static void remove_at(soak_t* s, int j)
{
    roster_t* r = &s->roster;
    for (int k = 0; k < s->worlds; ++k)
        expect_ok(s, k, shoal_agent_remove(s->world[k], r->id[k][j]), "agent_remove");
    s->stale[s->stale_count++ % SOAK_STALE_RING] = r->id[0][j];
    if (r->kind[j] == KIND_FLOCK) s->flock_count--;
    if (r->kind[j] == KIND_GROUND) s->vehicle_count--;
    if (r->kind[j] == KIND_PLANNER) s->planner_count--;
    r->count--;
    r->id[0][j] = r->id[0][r->count];
    r->id[1][j] = r->id[1][r->count];
    r->kind[j] = r->kind[r->count];
    s->removes++;
}

/* A random roster entry of `kind`, or -1. */
static int pick(soak_t* s, int kind)
{
    roster_t* r = &s->roster;
    if (r->count == 0) return -1;
    int start = below(&s->rng, r->count);
    for (int n = 0; n < r->count; ++n) {
        int j = (start + n) % r->count;
        if (r->kind[j] == kind) return j;
    }
    return -1;
}

static void add_obstacles(soak_t* s)
{
    for (int n = 0; n < 8; ++n) {
        float c[3] = {uniform(&s->rng, -100, 100), uniform(&s->rng, -100, 100), 0};
        float v[3] = {0, 0, 0};
        if (n >= 5) {
            v[0] = uniform(&s->rng, -2, 2);
            v[1] = uniform(&s->rng, -2, 2);
        }
        float radius = uniform(&s->rng, 2, 6);
        for (int k = 0; k < s->worlds; ++k)
            expect_ok(s, k, shoal_world_add_moving_obstacle(s->world[k], c, v, radius, NULL),
                      "add_moving_obstacle");
    }
}

/* The changes of step s->step, before it runs. */
static void script(soak_t* s)
{
    uint64_t t = s->step;
    if (t % 50 == 25) { /* churn the flock around its target size */
        int r = below(&s->rng, 6);
        for (int n = 0; n < r; ++n) {
            int j = pick(s, KIND_FLOCK);
            if (j >= 0) remove_at(s, j);
        }
        int a = s->flock_count < s->opt.agents ? r + 1 : (r > 0 ? r - 1 : 0);
        if (s->opt.agents == 0) a = 0;
        for (int n = 0; n < a; ++n) {
            shoal_agent_def_t d = flock_def(s);
            add_agent(s, &d, KIND_FLOCK);
        }
    }
    if (t % 200 == 100) { /* teleport a flock agent */
        int j = pick(s, KIND_FLOCK);
        if (j >= 0) {
            float p[3] = {uniform(&s->rng, -SOAK_HALF, SOAK_HALF), uniform(&s->rng, -SOAK_HALF, SOAK_HALF),
                          0};
            float v[3] = {uniform(&s->rng, -9, 9), uniform(&s->rng, -9, 9), 0}; /* clamped */
            float h = uniform(&s->rng, -3, 3);
            for (int k = 0; k < s->worlds; ++k)
                expect_ok(s, k, shoal_agent_teleport(s->world[k], s->roster.id[k][j], p, v, h, NULL),
                          "agent_teleport");
            if (s->roster.id[0][j].index1 < (uint32_t)s->slot_cap)
                s->prev_step[s->roster.id[0][j].index1] = UINT64_MAX;
            s->teleports++;
        }
    }
    if (t % 300 == 150) { /* a new planner goal: a point, or an agent to pursue or evade */
        int j = pick(s, KIND_PLANNER);
        int f = pick(s, KIND_FLOCK);
        if (j >= 0) {
            int mode = below(&s->rng, 3);
            float p[3] = {uniform(&s->rng, -100, 100), uniform(&s->rng, -100, 100), 0};
            shoal_plan_goal_t goal = mode == 0 || f < 0 ? SHOAL_PLAN_GOAL_SEEK
                                     : mode == 1        ? SHOAL_PLAN_GOAL_PURSUE
                                                        : SHOAL_PLAN_GOAL_EVADE;
            for (int k = 0; k < s->worlds; ++k) {
                shoal_agent_t target = goal == SHOAL_PLAN_GOAL_SEEK ? (shoal_agent_t){0} : s->roster.id[k][f];
                expect_ok(s, k,
                          shoal_agent_set_planner_goal(s->world[k], s->roster.id[k][j], goal, p, target),
                          "agent_set_planner_goal");
            }
            s->goal_changes++;
        }
    }
    if (t % 1000 == 500) { /* replace a vehicle and a planner; move the moving obstacles */
        int j = pick(s, KIND_GROUND);
        if (j >= 0) remove_at(s, j);
        if (s->vehicle_count < s->opt.vehicles) {
            shoal_agent_def_t d = ground_def(s, (int)(t / 1000));
            add_agent(s, &d, KIND_GROUND);
        }
        j = pick(s, KIND_PLANNER);
        if (j >= 0) remove_at(s, j);
        if (s->planner_count < s->opt.planners) {
            shoal_agent_def_t d = planner_def(s);
            add_agent(s, &d, KIND_PLANNER);
        }
        for (int id = 5; id < 8; ++id) {
            float c[3] = {uniform(&s->rng, -100, 100), uniform(&s->rng, -100, 100), 0};
            float v[3] = {uniform(&s->rng, -2, 2), uniform(&s->rng, -2, 2), 0};
            for (int k = 0; k < s->worlds; ++k) {
                expect_ok(s, k, shoal_world_remove_obstacle(s->world[k], id), "remove_obstacle");
                int32_t got = -1;
                expect_ok(s, k, shoal_world_add_moving_obstacle(s->world[k], c, v, 3.0f, &got),
                          "add_moving_obstacle");
                check(s, got == id, "obstacle id %d reused as %d", id, (int)got);
            }
        }
    }
    if (t % 3000 == 2999) { /* replace path 1 between frames */
        s->path_shape ^= 1;
        float xyz[3 * SOAK_PATH_POINTS];
        path_points(1, s->path_shape, xyz);
        for (int k = 0; k < s->worlds; ++k)
            expect_ok(s, k, shoal_world_set_path(s->world[k], 1, xyz, SOAK_PATH_POINTS, 4.0f), "set_path");
        s->path_sets++;
    }
    if (t % 500 == 250) { /* vehicles that completed their loop start it again */
        for (int j = 0; j < s->roster.count; ++j) {
            if (s->roster.kind[j] != KIND_GROUND) continue;
            shoal_ground_status_t g;
            if (!expect_ok(s, 0, shoal_agent_get_ground(s->world[0], s->roster.id[0][j], &g), "get_ground"))
                continue;
            if (!g.completed) continue;
            for (int k = 0; k < s->worlds; ++k)
                expect_ok(s, k, shoal_agent_set_path(s->world[k], s->roster.id[k][j], g.path), "set_path");
            s->path_sets++;
        }
    }
}

/* ---- the checks ------------------------------------------------------- */

static int grow_buffers(soak_t* s, int agents, int slots)
{
    if (agents > s->buf_cap) {
        int cap = agents * 2;
        free(s->ids);
        free(s->pos);
        free(s->vel);
        free(s->head);
        free(s->user);
        s->ids = malloc((size_t)cap * sizeof *s->ids);
        s->pos = malloc((size_t)cap * 3 * sizeof *s->pos);
        s->vel = malloc((size_t)cap * 3 * sizeof *s->vel);
        s->head = malloc((size_t)cap * sizeof *s->head);
        s->user = malloc((size_t)cap * sizeof *s->user);
        if (!s->ids || !s->pos || !s->vel || !s->head || !s->user) return 0;
        s->buf_cap = cap;
    }
    if (slots >= s->slot_cap) {
        int cap = slots * 2 + 64;
        float* h = realloc(s->prev_heading, (size_t)cap * sizeof *h);
        if (h) s->prev_heading = h;
        uint64_t* p = realloc(s->prev_step, (size_t)cap * sizeof *p);
        if (p) s->prev_step = p;
        uint64_t* m = realloc(s->seen_stamp, (size_t)cap * sizeof *m);
        if (m) s->seen_stamp = m;
        if (!h || !p || !m) return 0;
        for (int i = s->slot_cap; i < cap; ++i) {
            s->prev_step[i] = UINT64_MAX;
            s->seen_stamp[i] = UINT64_MAX;
        }
        s->slot_cap = cap;
    }
    return 1;
}

/* Handles: every roster handle valid, the stale ones (and forged and
 * foreign ones) rejected. */
static void check_handles(soak_t* s)
{
    shoal_world_t* w = s->world[0];
    for (int j = 0; j < s->roster.count; ++j)
        if (!check(s, shoal_agent_is_valid(w, s->roster.id[0][j]), "roster handle %u invalid",
                   s->roster.id[0][j].index1))
            break;
    int n = s->stale_count < SOAK_STALE_RING ? s->stale_count : SOAK_STALE_RING;
    for (int i = 0; i < n && i < 4; ++i) {
        shoal_agent_t id = s->stale[below(&s->rng, n)];
        shoal_agent_state_t st;
        check(s, !shoal_agent_is_valid(w, id), "stale handle %u/%u reported valid", id.index1, id.generation);
        check(s, shoal_agent_get_state(w, id, &st) == SHOAL_ERR_STALE_HANDLE,
              "get_state of stale handle %u/%u did not fail with STALE_HANDLE", id.index1, id.generation);
    }
}

/* State of every agent, read in bulk: finite, on the torus, within limits. */
static void check_agents(soak_t* s)
{
    shoal_world_t* w = s->world[0];
    int32_t count = shoal_world_agent_count(w);
    check(s, count == s->roster.count, "agent count %d, expected %d", (int)count, s->roster.count);
    check(s, count == s->flock_count + s->vehicle_count + s->planner_count,
          "agent count %d != flock %d + vehicles %d + planners %d", (int)count, s->flock_count,
          s->vehicle_count, s->planner_count);
    uint32_t max_index = 0;
    for (int j = 0; j < s->roster.count; ++j)
        if (s->roster.id[0][j].index1 > max_index) max_index = s->roster.id[0][j].index1;
    if (!grow_buffers(s, count, (int)max_index + 1)) {
        check(s, 0, "out of memory for the check buffers");
        return;
    }
    shoal_agent_batch_t b = {.ids = s->ids,
                             .positions = s->pos,
                             .velocities = s->vel,
                             .headings = s->head,
                             .user_values = s->user};
    int32_t got = -1;
    if (!expect_ok(s, 0, shoal_world_read_agents(w, &b, s->buf_cap, &got), "read_agents")) return;
    check(s, got == count, "read_agents returned %d of %d agents", (int)got, (int)count);
    for (int32_t i = 0; i < got; ++i) {
        uint32_t slot = s->ids[i].index1;
        const float* p = s->pos + 3 * i;
        const float* v = s->vel + 3 * i;
        float h = s->head[i];
        int finite = isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]) && isfinite(v[0]) && isfinite(v[1]) &&
                     isfinite(v[2]) && isfinite(h);
        if (!check(s, finite, "agent %u: state not finite", slot)) continue;
        check(s, slot < (uint32_t)s->slot_cap && s->seen_stamp[slot] != s->step,
              "agent %u listed twice (or out of range)", slot);
        if (slot >= (uint32_t)s->slot_cap) continue;
        s->seen_stamp[slot] = s->step;
        check(s, p[0] >= -SOAK_HALF && p[0] < SOAK_HALF && p[1] >= -SOAK_HALF && p[1] < SOAK_HALF,
              "agent %u at (%g, %g), off the torus", slot, p[0], p[1]);
        float speed = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        int kind = (int)s->user[i];
        int has_prev = s->prev_step[slot] == s->step - 1;
        float turn = has_prev ? fabsf(wrap_angle(h - s->prev_heading[slot])) / SOAK_DT : 0.0f;
        if (kind == KIND_FLOCK) {
            check(s, speed <= SOAK_FLOCK_SPEED * (1.0f + SOAK_SPEED_TOL),
                  "flock agent %u at %g m/s, over its %g", slot, speed, SOAK_FLOCK_SPEED);
            check(s, turn <= SOAK_FLOCK_TURN * (1.0f + SOAK_TURN_TOL) + SOAK_TURN_ABS,
                  "flock agent %u turned at %g rad/s, over its %g", slot, turn, SOAK_FLOCK_TURN);
        } else if (kind == KIND_PLANNER) {
            if (has_prev)
                check(s, fabsf(speed - SOAK_PLANNER_SPEED) <= SOAK_PLANNER_SPEED * SOAK_PLANNER_TOL,
                      "planner agent %u at %g m/s, not its %g", slot, speed, SOAK_PLANNER_SPEED);
            check(s, turn <= SOAK_PLANNER_RATE * (1.0f + SOAK_TURN_TOL) + SOAK_TURN_ABS,
                  "planner agent %u turned at %g rad/s, over the table's %g", slot, turn, SOAK_PLANNER_RATE);
        } else if (kind != KIND_GROUND) {
            check(s, 0, "agent %u has user value %d, not a kind", slot, kind);
        }
        s->prev_heading[slot] = h;
        s->prev_step[slot] = s->step;
    }
    /* Ground vehicles: speed and yaw rate from their status. */
    for (int j = 0; j < s->roster.count; ++j) {
        if (s->roster.kind[j] != KIND_GROUND) continue;
        shoal_agent_t id = s->roster.id[0][j];
        shoal_ground_status_t g;
        shoal_agent_def_t d;
        if (!expect_ok(s, 0, shoal_agent_get_ground(w, id, &g), "get_ground")) continue;
        if (!expect_ok(s, 0, shoal_agent_get_def(w, id, &d), "get_def")) continue;
        const shoal_ground_vehicle_t* gv = &d.ground.vehicle;
        float slack = 1.0f + SOAK_GROUND_TOL;
        check(s,
              g.speed <= gv->max_speed * slack + 0.01f && g.speed >= -gv->max_reverse_speed * slack - 0.01f,
              "vehicle %u at %g m/s, outside [-%g, %g]", id.index1, g.speed, gv->max_reverse_speed,
              gv->max_speed);
        /* The model turns at the speed before this step's change of speed,
         * which is at most the strongest force's (plus gravity's) dt away. */
        float force = fmaxf(gv->engine_force, fmaxf(gv->brake_force, gv->reverse_force));
        float dv = (force / gv->mass + 9.81f) * SOAK_DT;
        float ground_speed = fabsf(g.speed) + fabsf(g.lateral_speed) + dv;
        /* an obstacle contact cuts the speed after the turn: only the
         * governor bounds the speed the turn was made at */
        if (g.contact) ground_speed = fmaxf(ground_speed, gv->max_speed);
        float yaw_cap = ground_speed * tanf(gv->max_steer) / gv->wheelbase;
        if (gv->max_yaw_rate > 0.0f && gv->max_yaw_rate < yaw_cap) yaw_cap = gv->max_yaw_rate;
        check(s, fabsf(g.yaw_rate) <= yaw_cap * slack + SOAK_TURN_ABS,
              "vehicle %u yaws at %g rad/s, over its %g (speed %g, contact %d, stuck %d)", id.index1,
              g.yaw_rate, yaw_cap, g.speed, g.contact, g.stuck);
        check(s, isfinite(g.cte) && isfinite(g.path_s) && isfinite(g.distance),
              "vehicle %u: status not finite", id.index1);
    }
}

/* Calls that must fail with the documented status and change nothing. */
static void probe_misuse(soak_t* s)
{
    shoal_world_t* w = s->world[0];
    uint64_t before = shoal_world_state_hash(w);
    uint64_t steps = shoal_world_step_count(w);
    float nan3[3] = {NAN, 0, 0};
    check(s, shoal_world_step(w, NAN) == SHOAL_ERR_INVALID_ARGUMENT, "step(NaN) accepted");
    check(s, shoal_world_step(w, -SOAK_DT) == SHOAL_ERR_INVALID_ARGUMENT, "step(-dt) accepted");
    if (s->roster.count > 0) {
        int j = below(&s->rng, s->roster.count);
        shoal_agent_t id = s->roster.id[0][j];
        check(s, shoal_agent_set_target(w, id, nan3) == SHOAL_ERR_INVALID_ARGUMENT,
              "set_target(NaN) accepted");
        shoal_agent_t forged = id;
        forged.generation++;
        check(s, shoal_agent_set_target(w, forged, s->pos) == SHOAL_ERR_STALE_HANDLE,
              "a forged generation was accepted");
        if (s->worlds > 1)
            check(s, shoal_agent_remove(w, s->roster.id[1][j]) == SHOAL_ERR_STALE_HANDLE,
                  "a handle of the shadow world was accepted");
    }
    check(s, shoal_agent_remove(w, (shoal_agent_t){0}) == SHOAL_ERR_STALE_HANDLE,
          "the null handle was accepted");
    check(s, shoal_world_state_hash(w) == before && shoal_world_step_count(w) == steps,
          "a rejected call changed the world");
    s->probes++;
}

static void sample_memory(soak_t* s, double elapsed, double warmup)
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
    double bound = s->rss_warm_mib + fmax(SOAK_RSS_SLACK_MIB, SOAK_RSS_SLACK_REL * s->rss_warm_mib);
    check(s, rss <= bound, "resident memory %.1f MiB over the bound %.1f MiB (warm %.1f)", rss, bound,
          s->rss_warm_mib);
}

/* ---- the run ---------------------------------------------------------- */

static shoal_world_t* make_world(const soak_options_t* o, int threads)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.seed = o->seed;
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    def.wrap = 1;
    def.bounds_min[0] = def.bounds_min[1] = -SOAK_HALF;
    def.bounds_max[0] = def.bounds_max[1] = SOAK_HALF;
    def.initial_capacity = o->agents + o->vehicles + o->planners + 64;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    if (shoal_world_create(&def, &w, &err) != SHOAL_OK) {
        cli_error("soak: world_create: %s", err.message);
        return NULL;
    }
    return w;
}

static int setup(soak_t* s)
{
    s->worlds = s->opt.shadow_threads > 0 ? 2 : 1;
    for (int k = 0; k < s->worlds; ++k) {
        s->world[k] = make_world(&s->opt, k == 0 ? s->opt.threads : s->opt.shadow_threads);
        if (s->world[k] == NULL) return 0;
        float xyz[3 * SOAK_PATH_POINTS];
        for (int p = 0; p < 2; ++p) {
            path_points(p, 0, xyz);
            expect_ok(s, k, shoal_world_add_path(s->world[k], xyz, SOAK_PATH_POINTS, 4.0f, NULL), "add_path");
        }
    }
    s->rng = s->opt.seed ^ 0x5eed5eedull;
    add_obstacles(s);
    for (int i = 0; i < s->opt.agents; ++i) {
        shoal_agent_def_t d = flock_def(s);
        add_agent(s, &d, KIND_FLOCK);
    }
    for (int i = 0; i < s->opt.vehicles; ++i) {
        shoal_agent_def_t d = ground_def(s, i);
        add_agent(s, &d, KIND_GROUND);
    }
    for (int i = 0; i < s->opt.planners; ++i) {
        shoal_agent_def_t d = planner_def(s);
        add_agent(s, &d, KIND_PLANNER);
    }
    return s->violations == 0;
}

static void report(const soak_t* s, double seconds)
{
    double rate = seconds > 0 ? (double)s->agent_steps / seconds : 0.0;
    double peak = soak_peak_rss_mib();
    if (s->opt.json) {
        printf("{\"seed\": %llu, \"threads\": %d, \"shadow_threads\": %d, \"steps\": %llu, "
               "\"seconds\": %.1f, \"agents_final\": %d, \"agent_steps\": %llu, "
               "\"agent_steps_per_second\": %.0f, \"checks\": %llu, \"violations\": %llu, "
               "\"hash_compares\": %llu, \"misuse_probes\": %llu, \"adds\": %llu, \"removes\": %llu, "
               "\"teleports\": %llu, \"path_sets\": %llu, \"goal_changes\": %llu, "
               "\"rss_warm_mib\": %.1f, \"rss_peak_after_warmup_mib\": %.1f, \"rss_final_mib\": %.1f, "
               "\"peak_rss_mib\": %.1f, \"first_violation\": \"",
               (unsigned long long)s->opt.seed, s->opt.threads, s->opt.shadow_threads,
               (unsigned long long)s->step, seconds, s->roster.count, (unsigned long long)s->agent_steps,
               rate, (unsigned long long)s->checks, (unsigned long long)s->violations,
               (unsigned long long)s->hash_compares, (unsigned long long)s->probes,
               (unsigned long long)s->adds, (unsigned long long)s->removes, (unsigned long long)s->teleports,
               (unsigned long long)s->path_sets, (unsigned long long)s->goal_changes, s->rss_warm_mib,
               s->rss_peak_mib, s->rss_last_mib, peak);
        for (const char* c = s->first_violation; *c; ++c)
            if (*c == '"' || *c == '\\')
                printf("\\%c", *c);
            else if ((unsigned char)*c >= 0x20)
                putchar(*c);
        printf("\"}\n");
        return;
    }
    printf("soak: seed %llu, %d thread(s), shadow world on %d\n", (unsigned long long)s->opt.seed,
           s->opt.threads, s->opt.shadow_threads);
    printf("  steps             %llu (%.1f s of wall time, %.1f s simulated)\n", (unsigned long long)s->step,
           seconds, (double)s->step * SOAK_DT);
    printf("  agents            %d at the end (flock %d, vehicles %d, planners %d)\n", s->roster.count,
           s->flock_count, s->vehicle_count, s->planner_count);
    printf("  agent-steps       %llu (%.0f per second)\n", (unsigned long long)s->agent_steps, rate);
    printf("  invariant checks  %llu\n", (unsigned long long)s->checks);
    printf("  hash comparisons  %llu (shadow world)\n", (unsigned long long)s->hash_compares);
    printf("  misuse probes     %llu\n", (unsigned long long)s->probes);
    printf("  changes           %llu adds, %llu removes, %llu teleports, %llu path sets, "
           "%llu goal changes\n",
           (unsigned long long)s->adds, (unsigned long long)s->removes, (unsigned long long)s->teleports,
           (unsigned long long)s->path_sets, (unsigned long long)s->goal_changes);
    printf("  resident memory   %.1f MiB after warm-up, %.1f MiB peak after, %.1f MiB at the end; "
           "peak RSS %.1f MiB\n",
           s->rss_warm_mib, s->rss_peak_mib, s->rss_last_mib, peak);
    printf("  violations        %llu%s%s\n", (unsigned long long)s->violations,
           s->violations ? ": first: " : "", s->first_violation);
}

static void release(soak_t* s)
{
    for (int k = 0; k < 2; ++k) {
        shoal_world_destroy(s->world[k]);
        free(s->roster.id[k]);
    }
    free(s->roster.kind);
    free(s->prev_heading);
    free(s->prev_step);
    free(s->seen_stamp);
    free(s->ids);
    free(s->pos);
    free(s->vel);
    free(s->head);
    free(s->user);
}

int cmd_soak(int argc, char** argv)
{
    soak_t* s = calloc(1, sizeof *s);
    if (s == NULL) {
        cli_error("soak: out of memory");
        return CLI_EXIT_FAILURE;
    }
    int code = parse_options(argc, argv, &s->opt);
    if (code >= 0) {
        free(s);
        return code;
    }
    if (s->opt.crowd) {
        soak_crowd_options_t c = {.minutes = s->opt.minutes,
                                  .steps = s->opt.steps,
                                  .threads = s->opt.threads,
                                  .shadow_threads = s->opt.shadow_threads,
                                  .agents = s->opt.agents,
                                  .seed = s->opt.seed,
                                  .json = s->opt.json,
                                  .progress = s->opt.progress};
        free(s);
        return soak_crowd_run(&c);
    }
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
        if (s->violations >= 1000) break; /* enough to go on */
        script(s);
        for (int k = 0; k < s->worlds; ++k)
            expect_ok(s, k, shoal_world_step(s->world[k], SOAK_DT), "world_step");
        s->step++;
        s->agent_steps += (uint64_t)shoal_world_agent_count(s->world[0]);
        check_agents(s);
        if (s->step % 10 == 0) check_handles(s);
        if (s->step % 100 == 50) probe_misuse(s);
        if (s->worlds > 1 && s->step % 50 == 0) {
            uint64_t a = shoal_world_state_hash(s->world[0]);
            uint64_t b = shoal_world_state_hash(s->world[1]);
            check(s, a == b, "state hash %016llx differs from the shadow world's %016llx",
                  (unsigned long long)a, (unsigned long long)b);
            s->hash_compares++;
        }
        if (s->step % 256 == 0) sample_memory(s, elapsed, warmup);
        if (elapsed >= next_progress) {
            printf("soak: %.0f s, step %llu, %d agents, %llu checks, %llu violations, RSS %.1f MiB\n",
                   elapsed, (unsigned long long)s->step, s->roster.count, (unsigned long long)s->checks,
                   (unsigned long long)s->violations, s->rss_last_mib);
            fflush(stdout);
            next_progress += s->opt.progress;
        }
    }
    if (!s->warm_done) s->rss_warm_mib = s->rss_peak_mib = s->rss_last_mib = soak_rss_mib();
    report(s, cli_now_seconds() - start);
    code = s->violations ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
    release(s);
    free(s);
    return code;
}
