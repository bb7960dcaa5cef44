/* Lane types: the one place that knows about SIMD registers.
 *
 * Kernels are written once against `lanef` (SHOAL_LANES floats), `lanei`
 * (SHOAL_LANES int32) and `lanem` (a per-lane true/false mask) and compile to
 * AVX-512, AVX2/AVX, SSE2 or NEON through SIMDe, or to plain scalar code.
 *
 * Width, fixed at compile time:
 *   SHOAL_DISABLE_SIMD defined   -> 1 lane of plain C: the reference build that
 *                                   tests compare against (wins over the rest)
 *   SHOAL_SIMD_WIDTH = 4, 8, 16  -> that width; SIMDe emulates what the CPU lacks
 *   otherwise                    -> 16 with __AVX512F__, 8 with __AVX__/__AVX2__,
 *                                   else 4 (SSE2 on x86, NEON on ARM, portable C)
 *
 * Every type is a one-member struct, also in the scalar build. That makes
 * `a + b` on lanes, or passing a mask where floats are expected, a compile
 * error in every build, not just in some; the wrapper costs nothing once the
 * functions are inlined.
 *
 * Results are the same in every build, lane by lane, as the scalar reference:
 * add, sub, mul, div and sqrt are IEEE correctly rounded; lane_fma is
 * unfused (see below); min/max/compare/select have the exact C meanings
 * written next to them, including NaN and signed zero. Denormals are kept
 * (nothing here sets flush-to-zero). Exceptions:
 *   - lane_hsum depends on the width (it sums a different number of lanes);
 *   - lane_ftoi of NaN or values outside int32 is unspecified;
 *   - SIMDe's ARMv7 (32-bit) NEON sqrt is an estimate, not correctly rounded.
 *
 * The operations (all static inline; "m" is a lanem, "i" a lanei):
 *   memory    lane_load/loadu/store/storeu, lane_load_partial/store_partial,
 *             lane_load_n/store_n (a whole lane, or the first n items),
 *             lane_store_interleaved4 (four lanes as records of four floats),
 *             lane_rows4 (records of four floats at each lane's row, given
 *             as twice the row, as four lanes: the way back, a load a lane),
 *             lane_store_rows8 (eight lanes as each lane's record of eight
 *             floats, a store a lane),
 *             lane_set1, lane_zero, lane_extract, lane_iota
 *   math      lane_add/sub/mul/div, lane_fma, lane_fma_fast, lane_min/max/clamp, lane_abs,
 *             lane_neg, lane_sqrt, lane_rsqrt, lane_floor, lane_hsum, lane_hsum4
 *   compare   lane_cmp_lt/le/gt/ge/eq/neq -> m
 *   masks     lane_mask_and/or/not/andnot/any/all/bits/from_bits/first,
 *             lane_select(m, a, b) = m ? a : b, lane_masked_add(acc, m, x)
 *   integers  lanei_load/loadu/store/storeu/set1/add/sub/mul/max/min/iota
 *             (no overflow allowed), lanei_and/or/xor, lane_bits_i (a float
 *             lane's bits as int32_t; lanei_bits_f the way back), lanei_mul_wrap,
 *             lanei_add_wrap, lanei_sub_wrap (modulo 2^32), lanei_srai/srli/slli (shifts by a constant),
 *             lane_itof (exact below 2^24), lane_ftoi (truncates like a C cast),
 *             lane_gather(base, i) = base[i] per lane: every lane's index
 *             must be valid, so pad index lists with a real index (the agent
 *             itself) and mask the result, rather than leaving garbage;
 *             lanei_gather(base, i) the same for int32_t;
 *             lane_gather_or(base, i, m, o) / lanei_gather_or: base[i] in
 *             the lanes of m, o's lanes elsewhere, which read nothing (their
 *             index need not be valid; a short last lane gathers only what
 *             it holds), lanei_nonneg(a) ->
 *             m, the lanes where a >= 0; lanei_cmp_eq/gt -> m (signed),
 *             lanei_select(m, a, b) = m ? a : b.
 *
 * Arrays that kernels walk with lane_load/lane_store are SHOAL_LANE_ALIGN
 * (64-byte) aligned and padded to a multiple of SHOAL_MAX_LANES, so any width
 * runs whole lanes to the end with no scalar tail (see lane_pad).
 */
#ifndef SHOAL_LANES_H
#define SHOAL_LANES_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Forcing a width the target lacks (SHOAL_SIMD_WIDTH=16 without AVX-512)
 * passes emulated 64-byte vectors between SIMDe's inline functions, which
 * clang reports as an ABI change (-Wpsabi, fatal under -Werror). All of it is
 * inlined within this header, so no ABI is involved; GCC's equivalent is a
 * note that its pragmas cannot silence (add -Wno-psabi to quiet it). */
#if defined(__clang__) && defined(__has_warning)
#if __has_warning("-Wpsabi")
#define SHOAL__PSABI_PUSHED
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpsabi"
#endif
#endif

/* Padding unit for lane arrays: the widest width, so one layout serves every
 * build. 16 floats = 64 bytes = one cache line. */
#define SHOAL_MAX_LANES 16
#define SHOAL_LANE_ALIGN 64

#if defined(SHOAL_DISABLE_SIMD)
#define SHOAL_LANES 1
#elif defined(SHOAL_SIMD_WIDTH)
#if SHOAL_SIMD_WIDTH == 4 || SHOAL_SIMD_WIDTH == 8 || SHOAL_SIMD_WIDTH == 16
#define SHOAL_LANES SHOAL_SIMD_WIDTH
#else
#error "SHOAL_SIMD_WIDTH must be 4, 8 or 16 (define SHOAL_DISABLE_SIMD for scalar)"
#endif
#elif defined(__AVX512F__)
#define SHOAL_LANES 16
#elif defined(__AVX2__) || defined(__AVX__)
#define SHOAL_LANES 8
#else
#define SHOAL_LANES 4
#endif

/* ------------------------------------------------------------------------ */
/* Per-width primitives. SHOAL__PS/SI/EPI32 paste the SIMDe name of an op for */
/* the chosen register size, so the ops whose names only differ by prefix are */
/* written once further down.                                                */
/* ------------------------------------------------------------------------ */

#if SHOAL_LANES == 16
#include <simde/x86/avx512.h>

typedef struct lanef {
    simde__m512 v;
} lanef;
typedef struct lanei {
    simde__m512i v;
} lanei;
typedef struct lanem {
    simde__mmask16 v;
} lanem; /* bit i = lane i */

#define SHOAL__PS(op) simde_mm512_##op##_ps
#define SHOAL__SI(op) simde_mm512_##op##_si512
#define SHOAL__EPI32(op) simde_mm512_##op##_epi32
#define SHOAL__CMP(a, b, pred) simde_mm512_cmp_ps_mask(a, b, pred)
#if defined(SIMDE_X86_AVX512F_NATIVE)
#define SHOAL__FMA_NATIVE 1
#else
#define SHOAL__FMA_NATIVE 0
#endif

static inline lanem lane_mask_and(lanem a, lanem b) { return (lanem){(simde__mmask16)(a.v & b.v)}; }
static inline lanem lane_mask_or(lanem a, lanem b) { return (lanem){(simde__mmask16)(a.v | b.v)}; }
static inline lanem lane_mask_not(lanem a) { return (lanem){(simde__mmask16)~a.v}; }
static inline uint32_t lane_mask_bits(lanem m) { return m.v; }
static inline lanem lane_mask_from_bits(uint32_t bits)
{
#if defined(__AVX512F__)
    /* a move into the mask register (kmovw from a general register):
     * gcc 12 otherwise goes through the stack, and a mask loaded from a
     * store just made stalls AMD's Zen 4 and 5 */
    return (lanem){_cvtu32_mask16(bits)};
#else
    return (lanem){(simde__mmask16)bits};
#endif
}
static inline lanef lane_select(lanem m, lanef a, lanef b)
{
    return (lanef){simde_mm512_mask_blend_ps(m.v, b.v, a.v)};
}
/* imm 0x09 = round toward -inf, no precision exception. */
static inline lanef lane_floor(lanef a) { return (lanef){simde_mm512_roundscale_ps(a.v, 0x09)}; }

/* SIMDe 0.7.4 has no 512-bit gather or int32<->float conversion: use the
 * native instruction when there is one, else go through memory. */
static inline lanef lane_itof(lanei a)
{
#if defined(SIMDE_X86_AVX512F_NATIVE)
    return (lanef){_mm512_cvtepi32_ps(a.v)};
#else
    int32_t i[16];
    float f[16];
    simde_mm512_storeu_si512(i, a.v);
    for (int k = 0; k < 16; k++) f[k] = (float)i[k];
    return (lanef){simde_mm512_loadu_ps(f)};
#endif
}

