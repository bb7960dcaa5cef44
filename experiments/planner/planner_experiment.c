/* `shoal experiment planner`: the experiments of section 4 of the
 * trim-trajectory planning paper (online path planning over pre-integrated
 * trim trajectories) on the library's planner agents.
 *
 * - Figure 6: five configurations (2D seek, 3D seek, 2D dynamic pursuit,
 *   3D pursuit in a five times denser field, 3D meet), each run `runs`
 *   times per search strategy with randomized asteroids; a run's score per
 *   role is the mean goodness of the first segments its searches chose
 *   (goodness_sum / searches of shoal_agent_get_planner), averaged over
 *   the role's ships; collisions are summed.
 * - Figure 7: mean wall time per search of the single ship of the two seek
 *   configurations (the world's default trim tables: 17 controls in 2D,
 *   121 in 3D), taken from the same runs (so measured while the other
 *   threads run other runs: on a busy machine the times rise, and the
 *   states per search, which are exact, are the steadier comparison).
 * - The fleet battle: 15 against 15 ships in a 3D asteroid field, each
 *   pursuing a random ship of the other side.
 *
 * Every run is its own world, stepped serially (one thread), and runs are
 * spread over the tool's threads; results are gathered by run index, so
 * goodness and collisions do not depend on the thread count (timings do,
 * as timings will). The battle world uses the tool's threads itself.
 *
 * The asteroids of run i are drawn from a counter-based generator keyed by
 * (configuration, i), the same for the three strategies: the strategies
 * fly through the same fields. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "shoal/shoal.h"

#include "ecs/rng.h"
#include "cli/cli.h"
#include "cli/cli_options.h"

enum { STRATEGIES = 3, CONFIGS = 5, MAX_ROLES = 2, BATTLE_SIDE = 15 };

static const char* const strategy_keys[STRATEGIES] = {"single_step", "uniform", "adaptive"};
static const char* const strategy_titles[STRATEGIES] = {"Single-Step", "Uniform", "Adaptive"};
static const shoal_plan_strategy_t strategy_values[STRATEGIES] = {SHOAL_PLAN_SINGLE_STEP, SHOAL_PLAN_UNIFORM,
                                                                  SHOAL_PLAN_ADAPTIVE};

#define STEP_HZ 60.0f
#define SHIP_SPEED 5.0f       /* m/s, every seeker and every ship of the meet and the battle */
#define PURSUER_SPEED 5.5f    /* m/s: a pursuer is a little faster, so it closes in */
#define SHIP_RADIUS 1.0f      /* m */
#define GOAL_RADIUS 8.0f      /* m: a seeker this close to its goal ends the run */
#define START_CLEARANCE 12.0f /* m of free space around every start and goal */

/* ---- configurations ------------------------------------------------------ */

/* An asteroid field: `count` spheres with centers uniform in the box and
 * radii uniform in [r_min, r_max]. gap > 0 spaces them out (surfaces at
 * least gap apart, by rejection); v_max > 0 gives each a random direction
 * and a speed uniform in [v_min, v_max] (moving asteroids). */
typedef struct field_t {
    float lo[3], hi[3];
    int count;
    float r_min, r_max;
    float gap;
    float v_min, v_max;
} field_t;

typedef enum config_id {
    CFG_SEEK_2D = 0,
    CFG_SEEK_3D = 1,
    CFG_PURSUE_2D = 2,
    CFG_PURSUE_3D = 3,
    CFG_MEET_3D = 4
} config_id_t;

typedef struct config_t {
    const char* key;   /* JSON */
    const char* title; /* table row, before the role */
    int dims;
    int static_field;
    int roles;
    const char* role_keys[MAX_ROLES];
    const char* role_titles[MAX_ROLES]; /* "(P)" etc., "" for a single role */
    field_t field;
} config_t;

/* The field spans x in [0, 160]; ships start at x = -10 (and behind),
 * seekers seek (180, 0, 0), just past the far side: 190 m, about 38 s at
 * 5 m/s. Asteroids have radii of 2-5 m.
 * - 2D seek: 70 asteroids in 160 x 120 m, surfaces at least 6 m apart (an
 *   eighth of the area covered).
 * - 3D seek and meet: 150 in a 160 x 80 x 80 m box, 6 m apart.
 * - 3D pursuit: 750 in the same box (five times denser), 2.5 m apart.
 * - 2D dynamic pursuit: 40 asteroids at least 12 m apart drifting at
 *   0.5-2 m/s in random directions.
 * Why the spacing: a ship's collision tests use its radius plus the arcs'
 * distance from their chords (about 2 m at 5 m/s), so a gap under about 4 m
 * is closed to the planner though open to the eye, and fully random
 * (overlapping) 2D fields hold pockets a ship enters and cannot turn
 * around in: every strategy then hits something, which measures the field,
 * not the search. In 3D a pocket needs a closed shell, so the dense field
 * can be tighter. */
static const config_t configs[CONFIGS] = {
    {"2d_seek",
     "2D Seek",
     2,
     1,
     1,
     {"S", NULL},
     {"", NULL},
     {{0, -60, 0}, {160, 60, 0}, 70, 2.0f, 5.0f, 6.0f, 0.0f, 0.0f}},
    {"3d_seek",
     "3D Seek",
     3,
     1,
     1,
     {"S", NULL},
     {"", NULL},
     {{0, -40, -40}, {160, 40, 40}, 150, 2.0f, 5.0f, 6.0f, 0.0f, 0.0f}},
    {"2d_dyn_pursue",
     "2D Dyn Pursue",
     2,
     0,
     2,
     {"P", "S"},
     {"(P)", "(S)"},
     {{0, -60, 0}, {160, 60, 0}, 40, 2.0f, 5.0f, 12.0f, 0.5f, 2.0f}},
    {"3d_pursue",
     "3D Pursue",
     3,
     1,
     2,
     {"P", "S"},
     {"(P)", "(S)"},
     {{0, -40, -40}, {160, 40, 40}, 750, 2.0f, 5.0f, 2.5f, 0.0f, 0.0f}},
    {"3d_meet",
     "3D Meet",
     3,
     1,
     2,
     {"A", "B"},
     {"(A)", "(B)"},
     {{0, -40, -40}, {160, 40, 40}, 150, 2.0f, 5.0f, 6.0f, 0.0f, 0.0f}},
};

/* ---- random numbers ------------------------------------------------------ */

/* SplitMix64 over a counter: the draws of (config, run) are a pure
 * function of them, whatever thread makes the run. */
typedef struct rng_t {
    uint64_t state;
} rng_t;

static uint64_t rng_next(rng_t* r) { return rng_splitmix64(&r->state); }

