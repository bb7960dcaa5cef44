/* The controller: command variables (V_d, theta_d) to force and torque
 * within the vehicle's limits ("Basic vehicle dynamics" of "Behavior-based
 * control examples", after Reynolds).
 *
 * The behaviors' desired velocity V gives V_d = min(|V|, V_max) and the
 * desired direction. Speed: a proportional law on the body-frame velocity
 * error toward (V_fwd, 0[, 0]), so one force both drives along the heading
 * and cancels side slip (the grip of wheels, a keel or thrusters), clipped to
 * |F| <= F_max. V_fwd = V_d min(1, max(0, 1 + cos(heading error))): full
 * speed while the wanted direction is within 90 degrees of the heading (a
 * vehicle turns without braking, which directed seek's turn-radius
 * geometry relies on), then slowing to a stop as it points straight behind,
 * so a vehicle turns around a target behind it instead of driving a wide
 * circle.
 * Heading: a PD law tau = I (K_h e - K_d omega), clipped to |tau| <= tau_max.
 * In 3D the heading error e is the rotation vector from the current attitude
 * to the one with the desired yaw and pitch and no roll.
 *
 * Gains are capped at 1/dt so that a large step cannot overshoot the
 * commanded velocity (explicit Euler is unstable for gain * dt > 2).
 *
 * Both kernels run a lane of agents at a time with lane_math.h's sincos and
 * atan2 instead of libm, so the scalar build computes the same bits as the
 * SIMD ones. Every lane is one agent's own arithmetic, so the split of
 * [0, count) into ranges cannot change a result. The last partial lane of a
 * range is loaded and stored with the partial operations: rows past the
 * range are never touched, so no assumption about the split or the padding
 * is needed, and padded rows stay zero. */
#include <math.h>

#include "modules/motion/motion.h"
#include "ecs/parallel.h"
#include "simd/lane_math.h"
#include "simd/lanes.h"
#include "modules/agent.h"

/* The parameters a row's control reads, in this order. When each holds
 * one value in every row (world_t.params_one), the kernels take that value
 * as a broadcast instead of a column: 8 of a row's 14 loads in 2D. */
static const int control_params[] = {AC_MASS,      AC_INERTIA,    AC_MAX_FORCE,    AC_MAX_TORQUE,
                                     AC_MAX_SPEED, AC_SPEED_GAIN, AC_HEADING_GAIN, AC_TURN_DAMPING};
enum { CP_MASS, CP_INERTIA, CP_FMAX, CP_TMAX, CP_VMAX, CP_KV, CP_KH, CP_KD, CP_COUNT };

typedef struct control_ctx {
    world_t* w;
    float dt;
    int one; /* the parameters are the broadcasts below */
    lanef param[CP_COUNT];
} control_ctx_t;


/* ---- 2D ------------------------------------------------------------------ */

typedef struct cols_2d {
    const float *vx, *vy, *heading, *omega, *dx, *dy;
    const float *mass, *inertia, *fmax, *tmax, *vmax, *kv, *kh, *kd;
    float *fx, *fy, *tz;
} cols_2d_t;

/* Rows [i, i + n) (n <= SHOAL_LANES). Inlined twice: with n = SHOAL_LANES
 * for the body of a range, where the partial paths fold away, and once for
 * a range's tail. */
