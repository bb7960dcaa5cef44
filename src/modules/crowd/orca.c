/* ORCA (orca.h): the constraints of one agent and the incremental linear
 * programs over them, in 2D and 3D.
 *
 * Conventions inside this file. A 2D line l is kept as the header says
 * (point, unit dir, permitted on the left); its outward normal, pointing into
 * the permitted side, is perp(dir) (dir turned +90 degrees), and the signed
 * distance of x from it is cross(dir, x - point) = (x - point) . perp(dir),
 * >= 0 where permitted. A constraint built from a normal n therefore gets
 * dir = (n.y, -n.x), the direction whose perp is n. */
#include "modules/crowd/orca.h"

#include <math.h>
#include <stddef.h>

#include "simd/lanes.h"
#include "modules/crowd/orca_lanes.h"

static int finite2(vec2 a) { return isfinite(a.x) && isfinite(a.y); }
static int finite3(vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }
static int zero2(vec2 a) { return a.x == 0.0f && a.y == 0.0f; }
static int zero3(vec3 a) { return a.x == 0.0f && a.y == 0.0f && a.z == 0.0f; }

/* The line direction whose left normal is n. */
static vec2 dir_with_normal(vec2 n) { return (vec2){n.y, -n.x}; }

/* A unit vector perpendicular to the unit vector a, odd in a: the cross
 * product with the coordinate axis along a's smallest component (ties to the
 * lower axis), which depends on |a| only. */
static vec3 odd_perp3(vec3 a)
{
    float ax = fabsf(a.x), ay = fabsf(a.y), az = fabsf(a.z);
    vec3 axis;
    if (ax <= ay && ax <= az)
        axis = vec3_make(1.0f, 0.0f, 0.0f);
    else if (ay <= az)
        axis = vec3_make(0.0f, 1.0f, 0.0f);
    else
        axis = vec3_make(0.0f, 0.0f, 1.0f);
    return vec3_normalize(vec3_cross(a, axis));
}

static float clamp_share(float share) { return share > 1.0f ? 1.0f : share; }
static float nonneg(float x) { return x > 0.0f ? x : 0.0f; } /* NaN too gives 0 */

/* ------------------------------------------------------------------------ */
/* Constraints                                                                */
/* ------------------------------------------------------------------------ */

int orca2_line_agent(vec2 rel_pos, vec2 rel_vel, float radius, float inv_tau, float inv_dt, float share,
                     vec2 vel, orca_line2_t* out)
{
    if (!(share > 0.0f)) return 0;
    if (!finite2(rel_pos) || !finite2(rel_vel) || !finite2(vel) || !isfinite(radius) || !isfinite(inv_tau) ||
        !isfinite(inv_dt))
        return 0;
    const vec2 p = rel_pos, v = rel_vel;
    const float r = nonneg(radius);
    const float dist_sq = vec2_length_sq(p), r_sq = r * r;
    vec2 n, u; /* outward normal of the obstacle's boundary; v's way out to it */

    if (dist_sq > r_sq) {
        /* Apart. w runs from the cut-off disk's centre p / tau to v. v's
         * nearest boundary point is on the cut-off arc when w points back
         * toward the apex within the arc's half-angle, acos(r / |p|):
         * -w.p > r |w|. */
        vec2 w = vec2_sub(v, vec2_scale(p, inv_tau));
        float wp = vec2_dot(w, p);
        vec2 w_unit = vec2_normalize(w);
        if (wp < 0.0f && wp * wp > r_sq * vec2_length_sq(w) && !zero2(w_unit)) {
            n = w_unit;
            u = vec2_scale(n, r * inv_tau - vec2_length(w));
        } else {
            /* On a leg: the tangent from the origin to the disk (p, r),
             * p's direction turned by +-asin(r / |p|). v left of the axis p
             * is nearest the left leg; on the axis (head-on) the right one
             * is taken. The obstacle lies right of the left leg and left of
             * the right leg. */
            float leg = sqrtf(dist_sq - r_sq);
            vec2 g;
            if (vec2_cross(p, w) > 0.0f) {
                g = vec2_make((p.x * leg - p.y * r) / dist_sq, (p.y * leg + p.x * r) / dist_sq);
                n = vec2_perp(g);
            } else {
                g = vec2_make((p.x * leg + p.y * r) / dist_sq, (p.y * leg - p.x * r) / dist_sq);
                n = vec2_neg(vec2_perp(g));
            }
            /* The leg runs through the origin: v's offset from it is
             * (v . n) n. */
            u = vec2_scale(n, -vec2_dot(v, n));
        }
    } else {
        /* Overlapping: out of the cut-off disk of one time step. */
        vec2 w = vec2_sub(v, vec2_scale(p, inv_dt));
        n = vec2_normalize(w);
        if (zero2(n)) n = vec2_neg(vec2_normalize(p));
        if (zero2(n)) n = vec2_make(1.0f, 0.0f);
        u = vec2_scale(n, r * inv_dt - vec2_length(w));
    }

    orca_line2_t line = {vec2_add(vel, vec2_scale(u, clamp_share(share))), dir_with_normal(n)};
    if (!finite2(line.point) || !finite2(line.dir)) return 0;
    *out = line;
    return 1;
}

