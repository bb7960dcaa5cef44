/* Start delays (premovement times) and speed zones of the nav module
 * (src/modules/nav/nav.c): walkers start within a step of their delay, a
 * standing walker is pushed but does not walk, shoal_agent_set_nav
 * restarts the delay, one state hash for 1 and 2 threads and across a
 * snapshot taken mid-delay; a slow zone lengthens a corridor's travel time
 * as its factor says, fields route round a slow zone when that is quicker,
 * and bad zones are refused with the world unchanged. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shoal/scenario.h>
#include <shoal/snapshot.h>

#include "support.h"

static shoal_agent_def_t walker(float x, float y, int32_t goal, float delay)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    d.position[0] = x;
    d.position[1] = y;
    d.weights[SHOAL_BEHAVIOR_NAVIGATE] = 1.0f;
    d.nav.goal = goal;
    d.nav.start_delay = delay;
    return d;
}

static void add_box(shoal_world_t* w, float x0, float y0, float x1, float y1)
{
    const float p[] = {x0, y0, x1, y0, x1, y1, x0, y1};
    cr_assert_eq(shoal_world_add_wall(w, p, 4, 1, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
}

static int32_t add_goal(shoal_world_t* w, int kind, const float* p, int n)
{
    shoal_nav_goal_t g;
    memset(&g, 0, sizeof g);
    g.kind = kind;
    g.count = n;
    for (int k = 0; k < n; ++k) {
        g.points[k][0] = p[2 * k];
        g.points[k][1] = p[2 * k + 1];
    }
    int32_t id = -1;
    cr_assert_eq(shoal_world_add_nav_goal(w, &g, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

static shoal_nav_zone_t box_zone(float x0, float y0, float x1, float y1, float factor)
{
    shoal_nav_zone_t z = shoal_nav_zone_default();
    z.count = 4;
    z.speed_factor = factor;
    const float p[4][2] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
    memcpy(z.points, p, sizeof p);
    return z;
}

static shoal_agent_state_t state_of(shoal_world_t* w, shoal_agent_t id)
{
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, id, &s), SHOAL_OK, "%s", shoal_world_last_error(w));
    return s;
}

/* A room 24 x 20 m with ten walkers in a row at y = 2, delays 1 .. 10 s,
 * bound for the line y = 18 (and, with `zone`, a slow floor before it). */
