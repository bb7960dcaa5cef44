/* Agents: the slot table and handles, the global-id map's entries (put
 * when an add takes a slot, erased when the agent is removed) and the
 * references to agents that components store by global id, the command
 * queue of changes asked for inside a step, adds and removes, state reads,
 * teleports, and the read-modify-validate-write path every setter goes
 * through (agent_edit):
 * read the agent's current definition (from its row, or from the queued
 * add if it is still pending), change it, validate the result, and only
 * then write back what the change may touch (the agent table's parameters
 * or one module's component row, agent_edit's `writes`). A failed call
 * changes nothing. */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/world.h"
#include "simd/vec.h"

/* ---- slots -------------------------------------------------------------- */

int32_t world_resolve(const world_t* w, shoal_agent_t id, int allow_pending, const char* where)
{
    if (id.index1 == 0) {
        world_failc(w, SHOAL_ERR_STALE_HANDLE, "%s: the handle is null", where);
        return -1;
    }
    uint32_t slot = id.index1 - 1;
    if (id.world0 != w->tag || slot >= (uint32_t)w->slot_high) {
        world_failc(w, SHOAL_ERR_STALE_HANDLE,
                    "%s: handle {index %u, generation %u} does not belong to this world", where,
                    (unsigned)slot, (unsigned)id.generation);
        return -1;
    }
    const slot_t* s = &w->slots[slot];
    int usable = s->state == SLOT_LIVE || (allow_pending && s->state == SLOT_PENDING);
    if (s->generation != id.generation || !usable) {
        world_failc(w, SHOAL_ERR_STALE_HANDLE,
                    "%s: handle {index %u, generation %u} is stale: that agent was removed", where,
                    (unsigned)slot, (unsigned)id.generation);
        return -1;
    }
    return (int32_t)slot;
}

int32_t world_component_row(const world_t* w, shoal_agent_t id, int comp, const char* kind, const char* field,
                            const char* where, shoal_status_t* st)
{
    int32_t slot = world_resolve(w, id, 1, where);
    if (slot < 0) {
        *st = SHOAL_ERR_STALE_HANDLE;
        return -1;
    }
    if (w->slots[slot].state == SLOT_PENDING) {
        *st = world_failc(w, SHOAL_ERR_BUSY,
                          "%s: the agent was added during this step; it is live once the step ends", where);
        return -1;
    }
    int32_t r = component_row(&w->comps[comp], (uint32_t)slot);
    if (r < 0) {
        *st = world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: the agent is not %s (its %s.enabled is 0)",
                          where, kind, field);
        return -1;
    }
    *st = SHOAL_OK;
    return r;
}

int agent_reserve_slots(world_t* w, int32_t extra)
{
    if (extra == 1 && w->free_head != UINT32_MAX) return 1;
    if ((int64_t)w->slot_high + extra <= w->slot_capacity) return 1;
    int64_t cap = (int64_t)w->slot_capacity * 2;
    if (cap < (int64_t)w->slot_high + extra) cap = (int64_t)w->slot_high + extra;
    if (cap < 16) cap = 16;
    if (cap > INT32_MAX / 2) return 0;
    for (int k = 0; k < w->comp_count; ++k)
        if (w->comps[k].sparse_capacity > 0 &&
            !component_reserve_slots(&w->comps[k], &w->alloc, (int32_t)cap))
            return 0;
    slot_t* fresh = (slot_t*)mem_calloc(&w->alloc, (size_t)cap * sizeof(slot_t));
    if (!fresh) return 0;
    memcpy(fresh, w->slots, (size_t)w->slot_high * sizeof(slot_t));
    mem_free(&w->alloc, w->slots, (size_t)w->slot_capacity * sizeof(slot_t));
    w->slots = fresh;
    w->slot_capacity = (int32_t)cap;
    return 1;
}

/* Room for one more slot, in the slot table and every component's sparse
 * index; all or nothing (a sparse index that grew stays valid). */
static int reserve_slot(world_t* w) { return agent_reserve_slots(w, 1); }

uint32_t agent_take_slot(world_t* w)
{
    uint32_t slot;
    if (w->free_head != UINT32_MAX) {
        slot = w->free_head;
        w->free_head = w->slots[slot].next_free;
    } else {
        slot = (uint32_t)w->slot_high++;
        w->slots[slot].generation = 1;
    }
    return slot;
}

static void release_slot(world_t* w, uint32_t slot)
{
    slot_t* s = &w->slots[slot];
    s->state = SLOT_FREE;
    s->remove_queued = 0;
    s->row = -1;
    s->generation = (uint16_t)(s->generation + 1);
    if (s->generation == 0) s->generation = 1;
    s->next_free = w->free_head;
    w->free_head = slot;
}

