/* Obstacle avoidance ("Obstacle Avoidance" of "Behavior-based control
 * examples", after Reynolds): keep a cylinder of radius r_B (the agent's
 * bounding radius) and length L_B = T_avoid |V| ahead of the agent free of
 * the world's obstacles (bounding spheres, circles in 2D).
 *
 * Detection, in the frame of the velocity (the paper's body axes; the
 * velocity is where the agent actually goes, the heading may lag it):
 *   d   = c_o - p,  u = V / |V|,  d_x = d . u,  lateral = |d - d_x u|
 *   potential collision when 0 <= d_x <= L_B + r_o and lateral <= r_B + r_o.
 * Two departures from the paper's |d_x| <= L_B, both deliberate:
 * - d_x >= 0: an obstacle whose center is behind cannot be hit by moving
 *   ahead, and steering around it would only fight the other behaviors;
 * - L_B + r_o: the sphere reaches r_o in front of its center, so the
 *   cylinder's end touches it already when d_x = L_B + r_o.
 * With |V| < 1e-6 m/s nothing is ahead (L_B = 0 and no direction), so a
 * stopped agent gets no field; it is not moving into anything (the guard
 * below still bounds where it sets off to).
 *
 * Of the colliding obstacles the one with the smallest d_x, the most
 * imminent, is avoided (ties: the lower id, so the choice never depends on
 * anything but the data). Command:
 *   |V_avoid| = K_avoid V_max / (1 + max(0, |d| - (r_B + r_o))^2)
 * with the gap clamped at 0 when already overlapping, so the command never
 * exceeds K_avoid V_max. Direction:
 * - normal field: n = -d / |d| (-u when on the center itself);
 * - tangential field: k = (V x d) / (|V||d|), t = k x n, with k normalized
 *   so that t is the paper's unit tangent (|V x d| / (|V||d|) is sin of the
 *   angle, not 1). 2D works in 3D with z = 0: k is along z, t in the plane.
 *   t leans forward (t . u = sin >= 0) and away from the obstacle's side.
 *   When V and d are parallel (head-on, k = 0) the side is chosen by rule:
 *   the left of the velocity, z x u (in 2D the left perpendicular), or +y
 *   when u is vertical in 3D.
 * The desired velocity gets AV_WEIGHT * V_avoid added.
 *
 * The no-entry guard. The paper's field alone does not keep agents out: its
 * strength is at most K_avoid V_max, which a seek of V_max cancels at the
 * obstacle's surface; the tangential field has no radial part at all, so
 * at the obstacle's flank t points along the motion and cannot resist a
 * seek pulling inward; and the cylinder stops seeing an obstacle once the
 * agent is beside it, where seek turns it back in. Over the grid of
 * `shoal experiment avoid` (docs/avoidance.md) 59 of 84 seek runs entered
 * with the normal field at the defaults and 70 of 84 with the tangential
 * one (24 of 84 still at K_avoid 8). So, after the field is added, the
 * guard bounds the whole desired velocity (the system runs after every
 * behavior that adds to it, src/modules/step.c) near every obstacle:
 * - direction: from the vehicle's limits, the turn radius
 *   rho = V / (0.8 min(omega_max, F_max / (m V))) (the velocity turns no
 *   faster than the heading may, nor than the force bends it) and the run
 *   before a turn takes hold, V (omega / alpha_max + 1 / sqrt(K_h) + 2 dt)
 *   (reaching the turn rate, the heading loop's response, a step or two),
 *   with V the larger of the speed and the desired speed. With e the gap
 *   to the surface less that run, turning from angle b into the surface
 *   onto its tangent takes rho (1 - cos b) of room, so the desired direction
 *   may point in by at most sin b = sqrt(e (2 rho - e)) / rho; with e < 0 it
 *   leans out by e / rho; when the velocity already points in more steeply
 *   than allowed, the bound becomes the tangent (or out). A direction that
 *   points in more steeply is turned, about n, onto that bound on the side
 *   the vehicle is already going round (the velocity's tangential part)
 *   where the desired direction's lies on the other side or is nil, else
 *   on the desired direction's side (head-on and still: left of n).
 *   Following the desired side alone let a flock's wavering sum swing its
 *   agents one way and back into the obstacle.
 * - speed: the controller drives along the heading at up to |V_d| while it
 *   turns, so a heading that points in (inward sine h) closes the gap at
 *   |V_d| h. |V_d| is bounded by K_v gap / (4 h) (an inward speed that
 *   closes the gap without overshooting, critically damped with the speed
 *   loop; at least 1e-3 m/s so that the direction still steers). A slow
 *   agent turning round toward a target behind it no longer drives into an
 *   obstacle its heading points at.
 * The guard changes nothing far from obstacles (gap >= run + rho and
 * gap >= V / (K_v / 4)), nor for an agent whose desired velocity already
 * points out or along the surface. It keeps every run of the grid out at
 * the defaults, with both fields (least clearance 0.06 m). It reads the
 * agent's own row and the obstacles only, so it is as deterministic and
 * allocation-free as the field. With several obstacles near, each bounds
 * the direction left by the ones before it (id order); a later one can
 * undo an earlier one's bound, which the grid (one obstacle) does not test.
 *
 * Obstacles are tested by brute force, agents x obstacles: worlds hold a
 * handful of static obstacles, far fewer than the spatial hash's cells. A
 * world with thousands would want them in a grid of their own. Obstacles
 * cannot change during a step (add/remove are refused then), so every
 * thread reads the same array. */
