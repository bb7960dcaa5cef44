/* Reordering the agent table (the sense stage's reorder by cell, and
 * world_permute_agents): every column, the user components, the slots and
 * every component's rows follow, so handles stay valid. */
#include <stdatomic.h>
#include <string.h>

#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "ecs/world.h"

size_t world_permute_scratch_size(const world_t* w)
{
    size_t size = (size_t)w->agents.capacity * table_widest(&w->agents);
    for (int k = 0; k < w->comp_count; ++k) { /* one column of a component */
        const table_t* t = &w->comps[k].table;
        size_t need = (size_t)t->capacity * table_widest(t);
        if (need > size) size = need;
    }
    return size;
}

/* The second half of a reorder, once the agent table's columns have been
 * permuted: re-point the slots and put every component in the new
 * agent-row order. */
static void world_finish_agent_permute(world_t* w, void* scratch, int32_t* component_perm);

void world_permute_agents_unchecked(world_t* w, const int32_t* perm, void* scratch, int32_t* component_perm)
{
    table_permute(&w->agents, perm, scratch);
    user_permute(w, perm);
    w->structure_version++;
    world_finish_agent_permute(w, scratch, component_perm);
}

static void world_finish_agent_permute(world_t* w, void* scratch, int32_t* component_perm)
{
    int32_t n = w->agents.count;
    const uint32_t* slots = table_slots(&w->agents);
    for (int32_t i = 0; i < n; ++i) w->slots[slots[i]].row = i;
    /* Put every component's rows in agent-row order too: walking agents in
     * row order then walks each component forward. */
    for (int k = 0; k < w->comp_count; ++k) {
        component_t* c = &w->comps[k];
        int32_t m = c->table.count;
        if (m == 0) continue;
        int32_t j = 0;
        for (int32_t i = 0; i < n && j < m; ++i) {
            int32_t r = component_row(c, slots[i]);
            if (r >= 0) component_perm[j++] = r;
        }
        component_permute(c, component_perm, scratch);
        const uint32_t* cslots = table_slots(&c->table);
        int32_t* crow = TABLE_COL(&c->table, int32_t, COMP_ROW);
        for (int32_t r = 0; r < m; ++r) crow[r] = w->slots[cslots[r]].row;
    }
}

/* ---- the parallel reorder of the sense stage ---------------------------- */

/* At most this many scratch columns are used at once. */
#define PERMUTE_MAX_SPARES 8

typedef struct par_permute_ctx {
    world_t* w;
    table_t* table;      /* whose columns the passes permute */
    const int32_t* perm; /* new row i = old row perm[i] */
    float* const* spare; /* scratch columns, one per column of a group */
    int32_t spares;
    /* The scan's columns, and for each whether two of its rows differ
     * (relaxed stores of 1: any worker that sees a difference says so, and
     * the others may stop looking at that column). */
    int32_t scan[TABLE_MAX_COLUMNS];
    int32_t scan_count;
    atomic_uchar varies[TABLE_MAX_COLUMNS];
    int32_t group[PERMUTE_MAX_SPARES]; /* a gather pass's columns */
    int32_t group_size;
    component_t* comp;  /* the component of the row passes */
    int32_t* comp_perm; /* component_rows' output */
} par_permute_ctx_t;

/* Whether any of rows [begin, end) of each scanned column differs from
 * row 0, a sequential read that stops at the first difference: a column
 * whose rows all hold one value (a flock's mass, gains and weights, a
 * module's parameters) is the same after any permutation, and reading it
 * once in order is far cheaper than gathering it and copying it back. */
static void scan_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx_t* c = (par_permute_ctx_t*)vctx;
    for (int32_t j = 0; j < c->scan_count; ++j) {
        if (atomic_load_explicit(&c->varies[j], memory_order_relaxed)) continue;
        const uint32_t* col = (const uint32_t*)c->table->columns[c->scan[j]];
        if (table_rows_differ(col, begin, end, col[0], 0))
            atomic_store_explicit(&c->varies[j], 1, memory_order_relaxed);
    }
}

/* First pass over a block of rows: gather each column of the group into
 * its scratch column. Every worker takes rows of every column, so all of
 * them take part however few columns a table has. */
