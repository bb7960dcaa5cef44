/* Scalar vector and quaternion math: identities that hold for any input
 * (checked on many random values from fixed seeds), the sign conventions
 * written in vec.h, and the never-NaN promises at the edges. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "simd/vec.h"
#include "support.h"

static vec3 random_vec3(uint64_t* s, float r)
{
    return vec3_make(uniform(s, -r, r), uniform(s, -r, r), uniform(s, -r, r));
}

static quat random_quat(uint64_t* s)
{
    quat q = {uniform(s, -1, 1), uniform(s, -1, 1), uniform(s, -1, 1), uniform(s, -1, 1)};
    return quat_normalize(q);
}

static bool near(float a, float b, float tol) { return fabsf(a - b) <= tol; }
static bool vec3_near(vec3 a, vec3 b, float tol)
{
    return near(a.x, b.x, tol) && near(a.y, b.y, tol) && near(a.z, b.z, tol);
}
/* q and -q are the same rotation. */
static bool quat_same_rotation(quat a, quat b, float tol)
{
    return fabsf(fabsf(quat_dot(a, b)) - 1.0f) <= tol;
}

enum { N = 2000 };

Test(vec, angle_wrap_range_and_value)
{
    uint64_t s = 0xa11e;
    for (int i = 0; i < N; i++) {
        float a = i < N / 2 ? uniform(&s, -50.0f, 50.0f) : uniform(&s, -1e6f, 1e6f);
        float w = angle_wrap(a);
        cr_assert(w >= -VEC_PI && w <= VEC_PI, "wrap(%g) = %g", a, w);
        /* Same direction: a and w differ by a whole number of turns. */
        double turns = ((double)a - (double)w) / (2.0 * 3.14159265358979323846);
        cr_assert(fabs(turns - round(turns)) < 1e-6, "wrap(%g) = %g is %g turns away", a, w, turns);
    }
    cr_assert(near(angle_wrap(1.5f * VEC_PI), -0.5f * VEC_PI, 1e-6f));
    cr_assert(near(angle_wrap(-1.5f * VEC_PI), 0.5f * VEC_PI, 1e-6f));
    cr_assert(near(angle_wrap(2.0f * VEC_PI + 0.1f), 0.1f, 1e-6f));
    float odd = angle_wrap(-7.0f * VEC_PI); /* an odd number of half turns: +-pi */
    cr_assert(near(fabsf(odd), VEC_PI, 1e-5f), "wrap(-7 pi) = %g", odd);
    /* In range: unchanged to the bit, small angles included. */
    cr_assert_eq(angle_wrap(1e-30f), 1e-30f);
    cr_assert_eq(angle_wrap(-3.0f), -3.0f);
    cr_assert_eq(angle_wrap(VEC_PI), VEC_PI);
    cr_assert_eq(angle_wrap(NAN), 0.0f);
    cr_assert_eq(angle_wrap(INFINITY), 0.0f);
    cr_assert(fabsf(angle_wrap(FLT_MAX)) <= VEC_PI);
}

Test(vec, angle_diff_is_shortest_turn)
{
    /* Across +-pi the short way is a small positive turn. */
    cr_assert(near(angle_diff(-3.0f, 3.0f), 2.0f * VEC_PI - 6.0f, 1e-6f));
    cr_assert(near(angle_diff(3.0f, -3.0f), 6.0f - 2.0f * VEC_PI, 1e-6f));
    cr_assert(near(angle_diff(0.5f, 0.25f), 0.25f, 1e-7f));
}

