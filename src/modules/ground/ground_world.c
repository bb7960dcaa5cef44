/* Ground vehicles in the world: paths and terrain (world-owned, like
 * routes), the COMP_GROUND component's columns, and the public driving API.
 * The systems that move the vehicles are in ground.c.
 *
 * Decisions:
 * - Paths are never removed, so a path id in a definition stays valid; a
 *   path can be replaced between frames (shoal_world_set_path), and the
 *   vehicles on it then project themselves onto the new one over its whole
 *   length (their follower would otherwise search near the old progress).
 * - In 2D worlds a path's z is stored as 0 and the vehicle's as 0, so the
 *   follower works in the plane; the terrain's slopes still act on speed.
 * - A vehicle's yaw lives in the component (GR_YAW). The agent's heading
 *   and quaternion are written from it; they are outputs for a ground
 *   vehicle, so setting them from outside (teleport) also sets GR_YAW. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modules/ground/ground.h"
#include "modules/navmesh/navmesh.h"
#include "ecs/columns.h"

/* ---- world data ---------------------------------------------------------- */

ground_world_t* ground_world_get(world_t* w)
{
    if (!ground_data(w))
        w->module_data[MOD_GROUND] = (ground_world_t*)mem_calloc(&w->alloc, sizeof(ground_world_t));
    return ground_data(w);
}

static void free_path(world_t* w, ground_path_t* p)
{
    mem_free(&w->alloc, p->points, (size_t)p->path.count * sizeof(vec3));
    mem_free(&w->alloc, p->s, (size_t)p->path.count * sizeof(float));
    memset(p, 0, sizeof *p);
}

void ground_release(world_t* w)
{
    ground_world_t* g = ground_data(w);
    if (!g) return;
    for (int32_t i = 0; i < g->path_count; ++i) free_path(w, &g->paths[i]);
    mem_free(&w->alloc, g->paths, (size_t)g->path_capacity * sizeof *g->paths);
    if (g->heights)
        mem_free(&w->alloc, g->heights, (size_t)g->terrain.nx * (size_t)g->terrain.ny * sizeof(float));
    mem_free(&w->alloc, g->obstacles, (size_t)g->obstacle_capacity * sizeof *g->obstacles);
    mem_free(&w->alloc, g, sizeof *g);
    w->module_data[MOD_GROUND] = NULL;
}

terrain_t ground_terrain(const world_t* w)
{
    terrain_t flat;
    memset(&flat, 0, sizeof flat);
    return ground_data(w) ? ground_data(w)->terrain : flat;
}

int32_t ground_path_count(const world_t* w) { return ground_data(w) ? ground_data(w)->path_count : 0; }
int32_t shoal_world_path_count(const shoal_world_t* w) { return w ? ground_path_count(w) : 0; }

/* ---- presets and defaults ------------------------------------------------ */

static shoal_ground_vehicle_t vehicle_from_gv(const gv_params_t* p)
{
    shoal_ground_vehicle_t v = {
        .mass = p->mass,
        .wheelbase = p->wheelbase,
        .max_steer = p->max_steer,
        .steer_rate = p->steer_rate,
        .max_yaw_rate = p->max_yaw_rate,
        .engine_force = p->engine_force,
        .reverse_force = p->reverse_force,
        .brake_force = p->brake_force,
        .drag = p->drag,
        .rolling = p->rolling,
        .traction = p->traction,
        .max_speed = p->max_speed,
        .max_reverse_speed = p->max_reverse_speed,
        .radius = p->radius,
    };
    return v;
}

static gv_params_t gv_from_vehicle(const shoal_ground_vehicle_t* v)
{
    gv_params_t p;
    memset(&p, 0, sizeof p);
    p.name = NULL;
    p.mass = v->mass;
    p.wheelbase = v->wheelbase;
    p.max_steer = v->max_steer;
    p.steer_rate = v->steer_rate;
    p.max_yaw_rate = v->max_yaw_rate;
    p.engine_force = v->engine_force;
    p.reverse_force = v->reverse_force;
    p.brake_force = v->brake_force;
    p.drag = v->drag;
    p.rolling = v->rolling;
    p.traction = v->traction;
    p.max_speed = v->max_speed;
    p.max_reverse_speed = v->max_reverse_speed;
    p.radius = v->radius;
    return p;
}

