/* World lifetime, the step, errors and accessors. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (not declared by strict C11 headers alone) */
#include "ecs/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ecs/parallel.h"
#include "ecs/trace.h"

/* A cookie in the definitions' internal_value tells a def that came from
 * shoal_*_default_def() from one that was left uninitialized. */
#define WORLD_DEF_COOKIE 0x5348574c /* "SHWL" */
#define MAX_AGENTS (INT32_MAX / 2)

const char* shoal_version(void) { return "0.1.0"; }

const char* shoal_status_string(shoal_status_t status)
{
    switch (status) {
    case SHOAL_OK: return "ok";
    case SHOAL_ERR_INVALID_ARGUMENT: return "invalid argument";
    case SHOAL_ERR_STALE_HANDLE: return "stale handle";
    case SHOAL_ERR_OUT_OF_MEMORY: return "out of memory";
    case SHOAL_ERR_PARSE: return "parse error";
    case SHOAL_ERR_IO: return "i/o error";
    case SHOAL_ERR_CAPACITY: return "capacity exceeded";
    case SHOAL_ERR_BUSY: return "busy";
    case SHOAL_ERR_NOT_FOUND: return "not found";
    }
    return "unknown status";
}

const char* shoal_backend_name(shoal_backend_t backend)
{
    switch (backend) {
    case SHOAL_BACKEND_AUTO: return "auto";
    case SHOAL_BACKEND_SERIAL: return "serial";
    case SHOAL_BACKEND_OPENMP: return "openmp";
    case SHOAL_BACKEND_HOST: return "host";
    }
    return "unknown";
}

const char* shoal_stage_name(shoal_stage_t stage)
{
    static const char* const names[SHOAL_STAGE_COUNT_] = {"sense",   "decide",    "plan",
                                                          "control", "integrate", "observe"};
    return (unsigned)stage < SHOAL_STAGE_COUNT_ ? names[stage] : "unknown";
}

/* The block of a parallel user system that this thread is running, if
 * any (world_block_enter): the world's errors raised on this thread then
 * go to the block error. Per thread, because the library's workers (OpenMP
 * threads, a host's task threads) run blocks of one loop at once. */
static _Thread_local world_block_scope_t block_scope;

/* Keep the message if its block starts before the kept one's: the lowest
 * block wins, and within a block (one thread, in order) the first error. */
static void block_error_offer(world_t* w, int32_t first, shoal_status_t status, const char* fmt, va_list ap)
{
    while (atomic_exchange_explicit(&w->block_error_lock, 1, memory_order_acquire)) {}
    if (first < w->block_error_first) {
        vsnprintf(w->block_error, sizeof w->block_error, fmt, ap);
        w->block_error_first = first;
        w->block_error_status = status;
    }
    atomic_store_explicit(&w->block_error_lock, 0, memory_order_release);
}

/* The error buffer is mutable state that even const queries report into
 * (as errno is for const-looking libc calls). */
static shoal_status_t fail_v(const world_t* cw, shoal_status_t status, const char* fmt, va_list ap)
{
    world_t* w = (world_t*)(uintptr_t)cw;
    if (block_scope.w == cw) {
        block_error_offer(w, block_scope.first, status, fmt, ap);
        return status;
    }
    vsnprintf(w->error, sizeof w->error, fmt, ap);
    w->error_count++;
    return status;
}

shoal_status_t world_fail(world_t* w, shoal_status_t status, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(w, status, fmt, ap);
    va_end(ap);
    return status;
}

shoal_status_t world_failc(const world_t* w, shoal_status_t status, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(w, status, fmt, ap);
    va_end(ap);
    return status;
}

void world_block_errors_begin(world_t* w)
{
    atomic_store_explicit(&w->block_error_lock, 0, memory_order_relaxed);
    w->block_error_first = INT32_MAX;
}

world_block_scope_t world_block_enter(const world_t* w, int32_t first)
{
    world_block_scope_t outer = block_scope;
    block_scope = (world_block_scope_t){w, first};
    return outer;
}

