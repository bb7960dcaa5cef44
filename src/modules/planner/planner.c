/* Planner agents as agents: three systems over COMP_PLANNER and the
 * world's obstacles (their rows in the step table, step.c).
 *
 * | stage     | system          | reads                                        | writes |
 * |-----------|-----------------|----------------------------------------------|--------|
 * | plan      | planner         | PL interval state and parameters, obstacles, pos/vel of goal agents (step start) | PL_NEXT, permutation offset, statistics |
 * | integrate | planner_move    | PL interval state, PL_NEXT, obstacle scene (after integrate, before wrap) | PL interval state, collisions; pos, heading/quat, vel, omega, force and torque := 0 |
 * | integrate | obstacle_move   | obstacle velocities (after planner_move)     | obstacle centers |
 *
 * Time. A planner agent advances by substeps of h = interval / substeps of
 * the world's trim table. The world keeps one planner clock: each step
 * advances floor((leftover + dt) / h) substeps and keeps the rest for the
 * next step, so dt = h is exactly one substep per step. An agent's interval
 * runs from control c_i to c_f, integrated substep by substep with
 * trim_integrate_step from the interval's start pose and composed with
 * trim_compose: the agent is where the table says, bit for bit, at every
 * interval's end (tests/test_planner_world.c). When more than one interval
 * ends within a step (dt above the interval) the later ones hold the last
 * control (no second search in one step).
 *
 * Staggering. An agent replans when its interval ends. Its intervals end
 * when (planner clock + phase(slot)) is a multiple of the substep count,
 * with phase(slot) the fractional part of slot times the golden ratio
 * (a Weyl sequence: consecutive slots spread evenly over the phases), so
 * the searches of N agents added together spread at N/S per step (S
 * substeps per interval) whatever the order they were added in. A new (or
 * teleported) agent is planned at its first step, for a first interval cut
 * short to its phase: it flies the first substeps of the table trajectory
 * its search chose (so no agent ever flies unplanned), then replans on its
 * phase. N agents added at once thus make one step of N searches; an agent
 * added from inside a step after the plan stage flies that first interval
 * straight.
 *
 * The search of an interval that ends j substeps into the step is run in
 * the plan stage from the pose the agent will have then (planner_pose_ahead:
 * the same arithmetic as planner_move). It sees goal agents as of the
 * step's start (position + velocity columns, predicted j substeps ahead)
 * and obstacles as of the step's start: for j > 0 (steps longer than a
 * substep) moving obstacles are seen up to one step early. Searches run in
 * parallel across agents (claimed blocks: their cost varies), each with
 * its worker's preallocated scratch; each writes only its own agent's
 * component row, so results do not depend on the thread count. Search time
 * (world_now_ns around plan_search) is a statistic only.
 *
 * Planner rows and the core dynamics, as for ground vehicles (ground.c):
 * control and integrate leave them out, and planner_move writes the whole
 * pose, the velocities and a zero actuation.
 *
 * Collisions are counted per substep: the agent's sphere against every
 * obstacle at that substep's time (through the step's scene); an event is
 * a substep that overlaps some obstacle after one that overlapped none.
 *
 * In a torus world every interval starts from a position wrapped into the
 * box; searches see the obstacles without their periodic images. */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "modules/planner/planner.h"
#include "modules/obstacles/obstacles.h"
#include "modules/agent.h"

/* A step never advances more substeps than this; the rest of a longer dt is
 * dropped (a runaway dt would otherwise loop for ages). */
#define PLANNER_MAX_STEP_SUBSTEPS (1 << 20)

/* ---- helpers -------------------------------------------------------------- */

int32_t planner_phase(uint64_t global_id, int32_t substeps)
{
    /* frac((id + 1) * golden ratio) in 32-bit fixed point, times S. */
    uint32_t frac = ((uint32_t)global_id + 1u) * 0x9e3779b9u;
    return (int32_t)(((uint64_t)frac * (uint64_t)(uint32_t)substeps) >> 32);
}

static inline float wrap_into(float p, float origin, float extent)
{
    /* As the wrap system does (spatial_hash.c). */
    float f = p - origin;
    if (f >= 0.0f && f < extent) return p;
    f -= extent * floorf(f / extent);
    if (f >= extent) f = 0.0f;
    return origin + f;
}

trim_pose_t planner_wrap_pose(const world_t* w, trim_pose_t p)
{
    if (!w->wrap) return p;
    float* c[3] = {&p.pos.x, &p.pos.y, &p.pos.z};
    for (int k = 0; k < w->dims; ++k)
        *c[k] = wrap_into(*c[k], w->bounds_min[k], w->bounds_max[k] - w->bounds_min[k]);
    return p;
}

trim_pose_t planner_pose_ahead(const trim_spec_t* spec, const planner_view_t* v, int32_t r, int32_t ahead)
{
    trim_rel_t rel = planner_load_rel(v, r);
    int32_t ci = v->ci[r], cf = v->cf[r];
    for (int32_t i = 0; i < ahead; ++i) trim_integrate_step(spec, ci, cf, &rel);
    return trim_compose(planner_load_start(v, r), rel.pos, rel.rot, v->run_speed[r]);
}

