/* Planner agents in the world: the trim table and the other world-level
 * data (planner.h), the COMP_PLANNER component's columns, validation, and
 * the public trim-table and status API. The systems are in planner.c.
 *
 * Decisions:
 * - One trim table per world. It may be replaced only while no planner
 *   agent exists (or by the same spec): a planner agent's controls are
 *   indices into it. The hash takes its spec, not its entries: the entries
 *   are a pure function of the spec (trim.c builds them with the online
 *   integrator), and a loaded table is checked against its checksum.
 * - The adaptive permutation is one circular permutation of the controls
 *   per world, drawn from the world seed; each agent reads it from its own
 *   offset, which advances by n_v per search, so successive searches start
 *   from different controls.
 * - A planner agent is not a ground vehicle: the two definitions exclude
 *   each other. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ecs/columns.h"
#include "ecs/rng.h"
#include "modules/planner/planner.h"
#include "modules/planner/trim.h"

/* ---- world data ---------------------------------------------------------- */

planner_world_t* planner_world_get(world_t* w)
{
    if (!planner_data(w))
        w->module_data[MOD_PLANNER] = (planner_world_t*)mem_calloc(&w->alloc, sizeof(planner_world_t));
    return planner_data(w);
}

void* planner_table_alloc(void* ctx, size_t bytes) { return mem_alloc((const allocator_t*)ctx, bytes); }
void planner_table_free(void* ctx, void* p, size_t bytes) { mem_free((const allocator_t*)ctx, p, bytes); }

void planner_free_search_memory(world_t* w, planner_world_t* pw)
{
    const allocator_t* a = &w->alloc;
    for (int32_t i = 0; i < pw->scratch_workers; ++i) mem_free(a, pw->scratch[i], pw->scratch_bytes);
    mem_free(a, pw->scratch, (size_t)pw->scratch_workers * sizeof(void*));
    mem_free(a, pw->fail_at, (size_t)pw->scratch_workers * sizeof(int32_t));
    mem_free(a, pw->fail_msg, (size_t)pw->scratch_workers * PLANNER_MSG);
    pw->scratch = NULL;
    pw->fail_at = NULL;
    pw->fail_msg = NULL;
    pw->scratch_workers = 0;
    pw->scratch_bytes = 0;
}

void planner_release(world_t* w)
{
    planner_world_t* pw = planner_data(w);
    if (!pw) return;
    const allocator_t* a = &w->alloc;
    if (pw->has_table) trim_table_free(&pw->table, planner_table_free, (void*)(uintptr_t)a);
    mem_free(a, pw->permutation, (size_t)pw->permutation_count * sizeof(int32_t));
    mem_free(a, pw->spheres, (size_t)pw->sphere_capacity * sizeof(plan_sphere_t));
    mem_free(a, pw->scene_memory, pw->scene_bytes);
    mem_free(a, pw->agent_spheres, (size_t)pw->agent_sphere_capacity * sizeof(plan_sphere_t));
    mem_free(a, pw->agent_packed, (size_t)pw->agent_sphere_capacity * sizeof(plan_sphere_t));
    mem_free(a, pw->agent_track_n, (size_t)pw->agent_track_capacity * sizeof(int32_t));
    mem_free(a, pw->agent_scene_memory, pw->agent_scene_bytes);
    mem_free(a, pw->replan, (size_t)pw->replan_capacity * sizeof(int32_t));
    planner_free_search_memory(w, pw);
    mem_free(a, pw, sizeof *pw);
    w->module_data[MOD_PLANNER] = NULL;
}

/* ---- trim tables ----------------------------------------------------------- */

shoal_trim_spec_t shoal_trim_spec_default(int32_t dimensions)
{
    shoal_trim_spec_t s;
    memset(&s, 0, sizeof s);
    if (dimensions == 3) {
        s.axes = 2;
        s.samples[0] = s.samples[1] = 11;
        s.max_rate[0] = s.max_rate[1] = 1.0f;
    } else {
        s.axes = 1;
        s.samples[0] = 17;
        s.max_rate[0] = 1.6f;
    }
    s.interval = 1.0f;
    s.substeps = 60;
    return s;
}

static trim_spec_t spec_from_public(const shoal_trim_spec_t* s)
{
    trim_spec_t t;
    memset(&t, 0, sizeof t);
    t.axes = s->axes;
    for (int a = 0; a < TRIM_MAX_AXES; ++a) {
        t.samples[a] = s->samples[a];
        t.max_rate[a] = s->max_rate[a];
    }
    t.interval = s->interval;
    t.substeps = s->substeps;
    return t;
}

/* The spec as a table keeps it (unused axes: 1 sample, rate 0), for
 * comparing two specs of one model. */
