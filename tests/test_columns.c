/* Each module's column table (module_t.columns, ecs/columns.h): it matches
 * the module's column enum, every column with a definition field goes into
 * a row and comes back out through the module's hooks, and a field out of
 * its declared range is refused with a message that names it. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "ecs/columns.h"
#include "ecs/world.h"
#include "modules/avoid/avoid.h"
#include "modules/contacts/contacts.h"
#include "modules/crowd/crowd.h"
#include "modules/dseek/dseek.h"
#include "modules/follow/follow.h"
#include "modules/ground/ground.h"
#include "modules/nav/nav.h"
#include "modules/navmesh/navmesh.h"
#include "modules/neighbors/neighbors.h"
#include "modules/planner/planner.h"
#include "modules/pursuit/pursuit.h"
#include "modules/registry.h"
#include "modules/wander/wander.h"
#include "shoal/snapshot.h"
#include "support.h"

/* Each component's module and the count its enum ends with. */
static const struct {
    int comp;
    const char* module;
    int32_t count;
} expected[] = {
    {COMP_NEIGHBORS, "neighbors", NB_COUNT_},
    {COMP_WANDER, "wander", WD_COUNT_},
    {COMP_PURSUIT, "pursuit", PU_COUNT_},
    {COMP_FOLLOW, "follow", FO_COUNT_},
    {COMP_AVOID, "avoid", AV_COUNT_},
    {COMP_DSEEK, "dseek", DS_COUNT_},
    {COMP_GROUND, "ground", GR_COUNT_},
    {COMP_PLANNER, "planner", PL_COUNT_},
    {COMP_CROWD, "crowd", CR_COUNT_},
    {COMP_CONTACT, "contact", CT_COUNT_},
    {COMP_NAV, "nav", NV_COUNT_},
    {COMP_NAVMESH, "navmesh", NM_COUNT_},
};
#define EXPECTED_COUNT ((int)(sizeof expected / sizeof expected[0]))

/* The fields a bulk add patches per agent (bulk.c writes a block's table
 * columns once, from the shared definition): no table column may read them. */
static const struct {
    size_t at, size;
} per_agent[] = {
    {offsetof(shoal_agent_def_t, position), sizeof(float[3])},
    {offsetof(shoal_agent_def_t, velocity), sizeof(float[3])},
    {offsetof(shoal_agent_def_t, heading), sizeof(float)},
    {offsetof(shoal_agent_def_t, pitch), sizeof(float)},
    {offsetof(shoal_agent_def_t, target), sizeof(float[3])},
    {offsetof(shoal_agent_def_t, group), sizeof(uint32_t)},
    {offsetof(shoal_agent_def_t, user_value), sizeof(uint64_t)},
};

/* A definition whose agent needs the component of module `name`. */
static void make_need(shoal_agent_def_t* d, const char* name)
{
    if (!strcmp(name, "neighbors"))
        d->weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    else if (!strcmp(name, "wander"))
        d->weights[SHOAL_BEHAVIOR_WANDER] = 1.0f;
    else if (!strcmp(name, "pursuit"))
        d->weights[SHOAL_BEHAVIOR_PURSUE] = 1.0f;
    else if (!strcmp(name, "follow"))
        d->weights[SHOAL_BEHAVIOR_FOLLOW] = 1.0f;
    else if (!strcmp(name, "avoid"))
        d->weights[SHOAL_BEHAVIOR_AVOID] = 1.0f;
    else if (!strcmp(name, "dseek"))
        d->weights[SHOAL_BEHAVIOR_DSEEK] = 1.0f;
    else if (!strcmp(name, "ground"))
        d->ground.enabled = 1;
    else if (!strcmp(name, "planner"))
        d->planner.enabled = 1;
    else if (!strcmp(name, "crowd"))
        d->crowd.enabled = 1;
    else if (!strcmp(name, "contact"))
        d->contacts = 1;
    else if (!strcmp(name, "nav"))
        d->weights[SHOAL_BEHAVIOR_NAVIGATE] = 1.0f;
    else if (!strcmp(name, "navmesh"))
        d->weights[SHOAL_BEHAVIOR_NAVMESH] = 1.0f;
    else
        cr_assert_fail("no way to make an agent need module %s", name);
}

