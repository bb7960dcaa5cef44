/* Snapshots, the reading half: bytes in the format of docs/snapshot.md to a
 * new world. The writer is snapshot.c.
 *
 * Decisions:
 * - Everything that can be judged from the bytes alone (magic, version,
 *   sizes, the checksum) is judged before a world exists. Then a world is
 *   created from the runtime half of the caller's definition and filled
 *   section by section; any fault destroys it, so a caller never sees a
 *   half-loaded world.
 * - A checksum only catches accidents; a forged file passes it. So every
 *   count is checked against the bytes left before anything is allocated,
 *   every index and link against what it points into, and every agent is
 *   read back as a definition and put through the same validation as
 *   shoal_agent_add, plus checks of the state columns no definition has
 *   (the planner's interval, the route cursor) and of every float being
 *   finite. Any bytes thus give a world the systems can step, or an error.
 * - Derived data is rebuilt rather than trusted: sparse indexes from the
 *   slot columns, path arc lengths by pf_path_build, the adaptive
 *   permutation from the seed. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ecs/columns.h"
#include "ecs/world.h"
#include "base/byte_io.h"
#include "io/file_read.h"
#include "io/snapshot_format.h"
#include "shoal/snapshot.h"
#include "modules/grid/grid.h"

static int begin_section(byte_reader_t* rd, size_t total, uint32_t tag, const char* name)
{
    rd->section = name;
    rd->end = total - SNAP_CHECKSUM_BYTES;
    uint32_t got = br_u32(rd);
    uint32_t zero = br_u32(rd);
    uint64_t bytes = br_u64(rd);
    if (rd->failed) return 0;
    if (got != tag) {
        char text[5] = {(char)got, (char)(got >> 8), (char)(got >> 16), (char)(got >> 24), 0};
        for (int i = 0; i < 4; ++i)
            if (text[i] < 32 || text[i] > 126) text[i] = '?';
        return br_fail(rd, "expected here (byte %zu), found tag '%s'", rd->off - SNAP_SECTION_BYTES, text);
    }
    if (zero != 0) return br_fail(rd, "reserved field is %u, expected 0", zero);
    if (bytes > br_left(rd))
        return br_fail(rd, "declares %llu bytes, only %zu are left", (unsigned long long)bytes, br_left(rd));
    rd->end = rd->off + (size_t)bytes;
    return 1;
}

static int end_section(byte_reader_t* rd)
{
    if (rd->failed) return 0;
    if (rd->off != rd->end) return br_fail(rd, "%zu bytes left unread", rd->end - rd->off);
    return 1;
}

/* ---- the world ---------------------------------------------------------- */

typedef struct world_head {
    shoal_world_def_t def;
    uint32_t tag;
    uint64_t step_count;
    double time;
    uint32_t has_grid;
    uint64_t steps_since_reorder;
    uint64_t next_id; /* version 11 on; before, found from the slots */
} world_head_t;

