/* Extending shoal the way an engine would (docs/extending.md), through the
 * installed package only (<shoal/shoal.h>, which includes shoal/extend.h).
 *
 * A game gives its units stamina: a user component "energy" (one f32 per
 * agent, starting at 100) that two systems of the game's own run on the
 * library's workers:
 *   - "drain" (integrate stage, every agent): energy falls with the distance
 *     run this step, and an "odometer" component (f32) adds that distance up;
 *   - "rest" (decide stage, every agent): a unit out of energy brakes: its
 *     desired velocity (the one built-in column a decide-stage system may
 *     write) becomes zero.
 * The units come in with two bulk adds: runners (wander at 2 m/s, keeping
 * apart) and sentries (no behavior, standing still), each with its own
 * position and group from the game's arrays. After the run the game reads the columns in place (no
 * copy), checking the structure version before it trusts a pointer, and
 * maps rows back to its units through the row handles.
 *
 * The same game runs on 1 and on 2 threads; it must give one state hash
 * (the user components are part of it) and one energy total.
 *
 * Exit status: 0 on success, 1 if a shoal call fails or a check does not
 * hold (each failed check is printed). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/shoal.h>

enum {
    RUNNERS = 6000,
    SENTRIES = 2000,
    STEPS = 240, /* 4 s at 60 Hz */
    GROUP_RUNNER = 0,
    GROUP_SENTRY = 1
};

static const float STEP_DT = 1.0f / 60.0f;
static const float FULL = 100.0f;       /* energy at the start */
static const float DRAIN_PER_M = 20.0f; /* energy per metre run: a runner at 2 m/s empties in 2.5 s */
static const float ARENA = 120.0f;      /* m: the torus box's side */

/* What every system callback needs: the step's dt (callbacks get none). */
typedef struct game_ctx_t {
    float dt;
} game_ctx_t;

/* A column by name, inside a callback: between the stage boundaries of one
 * step rows do not move, so the pointer is good for this block. */
static void* column(shoal_world_t* w, const char* name)
{
    shoal_column_t c;
    return shoal_world_column(w, name, &c) == SHOAL_OK ? c.data : NULL;
}

/* Integrate stage, after the built-in integration: this step's velocity is
 * final. Writes only this block's rows of the game's own columns. */
static void drain(shoal_world_t* w, const shoal_block_t* b, void* user_ctx)
{
    const game_ctx_t* ctx = user_ctx;
    float* energy = column(w, "energy");
    float* odometer = column(w, "odometer");
    const float* vx = column(w, "velocity.x");
    const float* vy = column(w, "velocity.y");
    if (!energy || !odometer || !vx || !vy) return; /* cannot happen: both were added first */
    for (int32_t i = b->first; i < b->first + b->count; ++i) {
        float run = sqrtf(vx[i] * vx[i] + vy[i] * vy[i]) * ctx->dt;
        odometer[i] += run;
        energy[i] = fmaxf(0.0f, energy[i] - DRAIN_PER_M * run);
    }
}

/* Decide stage, after the built-in behaviors summed the desired velocity:
 * an exhausted unit wants to stand still, whatever they asked for. */
static void rest(shoal_world_t* w, const shoal_block_t* b, void* user_ctx)
{
    (void)user_ctx;
    const float* energy = column(w, "energy");
    float* dx = column(w, "desired.x");
    float* dy = column(w, "desired.y");
    if (!energy || !dx || !dy) return;
    for (int32_t i = b->first; i < b->first + b->count; ++i) {
        if (energy[i] > 0.0f) continue;
        dx[i] = 0.0f;
        dy[i] = 0.0f;
    }
}

/* A tiny generator of the game's own, for the spawn points. */
static float spawn_coordinate(uint32_t* state)
{
    *state = *state * 1664525u + 1013904223u;
    return ARENA * (float)(*state >> 8) / 16777216.0f;
}

static int fail(shoal_world_t* w, const char* call, shoal_status_t status)
{
    fprintf(stderr, "custom_system: %s failed (%s): %s\n", call, shoal_status_string(status),
            w ? shoal_world_last_error(w) : "");
    return 1;
}

