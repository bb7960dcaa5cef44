/* Agents: definitions, validation, the slot table and the public agent API.
 *
 * Every setter works the same way: read the agent's current definition (from
 * its row, or from the queued add if it is still pending), change it, validate
 * the result, and only then write it back. A failed call changes nothing. */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/world.h"
#include "simd/vec.h"

#define AGENT_DEF_COOKIE 0x5348414e /* "SHAN" */

static const char* const behavior_names[SHOAL_BEHAVIOR_COUNT_] = {
    "seek", "flee", "arrive", "depart", "separate", "align", "cohere", "wander", "pursue", "evade",
    "follow", "avoid", "dseek"};

const char* shoal_behavior_name(shoal_behavior_t b)
{
    return (unsigned)b < SHOAL_BEHAVIOR_COUNT_ ? behavior_names[b] : NULL;
}

shoal_vehicle_t shoal_vehicle_default(void)
{
    shoal_vehicle_t v = {1.0f, 1.0f, 20.0f, 20.0f, 5.0f, 3.0f, 0.5f};
    return v;
}

shoal_control_t shoal_control_default(void)
{
    /* Heading loop critically damped at 3 rad/s: Kp = 9, Kd = 6. */
    shoal_control_t c = {4.0f, 9.0f, 6.0f};
    return c;
}

shoal_neighbors_t shoal_neighbors_default(void)
{
    shoal_neighbors_t n = {2.0f, VEC_TWO_PI, 0, 1.0f, 1.0f, 1.0f};
    return n;
}

shoal_wander_t shoal_wander_default(void)
{
    shoal_wander_t v = {2.0f, 1.0f, 0.5f};
    return v;
}

shoal_pursuit_t shoal_pursuit_default(void)
{
    shoal_pursuit_t p;
    memset(&p, 0, sizeof p);
    p.max_prediction = 2.0f;
    return p;
}

shoal_follow_t shoal_follow_default(void)
{
    shoal_follow_t f;
    memset(&f, 0, sizeof f);
    f.behind = 2.0f;
    f.behind_per_speed = 0.5f;
    f.arrive_gain = 1.0f;
    return f;
}

shoal_avoid_t shoal_avoid_default(void)
{
    shoal_avoid_t a = {2.0f, 1.0f, 0};
    return a;
}

shoal_dseek_t shoal_dseek_default(void)
{
    shoal_dseek_t d;
    memset(&d, 0, sizeof d);
    d.waypoint.direction[0] = 1.0f;
    d.route = -1;
    return d;
}

shoal_agent_def_t shoal_agent_default_def(void)
{
    shoal_agent_def_t d;
    memset(&d, 0, sizeof d);
    d.vehicle = shoal_vehicle_default();
    d.control = shoal_control_default();
    d.neighbors = shoal_neighbors_default();
    d.wander = shoal_wander_default();
    d.pursuit = shoal_pursuit_default();
    d.follow = shoal_follow_default();
    d.avoid = shoal_avoid_default();
    d.dseek = shoal_dseek_default();
    d.ground.enabled = 0;
    shoal_ground_vehicle_preset("car", &d.ground.vehicle, NULL);
    d.ground.follow = shoal_path_follow_default();
    d.planner = shoal_planner_default();
    d.arrive_gain = 1.0f;
    d.depart_gain = 10.0f;
    d.internal_value = AGENT_DEF_COOKIE;
    return d;
}

/* ---- validation --------------------------------------------------------- */

/* State (positions, velocities, targets) is only required finite: it moves,
 * and a snapshot of any state a step reached must load again. */
int def_check_finite(world_t* w, const char* where, const char* field, const float* v, int n)
{
    for (int i = 0; i < n; ++i) {
        if (!isfinite(v[i])) {
            world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s[%d] must be finite, got %g", where,
                       field, i, (double)v[i]);
            return 0;
        }
    }
    return 1;
}

/* Parameters (limits, gains, radii, times), which no step changes, are at
 * most DEF_MAX_MAGNITUDE: finite alone let max_speed = max_force = 3.4e38
 * through, whose products in the step (speed * dt, a gain times a speed,
 * their squares in a norm) overflowed to inf and NaN, and the world then
 * failed its own snapshot's check. 1e9 (m/s, N, 1/s, s ...) is past any
 * crowd, fleet or orbit the library is for, and leaves room for the
 * product of two such values and its square within a float. */