static shoal_path_follow_t follow_from_pf(const pf_params_t* p, int32_t path)
{
    shoal_path_follow_t f;
    memset(&f, 0, sizeof f);
    f.follower = p->kind == PF_BASELINE ? SHOAL_FOLLOWER_BASELINE : SHOAL_FOLLOWER_PROPOSED;
    f.path = path;
    f.a_lat = p->a_lat;
    f.dh = p->dh;
    f.n = p->n;
    f.v_min = p->v_min;
    f.v_max = p->v_max;
    f.baseline_gain = p->baseline_gain;
    f.lookahead_min = p->lookahead_min;
    f.lookahead_time = p->lookahead_time;
    f.lookahead_max = p->lookahead_max;
    f.kp = p->kp;
    f.ki = p->ki;
    f.arrive_radius = p->arrive_radius;
    f.stuck_window = p->stuck_window;
    f.stuck_progress = p->stuck_progress;
    f.reverse_time = p->reverse_time;
    f.max_recoveries = p->max_recoveries;
    f.vehicle_limits = p->vehicle_limits;
    return f;
}

static pf_params_t pf_from_follow(const shoal_path_follow_t* f)
{
    pf_params_t p = pf_params_default(f->follower == SHOAL_FOLLOWER_BASELINE ? PF_BASELINE : PF_PROPOSED);
    p.a_lat = f->a_lat;
    p.dh = f->dh;
    p.n = f->n;
    p.v_min = f->v_min;
    p.v_max = f->v_max;
    p.baseline_gain = f->baseline_gain;
    p.lookahead_min = f->lookahead_min;
    p.lookahead_time = f->lookahead_time;
    p.lookahead_max = f->lookahead_max;
    p.kp = f->kp;
    p.ki = f->ki;
    p.arrive_radius = f->arrive_radius;
    p.stuck_window = f->stuck_window;
    p.stuck_progress = f->stuck_progress;
    p.reverse_time = f->reverse_time;
    p.max_recoveries = f->max_recoveries;
    p.vehicle_limits = f->vehicle_limits;
    return p;
}

shoal_path_follow_t shoal_path_follow_default(void)
{
    pf_params_t p = pf_params_default(PF_PROPOSED);
    return follow_from_pf(&p, -1);
}

shoal_status_t shoal_ground_vehicle_preset(const char* name, shoal_ground_vehicle_t* out, shoal_error_t* err)
{
    if (err) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    if (!out) {
        if (err) {
            err->status = SHOAL_ERR_INVALID_ARGUMENT;
            snprintf(err->message, sizeof err->message, "ground_vehicle_preset: out is NULL");
        }
        return SHOAL_ERR_INVALID_ARGUMENT;
    }
    const gv_params_t* p = gv_preset_find(name);
    if (!p) {
        if (err) {
            char names[128] = "";
            for (int i = 0; i < GV_PRESET_COUNT; ++i) {
                size_t used = strlen(names);
                snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", gv_preset(i)->name);
            }
            err->status = SHOAL_ERR_NOT_FOUND;
            snprintf(err->message, sizeof err->message,
                     "ground_vehicle_preset: no preset named '%s' (presets: %s)", name ? name : "(null)",
                     names);
        }
        return SHOAL_ERR_NOT_FOUND;
    }
    *out = vehicle_from_gv(p);
    return SHOAL_OK;
}

/* ---- validation ---------------------------------------------------------- */

shoal_status_t ground_validate(world_t* w, const shoal_ground_t* g, const char* where)
{
    if (g->enabled != 0 && g->enabled != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: ground.enabled must be 0 or 1, got %d", where,
                          (int)g->enabled);
    if (!g->enabled) return SHOAL_OK;
    char msg[256];
    gv_params_t gv = gv_from_vehicle(&g->vehicle);
    if (!gv_params_valid(&gv, msg, sizeof msg))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: ground.vehicle.%s", where, msg);
    const shoal_path_follow_t* f = &g->follow;
    if (f->follower != SHOAL_FOLLOWER_PROPOSED && f->follower != SHOAL_FOLLOWER_BASELINE)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: ground.follow.follower must be SHOAL_FOLLOWER_PROPOSED (0) or "
                          "SHOAL_FOLLOWER_BASELINE (1), got %d",
                          where, (int)f->follower);
    pf_params_t pf = pf_from_follow(f);
    if (!pf_params_valid(&pf, msg, sizeof msg))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: ground.follow.%s", where, msg);
    int32_t paths = ground_path_count(w);
    if (f->path < -1 || f->path >= paths)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: ground.follow.path must be -1 or a path of this world (%d paths), got %d",
                          where, (int)paths, (int)f->path);
    return SHOAL_OK;
}

/* ---- component rows ------------------------------------------------------ */

void ground_restart_run(world_t* w, int32_t r)
{
    static const int cols[] = {
        GR_S,          GR_PI_INTEGRAL,  GR_WINDOW_TIME, GR_WINDOW_S,      GR_RECOVER_TIME, GR_RECOVER_STEER,
        GR_FAILED,     GR_STUCK_EVENTS, GR_TELEPORTS,   GR_COMPLETED,     GR_TARGET_SPEED, GR_TARGET_X,
        GR_TARGET_Y,   GR_TARGET_Z,     GR_CTE,         GR_INSIDE,        GR_STUCK,        GR_FRAMES,
        GR_DRIVE_TIME, GR_DISTANCE,     GR_CTE_SUM,     GR_INSIDE_FRAMES, GR_STUCK_FRAMES};
    /* All-zero bits are 0.0f and 0 alike. */
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; ++k) COMP_U(w, COMP_GROUND, cols[k])[r] = 0;
}