static shoal_agent_t make_handle(const world_t* w, uint32_t slot)
{
    shoal_agent_t id = {slot + 1, w->tag, w->slots[slot].generation};
    return id;
}

static void insert_live(world_t* w, uint32_t slot, uint64_t id, const shoal_agent_def_t* def)
{
    int32_t row = table_push(&w->agents, slot);
    user_push(w, slot);
    w->structure_version++;
    w->slots[slot].row = row;
    w->slots[slot].state = SLOT_LIVE;
    agent_set_global_id(w, row, id); /* before the components, which may key on it */
    agent_write_row(w, row, def);
}

/* Point the component rows of `slot` at its agent row again. */
static void sync_component_rows(world_t* w, uint32_t slot)
{
    for (int k = 0; k < w->comp_count; ++k) {
        int32_t r = component_row(&w->comps[k], slot);
        if (r >= 0) TABLE_COL(&w->comps[k].table, int32_t, COMP_ROW)[r] = w->slots[slot].row;
    }
}

void agent_remove_live(world_t* w, uint32_t slot)
{
    uint64_t gid = agent_global_id(w, w->slots[slot].row);
    id_map_prefetch(&w->ids, gid); /* the components' removals hide its miss */
    for (int k = 0; k < w->comp_count; ++k) agent_remove_component(w, k, slot);
    uint32_t moved = table_swap_remove(&w->agents, w->slots[slot].row);
    user_swap_remove(w, w->slots[slot].row);
    w->structure_version++;
    if (moved != UINT32_MAX) {
        for (int32_t m = 0; m < w->registry->module_count; ++m) {
            const module_t* mod = w->registry->modules[m];
            if (mod->agent_row_moved) mod->agent_row_moved(w, w->agents.count, w->slots[slot].row);
        }
        w->slots[moved].row = w->slots[slot].row;
        sync_component_rows(w, moved);
    }
    id_map_erase(&w->ids, gid);
    release_slot(w, slot);
}

/* ---- stored references to agents ---------------------------------------- */

int agent_slot_global_id(const world_t* w, uint32_t slot, uint64_t* out)
{
    const slot_t* s = &w->slots[slot];
    if (s->state == SLOT_LIVE) {
        *out = agent_global_id(w, s->row);
        return 1;
    }
    if (s->state != SLOT_PENDING) return 0;
    for (int32_t i = w->command_count - 1; i >= 0; --i) /* its queued add holds it */
        if (w->commands[i].is_add && w->commands[i].slot == slot) {
            *out = w->commands[i].id;
            return 1;
        }
    return 0;
}

uint64_t agent_stored_id(const world_t* w, shoal_agent_t id)
{
    uint32_t slot = id.index1 - 1;
    if (id.index1 == 0 || id.world0 != w->tag || slot >= (uint32_t)w->slot_high ||
        w->slots[slot].generation != id.generation)
        return 0;
    uint64_t gid;
    return agent_slot_global_id(w, slot, &gid) ? gid + 1 : 0;
}

shoal_agent_t agent_stored_handle(const world_t* w, uint64_t stored)
{
    shoal_agent_t id = {0, 0, 0};
    int64_t slot = stored ? id_map_find(&w->ids, stored - 1) : -1;
    if (slot >= 0) id = make_handle(w, (uint32_t)slot);
    return id;
}

static int reserve_command(world_t* w)
{
    if (w->command_count < w->command_capacity) return 1;
    int32_t cap = w->command_capacity ? w->command_capacity * 2 : 64;
    command_t* fresh = (command_t*)mem_alloc(&w->alloc, (size_t)cap * sizeof(command_t));
    if (!fresh) return 0;
    if (w->command_count) memcpy(fresh, w->commands, (size_t)w->command_count * sizeof(command_t));
    mem_free(&w->alloc, w->commands, (size_t)w->command_capacity * sizeof(command_t));
    w->commands = fresh;
    w->command_capacity = cap;
    return 1;
}

static command_t* pending_add(world_t* w, uint32_t slot)
{
    for (int32_t i = w->command_count - 1; i >= 0; --i)
        if (w->commands[i].is_add && w->commands[i].slot == slot) return &w->commands[i];
    return NULL;
}

shoal_status_t world_apply_commands(world_t* w)
{
    /* Capacity for every queued add was reserved when it was queued, so
     * applying cannot fail half-way. */
    for (int32_t i = 0; i < w->command_count; ++i) {
        command_t* c = &w->commands[i];
        if (c->is_add) {
            insert_live(w, c->slot, c->id, &c->def);
            w->pending_adds--;
        } else if (w->slots[c->slot].state == SLOT_LIVE) {
            agent_remove_live(w, c->slot);
        }
    }
    w->command_count = 0;
    return SHOAL_OK;
}

