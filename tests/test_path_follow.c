/* Ground-vehicle path following (de Schaetzen and Sestini, "Efficient
 * ground vehicle path following in game AI"): eqs. (3)/(4) against dense
 * sampling of eq. (2)'s curvature, Algorithm 1 on straight lines and on
 * circles, the PI anti-windup against a naive integrator, pure pursuit on a
 * simulated kinematic bicycle (forward and reverse), path validation, the
 * stuck manager and the baseline target speed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd/vec.h"
#include "modules/ground/path_follow.h"
#include "support.h"

#define G 9.81

/* A path with its own storage. */
#define MAX_WP 8192
typedef struct test_path {
    pf_path_t path;
    vec3 points[MAX_WP];
    float s[MAX_WP];
} test_path_t;

static void build(test_path_t* tp, const float* xyz, int32_t count, float half_width)
{
    char msg[160] = "";
    cr_assert(count <= MAX_WP);
    cr_assert(pf_path_build(&tp->path, tp->points, tp->s, xyz, count, half_width, msg, sizeof msg),
              "pf_path_build: %s", msg);
}

static float xyz_buf[3 * MAX_WP];

/* ---- 1. Eqs. (3)/(4) against sampling ----------------------------------- */

/* The largest of n + 1 evenly spaced samples of pf_bezier_curvature_at,
 * refined by golden-section search between the neighbours of the best one
 * (the curvature is unimodal or monotone, so the bracket holds the peak). */
static double sampled_max_curvature(vec3 p1, vec3 p2, vec3 p3, int n)
{
    double best = -1.0;
    int best_i = 0;
    for (int i = 0; i <= n; ++i) {
        double k = pf_bezier_curvature_at(p1, p2, p3, (float)((double)i / n));
        if (k > best) {
            best = k;
            best_i = i;
        }
    }
    double a = fmax(0.0, (double)(best_i - 1) / n), b = fmin(1.0, (double)(best_i + 1) / n);
    const double gr = 0.6180339887498949;
    double c = b - gr * (b - a), d = a + gr * (b - a);
    double kc = pf_bezier_curvature_at(p1, p2, p3, (float)c);
    double kd = pf_bezier_curvature_at(p1, p2, p3, (float)d);
    for (int it = 0; it < 80; ++it) {
        if (kc > kd) {
            b = d;
            d = c;
            kd = kc;
            c = b - gr * (b - a);
            kc = pf_bezier_curvature_at(p1, p2, p3, (float)c);
        } else {
            a = c;
            c = d;
            kc = kd;
            d = a + gr * (b - a);
            kd = pf_bezier_curvature_at(p1, p2, p3, (float)d);
        }
    }
    return fmax(best, fmax(kc, kd));
}

/* Which case of the paper applies, decided here in double from the sphere
 * description: 3 when p2 is outside both spheres, 4 otherwise. */
static int bezier_case(vec3 p1, vec3 p2, vec3 p3)
{
    double mx = 0.5 * ((double)p1.x + p3.x), my = 0.5 * ((double)p1.y + p3.y),
           mz = 0.5 * ((double)p1.z + p3.z);
    double r = 0.5 * sqrt((p1.x - mx) * (p1.x - mx) + (p1.y - my) * (p1.y - my) + (p1.z - mz) * (p1.z - mz));
    double c1x = 0.5 * (p1.x + mx), c1y = 0.5 * (p1.y + my), c1z = 0.5 * (p1.z + mz);
    double c3x = 0.5 * (p3.x + mx), c3y = 0.5 * (p3.y + my), c3z = 0.5 * (p3.z + mz);
    double d1 = sqrt((p2.x - c1x) * (p2.x - c1x) + (p2.y - c1y) * (p2.y - c1y) + (p2.z - c1z) * (p2.z - c1z));
    double d3 = sqrt((p2.x - c3x) * (p2.x - c3x) + (p2.y - c3y) * (p2.y - c3y) + (p2.z - c3z) * (p2.z - c3z));
    return d1 > r && d3 > r ? 3 : 4;
}

static void max_curvature_matches_sampling(int dims, uint64_t seed)
{
    const int curves = 200, samples = 200000;
    int count3 = 0, count4 = 0;
    double worst = 0.0;
    for (int i = 0; i < curves; ++i) {
        vec3 p[3];
        for (int j = 0; j < 3; ++j)
            p[j] = vec3_make(uniform(&seed, -10, 10), uniform(&seed, -10, 10),
                             dims == 3 ? uniform(&seed, -10, 10) : 0.0f);
        if (i % 3 == 0) {
            /* Uniform points rarely put p2 inside a sphere (about 1 in 10
             * in 2D, 1 in 20 in 3D): every third curve moves it into one. */
            vec3 end = (i / 3) % 2 ? p[0] : p[2];
            vec3 m = vec3_scale(vec3_add(p[0], p[2]), 0.5f);
            vec3 centre = vec3_scale(vec3_add(end, m), 0.5f);
            float r = 0.5f * vec3_distance(p[0], m);
            vec3 off;
            do {
                off = vec3_make(uniform(&seed, -1, 1), uniform(&seed, -1, 1),
                                dims == 3 ? uniform(&seed, -1, 1) : 0.0f);
            } while (vec3_length(off) > 1.0f);
            p[1] = vec3_add(centre, vec3_scale(off, 0.98f * r));
        }
        if (bezier_case(p[0], p[1], p[2]) == 3)
            count3++;
        else
            count4++;
        double analytic = pf_bezier_max_curvature(p[0], p[1], p[2]);
        double sampled = sampled_max_curvature(p[0], p[1], p[2], samples);
        cr_assert(isfinite(analytic) && analytic > 0.0, "curve %d: kappa_max %g", i, analytic);
        double rel = fabs(analytic - sampled) / sampled;
        if (rel > worst) worst = rel;
        cr_assert(rel <= 1e-4,
                  "%dD curve %d (case %d): eqs. (3)/(4) give %.9g, sampling %.9g (rel %.3g); "
                  "p1 (%g %g %g) p2 (%g %g %g) p3 (%g %g %g)",
                  dims, i, bezier_case(p[0], p[1], p[2]), analytic, sampled, rel, (double)p[0].x,
                  (double)p[0].y, (double)p[0].z, (double)p[1].x, (double)p[1].y, (double)p[1].z,
                  (double)p[2].x, (double)p[2].y, (double)p[2].z);
    }
    cr_log_info("%dD: %d curves of eq. (3), %d of eq. (4), worst relative error %.3g", dims, count3, count4,
                worst);
    cr_assert_geq(count3, 20, "%dD: only %d curves exercised eq. (3)", dims, count3);
    cr_assert_geq(count4, 20, "%dD: only %d curves exercised eq. (4)", dims, count4);
}

Test(path_follow, max_curvature_matches_sampling_2d) { max_curvature_matches_sampling(2, 11); }
Test(path_follow, max_curvature_matches_sampling_3d) { max_curvature_matches_sampling(3, 12); }

/* pf_bezier_curvature_at is the textbook formula: check it against a finite
 * difference second derivative on one curve, so test 1 has an anchor that
 * does not share code with the library. */
