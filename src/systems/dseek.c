/* Directed seek as a decide-stage system, routes and formation arrival.
 *
 * Each agent with the DSEEK behavior asks the geometry (dseek_geom.c, after
 * Jakob's Figure 5) for the steering direction d_s toward its waypoint and
 * adds weight * V * d_s to its desired velocity. The controller then turns
 * toward d_s no faster than the vehicle allows.
 *
 * The turn radius follows from the vehicle: r = 1.15 V / omega_max (see
 * DSEEK_RADIUS_MARGIN), with V the larger of the agent's current speed and
 * the waypoint speed (section 6: the larger of r_min(v_A) and r_min(v_W)
 * for both circles), unless the agent sets dseek.r_min.
 *
 * Speed: V_max, or, approaching a waypoint with a lower speed, the speed
 * from which half the force can still brake to the waypoint speed there,
 * sqrt(v_W^2 + 2 a d) (as arrival does).
 *
 * A route advances to its next waypoint when the agent comes within
 * reach_radius of the current one (half the turn radius by default). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ecs/parallel.h"
#include "simd/lane_math.h"
#include "simd/vec.h"
#include "systems/dseek.h"
#include "systems/dseek_geom.h"
#include "systems/systems.h"

/* Below this speed the turn radius is taken at this fraction of V_max: a
 * standing agent still plans turns it can make once moving. */
#define DSEEK_MIN_SPEED_FRACTION 0.2f

/* A radius derived from the vehicle's limits is widened by this factor:
 * the geometry assumes turns start instantly at full rate, while a real
 * controller needs a few steps to reach it, so planning at exactly the
 * tightest radius leaves no authority to catch up. */
#define DSEEK_RADIUS_MARGIN 1.15f
/* In 3D the attitude controller also spends turn rate on leveling the roll,
 * so turns in a tilted plane need more slack. */
#define DSEEK_RADIUS_MARGIN_3D 1.3f

/* The dseek component's columns: the waypoint (or route and index, which
 * this system advances), radii and weight. */
typedef struct dseek_view {
    const int32_t* agent_row;
    const float *weight, *wp[3], *dir[3], *speed, *r_min, *reach;
    const int32_t* route;
    int32_t* index;
} dseek_view;

/* Reads pos, vel, heading or quaternion, max speed, turn rate and force,
 * mass, routes; writes desired (+=) and the route index. */
typedef struct dseek_ctx {
    world_t* w;
    agent_view_t a;
    dseek_view d;
} dseek_ctx;

/* The waypoint component row r is heading for; 0 when its route is done. */
static int current_waypoint(const world_t* w, const dseek_view* d, int32_t r, shoal_waypoint_t* out)
{
    int32_t route = d->route[r];
    if (route < 0) {
        for (int c = 0; c < 3; ++c) {
            out->position[c] = d->wp[c][r];
            out->direction[c] = d->dir[c][r];
        }
        out->speed = d->speed[r];
        return 1;
    }
    int32_t index = d->index[r];
    const route_set_t* rs = routes_of(w);
    if (index >= rs->routes[route][1]) return 0;
    *out = rs->route_points[rs->routes[route][0] + index];
    return 1;
}