/* The vehicle's position as the follower sees it: z = 0 in 2D, where paths
 * are planar too. */
static vec3 follower_position(const world_t* w, int32_t row)
{
    return (vec3){AGENT_F(w, AC_POS_X)[row], AGENT_F(w, AC_POS_Y)[row],
                  w->dims == 3 ? AGENT_F(w, AC_POS_Z)[row] : 0.0f};
}

void ground_refind_progress(world_t* w, int32_t r)
{
    int32_t path = COMP_I(w, COMP_GROUND, GR_PATH)[r];
    const int32_t nr = ground_navmesh_row(w, r);
    pf_path_t route;
    vec3 route_points[NMD_ROUTE_POINTS];
    float route_s[NMD_ROUTE_POINTS];
    const pf_path_t* p;
    if (nr >= 0) {
        if (!ground_navmesh_path(w, nr, &route, route_points, route_s)) return;
        p = &route;
    } else {
        if (path < 0 || path >= ground_path_count(w)) return;
        p = &ground_data(w)->paths[path].path;
    }
    int32_t row = COMP_I(w, COMP_GROUND, GR_ROW)[r];
    float s = pf_path_project(p, follower_position(w, row), 0.0f, p->length, NULL);
    COMP_F(w, COMP_GROUND, GR_S)[r] = s;
    COMP_F(w, COMP_GROUND, GR_WINDOW_S)[r] = s;
    COMP_F(w, COMP_GROUND, GR_WINDOW_TIME)[r] = 0.0f;
    COMP_I(w, COMP_GROUND, GR_COMPLETED)[r] = 0;
}

/* Forward and sideways speeds along the ground of a world velocity, for a
 * vehicle with yaw `yaw` at row `row` (the inverse of the projection in
 * ground_write_agent_pose: only the horizontal part counts); the forward
 * one clamped to the vehicle's governors. */
static void body_speeds(const world_t* w, int32_t r, int32_t row, float yaw, const float vel[3], float* v,
                        float* v_lat)
{
    terrain_t t = ground_terrain(w);
    vec2 grad;
    terrain_height(&t, AGENT_F(w, AC_POS_X)[row], AGENT_F(w, AC_POS_Y)[row], &grad);
    float c = cosf(yaw), s = sinf(yaw);
    float sf = grad.x * c + grad.y * s, sl = -grad.x * s + grad.y * c;
    float fwd = (c * vel[0] + s * vel[1]) * sqrtf(1.0f + sf * sf);
    float side = (-s * vel[0] + c * vel[1]) * sqrtf(1.0f + sl * sl);
    float vmax = COMP_F(w, COMP_GROUND, GR_MAX_SPEED)[r];
    float vrev = COMP_F(w, COMP_GROUND, GR_MAX_REVERSE_SPEED)[r];
    *v = fminf(fmaxf(fwd, -vrev), vmax);
    *v_lat = side;
}

/* The vehicle state from the agent's pose and a velocity, then the agent's
 * pose rewritten from it (on the ground, with the terrain's attitude). */
static void place_vehicle(world_t* w, int32_t r, float yaw, const float velocity[3])
{
    int32_t row = COMP_I(w, COMP_GROUND, GR_ROW)[r];
    float v, v_lat;
    yaw = angle_wrap(yaw);
    body_speeds(w, r, row, yaw, velocity, &v, &v_lat);
    COMP_F(w, COMP_GROUND, GR_YAW)[r] = yaw;
    COMP_F(w, COMP_GROUND, GR_V)[r] = v;
    COMP_F(w, COMP_GROUND, GR_V_LAT)[r] = v_lat;
    COMP_F(w, COMP_GROUND, GR_YAW_RATE)[r] = 0.0f;
    COMP_I(w, COMP_GROUND, GR_CONTACT)[r] = 0;
    terrain_t t = ground_terrain(w);
    agent_view_t a = agent_view(w);
    ground_write_agent_pose(&a, w->dims == 3, &t, row, a.px[row], a.py[row], yaw, v, v_lat, 0.0f);
}

float ground_radius_max(const world_t* w)
{
    const component_t* c = &w->comps[COMP_GROUND];
    const float* radius = TABLE_COL(&c->table, float, GR_RADIUS);
    float r = 0.0f;
    for (int32_t k = 0; k < c->table.count; ++k) r = radius[k] > r ? radius[k] : r;
    return r;
}

