/* The tracer (shoal_world_set_trace): what it records, that it never changes
 * results, and that a full buffer drops events instead of failing. Worlds
 * with OpenMP threads run only inside Criterion's forked test children. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

#define FLOCK_AGENTS 5000 /* over 4096: the spatial hash cuts two sort blocks */

/* A flock dense enough that neighbors and the spatial hash split their work
 * between two workers. */
static shoal_world_t* make_flock(int threads)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = threads;
    def.backend = threads > 1 ? SHOAL_BACKEND_OPENMP : SHOAL_BACKEND_SERIAL;
    def.seed = 11;
    def.wrap = 1;
    def.bounds_min[0] = def.bounds_min[1] = -40.0f;
    def.bounds_max[0] = def.bounds_max[1] = 40.0f;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    uint64_t s = 5;
    for (int i = 0; i < FLOCK_AGENTS; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = uniform(&s, -40.0f, 40.0f);
        d.position[1] = uniform(&s, -40.0f, 40.0f);
        d.heading = uniform(&s, -3.0f, 3.0f);
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_ALIGN] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_COHERE] = 0.5f;
        d.weights[SHOAL_BEHAVIOR_WANDER] = 0.5f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

static shoal_trace_event_t event_at(const shoal_world_t* w, int32_t i)
{
    shoal_trace_event_t e;
    cr_assert_eq(shoal_world_trace_event(w, i, &e), SHOAL_OK, "%s", shoal_world_last_error(w));
    return e;
}

TestSuite(trace, .timeout = 120);

Test(trace, off_by_default_and_argument_checks)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    populate_mixed(w, 50, 3);
    cr_assert_eq(shoal_world_step(w, 0.02f), SHOAL_OK);
    cr_expect_eq(shoal_world_trace_count(w), 0);
    cr_expect_eq(shoal_world_trace_dropped(w), 0);
    shoal_trace_event_t e;
    cr_expect_eq(shoal_world_trace_event(w, 0, &e), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_set_trace(w, -1), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_set_trace(NULL, 10), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_trace_count(NULL), 0);
    cr_assert_eq(shoal_world_set_trace(w, 100), SHOAL_OK);
    cr_expect_eq(shoal_world_trace_event(w, 0, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_assert_eq(shoal_world_step(w, 0.02f), SHOAL_OK);
    cr_expect_gt(shoal_world_trace_count(w), 0);
    shoal_world_clear_trace(w);
    cr_expect_eq(shoal_world_trace_count(w), 0);
    cr_assert_eq(shoal_world_set_trace(w, 0), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.02f), SHOAL_OK);
    cr_expect_eq(shoal_world_trace_count(w), 0, "off again: nothing recorded");
    shoal_world_destroy(w);
}

/* Set tracing from inside a step: refused. */
static shoal_status_t try_trace(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    *(shoal_status_t*)ctx = shoal_world_set_trace(w, 0);
    return SHOAL_OK;
}

Test(trace, every_enabled_system_each_step_nested_in_the_step)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    populate_mixed(w, 200, 9);
    shoal_status_t inside = SHOAL_OK;
    cr_assert_eq(shoal_world_add_system(w, "probe", SHOAL_STAGE_OBSERVE, try_trace, &inside), SHOAL_OK);
    cr_assert_eq(shoal_world_set_system_enabled(w, "wander", 0), SHOAL_OK);
    cr_assert_eq(shoal_world_set_trace(w, 4096), SHOAL_OK);
    enum { STEPS = 4 };
    for (int k = 0; k < STEPS; ++k) cr_assert_eq(shoal_world_step(w, 0.02f), SHOAL_OK);
    cr_expect_eq(inside, SHOAL_ERR_BUSY, "set_trace inside a step must be refused");

    int32_t systems = shoal_world_system_count(w);
    int32_t count = shoal_world_trace_count(w);
    cr_expect_eq(shoal_world_trace_dropped(w), 0);
    for (uint64_t step = 0; step < STEPS; ++step) {
        /* The step's span. */
        shoal_trace_event_t outer = {0};
        int steps_found = 0;
        for (int32_t i = 0; i < count; ++i) {
            shoal_trace_event_t e = event_at(w, i);
            if (e.step == step && strcmp(e.name, "step") == 0) {
                outer = e;
                steps_found++;
            }
        }
        cr_assert_eq(steps_found, 1, "step %d: one step span", (int)step);
        cr_expect_eq(outer.worker, -1);
        cr_expect_eq(outer.stage, SHOAL_STAGE_COUNT_);
        cr_expect_leq(outer.start_ns, outer.end_ns);
        for (int32_t j = 0; j < systems; ++j) {
            shoal_system_stats_t stats;
            cr_assert_eq(shoal_world_system_stats(w, j, &stats), SHOAL_OK);
            int found = 0;
            for (int32_t i = 0; i < count; ++i) {
                shoal_trace_event_t e = event_at(w, i);
                if (e.step != step || e.worker != -1 || strcmp(e.name, stats.name) != 0) continue;
                found++;
                cr_expect_eq(e.stage, stats.stage, "%s", e.name);
                cr_expect(e.start_ns >= outer.start_ns && e.end_ns <= outer.end_ns,
                          "step %d: %s not inside its step", (int)step, e.name);
                cr_expect_leq(e.start_ns, e.end_ns);
            }
            cr_expect_eq(found, stats.enabled ? 1 : 0, "step %d: system %s spans %d", (int)step, stats.name,
                         found);
        }
    }
    /* System spans of a step come in step order: stage by stage. */
    shoal_stage_t previous = SHOAL_STAGE_SENSE;
    for (int32_t i = 0; i < count; ++i) {
        shoal_trace_event_t e = event_at(w, i);
        if (e.worker != -1 || e.step != 0) continue;
        if (e.stage == SHOAL_STAGE_COUNT_) break;
        cr_expect_geq(e.stage, previous, "%s out of stage order", e.name);
        previous = e.stage;
    }
    shoal_world_destroy(w);
}

