/* An agent's rows: writing a definition into the agent table and the
 * components its modules give it, and reading it back. Each module writes
 * and reads its own component row (module_t.write_row, read_row); the
 * agent table's columns are written here. */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/world.h"
#include "simd/vec.h"

/* ---- rows --------------------------------------------------------------- */

void agent_write_params(world_t* w, int32_t row, const shoal_agent_def_t* d)
{
    int z = w->dims == 3;
    AGENT_F(w, AC_MASS)[row] = d->vehicle.mass;
    AGENT_F(w, AC_INERTIA)[row] = d->vehicle.inertia;
    AGENT_F(w, AC_MAX_FORCE)[row] = d->vehicle.max_force;
    AGENT_F(w, AC_MAX_TORQUE)[row] = d->vehicle.max_torque;
    AGENT_F(w, AC_MAX_SPEED)[row] = d->vehicle.max_speed;
    AGENT_F(w, AC_MAX_TURN_RATE)[row] = d->vehicle.max_turn_rate;
    AGENT_F(w, AC_RADIUS)[row] = d->vehicle.radius;
    AGENT_F(w, AC_SPEED_GAIN)[row] = d->control.speed_gain;
    AGENT_F(w, AC_HEADING_GAIN)[row] = d->control.heading_gain;
    AGENT_F(w, AC_TURN_DAMPING)[row] = d->control.turn_damping;
    AGENT_F(w, AC_W_SEEK)[row] = d->weights[SHOAL_BEHAVIOR_SEEK];
    AGENT_F(w, AC_W_FLEE)[row] = d->weights[SHOAL_BEHAVIOR_FLEE];
    AGENT_F(w, AC_W_ARRIVE)[row] = d->weights[SHOAL_BEHAVIOR_ARRIVE];
    AGENT_F(w, AC_W_DEPART)[row] = d->weights[SHOAL_BEHAVIOR_DEPART];
    AGENT_F(w, AC_ARRIVE_GAIN)[row] = d->arrive_gain;
    AGENT_F(w, AC_DEPART_GAIN)[row] = d->depart_gain;
    AGENT_F(w, AC_TARGET_X)[row] = d->target[0];
    AGENT_F(w, AC_TARGET_Y)[row] = d->target[1];
    AGENT_F(w, AC_THREAT_X)[row] = d->threat[0];
    AGENT_F(w, AC_THREAT_Y)[row] = d->threat[1];
    if (z) {
        AGENT_F(w, AC_TARGET_Z)[row] = d->target[2];
        AGENT_F(w, AC_THREAT_Z)[row] = d->threat[2];
    }
    TABLE_COL(&w->agents, uint32_t, AC_GROUP)[row] = d->group;
    TABLE_COL(&w->agents, uint32_t, AC_USER_LO)[row] = (uint32_t)d->user_value;
    TABLE_COL(&w->agents, uint32_t, AC_USER_HI)[row] = (uint32_t)(d->user_value >> 32);
    /* Every caller writes a live row: the others are the rest. */
    float vals[AP_COUNT];
    for (int k = 0; k < AP_COUNT; ++k) vals[k] = AGENT_F(w, AP_FIRST + k)[row];
    agent_params_note(w, vals, w->agents.count - 1);
}

static uint32_t float_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

void agent_params_note(world_t* w, const float* vals, int32_t others)
{
    for (int k = 0; k < AP_COUNT; ++k) {
        uint32_t b = float_bits(vals[k]);
        if (others <= 0) {
            w->params_one |= 1u << k;
            w->params_bits[k] = b;
        } else if (w->params_bits[k] != b) {
            w->params_one &= ~(1u << k);
        }
    }
}

void agent_params_rescan(world_t* w)
{
    int32_t n = w->agents.count;
    w->params_one = 0;
    for (int k = 0; k < AP_COUNT; ++k) {
        const uint32_t* col = TABLE_COL(&w->agents, const uint32_t, AP_FIRST + k);
        uint32_t first = n > 0 ? col[0] : 0;
        int32_t r = 1;
        while (r < n && col[r] == first) ++r;
        if (r >= n) w->params_one |= 1u << k;
        w->params_bits[k] = first;
    }
}