static int read_world(byte_reader_t* rd, const shoal_world_def_t* user, world_head_t* h)
{
    h->def = *user;
    shoal_world_def_t* d = &h->def;
    uint32_t dims = br_u32(rd), wrap = br_u32(rd);
    d->seed = br_u64(rd);
    h->tag = br_u32(rd);
    for (int k = 0; k < 3; ++k) d->bounds_min[k] = br_f32(rd);
    for (int k = 0; k < 3; ++k) d->bounds_max[k] = br_f32(rd);
    d->cell_size = br_f32(rd);
    d->reorder_interval = br_i32(rd);
    h->step_count = br_u64(rd);
    h->time = br_f64(rd);
    h->has_grid = br_u32(rd);
    h->steps_since_reorder = br_u64(rd);
    h->next_id = rd->version >= 11 ? br_u64(rd) : 0;
    if (!end_section(rd)) return 0;
    if (dims != 2 && dims != 3) return br_fail(rd, "dimensions must be 2 or 3, got %u", dims);
    if (wrap > 1) return br_fail(rd, "wrap must be 0 or 1, got %u", wrap);
    d->dimensions = (int32_t)dims;
    d->wrap = (int32_t)wrap;
    if (h->tag == 0 || h->tag > 0xffffu) return br_fail(rd, "handle tag must be in 1..65535, got %u", h->tag);
    if (!(isfinite(h->time) && h->time >= 0.0))
        return br_fail(rd, "time must be finite and >= 0 s, got %g", h->time);
    if (h->has_grid > 1) return br_fail(rd, "grid flag must be 0 or 1, got %u", h->has_grid);
    if (h->steps_since_reorder > (uint64_t)INT64_MAX)
        return br_fail(rd, "reorder phase %llu is out of range", (unsigned long long)h->steps_since_reorder);
    /* Unused axes of a 2D world are stored as 0: anything else is not a
     * world this library wrote. */
    for (int k = (int)dims; k < 3; ++k)
        if (d->bounds_min[k] != 0.0f || d->bounds_max[k] != 0.0f)
            return br_fail(rd, "bounds of axis %d must be 0 in a 2D world", k);
    /* Checked here too (shoal_world_create would), so that a failing
     * create can only be the caller's definition. */
    for (int k = 0; k < (int)dims; ++k) {
        if (!isfinite(d->bounds_min[k]) || !isfinite(d->bounds_max[k]))
            return br_fail(rd, "bounds of axis %d must be finite", k);
        if (wrap && !(d->bounds_max[k] > d->bounds_min[k]))
            return br_fail(rd, "with wrap, bounds_max[%d] must be > bounds_min[%d]", k, k);
    }
    if (!(isfinite(d->cell_size) && d->cell_size >= 0.0f))
        return br_fail(rd, "cell size must be finite and >= 0 m, got %g", (double)d->cell_size);
    if (d->reorder_interval < 0)
        return br_fail(rd, "reorder interval must be >= 0, got %d", (int)d->reorder_interval);
    return 1;
}

static int read_slots(byte_reader_t* rd, world_t* w)
{
    uint32_t high = br_u32(rd);
    uint32_t free_head = br_u32(rd);
    if (!br_count(rd, high, 16, INT32_MAX / 2, "slot count")) return 0;
    if ((int32_t)high > w->slot_capacity) {
        slot_t* fresh = (slot_t*)mem_calloc(&w->alloc, (size_t)high * sizeof(slot_t));
        if (!fresh) return br_fail(rd, "out of memory for %u slots", high);
        mem_free(&w->alloc, w->slots, (size_t)w->slot_capacity * sizeof(slot_t));
        w->slots = fresh;
        w->slot_capacity = (int32_t)high;
    }
    uint32_t free_count = 0;
    for (uint32_t i = 0; i < high; ++i) {
        slot_t* s = &w->slots[i];
        uint32_t generation = br_u32(rd), state = br_u32(rd);
        int32_t row = br_i32(rd);
        uint32_t next = br_u32(rd);
        if (rd->failed) return 0;
        if (generation == 0 || generation > 0xffffu)
            return br_fail(rd, "slot %u: generation must be in 1..65535, got %u", i, generation);
        if (state != SLOT_FREE && state != SLOT_LIVE)
            return br_fail(rd, "slot %u: state must be 0 (free) or 1 (live), got %u", i, state);
        s->generation = (uint16_t)generation;
        s->state = (uint8_t)state;
        s->remove_queued = 0;
        if (state == SLOT_LIVE) {
            if (row < 0 || next != 0)
                return br_fail(rd, "slot %u: a live slot needs a row >= 0 and link 0, got %d and %u", i,
                               (int)row, next);
            s->row = row;
            s->next_free = 0;
        } else {
            if (row != -1 || (next >= high && next != UINT32_MAX))
                return br_fail(rd,
                               "slot %u: a free slot needs row -1 and a link below %u (or none), "
                               "got %d and %u",
                               i, high, (int)row, next);
            s->row = -1;
            s->next_free = next;
            free_count++;
        }
    }
    if (!end_section(rd)) return 0;
    /* The free list must visit every free slot exactly once: a walk of
     * free_count free slots that then ends cannot repeat one (a repeat
     * would loop forever) and so covers them all. */
    uint32_t at = free_head;
    for (uint32_t n = 0; n < free_count; ++n) {
        if (at >= high || w->slots[at].state != SLOT_FREE)
            return br_fail(rd, "the free list reaches %u after %u links: not a free slot", at, n);
        at = w->slots[at].next_free;
    }
    if (at != UINT32_MAX)
        return br_fail(rd, "the free list does not end after the %u free slots", free_count);
    w->slot_high = (int32_t)high;
    w->free_head = free_head;
    return 1;
}