Test(columns, tables_match_the_enums)
{
    shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    cr_assert_eq(w->comp_count, COMP_COUNT_);
    cr_assert_eq(EXPECTED_COUNT, COMP_COUNT_);
    for (int e = 0; e < EXPECTED_COUNT; ++e) {
        const module_t* m = w->comp_module[expected[e].comp];
        const char* mn = m->name;
        cr_assert_str_eq(mn, expected[e].module);
        cr_assert_eq(m->column_count, expected[e].count, "%s: %d columns, its enum has %d", mn,
                     (int)m->column_count, (int)expected[e].count);
        cr_assert_eq(w->comps[expected[e].comp].table.column_count, m->column_count, "%s", mn);
        cr_assert_not_null(m->columns, "%s has no column table", mn);
        cr_assert_str_eq(m->columns[0].name, "slot", "%s", mn);
        cr_assert_str_eq(m->columns[COMP_ROW].name, "row", "%s", mn);
        for (int32_t c = 0; c < m->column_count; ++c) {
            const column_def_t* col = &m->columns[c];
            cr_assert_not_null(col->name, "%s: column %d has no row in the table", mn, (int)c);
            for (int32_t o = 0; o < c; ++o)
                cr_assert(strcmp(m->columns[o].name, col->name) != 0, "%s: columns %d and %d are both '%s'",
                          mn, (int)o, (int)c, col->name);
            int integer = col->type != COLUMN_F32;
            cr_assert(col->type <= COLUMN_AGENT_ID_HI, "%s.%s: type %d", mn, col->name, col->type);
            cr_assert(!integer || (col->flags & COLUMN_BITS), "%s.%s: an integer column without COLUMN_BITS",
                      mn, col->name);
            if (col->type == COLUMN_AGENT_ID_HI) {
                cr_assert_eq(m->columns[c - 1].type, COLUMN_AGENT_ID_LO, "%s.%s: no low half's column before",
                             mn, col->name);
                cr_assert_eq(m->columns[c - 1].field, col->field, "%s.%s: not the low half's field", mn,
                             col->name);
            }
            if (col->type == COLUMN_AGENT_ID_LO)
                cr_assert(c + 1 < m->column_count && m->columns[c + 1].type == COLUMN_AGENT_ID_HI,
                          "%s.%s: no high half's column after", mn, col->name);
            cr_assert(col->since <= SHOAL_SNAPSHOT_VERSION, "%s.%s: since %d", mn, col->name, col->since);
            cr_assert(col->since == 0 || col->since > m->snapshot_since,
                      "%s.%s: since %d, but the component is there since %d", mn, col->name, col->since,
                      (int)m->snapshot_since);
            if (col->field == COLUMN_NO_FIELD) {
                cr_assert_eq(col->check, COLUMN_CHECK_NONE, "%s.%s: a check but no field", mn, col->name);
                cr_assert(!(col->flags & COLUMN_MODULE_WRITES), "%s.%s", mn, col->name);
                continue;
            }
            cr_assert(c > COMP_ROW, "%s: the slot and row come from no definition field", mn);
            for (int32_t o = COMP_ROW + 1; o < c; ++o)
                cr_assert(m->columns[o].field != col->field || col->type == COLUMN_AGENT_ID_HI,
                          "%s: columns %s and %s come from one field", mn, m->columns[o].name, col->name);
            cr_assert(!(col->flags & COLUMN_DERIVED), "%s.%s: derived, yet from a field", mn, col->name);
            cr_assert(col->field >= 0 && (size_t)col->field + 4 <= sizeof(shoal_agent_def_t),
                      "%s.%s: field %d", mn, col->name, (int)col->field);
            for (size_t p = 0; p < sizeof per_agent / sizeof per_agent[0]; ++p)
                cr_assert((size_t)col->field + 4 <= per_agent[p].at ||
                              (size_t)col->field >= per_agent[p].at + per_agent[p].size,
                          "%s.%s: reads a field a bulk add patches per agent", mn, col->name);
            if (col->check == COLUMN_CHECK_INT)
                cr_assert_eq(col->type, COLUMN_I32, "%s.%s", mn, col->name);
            else if (col->check == COLUMN_CHECK_HANDLE)
                cr_assert_eq(col->type, COLUMN_AGENT_ID_LO, "%s.%s", mn, col->name);
            else if (col->check != COLUMN_CHECK_NONE)
                cr_assert_eq(col->type, COLUMN_F32, "%s.%s", mn, col->name);
            if (col->check == COLUMN_CHECK_INT || col->range)
                cr_assert_not_null(col->range, "%s.%s: the check's bound in words", mn, col->name);
            if (col->check != COLUMN_CHECK_NONE && col->check != COLUMN_CHECK_HANDLE)
                cr_assert(col->lo <= col->hi, "%s.%s: [%g, %g]", mn, col->name, (double)col->lo,
                          (double)col->hi);
            /* The bounds the fast check compares with (columns.c column_ok). */
            switch (col->check) {
            case COLUMN_CHECK_FINITE:
                cr_assert(col->lo == -FLT_MAX && col->hi == FLT_MAX, "%s.%s", mn, col->name);
                break;
            case COLUMN_CHECK_COORDINATE:
                cr_assert(col->lo == -DEF_MAX_COORDINATE && col->hi == DEF_MAX_COORDINATE, "%s.%s", mn,
                          col->name);
                break;
            case COLUMN_CHECK_AT_LEAST:
            case COLUMN_CHECK_ABOVE:
                cr_assert(col->range ? col->hi <= DEF_MAX_MAGNITUDE : col->hi == DEF_MAX_MAGNITUDE, "%s.%s",
                          mn, col->name);
                break;
            case COLUMN_CHECK_INT:
                cr_assert(col->lo == floorf(col->lo) && fabsf(col->lo) <= 16777216.0f, "%s.%s", mn,
                          col->name);
                cr_assert(col->hi == COLUMN_INT_NO_MAX ||
                              (col->hi == floorf(col->hi) && fabsf(col->hi) <= 16777216.0f),
                          "%s.%s", mn, col->name);
                break;
            default: break;
            }
        }
        /* The definition columns: every column with a field or derived from
         * the definition. */
        uint64_t mask = columns_definition_mask(m);
        for (int32_t c = 0; c < m->column_count && c < 64; ++c) {
            const column_def_t* col = &m->columns[c];
            int want = col->field != COLUMN_NO_FIELD || (col->flags & COLUMN_DERIVED);
            cr_assert_eq((int)(mask >> c & 1u), want, "%s.%s: definition column %d", mn, col->name, want);
        }
    }
    shoal_world_destroy(w);
}

