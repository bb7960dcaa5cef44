/* Counter-based random numbers: pure functions of their inputs. */
#include <criterion/criterion.h>

#include "ecs/rng.h"

Test(rng, shared_base_equals_full_draw)
{
    for (uint64_t k = 0; k < 1000; ++k) {
        uint64_t base = rng_base(42, k * 7919u, k ^ 0x55u);
        for (uint32_t s = 0; s < 4; ++s)
            cr_assert_eq(rng_stream(base, s), rng_bits(42, k * 7919u, k ^ 0x55u, s));
    }
}

Test(rng, seed_round_done_once_equals_the_base)
{
    for (uint64_t seed = 0; seed < 50; ++seed) {
        uint64_t round = rng_seed_round(seed * 0x9e37u);
        for (uint64_t k = 0; k < 200; ++k)
            cr_assert_eq(rng_base_from(round, k << 29 | k, k * 3u),
                         rng_base(seed * 0x9e37u, k << 29 | k, k * 3u));
    }
}

Test(rng, draws_are_uniform_and_in_range)
{
    /* 64 bins of 100,000 draws: every bin within 5 standard deviations
     * (about 39 draws) of its expectation of 1562.5. */
    int bins[64] = {0};
    for (uint64_t i = 0; i < 100000; ++i) {
        float u = rng_unit(1, i, 3, 0);
        cr_assert(u >= 0.0f && u < 1.0f);
        float v = rng_signed_unit(rng_bits(1, i, 4, 0));
        cr_assert(v >= -1.0f && v < 1.0f);
        bins[(int)(u * 64.0f)]++;
    }
    for (int b = 0; b < 64; ++b) cr_assert(bins[b] > 1365 && bins[b] < 1760, "bin %d: %d", b, bins[b]);
    cr_assert_neq(rng_bits(1, 2, 3, 4), rng_bits(1, 2, 3, 5), "streams differ");
    cr_assert_neq(rng_bits(1, 2, 3, 4), rng_bits(2, 2, 3, 4), "seeds differ");
}
