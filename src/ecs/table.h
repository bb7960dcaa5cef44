/* A table is one component's dense storage: a set of columns (SoA), each a
 * 64-byte aligned array whose capacity is a multiple of 16 elements, so SIMD
 * loops can run over whole lanes without scalar tails. Rows at and beyond
 * `count` are kept zeroed: padded lanes read harmless values.
 *
 * All columns of a table live in one block, one after the other, each
 * starting on a 64-byte boundary (table_block_alloc). Adjacent columns of
 * the same element size are thus a fixed distance apart, so the x, y and z
 * columns of a vector can be handed out as one strided (rows x 3) array
 * without copying (the Python binding does).
 *
 * Column 0 is always the owning entity slot (uint32). A column may have
 * element size 0: it is then never allocated (a 3D-only column of a 2D
 * world) and its pointer stays NULL. */
#ifndef SHOAL_TABLE_H
#define SHOAL_TABLE_H

#include <stdint.h>

#include "ecs/memory.h"

/* The widest table is the ground-vehicle component (67 columns). The cap
 * sizes table_t itself (a few per world), never per-agent memory. */
#define TABLE_MAX_COLUMNS 80
#define TABLE_PAD 16 /* elements; 16 floats = 64 bytes = the widest lane count */

typedef struct table_t {
    int32_t count;
    int32_t capacity;
    int32_t column_count;
    uint16_t elem_size[TABLE_MAX_COLUMNS];
    void* columns[TABLE_MAX_COLUMNS];
    void* block; /* the one allocation that holds every column (NULL: none) */
} table_t;

/* Describe the columns; allocates nothing. Column 0 must be the uint32 slot. */
void table_init(table_t* t, const uint16_t* elem_sizes, int32_t column_count);
void table_release(table_t* t, const allocator_t* a);

/* Grow to hold at least `capacity` rows. All or nothing: on failure the
 * table is unchanged. */
int table_reserve(table_t* t, const allocator_t* a, int32_t capacity);
/* The same, with geometric growth capped at `limit` rows. */
int table_reserve_within(table_t* t, const allocator_t* a, int32_t capacity, int32_t limit);

/* The capacity table_reserve_within would grow to (the current one when
 * it is enough; -1 past the limit of int32 rows). */
int32_t table_grown_capacity(const table_t* t, int32_t capacity, int32_t limit);

/* One block for `capacity` rows of every column of t, laid out into
 * columns[] (NULL for columns of element size 0); the block, or NULL when
 * the allocation failed. Nothing is zeroed. Free with table_block_free. */
void* table_block_alloc(const table_t* t, const allocator_t* a, int32_t capacity, void** columns);
void table_block_free(const table_t* t, const allocator_t* a, void* block, int32_t capacity);

/* Append a zeroed row (capacity must already allow it); returns its index. */
int32_t table_push(table_t* t, uint32_t slot);

/* Remove `row` by moving the last row into it. Returns the slot of the moved
 * row, or UINT32_MAX when `row` was the last one. */
uint32_t table_swap_remove(table_t* t, int32_t row);

/* Whether every element of column c has the same bits. */
int table_column_uniform(const table_t* t, int32_t c);

/* Whether any of rows [begin, end) of a 4-byte column holds other bits than
 * base + step * row (step 0: one value; step 1: the row itself), 64 rows
 * at a time with no branch inside (the compiler makes it SIMD), so that a
 * column that passes streams at memory speed. */
static inline int table_rows_differ(const uint32_t* col, int32_t begin, int32_t end, uint32_t base,
                                    uint32_t step)
{
    uint32_t diff = 0;
    int32_t i = begin;
    for (; i + 64 <= end && !diff; i += 64)
        for (int32_t k = 0; k < 64; ++k) diff |= col[i + k] ^ (base + step * (uint32_t)(i + k));
    for (; i < end && !diff; ++i) diff |= col[i] ^ (base + step * (uint32_t)i);
    return diff != 0;
}

/* Reorder rows: new row i = old row perm[i], for every column. perm is a
 * permutation of [0, count). scratch must hold capacity * the widest element.
 * The caller updates whatever maps slots to rows (see component_permute). */
void table_permute(table_t* t, const int32_t* perm, void* scratch);
/* One column of table_permute: columns are independent, so several
 * workers may permute different columns at once, each with its own
 * scratch. */
void table_permute_column(table_t* t, int32_t c, const int32_t* perm, void* scratch);

/* Bytes of the widest column element. */
uint16_t table_widest(const table_t* t);

static inline uint32_t* table_slots(const table_t* t) { return (uint32_t*)t->columns[0]; }

#define TABLE_COL(t, type, index) ((type*)(t)->columns[(index)])

#endif /* SHOAL_TABLE_H */