static trim_spec_t spec_canonical(trim_spec_t s)
{
    for (int a = s.axes; a < TRIM_MAX_AXES; ++a) {
        if (a < 0) continue;
        s.samples[a] = 1;
        s.max_rate[a] = 0.0f;
    }
    return s;
}

static int spec_equal(const trim_spec_t* p, const trim_spec_t* q)
{
    trim_spec_t x = spec_canonical(*p), y = spec_canonical(*q);
    if (x.axes != y.axes || x.substeps != y.substeps ||
        memcmp(&x.interval, &y.interval, sizeof x.interval) != 0)
        return 0;
    for (int i = 0; i < TRIM_MAX_AXES; ++i)
        if (x.samples[i] != y.samples[i] || memcmp(&x.max_rate[i], &y.max_rate[i], sizeof(float)) != 0)
            return 0;
    return 1;
}

/* The spec fits this world: axes match the dimensions, every used axis has
 * samples, and trim_spec_valid's bounds hold. */
static shoal_status_t check_spec(world_t* w, const trim_spec_t* s, const char* where)
{
    if (w->dims == 2 && s->axes != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: axes must be 1 (yaw) in a 2D world, got %d",
                          where, (int)s->axes);
    if (w->dims == 3 && s->axes != 2 && s->axes != 3)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: axes must be 2 (yaw, pitch) or 3 (yaw, pitch, roll) in a 3D world, got %d",
                          where, (int)s->axes);
    for (int a = 0; a < s->axes; ++a)
        if (s->samples[a] < 1)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: the control set is empty: samples[%d] must be >= 1, got %d", where, a,
                              (int)s->samples[a]);
    char msg[256];
    if (!trim_spec_valid(s, msg, sizeof msg))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s", where, msg);
    return SHOAL_OK;
}

/* A new table may replace the world's only when no planner agent uses the
 * current one, or when it has the same spec. */
static shoal_status_t check_replaceable(world_t* w, const trim_spec_t* s, const char* where)
{
    int32_t agents = w->comps[COMP_PLANNER].table.count;
    if (agents == 0 || !planner_data(w) || !planner_data(w)->has_table) return SHOAL_OK;
    if (spec_equal(&planner_data(w)->table.spec, s)) return SHOAL_OK;
    return world_fail(w, SHOAL_ERR_BUSY,
                      "%s: %d planner agents use the current trim table; set the table before "
                      "adding planner agents (or remove them first)",
                      where, (int)agents);
}

/* Largest distance, at unit speed, from an interval's substep positions to
 * the segment joining its ends (see planner.h). */
static float table_chord_slack(const trim_table_t* t)
{
    double worst = 0.0;
    int32_t n = t->controls;
    for (int32_t ci = 0; ci < n; ++ci) {
        for (int32_t cf = 0; cf < n; ++cf) {
            vec3 e = t->entries[(size_t)ci * (size_t)n + (size_t)cf].pos;
            double ex = e.x, ey = e.y, ez = e.z;
            double len2 = ex * ex + ey * ey + ez * ez;
            trim_rel_t r = trim_rel_start();
            for (int32_t k = 0; k + 1 < t->spec.substeps; ++k) {
                trim_integrate_step(&t->spec, ci, cf, &r);
                double px = r.pos.x, py = r.pos.y, pz = r.pos.z;
                double s = len2 > 0.0 ? (px * ex + py * ey + pz * ez) / len2 : 0.0;
                s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
                double dx = px - s * ex, dy = py - s * ey, dz = pz - s * ez;
                double d = sqrt(dx * dx + dy * dy + dz * dz);
                if (d > worst) worst = d;
            }
        }
    }
    /* Rounded up: it bounds a float computation. */
    return (float)(worst * (1.0 + 1e-5) + 1e-6);
}

/* Make `fresh` the world's table (taking ownership): the permutation and
 * the chord slack with it (computed when slack < 0). On failure `fresh` is
 * freed and nothing changes. */