int agent_params_one(const world_t* w, const int* cols, int n, float* out)
{
    for (int i = 0; i < n; ++i) {
        int k = cols[i] - AP_FIRST;
        if (!(w->params_one >> k & 1u)) return 0;
        memcpy(&out[i], &w->params_bits[k], sizeof out[i]);
    }
    return 1;
}

int agent_params_check(const world_t* w)
{
    for (int k = 0; k < AP_COUNT; ++k) {
        if (!(w->params_one >> k & 1u)) continue;
        const uint32_t* col = TABLE_COL(&w->agents, const uint32_t, AP_FIRST + k);
        for (int32_t r = 0; r < w->agents.count; ++r)
            if (col[r] != w->params_bits[k]) return 0;
    }
    return 1;
}

uint64_t agent_row_user_value(const world_t* w, int32_t row)
{
    return (uint64_t)TABLE_COL(&w->agents, uint32_t, AC_USER_LO)[row] |
           (uint64_t)TABLE_COL(&w->agents, uint32_t, AC_USER_HI)[row] << 32;
}

static void read_params(const world_t* w, int32_t row, shoal_agent_def_t* d)
{
    d->vehicle.mass = AGENT_F(w, AC_MASS)[row];
    d->vehicle.inertia = AGENT_F(w, AC_INERTIA)[row];
    d->vehicle.max_force = AGENT_F(w, AC_MAX_FORCE)[row];
    d->vehicle.max_torque = AGENT_F(w, AC_MAX_TORQUE)[row];
    d->vehicle.max_speed = AGENT_F(w, AC_MAX_SPEED)[row];
    d->vehicle.max_turn_rate = AGENT_F(w, AC_MAX_TURN_RATE)[row];
    d->vehicle.radius = AGENT_F(w, AC_RADIUS)[row];
    d->control.speed_gain = AGENT_F(w, AC_SPEED_GAIN)[row];
    d->control.heading_gain = AGENT_F(w, AC_HEADING_GAIN)[row];
    d->control.turn_damping = AGENT_F(w, AC_TURN_DAMPING)[row];
    memset(d->weights, 0, sizeof d->weights);
    d->weights[SHOAL_BEHAVIOR_SEEK] = AGENT_F(w, AC_W_SEEK)[row];
    d->weights[SHOAL_BEHAVIOR_FLEE] = AGENT_F(w, AC_W_FLEE)[row];
    d->weights[SHOAL_BEHAVIOR_ARRIVE] = AGENT_F(w, AC_W_ARRIVE)[row];
    d->weights[SHOAL_BEHAVIOR_DEPART] = AGENT_F(w, AC_W_DEPART)[row];
    d->arrive_gain = AGENT_F(w, AC_ARRIVE_GAIN)[row];
    d->depart_gain = AGENT_F(w, AC_DEPART_GAIN)[row];
    d->target[0] = AGENT_F(w, AC_TARGET_X)[row];
    d->target[1] = AGENT_F(w, AC_TARGET_Y)[row];
    d->target[2] = w->dims == 3 ? AGENT_F(w, AC_TARGET_Z)[row] : 0.0f;
    d->threat[0] = AGENT_F(w, AC_THREAT_X)[row];
    d->threat[1] = AGENT_F(w, AC_THREAT_Y)[row];
    d->threat[2] = w->dims == 3 ? AGENT_F(w, AC_THREAT_Z)[row] : 0.0f;
    d->group = TABLE_COL(&w->agents, uint32_t, AC_GROUP)[row];
    d->user_value = agent_row_user_value(w, row);
}

/* ---- optional components ------------------------------------------------ */

int agent_needs_component(const world_t* w, const shoal_agent_def_t* d, int comp)
{
    return w->comp_module[comp]->needs(d);
}

/* Room for a row in every component the definition needs; all or nothing
 * in effect (growing a table that ends up unused is harmless). */
