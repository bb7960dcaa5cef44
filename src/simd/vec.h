/* Scalar vector math: vec2, vec3 and unit quaternions, by value, in float.
 *
 * For per-agent scalar code (setup, controllers of single agents, tests);
 * hot loops over many agents use SoA columns and lanes.h instead.
 *
 * Frame (docs/design.md, "Units and frames"): right-handed, z up; 2D is the x-y
 * plane with angles counter-clockwise from +x. A body's forward axis is +x,
 * left is +y, up is +z. Quaternions are (w, x, y, z), rotating body vectors
 * into the world: v_world = q v_body q*.
 *
 * Where math could divide by zero, nothing returns NaN: normalizing a zero
 * (or NaN, or infinite) vector gives the zero vector, a zero quaternion
 * normalizes to the identity, and axis-angle conversions are safe at zero.
 */
#ifndef SHOAL_VEC_H
#define SHOAL_VEC_H

#include <math.h>

/* Float constants: M_PI is not part of C11. VEC_PI is the float nearest to
 * pi (slightly above it), so [-VEC_PI, VEC_PI] contains [-pi, pi]. */
#define VEC_PI 3.14159265358979323846f
#define VEC_TWO_PI 6.28318530717958647692f
#define VEC_HALF_PI 1.57079632679489661923f

typedef struct vec2 {
    float x, y;
} vec2;
typedef struct vec3 {
    float x, y, z;
} vec3;
typedef struct quat {
    float w, x, y, z;
} quat;

/* ------------------------------------------------------------------------ */
/* Angles                                                                     */
/* ------------------------------------------------------------------------ */

/* a wrapped to [-VEC_PI, VEC_PI]. Angles already in range come back
 * unchanged (bit for bit), so small angles keep their precision; the rest are
 * reduced in double, so even 1e6 rad comes back correct to float rounding
 * (a float multiple of 2 pi would be off by ~0.03 rad there). NaN and
 * infinities give 0. */
static inline float angle_wrap(float a)
{
    if (a >= -VEC_PI && a <= VEC_PI) return a;
    if (!isfinite(a)) return 0.0f;
    const double two_pi = 6.28318530717958647692;
    double r = fmod((double)a, two_pi); /* exact, in (-2pi, 2pi) */
    if (r > 0.5 * two_pi)
        r -= two_pi;
    else if (r < -0.5 * two_pi)
        r += two_pi;
    /* |r| <= pi in double; rounding to float cannot pass VEC_PI, the float
     * nearest to pi. */
    return (float)r;
}

/* Signed shortest turn from `from` to `to`, in [-VEC_PI, VEC_PI]. */
static inline float angle_diff(float to, float from) { return angle_wrap(to - from); }

/* ------------------------------------------------------------------------ */
/* vec2                                                                       */
/* ------------------------------------------------------------------------ */

static inline vec2 vec2_make(float x, float y) { return (vec2){x, y}; }
static inline vec2 vec2_zero(void) { return (vec2){0.0f, 0.0f}; }
static inline vec2 vec2_add(vec2 a, vec2 b) { return (vec2){a.x + b.x, a.y + b.y}; }
static inline vec2 vec2_sub(vec2 a, vec2 b) { return (vec2){a.x - b.x, a.y - b.y}; }
static inline vec2 vec2_scale(vec2 a, float s) { return (vec2){a.x * s, a.y * s}; }
static inline vec2 vec2_neg(vec2 a) { return (vec2){-a.x, -a.y}; }
static inline float vec2_dot(vec2 a, vec2 b) { return a.x * b.x + a.y * b.y; }
/* z of the 3D cross product (the perp-dot): > 0 when b is counter-clockwise
 * of a, |a||b| sin(angle from a to b). */
static inline float vec2_cross(vec2 a, vec2 b) { return a.x * b.y - a.y * b.x; }
/* a turned +90 degrees (counter-clockwise): the left normal of a heading. */
static inline vec2 vec2_perp(vec2 a) { return (vec2){-a.y, a.x}; }
static inline float vec2_length_sq(vec2 a) { return vec2_dot(a, a); }
static inline float vec2_length(vec2 a) { return sqrtf(vec2_dot(a, a)); }
static inline float vec2_distance(vec2 a, vec2 b) { return vec2_length(vec2_sub(a, b)); }

/* Unit vector along a, or (0, 0) when a has no direction (zero, NaN or
 * infinite components). Rescales first when the squared length would
 * underflow or overflow, so 1e-30 and 1e30 vectors still normalize. */
