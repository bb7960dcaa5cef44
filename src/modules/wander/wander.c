/* Wander ("Wander" of "Behavior-based control examples", after Reynolds):
 * a random walk of the wander velocity on a sphere (circle in 2D) of radius
 * K_wander centered on the nominal velocity V_0:
 *
 *   n        uniform in [-1, 1]^d, one draw per agent and step
 *   r_noise  = K_noise n / |n|
 *   V_wander = K_wander (V_wander + r_noise) / |V_wander + r_noise|
 *   V        = V_0 + V_wander,   V_0 = cruise_speed * forward
 *
 * and the desired velocity gets weight * V added (steer set it first).
 *
 * Choices the paper leaves open:
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
 * Random numbers come from rng.h keyed by (world seed, global id, step
 * count, stream): a pure function of the agent's identity and the step,
 * never of its slot or row (rows move on reorder) or of the thread that
 * runs it, so the walk is the same for any thread count or storage. */
#include <math.h>
#include <string.h>

#include "modules/wander/wander.h"
#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "ecs/rng.h"
#include "simd/lane_math.h"
#include "simd/vec.h"
#include "modules/agent.h"

/* Streams of the wander draws, one per axis; far from small integers so
 * that other systems numbering their streams from 0 cannot collide. */
#define WANDER_STREAM 0x57414e00u /* "WAN\0" */

/* The wander component's columns: the random key, the parameters and the
 * walk's current wander velocity. */
typedef struct wander_view {
    const uint32_t* slot;
    const int32_t* agent_row;
    const uint32_t* key;
    const float *weight, *cruise, *strength, *noise;
    float *wvx, *wvy, *wvz;
} wander_view_t;

#define WANDER_BLOCK_ONE 128 /* WANDER_BLOCK, defined below */

/* Reads heading (2D) or the quaternion (3D); writes desired (+=) and the
 * wander velocity. */
typedef struct wander_ctx {
    world_t* w;
    agent_view_t a;
    wander_view_t v;
    /* When each parameter column holds one value (wander_params_one), a
     * block's lane pass reads these copies of it instead of the columns. */
    int one;
    _Alignas(SHOAL_LANE_ALIGN) float one_weight[WANDER_BLOCK_ONE];
    _Alignas(SHOAL_LANE_ALIGN) float one_cruise[WANDER_BLOCK_ONE];
    _Alignas(SHOAL_LANE_ALIGN) float one_strength[WANDER_BLOCK_ONE];
    _Alignas(SHOAL_LANE_ALIGN) float one_noise[WANDER_BLOCK_ONE];
} wander_ctx_t;

/* Rows go through in blocks: a scalar pass draws the noise and gathers the
 * agent-indexed inputs into small buffers, a lane pass does the two
 * normalizations and the sincos, and a scalar pass scatters the result into
 * the agent-indexed desired velocity. The lane pass computes the same
 * correctly rounded operations as a scalar loop would (sqrt, div, and
 * -ffp-contract=off), so the bits do not depend on the lane count. */
#define WANDER_BLOCK 128 /* a multiple of every lane count */
_Static_assert(WANDER_BLOCK == WANDER_BLOCK_ONE, "wander_ctx's copies are a block long");