static float rng_uniform(rng_t* r, float lo, float hi)
{
    double u = (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

static rng_t rng_make(uint64_t a, uint64_t b)
{
    rng_t r = {a * 0xD1B54A32D192ED03ull ^ (b + 0x8CB92BA72F3D8DD7ull)};
    rng_next(&r);
    return r;
}

/* ---- one run --------------------------------------------------------------- */

typedef struct role_stats_t {
    int ships;
    double goodness; /* mean over the role's ships of goodness_sum / searches */
    int64_t searches;
    double search_ns;
    int64_t states;
    int64_t collisions;
    /* searches started with the ship overlapping an asteroid, and the
     * goodness of the segments they chose */
    int64_t inside_searches;
    double inside_goodness;
    /* 3D meet: mean over the role's ships of the goodness of the searches
     * before the ships first came within MEET_DISTANCE (all of them when
     * they never did) */
    double goodness_before_meet;
} role_stats_t;

/* What a run measures between steps (sim_run): ship-to-ship contacts, the
 * closest approach, searches started inside an asteroid, the meeting. */
typedef struct watch_t {
    int64_t contacts; /* pairs of ships coming within the sum of their radii (events) */
    double closest;   /* smallest distance between two ships' centers, m */
    double meet_time; /* s, first time two ships were within MEET_DISTANCE; -1: never */
} watch_t;

typedef struct run_result_t {
    role_stats_t roles[MAX_ROLES];
    watch_t watch;
    double sim_seconds;
    double wall_seconds;
    int reached; /* the seeker reached its goal */
    int asteroids;
    int failed;
    char err[640];
} run_result_t;

typedef struct ship_t {
    shoal_agent_t id;
    int role;
    int seeker; /* ends the run at its goal */
    float goal[3];
    /* per search, from the status between steps */
    int64_t searches_seen;
    int64_t inside_searches;
    double inside_goodness;
    int64_t searches_before_meet;
    double goodness_before_meet;
} ship_t;

/* Two ships this close (centers, m) have met (3D meet). */
#define MEET_DISTANCE 10.0f

typedef struct sim_t {
    shoal_world_t* world;
    ship_t ships[2 * BATTLE_SIDE];
    int ship_count;
    int asteroids;
    watch_t watch;
    unsigned char touching[2 * BATTLE_SIDE][2 * BATTLE_SIDE];
    float* rocks; /* centers (3 per asteroid) and radii, read every step */
    float* rock_radii;
    int32_t rock_capacity;
    char* err;
    int err_size;
} sim_t;

static int sim_fail(sim_t* s, const char* what)
{
    snprintf(s->err, (size_t)s->err_size, "%s: %s", what,
             s->world ? shoal_world_last_error(s->world) : "no world");
    return -1;
}

static int sim_create(sim_t* s, int dims, uint64_t seed, int threads, char* err, int err_size)
{
    memset(s, 0, sizeof *s);
    s->err = err;
    s->err_size = err_size;
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.seed = seed;
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    def.initial_capacity = 64;
    shoal_error_t e;
    if (shoal_world_create(&def, &s->world, &e) != SHOAL_OK) {
        snprintf(err, (size_t)err_size, "world: %s", e.message);
        return -1;
    }
    /* The default tables, set explicitly: Figure 7's 17 and 121 controls. */
    shoal_trim_spec_t spec = shoal_trim_spec_default(dims);
    if (shoal_world_set_trim_table(s->world, &spec) != SHOAL_OK) return sim_fail(s, "trim table");
    return 0;
}

static float dist3(const float a[3], const float b[3])
{
    float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrtf(dx * dx + dy * dy + dz * dz);
}

/* Fill the field. Nothing within START_CLEARANCE of the `keep` points
 * (starts and goals). The spaced-out draw gives up on a sphere after 200
 * tries (the field then holds fewer; s->asteroids says how many). */
static int sim_add_field(sim_t* s, const field_t* f, int dims, rng_t* rng, const float (*keep)[3],
                         int keep_count)
{
    float(*placed)[4] = f->gap > 0.0f ? calloc((size_t)f->count, sizeof *placed) : NULL;
    if (f->gap > 0.0f && !placed) {
        snprintf(s->err, (size_t)s->err_size, "out of memory");
        return -1;
    }
    int n = 0;
    for (int i = 0; i < f->count; ++i) {
        float c[3] = {0, 0, 0}, r = 0.0f;
        int ok = 0;
        for (int attempt = 0; attempt < 200 && !ok; ++attempt) {
            for (int k = 0; k < dims; ++k) c[k] = rng_uniform(rng, f->lo[k], f->hi[k]);
            r = rng_uniform(rng, f->r_min, f->r_max);
            ok = 1;
            for (int j = 0; j < keep_count && ok; ++j)
                if (dist3(c, keep[j]) < r + START_CLEARANCE) ok = 0;
            for (int j = 0; placed && j < n && ok; ++j)
                if (dist3(c, placed[j]) < r + placed[j][3] + f->gap) ok = 0;
        }
        if (!ok) continue;
        int32_t id;
        shoal_status_t st;
        if (f->v_max > 0.0f) {
            float v[3] = {0, 0, 0};
            float speed = rng_uniform(rng, f->v_min, f->v_max);
            if (dims == 2) {
                float a = rng_uniform(rng, 0.0f, 6.2831853f);
                v[0] = speed * cosf(a);
                v[1] = speed * sinf(a);
            } else {
                /* uniform on the sphere: z uniform, azimuth uniform */
                float z = rng_uniform(rng, -1.0f, 1.0f), a = rng_uniform(rng, 0.0f, 6.2831853f);
                float h = sqrtf(fmaxf(0.0f, 1.0f - z * z));
                v[0] = speed * h * cosf(a);
                v[1] = speed * h * sinf(a);
                v[2] = speed * z;
            }
            st = shoal_world_add_moving_obstacle(s->world, c, v, r, &id);
        } else {
            st = shoal_world_add_obstacle(s->world, c, r, &id);
        }
        if (st != SHOAL_OK) {
            free(placed);
            return sim_fail(s, "obstacle");
        }
        if (placed) {
            memcpy(placed[n], c, sizeof c);
            placed[n][3] = r;
        }
        ++n;
    }
    free(placed);
    s->asteroids = n;
    return 0;
}

typedef struct ship_def_t {
    float position[3];
    float heading;
    float speed;
    int role;
    shoal_plan_goal_t goal;
    float goal_point[3];
    int target; /* pursue: index of the ship pursued (added before), -1 */
} ship_def_t;

static int sim_add_ship(sim_t* s, const ship_def_t* d, const shoal_planner_t* base)
{
    shoal_agent_def_t def = shoal_agent_default_def();
    memcpy(def.position, d->position, sizeof def.position);
    def.heading = d->heading;
    def.planner = *base;
    def.planner.enabled = 1;
    def.planner.speed = d->speed;
    def.planner.radius = SHIP_RADIUS;
    def.planner.avoid_collisions = 1;
    def.planner.goal = d->goal;
    memcpy(def.planner.goal_point, d->goal_point, sizeof def.planner.goal_point);
    if (d->target >= 0) def.planner.goal_agent = s->ships[d->target].id;
    ship_t* ship = &s->ships[s->ship_count];
    if (shoal_agent_add(s->world, &def, &ship->id) != SHOAL_OK) return sim_fail(s, "planner agent");
    ship->role = d->role;
    ship->seeker = d->goal == SHOAL_PLAN_GOAL_SEEK;
    memcpy(ship->goal, d->goal_point, sizeof ship->goal);
    s->ship_count++;
    return 0;
}

/* Whether each ship now overlaps an asteroid (its center within the sum of
 * radii, as the library counts a collision): the search it starts in the
 * next step starts inside. */
static int sim_inside(sim_t* s, unsigned char* inside)
{
    int32_t n = 0;
    if (shoal_world_read_obstacles(s->world, NULL, NULL, NULL, NULL, 0, &n) != SHOAL_OK)
        return sim_fail(s, "obstacles");
    if (n > s->rock_capacity) {
        free(s->rocks);
        free(s->rock_radii);
        s->rocks = malloc((size_t)n * 3 * sizeof(float));
        s->rock_radii = malloc((size_t)n * sizeof(float));
        s->rock_capacity = s->rocks && s->rock_radii ? n : 0;
        if (!s->rock_capacity) {
            snprintf(s->err, (size_t)s->err_size, "out of memory");
            return -1;
        }
    }
    if (shoal_world_read_obstacles(s->world, NULL, s->rocks, s->rock_radii, NULL, s->rock_capacity, &n) !=
        SHOAL_OK)
        return sim_fail(s, "obstacles");
    for (int i = 0; i < s->ship_count; ++i) {
        shoal_agent_state_t st;
        if (shoal_agent_get_state(s->world, s->ships[i].id, &st) != SHOAL_OK) return sim_fail(s, "state");
        inside[i] = 0;
        for (int32_t j = 0; j < n && !inside[i]; ++j) {
            float r = s->rock_radii[j] + SHIP_RADIUS;
            float dx = st.position[0] - s->rocks[3 * j], dy = st.position[1] - s->rocks[3 * j + 1],
                  dz = st.position[2] - s->rocks[3 * j + 2];
            inside[i] = dx * dx + dy * dy + dz * dz <= r * r;
        }
    }
    return 0;
}

/* After a step: each ship's new search (at most one per step at 60 Hz)
 * with where it started, then contacts between ships and their meeting. */
static int sim_watch(sim_t* s, const unsigned char* inside, double time)
{
    float pos[2 * BATTLE_SIDE][3];
    for (int i = 0; i < s->ship_count; ++i) {
        ship_t* sh = &s->ships[i];
        shoal_planner_status_t p;
        if (shoal_agent_get_planner(s->world, sh->id, &p) != SHOAL_OK) return sim_fail(s, "planner status");
        if (p.searches > sh->searches_seen) {
            if (inside[i]) {
                sh->inside_searches++;
                sh->inside_goodness += (double)p.last_goodness;
            }
            if (s->watch.meet_time < 0.0) {
                sh->searches_before_meet++;
                sh->goodness_before_meet += (double)p.last_goodness;
            }
            sh->searches_seen = p.searches;
        }
        shoal_agent_state_t st;
        if (shoal_agent_get_state(s->world, sh->id, &st) != SHOAL_OK) return sim_fail(s, "state");
        memcpy(pos[i], st.position, sizeof pos[i]);
    }
    for (int i = 0; i < s->ship_count; ++i)
        for (int j = i + 1; j < s->ship_count; ++j) {
            float d = dist3(pos[i], pos[j]);
            if (d < s->watch.closest) s->watch.closest = d;
            int touch = d < 2.0f * SHIP_RADIUS;
            if (touch && !s->touching[i][j]) s->watch.contacts++;
            s->touching[i][j] = (unsigned char)touch;
            if (d < MEET_DISTANCE && s->watch.meet_time < 0.0) s->watch.meet_time = time;
        }
    return 0;
}

/* Step until `seconds` have passed or a seeker is at its goal. */
static int sim_run(sim_t* s, double seconds, int* reached, double* sim_seconds)
{
    const float dt = 1.0f / STEP_HZ;
    long steps = lround(seconds * STEP_HZ);
    *reached = 0;
    s->watch.closest = INFINITY;
    s->watch.meet_time = -1.0;
    long k = 0;
    for (; k < steps && !*reached; ++k) {
        unsigned char inside[2 * BATTLE_SIDE];
        if (sim_inside(s, inside) != 0) return -1;
        if (shoal_world_step(s->world, dt) != SHOAL_OK) return sim_fail(s, "step");
        if (sim_watch(s, inside, (double)(k + 1) / STEP_HZ) != 0) return -1;
        if (k % 6 != 5) continue; /* 10 Hz is plenty for the goal test */
        for (int i = 0; i < s->ship_count; ++i) {
            if (!s->ships[i].seeker) continue;
            shoal_agent_state_t st;
            if (shoal_agent_get_state(s->world, s->ships[i].id, &st) != SHOAL_OK) return sim_fail(s, "state");
            if (dist3(st.position, s->ships[i].goal) < GOAL_RADIUS) *reached = 1;
        }
    }
    *sim_seconds = (double)k / STEP_HZ;
    return 0;
}

/* Per-role figures of the run's ships. */
static int sim_collect(sim_t* s, role_stats_t* roles)
{
    for (int r = 0; r < MAX_ROLES; ++r) memset(&roles[r], 0, sizeof roles[r]);
    for (int i = 0; i < s->ship_count; ++i) {
        shoal_planner_status_t p;
        if (shoal_agent_get_planner(s->world, s->ships[i].id, &p) != SHOAL_OK)
            return sim_fail(s, "planner status");
        role_stats_t* r = &roles[s->ships[i].role];
        r->ships++;
        r->goodness += p.searches > 0 ? p.goodness_sum / (double)p.searches : 0.0;
        r->searches += p.searches;
        r->search_ns += p.search_ns_sum;
        r->states += p.states_sum;
        r->collisions += p.collisions;
        r->inside_searches += s->ships[i].inside_searches;
        r->inside_goodness += s->ships[i].inside_goodness;
        const ship_t* sh = &s->ships[i];
        r->goodness_before_meet +=
            sh->searches_before_meet > 0 ? sh->goodness_before_meet / (double)sh->searches_before_meet : 0.0;
    }
    for (int r = 0; r < MAX_ROLES; ++r)
        if (roles[r].ships > 0) {
            roles[r].goodness /= roles[r].ships;
            roles[r].goodness_before_meet /= roles[r].ships;
        }
    return 0;
}

static void sim_destroy(sim_t* s)
{
    shoal_world_destroy(s->world);
    s->world = NULL;
    free(s->rocks);
    free(s->rock_radii);
    s->rocks = s->rock_radii = NULL;
}

/* The ships of one configuration. Returns the count written to d. */
static int config_ships(config_id_t c, ship_def_t* d)
{
    const float goal[3] = {180.0f, 0.0f, 0.0f};
    const float none[3] = {0.0f, 0.0f, 0.0f};
    int n = 0;
    ship_def_t seeker = {.position = {-10.0f, 0.0f, 0.0f},
                         .speed = SHIP_SPEED,
                         .goal = SHOAL_PLAN_GOAL_SEEK,
                         .goal_point = {goal[0], goal[1], goal[2]},
                         .target = -1};
    switch (c) {
    case CFG_SEEK_2D:
    case CFG_SEEK_3D: d[n++] = seeker; break;
    case CFG_PURSUE_2D:
    case CFG_PURSUE_3D: {
        seeker.role = 1; /* S */
        d[n++] = seeker;
        int pursuers = c == CFG_PURSUE_2D ? 5 : 1;
        for (int i = 0; i < pursuers; ++i) {
            /* behind the seeker, spread across the entry */
            float y = c == CFG_PURSUE_2D ? -20.0f + 10.0f * (float)i : 6.0f;
            ship_def_t p = {
                .position = {-30.0f, y, c == CFG_PURSUE_3D ? 6.0f : 0.0f},
                .speed = PURSUER_SPEED,
                .goal = SHOAL_PLAN_GOAL_PURSUE,
                .goal_point = {none[0], none[1], none[2]},
            };
            d[n++] = p;
        }
        break;
    }
    case CFG_MEET_3D: {
        /* A is added without a goal and set to pursue B once B exists */
        ship_def_t a = {.position = {-10.0f, 0.0f, 0.0f},
                        .speed = SHIP_SPEED,
                        .goal = SHOAL_PLAN_GOAL_NONE,
                        .goal_point = {none[0], none[1], none[2]},
                        .target = -1};
        ship_def_t b = {
            .position = {170.0f, 0.0f, 0.0f},
            .heading = 3.14159265f,
            .speed = SHIP_SPEED,
            .role = 1,
            .goal = SHOAL_PLAN_GOAL_PURSUE,
            .goal_point = {none[0], none[1], none[2]},
        };
        d[n++] = a;
        d[n++] = b;
        break;
    }
    }
    return n;
}

static void run_config(config_id_t c, int strategy, int run, double seconds, const shoal_planner_t* base,
                       run_result_t* out)
{
    memset(out, 0, sizeof *out);
    const config_t* cfg = &configs[c];
    double t0 = cli_now_seconds();
    sim_t s;
    if (sim_create(&s, cfg->dims, (uint64_t)run + 1u, 1, out->err, sizeof out->err) != 0) {
        out->failed = 1;
        sim_destroy(&s);
        return;
    }
    ship_def_t ships[8];
    int n = config_ships(c, ships);
    float keep[9][3];
    int keep_count = 0;
    for (int i = 0; i < n; ++i) memcpy(keep[keep_count++], ships[i].position, sizeof keep[0]);
    const float goal[3] = {180.0f, 0.0f, 0.0f};
    memcpy(keep[keep_count++], goal, sizeof keep[0]);
    rng_t rng = rng_make((uint64_t)c + 1u, (uint64_t)run);
    shoal_planner_t p = *base;
    p.strategy = strategy_values[strategy];
    int bad = sim_add_field(&s, &cfg->field, cfg->dims, &rng, (const float(*)[3])keep, keep_count);
    for (int i = 0; i < n && !bad; ++i) bad = sim_add_ship(&s, &ships[i], &p);
    if (!bad && c == CFG_MEET_3D) {
        float zero[3] = {0, 0, 0};
        if (shoal_agent_set_planner_goal(s.world, s.ships[0].id, SHOAL_PLAN_GOAL_PURSUE, zero,
                                         s.ships[1].id) != SHOAL_OK)
            bad = sim_fail(&s, "planner goal");
    }
    if (!bad) bad = sim_run(&s, seconds, &out->reached, &out->sim_seconds);
    if (!bad) bad = sim_collect(&s, out->roles);
    out->watch = s.watch;
    out->asteroids = s.asteroids;
    out->failed = bad != 0;
    sim_destroy(&s);
    out->wall_seconds = cli_now_seconds() - t0;
}

/* ---- the fleet battle ------------------------------------------------------ */

typedef struct battle_result_t {
    double goodness; /* mean over the 30 ships */
    int64_t collisions;
    int64_t contacts; /* ship-to-ship */
    double closest;   /* m, between two ships' centers */
    int64_t searches;
    double search_ns;
    int64_t states;
    double sim_seconds, wall_seconds;
    int asteroids;
    int failed;
    char err[640];
} battle_result_t;

/* Two lines of 15 facing each other across the 3D seek field, each ship
 * pursuing a random ship of the other side. The world steps on `threads`
 * threads: this is the library's parallel planner stage at work. */
static void run_battle(int strategy, double seconds, int threads, const shoal_planner_t* base,
                       battle_result_t* out)
{
    memset(out, 0, sizeof *out);
    const config_t* cfg = &configs[CFG_SEEK_3D];
    sim_t s;
    if (sim_create(&s, 3, 1u, threads, out->err, sizeof out->err) != 0) {
        out->failed = 1;
        sim_destroy(&s);
        return;
    }
    ship_def_t ships[2 * BATTLE_SIDE];
    float keep[2 * BATTLE_SIDE][3];
    rng_t pick = rng_make(99u, 1u);
    for (int side = 0; side < 2; ++side)
        for (int i = 0; i < BATTLE_SIDE; ++i) {
            ship_def_t* d = &ships[side * BATTLE_SIDE + i];
            memset(d, 0, sizeof *d);
            d->position[0] = side == 0 ? -10.0f : 170.0f;
            d->position[1] = -16.0f + 8.0f * (float)(i % 5);
            d->position[2] = -8.0f + 8.0f * (float)(i / 5);
            d->heading = side == 0 ? 0.0f : 3.14159265f;
            d->speed = SHIP_SPEED;
            d->role = side;
            d->goal = SHOAL_PLAN_GOAL_NONE; /* pursuit set once every ship exists */
            d->target = (1 - side) * BATTLE_SIDE + (int)(rng_next(&pick) % BATTLE_SIDE);
            memcpy(keep[side * BATTLE_SIDE + i], d->position, sizeof keep[0]);
        }
    rng_t rng = rng_make(77u, 1u);
    shoal_planner_t p = *base;
    p.strategy = strategy_values[strategy];
    int bad = sim_add_field(&s, &cfg->field, 3, &rng, (const float(*)[3])keep, 2 * BATTLE_SIDE);
    for (int i = 0; i < 2 * BATTLE_SIDE && !bad; ++i) {
        int target = ships[i].target;
        ships[i].target = -1;
        bad = sim_add_ship(&s, &ships[i], &p);
        ships[i].target = target;
    }
    float zero[3] = {0, 0, 0};
    for (int i = 0; i < 2 * BATTLE_SIDE && !bad; ++i)
        if (shoal_agent_set_planner_goal(s.world, s.ships[i].id, SHOAL_PLAN_GOAL_PURSUE, zero,
                                         s.ships[ships[i].target].id) != SHOAL_OK)
            bad = sim_fail(&s, "planner goal");
    double t0 = cli_now_seconds();
    int reached = 0;
    if (!bad) bad = sim_run(&s, seconds, &reached, &out->sim_seconds);
    out->wall_seconds = cli_now_seconds() - t0;
    out->contacts = s.watch.contacts;
    out->closest = s.watch.closest;
    role_stats_t roles[MAX_ROLES];
    if (!bad) bad = sim_collect(&s, roles);
    if (!bad) {
        for (int r = 0; r < 2; ++r) {
            out->goodness += roles[r].goodness * 0.5;
            out->collisions += roles[r].collisions;
            out->searches += roles[r].searches;
            out->search_ns += roles[r].search_ns;
            out->states += roles[r].states;
        }
    }
    out->asteroids = s.asteroids;
    out->failed = bad != 0;
    sim_destroy(&s);
}

/* ---- tables ---------------------------------------------------------------- */

/* One cell of Figure 6 (a configuration's role under one strategy), summed
 * over the runs in run order. */
typedef struct cell_t {
    double goodness; /* mean over runs */
    int64_t collisions;
    int64_t searches;
    double search_ns;
    int64_t states;
    int64_t inside_searches;
    double inside_goodness;
    double goodness_before_meet; /* mean over runs */
} cell_t;

/* Everything the tables print. */
typedef struct summary_t {
    int runs, seconds, threads, battle, figures;
    shoal_planner_t planner;
    cell_t cells[CONFIGS][STRATEGIES][MAX_ROLES];
    double sim_time[CONFIGS][STRATEGIES];            /* mean simulated seconds of a run */
    int reached[CONFIGS][STRATEGIES];                /* runs whose seeker reached its goal */
    int64_t contacts[CONFIGS][STRATEGIES];           /* ship-to-ship, summed over the runs */
    double closest[CONFIGS][STRATEGIES];             /* m, over the runs */
    double meet_time[CONFIGS][STRATEGIES];           /* s, mean over the runs where ships met */
    int met[CONFIGS][STRATEGIES];                    /* runs where they met */
    double asteroids[CONFIGS];                       /* mean per run */
    double average[STRATEGIES];                      /* Figure 6's Average row */
    double ms[2][STRATEGIES], states[2][STRATEGIES]; /* Figure 7: [2D, 3D] */
    battle_result_t bt[STRATEGIES];
    double wall_runs, wall_battle;
} summary_t;

static const char* const dim_keys[2] = {"2d", "3d"};
static const int dim_controls[2] = {17, 121};

static double per_search(int64_t searches, double v) { return searches > 0 ? v / (double)searches : 0.0; }

static double per_search_ms(int64_t searches, double ns) { return per_search(searches, ns) * 1e-6; }

static double ratio(double a, double b) { return b > 0.0 ? a / b : 0.0; }

/* Reduce the runs (in run order: the same sums for any thread count). */
static void summarize(summary_t* m, const run_result_t* results)
{
    const int n = m->runs;
    int rows = 0;
    for (int c = 0; c < CONFIGS; ++c) {
        rows += configs[c].roles;
        for (int s = 0; s < STRATEGIES; ++s)
            for (int r = 0; r < n; ++r) {
                const run_result_t* res = &results[(c * STRATEGIES + s) * n + r];
                m->sim_time[c][s] += res->sim_seconds / n;
                m->reached[c][s] += res->reached;
                m->contacts[c][s] += res->watch.contacts;
                if (r == 0 || res->watch.closest < m->closest[c][s]) m->closest[c][s] = res->watch.closest;
                if (res->watch.meet_time >= 0.0) {
                    m->meet_time[c][s] += res->watch.meet_time;
                    m->met[c][s]++;
                }
                if (s == 0) m->asteroids[c] += (double)res->asteroids / n;
                for (int role = 0; role < configs[c].roles; ++role) {
                    cell_t* cell = &m->cells[c][s][role];
                    const role_stats_t* rs = &res->roles[role];
                    cell->goodness += rs->goodness / n;
                    cell->collisions += rs->collisions;
                    cell->searches += rs->searches;
                    cell->search_ns += rs->search_ns;
                    cell->states += rs->states;
                    cell->inside_searches += rs->inside_searches;
                    cell->inside_goodness += rs->inside_goodness;
                    cell->goodness_before_meet += rs->goodness_before_meet / n;
                }
            }
        for (int s = 0; s < STRATEGIES; ++s)
            if (m->met[c][s] > 0) m->meet_time[c][s] /= m->met[c][s];
    }
    /* The Average row: the mean of the eight rows, as in the paper. */
    for (int s = 0; s < STRATEGIES; ++s)
        for (int c = 0; c < CONFIGS; ++c)
            for (int role = 0; role < configs[c].roles; ++role)
                m->average[s] += m->cells[c][s][role].goodness / rows;
    /* Figure 7: the single ship of the seek configurations. */
    for (int d = 0; d < 2; ++d)
        for (int s = 0; s < STRATEGIES; ++s) {
            const cell_t* cell = &m->cells[d == 0 ? CFG_SEEK_2D : CFG_SEEK_3D][s][0];
            m->ms[d][s] = per_search_ms(cell->searches, cell->search_ns);
            m->states[d][s] = per_search(cell->searches, (double)cell->states);
        }
}

static cJSON* cell_json(const cell_t* c)
{
    cJSON* o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "goodness_mean", c->goodness);
    cJSON_AddNumberToObject(o, "collisions", (double)c->collisions);
    cJSON_AddNumberToObject(o, "ms_per_search", per_search_ms(c->searches, c->search_ns));
    cJSON_AddNumberToObject(o, "states_per_search", per_search(c->searches, (double)c->states));
    cJSON_AddNumberToObject(o, "searches", (double)c->searches);
    cJSON_AddNumberToObject(o, "searches_started_inside", (double)c->inside_searches);
    cJSON_AddNumberToObject(o, "goodness_of_searches_started_inside",
                            per_search(c->inside_searches, c->inside_goodness));
    return o;
}

static double round4(float x) { return round((double)x * 1e4) / 1e4; }

static void print_json(const summary_t* m)
{
    const shoal_planner_t* p = &m->planner;
    cJSON* root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "experiment", "planner");
    cJSON_AddNumberToObject(root, "runs", m->runs);
    cJSON_AddNumberToObject(root, "seconds", m->seconds);
    cJSON_AddNumberToObject(root, "step_hz", STEP_HZ);
    cJSON_AddNumberToObject(root, "threads", m->threads);
    cJSON* po = cJSON_AddObjectToObject(root, "planner");
    cJSON_AddNumberToObject(po, "speed", SHIP_SPEED);
    cJSON_AddNumberToObject(po, "pursuer_speed", PURSUER_SPEED);
    cJSON_AddNumberToObject(po, "radius", SHIP_RADIUS);
    cJSON_AddNumberToObject(po, "discount", round4(p->discount));
    cJSON_AddNumberToObject(po, "optimism", round4(p->optimism));
    cJSON_AddNumberToObject(po, "max_depth", p->max_depth);
    cJSON_AddNumberToObject(po, "min_depth", p->min_depth);
    cJSON_AddNumberToObject(po, "max_expansions", p->max_expansions);
    cJSON_AddNumberToObject(po, "k_skip", p->k_skip);
    cJSON_AddNumberToObject(po, "n_v", p->n_v);
    cJSON_AddNumberToObject(po, "collapse", round4(p->collapse));
    cJSON_AddNumberToObject(po, "damping", round4(p->damping));

    cJSON* f6 = cJSON_AddObjectToObject(root, "figure6");
    for (int c = 0; c < CONFIGS; ++c) {
        const config_t* cfg = &configs[c];
        cJSON* co = cJSON_AddObjectToObject(f6, cfg->key);
        for (int s = 0; s < STRATEGIES; ++s) {
            /* The configuration: every ship; goodness the mean of its roles. */
            cell_t all;
            memset(&all, 0, sizeof all);
            for (int role = 0; role < cfg->roles; ++role) {
                const cell_t* cell = &m->cells[c][s][role];
                all.goodness += cell->goodness / cfg->roles;
                all.collisions += cell->collisions;
                all.searches += cell->searches;
                all.search_ns += cell->search_ns;
                all.states += cell->states;
            }
            cJSON* so = cell_json(&all);
            cJSON_AddNumberToObject(so, "sim_seconds_mean", m->sim_time[c][s]);
            if (cfg->roles > 1) {
                cJSON_AddNumberToObject(so, "ship_contacts", (double)m->contacts[c][s]);
                cJSON_AddNumberToObject(so, "closest_ships_m", m->closest[c][s]);
            }
            if (c == CFG_MEET_3D) {
                cJSON_AddNumberToObject(so, "runs_meeting", m->met[c][s]);
                cJSON_AddNumberToObject(so, "meet_time_mean", m->meet_time[c][s]);
                double before = 0.0;
                for (int role = 0; role < cfg->roles; ++role)
                    before += m->cells[c][s][role].goodness_before_meet / cfg->roles;
                cJSON_AddNumberToObject(so, "goodness_before_meeting", before);
            }
            if (c != CFG_MEET_3D) cJSON_AddNumberToObject(so, "runs_reaching_goal", m->reached[c][s]);
            if (cfg->roles > 1) {
                cJSON* ro = cJSON_AddObjectToObject(so, "roles");
                for (int role = 0; role < cfg->roles; ++role)
                    cJSON_AddItemToObject(ro, cfg->role_keys[role], cell_json(&m->cells[c][s][role]));
            }
            cJSON_AddItemToObject(co, strategy_keys[s], so);
        }
        cJSON_AddNumberToObject(co, "dimensions", cfg->dims);
        cJSON_AddBoolToObject(co, "static_field", cfg->static_field);
        cJSON_AddNumberToObject(co, "asteroids_mean", m->asteroids[c]);
    }
    cJSON* avg = cJSON_AddObjectToObject(f6, "average");
    for (int s = 0; s < STRATEGIES; ++s)
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(avg, strategy_keys[s]), "goodness_mean",
                                m->average[s]);

    cJSON* f7 = cJSON_AddObjectToObject(root, "figure7");
    for (int d = 0; d < 2; ++d) {
        cJSON* dobj = cJSON_AddObjectToObject(f7, dim_keys[d]);
        cJSON_AddNumberToObject(dobj, "controls", dim_controls[d]);
        for (int s = 0; s < STRATEGIES; ++s) {
            cJSON* so = cJSON_AddObjectToObject(dobj, strategy_keys[s]);
            cJSON_AddNumberToObject(so, "ms_per_search", m->ms[d][s]);
            cJSON_AddNumberToObject(so, "states_per_search", m->states[d][s]);
        }
    }
    cJSON* r32 = cJSON_AddObjectToObject(f7, "ratio_3d_2d");
    for (int s = 0; s < STRATEGIES; ++s)
        cJSON_AddNumberToObject(r32, strategy_keys[s], ratio(m->ms[1][s], m->ms[0][s]));
    cJSON* au = cJSON_AddObjectToObject(f7, "adaptive_over_uniform");
    for (int d = 0; d < 2; ++d) cJSON_AddNumberToObject(au, dim_keys[d], ratio(m->ms[d][2], m->ms[d][1]));

    if (m->battle) {
        cJSON* bo = cJSON_AddObjectToObject(root, "battle");
        cJSON_AddNumberToObject(bo, "ships", 2 * BATTLE_SIDE);
        cJSON_AddNumberToObject(bo, "asteroids", m->bt[0].asteroids);
        cJSON_AddNumberToObject(bo, "threads", m->threads);
        for (int s = 0; s < STRATEGIES; ++s) {
            const battle_result_t* b = &m->bt[s];
            cJSON* so = cJSON_AddObjectToObject(bo, strategy_keys[s]);
            cJSON_AddNumberToObject(so, "goodness_mean", b->goodness);
            cJSON_AddNumberToObject(so, "collisions", (double)b->collisions);
            cJSON_AddNumberToObject(so, "ship_contacts", (double)b->contacts);
            cJSON_AddNumberToObject(so, "closest_ships_m", b->closest);
            cJSON_AddNumberToObject(so, "ms_per_search", per_search_ms(b->searches, b->search_ns));
            cJSON_AddNumberToObject(so, "states_per_search", per_search(b->searches, (double)b->states));
            cJSON_AddNumberToObject(so, "sim_seconds", b->sim_seconds);
            cJSON_AddNumberToObject(so, "wall_seconds", b->wall_seconds);
            cJSON_AddNumberToObject(so, "wall_per_sim_second", ratio(b->wall_seconds, b->sim_seconds));
        }
    }
    cJSON* tm = cJSON_AddObjectToObject(root, "wall_seconds");
    cJSON_AddNumberToObject(tm, "runs", m->wall_runs);
    cJSON_AddNumberToObject(tm, "battle", m->wall_battle);
    char* text = cJSON_PrintUnformatted(root);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(root);
}

