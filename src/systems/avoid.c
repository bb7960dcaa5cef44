/* Obstacle avoidance (seed 003, "Obstacle Avoidance"): keep a cylinder of
 * radius r_B (the agent's bounding radius) and length L_B = T_avoid |V|
 * ahead of the agent free of the world's obstacles (bounding spheres,
 * circles in 2D).
 *
 * Detection, in the frame of the velocity (the seed's body axes; the
 * velocity is where the agent actually goes, the heading may lag it):
 *   d   = c_o - p,  u = V / |V|,  d_x = d . u,  lateral = |d - d_x u|
 *   potential collision when 0 <= d_x <= L_B + r_o and lateral <= r_B + r_o.
 * Two departures from the seed's |d_x| <= L_B, both deliberate:
 * - d_x >= 0: an obstacle whose center is behind cannot be hit by moving
 *   ahead, and steering around it would only fight the other behaviors;
 * - L_B + r_o: the sphere reaches r_o in front of its center, so the
 *   cylinder's end touches it already when d_x = L_B + r_o.
 * With |V| < 1e-6 m/s nothing is ahead (L_B = 0 and no direction), so a
 * stopped agent does not avoid; it is not moving into anything.
 *
 * Of the colliding obstacles the one with the smallest d_x, the most
 * imminent, is avoided (ties: the lower id, so the choice never depends on
 * anything but the data). Command:
 *   |V_avoid| = K_avoid V_max / (1 + max(0, |d| - (r_B + r_o))^2)
 * with the gap clamped at 0 when already overlapping, so the command never
 * exceeds K_avoid V_max. Direction:
 * - normal field: n = -d / |d| (-u when on the center itself);
 * - tangential field: k = (V x d) / (|V||d|), t = k x n, with k normalized
 *   so that t is the seed's unit tangent (|V x d| / (|V||d|) is sin of the
 *   angle, not 1). 2D works in 3D with z = 0: k is along z, t in the plane.
 *   t leans forward (t . u = sin >= 0) and away from the obstacle's side.
 *   When V and d are parallel (head-on, k = 0) the side is chosen by rule:
 *   the left of the velocity, z x u (in 2D the left perpendicular), or +y
 *   when u is vertical in 3D.
 *   The tangential field has no radial part: at the obstacle's flank t
 *   points along the motion and cannot resist a seek pulling inward, so it
 *   keeps an agent out only by turning it early and hard (a larger K_avoid
 *   and T_avoid than the normal field needs; see tests/test_group_behaviors.c).
 * The desired velocity gets AV_WEIGHT * V_avoid added.
 *
 * Obstacles are tested by brute force, agents x obstacles: worlds hold a
 * handful of static obstacles, far fewer than the spatial hash's cells. A
 * world with thousands would want them in a grid of their own. Obstacles
 * cannot change during a step (add/remove are refused then), so every
 * thread reads the same array. */
#include <math.h>

#include "ecs/parallel.h"
#include "simd/vec.h"
#include "systems/obstacles.h"
#include "systems/systems.h"

/* Below this speed (m/s) the velocity has no direction to look along. */
#define AVOID_STILL_SPEED 1e-6f
/* Below this |V x d| / (|V||d|) the sides of a head-on obstacle are noise. */
#define AVOID_PARALLEL_SIN 1e-6f

/* The avoid component's columns. */
typedef struct avoid_view {
    const int32_t* agent_row;
    const float *weight, *lookahead, *gain;
    const uint32_t* tangential;
} avoid_view;

/* Reads pos, vel, max speed, radius and the obstacles; writes desired (+=). */
typedef struct avoid_ctx {
    world_t* w;
    agent_view_t a;
    avoid_view v;
} avoid_ctx;

static int is_zero(vec3 a) { return a.x == 0.0f && a.y == 0.0f && a.z == 0.0f; }

/* The tangential field's direction (see the file comment). */
static vec3 tangent_dir(vec3 u, vec3 d, float dist, vec3 n)
{
    vec3 c = vec3_cross(u, d); /* |c| = |d| sin(angle between V and d) */
    float c_len = vec3_length(c);
    if (dist > 0.0f && c_len >= AVOID_PARALLEL_SIN * dist)
        return vec3_normalize(vec3_cross(vec3_scale(c, 1.0f / c_len), n));
    vec3 left = vec3_normalize(vec3_cross((vec3){0.0f, 0.0f, 1.0f}, u));
    return is_zero(left) ? (vec3){0.0f, 1.0f, 0.0f} : left;
}

