/* API misuse: every public function called with NULL pointers, null, stale
 * and foreign handles, NaN and infinite values, zero or negative sizes,
 * out-of-range ids and enums, and in the wrong order (from inside a step).
 * Each case asserts the documented status (docs/errors.md), that the
 * world's last error names the function and the problem, and that the
 * world is unchanged: state hash, counts, and a bulk read in handle order,
 * byte for byte.
 *
 * The cases are tables: one line per call, with the status expected and
 * two pieces of the message (where: the function; what: the field or the
 * rule). */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include <math.h>
#include <shoal/recording.h>
#include <shoal/scenario.h>
#include <shoal/shoal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP 64

/* The world every case runs against: a flock agent, a ground vehicle on
 * path 0, a planner agent, a plain agent, an obstacle, a route; handles
 * that are stale (removed), foreign (another world's) and null. */
typedef struct fixture_t {
    shoal_world_t* w;
    shoal_world_t* other;
    shoal_agent_t flock, vehicle, planner, plain, stale, foreign, null;
    int32_t obstacle, route, path;
} fixture_t;

/* Everything a failed call must leave as it was. */
typedef struct snapshot_t {
    uint64_t hash, steps;
    int32_t agents, obstacles, routes, paths, systems, traces, n;
    shoal_agent_t ids[CAP];
    float pos[3 * CAP], vel[3 * CAP], head[CAP], ori[4 * CAP];
    uint64_t user[CAP];
    uint32_t groups[CAP];
} snapshot_t;

static void take(const shoal_world_t* w, snapshot_t* s)
{
    memset(s, 0, sizeof *s);
    s->hash = shoal_world_state_hash(w);
    s->steps = shoal_world_step_count(w);
    s->agents = shoal_world_agent_count(w);
    s->obstacles = shoal_world_obstacle_count(w);
    s->routes = shoal_world_route_count(w);
    s->paths = shoal_world_path_count(w);
    s->systems = shoal_world_system_count(w);
    s->traces = shoal_world_trace_count(w);
    shoal_agent_batch_t b = {.ids = s->ids,
                             .positions = s->pos,
                             .velocities = s->vel,
                             .headings = s->head,
                             .orientations = s->ori,
                             .user_values = s->user,
                             .groups = s->groups};
    cr_assert_eq(shoal_world_read_agents(w, &b, CAP, &s->n), SHOAL_OK);
    /* handle order: storage order may change between steps, not state */
    for (int32_t i = 1; i < s->n; ++i)
        for (int32_t j = i; j > 0 && s->ids[j - 1].index1 > s->ids[j].index1; --j) {
// clang-format off
#define SWAP(arr, width)                                                    \
    for (int k_ = 0; k_ < (width); ++k_) {                                  \
        __typeof__(arr[0]) t_ = arr[(width) * j + k_];                      \
        arr[(width) * j + k_] = arr[(width) * (j - 1) + k_];                \
        arr[(width) * (j - 1) + k_] = t_;                                   \
    }
            SWAP(s->ids, 1) SWAP(s->pos, 3) SWAP(s->vel, 3) SWAP(s->head, 1) SWAP(s->ori, 4)
            SWAP(s->user, 1) SWAP(s->groups, 1)
#undef SWAP
            // clang-format on
        }
}

static void assert_unchanged(const snapshot_t* a, const shoal_world_t* w, const char* name)
{
    snapshot_t* b = malloc(sizeof *b);
    cr_assert_not_null(b);
    take(w, b);
    cr_assert_eq(b->hash, a->hash, "%s: state hash changed", name);
    cr_assert_eq(b->steps, a->steps, "%s: step count changed", name);
    cr_assert_eq(b->agents, a->agents, "%s: agent count changed", name);
    cr_assert_eq(b->obstacles, a->obstacles, "%s: obstacle count changed", name);
    cr_assert_eq(b->routes, a->routes, "%s: route count changed", name);
    cr_assert_eq(b->paths, a->paths, "%s: path count changed", name);
    cr_assert_eq(b->systems, a->systems, "%s: system count changed", name);
    cr_assert_eq(b->traces, a->traces, "%s: trace changed", name);
    cr_assert_eq(memcmp(a, b, sizeof *a), 0, "%s: the bulk read changed", name);
    free(b);
}

static shoal_world_t* new_world(int dims)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = 1;
    def.seed = 11;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    return w;
}

static void setup(fixture_t* f)
{
    memset(f, 0, sizeof *f);
    f->w = new_world(2);
    f->other = new_world(2);
    shoal_world_t* w = f->w;
    const float path[] = {0, 40, 0, 60, 40, 0, 60, 60, 0};
    cr_assert_eq(shoal_world_add_path(w, path, 3, 3.0f, &f->path), SHOAL_OK);
    const float c[3] = {20, -20, 0};
    cr_assert_eq(shoal_world_add_obstacle(w, c, 2.0f, &f->obstacle), SHOAL_OK);
    shoal_waypoint_t route[2] = {{{10, 0, 0}, {1, 0, 0}, 0}, {{20, 10, 0}, {0, 1, 0}, 0}};
    cr_assert_eq(shoal_world_add_route(w, route, 2, &f->route), SHOAL_OK);

    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
    d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    d.dseek.route = f->route;
    d.target[0] = 30.0f;
    d.user_value = 1;
    cr_assert_eq(shoal_agent_add(w, &d, &f->flock), SHOAL_OK);
    shoal_agent_def_t v = shoal_agent_default_def();
    v.position[1] = 40.0f;
    v.ground.enabled = 1;
    v.ground.follow.path = f->path;
    v.user_value = 2;
    cr_assert_eq(shoal_agent_add(w, &v, &f->vehicle), SHOAL_OK);
    shoal_agent_def_t p = shoal_agent_default_def();
    p.position[0] = -30.0f;
    p.planner.enabled = 1;
    p.planner.max_expansions = 50;
    p.planner.goal_point[0] = 30.0f;
    p.user_value = 3;
    cr_assert_eq(shoal_agent_add(w, &p, &f->planner), SHOAL_OK);
    shoal_agent_def_t q = shoal_agent_default_def();
    q.position[0] = 5.0f;
    q.weights[SHOAL_BEHAVIOR_ARRIVE] = 1.0f;
    q.user_value = 4;
    cr_assert_eq(shoal_agent_add(w, &q, &f->plain), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(w, &q, &f->stale), SHOAL_OK);
    cr_assert_eq(shoal_agent_remove(w, f->stale), SHOAL_OK);
    cr_assert_eq(shoal_agent_add(f->other, &q, &f->foreign), SHOAL_OK);
    for (int i = 0; i < 5; ++i)
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
}

static void teardown(fixture_t* f)
{
    shoal_world_destroy(f->w);
    shoal_world_destroy(f->other);
}

/* One table line: a call on the fixture, what it must return, and two
 * pieces its message must contain. */
typedef shoal_status_t case_fn(fixture_t* f);
typedef struct case_t {
    const char* name;
    case_fn* fn;
    shoal_status_t expected;
    const char* where;
    const char* what;
} case_t;

static void run_cases(const case_t* cases, int count)
{
    fixture_t f;
    setup(&f);
    snapshot_t* before = malloc(sizeof *before);
    cr_assert_not_null(before);
    for (int i = 0; i < count; ++i) {
        const case_t* c = &cases[i];
        take(f.w, before);
        shoal_status_t st = c->fn(&f);
        const char* msg = shoal_world_last_error(f.w);
        cr_expect_eq(st, c->expected, "%s: got %s, expected %s (%s)", c->name, shoal_status_string(st),
                     shoal_status_string(c->expected), msg);
        cr_expect(strstr(msg, c->where) != NULL, "%s: message '%s' does not name '%s'", c->name, msg,
                  c->where);
        cr_expect(strstr(msg, c->what) != NULL, "%s: message '%s' does not say '%s'", c->name, msg, c->what);
        assert_unchanged(before, f.w, c->name);
    }
    free(before);
    teardown(&f);
}

#define NAN3                                                                                                 \
    {                                                                                                        \
        NAN, 0, 0                                                                                            \
    }
#define INF3                                                                                                 \
    {                                                                                                        \
        0, INFINITY, 0                                                                                       \
    }
#define NINF3                                                                                                \
    {                                                                                                        \
        0, 0, -INFINITY                                                                                      \
    }

/* X(name, status, where, what, body): body returns a status, with the
 * fixture as f and its world as w. */
#define DEFINE_CASE(name, status, where, what, ...)                                                          \
    static shoal_status_t case_##name(fixture_t* f)                                                          \
    {                                                                                                        \
        shoal_world_t* w = f->w;                                                                             \
        (void)w;                                                                                             \
        __VA_ARGS__                                                                                          \
    }
#define LIST_CASE(name, status, where, what, ...) {#name, case_##name, status, where, what},

#define INV SHOAL_ERR_INVALID_ARGUMENT
#define STALE SHOAL_ERR_STALE_HANDLE
#define NOTF SHOAL_ERR_NOT_FOUND
#define BUSY SHOAL_ERR_BUSY
#define CAPY SHOAL_ERR_CAPACITY

/* ---- world, steps, systems, traces, obstacles, routes ------------------ */

