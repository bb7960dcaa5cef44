/* Systems and stages. Systems sit in one array kept in step order: by stage,
 * then by registration within the stage. A stage runs its enabled systems in
 * that order, timing each call. */
#include <stdio.h>
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/trace.h"
#include "ecs/write_check.h"
#include "ecs/world.h"

shoal_status_t world_register_system(world_t* w, const char* name, shoal_stage_t stage, system_run_fn* run,
                                     shoal_system_fn* user_fn, void* ctx)
{
    if (!name || !*name) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "add_system: name is empty");
    if (strlen(name) >= SYSTEM_NAME_MAX)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "add_system: name '%s' is longer than %d characters",
                          name, SYSTEM_NAME_MAX - 1);
    if ((unsigned)stage >= SHOAL_STAGE_COUNT_)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "add_system: unknown stage %d", (int)stage);
    for (int32_t i = 0; i < w->system_count; ++i)
        if (strcmp(w->systems[i].name, name) == 0)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "add_system: a system named '%s' already exists",
                              name);
    if (w->system_count >= WORLD_MAX_SYSTEMS)
        return world_fail(w, SHOAL_ERR_CAPACITY, "add_system: at most %d systems", WORLD_MAX_SYSTEMS);
    int32_t at = w->system_count;
    while (at > 0 && w->systems[at - 1].stage > stage) --at;
    memmove(&w->systems[at + 1], &w->systems[at], (size_t)(w->system_count - at) * sizeof(system_t));
    system_t* s = &w->systems[at];
    memset(s, 0, sizeof *s);
    strcpy(s->name, name);
    s->stage = stage;
    s->enabled = 1;
    s->run = run;
    s->user_fn = user_fn;
    s->ctx = ctx;
    s->comp = -1;
    s->id = w->system_count; /* systems are never removed: counts are unique */
    w->system_count++;
    return SHOAL_OK;
}

typedef struct block_ctx {
    world_t* w;
    const system_t* s;
    const int32_t* rows; /* a component's agent rows, or NULL */
} block_ctx_t;

static void run_block(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    block_ctx_t* c = (block_ctx_t*)vctx;
    shoal_block_t b = {c->rows ? 0 : begin, end - begin, c->rows ? c->rows + begin : NULL, worker};
    world_block_scope_t outer = world_block_enter(c->w, begin);
    c->s->block_fn(c->w, &b, c->s->ctx);
    world_block_leave(outer);
}

/* A parallel user system: its blocks through the one parallel-for. */
static int64_t run_block_system(world_t* w, const system_t* s)
{
    block_ctx_t c = {w, s, NULL};
    int32_t count = w->agents.count;
    if (s->block_comp >= 0) {
        const component_t* comp = &w->comps[s->block_comp];
        count = comp->table.count;
        c.rows = TABLE_COL(&comp->table, const int32_t, COMP_ROW);
    }
    if (count > 0) {
        /* Errors raised in the blocks are kept per block and recorded once
         * the loop is over (world_block_errors_begin). */
        world_block_errors_begin(w);
        par_for(w, count, s->min_block, PAR_STATIC, run_block, &c);
        world_block_errors_end(w, s->name);
    }
    return count;
}

int32_t world_module_component(const world_t* w, const module_t* m)
{
    for (int32_t k = 0; m && k < w->comp_count; ++k)
        if (w->comp_module[k] == m) return k;
    return -1;
}

int system_idle(const world_t* w, const system_t* s)
{
    if (s->idle) return s->idle(w);
    return s->comp >= 0 && w->comps[s->comp].table.count == 0;
}