/* ---- public API --------------------------------------------------------- */

shoal_status_t shoal_agent_add(shoal_world_t* w, const shoal_agent_def_t* def, shoal_agent_t* out_id)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    id_map_prefetch(&w->ids, w->next_id); /* the checks below hide its miss */
    if (out_id) memset(out_id, 0, sizeof *out_id);
    shoal_status_t st = agent_validate_def(w, def, "agent_add");
    for (int32_t m = 0; st == SHOAL_OK && m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->validate_add) st = mod->validate_add(w, def, "agent_add");
    }
    if (st != SHOAL_OK) return st;
    int32_t live_after = w->agents.count + w->pending_adds + 1;
    if (live_after > INT32_MAX / 2)
        return world_fail(w, SHOAL_ERR_CAPACITY, "agent_add: at most %d agents", INT32_MAX / 2);
    /* Queued adds each reserve their component rows now, so applying the
     * queue at the stage boundary cannot run out of memory. */
    if (!reserve_slot(w) || !table_reserve(&w->agents, &w->alloc, live_after) ||
        !user_reserve(w, w->agents.capacity) || !world_reserve_row_mask(w) ||
        !id_map_reserve(&w->ids, &w->alloc, 1) || !agent_reserve_components(w, def, 1 + w->pending_adds) ||
        (w->in_step && !reserve_command(w)))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "agent_add: out of memory growing to %d agents",
                          (int)live_after);
    /* Module-wide memory the agent calls for (the first planner agent of a
     * world without a trim table builds the default one); an agent added
     * inside a step goes live at a stage boundary, after the step reserved
     * the memory of its later stages, so it reserves its share now. */
    st = agent_prepare_modules(w, def, "agent_add");
    if (st != SHOAL_OK) return st;
    uint32_t slot = agent_take_slot(w);
    uint64_t gid = w->next_id++;
    id_map_put(&w->ids, gid, slot);
    if (w->in_step) {
        command_t* c = &w->commands[w->command_count++];
        c->slot = slot;
        c->is_add = 1;
        c->id = gid;
        c->def = *def;
        w->slots[slot].state = SLOT_PENDING;
        w->pending_adds++;
    } else {
        insert_live(w, slot, gid, def);
    }
    if (out_id) *out_id = make_handle(w, slot);
    return SHOAL_OK;
}

static void undo_add(world_t* w, shoal_agent_t id, int32_t slot_high_before)
{
    int32_t slot = world_resolve(w, id, 0, "undo_add");
    if (slot < 0 || w->in_step) return;
    agent_remove_live(w, (uint32_t)slot);
    /* remove_live pushed the slot on the free list with the next
     * generation; its next_free is the slot the add took it before. */
    slot_t* s = &w->slots[slot];
    if (slot >= slot_high_before) {
        /* a fresh slot: the newest one, and the add took it from slot_high */
        w->free_head = s->next_free;
        memset(s, 0, sizeof *s);
        w->slot_high = slot;
    } else {
        /* taken from the free list's head, where it is again */
        s->generation = s->generation == 1 ? UINT16_MAX : (uint16_t)(s->generation - 1);
    }
}

void world_mark(const world_t* w, world_mark_t* mark)
{
    memset(mark, 0, sizeof *mark);
    mark->slot_high = w->slot_high;
    mark->next_id = w->next_id;
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->mark) mod->mark(w, mark->module_note[m]);
    }
}

void world_rollback(world_t* w, const world_mark_t* mark, const shoal_agent_t* added, int32_t added_count)
{
    if (w->in_step) return;
    while (added_count > 0) undo_add(w, added[--added_count], mark->slot_high);
    w->next_id = mark->next_id;
    for (int32_t m = w->registry->module_count - 1; m >= 0; --m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->rollback) mod->rollback(w, mark->module_note[m]);
    }
}

shoal_status_t shoal_agent_remove(shoal_world_t* w, shoal_agent_t id)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    int32_t slot = world_resolve(w, id, 1, "agent_remove");
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    if (!w->in_step) {
        agent_remove_live(w, (uint32_t)slot);
        return SHOAL_OK;
    }
    if (w->slots[slot].remove_queued) return SHOAL_OK;
    if (!reserve_command(w))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "agent_remove: out of memory queueing removal");
    command_t* c = &w->commands[w->command_count++];
    c->slot = (uint32_t)slot;
    c->is_add = 0;
    w->slots[slot].remove_queued = 1;
    return SHOAL_OK;
}

