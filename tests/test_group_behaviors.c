/* Wander, pursuit/evasion, leader following and obstacle avoidance on the
 * full dynamics, through the public API. Bounds are stated where they are
 * used; every scene runs at 60 Hz. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "support.h"

#define DT (1.0f / 60.0f)

static shoal_agent_t add(shoal_world_t* w, shoal_agent_def_t d)
{
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    return id;
}

static shoal_agent_state_t state_of(shoal_world_t* w, shoal_agent_t id)
{
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, id, &s), SHOAL_OK, "%s", shoal_world_last_error(w));
    return s;
}

static float dist3(const float a[3], const float b[3])
{
    float x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
    return sqrtf(x * x + y * y + z * z);
}

static float norm3(const float a[3]) { return sqrtf(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

static float gap(shoal_world_t* w, shoal_agent_t a, shoal_agent_t b)
{
    return dist3(state_of(w, a).position, state_of(w, b).position);
}

/* ---- wander ---------------------------------------------------------------- */

static shoal_agent_def_t wanderer(float x, float y)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f; /* cruise 2, strength 1, noise 0.5 */
    d.position[0] = x;
    d.position[1] = y;
    return d;
}

/* |V_0 + V_wander| lies in [cruise - K_wander, cruise + K_wander] = [1, 3]
 * m/s. After a 2 s start the speed must stay in that band (0.1 m/s slack
 * for the controller's lag), average near cruise (1.5 to 2.5 m/s), and the
 * heading must wander: a turn of more than 0.3 rad away from the heading at
 * 2 s (a plain cruise keeps it exactly). */
static void wander_cruises(int dims)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_t id = add(w, wanderer(0, 0));
    float sum = 0.0f, heading0 = 0.0f, turn = 0.0f;
    int n = 0;
    for (int s = 0; s < 60 * 30; ++s) {
        step_n(w, 1, DT);
        shoal_agent_state_t st = state_of(w, id);
        if (dims == 2) cr_assert_eq(st.position[2], 0.0f, "2D wander left the plane");
        if (s == 120) heading0 = st.heading;
        if (s < 120) continue;
        float v = norm3(st.velocity);
        cr_assert(v > 0.9f && v < 3.1f, "speed %g m/s at step %d", v, s);
        sum += v;
        ++n;
        turn = fmaxf(turn, fabsf(remainderf(st.heading - heading0, 6.2831853f)));
    }
    float mean = sum / (float)n;
    cr_assert(mean > 1.5f && mean < 2.5f, "mean speed %g m/s, cruise 2", mean);
    cr_assert_gt(turn, 0.3f, "the heading never turned more than %g rad", turn);
    shoal_world_destroy(w);
}

Test(group, wander_cruises_2d) { wander_cruises(2); }
Test(group, wander_cruises_3d) { wander_cruises(3); }

static void wander_run_pair(uint64_t seed, float out[2][3], uint64_t* hash)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.seed = seed;
    def.thread_count = 1;
    shoal_world_t* w = NULL;
    cr_assert_eq(shoal_world_create(&def, &w, NULL), SHOAL_OK);
    shoal_agent_t a = add(w, wanderer(0, 0));
    shoal_agent_t b = add(w, wanderer(0, 100));
    step_n(w, 600, DT);
    shoal_agent_state_t sa = state_of(w, a), sb = state_of(w, b);
    for (int k = 0; k < 3; ++k) {
        out[0][k] = sa.position[k];
        out[1][k] = sb.position[k] - (k == 1 ? 100.0f : 0.0f); /* same start */
    }
    *hash = shoal_world_state_hash(w);
    shoal_world_destroy(w);
}

/* Identical agents get walks of their own, another seed gives other walks,
 * and the same seed gives the same bits. 10 s of wander at ~2 m/s drifts
 * meters apart; 0.5 m is a safe floor for "differ". */
Test(group, wander_depends_on_agent_and_seed_only)
{
    float p1[2][3], p2[2][3], p3[2][3];
    uint64_t h1, h2, h3;
    wander_run_pair(11, p1, &h1);
    wander_run_pair(11, p2, &h2);
    wander_run_pair(12, p3, &h3);
    cr_assert_gt(dist3(p1[0], p1[1]), 0.5f, "two agents walked the same path");
    cr_assert_gt(dist3(p1[0], p3[0]), 0.5f, "seeds 11 and 12 walked the same path");
    cr_assert_eq(h1, h2, "same seed, different hash");
    cr_assert_eq(memcmp(p1, p2, sizeof p1), 0);
    cr_assert_neq(h1, h3);
}