void ground_after_teleport(world_t* w, int32_t r, const float velocity[3])
{
    int32_t row = COMP_I(w, COMP_GROUND, GR_ROW)[r];
    place_vehicle(w, r, AGENT_F(w, AC_HEADING)[row], velocity);
    ground_refind_progress(w, r);
}

/* ---- terrain ------------------------------------------------------------- */

shoal_status_t shoal_world_set_terrain(shoal_world_t* w, const shoal_terrain_t* t)
{
    static const char* where = "world_set_terrain";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (!t || t->nx == 0) {
        ground_world_t* g = ground_data(w);
        if (g && g->heights) {
            mem_free(&w->alloc, g->heights, (size_t)g->terrain.nx * (size_t)g->terrain.ny * sizeof(float));
            g->heights = NULL;
            memset(&g->terrain, 0, sizeof g->terrain);
        }
        return SHOAL_OK;
    }
    if (t->nx < 2 || t->ny < 2)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: nx and ny must both be >= 2 (or nx = 0 for flat ground), got %d x %d", where,
                          (int)t->nx, (int)t->ny);
    if ((int64_t)t->nx * t->ny > INT32_MAX / (int64_t)sizeof(float))
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: %d x %d samples is too many", where, (int)t->nx,
                          (int)t->ny);
    if (!isfinite(t->cell) || !(t->cell > 0.0f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: cell must be finite and > 0 m, got %g", where,
                          (double)t->cell);
    for (int k = 0; k < 2; ++k)
        if (!isfinite(t->origin[k]))
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: origin[%d] must be finite, got %g", where,
                              k, (double)t->origin[k]);
    if (!t->heights)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: heights is NULL with nx = %d", where,
                          (int)t->nx);
    size_t n = (size_t)t->nx * (size_t)t->ny;
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(t->heights[i]))
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: heights[%zu] (i = %zu, j = %zu) must be finite, got %g", where, i,
                              i % (size_t)t->nx, i / (size_t)t->nx, (double)t->heights[i]);
    ground_world_t* g = ground_world_get(w);
    float* copy = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    if (!g || !copy) {
        mem_free(&w->alloc, copy, n * sizeof(float));
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu heights", where, n);
    }
    memcpy(copy, t->heights, n * sizeof(float));
    if (g->heights)
        mem_free(&w->alloc, g->heights, (size_t)g->terrain.nx * (size_t)g->terrain.ny * sizeof(float));
    g->heights = copy;
    g->terrain.nx = t->nx;
    g->terrain.ny = t->ny;
    g->terrain.origin_x = t->origin[0];
    g->terrain.origin_y = t->origin[1];
    g->terrain.cell = t->cell;
    g->terrain.heights = copy;
    return SHOAL_OK;
}

/* ---- paths --------------------------------------------------------------- */

/* Build a path into freshly allocated arrays (z dropped in 2D). On failure
 * records the error and changes nothing. */
static shoal_status_t build_path(world_t* w, const char* where, const float* xyz, int32_t count,
                                 float half_width, ground_path_t* out)
{
    if (!xyz && count > 0) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: xyz is NULL", where);
    if (count < 2) {
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          count <= 0 ? "%s: the path is empty: a path needs at least 2 waypoints, got %d"
                                     : "%s: the path has one waypoint: a path needs at least 2, got %d",
                          where, (int)count);
    }
    if (count > INT32_MAX / (int32_t)(3 * sizeof(float)))
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: too many waypoints (%d)", where, (int)count);
    size_t n = (size_t)count;
    vec3* points = (vec3*)mem_alloc(&w->alloc, n * sizeof(vec3));
    float* s = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    /* The planar copy of a 2D world's waypoints lives in `s` for the
     * moment: pf_path_build reads xyz, then writes s. */
    float* flat = w->dims == 2 ? (float*)mem_alloc(&w->alloc, 3 * n * sizeof(float)) : NULL;
    if (!points || !s || (w->dims == 2 && !flat)) {
        mem_free(&w->alloc, points, n * sizeof(vec3));
        mem_free(&w->alloc, s, n * sizeof(float));
        mem_free(&w->alloc, flat, 3 * n * sizeof(float));
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for %d waypoints", where,
                          (int)count);
    }
    const float* src = xyz;
    if (flat) {
        for (size_t i = 0; i < n; ++i) {
            flat[3 * i] = xyz[3 * i];
            flat[3 * i + 1] = xyz[3 * i + 1];
            flat[3 * i + 2] = 0.0f;
        }
        src = flat;
    }
    char msg[256];
    pf_path_t path;
    int ok = pf_path_build(&path, points, s, src, count, half_width, msg, sizeof msg);
    mem_free(&w->alloc, flat, 3 * n * sizeof(float));
    if (!ok) {
        mem_free(&w->alloc, points, n * sizeof(vec3));
        mem_free(&w->alloc, s, n * sizeof(float));
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s", where, msg);
    }
    out->points = points;
    out->s = s;
    out->path = path;
    return SHOAL_OK;
}

