/* `shoal validate crowd`: the crowd model (shoal/crowd.h) against what
 * pedestrians do, with the `pedestrian` preset (docs/crowds.md,
 * "Validation"). Five experiments, each a small world built through the
 * public API:
 *
 * - free walking: one pedestrian walks 10 m down a 2 m corridor laid along
 *   0, 45 and 90 degrees; the travel times must agree within 1 %;
 * - fundamental diagram: a periodic corridor (20 m x 4 m between two
 *   walls, a torus world) at densities 0.5 to 5 per m^2, everyone bound
 *   the same way, their preferred speeds spread as Weidmann's free speeds
 *   (1.34 +- 0.26 m/s), from a staggered lattice and from a random start; the
 *   mean speed after a warm-up against Weidmann's curve
 *   v = v0 (1 - exp(-gamma (1/rho - 1/rho_max))), v0 1.34 m/s, gamma 1.913
 *   m^-2, rho_max 5.4 m^-2, within 0.15 m/s up to 3 per m^2 and 0.2 m/s
 *   past it, and the specific flow's top at 1.5 to 2.5 per m^2 within the
 *   measured 1.2 to 2.0 per m and s;
 * - bottleneck: 100 pedestrians leave a 10 m x 10 m room through an opening
 *   (bound for the opening, then for a point 20 m beyond it)
 *   of 0.8 to 2.4 m; the flow between the 10th and the 90th to pass, and a
 *   least-squares line flow = a w + b;
 * - counter-flow: the periodic corridor at 2 per m^2, half each way, 60 s;
 *   a lane order (the share of each agent's neighbors within 1 m that walk
 *   its way: 0.5 is mixed, 1 is lanes) and who is stuck (mean speed over
 *   the last 10 s below 0.1 m/s);
 * - compression: 144 pedestrians pressed into one side of a closed 5 m box
 *   (5.76 per m^2): the largest overlap and wall penetration left.
 *
 * The figures are measured, not judged, except where docs/crowds.md states
 * a requirement: free walking within 1 %, no overlap past 1 % of a radius
 * under compression, nobody stuck in the counter-flow. The exit status is
 * 1 when one of those fails.
 *
 * --plots DIR also draws each experiment (experiments/crowd/plot_validate.c) from the
 * figures and from series collected only then (validate.h), by reading
 * the worlds: the figures printed are the same with or without it. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoal/shoal.h"
#include "cli/cli.h"
#include "cli/cli_options.h"
#include "experiments/crowd/validate.h"

#define VPI 3.14159265358979323846
#define PED_RADIUS 0.2f

typedef struct validate_opts {
    int json;
    int quick;
    int64_t threads;
    const char* plots;
    int64_t seed;  /* the worlds' seed (jitter draws) */
    unsigned only; /* the experiments to run (EXP_*); 0: all */
} validate_opts_t;

/* The experiments, as --only names them (and as --json keys them). */
enum {
    EXP_FREE_WALK = 1,
    EXP_FUNDAMENTAL = 2,
    EXP_BOTTLENECK = 4,
    EXP_COUNTERFLOW = 8,
    EXP_COMPRESSION = 16
};
static const char* const experiment_names[5] = {"free_walk", "fundamental", "bottleneck", "counterflow",
                                                "compression"};

static shoal_world_t* new_world(int wrap, float lo_x, float lo_y, float hi_x, float hi_y,
                                const validate_opts_t* o)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = 2;
    def.thread_count = (int32_t)o->threads;
    def.seed = (uint64_t)o->seed;
    def.wrap = wrap;
    if (wrap) {
        def.bounds_min[0] = lo_x;
        def.bounds_min[1] = lo_y;
        def.bounds_max[0] = hi_x;
        def.bounds_max[1] = hi_y;
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    if (shoal_world_create(&def, &w, &err) != SHOAL_OK) {
        cli_error("validate: %s", err.message);
        return NULL;
    }
    return w;
}

static shoal_agent_def_t pedestrian(float x, float y)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL);
    d.position[0] = x;
    d.position[1] = y;
    return d;
}

/* Bound along +x (or -x) for ever: flee from a point far behind. */
static void walk_along_x(shoal_agent_def_t* d, float sign)
{
    d->weights[SHOAL_BEHAVIOR_FLEE] = 1.0f;
    d->threat[0] = -sign * 1e7f;
    d->threat[1] = d->position[1];
}

static int wall(shoal_world_t* w, float x0, float y0, float x1, float y1)
{
    const float p[4] = {x0, y0, x1, y1};
    if (shoal_world_add_wall(w, p, 2, 0, NULL) == SHOAL_OK) return 1;
    cli_error("validate: %s", shoal_world_last_error(w));
    return 0;
}

/* ---- free walking --------------------------------------------------------- */

/* Seconds one pedestrian takes to walk 10 m down a corridor along `deg`,
 * the crossing interpolated between steps; < 0 on failure. `path` (NULL:
 * not kept): x, y at the start and after each step, *path_count pairs. */