int orca2_lines_agents(const float* px, const float* py, const float* vx, const float* vy,
                       const float* radius, const float* share, int count, float inv_tau, float inv_dt,
                       vec2 vel, orca_line2_t* out)
{
    int written = 0;
    /* Values common to every lane must be finite for any lane to count. */
    if (!isfinite(inv_tau) || !isfinite(inv_dt) || !finite2(vel)) return 0;
    for (int m0 = 0; m0 < count; m0 += SHOAL_LANES) {
        int lanes = count - m0 < SHOAL_LANES ? count - m0 : SHOAL_LANES;
        written += orca2_lines_lane(lane_loadu(px + m0), lane_loadu(py + m0), lane_loadu(vx + m0),
                                    lane_loadu(vy + m0), lane_loadu(radius + m0), lane_loadu(share + m0),
                                    lanes, inv_tau, inv_dt, vel, 0, out + written);
    }
    return written;
}

int orca2_line_wall(vec2 p0, vec2 p1, float radius, vec2 vel, float inv_tau, float inv_dt, orca_line2_t* out)
{
    if (!finite2(p0) || !finite2(p1) || !finite2(vel) || !isfinite(radius) || !isfinite(inv_tau) ||
        !isfinite(inv_dt))
        return 0;
    const float r = nonneg(radius);
    /* q: the segment's point nearest the agent (the origin). */
    vec2 e = vec2_sub(p1, p0);
    float e_sq = vec2_length_sq(e);
    vec2 q = p0;
    if (e_sq > 0.0f) {
        float t = -vec2_dot(p0, e) / e_sq;
        if (t >= 1.0f)
            q = p1;
        else if (t > 0.0f)
            q = vec2_add(p0, vec2_scale(e, t));
    }
    float dist = vec2_length(q);
    /* n: from the wall toward the agent, the permitted way. */
    vec2 n = vec2_neg(vec2_normalize(q));
    if (zero2(n)) {
        vec2 m = vec2_normalize(vec2_perp(e)); /* the left of p0 -> p1 */
        if (!zero2(m))
            n = vec2_dot(vel, m) > 0.0f ? vec2_neg(m) : m;
        else
            n = vec2_neg(vec2_normalize(vel));
        if (zero2(n)) n = vec2_make(1.0f, 0.0f);
    }

    orca_line2_t line;
    line.dir = dir_with_normal(n);
    if (dist > r) {
        /* v . n >= -(dist - r) inv_tau: the nearest point of the truncated
         * velocity obstacle is -n (dist - r) inv_tau. */
        line.point = vec2_scale(n, -(dist - r) * inv_tau);
    } else {
        /* v . n >= (r - dist) inv_dt: out of the capsule in one step. */
        line.point = vec2_scale(n, (r - dist) * inv_dt);
    }
    if (!finite2(line.point) || !finite2(line.dir)) return 0;
    *out = line;
    return 1;
}