static shoal_status_t install_table_slack(world_t* w, trim_table_t* fresh, float slack, const char* where)
{
    const allocator_t* a = &w->alloc;
    planner_world_t* pw = planner_world_get(w);
    int32_t n = fresh->controls;
    int32_t* perm = (int32_t*)mem_alloc(a, (size_t)n * sizeof(int32_t));
    if (!pw || !perm) {
        mem_free(a, perm, (size_t)n * sizeof(int32_t));
        trim_table_free(fresh, planner_table_free, (void*)(uintptr_t)a);
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    }
    /* Fisher-Yates from the counter-based generator: the same world seed
     * and control count give the same permutation. */
    for (int32_t i = 0; i < n; ++i) perm[i] = i;
    for (int32_t i = n - 1; i > 0; --i) {
        uint64_t bits = rng_bits(w->seed, 0x7065726d75746521ull, (uint64_t)i, (uint32_t)n);
        int32_t j = (int32_t)(bits % (uint64_t)(i + 1));
        int32_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    if (slack < 0.0f) slack = table_chord_slack(fresh);
    if (pw->has_table) trim_table_free(&pw->table, planner_table_free, (void*)(uintptr_t)a);
    mem_free(a, pw->permutation, (size_t)pw->permutation_count * sizeof(int32_t));
    pw->table = *fresh;
    pw->has_table = 1;
    pw->chord_slack = slack;
    pw->permutation = perm;
    pw->permutation_count = n;
    /* Agents still using the table keep valid offsets. */
    const int32_t count = w->comps[COMP_PLANNER].table.count;
    for (int32_t r = 0; r < count; ++r) COMP_U(w, COMP_PLANNER, PL_PERM_OFFSET)[r] %= (uint32_t)n;
    return SHOAL_OK;
}

static shoal_status_t install_table(world_t* w, trim_table_t* fresh, const char* where)
{
    return install_table_slack(w, fresh, -1.0f, where);
}

shoal_status_t planner_restore_table(world_t* w, trim_table_t* fresh, float chord_slack, const char* where)
{
    shoal_status_t st = check_spec(w, &fresh->spec, where);
    if (st == SHOAL_OK && !(isfinite(chord_slack) && chord_slack >= 0.0f))
        st = world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: chord slack must be finite and >= 0, got %g",
                        where, (double)chord_slack);
    if (st != SHOAL_OK) {
        trim_table_free(fresh, planner_table_free, (void*)(uintptr_t)&w->alloc);
        return st;
    }
    return install_table_slack(w, fresh, chord_slack, where);
}

static shoal_status_t build_table(world_t* w, const trim_spec_t* s, const char* where)
{
    trim_table_t fresh;
    memset(&fresh, 0, sizeof fresh);
    if (trim_table_build(&fresh, s, planner_table_alloc, (void*)(uintptr_t)&w->alloc) != 0)
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for the trim table", where);
    return install_table(w, &fresh, where);
}

int planner_prepare(world_t* w, const char* where)
{
    planner_world_t* pw = planner_world_get(w);
    if (!pw) {
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
        return 0;
    }
    if (pw->has_table) return 1;
    shoal_trim_spec_t spec = shoal_trim_spec_default(w->dims);
    trim_spec_t s = spec_from_public(&spec);
    return build_table(w, &s, where) == SHOAL_OK;
}

shoal_status_t shoal_world_set_trim_table(shoal_world_t* w, const shoal_trim_spec_t* spec)
{
    static const char* where = "world_set_trim_table";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (!spec) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: spec is NULL", where);
    trim_spec_t s = spec_from_public(spec);
    shoal_status_t st = check_spec(w, &s, where);
    if (st != SHOAL_OK) return st;
    st = check_replaceable(w, &s, where);
    if (st != SHOAL_OK) return st;
    if (planner_data(w) && planner_data(w)->has_table && spec_equal(&planner_data(w)->table.spec, &s))
        return SHOAL_OK;
    return build_table(w, &s, where);
}

shoal_status_t planner_install_loaded_table(world_t* w, trim_table_t* fresh, const char* where)
{
    shoal_status_t st = check_spec(w, &fresh->spec, where);
    if (st == SHOAL_OK) st = check_replaceable(w, &fresh->spec, where);
    if (st != SHOAL_OK) {
        trim_table_free(fresh, planner_table_free, (void*)(uintptr_t)&w->alloc);
        return st;
    }
    return install_table(w, fresh, where);
}

/* ---- definitions ------------------------------------------------------------ */

shoal_planner_t shoal_planner_default(void)
{
    plan_params_t p = plan_params_default(PLAN_ADAPTIVE);
    shoal_planner_t d;
    memset(&d, 0, sizeof d);
    d.enabled = 0;
    d.speed = 5.0f;
    d.radius = 1.0f;
    d.goal = SHOAL_PLAN_GOAL_SEEK;
    d.avoid_collisions = 1;
    d.strategy = SHOAL_PLAN_ADAPTIVE;
    d.discount = p.discount;
    d.optimism = p.optimism;
    d.max_depth = p.max_depth;
    d.min_depth = p.min_depth;
    d.max_expansions = p.max_expansions;
    d.k_skip = p.k_skip;
    d.n_v = p.n_v;
    d.collapse = p.collapse;
    d.damping = p.damping;
    return d;
}

