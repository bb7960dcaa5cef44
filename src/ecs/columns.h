/* A component's columns as its module declares them (module_t.columns,
 * column_def_t): rows written from a definition and read back, the
 * definition's fields checked, and what the hash, the reorder and the
 * snapshot loader need to know of each column. */
#ifndef SHOAL_ECS_COLUMNS_H
#define SHOAL_ECS_COLUMNS_H

#include "ecs/world.h"

/* Row r of component k: every column with a definition field (but those
 * the module writes itself, COLUMN_MODULE_WRITES) from d. */
void columns_write_row(world_t* w, int k, int32_t r, const shoal_agent_def_t* d);
/* Rows [r, r + n) of component k, each from the same definition d. */
void columns_write_rows(world_t* w, int k, int32_t r, int32_t n, const shoal_agent_def_t* d);
/* Row r of component k back into d: every column with a definition field. */
void columns_read_row(const world_t* w, int k, int32_t r, shoal_agent_def_t* d);
/* The checks of module m's table on d (none when m has no component, or
 * checks only definitions that need it and d does not); the message names
 * the field, the value and what was expected. */
shoal_status_t columns_validate(world_t* w, const module_t* m, const shoal_agent_def_t* d, const char* where);

/* Bit c: column c (below 64) of module m is written from an agent's
 * definition alone (write_row, the bulk add), never by a system, so what
 * holds of it holds while the component's version is unchanged
 * (component_t): a reorder that found it holding one value need not look
 * again. These are the columns with a definition field and the
 * COLUMN_DERIVED ones; a handle's tag column is never one (a loaded world
 * retags stored handles without a version change). */
uint64_t columns_definition_mask(const module_t* m);

/* Column c's flags (enum column_flag). */
static inline uint8_t column_flags(const module_t* m, int32_t c) { return m->columns[c].flags; }
/* Whether column c of module m is in snapshot files of `version`. */
static inline int column_in_version(const module_t* m, int32_t c, uint32_t version)
{
    return m->columns[c].since == 0 || m->columns[c].since <= version;
}

#endif /* SHOAL_ECS_COLUMNS_H */
