/* The navmesh module (src/modules/navmesh/): pedestrians each with a goal
 * of its own behind walls (straight, L, U, a maze of 20 rooms) all arrive,
 * none ending a step inside a wall; two crowds through a door both ways
 * arrive without overlapping; the replanning budget; one state hash
 * for 1, 2 and 4 threads and across a snapshot; bad input refused with the
 * world unchanged. In a build without Recast and Detour every test checks
 * the documented refusal instead. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/snapshot.h>

#include "scenes/maze.h"
#include "ecs/world.h"
#include "support.h"

static uint64_t lcg(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}
static float unif(uint64_t* s, float lo, float hi) { return lo + (hi - lo) * (float)lcg(s) / 2147483648.0f; }

static shoal_agent_def_t walker(float x, float y, float gx, float gy)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    d.position[0] = x;
    d.position[1] = y;
    d.weights[SHOAL_BEHAVIOR_NAVMESH] = 1.0f;
    d.navmesh.goal[0] = gx;
    d.navmesh.goal[1] = gy;
    return d;
}

/* Without Recast and Detour: the calls that need them are refused with
 * NOT_FOUND, a message that says why, and the world unchanged. Returns 1
 * when they are there. */
static int with_recast(void)
{
    if (shoal_navmesh_available()) return 1;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    uint64_t h = shoal_world_state_hash(w);
    shoal_navmesh_params_t p = shoal_navmesh_params_default();
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_ERR_NOT_FOUND);
    cr_assert(strstr(shoal_world_last_error(w), "Recast/Detour"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_navmesh_update(w), SHOAL_ERR_NOT_FOUND);
    shoal_agent_def_t d = walker(0, 0, 1, 1);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_NOT_FOUND);
    cr_assert(strstr(shoal_world_last_error(w), "weights[navmesh]"), "%s", shoal_world_last_error(w));
    cr_assert(strstr(shoal_world_last_error(w), "librecast-dev"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_agent_count(w), 0);
    cr_assert_eq(shoal_world_state_hash(w), h);
    shoal_navmesh_stats_t st;
    cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
    cr_assert_eq(st.polygons, 0);
    shoal_world_destroy(w);
    return 0;
}