/* Block spans of `system` in `step`, summed per worker; each must lie
 * inside the system's own span. Returns the number of block spans. */
static int block_items(const shoal_world_t* w, uint64_t step, const char* system, int64_t items[2])
{
    int32_t count = shoal_world_trace_count(w);
    shoal_trace_event_t outer = {0};
    for (int32_t i = 0; i < count; ++i) {
        shoal_trace_event_t e = event_at(w, i);
        if (e.step == step && e.worker == -1 && strcmp(e.name, system) == 0) outer = e;
    }
    cr_assert_not_null(outer.name, "step %d: no %s span", (int)step, system);
    int blocks = 0;
    items[0] = items[1] = 0;
    for (int32_t i = 0; i < count; ++i) {
        shoal_trace_event_t e = event_at(w, i);
        if (e.step != step || e.worker < 0 || strcmp(e.name, system) != 0) continue;
        cr_assert_lt(e.worker, 2);
        cr_expect_eq(e.stage, outer.stage);
        cr_expect(e.start_ns >= outer.start_ns && e.end_ns <= outer.end_ns,
                  "a block span of %s outside its system's span", system);
        items[e.worker] += e.items;
        blocks++;
    }
    return blocks;
}

Test(trace, per_worker_spans_with_two_threads)
{
    shoal_world_t* w = make_flock(2);
    cr_assert_eq(shoal_world_set_trace(w, 1 << 14), SHOAL_OK);
    enum { STEPS = 3 };
    for (int k = 0; k < STEPS; ++k) cr_assert_eq(shoal_world_step(w, 0.02f), SHOAL_OK);
    cr_expect_eq(shoal_world_trace_dropped(w), 0);
    for (uint64_t step = 0; step < STEPS; ++step) {
        int64_t items[2];
        /* The spatial hash gives each worker one sort block (two blocks
         * on two threads, a static cut): both workers always show. */
        block_items(w, step, "spatial_hash", items);
        cr_expect_gt(items[0], 0, "step %d: worker 0 ran no spatial_hash block", (int)step);
        cr_expect_gt(items[1], 0, "step %d: worker 1 ran no spatial_hash block", (int)step);
        /* integrate's blocks are affine: each worker starts on its own
         * share, but one that starts late may find the other took them
         * all. Together they cover every agent once. */
        cr_expect_geq(block_items(w, step, "integrate", items), 1);
        cr_expect_eq(items[0] + items[1], FLOCK_AGENTS);
        /* neighbors' blocks are affine: which worker takes them varies,
         * but they are there. */
        cr_expect_gt(block_items(w, step, "neighbors", items), 0);
        cr_expect_gt(items[0] + items[1], 0);
    }
    shoal_world_destroy(w);
}

Test(trace, same_state_hash_with_tracing_on_and_off)
{
    for (int threads = 1; threads <= 2; ++threads) {
        shoal_world_t* off = make_flock(threads);
        shoal_world_t* on = make_flock(threads);
        /* A tiny buffer also exercises the dropping path mid-run. */
        cr_assert_eq(shoal_world_set_trace(on, threads == 1 ? 1 << 12 : 7), SHOAL_OK);
        for (int k = 0; k < 12; ++k) {
            cr_assert_eq(shoal_world_step(off, 0.02f), SHOAL_OK);
            cr_assert_eq(shoal_world_step(on, 0.02f), SHOAL_OK);
        }
        cr_expect_gt(shoal_world_trace_count(on), 0);
        cr_expect_eq(shoal_world_state_hash(on), shoal_world_state_hash(off),
                     "%d threads: tracing changed the state", threads);
        shoal_world_destroy(off);
        shoal_world_destroy(on);
    }
}

