/* What the built-in systems share: an agent's pose as vectors, the arrival
 * speed law, parameter broadcasts. Each module's own header declares its
 * systems; their order, stages and the columns they read and write are in
 * one table, step.c. */
#ifndef SHOAL_MODULES_AGENT_H
#define SHOAL_MODULES_AGENT_H

#include <math.h>

#include "ecs/world.h"
#include "simd/lanes.h"
#include "simd/vec.h"
#include "modules/registry.h"

/* Below this speed command an agent holds its heading instead of steering
 * toward the (numerically meaningless) direction of a tiny vector. */
#define STEER_HOLD_SPEED 1e-4f

/* One agent's position, velocity and forward axis as vec3 (z = 0 in a 2D
 * world, whose 3D columns do not exist), for the per-agent scalar systems.
 * The forward axis is the heading in 2D and the quaternion's +x in 3D. */
static inline vec3 agent_position(const world_t* w, int32_t row)
{
    return (vec3){AGENT_F(w, AC_POS_X)[row], AGENT_F(w, AC_POS_Y)[row],
                  w->dims == 3 ? AGENT_F(w, AC_POS_Z)[row] : 0.0f};
}

static inline vec3 agent_velocity(const world_t* w, int32_t row)
{
    return (vec3){AGENT_F(w, AC_VEL_X)[row], AGENT_F(w, AC_VEL_Y)[row],
                  w->dims == 3 ? AGENT_F(w, AC_VEL_Z)[row] : 0.0f};
}

static inline vec3 agent_forward(const world_t* w, int32_t row)
{
    if (w->dims != 3) {
        float h = AGENT_F(w, AC_HEADING)[row];
        return (vec3){cosf(h), sinf(h), 0.0f};
    }
    quat q = {AGENT_F(w, AC_QW)[row], AGENT_F(w, AC_QX)[row], AGENT_F(w, AC_QY)[row], AGENT_F(w, AC_QZ)[row]};
    return quat_forward(q);
}

/* The arrival speed law shared by arrive, follow and directed seek: the
 * requested speed, capped by the speed from which the vehicle can still
 * slow to end_speed within `dist` using half its force (the paper's
 * proportional law alone overshoots whenever K e exceeds what the force
 * limit can stop). */
static inline float braking_speed(float wanted, float dist, float end_speed, float vmax, float fmax,
                                  float mass)
{
    float a_brake = 0.5f * fmax / mass;
    float cap = fminf(vmax, sqrtf(end_speed * end_speed + 2.0f * a_brake * dist));
    return wanted < cap ? wanted : cap;
}

/* Parameter k of rows [i, i + n) in a lane kernel: the broadcast bc[k]
 * (params_broadcast) or, with bc NULL, the column col. A kernel inlined
 * once with bc NULL and once with the broadcasts folds the test away. */
#define PARAM_LANES(bc, k, col) ((bc) ? (bc)[k] : lane_load_n((col) + i, n))

/* When every parameter column cols[0 .. n) holds one value in every row
 * (world_t.params_one), their values as broadcasts into out: 1. Else 0. */
static inline int params_broadcast(const world_t* w, const int* cols, int n, lanef* out)
{
    float v[AP_COUNT];
    if (n > AP_COUNT || !agent_params_one(w, cols, n, v)) return 0;
    for (int k = 0; k < n; ++k) out[k] = lane_set1(v[k]);
    return 1;
}

#endif /* SHOAL_MODULES_AGENT_H */
