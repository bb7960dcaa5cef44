/* Allocation failure: a world whose allocator hook fails its k-th
 * allocation, for every k the script below makes (a sweep, as SQLite's
 * malloc tests do). The script builds and runs a mixed world: creation,
 * a scenario (flock with neighbors, wander and avoidance, obstacles, a
 * directed-seek route, a formation), terrain, paths, a trim table, ground
 * vehicles, planner agents, tracing, a user system that adds and removes
 * agents inside steps, steps, adds, removes, path and goal changes.
 *
 * For each k, every call either succeeds or fails with
 * SHOAL_ERR_OUT_OF_MEMORY, and then: the failure was the injected one, the
 * message says so, and the world is unchanged (state hash, agent count,
 * and the bulk read in handle order, byte for byte). The failing allocator
 * is then switched off and the call repeated, which must now succeed; the
 * script goes on, and its final state hash must equal the reference run's
 * (the failed call was a true no-op). After destroy every block the hook
 * gave out has come back, with the size it was asked for. */
#include <criterion/criterion.h>

#include <shoal/scenario.h>
#include <shoal/snapshot.h>
#include <shoal/shoal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AGENTS 256

typedef struct fail_alloc_t {
    int64_t count;   /* allocations asked for so far */
    int64_t fail_at; /* the allocation to fail (1-based); 0: none */
    int failed;      /* it has failed */
    int64_t live;    /* blocks given out and not freed */
    int64_t live_bytes;
} fail_alloc_t;

static void* hook_alloc(size_t size, size_t align, void* ctx)
{
    fail_alloc_t* fa = ctx;
    fa->count++;
    if (fa->count == fa->fail_at) {
        fa->failed = 1;
        return NULL;
    }
    void* p = aligned_alloc(align, (size + align - 1) / align * align);
    if (p) {
        fa->live++;
        fa->live_bytes += (int64_t)size;
    }
    return p;
}

static void hook_free(void* p, size_t size, void* ctx)
{
    fail_alloc_t* fa = ctx;
    fa->live--;
    fa->live_bytes -= (int64_t)size;
    free(p);
}

typedef struct script_t {
    fail_alloc_t fa;
    shoal_world_t* w;
    int threads;
    shoal_backend_t backend;
    const char* failed_in; /* the call that failed, or NULL */
    char failed_msg[256];  /* and its message */
    int64_t calls_failed;
    shoal_agent_t extra[64]; /* agents the user system added */
    int extra_count;
    /* bulk reads before and after a failed call */
    shoal_agent_t ids[2][MAX_AGENTS];
    float pos[2][3 * MAX_AGENTS], vel[2][3 * MAX_AGENTS], head[2][MAX_AGENTS];
    uint64_t user[2][MAX_AGENTS];
} script_t;

/* Bulk read into buffer b, sorted by handle (storage order may change). */
static int32_t read_sorted(script_t* s, int b)
{
    shoal_agent_batch_t batch = {.ids = s->ids[b],
                                 .positions = s->pos[b],
                                 .velocities = s->vel[b],
                                 .headings = s->head[b],
                                 .user_values = s->user[b]};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(s->w, &batch, MAX_AGENTS, &n), SHOAL_OK);
    for (int32_t i = 1; i < n; ++i) /* insertion sort by index: n is small */
        for (int32_t j = i; j > 0 && s->ids[b][j - 1].index1 > s->ids[b][j].index1; --j) {
            shoal_agent_t t = s->ids[b][j];
            s->ids[b][j] = s->ids[b][j - 1];
            s->ids[b][j - 1] = t;
            for (int k = 0; k < 3; ++k) {
                float p = s->pos[b][3 * j + k], v = s->vel[b][3 * j + k];
                s->pos[b][3 * j + k] = s->pos[b][3 * (j - 1) + k];
                s->vel[b][3 * j + k] = s->vel[b][3 * (j - 1) + k];
                s->pos[b][3 * (j - 1) + k] = p;
                s->vel[b][3 * (j - 1) + k] = v;
            }
            float h = s->head[b][j];
            s->head[b][j] = s->head[b][j - 1];
            s->head[b][j - 1] = h;
            uint64_t u = s->user[b][j];
            s->user[b][j] = s->user[b][j - 1];
            s->user[b][j - 1] = u;
        }
    return n;
}

