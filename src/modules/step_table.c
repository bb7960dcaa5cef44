/* The step table as text: `shoal run --stats`, `shoal step-table` and
 * docs/step.md (which a test compares with what this writes, so the page
 * cannot drift from the table). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "modules/registry.h"
#include "modules/step.h"

/* Agent columns that read as one word. */
#define A(c) (1ull << (c))
static const struct {
    const char* name;
    uint64_t bits;
} agent_groups[] = {
    {"pos", A(AC_POS_X) | A(AC_POS_Y) | A(AC_POS_Z)},
    {"vel", A(AC_VEL_X) | A(AC_VEL_Y) | A(AC_VEL_Z)},
    {"heading/quat", A(AC_HEADING) | A(AC_QW) | A(AC_QX) | A(AC_QY) | A(AC_QZ)},
    {"omega", A(AC_OMEGA_X) | A(AC_OMEGA_Y) | A(AC_OMEGA_Z)},
    {"desired", A(AC_DESIRED_X) | A(AC_DESIRED_Y) | A(AC_DESIRED_Z)},
    {"force", A(AC_FORCE_X) | A(AC_FORCE_Y) | A(AC_FORCE_Z)},
    {"torque", A(AC_TORQUE_X) | A(AC_TORQUE_Y) | A(AC_TORQUE_Z)},
    {"limits",
     A(AC_MASS) | A(AC_INERTIA) | A(AC_MAX_FORCE) | A(AC_MAX_TORQUE) | A(AC_MAX_SPEED) | A(AC_MAX_TURN_RATE)},
    {"gains", A(AC_SPEED_GAIN) | A(AC_HEADING_GAIN) | A(AC_TURN_DAMPING)},
    {"weights",
     A(AC_W_SEEK) | A(AC_W_FLEE) | A(AC_W_ARRIVE) | A(AC_W_DEPART) | A(AC_ARRIVE_GAIN) | A(AC_DEPART_GAIN)},
    {"target", A(AC_TARGET_X) | A(AC_TARGET_Y) | A(AC_TARGET_Z)},
    {"threat", A(AC_THREAT_X) | A(AC_THREAT_Y) | A(AC_THREAT_Z)},
};
#undef A

typedef struct out_t {
    char* buf;
    size_t size;
    size_t len;
} out_t;

