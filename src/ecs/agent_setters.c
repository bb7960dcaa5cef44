/* The public setters of an agent's own parameters (target, threat, vehicle,
 * control, behavior weights, gains, user value), each one change through
 * agent_edit (agent.c). The setters of a module's part of the definition
 * live with the module (neighbors, wander, pursuit, follow, avoid, dseek,
 * ground vehicles, planner agents, crowd agents). */
#include <string.h>

#include "ecs/world.h"

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
} behavior_arg_t;
static void edit_behavior(shoal_agent_def_t* d, const void* a)
{
    const behavior_arg_t* b = (const behavior_arg_t*)a;
    d->weights[b->behavior] = b->weight;
}

/* The components whose rows hold a behavior's weight: those that an agent
 * with that behavior alone calls for (an agent has a behavior's component
 * exactly when one of the behaviors it serves has a weight, module_t.needs),
 * whose rows a change of the weight writes again. */
static uint64_t behavior_components(const world_t* w, shoal_behavior_t behavior)
{
    shoal_agent_def_t alone = shoal_agent_default_def();
    alone.weights[behavior] = 1.0f;
    uint64_t comps = 0;
    for (int k = 0; k < w->comp_count; ++k)
        if (w->comp_module[k]->needs(&alone)) comps |= AGENT_EDIT_COMPONENT(k);
    return comps;
}

shoal_status_t shoal_agent_set_target(shoal_world_t* w, shoal_agent_t id, const float target[3])
{
    static const char* where = "agent_set_target";
    REQUIRE_PTR(w, target, where, "target");
    int32_t slot = world_resolve(w, id, 1, where);
    if (slot < 0) return SHOAL_ERR_STALE_HANDLE;
    if (w->slots[slot].state == SLOT_PENDING)
        return agent_edit(w, id, where, edit_target, target, AGENT_EDIT_PARAMS);
    /* The per-frame call of a crowd: only the target columns change, and the
     * rest of the agent is valid already. */
    if (!def_check_coordinates(w, where, "target", target, 3)) return SHOAL_ERR_INVALID_ARGUMENT;
    int32_t row = w->slots[slot].row;
    AGENT_F(w, AC_TARGET_X)[row] = target[0];
    AGENT_F(w, AC_TARGET_Y)[row] = target[1];
    if (w->dims == 3) AGENT_F(w, AC_TARGET_Z)[row] = target[2];
    return SHOAL_OK;
}

shoal_status_t shoal_agent_set_threat(shoal_world_t* w, shoal_agent_t id, const float threat[3])
{
    REQUIRE_PTR(w, threat, "agent_set_threat", "threat");
    return agent_edit(w, id, "agent_set_threat", edit_threat, threat, AGENT_EDIT_PARAMS);
}

shoal_status_t shoal_agent_set_vehicle(shoal_world_t* w, shoal_agent_t id, const shoal_vehicle_t* v)
{
    REQUIRE_PTR(w, v, "agent_set_vehicle", "vehicle");
    return agent_edit(w, id, "agent_set_vehicle", edit_vehicle, v, AGENT_EDIT_PARAMS);
}

shoal_status_t shoal_agent_set_control(shoal_world_t* w, shoal_agent_t id, const shoal_control_t* c)
{
    REQUIRE_PTR(w, c, "agent_set_control", "control");
    return agent_edit(w, id, "agent_set_control", edit_control, c, AGENT_EDIT_PARAMS);
}

shoal_status_t shoal_agent_set_behavior(shoal_world_t* w, shoal_agent_t id, shoal_behavior_t behavior,
                                        float weight)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if ((unsigned)behavior >= SHOAL_BEHAVIOR_COUNT_)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "agent_set_behavior: unknown behavior %d (expected 0..%d)", (int)behavior,
                          SHOAL_BEHAVIOR_COUNT_ - 1);
    behavior_arg_t arg = {(int32_t)behavior, weight};
    return agent_edit(w, id, "agent_set_behavior", edit_behavior, &arg,
                      AGENT_EDIT_PARAMS | behavior_components(w, behavior));
}

shoal_status_t shoal_agent_set_gains(shoal_world_t* w, shoal_agent_t id, float arrive_gain, float depart_gain)
{
    float gains[2] = {arrive_gain, depart_gain};
    return agent_edit(w, id, "agent_set_gains", edit_gains, gains, AGENT_EDIT_PARAMS);
}

shoal_status_t shoal_agent_set_user_value(shoal_world_t* w, shoal_agent_t id, uint64_t value)
{
    return agent_edit(w, id, "agent_set_user_value", edit_user, &value, AGENT_EDIT_PARAMS);
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
