/* Agent definitions: the defaults of the core's parts (vehicle, control,
 * gains) and the checks of a definition; each module fills and checks its
 * own part (module_t.defaults, module_t.validate). */
#include <math.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/world.h"
#include "simd/vec.h"

#define AGENT_DEF_COOKIE 0x5348414e /* "SHAN" */

static const char* const behavior_names[SHOAL_BEHAVIOR_COUNT_] = {
    "seek",   "flee",  "arrive", "depart", "separate", "align",    "cohere", "wander",
    "pursue", "evade", "follow", "avoid",  "dseek",    "navigate", "navmesh"};

const char* shoal_behavior_name(shoal_behavior_t b)
{
    return (unsigned)b < SHOAL_BEHAVIOR_COUNT_ ? behavior_names[b] : NULL;
}

shoal_vehicle_t shoal_vehicle_default(void)
{
    shoal_vehicle_t v = {.mass = 1.0f,
                         .inertia = 1.0f,
                         .max_force = 20.0f,
                         .max_torque = 20.0f,
                         .max_speed = 5.0f,
                         .max_turn_rate = 3.0f,
                         .radius = 0.5f};
    return v;
}

shoal_control_t shoal_control_default(void)
{
    /* Heading loop critically damped at 3 rad/s: Kp = 9, Kd = 6. */
    shoal_control_t c = {4.0f, 9.0f, 6.0f};
    return c;
}

shoal_agent_def_t shoal_agent_default_def(void)
{
    shoal_agent_def_t d;
    memset(&d, 0, sizeof d);
    d.vehicle = shoal_vehicle_default();
    d.control = shoal_control_default();
    d.arrive_gain = 1.0f;
    d.depart_gain = 10.0f;
    /* Each module's part from the module (module_t.defaults). */
    const registry_t* reg = builtin_registry();
    for (int32_t m = 0; m < reg->module_count; ++m)
        if (reg->modules[m]->defaults) reg->modules[m]->defaults(&d);
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
            world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s[%d] must be finite, got %g", where, field, i,
                       (double)v[i]);
            return 0;
        }
    }
    return 1;
}

int def_check_coordinates(world_t* w, const char* where, const char* field, const float* v, int n)
{
    if (!def_check_finite(w, where, field, v, n)) return 0;
    for (int i = 0; i < n; ++i)
        if (fabsf(v[i]) > DEF_MAX_COORDINATE) {
            world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s[%d] must be within +-%g m, got %g", where,
                       field, i, (double)DEF_MAX_COORDINATE, (double)v[i]);
            return 0;
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
int def_check_min(world_t* w, const char* where, const char* field, float v, float lo, int strict)
{
    int ok = isfinite(v) && (strict ? v > lo : v >= lo) && v <= DEF_MAX_MAGNITUDE;
    if (!ok)
        world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be finite, %s %g and <= %g, got %g", where,
                   field, strict ? ">" : ">=", (double)lo, (double)DEF_MAX_MAGNITUDE, (double)v);
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
    int ok = def_check_coordinates(w, where, "position", d->position, 3) &&
             def_check_finite(w, where, "velocity", d->velocity, 3) &&
             def_check_finite(w, where, "heading", &d->heading, 1) &&
             def_check_finite(w, where, "pitch", &d->pitch, 1) &&
             def_check_coordinates(w, where, "target", d->target, 3) &&
             def_check_coordinates(w, where, "threat", d->threat, 3) &&
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
                                  "%s: weights[%d] is not a behavior of this version (0..%d)", where, b,
                                  SHOAL_BEHAVIOR_COUNT_ - 1);
            continue;
        }
        if (!isfinite(wt) || wt < 0.0f)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "%s: weights[%s] must be finite and >= 0, got %g", where, behavior_names[b],
                              (double)wt);
    }
    return SHOAL_OK;
}
