/* lane_math.h against double-precision libm, and the lane kernels of the
 * controller and the integrator against a plain scalar reference.
 *
 * Bounds asserted (lane_math.h states them):
 *   sincos  |error| <= 1.2e-7 for |x| <= 12867, and at most 1 ulp of the
 *           result on [-pi/4, pi/4] (before any reduction);
 *   atan2   |error| <= 2.5e-7 rad for every finite (y, x);
 *   wrap    in-range angles unchanged, others within 2.5e-7 of the true
 *           remainder for |a| <= 51471, always in [-VEC_PI, VEC_PI].
 * The fast_* wrappers must give the same bits as the lanes, and a digest of
 * many results is pinned so that every build (SIMD widths, scalar) is seen
 * to compute the same bits. Then the controller and integrator kernels are
 * compared with the scalar libm code they replaced.
 *
 * Failures are counted and asserted once per check: Criterion reports every
 * assertion to its parent process, too slow for a million points. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/rng.h"
#include "ecs/world.h"
#include "simd/lane_math.h"
#include "modules/agent.h"
#include "modules/motion/motion.h"

#include "support.h"

#define PI_D 3.14159265358979323846

/* The start of a test's stream of inputs (rng_splitmix64, uniform() of
 * support.h). These streams were first drawn by a generator that advanced
 * its state before mixing it with rng_mix64, which adds the gamma again:
 * one gamma ahead of rng_splitmix64 from the same literal. Starting one
 * gamma on keeps every input, and so every measured error, as it was. */
static uint64_t lane_seed(uint64_t n) { return n + 0x9e3779b97f4a7c15ull; }