/* Columns of a table; the caller gave it room for `count` rows. */
/* Whether column c of a table is in files of `version` (mod: the
 * component's module, or NULL for the agent table). */
static int column_in(const module_t* mod, int32_t c, uint32_t version)
{
    return mod == NULL || column_in_version(mod, c, version);
}

static int read_columns_of(byte_reader_t* rd, table_t* t, int32_t count, const module_t* mod,
                           uint32_t version)
{
    for (int32_t c = 0; c < t->column_count; ++c) {
        if (t->elem_size[c] == 0) continue;
        if (!column_in(mod, c, version)) { /* appended later: 0 bits */
            if (count > 0) memset(t->columns[c], 0, (size_t)count * 4);
            continue;
        }
        const uint8_t* p = br_take(rd, (size_t)count * 4);
        if (!p) return 0;
        uint32_t* col = (uint32_t*)t->columns[c];
        for (int32_t i = 0; i < count; ++i) col[i] = get_u32(p + (size_t)i * 4);
    }
    t->count = count;
    return 1;
}

static int read_columns(byte_reader_t* rd, table_t* t, int32_t count)
{
    return read_columns_of(rd, t, count, NULL, 0);
}

static size_t used_columns_in(const table_t* t, const module_t* mod, uint32_t version)
{
    size_t n = 0;
    for (int32_t c = 0; c < t->column_count; ++c) n += t->elem_size[c] != 0 && column_in(mod, c, version);
    return n;
}

static size_t used_columns(const table_t* t) { return used_columns_in(t, NULL, 0); }

static int compare_u64(const void* a, const void* b)
{
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return (x > y) - (x < y);
}

/* Global ids: before version 11 files had none, and each agent takes its
 * slot's index (the order of adds, for a world that never removed one);
 * from 11 on every id is below the world's next id and none repeats. */
static int check_global_ids(byte_reader_t* rd, world_t* w, uint64_t next_id)
{
    table_t* t = &w->agents;
    if (rd->version < 11) {
        const uint32_t* slots = table_slots(t);
        for (int32_t r = 0; r < t->count; ++r) agent_set_global_id(w, r, slots[r]);
        w->next_id = (uint64_t)w->slot_high;
        return 1;
    }
    w->next_id = next_id;
    if (t->count == 0) return 1;
    size_t bytes = (size_t)t->count * sizeof(uint64_t);
    uint64_t* ids = (uint64_t*)mem_alloc(&w->alloc, bytes);
    if (!ids) return br_fail(rd, "out of memory checking %d agent ids", (int)t->count);
    for (int32_t r = 0; r < t->count; ++r) ids[r] = agent_global_id(w, r);
    qsort(ids, (size_t)t->count, sizeof *ids, compare_u64);
    int ok = 1;
    for (int32_t r = 0; ok && r < t->count; ++r) {
        if (ids[r] >= next_id)
            ok = br_fail(rd, "agent id %llu is not below the world's next id %llu",
                         (unsigned long long)ids[r], (unsigned long long)next_id);
        else if (r > 0 && ids[r] == ids[r - 1])
            ok = br_fail(rd, "two agents have the id %llu", (unsigned long long)ids[r]);
    }
    mem_free(&w->alloc, ids, bytes);
    return ok;
}

/* The global-id map from the loaded rows (the ids are checked unique). */
static int index_global_ids(byte_reader_t* rd, world_t* w)
{
    const table_t* t = &w->agents;
    if (!id_map_reserve(&w->ids, &w->alloc, (uint64_t)t->count))
        return br_fail(rd, "out of memory for the ids of %d agents", (int)t->count);
    const uint32_t* slots = table_slots(t);
    for (int32_t r = 0; r < t->count; ++r) id_map_put(&w->ids, agent_global_id(w, r), slots[r]);
    return 1;
}

