/* The trace recorder (public face: shoal_world_set_trace and friends).
 *
 * One buffer for step and system spans, written only by the stepping
 * thread, and one per worker for the block spans of the parallel-for, each
 * written only by its worker: recording is a bounds check and a store, with
 * no lock, atomic or allocation. Buffer headers sit on their own cache lines
 * so that workers recording at once do not share one. */
#ifndef SHOAL_TRACE_H
#define SHOAL_TRACE_H

#include <stdint.h>

#include "ecs/memory.h"

#define TRACE_STEP_ID (-1) /* system_id of a whole-step span */

typedef struct trace_record_t {
    uint64_t start;
    uint64_t end;
    uint64_t step;
    int32_t system_id; /* system_t.id, or TRACE_STEP_ID */
    int32_t items;
} trace_record_t; /* 32 bytes */

typedef struct trace_buffer_t {
    _Alignas(64) trace_record_t* records;
    int32_t count;
    uint64_t dropped;
} trace_buffer_t;

typedef struct trace_t {
    int32_t capacity;     /* records per buffer */
    int32_t buffer_count; /* 1 + worker count */
    trace_buffer_t* buffers;
} trace_t;

/* Buffer 0 takes step and system spans; buffer 1 + k worker k's blocks. */
static inline void trace_record(trace_t* t, int32_t buffer, int32_t system_id, int32_t items,
                                uint64_t step, uint64_t start, uint64_t end)
{
    if (buffer < 0 || buffer >= t->buffer_count) return;
    trace_buffer_t* b = &t->buffers[buffer];
    if (b->count >= t->capacity) {
        b->dropped++;
        return;
    }
    trace_record_t* r = &b->records[b->count++];
    r->start = start;
    r->end = end;
    r->step = step;
    r->system_id = system_id;
    r->items = items;
}

void trace_destroy(trace_t* t, const allocator_t* alloc);

#endif /* SHOAL_TRACE_H */
