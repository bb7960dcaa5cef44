/* Leader following ("Leader Following" of "Behavior-based control
 * examples", after Reynolds): arrival at a point behind the leader,
 *
 *   s     = behind + behind_per_speed |v_l|       (the paper's offset "which
 *           can vary based on the vehicle velocity": looser when faster)
 *   x_f   = p_l - s u,   u = v_l / |v_l|, or the leader's forward axis when
 *           |v_l| < 1e-3 m/s (a stopped leader's velocity has no direction)
 *   e     = x_f - p
 *   V     = K_arrival e, |V| capped at min(V_max, sqrt(2 a_brake |e|)),
 *           a_brake = 0.5 F_max / m                 ("Arrival/Departure")
 *
 * and the desired velocity gets weight * V added. The cap is steer.c's
 * arrive, for the same reason: K e alone overshoots whenever it exceeds the
 * speed the force limit can still stop from within |e|.
 *
 * The paper's V_leaderfollow = c_separate V_separate + c_arrival V_arrival:
 * this system is the arrival term (weight = c_arrival); the separation term
 * is the SEPARATE behavior of the `neighbors` system, which a follower turns
 * on with its own weight (c_separate). Keeping them apart means one
 * separation code path for flocks and convoys.
 *
 * Following a moving point with a proportional law lags: at a steady leader
 * speed v the follower settles v / K_arrival further back than x_f. That is
 * the paper's law; a larger arrive_gain tightens it, but above about 2 per s
 * a vehicle limited in turn rate starts weaving (the lag is then so short
 * that a small side error swings the command's direction a lot).
 *
 * A stopped leader's forward axis places the point. The controller cannot
 * reverse: a follower that overshoots its point turns around, and its
 * heading and velocity place the point of the one behind it, so a long
 * convoy coming to a stop can fold up.
 *
 * A removed, null or self leader gives no command and no error (the leader
 * may be removed at any step; shoal_agent_is_valid tells the owner). The
 * leader is stored as its global id (world.h, agent_stored_id), which no
 * later agent takes: a new agent in its slot is not followed. Reads the
 * leader's position, velocity and orientation only: integration writes
 * those in a later stage, so no other decide thread is writing them. */
#include <math.h>
#include <string.h>

#include "modules/follow/follow.h"
#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "simd/vec.h"
#include "modules/agent.h"

/* Below this leader speed (m/s) the velocity direction is noise. */
#define FOLLOW_STILL_SPEED 1e-3f

/* The follow component's columns: reads the leader's id and parameters. */
typedef struct follow_view {
    const int32_t* agent_row;
    const uint32_t *lid_lo, *lid_hi;
    const float *weight, *behind, *per_speed, *gain;
} follow_view_t;

/* Reads pos, vel (self and leader), mass, max force, max speed; writes
 * desired (+=). */
typedef struct follow_ctx {
    world_t* w;
    agent_view_t a;
    follow_view_t f;
} follow_ctx_t;

static void follow_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const follow_ctx_t* c = (const follow_ctx_t*)vctx;
    const world_t* w = c->w;
    const int three = w->dims == 3;
    const int32_t* agent_row = c->f.agent_row;
    const uint32_t *lid_lo = c->f.lid_lo, *lid_hi = c->f.lid_hi;
    const float *weight = c->f.weight, *behind = c->f.behind, *per_speed = c->f.per_speed, *gain = c->f.gain;
    const float *px = c->a.px, *py = c->a.py, *pz = c->a.pz;
    const float *vx = c->a.vx, *vy = c->a.vy, *vz = c->a.vz;
    const float *mass = c->a.mass, *fmax = c->a.max_force, *vmax = c->a.max_speed;
    float *dx = c->a.dx, *dy = c->a.dy, *dz = c->a.dz;

    int32_t leaders[STORED_ID_BLOCK];
    for (int32_t r = begin; r < end; ++r) {
        if ((r - begin) % STORED_ID_BLOCK == 0) {
            int32_t n = end - r < STORED_ID_BLOCK ? end - r : STORED_ID_BLOCK;
            world_rows_of_stored_ids(w, lid_lo + r, lid_hi + r, n, leaders);
        }
        int32_t i = agent_row[r];
        int32_t l = leaders[(r - begin) % STORED_ID_BLOCK];
        if (l < 0 || l == i) continue;

        vec3 vl = {vx[l], vy[l], three ? vz[l] : 0.0f};
        float speed_l = vec3_length(vl);
        vec3 u;
        if (speed_l >= FOLLOW_STILL_SPEED) {
            u = vec3_scale(vl, 1.0f / speed_l);
        } else {
            u = agent_forward(w, l);
        }
        float s = behind[r] + per_speed[r] * speed_l;
        vec3 e = {px[l] - s * u.x - px[i], py[l] - s * u.y - py[i], three ? pz[l] - s * u.z - pz[i] : 0.0f};
        float dist = vec3_length(e);
        if (!(dist > 0.0f)) continue; /* on the point: arrival asks for nothing */

        float speed = braking_speed(gain[r] * dist, dist, 0.0f, vmax[i], fmax[i], mass[i]);
        float k = weight[r] * speed / dist;
        dx[i] += k * e.x;
        dy[i] += k * e.y;
        if (three) dz[i] += k * e.z;
    }
}

