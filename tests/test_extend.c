/* The extension API (include/shoal/extend.h): bulk adds equal adds one at a
 * time, user components follow their agents, parallel user systems give one
 * hash for any thread count and backend, the structural version tells a
 * stale pointer, and bad input changes nothing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <shoal/snapshot.h>

#include "support.h"

#define N 3000

/* Per-agent arrays for N agents, fixed by seed. */
typedef struct arrays_t {
    float pos[3 * N], vel[3 * N], head[N], tgt[3 * N], pitch[N];
    uint64_t user[N];
} arrays_t;

static void fill_arrays(arrays_t* a, int dims, uint64_t seed)
{
    for (int i = 0; i < N; ++i) {
        for (int k = 0; k < 3; ++k) {
            a->pos[3 * i + k] = k < dims ? rng_range(seed, (uint64_t)i, 0, (uint32_t)k, -60.0f, 60.0f) : 0.0f;
            a->vel[3 * i + k] = k < dims ? rng_range(seed, (uint64_t)i, 1, (uint32_t)k, -2.0f, 2.0f) : 0.0f;
            a->tgt[3 * i + k] = k < dims ? rng_range(seed, (uint64_t)i, 2, (uint32_t)k, -60.0f, 60.0f) : 0.0f;
        }
        a->head[i] = rng_range(seed, (uint64_t)i, 3, 0, -3.0f, 3.0f);
        a->pitch[i] = dims == 3 ? rng_range(seed, (uint64_t)i, 3, 1, -0.8f, 0.8f) : 0.0f;
        a->user[i] = 1000 + (uint64_t)i;
    }
}

static shoal_agent_def_t flock_def(void)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
    return d;
}

/* The same population, one add at a time or in bulk; some removes first so
 * that slots come from the free list too. */