static void dseek_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const dseek_ctx* c = (const dseek_ctx*)vctx;
    const world_t* w = c->w;
    const agent_view_t* a = &c->a;
    const dseek_view* d = &c->d;
    const int three = w->dims == 3;
    for (int32_t r = begin; r < end; ++r) {
        int32_t i = d->agent_row[r];
        shoal_waypoint_t wp;
        if (!current_waypoint(w, d, r, &wp)) continue; /* route finished */
        float vmax = a->max_speed[i];
        float wmax = a->max_turn_rate[i];
        vec3 p = agent_position(w, i);
        vec3 v = agent_velocity(w, i);
        vec3 target = {wp.position[0], wp.position[1], three ? wp.position[2] : 0.0f};
        float v_w = wp.speed > 0.0f ? fminf(wp.speed, vmax) : vmax;
        float speed = vec3_length(v);
        float radius = d->r_min[r];
        if (radius <= 0.0f) {
            float turn_speed = fmaxf(fmaxf(speed, v_w), DSEEK_MIN_SPEED_FRACTION * vmax);
            float margin = three ? DSEEK_RADIUS_MARGIN_3D : DSEEK_RADIUS_MARGIN;
            radius = wmax > 0.0f ? margin * turn_speed / wmax : 1e6f;
        }
        if (!(radius > 0.0f)) radius = 1e-3f;
        float reach = d->reach[r];
        if (reach <= 0.0f) reach = 0.5f * radius;
        float dist = vec3_distance(p, target);
        if (d->route[r] >= 0 && dist <= reach) { /* this system owns DS_INDEX */
            d->index[r]++;
            if (!current_waypoint(w, d, r, &wp)) continue;
            target = (vec3){wp.position[0], wp.position[1], three ? wp.position[2] : 0.0f};
            v_w = wp.speed > 0.0f ? fminf(wp.speed, vmax) : vmax;
            dist = vec3_distance(p, target);
        }
        dseek_params prm = dseek_default_params(radius);
        vec3 steer;
        if (three) {
            vec3 dw = vec3_normalize((vec3){wp.direction[0], wp.direction[1], wp.direction[2]});
            dseek_result3 res;
            dseek_steer_3d(p, agent_forward(w, i), target, dw, &prm, &res);
            steer = res.steer;
        } else {
            float sn, cs;
            fast_sincosf(a->heading[i], &sn, &cs);
            vec2 dw = vec2_normalize((vec2){wp.direction[0], wp.direction[1]});
            dseek_result2 res;
            dseek_steer_2d((vec2){p.x, p.y}, (vec2){cs, sn}, (vec2){target.x, target.y}, dw, &prm, &res);
            steer = (vec3){res.steer.x, res.steer.y, 0.0f};
        }
        /* Brake toward the waypoint speed as arrival does. */
        float cmd = braking_speed(vmax, dist, v_w, vmax, a->max_force[i], a->mass[i]);
        float k = d->weight[r] * cmd;
        a->dx[i] += k * steer.x;
        a->dy[i] += k * steer.y;
        if (three) a->dz[i] += k * steer.z;
    }
}

int64_t dseek_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    int32_t count = w->comps[COMP_DSEEK].table.count;
    const int k = COMP_DSEEK;
    dseek_ctx c = {w, agent_view(w),
                   {COMP_I(w, k, COMP_ROW), COMP_F(w, k, DS_WEIGHT),
                    {COMP_F(w, k, DS_WP_X), COMP_F(w, k, DS_WP_Y), COMP_F(w, k, DS_WP_Z)},
                    {COMP_F(w, k, DS_DIR_X), COMP_F(w, k, DS_DIR_Y), COMP_F(w, k, DS_DIR_Z)},
                    COMP_F(w, k, DS_SPEED), COMP_F(w, k, DS_R_MIN), COMP_F(w, k, DS_REACH),
                    COMP_I(w, k, DS_ROUTE), COMP_I(w, k, DS_INDEX)}};
    par_for(w, count, 256, PAR_STATIC, dseek_range, &c);
    return count;
}

/* ---- routes ------------------------------------------------------------- */