/* The draws are keyed by slot and generation, not by storage row: removing
 * an agent moves the last one into its row (swap-remove), and the moved
 * agent must still walk bit for bit the same path. */
Test(group, wander_key_survives_row_moves)
{
    float end[2][3];
    for (int run = 0; run < 2; ++run) {
        shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        shoal_agent_def_t still = shoal_agent_default_def();
        shoal_agent_t a = add(w, still);
        shoal_agent_t z = add(w, wanderer(5, 5));
        if (run == 1) cr_assert_eq(shoal_agent_remove(w, a), SHOAL_OK);
        step_n(w, 300, DT);
        memcpy(end[run], state_of(w, z).position, sizeof end[run]);
        shoal_world_destroy(w);
    }
    cr_assert_eq(memcmp(end[0], end[1], sizeof end[0]), 0, "(%g, %g) vs (%g, %g)", end[0][0], end[0][1],
                 end[1][0], end[1][1]);
}

/* ---- pursuit and evasion ----------------------------------------------------- */

/* A target cruising along +x at 3 m/s (its own seek toward a far point,
 * started at speed) from x = 10; the chaser (max 5 m/s, default 2 s
 * prediction) starts 20 m beside the road at x = 30, facing the road. It
 * either pursues or, with `plain_seek`, seeks the target's current
 * position, set before every step. Returns the time of the first approach
 * within 0.5 m, or -1. */
static float time_to_catch(int dims, int plain_seek)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t t = shoal_agent_default_def();
    t.position[0] = 10.0f;
    t.velocity[0] = 3.0f;
    t.vehicle.max_speed = 3.0f;
    t.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    t.target[0] = 1e4f;
    if (dims == 3) t.position[2] = t.target[2] = 5.0f;
    shoal_agent_t target = add(w, t);
    shoal_agent_def_t c = shoal_agent_default_def();
    c.position[0] = 30.0f;
    c.position[1] = -20.0f;
    c.heading = 1.5707964f;
    if (plain_seek) {
        c.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    } else {
        c.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
        c.pursuit.target = target;
    }
    shoal_agent_t chaser = add(w, c);
    float caught = -1.0f;
    for (int s = 0; s < 60 * 40 && caught < 0.0f; ++s) {
        if (plain_seek)
            cr_assert_eq(shoal_agent_set_target(w, chaser, state_of(w, target).position), SHOAL_OK);
        step_n(w, 1, DT);
        if (gap(w, chaser, target) < 0.5f) caught = (float)(s + 1) * DT;
    }
    shoal_world_destroy(w);
    return caught;
}

/* Pursuit catches the slower straight-line target, and much sooner than
 * chasing its current position: seek reaches the road behind the target
 * and ends in a tail chase at a 2 m/s closing speed, pursuit heads for the
 * crossing point (4.5 s against 8.7 s when written). */
static void pursuit_beats_seek(int dims)
{
    float pursue = time_to_catch(dims, 0), seek = time_to_catch(dims, 1);
    cr_assert_gt(pursue, 0.0f, "pursuit never came within 0.5 m");
    cr_assert_gt(seek, 0.0f, "plain seek never came within 0.5 m");
    cr_assert_lt(pursue, 0.75f * seek, "pursuit %g s, plain seek %g s", pursue, seek);
}

Test(group, pursuit_catches_sooner_than_seek_2d) { pursuit_beats_seek(2); }
Test(group, pursuit_catches_sooner_than_seek_3d) { pursuit_beats_seek(3); }

/* A faster evader (5 m/s) against a pursuer (4 m/s) that starts 8 m away:
 * the evader starts facing the pursuer, so the gap may shrink while it
 * turns; after 3 s it must grow every step, it must never fall below 3 m,
 * and after 15 s it must exceed 8 + 10 m. */
static void evasion_opens_gap(int dims)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t e = shoal_agent_default_def();
    e.position[0] = 8.0f;
    e.heading = 3.1415926f;
    e.weights[SHOAL_BEHAVIOR_EVADE] = 1.0f;
    shoal_agent_t evader = add(w, e);
    shoal_agent_def_t p = shoal_agent_default_def();
    p.vehicle.max_speed = 4.0f;
    p.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
    p.pursuit.target = evader;
    if (dims == 3) p.position[2] = 1.0f;
    shoal_agent_t pursuer = add(w, p);
    e.pursuit.target = pursuer;
    cr_assert_eq(shoal_agent_set_pursuit(w, evader, &e.pursuit), SHOAL_OK);
    float prev = gap(w, evader, pursuer);
    for (int s = 0; s < 60 * 15; ++s) {
        step_n(w, 1, DT);
        float g = gap(w, evader, pursuer);
        cr_assert_gt(g, 3.0f, "pursuer got within %g m at step %d", g, s);
        if (s > 180) cr_assert_geq(g, prev - 1e-4f, "gap fell from %g to %g at step %d", prev, g, s);
        prev = g;
    }
    cr_assert_gt(prev, 18.0f, "gap only %g m after 15 s", prev);
    shoal_world_destroy(w);
}

