/* state_hash: a digest of all simulation state, the same for any storage
 * order, thread count or split of the work.
 *
 * The hash is a sum modulo 2^64 of one term per agent part (its agent row,
 * and each of its component rows), plus one term for the world-wide values
 * (dimensions, step count, agent count) and the module-wide data (walls,
 * routes, terrain, goals...). Each term mixes the agent's global id with
 * every state column of that row, bit patterns included (so -0.0 and 0.0
 * differ: equal hashes mean bit-identical state). A sum does not depend on
 * the order its terms are added in, so:
 * - rows are visited in storage order, block by block over the world's
 *   threads, each worker adding into its own partial sum;
 * - a reordered table, a save and resume, any thread count give the same
 *   value, and a world split over processes would too (each process sums
 *   its own agents, then the sums are added);
 * - an agent that is duplicated or lost changes the sum (a sum, not an
 *   exclusive or, under which a duplicate would cancel itself).
 *
 * A term is computed column by column over a block of rows, so that each
 * column is read once, in order, and the per-row arithmetic (64-bit
 * multiplies and shifts, no branch) vectorizes: for each column word v,
 * acc = fold(acc ^ v); the term is a full mix of acc, which starts as a mix
 * of the global id and the part. Columns that are not state (the slot, the
 * agent row of a component row, statistics such as planner wall time) are
 * left out. A reference to another agent is hashed as stored, its global
 * id + 1: the same whatever slot that agent has, in any process. */
#include <string.h>

#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "ecs/rng.h"
#include "ecs/world.h"

enum { HASH_BLOCK = 512 };

/* A column word into a row's accumulator: an odd multiply carries each
 * bit upward, the shift brings the high half back down. (Two columns as the
 * halves of one word halve the multiplies but measured slower: the fold is
 * bound by memory, not by the multiplies.) */
static inline uint64_t fold(uint64_t acc, uint64_t v)
{
    acc = (acc ^ v) * 0x9fb21c651e98df25ull;
    return acc ^ (acc >> 29);
}

static uint64_t absorb(uint64_t h, uint64_t word) { return rng_mix64(h ^ word) + 0x9e3779b97f4a7c15ull; }

/* The columns a table's terms read, in column order: plain ones, then
 * those hashed only where not 0. */
enum { HASH_MAX_COLUMNS = TABLE_MAX_COLUMNS + 64 };
typedef struct hash_cols {
    const uint32_t* plain[HASH_MAX_COLUMNS];
    int32_t plain_count;
    const uint32_t* nonzero[HASH_MAX_COLUMNS];
    int32_t nonzero_count;
} hash_cols_t;

typedef struct hash_ctx {
    const world_t* w;
    int k;           /* component, or -1 for the agent table */
    uint64_t* parts; /* one partial sum per worker */
    hash_cols_t cols;
} hash_ctx_t;

/* Rows [r0, r0 + n) of the columns into acc. */
static void fold_columns(const hash_cols_t* hc, uint64_t* acc, int32_t r0, int32_t n)
{
    for (int32_t j = 0; j < hc->plain_count; ++j) {
        const uint32_t* a = hc->plain[j] + r0;
        for (int32_t i = 0; i < n; ++i) acc[i] = fold(acc[i], a[i]);
    }
    for (int32_t j = 0; j < hc->nonzero_count; ++j) { /* state only where it is set */
        const uint32_t* a = hc->nonzero[j] + r0;
        for (int32_t i = 0; i < n; ++i) {
            uint64_t folded = fold(acc[i], a[i]);
            acc[i] = a[i] ? folded : acc[i];
        }
    }
}

static void add_plain(hash_cols_t* hc, const void* column)
{
    hc->plain[hc->plain_count++] = (const uint32_t*)column;
}

/* The agent rows [begin, end): every agent column but the slot and the id,
 * then the user components' words. */
static void hash_agents(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const hash_ctx_t* c = (const hash_ctx_t*)vctx;
    const world_t* w = c->w;
    const table_t* t = &w->agents;
    const uint32_t* id_lo = TABLE_COL(t, uint32_t, AC_ID_LO);
    const uint32_t* id_hi = TABLE_COL(t, uint32_t, AC_ID_HI);
    uint64_t acc[HASH_BLOCK], sum = 0;
    for (int32_t r0 = begin; r0 < end; r0 += HASH_BLOCK) {
        int32_t n = end - r0 < HASH_BLOCK ? end - r0 : HASH_BLOCK;
        for (int32_t i = 0; i < n; ++i)
            acc[i] =
                rng_mix64(((uint64_t)id_lo[r0 + i] | (uint64_t)id_hi[r0 + i] << 32) ^ 0x6167656e74000000ull);
        fold_columns(&c->cols, acc, r0, n);
        for (int32_t u = 0; u < w->user_count; ++u) {
            int32_t words = w->user_cols[u].elem_size / 4;
            const uint32_t* v = (const uint32_t*)w->user.columns[u + 1] + (size_t)r0 * (size_t)words;
            for (int32_t i = 0; i < n; ++i)
                for (int32_t b = 0; b < words; ++b)
                    acc[i] = fold(acc[i], v[(size_t)i * (size_t)words + (size_t)b]);
        }
        for (int32_t i = 0; i < n; ++i) sum += rng_mix64(acc[i]);
    }
    c->parts[worker] += sum;
}