static inline lanei lane_ftoi(lanef a)
{
#if defined(SIMDE_X86_AVX512F_NATIVE)
    return (lanei){_mm512_cvttps_epi32(a.v)};
#else
    int32_t i[16];
    float f[16];
    simde_mm512_storeu_ps(f, a.v);
    for (int k = 0; k < 16; k++) i[k] = (int32_t)f[k];
    return (lanei){simde_mm512_loadu_si512(i)};
#endif
}

static inline lanef lane_gather_or(const float* base, lanei idx, lanem m, lanef or_)
{
#if defined(SIMDE_X86_AVX512F_NATIVE)
    return (lanef){_mm512_mask_i32gather_ps(or_.v, m.v, idx.v, base, 4)};
#else
    int32_t i[16];
    float f[16];
    simde_mm512_storeu_si512(i, idx.v);
    simde_mm512_storeu_ps(f, or_.v);
    for (int k = 0; k < 16; k++)
        if (m.v >> k & 1) f[k] = base[i[k]];
    return (lanef){simde_mm512_loadu_ps(f)};
#endif
}
static inline lanei lanei_gather_or(const int32_t* base, lanei idx, lanem m, lanei or_)
{
#if defined(SIMDE_X86_AVX512F_NATIVE)
    return (lanei){_mm512_mask_i32gather_epi32(or_.v, m.v, idx.v, base, 4)};
#else
    int32_t i[16], o[16];
    simde_mm512_storeu_si512(i, idx.v);
    simde_mm512_storeu_si512(o, or_.v);
    for (int k = 0; k < 16; k++)
        if (m.v >> k & 1) o[k] = base[i[k]];
    return (lanei){simde_mm512_loadu_si512(o)};
#endif
}
static inline lanef lane_gather(const float* base, lanei idx)
{
#if defined(SIMDE_X86_AVX512F_NATIVE)
    return (lanef){_mm512_i32gather_ps(idx.v, base, 4)};
#else
    return lane_gather_or(base, idx, lane_mask_from_bits(0xffffu), (lanef){simde_mm512_setzero_ps()});
#endif
}

static inline lanei lanei_gather(const int32_t* base, lanei idx)
{
#if defined(SIMDE_X86_AVX512F_NATIVE)
    return (lanei){_mm512_i32gather_epi32(idx.v, base, 4)};
#else
    return lanei_gather_or(base, idx, lane_mask_from_bits(0xffffu), (lanei){simde_mm512_setzero_si512()});
#endif
}
static inline lanem lanei_nonneg(lanei a)
{
    return (lanem){simde_mm512_cmpgt_epi32_mask(a.v, simde_mm512_set1_epi32(-1))};
}
static inline lanem lanei_cmp_eq(lanei a, lanei b) { return (lanem){simde_mm512_cmpeq_epi32_mask(a.v, b.v)}; }
static inline lanem lanei_cmp_gt(lanei a, lanei b) { return (lanem){simde_mm512_cmpgt_epi32_mask(a.v, b.v)}; }
static inline lanei lanei_select(lanem m, lanei a, lanei b)
{
    return (lanei){simde_mm512_mask_blend_epi32(m.v, b.v, a.v)};
}

#elif SHOAL_LANES == 8
#include <simde/x86/avx2.h>
#include <simde/x86/fma.h>

typedef struct lanef {
    simde__m256 v;
} lanef;
typedef struct lanei {
    simde__m256i v;
} lanei;
typedef struct lanem {
    simde__m256 v;
} lanem; /* each lane all ones or all zeros */

#define SHOAL__PS(op) simde_mm256_##op##_ps
#define SHOAL__SI(op) simde_mm256_##op##_si256
#define SHOAL__EPI32(op) simde_mm256_##op##_epi32
#define SHOAL__CMP(a, b, pred) simde_mm256_cmp_ps(a, b, pred)
#if defined(SIMDE_X86_FMA_NATIVE)
#define SHOAL__FMA_NATIVE 1
#else
#define SHOAL__FMA_NATIVE 0
#endif
#define SHOAL__ONES() simde_mm256_castsi256_ps(simde_mm256_set1_epi32(-1))
#define SHOAL__CASTPS(x) simde_mm256_castsi256_ps(x)

static inline lanef lane_select(lanem m, lanef a, lanef b)
{
    return (lanef){simde_mm256_blendv_ps(b.v, a.v, m.v)};
}
static inline lanef lane_floor(lanef a) { return (lanef){simde_mm256_floor_ps(a.v)}; }
static inline lanef lane_itof(lanei a) { return (lanef){simde_mm256_cvtepi32_ps(a.v)}; }
static inline lanei lane_ftoi(lanef a) { return (lanei){simde_mm256_cvttps_epi32(a.v)}; }
static inline lanef lane_gather(const float* base, lanei idx)
{
    return (lanef){simde_mm256_i32gather_ps(base, idx.v, 4)};
}
static inline lanei lanei_gather(const int32_t* base, lanei idx)
{
    return (lanei){simde_mm256_i32gather_epi32(base, idx.v, 4)};
}
static inline lanef lane_gather_or(const float* base, lanei idx, lanem m, lanef or_)
{
    return (lanef){simde_mm256_mask_i32gather_ps(or_.v, base, idx.v, m.v, 4)};
}
static inline lanei lanei_gather_or(const int32_t* base, lanei idx, lanem m, lanei or_)
{
    return (lanei){simde_mm256_mask_i32gather_epi32(or_.v, base, idx.v, simde_mm256_castps_si256(m.v), 4)};
}
static inline lanem lanei_nonneg(lanei a)
{
    return (lanem){SHOAL__CASTPS(simde_mm256_cmpgt_epi32(a.v, simde_mm256_set1_epi32(-1)))};
}
static inline lanem lanei_cmp_eq(lanei a, lanei b)
{
    return (lanem){SHOAL__CASTPS(simde_mm256_cmpeq_epi32(a.v, b.v))};
}
static inline lanem lanei_cmp_gt(lanei a, lanei b)
{
    return (lanem){SHOAL__CASTPS(simde_mm256_cmpgt_epi32(a.v, b.v))};
}
static inline lanei lanei_select(lanem m, lanei a, lanei b)
{
    return (lanei){
        simde_mm256_castps_si256(simde_mm256_blendv_ps(SHOAL__CASTPS(b.v), SHOAL__CASTPS(a.v), m.v))};
}

#elif SHOAL_LANES == 4
#include <simde/x86/avx2.h> /* 128-bit gather; pulls in SSE2..SSE4.1 */
#include <simde/x86/fma.h>

typedef struct lanef {
    simde__m128 v;
} lanef;
typedef struct lanei {
    simde__m128i v;
} lanei;
typedef struct lanem {
    simde__m128 v;
} lanem; /* each lane all ones or all zeros */

#define SHOAL__PS(op) simde_mm_##op##_ps
#define SHOAL__SI(op) simde_mm_##op##_si128
#define SHOAL__EPI32(op) simde_mm_##op##_epi32
#define SHOAL__CMP(a, b, pred) simde_mm_cmp_ps(a, b, pred)
#if defined(SIMDE_X86_FMA_NATIVE)
#define SHOAL__FMA_NATIVE 1
#else
#define SHOAL__FMA_NATIVE 0
#endif
#define SHOAL__ONES() simde_mm_castsi128_ps(simde_mm_set1_epi32(-1))
#define SHOAL__CASTPS(x) simde_mm_castsi128_ps(x)

static inline lanef lane_select(lanem m, lanef a, lanef b)
{
    return (lanef){simde_mm_blendv_ps(b.v, a.v, m.v)};
}
static inline lanef lane_floor(lanef a) { return (lanef){simde_mm_floor_ps(a.v)}; }
static inline lanef lane_itof(lanei a) { return (lanef){simde_mm_cvtepi32_ps(a.v)}; }
static inline lanei lane_ftoi(lanef a) { return (lanei){simde_mm_cvttps_epi32(a.v)}; }
static inline lanef lane_gather(const float* base, lanei idx)
{
    return (lanef){simde_mm_i32gather_ps(base, idx.v, 4)};
}
static inline lanei lanei_gather(const int32_t* base, lanei idx)
{
    return (lanei){simde_mm_i32gather_epi32(base, idx.v, 4)};
}
static inline lanef lane_gather_or(const float* base, lanei idx, lanem m, lanef or_)
{
    return (lanef){simde_mm_mask_i32gather_ps(or_.v, base, idx.v, m.v, 4)};
}
static inline lanei lanei_gather_or(const int32_t* base, lanei idx, lanem m, lanei or_)
{
    return (lanei){simde_mm_mask_i32gather_epi32(or_.v, base, idx.v, simde_mm_castps_si128(m.v), 4)};
}
static inline lanem lanei_nonneg(lanei a)
{
    return (lanem){SHOAL__CASTPS(simde_mm_cmpgt_epi32(a.v, simde_mm_set1_epi32(-1)))};
}
static inline lanem lanei_cmp_eq(lanei a, lanei b)
{
    return (lanem){SHOAL__CASTPS(simde_mm_cmpeq_epi32(a.v, b.v))};
}
static inline lanem lanei_cmp_gt(lanei a, lanei b)
{
    return (lanem){SHOAL__CASTPS(simde_mm_cmpgt_epi32(a.v, b.v))};
}
static inline lanei lanei_select(lanem m, lanei a, lanei b)
{
    return (lanei){simde_mm_castps_si128(simde_mm_blendv_ps(SHOAL__CASTPS(b.v), SHOAL__CASTPS(a.v), m.v))};
}

