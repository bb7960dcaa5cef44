/* The 2D cells' keys that settle a neighbor list's ties (grid.h
 * lane_grid_cell_key, crowd.c list_ties_before): lanei_add_wrap and
 * lanei_sub_wrap compute modulo 2^32 as unsigned arithmetic does, at every
 * lane width, edges included; and for cells less than 2^15 apart along each
 * axis, anywhere in the hash's range of cells (clamped to 1e9 either way),
 * the sign of the difference of their keys is grid_cell_less's order and
 * 0 means one cell: across x's 2^16 (where x carries into y's part), y's
 * 2^15 (the key's sign) and the clamps. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "ecs/rng.h"
#include "modules/grid/grid.h"
#include "simd/lanes.h"

static int32_t random_int(uint64_t seed, uint64_t i, uint32_t stream, int64_t lo, int64_t hi)
{
    const uint64_t span = (uint64_t)(hi - lo) + 1u;
    return (int32_t)(lo + (int64_t)(rng_bits(seed, i, 0, stream) % span));
}

Test(cell_keys, wrapping_add_and_sub_are_modulo_two_to_the_32)
{
    const int32_t edges[] = {0,
                             1,
                             -1,
                             2,
                             -2,
                             65535,
                             65536,
                             -65536,
                             INT32_MAX,
                             INT32_MIN,
                             INT32_MAX - 1,
                             INT32_MIN + 1,
                             1000000000,
                             -1000000000};
    const int ne = (int)(sizeof edges / sizeof edges[0]);
    int32_t a[SHOAL_LANES], b[SHOAL_LANES], s[SHOAL_LANES], d[SHOAL_LANES];
    int checked = 0, wrong = 0;
    for (int i = 0; i < 4096; ++i) {
        for (int l = 0; l < SHOAL_LANES; ++l) {
            const int j = i * SHOAL_LANES + l;
            a[l] = j % 3 == 0 ? edges[j % ne] : random_int(1, (uint64_t)j, 0, INT32_MIN, INT32_MAX);
            b[l] = j % 5 == 0 ? edges[(j / 5) % ne] : random_int(1, (uint64_t)j, 1, INT32_MIN, INT32_MAX);
        }
        lanei_storeu(s, lanei_add_wrap(lanei_loadu(a), lanei_loadu(b)));
        lanei_storeu(d, lanei_sub_wrap(lanei_loadu(a), lanei_loadu(b)));
        for (int l = 0; l < SHOAL_LANES; ++l) {
            wrong += (uint32_t)s[l] != (uint32_t)a[l] + (uint32_t)b[l];
            wrong += (uint32_t)d[l] != (uint32_t)a[l] - (uint32_t)b[l];
            checked += 2;
        }
    }
    cr_assert_eq(wrong, 0, "%d of %d sums and differences not modulo 2^32", wrong, checked);
}

/* Cell a near one of the places keys wrap or clamp, b within 2^15 - 1 of
 * it along each axis (mostly a few cells: ties are between near cells). */
static void pair_near(uint64_t i, int32_t a[3], int32_t b[3])
{
    const int64_t at[] = {0, 32768, -32768, 65536, -65536, 1 << 29, -(1 << 29), 1000000000, -1000000000};
    const int na = (int)(sizeof at / sizeof at[0]);
    for (int axis = 0; axis < 2; ++axis) {
        const int64_t base = at[rng_bits(7, i, 0, (uint32_t)axis) % (uint64_t)na];
        const int32_t spread = i % 4 == 0 ? 32767 : 3;
        int64_t c[2] = {base + random_int(7, i, 2 + (uint32_t)axis, -8, 8), 0};
        c[1] = c[0] + random_int(7, i, 4 + (uint32_t)axis, -spread, spread);
        for (int e = 0; e < 2; ++e) { /* the hash's clamps (grid_coord) */
            if (c[e] > 1000000000) c[e] = 1000000000;
            if (c[e] < -1000000000) c[e] = -1000000000;
        }
        a[axis] = (int32_t)c[0];
        b[axis] = (int32_t)c[1];
    }
    a[2] = b[2] = 0;
}

Test(cell_keys, key_differences_order_cells_as_grid_cell_less)
{
    int32_t ax[SHOAL_LANES], ay[SHOAL_LANES], bx[SHOAL_LANES], by[SHOAL_LANES], d[SHOAL_LANES];
    int checked = 0, wrong = 0, ties = 0;
    for (uint64_t i = 0; i < 20000; i += SHOAL_LANES) {
        int32_t a[SHOAL_LANES][3], b[SHOAL_LANES][3];
        for (int l = 0; l < SHOAL_LANES; ++l) {
            pair_near(i + (uint64_t)l, a[l], b[l]);
            ax[l] = a[l][0];
            ay[l] = a[l][1];
            bx[l] = b[l][0];
            by[l] = b[l][1];
        }
        const lanei ka = lane_grid_cell_key(lanei_loadu(ax), lanei_loadu(ay));
        const lanei kb = lane_grid_cell_key(lanei_loadu(bx), lanei_loadu(by));
        lanei_storeu(d, lanei_sub_wrap(kb, ka));
        for (int l = 0; l < SHOAL_LANES; ++l) {
            const int same = a[l][0] == b[l][0] && a[l][1] == b[l][1];
            const int want = same ? 0 : grid_cell_less(a[l], b[l]) ? 1 : -1;
            const int got = d[l] > 0 ? 1 : d[l] < 0 ? -1 : 0;
            /* the scalar key is the lane's */
            const int32_t sd = (int32_t)((uint32_t)grid_cell_key(b[l][0], b[l][1]) -
                                         (uint32_t)grid_cell_key(a[l][0], a[l][1]));
            wrong += got != want || sd != d[l];
            ties += same;
            checked++;
        }
    }
    cr_assert_eq(wrong, 0, "%d of %d pairs of cells misordered by their keys", wrong, checked);
    cr_assert_gt(ties, 50, "only %d pairs in one cell", ties);
}
