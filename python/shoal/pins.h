/* Allocation hooks that keep column blocks alive while Python arrays point
 * into them.
 *
 * The binding hands out numpy arrays whose data is the library's own
 * columns. A world frees a table's block when it grows (agents added) and
 * when it is destroyed; an array kept across that must not read freed
 * memory. So the world is created with these hooks: a block that some array
 * pins is not freed when the library lets go of it, but when its last pin
 * goes (the array's lease is collected). The hooks may run on any thread
 * that steps the world (the GIL released), so the table has a mutex.
 * Allocation itself is the library's default (shoal_default_alloc). */
#ifndef SHOAL_PY_PINS_H
#define SHOAL_PY_PINS_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "shoal/shoal.h"

typedef struct pin_entry_t {
    char* start;   /* a block the world allocated */
    size_t size;   /* its size */
    int32_t pins;  /* leases that point into it */
    int32_t freed; /* the library has let go: free at the last unpin */
} pin_entry_t;

/* Every block the world holds (a few dozen: tables, indexes, scratch), so
 * that a column pointer can be traced to the block that holds it. */
typedef struct pin_table_t {
    pthread_mutex_t lock;
    pin_entry_t* entries;
    int32_t count, capacity;
    int64_t blocks_kept; /* frees put off because a lease pinned the block */
} pin_table_t;

static inline pin_table_t* pins_create(void)
{
    pin_table_t* t = (pin_table_t*)calloc(1, sizeof *t);
    if (t && pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

/* After the world is destroyed: frees what is left (blocks whose free was
 * put off and never released cannot remain: their leases keep the world). */
static inline void pins_destroy(pin_table_t* t)
{
    if (!t) return;
    for (int32_t i = 0; i < t->count; ++i)
        if (t->entries[i].freed) shoal_default_free(t->entries[i].start, t->entries[i].size, NULL);
    free(t->entries);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static inline int32_t pins_find(const pin_table_t* t, const void* p)
{
    for (int32_t i = 0; i < t->count; ++i)
        if (t->entries[i].start == (const char*)p) return i;
    return -1;
}

static inline int32_t pins_containing(const pin_table_t* t, const void* p)
{
    const char* c = (const char*)p;
    for (int32_t i = 0; i < t->count; ++i)
        if (!t->entries[i].freed && c >= t->entries[i].start && c < t->entries[i].start + t->entries[i].size)
            return i;
    return -1;
}

static inline void* pins_alloc(size_t size, size_t align, void* ctx)
{
    pin_table_t* t = (pin_table_t*)ctx;
    void* p = shoal_default_alloc(size, align, NULL);
    if (!p) return NULL;
    pthread_mutex_lock(&t->lock);
    if (t->count == t->capacity) {
        int32_t cap = t->capacity ? 2 * t->capacity : 64;
        pin_entry_t* e = (pin_entry_t*)realloc(t->entries, (size_t)cap * sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&t->lock);
            shoal_default_free(p, size, NULL);
            return NULL;
        }
        t->entries = e;
        t->capacity = cap;
    }
    t->entries[t->count++] = (pin_entry_t){(char*)p, size, 0, 0};
    pthread_mutex_unlock(&t->lock);
    return p;
}

static inline void pins_free(void* ptr, size_t size, void* ctx)
{
    pin_table_t* t = (pin_table_t*)ctx;
    if (!ptr) return;
    pthread_mutex_lock(&t->lock);
    int32_t i = pins_find(t, ptr);
    if (i >= 0 && t->entries[i].pins > 0) {
        t->entries[i].freed = 1;
        t->blocks_kept++;
        pthread_mutex_unlock(&t->lock);
        return;
    }
    if (i >= 0) t->entries[i] = t->entries[--t->count];
    pthread_mutex_unlock(&t->lock);
    shoal_default_free(ptr, size, NULL);
}

/* Pin the block that holds `p`; returns the block's start (for
 * pins_unpin), or NULL when no block of the world holds p. */
static inline void* pins_pin(pin_table_t* t, const void* p)
{
    void* block = NULL;
    pthread_mutex_lock(&t->lock);
    int32_t i = pins_containing(t, p);
    if (i >= 0) {
        t->entries[i].pins++;
        block = t->entries[i].start;
    }
    pthread_mutex_unlock(&t->lock);
    return block;
}

static inline void pins_unpin(pin_table_t* t, void* block)
{
    void* release = NULL;
    size_t size = 0;
    pthread_mutex_lock(&t->lock);
    int32_t i = pins_find(t, block);
    if (i >= 0 && --t->entries[i].pins == 0 && t->entries[i].freed) {
        release = t->entries[i].start;
        size = t->entries[i].size;
        t->entries[i] = t->entries[--t->count];
    }
    pthread_mutex_unlock(&t->lock);
    if (release) shoal_default_free(release, size, NULL);
}

static inline int64_t pins_kept(pin_table_t* t)
{
    pthread_mutex_lock(&t->lock);
    int64_t n = t->blocks_kept;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* Blocks freed by the world but kept for a lease. */
static inline int32_t pins_waiting(pin_table_t* t)
{
    int32_t n = 0;
    pthread_mutex_lock(&t->lock);
    for (int32_t i = 0; i < t->count; ++i) n += t->entries[i].freed;
    pthread_mutex_unlock(&t->lock);
    return n;
}

#endif
