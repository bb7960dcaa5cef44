/* Wander (seed 003, "Wander"): a random walk of the wander velocity on a
 * sphere (circle in 2D) of radius K_wander centered on the nominal velocity
 * V_0:
 *
 *   n        uniform in [-1, 1]^d, one draw per agent and step
 *   r_noise  = K_noise n / |n|
 *   V_wander = K_wander (V_wander + r_noise) / |V_wander + r_noise|
 *   V        = V_0 + V_wander,   V_0 = cruise_speed * forward
 *
 * and the desired velocity gets weight * V added (steer set it first).
 *
 * Choices the seed leaves open:
 * - n is drawn from the cube and normalized, without rejecting the corners:
 *   the direction is then not exactly uniform (it leans toward the
 *   diagonals), but a draw costs a fixed amount and the walk only needs
 *   some jitter. x and y come from the two halves of one 64-bit draw, z
 *   from a second. |n| = 0 (probability ~0) gives +x.
 * - When V_wander + r_noise is zero (K_noise = K_wander and the draw is
 *   exactly opposite), the old direction is kept rather than inventing one.
 * - forward is the heading (2D) or the quaternion's +x axis (3D), not the
 *   velocity: a stopped agent still has a direction to cruise in.
 * - In 2D only x and y are drawn, so V_wander stays in the plane.
 *
 * Random numbers come from rng.h keyed by (world seed, slot | generation
 * << 32, step count, stream): a pure function of the agent's identity and
 * the step, never of its row (rows move on reorder) or of the thread that
 * runs it, so the walk is the same for any thread count. The generation in
 * the key gives an agent that reuses a slot a walk of its own. */
#include <math.h>

#include "ecs/parallel.h"
#include "ecs/rng.h"
#include "simd/lane_math.h"
#include "simd/vec.h"
#include "systems/systems.h"

/* Streams of the wander draws, one per axis; far from small integers so
 * that other systems numbering their streams from 0 cannot collide. */
#define WANDER_STREAM 0x57414e00u /* "WAN\0" */

typedef struct wander_ctx {
    world_t* w;
} wander_ctx;

static void wander_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    world_t* w = ((wander_ctx*)vctx)->w;
    const int three = w->dims == 3; /* z, quaternion columns exist only in 3D */
    const table_t* t = &w->comps[COMP_WANDER].table;
    const uint32_t* slots = table_slots(t);
    const float* weight = COMP_F(w, COMP_WANDER, WD_WEIGHT);
    const float* cruise = COMP_F(w, COMP_WANDER, WD_CRUISE);
    const float* strength = COMP_F(w, COMP_WANDER, WD_STRENGTH);
    const float* noise = COMP_F(w, COMP_WANDER, WD_NOISE);
    float* wvx = COMP_F(w, COMP_WANDER, WD_VX);
    float* wvy = COMP_F(w, COMP_WANDER, WD_VY);
    float* wvz = COMP_F(w, COMP_WANDER, WD_VZ);
    const float* heading = AGENT_F(w, AC_HEADING);
    float* dx = AGENT_F(w, AC_DESIRED_X);
    float* dy = AGENT_F(w, AC_DESIRED_Y);
    float* dz = AGENT_F(w, AC_DESIRED_Z);
    const uint64_t seed = w->seed, step = w->step_count;

    for (int32_t r = begin; r < end; ++r) {
        uint32_t slot = slots[r];
        int32_t i = TABLE_COL(t, int32_t, COMP_ROW)[r];
        uint64_t key = (uint64_t)slot | ((uint64_t)COMP_U(w, COMP_WANDER, WD_KEY)[r] << 32);

        /* One 64-bit draw gives x and y (24 bits each); z takes a second. */
        uint64_t bits = rng_base(seed, key, step);
        float nx = (float)(bits >> 40) * (2.0f / 16777216.0f) - 1.0f;
        float ny = (float)((bits >> 16) & 0xffffffu) * (2.0f / 16777216.0f) - 1.0f;
        float nz = three ? rng_signed_unit(rng_stream(bits, WANDER_STREAM)) : 0.0f;
        float n2 = nx * nx + ny * ny + nz * nz;
        if (n2 > 0.0f) {
            float inv = 1.0f / sqrtf(n2);
            nx *= inv;
            ny *= inv;
            nz *= inv;
        } else {
            nx = 1.0f;
        }
        float vx = wvx[r] + noise[r] * nx, vy = wvy[r] + noise[r] * ny;
        float vz = three ? wvz[r] + noise[r] * nz : 0.0f;
        float v2 = vx * vx + vy * vy + vz * vz;
        if (v2 > 0.0f) {
            float k = strength[r] / sqrtf(v2);
            vx *= k;
            vy *= k;
            vz *= k;
        } else { /* keep the old direction (see the file comment) */
            vx = wvx[r];
            vy = wvy[r];
            vz = three ? wvz[r] : 0.0f;
        }
        wvx[r] = vx;
        wvy[r] = vy;
        wvz[r] = vz;
        vec3 vw = {vx, vy, vz};

        vec3 fwd;
        if (three) {
            quat q = {AGENT_F(w, AC_QW)[i], AGENT_F(w, AC_QX)[i], AGENT_F(w, AC_QY)[i],
                      AGENT_F(w, AC_QZ)[i]};
            fwd = quat_forward(q);
        } else {
            float sn, cs;
            fast_sincosf(heading[i], &sn, &cs);
            fwd = (vec3){cs, sn, 0.0f};
        }
        vec3 v = vec3_add(vec3_scale(fwd, cruise[r]), vw); /* V_0 + V_wander */
        dx[i] += weight[r] * v.x;
        dy[i] += weight[r] * v.y;
        if (three) dz[i] += weight[r] * v.z;
    }
}

int64_t wander_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    int32_t count = w->comps[COMP_WANDER].table.count;
    wander_ctx c = {w};
    par_for(w, count, 512, PAR_STATIC, wander_range, &c);
    return count;
}