void planner_write_agent_pose(const agent_view_t* a, int three, int32_t row, trim_pose_t pose, float speed,
                              const float rates[TRIM_MAX_AXES])
{
    vec3 f = quat_forward(pose.rot);
    a->px[row] = pose.pos.x;
    a->py[row] = pose.pos.y;
    a->vx[row] = f.x * speed;
    a->vy[row] = f.y * speed;
    a->heading[row] = atan2f(f.y, f.x);
    /* The trim trajectory moves the agent: no force or torque acts on it
     * (control and integrate leave its row out). */
    a->fx[row] = 0.0f;
    a->fy[row] = 0.0f;
    a->tz[row] = 0.0f;
    if (!three) {
        a->oz[row] = rates[0];
        return;
    }
    a->fz[row] = 0.0f;
    a->tx[row] = 0.0f;
    a->ty[row] = 0.0f;
    a->pz[row] = pose.pos.z;
    a->vz[row] = f.z * speed;
    a->qw[row] = pose.rot.w;
    a->qx[row] = pose.rot.x;
    a->qy[row] = pose.rot.y;
    a->qz[row] = pose.rot.z;
    /* Body rates (roll about +x, pitch about -y, yaw about +z) in the world frame. */
    vec3 omega = quat_rotate(pose.rot, (vec3){rates[2], -rates[1], rates[0]});
    a->ox[row] = omega.x;
    a->oy[row] = omega.y;
    a->oz[row] = omega.z;
}

int32_t planner_step_substeps(world_t* w, float dt)
{
    planner_world_t* pw = planner_data(w);
    if (pw->step_stamp == w->step_count + 1) return pw->step_substeps;
    const trim_spec_t* spec = &pw->table.spec;
    double h = (double)(spec->interval / (float)spec->substeps);
    double total = pw->leftover + (double)dt;
    /* The tiny slack keeps a dt that is a whole number of substeps from
     * losing one to rounding in the division. */
    double m = floor(total / h + 1e-9);
    double left = total - m * h;
    if (m > (double)PLANNER_MAX_STEP_SUBSTEPS) {
        m = (double)PLANNER_MAX_STEP_SUBSTEPS;
        left = 0.0;
    }
    if (left < 0.0) left = 0.0;
    pw->step_leftover = pw->leftover;
    pw->leftover = left;
    pw->step_substeps = (int32_t)m;
    pw->substep_clock += (uint64_t)m;
    pw->step_stamp = w->step_count + 1;
    return pw->step_substeps;
}

/* Moving spheres are indexed by their sweep over the longest look-ahead of
 * any planner agent (and at least the step, for the collision count).
 * depth (may be NULL): the largest max_depth. */
static float planner_horizon(const world_t* w, float dt, int32_t* depth_out)
{
    const planner_world_t* pw = planner_data(w);
    const int32_t count = w->comps[COMP_PLANNER].table.count;
    const int32_t* max_depth = COMP_I(w, COMP_PLANNER, PL_MAX_DEPTH);
    int32_t depth = 1;
    for (int32_t r = 0; r < count; ++r)
        if (max_depth[r] > depth) depth = max_depth[r];
    if (depth_out) *depth_out = depth;
    const trim_spec_t* spec = &pw->table.spec;
    return fmaxf((float)depth * spec->interval, dt + spec->interval / (float)spec->substeps);
}

/* How far ahead (in control intervals) the other planner agents' tracks
 * reach. Beyond the interval being flown a track is a straight-line guess,
 * and the other agent replans every interval: four of them (20 m at 5 m/s,
 * 40 m of closing for two ships head-on) is ample warning, and it keeps the
 * scene's size, built every step, independent of the searches' depth (with
 * tracks to the horizon, depth 15 cost 20 ms a step for 10,000 agents in
 * building the scene alone). */
#define PLANNER_TRACK_INTERVALS 4

/* Spheres of one agent's track: its current interval's chord and then one
 * per interval of straight flight (planner_step_agents). */
static int64_t agent_track_pieces(int32_t depth)
{
    return (int64_t)(depth < PLANNER_TRACK_INTERVALS ? depth : PLANNER_TRACK_INTERVALS) + 3;
}

/* Room for the agents' scene of `count` planner agents of look-ahead
 * `depth` (spheres and scene memory). 0 when out of memory. */
static int reserve_agent_scene(world_t* w, planner_world_t* pw, int32_t count, int32_t depth)
{
    if (count < 2) return 1;
    const allocator_t* a = &w->alloc;
    int64_t need = (int64_t)count * agent_track_pieces(depth);
    if (need > INT32_MAX / 8) return 0;
    if (pw->agent_sphere_capacity < need) {
        int32_t cap = (int32_t)need;
        plan_sphere_t* fresh = (plan_sphere_t*)mem_alloc(a, (size_t)cap * sizeof *fresh);
        plan_sphere_t* packed = (plan_sphere_t*)mem_alloc(a, (size_t)cap * sizeof *packed);
        if (!fresh || !packed) {
            mem_free(a, fresh, (size_t)cap * sizeof *fresh);
            mem_free(a, packed, (size_t)cap * sizeof *packed);
            return 0;
        }
        mem_free(a, pw->agent_spheres, (size_t)pw->agent_sphere_capacity * sizeof *fresh);
        mem_free(a, pw->agent_packed, (size_t)pw->agent_sphere_capacity * sizeof *packed);
        pw->agent_spheres = fresh;
        pw->agent_packed = packed;
        pw->agent_sphere_capacity = cap;
    }
    if (pw->agent_track_capacity < count + 1) {
        int32_t* fresh = (int32_t*)mem_alloc(a, (size_t)(count + 1) * sizeof *fresh);
        if (!fresh) return 0;
        mem_free(a, pw->agent_track_n, (size_t)pw->agent_track_capacity * sizeof *fresh);
        pw->agent_track_n = fresh;
        pw->agent_track_capacity = count + 1;
    }
    size_t bytes = plan_scene_bytes((int32_t)need);
    if (bytes == 0) return 0;
    if (pw->agent_scene_bytes < bytes) {
        void* fresh = mem_alloc(a, bytes);
        if (!fresh) return 0;
        pw->agent_scene = NULL;
        pw->agent_scene_stamp = 0;
        mem_free(a, pw->agent_scene_memory, pw->agent_scene_bytes);
        pw->agent_scene_memory = fresh;
        pw->agent_scene_bytes = bytes;
    }
    return 1;
}

/* One piece of a track: the sphere going linearly from a at time ta to b
 * at time tb (tb > ta), extrapolated to time 0. */
