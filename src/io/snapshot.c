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
#include "base/byte_io.h"
#include "io/snapshot_format.h"
#include "shoal/snapshot.h"
#include "modules/grid/grid.h"

static size_t begin_section(byte_writer_t* wr, uint32_t tag)
{
    bw_u32(wr, tag);
    bw_u32(wr, 0);
    bw_u64(wr, 0); /* payload bytes, patched by end_section */
    return wr->size;
}

static void end_section(byte_writer_t* wr, size_t payload_start)
{
    if (wr->data && wr->size <= wr->capacity)
        put_u64(wr->data + payload_start - 8, (uint64_t)(wr->size - payload_start));
}

static void write_world(byte_writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_WORLD);
    bw_u32(wr, (uint32_t)w->dims);
    bw_u32(wr, (uint32_t)w->wrap);
    bw_u64(wr, w->seed);
    bw_u32(wr, w->tag);
    for (int k = 0; k < 3; ++k) bw_f32(wr, w->bounds_min[k]);
    for (int k = 0; k < 3; ++k) bw_f32(wr, w->bounds_max[k]);
    bw_f32(wr, w->cell_size);
    bw_i32(wr, w->reorder_interval);
    bw_u64(wr, w->step_count);
    bw_f64(wr, w->time);
    /* The spatial hash's reorder phase: steps since the last reorder. The
     * reorder is keyed to the step count, so this is informative (the
     * loader checks it and needs nothing else); the grid itself is rebuilt
     * by every sense stage. */
    bw_u32(wr, grid_data(w) != NULL);
    bw_u64(wr, grid_data(w) && w->reorder_interval > 0 ? w->step_count % (uint64_t)w->reorder_interval : 0u);
    bw_u64(wr, w->next_id); /* version 11 on */
    end_section(wr, s);
}

static void write_slots(byte_writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_SLOTS);
    bw_u32(wr, (uint32_t)w->slot_high);
    bw_u32(wr, w->free_head);
    for (int32_t i = 0; i < w->slot_high; ++i) {
        const slot_t* sl = &w->slots[i];
        int live = sl->state == SLOT_LIVE;
        bw_u32(wr, sl->generation);
        bw_u32(wr, sl->state);
        bw_i32(wr, live ? sl->row : -1);
        bw_u32(wr, live ? 0u : sl->next_free);
    }
    end_section(wr, s);
}

static void write_table(byte_writer_t* wr, const table_t* t)
{
    bw_u32(wr, (uint32_t)t->count);
    bw_u32(wr, (uint32_t)t->column_count);
    for (int32_t c = 0; c < t->column_count; ++c)
        if (t->elem_size[c] != 0) bw_words(wr, t->columns[c], t->count);
}

static void write_systems(byte_writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_SYSTEMS);
    bw_u32(wr, (uint32_t)w->system_count);
    for (int32_t i = 0; i < w->system_count; ++i) {
        const system_t* sy = &w->systems[i];
        char name[SNAP_NAME_BYTES];
        memset(name, 0, sizeof name);
        size_t len = strlen(sy->name); /* < SYSTEM_NAME_MAX = SNAP_NAME_BYTES */
        memcpy(name, sy->name, len < SNAP_NAME_BYTES ? len : SNAP_NAME_BYTES - 1);
        bw_bytes(wr, name, sizeof name);
        bw_u32(wr, (uint32_t)sy->stage);
        bw_u32(wr, sy->enabled != 0);
        bw_u32(wr, system_is_user(sy)); /* listed, not restored */
    }
    end_section(wr, s);
}

/* User components: their descriptions, then each column of every agent row
 * as 4-byte words (a u64 is its low word, then its high word). */
static void write_user(byte_writer_t* wr, const world_t* w)
{
    size_t s = begin_section(wr, SNAP_USER);
    bw_u32(wr, (uint32_t)w->user_count);
    for (int32_t c = 0; c < w->user_count; ++c) {
        const user_column_t* u = &w->user_cols[c];
        char name[SNAP_NAME_BYTES];
        memset(name, 0, sizeof name);
        memcpy(name, u->name, strlen(u->name)); /* at most 31 characters */
        bw_bytes(wr, name, sizeof name);
        bw_u32(wr, (uint32_t)u->type);
        bw_u32(wr, (uint32_t)u->width);
        bw_words(wr, u->default_value, u->elem_size / 4);
        bw_words(wr, w->user.columns[c + 1], (int32_t)((size_t)w->agents.count * u->elem_size / 4));
    }
    end_section(wr, s);
}

static void encode(byte_writer_t* wr, const world_t* w)
{
    uint8_t* head = bw_room(wr, SNAP_HEADER_BYTES);
    write_world(wr, w);
    write_slots(wr, w);
    size_t s = begin_section(wr, SNAP_AGENTS);
    write_table(wr, &w->agents);
    end_section(wr, s);
    for (int k = 0; k < w->comp_count; ++k) {
        s = begin_section(wr, SNAP_COMPONENT);
        bw_u32(wr, (uint32_t)k);
        write_table(wr, &w->comps[k].table);
        end_section(wr, s);
    }
    /* Module-wide data, each module's own section, in registry order. */
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (!mod->save) continue;
        s = begin_section(wr, mod->snapshot_tag);
        mod->save(w, wr);
        end_section(wr, s);
    }
    write_systems(wr, w);
    write_user(wr, w);
    uint64_t total = (uint64_t)wr->size + SNAP_CHECKSUM_BYTES;
    if (head) {
        memcpy(head, snap_magic, sizeof snap_magic);
        put_u32(head + 8, SHOAL_SNAPSHOT_VERSION);
        put_u32(head + 12, SNAP_HEADER_BYTES);
        put_u64(head + 16, total);
        put_u32(head + 24, snap_section_count(w->registry, SHOAL_SNAPSHOT_VERSION));
        put_u32(head + 28, 0);
    }
    uint8_t* end = bw_room(wr, SNAP_CHECKSUM_BYTES);
    if (end) put_u64(end, fnv1a(FNV1A_OFFSET, wr->data, (size_t)(end - wr->data)));
}

/* Saving is refused inside a step: commands may be queued and systems are
 * half way through the stages. */
static shoal_status_t check_saveable(const world_t* w, const char* where)
{
    if (w->in_step || w->command_count != 0 || w->pending_adds != 0)
        return world_failc(w, SHOAL_ERR_BUSY, "%s: called from inside a step; save between steps", where);
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
    byte_writer_t count = {NULL, 0, 0};
    encode(&count, w);
    *out_size = count.size;
    if (!buffer) return SHOAL_OK;
    if (capacity < count.size)
        return world_failc(w, SHOAL_ERR_CAPACITY, "%s: the snapshot needs %zu bytes, the buffer holds %zu",
                           where, count.size, capacity);
    byte_writer_t wr = {(uint8_t*)buffer, 0, capacity};
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
    byte_writer_t count = {NULL, 0, 0};
    encode(&count, w);
    uint8_t* data = (uint8_t*)mem_alloc(&w->alloc, count.size);
    if (!data)
        return world_failc(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", where, count.size);
    byte_writer_t wr = {data, 0, count.size};
    encode(&wr, w);
    char msg[480];
    int failed = atomic_write_file(path, data, wr.size, msg, sizeof msg);
    mem_free(&w->alloc, data, count.size);
    if (failed) return world_failc(w, SHOAL_ERR_IO, "%s: %s", where, msg);
    return SHOAL_OK;
}
