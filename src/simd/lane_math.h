/* Math on lanes: sine and cosine together, atan2, angle wrapping, and vec3
 * and quaternion operations, for kernels that would otherwise call libm once
 * per agent (the controller and the integrator spent most of a step in
 * sinf, cosf and atan2f).
 *
 * Each function is written once on the operations of lanes.h, so every width
 * and the scalar build (SHOAL_LANES = 1) run the same sequence of IEEE
 * operations and give the same bits, lane for lane (a pinned digest in the
 * tests checks it). The fast_* wrappers run that same code on one value, for
 * scalar code that has to agree with a kernel exactly. Nothing depends on
 * libm's rounding, which differs between C libraries. lane_fma is unfused
 * unless SHOAL_LANE_FUSED is defined; a fused build gets other bits (within
 * the same bounds).
 *
 * Accuracy against double-precision libm (tests/test_lane_math.c asserts
 * the bounds; the measured worst cases are in brackets):
 *   lane_sincos      |error| <= 1.2e-7 [7.8e-8] for |x| <= 12867 (2^13 pi/2),
 *                    and <= 1 ulp [0.98] on [-pi/4, pi/4], where nothing is
 *                    reduced. Near the zeros of sin and cos outside that
 *                    range the absolute bound holds, not a few ulps. Past
 *                    12867 the reduction degrades; any finite x still gives
 *                    results in [-1, 1]; infinities and NaN give NaN.
 *                    sin(-0) = +0.
 *   lane_atan2       |error| <= 2.5e-7 rad [1.9e-7] for all finite (y, x),
 *                    denormals and values near FLT_MAX included; never NaN
 *                    for finite input. See the function for signed zeros.
 *   lane_wrap_angle  bit-exact inside [-VEC_PI, VEC_PI]; |error| <= 2.5e-7
 *                    [1.9e-7] outside it for |a| <= 51471 (2^13 2 pi).
 *
 * Methods: Cody-Waite reduction by pi/2 (or 2 pi) with a three-part constant
 * whose first two parts have so few significant bits that k * part is exact
 * for |k| < 2^13, then the minimax polynomials of Cephes' sinf/cosf/atanf
 * (S. L. Moshier, Cephes Math Library) on [-pi/4, pi/4] and [0, tan(pi/8)].
 * Quadrants come from float compares on k mod 4, so no integer lane
 * operations are needed. Costs per lane of 16 on AVX-512: sincos about 40
 * operations, atan2 about 35 and one divide. */
#ifndef SHOAL_LANE_MATH_H
#define SHOAL_LANE_MATH_H

#include "simd/lanes.h"
#include "simd/vec.h"

/* pi/2 = LM_PIO2_1 + LM_PIO2_2 + LM_PIO2_3 (+ 1.7e-15). The first part has
 * 8 significant bits and the second 11, so k * part is exact for |k| < 2^16
 * and 2^13; x - k * LM_PIO2_1 is exact by Sterbenz' lemma. Times 4 (exact),
 * the same parts split 2 pi. */
#define LM_PIO2_1 1.5703125f
#define LM_PIO2_2 4.837512969970703125e-4f
#define LM_PIO2_3 7.54978995489188216e-8f
#define LM_2_PI 0.636619772367581343076f  /* 2 / pi */
#define LM_1_2PI 0.159154943091895335769f /* 1 / (2 pi) */
#define LM_TAN_PI_8 0.414213562373095048802f
/* pi, pi/2 and pi/4 as the nearest float (_HI) plus the float nearest to
 * the rest (_LO). */
#define LM_PI_HI 3.14159274101257324219f
#define LM_PI_LO -8.74227765734758577e-8f
#define LM_PIO2_HI 1.57079637050628662109f
#define LM_PIO2_LO -4.37113882867379289e-8f
#define LM_PI_4_HI 0.785398185253143310547f
#define LM_PI_4_LO -2.18556941433689644e-8f

/* k mod 4 for an integral float k, exactly (k / 4 and the floor are exact;
 * so is the difference, an integer in [0, 3]). */
static inline lanef lane__mod4(lanef k)
{
    lanef q = lane_floor(lane_mul(k, lane_set1(0.25f)));
    return lane_sub(k, lane_mul(q, lane_set1(4.0f)));
}

/* sin and cos of r on about [-pi/4, pi/4] (z = r * r): Cephes' sinf and
 * cosf polynomials, minimax on that interval. */
static inline lanef lane__sin_poly(lanef r, lanef z)
{
    lanef p = lane_fma(lane_set1(-1.9515295891e-4f), z, lane_set1(8.3321608736e-3f));
    p = lane_fma(p, z, lane_set1(-1.6666654611e-1f));
    return lane_fma(lane_mul(p, z), r, r);
}

