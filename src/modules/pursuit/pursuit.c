/* Pursuit and evasion: seek or flee ("Seek/Flee" of "Behavior-based
 * control examples", after Reynolds) aimed at where the target agent will
 * be rather than where it is.
 *
 * The paper's Seek/Flee take a fixed point; a moving target needs a
 * prediction (Reynolds' pursuit). The target is assumed to keep its current
 * velocity for T seconds, T being the time this agent needs to cover the
 * present distance at its top speed, capped by max_prediction:
 *
 *   d = p_t - p,   T = min(|d| / max(V_max, 1e-6), max_prediction)
 *   e = p_t + v_t T - p
 *   pursue: V = V_max e / |e|      evade: V = -V_max e / |e|
 *
 * and the desired velocity gets w_pursue V_pursue + w_evade V_evade added.
 * V_d = V_max for both, as in the paper. Seeking a point it is on gives no
 * command (as steer's seek); evading from there flees along the agent's own
 * forward axis (as steer's flee): any direction leaves, ahead is cheapest.
 *
 * A target that is gone (removed, or a stale handle when it was set), null,
 * or the agent itself gives no command and no error: a target may be
 * removed at any step, and the owner learns that from shoal_agent_is_valid.
 * The target is stored as its global id (world.h, agent_stored_id), which
 * no later agent takes, so a new agent in the target's slot is not it.
 *
 * Reads the target's position and velocity only: those columns are written
 * by integration in a later stage, so reading another row here races with
 * nothing. Never reads another agent's desired velocity, which other decide
 * threads are writing. */
#include <math.h>
#include <string.h>

#include "modules/pursuit/pursuit.h"
#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "simd/vec.h"
#include "modules/agent.h"

/* The pursuit component's columns: the target's id, weights, horizon. */
typedef struct pursuit_view {
    const int32_t* agent_row;
    const uint32_t *tid_lo, *tid_hi;
    const float *w_pursue, *w_evade, *max_pred;
} pursuit_view_t;

/* Reads pos, vel, forward of self and target, max speed; writes desired (+=). */
typedef struct pursuit_ctx {
    world_t* w;
    agent_view_t a;
    pursuit_view_t p;
} pursuit_ctx_t;

static void pursuit_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const pursuit_ctx_t* c = (const pursuit_ctx_t*)vctx;
    const world_t* w = c->w;
    const int three = w->dims == 3;
    const int32_t* agent_row = c->p.agent_row;
    const uint32_t *tid_lo = c->p.tid_lo, *tid_hi = c->p.tid_hi;
    const float *w_pursue = c->p.w_pursue, *w_evade = c->p.w_evade, *max_pred = c->p.max_pred;
    const float* vmax = c->a.max_speed;
    float *dx = c->a.dx, *dy = c->a.dy, *dz = c->a.dz;

    int32_t targets[STORED_ID_BLOCK];
    for (int32_t r = begin; r < end; ++r) {
        if ((r - begin) % STORED_ID_BLOCK == 0) {
            int32_t n = end - r < STORED_ID_BLOCK ? end - r : STORED_ID_BLOCK;
            world_rows_of_stored_ids(w, tid_lo + r, tid_hi + r, n, targets);
        }
        int32_t i = agent_row[r];
        int32_t t = targets[(r - begin) % STORED_ID_BLOCK];
        if (t < 0 || t == i) continue;

        vec3 p = agent_position(w, i);
        vec3 d = vec3_sub(agent_position(w, t), p);
        float T = fminf(vec3_length(d) / fmaxf(vmax[i], 1e-6f), max_pred[r]);
        vec3 e = vec3_add(d, vec3_scale(agent_velocity(w, t), T)); /* predicted - p */
        vec3 dir = vec3_normalize(e);
        int on_point = dir.x == 0.0f && dir.y == 0.0f && dir.z == 0.0f;

        vec3 v = vec3_zero();
        if (w_pursue[r] != 0.0f && !on_point) v = vec3_scale(dir, w_pursue[r] * vmax[i]);
        if (w_evade[r] != 0.0f) {
            vec3 away = on_point ? agent_forward(w, i) : vec3_neg(dir);
            v = vec3_add(v, vec3_scale(away, w_evade[r] * vmax[i]));
        }
        dx[i] += v.x;
        dy[i] += v.y;
        if (three) dz[i] += v.z;
    }
}