#endif

#if SHOAL_LANES == 4 || SHOAL_LANES == 8
/* Vector masks (8 and 4 lanes) are float registers with all-ones lanes. */
static inline lanem lane_mask_and(lanem a, lanem b) { return (lanem){SHOAL__PS(and)(a.v, b.v)}; }
static inline lanem lane_mask_or(lanem a, lanem b) { return (lanem){SHOAL__PS(or)(a.v, b.v)}; }
static inline lanem lane_mask_not(lanem a) { return (lanem){SHOAL__PS(xor)(a.v, SHOAL__ONES())}; }
static inline uint32_t lane_mask_bits(lanem m) { return (uint32_t)SHOAL__PS(movemask)(m.v); }
static inline lanem lane_mask_from_bits(uint32_t bits)
{
    static const int32_t lane_bit[8] = {1, 2, 4, 8, 16, 32, 64, 128};
    lanei b = {SHOAL__SI(loadu)((const void*)lane_bit)};
    lanei m = {SHOAL__SI(and)(b.v, SHOAL__EPI32(set1)((int32_t)bits))};
    return (lanem){SHOAL__CASTPS(SHOAL__EPI32(cmpeq)(m.v, b.v))};
}
#endif

/* ------------------------------------------------------------------------ */
/* Operations with the same shape at every SIMD width.                       */
/* ------------------------------------------------------------------------ */

#if SHOAL_LANES > 1
/* lane_load/lane_store need SHOAL_LANES * 4-byte alignment (lane arrays have
 * 64); the u variants take any address. */
static inline lanef lane_load(const float* p) { return (lanef){SHOAL__PS(load)(p)}; }
static inline lanef lane_loadu(const float* p) { return (lanef){SHOAL__PS(loadu)(p)}; }
static inline void lane_store(float* p, lanef a) { SHOAL__PS(store)(p, a.v); }
static inline void lane_storeu(float* p, lanef a) { SHOAL__PS(storeu)(p, a.v); }
static inline lanef lane_set1(float x) { return (lanef){SHOAL__PS(set1)(x)}; }
static inline lanef lane_zero(void) { return (lanef){SHOAL__PS(setzero)()}; }

static inline lanef lane_add(lanef a, lanef b) { return (lanef){SHOAL__PS(add)(a.v, b.v)}; }
static inline lanef lane_sub(lanef a, lanef b) { return (lanef){SHOAL__PS(sub)(a.v, b.v)}; }
static inline lanef lane_mul(lanef a, lanef b) { return (lanef){SHOAL__PS(mul)(a.v, b.v)}; }
static inline lanef lane_div(lanef a, lanef b) { return (lanef){SHOAL__PS(div)(a.v, b.v)}; }
/* x86 semantics, kept by SIMDe everywhere: a < b ? a : b, so a NaN in either
 * operand or min(+0, -0) gives b. The scalar build writes the same ternary. */
static inline lanef lane_min(lanef a, lanef b) { return (lanef){SHOAL__PS(min)(a.v, b.v)}; }
static inline lanef lane_max(lanef a, lanef b) { return (lanef){SHOAL__PS(max)(a.v, b.v)}; }
static inline lanef lane_sqrt(lanef a) { return (lanef){SHOAL__PS(sqrt)(a.v)}; }
/* Sign-bit operations, like fabsf and unary minus: abs(-0) = +0, neg(+0) = -0,
 * and NaNs only change sign. (0 - a would turn -0 into +0.) */
static inline lanef lane_abs(lanef a) { return (lanef){SHOAL__PS(andnot)(SHOAL__PS(set1)(-0.0f), a.v)}; }
static inline lanef lane_neg(lanef a) { return (lanef){SHOAL__PS(xor)(SHOAL__PS(set1)(-0.0f), a.v)}; }

/* Ordered compares (false if either is NaN), except neq which is C's !=
 * (true if either is NaN), so !(a == b) == (a != b) as in scalar code. */
static inline lanem lane_cmp_lt(lanef a, lanef b) { return (lanem){SHOAL__CMP(a.v, b.v, SIMDE_CMP_LT_OQ)}; }
static inline lanem lane_cmp_le(lanef a, lanef b) { return (lanem){SHOAL__CMP(a.v, b.v, SIMDE_CMP_LE_OQ)}; }
static inline lanem lane_cmp_gt(lanef a, lanef b) { return (lanem){SHOAL__CMP(a.v, b.v, SIMDE_CMP_GT_OQ)}; }
static inline lanem lane_cmp_ge(lanef a, lanef b) { return (lanem){SHOAL__CMP(a.v, b.v, SIMDE_CMP_GE_OQ)}; }
static inline lanem lane_cmp_eq(lanef a, lanef b) { return (lanem){SHOAL__CMP(a.v, b.v, SIMDE_CMP_EQ_OQ)}; }
static inline lanem lane_cmp_neq(lanef a, lanef b) { return (lanem){SHOAL__CMP(a.v, b.v, SIMDE_CMP_NEQ_UQ)}; }

/* int32 lanes: indices for gathers and spatial-hash cells. Results must fit
 * in int32: SIMDe's emulation computes them with signed C arithmetic, where
 * overflow is undefined (and the scalar build lets UBSan catch it). */
static inline lanei lanei_load(const int32_t* p) { return (lanei){SHOAL__SI(load)((const void*)p)}; }
static inline lanei lanei_loadu(const int32_t* p) { return (lanei){SHOAL__SI(loadu)((const void*)p)}; }
static inline void lanei_store(int32_t* p, lanei a) { SHOAL__SI(store)((void*)p, a.v); }
static inline void lanei_storeu(int32_t* p, lanei a) { SHOAL__SI(storeu)((void*)p, a.v); }
static inline lanei lanei_set1(int32_t x) { return (lanei){SHOAL__EPI32(set1)(x)}; }
static inline lanei lanei_add(lanei a, lanei b) { return (lanei){SHOAL__EPI32(add)(a.v, b.v)}; }
static inline lanei lanei_sub(lanei a, lanei b) { return (lanei){SHOAL__EPI32(sub)(a.v, b.v)}; }
static inline lanei lanei_mul(lanei a, lanei b) { return (lanei){SHOAL__EPI32(mullo)(a.v, b.v)}; }
static inline lanei lanei_max(lanei a, lanei b) { return (lanei){SHOAL__EPI32(max)(a.v, b.v)}; }
static inline lanei lanei_min(lanei a, lanei b) { return (lanei){SHOAL__EPI32(min)(a.v, b.v)}; }
/* Bits of int32 lanes, and products modulo 2^32 (hashes): lanei_mul_wrap
 * may overflow (SIMDe's emulation multiplies in 64 bits); shifts by a
 * constant, arithmetic (srai) or logical (srli, slli). */
static inline lanei lanei_and(lanei a, lanei b) { return (lanei){SHOAL__SI(and)(a.v, b.v)}; }
static inline lanei lanei_or(lanei a, lanei b) { return (lanei){SHOAL__SI(or)(a.v, b.v)}; }
static inline lanei lanei_xor(lanei a, lanei b) { return (lanei){SHOAL__SI(xor)(a.v, b.v)}; }
static inline lanei lanei_mul_wrap(lanei a, lanei b) { return (lanei){SHOAL__EPI32(mullo)(a.v, b.v)}; }
#define lanei_srli(a, n) ((lanei){SHOAL__EPI32(srli)((a).v, (n))})
#define lanei_slli(a, n) ((lanei){SHOAL__EPI32(slli)((a).v, (n))})
#if SHOAL_LANES == 16 && defined(SIMDE_X86_AVX512F_NATIVE)
#define lanei_srai(a, n) ((lanei){_mm512_srai_epi32((a).v, (n))})
#elif SHOAL_LANES == 16 /* SIMDe has no 32-bit arithmetic shift at 16 lanes: */
/* the logical shift of a, or of ~a and then inverted where a < 0 */
static inline lanei lanei_srai_(lanei a, unsigned n)
{
    const lanei s = lanei_select(lanei_cmp_gt(lanei_set1(0), a), lanei_set1(-1), lanei_set1(0));
    return lanei_xor(lanei_srli(lanei_xor(a, s), n), s);
}
#define lanei_srai(a, n) lanei_srai_((a), (n))
#else
#define lanei_srai(a, n) ((lanei){SHOAL__EPI32(srai)((a).v, (n))})
#endif

#else /* SHOAL_LANES == 1: the scalar reference, plain C on one value. */

typedef struct lanef {
    float v;
} lanef;
typedef struct lanei {
    int32_t v;
} lanei;
typedef struct lanem {
    bool v;
} lanem;

