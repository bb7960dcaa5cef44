/* Tracing: the recorder's buffers and the public calls that read them.
 * Recording itself is inline in trace.h, called from the scheduler (step and
 * system spans) and the parallel-for (block spans). */
#include "ecs/trace.h"

#include <string.h>

#include "ecs/world.h"

void trace_destroy(trace_t* t, const allocator_t* alloc)
{
    if (!t) return;
    if (t->buffers) {
        for (int32_t i = 0; i < t->buffer_count; ++i)
            mem_free(alloc, t->buffers[i].records, (size_t)t->buffers[i].capacity * sizeof(trace_record_t));
        mem_free(alloc, t->buffers, (size_t)t->buffer_count * sizeof(trace_buffer_t));
    }
    mem_free(alloc, t, sizeof *t);
}

static trace_t* trace_create(const allocator_t* alloc, int32_t capacity, int32_t workers)
{
    trace_t* t = (trace_t*)mem_calloc(alloc, sizeof *t);
    if (!t) return NULL;
    t->buffer_count = 1 + workers;
    t->buffers = (trace_buffer_t*)mem_calloc(alloc, (size_t)t->buffer_count * sizeof(trace_buffer_t));
    if (!t->buffers) {
        t->buffer_count = 0;
        trace_destroy(t, alloc);
        return NULL;
    }
    for (int32_t i = 0; i < t->buffer_count; ++i) {
        /* Touch the pages now, so the first steps traced are not slowed by
         * page faults inside the spans they measure. */
        t->buffers[i].records = (trace_record_t*)mem_calloc(alloc, (size_t)capacity * sizeof(trace_record_t));
        if (!t->buffers[i].records) {
            trace_destroy(t, alloc);
            return NULL;
        }
        t->buffers[i].capacity = capacity;
    }
    return t;
}

void trace_reserve_step(trace_t* t, const allocator_t* alloc, int32_t limit)
{
    for (int32_t i = 0; i < t->buffer_count; ++i) {
        trace_buffer_t* b = &t->buffers[i];
        uint64_t offered = (uint64_t)b->count + b->dropped;
        uint64_t last = offered - b->offered_before_step;
        b->offered_before_step = offered;
        if (last > b->peak_per_step) b->peak_per_step = last;
        /* Twice the peak: a step may offer more than the last (agents
         * added, a claimed schedule cutting differently), and doubling the
         * capacity keeps the copies to a logarithmic few over a long run. */
        uint64_t need = 2 * b->peak_per_step;
        if (b->capacity >= limit || (uint64_t)(b->capacity - b->count) >= need) continue;
        int64_t grown = (int64_t)b->capacity * 2;
        if ((uint64_t)grown < (uint64_t)b->count + need) grown = (int64_t)((uint64_t)b->count + need);
        if (grown > limit) grown = limit;
        trace_record_t* fresh = (trace_record_t*)mem_calloc(alloc, (size_t)grown * sizeof(trace_record_t));
        if (!fresh) continue;
        memcpy(fresh, b->records, (size_t)b->count * sizeof(trace_record_t));
        mem_free(alloc, b->records, (size_t)b->capacity * sizeof(trace_record_t));
        b->records = fresh;
        b->capacity = (int32_t)grown;
    }
}

shoal_status_t shoal_world_set_trace_limit(shoal_world_t* w, int32_t limit)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "set_trace_limit: called from inside a step");
    if (limit < 0)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "set_trace_limit: limit must be >= 0 events, got %d",
                          (int)limit);
    w->trace_limit = limit;
    return SHOAL_OK;
}

shoal_status_t shoal_world_set_trace(shoal_world_t* w, int32_t capacity)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "set_trace: called from inside a step");
    if (capacity < 0)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "set_trace: capacity must be >= 0 events, got %d",
                          (int)capacity);
    if ((size_t)capacity > SIZE_MAX / sizeof(trace_record_t))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "set_trace: capacity %d is too large",
                          (int)capacity);
    trace_t* fresh = NULL;
    if (capacity > 0) {
        fresh = trace_create(&w->alloc, capacity, w->thread_count);
        if (!fresh)
            return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY,
                              "set_trace: out of memory for %d buffers of %d events",
                              (int)w->thread_count + 1, (int)capacity);
    }
    trace_destroy(w->trace, &w->alloc);
    w->trace = fresh;
    return SHOAL_OK;
}

int32_t shoal_world_trace_count(const shoal_world_t* w)
{
    if (!w || !w->trace) return 0;
    int64_t n = 0;
    for (int32_t i = 0; i < w->trace->buffer_count; ++i) n += w->trace->buffers[i].count;
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

uint64_t shoal_world_trace_dropped(const shoal_world_t* w)
{
    if (!w || !w->trace) return 0;
    uint64_t n = 0;
    for (int32_t i = 0; i < w->trace->buffer_count; ++i) n += w->trace->buffers[i].dropped;
    return n;
}

void shoal_world_clear_trace(shoal_world_t* w)
{
    if (!w || !w->trace || w->in_step) return;
    for (int32_t i = 0; i < w->trace->buffer_count; ++i) {
        w->trace->buffers[i].count = 0;
        w->trace->buffers[i].dropped = 0;
        w->trace->buffers[i].offered_before_step = 0;
    }
}

shoal_status_t shoal_world_trace_event(const shoal_world_t* w, int32_t index, shoal_trace_event_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "trace_event: out_event is NULL");
    int32_t count = shoal_world_trace_count(w);
    if (index < 0 || index >= count)
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "trace_event: index %d out of range 0..%d",
                           (int)index, (int)count - 1);
    const trace_t* t = w->trace;
    int32_t buffer = 0;
    while (index >= t->buffers[buffer].count) index -= t->buffers[buffer++].count;
    const trace_record_t* r = &t->buffers[buffer].records[index];
    out->name = "step";
    out->stage = SHOAL_STAGE_COUNT_;
    if (r->system_id != TRACE_STEP_ID) {
        out->name = "?";
        for (int32_t i = 0; i < w->system_count; ++i) {
            if (w->systems[i].id == r->system_id) {
                out->name = w->systems[i].name;
                out->stage = w->systems[i].stage;
                break;
            }
        }
    }
    out->worker = buffer - 1;
    out->items = r->items;
    out->step = r->step;
    out->start_ns = r->start;
    out->end_ns = r->end;
    return SHOAL_OK;
}