/* A finite float with random bits (any exponent, denormals included). */
static float random_finite(uint64_t* s)
{
    for (;;) {
        uint32_t bits = (uint32_t)rng_splitmix64(s);
        float f;
        memcpy(&f, &bits, sizeof f);
        if (isfinite(f)) return f;
    }
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Distance of an angle error from 0 modulo 2 pi. */
static double angle_err(double got, double want)
{
    double e = fabs(got - want);
    return e > PI_D ? fabs(e - 2.0 * PI_D) : e;
}

/* ulp of a float result near |want| (the spacing at its binade). */
static double ulp_of(double want)
{
    int e;
    frexp(fabs(want), &e);
    if (want == 0.0) return ldexp(1.0, -149);
    double u = ldexp(1.0, e - 24);
    return u < ldexp(1.0, -149) ? ldexp(1.0, -149) : u;
}

/* ---- sincos --------------------------------------------------------------- */

typedef struct err_stats {
    double worst;
    float at_a, at_b;
    long bad;
} err_stats_t;

static void note(err_stats_t* st, double e, double bound, float a, float b)
{
    if (!(e <= bound)) st->bad++;
    if (!(e <= st->worst)) {
        st->worst = e;
        st->at_a = a;
        st->at_b = b;
    }
}

/* Runs lane_sincos over xs[0, n) (n a multiple of SHOAL_LANES), checks
 * both results against libm in double with an absolute bound, and the
 * wrapper against the lanes bit for bit. */
static void check_sincos(const float* xs, int n, double bound, double ulp_bound, const char* what)
{
    err_stats_t es = {0}, ec = {0}, us = {0}, uc = {0};
    long mismatch = 0, outside = 0;
    for (int i = 0; i < n; i += SHOAL_LANES) {
        lanef s, c;
        lane_sincos(lane_loadu(xs + i), &s, &c);
        float so[SHOAL_LANES], co[SHOAL_LANES];
        lane_storeu(so, s);
        lane_storeu(co, c);
        for (int l = 0; l < SHOAL_LANES; ++l) {
            double x = xs[i + l], ws = sin(x), wc = cos(x);
            note(&es, fabs(so[l] - ws), bound, xs[i + l], 0);
            note(&ec, fabs(co[l] - wc), bound, xs[i + l], 0);
            if (ulp_bound > 0) {
                note(&us, fabs(so[l] - ws) / ulp_of(ws), ulp_bound, xs[i + l], 0);
                note(&uc, fabs(co[l] - wc) / ulp_of(wc), ulp_bound, xs[i + l], 0);
            }
            if (!(fabsf(so[l]) <= 1.0f && fabsf(co[l]) <= 1.0f)) outside++;
            float fs, fc;
            fast_sincosf(xs[i + l], &fs, &fc);
            if (bits_of(fs) != bits_of(so[l]) || bits_of(fc) != bits_of(co[l])) mismatch++;
        }
    }
    cr_assert_eq(es.bad, 0, "%s: sin off by %.3g at x = %.9g (%ld points over %.3g)", what, es.worst, es.at_a,
                 es.bad, bound);
    cr_assert_eq(ec.bad, 0, "%s: cos off by %.3g at x = %.9g (%ld points over %.3g)", what, ec.worst, ec.at_a,
                 ec.bad, bound);
    cr_assert_eq(us.bad, 0, "%s: sin off by %.3g ulp at x = %.9g", what, us.worst, us.at_a);
    cr_assert_eq(uc.bad, 0, "%s: cos off by %.3g ulp at x = %.9g", what, uc.worst, uc.at_a);
    cr_assert_eq(outside, 0, "%s: %ld results outside [-1, 1]", what, outside);
    cr_assert_eq(mismatch, 0, "%s: fast_sincosf differs from lane_sincos at %ld points", what, mismatch);
}

#define N_GRID (1 << 20)
static float grid[N_GRID];

Test(lane_math, sincos_dense_grid_over_four_turns)
{
    /* [-4 pi, 4 pi] in even steps: every quadrant many times over. */
    for (int i = 0; i < N_GRID; ++i) grid[i] = (float)(-4.0 * PI_D + 8.0 * PI_D * i / (N_GRID - 1));
    check_sincos(grid, N_GRID, 1.2e-7, 0, "grid");
}

Test(lane_math, sincos_random_and_large)
{
    uint64_t s = lane_seed(11);
    for (int i = 0; i < N_GRID; ++i) {
        switch (i & 3) {
        case 0: grid[i] = uniform(&s, -4.0f * VEC_PI, 4.0f * VEC_PI); break;
        case 1: grid[i] = uniform(&s, -12867.0f, 12867.0f); break;
        case 2: grid[i] = uniform(&s, -100.0f, 100.0f); break;
        default:
            grid[i] = ldexpf(uniform(&s, 1.0f, 2.0f), (int)(rng_splitmix64(&s) % 150) - 149) *
                      (i & 4 ? -1.0f : 1.0f); /* tiny, to the denormals */
        }
    }
    check_sincos(grid, N_GRID, 1.2e-7, 0, "random");
}

Test(lane_math, sincos_principal_range_in_ulps)
{
    /* No reduction on [-pi/4, pi/4]: relative accuracy, down to tiny x. */
    uint64_t s = lane_seed(12);
    for (int i = 0; i < N_GRID; ++i) {
        grid[i] = i & 1 ? uniform(&s, -LM_PI_4_HI, LM_PI_4_HI)
                        : ldexpf(uniform(&s, 1.0f, 2.0f), -(int)(rng_splitmix64(&s) % 120)) *
                              (i & 2 ? -1.0f : 1.0f);
        if (fabsf(grid[i]) > 0.785398f) grid[i] = 0.5f;
    }
    check_sincos(grid, N_GRID, 1.2e-7, 1.0, "principal");
}

Test(lane_math, sincos_edges)
{
    /* Multiples of pi/4 and the floats around them, where quadrants switch
     * and where sin or cos crosses zero. */
    static float xs[4096];
    int n = 0;
    for (int k = -16; k <= 16 && n + 5 <= 4096; ++k) {
        float x = (float)(k * PI_D / 4.0);
        xs[n++] = x;
        xs[n++] = nextafterf(x, INFINITY);
        xs[n++] = nextafterf(x, -INFINITY);
        xs[n++] = nextafterf(nextafterf(x, INFINITY), INFINITY);
        xs[n++] = nextafterf(nextafterf(x, -INFINITY), -INFINITY);
    }
    const float special[] = {0.0f,    -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN,  1e-20f,
                             -1e-20f, 1.0f,  -1.0f,        12867.0f,      -12867.0f};
    for (size_t k = 0; k < sizeof special / sizeof special[0]; ++k) xs[n++] = special[k];
    while (n % SHOAL_LANES) xs[n++] = 0.25f;
    check_sincos(xs, n, 1.2e-7, 0, "edges");

    float s, c;
    fast_sincosf(0.0f, &s, &c);
    cr_assert(s == 0.0f && c == 1.0f, "sincos(0) = (%a, %a)", s, c);
    fast_sincosf(VEC_HALF_PI, &s, &c);
    cr_assert(s == 1.0f, "sin(pi/2) = %a", s);
}

Test(lane_math, sincos_huge_finite_stays_in_range_and_nan_propagates)
{
    uint64_t s = lane_seed(13);
    long bad = 0;
    for (int i = 0; i < 100000; ++i) {
        float x = random_finite(&s), sn, cs;
        fast_sincosf(x, &sn, &cs);
        if (!(fabsf(sn) <= 1.0f && fabsf(cs) <= 1.0f)) bad++;
    }
    cr_assert_eq(bad, 0, "%ld finite inputs gave results outside [-1, 1]", bad);
    const float bad_in[] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; ++k) {
        float sn, cs;
        fast_sincosf(bad_in[k], &sn, &cs);
        cr_assert(isnan(sn) && isnan(cs), "sincos(%g) = (%g, %g)", bad_in[k], sn, cs);
    }
}

/* ---- atan2 ---------------------------------------------------------------- */