/* In play(): a failed call reports and leaves through `done`. */
#define CHECK(w, call)                                                                                       \
    do {                                                                                                     \
        shoal_status_t status_ = (call);                                                                     \
        if (status_ != SHOAL_OK) {                                                                           \
            rc = fail((w), #call, status_);                                                                  \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)

static int expect(int condition, const char* what, int threads)
{
    if (!condition) fprintf(stderr, "custom_system: check failed on %d thread(s): %s\n", threads, what);
    return !condition;
}

/* What one run leaves, to compare across thread counts. */
typedef struct outcome_t {
    uint64_t hash;
    double energy_total;
    int32_t exhausted;
} outcome_t;

/* Adds `count` agents of `def` in one call, at positions of the game's. */
static shoal_status_t add_units(shoal_world_t* w, const shoal_agent_def_t* def, int32_t count, uint32_t group,
                                uint32_t* rng)
{
    float* positions = malloc((size_t)count * 3 * sizeof(float));
    uint32_t* groups = malloc((size_t)count * sizeof(uint32_t));
    if (!positions || !groups) {
        free(positions);
        free(groups);
        return SHOAL_ERR_OUT_OF_MEMORY;
    }
    for (int32_t i = 0; i < count; ++i) {
        positions[3 * i] = spawn_coordinate(rng);
        positions[3 * i + 1] = spawn_coordinate(rng);
        positions[3 * i + 2] = 0.0f;
        groups[i] = group;
    }
    shoal_agent_arrays_t arrays;
    memset(&arrays, 0, sizeof arrays);
    arrays.positions = positions;
    arrays.groups = groups;
    shoal_status_t st = shoal_agents_add(w, def, &arrays, count, NULL);
    free(positions);
    free(groups);
    return st;
}

static int play(int32_t threads, outcome_t* out)
{
    shoal_world_def_t wd = shoal_world_default_def();
    wd.thread_count = threads;
    wd.wrap = 1;
    wd.bounds_max[0] = wd.bounds_max[1] = ARENA;
    wd.reorder_interval = 16; /* rows move during the run: pointers must be re-taken */
    shoal_world_t* w = NULL;
    shoal_error_t err;
    if (shoal_world_create(&wd, &w, &err) != SHOAL_OK) {
        fprintf(stderr, "custom_system: shoal_world_create: %s\n", err.message);
        return 1;
    }
    int rc = 1;
    game_ctx_t ctx = {STEP_DT};

    /* The game's components, before any agent: every agent gets them. */
    float zero = 0.0f;
    shoal_component_def_t energy = {"energy", SHOAL_COLUMN_F32, 1, &FULL};
    shoal_component_def_t odometer = {"odometer", SHOAL_COLUMN_F32, 1, &zero};
    shoal_status_t st;
    if ((st = shoal_world_add_component(w, &energy)) != SHOAL_OK ||
        (st = shoal_world_add_component(w, &odometer)) != SHOAL_OK) {
        rc = fail(w, "shoal_world_add_component", st);
        goto done;
    }
    if ((st = shoal_world_add_parallel_system(w, "rest", SHOAL_STAGE_DECIDE, NULL, 512, rest, &ctx)) !=
            SHOAL_OK ||
        (st = shoal_world_add_parallel_system(w, "drain", SHOAL_STAGE_INTEGRATE, NULL, 512, drain, &ctx)) !=
            SHOAL_OK) {
        rc = fail(w, "shoal_world_add_parallel_system", st);
        goto done;
    }

    uint32_t rng = 12345u;
    shoal_agent_def_t runner = shoal_agent_default_def();
    runner.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
    runner.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f; /* neighbors: the sense stage reorders rows */
    runner.neighbors.radius = 2.0f;
    runner.wander.cruise_speed = 2.0f;
    runner.vehicle.max_speed = 3.0f;
    shoal_agent_def_t sentry = shoal_agent_default_def(); /* no behavior: stands still */
    if ((st = add_units(w, &runner, RUNNERS, GROUP_RUNNER, &rng)) != SHOAL_OK ||
        (st = add_units(w, &sentry, SENTRIES, GROUP_SENTRY, &rng)) != SHOAL_OK) {
        rc = fail(w, "shoal_agents_add", st);
        goto done;
    }

    /* A pointer taken now is stale as soon as rows move. */
    shoal_column_t before;
    CHECK(w, shoal_world_column(w, "energy", &before));
    for (int s = 0; s < STEPS; ++s) CHECK(w, shoal_world_step(w, STEP_DT));
    int bad = expect(shoal_world_structure_version(w) != before.version,
                     "the reorders changed the structure version", threads);

    /* Zero-copy reads, at the version of now. */
    shoal_column_t e, odo, group, vx, vy;
    CHECK(w, shoal_world_column(w, "energy", &e));
    CHECK(w, shoal_world_column(w, "odometer", &odo));
    CHECK(w, shoal_world_column(w, "group", &group));
    CHECK(w, shoal_world_column(w, "velocity.x", &vx));
    CHECK(w, shoal_world_column(w, "velocity.y", &vy));
    bad |= expect(e.version == shoal_world_structure_version(w), "a fresh column has the current version",
                  threads);
    bad |= expect(e.count == RUNNERS + SENTRIES && e.type == SHOAL_COLUMN_F32 && e.writable,
                  "energy: one writable f32 per agent", threads);
    const float* energy_of = e.data;
    const float* odometer_of = odo.data;
    const uint32_t* group_of = group.data;
    const float *vxs = vx.data, *vys = vy.data;

    /* Per group: how much energy is left, how far they ran, how fast the
     * exhausted runners still go. Sums in row order (deterministic). */
    double left[2] = {0.0, 0.0}, ran[2] = {0.0, 0.0}, exhausted_speed = 0.0;
    int32_t count[2] = {0, 0}, exhausted = 0, ledger_errors = 0;
    for (int32_t i = 0; i < e.count; ++i) {
        int g = group_of[i] == GROUP_SENTRY;
        count[g]++;
        left[g] += energy_of[i];
        ran[g] += odometer_of[i];
        /* The ledger: energy spent is what the distance run costs, until empty. */
        float expected = fmaxf(0.0f, FULL - DRAIN_PER_M * odometer_of[i]);
        if (fabsf(energy_of[i] - expected) > 0.05f + 1e-4f * DRAIN_PER_M * odometer_of[i]) ledger_errors++;
        if (energy_of[i] <= 0.0f) {
            exhausted++;
            exhausted_speed += hypot(vxs[i], vys[i]);
        }
    }
    bad |= expect(count[0] == RUNNERS && count[1] == SENTRIES, "the group column counts both bulk adds",
                  threads);
    bad |= expect(left[1] == (double)FULL * SENTRIES && ran[1] == 0.0, "sentries stood still at full energy",
                  threads);
    bad |= expect(left[0] < 0.5 * FULL * RUNNERS, "runners spent more than half their energy", threads);
    bad |= expect(ledger_errors == 0, "every agent's energy matches its odometer", threads);
    bad |= expect(exhausted > RUNNERS / 2, "most runners ran out of energy", threads);
    bad |= expect(exhausted > 0 && exhausted_speed / exhausted < 0.5,
                  "exhausted runners braked (mean speed under 0.5 m/s)", threads);

    /* Rows back to handles: the handle of row 0 names the agent at row 0. */
    shoal_agent_t first;
    CHECK(w, shoal_world_row_handles(w, 0, 1, &first));
    bad |= expect(shoal_agent_row(w, first) == 0, "row handles and rows agree", threads);

    /* The game's systems are timed like the built-in ones. */
    int timed = 0;
    for (int32_t i = 0; i < shoal_world_system_count(w); ++i) {
        shoal_system_stats_t stats;
        CHECK(w, shoal_world_system_stats(w, i, &stats));
        if ((!strcmp(stats.name, "drain") || !strcmp(stats.name, "rest")) && stats.calls == STEPS) timed++;
    }
    bad |= expect(timed == 2, "drain and rest ran once a step, timed", threads);

    out->hash = shoal_world_state_hash(w);
    out->energy_total = left[0] + left[1];
    out->exhausted = exhausted;
    printf("custom_system: %d thread(s): %d runners ran %.0f m, %d exhausted (mean speed %.2f m/s), "
           "energy left %.0f of %.0f, state hash %016llx\n",
           (int)shoal_world_thread_count(w), count[0], ran[0], exhausted,
           exhausted ? exhausted_speed / exhausted : 0.0, out->energy_total,
           (double)FULL * (RUNNERS + SENTRIES), (unsigned long long)out->hash);
    rc = bad;
done:
    shoal_world_destroy(w);
    return rc;
}

int main(void)
{
    outcome_t one, two;
    if (play(1, &one) != 0 || play(2, &two) != 0) return 1;
    int bad = 0;
    if (one.hash != two.hash || one.energy_total != two.energy_total || one.exhausted != two.exhausted) {
        fprintf(
            stderr, "custom_system: 1 and 2 threads disagree: hash %016llx vs %016llx, energy %.3f vs %.3f\n",
            (unsigned long long)one.hash, (unsigned long long)two.hash, one.energy_total, two.energy_total);
        bad = 1;
    }
    if (!bad) printf("custom_system: ok, the same world on 1 and 2 threads\n");
    return bad;
}