int orca3_plane_agent(vec3 rel_pos, vec3 rel_vel, float radius, float inv_tau, float inv_dt, float share,
                      vec3 vel, orca_plane3_t* out)
{
    if (!(share > 0.0f)) return 0;
    if (!finite3(rel_pos) || !finite3(rel_vel) || !finite3(vel) || !isfinite(radius) || !isfinite(inv_tau) ||
        !isfinite(inv_dt))
        return 0;
    const vec3 p = rel_pos, v = rel_vel;
    const float r = nonneg(radius);
    const float dist_sq = vec3_length_sq(p), r_sq = r * r;
    vec3 n, u;

    if (dist_sq > r_sq) {
        vec3 w = vec3_sub(v, vec3_scale(p, inv_tau));
        float wp = vec3_dot(w, p);
        vec3 w_unit = vec3_normalize(w);
        if (wp < 0.0f && wp * wp > r_sq * vec3_length_sq(w) && !zero3(w_unit)) {
            /* The spherical cap. */
            n = w_unit;
            u = vec3_scale(n, r * inv_tau - vec3_length(w));
        } else {
            /* The cone's side. In the plane of the axis a and v, the
             * nearest generator is a cos + b sin (half-angle
             * asin(r / |p|), b the unit part of v across the axis) and the
             * outward normal there b cos - a sin. */
            float dist = sqrtf(dist_sq);
            vec3 a = vec3_scale(p, 1.0f / dist);
            float c = sqrtf(dist_sq - r_sq) / dist, s = r / dist;
            vec3 b = vec3_normalize(vec3_sub(v, vec3_scale(a, vec3_dot(v, a))));
            if (zero3(b)) b = odd_perp3(a);
            n = vec3_sub(vec3_scale(b, c), vec3_scale(a, s));
            u = vec3_scale(n, -vec3_dot(v, n));
        }
    } else {
        vec3 w = vec3_sub(v, vec3_scale(p, inv_dt));
        n = vec3_normalize(w);
        if (zero3(n)) n = vec3_neg(vec3_normalize(p));
        if (zero3(n)) n = vec3_make(1.0f, 0.0f, 0.0f);
        u = vec3_scale(n, r * inv_dt - vec3_length(w));
    }

    orca_plane3_t plane = {vec3_add(vel, vec3_scale(u, clamp_share(share))), n};
    if (!finite3(plane.point) || !finite3(plane.normal)) return 0;
    *out = plane;
    return 1;
}

int orca3_planes_agents(const float* px, const float* py, const float* pz, const float* vx, const float* vy,
                        const float* vz, const float* radius, const float* share, int count, float inv_tau,
                        float inv_dt, vec3 vel, orca_plane3_t* out)
{
    int written = 0;
    /* Values common to every lane must be finite for any lane to count. */
    if (!isfinite(inv_tau) || !isfinite(inv_dt) || !finite3(vel)) return 0;
    const lanef itau = lane_set1(inv_tau);
    const lanef velx = lane_set1(vel.x), vely = lane_set1(vel.y), velz = lane_set1(vel.z);
    for (int m0 = 0; m0 < count; m0 += SHOAL_LANES) {
        int lanes = count - m0 < SHOAL_LANES ? count - m0 : SHOAL_LANES;
        const orca3_lane_planes_t pl =
            orca3_planes_core(lane_loadu(px + m0), lane_loadu(py + m0), lane_loadu(pz + m0),
                              lane_loadu(vx + m0), lane_loadu(vy + m0), lane_loadu(vz + m0),
                              lane_loadu(radius + m0), lane_loadu(share + m0), itau, velx, vely, velz);
        const lanef pt_x = pl.pt_x, pt_y = pl.pt_y, pt_z = pl.pt_z, n_x = pl.n_x, n_y = pl.n_y, n_z = pl.n_z;
        const uint32_t fast = pl.fast, good = pl.good;
        float o[6][SHOAL_MAX_LANES];
        lane_storeu(o[0], pt_x);
        lane_storeu(o[1], pt_y);
        lane_storeu(o[2], pt_z);
        lane_storeu(o[3], n_x);
        lane_storeu(o[4], n_y);
        lane_storeu(o[5], n_z);
        for (int l = 0; l < lanes; ++l) {
            int m = m0 + l;
            if (fast >> l & 1u) {
                if (good >> l & 1u)
                    out[written++] =
                        (orca_plane3_t){{o[0][l], o[1][l], o[2][l]}, {o[3][l], o[4][l], o[5][l]}};
            } else {
                written += orca3_plane_agent((vec3){px[m], py[m], pz[m]}, (vec3){vx[m], vy[m], vz[m]},
                                             radius[m], inv_tau, inv_dt, share[m], vel, &out[written]);
            }
        }
    }
    return written;
}

