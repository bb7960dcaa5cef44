/* `shoal bench navmesh`: pedestrians with goals of their own on a
 * navigation mesh (shoal/navmesh.h), and the same scene stepped by
 * DetourCrowd (dtCrowd) on the same mesh, in the same run.
 *
 * The scene (seeded): a square hall of S x S m (default: 4 m^2 an agent,
 * at least 20 m a side) with its outer walls and, every 20 m across it,
 * an inner wall from side to side with a 2 m door every 20 m, the doors of
 * one wall halfway between those of the next. Each of N pedestrians (the
 * crowd preset "pedestrian") starts at a random point at least 0.5 m from
 * every wall and from every other start, and has a goal of its own, a
 * random point at least 0.5 m from every wall.
 *
 * shoal: the world's mesh is baked once (shoal_world_navmesh_update,
 * timed alone) with a cell of --cell m and the pedestrian radius; the
 * agents have the NAVMESH behavior; dt 0.05 s, --steps steps or until
 * every agent has arrived (shoal_world_navmesh_stats). Only the steps are
 * timed; the figures are read between steps.
 *
 * DetourCrowd: the same mesh (the world's, not baked again), the same
 * starts and goals, the pedestrian's radius, its preferred speed as the
 * max speed, max acceleration 8 m/s^2 (nmd_crowd_run in
 * src/modules/navmesh/navmesh_detour.cpp says the rest), dtCrowd::update
 * on one thread (DetourCrowd has no threads) for as many steps at most.
 * Only the updates are timed. An agent has arrived within 0.3 m of its
 * target (the mesh's point nearest its goal); overlapping: agents closer
 * than 0.99 of the radii sum to another, as shoal_world_crowd_stats counts
 * them. */
#define _DEFAULT_SOURCE
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/world.h"
#include "modules/navmesh/navmesh.h"
#include "shoal/navmesh.h"
#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

#define HALL_DT 0.05f
#define HALL_ROW 20.0f     /* m between inner walls, and between their doors */
#define HALL_DOOR 2.0f     /* m */
#define HALL_CLEAR 0.5f    /* m: starts and goals keep this far from walls, starts from each other */
#define HALL_DENSITY 4.0f  /* m^2 an agent by default */
#define HALL_ACCEL 8.0f    /* m/s^2, DetourCrowd's max acceleration */
#define HALL_ARRIVE 0.3f   /* m, DetourCrowd's arrival (shoal's navmesh default) */
#define HALL_MIN_SIZE 20.0 /* m */

typedef struct navmesh_opts {
    int64_t agents;
    int64_t steps;
    int64_t threads;
    int64_t seed;
    int64_t replans;
    double size;
    double cell;
    int json;
} navmesh_opts_t;

#define NAVMESH_DEFAULTS                                                                                     \
    {                                                                                                        \
        10000, 200, 2, 1, 0, 0.0, 0.1, 0                                                                     \
    }

static uint32_t draw(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}
static float unif(uint64_t* s, float lo, float hi) { return lo + (hi - lo) * (float)draw(s) / 2147483648.0f; }

/* The hall's walls: segments x0, y0, x1, y1. */
typedef struct hall_t {
    float size;
    float (*seg)[4];
    int32_t nseg, cap;
    int32_t inner; /* inner walls, at y = 20, 40, ... */
} hall_t;

static int hall_seg(hall_t* h, float ax, float ay, float bx, float by)
{
    if (bx - ax < 1e-3f && by - ay < 1e-3f) return 1;
    if (h->nseg == h->cap) {
        int32_t cap = h->cap ? 2 * h->cap : 64;
        void* grown = realloc(h->seg, (size_t)cap * sizeof *h->seg);
        if (!grown) return 0;
        h->seg = grown;
        h->cap = cap;
    }
    float* s = h->seg[h->nseg++];
    s[0] = ax;
    s[1] = ay;
    s[2] = bx;
    s[3] = by;
    return 1;
}

static int hall_build(hall_t* h, float S)
{
    h->size = S;
    if (!hall_seg(h, 0, 0, S, 0) || !hall_seg(h, S, 0, S, S) || !hall_seg(h, 0, S, S, S) ||
        !hall_seg(h, 0, 0, 0, S))
        return 0;
    h->inner = (int32_t)ceilf(S / HALL_ROW) - 1;
    for (int32_t k = 1; k <= h->inner; ++k) {
        const float y = (float)k * HALL_ROW;
        float x = 0.0f;
        /* doors centered at 10, 30, 50, ... m, or 20, 40, ... on every other wall */
        for (float c = (k % 2) ? 0.5f * HALL_ROW : HALL_ROW; c < S; c += HALL_ROW) {
            float a = c - 0.5f * HALL_DOOR, b = c + 0.5f * HALL_DOOR;
            if (a > x && !hall_seg(h, x, y, a, y)) return 0;
            x = b;
        }
        if (x < S && !hall_seg(h, x, y, S, y)) return 0;
    }
    return 1;
}