shoal_status_t shoal_world_add_path(shoal_world_t* w, const float* xyz, int32_t count, float half_width,
                                    int32_t* out_id)
{
    static const char* where = "world_add_path";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (out_id) *out_id = -1;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    ground_path_t fresh;
    shoal_status_t st = build_path(w, where, xyz, count, half_width, &fresh);
    if (st != SHOAL_OK) return st;
    ground_world_t* g = ground_world_get(w);
    if (g && g->path_count == g->path_capacity) {
        int32_t cap = g->path_capacity ? g->path_capacity * 2 : 8;
        ground_path_t* grown = (ground_path_t*)mem_alloc(&w->alloc, (size_t)cap * sizeof *grown);
        if (grown) {
            if (g->path_count) memcpy(grown, g->paths, (size_t)g->path_count * sizeof *grown);
            mem_free(&w->alloc, g->paths, (size_t)g->path_capacity * sizeof *grown);
            g->paths = grown;
            g->path_capacity = cap;
        }
    }
    if (!g || g->path_count == g->path_capacity) {
        free_path(w, &fresh);
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    }
    g->paths[g->path_count] = fresh;
    if (out_id) *out_id = g->path_count;
    g->path_count++;
    return SHOAL_OK;
}

shoal_status_t shoal_world_set_path(shoal_world_t* w, int32_t id, const float* xyz, int32_t count,
                                    float half_width)
{
    static const char* where = "world_set_path";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (id < 0 || id >= ground_path_count(w))
        return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: no path with id %d (%d paths)", where, (int)id,
                          (int)ground_path_count(w));
    ground_path_t fresh;
    shoal_status_t st = build_path(w, where, xyz, count, half_width, &fresh);
    if (st != SHOAL_OK) return st;
    ground_world_t* g = ground_data(w);
    free_path(w, &g->paths[id]);
    g->paths[id] = fresh;
    const table_t* t = &w->comps[COMP_GROUND].table;
    for (int32_t r = 0; r < t->count; ++r)
        if (COMP_I(w, COMP_GROUND, GR_PATH)[r] == id) ground_refind_progress(w, r);
    return SHOAL_OK;
}

/* ---- driving and status -------------------------------------------------- */

/* The component row of a live ground vehicle, or -1 with the error. */
static int32_t ground_row(const world_t* w, shoal_agent_t id, const char* where, shoal_status_t* st)
{
    return world_component_row(w, id, COMP_GROUND, "a ground vehicle", "ground", where, st);
}

shoal_status_t shoal_agent_set_drive(shoal_world_t* w, shoal_agent_t id, float throttle, float steering)
{
    static const char* where = "agent_set_drive";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    shoal_status_t st;
    int32_t r = ground_row(w, id, where, &st);
    if (r < 0) return st;
    if (!isfinite(throttle) || !isfinite(steering))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: throttle and steering must be finite, got %g and %g", where, (double)throttle,
                          (double)steering);
    COMP_F(w, COMP_GROUND, GR_DRIVE_THROTTLE)[r] = fminf(fmaxf(throttle, -1.0f), 1.0f);
    COMP_F(w, COMP_GROUND, GR_DRIVE_STEERING)[r] = fminf(fmaxf(steering, -1.0f), 1.0f);
    return SHOAL_OK;
}

shoal_status_t shoal_agent_get_ground(const shoal_world_t* w, shoal_agent_t id, shoal_ground_status_t* out)
{
    static const char* where = "agent_get_ground";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out_status is NULL", where);
    shoal_status_t st;
    int32_t r = ground_row(w, id, where, &st);
    if (r < 0) return st;
    const int k = COMP_GROUND;
    memset(out, 0, sizeof *out);
    out->throttle = COMP_F(w, k, GR_THROTTLE)[r];
    out->steering = COMP_F(w, k, GR_STEERING)[r];
    out->speed = COMP_F(w, k, GR_V)[r];
    out->lateral_speed = COMP_F(w, k, GR_V_LAT)[r];
    out->steer_angle = COMP_F(w, k, GR_STEER)[r];
    out->yaw_rate = COMP_F(w, k, GR_YAW_RATE)[r];
    out->contact = COMP_I(w, k, GR_CONTACT)[r];
    out->path = COMP_I(w, k, GR_PATH)[r];
    out->target_speed = COMP_F(w, k, GR_TARGET_SPEED)[r];
    out->target_point[0] = COMP_F(w, k, GR_TARGET_X)[r];
    out->target_point[1] = COMP_F(w, k, GR_TARGET_Y)[r];
    out->target_point[2] = COMP_F(w, k, GR_TARGET_Z)[r];
    out->path_s = COMP_F(w, k, GR_S)[r];
    out->cte = COMP_F(w, k, GR_CTE)[r];
    out->inside_corridor = COMP_I(w, k, GR_INSIDE)[r];
    out->stuck = COMP_I(w, k, GR_STUCK)[r];
    out->stuck_events = COMP_I(w, k, GR_STUCK_EVENTS)[r];
    out->teleports = COMP_I(w, k, GR_TELEPORTS)[r];
    out->completed = COMP_I(w, k, GR_COMPLETED)[r];
    out->frames = COMP_I(w, k, GR_FRAMES)[r];
    out->drive_time = COMP_F(w, k, GR_DRIVE_TIME)[r];
    out->distance = COMP_F(w, k, GR_DISTANCE)[r];
    out->cte_sum = COMP_F(w, k, GR_CTE_SUM)[r];
    out->inside_frames = COMP_I(w, k, GR_INSIDE_FRAMES)[r];
    out->stuck_frames = COMP_I(w, k, GR_STUCK_FRAMES)[r];
    return SHOAL_OK;
}