int def_check_min(world_t* w, const char* where, const char* field, float v, float lo,
                  int strict)
{
    int ok = isfinite(v) && (strict ? v > lo : v >= lo) && v <= DEF_MAX_MAGNITUDE;
    if (!ok)
        world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be finite, %s %g and <= %g, got %g",
                   where, field, strict ? ">" : ">=", (double)lo, (double)DEF_MAX_MAGNITUDE,
                   (double)v);
    return ok;
}

shoal_status_t agent_validate_def(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    if (!d) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: def is NULL", where);
    if (d->internal_value != AGENT_DEF_COOKIE)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: def was not initialized with shoal_agent_default_def()", where);
    const shoal_vehicle_t* v = &d->vehicle;
    const shoal_control_t* c = &d->control;
    int ok = def_check_finite(w, where, "position", d->position, 3) &&
             def_check_finite(w, where, "velocity", d->velocity, 3) &&
             def_check_finite(w, where, "heading", &d->heading, 1) &&
             def_check_finite(w, where, "pitch", &d->pitch, 1) &&
             def_check_finite(w, where, "target", d->target, 3) &&
             def_check_finite(w, where, "threat", d->threat, 3) &&
             /* force / mass is an acceleration: a floor keeps it finite */
             def_check_min(w, where, "vehicle.mass", v->mass, DEF_MIN_MASS, 0) &&
             def_check_min(w, where, "vehicle.inertia", v->inertia, DEF_MIN_MASS, 0) &&
             def_check_min(w, where, "vehicle.max_force", v->max_force, 0.0f, 0) &&
             def_check_min(w, where, "vehicle.max_torque", v->max_torque, 0.0f, 0) &&
             def_check_min(w, where, "vehicle.max_speed", v->max_speed, 0.0f, 0) &&
             def_check_min(w, where, "vehicle.max_turn_rate", v->max_turn_rate, 0.0f, 0) &&
             def_check_min(w, where, "vehicle.radius", v->radius, 0.0f, 0) &&
             def_check_min(w, where, "control.speed_gain", c->speed_gain, 0.0f, 0) &&
             def_check_min(w, where, "control.heading_gain", c->heading_gain, 0.0f, 0) &&
             def_check_min(w, where, "control.turn_damping", c->turn_damping, 0.0f, 0) &&
             def_check_min(w, where, "arrive_gain", d->arrive_gain, 0.0f, 1) &&
             def_check_min(w, where, "depart_gain", d->depart_gain, 0.0f, 1);
    if (!ok) return SHOAL_ERR_INVALID_ARGUMENT;
    /* Each module checks its part, whether or not the agent uses it. */
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (!mod->validate) continue;
        shoal_status_t st = mod->validate(w, d, where);
        if (st != SHOAL_OK) return st;
    }
    for (int b = 0; b < SHOAL_BEHAVIOR_SLOTS; ++b) {
        float wt = d->weights[b];
        if (b >= SHOAL_BEHAVIOR_COUNT_) {
            if (wt != 0.0f)
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "%s: weights[%d] is not a behavior of this version (0..%d)",
                                  where, b, SHOAL_BEHAVIOR_COUNT_ - 1);
            continue;
        }
        if (!isfinite(wt) || wt < 0.0f)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: weights[%s] must be finite and >= 0, got %g", where,
                              behavior_names[b], (double)wt);
    }
    return SHOAL_OK;
}

/* ---- rows --------------------------------------------------------------- */

static void write_params(world_t* w, int32_t row, const shoal_agent_def_t* d)
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
}

static uint64_t row_user_value(const world_t* w, int32_t row)
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
    d->user_value = row_user_value(w, row);
}

/* ---- optional components ------------------------------------------------ */

int agent_needs_component(const world_t* w, const shoal_agent_def_t* d, int comp)
{
    return w->comp_module[comp]->needs(d);
}

/* Room for a row in every component the definition needs; all or nothing
 * in effect (growing a table that ends up unused is harmless). */
static int reserve_components(world_t* w, const shoal_agent_def_t* d, int32_t extra)
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
    return reserve_components(w, d, rows + w->pending_adds);
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

uint32_t agent_stored_tag(shoal_agent_t id) { return ((uint32_t)id.world0 << 16) | id.generation; }

shoal_agent_t agent_stored_handle(uint32_t index1, uint32_t tag)
{
    shoal_agent_t id = {index1, (uint16_t)(tag >> 16), (uint16_t)(tag & 0xffffu)};
    return id;
}