static plan_sphere_t track_piece(vec3 a, float ta, vec3 b, float tb, float radius, int32_t owner)
{
    plan_sphere_t s;
    vec3 v = vec3_scale(vec3_sub(b, a), 1.0f / (tb - ta));
    s.center = vec3_sub(a, vec3_scale(v, ta));
    s.radius = radius;
    s.velocity = v;
    s.t_from = ta;
    s.t_to = tb;
    s.owner = owner;
    return s;
}

/* The chunked passes over rows (the tracks' prefix, the step's list of
 * searches): PAR_CHUNKS fixed chunks, so that what each chunk finds, and
 * so the result, is the same for any thread count. */
#define PAR_CHUNKS 64

static inline int32_t chunk_first(int32_t n, int32_t ch) { return (int32_t)((int64_t)n * ch / PAR_CHUNKS); }

/* a[0, n) turned into where each run starts (an exclusive prefix sum) on
 * this thread; the total returned. */
static int32_t exclusive_prefix(int32_t* a, int32_t n)
{
    int32_t total = 0;
    for (int32_t i = 0; i < n; ++i) {
        const int32_t here = a[i];
        a[i] = total;
        total += here;
    }
    return total;
}

/* The same from par_min entries on, over the chunks by the world's workers
 * (each chunk's sum, a prefix over the chunks, then each chunk's own). The
 * sums fit an int32_t (the callers' totals are bounded). */
typedef struct prefix_ctx {
    int32_t* a;
    int32_t n;
    int32_t sum[PAR_CHUNKS]; /* each chunk's sum, then where it starts */
} prefix_ctx_t;

static void prefix_sum_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    prefix_ctx_t* c = (prefix_ctx_t*)vctx;
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t s = 0;
        for (int32_t i = chunk_first(c->n, ch); i < chunk_first(c->n, ch + 1); ++i) s += c->a[i];
        c->sum[ch] = s;
    }
}

static void prefix_write_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    prefix_ctx_t* c = (prefix_ctx_t*)vctx;
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t at = c->sum[ch];
        for (int32_t i = chunk_first(c->n, ch); i < chunk_first(c->n, ch + 1); ++i) {
            const int32_t here = c->a[i];
            c->a[i] = at;
            at += here;
        }
    }
}

static int32_t par_min_of(const planner_world_t* pw)
{
    return pw->par_min > 0 ? pw->par_min : PLANNER_PAR_MIN;
}

static int32_t prefix_par(world_t* w, int32_t* a, int32_t n, int32_t par_min)
{
    if (n < par_min) return exclusive_prefix(a, n);
    prefix_ctx_t c;
    c.a = a;
    c.n = n;
    par_for(w, PAR_CHUNKS, 1, PAR_STATIC | PAR_TASKS, prefix_sum_range, &c);
    const int32_t total = exclusive_prefix(c.sum, PAR_CHUNKS);
    par_for(w, PAR_CHUNKS, 1, PAR_STATIC | PAR_TASKS, prefix_write_range, &c);
    return total;
}

/* plan_scene_build_par's loop over the world's workers. */
typedef struct scene_par {
    plan_body_fn* body;
    void* ctx;
} scene_par_t;

static void scene_par_body(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const scene_par_t* c = (const scene_par_t*)vctx;
    c->body(begin, end, c->ctx);
}

static void scene_par_run(void* par, int32_t n, plan_body_fn* body, void* ctx)
{
    scene_par_t c = {body, ctx};
    /* Few items (the sort's chunks and digits) are tasks, an even share of
     * them each (as rows they would go 16 to a worker: 4 workers busy of
     * 16); up to 4096 items, rows in runs of 16; more, runs of 1024. */
    const par_schedule_t schedule = n <= 256 ? PAR_STATIC | PAR_TASKS : PAR_STATIC;
    par_for((world_t*)par, n, n < 4096 ? 1 : 1024, schedule, scene_par_body, &c);
}

typedef struct track_ctx {
    planner_world_t* pw;
    planner_view_t v;
    const trim_table_t* table;
    float h, t_now, horizon;
    int three;
    int32_t depth, stride;
} track_ctx_t;

/* The tracks of planner rows [begin, end) (planner_step_agents), row r's
 * from agent_spheres[r * stride] on, their count in agent_track_n[r]. */
static void track_range(int32_t begin, int32_t stop, int32_t worker, void* vctx)
{
    (void)worker;
    const track_ctx_t* c = (const track_ctx_t*)vctx;
    planner_world_t* pw = c->pw;
    const planner_view_t v = c->v;
    const trim_table_t* table = c->table;
    const trim_spec_t* spec = &table->spec;
    const float h = c->h, t_now = c->t_now, horizon = c->horizon;
    const int three = c->three;
    const int32_t depth = c->depth;
    for (int32_t r = begin; r < stop; ++r) {
        plan_sphere_t* out = pw->agent_spheres + (size_t)r * (size_t)c->stride;
        int32_t n = 0;
        int32_t owner = r + 1;
        float speed = v.run_speed[r];
        float radius = v.radius[r] + speed * pw->chord_slack;
        trim_pose_t now = trim_compose(planner_load_start(&v, r), planner_load_rel(&v, r).pos,
                                       planner_load_rel(&v, r).rot, speed);
        trim_pose_t from = now;
        float t = t_now;
        int32_t left = v.len[r] - v.k[r];
        if (!v.plan_now[r] && v.len[r] == spec->substeps && left > 0) {
            trim_pose_t end = trim_apply(table, planner_load_start(&v, r), v.ci[r], v.cf[r], speed);
            float te = t_now + (float)left * h;
            out[n++] = track_piece(now.pos, t, end.pos, te, radius, owner);
            from = end;
            t = te;
        }
        vec3 f = quat_forward(from.rot);
        if (!three) f.z = 0.0f;
        vec3 step = vec3_scale(f, speed * spec->interval);
        vec3 p = from.pos;
        const float reach = fminf(horizon, (float)PLANNER_TRACK_INTERVALS * spec->interval);
        const int32_t pieces = (depth < PLANNER_TRACK_INTERVALS ? depth : PLANNER_TRACK_INTERVALS) + 1;
        for (int32_t j = 0; j < pieces && t < reach; ++j) {
            vec3 q = vec3_add(p, step);
            out[n++] = track_piece(p, t, q, t + spec->interval, radius, owner);
            p = q;
            t += spec->interval;
        }
        pw->agent_track_n[r] = n;
    }
}