/* At least HALL_CLEAR from the outer walls and every inner wall's line. */
static int hall_clear(const hall_t* h, float x, float y)
{
    if (x < HALL_CLEAR || y < HALL_CLEAR || x > h->size - HALL_CLEAR || y > h->size - HALL_CLEAR) return 0;
    float r = fmodf(y, HALL_ROW);
    int32_t k = (int32_t)(y / HALL_ROW);
    if (k >= 1 && k <= h->inner && r < HALL_CLEAR) return 0;
    if (k + 1 <= h->inner && HALL_ROW - r < HALL_CLEAR) return 0;
    return 1;
}

/* Starts at least HALL_CLEAR apart: a grid of cells HALL_CLEAR wide. */
typedef struct spacing_t {
    int32_t n, *head, *next;
    const float (*xy)[2];
} spacing_t;

static int32_t spacing_cell(const spacing_t* sp, float v)
{
    int32_t i = (int32_t)(v / HALL_CLEAR);
    return i < 0 ? 0 : i >= sp->n ? sp->n - 1 : i;
}

static int spacing_free(const spacing_t* sp, float x, float y)
{
    int32_t ci = spacing_cell(sp, x), cj = spacing_cell(sp, y);
    for (int32_t j = cj - 1; j <= cj + 1; ++j)
        for (int32_t i = ci - 1; i <= ci + 1; ++i) {
            if (i < 0 || j < 0 || i >= sp->n || j >= sp->n) continue;
            for (int32_t k = sp->head[(int64_t)j * sp->n + i]; k >= 0; k = sp->next[k])
                if (hypotf(sp->xy[k][0] - x, sp->xy[k][1] - y) < HALL_CLEAR) return 0;
        }
    return 1;
}

static void add_number(cJSON* o, const char* key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

typedef struct side_t {
    int32_t steps;
    double seconds;
    double agent_steps_per_s;
    int32_t arrived;
    int32_t overlapping, peak_overlapping;
    float closest_pair, min_closest_pair;
    double replans_per_step; /* shoal only */
    int32_t placed;          /* DetourCrowd only */
} side_t;

static void side_json(cJSON* o, const side_t* s, int64_t n)
{
    cJSON_AddNumberToObject(o, "steps", s->steps);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    add_number(o, "agent_steps_per_s", s->agent_steps_per_s);
    cJSON_AddNumberToObject(o, "arrived", (double)s->arrived / (double)n);
    cJSON_AddNumberToObject(o, "arrived_agents", s->arrived);
    cJSON_AddNumberToObject(o, "overlapping", s->overlapping);
    add_number(o, "closest_pair", s->closest_pair);
    cJSON_AddNumberToObject(o, "peak_overlapping", s->peak_overlapping);
    add_number(o, "min_closest_pair", s->min_closest_pair);
}

static void side_text(const char* name, const side_t* s, int64_t n)
{
    printf("%-12s %10.0f agent-steps/s  %d steps in %.3f s  arrived %.3f (%d)  overlapping %d (peak %d)  "
           "closest pair %.3f (min %.3f)\n",
           name, s->agent_steps_per_s, (int)s->steps, s->seconds, (double)s->arrived / (double)n,
           (int)s->arrived, (int)s->overlapping, (int)s->peak_overlapping, (double)s->closest_pair,
           (double)s->min_closest_pair);
}

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        cli_error(__VA_ARGS__);                                                                              \
        status = CLI_EXIT_FAILURE;                                                                           \
        goto done;                                                                                           \
    } while (0)

