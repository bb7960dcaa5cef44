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
 *   diagonals), but a draw costs a fixed d numbers and the walk only needs
 *   some jitter. |n| = 0 (probability ~0) gives +x.
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
        int32_t i = w->slots[slot].row;
        uint64_t key = (uint64_t)slot | ((uint64_t)w->slots[slot].generation << 32);

        uint64_t base = rng_base(seed, key, step);
        vec3 n = {rng_signed_unit(rng_stream(base, WANDER_STREAM + 0u)),
                  rng_signed_unit(rng_stream(base, WANDER_STREAM + 1u)),
                  three ? rng_signed_unit(rng_stream(base, WANDER_STREAM + 2u)) : 0.0f};
        n = vec3_normalize(n);
        if (n.x == 0.0f && n.y == 0.0f && n.z == 0.0f) n.x = 1.0f;

        vec3 vw = {wvx[r], wvy[r], three ? wvz[r] : 0.0f};
        vec3 sum = vec3_add(vw, vec3_scale(n, noise[r]));
        vec3 dir = vec3_normalize(sum);
        if (dir.x == 0.0f && dir.y == 0.0f && dir.z == 0.0f) dir = vec3_normalize(vw);
        /* dir is zero only when both are (K_wander = K_noise = 0): then
         * V_wander = 0 as well, which is what K_wander = 0 asks for. */
        vw = vec3_scale(dir, strength[r]);
        wvx[r] = vw.x;
        wvy[r] = vw.y;
        wvz[r] = vw.z;

        vec3 fwd;
        if (three) {
            quat q = {AGENT_F(w, AC_QW)[i], AGENT_F(w, AC_QX)[i], AGENT_F(w, AC_QY)[i],
                      AGENT_F(w, AC_QZ)[i]};
            fwd = quat_forward(q);
        } else {
            fwd = (vec3){cosf(heading[i]), sinf(heading[i]), 0.0f};
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
