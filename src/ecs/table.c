/* Dense SoA tables, optional components and default memory hooks. */
#define _DEFAULT_SOURCE /* madvise */
#include "ecs/table.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ecs/component.h"
#include "shoal/shoal.h"

static size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* Blocks of at least this size (the columns of big worlds) are aligned to
 * 2 MiB and asked to be backed by transparent huge pages where the kernel
 * offers them on request: a 10M-agent world touches 3 GB of fresh columns,
 * and with 4 KiB pages populating it was mostly page faults; a step walks
 * some 50 columns at once, which 4 KiB pages make TLB misses of. */
#define HUGE_BLOCK ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

static void* default_alloc(size_t size, size_t align, void* ctx)
{
    (void)ctx;
    if (size < HUGE_BLOCK) return aligned_alloc(align, round_up(size, align));
    size_t bytes = round_up(size, HUGE_PAGE);
    void* p = aligned_alloc(HUGE_PAGE, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p) (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#endif
    return p;
}

static void default_free(void* ptr, size_t size, void* ctx)
{
    (void)size;
    (void)ctx;
    free(ptr);
}

void* shoal_default_alloc(size_t size, size_t align, void* user_ctx)
{
    return default_alloc(size, align, user_ctx);
}

void shoal_default_free(void* ptr, size_t size, void* user_ctx) { default_free(ptr, size, user_ctx); }

allocator_t allocator_default(void)
{
    allocator_t a = {default_alloc, default_free, NULL};
    return a;
}

void* mem_alloc(const allocator_t* a, size_t size)
{
    if (size == 0) return NULL;
    return a->alloc(size, 64, a->ctx);
}

void* mem_calloc(const allocator_t* a, size_t size)
{
    void* p = mem_alloc(a, size);
    if (p) memset(p, 0, size);
    return p;
}

void mem_free(const allocator_t* a, void* ptr, size_t size)
{
    if (ptr) a->free(ptr, size, a->ctx);
}

void table_init(table_t* t, const uint16_t* elem_sizes, int32_t column_count)
{
    memset(t, 0, sizeof *t);
    t->column_count = column_count;
    for (int32_t c = 0; c < column_count; ++c) t->elem_size[c] = elem_sizes[c];
}

/* Bytes of column c in a block of `capacity` rows: whole 64-byte units, so
 * that the next column starts aligned. */
static size_t column_span(const table_t* t, int32_t c, int32_t capacity)
{
    return round_up((size_t)capacity * t->elem_size[c], 64);
}

static size_t block_bytes(const table_t* t, int32_t capacity)
{
    size_t total = 0;
    for (int32_t c = 0; c < t->column_count; ++c) total += column_span(t, c, capacity);
    return total;
}

void* table_block_alloc(const table_t* t, const allocator_t* a, int32_t capacity, void** columns)
{
    char* block = (char*)mem_alloc(a, block_bytes(t, capacity));
    if (!block) return NULL;
    size_t at = 0;
    for (int32_t c = 0; c < t->column_count; ++c) {
        columns[c] = t->elem_size[c] ? block + at : NULL;
        at += column_span(t, c, capacity);
    }
    return block;
}

void table_block_free(const table_t* t, const allocator_t* a, void* block, int32_t capacity)
{
    mem_free(a, block, block_bytes(t, capacity));
}

void table_release(table_t* t, const allocator_t* a)
{
    table_block_free(t, a, t->block, t->capacity);
    for (int32_t c = 0; c < t->column_count; ++c) t->columns[c] = NULL;
    t->block = NULL;
    t->count = 0;
    t->capacity = 0;
}

int table_reserve(table_t* t, const allocator_t* a, int32_t capacity)
{
    return table_reserve_within(t, a, capacity, INT32_MAX);
}

int32_t table_grown_capacity(const table_t* t, int32_t capacity, int32_t limit)
{
    if (capacity <= t->capacity) return t->capacity;
    /* Grow geometrically so that adding agents one by one stays linear, but
     * never past `limit` (a component never has more rows than there are
     * agents, so its growth stops at the agent table's capacity). */
    int64_t want = (int64_t)t->capacity * 3 / 2;
    if (want > limit) want = limit;
    if (want < capacity) want = capacity;
    want = (int64_t)round_up((size_t)want, TABLE_PAD);
    if (want > INT32_MAX - TABLE_PAD) return -1;
    return (int32_t)want;
}

int table_reserve_within(table_t* t, const allocator_t* a, int32_t capacity, int32_t limit)
{
    if (capacity <= t->capacity) return 1;
    int64_t want = table_grown_capacity(t, capacity, limit);
    if (want < 0) return 0;
    void* fresh[TABLE_MAX_COLUMNS] = {0};
    void* block = table_block_alloc(t, a, (int32_t)want, fresh);
    if (!block) return 0;
    for (int32_t c = 0; c < t->column_count; ++c) {
        if (t->elem_size[c] == 0) continue; /* a column this world does not use */
        size_t used = (size_t)t->count * t->elem_size[c];
        size_t total = (size_t)want * t->elem_size[c];
        if (used) memcpy(fresh[c], t->columns[c], used);
        memset((char*)fresh[c] + used, 0, total - used);
        t->columns[c] = fresh[c];
    }
    table_block_free(t, a, t->block, t->capacity);
    t->block = block;
    t->capacity = (int32_t)want;
    return 1;
}

int32_t table_push(table_t* t, uint32_t slot)
{
    int32_t row = t->count++;
    table_slots(t)[row] = slot; /* the rest of the row is already zero */
    return row;
}

uint32_t table_swap_remove(table_t* t, int32_t row)
{
    int32_t last = t->count - 1;
    uint32_t moved = UINT32_MAX;
    for (int32_t c = 0; c < t->column_count; ++c) {
        size_t sz = t->elem_size[c];
        if (sz == 0) continue;
        char* base = (char*)t->columns[c];
        if (row != last) memcpy(base + (size_t)row * sz, base + (size_t)last * sz, sz);
        memset(base + (size_t)last * sz, 0, sz);
    }
    if (row != last) moved = table_slots(t)[row];
    t->count = last;
    return moved;
}

uint16_t table_widest(const table_t* t)
{
    uint16_t w = 0;
    for (int32_t c = 0; c < t->column_count; ++c)
        if (t->elem_size[c] > w) w = t->elem_size[c];
    return w;
}

/* Whether every element of a column has the same bits. A permutation then
 * changes nothing, and parameter columns (mass, gains, weights) are often
 * the same for a whole flock: a sequential read that stops at the first
 * difference is far cheaper than a gather and a copy. */
static int column_uniform(const char* src, int32_t n, size_t sz)
{
    if (sz == 4) {
        const uint32_t* v = (const uint32_t*)(const void*)src;
        return n <= 0 || !table_rows_differ(v, 0, n, v[0], 0);
    }
    for (int32_t i = 1; i < n; ++i)
        if (memcmp(src + (size_t)i * sz, src, sz) != 0) return 0;
    return 1;
}

int table_column_uniform(const table_t* t, int32_t c)
{
    return column_uniform((const char*)t->columns[c], t->count, t->elem_size[c]);
}

void table_permute_column(table_t* t, int32_t c, const int32_t* perm, void* scratch)
{
    size_t sz = t->elem_size[c];
    if (sz == 0) return;
    const char* src = (const char*)t->columns[c];
    if (column_uniform(src, t->count, sz)) return;
    char* dst = (char*)scratch;
    switch (sz) {
    case 4:
        for (int32_t i = 0; i < t->count; ++i)
            ((uint32_t*)(void*)dst)[i] = ((const uint32_t*)(const void*)src)[perm[i]];
        break;
    case 8:
        for (int32_t i = 0; i < t->count; ++i)
            ((uint64_t*)(void*)dst)[i] = ((const uint64_t*)(const void*)src)[perm[i]];
        break;
    default:
        for (int32_t i = 0; i < t->count; ++i) memcpy(dst + (size_t)i * sz, src + (size_t)perm[i] * sz, sz);
        break;
    }
    memcpy(t->columns[c], scratch, (size_t)t->count * sz);
}

void table_permute(table_t* t, const int32_t* perm, void* scratch)
{
    for (int32_t c = 0; c < t->column_count; ++c) table_permute_column(t, c, perm, scratch);
}

/* ---- optional components ---------------------------------------------- */

void component_init(component_t* comp, const uint16_t* elem_sizes, int32_t column_count)
{
    table_init(&comp->table, elem_sizes, column_count);
    comp->sparse = NULL;
    comp->sparse_capacity = 0;
    comp->version = 0;
    comp->note_version = 0;
    comp->note_cols = 0;
    comp->note_state = 0;
    comp->one_columns = 0;
    comp->one_version = 0;
    comp->one_known = 0;
    comp->order_state = 0;
    comp->order_count = 0;
    comp->order_structure = comp->order_version = 0;
}

int component_columns_one(component_t* comp, const int* cols, int n)
{
    uint64_t mask = 0;
    for (int i = 0; i < n; ++i) {
        if (cols[i] < 0 || cols[i] >= 64) return 0;
        mask |= 1ull << cols[i];
    }
    if (comp->note_state == 0 || comp->note_version != comp->version || comp->note_cols != mask) {
        int one = 1;
        for (int i = 0; i < n && one; ++i) one = table_column_uniform(&comp->table, cols[i]);
        comp->note_state = one ? 1 : 2;
        comp->note_version = comp->version;
        comp->note_cols = mask;
    }
    return comp->note_state == 1;
}

void component_release(component_t* comp, const allocator_t* a)
{
    table_release(&comp->table, a);
    mem_free(a, comp->sparse, (size_t)comp->sparse_capacity * sizeof(int32_t));
    comp->sparse = NULL;
    comp->sparse_capacity = 0;
}

int component_reserve_slots(component_t* comp, const allocator_t* a, int32_t slot_capacity)
{
    if (slot_capacity <= comp->sparse_capacity) return 1;
    int32_t* fresh = (int32_t*)mem_alloc(a, (size_t)slot_capacity * sizeof(int32_t));
    if (!fresh) return 0;
    if (comp->sparse_capacity) memcpy(fresh, comp->sparse, (size_t)comp->sparse_capacity * sizeof(int32_t));
    for (int32_t i = comp->sparse_capacity; i < slot_capacity; ++i) fresh[i] = -1;
    mem_free(a, comp->sparse, (size_t)comp->sparse_capacity * sizeof(int32_t));
    comp->sparse = fresh;
    comp->sparse_capacity = slot_capacity;
    return 1;
}

int32_t component_add(component_t* comp, const allocator_t* a, uint32_t slot)
{
    if ((int32_t)slot >= comp->sparse_capacity) return -1;
    if (comp->sparse[slot] >= 0) return comp->sparse[slot];
    if (!table_reserve(&comp->table, a, comp->table.count + 1)) return -1;
    int32_t row = table_push(&comp->table, slot);
    comp->sparse[slot] = row;
    return row;
}

void component_remove(component_t* comp, uint32_t slot)
{
    if ((int32_t)slot >= comp->sparse_capacity) return;
    int32_t row = comp->sparse[slot];
    if (row < 0) return;
    uint32_t moved = table_swap_remove(&comp->table, row);
    if (moved != UINT32_MAX) comp->sparse[moved] = row;
    comp->sparse[slot] = -1;
}

void component_permute(component_t* comp, const int32_t* perm, void* scratch)
{
    table_permute(&comp->table, perm, scratch);
    const uint32_t* slots = table_slots(&comp->table);
    for (int32_t i = 0; i < comp->table.count; ++i) comp->sparse[slots[i]] = i;
}