static void gather_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx_t* c = (par_permute_ctx_t*)vctx;
    const int32_t* perm = c->perm;
    for (int32_t j = 0; j < c->group_size; ++j) {
        const uint32_t* src = (const uint32_t*)c->table->columns[c->group[j]];
        uint32_t* dst = (uint32_t*)(void*)c->spare[j];
        for (int32_t i = begin; i < end; ++i) dst[i] = src[perm[i]];
    }
}

/* Second pass: the gathered columns go back into the table. */
static void copy_back_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx_t* c = (par_permute_ctx_t*)vctx;
    for (int32_t j = 0; j < c->group_size; ++j) {
        uint32_t* dst = (uint32_t*)c->table->columns[c->group[j]];
        memcpy(dst + begin, (const uint32_t*)(const void*)c->spare[j] + begin,
               (size_t)(end - begin) * sizeof *dst);
    }
}

/* Permute the columns of c->table by c->perm over `rows` rows, but for
 * those in `skip` (bit k: column k; a column the caller rewrites, or one
 * it knows to hold one value). One parallel scan finds the columns that
 * hold more than one value; they alone are permuted, in groups of up to
 * `spares` columns, each gathered in one parallel pass over the rows and
 * written back in another. Returns the scanned columns (below 64) found
 * holding one value, and in *scanned whether there was a scan. */
static uint64_t permute_table_rows(world_t* w, par_permute_ctx_t* c, int32_t rows, uint64_t skip,
                                   int* scanned)
{
    table_t* t = c->table;
    c->scan_count = 0;
    *scanned = 0;
    for (int32_t col = 0; col < t->column_count; ++col) {
        if (t->elem_size[col] == 0 || (col < 64 && (skip >> col & 1u))) continue;
        atomic_init(&c->varies[c->scan_count], 0);
        c->scan[c->scan_count++] = col;
    }
    if (c->scan_count == 0 || rows < 2) return 0;
    par_for(w, rows, 4096, PAR_STATIC, scan_rows, c);
    *scanned = 1;
    uint64_t one = 0;
    for (int32_t j = 0; j < c->scan_count; ++j)
        if (c->scan[j] < 64 && !atomic_load_explicit(&c->varies[j], memory_order_relaxed))
            one |= 1ull << c->scan[j];
    int32_t j = 0;
    for (;;) {
        c->group_size = 0;
        for (; j < c->scan_count && c->group_size < c->spares; ++j)
            if (atomic_load_explicit(&c->varies[j], memory_order_relaxed))
                c->group[c->group_size++] = c->scan[j];
        if (c->group_size == 0) break;
        par_for(w, rows, 4096, PAR_STATIC, gather_rows, c);
        par_for(w, rows, 4096, PAR_STATIC, copy_back_rows, c);
    }
    return one;
}

/* A component's columns, as permute_table_rows: its module's definition
 * columns that the last scan found holding one value are skipped while
 * the component's version is unchanged (columns_definition_mask), and
 * a scan of them is noted for the reorders to come. */
static void permute_component(world_t* w, par_permute_ctx_t* c, int k, int32_t rows, uint64_t skip)
{
    component_t* comp = &w->comps[k];
    const uint64_t definition = columns_definition_mask(w->comp_module[k]);
    const int known = comp->one_known && comp->one_version == comp->version;
    skip |= component_one_columns(comp);
    int scanned;
    uint64_t one = permute_table_rows(w, c, rows, skip, &scanned);
    if (scanned && definition) {
        /* Known: a column that held one value still does, and one that
         * did not may now (its other values removed). */
        comp->one_columns = (known ? comp->one_columns : 0) | (one & definition);
        comp->one_version = comp->version;
        comp->one_known = 1;
    }
}

/* Whether a component every agent has keeps its rows in agent-row order:
 * component row r belongs to agent row r (COMP_ROW[r] == r), as the first
 * reorder leaves every such component. One flag per component, set by any
 * worker that finds a row out of place. */
/* world_component_in_agent_order's cached answer (below) holds: no row,
 * agent or definition of the component moved since it was found. */
static int order_known(const world_t* w, const component_t* comp)
{
    return comp->order_state != 0 && comp->order_count == comp->table.count &&
           comp->order_count == w->agents.count && comp->order_structure == w->structure_version &&
           comp->order_version == comp->version;
}

static void order_note(const world_t* w, component_t* comp, int in_order)
{
    comp->order_state = in_order ? 1 : 2;
    comp->order_count = comp->table.count;
    comp->order_structure = w->structure_version;
    comp->order_version = comp->version;
}