void world_block_leave(world_block_scope_t outer) { block_scope = outer; }

void world_block_errors_end(world_t* w, const char* system_name)
{
    if (w->block_error_first == INT32_MAX) return;
    w->block_error_first = INT32_MAX;
    world_fail(w, w->block_error_status, "system '%s': %s", system_name, w->block_error);
}

uint64_t world_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

shoal_status_t error_set(shoal_error_t* err, shoal_status_t status, const char* fmt, ...)
{
    if (err) {
        err->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

shoal_world_def_t shoal_world_default_def(void)
{
    shoal_world_def_t def;
    memset(&def, 0, sizeof def);
    def.dimensions = 2;
    def.seed = 1;
    def.thread_count = 0;
    def.backend = SHOAL_BACKEND_AUTO;
    def.initial_capacity = 1024;
    def.reorder_interval = 32;
    def.internal_value = WORLD_DEF_COOKIE;
    return def;
}

/* Thread count from $SHOAL_THREADS: 0 when unset, -1 when malformed. */
static int32_t env_threads(const char** text)
{
    const char* s = getenv("SHOAL_THREADS");
    *text = s;
    if (!s || !*s) return 0;
    char* end = NULL;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < 1 || v > SHOAL_MAX_THREADS) return -1;
    return (int32_t)v;
}

shoal_status_t shoal_world_create(const shoal_world_def_t* def, shoal_world_t** out_world, shoal_error_t* err)
{
    return world_create_with(def, builtin_registry(), out_world, err);
}

shoal_status_t world_create_with(const shoal_world_def_t* def, const registry_t* registry,
                                 shoal_world_t** out_world, shoal_error_t* err)
{
    if (err) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    if (!out_world) return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_create: out_world is NULL");
    *out_world = NULL;
    if (!def) return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_create: def is NULL");
    int32_t components = 0;
    int modules_fit = registry && registry->module_count <= WORLD_MAX_MODULES;
    int tables = 1; /* every component declares its columns (module_t.columns) */
    for (int32_t m = 0; modules_fit && m < registry->module_count; ++m) {
        components += registry->modules[m]->column_count > 0;
        tables &= registry->modules[m]->column_count <= 0 || registry->modules[m]->columns != NULL;
    }
    if (modules_fit && !tables)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: a module of the registry has a component but no column table");
    if (!modules_fit || components > WORLD_MAX_COMPONENTS || registry->system_count > WORLD_MAX_SYSTEMS)
        return error_set(err, SHOAL_ERR_CAPACITY,
                         "world_create: a registry has at most %d modules, %d of them with a component, and "
                         "%d systems",
                         WORLD_MAX_MODULES, WORLD_MAX_COMPONENTS, WORLD_MAX_SYSTEMS);
    if (def->internal_value != WORLD_DEF_COOKIE)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: def was not initialized with shoal_world_default_def()");
    if (def->dimensions != 2 && def->dimensions != 3)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_create: dimensions must be 2 or 3, got %d",
                         (int)def->dimensions);
    if (def->thread_count < 0 || def->thread_count > SHOAL_MAX_THREADS)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: thread_count must be in 0..%d (0 = automatic), got %d",
                         SHOAL_MAX_THREADS, (int)def->thread_count);
    if (def->initial_capacity < 0 || def->initial_capacity > MAX_AGENTS)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: initial_capacity must be in 0..%d, got %d", MAX_AGENTS,
                         (int)def->initial_capacity);
    if (def->reorder_interval < 0)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: reorder_interval must be >= 0 steps, got %d",
                         (int)def->reorder_interval);
    if (!isfinite(def->cell_size) || def->cell_size < 0.0f)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: cell_size must be finite and >= 0 m (0 = automatic), got %g",
                         (double)def->cell_size);
    for (int k = 0; k < def->dimensions; ++k) {
        if (!isfinite(def->bounds_min[k]) || !isfinite(def->bounds_max[k]))
            return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                             "world_create: bounds_min[%d] and bounds_max[%d] must be finite", k, k);
        if (def->wrap && !(def->bounds_max[k] > def->bounds_min[k]))
            return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                             "world_create: with wrap, bounds_max[%d] (%g) must be > bounds_min[%d] (%g)", k,
                             (double)def->bounds_max[k], k, (double)def->bounds_min[k]);
    }
    if ((def->alloc == NULL) != (def->free == NULL))
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: alloc and free hooks must be given together");
    if ((def->enqueue_task == NULL) != (def->finish_task == NULL))
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: enqueue_task and finish_task must be given together");
    if ((unsigned)def->backend > SHOAL_BACKEND_HOST)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_create: unknown backend %d",
                         (int)def->backend);
    if (def->backend == SHOAL_BACKEND_HOST && !def->enqueue_task)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                         "world_create: backend HOST needs enqueue_task and finish_task");

    int32_t threads = def->thread_count;
    void* topology = NULL;
    int auto_threads = 0;
    if (threads == 0) {
        const char* text = NULL;
        threads = env_threads(&text);
        auto_threads = threads == 0;
        if (threads < 0)
            return error_set(err, SHOAL_ERR_INVALID_ARGUMENT,
                             "world_create: SHOAL_THREADS='%s' is not a thread count (expected 1..%d)", text,
                             SHOAL_MAX_THREADS);
    }
    if (threads == 0 || def->bind_threads) {
        int32_t cores = par_physical_cores(&topology);
        /* A machine with more cores than the limit gets the limit. */
        if (threads == 0) threads = cores < SHOAL_MAX_THREADS ? cores : SHOAL_MAX_THREADS;
    }

    allocator_t alloc = allocator_default();
    if (def->alloc) {
        alloc.alloc = def->alloc;
        alloc.free = def->free;
        alloc.ctx = def->alloc_user_ctx;
    }
    world_t* w = (world_t*)mem_calloc(&alloc, sizeof *w);
    if (!w) {
        par_release_topology(topology);
        return error_set(err, SHOAL_ERR_OUT_OF_MEMORY, "world_create: out of memory");
    }
    w->alloc = alloc;
    w->dims = def->dimensions;
    w->seed = def->seed;
    /* The tag only tells worlds apart for foreign-handle checks; it never
     * enters simulation state. */
    world_tag_claim(w);
    w->free_head = UINT32_MAX;
    w->structure_version = 1;
    w->thread_count = threads;
    w->par_spin = par_spin_from_env();
    w->par_procs = par_processors(topology);
    w->par_auto.on = auto_threads;
    w->par_auto.used = -1;
    w->par_auto.min_step_ns = PAR_AUTO_MIN_STEP_NS;
    w->topology = topology;
    w->bind_threads = def->bind_threads;
    w->enqueue_task = def->enqueue_task;
    w->finish_task = def->finish_task;
    w->task_user_ctx = def->task_user_ctx;
    shoal_backend_t backend = def->backend;
    if (backend == SHOAL_BACKEND_AUTO)
        backend = def->enqueue_task ? SHOAL_BACKEND_HOST
                  : threads > 1     ? SHOAL_BACKEND_OPENMP
                                    : SHOAL_BACKEND_SERIAL;
    if (backend == SHOAL_BACKEND_SERIAL) w->thread_count = 1;
    w->backend = backend;

    w->wrap = def->wrap != 0;
    for (int k = 0; k < 3; ++k) {
        w->bounds_min[k] = k < w->dims ? def->bounds_min[k] : 0.0f;
        w->bounds_max[k] = k < w->dims ? def->bounds_max[k] : 0.0f;
    }
    w->cell_size = def->cell_size;
    w->reorder_interval = def->reorder_interval;

    /* 3D-only columns take no memory in a 2D world. */
    uint16_t sizes[AC_COUNT_];
    for (int c = 0; c < AC_COUNT_; ++c) sizes[c] = agent_column_used(w->dims, c) ? sizeof(float) : 0;
    sizes[AC_SLOT] = sizeof(uint32_t);
    sizes[AC_GROUP] = sizeof(uint32_t);
    sizes[AC_ID_LO] = sizes[AC_ID_HI] = sizeof(uint32_t);

    table_init(&w->agents, sizes, AC_COUNT_);
    /* Every module's component, numbered in registry order; every column of
     * a component is 4 bytes wide. */
    w->registry = registry;
    uint16_t four[TABLE_MAX_COLUMNS];
    for (int c = 0; c < TABLE_MAX_COLUMNS; ++c) four[c] = 4;
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->column_count <= 0) continue;
        component_init(&w->comps[w->comp_count], four, mod->column_count);
        w->comp_module[w->comp_count++] = mod;
    }

    int32_t cap = def->initial_capacity > 0 ? def->initial_capacity : 16;
    w->slots = (slot_t*)mem_calloc(&alloc, (size_t)cap * sizeof(slot_t));
    /* Set before the check: destroying a half-made world hands the free
     * hook the size the block was allocated with. */
    w->slot_capacity = w->slots ? cap : 0;
    /* The agent table is zeroed on the workers: a big initial capacity is
     * gigabytes of fresh pages. */
    int ok = w->slots && world_table_reserve(w, &w->agents, cap, INT32_MAX) && world_reserve_row_mask(w) &&
             id_map_reserve(&w->ids, &alloc, (uint64_t)cap);
    for (int32_t m = 0; ok && m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->init) ok = mod->init(w);
    }
    if (!ok) {
        shoal_world_destroy(w);
        return error_set(err, SHOAL_ERR_OUT_OF_MEMORY, "world_create: out of memory reserving %d agents",
                         (int)cap);
    }
    w->trace_system = -1;
    w->census_system = -1;
    world_register_builtin_systems(w);
    *out_world = w;
    return SHOAL_OK;
}