int orca3_plane_sphere(vec3 rel_center, float radius, vec3 vel, float inv_tau, float inv_dt,
                       orca_plane3_t* out)
{
    return orca3_plane_agent(rel_center, vel, radius, inv_tau, inv_dt, 1.0f, vel, out);
}

/* ------------------------------------------------------------------------ */
/* 2D linear program                                                          */
/* ------------------------------------------------------------------------ */

/* The objective of a program: the point nearest `target`, or (dir_mode) the
 * point farthest along the direction `target`. */

static float side2(const orca_line2_t* l, vec2 x) { return vec2_cross(l->dir, vec2_sub(x, l->point)); }

/* The best point of line i within the disk |x| <= radius that satisfies
 * lines 0 .. i-1: 1 and *x, or 0 when there is none (*x untouched). Points
 * are point + t dir; each constraint bounds t on one side. */
static int best_on_line2(const orca_line2_t* lines, int i, float radius, vec2 target, int dir_mode, vec2* x)
{
    const vec2 p = lines[i].point, d = lines[i].dir;
    float off = fabsf(vec2_cross(d, p)); /* the line's distance from the origin */
    if (off > radius) return 0;
    float half = sqrtf(radius - off) * sqrtf(radius + off); /* half the chord */
    float mid = -vec2_dot(p, d);                            /* t of the chord's middle */
    float lo = mid - half, hi = mid + half;
    float slack = ORCA_SLACK * (1.0f + radius);
    for (int j = 0; j < i; ++j) {
        /* side_j(p + t d) = at0 + t rate */
        float rate = vec2_cross(lines[j].dir, d);
        float at0 = vec2_cross(lines[j].dir, vec2_sub(p, lines[j].point));
        if (fabsf(rate) <= ORCA_PARALLEL) {
            if (at0 < -slack) return 0;
            continue;
        }
        float t = -at0 / rate;
        if (rate > 0.0f) {
            if (t > lo) lo = t;
        } else if (t < hi) {
            hi = t;
        }
        if (lo > hi) return 0;
    }
    float t;
    if (dir_mode) {
        float along = vec2_dot(target, d);
        t = along > 0.0f ? hi : along < 0.0f ? lo : fminf(fmaxf(mid, lo), hi);
    } else {
        t = fminf(fmaxf(vec2_dot(vec2_sub(target, p), d), lo), hi);
    }
    *x = vec2_add(p, vec2_scale(d, t));
    return 1;
}

/* The incremental program over lines[0 .. n) in the disk |x| <= radius.
 * Returns n with the optimum in *x, or the index of the first line that
 * could not be met, *x then being the optimum over the lines before it. */
_Static_assert(sizeof(orca_line2_t) == 4 * sizeof(float), "a line is four floats: point, dir");

/* Twice the constraint numbers i0, i0 + 1, ... of a lane, those past n - 1
 * read as n - 1 (masked off by the callers). */
static inline lanei constraint_rows2(int i0, int n)
{
    const lanei last = lanei_set1(n - 1), at = lanei_add(lanei_set1(i0), lanei_iota());
    const lanei row = lanei_select(lanei_cmp_gt(at, last), last, at);
    return lanei_add(row, row);
}

/* Lanes of lines i0 .. i0 + SHOAL_LANES - 1 (those before n) that x is on
 * the wrong side of: side2's arithmetic a lane at a time, so the same
 * signs. Lanes past n read line n - 1 and are masked off. */