static int bench_navmesh_run(const navmesh_opts_t* o)
{
    const char* cmd = "bench navmesh";
    const int64_t N = o->agents;
    const float S =
        o->size > 0.0 ? (float)o->size : fmaxf((float)HALL_MIN_SIZE, sqrtf(HALL_DENSITY * (float)N));
    hall_t hall;
    memset(&hall, 0, sizeof hall);
    spacing_t sp;
    memset(&sp, 0, sizeof sp);
    float(*start)[2] = NULL;
    float(*goal)[2] = NULL;
    shoal_world_t* w = NULL;
    int status = CLI_EXIT_OK;
    uint64_t s = (uint64_t)o->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    side_t sh, dc;
    memset(&sh, 0, sizeof sh);
    memset(&dc, 0, sizeof dc);
    double load[3] = {NAN, NAN, NAN};

    if (!hall_build(&hall, S)) FAIL("%s: out of memory for the hall", cmd);
    start = malloc((size_t)N * sizeof *start);
    goal = malloc((size_t)N * sizeof *goal);
    sp.n = (int32_t)ceilf(S / HALL_CLEAR) + 1;
    sp.head = malloc((size_t)sp.n * (size_t)sp.n * sizeof *sp.head);
    sp.next = malloc((size_t)N * sizeof *sp.next);
    sp.xy = (const float(*)[2])start;
    if (!start || !goal || !sp.head || !sp.next) FAIL("%s: out of memory for %lld agents", cmd, (long long)N);
    for (int64_t b = 0; b < (int64_t)sp.n * sp.n; ++b) sp.head[b] = -1;
    for (int64_t i = 0; i < N; ++i) {
        int placed = 0;
        for (int attempt = 0; attempt < 100000 && !placed; ++attempt) {
            float x = unif(&s, 0.0f, S), y = unif(&s, 0.0f, S);
            if (!hall_clear(&hall, x, y) || !spacing_free(&sp, x, y)) continue;
            start[i][0] = x;
            start[i][1] = y;
            int64_t b = (int64_t)spacing_cell(&sp, y) * sp.n + spacing_cell(&sp, x);
            sp.next[i] = sp.head[b];
            sp.head[b] = (int32_t)i;
            placed = 1;
        }
        if (!placed)
            FAIL("%s: found no start for agent %lld of %lld in 100000 draws: the hall is too full (--size)",
                 cmd, (long long)i + 1, (long long)N);
        do {
            goal[i][0] = unif(&s, 0.0f, S);
            goal[i][1] = unif(&s, 0.0f, S);
        } while (!hall_clear(&hall, goal[i][0], goal[i][1]));
    }

    /* the world */
    shoal_world_def_t wd = shoal_world_default_def();
    wd.dimensions = 2;
    wd.thread_count = (int32_t)o->threads;
    wd.initial_capacity = (int32_t)N;
    wd.seed = (uint64_t)o->seed;
    shoal_error_t err;
    if (shoal_world_create(&wd, &w, &err) != SHOAL_OK) {
        w = NULL;
        FAIL("%s: %s", cmd, err.message);
    }
    for (int32_t k = 0; k < hall.nseg; ++k)
        if (shoal_world_add_wall(w, hall.seg[k], 2, 0, NULL) != SHOAL_OK)
            FAIL("%s: %s", cmd, shoal_world_last_error(w));
    shoal_agent_def_t def = shoal_agent_default_def();
    if (shoal_crowd_preset("pedestrian", &def.crowd, &def.vehicle, NULL) != SHOAL_OK)
        FAIL("%s: no crowd preset \"pedestrian\"", cmd);
    def.weights[SHOAL_BEHAVIOR_NAVMESH] = 1.0f;
    shoal_navmesh_params_t np;
    shoal_world_get_navmesh(w, &np);
    np.cell = (float)o->cell;
    np.agent_radius = def.vehicle.radius;
    np.bounds[0] = 0.0f;
    np.bounds[1] = 0.0f;
    np.bounds[2] = S;
    np.bounds[3] = S;
    if (o->replans > 0) np.replans_per_step = (int32_t)o->replans;
    if (shoal_world_set_navmesh(w, &np) != SHOAL_OK) FAIL("%s: %s", cmd, shoal_world_last_error(w));
    double t0 = cli_now_seconds();
    if (shoal_world_navmesh_update(w) != SHOAL_OK) FAIL("%s: %s", cmd, shoal_world_last_error(w));
    const double bake_seconds = cli_now_seconds() - t0;
    shoal_navmesh_stats_t ns;
    shoal_world_navmesh_stats(w, &ns);
    const int32_t polygons = ns.polygons;
    for (int64_t i = 0; i < N; ++i) {
        def.position[0] = start[i][0];
        def.position[1] = start[i][1];
        def.navmesh.goal[0] = goal[i][0];
        def.navmesh.goal[1] = goal[i][1];
        if (shoal_agent_add(w, &def, NULL) != SHOAL_OK) FAIL("%s: %s", cmd, shoal_world_last_error(w));
    }

    /* shoal's steps */
    int64_t replans = 0;
    sh.min_closest_pair = INFINITY;
    shoal_crowd_stats_t cs;
    while (sh.steps < o->steps) {
        double a = cli_now_seconds();
        shoal_status_t st = shoal_world_step(w, HALL_DT);
        sh.seconds += cli_now_seconds() - a;
        if (st != SHOAL_OK) FAIL("%s: step failed: %s", cmd, shoal_world_last_error(w));
        sh.steps++;
        shoal_world_navmesh_stats(w, &ns);
        shoal_world_crowd_stats(w, &cs);
        replans += ns.replans;
        sh.arrived = ns.arrived;
        sh.overlapping = cs.overlapping;
        sh.closest_pair = cs.closest_pair;
        if (cs.overlapping > sh.peak_overlapping) sh.peak_overlapping = cs.overlapping;
        if (cs.closest_pair < sh.min_closest_pair) sh.min_closest_pair = cs.closest_pair;
        if (ns.arrived == N) break;
    }
    sh.agent_steps_per_s = (double)N * (double)sh.steps / sh.seconds;
    sh.replans_per_step = sh.steps ? (double)replans / (double)sh.steps : 0.0;

    /* DetourCrowd on the world's mesh */
    const int detour = N <= NMD_CROWD_MAX_AGENTS;
    if (detour) {
        const nmd_mesh_t* mesh = navmesh_of(w)->mesh;
        nmd_crowd_run_t r;
        char msg[256];
        if (nmd_crowd_run(mesh, (const float(*)[2])start, (const float(*)[2])goal, (int32_t)N,
                          def.vehicle.radius, def.crowd.preferred_speed, HALL_ACCEL, HALL_ARRIVE, HALL_DT,
                          (int32_t)o->steps, &r, msg, sizeof msg))
            FAIL("%s: %s", cmd, msg);
        dc.steps = r.steps;
        dc.seconds = r.seconds;
        dc.agent_steps_per_s = (double)N * (double)r.steps / r.seconds;
        dc.arrived = r.arrived;
        dc.overlapping = r.overlapping;
        dc.peak_overlapping = r.peak_overlapping;
        dc.closest_pair = r.closest_pair;
        dc.min_closest_pair = r.min_closest_pair;
        dc.placed = r.placed;
    }
    const double ratio = detour ? sh.agent_steps_per_s / dc.agent_steps_per_s : NAN;
    if (getloadavg(load, 3) != 3) load[0] = load[1] = load[2] = NAN;

    if (o->json) {
        cJSON* root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "bench", "navmesh");
        cJSON_AddNumberToObject(root, "seed", (double)o->seed);
        cJSON_AddNumberToObject(root, "size", S);
        cJSON_AddNumberToObject(root, "walls", hall.nseg);
        cJSON_AddNumberToObject(root, "agents", (double)N);
        cJSON_AddNumberToObject(root, "threads", shoal_world_thread_count(w));
        cJSON_AddNumberToObject(root, "dt", HALL_DT);
        cJSON_AddNumberToObject(root, "steps_limit", (double)o->steps);
        cJSON_AddNumberToObject(root, "cell", np.cell);
        cJSON_AddNumberToObject(root, "polygons", polygons);
        cJSON_AddNumberToObject(root, "bake_seconds", bake_seconds);
        cJSON_AddNumberToObject(root, "radius", def.vehicle.radius);
        cJSON_AddNumberToObject(root, "preferred_speed", def.crowd.preferred_speed);
        cJSON* a = cJSON_AddObjectToObject(root, "shoal");
        side_json(a, &sh, N);
        cJSON_AddNumberToObject(a, "replans_per_step", sh.replans_per_step);
        cJSON_AddNumberToObject(a, "replans_per_step_limit", np.replans_per_step);
        if (detour) {
            cJSON* b = cJSON_AddObjectToObject(root, "detour_crowd");
            side_json(b, &dc, N);
            cJSON_AddNumberToObject(b, "placed", dc.placed);
            cJSON_AddNumberToObject(b, "threads", 1);
        } else {
            cJSON_AddNullToObject(root, "detour_crowd");
        }
        add_number(root, "speed_ratio", ratio);
        cJSON* l = cJSON_AddArrayToObject(root, "load_average");
        for (int k = 0; k < 3; ++k)
            cJSON_AddItemToArray(l, isfinite(load[k]) ? cJSON_CreateNumber(load[k]) : cJSON_CreateNull());
        char* text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        printf("navmesh (seed %lld): hall %.1f x %.1f m, %d wall segments; %lld pedestrians with goals of "
               "their own, dt %g s, at most %lld steps\n",
               (long long)o->seed, (double)S, (double)S, (int)hall.nseg, (long long)N, (double)HALL_DT,
               (long long)o->steps);
        printf("mesh         %d polygons, cell %g m, baked in %.3f s\n", (int)polygons, (double)np.cell,
               bake_seconds);
        side_text("shoal", &sh, N);
        printf("             %d threads, %.1f replans a step (at most %d)\n",
               (int)shoal_world_thread_count(w), sh.replans_per_step, (int)np.replans_per_step);
        if (detour) {
            side_text("DetourCrowd", &dc, N);
            printf("             1 thread, %d agents placed\n", (int)dc.placed);
            printf("ratio        %.2fx (shoal's agent-steps/s over DetourCrowd's)\n", ratio);
        } else {
            printf("DetourCrowd  not run: more than %d agents\n", NMD_CROWD_MAX_AGENTS);
        }
        printf("load average %.2f %.2f %.2f (at the end)\n", load[0], load[1], load[2]);
    }