shoal_status_t shoal_world_add_route(shoal_world_t* w, const shoal_waypoint_t* points, int32_t count,
                                     int32_t* out_route)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (out_route) *out_route = -1;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "add_route: called from inside a step");
    if (!points || count < 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "add_route: needs at least one waypoint (points %s, count %d)",
                          points ? "given" : "NULL", (int)count);
    for (int32_t i = 0; i < count; ++i) {
        const shoal_waypoint_t* p = &points[i];
        int dims = w->dims;
        for (int c = 0; c < 3; ++c)
            if (!isfinite(p->position[c]) || !isfinite(p->direction[c]) ||
                fabsf(p->position[c]) > DEF_MAX_COORDINATE)
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "add_route: waypoint %d: position and direction must be finite, the position "
                                  "within +-%g m",
                                  (int)i, (double)DEF_MAX_COORDINATE);
        float n = sqrtf(p->direction[0] * p->direction[0] + p->direction[1] * p->direction[1] +
                        (dims == 3 ? p->direction[2] * p->direction[2] : 0.0f));
        if (fabsf(n - 1.0f) > 1e-3f)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "add_route: waypoint %d: direction must be a unit vector, has length %g",
                              (int)i, (double)n);
        if (!isfinite(p->speed) || p->speed < 0.0f)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "add_route: waypoint %d: speed must be finite and >= 0, got %g", (int)i,
                              (double)p->speed);
    }
    route_set_t* rs = routes_of(w);
    if (rs->route_point_count > INT32_MAX / 2 - count)
        return world_fail(w, SHOAL_ERR_CAPACITY, "add_route: too many waypoints");
    /* Grow both arrays before changing anything. */
    int32_t need = rs->route_point_count + count;
    if (need > rs->route_point_capacity) {
        int32_t cap = rs->route_point_capacity * 2 > need ? rs->route_point_capacity * 2 : need;
        shoal_waypoint_t* fresh = mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
        if (!fresh) return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "add_route: out of memory");
        if (rs->route_point_count) memcpy(fresh, rs->route_points, (size_t)rs->route_point_count * sizeof *fresh);
        mem_free(&w->alloc, rs->route_points, (size_t)rs->route_point_capacity * sizeof *fresh);
        rs->route_points = fresh;
        rs->route_point_capacity = cap;
    }
    if (rs->route_count == rs->route_capacity) {
        int32_t cap = rs->route_capacity ? rs->route_capacity * 2 : 8;
        int32_t(*fresh)[2] = mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
        if (!fresh) return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "add_route: out of memory");
        if (rs->route_count) memcpy(fresh, rs->routes, (size_t)rs->route_count * sizeof *fresh);
        mem_free(&w->alloc, rs->routes, (size_t)rs->route_capacity * sizeof *fresh);
        rs->routes = fresh;
        rs->route_capacity = cap;
    }
    memcpy(rs->route_points + rs->route_point_count, points, (size_t)count * sizeof *points);
    rs->routes[rs->route_count][0] = rs->route_point_count;
    rs->routes[rs->route_count][1] = count;
    rs->route_point_count += count;
    if (out_route) *out_route = rs->route_count;
    rs->route_count++;
    return SHOAL_OK;
}

int32_t shoal_world_route_count(const shoal_world_t* w) { return w ? routes_of(w)->route_count : 0; }

/* Forget the routes from `count` on (added after a mark), so that route
 * ids are as before. */
static void world_truncate_routes(world_t* w, int32_t count)
{
    route_set_t* rs = routes_of(w);
    if (count < 0 || count >= rs->route_count) return;
    rs->route_point_count = rs->routes[count][0];
    rs->route_count = count;
}

/* ---- the module: component, routes, setters ------------------------------ */

static int dseek_needs(const shoal_agent_def_t* d) { return d->weights[SHOAL_BEHAVIOR_DSEEK] != 0.0f; }

static shoal_status_t dseek_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    const shoal_dseek_t* ds = &d->dseek;
    int fine = def_check_coordinates(w, where, "dseek.waypoint.position", ds->waypoint.position, 3) &&
               def_check_finite(w, where, "dseek.waypoint.direction", ds->waypoint.direction, 3) &&
               def_check_min(w, where, "dseek.waypoint.speed", ds->waypoint.speed, 0.0f, 0) &&
               def_check_min(w, where, "dseek.r_min", ds->r_min, 0.0f, 0) &&
               def_check_min(w, where, "dseek.reach_radius", ds->reach_radius, 0.0f, 0);
    if (!fine) return SHOAL_ERR_INVALID_ARGUMENT;
    if (ds->route < -1 || ds->route >= routes_of(w)->route_count)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: dseek.route must be -1 or a route of this world (0..%d), got %d", where,
                          (int)routes_of(w)->route_count - 1, (int)ds->route);
    const float* dir = ds->waypoint.direction;
    float n = dir[0] * dir[0] + dir[1] * dir[1] + (w->dims == 3 ? dir[2] * dir[2] : 0.0f);
    if (d->weights[SHOAL_BEHAVIOR_DSEEK] != 0.0f && ds->route < 0 && fabsf(sqrtf(n) - 1.0f) > 1e-3f)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: dseek.waypoint.direction must be a unit vector, has length %g", where,
                          (double)sqrtf(n));
    return SHOAL_OK;
}