static void assert_same_read(script_t* s, int32_t n, const char* what)
{
    cr_assert_eq(memcmp(s->ids[0], s->ids[1], (size_t)n * sizeof(shoal_agent_t)), 0, "%s: ids changed", what);
    cr_assert_eq(memcmp(s->pos[0], s->pos[1], (size_t)n * 3 * sizeof(float)), 0, "%s: positions changed",
                 what);
    cr_assert_eq(memcmp(s->vel[0], s->vel[1], (size_t)n * 3 * sizeof(float)), 0, "%s: velocities changed",
                 what);
    cr_assert_eq(memcmp(s->head[0], s->head[1], (size_t)n * sizeof(float)), 0, "%s: headings changed", what);
    cr_assert_eq(memcmp(s->user[0], s->user[1], (size_t)n * sizeof(uint64_t)), 0, "%s: user values changed",
                 what);
}

/* Run a call; on failure check it was the injected one and changed
 * nothing, then switch failures off and run it again. */
#define DO(s, expr)                                                                                          \
    do {                                                                                                     \
        uint64_t hash0_ = shoal_world_state_hash((s)->w);                                                    \
        int32_t n0_ = read_sorted((s), 0);                                                                   \
        int64_t before_ = (s)->fa.count;                                                                     \
        shoal_status_t st_ = (expr);                                                                         \
        if (st_ != SHOAL_OK) {                                                                               \
            const char* msg_ = shoal_world_last_error((s)->w);                                               \
            cr_assert_eq(st_, SHOAL_ERR_OUT_OF_MEMORY, "%s gave %s: %s", #expr, shoal_status_string(st_),    \
                         msg_);                                                                              \
            cr_assert((s)->fa.failed && (s)->fa.fail_at > before_,                                           \
                      "%s failed without the injected "                                                      \
                      "failure: %s",                                                                         \
                      #expr, msg_);                                                                          \
            cr_assert(strstr(msg_, "out of memory") != NULL, "%s: message '%s'", #expr, msg_);               \
            cr_assert_eq(shoal_world_state_hash((s)->w), hash0_, "%s changed the world (%s)", #expr, msg_);  \
            int32_t n1_ = read_sorted((s), 1);                                                               \
            cr_assert_eq(n1_, n0_, "%s changed the agent count", #expr);                                     \
            assert_same_read((s), n0_, #expr);                                                               \
            (s)->fa.fail_at = 0;                                                                             \
            (s)->failed_in = #expr;                                                                          \
            snprintf((s)->failed_msg, sizeof(s)->failed_msg, "%s", msg_);                                    \
            (s)->calls_failed++;                                                                             \
            st_ = (expr);                                                                                    \
            cr_assert_eq(st_, SHOAL_OK, "%s on retry: %s", #expr, shoal_world_last_error((s)->w));           \
        }                                                                                                    \
    } while (0)

/* Adds an agent and removes the one it added before, from inside the step
 * (the changes are queued). An add that fails stops the step with its
 * status before the removal is queued, so the failed step changes nothing. */
static shoal_status_t churn_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    script_t* s = ctx;
    if (shoal_world_step_count(w) % 3 != 1) return SHOAL_OK;
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = (float)(s->extra_count % 7) * 3.0f - 10.0f;
    d.position[1] = -20.0f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.user_value = 900 + (uint64_t)s->extra_count;
    shoal_agent_t id;
    shoal_status_t st = shoal_agent_add(w, &d, &id);
    if (st != SHOAL_OK) return st;
    if (s->extra_count > 0) {
        st = shoal_agent_remove(w, s->extra[s->extra_count - 1]);
        if (st != SHOAL_OK) return st;
    }
    if (s->extra_count < 64) s->extra[s->extra_count++] = id;
    return SHOAL_OK;
}

static const char scenario_json[] =
    "{\"name\": \"alloc\", \"dimensions\": 2, \"seed\": 3, \"dt\": 0.05, \"steps\": 10,"
    " \"world\": {\"wrap\": true, \"bounds_min\": [-60, -60], \"bounds_max\": [60, 60]},"
    " \"obstacles\": [{\"center\": [10, 10], \"radius\": 3}, {\"center\": [-15, 5], \"radius\": 2}],"
    " \"groups\": ["
    "  {\"name\": \"flock\", \"count\": 24,"
    "   \"spawn\": {\"shape\": \"box\", \"center\": [0, 0], \"size\": [30, 30], \"heading\": \"random\", "
    "\"speed\": 1},"
    "   \"neighbors\": {\"radius\": 3}, \"wander\": {\"cruise_speed\": 1.5},"
    "   \"avoid\": {\"lookahead_time\": 1},"
    "   \"behaviors\": {\"separate\": {}, \"align\": {}, \"cohere\": {\"weight\": 0.5}, \"wander\": {},"
    "                  \"avoid\": {\"weight\": 2}}},"
    "  {\"name\": \"patrol\", \"count\": 3,"
    "   \"spawn\": {\"shape\": \"disc\", \"center\": [-30, -30], \"radius\": 5},"
    "   \"behaviors\": {\"dseek\": {}},"
    "   \"dseek\": {\"route\": [{\"position\": [0, 0], \"direction\": [1, 0]},"
    "                          {\"position\": [30, 20], \"direction\": [0, 1]}]}},"
    "  {\"name\": \"wedge\", \"count\": 3,"
    "   \"spawn\": {\"shape\": \"box\", \"center\": [30, -30], \"size\": [10, 10]},"
    "   \"formation\": {\"anchor\": {\"position\": [40, 40], \"direction\": [0, 1]},"
    "                   \"offsets\": [[0, 0], [-4, 4], [-4, -4]]}}"
    " ]}";

static shoal_agent_def_t vehicle_def(int n)
{
    static const char* const presets[] = {"car", "tank", "hovercraft", "truck"};
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = -40.0f + 4.0f * (float)n;
    d.position[1] = 45.0f;
    d.ground.enabled = 1;
    cr_assert_eq(shoal_ground_vehicle_preset(presets[n % 4], &d.ground.vehicle, NULL), SHOAL_OK);
    d.ground.follow.path = n % 2;
    d.user_value = 100 + (uint64_t)n;
    return d;
}

static shoal_agent_def_t planner_def(int n, shoal_agent_t prey)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = 40.0f;
    d.position[1] = -40.0f + 6.0f * (float)n;
    d.planner.enabled = 1;
    d.planner.max_expansions = 40 + 10 * n;
    d.planner.goal_point[0] = -40.0f;
    if (n == 3) {
        d.planner.goal = SHOAL_PLAN_GOAL_PURSUE;
        d.planner.goal_agent = prey;
    }
    d.user_value = 200 + (uint64_t)n;
    return d;
}

/* A host task system that runs every task at once on the calling thread:
 * the world's second worker's memory is used, with no thread to wait for. */
static void* inline_enqueue(shoal_task_fn* fn, int32_t count, int32_t min_range, void* task_ctx, void* user)
{
    (void)min_range;
    (void)user;
    fn(0, count, 1, task_ctx);
    return NULL;
}

static void inline_finish(void* task, void* user)
{
    (void)task;
    (void)user;
}

static shoal_status_t create(script_t* s)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.seed = 3;
    def.thread_count = s->threads;
    def.backend = s->backend;
    if (s->backend == SHOAL_BACKEND_HOST) {
        def.enqueue_task = inline_enqueue;
        def.finish_task = inline_finish;
    }
    def.wrap = 1;
    def.bounds_min[0] = def.bounds_min[1] = -60.0f;
    def.bounds_max[0] = def.bounds_max[1] = 60.0f;
    def.initial_capacity = 8; /* so that adds grow every array */
    def.reorder_interval = 2;
    def.alloc = hook_alloc;
    def.free = hook_free;
    def.alloc_user_ctx = &s->fa;
    shoal_error_t err;
    shoal_status_t st = shoal_world_create(&def, &s->w, &err);
    if (st != SHOAL_OK) {
        cr_assert_eq(st, SHOAL_ERR_OUT_OF_MEMORY, "world_create: %s", err.message);
        cr_assert_null(s->w);
        cr_assert(s->fa.failed);
        cr_assert(strstr(err.message, "out of memory") != NULL, "world_create: '%s'", err.message);
        cr_assert_eq(s->fa.live, 0, "a failed world_create kept %lld blocks", (long long)s->fa.live);
    }
    return st;
}

/* The whole script with allocation `fail_at` failing (0: none); returns
 * the final state hash and sets *allocations to the count made. */
static char last_failed_msg[256];
/* Called with the script's world before it is destroyed (a reference run). */
static void (*script_end)(shoal_world_t* w);

static uint64_t run_script(const shoal_scenario_t* sc, int threads, shoal_backend_t backend, int64_t fail_at,
                           int64_t* allocations, const char** failed_in)
{
    script_t* s = calloc(1, sizeof *s);
    cr_assert_not_null(s);
    s->threads = threads;
    s->backend = backend;
    s->fa.fail_at = fail_at;
    if (create(s) != SHOAL_OK) {
        s->fa.fail_at = 0;
        s->failed_in = "world_create";
        cr_assert_eq(create(s), SHOAL_OK);
    }
    DO(s, shoal_scenario_populate(sc, s->w));
    const float path0[] = {-50, 45, 0, 50, 45, 0, 50, 55, 0, -50, 55, 0};
    const float path1[] = {-50, 40, 0, 0, 30, 0, 50, 40, 0};
    const float path1b[] = {-50, 38, 0, 0, 28, 0, 45, 35, 0, 50, 45, 0};
    int32_t pid = -1;
    DO(s, shoal_world_add_path(s->w, path0, 4, 3.0f, &pid));
    DO(s, shoal_world_add_path(s->w, path1, 3, 3.0f, &pid));
    const float heights[9] = {0, 0.5f, 1, 0, 0.5f, 1, 0, 0.5f, 1};
    shoal_terrain_t terrain = {.nx = 3, .ny = 3, .origin = {-60, -60}, .cell = 60.0f, .heights = heights};
    DO(s, shoal_world_set_terrain(s->w, &terrain));
    shoal_trim_spec_t spec = shoal_trim_spec_default(2);
    spec.samples[0] = 9;
    spec.substeps = 20;
    DO(s, shoal_world_set_trim_table(s->w, &spec));
    shoal_agent_t vehicles[4], planners[4], flock[8];
    shoal_agent_batch_t batch = {.ids = flock};
    int32_t got = 0;
    cr_assert_eq(shoal_world_read_agents(s->w, &batch, 8, &got), SHOAL_OK);
    for (int n = 0; n < 4; ++n) {
        shoal_agent_def_t d = vehicle_def(n);
        DO(s, shoal_agent_add(s->w, &d, &vehicles[n]));
    }
    for (int n = 0; n < 4; ++n) {
        shoal_agent_def_t d = planner_def(n, flock[0]);
        DO(s, shoal_agent_add(s->w, &d, &planners[n]));
    }
    const float c[3] = {0, -35, 0}, v[3] = {1, 0.5f, 0};
    int32_t oid = -1;
    DO(s, shoal_world_add_moving_obstacle(s->w, c, v, 2.0f, &oid));
    shoal_waypoint_t route[3] = {
        {{-10, 0, 0}, {1, 0, 0}, 0}, {{10, 10, 0}, {0, 1, 0}, 0}, {{0, 20, 0}, {-1, 0, 0}, 0}};
    int32_t rid = -1;
    DO(s, shoal_world_add_route(s->w, route, 3, &rid));
    shoal_dseek_t ds = shoal_dseek_default();
    ds.route = rid;
    DO(s, shoal_agent_set_dseek(s->w, flock[1], &ds));
    DO(s, shoal_world_set_trace(s->w, 256));
    DO(s, shoal_world_add_system(s->w, "churn", SHOAL_STAGE_SENSE, churn_system, s));
    for (int i = 0; i < 6; ++i) DO(s, shoal_world_step(s->w, 0.05f));
    /* More agents than any array holds yet, and some removed. */
    for (int i = 0; i < 40; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = (float)(i % 10) * 4.0f - 20.0f;
        d.position[1] = (float)(i / 10) * 4.0f + 5.0f;
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_ARRIVE] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_PURSUE] = i % 5 == 0 ? 1.0f : 0.0f;
        d.pursuit.target = flock[2];
        d.user_value = 300 + (uint64_t)i;
        shoal_agent_t id;
        DO(s, shoal_agent_add(s->w, &d, &id));
    }
    for (int i = 3; i < 6; ++i) DO(s, shoal_agent_remove(s->w, flock[i]));
    DO(s, shoal_world_set_path(s->w, 1, path1b, 4, 3.0f));
    DO(s, shoal_agent_set_path(s->w, vehicles[0], 1));
    DO(s, shoal_world_set_trim_table(s->w, &spec)); /* the same table: accepted */
    shoal_ground_t g = vehicle_def(2).ground;
    DO(s, shoal_agent_set_ground(s->w, flock[6], &g));
    const float goal[3] = {20, 20, 0};
    DO(s, shoal_agent_set_planner_goal(s->w, planners[1], SHOAL_PLAN_GOAL_SEEK, goal, (shoal_agent_t){0}));
    const float offsets[2][3] = {{0, 0, 0}, {-3, 3, 0}};
    shoal_waypoint_t anchor = {{0, 30, 0}, {1, 0, 0}, 2.0f};
    shoal_agent_t members[2] = {flock[1], flock[7]};
    DO(s, shoal_formation_arrive(s->w, members, 2, offsets, &anchor));
    DO(s, shoal_world_remove_obstacle(s->w, 0));
    DO(s, shoal_world_add_obstacle(s->w, c, 4.0f, &oid));
    for (int i = 0; i < 6; ++i) DO(s, shoal_world_step(s->w, 0.05f));
    DO(s, shoal_world_set_trace(s->w, 0));
    DO(s, shoal_world_step(s->w, 0.05f));
    uint64_t hash = shoal_world_state_hash(s->w);
    if (script_end && fail_at == 0) script_end(s->w);
    *allocations = s->fa.count;
    *failed_in = s->failed_in;
    memcpy(last_failed_msg, s->failed_msg, sizeof last_failed_msg);
    if (fail_at > 0)
        cr_assert(s->fa.failed, "allocation %lld of %lld never happened", (long long)fail_at,
                  (long long)s->fa.count);
    shoal_world_destroy(s->w);
    cr_assert_eq(s->fa.live, 0, "fail_at %lld: %lld blocks leaked", (long long)fail_at,
                 (long long)s->fa.live);
    cr_assert_eq(s->fa.live_bytes, 0, "fail_at %lld: freed sizes differ from allocated ones by %lld bytes",
                 (long long)fail_at, (long long)s->fa.live_bytes);
    free(s);
    return hash;
}

#define MAX_SWEEP 4096

/* Fail every allocation k of the script in turn (only those with in_step[k]
 * set when `only_steps`); in_step (optional) records which k failed inside
 * shoal_world_step. Returns the reference run's final hash. */
static uint64_t sweep(int threads, shoal_backend_t backend, int only_steps, uint8_t* in_step,
                      int64_t* total_out)
{
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_string(scenario_json, strlen(scenario_json), "alloc", &sc, &err),
                 SHOAL_OK, "%s", err.message);
    int64_t total = 0, n = 0;
    const char* where = NULL;
    uint64_t reference = run_script(sc, threads, backend, 0, &total, &where);
    cr_assert_null(where);
    cr_assert_gt(total, 50, "the script made only %lld allocations", (long long)total);
    cr_assert_lt(total, MAX_SWEEP);
    cr_log_info("%d thread(s), backend %s: %lld allocations swept", threads, shoal_backend_name(backend),
                (long long)total);
    for (int64_t k = 1; k <= total; ++k) {
        if (only_steps && !in_step[k]) continue;
        where = NULL;
        uint64_t h = run_script(sc, threads, backend, k, &n, &where);
        cr_assert_not_null(where, "allocation %lld failed but every call succeeded", (long long)k);
        cr_assert_eq(h, reference, "allocation %lld failed in %s (%s): final hash %016llx, reference %016llx",
                     (long long)k, where, last_failed_msg, (unsigned long long)h,
                     (unsigned long long)reference);
        if (in_step && !only_steps) in_step[k] = strncmp(where, "shoal_world_step", 16) == 0;
    }
    shoal_scenario_destroy(sc);
    *total_out = total;
    return reference;
}