static void print_header(void)
{
    printf("%-20s %12s %10s %10s\n", "", strategy_titles[0], strategy_titles[1], strategy_titles[2]);
}

static void print_tables(const summary_t* m)
{
    const shoal_planner_t* p = &m->planner;
    if (!m->figures) goto battle;
    printf("Figure 6: average goodness of the selected path segments\n"
           "(%d randomized runs per cell, up to %d s at %.0f Hz)\n\n",
           m->runs, m->seconds, (double)STEP_HZ);
    printf("Planner: d %.2f, f %.2f, depth %d (leaf >= %d), %d expansions, uniform k_skip %d,\n"
           "adaptive n_v %d c %.2f, damping %.2f; ships %.1f m/s (pursuers %.1f), radius %.1f m\n\n",
           (double)p->discount, (double)p->optimism, p->max_depth, p->min_depth, p->max_expansions, p->k_skip,
           p->n_v, (double)p->collapse, (double)p->damping, (double)SHIP_SPEED, (double)PURSUER_SPEED,
           (double)SHIP_RADIUS);
    print_header();
    for (int c = 0; c < CONFIGS; ++c)
        for (int role = 0; role < configs[c].roles; ++role) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", configs[c].title, configs[c].role_titles[role]);
            printf("%-20s %12.3f %10.3f %10.3f\n", name, m->cells[c][0][role].goodness,
                   m->cells[c][1][role].goodness, m->cells[c][2][role].goodness);
        }
    printf("%-20s %12.3f %10.3f %10.3f\n\n", "Average", m->average[0], m->average[1], m->average[2]);

    printf("Collisions (entries into an asteroid, summed over the runs)\n\n");
    print_header();
    int64_t total[STRATEGIES] = {0, 0, 0};
    for (int c = 0; c < CONFIGS; ++c)
        for (int role = 0; role < configs[c].roles; ++role) {
            char name[64];
            snprintf(name, sizeof name, "%s%s%s", configs[c].title, configs[c].role_titles[role],
                     configs[c].static_field ? "" : " *");
            long long n[STRATEGIES];
            for (int s = 0; s < STRATEGIES; ++s) {
                n[s] = (long long)m->cells[c][s][role].collisions;
                total[s] += n[s];
            }
            printf("%-20s %12lld %10lld %10lld\n", name, n[0], n[1], n[2]);
        }
    printf("%-20s %12lld %10lld %10lld\n", "Total", (long long)total[0], (long long)total[1],
           (long long)total[2]);
    printf("(* moving asteroids)\n\n");

    printf("Ship-to-ship contacts (pairs within the sum of radii, summed over the runs;\n"
           "closest approach of two ships' centers over the runs)\n\n");
    print_header();
    for (int c = 0; c < CONFIGS; ++c) {
        if (configs[c].roles < 2) continue;
        printf("%-20s %12lld %10lld %10lld\n", configs[c].title, (long long)m->contacts[c][0],
               (long long)m->contacts[c][1], (long long)m->contacts[c][2]);
        char name[64];
        snprintf(name, sizeof name, "  closest (m)");
        printf("%-20s %12.3f %10.3f %10.3f\n", name, m->closest[c][0], m->closest[c][1], m->closest[c][2]);
    }
    printf("\n");

    printf("Searches started inside an asteroid: share of all searches, and the mean\n"
           "goodness of the segments they chose\n\n");
    print_header();
    for (int c = 0; c < CONFIGS; ++c) {
        double share[STRATEGIES], g[STRATEGIES];
        for (int s = 0; s < STRATEGIES; ++s) {
            int64_t in = 0, all = 0;
            double gs = 0.0;
            for (int role = 0; role < configs[c].roles; ++role) {
                in += m->cells[c][s][role].inside_searches;
                all += m->cells[c][s][role].searches;
                gs += m->cells[c][s][role].inside_goodness;
            }
            share[s] = 100.0 * per_search(all, (double)in);
            g[s] = per_search(in, gs);
        }
        char name[64];
        snprintf(name, sizeof name, "%s share %%", configs[c].title);
        printf("%-20s %12.2f %10.2f %10.2f\n", name, share[0], share[1], share[2]);
        snprintf(name, sizeof name, "  goodness");
        printf("%-20s %12.3f %10.3f %10.3f\n", name, g[0], g[1], g[2]);
    }
    printf("\n");

    {
        const int c = CFG_MEET_3D;
        printf("3D meet: runs where the ships met (centers within %.0f m), mean time of meeting,\n"
               "and the goodness of the searches before it (A, B)\n\n",
               (double)MEET_DISTANCE);
        print_header();
        printf("%-20s %12d %10d %10d\n", "Runs meeting", m->met[c][0], m->met[c][1], m->met[c][2]);
        printf("%-20s %12.1f %10.1f %10.1f\n", "Meet time (s)", m->meet_time[c][0], m->meet_time[c][1],
               m->meet_time[c][2]);
        for (int role = 0; role < 2; ++role)
            printf("%-20s %12.3f %10.3f %10.3f\n", role == 0 ? "Before meeting (A)" : "Before meeting (B)",
                   m->cells[c][0][role].goodness_before_meet, m->cells[c][1][role].goodness_before_meet,
                   m->cells[c][2][role].goodness_before_meet);
        printf("\n");
    }

    printf("Figure 7: average running time per search (single ship, seek configurations)\n\n");
    print_header();
    for (int d = 0; d < 2; ++d) {
        char name[64];
        snprintf(name, sizeof name, "%s (%d controls)", d == 0 ? "2D" : "3D", dim_controls[d]);
        printf("%-20s %9.3f ms %7.3f ms %7.3f ms\n", name, m->ms[d][0], m->ms[d][1], m->ms[d][2]);
    }
    printf("%-20s %12.2f %10.2f %10.2f\n", "Ratio (3D / 2D)", ratio(m->ms[1][0], m->ms[0][0]),
           ratio(m->ms[1][1], m->ms[0][1]), ratio(m->ms[1][2], m->ms[0][2]));
    for (int d = 0; d < 2; ++d) {
        char name[64];
        snprintf(name, sizeof name, "States/search %s", d == 0 ? "2D" : "3D");
        printf("%-20s %12.0f %10.0f %10.0f\n", name, m->states[d][0], m->states[d][1], m->states[d][2]);
    }
    printf("Adaptive / uniform time per search: 2D %.0f%%, 3D %.0f%%\n\n",
           100.0 * ratio(m->ms[0][2], m->ms[0][1]), 100.0 * ratio(m->ms[1][2], m->ms[1][1]));