static int read_agents(byte_reader_t* rd, world_t* w, uint64_t next_id)
{
    table_t* t = &w->agents;
    uint32_t count = br_u32(rd), columns = br_u32(rd);
    if (rd->failed) return 0;
    /* files before version 11 end the table before the id columns */
    int32_t in_file = rd->version >= 11 ? t->column_count : AC_ID_LO;
    if (columns != (uint32_t)in_file)
        return br_fail(rd, "%u agent columns, version %u has %d", columns, rd->version, (int)in_file);
    int32_t all = t->column_count;
    t->column_count = in_file;
    size_t used = used_columns(t);
    t->column_count = all;
    if (!br_count(rd, count, used * 4, INT32_MAX / 2, "agent count")) return 0;
    if (!table_reserve(t, &w->alloc, (int32_t)count) || !world_reserve_row_mask(w))
        return br_fail(rd, "out of memory for %u agents", count);
    t->column_count = in_file;
    int read = read_columns(rd, t, (int32_t)count);
    t->column_count = all;
    if (!read) return 0;
    if (!end_section(rd)) return 0;
    /* Rows and live slots must map one to one. */
    int32_t live = 0;
    for (int32_t s = 0; s < w->slot_high; ++s) live += w->slots[s].state == SLOT_LIVE;
    if (live != (int32_t)count) return br_fail(rd, "%u agents but %d live slots", count, (int)live);
    const uint32_t* slots = table_slots(t);
    for (int32_t r = 0; r < (int32_t)count; ++r) {
        uint32_t s = slots[r];
        if (s >= (uint32_t)w->slot_high || w->slots[s].state != SLOT_LIVE || w->slots[s].row != r)
            return br_fail(rd, "agent row %d names slot %u, which is not a live slot of that row", (int)r, s);
    }
    return check_global_ids(rd, w, next_id) && index_global_ids(rd, w);
}

static int read_component(byte_reader_t* rd, world_t* w, int k, int32_t file_index, uint32_t version)
{
    component_t* comp = &w->comps[k];
    table_t* t = &comp->table;
    const module_t* mod = w->comp_module[k];
    uint32_t id = br_u32(rd), count = br_u32(rd), columns = br_u32(rd);
    if (rd->failed) return 0;
    if (id != (uint32_t)file_index)
        return br_fail(rd, "component %u where component %d was expected", id, (int)file_index);
    uint32_t expected = 0;
    for (int32_t c = 0; c < t->column_count; ++c) expected += column_in(mod, c, version);
    if (columns != expected)
        return br_fail(rd, "component %d: %u columns, version %u has %u", k, columns, version, expected);
    if (!br_count(rd, count, used_columns_in(t, mod, version) * 4, (uint32_t)w->agents.count,
                  "component rows"))
        return 0;
    if (!component_reserve_slots(comp, &w->alloc, w->slot_capacity) ||
        !table_reserve_within(t, &w->alloc, (int32_t)count, w->agents.capacity))
        return br_fail(rd, "out of memory for %u rows of component %d", count, k);
    if (!read_columns_of(rd, t, (int32_t)count, mod, version)) return 0;
    if (!end_section(rd)) return 0;
    const uint32_t* slots = table_slots(t);
    const int32_t* rows = TABLE_COL(t, int32_t, COMP_ROW);
    for (int32_t r = 0; r < (int32_t)count; ++r) {
        uint32_t s = slots[r];
        if (s >= (uint32_t)w->slot_high || w->slots[s].state != SLOT_LIVE)
            return br_fail(rd, "component %d row %d names slot %u, not a live agent", k, (int)r, s);
        if (comp->sparse[s] >= 0)
            return br_fail(rd, "component %d: slot %u has two rows (%d and %d)", k, s, (int)comp->sparse[s],
                           (int)r);
        if (rows[r] != w->slots[s].row)
            return br_fail(rd, "component %d row %d: agent row %d, but slot %u is at row %d", k, (int)r,
                           (int)rows[r], s, (int)w->slots[s].row);
        comp->sparse[s] = r;
    }
    return 1;
}

/* Files before version 13 stored a reference to another agent (module.h's
 * COLUMNS_AGENT_ID) as a handle: index1, then the saved world's tag << 16 |
 * generation. Each becomes what a reference is stored as now, the global
 * id + 1 of the agent the handle names, or 0 when it names none (null, of
 * another world, or an agent already gone when the file was saved: a
 * stale handle, which then named no agent, as 0 does now). */