Test(path_follow, curvature_at_matches_finite_differences)
{
    vec3 p1 = vec3_make(-3, 1, 2), p2 = vec3_make(2, 5, -1), p3 = vec3_make(6, -2, 1);
    for (int i = 1; i < 10; ++i) {
        double t = i / 10.0, h = 1e-4;
        double b[3][3];
        for (int j = 0; j < 3; ++j) {
            double u = t + (j - 1) * h;
            double w1 = (1 - u) * (1 - u), w2 = 2 * (1 - u) * u, w3 = u * u;
            b[j][0] = w1 * p1.x + w2 * p2.x + w3 * p3.x;
            b[j][1] = w1 * p1.y + w2 * p2.y + w3 * p3.y;
            b[j][2] = w1 * p1.z + w2 * p2.z + w3 * p3.z;
        }
        double d1[3], d2[3];
        for (int k = 0; k < 3; ++k) {
            d1[k] = (b[2][k] - b[0][k]) / (2 * h);
            d2[k] = (b[2][k] - 2 * b[1][k] + b[0][k]) / (h * h);
        }
        double cx = d1[1] * d2[2] - d1[2] * d2[1], cy = d1[2] * d2[0] - d1[0] * d2[2],
               cz = d1[0] * d2[1] - d1[1] * d2[0];
        double sp = sqrt(d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]);
        double k_fd = sqrt(cx * cx + cy * cy + cz * cz) / (sp * sp * sp);
        double k = pf_bezier_curvature_at(p1, p2, p3, (float)t);
        cr_assert(fabs(k - k_fd) <= 1e-4 * k_fd, "t %g: %g vs finite differences %g", t, k, k_fd);
    }
}

#define V3(x, y, z) vec3_make(x, y, z)

Test(path_follow, max_curvature_hand_cases_and_degenerate)
{
    /* Symmetric case (3): |p2 - m| = 1, A = 1. */
    cr_assert_float_eq(pf_bezier_max_curvature(V3(-1, 0, 0), V3(0, 1, 0), V3(1, 0, 0)), 1.0f, 1e-6f);
    /* Case (4): p2 inside the sphere near p1; A = 5, |p1 - p2| = sqrt 2. */
    cr_assert_float_eq(pf_bezier_max_curvature(V3(0, 0, 0), V3(1, 1, 0), V3(10, 0, 0)),
                       (float)(5.0 / pow(2.0, 1.5)), 1e-5f);
    /* Straight: p2 between p1 and p3 (and on an end). */
    cr_assert_eq(pf_bezier_max_curvature(V3(0, 0, 0), V3(1, 0, 0), V3(3, 0, 0)), 0.0f);
    cr_assert_eq(pf_bezier_max_curvature(V3(0, 0, 0), V3(0, 0, 0), V3(3, 0, 0)), 0.0f);
    cr_assert_eq(pf_bezier_max_curvature(V3(1, 2, 3), V3(2, 4, 6), V3(3, 6, 9)), 0.0f);
    /* Folded back: p2 beyond p3, and p3 back on p1. */
    cr_assert(isinf(pf_bezier_max_curvature(V3(0, 0, 0), V3(3, 0, 0), V3(1, 0, 0))));
    cr_assert(isinf(pf_bezier_max_curvature(V3(0, 0, 0), V3(0, 0, 2), V3(0, 0, 0))));
    /* All three the same point. */
    cr_assert_eq(pf_bezier_max_curvature(V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1)), 0.0f);
    /* The cusp is infinite in the sampled formula too. */
    cr_assert(isinf(pf_bezier_curvature_at(V3(0, 0, 0), V3(2, 0, 0), V3(0, 0, 0), 0.5f)));
}

/* ---- 2. Algorithm 1 ------------------------------------------------------ */

Test(path_follow, target_speed_straight_is_v_max)
{
    pf_params_t p = pf_params_default(PF_PROPOSED);
    static test_path_t tp;
    /* Along x, then along a slanted 3D line through several waypoints
     * (float rounding makes those nearly, not exactly, collinear). */
    const float xs[] = {0, 0, 0, 100, 0, 0};
    build(&tp, xs, 2, 2.0f);
    for (float s = 0.0f; s <= 100.0f; s += 7.5f)
        cr_assert_eq(pf_target_speed(&p, &tp.path, V3(s, 0, 0), s), p.v_max, "s %g", (double)s);
    for (int i = 0; i < 9; ++i) {
        xyz_buf[3 * i] = 3.0f * i;
        xyz_buf[3 * i + 1] = 4.0f * i;
        xyz_buf[3 * i + 2] = 1.2f * i;
    }
    build(&tp, xyz_buf, 9, 2.0f);
    for (float s = 0.0f; s < tp.path.length; s += 3.3f) {
        vec3 pos = pf_path_point_at(&tp.path, s, NULL);
        cr_assert_eq(pf_target_speed(&p, &tp.path, pos, s), p.v_max, "slanted, s %g", (double)s);
    }
    /* The first curve starts at the vehicle: 4 m beside the straight path
     * the target speed drops (the paper's "too far away from the path").
     * P~ = (10, 4), (10 + sqrt 20, 0), (16 + sqrt 20, 0), ...: case (3). */
    build(&tp, xs, 2, 2.0f);
    float off = pf_target_speed(&p, &tp.path, vec3_make(10, 4, 0), 10);
    float k = pf_bezier_max_curvature(vec3_make(10, 4, 0), vec3_make(10 + sqrtf(20), 0, 0),
                                      vec3_make(16 + sqrtf(20), 0, 0));
    cr_assert_float_eq(off, sqrtf(0.4f * 9.81f / k), 1e-4f, "4 m off the path: %g", (double)off);
    cr_assert_lt(off, 0.8f * p.v_max);
    /* Farther than dh: the projection stands in for p2, P~ = (10, 8),
     * (10, 0), (16, 0), ...; A = 24, |p2 - m| = 5. */
    off = pf_target_speed(&p, &tp.path, vec3_make(10, 8, 0), 10);
    cr_assert_float_eq(off, sqrtf(0.4f * 9.81f * 576.0f / 125.0f), 1e-4f, "8 m off the path: %g",
                       (double)off);
}

/* Algorithm 1 resamples a circle of radius R with chords dh, each spanning
 * alpha = 2 asin(dh / 2R); every triple is then symmetric (case (3)) with
 * |p2 - m| = R (1 - cos alpha) and A = R^2 sin alpha (1 - cos alpha), so
 * kappa_max = 1 / (R (1 + cos alpha)) and v = sqrt(a_lat g R (1 + cos alpha)):
 * the Bezier through three points of a circle is flatter at its ends and
 * sharper in the middle than the circle, about 1 / 2R, not 1 / R. */
