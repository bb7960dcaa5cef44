/* Counter-based random numbers: a draw is a pure function of (seed, key,
 * counter, stream), so results never depend on thread count or call order.
 * The mixer is SplitMix64's finalizer applied in a chain, which passes
 * BigCrush as a counter-based generator for the uses here (placement, noise). */
#ifndef SHOAL_RNG_H
#define SHOAL_RNG_H

#include <stdint.h>

static inline uint64_t rng_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 64 random bits for (seed, key, counter, stream). */
static inline uint64_t rng_bits(uint64_t seed, uint64_t key, uint64_t counter, uint32_t stream)
{
    uint64_t h = rng_mix64(seed ^ 0x5851f42d4c957f2dull);
    h = rng_mix64(h ^ key);
    h = rng_mix64(h ^ counter);
    return rng_mix64(h ^ (uint64_t)stream);
}

/* Several draws for one (seed, key, counter) share the first three mixing
 * rounds: rng_stream(rng_base(s, k, c), stream) == rng_bits(s, k, c, stream). */
static inline uint64_t rng_base(uint64_t seed, uint64_t key, uint64_t counter)
{
    uint64_t h = rng_mix64(seed ^ 0x5851f42d4c957f2dull);
    h = rng_mix64(h ^ key);
    return rng_mix64(h ^ counter);
}

/* rng_base with its first round, which depends on the seed alone, done once
 * for many draws: rng_base_from(rng_seed_round(s), k, c) == rng_base(s, k, c).
 * A loop of these over arrays is plain 64-bit arithmetic, which compilers
 * vectorize. */
static inline uint64_t rng_seed_round(uint64_t seed) { return rng_mix64(seed ^ 0x5851f42d4c957f2dull); }

static inline uint64_t rng_base_from(uint64_t seed_round, uint64_t key, uint64_t counter)
{
    return rng_mix64(rng_mix64(seed_round ^ key) ^ counter);
}

static inline uint64_t rng_stream(uint64_t base, uint32_t stream)
{
    return rng_mix64(base ^ (uint64_t)stream);
}

/* SplitMix64 as a sequential generator, for the tests and tools that want
 * a stream of numbers from one seed (the library itself draws by counter,
 * above, never from a stream). One state word advances by the golden gamma
 * per draw and the draw is the mix of the new state, so a stream depends on
 * its seed and its order of draws only; tests, course layouts and pinned
 * results depend on its exact numbers. */
static inline uint64_t rng_splitmix64(uint64_t* state)
{
    uint64_t z = *state;
    *state = z + 0x9e3779b97f4a7c15ull;
    return rng_mix64(z); /* rng_mix64 adds the gamma itself */
}

/* Uniform float in [-1, 1) from 64 random bits (24 bits of resolution).
 * The top 24 bits convert through int32 (exactly: below 2^24), which
 * compilers vectorize where a 64-bit conversion would not be. */
static inline float rng_signed_unit(uint64_t bits)
{
    return (float)(int32_t)(bits >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

/* Uniform float in [0, 1), 24 bits of resolution. */
static inline float rng_unit(uint64_t seed, uint64_t key, uint64_t counter, uint32_t stream)
{
    return (float)(rng_bits(seed, key, counter, stream) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform float in [lo, hi). */
static inline float rng_range(uint64_t seed, uint64_t key, uint64_t counter, uint32_t stream, float lo,
                              float hi)
{
    return lo + (hi - lo) * rng_unit(seed, key, counter, stream);
}

#endif /* SHOAL_RNG_H */