/* ---- state hash ---------------------------------------------------------- */

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

uint64_t ground_hash(const world_t* w, uint64_t h, uint64_t (*absorb)(uint64_t, uint64_t))
{
    const ground_world_t* g = ground_data(w);
    if (!g) return h;
    for (int32_t i = 0; i < g->path_count; ++i) {
        const pf_path_t* p = &g->paths[i].path;
        h = absorb(h, 0x9a7400000000ull | (uint64_t)(uint32_t)p->count);
        h = absorb(h, float_bits(p->half_width));
        for (int32_t k = 0; k < p->count; ++k) {
            h = absorb(h, ((uint64_t)float_bits(p->points[k].x) << 32) | float_bits(p->points[k].y));
            h = absorb(h, float_bits(p->points[k].z));
        }
    }
    if (g->heights) {
        const terrain_t* t = &g->terrain;
        h = absorb(h, 0x7e77000000000000ull | (uint32_t)t->nx);
        h = absorb(h, (uint32_t)t->ny);
        h = absorb(h, ((uint64_t)float_bits(t->origin_x) << 32) | float_bits(t->origin_y));
        h = absorb(h, float_bits(t->cell));
        size_t n = (size_t)t->nx * (size_t)t->ny;
        for (size_t i = 0; i < n; ++i) h = absorb(h, float_bits(t->heights[i]));
    }
    return h;
}

/* ---- the module ------------------------------------------------------------ */

/* Not a ground vehicle; when it becomes one, a car that follows with the
 * proposed follower. */
static void ground_defaults(shoal_agent_def_t* d)
{
    d->ground.enabled = 0;
    shoal_ground_vehicle_preset("car", &d->ground.vehicle, NULL);
    d->ground.follow = shoal_path_follow_default();
}

static int ground_needs(const shoal_agent_def_t* d) { return d->ground.enabled != 0; }

static shoal_status_t ground_validate_def(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    return ground_validate(w, &d->ground, where);
}

static int ground_reserve_add(world_t* w, const shoal_agent_def_t* d)
{
    return !d->ground.enabled || ground_reserve_step(w, 1);
}

static int ground_reserve_any(world_t* w) { return ground_reserve_step(w, 0); }

/* The parameters come from the definition; ground_validate checks them
 * (with gv_params_valid and pf_params_valid, the checks the standalone
 * vehicle and follower share). */
_Static_assert(sizeof(shoal_follower_t) == 4, "the follower is stored as the int32 it is");
#define GROUND_F32(nm, member)                                                                               \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_F32                                        \
    }
#define GROUND_I32(nm, member)                                                                               \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_I32, .flags = COLUMN_BITS                  \
    }
