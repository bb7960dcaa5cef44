/* Integration: the only writer of positions, velocities and orientations.
 *
 * Semi-implicit Euler on m dV/dt = F and I d(omega)/dt = tau: velocity first,
 * clamped to V_max, then position with the new velocity; angular velocity
 * clamped to the max turn rate, then heading (2D) or the quaternion (3D).
 * Clamping after each update is what guarantees the limits hold every step,
 * whatever the controller asked for.
 *
 * Both kernels run a lane of agents at a time (lane_math.h for the angle
 * wrap, the quaternion and the 3D yaw), the last partial lane of a range
 * with partial loads and stores, as in control.c: no row outside the range
 * is read or written, so padded rows stay zero. Padding lanes have mass and
 * inertia 0; they divide by 1 instead so that no lane computes a NaN. */
#include <math.h>

#include "modules/motion/motion.h"
#include "ecs/parallel.h"
#include "simd/lane_math.h"
#include "simd/lanes.h"
#include "modules/agent.h"

/* The parameters a row's integration reads, in this order; broadcast when
 * each holds one value in every row (world_t.params_one), as in control.c. */
static const int integrate_params[] = {AC_MASS, AC_INERTIA, AC_MAX_SPEED, AC_MAX_TURN_RATE};
enum { IP_MASS, IP_INERTIA, IP_VMAX, IP_WMAX, IP_COUNT };

typedef struct integrate_ctx {
    world_t* w;
    float dt;
    int one;
    lanef param[IP_COUNT];
} integrate_ctx_t;


/* x where x > 0, else 1: a divisor for rows that may be padding. */
static inline lanef positive_or_one(lanef x)
{
    return lane_select(lane_cmp_gt(x, lane_zero()), x, lane_set1(1.0f));
}

/* ---- 2D ------------------------------------------------------------------ */

typedef struct cols_2d {
    float *px, *py, *vx, *vy, *heading, *omega;
    const float *fx, *fy, *tz, *mass, *inertia, *vmax, *wmax;
} cols_2d_t;

static inline __attribute__((always_inline)) void integrate_lanes_2d(const cols_2d_t* c, int32_t i, int32_t n,
                                                                     lanef dt, const lanef* bc)
{
    lanef fx = lane_load_n(c->fx + i, n), fy = lane_load_n(c->fy + i, n), tz = lane_load_n(c->tz + i, n);
    /* Divides are the bottleneck here (a 512-bit one issues about every 16
     * cycles): one for 1/m serves both force components. */
    lanef inv_m = lane_div(lane_set1(1.0f), positive_or_one(PARAM_LANES(bc, IP_MASS, c->mass)));
    lanef inertia = positive_or_one(PARAM_LANES(bc, IP_INERTIA, c->inertia));
    lanef vmax = PARAM_LANES(bc, IP_VMAX, c->vmax), wmax = PARAM_LANES(bc, IP_WMAX, c->wmax);

    lanef nvx = lane_add(lane_load_n(c->vx + i, n), lane_mul(lane_mul(fx, inv_m), dt));
    lanef nvy = lane_add(lane_load_n(c->vy + i, n), lane_mul(lane_mul(fy, inv_m), dt));
    lanef s2 = lane_add(lane_mul(nvx, nvx), lane_mul(nvy, nvy));
    lanem over = lane_cmp_gt(s2, lane_mul(vmax, vmax));
    lanef k = lane_div(vmax, lane_sqrt(lane_select(over, s2, lane_set1(1.0f))));
    nvx = lane_select(over, lane_mul(nvx, k), nvx);
    nvy = lane_select(over, lane_mul(nvy, k), nvy);
    lane_store_n(c->vx + i, nvx, n);
    lane_store_n(c->vy + i, nvy, n);
    lane_store_n(c->px + i, lane_add(lane_load_n(c->px + i, n), lane_mul(nvx, dt)), n);
    lane_store_n(c->py + i, lane_add(lane_load_n(c->py + i, n), lane_mul(nvy, dt)), n);

    lanef om = lane_add(lane_load_n(c->omega + i, n), lane_mul(lane_div(tz, inertia), dt));
    om = lane_min(lane_max(om, lane_neg(wmax)), wmax);
    lane_store_n(c->omega + i, om, n);
    lanef heading = lane_add(lane_load_n(c->heading + i, n), lane_mul(om, dt));
    lane_store_n(c->heading + i, lane_wrap_angle(heading), n);
}