TestSuite(alloc_fail, .timeout = 300);

Test(alloc_fail, every_allocation_of_the_script_one_thread)
{
    int64_t total = 0;
    sweep(1, SHOAL_BACKEND_SERIAL, 0, NULL, &total);
}

/* Two workers: the whole sweep through a host task system that runs tasks
 * inline (every per-worker block is allocated and used, and a sweep of
 * hundreds of runs does not wait on threads of a busy machine), then the
 * allocations that fail inside steps again with two OpenMP threads. The
 * two backends make the same allocations and reach the same hash. */
Test(alloc_fail, every_allocation_of_the_script_two_workers)
{
    static uint8_t in_step[MAX_SWEEP];
    int64_t total = 0, total_omp = 0;
    uint64_t host = sweep(2, SHOAL_BACKEND_HOST, 0, in_step, &total);
    int steps = 0;
    for (int64_t k = 1; k <= total; ++k) steps += in_step[k];
    cr_assert_gt(steps, 5, "only %d allocations happen inside steps", steps);
    uint64_t omp = sweep(2, SHOAL_BACKEND_OPENMP, 1, in_step, &total_omp);
    cr_assert_eq(total_omp, total, "OpenMP made %lld allocations, the host backend %lld",
                 (long long)total_omp, (long long)total);
    cr_assert_eq(omp, host);
}