void shoal_world_destroy(shoal_world_t* w)
{
    if (!w) return;
    /* From inside its own step the world is still in use by the step that
     * called the system: the call is ignored (and said so), as SQLite's
     * close refuses while statements run. */
    if (w->in_step) {
        world_fail(w, SHOAL_ERR_BUSY, "world_destroy: called from inside a step; ignored");
        return;
    }
    if (w->census) par_census_set(w, NULL); /* its buffers are the world's */
    allocator_t alloc = w->alloc;
    table_release(&w->agents, &alloc);
    user_release(w);
    mem_free(&alloc, w->row_mask, w->row_mask_words * sizeof *w->row_mask);
    world_set_write_check(w, 0);
    for (int k = 0; k < w->comp_count; ++k) component_release(&w->comps[k], &alloc);
    /* A world that failed half-way through its creation has a registry
     * whose modules may hold no data yet: release hooks accept that. */
    for (int32_t m = 0; w->registry && m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->release) mod->release(w);
    }
    mem_free(&alloc, w->slots, (size_t)w->slot_capacity * sizeof(slot_t));
    id_map_release(&w->ids, &alloc);
    mem_free(&alloc, w->commands, (size_t)w->command_capacity * sizeof(command_t));
    par_release_topology(w->topology);
    trace_destroy(w->trace, &alloc);
    world_tag_release(w);
    mem_free(&alloc, w, sizeof *w);
}