static void dseek_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                            int fresh)
{
    (void)slot;
    (void)forward;
    const int k = COMP_DSEEK;
    const shoal_dseek_t* ds = &d->dseek;
    /* A new route (or a fresh row) starts at its first waypoint. */
    if (fresh || COMP_I(w, k, DS_ROUTE)[r] != ds->route) COMP_I(w, k, DS_INDEX)[r] = 0;
    COMP_F(w, k, DS_WEIGHT)[r] = d->weights[SHOAL_BEHAVIOR_DSEEK];
    for (int a = 0; a < 3; ++a) {
        COMP_F(w, k, DS_WP_X + a)[r] = ds->waypoint.position[a];
        COMP_F(w, k, DS_DIR_X + a)[r] = ds->waypoint.direction[a];
    }
    if (w->dims == 2) COMP_F(w, k, DS_WP_Z)[r] = COMP_F(w, k, DS_DIR_Z)[r] = 0.0f;
    COMP_F(w, k, DS_SPEED)[r] = ds->waypoint.speed;
    COMP_I(w, k, DS_ROUTE)[r] = ds->route;
    COMP_F(w, k, DS_R_MIN)[r] = ds->r_min;
    COMP_F(w, k, DS_REACH)[r] = ds->reach_radius;
}

static void dseek_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    const int k = COMP_DSEEK;
    d->weights[SHOAL_BEHAVIOR_DSEEK] = COMP_F(w, k, DS_WEIGHT)[r];
    for (int a = 0; a < 3; ++a) {
        d->dseek.waypoint.position[a] = COMP_F(w, k, DS_WP_X + a)[r];
        d->dseek.waypoint.direction[a] = COMP_F(w, k, DS_DIR_X + a)[r];
    }
    d->dseek.waypoint.speed = COMP_F(w, k, DS_SPEED)[r];
    d->dseek.route = COMP_I(w, k, DS_ROUTE)[r];
    d->dseek.r_min = COMP_F(w, k, DS_R_MIN)[r];
    d->dseek.reach_radius = COMP_F(w, k, DS_REACH)[r];
}

static int dseek_init(world_t* w)
{
    route_set_t* rs = (route_set_t*)mem_calloc(&w->alloc, sizeof *rs);
    w->module_data[MOD_DSEEK] = rs;
    return rs != NULL;
}

static void dseek_release(world_t* w)
{
    route_set_t* rs = routes_of(w);
    if (!rs) return;
    mem_free(&w->alloc, rs->route_points, (size_t)rs->route_point_capacity * sizeof *rs->route_points);
    mem_free(&w->alloc, rs->routes, (size_t)rs->route_capacity * sizeof *rs->routes);
    mem_free(&w->alloc, rs, sizeof *rs);
    w->module_data[MOD_DSEEK] = NULL;
}

/* Routes of directed seek. */
static uint64_t dseek_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb)
{
    const route_set_t* rs = routes_of(w);
    for (int32_t i = 0; i < rs->route_point_count; ++i) {
        const shoal_waypoint_t* p = &rs->route_points[i];
        uint32_t v[7];
        memcpy(v, p->position, 12);
        memcpy(v + 3, p->direction, 12);
        memcpy(v + 6, &p->speed, 4);
        for (int k = 0; k < 7; ++k) h = absorb(h, v[k]);
    }
    return h;
}

static void dseek_mark(const world_t* w, int64_t note[WORLD_MARK_WORDS])
{
    note[0] = routes_of(w)->route_count;
}

static void dseek_rollback(world_t* w, const int64_t note[WORLD_MARK_WORDS])
{
    world_truncate_routes(w, (int32_t)note[0]);
}

/* Snapshot section ROUT: point count, route count, every route point
 * (position, direction, speed), every route (first point, point count). */
