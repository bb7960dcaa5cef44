/* state_hash: a digest of all simulation state, independent of storage
 * order. Agents are visited in slot order (not dense order, which the sense
 * stage may permute), and each contributes its handle, every column of its
 * row and of its component rows, bit patterns included (so -0.0 and 0.0 differ: equal hashes mean
 * bit-identical state). */
#include <string.h>

#include "ecs/columns.h"
#include "ecs/rng.h"
#include "ecs/world.h"

static uint64_t absorb(uint64_t h, uint64_t word) { return rng_mix64(h ^ word) + 0x9e3779b97f4a7c15ull; }

uint64_t shoal_world_state_hash(const shoal_world_t* w)
{
    if (!w) return 0;
    uint64_t h = absorb(0x73686f616c000000ull, (uint64_t)w->dims);
    h = absorb(h, w->step_count);
    h = absorb(h, (uint64_t)w->agents.count);
    const table_t* t = &w->agents;
    for (int32_t s = 0; s < w->slot_high; ++s) {
        const slot_t* slot = &w->slots[s];
        if (slot->state != SLOT_LIVE) continue;
        int32_t row = slot->row;
        h = absorb(h, ((uint64_t)(uint32_t)s << 16) | slot->generation);
        uint64_t acc = 0;
        int bits = 0;
        for (int32_t c = 1; c < t->column_count; ++c) {
            if (c == AC_ID_LO || c == AC_ID_HI) continue; /* not yet in the hash */
            uint16_t sz = t->elem_size[c];
            if (sz == 0) continue;
            if (sz == 8) {
                uint64_t v;
                memcpy(&v, (const char*)t->columns[c] + (size_t)row * 8, 8);
                h = absorb(h, v);
                continue;
            }
            uint32_t v;
            memcpy(&v, (const char*)t->columns[c] + (size_t)row * 4, 4);
            acc = (acc << 32) | v;
            bits += 32;
            if (bits == 64) {
                h = absorb(h, acc);
                acc = 0;
                bits = 0;
            }
        }
        if (bits) h = absorb(h, acc);
        h = user_hash_row(w, row, h, absorb);
        /* Optional components: parameters and state (the wander walk). */
        for (int k = 0; k < w->comp_count; ++k) {
            const component_t* comp = &w->comps[k];
            int32_t r = component_row(comp, (uint32_t)s);
            if (r < 0) continue;
            const module_t* mod = w->comp_module[k];
            h = absorb(h, 0xc0de0000u + (uint64_t)k);
            for (int32_t c = 1; c < comp->table.column_count; ++c) {
                uint32_t v;
                memcpy(&v, (const char*)comp->table.columns[c] + (size_t)r * 4, 4);
                uint8_t f = column_flags(mod, c);
                if (f & COLUMN_NOT_STATE) continue;
                if ((f & COLUMN_HASH_NONZERO) && v == 0) continue;
                if (f & COLUMN_HANDLE_TAG) v &= 0xffffu;
                h = absorb(h, v);
            }
        }
    }
    /* Module-wide state (obstacles, routes, paths and terrain, the trim
     * table and planner clock), in registry order. */
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->hash) h = mod->hash(w, h, absorb);
    }
    return rng_mix64(h);
}
