/* A component's columns as its module declares them (module_t.columns,
 * column_def_t): rows written from a definition and read back, the
 * definition's fields checked, and what the hash, the reorder and the
 * snapshot loader need to know of each column.
 *
 * A module's write_row, read_row and validate hooks call columns_write,
 * columns_read and columns_check with its own table for the columns the
 * table describes, then do what it cannot say (derived columns, state,
 * checks that span fields or need the world). These are inline, and their
 * loops unrolled, so that with a module's static table and column count
 * they compile to the stores and comparisons of a hand-written hook: they
 * run for every agent added (and a bulk add's every row). */
#ifndef SHOAL_ECS_COLUMNS_H
#define SHOAL_ECS_COLUMNS_H

#include <string.h>

#include "ecs/world.h"

/* The bits of a column's definition field (4 bytes; a reference to an
 * agent is its stored global id's half, from the handle). */
static inline uint32_t column_field_bits(const world_t* w, const column_def_t* col,
                                         const shoal_agent_def_t* d)
{
    const char* p = (const char*)d + col->field;
    if (col->type == COLUMN_AGENT_ID_LO || col->type == COLUMN_AGENT_ID_HI) {
        shoal_agent_t id;
        memcpy(&id, p, sizeof id);
        uint64_t stored = agent_stored_id(w, id);
        return col->type == COLUMN_AGENT_ID_LO ? (uint32_t)stored : (uint32_t)(stored >> 32);
    }
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Row r of component k: every column of cols[0 .. count) with a definition
 * field, but those the module writes itself (COLUMN_MODULE_WRITES), from d.
 * Every column is 4 bytes and a field is stored as it is. */
static inline void columns_write(world_t* w, int k, int32_t r, const shoal_agent_def_t* d,
                                 const column_def_t* cols, int32_t count)
{
    void* const* columns = w->comps[k].table.columns;
#pragma GCC unroll 128
    for (int32_t c = COMP_ROW + 1; c < count; ++c)
        if (cols[c].field != COLUMN_NO_FIELD && !(cols[c].flags & COLUMN_MODULE_WRITES))
            ((uint32_t*)columns[c])[r] = column_field_bits(w, &cols[c], d);
}

/* Row r of component k back into d: every column with a definition field. */
static inline void columns_read(const world_t* w, int k, int32_t r, shoal_agent_def_t* d,
                                const column_def_t* cols, int32_t count)
{
    void* const* columns = w->comps[k].table.columns;
#pragma GCC unroll 128
    for (int32_t c = COMP_ROW + 1; c < count; ++c) {
        const column_def_t* col = &cols[c];
        if (col->field == COLUMN_NO_FIELD || col->type == COLUMN_AGENT_ID_LO) continue;
        char* p = (char*)d + col->field;
        uint32_t v = ((const uint32_t*)columns[c])[r];
        if (col->type == COLUMN_AGENT_ID_HI) { /* the low half's column comes first */
            uint64_t stored = (uint64_t)v << 32 | ((const uint32_t*)columns[c - 1])[r];
            shoal_agent_t id = agent_stored_handle(w, stored);
            memcpy(p, &id, sizeof id);
        } else {
            memcpy(p, &v, 4);
        }
    }
}

/* The error of a field that failed column col's check, recorded with its
 * message (naming the field, the value and what was expected). */
shoal_status_t columns_check_failed(world_t* w, const column_def_t* col, const shoal_agent_def_t* d,
                                    const char* where);

/* Whether d passes column col's check (not NONE): one test of [lo, hi]. A
 * NaN fails every comparison; an INT check's bounds are floats that hold
 * them exactly. */
static inline int column_check_ok(const world_t* w, const column_def_t* col, const shoal_agent_def_t* d)
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

/* The checks of cols[0 .. count) on d, in column order: the first field
 * that fails gives the error. */
static inline shoal_status_t columns_check(world_t* w, const shoal_agent_def_t* d, const char* where,
                                           const column_def_t* cols, int32_t count)
{
#pragma GCC unroll 128
    for (int32_t c = COMP_ROW + 1; c < count; ++c)
        if (cols[c].check != COLUMN_CHECK_NONE && !column_check_ok(w, &cols[c], d))
            return columns_check_failed(w, &cols[c], d, where);
    return SHOAL_OK;
}

/* Bit c: column c (below 64) of module m is written from an agent's
 * definition alone (write_row, the bulk add), never by a system, so what
 * holds of it holds while the component's version is unchanged
 * (component_t): a reorder that found it holding one value need not look
 * again. These are the columns with a definition field and the
 * COLUMN_DERIVED ones. */
uint64_t columns_definition_mask(const module_t* m);

/* Column c's flags (enum column_flag). */
static inline uint8_t column_flags(const module_t* m, int32_t c) { return m->columns[c].flags; }
/* Whether column c of module m is in snapshot files of `version`. */
static inline int column_in_version(const module_t* m, int32_t c, uint32_t version)
{
    return m->columns[c].since == 0 || m->columns[c].since <= version;
}

#endif /* SHOAL_ECS_COLUMNS_H */
