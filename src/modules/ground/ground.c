/* Ground vehicles as agents: two systems over COMP_GROUND (their rows in
 * the step table, step.c).
 *
 * | stage     | system         | reads                                   | writes |
 * |-----------|----------------|-----------------------------------------|--------|
 * | decide    | path_follow    | pos, GR yaw/v, paths, follower columns, a navmesh vehicle's path | GR inputs, follower state, outputs, metrics; pose on a teleport |
 * | integrate | ground_vehicle | pos, GR state and inputs, terrain, obstacles (after integrate, before wrap) | pos, heading/quat, vel, omega, force and torque := 0; GR state |
 *
 * Ground rows and the core dynamics: control and integrate leave the agents
 * with this component out (their `without` in the step table), and
 * ground_vehicle writes the whole pose, the velocities and a zero
 * actuation from the vehicle state. The yaw lives in GR_YAW (a 3D
 * quaternion would not give it back bit for bit). Between steps an agent's
 * velocity is the vehicle's world velocity, which other agents (pursuit,
 * neighbors) see.
 *
 * Paths from the navmesh: a vehicle with the NAVMESH weight follows the
 * path navmesh_paths (sense stage) keeps in its navmesh row (its first
 * NMD_ROUTE_POINTS points), built into a pf_path_t on the stack each step
 * (no allocation); a path planned in this step (its age 0) is taken as
 * shoal_world_set_path's are, its progress found over the whole of it, but
 * the stuck window keeps the progress made in it so far: a vehicle off
 * its path plans again every step and would otherwise never be judged
 * stuck. With none yet (the budget) it is held, braking.
 *
 * Obstacles: the world's bounding spheres become vertical cylinders
 * (x, y, radius), copied once per step into a list that the parallel pass
 * only reads. */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "modules/ground/ground.h"
#include "modules/navmesh/navmesh.h"
#include "modules/obstacles/obstacles.h"
#include "modules/agent.h"

typedef struct ground_ctx {
    world_t* w;
    float dt;
    agent_view_t a;
    ground_view_t g;
    const ground_path_t* paths; /* the world's paths (none added inside a step) */
    terrain_t terrain;
    const gv_obstacle_t* obstacles;
    int32_t obstacle_count;
    const uint32_t* slot;       /* the ground rows' slots */
    const component_t* navmesh; /* the navmesh component, NULL when empty */
} ground_ctx_t;

/* ---- a path from the navmesh ---------------------------------------------- */

int32_t ground_navmesh_row(const world_t* w, int32_t r)
{
    const component_t* nm = &w->comps[COMP_NAVMESH];
    return nm->table.count > 0 ? component_row(nm, COMP_U(w, COMP_GROUND, GR_SLOT)[r]) : -1;
}

int ground_navmesh_path(const world_t* w, int32_t nr, pf_path_t* out, vec3* points, float* s)
{
    const int32_t n = COMP_I(w, COMP_NAVMESH, NM_ROUTE_COUNT)[nr];
    if (n < 2 || n > NMD_ROUTE_POINTS || !(COMP_I(w, COMP_NAVMESH, NM_FLAGS)[nr] & NMF_PLANNED)) return 0;
    float xyz[3 * NMD_ROUTE_POINTS];
    for (int32_t k = 0; k < n; ++k) {
        xyz[3 * k] = COMP_F(w, COMP_NAVMESH, NM_ROUTE + 2 * k)[nr];
        xyz[3 * k + 1] = COMP_F(w, COMP_NAVMESH, NM_ROUTE + 2 * k + 1)[nr];
        xyz[3 * k + 2] = 0.0f;
    }
    /* The corridor of the inside-corridor metric: the distance at which
     * the navmesh plans again. */
    char msg[96];
    return pf_path_build(out, points, s, xyz, n, navmesh_of(w)->params.off_path_distance, msg,
                         (int)sizeof msg);
}

/* A new path under a vehicle: its progress found over the whole path, the
 * progress made in the stuck window so far kept (a vehicle that replans
 * often is still judged over the whole window), completion cleared. */
static void take_new_path(const ground_view_t* g, int32_t r, const pf_path_t* path, vec3 pos)
{
    float s = pf_path_project(path, pos, 0.0f, path->length, NULL);
    g->window_s[r] = s - (g->s[r] - g->window_s[r]);
    g->s[r] = s;
    g->completed[r] = 0;
}