Test(group, evasion_opens_gap_2d) { evasion_opens_gap(2); }
Test(group, evasion_opens_gap_3d) { evasion_opens_gap(3); }

/* A removed target, and the agent itself as target, give no command and no
 * error: a chaser with only PURSUE and EVADE stays exactly at rest. */
Test(group, pursuit_ignores_stale_and_self_targets)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t t = shoal_agent_default_def();
    t.position[0] = 10.0f;
    shoal_agent_t target = add(w, t);
    shoal_agent_def_t c = shoal_agent_default_def();
    c.weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
    c.weights[SHOAL_BEHAVIOR_EVADE] = 0.5f;
    c.pursuit.target = target;
    shoal_agent_t stale = add(w, c);
    cr_assert_eq(shoal_agent_remove(w, target), SHOAL_OK);
    shoal_agent_t self = add(w, c);
    c.pursuit.target = self;
    cr_assert_eq(shoal_agent_set_pursuit(w, self, &c.pursuit), SHOAL_OK);
    step_n(w, 120, DT);
    cr_assert_eq(norm3(state_of(w, stale).position), 0.0f);
    cr_assert_eq(norm3(state_of(w, self).position), 0.0f);
    shoal_world_destroy(w);
}

/* ---- leader following -------------------------------------------------------- */

#define CONVOY 5 /* the leader and four followers */

/* A convoy: the leader seeks a far point along +x at 2 m/s; follower i
 * follows vehicle i-1 (the defaults: behind 2 m, 0.5 s per m/s, arrive gain
 * 1 per s) and keeps SEPARATE (neighbors system, K 1, radius 1.5 m) to avoid
 * running into the others while forming up. Followers start scattered on
 * both sides of the road, facing every way, and out of order (2 ahead of 1,
 * 4 ahead of 3). Returns the handles in convoy order. */
static void make_convoy(shoal_world_t* w, shoal_agent_t ids[CONVOY])
{
    int three = shoal_world_dimensions(w) == 3;
    shoal_agent_def_t l = shoal_agent_default_def();
    l.vehicle.max_speed = 2.0f;
    l.velocity[0] = 2.0f;
    l.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    l.target[0] = 1e4f;
    ids[0] = add(w, l);
    for (int i = 1; i < CONVOY; ++i) {
        shoal_agent_def_t f = shoal_agent_default_def();
        static const float start_x[CONVOY] = {0, -7.5f, -2.5f, -10.0f, -5.0f};
        f.position[0] = start_x[i];
        f.position[1] = (i % 2 ? 3.0f : -3.0f) * (float)i / 2.0f;
        f.position[2] = three ? (float)(i - 2) : 0.0f;
        f.heading = 0.7f * (float)i;
        f.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
        f.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        f.follow.leader = ids[i - 1];
        f.neighbors.radius = 1.5f; /* below `behind`: idle once in formation */
        ids[i] = add(w, f);
    }
}

/* After 40 s every follower is behind its predecessor along the road
 * (within 0.05 m of the road's axis) at the spacing the law settles to:
 * behind + behind_per_speed v + v / K_arrival (the arrival law's lag on a
 * point moving at v) = 2 + 1 + 2 = 5 m, to 0.1 m. */
static void convoy_in_order(int dims)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_t ids[CONVOY];
    make_convoy(w, ids);
    step_n(w, 60 * 40, DT);
    for (int i = 1; i < CONVOY; ++i) {
        shoal_agent_state_t a = state_of(w, ids[i - 1]), b = state_of(w, ids[i]);
        float along = a.position[0] - b.position[0];
        float off = sqrtf(b.position[1] * b.position[1] + b.position[2] * b.position[2]);
        cr_assert_gt(along, 0.0f, "follower %d is ahead of its leader", i);
        cr_assert_lt(off, 0.05f, "follower %d is %g m off the road", i, off);
        cr_assert(fabsf(along - 5.0f) < 0.1f, "follower %d spacing %g m, expected 5", i, along);
    }
    shoal_world_destroy(w);
}