shoal_status_t shoal_world_step(shoal_world_t* w, float dt)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "world_step: called from inside a step");
    /* Bounds both ways: dt = 1e38 moved agents to inf (speed * dt), and
     * dt = 1e-40 made 1 / dt and contact velocities inf. */
    if (!(dt >= WORLD_MIN_DT) || !isfinite(dt) || dt > WORLD_MAX_DT)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "world_step: dt must be finite, >= %g and <= %g seconds, got %g",
                          (double)WORLD_MIN_DT, (double)WORLD_MAX_DT, (double)dt);
    /* Memory the built-in systems may need is grown before the first stage,
     * so that running out of it fails the step before anything changed
     * (the spatial hash, the first system, grows its own before it writes). */
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        w->reserve_status = SHOAL_ERR_OUT_OF_MEMORY;
        if (mod->reserve_step && !mod->reserve_step(w)) return w->reserve_status;
    }
    if (w->trace && w->trace_limit > 0) trace_reserve_step(w->trace, &w->alloc, w->trace_limit);
    w->in_step = 1;
    uint64_t trace_start = w->trace ? world_now_ns() : 0;
    int32_t agents_before = w->agents.count;
    shoal_status_t status = SHOAL_OK;
    /* With OpenMP workers the step holds them in one parallel region
     * (par_region) instead of forking and joining at every loop; user
     * systems run between regions, where their own OpenMP loops get the
     * threads. */
    step_cursor_t cursor = {dt, 0, 0, SHOAL_OK};
    par_auto_begin(w);
    for (;;) {
        par_region(w, world_run_step, &cursor);
        if (cursor.stage >= SHOAL_STAGE_COUNT_ || cursor.status != SHOAL_OK) break;
        shoal_status_t st = world_run_system(w, &w->systems[cursor.next], dt);
        cursor.next = st == SHOAL_OK ? cursor.next + 1 : w->system_count;
        cursor.status = st;
    }
    status = cursor.status;
    par_auto_end(w);
    if (w->trace)
        trace_record(w->trace, 0, TRACE_STEP_ID, agents_before, w->step_count, trace_start, world_now_ns());
    w->in_step = 0;
    if (status == SHOAL_OK) {
        w->step_count++;
        w->time += (double)dt;
    }
    return status;
}