Test(vec, vec2_basics)
{
    vec2 x = {1, 0}, y = {0, 1};
    cr_assert_eq(vec2_cross(x, y), 1.0f);
    cr_assert_eq(vec2_cross(y, x), -1.0f);
    cr_assert_eq(vec2_dot(x, y), 0.0f);
    vec2 p = vec2_perp(x);
    cr_assert(p.x == 0.0f && p.y == 1.0f);
    vec2 r = vec2_rotate(x, VEC_HALF_PI);
    cr_assert(near(r.x, 0.0f, 1e-7f) && near(r.y, 1.0f, 1e-7f), "x by pi/2 = (%g, %g)", r.x, r.y);
    r = vec2_rotate(x, VEC_PI);
    cr_assert(near(r.x, -1.0f, 1e-7f) && near(r.y, 0.0f, 1e-6f));
    vec2 a = {3, -4};
    cr_assert_eq(vec2_length(a), 5.0f);
    cr_assert_eq(vec2_length_sq(a), 25.0f);
    cr_assert_eq(vec2_distance(a, vec2_zero()), 5.0f);
    vec2 c = vec2_clamp_length(a, 2.5f);
    cr_assert(near(c.x, 1.5f, 1e-6f) && near(c.y, -2.0f, 1e-6f));
    c = vec2_clamp_length(a, 10.0f);
    cr_assert(c.x == 3.0f && c.y == -4.0f);
    cr_assert(near(vec2_angle(vec2_from_angle(2.0f)), 2.0f, 1e-6f));
    vec2 s = vec2_sub(vec2_add(a, x), vec2_scale(x, 1.0f));
    cr_assert(s.x == a.x && s.y == a.y);
    cr_assert(vec2_neg(a).x == -3.0f && vec2_make(7, 8).y == 8.0f);
}

Test(vec, vec2_rotate_preserves_length_and_inverts)
{
    uint64_t s = 0xbeef;
    for (int i = 0; i < N; i++) {
        vec2 v = {uniform(&s, -100, 100), uniform(&s, -100, 100)};
        float ang = uniform(&s, -10, 10);
        vec2 r = vec2_rotate(v, ang);
        cr_assert(near(vec2_length(r), vec2_length(v), 1e-5f * vec2_length(v) + 1e-6f));
        /* The rotation angle is recovered by cross and dot. */
        float got = atan2f(vec2_cross(v, r), vec2_dot(v, r));
        cr_assert(near(angle_diff(got, ang), 0.0f, 1e-4f), "rotated by %g, measured %g", ang, got);
        vec2 back = vec2_rotate(r, -ang);
        cr_assert(near(back.x, v.x, 1e-4f) && near(back.y, v.y, 1e-4f));
    }
}

Test(vec, normalize_is_safe)
{
    vec2 z2 = vec2_normalize(vec2_zero());
    cr_assert(z2.x == 0.0f && z2.y == 0.0f, "normalize(0) = (%g, %g)", z2.x, z2.y);
    vec3 z3 = vec3_normalize(vec3_zero());
    cr_assert(z3.x == 0.0f && z3.y == 0.0f && z3.z == 0.0f);
    vec2 n2 = vec2_normalize(vec2_make(NAN, 1.0f));
    cr_assert(n2.x == 0.0f && n2.y == 0.0f);
    vec3 n3 = vec3_normalize(vec3_make(1.0f, INFINITY, 0.0f));
    cr_assert(n3.x == 0.0f && n3.y == 0.0f && n3.z == 0.0f);
    n3 = vec3_normalize(vec3_make(0.0f, 2.0f, NAN));
    cr_assert(n3.x == 0.0f && n3.y == 0.0f && n3.z == 0.0f);
    /* Squares underflow or overflow; the direction must still come out. */
    vec2 t = vec2_normalize(vec2_make(1e-30f, -1e-30f));
    cr_assert(near(t.x, 0.70710678f, 1e-6f) && near(t.y, -0.70710678f, 1e-6f), "(%g, %g)", t.x, t.y);
    vec2 d = vec2_normalize(vec2_make(FLT_TRUE_MIN, 0.0f));
    cr_assert(d.x == 1.0f && d.y == 0.0f);
    vec3 h = vec3_normalize(vec3_make(3e38f, 0.0f, -3e38f));
    cr_assert(near(h.x, 0.70710678f, 1e-6f) && h.y == 0.0f && near(h.z, -0.70710678f, 1e-6f));
    uint64_t s = 0x5afe;
    for (int i = 0; i < N; i++) {
        vec3 v = random_vec3(&s, 1000.0f);
        cr_assert(near(vec3_length(vec3_normalize(v)), 1.0f, 1e-6f));
        vec2 w = {v.x, v.y};
        cr_assert(near(vec2_length(vec2_normalize(w)), 1.0f, 1e-6f));
    }
}

