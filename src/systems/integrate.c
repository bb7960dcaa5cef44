/* Integration: the only writer of positions, velocities and orientations.
 *
 * Semi-implicit Euler on m dV/dt = F and I d(omega)/dt = tau: velocity first,
 * clamped to V_max, then position with the new velocity; angular velocity
 * clamped to the max turn rate, then heading (2D) or the quaternion (3D).
 * Clamping after each update is what guarantees the limits hold every step,
 * whatever the controller asked for. */
#include <math.h>

#include "ecs/parallel.h"
#include "simd/vec.h"
#include "systems/systems.h"

typedef struct integrate_ctx {
    world_t* w;
    float dt;
} integrate_ctx;

static void integrate_range_2d(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const integrate_ctx* c = (const integrate_ctx*)vctx;
    world_t* w = c->w;
    const float dt = c->dt;
    float* px = AGENT_F(w, AC_POS_X);
    float* py = AGENT_F(w, AC_POS_Y);
    float* vx = AGENT_F(w, AC_VEL_X);
    float* vy = AGENT_F(w, AC_VEL_Y);
    float* heading = AGENT_F(w, AC_HEADING);
    float* omega = AGENT_F(w, AC_OMEGA_Z);
    const float* fx = AGENT_F(w, AC_FORCE_X);
    const float* fy = AGENT_F(w, AC_FORCE_Y);
    const float* tz = AGENT_F(w, AC_TORQUE_Z);
    const float* mass = AGENT_F(w, AC_MASS);
    const float* inertia = AGENT_F(w, AC_INERTIA);
    const float* vmax = AGENT_F(w, AC_MAX_SPEED);
    const float* wmax = AGENT_F(w, AC_MAX_TURN_RATE);

    for (int32_t i = begin; i < end; ++i) {
        float nvx = vx[i] + fx[i] / mass[i] * dt;
        float nvy = vy[i] + fy[i] / mass[i] * dt;
        float s2 = nvx * nvx + nvy * nvy;
        if (s2 > vmax[i] * vmax[i]) {
            float k = vmax[i] / sqrtf(s2);
            nvx *= k;
            nvy *= k;
        }
        vx[i] = nvx;
        vy[i] = nvy;
        px[i] += nvx * dt;
        py[i] += nvy * dt;
        float om = omega[i] + tz[i] / inertia[i] * dt;
        om = om > wmax[i] ? wmax[i] : om < -wmax[i] ? -wmax[i] : om;
        omega[i] = om;
        heading[i] = angle_wrap(heading[i] + om * dt);
    }
}

static void integrate_range_3d(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const integrate_ctx* c = (const integrate_ctx*)vctx;
    world_t* w = c->w;
    const float dt = c->dt;
    for (int32_t i = begin; i < end; ++i) {
        float inv_m = 1.0f / AGENT_F(w, AC_MASS)[i];
        float inv_i = 1.0f / AGENT_F(w, AC_INERTIA)[i];
        vec3 v = {AGENT_F(w, AC_VEL_X)[i] + AGENT_F(w, AC_FORCE_X)[i] * inv_m * dt,
                  AGENT_F(w, AC_VEL_Y)[i] + AGENT_F(w, AC_FORCE_Y)[i] * inv_m * dt,
                  AGENT_F(w, AC_VEL_Z)[i] + AGENT_F(w, AC_FORCE_Z)[i] * inv_m * dt};
        v = vec3_clamp_length(v, AGENT_F(w, AC_MAX_SPEED)[i]);
        AGENT_F(w, AC_VEL_X)[i] = v.x;
        AGENT_F(w, AC_VEL_Y)[i] = v.y;
        AGENT_F(w, AC_VEL_Z)[i] = v.z;
        AGENT_F(w, AC_POS_X)[i] += v.x * dt;
        AGENT_F(w, AC_POS_Y)[i] += v.y * dt;
        AGENT_F(w, AC_POS_Z)[i] += v.z * dt;
        vec3 om = {AGENT_F(w, AC_OMEGA_X)[i] + AGENT_F(w, AC_TORQUE_X)[i] * inv_i * dt,
                   AGENT_F(w, AC_OMEGA_Y)[i] + AGENT_F(w, AC_TORQUE_Y)[i] * inv_i * dt,
                   AGENT_F(w, AC_OMEGA_Z)[i] + AGENT_F(w, AC_TORQUE_Z)[i] * inv_i * dt};
        om = vec3_clamp_length(om, AGENT_F(w, AC_MAX_TURN_RATE)[i]);
        AGENT_F(w, AC_OMEGA_X)[i] = om.x;
        AGENT_F(w, AC_OMEGA_Y)[i] = om.y;
        AGENT_F(w, AC_OMEGA_Z)[i] = om.z;
        quat q = {AGENT_F(w, AC_QW)[i], AGENT_F(w, AC_QX)[i], AGENT_F(w, AC_QY)[i],
                  AGENT_F(w, AC_QZ)[i]};
        q = quat_integrate(q, om, dt);
        AGENT_F(w, AC_QW)[i] = q.w;
        AGENT_F(w, AC_QX)[i] = q.x;
        AGENT_F(w, AC_QY)[i] = q.y;
        AGENT_F(w, AC_QZ)[i] = q.z;
        AGENT_F(w, AC_HEADING)[i] = quat_yaw(q);
    }
}

int64_t integrate_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    integrate_ctx c = {w, dt};
    par_for(w, w->agents.count, 1024, PAR_STATIC,
            w->dims == 3 ? integrate_range_3d : integrate_range_2d, &c);
    return w->agents.count;
}
