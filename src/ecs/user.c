/* The extension API's core half (include/shoal/extend.h): user components,
 * zero-copy column access, row handles and the structural version.
 *
 * User components sit in a table of their own (w->user) whose row i is
 * agent row i: the agent table's adds, swap-removes and reorders are
 * mirrored on it (agent.c calls user_push, user_swap_remove and
 * user_permute). Nothing of it exists until the first component is added,
 * so worlds without user components keep their memory per agent and their
 * state hash. */
#include <string.h>

#include "ecs/world.h"

static uint16_t type_size(shoal_column_type_t t) { return t == SHOAL_COLUMN_U64 ? 8 : 4; }

uint64_t shoal_world_structure_version(const shoal_world_t* w) { return w ? w->structure_version : 0; }

int32_t shoal_world_component_count(const shoal_world_t* w) { return w ? w->user_count : 0; }

/* Grow the user table (and the reorder's scratch) to `capacity` rows; all
 * or nothing. Nothing to do without user components. */
int user_reserve(world_t* w, int32_t capacity)
{
    if (w->user_count == 0) return 1;
    if (!table_reserve(&w->user, &w->alloc, capacity)) return 0;
    size_t need = (size_t)w->user.capacity * table_widest(&w->user);
    if (need > w->user_scratch_size) {
        void* fresh = mem_alloc(&w->alloc, need);
        if (!fresh) return 0;
        mem_free(&w->alloc, w->user_scratch, w->user_scratch_size);
        w->user_scratch = fresh;
        w->user_scratch_size = need;
    }
    return 1;
}

static void write_defaults(world_t* w, int32_t row)
{
    for (int32_t c = 0; c < w->user_count; ++c) {
        const user_column_t* u = &w->user_cols[c];
        memcpy((char*)w->user.columns[c + 1] + (size_t)row * u->elem_size, u->default_value, u->elem_size);
    }
}

void user_push(world_t* w, uint32_t slot)
{
    if (w->user_count == 0) return;
    write_defaults(w, table_push(&w->user, slot));
}

void user_swap_remove(world_t* w, int32_t row)
{
    if (w->user_count > 0) table_swap_remove(&w->user, row);
}

void user_permute(world_t* w, const int32_t* perm)
{
    if (w->user_count > 0) table_permute(&w->user, perm, w->user_scratch);
}

void user_release(world_t* w)
{
    table_release(&w->user, &w->alloc);
    mem_free(&w->alloc, w->user_scratch, w->user_scratch_size);
    w->user_scratch = NULL;
    w->user_scratch_size = 0;
}

/* ---- columns by name ---------------------------------------------------- */

typedef struct builtin_column_t {
    const char* name;
    int32_t column;
    int32_t writable;
} builtin_column_t;

static const builtin_column_t builtin_columns[] = {
    {"position.x", AC_POS_X, 0},
    {"position.y", AC_POS_Y, 0},
    {"position.z", AC_POS_Z, 0},
    {"velocity.x", AC_VEL_X, 0},
    {"velocity.y", AC_VEL_Y, 0},
    {"velocity.z", AC_VEL_Z, 0},
    {"heading", AC_HEADING, 0},
    {"orientation.w", AC_QW, 0},
    {"orientation.x", AC_QX, 0},
    {"orientation.y", AC_QY, 0},
    {"orientation.z", AC_QZ, 0},
    {"angular_velocity.x", AC_OMEGA_X, 0},
    {"angular_velocity.y", AC_OMEGA_Y, 0},
    {"angular_velocity.z", AC_OMEGA_Z, 0},
    {"target.x", AC_TARGET_X, 0},
    {"target.y", AC_TARGET_Y, 0},
    {"target.z", AC_TARGET_Z, 0},
    {"threat.x", AC_THREAT_X, 0},
    {"threat.y", AC_THREAT_Y, 0},
    {"threat.z", AC_THREAT_Z, 0},
    {"max_speed", AC_MAX_SPEED, 0},
    {"radius", AC_RADIUS, 0},
    {"group", AC_GROUP, 0},
    {"desired.x", AC_DESIRED_X, 1},
    {"desired.y", AC_DESIRED_Y, 1},
    {"desired.z", AC_DESIRED_Z, 1},
};

static const builtin_column_t* find_builtin(const char* name)
{
    for (size_t i = 0; i < sizeof builtin_columns / sizeof builtin_columns[0]; ++i)
        if (strcmp(builtin_columns[i].name, name) == 0) return &builtin_columns[i];
    return NULL;
}

shoal_status_t shoal_world_column(shoal_world_t* w, const char* name, shoal_column_t* out)
{
    static const char* where = "world_column";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!name) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: name is NULL", where);
    if (!out) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out_column is NULL", where);
    memset(out, 0, sizeof *out);
    out->count = w->agents.count;
    out->width = 1;
    out->version = w->structure_version;
    const builtin_column_t* b = find_builtin(name);
    if (b) {
        if (!agent_column_used(w->dims, b->column))
            return world_fail(w, SHOAL_ERR_NOT_FOUND, "%s: column '%s' exists in 3D worlds only", where,
                              name);
        out->data = w->agents.columns[b->column];
        out->type = b->column == AC_GROUP ? SHOAL_COLUMN_U32 : SHOAL_COLUMN_F32;
        out->writable = b->writable;
        return SHOAL_OK;
    }
    for (int32_t c = 0; c < w->user_count; ++c) {
        const user_column_t* u = &w->user_cols[c];
        if (strcmp(u->name, name) != 0) continue;
        out->data = w->user.columns[c + 1];
        out->type = u->type;
        out->width = u->width;
        out->writable = 1;
        return SHOAL_OK;
    }
    return world_fail(w, SHOAL_ERR_NOT_FOUND,
                      "%s: no column named '%s' (built-in columns such as position.x, velocity.x, "
                      "heading, desired.x, or a user component)",
                      where, name);
}