static plan_params_t params_from_def(const shoal_planner_t* d)
{
    plan_params_t p = plan_params_default((plan_strategy_t)d->strategy);
    p.strategy = (plan_strategy_t)d->strategy;
    p.discount = d->discount;
    p.optimism = d->optimism;
    p.max_depth = d->max_depth;
    p.min_depth = d->min_depth;
    p.max_expansions = d->max_expansions;
    p.max_seconds = (double)d->time_budget_ms * 1e-3;
    p.k_skip = d->k_skip;
    p.n_v = d->n_v;
    p.collapse = d->collapse;
    p.damping = d->damping;
    return p;
}

static const char* goal_name(shoal_plan_goal_t g)
{
    switch (g) {
    case SHOAL_PLAN_GOAL_NONE: return "NONE";
    case SHOAL_PLAN_GOAL_SEEK: return "SEEK";
    case SHOAL_PLAN_GOAL_FLEE: return "FLEE";
    case SHOAL_PLAN_GOAL_PURSUE: return "PURSUE";
    case SHOAL_PLAN_GOAL_EVADE: return "EVADE";
    }
    return "?";
}

static int goal_uses_agent(shoal_plan_goal_t g)
{
    return g == SHOAL_PLAN_GOAL_PURSUE || g == SHOAL_PLAN_GOAL_EVADE;
}

shoal_status_t planner_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    const shoal_planner_t* p = &d->planner;
    if (p->enabled != 0 && p->enabled != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: planner.enabled must be 0 or 1, got %d", where,
                          (int)p->enabled);
    if (!p->enabled) return SHOAL_OK;
    if (d->ground.enabled)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.enabled and ground.enabled are both 1; an agent is a planner "
                          "agent or a ground vehicle, not both",
                          where);
    if (!(isfinite(p->speed) && p->speed > 0.0f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.speed must be finite and > 0 m/s, got %g", where, (double)p->speed);
    if (!(isfinite(p->radius) && p->radius >= 0.0f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.radius must be finite and >= 0 m, got %g", where, (double)p->radius);
    if ((unsigned)p->goal > (unsigned)SHOAL_PLAN_GOAL_EVADE)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.goal must be SHOAL_PLAN_GOAL_NONE (0), SEEK (1), FLEE (2), "
                          "PURSUE (3) or EVADE (4), got %d",
                          where, (int)p->goal);
    for (int k = 0; k < 3; ++k)
        if (!isfinite(p->goal_point[k]))
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: planner.goal_point[%d] must be finite, got %g", where, k,
                              (double)p->goal_point[k]);
    if (goal_uses_agent(p->goal) && p->goal_agent.index1 != 0 && p->goal_agent.world0 != w->tag)
        return world_fail(w, SHOAL_ERR_STALE_HANDLE, "%s: planner.goal_agent does not belong to this world",
                          where);
    if (p->avoid_collisions != 0 && p->avoid_collisions != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.avoid_collisions must be 0 or 1, got %d", where,
                          (int)p->avoid_collisions);
    if ((unsigned)p->strategy > (unsigned)SHOAL_PLAN_ADAPTIVE)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.strategy must be SHOAL_PLAN_SINGLE_STEP (0), UNIFORM (1) or "
                          "ADAPTIVE (2), got %d",
                          where, (int)p->strategy);
    plan_params_t pp = params_from_def(p);
    if (!(isfinite(p->time_budget_ms) && p->time_budget_ms >= 0.0f &&
          p->time_budget_ms <= PLANNER_MAX_TIME_BUDGET_MS))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.time_budget_ms must be finite and in [0, %g] ms (0: no time "
                          "budget), got %g",
                          where, (double)PLANNER_MAX_TIME_BUDGET_MS, (double)p->time_budget_ms);
    char msg[256];
    if (!plan_params_valid(&pp, msg, sizeof msg))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: planner.%s", where, msg);
    if (p->max_expansions > PLANNER_MAX_EXPANSIONS)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.max_expansions must be in [1, %d], got %d", where,
                          PLANNER_MAX_EXPANSIONS, (int)p->max_expansions);
    return SHOAL_OK;
}

shoal_status_t planner_check_goal_agent(world_t* w, const shoal_planner_t* p, const char* where)
{
    if (!p->enabled || !goal_uses_agent(p->goal)) return SHOAL_OK;
    if (p->goal_agent.index1 == 0)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: planner.goal_agent is the null handle; goal %s needs a target agent", where,
                          goal_name(p->goal));
    if (!shoal_agent_is_valid(w, p->goal_agent))
        return world_fail(w, SHOAL_ERR_STALE_HANDLE,
                          "%s: planner.goal_agent {index %u, generation %u} is not a live agent of "
                          "this world (removed, or never added)",
                          where, (unsigned)(p->goal_agent.index1 - 1u), (unsigned)p->goal_agent.generation);
    return SHOAL_OK;
}