typedef struct identity_ctx {
    world_t* w;
    int32_t comps[WORLD_MAX_COMPONENTS];
    int32_t count;
    atomic_uchar out_of_order[WORLD_MAX_COMPONENTS]; /* by position in comps */
    uint8_t in_order[WORLD_MAX_COMPONENTS];          /* by component, once the scan is done */
} identity_ctx_t;

static void identity_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    identity_ctx_t* c = (identity_ctx_t*)vctx;
    for (int32_t j = 0; j < c->count; ++j) {
        if (atomic_load_explicit(&c->out_of_order[j], memory_order_relaxed)) continue;
        const uint32_t* crow = TABLE_COL(&c->w->comps[c->comps[j]].table, uint32_t, COMP_ROW);
        if (table_rows_differ(crow, begin, end, 0, 1))
            atomic_store_explicit(&c->out_of_order[j], 1, memory_order_relaxed);
    }
}

/* Once the agent columns are permuted: every agent's slot points at its
 * new row, and so does every component in agent-row order (its rows follow
 * the agents', so its slot column is the agents' and COMP_ROW stays the
 * identity). */
typedef struct point_ctx {
    world_t* w;
    const identity_ctx_t* id;
} point_ctx_t;

static void point_slots(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const point_ctx_t* c = (const point_ctx_t*)vctx;
    world_t* w = c->w;
    const uint32_t* slots = table_slots(&w->agents);
    for (int32_t i = begin; i < end; ++i) w->slots[slots[i]].row = i;
    for (int k = 0; k < w->comp_count; ++k) {
        if (!c->id->in_order[k]) continue;
        component_t* comp = &w->comps[k];
        uint32_t* cslots = table_slots(&comp->table);
        for (int32_t i = begin; i < end; ++i) {
            uint32_t s = slots[i];
            cslots[i] = s;
            comp->sparse[s] = i;
        }
    }
}

/* A component every agent has, out of agent-row order: its new row i is
 * the row of agent row i. */
static void component_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx_t* c = (par_permute_ctx_t*)vctx;
    const uint32_t* slots = table_slots(&c->w->agents);
    for (int32_t i = begin; i < end; ++i) c->comp_perm[i] = component_row(c->comp, slots[i]);
}

static void point_component(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx_t* c = (par_permute_ctx_t*)vctx;
    const uint32_t* cslots = table_slots(&c->comp->table);
    int32_t* crow = TABLE_COL(&c->comp->table, int32_t, COMP_ROW);
    for (int32_t r = begin; r < end; ++r) {
        c->comp->sparse[cslots[r]] = r;
        crow[r] = c->w->slots[cslots[r]].row;
    }
}

