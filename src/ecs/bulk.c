/* Bulk adds, removes and writes (include/shoal/extend.h).
 *
 * A bulk add gives the same world as the same adds one at a time, in
 * order (same slots, rows, component rows and state hash): it checks
 * everything first, reserves all the memory, takes the slots in order, then
 * writes the rows on the world's workers. Each row is written from its own
 * agent's values only, so the split does not matter. */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/world.h"

static int finite_array(world_t* w, const char* where, const char* name, const float* v, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (!isfinite(v[i])) {
            world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s[%lld] must be finite, got %g", where, name,
                       (long long)i, (double)v[i]);
            return 0;
        }
    return 1;
}

/* Coordinates: finite and within +-DEF_MAX_COORDINATE (world.h). */
static int coordinate_array(world_t* w, const char* where, const char* name, const float* v, int64_t n)
{
    if (!finite_array(w, where, name, v, n)) return 0;
    for (int64_t i = 0; i < n; ++i)
        if (fabsf(v[i]) > DEF_MAX_COORDINATE) {
            world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s[%lld] must be within +-%g m, got %g", where,
                       name, (long long)i, (double)DEF_MAX_COORDINATE, (double)v[i]);
            return 0;
        }
    return 1;
}

/* ---- growing tables on the workers -------------------------------------- */

/* A new column array is filled (the old rows copied, the rest zeroed) a
 * share of rows per worker, the same contiguous shares the static systems
 * give each worker: the pages of a large table are first touched by the
 * worker that will step those rows (which places them on its memory node
 * where there are several), not all by the calling thread. */
typedef struct fill_ctx {
    const table_t* t;
    void* const* fresh;
} fill_ctx_t;

static void fill_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const fill_ctx_t* c = (const fill_ctx_t*)vctx;
    const table_t* t = c->t;
    for (int32_t col = 0; col < t->column_count; ++col) {
        size_t sz = t->elem_size[col];
        if (sz == 0) continue;
        size_t lo = (size_t)begin * sz, hi = (size_t)end * sz, used = (size_t)t->count * sz;
        char* dst = (char*)c->fresh[col];
        size_t copy_end = used < hi ? used : hi;
        if (lo < copy_end) memcpy(dst + lo, (const char*)t->columns[col] + lo, copy_end - lo);
        size_t zero_from = used > lo ? used : lo;
        if (zero_from < hi) memset(dst + zero_from, 0, hi - zero_from);
    }
}

int world_table_reserve(world_t* w, table_t* t, int32_t capacity, int32_t limit)
{
    int32_t want = table_grown_capacity(t, capacity, limit);
    if (want < 0) return 0;
    if (want == t->capacity) return 1;
    void* fresh[TABLE_MAX_COLUMNS] = {0};
    fill_ctx_t c = {t, fresh};
    void* block = table_block_alloc(t, &w->alloc, want, fresh);
    if (!block) return 0;
    par_for(w, want, 4096, PAR_STATIC, fill_rows, &c);
    table_block_free(t, &w->alloc, t->block, t->capacity);
    t->block = block;
    for (int32_t col = 0; col < t->column_count; ++col) t->columns[col] = fresh[col];
    t->capacity = want;
    return 1;
}

/* ---- writing the new rows, column by column ------------------------------ */

typedef struct bulk_ctx {
    world_t* w;
    const shoal_agent_def_t* def;
    const shoal_agent_arrays_t* a;
    const uint32_t* slots;                   /* the new agents' slots */
    int32_t base;                            /* the first new agent row */
    uint64_t first_id;                       /* the first new agent's global id */
    int32_t comp_base[WORLD_MAX_COMPONENTS]; /* first new row per component, -1: not needed */
} bulk_ctx_t;

static void fill_f(float* col, int32_t lo, int32_t hi, float v)
{
    for (int32_t i = lo; i < hi; ++i) col[i] = v;
}

static void fill_u(uint32_t* col, int32_t lo, int32_t hi, uint32_t v)
{
    for (int32_t i = lo; i < hi; ++i) col[i] = v;
}

/* Component `axis` of an xyz array, or the definition's value. */
static void fill_xyz(float* col, int32_t lo, int32_t hi, const float* xyz, int axis, float v)
{
    if (!xyz) {
        fill_f(col, lo, hi, v);
        return;
    }
    for (int32_t i = lo; i < hi; ++i) col[i] = xyz[3 * (int64_t)(i - lo) + axis];
}

