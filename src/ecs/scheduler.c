/* Systems and stages. Systems sit in one array kept in step order: by stage,
 * then by registration within the stage. A stage runs its enabled systems in
 * that order, timing each call. */
#include <string.h>

#include "ecs/parallel.h"
#include "ecs/trace.h"
#include "ecs/world.h"

shoal_status_t world_register_system(world_t* w, const char* name, shoal_stage_t stage,
                                     system_run_fn* run, shoal_system_fn* user_fn, void* ctx)
{
    if (!name || !*name)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "add_system: name is empty");
    if (strlen(name) >= SYSTEM_NAME_MAX)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "add_system: name '%s' is longer than %d characters", name,
                          SYSTEM_NAME_MAX - 1);
    if ((unsigned)stage >= SHOAL_STAGE_COUNT_)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "add_system: unknown stage %d", (int)stage);
    for (int32_t i = 0; i < w->system_count; ++i)
        if (strcmp(w->systems[i].name, name) == 0)
            return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                              "add_system: a system named '%s' already exists", name);
    if (w->system_count >= WORLD_MAX_SYSTEMS)
        return world_fail(w, SHOAL_ERR_CAPACITY, "add_system: at most %d systems",
                          WORLD_MAX_SYSTEMS);
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
    s->id = w->system_count; /* systems are never removed: counts are unique */
    w->system_count++;
    return SHOAL_OK;
}

typedef struct block_ctx {
    world_t* w;
    const system_t* s;
    const int32_t* rows; /* a component's agent rows, or NULL */
} block_ctx;

static void run_block(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    block_ctx* c = (block_ctx*)vctx;
    shoal_block_t b = {c->rows ? 0 : begin, end - begin, c->rows ? c->rows + begin : NULL, worker};
    c->s->block_fn(c->w, &b, c->s->ctx);
}

/* A parallel user system: its blocks through the one parallel-for. */
static int64_t run_block_system(world_t* w, const system_t* s)
{
    block_ctx c = {w, s, NULL};
    int32_t count = w->agents.count;
    if (s->block_comp >= 0) {
        const component_t* comp = &w->comps[s->block_comp];
        count = comp->table.count;
        c.rows = TABLE_COL(&comp->table, const int32_t, COMP_ROW);
    }
    if (count > 0) par_for(w, count, s->min_block, PAR_STATIC, run_block, &c);
    return count;
}

shoal_status_t world_run_system(world_t* w, system_t* s, float dt)
{
    /* A user system cannot turn tracing on or off (BUSY in a step), so
     * the pointer read here holds for the whole call. */
    trace_t* trace = w->trace;
    if (trace) w->trace_system = s->id;
    uint64_t t0 = world_now_ns();
    int64_t touched;
    uint32_t errors_before = 0;
    if (s->block_fn) {
        touched = run_block_system(w, s);
    } else if (s->user_fn) {
        errors_before = w->error_count;
        shoal_status_t st = s->user_fn(w, dt, s->ctx);
        touched = st == SHOAL_OK ? 0 : -(int64_t)st;
    } else {
        w->running_without = s->without;
        touched = s->run(w, dt, s->ctx);
        w->running_without = 0;
    }
    uint64_t t1 = world_now_ns();
    s->ns_total += t1 - t0;
    s->calls++;
    if (trace) {
        w->trace_system = -1;
        trace_record(trace, 0, s->id, touched > INT32_MAX ? INT32_MAX : touched > 0 ? (int32_t)touched : 0,
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
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: min_block must be >= 0 (0 = 1024), got %d", where,
                          (int)min_block);
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

shoal_status_t shoal_world_system_stats(const shoal_world_t* w, int32_t index,
                                        shoal_system_stats_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "system_stats: out_stats is NULL");
    if (index < 0 || index >= w->system_count)
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT,
                           "system_stats: index %d out of range 0..%d", (int)index,
                           (int)w->system_count - 1);
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
    if (w->in_step)
        return world_fail(w, SHOAL_ERR_BUSY, "set_system_enabled: called from inside a step");
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
    }
}

void world_register_builtin_systems(world_t* w)
{
    /* Names are unique and the table has room: these cannot fail. */
    const registry_t* r = w->registry;
    for (int32_t i = 0; i < r->system_count; ++i) {
        world_register_system(w, r->systems[i].name, r->systems[i].stage, r->systems[i].run, NULL, NULL);
        for (int32_t k = 0; k < w->system_count; ++k)
            if (w->systems[k].run == r->systems[i].run) w->systems[k].without = r->systems[i].without;
    }
}
