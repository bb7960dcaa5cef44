/* Seek, flee, arrival and departure (seed 003, "Individual behaviors").
 *
 * Each behavior gives a desired velocity vector; the agent's command is the
 * weighted sum, from which the controller takes V_d = |V| and theta_d as the
 * direction of V (the seed's theta + atan(e_y / e_x) in body axes is the same
 * angle as atan2 of the world error). Working with the vector keeps the sum
 * meaningful and extends to 3D, where the direction gives yaw and pitch. */
#include <math.h>

#include "ecs/parallel.h"
#include "systems/systems.h"

typedef struct steer_ctx {
    world_t* w;
} steer_ctx;

static void steer_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    world_t* w = ((steer_ctx*)vctx)->w;
    const int three = w->dims == 3; /* z columns do not exist in 2D */
    const float* px = AGENT_F(w, AC_POS_X);
    const float* py = AGENT_F(w, AC_POS_Y);
    const float* pz = AGENT_F(w, AC_POS_Z);
    const float* heading = AGENT_F(w, AC_HEADING);
    const float* mass = AGENT_F(w, AC_MASS);
    const float* fmax = AGENT_F(w, AC_MAX_FORCE);
    const float* vmax = AGENT_F(w, AC_MAX_SPEED);
    const float* radius = AGENT_F(w, AC_RADIUS);
    const float* w_seek = AGENT_F(w, AC_W_SEEK);
    const float* w_flee = AGENT_F(w, AC_W_FLEE);
    const float* w_arrive = AGENT_F(w, AC_W_ARRIVE);
    const float* w_depart = AGENT_F(w, AC_W_DEPART);
    const float* k_arrive = AGENT_F(w, AC_ARRIVE_GAIN);
    const float* k_depart = AGENT_F(w, AC_DEPART_GAIN);
    const float* tx = AGENT_F(w, AC_TARGET_X);
    const float* ty = AGENT_F(w, AC_TARGET_Y);
    const float* tz = AGENT_F(w, AC_TARGET_Z);
    const float* hx = AGENT_F(w, AC_THREAT_X);
    const float* hy = AGENT_F(w, AC_THREAT_Y);
    const float* hz = AGENT_F(w, AC_THREAT_Z);
    float* dx = AGENT_F(w, AC_DESIRED_X);
    float* dy = AGENT_F(w, AC_DESIRED_Y);
    float* dz = AGENT_F(w, AC_DESIRED_Z);

    for (int32_t i = begin; i < end; ++i) {
        /* Most agents of a flock use none of these behaviors: clear their
         * desired velocity without reading targets and threats (the same
         * zeros the full path would write). */
        if (w_seek[i] == 0.0f && w_flee[i] == 0.0f && w_arrive[i] == 0.0f && w_depart[i] == 0.0f) {
            dx[i] = 0.0f;
            dy[i] = 0.0f;
            if (three) dz[i] = 0.0f;
            continue;
        }
        float vx = 0.0f, vy = 0.0f, vz = 0.0f;
        /* e: error toward the target; f: error toward the threat. */
        float ex = tx[i] - px[i], ey = ty[i] - py[i], ez = three ? tz[i] - pz[i] : 0.0f;
        float fx = hx[i] - px[i], fy = hy[i] - py[i], fz = three ? hz[i] - pz[i] : 0.0f;
        float e2 = ex * ex + ey * ey + ez * ez;
        float f2 = fx * fx + fy * fy + fz * fz;
        float e = sqrtf(e2), f = sqrtf(f2);

        if (w_seek[i] != 0.0f && e > 0.0f) {
            float k = w_seek[i] * vmax[i] / e; /* V_d = V_max toward e */
            vx += k * ex;
            vy += k * ey;
            vz += k * ez;
        }
        if (w_flee[i] != 0.0f) {
            if (f > 0.0f) {
                float k = w_flee[i] * vmax[i] / f; /* V_d = V_max along -e */
                vx -= k * fx;
                vy -= k * fy;
                vz -= k * fz;
            } else {
                /* On top of the threat any direction flees; keep going ahead. */
                vx += w_flee[i] * vmax[i] * cosf(heading[i]);
                vy += w_flee[i] * vmax[i] * sinf(heading[i]);
            }
        }
        if (w_arrive[i] != 0.0f && e > 0.0f) {
            /* V = K_arrival e, capped so the vehicle can still stop. */
            float speed = braking_speed(k_arrive[i] * e, e, 0.0f, vmax[i], fmax[i], mass[i]);
            float k = w_arrive[i] * speed / e;
            vx += k * ex;
            vy += k * ey;
            vz += k * ez;
        }
        if (w_depart[i] != 0.0f) {
            /* V = K_departure (-e)/|e|^2, with |e| floored at the agent's
             * radius so that the command stays finite at the threat. */
            float floor2 = fmaxf(radius[i] * radius[i], 1e-6f);
            if (f > 0.0f) {
                float k = w_depart[i] * k_depart[i] / fmaxf(f2, floor2);
                vx -= k * fx;
                vy -= k * fy;
                vz -= k * fz;
            }
        }
        dx[i] = vx;
        dy[i] = vy;
        if (three) dz[i] = vz;
    }
}

int64_t steer_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    steer_ctx c = {w};
    par_for(w, w->agents.count, 1024, PAR_STATIC, steer_range, &c);
    return w->agents.count;
}