/* ---- component rows ------------------------------------------------------ */

/* The agent row's pose as a trim pose: its position, and its quaternion
 * (3D) or a yaw quaternion with x = y = 0 exactly (2D). */
static trim_pose_t row_pose(const world_t* w, int32_t row)
{
    trim_pose_t p;
    p.pos = (vec3){AGENT_F(w, AC_POS_X)[row], AGENT_F(w, AC_POS_Y)[row],
                   w->dims == 3 ? AGENT_F(w, AC_POS_Z)[row] : 0.0f};
    if (w->dims == 3) {
        quat q = {AGENT_F(w, AC_QW)[row], AGENT_F(w, AC_QX)[row], AGENT_F(w, AC_QY)[row],
                  AGENT_F(w, AC_QZ)[row]};
        p.rot = quat_normalize(q);
    } else {
        p.rot = quat_from_yaw(AGENT_F(w, AC_HEADING)[row]);
    }
    return p;
}

/* A new interval from the agent's current pose, to be planned at the next
 * step (PL_PLAN_NOW) from the rates of the straight control, and cut short
 * to end on the agent's phase (planner.c), so that the intervals of agents
 * added together end spread over the substeps. */
static void restart_interval(world_t* w, int32_t r)
{
    const int k = COMP_PLANNER;
    const planner_world_t* pw = planner_data(w);
    int32_t row = COMP_I(w, k, PL_ROW)[r];
    const planner_view_t v = planner_view(w);
    trim_pose_t start = planner_wrap_pose(w, row_pose(w, row));
    planner_store_start(&v, r, start);
    planner_store_rel(&v, r, trim_rel_start()); /* substeps done (PL_K): 0 */
    int32_t n = pw->table.spec.substeps;
    uint64_t due = (pw->substep_clock + (uint64_t)planner_phase(agent_global_id(w, row), n)) % (uint64_t)n;
    COMP_I(w, k, PL_LEN)[r] = due == 0 ? n : n - (int32_t)due;
    COMP_I(w, k, PL_CI)[r] = pw->table.straight;
    COMP_I(w, k, PL_CF)[r] = pw->table.straight;
    COMP_I(w, k, PL_NEXT)[r] = -1;
    COMP_I(w, k, PL_PLAN_NOW)[r] = 1;
    COMP_F(w, k, PL_RUN_SPEED)[r] = COMP_F(w, k, PL_SPEED)[r];
    COMP_I(w, k, PL_OVERLAP)[r] = 0;
    float rates[TRIM_MAX_AXES] = {0.0f, 0.0f, 0.0f};
    trim_control_rates(&pw->table.spec, pw->table.straight, rates);
    agent_view_t a = agent_view(w);
    planner_write_agent_pose(&a, w->dims == 3, row, planner_pose_ahead(&pw->table.spec, &v, r, 0),
                             COMP_F(w, k, PL_SPEED)[r], rates);
}

void planner_after_teleport(world_t* w, int32_t r) { restart_interval(w, r); }

/* ---- status and goals ------------------------------------------------------ */

/* The component row of a live planner agent, or -1 with the error. */
static int32_t planner_row(const world_t* w, shoal_agent_t id, const char* where, shoal_status_t* st)
{
    return world_component_row(w, id, COMP_PLANNER, "a planner agent", "planner", where, st);
}

shoal_status_t shoal_agent_get_planner(const shoal_world_t* w, shoal_agent_t id, shoal_planner_status_t* out)
{
    static const char* where = "agent_get_planner";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out is NULL", where);
    shoal_status_t st;
    int32_t r = planner_row(w, id, where, &st);
    if (r < 0) return st;
    const planner_view_t v = planner_view(w);
    memset(out, 0, sizeof *out);
    out->control = v.cf[r];
    out->searches = (int64_t)planner_get_u64(v.searches_lo, v.searches_hi, r);
    out->goodness_sum = planner_get_f64(v.goodness_lo, v.goodness_hi, r);
    out->search_ns_sum = planner_get_f64(v.ns_lo, v.ns_hi, r);
    out->states_sum = (int64_t)planner_get_u64(v.states_lo, v.states_hi, r);
    out->expanded_sum = (int64_t)planner_get_u64(v.expanded_lo, v.expanded_hi, r);
    out->collisions = v.collisions[r];
    out->last_goodness = v.last_goodness[r];
    return SHOAL_OK;
}