/* Rows [begin, end)'s tracks into agent_packed, where agent_track_n (now
 * each row's start, then the end) says. */
static void pack_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const track_ctx_t* c = (const track_ctx_t*)vctx;
    planner_world_t* pw = c->pw;
    for (int32_t r = begin; r < end; ++r) {
        const int32_t at = pw->agent_track_n[r], pieces = pw->agent_track_n[r + 1] - at;
        memcpy(&pw->agent_packed[at], &pw->agent_spheres[(size_t)r * (size_t)c->stride],
               (size_t)pieces * sizeof(plan_sphere_t));
    }
}

const plan_scene_t* planner_step_agents(world_t* w, float dt, int* failed)
{
    planner_world_t* pw = planner_data(w);
    if (pw->agent_scene_stamp == w->step_count + 1) return pw->agent_scene;
    const int32_t count = w->comps[COMP_PLANNER].table.count;
    pw->agent_scene = NULL;
    if (count < 2) {
        pw->agent_scene_stamp = w->step_count + 1;
        return NULL;
    }
    int32_t depth = 1;
    float horizon = planner_horizon(w, dt, &depth);
    if (!reserve_agent_scene(w, pw, count, depth)) {
        *failed = 1;
        return NULL;
    }
    /* Times are the obstacles' (0 at the step's start); a planner agent's
     * pose now is `leftover` behind (the planner clock lags by it). Each
     * track: the chord of the interval being flown to where the table says
     * it ends, when it is a whole interval and not yet ended (a first,
     * cut-short interval or one still to be planned has no table end),
     * then straight on at the agent's speed along its facing there, in
     * pieces of one interval, up to PLANNER_TRACK_INTERVALS intervals ahead
     * (or the horizon when nearer). Only the state fixed before
     * the plan stage is read: never a plan written by this step's searches. */
    track_ctx_t c;
    c.pw = pw;
    c.v = planner_view(w);
    c.table = &pw->table;
    c.h = c.table->spec.interval / (float)c.table->spec.substeps;
    c.t_now = (float)(-pw->step_leftover);
    c.three = w->dims == 3;
    c.horizon = horizon;
    c.depth = depth;
    c.stride = (int32_t)agent_track_pieces(depth);
    /* each agent's track at its own stride, in parallel; the counts become
     * where each starts in row order, and the tracks are packed there in
     * parallel */
    par_for(w, count, 64, PAR_AFFINE, track_range, &c);
    const int32_t n = prefix_par(w, pw->agent_track_n, count, par_min_of(pw));
    pw->agent_track_n[count] = n;
    par_for(w, count, 256, PAR_STATIC, pack_range, &c);
    pw->agent_scene =
        plan_scene_build_par(pw->agent_scene_memory, pw->agent_packed, n, horizon, scene_par_run, w);
    if (!pw->agent_scene) {
        *failed = 2;
        return NULL;
    }
    pw->agent_scene_stamp = w->step_count + 1;
    return pw->agent_scene;
}

const plan_scene_t* planner_step_scene(world_t* w, float dt, int* failed)
{
    planner_world_t* pw = planner_data(w);
    if (pw->scene_stamp == w->step_count + 1) return pw->scene;
    if (obstacles_of(w)->obstacle_count == 0) {
        pw->scene = NULL;
        pw->scene_stamp = w->step_count + 1;
        return NULL;
    }
    float horizon = planner_horizon(w, dt, NULL);
    /* Static obstacles that did not change since the last scene: keep it. */
    if (pw->scene && obstacles_of(w)->moving_obstacles == 0 &&
        pw->scene_version == obstacles_of(w)->obstacle_version && pw->scene_horizon == horizon) {
        pw->scene_stamp = w->step_count + 1;
        return pw->scene;
    }
    pw->scene = NULL;
    const allocator_t* a = &w->alloc;
    if (pw->sphere_capacity < obstacles_of(w)->obstacle_count) {
        int32_t cap = obstacles_of(w)->obstacle_capacity;
        plan_sphere_t* fresh = (plan_sphere_t*)mem_alloc(a, (size_t)cap * sizeof *fresh);
        if (!fresh) {
            *failed = 1;
            return NULL;
        }
        mem_free(a, pw->spheres, (size_t)pw->sphere_capacity * sizeof *fresh);
        pw->spheres = fresh;
        pw->sphere_capacity = cap;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < obstacles_of(w)->obstacle_high; ++i) {
        const float* o = obstacles_of(w)->obstacles[i];
        if (o[3] < 0.0f) continue; /* a free id */
        const float* v = obstacles_of(w)->obstacle_velocities[i];
        pw->spheres[n].center = (vec3){o[0], o[1], o[2]};
        pw->spheres[n].radius = o[3];
        pw->spheres[n].velocity = (vec3){v[0], v[1], v[2]};
        pw->spheres[n].t_from = pw->spheres[n].t_to = 0.0f; /* always there */
        pw->spheres[n].owner = 0;
        n++;
    }
    size_t bytes = plan_scene_bytes(n);
    if (pw->scene_bytes < bytes) {
        void* fresh = mem_alloc(a, bytes);
        if (!fresh) {
            *failed = 1;
            return NULL;
        }
        mem_free(a, pw->scene_memory, pw->scene_bytes);
        pw->scene_memory = fresh;
        pw->scene_bytes = bytes;
    }
    pw->scene = plan_scene_build_par(pw->scene_memory, pw->spheres, n, horizon, scene_par_run, w);
    if (!pw->scene) {
        /* Only a moving obstacle flown out of the float range gets here. */
        *failed = 2;
        return NULL;
    }
    pw->scene_stamp = w->step_count + 1;
    pw->scene_version = obstacles_of(w)->obstacle_version;
    pw->scene_horizon = horizon;
    return pw->scene;
}

