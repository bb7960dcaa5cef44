/* Reordering the agent table (the sense stage's reorder by cell, and
 * world_permute_agents): every column, the user components, the slots and
 * every component's rows follow, so handles stay valid. */
#include <string.h>

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

void world_permute_agents_unchecked(world_t* w, const int32_t* perm, void* scratch,
                                    int32_t* component_perm)
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
    table_t* table;           /* whose columns the passes permute */
    const int32_t* perm;      /* new row i = old row perm[i] */
    float* const* spare;      /* scratch columns, one per column of a group */
    int32_t spares;
    int32_t group[PERMUTE_MAX_SPARES]; /* this pass's columns */
    int32_t group_size;
    int32_t copy_back[PERMUTE_MAX_SPARES]; /* second pass: columns to write */
    uint8_t* differs;         /* [worker * spares + j]: a gathered value differed from row 0's */
    component_t* comp;        /* the component of the row passes */
    int32_t* comp_perm;       /* component_rows' output */
} par_permute_ctx;

/* First pass over a block of rows: gather each column of the group into
 * its scratch column, noting whether any value differs from row 0's (a
 * column of one value is left as it is: permuting it changes nothing).
 * Every worker takes rows of every column, so all of them take part
 * however few columns a table has. */
static void gather_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    par_permute_ctx* c = (par_permute_ctx*)vctx;
    const int32_t* perm = c->perm;
    for (int32_t j = 0; j < c->group_size; ++j) {
        const uint32_t* src = (const uint32_t*)c->table->columns[c->group[j]];
        uint32_t* dst = (uint32_t*)(void*)c->spare[j];
        uint32_t first = src[0], diff = 0;
        for (int32_t i = begin; i < end; ++i) {
            uint32_t v = src[perm[i]];
            dst[i] = v;
            diff |= v ^ first;
        }
        if (diff) c->differs[(size_t)worker * c->spares + j] = 1;
    }
}

/* Second pass: the gathered columns that hold more than one value go
 * back into the table. */
static void copy_back_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx* c = (par_permute_ctx*)vctx;
    for (int32_t j = 0; j < c->group_size; ++j) {
        if (!c->copy_back[j]) continue;
        uint32_t* dst = (uint32_t*)c->table->columns[c->group[j]];
        memcpy(dst + begin, (const uint32_t*)(const void*)c->spare[j] + begin, (size_t)(end - begin) * sizeof *dst);
    }
}

/* Permute every column of c->table by c->perm over `rows` rows: groups of
 * up to `spares` columns, each gathered in one parallel pass over the
 * rows and written back in another. */
static void permute_table_rows(world_t* w, par_permute_ctx* c, int32_t rows)
{
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    table_t* t = c->table;
    int32_t col = 0;
    while (col < t->column_count) {
        c->group_size = 0;
        for (; col < t->column_count && c->group_size < c->spares; ++col)
            if (t->elem_size[col] != 0) c->group[c->group_size++] = col;
        if (c->group_size == 0) break;
        memset(c->differs, 0, (size_t)workers * c->spares);
        par_for(w, rows, 4096, PAR_STATIC, gather_rows, c);
        int any = 0;
        for (int32_t j = 0; j < c->group_size; ++j) {
            c->copy_back[j] = 0;
            for (int32_t k = 0; k < workers; ++k) c->copy_back[j] |= c->differs[(size_t)k * c->spares + j];
            any |= c->copy_back[j];
        }
        if (any) par_for(w, rows, 4096, PAR_STATIC, copy_back_rows, c);
    }
}

static void point_slots(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    world_t* w = ((par_permute_ctx*)vctx)->w;
    const uint32_t* slots = table_slots(&w->agents);
    for (int32_t i = begin; i < end; ++i) w->slots[slots[i]].row = i;
}

/* A component every agent has: its new row i is the row of agent row i. */
static void component_rows(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx* c = (par_permute_ctx*)vctx;
    const uint32_t* slots = table_slots(&c->w->agents);
    for (int32_t i = begin; i < end; ++i) c->comp_perm[i] = component_row(c->comp, slots[i]);
}

static void point_component(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    par_permute_ctx* c = (par_permute_ctx*)vctx;
    const uint32_t* cslots = table_slots(&c->comp->table);
    int32_t* crow = TABLE_COL(&c->comp->table, int32_t, COMP_ROW);
    for (int32_t r = begin; r < end; ++r) {
        c->comp->sparse[cslots[r]] = r;
        crow[r] = c->w->slots[cslots[r]].row;
    }
}

void world_permute_agents_parallel(world_t* w, const int32_t* perm, float* const* spare,
                                   int32_t spares, int32_t* component_perm)
{
    int32_t n = w->agents.count;
    if (spares > PERMUTE_MAX_SPARES) spares = PERMUTE_MAX_SPARES;
    uint8_t differs[SHOAL_MAX_THREADS * 2]; /* workers x spares flags */
    par_permute_ctx c = {.w = w, .table = &w->agents, .perm = perm, .spare = spare, .spares = spares,
                         .comp_perm = component_perm};
    /* The flags need workers x spares bytes; beyond the stack array's room
     * (more than 256 workers), fewer columns go at once. */
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    while ((size_t)workers * c.spares > sizeof differs && c.spares > 1) c.spares--;
    c.differs = differs;
    permute_table_rows(w, &c, n);
    user_permute(w, perm);
    w->structure_version++;
    par_for(w, n, 4096, PAR_STATIC, point_slots, &c);
    const uint32_t* slots = table_slots(&w->agents);
    for (int k = 0; k < w->comp_count; ++k) {
        component_t* comp = &w->comps[k];
        int32_t m = comp->table.count;
        if (m == 0) continue;
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
        permute_table_rows(w, &c, m);
        par_for(w, m, 4096, PAR_STATIC, point_component, &c);
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
            st = world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                            "permute_agents: perm[%d] = %d is out of range or repeated", (int)i,
                            (int)perm[i]);
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