int planner_interval_of(const world_t* w, shoal_agent_t id, planner_interval_t* out)
{
    if (!w || !out || !shoal_agent_is_valid(w, id)) return 0;
    uint32_t slot = id.index1 - 1u;
    if (w->slots[slot].state != SLOT_LIVE) return 0;
    int32_t r = component_row(&w->comps[COMP_PLANNER], slot);
    if (r < 0) return 0;
    const planner_view_t v = planner_view(w);
    out->start = planner_load_start(&v, r);
    out->now = planner_pose_ahead(&planner_data(w)->table.spec, &v, r, 0);
    out->initial_control = v.ci[r];
    out->final_control = v.cf[r];
    out->substeps_done = v.k[r];
    out->substeps = v.len[r];
    out->speed = v.run_speed[r];
    return 1;
}

/* ---- state hash ------------------------------------------------------------ */

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

uint64_t planner_hash(const world_t* w, uint64_t h, uint64_t (*absorb)(uint64_t, uint64_t))
{
    const planner_world_t* pw = planner_data(w);
    /* Planner data that holds no state yet (made by a call that then ran
     * out of memory) hashes as none: the hash is of state, not memory. */
    if (!pw || (!pw->has_table && pw->substep_clock == 0 && pw->leftover == 0)) return h;
    h = absorb(h, 0x706c616e00000000ull | (uint64_t)(uint32_t)pw->has_table);
    if (pw->has_table) {
        const trim_spec_t* s = &pw->table.spec;
        h = absorb(h, ((uint64_t)(uint32_t)s->axes << 32) | (uint32_t)s->substeps);
        for (int a = 0; a < TRIM_MAX_AXES; ++a)
            h = absorb(h, ((uint64_t)(uint32_t)s->samples[a] << 32) | float_bits(s->max_rate[a]));
        h = absorb(h, float_bits(s->interval));
    }
    uint64_t leftover;
    memcpy(&leftover, &pw->leftover, sizeof leftover);
    h = absorb(h, pw->substep_clock);
    return absorb(h, leftover);
}

/* ---- the module ------------------------------------------------------------ */

static void planner_defaults(shoal_agent_def_t* d) { d->planner = shoal_planner_default(); }

static int planner_needs(const shoal_agent_def_t* d) { return d->planner.enabled != 0; }

static shoal_status_t planner_validate_add(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    return planner_check_goal_agent(w, &d->planner, where);
}

/* The first planner agent of a world without a trim table builds the
 * default one. */
static int planner_prepare_def(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    (void)d;
    return planner_prepare(w, where);
}

/* The parameters come from the definition; planner_validate checks them
 * (with plan_params_valid, the check the standalone search shares). The
 * goal's z is 0 in 2D (planner_write_row). Search timings
 * are wall time, a statistic, not state. The statistics' halves are bit
 * patterns; the last goodness is a statistic no system reads (a search may
 * report -inf). The time budget came with snapshot version 5: older files
 * load it as 0. */
/* Enumerations are stored as the int32 they are. */
_Static_assert(sizeof(shoal_plan_goal_t) == 4 && sizeof(shoal_plan_strategy_t) == 4, "4-byte enumerations");
#define PLANNER_F32(nm, member)                                                                              \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_F32                                        \
    }
#define PLANNER_I32(nm, member)                                                                              \
    {                                                                                                        \
        .name = nm, .field = COLUMN_FIELD(member), .type = COLUMN_I32, .flags = COLUMN_BITS                  \
    }
