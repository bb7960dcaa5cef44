/* The obstacles module: the world's obstacles (obstacles.h), their public
 * API, the obstacle_move system and their part of the state hash. Obstacle
 * ids are indexes; a removed id is reused by the next add (the lowest free
 * one: ids, and so the state hash, are part of the golden results). The
 * lowest free id comes from a two-level bitmap (obstacles.h), so an add
 * costs O(1) amortized (at worst one pass over high / 4096 summary words)
 * instead of a scan of every id. */
#include <math.h>
#include <string.h>

#include "modules/obstacles/obstacles.h"
#include "modules/agent.h"

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
    mem_free(&w->alloc, obs->free_bits, (size_t)obs->free_bit_words * sizeof *obs->free_bits);
    mem_free(&w->alloc, obs->free_summary, (size_t)obs->free_summary_words * sizeof *obs->free_summary);
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

/* Snapshot section OBST: high id, count, moving count, version, then every
 * id's center, radius and velocity (a free id has radius < 0 and zero
 * velocity). The free-id bitmap is derived (free_valid stays 0). */
static void obstacles_save(const world_t* w, byte_writer_t* wr)
{
    const obstacle_set_t* obs = obstacles_of(w);
    bw_u32(wr, (uint32_t)obs->obstacle_high);
    bw_u32(wr, (uint32_t)obs->obstacle_count);
    bw_u32(wr, (uint32_t)obs->moving_obstacles);
    bw_u32(wr, obs->obstacle_version);
    for (int32_t i = 0; i < obs->obstacle_high; ++i) {
        for (int k = 0; k < 4; ++k) bw_f32(wr, obs->obstacles[i][k]);
        for (int k = 0; k < 3; ++k) bw_f32(wr, obs->obstacle_velocities[i][k]);
    }
}

static int obstacles_load(world_t* w, byte_reader_t* rd)
{
    obstacle_set_t* obs = obstacles_of(w);
    uint32_t high = br_u32(rd), count = br_u32(rd), moving = br_u32(rd);
    uint32_t version = br_u32(rd);
    if (!br_count(rd, high, 28, INT32_MAX / 64, "obstacle ids")) return 0;
    if (high > 0) {
        size_t cap = high;
        obs->obstacles = mem_alloc(&w->alloc, cap * sizeof *obs->obstacles);
        obs->obstacle_velocities = mem_calloc(&w->alloc, cap * sizeof *obs->obstacle_velocities);
        obs->obstacle_capacity = (int32_t)high;
        if (!obs->obstacles || !obs->obstacle_velocities)
            return br_fail(rd, "out of memory for %u obstacles", high);
    }
    uint32_t live = 0, live_moving = 0;
    for (uint32_t i = 0; i < high; ++i) {
        float* o = obs->obstacles[i];
        float* v = obs->obstacle_velocities[i];
        for (int k = 0; k < 4; ++k) o[k] = br_f32(rd);
        for (int k = 0; k < 3; ++k) v[k] = br_f32(rd);
        if (rd->failed) return 0;
        for (int k = 0; k < 4; ++k)
            if (!br_finite(rd, o[k], "obstacle value of id", (int32_t)i)) return 0;
        for (int k = 0; k < 3; ++k)
            if (!br_finite(rd, v[k], "obstacle velocity of id", (int32_t)i)) return 0;
        int nonzero = v[0] != 0.0f || v[1] != 0.0f || v[2] != 0.0f;
        if (w->dims == 2 && (o[2] != 0.0f || v[2] != 0.0f))
            return br_fail(rd, "obstacle %u: z must be 0 in a 2D world", i);
        if (o[3] < 0.0f) {
            if (nonzero) return br_fail(rd, "obstacle %u: a free id must have zero velocity", i);
            continue;
        }
        live++;
        live_moving += nonzero != 0;
    }
    if (rd->failed) return 0;
    if (live != count || live_moving != moving)
        return br_fail(rd, "counts say %u obstacles (%u moving), the ids hold %u (%u moving)", count, moving,
                       live, live_moving);
    obs->obstacle_high = (int32_t)high;
    obs->obstacle_count = (int32_t)count;
    obs->moving_obstacles = (int32_t)moving;
    obs->obstacle_version = version;
    return 1;
}

/* After removing the obstacles added last: forget free ids at or above
 * `high` (the obstacle_high of before the adds), so that ids and the state
 * hash are as before. */
static void world_truncate_obstacles(world_t* w, int32_t high)
{
    obstacle_set_t* obs = obstacles_of(w);
    while (obs->obstacle_high > high && obs->obstacles[obs->obstacle_high - 1][3] < 0.0f)
        obs->obstacle_high--;
    obs->free_valid = 0; /* free ids past the new high are gone */
}

static void obstacles_mark(const world_t* w, int64_t note[WORLD_MARK_WORDS])
{
    note[0] = obstacles_of(w)->obstacle_high;
}

static void obstacles_rollback(world_t* w, const int64_t note[WORLD_MARK_WORDS])
{
    world_truncate_obstacles(w, (int32_t)note[0]);
}

