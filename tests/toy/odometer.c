/* The odometer module (odometer.h): a component, a system, module-wide data
 * with its hash and snapshot section, and its registration. */
#include "tests/toy/odometer.h"

#include <math.h>
#include <string.h>

#include "modules/registry.h"
#include "shoal/snapshot.h"

/* Its module index and component index in odometer_registry: after every
 * built-in one. */
#define ODO_MODULE MOD_COUNT_
#define ODO_COMPONENT COMP_COUNT_

static odometer_world_t* data_of(const world_t* w) { return (odometer_world_t*)w->module_data[ODO_MODULE]; }

const odometer_world_t* odometer_of(const world_t* w) { return data_of(w); }

int32_t odometer_component(const world_t* w) { return world_module_component(w, &odometer_module); }

double odometer_distance(const world_t* w, shoal_agent_t id)
{
    int32_t k = odometer_component(w);
    int32_t slot = world_resolve(w, id, 0, "odometer_distance");
    if (k < 0 || slot < 0) return -1.0;
    int32_t r = component_row(&w->comps[k], (uint32_t)slot);
    return r < 0 ? -1.0 : (double)TABLE_COL(&w->comps[k].table, float, ODO_DISTANCE)[r];
}

/* ---- the system --------------------------------------------------------- */

/* Last in the step: the distance each agent moved this step, |v| dt with
 * the velocity integration left it (the distance to where it was, but
 * through a torus wrap). Serial, in row order, so the total is one sum for
 * any thread count. */
static int64_t odometer_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    int32_t k = odometer_component(w);
    table_t* t = &w->comps[k].table;
    if (t->count == 0) return 0;
    const int32_t* row = TABLE_COL(t, const int32_t, COMP_ROW);
    float* distance = TABLE_COL(t, float, ODO_DISTANCE);
    odometer_world_t* o = data_of(w);
    for (int32_t r = 0; r < t->count; ++r) {
        int32_t a = row[r];
        float vx = AGENT_F(w, AC_VEL_X)[a], vy = AGENT_F(w, AC_VEL_Y)[a];
        float vz = w->dims == 3 ? AGENT_F(w, AC_VEL_Z)[a] : 0.0f;
        float d = sqrtf(vx * vx + vy * vy + vz * vz) * dt;
        distance[r] += d;
        o->total += d;
    }
    o->steps += 1;
    return t->count;
}

/* ---- the module --------------------------------------------------------- */

static int odometer_init(world_t* w)
{
    w->module_data[ODO_MODULE] = mem_calloc(&w->alloc, sizeof(odometer_world_t));
    return w->module_data[ODO_MODULE] != NULL;
}

static void odometer_release(world_t* w)
{
    mem_free(&w->alloc, w->module_data[ODO_MODULE], sizeof(odometer_world_t));
    w->module_data[ODO_MODULE] = NULL;
}

static int odometer_needs(const shoal_agent_def_t* d) { return (d->user_value & ODOMETER_TAG) != 0; }

/* A new odometer starts at 0; an edited agent keeps its distance. */
static void odometer_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                               int fresh)
{
    (void)slot;
    (void)d;
    (void)forward;
    if (fresh) TABLE_COL(&w->comps[odometer_component(w)].table, float, ODO_DISTANCE)[r] = 0.0f;
}

static uint64_t odometer_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb)
{
    const odometer_world_t* o = data_of(w);
    uint64_t bits;
    memcpy(&bits, &o->total, sizeof bits);
    return absorb(absorb(h, bits), (uint64_t)o->steps);
}

static void odometer_save(const world_t* w, byte_writer_t* wr)
{
    bw_f64(wr, data_of(w)->total);
    bw_u64(wr, (uint64_t)data_of(w)->steps);
}

static int odometer_load(world_t* w, byte_reader_t* rd)
{
    double total = br_f64(rd);
    uint64_t steps = br_u64(rd);
    if (rd->failed) return 0;
    if (!isfinite(total) || total < 0.0 || steps > INT64_MAX)
        return br_fail(rd, "odometer: total %g m over %llu steps", total, (unsigned long long)steps);
    data_of(w)->total = total;
    data_of(w)->steps = (int64_t)steps;
    return 1;
}

/* Its columns, declared once: the slot and row, then the distance, a state
 * no definition sets. */
static const column_def_t odometer_columns[ODO_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [ODO_DISTANCE] = COLUMN_STATE_F32("odometer.distance"),
};

const module_t odometer_module = {
    .name = "odometer",
    .column_count = ODO_COUNT_,
    .columns = odometer_columns,
    .init = odometer_init,
    .release = odometer_release,
    .needs = odometer_needs,
    .write_row = odometer_write_row,
    .hash = odometer_hash,
    .snapshot_tag = BYTE_TAG('O', 'D', 'O', 'M'),
    .snapshot_since = SHOAL_SNAPSHOT_VERSION,
    .save = odometer_save,
    .load = odometer_load,
};

/* ---- its registration --------------------------------------------------- */

/* The one system row: last in integrate, after contacts and wrap moved
 * every agent. */
#define ODOMETER_ROW(written)                                                                                \
    {                                                                                                        \
        .name = "odometer", .stage = SHOAL_STAGE_INTEGRATE, .run = odometer_run, .module = &odometer_module, \
        .reads = {.agent = (1ull << AC_VEL_X) | (1ull << AC_VEL_Y) | (1ull << AC_VEL_Z),                     \
                  .comp = {[ODO_COMPONENT] = 1ull << COMP_ROW}},                                             \
        .writes = written, .snapshot_since = SHOAL_SNAPSHOT_VERSION, .note = "distance moved (+=)"           \
    }

static const system_def_t odometer_system = ODOMETER_ROW(
    ((column_set_t){.comp = {[ODO_COMPONENT] = 1ull << ODO_DISTANCE}, .data = 1u << ODO_MODULE}));
static const system_def_t odometer_undeclared = ODOMETER_ROW(((column_set_t){0}));

static const char* odometer_column_name(int32_t comp, int32_t col)
{
    if (comp == ODO_COMPONENT) return col == ODO_DISTANCE ? "distance" : col == ODO_ROW ? "row" : "slot";
    return builtin_registry()->column_name ? builtin_registry()->column_name(comp, col) : NULL;
}

const registry_t* odometer_registry(int declared)
{
    static const module_t* modules[WORLD_MAX_MODULES];
    static system_def_t systems[2][WORLD_MAX_SYSTEMS];
    static registry_t registries[2];
    const registry_t* b = builtin_registry();
    int i = declared ? 1 : 0;
    for (int32_t m = 0; m < b->module_count; ++m) modules[m] = b->modules[m];
    modules[b->module_count] = &odometer_module; /* the module row */
    for (int32_t s = 0; s < b->system_count; ++s) systems[i][s] = b->systems[s];
    systems[i][b->system_count] = declared ? odometer_system : odometer_undeclared; /* the system row */
    registries[i] = (registry_t){.modules = modules,
                                 .module_count = b->module_count + 1,
                                 .systems = systems[i],
                                 .system_count = b->system_count + 1,
                                 .column_name = odometer_column_name};
    return &registries[i];
}
