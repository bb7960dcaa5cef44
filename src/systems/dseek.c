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

typedef struct dseek_ctx {
    world_t* w;
} dseek_ctx;

/* The waypoint component row r is heading for; 0 when its route is done. */
static int current_waypoint(const world_t* w, int32_t r, shoal_waypoint_t* out)
{
    int32_t route = COMP_I(w, COMP_DSEEK, DS_ROUTE)[r];
    if (route < 0) {
        for (int c = 0; c < 3; ++c) {
            out->position[c] = COMP_F(w, COMP_DSEEK, DS_WP_X + c)[r];
            out->direction[c] = COMP_F(w, COMP_DSEEK, DS_DIR_X + c)[r];
        }
        out->speed = COMP_F(w, COMP_DSEEK, DS_SPEED)[r];
        return 1;
    }
    int32_t index = COMP_I(w, COMP_DSEEK, DS_INDEX)[r];
    if (index >= w->routes[route][1]) return 0;
    *out = w->route_points[w->routes[route][0] + index];
    return 1;
}

static void dseek_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    world_t* w = ((dseek_ctx*)vctx)->w;
    const int three = w->dims == 3;
    const int32_t* agent_row = TABLE_COL(&w->comps[COMP_DSEEK].table, int32_t, COMP_ROW);
    for (int32_t r = begin; r < end; ++r) {
        int32_t i = agent_row[r];
        shoal_waypoint_t wp;
        if (!current_waypoint(w, r, &wp)) continue; /* route finished */
        float vmax = AGENT_F(w, AC_MAX_SPEED)[i];
        float wmax = AGENT_F(w, AC_MAX_TURN_RATE)[i];
        vec3 p = agent_position(w, i);
        vec3 v = agent_velocity(w, i);
        vec3 target = {wp.position[0], wp.position[1], three ? wp.position[2] : 0.0f};
        float v_w = wp.speed > 0.0f ? fminf(wp.speed, vmax) : vmax;
        float speed = vec3_length(v);
        float radius = COMP_F(w, COMP_DSEEK, DS_R_MIN)[r];
        if (radius <= 0.0f) {
            float turn_speed = fmaxf(fmaxf(speed, v_w), DSEEK_MIN_SPEED_FRACTION * vmax);
            float margin = three ? DSEEK_RADIUS_MARGIN_3D : DSEEK_RADIUS_MARGIN;
            radius = wmax > 0.0f ? margin * turn_speed / wmax : 1e6f;
        }
        if (!(radius > 0.0f)) radius = 1e-3f;
        float reach = COMP_F(w, COMP_DSEEK, DS_REACH)[r];
        if (reach <= 0.0f) reach = 0.5f * radius;
        float dist = vec3_distance(p, target);
        int32_t route = COMP_I(w, COMP_DSEEK, DS_ROUTE)[r];
        if (route >= 0 && dist <= reach) { /* this system owns DS_INDEX */
            COMP_I(w, COMP_DSEEK, DS_INDEX)[r]++;
            if (!current_waypoint(w, r, &wp)) continue;
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
            fast_sincosf(AGENT_F(w, AC_HEADING)[i], &sn, &cs);
            vec2 dw = vec2_normalize((vec2){wp.direction[0], wp.direction[1]});
            dseek_result2 res;
            dseek_steer_2d((vec2){p.x, p.y}, (vec2){cs, sn}, (vec2){target.x, target.y}, dw, &prm, &res);
            steer = (vec3){res.steer.x, res.steer.y, 0.0f};
        }
        /* Brake toward the waypoint speed as arrival does. */
        float cmd = braking_speed(vmax, dist, v_w, vmax, AGENT_F(w, AC_MAX_FORCE)[i], AGENT_F(w, AC_MASS)[i]);
        float k = COMP_F(w, COMP_DSEEK, DS_WEIGHT)[r] * cmd;
        AGENT_F(w, AC_DESIRED_X)[i] += k * steer.x;
        AGENT_F(w, AC_DESIRED_Y)[i] += k * steer.y;
        if (three) AGENT_F(w, AC_DESIRED_Z)[i] += k * steer.z;
    }
}

int64_t dseek_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    int32_t count = w->comps[COMP_DSEEK].table.count;
    dseek_ctx c = {w};
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
            if (!isfinite(p->position[c]) || !isfinite(p->direction[c]))
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "add_route: waypoint %d: position and direction must be finite", (int)i);
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
    if (w->route_point_count > INT32_MAX / 2 - count)
        return world_fail(w, SHOAL_ERR_CAPACITY, "add_route: too many waypoints");
    /* Grow both arrays before changing anything. */
    int32_t need = w->route_point_count + count;
    if (need > w->route_point_capacity) {
        int32_t cap = w->route_point_capacity * 2 > need ? w->route_point_capacity * 2 : need;
        shoal_waypoint_t* fresh = mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
        if (!fresh) return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "add_route: out of memory");
        if (w->route_point_count) memcpy(fresh, w->route_points, (size_t)w->route_point_count * sizeof *fresh);
        mem_free(&w->alloc, w->route_points, (size_t)w->route_point_capacity * sizeof *fresh);
        w->route_points = fresh;
        w->route_point_capacity = cap;
    }
    if (w->route_count == w->route_capacity) {
        int32_t cap = w->route_capacity ? w->route_capacity * 2 : 8;
        int32_t(*fresh)[2] = mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
        if (!fresh) return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "add_route: out of memory");
        if (w->route_count) memcpy(fresh, w->routes, (size_t)w->route_count * sizeof *fresh);
        mem_free(&w->alloc, w->routes, (size_t)w->route_capacity * sizeof *fresh);
        w->routes = fresh;
        w->route_capacity = cap;
    }
    memcpy(w->route_points + w->route_point_count, points, (size_t)count * sizeof *points);
    w->routes[w->route_count][0] = w->route_point_count;
    w->routes[w->route_count][1] = count;
    w->route_point_count += count;
    if (out_route) *out_route = w->route_count;
    w->route_count++;
    return SHOAL_OK;
}

int32_t shoal_world_route_count(const shoal_world_t* w) { return w ? w->route_count : 0; }

void world_truncate_routes(world_t* w, int32_t count)
{
    if (count < 0 || count >= w->route_count) return;
    w->route_point_count = w->routes[count][0];
    w->route_count = count;
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
        world_dseek_on_def(&def, &ds);
        char where[48];
        snprintf(where, sizeof where, "formation_arrive: member %d", (int)i);
        st = agent_validate_def(w, &def, where);
        if (st != SHOAL_OK) return st;
    }
    /* Turning DSEEK on is the only change that needs memory: had for every
     * member first, so that running out cannot stop half-way. */
    if (!world_reserve_behavior_rows(w, SHOAL_BEHAVIOR_DSEEK, count))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "formation_arrive: out of memory for %d members",
                          (int)count);
    for (int32_t i = 0; i < count; ++i) {
        shoal_agent_def_t def;
        shoal_status_t st = shoal_agent_get_def(w, members[i], &def);
        shoal_dseek_t ds = formation_slot(&def, anchor, offsets[i], fx, fy, fz);
        if (st == SHOAL_OK) st = world_set_dseek_on(w, members[i], &ds, "formation_arrive");
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