shoal_status_t world_run_system(world_t* w, system_t* s, float dt)
{
    /* A user system cannot turn tracing on or off (BUSY in a step), so
     * the pointer read here holds for the whole call. */
    trace_t* trace = w->trace;
    if (trace) w->trace_system = s->id;
    const int32_t census_before = w->census_system;
    if (w->census) w->census_system = (int32_t)(s - w->systems);
    uint64_t t0 = world_now_ns();
    int64_t touched;
    uint32_t errors_before = 0;
    if (s->block_fn) {
        touched = run_block_system(w, s);
    } else if (s->user_fn) {
        errors_before = w->error_count;
        shoal_status_t st = s->user_fn(w, dt, s->ctx);
        touched = st == SHOAL_OK ? 0 : -(int64_t)st;
    } else if (w->write_check) {
        touched = write_check_run(w, s, dt);
    } else {
        w->running_without = s->without;
        touched = s->run(w, dt, s->ctx);
        w->running_without = 0;
    }
    uint64_t t1 = world_now_ns();
    w->census_system = census_before;
    s->ns_total += t1 - t0;
    s->calls++;
    if (trace) {
        w->trace_system = -1;
        trace_record(trace, 0, s->id,
                     touched > INT32_MAX ? INT32_MAX
                     : touched > 0       ? (int32_t)touched
                                         : 0,
                     w->step_count, t0, t1);
    }
    if (touched < 0) {
        /* A user system that returns a library call's failure keeps
         * that call's message (what, where), prefixed with the system. */
        if (s->user_fn && w->error_count != errors_before) {
            char inner[sizeof w->error];
            memcpy(inner, w->error, sizeof inner);
            world_fail(w, (shoal_status_t)(-touched), "system '%s' failed: %s", s->name, inner);
        } else if (w->error[0] == '\0' || s->user_fn) {
            world_fail(w, (shoal_status_t)(-touched), "system '%s' failed: %s", s->name,
                       shoal_status_string((shoal_status_t)(-touched)));
        }
        return (shoal_status_t)(-touched);
    }
    s->agents += (uint64_t)touched;
    return SHOAL_OK;
}

/* ---- Fused passes ----------------------------------------------------------
 *
 * Built-in systems that are passes over every agent row (system_def_t.rows:
 * wander when its component is on every agent in agent-row order, control,
 * integrate, and wrap on a torus) run as one pass when nothing runs
 * between them: each block of FUSE_ROWS rows goes through the first
 * system's pass, then the next's, while its columns are still in the
 * core's cache, instead of the whole table streaming through each system
 * in turn (at 10M agents a row's velocity, heading and forces are read
 * from memory once instead of twice, and the wander term added to the
 * desired velocity is read back by control from the cache), and four
 * parallel loops become one. A row's values are those of the passes run
 * one after the other: each reads and writes only its own row, in the same
 * order. Between the passes there may be only systems that are disabled or
 * idle this step (system_idle: their module's component empty, so no
 * pursuit, follow, directed-seek, avoid, crowd, planner or ground rows; or
 * their own idle: no contact rows, no moving obstacle), which still run
 * after the fused pass and change nothing that
 * a pass reads (dseek notes that it planned no rows, which only the idle
 * dseek_track, after it, reads), and a stage's end with no commands to
 * apply. Every pass must cover every row: no agent of a component it
 * leaves out, and a component's pass only while its rows are the agent
 * rows (system_def_t.covers).
 *
 * Timing: the fused pass is timed as a whole, and the workers time each
 * system's part of one block in FUSE_SAMPLE; a system's time is the pass's
 * time split in those shares (its calls and agents as if it ran alone).
 * While a trace records, passes are not fused, so that each system has its
 * own interval; nor while the write check is on (world_set_write_check),
 * so that each system is checked alone. */
#define FUSE_MAX 4
#define FUSE_ROWS 1024 /* PAR_AFFINE's blocks are 1024 rows: one each */
#define FUSE_SAMPLE 8

typedef struct fused_ctx {
    int32_t count;
    rows_fn* fn[FUSE_MAX];
    void* ctx[FUSE_MAX];
    uint64_t (*ns)[FUSE_MAX]; /* per worker */
} fused_ctx_t;