static void add_wall(shoal_world_t* w, const float* p, int n, int closed)
{
    cr_assert_eq(shoal_world_add_wall(w, p, n, closed, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
}

static float seg_dist(const float* s, float x, float y)
{
    float dx = s[2] - s[0], dy = s[3] - s[1];
    float t = ((x - s[0]) * dx + (y - s[1]) * dy) / (dx * dx + dy * dy);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return hypotf(s[0] + t * dx - x, s[1] + t * dy - y);
}

/* Step until every agent has arrived or `seconds` pass; each step, no
 * agent closer to a wall than 0.9 of its radius. Returns the seconds
 * taken, or -1. */
static float run_until_arrived(shoal_world_t* w, int32_t agents, float seconds)
{
    const float dt = 0.05f;
    int32_t nseg = 0;
    cr_assert_eq(shoal_world_wall_segments(w, NULL, 0, &nseg), SHOAL_OK);
    float* seg = malloc((size_t)(nseg > 0 ? nseg : 1) * 4 * sizeof *seg);
    cr_assert_eq(shoal_world_wall_segments(w, seg, nseg, &nseg), SHOAL_OK);
    float* pos = malloc((size_t)agents * 3 * sizeof *pos);
    float taken = -1.0f;
    shoal_navmesh_stats_t st;
    for (int s = 0; s < (int)(seconds / dt); ++s) {
        cr_assert_eq(shoal_world_step(w, dt), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_agent_batch_t b = {0};
        b.positions = pos;
        int32_t n = 0;
        cr_assert_eq(shoal_world_read_agents(w, &b, agents, &n), SHOAL_OK);
        for (int32_t i = 0; i < n; ++i)
            for (int32_t k = 0; k < nseg; ++k)
                cr_assert(seg_dist(seg + 4 * k, pos[3 * i], pos[3 * i + 1]) >= 0.9f * 0.2f,
                          "step %d: agent at (%g, %g) is %g m from wall segment %d", s, (double)pos[3 * i],
                          (double)pos[3 * i + 1], (double)seg_dist(seg + 4 * k, pos[3 * i], pos[3 * i + 1]),
                          (int)k);
        cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
        cr_assert_eq(st.agents, agents);
        cr_assert_eq(st.no_way, 0, "step %d: %d agents with no way", s, st.no_way);
        cr_assert_eq(st.off_mesh, 0, "step %d: %d agents off the mesh", s, st.off_mesh);
        if (st.arrived == agents) {
            taken = (float)(s + 1) * dt;
            break;
        }
    }
    if (taken < 0 && getenv("NAVMESH_DEBUG")) {
        shoal_agent_batch_t b = {0};
        b.positions = pos;
        int32_t n = 0;
        shoal_world_read_agents(w, &b, agents, &n);
        for (int32_t i = 0; i < n; ++i)
            fprintf(stderr, "agent %d at (%.2f, %.2f)\n", (int)i, (double)pos[3 * i], (double)pos[3 * i + 1]);
        fprintf(stderr, "arrived %d waiting %d pending %d polygons %d\n", st.arrived, st.waiting, st.pending,
                st.polygons);
    }
    free(seg);
    free(pos);
    return taken;
}

enum { STRAIGHT, ELL, CUP, SHAPES };
static const char* const shape_names[SHAPES] = {"straight", "L", "U"};

/* The wall, and a floor of 20 x 20 m round it (the walls' box and its
 * margin would not reach the goals). */
static void add_shape(shoal_world_t* w, int shape)
{
    static const float straight[] = {0, -5, 0, 5};
    static const float ell[] = {-5, 4, 0, 4, 0, -5};
    static const float cup[] = {-5, 4, 0, 4, 0, -4, -5, -4};
    if (shape == STRAIGHT) add_wall(w, straight, 2, 0);
    if (shape == ELL) add_wall(w, ell, 3, 0);
    if (shape == CUP) add_wall(w, cup, 4, 0);
    shoal_navmesh_params_t p = shoal_navmesh_params_default();
    const float bounds[4] = {-10, -10, 10, 10};
    memcpy(p.bounds, bounds, sizeof bounds);
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
}

/* Random points in [x0, x1] x [y0, y1], at least `gap` apart. */
static int scatter(uint64_t* s, float x0, float x1, float y0, float y1, float gap, int n, float* xy)
{
    int placed = 0;
    for (int tries = 0; placed < n && tries < 200000; ++tries) {
        float x = unif(s, x0, x1), y = unif(s, y0, y1);
        int ok = 1;
        for (int k = 0; k < placed && ok; ++k) ok = hypotf(xy[2 * k] - x, xy[2 * k + 1] - y) >= gap;
        if (!ok) continue;
        xy[2 * placed] = x;
        xy[2 * placed + 1] = y;
        placed++;
    }
    return placed;
}

Test(navmesh, refused_without_recast_baked_with_it)
{
    if (!with_recast()) return;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_navmesh_stats_t st;
    cr_assert_eq(shoal_world_navmesh_update(w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
    cr_assert_eq(st.polygons, 0, "no walls, no bounds: no floor");
    add_shape(w, CUP);
    cr_assert_eq(shoal_world_navmesh_update(w), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
    cr_assert_gt(st.polygons, 2, "%d polygons", st.polygons);
    shoal_world_destroy(w);
}

/* Forty pedestrians start inside (or beside) the wall's pocket, each with
 * a goal of its own 2 to 7 m past the wall: all arrive. */
Test(navmesh, forty_pedestrians_with_distinct_goals_behind_straight_L_and_U_walls_all_arrive, .timeout = 240)
{
    if (!with_recast()) return;
    for (int shape = 0; shape < SHAPES; ++shape)
        for (uint64_t seed = 1; seed <= 2; ++seed) {
            shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
            add_shape(w, shape);
            uint64_t s = seed * 7919;
            float start[80], goal[80];
            cr_assert_eq(scatter(&s, -4.5f, -1.0f, -3.5f, 3.5f, 0.5f, 40, start), 40);
            cr_assert_eq(scatter(&s, 2.0f, 7.0f, -4.0f, 4.0f, 0.5f, 40, goal), 40);
            for (int i = 0; i < 40; ++i) {
                shoal_agent_def_t d = walker(start[2 * i], start[2 * i + 1], goal[2 * i], goal[2 * i + 1]);
                cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
            }
            float t = run_until_arrived(w, 40, 120.0f);
            shoal_navmesh_stats_t st;
            shoal_world_navmesh_stats(w, &st);
            cr_assert(t > 0.0f, "%s wall, seed %d: %d of 40 arrived in 120 s", shape_names[shape], (int)seed,
                      st.arrived);
            shoal_world_destroy(w);
        }
}

/* The maze of scenes/maze.h: 5 x 4 rooms of 4 m, each joined to the next by
 * a 1.2 m door in the walls of a random spanning tree (seeded), the rest of
 * the walls shut, in a box. */
static int add_maze_wall(void* context, float x0, float y0, float x1, float y1)
{
    const float a[] = {x0, y0, x1, y1};
    add_wall(context, a, 2, 0);
    return 1;
}

static void add_maze(shoal_world_t* w, uint64_t seed)
{
    enum { NX = 5, NY = 4 };
    const float R = 4.0f;
    int parent[NX * NY];
    unsigned char open[2 * NX * NY];
    uint64_t s = seed;
    scene_maze_doors(NX, NY, &s, parent, open);
    const float box[] = {0, 0, NX * R, 0, NX * R, NY * R, 0, NY * R};
    add_wall(w, box, 4, 1);
    for (int c = 0; c < NX * NY; ++c) scene_maze_room_walls(NX, NY, R, 1.2f, open, c, add_maze_wall, w);
}

/* One walker in each room, each bound for a random point of another room
 * (a permutation: no two share a goal room). */
Test(navmesh, walkers_in_a_maze_of_20_rooms_each_reach_a_goal_of_their_own, .timeout = 240)
{
    if (!with_recast()) return;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
        shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
        add_maze(w, seed * 31337);
        uint64_t s = seed;
        int to[20];
        for (int i = 0; i < 20; ++i) to[i] = i;
        for (int i = 19; i > 0; --i) { /* a derangement by rotation of a shuffle */
            int j = (int)(lcg(&s) % (uint64_t)(i + 1)), t = to[i];
            to[i] = to[j];
            to[j] = t;
        }
        for (int room = 0; room < 20; ++room) {
            int goal_room = to[(room + 1) % 20];
            if (goal_room == room) goal_room = to[(room + 2) % 20];
            float x = (float)(room % 5) * 4.0f + 2.0f, y = (float)(room / 5) * 4.0f + 2.0f;
            float gx = (float)(goal_room % 5) * 4.0f + 2.0f, gy = (float)(goal_room / 5) * 4.0f + 2.0f;
            shoal_agent_def_t d =
                walker(x + unif(&s, -1, 1), y + unif(&s, -1, 1), gx + unif(&s, -1, 1), gy + unif(&s, -1, 1));
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
        }
        float t = run_until_arrived(w, 20, 240.0f);
        shoal_navmesh_stats_t st;
        shoal_world_navmesh_stats(w, &st);
        cr_assert(t > 0.0f, "maze %d: %d of 20 arrived in 240 s", (int)seed, st.arrived);
        shoal_world_destroy(w);
    }
}

/* 200 walkers in the U's world with goals on every side, a budget of 8
 * plans a step and a replan every 40 steps. */
static shoal_world_t* navmesh_world(int threads)
{
    shoal_world_t* w = make_world(2, threads, threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL);
    add_shape(w, CUP);
    shoal_navmesh_params_t p;
    shoal_world_get_navmesh(w, &p);
    p.replans_per_step = 8;
    p.replan_interval = 40;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
    uint64_t s = 99;
    float start[400];
    cr_assert_eq(scatter(&s, -6.5f, 6.5f, -6.5f, 6.5f, 0.5f, 200, start), 200);
    for (int i = 0; i < 200; ++i) {
        shoal_agent_def_t d = walker(start[2 * i], start[2 * i + 1], unif(&s, -6, 6), unif(&s, -6, 6));
        if (fabsf(d.position[0]) < 0.5f) d.position[0] += 1.0f; /* off the wall's line */
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    return w;
}

Test(navmesh, one_state_hash_for_1_2_and_4_threads, .timeout = 120)
{
    if (!with_recast()) return;
    uint64_t h[3];
    const int threads[3] = {1, 2, 4};
    for (int t = 0; t < 3; ++t) {
        shoal_world_t* w = navmesh_world(threads[t]);
        int64_t replans = 0;
        for (int s = 0; s < 200; ++s) {
            cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
            shoal_navmesh_stats_t st;
            shoal_world_navmesh_stats(w, &st);
            cr_assert_leq(st.replans, 8, "the budget");
            replans += st.replans;
        }
        cr_assert_gt(replans, 200, "%lld plans in 200 steps", (long long)replans);
        h[t] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    cr_assert_eq(h[0], h[1]);
    cr_assert_eq(h[0], h[2]);
}

/* The budget: 200 new walkers, 8 plans a step; the ones waiting stand,
 * and all have a path after 25 steps. */
Test(navmesh, a_budget_of_8_plans_a_step_serves_200_walkers_in_25_steps)
{
    if (!with_recast()) return;
    shoal_world_t* w = navmesh_world(1);
    shoal_navmesh_stats_t st;
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    shoal_world_navmesh_stats(w, &st);
    cr_assert_eq(st.replans, 8);
    cr_assert_eq(st.pending, 192);
    cr_assert_eq(st.waiting, 192);
    for (int s = 1; s < 25; ++s) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    shoal_world_navmesh_stats(w, &st);
    cr_assert_eq(st.waiting, 0);
    shoal_world_destroy(w);
}

Test(navmesh, a_snapshot_keeps_parameters_and_paths_and_steps_on_alike, .timeout = 120)
{
    if (!with_recast()) return;
    shoal_world_t* w = navmesh_world(2);
    for (int s = 0; s < 50; ++s)
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* v = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &v, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    shoal_navmesh_params_t q;
    shoal_world_get_navmesh(v, &q);
    cr_assert_eq(q.replans_per_step, 8);
    cr_assert_eq(q.replan_interval, 40);
    for (int s = 0; s < 50; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
        cr_assert_eq(shoal_world_step(v, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(v));
    }
    cr_assert_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    free(buf);
    shoal_world_destroy(v);
    shoal_world_destroy(w);
}

/* A new goal is planned for in the next step, and reached. */
Test(navmesh, a_new_goal_is_planned_for_and_reached)
{
    if (!with_recast()) return;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_shape(w, CUP);
    shoal_agent_def_t d = walker(-2, 0, 4, 0);
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    cr_assert(run_until_arrived(w, 1, 60.0f) > 0.0f);
    shoal_navmesh_t n = shoal_navmesh_default();
    n.goal[0] = -2.0f;
    n.goal[1] = 2.0f; /* back into the pocket of the U */
    cr_assert_eq(shoal_agent_set_navmesh(w, id, &n), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    shoal_navmesh_stats_t st;
    shoal_world_navmesh_stats(w, &st);
    cr_assert_eq(st.replans, 1);
    cr_assert(run_until_arrived(w, 1, 60.0f) > 0.0f);
    shoal_agent_state_t a;
    cr_assert_eq(shoal_agent_get_state(w, id, &a), SHOAL_OK);
    cr_assert(hypotf(a.position[0] + 2.0f, a.position[1] - 2.0f) < 0.35f, "at (%g, %g)",
              (double)a.position[0], (double)a.position[1]);
    shoal_world_destroy(w);
}

/* A goal walled in: the path ends short of it, and the walker says so. */
Test(navmesh, a_walled_in_goal_gives_no_way)
{
    if (!with_recast()) return;
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    const float box[] = {3, -1.5f, 6, -1.5f, 6, 1.5f, 3, 1.5f};
    add_wall(w, box, 4, 1);
    shoal_navmesh_params_t p = shoal_navmesh_params_default();
    const float bounds[4] = {-5, -5, 10, 5};
    memcpy(p.bounds, bounds, sizeof bounds);
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_def_t d = walker(-3, 0, 4.5f, 0);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    shoal_navmesh_stats_t st = {0};
    for (int s = 0; s < 400 && st.no_way == 0; ++s) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
        shoal_world_navmesh_stats(w, &st);
    }
    cr_assert_eq(st.no_way, 1);
    cr_assert_eq(st.arrived, 0);
    shoal_world_destroy(w);
}

Test(navmesh, bad_input_is_refused_and_the_world_is_unchanged)
{
    if (!with_recast()) return;
    shoal_world_t* w = navmesh_world(1);
    uint64_t h = shoal_world_state_hash(w);
    shoal_navmesh_params_t p = shoal_navmesh_params_default();
    p.cell = 0.0f;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "cell"), "%s", shoal_world_last_error(w));
    p = shoal_navmesh_params_default();
    p.agent_radius = NAN;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "agent_radius"), "%s", shoal_world_last_error(w));
    p = shoal_navmesh_params_default();
    p.replans_per_step = 0;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "replans_per_step"), "%s", shoal_world_last_error(w));
    p = shoal_navmesh_params_default();
    p.bounds[0] = 5.0f;
    p.bounds[2] = 1.0f;
    p.bounds[3] = 1.0f;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "bounds"), "%s", shoal_world_last_error(w));
    p = shoal_navmesh_params_default();
    const float huge[4] = {-5000, -5000, 5000, 5000};
    memcpy(p.bounds, huge, sizeof huge);
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_ERR_CAPACITY);
    cr_assert(strstr(shoal_world_last_error(w), "Recast"), "%s", shoal_world_last_error(w));
    shoal_agent_def_t d = walker(-2, 0, NAN, 0);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "navmesh.goal[0]"), "%s", shoal_world_last_error(w));
    d = walker(-2, 0, 1, 0);
    d.navmesh.arrive_distance = -1.0f;
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "navmesh.arrive_distance"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_state_hash(w), h);
    /* walls that make the floor (their box) too large fail the step, which
     * changes nothing */
    p = shoal_navmesh_params_default();
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    const float far[] = {-4000, -4000, 4000, 4000};
    add_wall(w, far, 2, 0);
    h = shoal_world_state_hash(w);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_ERR_CAPACITY);
    cr_assert(strstr(shoal_world_last_error(w), "navmesh floor"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_state_hash(w), h);
    cr_assert_eq(shoal_world_step_count(w), 1);
    shoal_world_destroy(w);
    /* 3D */
    shoal_world_t* w3 = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    d = walker(0, 0, 1, 1);
    cr_assert_eq(shoal_agent_add(w3, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w3), "2D"), "%s", shoal_world_last_error(w3));
    cr_assert_eq(shoal_world_set_navmesh(w3, &p), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_world_destroy(w3);
}