static int64_t scene_failure(world_t* w, const char* system, int failed)
{
    if (failed == 1) {
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for the obstacle scene", system);
        return -(int64_t)SHOAL_ERR_OUT_OF_MEMORY;
    }
    world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
               "%s: the obstacle scene cannot be built (an obstacle is no longer finite)", system);
    return -(int64_t)SHOAL_ERR_INVALID_ARGUMENT;
}

/* ---- plan: planner ---------------------------------------------------------- */

#define PLAN_MSG PLANNER_MSG

typedef struct plan_ctx {
    world_t* w;
    agent_view_t a;   /* reads the pos and vel of goal agents */
    planner_view_t p; /* reads parameters and interval state; writes the plan and statistics */
    const plan_scene_t* scene;
    const plan_scene_t* agents; /* the other planner agents' tracks */
    const int32_t* list;
    double h;              /* s per substep */
    double leftover;       /* planner clock lag at the step's start, s */
    int32_t* fail_at;      /* per worker: lowest failing list index, or INT32_MAX */
    char (*msg)[PLAN_MSG]; /* per worker */
} plan_ctx_t;

/* Nodes one search of component row r may visit: the root plus each
 * expansion's successors (single-step: the root's only). */
static int64_t search_nodes(const planner_view_t* v, int32_t r, int32_t controls)
{
    int64_t per;
    switch (v->strategy[r]) {
    case SHOAL_PLAN_SINGLE_STEP: return 1 + (int64_t)controls;
    case SHOAL_PLAN_UNIFORM: per = controls / v->k_skip[r] + 2; break;
    default: per = (v->n_v[r] < controls ? v->n_v[r] : controls) + 1; break;
    }
    if (per > (int64_t)controls + 1) per = (int64_t)controls + 1;
    int64_t nodes = 1 + (int64_t)v->max_expansions[r] * per;
    return nodes < PLANNER_MAX_NODES ? nodes : PLANNER_MAX_NODES;
}

static void plan_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const plan_ctx_t* c = (const plan_ctx_t*)vctx;
    const world_t* w = c->w;
    const planner_world_t* pw = planner_data(w);
    const trim_table_t* table = &pw->table;
    const int three = w->dims == 3;
    const agent_view_t* a = &c->a;
    const planner_view_t* v = &c->p;
    plan_scratch_t scratch;
    plan_scratch_init(&scratch, pw->scratch[worker], pw->scratch_bytes);
    for (int32_t i = begin; i < end; ++i) {
        int32_t r = c->list[i];
        /* A new agent plans the interval it starts now, from its start pose
         * and the rates of its initial control; the others the interval that
         * starts when theirs ends, `ahead` substeps into the step. */
        int now = v->plan_now[r] != 0;
        int32_t ahead = now ? 0 : v->len[r] - v->k[r];
        float speed = v->speed[r];
        plan_query_t q;
        memset(&q, 0, sizeof q);
        q.table = table;
        if (now) {
            q.pose = planner_load_start(v, r);
            q.control = v->ci[r];
        } else {
            q.pose = planner_wrap_pose(w, planner_pose_ahead(&table->spec, v, r, ahead));
            q.control = v->cf[r];
        }
        q.speed = speed;
        /* Inflated by the arcs' distance from their chords (planner.h). */
        q.radius = v->radius[r] + speed * pw->chord_slack;
        q.scene = c->scene;
        q.agents = c->agents;
        q.self = r + 1;
        q.permutation = pw->permutation;
        q.permutation_offset = v->perm_offset[r];

        plan_behavior_t b[2];
        int32_t nb = 0;
        memset(b, 0, sizeof b);
        int32_t goal = v->goal[r];
        if (goal == SHOAL_PLAN_GOAL_SEEK || goal == SHOAL_PLAN_GOAL_FLEE) {
            b[nb].kind = goal == SHOAL_PLAN_GOAL_SEEK ? PLAN_SEEK : PLAN_FLEE;
            b[nb].point = (vec3){v->goal_x[r], v->goal_y[r], v->goal_z[r]};
            nb++;
        } else if (goal == SHOAL_PLAN_GOAL_PURSUE || goal == SHOAL_PLAN_GOAL_EVADE) {
            int32_t target = world_row_of_stored_id(w, v->goal_id_lo[r], v->goal_id_hi[r]);
            if (target >= 0) { /* a removed target is ignored */
                /* As of the step's start, predicted to the search's time. */
                float ahead_s = (float)((double)ahead * c->h - c->leftover);
                vec3 p = {a->px[target], a->py[target], three ? a->pz[target] : 0.0f};
                vec3 vel = {a->vx[target], a->vy[target], three ? a->vz[target] : 0.0f};
                b[nb].kind = goal == SHOAL_PLAN_GOAL_PURSUE ? PLAN_PURSUE : PLAN_EVADE;
                b[nb].point = vec3_add(p, vec3_scale(vel, ahead_s));
                b[nb].velocity = vel;
                nb++;
            }
        }
        if (v->avoid[r] && (c->scene || c->agents)) b[nb++].kind = PLAN_AVOID_COLLISION;
        q.behaviors = b;
        q.behavior_count = nb;

        plan_params_t p = plan_params_default((plan_strategy_t)v->strategy[r]);
        p.discount = v->discount[r];
        p.optimism = v->optimism[r];
        p.max_depth = v->max_depth[r];
        p.min_depth = v->min_depth[r];
        p.max_expansions = v->max_expansions[r];
        /* Off by default; on, results depend on the machine (planner.h). */
        p.max_seconds = (double)v->time_budget[r] * 1e-3;
        p.k_skip = v->k_skip[r];
        p.n_v = v->n_v[r];
        p.collapse = v->collapse[r];
        p.damping = v->damping[r];

        plan_result_t res;
        uint64_t t0 = world_now_ns();
        int rc = plan_search(&p, &q, &scratch, &res, c->msg[worker], PLAN_MSG);
        uint64_t t1 = world_now_ns();
        if (rc != 0) {
            if (i < c->fail_at[worker]) c->fail_at[worker] = i;
            v->next[r] = -1;
            continue;
        }
        if (now) {
            v->cf[r] = res.control;
            v->plan_now[r] = 0;
        } else {
            v->next[r] = res.control;
        }
        v->perm_offset[r] =
            (uint32_t)(((uint64_t)q.permutation_offset + (uint64_t)p.n_v) % (uint64_t)table->controls);
        planner_set_u64(v->searches_lo, v->searches_hi, r,
                        planner_get_u64(v->searches_lo, v->searches_hi, r) + 1u);
        planner_set_f64(v->goodness_lo, v->goodness_hi, r,
                        planner_get_f64(v->goodness_lo, v->goodness_hi, r) + (double)res.goodness);
        planner_set_f64(v->ns_lo, v->ns_hi, r, planner_get_f64(v->ns_lo, v->ns_hi, r) + (double)(t1 - t0));
        planner_set_u64(v->states_lo, v->states_hi, r,
                        planner_get_u64(v->states_lo, v->states_hi, r) + (uint64_t)res.visited);
        planner_set_u64(v->expanded_lo, v->expanded_hi, r,
                        planner_get_u64(v->expanded_lo, v->expanded_hi, r) + (uint64_t)res.expanded);
        v->last_goodness[r] = res.goodness;
    }
}