const char* shoal_world_last_error(const shoal_world_t* w) { return w ? w->error : "world is NULL"; }
int32_t shoal_world_dimensions(const shoal_world_t* w) { return w ? w->dims : 0; }
int32_t shoal_world_agent_count(const shoal_world_t* w) { return w ? w->agents.count : 0; }
int32_t shoal_world_thread_count(const shoal_world_t* w) { return w ? w->thread_count : 0; }
shoal_backend_t shoal_world_backend(const shoal_world_t* w) { return w ? w->backend : SHOAL_BACKEND_SERIAL; }
uint64_t shoal_world_step_count(const shoal_world_t* w) { return w ? w->step_count : 0; }
double shoal_world_time(const shoal_world_t* w) { return w ? w->time : 0.0; }

void world_rows_of_stored_ids(const world_t* w, const uint32_t* lo, const uint32_t* hi, int32_t n,
                              int32_t* rows)
{
    for (int32_t i = 0; i < n; ++i) id_map_prefetch(&w->ids, ((uint64_t)hi[i] << 32 | lo[i]) - 1);
    for (int32_t i = 0; i < n; ++i) {
        uint64_t stored = (uint64_t)hi[i] << 32 | lo[i];
        rows[i] = stored ? (int32_t)id_map_find(&w->ids, stored - 1) : -1; /* the slot, for now */
        if (rows[i] >= 0) __builtin_prefetch(&w->slots[rows[i]]);
    }
    for (int32_t i = 0; i < n; ++i) {
        if (rows[i] < 0) continue;
        const slot_t* s = &w->slots[rows[i]];
        rows[i] = s->state == SLOT_LIVE ? s->row : -1;
    }
}

int agent_column_used(int dims, int col)
{
    if (dims == 3) return 1;
    switch (col) {
    case AC_POS_Z:
    case AC_VEL_Z:
    case AC_QW:
    case AC_QX:
    case AC_QY:
    case AC_QZ:
    case AC_OMEGA_X:
    case AC_OMEGA_Y:
    case AC_DESIRED_Z:
    case AC_FORCE_Z:
    case AC_TORQUE_X:
    case AC_TORQUE_Y:
    case AC_TARGET_Z:
    case AC_THREAT_Z: return 0;
    default: return 1;
    }
}