/* Rows [base + begin, base + end): what agent_write_state writes for each
 * agent (agent.c's write_params and write_pose), one column at a time.
 * Columns a definition leaves at zero (intent, actuation, spin) are zero
 * already: rows past a table's count are kept zeroed. */
static void bulk_agent_columns(bulk_ctx_t* c, int32_t begin, int32_t end)
{
    world_t* w = c->w;
    const shoal_agent_def_t* d = c->def;
    const shoal_agent_arrays_t* a = c->a;
    const int three = w->dims == 3;
    int32_t lo = c->base + begin, hi = c->base + end;
    uint32_t* slot_col = table_slots(&w->agents);
    for (int32_t i = begin; i < end; ++i) slot_col[c->base + i] = c->slots[i];
    static const int param_cols[] = {AC_MASS,         AC_INERTIA,       AC_MAX_FORCE,   AC_MAX_TORQUE,
                                     AC_MAX_SPEED,    AC_MAX_TURN_RATE, AC_RADIUS,      AC_SPEED_GAIN,
                                     AC_HEADING_GAIN, AC_TURN_DAMPING,  AC_W_SEEK,      AC_W_FLEE,
                                     AC_W_ARRIVE,     AC_W_DEPART,      AC_ARRIVE_GAIN, AC_DEPART_GAIN};
    const float param_vals[] = {d->vehicle.mass,
                                d->vehicle.inertia,
                                d->vehicle.max_force,
                                d->vehicle.max_torque,
                                d->vehicle.max_speed,
                                d->vehicle.max_turn_rate,
                                d->vehicle.radius,
                                d->control.speed_gain,
                                d->control.heading_gain,
                                d->control.turn_damping,
                                d->weights[SHOAL_BEHAVIOR_SEEK],
                                d->weights[SHOAL_BEHAVIOR_FLEE],
                                d->weights[SHOAL_BEHAVIOR_ARRIVE],
                                d->weights[SHOAL_BEHAVIOR_DEPART],
                                d->arrive_gain,
                                d->depart_gain};
    for (size_t k = 0; k < sizeof param_cols / sizeof param_cols[0]; ++k)
        fill_f(AGENT_F(w, param_cols[k]), lo, hi, param_vals[k]);
    const float* tg = a->targets ? a->targets + 3 * (int64_t)begin : NULL;
    for (int axis = 0; axis < 2 + three; ++axis) {
        fill_xyz(AGENT_F(w, AC_TARGET_X + axis), lo, hi, tg, axis, d->target[axis]);
        fill_f(AGENT_F(w, AC_THREAT_X + axis), lo, hi, d->threat[axis]);
    }
    uint32_t* group = TABLE_COL(&w->agents, uint32_t, AC_GROUP);
    if (a->groups)
        for (int32_t i = begin; i < end; ++i) group[c->base + i] = a->groups[i];
    else
        fill_u(group, lo, hi, d->group);
    uint32_t* ulo = TABLE_COL(&w->agents, uint32_t, AC_USER_LO);
    uint32_t* uhi = TABLE_COL(&w->agents, uint32_t, AC_USER_HI);
    for (int32_t i = begin; i < end; ++i) {
        uint64_t u = a->user_values ? a->user_values[i] : d->user_value;
        ulo[c->base + i] = (uint32_t)u;
        uhi[c->base + i] = (uint32_t)(u >> 32);
    }
    /* The pose: position, velocity clamped to max speed, orientation. */
    const float* ps = a->positions ? a->positions + 3 * (int64_t)begin : NULL;
    for (int axis = 0; axis < 2 + three; ++axis)
        fill_xyz(AGENT_F(w, AC_POS_X + axis), lo, hi, ps, axis, d->position[axis]);
    float* vx = AGENT_F(w, AC_VEL_X);
    float* vy = AGENT_F(w, AC_VEL_Y);
    float* vz = three ? AGENT_F(w, AC_VEL_Z) : NULL;
    float vmax = d->vehicle.max_speed;
    for (int32_t i = begin; i < end; ++i) {
        const float* v = a->velocities ? a->velocities + 3 * (int64_t)i : d->velocity;
        float x = v[0], y = v[1], z = three ? v[2] : 0.0f;
        float speed = sqrtf(x * x + y * y + z * z);
        if (speed > vmax) {
            float k = speed > 0.0f ? vmax / speed : 0.0f;
            x *= k;
            y *= k;
            z *= k;
        }
        vx[c->base + i] = x;
        vy[c->base + i] = y;
        if (three) vz[c->base + i] = z;
    }
    float* heading = AGENT_F(w, AC_HEADING);
    if (!three) {
        float h0 = angle_wrap(d->heading);
        for (int32_t i = begin; i < end; ++i)
            heading[c->base + i] = a->headings ? angle_wrap(a->headings[i]) : h0;
        return;
    }
    float *qw = AGENT_F(w, AC_QW), *qx = AGENT_F(w, AC_QX), *qy = AGENT_F(w, AC_QY), *qz = AGENT_F(w, AC_QZ);
    quat q0 = quat_from_yaw_pitch_roll(d->heading, d->pitch, 0.0f);
    int each = a->headings || a->pitches;
    for (int32_t i = begin; i < end; ++i) {
        quat q = each ? quat_from_yaw_pitch_roll(a->headings ? a->headings[i] : d->heading,
                                                 a->pitches ? a->pitches[i] : d->pitch, 0.0f)
                      : q0;
        int32_t r = c->base + i;
        heading[r] = quat_yaw(q);
        qw[r] = q.w;
        qx[r] = q.x;
        qy[r] = q.y;
        qz[r] = q.z;
    }
}

