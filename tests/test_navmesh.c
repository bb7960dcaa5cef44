/* The navmesh module (src/modules/navmesh/): pedestrians each with a goal
 * of its own behind walls (straight, L, U, a maze of 20 rooms) all arrive,
 * none ending a step inside a wall; the replanning budget; one state hash
 * for 1, 2 and 4 threads and across a snapshot; bad input refused with the
 * world unchanged. In a build without Recast and Detour every test checks
 * the documented refusal instead. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/snapshot.h>

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

/* A maze of 5 x 4 rooms of 4 m, each joined to the next by a 1.2 m door in
 * the walls of a random spanning tree (seeded), the rest of the walls shut. */
static void add_maze(shoal_world_t* w, uint64_t seed)
{
    enum { NX = 5, NY = 4 };
    const float R = 4.0f, door = 1.2f;
    int parent[NX * NY];
    for (int i = 0; i < NX * NY; ++i) parent[i] = i;
    int open_e[NX * NY] = {0}, open_n[NX * NY] = {0};
    uint64_t s = seed;
    int joined = 0;
    while (joined < NX * NY - 1) {
        int c = (int)(lcg(&s) % (NX * NY)), north = (int)(lcg(&s) % 2);
        int cx = c % NX, cy = c / NX;
        if (north ? cy + 1 >= NY : cx + 1 >= NX) continue;
        int d = north ? c + NX : c + 1;
        int a = c, b = d;
        while (parent[a] != a) a = parent[a];
        while (parent[b] != b) b = parent[b];
        if (a == b) continue;
        parent[a] = b;
        (north ? open_n : open_e)[c] = 1;
        joined++;
    }
    const float box[] = {0, 0, NX * R, 0, NX * R, NY * R, 0, NY * R};
    add_wall(w, box, 4, 1);
    for (int c = 0; c < NX * NY; ++c) {
        float x = (float)(c % NX) * R, y = (float)(c / NX) * R;
        if (c % NX + 1 < NX) {
            float m = y + 0.5f * R;
            if (open_e[c]) {
                const float a[] = {x + R, y, x + R, m - 0.5f * door},
                            b[] = {x + R, m + 0.5f * door, x + R, y + R};
                add_wall(w, a, 2, 0);
                add_wall(w, b, 2, 0);
            } else {
                const float a[] = {x + R, y, x + R, y + R};
                add_wall(w, a, 2, 0);
            }
        }
        if (c / NX + 1 < NY) {
            float m = x + 0.5f * R;
            if (open_n[c]) {
                const float a[] = {x, y + R, m - 0.5f * door, y + R},
                            b[] = {m + 0.5f * door, y + R, x + R, y + R};
                add_wall(w, a, 2, 0);
                add_wall(w, b, 2, 0);
            } else {
                const float a[] = {x, y + R, x + R, y + R};
                add_wall(w, a, 2, 0);
            }
        }
    }
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
