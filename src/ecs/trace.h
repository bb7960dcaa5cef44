/* The trace recorder (public face: shoal_world_set_trace and friends).
 *
 * One buffer for step and system spans, written only by the stepping
 * thread, and one per worker for the block spans of the parallel-for, each
 * written only by its worker: recording is a bounds check and a store, with
 * no lock, atomic or allocation. Buffer headers sit on their own cache lines
 * so that workers recording at once do not share one. With a growth limit
 * (shoal_world_set_trace_limit), trace_reserve_step enlarges the buffers
 * between steps, on the stepping thread, before any worker records: the
 * recording path stays a bounds check and a store. */
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
    int32_t capacity; /* records allocated */
    uint64_t dropped;
    /* For growth: count + dropped when the last step began, and the most
     * events one step has offered this buffer so far. */
    uint64_t offered_before_step;
    uint64_t peak_per_step;
} trace_buffer_t;

typedef struct trace_t {
    int32_t buffer_count; /* 1 + worker count */
    trace_buffer_t* buffers;
} trace_t;

/* Buffer 0 takes step and system spans; buffer 1 + k worker k's blocks. */
static inline void trace_record(trace_t* t, int32_t buffer, int32_t system_id, int32_t items, uint64_t step,
                                uint64_t start, uint64_t end)
{
    if (buffer < 0 || buffer >= t->buffer_count) return;
    trace_buffer_t* b = &t->buffers[buffer];
    if (b->count >= b->capacity) {
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

/* Before a step: grow each buffer whose free room is under twice the most
 * events one step has offered it, up to `limit` records (0: never grow). A
 * buffer that cannot be grown keeps its records and drops what does not fit,
 * as a fixed buffer does: tracing never fails a step. */
void trace_reserve_step(trace_t* t, const allocator_t* alloc, int32_t limit);

#endif /* SHOAL_TRACE_H */