typedef struct wander_block {
    _Alignas(SHOAL_LANE_ALIGN) float nx[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float ny[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float nz[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float fx[WANDER_BLOCK]; /* heading (2D) or forward x (3D) */
    _Alignas(SHOAL_LANE_ALIGN) float fy[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float fz[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float ox[WANDER_BLOCK]; /* weight * V, per row */
    _Alignas(SHOAL_LANE_ALIGN) float oy[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float oz[WANDER_BLOCK];
    /* Row-indexed columns for a partial block, copied so that the lane pass
     * never reads or writes past the end of a range. */
    _Alignas(SHOAL_LANE_ALIGN) float wvx[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float wvy[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float wvz[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float noise[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float strength[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float cruise[WANDER_BLOCK];
    _Alignas(SHOAL_LANE_ALIGN) float weight[WANDER_BLOCK];
    int32_t row[WANDER_BLOCK];
} wander_block_t;

/* The lane pass over n rows (n a multiple of SHOAL_LANES): the row-indexed
 * columns are passed in (either the tables' own or the block's copies). */
static void wander_lanes(wander_block_t* b, int32_t n, int three, float* wvx, float* wvy, float* wvz,
                         const float* noise, const float* strength, const float* cruise, const float* weight)
{
    const lanef zero = lane_zero(), one = lane_set1(1.0f);
    for (int32_t k = 0; k < n; k += SHOAL_LANES) {
        lanef nx = lane_load(b->nx + k), ny = lane_load(b->ny + k);
        lanef nz = three ? lane_load(b->nz + k) : zero;
        lanef n2 = lane_add(lane_add(lane_mul(nx, nx), lane_mul(ny, ny)), lane_mul(nz, nz));
        lanem npos = lane_cmp_gt(n2, zero);
        lanef inv = lane_div(one, lane_sqrt(n2));
        nx = lane_select(npos, lane_mul(nx, inv), one);
        ny = lane_select(npos, lane_mul(ny, inv), zero);
        nz = lane_select(npos, lane_mul(nz, inv), zero);

        lanef ns = lane_loadu(noise + k);
        lanef ox = lane_loadu(wvx + k), oy = lane_loadu(wvy + k);
        lanef oz = three ? lane_loadu(wvz + k) : zero;
        lanef vx = lane_add(ox, lane_mul(ns, nx)), vy = lane_add(oy, lane_mul(ns, ny));
        lanef vz = three ? lane_add(oz, lane_mul(ns, nz)) : zero;
        lanef v2 = lane_add(lane_add(lane_mul(vx, vx), lane_mul(vy, vy)), lane_mul(vz, vz));
        lanem vpos = lane_cmp_gt(v2, zero);
        lanef kk = lane_div(lane_loadu(strength + k), lane_sqrt(v2));
        /* v2 == 0 keeps the old direction (see the file comment) */
        vx = lane_select(vpos, lane_mul(vx, kk), ox);
        vy = lane_select(vpos, lane_mul(vy, kk), oy);
        vz = lane_select(vpos, lane_mul(vz, kk), oz);
        lane_storeu(wvx + k, vx);
        lane_storeu(wvy + k, vy);
        if (three) lane_storeu(wvz + k, vz); /* in 2D it stays 0 */

        lanef fx, fy, fz;
        if (three) {
            fx = lane_load(b->fx + k);
            fy = lane_load(b->fy + k);
            fz = lane_load(b->fz + k);
        } else {
            lane_sincos(lane_load(b->fx + k), &fy, &fx);
            fz = zero;
        }
        lanef cr = lane_loadu(cruise + k), wt = lane_loadu(weight + k);
        lane_store(b->ox + k, lane_mul(wt, lane_add(lane_mul(fx, cr), vx))); /* V_0 + V_wander */
        lane_store(b->oy + k, lane_mul(wt, lane_add(lane_mul(fy, cr), vy)));
        lane_store(b->oz + k, lane_mul(wt, lane_add(lane_mul(fz, cr), vz)));
    }
}

static void wander_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const wander_ctx_t* c = (const wander_ctx_t*)vctx;
    const world_t* w = c->w;
    const int three = w->dims == 3; /* z, quaternion columns exist only in 3D */
    const int32_t* rows = c->v.agent_row;
    const float *weight = c->v.weight, *cruise = c->v.cruise, *strength = c->v.strength, *noise = c->v.noise;
    float *wvx = c->v.wvx, *wvy = c->v.wvy, *wvz = c->v.wvz;
    const float* heading = c->a.heading;
    const float *qw = c->a.qw, *qx = c->a.qx, *qy = c->a.qy, *qz = c->a.qz;
    float *dx = c->a.dx, *dy = c->a.dy, *dz = c->a.dz;
    const uint64_t seed_round = rng_seed_round(w->seed), step = w->step_count;
    wander_block_t b;
    uint64_t bits[WANDER_BLOCK];

    for (int32_t r0 = begin; r0 < end; r0 += WANDER_BLOCK) {
        int32_t m = end - r0 < WANDER_BLOCK ? end - r0 : WANDER_BLOCK;
        /* The draws: integer arithmetic only, which the compiler vectorizes
         * (64-bit lanes), in every build alike. One 64-bit draw gives x and
         * y (24 bits each); z takes a second. */
        for (int32_t k = 0; k < m; ++k) {
            bits[k] = rng_base_from(seed_round, agent_global_id(w, rows[r0 + k]), step);
        }
        for (int32_t k = 0; k < m; ++k) {
            b.nx[k] = (float)(int32_t)(bits[k] >> 40) * (2.0f / 16777216.0f) - 1.0f;
            b.ny[k] = (float)(int32_t)((bits[k] >> 16) & 0xffffffu) * (2.0f / 16777216.0f) - 1.0f;
        }
        if (three)
            for (int32_t k = 0; k < m; ++k)
                b.nz[k] =
                    (float)(int32_t)(rng_stream(bits[k], WANDER_STREAM) >> 40) * (2.0f / 16777216.0f) - 1.0f;
        /* Agent rows: after a reorder, a flock whose agents all wander has
         * component row r at agent row r, so a block's rows are usually one
         * run and gather and scatter become plain loads and stores. */
        const int32_t i0 = rows[r0];
        int run = 1;
        for (int32_t k = 0; k < m; ++k) run &= rows[r0 + k] == i0 + k;
        for (int32_t k = 0; k < m; ++k) b.row[k] = rows[r0 + k];
        if (three) {
            for (int32_t k = 0; k < m; ++k) {
                int32_t i = b.row[k];
                quat q = {qw[i], qx[i], qy[i], qz[i]};
                vec3 fwd = quat_forward(q);
                b.fx[k] = fwd.x;
                b.fy[k] = fwd.y;
                b.fz[k] = fwd.z;
            }
        } else if (run) {
            memcpy(b.fx, heading + i0, (size_t)m * sizeof(float));
        } else {
            for (int32_t k = 0; k < m; ++k) b.fx[k] = heading[b.row[k]];
        }
        if (m == WANDER_BLOCK) {
            if (c->one)
                wander_lanes(&b, m, three, wvx + r0, wvy + r0, wvz + r0, c->one_noise, c->one_strength,
                             c->one_cruise, c->one_weight);
            else
                wander_lanes(&b, m, three, wvx + r0, wvy + r0, wvz + r0, noise + r0, strength + r0,
                             cruise + r0, weight + r0);
        } else {
            /* Partial block: pad to whole lanes with harmless values. */
            int32_t n = (m + SHOAL_LANES - 1) / SHOAL_LANES * SHOAL_LANES;
            for (int32_t k = 0; k < n; ++k) {
                int in = k < m;
                int32_t r = r0 + k;
                b.wvx[k] = in ? wvx[r] : 0.0f;
                b.wvy[k] = in ? wvy[r] : 0.0f;
                b.wvz[k] = in ? wvz[r] : 0.0f;
                b.noise[k] = in ? noise[r] : 0.0f;
                b.strength[k] = in ? strength[r] : 0.0f;
                b.cruise[k] = in ? cruise[r] : 0.0f;
                b.weight[k] = in ? weight[r] : 0.0f;
                if (!in) b.nx[k] = b.ny[k] = b.nz[k] = b.fx[k] = b.fy[k] = b.fz[k] = 0.0f;
            }
            wander_lanes(&b, n, three, b.wvx, b.wvy, b.wvz, b.noise, b.strength, b.cruise, b.weight);
            for (int32_t k = 0; k < m; ++k) {
                wvx[r0 + k] = b.wvx[k];
                wvy[r0 + k] = b.wvy[k];
                if (three) wvz[r0 + k] = b.wvz[k];
            }
        }
        if (run) {
            float* rx = dx + i0;
            float* ry = dy + i0;
            for (int32_t k = 0; k < m; ++k) rx[k] += b.ox[k];
            for (int32_t k = 0; k < m; ++k) ry[k] += b.oy[k];
            if (three) {
                float* rz = dz + i0;
                for (int32_t k = 0; k < m; ++k) rz[k] += b.oz[k];
            }
        } else {
            for (int32_t k = 0; k < m; ++k) {
                int32_t i = b.row[k];
                dx[i] += b.ox[k];
                dy[i] += b.oy[k];
            }
            if (three)
                for (int32_t k = 0; k < m; ++k) dz[b.row[k]] += b.oz[k];
        }
    }
}

/* Whether the parameter columns hold one value each: a flock's agents
 * usually share them. */
static int wander_params_one(world_t* w)
{
    static const int cols[] = {WD_WEIGHT, WD_CRUISE, WD_STRENGTH, WD_NOISE};
    return component_columns_one(&w->comps[COMP_WANDER], cols, (int)(sizeof cols / sizeof cols[0]));
}

_Static_assert(sizeof(wander_ctx_t) <= ROWS_CTX_BYTES, "wander_ctx fits a fused pass's context");

/* The pass over the component's rows (wander_run), or over the agent rows
 * in a fused pass, which wander_covers allows only while they are the
 * same rows: a block of rows then holds both the wander term and the
 * control that reads it. */
rows_fn* wander_rows(world_t* w, float dt, void* ctx)
{
    (void)dt;
    const int k = COMP_WANDER;
    if (w->comps[k].table.count == 0) return NULL;
    wander_ctx_t* c = (wander_ctx_t*)ctx;
    c->w = w;
    c->a = agent_view(w);
    c->v = (wander_view_t){.slot = table_slots(&w->comps[k].table),
                           .agent_row = COMP_I(w, k, COMP_ROW),
                           .key = COMP_U(w, k, WD_KEY),
                           .weight = COMP_F(w, k, WD_WEIGHT),
                           .cruise = COMP_F(w, k, WD_CRUISE),
                           .strength = COMP_F(w, k, WD_STRENGTH),
                           .noise = COMP_F(w, k, WD_NOISE),
                           .wvx = COMP_F(w, k, WD_VX),
                           .wvy = COMP_F(w, k, WD_VY),
                           .wvz = COMP_F(w, k, WD_VZ)};
    c->one = wander_params_one(w);
    if (c->one)
        for (int32_t i = 0; i < WANDER_BLOCK; ++i) {
            c->one_weight[i] = c->v.weight[0];
            c->one_cruise[i] = c->v.cruise[0];
            c->one_strength[i] = c->v.strength[0];
            c->one_noise[i] = c->v.noise[0];
        }
    return wander_range;
}

int wander_covers(world_t* w) { return world_component_in_agent_order(w, COMP_WANDER); }

int64_t wander_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    wander_ctx_t c;
    rows_fn* fn = wander_rows(w, dt, &c);
    if (!fn) return 0;
    int32_t count = w->comps[COMP_WANDER].table.count;
    par_for(w, count, 512, PAR_AFFINE, fn, &c);
    return count;
}

/* ---- the module ------------------------------------------------------------ */

shoal_wander_t shoal_wander_default(void)
{
    shoal_wander_t v = {2.0f, 1.0f, 0.5f};
    return v;
}

static void wander_defaults(shoal_agent_def_t* d) { d->wander = shoal_wander_default(); }

static int wander_needs(const shoal_agent_def_t* d) { return d->weights[SHOAL_BEHAVIOR_WANDER] != 0.0f; }

static const column_def_t wander_columns[WD_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [WD_KEY] = COLUMN_STATE_U32("wander.key"),
    [WD_WEIGHT] = COLUMN_WEIGHT("weights[wander]", SHOAL_BEHAVIOR_WANDER),
    [WD_CRUISE] = COLUMN_AT_LEAST("wander.cruise_speed", wander.cruise_speed, 0.0),
    [WD_STRENGTH] = COLUMN_AT_LEAST("wander.strength", wander.strength, 0.0),
    [WD_NOISE] = COLUMN_AT_LEAST("wander.noise", wander.noise, 0.0),
    [WD_VX] = COLUMN_STATE_F32("wander.velocity[0]"),
    [WD_VY] = COLUMN_STATE_F32("wander.velocity[1]"),
    [WD_VZ] = COLUMN_STATE_F32("wander.velocity[2]"),
};

static shoal_status_t wander_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    return columns_check(w, d, where, wander_columns, WD_COUNT_);
}

/* Then the key and the walk's velocity: state. */
static void wander_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                             int fresh)
{
    const int k = COMP_WANDER;
    columns_write(w, k, r, d, wander_columns, WD_COUNT_);
    COMP_U(w, k, WD_KEY)[r] = w->slots[slot].generation;
    if (fresh) { /* the walk starts straight ahead */
        COMP_F(w, k, WD_VX)[r] = d->wander.strength * forward.x;
        COMP_F(w, k, WD_VY)[r] = d->wander.strength * forward.y;
        COMP_F(w, k, WD_VZ)[r] = w->dims == 3 ? d->wander.strength * forward.z : 0.0f;
    }
}

static void wander_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_WANDER, r, d, wander_columns, WD_COUNT_);
}

const module_t wander_module = {
    .name = "wander",
    .column_count = WD_COUNT_,
    .columns = wander_columns,
    .defaults = wander_defaults,
    .needs = wander_needs,
    .validate = wander_validate,
    .write_row = wander_write_row,
    .read_row = wander_read_row,
};

/* ---- the setter ------------------------------------------------------------ */

static void edit_wander(shoal_agent_def_t* d, const void* a) { d->wander = *(const shoal_wander_t*)a; }

shoal_status_t shoal_agent_set_wander(shoal_world_t* w, shoal_agent_t id, const shoal_wander_t* v)
{
    REQUIRE_PTR(w, v, "agent_set_wander", "wander");
    return agent_edit(w, id, "agent_set_wander", edit_wander, v, AGENT_EDIT_COMPONENT(COMP_WANDER));
}