static void check_atan2(const float* ys, const float* xs, int n, double bound, const char* what)
{
    err_stats_t ea = {0};
    long mismatch = 0, nan = 0;
    for (int i = 0; i < n; i += SHOAL_LANES) {
        float ao[SHOAL_LANES];
        lane_storeu(ao, lane_atan2(lane_loadu(ys + i), lane_loadu(xs + i)));
        for (int l = 0; l < SHOAL_LANES; ++l) {
            float y = ys[i + l], x = xs[i + l];
            if (isnan(ao[l]) || fabsf(ao[l]) > VEC_PI) nan++;
            /* Signed zeros read as +0 (lane_math.h). */
            double want = atan2(y == 0.0f ? 0.0 : (double)y, x == 0.0f ? 0.0 : (double)x);
            note(&ea, fabs(ao[l] - want), bound, y, x);
            if (bits_of(fast_atan2f(y, x)) != bits_of(ao[l])) mismatch++;
        }
    }
    cr_assert_eq(nan, 0, "%s: %ld NaN or out-of-range results", what, nan);
    cr_assert_eq(ea.bad, 0, "%s: off by %.3g at (y, x) = (%.9g, %.9g) (%ld points over %.3g)", what, ea.worst,
                 ea.at_a, ea.at_b, ea.bad, bound);
    cr_assert_eq(mismatch, 0, "%s: fast_atan2f differs from lane_atan2 at %ld points", what, mismatch);
}

static float grid_y[N_GRID];

Test(lane_math, atan2_dense_circle_at_many_scales)
{
    /* Every direction, on circles from the denormals to near FLT_MAX. */
    const double radii[] = {1e-44, 1e-38, 1e-20, 1e-3, 1.0, 7.5, 1e4, 1e20, 1e38};
    const int per = N_GRID / 9 / SHOAL_MAX_LANES * SHOAL_MAX_LANES;
    int n = 0;
    for (int r = 0; r < 9; ++r) {
        for (int i = 0; i < per; ++i, ++n) {
            double th = -PI_D + 2.0 * PI_D * i / per;
            grid_y[n] = (float)(radii[r] * sin(th));
            grid[n] = (float)(radii[r] * cos(th));
        }
    }
    check_atan2(grid_y, grid, n, 2.5e-7, "circle");
}

Test(lane_math, atan2_random_finite)
{
    uint64_t s = lane_seed(21);
    for (int i = 0; i < N_GRID; ++i) {
        if (i & 1) {
            grid_y[i] = random_finite(&s);
            grid[i] = random_finite(&s);
        } else {
            grid_y[i] = uniform(&s, -100.0f, 100.0f);
            grid[i] = uniform(&s, -100.0f, 100.0f);
        }
    }
    check_atan2(grid_y, grid, N_GRID, 2.5e-7, "random");
}

Test(lane_math, atan2_edges_and_quadrants)
{
    const float v[] = {0.0f,
                       -0.0f,
                       FLT_TRUE_MIN,
                       -FLT_TRUE_MIN,
                       FLT_MIN,
                       -FLT_MIN,
                       1e-30f,
                       -1e-30f,
                       0.5f,
                       -0.5f,
                       1.0f,
                       -1.0f,
                       0.41421356f,
                       2.4142137f,
                       -2.4142137f,
                       3.0f,
                       1e30f,
                       -1e30f,
                       FLT_MAX,
                       -FLT_MAX,
                       0.5f * FLT_MAX,
                       -0.5f * FLT_MAX,
                       nextafterf(1.0f, 2.0f),
                       nextafterf(1.0f, 0.0f)};
    enum { NV = sizeof v / sizeof v[0] };
    static float ys[NV * NV + SHOAL_MAX_LANES], xs[NV * NV + SHOAL_MAX_LANES];
    int n = 0;
    for (int i = 0; i < NV; ++i)
        for (int j = 0; j < NV; ++j, ++n) {
            ys[n] = v[i];
            xs[n] = v[j];
        }
    while (n % SHOAL_LANES) ys[n] = xs[n] = 1.0f, n++;
    check_atan2(ys, xs, n, 2.5e-7, "edges");

    /* The documented values, exactly. */
    cr_assert_eq(fast_atan2f(0.0f, 0.0f), 0.0f);
    cr_assert_eq(fast_atan2f(-0.0f, 0.0f), 0.0f);
    cr_assert_eq(fast_atan2f(0.0f, -0.0f), 0.0f);
    cr_assert_eq(fast_atan2f(-0.0f, -0.0f), 0.0f);
    cr_assert_eq(fast_atan2f(0.0f, -2.0f), VEC_PI);
    cr_assert_eq(fast_atan2f(-0.0f, -2.0f), VEC_PI, "y = -0 reads as +0");
    cr_assert_eq(fast_atan2f(0.0f, 2.0f), 0.0f);
    cr_assert_eq(fast_atan2f(3.0f, 0.0f), VEC_HALF_PI);
    cr_assert_eq(fast_atan2f(-3.0f, -0.0f), -VEC_HALF_PI);
    cr_assert_eq(fast_atan2f(1.0f, 1.0f), LM_PI_4_HI);
    cr_assert_eq(fast_atan2f(-1.0f, -1.0f), -(float)(0.75 * PI_D));
    /* Infinities against finite values; both infinite or NaN give NaN. */
    cr_assert_eq(fast_atan2f(INFINITY, 1.0f), VEC_HALF_PI);
    cr_assert_eq(fast_atan2f(-INFINITY, -1.0f), -VEC_HALF_PI);
    cr_assert_eq(fast_atan2f(1.0f, INFINITY), 0.0f);
    cr_assert_eq(fast_atan2f(1.0f, -INFINITY), VEC_PI);
    cr_assert(isnan(fast_atan2f(INFINITY, INFINITY)));
    cr_assert(isnan(fast_atan2f(NAN, 1.0f)));
    cr_assert(isnan(fast_atan2f(1.0f, NAN)));
}