static inline lanef lane__cos_poly(lanef z)
{
    lanef p = lane_fma(lane_set1(2.443315711809948e-5f), z, lane_set1(-1.388731625493765e-3f));
    p = lane_fma(p, z, lane_set1(4.166664568298827e-2f));
    /* 1 - z/2 + z^2 p, summed small terms first. */
    lanef t = lane_sub(lane_mul(lane_mul(z, z), p), lane_mul(lane_set1(0.5f), z));
    return lane_add(t, lane_set1(1.0f));
}

/* sin(x) and cos(x) in every lane. */
static inline void lane_sincos(lanef x, lanef* s, lanef* c)
{
    /* k = nearest integer to x / (pi/2); r = x - k pi/2 in [-pi/4, pi/4]
     * (a hair more where x * 2/pi rounds across a half). */
    lanef k = lane_floor(lane_add(lane_mul(x, lane_set1(LM_2_PI)), lane_set1(0.5f)));
    lanef r = lane_sub(x, lane_mul(k, lane_set1(LM_PIO2_1)));
    r = lane_sub(r, lane_mul(k, lane_set1(LM_PIO2_2)));
    r = lane_sub(r, lane_mul(k, lane_set1(LM_PIO2_3)));
    /* A no-op within the accurate range; for huge |x|, where the reduction
     * means nothing, it keeps the polynomials in range so that results stay
     * in [-1, 1]. The operand order lets a NaN through (lanes.h:
     * max(a, b) = a > b ? a : b). */
    r = lane_min(lane_set1(1.0f), lane_max(lane_set1(-1.0f), r));
    lanef z = lane_mul(r, r);
    lanef sr = lane__sin_poly(r, z);
    lanef cr = lane__cos_poly(z);

    /* Quadrant q = k mod 4: sin x = sin r, cos r, -sin r, -cos r and
     * cos x = cos r, -sin r, -cos r, sin r for q = 0..3. */
    lanef q = lane__mod4(k);
    lanem q1 = lane_cmp_eq(q, lane_set1(1.0f));
    lanem q2 = lane_cmp_eq(q, lane_set1(2.0f));
    lanem q3 = lane_cmp_eq(q, lane_set1(3.0f));
    lanem swap = lane_mask_or(q1, q3);
    lanef sx = lane_select(swap, cr, sr);
    lanef cx = lane_select(swap, sr, cr);
    *s = lane_select(lane_mask_or(q2, q3), lane_neg(sx), sx);
    *c = lane_select(lane_mask_or(q1, q2), lane_neg(cx), cx);
}

/* atan2(y, x) in [-pi, pi], the angle of the vector (x, y) from +x.
 *
 * Signed zeros are read as +0, unlike C's atan2f: atan2(0, 0) = 0 for every
 * combination of signs, and atan2(-0, x < 0) = +pi where C gives -pi (the
 * same direction; headings are wrapped anyway). Infinite inputs:
 * atan2(+-inf, finite) and atan2(finite, +-inf) are right; both infinite or
 * any NaN gives NaN. */
static inline lanef lane_atan2(lanef y, lanef x)
{
    lanef ax = lane_abs(x), ay = lane_abs(y);
    /* Operand order matters for NaN (lanes.h: max(a, b) = a > b ? a : b):
     * a NaN in ay makes mx NaN, one in ax makes mn NaN, so it reaches t. */
    lanef mx = lane_max(ax, ay), mn = lane_min(ay, ax);
    /* Scale the largest finite values down so that mx + mn below cannot
     * overflow (exact: a power of two, far from the denormals). */
    lanef scale = lane_select(lane_cmp_gt(mx, lane_set1(1e37f)), lane_set1(0.25f), lane_set1(1.0f));
    mx = lane_mul(mx, scale);
    mn = lane_mul(mn, scale);
    /* atan(mn/mx) for mn/mx in [0, 1]; above tan(pi/8) use
     * atan(t) = pi/4 - atan((1 - t) / (1 + t)), with the quotient taken
     * from mx and mn directly so that one division serves both. */
    lanem big = lane_cmp_gt(mn, lane_mul(lane_set1(LM_TAN_PI_8), mx));
    lanef num = lane_select(big, lane_sub(mx, mn), mn);
    lanef den = lane_select(big, lane_add(mx, mn), mx);
    /* (0, 0): 0 / 1 = 0. */
    den = lane_select(lane_cmp_eq(den, lane_zero()), lane_set1(1.0f), den);
    lanef t = lane_div(num, den);
    lanef z = lane_mul(t, t);
    /* Cephes' atanf polynomial, minimax on [0, tan(pi/8)]. */
    lanef p = lane_fma(lane_set1(8.05374449538e-2f), z, lane_set1(-1.38776856032e-1f));
    p = lane_fma(p, z, lane_set1(1.99777106478e-1f));
    p = lane_fma(p, z, lane_set1(-3.33329491539e-1f));
    lanef a = lane_fma(lane_mul(p, z), t, t);
    a = lane_select(big, lane_add(lane_sub(lane_set1(LM_PI_4_LO), a), lane_set1(LM_PI_4_HI)), a);
    /* Octant to angle: pi/2 - a above the diagonal, pi - a left of the y
     * axis (pi/2 + a for both), negated below the x axis. The base angle is
     * added last with its rounding error (_LO) first, so the result is
     * rounded about once rather than once per reflection. */
    lanem swap = lane_cmp_gt(ay, ax);
    lanem left = lane_cmp_lt(x, lane_zero());
    a = lane_select(swap, lane_neg(a), a);
    a = lane_select(left, lane_neg(a), a);
    lanef base_hi =
        lane_select(swap, lane_set1(LM_PIO2_HI), lane_select(left, lane_set1(LM_PI_HI), lane_zero()));
    lanef base_lo =
        lane_select(swap, lane_set1(LM_PIO2_LO), lane_select(left, lane_set1(LM_PI_LO), lane_zero()));
    a = lane_add(lane_add(a, base_lo), base_hi);
    return lane_select(lane_cmp_lt(y, lane_zero()), lane_neg(a), a);
}