static void dseek_save(const world_t* w, byte_writer_t* wr)
{
    const route_set_t* rs = routes_of(w);
    bw_u32(wr, (uint32_t)rs->route_point_count);
    bw_u32(wr, (uint32_t)rs->route_count);
    for (int32_t i = 0; i < rs->route_point_count; ++i) {
        const shoal_waypoint_t* p = &rs->route_points[i];
        for (int k = 0; k < 3; ++k) bw_f32(wr, p->position[k]);
        for (int k = 0; k < 3; ++k) bw_f32(wr, p->direction[k]);
        bw_f32(wr, p->speed);
    }
    for (int32_t i = 0; i < rs->route_count; ++i) {
        bw_i32(wr, rs->routes[i][0]);
        bw_i32(wr, rs->routes[i][1]);
    }
}

static int dseek_load(world_t* w, byte_reader_t* rd)
{
    route_set_t* rs = routes_of(w);
    uint32_t points = br_u32(rd), routes = br_u32(rd);
    if (!br_count(rd, points, 28, INT32_MAX / 64, "route points")) return 0;
    if (!br_count(rd, routes, 8, points, "routes")) return 0;
    if (points > 0) {
        rs->route_points = mem_alloc(&w->alloc, (size_t)points * sizeof *rs->route_points);
        if (!rs->route_points) return br_fail(rd, "out of memory for %u route points", points);
        rs->route_point_capacity = (int32_t)points;
    }
    if (routes > 0) {
        rs->routes = mem_alloc(&w->alloc, (size_t)routes * sizeof *rs->routes);
        if (!rs->routes) return br_fail(rd, "out of memory for %u routes", routes);
        rs->route_capacity = (int32_t)routes;
    }
    for (uint32_t i = 0; i < points; ++i) {
        shoal_waypoint_t* p = &rs->route_points[i];
        for (int k = 0; k < 3; ++k) p->position[k] = br_f32(rd);
        for (int k = 0; k < 3; ++k) p->direction[k] = br_f32(rd);
        p->speed = br_f32(rd);
        for (int k = 0; k < 3; ++k)
            if (!br_finite(rd, p->position[k], "position of route point", (int32_t)i) ||
                !br_finite(rd, p->direction[k], "direction of route point", (int32_t)i))
                return 0;
        if (!br_finite(rd, p->speed, "speed of route point", (int32_t)i)) return 0;
        if (p->speed < 0.0f) return br_fail(rd, "route point %u: speed %g is negative", i, (double)p->speed);
    }
    for (uint32_t i = 0; i < routes; ++i) {
        int32_t start = br_i32(rd), n = br_i32(rd);
        if (rd->failed) return 0;
        if (start < 0 || n < 1 || (int64_t)start + n > (int64_t)points)
            return br_fail(rd, "route %u: points [%d, %d + %d) are not within the %u route points", i,
                           (int)start, (int)start, (int)n, points);
        rs->routes[i][0] = start;
        rs->routes[i][1] = n;
    }
    if (rd->failed) return 0;
    rs->route_point_count = (int32_t)points;
    rs->route_count = (int32_t)routes;
    return 1;
}

/* The route cursor, which no agent definition carries. */
static int dseek_check_loaded(const world_t* w, byte_reader_t* rd)
{
    const route_set_t* rs = routes_of(w);
    const table_t* ds = &w->comps[COMP_DSEEK].table;
    for (int32_t r = 0; r < ds->count; ++r) {
        int32_t route = COMP_I(w, COMP_DSEEK, DS_ROUTE)[r], index = COMP_I(w, COMP_DSEEK, DS_INDEX)[r];
        int32_t len = route >= 0 && route < rs->route_count ? rs->routes[route][1] : 0;
        if (index < 0 || index > len)
            return br_fail(rd, "directed-seek row %d: waypoint index %d is outside [0, %d]", (int)r,
                           (int)index, (int)len);
    }
    return 1;
}

static const uint8_t dseek_flags[DS_COUNT_] = {[DS_ROUTE] = COLUMN_BITS, [DS_INDEX] = COLUMN_BITS};