__attribute__((format(printf, 2, 3))) static void put(out_t* o, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char* at = o->len < o->size ? o->buf + o->len : NULL;
    size_t room = o->len < o->size ? o->size - o->len : 0;
    int n = vsnprintf(at, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += (size_t)n;
}

static const char* column_name(const registry_t* r, int32_t comp, int32_t col)
{
    const char* n = r->column_name ? r->column_name(comp, col) : NULL;
    return n ? n : "?";
}

/* A column set as words: agent groups and columns, then per component its
 * columns (runs as first..last, "all" for the whole), then module data. */
static void put_set(out_t* o, const registry_t* r, const column_set_t* s, const char* none)
{
    const size_t start = o->len;
#define SEP() put(o, "%s", o->len > start ? ", " : "")
    uint64_t agent = s->agent;
    for (size_t g = 0; g < sizeof agent_groups / sizeof agent_groups[0]; ++g)
        if ((agent & agent_groups[g].bits) == agent_groups[g].bits) {
            SEP();
            put(o, "%s", agent_groups[g].name);
            agent &= ~agent_groups[g].bits;
        }
    for (int32_t c = 0; c < AC_COUNT_; ++c)
        if (agent >> c & 1u) {
            SEP();
            put(o, "%s", column_name(r, -1, c));
        }
    int32_t k = 0;
    for (int32_t m = 0; m < r->module_count; ++m) {
        const module_t* mod = r->modules[m];
        if (mod->column_count <= 0) continue;
        const int32_t comp = k++;
        if (!s->comp[comp]) continue;
        SEP();
        if (s->comp[comp] == COLUMNS_ALL) {
            put(o, "%s.*", mod->name);
            continue;
        }
        for (int32_t c = 0, first = 1; c < mod->column_count; ++c) {
            if (!column_set_has(s, comp, c)) continue;
            int32_t e = c;
            while (e + 1 < mod->column_count && column_set_has(s, comp, e + 1)) ++e;
            put(o, "%s%s.%s", first ? "" : ", ", mod->name, column_name(r, comp, c));
            if (e > c) put(o, "%s%s", e == c + 1 ? ", " : "..", e == c + 1 ? "" : column_name(r, comp, e));
            if (e == c + 1) put(o, "%s.%s", mod->name, column_name(r, comp, e));
            first = 0;
            c = e;
        }
    }
    for (int32_t m = 0; m < r->module_count && m < 32; ++m)
        if (s->data >> m & 1u) {
            SEP();
            put(o, "%s data", r->modules[m]->name);
        }
#undef SEP
    if (o->len == start) put(o, "%s", none);
}

static const char* stage_name(shoal_stage_t st) { return shoal_stage_name(st); }

/* One row's "pass" cell: how it may run fused. */
static void put_pass(out_t* o, const world_t* w, const system_t* s, const system_def_t* d)
{
    if (w && s) {
        if (s->fused_calls > 0)
            put(o, "fused %" PRIu64 "/%" PRIu64, s->fused_calls, s->calls);
        else if (d && d->rows)
            put(o, "pass, not fused");
        return;
    }
    if (d && d->rows) put(o, "pass");
}

/* A row's note and what its flags say, joined by "; ". */
static void put_note(out_t* o, const system_def_t* d)
{
    const char* parts[3] = {
        d->note, d->flags & SYSTEM_PERMUTES_ROWS ? "permutes the rows of every table" : NULL,
        d->flags & SYSTEM_SKIPS_SELF_MOVING ? "leaves out agents that move themselves" : NULL};
    int first = 1;
    for (int i = 0; i < 3; ++i)
        if (parts[i]) {
            put(o, "%s%s", first ? "" : "; ", parts[i]);
            first = 0;
        }
}

size_t step_table_write(const world_t* w, int markdown, char* buf, size_t size)
{
    out_t o = {buf, size, 0};
    if (size > 0) buf[0] = '\0';
    const registry_t* r = w ? w->registry : builtin_registry();
    const int32_t n = w ? w->system_count : r->system_count;
    if (markdown) {
        put(&o, "| stage | system | module | reads | writes | note | fuses |\n");
        put(&o, "|---|---|---|---|---|---|---|\n");
    } else {
        put(&o,
            "step table (stage, system, module; reads; writes; note; fused: calls run in a fused pass):\n");
    }
    for (int32_t i = 0; i < n; ++i) {
        const system_t* s = w ? &w->systems[i] : NULL;
        const system_def_t* d = s ? s->def : &r->systems[i];
        const char* name = s ? s->name : d->name;
        const char* stage = stage_name(s ? s->stage : d->stage);
        const char* module = d && d->module ? d->module->name : "-";
        if (markdown) {
            put(&o, "| %s | %s | %s | ", stage, name, d ? module : "(user)");
            if (d) {
                put_set(&o, r, &d->reads, "-");
                put(&o, " | ");
                put_set(&o, r, &d->writes, "-");
                put(&o, " | ");
                put_note(&o, d);
            } else {
                put(&o, "(undeclared) | (undeclared) | a user system");
            }
            put(&o, " | ");
            put_pass(&o, w, s, d);
            put(&o, " |\n");
            continue;
        }
        char pass[64];
        out_t p = {pass, sizeof pass, 0};
        pass[0] = '\0';
        put_pass(&p, w, s, d);
        if (pass[0])
            put(&o, "%-10s %-17s %-10s %s\n", stage, name, d ? module : "(user)", pass);
        else
            put(&o, "%-10s %-17s %s\n", stage, name, d ? module : "(user)");
        if (!d) continue;
        put(&o, "    reads:  ");
        put_set(&o, r, &d->reads, "-");
        put(&o, "\n    writes: ");
        put_set(&o, r, &d->writes, "-");
        put(&o, "\n");
        if (d->note || d->flags) {
            put(&o, "    note:   ");
            put_note(&o, d);
            put(&o, "\n");
        }
    }
    return o.len;
}
