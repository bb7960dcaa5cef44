/* Seek, flee, arrival and departure ("Individual behaviors" of
 * "Behavior-based control examples", after Reynolds).
 *
 * Each behavior gives a desired velocity vector; the agent's command is the
 * weighted sum, from which the controller takes V_d = |V| and theta_d as the
 * direction of V (the paper's theta + atan(e_y / e_x) in body axes is the
 * same angle as atan2 of the world error). Working with the vector keeps
 * the sum meaningful and extends to 3D, where the direction gives yaw and
 * pitch. */
#include <math.h>
#include <string.h>

#include "modules/motion/motion.h"
#include "ecs/parallel.h"
#include "simd/lanes.h"
#include "modules/agent.h"

typedef struct steer_ctx {
    world_t* w;
    int none; /* no row weighs any of these behaviors (world_t.params_one) */
} steer_ctx_t;

/* The columns steer reads and writes, looked up once per range. */
typedef struct steer_cols {
    const float* px;
    const float* py;
    const float* pz;
    const float* heading;
    const float* mass;
    const float* fmax;
    const float* vmax;
    const float* radius;
    const float* w_seek;
    const float* w_flee;
    const float* w_arrive;
    const float* w_depart;
    const float* k_arrive;
    const float* k_depart;
    const float* tx;
    const float* ty;
    const float* tz;
    const float* hx;
    const float* hy;
    const float* hz;
    float* dx;
    float* dy;
    float* dz;
} steer_cols_t;

static steer_cols_t steer_columns(world_t* w)
{
    steer_cols_t c = {.px = AGENT_F(w, AC_POS_X),
                      .py = AGENT_F(w, AC_POS_Y),
                      .pz = AGENT_F(w, AC_POS_Z),
                      .heading = AGENT_F(w, AC_HEADING),
                      .mass = AGENT_F(w, AC_MASS),
                      .fmax = AGENT_F(w, AC_MAX_FORCE),
                      .vmax = AGENT_F(w, AC_MAX_SPEED),
                      .radius = AGENT_F(w, AC_RADIUS),
                      .w_seek = AGENT_F(w, AC_W_SEEK),
                      .w_flee = AGENT_F(w, AC_W_FLEE),
                      .w_arrive = AGENT_F(w, AC_W_ARRIVE),
                      .w_depart = AGENT_F(w, AC_W_DEPART),
                      .k_arrive = AGENT_F(w, AC_ARRIVE_GAIN),
                      .k_depart = AGENT_F(w, AC_DEPART_GAIN),
                      .tx = AGENT_F(w, AC_TARGET_X),
                      .ty = AGENT_F(w, AC_TARGET_Y),
                      .tz = AGENT_F(w, AC_TARGET_Z),
                      .hx = AGENT_F(w, AC_THREAT_X),
                      .hy = AGENT_F(w, AC_THREAT_Y),
                      .hz = AGENT_F(w, AC_THREAT_Z),
                      .dx = AGENT_F(w, AC_DESIRED_X),
                      .dy = AGENT_F(w, AC_DESIRED_Y),
                      .dz = AGENT_F(w, AC_DESIRED_Z)};
    return c;
}

