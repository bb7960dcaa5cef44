/* An agent's definition, part by part: shoal_agent_default_def gives the
 * defaults the public headers document (each module fills its own part),
 * and a setter changes one part of a live or pending agent, all or
 * nothing, writing only the component it changes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "ecs/world.h"
#include "modules/crowd/crowd.h"
#include "support.h"

/* The defaults as include/shoal/types.h, ground.h, planner.h and crowd.h
 * document them, field by field, on a zeroed definition. */
static shoal_agent_def_t documented_def(void)
{
    shoal_agent_def_t d;
    memset(&d, 0, sizeof d);
    d.vehicle = (shoal_vehicle_t){1.0f, 1.0f, 20.0f, 20.0f, 5.0f, 3.0f, 0.5f};
    d.control = (shoal_control_t){4.0f, 9.0f, 6.0f};
    d.arrive_gain = 1.0f;
    d.depart_gain = 10.0f;
    d.neighbors.radius = 2.0f;
    d.neighbors.fov = 2.0f * 3.14159265358979f;
    d.neighbors.max_neighbors = 0;
    d.neighbors.separation_gain = 1.0f;
    d.neighbors.alignment_gain = 1.0f;
    d.neighbors.cohesion_gain = 1.0f;
    d.wander.cruise_speed = 2.0f;
    d.wander.strength = 1.0f;
    d.wander.noise = 0.5f;
    d.pursuit.max_prediction = 2.0f;
    d.follow.behind = 2.0f;
    d.follow.behind_per_speed = 0.5f;
    d.follow.arrive_gain = 1.0f;
    d.avoid.lookahead_time = 2.0f;
    d.avoid.gain = 1.0f;
    d.avoid.tangential = 0;
    d.dseek.waypoint.direction[0] = 1.0f;
    d.dseek.route = -1;
    /* ground: not enabled; the "car" preset; shoal_path_follow_default */
    shoal_ground_vehicle_t* v = &d.ground.vehicle;
    v->mass = 1400.0f;
    v->wheelbase = 2.7f;
    v->max_steer = 32.0f * 3.14159265358979f / 180.0f;
    v->steer_rate = 1.5f;
    v->max_yaw_rate = 0.0f;
    v->engine_force = 6400.0f;
    v->reverse_force = 3200.0f;
    v->brake_force = 11000.0f;
    v->drag = 0.4f;
    v->rolling = 0.015f;
    v->traction = 0.85f;
    v->max_speed = 30.0f;
    v->max_reverse_speed = 6.0f;
    v->radius = 1.5f;
    shoal_path_follow_t* f = &d.ground.follow;
    f->follower = SHOAL_FOLLOWER_PROPOSED;
    f->path = -1;
    f->a_lat = 0.4f;
    f->dh = 6.0f;
    f->n = 5;
    f->v_min = 1.0f;
    f->v_max = 10.0f;
    f->baseline_gain = 1.5f;
    f->lookahead_min = 5.0f;
    f->lookahead_time = 0.6f;
    f->lookahead_max = 15.0f;
    f->kp = 0.5f;
    f->ki = 0.25f;
    f->arrive_radius = 3.0f;
    f->stuck_window = 4.0f;
    f->stuck_progress = 1.5f;
    f->reverse_time = 2.0f;
    f->max_recoveries = 3;
    f->vehicle_limits = 1;
    shoal_planner_t* p = &d.planner;
    p->speed = 5.0f;
    p->radius = 1.0f;
    p->goal = SHOAL_PLAN_GOAL_SEEK;
    p->avoid_collisions = 1;
    p->strategy = SHOAL_PLAN_ADAPTIVE;
    p->discount = 0.8f;
    p->optimism = 0.5f;
    p->max_depth = 6;
    p->min_depth = 3;
    p->max_expansions = 400;
    p->k_skip = 2;
    p->n_v = 121;
    p->collapse = 0.2f;
    p->damping = 0.02f;
    shoal_crowd_t* c = &d.crowd;
    c->neighbor_distance = 5.0f;
    c->max_neighbors = 10;
    c->time_horizon = 2.0f;
    c->time_horizon_walls = 1.0f;
    c->responsibility = 0.5f;
    return d;
}