Test(group, convoy_forms_in_order_2d) { convoy_in_order(2); }
Test(group, convoy_forms_in_order_3d) { convoy_in_order(3); }

/* Once the leader stops (arrives at x = 60, facing +x), the speed term and
 * the lag vanish and a follower closes up to `behind` = 2 m, straight
 * behind, at rest. */
static void closes_up(int dims)
{
    shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_t ids[CONVOY];
    make_convoy(w, ids);
    for (int i = 2; i < CONVOY; ++i) cr_assert_eq(shoal_agent_remove(w, ids[i]), SHOAL_OK);
    shoal_agent_set_behavior(w, ids[0], SHOAL_BEHAVIOR_SEEK, 0.0f);
    shoal_agent_set_behavior(w, ids[0], SHOAL_BEHAVIOR_ARRIVE, 1.0f);
    cr_assert_eq(shoal_agent_set_target(w, ids[0], (float[3]){60.0f, 0.0f, 0.0f}), SHOAL_OK);
    step_n(w, 60 * 60, DT);
    shoal_agent_state_t f = state_of(w, ids[1]);
    float expect[3] = {58.0f, 0.0f, 0.0f};
    cr_assert_lt(dist3(f.position, expect), 0.05f, "follower at (%g, %g, %g)", f.position[0], f.position[1],
                 f.position[2]);
    cr_assert_lt(norm3(f.velocity), 0.01f);
    shoal_world_destroy(w);
}

Test(group, follower_closes_up_when_leader_stops_2d) { closes_up(2); }
Test(group, follower_closes_up_when_leader_stops_3d) { closes_up(3); }

/* A removed leader is ignored without error, also once its slot has been
 * reused by a new agent (same index, new generation): the follower, with
 * FOLLOW as its only behavior, stays at rest. */
Test(group, follow_ignores_removed_leader)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t l = shoal_agent_default_def();
    l.position[0] = 20.0f;
    shoal_agent_t leader = add(w, l);
    shoal_agent_def_t f = shoal_agent_default_def();
    f.weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
    f.follow.leader = leader;
    shoal_agent_t follower = add(w, f);
    step_n(w, 10, DT);
    cr_assert_gt(norm3(state_of(w, follower).velocity), 0.0f, "a live leader is followed");
    shoal_agent_teleport(w, follower, (float[3]){0, 0, 0}, (float[3]){0, 0, 0}, 0.0f, NULL);
    cr_assert_eq(shoal_agent_remove(w, leader), SHOAL_OK);
    step_n(w, 60, DT);
    cr_assert_eq(norm3(state_of(w, follower).position), 0.0f);
    shoal_agent_t reuse = add(w, l);
    cr_assert_eq(reuse.index1, leader.index1, "the slot was not reused; the test needs it");
    step_n(w, 60, DT);
    cr_assert_eq(norm3(state_of(w, follower).position), 0.0f);
    cr_assert_eq(shoal_agent_is_valid(w, leader), 0);
    shoal_world_destroy(w);
}

/* ---- obstacle avoidance ------------------------------------------------------ */

/* Penetration tolerance: none. The field steers with a lag (control acts
 * through force and turn-rate limits), and the no-entry guard allows for
 * it, so the agent's bounding circle never dips into the obstacle's. */
#define AVOID_TOL 0.0f

/* An agent (r_B 0.5, max 5 m/s) seeks a point straight behind an obstacle
 * (r_o 2 at x = 15, target x = 30), head-on and with the obstacle shifted
 * off the line (y, and z in 3D). A removed obstacle (id 0) sits on the path
 * too and must be ignored. The clearance |p - c_o| - (r_o + r_B) must stay
 * above -AVOID_TOL at every step, and the agent must pass within 1 m of the
 * target (seek drives through it at full speed).
 *
 * Both fields at shoal_avoid_default() (K_avoid 1, T_avoid 2 s): the
 * no-entry guard keeps the agent out where the field alone would not (the
 * tangential field has no radial part and cut 1.2 m deep at K_avoid 2);
 * tests/test_avoid_grid.c covers offsets, speeds and radii. */
