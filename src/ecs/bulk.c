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

typedef struct bulk_ctx {
    world_t* w;
    const shoal_agent_def_t* def;
    const shoal_agent_arrays_t* a;
    const uint32_t* slots;  /* the new agents' slots */
    int32_t base;           /* the first new agent row */
    int32_t comp_base[WORLD_MAX_COMPONENTS]; /* first new row per component, -1: not needed */
} bulk_ctx;

static void bulk_write(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    bulk_ctx* c = (bulk_ctx*)vctx;
    world_t* w = c->w;
    const shoal_agent_arrays_t* a = c->a;
    shoal_agent_def_t d = *c->def; /* one copy per block, patched per agent */
    for (int32_t i = begin; i < end; ++i) {
        if (a->positions) memcpy(d.position, a->positions + 3 * (int64_t)i, sizeof d.position);
        if (a->velocities) memcpy(d.velocity, a->velocities + 3 * (int64_t)i, sizeof d.velocity);
        if (a->headings) d.heading = a->headings[i];
        if (a->targets) memcpy(d.target, a->targets + 3 * (int64_t)i, sizeof d.target);
        if (a->groups) d.group = a->groups[i];
        if (a->user_values) d.user_value = a->user_values[i];
        int32_t row = c->base + i;
        uint32_t slot = c->slots[i];
        table_slots(&w->agents)[row] = slot;
        vec3 forward = agent_write_state(w, row, &d);
        if (w->user_count > 0) {
            table_slots(&w->user)[row] = slot;
            for (int32_t u = 0; u < w->user_count; ++u) {
                const user_column_t* col = &w->user_cols[u];
                memcpy((char*)w->user.columns[u + 1] + (size_t)row * col->elem_size, col->default_value,
                       col->elem_size);
            }
        }
        for (int k = 0; k < w->comp_count; ++k) {
            if (c->comp_base[k] < 0) continue;
            component_t* comp = &w->comps[k];
            int32_t r = c->comp_base[k] + i;
            table_slots(&comp->table)[r] = slot;
            TABLE_COL(&comp->table, int32_t, COMP_ROW)[r] = row;
            comp->sparse[slot] = r;
            const module_t* m = w->comp_module[k];
            if (m->write_row) m->write_row(w, r, slot, &d, forward, 1);
        }
    }
}

shoal_status_t shoal_agents_add(shoal_world_t* w, const shoal_agent_def_t* def, const shoal_agent_arrays_t* arrays,
                                int32_t count, shoal_agent_t* out_ids)
{
    static const char* where = "agents_add";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (count < 0) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: count must be >= 0, got %d", where, (int)count);
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
    if (!finite_array(w, where, "positions", a->positions, a->positions ? 3 * n : 0) ||
        !finite_array(w, where, "velocities", a->velocities, a->velocities ? 3 * n : 0) ||
        !finite_array(w, where, "headings", a->headings, a->headings ? n : 0) ||
        !finite_array(w, where, "targets", a->targets, a->targets ? 3 * n : 0))
        return SHOAL_ERR_INVALID_ARGUMENT;
    if (count == 0) return SHOAL_OK;
    if ((int64_t)w->agents.count + count > INT32_MAX / 2)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: at most %d agents", where, INT32_MAX / 2);
    int32_t live_after = w->agents.count + count;
    size_t slots_size = (size_t)count * sizeof(uint32_t);
    uint32_t* slots = (uint32_t*)mem_alloc(&w->alloc, slots_size);
    int ok = slots && agent_reserve_slots(w, count) && table_reserve(&w->agents, &w->alloc, live_after) &&
             user_reserve(w, w->agents.capacity) && world_reserve_def_rows(w, def, count);
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
    bulk_ctx c;
    c.w = w;
    c.def = def;
    c.a = a;
    c.slots = slots;
    c.base = w->agents.count;
    for (int32_t i = 0; i < count; ++i) {
        uint32_t s = agent_take_slot(w);
        slots[i] = s;
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
    if (count < 0) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: count must be >= 0, got %d", where, (int)count);
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
    if (!finite_array(w, where, "targets", targets, 3 * (int64_t)count)) return SHOAL_ERR_INVALID_ARGUMENT;
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
    if (count > 0 && !positions) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: positions is NULL", where);
    shoal_status_t st = begin_handles(w, ids, count, where, 0);
    if (st != SHOAL_OK) return st;
    if (!finite_array(w, where, "positions", positions, 3 * (int64_t)count) ||
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