#define WORLD_CASES(X)                                                                                       \
    X(step_zero, INV, "world_step", "dt", return shoal_world_step(w, 0.0f);)                                 \
    X(step_negative, INV, "world_step", "dt", return shoal_world_step(w, -0.1f);)                            \
    X(step_nan, INV, "world_step", "dt", return shoal_world_step(w, NAN);)                                   \
    X(step_inf, INV, "world_step", "dt", return shoal_world_step(w, INFINITY);)                              \
    X(step_neg_inf, INV, "world_step", "dt", return shoal_world_step(w, -INFINITY);)                         \
    X(read_null_batch, INV, "read_agents", "batch", int32_t n;                                               \
      return shoal_world_read_agents(w, NULL, 4, &n);)                                                       \
    X(read_negative_capacity, INV, "read_agents", "capacity", shoal_agent_t ids[4];                          \
      shoal_agent_batch_t b = {.ids = ids}; int32_t n; return shoal_world_read_agents(w, &b, -1, &n);)       \
    X(stats_null, INV, "system_stats", "NULL", return shoal_world_system_stats(w, 0, NULL);)                 \
    X(stats_negative, INV, "system_stats", "index", shoal_system_stats_t s;                                  \
      return shoal_world_system_stats(w, -1, &s);)                                                           \
    X(stats_past_end, INV, "system_stats", "index", shoal_system_stats_t s;                                  \
      return shoal_world_system_stats(w, shoal_world_system_count(w), &s);)                                  \
    X(enable_null_name, INV, "set_system_enabled", "name",                                                   \
      return shoal_world_set_system_enabled(w, NULL, 0);)                                                    \
    X(enable_unknown, NOTF, "set_system_enabled", "no_such",                                                 \
      return shoal_world_set_system_enabled(w, "no_such", 0);)                                               \
    X(system_null_fn, INV, "add_system", "fn",                                                               \
      return shoal_world_add_system(w, "x", SHOAL_STAGE_DECIDE, NULL, NULL);)                                \
    X(system_null_name, INV, "add_system", "name",                                                           \
      return shoal_world_add_system(w, NULL, SHOAL_STAGE_DECIDE, dummy_system, NULL);)                       \
    X(system_empty_name, INV, "add_system", "name",                                                          \
      return shoal_world_add_system(w, "", SHOAL_STAGE_DECIDE, dummy_system, NULL);)                         \
    X(system_long_name, INV, "add_system", "name",                                                           \
      return shoal_world_add_system(w, "a_name_much_longer_than_thirty_two_bytes", SHOAL_STAGE_DECIDE,       \
                                    dummy_system, NULL);)                                                    \
    X(system_duplicate, INV, "add_system", "steer",                                                          \
      return shoal_world_add_system(w, "steer", SHOAL_STAGE_DECIDE, dummy_system, NULL);)                    \
    X(system_stage_negative, INV, "add_system", "stage",                                                     \
      return shoal_world_add_system(w, "x", (shoal_stage_t)-1, dummy_system, NULL);)                         \
    X(system_stage_past_end, INV, "add_system", "stage",                                                     \
      return shoal_world_add_system(w, "x", SHOAL_STAGE_COUNT_, dummy_system, NULL);)                        \
    X(trace_negative, INV, "set_trace", "capacity", return shoal_world_set_trace(w, -1);)                    \
    X(trace_limit_negative, INV, "set_trace_limit", "limit", return shoal_world_set_trace_limit(w, -1);)     \
    X(trace_event_null, INV, "trace_event", "NULL", return shoal_world_trace_event(w, 0, NULL);)             \
    X(trace_event_range, INV, "trace_event", "index", shoal_trace_event_t e;                                 \
      return shoal_world_trace_event(w, 0, &e);)                                                             \
    X(obstacle_null, INV, "add_obstacle", "center", return shoal_world_add_obstacle(w, NULL, 1.0f, NULL);)   \
    X(obstacle_nan, INV, "add_obstacle", "center[0]", const float c[3] = NAN3;                               \
      return shoal_world_add_obstacle(w, c, 1.0f, NULL);)                                                    \
    X(obstacle_inf, INV, "add_obstacle", "center[1]", const float c[3] = INF3;                               \
      return shoal_world_add_obstacle(w, c, 1.0f, NULL);)                                                    \
    X(obstacle_neg_inf, INV, "add_obstacle", "center[2]", const float c[3] = NINF3;                          \
      return shoal_world_add_obstacle(w, c, 1.0f, NULL);)                                                    \
    X(obstacle_radius_negative, INV, "add_obstacle", "radius", const float c[3] = {0};                       \
      return shoal_world_add_obstacle(w, c, -1.0f, NULL);)                                                   \
    X(obstacle_radius_nan, INV, "add_obstacle", "radius", const float c[3] = {0};                            \
      return shoal_world_add_obstacle(w, c, NAN, NULL);)                                                     \
    X(obstacle_radius_inf, INV, "add_obstacle", "radius", const float c[3] = {0};                            \
      return shoal_world_add_obstacle(w, c, INFINITY, NULL);)                                                \
    X(moving_null_velocity, INV, "add_moving_obstacle", "velocity", const float c[3] = {0};                  \
      return shoal_world_add_moving_obstacle(w, c, NULL, 1.0f, NULL);)                                       \
    X(moving_nan_velocity, INV, "add_moving_obstacle", "velocity[0]", const float c[3] = {0};                \
      const float v[3] = NAN3; return shoal_world_add_moving_obstacle(w, c, v, 1.0f, NULL);)                 \
    X(moving_inf_velocity, INV, "add_moving_obstacle", "velocity[1]", const float c[3] = {0};                \
      const float v[3] = INF3; return shoal_world_add_moving_obstacle(w, c, v, 1.0f, NULL);)                 \
    X(remove_obstacle_negative, NOTF, "remove_obstacle", "-1", return shoal_world_remove_obstacle(w, -1);)   \
    X(remove_obstacle_unknown, NOTF, "remove_obstacle", "99", return shoal_world_remove_obstacle(w, 99);)    \
    X(get_obstacle_unknown, NOTF, "get_obstacle", "99", float c[3];                                          \
      return shoal_world_get_obstacle(w, 99, c, NULL, NULL);)                                                \
    X(route_null, INV, "add_route", "NULL", return shoal_world_add_route(w, NULL, 2, NULL);)                 \
    X(route_zero, INV, "add_route", "count 0", shoal_waypoint_t p[1] = {{{0}, {1, 0, 0}, 0}};                \
      return shoal_world_add_route(w, p, 0, NULL);)                                                          \
    X(route_negative, INV, "add_route", "count -3", shoal_waypoint_t p[1] = {{{0}, {1, 0, 0}, 0}};           \
      return shoal_world_add_route(w, p, -3, NULL);)                                                         \
    X(route_nan, INV, "add_route", "waypoint 1",                                                             \
      shoal_waypoint_t p[2] = {{{0}, {1, 0, 0}, 0}, {{NAN, 0, 0}, {1, 0, 0}, 0}};                            \
      return shoal_world_add_route(w, p, 2, NULL);)                                                          \
    X(route_not_unit, INV, "add_route", "unit", shoal_waypoint_t p[1] = {{{0}, {2, 0, 0}, 0}};               \
      return shoal_world_add_route(w, p, 1, NULL);)                                                          \
    X(route_negative_speed, INV, "add_route", "speed", shoal_waypoint_t p[1] = {{{0}, {1, 0, 0}, -1}};       \
      return shoal_world_add_route(w, p, 1, NULL);)                                                          \
    X(route_inf_speed, INV, "add_route", "speed", shoal_waypoint_t p[1] = {{{0}, {1, 0, 0}, INFINITY}};      \
      return shoal_world_add_route(w, p, 1, NULL);)

static shoal_status_t dummy_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)w;
    (void)dt;
    (void)ctx;
    return SHOAL_OK;
}

WORLD_CASES(DEFINE_CASE)
static const case_t world_cases[] = {WORLD_CASES(LIST_CASE)};

Test(misuse, world_steps_systems_traces_obstacles_routes)
{
    run_cases(world_cases, (int)(sizeof world_cases / sizeof world_cases[0]));
}

/* ---- the extension API (shoal/extend.h) --------------------------------- */

static void misuse_block(shoal_world_t* w, const shoal_block_t* b, void* ctx)
{
    (void)w;
    (void)b;
    (void)ctx;
}

#define EXTEND_CASES(X)                                                                                      \
    X(column_null_name, INV, "world_column", "name", shoal_column_t c;                                       \
      return shoal_world_column(w, NULL, &c);)                                                               \
    X(column_null_out, INV, "world_column", "out_column", return shoal_world_column(w, "heading", NULL);)    \
    X(column_unknown, NOTF, "world_column", "no.such", shoal_column_t c;                                     \
      return shoal_world_column(w, "no.such", &c);)                                                          \
    X(column_3d_only, NOTF, "world_column", "3D", shoal_column_t c;                                          \
      return shoal_world_column(w, "position.z", &c);)                                                       \
    X(row_handles_null, INV, "world_row_handles", "out", return shoal_world_row_handles(w, 0, 1, NULL);)     \
    X(row_handles_past_end, INV, "world_row_handles", "rows", shoal_agent_t h[CAP];                          \
      return shoal_world_row_handles(w, 1, CAP, h);)                                                         \
    X(row_handles_negative, INV, "world_row_handles", "rows", shoal_agent_t h[1];                            \
      return shoal_world_row_handles(w, -1, 1, h);)                                                          \
    X(component_null, INV, "world_add_component", "def", return shoal_world_add_component(w, NULL);)         \
    X(component_bad_name, INV, "world_add_component", "name",                                                \
      shoal_component_def_t c = {"no spaces", SHOAL_COLUMN_F32, 1, NULL};                                    \
      return shoal_world_add_component(w, &c);)                                                              \
    X(component_builtin_name, INV, "world_add_component", "built-in",                                        \
      shoal_component_def_t c = {"heading", SHOAL_COLUMN_F32, 1, NULL};                                      \
      return shoal_world_add_component(w, &c);)                                                              \
    X(component_bad_type, INV, "world_add_component", "type",                                                \
      shoal_component_def_t c = {"ok", (shoal_column_type_t)7, 1, NULL};                                     \
      return shoal_world_add_component(w, &c);)                                                              \
    X(component_bad_width, INV, "world_add_component", "width",                                              \
      shoal_component_def_t c = {"ok", SHOAL_COLUMN_U64, 17, NULL};                                          \
      return shoal_world_add_component(w, &c);)                                                              \
    X(agents_add_null_def, INV, "agents_add", "def", return shoal_agents_add(w, NULL, NULL, 1, NULL);)       \
    X(agents_add_negative, INV, "agents_add", "count", shoal_agent_def_t d = shoal_agent_default_def();      \
      return shoal_agents_add(w, &d, NULL, -1, NULL);)                                                       \
    X(agents_add_nan, INV, "agents_add", "positions[", shoal_agent_def_t d = shoal_agent_default_def();      \
      const float p[6] = {0, 0, 0, 0, NAN, 0}; shoal_agent_arrays_t a =                                      \
                                                   {                                                         \
                                                       .positions = p,                                       \
                                                   };                                                        \
      return shoal_agents_add(w, &d, &a, 2, NULL);)                                                          \
    X(agents_add_bad_def, INV, "agents_add", "vehicle.mass",                                                 \
      shoal_agent_def_t d = shoal_agent_default_def();                                                       \
      d.vehicle.mass = -1.0f; return shoal_agents_add(w, &d, NULL, 2, NULL);)                                \
    X(agents_remove_null, INV, "agents_remove", "ids", return shoal_agents_remove(w, NULL, 1);)              \
    X(agents_remove_negative, INV, "agents_remove", "count", return shoal_agents_remove(w, &f->flock, -1);)  \
    X(agents_remove_stale, STALE, "agents_remove", "stale", shoal_agent_t ids[2] = {f->flock, f->stale};     \
      return shoal_agents_remove(w, ids, 2);)                                                                \
    X(agents_remove_repeat, INV, "agents_remove", "repeats", shoal_agent_t ids[2] = {f->flock, f->flock};    \
      return shoal_agents_remove(w, ids, 2);)                                                                \
    X(set_targets_null, INV, "agents_set_targets", "targets",                                                \
      return shoal_agents_set_targets(w, &f->flock, 1, NULL);)                                               \
    X(set_targets_nan, INV, "agents_set_targets", "targets[", const float t[3] = NAN3;                       \
      return shoal_agents_set_targets(w, &f->flock, 1, t);)                                                  \
    X(agents_teleport_null, INV, "agents_teleport", "positions",                                             \
      return shoal_agents_teleport(w, &f->flock, 1, NULL, NULL);)                                            \
    X(agents_teleport_foreign, STALE, "agents_teleport", "does not belong", const float p[3] = {0};          \
      return shoal_agents_teleport(w, &f->foreign, 1, p, NULL);)                                             \
    X(parallel_null_fn, INV, "add_parallel_system", "fn",                                                    \
      return shoal_world_add_parallel_system(w, "x", SHOAL_STAGE_DECIDE, NULL, 0, NULL, NULL);)              \
    X(parallel_unknown_component, NOTF, "add_parallel_system", "nope",                                       \
      return shoal_world_add_parallel_system(w, "x", SHOAL_STAGE_DECIDE, "nope", 0, misuse_block, NULL);)    \
    X(parallel_negative_block, INV, "add_parallel_system", "min_block",                                      \
      return shoal_world_add_parallel_system(w, "x", SHOAL_STAGE_DECIDE, NULL, -1, misuse_block, NULL);)     \
    X(parallel_bad_stage, INV, "add_system", "stage",                                                        \
      return shoal_world_add_parallel_system(w, "x", (shoal_stage_t)9, NULL, 0, misuse_block, NULL);)        \
    X(parallel_duplicate, INV, "add_system", "steer",                                                        \
      return shoal_world_add_parallel_system(w, "steer", SHOAL_STAGE_DECIDE, NULL, 0, misuse_block, NULL);)