static void fused_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    fused_ctx_t* f = (fused_ctx_t*)vctx;
    uint64_t* ns = f->ns[worker];
    for (int32_t b = begin; b < end; b += FUSE_ROWS) {
        int32_t e = end - b > FUSE_ROWS ? b + FUSE_ROWS : end;
        /* The shares from one block in FUSE_SAMPLE (by position, so the
         * same blocks at any thread count): a clock read costs 20 to 40 ns,
         * a block of a pass a few microseconds. */
        if ((b / FUSE_ROWS) % FUSE_SAMPLE != 0) {
            for (int32_t k = 0; k < f->count; ++k) f->fn[k](b, e, worker, f->ctx[k]);
            continue;
        }
        uint64_t t = world_now_ns();
        for (int32_t k = 0; k < f->count; ++k) {
            f->fn[k](b, e, worker, f->ctx[k]);
            uint64_t u = world_now_ns();
            ns[k] += u - t;
            t = u;
        }
    }
}

/* Whether pass s covers every agent row this step: a pass over agent rows
 * when none of the components it leaves out has a row, a pass over a
 * component's rows when its `covers` says they are the agent rows. */
static int covers_every_row(world_t* w, const system_t* s)
{
    if (s->covers) return s->covers(w);
    for (int32_t k = 0; k < w->comp_count; ++k)
        if ((s->without >> k & 1u) && w->comps[k].table.count > 0) return 0;
    return 1;
}

/* From system index `first` (a pass), the systems that fuse with it: the
 * passes into pass[], every system between them into between[]; returns
 * the index of the last pass, or -1 when fewer than two passes fuse. */
static int32_t fuse_chain(world_t* w, int32_t first, int32_t* pass, int32_t* npass, int32_t* between,
                          int32_t* nbetween)
{
    *npass = *nbetween = 0;
    if (w->trace || w->write_check || w->agents.count == 0 || !covers_every_row(w, &w->systems[first]))
        return -1;
    pass[(*npass)++] = first;
    int32_t last = first;
    for (int32_t j = first + 1; j < w->system_count && *npass < FUSE_MAX; ++j) {
        const system_t* t = &w->systems[j];
        /* A stage's end between them applies its commands: only when there
         * are none (nothing that runs in a chain queues any). */
        if (t->stage != w->systems[j - 1].stage && w->command_count != 0) break;
        if (!t->enabled) continue;
        if (t->user_fn || t->block_fn) break;
        if (system_idle(w, t)) continue; /* wrap without a torus too */
        if (t->rows && covers_every_row(w, t)) {
            for (int32_t k = last + 1; k < j; ++k)
                if (w->systems[k].enabled) between[(*nbetween)++] = k;
            pass[(*npass)++] = j;
            last = j;
            continue;
        }
        break;
    }
    return *npass >= 2 ? last : -1;
}

/* A pass with nothing to run this step (its rows gave NULL). */
static void rows_none(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    (void)begin;
    (void)end;
    (void)worker;
    (void)ctx;
}