static const column_def_t ground_columns[GR_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [GR_MASS] = GROUND_F32("ground.vehicle.mass", ground.vehicle.mass),
    [GR_WHEELBASE] = GROUND_F32("ground.vehicle.wheelbase", ground.vehicle.wheelbase),
    [GR_MAX_STEER] = GROUND_F32("ground.vehicle.max_steer", ground.vehicle.max_steer),
    [GR_STEER_RATE] = GROUND_F32("ground.vehicle.steer_rate", ground.vehicle.steer_rate),
    [GR_MAX_YAW_RATE] = GROUND_F32("ground.vehicle.max_yaw_rate", ground.vehicle.max_yaw_rate),
    [GR_ENGINE_FORCE] = GROUND_F32("ground.vehicle.engine_force", ground.vehicle.engine_force),
    [GR_REVERSE_FORCE] = GROUND_F32("ground.vehicle.reverse_force", ground.vehicle.reverse_force),
    [GR_BRAKE_FORCE] = GROUND_F32("ground.vehicle.brake_force", ground.vehicle.brake_force),
    [GR_DRAG] = GROUND_F32("ground.vehicle.drag", ground.vehicle.drag),
    [GR_ROLLING] = GROUND_F32("ground.vehicle.rolling", ground.vehicle.rolling),
    [GR_TRACTION] = GROUND_F32("ground.vehicle.traction", ground.vehicle.traction),
    [GR_MAX_SPEED] = GROUND_F32("ground.vehicle.max_speed", ground.vehicle.max_speed),
    [GR_MAX_REVERSE_SPEED] = GROUND_F32("ground.vehicle.max_reverse_speed", ground.vehicle.max_reverse_speed),
    [GR_RADIUS] = GROUND_F32("ground.vehicle.radius", ground.vehicle.radius),
    [GR_YAW] = COLUMN_STATE_F32("ground.yaw"),
    [GR_V] = COLUMN_STATE_F32("ground.v"),
    [GR_V_LAT] = COLUMN_STATE_F32("ground.v_lat"),
    [GR_STEER] = COLUMN_STATE_F32("ground.steer"),
    [GR_YAW_RATE] = COLUMN_STATE_F32("ground.yaw_rate"),
    [GR_CONTACT] = COLUMN_STATE_I32("ground.contact"),
    [GR_DRIVE_THROTTLE] = COLUMN_STATE_F32("ground.drive_throttle"),
    [GR_DRIVE_STEERING] = COLUMN_STATE_F32("ground.drive_steering"),
    [GR_THROTTLE] = COLUMN_STATE_F32("ground.throttle"),
    [GR_STEERING] = COLUMN_STATE_F32("ground.steering"),
    [GR_FOLLOWER] = GROUND_I32("ground.follow.follower", ground.follow.follower),
    /* a new path restarts the run (ground_write_row) */
    [GR_PATH] = {.name = "ground.follow.path",
                 .field = COLUMN_FIELD(ground.follow.path),
                 .type = COLUMN_I32,
                 .flags = COLUMN_BITS | COLUMN_MODULE_WRITES},
    [GR_A_LAT] = GROUND_F32("ground.follow.a_lat", ground.follow.a_lat),
    [GR_DH] = GROUND_F32("ground.follow.dh", ground.follow.dh),
    [GR_N] = GROUND_I32("ground.follow.n", ground.follow.n),
    [GR_V_MIN] = GROUND_F32("ground.follow.v_min", ground.follow.v_min),
    [GR_V_MAX] = GROUND_F32("ground.follow.v_max", ground.follow.v_max),
    [GR_BASELINE_GAIN] = GROUND_F32("ground.follow.baseline_gain", ground.follow.baseline_gain),
    [GR_LOOKAHEAD_MIN] = GROUND_F32("ground.follow.lookahead_min", ground.follow.lookahead_min),
    [GR_LOOKAHEAD_TIME] = GROUND_F32("ground.follow.lookahead_time", ground.follow.lookahead_time),
    [GR_LOOKAHEAD_MAX] = GROUND_F32("ground.follow.lookahead_max", ground.follow.lookahead_max),
    [GR_KP] = GROUND_F32("ground.follow.kp", ground.follow.kp),
    [GR_KI] = GROUND_F32("ground.follow.ki", ground.follow.ki),
    [GR_ARRIVE_RADIUS] = GROUND_F32("ground.follow.arrive_radius", ground.follow.arrive_radius),
    [GR_STUCK_WINDOW] = GROUND_F32("ground.follow.stuck_window", ground.follow.stuck_window),
    [GR_STUCK_PROGRESS] = GROUND_F32("ground.follow.stuck_progress", ground.follow.stuck_progress),
    [GR_REVERSE_TIME] = GROUND_F32("ground.follow.reverse_time", ground.follow.reverse_time),
    [GR_MAX_RECOVERIES] = GROUND_I32("ground.follow.max_recoveries", ground.follow.max_recoveries),
    [GR_VEHICLE_LIMITS] = GROUND_I32("ground.follow.vehicle_limits", ground.follow.vehicle_limits),
    [GR_S] = COLUMN_STATE_F32("ground.s"),
    [GR_PI_INTEGRAL] = COLUMN_STATE_F32("ground.pi_integral"),
    [GR_WINDOW_TIME] = COLUMN_STATE_F32("ground.window_time"),
    [GR_WINDOW_S] = COLUMN_STATE_F32("ground.window_s"),
    [GR_RECOVER_TIME] = COLUMN_STATE_F32("ground.recover_time"),
    [GR_RECOVER_STEER] = COLUMN_STATE_F32("ground.recover_steer"),
    [GR_FAILED] = COLUMN_STATE_I32("ground.failed"),
    [GR_STUCK_EVENTS] = COLUMN_STATE_I32("ground.stuck_events"),
    [GR_TELEPORTS] = COLUMN_STATE_I32("ground.teleports"),
    [GR_COMPLETED] = COLUMN_STATE_I32("ground.completed"),
    [GR_TARGET_SPEED] = COLUMN_STATE_F32("ground.target_speed"),
    [GR_TARGET_X] = COLUMN_STATE_F32("ground.target_x"),
    [GR_TARGET_Y] = COLUMN_STATE_F32("ground.target_y"),
    [GR_TARGET_Z] = COLUMN_STATE_F32("ground.target_z"),
    [GR_CTE] = COLUMN_STATE_F32("ground.cte"),
    [GR_INSIDE] = COLUMN_STATE_I32("ground.inside"),
    [GR_STUCK] = COLUMN_STATE_I32("ground.stuck"),
    [GR_FRAMES] = COLUMN_STATE_I32("ground.frames"),
    [GR_DRIVE_TIME] = COLUMN_STATE_F32("ground.drive_time"),
    [GR_DISTANCE] = COLUMN_STATE_F32("ground.distance"),
    [GR_CTE_SUM] = COLUMN_STATE_F32("ground.cte_sum"),
    [GR_INSIDE_FRAMES] = COLUMN_STATE_I32("ground.inside_frames"),
    [GR_STUCK_FRAMES] = COLUMN_STATE_I32("ground.stuck_frames"),
};
#undef GROUND_F32
#undef GROUND_I32

