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
#include "modules/dseek/dseek.h"
#include "modules/neighbors/neighbors.h"
#include "modules/wander/wander.h"
#include "support.h"

/* The defaults as include/shoal/types.h, ground.h, planner.h and crowd.h
 * document them, field by field, on a zeroed definition. */
static shoal_agent_def_t documented_def(void)
{
    shoal_agent_def_t d;
    memset(&d, 0, sizeof d);
    d.vehicle = (shoal_vehicle_t){.mass = 1.0f,
                                  .inertia = 1.0f,
                                  .max_force = 20.0f,
                                  .max_torque = 20.0f,
                                  .max_speed = 5.0f,
                                  .max_turn_rate = 3.0f,
                                  .radius = 0.5f};
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
    d.nav.goal = -1;
    d.nav.arrive_distance = 0.3f;
    d.nav.journey = -1;
    d.navmesh.arrive_distance = 0.3f;
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
    cr_assert_eq(memcmp(&got, &want, offsetof(shoal_agent_def_t, internal_value) + sizeof got.internal_value),
                 0);
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

/* ---- crowd agents' parameters ------------------------------------------- */

static shoal_agent_def_t walker(float x, float y, float tx)
{
    shoal_agent_def_t d = shoal_agent_default_def();
    cr_assert_eq(shoal_crowd_preset("pedestrian", &d.crowd, &d.vehicle, NULL), SHOAL_OK);
    d.crowd.side_preference = 0.0f;
    d.crowd.time_gap = 0.0f;
    d.position[0] = x;
    d.position[1] = y;
    d.target[0] = tx;
    d.target[1] = y;
    d.weights[SHOAL_BEHAVIOR_ARRIVE] = 1.0f;
    return d;
}

static int32_t crowd_row(const shoal_world_t* w, shoal_agent_t id)
{
    return component_row(&w->comps[COMP_CROWD], id.index1 - 1u);
}

static float speed_of(const shoal_world_t* w, shoal_agent_t id)
{
    shoal_agent_state_t s;
    cr_assert_eq(shoal_agent_get_state(w, id, &s), SHOAL_OK);
    return sqrtf(s.velocity[0] * s.velocity[0] + s.velocity[1] * s.velocity[1]);
}

Test(agent_edit, set_crowd_changes_the_columns_and_the_walk)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = walker(0.0f, 0.0f, 100.0f);
    shoal_agent_t a, b;
    cr_assert_eq(shoal_agent_add(w, &d, &a), SHOAL_OK);
    d = walker(0.0f, 5.0f, 100.0f);
    cr_assert_eq(shoal_agent_add(w, &d, &b), SHOAL_OK);
    for (int i = 0; i < 60; ++i) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    cr_assert_float_eq(speed_of(w, a), 1.34f, 1e-3f, "the preset's preferred speed");

    shoal_crowd_t c;
    cr_assert_eq(shoal_agent_get_crowd(w, a, &c), SHOAL_OK);
    cr_assert_eq(c.enabled, 1);
    cr_assert_float_eq(c.preferred_speed, 1.34f, 1e-6f);
    uint64_t crowd_version = w->comps[COMP_CROWD].version;
    /* the same parameters again: no change, so no new version */
    cr_assert_eq(shoal_agent_set_crowd(w, a, &c), SHOAL_OK);
    cr_assert_eq(w->comps[COMP_CROWD].version, crowd_version);

    c.preferred_speed = 0.6f;
    c.neighbor_distance = 4.0f;
    c.max_neighbors = 7;
    c.time_horizon = 3.0f;
    c.time_horizon_walls = 1.5f;
    c.responsibility = 0.25f;
    c.time_gap = 0.4f;
    c.side_preference = 0.5f;
    cr_assert_eq(shoal_agent_set_crowd(w, a, &c), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_neq(w->comps[COMP_CROWD].version, crowd_version);
    int32_t r = crowd_row(w, a);
    cr_assert_geq(r, 0);
    cr_assert_eq(COMP_F(w, COMP_CROWD, CR_PREFERRED_SPEED)[r], 0.6f);
    cr_assert_eq(COMP_F(w, COMP_CROWD, CR_NEIGHBOR_DISTANCE)[r], 4.0f);
    cr_assert_eq(COMP_I(w, COMP_CROWD, CR_MAX_NEIGHBORS)[r], 7);
    cr_assert_eq(COMP_F(w, COMP_CROWD, CR_TAU)[r], 3.0f);
    cr_assert_eq(COMP_F(w, COMP_CROWD, CR_TAU_WALLS)[r], 1.5f);
    cr_assert_eq(COMP_F(w, COMP_CROWD, CR_RESPONSIBILITY)[r], 0.25f);
    cr_assert_eq(COMP_F(w, COMP_CROWD, CR_TIME_GAP)[r], 0.4f);
    cr_assert_eq(COMP_F(w, COMP_CROWD, CR_SIDE_PREFERENCE)[r], 0.5f);
    /* the other walker's row is as it was */
    int32_t rb = crowd_row(w, b);
    cr_assert_float_eq(COMP_F(w, COMP_CROWD, CR_PREFERRED_SPEED)[rb], 1.34f, 1e-6f);
    shoal_crowd_t back;
    cr_assert_eq(shoal_agent_get_crowd(w, a, &back), SHOAL_OK);
    cr_assert_eq(memcmp(&back, &c, sizeof c), 0);

    /* the walk follows: a slows to its new preferred speed, b keeps its own */
    for (int i = 0; i < 60; ++i) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    cr_assert_float_eq(speed_of(w, a), 0.6f, 1e-3f);
    cr_assert_float_eq(speed_of(w, b), 1.34f, 1e-3f);
    shoal_world_destroy(w);
}

Test(agent_edit, set_crowd_matches_an_agent_added_so)
{
    /* Changing the parameters between steps gives the world that adding
     * the agent with them at that point would have given. */
    shoal_world_t* w[2];
    shoal_agent_t ids[2][3];
    for (int k = 0; k < 2; ++k) {
        w[k] = make_world(2, 1, SHOAL_BACKEND_SERIAL);
        for (int i = 0; i < 3; ++i) {
            shoal_agent_def_t d = walker(0.0f, 0.6f * (float)i, 50.0f - 10.0f * (float)i);
            if (k == 1 && i == 1) d.crowd.responsibility = 0.9f;
            cr_assert_eq(shoal_agent_add(w[k], &d, &ids[k][i]), SHOAL_OK);
        }
    }
    shoal_crowd_t c;
    cr_assert_eq(shoal_agent_get_crowd(w[0], ids[0][1], &c), SHOAL_OK);
    c.responsibility = 0.9f;
    cr_assert_eq(shoal_agent_set_crowd(w[0], ids[0][1], &c), SHOAL_OK);
    for (int s = 0; s < 40; ++s)
        for (int k = 0; k < 2; ++k) cr_assert_eq(shoal_world_step(w[k], 0.05f), SHOAL_OK);
    cr_assert_eq(shoal_world_state_hash(w[0]), shoal_world_state_hash(w[1]));
    shoal_world_destroy(w[0]);
    shoal_world_destroy(w[1]);
}

Test(agent_edit, set_crowd_turns_an_agent_into_a_crowd_agent_and_back)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.contacts = 1;
    shoal_agent_t a;
    cr_assert_eq(shoal_agent_add(w, &d, &a), SHOAL_OK);
    uint32_t slot = a.index1 - 1u;
    cr_assert_lt(crowd_row(w, a), 0);
    cr_assert_geq(component_row(&w->comps[COMP_CONTACT], slot), 0);
    shoal_crowd_t c = shoal_crowd_default();
    c.enabled = 1;
    cr_assert_eq(shoal_agent_set_crowd(w, a, &c), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_geq(crowd_row(w, a), 0);
    cr_assert_lt(component_row(&w->comps[COMP_CONTACT], slot), 0, "a crowd agent takes part as one");
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    shoal_crowd_stats_t st;
    cr_assert_eq(shoal_world_crowd_stats(w, &st), SHOAL_OK);
    cr_assert_eq(st.agents, 1);
    c.enabled = 0;
    cr_assert_eq(shoal_agent_set_crowd(w, a, &c), SHOAL_OK);
    cr_assert_lt(crowd_row(w, a), 0);
    /* A crowd agent always takes part in contacts, so its definition keeps
     * no contacts flag (shoal_agent_get_def reads 0): back to an ordinary
     * agent, it takes part no more. */
    cr_assert_lt(component_row(&w->comps[COMP_CONTACT], slot), 0);
    shoal_crowd_t back;
    cr_assert_eq(shoal_agent_get_crowd(w, a, &back), SHOAL_OK);
    cr_assert_eq(back.enabled, 0);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    cr_assert_eq(shoal_world_crowd_stats(w, &st), SHOAL_OK);
    cr_assert_eq(st.agents, 0);
    shoal_world_destroy(w);
}

static void refused(shoal_world_t* w, shoal_agent_t a, const shoal_crowd_t* c, const char* field)
{
    shoal_crowd_t before;
    cr_assert_eq(shoal_agent_get_crowd(w, a, &before), SHOAL_OK);
    uint64_t hash = shoal_world_state_hash(w);
    uint64_t version = w->comps[COMP_CROWD].version;
    int32_t rows = w->comps[COMP_CROWD].table.count;
    cr_assert_eq(shoal_agent_set_crowd(w, a, c), SHOAL_ERR_INVALID_ARGUMENT, "%s", field);
    cr_assert_not_null(strstr(shoal_world_last_error(w), field), "'%s' names %s", shoal_world_last_error(w),
                       field);
    cr_assert_not_null(strstr(shoal_world_last_error(w), "agent_set_crowd"));
    shoal_crowd_t after;
    cr_assert_eq(shoal_agent_get_crowd(w, a, &after), SHOAL_OK);
    cr_assert_eq(memcmp(&before, &after, sizeof after), 0, "nothing changed");
    cr_assert_eq(shoal_world_state_hash(w), hash);
    cr_assert_eq(w->comps[COMP_CROWD].version, version);
    cr_assert_eq(w->comps[COMP_CROWD].table.count, rows);
}

Test(agent_edit, set_crowd_refuses_bad_parameters_and_changes_nothing)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = walker(0.0f, 0.0f, 10.0f);
    shoal_agent_t a, car, still;
    cr_assert_eq(shoal_agent_add(w, &d, &a), SHOAL_OK);
    d = shoal_agent_default_def();
    d.ground.enabled = 1;
    cr_assert_eq(shoal_agent_add(w, &d, &car), SHOAL_OK);
    d = shoal_agent_default_def();
    d.vehicle.radius = 0.0f;
    cr_assert_eq(shoal_agent_add(w, &d, &still), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);

    shoal_crowd_t good;
    cr_assert_eq(shoal_agent_get_crowd(w, a, &good), SHOAL_OK);
    shoal_crowd_t c = good;
    c.responsibility = 1.5f;
    refused(w, a, &c, "crowd.responsibility");
    c = good;
    c.max_neighbors = 0;
    refused(w, a, &c, "crowd.max_neighbors");
    c = good;
    c.neighbor_distance = NAN;
    refused(w, a, &c, "crowd.neighbor_distance");
    c = good;
    c.time_horizon = -1.0f;
    refused(w, a, &c, "crowd.time_horizon");
    c = good;
    c.side_preference = 2.0f;
    refused(w, a, &c, "crowd.side_preference");
    c = good;
    c.enabled = 2;
    refused(w, a, &c, "crowd.enabled");
    /* the rest of the definition must allow a crowd agent */
    c = good;
    refused(w, car, &c, "ground.enabled");
    refused(w, still, &c, "vehicle.radius");
    cr_assert_eq(shoal_agent_set_crowd(w, a, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_not_null(strstr(shoal_world_last_error(w), "crowd is NULL"));
    shoal_crowd_t out;
    cr_assert_eq(shoal_agent_get_crowd(w, a, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_set_crowd(NULL, a, &good), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_agent_get_crowd(NULL, a, &out), SHOAL_ERR_INVALID_ARGUMENT);

    /* a stale handle is refused */
    cr_assert_eq(shoal_agent_remove(w, a), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_crowd(w, a, &good), SHOAL_ERR_STALE_HANDLE);
    cr_assert_eq(shoal_agent_get_crowd(w, a, &out), SHOAL_ERR_STALE_HANDLE);
    shoal_agent_t null_id;
    memset(&null_id, 0, sizeof null_id);
    cr_assert_eq(shoal_agent_set_crowd(w, null_id, &good), SHOAL_ERR_STALE_HANDLE);
    shoal_world_destroy(w);
}

/* A user system that adds a walker and changes its crowd parameters while
 * it is pending. */
typedef struct crowd_spawner {
    shoal_agent_t spawned;
    shoal_status_t set, get;
    shoal_crowd_t seen;
    int done;
} crowd_spawner_t;

static shoal_status_t spawn_walker(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    crowd_spawner_t* s = (crowd_spawner_t*)ctx;
    if (s->done++) return SHOAL_OK;
    shoal_agent_def_t d = walker(0.0f, 3.0f, 100.0f);
    shoal_status_t st = shoal_agent_add(w, &d, &s->spawned);
    if (st != SHOAL_OK) return st;
    shoal_crowd_t c = d.crowd;
    c.preferred_speed = 0.5f;
    c.max_neighbors = 3;
    s->set = shoal_agent_set_crowd(w, s->spawned, &c);
    s->get = shoal_agent_get_crowd(w, s->spawned, &s->seen);
    c.responsibility = -1.0f;
    if (shoal_agent_set_crowd(w, s->spawned, &c) != SHOAL_ERR_INVALID_ARGUMENT)
        return SHOAL_ERR_INVALID_ARGUMENT;
    return SHOAL_OK;
}

Test(agent_edit, set_crowd_on_an_agent_added_in_the_step)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = walker(0.0f, 0.0f, 100.0f);
    shoal_agent_t a;
    cr_assert_eq(shoal_agent_add(w, &d, &a), SHOAL_OK);
    crowd_spawner_t sp;
    memset(&sp, 0, sizeof sp);
    cr_assert_eq(shoal_world_add_system(w, "spawn_walker", SHOAL_STAGE_DECIDE, spawn_walker, &sp), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK, "%s", shoal_world_last_error(w));
    cr_assert_eq(sp.set, SHOAL_OK);
    cr_assert_eq(sp.get, SHOAL_OK);
    cr_assert_eq(sp.seen.preferred_speed, 0.5f, "the pending agent reads its change");
    cr_assert_eq(sp.seen.max_neighbors, 3);
    cr_assert(shoal_agent_is_valid(w, sp.spawned));
    int32_t r = crowd_row(w, sp.spawned);
    cr_assert_geq(r, 0, "live, a crowd agent");
    cr_assert_eq(COMP_F(w, COMP_CROWD, CR_PREFERRED_SPEED)[r], 0.5f);
    cr_assert_eq(COMP_I(w, COMP_CROWD, CR_MAX_NEIGHBORS)[r], 3);
    cr_assert_float_eq(COMP_F(w, COMP_CROWD, CR_RESPONSIBILITY)[r], 0.5f, 1e-6f, "the refused change is not");
    for (int i = 0; i < 60; ++i) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    cr_assert_float_eq(speed_of(w, sp.spawned), 0.5f, 1e-3f);
    shoal_world_destroy(w);
}

/* ---- an edit writes only what it changes --------------------------------- */

/* Row `slot`'s bytes of component k, every column one after another. */
static size_t comp_row_bytes(const shoal_world_t* w, int k, uint32_t slot, unsigned char* buf, size_t cap)
{
    const table_t* t = &w->comps[k].table;
    int32_t r = component_row(&w->comps[k], slot);
    cr_assert_geq(r, 0);
    size_t n = 0;
    for (int32_t c = 0; c < t->column_count; ++c) {
        size_t sz = t->elem_size[c];
        cr_assert_leq(n + sz, cap);
        memcpy(buf + n, (const char*)t->columns[c] + (size_t)r * sz, sz);
        n += sz;
    }
    return n;
}

typedef struct comp_versions {
    uint64_t v[WORLD_MAX_COMPONENTS];
} comp_versions_t;

static comp_versions_t versions_of(const shoal_world_t* w)
{
    comp_versions_t out;
    memset(&out, 0, sizeof out);
    for (int k = 0; k < w->comp_count; ++k) out.v[k] = w->comps[k].version;
    return out;
}

/* The components whose versions moved since `before`, as a mask. */
static uint32_t moved(const shoal_world_t* w, comp_versions_t before)
{
    uint32_t m = 0;
    for (int k = 0; k < w->comp_count; ++k)
        if (w->comps[k].version != before.v[k]) m |= 1u << k;
    return m;
}

Test(agent_edit, a_module_setter_writes_its_own_component_alone)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    d.dseek.waypoint.position[0] = 30.0f;
    d.dseek.waypoint.position[1] = 10.0f;
    shoal_agent_t a, other;
    cr_assert_eq(shoal_agent_add(w, &d, &a), SHOAL_OK);
    d.position[1] = 5.0f;
    cr_assert_eq(shoal_agent_add(w, &d, &other), SHOAL_OK);
    for (int i = 0; i < 20; ++i) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    uint32_t slot = a.index1 - 1u;
    /* as if on its final arc, which a rewrite of the dseek row would drop
     * (the row's "plan anew") */
    COMP_I(w, COMP_DSEEK, DS_ARC)[component_row(&w->comps[COMP_DSEEK], slot)] = 1;
    unsigned char dseek_before[512], dseek_after[512], nb_before[512], nb_after[512];
    size_t nd = comp_row_bytes(w, COMP_DSEEK, slot, dseek_before, sizeof dseek_before);
    size_t nn = comp_row_bytes(w, COMP_NEIGHBORS, slot, nb_before, sizeof nb_before);
    int32_t row = w->slots[slot].row;

    /* wander's setter: the wander row and version, nothing else */
    comp_versions_t v0 = versions_of(w);
    uint32_t params_one = w->params_one;
    shoal_wander_t wd = shoal_wander_default();
    wd.strength = 2.5f;
    cr_assert_eq(shoal_agent_set_wander(w, a, &wd), SHOAL_OK);
    cr_assert_eq(moved(w, v0), 1u << COMP_WANDER);
    cr_assert_eq(COMP_F(w, COMP_WANDER, WD_STRENGTH)[component_row(&w->comps[COMP_WANDER], slot)], 2.5f);
    cr_assert_eq(comp_row_bytes(w, COMP_DSEEK, slot, dseek_after, sizeof dseek_after), nd);
    cr_assert_eq(memcmp(dseek_before, dseek_after, nd), 0, "the dseek plan is kept");
    cr_assert_eq(comp_row_bytes(w, COMP_NEIGHBORS, slot, nb_after, sizeof nb_after), nn);
    cr_assert_eq(memcmp(nb_before, nb_after, nn), 0);
    cr_assert_eq(w->params_one, params_one);
    cr_assert(agent_params_check(w));
    /* the same again: written as it was, no new version */
    v0 = versions_of(w);
    cr_assert_eq(shoal_agent_set_wander(w, a, &wd), SHOAL_OK);
    cr_assert_eq(moved(w, v0), 0u);

    /* a behavior's weight: the agent table and the row of the module that
     * holds it */
    v0 = versions_of(w);
    cr_assert_eq(shoal_agent_set_behavior(w, a, SHOAL_BEHAVIOR_SEPARATE, 2.0f), SHOAL_OK);
    cr_assert_eq(moved(w, v0), 1u << COMP_NEIGHBORS);
    cr_assert_eq(COMP_F(w, COMP_NEIGHBORS, NB_W_SEP)[component_row(&w->comps[COMP_NEIGHBORS], slot)], 2.0f);
    v0 = versions_of(w);
    cr_assert_eq(shoal_agent_set_behavior(w, a, SHOAL_BEHAVIOR_SEEK, 0.5f), SHOAL_OK);
    cr_assert_eq(moved(w, v0), 0u, "seek's weight is the agent table's");
    cr_assert_eq(AGENT_F(w, AC_W_SEEK)[row], 0.5f);
    cr_assert_not(w->params_one >> (AC_W_SEEK - AP_FIRST) & 1u, "the two agents' seek weights differ");
    cr_assert(agent_params_check(w));
    comp_row_bytes(w, COMP_DSEEK, slot, dseek_after, sizeof dseek_after);
    cr_assert_eq(memcmp(dseek_before, dseek_after, nd), 0, "the dseek plan is kept");

    /* a behavior turned on adds its component, turned off drops it */
    v0 = versions_of(w);
    cr_assert_eq(shoal_agent_set_behavior(w, a, SHOAL_BEHAVIOR_PURSUE, 1.0f), SHOAL_OK);
    cr_assert_eq(moved(w, v0), 1u << COMP_PURSUIT);
    cr_assert_geq(component_row(&w->comps[COMP_PURSUIT], slot), 0);
    cr_assert_eq(shoal_agent_set_behavior(w, a, SHOAL_BEHAVIOR_PURSUE, 0.0f), SHOAL_OK);
    cr_assert_lt(component_row(&w->comps[COMP_PURSUIT], slot), 0);

    /* the agent's own parameters leave every component alone */
    v0 = versions_of(w);
    shoal_vehicle_t veh = shoal_vehicle_default();
    veh.max_speed = 4.0f;
    cr_assert_eq(shoal_agent_set_vehicle(w, a, &veh), SHOAL_OK);
    cr_assert_eq(shoal_agent_set_gains(w, a, 2.0f, 5.0f), SHOAL_OK);
    cr_assert_eq(moved(w, v0), 0u);
    cr_assert_eq(AGENT_F(w, AC_MAX_SPEED)[row], 4.0f);
    cr_assert(agent_params_check(w));

    /* the world reads back as written and steps on */
    shoal_agent_def_t got;
    cr_assert_eq(shoal_agent_get_def(w, a, &got), SHOAL_OK);
    cr_assert_eq(got.wander.strength, 2.5f);
    cr_assert_eq(got.weights[SHOAL_BEHAVIOR_SEPARATE], 2.0f);
    cr_assert_eq(got.vehicle.max_speed, 4.0f);
    for (int i = 0; i < 5; ++i) cr_assert_eq(shoal_world_step(w, 0.05f), SHOAL_OK);
    shoal_world_destroy(w);
}