static shoal_status_t run_fused(world_t* w, const int32_t* pass, int32_t npass, const int32_t* between,
                                int32_t nbetween, float dt)
{
    _Alignas(64) unsigned char ctx[FUSE_MAX][ROWS_CTX_BYTES];
    fused_ctx_t f;
    f.count = npass;
    for (int32_t k = 0; k < npass; ++k) {
        f.ctx[k] = ctx[k];
        f.fn[k] = w->systems[pass[k]].rows(w, dt, ctx[k]);
        if (!f.fn[k]) f.fn[k] = rows_none;
    }
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    uint64_t ns[SHOAL_MAX_THREADS][FUSE_MAX];
    /* (neighbors_run and contacts keep per-worker tables this size on the
     * stack too) */
    memset(ns, 0, (size_t)workers * sizeof ns[0]);
    f.ns = ns;
    int32_t n = w->agents.count;
    if (w->census) { /* its name in the census: "fused: a+b+..." */
        int at = snprintf(w->census_fused, sizeof w->census_fused, "fused: ");
        for (int32_t k = 0; k < npass && at > 0 && (size_t)at < sizeof w->census_fused; ++k)
            at += snprintf(w->census_fused + at, sizeof w->census_fused - (size_t)at, "%s%s", k ? "+" : "",
                           w->systems[pass[k]].name);
        w->census_system = -2;
    }
    uint64_t t0 = world_now_ns();
    par_for(w, n, 1024, PAR_AFFINE, fused_range, &f);
    uint64_t wall = world_now_ns() - t0;
    if (w->census) w->census_system = -1;
    w->fused_passes++;
    w->fused_systems += (uint64_t)npass;
    uint64_t share[FUSE_MAX] = {0}, sum = 0;
    for (int32_t k = 0; k < npass; ++k) {
        for (int32_t i = 0; i < workers; ++i) share[k] += ns[i][k];
        sum += share[k];
    }
    for (int32_t k = 0; k < npass; ++k) {
        system_t* s = &w->systems[pass[k]];
        s->ns_total +=
            sum > 0 ? (uint64_t)((double)wall * (double)share[k] / (double)sum) : wall / (uint64_t)npass;
        s->calls++;
        s->fused_calls++;
        if (f.fn[k] != rows_none) s->agents += (uint64_t)n;
    }
    /* The idle systems between them: nothing to do, counted as run. */
    for (int32_t k = 0; k < nbetween; ++k) {
        shoal_status_t st = world_run_system(w, &w->systems[between[k]], dt);
        if (st != SHOAL_OK) return st;
    }
    return SHOAL_OK;
}

shoal_status_t world_run_step(world_t* w, void* cursor)
{
    step_cursor_t* c = (step_cursor_t*)cursor;
    while (c->stage < SHOAL_STAGE_COUNT_) {
        for (; c->next < w->system_count; ++c->next) {
            system_t* s = &w->systems[c->next];
            if (s->stage != (shoal_stage_t)c->stage || !s->enabled) continue;
            /* Inside a region a user system's own OpenMP loops would get
             * a team of one: the caller runs it outside. */
            if (s->user_fn && w->team) return SHOAL_OK;
            if (s->rows) {
                int32_t pass[FUSE_MAX], between[WORLD_MAX_SYSTEMS], npass, nbetween;
                int32_t last = fuse_chain(w, c->next, pass, &npass, between, &nbetween);
                if (last >= 0) {
                    shoal_status_t st = run_fused(w, pass, npass, between, nbetween, c->dt);
                    /* The stages it crossed end here: their commands (none). */
                    while (st == SHOAL_OK && c->stage < (int32_t)w->systems[last].stage) {
                        st = world_apply_commands(w);
                        c->stage++;
                    }
                    c->next = last;
                    if (st != SHOAL_OK) {
                        c->status = st;
                        break;
                    }
                    continue;
                }
            }
            shoal_status_t st = world_run_system(w, s, c->dt);
            if (st != SHOAL_OK) {
                c->status = st;
                break;
            }
        }
        /* A stage's commands apply after it, also when one of its systems
         * failed; the step stops after a failure. */
        shoal_status_t applied = world_apply_commands(w);
        if (c->status == SHOAL_OK) c->status = applied;
        c->stage++;
        c->next = 0;
        if (c->status != SHOAL_OK) break;
    }
    return c->status;
}

shoal_status_t shoal_world_add_system(shoal_world_t* w, const char* name, shoal_stage_t stage,
                                      shoal_system_fn* fn, void* user_ctx)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "add_system: called from inside a step");
    if (!fn) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "add_system: fn is NULL");
    return world_register_system(w, name, stage, NULL, fn, user_ctx);
}