Test(vec, vec3_cross_identities)
{
    vec3 x = {1, 0, 0}, y = {0, 1, 0}, z = {0, 0, 1};
    vec3 c = vec3_cross(x, y);
    cr_assert(c.x == 0.0f && c.y == 0.0f && c.z == 1.0f, "x cross y must be +z (right-handed)");
    c = vec3_cross(y, z);
    cr_assert(c.x == 1.0f && c.y == 0.0f && c.z == 0.0f);
    uint64_t s = 0xc705;
    for (int i = 0; i < N; i++) {
        vec3 a = random_vec3(&s, 10.0f), b = random_vec3(&s, 10.0f);
        vec3 k = vec3_cross(a, b);
        float scale = vec3_length(a) * vec3_length(b);
        cr_assert(near(vec3_dot(k, a), 0.0f, 1e-5f * scale * vec3_length(a)));
        cr_assert(near(vec3_dot(k, b), 0.0f, 1e-5f * scale * vec3_length(b)));
        /* |a x b|^2 + (a.b)^2 = |a|^2 |b|^2 (Lagrange). */
        float lhs = vec3_length_sq(k) + vec3_dot(a, b) * vec3_dot(a, b);
        cr_assert(near(lhs, scale * scale, 1e-5f * scale * scale));
        vec3 kb = vec3_cross(b, a);
        cr_assert(kb.x == -k.x && kb.y == -k.y && kb.z == -k.z);
    }
    vec3 v = vec3_sub(vec3_add(x, vec3_scale(y, 2.0f)), vec3_neg(z));
    cr_assert(v.x == 1.0f && v.y == 2.0f && v.z == 1.0f);
    cr_assert_eq(vec3_distance(x, y), sqrtf(2.0f));
    vec3 cl = vec3_clamp_length(vec3_make(0, 6, 8), 5.0f);
    cr_assert(near(cl.y, 3.0f, 1e-6f) && near(cl.z, 4.0f, 1e-6f));
}

Test(vec, quat_times_conjugate_is_identity)
{
    uint64_t s = 0x9a7;
    for (int i = 0; i < N; i++) {
        quat q = random_quat(&s);
        quat e = quat_mul(q, quat_conj(q));
        cr_assert(near(e.w, 1.0f, 1e-6f) && vec3_near(vec3_make(e.x, e.y, e.z), vec3_zero(), 1e-6f));
        quat r = quat_mul(quat_identity(), q);
        cr_assert(r.w == q.w && r.x == q.x && r.y == q.y && r.z == q.z);
        cr_assert(near(sqrtf(quat_dot(q, q)), 1.0f, 1e-6f));
    }
}

Test(vec, quat_rotate_preserves_length_and_matches_sandwich)
{
    uint64_t s = 0x707a7e;
    for (int i = 0; i < N; i++) {
        quat q = random_quat(&s);
        vec3 v = random_vec3(&s, 50.0f);
        vec3 r = quat_rotate(q, v);
        float len = vec3_length(v);
        cr_assert(near(vec3_length(r), len, 1e-5f * len + 1e-6f));
        /* The slow definition: q (0, v) q*. */
        quat p = quat_mul(quat_mul(q, (quat){0, v.x, v.y, v.z}), quat_conj(q));
        cr_assert(vec3_near(r, vec3_make(p.x, p.y, p.z), 1e-5f * len + 1e-6f));
        cr_assert(vec3_near(quat_unrotate(q, r), v, 1e-5f * len + 1e-6f));
        /* Composition: rotating by a*b is rotating by b, then a. */
        quat a = random_quat(&s);
        vec3 ab = quat_rotate(quat_mul(a, q), v);
        cr_assert(vec3_near(ab, quat_rotate(a, r), 1e-5f * len + 1e-6f));
    }
}