Test(trace, full_buffers_drop_and_count)
{
    shoal_world_t* w = make_flock(2);
    enum { CAPACITY = 5 };
    cr_assert_eq(shoal_world_set_trace(w, CAPACITY), SHOAL_OK);
    for (int k = 0; k < 10; ++k) cr_assert_eq(shoal_world_step(w, 0.02f), SHOAL_OK);
    int32_t count = shoal_world_trace_count(w);
    cr_expect_leq(count, CAPACITY * 3, "at most capacity per buffer (1 + 2 workers)");
    cr_expect_geq(count, CAPACITY, "the span buffer filled up");
    uint64_t dropped = shoal_world_trace_dropped(w);
    /* Ten steps have at least (systems + 1) spans each on the span buffer. */
    uint64_t spans = 10u * (uint64_t)(shoal_world_system_count(w) + 1);
    cr_expect_geq(dropped, spans - CAPACITY, "dropped %llu", (unsigned long long)dropped);
    /* The kept spans are the first ones (of step 0), still readable. */
    for (int32_t i = 0; i < count; ++i) {
        shoal_trace_event_t e = event_at(w, i);
        if (e.worker == -1) cr_expect_eq(e.step, 0, "kept spans are from the first step");
    }
    shoal_world_clear_trace(w);
    cr_expect_eq(shoal_world_trace_dropped(w), 0);
    cr_expect_eq(shoal_world_trace_count(w), 0);
    /* Turning it off and on again (another capacity) works the same. */
    cr_assert_eq(shoal_world_set_trace(w, 1 << 12), SHOAL_OK);
    cr_assert_eq(shoal_world_step(w, 0.02f), SHOAL_OK);
    cr_expect_eq(shoal_world_trace_dropped(w), 0);
    cr_expect_gt(shoal_world_trace_count(w), shoal_world_system_count(w));
    shoal_world_destroy(w);
}

/* With a growth limit the buffers grow between steps: a run far longer than
 * the first capacity keeps every event, and the world is the one an
 * untraced run reaches. A limit below what the run needs stops the growth
 * there: the rest is dropped and counted, as with fixed buffers. */
Test(trace, buffers_grow_between_steps_up_to_the_limit)
{
    enum { STEPS = 40, FIRST = 256 };
    shoal_world_t* off = make_flock(2);
    shoal_world_t* grown = make_flock(2);
    shoal_world_t* capped = make_flock(2);
    cr_assert_eq(shoal_world_set_trace_limit(grown, 1 << 20), SHOAL_OK);
    cr_assert_eq(shoal_world_set_trace(grown, FIRST), SHOAL_OK);
    /* The limit holds whichever is set first. */
    cr_assert_eq(shoal_world_set_trace(capped, FIRST), SHOAL_OK);
    cr_assert_eq(shoal_world_set_trace_limit(capped, 2 * FIRST), SHOAL_OK);
    for (int k = 0; k < STEPS; ++k) {
        cr_assert_eq(shoal_world_step(off, 0.02f), SHOAL_OK);
        cr_assert_eq(shoal_world_step(grown, 0.02f), SHOAL_OK);
        cr_assert_eq(shoal_world_step(capped, 0.02f), SHOAL_OK);
    }
    cr_expect_eq(shoal_world_trace_dropped(grown), 0, "dropped %llu events",
                 (unsigned long long)shoal_world_trace_dropped(grown));
    int32_t count = shoal_world_trace_count(grown);
    int32_t systems = shoal_world_system_count(grown);
    cr_expect_gt(count, 3 * FIRST, "%d events: the buffers did not grow", (int)count);
    /* Every step kept its step span and the worker blocks of every step. */
    int steps_seen[STEPS] = {0};
    int worker_steps[2][STEPS] = {{0}};
    for (int32_t i = 0; i < count; ++i) {
        shoal_trace_event_t e = event_at(grown, i);
        cr_assert_lt(e.step, (uint64_t)STEPS);
        if (e.worker < 0 && strcmp(e.name, "step") == 0) steps_seen[e.step]++;
        if (e.worker >= 0) worker_steps[e.worker][e.step]++;
    }
    for (int k = 0; k < STEPS; ++k) {
        cr_expect_eq(steps_seen[k], 1, "step %d: %d step spans", k, steps_seen[k]);
        cr_expect_gt(worker_steps[0][k], 0, "step %d: no blocks on worker 0", k);
        cr_expect_gt(worker_steps[1][k], 0, "step %d: no blocks on worker 1", k);
    }
    cr_expect_gt(count, STEPS * (systems + 1) / 2);
    cr_expect_eq(shoal_world_state_hash(grown), shoal_world_state_hash(off));
    cr_expect_gt(shoal_world_trace_dropped(capped), 0);
    cr_expect_leq(shoal_world_trace_count(capped), 3 * 2 * FIRST, "grew past the limit");
    int32_t spans = 0;
    for (int32_t i = 0; i < shoal_world_trace_count(capped); ++i) spans += event_at(capped, i).worker < 0;
    cr_expect_eq(spans, 2 * FIRST, "the span buffer holds %d, not the limit", (int)spans);
    cr_expect_eq(shoal_world_state_hash(capped), shoal_world_state_hash(off));
    shoal_world_destroy(off);
    shoal_world_destroy(grown);
    shoal_world_destroy(capped);
}