static double free_walk(double deg, float dt, const validate_opts_t* o, float* path, int* path_count)
{
    shoal_world_t* w = new_world(0, 0, 0, 0, 0, o);
    if (!w) return -1.0;
    double c = cos(deg * VPI / 180.0), s = sin(deg * VPI / 180.0);
    /* walls at +-1 m from the axis, from -2 m to 14 m along it */
    float ok = 1;
    for (int side = -1; side <= 1; side += 2) {
        double ox = -s * side, oy = c * side;
        ok = ok &&
             wall(w, (float)(-2 * c + ox), (float)(-2 * s + oy), (float)(14 * c + ox), (float)(14 * s + oy));
    }
    shoal_agent_def_t d = pedestrian(0.0f, 0.0f);
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.target[0] = (float)(20 * c);
    d.target[1] = (float)(20 * s);
    shoal_agent_t id;
    double t = -1.0;
    if (ok && shoal_agent_add(w, &d, &id) == SHOAL_OK) {
        double prev = 0.0;
        int kept = 0;
        if (path) {
            path[kept++] = 0.0f;
            path[kept++] = 0.0f;
        }
        for (int k = 1; k <= (int)(30.0 / dt); ++k) {
            if (shoal_world_step(w, dt) != SHOAL_OK) break;
            shoal_agent_state_t st;
            shoal_agent_get_state(w, id, &st);
            if (path && kept < 2 * VALIDATE_PATH_MAX) {
                path[kept++] = st.position[0];
                path[kept++] = st.position[1];
            }
            double along = st.position[0] * c + st.position[1] * s;
            if (along >= 10.0) {
                t = (k - 1) * dt + dt * (10.0 - prev) / (along - prev);
                break;
            }
            prev = along;
        }
        if (path) *path_count = kept / 2;
    }
    shoal_world_destroy(w);
    return t;
}

/* ---- the periodic corridor ------------------------------------------------- */

/* Weidmann's curve must hold within FD_NEAR m/s up to FD_NEAR_RHO per m^2
 * and within FD_FAR beyond; the specific flow's largest value between
 * FD_FLOW_MIN and FD_FLOW_MAX per m and s, at 1.5 to 2.5 per m^2. */
#define FD_NEAR 0.15
#define FD_NEAR_RHO 3.05
#define FD_FAR 0.2
#define FD_FLOW_MIN 1.2
#define FD_FLOW_MAX 2.0
/* Weidmann's free speeds: 1.34 +- 0.26 m/s */
#define FD_SPEED_SD 0.26
#define CORRIDOR_L 20.0f
#define CORRIDOR_W 4.0f

/* A torus box around a 20 m x 4 m corridor between two walls, filled on a
 * staggered lattice at about `rho` per m^2, or (`random`) with as many
 * placed uniformly at random, overlaps and all, drawn from the seed (the
 * contact pass parts them in the first steps); `counter`: half of them,
 * drawn by a fixed hash of their place in the lattice (so no lanes to start
 * with), walk the other way; `spread`: preferred speeds drawn from
 * Weidmann's free speeds, normal with mean 1.34 m/s and standard deviation
 * 0.26 m/s, cut at two deviations (FD_SPEED_SD). Returns the world (NULL on
 * failure) and the count. */