done:
    if (w) shoal_world_destroy(w);
    free(hall.seg);
    free(sp.head);
    free(sp.next);
    free(start);
    free(goal);
    return status;
}

static const cli_option_t navmesh_options[] = {
    CLI_INT_ROW("--agents", "N", navmesh_opts_t, agents, 1, 1000000,
                "pedestrians (default 10000); DetourCrowd runs up to 16383"),
    CLI_INT_ROW("--steps", "K", navmesh_opts_t, steps, 1, 1000000,
                "steps at most; a run ends sooner when every agent has arrived (default 200)"),
    CLI_INT_ROW("--threads", "T", navmesh_opts_t, threads, 1, 1024, "shoal's threads (default 2)"),
    CLI_INT_ROW("--seed", "S", navmesh_opts_t, seed, 0, 9007199254740992.0,
                "the starts', goals' and world's seed (default 1)"),
    CLI_INT_ROW("--replans", "R", navmesh_opts_t, replans, 1, 1000000,
                "shoal's replans_per_step (default: the library's, 64)"),
    {.name = "--size",
     .metavar = "M",
     .kind = CLI_NUMBER,
     CLI_AT(navmesh_opts_t, size),
     .min = HALL_MIN_SIZE,
     .max = 2000.0,
     .help = "the hall's side, m (default: 4 m^2 an agent, at least 20)"},
    {.name = "--cell",
     .metavar = "M",
     .kind = CLI_NUMBER,
     CLI_AT(navmesh_opts_t, cell),
     .min = 0.02,
     .max = 10.0,
     .help = "the mesh's cell, m (default 0.1)"},
    CLI_FLAG_ROW("--json", navmesh_opts_t, json, "one JSON object on stdout: see below"),
};

