/* Snapshots, the writing half: a world encoded in the format of
 * docs/snapshot.md (constants in snapshot_format.h), into memory or,
 * atomically, into a file. The reader is snapshot_load.c.
 *
 * Decisions:
 * - Tables are written column by column in storage order, not in handle
 *   order: the order of rows decides the order in which neighbor sums and
 *   the spatial hash's cells visit agents, so a world that continues bit
 *   for bit needs the same order. Sparse indexes, grids, scenes and search
 *   memory are derived and rebuilt on load.
 * - Fields that mean nothing in their state are written normalized (a live
 *   slot's free-list link as 0, a free slot's row as -1), so saving a loaded
 *   world gives the bytes it was loaded from.
 * - One encoder serves both passes: with no buffer it only counts, so the
 *   memory variant can say how large a buffer it needs without allocating. */
#include <stdlib.h>
#include <string.h>

#include "ecs/world.h"
#include "io/atomic_file.h"
#include "base/bytes.h"
#include "io/snapshot_format.h"
#include "shoal/snapshot.h"
#include "systems/dseek.h"
#include "systems/ground.h"
#include "systems/obstacles.h"
#include "systems/planner.h"
#include "systems/spatial_hash.h"

typedef struct writer {
    uint8_t* data; /* NULL: count only */
    size_t size;
    size_t capacity;
} writer_t;

static uint8_t* w_room(writer_t* wr, size_t n)
{
    uint8_t* p = NULL;
    if (wr->data && wr->size + n <= wr->capacity) p = wr->data + wr->size;
    wr->size += n;
    return p;
}

static void w_u32(writer_t* wr, uint32_t v)
{
    uint8_t* p = w_room(wr, 4);
    if (p) put_u32(p, v);
}

static void w_i32(writer_t* wr, int32_t v) { w_u32(wr, (uint32_t)v); }

static void w_u64(writer_t* wr, uint64_t v)
{
    uint8_t* p = w_room(wr, 8);
    if (p) put_u64(p, v);
}

static void w_f32(writer_t* wr, float v)
{
    uint8_t* p = w_room(wr, 4);
    if (p) put_f32(p, v);
}

static void w_f64(writer_t* wr, double v)
{
    uint8_t* p = w_room(wr, 8);
    if (p) put_f64(p, v);
}

static void w_bytes(writer_t* wr, const void* src, size_t n)
{
    uint8_t* p = w_room(wr, n);
    if (p && n) memcpy(p, src, n);
}

/* A 4-byte column of `count` rows (uint32 bit patterns, little-endian). */
static void w_column(writer_t* wr, const void* column, int32_t count)
{
    const uint32_t* v = (const uint32_t*)column;
    uint8_t* p = w_room(wr, (size_t)count * 4);
    if (!p) return;
    for (int32_t i = 0; i < count; ++i) put_u32(p + (size_t)i * 4, v[i]);
}

static size_t begin_section(writer_t* wr, uint32_t tag)
{
    w_u32(wr, tag);
    w_u32(wr, 0);
    w_u64(wr, 0); /* payload bytes, patched by end_section */
    return wr->size;
}

static void end_section(writer_t* wr, size_t payload_start)
{
    if (wr->data && wr->size <= wr->capacity)
        put_u64(wr->data + payload_start - 8, (uint64_t)(wr->size - payload_start));
}

static void write_world(writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_WORLD);
    w_u32(wr, (uint32_t)w->dims);
    w_u32(wr, (uint32_t)w->wrap);
    w_u64(wr, w->seed);
    w_u32(wr, w->tag);
    for (int k = 0; k < 3; ++k) w_f32(wr, w->bounds_min[k]);
    for (int k = 0; k < 3; ++k) w_f32(wr, w->bounds_max[k]);
    w_f32(wr, w->cell_size);
    w_i32(wr, w->reorder_interval);
    w_u64(wr, w->step_count);
    w_f64(wr, w->time);
    /* The spatial hash's reorder phase: steps since the last reorder. The
     * reorder is keyed to the step count, so this is informative (the
     * loader checks it and needs nothing else); the grid itself is rebuilt
     * by every sense stage. */
    w_u32(wr, grid_data(w) != NULL);
    w_u64(wr, grid_data(w) && w->reorder_interval > 0 ? w->step_count % (uint64_t)w->reorder_interval : 0u);
    end_section(wr, s);
}

static void write_slots(writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_SLOTS);
    w_u32(wr, (uint32_t)w->slot_high);
    w_u32(wr, w->free_head);
    for (int32_t i = 0; i < w->slot_high; ++i) {
        const slot_t* sl = &w->slots[i];
        int live = sl->state == SLOT_LIVE;
        w_u32(wr, sl->generation);
        w_u32(wr, sl->state);
        w_i32(wr, live ? sl->row : -1);
        w_u32(wr, live ? 0u : sl->next_free);
    }
    end_section(wr, s);
}

