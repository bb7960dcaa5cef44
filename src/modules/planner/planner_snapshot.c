/* The planner module's snapshot section PLAN: whether the world has planner
 * data; then whether it has a trim table and, if so, the table's spec,
 * control count, chord slack and entries (the entries themselves, not only
 * the spec: rebuilding them costs controls^2 * substeps steps, which a
 * forged spec could make hours long); then the planner clock. The per-step
 * stamps, the scene and the search memory are rebuilt by the next step. */
#include <math.h>
#include <string.h>

#include "modules/planner/planner.h"
#include "modules/planner/trim.h"

void planner_save(const world_t* w, byte_writer_t* wr)
{
    const planner_world_t* pw = planner_data(w);
    bw_u32(wr, pw != NULL);
    if (!pw) return;
    bw_u32(wr, (uint32_t)pw->has_table);
    if (pw->has_table) {
        const trim_table_t* t = &pw->table;
        bw_i32(wr, t->spec.axes);
        for (int a = 0; a < TRIM_MAX_AXES; ++a) bw_i32(wr, t->spec.samples[a]);
        for (int a = 0; a < TRIM_MAX_AXES; ++a) bw_f32(wr, t->spec.max_rate[a]);
        bw_f32(wr, t->spec.interval);
        bw_i32(wr, t->spec.substeps);
        bw_i32(wr, t->controls);
        bw_f32(wr, pw->chord_slack);
        size_t n = (size_t)t->controls * (size_t)t->controls;
        for (size_t i = 0; i < n; ++i) {
            const trim_entry_t* e = &t->entries[i];
            const float v[10] = {e->pos.x,    e->pos.y, e->pos.z, e->facing.x, e->facing.y,
                                 e->facing.z, e->rot.w, e->rot.x, e->rot.y,    e->rot.z};
            for (int k = 0; k < 10; ++k) bw_f32(wr, v[k]);
        }
    }
    bw_u64(wr, pw->substep_clock);
    bw_f64(wr, pw->leftover);
}

static int load_table(world_t* w, byte_reader_t* rd)
{
    trim_spec_t spec;
    memset(&spec, 0, sizeof spec);
    spec.axes = br_i32(rd);
    for (int a = 0; a < TRIM_MAX_AXES; ++a) spec.samples[a] = br_i32(rd);
    for (int a = 0; a < TRIM_MAX_AXES; ++a) spec.max_rate[a] = br_f32(rd);
    spec.interval = br_f32(rd);
    spec.substeps = br_i32(rd);
    int32_t controls = br_i32(rd);
    float slack = br_f32(rd);
    if (rd->failed) return 0;
    char why[200];
    if (!trim_spec_valid(&spec, why, sizeof why)) return br_fail(rd, "trim table: %s", why);
    /* A valid spec has at most 262,144 controls and 256 MiB of entries. */
    if (controls < 1 || controls > (1 << 18)) return br_fail(rd, "trim table: %d controls", (int)controls);
    uint64_t entries = (uint64_t)controls * (uint64_t)controls;
    if (entries * 40u > br_left(rd))
        return br_fail(rd, "trim table of %d controls needs %llu bytes, only %zu are left", (int)controls,
                       (unsigned long long)(entries * 40u), br_left(rd));
    size_t bytes = (size_t)entries * sizeof(trim_entry_t);
    trim_entry_t* e = (trim_entry_t*)mem_alloc(&w->alloc, bytes);
    if (!e) return br_fail(rd, "out of memory for the trim table (%zu bytes)", bytes);
    const uint8_t* p = br_take(rd, (size_t)entries * 40u);
    for (size_t i = 0; i < (size_t)entries; ++i) {
        const uint8_t* q = p + i * 40u;
        e[i].pos = (vec3){get_f32(q), get_f32(q + 4), get_f32(q + 8)};
        e[i].facing = (vec3){get_f32(q + 12), get_f32(q + 16), get_f32(q + 20)};
        e[i].rot = (quat){get_f32(q + 24), get_f32(q + 28), get_f32(q + 32), get_f32(q + 36)};
    }
    trim_table_t t;
    memset(&t, 0, sizeof t);
    if (trim_table_adopt(&t, &spec, controls, e, why, sizeof why) != 0) {
        mem_free(&w->alloc, e, bytes);
        return br_fail(rd, "trim table: %s", why);
    }
    if (planner_restore_table(w, &t, slack, "trim table") != SHOAL_OK) return br_fail(rd, "%s", w->error);
    return 1;
}