int64_t pursuit_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    int32_t count = w->comps[COMP_PURSUIT].table.count;
    const int k = COMP_PURSUIT;
    pursuit_ctx_t c = {w,
                       agent_view(w),
                       {COMP_I(w, k, COMP_ROW), COMP_U(w, k, PU_TARGET_ID_LO), COMP_U(w, k, PU_TARGET_ID_HI),
                        COMP_F(w, k, PU_W_PURSUE), COMP_F(w, k, PU_W_EVADE),
                        COMP_F(w, k, PU_MAX_PREDICTION)}};
    /* Even cost per agent (one random read of the target): static blocks. */
    par_for(w, count, 512, PAR_STATIC, pursuit_range, &c);
    return count;
}

/* ---- the module ------------------------------------------------------------ */

shoal_pursuit_t shoal_pursuit_default(void)
{
    shoal_pursuit_t p;
    memset(&p, 0, sizeof p);
    p.max_prediction = 2.0f;
    return p;
}

static void pursuit_defaults(shoal_agent_def_t* d) { d->pursuit = shoal_pursuit_default(); }

static int pursuit_needs(const shoal_agent_def_t* d)
{
    return d->weights[SHOAL_BEHAVIOR_PURSUE] != 0.0f || d->weights[SHOAL_BEHAVIOR_EVADE] != 0.0f;
}

/* Every column comes from the definition; the target must be null or of this world. */
static const column_def_t pursuit_columns[PU_COUNT_] = {
    COLUMNS_SLOT_ROW,
    COLUMNS_AGENT_ID(PU_TARGET_ID_LO, "pursuit.target", pursuit.target),
    [PU_W_PURSUE] = COLUMN_WEIGHT("weights[pursue]", SHOAL_BEHAVIOR_PURSUE),
    [PU_W_EVADE] = COLUMN_WEIGHT("weights[evade]", SHOAL_BEHAVIOR_EVADE),
    [PU_MAX_PREDICTION] = COLUMN_AT_LEAST("pursuit.max_prediction", pursuit.max_prediction, 0.0),
};

static shoal_status_t pursuit_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    return columns_check(w, d, where, pursuit_columns, PU_COUNT_);
}

static void pursuit_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                              int fresh)
{
    (void)slot;
    (void)forward;
    (void)fresh;
    columns_write(w, COMP_PURSUIT, r, d, pursuit_columns, PU_COUNT_);
}

static void pursuit_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_PURSUIT, r, d, pursuit_columns, PU_COUNT_);
}

const module_t pursuit_module = {
    .name = "pursuit",
    .column_count = PU_COUNT_,
    .columns = pursuit_columns,
    .defaults = pursuit_defaults,
    .needs = pursuit_needs,
    .validate = pursuit_validate,
    .write_row = pursuit_write_row,
    .read_row = pursuit_read_row,
};

/* ---- the setter ------------------------------------------------------------ */

static void edit_pursuit(shoal_agent_def_t* d, const void* a) { d->pursuit = *(const shoal_pursuit_t*)a; }

shoal_status_t shoal_agent_set_pursuit(shoal_world_t* w, shoal_agent_t id, const shoal_pursuit_t* p)
{
    REQUIRE_PTR(w, p, "agent_set_pursuit", "pursuit");
    return agent_edit(w, id, "agent_set_pursuit", edit_pursuit, p, AGENT_EDIT_COMPONENT(COMP_PURSUIT));
}
