/* The controller: command variables (V_d, theta_d) to force and torque
 * within the vehicle's limits (seed 003, "Basic vehicle dynamics").
 *
 * The behaviors' desired velocity V gives V_d = min(|V|, V_max) and the
 * desired direction. Speed: a proportional law on the body-frame velocity
 * error toward (V_fwd, 0[, 0]), so one force both drives along the heading
 * and cancels side slip (the grip of wheels, a keel or thrusters), clipped to
 * |F| <= F_max. V_fwd = V_d max(0, cos(heading error)): a vehicle slows while
 * it turns toward a direction behind it instead of driving a wide circle.
 * Heading: a PD law tau = I (K_h e - K_d omega), clipped to |tau| <= tau_max.
 * In 3D the heading error e is the rotation vector from the current attitude
 * to the one with the desired yaw and pitch and no roll.
 *
 * Gains are capped at 1/dt so that a large step cannot overshoot the
 * commanded velocity (explicit Euler is unstable for gain * dt > 2). */
#include <math.h>

#include "ecs/parallel.h"
#include "simd/vec.h"
#include "systems/systems.h"

typedef struct control_ctx {
    world_t* w;
    float dt;
} control_ctx;

static float clampf(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

static void control_range_2d(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const control_ctx* c = (const control_ctx*)vctx;
    world_t* w = c->w;
    const float inv_dt = 1.0f / c->dt;
    const float* vx = AGENT_F(w, AC_VEL_X);
    const float* vy = AGENT_F(w, AC_VEL_Y);
    const float* heading = AGENT_F(w, AC_HEADING);
    const float* omega = AGENT_F(w, AC_OMEGA_Z);
    const float* dx = AGENT_F(w, AC_DESIRED_X);
    const float* dy = AGENT_F(w, AC_DESIRED_Y);
    const float* mass = AGENT_F(w, AC_MASS);
    const float* inertia = AGENT_F(w, AC_INERTIA);
    const float* fmax = AGENT_F(w, AC_MAX_FORCE);
    const float* tmax = AGENT_F(w, AC_MAX_TORQUE);
    const float* vmax = AGENT_F(w, AC_MAX_SPEED);
    const float* kv = AGENT_F(w, AC_SPEED_GAIN);
    const float* kh = AGENT_F(w, AC_HEADING_GAIN);
    const float* kd = AGENT_F(w, AC_TURN_DAMPING);
    float* fx = AGENT_F(w, AC_FORCE_X);
    float* fy = AGENT_F(w, AC_FORCE_Y);
    float* tz = AGENT_F(w, AC_TORQUE_Z);

    for (int32_t i = begin; i < end; ++i) {
        float vd = sqrtf(dx[i] * dx[i] + dy[i] * dy[i]);
        float cs = cosf(heading[i]), sn = sinf(heading[i]);
        float err = 0.0f, fwd = 0.0f;
        if (vd > STEER_HOLD_SPEED) {
            /* Heading error from the desired direction in body axes: the
             * seed's atan(e_y / e_x), with cos(err) as the forward part. */
            float ex = (cs * dx[i] + sn * dy[i]) / vd;
            float ey = (cs * dy[i] - sn * dx[i]) / vd;
            err = atan2f(ey, ex);
            fwd = fminf(vd, vmax[i]) * fmaxf(0.0f, ex);
        }
        float u = cs * vx[i] + sn * vy[i];  /* body forward */
        float v = -sn * vx[i] + cs * vy[i]; /* body left */
        float g = mass[i] * fminf(kv[i], inv_dt);
        float fbx = g * (fwd - u), fby = g * (0.0f - v);
        float fn = sqrtf(fbx * fbx + fby * fby);
        if (fn > fmax[i]) {
            float k = fmax[i] / fn;
            fbx *= k;
            fby *= k;
        }
        fx[i] = cs * fbx - sn * fby; /* R(z, theta) F_B */
        fy[i] = sn * fbx + cs * fby;
        float tau = inertia[i] * (kh[i] * err - fminf(kd[i], inv_dt) * omega[i]);
        tz[i] = clampf(tau, -tmax[i], tmax[i]);
    }
}

static void control_range_3d(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const control_ctx* c = (const control_ctx*)vctx;
    world_t* w = c->w;
    const float inv_dt = 1.0f / c->dt;
    float* fx = AGENT_F(w, AC_FORCE_X);
    float* fy = AGENT_F(w, AC_FORCE_Y);
    float* fz = AGENT_F(w, AC_FORCE_Z);
    float* tx = AGENT_F(w, AC_TORQUE_X);
    float* ty = AGENT_F(w, AC_TORQUE_Y);
    float* tz = AGENT_F(w, AC_TORQUE_Z);

    for (int32_t i = begin; i < end; ++i) {
        quat q = {AGENT_F(w, AC_QW)[i], AGENT_F(w, AC_QX)[i], AGENT_F(w, AC_QY)[i],
                  AGENT_F(w, AC_QZ)[i]};
        vec3 vel = {AGENT_F(w, AC_VEL_X)[i], AGENT_F(w, AC_VEL_Y)[i], AGENT_F(w, AC_VEL_Z)[i]};
        vec3 omega = {AGENT_F(w, AC_OMEGA_X)[i], AGENT_F(w, AC_OMEGA_Y)[i], AGENT_F(w, AC_OMEGA_Z)[i]};
        vec3 desired = {AGENT_F(w, AC_DESIRED_X)[i], AGENT_F(w, AC_DESIRED_Y)[i],
                        AGENT_F(w, AC_DESIRED_Z)[i]};
        float mass = AGENT_F(w, AC_MASS)[i], inertia = AGENT_F(w, AC_INERTIA)[i];
        float vmax = AGENT_F(w, AC_MAX_SPEED)[i];
        float vd = vec3_length(desired);
        vec3 rot = {0.0f, 0.0f, 0.0f};
        float fwd = 0.0f;
        if (vd > STEER_HOLD_SPEED) {
            vec3 d = vec3_scale(desired, 1.0f / vd);
            float yaw_d = atan2f(d.y, d.x);
            float pitch_d = asinf(clampf(d.z, -1.0f, 1.0f));
            quat qd = quat_from_yaw_pitch_roll(yaw_d, pitch_d, 0.0f);
            vec3 axis;
            float angle = quat_to_axis_angle(quat_mul(qd, quat_conj(q)), &axis);
            rot = vec3_scale(axis, angle); /* world-frame rotation vector */
            fwd = fminf(vd, vmax) * fmaxf(0.0f, vec3_dot(quat_forward(q), d));
        }
        vec3 vb = quat_unrotate(q, vel);
        float g = mass * fminf(AGENT_F(w, AC_SPEED_GAIN)[i], inv_dt);
        vec3 fb = {g * (fwd - vb.x), g * -vb.y, g * -vb.z};
        fb = vec3_clamp_length(fb, AGENT_F(w, AC_MAX_FORCE)[i]);
        vec3 f = quat_rotate(q, fb);
        float kh = AGENT_F(w, AC_HEADING_GAIN)[i];
        float kd = fminf(AGENT_F(w, AC_TURN_DAMPING)[i], inv_dt);
        vec3 tau = vec3_scale(vec3_sub(vec3_scale(rot, kh), vec3_scale(omega, kd)), inertia);
        tau = vec3_clamp_length(tau, AGENT_F(w, AC_MAX_TORQUE)[i]);
        fx[i] = f.x;
        fy[i] = f.y;
        fz[i] = f.z;
        tx[i] = tau.x;
        ty[i] = tau.y;
        tz[i] = tau.z;
    }
}

int64_t control_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    control_ctx c = {w, dt};
    par_for(w, w->agents.count, 1024, PAR_STATIC, w->dims == 3 ? control_range_3d : control_range_2d,
            &c);
    return w->agents.count;
}