static inline __attribute__((always_inline)) void control_lanes_2d(const cols_2d_t* c, int32_t i, int32_t n,
                                                                   lanef inv_dt, const lanef* bc)
{
    lanef vx = lane_load_n(c->vx + i, n), vy = lane_load_n(c->vy + i, n);
    lanef dx = lane_load_n(c->dx + i, n), dy = lane_load_n(c->dy + i, n);
    lanef heading = lane_load_n(c->heading + i, n), omega = lane_load_n(c->omega + i, n);
    lanef mass = PARAM_LANES(bc, CP_MASS, c->mass), inertia = PARAM_LANES(bc, CP_INERTIA, c->inertia);
    lanef fmax = PARAM_LANES(bc, CP_FMAX, c->fmax), tmax = PARAM_LANES(bc, CP_TMAX, c->tmax);
    lanef vmax = PARAM_LANES(bc, CP_VMAX, c->vmax), kv = PARAM_LANES(bc, CP_KV, c->kv);
    lanef kh = PARAM_LANES(bc, CP_KH, c->kh), kd = PARAM_LANES(bc, CP_KD, c->kd);
    const lanef zero = lane_zero(), one = lane_set1(1.0f);

    lanef vd = lane_sqrt(lane_add(lane_mul(dx, dx), lane_mul(dy, dy)));
    lanef sn, cs;
    lane_sincos(heading, &sn, &cs);
    /* Heading error from the desired direction in body axes: the paper's
     * atan(e_y / e_x) (atan2 needs no division by V_d), with
     * cos(err) = e_x / V_d as the forward part. Below the hold speed there
     * is no direction: err = 0 and V_fwd = 0. */
    lanem steer = lane_cmp_gt(vd, lane_set1(STEER_HOLD_SPEED));
    lanef ex = lane_add(lane_mul(cs, dx), lane_mul(sn, dy));
    lanef ey = lane_sub(lane_mul(cs, dy), lane_mul(sn, dx));
    lanef err = lane_select(steer, lane_atan2(ey, ex), zero);
    lanef cos_err = lane_div(ex, lane_select(steer, vd, one));
    lanef factor = lane_min(one, lane_max(zero, lane_add(one, cos_err)));
    lanef fwd = lane_select(steer, lane_mul(lane_min(vd, vmax), factor), zero);

    lanef u = lane_add(lane_mul(cs, vx), lane_mul(sn, vy)); /* body forward */
    lanef v = lane_sub(lane_mul(cs, vy), lane_mul(sn, vx)); /* body left */
    lanef g = lane_mul(mass, lane_min(kv, inv_dt));
    lanef fbx = lane_mul(g, lane_sub(fwd, u));
    lanef fby = lane_mul(g, lane_sub(zero, v));
    lanef fn_sq = lane_add(lane_mul(fbx, fbx), lane_mul(fby, fby));
    lanef fn = lane_sqrt(fn_sq);
    lanem clip = lane_cmp_gt(fn, fmax);
    lanef k = lane_div(fmax, lane_select(clip, fn, one));
    fbx = lane_select(clip, lane_mul(fbx, k), fbx);
    fby = lane_select(clip, lane_mul(fby, k), fby);
    /* R(z, theta) F_B */
    lane_store_n(c->fx + i, lane_sub(lane_mul(cs, fbx), lane_mul(sn, fby)), n);
    lane_store_n(c->fy + i, lane_add(lane_mul(sn, fbx), lane_mul(cs, fby)), n);

    lanef damping = lane_mul(lane_min(kd, inv_dt), omega);
    lanef tau = lane_mul(inertia, lane_sub(lane_mul(kh, err), damping));
    lane_store_n(c->tz + i, lane_min(lane_max(tau, lane_neg(tmax)), tmax), n);
}

static void control_range_2d(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const control_ctx_t* ctx = (const control_ctx_t*)vctx;
    world_t* w = ctx->w;
    const cols_2d_t c = {
        .vx = AGENT_F(w, AC_VEL_X),
        .vy = AGENT_F(w, AC_VEL_Y),
        .heading = AGENT_F(w, AC_HEADING),
        .omega = AGENT_F(w, AC_OMEGA_Z),
        .dx = AGENT_F(w, AC_DESIRED_X),
        .dy = AGENT_F(w, AC_DESIRED_Y),
        .mass = AGENT_F(w, AC_MASS),
        .inertia = AGENT_F(w, AC_INERTIA),
        .fmax = AGENT_F(w, AC_MAX_FORCE),
        .tmax = AGENT_F(w, AC_MAX_TORQUE),
        .vmax = AGENT_F(w, AC_MAX_SPEED),
        .kv = AGENT_F(w, AC_SPEED_GAIN),
        .kh = AGENT_F(w, AC_HEADING_GAIN),
        .kd = AGENT_F(w, AC_TURN_DAMPING),
        .fx = AGENT_F(w, AC_FORCE_X),
        .fy = AGENT_F(w, AC_FORCE_Y),
        .tz = AGENT_F(w, AC_TORQUE_Z),
    };
    const lanef inv_dt = lane_set1(1.0f / ctx->dt);
    int32_t i = begin;
    if (ctx->one) {
        for (; end - i >= SHOAL_LANES; i += SHOAL_LANES)
            control_lanes_2d(&c, i, SHOAL_LANES, inv_dt, ctx->param);
        if (i < end) control_lanes_2d(&c, i, end - i, inv_dt, ctx->param);
    } else {
        for (; end - i >= SHOAL_LANES; i += SHOAL_LANES) control_lanes_2d(&c, i, SHOAL_LANES, inv_dt, NULL);
        if (i < end) control_lanes_2d(&c, i, end - i, inv_dt, NULL);
    }
}

/* ---- 3D ------------------------------------------------------------------ */

typedef struct cols_3d {
    const float *qw, *qx, *qy, *qz, *vx, *vy, *vz, *ox, *oy, *oz, *dx, *dy, *dz;
    const float *mass, *inertia, *fmax, *tmax, *vmax, *kv, *kh, *kd;
    float *fx, *fy, *fz, *tx, *ty, *tz;
} cols_3d_t;