static shoal_world_t* delay_room(int threads, int zone, shoal_agent_t ids[10])
{
    shoal_world_t* w = make_world(2, threads, threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL);
    add_box(w, 0, 0, 24, 20);
    const float line[] = {1, 18, 23, 18};
    int32_t g = add_goal(w, SHOAL_NAV_LINE, line, 2);
    if (zone) {
        shoal_nav_zone_t z = box_zone(0, 10, 24, 14, 0.5f);
        cr_assert_eq(shoal_world_add_nav_zone(w, &z, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    for (int i = 0; i < 10; ++i) {
        shoal_agent_def_t d = walker(2.0f + 2.2f * (float)i, 2.0f, g, (float)(i + 1));
        cr_assert_eq(shoal_agent_add(w, &d, &ids[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

Test(nav_zones, each_walker_starts_within_a_step_of_its_delay)
{
    shoal_agent_t ids[10];
    shoal_world_t* w = delay_room(1, 0, ids);
    const float dt = 0.05f;
    float start[10][2], last[10][2], moved_at[10];
    for (int i = 0; i < 10; ++i) {
        shoal_agent_state_t s = state_of(w, ids[i]);
        start[i][0] = last[i][0] = s.position[0];
        start[i][1] = last[i][1] = s.position[1];
        moved_at[i] = -1.0f;
        shoal_nav_agent_t n;
        cr_assert_eq(shoal_agent_get_nav_state(w, ids[i], &n), SHOAL_OK);
        cr_expect_eq(n.delay, (float)(i + 1));
    }
    for (int step = 0; step < 12 * 20; ++step) {
        cr_assert_eq(shoal_world_step(w, dt), SHOAL_OK, "%s", shoal_world_last_error(w));
        for (int i = 0; i < 10; ++i) {
            shoal_agent_state_t s = state_of(w, ids[i]);
            float d = hypotf(s.position[0] - last[i][0], s.position[1] - last[i][1]);
            if (moved_at[i] < 0.0f && d > 0.002f) moved_at[i] = (float)step * dt; /* the step's start */
            if (moved_at[i] < 0.0f)
                cr_assert_lt(hypotf(s.position[0] - start[i][0], s.position[1] - start[i][1]), 0.01f,
                             "walker %d moved before its delay", i);
            last[i][0] = s.position[0];
            last[i][1] = s.position[1];
        }
    }
    for (int i = 0; i < 10; ++i) {
        cr_expect(fabsf(moved_at[i] - (float)(i + 1)) <= 1.01f * dt, "walker %d (delay %d s) started at %g s",
                  i, i + 1, (double)moved_at[i]);
        shoal_nav_agent_t n;
        cr_assert_eq(shoal_agent_get_nav_state(w, ids[i], &n), SHOAL_OK);
        cr_expect_eq(n.delay, 0.0f);
        /* walking since: at least a meter on */
        shoal_agent_state_t s = state_of(w, ids[i]);
        cr_expect_gt(s.position[1] - start[i][1], 1.0f, "walker %d", i);
    }
    shoal_world_destroy(w);
}

/* A walker standing out a long delay in a corridor that eight others walk
 * through: they push it along (it takes part in avoidance and contacts),
 * but it does not walk to the goal, and stands once they have gone. */
Test(nav_zones, a_standing_walker_is_pushed_but_does_not_walk)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_box(w, 0, 0, 30, 2.4f);
    const float line[] = {28, 0.2f, 28, 2.2f};
    int32_t g = add_goal(w, SHOAL_NAV_LINE, line, 2);
    shoal_agent_t still;
    shoal_agent_def_t d = walker(10.0f, 1.2f, g, 100.0f);
    cr_assert_eq(shoal_agent_add(w, &d, &still), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_t others[8];
    for (int i = 0; i < 8; ++i) {
        d = walker(1.0f + 1.0f * (float)(i / 2), 0.7f + 1.0f * (float)(i % 2), g, 0.0f);
        cr_assert_eq(shoal_agent_add(w, &d, &others[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    float moved = 0.0f;
    for (int step = 0; step < 40 * 20; ++step) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_agent_state_t s = state_of(w, still);
        moved = fmaxf(moved, hypotf(s.position[0] - 10.0f, s.position[1] - 1.2f));
    }
    /* the others all got past it to the goal line (they crowd round the
     * line there, some arrived, some pressed a little past it) */
    for (int i = 0; i < 8; ++i) {
        shoal_agent_state_t o = state_of(w, others[i]);
        cr_expect_gt(o.position[0], 26.0f, "walker %d stopped at x = %g", i, (double)o.position[0]);
    }
    shoal_agent_state_t s = state_of(w, still);
    cr_expect_gt(moved, 0.05f, "the standing walker was pushed %g m", (double)moved);
    cr_expect_lt(s.position[0], 20.0f, "the standing walker walked to x = %g", (double)s.position[0]);
    cr_expect_lt(hypotf(s.velocity[0], s.velocity[1]), 0.05f, "it stands once the others have gone");
    shoal_nav_agent_t n;
    cr_assert_eq(shoal_agent_get_nav_state(w, still, &n), SHOAL_OK);
    cr_expect(fabsf(n.delay - 60.0f) < 0.01f, "%g s left", (double)n.delay);
    shoal_world_destroy(w);
}

Test(nav_zones, set_nav_restarts_the_delay)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_box(w, 0, 0, 40, 6);
    const float line[] = {38, 1, 38, 5};
    int32_t g = add_goal(w, SHOAL_NAV_LINE, line, 2);
    shoal_agent_t id;
    shoal_agent_def_t d = walker(2.0f, 3.0f, g, 0.0f);
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    step_n(w, 40, 0.05f);
    cr_assert_gt(state_of(w, id).position[0], 3.0f, "it walks with no delay");
    shoal_nav_t nav = d.nav;
    nav.start_delay = 2.0f;
    cr_assert_eq(shoal_agent_set_nav(w, id, &nav), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_nav_agent_t n;
    cr_assert_eq(shoal_agent_get_nav_state(w, id, &n), SHOAL_OK);
    cr_expect_eq(n.delay, 2.0f);
    shoal_agent_def_t back;
    cr_assert_eq(shoal_agent_get_def(w, id, &back), SHOAL_OK);
    cr_expect_eq(back.nav.start_delay, 2.0f, "the definition reads the seconds left");
    step_n(w, 10, 0.05f); /* it stops */
    float x = state_of(w, id).position[0];
    step_n(w, 20, 0.05f); /* 1.5 s after set_nav: standing */
    cr_expect_lt(fabsf(state_of(w, id).position[0] - x), 0.02f, "it stands out the new delay");
    cr_assert_eq(shoal_agent_get_nav_state(w, id, &n), SHOAL_OK);
    cr_expect(fabsf(n.delay - 0.5f) < 1e-3f, "%g s left", (double)n.delay);
    /* "this much more from now": 1 s, whatever was left */
    nav.start_delay = 1.0f;
    cr_assert_eq(shoal_agent_set_nav(w, id, &nav), SHOAL_OK);
    step_n(w, 18, 0.05f);
    cr_expect_lt(fabsf(state_of(w, id).position[0] - x), 0.02f, "it stands the second delay too");
    step_n(w, 20, 0.05f);
    cr_expect_gt(state_of(w, id).position[0] - x, 0.5f, "then it walks again");
    shoal_world_destroy(w);
}

Test(nav_zones, one_state_hash_for_1_and_2_threads_and_across_a_snapshot_mid_delay)
{
    shoal_agent_t ids[10];
    uint64_t hash[2];
    for (int t = 0; t < 2; ++t) {
        shoal_world_t* w = delay_room(t + 1, 1, ids);
        step_n(w, 300, 0.05f);
        hash[t] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    cr_expect_eq(hash[0], hash[1], "1 and 2 threads");
    shoal_world_t* w = delay_room(2, 1, ids);
    step_n(w, 100, 0.05f); /* 5 s: half the walkers still stand */
    size_t size = 0;
    cr_assert_eq(shoal_world_save_snapshot_memory(w, NULL, 0, &size), SHOAL_OK);
    void* buf = malloc(size);
    cr_assert_eq(shoal_world_save_snapshot_memory(w, buf, size, &size), SHOAL_OK);
    shoal_world_t* v = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_load_snapshot_memory(buf, size, NULL, &v, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    cr_expect_eq(shoal_world_nav_zone_count(v), 1);
    step_n(w, 200, 0.05f);
    step_n(v, 200, 0.05f);
    cr_expect_eq(shoal_world_state_hash(v), shoal_world_state_hash(w));
    cr_expect_eq(shoal_world_state_hash(w), hash[0], "the resumed run ends as the straight one");
    free(buf);
    shoal_world_destroy(v);
    shoal_world_destroy(w);
}

/* The seconds one walker takes from x = 2 to the line x = 38 of a corridor
 * 3 m wide, with a zone of `factor` over x in [14, 26] (none for 1). */
static float corridor_time(float factor)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_box(w, 0, 0, 40, 3);
    const float line[] = {38, 0.3f, 38, 2.7f};
    int32_t g = add_goal(w, SHOAL_NAV_LINE, line, 2);
    if (factor != 1.0f) {
        shoal_nav_zone_t z = box_zone(14, 0, 26, 3, factor);
        cr_assert_eq(shoal_world_add_nav_zone(w, &z, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    shoal_agent_def_t d = walker(2.0f, 1.5f, g, 0.0f);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    float taken = -1.0f;
    for (int step = 0; step < 120 * 20 && taken < 0.0f; ++step) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_nav_stats_t st;
        cr_assert_eq(shoal_world_nav_stats(w, g, &st), SHOAL_OK);
        if (st.arrived == 1) taken = (float)(step + 1) * 0.05f;
    }
    shoal_world_destroy(w);
    cr_assert_gt(taken, 0.0f, "the walker arrived (factor %g)", (double)factor);
    return taken;
}

Test(nav_zones, a_slow_zone_lengthens_a_corridor_walk_by_its_factor)
{
    const float v = 1.34f; /* the pedestrian preset's preferred speed */
    float t0 = corridor_time(1.0f), t_half = corridor_time(0.5f);
    /* 12 m at half speed: 12 / v more */
    float want = t0 + 12.0f / v;
    cr_expect(fabsf(t_half - want) <= 0.03f * want, "without %g s, with a zone of 0.5 %g s, expected %g s",
              (double)t0, (double)t_half, (double)want);
    cr_expect(fabsf(t0 - 36.0f / v) <= 0.03f * t0, "without a zone %g s", (double)t0);
}

/* An open floor with a slow square (factor 0.2) across the straight way:
 * the field goes round it, about 16.6 m of travel time instead of 32 m
 * through it, and a walker does not cross it. */
Test(nav_zones, the_field_goes_round_a_slow_zone_when_that_is_quicker)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_box(w, 0, -5, 20, 15);
    const float point[] = {18, 5};
    int32_t g = add_goal(w, SHOAL_NAV_POINT, point, 1);
    cr_assert_eq(shoal_world_nav_update(w), SHOAL_OK);
    shoal_nav_grid_info_t gi;
    cr_assert_eq(shoal_world_nav_grid(w, &gi), SHOAL_OK);
    int64_t cells = (int64_t)gi.nx * gi.ny, n = 0;
    float* T = malloc((size_t)cells * sizeof *T);
    int32_t at =
        (int32_t)((5.0f - gi.origin[1]) / gi.cell) * gi.nx + (int32_t)((2.0f - gi.origin[0]) / gi.cell);
    cr_assert_eq(shoal_world_nav_field(w, g, T, cells, &n), SHOAL_OK);
    float open = T[at];
    cr_expect(fabsf(open - 16.0f) < 0.3f, "the open floor: %g", (double)open);
    shoal_nav_zone_t z = box_zone(8, 3, 12, 7, 0.2f);
    int32_t zid = -1;
    cr_assert_eq(shoal_world_add_nav_zone(w, &z, &zid), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_expect_eq(zid, 0);
    cr_expect_eq(shoal_world_nav_field(w, g, T, cells, &n), SHOAL_ERR_NOT_FOUND,
                 "the zone unsolves the fields");
    cr_assert_eq(shoal_world_nav_update(w), SHOAL_OK);
    cr_assert_eq(shoal_world_nav_field(w, g, T, cells, &n), SHOAL_OK);
    float round = T[at];
    cr_expect(round > 16.3f && round < 17.5f, "round the zone: %g (through it: 32)", (double)round);
    shoal_agent_t id;
    shoal_agent_def_t d = walker(2.0f, 5.0f, g, 0.0f);
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    float worst = 0.0f; /* how deep into the zone it went */
    for (int step = 0; step < 30 * 20; ++step) {
        cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
        shoal_agent_state_t s = state_of(w, id);
        if (s.position[0] > 8.0f && s.position[0] < 12.0f)
            worst = fmaxf(worst, 2.0f - fabsf(s.position[1] - 5.0f));
    }
    cr_expect_lt(worst, 0.25f, "the walker went %g m into the slow zone", (double)worst);
    shoal_nav_stats_t st;
    cr_assert_eq(shoal_world_nav_stats(w, g, &st), SHOAL_OK);
    cr_expect_eq(st.arrived, 1);
    /* removed: the straight way again */
    cr_assert_eq(shoal_world_remove_nav_zone(w, zid), SHOAL_OK);
    cr_expect_eq(shoal_world_nav_zone_count(w), 0);
    cr_assert_eq(shoal_world_nav_update(w), SHOAL_OK);
    cr_assert_eq(shoal_world_nav_field(w, g, T, cells, &n), SHOAL_OK);
    cr_expect_eq(T[at], open);
    free(T);
    shoal_world_destroy(w);
}

Test(nav_zones, bad_zones_and_delays_are_refused_with_the_world_unchanged)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_box(w, 0, 0, 10, 10);
    const float point[] = {5, 5};
    int32_t g = add_goal(w, SHOAL_NAV_POINT, point, 1);
    uint64_t h = shoal_world_state_hash(w);
    struct {
        shoal_nav_zone_t z;
        const char* says;
    } bad[8];
    for (int k = 0; k < 8; ++k) bad[k].z = box_zone(1, 1, 3, 3, 0.5f);
    bad[0].z.count = 2, bad[0].says = "3 to 16 points";
    bad[1].z.count = 17, bad[1].says = "3 to 16 points";
    bad[2].z.points[2][0] = 2, bad[2].z.points[2][1] = 1, bad[2].z.points[3][0] = 1.5f,
    bad[2].z.points[3][1] = 1, bad[2].says = "zero area";
    bad[3].z.speed_factor = 0.0f, bad[3].says = "speed_factor must be in (0, 1]";
    bad[4].z.speed_factor = -1.0f, bad[4].says = "speed_factor";
    bad[5].z.speed_factor = 1.5f, bad[5].says = "speed_factor";
    bad[6].z.speed_factor = NAN, bad[6].says = "speed_factor";
    bad[7].z.points[1][0] = NAN, bad[7].says = "points[1]";
    for (int k = 0; k < 8; ++k) {
        int32_t id = 7;
        cr_expect_eq(shoal_world_add_nav_zone(w, &bad[k].z, &id), SHOAL_ERR_INVALID_ARGUMENT, "case %d", k);
        cr_expect_eq(id, -1);
        cr_expect(strstr(shoal_world_last_error(w), bad[k].says) != NULL, "case %d: %s", k,
                  shoal_world_last_error(w));
        cr_expect(strstr(shoal_world_last_error(w), "world_add_nav_zone") != NULL, "%s",
                  shoal_world_last_error(w));
    }
    cr_expect_eq(shoal_world_add_nav_zone(w, NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_remove_nav_zone(w, 0), SHOAL_ERR_NOT_FOUND);
    cr_expect_eq(shoal_world_remove_nav_zone(w, -1), SHOAL_ERR_NOT_FOUND);
    cr_expect_eq(shoal_world_nav_zone_count(w), 0);
    cr_expect_eq(shoal_world_state_hash(w), h, "nothing changed");
    /* start delays: >= 0 and finite */
    const float delays[] = {-1.0f, NAN, INFINITY};
    for (int k = 0; k < 3; ++k) {
        shoal_agent_def_t d = walker(2, 2, g, delays[k]);
        cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT, "delay %g", (double)delays[k]);
        cr_expect(strstr(shoal_world_last_error(w), "nav.start_delay") != NULL, "%s",
                  shoal_world_last_error(w));
    }
    shoal_agent_t id;
    shoal_agent_def_t d = walker(2, 2, g, 1.0f);
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    h = shoal_world_state_hash(w);
    d.nav.start_delay = -0.5f;
    cr_expect_eq(shoal_agent_set_nav(w, id, &d.nav), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_state_hash(w), h, "nothing changed");
    shoal_world_destroy(w);
    /* 3D */
    w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    shoal_nav_zone_t z = box_zone(1, 1, 3, 3, 0.5f);
    cr_expect_eq(shoal_world_add_nav_zone(w, &z, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(shoal_world_last_error(w), "2D") != NULL, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_nav_zone_count(w), 0);
    shoal_world_destroy(w);
}

/* A zone's cells count in the grid's memory (max_bytes): a zone that would
 * take the grid past it is refused; and a world with zones but no goal
 * steps (and hashes its zones). */
Test(nav_zones, zones_count_in_the_grid_memory)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    add_box(w, 0, 0, 10, 10);
    shoal_nav_params_t p = shoal_nav_params_default();
    /* the grid of 14 x 14 m at 0.1 m (140^2 cells) and one field: 13 bytes a
     * cell; a zone would make it 17 */
    p.max_bytes = 140.0 * 140.0 * 15.0;
    cr_assert_eq(shoal_world_set_nav(w, &p), SHOAL_OK, "%s", shoal_world_last_error(w));
    uint64_t h0 = shoal_world_state_hash(w);
    const float point[] = {5, 5};
    add_goal(w, SHOAL_NAV_POINT, point, 1);
    shoal_nav_zone_t z = box_zone(1, 1, 3, 3, 0.5f);
    cr_expect_eq(shoal_world_add_nav_zone(w, &z, NULL), SHOAL_ERR_CAPACITY, "%s", shoal_world_last_error(w));
    cr_expect_eq(shoal_world_nav_zone_count(w), 0);
    shoal_world_destroy(w);
    w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    h0 = shoal_world_state_hash(w);
    cr_assert_eq(shoal_world_add_nav_zone(w, &z, NULL), SHOAL_OK);
    cr_expect_neq(shoal_world_state_hash(w), h0, "a zone is state");
    step_n(w, 3, 0.05f);
    shoal_world_destroy(w);
}

/* ---- scenario files ---------------------------------------------------------- */

static shoal_world_t* scenario_world(const char* json, shoal_scenario_t** out)
{
    shoal_error_t err;
    shoal_scenario_t* s = NULL;
    cr_assert_eq(shoal_scenario_load_string(json, strlen(json), "test.json", &s, &err), SHOAL_OK, "%s",
                 err.message);
    shoal_world_def_t def = shoal_scenario_world_def(s);
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    cr_assert_eq(shoal_scenario_populate(s, w), SHOAL_OK, "%s", shoal_world_last_error(w));
    *out = s;
    return w;
}

static void scenario_fails(const char* json, const char* expected)
{
    shoal_error_t err;
    shoal_scenario_t* s = NULL;
    cr_expect_eq(shoal_scenario_load_string(json, strlen(json), "test.json", &s, &err), SHOAL_ERR_PARSE, "%s",
                 json);
    cr_expect(strstr(err.message, expected) != NULL, "expected '%s' in: %s", expected, err.message);
    shoal_scenario_destroy(s);
}

#define ROOM                                                                                                 \
    "\"dimensions\": 2, \"walls\": [{\"points\": [[0, 0], [30, 0], [30, 20], [0, 20]], \"closed\": true}], "
#define NAV_GOAL "\"goals\": [{\"name\": \"exit\", \"line\": [[29, 2], [29, 18]]}]"

Test(nav_zones, scenario_start_delays_and_zones)
{
    const char* json =
        "{" ROOM "\"nav\": {" NAV_GOAL ", \"zones\": [{\"polygon\": [[10, 0], [20, 0], [20, 20], "
        "[10, 20]], \"speed_factor\": 0.5}]}, \"groups\": ["
        "{\"count\": 40, \"spawn\": {\"shape\": \"box\", \"center\": [4.5, 10], \"size\": [7, 18], "
        "\"min_spacing\": 0.6}, \"crowd\": {\"preset\": \"pedestrian\"}, \"behaviors\": "
        "{\"navigate\": {\"weight\": 1}}, \"nav\": {\"goal\": \"exit\"}, \"distributions\": "
        "{\"nav.start_delay\": {\"uniform\": [10, 100]}}},"
        "{\"count\": 3, \"spawn\": {\"shape\": \"box\", \"center\": [1.5, 10], \"size\": [1, 18]}, "
        "\"crowd\": {\"preset\": \"pedestrian\"}, \"behaviors\": {\"navigate\": {\"weight\": 1}}, "
        "\"nav\": {\"goal\": \"exit\", \"start_delay\": 4.5}}]}";
    shoal_scenario_t* s = NULL;
    shoal_world_t* w = scenario_world(json, &s);
    cr_expect_eq(shoal_world_nav_zone_count(w), 1);
    shoal_agent_t ids[43];
    uint32_t groups[43];
    shoal_agent_batch_t b = {.ids = ids, .groups = groups};
    int32_t n = 0;
    cr_assert_eq(shoal_world_read_agents(w, &b, 43, &n), SHOAL_OK);
    cr_assert_eq(n, 43);
    float lo = INFINITY, hi = -INFINITY;
    for (int32_t i = 0; i < n; ++i) {
        shoal_nav_agent_t st;
        cr_assert_eq(shoal_agent_get_nav_state(w, ids[i], &st), SHOAL_OK);
        if (groups[i] == 1) {
            cr_expect_eq(st.delay, 4.5f);
            continue;
        }
        cr_expect(st.delay >= 10.0f && st.delay <= 100.0f, "a drawn delay of %g s", (double)st.delay);
        lo = fminf(lo, st.delay);
        hi = fmaxf(hi, st.delay);
    }
    cr_expect(lo < 30.0f && hi > 80.0f, "the draws spread over [10, 100]: %g to %g", (double)lo, (double)hi);
    shoal_world_destroy(w);
    shoal_scenario_destroy(s);

    scenario_fails("{" ROOM "\"nav\": {" NAV_GOAL ", \"zones\": [{\"polygon\": [[1, 1], [2, 1], [2, 2]], "
                   "\"speed_factor\": 1.5}]}, \"groups\": []}",
                   "nav.zones[0].speed_factor");
    scenario_fails("{" ROOM "\"nav\": {" NAV_GOAL ", \"zones\": [{\"polygon\": [[1, 1], [2, 1], [3, 1]], "
                   "\"speed_factor\": 0.5}]}, \"groups\": []}",
                   "zero area");
    scenario_fails("{" ROOM "\"nav\": {" NAV_GOAL ", \"zones\": [{\"polygon\": [[1, 1], [2, 1]], "
                   "\"speed_factor\": 0.5}]}, \"groups\": []}",
                   "nav.zones[0].polygon");
    scenario_fails("{" ROOM "\"nav\": {" NAV_GOAL ", \"zones\": [{\"polygon\": [[1, 1], [2, 1], [2, 2]]}]}, "
                   "\"groups\": []}",
                   "speed_factor");
    scenario_fails("{" ROOM "\"nav\": {" NAV_GOAL
                   "}, \"groups\": [{\"count\": 1, \"behaviors\": {\"navigate\": {\"weight\": 1}}, "
                   "\"nav\": {\"goal\": \"exit\", \"start_delay\": -1}}]}",
                   "start_delay");
    scenario_fails("{" ROOM "\"nav\": {" NAV_GOAL "}, \"groups\": [{\"count\": 1, \"distributions\": "
                   "{\"nav.start_delay\": {\"uniform\": [1, 2]}}}]}",
                   "does not navigate");
}