/* a wrapped to [-VEC_PI, VEC_PI], like vec.h's angle_wrap: angles already in
 * that range come back unchanged, bit for bit; NaN and infinities give 0.
 * Others are reduced by the nearest multiple of 2 pi in float (angle_wrap
 * uses double and may differ by an ulp). */
static inline lanef lane_wrap_angle(lanef a)
{
    lanef k = lane_floor(lane_add(lane_mul(a, lane_set1(LM_1_2PI)), lane_set1(0.5f)));
    lanef r = lane_sub(a, lane_mul(k, lane_set1(4.0f * LM_PIO2_1)));
    r = lane_sub(r, lane_mul(k, lane_set1(4.0f * LM_PIO2_2)));
    r = lane_sub(r, lane_mul(k, lane_set1(4.0f * LM_PIO2_3)));
    /* a / (2 pi) is rounded, so for large |a| k can be one off where a is
     * near an odd multiple of pi (r then just past +-pi): a second pass with
     * r, where k is 0 or +-1, fixes that. A hair outside the range after it
     * is float rounding and is clamped. */
    k = lane_floor(lane_add(lane_mul(r, lane_set1(LM_1_2PI)), lane_set1(0.5f)));
    r = lane_sub(r, lane_mul(k, lane_set1(4.0f * LM_PIO2_1)));
    r = lane_sub(r, lane_mul(k, lane_set1(4.0f * LM_PIO2_2)));
    r = lane_sub(r, lane_mul(k, lane_set1(4.0f * LM_PIO2_3)));
    r = lane_clamp(r, lane_set1(-VEC_PI), lane_set1(VEC_PI));
    lanef aa = lane_abs(a);
    r = lane_select(lane_cmp_lt(aa, lane_set1(INFINITY)), r, lane_zero());
    return lane_select(lane_cmp_le(aa, lane_set1(VEC_PI)), a, r);
}

/* ------------------------------------------------------------------------ */
/* vec3 and quaternions on lanes: vec.h's formulas, one agent per lane.      */
/* ------------------------------------------------------------------------ */

typedef struct lanev3 {
    lanef x, y, z;
} lanev3;
typedef struct laneq {
    lanef w, x, y, z;
} laneq; /* (w, x, y, z), as vec.h */

static inline lanev3 lanev3_add(lanev3 a, lanev3 b)
{
    return (lanev3){lane_add(a.x, b.x), lane_add(a.y, b.y), lane_add(a.z, b.z)};
}
static inline lanev3 lanev3_sub(lanev3 a, lanev3 b)
{
    return (lanev3){lane_sub(a.x, b.x), lane_sub(a.y, b.y), lane_sub(a.z, b.z)};
}
static inline lanev3 lanev3_scale(lanev3 a, lanef s)
{
    return (lanev3){lane_mul(a.x, s), lane_mul(a.y, s), lane_mul(a.z, s)};
}
static inline lanef lanev3_dot(lanev3 a, lanev3 b)
{
    return lane_add(lane_add(lane_mul(a.x, b.x), lane_mul(a.y, b.y)), lane_mul(a.z, b.z));
}
static inline lanev3 lanev3_cross(lanev3 a, lanev3 b)
{
    return (lanev3){lane_sub(lane_mul(a.y, b.z), lane_mul(a.z, b.y)),
                    lane_sub(lane_mul(a.z, b.x), lane_mul(a.x, b.z)),
                    lane_sub(lane_mul(a.x, b.y), lane_mul(a.y, b.x))};
}
static inline lanev3 lanev3_select(lanem m, lanev3 a, lanev3 b)
{
    return (lanev3){lane_select(m, a.x, b.x), lane_select(m, a.y, b.y), lane_select(m, a.z, b.z)};
}