static inline lanef lane_load(const float* p) { return (lanef){*p}; }
static inline lanef lane_loadu(const float* p) { return (lanef){*p}; }
static inline void lane_store(float* p, lanef a) { *p = a.v; }
static inline void lane_storeu(float* p, lanef a) { *p = a.v; }
static inline lanef lane_set1(float x) { return (lanef){x}; }
static inline lanef lane_zero(void) { return (lanef){0.0f}; }

static inline lanef lane_add(lanef a, lanef b) { return (lanef){a.v + b.v}; }
static inline lanef lane_sub(lanef a, lanef b) { return (lanef){a.v - b.v}; }
static inline lanef lane_mul(lanef a, lanef b) { return (lanef){a.v * b.v}; }
static inline lanef lane_div(lanef a, lanef b) { return (lanef){a.v / b.v}; }
static inline lanef lane_min(lanef a, lanef b) { return (lanef){a.v < b.v ? a.v : b.v}; }
static inline lanef lane_max(lanef a, lanef b) { return (lanef){a.v > b.v ? a.v : b.v}; }
static inline lanef lane_sqrt(lanef a) { return (lanef){sqrtf(a.v)}; }
static inline lanef lane_abs(lanef a) { return (lanef){fabsf(a.v)}; }
static inline lanef lane_neg(lanef a) { return (lanef){-a.v}; }
static inline lanef lane_floor(lanef a) { return (lanef){floorf(a.v)}; }

static inline lanem lane_cmp_lt(lanef a, lanef b) { return (lanem){a.v < b.v}; }
static inline lanem lane_cmp_le(lanef a, lanef b) { return (lanem){a.v <= b.v}; }
static inline lanem lane_cmp_gt(lanef a, lanef b) { return (lanem){a.v > b.v}; }
static inline lanem lane_cmp_ge(lanef a, lanef b) { return (lanem){a.v >= b.v}; }
static inline lanem lane_cmp_eq(lanef a, lanef b) { return (lanem){a.v == b.v}; }
static inline lanem lane_cmp_neq(lanef a, lanef b) { return (lanem){a.v != b.v}; }
static inline lanem lane_mask_and(lanem a, lanem b) { return (lanem){a.v && b.v}; }
static inline lanem lane_mask_or(lanem a, lanem b) { return (lanem){a.v || b.v}; }
static inline lanem lane_mask_not(lanem a) { return (lanem){!a.v}; }
static inline uint32_t lane_mask_bits(lanem m) { return m.v ? 1u : 0u; }
static inline lanem lane_mask_from_bits(uint32_t bits) { return (lanem){(bits & 1u) != 0}; }
static inline lanef lane_select(lanem m, lanef a, lanef b) { return m.v ? a : b; }

static inline lanei lanei_load(const int32_t* p) { return (lanei){*p}; }
static inline lanei lanei_loadu(const int32_t* p) { return (lanei){*p}; }
static inline void lanei_store(int32_t* p, lanei a) { *p = a.v; }
static inline void lanei_storeu(int32_t* p, lanei a) { *p = a.v; }
static inline lanei lanei_set1(int32_t x) { return (lanei){x}; }
static inline lanei lanei_add(lanei a, lanei b) { return (lanei){a.v + b.v}; }
static inline lanei lanei_sub(lanei a, lanei b) { return (lanei){a.v - b.v}; }
static inline lanei lanei_mul(lanei a, lanei b) { return (lanei){a.v * b.v}; }
static inline lanei lanei_max(lanei a, lanei b) { return (lanei){a.v > b.v ? a.v : b.v}; }
static inline lanei lanei_min(lanei a, lanei b) { return (lanei){a.v < b.v ? a.v : b.v}; }
static inline lanei lanei_and(lanei a, lanei b) { return (lanei){a.v & b.v}; }
static inline lanei lanei_or(lanei a, lanei b) { return (lanei){a.v | b.v}; }
static inline lanei lanei_xor(lanei a, lanei b) { return (lanei){a.v ^ b.v}; }
static inline lanei lanei_mul_wrap(lanei a, lanei b)
{
    return (lanei){(int32_t)((uint32_t)a.v * (uint32_t)b.v)};
}
#define lanei_srai(a, n) ((lanei){(a).v >> (n)})
#define lanei_srli(a, n) ((lanei){(int32_t)((uint32_t)(a).v >> (n))})
#define lanei_slli(a, n) ((lanei){(int32_t)((uint32_t)(a).v << (n))})
static inline lanef lane_itof(lanei a) { return (lanef){(float)a.v}; }
static inline lanei lane_ftoi(lanef a) { return (lanei){(int32_t)a.v}; }
static inline lanef lane_gather(const float* base, lanei idx) { return (lanef){base[idx.v]}; }
static inline lanei lanei_gather(const int32_t* base, lanei idx) { return (lanei){base[idx.v]}; }
static inline lanef lane_gather_or(const float* base, lanei idx, lanem m, lanef or_)
{
    return m.v ? (lanef){base[idx.v]} : or_;
}
static inline lanei lanei_gather_or(const int32_t* base, lanei idx, lanem m, lanei or_)
{
    return m.v ? (lanei){base[idx.v]} : or_;
}
static inline lanem lanei_nonneg(lanei a) { return (lanem){a.v >= 0}; }
static inline lanem lanei_cmp_eq(lanei a, lanei b) { return (lanem){a.v == b.v}; }
static inline lanem lanei_cmp_gt(lanei a, lanei b) { return (lanem){a.v > b.v}; }
static inline lanei lanei_select(lanem m, lanei a, lanei b) { return m.v ? a : b; }

#endif

/* ------------------------------------------------------------------------ */
/* Built from the above, identical for every width.                          */
/* ------------------------------------------------------------------------ */

/* a * b + c. Unfused by default (a rounded product, then a rounded sum) so a
 * kernel gives the same bits as scalar code compiled with -ffp-contract=off.
 * With SHOAL_LANE_FUSED defined it is one fused rounding, as fmaf(). SIMDe
 * 0.7.4 silently computes an unfused a*b+c when it emulates fmadd, so unless
 * the width has a native x86 FMA we call fmaf() per lane to stay fused. */
static inline lanef lane_fma(lanef a, lanef b, lanef c)
{
#if !defined(SHOAL_LANE_FUSED)
    return lane_add(lane_mul(a, b), c);
#elif SHOAL_LANES == 1
    return (lanef){fmaf(a.v, b.v, c.v)};
#elif SHOAL__FMA_NATIVE
    return (lanef){SHOAL__PS(fmadd)(a.v, b.v, c.v)};
#else
    float fa[SHOAL_LANES], fb[SHOAL_LANES], fc[SHOAL_LANES];
    lane_storeu(fa, a);
    lane_storeu(fb, b);
    lane_storeu(fc, c);
    for (int i = 0; i < SHOAL_LANES; i++) fa[i] = fmaf(fa[i], fb[i], fc[i]);
    return lane_loadu(fa);
#endif
}

/* a * b + c for hot loops: one fused rounding where the width has a native
 * FMA (and in the scalar build when the compiler targets a CPU with one), a
 * rounded product and a rounded sum elsewhere. One instruction instead of
 * two, and never slower; like lane_rcp_fast, the bits depend on the build,
 * not on the thread count. */
static inline lanef lane_fma_fast(lanef a, lanef b, lanef c)
{
#if SHOAL_LANES == 1 && defined(__FMA__)
    return (lanef){fmaf(a.v, b.v, c.v)};
#elif SHOAL_LANES > 1 && SHOAL__FMA_NATIVE
    return (lanef){SHOAL__PS(fmadd)(a.v, b.v, c.v)};
#else
    return lane_add(lane_mul(a, b), c);
#endif
}

/* 1 / sqrt(a), computed exactly as that: two correctly rounded operations,
 * relative error at most 2^-23 (1 + 2^-23) (about 1 ulp), and the same bits
 * at every width and on every ISA. Hardware estimates (rsqrtps 12 bits, rsqrt14 14 bits,
 * NEON vrsqrte 8 bits) differ from each other even after a Newton step, which
 * would make results depend on the build. rsqrt(0) = +inf, rsqrt(-0) = -inf,
 * rsqrt(+inf) = 0, negative -> NaN: guard with lane_max(x, tiny) if needed. */
static inline lanef lane_rsqrt(lanef a) { return lane_div(lane_set1(1.0f), lane_sqrt(a)); }

/* Fast 1 / a for hot loops where a divide's throughput matters (a 512-bit
 * divide issues about once per 16 cycles): the hardware estimate refined by
 * Newton steps, r' = r (2 - a r), to a relative error below 2^-21 for
 * normal finite a > 0 (the tests check it). Unlike lane_div the bits depend
 * on the ISA, so results match within a build (any thread count), not
 * between builds; the scalar build divides exactly. Guard a away from 0. */