int shoal_agent_is_valid(const shoal_world_t* w, shoal_agent_t id)
{
    if (!w || id.index1 == 0 || id.world0 != w->tag) return 0;
    uint32_t slot = id.index1 - 1;
    if (slot >= (uint32_t)w->slot_high) return 0;
    const slot_t* s = &w->slots[slot];
    return s->generation == id.generation && (s->state == SLOT_LIVE || s->state == SLOT_PENDING);
}

/* An agent added during this step has no state until the stage boundary. */
static shoal_status_t pending_busy(const world_t* w, const char* where)
{
    return world_failc(w, SHOAL_ERR_BUSY,
                       "%s: the agent was added during this step; it is live once the step ends", where);
}

shoal_status_t agent_read_def(const world_t* w, shoal_agent_t id, shoal_agent_def_t* out, const char* where)
{
    int32_t slot = world_resolve(w, id, 1, where);
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    if (w->slots[slot].state == SLOT_PENDING)
        *out = pending_add((world_t*)(uintptr_t)w, (uint32_t)slot)->def;
    else
        agent_read_row(w, w->slots[slot].row, out);
    return SHOAL_OK;
}

shoal_status_t shoal_agent_get_def(const shoal_world_t* w, shoal_agent_t id, shoal_agent_def_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_get_def: out_def is NULL");
    return agent_read_def(w, id, out, "agent_get_def");
}

shoal_status_t shoal_agent_global_id(const shoal_world_t* w, shoal_agent_t id, uint64_t* out_id)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out_id) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_global_id: out_id is NULL");
    int32_t slot = world_resolve(w, id, 1, "agent_global_id");
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    agent_slot_global_id(w, (uint32_t)slot, out_id);
    return SHOAL_OK;
}

shoal_status_t shoal_agent_get_state(const shoal_world_t* w, shoal_agent_t id, shoal_agent_state_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_get_state: out_state is NULL");
    int32_t slot = world_resolve(w, id, 1, "agent_get_state");
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    if (w->slots[slot].state == SLOT_PENDING) return pending_busy(w, "agent_get_state");
    int32_t row = w->slots[slot].row;
    int three = w->dims == 3;
    out->position[0] = AGENT_F(w, AC_POS_X)[row];
    out->position[1] = AGENT_F(w, AC_POS_Y)[row];
    out->position[2] = three ? AGENT_F(w, AC_POS_Z)[row] : 0.0f;
    out->velocity[0] = AGENT_F(w, AC_VEL_X)[row];
    out->velocity[1] = AGENT_F(w, AC_VEL_Y)[row];
    out->velocity[2] = three ? AGENT_F(w, AC_VEL_Z)[row] : 0.0f;
    out->heading = AGENT_F(w, AC_HEADING)[row];
    quat q = agent_row_quat(w, row);
    out->orientation[0] = q.w;
    out->orientation[1] = q.x;
    out->orientation[2] = q.y;
    out->orientation[3] = q.z;
    out->angular_velocity[0] = three ? AGENT_F(w, AC_OMEGA_X)[row] : 0.0f;
    out->angular_velocity[1] = three ? AGENT_F(w, AC_OMEGA_Y)[row] : 0.0f;
    out->angular_velocity[2] = AGENT_F(w, AC_OMEGA_Z)[row];
    return SHOAL_OK;
}

shoal_status_t agent_edit(world_t* w, shoal_agent_t id, const char* where, def_edit_fn* edit, const void* arg,
                          uint64_t writes)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    int32_t slot = world_resolve(w, id, 1, where);
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    command_t* pending = w->slots[slot].state == SLOT_PENDING ? pending_add(w, (uint32_t)slot) : NULL;
    shoal_agent_def_t def, before;
    if (pending)
        def = pending->def;
    else
        agent_read_row(w, w->slots[slot].row, &def);
    memcpy(&before, &def, sizeof def);
    edit(&def, arg);
    shoal_status_t st = agent_validate_def(w, &def, where);
    if (st != SHOAL_OK) return st;
    if (!agent_reserve_components(w, &def, 1 + w->pending_adds))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    st = agent_prepare_modules(w, &def, where);
    if (st != SHOAL_OK) return st;
    if (pending) {
        pending->def = def;
    } else {
        /* Only what the edit may change: a module's setter leaves the agent
         * table and the other modules' rows alone. */
        int32_t row = w->slots[slot].row;
        if (writes & AGENT_EDIT_PARAMS) agent_write_params(w, row, &def);
        agent_write_components(w, (uint32_t)slot, &def, agent_row_forward(w, row), writes,
                               memcmp(&before, &def, sizeof def) != 0);
    }
    return SHOAL_OK;
}

