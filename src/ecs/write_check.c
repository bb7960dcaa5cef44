/* The write check: the tests' proof that the step table's `writes` hold
 * (docs/design.md, "Modules and the open core": a test build checks that a
 * system writes nothing else).
 *
 * Decisions worth knowing:
 * - A runtime switch on the world, not a compile-time option: every preset
 *   CI builds runs the tests that turn it on, and a normal world pays one
 *   pointer test per system run (world_run_system) and one in fuse_chain.
 * - While it is on, passes do not fuse: each system is checked alone, which
 *   is stricter than checking a fused group's union. Fused and unfused
 *   passes give the same bits (scheduler.c, "Fused passes"; the tests
 *   compare them), so the declarations checked are the ones that hold.
 * - A fingerprint is a 64-bit hash of a column's bytes over the live rows
 *   (the table's count): agent columns that exist in the world's
 *   dimensions, then every column of every component, then each module's
 *   module-wide data as its hash hook sees it (data a module does not
 *   hash, such as the grid and scratch memory, is not checked; nor are user
 *   components, which only user code and a reorder touch). Hashing every
 *   column costs a pass over the table per system run: fine for tests,
 *   never paid otherwise.
 * - A system that may reorder rows (SYSTEM_PERMUTES_ROWS: spatial_hash) is
 *   checked with fingerprints that ignore row order (a sum of hashed
 *   values): a reorder keeps every column's values, so what it must not do
 *   is change one. COMP_ROW, the component rows' agent rows, is rewritten by
 *   a reorder and not checked for it. */
#include "ecs/write_check.h"

#include <string.h>

/* splitmix64's finalizer. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* In row order: (h ^ word) * odd is one-to-one in h for each word, so a
 * single changed word always changes the result; four chains over 8-byte
 * words keep the multiplier busy (about a cycle per 8 bytes). */
static uint64_t fingerprint(const void* column, int32_t rows, int unordered)
{
    const unsigned char* bytes = (const unsigned char*)column;
    const size_t n = (size_t)rows * 4;
    if (unordered) {
        uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)rows;
        for (size_t i = 0; i < n; i += 4) {
            uint32_t v;
            memcpy(&v, bytes + i, 4);
            h += mix64(v + 0x632be59bd9b4e019ull);
        }
        return h;
    }
    const uint64_t odd = 0x9fb21c651e98df25ull;
    uint64_t h[4] = {1, 2, 3, 4};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; ++k) {
            uint64_t word;
            memcpy(&word, bytes + i + 8 * (size_t)k, 8);
            h[k] = (h[k] ^ word) * odd;
        }
    for (; i < n; i += 4) {
        uint32_t v;
        memcpy(&v, bytes + i, 4);
        h[0] = (h[0] ^ v) * odd;
    }
    return mix64(h[0] ^ mix64(h[1] ^ mix64(h[2] ^ mix64(h[3] ^ (uint64_t)rows))));
}

static uint64_t absorb(uint64_t h, uint64_t word) { return mix64(h ^ word); }

static size_t check_words(const world_t* w)
{
    size_t n = AC_COUNT_ + (size_t)w->registry->module_count;
    for (int32_t k = 0; k < w->comp_count; ++k) n += (size_t)w->comp_module[k]->column_count;
    return n;
}

shoal_status_t world_set_write_check(world_t* w, int on)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "set_write_check: called from inside a step");
    if (!on) {
        if (w->write_check) mem_free(&w->alloc, w->write_check, check_words(w) * sizeof *w->write_check);
        w->write_check = NULL;
        return SHOAL_OK;
    }
    if (w->write_check) return SHOAL_OK;
    w->write_check = (uint64_t*)mem_calloc(&w->alloc, check_words(w) * sizeof *w->write_check);
    if (!w->write_check)
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "set_write_check: no memory for the fingerprints");
    return SHOAL_OK;
}

/* Every column s does not declare written, fingerprinted into fp; with
 * `compare`, the first that differs from fp is reported instead (0 when
 * none). */
static int fingerprint_all(world_t* w, const system_t* s, uint64_t* fp, int compare)
{
    const system_def_t* d = s->def;
    const int unordered = (d->flags & SYSTEM_PERMUTES_ROWS) != 0;
    const registry_t* reg = w->registry;
    uint64_t* at = fp;
    for (int32_t c = 0; c < AC_COUNT_; ++c, ++at) {
        if ((d->writes.agent >> c & 1u) || !agent_column_used(w->dims, c)) continue;
        uint64_t h = fingerprint(w->agents.columns[c], w->agents.count, unordered);
        if (!compare) {
            *at = h;
        } else if (*at != h) {
            const char* name = reg->column_name ? reg->column_name(-1, c) : NULL;
            world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                       "write check: system '%s' changed agent column '%s' (%d), which its writes do not "
                       "declare (modules/step.c)",
                       s->name, name ? name : "?", (int)c);
            return 1;
        }
    }
    for (int32_t k = 0; k < w->comp_count; ++k) {
        const table_t* t = &w->comps[k].table;
        const int32_t columns = w->comp_module[k]->column_count;
        for (int32_t c = 0; c < columns; ++c, ++at) {
            if (column_set_has(&d->writes, k, c) || (unordered && c == COMP_ROW)) continue;
            uint64_t h = fingerprint(t->columns[c], t->count, unordered);
            if (!compare) {
                *at = h;
            } else if (*at != h) {
                const char* name = reg->column_name ? reg->column_name(k, c) : NULL;
                world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                           "write check: system '%s' changed column '%s' (%d) of component '%s', which its "
                           "writes do not declare (modules/step.c)",
                           s->name, name ? name : "?", (int)c, w->comp_module[k]->name);
                return 1;
            }
        }
    }
    /* Module-wide data, as far as the module hashes it (module_t.hash:
     * obstacles, walls, routes, paths and terrain, the planner's state). */
    for (int32_t m = 0; m < reg->module_count; ++m, ++at) {
        const module_t* mod = reg->modules[m];
        if (!mod->hash || (m < 32 && (d->writes.data >> m & 1u))) continue;
        uint64_t h = mod->hash(w, 0x2545f4914f6cdd1dull, absorb);
        if (!compare) {
            *at = h;
        } else if (*at != h) {
            world_fail(
                w, SHOAL_ERR_INVALID_ARGUMENT,
                "write check: system '%s' changed the module-wide data of '%s', which its writes do not "
                "declare (modules/step.c)",
                s->name, mod->name);
            return 1;
        }
    }
    return 0;
}

int64_t write_check_run(world_t* w, system_t* s, float dt)
{
    const int checked = s->def != NULL;
    const int32_t rows = w->agents.count;
    if (checked) fingerprint_all(w, s, w->write_check, 0);
    w->running_without = s->without;
    int64_t touched = s->run(w, dt, s->ctx);
    w->running_without = 0;
    if (!checked || touched < 0) return touched;
    if (w->agents.count != rows) {
        world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                   "write check: system '%s' changed the agent count (%d to %d)", s->name, (int)rows,
                   (int)w->agents.count);
        return -(int64_t)SHOAL_ERR_INVALID_ARGUMENT;
    }
    if (fingerprint_all(w, s, w->write_check, 1)) return -(int64_t)SHOAL_ERR_INVALID_ARGUMENT;
    return touched;
}