static inline vec2 vec2_normalize(vec2 a)
{
    float len = vec2_length(a);
    if (len > 0.0f && len < INFINITY) return (vec2){a.x / len, a.y / len};
    if (isnan(len)) return vec2_zero(); /* fmaxf below would skip a NaN */
    float m = fmaxf(fabsf(a.x), fabsf(a.y));
    if (!(m > 0.0f && m < INFINITY)) return vec2_zero();
    a = (vec2){a.x / m, a.y / m}; /* divide, not multiply by 1/m: 1/denormal overflows */
    len = vec2_length(a);
    return (vec2){a.x / len, a.y / len};
}

/* a shortened to at most max_len (>= 0), direction kept: steering's
 * "truncate". */
static inline vec2 vec2_clamp_length(vec2 a, float max_len)
{
    float len_sq = vec2_length_sq(a);
    if (!(len_sq > max_len * max_len)) return a;
    return vec2_scale(vec2_normalize(a), max_len);
}

/* a rotated counter-clockwise by `angle` radians. */
static inline vec2 vec2_rotate(vec2 a, float angle)
{
    float c = cosf(angle), s = sinf(angle);
    return (vec2){c * a.x - s * a.y, s * a.x + c * a.y};
}

/* Unit heading for an angle, and the angle of a vector (atan2; 0 for zero). */
static inline vec2 vec2_from_angle(float angle) { return (vec2){cosf(angle), sinf(angle)}; }
static inline float vec2_angle(vec2 a) { return atan2f(a.y, a.x); }

/* ------------------------------------------------------------------------ */
/* vec3                                                                       */
/* ------------------------------------------------------------------------ */