static void integrate_range_2d(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const integrate_ctx_t* ctx = (const integrate_ctx_t*)vctx;
    world_t* w = ctx->w;
    const cols_2d_t c = {
        .px = AGENT_F(w, AC_POS_X),
        .py = AGENT_F(w, AC_POS_Y),
        .vx = AGENT_F(w, AC_VEL_X),
        .vy = AGENT_F(w, AC_VEL_Y),
        .heading = AGENT_F(w, AC_HEADING),
        .omega = AGENT_F(w, AC_OMEGA_Z),
        .fx = AGENT_F(w, AC_FORCE_X),
        .fy = AGENT_F(w, AC_FORCE_Y),
        .tz = AGENT_F(w, AC_TORQUE_Z),
        .mass = AGENT_F(w, AC_MASS),
        .inertia = AGENT_F(w, AC_INERTIA),
        .vmax = AGENT_F(w, AC_MAX_SPEED),
        .wmax = AGENT_F(w, AC_MAX_TURN_RATE),
    };
    const lanef dt = lane_set1(ctx->dt);
    int32_t i = begin;
    if (ctx->one) {
        for (; end - i >= SHOAL_LANES; i += SHOAL_LANES)
            integrate_lanes_2d(&c, i, SHOAL_LANES, dt, ctx->param);
        if (i < end) integrate_lanes_2d(&c, i, end - i, dt, ctx->param);
    } else {
        for (; end - i >= SHOAL_LANES; i += SHOAL_LANES) integrate_lanes_2d(&c, i, SHOAL_LANES, dt, NULL);
        if (i < end) integrate_lanes_2d(&c, i, end - i, dt, NULL);
    }
}

/* ---- 3D ------------------------------------------------------------------ */

typedef struct cols_3d {
    float *px, *py, *pz, *vx, *vy, *vz, *ox, *oy, *oz, *qw, *qx, *qy, *qz, *heading;
    const float *fx, *fy, *fz, *tx, *ty, *tz, *mass, *inertia, *vmax, *wmax;
} cols_3d_t;

static inline __attribute__((always_inline)) void integrate_lanes_3d(const cols_3d_t* c, int32_t i, int32_t n,
                                                                     lanef dt, const lanef* bc)
{
    lanef inv_m = lane_div(lane_set1(1.0f), positive_or_one(PARAM_LANES(bc, IP_MASS, c->mass)));
    lanef inv_i = lane_div(lane_set1(1.0f), positive_or_one(PARAM_LANES(bc, IP_INERTIA, c->inertia)));

    lanev3 v = {lane_load_n(c->vx + i, n), lane_load_n(c->vy + i, n), lane_load_n(c->vz + i, n)};
    const lanev3 f = {lane_load_n(c->fx + i, n), lane_load_n(c->fy + i, n), lane_load_n(c->fz + i, n)};
    v = lanev3_add(v, lanev3_scale(lanev3_scale(f, inv_m), dt));
    v = lanev3_clamp_length(v, PARAM_LANES(bc, IP_VMAX, c->vmax));
    lane_store_n(c->vx + i, v.x, n);
    lane_store_n(c->vy + i, v.y, n);
    lane_store_n(c->vz + i, v.z, n);
    lane_store_n(c->px + i, lane_add(lane_load_n(c->px + i, n), lane_mul(v.x, dt)), n);
    lane_store_n(c->py + i, lane_add(lane_load_n(c->py + i, n), lane_mul(v.y, dt)), n);
    lane_store_n(c->pz + i, lane_add(lane_load_n(c->pz + i, n), lane_mul(v.z, dt)), n);

    lanev3 om = {lane_load_n(c->ox + i, n), lane_load_n(c->oy + i, n), lane_load_n(c->oz + i, n)};
    const lanev3 tau = {lane_load_n(c->tx + i, n), lane_load_n(c->ty + i, n), lane_load_n(c->tz + i, n)};
    om = lanev3_add(om, lanev3_scale(lanev3_scale(tau, inv_i), dt));
    om = lanev3_clamp_length(om, PARAM_LANES(bc, IP_WMAX, c->wmax));
    lane_store_n(c->ox + i, om.x, n);
    lane_store_n(c->oy + i, om.y, n);
    lane_store_n(c->oz + i, om.z, n);

    /* quat_integrate: one explicit step of dq/dt = 0.5 (0, omega) q (omega
     * in the world frame), renormalized. Padding lanes (q = 0) come out as
     * the identity but are not stored. */
    laneq q = {lane_load_n(c->qw + i, n), lane_load_n(c->qx + i, n), lane_load_n(c->qy + i, n),
               lane_load_n(c->qz + i, n)};
    laneq dq = laneq_mul((laneq){lane_zero(), om.x, om.y, om.z}, q);
    lanef h = lane_mul(lane_set1(0.5f), dt);
    q = (laneq){lane_add(q.w, lane_mul(h, dq.w)), lane_add(q.x, lane_mul(h, dq.x)),
                lane_add(q.y, lane_mul(h, dq.y)), lane_add(q.z, lane_mul(h, dq.z))};
    q = laneq_normalize(q);
    lane_store_n(c->qw + i, q.w, n);
    lane_store_n(c->qx + i, q.x, n);
    lane_store_n(c->qy + i, q.y, n);
    lane_store_n(c->qz + i, q.z, n);
    /* quat_yaw: the heading of the forward axis. */
    lanev3 forward = laneq_rotate(q, (lanev3){lane_set1(1.0f), lane_zero(), lane_zero()});
    lane_store_n(c->heading + i, lane_atan2(forward.y, forward.x), n);
}

