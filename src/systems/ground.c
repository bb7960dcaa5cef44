/* Ground vehicles as agents: two systems over COMP_GROUND (their rows in
 * the step table, step.c).
 *
 * | stage     | system         | reads                                   | writes |
 * |-----------|----------------|-----------------------------------------|--------|
 * | decide    | path_follow    | pos, GR yaw/v, paths, follower columns  | GR inputs, follower state, outputs, metrics; pose on a teleport |
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
 * Obstacles: the world's bounding spheres become vertical cylinders
 * (x, y, radius), copied once per step into a list that the parallel pass
 * only reads. */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "systems/ground.h"
#include "systems/obstacles.h"
#include "systems/systems.h"

typedef struct ground_ctx {
    world_t* w;
    float dt;
    terrain_t terrain;
    const gv_obstacle_t* obstacles;
    int32_t obstacle_count;
} ground_ctx;

/* ---- the agent's pose ---------------------------------------------------- */

void ground_write_agent_pose(world_t* w, const terrain_t* terrain, int32_t row, float x, float y,
                             float yaw, float v, float v_lat, float yaw_rate)
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
    AGENT_F(w, AC_POS_X)[row] = x;
    AGENT_F(w, AC_POS_Y)[row] = y;
    AGENT_F(w, AC_VEL_X)[row] = vx;
    AGENT_F(w, AC_VEL_Y)[row] = vy;
    AGENT_F(w, AC_HEADING)[row] = yaw;
    AGENT_F(w, AC_OMEGA_Z)[row] = yaw_rate;
    /* The vehicle model moves the agent: no force or torque acts on it
     * (control and integrate leave its row out). */
    AGENT_F(w, AC_FORCE_X)[row] = 0.0f;
    AGENT_F(w, AC_FORCE_Y)[row] = 0.0f;
    AGENT_F(w, AC_TORQUE_Z)[row] = 0.0f;
    if (w->dims != 3) return;
    AGENT_F(w, AC_FORCE_Z)[row] = 0.0f;
    AGENT_F(w, AC_TORQUE_X)[row] = 0.0f;
    AGENT_F(w, AC_TORQUE_Y)[row] = 0.0f;
    /* Attitude on the ground: pitch is the slope along the heading,
     * atan(sigma_f); the roll then turns the body's left axis into the
     * ground plane: tan(roll) = sigma_l / sqrt(1 + sigma_f^2) (the left
     * side higher rolls the left side up, a positive roll). */
    quat q = quat_from_yaw_pitch_roll(yaw, atanf(sf), atan2f(sl, sqrtf(1.0f + sf * sf)));
    AGENT_F(w, AC_POS_Z)[row] = z;
    AGENT_F(w, AC_VEL_Z)[row] = grad.x * vx + grad.y * vy;
    AGENT_F(w, AC_QW)[row] = q.w;
    AGENT_F(w, AC_QX)[row] = q.x;
    AGENT_F(w, AC_QY)[row] = q.y;
    AGENT_F(w, AC_QZ)[row] = q.z;
    AGENT_F(w, AC_OMEGA_X)[row] = 0.0f;
    AGENT_F(w, AC_OMEGA_Y)[row] = 0.0f;
}

/* ---- decide: path_follow --------------------------------------------------- */