/* ---- wrap ----------------------------------------------------------------- */

Test(lane_math, wrap_angle)
{
    uint64_t s = lane_seed(31);
    for (int i = 0; i < N_GRID; ++i) {
        switch (i % 4) {
        case 0: grid[i] = uniform(&s, -VEC_PI, VEC_PI); break;
        case 1: grid[i] = uniform(&s, -3.0f * VEC_PI, 3.0f * VEC_PI); break;
        case 2: grid[i] = uniform(&s, -51471.0f, 51471.0f); break;
        default: {
            /* Around odd multiples of pi, where the rounded quotient can
             * pick the wrong turn. */
            float m = (float)(2 * (int)(rng_splitmix64(&s) % 16384) - 16383);
            grid[i] = (float)(m * PI_D) + uniform(&s, -1e-3f, 1e-3f) * fabsf(m);
        }
        }
    }
    err_stats_t ew = {0};
    long moved = 0, outside = 0, mismatch = 0, vs_scalar = 0;
    for (int i = 0; i < N_GRID; i += SHOAL_LANES) {
        float out[SHOAL_LANES];
        lane_storeu(out, lane_wrap_angle(lane_loadu(grid + i)));
        for (int l = 0; l < SHOAL_LANES; ++l) {
            float a = grid[i + l];
            if (!(out[l] >= -VEC_PI && out[l] <= VEC_PI)) outside++;
            if (a >= -VEC_PI && a <= VEC_PI && bits_of(out[l]) != bits_of(a)) moved++;
            note(&ew, angle_err(out[l], remainder((double)a, 2.0 * PI_D)), 2.5e-7, a, 0);
            if (bits_of(fast_wrap_anglef(a)) != bits_of(out[l])) mismatch++;
            if (angle_err(out[l], angle_wrap(a)) > 2.5e-7) vs_scalar++;
        }
    }
    cr_assert_eq(outside, 0, "%ld results outside [-VEC_PI, VEC_PI]", outside);
    cr_assert_eq(moved, 0, "%ld in-range angles changed", moved);
    cr_assert_eq(ew.bad, 0, "off by %.3g at %.9g (%ld points)", ew.worst, ew.at_a, ew.bad);
    cr_assert_eq(mismatch, 0, "fast_wrap_anglef differs from lane_wrap_angle at %ld points", mismatch);
    cr_assert_eq(vs_scalar, 0, "%ld points differ from vec.h's angle_wrap", vs_scalar);
    cr_assert_eq(fast_wrap_anglef(NAN), 0.0f);
    cr_assert_eq(fast_wrap_anglef(INFINITY), 0.0f);
    cr_assert_eq(fast_wrap_anglef(-INFINITY), 0.0f);
    cr_assert_eq(fast_wrap_anglef(VEC_PI), VEC_PI);
    cr_assert_eq(fast_wrap_anglef(-VEC_PI), -VEC_PI);
}

/* ---- same bits in every build --------------------------------------------- */

/* FNV-1a over the result bits of a fixed set of inputs. The value is pinned:
 * the scalar build and every SIMD width must reproduce it, since the lane
 * operations are IEEE-exact and lane_math.h uses nothing else. A change to
 * lane_math.h's arithmetic changes it on purpose: update the constant then. */
Test(lane_math, same_bits_in_every_build)
{
    enum { N = 65536 };
    static float x[N], y[N], out[4][N];
    uint64_t s = lane_seed(41);
    for (int i = 0; i < N; ++i) {
        x[i] = i & 1 ? uniform(&s, -40.0f, 40.0f) : random_finite(&s);
        y[i] = uniform(&s, -40.0f, 40.0f);
    }
    for (int i = 0; i < N; i += SHOAL_LANES) {
        lanef sn, cs;
        lane_sincos(lane_loadu(x + i), &sn, &cs);
        lane_storeu(out[0] + i, sn);
        lane_storeu(out[1] + i, cs);
        lane_storeu(out[2] + i, lane_atan2(lane_loadu(y + i), lane_loadu(x + i)));
        lane_storeu(out[3] + i, lane_wrap_angle(lane_loadu(x + i)));
    }
    /* Hashed in element order, so the width cannot change the order. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (int k = 0; k < 4; ++k) {
        for (int i = 0; i < N; ++i) {
            uint32_t b = bits_of(out[k][i]);
            if (isnan(out[k][i])) b = 0x7fc00000u; /* NaN payloads are not part of the contract */
            h = (h ^ b) * 0x100000001b3ull;
        }
    }
#if defined(SHOAL_LANE_FUSED)
    cr_log_info("fused build: digest %016llx not compared", (unsigned long long)h);
#else
    cr_assert_eq(h, 0x1429044b1c26f063ull, "digest %016llx (width %d)", (unsigned long long)h, SHOAL_LANES);
#endif
}

/* ---- the kernels against a scalar reference -------------------------------- */

/* The controller and integrator as they were written before the lane
 * kernels: plain scalar code on libm, one agent at a time. */