shoal_status_t shoal_world_row_handles(const shoal_world_t* w, int32_t first, int32_t count,
                                       shoal_agent_t* out)
{
    static const char* where = "world_row_handles";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out && count > 0) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out is NULL", where);
    if (first < 0 || count < 0 || first > w->agents.count - count)
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT,
                           "%s: rows %d .. %d + %d are not within the %d live rows", where, (int)first,
                           (int)first, (int)count, (int)w->agents.count);
    const uint32_t* slots = table_slots(&w->agents);
    for (int32_t i = 0; i < count; ++i) {
        uint32_t s = slots[first + i];
        out[i] = (shoal_agent_t){s + 1, w->tag, w->slots[s].generation};
    }
    return SHOAL_OK;
}

int32_t shoal_agent_row(const shoal_world_t* w, shoal_agent_t id)
{
    if (!w) return -1;
    int32_t slot = world_resolve(w, id, 1, "agent_row");
    if (slot < 0) return -1;
    if (w->slots[slot].state != SLOT_LIVE) {
        world_failc(w, SHOAL_ERR_BUSY,
                    "agent_row: the agent was added during this step; it has a row once the step ends");
        return -1;
    }
    return w->slots[slot].row;
}

/* ---- user components ----------------------------------------------------- */

static int name_ok(const char* s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 31) return 0;
    for (size_t i = 0; i < n; ++i) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                 c == '.';
        if (!ok) return 0;
    }
    return 1;
}

shoal_status_t shoal_world_add_component(shoal_world_t* w, const shoal_component_def_t* def)
{
    static const char* where = "world_add_component";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (!def) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: def is NULL", where);
    if (!def->name || !name_ok(def->name))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: name must be 1..31 characters of A-Z, a-z, 0-9, '_' and '.'", where);
    if (find_builtin(def->name))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: '%s' is a built-in column", where, def->name);
    for (int32_t c = 0; c < w->user_count; ++c)
        if (strcmp(w->user_cols[c].name, def->name) == 0)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: a component named '%s' already exists",
                              where, def->name);
    if (def->type < SHOAL_COLUMN_F32 || def->type > SHOAL_COLUMN_U64)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: type must be SHOAL_COLUMN_F32, I32, U32 or U64 (1..4), got %d", where,
                          (int)def->type);
    if (def->width < 1 || def->width > 16)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: width must be 1..16 elements per row, got %d",
                          where, (int)def->width);
    if (w->user_count >= SHOAL_MAX_USER_COMPONENTS)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: at most %d user components", where,
                          SHOAL_MAX_USER_COMPONENTS);
    user_column_t u;
    memset(&u, 0, sizeof u);
    strcpy(u.name, def->name);
    u.type = def->type;
    u.width = def->width;
    u.elem_size = (uint16_t)(type_size(def->type) * def->width);
    if (def->default_value) memcpy(u.default_value, def->default_value, u.elem_size);

    /* A new table with one more column, filled for the agents already
     * there, replaces the old one only once everything is allocated. */
    uint16_t sizes[SHOAL_MAX_USER_COMPONENTS + 1];
    sizes[0] = sizeof(uint32_t);
    for (int32_t c = 0; c < w->user_count; ++c) sizes[c + 1] = w->user_cols[c].elem_size;
    sizes[w->user_count + 1] = u.elem_size;
    table_t fresh;
    table_init(&fresh, sizes, w->user_count + 2);
    int32_t n = w->agents.count;
    if (!table_reserve(&fresh, &w->alloc, w->agents.capacity > 16 ? w->agents.capacity : 16))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    size_t scratch_need = (size_t)fresh.capacity * table_widest(&fresh);
    void* scratch = NULL;
    if (scratch_need > w->user_scratch_size) {
        scratch = mem_alloc(&w->alloc, scratch_need);
        if (!scratch) {
            table_release(&fresh, &w->alloc);
            return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
        }
    }
    fresh.count = n;
    memcpy(fresh.columns[0], w->agents.columns[0], (size_t)n * sizeof(uint32_t));
    for (int32_t c = 0; c < w->user_count; ++c)
        memcpy(fresh.columns[c + 1], w->user.columns[c + 1], (size_t)n * sizes[c + 1]);
    for (int32_t i = 0; i < n; ++i)
        memcpy((char*)fresh.columns[w->user_count + 1] + (size_t)i * u.elem_size, u.default_value,
               u.elem_size);
    table_release(&w->user, &w->alloc);
    w->user = fresh;
    if (scratch) {
        mem_free(&w->alloc, w->user_scratch, w->user_scratch_size);
        w->user_scratch = scratch;
        w->user_scratch_size = scratch_need;
    }
    w->user_cols[w->user_count++] = u;
    return SHOAL_OK;
}