static shoal_world_t* populate(int dims, int bulk, const arrays_t* a)
{
    shoal_world_t* w = make_world(dims, 2, SHOAL_BACKEND_OPENMP);
    shoal_agent_def_t d = flock_def();
    shoal_agent_t first[20];
    for (int i = 0; i < 20; ++i) cr_assert_eq(shoal_agent_add(w, &d, &first[i]), SHOAL_OK);
    for (int i = 0; i < 20; i += 3) cr_assert_eq(shoal_agent_remove(w, first[i]), SHOAL_OK);
    if (bulk) {
        shoal_agent_arrays_t arr = {.positions = a->pos,
                                    .velocities = a->vel,
                                    .headings = a->head,
                                    .targets = a->tgt,
                                    .user_values = a->user,
                                    .pitches = a->pitch};
        cr_assert_eq(shoal_agents_add(w, &d, &arr, N, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    } else {
        for (int i = 0; i < N; ++i) {
            shoal_agent_def_t e = d;
            memcpy(e.position, a->pos + 3 * i, sizeof e.position);
            memcpy(e.velocity, a->vel + 3 * i, sizeof e.velocity);
            memcpy(e.target, a->tgt + 3 * i, sizeof e.target);
            e.heading = a->head[i];
            e.pitch = a->pitch[i];
            e.user_value = a->user[i];
            cr_assert_eq(shoal_agent_add(w, &e, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
    }
    /* Ground vehicles and planner agents in bulk too (2D). */
    if (dims == 2) {
        const float path[] = {-60, 65, 0, 60, 65, 0, 60, 75, 0};
        cr_assert_eq(shoal_world_add_path(w, path, 3, 2.0f, NULL), SHOAL_OK);
        shoal_agent_def_t g = shoal_agent_default_def();
        g.ground.enabled = 1;
        g.ground.follow.path = 0;
        shoal_agent_def_t p = shoal_agent_default_def();
        p.planner.enabled = 1;
        p.planner.goal_point[0] = -40.0f;
        for (int kind = 0; kind < 2; ++kind) {
            shoal_agent_def_t* base = kind ? &p : &g;
            if (bulk) {
                shoal_agent_arrays_t arr = {
                    .positions = a->pos,
                    .headings = a->head,
                };
                cr_assert_eq(shoal_agents_add(w, base, &arr, 8, NULL), SHOAL_OK, "%s",
                             shoal_world_last_error(w));
            } else {
                for (int i = 0; i < 8; ++i) {
                    shoal_agent_def_t e = *base;
                    memcpy(e.position, a->pos + 3 * i, sizeof e.position);
                    e.heading = a->head[i];
                    cr_assert_eq(shoal_agent_add(w, &e, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
                }
            }
        }
    }
    return w;
}

static void bulk_equals_single(int dims)
{
    static arrays_t a;
    fill_arrays(&a, dims, 11);
    shoal_world_t* one = populate(dims, 0, &a);
    shoal_world_t* bulk = populate(dims, 1, &a);
    cr_assert_eq(shoal_world_agent_count(one), shoal_world_agent_count(bulk));
    cr_assert_eq(shoal_world_state_hash(one), shoal_world_state_hash(bulk), "after the adds");
    step_n(one, 40, 1.0f / 60.0f);
    step_n(bulk, 40, 1.0f / 60.0f);
    cr_assert_eq(shoal_world_state_hash(one), shoal_world_state_hash(bulk), "after 40 steps");
    shoal_world_destroy(one);
    shoal_world_destroy(bulk);
}

Test(extend, bulk_add_equals_single_adds_2d) { bulk_equals_single(2); }
Test(extend, bulk_add_equals_single_adds_3d) { bulk_equals_single(3); }

Test(extend, bulk_add_is_all_or_nothing)
{
    static arrays_t a;
    fill_arrays(&a, 2, 3);
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = flock_def();
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    uint64_t h = shoal_world_state_hash(w);
    uint64_t v = shoal_world_structure_version(w);
    a.pos[3 * (N - 1) + 1] = NAN;
    shoal_agent_arrays_t arr = {
        .positions = a.pos,
    };
    cr_assert_eq(shoal_agents_add(w, &d, &arr, N, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "positions[") != NULL, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_agents_add(w, &d, &arr, -1, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agents_add(w, NULL, &arr, 2, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    d.vehicle.mass = -1.0f;
    cr_assert_eq(shoal_agents_add(w, &d, NULL, 2, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_agent_count(w), 1);
    cr_assert_eq(shoal_world_state_hash(w), h);
    cr_assert_eq(shoal_world_structure_version(w), v);
    shoal_world_destroy(w);
}

Test(extend, bulk_remove_and_writes_check_every_handle_first)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = flock_def();
    shoal_agent_t ids[10];
    cr_assert_eq(shoal_agents_add(w, &d, NULL, 10, ids), SHOAL_OK);
    cr_assert_eq(shoal_agent_remove(w, ids[9]), SHOAL_OK);
    uint64_t h = shoal_world_state_hash(w);
    cr_assert_eq(shoal_agents_remove(w, ids, 10), SHOAL_ERR_STALE_HANDLE);
    shoal_agent_t twice[2] = {ids[0], ids[0]};
    cr_assert_eq(shoal_agents_remove(w, twice, 2), SHOAL_ERR_INVALID_ARGUMENT);
    float t[6] = {1, 2, 0, 3, NAN, 0};
    cr_assert_eq(shoal_agents_set_targets(w, ids, 2, t), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agents_teleport(w, ids + 8, 2, t, NULL), SHOAL_ERR_STALE_HANDLE);
    cr_assert_eq(shoal_world_state_hash(w), h, "nothing changed");
    t[4] = 4.0f;
    cr_assert_eq(shoal_agents_set_targets(w, ids, 2, t), SHOAL_OK);
    shoal_agent_def_t got;
    cr_assert_eq(shoal_agent_get_def(w, ids[1], &got), SHOAL_OK);
    cr_assert_eq(got.target[0], 3.0f);
    cr_assert_eq(got.target[1], 4.0f);
    cr_assert_eq(shoal_agents_teleport(w, ids, 2, t, NULL), SHOAL_OK);
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, ids[1], &s), SHOAL_OK);
    cr_assert_eq(s.position[0], 3.0f);
    cr_assert_eq(shoal_agents_remove(w, ids, 5), SHOAL_OK);
    cr_assert_eq(shoal_world_agent_count(w), 4);
    shoal_world_destroy(w);
}

/* ---- user components and parallel systems ---------------------------------- */

/* energy drains with speed: e -= 0.1 * |v| per second (integrate stage). */
static void drain(shoal_world_t* w, const shoal_block_t* b, void* ctx)
{
    (void)ctx;
    shoal_column_t e, vx, vy;
    shoal_world_column(w, "energy", &e);
    shoal_world_column(w, "velocity.x", &vx);
    shoal_world_column(w, "velocity.y", &vy);
    float* ev = (float*)e.data;
    const float* x = (const float*)vx.data;
    const float* y = (const float*)vy.data;
    for (int32_t i = b->first; i < b->first + b->count; ++i)
        ev[i] -= 0.1f * sqrtf(x[i] * x[i] + y[i] * y[i]) * (1.0f / 60.0f);
}

/* Counts the steps each agent with wander was visited (over that component). */
static void visit(shoal_world_t* w, const shoal_block_t* b, void* ctx)
{
    (void)ctx;
    shoal_column_t c;
    shoal_world_column(w, "visits", &c);
    uint32_t* v = (uint32_t*)c.data;
    cr_assert_not_null(b->rows);
    for (int32_t i = 0; i < b->count; ++i) v[b->rows[i]] += 1;
}

static shoal_world_t* energy_world(int threads, shoal_backend_t backend, int host)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = threads;
    def.backend = backend;
    def.seed = 5;
    def.reorder_interval = 4; /* reorders within the run */
    if (host) {
        def.enqueue_task = lazy_enqueue;
        def.finish_task = lazy_finish;
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    float hundred = 100.0f;
    shoal_component_def_t energy = {"energy", SHOAL_COLUMN_F32, 1, &hundred};
    cr_assert_eq(shoal_world_add_component(w, &energy), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_component_def_t visits = {"visits", SHOAL_COLUMN_U32, 1, NULL};
    cr_assert_eq(shoal_world_add_component(w, &visits), SHOAL_OK);
    shoal_component_def_t id = {"id", SHOAL_COLUMN_U64, 1, NULL};
    cr_assert_eq(shoal_world_add_component(w, &id), SHOAL_OK);
    populate_mixed(w, 4000, 3);
    static arrays_t a;
    fill_arrays(&a, 2, 9);
    shoal_agent_def_t flock = flock_def();
    shoal_agent_arrays_t arr = {
        .positions = a.pos,
        .velocities = a.vel,
        .headings = a.head,
        .targets = a.tgt,
    };
    cr_assert_eq(shoal_agents_add(w, &flock, &arr, 1000, NULL), SHOAL_OK); /* separation: the grid reorders */
    cr_assert_eq(shoal_world_add_parallel_system(w, "drain", SHOAL_STAGE_INTEGRATE, NULL, 256, drain, NULL),
                 SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_add_parallel_system(w, "visit", SHOAL_STAGE_DECIDE, "pursuit", 64, visit, NULL),
                 SHOAL_OK, "%s", shoal_world_last_error(w));
    /* Each agent's "id" is its user value... written through the column. */
    shoal_column_t c;
    cr_assert_eq(shoal_world_column(w, "id", &c), SHOAL_OK);
    cr_assert_eq(c.width, 1);
    cr_assert(c.writable);
    shoal_agent_t* h = malloc(sizeof *h * (size_t)c.count);
    cr_assert_eq(shoal_world_row_handles(w, 0, c.count, h), SHOAL_OK);
    for (int32_t i = 0; i < c.count; ++i) ((uint64_t*)c.data)[i] = 7000 + h[i].index1;
    free(h);
    return w;
}

Test(extend, user_components_follow_agents_and_parallel_systems_are_deterministic)
{
    uint64_t hashes[4];
    for (int run = 0; run < 4; ++run) {
        int threads = run == 0 ? 1 : run == 1 ? 2 : 3;
        shoal_world_t* w = energy_world(threads,
                                        run == 0   ? SHOAL_BACKEND_SERIAL
                                        : run == 3 ? SHOAL_BACKEND_HOST
                                                   : SHOAL_BACKEND_OPENMP,
                                        run == 3);
        uint64_t v0 = shoal_world_structure_version(w);
        step_n(w, 30, 1.0f / 60.0f);
        cr_assert_neq(shoal_world_structure_version(w), v0, "reorders moved rows");
        /* remove some agents, add some: the columns follow */
        shoal_agent_t h[64];
        cr_assert_eq(shoal_world_row_handles(w, 100, 64, h), SHOAL_OK);
        cr_assert_eq(shoal_agents_remove(w, h, 64), SHOAL_OK);
        shoal_agent_def_t d = shoal_agent_default_def();
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        shoal_agent_t added[5];
        cr_assert_eq(shoal_agents_add(w, &d, NULL, 5, added), SHOAL_OK);
        step_n(w, 30, 1.0f / 60.0f);
        shoal_column_t e, id, visits;
        cr_assert_eq(shoal_world_column(w, "energy", &e), SHOAL_OK);
        cr_assert_eq(shoal_world_column(w, "id", &id), SHOAL_OK);
        cr_assert_eq(shoal_world_column(w, "visits", &visits), SHOAL_OK);
        shoal_agent_t* rows = malloc(sizeof *rows * (size_t)e.count);
        cr_assert_eq(shoal_world_row_handles(w, 0, e.count, rows), SHOAL_OK);
        int added_seen = 0, visited = 0;
        for (int32_t i = 0; i < e.count; ++i) {
            uint64_t want = 7000 + rows[i].index1;
            int is_new = 0;
            for (int k = 0; k < 5; ++k) is_new |= shoal_agent_equal(rows[i], added[k]);
            float ev = ((float*)e.data)[i];
            if (is_new) {
                added_seen++;
                cr_assert_eq(((uint64_t*)id.data)[i], 0u, "a new agent starts from the default");
                cr_assert(ev <= 100.0f && ev > 99.0f, "new agent energy %g", (double)ev);
            } else {
                cr_assert_eq(((uint64_t*)id.data)[i], want, "row %d: the id followed its agent", (int)i);
                cr_assert(ev < 100.0f, "energy drained: %g", (double)ev);
            }
            shoal_agent_def_t def;
            cr_assert_eq(shoal_agent_get_def(w, rows[i], &def), SHOAL_OK);
            int pursues =
                def.weights[SHOAL_BEHAVIOR_PURSUE] != 0.0f || def.weights[SHOAL_BEHAVIOR_EVADE] != 0.0f;
            uint32_t vs = ((uint32_t*)visits.data)[i];
            if (!pursues) cr_assert_eq(vs, 0u, "only agents with the component are visited");
            visited += vs > 0;
        }
        free(rows);
        cr_assert_eq(added_seen, 5);
        (void)visited;
        hashes[run] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    for (int run = 1; run < 4; ++run) cr_assert_eq(hashes[run], hashes[0], "run %d", run);
}

Test(extend, parallel_system_over_a_component_visits_exactly_its_agents)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    shoal_component_def_t visits = {"visits", SHOAL_COLUMN_U32, 1, NULL};
    cr_assert_eq(shoal_world_add_component(w, &visits), SHOAL_OK);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    cr_assert_eq(shoal_agents_add(w, &d, NULL, 500, NULL), SHOAL_OK);
    d.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
    cr_assert_eq(shoal_agents_add(w, &d, NULL, 300, NULL), SHOAL_OK);
    cr_assert_eq(shoal_world_add_parallel_system(w, "visit", SHOAL_STAGE_DECIDE, "pursuit", 16, visit, NULL),
                 SHOAL_OK);
    step_n(w, 3, 1.0f / 60.0f);
    shoal_column_t c;
    cr_assert_eq(shoal_world_column(w, "visits", &c), SHOAL_OK);
    int32_t thrice = 0;
    for (int32_t i = 0; i < c.count; ++i) {
        uint32_t v = ((uint32_t*)c.data)[i];
        cr_assert(v == 0 || v == 3, "row %d visited %u times", (int)i, v);
        thrice += v == 3;
    }
    cr_assert_eq(thrice, 300);
    shoal_system_stats_t st;
    int found = 0;
    for (int i = 0; i < shoal_world_system_count(w); ++i) {
        cr_assert_eq(shoal_world_system_stats(w, i, &st), SHOAL_OK);
        if (strcmp(st.name, "visit") == 0) {
            found = 1;
            cr_assert_eq(st.calls, 3u);
            cr_assert_eq(st.agents, 900u, "timed like built-in systems, agents counted");
        }
    }
    cr_assert(found);
    shoal_world_destroy(w);
}

/* Failing queries from inside blocks: rows 777, 1777, ... ask for a column
 * that does not exist (named after the row), rows 900, 1900, ... for the
 * row of the null handle. Each call must fail with its own status; a wrong
 * one is marked in the row's "bad" (the block's own rows only). */
static void probe(shoal_world_t* w, const shoal_block_t* b, void* ctx)
{
    (void)ctx;
    shoal_column_t bad;
    if (shoal_world_column(w, "bad", &bad) != SHOAL_OK) return; /* leaves "bad" 0: caught below */
    for (int32_t i = b->first; i < b->first + b->count; ++i) {
        if (i % 1000 == 777) {
            char name[32];
            snprintf(name, sizeof name, "row%d", (int)i);
            shoal_column_t c;
            if (shoal_world_column(w, name, &c) != SHOAL_ERR_NOT_FOUND) ((uint32_t*)bad.data)[i] = 1;
        } else if (i % 1000 == 900) {
            shoal_agent_t none = {0, 0, 0};
            if (shoal_agent_row(w, none) != -1) ((uint32_t*)bad.data)[i] = 1;
        }
        ((uint32_t*)bad.data)[i] |= 2; /* visited */
    }
}

/* Errors raised by calls made inside a parallel system's blocks: the
 * workers never write the world's one message at once (under TSan, a race
 * before), and after the system the world holds the first error of the
 * lowest block that raised one, the error of row 777 here, for any thread
 * count, backend and block split; the step itself succeeds. */
Test(extend, errors_inside_parallel_blocks_are_kept_per_worker_and_reported_after_the_system)
{
    /* Most threads first: under TSan the race is what a run before the fix
     * reports, rather than the wrong message of a serial run. */
    for (int run = 0; run < 5; ++run) {
        int threads = run == 0 ? 4 : run == 1 ? 3 : run == 2 ? 2 : run == 3 ? 2 : 1;
        shoal_backend_t backend = run == 3   ? SHOAL_BACKEND_HOST
                                  : run == 4 ? SHOAL_BACKEND_SERIAL
                                             : SHOAL_BACKEND_OPENMP;
        shoal_world_def_t def = shoal_world_default_def();
        def.thread_count = threads;
        def.backend = backend;
        def.seed = 3;
        if (backend == SHOAL_BACKEND_HOST) {
            def.enqueue_task = lazy_enqueue;
            def.finish_task = lazy_finish;
        }
        shoal_world_t* w = NULL;
        shoal_error_t err;
        cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
        shoal_component_def_t bad = {"bad", SHOAL_COLUMN_U32, 1, NULL};
        cr_assert_eq(shoal_world_add_component(w, &bad), SHOAL_OK);
        shoal_agent_def_t d = flock_def();
        cr_assert_eq(shoal_agents_add(w, &d, NULL, 4000, NULL), SHOAL_OK);
        cr_assert_eq(shoal_world_add_parallel_system(w, "probe", SHOAL_STAGE_DECIDE, NULL, 64, probe, NULL),
                     SHOAL_OK);
        for (int step = 0; step < 3; ++step) {
            cr_assert_eq(shoal_world_column(w, "before", &(shoal_column_t){0}), SHOAL_ERR_NOT_FOUND);
            cr_assert_eq(shoal_world_step(w, 1.0f / 60.0f), SHOAL_OK, "run %d: %s", run,
                         shoal_world_last_error(w));
            const char* msg = shoal_world_last_error(w);
            cr_assert_str_eq(
                msg,
                "system 'probe': world_column: no column named 'row777' (built-in columns such as "
                "position.x, velocity.x, heading, desired.x, or a user component)",
                "run %d (%d threads) step %d: %s", run, threads, step, msg);
        }
        shoal_column_t c;
        cr_assert_eq(shoal_world_column(w, "bad", &c), SHOAL_OK);
        for (int32_t i = 0; i < c.count; ++i)
            cr_assert_eq(((uint32_t*)c.data)[i], 2u, "run %d row %d: %u", run, (int)i,
                         ((uint32_t*)c.data)[i]);
        shoal_world_destroy(w);
    }
}

Test(extend, structural_version_tells_a_stale_pointer)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.reorder_interval = 0; /* never reorders */
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    shoal_agent_def_t d = flock_def();
    shoal_agent_t ids[100];
    cr_assert_eq(shoal_agents_add(w, &d, NULL, 100, ids), SHOAL_OK);
    shoal_column_t c;
    cr_assert_eq(shoal_world_column(w, "position.x", &c), SHOAL_OK);
    cr_assert_not(c.writable, "positions are written by integration only");
    cr_assert_eq(c.version, shoal_world_structure_version(w));
    step_n(w, 5, 1.0f / 60.0f);
    cr_assert_eq(shoal_world_structure_version(w), c.version, "steps without reorders move no row");
    cr_assert_eq(shoal_agent_remove(w, ids[3]), SHOAL_OK);
    cr_assert_neq(shoal_world_structure_version(w), c.version, "a remove moves rows");
    uint64_t v = shoal_world_structure_version(w);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    cr_assert_neq(shoal_world_structure_version(w), v, "an add moves rows");
    /* the row of an agent and its handle agree */
    int32_t r = shoal_agent_row(w, ids[50]);
    shoal_agent_t back;
    cr_assert_eq(shoal_world_row_handles(w, r, 1, &back), SHOAL_OK);
    cr_assert(shoal_agent_equal(back, ids[50]));
    cr_assert_eq(shoal_agent_row(w, ids[3]), -1, "a removed agent has no row");
    shoal_world_destroy(w);
}

static shoal_status_t add_in_step(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    shoal_status_t* out = (shoal_status_t*)ctx;
    shoal_component_def_t c = {"late", SHOAL_COLUMN_F32, 1, NULL};
    out[0] = shoal_world_add_component(w, &c);
    shoal_agent_def_t d = shoal_agent_default_def();
    out[1] = shoal_agents_add(w, &d, NULL, 1, NULL);
    out[2] = shoal_world_add_parallel_system(w, "late", SHOAL_STAGE_OBSERVE, NULL, 0, drain, NULL);
    return SHOAL_OK;
}

Test(extend, bad_input_is_refused_and_changes_nothing)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = flock_def();
    cr_assert_eq(shoal_agents_add(w, &d, NULL, 10, NULL), SHOAL_OK);
    uint64_t h = shoal_world_state_hash(w);
    shoal_column_t c;
    cr_assert_eq(shoal_world_column(w, "no.such", &c), SHOAL_ERR_NOT_FOUND);
    cr_assert_eq(shoal_world_column(w, "position.z", &c), SHOAL_ERR_NOT_FOUND, "2D world");
    cr_assert_eq(shoal_world_column(w, NULL, &c), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_column(w, "heading", NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_column(NULL, "heading", &c), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_component_def_t bad[] = {
        {"", SHOAL_COLUMN_F32, 1, NULL},           {"has space", SHOAL_COLUMN_F32, 1, NULL},
        {"position.x", SHOAL_COLUMN_F32, 1, NULL}, {"ok", (shoal_column_type_t)9, 1, NULL},
        {"ok", SHOAL_COLUMN_F32, 0, NULL},         {"ok", SHOAL_COLUMN_F32, 17, NULL},
        {NULL, SHOAL_COLUMN_F32, 1, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        cr_assert_eq(shoal_world_add_component(w, &bad[i]), SHOAL_ERR_INVALID_ARGUMENT, "case %zu", i);
    cr_assert_eq(shoal_world_add_component(w, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_component_def_t ok = {"ok", SHOAL_COLUMN_F32, 3, NULL};
    cr_assert_eq(shoal_world_add_component(w, &ok), SHOAL_OK);
    cr_assert_eq(shoal_world_add_component(w, &ok), SHOAL_ERR_INVALID_ARGUMENT, "duplicate");
    cr_assert_eq(shoal_world_component_count(w), 1);
    cr_assert_eq(shoal_world_add_parallel_system(w, "x", SHOAL_STAGE_DECIDE, "nope", 0, drain, NULL),
                 SHOAL_ERR_NOT_FOUND);
    cr_assert_eq(shoal_world_add_parallel_system(w, "x", SHOAL_STAGE_DECIDE, NULL, 0, NULL, NULL),
                 SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_add_parallel_system(w, "x", SHOAL_STAGE_DECIDE, NULL, -1, drain, NULL),
                 SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_add_parallel_system(w, "steer", SHOAL_STAGE_DECIDE, NULL, 0, drain, NULL),
                 SHOAL_ERR_INVALID_ARGUMENT, "a built-in name");
    shoal_agent_t out[2];
    cr_assert_eq(shoal_world_row_handles(w, 9, 2, out), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_row_handles(w, -1, 1, out), SHOAL_ERR_INVALID_ARGUMENT);
    /* inside a step */
    shoal_status_t st[3];
    cr_assert_eq(shoal_world_add_system(w, "try", SHOAL_STAGE_OBSERVE, add_in_step, st), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 1.0f / 60.0f), SHOAL_OK);
    for (int i = 0; i < 3; ++i) cr_assert_eq(st[i], SHOAL_ERR_BUSY, "call %d inside a step", i);
    cr_assert_eq(shoal_world_component_count(w), 1);
    cr_assert_eq(shoal_world_agent_count(w), 10);
    (void)h;
    /* user components change the hash, and snapshots refuse them for now */
    shoal_column_t u;
    cr_assert_eq(shoal_world_column(w, "ok", &u), SHOAL_OK);
    uint64_t before = shoal_world_state_hash(w);
    ((float*)u.data)[3 * 4 + 1] = 2.5f;
    cr_assert_neq(shoal_world_state_hash(w), before);
    shoal_world_destroy(w);
}

/* User components go into snapshots and come back bit for bit: the loaded
 * world has the same hash and steps on to the same hash. */
Test(extend, user_components_are_saved_in_snapshots)
{
    shoal_world_t* w = energy_world(2, SHOAL_BACKEND_OPENMP, 0);
    shoal_component_def_t wide = {"wide", SHOAL_COLUMN_U64, 3, NULL};
    cr_assert_eq(shoal_world_add_component(w, &wide), SHOAL_OK);
    step_n(w, 10, 1.0f / 60.0f);
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 2;
    shoal_world_t* back = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, &def, &back, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_component_count(back), 4);
    cr_assert_eq(shoal_world_state_hash(back), shoal_world_state_hash(w));
    /* the user systems are the caller's to add again */
    cr_assert_eq(
        shoal_world_add_parallel_system(back, "drain", SHOAL_STAGE_INTEGRATE, NULL, 256, drain, NULL),
        SHOAL_OK);
    cr_assert_eq(
        shoal_world_add_parallel_system(back, "visit", SHOAL_STAGE_DECIDE, "pursuit", 64, visit, NULL),
        SHOAL_OK);
    step_n(w, 10, 1.0f / 60.0f);
    step_n(back, 10, 1.0f / 60.0f);
    cr_assert_eq(shoal_world_state_hash(back), shoal_world_state_hash(w));
    /* a damaged description is refused */
    size_t again = 0;
    void* buf2 = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(back, buf2, size, &again), SHOAL_OK);
    free(buf2);
    free(buf);
    shoal_world_destroy(back);
    shoal_world_destroy(w);
}

/* The step table is the one registration: the systems are listed in step
 * order (shoal run --stats prints this list), stage by stage, and user
 * systems come after the built-in ones of their stage. */
Test(extend, systems_are_listed_in_step_order)
{
    static const char* const order[] = {"spatial_hash",  "nav_fields",
                                        "navmesh_paths", "measure_start",
                                        "steer",         "neighbors",
                                        "wander",        "pursuit",
                                        "follow",        "dseek",
                                        "navigate",      "nav_journeys",
                                        "nav_exits",     "navmesh_steer",
                                        "avoid",         "path_follow",
                                        "orca",          "mine",
                                        "planner",       "control",
                                        "dseek_track",   "contacts_prepare",
                                        "integrate",     "ground_vehicle",
                                        "planner_move",  "crowd_move",
                                        "obstacle_move", "contacts",
                                        "wrap",          "measure",
                                        "nav_sources"};
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(shoal_world_add_parallel_system(w, "mine", SHOAL_STAGE_DECIDE, NULL, 0, drain, NULL),
                 SHOAL_OK);
    int n = shoal_world_system_count(w);
    cr_assert_eq(n, (int)(sizeof order / sizeof order[0]));
    shoal_stage_t last = SHOAL_STAGE_SENSE;
    for (int i = 0; i < n; ++i) {
        shoal_system_stats_t s;
        cr_assert_eq(shoal_world_system_stats(w, i, &s), SHOAL_OK);
        cr_assert_str_eq(s.name, order[i], "system %d", i);
        cr_assert_geq(s.stage, last, "%s runs in an earlier stage than the one before it", s.name);
        last = s.stage;
    }
    shoal_world_destroy(w);
}