/* Room for the step's list, and (reserve_scratch) every worker's search
 * memory, grown before the parallel pass. */
static int reserve_list(world_t* w, planner_world_t* pw, int32_t count)
{
    const allocator_t* a = &w->alloc;
    if (pw->replan_capacity < count) {
        int32_t cap = w->comps[COMP_PLANNER].table.capacity;
        if (cap < count) cap = count;
        int32_t* fresh = (int32_t*)mem_alloc(a, (size_t)cap * sizeof(int32_t));
        if (!fresh) return 0;
        mem_free(a, pw->replan, (size_t)pw->replan_capacity * sizeof(int32_t));
        pw->replan = fresh;
        pw->replan_capacity = cap;
    }
    return 1;
}

static int reserve_scratch(world_t* w, planner_world_t* pw, size_t bytes)
{
    const allocator_t* a = &w->alloc;
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    if (pw->scratch_workers >= workers && pw->scratch_bytes >= bytes) return 1;
    if (bytes < pw->scratch_bytes) bytes = pw->scratch_bytes;
    if (workers < pw->scratch_workers) workers = pw->scratch_workers;
    void** blocks = (void**)mem_calloc(a, (size_t)workers * sizeof(void*));
    int32_t* fail_at = (int32_t*)mem_alloc(a, (size_t)workers * sizeof(int32_t));
    char(*fail_msg)[PLAN_MSG] = mem_alloc(a, (size_t)workers * PLAN_MSG);
    int ok = blocks && fail_at && fail_msg;
    for (int32_t i = 0; ok && i < workers; ++i) ok = (blocks[i] = mem_alloc(a, bytes)) != NULL;
    if (!ok) {
        for (int32_t i = 0; blocks && i < workers; ++i) mem_free(a, blocks[i], bytes);
        mem_free(a, blocks, (size_t)workers * sizeof(void*));
        mem_free(a, fail_at, (size_t)workers * sizeof(int32_t));
        mem_free(a, fail_msg, (size_t)workers * PLAN_MSG);
        return 0;
    }
    planner_free_search_memory(w, pw);
    pw->scratch = blocks;
    pw->fail_at = fail_at;
    pw->fail_msg = fail_msg;
    pw->scratch_workers = workers;
    pw->scratch_bytes = bytes;
    return 1;
}

/* Search memory for `nodes` states per worker, sized as planner_run sizes it. */
static size_t scratch_bytes_for(int64_t nodes)
{
    if (nodes < 1) nodes = 1;
    if (nodes > PLANNER_MAX_NODES) nodes = PLANNER_MAX_NODES;
    return plan_scratch_bytes((int32_t)nodes);
}

/* The most nodes any agent's search may visit (search_nodes over every
 * row), found again only when a row was written or the rows changed. */
static int64_t nodes_all(const world_t* w, planner_world_t* pw)
{
    const component_t* comp = &w->comps[COMP_PLANNER];
    const int32_t count = comp->table.count;
    if (pw->nodes_ok && pw->nodes_version == comp->version && pw->nodes_count == count) return pw->nodes_all;
    const planner_view_t v = planner_view(w);
    int64_t nodes = 1;
    for (int32_t r = 0; r < count; ++r) {
        int64_t need = search_nodes(&v, r, pw->table.controls);
        if (need > nodes) nodes = need;
    }
    pw->nodes_all = nodes;
    pw->nodes_version = comp->version;
    pw->nodes_count = count;
    pw->nodes_ok = 1;
    return nodes;
}