#include <math.h>
#include <string.h>

#include "modules/avoid/avoid.h"
#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "simd/vec.h"
#include "modules/obstacles/obstacles.h"
#include "modules/agent.h"

/* Below this speed (m/s) the velocity has no direction to look along. */
#define AVOID_STILL_SPEED 1e-6f
/* Below this |V x d| / (|V||d|) the sides of a head-on obstacle are noise. */
#define AVOID_PARALLEL_SIN 1e-6f
/* The guard plans turns at this share of the vehicle's turn rate. */
#define GUARD_TURN_SHARE 0.8f
/* Steps of lag it allows for, besides reaching the turn rate and the
 * heading loop's response. */
#define GUARD_LAG_STEPS 2.0f
/* Below this tangential share of the desired direction, the approach is head-on. */
#define GUARD_HEAD_ON 1e-3f
/* The velocity goes round an obstacle on one side when its tangential part
 * is at least this share of the speed. */
#define GUARD_SIDE_SHARE 0.05f
/* Inward speed per meter of gap, as a share of the speed loop's gain. */
#define GUARD_BRAKE_SHARE 0.25f
/* m/s: the least desired speed the guard leaves (above STEER_HOLD_SPEED,
 * so that the controller still turns toward it). */
#define GUARD_MIN_SPEED 1e-3f
/* The square-root-free far test skips an obstacle only beyond this factor
 * of the near distance squared (float rounding is far below it). */
#define GUARD_FAR_SLACK 1.01f

/* The avoid component's columns. */
typedef struct avoid_view {
    const int32_t* agent_row;
    const float *weight, *lookahead, *gain;
    const uint32_t* tangential;
} avoid_view_t;

/* Reads pos, vel, heading or quat, limits, gains, radius and the
 * obstacles; writes desired (+=, then bounded by the guard). */
typedef struct avoid_ctx {
    world_t* w;
    agent_view_t a;
    avoid_view_t v;
    float dt;
} avoid_ctx_t;

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

/* The no-entry guard (see the file comment): bounds the part of the
 * desired velocity that points into each obstacle near the agent by what
 * the vehicle can still turn away from, and its speed along a heading that
 * points in by what the speed loop can still stop. */