/* After the pose: the table's columns, the path, and the motion state. A
 * fresh row is all zero: wheels straight, inputs released; its motion
 * starts from the definition's heading and velocity. A new path (or a
 * fresh row) restarts the run. */
static void ground_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                             int fresh)
{
    (void)slot;
    (void)forward;
    columns_write(w, COMP_GROUND, r, d, ground_columns, GR_COUNT_);
    int32_t path = d->ground.follow.path;
    int new_path = fresh || COMP_I(w, COMP_GROUND, GR_PATH)[r] != path;
    COMP_I(w, COMP_GROUND, GR_PATH)[r] = path;
    if (fresh) place_vehicle(w, r, d->heading, d->velocity);
    if (new_path) ground_restart_run(w, r);
}

static void ground_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_GROUND, r, d, ground_columns, GR_COUNT_);
    d->ground.enabled = 1;
}

const module_t ground_module = {
    .name = "ground",
    .flags = MODULE_MOVES_ITSELF,
    .column_count = GR_COUNT_,
    .columns = ground_columns,
    .release = ground_release,
    .defaults = ground_defaults,
    .needs = ground_needs,
    .validate = ground_validate_def,
    .reserve_add_in_step = ground_reserve_add,
    .reserve_step = ground_reserve_any,
    .write_row = ground_write_row,
    .read_row = ground_read_row,
    /* A ground vehicle takes its yaw and speeds from the new pose (its own
     * governors, not vehicle.max_speed, bound the speed). */
    .teleported = ground_after_teleport,
    .hash = ground_hash,
    .snapshot_tag = BYTE_TAG('G', 'R', 'N', 'D'),
    .save = ground_save,
    .load = ground_load,
};

static void edit_ground(shoal_agent_def_t* d, const void* a) { d->ground = *(const shoal_ground_t*)a; }
static void edit_path(shoal_agent_def_t* d, const void* a) { d->ground.follow.path = *(const int32_t*)a; }

shoal_status_t shoal_agent_set_ground(shoal_world_t* w, shoal_agent_t id, const shoal_ground_t* g)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!g) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_set_ground: ground is NULL");
    return agent_edit(w, id, "agent_set_ground", edit_ground, g, AGENT_EDIT_COMPONENT(COMP_GROUND));
}

shoal_status_t shoal_agent_set_path(shoal_world_t* w, shoal_agent_t id, int32_t path_id)
{
    static const char* where = "agent_set_path";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    shoal_agent_def_t def;
    shoal_status_t st = agent_read_def(w, id, &def, where);
    if (st != SHOAL_OK) return st;
    if (!def.ground.enabled)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: the agent is not a ground vehicle (its ground.enabled is 0)", where);
    st = agent_edit(w, id, where, edit_path, &path_id, AGENT_EDIT_COMPONENT(COMP_GROUND));
    if (st != SHOAL_OK) return st;
    /* Even the same path starts over (agent_edit restarts only a new one). */
    int32_t slot = (int32_t)id.index1 - 1;
    int32_t r = component_row(&w->comps[COMP_GROUND], (uint32_t)slot);
    if (w->slots[slot].state == SLOT_LIVE && r >= 0) ground_restart_run(w, r);
    return SHOAL_OK;
}