int agent_reserve_components(world_t* w, const shoal_agent_def_t* d, int32_t extra)
{
    for (int k = 0; k < w->comp_count; ++k) {
        if (!agent_needs_component(w, d, k)) continue;
        /* A component's sparse index exists once some agent needs it. */
        if (!component_reserve_slots(&w->comps[k], &w->alloc, w->slot_capacity)) return 0;
        table_t* t = &w->comps[k].table;
        if (!table_reserve_within(t, &w->alloc, t->count + extra, w->agents.capacity)) return 0;
    }
    return 1;
}

int world_reserve_def_rows(world_t* w, const shoal_agent_def_t* d, int32_t rows)
{
    return agent_reserve_components(w, d, rows + w->pending_adds);
}

/* Module-wide memory, then step memory when inside a step, for an agent of
 * definition d: the modules' prepare and reserve_add_in_step hooks. */
shoal_status_t agent_prepare_modules(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    for (int k = 0; k < w->comp_count; ++k) {
        const module_t* m = w->comp_module[k];
        if (!m->needs(d)) continue;
        if (m->prepare && !m->prepare(w, d, where)) return SHOAL_ERR_OUT_OF_MEMORY;
    }
    if (!w->in_step) return SHOAL_OK;
    for (int32_t i = 0; i < w->registry->module_count; ++i) {
        const module_t* m = w->registry->modules[i];
        if (m->reserve_add_in_step && !m->reserve_add_in_step(w, d))
            return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for the agent's step memory",
                              where);
    }
    return SHOAL_OK;
}

/* Drop the agent's row of component k; its module hears of it first (the
 * grid of this step follows the neighbors rows that move). */
void agent_remove_component(world_t* w, int k, uint32_t slot)
{
    component_t* c = &w->comps[k];
    int32_t r = component_row(c, slot);
    if (r < 0) return;
    const module_t* m = w->comp_module[k];
    if (m->row_removed) {
        int32_t last = c->table.count - 1;
        uint32_t moved = r < last ? table_slots(&c->table)[last] : UINT32_MAX;
        m->row_removed(w, w->slots[slot].row, r, moved != UINT32_MAX ? w->slots[moved].row : -1);
    }
    component_remove(c, slot);
}

/* Add, update or drop the agent's component rows to match the definition.
 * Capacity was reserved beforehand, so this cannot fail. A component the
 * definition calls for and the agent lacks is added, and one the agent has
 * and the definition no longer calls for is dropped; a row the agent keeps
 * is written again only when its component is in `rewrite` (bit k: an edit
 * writes the component it changes, not every one). `changed`: the
 * definition differs from the one the rows were written from, so a row
 * written again holds new parameters. A component's version moves when a
 * row is added or written with a changed definition, not when one is
 * written again as it was (component_t.version); what a module writes
 * beside its parameters (a plan to make anew) is state, which no cache
 * keyed on the version looks at. `forward` seeds what a fresh row starts
 * from (the wander walk). */
void agent_write_components(world_t* w, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                            uint64_t rewrite, int changed)
{
    for (int k = 0; k < w->comp_count; ++k) {
        component_t* c = &w->comps[k];
        const module_t* m = w->comp_module[k];
        if (!m->needs(d)) {
            agent_remove_component(w, k, slot);
            continue;
        }
        int fresh = component_row(c, slot) < 0;
        if (!fresh && !(rewrite >> k & 1u)) continue;
        int32_t r = component_add(c, &w->alloc, slot);
        TABLE_COL(&c->table, int32_t, COMP_ROW)[r] = w->slots[slot].row;
        if (m->write_row) m->write_row(w, r, slot, d, forward, fresh);
        if (fresh || changed) c->version++;
    }
}

static void read_components(const world_t* w, uint32_t slot, shoal_agent_def_t* d)
{
    for (int k = 0; k < w->comp_count; ++k) {
        int32_t r = component_row(&w->comps[k], slot);
        const module_t* m = w->comp_module[k];
        if (r >= 0 && m->read_row) m->read_row(w, r, d);
    }
}

