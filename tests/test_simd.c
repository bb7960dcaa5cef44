/* Every lane operation against plain C on the same values, lane by lane.
 *
 * Inputs: every pair of a list of edge cases (signed zeros, denormals,
 * FLT_MAX, infinities, NaN, ...) plus random values from fixed seeds (raw bit
 * patterns, small and large uniforms, log-uniform magnitudes down into the
 * denormals). "Same" means the same bits, except that any NaN equals any NaN
 * (payloads are not part of the contract). The scalar references assume the
 * project's -ffp-contract=off, as the library does.
 *
 * Failures are collected and asserted once per operation: Criterion reports
 * each passing assertion to its parent process, which would dominate the run
 * for thousands of lanes. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/rng.h"
#include "simd/lanes.h"
#include "modules/grid/grid.h"

#define N_EDGE 24
#define N_RAND 4096
#define N_VALUES (N_EDGE * N_EDGE + N_RAND)
_Static_assert(N_VALUES % SHOAL_MAX_LANES == 0, "inputs must fill whole lanes");

static const float edge[N_EDGE] = {
    0.0f,    -0.0f,       1.0f,        -1.0f,       0.5f,         -2.5f,     3.0f,     0.1f,
    FLT_MIN, -FLT_MIN,    1e-40f,      -1e-42f,     FLT_TRUE_MIN, FLT_MAX,   -FLT_MAX, 1e30f,
    -1e-30f, 16777216.0f, -8388609.0f, 123456.789f, INFINITY,     -INFINITY, NAN,      -NAN,
};

static _Alignas(SHOAL_LANE_ALIGN) float in_a[N_VALUES];
static _Alignas(SHOAL_LANE_ALIGN) float in_b[N_VALUES];
static _Alignas(SHOAL_LANE_ALIGN) float in_c[N_VALUES];
static _Alignas(SHOAL_LANE_ALIGN) float out[N_VALUES];

static float next_unit(uint64_t* s) { return (float)(rng_splitmix64(s) >> 40) * (1.0f / 16777216.0f); }

/* Four kinds of random value in turn, so every kind meets every other. */
static float next_value(uint64_t* s, int kind)
{
    switch (kind & 3) {
    case 0: {
        uint32_t bits = (uint32_t)rng_splitmix64(s);
        float f;
        memcpy(&f, &bits, sizeof f);
        return f;
    }
    case 1: return next_unit(s) * 2.0f - 1.0f;
    case 2: return next_unit(s) * 2e4f - 1e4f;
    default: {
        float mag = ldexpf(1.0f + next_unit(s), (int)(rng_splitmix64(s) % 260) - 140);
        return (rng_splitmix64(s) & 1) ? -mag : mag;
    }
    }
}

static void make_inputs(uint64_t seed)
{
    int n = 0;
    for (int i = 0; i < N_EDGE; i++) {
        for (int j = 0; j < N_EDGE; j++, n++) {
            in_a[n] = edge[i];
            in_b[n] = edge[j];
            in_c[n] = edge[(i * 7 + j) % N_EDGE];
        }
    }
    uint64_t s = seed;
    for (int k = 0; n < N_VALUES; n++, k++) {
        in_a[n] = next_value(&s, k);
        in_b[n] = next_value(&s, k + 1 + (k >> 2));
        in_c[n] = next_value(&s, k + 2 + (k >> 4));
    }
}

static bool same(float x, float y)
{
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    return memcmp(&x, &y, sizeof x) == 0;
}

static void check_outputs(const char* name, float (*ref)(float, float, float))
{
    for (int i = 0; i < N_VALUES; i++) {
        float want = ref(in_a[i], in_b[i], in_c[i]);
        if (!same(out[i], want)) {
            cr_assert_fail("%s at %d (width %d): a=%a b=%a c=%a -> %a, scalar %a", name, i, SHOAL_LANES,
                           in_a[i], in_b[i], in_c[i], out[i], want);
        }
    }
}

static void check_binary(const char* name, lanef (*op)(lanef, lanef), float (*ref)(float, float, float))
{
    make_inputs(0x5eed0001);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES)
        lane_store(out + i, op(lane_load(in_a + i), lane_load(in_b + i)));
    check_outputs(name, ref);
}

static void check_unary(const char* name, lanef (*op)(lanef), float (*ref)(float, float, float))
{
    make_inputs(0x5eed0002);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) lane_store(out + i, op(lane_load(in_a + i)));
    check_outputs(name, ref);
}

static float ref_add(float a, float b, float c)
{
    (void)c;
    return a + b;
}
static float ref_sub(float a, float b, float c)
{
    (void)c;
    return a - b;
}
static float ref_mul(float a, float b, float c)
{
    (void)c;
    return a * b;
}
static float ref_div(float a, float b, float c)
{
    (void)c;
    return a / b;
}
static float ref_min(float a, float b, float c)
{
    (void)c;
    return a < b ? a : b;
}
static float ref_max(float a, float b, float c)
{
    (void)c;
    return a > b ? a : b;
}
#if defined(SHOAL_LANE_FUSED)
static float ref_fma(float a, float b, float c) { return fmaf(a, b, c); }
#else
static float ref_fma(float a, float b, float c) { return a * b + c; }
#endif
static float ref_clamp(float a, float b, float c)
{
    float lo = b < c ? b : c, hi = b < c ? c : b;
    float t = a > lo ? a : lo;
    return t < hi ? t : hi;
}
static float ref_abs(float a, float b, float c)
{
    (void)b;
    (void)c;
    return fabsf(a);
}
static float ref_neg(float a, float b, float c)
{
    (void)b;
    (void)c;
    return -a;
}
static float ref_floor(float a, float b, float c)
{
    (void)b;
    (void)c;
    return floorf(a);
}
/* Through double: an independent correctly rounded float sqrt (double has more
 * than 2 * 24 + 2 bits, so rounding twice cannot differ from rounding once). */