static inline vec3 vec3_make(float x, float y, float z) { return (vec3){x, y, z}; }
static inline vec3 vec3_zero(void) { return (vec3){0.0f, 0.0f, 0.0f}; }
static inline vec3 vec3_add(vec3 a, vec3 b) { return (vec3){a.x + b.x, a.y + b.y, a.z + b.z}; }
static inline vec3 vec3_sub(vec3 a, vec3 b) { return (vec3){a.x - b.x, a.y - b.y, a.z - b.z}; }
static inline vec3 vec3_scale(vec3 a, float s) { return (vec3){a.x * s, a.y * s, a.z * s}; }
static inline vec3 vec3_neg(vec3 a) { return (vec3){-a.x, -a.y, -a.z}; }
static inline float vec3_dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline vec3 vec3_cross(vec3 a, vec3 b)
{
    return (vec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static inline float vec3_length_sq(vec3 a) { return vec3_dot(a, a); }
static inline float vec3_length(vec3 a) { return sqrtf(vec3_dot(a, a)); }
static inline float vec3_distance(vec3 a, vec3 b) { return vec3_length(vec3_sub(a, b)); }

/* As vec2_normalize: (0, 0, 0) when there is no direction, never NaN. */
static inline vec3 vec3_normalize(vec3 a)
{
    float len = vec3_length(a);
    if (len > 0.0f && len < INFINITY) return (vec3){a.x / len, a.y / len, a.z / len};
    if (isnan(len)) return vec3_zero();
    float m = fmaxf(fabsf(a.x), fmaxf(fabsf(a.y), fabsf(a.z)));
    if (!(m > 0.0f && m < INFINITY)) return vec3_zero();
    a = (vec3){a.x / m, a.y / m, a.z / m};
    len = vec3_length(a);
    return (vec3){a.x / len, a.y / len, a.z / len};
}

static inline vec3 vec3_clamp_length(vec3 a, float max_len)
{
    float len_sq = vec3_length_sq(a);
    if (!(len_sq > max_len * max_len)) return a;
    return vec3_scale(vec3_normalize(a), max_len);
}

/* ------------------------------------------------------------------------ */
/* Quaternions                                                                */
/* ------------------------------------------------------------------------ */

static inline quat quat_identity(void) { return (quat){1.0f, 0.0f, 0.0f, 0.0f}; }
static inline float quat_dot(quat a, quat b) { return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z; }

/* Hamilton product: rotating by quat_mul(a, b) rotates by b first, then a. */
static inline quat quat_mul(quat a, quat b)
{
    return (quat){
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
    };
}

/* The inverse rotation, for a unit quaternion. */
static inline quat quat_conj(quat q) { return (quat){q.w, -q.x, -q.y, -q.z}; }

/* Unit quaternion along q; the identity when q is zero, NaN or infinite
 * (there is no rotation to keep). */
static inline quat quat_normalize(quat q)
{
    float len = sqrtf(quat_dot(q, q));
    if (!(len > 0.0f && len < INFINITY)) return quat_identity();
    return (quat){q.w / len, q.x / len, q.y / len, q.z / len};
}

/* q v q* without building quaternions: v + 2w (u x v) + 2 u x (u x v), with
 * u the vector part. Assumes |q| = 1. */
static inline vec3 quat_rotate(quat q, vec3 v)
{
    vec3 u = {q.x, q.y, q.z};
    vec3 t = vec3_scale(vec3_cross(u, v), 2.0f);
    return vec3_add(vec3_add(v, vec3_scale(t, q.w)), vec3_cross(u, t));
}

/* q* v q: a world vector expressed in the body frame. */
static inline vec3 quat_unrotate(quat q, vec3 v) { return quat_rotate(quat_conj(q), v); }

/* The body's forward axis (+x) in the world. */
static inline vec3 quat_forward(quat q) { return quat_rotate(q, (vec3){1.0f, 0.0f, 0.0f}); }

/* Right-handed rotation by `angle` about `axis` (any length; normalized
 * here). A zero axis gives the identity. */
static inline quat quat_from_axis_angle(vec3 axis, float angle)
{
    vec3 u = vec3_normalize(axis);
    if (u.x == 0.0f && u.y == 0.0f && u.z == 0.0f) return quat_identity();
    float s = sinf(0.5f * angle);
    return (quat){cosf(0.5f * angle), u.x * s, u.y * s, u.z * s};
}

/* Angle in [0, pi] and unit axis of the shortest rotation equal to q (q and
 * -q are the same rotation; the one with w >= 0 is taken). atan2 keeps the
 * angle accurate near 0 where acos(w) would not. At angle 0 the axis is +x
 * (any axis would do). `axis` may be NULL. */
static inline float quat_to_axis_angle(quat q, vec3* axis)
{
    if (q.w < 0.0f) q = (quat){-q.w, -q.x, -q.y, -q.z};
    vec3 v = {q.x, q.y, q.z};
    float s = vec3_length(v);
    vec3 u = vec3_normalize(v);
    if (u.x == 0.0f && u.y == 0.0f && u.z == 0.0f) u = (vec3){1.0f, 0.0f, 0.0f};
    if (axis) *axis = u;
    return 2.0f * atan2f(s, q.w);
}

/* A yaw rotation in the x-y plane: how 2D agents store their heading. */
static inline quat quat_from_yaw(float yaw) { return (quat){cosf(0.5f * yaw), 0.0f, 0.0f, sinf(0.5f * yaw)}; }

/* Orientation from yaw, pitch and roll, applied intrinsically z-y-x: yaw
 * about z, then pitch about the new y, then roll about the new x.
 *   yaw   > 0 turns the nose left (counter-clockwise seen from above, +x
 *         toward +y), matching 2D headings;
 *   pitch > 0 is nose up (+x toward +z). A right-handed rotation about +y by
 *         +p takes +x toward -z, so nose-up pitch p is a rotation of -p about
 *         the body y axis;
 *   roll  > 0 is a right-handed rotation about the body x axis: left wing
 *         (+y) up, right wing down, i.e. banking right.
 * The forward axis ends up at (cos p cos y, cos p sin y, sin p). */
static inline quat quat_from_yaw_pitch_roll(float yaw, float pitch, float roll)
{
    quat qz = {cosf(0.5f * yaw), 0.0f, 0.0f, sinf(0.5f * yaw)};
    quat qy = {cosf(0.5f * pitch), 0.0f, -sinf(0.5f * pitch), 0.0f};
    quat qx = {cosf(0.5f * roll), sinf(0.5f * roll), 0.0f, 0.0f};
    return quat_mul(quat_mul(qz, qy), qx);
}

/* Heading of the forward axis in the x-y plane, in [-pi, pi]. Pointing
 * straight up or down it is ill-conditioned (0 when exactly vertical), never
 * NaN. */
static inline float quat_yaw(quat q)
{
    vec3 f = quat_forward(q);
    return atan2f(f.y, f.x);
}

/* Elevation of the forward axis above the x-y plane, in [-pi/2, pi/2], nose
 * up positive: the inverse of quat_from_yaw_pitch_roll's pitch for
 * |pitch| < pi/2. */
static inline float quat_pitch(quat q)
{
    vec3 f = quat_forward(q);
    return atan2f(f.z, sqrtf(f.x * f.x + f.y * f.y));
}

/* One explicit step of dq/dt = 0.5 (0, omega) q for an angular velocity
 * omega given in the world frame (rad/s), then renormalized so errors do not
 * accumulate in |q|. (A body-frame omega would multiply on the right.) */
static inline quat quat_integrate(quat q, vec3 omega, float dt)
{
    quat w = {0.0f, omega.x, omega.y, omega.z};
    quat d = quat_mul(w, q);
    float h = 0.5f * dt;
    return quat_normalize((quat){q.w + h * d.w, q.x + h * d.x, q.y + h * d.y, q.z + h * d.z});
}

#endif /* SHOAL_VEC_H */