static inline uint32_t lines2_violated(const orca_line2_t* lines, int i0, int n, vec2 x)
{
    const float* f = (const float*)lines;
    const lanei two = constraint_rows2(i0, n);
    const lanei four = lanei_add(two, two);
    const lanef px = lane_gather(f, four), py = lane_gather(f, lanei_add(four, lanei_set1(1))),
                dx = lane_gather(f, lanei_add(four, lanei_set1(2))),
                dy = lane_gather(f, lanei_add(four, lanei_set1(3)));
    const lanef sx = lane_sub(lane_set1(x.x), px), sy = lane_sub(lane_set1(x.y), py);
    const lanef side = lane_sub(lane_mul(dx, sy), lane_mul(dy, sx));
    return lane_mask_bits(lane_mask_and(lane_mask_first(n - i0), lane_cmp_lt(side, lane_zero())));
}

static int run_lp2(const orca_line2_t* lines, int n, float radius, vec2 target, int dir_mode, vec2* x)
{
    vec2 best = dir_mode ? vec2_scale(vec2_normalize(target), radius) : vec2_clamp_length(target, radius);
    /* the lines in order, a lane of them screened at once: those before
     * the first one violated hold at this best, as one at a time; after a
     * new best on line i the screening goes on from i + 1 */
    for (int i0 = 0; i0 < n;) {
        const uint32_t bad = lines2_violated(lines, i0, n, best);
        if (!bad) {
            i0 += SHOAL_LANES;
            continue;
        }
        const int i = i0 + __builtin_ctz(bad);
        if (!best_on_line2(lines, i, radius, target, dir_mode, &best)) {
            *x = best;
            return i;
        }
        i0 = i + 1;
    }
    *x = best;
    return n;
}

/* The fallback from `begin`, where the program failed with x: minimise the
 * largest violation over lines[n_hard .. n) keeping lines[0 .. n_hard) and
 * the disk. Lines before `begin` hold at x. */
static vec2 relax_lp2(const orca_line2_t* lines, int n, int n_hard, int begin, float radius, vec2 x,
                      orca_line2_t* tmp)
{
    float worst = 0.0f; /* the largest violation so far */
    for (int i = begin; i < n; ++i) {
        if (!(side2(&lines[i], x) < -worst)) continue;
        /* The new optimum violates line i most: keep the hard lines and,
         * for each earlier soft line j, side_j(x) >= side_i(x), i.e.
         * x . (n_j - n_i) >= p_j . n_j - p_i . n_i, a half-plane bounded
         * by the bisector of lines i and j. Same-direction lines give none
         * (the one further in is violated more throughout). */
        vec2 ni = vec2_perp(lines[i].dir);
        float ci = vec2_dot(lines[i].point, ni);
        int m = 0;
        for (int j = 0; j < n_hard; ++j) tmp[m++] = lines[j];
        for (int j = n_hard; j < i; ++j) {
            vec2 nj = vec2_perp(lines[j].dir);
            if (zero2(nj)) continue;
            vec2 e = vec2_sub(nj, ni);
            float len = vec2_length(e);
            if (!(len > ORCA_PARALLEL)) continue;
            vec2 unit = vec2_scale(e, 1.0f / len);
            float h = (vec2_dot(lines[j].point, nj) - ci) / len;
            tmp[m].point = vec2_scale(unit, h);
            tmp[m].dir = dir_with_normal(unit);
            ++m;
        }
        /* Farthest along n_i: least violation of line i. The program is
         * feasible in exact arithmetic; if rounding says otherwise, x stays. */
        vec2 y;
        if (run_lp2(tmp, m, radius, ni, 1, &y) == m) x = y;
        float v = -side2(&lines[i], x);
        if (v > worst) worst = v;
    }
    return x;
}

static float speed_limit(float max_speed)
{
    return max_speed > 0.0f && max_speed < INFINITY ? max_speed : 0.0f;
}

orca_status_t orca2_solve(const orca_line2_t* lines, int n, int n_static, float max_speed, vec2 pref,
                          orca_line2_t* scratch, vec2* out)
{
    const float radius = speed_limit(max_speed);
    if (!finite2(pref)) pref = vec2_zero();
    if (n < 0) n = 0;
    if (n_static < 0) n_static = 0;
    if (n_static > n) n_static = n;
    if (n > 0 && (lines == NULL || scratch == NULL)) {
        *out = vec2_clamp_length(pref, radius);
        return ORCA_NO_ARRAY;
    }
    vec2 x;
    int fail = run_lp2(lines, n, radius, pref, 0, &x);
    if (fail == n) {
        *out = x;
        return ORCA_FEASIBLE;
    }
    return orca2_solve_failed(lines, n, n_static, max_speed, fail, x, scratch, out);
}