static void guard(const avoid_ctx_t* c, int32_t i, vec3 p, vec3 vel, float speed, const float (*obs)[4],
                  int32_t obs_high, int three)
{
    const agent_view_t* a = &c->a;
    vec3 want = {a->dx[i], a->dy[i], three ? a->dz[i] : 0.0f};
    float wlen = vec3_length(want);
    if (!(wlen > STEER_HOLD_SPEED)) return; /* no direction: the controller brakes */
    vec3 dir = vec3_scale(want, 1.0f / wlen);
    vec3 fwd = vec3_zero(); /* the heading, found at the first near obstacle */
    int have_fwd = 0;
    float vref = fmaxf(speed, fminf(wlen, a->max_speed[i]));
    /* The velocity turns no faster than the heading may (max turn rate),
     * nor than the force bends it (|V| omega <= F_max / m). */
    float om = GUARD_TURN_SHARE *
               fminf(a->max_turn_rate[i], a->max_force[i] / (a->mass[i] * fmaxf(vref, GUARD_MIN_SPEED)));
    float alpha = a->inertia[i] > 0.0f ? a->max_torque[i] / a->inertia[i] : 0.0f;
    int turns = om > 0.0f && alpha > 0.0f;
    float rho = turns ? vref / om : 0.0f; /* turn radius */
    /* Distance run before the turn takes hold: reaching the turn rate,
     * the heading loop's response (critically damped at sqrt(K_h) rad/s
     * by default: 1 / sqrt(K_h)), and a step or two. */
    float kh = a->heading_gain[i];
    float lag = (turns ? om / alpha : 0.0f) + GUARD_LAG_STEPS * c->dt + (kh > 0.0f ? 1.0f / sqrtf(kh) : 0.0f);
    float margin = vref * lag;
    /* The speed loop's rate (the controller caps K_v at 1 / dt); an inward
     * speed of a quarter of it times the gap closes the gap without
     * overshoot (critically damped with that loop). */
    float brake = GUARD_BRAKE_SHARE * fminf(a->speed_gain[i], 1.0f / c->dt);
    float rb = a->radius[i];
    int changed = 0;
    for (int32_t o = 0; o < obs_high; ++o) {
        float ro = obs[o][3];
        if (ro < 0.0f) continue; /* a removed id */
        vec3 d = {p.x - obs[o][0], p.y - obs[o][1], three ? p.z - obs[o][2] : 0.0f};
        /* Far (gap >= run + rho and gap >= V / brake): nothing to bound.
         * First without a square root, with room to spare for rounding, so
         * that the exact test below alone decides. */
        float near = rb + ro + fmaxf(margin + rho, brake > 0.0f ? vref / brake : 0.0f);
        float dist_sq = vec3_dot(d, d);
        if (dist_sq > GUARD_FAR_SLACK * near * near) continue;
        float dist = sqrtf(dist_sq);
        float gap = dist - (rb + ro);
        float e = gap - margin; /* room left to turn in */
        if (e >= rho && !(brake > 0.0f && gap < vref / brake)) continue;
        if (!have_fwd) {
            fwd = three ? quat_forward((quat){a->qw[i], a->qx[i], a->qy[i], a->qz[i]})
                        : (vec3){cosf(a->heading[i]), sinf(a->heading[i]), 0.0f};
            have_fwd = 1;
        }
        /* n: the outward normal at the agent's side of the obstacle */
        vec3 n = dist > 0.0f ? vec3_scale(d, 1.0f / dist)
                             : (speed > 0.0f ? vec3_scale(vel, -1.0f / speed) : vec3_neg(fwd));
        if (turns && e < rho) {
            float inward = -vec3_dot(dir, n); /* sin of the angle into the surface */
            /* Turning from angle b into the surface onto the tangent takes
             * rho (1 - cos b) of room: with e of it, sin b <= sqrt(e (2 rho
             * - e)) / rho. Within the margin the direction leans out. */
            float allow = e > 0.0f ? sqrtf(e * (2.0f * rho - e)) / rho : fmaxf(-1.0f, e / rho);
            /* Already going in more steeply than that: turn as hard as the
             * controller will, onto the tangent (or out, within the margin). */
            float going = speed > 0.0f ? -vec3_dot(vel, n) / speed : 0.0f;
            if (going > allow) allow = fminf(allow, 0.0f);
            if (inward > allow) {
                vec3 tang = vec3_add(dir, vec3_scale(n, inward)); /* the tangential part */
                float tl = vec3_length(tang);
                /* The side to pass on: the one the vehicle is going round
                 * already (its velocity's tangential part) where the desired
                 * direction's lies on the other side or is too small to say
                 * (a flock's sum wavers across the head-on line, and
                 * following it turned agents one way and back into the
                 * obstacle); else the desired direction's; else, head-on and
                 * still, the left of n (+y x n when n is vertical). */
                vec3 vside = vec3_sub(vel, vec3_scale(n, vec3_dot(vel, n)));
                float vsl = vec3_length(vside);
                if (vsl > GUARD_SIDE_SHARE * speed && vsl > 0.0f &&
                    (!(tl > GUARD_HEAD_ON) || vec3_dot(tang, vside) < 0.0f)) {
                    tang = vside;
                    tl = vsl;
                } else if (!(tl > GUARD_HEAD_ON)) {
                    tang = vec3_cross((vec3){0.0f, 0.0f, 1.0f}, n);
                    if (!(vec3_length(tang) > 0.5f)) tang = vec3_cross((vec3){0.0f, 1.0f, 0.0f}, n);
                    tl = vec3_length(tang);
                }
                float cb = sqrtf(fmaxf(0.0f, 1.0f - allow * allow));
                dir = vec3_add(vec3_scale(tang, cb / tl), vec3_scale(n, -allow));
                changed = 1;
            }
        }
        /* The controller drives along the heading, at up to the desired
         * speed, while it turns: a heading that points in closes the gap
         * at |V_d| times its inward sine. Bound that by brake * gap (a
         * creep where there is no gap, so that the direction still steers). */
        float h_in = -vec3_dot(fwd, n);
        if (brake > 0.0f && h_in > 0.0f) {
            float cap = fmaxf(GUARD_MIN_SPEED, brake * fmaxf(gap, 0.0f) / h_in);
            if (wlen > cap) {
                wlen = cap;
                changed = 1;
            }
        }
    }
    if (!changed) return;
    a->dx[i] = dir.x * wlen;
    a->dy[i] = dir.y * wlen;
    if (three) a->dz[i] = dir.z * wlen;
}