int planner_load(world_t* w, byte_reader_t* rd)
{
    uint32_t present = br_u32(rd);
    if (rd->failed) return 0;
    if (present > 1) return br_fail(rd, "presence flag must be 0 or 1, got %u", present);
    if (!present) return 1;
    planner_world_t* pw = planner_world_get(w);
    if (!pw) return br_fail(rd, "out of memory");
    uint32_t has_table = br_u32(rd);
    if (rd->failed) return 0;
    if (has_table > 1) return br_fail(rd, "table flag must be 0 or 1, got %u", has_table);
    if (has_table && !load_table(w, rd)) return 0;
    pw->substep_clock = br_u64(rd);
    pw->leftover = br_f64(rd);
    if (rd->failed) return 0;
    if (!(isfinite(pw->leftover) && pw->leftover >= 0.0))
        return br_fail(rd, "planner clock leftover must be finite and >= 0 s, got %g", pw->leftover);
    return 1;
}

/* The search state of every planner row, which no agent definition
 * carries, against the trim table. */
int planner_check_loaded(const world_t* w, byte_reader_t* rd)
{
    const table_t* pl = &w->comps[COMP_PLANNER].table;
    if (pl->count == 0) return 1;
    if (!planner_data(w) || !planner_data(w)->has_table)
        return br_fail(rd, "%d planner agents but no trim table", (int)pl->count);
    const trim_table_t* t = &planner_data(w)->table;
    const int k = COMP_PLANNER;
    for (int32_t r = 0; r < pl->count; ++r) {
        int32_t kk = COMP_I(w, k, PL_K)[r], len = COMP_I(w, k, PL_LEN)[r];
        int32_t ci = COMP_I(w, k, PL_CI)[r], cf = COMP_I(w, k, PL_CF)[r], next = COMP_I(w, k, PL_NEXT)[r];
        int32_t now = COMP_I(w, k, PL_PLAN_NOW)[r], overlap = COMP_I(w, k, PL_OVERLAP)[r];
        int32_t hits = COMP_I(w, k, PL_COLLISIONS)[r];
        uint32_t offset = COMP_U(w, k, PL_PERM_OFFSET)[r];
        if (len < 1 || len > t->spec.substeps || kk < 0 || kk > len)
            return br_fail(rd, "planner row %d: substeps %d of %d (the table has %d per interval)", (int)r,
                           (int)kk, (int)len, (int)t->spec.substeps);
        if (ci < 0 || ci >= t->controls || cf < 0 || cf >= t->controls || next < -1 || next >= t->controls ||
            offset >= (uint32_t)t->controls)
            return br_fail(rd,
                           "planner row %d: controls %d -> %d, next %d, offset %u outside the "
                           "table's %d",
                           (int)r, (int)ci, (int)cf, (int)next, offset, (int)t->controls);
        float budget = COMP_F(w, k, PL_TIME_BUDGET)[r];
        if (!(budget >= 0.0f && budget <= PLANNER_MAX_TIME_BUDGET_MS))
            return br_fail(rd, "planner row %d: time budget %g ms outside [0, %g]", (int)r, (double)budget,
                           (double)PLANNER_MAX_TIME_BUDGET_MS);
        if ((now != 0 && now != 1) || (overlap != 0 && overlap != 1) || hits < 0)
            return br_fail(rd, "planner row %d: flags %d, %d or collision count %d out of range", (int)r,
                           (int)now, (int)overlap, (int)hits);
    }
    return 1;
}