orca_status_t orca2_solve_failed(const orca_line2_t* lines, int n, int n_static, float max_speed, int fail,
                                 vec2 x, orca_line2_t* scratch, vec2* out)
{
    const float radius = speed_limit(max_speed);
    int hard = fail >= n_static ? n_static : 0;
    *out = relax_lp2(lines, n, hard, fail, radius, x, scratch);
    return fail >= n_static ? ORCA_RELAXED : ORCA_RELAXED_ALL;
}

/* ------------------------------------------------------------------------ */
/* 3D linear program                                                          */
/* ------------------------------------------------------------------------ */

static float side3(const orca_plane3_t* pl, vec3 x) { return vec3_dot(vec3_sub(x, pl->point), pl->normal); }

/* The best point of plane i within the ball |x| <= radius that satisfies
 * planes 0 .. i-1: the 2D program in the plane. Its frame: origin c, the
 * ball's centre projected on the plane, axes e1, e2; the ball cuts a disk of
 * radius rho about c; plane j becomes the line m . y + k >= 0 with
 * m = (e1 . n_j, e2 . n_j), k = (c - p_j) . n_j. tmp has room for i lines. */
static int best_on_plane3(const orca_plane3_t* planes, int i, float radius, vec3 target, int dir_mode,
                          orca_line2_t* tmp, vec3* x)
{
    const vec3 nrm = planes[i].normal;
    float h = vec3_dot(planes[i].point, nrm);
    float off = fabsf(h);
    if (off > radius) return 0;
    float rho = sqrtf(radius - off) * sqrtf(radius + off);
    vec3 c = vec3_scale(nrm, h);
    vec3 e1 = odd_perp3(nrm);
    vec3 e2 = vec3_cross(nrm, e1);
    float slack = ORCA_SLACK * (1.0f + radius);
    for (int j = 0; j < i; ++j) {
        vec3 nj = planes[j].normal;
        vec2 m = vec2_make(vec3_dot(e1, nj), vec3_dot(e2, nj));
        float k = vec3_dot(vec3_sub(c, planes[j].point), nj);
        float len = vec2_length(m);
        if (!(len > ORCA_PARALLEL)) {
            if (k < -slack) return 0;
            tmp[j] = (orca_line2_t){vec2_zero(), vec2_zero()}; /* holds everywhere */
            continue;
        }
        vec2 unit = vec2_scale(m, 1.0f / len);
        tmp[j].point = vec2_scale(unit, -k / len);
        tmp[j].dir = dir_with_normal(unit);
    }
    vec3 t3 = dir_mode ? target : vec3_sub(target, c);
    vec2 t2 = vec2_make(vec3_dot(t3, e1), vec3_dot(t3, e2));
    vec2 y;
    if (run_lp2(tmp, i, rho, t2, dir_mode, &y) < i) return 0;
    *x = vec3_add(c, vec3_add(vec3_scale(e1, y.x), vec3_scale(e2, y.y)));
    return 1;
}

_Static_assert(sizeof(orca_plane3_t) == 6 * sizeof(float), "a plane is six floats: point, normal");

/* Lanes of planes i0 .. i0 + SHOAL_LANES - 1 (those before n) that x is on
 * the wrong side of, as lines2_violated: side3's arithmetic a lane at a
 * time. */
static inline uint32_t planes3_violated(const orca_plane3_t* planes, int i0, int n, vec3 x)
{
    const float* f = (const float*)planes;
    const lanei two = constraint_rows2(i0, n);
    const lanei six = lanei_add(lanei_add(two, two), two);
    const lanef sx = lane_sub(lane_set1(x.x), lane_gather(f, six)),
                sy = lane_sub(lane_set1(x.y), lane_gather(f, lanei_add(six, lanei_set1(1)))),
                sz = lane_sub(lane_set1(x.z), lane_gather(f, lanei_add(six, lanei_set1(2))));
    const lanef nx = lane_gather(f, lanei_add(six, lanei_set1(3))),
                ny = lane_gather(f, lanei_add(six, lanei_set1(4))),
                nz = lane_gather(f, lanei_add(six, lanei_set1(5)));
    const lanef side = lane_add(lane_add(lane_mul(sx, nx), lane_mul(sy, ny)), lane_mul(sz, nz));
    return lane_mask_bits(lane_mask_and(lane_mask_first(n - i0), lane_cmp_lt(side, lane_zero())));
}