const module_t dseek_module = {
    .name = "dseek",
    .column_count = DS_COUNT_,
    .column_flags = dseek_flags,
    .init = dseek_init,
    .release = dseek_release,
    .needs = dseek_needs,
    .validate = dseek_validate,
    .write_row = dseek_write_row,
    .read_row = dseek_read_row,
    .hash = dseek_hash,
    .mark = dseek_mark,
    .rollback = dseek_rollback,
    .snapshot_tag = BYTE_TAG('R', 'O', 'U', 'T'),
    .save = dseek_save,
    .load = dseek_load,
    .check_loaded = dseek_check_loaded,
};

static void edit_dseek(shoal_agent_def_t* d, const void* a) { d->dseek = *(const shoal_dseek_t*)a; }

/* DSEEK on (weight 1 unless it has one) with these parameters. */
static void edit_dseek_on(shoal_agent_def_t* d, const void* a)
{
    if (d->weights[SHOAL_BEHAVIOR_DSEEK] == 0.0f) d->weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    d->dseek = *(const shoal_dseek_t*)a;
}

static void dseek_on_def(shoal_agent_def_t* d, const shoal_dseek_t* ds) { edit_dseek_on(d, ds); }

shoal_status_t shoal_agent_set_dseek(shoal_world_t* w, shoal_agent_t id, const shoal_dseek_t* ds)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!ds) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_set_dseek: dseek is NULL");
    return agent_edit(w, id, "agent_set_dseek", edit_dseek, ds, AGENT_EDIT_COMPONENTS);
}

shoal_status_t shoal_agent_route_index(const shoal_world_t* w, shoal_agent_t id, int32_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_route_index: out_index is NULL");
    int32_t slot = world_resolve(w, id, 1, "agent_route_index");
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    if (w->slots[slot].state == SLOT_PENDING)
        return world_failc(w, SHOAL_ERR_BUSY,
                           "agent_route_index: the agent was added during this step; it is live once the step ends");
    int32_t r = component_row(&w->comps[COMP_DSEEK], (uint32_t)slot);
    if (r < 0)
        return world_failc(w, SHOAL_ERR_NOT_FOUND, "agent_route_index: the agent has no directed seek");
    *out = COMP_I(w, COMP_DSEEK, DS_INDEX)[r];
    return SHOAL_OK;
}

/* ---- formation arrival -------------------------------------------------- */

/* A member's directed-seek parameters: its slot, anchor.position + R offset. */
static shoal_dseek_t formation_slot(const shoal_agent_def_t* def, const shoal_waypoint_t* anchor,
                                    const float offset[3], vec3 fx, vec3 fy, vec3 fz)
{
    vec3 o = vec3_add(vec3_add(vec3_scale(fx, offset[0]), vec3_scale(fy, offset[1])), vec3_scale(fz, offset[2]));
    shoal_dseek_t ds = def->dseek;
    ds.route = -1;
    ds.waypoint = *anchor;
    ds.waypoint.position[0] += o.x;
    ds.waypoint.position[1] += o.y;
    ds.waypoint.position[2] += o.z;
    return ds;
}