static inline __attribute__((always_inline)) void control_lanes_3d(const cols_3d_t* c, int32_t i, int32_t n,
                                                                   lanef inv_dt, const lanef* bc)
{
    const laneq q = {lane_load_n(c->qw + i, n), lane_load_n(c->qx + i, n), lane_load_n(c->qy + i, n),
                     lane_load_n(c->qz + i, n)};
    const lanev3 vel = {lane_load_n(c->vx + i, n), lane_load_n(c->vy + i, n), lane_load_n(c->vz + i, n)};
    const lanev3 omega = {lane_load_n(c->ox + i, n), lane_load_n(c->oy + i, n), lane_load_n(c->oz + i, n)};
    const lanev3 desired = {lane_load_n(c->dx + i, n), lane_load_n(c->dy + i, n), lane_load_n(c->dz + i, n)};
    lanef mass = PARAM_LANES(bc, CP_MASS, c->mass), inertia = PARAM_LANES(bc, CP_INERTIA, c->inertia);
    lanef fmax = PARAM_LANES(bc, CP_FMAX, c->fmax), tmax = PARAM_LANES(bc, CP_TMAX, c->tmax);
    lanef vmax = PARAM_LANES(bc, CP_VMAX, c->vmax), kv = PARAM_LANES(bc, CP_KV, c->kv);
    lanef kh = PARAM_LANES(bc, CP_KH, c->kh), kd = PARAM_LANES(bc, CP_KD, c->kd);
    const lanef zero = lane_zero(), one = lane_set1(1.0f);

    lanef vd = lane_sqrt(lanev3_dot(desired, desired));
    lanem steer = lane_cmp_gt(vd, lane_set1(STEER_HOLD_SPEED));
    lanev3 d = lanev3_scale(desired, lane_div(one, lane_select(steer, vd, one)));
    /* Desired attitude: yaw and pitch of d, no roll, i.e.
     * qd = qz(yaw) qy(-pitch) = (cy cp, sy sp, -cy sp, sy cp) in half-angle
     * cosines and sines (quat_from_yaw_pitch_roll with roll 0, multiplied
     * out). The half angles need no trig: with h = |d_xy| = cos(pitch),
     *   (1 + cos a, sin a) = 2 cos(a/2) (cos(a/2), sin(a/2)),
     *   (sin a, 1 - cos a) = 2 sin(a/2) (cos(a/2), sin(a/2)),
     * so (h + d_x, d_y) points along (cy, sy) for |yaw| <= pi/2 and
     * (d_y, h - d_x) beyond (both free of cancellation; the second may be
     * -(cy, sy), the same rotation, and e below is sign-normalized anyway),
     * and (1 + h, d_z) along (cp, sp). One normalization of the product
     * serves both. Straight up or down the yaw is 0, as atan2(0, 0):
     * below h = 1e-18 (where d_z rounds to +-1 and the yaw is noise) so
     * that the squares below stay normal floats (|(yc, ys)| >= h). */
    lanef h = lane_sqrt(lane_add(lane_mul(d.x, d.x), lane_mul(d.y, d.y)));
    lanem ahead = lane_cmp_ge(d.x, zero);
    lanem level = lane_cmp_gt(h, lane_set1(1e-18f));
    lanef yc = lane_select(level, lane_select(ahead, lane_add(h, d.x), d.y), one);
    lanef ys = lane_select(level, lane_select(ahead, d.y, lane_sub(h, d.x)), zero);
    lanef pc = lane_add(one, h), ps = d.z;
    lanef norm_sq =
        lane_mul(lane_add(lane_mul(yc, yc), lane_mul(ys, ys)), lane_add(lane_mul(pc, pc), lane_mul(ps, ps)));
    lanef inv_norm = lane_div(one, lane_sqrt(norm_sq));
    const laneq qd = {lane_mul(lane_mul(yc, pc), inv_norm), lane_mul(lane_mul(ys, ps), inv_norm),
                      lane_neg(lane_mul(lane_mul(yc, ps), inv_norm)), lane_mul(lane_mul(ys, pc), inv_norm)};
    /* Rotation vector of qd q*, the shorter way round (w >= 0):
     * axis * angle = v * 2 atan2(|v|, w) / |v|, and 0 where |v| = 0. */
    laneq e = laneq_mul(qd, laneq_conj(q));
    lanem flip = lane_cmp_lt(e.w, zero);
    e = (laneq){lane_select(flip, lane_neg(e.w), e.w), lane_select(flip, lane_neg(e.x), e.x),
                lane_select(flip, lane_neg(e.y), e.y), lane_select(flip, lane_neg(e.z), e.z)};
    lanev3 ev = {e.x, e.y, e.z};
    lanef s = lane_sqrt(lanev3_dot(ev, ev));
    lanem turn = lane_mask_and(steer, lane_cmp_gt(s, zero));
    lanef angle = lane_mul(lane_set1(2.0f), lane_atan2(s, e.w));
    lanef per_s = lane_select(turn, lane_div(angle, lane_select(turn, s, one)), zero);
    lanev3 rot = lanev3_scale(ev, per_s); /* world frame */

    lanev3 forward = laneq_rotate(q, (lanev3){one, zero, zero});
    lanef factor = lane_min(one, lane_max(zero, lane_add(one, lanev3_dot(forward, d))));
    lanef fwd = lane_select(steer, lane_mul(lane_min(vd, vmax), factor), zero);

    lanev3 vb = laneq_unrotate(q, vel);
    lanef g = lane_mul(mass, lane_min(kv, inv_dt));
    lanev3 fb = {lane_mul(g, lane_sub(fwd, vb.x)), lane_mul(g, lane_neg(vb.y)), lane_mul(g, lane_neg(vb.z))};
    fb = lanev3_clamp_length(fb, fmax);
    lanev3 f = laneq_rotate(q, fb);
    lanev3 damping = lanev3_scale(omega, lane_min(kd, inv_dt));
    lanev3 tau = lanev3_scale(lanev3_sub(lanev3_scale(rot, kh), damping), inertia);
    tau = lanev3_clamp_length(tau, tmax);
    lane_store_n(c->fx + i, f.x, n);
    lane_store_n(c->fy + i, f.y, n);
    lane_store_n(c->fz + i, f.z, n);
    lane_store_n(c->tx + i, tau.x, n);
    lane_store_n(c->ty + i, tau.y, n);
    lane_store_n(c->tz + i, tau.z, n);
}

