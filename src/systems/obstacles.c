/* The obstacles module: the world's obstacles (obstacles.h), their public
 * API, the obstacle_move system and their part of the state hash. Obstacle
 * ids are indexes; a removed id is reused by the next add (the lowest free
 * one). */
#include <math.h>
#include <string.h>

#include "systems/obstacles.h"
#include "systems/systems.h"

static int obstacles_init(world_t* w)
{
    obstacle_set_t* obs = (obstacle_set_t*)mem_calloc(&w->alloc, sizeof *obs);
    w->module_data[MOD_OBSTACLES] = obs;
    return obs != NULL;
}

static void obstacles_release(world_t* w)
{
    obstacle_set_t* obs = obstacles_of(w);
    if (!obs) return;
    mem_free(&w->alloc, obs->obstacles, (size_t)obs->obstacle_capacity * sizeof *obs->obstacles);
    mem_free(&w->alloc, obs->obstacle_velocities,
             (size_t)obs->obstacle_capacity * sizeof *obs->obstacle_velocities);
    mem_free(&w->alloc, obs, sizeof *obs);
    w->module_data[MOD_OBSTACLES] = NULL;
}

/* Obstacles, by id. */
static uint64_t obstacles_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb)
{
    const obstacle_set_t* obs = obstacles_of(w);
    for (int32_t i = 0; i < obs->obstacle_high; ++i) {
        uint32_t v[4];
        memcpy(v, obs->obstacles[i], sizeof v);
        h = absorb(h, ((uint64_t)v[0] << 32) | v[1]);
        h = absorb(h, ((uint64_t)v[2] << 32) | v[3]);
        /* A moving obstacle's velocity (static ones add nothing, so their
         * worlds hash as before velocities existed). */
        const float* vel = obs->obstacle_velocities[i];
        if (vel[0] != 0.0f || vel[1] != 0.0f || vel[2] != 0.0f) {
            uint32_t u[3];
            memcpy(u, vel, sizeof u);
            h = absorb(h, 0x7e1000000000ull | (uint64_t)(uint32_t)i);
            h = absorb(h, ((uint64_t)u[0] << 32) | u[1]);
            h = absorb(h, u[2]);
        }
    }
    return h;
}

const module_t obstacles_module = {
    .name = "obstacles",
    .init = obstacles_init,
    .release = obstacles_release,
    .hash = obstacles_hash,
};

/* ---- integrate: obstacle_move ----------------------------------------------- */

int64_t obstacle_move_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    obstacle_set_t* obs = obstacles_of(w);
    if (obs->moving_obstacles == 0) return 0;
    for (int32_t i = 0; i < obs->obstacle_high; ++i) {
        float* o = obs->obstacles[i];
        const float* v = obs->obstacle_velocities[i];
        if (o[3] < 0.0f) continue;
        o[0] += v[0] * dt;
        o[1] += v[1] * dt;
        o[2] += v[2] * dt;
    }
    return 0; /* touches no agent */
}

/* ---- the public API -------------------------------------------------------- */

static int vec3_nonzero(const float v[3]) { return v[0] != 0.0f || v[1] != 0.0f || v[2] != 0.0f; }