static float clampf(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; }

typedef struct ref_out {
    float f[3], tau[3];
    int angle_ambiguous; /* heading error within 1e-3 of pi: its sign may differ */
    float gain;          /* m min(K_v, 1/dt): force per m/s of velocity error */
    float speed_tol;     /* m/s: allowed difference of the velocity error */
    float angle_tol;     /* rad: allowed difference of the heading error */
} ref_out_t;

/* Float rounding and the lane trig (~1e-7 relative) on the velocities and
 * the speed command. */
static float speed_tolerance(float speed, float vmax) { return 1e-6f * (1.0f + speed + vmax); }

static ref_out_t ref_control_2d(world_t* w, int i, float dt)
{
    const float inv_dt = 1.0f / dt;
    float dx = AGENT_F(w, AC_DESIRED_X)[i], dy = AGENT_F(w, AC_DESIRED_Y)[i];
    float h = AGENT_F(w, AC_HEADING)[i];
    float vx = AGENT_F(w, AC_VEL_X)[i], vy = AGENT_F(w, AC_VEL_Y)[i];
    float vd = sqrtf(dx * dx + dy * dy);
    float cs = cosf(h), sn = sinf(h);
    float err = 0.0f, fwd = 0.0f;
    if (vd > STEER_HOLD_SPEED) {
        float ex = (cs * dx + sn * dy) / vd;
        float ey = (cs * dy - sn * dx) / vd;
        err = atan2f(ey, ex);
        fwd = fminf(vd, AGENT_F(w, AC_MAX_SPEED)[i]) * fminf(1.0f, fmaxf(0.0f, 1.0f + ex));
    }
    float u = cs * vx + sn * vy, v = -sn * vx + cs * vy;
    float g = AGENT_F(w, AC_MASS)[i] * fminf(AGENT_F(w, AC_SPEED_GAIN)[i], inv_dt);
    float fbx = g * (fwd - u), fby = g * (0.0f - v);
    float fn = sqrtf(fbx * fbx + fby * fby), fmax = AGENT_F(w, AC_MAX_FORCE)[i];
    if (fn > fmax) {
        fbx *= fmax / fn;
        fby *= fmax / fn;
    }
    float tmax = AGENT_F(w, AC_MAX_TORQUE)[i];
    float tau = AGENT_F(w, AC_INERTIA)[i] *
                (AGENT_F(w, AC_HEADING_GAIN)[i] * err -
                 fminf(AGENT_F(w, AC_TURN_DAMPING)[i], inv_dt) * AGENT_F(w, AC_OMEGA_Z)[i]);
    ref_out_t r = {.f = {cs * fbx - sn * fby, sn * fbx + cs * fby, 0.0f},
                   .tau = {0.0f, 0.0f, clampf(tau, -tmax, tmax)},
                   .angle_ambiguous = fabsf(err) > VEC_PI - 1e-3f,
                   .gain = g,
                   .speed_tol = speed_tolerance(sqrtf(vx * vx + vy * vy), AGENT_F(w, AC_MAX_SPEED)[i]),
                   .angle_tol = 2e-6f};
    return r;
}

static quat row_quat(world_t* w, int i)
{
    return (quat){AGENT_F(w, AC_QW)[i], AGENT_F(w, AC_QX)[i], AGENT_F(w, AC_QY)[i], AGENT_F(w, AC_QZ)[i]};
}

static vec3 row_vec(world_t* w, int cx, int i)
{
    return (vec3){AGENT_F(w, cx)[i], AGENT_F(w, cx + 1)[i], AGENT_F(w, cx + 2)[i]};
}

static ref_out_t ref_control_3d(world_t* w, int i, float dt)
{
    const float inv_dt = 1.0f / dt;
    quat q = row_quat(w, i);
    vec3 vel = row_vec(w, AC_VEL_X, i), omega = row_vec(w, AC_OMEGA_X, i);
    vec3 desired = row_vec(w, AC_DESIRED_X, i);
    float vd = vec3_length(desired);
    vec3 rot = {0.0f, 0.0f, 0.0f};
    float fwd = 0.0f, angle = 0.0f;
    if (vd > STEER_HOLD_SPEED) {
        vec3 d = vec3_scale(desired, 1.0f / vd);
        quat qd = quat_from_yaw_pitch_roll(atan2f(d.y, d.x), asinf(clampf(d.z, -1.0f, 1.0f)), 0.0f);
        vec3 axis;
        angle = quat_to_axis_angle(quat_mul(qd, quat_conj(q)), &axis);
        rot = vec3_scale(axis, angle);
        fwd = fminf(vd, AGENT_F(w, AC_MAX_SPEED)[i]) *
              fminf(1.0f, fmaxf(0.0f, 1.0f + vec3_dot(quat_forward(q), d)));
    }
    vec3 vb = quat_unrotate(q, vel);
    float g = AGENT_F(w, AC_MASS)[i] * fminf(AGENT_F(w, AC_SPEED_GAIN)[i], inv_dt);
    vec3 fb = vec3_clamp_length((vec3){g * (fwd - vb.x), g * -vb.y, g * -vb.z}, AGENT_F(w, AC_MAX_FORCE)[i]);
    vec3 f = quat_rotate(q, fb);
    float kd = fminf(AGENT_F(w, AC_TURN_DAMPING)[i], inv_dt);
    vec3 tau = vec3_sub(vec3_scale(rot, AGENT_F(w, AC_HEADING_GAIN)[i]), vec3_scale(omega, kd));
    tau = vec3_scale(tau, AGENT_F(w, AC_INERTIA)[i]);
    tau = vec3_clamp_length(tau, AGENT_F(w, AC_MAX_TORQUE)[i]);
    /* asinf(d_z) is ill-conditioned near the vertical (the lanes take
     * atan2(d_z, |d_xy|)), by 1 / sqrt(1 - d_z^2): that much rounding of d_z
     * shows up in the reference. */
    float dz = vd > 0.0f ? desired.z / vd : 0.0f;
    float angle_tol = 2e-6f + 1.2e-7f / sqrtf(fmaxf(1e-12f, 1.0f - dz * dz));
    ref_out_t r = {.f = {f.x, f.y, f.z},
                   .tau = {tau.x, tau.y, tau.z},
                   .angle_ambiguous = angle > VEC_PI - 1e-3f,
                   .gain = g,
                   .speed_tol = speed_tolerance(vec3_length(vel), AGENT_F(w, AC_MAX_SPEED)[i]),
                   .angle_tol = angle_tol};
    return r;
}

