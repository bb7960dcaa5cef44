/* Tables, optional components and allocator hooks. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/component.h"
#include "support.h"

Test(table, columns_are_aligned_padded_and_zeroed)
{
    allocator_t a = allocator_default();
    uint16_t sizes[3] = {4, 4, 8};
    table_t t;
    table_init(&t, sizes, 3);
    cr_assert(table_reserve(&t, &a, 5));
    cr_assert_eq(t.capacity % TABLE_PAD, 0);
    for (int c = 0; c < 3; ++c) cr_assert_eq((uintptr_t)t.columns[c] % 64, 0, "column %d alignment", c);
    for (uint32_t i = 0; i < 40; ++i) {
        cr_assert(table_reserve(&t, &a, t.count + 1));
        int32_t row = table_push(&t, i);
        TABLE_COL(&t, float, 1)[row] = (float)i;
        TABLE_COL(&t, uint64_t, 2)[row] = i * 10u;
    }
    /* Swap-remove row 3: the last row (39) moves into it, its old place is zeroed. */
    cr_assert_eq(table_swap_remove(&t, 3), 39u);
    cr_assert_eq(table_slots(&t)[3], 39u);
    cr_assert_eq(TABLE_COL(&t, float, 1)[3], 39.0f);
    cr_assert_eq(TABLE_COL(&t, uint64_t, 2)[3], 390u);
    for (int32_t r = t.count; r < t.capacity; ++r) cr_assert_eq(TABLE_COL(&t, float, 1)[r], 0.0f);
    cr_assert_eq(table_swap_remove(&t, t.count - 1), UINT32_MAX, "removing the last row moves nothing");
    table_release(&t, &a);
}

Test(table, optional_component_tracks_rows_through_removes_and_permutes)
{
    allocator_t a = allocator_default();
    uint16_t sizes[2] = {4, 4};
    component_t comp;
    component_init(&comp, sizes, 2);
    cr_assert(component_reserve_slots(&comp, &a, 100));
    /* Only even slots have the component. */
    for (uint32_t s = 0; s < 100; s += 2) {
        int32_t row = component_add(&comp, &a, s);
        cr_assert_geq(row, 0);
        TABLE_COL(&comp.table, float, 1)[row] = (float)s;
    }
    cr_assert_eq(component_add(&comp, &a, 4), component_row(&comp, 4), "adding twice is a no-op");
    cr_assert_eq(comp.table.count, 50);
    cr_assert_eq(component_row(&comp, 7), -1);
    for (uint32_t s = 0; s < 100; s += 6) component_remove(&comp, s);
    int32_t n = comp.table.count;
    int32_t* perm = malloc((size_t)n * sizeof *perm);
    for (int32_t i = 0; i < n; ++i) perm[i] = (i * 7) % n; /* n is coprime with 7 here */
    cr_assert_eq(n % 7 != 0, 1);
    void* scratch = malloc((size_t)comp.table.capacity * 4);
    component_permute(&comp, perm, scratch);
    for (uint32_t s = 0; s < 100; ++s) {
        int32_t row = component_row(&comp, s);
        int has = s % 2 == 0 && s % 6 != 0;
        cr_assert_eq(row >= 0, has, "slot %u", s);
        if (has) cr_assert_eq(TABLE_COL(&comp.table, float, 1)[row], (float)s);
    }
    free(perm);
    free(scratch);
    component_release(&comp, &a);
}

/* Counting allocator: every byte handed out comes back with the same size. */
typedef struct counting {
    int64_t live_blocks;
    int64_t live_bytes;
    int64_t calls;
    int64_t fail_at; /* fail the n-th call (1-based), 0 = never */
} counting_t;

static void* count_alloc(size_t size, size_t align, void* ctx)
{
    counting_t* c = (counting_t*)ctx;
    c->calls++;
    if (c->fail_at && c->calls == c->fail_at) return NULL;
    cr_assert_eq(align, 64);
    c->live_blocks++;
    c->live_bytes += (int64_t)size;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void count_free(void* p, size_t size, void* ctx)
{
    counting_t* c = (counting_t*)ctx;
    c->live_blocks--;
    c->live_bytes -= (int64_t)size;
    free(p);
}

static shoal_world_t* counted_world(counting_t* c, shoal_status_t* st)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.initial_capacity = 16;
    def.alloc = count_alloc;
    def.free = count_free;
    def.alloc_user_ctx = c;
    shoal_world_t* w = NULL;
    *st = shoal_world_create(&def, &w, NULL);
    return w;
}

Test(table, allocator_hooks_see_every_block)
{
    counting_t c = {0};
    shoal_status_t st;
    shoal_world_t* w = counted_world(&c, &st);
    cr_assert_eq(st, SHOAL_OK);
    populate_mixed(w, 3000, 2);
    step_n(w, 3, 0.02f);
    cr_assert_gt(c.calls, 3, "growth went through the hooks");
    shoal_world_destroy(w);
    cr_assert_eq(c.live_blocks, 0);
    cr_assert_eq(c.live_bytes, 0);
}

Test(table, failed_allocation_changes_nothing)
{
    /* Fail each allocation of a growing world in turn: every call either
     * succeeds or fails cleanly with the world still usable and unchanged. */
    for (int64_t fail = 1; fail < 40; ++fail) {
        counting_t c = {0};
        c.fail_at = fail;
        shoal_status_t st;
        shoal_world_t* w = counted_world(&c, &st);
        if (!w) {
            cr_assert_eq(st, SHOAL_ERR_OUT_OF_MEMORY);
            cr_assert_eq(c.live_blocks, 0, "a failed create leaks nothing");
            continue;
        }
        shoal_agent_def_t d = shoal_agent_default_def();
        int added = 0;
        for (int i = 0; i < 200; ++i) {
            uint64_t before = shoal_world_state_hash(w);
            int count = shoal_world_agent_count(w);
            d.position[0] = (float)i;
            shoal_agent_t id;
            st = shoal_agent_add(w, &d, &id);
            if (st == SHOAL_OK) {
                added++;
                continue;
            }
            cr_assert_eq(st, SHOAL_ERR_OUT_OF_MEMORY);
            cr_assert(shoal_agent_is_null(id));
            cr_assert_eq(shoal_world_agent_count(w), count);
            cr_assert_eq(shoal_world_state_hash(w), before);
        }
        cr_assert_geq(added, 199, "only the one injected failure may fail");
        step_n(w, 2, 0.02f);
        shoal_world_destroy(w);
        cr_assert_eq(c.live_blocks, 0);
    }
}