/* The full path for agent row i. */
static inline void steer_one(const steer_cols_t* c, int32_t i, int three)
{
    const float* px = c->px;
    const float* py = c->py;
    const float* pz = c->pz;
    const float* heading = c->heading;
    const float* mass = c->mass;
    const float* fmax = c->fmax;
    const float* vmax = c->vmax;
    const float* radius = c->radius;
    const float* w_seek = c->w_seek;
    const float* w_flee = c->w_flee;
    const float* w_arrive = c->w_arrive;
    const float* w_depart = c->w_depart;
    const float* k_arrive = c->k_arrive;
    const float* k_depart = c->k_depart;
    const float* tx = c->tx;
    const float* ty = c->ty;
    const float* tz = c->tz;
    const float* hx = c->hx;
    const float* hy = c->hy;
    const float* hz = c->hz;
    float* dx = c->dx;
    float* dy = c->dy;
    float* dz = c->dz;

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

/* steer_one for the whole lane of agents [i, i + SHOAL_LANES), each lane
 * with steer_one's operations in its order (fminf's and fmaxf's NaN rules
 * included), so the same bits; 0 (nothing written) when a lane flees a
 * threat it stands on, which steer_one turns by its heading. */
static inline int steer_lanes(const steer_cols_t* c, int32_t i, int three)
{
    const lanef zero = lane_zero();
    const lanef px = lane_loadu(c->px + i), py = lane_loadu(c->py + i);
    const lanef pz = three ? lane_loadu(c->pz + i) : zero;
    const lanef ex = lane_sub(lane_loadu(c->tx + i), px), ey = lane_sub(lane_loadu(c->ty + i), py);
    const lanef ez = three ? lane_sub(lane_loadu(c->tz + i), pz) : zero;
    const lanef fx = lane_sub(lane_loadu(c->hx + i), px), fy = lane_sub(lane_loadu(c->hy + i), py);
    const lanef fz = three ? lane_sub(lane_loadu(c->hz + i), pz) : zero;
    const lanef e2 = lane_add(lane_add(lane_mul(ex, ex), lane_mul(ey, ey)), lane_mul(ez, ez));
    const lanef f2 = lane_add(lane_add(lane_mul(fx, fx), lane_mul(fy, fy)), lane_mul(fz, fz));
    const lanef e = lane_sqrt(e2), f = lane_sqrt(f2);
    const lanef w_seek = lane_loadu(c->w_seek + i), w_flee = lane_loadu(c->w_flee + i);
    const lanef w_arrive = lane_loadu(c->w_arrive + i), w_depart = lane_loadu(c->w_depart + i);
    const lanef vmax = lane_loadu(c->vmax + i);
    const lanem has_e = lane_cmp_gt(e, zero), has_f = lane_cmp_gt(f, zero);
    const lanem flee = lane_cmp_neq(w_flee, zero);
    if (lane_mask_any(lane_mask_andnot(flee, has_f))) return 0;
    lanef vx = zero, vy = zero, vz = zero;
    const lanem seek = lane_mask_and(lane_cmp_neq(w_seek, zero), has_e);
    if (lane_mask_any(seek)) {
        const lanef k = lane_div(lane_mul(w_seek, vmax), e);
        vx = lane_select(seek, lane_add(vx, lane_mul(k, ex)), vx);
        vy = lane_select(seek, lane_add(vy, lane_mul(k, ey)), vy);
        vz = lane_select(seek, lane_add(vz, lane_mul(k, ez)), vz);
    }
    if (lane_mask_any(flee)) {
        const lanef k = lane_div(lane_mul(w_flee, vmax), f);
        vx = lane_select(flee, lane_sub(vx, lane_mul(k, fx)), vx);
        vy = lane_select(flee, lane_sub(vy, lane_mul(k, fy)), vy);
        vz = lane_select(flee, lane_sub(vz, lane_mul(k, fz)), vz);
    }
    const lanem arrive = lane_mask_and(lane_cmp_neq(w_arrive, zero), has_e);
    if (lane_mask_any(arrive)) { /* braking_speed(k_arrive e, e, 0, vmax, fmax, mass) */
        const lanef a_brake =
            lane_div(lane_mul(lane_set1(0.5f), lane_loadu(c->fmax + i)), lane_loadu(c->mass + i));
        const lanef s =
            lane_sqrt(lane_add(lane_mul(zero, zero), lane_mul(lane_mul(lane_set1(2.0f), a_brake), e)));
        const lanef cap = lane_select(lane_cmp_eq(s, s), lane_min(vmax, s), vmax); /* fminf */
        const lanef speed = lane_min(lane_mul(lane_loadu(c->k_arrive + i), e), cap);
        const lanef k = lane_div(lane_mul(w_arrive, speed), e);
        vx = lane_select(arrive, lane_add(vx, lane_mul(k, ex)), vx);
        vy = lane_select(arrive, lane_add(vy, lane_mul(k, ey)), vy);
        vz = lane_select(arrive, lane_add(vz, lane_mul(k, ez)), vz);
    }
    const lanem depart = lane_mask_and(lane_cmp_neq(w_depart, zero), has_f);
    if (lane_mask_any(depart)) {
        const lanef r = lane_loadu(c->radius + i);
        const lanef floor2 = lane_max(lane_mul(r, r), lane_set1(1e-6f)); /* fmaxf: NaN gives the floor */
        const lanef k = lane_div(lane_mul(w_depart, lane_loadu(c->k_depart + i)), lane_max(f2, floor2));
        vx = lane_select(depart, lane_sub(vx, lane_mul(k, fx)), vx);
        vy = lane_select(depart, lane_sub(vy, lane_mul(k, fy)), vy);
        vz = lane_select(depart, lane_sub(vz, lane_mul(k, fz)), vz);
    }
    lane_storeu(c->dx + i, vx);
    lane_storeu(c->dy + i, vy);
    if (three) lane_storeu(c->dz + i, vz);
    return 1;
}

static void steer_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    world_t* w = ((steer_ctx_t*)vctx)->w;
    const int three = w->dims == 3; /* z columns do not exist in 2D */
    const steer_cols_t cols = steer_columns(w);
    const float *w_seek = cols.w_seek, *w_flee = cols.w_flee, *w_arrive = cols.w_arrive,
                *w_depart = cols.w_depart;
    float *dx = cols.dx, *dy = cols.dy, *dz = cols.dz;
    if (((steer_ctx_t*)vctx)->none) {
        /* Every weight column holds zero: the zeros, without reading them. */
        memset(dx + begin, 0, (size_t)(end - begin) * sizeof(float));
        memset(dy + begin, 0, (size_t)(end - begin) * sizeof(float));
        if (three) memset(dz + begin, 0, (size_t)(end - begin) * sizeof(float));
        return;
    }
    /* Most agents of a flock use none of these behaviors: their desired
     * velocity is cleared without reading targets and threats (the same
     * zeros the full path would write), a lane of agents at a time. */
    const lanef zero = lane_zero();
    for (int32_t i0 = begin; i0 < end; i0 += SHOAL_LANES) {
        if (i0 + SHOAL_LANES <= end) {
            lanem used = lane_mask_or(lane_mask_or(lane_cmp_neq(lane_loadu(w_seek + i0), zero),
                                                   lane_cmp_neq(lane_loadu(w_flee + i0), zero)),
                                      lane_mask_or(lane_cmp_neq(lane_loadu(w_arrive + i0), zero),
                                                   lane_cmp_neq(lane_loadu(w_depart + i0), zero)));
            if (!lane_mask_any(used)) {
                lane_storeu(dx + i0, zero);
                lane_storeu(dy + i0, zero);
                if (three) lane_storeu(dz + i0, zero);
                continue;
            }
        }
        if (i0 + SHOAL_LANES <= end && steer_lanes(&cols, i0, three)) continue;
        int32_t i1 = i0 + SHOAL_LANES < end ? i0 + SHOAL_LANES : end;
        for (int32_t i = i0; i < i1; ++i) steer_one(&cols, i, three);
    }
}

int64_t steer_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    static const int weights[] = {AC_W_SEEK, AC_W_FLEE, AC_W_ARRIVE, AC_W_DEPART};
    float v[4];
    steer_ctx_t c = {w, agent_params_one(w, weights, 4, v) && v[0] == 0.0f && v[1] == 0.0f && v[2] == 0.0f &&
                            v[3] == 0.0f};
    par_for(w, w->agents.count, 1024, PAR_AFFINE, steer_range, &c);
    return w->agents.count;
}
