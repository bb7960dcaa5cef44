/* Component columns declared once (module.h's column_def_t): the parts of
 * writing, reading back and checking a row that every module had written
 * by hand, done from its table.
 *
 * Every column is 4 bytes and a definition field is stored as it is, so a
 * float, an int32 and a uint32 are all one 4-byte copy; only a handle's tag
 * column is computed (agent_stored_tag). */
#include "ecs/columns.h"

#include <math.h>
#include <string.h>

static uint32_t field_bits(const column_def_t* col, const shoal_agent_def_t* d)
{
    const char* p = (const char*)d + col->field;
    if (col->type == COLUMN_AGENT_TAG) {
        shoal_agent_t id;
        memcpy(&id, p, sizeof id);
        return agent_stored_tag(id);
    }
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static int written_here(const column_def_t* col)
{
    return col->field != COLUMN_NO_FIELD && !(col->flags & COLUMN_MODULE_WRITES);
}

void columns_write_row(world_t* w, int k, int32_t r, const shoal_agent_def_t* d)
{
    table_t* t = &w->comps[k].table;
    const column_def_t* cols = w->comp_module[k]->columns;
    for (int32_t c = COMP_ROW + 1; c < t->column_count; ++c)
        if (written_here(&cols[c])) ((uint32_t*)t->columns[c])[r] = field_bits(&cols[c], d);
}

void columns_write_rows(world_t* w, int k, int32_t r, int32_t n, const shoal_agent_def_t* d)
{
    table_t* t = &w->comps[k].table;
    const column_def_t* cols = w->comp_module[k]->columns;
    for (int32_t c = COMP_ROW + 1; c < t->column_count; ++c) {
        if (!written_here(&cols[c])) continue;
        uint32_t v = field_bits(&cols[c], d);
        uint32_t* col = (uint32_t*)t->columns[c] + r;
        for (int32_t i = 0; i < n; ++i) col[i] = v;
    }
}

void columns_read_row(const world_t* w, int k, int32_t r, shoal_agent_def_t* d)
{
    const table_t* t = &w->comps[k].table;
    const column_def_t* cols = w->comp_module[k]->columns;
    for (int32_t c = COMP_ROW + 1; c < t->column_count; ++c) {
        const column_def_t* col = &cols[c];
        if (col->field == COLUMN_NO_FIELD) continue;
        char* p = (char*)d + col->field;
        uint32_t v = ((const uint32_t*)t->columns[c])[r];
        if (col->type == COLUMN_AGENT_TAG) { /* the index1 column comes first */
            shoal_agent_t id = agent_stored_handle(((const uint32_t*)t->columns[c - 1])[r], v);
            memcpy(p, &id, sizeof id);
        } else if (col->type != COLUMN_AGENT_INDEX1) {
            memcpy(p, &v, 4);
        }
    }
}

/* Whether d passes column col's check (col->check is not NONE): the
 * common case, one test of [lo, hi] without a call or a branch on the kind
 * of check (an add checks some 30 fields). A NaN fails every comparison;
 * an INT check's bounds are floats that hold them exactly. */
static inline int column_ok(const world_t* w, const column_def_t* col, const shoal_agent_def_t* d)
{
    const char* p = (const char*)d + col->field;
    if (col->check == COLUMN_CHECK_HANDLE) {
        shoal_agent_t id;
        memcpy(&id, p, sizeof id);
        return id.index1 == 0 || id.world0 == w->tag;
    }
    float f;
    int32_t i;
    memcpy(&f, p, 4);
    memcpy(&i, p, 4);
    float v = col->check == COLUMN_CHECK_INT ? (float)i : f;
    return (v >= col->lo) & (v <= col->hi) & ((v != col->lo) | (col->check != COLUMN_CHECK_ABOVE));
}

/* A column that failed column_ok: the error, recorded with its message. */
static shoal_status_t check_column(world_t* w, const column_def_t* col, const shoal_agent_def_t* d,
                                   const char* where)
{
    const char* p = (const char*)d + col->field;
    if (col->check == COLUMN_CHECK_HANDLE) {
        shoal_agent_t id;
        memcpy(&id, p, sizeof id);
        if (id.index1 != 0 && id.world0 != w->tag)
            return world_fail(w, SHOAL_ERR_STALE_HANDLE, "%s: %s does not belong to this world", where, col->name);
        return SHOAL_OK;
    }
    if (col->check == COLUMN_CHECK_INT) {
        int32_t v;
        memcpy(&v, p, 4);
        if (v < col->lo || v > col->hi)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be %s, got %d", where, col->name,
                              col->range, (int)v);
        return SHOAL_OK;
    }
    float v;
    memcpy(&v, p, 4);
    switch (col->check) {
    case COLUMN_CHECK_FINITE:
    case COLUMN_CHECK_COORDINATE:
        if (!isfinite(v))
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be finite, got %g", where, col->name,
                              (double)v);
        if (col->check == COLUMN_CHECK_COORDINATE && fabsf(v) > DEF_MAX_COORDINATE)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be within +-%g m, got %g", where,
                              col->name, (double)DEF_MAX_COORDINATE, (double)v);
        return SHOAL_OK;
    default: /* AT_LEAST, ABOVE */
        if (!def_check_min(w, where, col->name, v, col->lo, col->check == COLUMN_CHECK_ABOVE))
            return SHOAL_ERR_INVALID_ARGUMENT;
        if (col->range && v > col->hi)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be in %s, got %g", where, col->name,
                              col->range, (double)v);
        return SHOAL_OK;
    }
}

shoal_status_t columns_validate(world_t* w, const module_t* m, const shoal_agent_def_t* d, const char* where)
{
    if (m->column_count <= 0 || (m->columns_checked_when_needed && !m->needs(d))) return SHOAL_OK;
    for (int32_t c = COMP_ROW + 1; c < m->column_count; ++c) {
        const column_def_t* col = &m->columns[c];
        if (col->check == COLUMN_CHECK_NONE || column_ok(w, col, d)) continue; /* (a check has a field) */
        shoal_status_t st = check_column(w, col, d, where);
        if (st != SHOAL_OK) return st;
    }
    return SHOAL_OK;
}

uint64_t columns_definition_mask(const module_t* m)
{
    uint64_t mask = 0;
    for (int32_t c = COMP_ROW + 1; c < m->column_count && c < 64; ++c) {
        const column_def_t* col = &m->columns[c];
        if ((col->field != COLUMN_NO_FIELD || (col->flags & COLUMN_DERIVED)) && col->type != COLUMN_AGENT_TAG)
            mask |= 1ull << c;
    }
    return mask;
}
