/* Component columns declared once (module.h's column_def_t): the messages
 * of failed checks, and what is read of a table as a whole (columns.h has
 * the parts every add runs). */
#include "ecs/columns.h"

#include <math.h>

shoal_status_t columns_check_failed(world_t* w, const column_def_t* col, const shoal_agent_def_t* d,
                                    const char* where)
{
    const char* p = (const char*)d + col->field;
    if (col->check == COLUMN_CHECK_HANDLE)
        return world_fail(w, SHOAL_ERR_STALE_HANDLE, "%s: %s does not belong to this world", where,
                          col->name);
    if (col->check == COLUMN_CHECK_INT) {
        int32_t v;
        memcpy(&v, p, 4);
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be %s, got %d", where, col->name,
                          col->range, (int)v);
    }
    float v;
    memcpy(&v, p, 4);
    switch (col->check) {
    case COLUMN_CHECK_FINITE:
    case COLUMN_CHECK_COORDINATE:
        if (!isfinite(v))
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be finite, got %g", where,
                              col->name, (double)v);
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be within +-%g m, got %g", where,
                          col->name, (double)DEF_MAX_COORDINATE, (double)v);
    default: /* AT_LEAST, ABOVE: def_check_min's message, or the bound in words */
        if (!def_check_min(w, where, col->name, v, col->lo, col->check == COLUMN_CHECK_ABOVE))
            return SHOAL_ERR_INVALID_ARGUMENT;
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: %s must be in %s, got %g", where, col->name,
                          col->range ? col->range : "range", (double)v);
    }
}

uint64_t columns_definition_mask(const module_t* m)
{
    uint64_t mask = 0;
    for (int32_t c = COMP_ROW + 1; c < m->column_count && c < 64; ++c) {
        const column_def_t* col = &m->columns[c];
        if (col->field != COLUMN_NO_FIELD || (col->flags & COLUMN_DERIVED)) mask |= 1ull << c;
    }
    return mask;
}
