/* Path following for ground vehicles (de Schaetzen and Sestini, "Efficient
 * ground vehicle path following in game AI"); the header says what each
 * module computes, this file how. Geometry that decides between cases
 * (Bezier curvature, the resampling of Algorithm 1) runs in double: the
 * inputs are floats, so differences and cross products of them are nearly
 * exact in double, and near-collinear control points then still give the
 * right case instead of rounding noise. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "base/msg.h"
#include "modules/ground/path_follow.h"

/* Gravitational acceleration of eq. (1), m/s^2. */
#define PF_GRAVITY 9.81f
/* Triangle area below this fraction of the squared longest side means the
 * three control points are collinear (eqs. (3)/(4) would divide by ~0). */
#define PF_COLLINEAR_AREA 1e-12
/* Algorithm 1 appends the path's end point when the resampling runs out of
 * path, unless it lies this close (m) to the last resampled point. */
#define PF_END_EPS 1e-4f
/* The projection searches this far (m) behind the current progress, so a
 * vehicle that slid back a little is still found where it is. */
#define PF_SEARCH_BEHIND 2.0f
/* ... and this far beyond progress + lookahead_max: room for a frame of
 * fast driving without reaching a far part of a path that doubles back. */
#define PF_SEARCH_AHEAD 10.0f
/* A teleport puts the vehicle this far (m) ahead of its progress: about two
 * vehicle lengths, past the corner or obstacle that held it (1 m was
 * measured to leave a truck stuck at the same corner again). */
#define PF_TELEPORT_AHEAD 10.0f
/* Pure pursuit returns straight wheels for a target closer than this (m):
 * the circle through a coincident target is undefined. */
#define PF_PP_MIN_DISTANCE 1e-6f
/* Relative slack on dh when a waypoint lies on the resampling sphere. */
#define PF_RESAMPLE_TOL 1e-5
/* Timers summed from float frame times drift by rounding: 40 frames of
 * 0.05 s leave 2 s - 40 dt slightly above 0. Within this many seconds a
 * timer counts as run out, so whole numbers of frames give whole windows. */
#define PF_TIME_EPS 1e-4f
/* Largest resampled path: Algorithm 1 costs O(n) per frame. */
#define PF_MAX_N 1000

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* ------------------------------------------------------------------------ */
/* Paths                                                                      */
/* ------------------------------------------------------------------------ */