void world_permute_agents_parallel(world_t* w, const int32_t* perm, float* const* spare, int32_t spares,
                                   int32_t* component_perm)
{
    int32_t n = w->agents.count;
    if (spares > PERMUTE_MAX_SPARES) spares = PERMUTE_MAX_SPARES;
    if (spares < 1) spares = 1;
    par_permute_ctx_t c = {.w = w,
                           .table = &w->agents,
                           .perm = perm,
                           .spare = spare,
                           .spares = spares,
                           .comp_perm = component_perm};
    /* The components in agent-row order, found before anything moves: what
     * world_component_in_agent_order knows (a reorder leaves it known, as
     * below), the others in one scan together. */
    identity_ctx_t id = {.w = w};
    for (int k = 0; k < w->comp_count; ++k) {
        const component_t* comp = &w->comps[k];
        if (comp->table.count != n) continue;
        if (order_known(w, comp)) {
            id.in_order[k] = comp->order_state == 1;
            continue;
        }
        atomic_init(&id.out_of_order[id.count], 0);
        id.comps[id.count++] = k;
    }
    if (id.count > 0) par_for(w, n, 4096, PAR_STATIC, identity_rows, &id);
    w->order_scans += (uint64_t)id.count;
    for (int32_t j = 0; j < id.count; ++j)
        id.in_order[id.comps[j]] = !atomic_load_explicit(&id.out_of_order[j], memory_order_relaxed);
    /* The parameter columns the world knows to hold one value (params_one,
     * kept exact by every writer) need not even be scanned. */
    uint64_t one = 0;
    for (int k = 0; k < AP_COUNT; ++k)
        if (w->params_one >> k & 1u) one |= 1ull << (AP_FIRST + k);
    int scanned;
    permute_table_rows(w, &c, n, one, &scanned);
    user_permute(w, perm);
    const uint64_t was_version = w->structure_version;
    w->structure_version++;
    point_ctx_t pc = {w, &id};
    par_for(w, n, 4096, PAR_STATIC, point_slots, &pc);
    /* A component in agent-row order moves as the agents do: the agents'
     * permutation, its slot column and sparse index written by point_slots,
     * COMP_ROW unchanged. */
    for (int k = 0; k < w->comp_count; ++k) {
        if (!id.in_order[k]) continue;
        c.comp = &w->comps[k];
        c.table = &c.comp->table;
        c.perm = perm;
        permute_component(w, &c, k, n, 1ull << 0 | 1ull << COMP_ROW);
    }
    const uint32_t* slots = table_slots(&w->agents);
    for (int k = 0; k < w->comp_count; ++k) {
        component_t* comp = &w->comps[k];
        int32_t m = comp->table.count;
        if (m == 0 || id.in_order[k]) continue;
        c.comp = comp;
        c.table = &comp->table;
        c.perm = component_perm;
        if (m == n) {
            par_for(w, n, 4096, PAR_STATIC, component_rows, &c);
        } else {
            int32_t j = 0;
            for (int32_t i = 0; i < n && j < m; ++i) {
                int32_t r = component_row(comp, slots[i]);
                if (r >= 0) component_perm[j++] = r;
            }
        }
        /* point_component writes every row's agent row afresh. */
        permute_component(w, &c, k, m, 1ull << COMP_ROW);
        par_for(w, m, 4096, PAR_STATIC, point_component, &c);
    }
    /* Every component on every agent now has its row r at agent row r. */
    for (int k = 0; k < w->comp_count; ++k)
        if (w->comps[k].table.count == n) order_note(w, &w->comps[k], 1);
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->agents_permuted) mod->agents_permuted(w, perm, was_version, id.in_order);
    }
}

shoal_status_t world_permute_agents(world_t* w, const int32_t* perm)
{
    int32_t n = w->agents.count;
    if (n == 0) return SHOAL_OK;
    size_t scratch_size = world_permute_scratch_size(w);
    size_t seen_size = (size_t)n;
    size_t cperm_size = (size_t)n * sizeof(int32_t);
    void* scratch = mem_alloc(&w->alloc, scratch_size);
    uint8_t* seen = (uint8_t*)mem_calloc(&w->alloc, seen_size);
    int32_t* cperm = (int32_t*)mem_alloc(&w->alloc, cperm_size);
    shoal_status_t st = SHOAL_OK;
    if (!scratch || !seen || !cperm) {
        st = world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "permute_agents: out of memory");
        goto done;
    }
    for (int32_t i = 0; i < n; ++i) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]) {
            st =
                world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                           "permute_agents: perm[%d] = %d is out of range or repeated", (int)i, (int)perm[i]);
            goto done;
        }
        seen[perm[i]] = 1;
    }
    world_permute_agents_unchecked(w, perm, scratch, cperm);
done:
    mem_free(&w->alloc, cperm, cperm_size);
    mem_free(&w->alloc, seen, seen_size);
    mem_free(&w->alloc, scratch, scratch_size);
    return st;
}

/* ---- a component in agent-row order ------------------------------------- */

typedef struct order_scan {
    const uint32_t* rows;
    atomic_int out; /* a row r with rows[r] != r */
} order_scan_t;

static void order_scan_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    order_scan_t* c = (order_scan_t*)vctx;
    if (atomic_load_explicit(&c->out, memory_order_relaxed)) return;
    if (table_rows_differ(c->rows, begin, end, 0, 1)) atomic_store_explicit(&c->out, 1, memory_order_relaxed);
}

int world_component_in_agent_order(world_t* w, int k)
{
    component_t* comp = &w->comps[k];
    const int32_t n = comp->table.count;
    if (n == 0 || n != w->agents.count) return 0;
    if (order_known(w, comp)) return comp->order_state == 1;
    order_scan_t c;
    c.rows = TABLE_COL(&comp->table, uint32_t, COMP_ROW);
    atomic_init(&c.out, 0);
    par_for(w, n, 16384, PAR_STATIC, order_scan_range, &c);
    w->order_scans++;
    order_note(w, comp, !atomic_load_explicit(&c.out, memory_order_relaxed));
    return comp->order_state == 1;
}