/* a shortened to at most max_len (>= 0), direction kept, as
 * vec3_clamp_length but with one division and three products: the length
 * comes out within a few ulps of max_len. Lanes that need no clamp divide by
 * 1, so zero padding lanes stay finite. Unlike vec3_clamp_length, which
 * rescales, a vector whose squared length overflows (|a| > 1.8e19) comes
 * out as zero. */
static inline lanev3 lanev3_clamp_length(lanev3 a, lanef max_len)
{
    lanef len_sq = lanev3_dot(a, a);
    lanem over = lane_cmp_gt(len_sq, lane_mul(max_len, max_len));
    lanef k = lane_div(max_len, lane_sqrt(lane_select(over, len_sq, lane_set1(1.0f))));
    return lanev3_select(over, lanev3_scale(a, k), a);
}

static inline laneq laneq_conj(laneq q) { return (laneq){q.w, lane_neg(q.x), lane_neg(q.y), lane_neg(q.z)}; }

/* Hamilton product, as quat_mul. */
static inline laneq laneq_mul(laneq a, laneq b)
{
    laneq r;
    r.w = lane_sub(lane_sub(lane_sub(lane_mul(a.w, b.w), lane_mul(a.x, b.x)), lane_mul(a.y, b.y)),
                   lane_mul(a.z, b.z));
    r.x = lane_sub(lane_add(lane_add(lane_mul(a.w, b.x), lane_mul(a.x, b.w)), lane_mul(a.y, b.z)),
                   lane_mul(a.z, b.y));
    r.y = lane_add(lane_add(lane_sub(lane_mul(a.w, b.y), lane_mul(a.x, b.z)), lane_mul(a.y, b.w)),
                   lane_mul(a.z, b.x));
    r.z = lane_add(lane_sub(lane_add(lane_mul(a.w, b.z), lane_mul(a.x, b.y)), lane_mul(a.y, b.x)),
                   lane_mul(a.z, b.w));
    return r;
}

/* q v q* for unit q, as quat_rotate: v + w t + u x t with t = 2 u x v. */
static inline lanev3 laneq_rotate(laneq q, lanev3 v)
{
    lanev3 u = {q.x, q.y, q.z};
    lanev3 t = lanev3_scale(lanev3_cross(u, v), lane_set1(2.0f));
    return lanev3_add(lanev3_add(v, lanev3_scale(t, q.w)), lanev3_cross(u, t));
}

/* q* v q: a world vector in the body frame. */
static inline lanev3 laneq_unrotate(laneq q, lanev3 v) { return laneq_rotate(laneq_conj(q), v); }

/* q / |q|, or the identity where |q| is 0, NaN or infinite (as
 * quat_normalize, but one division and four products). */
static inline laneq laneq_normalize(laneq q)
{
    lanef len = lane_sqrt(lane_add(
        lane_add(lane_add(lane_mul(q.w, q.w), lane_mul(q.x, q.x)), lane_mul(q.y, q.y)), lane_mul(q.z, q.z)));
    lanem ok = lane_mask_and(lane_cmp_gt(len, lane_zero()), lane_cmp_lt(len, lane_set1(INFINITY)));
    lanef inv = lane_div(lane_set1(1.0f), lane_select(ok, len, lane_set1(1.0f)));
    return (laneq){lane_select(ok, lane_mul(q.w, inv), lane_set1(1.0f)),
                   lane_select(ok, lane_mul(q.x, inv), lane_zero()),
                   lane_select(ok, lane_mul(q.y, inv), lane_zero()),
                   lane_select(ok, lane_mul(q.z, inv), lane_zero())};
}

/* ------------------------------------------------------------------------ */
/* One value through the lane code: the same bits as any lane of a kernel.  */
/* ------------------------------------------------------------------------ */

static inline void fast_sincosf(float x, float* s, float* c)
{
    lanef ls, lc;
    lane_sincos(lane_set1(x), &ls, &lc);
    *s = lane_extract(ls, 0);
    *c = lane_extract(lc, 0);
}

static inline float fast_atan2f(float y, float x)
{
    return lane_extract(lane_atan2(lane_set1(y), lane_set1(x)), 0);
}

static inline float fast_wrap_anglef(float a) { return lane_extract(lane_wrap_angle(lane_set1(a)), 0); }

#endif /* SHOAL_LANE_MATH_H */
