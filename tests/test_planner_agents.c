/* Planner agents among planner agents: every planner agent's search sees the
 * others as moving spheres along their predicted tracks, so ships that meet
 * head-on pass each other; the tracks come from state fixed before the plan
 * stage, so results stay one hash for every thread count
 * (test_planner_world.c's one_hash runs 200 such agents). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "support.h"

#define HZ 60.0f
#define DT (1.0f / HZ)

static shoal_agent_def_t ship(float x, float heading, float goal_x, int avoid)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = x;
    d.heading = heading;
    d.planner.enabled = 1;
    d.planner.speed = 5.0f;
    d.planner.radius = 1.0f;
    d.planner.goal = SHOAL_PLAN_GOAL_SEEK;
    d.planner.goal_point[0] = goal_x;
    d.planner.avoid_collisions = avoid;
    return d;
}

/* Two ships 80 m apart on one line, each seeking a point behind the other,
 * flown for 16 s (they meet after about 8 s): the smallest distance between
 * their centers, sampled every step. */
static float head_on_closest(int dims, int avoid, int threads)
{
    shoal_world_t* w = make_world(dims, threads, threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t a = ship(-40.0f, 0.0f, 60.0f, avoid);
    shoal_agent_def_t b = ship(40.0f, 3.14159265f, -60.0f, avoid);
    shoal_agent_t ia, ib;
    cr_assert_eq(shoal_agent_add(w, &a, &ia), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(shoal_agent_add(w, &b, &ib), SHOAL_OK, "%s", shoal_world_last_error(w));
    float closest = INFINITY;
    for (int k = 0; k < (int)(16 * HZ); ++k) {
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_agent_state_t sa, sb;
        cr_assert_eq(shoal_agent_get_state(w, ia, &sa), SHOAL_OK);
        cr_assert_eq(shoal_agent_get_state(w, ib, &sb), SHOAL_OK);
        float dx = sa.position[0] - sb.position[0], dy = sa.position[1] - sb.position[1],
              dz = sa.position[2] - sb.position[2];
        float d = sqrtf(dx * dx + dy * dy + dz * dz);
        if (d < closest) closest = d;
    }
    /* Both still get where they were going: past each other. */
    shoal_agent_state_t sa, sb;
    cr_assert_eq(shoal_agent_get_state(w, ia, &sa), SHOAL_OK);
    cr_assert_eq(shoal_agent_get_state(w, ib, &sb), SHOAL_OK);
    cr_assert_gt(sa.position[0], 20.0f, "A at x = %g", (double)sa.position[0]);
    cr_assert_lt(sb.position[0], -20.0f, "B at x = %g", (double)sb.position[0]);
    shoal_world_destroy(w);
    return closest;
}

Test(planner_agents, head_on_ships_pass_clear_of_each_other_2d)
{
    float blind = head_on_closest(2, 0, 1);
    cr_assert_lt(blind, 0.01f, "without avoidance they fly through each other: %g m", (double)blind);
    float seen = head_on_closest(2, 1, 1);
    cr_assert_gt(seen, 2.0f, "closest approach %g m, radii sum to 2 m", (double)seen);
    cr_log_info("2D head-on: closest approach %.3f m (without avoidance %.3f m)", (double)seen,
                (double)blind);
    cr_assert_eq(head_on_closest(2, 1, 2), seen, "2 threads");
}

Test(planner_agents, head_on_ships_pass_clear_of_each_other_3d, .timeout = 60)
{
    float blind = head_on_closest(3, 0, 1);
    cr_assert_lt(blind, 0.01f, "without avoidance they fly through each other: %g m", (double)blind);
    float seen = head_on_closest(3, 1, 1);
    cr_assert_gt(seen, 2.0f, "closest approach %g m, radii sum to 2 m", (double)seen);
    cr_log_info("3D head-on: closest approach %.3f m (without avoidance %.3f m)", (double)seen,
                (double)blind);
    cr_assert_eq(head_on_closest(3, 1, 2), seen, "2 threads");
}

/* The time budget: a search stops when its wall time runs out and flies the
 * best path found so far (anytime), after at least the root's expansion;
 * max_expansions stays the deterministic budget and the default. A 2D
 * uniform search of every control (k_skip 1, depth 8) never runs out of
 * states within 20,000 expansions, which take far longer than 0.2 ms. */
static shoal_planner_status_t budget_run(float budget_ms, int* reached)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 6; ++i) {
        const float c[3] = {15.0f + 10.0f * (float)i, i % 2 ? 4.0f : -4.0f, 0.0f};
        cr_assert_eq(shoal_world_add_obstacle(w, c, 2.0f, NULL), SHOAL_OK);
    }
    shoal_agent_def_t d = ship(0.0f, 0.0f, 90.0f, 1);
    d.planner.strategy = SHOAL_PLAN_UNIFORM;
    d.planner.k_skip = 1;
    d.planner.max_depth = 8;
    d.planner.max_expansions = 20000;
    d.planner.time_budget_ms = budget_ms;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    for (int k = 0; k < (int)(6 * HZ); ++k)
        cr_assert_eq(shoal_world_step(w, DT), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_planner_status_t st;
    cr_assert_eq(shoal_agent_get_planner(w, id, &st), SHOAL_OK);
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, id, &s), SHOAL_OK);
    *reached = s.position[0] > 25.0f;
    shoal_world_destroy(w);
    return st;
}

Test(planner_agents, a_time_budget_stops_searches_early_with_the_best_path_so_far, .timeout = 60)
{
    int reached = 0;
    shoal_planner_status_t full = budget_run(0.0f, &reached);
    cr_assert(reached);
    cr_assert_gt(full.searches, 4);
    cr_assert_eq(full.expanded_sum, full.searches * 20000,
                 "no time budget: every expansion (%lld in %lld searches)", (long long)full.expanded_sum,
                 (long long)full.searches);
    shoal_planner_status_t quick = budget_run(0.2f, &reached);
    cr_assert(reached, "the ship still gets on");
    cr_assert_eq(quick.searches, full.searches);
    cr_assert_geq(quick.expanded_sum, quick.searches, "at least the root's expansion");
    cr_assert_lt(quick.expanded_sum, quick.searches * 10000, "%lld expansions in %lld searches",
                 (long long)quick.expanded_sum, (long long)quick.searches);
    cr_assert_eq(quick.collisions, 0);
    cr_assert_eq(full.collisions, 0);
}