static float ref_sqrt(float a, float b, float c)
{
    (void)b;
    (void)c;
    return (float)sqrt((double)a);
}
static float ref_rsqrt(float a, float b, float c)
{
    (void)b;
    (void)c;
    return 1.0f / sqrtf(a);
}
static float ref_select(float a, float b, float c) { return c < 0.0f ? a : b; }
static float ref_masked_add(float a, float b, float c) { return c < 0.0f ? a + b : a; }

Test(simd, width_is_the_configured_one)
{
#if defined(SHOAL_DISABLE_SIMD)
    cr_assert_eq(SHOAL_LANES, 1);
#elif defined(SHOAL_SIMD_WIDTH)
    cr_assert_eq(SHOAL_LANES, SHOAL_SIMD_WIDTH);
#elif defined(__AVX512F__)
    cr_assert_eq(SHOAL_LANES, 16);
#elif defined(__AVX__)
    cr_assert_eq(SHOAL_LANES, 8);
#else
    cr_assert_eq(SHOAL_LANES, 4);
#endif
    cr_assert_eq(SHOAL_MAX_LANES, 16);
    cr_assert_eq(SHOAL_MAX_LANES % SHOAL_LANES, 0);
    cr_assert_eq(sizeof(lanef), SHOAL_LANES * sizeof(float));
}

Test(simd, add) { check_binary("lane_add", lane_add, ref_add); }
Test(simd, sub) { check_binary("lane_sub", lane_sub, ref_sub); }
Test(simd, mul) { check_binary("lane_mul", lane_mul, ref_mul); }
Test(simd, div) { check_binary("lane_div", lane_div, ref_div); }
Test(simd, min) { check_binary("lane_min", lane_min, ref_min); }
Test(simd, max) { check_binary("lane_max", lane_max, ref_max); }
Test(simd, abs) { check_unary("lane_abs", lane_abs, ref_abs); }
Test(simd, neg) { check_unary("lane_neg", lane_neg, ref_neg); }
Test(simd, floor) { check_unary("lane_floor", lane_floor, ref_floor); }
Test(simd, sqrt_is_correctly_rounded) { check_unary("lane_sqrt", lane_sqrt, ref_sqrt); }
Test(simd, rsqrt_matches_scalar_formula) { check_unary("lane_rsqrt", lane_rsqrt, ref_rsqrt); }

Test(simd, fma)
{
    make_inputs(0x5eed0003);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES)
        lane_store(out + i, lane_fma(lane_load(in_a + i), lane_load(in_b + i), lane_load(in_c + i)));
    check_outputs("lane_fma", ref_fma);
    /* A case where fused and unfused differ: (1 + 2^-12)^2 - 1. */
    lanef x = lane_set1(1.0f + 0x1p-12f);
    float r = lane_extract(lane_fma(x, x, lane_set1(-1.0f)), SHOAL_LANES - 1);
#if defined(SHOAL_LANE_FUSED)
    cr_assert_eq(r, 0x1p-11f + 0x1p-24f);
#else
    cr_assert_eq(r, 0x1p-11f);
#endif
}

/* lane_fma_fast is fused exactly where the build has a native FMA for the
 * width (the scalar build: where the compiler targets one), unfused
 * elsewhere: every lane must be one or the other as the build says. */
#if (SHOAL_LANES == 1 && defined(__FMA__)) || (SHOAL_LANES > 1 && SHOAL__FMA_NATIVE)
static float ref_fma_fast(float a, float b, float c) { return fmaf(a, b, c); }
#define FMA_FAST_FUSED 1
#else
static float ref_fma_fast(float a, float b, float c) { return a * b + c; }
#define FMA_FAST_FUSED 0
#endif

Test(simd, fma_fast)
{
    make_inputs(0x5eed0013);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES)
        lane_store(out + i, lane_fma_fast(lane_load(in_a + i), lane_load(in_b + i), lane_load(in_c + i)));
    check_outputs("lane_fma_fast", ref_fma_fast);
    lanef x = lane_set1(1.0f + 0x1p-12f);
    float r = lane_extract(lane_fma_fast(x, x, lane_set1(-1.0f)), 0);
    cr_assert_eq(r, FMA_FAST_FUSED ? 0x1p-11f + 0x1p-24f : 0x1p-11f, "fused %d: got %a", FMA_FAST_FUSED,
                 (double)r);
}

Test(simd, clamp)
{
    make_inputs(0x5eed0004);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) {
        lanef b = lane_load(in_b + i), c = lane_load(in_c + i);
        lanef lo = lane_select(lane_cmp_lt(b, c), b, c), hi = lane_select(lane_cmp_lt(b, c), c, b);
        lane_store(out + i, lane_clamp(lane_load(in_a + i), lo, hi));
    }
    check_outputs("lane_clamp", ref_clamp);
}

/* The stated bound: relative error at most 2^-23 (1 + 2^-23) against the
 * exact 1/sqrt, for every positive finite input including denormals. An
 * estimate-based rsqrt without enough refinement fails this. */
Test(simd, rsqrt_accuracy_bound)
{
    make_inputs(0x5eed0005);
    for (int i = 0; i < N_VALUES; i++) in_a[i] = fabsf(in_a[i]);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) lane_store(out + i, lane_rsqrt(lane_load(in_a + i)));
    const double bound = 0x1p-23 * (1.0 + 0x1p-23);
    double worst = 0.0;
    int tested = 0;
    for (int i = 0; i < N_VALUES; i++) {
        float x = in_a[i];
        if (!(x > 0.0f && x < INFINITY)) continue;
        double exact = 1.0 / sqrt((double)x);
        double rel = fabs((double)out[i] - exact) / exact;
        if (rel > worst) worst = rel;
        if (rel > bound) cr_assert_fail("rsqrt(%a) = %a, rel error %g > %g", x, out[i], rel, bound);
        tested++;
    }
    cr_assert_gt(tested, N_VALUES / 2);
    cr_assert_gt(worst, 0.0, "the bound check saw no rounding at all");
    lanef special = lane_rsqrt(lane_set1(0.0f));
    cr_assert(isinf(lane_extract(special, 0)) && lane_extract(special, 0) > 0.0f);
    cr_assert_eq(lane_extract(lane_rsqrt(lane_set1(INFINITY)), 0), 0.0f);
    cr_assert_eq(lane_extract(lane_rsqrt(lane_set1(4.0f)), 0), 0.5f);
}