/* Drop the agent's row of component k; its module hears of it first (the
 * grid of this step follows the neighbors rows that move). */
static void remove_component(world_t* w, int k, uint32_t slot)
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

/* Row r of a component, every column's element one after another, into buf
 * (ROW_BYTES_MAX bytes); returns how many bytes, or 0 when the row is wider. */
#define ROW_BYTES_MAX 1024
static size_t row_bytes(const table_t* t, int32_t r, unsigned char* buf)
{
    size_t n = 0;
    for (int32_t c = 0; c < t->column_count; ++c) {
        size_t sz = t->elem_size[c];
        if (n + sz > ROW_BYTES_MAX) return 0;
        memcpy(buf + n, (const char*)t->columns[c] + (size_t)r * sz, sz);
        n += sz;
    }
    return n;
}

/* Add, update or drop the agent's component rows to match the definition.
 * Capacity was reserved beforehand, so this cannot fail. `forward` seeds
 * what a fresh row starts from (the wander walk). A component's version
 * moves when a row is added or a row's bytes change, not when a definition
 * is written again as it was (an edit of one part of an agent rewrites all
 * its components). */
static void write_components(world_t* w, uint32_t slot, const shoal_agent_def_t* d, vec3 forward)
{
    for (int k = 0; k < w->comp_count; ++k) {
        component_t* c = &w->comps[k];
        const module_t* m = w->comp_module[k];
        if (!m->needs(d)) {
            remove_component(w, k, slot);
            continue;
        }
        int fresh = component_row(c, slot) < 0;
        int32_t r = component_add(c, &w->alloc, slot);
        unsigned char before[ROW_BYTES_MAX], after[ROW_BYTES_MAX];
        size_t size = fresh ? 0 : row_bytes(&c->table, r, before);
        TABLE_COL(&c->table, int32_t, COMP_ROW)[r] = w->slots[slot].row;
        if (m->write_row) m->write_row(w, r, slot, d, forward, fresh);
        if (size == 0 || row_bytes(&c->table, r, after) != size || memcmp(before, after, size) != 0)
            c->version++;
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
static void write_pose(world_t* w, int32_t row, const float p[3], const float v[3], float heading,
                       quat q)
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

static quat row_quat(const world_t* w, int32_t row)
{
    if (w->dims == 2) return quat_from_yaw(AGENT_F(w, AC_HEADING)[row]);
    quat q = {AGENT_F(w, AC_QW)[row], AGENT_F(w, AC_QX)[row], AGENT_F(w, AC_QY)[row],
              AGENT_F(w, AC_QZ)[row]};
    return q;
}

static vec3 row_forward(const world_t* w, int32_t row) { return quat_forward(row_quat(w, row)); }

vec3 agent_write_state(world_t* w, int32_t row, const shoal_agent_def_t* d)
{
    quat q = quat_from_yaw_pitch_roll(d->heading, w->dims == 3 ? d->pitch : 0.0f, 0.0f);
    write_params(w, row, d);
    write_pose(w, row, d->position, d->velocity, d->heading, q);
    return quat_forward(q);
}

void agent_write_row(world_t* w, int32_t row, const shoal_agent_def_t* d)
{
    vec3 forward = agent_write_state(w, row, d);
    write_components(w, table_slots(&w->agents)[row], d, forward);
}

static void read_def(const world_t* w, int32_t row, shoal_agent_def_t* d)
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
    d->pitch = three ? quat_pitch(row_quat(w, row)) : 0.0f;
}

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
                    "%s: handle {index %u, generation %u} is stale: that agent was removed",
                    where, (unsigned)slot, (unsigned)id.generation);
        return -1;
    }
    return (int32_t)slot;
}

int32_t world_component_row(const world_t* w, shoal_agent_t id, int comp, const char* kind,
                            const char* field, const char* where, shoal_status_t* st)
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