static shoal_world_t* corridor(double rho, int counter, int random, int spread, const validate_opts_t* o,
                               int32_t* count)
{
    shoal_world_t* w = new_world(1, 0.0f, -1.0f, CORRIDOR_L, CORRIDOR_W + 1.0f, o);
    if (!w) return NULL;
    if (!wall(w, 0.0f, 0.0f, CORRIDOR_L, 0.0f) || !wall(w, 0.0f, CORRIDOR_W, CORRIDOR_L, CORRIDOR_W)) {
        shoal_world_destroy(w);
        return NULL;
    }
    double spacing = sqrt(1.0 / rho);
    int rows = (int)floor((CORRIDOR_W - 2.0 * PED_RADIUS - 0.02) / spacing) + 1;
    int cols = (int)floor(CORRIDOR_L / spacing);
    if (rows < 1) rows = 1;
    double dy = rows > 1 ? (CORRIDOR_W - 2.0 * PED_RADIUS - 0.02) / (rows - 1) : 0.0, dx = CORRIDOR_L / cols;
    /* the lattice is as dense as the density asks across the corridor's
     * usable width; along it, cols fit the length */
    int n = 0;
    for (int r = 0; r < rows; ++r)
        for (int k = 0; k < cols && n < (int)lround(rho * CORRIDOR_L * CORRIDOR_W); ++k) {
            float x = (float)((k + 0.5 * (r & 1)) * dx), y = (float)(PED_RADIUS + 0.01 + r * dy);
            if (x >= CORRIDOR_L) x -= CORRIDOR_L;
            uint32_t hash = (uint32_t)n * 2654435761u;
            if (random) {
                /* splitmix64 of the seed and the index: the same start for a seed */
                uint64_t z = (uint64_t)o->seed * 0x9E3779B97F4A7C15ull + (uint64_t)n * 0xBF58476D1CE4E5B9ull;
                for (int axis = 0; axis < 2; ++axis) {
                    z += 0x9E3779B97F4A7C15ull;
                    uint64_t m = z;
                    m = (m ^ (m >> 30)) * 0xBF58476D1CE4E5B9ull;
                    m = (m ^ (m >> 27)) * 0x94D049BB133111EBull;
                    m ^= m >> 31;
                    double u = (double)(m >> 11) * (1.0 / 9007199254740992.0);
                    if (axis == 0)
                        x = (float)(u * CORRIDOR_L);
                    else
                        y = (float)(PED_RADIUS + 0.01 + u * (CORRIDOR_W - 2.0 * PED_RADIUS - 0.02));
                }
                if (x >= CORRIDOR_L) x = 0.0f;
            }
            shoal_agent_def_t d = pedestrian(x, y);
            if (spread) {
                /* Box-Muller on two draws keyed by the seed and the index */
                double u[2];
                for (int m = 0; m < 2; ++m) {
                    uint64_t z = ((uint64_t)o->seed + 0x5851F42D4C957F2Dull) * 0x9E3779B97F4A7C15ull +
                                 (uint64_t)(2 * n + m + 1) * 0xBF58476D1CE4E5B9ull;
                    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
                    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
                    z ^= z >> 31;
                    u[m] = ((double)(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
                }
                double gs = sqrt(-2.0 * log(u[0])) * cos(2.0 * VPI * u[1]);
                gs = gs > 2.0 ? 2.0 : gs < -2.0 ? -2.0 : gs;
                d.crowd.preferred_speed = (float)(WEIDMANN_V0 + FD_SPEED_SD * gs);
            }
            int back = counter && (hash >> 31);
            walk_along_x(&d, back ? -1.0f : 1.0f);
            d.group = back ? 1 : 0;
            if (shoal_agent_add(w, &d, NULL) != SHOAL_OK) {
                cli_error("validate: %s", shoal_world_last_error(w));
                shoal_world_destroy(w);
                return NULL;
            }
            n++;
        }
    *count = n;
    return w;
}

static double lane_order(shoal_world_t* w, int32_t n);

/* The counter-flow's lane order every `every` steps of walk_speed, for
 * the pictures; `step` counts the steps walked so far. */
typedef struct lane_trace_t {
    validate_plot_data_t* pd;
    int every, step;
} lane_trace_t;

/* Mean speed along each agent's own way (group 0: +x, group 1: -x) over
 * `steps` steps; per-agent sums into `per_agent` when not NULL; the lane
 * order into `trace` when not NULL. */
static double walk_speed(shoal_world_t* w, int32_t n, float dt, int steps, double* per_agent,
                         lane_trace_t* trace)
{
    float* vel = malloc(sizeof(float) * 3 * (size_t)n);
    uint32_t* groups = malloc(sizeof(uint32_t) * (size_t)n);
    shoal_agent_t* ids = malloc(sizeof(shoal_agent_t) * (size_t)n);
    double sum = 0.0;
    int samples = 0;
    if (vel && groups && ids) {
        if (per_agent) memset(per_agent, 0, sizeof(double) * (size_t)n);
        for (int k = 0; k < steps; ++k) {
            if (shoal_world_step(w, dt) != SHOAL_OK) break;
            shoal_agent_batch_t b = {.ids = ids, .velocities = vel, .groups = groups};
            int32_t got = 0;
            shoal_world_read_agents(w, &b, n, &got);
            for (int32_t i = 0; i < got; ++i) {
                double v = groups[i] ? -vel[3 * i] : vel[3 * i];
                sum += v;
                /* storage order may change: key by handle index */
                if (per_agent) per_agent[(ids[i].index1 - 1) % (uint32_t)n] += v / steps;
            }
            samples += got;
            if (trace && ++trace->step % trace->every == 0 && trace->pd->order_count < VALIDATE_ORDER_MAX) {
                validate_plot_data_t* pd = trace->pd;
                pd->order_time[pd->order_count] = trace->step * (double)dt;
                pd->order[pd->order_count++] = lane_order(w, n);
            }
        }
    }
    free(vel);
    free(groups);
    free(ids);
    return samples ? sum / samples : 0.0;
}

double validate_weidmann(double rho)
{
    return WEIDMANN_V0 * (1.0 - exp(-WEIDMANN_GAMMA * (1.0 / rho - 1.0 / WEIDMANN_RHO_MAX)));
}

/* Share of each agent's neighbors within 1 m that walk its way. */
static double lane_order(shoal_world_t* w, int32_t n)
{
    float* pos = malloc(sizeof(float) * 3 * (size_t)n);
    uint32_t* groups = malloc(sizeof(uint32_t) * (size_t)n);
    double sum = 0.0;
    int counted = 0;
    if (pos && groups) {
        shoal_agent_batch_t b = {.positions = pos, .groups = groups};
        int32_t got = 0;
        shoal_world_read_agents(w, &b, n, &got);
        for (int32_t i = 0; i < got; ++i) {
            int same = 0, all = 0;
            for (int32_t j = 0; j < got; ++j) {
                if (j == i) continue;
                float dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1];
                if (dx > 0.5f * CORRIDOR_L) dx -= CORRIDOR_L;
                if (dx < -0.5f * CORRIDOR_L) dx += CORRIDOR_L;
                if (dx * dx + dy * dy > 1.0f) continue;
                all++;
                same += groups[j] == groups[i];
            }
            if (all) {
                sum += (double)same / all;
                counted++;
            }
        }
    }
    free(pos);
    free(groups);
    return counted ? sum / counted : 0.0;
}

/* ---- the bottleneck --------------------------------------------------------- */

/* Flow (pedestrians per second) through an opening of `width` m: 100
 * pedestrians in a 10 m room, bound for a point 20 m outside; the 10th to
 * the 90th to pass. < 0 when fewer than 90 passed in 200 s. `times` (NULL:
 * not kept): when each passed, *passed_count of them. */
static double bottleneck(double width, float dt, const validate_opts_t* o, double* t_last, double* times,
                         int* passed_count)
{
    shoal_world_t* w = new_world(0, 0, 0, 0, 0, o);
    if (!w) return -1.0;
    float h = (float)(width / 2);
    const float room[8] = {0.0f, 5.0f, -10.0f, 5.0f, -10.0f, -5.0f, 0.0f, -5.0f};
    int ok = shoal_world_add_wall(w, room, 4, 0, NULL) == SHOAL_OK && wall(w, 0.0f, 5.0f, 0.0f, h) &&
             wall(w, 0.0f, -h, 0.0f, -5.0f);
    enum { N = VALIDATE_EVACUEES };
    shoal_agent_t ids[N];
    for (int i = 0; ok && i < N; ++i) {
        /* a 10 x 10 lattice, 0.9 m apart, in the room's middle */
        shoal_agent_def_t d = pedestrian(-9.3f + 0.9f * (float)(i % 10), -4.3f + 0.9f * (float)(i / 10));
        /* first the door (0.5 m past its middle), then on, 20 m out */
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        d.target[0] = 0.5f;
        d.target[1] = 0.0f;
        ok = shoal_agent_add(w, &d, &ids[i]) == SHOAL_OK;
    }
    if (!ok) {
        cli_error("validate: %s", shoal_world_last_error(w));
        shoal_world_destroy(w);
        return -1.0;
    }
    int passed[N] = {0};
    double when[N];
    int count = 0;
    for (int k = 1; k <= (int)(200.0 / dt) && count < N; ++k) {
        if (shoal_world_step(w, dt) != SHOAL_OK) break;
        for (int i = 0; i < N; ++i) {
            if (passed[i]) continue;
            shoal_agent_state_t st;
            shoal_agent_get_state(w, ids[i], &st);
            if (st.position[0] > 0.0f) {
                passed[i] = 1;
                when[count++] = k * dt;
                const float out[3] = {20.0f, 0.0f, 0.0f};
                shoal_agent_set_target(w, ids[i], out);
            }
        }
    }
    shoal_world_destroy(w);
    if (times) {
        memcpy(times, when, sizeof(double) * (size_t)count);
        *passed_count = count;
    }
    *t_last = count ? when[count - 1] : 0.0;
    if (count < 90) return -1.0;
    return 80.0 / (when[89] - when[9]);
}

/* ---- compression ------------------------------------------------------------ */

/* The largest pair overlap and wall penetration over `steps` steps (over
 * a radius); into pd (NULL: none) also each step's and the final
 * positions. */
static void compression(const validate_opts_t* o, double* overlap, double* penetration, int steps,
                        validate_plot_data_t* pd)
{
    *overlap = *penetration = INFINITY;
    shoal_world_t* w = new_world(0, 0, 0, 0, 0, o);
    if (!w) return;
    const float box[8] = {0, 0, 5, 0, 5, 5, 0, 5};
    enum { SIDE = 12, N = SIDE * SIDE };
    _Static_assert((int)N == (int)VALIDATE_BOX_AGENTS, "validate.h's box");
    int ok = shoal_world_add_wall(w, box, 4, 1, NULL) == SHOAL_OK;
    for (int i = 0; ok && i < N; ++i) {
        shoal_agent_def_t d = pedestrian(0.21f + (float)(i % SIDE) * (4.58f / (SIDE - 1)),
                                         0.21f + (float)(i / SIDE) * (4.58f / (SIDE - 1)));
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        d.target[0] = 100.0f;
        d.target[1] = 2.5f;
        ok = shoal_agent_add(w, &d, NULL) == SHOAL_OK;
    }
    float pos[3 * N];
    double worst_pair = 0.0, worst_wall = 0.0;
    for (int k = 0; ok && k < steps; ++k) {
        if (shoal_world_step(w, 0.1f) != SHOAL_OK) break;
        shoal_agent_batch_t b = {.positions = pos};
        int32_t got = 0;
        shoal_world_read_agents(w, &b, N, &got);
        /* the worst of this step, then of all: the same maximum */
        double step_pair = 0.0, step_wall = 0.0;
        for (int i = 0; i < got; ++i) {
            float x = pos[3 * i], y = pos[3 * i + 1];
            double out =
                fmax(fmax(PED_RADIUS - x, x - (5 - PED_RADIUS)), fmax(PED_RADIUS - y, y - (5 - PED_RADIUS)));
            step_wall = fmax(step_wall, out / PED_RADIUS);
            for (int j = i + 1; j < got; ++j) {
                double d = hypot(x - pos[3 * j], y - pos[3 * j + 1]);
                step_pair = fmax(step_pair, (2 * PED_RADIUS - d) / PED_RADIUS);
            }
        }
        worst_pair = fmax(worst_pair, step_pair);
        worst_wall = fmax(worst_wall, step_wall);
        if (pd && k < VALIDATE_BOX_STEPS) {
            pd->step_overlap[k] = step_pair;
            pd->step_penetration[k] = step_wall;
            pd->box_steps = k + 1;
            for (int i = 0; i < got; ++i) {
                pd->box_xy[2 * i] = pos[3 * i];
                pd->box_xy[2 * i + 1] = pos[3 * i + 1];
            }
        }
    }
    shoal_world_destroy(w);
    if (ok) {
        *overlap = worst_pair;
        *penetration = worst_wall;
    }
}

/* For the pictures: where the counter-flow's pedestrians ended, which way
 * each walks, and who is stuck (last10: mean speeds keyed as walk_speed
 * keys them). */
static void final_corridor(shoal_world_t* w, int32_t n, const double* last10, validate_plot_data_t* pd)
{
    float* pos = malloc(sizeof(float) * 3 * (size_t)n);
    uint32_t* groups = malloc(sizeof(uint32_t) * (size_t)n);
    shoal_agent_t* ids = malloc(sizeof(shoal_agent_t) * (size_t)n);
    pd->agents = 0;
    if (pos && groups && ids) {
        shoal_agent_batch_t b = {.ids = ids, .positions = pos, .groups = groups};
        int32_t got = 0;
        shoal_world_read_agents(w, &b, n, &got);
        for (int32_t i = 0; i < got && i < VALIDATE_CORRIDOR_MAX; ++i) {
            pd->final_xy[2 * i] = pos[3 * i];
            pd->final_xy[2 * i + 1] = pos[3 * i + 1];
            pd->final_group[i] = groups[i] != 0;
            pd->final_stuck[i] = last10[(ids[i].index1 - 1) % (uint32_t)n] < 0.1;
            pd->agents = i + 1;
        }
    }
    free(pos);
    free(groups);
    free(ids);
}

/* ---- the command -------------------------------------------------------------- */

#if SHOAL_WITH_PLOT
#define PLOTS_AVAILABILITY ""
#else
#define PLOTS_AVAILABILITY " (not in this build, which has no plot support: see 'shoal plot')"
#endif

/* --only NAME[,NAME...]: a subset of the experiments. */
static int parse_only(const char* command, const char* name, const char* value, void* opts)
{
    validate_opts_t* o = opts;
    const char* at = value;
    for (;;) {
        size_t len = strcspn(at, ",");
        int found = -1;
        for (int k = 0; k < 5; ++k)
            if (strlen(experiment_names[k]) == len && !strncmp(at, experiment_names[k], len)) found = k;
        if (found < 0)
            return cli_usage_error(
                command,
                "%s: expected experiments from free_walk, fundamental, bottleneck, counterflow, "
                "compression (comma-separated), got '%s'",
                name, value);
        o->only |= 1u << found;
        if (!at[len]) return 0;
        at += len + 1;
    }
}

static const cli_option_t validate_options[] = {
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(validate_opts_t, json),
     .help = "one JSON object on stdout: see below"},
    {.name = "--quick",
     .kind = CLI_FLAG,
     CLI_AT(validate_opts_t, quick),
     .help = "fewer densities and widths and shorter runs (for tests; figures are coarser)"},
    {.name = "--plots",
     .metavar = "DIR",
     .kind = CLI_FILE,
     CLI_AT(validate_opts_t, plots),
     .help = "also draw each experiment as an 800 x 500 px PNG in DIR (made if missing): free_walk.png, "
             "fundamental.png, bottleneck.png, counterflow.png and compression.png; what is printed does not "
             "change" PLOTS_AVAILABILITY},
    {.name = "--threads",
     .metavar = "T",
     .kind = CLI_INT,
     CLI_AT(validate_opts_t, threads),
     .min = 1,
     .max = 1024,
     .help = "threads (default: physical cores); results are the same for any count"},
    {.name = "--seed",
     .metavar = "S",
     .kind = CLI_INT,
     CLI_AT(validate_opts_t, seed),
     .max = 9007199254740992.0,
     .help = "the worlds' seed (default 5): the jitter that breaks symmetric stalls draws from it, so each "
             "seed is "
             "another sample of the same experiments"},
    {.name = "--only",
     .metavar = "NAME[,NAME]",
     .kind = CLI_CUSTOM,
     .parse = parse_only,
     .help =
         "run only these experiments (free_walk, fundamental, bottleneck, counterflow, compression); what is "
         "printed and the JSON keep the same form, without the others; the exit status judges those run. Not "
         "with --plots"},
};

