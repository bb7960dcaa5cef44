/* The global-id map (id_map.h says why it is built as it is). */
#include "ecs/id_map.h"

#include <string.h>

/* The most buckets: 2^31 hold the most agents a world may have (INT32_MAX / 2
 * live, and as many pending) at 3/4 full. */
#define ID_MAP_MAX_CAPACITY (1ull << 31)

static inline uint64_t entry_key(const id_map_entry_t* e) { return (uint64_t)e->key_hi << 32 | e->key_lo; }

/* Insert an entry whose key is not in the table, which has room. */
static void insert(id_map_entry_t* entries, uint64_t mask, int32_t shift, uint64_t key, uint32_t slot)
{
    uint64_t i = (key * 0x9e3779b97f4a7c15ull) >> shift;
    while ((entries[i].key_lo | entries[i].key_hi) != 0) i = (i + 1) & mask;
    entries[i].key_lo = (uint32_t)key;
    entries[i].key_hi = (uint32_t)(key >> 32);
    entries[i].slot = slot;
}

int id_map_reserve(id_map_t* m, const allocator_t* a, uint64_t extra)
{
    uint64_t need = m->count + extra;
    if (need * 4 <= m->capacity * 3) return 1;
    uint64_t cap = m->capacity ? m->capacity * 2 : 16;
    while (need * 4 > cap * 3) cap *= 2;
    if (cap > ID_MAP_MAX_CAPACITY) return 0;
    id_map_entry_t* fresh = (id_map_entry_t*)mem_calloc(a, (size_t)cap * sizeof *fresh);
    if (!fresh) return 0;
    int32_t shift = 64;
    for (uint64_t c = cap; c > 1; c >>= 1) --shift;
    for (uint64_t i = 0; i < m->capacity; ++i) {
        const id_map_entry_t* e = &m->entries[i];
        if ((e->key_lo | e->key_hi) != 0) insert(fresh, cap - 1, shift, entry_key(e), e->slot);
    }
    mem_free(a, m->entries, (size_t)m->capacity * sizeof *m->entries);
    m->entries = fresh;
    m->capacity = cap;
    m->shift = shift;
    return 1;
}

void id_map_release(id_map_t* m, const allocator_t* a)
{
    mem_free(a, m->entries, (size_t)m->capacity * sizeof *m->entries);
    memset(m, 0, sizeof *m);
}

void id_map_put(id_map_t* m, uint64_t id, uint32_t slot)
{
    insert(m->entries, m->capacity - 1, m->shift, id + 1, slot);
    m->count++;
}

void id_map_erase(id_map_t* m, uint64_t id)
{
    uint64_t key = id + 1, mask = m->capacity - 1;
    uint64_t hole = id_map_home(m, key);
    while (entry_key(&m->entries[hole]) != key) hole = (hole + 1) & mask;
    /* Algorithm R: an entry after the hole moves into it when the hole lies
     * on its probe path (between its home and where it sits); the first
     * empty bucket ends the run. */
    for (uint64_t j = (hole + 1) & mask;; j = (j + 1) & mask) {
        id_map_entry_t* e = &m->entries[j];
        if ((e->key_lo | e->key_hi) == 0) break;
        uint64_t home = id_map_home(m, entry_key(e));
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->entries[hole] = *e;
            hole = j;
        }
    }
    memset(&m->entries[hole], 0, sizeof m->entries[hole]);
    m->count--;
}