static void integrate_range_3d(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const integrate_ctx_t* ctx = (const integrate_ctx_t*)vctx;
    world_t* w = ctx->w;
    const cols_3d_t c = {
        .px = AGENT_F(w, AC_POS_X),
        .py = AGENT_F(w, AC_POS_Y),
        .pz = AGENT_F(w, AC_POS_Z),
        .vx = AGENT_F(w, AC_VEL_X),
        .vy = AGENT_F(w, AC_VEL_Y),
        .vz = AGENT_F(w, AC_VEL_Z),
        .ox = AGENT_F(w, AC_OMEGA_X),
        .oy = AGENT_F(w, AC_OMEGA_Y),
        .oz = AGENT_F(w, AC_OMEGA_Z),
        .qw = AGENT_F(w, AC_QW),
        .qx = AGENT_F(w, AC_QX),
        .qy = AGENT_F(w, AC_QY),
        .qz = AGENT_F(w, AC_QZ),
        .heading = AGENT_F(w, AC_HEADING),
        .fx = AGENT_F(w, AC_FORCE_X),
        .fy = AGENT_F(w, AC_FORCE_Y),
        .fz = AGENT_F(w, AC_FORCE_Z),
        .tx = AGENT_F(w, AC_TORQUE_X),
        .ty = AGENT_F(w, AC_TORQUE_Y),
        .tz = AGENT_F(w, AC_TORQUE_Z),
        .mass = AGENT_F(w, AC_MASS),
        .inertia = AGENT_F(w, AC_INERTIA),
        .vmax = AGENT_F(w, AC_MAX_SPEED),
        .wmax = AGENT_F(w, AC_MAX_TURN_RATE),
    };
    const lanef dt = lane_set1(ctx->dt);
    int32_t i = begin;
    if (ctx->one) {
        for (; end - i >= SHOAL_LANES; i += SHOAL_LANES)
            integrate_lanes_3d(&c, i, SHOAL_LANES, dt, ctx->param);
        if (i < end) integrate_lanes_3d(&c, i, end - i, dt, ctx->param);
    } else {
        for (; end - i >= SHOAL_LANES; i += SHOAL_LANES) integrate_lanes_3d(&c, i, SHOAL_LANES, dt, NULL);
        if (i < end) integrate_lanes_3d(&c, i, end - i, dt, NULL);
    }
}

_Static_assert(sizeof(integrate_ctx_t) <= ROWS_CTX_BYTES, "integrate_ctx fits a fused pass's context");

rows_fn* integrate_rows(world_t* w, float dt, void* ctx)
{
    integrate_ctx_t* c = (integrate_ctx_t*)ctx;
    c->w = w;
    c->dt = dt;
    c->one = params_broadcast(w, integrate_params, IP_COUNT, c->param);
    return w->dims == 3 ? integrate_range_3d : integrate_range_2d;
}

int64_t integrate_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    integrate_ctx_t c;
    par_fn* fn = integrate_rows(w, dt, &c);
    return par_for_agents(w, 1024, PAR_AFFINE, fn, &c);
}