EXTEND_CASES(DEFINE_CASE)
static const case_t extend_cases[] = {EXTEND_CASES(LIST_CASE)};

Test(misuse, extension_api) { run_cases(extend_cases, (int)(sizeof extend_cases / sizeof extend_cases[0])); }

/* ---- handles: null, stale, foreign for every call that takes one ------- */

/* The case tables are laid out by hand: one call per row. */
// clang-format off
#define HANDLE_CALLS(X, H, WHAT)                                                                          \
    X(remove_##H, STALE, "agent_remove", WHAT, return shoal_agent_remove(w, f->H);)                    \
    X(get_state_##H, STALE, "agent_get_state", WHAT, shoal_agent_state_t s;                            \
      return shoal_agent_get_state(w, f->H, &s);)                                                     \
    X(get_def_##H, STALE, "agent_get_def", WHAT, shoal_agent_def_t d; return shoal_agent_get_def(w, f->H, &d);) \
    X(teleport_##H, STALE, "agent_teleport", WHAT, const float p[3] = {0};                             \
      return shoal_agent_teleport(w, f->H, p, p, 0.0f, NULL);)                                        \
    X(set_target_##H, STALE, "agent_set_target", WHAT, const float p[3] = {0};                         \
      return shoal_agent_set_target(w, f->H, p);)                                                     \
    X(set_threat_##H, STALE, "agent_set_threat", WHAT, const float p[3] = {0};                         \
      return shoal_agent_set_threat(w, f->H, p);)                                                     \
    X(set_vehicle_##H, STALE, "agent_set_vehicle", WHAT, shoal_vehicle_t v = shoal_vehicle_default();  \
      return shoal_agent_set_vehicle(w, f->H, &v);)                                                   \
    X(set_control_##H, STALE, "agent_set_control", WHAT, shoal_control_t c = shoal_control_default();  \
      return shoal_agent_set_control(w, f->H, &c);)                                                   \
    X(set_behavior_##H, STALE, "agent_set_behavior", WHAT,                                             \
      return shoal_agent_set_behavior(w, f->H, SHOAL_BEHAVIOR_SEEK, 1.0f);)                           \
    X(set_neighbors_##H, STALE, "agent_set_neighbors", WHAT, shoal_neighbors_t n = shoal_neighbors_default(); \
      return shoal_agent_set_neighbors(w, f->H, &n);)                                                 \
    X(set_wander_##H, STALE, "agent_set_wander", WHAT, shoal_wander_t n = shoal_wander_default();      \
      return shoal_agent_set_wander(w, f->H, &n);)                                                    \
    X(set_pursuit_##H, STALE, "agent_set_pursuit", WHAT, shoal_pursuit_t n = shoal_pursuit_default();  \
      return shoal_agent_set_pursuit(w, f->H, &n);)                                                   \
    X(set_follow_##H, STALE, "agent_set_follow", WHAT, shoal_follow_t n = shoal_follow_default();      \
      return shoal_agent_set_follow(w, f->H, &n);)                                                    \
    X(set_avoid_##H, STALE, "agent_set_avoid", WHAT, shoal_avoid_t n = shoal_avoid_default();          \
      return shoal_agent_set_avoid(w, f->H, &n);)                                                     \
    X(set_dseek_##H, STALE, "agent_set_dseek", WHAT, shoal_dseek_t n = shoal_dseek_default();          \
      return shoal_agent_set_dseek(w, f->H, &n);)                                                     \
    X(set_gains_##H, STALE, "agent_set_gains", WHAT, return shoal_agent_set_gains(w, f->H, 1.0f, 1.0f);) \
    X(set_user_##H, STALE, "agent_set_user_value", WHAT, return shoal_agent_set_user_value(w, f->H, 7);) \
    X(get_user_##H, STALE, "agent_get_user_value", WHAT, uint64_t u; return shoal_agent_get_user_value(w, f->H, &u);) \
    X(route_index_##H, STALE, "agent_route_index", WHAT, int32_t i; return shoal_agent_route_index(w, f->H, &i);) \
    X(set_path_##H, STALE, "agent_set_path", WHAT, return shoal_agent_set_path(w, f->H, 0);)          \
    X(set_drive_##H, STALE, "agent_set_drive", WHAT, return shoal_agent_set_drive(w, f->H, 0.5f, 0.0f);) \
    X(set_ground_##H, STALE, "agent_set_ground", WHAT, shoal_ground_t g = shoal_agent_default_def().ground; \
      return shoal_agent_set_ground(w, f->H, &g);)                                                    \
    X(get_ground_##H, STALE, "agent_get_ground", WHAT, shoal_ground_status_t g;                        \
      return shoal_agent_get_ground(w, f->H, &g);)                                                    \
    X(get_planner_##H, STALE, "agent_get_planner", WHAT, shoal_planner_status_t g;                     \
      return shoal_agent_get_planner(w, f->H, &g);)                                                   \
    X(set_goal_##H, STALE, "agent_set_planner_goal", WHAT, const float p[3] = {0};                     \
      return shoal_agent_set_planner_goal(w, f->H, SHOAL_PLAN_GOAL_SEEK, p, f->null);)                \
    X(formation_##H, STALE, "formation_arrive", WHAT, shoal_agent_t m[2] = {f->flock, f->H};           \
      const float o[2][3] = {{0}, {1, 0, 0}}; shoal_waypoint_t a = {{0}, {1, 0, 0}, 0};              \
      return shoal_formation_arrive(w, m, 2, o, &a);)

#define HANDLE_CASES(X)                                                                             \
    HANDLE_CALLS(X, null, "null") HANDLE_CALLS(X, stale, "stale") HANDLE_CALLS(X, foreign, "does not belong") \
    X(pursuit_foreign_target, STALE, "agent_set_pursuit", "pursuit.target",                          \
      shoal_pursuit_t n = shoal_pursuit_default(); n.target = f->foreign;                              \
      return shoal_agent_set_pursuit(w, f->flock, &n);)                                               \
    X(follow_foreign_leader, STALE, "agent_set_follow", "follow.leader",                             \
      shoal_follow_t n = shoal_follow_default(); n.leader = f->foreign;                                \
      return shoal_agent_set_follow(w, f->flock, &n);)                                                \
    X(goal_agent_null, INV, "agent_set_planner_goal", "agent",                                       \
      return shoal_agent_set_planner_goal(w, f->planner, SHOAL_PLAN_GOAL_PURSUE, NULL, f->null);)     \
    X(goal_agent_stale, STALE, "agent_set_planner_goal", "not a live agent",                                    \
      return shoal_agent_set_planner_goal(w, f->planner, SHOAL_PLAN_GOAL_PURSUE, NULL, f->stale);)    \
    X(goal_agent_foreign, STALE, "agent_set_planner_goal", "does not belong",                        \
      return shoal_agent_set_planner_goal(w, f->planner, SHOAL_PLAN_GOAL_EVADE, NULL, f->foreign);)   \
    X(goal_agent_itself, INV, "agent_set_planner_goal", "itself",                                    \
      return shoal_agent_set_planner_goal(w, f->planner, SHOAL_PLAN_GOAL_PURSUE, NULL, f->planner);)
// clang-format on
HANDLE_CASES(DEFINE_CASE)
static const case_t handle_cases[] = {HANDLE_CASES(LIST_CASE)};

Test(misuse, null_stale_and_foreign_handles)
{
    run_cases(handle_cases, (int)(sizeof handle_cases / sizeof handle_cases[0]));
    fixture_t f;
    setup(&f);
    cr_assert_not(shoal_agent_is_valid(f.w, f.null));
    cr_assert_not(shoal_agent_is_valid(f.w, f.stale));
    cr_assert_not(shoal_agent_is_valid(f.w, f.foreign));
    cr_assert(shoal_agent_is_valid(f.w, f.flock));
    /* A forged generation and a forged index are stale too. */
    shoal_agent_t forged = f.flock;
    forged.generation++;
    cr_assert_not(shoal_agent_is_valid(f.w, forged));
    forged = f.flock;
    forged.index1 = 1000000;
    cr_assert_not(shoal_agent_is_valid(f.w, forged));
    const float p[3] = {0};
    cr_assert_eq(shoal_agent_set_target(f.w, forged, p), SHOAL_ERR_STALE_HANDLE);
    teardown(&f);
}

/* ---- agent definitions: every field that has a rule ------------------- */

typedef void def_fn(shoal_agent_def_t* d, const fixture_t* f);
typedef struct def_case_t {
    const char* name;
    def_fn* fn;
    shoal_status_t expected;
    const char* what;
} def_case_t;

#define DEFINE_DEF(name, status, what, ...)                                                                  \
    static void def_##name(shoal_agent_def_t* d, const fixture_t* f)                                         \
    {                                                                                                        \
        (void)f;                                                                                             \
        __VA_ARGS__                                                                                          \
    }
#define LIST_DEF(name, status, what, ...) {#name, def_##name, status, what},

#define PLANNER(body)                                                                                        \
    d->planner.enabled = 1;                                                                                  \
    body
#define GROUND(body)                                                                                         \
    d->ground.enabled = 1;                                                                                   \
    body

#define DEF_CASES(X)                                                                                         \
    X(uninitialized, INV, "shoal_agent_default_def", d->internal_value = 0;)                                 \
    X(position_nan, INV, "position[0]", d->position[0] = NAN;)                                               \
    X(position_inf, INV, "position[2]", d->position[2] = INFINITY;)                                          \
    X(velocity_nan, INV, "velocity[1]", d->velocity[1] = NAN;)                                               \
    X(heading_inf, INV, "heading", d->heading = -INFINITY;)                                                  \
    X(pitch_nan, INV, "pitch", d->pitch = NAN;)                                                              \
    X(target_nan, INV, "target[0]", d->target[0] = NAN;)                                                     \
    X(threat_inf, INV, "threat[1]", d->threat[1] = INFINITY;)                                                \
    X(mass_zero, INV, "vehicle.mass", d->vehicle.mass = 0.0f;)                                               \
    X(mass_negative, INV, "vehicle.mass", d->vehicle.mass = -1.0f;)                                          \
    X(inertia_nan, INV, "vehicle.inertia", d->vehicle.inertia = NAN;)                                        \
    X(max_force_negative, INV, "vehicle.max_force", d->vehicle.max_force = -1.0f;)                           \
    X(max_torque_inf, INV, "vehicle.max_torque", d->vehicle.max_torque = INFINITY;)                          \
    X(max_speed_negative, INV, "vehicle.max_speed", d->vehicle.max_speed = -0.5f;)                           \
    X(max_turn_rate_nan, INV, "vehicle.max_turn_rate", d->vehicle.max_turn_rate = NAN;)                      \
    X(radius_negative, INV, "vehicle.radius", d->vehicle.radius = -1.0f;)                                    \
    X(speed_gain_nan, INV, "control.speed_gain", d->control.speed_gain = NAN;)                               \
    X(heading_gain_negative, INV, "control.heading_gain", d->control.heading_gain = -1.0f;)                  \
    X(turn_damping_inf, INV, "control.turn_damping", d->control.turn_damping = INFINITY;)                    \
    X(arrive_gain_zero, INV, "arrive_gain", d->arrive_gain = 0.0f;)                                          \
    X(depart_gain_negative, INV, "depart_gain", d->depart_gain = -1.0f;)                                     \
    X(weight_nan, INV, "weights[seek]", d->weights[SHOAL_BEHAVIOR_SEEK] = NAN;)                              \
    X(weight_negative, INV, "weights[wander]", d->weights[SHOAL_BEHAVIOR_WANDER] = -1.0f;)                   \
    X(weight_inf, INV, "weights[avoid]", d->weights[SHOAL_BEHAVIOR_AVOID] = INFINITY;)                       \
    X(weight_unknown_slot, INV, "weights[15]", d->weights[15] = 1.0f;)                                       \
    X(neighbors_radius_zero, INV, "neighbors.radius", d->neighbors.radius = 0.0f;)                           \
    X(neighbors_fov_zero, INV, "neighbors.fov", d->neighbors.fov = 0.0f;)                                    \
    X(neighbors_fov_large, INV, "neighbors.fov", d->neighbors.fov = 7.0f;)                                   \
    X(neighbors_cap_negative, INV, "neighbors.max_neighbors", d->neighbors.max_neighbors = -1;)              \
    X(separation_gain_nan, INV, "neighbors.separation_gain", d->neighbors.separation_gain = NAN;)            \
    X(wander_noise_negative, INV, "wander.noise", d->wander.noise = -1.0f;)                                  \
    X(wander_cruise_inf, INV, "wander.cruise_speed", d->wander.cruise_speed = INFINITY;)                     \
    X(prediction_negative, INV, "pursuit.max_prediction", d->pursuit.max_prediction = -1.0f;)                \
    X(pursuit_foreign, STALE, "pursuit.target", d->pursuit.target = f->foreign;)                             \
    X(follow_foreign, STALE, "follow.leader", d->follow.leader = f->foreign;)                                \
    X(follow_gain_zero, INV, "follow.arrive_gain", d->follow.arrive_gain = 0.0f;)                            \
    X(follow_behind_nan, INV, "follow.behind", d->follow.behind = NAN;)                                      \
    X(avoid_lookahead_negative, INV, "avoid.lookahead_time", d->avoid.lookahead_time = -1.0f;)               \
    X(avoid_tangential_two, INV, "avoid.tangential", d->avoid.tangential = 2;)                               \
    X(dseek_route_unknown, INV, "dseek.route", d->dseek.route = 99;)                                         \
    X(dseek_route_negative, INV, "dseek.route", d->dseek.route = -2;)                                        \
    X(dseek_position_nan, INV, "dseek.waypoint.position", d->dseek.waypoint.position[1] = NAN;)              \
    X(dseek_not_unit, INV, "unit", d->weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;                                  \
      d->dseek.waypoint.direction[0] = 3.0f;)                                                                \
    X(dseek_r_min_negative, INV, "dseek.r_min", d->dseek.r_min = -1.0f;)                                     \
    X(ground_enabled_two, INV, "ground.enabled", d->ground.enabled = 2;)                                     \
    X(ground_mass_zero, INV, "ground.vehicle.mass", GROUND(d->ground.vehicle.mass = 0.0f;))                  \
    X(ground_steer_too_large, INV, "ground.vehicle.max_steer", GROUND(d->ground.vehicle.max_steer = 2.0f;))  \
    X(ground_rolling_one, INV, "ground.vehicle.rolling", GROUND(d->ground.vehicle.rolling = 1.0f;))          \
    X(ground_traction_nan, INV, "ground.vehicle.traction", GROUND(d->ground.vehicle.traction = NAN;))        \
    X(ground_follower_unknown, INV, "ground.follow.follower",                                                \
      GROUND(d->ground.follow.follower = (shoal_follower_t)5;))                                              \
    X(ground_path_unknown, INV, "ground.follow.path", GROUND(d->ground.follow.path = 7;))                    \
    X(ground_n_too_small, INV, "ground.follow.n", GROUND(d->ground.follow.n = 2;))                           \
    X(ground_v_max_below_v_min, INV, "ground.follow", GROUND(d->ground.follow.v_min = 20.0f;))               \
    X(ground_lookahead_nan, INV, "ground.follow.lookahead_min",                                              \
      GROUND(d->ground.follow.lookahead_min = NAN;))                                                         \
    X(ground_and_planner, INV, "both", GROUND(d->planner.enabled = 1;))                                      \
    X(planner_enabled_two, INV, "planner.enabled", d->planner.enabled = 2;)                                  \
    X(planner_speed_zero, INV, "planner.speed", PLANNER(d->planner.speed = 0.0f;))                           \
    X(planner_radius_nan, INV, "planner.radius", PLANNER(d->planner.radius = NAN;))                          \
    X(planner_goal_unknown, INV, "planner.goal", PLANNER(d->planner.goal = (shoal_plan_goal_t)9;))           \
    X(planner_goal_point_inf, INV, "planner.goal_point[1]", PLANNER(d->planner.goal_point[1] = INFINITY;))   \
    X(planner_pursue_null, INV, "planner.goal_agent", PLANNER(d->planner.goal = SHOAL_PLAN_GOAL_PURSUE;))    \
    X(planner_pursue_foreign, STALE, "planner.goal_agent",                                                   \
      PLANNER(d->planner.goal = SHOAL_PLAN_GOAL_EVADE; d->planner.goal_agent = f->foreign;))                 \
    X(planner_pursue_stale, STALE, "planner.goal_agent",                                                     \
      PLANNER(d->planner.goal = SHOAL_PLAN_GOAL_PURSUE; d->planner.goal_agent = f->stale;))                  \
    X(planner_avoid_two, INV, "planner.avoid_collisions", PLANNER(d->planner.avoid_collisions = 2;))         \
    X(planner_strategy_unknown, INV, "planner.strategy",                                                     \
      PLANNER(d->planner.strategy = (shoal_plan_strategy_t)3;))                                              \
    X(planner_discount_one, INV, "planner.discount", PLANNER(d->planner.discount = 1.0f;))                   \
    X(planner_optimism_two, INV, "planner.optimism", PLANNER(d->planner.optimism = 2.0f;))                   \
    X(planner_depth_zero, INV, "planner.max_depth", PLANNER(d->planner.max_depth = 0;))                      \
    X(planner_depth_huge, INV, "planner.max_depth", PLANNER(d->planner.max_depth = 65;))                     \
    X(planner_min_depth_over, INV, "planner.min_depth", PLANNER(d->planner.min_depth = 7;))                  \
    X(planner_expansions_zero, INV, "planner.max_expansions", PLANNER(d->planner.max_expansions = 0;))       \
    X(planner_expansions_huge, INV, "planner.max_expansions",                                                \
      PLANNER(d->planner.max_expansions = 2000000000;))                                                      \
    X(planner_k_skip_zero, INV, "planner.k_skip", PLANNER(d->planner.k_skip = 0;))                           \
    X(planner_n_v_zero, INV, "planner.n_v", PLANNER(d->planner.n_v = 0;))                                    \
    X(planner_collapse_zero, INV, "planner.collapse", PLANNER(d->planner.collapse = 0.0f;))                  \
    X(planner_damping_one, INV, "planner.damping", PLANNER(d->planner.damping = 1.0f;))

DEF_CASES(DEFINE_DEF)
static const def_case_t def_cases[] = {DEF_CASES(LIST_DEF)};

Test(misuse, agent_definitions)
{
    fixture_t f;
    setup(&f);
    snapshot_t* before = malloc(sizeof *before);
    cr_assert_not_null(before);
    for (size_t i = 0; i < sizeof def_cases / sizeof def_cases[0]; ++i) {
        const def_case_t* c = &def_cases[i];
        shoal_agent_def_t d = shoal_agent_default_def();
        c->fn(&d, &f);
        take(f.w, before);
        shoal_agent_t id = f.flock;
        shoal_status_t st = shoal_agent_add(f.w, &d, &id);
        const char* msg = shoal_world_last_error(f.w);
        cr_expect_eq(st, c->expected, "%s: got %s (%s)", c->name, shoal_status_string(st), msg);
        cr_expect(strstr(msg, "agent_add") != NULL && strstr(msg, c->what) != NULL,
                  "%s: message '%s' does not name agent_add and '%s'", c->name, msg, c->what);
        cr_expect(shoal_agent_is_null(id), "%s: out_id is not the null handle", c->name);
        assert_unchanged(before, f.w, c->name);
    }
    /* The same rules hold when an agent is changed through its setters. */
    shoal_vehicle_t v = shoal_vehicle_default();
    v.mass = NAN;
    take(f.w, before);
    cr_expect_eq(shoal_agent_set_vehicle(f.w, f.flock, &v), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(f.w), "agent_set_vehicle: vehicle.mass") != NULL, "%s",
              shoal_world_last_error(f.w));
    assert_unchanged(before, f.w, "set_vehicle NaN mass");
    free(before);
    teardown(&f);
}

/* ---- setters, ground vehicles, paths, terrain, planner, trim tables ---- */

static const float heights4[4] = {0, 1, 2, 3};

#define SETTER_CASES(X)                                                                                      \
    X(get_state_null_out, INV, "agent_get_state", "NULL", return shoal_agent_get_state(w, f->flock, NULL);)  \
    X(get_def_null_out, INV, "agent_get_def", "NULL", return shoal_agent_get_def(w, f->flock, NULL);)        \
    X(get_user_null_out, INV, "agent_get_user_value", "NULL",                                                \
      return shoal_agent_get_user_value(w, f->flock, NULL);)                                                 \
    X(route_index_null_out, INV, "agent_route_index", "NULL",                                                \
      return shoal_agent_route_index(w, f->flock, NULL);)                                                    \
    X(teleport_null_position, INV, "agent_teleport", "position", const float v[3] = {0};                     \
      return shoal_agent_teleport(w, f->flock, NULL, v, 0.0f, NULL);)                                        \
    X(teleport_null_velocity, INV, "agent_teleport", "velocity", const float v[3] = {0};                     \
      return shoal_agent_teleport(w, f->flock, v, NULL, 0.0f, NULL);)                                        \
    X(teleport_nan_position, INV, "agent_teleport", "position[0]", const float p[3] = NAN3, v[3] = {0};      \
      return shoal_agent_teleport(w, f->flock, p, v, 0.0f, NULL);)                                           \
    X(teleport_inf_velocity, INV, "agent_teleport", "velocity[1]", const float p[3] = {0}, v[3] = INF3;      \
      return shoal_agent_teleport(w, f->flock, p, v, 0.0f, NULL);)                                           \
    X(teleport_nan_heading, INV, "agent_teleport", "heading", const float p[3] = {0};                        \
      return shoal_agent_teleport(w, f->flock, p, p, NAN, NULL);)                                            \
    X(target_null, INV, "agent_set_target", "target", return shoal_agent_set_target(w, f->flock, NULL);)     \
    X(target_nan, INV, "agent_set_target", "target[0]", const float p[3] = NAN3;                             \
      return shoal_agent_set_target(w, f->flock, p);)                                                        \
    X(target_inf, INV, "agent_set_target", "target[1]", const float p[3] = INF3;                             \
      return shoal_agent_set_target(w, f->flock, p);)                                                        \
    X(threat_null, INV, "agent_set_threat", "threat", return shoal_agent_set_threat(w, f->flock, NULL);)     \
    X(threat_neg_inf, INV, "agent_set_threat", "threat[2]", const float p[3] = NINF3;                        \
      return shoal_agent_set_threat(w, f->flock, p);)                                                        \
    X(vehicle_null, INV, "agent_set_vehicle", "vehicle", return shoal_agent_set_vehicle(w, f->flock, NULL);) \
    X(vehicle_speed_nan, INV, "agent_set_vehicle", "vehicle.max_speed",                                      \
      shoal_vehicle_t v = shoal_vehicle_default();                                                           \
      v.max_speed = NAN; return shoal_agent_set_vehicle(w, f->flock, &v);)                                   \
    X(control_null, INV, "agent_set_control", "control", return shoal_agent_set_control(w, f->flock, NULL);) \
    X(control_inf, INV, "agent_set_control", "control.speed_gain",                                           \
      shoal_control_t c = shoal_control_default();                                                           \
      c.speed_gain = INFINITY; return shoal_agent_set_control(w, f->flock, &c);)                             \
    X(behavior_negative, INV, "agent_set_behavior", "behavior",                                              \
      return shoal_agent_set_behavior(w, f->flock, (shoal_behavior_t)-1, 1.0f);)                             \
    X(behavior_past_end, INV, "agent_set_behavior", "behavior",                                              \
      return shoal_agent_set_behavior(w, f->flock, SHOAL_BEHAVIOR_COUNT_, 1.0f);)                            \
    X(behavior_huge, INV, "agent_set_behavior", "behavior",                                                  \
      return shoal_agent_set_behavior(w, f->flock, (shoal_behavior_t)1000, 1.0f);)                           \
    X(behavior_weight_nan, INV, "agent_set_behavior", "weights[seek]",                                       \
      return shoal_agent_set_behavior(w, f->flock, SHOAL_BEHAVIOR_SEEK, NAN);)                               \
    X(behavior_weight_negative, INV, "agent_set_behavior", "weights[flee]",                                  \
      return shoal_agent_set_behavior(w, f->flock, SHOAL_BEHAVIOR_FLEE, -1.0f);)                             \
    X(neighbors_null, INV, "agent_set_neighbors", "neighbors",                                               \
      return shoal_agent_set_neighbors(w, f->flock, NULL);)                                                  \
    X(neighbors_radius_inf, INV, "agent_set_neighbors", "neighbors.radius",                                  \
      shoal_neighbors_t n = shoal_neighbors_default();                                                       \
      n.radius = INFINITY; return shoal_agent_set_neighbors(w, f->flock, &n);)                               \
    X(wander_null, INV, "agent_set_wander", "wander", return shoal_agent_set_wander(w, f->flock, NULL);)     \
    X(wander_nan, INV, "agent_set_wander", "wander.strength", shoal_wander_t n = shoal_wander_default();     \
      n.strength = NAN; return shoal_agent_set_wander(w, f->flock, &n);)                                     \
    X(pursuit_null, INV, "agent_set_pursuit", "pursuit", return shoal_agent_set_pursuit(w, f->flock, NULL);) \
    X(follow_null, INV, "agent_set_follow", "follow", return shoal_agent_set_follow(w, f->flock, NULL);)     \
    X(avoid_null, INV, "agent_set_avoid", "avoid", return shoal_agent_set_avoid(w, f->flock, NULL);)         \
    X(avoid_gain_negative, INV, "agent_set_avoid", "avoid.gain", shoal_avoid_t n = shoal_avoid_default();    \
      n.gain = -2.0f; return shoal_agent_set_avoid(w, f->flock, &n);)                                        \
    X(dseek_null, INV, "agent_set_dseek", "dseek", return shoal_agent_set_dseek(w, f->flock, NULL);)         \
    X(dseek_route_unknown, INV, "agent_set_dseek", "dseek.route", shoal_dseek_t n = shoal_dseek_default();   \
      n.route = 5; return shoal_agent_set_dseek(w, f->flock, &n);)                                           \
    X(gains_nan, INV, "agent_set_gains", "arrive_gain",                                                      \
      return shoal_agent_set_gains(w, f->flock, NAN, 1.0f);)                                                 \
    X(gains_zero, INV, "agent_set_gains", "depart_gain",                                                     \
      return shoal_agent_set_gains(w, f->flock, 1.0f, 0.0f);)                                                \
    X(formation_null_members, INV, "formation_arrive", "members", const float o[1][3] = {{0}};               \
      shoal_waypoint_t a = {{0}, {1, 0, 0}, 0}; return shoal_formation_arrive(w, NULL, 1, o, &a);)           \
    X(formation_null_offsets, INV, "formation_arrive", "offsets", shoal_waypoint_t a = {{0}, {1, 0, 0}, 0};  \
      return shoal_formation_arrive(w, &f->flock, 1, NULL, &a);)                                             \
    X(formation_null_anchor, INV, "formation_arrive", "anchor", const float o[1][3] = {{0}};                 \
      return shoal_formation_arrive(w, &f->flock, 1, o, NULL);)                                              \
    X(formation_zero, INV, "formation_arrive", "count", const float o[1][3] = {{0}};                         \
      shoal_waypoint_t a = {{0}, {1, 0, 0}, 0}; return shoal_formation_arrive(w, &f->flock, 0, o, &a);)      \
    X(formation_negative, INV, "formation_arrive", "count", const float o[1][3] = {{0}};                     \
      shoal_waypoint_t a = {{0}, {1, 0, 0}, 0}; return shoal_formation_arrive(w, &f->flock, -4, o, &a);)     \
    X(formation_nan_offset, INV, "formation_arrive", "offsets[1][0]",                                        \
      shoal_agent_t m[2] = {f->flock, f->plain};                                                             \
      const float o[2][3] = {{0}, {NAN, 0, 0}}; shoal_waypoint_t a = {{0}, {1, 0, 0}, 0};                    \
      return shoal_formation_arrive(w, m, 2, o, &a);)                                                        \
    X(formation_anchor_not_unit, INV, "formation_arrive", "anchor.direction", const float o[1][3] = {{0}};   \
      shoal_waypoint_t a = {{0}, {0, 0, 0}, 0}; return shoal_formation_arrive(w, &f->flock, 1, o, &a);)      \
    X(formation_anchor_nan, INV, "formation_arrive: member 0", "dseek.waypoint.position[0]",                 \
      shoal_agent_t m[2] = {f->flock, f->plain};                                                             \
      const float o[2][3] = {{0}, {0}}; shoal_waypoint_t a = {{NAN, 0, 0}, {1, 0, 0}, 0};                    \
      return shoal_formation_arrive(w, m, 2, o, &a);)                                                        \
    X(formation_slot_overflow, INV, "formation_arrive: member 1", "dseek.waypoint.position[0]",              \
      shoal_agent_t m[2] = {f->flock, f->plain};                                                             \
      const float o[2][3] = {{0}, {3e38f, 0, 0}}; shoal_waypoint_t a = {{1e17f, 0, 0}, {1, 0, 0}, 0};        \
      return shoal_formation_arrive(w, m, 2, o, &a);)                                                        \
    X(terrain_one_sample, INV, "set_terrain", "nx and ny",                                                   \
      shoal_terrain_t t = {.nx = 1, .ny = 2, .origin = {0, 0}, .cell = 1.0f, .heights = heights4};           \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(terrain_negative, INV, "set_terrain", "nx and ny",                                                     \
      shoal_terrain_t t = {.nx = -2, .ny = 2, .origin = {0, 0}, .cell = 1.0f, .heights = heights4};          \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(terrain_too_many, CAPY, "set_terrain", "too many",                                                     \
      shoal_terrain_t t =                                                                                    \
          {.nx = 1 << 20, .ny = 1 << 20, .origin = {0, 0}, .cell = 1.0f, .heights = heights4};               \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(terrain_cell_zero, INV, "set_terrain", "cell",                                                         \
      shoal_terrain_t t = {.nx = 2, .ny = 2, .origin = {0, 0}, .heights = heights4};                         \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(terrain_cell_nan, INV, "set_terrain", "cell",                                                          \
      shoal_terrain_t t = {.nx = 2, .ny = 2, .origin = {0, 0}, .cell = NAN, .heights = heights4};            \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(terrain_origin_inf, INV, "set_terrain", "origin[1]",                                                   \
      shoal_terrain_t t = {.nx = 2, .ny = 2, .origin = {0, INFINITY}, .cell = 1.0f, .heights = heights4};    \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(terrain_null_heights, INV, "set_terrain", "heights",                                                   \
      shoal_terrain_t t =                                                                                    \
          {                                                                                                  \
              .nx = 2,                                                                                       \
              .ny = 2,                                                                                       \
              .origin = {0, 0},                                                                              \
              .cell = 1.0f,                                                                                  \
          };                                                                                                 \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(terrain_nan_height, INV, "set_terrain", "heights[3]", const float h[4] = {0, 0, 0, NAN};               \
      shoal_terrain_t t = {.nx = 2, .ny = 2, .origin = {0, 0}, .cell = 1.0f, .heights = h};                  \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(path_null, INV, "add_path", "xyz", return shoal_world_add_path(w, NULL, 2, 1.0f, NULL);)               \
    X(path_one_point, INV, "add_path", "2", const float p[3] = {0};                                          \
      return shoal_world_add_path(w, p, 1, 1.0f, NULL);)                                                     \
    X(path_negative_count, INV, "add_path", "2", const float p[3] = {0};                                     \
      return shoal_world_add_path(w, p, -5, 1.0f, NULL);)                                                    \
    X(path_nan_point, INV, "add_path", "waypoint 1", const float p[6] = {0, 0, 0, NAN, 1, 0};                \
      return shoal_world_add_path(w, p, 2, 1.0f, NULL);)                                                     \
    X(path_repeated_point, INV, "add_path", "waypoint 1", const float p[6] = {1, 1, 0, 1, 1, 0};             \
      return shoal_world_add_path(w, p, 2, 1.0f, NULL);)                                                     \
    X(path_width_zero, INV, "add_path", "half_width", const float p[6] = {0, 0, 0, 5, 0, 0};                 \
      return shoal_world_add_path(w, p, 2, 0.0f, NULL);)                                                     \
    X(path_width_nan, INV, "add_path", "half_width", const float p[6] = {0, 0, 0, 5, 0, 0};                  \
      return shoal_world_add_path(w, p, 2, NAN, NULL);)                                                      \
    X(set_path_unknown, NOTF, "set_path", "7", const float p[6] = {0, 0, 0, 5, 0, 0};                        \
      return shoal_world_set_path(w, 7, p, 2, 1.0f);)                                                        \
    X(set_path_negative, NOTF, "set_path", "-1", const float p[6] = {0, 0, 0, 5, 0, 0};                      \
      return shoal_world_set_path(w, -1, p, 2, 1.0f);)                                                       \
    X(set_path_bad_points, INV, "set_path", "waypoint", const float p[6] = {0, 0, 0, INFINITY, 0, 0};        \
      return shoal_world_set_path(w, 0, p, 2, 1.0f);)                                                        \
    X(agent_path_unknown, INV, "agent_set_path", "path", return shoal_agent_set_path(w, f->vehicle, 3);)     \
    X(agent_path_not_vehicle, INV, "agent_set_path", "not a ground vehicle",                                 \
      return shoal_agent_set_path(w, f->flock, 0);)                                                          \
    X(drive_nan, INV, "agent_set_drive", "throttle",                                                         \
      return shoal_agent_set_drive(w, f->vehicle, NAN, 0.0f);)                                               \
    X(drive_inf, INV, "agent_set_drive", "steering",                                                         \
      return shoal_agent_set_drive(w, f->vehicle, 0.0f, INFINITY);)                                          \
    X(drive_not_vehicle, INV, "agent_set_drive", "ground vehicle",                                           \
      return shoal_agent_set_drive(w, f->plain, 0.5f, 0.0f);)                                                \
    X(ground_null, INV, "agent_set_ground", "ground", return shoal_agent_set_ground(w, f->vehicle, NULL);)   \
    X(ground_bad_mass, INV, "agent_set_ground", "ground.vehicle.mass",                                       \
      shoal_ground_t g = shoal_agent_default_def().ground;                                                   \
      g.enabled = 1; g.vehicle.mass = -3.0f; return shoal_agent_set_ground(w, f->vehicle, &g);)              \
    X(ground_on_planner, INV, "agent_set_ground", "both",                                                    \
      shoal_ground_t g = shoal_agent_default_def().ground;                                                   \
      g.enabled = 1; return shoal_agent_set_ground(w, f->planner, &g);)                                      \
    X(get_ground_null_out, INV, "agent_get_ground", "NULL",                                                  \
      return shoal_agent_get_ground(w, f->vehicle, NULL);)                                                   \
    X(get_ground_not_vehicle, INV, "agent_get_ground", "ground vehicle", shoal_ground_status_t g;            \
      return shoal_agent_get_ground(w, f->flock, &g);)                                                       \
    X(get_planner_null_out, INV, "agent_get_planner", "NULL",                                                \
      return shoal_agent_get_planner(w, f->planner, NULL);)                                                  \
    X(get_planner_not_planner, INV, "agent_get_planner", "planner agent", shoal_planner_status_t p;          \
      return shoal_agent_get_planner(w, f->flock, &p);)                                                      \
    X(goal_not_planner, INV, "agent_set_planner_goal", "planner agent", const float p[3] = {0};              \
      return shoal_agent_set_planner_goal(w, f->flock, SHOAL_PLAN_GOAL_SEEK, p, f->null);)                   \
    X(goal_unknown, INV, "agent_set_planner_goal", "goal", const float p[3] = {0};                           \
      return shoal_agent_set_planner_goal(w, f->planner, (shoal_plan_goal_t)17, p, f->null);)                \
    X(goal_negative, INV, "agent_set_planner_goal", "goal", const float p[3] = {0};                          \
      return shoal_agent_set_planner_goal(w, f->planner, (shoal_plan_goal_t)-1, p, f->null);)                \
    X(goal_seek_null_point, INV, "agent_set_planner_goal", "point",                                          \
      return shoal_agent_set_planner_goal(w, f->planner, SHOAL_PLAN_GOAL_FLEE, NULL, f->null);)              \
    X(goal_seek_nan_point, INV, "agent_set_planner_goal", "goal_point[0]", const float p[3] = NAN3;          \
      return shoal_agent_set_planner_goal(w, f->planner, SHOAL_PLAN_GOAL_SEEK, p, f->null);)                 \
    X(trim_null, INV, "set_trim_table", "spec", return shoal_world_set_trim_table(w, NULL);)                 \
    X(trim_axes_3d_in_2d, INV, "set_trim_table", "axes", shoal_trim_spec_t s = shoal_trim_spec_default(3);   \
      return shoal_world_set_trim_table(w, &s);)                                                             \
    X(trim_samples_zero, INV, "set_trim_table", "samples", shoal_trim_spec_t s = shoal_trim_spec_default(2); \
      s.samples[0] = 0; return shoal_world_set_trim_table(w, &s);)                                           \
    X(trim_samples_huge, INV, "set_trim_table", "samples", shoal_trim_spec_t s = shoal_trim_spec_default(2); \
      s.samples[0] = 65; return shoal_world_set_trim_table(w, &s);)                                          \
    X(trim_rate_nan, INV, "set_trim_table", "max_rate", shoal_trim_spec_t s = shoal_trim_spec_default(2);    \
      s.max_rate[0] = NAN; return shoal_world_set_trim_table(w, &s);)                                        \
    X(trim_interval_zero, INV, "set_trim_table", "interval",                                                 \
      shoal_trim_spec_t s = shoal_trim_spec_default(2);                                                      \
      s.interval = 0.0f; return shoal_world_set_trim_table(w, &s);)                                          \
    X(trim_interval_inf, INV, "set_trim_table", "interval",                                                  \
      shoal_trim_spec_t s = shoal_trim_spec_default(2);                                                      \
      s.interval = INFINITY; return shoal_world_set_trim_table(w, &s);)                                      \
    X(trim_substeps_zero, INV, "set_trim_table", "substeps",                                                 \
      shoal_trim_spec_t s = shoal_trim_spec_default(2);                                                      \
      s.substeps = 0; return shoal_world_set_trim_table(w, &s);)                                             \
    X(trim_substeps_huge, INV, "set_trim_table", "substeps",                                                 \
      shoal_trim_spec_t s = shoal_trim_spec_default(2);                                                      \
      s.substeps = 100001; return shoal_world_set_trim_table(w, &s);)                                        \
    X(trim_other_spec_with_planners, BUSY, "set_trim_table", "planner agents",                               \
      shoal_trim_spec_t s = shoal_trim_spec_default(2);                                                      \
      s.samples[0] = 9; return shoal_world_set_trim_table(w, &s);)                                           \
    X(trim_save_null_path, INV, "save_trim_table", "path", return shoal_world_save_trim_table(w, NULL);)     \
    X(trim_save_bad_dir, SHOAL_ERR_IO, "save_trim_table", "/nonexistent/dir",                                \
      return shoal_world_save_trim_table(w, "/nonexistent/dir/table.trim");)                                 \
    X(trim_load_null_path, INV, "load_trim_table", "path", return shoal_world_load_trim_table(w, NULL);)     \
    X(trim_load_missing, SHOAL_ERR_IO, "load_trim_table", "/nonexistent/table.trim",                         \
      return shoal_world_load_trim_table(w, "/nonexistent/table.trim");)                                     \
    X(trim_load_not_a_table, SHOAL_ERR_PARSE, "load_trim_table", SHOAL_SOURCE_DIR,                           \
      return shoal_world_load_trim_table(w, SHOAL_SOURCE_DIR "/scenarios/tiny.json");)

SETTER_CASES(DEFINE_CASE)
static const case_t setter_cases[] = {SETTER_CASES(LIST_CASE)};

Test(misuse, setters_ground_paths_terrain_planner_trim)
{
    run_cases(setter_cases, (int)(sizeof setter_cases / sizeof setter_cases[0]));
}

/* ---- wrong order: calls from inside a step ----------------------------- */

#define INSTEP_CASES(X)                                                                                      \
    X(step, "world_step", return shoal_world_step(w, 0.05f);)                                                \
    X(add_obstacle, "add_obstacle", const float c[3] = {0};                                                  \
      return shoal_world_add_obstacle(w, c, 1.0f, NULL);)                                                    \
    X(add_moving_obstacle, "add_moving_obstacle", const float c[3] = {0};                                    \
      return shoal_world_add_moving_obstacle(w, c, c, 1.0f, NULL);)                                          \
    X(remove_obstacle, "remove_obstacle", return shoal_world_remove_obstacle(w, f->obstacle);)               \
    X(add_route, "add_route", shoal_waypoint_t p[1] = {{{0}, {1, 0, 0}, 0}};                                 \
      return shoal_world_add_route(w, p, 1, NULL);)                                                          \
    X(set_terrain, "set_terrain",                                                                            \
      shoal_terrain_t t = {.nx = 2, .ny = 2, .origin = {0, 0}, .cell = 1.0f, .heights = heights4};           \
      return shoal_world_set_terrain(w, &t);)                                                                \
    X(add_path, "add_path", const float p[6] = {0, 0, 0, 5, 0, 0};                                           \
      return shoal_world_add_path(w, p, 2, 1.0f, NULL);)                                                     \
    X(set_path, "set_path", const float p[6] = {0, 0, 0, 5, 0, 0};                                           \
      return shoal_world_set_path(w, 0, p, 2, 1.0f);)                                                        \
    X(set_trim_table, "set_trim_table", shoal_trim_spec_t s = shoal_trim_spec_default(2);                    \
      return shoal_world_set_trim_table(w, &s);)                                                             \
    X(load_trim_table, "load_trim_table", return shoal_world_load_trim_table(w, "/nonexistent");)            \
    X(set_trace, "set_trace", return shoal_world_set_trace(w, 16);)                                          \
    X(set_trace_limit, "set_trace_limit", return shoal_world_set_trace_limit(w, 1024);)                      \
    X(add_system, "add_system",                                                                              \
      return shoal_world_add_system(w, "late", SHOAL_STAGE_OBSERVE, dummy_system, NULL);)                    \
    X(set_system_enabled, "set_system_enabled", return shoal_world_set_system_enabled(w, "steer", 0);)       \
    X(populate, "scenario_populate", return populate_tiny(w);)                                               \
    X(add_component, "world_add_component", shoal_component_def_t c = {"late", SHOAL_COLUMN_F32, 1, NULL};   \
      return shoal_world_add_component(w, &c);)                                                              \
    X(add_parallel_system, "add_parallel_system",                                                            \
      return shoal_world_add_parallel_system(w, "late", SHOAL_STAGE_OBSERVE, NULL, 0, misuse_block, NULL);)  \
    X(agents_add, "agents_add", shoal_agent_def_t d = shoal_agent_default_def();                             \
      return shoal_agents_add(w, &d, NULL, 1, NULL);)                                                        \
    X(agents_remove, "agents_remove", return shoal_agents_remove(w, &f->flock, 1);)                          \
    X(agents_set_targets, "agents_set_targets", const float t[3] = {0};                                      \
      return shoal_agents_set_targets(w, &f->flock, 1, t);)                                                  \
    X(agents_teleport, "agents_teleport", const float p[3] = {0};                                            \
      return shoal_agents_teleport(w, &f->flock, 1, p, NULL);)                                               \
    X(destroy, "world_destroy", shoal_world_destroy(w); return SHOAL_ERR_BUSY;)                              \
    X(state_of_pending, "agent_get_state", shoal_agent_def_t d = shoal_agent_default_def();                  \
      shoal_agent_t id; cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK); shoal_agent_state_t st;         \
      shoal_status_t r = shoal_agent_get_state(w, id, &st); shoal_agent_remove(w, id); return r;)            \
    X(drive_pending, "agent_set_drive", shoal_agent_def_t d = shoal_agent_default_def();                     \
      d.ground.enabled = 1; shoal_agent_t id; cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);           \
      shoal_status_t r = shoal_agent_set_drive(w, id, 1.0f, 0.0f); shoal_agent_remove(w, id); return r;)

static shoal_status_t populate_tiny(shoal_world_t* w)
{
    shoal_scenario_t* sc = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_scenario_load_file(SHOAL_SOURCE_DIR "/scenarios/tiny.json", &sc, &err), SHOAL_OK);
    shoal_status_t st = shoal_scenario_populate(sc, w);
    shoal_scenario_destroy(sc);
    return st;
}

#define DEFINE_INSTEP(name, where, ...)                                                                      \
    static shoal_status_t instep_##name(fixture_t* f)                                                        \
    {                                                                                                        \
        shoal_world_t* w = f->w;                                                                             \
        __VA_ARGS__                                                                                          \
    }
#define LIST_INSTEP(name, where, ...) {#name, instep_##name, SHOAL_ERR_BUSY, where, "step"},
INSTEP_CASES(DEFINE_INSTEP)
static const case_t instep_cases[] = {INSTEP_CASES(LIST_INSTEP)};
#define INSTEP_COUNT ((int)(sizeof instep_cases / sizeof instep_cases[0]))

typedef struct instep_result_t {
    fixture_t* f;
    shoal_status_t status[INSTEP_COUNT];
    char message[INSTEP_COUNT][256];
    int ran;
} instep_result_t;

static shoal_status_t instep_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    instep_result_t* r = ctx;
    for (int i = 0; i < INSTEP_COUNT; ++i) {
        r->status[i] = instep_cases[i].fn(r->f);
        snprintf(r->message[i], sizeof r->message[i], "%s", shoal_world_last_error(w));
    }
    r->ran = 1;
    return SHOAL_OK;
}

Test(misuse, calls_from_inside_a_step)
{
    fixture_t f;
    setup(&f);
    instep_result_t* r = calloc(1, sizeof *r);
    r->f = &f;
    cr_assert_eq(shoal_world_add_system(f.w, "misuse", SHOAL_STAGE_DECIDE, instep_system, r), SHOAL_OK);
    snapshot_t* before = malloc(sizeof *before);
    take(f.w, before);
    uint64_t steps = shoal_world_step_count(f.w);
    cr_assert_eq(shoal_world_step(f.w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(f.w));
    cr_assert(r->ran);
    for (int i = 0; i < INSTEP_COUNT; ++i) {
        const case_t* c = &instep_cases[i];
        cr_expect_eq(r->status[i], SHOAL_ERR_BUSY, "%s: got %s (%s)", c->name,
                     shoal_status_string(r->status[i]), r->message[i]);
        cr_expect(strstr(r->message[i], c->where) != NULL && strstr(r->message[i], "step") != NULL,
                  "%s: message '%s'", c->name, r->message[i]);
    }
    /* The step went on and none of them changed the world. */
    cr_assert_eq(shoal_world_step_count(f.w), steps + 1);
    cr_assert_eq(shoal_world_agent_count(f.w), before->agents);
    cr_assert_eq(shoal_world_obstacle_count(f.w), before->obstacles);
    cr_assert_eq(shoal_world_route_count(f.w), before->routes);
    cr_assert_eq(shoal_world_path_count(f.w), before->paths);
    cr_assert_eq(shoal_world_system_count(f.w), before->systems);
    cr_assert_eq(shoal_world_trace_count(f.w), 0);
    shoal_system_stats_t s;
    cr_assert_eq(shoal_world_system_stats(f.w, 4, &s), SHOAL_OK);
    cr_assert_str_eq(s.name, "steer");
    cr_assert(s.enabled);
    free(before);
    free(r);
    teardown(&f);
}

/* ---- functions without a world: errors go to shoal_error_t ------------- */

typedef void def_edit_fn(shoal_world_def_t* d);
#define CREATE_CASES(X)                                                                                      \
    X(uninitialized, "shoal_world_default_def", d->internal_value = 0;)                                      \
    X(dimensions_one, "dimensions", d->dimensions = 1;)                                                      \
    X(dimensions_four, "dimensions", d->dimensions = 4;)                                                     \
    X(threads_negative, "thread_count", d->thread_count = -1;)                                               \
    X(threads_huge, "thread_count", d->thread_count = 1000000;)                                              \
    X(capacity_negative, "initial_capacity", d->initial_capacity = -5;)                                      \
    X(capacity_huge, "initial_capacity", d->initial_capacity = INT32_MAX;)                                   \
    X(reorder_negative, "reorder_interval", d->reorder_interval = -1;)                                       \
    X(cell_nan, "cell_size", d->cell_size = NAN;)                                                            \
    X(cell_negative, "cell_size", d->cell_size = -1.0f;)                                                     \
    X(cell_inf, "cell_size", d->cell_size = INFINITY;)                                                       \
    X(bounds_nan, "bounds_min[0]", d->wrap = 1; d->bounds_min[0] = NAN;                                      \
      d->bounds_max[0] = d->bounds_max[1] = 1;)                                                              \
    X(bounds_empty, "bounds_max[1]", d->wrap = 1; d->bounds_max[0] = 1; d->bounds_max[1] = 0;)               \
    X(bounds_inverted, "bounds_max[0]", d->wrap = 1; d->bounds_min[0] = 5;                                   \
      d->bounds_max[0] = d->bounds_max[1] = 1;)                                                              \
    X(alloc_without_free, "alloc and free", d->alloc = (shoal_alloc_fn*)1;)                                  \
    X(free_without_alloc, "alloc and free", d->free = (shoal_free_fn*)1;)                                    \
    X(enqueue_without_finish, "enqueue_task and finish_task", d->enqueue_task = (shoal_enqueue_task_fn*)1;)  \
    X(backend_unknown, "backend", d->backend = (shoal_backend_t)9;)                                          \
    X(backend_negative, "backend", d->backend = (shoal_backend_t)-1;)                                        \
    X(host_without_hooks, "HOST", d->backend = SHOAL_BACKEND_HOST;)

#define DEFINE_CREATE(name, what, ...)                                                                       \
    static void create_##name(shoal_world_def_t* d) { __VA_ARGS__ }
#define LIST_CREATE(name, what, ...) {#name, create_##name, what},
CREATE_CASES(DEFINE_CREATE)
static const struct {
    const char* name;
    def_edit_fn* fn;
    const char* what;
} create_cases[] = {CREATE_CASES(LIST_CREATE)};

Test(misuse, world_create)
{
    for (size_t i = 0; i < sizeof create_cases / sizeof create_cases[0]; ++i) {
        shoal_world_def_t d = shoal_world_default_def();
        create_cases[i].fn(&d);
        shoal_world_t* w = (shoal_world_t*)&d; /* must be set to NULL */
        shoal_error_t err = {SHOAL_OK, ""};
        shoal_status_t st = shoal_world_create(&d, &w, &err);
        cr_expect_eq(st, SHOAL_ERR_INVALID_ARGUMENT, "%s: got %s (%s)", create_cases[i].name,
                     shoal_status_string(st), err.message);
        cr_expect_eq(err.status, st, "%s: err.status", create_cases[i].name);
        cr_expect_null(w, "%s: out_world not NULL", create_cases[i].name);
        cr_expect(strstr(err.message, "world_create") && strstr(err.message, create_cases[i].what),
                  "%s: message '%s' does not say '%s'", create_cases[i].name, err.message,
                  create_cases[i].what);
        if (w) shoal_world_destroy(w);
    }
    shoal_world_def_t d = shoal_world_default_def();
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(NULL, NULL, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "out_world"), "%s", err.message);
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(NULL, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "def is NULL"), "%s", err.message);
    cr_assert_eq(shoal_world_create(&d, NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT); /* err is optional */
    setenv("SHOAL_THREADS", "many", 1);
    d.thread_count = 0;
    cr_assert_eq(shoal_world_create(&d, &w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "SHOAL_THREADS='many'"), "%s", err.message);
    cr_assert_null(w);
    unsetenv("SHOAL_THREADS");
}

/* Huge sizes: an allocator that refuses anything over 64 MiB stands for a
 * machine without the memory (a real allocation of that size could
 * succeed and be touched). Each fails with OUT_OF_MEMORY, changes nothing
 * and leaks nothing. */
typedef struct capped_t {
    int64_t live;
} capped_t;
static void* capped_alloc(size_t size, size_t align, void* ctx)
{
    if (size > ((size_t)64 << 20)) return NULL;
    void* p = aligned_alloc(align, (size + align - 1) / align * align);
    if (p) ((capped_t*)ctx)->live++;
    return p;
}
static void capped_free(void* p, size_t size, void* ctx)
{
    (void)size;
    ((capped_t*)ctx)->live--;
    free(p);
}

Test(misuse, huge_sizes_fail_cleanly)
{
    capped_t cap = {0};
    shoal_world_def_t d = shoal_world_default_def();
    d.thread_count = 1;
    d.alloc = capped_alloc;
    d.free = capped_free;
    d.alloc_user_ctx = &cap;
    d.initial_capacity = INT32_MAX / 2;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&d, &w, &err), SHOAL_ERR_OUT_OF_MEMORY, "%s", err.message);
    cr_assert(strstr(err.message, "world_create: out of memory"), "%s", err.message);
    cr_assert_null(w);
    cr_assert_eq(cap.live, 0);
    d.initial_capacity = 16;
    cr_assert_eq(shoal_world_create(&d, &w, &err), SHOAL_OK, "%s", err.message);
    shoal_agent_def_t a = shoal_agent_default_def();
    cr_assert_eq(shoal_agent_add(w, &a, NULL), SHOAL_OK);
    uint64_t hash = shoal_world_state_hash(w);
    cr_assert_eq(shoal_world_set_trace(w, INT32_MAX / 2), SHOAL_ERR_OUT_OF_MEMORY);
    cr_assert(strstr(shoal_world_last_error(w), "set_trace: out of memory"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_trace_count(w), 0);
    float* heights = calloc((size_t)4200 * 4200, sizeof(float));
    cr_assert_not_null(heights);
    shoal_terrain_t t = {.nx = 4200, .ny = 4200, .origin = {0, 0}, .cell = 1.0f, .heights = heights};
    cr_assert_eq(shoal_world_set_terrain(w, &t), SHOAL_ERR_OUT_OF_MEMORY);
    cr_assert(strstr(shoal_world_last_error(w), "set_terrain: out of memory"), "%s",
              shoal_world_last_error(w));
    free(heights);
    cr_assert_eq(shoal_world_state_hash(w), hash);
    cr_assert_eq(shoal_world_step(w, 0.1f), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_world_destroy(w);
    cr_assert_eq(cap.live, 0);
}

Test(misuse, null_world)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    shoal_agent_t id = {1, 1, 1};
    const float p[3] = {0};
    int32_t n = 0;
    shoal_agent_batch_t b = {0};
    cr_assert_eq(shoal_world_step(NULL, 0.1f), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_add(NULL, &d, &id), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_remove(NULL, id), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_set_target(NULL, id, p), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_set_path(NULL, id, 0), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_set_planner_goal(NULL, id, SHOAL_PLAN_GOAL_SEEK, p, id),
                 SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_get_user_value(NULL, id, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_read_agents(NULL, &b, 1, &n), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_add_obstacle(NULL, p, 1.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_add_moving_obstacle(NULL, p, p, 1.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_add_path(NULL, p, 1, 1.0f, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_set_terrain(NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_set_trim_table(NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_save_trim_table(NULL, "x"), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_set_trace(NULL, 1), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_set_trace_limit(NULL, 1), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_add_system(NULL, "x", SHOAL_STAGE_SENSE, dummy_system, NULL),
                 SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_scenario_populate(NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_column_t col;
    cr_assert_eq(shoal_world_column(NULL, "heading", &col), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_row_handles(NULL, 0, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_row(NULL, id), -1);
    cr_assert_eq(shoal_world_add_component(NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agents_add(NULL, &d, NULL, 1, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agents_remove(NULL, &id, 1), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agents_set_targets(NULL, &id, 1, p), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agents_teleport(NULL, &id, 1, p, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_add_parallel_system(NULL, "x", SHOAL_STAGE_DECIDE, NULL, 0, misuse_block, NULL),
                 SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_structure_version(NULL), 0u);
    cr_assert_eq(shoal_world_component_count(NULL), 0);
    cr_assert_eq(shoal_agent_is_valid(NULL, id), 0);
    cr_assert_eq(shoal_world_agent_count(NULL), 0);
    cr_assert_eq(shoal_world_state_hash(NULL), 0);
    cr_assert_eq(shoal_world_trace_count(NULL), 0);
    cr_assert_str_eq(shoal_world_last_error(NULL), "world is NULL");
    shoal_world_destroy(NULL);
    shoal_world_reset_stats(NULL);
    shoal_world_clear_trace(NULL);
    /* Names of values out of range are never NULL. */
    cr_assert_str_eq(shoal_status_string((shoal_status_t)99), "unknown status");
    cr_assert_str_eq(shoal_backend_name((shoal_backend_t)99), "unknown");
    cr_assert_str_eq(shoal_stage_name((shoal_stage_t)-1), "unknown");
    cr_assert_null(shoal_behavior_name((shoal_behavior_t)99));
    cr_assert_null(shoal_behavior_name((shoal_behavior_t)-1));
}

Test(misuse, scenarios_recordings_dseek_presets)
{
    shoal_error_t err;
    shoal_scenario_t* sc = (shoal_scenario_t*)&err;
    cr_assert_eq(shoal_scenario_load_string(NULL, 4, "x", &sc, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_null(sc);
    cr_assert_eq(shoal_scenario_load_string("{}", 2, "x", NULL, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_scenario_load_string("{", 1, "src", &sc, &err), SHOAL_ERR_PARSE);
    cr_assert(strstr(err.message, "src"), "%s", err.message);
    cr_assert_eq(shoal_scenario_load_string("", 0, "empty", &sc, &err), SHOAL_ERR_PARSE);
    cr_assert_eq(shoal_scenario_load_file(NULL, &sc, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_scenario_load_file("/nonexistent/s.json", &sc, &err), SHOAL_ERR_IO);
    cr_assert(strstr(err.message, "/nonexistent/s.json"), "%s", err.message);
    cr_assert_null(sc);
    cr_assert_eq(shoal_scenario_agent_count(NULL), 0);
    cr_assert_null(shoal_scenario_group_name(NULL, 0));
    shoal_scenario_destroy(NULL);
    /* A 3D scenario into a 2D world: refused, world unchanged. */
    cr_assert_eq(shoal_scenario_load_file(SHOAL_SOURCE_DIR "/scenarios/fish3d.json", &sc, &err), SHOAL_OK,
                 "%s", err.message);
    shoal_world_t* w = new_world(2);
    uint64_t h = shoal_world_state_hash(w);
    cr_assert_eq(shoal_scenario_populate(sc, w), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "scenario_populate") &&
                  strstr(shoal_world_last_error(w), "3D"),
              "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_state_hash(w), h);
    cr_assert_eq(shoal_scenario_populate(NULL, w), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_scenario_destroy(sc);

    /* Recordings. */
    shoal_recording_header_t hd = shoal_recording_default_header();
    shoal_recorder_t* rec = (shoal_recorder_t*)&err;
    cr_assert_eq(shoal_recording_open(NULL, &hd, &rec, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_null(rec);
    cr_assert_eq(shoal_recording_open("/tmp/x.rec", NULL, &rec, &err), SHOAL_ERR_INVALID_ARGUMENT);
    hd.dt = NAN;
    cr_assert_eq(shoal_recording_open("/tmp/x.rec", &hd, &rec, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(err.message, "dt"), "%s", err.message);
    hd = shoal_recording_default_header();
    hd.internal_value = 0;
    cr_assert_eq(shoal_recording_open("/tmp/x.rec", &hd, &rec, &err), SHOAL_ERR_INVALID_ARGUMENT);
    hd = shoal_recording_default_header();
    cr_assert_eq(shoal_recording_open("/nonexistent/dir/x.rec", &hd, &rec, &err), SHOAL_ERR_IO);
    cr_assert_null(rec);
    cr_assert_eq(shoal_recording_write_frame(NULL, w, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_recording_close(NULL, &err), SHOAL_OK); /* documented: NULL is ignored */
    shoal_recording_t* r = (shoal_recording_t*)&err;
    cr_assert_eq(shoal_recording_load(NULL, 0, &r, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_recording_load("/nonexistent/x.rec", 0, &r, &err), SHOAL_ERR_IO);
    cr_assert_null(r);
    cr_assert_eq(shoal_recording_load_memory(NULL, 16, "m", 0, &r, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_recording_load_memory("garbage!garbage!", 16, "m", 0, &r, &err), SHOAL_ERR_PARSE);
    cr_assert(strstr(err.message, "m"), "%s", err.message);
    cr_assert_null(r);
    shoal_recording_frame_t fr;
    cr_assert_eq(shoal_recording_frame(NULL, 0, &fr), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_recording_frame_count(NULL), 0);
    shoal_recording_destroy(NULL);

    /* Directed seek as a function: bad input still leaves a finite steer. */
    float out[3] = {NAN, NAN, NAN};
    const float pos[3] = {0}, head[3] = {1, 0, 0}, wp[3] = {10, 0, 0}, dir[3] = {0, 1, 0}, nan3[3] = NAN3;
    cr_assert_eq(shoal_dseek_steer_2d(pos, head, wp, dir, 0.0f, out, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(isfinite(out[0]) && isfinite(out[1]), "steer not finite");
    cr_assert(strstr(err.message, "dseek_steer"), "%s", err.message);
    cr_assert_eq(shoal_dseek_steer_2d(pos, head, wp, dir, NAN, out, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_dseek_steer_2d(nan3, head, wp, dir, 1.0f, out, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_dseek_steer_3d(pos, head, wp, head, -1.0f, out, &err), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_dseek_steer_3d(pos, head, nan3, head, 1.0f, out, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(isfinite(out[0]) && isfinite(out[1]) && isfinite(out[2]), "steer not finite");
    cr_assert_eq(shoal_dseek_steer_2d(NULL, head, wp, dir, 1.0f, out, &err), SHOAL_ERR_INVALID_ARGUMENT);
    const float long_dir[3] = {3, 0, 0};
    cr_assert_eq(shoal_dseek_steer_2d(pos, head, wp, long_dir, 1.0f, out, &err), SHOAL_ERR_INVALID_ARGUMENT);

    /* Presets. */
    shoal_ground_vehicle_t gv = shoal_agent_default_def().ground.vehicle, keep = gv;
    cr_assert_eq(shoal_ground_vehicle_preset("boat", &gv, &err), SHOAL_ERR_NOT_FOUND);
    cr_assert(strstr(err.message, "boat") && strstr(err.message, "hovercraft"), "%s", err.message);
    cr_assert_eq(memcmp(&gv, &keep, sizeof gv), 0);
    cr_assert_eq(shoal_ground_vehicle_preset(NULL, &gv, &err), SHOAL_ERR_NOT_FOUND);
    cr_assert_eq(shoal_ground_vehicle_preset("car", NULL, &err), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_world_destroy(w);
}