static int run_lp3(const orca_plane3_t* planes, int n, float radius, vec3 target, int dir_mode,
                   orca_line2_t* tmp, vec3* x)
{
    vec3 best = dir_mode ? vec3_scale(vec3_normalize(target), radius) : vec3_clamp_length(target, radius);
    /* a lane of planes screened at once, as run_lp2 */
    for (int i0 = 0; i0 < n;) {
        const uint32_t bad = planes3_violated(planes, i0, n, best);
        if (!bad) {
            i0 += SHOAL_LANES;
            continue;
        }
        const int i = i0 + __builtin_ctz(bad);
        if (!best_on_plane3(planes, i, radius, target, dir_mode, tmp, &best)) {
            *x = best;
            return i;
        }
        i0 = i + 1;
    }
    *x = best;
    return n;
}

/* As relax_lp2: the bisecting half-spaces x . (n_j - n_i) >= p_j . n_j -
 * p_i . n_i, then the 3D program farthest along n_i. */
static vec3 relax_lp3(const orca_plane3_t* planes, int n, int n_hard, int begin, float radius, vec3 x,
                      orca_plane3_t* tmp, orca_line2_t* tmp_lines)
{
    float worst = 0.0f;
    for (int i = begin; i < n; ++i) {
        if (!(side3(&planes[i], x) < -worst)) continue;
        vec3 ni = planes[i].normal;
        float ci = vec3_dot(planes[i].point, ni);
        int m = 0;
        for (int j = 0; j < n_hard; ++j) tmp[m++] = planes[j];
        for (int j = n_hard; j < i; ++j) {
            vec3 nj = planes[j].normal;
            if (zero3(nj)) continue;
            vec3 e = vec3_sub(nj, ni);
            float len = vec3_length(e);
            if (!(len > ORCA_PARALLEL)) continue;
            vec3 unit = vec3_scale(e, 1.0f / len);
            float h = (vec3_dot(planes[j].point, nj) - ci) / len;
            tmp[m].point = vec3_scale(unit, h);
            tmp[m].normal = unit;
            ++m;
        }
        vec3 y;
        if (run_lp3(tmp, m, radius, ni, 1, tmp_lines, &y) == m) x = y;
        float v = -side3(&planes[i], x);
        if (v > worst) worst = v;
    }
    return x;
}

orca_status_t orca3_solve(const orca_plane3_t* planes, int n, int n_static, float max_speed, vec3 pref,
                          orca_plane3_t* plane_scratch, orca_line2_t* line_scratch, vec3* out)
{
    const float radius = speed_limit(max_speed);
    if (!finite3(pref)) pref = vec3_zero();
    if (n < 0) n = 0;
    if (n_static < 0) n_static = 0;
    if (n_static > n) n_static = n;
    if (n > 0 && (planes == NULL || plane_scratch == NULL || line_scratch == NULL)) {
        *out = vec3_clamp_length(pref, radius);
        return ORCA_NO_ARRAY;
    }
    vec3 x;
    int fail = run_lp3(planes, n, radius, pref, 0, line_scratch, &x);
    if (fail == n) {
        *out = x;
        return ORCA_FEASIBLE;
    }
    return orca3_solve_failed(planes, n, n_static, max_speed, fail, x, plane_scratch, line_scratch, out);
}

orca_status_t orca3_solve_failed(const orca_plane3_t* planes, int n, int n_static, float max_speed, int fail,
                                 vec3 x, orca_plane3_t* plane_scratch, orca_line2_t* line_scratch, vec3* out)
{
    const float radius = speed_limit(max_speed);
    int hard = fail >= n_static ? n_static : 0;
    *out = relax_lp3(planes, n, hard, fail, radius, x, plane_scratch, line_scratch);
    return fail >= n_static ? ORCA_RELAXED : ORCA_RELAXED_ALL;
}