Test(vec, quat_axis_angle_is_right_handed)
{
    quat q = quat_from_axis_angle(vec3_make(0, 0, 2), VEC_HALF_PI); /* axis need not be unit */
    vec3 x = {1, 0, 0}, y = {0, 1, 0}, z = {0, 0, 1};
    cr_assert(vec3_near(quat_rotate(q, x), y, 1e-6f), "about +z: x -> y");
    q = quat_from_axis_angle(vec3_make(1, 0, 0), VEC_HALF_PI);
    cr_assert(vec3_near(quat_rotate(q, y), z, 1e-6f), "about +x: y -> z");
    q = quat_from_axis_angle(vec3_make(0, 1, 0), VEC_HALF_PI);
    cr_assert(vec3_near(quat_rotate(q, x), vec3_neg(z), 1e-6f), "about +y: x -> -z");
    q = quat_from_axis_angle(vec3_zero(), 1.0f);
    cr_assert(q.w == 1.0f && q.x == 0.0f && q.y == 0.0f && q.z == 0.0f);
}

Test(vec, quat_axis_angle_round_trip)
{
    uint64_t s = 0xa815;
    for (int i = 0; i < N; i++) {
        vec3 axis = vec3_normalize(random_vec3(&s, 1.0f));
        float angle = uniform(&s, 1e-3f, VEC_PI - 1e-3f);
        quat q = quat_from_axis_angle(axis, angle);
        vec3 got_axis;
        float got = quat_to_axis_angle(q, &got_axis);
        cr_assert(near(got, angle, 2e-6f * angle + 1e-6f), "angle %g -> %g", angle, got);
        cr_assert(vec3_near(got_axis, axis, 1e-3f), "axis lost at angle %g", angle);
        /* -q is the same rotation: same answer. */
        vec3 neg_axis;
        float neg = quat_to_axis_angle((quat){-q.w, -q.x, -q.y, -q.z}, &neg_axis);
        cr_assert(near(neg, got, 1e-6f) && vec3_near(neg_axis, got_axis, 1e-6f));
    }
    /* Shortest: 1.5 pi about +z is 0.5 pi about -z. */
    vec3 axis;
    float a = quat_to_axis_angle(quat_from_axis_angle(vec3_make(0, 0, 1), 1.5f * VEC_PI), &axis);
    cr_assert(near(a, 0.5f * VEC_PI, 1e-6f) && vec3_near(axis, vec3_make(0, 0, -1), 1e-6f), "%g", a);
    /* Near and at zero: accurate, no NaN. */
    a = quat_to_axis_angle(quat_from_axis_angle(vec3_make(0, 1, 0), 1e-6f), &axis);
    cr_assert(near(a, 1e-6f, 1e-12f), "tiny angle -> %g", a);
    cr_assert(vec3_near(axis, vec3_make(0, 1, 0), 1e-6f));
    a = quat_to_axis_angle(quat_identity(), &axis);
    cr_assert(a == 0.0f && axis.x == 1.0f && axis.y == 0.0f && axis.z == 0.0f);
    cr_assert_eq(quat_to_axis_angle(quat_identity(), NULL), 0.0f);
}

Test(vec, yaw_pitch_roll_conventions)
{
    vec3 f = quat_forward(quat_from_yaw_pitch_roll(VEC_HALF_PI, 0, 0));
    cr_assert(vec3_near(f, vec3_make(0, 1, 0), 1e-6f), "yaw +90 deg points the nose at +y (left)");
    f = quat_forward(quat_from_yaw_pitch_roll(0, 0.3f, 0));
    cr_assert(f.z > 0.29f && near(f.z, sinf(0.3f), 1e-6f), "pitch > 0 is nose up");
    quat roll = quat_from_yaw_pitch_roll(0, 0, 0.5f);
    vec3 left = quat_rotate(roll, vec3_make(0, 1, 0));
    cr_assert(near(left.z, sinf(0.5f), 1e-6f), "roll > 0 lifts the left wing");
    cr_assert(vec3_near(quat_forward(roll), vec3_make(1, 0, 0), 1e-6f), "roll keeps the nose");
    /* 2D heading and 3D yaw agree. */
    quat a = quat_from_yaw(1.2f), b = quat_from_yaw_pitch_roll(1.2f, 0, 0);
    cr_assert(quat_same_rotation(a, b, 1e-6f));
    /* Intrinsic order: yaw, then pitch about the yawed y axis. */
    uint64_t s = 0x7a3;
    for (int i = 0; i < N; i++) {
        float y = uniform(&s, -VEC_PI, VEC_PI), p = uniform(&s, -1.5f, 1.5f);
        float r = uniform(&s, -VEC_PI, VEC_PI);
        quat q = quat_from_yaw_pitch_roll(y, p, r);
        vec3 want = {cosf(p) * cosf(y), cosf(p) * sinf(y), sinf(p)};
        cr_assert(vec3_near(quat_forward(q), want, 2e-6f));
        quat composed = quat_mul(quat_mul(quat_from_axis_angle(vec3_make(0, 0, 1), y),
                                          quat_from_axis_angle(vec3_make(0, 1, 0), -p)),
                                 quat_from_axis_angle(vec3_make(1, 0, 0), r));
        cr_assert(quat_same_rotation(q, composed, 2e-6f));
    }
}

