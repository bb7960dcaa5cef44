/* The global-id map: each live or pending agent's global id to its slot
 * (world.h's AC_ID_LO and AC_ID_HI, given in the order of adds and never
 * reused), so that a component may name another agent by its global id (a
 * pursuit target, a leader, a planner's goal agent) and still find its row
 * in O(1), as a world split over processes, whose slots are local storage,
 * will need to.
 *
 * Decisions worth knowing:
 * - It maps to the slot, not the row: a reorder moves every row and a
 *   removal's swap moves one, but neither moves a slot, so only the add
 *   and the removal of the agent itself write the map. A lookup then reads
 *   the slot's row, as a handle's does.
 * - Open addressing with linear probing over 12-byte buckets (the key's
 *   halves and the slot): a lookup reads one bucket, rarely two cache
 *   lines. The key stored is the id + 1, so that an all-zero bucket is
 *   empty and the table starts zeroed. Homes come from Fibonacci hashing
 *   (a multiply by 2^64 / golden ratio, the top bits): ids given in a row
 *   land spread evenly, and no stride of ids piles onto one bucket.
 * - At most 3/4 full, doubled beyond (a successful lookup probes 2.5
 *   buckets on average at 3/4, 1.5 at 1/2). A removal shifts the entries
 *   after it back into the hole (Knuth's algorithm R) instead of leaving a
 *   tombstone, so lookups never slow down with churn and nothing needs a
 *   rebuild.
 * - Memory is reserved before the change that needs it (id_map_reserve),
 *   all or nothing; put and erase then cannot fail.
 * - Read-only lookups may run on many threads at once (the decide stage's
 *   systems); writes happen between steps and at stage boundaries only,
 *   on the calling thread. */
#ifndef SHOAL_ID_MAP_H
#define SHOAL_ID_MAP_H

#include <stdint.h>

#include "ecs/memory.h"

typedef struct id_map_entry_t {
    uint32_t key_lo, key_hi; /* the id + 1; 0: an empty bucket */
    uint32_t slot;
} id_map_entry_t;

typedef struct id_map_t {
    id_map_entry_t* entries; /* `capacity` buckets, NULL before the first reserve */
    uint64_t capacity;       /* a power of two, or 0 */
    uint64_t count;
    int32_t shift; /* 64 - log2(capacity): a key's home is its product's top bits */
} id_map_t;

/* Room for `extra` more entries. All or nothing: 0 when out of memory (or
 * past 2^31 buckets), the map as it was. */
int id_map_reserve(id_map_t* m, const allocator_t* a, uint64_t extra);
void id_map_release(id_map_t* m, const allocator_t* a);
/* Map `id` (not in the map) to `slot`; room was reserved. */
void id_map_put(id_map_t* m, uint64_t id, uint32_t slot);
/* Forget `id`, which is in the map. */
void id_map_erase(id_map_t* m, uint64_t id);

static inline uint64_t id_map_home(const id_map_t* m, uint64_t key)
{
    return (key * 0x9e3779b97f4a7c15ull) >> m->shift;
}

/* Ask for the cache line of `id`'s home bucket, so that a look-up, put or
 * erase of it a while later does not wait on memory: consecutive ids'
 * homes are far apart, so in a large map each one is a miss. A read
 * prefetch: look-ups on several threads share the line. */
static inline void id_map_prefetch(const id_map_t* m, uint64_t id)
{
    /* (an unconditional prefetch: gcc 12 drops one inside an if) */
    const void* p = m->capacity ? (const void*)&m->entries[id_map_home(m, id + 1)] : (const void*)m;
    __builtin_prefetch(p);
}

/* The slot of `id`, or -1 when no live or pending agent has it. */
static inline int64_t id_map_find(const id_map_t* m, uint64_t id)
{
    if (m->count == 0) return -1;
    uint64_t key = id + 1, mask = m->capacity - 1;
    uint32_t lo = (uint32_t)key, hi = (uint32_t)(key >> 32);
    for (uint64_t i = id_map_home(m, key);; i = (i + 1) & mask) {
        const id_map_entry_t* e = &m->entries[i];
        if (e->key_lo == lo && e->key_hi == hi) return e->slot;
        if ((e->key_lo | e->key_hi) == 0) return -1;
    }
}

#endif /* SHOAL_ID_MAP_H */
