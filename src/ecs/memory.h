/* Allocation through the world definition's hooks (or aligned_alloc). All
 * blocks are 64-byte aligned. Nothing in the library calls malloc directly
 * for world memory. */
#ifndef SHOAL_MEMORY_H
#define SHOAL_MEMORY_H

#include <stddef.h>

#include "shoal/shoal.h"

typedef struct allocator_t {
    shoal_alloc_fn* alloc;
    shoal_free_fn* free;
    void* ctx;
} allocator_t;

/* The default hooks: aligned_alloc / free. */
allocator_t allocator_default(void);

/* 64-byte aligned block of at least `size` bytes, or NULL. size 0 gives NULL. */
void* mem_alloc(const allocator_t* a, size_t size);
void* mem_calloc(const allocator_t* a, size_t size);
void mem_free(const allocator_t* a, void* ptr, size_t size);

#endif /* SHOAL_MEMORY_H */