static void follow_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const ground_ctx* ctx = (const ground_ctx*)vctx;
    world_t* w = ctx->w;
    const int k = COMP_GROUND;
    const int three = w->dims == 3;
    const int32_t* agent_row = COMP_I(w, k, GR_ROW);
    for (int32_t r = begin; r < end; ++r) {
        int32_t path_id = COMP_I(w, k, GR_PATH)[r];
        if (path_id < 0) { /* manual driving */
            COMP_F(w, k, GR_THROTTLE)[r] = COMP_F(w, k, GR_DRIVE_THROTTLE)[r];
            COMP_F(w, k, GR_STEERING)[r] = COMP_F(w, k, GR_DRIVE_STEERING)[r];
            continue;
        }
        int32_t i = agent_row[r];
        const pf_path_t* path = &ground_data(w)->paths[path_id].path;
        pf_params_t prm = ground_pf_params(w, r);
        pf_state_t st;
        st.s = COMP_F(w, k, GR_S)[r];
        st.pi.integral = COMP_F(w, k, GR_PI_INTEGRAL)[r];
        st.window_time = COMP_F(w, k, GR_WINDOW_TIME)[r];
        st.window_s = COMP_F(w, k, GR_WINDOW_S)[r];
        st.recover_time = COMP_F(w, k, GR_RECOVER_TIME)[r];
        st.recover_steer = COMP_F(w, k, GR_RECOVER_STEER)[r];
        st.failed_recoveries = COMP_I(w, k, GR_FAILED)[r];
        st.stuck_events = COMP_I(w, k, GR_STUCK_EVENTS)[r];
        st.teleports = COMP_I(w, k, GR_TELEPORTS)[r];
        st.completed = COMP_I(w, k, GR_COMPLETED)[r];
        int was_completed = st.completed;
        pf_vehicle_t veh;
        veh.pos = (vec3){AGENT_F(w, AC_POS_X)[i], AGENT_F(w, AC_POS_Y)[i],
                         three ? AGENT_F(w, AC_POS_Z)[i] : 0.0f};
        veh.yaw = COMP_F(w, k, GR_YAW)[r];
        veh.v = COMP_F(w, k, GR_V)[r];
        veh.wheelbase = COMP_F(w, k, GR_WHEELBASE)[r];
        veh.max_steer = COMP_F(w, k, GR_MAX_STEER)[r];
        veh.max_yaw_rate = COMP_F(w, k, GR_MAX_YAW_RATE)[r];
        veh.traction = COMP_F(w, k, GR_TRACTION)[r];
        pf_command_t cmd;
        pf_follow(&prm, path, &st, &veh, ctx->dt, &cmd);

        COMP_F(w, k, GR_S)[r] = st.s;
        COMP_F(w, k, GR_PI_INTEGRAL)[r] = st.pi.integral;
        COMP_F(w, k, GR_WINDOW_TIME)[r] = st.window_time;
        COMP_F(w, k, GR_WINDOW_S)[r] = st.window_s;
        COMP_F(w, k, GR_RECOVER_TIME)[r] = st.recover_time;
        COMP_F(w, k, GR_RECOVER_STEER)[r] = st.recover_steer;
        COMP_I(w, k, GR_FAILED)[r] = st.failed_recoveries;
        COMP_I(w, k, GR_STUCK_EVENTS)[r] = st.stuck_events;
        COMP_I(w, k, GR_TELEPORTS)[r] = st.teleports;
        COMP_I(w, k, GR_COMPLETED)[r] = st.completed;
        COMP_F(w, k, GR_THROTTLE)[r] = cmd.throttle;
        COMP_F(w, k, GR_STEERING)[r] = cmd.steering;
        COMP_F(w, k, GR_TARGET_SPEED)[r] = cmd.target_speed;
        COMP_F(w, k, GR_TARGET_X)[r] = cmd.target_point.x;
        COMP_F(w, k, GR_TARGET_Y)[r] = cmd.target_point.y;
        COMP_F(w, k, GR_TARGET_Z)[r] = cmd.target_point.z;
        COMP_F(w, k, GR_CTE)[r] = cmd.cte;
        COMP_I(w, k, GR_INSIDE)[r] = cmd.inside_corridor;
        COMP_I(w, k, GR_STUCK)[r] = cmd.stuck;
        if (!was_completed) {
            COMP_I(w, k, GR_FRAMES)[r]++;
            COMP_F(w, k, GR_DRIVE_TIME)[r] += ctx->dt;
            COMP_F(w, k, GR_CTE_SUM)[r] += cmd.cte;
            COMP_I(w, k, GR_INSIDE_FRAMES)[r] += cmd.inside_corridor != 0;
            COMP_I(w, k, GR_STUCK_FRAMES)[r] += cmd.stuck != 0;
        }
        if (cmd.teleport) {
            /* The stuck manager's last resort: the vehicle is put back on
             * the path at rest (its own row only, so no other agent's
             * reads race with it). */
            float yaw = angle_wrap(cmd.teleport_yaw);
            COMP_F(w, k, GR_YAW)[r] = yaw;
            COMP_F(w, k, GR_V)[r] = 0.0f;
            COMP_F(w, k, GR_V_LAT)[r] = 0.0f;
            COMP_F(w, k, GR_STEER)[r] = 0.0f;
            COMP_F(w, k, GR_YAW_RATE)[r] = 0.0f;
            ground_write_agent_pose(w, &ctx->terrain, i, cmd.teleport_pos.x, cmd.teleport_pos.y, yaw,
                                    0.0f, 0.0f, 0.0f);
        }
    }
}