shoal_status_t shoal_formation_arrive(shoal_world_t* w, const shoal_agent_t* members, int32_t count,
                                      const float (*offsets)[3], const shoal_waypoint_t* anchor)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!members || !offsets || !anchor || count < 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "formation_arrive: needs members, offsets, an anchor and count >= 1");
    /* Formation frame: x along the anchor direction, y to its left, z up
     * (in 3D, completed from the world's z; a vertical direction uses +y). */
    vec3 fx = {anchor->direction[0], anchor->direction[1], w->dims == 3 ? anchor->direction[2] : 0.0f};
    float n = vec3_length(fx);
    if (!(fabsf(n - 1.0f) <= 1e-3f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "formation_arrive: anchor.direction must be a unit vector, has length %g",
                          (double)n);
    fx = vec3_scale(fx, 1.0f / n);
    vec3 up = {0.0f, 0.0f, 1.0f};
    vec3 fy = vec3_cross(up, fx);
    if (vec3_length(fy) < 1e-6f) fy = (vec3){0.0f, 1.0f, 0.0f};
    fy = vec3_normalize(fy);
    vec3 fz = vec3_cross(fx, fy);
    /* Validate everything first, then change: all or nothing. Each
     * member's new definition is checked as a whole (a huge offset can make
     * a slot that is not finite). */
    for (int32_t i = 0; i < count; ++i) {
        if (world_resolve(w, members[i], 1, "formation_arrive") < 0) return SHOAL_ERR_STALE_HANDLE;
        for (int c = 0; c < 3; ++c)
            if (!isfinite(offsets[i][c]))
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "formation_arrive: offsets[%d][%d] must be finite", (int)i, c);
        shoal_agent_def_t def;
        shoal_status_t st = shoal_agent_get_def(w, members[i], &def);
        if (st != SHOAL_OK) return st;
        shoal_dseek_t ds = formation_slot(&def, anchor, offsets[i], fx, fy, fz);
        dseek_on_def(&def, &ds);
        char where[48];
        snprintf(where, sizeof where, "formation_arrive: member %d", (int)i);
        st = agent_validate_def(w, &def, where);
        if (st != SHOAL_OK) return st;
    }
    /* Turning DSEEK on is the only change that needs memory: had for every
     * member first, so that running out cannot stop half-way. */
    shoal_agent_def_t dseek_on = shoal_agent_default_def();
    dseek_on.weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    if (!world_reserve_def_rows(w, &dseek_on, count))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "formation_arrive: out of memory for %d members",
                          (int)count);
    for (int32_t i = 0; i < count; ++i) {
        shoal_agent_def_t def;
        shoal_status_t st = shoal_agent_get_def(w, members[i], &def);
        shoal_dseek_t ds = formation_slot(&def, anchor, offsets[i], fx, fy, fz);
        if (st == SHOAL_OK) st = agent_edit(w, members[i], "formation_arrive", edit_dseek_on, &ds, AGENT_EDIT_COMPONENTS);
        if (st != SHOAL_OK) return st; /* checked and reserved above: cannot happen */
    }
    return SHOAL_OK;
}

/* ---- the stateless public function -------------------------------------- */

static shoal_status_t steer_fail(shoal_error_t* err, const char* message)
{
    if (err) {
        err->status = SHOAL_ERR_INVALID_ARGUMENT;
        snprintf(err->message, sizeof err->message, "dseek_steer: %s", message);
    }
    return SHOAL_ERR_INVALID_ARGUMENT;
}

shoal_status_t shoal_dseek_steer_2d(const float position[2], const float heading[2],
                                    const float waypoint[2], const float direction[2], float r_min,
                                    float out_steer[2], shoal_error_t* err)
{
    if (!position || !heading || !waypoint || !direction || !out_steer)
        return steer_fail(err, "every pointer argument is required");
    dseek_params prm = dseek_default_params(r_min);
    dseek_result2 res;
    dseek_status st = dseek_steer_2d((vec2){position[0], position[1]}, (vec2){heading[0], heading[1]},
                                     (vec2){waypoint[0], waypoint[1]}, (vec2){direction[0], direction[1]},
                                     &prm, &res);
    out_steer[0] = res.steer.x;
    out_steer[1] = res.steer.y;
    if (st != DSEEK_OK) return steer_fail(err, res.message);
    if (err) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    return SHOAL_OK;
}

shoal_status_t shoal_dseek_steer_3d(const float position[3], const float heading[3],
                                    const float waypoint[3], const float direction[3], float r_min,
                                    float out_steer[3], shoal_error_t* err)
{
    if (!position || !heading || !waypoint || !direction || !out_steer)
        return steer_fail(err, "every pointer argument is required");
    dseek_params prm = dseek_default_params(r_min);
    dseek_result3 res;
    dseek_status st = dseek_steer_3d((vec3){position[0], position[1], position[2]},
                                     (vec3){heading[0], heading[1], heading[2]},
                                     (vec3){waypoint[0], waypoint[1], waypoint[2]},
                                     (vec3){direction[0], direction[1], direction[2]}, &prm, &res);
    out_steer[0] = res.steer.x;
    out_steer[1] = res.steer.y;
    out_steer[2] = res.steer.z;
    if (st != DSEEK_OK) return steer_fail(err, res.message);
    if (err) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    return SHOAL_OK;
}