static void write_table(writer_t* wr, const table_t* t)
{
    w_u32(wr, (uint32_t)t->count);
    w_u32(wr, (uint32_t)t->column_count);
    for (int32_t c = 0; c < t->column_count; ++c)
        if (t->elem_size[c] != 0) w_column(wr, t->columns[c], t->count);
}

static void write_obstacles(writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_OBSTACLES);
    w_u32(wr, (uint32_t)obstacles_of(w)->obstacle_high);
    w_u32(wr, (uint32_t)obstacles_of(w)->obstacle_count);
    w_u32(wr, (uint32_t)obstacles_of(w)->moving_obstacles);
    w_u32(wr, obstacles_of(w)->obstacle_version);
    for (int32_t i = 0; i < obstacles_of(w)->obstacle_high; ++i) {
        for (int k = 0; k < 4; ++k) w_f32(wr, obstacles_of(w)->obstacles[i][k]);
        for (int k = 0; k < 3; ++k) w_f32(wr, obstacles_of(w)->obstacle_velocities[i][k]);
    }
    end_section(wr, s);
}

static void write_routes(writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_ROUTES);
    w_u32(wr, (uint32_t)routes_of(w)->route_point_count);
    w_u32(wr, (uint32_t)routes_of(w)->route_count);
    for (int32_t i = 0; i < routes_of(w)->route_point_count; ++i) {
        const shoal_waypoint_t* p = &routes_of(w)->route_points[i];
        for (int k = 0; k < 3; ++k) w_f32(wr, p->position[k]);
        for (int k = 0; k < 3; ++k) w_f32(wr, p->direction[k]);
        w_f32(wr, p->speed);
    }
    for (int32_t i = 0; i < routes_of(w)->route_count; ++i) {
        w_i32(wr, routes_of(w)->routes[i][0]);
        w_i32(wr, routes_of(w)->routes[i][1]);
    }
    end_section(wr, s);
}

static void write_ground(writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_GROUND);
    const ground_world_t* g = ground_data(w);
    w_u32(wr, g != NULL);
    if (g) {
        /* Waypoints as the world keeps them (z = 0 in 2D); arc lengths are
         * rebuilt from them by the same code, bit for bit. */
        w_u32(wr, (uint32_t)g->path_count);
        for (int32_t i = 0; i < g->path_count; ++i) {
            const pf_path_t* p = &g->paths[i].path;
            w_u32(wr, (uint32_t)p->count);
            w_f32(wr, p->half_width);
            for (int32_t k = 0; k < p->count; ++k) {
                w_f32(wr, p->points[k].x);
                w_f32(wr, p->points[k].y);
                w_f32(wr, p->points[k].z);
            }
        }
        const terrain_t* t = &g->terrain;
        int flat = g->heights == NULL;
        w_u32(wr, flat ? 0u : (uint32_t)t->nx);
        w_u32(wr, flat ? 0u : (uint32_t)t->ny);
        w_f32(wr, flat ? 0.0f : t->origin_x);
        w_f32(wr, flat ? 0.0f : t->origin_y);
        w_f32(wr, flat ? 0.0f : t->cell);
        if (!flat) {
            size_t n = (size_t)t->nx * (size_t)t->ny;
            for (size_t i = 0; i < n; ++i) w_f32(wr, g->heights[i]);
        }
    }
    end_section(wr, s);
}

static void write_planner(writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_PLANNER);
    const planner_world_t* pw = planner_data(w);
    w_u32(wr, pw != NULL);
    if (pw) {
        w_u32(wr, (uint32_t)pw->has_table);
        if (pw->has_table) {
            /* The entries themselves, not only the spec: rebuilding them
             * (and the chord slack) costs controls^2 * substeps steps,
             * which a forged spec could make hours long. */
            const trim_table_t* t = &pw->table;
            w_i32(wr, t->spec.axes);
            for (int a = 0; a < TRIM_MAX_AXES; ++a) w_i32(wr, t->spec.samples[a]);
            for (int a = 0; a < TRIM_MAX_AXES; ++a) w_f32(wr, t->spec.max_rate[a]);
            w_f32(wr, t->spec.interval);
            w_i32(wr, t->spec.substeps);
            w_i32(wr, t->controls);
            w_f32(wr, pw->chord_slack);
            size_t n = (size_t)t->controls * (size_t)t->controls;
            for (size_t i = 0; i < n; ++i) {
                const trim_entry_t* e = &t->entries[i];
                const float v[10] = {e->pos.x,    e->pos.y,    e->pos.z, e->facing.x, e->facing.y,
                                     e->facing.z, e->rot.w,    e->rot.x, e->rot.y,    e->rot.z};
                for (int k = 0; k < 10; ++k) w_f32(wr, v[k]);
            }
        }
        /* The planner clock. The per-step stamps, the scene and the search
         * memory are rebuilt by the next step. */
        w_u64(wr, pw->substep_clock);
        w_f64(wr, pw->leftover);
    }
    end_section(wr, s);
}