static const column_def_t planner_columns[PL_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [PL_SPEED] = PLANNER_F32("planner.speed", planner.speed),
    [PL_RADIUS] = PLANNER_F32("planner.radius", planner.radius),
    [PL_GOAL] = PLANNER_I32("planner.goal", planner.goal),
    [PL_GOAL_X] = PLANNER_F32("planner.goal_point[0]", planner.goal_point[0]),
    [PL_GOAL_Y] = PLANNER_F32("planner.goal_point[1]", planner.goal_point[1]),
    [PL_GOAL_Z] = PLANNER_F32("planner.goal_point[2]", planner.goal_point[2]),
    /* checked (when the goal uses it) by planner_validate and planner_check_goal_agent */
    [PL_GOAL_ID_LO] = {.name = "planner.goal_agent",
                       .field = COLUMN_FIELD(planner.goal_agent),
                       .type = COLUMN_AGENT_ID_LO,
                       .flags = COLUMN_BITS},
    [PL_GOAL_ID_HI] = {.name = "planner.goal_agent.hi",
                       .field = COLUMN_FIELD(planner.goal_agent),
                       .type = COLUMN_AGENT_ID_HI,
                       .flags = COLUMN_BITS},
    [PL_AVOID] = PLANNER_I32("planner.avoid_collisions", planner.avoid_collisions),
    [PL_STRATEGY] = PLANNER_I32("planner.strategy", planner.strategy),
    [PL_DISCOUNT] = PLANNER_F32("planner.discount", planner.discount),
    [PL_OPTIMISM] = PLANNER_F32("planner.optimism", planner.optimism),
    [PL_MAX_DEPTH] = PLANNER_I32("planner.max_depth", planner.max_depth),
    [PL_MIN_DEPTH] = PLANNER_I32("planner.min_depth", planner.min_depth),
    [PL_MAX_EXPANSIONS] = PLANNER_I32("planner.max_expansions", planner.max_expansions),
    [PL_K_SKIP] = PLANNER_I32("planner.k_skip", planner.k_skip),
    [PL_N_V] = PLANNER_I32("planner.n_v", planner.n_v),
    [PL_COLLAPSE] = PLANNER_F32("planner.collapse", planner.collapse),
    [PL_DAMPING] = PLANNER_F32("planner.damping", planner.damping),
    [PL_START_X] = COLUMN_STATE_F32("planner.start_x"),
    [PL_START_Y] = COLUMN_STATE_F32("planner.start_y"),
    [PL_START_Z] = COLUMN_STATE_F32("planner.start_z"),
    [PL_START_QW] = COLUMN_STATE_F32("planner.start_qw"),
    [PL_START_QX] = COLUMN_STATE_F32("planner.start_qx"),
    [PL_START_QY] = COLUMN_STATE_F32("planner.start_qy"),
    [PL_START_QZ] = COLUMN_STATE_F32("planner.start_qz"),
    [PL_REL_X] = COLUMN_STATE_F32("planner.rel_x"),
    [PL_REL_Y] = COLUMN_STATE_F32("planner.rel_y"),
    [PL_REL_Z] = COLUMN_STATE_F32("planner.rel_z"),
    [PL_REL_QW] = COLUMN_STATE_F32("planner.rel_qw"),
    [PL_REL_QX] = COLUMN_STATE_F32("planner.rel_qx"),
    [PL_REL_QY] = COLUMN_STATE_F32("planner.rel_qy"),
    [PL_REL_QZ] = COLUMN_STATE_F32("planner.rel_qz"),
    [PL_K] = COLUMN_STATE_I32("planner.k"),
    [PL_LEN] = COLUMN_STATE_I32("planner.len"),
    [PL_CI] = COLUMN_STATE_I32("planner.ci"),
    [PL_CF] = COLUMN_STATE_I32("planner.cf"),
    [PL_NEXT] = COLUMN_STATE_I32("planner.next"),
    [PL_PLAN_NOW] = COLUMN_STATE_I32("planner.plan_now"),
    [PL_RUN_SPEED] = COLUMN_STATE_F32("planner.run_speed"),
    [PL_PERM_OFFSET] = COLUMN_STATE_U32("planner.perm_offset"),
    [PL_OVERLAP] = COLUMN_STATE_I32("planner.overlap"),
    [PL_SEARCHES_LO] = COLUMN_STATE_U32("planner.searches_lo"),
    [PL_SEARCHES_HI] = COLUMN_STATE_U32("planner.searches_hi"),
    [PL_GOODNESS_LO] = COLUMN_STATE_U32("planner.goodness_lo"),
    [PL_GOODNESS_HI] = COLUMN_STATE_U32("planner.goodness_hi"),
    [PL_NS_LO] = {.name = "planner.ns_lo",
                  .field = COLUMN_NO_FIELD,
                  .type = COLUMN_U32,
                  .flags = COLUMN_NOT_STATE | COLUMN_BITS},
    [PL_NS_HI] = {.name = "planner.ns_hi",
                  .field = COLUMN_NO_FIELD,
                  .type = COLUMN_U32,
                  .flags = COLUMN_NOT_STATE | COLUMN_BITS},
    [PL_STATES_LO] = COLUMN_STATE_U32("planner.states_lo"),
    [PL_STATES_HI] = COLUMN_STATE_U32("planner.states_hi"),
    [PL_EXPANDED_LO] = COLUMN_STATE_U32("planner.expanded_lo"),
    [PL_EXPANDED_HI] = COLUMN_STATE_U32("planner.expanded_hi"),
    [PL_COLLISIONS] = COLUMN_STATE_I32("planner.collisions"),
    [PL_LAST_GOODNESS] = {.name = "planner.last_goodness",
                          .field = COLUMN_NO_FIELD,
                          .type = COLUMN_F32,
                          .flags = COLUMN_BITS},
    [PL_TIME_BUDGET] = {.name = "planner.time_budget_ms",
                        .field = COLUMN_FIELD(planner.time_budget_ms),
                        .type = COLUMN_F32,
                        .flags = COLUMN_NOT_STATE,
                        .since = 5},
};
#undef PLANNER_F32
#undef PLANNER_I32