battle:
    if (m->battle) {
        const battle_result_t* b = m->bt;
        printf("Fleet battle: 15 against 15 ships in 3D, %d asteroids, %d s, %d thread%s\n\n", b[0].asteroids,
               m->seconds, m->threads, m->threads == 1 ? "" : "s");
        print_header();
        printf("%-20s %12.3f %10.3f %10.3f\n", "Goodness", b[0].goodness, b[1].goodness, b[2].goodness);
        printf("%-20s %12lld %10lld %10lld\n", "Collisions", (long long)b[0].collisions,
               (long long)b[1].collisions, (long long)b[2].collisions);
        printf("%-20s %12lld %10lld %10lld\n", "Ship contacts", (long long)b[0].contacts,
               (long long)b[1].contacts, (long long)b[2].contacts);
        printf("%-20s %12.3f %10.3f %10.3f\n", "Closest ships (m)", b[0].closest, b[1].closest, b[2].closest);
        double ms[STRATEGIES];
        for (int s = 0; s < STRATEGIES; ++s) ms[s] = per_search_ms(b[s].searches, b[s].search_ns);
        printf("%-20s %12.3f %10.3f %10.3f\n", "ms per search", ms[0], ms[1], ms[2]);
        printf("%-20s %12.3f %10.3f %10.3f\n\n", "Wall s per sim s",
               ratio(b[0].wall_seconds, b[0].sim_seconds), ratio(b[1].wall_seconds, b[1].sim_seconds),
               ratio(b[2].wall_seconds, b[2].sim_seconds));
    }
    printf("(wall time: runs %.1f s, battle %.1f s)\n", m->wall_runs, m->wall_battle);
}