static void convert_stored_handles(world_t* w, uint32_t saved_tag)
{
    for (int k = 0; k < w->comp_count; ++k) {
        const module_t* mod = w->comp_module[k];
        table_t* t = &w->comps[k].table;
        for (int32_t c = COMP_ROW + 1; c + 1 < t->column_count; ++c) {
            if (mod->columns[c].type != COLUMN_AGENT_ID_LO) continue;
            uint32_t* lo = (uint32_t*)t->columns[c];
            uint32_t* hi = (uint32_t*)t->columns[c + 1];
            for (int32_t r = 0; r < t->count; ++r) {
                uint32_t index1 = lo[r], tag = hi[r];
                uint64_t stored = 0;
                if (index1 != 0 && index1 - 1 < (uint32_t)w->slot_high && tag >> 16 == saved_tag) {
                    const slot_t* s = &w->slots[index1 - 1];
                    if (s->state == SLOT_LIVE && s->generation == (tag & 0xffffu))
                        stored = agent_global_id(w, s->row) + 1;
                }
                lo[r] = (uint32_t)stored;
                hi[r] = (uint32_t)(stored >> 32);
            }
        }
    }
}

/* A reference names an id that was given (below the next id), or none:
 * one at or past it would name an agent yet to be added. */
static int check_stored_ids(byte_reader_t* rd, const world_t* w)
{
    rd->section = "COMP";
    for (int k = 0; k < w->comp_count; ++k) {
        const module_t* mod = w->comp_module[k];
        const table_t* t = &w->comps[k].table;
        for (int32_t c = COMP_ROW + 1; c + 1 < t->column_count; ++c) {
            if (mod->columns[c].type != COLUMN_AGENT_ID_LO) continue;
            const uint32_t* lo = (const uint32_t*)t->columns[c];
            const uint32_t* hi = (const uint32_t*)t->columns[c + 1];
            for (int32_t r = 0; r < t->count; ++r) {
                uint64_t stored = (uint64_t)hi[r] << 32 | lo[r];
                if (stored != 0 && stored - 1 >= w->next_id)
                    return br_fail(rd,
                                   "component %d row %d: %s names agent id %llu, not below the next id %llu",
                                   k, (int)r, mod->columns[c].name, (unsigned long long)(stored - 1),
                                   (unsigned long long)w->next_id);
            }
        }
    }
    return 1;
}

/* Whether a built-in system of this version is listed in files of `version`. */
static int system_in_version(const world_t* w, const char* name, uint32_t version)
{
    const registry_t* reg = w->registry;
    for (int32_t k = 0; k < reg->system_count; ++k)
        if (strcmp(reg->systems[k].name, name) == 0)
            return (reg->systems[k].snapshot_since ? reg->systems[k].snapshot_since : 1u) <= version;
    return 1;
}

static int read_systems(byte_reader_t* rd, world_t* w, uint32_t version)
{
    uint32_t count = br_u32(rd);
    if (!br_count(rd, count, SNAP_NAME_BYTES + 12, WORLD_MAX_SYSTEMS, "system count")) return 0;
    int32_t builtin = 0, expected = 0;
    for (int32_t i = 0; i < w->system_count; ++i)
        expected += !system_is_user(&w->systems[i]) && system_in_version(w, w->systems[i].name, version);
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t* raw = br_take(rd, SNAP_NAME_BYTES);
        uint32_t stage = br_u32(rd), enabled = br_u32(rd), user = br_u32(rd);
        if (rd->failed) return 0;
        char name[SNAP_NAME_BYTES];
        memcpy(name, raw, sizeof name);
        if (name[SNAP_NAME_BYTES - 1] != '\0' || name[0] == '\0')
            return br_fail(rd, "system %u: the name is empty or not NUL-terminated", i);
        if (enabled > 1 || user > 1 || stage >= SHOAL_STAGE_COUNT_)
            return br_fail(rd, "system '%s': stage %u, enabled %u, user %u out of range", name, stage,
                           enabled, user);
        if (user) continue; /* user systems are the caller's to add again */
        /* Systems of earlier versions whose work is now done otherwise:
         * control and integrate leave ground vehicles and planner agents
         * out instead of these zeroing their rows. */
        if (strcmp(name, "ground_control") == 0 || strcmp(name, "planner_control") == 0) continue;
        system_t* found = NULL;
        for (int32_t k = 0; k < w->system_count; ++k)
            if (strcmp(w->systems[k].name, name) == 0) found = &w->systems[k];
        if (!found || system_is_user(found) || (uint32_t)found->stage != stage)
            return br_fail(rd, "built-in system '%s' (stage %u) does not exist in this version", name, stage);
        found->enabled = (int32_t)enabled;
        builtin++;
    }
    if (!end_section(rd)) return 0;
    if (builtin != expected)
        return br_fail(rd, "%d built-in systems listed, this version has %d", (int)builtin, (int)expected);
    return 1;
}