/* After the pose: the table's columns, then the goal's z in 2D. A fresh
 * row starts its first interval from the agent's pose, planned at the next
 * step and cut short so that its intervals end on its phase (planner.c). */
static void planner_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                              int fresh)
{
    (void)forward;
    const int k = COMP_PLANNER;
    columns_write(w, k, r, d, planner_columns, PL_COUNT_);
    if (w->dims == 2) COMP_F(w, k, PL_GOAL_Z)[r] = 0.0f;
    if (!fresh) return;
    /* A fresh row is all zero (statistics included). */
    const planner_world_t* pw = planner_data(w);
    uint64_t bits = rng_bits(w->seed, 0x6f66667365742121ull, agent_global_id(w, w->slots[slot].row), 0);
    COMP_U(w, k, PL_PERM_OFFSET)[r] = (uint32_t)(bits % (uint64_t)pw->table.controls);
    restart_interval(w, r);
}

static void planner_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_PLANNER, r, d, planner_columns, PL_COUNT_);
    d->planner.enabled = 1;
}

/* A planner agent starts a new interval from the new pose (its velocity is
 * its speed along the facing, whatever was given). */
static void planner_teleported(world_t* w, int32_t r, const float velocity[3])
{
    (void)velocity;
    planner_after_teleport(w, r);
}

const module_t planner_module = {
    .name = "planner",
    .flags = MODULE_MOVES_ITSELF,
    .column_count = PL_COUNT_,
    .columns = planner_columns,
    .release = planner_release,
    .defaults = planner_defaults,
    .needs = planner_needs,
    .validate = planner_validate,
    .validate_add = planner_validate_add,
    .prepare = planner_prepare_def,
    .reserve_add_in_step = planner_reserve_def,
    .reserve_step = planner_reserve_step,
    .write_row = planner_write_row,
    .read_row = planner_read_row,
    .teleported = planner_teleported,
    .hash = planner_hash,
    .snapshot_tag = BYTE_TAG('P', 'L', 'A', 'N'),
    .save = planner_save,
    .load = planner_load,
    .check_loaded = planner_check_loaded,
};

typedef struct goal_arg {
    shoal_plan_goal_t goal;
    const float* point;
    shoal_agent_t agent;
} goal_arg_t;

static void edit_goal(shoal_agent_def_t* d, const void* a)
{
    const goal_arg_t* g = (const goal_arg_t*)a;
    d->planner.goal = g->goal;
    if (g->point) memcpy(d->planner.goal_point, g->point, sizeof d->planner.goal_point);
    if (g->goal == SHOAL_PLAN_GOAL_PURSUE || g->goal == SHOAL_PLAN_GOAL_EVADE)
        d->planner.goal_agent = g->agent;
}

shoal_status_t shoal_agent_set_planner_goal(shoal_world_t* w, shoal_agent_t id, shoal_plan_goal_t goal,
                                            const float point[3], shoal_agent_t agent)
{
    static const char* where = "agent_set_planner_goal";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    shoal_agent_def_t def;
    shoal_status_t st = agent_read_def(w, id, &def, where);
    if (st != SHOAL_OK) return st;
    if (!def.planner.enabled)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: the agent is not a planner agent (its planner.enabled is 0)", where);
    if ((unsigned)goal > (unsigned)SHOAL_PLAN_GOAL_EVADE)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: goal must be SHOAL_PLAN_GOAL_NONE (0), SEEK (1), FLEE (2), PURSUE (3) "
                          "or EVADE (4), got %d",
                          where, (int)goal);
    int uses_agent = goal == SHOAL_PLAN_GOAL_PURSUE || goal == SHOAL_PLAN_GOAL_EVADE;
    if (!point && (goal == SHOAL_PLAN_GOAL_SEEK || goal == SHOAL_PLAN_GOAL_FLEE))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: point is NULL; goal %s needs a point", where,
                          goal == SHOAL_PLAN_GOAL_SEEK ? "SEEK" : "FLEE");
    if (uses_agent && shoal_agent_equal(agent, id))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: a planner agent cannot pursue or evade itself",
                          where);
    goal_arg_t arg = {goal, point, agent};
    edit_goal(&def, &arg);
    st = planner_validate(w, &def, where);
    if (st == SHOAL_OK) st = planner_check_goal_agent(w, &def.planner, where);
    if (st != SHOAL_OK) return st;
    return agent_edit(w, id, where, edit_goal, &arg, AGENT_EDIT_COMPONENT(COMP_PLANNER));
}