/* Integrates row i of a copy of the state (pre[] holds the columns as they
 * were before integrate_run; forces come from the world, which control_run
 * wrote and which the reference control has already been checked against). */
typedef struct ref_state {
    float p[3], v[3], om[3], q[4], heading;
    float heading_tol; /* rad */
} ref_state_t;

static ref_state_t ref_integrate(world_t* w, float* const* pre, int i, float dt)
{
    ref_state_t s = {0};
    float mass = AGENT_F(w, AC_MASS)[i], inertia = AGENT_F(w, AC_INERTIA)[i];
    float vmax = AGENT_F(w, AC_MAX_SPEED)[i], wmax = AGENT_F(w, AC_MAX_TURN_RATE)[i];
    if (w->dims == 2) {
        float nvx = pre[AC_VEL_X][i] + AGENT_F(w, AC_FORCE_X)[i] / mass * dt;
        float nvy = pre[AC_VEL_Y][i] + AGENT_F(w, AC_FORCE_Y)[i] / mass * dt;
        float s2 = nvx * nvx + nvy * nvy;
        if (s2 > vmax * vmax) {
            float k = vmax / sqrtf(s2);
            nvx *= k;
            nvy *= k;
        }
        s.v[0] = nvx;
        s.v[1] = nvy;
        s.p[0] = pre[AC_POS_X][i] + nvx * dt;
        s.p[1] = pre[AC_POS_Y][i] + nvy * dt;
        float om = pre[AC_OMEGA_Z][i] + AGENT_F(w, AC_TORQUE_Z)[i] / inertia * dt;
        s.om[2] = clampf(om, -wmax, wmax);
        s.heading = angle_wrap(pre[AC_HEADING][i] + s.om[2] * dt);
        s.heading_tol = 2e-6f;
        return s;
    }
    float inv_m = 1.0f / mass, inv_i = 1.0f / inertia;
    vec3 v = {pre[AC_VEL_X][i] + AGENT_F(w, AC_FORCE_X)[i] * inv_m * dt,
              pre[AC_VEL_Y][i] + AGENT_F(w, AC_FORCE_Y)[i] * inv_m * dt,
              pre[AC_VEL_Z][i] + AGENT_F(w, AC_FORCE_Z)[i] * inv_m * dt};
    v = vec3_clamp_length(v, vmax);
    vec3 om = {pre[AC_OMEGA_X][i] + AGENT_F(w, AC_TORQUE_X)[i] * inv_i * dt,
               pre[AC_OMEGA_Y][i] + AGENT_F(w, AC_TORQUE_Y)[i] * inv_i * dt,
               pre[AC_OMEGA_Z][i] + AGENT_F(w, AC_TORQUE_Z)[i] * inv_i * dt};
    om = vec3_clamp_length(om, wmax);
    quat q = {pre[AC_QW][i], pre[AC_QX][i], pre[AC_QY][i], pre[AC_QZ][i]};
    q = quat_integrate(q, om, dt);
    ref_state_t r = {
        .p = {pre[AC_POS_X][i] + v.x * dt, pre[AC_POS_Y][i] + v.y * dt, pre[AC_POS_Z][i] + v.z * dt},
        .v = {v.x, v.y, v.z},
        .om = {om.x, om.y, om.z},
        .q = {q.w, q.x, q.y, q.z},
        .heading = quat_yaw(q),
    };
    /* The yaw of a forward axis near the vertical is ill-conditioned: the
     * components' rounding divided by its length in the x-y plane. */
    vec3 f = quat_forward(q);
    r.heading_tol = 2e-6f + 2.4e-7f / fmaxf(1e-6f, sqrtf(f.x * f.x + f.y * f.y));
    return r;
}

/* Every vehicle parameter varies, every behavior appears, headings and
 * velocities start anywhere; some agents have a zero desired velocity. */