Test(agent_edit, default_def_is_the_documented_one)
{
    shoal_agent_def_t want = documented_def();
    shoal_agent_def_t got = shoal_agent_default_def();
    /* the fields the headers give as rounded or derived numbers */
    cr_assert_float_eq(got.neighbors.fov, want.neighbors.fov, 1e-6f);
    cr_assert_float_eq(got.ground.vehicle.max_steer, 0.5585f, 1e-4f);
    cr_assert_float_eq(got.ground.vehicle.max_steer, want.ground.vehicle.max_steer, 1e-6f);
    want.neighbors.fov = got.neighbors.fov;
    want.ground.vehicle.max_steer = got.ground.vehicle.max_steer;
    cr_assert_neq(got.internal_value, 0, "the cookie is set");
    want.internal_value = got.internal_value;
    /* every other byte as documented, up to the tail padding (the only
     * padding the definition has) */
    cr_assert_eq(memcmp(&got, &want, offsetof(shoal_agent_def_t, internal_value) + sizeof got.internal_value), 0);
    /* the public defaults of each part agree with it */
    shoal_crowd_t crowd = shoal_crowd_default();
    shoal_planner_t planner = shoal_planner_default();
    shoal_path_follow_t follow = shoal_path_follow_default();
    shoal_ground_vehicle_t car;
    cr_assert_eq(shoal_ground_vehicle_preset("car", &car, NULL), SHOAL_OK);
    cr_assert_eq(memcmp(&got.crowd, &crowd, sizeof crowd), 0);
    cr_assert_eq(memcmp(&got.planner, &planner, sizeof planner), 0);
    cr_assert_eq(memcmp(&got.ground.follow, &follow, sizeof follow), 0);
    cr_assert_eq(memcmp(&got.ground.vehicle, &car, sizeof car), 0);
    shoal_neighbors_t nb = shoal_neighbors_default();
    shoal_dseek_t ds = shoal_dseek_default();
    cr_assert_eq(memcmp(&got.neighbors, &nb, sizeof nb), 0);
    cr_assert_eq(memcmp(&got.dseek, &ds, sizeof ds), 0);
}

Test(agent_edit, every_module_fills_its_part_once)
{
    /* Each module's defaults hook touches only its own part: run on a
     * zeroed definition, the hooks together give the default parts, and a
     * hook run twice changes nothing. */
    const registry_t* reg = builtin_registry();
    shoal_agent_def_t d, again;
    memset(&d, 0, sizeof d);
    for (int32_t m = 0; m < reg->module_count; ++m)
        if (reg->modules[m]->defaults) reg->modules[m]->defaults(&d);
    memcpy(&again, &d, sizeof d);
    for (int32_t m = reg->module_count - 1; m >= 0; --m)
        if (reg->modules[m]->defaults) reg->modules[m]->defaults(&again);
    cr_assert_eq(memcmp(&d, &again, offsetof(shoal_agent_def_t, internal_value)), 0);
    shoal_agent_def_t want = shoal_agent_default_def();
    /* the core's parts are left to the core */
    cr_assert_eq(d.vehicle.mass, 0.0f);
    cr_assert_eq(d.arrive_gain, 0.0f);
    cr_assert_eq(d.internal_value, 0);
    cr_assert_eq(memcmp(&d.crowd, &want.crowd, sizeof d.crowd), 0);
    cr_assert_eq(memcmp(&d.ground, &want.ground, sizeof d.ground), 0);
    cr_assert_eq(memcmp(&d.planner, &want.planner, sizeof d.planner), 0);
    cr_assert_eq(memcmp(&d.wander, &want.wander, sizeof d.wander), 0);
}