static void insert_live(world_t* w, uint32_t slot, const shoal_agent_def_t* def)
{
    int32_t row = table_push(&w->agents, slot);
    user_push(w, slot);
    w->structure_version++;
    w->slots[slot].row = row;
    w->slots[slot].state = SLOT_LIVE;
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
    for (int k = 0; k < w->comp_count; ++k) remove_component(w, k, slot);
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
    release_slot(w, slot);
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
            insert_live(w, c->slot, &c->def);
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
        !user_reserve(w, w->agents.capacity) ||
        !reserve_components(w, def, 1 + w->pending_adds) || (w->in_step && !reserve_command(w)))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "agent_add: out of memory growing to %d agents",
                          (int)live_after);
    /* Module-wide memory the agent calls for (the first planner agent of a
     * world without a trim table builds the default one); an agent added
     * inside a step goes live at a stage boundary, after the step reserved
     * the memory of its later stages, so it reserves its share now. */
    st = agent_prepare_modules(w, def, "agent_add");
    if (st != SHOAL_OK) return st;
    uint32_t slot = agent_take_slot(w);
    if (w->in_step) {
        command_t* c = &w->commands[w->command_count++];
        c->slot = slot;
        c->is_add = 1;
        c->def = *def;
        w->slots[slot].state = SLOT_PENDING;
        w->pending_adds++;
    } else {
        insert_live(w, slot, def);
    }
    if (out_id) *out_id = make_handle(w, slot);
    return SHOAL_OK;
}

void world_undo_add(world_t* w, shoal_agent_t id, int32_t slot_high_before)
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
    return world_failc(w, SHOAL_ERR_BUSY, "%s: the agent was added during this step; it is live once the step ends",
                       where);
}

shoal_status_t agent_read_def(const world_t* w, shoal_agent_t id, shoal_agent_def_t* out,
                              const char* where)
{
    int32_t slot = world_resolve(w, id, 1, where);
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    if (w->slots[slot].state == SLOT_PENDING)
        *out = pending_add((world_t*)(uintptr_t)w, (uint32_t)slot)->def;
    else
        read_def(w, w->slots[slot].row, out);
    return SHOAL_OK;
}

shoal_status_t shoal_agent_get_def(const shoal_world_t* w, shoal_agent_t id, shoal_agent_def_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_get_def: out_def is NULL");
    return agent_read_def(w, id, out, "agent_get_def");
}

shoal_status_t shoal_agent_get_state(const shoal_world_t* w, shoal_agent_t id,
                                     shoal_agent_state_t* out)
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
    quat q = row_quat(w, row);
    out->orientation[0] = q.w;
    out->orientation[1] = q.x;
    out->orientation[2] = q.y;
    out->orientation[3] = q.z;
    out->angular_velocity[0] = three ? AGENT_F(w, AC_OMEGA_X)[row] : 0.0f;
    out->angular_velocity[1] = three ? AGENT_F(w, AC_OMEGA_Y)[row] : 0.0f;
    out->angular_velocity[2] = AGENT_F(w, AC_OMEGA_Z)[row];
    return SHOAL_OK;
}

shoal_status_t agent_edit(world_t* w, shoal_agent_t id, const char* where, def_edit_fn* edit,
                          const void* arg)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    int32_t slot = world_resolve(w, id, 1, where);
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    command_t* pending = w->slots[slot].state == SLOT_PENDING ? pending_add(w, (uint32_t)slot) : NULL;
    shoal_agent_def_t def;
    if (pending)
        def = pending->def;
    else
        read_def(w, w->slots[slot].row, &def);
    edit(&def, arg);
    shoal_status_t st = agent_validate_def(w, &def, where);
    if (st != SHOAL_OK) return st;
    if (!reserve_components(w, &def, 1 + w->pending_adds))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    st = agent_prepare_modules(w, &def, where);
    if (st != SHOAL_OK) return st;
    if (pending) {
        pending->def = def;
    } else {
        int32_t row = w->slots[slot].row;
        write_params(w, row, &def);
        write_components(w, (uint32_t)slot, &def, row_forward(w, row));
    }
    return SHOAL_OK;
}

static void edit_target(shoal_agent_def_t* d, const void* a) { memcpy(d->target, a, sizeof d->target); }
static void edit_threat(shoal_agent_def_t* d, const void* a) { memcpy(d->threat, a, sizeof d->threat); }
static void edit_vehicle(shoal_agent_def_t* d, const void* a) { d->vehicle = *(const shoal_vehicle_t*)a; }
static void edit_control(shoal_agent_def_t* d, const void* a) { d->control = *(const shoal_control_t*)a; }
static void edit_user(shoal_agent_def_t* d, const void* a) { d->user_value = *(const uint64_t*)a; }
static void edit_gains(shoal_agent_def_t* d, const void* a)
{
    d->arrive_gain = ((const float*)a)[0];
    d->depart_gain = ((const float*)a)[1];
}
typedef struct behavior_arg {
    int32_t behavior;
    float weight;
} behavior_arg;
static void edit_behavior(shoal_agent_def_t* d, const void* a)
{
    const behavior_arg* b = (const behavior_arg*)a;
    d->weights[b->behavior] = b->weight;
}