static void avoid_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const avoid_ctx* c = (const avoid_ctx*)vctx;
    const world_t* w = c->w;
    const int three = w->dims == 3;
    const int32_t* agent_row = c->v.agent_row;
    const float *weight = c->v.weight, *lookahead = c->v.lookahead, *gain = c->v.gain;
    const uint32_t* tangential = c->v.tangential;
    const float *px = c->a.px, *py = c->a.py, *pz = c->a.pz;
    const float *vx = c->a.vx, *vy = c->a.vy, *vz = c->a.vz;
    const float *vmax = c->a.max_speed, *radius = c->a.radius;
    float *dx = c->a.dx, *dy = c->a.dy, *dz = c->a.dz;
    const float(*obs)[4] = (const float(*)[4])obstacles_of(w)->obstacles;
    const int32_t obs_high = obstacles_of(w)->obstacle_high;

    for (int32_t r = begin; r < end; ++r) {
        int32_t i = agent_row[r];
        vec3 p = {px[i], py[i], three ? pz[i] : 0.0f};
        vec3 vel = {vx[i], vy[i], three ? vz[i] : 0.0f};
        float speed = vec3_length(vel);
        if (!(speed >= AVOID_STILL_SPEED)) continue;
        vec3 u = vec3_scale(vel, 1.0f / speed);
        float reach = lookahead[r] * speed; /* L_B */
        float rb = radius[i];

        int32_t best = -1;
        float best_along = INFINITY;
        vec3 best_d = vec3_zero();
        for (int32_t o = 0; o < obs_high; ++o) {
            float ro = obs[o][3];
            if (ro < 0.0f) continue; /* a removed id */
            /* In 2D the stored center has z = 0 and p.z = 0. */
            vec3 d = {obs[o][0] - p.x, obs[o][1] - p.y, three ? obs[o][2] - p.z : 0.0f};
            float along = vec3_dot(d, u);
            if (along < 0.0f || along > reach + ro) continue;
            float lateral = vec3_length(vec3_sub(d, vec3_scale(u, along)));
            if (lateral > rb + ro) continue;
            if (along < best_along) { /* strict: ties keep the lower id */
                best = o;
                best_along = along;
                best_d = d;
            }
        }
        if (best < 0) continue;

        float dist = vec3_length(best_d);
        float gap = fmaxf(0.0f, dist - (rb + obs[best][3]));
        float mag = gain[r] * vmax[i] / (1.0f + gap * gap);
        vec3 n = dist > 0.0f ? vec3_scale(best_d, -1.0f / dist) : vec3_neg(u);
        vec3 dir = tangential[r] ? tangent_dir(u, best_d, dist, n) : n;
        float k = weight[r] * mag;
        dx[i] += k * dir.x;
        dy[i] += k * dir.y;
        if (three) dz[i] += k * dir.z;
    }
}

int64_t avoid_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    int32_t count = w->comps[COMP_AVOID].table.count;
    const int k = COMP_AVOID;
    avoid_ctx c = {w, agent_view(w),
                   {COMP_I(w, k, COMP_ROW), COMP_F(w, k, AV_WEIGHT), COMP_F(w, k, AV_LOOKAHEAD),
                    COMP_F(w, k, AV_GAIN), COMP_U(w, k, AV_TANGENTIAL)}};
    /* Every agent tests every obstacle: even cost, static blocks. */
    par_for(w, count, 256, PAR_STATIC, avoid_range, &c);
    return count;
}

/* ---- the module ------------------------------------------------------------ */

static int avoid_needs(const shoal_agent_def_t* d) { return d->weights[SHOAL_BEHAVIOR_AVOID] != 0.0f; }

static shoal_status_t avoid_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    int ok = def_check_min(w, where, "avoid.lookahead_time", d->avoid.lookahead_time, 0.0f, 0) &&
             def_check_min(w, where, "avoid.gain", d->avoid.gain, 0.0f, 0);
    if (!ok) return SHOAL_ERR_INVALID_ARGUMENT;
    if (d->avoid.tangential != 0 && d->avoid.tangential != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: avoid.tangential must be 0 or 1, got %d", where,
                          (int)d->avoid.tangential);
    return SHOAL_OK;
}

static void avoid_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                            int fresh)
{
    (void)slot;
    (void)forward;
    (void)fresh;
    const int k = COMP_AVOID;
    COMP_F(w, k, AV_WEIGHT)[r] = d->weights[SHOAL_BEHAVIOR_AVOID];
    COMP_F(w, k, AV_LOOKAHEAD)[r] = d->avoid.lookahead_time;
    COMP_F(w, k, AV_GAIN)[r] = d->avoid.gain;
    COMP_U(w, k, AV_TANGENTIAL)[r] = (uint32_t)d->avoid.tangential;
}

static void avoid_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    const int k = COMP_AVOID;
    d->weights[SHOAL_BEHAVIOR_AVOID] = COMP_F(w, k, AV_WEIGHT)[r];
    d->avoid.lookahead_time = COMP_F(w, k, AV_LOOKAHEAD)[r];
    d->avoid.gain = COMP_F(w, k, AV_GAIN)[r];
    d->avoid.tangential = (int32_t)COMP_U(w, k, AV_TANGENTIAL)[r];
}

static const uint8_t avoid_flags[AV_COUNT_] = {[AV_TANGENTIAL] = COLUMN_BITS};

const module_t avoid_module = {
    .name = "avoid",
    .column_count = AV_COUNT_,
    .column_flags = avoid_flags,
    .needs = avoid_needs,
    .validate = avoid_validate,
    .write_row = avoid_write_row,
    .read_row = avoid_read_row,
};