static inline lanef lane_rcp_fast(lanef a)
{
    /* SIMDe 0.7.4 has no rcp14: use the native instruction where there is
     * one and an exact divide elsewhere. */
#if SHOAL_LANES == 16 && defined(SIMDE_X86_AVX512F_NATIVE)
    lanef r = {_mm512_rcp14_ps(a.v)}; /* 14 bits: one step gives ~28 */
    return lane_mul(r, lane_sub(lane_set1(2.0f), lane_mul(a, r)));
#elif SHOAL_LANES == 8 && defined(SIMDE_X86_AVX_NATIVE)
    lanef r = {_mm256_rcp_ps(a.v)}; /* 12 bits: two steps give ~24 */
    r = lane_mul(r, lane_sub(lane_set1(2.0f), lane_mul(a, r)));
    return lane_mul(r, lane_sub(lane_set1(2.0f), lane_mul(a, r)));
#else
    return lane_div(lane_set1(1.0f), a);
#endif
}

static inline lanef lane_clamp(lanef x, lanef lo, lanef hi) { return lane_min(lane_max(x, lo), hi); }

/* acc + x where m is set; acc unchanged (bit for bit, -0 stays -0) elsewhere.
 * The accumulate step of neighbor loops, whose masks say "is a neighbor". */
static inline lanef lane_masked_add(lanef acc, lanem m, lanef x)
{
    return lane_select(m, lane_add(acc, x), acc);
}

static inline bool lane_mask_any(lanem m) { return lane_mask_bits(m) != 0; }
static inline bool lane_mask_all(lanem m)
{
    return lane_mask_bits(m) == (uint32_t)((1ull << SHOAL_LANES) - 1);
}
/* a && !b */
static inline lanem lane_mask_andnot(lanem a, lanem b) { return lane_mask_and(a, lane_mask_not(b)); }

/* Lane numbers 0, 1, ..., SHOAL_LANES - 1: add the loop base to get indices. */
static inline lanei lanei_iota(void)
{
    static const int32_t iota[SHOAL_MAX_LANES] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    return lanei_loadu(iota);
}

static inline lanef lane_iota(void)
{
    static const float iota[SHOAL_MAX_LANES] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    return lane_loadu(iota);
}

/* Lanes 0 .. n-1 set: the valid lanes of a block that starts n items before
 * the end. Any n is fine (n <= 0: none, n >= SHOAL_LANES: all). */
static inline lanem lane_mask_first(int n)
{
#if SHOAL_LANES == 16
    /* A mask register from the bits (gcc 12 at -O2 with the sanitizers
     * spilled a compare's 16-bit mask with kmovw and read it back as 32
     * bits, the upper half from the stack) */
    return lane_mask_from_bits(n <= 0 ? 0u : n >= SHOAL_LANES ? 0xffffu : (1u << n) - 1u);
#else
    return lanei_cmp_gt(lanei_set1(n), lanei_iota());
#endif
}

/* Inclusive prefix sums of int32 lanes: lane i holds a0 + ... + ai
 * (wrapping as int32 arithmetic does not: keep the sums in range). */
static inline lanei lanei_prefix_sum(lanei a)
{
#if SHOAL_LANES == 16
    /* x moved up s lanes (lane i from lane i - s, the first s zero) */
    const simde__m512i up =
        simde_mm512_sub_epi32(simde_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                              simde_mm512_set1_epi32(1));
    simde__m512i x = a.v;
    x = simde_mm512_add_epi32(x, simde_mm512_maskz_permutexvar_epi32(0xfffe, up, x));
    x = simde_mm512_add_epi32(x, simde_mm512_maskz_permutexvar_epi32(
                                     0xfffc, simde_mm512_sub_epi32(up, simde_mm512_set1_epi32(1)), x));
    x = simde_mm512_add_epi32(x, simde_mm512_maskz_permutexvar_epi32(
                                     0xfff0, simde_mm512_sub_epi32(up, simde_mm512_set1_epi32(3)), x));
    x = simde_mm512_add_epi32(x, simde_mm512_maskz_permutexvar_epi32(
                                     0xff00, simde_mm512_sub_epi32(up, simde_mm512_set1_epi32(7)), x));
    return (lanei){x};
#elif SHOAL_LANES == 8
    simde__m256i x = a.v; /* each half's sums, then the low half's total on the high */
    x = simde_mm256_add_epi32(x, simde_mm256_slli_si256(x, 4));
    x = simde_mm256_add_epi32(x, simde_mm256_slli_si256(x, 8));
    const simde__m256i top = simde_mm256_shuffle_epi32(x, 0xff);
    return (lanei){simde_mm256_add_epi32(x, simde_mm256_permute2x128_si256(top, top, 0x08))};
#elif SHOAL_LANES == 4
    simde__m128i x = a.v;
    x = simde_mm_add_epi32(x, simde_mm_slli_si128(x, 4));
    return (lanei){simde_mm_add_epi32(x, simde_mm_slli_si128(x, 8))};
#else
    return a;
#endif
}

/* The last lane's value in every lane. */
static inline lanei lanei_broadcast_last(lanei a)
{
#if SHOAL_LANES == 16
    return (lanei){simde_mm512_permutexvar_epi32(simde_mm512_set1_epi32(15), a.v)};
#elif SHOAL_LANES == 8
    return (lanei){simde_mm256_permutevar8x32_epi32(a.v, simde_mm256_set1_epi32(7))};
#elif SHOAL_LANES == 4
    return (lanei){simde_mm_shuffle_epi32(a.v, 0xff)};
#else
    return a;
#endif
}

/* Lane i holds a's lane i + 1, the last lane its own. */
static inline lanef lane_next(lanef a)
{
#if SHOAL_LANES == 16
    return (lanef){simde_mm512_permutexvar_ps(
        simde_mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 15), a.v)};
#elif SHOAL_LANES == 8
    return (lanef){simde_mm256_permutevar8x32_ps(a.v, simde_mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7))};
#elif SHOAL_LANES == 4
    return (lanef){simde_mm_shuffle_ps(a.v, a.v, SIMDE_MM_SHUFFLE(3, 3, 2, 1))};
#else
    return a;
#endif
}

/* Lane i holds a's lane i + 1, the last lane its own. */
static inline lanei lanei_next(lanei a)
{
#if SHOAL_LANES == 16
    return (lanei){simde_mm512_permutexvar_epi32(
        simde_mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 15), a.v)};
#elif SHOAL_LANES == 8
    return (lanei){simde_mm256_permutevar8x32_epi32(a.v, simde_mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7))};
#elif SHOAL_LANES == 4
    return (lanei){simde_mm_shuffle_epi32(a.v, SIMDE_MM_SHUFFLE(3, 3, 2, 1))};
#else
    return a;
#endif
}

/* a + b and a - b modulo 2^32 (cell keys, whose differences wrap): the
 * instructions wrap; where SIMDe emulates them (signed C arithmetic) or at
 * one lane, a lane at a time as unsigned. */
#if (SHOAL_LANES == 16 && defined(SIMDE_X86_AVX512F_NATIVE)) ||                                              \
    (SHOAL_LANES == 8 && defined(SIMDE_X86_AVX2_NATIVE)) ||                                                  \
    (SHOAL_LANES == 4 && defined(SIMDE_X86_SSE2_NATIVE))
static inline lanei lanei_add_wrap(lanei a, lanei b) { return lanei_add(a, b); }
static inline lanei lanei_sub_wrap(lanei a, lanei b) { return lanei_sub(a, b); }
#else
static inline lanei lanei_wrap_(lanei a, lanei b, int sub)
{
    _Alignas(64) int32_t x[SHOAL_LANES], y[SHOAL_LANES];
    lanei_store(x, a);
    lanei_store(y, b);
    for (int l = 0; l < SHOAL_LANES; ++l)
        x[l] = (int32_t)(sub ? (uint32_t)x[l] - (uint32_t)y[l] : (uint32_t)x[l] + (uint32_t)y[l]);
    return lanei_load(x);
}
static inline lanei lanei_add_wrap(lanei a, lanei b) { return lanei_wrap_(a, b, 0); }
static inline lanei lanei_sub_wrap(lanei a, lanei b) { return lanei_wrap_(a, b, 1); }
#endif

/* acc plus one in the lanes of m (a count of masks). */
static inline lanei lanei_count(lanei acc, lanem m)
{
#if SHOAL_LANES == 16
    return (lanei){simde_mm512_mask_add_epi32(acc.v, m.v, acc.v, simde_mm512_set1_epi32(1))};
#elif SHOAL_LANES == 8
    return (lanei){simde_mm256_sub_epi32(acc.v, simde_mm256_castps_si256(m.v))}; /* a set lane is -1 */
#elif SHOAL_LANES == 4
    return (lanei){simde_mm_sub_epi32(acc.v, simde_mm_castps_si128(m.v))};
#else
    return (lanei){acc.v + (m.v ? 1 : 0)};
#endif
}