/* A definition with a distinct value in every field of module m's table:
 * bits no other field has, each a valid float, and for a reference to an
 * agent live[c], a live agent's handle (what a reference stores is that
 * agent's id, which a handle of no live agent lacks). */
static void fill_fields(const module_t* m, shoal_agent_def_t* d, const shoal_agent_t* live)
{
    for (int32_t c = COMP_ROW + 1; c < m->column_count; ++c) {
        const column_def_t* col = &m->columns[c];
        char* p = (char*)d + col->field;
        if (col->field == COLUMN_NO_FIELD || col->type == COLUMN_AGENT_ID_HI) continue;
        if (col->type == COLUMN_AGENT_ID_LO) {
            memcpy(p, &live[c], sizeof live[c]);
        } else if (col->type == COLUMN_F32) {
            float v = 1.0f + 0.125f * (float)c;
            memcpy(p, &v, 4);
        } else {
            int32_t v = 100 + c;
            memcpy(p, &v, 4);
        }
    }
}

Test(columns, every_definition_column_round_trips)
{
    /* 3D: a 2D world keeps no z (dseek's waypoint, a planner's goal). */
    shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t base = shoal_agent_default_def();
    shoal_agent_t live[TABLE_MAX_COLUMNS];
    for (int i = 0; i < TABLE_MAX_COLUMNS; ++i)
        cr_assert_eq(shoal_agent_add(w, &base, &live[i]), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &base, &id), SHOAL_OK, "%s", shoal_world_last_error(w));
    uint32_t slot = id.index1 - 1;
    int32_t row = w->slots[slot].row;
    for (int k = 0; k < w->comp_count; ++k) {
        const module_t* m = w->comp_module[k];
        shoal_agent_def_t d = base;
        make_need(&d, m->name);
        fill_fields(m, &d, live);
        cr_assert(m->needs(&d), "%s: the filled definition no longer needs the component", m->name);
        cr_assert(m->write_row && m->read_row, "%s: no write_row or read_row for its table's columns",
                  m->name);
        if (m->prepare) cr_assert(m->prepare(w, &d, "test"), "%s: %s", m->name, shoal_world_last_error(w));
        component_t* comp = &w->comps[k];
        cr_assert(component_reserve_slots(comp, &w->alloc, w->slot_capacity));
        int32_t r = component_add(comp, &w->alloc, slot);
        cr_assert_geq(r, 0);
        TABLE_COL(&comp->table, int32_t, COMP_ROW)[r] = row;
        /* As agent_write_components and agent_read_row do. */
        m->write_row(w, r, slot, &d, agent_row_forward(w, row), 1);
        shoal_agent_def_t out = shoal_agent_default_def();
        m->read_row(w, r, &out);
        for (int32_t c = COMP_ROW + 1; c < m->column_count; ++c) {
            const column_def_t* col = &m->columns[c];
            if (col->field == COLUMN_NO_FIELD) continue;
            size_t size = col->type == COLUMN_AGENT_ID_LO || col->type == COLUMN_AGENT_ID_HI
                              ? sizeof(shoal_agent_t)
                              : 4;
            cr_assert(memcmp((const char*)&d + col->field, (const char*)&out + col->field, size) == 0,
                      "%s: %s did not come back", m->name, col->name);
        }
        agent_remove_component(w, k, slot);
    }
    shoal_world_destroy(w);
}