/* The forward axis of new row `row` (as agent_write_state returns it). */
static vec3 row_forward(const world_t* w, const shoal_agent_def_t* d, const shoal_agent_arrays_t* a,
                        int32_t i)
{
    /* (i is only read when headings or pitches are given) */
    float h = a->headings ? a->headings[i] : d->heading;
    float p = w->dims != 3 ? 0.0f : a->pitches ? a->pitches[i] : d->pitch;
    return quat_forward(quat_from_yaw_pitch_roll(h, p, 0.0f));
}

static void bulk_write(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    bulk_ctx_t* c = (bulk_ctx_t*)vctx;
    world_t* w = c->w;
    const shoal_agent_arrays_t* a = c->a;
    for (int32_t i = begin; i < end; ++i) agent_set_global_id(w, c->base + i, c->first_id + (uint64_t)i);
    bulk_agent_columns(c, begin, end);
    if (w->user_count > 0) {
        for (int32_t i = begin; i < end; ++i) table_slots(&w->user)[c->base + i] = c->slots[i];
        for (int32_t u = 0; u < w->user_count; ++u) {
            const user_column_t* col = &w->user_cols[u];
            char* dst = (char*)w->user.columns[u + 1];
            for (int32_t i = begin; i < end; ++i)
                memcpy(dst + (size_t)(c->base + i) * col->elem_size, col->default_value, col->elem_size);
        }
    }
    /* Component rows: their module writes each from the agent's own
     * definition (the shared one with the agent's values patched in). */
    shoal_agent_def_t d = *c->def;
    int each_forward = a->headings || (a->pitches && w->dims == 3);
    vec3 shared_forward = row_forward(w, c->def, a, 0); /* used when no headings or pitches are given */
    for (int k = 0; k < w->comp_count; ++k) {
        if (c->comp_base[k] < 0) continue;
        component_t* comp = &w->comps[k];
        const module_t* m = w->comp_module[k];
        uint32_t* cslots = table_slots(&comp->table);
        int32_t* crow = TABLE_COL(&comp->table, int32_t, COMP_ROW);
        for (int32_t i = begin; i < end; ++i) {
            int32_t r = c->comp_base[k] + i;
            uint32_t slot = c->slots[i];
            cslots[r] = slot;
            crow[r] = c->base + i;
            comp->sparse[slot] = r;
            if (!m->write_row) continue;
            if (a->positions) memcpy(d.position, a->positions + 3 * (int64_t)i, sizeof d.position);
            if (a->velocities) memcpy(d.velocity, a->velocities + 3 * (int64_t)i, sizeof d.velocity);
            if (a->headings) d.heading = a->headings[i];
            if (a->pitches) d.pitch = a->pitches[i];
            if (a->targets) memcpy(d.target, a->targets + 3 * (int64_t)i, sizeof d.target);
            if (a->groups) d.group = a->groups[i];
            if (a->user_values) d.user_value = a->user_values[i];
            m->write_row(w, r, slot, &d, each_forward ? row_forward(w, c->def, a, i) : shared_forward, 1);
        }
    }
}