/* ---- the agent's pose ---------------------------------------------------- */

void ground_write_agent_pose(const agent_view_t* a, int three, const terrain_t* terrain, int32_t row, float x,
                             float y, float yaw, float v, float v_lat, float yaw_rate)
{
    float c = cosf(yaw), s = sinf(yaw);
    vec2 grad;
    float z = terrain_height(terrain, x, y, &grad);
    /* v and v_lat are speeds along the ground (ground_vehicle.h, (V5)): on
     * slopes sigma_f = grad . forward and sigma_l = grad . left they cover
     * v / sqrt(1 + sigma_f^2) and v_lat / sqrt(1 + sigma_l^2) horizontally,
     * and climb grad . (horizontal velocity). */
    float sf = grad.x * c + grad.y * s;
    float sl = -grad.x * s + grad.y * c;
    float hf = v / sqrtf(1.0f + sf * sf), hl = v_lat / sqrtf(1.0f + sl * sl);
    float vx = c * hf - s * hl;
    float vy = s * hf + c * hl;
    a->px[row] = x;
    a->py[row] = y;
    a->vx[row] = vx;
    a->vy[row] = vy;
    a->heading[row] = yaw;
    a->oz[row] = yaw_rate;
    /* The vehicle model moves the agent: no force or torque acts on it
     * (control and integrate leave its row out). */
    a->fx[row] = 0.0f;
    a->fy[row] = 0.0f;
    a->tz[row] = 0.0f;
    if (!three) return;
    a->fz[row] = 0.0f;
    a->tx[row] = 0.0f;
    a->ty[row] = 0.0f;
    /* Attitude on the ground: pitch is the slope along the heading,
     * atan(sigma_f); the roll then turns the body's left axis into the
     * ground plane: tan(roll) = sigma_l / sqrt(1 + sigma_f^2) (the left
     * side higher rolls the left side up, a positive roll). */
    quat q = quat_from_yaw_pitch_roll(yaw, atanf(sf), atan2f(sl, sqrtf(1.0f + sf * sf)));
    a->pz[row] = z;
    a->vz[row] = grad.x * vx + grad.y * vy;
    a->qw[row] = q.w;
    a->qx[row] = q.x;
    a->qy[row] = q.y;
    a->qz[row] = q.z;
    a->ox[row] = 0.0f;
    a->oy[row] = 0.0f;
}

/* ---- decide: path_follow --------------------------------------------------- */

