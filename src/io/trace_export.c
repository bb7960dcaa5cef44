/* Chrome trace-event JSON export of the tracer's events
 * (shoal_world_write_trace; the recorder itself is src/ecs/trace.c).
 *
 * Decisions worth knowing:
 * - The "JSON object format" of the trace-event spec: metadata naming the
 *   process and each worker thread, then complete ("X") events. Perfetto
 *   and chrome://tracing both open it.
 * - A step and its system spans go on the stepping thread, which is worker 0
 *   (tid 0), so worker 0's block spans nest inside their system's span.
 * - Timestamps are microseconds from the earliest event, so a trace reads
 *   from 0 whatever the monotonic clock's origin.
 * - Events go through shoal_world_trace_event, so a trace lists them in the
 *   documented order and with the same names as the API.
 * - The file is streamed (a full trace is millions of events, too much to
 *   build in memory first) into a temporary file renamed into place, so a
 *   failed or interrupted write never leaves half a trace under `path`. */
#include <inttypes.h>
#include <stdio.h>

#include "shoal/shoal.h"

#include "ecs/world.h"
#include "io/atomic_file.h"

/* A JSON string (quotes included) for a system or process name. */
static void put_json_string(FILE* f, const char* text)
{
    fputc('"', f);
    for (const unsigned char* c = (const unsigned char*)text; *c != '\0'; ++c) {
        if (*c == '"' || *c == '\\') {
            fprintf(f, "\\%c", *c);
        } else if (*c < 0x20) {
            fprintf(f, "\\u%04x", *c);
        } else {
            fputc(*c, f);
        }
    }
    fputc('"', f);
}

static void write_events(FILE* f, const shoal_world_t* world, const char* process_name)
{
    int32_t count = shoal_world_trace_count(world);
    uint64_t origin = UINT64_MAX;
    for (int32_t i = 0; i < count; ++i) {
        shoal_trace_event_t e;
        if (shoal_world_trace_event(world, i, &e) == SHOAL_OK && e.start_ns < origin) {
            origin = e.start_ns;
        }
    }
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
    fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":", f);
    put_json_string(f, process_name);
    fputs("}}", f);
    int32_t threads = shoal_world_thread_count(world);
    for (int32_t t = 0; t < threads; ++t) {
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%" PRId32
                ",\"args\":{\"name\":\"worker %" PRId32 "%s\"}}",
                t, t, t == 0 ? " (stepping thread)" : "");
        fprintf(f,
                ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%" PRId32
                ",\"args\":{\"sort_index\":%" PRId32 "}}",
                t, t);
    }
    for (int32_t i = 0; i < count; ++i) {
        shoal_trace_event_t e;
        if (shoal_world_trace_event(world, i, &e) != SHOAL_OK) {
            continue;
        }
        const char* category = e.stage == SHOAL_STAGE_COUNT_ ? "step" : shoal_stage_name(e.stage);
        fputs(",\n{\"name\":", f);
        put_json_string(f, e.name);
        fputs(",\"cat\":", f);
        put_json_string(f, category);
        fprintf(f,
                ",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%" PRId32
                ",\"args\":{\"step\":%" PRIu64 ",\"%s\":%" PRId32 "}}",
                (double)(e.start_ns - origin) * 1e-3, (double)(e.end_ns - e.start_ns) * 1e-3,
                e.worker > 0 ? e.worker : 0, e.step, e.worker >= 0 ? "items" : "agents", e.items);
    }
    fputs("\n]}\n", f);
}

shoal_status_t shoal_world_write_trace(const shoal_world_t* w, const char* path, const char* process_name)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!path || !path[0])
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "write_trace: path is %s", path ? "empty" : "NULL");
    /* Workers write their buffers while a step runs. */
    if (w->in_step) return world_failc(w, SHOAL_ERR_BUSY, "write_trace: called from inside a step");
    char msg[480];
    atomic_file_t file;
    if (atomic_file_open(&file, path, msg, sizeof msg) != 0)
        return world_failc(w, SHOAL_ERR_IO, "write_trace: %s", msg);
    write_events(file.f, w, process_name ? process_name : "shoal");
    if (atomic_file_commit(&file, msg, sizeof msg) != 0)
        return world_failc(w, SHOAL_ERR_IO, "write_trace: %s", msg);
    return SHOAL_OK;
}