shoal_status_t shoal_agents_add(shoal_world_t* w, const shoal_agent_def_t* def,
                                const shoal_agent_arrays_t* arrays, int32_t count, shoal_agent_t* out_ids)
{
    static const char* where = "agents_add";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (count < 0)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: count must be >= 0, got %d", where, (int)count);
    shoal_status_t st = agent_validate_def(w, def, where);
    if (st != SHOAL_OK) return st;
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->validate_add && (st = mod->validate_add(w, def, where)) != SHOAL_OK) return st;
    }
    shoal_agent_arrays_t none;
    memset(&none, 0, sizeof none);
    const shoal_agent_arrays_t* a = arrays ? arrays : &none;
    int64_t n = count;
    if (!coordinate_array(w, where, "positions", a->positions, a->positions ? 3 * n : 0) ||
        !finite_array(w, where, "velocities", a->velocities, a->velocities ? 3 * n : 0) ||
        !finite_array(w, where, "headings", a->headings, a->headings ? n : 0) ||
        !coordinate_array(w, where, "targets", a->targets, a->targets ? 3 * n : 0) ||
        !finite_array(w, where, "pitches", a->pitches, a->pitches && w->dims == 3 ? n : 0))
        return SHOAL_ERR_INVALID_ARGUMENT;
    if (count == 0) return SHOAL_OK;
    if ((int64_t)w->agents.count + count > INT32_MAX / 2)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: at most %d agents", where, INT32_MAX / 2);
    int32_t live_after = w->agents.count + count;
    size_t slots_size = (size_t)count * sizeof(uint32_t);
    uint32_t* slots = (uint32_t*)mem_alloc(&w->alloc, slots_size);
    int ok = slots && agent_reserve_slots(w, count) &&
             world_table_reserve(w, &w->agents, live_after, INT32_MAX) &&
             user_reserve(w, w->agents.capacity) && world_reserve_row_mask(w) &&
             id_map_reserve(&w->ids, &w->alloc, (uint64_t)count);
    for (int k = 0; ok && k < w->comp_count; ++k) {
        if (!agent_needs_component(w, def, k)) continue;
        table_t* t = &w->comps[k].table;
        ok = component_reserve_slots(&w->comps[k], &w->alloc, w->slot_capacity) &&
             world_table_reserve(w, t, t->count + count, w->agents.capacity);
    }
    if (!ok) {
        mem_free(&w->alloc, slots, slots_size);
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory growing to %d agents", where,
                          (int)live_after);
    }
    st = agent_prepare_modules(w, def, where);
    if (st != SHOAL_OK) {
        mem_free(&w->alloc, slots, slots_size);
        return st;
    }

    /* Nothing can fail from here on. */
    bulk_ctx_t c;
    c.w = w;
    c.def = def;
    c.a = a;
    c.slots = slots;
    c.base = w->agents.count;
    c.first_id = w->next_id;
    w->next_id += (uint64_t)count;
    for (int32_t i = 0; i < count; ++i) {
        uint32_t s = agent_take_slot(w);
        slots[i] = s;
        /* Consecutive ids' buckets are far apart: ask for one well ahead. */
        id_map_prefetch(&w->ids, c.first_id + (uint64_t)i + 16);
        id_map_put(&w->ids, c.first_id + (uint64_t)i, s);
        w->slots[s].row = c.base + i;
        w->slots[s].state = SLOT_LIVE;
        if (out_ids) out_ids[i] = (shoal_agent_t){s + 1, w->tag, w->slots[s].generation};
    }
    w->agents.count += count;
    if (w->user_count > 0) w->user.count += count;
    for (int k = 0; k < w->comp_count; ++k) {
        c.comp_base[k] = -1;
        if (!agent_needs_component(w, def, k)) continue;
        c.comp_base[k] = w->comps[k].table.count;
        w->comps[k].table.count += count;
        w->comps[k].version++;
    }
    w->structure_version++;
    par_for(w, count, 1024, PAR_STATIC, bulk_write, &c);
    /* Every row written holds the definition's parameters: row base's. */
    float vals[AP_COUNT];
    for (int k = 0; k < AP_COUNT; ++k) vals[k] = AGENT_F(w, AP_FIRST + k)[c.base];
    agent_params_note(w, vals, c.base);
    mem_free(&w->alloc, slots, slots_size);
    return SHOAL_OK;
}