int64_t follow_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    int32_t count = w->comps[COMP_FOLLOW].table.count;
    const int k = COMP_FOLLOW;
    follow_ctx_t c = {w,
                      agent_view(w),
                      {COMP_I(w, k, COMP_ROW), COMP_U(w, k, FO_LEADER_ID_LO), COMP_U(w, k, FO_LEADER_ID_HI),
                       COMP_F(w, k, FO_WEIGHT), COMP_F(w, k, FO_BEHIND), COMP_F(w, k, FO_BEHIND_PER_SPEED),
                       COMP_F(w, k, FO_ARRIVE_GAIN)}};
    par_for(w, count, 512, PAR_STATIC, follow_range, &c);
    return count;
}

/* ---- the module ------------------------------------------------------------ */

shoal_follow_t shoal_follow_default(void)
{
    shoal_follow_t f;
    memset(&f, 0, sizeof f);
    f.behind = 2.0f;
    f.behind_per_speed = 0.5f;
    f.arrive_gain = 1.0f;
    return f;
}

static void follow_defaults(shoal_agent_def_t* d) { d->follow = shoal_follow_default(); }

static int follow_needs(const shoal_agent_def_t* d) { return d->weights[SHOAL_BEHAVIOR_FOLLOW] != 0.0f; }

/* Every column comes from the definition; the leader must be null or of this world. */
static const column_def_t follow_columns[FO_COUNT_] = {
    COLUMNS_SLOT_ROW,
    COLUMNS_AGENT_ID(FO_LEADER_ID_LO, "follow.leader", follow.leader),
    [FO_WEIGHT] = COLUMN_WEIGHT("weights[follow]", SHOAL_BEHAVIOR_FOLLOW),
    [FO_BEHIND] = COLUMN_AT_LEAST("follow.behind", follow.behind, 0.0),
    [FO_BEHIND_PER_SPEED] = COLUMN_AT_LEAST("follow.behind_per_speed", follow.behind_per_speed, 0.0),
    [FO_ARRIVE_GAIN] = COLUMN_ABOVE("follow.arrive_gain", follow.arrive_gain, 0.0),
};

static shoal_status_t follow_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    return columns_check(w, d, where, follow_columns, FO_COUNT_);
}

static void follow_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                             int fresh)
{
    (void)slot;
    (void)forward;
    (void)fresh;
    columns_write(w, COMP_FOLLOW, r, d, follow_columns, FO_COUNT_);
}

static void follow_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_FOLLOW, r, d, follow_columns, FO_COUNT_);
}

const module_t follow_module = {
    .name = "follow",
    .column_count = FO_COUNT_,
    .columns = follow_columns,
    .defaults = follow_defaults,
    .needs = follow_needs,
    .validate = follow_validate,
    .write_row = follow_write_row,
    .read_row = follow_read_row,
};

/* ---- the setter ------------------------------------------------------------ */

static void edit_follow(shoal_agent_def_t* d, const void* a) { d->follow = *(const shoal_follow_t*)a; }

shoal_status_t shoal_agent_set_follow(shoal_world_t* w, shoal_agent_t id, const shoal_follow_t* f)
{
    REQUIRE_PTR(w, f, "agent_set_follow", "follow");
    return agent_edit(w, id, "agent_set_follow", edit_follow, f, AGENT_EDIT_COMPONENT(COMP_FOLLOW));
}