/* User components: each added to the world as its description says (the
 * same checks as shoal_world_add_component), then its column read. */
static int read_user(byte_reader_t* rd, world_t* w)
{
    uint32_t count = br_u32(rd);
    if (!br_count(rd, count, SNAP_NAME_BYTES + 12, SHOAL_MAX_USER_COMPONENTS, "user component count"))
        return 0;
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t* raw = br_take(rd, SNAP_NAME_BYTES);
        uint32_t type = br_u32(rd), width = br_u32(rd);
        if (rd->failed) return 0;
        char name[SNAP_NAME_BYTES];
        memcpy(name, raw, sizeof name);
        if (name[SNAP_NAME_BYTES - 1] != '\0')
            return br_fail(rd, "user component %u: the name is not NUL-terminated", i);
        if (type < SHOAL_COLUMN_F32 || type > SHOAL_COLUMN_U64 || width < 1 || width > 16)
            return br_fail(rd, "user component %u: type %u, width %u out of range", i, type, width);
        uint32_t words = width * (type == SHOAL_COLUMN_U64 ? 2u : 1u);
        uint32_t def_words[32];
        for (uint32_t k = 0; k < words; ++k) def_words[k] = br_u32(rd);
        if (rd->failed) return 0;
        shoal_component_def_t cdef = {name, (shoal_column_type_t)type, (int32_t)width, def_words};
        if (shoal_world_add_component(w, &cdef) != SHOAL_OK)
            return br_fail(rd, "user component %u: %s", i, w->error);
        uint64_t n = (uint64_t)w->agents.count * words;
        if (n * 4 > br_left(rd))
            return br_fail(rd, "user component '%s': %llu words, only %zu bytes left", name,
                           (unsigned long long)n, br_left(rd));
        uint32_t* col = (uint32_t*)w->user.columns[w->user_count];
        for (uint64_t k = 0; k < n; ++k) col[k] = br_u32(rd);
    }
    return end_section(rd);
}

/* ---- validation of the agents --------------------------------------------- */

/* Integer columns (int32 or uint32) of each component; the rest are floats,
 * which must be finite. */
/* Columns that hold no float to check: the slot and agent row, and those
 * their module flags (COLUMN_BITS: integers, bit patterns, statistics). */
static int column_is_int(const world_t* w, int k, int c)
{
    if (c == 0 || c == COMP_ROW) return 1;
    return (column_flags(w->comp_module[k], c) & COLUMN_BITS) != 0;
}

static int agent_column_is_int(int c)
{
    return c == AC_SLOT || c == AC_GROUP || c == AC_USER_LO || c == AC_USER_HI || c == AC_ID_LO ||
           c == AC_ID_HI;
}

static int check_floats(byte_reader_t* rd, const world_t* w)
{
    rd->section = "AGNT";
    const table_t* t = &w->agents;
    for (int c = 0; c < t->column_count; ++c) {
        if (t->elem_size[c] == 0 || agent_column_is_int(c)) continue;
        const float* v = (const float*)t->columns[c];
        for (int32_t r = 0; r < t->count; ++r)
            if (!isfinite(v[r]))
                return br_fail(rd, "agent row %d (slot %u), column %d is not finite", (int)r,
                               table_slots(t)[r], c);
    }
    rd->section = "COMP";
    for (int k = 0; k < w->comp_count; ++k) {
        const table_t* ct = &w->comps[k].table;
        for (int c = 0; c < ct->column_count; ++c) {
            if (column_is_int(w, k, c)) continue;
            const float* v = (const float*)ct->columns[c];
            for (int32_t r = 0; r < ct->count; ++r)
                if (!isfinite(v[r]))
                    return br_fail(rd, "component %d row %d (slot %u), column %d is not finite", k, (int)r,
                                   table_slots(ct)[r], c);
        }
    }
    return 1;
}

/* State columns that no definition carries, each module's own check. */
static int check_state(byte_reader_t* rd, const world_t* w)
{
    rd->section = "COMP";
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->check_loaded && !mod->check_loaded(w, rd)) return 0;
    }
    return 1;
}

/* Every agent as a definition, through shoal_agent_add's validation, and
 * its components exactly those its definition needs. */