/* Every handle live (or pending) and none repeated; `seen` is a scratch
 * bit per slot. */
static shoal_status_t check_handles(world_t* w, const shoal_agent_t* ids, int32_t count, const char* where,
                                    int allow_pending, uint8_t* seen)
{
    for (int32_t i = 0; i < count; ++i) {
        int32_t s = world_resolve(w, ids[i], allow_pending, where);
        if (s < 0) return SHOAL_ERR_STALE_HANDLE;
        if (seen[s])
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: ids[%d] repeats an earlier handle", where,
                              (int)i);
        seen[s] = 1;
    }
    return SHOAL_OK;
}

/* The common start of the bulk calls on handles: arguments, then every
 * handle checked. */
static shoal_status_t begin_handles(world_t* w, const shoal_agent_t* ids, int32_t count, const char* where,
                                    int allow_pending)
{
    if (count < 0)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: count must be >= 0, got %d", where, (int)count);
    if (count > 0 && !ids) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: ids is NULL", where);
    if (count == 0) return SHOAL_OK;
    size_t size = (size_t)(w->slot_high > 0 ? w->slot_high : 1);
    uint8_t* seen = (uint8_t*)mem_calloc(&w->alloc, size);
    if (!seen) return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    shoal_status_t st = check_handles(w, ids, count, where, allow_pending, seen);
    mem_free(&w->alloc, seen, size);
    return st;
}

shoal_status_t shoal_agents_remove(shoal_world_t* w, const shoal_agent_t* ids, int32_t count)
{
    static const char* where = "agents_remove";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    shoal_status_t st = begin_handles(w, ids, count, where, 0);
    if (st != SHOAL_OK || count == 0) return st;
    for (int32_t i = 0; i < count; ++i) agent_remove_live(w, ids[i].index1 - 1);
    return SHOAL_OK;
}

shoal_status_t shoal_agents_set_targets(shoal_world_t* w, const shoal_agent_t* ids, int32_t count,
                                        const float* targets)
{
    static const char* where = "agents_set_targets";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (count > 0 && !targets) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: targets is NULL", where);
    shoal_status_t st = begin_handles(w, ids, count, where, 0);
    if (st != SHOAL_OK) return st;
    if (!coordinate_array(w, where, "targets", targets, 3 * (int64_t)count))
        return SHOAL_ERR_INVALID_ARGUMENT;
    /* The target is an agent column only: no component reads it. */
    for (int32_t i = 0; i < count; ++i) {
        int32_t row = w->slots[ids[i].index1 - 1].row;
        AGENT_F(w, AC_TARGET_X)[row] = targets[3 * i];
        AGENT_F(w, AC_TARGET_Y)[row] = targets[3 * i + 1];
        if (w->dims == 3) AGENT_F(w, AC_TARGET_Z)[row] = targets[3 * i + 2];
    }
    return SHOAL_OK;
}

shoal_status_t shoal_agents_teleport(shoal_world_t* w, const shoal_agent_t* ids, int32_t count,
                                     const float* positions, const float* velocities)
{
    static const char* where = "agents_teleport";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (count > 0 && !positions)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: positions is NULL", where);
    shoal_status_t st = begin_handles(w, ids, count, where, 0);
    if (st != SHOAL_OK) return st;
    if (!coordinate_array(w, where, "positions", positions, 3 * (int64_t)count) ||
        (velocities && !finite_array(w, where, "velocities", velocities, 3 * (int64_t)count)))
        return SHOAL_ERR_INVALID_ARGUMENT;
    /* Each one as shoal_agent_teleport, keeping the agent's orientation. */
    static const float zero[3] = {0.0f, 0.0f, 0.0f};
    for (int32_t i = 0; i < count; ++i) {
        shoal_agent_state_t s;
        shoal_agent_get_state(w, ids[i], &s);
        st = shoal_agent_teleport(w, ids[i], positions + 3 * (int64_t)i,
                                  velocities ? velocities + 3 * (int64_t)i : zero, s.heading, s.orientation);
        if (st != SHOAL_OK) return st; /* checked above: cannot happen */
    }
    return SHOAL_OK;
}