static double circle_speed_raw(const pf_params_t* p, double R)
{
    double alpha = 2.0 * asin(p->dh / (2.0 * R));
    return sqrt(p->a_lat * G * R * (1.0 + cos(alpha)));
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

static const double RADII[] = {3.05, 3.5, 5.0, 8.0, 12.0, 20.0, 50.0};
#define NRADII ((int)(sizeof RADII / sizeof RADII[0]))

Test(path_follow, target_speed_on_circles)
{
    pf_params_t p = pf_params_default(PF_PROPOSED);
    static test_path_t tp;
    int low_clamped = 0, high_clamped = 0;
    double worst_vertices = 0.0, worst_dense = 0.0;
    for (int r = 0; r < NRADII; ++r) {
        double R = RADII[r];
        double raw = circle_speed_raw(&p, R);
        double expect = clampd(raw, p.v_min, p.v_max);
        low_clamped += raw < p.v_min;
        high_clamped += raw > p.v_max;
        double alpha = 2.0 * asin(p.dh / (2.0 * R));

        /* (a) Waypoints exactly dh apart on the circle, the vehicle on the
         * first: the resampled points are the waypoints themselves. */
        int count = p.n + 2;
        for (int i = 0; i < count; ++i) {
            xyz_buf[3 * i] = (float)(R * cos(i * alpha));
            xyz_buf[3 * i + 1] = (float)(R * sin(i * alpha));
            xyz_buf[3 * i + 2] = 0.0f;
        }
        build(&tp, xyz_buf, count, 2.0f);
        double v = pf_target_speed(&p, &tp.path, tp.points[0], 0.0f);
        double rel = fabs(v - expect) / expect;
        if (rel > worst_vertices) worst_vertices = rel;
        cr_assert(rel <= 1e-4, "R %g, waypoints dh apart: %.7g, expected %.7g (raw %.7g)", R, v, expect, raw);

        /* (b) A dense polygon (0.2 degree steps) over (n - 1) alpha plus a
         * margin, several turns when alpha is large, the vehicle on the
         * circle between waypoints. */
        double step = 0.2 * VEC_PI / 180.0, phi0 = 0.123;
        double total = (p.n - 1) * alpha + 0.5;
        count = (int)(total / step) + 2;
        cr_assert(count <= MAX_WP);
        for (int i = 0; i < count; ++i) {
            xyz_buf[3 * i] = (float)(R * cos(i * step));
            xyz_buf[3 * i + 1] = (float)(R * sin(i * step));
            xyz_buf[3 * i + 2] = 0.0f;
        }
        build(&tp, xyz_buf, count, 2.0f);
        vec3 pos = vec3_make((float)(R * cos(phi0)), (float)(R * sin(phi0)), 0.0f);
        float s = pf_path_project(&tp.path, pos, 0.0f, 1.0f, NULL);
        v = pf_target_speed(&p, &tp.path, pos, s);
        rel = fabs(v - expect) / expect;
        if (rel > worst_dense) worst_dense = rel;
        cr_assert(rel <= 1e-4, "R %g, dense circle: %.7g, expected %.7g (raw %.7g)", R, v, expect, raw);
        /* Not the 1 / R curvature: the two differ by far more than the
         * tolerance wherever the clamp is inactive. */
        double naive = clampd(sqrt(p.a_lat * G * R), p.v_min, p.v_max);
        if (raw > p.v_min && raw < p.v_max) cr_assert_gt(fabs(v - naive) / naive, 0.1);
    }
    cr_log_info("circles: worst relative error %.3g (waypoints dh apart), %.3g (dense)", worst_vertices,
                worst_dense);
    cr_assert_geq(low_clamped, 1, "no radius exercised the v_min clamp");
    cr_assert_geq(high_clamped, 1, "no radius exercised the v_max clamp");
}

Test(path_follow, target_speed_fewer_than_three_points)
{
    pf_params_t p = pf_params_default(PF_PROPOSED);
    static test_path_t tp;
    /* A 90 degree corner 4 m ahead but the path ends within dh of the
     * vehicle: P~ is the vehicle and the end, one chord, no curve. */
    const float xs[] = {0, 0, 0, 2, 0, 0, 2, 2, 0};
    build(&tp, xs, 3, 1.0f);
    cr_assert_eq(pf_target_speed(&p, &tp.path, vec3_make(0, 0, 0), 0.0f), p.v_max);
    /* A hairpin (folded back) inside the lookahead gives v_min. */
    const float hp[] = {0, 0, 0, 12, 0, 0, 12.01f, 0.01f, 0, 0, 0.02f, 0};
    build(&tp, hp, 4, 1.0f);
    cr_assert_eq(pf_target_speed(&p, &tp.path, vec3_make(0, 0, 0), 0.0f), p.v_min);
}

/* ---- 3. PI anti-windup -------------------------------------------------- */

Test(path_follow, pi_anti_windup)
{
    const float kp = 0.5f, ki = 0.25f, dt = 0.01f;
    pf_pi_t pi = {0.0f};
    double naive = 0.0; /* integral of a PI without anti-windup */
    /* 100 s of an error whose proportional part alone is below saturation
     * (0.75), so the integral pushes the output into it. */
    for (int i = 0; i < 10000; ++i) {
        float u = pf_pi_update(&pi, kp, ki, 1.5f, dt);
        naive += 1.5 * dt;
        cr_assert(u >= -1.0f && u <= 1.0f);
        cr_assert(fabsf(pi.integral) <= 1.0f / ki + 1e-6f, "integral %g", (double)pi.integral);
    }
    cr_assert_float_eq(pf_pi_update(&pi, kp, ki, 1.5f, dt), 1.0f, 1e-6f);
    /* It stopped where kp e + ki I just reaches 1, far below the naive one. */
    cr_assert_lt(pi.integral, 1.1f, "integral %g", (double)pi.integral);
    cr_assert_gt(naive, 100.0);

    /* The error changes sign: ours leaves saturation at once and goes
     * negative within seconds; the naive one stays saturated. */
    float u = pf_pi_update(&pi, kp, ki, -0.2f, dt);
    naive += -0.2 * dt;
    cr_assert_lt(u, 0.99f, "still saturated after the sign change: %g", (double)u);
    double t_negative = -1.0;
    for (int i = 1; i <= 1000; ++i) {
        u = pf_pi_update(&pi, kp, ki, -0.2f, dt);
        naive += -0.2 * dt;
        if (u < 0.0f && t_negative < 0.0) t_negative = i * dt;
    }
    double u_naive = clampd(kp * -0.2 + ki * naive, -1.0, 1.0);
    cr_assert(t_negative > 0.0 && t_negative < 5.0, "output negative after %g s", t_negative);
    cr_assert_eq(u_naive, 1.0, "naive output %g after 10 s", u_naive);

    /* Mirror image: a large negative error held, then a positive one. */
    pi.integral = 0.0f;
    for (int i = 0; i < 10000; ++i) pf_pi_update(&pi, kp, ki, -5.0f, dt);
    cr_assert(pi.integral >= -1.0f / ki - 1e-6f && pi.integral <= 0.0f);
    cr_assert_gt(pf_pi_update(&pi, kp, ki, 0.5f, dt), 0.0f);

    /* With kp = 0 only the bound stops the integral: it stays within 1/ki. */
    pi.integral = 0.0f;
    for (int i = 0; i < 100000; ++i) pf_pi_update(&pi, 0.0f, ki, 0.01f, dt);
    cr_assert(pi.integral <= 1.0f / ki + 1e-6f && pi.integral >= 1.0f / ki - 0.01f, "%g",
              (double)pi.integral);
    /* ki = 0: a pure P controller with no integral. */
    pi.integral = 3.0f;
    cr_assert_float_eq(pf_pi_update(&pi, 0.5f, 0.0f, 1.0f, dt), 0.5f, 1e-6f);
    cr_assert_eq(pi.integral, 0.0f);
}

/* ---- 4. Pure pursuit on a kinematic bicycle ----------------------------- */

Test(path_follow, pure_pursuit_signs)
{
    vec3 o = vec3_make(0, 0, 0);
    cr_assert_float_eq(pf_pure_pursuit(o, 0.0f, 2.5f, vec3_make(10, 0, 0), 0), 0.0f, 1e-7f);
    cr_assert_gt(pf_pure_pursuit(o, 0.0f, 2.5f, vec3_make(10, 2, 0), 0), 0.0f);
    cr_assert_lt(pf_pure_pursuit(o, 0.0f, 2.5f, vec3_make(10, -2, 0), 0), 0.0f);
    /* Reversing toward a target behind the vehicle on its left (it faces
     * +x): wheels to the left, as a driver backing up steers toward the
     * side the rear should go; on its right, wheels to the right. */
    cr_assert_gt(pf_pure_pursuit(o, 0.0f, 2.5f, vec3_make(-10, 2, 0), 1), 0.0f);
    cr_assert_lt(pf_pure_pursuit(o, 0.0f, 2.5f, vec3_make(-10, -2, 0), 1), 0.0f);
    cr_assert_float_eq(pf_pure_pursuit(o, 0.0f, 2.5f, vec3_make(-10, 0, 0), 1), 0.0f, 1e-7f);
    /* A target on the vehicle: straight wheels, no NaN. */
    cr_assert_eq(pf_pure_pursuit(o, 1.0f, 2.5f, o, 0), 0.0f);
    /* The circle through the target: 90 degrees to the side at distance d
     * needs curvature 2 / d, so tan(delta) = 2 L / d. */
    cr_assert_float_eq(pf_pure_pursuit(o, 0.0f, 2.0f, vec3_make(0, 8, 0), 0), atanf(0.5f), 1e-6f);
    /* Targets behind get the 90-degree turn toward their side, not less. */
    float l_d = sqrtf(104.0f);
    cr_assert_float_eq(pf_pure_pursuit(o, 0.0f, 2.0f, vec3_make(-10, 2, 0), 0), atanf(4.0f / l_d), 1e-6f);
    cr_assert_float_eq(pf_pure_pursuit(o, 0.0f, 2.0f, vec3_make(-10, -2, 0), 0), -atanf(4.0f / l_d), 1e-6f);
    cr_assert_float_eq(pf_pure_pursuit(o, 0.0f, 2.0f, vec3_make(-10, 0.0f, 0), 0), atanf(0.4f), 1e-6f,
                       "straight behind: turn left");
}

/* Drives a kinematic bicycle (reference point on the rear axle) along the
 * straight path y = 0 from a lateral offset; returns the final offset and
 * writes the largest excursion past the line. `dir` is the direction the
 * path runs (+1 toward +x, -1 toward -x); v < 0 reverses. */
static float pursue_line(float y0, float v, int dir, float* overshoot, float* settle_time)
{
    static test_path_t tp;
    const float xs[] = {-500.0f * dir, 0, 0, 500.0f * dir, 0, 0};
    build(&tp, xs, 2, 2.0f);
    const float L = 2.5f, max_steer = 0.6f, dt = 0.01f, lookahead = 6.0f;
    float x = 0.0f, y = y0, yaw = dir > 0 ? 0.0f : VEC_PI;
    if (v < 0.0f) yaw += VEC_PI; /* face against the path to drive it backward */
    float s = pf_path_project(&tp.path, vec3_make(x, y, 0), 0.0f, tp.path.length, NULL);
    *overshoot = 0.0f;
    *settle_time = -1.0f;
    for (int i = 0; i < 3000; ++i) {
        vec3 pos = vec3_make(x, y, 0);
        s = pf_path_project(&tp.path, pos, s - 2.0f, s + 20.0f, NULL);
        vec3 target = pf_path_point_at(&tp.path, s + lookahead, NULL);
        float delta = pf_pure_pursuit(pos, yaw, L, target, v < 0.0f);
        delta = fminf(fmaxf(delta, -max_steer), max_steer);
        x += v * cosf(yaw) * dt;
        y += v * sinf(yaw) * dt;
        yaw += v * tanf(delta) / L * dt;
        cr_assert(isfinite(x) && isfinite(y) && isfinite(yaw));
        /* Past the line is the side opposite to the start. */
        if (y * y0 < 0.0f) *overshoot = fmaxf(*overshoot, fabsf(y));
        if (fabsf(y) >= 0.05f)
            *settle_time = -1.0f;
        else if (*settle_time < 0.0f)
            *settle_time = i * dt;
    }
    return y;
}

Test(path_follow, pure_pursuit_converges_forward)
{
    const float cases[][2] = {{2.0f, 5.0f}, {-3.0f, 8.0f}, {1.0f, 2.0f}};
    for (int c = 0; c < 3; ++c) {
        for (int dir = -1; dir <= 1; dir += 2) {
            float overshoot, settle;
            float y = pursue_line(cases[c][0], cases[c][1], dir, &overshoot, &settle);
            cr_log_info("forward y0 %g v %g dir %d: final %g, overshoot %g, settled %g s",
                        (double)cases[c][0], (double)cases[c][1], dir, (double)y, (double)overshoot,
                        (double)settle);
            cr_assert_lt(fabsf(y), 0.05f, "offset %g left", (double)y);
            cr_assert(settle >= 0.0f && settle < 20.0f, "settled after %g s", (double)settle);
            cr_assert_leq(overshoot, 0.05f * fabsf(cases[c][0]), "overshoot %g m", (double)overshoot);
        }
    }
}

Test(path_follow, pure_pursuit_converges_in_reverse)
{
    const float cases[][2] = {{2.0f, -3.0f}, {-1.5f, -2.0f}};
    for (int c = 0; c < 2; ++c) {
        for (int dir = -1; dir <= 1; dir += 2) {
            float overshoot, settle;
            float y = pursue_line(cases[c][0], cases[c][1], dir, &overshoot, &settle);
            cr_log_info("reverse y0 %g v %g dir %d: final %g, overshoot %g, settled %g s",
                        (double)cases[c][0], (double)cases[c][1], dir, (double)y, (double)overshoot,
                        (double)settle);
            cr_assert_lt(fabsf(y), 0.05f, "offset %g left", (double)y);
            cr_assert(settle >= 0.0f && settle < 25.0f, "settled after %g s", (double)settle);
            cr_assert_leq(overshoot, 0.05f * fabsf(cases[c][0]), "overshoot %g m", (double)overshoot);
        }
    }
}

/* ---- 5. Degenerate paths ------------------------------------------------- */

static void expect_build_fails(const float* xyz, int32_t count, float half_width, const char* const* needles)
{
    pf_path_t path;
    memset(&path, 0xab, sizeof path);
    pf_path_t before = path;
    vec3 pts[8];
    float s[8];
    char msg[200] = "";
    cr_assert_eq(pf_path_build(&path, pts, s, xyz, count, half_width, msg, sizeof msg), 0,
                 "count %d accepted", (int)count);
    cr_assert(memcmp(&path, &before, sizeof path) == 0, "out was written on failure");
    for (int i = 0; needles[i] != NULL; ++i)
        cr_assert(strstr(msg, needles[i]) != NULL, "message \"%s\" lacks \"%s\"", msg, needles[i]);
    /* No buffer, or a tiny one: still 0, no overflow. */
    cr_assert_eq(pf_path_build(&path, pts, s, xyz, count, half_width, NULL, 0), 0);
    char tiny[4];
    cr_assert_eq(pf_path_build(&path, pts, s, xyz, count, half_width, tiny, sizeof tiny), 0);
    cr_assert_eq(tiny[3], '\0');
}

Test(path_follow, degenerate_paths)
{
    const float one[] = {1, 2, 3};
    expect_build_fails(NULL, 0, 1.0f, (const char*[]){"at least 2 waypoints", "got 0", NULL});
    expect_build_fails(one, 1, 1.0f, (const char*[]){"at least 2 waypoints", "got 1", NULL});
    const float rep[] = {0, 0, 0, 5, 0, 0, 5, 0, 0, 9, 0, 0};
    expect_build_fails(rep, 4, 1.0f, (const char*[]){"waypoint 2 repeats waypoint 1", "0.001 m", NULL});
    const float close[] = {0, 0, 0, 5, 0, 0, 5.0005f, 0, 0};
    expect_build_fails(close, 3, 1.0f, (const char*[]){"waypoint 2 is", "from waypoint 1", "0.001 m", NULL});
    const float nan_y[] = {0, 0, 0, 1, NAN, 0, 2, 0, 0};
    expect_build_fails(nan_y, 3, 1.0f, (const char*[]){"waypoint 1: y is NaN", NULL});
    const float inf_z[] = {0, 0, 0, 1, 0, 0, 2, 0, INFINITY};
    expect_build_fails(inf_z, 3, 1.0f, (const char*[]){"waypoint 2: z is infinite", NULL});
    const float ok[] = {0, 0, 0, 1, 0, 0};
    const float bad_hw[] = {0.0f, -1.0f, NAN, INFINITY};
    for (int i = 0; i < 4; ++i) expect_build_fails(ok, 2, bad_hw[i], (const char*[]){"half_width", NULL});
    /* Huge but finite coordinates whose length overflows a float. */
    const float huge[] = {-3e38f, 0, 0, 3e38f, 0, 0};
    expect_build_fails(huge, 2, 1.0f, (const char*[]){"length", NULL});

    /* The good path. */
    static test_path_t tp;
    build(&tp, ok, 2, 1.0f);
    cr_assert_eq(tp.path.count, 2);
    cr_assert_float_eq(tp.path.length, 1.0f, 1e-7f);
}

/* ---- Path queries --------------------------------------------------------- */

Test(path_follow, point_at_and_project)
{
    static test_path_t tp;
    uint64_t seed = 5;
    int n = 200;
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k)
            xyz_buf[3 * i + k] = (k == 0 ? (float)i : 0.0f) + uniform(&seed, -0.4f, 0.4f);
    build(&tp, xyz_buf, n, 1.0f);
    for (int trial = 0; trial < 2000; ++trial) {
        float s = uniform(&seed, -5.0f, tp.path.length + 5.0f);
        vec3 tan;
        vec3 q = pf_path_point_at(&tp.path, s, &tan);
        /* Linear search reference. */
        float sc = fminf(fmaxf(s, 0.0f), tp.path.length);
        int i = 0;
        while (i < n - 2 && tp.s[i + 1] <= sc) ++i;
        float t = (sc - tp.s[i]) / (tp.s[i + 1] - tp.s[i]);
        vec3 e = vec3_sub(tp.points[i + 1], tp.points[i]);
        vec3 r = vec3_add(tp.points[i], vec3_scale(e, t));
        cr_assert_lt(vec3_distance(q, r), 1e-4f);
        cr_assert_lt(vec3_distance(tan, vec3_normalize(e)), 1e-5f);
        /* A point on the path projects onto itself. */
        float cte;
        float sp = pf_path_project(&tp.path, q, sc - 3.0f, sc + 3.0f, &cte);
        cr_assert_lt(fabsf(sp - sc), 2e-3f, "s %g projected to %g", (double)sc, (double)sp);
        cr_assert_lt(cte, 1e-3f);
    }
    /* A path that doubles back: the window keeps the projection on the leg
     * being driven; the whole path picks the nearer leg; ties go to the
     * smaller s. */
    const float hair[] = {0, 0, 0, 50, 0, 0, 50, 2, 0, 0, 2, 0};
    build(&tp, hair, 4, 1.0f);
    float cte;
    float s = pf_path_project(&tp.path, vec3_make(20, 1.4f, 0), 0.0f, 30.0f, &cte);
    cr_assert_float_eq(s, 20.0f, 1e-4f);
    cr_assert_float_eq(cte, 1.4f, 1e-5f);
    s = pf_path_project(&tp.path, vec3_make(20, 1.4f, 0), 0.0f, tp.path.length, &cte);
    cr_assert_float_eq(s, 50.0f + 2.0f + 30.0f, 1e-3f);
    s = pf_path_project(&tp.path, vec3_make(20, 1.0f, 0), 0.0f, tp.path.length, &cte);
    cr_assert_float_eq(s, 20.0f, 1e-4f);
    /* Window outside the path, reversed, or NaN: clamped, finite. */
    s = pf_path_project(&tp.path, vec3_make(20, 0, 0), 500.0f, 400.0f, &cte);
    cr_assert_float_eq(s, tp.path.length, 1e-4f);
    s = pf_path_project(&tp.path, vec3_make(20, 0, 0), NAN, NAN, &cte);
    cr_assert_float_eq(s, 20.0f, 1e-4f);
    vec3 q = pf_path_point_at(&tp.path, NAN, NULL);
    cr_assert(q.x == 0.0f && q.y == 0.0f);
}