static void check_compare(const char* name, lanem (*op)(lanef, lanef), int which)
{
    make_inputs(0x5eed0006);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) {
        uint32_t bits = lane_mask_bits(op(lane_load(in_a + i), lane_load(in_b + i)));
        cr_assert_eq(bits >> (SHOAL_LANES - 1) >> 1, 0, "%s sets bits above the width", name);
        for (int l = 0; l < SHOAL_LANES; l++) {
            float a = in_a[i + l], b = in_b[i + l];
            bool want = which == 0   ? a < b
                        : which == 1 ? a <= b
                        : which == 2 ? a > b
                        : which == 3 ? a >= b
                        : which == 4 ? a == b
                                     : a != b;
            if (((bits >> l) & 1u) != (uint32_t)want)
                cr_assert_fail("%s(%a, %a) = %u, scalar %d", name, a, b, (bits >> l) & 1u, want);
        }
    }
}

Test(simd, cmp_lt) { check_compare("lane_cmp_lt", lane_cmp_lt, 0); }
Test(simd, cmp_le) { check_compare("lane_cmp_le", lane_cmp_le, 1); }
Test(simd, cmp_gt) { check_compare("lane_cmp_gt", lane_cmp_gt, 2); }
Test(simd, cmp_ge) { check_compare("lane_cmp_ge", lane_cmp_ge, 3); }
Test(simd, cmp_eq) { check_compare("lane_cmp_eq", lane_cmp_eq, 4); }
Test(simd, cmp_neq) { check_compare("lane_cmp_neq", lane_cmp_neq, 5); }

Test(simd, select)
{
    make_inputs(0x5eed0007);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) {
        lanem m = lane_cmp_lt(lane_load(in_c + i), lane_zero());
        lane_store(out + i, lane_select(m, lane_load(in_a + i), lane_load(in_b + i)));
    }
    check_outputs("lane_select", ref_select);
}

Test(simd, masked_add)
{
    make_inputs(0x5eed0008);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) {
        lanem m = lane_cmp_lt(lane_load(in_c + i), lane_zero());
        lane_store(out + i, lane_masked_add(lane_load(in_a + i), m, lane_load(in_b + i)));
    }
    check_outputs("lane_masked_add", ref_masked_add);
    /* Masked-off lanes keep acc's bits: -0 + 0 would give +0. */
    lanef acc = lane_set1(-0.0f), zero = lane_zero();
    float off = lane_extract(lane_masked_add(acc, lane_cmp_lt(zero, zero), zero), 0);
    float on = lane_extract(lane_masked_add(acc, lane_cmp_eq(zero, zero), zero), 0);
    cr_assert(signbit(off) && off == 0.0f, "masked-off lane lost -0");
    cr_assert(!signbit(on) && on == 0.0f);
}

Test(simd, mask_logic)
{
    make_inputs(0x5eed0009);
    const uint32_t all = (uint32_t)((1ull << SHOAL_LANES) - 1);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) {
        lanef a = lane_load(in_a + i), b = lane_load(in_b + i), c = lane_load(in_c + i);
        lanem p = lane_cmp_lt(a, c), q = lane_cmp_ge(b, c);
        uint32_t pb = 0, qb = 0;
        for (int l = 0; l < SHOAL_LANES; l++) {
            pb |= (uint32_t)(in_a[i + l] < in_c[i + l]) << l;
            qb |= (uint32_t)(in_b[i + l] >= in_c[i + l]) << l;
        }
        cr_assert_eq(lane_mask_bits(p), pb);
        cr_assert_eq(lane_mask_bits(lane_mask_and(p, q)), pb & qb);
        cr_assert_eq(lane_mask_bits(lane_mask_or(p, q)), pb | qb);
        cr_assert_eq(lane_mask_bits(lane_mask_not(p)), ~pb & all);
        cr_assert_eq(lane_mask_bits(lane_mask_andnot(p, q)), pb & ~qb);
        cr_assert_eq(lane_mask_any(p), pb != 0);
        cr_assert_eq(lane_mask_all(p), pb == all);
        /* not(not) must be usable by select as a real mask, not only as bits. */
        lanef s = lane_select(lane_mask_not(lane_mask_not(p)), lane_set1(1.0f), lane_zero());
        cr_assert_eq(lane_hsum(s), (float)__builtin_popcount(pb));
    }
    lanef one = lane_set1(1.0f);
    cr_assert(lane_mask_all(lane_cmp_eq(one, one)));
    cr_assert(!lane_mask_any(lane_cmp_lt(one, one)));
    cr_assert(lane_mask_any(lane_mask_first(1)));
    cr_assert(!lane_mask_all(lane_mask_not(lane_mask_first(1))));
}

Test(simd, mask_from_bits_round_trips)
{
    const uint32_t full = (uint32_t)((1ull << SHOAL_LANES) - 1);
    uint64_t st = 0x5eed0021;
    for (int k = 0; k < 1000; ++k) {
        uint32_t bits = (uint32_t)(rng_splitmix64(&st) >> 17);
        lanem m = lane_mask_from_bits(bits);
        cr_assert_eq(lane_mask_bits(m), bits & full, "bits %08x", bits);
        /* A usable mask: selects lane i exactly when bit i is set. */
        lanef v = lane_select(m, lane_set1(1.0f), lane_zero());
        for (int i = 0; i < SHOAL_LANES; ++i)
            cr_assert_eq(lane_extract(v, i), (bits >> i) & 1u ? 1.0f : 0.0f, "lane %d of %08x", i, bits);
    }
}