static void avoid_reaches_target(int dims, int tangential)
{
    static const float offsets[][2] = {{0, 0}, {0.3f, 0}, {-0.7f, 0}, {1.0f, 0}, {0, 0.3f}, {0.4f, 0.4f}};
    int cases = dims == 3 ? 6 : 4;
    for (int c = 0; c < cases; ++c) {
        shoal_world_t* w = make_world(dims, 1, SHOAL_BACKEND_SERIAL);
        const float center[3] = {15.0f, offsets[c][0], offsets[c][1]}, target[3] = {30.0f, 0, 0};
        int32_t dead, live;
        cr_assert_eq(shoal_world_add_obstacle(w, (float[3]){8.0f, 0, 0}, 1.0f, &dead), SHOAL_OK);
        cr_assert_eq(shoal_world_add_obstacle(w, center, 2.0f, &live), SHOAL_OK);
        cr_assert_eq(shoal_world_remove_obstacle(w, dead), SHOAL_OK);
        shoal_agent_def_t d = shoal_agent_default_def();
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_AVOID] = 1.0f;
        d.avoid.tangential = tangential;
        memcpy(d.target, target, sizeof d.target);
        shoal_agent_t id = add(w, d);
        float closest = 1e9f, clearance = 1e9f;
        for (int s = 0; s < 60 * 30; ++s) {
            step_n(w, 1, DT);
            shoal_agent_state_t st = state_of(w, id);
            float gap_o = dist3(st.position, center) - 2.5f;
            cr_assert_gt(gap_o, -AVOID_TOL, "offset %d: inside the obstacle by %g m at step %d", c, -gap_o,
                         s);
            clearance = fminf(clearance, gap_o);
            closest = fminf(closest, dist3(st.position, target));
        }
        cr_assert_lt(closest, 1.0f, "offset %d: came only within %g m of the target", c, closest);
        cr_assert_lt(clearance, 1.5f, "offset %d: passed %g m wide: avoided at all?", c, clearance);
        shoal_world_destroy(w);
    }
}

Test(group, avoid_normal_field_2d) { avoid_reaches_target(2, 0); }
Test(group, avoid_normal_field_3d) { avoid_reaches_target(3, 0); }
Test(group, avoid_tangential_field_2d) { avoid_reaches_target(2, 1); }
Test(group, avoid_tangential_field_3d) { avoid_reaches_target(3, 1); }

/* An avoiding agent (starting at 5 m/s along +x, seeking (20, 8)) flies
 * exactly the path of one in an empty world when its only obstacle was
 * removed, or lies behind it (center at x = -4, d_x < 0: moving away, it
 * cannot be hit). Its radius (1.5 m) exceeds the 1 m by which a removed
 * id's radius (-1) is negative, so a removed obstacle that was not skipped
 * would still be detected on this path. */
Test(group, avoid_ignores_removed_and_passed_obstacles)
{
    float end[3][3];
    for (int run = 0; run < 3; ++run) {
        shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
        int32_t id;
        if (run == 1) {
            cr_assert_eq(shoal_world_add_obstacle(w, (float[3]){4.0f, 0.2f, 0}, 2.0f, &id), SHOAL_OK);
            cr_assert_eq(shoal_world_remove_obstacle(w, id), SHOAL_OK);
        }
        if (run == 2) cr_assert_eq(shoal_world_add_obstacle(w, (float[3]){-4.0f, 0, 0}, 2.0f, &id), SHOAL_OK);
        shoal_agent_def_t d = shoal_agent_default_def();
        d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_AVOID] = 1.0f;
        d.vehicle.radius = 1.5f;
        d.velocity[0] = 5.0f;
        d.target[0] = 20.0f;
        d.target[1] = 8.0f;
        shoal_agent_t a = add(w, d);
        step_n(w, 240, DT);
        memcpy(end[run], state_of(w, a).position, sizeof end[run]);
        shoal_world_destroy(w);
    }
    cr_assert_eq(memcmp(end[0], end[1], sizeof end[0]), 0, "a removed obstacle was avoided");
    cr_assert_eq(memcmp(end[0], end[2], sizeof end[0]), 0, "an obstacle behind was avoided");
    cr_assert_gt(end[1][0], 15.0f, "did not get past the removed obstacle");
}

/* ---- validation and determinism ---------------------------------------------- */

static void rejects(const char* field, shoal_agent_def_t d)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT, "%s accepted", field);
    const char* msg = shoal_world_last_error(w);
    cr_assert(strstr(msg, field) != NULL, "message \"%s\" does not name %s", msg, field);
    cr_assert_eq(shoal_world_agent_count(w), 0);
    shoal_world_destroy(w);
}

