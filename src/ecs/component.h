/* An optional component: a table of its own plus a sparse index from entity
 * slot to row (-1 where the entity does not have it). Systems iterate the
 * table densely and so touch only the agents that have the component. */
#ifndef SHOAL_COMPONENT_H
#define SHOAL_COMPONENT_H

#include "ecs/table.h"

typedef struct component_t {
    table_t table;
    int32_t* sparse;
    int32_t sparse_capacity;
    /* Bumped whenever a row is written from an agent definition: what a
     * system derives from the columns (say, that a parameter is the same
     * for every row) holds while this is unchanged. Removing rows and
     * reordering them do not bump it. */
    uint64_t version;
    /* component_columns_one's answer for the columns in note_cols, kept
     * while `version` is unchanged. */
    uint64_t note_version;
    uint64_t note_cols;
    int32_t note_state; /* 0: none yet, 1: one value each, 2: not */
    /* The module's definition columns (columns_definition_mask) that
     * the last reorder's scan found holding one value, at `one_version`
     * (one_known 0: none yet). */
    uint64_t one_columns;
    uint64_t one_version;
    int32_t one_known;
    /* world_component_in_agent_order's answer (order_state 0: none yet, 1:
     * in order, 2: not), with what it was found at. */
    int32_t order_state;
    int32_t order_count;
    uint64_t order_structure, order_version;
} component_t;

void component_init(component_t* comp, const uint16_t* elem_sizes, int32_t column_count);
/* The definition columns known to hold one value now: the last reorder's
 * finding while the component's version is unchanged, else none. */
static inline uint64_t component_one_columns(const component_t* comp)
{
    return comp->one_known && comp->one_version == comp->version ? comp->one_columns : 0;
}
void component_release(component_t* comp, const allocator_t* a);
/* Make the sparse index cover slots [0, slot_capacity). All or nothing. */
int component_reserve_slots(component_t* comp, const allocator_t* a, int32_t slot_capacity);
/* Give `slot` the component (zeroed row); returns its row, or -1 when memory
 * ran out (nothing changed). Adding it twice returns the existing row. */
int32_t component_add(component_t* comp, const allocator_t* a, uint32_t slot);
void component_remove(component_t* comp, uint32_t slot);
static inline int32_t component_row(const component_t* comp, uint32_t slot)
{
    return (int32_t)slot < comp->sparse_capacity ? comp->sparse[slot] : -1;
}
/* Whether each of the columns cols[0 .. n) (indices below 64) holds one
 * value in every row, compared as bits: a flock's agents usually share a
 * module's parameters, which its pass then reads once. Looked at again
 * only when rows were written since (version) or other columns are asked
 * about; a removal leaves one value one value. */
int component_columns_one(component_t* comp, const int* cols, int n);
/* Reorder rows (new row i = old row perm[i]) and fix the sparse index. */
void component_permute(component_t* comp, const int32_t* perm, void* scratch);

#endif /* SHOAL_COMPONENT_H */