/* Component k's rows [begin, end), each keyed by its agent's id and k. */
static void hash_component(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const hash_ctx_t* c = (const hash_ctx_t*)vctx;
    const world_t* w = c->w;
    const table_t* t = &w->comps[c->k].table;
    const int32_t* agent_row = TABLE_COL(t, int32_t, COMP_ROW);
    const uint64_t salt = 0x636f6d7000000000ull + ((uint64_t)c->k << 32);
    uint64_t acc[HASH_BLOCK], sum = 0;
    for (int32_t r0 = begin; r0 < end; r0 += HASH_BLOCK) {
        int32_t n = end - r0 < HASH_BLOCK ? end - r0 : HASH_BLOCK;
        for (int32_t i = 0; i < n; ++i) acc[i] = rng_mix64(agent_global_id(w, agent_row[r0 + i]) ^ salt);
        fold_columns(&c->cols, acc, r0, n);
        for (int32_t i = 0; i < n; ++i) sum += rng_mix64(acc[i]);
    }
    c->parts[worker] += sum;
}

static void agent_columns(const world_t* w, hash_cols_t* hc)
{
    const table_t* t = &w->agents;
    for (int32_t col = 1; col < t->column_count; ++col)
        if (t->elem_size[col] != 0 && col != AC_ID_LO && col != AC_ID_HI) add_plain(hc, t->columns[col]);
}

/* A component's state columns: not the slot or the agent row, not the
 * statistics (COLUMN_NOT_STATE). */
static void component_columns(const world_t* w, int k, hash_cols_t* hc)
{
    const table_t* t = &w->comps[k].table;
    const module_t* mod = w->comp_module[k];
    for (int32_t col = COMP_ROW + 1; col < t->column_count; ++col) {
        uint8_t f = column_flags(mod, col);
        if (f & COLUMN_NOT_STATE) continue;
        if (f & COLUMN_HASH_NONZERO)
            hc->nonzero[hc->nonzero_count++] = (const uint32_t*)t->columns[col];
        else
            add_plain(hc, t->columns[col]);
    }
}

/* The sum over rows of one table: over the world's threads between steps,
 * on the calling thread inside one (from a system or a callback). */
static uint64_t sum_rows(const world_t* w, int k, int32_t count, par_fn* fn)
{
    uint64_t parts[SHOAL_MAX_THREADS];
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    memset(parts, 0, (size_t)workers * sizeof parts[0]);
    hash_ctx_t c;
    memset(&c, 0, sizeof c);
    c.w = w;
    c.k = k;
    c.parts = parts;
    if (k < 0)
        agent_columns(w, &c.cols);
    else
        component_columns(w, k, &c.cols);
    if (w->in_step || count < 4 * HASH_BLOCK)
        fn(0, count, 0, &c);
    else /* par_for changes no state of the world, only its scheduling scratch */
        par_for((world_t*)w, count, 4 * HASH_BLOCK, PAR_STATIC, fn, &c);
    uint64_t sum = 0;
    for (int32_t i = 0; i < workers; ++i) sum += parts[i];
    return sum;
}

uint64_t world_hash_agent_sum(const world_t* w)
{
    uint64_t sum = sum_rows(w, -1, w->agents.count, hash_agents);
    for (int k = 0; k < w->comp_count; ++k) sum += sum_rows(w, k, w->comps[k].table.count, hash_component);
    return sum;
}

uint64_t world_hash_finish(const world_t* w, uint64_t agent_sum, uint64_t agent_count)
{
    uint64_t h = absorb(0x73686f616c000002ull, (uint64_t)w->dims);
    h = absorb(h, w->step_count);
    h = absorb(h, agent_count);
    /* Module-wide state (obstacles, routes, paths and terrain, the trim
     * table and planner clock, walls, goals), in registry order. */
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->hash) h = mod->hash(w, h, absorb);
    }
    return rng_mix64(agent_sum + rng_mix64(h));
}

uint64_t shoal_world_state_hash(const shoal_world_t* w)
{
    if (!w) return 0;
    return world_hash_finish(w, world_hash_agent_sum(w), (uint64_t)w->agents.count);
}