/* Every mask (16 lanes: a spread of them) keeps its lanes, in order. */
Test(simd, compress_store)
{
    float in[SHOAL_LANES];
    int32_t ini[SHOAL_LANES];
    for (int l = 0; l < SHOAL_LANES; ++l) {
        in[l] = 0.5f + (float)l;
        ini[l] = 100 + l;
    }
    const uint32_t masks = SHOAL_LANES >= 16 ? 4096u : 1u << SHOAL_LANES;
    for (uint32_t k = 0; k < masks; ++k) {
        /* 16 lanes: k times an odd constant spreads over all 65,536 */
        const uint32_t bits = SHOAL_LANES >= 16 ? (k * 40503u) & 0xffffu : k;
        float kept[2 * SHOAL_LANES];
        int32_t kepti[2 * SHOAL_LANES];
        for (int l = 0; l < 2 * SHOAL_LANES; ++l) {
            kept[l] = -1.0f;
            kepti[l] = -1;
        }
        const int32_t n =
            lane_compress_store(kept, lane_loadu(in),
                                bits | ~(uint32_t)((1ull << SHOAL_LANES) - 1)); /* past the lanes: ignored */
        const int32_t ni = lanei_compress_store(kepti, lanei_loadu(ini), bits);
        cr_assert_eq(n, __builtin_popcount(bits), "mask %x", bits);
        cr_assert_eq(ni, n, "mask %x", bits);
        int32_t j = 0;
        for (int l = 0; l < SHOAL_LANES; ++l)
            if (bits >> l & 1u) {
                cr_assert_eq(kept[j], in[l], "mask %x: item %d", bits, j);
                cr_assert_eq(kepti[j], ini[l], "mask %x: item %d", bits, j);
                j++;
            }
        for (int l = SHOAL_LANES; l < 2 * SHOAL_LANES; ++l) /* a lane at most is written */
            cr_assert(kept[l] == -1.0f && kepti[l] == -1, "mask %x: wrote past a lane", bits);
    }
}

/* Prefix sums of int32 lanes against a running sum, for lanes of mixed
 * signs and sizes; the last lane everywhere. */
Test(simd, int_prefix_sum_and_last)
{
    for (int k = 0; k < 64; ++k) {
        int32_t in[SHOAL_LANES], got[SHOAL_LANES], last[SHOAL_LANES];
        for (int l = 0; l < SHOAL_LANES; ++l) in[l] = (int32_t)((k * 7919 + l * 104729) % 2001) - 1000;
        lanei_storeu(got, lanei_prefix_sum(lanei_loadu(in)));
        lanei_storeu(last, lanei_broadcast_last(lanei_loadu(in)));
        int32_t sum = 0;
        for (int l = 0; l < SHOAL_LANES; ++l) {
            sum += in[l];
            cr_assert_eq(got[l], sum, "case %d, lane %d: %d, summed %d", k, l, got[l], sum);
            cr_assert_eq(last[l], in[SHOAL_LANES - 1], "case %d, lane %d", k, l);
        }
    }
}

/* A count of masks adds one where a mask is set, for every mask. */
Test(simd, count_of_masks)
{
    int32_t got[SHOAL_LANES];
    lanei acc = lanei_set1(0);
    const uint32_t masks = SHOAL_LANES >= 8 ? 64u : 1u << SHOAL_LANES;
    for (uint32_t bits = 0; bits < masks; ++bits) acc = lanei_count(acc, lane_mask_from_bits(bits * 0x9e37u));
    lanei_storeu(got, acc);
    for (int l = 0; l < SHOAL_LANES; ++l) {
        int32_t want = 0;
        for (uint32_t bits = 0; bits < masks; ++bits) want += (int32_t)((bits * 0x9e37u) >> l & 1u);
        cr_assert_eq(got[l], want, "lane %d: %d, counted %d", l, got[l], want);
    }
}

/* One lane's value in every lane, for each lane. */
Test(simd, broadcast_a_lane)
{
    float in[SHOAL_LANES], got[SHOAL_LANES];
    for (int l = 0; l < SHOAL_LANES; ++l) in[l] = 2.5f * (float)l - 7.0f;
    for (int i = 0; i < SHOAL_LANES; ++i) {
        lane_storeu(got, lane_broadcast_at(lane_loadu(in), i));
        for (int l = 0; l < SHOAL_LANES; ++l) cr_assert_eq(got[l], in[i], "lane %d of %d", l, i);
    }
}

/* Each lane takes the next one's value, the last lane its own. */
Test(simd, next_lane)
{
    float in[SHOAL_LANES], got[SHOAL_LANES];
    for (int l = 0; l < SHOAL_LANES; ++l) in[l] = (float)(l * l) - 3.5f;
    lane_storeu(got, lane_next(lane_loadu(in)));
    for (int l = 0; l < SHOAL_LANES; ++l)
        cr_assert_eq(got[l], in[l + 1 < SHOAL_LANES ? l + 1 : l], "lane %d: %g", l, (double)got[l]);
    int32_t ini[SHOAL_LANES], goti[SHOAL_LANES];
    for (int l = 0; l < SHOAL_LANES; ++l) ini[l] = 1000 - 37 * l * l;
    lanei_storeu(goti, lanei_next(lanei_loadu(ini)));
    for (int l = 0; l < SHOAL_LANES; ++l)
        cr_assert_eq(goti[l], ini[l + 1 < SHOAL_LANES ? l + 1 : l], "int lane %d: %d", l, goti[l]);
}

/* A masked gather reads its lanes' items and leaves the others theirs,
 * reading nothing for them: their indices point far outside the array (an
 * address sanitizer or a fault would tell a read). */