/* Lane i's value (0 <= i < SHOAL_LANES) in every lane. */
static inline lanef lane_broadcast_at(lanef a, int i)
{
#if SHOAL_LANES == 16
    return (lanef){simde_mm512_permutexvar_ps(simde_mm512_set1_epi32(i), a.v)};
#elif SHOAL_LANES == 8
    return (lanef){simde_mm256_permutevar8x32_ps(a.v, simde_mm256_set1_epi32(i))};
#elif SHOAL_LANES == 4
    return (lanef){simde_mm_permutevar_ps(a.v, simde_mm_set1_epi32(i))};
#else
    (void)i;
    return a;
#endif
}

/* Rows of four floats, lane l's from base + 2 * half[l] (half[l] is twice
 * the row), transposed: out[c] holds each lane's c-th (base[2 half[l] +
 * c]). One 16-byte load a lane and a transpose in registers, where four
 * gathers would fetch each float alone (on AMD cores a gather of 8 takes
 * about as long as 16 loads). A lane's place is given in pairs of floats,
 * unsigned, so that each load takes it as it comes out of the vector: a
 * scale of 8 in the address, no widening of its sign and no shift (16
 * instructions a call less than rows at 8 lanes). The rows need 4-byte
 * alignment only. */
#define LANE_ROW4_AT(base, half) ((const float*)(const void*)((const char*)(base) + 8 * (size_t)(half)))
static inline void lane_rows4(const float* base, const uint32_t* half, lanef out[4])
{
#if SHOAL_LANES == 16
    simde__m512 a[4];
    for (int j = 0; j < 4; ++j) {
        simde__m512 v = simde_mm512_castps128_ps512(simde_mm_loadu_ps(LANE_ROW4_AT(base, half[j])));
        v = simde_mm512_insertf32x4(v, simde_mm_loadu_ps(LANE_ROW4_AT(base, half[j + 4])), 1);
        v = simde_mm512_insertf32x4(v, simde_mm_loadu_ps(LANE_ROW4_AT(base, half[j + 8])), 2);
        a[j] = simde_mm512_insertf32x4(v, simde_mm_loadu_ps(LANE_ROW4_AT(base, half[j + 12])), 3);
    }
    const simde__m512 t0 = simde_mm512_unpacklo_ps(a[0], a[1]), t1 = simde_mm512_unpackhi_ps(a[0], a[1]);
    const simde__m512 t2 = simde_mm512_unpacklo_ps(a[2], a[3]), t3 = simde_mm512_unpackhi_ps(a[2], a[3]);
    out[0] = (lanef){simde_mm512_shuffle_ps(t0, t2, 0x44)};
    out[1] = (lanef){simde_mm512_shuffle_ps(t0, t2, 0xee)};
    out[2] = (lanef){simde_mm512_shuffle_ps(t1, t3, 0x44)};
    out[3] = (lanef){simde_mm512_shuffle_ps(t1, t3, 0xee)};
#elif SHOAL_LANES == 8
    simde__m256 a[4];
    for (int j = 0; j < 4; ++j)
        a[j] = simde_mm256_set_m128(simde_mm_loadu_ps(LANE_ROW4_AT(base, half[j + 4])),
                                    simde_mm_loadu_ps(LANE_ROW4_AT(base, half[j])));
    const simde__m256 t0 = simde_mm256_unpacklo_ps(a[0], a[1]), t1 = simde_mm256_unpackhi_ps(a[0], a[1]);
    const simde__m256 t2 = simde_mm256_unpacklo_ps(a[2], a[3]), t3 = simde_mm256_unpackhi_ps(a[2], a[3]);
    out[0] = (lanef){simde_mm256_shuffle_ps(t0, t2, 0x44)};
    out[1] = (lanef){simde_mm256_shuffle_ps(t0, t2, 0xee)};
    out[2] = (lanef){simde_mm256_shuffle_ps(t1, t3, 0x44)};
    out[3] = (lanef){simde_mm256_shuffle_ps(t1, t3, 0xee)};
#elif SHOAL_LANES == 4
    simde__m128 a[4];
    for (int j = 0; j < 4; ++j) a[j] = simde_mm_loadu_ps(LANE_ROW4_AT(base, half[j]));
    const simde__m128 t0 = simde_mm_unpacklo_ps(a[0], a[1]), t1 = simde_mm_unpackhi_ps(a[0], a[1]);
    const simde__m128 t2 = simde_mm_unpacklo_ps(a[2], a[3]), t3 = simde_mm_unpackhi_ps(a[2], a[3]);
    out[0] = (lanef){simde_mm_movelh_ps(t0, t2)};
    out[1] = (lanef){simde_mm_movehl_ps(t2, t0)};
    out[2] = (lanef){simde_mm_movelh_ps(t1, t3)};
    out[3] = (lanef){simde_mm_movehl_ps(t3, t1)};
#else
    for (int c = 0; c < 4; ++c) out[c] = (lanef){LANE_ROW4_AT(base, half[0])[c]};
#endif
}

/* Lane l's values of the eight columns as the record of eight floats at
 * base + 8 l, for every lane (lane_rows4's way in, a record at a time):
 * at 8 lanes a transpose in registers and one 32-byte store a record. base
 * needs 4-byte alignment only. */
static inline void lane_store_rows8(float* base, const lanef cols[8])
{
#if SHOAL_LANES == 8
    simde__m256 t[8], u[8];
    for (int j = 0; j < 4; ++j) {
        t[2 * j] = simde_mm256_unpacklo_ps(cols[2 * j].v, cols[2 * j + 1].v);
        t[2 * j + 1] = simde_mm256_unpackhi_ps(cols[2 * j].v, cols[2 * j + 1].v);
    }
    for (int h = 0; h < 2; ++h) { /* columns 0-3, then 4-7 */
        simde__m256* a = t + 4 * h;
        u[4 * h] = simde_mm256_shuffle_ps(a[0], a[2], 0x44);
        u[4 * h + 1] = simde_mm256_shuffle_ps(a[0], a[2], 0xee);
        u[4 * h + 2] = simde_mm256_shuffle_ps(a[1], a[3], 0x44);
        u[4 * h + 3] = simde_mm256_shuffle_ps(a[1], a[3], 0xee);
    }
    for (int l = 0; l < 4; ++l) {
        simde_mm256_storeu_ps(base + 8 * l, simde_mm256_permute2f128_ps(u[l], u[4 + l], 0x20));
        simde_mm256_storeu_ps(base + 8 * (l + 4), simde_mm256_permute2f128_ps(u[l], u[4 + l], 0x31));
    }
#else
    _Alignas(64) float t[8][SHOAL_LANES];
    for (int c = 0; c < 8; ++c) lane_store(t[c], cols[c]);
    for (int l = 0; l < SHOAL_LANES; ++l)
        for (int c = 0; c < 8; ++c) base[8 * l + c] = t[c][l];
#endif
}

/* A float lane's 32 bits as an int32 lane, bit for bit. */
static inline lanei lane_bits_i(lanef a)
{
#if SHOAL_LANES == 16
    return (lanei){simde_mm512_castps_si512(a.v)};
#elif SHOAL_LANES == 8
    return (lanei){simde_mm256_castps_si256(a.v)};
#elif SHOAL_LANES == 4
    return (lanei){simde_mm_castps_si128(a.v)};
#else
    int32_t i;
    memcpy(&i, &a.v, sizeof i);
    return (lanei){i};
#endif
}

/* An int32 lane's 32 bits as a float lane, bit for bit (lane_bits_i's
 * way back). */
static inline lanef lanei_bits_f(lanei a)
{
#if SHOAL_LANES == 16
    return (lanef){simde_mm512_castsi512_ps(a.v)};
#elif SHOAL_LANES == 8
    return (lanef){simde_mm256_castsi256_ps(a.v)};
#elif SHOAL_LANES == 4
    return (lanef){simde_mm_castsi128_ps(a.v)};
#else
    float f;
    memcpy(&f, &a.v, sizeof f);
    return (lanef){f};
#endif
}

/* Value of lane i (0 <= i < SHOAL_LANES). For tests and debugging; slow. */
static inline float lane_extract(lanef a, int i)
{
    float t[SHOAL_LANES];
    lane_storeu(t, a);
    return t[i];
}

/* Sum of all lanes in a fixed order, so a given width always gives the same
 * bits: a halving tree, t[i] += t[i + h] for h = N/2, N/4, ..., 1, i < h.
 * For N = 4 that is (l0 + l2) + (l1 + l3); for N = 1 it is l0. The shuffles
 * below perform exactly those additions (float addition is commutative, so
 * t[i] + t[i + h] and t[i + h] + t[i] are the same bits); the scalar loop is
 * the reference the tests compare with. The order differs between widths:
 * a reduction that must match across builds has to reduce in a
 * width-independent order itself. */
static inline float lane_hsum_reference(lanef a)
{
    float t[SHOAL_LANES];
    lane_storeu(t, a);
    for (int h = SHOAL_LANES / 2; h >= 1; h /= 2) {
        for (int i = 0; i < h; i++) t[i] += t[i + h];
    }
    return t[0];
}