Test(vec, yaw_pitch_round_trip)
{
    uint64_t s = 0x9177;
    for (int i = 0; i < N; i++) {
        float y = uniform(&s, -3.1f, 3.1f), p = uniform(&s, -1.5f, 1.5f), r = uniform(&s, -3.1f, 3.1f);
        quat q = quat_from_yaw_pitch_roll(y, p, r);
        cr_assert(near(angle_diff(quat_yaw(q), y), 0.0f, 2e-5f), "yaw %g -> %g", y, quat_yaw(q));
        cr_assert(near(quat_pitch(q), p, 2e-5f), "pitch %g -> %g", p, quat_pitch(q));
    }
    cr_assert_eq(quat_pitch(quat_identity()), 0.0f);
    cr_assert_eq(quat_yaw(quat_identity()), 0.0f);
    float up = quat_pitch(quat_from_yaw_pitch_roll(0, VEC_HALF_PI, 0));
    cr_assert(near(up, VEC_HALF_PI, 1e-6f));
    cr_assert(!isnan(quat_yaw(quat_from_yaw_pitch_roll(0, VEC_HALF_PI, 0))));
}

Test(vec, quat_normalize_is_safe)
{
    quat z = quat_normalize((quat){0, 0, 0, 0});
    cr_assert(z.w == 1.0f && z.x == 0.0f && z.y == 0.0f && z.z == 0.0f);
    quat n = quat_normalize((quat){NAN, 0, 0, 0});
    cr_assert(n.w == 1.0f && !isnan(n.x));
    quat q = quat_normalize((quat){0, 0, 0, 2});
    cr_assert(q.w == 0.0f && q.z == 1.0f);
}

Test(vec, quat_integrate_world_frame)
{
    /* Constant yaw rate about world z from a pitched-up start: yaw grows at
     * omega, pitch stays. (A body-frame integration would spin about the
     * tilted body z and change the pitch.) */
    quat q = quat_from_yaw_pitch_roll(0.0f, 0.5f, 0.0f);
    const float dt = 1e-3f, rate = 1.0f;
    for (int i = 0; i < 1000; i++) q = quat_integrate(q, vec3_make(0, 0, rate), dt);
    cr_assert(near(sqrtf(quat_dot(q, q)), 1.0f, 1e-6f));
    cr_assert(near(quat_yaw(q), rate * 1.0f, 1e-3f), "yaw after 1 s: %g", quat_yaw(q));
    cr_assert(near(quat_pitch(q), 0.5f, 1e-3f), "pitch after yawing: %g", quat_pitch(q));
    /* Zero rate changes nothing; a rate about world y pitches a level nose down. */
    quat r = random_quat(&(uint64_t){3});
    quat same_r = quat_integrate(r, vec3_zero(), 0.1f);
    cr_assert(quat_same_rotation(r, same_r, 1e-6f));
    quat level = quat_identity();
    for (int i = 0; i < 100; i++) level = quat_integrate(level, vec3_make(0, 0.5f, 0), 1e-2f);
    cr_assert(near(quat_pitch(level), -0.5f, 1e-3f), "omega +y pitches down: %g", quat_pitch(level));
}