static void avoid_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const avoid_ctx_t* c = (const avoid_ctx_t*)vctx;
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
        if (!(speed >= AVOID_STILL_SPEED)) {
            guard(c, i, p, vel, speed, obs, obs_high, three);
            continue;
        }
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
        if (best >= 0) {
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
        guard(c, i, p, vel, speed, obs, obs_high, three);
    }
}

int64_t avoid_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    int32_t count = w->comps[COMP_AVOID].table.count;
    const int k = COMP_AVOID;
    avoid_ctx_t c = {w,
                     agent_view(w),
                     {COMP_I(w, k, COMP_ROW), COMP_F(w, k, AV_WEIGHT), COMP_F(w, k, AV_LOOKAHEAD),
                      COMP_F(w, k, AV_GAIN), COMP_U(w, k, AV_TANGENTIAL)},
                     dt};
    /* Every agent tests every obstacle: even cost, static blocks. */
    par_for(w, count, 256, PAR_STATIC, avoid_range, &c);
    return count;
}

/* ---- the module ------------------------------------------------------------ */

shoal_avoid_t shoal_avoid_default(void)
{
    shoal_avoid_t a = {2.0f, 1.0f, 0};
    return a;
}

static void avoid_defaults(shoal_agent_def_t* d) { d->avoid = shoal_avoid_default(); }

static int avoid_needs(const shoal_agent_def_t* d) { return d->weights[SHOAL_BEHAVIOR_AVOID] != 0.0f; }

static const column_def_t avoid_columns[AV_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [AV_WEIGHT] = COLUMN_WEIGHT("weights[avoid]", SHOAL_BEHAVIOR_AVOID),
    [AV_LOOKAHEAD] = COLUMN_AT_LEAST("avoid.lookahead_time", avoid.lookahead_time, 0.0),
    [AV_GAIN] = COLUMN_AT_LEAST("avoid.gain", avoid.gain, 0.0),
    /* stored as a uint32 */
    [AV_TANGENTIAL] = COLUMN_INT_IN("avoid.tangential", avoid.tangential, 0, 1, "0 or 1"),
};

static shoal_status_t avoid_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    return columns_check(w, d, where, avoid_columns, AV_COUNT_);
}

static void avoid_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                            int fresh)
{
    (void)slot;
    (void)forward;
    (void)fresh;
    columns_write(w, COMP_AVOID, r, d, avoid_columns, AV_COUNT_);
}

static void avoid_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_AVOID, r, d, avoid_columns, AV_COUNT_);
}

const module_t avoid_module = {
    .name = "avoid",
    .column_count = AV_COUNT_,
    .columns = avoid_columns,
    .defaults = avoid_defaults,
    .needs = avoid_needs,
    .validate = avoid_validate,
    .write_row = avoid_write_row,
    .read_row = avoid_read_row,
};

/* ---- the setter ------------------------------------------------------------ */

static void edit_avoid(shoal_agent_def_t* d, const void* a) { d->avoid = *(const shoal_avoid_t*)a; }

shoal_status_t shoal_agent_set_avoid(shoal_world_t* w, shoal_agent_t id, const shoal_avoid_t* a)
{
    REQUIRE_PTR(w, a, "agent_set_avoid", "avoid");
    return agent_edit(w, id, "agent_set_avoid", edit_avoid, a, AGENT_EDIT_COMPONENT(COMP_AVOID));
}