int planner_reserve_step(world_t* w)
{
    const int k = COMP_PLANNER;
    planner_world_t* pw = planner_data(w);
    int32_t count = w->comps[k].table.count;
    if (count == 0 || !pw || !pw->has_table) return 1;
    const allocator_t* a = &w->alloc;
    if (!reserve_list(w, pw, count)) goto out_of_memory;
    /* The scene's spheres and memory, as planner_step_scene grows them. */
    if (obstacles_of(w)->obstacle_count > 0 && pw->sphere_capacity < obstacles_of(w)->obstacle_count) {
        int32_t cap = obstacles_of(w)->obstacle_capacity;
        plan_sphere_t* fresh = (plan_sphere_t*)mem_alloc(a, (size_t)cap * sizeof *fresh);
        if (!fresh) goto out_of_memory;
        mem_free(a, pw->spheres, (size_t)pw->sphere_capacity * sizeof *fresh);
        pw->spheres = fresh;
        pw->sphere_capacity = cap;
    }
    size_t bytes =
        obstacles_of(w)->obstacle_count > 0 ? plan_scene_bytes(obstacles_of(w)->obstacle_count) : 0;
    if (pw->scene_bytes < bytes) {
        void* fresh = mem_alloc(a, bytes);
        if (!fresh) goto out_of_memory;
        /* the cached scene lived in the old memory */
        pw->scene = NULL;
        pw->scene_stamp = 0;
        mem_free(a, pw->scene_memory, pw->scene_bytes);
        pw->scene_memory = fresh;
        pw->scene_bytes = bytes;
    }
    int32_t depth = 1;
    (void)planner_horizon(w, 0.0f, &depth);
    if (!reserve_agent_scene(w, pw, count, depth)) goto out_of_memory;
    /* Any agent may search this step (a goal set from a user system plans
     * at once): room for the largest search. */
    if (!reserve_scratch(w, pw, scratch_bytes_for(nodes_all(w, pw)))) goto out_of_memory;
    return 1;
out_of_memory:
    world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "world_step: out of memory for the planner's search memory");
    return 0;
}

int planner_reserve_def(world_t* w, const shoal_agent_def_t* d)
{
    planner_world_t* pw = planner_data(w);
    if (!d->planner.enabled || !pw || !pw->has_table) return 1;
    int64_t controls = pw->table.controls, per;
    switch (d->planner.strategy) {
    case SHOAL_PLAN_SINGLE_STEP: per = 0; break;
    case SHOAL_PLAN_UNIFORM: per = controls / d->planner.k_skip + 2; break;
    default: per = (d->planner.n_v < controls ? d->planner.n_v : controls) + 1; break;
    }
    if (per > controls + 1) per = controls + 1;
    int64_t nodes = per == 0 ? 1 + controls : 1 + (int64_t)d->planner.max_expansions * per;
    return reserve_list(w, pw, w->comps[COMP_PLANNER].table.capacity) &&
           reserve_scratch(w, pw, scratch_bytes_for(nodes));
}

/* The step's searches listed in parallel (par_min planner agents or
 * more): each of PAR_CHUNKS fixed chunks of the rows counts its own, a
 * prefix over the chunks gives where each writes; the list is the serial
 * loop's for any thread count. */

typedef struct pick_ctx {
    const planner_view_t* v;
    int32_t* list;
    int32_t count, m;
    int32_t chunk_n[PAR_CHUNKS]; /* each chunk's searches, then where they go */
} pick_ctx_t;

/* Whether component row r searches this step: a new agent, or one whose
 * interval ends within the step's m substeps. */
static inline int searches_now(const planner_view_t* v, int32_t r, int32_t m)
{
    return v->plan_now[r] || v->len[r] - v->k[r] < m;
}

static void pick_count(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    pick_ctx_t* c = (pick_ctx_t*)vctx;
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t n = 0;
        for (int32_t r = chunk_first(c->count, ch); r < chunk_first(c->count, ch + 1); ++r)
            n += searches_now(c->v, r, c->m);
        c->chunk_n[ch] = n;
    }
}

static void pick_write(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    pick_ctx_t* c = (pick_ctx_t*)vctx;
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t at = c->chunk_n[ch];
        for (int32_t r = chunk_first(c->count, ch); r < chunk_first(c->count, ch + 1); ++r)
            if (searches_now(c->v, r, c->m)) c->list[at++] = r;
    }
}

int64_t planner_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    const int k = COMP_PLANNER;
    int32_t count = w->comps[k].table.count;
    if (count == 0) return 0;
    planner_world_t* pw = planner_data(w);
    int32_t m = planner_step_substeps(w, dt);
    int32_t n = pw->table.spec.substeps;
    if (!reserve_list(w, pw, count)) {
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "planner: out of memory for the search list");
        return -(int64_t)SHOAL_ERR_OUT_OF_MEMORY;
    }
    /* The agents whose interval ends within this step's substeps, in row
     * order (counted, then listed, by the workers over fixed chunks of the
     * rows); search memory for the largest search any agent may make. */
    const planner_view_t v = planner_view(w);
    pick_ctx_t pc = {.v = &v, .list = pw->replan, .count = count, .m = m, .chunk_n = {0}};
    int32_t searches = 0;
    if (count >= par_min_of(pw)) {
        par_for(w, PAR_CHUNKS, 1, PAR_STATIC | PAR_TASKS, pick_count, &pc);
        searches = exclusive_prefix(pc.chunk_n, PAR_CHUNKS);
        if (searches == 0) return 0;
        par_for(w, PAR_CHUNKS, 1, PAR_STATIC | PAR_TASKS, pick_write, &pc);
    } else {
        for (int32_t r = 0; r < count; ++r)
            if (searches_now(&v, r, m)) pw->replan[searches++] = r;
        if (searches == 0) return 0;
    }
    const int64_t nodes = nodes_all(w, pw);
    int failed = 0;
    const plan_scene_t* scene = planner_step_scene(w, dt, &failed);
    if (failed) return scene_failure(w, "planner", failed);
    const plan_scene_t* agents = planner_step_agents(w, dt, &failed);
    if (failed) return scene_failure(w, "planner", failed);
    if (!reserve_scratch(w, pw, scratch_bytes_for(nodes))) {
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "planner: out of memory for %lld search states per worker",
                   (long long)nodes);
        return -(int64_t)SHOAL_ERR_OUT_OF_MEMORY;
    }
    int32_t workers = pw->scratch_workers;
    plan_ctx_t c;
    c.w = w;
    c.a = agent_view(w);
    c.p = v;
    c.scene = scene;
    c.agents = agents;
    c.list = pw->replan;
    c.h = (double)(pw->table.spec.interval / (float)n);
    c.leftover = pw->step_leftover;
    c.fail_at = pw->fail_at;
    c.msg = pw->fail_msg;
    for (int32_t i = 0; i < workers; ++i) {
        c.fail_at[i] = INT32_MAX;
        c.msg[i][0] = '\0';
    }
    /* Each search is a task: even a handful of them spread over the workers. */
    par_for(w, searches, 1, PAR_CLAIMED | PAR_TASKS, plan_range, &c);
    /* A failed search means an agent's state went bad (validation keeps
     * parameters sane): the step stops, naming the first one in row order. */
    int32_t worst = INT32_MAX, who = -1;
    for (int32_t i = 0; i < workers; ++i)
        if (c.fail_at[i] < worst) {
            worst = c.fail_at[i];
            who = i;
        }
    if (who >= 0) {
        uint32_t slot = table_slots(&w->comps[k].table)[pw->replan[worst]];
        world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "planner: the search of agent {index %u} failed: %s",
                   (unsigned)slot, c.msg[who]);
        return -(int64_t)SHOAL_ERR_INVALID_ARGUMENT;
    }
    return searches;
}