/* ---- whole paths: shoal_world_navmesh_path, and ground vehicles on them ---- */

/* An L-shaped wall whose pocket holds the start: (-30, 5) to (5, 5) to
 * (5, -30), on a floor of 80 m x 80 m. */
static const float POCKET_L[] = {-30, 5, 5, 5, 5, -30};

static shoal_world_t* pocket_world(float agent_radius)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_wall(w, POCKET_L, 3, 0);
    shoal_navmesh_params_t p = shoal_navmesh_params_default();
    const float bounds[4] = {-40, -40, 40, 40};
    memcpy(p.bounds, bounds, sizeof bounds);
    p.cell = 0.25f;
    p.agent_radius = agent_radius;
    cr_assert_eq(shoal_world_set_navmesh(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
    return w;
}

/* The smallest distance from any point of the polyline to the L. */
static float polyline_clearance(const float* xy, int32_t n)
{
    float best = INFINITY;
    for (int32_t k = 0; k + 1 < n; ++k)
        for (int i = 0; i <= 50; ++i) {
            float t = (float)i / 50.0f;
            float x = xy[2 * k] + t * (xy[2 * k + 2] - xy[2 * k]),
                  y = xy[2 * k + 1] + t * (xy[2 * k + 3] - xy[2 * k + 1]);
            best = fminf(best, fminf(seg_dist(POCKET_L, x, y), seg_dist(POCKET_L + 2, x, y)));
        }
    return best;
}

Test(navmesh, a_whole_path_goes_round_the_wall_with_its_clearance)
{
    if (!shoal_navmesh_available()) {
        shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        int32_t n = 0;
        const float a[2] = {0, 0}, b[2] = {1, 1};
        cr_assert_eq(shoal_world_navmesh_path(w, a, b, NULL, 0, &n, NULL), SHOAL_ERR_NOT_FOUND);
        cr_assert(strstr(shoal_world_last_error(w), "librecast-dev"), "%s", shoal_world_last_error(w));
        shoal_world_destroy(w);
        return;
    }
    shoal_world_t* w = pocket_world(2.0f);
    uint64_t h = shoal_world_state_hash(w);
    const float from[2] = {-20, -20}, to[2] = {20, 20};
    int32_t n = -1, partial = -1;
    /* the count alone first */
    cr_assert_eq(shoal_world_navmesh_path(w, from, to, NULL, 0, &n, &partial), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    cr_assert_geq(n, 3, "round an arm's end: at least one corner between the ends, got %d points", n);
    cr_assert_eq(partial, 0);
    float xy[2 * 64];
    cr_assert_leq(n, 64);
    int32_t m = -1;
    cr_assert_eq(shoal_world_navmesh_path(w, from, to, xy, 64, &m, NULL), SHOAL_OK);
    cr_assert_eq(m, n);
    cr_assert_lt(hypotf(xy[0] - from[0], xy[1] - from[1]), 0.5f, "starts at the start");
    cr_assert_lt(hypotf(xy[2 * n - 2] - to[0], xy[2 * n - 1] - to[1]), 0.5f, "ends at the goal");
    /* it keeps the mesh's clearance (2 m, less a cell) from the wall */
    float clear = polyline_clearance(xy, n);
    cr_assert_gt(clear, 1.7f, "clearance %g m", (double)clear);
    /* and is no longer than round the nearer arm's end by its clearance */
    float len = 0.0f;
    for (int32_t k = 0; k + 1 < n; ++k)
        len += hypotf(xy[2 * k + 2] - xy[2 * k], xy[2 * k + 3] - xy[2 * k + 1]);
    float round = hypotf(5 + 2 - from[0], -30 - 2 - from[1]) + hypotf(to[0] - 7, to[1] + 32);
    cr_assert_lt(len, round + 1.0f, "length %g m against %g m round the south end", (double)len,
                 (double)round);
    /* a smaller buffer gets the same first points */
    float head[2 * 2];
    cr_assert_eq(shoal_world_navmesh_path(w, from, to, head, 2, &m, NULL), SHOAL_OK);
    cr_assert_eq(m, n);
    cr_assert_eq(memcmp(head, xy, sizeof head), 0);
    /* asking changes nothing */
    cr_assert_eq(shoal_world_state_hash(w), h);
    /* a goal walled in: the path ends short of it, said so */
    const float box[] = {15, -15, 25, -15, 25, -25, 15, -25};
    add_wall(w, box, 4, 1);
    const float inside[2] = {20, -20};
    cr_assert_eq(shoal_world_navmesh_path(w, from, inside, xy, 64, &m, &partial), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    cr_assert_eq(partial, 1);
    cr_assert_gt(hypotf(xy[2 * m - 2] - inside[0], xy[2 * m - 1] - inside[1]), 4.0f, "ends outside the box");
    /* bad input */
    const float off[2] = {200, 200}, nan[2] = {NAN, 0};
    cr_assert_eq(shoal_world_navmesh_path(w, from, off, xy, 64, &m, NULL), SHOAL_ERR_NOT_FOUND);
    cr_assert(strstr(shoal_world_last_error(w), "to (200, 200) has no walkable polygon within 2 m"), "%s",
              shoal_world_last_error(w));
    cr_assert_eq(shoal_world_navmesh_path(w, nan, to, xy, 64, &m, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "finite"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_navmesh_path(w, from, to, NULL, 4, &m, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w), "capacity"), "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_world_navmesh_path(w, from, to, xy, 64, NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_world_destroy(w);
    shoal_world_t* w3 = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(shoal_world_navmesh_path(w3, from, to, xy, 64, &m, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(shoal_world_last_error(w3), "3D"), "%s", shoal_world_last_error(w3));
    shoal_world_destroy(w3);
}

/* A ground vehicle's world path from the mesh (xyz, z 0). */
static int32_t navmesh_xyz(shoal_world_t* w, const float from[2], const float to[2], float* xyz, int32_t cap)
{
    float xy[2 * 256];
    int32_t n = 0, partial = 0;
    cr_assert_eq(shoal_world_navmesh_path(w, from, to, xy, 256, &n, &partial), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    cr_assert(n >= 2 && n <= cap && partial == 0, "%d points, partial %d", n, partial);
    for (int32_t k = 0; k < n; ++k) {
        xyz[3 * k] = xy[2 * k];
        xyz[3 * k + 1] = xy[2 * k + 1];
        xyz[3 * k + 2] = 0.0f;
    }
    return n;
}

/* A car in the L's pocket takes its path from the mesh and follows it with
 * the path follower to a goal beyond the wall, never nearer the wall than
 * its radius; sent to a second goal mid-run, it is given a new path from
 * where it is (shoal_world_set_path) and follows that to its end. */
Test(navmesh, a_ground_vehicle_follows_a_navmesh_path_round_the_wall_and_a_new_one_mid_run, .timeout = 120)
{
    if (!with_recast()) return;
    /* The mesh keeps 4 m from the wall: the car's radius, 1.5 m, and what
     * its follower cuts off a corner (about 1.5 m: it came 2.47 m from the
     * wall on a mesh of 4 m, 1.37 m on one of 3 m). */
    shoal_world_t* w = pocket_world(4.0f);
    const float from[2] = {-20, -20}, to[2] = {20, 20};
    float xyz[3 * 256];
    int32_t n = navmesh_xyz(w, from, to, xyz, 256);
    int32_t path = -1;
    cr_assert_eq(shoal_world_add_path(w, xyz, n, 3.0f, &path), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = from[0];
    d.position[1] = from[1];
    d.heading = atan2f(xyz[4] - from[1], xyz[3] - from[0]);
    d.ground.enabled = 1;
    d.ground.follow.path = path;
    shoal_agent_t car;
    cr_assert_eq(shoal_agent_add(w, &d, &car), SHOAL_OK, "%s", shoal_world_last_error(w));
    const float radius = d.ground.vehicle.radius;
    const float dt = 1.0f / 60.0f;
    float nearest = INFINITY;
    shoal_ground_status_t g;
    shoal_agent_state_t s;
    int steps = 0;
    for (; steps < 60 * 60; ++steps) {
        cr_assert_eq(shoal_world_step(w, dt), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_agent_get_state(w, car, &s), SHOAL_OK);
        nearest = fminf(nearest, fminf(seg_dist(POCKET_L, s.position[0], s.position[1]),
                                       seg_dist(POCKET_L + 2, s.position[0], s.position[1])));
        cr_assert_eq(shoal_agent_get_ground(w, car, &g), SHOAL_OK);
        if (g.completed) break;
    }
    cr_assert(g.completed, "not completed in 60 s: at (%g, %g)", (double)s.position[0],
              (double)s.position[1]);
    cr_assert_lt(hypotf(s.position[0] - to[0], s.position[1] - to[1]), 6.0f, "ends near the goal");
    cr_assert_gt(nearest, radius, "came %g m from the wall, its radius %g m", (double)nearest,
                 (double)radius);
    cr_assert_eq(g.teleports, 0);

    /* a second goal, back round the west end into the pocket's far corner:
     * planned from where the car is, given on the same path id */
    const float here[2] = {s.position[0], s.position[1]}, next[2] = {-25, -25};
    n = navmesh_xyz(w, here, next, xyz, 256);
    cr_assert_eq(shoal_world_set_path(w, path, xyz, n, 3.0f), SHOAL_OK, "%s", shoal_world_last_error(w));
    nearest = INFINITY;
    for (steps = 0; steps < 60 * 90; ++steps) {
        cr_assert_eq(shoal_world_step(w, dt), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_agent_get_state(w, car, &s), SHOAL_OK);
        nearest = fminf(nearest, fminf(seg_dist(POCKET_L, s.position[0], s.position[1]),
                                       seg_dist(POCKET_L + 2, s.position[0], s.position[1])));
        cr_assert_eq(shoal_agent_get_ground(w, car, &g), SHOAL_OK);
        if (g.completed) break;
    }
    cr_assert(g.completed, "the second path not completed in 90 s: at (%g, %g)", (double)s.position[0],
              (double)s.position[1]);
    cr_assert_lt(hypotf(s.position[0] - next[0], s.position[1] - next[1]), 6.0f, "ends near the second goal");
    cr_assert_gt(nearest, radius, "came %g m from the wall on the second path", (double)nearest);
    cr_assert_eq(g.teleports, 0);
    shoal_world_destroy(w);
}

/* Counterflow through a door: a hall of 24 x 20 m cut across by a wall
 * with a 2 m door in its middle, `per_side` walkers on each side, each
 * with a goal of its own on the other side. Returns how many arrived
 * within `seconds`. */
static int32_t door_counterflow(int32_t per_side, float seconds, uint64_t seed)
{
    shoal_world_t* w = make_world(2, 2, SHOAL_BACKEND_OPENMP);
    static const float box[] = {-12, -10, 12, -10, 12, 10, -12, 10};
    static const float west[] = {-12, 0, -1, 0}, east[] = {1, 0, 12, 0};
    add_wall(w, box, 4, 1);
    add_wall(w, west, 2, 0);
    add_wall(w, east, 2, 0);
    uint64_t s = seed * 7919;
    float start[2][200], goal[2][200];
    for (int side = 0; side < 2; ++side) {
        const float sign = side ? 1.0f : -1.0f;
        float y0 = sign > 0 ? 1.0f : -9.5f, y1 = sign > 0 ? 9.5f : -1.0f;
        cr_assert_eq(scatter(&s, -11.5f, 11.5f, y0, y1, 0.5f, per_side, start[side]), per_side);
        cr_assert_eq(scatter(&s, -11.5f, 11.5f, -y1, -y0, 0.5f, per_side, goal[side]), per_side);
        for (int32_t i = 0; i < per_side; ++i) {
            shoal_agent_def_t d =
                walker(start[side][2 * i], start[side][2 * i + 1], goal[side][2 * i], goal[side][2 * i + 1]);
            cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
        }
    }
    shoal_navmesh_stats_t st = {0};
    shoal_crowd_stats_t cs;
    for (int k = 0; k < (int)(seconds / 0.05f); ++k) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(shoal_world_crowd_stats(w, &cs), SHOAL_OK);
        cr_assert_eq(cs.overlapping, 0, "step %d: %d overlapping", k, cs.overlapping);
        cr_assert_eq(shoal_world_navmesh_stats(w, &st), SHOAL_OK);
        if (st.arrived == 2 * per_side) break;
    }
    shoal_world_destroy(w);
    return st.arrived;
}

/* 40 walkers on each side of the door, 40 s, seeds 1 to 4: 297 of 320
 * arrive (74, 68, 76, 79), none overlapping at any step. Before stalled
 * walkers edged right (navmesh_steer), 190 (51, 24, 72, 43): the two
 * crowds met in the door and held each other still. */
Test(navmesh, walkers_through_a_door_both_ways_arrive_without_overlapping, .timeout = 240)
{
    if (!with_recast()) return;
    int32_t arrived = 0;
    for (uint64_t seed = 1; seed <= 4; ++seed) arrived += door_counterflow(40, 40.0f, seed);
    cr_assert_geq(arrived, 260, "%d of 320 arrived in 40 s", arrived);
}