/* A value outside column col's declared range into *bits (which = 0:
 * below, 1: above, 2: not a number); 0 when it has no bound there. */
static int out_of_range(const column_def_t* col, int which, uint32_t* bits)
{
    if (col->check == COLUMN_CHECK_HANDLE || col->check == COLUMN_CHECK_NONE) return 0;
    if (col->check == COLUMN_CHECK_INT) {
        int32_t v;
        if (which == 0)
            v = (int32_t)col->lo - 1;
        else if (which == 1 && col->hi != COLUMN_INT_NO_MAX)
            v = (int32_t)col->hi + 1;
        else
            return 0;
        memcpy(bits, &v, 4);
        return 1;
    }
    float v;
    if (which == 2)
        v = NAN;
    else if (col->check == COLUMN_CHECK_FINITE)
        return 0;
    else if (which == 1)
        v = col->check == COLUMN_CHECK_COORDINATE ? 2.0f * DEF_MAX_COORDINATE
            : col->range                          ? (float)col->hi * 1.5f + 1.0f
                                                  : 2.0f * DEF_MAX_MAGNITUDE;
    else if (col->check == COLUMN_CHECK_ABOVE)
        v = (float)col->lo;
    else if (col->check == COLUMN_CHECK_AT_LEAST)
        v = (float)col->lo - 1.0f;
    else
        return 0; /* FINITE, COORDINATE: no lower bound but -inf */
    memcpy(bits, &v, 4);
    return 1;
}