/* ---- integrate: planner_move ------------------------------------------------ */

typedef struct move_ctx {
    world_t* w;
    agent_view_t a;   /* writes the pose, velocities and actuation */
    planner_view_t p; /* reads and writes the interval state and collisions */
    const plan_scene_t* scene;
    int32_t m;
    double h;
    double leftover;
} move_ctx_t;

static void move_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const move_ctx_t* c = (const move_ctx_t*)vctx;
    const world_t* w = c->w;
    const trim_table_t* table = &planner_data(w)->table;
    const trim_spec_t* spec = &table->spec;
    const int32_t n = spec->substeps;
    const int three = w->dims == 3;
    const planner_view_t* v = &c->p;
    for (int32_t r = begin; r < end; ++r) {
        trim_pose_t start = planner_load_start(v, r);
        trim_rel_t rel = planner_load_rel(v, r);
        int32_t ci = v->ci[r], cf = v->cf[r];
        int32_t next = v->next[r];
        int32_t len = v->len[r];
        int32_t overlap = v->overlap[r];
        int32_t collisions = v->collisions[r];
        float run_speed = v->run_speed[r];
        float radius = v->radius[r];
        int restarted = 0;
        int posed = 0;
        /* Not planned (added after this step's plan stage, or the planner
         * system is off): the first interval is flown as it is, straight. */
        v->plan_now[r] = 0;
        trim_pose_t now;
        for (int32_t s = 0; s < c->m; ++s) {
            if (rel.k >= len) {
                /* The interval ends: the next starts where the table says
                 * this one ends, from the control the search chose (or,
                 * without one, holding the current one). */
                start = planner_wrap_pose(w, trim_compose(start, rel.pos, rel.rot, run_speed));
                ci = cf;
                if (next >= 0) cf = next;
                next = -1;
                run_speed = v->speed[r];
                rel = trim_rel_start();
                len = n;
                restarted = 1;
            }
            trim_integrate_step(spec, ci, cf, &rel);
            posed = 0;
            if (c->scene) {
                now = trim_compose(start, rel.pos, rel.rot, run_speed);
                posed = 1;
                float t = (float)((double)(s + 1) * c->h - c->leftover);
                int hit = plan_scene_hit(c->scene, now.pos, t, now.pos, t, radius);
                if (hit && !overlap) collisions++;
                overlap = hit;
            }
        }
        if (restarted) {
            planner_store_start(v, r, start);
            v->ci[r] = ci;
            v->cf[r] = cf;
            v->next[r] = next;
            v->run_speed[r] = run_speed;
            v->len[r] = len;
        }
        planner_store_rel(v, r, rel);
        v->overlap[r] = overlap;
        v->collisions[r] = collisions;
        /* The body rates of the substep just flown, for the angular velocity. */
        float wi[TRIM_MAX_AXES], wf[TRIM_MAX_AXES], rates[TRIM_MAX_AXES];
        trim_control_rates(spec, ci, wi);
        trim_control_rates(spec, cf, wf);
        float f = rel.k > 0 ? ((float)rel.k - 0.5f) / (float)n : 0.0f;
        if (f > 1.0f) f = 1.0f;
        for (int a = 0; a < TRIM_MAX_AXES; ++a) rates[a] = wi[a] + (wf[a] - wi[a]) * f;
        if (!posed) now = trim_compose(start, rel.pos, rel.rot, run_speed);
        planner_write_agent_pose(&c->a, three, v->agent_row[r], now, run_speed, rates);
    }
}

int64_t planner_move_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    int32_t count = w->comps[COMP_PLANNER].table.count;
    if (count == 0) return 0;
    planner_world_t* pw = planner_data(w);
    move_ctx_t c;
    c.w = w;
    c.a = agent_view(w);
    c.p = planner_view(w);
    c.m = planner_step_substeps(w, dt);
    c.h = (double)(pw->table.spec.interval / (float)pw->table.spec.substeps);
    c.leftover = pw->step_leftover;
    int failed = 0;
    c.scene = planner_step_scene(w, dt, &failed);
    if (failed) return scene_failure(w, "planner_move", failed);
    par_for(w, count, 64, PAR_AFFINE, move_range, &c);
    return count;
}