/* Distance from waypoint i - 1 to waypoint i, in double. */
static double waypoint_gap(const float* xyz, int32_t i)
{
    const float* a = xyz + 3 * (size_t)(i - 1);
    double dx = (double)a[3] - a[0], dy = (double)a[4] - a[1], dz = (double)a[5] - a[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

int pf_path_build(pf_path_t* out, vec3* points_out, float* s_out, const float* xyz, int32_t count,
                  float half_width, char* msg, int msg_size)
{
    if (count < 2) {
        set_msg(msg, msg_size, "a path needs at least 2 waypoints, got %d", (int)count);
        return 0;
    }
    if (out == NULL || points_out == NULL || s_out == NULL || xyz == NULL) {
        set_msg(msg, msg_size, "pf_path_build: out, points_out, s_out and xyz must not be NULL");
        return 0;
    }
    if (!(isfinite(half_width) && half_width > 0.0f)) {
        set_msg(msg, msg_size, "half_width must be finite and > 0, got %g", (double)half_width);
        return 0;
    }
    static const char axis[3] = {'x', 'y', 'z'};
    for (int32_t i = 0; i < count; ++i) {
        for (int k = 0; k < 3; ++k) {
            float c = xyz[3 * (size_t)i + (size_t)k];
            if (!isfinite(c)) {
                set_msg(msg, msg_size, "waypoint %d: %c is %s", (int)i, axis[k],
                        isnan(c) ? "NaN" : "infinite");
                return 0;
            }
        }
    }
    /* Everything is checked before anything is written, so a failure leaves
     * the caller's arrays as they were. Lengths add up in double: a long
     * path of short segments would otherwise drift by float rounding. */
    double total = 0.0;
    for (int32_t i = 1; i < count; ++i) {
        double d = waypoint_gap(xyz, i);
        if (d < (double)PF_MIN_SEGMENT) {
            if (d == 0.0)
                set_msg(msg, msg_size,
                        "waypoint %d repeats waypoint %d (segments must be at least %g m long)", (int)i,
                        (int)(i - 1), (double)PF_MIN_SEGMENT);
            else
                set_msg(msg, msg_size,
                        "waypoint %d is %g m from waypoint %d "
                        "(segments must be at least %g m long)",
                        (int)i, d, (int)(i - 1), (double)PF_MIN_SEGMENT);
            return 0;
        }
        total += d;
    }
    if (!(total <= (double)FLT_MAX)) {
        set_msg(msg, msg_size, "path length %g m does not fit in a float", total);
        return 0;
    }
    total = 0.0;
    for (int32_t i = 0; i < count; ++i) {
        const float* w = xyz + 3 * (size_t)i;
        points_out[i] = vec3_make(w[0], w[1], w[2]);
        if (i > 0) total += waypoint_gap(xyz, i);
        s_out[i] = (float)total;
    }
    out->points = points_out;
    out->s = s_out;
    out->count = count;
    out->length = s_out[count - 1];
    out->half_width = half_width;
    return 1;
}

/* s clamped to [0, length]; NaN reads as the start. */
static float clamp_s(const pf_path_t* path, float s)
{
    if (!(s > 0.0f)) return 0.0f;
    return s < path->length ? s : path->length;
}

/* The segment holding arc length s: the largest i in [0, count - 2] with
 * s[i] <= s (binary search). */
static int32_t segment_at(const pf_path_t* path, float s)
{
    int32_t lo = 0, hi = path->count - 2;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (path->s[mid] <= s)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Fraction of segment i at arc length s. Far from the origin, float arc
 * lengths of a very short segment can coincide; its start stands for it. */
static float segment_fraction(const pf_path_t* path, int32_t i, float s)
{
    float len = path->s[i + 1] - path->s[i];
    if (!(len > 0.0f)) return 0.0f;
    return clampf((s - path->s[i]) / len, 0.0f, 1.0f);
}

static vec3 lerp3(vec3 a, vec3 b, float t) { return vec3_add(a, vec3_scale(vec3_sub(b, a), t)); }

vec3 pf_path_point_at(const pf_path_t* path, float s, vec3* tangent)
{
    s = clamp_s(path, s);
    int32_t i = segment_at(path, s);
    vec3 a = path->points[i], b = path->points[i + 1];
    if (tangent != NULL) *tangent = vec3_normalize(vec3_sub(b, a));
    return lerp3(a, b, segment_fraction(path, i, s));
}

float pf_path_project(const pf_path_t* path, vec3 pos, float s_from, float s_to, float* cte)
{
    if (isnan(s_from)) s_from = 0.0f;
    if (isnan(s_to)) s_to = path->length;
    if (s_from > s_to) {
        float t = s_from;
        s_from = s_to;
        s_to = t;
    }
    float lo = clamp_s(path, s_from), hi = clamp_s(path, s_to);
    int32_t i0 = segment_at(path, lo), i1 = segment_at(path, hi);
    float best_s = lo, best_d2 = INFINITY;
    int found = 0;
    /* Segments in increasing s with a strict comparison: of equally near
     * points the one with the smaller arc length wins. */
    for (int32_t i = i0; i <= i1; ++i) {
        vec3 a = path->points[i];
        vec3 e = vec3_sub(path->points[i + 1], a);
        float t_lo = i == i0 ? segment_fraction(path, i, lo) : 0.0f;
        float t_hi = i == i1 ? segment_fraction(path, i, hi) : 1.0f;
        float ee = vec3_dot(e, e);
        float t = ee > 0.0f ? vec3_dot(vec3_sub(pos, a), e) / ee : 0.0f;
        t = clampf(t, t_lo, t_hi);
        float d2 = vec3_length_sq(vec3_sub(pos, vec3_add(a, vec3_scale(e, t))));
        if (!found || d2 < best_d2) {
            found = 1;
            best_d2 = d2;
            best_s = path->s[i] + t * (path->s[i + 1] - path->s[i]);
        }
    }
    if (cte != NULL) *cte = sqrtf(best_d2);
    return clampf(best_s, lo, hi);
}

/* ------------------------------------------------------------------------ */
/* Quadratic Bezier curvature (eqs. (2)-(4))                                  */
/* ------------------------------------------------------------------------ */

typedef struct dvec3 {
    double x, y, z;
} dvec3;

static dvec3 dv(vec3 a) { return (dvec3){a.x, a.y, a.z}; }
static dvec3 dsub(dvec3 a, dvec3 b) { return (dvec3){a.x - b.x, a.y - b.y, a.z - b.z}; }
static dvec3 dadd(dvec3 a, dvec3 b) { return (dvec3){a.x + b.x, a.y + b.y, a.z + b.z}; }
static dvec3 dscale(dvec3 a, double s) { return (dvec3){a.x * s, a.y * s, a.z * s}; }
static double ddot(dvec3 a, dvec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static dvec3 dcross(dvec3 a, dvec3 b)
{
    return (dvec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static double dlen(dvec3 a) { return sqrt(ddot(a, a)); }

float pf_bezier_max_curvature(vec3 p1f, vec3 p2f, vec3 p3f)
{
    dvec3 p1 = dv(p1f), p2 = dv(p2f), p3 = dv(p3f);
    dvec3 m = dscale(dadd(p1, p3), 0.5);
    /* A, the triangle's area: the denominator of eq. (3), numerator of (4). */
    double area = 0.5 * dlen(dcross(dsub(p1, p2), dsub(p1, p3)));
    dvec3 a = dsub(p2, p1), b = dsub(p3, p2);
    double longest2 = fmax(ddot(a, a), fmax(ddot(b, b), ddot(dsub(p3, p1), dsub(p3, p1))));
    if (!(area > PF_COLLINEAR_AREA * longest2)) {
        /* Collinear. B'(t) = 2((1 - t) a + t b): with a and b the same way
         * the curve runs straight (curvature 0); opposite, B' passes through
         * zero and the curve turns back on itself, a cusp. */
        if (!(longest2 > 0.0)) return 0.0f;
        return ddot(a, b) >= 0.0 ? 0.0f : INFINITY;
    }
    /* The two spheres of radius |p1 - m| / 2 centred halfway between each
     * end and m. Outside both, the curvature peaks inside (0, 1): eq. (3).
     * Inside one (they touch only at m, so at most one), it is monotone and
     * peaks at an end: eq. (4). */
    double r = 0.5 * dlen(dsub(p1, m));
    double d1 = dlen(dsub(p2, dscale(dadd(p1, m), 0.5)));
    double d3 = dlen(dsub(p2, dscale(dadd(p3, m), 0.5)));
    double k;
    if (d1 > r && d3 > r) {
        double pm = dlen(dsub(p2, m));
        k = pm * pm * pm / (area * area); /* eq. (3) */
    } else {
        double la = dlen(a), lb = dlen(b);
        k = fmax(area / (la * la * la), area / (lb * lb * lb)); /* eq. (4) */
    }
    return (float)k; /* overflows to INFINITY for nearly folded curves */
}

float pf_bezier_curvature_at(vec3 p1f, vec3 p2f, vec3 p3f, float t)
{
    /* The textbook |B' x B''| / |B'|^3 of eq. (2), kept independent of the
     * closed forms above so that the tests can compare the two. */
    double u = isnan(t) ? 0.0 : fmin(fmax((double)t, 0.0), 1.0);
    dvec3 p1 = dv(p1f), p2 = dv(p2f), p3 = dv(p3f);
    dvec3 d1 = dadd(dscale(dsub(p2, p1), 2.0 * (1.0 - u)), dscale(dsub(p3, p2), 2.0 * u));
    dvec3 d2 = dscale(dadd(dsub(p3, dscale(p2, 2.0)), p1), 2.0);
    double speed = dlen(d1);
    if (!(speed > 0.0)) return ddot(d2, d2) > 0.0 ? INFINITY : 0.0f; /* cusp, or a point */
    return (float)(dlen(dcross(d1, d2)) / (speed * speed * speed));
}

/* ------------------------------------------------------------------------ */
/* Parameters                                                                 */
/* ------------------------------------------------------------------------ */

pf_params_t pf_params_default(pf_kind_t kind)
{
    pf_params_t p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    /* Section III's values for Algorithm 1: 0.4 g is the largest lateral
     * acceleration of normal human driving [9]; N points dh apart look
     * (N - 1) dh = 24 m ahead. */
    p.a_lat = 0.4f;
    p.dh = 6.0f;
    p.n = 5;
    p.v_min = 1.0f;
    p.v_max = 10.0f;
    /* Baseline: a 90 degree turn within the lookahead brings v_max down to
     * 30% (1 / (1 + 1.5 pi / 2)). */
    p.baseline_gain = 1.5f;
    /* Lookahead 5 m at rest, growing 0.6 s of travel per m/s, to 15 m at
     * about 17 m/s: shorter tracks tighter, longer damps weaving at speed. */
    p.lookahead_min = 5.0f;
    p.lookahead_time = 0.6f;
    p.lookahead_max = 15.0f;
    /* Throttle per m/s of speed error: a 2 m/s error saturates the
     * proportional term; the integral (time constant kp / ki = 2 s) removes
     * the steady error that slopes and drag leave under P alone. */
    p.kp = 0.5f;
    p.ki = 0.25f;
    /* Done within 3 m of the last waypoint (about a vehicle length). */
    p.arrive_radius = 3.0f;
    /* Stuck when the projection gains less than 1.5 m of path in 4 s
     * (0.375 m/s, well below v_min); each recovery reverses 2 s with the
     * wheels turned against the last command; after 3 recoveries that did
     * not restore progress, teleport. */
    p.stuck_window = 4.0f;
    p.stuck_progress = 1.5f;
    p.reverse_time = 2.0f;
    p.max_recoveries = 3;
    /* The proposed follower respects the vehicle's grip and turn rate (an
     * extension of the paper; 0 gives Algorithm 1 exactly). */
    p.vehicle_limits = 1;
    return p;
}

/* "name must be ..., got v" for a float outside its range. */
static int bad_float(char* msg, int msg_size, const char* name, const char* expected, float v)
{
    set_msg(msg, msg_size, "%s must be %s, got %g", name, expected, (double)v);
    return 0;
}

int pf_params_valid(const pf_params_t* p, char* msg, int msg_size)
{
    if (p == NULL) {
        set_msg(msg, msg_size, "pf_params_valid: params are NULL");
        return 0;
    }
    if (p->kind != PF_PROPOSED && p->kind != PF_BASELINE) {
        set_msg(msg, msg_size, "kind must be PF_PROPOSED or PF_BASELINE, got %d", (int)p->kind);
        return 0;
    }
    if (!(isfinite(p->a_lat) && p->a_lat > 0.0f))
        return bad_float(msg, msg_size, "a_lat", "finite and > 0 (in g)", p->a_lat);
    if (!(isfinite(p->dh) && p->dh > 0.0f))
        return bad_float(msg, msg_size, "dh", "finite and > 0 (m)", p->dh);
    if (p->n < 3 || p->n > PF_MAX_N) {
        set_msg(msg, msg_size, "n must be in [3, %d], got %d", PF_MAX_N, (int)p->n);
        return 0;
    }
    if (!(isfinite(p->v_min) && p->v_min >= 0.0f))
        return bad_float(msg, msg_size, "v_min", "finite and >= 0 (m/s)", p->v_min);
    if (!(isfinite(p->v_max) && p->v_max > 0.0f && p->v_max >= p->v_min))
        return bad_float(msg, msg_size, "v_max", "finite, > 0 and >= v_min (m/s)", p->v_max);
    if (!(isfinite(p->baseline_gain) && p->baseline_gain >= 0.0f))
        return bad_float(msg, msg_size, "baseline_gain", "finite and >= 0 (1/rad)", p->baseline_gain);
    if (!(isfinite(p->lookahead_min) && p->lookahead_min > 0.0f))
        return bad_float(msg, msg_size, "lookahead_min", "finite and > 0 (m)", p->lookahead_min);
    if (!(isfinite(p->lookahead_time) && p->lookahead_time >= 0.0f))
        return bad_float(msg, msg_size, "lookahead_time", "finite and >= 0 (s)", p->lookahead_time);
    if (!(isfinite(p->lookahead_max) && p->lookahead_max >= p->lookahead_min))
        return bad_float(msg, msg_size, "lookahead_max", "finite and >= lookahead_min (m)", p->lookahead_max);
    if (!(isfinite(p->kp) && p->kp >= 0.0f)) return bad_float(msg, msg_size, "kp", "finite and >= 0", p->kp);
    if (!(isfinite(p->ki) && p->ki >= 0.0f)) return bad_float(msg, msg_size, "ki", "finite and >= 0", p->ki);
    if (!(isfinite(p->arrive_radius) && p->arrive_radius >= 0.0f))
        return bad_float(msg, msg_size, "arrive_radius", "finite and >= 0 (m)", p->arrive_radius);
    if (!(isfinite(p->stuck_window) && p->stuck_window > 0.0f))
        return bad_float(msg, msg_size, "stuck_window", "finite and > 0 (s)", p->stuck_window);
    if (!(isfinite(p->stuck_progress) && p->stuck_progress > 0.0f))
        return bad_float(msg, msg_size, "stuck_progress", "finite and > 0 (m)", p->stuck_progress);
    if (!(isfinite(p->reverse_time) && p->reverse_time >= 0.0f))
        return bad_float(msg, msg_size, "reverse_time", "finite and >= 0 (s)", p->reverse_time);
    if (p->vehicle_limits != 0 && p->vehicle_limits != 1) {
        set_msg(msg, msg_size, "vehicle_limits must be 0 or 1, got %d", (int)p->vehicle_limits);
        return 0;
    }
    if (p->max_recoveries < 0) {
        set_msg(msg, msg_size, "max_recoveries must be >= 0, got %d", (int)p->max_recoveries);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Target speed: Algorithm 1 and the baseline                                 */
/* ------------------------------------------------------------------------ */

/* Algorithm 1, line 3: walking forward from `*from` (a point of segment
 * `*seg`), the first path point at Euclidean distance dh from q. The walk
 * starts inside the sphere around q (|from - q| < dh), so along each
 * segment it leaves the sphere at the larger root u of
 * |from - q + u e|^2 = dh^2. On success moves *seg and *from to the point
 * found; returns 0 when the path ends inside the sphere. */
static int next_at_distance(const pf_path_t* path, vec3 q, float dh, int32_t* seg, vec3* from)
{
    dvec3 c = dv(q);
    double r2 = (double)dh * dh;
    for (int32_t k = *seg; k <= path->count - 2; ++k) {
        dvec3 a = k == *seg ? dv(*from) : dv(path->points[k]);
        dvec3 e = dsub(dv(path->points[k + 1]), a);
        double ee = ddot(e, e);
        if (!(ee > 0.0)) continue; /* the walk starts at the segment's end */
        dvec3 d = dsub(a, c);
        double de = ddot(d, e), dd = ddot(d, d) - r2;
        double disc = de * de - ee * dd;
        if (disc < 0.0) continue; /* only from rounding: the start is inside */
        double sq = sqrt(disc);
        /* The larger root, in the form without cancellation (u+ u- = dd / ee). */
        double u = de <= 0.0 ? (sq - de) / ee : -dd / (de + sq);
        /* A segment ending a rounding short of the sphere ends on it:
         * waypoints placed dh apart come out of float coordinates a hair
         * closer, and at a hairpin the walk would otherwise pass the vertex
         * and resample somewhere else entirely. */
        dvec3 end = dsub(dv(path->points[k + 1]), c);
        if (u > 1.0 && ddot(end, end) >= r2 * (1.0 - 2.0 * PF_RESAMPLE_TOL)) u = 1.0;
        if (u >= 0.0 && u <= 1.0) {
            *seg = k;
            *from = vec3_make((float)(a.x + u * e.x), (float)(a.y + u * e.y), (float)(a.z + u * e.z));
            return 1;
        }
    }
    return 0;
}

float pf_max_curvature(const pf_params_t* p, const pf_path_t* path, vec3 pos, float s_vehicle, vec3* first)
{
    if (first) *first = pos;
    /* P~ streams through a window of its last three points (lines 5-9 need
     * no more), so n has no storage limit. */
    vec3 tri[3];
    int32_t have = 1;
    tri[0] = pos;       /* line 1 */
    float k_max = 0.0f; /* line 5 */

    s_vehicle = clamp_s(path, s_vehicle);
    int32_t seg = segment_at(path, s_vehicle);
    vec3 from = pf_path_point_at(path, s_vehicle, NULL);
    int ended = 0;
    for (int32_t i = 2; i <= p->n && !ended; ++i) { /* lines 2-4 */
        vec3 q = tri[have < 3 ? have - 1 : 2];
        vec3 next;
        if (i == 2 && vec3_distance(from, pos) >= p->dh) {
            /* The vehicle is off the path by dh or more: no path point ahead
             * lies dh from it. Its projection stands in for p_2, so the
             * first curve still bends from the vehicle back onto the path
             * and lowers the speed (section II: the first curve "ensure[s]
             * the target speed is decreased whenever the vehicle is too far
             * away from the path"). */
            next = from;
        } else if (next_at_distance(path, q, p->dh, &seg, &from)) {
            next = from;
        } else {
            /* The path ends within dh: its end point closes P~. */
            vec3 end = path->points[path->count - 1];
            if (vec3_distance(end, q) <= PF_END_EPS) break;
            next = end;
            ended = 1;
        }
        if (have == 1 && first) *first = next;
        if (have < 3) {
            tri[have++] = next;
        } else {
            tri[0] = tri[1];
            tri[1] = tri[2];
            tri[2] = next;
        }
        if (have == 3) k_max = fmaxf(k_max, pf_bezier_max_curvature(tri[0], tri[1], tri[2]));
    }
    return k_max;
}

/* Lines 10-11, eq. (1), with lateral acceleration a_lat (in g) and, when
 * yaw_cap > 0, no faster than a vehicle turning at most yaw_cap can follow
 * curvature k_max. A straight P~ (k_max 0) and one with a cusp (infinite
 * k_max) land on the limits without dividing by zero. */
static float speed_for_curvature(const pf_params_t* p, float k_max, float a_lat, float yaw_cap)
{
    if (!(k_max > 0.0f)) return p->v_max;
    float v = sqrtf(a_lat * PF_GRAVITY / k_max);
    if (yaw_cap > 0.0f) v = fminf(v, yaw_cap / k_max);
    return clampf(v, p->v_min, p->v_max);
}

float pf_target_speed(const pf_params_t* p, const pf_path_t* path, vec3 pos, float s_vehicle)
{
    return speed_for_curvature(p, pf_max_curvature(p, path, pos, s_vehicle, NULL), p->a_lat, 0.0f);
}

float pf_baseline_target_speed(const pf_params_t* p, const pf_path_t* path, vec3 forward, float s_vehicle,
                               float lookahead)
{
    vec3 f = vec3_normalize(forward);
    if (vec3_length_sq(f) == 0.0f) return p->v_max; /* no forward direction: no angle */
    float lo = clamp_s(path, s_vehicle);
    float hi = clamp_s(path, s_vehicle + fmaxf(lookahead, 0.0f));
    int32_t i0 = segment_at(path, lo), i1 = segment_at(path, hi);
    /* A segment that only starts at hi does not overlap the window. */
    if (i1 > i0 && path->s[i1] >= hi) --i1;
    float theta_max = 0.0f;
    for (int32_t i = i0; i <= i1; ++i) {
        vec3 e = vec3_sub(path->points[i + 1], path->points[i]);
        /* atan2 of |cross| and dot: accurate at small angles, where acos of
         * a dot product near 1 is not. */
        float theta = atan2f(vec3_length(vec3_cross(f, e)), vec3_dot(f, e));
        theta_max = fmaxf(theta_max, theta);
    }
    float v = p->v_max / (1.0f + p->baseline_gain * theta_max);
    return clampf(v, p->v_min, p->v_max);
}

/* ------------------------------------------------------------------------ */
/* Speed and steering control                                                 */
/* ------------------------------------------------------------------------ */

float pf_pi_update(pf_pi_t* pi, float kp, float ki, float error, float dt)
{
    if (!isfinite(error)) error = 0.0f;
    if (!(dt > 0.0f)) dt = 0.0f;
    if (!(ki > 0.0f)) {
        pi->integral = 0.0f;
        return clampf(kp * error, -1.0f, 1.0f);
    }
    /* Conditional integration: while the output is saturated, an error
     * pushing further into the saturation is not accumulated, so the
     * integral never has to unwind before the output can leave the limit;
     * an error pulling back out is. */
    float u = kp * error + ki * pi->integral;
    int pushing_out = (u > 1.0f && error > 0.0f) || (u < -1.0f && error < 0.0f);
    if (!pushing_out) pi->integral += error * dt;
    /* Backstop: ki I alone never needs more than full throttle. */
    float bound = 1.0f / ki;
    pi->integral = clampf(pi->integral, -bound, bound);
    return clampf(kp * error + ki * pi->integral, -1.0f, 1.0f);
}

float pf_pure_pursuit(vec3 pos, float yaw, float wheelbase, vec3 target_point, int reverse)
{
    float dx = target_point.x - pos.x, dy = target_point.y - pos.y;
    float ld = sqrtf(dx * dx + dy * dy);
    if (!(ld > PF_PP_MIN_DISTANCE) || !(wheelbase > 0.0f)) return 0.0f;
    /* alpha: from the axis the vehicle moves along to the target. */
    float axis = reverse ? yaw + VEC_PI : yaw;
    float alpha = angle_diff(atan2f(dy, dx), axis);
    /* The circle through the target tangent to the axis has curvature
     * 2 sin(alpha) / l_d; a bicycle drives it with tan(delta) = L kappa.
     * A target behind the axis (|alpha| > 90 degrees) would get less and
     * less steering as it comes round to straight behind (sin -> 0), and a
     * vehicle whose target is behind it would drive away from it: there the
     * turn is held at the 90-degree value, toward the target's side (left
     * when exactly behind). */
    float sa = sinf(alpha);
    if (cosf(alpha) < 0.0f) sa = sa < -1e-6f ? -1.0f : 1.0f;
    float delta = atanf(2.0f * wheelbase * sa / ld);
    /* Reversing (v < 0), yaw rate v tan(delta) / L has the opposite sign of
     * the wheel angle, so turning the path of motion toward a target on the
     * left of the rear axis takes the wheels to the right. */
    return reverse ? -delta : delta;
}

/* ------------------------------------------------------------------------ */
/* The follower                                                               */
/* ------------------------------------------------------------------------ */

void pf_state_init(pf_state_t* st) { memset(st, 0, sizeof *st); }

float pf_vehicle_max_curvature(const pf_vehicle_t* veh)
{
    if (!(veh->wheelbase > 0.0f) || !(veh->max_steer > 0.0f) || !(veh->max_steer < 0.5f * VEC_PI))
        return 0.0f;
    return tanf(veh->max_steer) / veh->wheelbase;
}

/* A fresh stuck window starting at the current progress. */
static void restart_window(pf_state_t* st)
{
    st->window_s = st->s;
    st->window_time = 0.0f;
}

void pf_hold(float v, pf_command_t* out)
{
    memset(out, 0, sizeof *out);
    out->throttle = v > PF_STOP_SPEED ? -1.0f : (v < -PF_STOP_SPEED ? 1.0f : 0.0f);
}

void pf_follow(const pf_params_t* p, const pf_path_t* path, pf_state_t* st, const pf_vehicle_t* veh, float dt,
               pf_command_t* out)
{
    memset(out, 0, sizeof *out);
    if (!(dt > 0.0f)) dt = 0.0f;
    const vec3 end = path->points[path->count - 1];

    /* Progress follows the projection, back as well as forward (a recovery
     * reverses); the window compares it with its start, so a slide back
     * needs to be made up before it counts as progress. */
    float cte;
    st->s = pf_path_project(path, veh->pos, st->s - PF_SEARCH_BEHIND,
                            st->s + p->lookahead_max + PF_SEARCH_AHEAD, &cte);
    out->cte = cte;
    out->inside_corridor = cte <= path->half_width;

    /* Near the last waypoint counts only near the end of the path too: a
     * route that loops back past its start would otherwise be "completed"
     * where it begins. */
    if (!st->completed && ((vec3_distance(veh->pos, end) <= p->arrive_radius &&
                            path->length - st->s <= p->lookahead_max + p->arrive_radius) ||
                           st->s >= path->length - 0.5f * p->arrive_radius))
        st->completed = 1;
    if (st->completed) {
        float cte_end = out->cte;
        int32_t inside = out->inside_corridor;
        pf_hold(veh->v, out);
        out->cte = cte_end;
        out->inside_corridor = inside;
        out->target_point = end;
        st->recover_time = 0.0f;
        return;
    }

    /* Modules 2 and 1: target point and target speed. */
    float lookahead =
        clampf(p->lookahead_min + p->lookahead_time * fabsf(veh->v), p->lookahead_min, p->lookahead_max);
    out->target_point = pf_path_point_at(path, st->s + lookahead, NULL);
    if (p->kind == PF_BASELINE) {
        vec3 forward = vec3_make(cosf(veh->yaw), sinf(veh->yaw), 0.0f);
        out->target_speed = pf_baseline_target_speed(p, path, forward, st->s, lookahead);
    } else {
        vec3 p2;
        float k_max = pf_max_curvature(p, path, veh->pos, st->s, &p2);
        float a_lat = p->a_lat, yaw_cap = 0.0f;
        if (p->vehicle_limits) {
            /* Algorithm 1 sees where the vehicle is, not where it faces: just
             * past a corner its curves lie on the straight ahead and it asks
             * for v_max while the vehicle is still turning. The curve from
             * dh behind the vehicle along its facing, through it, to P~[2]
             * bends by the heading error, in the same measure. Not while
             * reversing (the facing is not the direction of travel). */
            if (veh->v >= 0.0f && vec3_distance(p2, veh->pos) > PF_END_EPS) {
                vec3 f = vec3_make(cosf(veh->yaw), sinf(veh->yaw), 0.0f);
                vec3 behind = vec3_sub(veh->pos, vec3_scale(f, p->dh));
                float k_heading = pf_bezier_max_curvature(behind, veh->pos, p2);
                /* This curve asks the vehicle to turn round, and no speed
                 * makes it turn tighter than its steering geometry allows
                 * (tan(max_steer) / wheelbase; below the grip limit a
                 * bicycle's turn at full lock does not depend on speed).
                 * A bend tighter than that only slows it down: at a
                 * heading error of 90 degrees it asked for v_min while the
                 * vehicle was already at full lock, and on an uphill
                 * hairpin it crawled, lost its momentum and stalled. So the
                 * curve counts no tighter than the vehicle's own turn. */
                float k_vehicle = pf_vehicle_max_curvature(veh);
                if (k_vehicle > 0.0f) k_heading = fminf(k_heading, k_vehicle);
                k_max = fmaxf(k_max, k_heading);
            }
            /* Eq. (1) assumes the tyres hold a_lat and the vehicle turns as
             * tightly as that allows. A vehicle with less grip slides at
             * that speed, and one whose turn rate is capped (tracks,
             * rudders) swings wide: cap both by the vehicle's own limits. */
            if (veh->traction > 0.0f) a_lat = fminf(a_lat, veh->traction);
            yaw_cap = veh->max_yaw_rate;
        }
        out->target_speed = speed_for_curvature(p, k_max, a_lat, yaw_cap);
    }

    /* Modules 3 and 4: throttle (PI, or P for the baseline) and pure pursuit. */
    float error = out->target_speed - veh->v;
    if (p->kind == PF_BASELINE)
        out->throttle = clampf(p->kp * error, -1.0f, 1.0f);
    else
        out->throttle = pf_pi_update(&st->pi, p->kp, p->ki, error, dt);
    float delta = pf_pure_pursuit(veh->pos, veh->yaw, veh->wheelbase, out->target_point, 0);
    out->steering = veh->max_steer > 0.0f ? clampf(delta / veh->max_steer, -1.0f, 1.0f) : 0.0f;

    /* Module 5: the stuck manager. The window runs only while the vehicle
     * drives itself; a recovery's own reversing is not judged. */
    if (!(st->recover_time > 0.0f)) {
        st->window_time += dt;
        if (st->s - st->window_s >= p->stuck_progress) {
            restart_window(st);
            st->failed_recoveries = 0;
        } else if (st->window_time >= p->stuck_window - PF_TIME_EPS) {
            /* Every detection counts as a stuck event, the one that ends in
             * a teleport included; teleports are also counted apart. */
            st->stuck_events++;
            out->new_stuck_event = 1;
            if (st->failed_recoveries >= p->max_recoveries) {
                float s_tp = clamp_s(path, st->s + PF_TELEPORT_AHEAD);
                vec3 tangent;
                out->teleport = 1;
                out->teleport_pos = pf_path_point_at(path, s_tp, &tangent);
                out->teleport_yaw = atan2f(tangent.y, tangent.x);
                /* The commands were for the old pose: hold still this frame. */
                out->throttle = 0.0f;
                out->steering = 0.0f;
                st->teleports++;
                st->s = s_tp;
                st->pi.integral = 0.0f;
                st->failed_recoveries = 0;
                restart_window(st);
                return;
            }
            /* Reverse with the wheels turned against the forward command:
             * backing up that way yaws the nose toward where the follower
             * wanted to go, so the next try starts better aimed. */
            st->recover_time = p->reverse_time;
            st->recover_steer = -out->steering;
            st->failed_recoveries++;
        }
    }
    if (st->recover_time > 0.0f) {
        out->throttle = -1.0f;
        out->steering = st->recover_steer;
        out->stuck = 1;
        st->pi.integral = 0.0f; /* the speed error while reversing is not the driver's */
        st->recover_time -= dt;
        if (!(st->recover_time > PF_TIME_EPS)) {
            st->recover_time = 0.0f;
            restart_window(st);
        }
    }
}