/* The number of ground rows; when there are any, *c is ready for a pass
 * over them (without obstacles). */
static int32_t fill_ctx(world_t* w, float dt, ground_ctx* c)
{
    int32_t count = w->comps[COMP_GROUND].table.count;
    if (count == 0) return 0;
    memset(c, 0, sizeof *c);
    c->w = w;
    c->dt = dt;
    c->terrain = ground_terrain(w);
    return count;
}

int64_t path_follow_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    ground_ctx c;
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
    const ground_ctx* ctx = (const ground_ctx*)vctx;
    world_t* w = ctx->w;
    const int k = COMP_GROUND;
    const int three = w->dims == 3;
    const int32_t* agent_row = COMP_I(w, k, GR_ROW);
    for (int32_t r = begin; r < end; ++r) {
        int32_t i = agent_row[r];
        gv_params_t p = ground_gv_params(w, r);
        gv_state_t s;
        float x0 = AGENT_F(w, AC_POS_X)[i], y0 = AGENT_F(w, AC_POS_Y)[i];
        s.pos = (vec3){x0, y0, 0.0f};
        s.yaw = COMP_F(w, k, GR_YAW)[r];
        s.v = COMP_F(w, k, GR_V)[r];
        s.v_lat = COMP_F(w, k, GR_V_LAT)[r];
        s.steer = COMP_F(w, k, GR_STEER)[r];
        s.yaw_rate = COMP_F(w, k, GR_YAW_RATE)[r];
        s.contact = COMP_I(w, k, GR_CONTACT)[r];
        gv_step(&p, &ctx->terrain, ctx->obstacles, ctx->obstacle_count, &s, COMP_F(w, k, GR_THROTTLE)[r],
                COMP_F(w, k, GR_STEERING)[r], ctx->dt);
        COMP_F(w, k, GR_YAW)[r] = s.yaw;
        COMP_F(w, k, GR_V)[r] = s.v;
        COMP_F(w, k, GR_V_LAT)[r] = s.v_lat;
        COMP_F(w, k, GR_STEER)[r] = s.steer;
        COMP_F(w, k, GR_YAW_RATE)[r] = s.yaw_rate;
        COMP_I(w, k, GR_CONTACT)[r] = s.contact;
        if (COMP_I(w, k, GR_PATH)[r] >= 0 && !COMP_I(w, k, GR_COMPLETED)[r]) {
            /* Distance over the ground: in 3D with the climb between the
             * terrain heights under the two positions. */
            float dx = s.pos.x - x0, dy = s.pos.y - y0, dz = 0.0f;
            if (three) dz = s.pos.z - terrain_height(&ctx->terrain, x0, y0, NULL);
            COMP_F(w, k, GR_DISTANCE)[r] += sqrtf(dx * dx + dy * dy + dz * dz);
        }
        ground_write_agent_pose(w, &ctx->terrain, i, s.pos.x, s.pos.y, s.yaw, s.v, s.v_lat, s.yaw_rate);
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
    ground_ctx c;
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