#define REQUIRE_PTR(w, p, where, name)                                                        \
    do {                                                                                      \
        if (!(w)) return SHOAL_ERR_INVALID_ARGUMENT;                                          \
        if (!(p)) return world_fail((w), SHOAL_ERR_INVALID_ARGUMENT, "%s: %s is NULL", where, name); \
    } while (0)

shoal_status_t shoal_agent_set_target(shoal_world_t* w, shoal_agent_t id, const float target[3])
{
    REQUIRE_PTR(w, target, "agent_set_target", "target");
    return agent_edit(w, id, "agent_set_target", edit_target, target);
}

shoal_status_t shoal_agent_set_threat(shoal_world_t* w, shoal_agent_t id, const float threat[3])
{
    REQUIRE_PTR(w, threat, "agent_set_threat", "threat");
    return agent_edit(w, id, "agent_set_threat", edit_threat, threat);
}

shoal_status_t shoal_agent_set_vehicle(shoal_world_t* w, shoal_agent_t id, const shoal_vehicle_t* v)
{
    REQUIRE_PTR(w, v, "agent_set_vehicle", "vehicle");
    return agent_edit(w, id, "agent_set_vehicle", edit_vehicle, v);
}

shoal_status_t shoal_agent_set_control(shoal_world_t* w, shoal_agent_t id, const shoal_control_t* c)
{
    REQUIRE_PTR(w, c, "agent_set_control", "control");
    return agent_edit(w, id, "agent_set_control", edit_control, c);
}

shoal_status_t shoal_agent_set_behavior(shoal_world_t* w, shoal_agent_t id, shoal_behavior_t behavior,
                                        float weight)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if ((unsigned)behavior >= SHOAL_BEHAVIOR_COUNT_)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "agent_set_behavior: unknown behavior %d (expected 0..%d)", (int)behavior,
                          SHOAL_BEHAVIOR_COUNT_ - 1);
    behavior_arg arg = {(int32_t)behavior, weight};
    return agent_edit(w, id, "agent_set_behavior", edit_behavior, &arg);
}

static void edit_neighbors(shoal_agent_def_t* d, const void* a) { d->neighbors = *(const shoal_neighbors_t*)a; }
static void edit_wander(shoal_agent_def_t* d, const void* a) { d->wander = *(const shoal_wander_t*)a; }
static void edit_pursuit(shoal_agent_def_t* d, const void* a) { d->pursuit = *(const shoal_pursuit_t*)a; }
static void edit_follow(shoal_agent_def_t* d, const void* a) { d->follow = *(const shoal_follow_t*)a; }
static void edit_avoid(shoal_agent_def_t* d, const void* a) { d->avoid = *(const shoal_avoid_t*)a; }

shoal_status_t shoal_agent_set_neighbors(shoal_world_t* w, shoal_agent_t id, const shoal_neighbors_t* n)
{
    REQUIRE_PTR(w, n, "agent_set_neighbors", "neighbors");
    return agent_edit(w, id, "agent_set_neighbors", edit_neighbors, n);
}

shoal_status_t shoal_agent_set_wander(shoal_world_t* w, shoal_agent_t id, const shoal_wander_t* v)
{
    REQUIRE_PTR(w, v, "agent_set_wander", "wander");
    return agent_edit(w, id, "agent_set_wander", edit_wander, v);
}

shoal_status_t shoal_agent_set_pursuit(shoal_world_t* w, shoal_agent_t id, const shoal_pursuit_t* p)
{
    REQUIRE_PTR(w, p, "agent_set_pursuit", "pursuit");
    return agent_edit(w, id, "agent_set_pursuit", edit_pursuit, p);
}

shoal_status_t shoal_agent_set_follow(shoal_world_t* w, shoal_agent_t id, const shoal_follow_t* f)
{
    REQUIRE_PTR(w, f, "agent_set_follow", "follow");
    return agent_edit(w, id, "agent_set_follow", edit_follow, f);
}

shoal_status_t shoal_agent_set_avoid(shoal_world_t* w, shoal_agent_t id, const shoal_avoid_t* a)
{
    REQUIRE_PTR(w, a, "agent_set_avoid", "avoid");
    return agent_edit(w, id, "agent_set_avoid", edit_avoid, a);
}