/* Snapshots: loading fails cleanly at each of its allocations (nothing left
 * allocated, *out_world NULL), and saving at each of its allocations
 * leaves the world as it was; the world loaded in the end continues as one
 * loaded without failures. */
static uint8_t* snap;
static size_t snap_size;
static uint64_t snap_hash;

static void save_script_world(shoal_world_t* w)
{
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &snap_size), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    snap = malloc(snap_size);
    cr_assert_not_null(snap);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, snap, snap_size, &snap_size), SHOAL_OK);
    snap_hash = shoal_world_state_hash(w);
}

static shoal_status_t load(fail_alloc_t* fa, shoal_world_t** w, shoal_error_t* err)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.alloc = hook_alloc;
    def.free = hook_free;
    def.alloc_user_ctx = fa;
    return shoal_world_load_snapshot_memory(snap, snap_size, &def, w, err);
}

Test(alloc_fail, every_allocation_of_a_snapshot_load_and_save)
{
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_string(scenario_json, strlen(scenario_json), "alloc", &sc, &err),
                 SHOAL_OK);
    int64_t total = 0;
    const char* where = NULL;
    script_end = save_script_world;
    run_script(sc, 1, SHOAL_BACKEND_SERIAL, 0, &total, &where);
    script_end = NULL;
    shoal_scenario_destroy(sc);
    cr_assert_not_null(snap);

    fail_alloc_t clean = {0};
    shoal_world_t* ref = NULL;
    cr_assert_eq(load(&clean, &ref, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_state_hash(ref), snap_hash);
    int64_t loads = clean.count;
    cr_assert_gt(loads, 5);
    for (int64_t k = 1; k <= loads; ++k) {
        fail_alloc_t fa = {.fail_at = k};
        shoal_world_t* w = (shoal_world_t*)&fa;
        shoal_status_t st = load(&fa, &w, &err);
        cr_assert_eq(st, SHOAL_ERR_OUT_OF_MEMORY, "load, allocation %lld: %s (%s)", (long long)k,
                     shoal_status_string(st), err.message);
        cr_assert_null(w);
        cr_assert(strstr(err.message, "out of memory") != NULL, "load, allocation %lld: '%s'", (long long)k,
                  err.message);
        cr_assert_eq(fa.live, 0, "load, allocation %lld: %lld blocks left", (long long)k, (long long)fa.live);
    }
    /* Saving, with every allocation it makes failing in turn. */
    fail_alloc_t fa = {0};
    shoal_world_t* w = NULL;
    cr_assert_eq(load(&fa, &w, &err), SHOAL_OK, "%s", err.message);
    int64_t before = fa.count;
    size_t size = 0;
    /* (The loaded world's snapshot is compared with itself: the script's
     * user system, listed in the original's, is not in a loaded world.) */
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    size_t first_size = size;
    uint8_t* first = malloc(size);
    uint8_t* again = malloc(size);
    cr_assert(first && again);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, first, first_size, &size), SHOAL_OK);
    int64_t saves = fa.count - before;
    for (int64_t k = 1; k <= saves; ++k) {
        fa.fail_at = fa.count + k;
        shoal_status_t st = shoal_world_save_snapshot_memory(w, again, first_size, &size);
        cr_assert_eq(st, SHOAL_ERR_OUT_OF_MEMORY, "save, allocation %lld: %s", (long long)k,
                     shoal_status_string(st));
        cr_assert_eq(shoal_world_state_hash(w), snap_hash);
    }
    fa.fail_at = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, again, first_size, &size), SHOAL_OK);
    cr_assert_eq(size, first_size);
    cr_assert_eq(memcmp(again, first, size), 0, "a save after failed saves differs");
    cr_log_info("snapshot: %lld allocations per load and %lld per save swept", (long long)loads,
                (long long)saves);
    /* Both continue alike. */
    for (int i = 0; i < 5; ++i) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_world_step(ref, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(ref));
    }
    cr_assert_eq(shoal_world_state_hash(w), shoal_world_state_hash(ref));
    shoal_world_destroy(w);
    shoal_world_destroy(ref);
    cr_assert_eq(fa.live, 0);
    cr_assert_eq(clean.live, 0);
    free(again);
    free(first);
    free(snap);
}