static inline float lane_hsum(lanef a)
{
#if SHOAL_LANES == 1
    return a.v;
#else
#if SHOAL_LANES == 16
    simde__m256 lo8 = simde_mm512_castps512_ps256(a.v);
    simde__m256 hi8 = simde_mm256_castpd_ps(simde_mm512_extractf64x4_pd(simde_mm512_castps_pd(a.v), 1));
    simde__m256 s8 = simde_mm256_add_ps(lo8, hi8);
#elif SHOAL_LANES == 8
    simde__m256 s8 = a.v;
#endif
#if SHOAL_LANES >= 8
    simde__m128 s4 = simde_mm_add_ps(simde_mm256_castps256_ps128(s8), simde_mm256_extractf128_ps(s8, 1));
#else
    simde__m128 s4 = a.v;
#endif
    simde__m128 s2 = simde_mm_add_ps(s4, simde_mm_movehl_ps(s4, s4));
    simde__m128 s1 = simde_mm_add_ss(s2, simde_mm_shuffle_ps(s2, s2, 1));
    return simde_mm_cvtss_f32(s1);
#endif
}

/* Four lane_hsum at once, out[k] bit-identical to lane_hsum of the k-th
 * argument: each vector is folded to four lanes as lane_hsum does, then the
 * last two levels of the four run side by side in one register. */
static inline void lane_hsum4(lanef a, lanef b, lanef c, lanef d, float out[4])
{
#if SHOAL_LANES == 1
    out[0] = a.v;
    out[1] = b.v;
    out[2] = c.v;
    out[3] = d.v;
#else
    simde__m128 v4[4];
    const lanef in[4] = {a, b, c, d};
    for (int k = 0; k < 4; ++k) {
#if SHOAL_LANES == 16
        simde__m256 lo8 = simde_mm512_castps512_ps256(in[k].v);
        simde__m256 hi8 =
            simde_mm256_castpd_ps(simde_mm512_extractf64x4_pd(simde_mm512_castps_pd(in[k].v), 1));
        simde__m256 s8 = simde_mm256_add_ps(lo8, hi8);
#elif SHOAL_LANES == 8
        simde__m256 s8 = in[k].v;
#endif
#if SHOAL_LANES >= 8
        v4[k] = simde_mm_add_ps(simde_mm256_castps256_ps128(s8), simde_mm256_extractf128_ps(s8, 1));
#else
        v4[k] = in[k].v;
#endif
    }
    /* [a0 + a2, a1 + a3, b0 + b2, b1 + b3] and the same for c, d */
    simde__m128 ab = simde_mm_add_ps(simde_mm_movelh_ps(v4[0], v4[1]), simde_mm_movehl_ps(v4[1], v4[0]));
    simde__m128 cd = simde_mm_add_ps(simde_mm_movelh_ps(v4[2], v4[3]), simde_mm_movehl_ps(v4[3], v4[2]));
    /* even + odd lanes: (x0 + x2) + (x1 + x3) for each of a, b, c, d */
    simde__m128 even = simde_mm_shuffle_ps(ab, cd, SIMDE_MM_SHUFFLE(2, 0, 2, 0));
    simde__m128 odd = simde_mm_shuffle_ps(ab, cd, SIMDE_MM_SHUFFLE(3, 1, 3, 1));
    simde_mm_storeu_ps(out, simde_mm_add_ps(even, odd));
#endif
}

/* First n lanes from p (n clamped to [0, SHOAL_LANES]), zeros in the rest.
 * Never touches p[n] or beyond, unlike a full load. */
static inline lanef lane_load_partial(const float* p, int n)
{
    float t[SHOAL_LANES] = {0.0f};
    n = n < 0 ? 0 : (n > SHOAL_LANES ? SHOAL_LANES : n);
    if (n > 0) memcpy(t, p, (size_t)n * sizeof(float)); /* p may be NULL when n is 0 */
    return lane_loadu(t);
}

/* Store the first n lanes of a to p (n clamped); p[n..] is left untouched. */
static inline void lane_store_partial(float* p, lanef a, int n)
{
    float t[SHOAL_LANES];
    n = n < 0 ? 0 : (n > SHOAL_LANES ? SHOAL_LANES : n);
    lane_storeu(t, a);
    if (n > 0) memcpy(p, t, (size_t)n * sizeof(float));
}

/* n >= SHOAL_LANES: a whole (unaligned) lane; fewer: the first n items only,
 * as lane_load_partial and lane_store_partial. For row-wise kernels run over
 * any [begin, end): the full lanes, then one partial lane. */
static inline lanef lane_load_n(const float* p, int32_t n)
{
    return n >= SHOAL_LANES ? lane_loadu(p) : lane_load_partial(p, n);
}

static inline void lane_store_n(float* p, lanef v, int32_t n)
{
    if (n >= SHOAL_LANES)
        lane_storeu(p, v);
    else
        lane_store_partial(p, v, n);
}

/* The lanes of a whose bit is set in `bits` (lane i: bit i; bits past
 * the lanes ignored), stored in lane order at p[0], p[1], ...; returns how
 * many. p must have room for a whole lane: past the count, what lands
 * there is unspecified. At 16 lanes a compress into a register and a
 * whole store (the compress with a memory operand is microcoded, and slow,
 * on some processors: AMD's Zen 4 and 5), a permute by a table of each
 * 8-bit mask's lanes at 8, one lane at a time at 4 and 1. */
#if SHOAL_LANES == 8
/* Nibble j: the lane of the j-th set bit of the index (0 past the last). */
static const uint32_t shoal__compress8[256] = {
    0x00000000u, 0x00000000u, 0x00000001u, 0x00000010u, 0x00000002u, 0x00000020u, 0x00000021u, 0x00000210u,
    0x00000003u, 0x00000030u, 0x00000031u, 0x00000310u, 0x00000032u, 0x00000320u, 0x00000321u, 0x00003210u,
    0x00000004u, 0x00000040u, 0x00000041u, 0x00000410u, 0x00000042u, 0x00000420u, 0x00000421u, 0x00004210u,
    0x00000043u, 0x00000430u, 0x00000431u, 0x00004310u, 0x00000432u, 0x00004320u, 0x00004321u, 0x00043210u,
    0x00000005u, 0x00000050u, 0x00000051u, 0x00000510u, 0x00000052u, 0x00000520u, 0x00000521u, 0x00005210u,
    0x00000053u, 0x00000530u, 0x00000531u, 0x00005310u, 0x00000532u, 0x00005320u, 0x00005321u, 0x00053210u,
    0x00000054u, 0x00000540u, 0x00000541u, 0x00005410u, 0x00000542u, 0x00005420u, 0x00005421u, 0x00054210u,
    0x00000543u, 0x00005430u, 0x00005431u, 0x00054310u, 0x00005432u, 0x00054320u, 0x00054321u, 0x00543210u,
    0x00000006u, 0x00000060u, 0x00000061u, 0x00000610u, 0x00000062u, 0x00000620u, 0x00000621u, 0x00006210u,
    0x00000063u, 0x00000630u, 0x00000631u, 0x00006310u, 0x00000632u, 0x00006320u, 0x00006321u, 0x00063210u,
    0x00000064u, 0x00000640u, 0x00000641u, 0x00006410u, 0x00000642u, 0x00006420u, 0x00006421u, 0x00064210u,
    0x00000643u, 0x00006430u, 0x00006431u, 0x00064310u, 0x00006432u, 0x00064320u, 0x00064321u, 0x00643210u,
    0x00000065u, 0x00000650u, 0x00000651u, 0x00006510u, 0x00000652u, 0x00006520u, 0x00006521u, 0x00065210u,
    0x00000653u, 0x00006530u, 0x00006531u, 0x00065310u, 0x00006532u, 0x00065320u, 0x00065321u, 0x00653210u,
    0x00000654u, 0x00006540u, 0x00006541u, 0x00065410u, 0x00006542u, 0x00065420u, 0x00065421u, 0x00654210u,
    0x00006543u, 0x00065430u, 0x00065431u, 0x00654310u, 0x00065432u, 0x00654320u, 0x00654321u, 0x06543210u,
    0x00000007u, 0x00000070u, 0x00000071u, 0x00000710u, 0x00000072u, 0x00000720u, 0x00000721u, 0x00007210u,
    0x00000073u, 0x00000730u, 0x00000731u, 0x00007310u, 0x00000732u, 0x00007320u, 0x00007321u, 0x00073210u,
    0x00000074u, 0x00000740u, 0x00000741u, 0x00007410u, 0x00000742u, 0x00007420u, 0x00007421u, 0x00074210u,
    0x00000743u, 0x00007430u, 0x00007431u, 0x00074310u, 0x00007432u, 0x00074320u, 0x00074321u, 0x00743210u,
    0x00000075u, 0x00000750u, 0x00000751u, 0x00007510u, 0x00000752u, 0x00007520u, 0x00007521u, 0x00075210u,
    0x00000753u, 0x00007530u, 0x00007531u, 0x00075310u, 0x00007532u, 0x00075320u, 0x00075321u, 0x00753210u,
    0x00000754u, 0x00007540u, 0x00007541u, 0x00075410u, 0x00007542u, 0x00075420u, 0x00075421u, 0x00754210u,
    0x00007543u, 0x00075430u, 0x00075431u, 0x00754310u, 0x00075432u, 0x00754320u, 0x00754321u, 0x07543210u,
    0x00000076u, 0x00000760u, 0x00000761u, 0x00007610u, 0x00000762u, 0x00007620u, 0x00007621u, 0x00076210u,
    0x00000763u, 0x00007630u, 0x00007631u, 0x00076310u, 0x00007632u, 0x00076320u, 0x00076321u, 0x00763210u,
    0x00000764u, 0x00007640u, 0x00007641u, 0x00076410u, 0x00007642u, 0x00076420u, 0x00076421u, 0x00764210u,
    0x00007643u, 0x00076430u, 0x00076431u, 0x00764310u, 0x00076432u, 0x00764320u, 0x00764321u, 0x07643210u,
    0x00000765u, 0x00007650u, 0x00007651u, 0x00076510u, 0x00007652u, 0x00076520u, 0x00076521u, 0x00765210u,
    0x00007653u, 0x00076530u, 0x00076531u, 0x00765310u, 0x00076532u, 0x00765320u, 0x00765321u, 0x07653210u,
    0x00007654u, 0x00076540u, 0x00076541u, 0x00765410u, 0x00076542u, 0x00765420u, 0x00765421u, 0x07654210u,
    0x00076543u, 0x00765430u, 0x00765431u, 0x07654310u, 0x00765432u, 0x07654320u, 0x07654321u, 0x76543210u,
};