/* ---- Parameters ----------------------------------------------------------- */

Test(path_follow, params_valid_names_the_field)
{
    char msg[160];
    pf_params_t p = pf_params_default(PF_PROPOSED);
    cr_assert(pf_params_valid(&p, msg, sizeof msg), "%s", msg);
    p = pf_params_default(PF_BASELINE);
    cr_assert(pf_params_valid(&p, msg, sizeof msg), "%s", msg);
    cr_assert_eq(p.kind, PF_BASELINE);
    cr_assert_float_eq(p.a_lat, 0.4f, 0.0f);
    cr_assert_float_eq(p.dh, 6.0f, 0.0f);
    cr_assert_eq(p.n, 5);

#define EXPECT_BAD(field, value, name)                                                                       \
    do {                                                                                                     \
        pf_params_t q = pf_params_default(PF_PROPOSED);                                                      \
        q.field = value;                                                                                     \
        msg[0] = '\0';                                                                                       \
        cr_assert_eq(pf_params_valid(&q, msg, sizeof msg), 0, #field " = " #value " ok");                    \
        cr_assert(strstr(msg, name) != NULL, "\"%s\" lacks %s", msg, name);                                  \
    } while (0)
    EXPECT_BAD(kind, (pf_kind_t)7, "kind");
    EXPECT_BAD(a_lat, 0.0f, "a_lat");
    EXPECT_BAD(a_lat, NAN, "a_lat");
    EXPECT_BAD(dh, -1.0f, "dh");
    EXPECT_BAD(n, 2, "n must");
    EXPECT_BAD(v_min, -1.0f, "v_min");
    EXPECT_BAD(v_max, 0.5f, "v_max");
    EXPECT_BAD(v_max, INFINITY, "v_max");
    EXPECT_BAD(baseline_gain, -0.1f, "baseline_gain");
    EXPECT_BAD(lookahead_min, 0.0f, "lookahead_min");
    EXPECT_BAD(lookahead_time, -1.0f, "lookahead_time");
    EXPECT_BAD(lookahead_max, 4.0f, "lookahead_max");
    EXPECT_BAD(kp, NAN, "kp");
    EXPECT_BAD(ki, -0.25f, "ki");
    EXPECT_BAD(arrive_radius, -1.0f, "arrive_radius");
    EXPECT_BAD(stuck_window, 0.0f, "stuck_window");
    EXPECT_BAD(stuck_progress, 0.0f, "stuck_progress");
    EXPECT_BAD(reverse_time, -1.0f, "reverse_time");
    EXPECT_BAD(max_recoveries, -1, "max_recoveries");
    EXPECT_BAD(vehicle_limits, 2, "vehicle_limits");
#undef EXPECT_BAD
}

/* ---- 6. The stuck manager ----------------------------------------------- */

static pf_vehicle_t vehicle_at(float x, float y, float yaw, float v)
{
    pf_vehicle_t veh = {
        .pos = vec3_make(x, y, 0),
        .yaw = yaw,
        .v = v,
        .wheelbase = 2.5f,
        .max_steer = 0.6f,
    };
    return veh;
}

Test(path_follow, stuck_manager_recovers_then_teleports)
{
    pf_params_t p = pf_params_default(PF_PROPOSED);
    static test_path_t tp;
    const float xs[] = {0, 0, 0, 200, 0, 0};
    build(&tp, xs, 2, 2.0f);
    pf_state_t st;
    pf_state_init(&st);
    /* Slightly to the side and turned, so the forward steering is not 0. */
    pf_vehicle_t veh = vehicle_at(0.0f, 1.0f, 0.3f, 0.0f);
    const float dt = 0.05f;
    int events = 0, teleport_frame = -1, recovery_frames = 0;
    float first_event = -1.0f, forward_steering = 0.0f;
    for (int i = 0; i < 600 && teleport_frame < 0; ++i) {
        pf_command_t c;
        pf_follow(&p, &tp.path, &st, &veh, dt, &c);
        float t = (i + 1) * dt;
        cr_assert(isfinite(c.throttle) && isfinite(c.steering) && isfinite(c.target_speed));
        if (!c.stuck && !c.teleport) forward_steering = c.steering;
        if (c.new_stuck_event) {
            events++;
            if (first_event < 0.0f) first_event = t;
            if (!c.teleport) {
                /* The recovery starts this frame: full reverse, counter-steer. */
                cr_assert(c.stuck);
                cr_assert_float_eq(c.steering, -forward_steering, 1e-6f);
            }
        }
        if (c.stuck) {
            recovery_frames++;
            cr_assert_eq(c.throttle, -1.0f);
            cr_assert_eq(st.pi.integral, 0.0f);
        }
        if (c.teleport) {
            teleport_frame = i;
            cr_assert(c.new_stuck_event, "a teleport follows a stuck event");
            cr_assert_float_eq(c.teleport_pos.x, 10.0f, 1e-4f); /* 10 m ahead of the projection */
            cr_assert_float_eq(c.teleport_pos.y, 0.0f, 1e-6f);
            cr_assert_float_eq(c.teleport_yaw, 0.0f, 1e-6f);
        }
    }
    /* 4 s window, then 3 x (2 s reverse + 4 s window): the teleport comes
     * with the 4th stuck event at 22 s. */
    cr_assert_float_eq(first_event, p.stuck_window, 1.5f * dt, "first stuck event at %g s",
                       (double)first_event);
    cr_assert_eq(events, p.max_recoveries + 1);
    cr_assert_eq(st.stuck_events, p.max_recoveries + 1);
    cr_assert_eq(st.teleports, 1);
    cr_assert_eq(st.failed_recoveries, 0);
    float expect_recovery = p.max_recoveries * p.reverse_time / dt;
    cr_assert(fabsf((float)recovery_frames - expect_recovery) <= 2.0f, "%d recovery frames", recovery_frames);
    float t_tp = (teleport_frame + 1) * dt;
    float expect_tp = (p.max_recoveries + 1) * p.stuck_window + p.max_recoveries * p.reverse_time;
    cr_assert(fabsf(t_tp - expect_tp) <= 3.0f * dt, "teleport at %g s, expected %g", (double)t_tp,
              (double)expect_tp);
}

Test(path_follow, stuck_manager_quiet_while_progressing)
{
    for (int kind = 0; kind < 2; ++kind) {
        pf_params_t p = pf_params_default((pf_kind_t)kind);
        static test_path_t tp;
        const float xs[] = {0, 0, 0, 300, 0, 0};
        build(&tp, xs, 2, 2.0f);
        pf_state_t st;
        pf_state_init(&st);
        const float dt = 0.05f, speed = 0.5f; /* 2 m per 4 s window, above 1.5 */
        for (int i = 0; i < 2000; ++i) {
            pf_vehicle_t veh = vehicle_at(i * dt * speed, 0.3f, 0.0f, speed);
            pf_command_t c;
            pf_follow(&p, &tp.path, &st, &veh, dt, &c);
            cr_assert(!c.stuck && !c.new_stuck_event && !c.teleport, "kind %d frame %d", kind, i);
        }
        cr_assert_eq(st.stuck_events, 0);
        /* Creeping below stuck_progress per window (1 m per 4 s) does
         * trigger: once in 9 s (at 4 s; the next window opens after the
         * 2 s recovery and would close at 10 s). */
        pf_state_init(&st);
        int events = 0;
        for (int i = 0; i < 180; ++i) {
            pf_vehicle_t veh = vehicle_at(i * dt * 0.25f, 0.0f, 0.0f, 0.25f);
            pf_command_t c;
            pf_follow(&p, &tp.path, &st, &veh, dt, &c);
            events += c.new_stuck_event;
        }
        cr_assert_eq(events, 1, "kind %d: %d events while creeping", kind, events);
    }
}

Test(path_follow, completion_brakes)
{
    pf_params_t p = pf_params_default(PF_PROPOSED);
    static test_path_t tp;
    const float xs[] = {0, 0, 0, 50, 0, 0};
    build(&tp, xs, 2, 2.0f);
    pf_state_t st;
    pf_state_init(&st);
    st.s = 45.0f;
    pf_vehicle_t veh = vehicle_at(46.0f, 0.5f, 0.0f, 4.0f);
    pf_command_t c;
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_eq(st.completed, 0);
    cr_assert_gt(c.throttle, 0.0f);
    veh = vehicle_at(48.0f, 0.5f, 0.0f, 4.0f);
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_eq(st.completed, 1);
    cr_assert_eq(c.throttle, -1.0f);
    cr_assert_eq(c.steering, 0.0f);
    cr_assert_float_eq(c.cte, 0.5f, 1e-5f);
    cr_assert(c.inside_corridor);
    veh = vehicle_at(49.0f, 3.0f, 0.0f, 0.1f);
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_eq(c.throttle, 0.0f, "standing still: no reverse");
    cr_assert(!c.inside_corridor);
}

/* vehicle_limits: the proposed target speed comes down to the vehicle's grip
 * and turn rate; with 0 it is Algorithm 1 whatever the vehicle. */
Test(path_follow, vehicle_limits_cap_the_target_speed)
{
    static test_path_t tp;
    /* A circle of radius 20 m, waypoints every 2 degrees. */
    for (int i = 0; i <= 180; ++i) {
        float a = (float)i * (3.14159265f / 90.0f);
        xyz_buf[3 * i] = 20.0f * cosf(a);
        xyz_buf[3 * i + 1] = 20.0f * sinf(a);
        xyz_buf[3 * i + 2] = 0.0f;
    }
    build(&tp, xyz_buf, 181, 3.0f);
    pf_params_t p = pf_params_default(PF_PROPOSED);
    vec3 pos = vec3_make(20.0f, 0.0f, 0.0f);
    vec3 p2;
    float k = pf_max_curvature(&p, &tp.path, pos, 0.0f, &p2);
    cr_assert_gt(k, 0.0f);
    cr_assert_float_eq(vec3_distance(p2, pos), p.dh, 1e-4f, "P~[2] is dh from the vehicle");
    float v_paper = pf_target_speed(&p, &tp.path, pos, 0.0f);
    cr_assert_float_eq(v_paper, fminf(sqrtf(0.4f * 9.81f / k), 10.0f), 1e-4f);
    /* Facing along the circle, the heading curve bends like the circle. */
    const float yaw = 1.5707963f;
    float kh = pf_bezier_max_curvature(vec3_make(20.0f, -p.dh, 0.0f), pos, p2);
    float k_eff = fmaxf(k, kh);
    cr_assert_lt(k_eff, 1.5f * k, "no more than the circle's own curves (%g vs %g)", (double)kh, (double)k);
    pf_state_t st;
    pf_command_t c;
    /* Plenty of grip, no yaw cap. */
    pf_vehicle_t veh = {.pos = pos, .yaw = yaw, .wheelbase = 2.5f, .max_steer = 0.6f, .traction = 0.9f};
    pf_state_init(&st);
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_float_eq(c.target_speed, fminf(sqrtf(0.4f * 9.81f / k_eff), 10.0f), 1e-4f);
    /* 0.2 g of grip: eq. (1) with 0.2 instead of 0.4. */
    veh.traction = 0.2f;
    pf_state_init(&st);
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_float_eq(c.target_speed, sqrtf(0.2f * 9.81f / k_eff), 1e-4f);
    /* A turn-rate cap of 0.2 rad/s: no faster than 0.2 / kappa. */
    veh.traction = 0.9f;
    veh.max_yaw_rate = 0.2f;
    pf_state_init(&st);
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_float_eq(c.target_speed, fmaxf(0.2f / k_eff, p.v_min), 1e-4f);
    cr_assert_lt(c.target_speed, v_paper);
    /* vehicle_limits 0: the paper's Algorithm 1 whatever the vehicle. */
    p.vehicle_limits = 0;
    veh.traction = 0.1f;
    pf_state_init(&st);
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_float_eq(c.target_speed, v_paper, 1e-5f);
}

/* Mid-corner: on a straight path but facing 60 degrees off it, Algorithm 1
 * alone asks for v_max; with vehicle_limits the heading curve slows it. */
Test(path_follow, vehicle_limits_slow_a_vehicle_facing_off_the_path)
{
    static test_path_t tp;
    const float line[] = {0, 0, 0, 100, 0, 0};
    build(&tp, line, 2, 3.0f);
    pf_params_t p = pf_params_default(PF_PROPOSED);
    pf_vehicle_t veh = {.pos = vec3_make(10.0f, 0.0f, 0.0f),
                        .yaw = 1.0471976f,
                        .v = 5.0f,
                        .wheelbase = 2.5f,
                        .max_steer = 0.6f,
                        .traction = 0.9f};
    pf_state_t st;
    pf_command_t c;
    pf_state_init(&st);
    st.s = 10.0f;
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_lt(c.target_speed, 0.7f * p.v_max, "facing 60 degrees off: %g m/s", (double)c.target_speed);
    veh.yaw = 0.0f; /* facing along it */
    pf_state_init(&st);
    st.s = 10.0f;
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_float_eq(c.target_speed, p.v_max, 1e-6f);
    p.vehicle_limits = 0;
    veh.yaw = 1.0471976f;
    pf_state_init(&st);
    st.s = 10.0f;
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_float_eq(c.target_speed, p.v_max, 1e-6f, "Algorithm 1 alone ignores the facing");
}

/* Turned right round (90 and 150 degrees off a straight path), a vehicle
 * is at full lock whatever its speed: going slower does not tighten a
 * bicycle's turn below tan(max_steer) / wheelbase. The heading curve then
 * counts no tighter than that turn, so the target stays at eq. (1)'s speed
 * for the vehicle's tightest circle instead of falling to v_min (on the
 * switchbacks' uphill hairpin the apc crawled there at 0.6 m/s and the
 * stuck manager fired four times). */
Test(path_follow, vehicle_limits_heading_curve_no_tighter_than_the_vehicle)
{
    static test_path_t tp;
    const float line[] = {0, 0, 0, 100, 0, 0};
    build(&tp, line, 2, 3.0f);
    pf_params_t p = pf_params_default(PF_PROPOSED);
    /* a truck: 6 m wheelbase, 25 degrees of lock: its tightest circle 12.9 m */
    pf_vehicle_t veh = {.pos = vec3_make(10.0f, 0.0f, 0.0f),
                        .yaw = 1.5707963f,
                        .v = 2.0f,
                        .wheelbase = 6.0f,
                        .max_steer = 0.4363323f,
                        .traction = 0.6f};
    float k_vehicle = pf_vehicle_max_curvature(&veh);
    cr_assert_float_eq(k_vehicle, tanf(0.4363323f) / 6.0f, 1e-6f);
    float v_tightest = sqrtf(0.4f * 9.81f / k_vehicle); /* 7.1 m/s */
    const float yaws[2] = {1.5707963f, 2.6179939f};
    for (int i = 0; i < 2; ++i) {
        pf_state_t st;
        pf_command_t c;
        veh.yaw = yaws[i];
        pf_state_init(&st);
        st.s = 10.0f;
        pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
        cr_assert_float_eq(c.target_speed, v_tightest, 1e-3f, "facing %g rad off: %g m/s, not %g",
                           (double)yaws[i], (double)c.target_speed, (double)v_tightest);
        cr_assert_float_eq(fabsf(c.steering), 1.0f, 1e-6f, "and at full lock");
    }
    /* A vehicle with a yaw cap still turns tighter the slower it goes, down
     * to its geometry: its speed is capped by max_yaw_rate / kappa there. */
    veh.max_yaw_rate = 0.5f;
    veh.yaw = 1.5707963f;
    pf_state_t st;
    pf_command_t c;
    pf_state_init(&st);
    st.s = 10.0f;
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_float_eq(c.target_speed, 0.5f / k_vehicle, 1e-3f);
    /* Algorithm 1 alone is unchanged: it ignores the facing. */
    p.vehicle_limits = 0;
    veh.max_yaw_rate = 0.0f;
    pf_state_init(&st);
    st.s = 10.0f;
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_float_eq(c.target_speed, p.v_max, 1e-6f);
}

/* A closed route ends where it starts: standing at its start is not
 * completing it; coming round to the end is. */
Test(path_follow, a_loop_is_not_completed_at_its_start)
{
    pf_params_t p = pf_params_default(PF_PROPOSED);
    static test_path_t tp;
    const float loop[] = {0, 0, 0, -40, 0, 0, -40, -40, 0, 0, -40, 0, 0, 0, 0};
    build(&tp, loop, 5, 4.0f);
    pf_state_t st;
    pf_state_init(&st);
    pf_vehicle_t veh = vehicle_at(0.0f, 0.0f, 3.14159265f, 0.0f);
    pf_command_t c;
    for (int i = 0; i < 10; ++i) pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_eq(st.completed, 0, "at the start of a loop");
    cr_assert_gt(c.throttle, 0.0f, "it drives off");
    /* Round the loop: progress near the end, 2 m before the end point. */
    st.s = 150.0f;
    veh = vehicle_at(0.0f, -2.0f, 1.5707963f, 4.0f);
    pf_follow(&p, &tp.path, &st, &veh, 0.05f, &c);
    cr_assert_eq(st.completed, 1, "at the end of the loop (s = %g)", (double)st.s);
}

/* A whole drive: the follower on a bicycle with first-order longitudinal
 * response along a path with a 90 degree corner; it completes without
 * leaving the corridor or getting stuck, slower through the corner. */
Test(path_follow, drives_a_corner_to_completion)
{
    for (int kind = 0; kind < 2; ++kind) {
        pf_params_t p = pf_params_default((pf_kind_t)kind);
        static test_path_t tp;
        const float xs[] = {0, 0, 0, 60, 0, 0, 60, 60, 0};
        build(&tp, xs, 3, 4.0f);
        pf_state_t st;
        pf_state_init(&st);
        pf_vehicle_t veh = vehicle_at(0.0f, 0.0f, 0.0f, 0.0f);
        const float dt = 0.02f;
        float max_cte = 0.0f, corner_speed = 100.0f, top_speed = 0.0f;
        int i;
        for (i = 0; i < 5000 && !st.completed; ++i) {
            pf_command_t c;
            pf_follow(&p, &tp.path, &st, &veh, dt, &c);
            cr_assert(isfinite(c.throttle) && isfinite(c.steering));
            float delta = c.steering * veh.max_steer;
            veh.pos.x += veh.v * cosf(veh.yaw) * dt;
            veh.pos.y += veh.v * sinf(veh.yaw) * dt;
            veh.yaw += veh.v * tanf(delta) / veh.wheelbase * dt;
            veh.v += 4.0f * c.throttle * dt;
            max_cte = fmaxf(max_cte, c.cte);
            top_speed = fmaxf(top_speed, veh.v);
            if (fabsf(st.s - 60.0f) < 3.0f) corner_speed = fminf(corner_speed, veh.v);
        }
        cr_log_info("kind %d: done in %g s, max cte %g, top %g, corner %g", kind, i * dt, (double)max_cte,
                    (double)top_speed, (double)corner_speed);
        cr_assert(st.completed, "kind %d: not done after %g s (s %g)", kind, i * dt, (double)st.s);
        cr_assert_eq(st.stuck_events, 0);
        cr_assert_lt(max_cte, tp.path.half_width, "kind %d left the corridor: %g", kind, (double)max_cte);
        cr_assert_lt(corner_speed, 0.8f * top_speed);
    }
}

/* ---- 7. Baseline target speed ------------------------------------------- */

Test(path_follow, baseline_target_speed)
{
    pf_params_t p = pf_params_default(PF_BASELINE);
    static test_path_t tp;
    const float straight[] = {0, 0, 0, 100, 0, 0};
    build(&tp, straight, 2, 2.0f);
    cr_assert_eq(pf_baseline_target_speed(&p, &tp.path, vec3_make(1, 0, 0), 0.0f, 15.0f), p.v_max);
    /* A 90 degree turn 10 m ahead, within the 15 m lookahead. */
    const float turn[] = {0, 0, 0, 10, 0, 0, 10, 50, 0};
    build(&tp, turn, 3, 2.0f);
    float expect = p.v_max / (1.0f + p.baseline_gain * VEC_HALF_PI);
    cr_assert_float_eq(pf_baseline_target_speed(&p, &tp.path, vec3_make(1, 0, 0), 0.0f, 15.0f), expect,
                       1e-5f);
    /* The same turn beyond the lookahead (or just reached by it) does not count. */
    cr_assert_eq(pf_baseline_target_speed(&p, &tp.path, vec3_make(1, 0, 0), 0.0f, 9.0f), p.v_max);
    cr_assert_eq(pf_baseline_target_speed(&p, &tp.path, vec3_make(1, 0, 0), 0.0f, 10.0f), p.v_max);
    /* The angle is to the forward vector: heading 45 degrees off the first
     * segment sees 45 degrees on it and 45 on the second. */
    float d = sqrtf(0.5f);
    cr_assert_float_eq(pf_baseline_target_speed(&p, &tp.path, vec3_make(d, d, 0), 0.0f, 15.0f),
                       p.v_max / (1.0f + p.baseline_gain * VEC_PI / 4.0f), 1e-4f);
    /* A U-turn clamps at v_min. */
    const float uturn[] = {0, 0, 0, 10, 0, 0, 0, 0.5f, 0};
    build(&tp, uturn, 3, 2.0f);
    p.baseline_gain = 10.0f;
    cr_assert_eq(pf_baseline_target_speed(&p, &tp.path, vec3_make(1, 0, 0), 0.0f, 15.0f), p.v_min);
}