Test(columns, a_field_out_of_range_is_refused_by_name)
{
    shoal_world_t* w = make_world(3, 1, SHOAL_BACKEND_SERIAL);
    int tried = 0;
    for (int k = 0; k < w->comp_count; ++k) {
        const module_t* m = w->comp_module[k];
        shoal_agent_def_t good = shoal_agent_default_def();
        make_need(&good, m->name);
        for (int32_t c = COMP_ROW + 1; c < m->column_count; ++c) {
            const column_def_t* col = &m->columns[c];
            if (col->field == COLUMN_NO_FIELD) continue;
            if (col->check == COLUMN_CHECK_HANDLE) { /* a handle of another world */
                shoal_agent_def_t d = good;
                shoal_agent_t other = {1, (uint16_t)(w->tag ^ 0x5a5au), 1};
                memcpy((char*)&d + col->field, &other, sizeof other);
                cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_STALE_HANDLE, "%s", col->name);
                cr_assert(strstr(shoal_world_last_error(w), col->name), "%s: '%s'", col->name,
                          shoal_world_last_error(w));
                tried++;
                continue;
            }
            for (int which = 0; which < 3; ++which) {
                uint32_t bits;
                if (!out_of_range(col, which, &bits)) continue;
                shoal_agent_def_t d = good;
                memcpy((char*)&d + col->field, &bits, 4);
                int32_t before = shoal_world_agent_count(w);
                cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_ERR_INVALID_ARGUMENT,
                             "%s (%d) was let through", col->name, which);
                const char* msg = shoal_world_last_error(w);
                cr_assert(strstr(msg, col->name) && strstr(msg, "must be"), "%s (%d): '%s'", col->name, which,
                          msg);
                cr_assert_eq(shoal_world_agent_count(w), before);
                tried++;
            }
        }
    }
    cr_assert_gt(tried, 30, "only %d cases", tried);
    shoal_world_destroy(w);
}

/* The messages as they were when every module checked its fields by hand. */
Test(columns, messages_say_what_was_expected)
{
    shoal_world_t* w = make_world(2, 1, SHOAL_BACKEND_SERIAL);
    static const struct {
        const char* what;
        const char* message;
    } cases[] = {
        {"follow.behind", "agent_add: follow.behind must be finite, >= 0 and <= 1e+09, got -1"},
        {"neighbors.fov", "agent_add: neighbors.fov must be in (0, 2 pi] rad, got 7"},
        {"neighbors.max_neighbors", "agent_add: neighbors.max_neighbors must be >= 0 (0 = no cap), got -1"},
        {"avoid.tangential", "agent_add: avoid.tangential must be 0 or 1, got 2"},
        {"crowd.max_neighbors", "agent_add: crowd.max_neighbors must be 1 to 64, got 65"},
        {"crowd.side_preference", "agent_add: crowd.side_preference must be in [0, 1], got 2"},
        {"dseek.waypoint.position[1]", "agent_add: dseek.waypoint.position[1] must be finite, got inf"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        switch (i) {
        case 0: d.follow.behind = -1.0f; break;
        case 1: d.neighbors.fov = 7.0f; break;
        case 2: d.neighbors.max_neighbors = -1; break;
        case 3: d.avoid.tangential = 2; break;
        case 4:
            d.crowd.enabled = 1;
            d.crowd.max_neighbors = 65;
            break;
        case 5:
            d.crowd.enabled = 1;
            d.crowd.side_preference = 2.0f;
            break;
        default: d.dseek.waypoint.position[1] = INFINITY; break;
        }
        cr_expect_neq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", cases[i].what);
        cr_expect_str_eq(shoal_world_last_error(w), cases[i].message, "%s", cases[i].what);
    }
    /* Crowd fields are checked for crowd agents only. */
    shoal_agent_def_t d = shoal_agent_default_def();
    d.crowd.max_neighbors = 65;
    cr_expect_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    shoal_world_destroy(w);
}