static const cli_spec_t validate_spec = {
    .command = "validate crowd",
    .usage = "[options]",
    .about = "The crowd model against pedestrian data, with the pedestrian preset: free\n"
             "walking along 0, 45 and 90 degrees, the fundamental diagram in a periodic\n"
             "corridor against Weidmann's curve, flow through a bottleneck of 0.8 to 2.4 m,\n"
             "counter-flow lanes, and a crowd pressed into a box (docs/crowds.md).\n",
    .options = validate_options,
    .option_count = CLI_COUNT(validate_options),
    .details = "Exit status 1 when a stated requirement fails: free-walking times within 1 %,\n"
               "Weidmann's curve within 0.15 m/s up to 3 /m2 and 0.2 m/s past it from both\n"
               "starts, the specific flow's top at 1.5-2.5 /m2 within 1.2-2.0 /m/s (not with\n"
               "--quick), no overlap past 1 % of a radius under compression, nobody stuck in the\n"
               "counter-flow. --json prints: free_walk {angles_deg, seconds, spread}, fundamental\n"
               "[{density, speed, weidmann, deviation, speed_random, deviation_random}] (from\n"
               "the lattice, and from a random start), bottleneck {points [{width, flow}],\n"
               "slope, intercept, r2}, counterflow {agents, lane_order_start, lane_order_end,\n"
               "stuck}, compression {overlap, penetration} (over a radius), pass.\n",
};