shoal_status_t shoal_agent_set_gains(shoal_world_t* w, shoal_agent_t id, float arrive_gain,
                                     float depart_gain)
{
    float gains[2] = {arrive_gain, depart_gain};
    return agent_edit(w, id, "agent_set_gains", edit_gains, gains);
}

shoal_status_t shoal_agent_set_user_value(shoal_world_t* w, shoal_agent_t id, uint64_t value)
{
    return agent_edit(w, id, "agent_set_user_value", edit_user, &value);
}

shoal_status_t shoal_agent_get_user_value(const shoal_world_t* w, shoal_agent_t id, uint64_t* out)
{
    shoal_agent_def_t def;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "agent_get_user_value: out_value is NULL");
    shoal_status_t st = agent_read_def(w, id, &def, "agent_get_user_value");
    if (st == SHOAL_OK) *out = def.user_value;
    return st;
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
    int ok = def_check_finite(w, where, "position", position, 3) &&
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
    write_pose(w, w->slots[slot].row, position, velocity, heading, q);
    /* Modules that move their agents themselves take the new pose (a
     * ground vehicle its yaw and speeds, a planner agent a new interval). */
    for (int k = 0; k < w->comp_count; ++k) {
        int32_t r = component_row(&w->comps[k], (uint32_t)slot);
        const module_t* m = w->comp_module[k];
        if (r >= 0 && m->teleported) m->teleported(w, r, velocity);
    }
    return SHOAL_OK;
}

shoal_status_t shoal_world_read_agents(const shoal_world_t* w, const shoal_agent_batch_t* b,
                                       int32_t capacity, int32_t* out_count)
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
            quat q = row_quat(w, i);
            b->orientations[4 * i] = q.w;
            b->orientations[4 * i + 1] = q.x;
            b->orientations[4 * i + 2] = q.y;
            b->orientations[4 * i + 3] = q.z;
        }
        if (b->user_values) b->user_values[i] = row_user_value(w, i);
        if (b->groups) b->groups[i] = TABLE_COL(&w->agents, uint32_t, AC_GROUP)[i];
    }
    if (out_count) *out_count = n;
    return SHOAL_OK;
}

size_t world_permute_scratch_size(const world_t* w)
{
    size_t size = (size_t)w->agents.capacity * table_widest(&w->agents);
    for (int k = 0; k < w->comp_count; ++k) { /* one column of a component */
        const table_t* t = &w->comps[k].table;
        size_t need = (size_t)t->capacity * table_widest(t);
        if (need > size) size = need;
    }
    return size;
}

/* The second half of a reorder, once the agent table's columns have been
 * permuted: re-point the slots and put every component in the new
 * agent-row order. */
static void world_finish_agent_permute(world_t* w, void* scratch, int32_t* component_perm);

void world_permute_agents_unchecked(world_t* w, const int32_t* perm, void* scratch,
                                    int32_t* component_perm)
{
    table_permute(&w->agents, perm, scratch);
    user_permute(w, perm);
    w->structure_version++;
    world_finish_agent_permute(w, scratch, component_perm);
}

static void world_finish_agent_permute(world_t* w, void* scratch, int32_t* component_perm)
{
    int32_t n = w->agents.count;
    const uint32_t* slots = table_slots(&w->agents);
    for (int32_t i = 0; i < n; ++i) w->slots[slots[i]].row = i;
    /* Put every component's rows in agent-row order too: walking agents in
     * row order then walks each component forward. */
    for (int k = 0; k < w->comp_count; ++k) {
        component_t* c = &w->comps[k];
        int32_t m = c->table.count;
        if (m == 0) continue;
        int32_t j = 0;
        for (int32_t i = 0; i < n && j < m; ++i) {
            int32_t r = component_row(c, slots[i]);
            if (r >= 0) component_perm[j++] = r;
        }
        component_permute(c, component_perm, scratch);
        const uint32_t* cslots = table_slots(&c->table);
        int32_t* crow = TABLE_COL(&c->table, int32_t, COMP_ROW);
        for (int32_t r = 0; r < m; ++r) crow[r] = w->slots[cslots[r]].row;
    }
}

/* ---- the parallel reorder of the sense stage ---------------------------- */