shoal_status_t shoal_world_add_parallel_system(shoal_world_t* w, const char* name, shoal_stage_t stage,
                                               const char* component, int32_t min_block, shoal_block_fn* fn,
                                               void* user_ctx)
{
    static const char* where = "add_parallel_system";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (!fn) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: fn is NULL", where);
    if (min_block < 0)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: min_block must be >= 0 (0 = 1024), got %d",
                          where, (int)min_block);
    int32_t comp = -1;
    if (component) {
        for (int32_t k = 0; k < w->comp_count; ++k)
            if (strcmp(w->comp_module[k]->name, component) == 0) comp = k;
        if (comp < 0)
            return world_fail(w, SHOAL_ERR_NOT_FOUND,
                              "%s: no built-in component named '%s' (neighbors, wander, pursuit, follow, "
                              "avoid, dseek, ground, planner)",
                              where, component);
    }
    shoal_status_t st = world_register_system(w, name, stage, NULL, NULL, user_ctx);
    if (st != SHOAL_OK) return st;
    for (int32_t i = 0; i < w->system_count; ++i) {
        system_t* s = &w->systems[i];
        if (strcmp(s->name, name) != 0) continue;
        s->block_fn = fn;
        s->block_comp = comp;
        s->min_block = min_block > 0 ? min_block : 1024;
    }
    return SHOAL_OK;
}

int32_t shoal_world_system_count(const shoal_world_t* w) { return w ? w->system_count : 0; }

shoal_status_t shoal_world_system_stats(const shoal_world_t* w, int32_t index, shoal_system_stats_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "system_stats: out_stats is NULL");
    if (index < 0 || index >= w->system_count)
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "system_stats: index %d out of range 0..%d",
                           (int)index, (int)w->system_count - 1);
    const system_t* s = &w->systems[index];
    out->name = s->name;
    out->stage = s->stage;
    out->enabled = s->enabled;
    out->calls = s->calls;
    out->ns_total = s->ns_total;
    out->agents = s->agents;
    return SHOAL_OK;
}

shoal_status_t shoal_world_set_system_enabled(shoal_world_t* w, const char* name, int enabled)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!name) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "set_system_enabled: name is NULL");
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "set_system_enabled: called from inside a step");
    for (int32_t i = 0; i < w->system_count; ++i) {
        if (strcmp(w->systems[i].name, name) == 0) {
            w->systems[i].enabled = enabled != 0;
            return SHOAL_OK;
        }
    }
    return world_fail(w, SHOAL_ERR_NOT_FOUND, "set_system_enabled: no system named '%s'", name);
}

void shoal_world_reset_stats(shoal_world_t* w)
{
    if (!w) return;
    for (int32_t i = 0; i < w->system_count; ++i) {
        w->systems[i].calls = 0;
        w->systems[i].ns_total = 0;
        w->systems[i].agents = 0;
        w->systems[i].fused_calls = 0;
    }
}

void world_register_builtin_systems(world_t* w)
{
    /* The agents that a module of their own moves: the components of the
     * modules flagged so (module.h). */
    uint32_t self_moving = 0;
    for (int32_t k = 0; k < w->comp_count; ++k)
        if (w->comp_module[k]->flags & MODULE_MOVES_ITSELF) self_moving |= 1u << k;
    /* Names are unique and the table has room: these cannot fail. */
    const registry_t* r = w->registry;
    for (int32_t i = 0; i < r->system_count; ++i) {
        const system_def_t* d = &r->systems[i];
        world_register_system(w, d->name, d->stage, d->run, NULL, NULL);
        for (int32_t k = 0; k < w->system_count; ++k)
            if (w->systems[k].run == d->run) {
                system_t* s = &w->systems[k];
                s->def = d;
                s->comp = world_module_component(w, d->module);
                s->without = d->flags & SYSTEM_SKIPS_SELF_MOVING ? self_moving : 0;
                s->rows = d->rows;
                s->idle = d->idle;
                s->covers = d->covers;
            }
    }
}