Test(simd, gather_or)
{
    float base[64];
    int32_t basei[64];
    for (int k = 0; k < 64; ++k) {
        base[k] = 0.25f * (float)k - 3.0f;
        basei[k] = 1000 + 7 * k;
    }
    uint64_t st = 0x9a7e0001;
    for (int t = 0; t < 500; ++t) {
        const uint32_t bits = (uint32_t)(rng_splitmix64(&st) >> 11) & (uint32_t)((1ull << SHOAL_LANES) - 1);
        int32_t idx[SHOAL_LANES];
        float orv[SHOAL_LANES];
        int32_t ori[SHOAL_LANES];
        for (int l = 0; l < SHOAL_LANES; ++l) {
            idx[l] = bits >> l & 1u ? (int32_t)(rng_splitmix64(&st) % 64) : -100000000 - l;
            orv[l] = -7.5f - (float)l;
            ori[l] = -70 - l;
        }
        const lanem m = lane_mask_from_bits(bits);
        float got[SHOAL_LANES];
        int32_t goti[SHOAL_LANES];
        lane_storeu(got, lane_gather_or(base, lanei_loadu(idx), m, lane_loadu(orv)));
        lanei_storeu(goti, lanei_gather_or(basei, lanei_loadu(idx), m, lanei_loadu(ori)));
        for (int l = 0; l < SHOAL_LANES; ++l) {
            const int on = bits >> l & 1u;
            cr_assert_eq(got[l], on ? base[idx[l]] : orv[l], "mask %x, lane %d", bits, l);
            cr_assert_eq(goti[l], on ? basei[idx[l]] : ori[l], "mask %x, lane %d", bits, l);
        }
    }
}

Test(simd, mask_first)
{
    const uint32_t all = (uint32_t)((1ull << SHOAL_LANES) - 1);
    for (int n = -3; n <= SHOAL_LANES + 3; n++) {
        uint32_t want = n <= 0 ? 0u : n >= SHOAL_LANES ? all : (1u << n) - 1u;
        cr_assert_eq(lane_mask_bits(lane_mask_first(n)), want, "n = %d", n);
    }
}

Test(simd, load_store_set_zero)
{
    make_inputs(0x5eed000a);
    _Alignas(SHOAL_LANE_ALIGN) float t[SHOAL_MAX_LANES + 1];
    for (int i = 0; i + SHOAL_LANES < N_VALUES; i += SHOAL_LANES) {
        lane_store(t, lane_load(in_a + i));
        cr_assert(memcmp(t, in_a + i, sizeof(float) * SHOAL_LANES) == 0);
        lane_storeu(t + 1, lane_loadu(in_b + i + 1)); /* both addresses misaligned */
        cr_assert(memcmp(t + 1, in_b + i + 1, sizeof(float) * SHOAL_LANES) == 0);
    }
    lanef s = lane_set1(-3.25f), z = lane_zero();
    for (int l = 0; l < SHOAL_LANES; l++) {
        cr_assert_eq(lane_extract(s, l), -3.25f);
        cr_assert(lane_extract(z, l) == 0.0f && !signbit(lane_extract(z, l)));
        cr_assert_eq(lane_extract(lane_iota(), l), (float)l);
    }
}

Test(simd, partial_load_store)
{
    for (int n = 0; n <= SHOAL_LANES; n++) {
        /* Exactly n floats on the heap: AddressSanitizer catches any access past them. */
        float* p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
        cr_assert_not_null(p);
        for (int i = 0; i < n; i++) p[i] = (float)(i + 1) * -1.5f;
        lanef a = lane_load_partial(p, n);
        for (int l = 0; l < SHOAL_LANES; l++) {
            float want = l < n ? p[l] : 0.0f;
            cr_assert(same(lane_extract(a, l), want), "n=%d lane %d", n, l);
        }
        lane_store_partial(p, lane_add(a, lane_set1(10.0f)), n);
        for (int i = 0; i < n; i++) cr_assert_eq(p[i], (float)(i + 1) * -1.5f + 10.0f);
        free(p);
    }
    float guard[SHOAL_LANES + 1];
    for (int i = 0; i <= SHOAL_LANES; i++) guard[i] = 7.0f;
    lane_store_partial(guard, lane_set1(1.0f), SHOAL_LANES + 5); /* n is clamped */
    cr_assert_eq(guard[SHOAL_LANES], 7.0f);
    cr_assert_eq(guard[SHOAL_LANES - 1], 1.0f);
    lanef e = lane_load_partial(NULL, 0);
    cr_assert(lane_mask_all(lane_cmp_eq(e, lane_zero())));
}

/* The documented order, written as a strided recursion instead of the
 * header's halving loop: lanes i and i + N/2 meet first. */
static float hsum_ref(const float* t, int start, int stride, int count)
{
    if (count == 1) return t[start];
    return hsum_ref(t, start, 2 * stride, count / 2) + hsum_ref(t, start + stride, 2 * stride, count / 2);
}

Test(simd, hsum_fixed_order)
{
    make_inputs(0x5eed000b);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) {
        float got = lane_hsum(lane_load(in_a + i)), want = hsum_ref(in_a, i, 1, SHOAL_LANES);
        cr_assert(same(got, want), "hsum at %d: %a, reference %a", i, got, want);
    }
    /* Order-sensitive: with lanes (2^24, 1, 1, 1, ...) the tree gives a
     * different result from a left-to-right sum when N >= 4. */
    float t[SHOAL_LANES];
    for (int l = 0; l < SHOAL_LANES; l++) t[l] = l == 0 ? 16777216.0f : 1.0f;
    cr_assert_eq(lane_hsum(lane_loadu(t)), hsum_ref(t, 0, 1, SHOAL_LANES));
    cr_assert_eq(lane_hsum(lane_iota()), (float)(SHOAL_LANES * (SHOAL_LANES - 1) / 2));
#if SHOAL_LANES == 4
    cr_assert_eq(lane_hsum(lane_loadu(t)), (16777216.0f + 1.0f) + (1.0f + 1.0f));
#endif
}

/* lane_hsum4 gives each vector's lane_hsum, bit for bit. */
Test(simd, hsum4_matches_hsum)
{
    make_inputs(0x5eed000c);
    for (int i = 0; i + 4 * SHOAL_LANES <= N_VALUES; i += 4 * SHOAL_LANES) {
        lanef v[4];
        for (int k = 0; k < 4; k++) v[k] = lane_load(in_a + i + k * SHOAL_LANES);
        float got[4];
        lane_hsum4(v[0], v[1], v[2], v[3], got);
        for (int k = 0; k < 4; k++)
            cr_assert(same(got[k], lane_hsum(v[k])), "hsum4 at %d, %d: %a, hsum %a", i, k, got[k],
                      lane_hsum(v[k]));
    }
}