/* Position, velocity (clamped to max speed) and orientation; spin zeroed. */
void agent_write_pose(world_t* w, int32_t row, const float p[3], const float v[3], float heading, quat q)
{
    int three = w->dims == 3;
    float vmax = AGENT_F(w, AC_MAX_SPEED)[row];
    float vx = v[0], vy = v[1], vz = three ? v[2] : 0.0f;
    float speed = sqrtf(vx * vx + vy * vy + vz * vz);
    if (speed > vmax) {
        float k = speed > 0.0f ? vmax / speed : 0.0f;
        vx *= k;
        vy *= k;
        vz *= k;
    }
    AGENT_F(w, AC_POS_X)[row] = p[0];
    AGENT_F(w, AC_POS_Y)[row] = p[1];
    AGENT_F(w, AC_VEL_X)[row] = vx;
    AGENT_F(w, AC_VEL_Y)[row] = vy;
    AGENT_F(w, AC_OMEGA_Z)[row] = 0.0f;
    if (!three) {
        AGENT_F(w, AC_HEADING)[row] = angle_wrap(heading);
        return;
    }
    AGENT_F(w, AC_POS_Z)[row] = p[2];
    AGENT_F(w, AC_VEL_Z)[row] = vz;
    AGENT_F(w, AC_HEADING)[row] = quat_yaw(q);
    AGENT_F(w, AC_QW)[row] = q.w;
    AGENT_F(w, AC_QX)[row] = q.x;
    AGENT_F(w, AC_QY)[row] = q.y;
    AGENT_F(w, AC_QZ)[row] = q.z;
    AGENT_F(w, AC_OMEGA_X)[row] = 0.0f;
    AGENT_F(w, AC_OMEGA_Y)[row] = 0.0f;
}

quat agent_row_quat(const world_t* w, int32_t row)
{
    if (w->dims == 2) return quat_from_yaw(AGENT_F(w, AC_HEADING)[row]);
    quat q = {AGENT_F(w, AC_QW)[row], AGENT_F(w, AC_QX)[row], AGENT_F(w, AC_QY)[row], AGENT_F(w, AC_QZ)[row]};
    return q;
}

vec3 agent_row_forward(const world_t* w, int32_t row) { return quat_forward(agent_row_quat(w, row)); }

vec3 agent_write_state(world_t* w, int32_t row, const shoal_agent_def_t* d)
{
    quat q = quat_from_yaw_pitch_roll(d->heading, w->dims == 3 ? d->pitch : 0.0f, 0.0f);
    agent_write_params(w, row, d);
    agent_write_pose(w, row, d->position, d->velocity, d->heading, q);
    return quat_forward(q);
}

void agent_write_row(world_t* w, int32_t row, const shoal_agent_def_t* d)
{
    vec3 forward = agent_write_state(w, row, d);
    agent_write_components(w, table_slots(&w->agents)[row], d, forward, AGENT_EDIT_ALL, 1);
}

void agent_read_row(const world_t* w, int32_t row, shoal_agent_def_t* d)
{
    int three = w->dims == 3;
    *d = shoal_agent_default_def();
    read_params(w, row, d);
    read_components(w, table_slots(&w->agents)[row], d);
    d->position[0] = AGENT_F(w, AC_POS_X)[row];
    d->position[1] = AGENT_F(w, AC_POS_Y)[row];
    d->position[2] = three ? AGENT_F(w, AC_POS_Z)[row] : 0.0f;
    d->velocity[0] = AGENT_F(w, AC_VEL_X)[row];
    d->velocity[1] = AGENT_F(w, AC_VEL_Y)[row];
    d->velocity[2] = three ? AGENT_F(w, AC_VEL_Z)[row] : 0.0f;
    d->heading = AGENT_F(w, AC_HEADING)[row];
    d->pitch = three ? quat_pitch(agent_row_quat(w, row)) : 0.0f;
}