static const cli_spec_t navmesh_spec = {
    .command = "bench navmesh",
    .usage = "[options]",
    .about = "Pedestrians (the crowd preset \"pedestrian\") each with a random goal of its own in a\n"
             "hall with inner walls, on the world's navigation mesh, dt 0.05 s, for --steps steps or\n"
             "until all have arrived; then the same agents on the same mesh stepped by\n"
             "DetourCrowd (one thread). Only the steps are timed (benchmark/README.md, Navigation\n"
             "meshes). Needs a shoal built with Recast/Detour.\n",
    .options = navmesh_options,
    .option_count = CLI_COUNT(navmesh_options),
    .details = "--json prints: bench (\"navmesh\"), seed, size (m), walls (segments), agents,\n"
               "threads, dt, steps_limit, cell, polygons, bake_seconds, radius, preferred_speed,\n"
               "shoal and detour_crowd (null above 16383 agents) {steps, seconds, agent_steps_per_s,\n"
               "arrived (fraction), arrived_agents, overlapping and closest_pair after the last\n"
               "step, peak_overlapping and min_closest_pair over the steps}, with shoal's\n"
               "replans_per_step (mean) and replans_per_step_limit and DetourCrowd's placed and\n"
               "threads; speed_ratio (shoal's agent_steps_per_s over DetourCrowd's), load_average\n"
               "(1, 5 and 15 min, at the end).\n",
};

static int bench_navmesh(int argc, char** argv)
{
    navmesh_opts_t o = NAVMESH_DEFAULTS;
    int stop = cli_parse(&navmesh_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    if (!shoal_navmesh_available()) {
        cli_error("bench navmesh: needs a shoal built with Recast/Detour (SHOAL_WITH_RECAST; apt-get install "
                  "librecast-dev)");
        return CLI_EXIT_USAGE;
    }
    return bench_navmesh_run(&o);
}

const cli_command_t cli_bench_navmesh = {"navmesh",
                                         "pedestrians with goals of their own on a navigation mesh, and "
                                         "the\nsame scene stepped by DetourCrowd on the same mesh",
                                         bench_navmesh};