Test(simd, gather)
{
    enum { TABLE = 1000 };
    static float table[TABLE];
    static int32_t idx[N_VALUES];
    uint64_t s = 0x5eed000c;
    for (int i = 0; i < TABLE; i++) table[i] = next_value(&s, i);
    for (int i = 0; i < N_VALUES; i++) /* both ends of the table, then anywhere */
        idx[i] = i < 2 ? i * (TABLE - 1) : (int32_t)(rng_splitmix64(&s) % TABLE);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES)
        lane_store(out + i, lane_gather(table, lanei_loadu(idx + i)));
    for (int i = 0; i < N_VALUES; i++)
        if (!same(out[i], table[idx[i]])) cr_assert_fail("gather lane %d index %d", i, idx[i]);
}

/* lanei_gather reads int32_t as lane_gather reads floats, and lanei_nonneg
 * marks the lanes >= 0: zero, the extremes and -1 (an empty slot) included. */
Test(simd, int_gather_and_sign)
{
    enum { TABLE = 1000 };
    static int32_t table[TABLE], idx[N_VALUES], got[N_VALUES];
    uint64_t s = 0x5eed0011;
    for (int i = 0; i < TABLE; i++) {
        const int32_t special[5] = {0, -1, INT32_MAX, INT32_MIN, 1};
        table[i] = i < 5 ? special[i] : (int32_t)(uint32_t)rng_splitmix64(&s);
    }
    for (int i = 0; i < N_VALUES; i++) /* the special values, both ends, then anywhere */
        idx[i] = i < 5 ? i : i == 5 ? TABLE - 1 : (int32_t)(rng_splitmix64(&s) % TABLE);
    for (int i = 0; i < N_VALUES; i += SHOAL_LANES) {
        const lanei v = lanei_gather(table, lanei_loadu(idx + i));
        lanei_storeu(got + i, v);
        const uint32_t bits = lane_mask_bits(lanei_nonneg(v));
        for (int l = 0; l < SHOAL_LANES; l++)
            if ((int)(bits >> l & 1u) != (table[idx[i + l]] >= 0))
                cr_assert_fail("nonneg lane %d of %d: value %d", l, i, (int)table[idx[i + l]]);
    }
    for (int i = 0; i < N_VALUES; i++)
        if (got[i] != table[idx[i]]) cr_assert_fail("int gather lane %d index %d", i, idx[i]);
}

/* lanei_cmp_eq and lanei_cmp_gt compare as signed int32_t, and
 * lanei_select takes each lane from the first where the mask is set: the
 * extremes, -1 and equal pairs included. */
Test(simd, int_compare_and_select)
{
    enum { N = 1024 };
    static int32_t a[N], b[N], got[N];
    uint64_t s = 0x5eed0012;
    const int32_t special[6] = {0, -1, INT32_MAX, INT32_MIN, 1, 7};
    for (int i = 0; i < N; i++) {
        a[i] = i < 36 ? special[i % 6] : (int32_t)(uint32_t)rng_splitmix64(&s);
        b[i] = i < 36 ? special[i / 6] : (i % 5 == 0 ? a[i] : (int32_t)(uint32_t)rng_splitmix64(&s));
    }
    int equal = 0, greater = 0;
    for (int i = 0; i < N; i += SHOAL_LANES) {
        const lanei va = lanei_loadu(a + i), vb = lanei_loadu(b + i);
        const uint32_t eq = lane_mask_bits(lanei_cmp_eq(va, vb));
        const uint32_t gt = lane_mask_bits(lanei_cmp_gt(va, vb));
        lanei_storeu(got + i, lanei_select(lanei_cmp_gt(va, vb), va, vb));
        for (int l = 0; l < SHOAL_LANES; l++) {
            const int32_t x = a[i + l], y = b[i + l];
            if ((int)(eq >> l & 1u) != (x == y))
                cr_assert_fail("eq lane %d of %d: %d, %d", l, i, (int)x, (int)y);
            if ((int)(gt >> l & 1u) != (x > y))
                cr_assert_fail("gt lane %d of %d: %d, %d", l, i, (int)x, (int)y);
            if (got[i + l] != (x > y ? x : y))
                cr_assert_fail("select lane %d of %d: %d, %d", l, i, (int)x, (int)y);
            equal += x == y;
            greater += x > y;
        }
    }
    cr_assert(equal > 36 && greater > 100 && greater < N - 100,
              "the values cover every case: %d equal, %d greater", equal, greater);
}

/* lane_store_interleaved4 writes lane i of a, b, c, d as the i-th record
 * of four floats, bit for bit (NaN, -0 and denormals included). */
Test(simd, store_interleaved4)
{
    enum { N = 64 };
    static float in[4][N], rec[4 * N];
    uint64_t s = 0x5eed0013;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < N; i++) {
            const uint32_t bits = (uint32_t)rng_splitmix64(&s);
            memcpy(&in[k][i], &bits, sizeof bits);
        }
    in[0][1] = -0.0f;
    in[1][2] = NAN;
    in[2][3] = 1e-40f;
    for (int i = 0; i < N; i += SHOAL_LANES)
        lane_store_interleaved4(rec + 4 * i, lane_loadu(in[0] + i), lane_loadu(in[1] + i),
                                lane_loadu(in[2] + i), lane_loadu(in[3] + i));
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 4; k++)
            if (memcmp(&rec[4 * i + k], &in[k][i], sizeof(float)) != 0)
                cr_assert_fail("record %d field %d: %a, not %a", i, k, (double)rec[4 * i + k],
                               (double)in[k][i]);
}

/* lane_rows4 gives lane l the record of four floats at row[l] (passed as
 * twice the row), bit for bit, in any order of rows (repeats, both ends of
 * the table), and
 * lane_bits_i reads a lane's bits back as the int32_t stored there. */