static void follow_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const ground_ctx_t* ctx = (const ground_ctx_t*)vctx;
    const int three = ctx->w->dims == 3;
    const agent_view_t* a = &ctx->a;
    const ground_view_t* g = &ctx->g;
    const float dt = ctx->dt;
    for (int32_t r = begin; r < end; ++r) {
        int32_t path_id = g->path[r];
        int32_t i = g->agent_row[r];
        const int32_t nr = ctx->navmesh ? component_row(ctx->navmesh, ctx->slot[r]) : -1;
        pf_path_t route;
        vec3 route_points[NMD_ROUTE_POINTS];
        float route_s[NMD_ROUTE_POINTS];
        const pf_path_t* path;
        if (nr >= 0) { /* its path from the navmesh (navmesh_paths, sense stage) */
            if (!ground_navmesh_path(ctx->w, nr, &route, route_points, route_s)) {
                /* none yet, or at its goal already: held */
                pf_command_t hold;
                pf_hold(g->v[r], &hold);
                g->throttle[r] = hold.throttle;
                g->steering[r] = hold.steering;
                g->target_speed[r] = 0.0f;
                g->target_x[r] = a->px[i];
                g->target_y[r] = a->py[i];
                g->target_z[r] = three ? a->pz[i] : 0.0f;
                g->cte[r] = 0.0f;
                g->inside[r] = 0;
                g->stuck[r] = 0;
                continue;
            }
            path = &route;
            if (COMP_I(ctx->w, COMP_NAVMESH, NM_AGE)[nr] == 0) /* planned in this step */
                take_new_path(g, r, path, (vec3){a->px[i], a->py[i], 0.0f});
        } else if (path_id < 0) { /* manual driving */
            g->throttle[r] = g->drive_throttle[r];
            g->steering[r] = g->drive_steering[r];
            continue;
        } else {
            path = &ctx->paths[path_id].path;
        }
        pf_params_t prm = ground_view_pf_params(g, r);
        pf_state_t st;
        st.s = g->s[r];
        st.pi.integral = g->pi_integral[r];
        st.window_time = g->window_time[r];
        st.window_s = g->window_s[r];
        st.recover_time = g->recover_time[r];
        st.recover_steer = g->recover_steer[r];
        st.failed_recoveries = g->failed[r];
        st.stuck_events = g->stuck_events[r];
        st.teleports = g->teleports[r];
        st.completed = g->completed[r];
        int was_completed = st.completed;
        pf_vehicle_t veh;
        veh.pos = (vec3){a->px[i], a->py[i], three ? a->pz[i] : 0.0f};
        veh.yaw = g->yaw[r];
        veh.v = g->v[r];
        veh.wheelbase = g->wheelbase[r];
        veh.max_steer = g->max_steer[r];
        veh.max_yaw_rate = g->max_yaw_rate[r];
        veh.traction = g->traction[r];
        pf_command_t cmd;
        pf_follow(&prm, path, &st, &veh, dt, &cmd);

        g->s[r] = st.s;
        g->pi_integral[r] = st.pi.integral;
        g->window_time[r] = st.window_time;
        g->window_s[r] = st.window_s;
        g->recover_time[r] = st.recover_time;
        g->recover_steer[r] = st.recover_steer;
        g->failed[r] = st.failed_recoveries;
        g->stuck_events[r] = st.stuck_events;
        g->teleports[r] = st.teleports;
        g->completed[r] = st.completed;
        g->throttle[r] = cmd.throttle;
        g->steering[r] = cmd.steering;
        g->target_speed[r] = cmd.target_speed;
        g->target_x[r] = cmd.target_point.x;
        g->target_y[r] = cmd.target_point.y;
        g->target_z[r] = cmd.target_point.z;
        g->cte[r] = cmd.cte;
        g->inside[r] = cmd.inside_corridor;
        g->stuck[r] = cmd.stuck;
        if (!was_completed) {
            g->frames[r]++;
            g->drive_time[r] += dt;
            g->cte_sum[r] += cmd.cte;
            g->inside_frames[r] += cmd.inside_corridor != 0;
            g->stuck_frames[r] += cmd.stuck != 0;
        }
        if (cmd.teleport) {
            /* The stuck manager's last resort: the vehicle is put back on
             * the path at rest (its own row only, so no other agent's
             * reads race with it). */
            float yaw = angle_wrap(cmd.teleport_yaw);
            g->yaw[r] = yaw;
            g->v[r] = 0.0f;
            g->v_lat[r] = 0.0f;
            g->steer[r] = 0.0f;
            g->yaw_rate[r] = 0.0f;
            ground_write_agent_pose(a, three, &ctx->terrain, i, cmd.teleport_pos.x, cmd.teleport_pos.y, yaw,
                                    0.0f, 0.0f, 0.0f);
        }
    }
}

/* The number of ground rows; when there are any, *c is ready for a pass
 * over them (without obstacles). */
static int32_t fill_ctx(world_t* w, float dt, ground_ctx_t* c)
{
    int32_t count = w->comps[COMP_GROUND].table.count;
    if (count == 0) return 0;
    memset(c, 0, sizeof *c);
    c->w = w;
    c->dt = dt;
    c->a = agent_view(w);
    c->g = ground_view(w);
    c->paths = ground_data(w) ? ground_data(w)->paths : NULL;
    c->terrain = ground_terrain(w);
    c->slot = COMP_U(w, COMP_GROUND, GR_SLOT);
    c->navmesh = w->comps[COMP_NAVMESH].table.count > 0 ? &w->comps[COMP_NAVMESH] : NULL;
    return count;
}

int64_t path_follow_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    ground_ctx_t c;
    int32_t count = fill_ctx(w, dt, &c);
    if (count == 0) return 0;
    /* Cost per vehicle varies (Algorithm 1, the projection): claimed blocks. */
    par_for(w, count, 64, PAR_CLAIMED, follow_range, &c);
    return count;
}

/* ---- integrate: ground_vehicle --------------------------------------------- */