Test(group, invalid_parameters_are_rejected)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_AVOID] = 1.0f;
    d.avoid.lookahead_time = -1.0f;
    rejects("avoid.lookahead_time", d);
    d = shoal_agent_default_def();
    d.avoid.tangential = 2;
    rejects("avoid.tangential", d);
    d = shoal_agent_default_def();
    d.avoid.gain = NAN;
    rejects("avoid.gain", d);
    d = shoal_agent_default_def();
    d.wander.noise = NAN;
    rejects("wander.noise", d);
    d = shoal_agent_default_def();
    d.wander.strength = -0.5f;
    rejects("wander.strength", d);
    d = shoal_agent_default_def();
    d.pursuit.max_prediction = -2.0f;
    rejects("pursuit.max_prediction", d);
    d = shoal_agent_default_def();
    d.follow.behind = NAN;
    rejects("follow.behind", d);
    d = shoal_agent_default_def();
    d.follow.arrive_gain = 0.0f;
    rejects("follow.arrive_gain", d);
    d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_PURSUE] = NAN;
    rejects("weights[pursue]", d);
}

/* 3000 agents, each with one of wander, pursue, evade, follow or avoid, plus
 * seek, among 20 obstacles: enough rows that every system splits its table
 * across workers (and the sense stage reorders rows every 32 steps). Every
 * agent's state after 2 s, in handle order, must be the same bits for the
 * serial backend and 1 to 3 OpenMP threads. (States rather than
 * state_hash: the hash also digests the stored pursuit/follow handles,
 * whose world tag differs from world to world.) */
#define GROUP_N 3000

static void group_run(int dims, int threads, shoal_backend_t backend, shoal_agent_state_t* out)
{
    shoal_world_t* w = make_world(dims, threads, backend);
    for (int o = 0; o < 20; ++o) {
        float c[3];
        for (int k = 0; k < 3; ++k) c[k] = rng_range(3, (uint64_t)o, 9, (uint32_t)k, -60.0f, 60.0f);
        cr_assert_eq(shoal_world_add_obstacle(w, c, 3.0f, NULL), SHOAL_OK);
    }
    static shoal_agent_t ids[GROUP_N];
    shoal_agent_t prev = {0};
    for (int i = 0; i < GROUP_N; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        for (int k = 0; k < 3; ++k) {
            d.position[k] = rng_range(4, (uint64_t)i, 0, (uint32_t)k, -80.0f, 80.0f);
            d.target[k] = rng_range(4, (uint64_t)i, 1, (uint32_t)k, -80.0f, 80.0f);
        }
        d.heading = rng_range(4, (uint64_t)i, 2, 0, -3.0f, 3.0f);
        d.weights[SHOAL_BEHAVIOR_SEEK] = 0.5f;
        d.weights[SHOAL_BEHAVIOR_WANDER + i % 5] = 1.0f; /* wander .. avoid */
        d.pursuit.target = prev;
        d.follow.leader = prev;
        d.avoid.tangential = i % 2;
        prev = ids[i] = add(w, d);
    }
    step_n(w, 120, DT);
    memset(out, 0, GROUP_N * sizeof *out);
    for (int i = 0; i < GROUP_N; ++i) out[i] = state_of(w, ids[i]);
    shoal_world_destroy(w);
}

static void same_state_for_any_thread_count(int dims)
{
    static shoal_agent_state_t ref[GROUP_N], got[GROUP_N];
    group_run(dims, 1, SHOAL_BACKEND_SERIAL, ref);
    for (int t = 1; t <= 3; ++t) {
        group_run(dims, t, SHOAL_BACKEND_OPENMP, got);
        cr_assert_eq(memcmp(ref, got, sizeof ref), 0, "%d OpenMP threads differ from serial", t);
    }
}

Test(group, same_state_for_any_thread_count_2d, .timeout = 60) { same_state_for_any_thread_count(2); }
Test(group, same_state_for_any_thread_count_3d, .timeout = 60) { same_state_for_any_thread_count(3); }

/* Wander alone (no handles stored): one state_hash for 1 and 2 threads. */
Test(group, wander_hash_same_for_1_and_2_threads)
{
    uint64_t h[2];
    for (int t = 1; t <= 2; ++t) {
        shoal_world_t* w = make_world(3, t, SHOAL_BACKEND_OPENMP);
        for (int i = 0; i < 2000; ++i) add(w, wanderer((float)(i % 50), (float)(i / 50)));
        step_n(w, 120, DT);
        h[t - 1] = shoal_world_state_hash(w);
        shoal_world_destroy(w);
    }
    cr_assert_eq(h[0], h[1], "%016llx vs %016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}