static shoal_world_t* mixed_world(int dims, int count, uint64_t seed)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = dims;
    def.thread_count = 1;
    def.backend = SHOAL_BACKEND_SERIAL;
    def.seed = seed;
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    for (int i = 0; i < count; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        for (int k = 0; k < dims; ++k) {
            d.position[k] = rng_range(seed, (uint64_t)i, 0, (uint32_t)k, -40.0f, 40.0f);
            d.target[k] = rng_range(seed, (uint64_t)i, 1, (uint32_t)k, -40.0f, 40.0f);
            d.threat[k] = rng_range(seed, (uint64_t)i, 2, (uint32_t)k, -40.0f, 40.0f);
            d.velocity[k] = rng_range(seed, (uint64_t)i, 3, (uint32_t)k, -2.0f, 2.0f);
        }
        d.heading = rng_range(seed, (uint64_t)i, 4, 0, -3.14f, 3.14f);
        d.pitch = dims == 3 ? rng_range(seed, (uint64_t)i, 4, 1, -1.2f, 1.2f) : 0.0f;
        d.vehicle.mass = rng_range(seed, (uint64_t)i, 5, 0, 0.2f, 50.0f);
        d.vehicle.inertia = rng_range(seed, (uint64_t)i, 5, 1, 0.1f, 20.0f);
        d.vehicle.max_force = rng_range(seed, (uint64_t)i, 5, 2, 1.0f, 200.0f);
        d.vehicle.max_torque = rng_range(seed, (uint64_t)i, 5, 3, 0.5f, 50.0f);
        d.vehicle.max_speed = rng_range(seed, (uint64_t)i, 5, 4, 1.0f, 30.0f);
        d.vehicle.max_turn_rate = rng_range(seed, (uint64_t)i, 5, 5, 0.5f, 8.0f);
        d.control.speed_gain = rng_range(seed, (uint64_t)i, 6, 0, 0.5f, 120.0f);
        d.control.heading_gain = rng_range(seed, (uint64_t)i, 6, 1, 1.0f, 40.0f);
        d.control.turn_damping = rng_range(seed, (uint64_t)i, 6, 2, 0.5f, 120.0f);
        if (i % 9 != 8) d.weights[i % 4] = 1.0f; /* every 9th: no behavior, V_d = 0 */
        if (i % 7 == 0) d.weights[(i + 1) % 4] = 0.5f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
    return w;
}

/* Rows [count, padded) of a written column must still be zero. */
static long nonzero_padding(world_t* w, int col)
{
    long bad = 0;
    for (int32_t r = w->agents.count; r < (int32_t)lane_pad((size_t)w->agents.count); ++r)
        if (bits_of(AGENT_F(w, col)[r]) != 0) bad++;
    return bad;
}

/* 300 steps of a mixed crowd. After each ordinary step (which may reorder
 * rows, steer and do anything else), control_run and integrate_run are
 * called once more on their own and compared, agent by agent, with the
 * reference fed the same inputs. Each comparison is one step from equal
 * inputs, so differences cannot compound: the tolerances are for float
 * rounding and the lane trig (~1e-7), scaled by the quantities involved. */