static void vehicle_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const ground_ctx_t* ctx = (const ground_ctx_t*)vctx;
    const int three = ctx->w->dims == 3;
    const agent_view_t* a = &ctx->a;
    const ground_view_t* g = &ctx->g;
    for (int32_t r = begin; r < end; ++r) {
        int32_t i = g->agent_row[r];
        gv_params_t p = ground_view_gv_params(g, r);
        gv_state_t s;
        float x0 = a->px[i], y0 = a->py[i];
        s.pos = (vec3){x0, y0, 0.0f};
        s.yaw = g->yaw[r];
        s.v = g->v[r];
        s.v_lat = g->v_lat[r];
        s.steer = g->steer[r];
        s.yaw_rate = g->yaw_rate[r];
        s.contact = g->contact[r];
        gv_step(&p, &ctx->terrain, ctx->obstacles, ctx->obstacle_count, &s, g->throttle[r], g->steering[r],
                ctx->dt);
        g->yaw[r] = s.yaw;
        g->v[r] = s.v;
        g->v_lat[r] = s.v_lat;
        g->steer[r] = s.steer;
        g->yaw_rate[r] = s.yaw_rate;
        g->contact[r] = s.contact;
        const int following =
            g->path[r] >= 0 || (ctx->navmesh && component_row(ctx->navmesh, ctx->slot[r]) >= 0);
        if (following && !g->completed[r]) {
            /* Distance over the ground: in 3D with the climb between the
             * terrain heights under the two positions. */
            float dx = s.pos.x - x0, dy = s.pos.y - y0, dz = 0.0f;
            if (three) dz = s.pos.z - terrain_height(&ctx->terrain, x0, y0, NULL);
            g->distance[r] += sqrtf(dx * dx + dy * dy + dz * dz);
        }
        ground_write_agent_pose(a, three, &ctx->terrain, i, s.pos.x, s.pos.y, s.yaw, s.v, s.v_lat,
                                s.yaw_rate);
    }
}

/* The world's obstacles as cylinders, into the ground data's list. */
static int gather_obstacles(world_t* w, ground_world_t* g)
{
    if (g->obstacle_capacity < obstacles_of(w)->obstacle_high) {
        int32_t cap = obstacles_of(w)->obstacle_capacity;
        gv_obstacle_t* fresh = (gv_obstacle_t*)mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
        if (!fresh) return 0;
        mem_free(&w->alloc, g->obstacles, (size_t)g->obstacle_capacity * sizeof *fresh);
        g->obstacles = fresh;
        g->obstacle_capacity = cap;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < obstacles_of(w)->obstacle_high; ++i) {
        if (obstacles_of(w)->obstacles[i][3] < 0.0f) continue; /* a free id */
        g->obstacles[n].x = obstacles_of(w)->obstacles[i][0];
        g->obstacles[n].y = obstacles_of(w)->obstacles[i][1];
        g->obstacles[n].radius = obstacles_of(w)->obstacles[i][3];
        n++;
    }
    g->obstacle_count = n;
    return 1;
}

int ground_reserve_step(world_t* w, int adding)
{
    if (obstacles_of(w)->obstacle_count == 0 || (!adding && w->comps[COMP_GROUND].table.count == 0)) return 1;
    ground_world_t* g = ground_world_get(w);
    if (g && g->obstacle_capacity >= obstacles_of(w)->obstacle_high) return 1;
    if (g) {
        int32_t cap = obstacles_of(w)->obstacle_capacity;
        gv_obstacle_t* fresh = (gv_obstacle_t*)mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
        if (fresh) {
            mem_free(&w->alloc, g->obstacles, (size_t)g->obstacle_capacity * sizeof *fresh);
            g->obstacles = fresh;
            g->obstacle_capacity = cap;
            return 1;
        }
    }
    world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for the ground vehicles' obstacle list",
               adding ? "agent_add" : "world_step");
    return 0;
}

int64_t ground_vehicle_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    ground_ctx_t c;
    int32_t count = fill_ctx(w, dt, &c);
    if (count == 0) return 0;
    if (obstacles_of(w)->obstacle_count > 0) {
        ground_world_t* g = ground_world_get(w);
        if (!g || !gather_obstacles(w, g)) {
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "ground_vehicle: out of memory for the obstacle list");
            return -(int64_t)SHOAL_ERR_OUT_OF_MEMORY;
        }
        c.obstacles = g->obstacles;
        c.obstacle_count = g->obstacle_count;
    }
    par_for(w, count, 256, PAR_STATIC, vehicle_range, &c);
    return count;
}