/* Both add calls: validate, take a free id (or grow both arrays), store. */
static shoal_status_t add_obstacle(world_t* w, const char* where, const float center[3],
                                   const float velocity[3], float radius, int32_t* out_id)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (out_id) *out_id = -1;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (!center) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: center is NULL", where);
    for (int k = 0; k < 3; ++k)
        if (!isfinite(center[k]))
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: center[%d] must be finite, got %g",
                              where, k, (double)center[k]);
    float vel[3] = {0.0f, 0.0f, 0.0f};
    if (velocity) {
        for (int k = 0; k < 3; ++k)
            if (!isfinite(velocity[k]))
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "%s: velocity[%d] must be finite, got %g", where, k,
                                  (double)velocity[k]);
        vel[0] = velocity[0];
        vel[1] = velocity[1];
        vel[2] = w->dims == 3 ? velocity[2] : 0.0f;
    }
    if (!isfinite(radius) || radius < 0.0f)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: radius must be finite and >= 0 m, got %g", where, (double)radius);
    obstacle_set_t* obs = obstacles_of(w);
    int32_t id = -1;
    for (int32_t i = 0; i < obs->obstacle_high; ++i)
        if (obs->obstacles[i][3] < 0.0f) {
            id = i;
            break;
        }
    if (id < 0) {
        if (obs->obstacle_high == obs->obstacle_capacity) {
            int32_t cap = obs->obstacle_capacity ? obs->obstacle_capacity * 2 : 16;
            float(*fresh)[4] = mem_alloc(&w->alloc, (size_t)cap * sizeof *fresh);
            float(*fresh_v)[3] = mem_calloc(&w->alloc, (size_t)cap * sizeof *fresh_v);
            if (!fresh || !fresh_v) {
                mem_free(&w->alloc, fresh, (size_t)cap * sizeof *fresh);
                mem_free(&w->alloc, fresh_v, (size_t)cap * sizeof *fresh_v);
                return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
            }
            if (obs->obstacle_high) {
                memcpy(fresh, obs->obstacles, (size_t)obs->obstacle_high * sizeof *fresh);
                memcpy(fresh_v, obs->obstacle_velocities, (size_t)obs->obstacle_high * sizeof *fresh_v);
            }
            mem_free(&w->alloc, obs->obstacles, (size_t)obs->obstacle_capacity * sizeof *fresh);
            mem_free(&w->alloc, obs->obstacle_velocities, (size_t)obs->obstacle_capacity * sizeof *fresh_v);
            obs->obstacles = fresh;
            obs->obstacle_velocities = fresh_v;
            obs->obstacle_capacity = cap;
        }
        id = obs->obstacle_high++;
    }
    obs->obstacles[id][0] = center[0];
    obs->obstacles[id][1] = center[1];
    obs->obstacles[id][2] = w->dims == 3 ? center[2] : 0.0f;
    obs->obstacles[id][3] = radius;
    memcpy(obs->obstacle_velocities[id], vel, sizeof vel);
    if (vec3_nonzero(vel)) obs->moving_obstacles++;
    obs->obstacle_count++;
    obs->obstacle_version++;
    if (out_id) *out_id = id;
    return SHOAL_OK;
}

shoal_status_t shoal_world_add_obstacle(shoal_world_t* w, const float center[3], float radius,
                                        int32_t* out_id)
{
    return add_obstacle(w, "add_obstacle", center, NULL, radius, out_id);
}

shoal_status_t shoal_world_add_moving_obstacle(shoal_world_t* w, const float center[3],
                                               const float velocity[3], float radius, int32_t* out_id)
{
    if (w && !velocity) {
        if (out_id) *out_id = -1;
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "add_moving_obstacle: velocity is NULL");
    }
    return add_obstacle(w, "add_moving_obstacle", center, velocity, radius, out_id);
}

shoal_status_t shoal_world_get_obstacle(const shoal_world_t* w, int32_t id, float center[3],
                                        float velocity[3], float* radius)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    const obstacle_set_t* obs = obstacles_of(w);
    if (id < 0 || id >= obs->obstacle_high || obs->obstacles[id][3] < 0.0f)
        return world_failc(w, SHOAL_ERR_NOT_FOUND, "get_obstacle: no obstacle with id %d", (int)id);
    if (center) memcpy(center, obs->obstacles[id], 3 * sizeof(float));
    if (velocity) memcpy(velocity, obs->obstacle_velocities[id], 3 * sizeof(float));
    if (radius) *radius = obs->obstacles[id][3];
    return SHOAL_OK;
}

shoal_status_t shoal_world_remove_obstacle(shoal_world_t* w, int32_t id)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "remove_obstacle: called from inside a step");
    obstacle_set_t* obs = obstacles_of(w);
    if (id < 0 || id >= obs->obstacle_high || obs->obstacles[id][3] < 0.0f)
        return world_fail(w, SHOAL_ERR_NOT_FOUND, "remove_obstacle: no obstacle with id %d", (int)id);
    obs->obstacles[id][3] = -1.0f;
    if (vec3_nonzero(obs->obstacle_velocities[id])) obs->moving_obstacles--;
    memset(obs->obstacle_velocities[id], 0, 3 * sizeof(float));
    obs->obstacle_count--;
    obs->obstacle_version++;
    return SHOAL_OK;
}

int32_t shoal_world_obstacle_count(const shoal_world_t* w) { return w ? obstacles_of(w)->obstacle_count : 0; }

void world_truncate_obstacles(world_t* w, int32_t high)
{
    obstacle_set_t* obs = obstacles_of(w);
    while (obs->obstacle_high > high && obs->obstacles[obs->obstacle_high - 1][3] < 0.0f) obs->obstacle_high--;
}