/* The permutation that moves the lanes of an 8-bit mask to the front. */
static inline simde__m256i shoal__compress8_index(uint32_t bits)
{
    return simde_mm256_and_si256(
        simde_mm256_srlv_epi32(simde_mm256_set1_epi32((int32_t)shoal__compress8[bits]),
                               simde_mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
        simde_mm256_set1_epi32(7));
}
#endif

static inline int32_t lane_compress_store(float* p, lanef a, uint32_t bits)
{
    bits &= (uint32_t)((1ull << SHOAL_LANES) - 1);
#if SHOAL_LANES == 16
    simde_mm512_storeu_ps(p, simde_mm512_maskz_compress_ps((simde__mmask16)bits, a.v));
#elif SHOAL_LANES == 8
    const simde__m256i idx = shoal__compress8_index(bits);
    simde_mm256_storeu_ps(p, simde_mm256_permutevar8x32_ps(a.v, idx));
#else
    float t[SHOAL_LANES];
    lane_storeu(t, a);
    int32_t n = 0;
    for (int l = 0; l < SHOAL_LANES; ++l)
        if (bits >> l & 1u) p[n++] = t[l];
#endif
    return (int32_t)__builtin_popcount(bits);
}

/* lane_compress_store for a lane of int32. */
static inline int32_t lanei_compress_store(int32_t* p, lanei a, uint32_t bits)
{
    bits &= (uint32_t)((1ull << SHOAL_LANES) - 1);
#if SHOAL_LANES == 16
    simde_mm512_storeu_si512((void*)p, simde_mm512_maskz_compress_epi32((simde__mmask16)bits, a.v));
#elif SHOAL_LANES == 8
    const simde__m256i idx = shoal__compress8_index(bits);
    simde_mm256_storeu_si256((simde__m256i*)(void*)p, simde_mm256_permutevar8x32_epi32(a.v, idx));
#else
    int32_t t[SHOAL_LANES];
    lanei_storeu(t, a);
    int32_t n = 0;
    for (int l = 0; l < SHOAL_LANES; ++l)
        if (bits >> l & 1u) p[n++] = t[l];
#endif
    return (int32_t)__builtin_popcount(bits);
}

/* Four lanes stored as SHOAL_LANES records of four floats (an array of
 * structs): p[4 i + 0..3] = a[i], b[i], c[i], d[i]. A transpose, no
 * arithmetic: the same values in every width. */
static inline void lane_store_interleaved4(float* p, lanef a, lanef b, lanef c, lanef d)
{
#if SHOAL_LANES == 1
    p[0] = a.v;
    p[1] = b.v;
    p[2] = c.v;
    p[3] = d.v;
#else
    /* within each 128-bit block q: the records 4q + k in u_k */
#if SHOAL_LANES == 4
    const simde__m128 t0 = simde_mm_unpacklo_ps(a.v, b.v), t1 = simde_mm_unpackhi_ps(a.v, b.v);
    const simde__m128 t2 = simde_mm_unpacklo_ps(c.v, d.v), t3 = simde_mm_unpackhi_ps(c.v, d.v);
    simde_mm_storeu_ps(p, simde_mm_movelh_ps(t0, t2));
    simde_mm_storeu_ps(p + 4, simde_mm_movehl_ps(t2, t0));
    simde_mm_storeu_ps(p + 8, simde_mm_movelh_ps(t1, t3));
    simde_mm_storeu_ps(p + 12, simde_mm_movehl_ps(t3, t1));
#elif SHOAL_LANES == 8
    const simde__m256 t0 = simde_mm256_unpacklo_ps(a.v, b.v), t1 = simde_mm256_unpackhi_ps(a.v, b.v);
    const simde__m256 t2 = simde_mm256_unpacklo_ps(c.v, d.v), t3 = simde_mm256_unpackhi_ps(c.v, d.v);
    const simde__m256 u0 = simde_mm256_shuffle_ps(t0, t2, 0x44), u1 = simde_mm256_shuffle_ps(t0, t2, 0xEE);
    const simde__m256 u2 = simde_mm256_shuffle_ps(t1, t3, 0x44), u3 = simde_mm256_shuffle_ps(t1, t3, 0xEE);
    simde_mm256_storeu_ps(p, simde_mm256_permute2f128_ps(u0, u1, 0x20));
    simde_mm256_storeu_ps(p + 8, simde_mm256_permute2f128_ps(u2, u3, 0x20));
    simde_mm256_storeu_ps(p + 16, simde_mm256_permute2f128_ps(u0, u1, 0x31));
    simde_mm256_storeu_ps(p + 24, simde_mm256_permute2f128_ps(u2, u3, 0x31));
#else
    const simde__m512 t0 = simde_mm512_unpacklo_ps(a.v, b.v), t1 = simde_mm512_unpackhi_ps(a.v, b.v);
    const simde__m512 t2 = simde_mm512_unpacklo_ps(c.v, d.v), t3 = simde_mm512_unpackhi_ps(c.v, d.v);
    const simde__m512 u0 = simde_mm512_shuffle_ps(t0, t2, 0x44), u1 = simde_mm512_shuffle_ps(t0, t2, 0xEE);
    const simde__m512 u2 = simde_mm512_shuffle_ps(t1, t3, 0x44), u3 = simde_mm512_shuffle_ps(t1, t3, 0xEE);
    /* blocks of u0 hold records 0, 4, 8, 12; of u1 1, 5, 9, 13; ... */
    const simde__m512 v0 = simde_mm512_shuffle_f32x4(u0, u1, 0x44),
                      v1 = simde_mm512_shuffle_f32x4(u2, u3, 0x44);
    const simde__m512 v2 = simde_mm512_shuffle_f32x4(u0, u1, 0xEE),
                      v3 = simde_mm512_shuffle_f32x4(u2, u3, 0xEE);
    simde_mm512_storeu_ps(p, simde_mm512_shuffle_f32x4(v0, v1, 0x88));
    simde_mm512_storeu_ps(p + 16, simde_mm512_shuffle_f32x4(v0, v1, 0xDD));
    simde_mm512_storeu_ps(p + 32, simde_mm512_shuffle_f32x4(v2, v3, 0x88));
    simde_mm512_storeu_ps(p + 48, simde_mm512_shuffle_f32x4(v2, v3, 0xDD));
#endif
#endif
}

/* n rounded up to the padding unit: the element count to allocate for a lane
 * array of n items. */
static inline size_t lane_pad(size_t n)
{
    return (n + SHOAL_MAX_LANES - 1) / SHOAL_MAX_LANES * SHOAL_MAX_LANES;
}

#if defined(SHOAL__PSABI_PUSHED)
#pragma clang diagnostic pop
#endif

/* SIMDe's emulated 512-bit loops ask for "#pragma clang loop vectorize
 * (enable)"; when clang cannot honour it, it warns (-Wpass-failed) in the
 * kernel that inlined the loop. Emulated width 16 only: it is no bug. This
 * one stays off for the rest of the translation unit, since that is where the
 * warning lands. */
#if SHOAL_LANES == 16 && !defined(SIMDE_X86_AVX512F_NATIVE) && defined(__clang__)
#if defined(__has_warning)
#if __has_warning("-Wpass-failed")
#pragma clang diagnostic ignored "-Wpass-failed"
#endif
#endif
#endif

#endif /* SHOAL_LANES_H */