typedef struct planner_options_t {
    int64_t runs, seconds, threads, depth;
    int json, no_battle, battle_only;
} planner_options_t;

static const cli_option_t planner_options[] = {
    {.name = "--runs",
     .metavar = "N",
     .kind = CLI_INT,
     CLI_AT(planner_options_t, runs),
     .min = 1,
     .max = 100000,
     .help = "randomized runs per configuration and strategy, 1..100000 (default 60)"},
    {.name = "--seconds",
     .metavar = "S",
     .kind = CLI_INT,
     CLI_AT(planner_options_t, seconds),
     .min = 1,
     .max = 3600,
     .help = "simulated seconds per run and for the battle, 1..3600 (default 40; a run also ends "
             "when the seeker reaches its goal)"},
    {.name = "--threads",
     .metavar = "T",
     .kind = CLI_INT,
     CLI_AT(planner_options_t, threads),
     .max = 1024,
     .help = "runs in parallel, 0..1024 (default 0: every core); the battle world steps on T "
             "threads. Only timings depend on T"},
    {.name = "--no-battle",
     .kind = CLI_FLAG,
     CLI_AT(planner_options_t, no_battle),
     .help = "skip the fleet battle"},
    {.name = "--depth",
     .metavar = "D",
     .kind = CLI_INT,
     CLI_AT(planner_options_t, depth),
     .min = 1,
     .max = 64,
     .help = "every search's max_depth, 1..64 (default: the library's; min_depth is capped at it)"},
    {.name = "--battle-only",
     .kind = CLI_FLAG,
     CLI_AT(planner_options_t, battle_only),
     .help = "only the fleet battle (no Figure 6 and 7 runs)"},
    {.name = "--json",
     .kind = CLI_FLAG,
     CLI_AT(planner_options_t, json),
     .help = "one JSON object instead of the tables"},
};