/* Run the five experiments and print what they measured; into pd (NULL:
 * no plots) what the pictures need. Returns the exit code. */
static int run_experiments(validate_opts_t o, validate_plot_data_t* pd)
{
    const float dt = 0.05f;
    int pass = 1;
    const unsigned run = o.only ? o.only : 31u;

    /* free walking */
    const double angles[3] = {0.0, 45.0, 90.0};
    double times[3] = {0}, lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < 3 && (run & EXP_FREE_WALK); ++k) {
        times[k] = free_walk(angles[k], dt, &o, pd ? pd->path[k] : NULL, pd ? &pd->path_count[k] : NULL);
        if (times[k] < 0.0) return CLI_EXIT_FAILURE;
        lo = fmin(lo, times[k]);
        hi = fmax(hi, times[k]);
    }
    double spread = run & EXP_FREE_WALK ? (hi - lo) / lo : 0.0;
    pass &= spread <= 0.01;

    /* fundamental diagram */
    const double all_rho[10] = {0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0};
    const double quick_rho[3] = {0.5, 2.0, 4.0};
    const double* rhos = o.quick ? quick_rho : all_rho;
    int n_rho = !(run & EXP_FUNDAMENTAL) ? 0 : o.quick ? 3 : 10;
    /* from the lattice, and from a random start */
    double fd_rho[10], fd_v[10], fd_random[10];
    int warm = (int)((o.quick ? 5.0 : 20.0) / dt), measure = (int)((o.quick ? 5.0 : 20.0) / dt);
    for (int k = 0; k < n_rho; ++k)
        for (int variant = 0; variant < 2; ++variant) {
            int32_t n = 0;
            shoal_world_t* w = corridor(rhos[k], 0, variant, 1, &o, &n);
            if (!w) return CLI_EXIT_FAILURE;
            walk_speed(w, n, dt, warm, NULL, NULL);
            (variant ? fd_random : fd_v)[k] = walk_speed(w, n, dt, measure, NULL, NULL);
            fd_rho[k] = n / (double)(CORRIDOR_L * CORRIDOR_W);
            shoal_world_destroy(w);
        }

    /* Weidmann within FD_NEAR up to 3 per m^2 and FD_FAR past it, from
     * both starts; the specific flow's top within the measured range at
     * 1.5 to 2.5 per m^2 (the full run only: --quick has one density there) */
    double flow_max = 0.0;
    for (int k = 0; k < n_rho; ++k) {
        double band = fd_rho[k] <= FD_NEAR_RHO ? FD_NEAR : FD_FAR, wd = validate_weidmann(fd_rho[k]);
        pass &= fabs(fd_v[k] - wd) <= band && fabs(fd_random[k] - wd) <= band;
        if (fd_rho[k] >= 1.45 && fd_rho[k] <= 2.55)
            flow_max = fmax(flow_max, fd_rho[k] * fmin(fd_v[k], fd_random[k]));
    }
    if (n_rho && !o.quick) pass &= flow_max >= FD_FLOW_MIN && flow_max <= FD_FLOW_MAX;

    /* bottleneck */
    const double all_w[5] = {0.8, 1.2, 1.6, 2.0, 2.4};
    const double quick_w[2] = {0.8, 2.4};
    const double* widths = o.quick ? quick_w : all_w;
    int n_w = !(run & EXP_BOTTLENECK) ? 0 : o.quick ? 2 : 5;
    double flow[5], last[5];
    double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
    int fit_n = 0;
    for (int k = 0; k < n_w; ++k) {
        flow[k] =
            bottleneck(widths[k], dt, &o, &last[k], pd ? pd->pass_time[k] : NULL, pd ? &pd->passed[k] : NULL);
        if (flow[k] < 0.0) continue;
        sx += widths[k];
        sy += flow[k];
        sxx += widths[k] * widths[k];
        sxy += widths[k] * flow[k];
        syy += flow[k] * flow[k];
        fit_n++;
    }
    double slope = NAN, intercept = NAN, r2 = NAN;
    if (fit_n >= 2) {
        double den = fit_n * sxx - sx * sx;
        slope = (fit_n * sxy - sx * sy) / den;
        intercept = (sy - slope * sx) / fit_n;
        double ss_tot = syy - sy * sy / fit_n, ss_res = 0.0;
        for (int k = 0; k < n_w; ++k)
            if (flow[k] >= 0.0) ss_res += pow(flow[k] - (slope * widths[k] + intercept), 2);
        r2 = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : 1.0;
    }

    /* counter-flow */
    int32_t cn = 0;
    double order0 = 0.0, order1 = 0.0, total = o.quick ? 30.0 : 60.0;
    int stuck = 0;
    if (run & EXP_COUNTERFLOW) {
        shoal_world_t* cw = corridor(2.0, 1, 0, 0, &o, &cn);
        if (!cw) return CLI_EXIT_FAILURE;
        order0 = lane_order(cw, cn);
        /* the lane order once a second for the pictures */
        lane_trace_t trace = {pd, (int)lround(1.0 / dt), 0};
        if (pd) {
            pd->order_time[0] = 0.0;
            pd->order[0] = order0;
            pd->order_count = 1;
        }
        walk_speed(cw, cn, dt, (int)((total - 10.0) / dt), NULL, pd ? &trace : NULL);
        double* last10 = malloc(sizeof(double) * (size_t)cn);
        if (!last10) return CLI_EXIT_FAILURE;
        walk_speed(cw, cn, dt, (int)(10.0 / dt), last10, pd ? &trace : NULL);
        order1 = lane_order(cw, cn);
        if (pd && trace.step % trace.every != 0 && pd->order_count < VALIDATE_ORDER_MAX) {
            /* the end, between two seconds (the step counts round down) */
            pd->order_time[pd->order_count] = trace.step * (double)dt;
            pd->order[pd->order_count++] = order1;
        }
        for (int32_t i = 0; i < cn; ++i) stuck += last10[i] < 0.1;
        if (pd) final_corridor(cw, cn, last10, pd);
        free(last10);
        shoal_world_destroy(cw);
        pass &= stuck == 0;
    }

    /* compression */
    double overlap = 0.0, penetration = 0.0;
    if (run & EXP_COMPRESSION) compression(&o, &overlap, &penetration, o.quick ? 60 : 200, pd);
    pass &= overlap <= 0.01 && penetration <= 0.01;

    if (pd) {
        pd->quick = o.quick;
        pd->dt = dt;
        pd->radius = PED_RADIUS;
        memcpy(pd->angle_deg, angles, sizeof angles);
        memcpy(pd->seconds, times, sizeof times);
        pd->spread = spread;
        pd->corridor_length = CORRIDOR_L;
        pd->corridor_width = CORRIDOR_W;
        pd->densities = n_rho;
        memcpy(pd->density, fd_rho, sizeof(double) * (size_t)n_rho);
        memcpy(pd->speed, fd_v, sizeof(double) * (size_t)n_rho);
        memcpy(pd->speed_random, fd_random, sizeof(double) * (size_t)n_rho);
        pd->warm_s = warm * (double)dt;
        pd->measure_s = measure * (double)dt;
        pd->widths = n_w;
        memcpy(pd->width, widths, sizeof(double) * (size_t)n_w);
        memcpy(pd->flow, flow, sizeof(double) * (size_t)n_w);
        pd->fit = fit_n >= 2;
        pd->slope = slope;
        pd->intercept = intercept;
        pd->r2 = r2;
        pd->counter_seconds = total;
        pd->stuck = stuck;
        pd->box_side = 5.0;
        pd->overlap = overlap;
        pd->penetration = penetration;
    }

    if (o.json) {
        cJSON* root = cJSON_CreateObject();
        if (run & EXP_FREE_WALK) {
            cJSON* fw = cJSON_AddObjectToObject(root, "free_walk");
            cJSON_AddItemToObject(fw, "angles_deg", cJSON_CreateDoubleArray(angles, 3));
            cJSON_AddItemToObject(fw, "seconds", cJSON_CreateDoubleArray(times, 3));
            cJSON_AddNumberToObject(fw, "spread", spread);
        }
        cJSON* fd = run & EXP_FUNDAMENTAL ? cJSON_AddArrayToObject(root, "fundamental") : NULL;
        for (int k = 0; k < n_rho; ++k) {
            cJSON* e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "density", fd_rho[k]);
            cJSON_AddNumberToObject(e, "speed", fd_v[k]);
            cJSON_AddNumberToObject(e, "weidmann", validate_weidmann(fd_rho[k]));
            cJSON_AddNumberToObject(e, "deviation", fd_v[k] - validate_weidmann(fd_rho[k]));
            cJSON_AddNumberToObject(e, "speed_random", fd_random[k]);
            cJSON_AddNumberToObject(e, "deviation_random", fd_random[k] - validate_weidmann(fd_rho[k]));
            cJSON_AddItemToArray(fd, e);
        }
        cJSON* bn = run & EXP_BOTTLENECK ? cJSON_AddObjectToObject(root, "bottleneck") : NULL;
        cJSON* pts = bn ? cJSON_AddArrayToObject(bn, "points") : NULL;
        for (int k = 0; k < n_w; ++k) {
            cJSON* e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "width", widths[k]);
            if (flow[k] >= 0.0)
                cJSON_AddNumberToObject(e, "flow", flow[k]);
            else
                cJSON_AddNullToObject(e, "flow");
            cJSON_AddItemToArray(pts, e);
        }
        if (bn && fit_n >= 2) {
            cJSON_AddNumberToObject(bn, "slope", slope);
            cJSON_AddNumberToObject(bn, "intercept", intercept);
            cJSON_AddNumberToObject(bn, "r2", r2);
        }
        if (run & EXP_COUNTERFLOW) {
            cJSON* cf = cJSON_AddObjectToObject(root, "counterflow");
            cJSON_AddNumberToObject(cf, "agents", cn);
            cJSON_AddNumberToObject(cf, "lane_order_start", order0);
            cJSON_AddNumberToObject(cf, "lane_order_end", order1);
            cJSON_AddNumberToObject(cf, "stuck", stuck);
        }
        if (run & EXP_COMPRESSION) {
            cJSON* cp = cJSON_AddObjectToObject(root, "compression");
            cJSON_AddNumberToObject(cp, "overlap", overlap);
            cJSON_AddNumberToObject(cp, "penetration", penetration);
        }
        cJSON_AddBoolToObject(root, "pass", pass);
        char* text = cJSON_PrintUnformatted(root);
        if (text) puts(text);
        cJSON_free(text);
        cJSON_Delete(root);
    } else {
        if (run & EXP_FREE_WALK)
            printf(
                "free walking, 10 m at 0/45/90 degrees: %.3f, %.3f, %.3f s (spread %.2f %%, at most 1 %%)\n",
                times[0], times[1], times[2], 100.0 * spread);
        if (run & EXP_FUNDAMENTAL) {
            printf("\nfundamental diagram (periodic corridor 20 m x 4 m), m/s\n");
            printf("  density /m2   Weidmann  lattice  deviation   random start  deviation\n");
        }
        for (int k = 0; k < n_rho; ++k)
            printf("  %10.2f  %9.3f  %7.3f  %+9.3f  %13.3f  %+9.3f\n", fd_rho[k],
                   validate_weidmann(fd_rho[k]), fd_v[k], fd_v[k] - validate_weidmann(fd_rho[k]),
                   fd_random[k], fd_random[k] - validate_weidmann(fd_rho[k]));
        if (n_rho && !o.quick)
            printf("  specific flow at most %.2f /m/s at 1.5 to 2.5 /m2 (measured: %.1f to %.1f); Weidmann "
                   "within %.2f m/s up to 3 /m2, %.2f past it\n",
                   flow_max, FD_FLOW_MIN, FD_FLOW_MAX, FD_NEAR, FD_FAR);
        if (run & EXP_BOTTLENECK) printf("\nbottleneck (100 pedestrians, 10 m room)\n  width m   flow /s\n");
        for (int k = 0; k < n_w; ++k) {
            if (flow[k] >= 0.0)
                printf("  %7.2f  %8.3f  (%.2f /m/s; measured 1.6 to 2.2)\n", widths[k], flow[k],
                       flow[k] / widths[k]);
            else
                printf("  %7.2f  fewer than 90 passed in 200 s\n", widths[k]);
        }
        if (n_w && fit_n >= 2) printf("  fit: flow = %.3f w %+.3f (r2 %.3f)\n", slope, intercept, r2);
        if (run & EXP_COUNTERFLOW)
            printf("\ncounter-flow (%d pedestrians, 2 /m2, %.0f s): lane order %.3f -> %.3f, %d stuck\n",
                   (int)cn, total, order0, order1, stuck);
        if (run & EXP_COMPRESSION)
            printf(
                "compression (144 in a 5 m box): largest overlap %.4f, wall penetration %.4f (of a radius)\n",
                overlap, penetration);
        printf("\n%s\n", pass ? "pass" : "FAIL");
    }
    return pass ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