static int check_agents(byte_reader_t* rd, world_t* w)
{
    rd->section = "AGNT";
    for (int32_t r = 0; r < w->agents.count; ++r) {
        uint32_t s = table_slots(&w->agents)[r];
        shoal_agent_t id = {s + 1, w->tag, w->slots[s].generation};
        shoal_agent_def_t def;
        if (shoal_agent_get_def(w, id, &def) != SHOAL_OK || agent_validate_def(w, &def, "agent") != SHOAL_OK)
            return br_fail(rd, "agent row %d (slot %u): %s", (int)r, s, w->error);
        for (int k = 0; k < w->comp_count; ++k)
            if (agent_needs_component(w, &def, k) != (component_row(&w->comps[k], s) >= 0))
                return br_fail(rd, "agent row %d (slot %u): component %d %s", (int)r, s, k,
                               agent_needs_component(w, &def, k) ? "is missing"
                                                                 : "is not used by its weights");
    }
    return 1;
}

/* ---- loading ---------------------------------------------------------------- */


static shoal_status_t load(const uint8_t* p, size_t size, const char* source, const shoal_world_def_t* def,
                           const registry_t* reg, shoal_world_t** out, shoal_error_t* err)
{
    /* The frame of the file, all judged before anything is built. */
    size_t have = size < sizeof snap_magic ? size : sizeof snap_magic;
    if (size == 0 || memcmp(p, snap_magic, have) != 0)
        return error_set(err, SHOAL_ERR_PARSE, "%s: not a shoal snapshot (bad magic)", source);
    const size_t min = SNAP_HEADER_BYTES + SNAP_CHECKSUM_BYTES;
    if (size < min)
        return error_set(err, SHOAL_ERR_PARSE, "%s: truncated: %zu bytes, a snapshot has at least %zu",
                         source, size, min);
    uint32_t version = get_u32(p + 8);
    if (version < 1 || version > SHOAL_SNAPSHOT_VERSION)
        return error_set(err, SHOAL_ERR_PARSE, "%s: snapshot version %u; this library reads versions 1 to %d",
                         source, version, SHOAL_SNAPSHOT_VERSION);
    uint32_t sections = snap_section_count(reg, version);
    uint64_t declared = get_u64(p + 16);
    if (declared != size)
        return error_set(err, SHOAL_ERR_PARSE, "%s: %s: the header says %llu bytes, there are %zu", source,
                         declared > size ? "truncated" : "trailing bytes", (unsigned long long)declared,
                         size);
    uint64_t stored = get_u64(p + size - SNAP_CHECKSUM_BYTES);
    uint64_t computed = fnv1a(FNV1A_OFFSET, p, size - SNAP_CHECKSUM_BYTES);
    if (stored != computed)
        return error_set(err, SHOAL_ERR_PARSE,
                         "%s: checksum mismatch (stored %016llx, computed %016llx): the file is damaged",
                         source, (unsigned long long)stored, (unsigned long long)computed);
    if (get_u32(p + 12) != SNAP_HEADER_BYTES || get_u32(p + 24) != sections || get_u32(p + 28) != 0)
        return error_set(err, SHOAL_ERR_PARSE,
                         "%s: header: %u header bytes, %u sections, flags %u; expected %u, %u and 0", source,
                         get_u32(p + 12), get_u32(p + 24), get_u32(p + 28), SNAP_HEADER_BYTES, sections);

    byte_reader_t rd;
    memset(&rd, 0, sizeof rd);
    rd.p = p;
    rd.off = SNAP_HEADER_BYTES;
    rd.version = version;
    shoal_world_def_t user = def ? *def : shoal_world_default_def();
    world_head_t head;
    if (!begin_section(&rd, size, SNAP_WORLD, "WRLD") || !read_world(&rd, &user, &head))
        return error_set(err, SHOAL_ERR_PARSE, "%s: %s", source, rd.msg);
    shoal_world_t* w = NULL;
    shoal_error_t cerr;
    shoal_status_t st = world_create_with(&head.def, reg, &w, &cerr);
    if (st != SHOAL_OK) return error_set(err, st, "%s: %s", source, cerr.message);
    world_tag_adopt(w, (uint16_t)head.tag); /* or a fresh tag when a live world holds it */
    w->step_count = head.step_count;
    w->time = head.time;
    /* the reorder phase follows from the step count restored above */
    if (head.has_grid) grid_note_built(w);
    int ok = !rd.failed && begin_section(&rd, size, SNAP_SLOTS, "SLOT") && read_slots(&rd, w) &&
             begin_section(&rd, size, SNAP_AGENTS, "AGNT") && read_agents(&rd, w, head.next_id);
    /* One COMP per component the file's version has (numbered among
     * those), then each module's own section in registry order. */
    int32_t file_component = 0;
    for (int k = 0; ok && k < w->comp_count; ++k) {
        if (!snap_module_in(w->comp_module[k], version)) continue;
        ok = begin_section(&rd, size, SNAP_COMPONENT, "COMP") &&
             read_component(&rd, w, k, file_component++, version);
    }
    for (int32_t m = 0; ok && m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (!mod->load || !snap_module_in(mod, version)) continue;
        char name[5] = {(char)mod->snapshot_tag, (char)(mod->snapshot_tag >> 8),
                        (char)(mod->snapshot_tag >> 16), (char)(mod->snapshot_tag >> 24), 0};
        ok = begin_section(&rd, size, mod->snapshot_tag, name) && mod->load(w, &rd) && end_section(&rd);
        rd.section = "";
    }
    ok = ok && begin_section(&rd, size, SNAP_SYSTEMS, "SYST") && read_systems(&rd, w, version);
    if (version >= 2) ok = ok && begin_section(&rd, size, SNAP_USER, "USER") && read_user(&rd, w);
    if (ok && rd.off != size - SNAP_CHECKSUM_BYTES) {
        ok = br_fail(&rd, "%zu bytes between the last section and the checksum",
                     size - SNAP_CHECKSUM_BYTES - rd.off);
    }
    if (ok && version < 13) convert_stored_handles(w, head.tag);
    ok =
        ok && check_floats(&rd, w) && check_stored_ids(&rd, w) && check_state(&rd, w) && check_agents(&rd, w);
    if (!ok) {
        shoal_status_t status = strstr(rd.msg, "out of memory") ? SHOAL_ERR_OUT_OF_MEMORY : SHOAL_ERR_PARSE;
        shoal_world_destroy(w);
        return error_set(err, status, "%s: %s", source, rd.msg);
    }
    agent_params_rescan(w);
    w->error[0] = '\0';
    *out = w;
    return SHOAL_OK;
}