shoal_status_t shoal_agent_teleport(shoal_world_t* w, shoal_agent_t id, const float position[3],
                                    const float velocity[3], float heading, const float orientation[4])
{
    static const char* where = "agent_teleport";
    REQUIRE_PTR(w, position, where, "position");
    REQUIRE_PTR(w, velocity, where, "velocity");
    if (w->dims == 3 && !orientation)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: orientation is NULL in a 3D world", where);
    int32_t slot = world_resolve(w, id, 1, where);
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    int ok = def_check_coordinates(w, where, "position", position, 3) &&
             def_check_finite(w, where, "velocity", velocity, 3) &&
             def_check_finite(w, where, "heading", &heading, 1) &&
             (w->dims == 2 || def_check_finite(w, where, "orientation", orientation, 4));
    if (!ok) return SHOAL_ERR_INVALID_ARGUMENT;
    quat q = {1.0f, 0.0f, 0.0f, 0.0f};
    if (w->dims == 3) {
        q.w = orientation[0];
        q.x = orientation[1];
        q.y = orientation[2];
        q.z = orientation[3];
        float n = sqrtf(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
        if (!(n > 1e-6f) || !isfinite(n))
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: orientation must be a nonzero quaternion (w, x, y, z)", where);
        q = quat_normalize(q);
    }
    if (w->slots[slot].state == SLOT_PENDING) {
        shoal_agent_def_t* d = &pending_add(w, (uint32_t)slot)->def;
        memcpy(d->position, position, sizeof d->position);
        memcpy(d->velocity, velocity, sizeof d->velocity);
        d->heading = w->dims == 3 ? quat_yaw(q) : heading;
        d->pitch = w->dims == 3 ? quat_pitch(q) : 0.0f;
        return SHOAL_OK;
    }
    agent_write_pose(w, w->slots[slot].row, position, velocity, heading, q);
    /* Modules that move their agents themselves take the new pose (a
     * ground vehicle its yaw and speeds, a planner agent a new interval). */
    for (int k = 0; k < w->comp_count; ++k) {
        int32_t r = component_row(&w->comps[k], (uint32_t)slot);
        const module_t* m = w->comp_module[k];
        if (r >= 0 && m->teleported) m->teleported(w, r, velocity);
    }
    return SHOAL_OK;
}

shoal_status_t shoal_world_read_agents(const shoal_world_t* w, const shoal_agent_batch_t* b, int32_t capacity,
                                       int32_t* out_count)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!b) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "read_agents: batch is NULL");
    if (capacity < 0)
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "read_agents: capacity must be >= 0, got %d",
                           (int)capacity);
    int32_t n = w->agents.count < capacity ? w->agents.count : capacity;
    const uint32_t* slots = table_slots(&w->agents);
    const float* px = AGENT_F(w, AC_POS_X);
    const float* py = AGENT_F(w, AC_POS_Y);
    const float* pz = AGENT_F(w, AC_POS_Z);
    const float* vx = AGENT_F(w, AC_VEL_X);
    const float* vy = AGENT_F(w, AC_VEL_Y);
    const float* vz = AGENT_F(w, AC_VEL_Z);
    const float* hd = AGENT_F(w, AC_HEADING);
    for (int32_t i = 0; i < n; ++i) {
        if (b->ids) b->ids[i] = make_handle(w, slots[i]);
        if (b->positions) {
            b->positions[3 * i] = px[i];
            b->positions[3 * i + 1] = py[i];
            b->positions[3 * i + 2] = pz ? pz[i] : 0.0f;
        }
        if (b->velocities) {
            b->velocities[3 * i] = vx[i];
            b->velocities[3 * i + 1] = vy[i];
            b->velocities[3 * i + 2] = vz ? vz[i] : 0.0f;
        }
        if (b->headings) b->headings[i] = hd[i];
        if (b->orientations) {
            quat q = agent_row_quat(w, i);
            b->orientations[4 * i] = q.w;
            b->orientations[4 * i + 1] = q.x;
            b->orientations[4 * i + 2] = q.y;
            b->orientations[4 * i + 3] = q.z;
        }
        if (b->user_values) b->user_values[i] = agent_row_user_value(w, i);
        if (b->groups) b->groups[i] = TABLE_COL(&w->agents, uint32_t, AC_GROUP)[i];
        if (b->global_ids) b->global_ids[i] = agent_global_id(w, i);
    }
    if (out_count) *out_count = n;
    return SHOAL_OK;
}