const module_t obstacles_module = {
    .name = "obstacles",
    .init = obstacles_init,
    .release = obstacles_release,
    .hash = obstacles_hash,
    .mark = obstacles_mark,
    .rollback = obstacles_rollback,
    .snapshot_tag = BYTE_TAG('O', 'B', 'S', 'T'),
    .save = obstacles_save,
    .load = obstacles_load,
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

/* ---- free ids ---------------------------------------------------------------- */

static void free_mark(obstacle_set_t* obs, int32_t id)
{
    int32_t word = id >> 6;
    obs->free_bits[word] |= 1ull << (id & 63);
    obs->free_summary[word >> 6] |= 1ull << (word & 63);
    if ((word >> 6) < obs->free_hint) obs->free_hint = word >> 6;
}

/* (Re)build the bitmap from the radii: sized for obstacle_capacity, so that
 * every id a remove can free has its bit. 0 when out of memory (nothing
 * changed but the bitmap, which stays invalid). */
static int free_build(world_t* w, obstacle_set_t* obs)
{
    int32_t bit_words = (obs->obstacle_capacity + 63) / 64;
    int32_t summary_words = (bit_words + 63) / 64;
    if (bit_words > obs->free_bit_words || summary_words > obs->free_summary_words) {
        uint64_t* bits = mem_alloc(&w->alloc, (size_t)bit_words * sizeof *bits);
        uint64_t* summary = mem_alloc(&w->alloc, (size_t)summary_words * sizeof *summary);
        if (!bits || !summary) {
            mem_free(&w->alloc, bits, (size_t)bit_words * sizeof *bits);
            mem_free(&w->alloc, summary, (size_t)summary_words * sizeof *summary);
            return 0;
        }
        mem_free(&w->alloc, obs->free_bits, (size_t)obs->free_bit_words * sizeof *bits);
        mem_free(&w->alloc, obs->free_summary, (size_t)obs->free_summary_words * sizeof *summary);
        obs->free_bits = bits;
        obs->free_summary = summary;
        obs->free_bit_words = bit_words;
        obs->free_summary_words = summary_words;
    }
    memset(obs->free_bits, 0, (size_t)obs->free_bit_words * sizeof *obs->free_bits);
    memset(obs->free_summary, 0, (size_t)obs->free_summary_words * sizeof *obs->free_summary);
    obs->free_hint = obs->free_summary_words;
    for (int32_t i = 0; i < obs->obstacle_high; ++i)
        if (obs->obstacles[i][3] < 0.0f) free_mark(obs, i);
    obs->free_valid = 1;
    return 1;
}

/* The lowest free id, taken out of the bitmap (which is valid and has one). */
static int32_t free_take_lowest(obstacle_set_t* obs)
{
    int32_t j = obs->free_hint;
    while (obs->free_summary[j] == 0) ++j;
    obs->free_hint = j;
    int32_t word = j * 64 + __builtin_ctzll(obs->free_summary[j]);
    int32_t id = word * 64 + __builtin_ctzll(obs->free_bits[word]);
    obs->free_bits[word] &= obs->free_bits[word] - 1;
    if (obs->free_bits[word] == 0) obs->free_summary[j] &= ~(1ull << (word & 63));
    return id;
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
    if (!def_check_coordinates(w, where, "center", center, 3)) return SHOAL_ERR_INVALID_ARGUMENT;
    float vel[3] = {0.0f, 0.0f, 0.0f};
    if (velocity) {
        /* as fast as an agent may be, so that it too stays in range */
        for (int k = 0; k < 3; ++k)
            if (!isfinite(velocity[k]) || fabsf(velocity[k]) > DEF_MAX_MAGNITUDE)
                return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                                  "%s: velocity[%d] must be finite and within +-%g m/s, got %g", where, k,
                                  (double)DEF_MAX_MAGNITUDE, (double)velocity[k]);
        vel[0] = velocity[0];
        vel[1] = velocity[1];
        vel[2] = w->dims == 3 ? velocity[2] : 0.0f;
    }
    if (!def_check_min(w, where, "radius", radius, 0.0f, 0)) return SHOAL_ERR_INVALID_ARGUMENT;
    obstacle_set_t* obs = obstacles_of(w);
    int32_t id = -1;
    if (obs->obstacle_count < obs->obstacle_high) { /* a free id exists: the lowest one */
        if (!obs->free_valid && !free_build(w, obs))
            return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
        id = free_take_lowest(obs);
    } else {
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
            obs->free_valid = 0; /* too small for the new ids: rebuilt when needed */
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
    /* A free id is (0, 0, 0, -1) whatever it held, so that worlds with the
     * same obstacles hash alike however their ids were freed. */
    obs->obstacles[id][0] = obs->obstacles[id][1] = obs->obstacles[id][2] = 0.0f;
    obs->obstacles[id][3] = -1.0f;
    if (obs->free_valid) free_mark(obs, id);
    if (vec3_nonzero(obs->obstacle_velocities[id])) obs->moving_obstacles--;
    memset(obs->obstacle_velocities[id], 0, 3 * sizeof(float));
    obs->obstacle_count--;
    obs->obstacle_version++;
    return SHOAL_OK;
}

int32_t shoal_world_obstacle_count(const shoal_world_t* w) { return w ? obstacles_of(w)->obstacle_count : 0; }

shoal_status_t shoal_world_read_obstacles(const shoal_world_t* w, int32_t* ids, float* centers, float* radii,
                                          float* velocities, int32_t capacity, int32_t* out_count)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out_count) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "read_obstacles: out_count is NULL");
    if (capacity < 0)
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "read_obstacles: capacity %d is negative",
                           (int)capacity);
    const obstacle_set_t* obs = obstacles_of(w);
    int32_t n = 0;
    for (int32_t i = 0; i < obs->obstacle_high; ++i) {
        const float* o = obs->obstacles[i];
        if (o[3] < 0.0f) continue;
        if (n < capacity) {
            if (ids) ids[n] = i;
            if (centers) memcpy(centers + 3 * (size_t)n, o, 3 * sizeof(float));
            if (radii) radii[n] = o[3];
            if (velocities)
                memcpy(velocities + 3 * (size_t)n, obs->obstacle_velocities[i], 3 * sizeof(float));
        }
        n++;
    }
    *out_count = n;
    return SHOAL_OK;
}