/* Writing a trace from inside a step: refused. */
static shoal_status_t try_write(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    *(shoal_status_t*)ctx = shoal_world_write_trace(w, "unused.json", NULL);
    return SHOAL_OK;
}

static char* slurp(const char* path)
{
    FILE* f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* text = calloc(1, (size_t)size + 1);
    cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    return text;
}

/* shoal_world_write_trace: Chrome trace-event JSON with one complete event
 * per recorded span, microseconds from the first; argument, BUSY and I/O
 * errors that leave no file behind. */
Test(trace, write_trace_as_chrome_json)
{
    shoal_world_t* w = make_flock(2);
    char dir[] = "/tmp/shoal-trace-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128], bad[160];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    snprintf(bad, sizeof bad, "%s/missing/trace.json", dir);

    cr_expect_eq(shoal_world_write_trace(NULL, path, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_write_trace(w, NULL, NULL), SHOAL_ERR_INVALID_ARGUMENT);
    cr_expect_eq(shoal_world_write_trace(w, "", NULL), SHOAL_ERR_INVALID_ARGUMENT);
    shoal_status_t inside = SHOAL_OK;
    cr_assert_eq(shoal_world_add_system(w, "writer", SHOAL_STAGE_OBSERVE, try_write, &inside), SHOAL_OK);
    cr_assert_eq(shoal_world_set_trace(w, 4096), SHOAL_OK);
    for (int k = 0; k < 3; ++k) cr_assert_eq(shoal_world_step(w, 0.02f), SHOAL_OK);
    cr_expect_eq(inside, SHOAL_ERR_BUSY);

    cr_expect_eq(shoal_world_write_trace(w, bad, "flock"), SHOAL_ERR_IO);
    cr_expect_not_null(strstr(shoal_world_last_error(w), bad), "%s", shoal_world_last_error(w));

    int32_t count = shoal_world_trace_count(w);
    cr_assert_eq(shoal_world_write_trace(w, path, "a \"quoted\" name"), SHOAL_OK, "%s",
                 shoal_world_last_error(w));
    cr_expect_eq(shoal_world_trace_count(w), count, "the events stay recorded");
    char* text = slurp(path);
    cJSON* root = cJSON_Parse(text);
    cr_assert_not_null(root, "not JSON: %.200s", text);
    const cJSON* events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    cr_assert(cJSON_IsArray(events));
    int complete = 0, threads = 0, at_zero = 0;
    const char* process = NULL;
    const cJSON* e;
    cJSON_ArrayForEach(e, events)
    {
        const char* ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
        const char* name = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;
        const cJSON* args = cJSON_GetObjectItemCaseSensitive(e, "args");
        if (strcmp(ph, "M") == 0) {
            threads += strcmp(name, "thread_name") == 0;
            if (strcmp(name, "process_name") == 0)
                process = cJSON_GetObjectItemCaseSensitive(args, "name")->valuestring;
            continue;
        }
        cr_assert_str_eq(ph, "X");
        complete++;
        double ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble;
        cr_expect_geq(ts, 0.0);
        at_zero += ts == 0.0;
        cr_expect_geq(cJSON_GetObjectItemCaseSensitive(e, "dur")->valuedouble, 0.0);
        cr_expect_lt(cJSON_GetObjectItemCaseSensitive(args, "step")->valuedouble, 3.0);
    }
    cr_expect_eq(complete, count, "one complete event per recorded span");
    cr_expect_eq(threads, 2, "one thread_name per worker");
    cr_expect_geq(at_zero, 1, "times count from the earliest event");
    cr_assert_not_null(process);
    cr_expect_str_eq(process, "a \"quoted\" name");
    cJSON_Delete(root);
    free(text);

    /* Only trace.json is left: no temporary file from the failed write. */
    DIR* d = opendir(dir);
    struct dirent* entry;
    int files = 0;
    while ((entry = readdir(d)) != NULL) files += entry->d_name[0] != '.';
    closedir(d);
    cr_expect_eq(files, 1);
    remove(path);
    rmdir(dir);
    shoal_world_destroy(w);
}