shoal_status_t shoal_world_load_snapshot_memory(const void* data, size_t size, const shoal_world_def_t* def,
                                                shoal_world_t** out_world, shoal_error_t* err)
{
    error_set(err, SHOAL_OK, "%s", "");
    if (!out_world)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot_memory: out_world is NULL");
    *out_world = NULL;
    if (!data && size > 0)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot_memory: data is NULL");
    return load((const uint8_t*)data, size, "snapshot", def, builtin_registry(), out_world, err);
}

shoal_status_t snapshot_load_memory_with(const void* data, size_t size, const shoal_world_def_t* def,
                                         const registry_t* registry, shoal_world_t** out_world,
                                         shoal_error_t* err)
{
    error_set(err, SHOAL_OK, "%s", "");
    if (!out_world || !data || !registry)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot_memory: a NULL argument");
    *out_world = NULL;
    return load((const uint8_t*)data, size, "snapshot", def, registry, out_world, err);
}

shoal_status_t shoal_world_load_snapshot(const char* path, const shoal_world_def_t* def,
                                         shoal_world_t** out_world, shoal_error_t* err)
{
    error_set(err, SHOAL_OK, "%s", "");
    if (!out_world)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot: out_world is NULL");
    *out_world = NULL;
    if (!path) return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot: path is NULL");
    /* A regular file of at most 4 GiB, opened without blocking
     * (io/file_read.h). */
    void* data = NULL;
    size_t size = 0;
    char msg[256];
    file_read_error_t e = file_read_all(path, FILE_LIMIT_SNAPSHOT, &data, &size, msg, sizeof msg);
    if (e != FILE_READ_OK)
        return error_set(err,
                         e == FILE_READ_TOO_LARGE   ? SHOAL_ERR_CAPACITY
                         : e == FILE_READ_NO_MEMORY ? SHOAL_ERR_OUT_OF_MEMORY
                                                    : SHOAL_ERR_IO,
                         "%s: %s", path, msg);
    shoal_status_t st = load((const uint8_t*)data, size, path, def, builtin_registry(), out_world, err);
    free(data);
    return st;
}