static void control_range_3d(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const control_ctx_t* ctx = (const control_ctx_t*)vctx;
    world_t* w = ctx->w;
    const cols_3d_t c = {
        .qw = AGENT_F(w, AC_QW),
        .qx = AGENT_F(w, AC_QX),
        .qy = AGENT_F(w, AC_QY),
        .qz = AGENT_F(w, AC_QZ),
        .vx = AGENT_F(w, AC_VEL_X),
        .vy = AGENT_F(w, AC_VEL_Y),
        .vz = AGENT_F(w, AC_VEL_Z),
        .ox = AGENT_F(w, AC_OMEGA_X),
        .oy = AGENT_F(w, AC_OMEGA_Y),
        .oz = AGENT_F(w, AC_OMEGA_Z),
        .dx = AGENT_F(w, AC_DESIRED_X),
        .dy = AGENT_F(w, AC_DESIRED_Y),
        .dz = AGENT_F(w, AC_DESIRED_Z),
        .mass = AGENT_F(w, AC_MASS),
        .inertia = AGENT_F(w, AC_INERTIA),
        .fmax = AGENT_F(w, AC_MAX_FORCE),
        .tmax = AGENT_F(w, AC_MAX_TORQUE),
        .vmax = AGENT_F(w, AC_MAX_SPEED),
        .kv = AGENT_F(w, AC_SPEED_GAIN),
        .kh = AGENT_F(w, AC_HEADING_GAIN),
        .kd = AGENT_F(w, AC_TURN_DAMPING),
        .fx = AGENT_F(w, AC_FORCE_X),
        .fy = AGENT_F(w, AC_FORCE_Y),
        .fz = AGENT_F(w, AC_FORCE_Z),
        .tx = AGENT_F(w, AC_TORQUE_X),
        .ty = AGENT_F(w, AC_TORQUE_Y),
        .tz = AGENT_F(w, AC_TORQUE_Z),
    };
    const lanef inv_dt = lane_set1(1.0f / ctx->dt);
    int32_t i = begin;
    if (ctx->one) {
        for (; end - i >= SHOAL_LANES; i += SHOAL_LANES)
            control_lanes_3d(&c, i, SHOAL_LANES, inv_dt, ctx->param);
        if (i < end) control_lanes_3d(&c, i, end - i, inv_dt, ctx->param);
    } else {
        for (; end - i >= SHOAL_LANES; i += SHOAL_LANES) control_lanes_3d(&c, i, SHOAL_LANES, inv_dt, NULL);
        if (i < end) control_lanes_3d(&c, i, end - i, inv_dt, NULL);
    }
}

_Static_assert(sizeof(control_ctx_t) <= ROWS_CTX_BYTES, "control_ctx fits a fused pass's context");

rows_fn* control_rows(world_t* w, float dt, void* ctx)
{
    control_ctx_t* c = (control_ctx_t*)ctx;
    c->w = w;
    c->dt = dt;
    c->one = params_broadcast(w, control_params, CP_COUNT, c->param);
    return w->dims == 3 ? control_range_3d : control_range_2d;
}

int64_t control_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    control_ctx_t c;
    par_fn* fn = control_rows(w, dt, &c);
    return par_for_agents(w, 1024, PAR_AFFINE, fn, &c);
}