typedef struct par_permute_ctx {
    world_t* w;
    table_t* table;           /* whose columns the column tasks permute */
    const int32_t* perm;      /* new row i = old row perm[i] */
    float* const* spare;      /* one scratch column per task */
    int32_t spares;
    component_t* comp;        /* the component of the row passes */
    int32_t* comp_perm;       /* component_rows' output */
} par_permute_ctx;

/* Task j permutes columns j, j + spares, ... with spare[j] as scratch: the
 * scratch belongs to the task, so any number of workers may run tasks. */
static void permute_column_tasks(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx* c = (par_permute_ctx*)vctx;
    for (int32_t j = begin; j < end; ++j)
        for (int32_t col = j; col < c->table->column_count; col += c->spares)
            table_permute_column(c->table, col, c->perm, c->spare[j]);
}

static void point_slots(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    world_t* w = ((par_permute_ctx*)vctx)->w;
    const uint32_t* slots = table_slots(&w->agents);
    for (int32_t i = begin; i < end; ++i) w->slots[slots[i]].row = i;
}

/* A component every agent has: its new row i is the row of agent row i. */
static void component_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx* c = (par_permute_ctx*)vctx;
    const uint32_t* slots = table_slots(&c->w->agents);
    for (int32_t i = begin; i < end; ++i) c->comp_perm[i] = component_row(c->comp, slots[i]);
}

static void point_component(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx* c = (par_permute_ctx*)vctx;
    const uint32_t* cslots = table_slots(&c->comp->table);
    int32_t* crow = TABLE_COL(&c->comp->table, int32_t, COMP_ROW);
    for (int32_t r = begin; r < end; ++r) {
        c->comp->sparse[cslots[r]] = r;
        crow[r] = c->w->slots[cslots[r]].row;
    }
}

void world_permute_agents_parallel(world_t* w, const int32_t* perm, float* const* spare,
                                   int32_t spares, int32_t* component_perm)
{
    int32_t n = w->agents.count;
    par_permute_ctx c = {w, &w->agents, perm, spare, spares, NULL, component_perm};
    par_for(w, spares, 1, PAR_CLAIMED | PAR_TASKS, permute_column_tasks, &c);
    user_permute(w, perm);
    w->structure_version++;
    par_for(w, n, 4096, PAR_STATIC, point_slots, &c);
    const uint32_t* slots = table_slots(&w->agents);
    for (int k = 0; k < w->comp_count; ++k) {
        component_t* comp = &w->comps[k];
        int32_t m = comp->table.count;
        if (m == 0) continue;
        c.comp = comp;
        c.table = &comp->table;
        c.perm = component_perm;
        if (m == n) {
            par_for(w, n, 4096, PAR_STATIC, component_rows, &c);
        } else {
            int32_t j = 0;
            for (int32_t i = 0; i < n && j < m; ++i) {
                int32_t r = component_row(comp, slots[i]);
                if (r >= 0) component_perm[j++] = r;
            }
        }
        par_for(w, spares, 1, PAR_CLAIMED | PAR_TASKS, permute_column_tasks, &c);
        par_for(w, m, 4096, PAR_STATIC, point_component, &c);
    }
}

shoal_status_t world_permute_agents(world_t* w, const int32_t* perm)
{
    int32_t n = w->agents.count;
    if (n == 0) return SHOAL_OK;
    size_t scratch_size = world_permute_scratch_size(w);
    size_t seen_size = (size_t)n;
    size_t cperm_size = (size_t)n * sizeof(int32_t);
    void* scratch = mem_alloc(&w->alloc, scratch_size);
    uint8_t* seen = (uint8_t*)mem_calloc(&w->alloc, seen_size);
    int32_t* cperm = (int32_t*)mem_alloc(&w->alloc, cperm_size);
    shoal_status_t st = SHOAL_OK;
    if (!scratch || !seen || !cperm) {
        st = world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "permute_agents: out of memory");
        goto done;
    }
    for (int32_t i = 0; i < n; ++i) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]) {
            st = world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                            "permute_agents: perm[%d] = %d is out of range or repeated", (int)i,
                            (int)perm[i]);
            goto done;
        }
        seen[perm[i]] = 1;
    }
    world_permute_agents_unchecked(w, perm, scratch, cperm);
done:
    mem_free(&w->alloc, cperm, cperm_size);
    mem_free(&w->alloc, seen, seen_size);
    mem_free(&w->alloc, scratch, scratch_size);
    return st;
}