Test(simd, rows4_and_bits)
{
    enum { ROWS = 300, N = 256 };
    static float rec[4 * ROWS];
    static int32_t row[N];
    uint64_t s = 0x5eed0014;
    for (int i = 0; i < 4 * ROWS; i++) {
        const uint32_t bits = (uint32_t)rng_splitmix64(&s);
        memcpy(&rec[i], &bits, sizeof bits);
    }
    rec[1] = -0.0f;
    rec[6] = NAN;
    rec[11] = 1e-40f;
    for (int i = 0; i < N; i++)
        row[i] = i < 3        ? i
                 : i == 3     ? ROWS - 1
                 : i % 7 == 0 ? row[i - 1]
                              : (int32_t)(rng_splitmix64(&s) % ROWS);
    for (int i = 0; i < N; i += SHOAL_LANES) {
        lanef v[4];
        uint32_t half[SHOAL_LANES];
        for (int l = 0; l < SHOAL_LANES; l++) half[l] = 2u * (uint32_t)row[i + l];
        lane_rows4(rec, half, v);
        for (int c = 0; c < 4; c++) {
            float got[SHOAL_LANES];
            int32_t got_i[SHOAL_LANES];
            lane_storeu(got, v[c]);
            lanei_storeu(got_i, lane_bits_i(v[c]));
            for (int l = 0; l < SHOAL_LANES; l++) {
                const float want = rec[4 * row[i + l] + c];
                int32_t want_i;
                memcpy(&want_i, &want, sizeof want_i);
                if (memcmp(&got[l], &want, sizeof want) != 0)
                    cr_assert_fail("row %d field %d: %a, not %a", row[i + l], c, (double)got[l],
                                   (double)want);
                if (got_i[l] != want_i) cr_assert_fail("bits of row %d field %d", row[i + l], c);
            }
        }
    }
}

/* lanei_min takes the smaller of each pair, as signed int32_t. */
Test(simd, int_min)
{
    const int32_t a[16] = {0, -1, INT32_MAX, INT32_MIN, 5, 7, -3, 2, 9, 9, -8, 1, 100, -100, 3, 4};
    const int32_t b[16] = {1, 0, INT32_MIN, INT32_MAX, 5, -7, 3, 2, 8, 10, -9, 0, -100, 100, 4, 3};
    int32_t got[16];
    for (int i = 0; i < 16; i += SHOAL_LANES)
        lanei_storeu(got + i, lanei_min(lanei_loadu(a + i), lanei_loadu(b + i)));
    for (int i = 0; i < 16; i++) cr_assert_eq(got[i], a[i] < b[i] ? a[i] : b[i], "lane %d", i);
}

Test(simd, int_lanes)
{
    enum { N = 1024 };
    static _Alignas(SHOAL_LANE_ALIGN) int32_t a[N], b[N], sa[N], sb[N], r[N];
    /* Overflow is not part of the contract: |a|, |b| < 2^30 for add and sub,
     * |sa| < 2^14 and |sb| < 2^15 for mul (max takes a and b). Includes
     * negatives and zeros. */
    uint64_t s = 0x5eed000d;
    for (int i = 0; i < N; i++) {
        a[i] = (int32_t)(rng_splitmix64(&s) % (2u << 30)) - (1 << 30);
        b[i] = i % 7 ? (int32_t)(rng_splitmix64(&s) % (2u << 30)) - (1 << 30) : 0;
        sa[i] = a[i] / (1 << 16);
        sb[i] = b[i] / (1 << 15);
    }
    for (int op = 0; op < 4; op++) {
        const int32_t* x = op == 2 ? sa : a;
        const int32_t* y = op == 2 ? sb : b;
        for (int i = 0; i < N; i += SHOAL_LANES) {
            lanei p = lanei_load(x + i), q = lanei_loadu(y + i);
            lanei z = op == 0   ? lanei_add(p, q)
                      : op == 1 ? lanei_sub(p, q)
                      : op == 2 ? lanei_mul(p, q)
                                : lanei_max(p, q);
            if (i % 2)
                lanei_store(r + i, z);
            else
                lanei_storeu(r + i, z);
        }
        for (int i = 0; i < N; i++) {
            int32_t want = op == 0       ? x[i] + y[i]
                           : op == 1     ? x[i] - y[i]
                           : op == 2     ? x[i] * y[i]
                           : x[i] > y[i] ? x[i]
                                         : y[i];
            cr_assert_eq(r[i], want, "op %d at %d: %d, %d", op, i, x[i], y[i]);
        }
    }
    lanei_storeu(r, lanei_add(lanei_iota(), lanei_set1(100)));
    for (int l = 0; l < SHOAL_LANES; l++) cr_assert_eq(r[l], 100 + l);
}

/* Bits of int32 lanes, products modulo 2^32 and shifts by constants, over
 * values of every sign and size (the spatial hash's keys use them). */
Test(simd, int_bits_and_shifts)
{
    enum { N = 1024 };
    static _Alignas(SHOAL_LANE_ALIGN) int32_t a[N], b[N], r[8][N];
    uint64_t s = 0xb175;
    for (int i = 0; i < N; i++) {
        a[i] = (int32_t)(uint32_t)rng_splitmix64(&s);
        b[i] = i % 5 ? (int32_t)(uint32_t)rng_splitmix64(&s) : i % 2 ? -1 : 0;
    }
    a[0] = INT32_MIN;
    a[1] = INT32_MAX;
    a[2] = -1;
    for (int i = 0; i < N; i += SHOAL_LANES) {
        const lanei p = lanei_load(a + i), q = lanei_load(b + i);
        lanei_store(r[0] + i, lanei_and(p, q));
        lanei_store(r[1] + i, lanei_or(p, q));
        lanei_store(r[2] + i, lanei_xor(p, q));
        lanei_store(r[3] + i, lanei_mul_wrap(p, q));
        lanei_store(r[4] + i, lanei_srai(p, 3));
        lanei_store(r[5] + i, lanei_srai(p, 31));
        lanei_store(r[6] + i, lanei_srli(p, 15));
        lanei_store(r[7] + i, lanei_slli(p, 6));
    }
    for (int i = 0; i < N; i++) {
        const uint32_t x = (uint32_t)a[i], y = (uint32_t)b[i];
        const int32_t want[8] = {(int32_t)(x & y), (int32_t)(x | y), (int32_t)(x ^ y),   (int32_t)(x * y),
                                 a[i] >> 3,        a[i] >> 31,       (int32_t)(x >> 15), (int32_t)(x << 6)};
        for (int op = 0; op < 8; op++)
            cr_assert_eq(r[op][i], want[op], "op %d at %d: %d, %d", op, i, a[i], b[i]);
    }
}