static void kernels_match_reference(int dims)
{
    const int count = 403; /* not a multiple of 16: the partial-lane path runs */
    const float dt = 1.0f / 30.0f;
    shoal_world_t* w = mixed_world(dims, count, 77);
    float* pre[AC_COUNT_] = {0};
    for (int c = AC_POS_X; c <= AC_TORQUE_Z; ++c) pre[c] = malloc(sizeof(float) * (size_t)count);
    const int state_cols[] = {AC_POS_X,   AC_POS_Y,   AC_POS_Z,    AC_VEL_X,    AC_VEL_Y,
                              AC_VEL_Z,   AC_HEADING, AC_QW,       AC_QX,       AC_QY,
                              AC_QZ,      AC_OMEGA_X, AC_OMEGA_Y,  AC_OMEGA_Z,  AC_FORCE_X,
                              AC_FORCE_Y, AC_FORCE_Z, AC_TORQUE_X, AC_TORQUE_Y, AC_TORQUE_Z};
    long bad_f = 0, bad_t = 0, bad_s = 0, bad_h = 0, ambiguous = 0, checked = 0, saturated = 0;
    float worst_f = 0.0f, worst_t = 0.0f, worst_s = 0.0f, worst_h = 0.0f;
    float margin_f = 0.0f, margin_t = 0.0f, margin_h = 0.0f; /* worst / tolerance */
    for (int step = 0; step < 300; ++step) {
        cr_assert_eq(shoal_world_step(w, dt), SHOAL_OK, "%s", shoal_world_last_error(w));
        cr_assert_eq(w->agents.count, count);

        control_run(w, dt, NULL);
        for (int i = 0; i < count; ++i) {
            ref_out_t r = dims == 2 ? ref_control_2d(w, i, dt) : ref_control_3d(w, i, dt);
            float fmax = AGENT_F(w, AC_MAX_FORCE)[i];
            const int fc[3] = {AC_FORCE_X, AC_FORCE_Y, AC_FORCE_Z};
            const int tc[3] = {AC_TORQUE_X, AC_TORQUE_Y, AC_TORQUE_Z};
            for (int k = 0; k < dims; ++k) {
                /* As a velocity error: F = g (V_fwd - u) before the clip,
                 * and the clip only shrinks differences. */
                float e = fabsf(AGENT_F(w, fc[k])[i] - r.f[k]) / (r.gain + 1e-6f * fmax);
                if (e > worst_f) worst_f = e;
                if (e / r.speed_tol > margin_f) margin_f = e / r.speed_tol;
                if (e > r.speed_tol) bad_f++;
            }
            for (int k = (dims == 2 ? 2 : 0); k < 3 && !r.angle_ambiguous; ++k) {
                /* As a heading error: tau = I (K_h e - K_d omega). */
                float e = fabsf(AGENT_F(w, tc[k])[i] - r.tau[k]) /
                          (AGENT_F(w, AC_INERTIA)[i] * AGENT_F(w, AC_HEADING_GAIN)[i]);
                if (e > worst_t) worst_t = e;
                if (e / r.angle_tol > margin_t) margin_t = e / r.angle_tol;
                if (e > r.angle_tol) bad_t++;
            }
            float fn = 0.0f;
            for (int k = 0; k < dims; ++k) fn += AGENT_F(w, fc[k])[i] * AGENT_F(w, fc[k])[i];
            if (sqrtf(fn) > 0.999f * fmax) saturated++;
            ambiguous += r.angle_ambiguous;
            checked++;
        }

        for (int c = 0; c < (int)(sizeof state_cols / sizeof state_cols[0]); ++c) {
            int col = state_cols[c];
            if (!w->agents.columns[col]) continue; /* 3D-only columns may be absent in 2D */
            memcpy(pre[col], AGENT_F(w, col), sizeof(float) * (size_t)count);
        }
        integrate_run(w, dt, NULL);
        for (int i = 0; i < count; ++i) {
            ref_state_t r = ref_integrate(w, pre, i, dt);
            float e = 0.0f;
            for (int k = 0; k < dims; ++k) {
                float ep = fabsf(AGENT_F(w, AC_POS_X + k)[i] - r.p[k]) / (1.0f + fabsf(r.p[k]));
                float ev = fabsf(AGENT_F(w, AC_VEL_X + k)[i] - r.v[k]) / (1.0f + AGENT_F(w, AC_MAX_SPEED)[i]);
                e = fmaxf(e, fmaxf(ep, ev));
            }
            for (int k = (dims == 2 ? 2 : 0); k < 3; ++k)
                e = fmaxf(e, fabsf(AGENT_F(w, AC_OMEGA_X + k)[i] - r.om[k]) /
                                 (1.0f + AGENT_F(w, AC_MAX_TURN_RATE)[i]));
            if (dims == 3)
                for (int k = 0; k < 4; ++k) e = fmaxf(e, fabsf(AGENT_F(w, AC_QW + k)[i] - r.q[k]));
            if (e > worst_s) worst_s = e;
            if (!(e <= 2e-6f)) bad_s++;
            float eh = (float)angle_err(AGENT_F(w, AC_HEADING)[i], r.heading);
            if (eh > worst_h) worst_h = eh;
            if (eh / r.heading_tol > margin_h) margin_h = eh / r.heading_tol;
            if (!(eh <= r.heading_tol)) bad_h++;
        }
    }
    long pad = 0;
    for (int c = 0; c < (int)(sizeof state_cols / sizeof state_cols[0]); ++c)
        if (w->agents.columns[state_cols[c]]) pad += nonzero_padding(w, state_cols[c]);
    cr_log_info("%dD: %ld agent-steps; worst force %.3g m/s (as velocity error), torque %.3g "
                "rad (as heading error), state %.3g, heading %.3g rad; at %.2f, %.2f, %.2f, %.2f "
                "of the tolerances; %ld near the +-pi cut, %ld force-saturated",
                dims, checked, worst_f, worst_t, worst_s, worst_h, margin_f, margin_t, worst_s / 2e-6f,
                margin_h, ambiguous, saturated);
    cr_assert_gt(saturated, 1000, "%dD: the force clip should be exercised", dims);
    cr_assert_eq(bad_f, 0, "%dD: %ld forces differ, worst by %g m/s of velocity error", dims, bad_f, worst_f);
    cr_assert_eq(bad_t, 0, "%dD: %ld torques differ, worst by %g rad of heading error", dims, bad_t, worst_t);
    cr_assert_eq(bad_s, 0, "%dD: %ld integrated states differ, worst by %g", dims, bad_s, worst_s);
    cr_assert_eq(bad_h, 0, "%dD: %ld headings differ, worst by %g rad", dims, bad_h, worst_h);
    cr_assert_eq(pad, 0, "%dD: %ld padded rows were written", dims, pad);
    for (int c = 0; c < AC_COUNT_; ++c) free(pre[c]);
    shoal_world_destroy(w);
}

Test(lane_math, control_and_integrate_match_scalar_reference_2d) { kernels_match_reference(2); }
Test(lane_math, control_and_integrate_match_scalar_reference_3d) { kernels_match_reference(3); }