static int validate_crowd(int argc, char** argv)
{
    validate_opts_t o = {.seed = 5};
    int stop = cli_parse(&validate_spec, argc, argv, &o, NULL, NULL);
    if (stop >= 0) return stop;
    if (o.only && o.plots)
        return cli_usage_error("validate crowd",
                               "--plots draws every experiment: it does not go with --only");
    validate_plot_data_t* pd = NULL;
#if SHOAL_WITH_PLOT
    char err[1200];
    if (o.plots) {
        /* before the experiments, which take a while */
        if (validate_plot_dir(o.plots, err, sizeof err) != 0) {
            cli_error("validate: %s", err);
            return CLI_EXIT_FAILURE;
        }
        pd = calloc(1, sizeof *pd);
        if (!pd) {
            cli_error("validate: out of memory");
            return CLI_EXIT_FAILURE;
        }
    }
#else
    if (o.plots) return cli_no_plot("validate crowd --plots");
#endif
    int rc = run_experiments(o, pd);
#if SHOAL_WITH_PLOT
    if (pd && pd->densities > 0) { /* 0: the experiments stopped on an error */
        if (validate_write_plots(o.plots, pd, err, sizeof err) != 0) {
            cli_error("validate: %s", err);
            rc = CLI_EXIT_FAILURE;
        } else if (!o.json) {
            printf("plots in %s: free_walk.png, fundamental.png, bottleneck.png, counterflow.png, "
                   "compression.png\n",
                   o.plots);
        }
    }
#endif
    free(pd);
    return rc;
}

const cli_command_t cli_validate_crowd = {"crowd",
                                          "the crowd model against measured pedestrians: free walking, "
                                          "the\nfundamental diagram, bottlenecks, counterflow",
                                          validate_crowd};