static void write_systems(writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_SYSTEMS);
    w_u32(wr, (uint32_t)w->system_count);
    for (int32_t i = 0; i < w->system_count; ++i) {
        const system_t* sy = &w->systems[i];
        char name[SNAP_NAME_BYTES];
        memset(name, 0, sizeof name);
        size_t len = strlen(sy->name); /* < SYSTEM_NAME_MAX = SNAP_NAME_BYTES */
        memcpy(name, sy->name, len < SNAP_NAME_BYTES ? len : SNAP_NAME_BYTES - 1);
        w_bytes(wr, name, sizeof name);
        w_u32(wr, (uint32_t)sy->stage);
        w_u32(wr, sy->enabled != 0);
        w_u32(wr, system_is_user(sy)); /* listed, not restored */
    }
    end_section(wr, s);
}

/* User components: their descriptions, then each column of every agent row
 * as 4-byte words (a u64 is its low word, then its high word). */
static void write_user(writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_USER);
    w_u32(wr, (uint32_t)w->user_count);
    for (int32_t c = 0; c < w->user_count; ++c) {
        const user_column_t* u = &w->user_cols[c];
        char name[SNAP_NAME_BYTES];
        memset(name, 0, sizeof name);
        memcpy(name, u->name, strlen(u->name)); /* at most 31 characters */
        w_bytes(wr, name, sizeof name);
        w_u32(wr, (uint32_t)u->type);
        w_u32(wr, (uint32_t)u->width);
        w_column(wr, u->default_value, u->elem_size / 4);
        w_column(wr, w->user.columns[c + 1], (int32_t)((size_t)w->agents.count * u->elem_size / 4));
    }
    end_section(wr, s);
}

static void encode(writer_t* wr, const world_t* w)
{
    uint8_t* head = w_room(wr, SNAP_HEADER_BYTES);
    write_world(wr, w);
    write_slots(wr, w);
    size_t s = begin_section(wr, SNAP_AGENTS);
    write_table(wr, &w->agents);
    end_section(wr, s);
    for (int k = 0; k < COMP_COUNT_; ++k) {
        s = begin_section(wr, SNAP_COMPONENT);
        w_u32(wr, (uint32_t)k);
        write_table(wr, &w->comps[k].table);
        end_section(wr, s);
    }
    write_obstacles(wr, w);
    write_routes(wr, w);
    write_ground(wr, w);
    write_planner(wr, w);
    write_systems(wr, w);
    write_user(wr, w);
    uint64_t total = (uint64_t)wr->size + SNAP_CHECKSUM_BYTES;
    if (head) {
        memcpy(head, snap_magic, sizeof snap_magic);
        put_u32(head + 8, SHOAL_SNAPSHOT_VERSION);
        put_u32(head + 12, SNAP_HEADER_BYTES);
        put_u64(head + 16, total);
        put_u32(head + 24, SNAP_SECTION_COUNT);
        put_u32(head + 28, 0);
    }
    uint8_t* end = w_room(wr, SNAP_CHECKSUM_BYTES);
    if (end) put_u64(end, fnv1a(FNV1A_OFFSET, wr->data, (size_t)(end - wr->data)));
}

/* Saving is refused inside a step: commands may be queued and systems are
 * half way through the stages. */
static shoal_status_t check_saveable(const world_t* w, const char* where)
{
    if (w->in_step || w->command_count != 0 || w->pending_adds != 0)
        return world_failc(w, SHOAL_ERR_BUSY,
                           "%s: called from inside a step; save between steps", where);
    return SHOAL_OK;
}

shoal_status_t shoal_world_save_snapshot_memory(const shoal_world_t* w, void* buffer, size_t capacity,
                                                size_t* out_size)
{
    static const char* where = "world_save_snapshot_memory";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out_size) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out_size is NULL", where);
    shoal_status_t st = check_saveable(w, where);
    if (st != SHOAL_OK) return st;
    writer_t count = {NULL, 0, 0};
    encode(&count, w);
    *out_size = count.size;
    if (!buffer) return SHOAL_OK;
    if (capacity < count.size)
        return world_failc(w, SHOAL_ERR_CAPACITY,
                           "%s: the snapshot needs %zu bytes, the buffer holds %zu", where,
                           count.size, capacity);
    writer_t wr = {(uint8_t*)buffer, 0, capacity};
    encode(&wr, w);
    return SHOAL_OK;
}

shoal_status_t shoal_world_save_snapshot(const shoal_world_t* w, const char* path)
{
    static const char* where = "world_save_snapshot";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!path) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: path is NULL", where);
    shoal_status_t st = check_saveable(w, where);
    if (st != SHOAL_OK) return st;
    writer_t count = {NULL, 0, 0};
    encode(&count, w);
    uint8_t* data = (uint8_t*)mem_alloc(&w->alloc, count.size);
    if (!data)
        return world_failc(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", where,
                           count.size);
    writer_t wr = {data, 0, count.size};
    encode(&wr, w);
    char msg[480];
    int failed = atomic_write_file(path, data, wr.size, msg, sizeof msg);
    mem_free(&w->alloc, data, count.size);
    if (failed) return world_failc(w, SHOAL_ERR_IO, "%s: %s", where, msg);
    return SHOAL_OK;
}