Test(simd, int_float_conversion)
{
    enum { N = 1024 };
    static int32_t ints[N], back[N];
    static float floats[N], conv[N];
    /* Truncation toward zero at the edges, and the int32 range's ends. */
    static const float edges[] = {-0.5f, -1.5f, 0.999f, -0.0f, 2147483520.0f, -2147483648.0f};
    uint64_t s = 0x5eed000e;
    for (int i = 0; i < N; i++) {
        /* Exactly representable ones, and any int32 (rounded to nearest). */
        ints[i] = i % 2 ? (int32_t)(rng_splitmix64(&s) % (1u << 25)) - (1 << 24)
                        : (int32_t)(uint32_t)rng_splitmix64(&s);
        float f = next_unit(&s) * 4.2e9f - 2.1e9f; /* in [-2.1e9, 2.1e9], inside int32 */
        floats[i] = i < 6 ? edges[i] : f;
    }
    for (int i = 0; i < N; i += SHOAL_LANES) {
        lane_storeu(conv + i, lane_itof(lanei_loadu(ints + i)));
        lanei_storeu(back + i, lane_ftoi(lane_loadu(floats + i)));
    }
    for (int i = 0; i < N; i++) {
        cr_assert(same(conv[i], (float)ints[i]), "itof(%d) = %a", ints[i], conv[i]);
        cr_assert_eq(back[i], (int32_t)floats[i], "ftoi(%a) = %d", floats[i], back[i]);
    }
}

Test(simd, pad)
{
    cr_assert_eq(lane_pad(0), 0);
    cr_assert_eq(lane_pad(1), 16);
    cr_assert_eq(lane_pad(16), 16);
    cr_assert_eq(lane_pad(17), 32);
    cr_assert_eq(lane_pad(1000000), 1000000);
}

Test(simd, rcp_fast_is_accurate)
{
    /* Normal positive values over many binades, as separation uses them. */
    for (int i = 0; i < 20000; ++i) {
        float x[SHOAL_MAX_LANES];
        for (int l = 0; l < SHOAL_LANES; ++l)
            x[l] = ldexpf(1.0f + (float)((i * 7919 + l * 104729) % 100000) / 100000.0f, (i % 80) - 40);
        float got[SHOAL_MAX_LANES];
        lane_storeu(got, lane_rcp_fast(lane_loadu(x)));
        for (int l = 0; l < SHOAL_LANES; ++l) {
            double want = 1.0 / (double)x[l];
            cr_assert_leq(fabs((double)got[l] - want) / want, 1.0 / (1 << 21), "1/%g = %g", (double)x[l],
                          (double)got[l]);
        }
    }
}

/* The spatial hash's cells and buckets a lane at a time (lane_grid_coord,
 * lane_grid_bucket) are grid_coord's and grid_bucket's, in 2D and 3D, for
 * positions near and far on both sides of the origin, past the clamp and
 * NaN. */
Test(simd, grid_keys_in_lanes)
{
    enum { N = 4096 };
    static _Alignas(SHOAL_LANE_ALIGN) float p[3][N];
    static _Alignas(SHOAL_LANE_ALIGN) int32_t got[4][N];
    uint64_t s = 0xce11;
    for (int i = 0; i < N; i++)
        for (int a = 0; a < 3; a++) {
            const double u = (double)(rng_splitmix64(&s) >> 11) / 9007199254740992.0 - 0.5;
            const double scale = i % 4 == 0 ? 1e3 : i % 4 == 1 ? 1e7 : i % 4 == 2 ? 1e11 : 40.0;
            p[a][i] = (float)(u * scale);
        }
    p[0][5] = NAN;
    p[1][6] = -INFINITY;
    p[2][7] = INFINITY;
    for (int dims = 2; dims <= 3; dims++) {
        grid_t g;
        memset(&g, 0, sizeof g);
        g.dims = dims;
        g.bucket_count = 1 << 15;
        g.bucket_mask = (uint32_t)g.bucket_count - 1u;
        g.block_shift = dims == 3 ? 3 : 5; /* 512 runs: Z order over 32 x 16 blocks (8 x 8 x 8) */
        for (int a = 0; a < 3; a++) g.inv_cell[a] = 1.0f / 1.7f;
        for (int i = 0; i < N; i += SHOAL_LANES) {
            const lanei ix = lane_grid_coord(&g, lane_load(p[0] + i), 0),
                        iy = lane_grid_coord(&g, lane_load(p[1] + i), 1),
                        iz = lane_grid_coord(&g, lane_load(p[2] + i), 2);
            lanei_store(got[0] + i, ix);
            lanei_store(got[1] + i, iy);
            lanei_store(got[2] + i, iz);
            lanei_store(got[3] + i, lane_grid_bucket(&g, ix, iy, iz));
        }
        for (int i = 0; i < N; i++) {
            int32_t c[3];
            for (int a = 0; a < 3; a++) {
                c[a] = grid_coord(&g, p[a][i], a);
                cr_assert_eq(got[a][i], c[a], "dims %d, axis %d at %d: %g", dims, a, i, (double)p[a][i]);
            }
            cr_assert_eq((uint32_t)got[3][i], grid_bucket(&g, c[0], c[1], dims == 3 ? c[2] : 0),
                         "dims %d: bucket at %d", dims, i);
        }
    }
}