static const cli_spec_t planner_spec = {
    .command = "experiment planner",
    .usage = "[options]",
    .about = "The experiments of section 4 of the trim-trajectory planning paper (online\n"
             "path planning over pre-integrated trim trajectories) with planner agents:\n"
             "Figure 6 (mean goodness of the chosen path segments and collisions in five\n"
             "configurations, for single-step, uniform and adaptive search), Figure 7 (ms\n"
             "per search of a single ship, 2D with 17 controls and 3D with 121) and the 15\n"
             "against 15 fleet battle.\n",
    .options = planner_options,
    .option_count = CLI_COUNT(planner_options),
};

static int experiment_planner(int argc, char** argv)
{
    planner_options_t opt = {.runs = 60, .seconds = 40};
    int stop = cli_parse(&planner_spec, argc, argv, &opt, NULL, NULL);
    if (stop >= 0) return stop;
    int64_t runs = opt.runs, seconds = opt.seconds, threads = opt.threads;
    int json = opt.json, battle = !opt.no_battle;
    if (opt.battle_only && opt.no_battle) {
        cli_error("--battle-only and --no-battle leave nothing to run");
        return CLI_EXIT_USAGE;
    }
#ifdef _OPENMP
    if (threads == 0) threads = omp_get_num_procs();
#else
    threads = 1;
#endif
    if (threads < 1) threads = 1;

    summary_t* m = calloc(1, sizeof *m);
    const int n_runs = (int)runs;
    const int jobs = opt.battle_only ? 0 : CONFIGS * STRATEGIES * n_runs;
    run_result_t* results = calloc((size_t)(jobs > 0 ? jobs : 1), sizeof *results);
    if (!m || !results) {
        free(m);
        free(results);
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    m->runs = n_runs;
    m->seconds = (int)seconds;
    m->threads = (int)threads;
    m->battle = battle;
    m->figures = jobs > 0;
    /* The library's defaults (adaptive: every control at the root, then a
     * steep collapse; see plan_params_default for why). */
    m->planner = shoal_planner_default();
    if (opt.depth > 0) {
        m->planner.max_depth = (int32_t)opt.depth;
        if (m->planner.min_depth > m->planner.max_depth) m->planner.min_depth = m->planner.max_depth;
    }

    /* Costly jobs first (3D before 2D, uniform first), so the dynamic
     * schedule ends evenly; results land by (config, strategy, run). */
    static const config_id_t order_c[CONFIGS] = {CFG_PURSUE_3D, CFG_MEET_3D, CFG_SEEK_3D, CFG_PURSUE_2D,
                                                 CFG_SEEK_2D};
    static const int order_s[STRATEGIES] = {1, 2, 0};
    const int progress = isatty(STDERR_FILENO) && !json;
    const shoal_planner_t* base = &m->planner;
    int done = 0;
    double t0 = cli_now_seconds();
#pragma omp parallel for schedule(dynamic, 1) num_threads((int)threads)
    for (int j = 0; j < jobs; ++j) {
        int run = j % n_runs;
        int s = order_s[(j / n_runs) % STRATEGIES];
        config_id_t c = order_c[j / (n_runs * STRATEGIES)];
        run_config(c, s, run, (double)seconds, base, &results[((int)c * STRATEGIES + s) * n_runs + run]);
        if (progress) {
#pragma omp critical
            {
                ++done;
                fprintf(stderr, "\rplanner experiment: %d/%d runs", done, jobs);
                fflush(stderr);
            }
        }
    }
    if (progress) fprintf(stderr, "\r%60s\r", "");
    m->wall_runs = cli_now_seconds() - t0;

    int rc = CLI_EXIT_OK;
    for (int j = 0; j < jobs && rc == CLI_EXIT_OK; ++j)
        if (results[j].failed) {
            cli_error("%s", results[j].err);
            rc = CLI_EXIT_FAILURE;
        }
    if (rc == CLI_EXIT_OK && jobs > 0) summarize(m, results);
    free(results);

    if (rc == CLI_EXIT_OK && battle) {
        double tb = cli_now_seconds();
        for (int s = 0; s < STRATEGIES && rc == CLI_EXIT_OK; ++s) {
            run_battle(s, (double)seconds, (int)threads, base, &m->bt[s]);
            if (m->bt[s].failed) {
                cli_error("battle: %s", m->bt[s].err);
                rc = CLI_EXIT_FAILURE;
            }
        }
        m->wall_battle = cli_now_seconds() - tb;
    }
    if (rc == CLI_EXIT_OK) {
        if (json)
            print_json(m);
        else
            print_tables(m);
    }
    free(m);
    return rc;
}

const cli_command_t cli_experiment_planner = {"planner",
                                              "planner agents: Figures 6 and 7 of the paper on "
                                              "pre-integrated trim\ntrajectories and a 15 v 15 fleet battle",
                                              experiment_planner};
