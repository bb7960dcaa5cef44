/* ORCA (src/modules/crowd/orca.h): the constraints against the velocity obstacle
 * they come from (head-on agents split the avoidance as the responsibility
 * says, the new relative velocity lands on the obstacle's boundary), the
 * linear programs against brute-force searches over a grid of the disk
 * (ball) on seeded random problems, the infeasible fallback, degenerate
 * inputs, and small Euler simulations that must stay collision-free:
 * agents swapping places on a circle (a sphere), an agent driven at a wall
 * (a static sphere). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd/vec.h"
#include "modules/crowd/orca.h"
#include "modules/crowd/orca_lanes.h"
#include "support.h"

#define TOL 1e-5f

static int finite2(vec2 a) { return isfinite(a.x) && isfinite(a.y); }
static int finite3(vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }
static float side2(orca_line2_t l, vec2 x) { return vec2_cross(l.dir, vec2_sub(x, l.point)); }
static float side3(orca_plane3_t p, vec3 x) { return vec3_dot(vec3_sub(x, p.point), p.normal); }
static vec2 normal2(orca_line2_t l) { return vec2_perp(l.dir); }

/* Nearest point of line l to x. */
static vec2 project2(orca_line2_t l, vec2 x)
{
    return vec2_add(l.point, vec2_scale(l.dir, vec2_dot(vec2_sub(x, l.point), l.dir)));
}
static vec3 project3(orca_plane3_t p, vec3 x) { return vec3_sub(x, vec3_scale(p.normal, side3(p, x))); }

/* The constraints x . n >= c, n normalized here. */
static orca_line2_t line_n(float nx, float ny, float c)
{
    vec2 n = vec2_normalize(vec2_make(nx, ny));
    return (orca_line2_t){vec2_scale(n, c), vec2_make(n.y, -n.x)};
}

static orca_plane3_t plane_n(vec3 n, float c)
{
    n = vec3_normalize(n);
    return (orca_plane3_t){vec3_scale(n, c), n};
}

/* Random problems draw from one sequence, so every draw is a statement of
 * its own: the order in which the arguments of a call (or the elements of
 * an initializer) are evaluated is unspecified in C, and gcc (right to
 * left) and clang (left to right) built different problems from the same
 * seed. Where a test drew several values in one call, the draws are
 * written in the order gcc made them, so its problems are unchanged. */
static vec2 uniform2(uint64_t* s, float lo, float hi)
{
    float x = uniform(s, lo, hi);
    float y = uniform(s, lo, hi);
    return vec2_make(x, y);
}

static vec3 uniform3(uint64_t* s, float lo, float hi)
{
    float x = uniform(s, lo, hi);
    float y = uniform(s, lo, hi);
    float z = uniform(s, lo, hi);
    return vec3_make(x, y, z);
}

static vec3 rand_unit3(uint64_t* s)
{
    for (;;) {
        vec3 v = uniform3(s, -1, 1);
        float l = vec3_length(v);
        if (l > 0.1f && l <= 1.0f) return vec3_scale(v, 1.0f / l);
    }
}

/* The smallest distance between two agents over t in [0, tau] when their
 * relative position is p and relative velocity v (|p - t v|), in double. */
static double closest2(vec2 p, vec2 v, double tau)
{
    double vv = (double)v.x * v.x + (double)v.y * v.y;
    double t = vv > 0.0 ? ((double)p.x * v.x + (double)p.y * v.y) / vv : 0.0;
    if (t < 0.0) t = 0.0;
    if (t > tau) t = tau;
    double dx = p.x - t * v.x, dy = p.y - t * v.y;
    return sqrt(dx * dx + dy * dy);
}
static double closest3(vec3 p, vec3 v, double tau)
{
    double vv = (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z;
    double t = vv > 0.0 ? ((double)p.x * v.x + (double)p.y * v.y + (double)p.z * v.z) / vv : 0.0;
    if (t < 0.0) t = 0.0;
    if (t > tau) t = tau;
    double dx = p.x - t * v.x, dy = p.y - t * v.y, dz = p.z - t * v.z;
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* ======================================================================== */
/* 2D constraints                                                             */
/* ======================================================================== */

/* Two agents head-on (radius 0.5 each, tau 2): the half-planes mirror each
 * other, each takes half of u, and taking both nearest permitted velocities
 * puts the relative velocity exactly on the boundary of the velocity
 * obstacle (closest approach within tau = the combined radius). */
Test(orca, head_on_reciprocal_2d)
{
    vec2 pa = {0.0f, 0.0f}, pb = {4.0f, 0.0f};
    vec2 va = {1.0f, 0.0f}, vb = {-1.0f, 0.0f};
    const float R = 1.0f, tau = 2.0f, dt = 0.1f;
    orca_line2_t la, lb;
    cr_assert_eq(
        orca2_line_agent(vec2_sub(pb, pa), vec2_sub(va, vb), R, 1.0f / tau, 1.0f / dt, 0.5f, va, &la), 1);
    cr_assert_eq(
        orca2_line_agent(vec2_sub(pa, pb), vec2_sub(vb, va), R, 1.0f / tau, 1.0f / dt, 0.5f, vb, &lb), 1);
    cr_assert(finite2(la.point) && finite2(la.dir));
    cr_assert_float_eq(vec2_length(la.dir), 1.0f, TOL);
    /* mirrored */
    cr_assert_float_eq(la.dir.x, -lb.dir.x, TOL);
    cr_assert_float_eq(la.dir.y, -lb.dir.y, TOL);
    vec2 ha = vec2_sub(la.point, va), hb = vec2_sub(lb.point, vb);
    cr_assert_float_eq(ha.x, -hb.x, TOL);
    cr_assert_float_eq(ha.y, -hb.y, TOL);
    /* the current velocities collide: both are outside their half-planes */
    cr_assert_lt(closest2(vec2_sub(pb, pa), vec2_sub(va, vb), tau), R);
    cr_assert_lt(side2(la, va), 0.0f);
    cr_assert_lt(side2(lb, vb), 0.0f);
    /* each nearest permitted velocity moves by exactly half of u */
    vec2 na = project2(la, va), nb = project2(lb, vb);
    cr_assert_float_eq(na.x, la.point.x, TOL);
    cr_assert_float_eq(na.y, la.point.y, TOL);
    double d = closest2(vec2_sub(pb, pa), vec2_sub(na, nb), tau);
    cr_assert(fabs(d - R) < 1e-4, "closest approach %g, want %g", d, (double)R);
    /* both dodge to their right: A (heading +x) to -y, B (heading -x) to +y */
    cr_assert_lt(na.y, 0.0f);
    cr_assert_gt(nb.y, 0.0f);
    /* half of the avoidance alone is not enough */
    cr_assert_lt(closest2(vec2_sub(pb, pa), vec2_sub(na, vb), tau), R - 0.01);
}

/* The responsibility share moves the half-plane along u: point = v + share u,
 * the same normal; 1 alone resolves the conflict against an agent that keeps
 * its velocity; 0 (or less, or NaN) gives no constraint; above 1 is 1. */
Test(orca, share_split_2d)
{
    vec2 p = {3.0f, 0.4f}, va = {1.2f, 0.1f}, vb = {-0.8f, 0.0f};
    vec2 v = vec2_sub(va, vb);
    orca_line2_t half, full, quarter, over, none = {{7.0f, 7.0f}, {7.0f, 7.0f}};
    cr_assert_eq(orca2_line_agent(p, v, 1.0f, 0.5f, 10.0f, 0.5f, va, &half), 1);
    cr_assert_eq(orca2_line_agent(p, v, 1.0f, 0.5f, 10.0f, 1.0f, va, &full), 1);
    cr_assert_eq(orca2_line_agent(p, v, 1.0f, 0.5f, 10.0f, 0.25f, va, &quarter), 1);
    cr_assert_eq(orca2_line_agent(p, v, 1.0f, 0.5f, 10.0f, 3.0f, va, &over), 1);
    cr_assert_eq(orca2_line_agent(p, v, 1.0f, 0.5f, 10.0f, 0.0f, va, &none), 0);
    cr_assert_eq(orca2_line_agent(p, v, 1.0f, 0.5f, 10.0f, -1.0f, va, &none), 0);
    cr_assert_eq(orca2_line_agent(p, v, 1.0f, 0.5f, 10.0f, NAN, va, &none), 0);
    cr_assert_float_eq(none.point.x, 7.0f, 0.0f); /* untouched */
    vec2 u = vec2_scale(vec2_sub(half.point, va), 2.0f);
    cr_assert_gt(vec2_length(u), 0.01f);
    cr_assert_float_eq(full.point.x, va.x + u.x, TOL);
    cr_assert_float_eq(full.point.y, va.y + u.y, TOL);
    cr_assert_float_eq(quarter.point.x, va.x + 0.25f * u.x, TOL);
    cr_assert_float_eq(quarter.point.y, va.y + 0.25f * u.y, TOL);
    cr_assert_float_eq(over.point.x, full.point.x, 0.0f);
    cr_assert_float_eq(half.dir.x, full.dir.x, 0.0f);
    cr_assert_float_eq(half.dir.y, full.dir.y, 0.0f);
    /* u is along the normal */
    cr_assert_float_eq(vec2_cross(u, normal2(half)), 0.0f, TOL);
    /* full share against a neighbour that keeps vb: on the boundary */
    vec2 na = project2(full, va);
    double d = closest2(p, vec2_sub(na, vb), 2.0);
    cr_assert(fabs(d - 1.0) < 1e-4, "closest approach %g", d);
    /* half of it is not */
    cr_assert_lt(closest2(p, vec2_sub(project2(half, va), vb), 2.0), 0.99);
}

/* Slow approach from afar: v's nearest boundary point is on the cut-off arc
 * (the disk p / tau, R / tau); the new relative velocity lies on that arc. A
 * relative velocity outside the obstacle gives a half-plane that keeps the
 * current velocity. */
Test(orca, cutoff_and_outside_2d)
{
    vec2 p = {10.0f, 1.0f}, vel = {0.3f, 0.0f};
    /* 0.97 p / tau: short of the cut-off disk's centre, inside the disk;
     * at t = tau still 0.3 m apart, less than R */
    vec2 v = {0.485f, 0.0485f};
    float R = 1.0f, inv_tau = 1.0f / 20.0f;
    orca_line2_t l;
    cr_assert_eq(orca2_line_agent(p, v, R, inv_tau, 10.0f, 1.0f, vel, &l), 1);
    vec2 nv = vec2_add(vec2_sub(project2(l, vel), vel), v); /* new relative velocity */
    cr_assert_float_eq(vec2_length(vec2_sub(nv, vec2_scale(p, inv_tau))), R * inv_tau, TOL);
    cr_assert_lt(vec2_dot(vec2_sub(nv, v), p), 0.0f); /* slowed down, not turned */
    double d = closest2(p, nv, 20.0);
    cr_assert(fabs(d - R) < 1e-3, "closest %g", d);

    /* passing wide: no conflict within tau, the current velocity stays */
    vec2 wide = {1.0f, 0.5f};
    cr_assert_gt(closest2(p, wide, 2.0), R);
    cr_assert_eq(orca2_line_agent(p, wide, R, 0.5f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert_geq(side2(l, vel), 0.0f);
    /* moving away */
    cr_assert_eq(orca2_line_agent(p, vec2_make(-1.0f, 0.0f), R, 0.5f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert_geq(side2(l, vel), 0.0f);
}

/* Overlapping agents: with the whole share, one step of the new relative
 * velocity ends at exactly the combined radius. */
Test(orca, overlap_2d)
{
    vec2 p = {0.6f, 0.2f}, vel = {0.5f, 0.0f}, vb = {-0.3f, 0.1f};
    float R = 1.0f, dt = 0.1f;
    orca_line2_t l;
    cr_assert_eq(orca2_line_agent(p, vec2_sub(vel, vb), R, 0.5f, 1.0f / dt, 1.0f, vel, &l), 1);
    vec2 na = project2(l, vel);
    vec2 after = vec2_sub(p, vec2_scale(vec2_sub(na, vb), dt));
    cr_assert_float_eq(vec2_length(after), R, 1e-4f);
    /* the push points away from the neighbour */
    cr_assert_lt(vec2_dot(vec2_sub(na, vel), p), 0.0f);
}

/* Degenerate inputs: finite unit directions, never NaN. */
Test(orca, degenerate_agent_2d)
{
    orca_line2_t l;
    vec2 vel = {0.3f, -0.2f};
    /* coincident, equal velocities: +x, documented */
    cr_assert_eq(orca2_line_agent(vec2_zero(), vec2_zero(), 1.0f, 0.5f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert(finite2(l.point) && finite2(l.dir));
    cr_assert_float_eq(normal2(l).x, 1.0f, 0.0f);
    cr_assert_float_eq(normal2(l).y, 0.0f, 0.0f);
    cr_assert_float_eq(l.point.x, vel.x + 0.5f * 10.0f, TOL);
    /* coincident, moving apart along +y: separate along it */
    cr_assert_eq(orca2_line_agent(vec2_zero(), vec2_make(0.0f, 2.0f), 1.0f, 0.5f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert_float_eq(normal2(l).y, 1.0f, TOL);
    /* overlapping with the relative velocity at the disk's centre p / dt:
     * away from the neighbour */
    vec2 p = {0.5f, 0.0f};
    cr_assert_eq(orca2_line_agent(p, vec2_scale(p, 10.0f), 1.0f, 0.5f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert_float_eq(normal2(l).x, -1.0f, TOL);
    /* zero radius, infinite horizon, zero velocities */
    cr_assert_eq(
        orca2_line_agent(vec2_make(2.0f, 0.0f), vec2_make(1.0f, 0.0f), 0.0f, 0.0f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert(finite2(l.point) && finite2(l.dir));
    cr_assert_eq(orca2_line_agent(vec2_make(2.0f, 0.0f), vec2_zero(), 1.0f, 0.0f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert(finite2(l.point) && finite2(l.dir));
    cr_assert_float_eq(vec2_length(l.dir), 1.0f, TOL);
    /* exactly touching, negative radius (read as 0) */
    cr_assert_eq(
        orca2_line_agent(vec2_make(1.0f, 0.0f), vec2_make(1.0f, 0.0f), 1.0f, 0.5f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert(finite2(l.point) && finite2(l.dir));
    cr_assert_eq(
        orca2_line_agent(vec2_make(1.0f, 0.0f), vec2_make(1.0f, 0.0f), -1.0f, 0.5f, 10.0f, 0.5f, vel, &l), 1);
    cr_assert(finite2(l.point) && finite2(l.dir));
    /* non-finite inputs: no constraint */
    cr_assert_eq(orca2_line_agent(vec2_make(NAN, 0.0f), vec2_zero(), 1.0f, 0.5f, 10.0f, 0.5f, vel, &l), 0);
    cr_assert_eq(orca2_line_agent(vec2_make(3.0f, 0.0f), vec2_zero(), 1.0f, INFINITY, 10.0f, 0.5f, vel, &l),
                 0);
}

/* A sweep of relative positions and velocities: every half-plane is finite
 * with a unit direction, the full-share velocity lands on the obstacle's
 * boundary (or keeps a velocity already outside), and swapping the roles
 * mirrors the constraint exactly. */
Test(orca, sweep_boundary_2d)
{
    uint64_t s = 0x0cafe2d;
    const float tau = 2.0f, R = 1.0f;
    int on_boundary = 0;
    for (int k = 0; k < 2000; ++k) {
        vec2 p = uniform2(&s, -5.0f, 5.0f);
        /* relative velocities aimed roughly at the neighbour, so that many
         * collide within tau */
        vec2 vb = uniform2(&s, -2.0f, 2.0f);
        float jy = uniform(&s, -1.0f, 1.0f);
        float jx = uniform(&s, -1.0f, 1.0f);
        float f = uniform(&s, 0.0f, 1.0f);
        vec2 va = vec2_add(vb, vec2_add(vec2_scale(p, f), vec2_make(jx, jy)));
        if (vec2_length(p) <= R * 1.01f) continue;
        orca_line2_t la, lb;
        cr_assert_eq(orca2_line_agent(p, vec2_sub(va, vb), R, 1.0f / tau, 10.0f, 1.0f, va, &la), 1);
        cr_assert_eq(orca2_line_agent(vec2_neg(p), vec2_sub(vb, va), R, 1.0f / tau, 10.0f, 1.0f, vb, &lb), 1);
        cr_assert_float_eq(vec2_length(la.dir), 1.0f, TOL);
        /* mirror: u_b = -u_a */
        vec2 ua = vec2_sub(la.point, va), ub = vec2_sub(lb.point, vb);
        cr_assert_float_eq(ua.x, -ub.x, 1e-4f);
        cr_assert_float_eq(ua.y, -ub.y, 1e-4f);
        vec2 rel = vec2_sub(la.point, vb); /* v + u: the nearest boundary point */
        double d = closest2(p, rel, tau);
        cr_assert(fabs(d - R) < 2e-4, "k %d: closest %g", k, d);
        if (side2(la, va) < 0.0f)
            ++on_boundary;
        else
            cr_assert_geq(closest2(p, vec2_sub(va, vb), tau), R - 1e-4);
    }
    cr_assert_gt(on_boundary, 500, "%d", on_boundary);
}

/* ======================================================================== */
/* Walls                                                                      */
/* ======================================================================== */

Test(orca, wall_line)
{
    const float r = 0.5f, inv_tau = 1.0f, dt = 0.1f;
    orca_line2_t l;
    vec2 vel = {0.0f, 1.0f};
    /* the wall y = 2 (relative), from x = -3 to 3; the agent 2 m below */
    vec2 p0 = {-3.0f, 2.0f}, p1 = {3.0f, 2.0f};
    cr_assert_eq(orca2_line_wall(p0, p1, r, vel, inv_tau, 1.0f / dt, &l), 1);
    cr_assert_float_eq(vec2_length(l.dir), 1.0f, TOL);
    /* approach up to (2 - 0.5) / tau, slide freely, v = 0 allowed */
    cr_assert_geq(side2(l, vec2_make(0.0f, 1.5f - 1e-4f)), 0.0f);
    cr_assert_lt(side2(l, vec2_make(0.0f, 1.5f + 1e-4f)), 0.0f);
    cr_assert_geq(side2(l, vec2_make(5.0f, 1.0f)), 0.0f);
    cr_assert_geq(side2(l, vec2_make(-5.0f, -1.0f)), 0.0f);
    cr_assert_geq(side2(l, vec2_zero()), 0.0f);
    /* the reversed segment gives the same half-plane */
    orca_line2_t l2;
    cr_assert_eq(orca2_line_wall(p1, p0, r, vel, inv_tau, 1.0f / dt, &l2), 1);
    cr_assert_float_eq(l2.dir.x, l.dir.x, 0.0f);
    cr_assert_float_eq(l2.point.y, l.point.y, 0.0f);
    /* past the end: the nearest point is the end, the normal radial */
    cr_assert_eq(
        orca2_line_wall(vec2_make(1.0f, 1.0f), vec2_make(5.0f, 1.0f), r, vel, inv_tau, 1.0f / dt, &l), 1);
    vec2 n = normal2(l);
    cr_assert_float_eq(n.x, -sqrtf(0.5f), TOL);
    cr_assert_float_eq(n.y, -sqrtf(0.5f), TOL);
    cr_assert_float_eq(vec2_dot(l.point, n), -(sqrtf(2.0f) - r) * inv_tau, TOL);
    /* overlapping by 0.2: leave at 2 m/s or more (0.2 / dt) */
    cr_assert_eq(
        orca2_line_wall(vec2_make(-3.0f, 0.3f), vec2_make(3.0f, 0.3f), r, vel, inv_tau, 1.0f / dt, &l), 1);
    cr_assert_lt(side2(l, vec2_zero()), 0.0f);
    cr_assert_lt(side2(l, vec2_make(0.0f, -1.99f)), 0.0f);
    cr_assert_geq(side2(l, vec2_make(3.0f, -2.0f - 1e-4f)), 0.0f);
    /* centre on the wall: pushed back to the side it came from */
    cr_assert_eq(
        orca2_line_wall(vec2_make(-3.0f, 0.0f), vec2_make(3.0f, 0.0f), r, vel, inv_tau, 1.0f / dt, &l), 1);
    cr_assert_float_eq(normal2(l).y, -1.0f, 0.0f);
    cr_assert_eq(orca2_line_wall(vec2_make(-3.0f, 0.0f), vec2_make(3.0f, 0.0f), r, vec2_neg(vel), inv_tau,
                                 1.0f / dt, &l),
                 1);
    cr_assert_float_eq(normal2(l).y, 1.0f, 0.0f);
    cr_assert_eq(orca2_line_wall(vec2_make(-3.0f, 0.0f), vec2_make(3.0f, 0.0f), r, vec2_zero(), inv_tau,
                                 1.0f / dt, &l),
                 1);
    cr_assert_float_eq(normal2(l).y, 1.0f, 0.0f); /* left of p0 -> p1 */
    /* a zero-length segment under the agent: against vel, else +x */
    cr_assert_eq(orca2_line_wall(vec2_zero(), vec2_zero(), r, vel, inv_tau, 1.0f / dt, &l), 1);
    cr_assert_float_eq(normal2(l).y, -1.0f, 0.0f);
    cr_assert_eq(orca2_line_wall(vec2_zero(), vec2_zero(), r, vec2_zero(), inv_tau, 1.0f / dt, &l), 1);
    cr_assert_float_eq(normal2(l).x, 1.0f, 0.0f);
    cr_assert(finite2(l.point));
    /* a zero-length segment away from the agent: a round post */
    cr_assert_eq(orca2_line_wall(vec2_make(0.0f, 3.0f), vec2_make(0.0f, 3.0f), r, vel, 0.0f, 1.0f / dt, &l),
                 1);
    cr_assert_float_eq(side2(l, vec2_zero()), 0.0f, 0.0f); /* infinite horizon: no approach at all */
    cr_assert_lt(side2(l, vec2_make(0.0f, 1e-3f)), 0.0f);
    /* non-finite: nothing */
    l.point.x = 42.0f;
    cr_assert_eq(orca2_line_wall(vec2_make(NAN, 0.0f), p1, r, vel, inv_tau, 10.0f, &l), 0);
    cr_assert_float_eq(l.point.x, 42.0f, 0.0f);
}

/* ======================================================================== */
/* 2D linear program                                                          */
/* ======================================================================== */

Test(orca, lp_feasible_pref_2d)
{
    orca_line2_t lines[3] = {line_n(1.0f, 0.0f, -0.5f), line_n(0.0f, 1.0f, -0.5f),
                             line_n(-1.0f, -1.0f, -1.0f)};
    orca_line2_t scratch[3];
    vec2 out;
    vec2 pref = {0.3f, 0.2f};
    cr_assert_eq(orca2_solve(lines, 3, 0, 1.0f, pref, scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, pref.x, 0.0f);
    cr_assert_float_eq(out.y, pref.y, 0.0f);
    /* beyond max speed, feasible direction: clamped onto the circle */
    cr_assert_eq(orca2_solve(lines, 3, 0, 1.0f, vec2_make(3.0f, 4.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, 0.6f, TOL);
    cr_assert_float_eq(out.y, 0.8f, TOL);
    /* pref cut off by a line: projected onto it */
    cr_assert_eq(orca2_solve(lines, 3, 0, 1.0f, vec2_make(-0.8f, 0.1f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, -0.5f, TOL);
    cr_assert_float_eq(out.y, 0.1f, TOL);
    /* two lines cut it: their corner */
    cr_assert_eq(orca2_solve(lines, 3, 0, 1.0f, vec2_make(-0.8f, -0.7f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, -0.5f, TOL);
    cr_assert_float_eq(out.y, -0.5f, TOL);
    /* a line and the speed circle */
    orca_line2_t one = line_n(0.0f, 1.0f, 0.6f);
    cr_assert_eq(orca2_solve(&one, 1, 0, 1.0f, vec2_make(0.0f, -2.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.y, 0.6f, TOL);
    cr_assert_float_eq(fabsf(out.x), 0.0f, TOL);
    cr_assert_eq(orca2_solve(&one, 1, 0, 1.0f, vec2_make(2.0f, -2.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, 0.8f, TOL);
    cr_assert_float_eq(out.y, 0.6f, TOL);
}

/* Random problems (seeded): 1 to 6 lines, speed 1, pref in a box around the
 * disk. Against a 401 x 401 grid of the disk: a feasible grid point means
 * ORCA_FEASIBLE, and the result then satisfies every line and the disk
 * within 1e-5 and is at least as close to pref as the best grid point. */
Test(orca, lp_brute_force_2d)
{
    uint64_t s = 0x2d1b;
    enum { G = 401 };
    const float h = 2.0f / (G - 1);
    int compared = 0, pref_kept = 0;
    for (int k = 0; k < 150; ++k) {
        int n = 1 + (int)(rng_splitmix64(&s) % 6);
        orca_line2_t lines[6], scratch[6];
        for (int i = 0; i < n; ++i) {
            float a = uniform(&s, -VEC_PI, VEC_PI);
            lines[i] = line_n(cosf(a), sinf(a), uniform(&s, -1.0f, 0.6f));
            lines[i].point = vec2_add(lines[i].point, vec2_scale(lines[i].dir, uniform(&s, -2.0f, 2.0f)));
        }
        vec2 pref = uniform2(&s, -1.5f, 1.5f);
        vec2 out;
        orca_status_t st = orca2_solve(lines, n, 0, 1.0f, pref, scratch, &out);
        cr_assert(finite2(out));
        cr_assert_leq(vec2_length(out), 1.0f + TOL);
        float best = INFINITY;
        for (int a = 0; a < G; ++a)
            for (int b = 0; b < G; ++b) {
                vec2 x = {-1.0f + h * a, -1.0f + h * b};
                if (vec2_length_sq(x) > 1.0f) continue;
                int ok = 1;
                for (int i = 0; i < n && ok; ++i) ok = side2(lines[i], x) >= 0.0f;
                if (ok) best = fminf(best, vec2_distance(x, pref));
            }
        if (best < INFINITY) {
            cr_assert_eq(st, ORCA_FEASIBLE, "problem %d", k);
            ++compared;
        }
        int pref_ok = vec2_length_sq(pref) <= 1.0f;
        for (int i = 0; i < n; ++i) pref_ok = pref_ok && side2(lines[i], pref) >= 0.0f;
        if (pref_ok) {
            cr_assert_eq(st, ORCA_FEASIBLE);
            cr_assert_eq(memcmp(&out, &pref, sizeof out), 0, "problem %d: pref feasible, moved", k);
            ++pref_kept;
        }
        if (st == ORCA_FEASIBLE) {
            for (int i = 0; i < n; ++i) cr_assert_geq(side2(lines[i], out), -TOL, "problem %d line %d", k, i);
            cr_assert_leq(vec2_distance(out, pref), best + TOL, "problem %d: %g > grid %g", k,
                          (double)vec2_distance(out, pref), (double)best);
        }
    }
    cr_assert_gt(compared, 50);
    cr_assert_gt(pref_kept, 5, "%d", pref_kept);
}

/* Infeasible: two agent lines that face each other (x >= 0.5, x <= -0.5)
 * and a static line y >= 0.3. The fallback runs, keeps the static line, and
 * splits the violation evenly (x = 0). */
Test(orca, lp_fallback_keeps_static_2d)
{
    orca_line2_t lines[3] = {line_n(0.0f, 1.0f, 0.3f), line_n(1.0f, 0.0f, 0.5f), line_n(-1.0f, 0.0f, 0.5f)};
    orca_line2_t scratch[3];
    vec2 out;
    cr_assert_eq(orca2_solve(lines, 3, 1, 2.0f, vec2_make(1.0f, -1.0f), scratch, &out), ORCA_RELAXED);
    cr_assert_geq(side2(lines[0], out), -TOL);
    cr_assert_float_eq(out.x, 0.0f, TOL);
    cr_assert_float_eq(side2(lines[1], out), -0.5f, TOL);
    cr_assert_float_eq(side2(lines[2], out), -0.5f, TOL);
    cr_assert_leq(vec2_length(out), 2.0f + TOL);
    /* the static line pushing into the agents' conflict: x >= 0.2 static */
    orca_line2_t l2[3] = {line_n(1.0f, 0.0f, 0.2f), line_n(1.0f, 0.0f, 0.5f), line_n(-1.0f, 0.0f, 0.5f)};
    cr_assert_eq(orca2_solve(l2, 3, 1, 2.0f, vec2_zero(), scratch, &out), ORCA_RELAXED);
    cr_assert_float_eq(out.x, 0.2f, TOL); /* the static line binds; violation 0.7 and 0.3 */
    /* no static line: the same as an even split */
    cr_assert_eq(orca2_solve(lines + 1, 2, 0, 2.0f, vec2_make(0.0f, 1.0f), scratch, &out), ORCA_RELAXED);
    cr_assert_float_eq(out.x, 0.0f, TOL);
    /* agent lines beyond max speed: the best the disk allows */
    orca_line2_t far = line_n(1.0f, 0.0f, 3.0f);
    cr_assert_eq(orca2_solve(&far, 1, 0, 1.0f, vec2_zero(), scratch, &out), ORCA_RELAXED);
    cr_assert_float_eq(out.x, 1.0f, TOL);
    cr_assert_float_eq(out.y, 0.0f, TOL);
    /* static lines that cannot hold together (two walls pushing apart):
     * ORCA_RELAXED_ALL, the largest violation over all of them minimised */
    orca_line2_t walls[3] = {line_n(0.0f, 1.0f, 0.4f), line_n(0.0f, -1.0f, 0.4f), line_n(1.0f, 0.0f, 0.1f)};
    cr_assert_eq(orca2_solve(walls, 3, 2, 1.0f, vec2_zero(), scratch, &out), ORCA_RELAXED_ALL);
    /* both walls violated by 0.4; the agent line, violated less, does not
     * move the minimum */
    cr_assert_float_eq(out.y, 0.0f, TOL);
    cr_assert_float_eq(side2(walls[0], out), -0.4f, TOL);
    cr_assert_float_eq(side2(walls[1], out), -0.4f, TOL);
    cr_assert_geq(side2(walls[2], out), -0.4f - TOL);
}

/* Random infeasible problems against a grid: the fallback's largest agent
 * violation is no more than the grid's best among points satisfying the
 * static lines, and the static lines hold. */
Test(orca, lp_fallback_brute_force_2d)
{
    uint64_t s = 0xfa11;
    enum { G = 401 };
    const float h = 2.0f / (G - 1);
    int compared = 0;
    for (int k = 0; k < 400 && compared < 60; ++k) {
        int n_static = (int)(rng_splitmix64(&s) % 3);
        int n = n_static + 2 + (int)(rng_splitmix64(&s) % 5);
        orca_line2_t lines[8], scratch[8];
        for (int i = 0; i < n; ++i) {
            float a = uniform(&s, -VEC_PI, VEC_PI);
            /* static lines hold near the origin, agent lines demand speed */
            float c = i < n_static ? uniform(&s, -0.8f, 0.0f) : uniform(&s, 0.1f, 1.2f);
            lines[i] = line_n(cosf(a), sinf(a), c);
        }
        vec2 out;
        float py = uniform(&s, -1, 1);
        float px = uniform(&s, -1, 1);
        orca_status_t st = orca2_solve(lines, n, n_static, 1.0f, vec2_make(px, py), scratch, &out);
        cr_assert(finite2(out));
        cr_assert_leq(vec2_length(out), 1.0f + TOL);
        if (st == ORCA_FEASIBLE) continue;
        cr_assert_eq(st, ORCA_RELAXED, "problem %d", k);
        float got = 0.0f;
        for (int i = 0; i < n_static; ++i)
            cr_assert_geq(side2(lines[i], out), -TOL, "problem %d static %d", k, i);
        for (int i = n_static; i < n; ++i) got = fmaxf(got, -side2(lines[i], out));
        float best = INFINITY;
        for (int a = 0; a < G; ++a)
            for (int b = 0; b < G; ++b) {
                vec2 x = {-1.0f + h * a, -1.0f + h * b};
                if (vec2_length_sq(x) > 1.0f) continue;
                int ok = 1;
                for (int i = 0; i < n_static && ok; ++i) ok = side2(lines[i], x) >= 0.0f;
                if (!ok) continue;
                float worst = 0.0f;
                for (int i = n_static; i < n; ++i) worst = fmaxf(worst, -side2(lines[i], x));
                best = fminf(best, worst);
            }
        cr_assert(best < INFINITY);
        cr_assert_gt(best, 0.0f); /* the grid agrees it is infeasible */
        cr_assert_leq(got, best + TOL, "problem %d: worst %g > grid %g", k, (double)got, (double)best);
        cr_assert_geq(got, best - 2.0f * h, "problem %d: worst %g << grid %g", k, (double)got, (double)best);
        ++compared;
    }
    cr_assert_geq(compared, 60);
}

/* Degenerate input: n = 0, speed 0 (or NaN, infinite, negative), zero
 * directions, a non-finite pref, NULL arrays. */
Test(orca, lp_degenerate_2d)
{
    orca_line2_t scratch[4];
    vec2 out;
    cr_assert_eq(orca2_solve(NULL, 0, 0, 2.0f, vec2_make(3.0f, 4.0f), NULL, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, 1.2f, TOL);
    cr_assert_float_eq(out.y, 1.6f, TOL);
    cr_assert_eq(orca2_solve(NULL, 0, 0, 2.0f, vec2_zero(), NULL, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, 0.0f, 0.0f);
    cr_assert_eq(orca2_solve(NULL, 0, 0, 2.0f, vec2_make(NAN, 1.0f), NULL, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, 0.0f, 0.0f);
    cr_assert_float_eq(out.y, 0.0f, 0.0f);
    float speeds[4] = {0.0f, -1.0f, NAN, INFINITY};
    orca_line2_t l[2] = {line_n(1.0f, 0.0f, -0.5f), line_n(0.0f, 1.0f, 0.5f)};
    for (int k = 0; k < 4; ++k) {
        cr_assert_eq(orca2_solve(l, 1, 0, speeds[k], vec2_make(1.0f, 1.0f), scratch, &out), ORCA_FEASIBLE);
        cr_assert_float_eq(out.x, 0.0f, 0.0f);
        cr_assert_float_eq(out.y, 0.0f, 0.0f);
        cr_assert_eq(orca2_solve(l, 2, 0, speeds[k], vec2_make(1.0f, 1.0f), scratch, &out), ORCA_RELAXED);
        cr_assert(finite2(out));
        cr_assert_float_eq(vec2_length(out), 0.0f, TOL);
        cr_assert_eq(orca2_solve(l, 2, 2, speeds[k], vec2_make(1.0f, 1.0f), scratch, &out), ORCA_RELAXED_ALL);
        cr_assert(finite2(out));
    }
    /* zero directions constrain nothing, alone or among others */
    orca_line2_t z[3] = {
        {{0.5f, 0.5f}, {0.0f, 0.0f}}, line_n(1.0f, 0.0f, 0.2f), {{-3.0f, 1.0f}, {0.0f, 0.0f}}};
    cr_assert_eq(orca2_solve(z, 1, 0, 1.0f, vec2_make(-0.5f, 0.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, -0.5f, 0.0f);
    cr_assert_eq(orca2_solve(z, 3, 1, 1.0f, vec2_make(-0.5f, 0.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, 0.2f, TOL);
    orca_line2_t zf[3] = {z[0], line_n(1.0f, 0.0f, 0.5f), line_n(-1.0f, 0.0f, 0.5f)};
    cr_assert_eq(orca2_solve(zf, 3, 1, 1.0f, vec2_zero(), scratch, &out), ORCA_RELAXED);
    cr_assert(finite2(out));
    cr_assert_float_eq(out.x, 0.0f, TOL);
    /* the same line twice, and a line opposite itself (a thin strip) */
    orca_line2_t twice[2] = {line_n(0.3f, 0.4f, 0.2f), line_n(0.3f, 0.4f, 0.2f)};
    cr_assert_eq(orca2_solve(twice, 2, 0, 1.0f, vec2_zero(), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(vec2_length(out), 0.2f, TOL);
    orca_line2_t strip[2] = {line_n(0.0f, 1.0f, 0.2f), line_n(0.0f, -1.0f, -0.2f)};
    cr_assert_eq(orca2_solve(strip, 2, 0, 1.0f, vec2_make(0.4f, 0.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.y, 0.2f, TOL);
    cr_assert_float_eq(out.x, 0.4f, TOL);
    /* a huge speed limit: still finite */
    orca_line2_t facing[3] = {line_n(1.0f, 0.0f, 0.5f), line_n(-1.0f, 0.0f, 0.5f), line_n(0.0f, 1.0f, 2.0f)};
    cr_assert_eq(orca2_solve(facing, 3, 0, 1e30f, vec2_make(0.0f, -1e20f), scratch, &out), ORCA_RELAXED);
    cr_assert(finite2(out));
    cr_assert_float_eq(out.x, 0.0f, TOL);
    cr_assert_eq(orca2_solve(facing + 2, 1, 0, 1e30f, vec2_make(0.0f, -1e20f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.y, 2.0f, TOL);
    /* NULL arrays with n > 0 */
    cr_assert_eq(orca2_solve(l, 2, 0, 1.0f, vec2_make(2.0f, 0.0f), NULL, &out), ORCA_NO_ARRAY);
    cr_assert_float_eq(out.x, 1.0f, TOL);
    cr_assert_eq(orca2_solve(NULL, 2, 0, 1.0f, vec2_zero(), scratch, &out), ORCA_NO_ARRAY);
    /* n_static out of range is clamped */
    cr_assert_eq(orca2_solve(l, 1, 5, 1.0f, vec2_make(-1.0f, 0.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_eq(orca2_solve(l, 1, -5, 1.0f, vec2_make(-1.0f, 0.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, -0.5f, TOL);
    cr_assert_eq(orca2_solve(l, -3, 0, 1.0f, vec2_make(-1.0f, 0.0f), scratch, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, -1.0f, TOL);
}

/* Same input, same bits: repeated solves agree to the bit whatever the
 * scratch arrays held before (NaN garbage here), in 2D and 3D, on feasible
 * and infeasible sets. */
Test(orca, deterministic_bits)
{
    uint64_t s = 0xd373;
    for (int k = 0; k < 200; ++k) {
        int n = 1 + (int)(rng_splitmix64(&s) % 8);
        orca_line2_t lines[8], scratch[8];
        orca_plane3_t planes[8], ps[8];
        orca_line2_t ls[8];
        for (int i = 0; i < n; ++i) {
            float a = uniform(&s, -VEC_PI, VEC_PI);
            lines[i] = line_n(cosf(a), sinf(a), uniform(&s, -1.0f, 1.0f));
            float c = uniform(&s, -1.0f, 1.0f);
            vec3 nrm = rand_unit3(&s);
            planes[i] = plane_n(nrm, c);
        }
        vec2 pref2 = uniform2(&s, -2, 2);
        vec3 pref3 = uniform3(&s, -2, 2);
        int n_static = (int)(rng_splitmix64(&s) % 2);
        vec2 a2, b2;
        vec3 a3, b3;
        for (int i = 0; i < 8; ++i) scratch[i] = (orca_line2_t){{NAN, NAN}, {NAN, NAN}};
        orca_status_t sa = orca2_solve(lines, n, n_static, 1.0f, pref2, scratch, &a2);
        memset(scratch, 0x5a, sizeof scratch);
        orca_status_t sb = orca2_solve(lines, n, n_static, 1.0f, pref2, scratch, &b2);
        cr_assert_eq(sa, sb);
        cr_assert_eq(memcmp(&a2, &b2, sizeof a2), 0, "problem %d", k);
        for (int i = 0; i < 8; ++i) ps[i] = (orca_plane3_t){{NAN, NAN, NAN}, {NAN, NAN, NAN}};
        memset(ls, 0xff, sizeof ls);
        sa = orca3_solve(planes, n, n_static, 1.0f, pref3, ps, ls, &a3);
        memset(ps, 0x5a, sizeof ps);
        memset(ls, 0x00, sizeof ls);
        sb = orca3_solve(planes, n, n_static, 1.0f, pref3, ps, ls, &b3);
        cr_assert_eq(sa, sb);
        cr_assert_eq(memcmp(&a3, &b3, sizeof a3), 0, "problem %d", k);
        cr_assert(finite2(a2) && finite3(a3));
    }
}

/* ======================================================================== */
/* 2D simulations                                                             */
/* ======================================================================== */

typedef struct wall2 {
    vec2 a, b;
} wall2;

static float seg_dist2(vec2 x, wall2 w)
{
    vec2 e = vec2_sub(w.b, w.a);
    float t = vec2_dot(vec2_sub(x, w.a), e) / vec2_length_sq(e);
    t = fminf(fmaxf(t, 0.0f), 1.0f);
    return vec2_distance(x, vec2_add(w.a, vec2_scale(e, t)));
}

enum { MAX_AGENTS = 16, MAX_LINES = 24 };

typedef struct sim2_result {
    float min_ratio;      /* smallest distance over the combined radius */
    float min_wall_ratio; /* smallest distance to a wall over the radius */
    float max_goal_dist;  /* at the end */
    int relaxed;          /* solves that fell back */
    uint32_t hash;        /* of the final state's bits */
} sim2_result_t;

static uint32_t fnv(uint32_t h, const void* p, size_t n)
{
    const unsigned char* c = (const unsigned char*)p;
    for (size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 16777619u;
    return h;
}

/* Plain Euler: every agent's new velocity from the same state, then all
 * move. pref = toward the goal at speed min(vmax, distance / 1 s), turned
 * counter-clockwise by `bias` radians (the symmetry breaker of orca.h). */
static sim2_result_t sim2(int n, vec2* pos, const vec2* goal, const wall2* walls, int n_walls, float r,
                          float vmax, float tau, float tau_obst, float dt, int steps, float bias)
{
    vec2 vel[MAX_AGENTS] = {{0}}, nv[MAX_AGENTS];
    sim2_result_t res = {.min_ratio = INFINITY, .min_wall_ratio = INFINITY, .hash = 2166136261u};
    for (int step = 0; step < steps; ++step) {
        for (int i = 0; i < n; ++i) {
            orca_line2_t lines[MAX_LINES], scratch[MAX_LINES];
            int m = 0;
            for (int w = 0; w < n_walls; ++w)
                m += orca2_line_wall(vec2_sub(walls[w].a, pos[i]), vec2_sub(walls[w].b, pos[i]), r, vel[i],
                                     1.0f / tau_obst, 1.0f / dt, &lines[m]);
            int n_static = m;
            for (int j = 0; j < n; ++j) {
                if (j == i) continue;
                m += orca2_line_agent(vec2_sub(pos[j], pos[i]), vec2_sub(vel[i], vel[j]), 2.0f * r,
                                      1.0f / tau, 1.0f / dt, 0.5f, vel[i], &lines[m]);
            }
            vec2 pref = vec2_rotate(vec2_clamp_length(vec2_sub(goal[i], pos[i]), vmax), bias);
            orca_status_t st = orca2_solve(lines, m, n_static, vmax, pref, scratch, &nv[i]);
            cr_assert(finite2(nv[i]));
            cr_assert_leq(vec2_length(nv[i]), vmax * (1.0f + TOL));
            if (st != ORCA_FEASIBLE) ++res.relaxed;
        }
        for (int i = 0; i < n; ++i) {
            vel[i] = nv[i];
            pos[i] = vec2_add(pos[i], vec2_scale(vel[i], dt));
        }
        for (int i = 0; i < n; ++i) {
            for (int j = i + 1; j < n; ++j)
                res.min_ratio = fminf(res.min_ratio, vec2_distance(pos[i], pos[j]) / (2.0f * r));
            for (int w = 0; w < n_walls; ++w)
                res.min_wall_ratio = fminf(res.min_wall_ratio, seg_dist2(pos[i], walls[w]) / r);
        }
    }
    for (int i = 0; i < n; ++i) res.max_goal_dist = fmaxf(res.max_goal_dist, vec2_distance(pos[i], goal[i]));
    res.hash = fnv(res.hash, pos, sizeof(vec2) * (size_t)n);
    res.hash = fnv(res.hash, vel, sizeof(vec2) * (size_t)n);
    return res;
}

static sim2_result_t circle2(int n, float radius_circle, int steps, float bias)
{
    vec2 pos[MAX_AGENTS], goal[MAX_AGENTS];
    for (int i = 0; i < n; ++i) {
        float a = VEC_TWO_PI * (float)i / (float)n;
        pos[i] = vec2_scale(vec2_from_angle(a), radius_circle);
        goal[i] = vec2_neg(pos[i]);
    }
    return sim2(n, pos, goal, NULL, 0, 0.5f, 1.0f, 2.0f, 1.0f, 0.1f, steps, bias);
}

#define BIAS 0.01f /* rad */

Test(orca, sim_two_agents_swap_2d)
{
    sim2_result_t r = circle2(2, 4.0f, 300, BIAS);
    cr_assert_eq(r.relaxed, 0); /* every program feasible */
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g of the radii", (double)r.min_ratio);
    cr_assert_lt(r.max_goal_dist, 0.05f, "goal miss %g", (double)r.max_goal_dist);
    /* the same run again gives the same bits */
    cr_assert_eq(circle2(2, 4.0f, 300, BIAS).hash, r.hash);
    /* no bias: only float rounding of the start (sin(pi) != 0) breaks the
     * head-on symmetry; it still resolves */
    r = circle2(2, 4.0f, 300, 0.0f);
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g of the radii", (double)r.min_ratio);
    cr_assert_lt(r.max_goal_dist, 0.05f, "goal miss %g", (double)r.max_goal_dist);
}

Test(orca, sim_eight_agents_circle_2d)
{
    sim2_result_t r = circle2(8, 5.0f, 600, BIAS);
    cr_assert_eq(r.relaxed, 0, "%d programs relaxed", r.relaxed);
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g of the radii", (double)r.min_ratio);
    cr_assert_lt(r.max_goal_dist, 0.05f, "goal miss %g", (double)r.max_goal_dist);
    cr_assert_eq(circle2(8, 5.0f, 600, BIAS).hash, r.hash);
    /* without a symmetry breaker the ring jams around the centre (orca.h,
     * "Symmetry"), touching but never overlapping */
    r = circle2(8, 5.0f, 600, 0.0f);
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g of the radii", (double)r.min_ratio);
    cr_assert_lt(r.min_ratio, 1.01f);
    cr_assert_gt(r.max_goal_dist, 5.0f);
}

/* An agent driven straight at a wall stops in front of it; one driven at it
 * at an angle slides along it and around its end; an agent that starts
 * inside the wall's capsule is pushed out (ORCA_RELAXED_ALL while the push
 * exceeds its speed). None ever comes closer than the radius less 1%, apart
 * from the one that starts inside. */
Test(orca, sim_wall_2d)
{
    wall2 w = {{-2.0f, 0.0f}, {2.0f, 0.0f}};
    vec2 pos = {0.0f, -3.0f}, goal = {0.0f, 3.0f};
    sim2_result_t r = sim2(1, &pos, &goal, &w, 1, 0.5f, 1.5f, 2.0f, 1.0f, 0.1f, 300, 0.0f);
    cr_assert_geq(r.min_wall_ratio, 0.99f, "closest %g of the radius", (double)r.min_wall_ratio);
    cr_assert_lt(pos.y, 0.0f);
    cr_assert_gt(pos.y, -0.6f); /* it got there */

    pos = vec2_make(-1.0f, -3.0f);
    goal = vec2_make(3.5f, 3.0f);
    r = sim2(1, &pos, &goal, &w, 1, 0.5f, 1.5f, 2.0f, 1.0f, 0.1f, 400, 0.0f);
    cr_assert_geq(r.min_wall_ratio, 0.99f, "closest %g of the radius", (double)r.min_wall_ratio);
    cr_assert_lt(r.max_goal_dist, 0.05f, "goal miss %g", (double)r.max_goal_dist);

    /* two agents and a wall between them and their goals */
    vec2 two[2] = {{-0.3f, -2.0f}, {0.3f, -2.5f}}, goals[2] = {{3.0f, 2.0f}, {-3.0f, 2.0f}};
    r = sim2(2, two, goals, &w, 1, 0.5f, 1.5f, 2.0f, 1.0f, 0.1f, 500, BIAS);
    cr_assert_geq(r.min_wall_ratio, 0.99f, "closest %g of the radius", (double)r.min_wall_ratio);
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g of the radii", (double)r.min_ratio);

    /* starts 0.2 m into the capsule, wants to go through */
    pos = vec2_make(0.5f, -0.3f);
    goal = vec2_make(0.5f, 3.0f);
    vec2 vel0 = {0.0f, 1.0f};
    orca_line2_t l, scratch[1];
    cr_assert_eq(orca2_line_wall(vec2_sub(w.a, pos), vec2_sub(w.b, pos), 0.5f, vel0, 1.0f, 10.0f, &l), 1);
    vec2 v;
    cr_assert_eq(orca2_solve(&l, 1, 1, 1.5f, vec2_make(0.0f, 1.5f), scratch, &v), ORCA_RELAXED_ALL);
    cr_assert_float_eq(v.y, -1.5f, TOL);
    r = sim2(1, &pos, &goal, &w, 1, 0.5f, 1.5f, 2.0f, 1.0f, 0.1f, 100, 0.0f);
    cr_assert_geq(seg_dist2(pos, w), 0.5f * 0.99f);
    cr_assert_lt(pos.y, 0.0f);
}

/* Crowd and walls: eight agents swapping on a circle inside a square room
 * whose walls pass close; the walls stay hard. */
Test(orca, sim_room_2d)
{
    vec2 pos[8], goal[8];
    for (int i = 0; i < 8; ++i) {
        pos[i] = vec2_scale(vec2_from_angle(VEC_TWO_PI * (float)i / 8.0f + 0.1f), 4.0f);
        goal[i] = vec2_neg(pos[i]);
    }
    wall2 walls[4] = {{{-4.8f, -4.8f}, {4.8f, -4.8f}},
                      {{4.8f, -4.8f}, {4.8f, 4.8f}},
                      {{4.8f, 4.8f}, {-4.8f, 4.8f}},
                      {{-4.8f, 4.8f}, {-4.8f, -4.8f}}};
    sim2_result_t r = sim2(8, pos, goal, walls, 4, 0.5f, 1.0f, 2.0f, 1.0f, 0.1f, 600, BIAS);
    cr_assert_geq(r.min_wall_ratio, 0.99f, "closest %g of the radius", (double)r.min_wall_ratio);
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g of the radii", (double)r.min_ratio);
    cr_assert_lt(r.max_goal_dist, 0.05f, "goal miss %g", (double)r.max_goal_dist);
}

/* ======================================================================== */
/* 3D                                                                         */
/* ======================================================================== */

Test(orca, head_on_reciprocal_3d)
{
    vec3 p = {4.0f, 0.0f, 0.0f}, va = {1.0f, 0.0f, 0.0f}, vb = {-1.0f, 0.0f, 0.0f};
    const float R = 1.0f, tau = 2.0f;
    orca_plane3_t a, b, full;
    cr_assert_eq(orca3_plane_agent(p, vec3_sub(va, vb), R, 1.0f / tau, 10.0f, 0.5f, va, &a), 1);
    cr_assert_eq(orca3_plane_agent(vec3_neg(p), vec3_sub(vb, va), R, 1.0f / tau, 10.0f, 0.5f, vb, &b), 1);
    cr_assert_eq(orca3_plane_agent(p, vec3_sub(va, vb), R, 1.0f / tau, 10.0f, 1.0f, va, &full), 1);
    cr_assert(finite3(a.point) && finite3(a.normal));
    cr_assert_float_eq(vec3_length(a.normal), 1.0f, TOL);
    vec3 ua = vec3_sub(a.point, va), ub = vec3_sub(b.point, vb), uf = vec3_sub(full.point, va);
    cr_assert_float_eq(ua.x, -ub.x, TOL);
    cr_assert_float_eq(ua.y, -ub.y, TOL);
    cr_assert_float_eq(ua.z, -ub.z, TOL);
    cr_assert_float_eq(a.normal.x, -b.normal.x, TOL);
    cr_assert_float_eq(a.normal.z, -b.normal.z, TOL);
    cr_assert_float_eq(uf.x, 2.0f * ua.x, TOL);
    cr_assert_float_eq(uf.z, 2.0f * ua.z, TOL);
    /* they dodge in opposite directions, and together exactly enough */
    vec3 na = project3(a, va), nb = project3(b, vb);
    cr_assert_gt(fabsf(na.z - va.z) + fabsf(na.y - va.y), 0.1f);
    double d = closest3(p, vec3_sub(na, nb), tau);
    cr_assert(fabs(d - R) < 1e-4, "closest %g", d);
    cr_assert_lt(closest3(p, vec3_sub(na, vb), tau), R - 0.01);
    orca_plane3_t none = a;
    cr_assert_eq(orca3_plane_agent(p, vec3_sub(va, vb), R, 1.0f / tau, 10.0f, 0.0f, va, &none), 0);
}

Test(orca, sweep_boundary_3d)
{
    uint64_t s = 0x0cafe3d;
    const float tau = 2.0f, R = 1.0f;
    int on_boundary = 0, cap = 0;
    for (int k = 0; k < 2000; ++k) {
        vec3 p = uniform3(&s, -5, 5);
        vec3 vb = uniform3(&s, -2, 2);
        float jz = uniform(&s, -1, 1);
        float jy = uniform(&s, -1, 1);
        float jx = uniform(&s, -1, 1);
        float f = uniform(&s, 0.0f, 1.0f);
        vec3 va = vec3_add(vb, vec3_add(vec3_scale(p, f), vec3_make(jx, jy, jz)));
        if (vec3_length(p) <= R * 1.01f) continue;
        orca_plane3_t a, b;
        cr_assert_eq(orca3_plane_agent(p, vec3_sub(va, vb), R, 1.0f / tau, 10.0f, 1.0f, va, &a), 1);
        cr_assert_eq(orca3_plane_agent(vec3_neg(p), vec3_sub(vb, va), R, 1.0f / tau, 10.0f, 1.0f, vb, &b), 1);
        cr_assert_float_eq(vec3_length(a.normal), 1.0f, TOL);
        vec3 ua = vec3_sub(a.point, va), ub = vec3_sub(b.point, vb);
        cr_assert_float_eq(ua.x, -ub.x, 1e-4f);
        cr_assert_float_eq(ua.y, -ub.y, 1e-4f);
        cr_assert_float_eq(ua.z, -ub.z, 1e-4f);
        vec3 rel = vec3_sub(a.point, vb);
        double d = closest3(p, rel, tau);
        cr_assert(fabs(d - R) < 2e-4, "k %d: closest %g", k, d);
        if (side3(a, va) < 0.0f)
            ++on_boundary;
        else
            cr_assert_geq(closest3(p, vec3_sub(va, vb), tau), R - 1e-4);
        if (fabsf(vec3_length(vec3_sub(rel, vec3_scale(p, 1.0f / tau))) - R / tau) < 1e-5f) ++cap;
    }
    cr_assert_gt(on_boundary, 500, "%d", on_boundary);
    cr_assert_gt(cap, 50, "%d", cap);
}

Test(orca, degenerate_agent_3d)
{
    orca_plane3_t pl;
    vec3 vel = {0.1f, 0.2f, 0.3f};
    cr_assert_eq(orca3_plane_agent(vec3_zero(), vec3_zero(), 1.0f, 0.5f, 10.0f, 0.5f, vel, &pl), 1);
    cr_assert_float_eq(pl.normal.x, 1.0f, 0.0f);
    cr_assert(finite3(pl.point));
    vec3 p = {0.0f, 0.0f, 0.5f};
    cr_assert_eq(orca3_plane_agent(p, vec3_scale(p, 10.0f), 1.0f, 0.5f, 10.0f, 0.5f, vel, &pl), 1);
    cr_assert_float_eq(pl.normal.z, -1.0f, TOL);
    cr_assert_eq(orca3_plane_agent(vec3_make(0, 3, 0), vec3_zero(), 1.0f, 0.0f, 10.0f, 0.5f, vel, &pl), 1);
    cr_assert(finite3(pl.point) && finite3(pl.normal));
    cr_assert_eq(orca3_plane_agent(vec3_make(0, 3, 0), vec3_make(0, 1, 0), 0.0f, 0.0f, 10.0f, 0.5f, vel, &pl),
                 1);
    cr_assert(finite3(pl.point) && finite3(pl.normal));
    cr_assert_eq(orca3_plane_agent(vec3_make(0, 1, 0), vec3_make(0, 1, 0), 1.0f, 0.5f, 10.0f, 0.5f, vel, &pl),
                 1);
    cr_assert(finite3(pl.point) && finite3(pl.normal));
    cr_assert_eq(
        orca3_plane_agent(vec3_make(NAN, 1, 0), vec3_make(0, 1, 0), 1.0f, 0.5f, 10.0f, 0.5f, vel, &pl), 0);
    /* head-on along each axis and its opposite: dodges mirror */
    for (int ax = 0; ax < 3; ++ax) {
        vec3 q = ax == 0 ? vec3_make(3, 0, 0) : ax == 1 ? vec3_make(0, 3, 0) : vec3_make(0, 0, 3);
        orca_plane3_t a, b;
        cr_assert_eq(orca3_plane_agent(q, vec3_scale(q, 0.5f), 1.0f, 0.5f, 10.0f, 0.5f, vec3_zero(), &a), 1);
        cr_assert_eq(
            orca3_plane_agent(vec3_neg(q), vec3_scale(q, -0.5f), 1.0f, 0.5f, 10.0f, 0.5f, vec3_zero(), &b),
            1);
        cr_assert_float_eq(a.point.x, -b.point.x, TOL);
        cr_assert_float_eq(a.point.y, -b.point.y, TOL);
        cr_assert_float_eq(a.point.z, -b.point.z, TOL);
        cr_assert_float_eq(vec3_dot(a.normal, q), -vec3_dot(b.normal, q), TOL);
    }
}

/* A static sphere is the agent case against a neighbour at rest with
 * share 1. */
Test(orca, sphere_obstacle_plane)
{
    vec3 c = {3.0f, 0.2f, 0.0f}, vel = {1.0f, 0.0f, 0.0f};
    orca_plane3_t a, b;
    cr_assert_eq(orca3_plane_sphere(c, 1.5f, vel, 0.5f, 10.0f, &a), 1);
    cr_assert_eq(orca3_plane_agent(c, vel, 1.5f, 0.5f, 10.0f, 1.0f, vel, &b), 1);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
    cr_assert_float_eq(closest3(c, project3(a, vel), 2.0), 1.5, 1e-4);
}

Test(orca, lp_feasible_pref_3d)
{
    orca_plane3_t p[3] = {plane_n(vec3_make(1, 0, 0), -0.5f), plane_n(vec3_make(0, 1, 0), -0.5f),
                          plane_n(vec3_make(0, 0, 1), -0.5f)};
    orca_plane3_t ps[3];
    orca_line2_t ls[3];
    vec3 out, pref = {0.1f, 0.2f, -0.3f};
    cr_assert_eq(orca3_solve(p, 3, 0, 1.0f, pref, ps, ls, &out), ORCA_FEASIBLE);
    cr_assert_eq(memcmp(&out, &pref, sizeof out), 0);
    cr_assert_eq(orca3_solve(p, 3, 0, 1.0f, vec3_make(-1, -1, -1), ps, ls, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, -0.5f, TOL);
    cr_assert_float_eq(out.y, -0.5f, TOL);
    cr_assert_float_eq(out.z, -0.5f, TOL);
    cr_assert_eq(orca3_solve(p, 3, 0, 1.0f, vec3_make(-1, 0.2f, 0.1f), ps, ls, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, -0.5f, TOL);
    cr_assert_float_eq(out.y, 0.2f, TOL);
    cr_assert_float_eq(out.z, 0.1f, TOL);
    cr_assert_eq(orca3_solve(p, 3, 0, 1.0f, vec3_make(0, 0, 5), ps, ls, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.z, 1.0f, TOL);
    orca_plane3_t one = plane_n(vec3_make(0, 0, 1), 0.6f);
    cr_assert_eq(orca3_solve(&one, 1, 0, 1.0f, vec3_make(3, 0, 0), ps, ls, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, 0.8f, TOL);
    cr_assert_float_eq(out.z, 0.6f, TOL);
}

/* As lp_brute_force_2d in the ball, on a 61^3 grid. */
Test(orca, lp_brute_force_3d)
{
    uint64_t s = 0x3d1b;
    enum { G = 61 };
    const float h = 2.0f / (G - 1);
    int compared = 0, pref_kept = 0;
    for (int k = 0; k < 80; ++k) {
        int n = 1 + (int)(rng_splitmix64(&s) % 6);
        orca_plane3_t planes[6], ps[6];
        orca_line2_t ls[6];
        for (int i = 0; i < n; ++i) {
            float c = uniform(&s, -1.0f, 0.5f);
            vec3 nrm = rand_unit3(&s);
            planes[i] = plane_n(nrm, c);
            vec3 shift = vec3_cross(planes[i].normal, rand_unit3(&s));
            planes[i].point = vec3_add(planes[i].point, shift);
        }
        vec3 pref = uniform3(&s, -1.5f, 1.5f);
        vec3 out;
        orca_status_t st = orca3_solve(planes, n, 0, 1.0f, pref, ps, ls, &out);
        cr_assert(finite3(out));
        cr_assert_leq(vec3_length(out), 1.0f + TOL);
        float best = INFINITY;
        for (int a = 0; a < G; ++a)
            for (int b = 0; b < G; ++b)
                for (int c = 0; c < G; ++c) {
                    vec3 x = {-1.0f + h * a, -1.0f + h * b, -1.0f + h * c};
                    if (vec3_length_sq(x) > 1.0f) continue;
                    int ok = 1;
                    for (int i = 0; i < n && ok; ++i) ok = side3(planes[i], x) >= 0.0f;
                    if (ok) best = fminf(best, vec3_distance(x, pref));
                }
        if (best < INFINITY) {
            cr_assert_eq(st, ORCA_FEASIBLE, "problem %d", k);
            ++compared;
        }
        int pref_ok = vec3_length_sq(pref) <= 1.0f;
        for (int i = 0; i < n; ++i) pref_ok = pref_ok && side3(planes[i], pref) >= 0.0f;
        if (pref_ok) {
            cr_assert_eq(st, ORCA_FEASIBLE);
            cr_assert_eq(memcmp(&out, &pref, sizeof out), 0, "problem %d: pref feasible, moved", k);
            ++pref_kept;
        }
        if (st == ORCA_FEASIBLE) {
            for (int i = 0; i < n; ++i)
                cr_assert_geq(side3(planes[i], out), -TOL, "problem %d plane %d", k, i);
            cr_assert_leq(vec3_distance(out, pref), best + TOL, "problem %d: %g > grid %g", k,
                          (double)vec3_distance(out, pref), (double)best);
        }
    }
    cr_assert_gt(compared, 30);
    cr_assert_gt(pref_kept, 3, "%d", pref_kept);
}

Test(orca, lp_fallback_3d)
{
    /* facing planes x >= 0.5, x <= -0.5 and a static z >= 0.3 */
    orca_plane3_t p[3] = {plane_n(vec3_make(0, 0, 1), 0.3f), plane_n(vec3_make(1, 0, 0), 0.5f),
                          plane_n(vec3_make(-1, 0, 0), 0.5f)};
    orca_plane3_t ps[3];
    orca_line2_t ls[3];
    vec3 out;
    cr_assert_eq(orca3_solve(p, 3, 1, 2.0f, vec3_make(1, 1, -1), ps, ls, &out), ORCA_RELAXED);
    cr_assert_geq(side3(p[0], out), -TOL);
    cr_assert_float_eq(out.x, 0.0f, TOL);
    cr_assert_leq(vec3_length(out), 2.0f + TOL);
    /* beyond max speed */
    orca_plane3_t far = plane_n(vec3_make(0, 1, 0), 3.0f);
    cr_assert_eq(orca3_solve(&far, 1, 0, 1.0f, vec3_zero(), ps, ls, &out), ORCA_RELAXED);
    cr_assert_float_eq(out.y, 1.0f, TOL);
    /* static planes that cannot hold together */
    orca_plane3_t w[2] = {plane_n(vec3_make(0, 0, 1), 0.4f), plane_n(vec3_make(0, 0, -1), 0.4f)};
    cr_assert_eq(orca3_solve(w, 2, 2, 1.0f, vec3_make(0.5f, 0, 0), ps, ls, &out), ORCA_RELAXED_ALL);
    cr_assert_float_eq(out.z, 0.0f, TOL);
}

Test(orca, lp_fallback_brute_force_3d)
{
    uint64_t s = 0xfa113d;
    enum { G = 61 };
    const float h = 2.0f / (G - 1);
    int compared = 0;
    for (int k = 0; k < 300 && compared < 25; ++k) {
        int n_static = (int)(rng_splitmix64(&s) % 3);
        int n = n_static + 2 + (int)(rng_splitmix64(&s) % 5);
        orca_plane3_t planes[8], ps[8];
        orca_line2_t ls[8];
        for (int i = 0; i < n; ++i) {
            float c = i < n_static ? uniform(&s, -0.8f, 0.0f) : uniform(&s, 0.1f, 1.2f);
            planes[i] = plane_n(rand_unit3(&s), c);
        }
        vec3 out;
        orca_status_t st = orca3_solve(planes, n, n_static, 1.0f, vec3_zero(), ps, ls, &out);
        cr_assert(finite3(out));
        cr_assert_leq(vec3_length(out), 1.0f + TOL);
        if (st == ORCA_FEASIBLE) continue;
        cr_assert_eq(st, ORCA_RELAXED, "problem %d", k);
        float got = 0.0f;
        for (int i = 0; i < n_static; ++i)
            cr_assert_geq(side3(planes[i], out), -TOL, "problem %d static %d", k, i);
        for (int i = n_static; i < n; ++i) got = fmaxf(got, -side3(planes[i], out));
        float best = INFINITY;
        for (int a = 0; a < G; ++a)
            for (int b = 0; b < G; ++b)
                for (int c = 0; c < G; ++c) {
                    vec3 x = {-1.0f + h * a, -1.0f + h * b, -1.0f + h * c};
                    if (vec3_length_sq(x) > 1.0f) continue;
                    int ok = 1;
                    for (int i = 0; i < n_static && ok; ++i) ok = side3(planes[i], x) >= 0.0f;
                    if (!ok) continue;
                    float worst = 0.0f;
                    for (int i = n_static; i < n; ++i) worst = fmaxf(worst, -side3(planes[i], x));
                    best = fminf(best, worst);
                }
        cr_assert(best < INFINITY);
        cr_assert_leq(got, best + TOL, "problem %d: worst %g > grid %g", k, (double)got, (double)best);
        cr_assert_geq(got, best - 2.0f * h, "problem %d: worst %g << grid %g", k, (double)got, (double)best);
        ++compared;
    }
    cr_assert_geq(compared, 25);
}

Test(orca, lp_degenerate_3d)
{
    orca_plane3_t ps[3];
    orca_line2_t ls[3];
    vec3 out;
    cr_assert_eq(orca3_solve(NULL, 0, 0, 2.0f, vec3_make(0, 3, 4), NULL, NULL, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.y, 1.2f, TOL);
    cr_assert_float_eq(out.z, 1.6f, TOL);
    cr_assert_eq(orca3_solve(NULL, 0, 0, 2.0f, vec3_make(INFINITY, 0, 0), NULL, NULL, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, 0.0f, 0.0f);
    orca_plane3_t p[3] = {
        plane_n(vec3_make(1, 0, 0), -0.5f), plane_n(vec3_make(0, 1, 0), 0.5f), {{1, 1, 1}, {0, 0, 0}}};
    float speeds[4] = {0.0f, -1.0f, NAN, INFINITY};
    for (int k = 0; k < 4; ++k) {
        cr_assert_eq(orca3_solve(p, 1, 0, speeds[k], vec3_make(1, 1, 1), ps, ls, &out), ORCA_FEASIBLE);
        cr_assert_float_eq(vec3_length(out), 0.0f, 0.0f);
        cr_assert_eq(orca3_solve(p, 2, 0, speeds[k], vec3_make(1, 1, 1), ps, ls, &out), ORCA_RELAXED);
        cr_assert(finite3(out));
        cr_assert_float_eq(vec3_length(out), 0.0f, TOL);
    }
    /* a zero normal constrains nothing */
    cr_assert_eq(orca3_solve(p + 2, 1, 0, 1.0f, vec3_make(-0.5f, 0, 0), ps, ls, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.x, -0.5f, 0.0f);
    orca_plane3_t q[3] = {p[2], plane_n(vec3_make(1, 0, 0), 0.5f), plane_n(vec3_make(-1, 0, 0), 0.5f)};
    cr_assert_eq(orca3_solve(q, 3, 0, 1.0f, vec3_zero(), ps, ls, &out), ORCA_RELAXED);
    cr_assert(finite3(out));
    cr_assert_float_eq(out.x, 0.0f, TOL);
    /* the same plane twice, a thin slab */
    orca_plane3_t slab[3] = {plane_n(vec3_make(0, 0, 1), 0.2f), plane_n(vec3_make(0, 0, 1), 0.2f),
                             plane_n(vec3_make(0, 0, -1), -0.2f)};
    cr_assert_eq(orca3_solve(slab, 3, 0, 1.0f, vec3_make(0.3f, 0, 0), ps, ls, &out), ORCA_FEASIBLE);
    cr_assert_float_eq(out.z, 0.2f, TOL);
    cr_assert_float_eq(out.x, 0.3f, TOL);
    cr_assert_eq(orca3_solve(p, 2, 0, 1.0f, vec3_make(2, 0, 0), NULL, ls, &out), ORCA_NO_ARRAY);
    cr_assert_float_eq(out.x, 1.0f, TOL);
    cr_assert_eq(orca3_solve(p, 2, 0, 1.0f, vec3_zero(), ps, NULL, &out), ORCA_NO_ARRAY);
}

/* ======================================================================== */
/* 3D simulations                                                             */
/* ======================================================================== */

typedef struct sphere3 {
    vec3 c;
    float r;
} sphere3;

typedef struct sim3_result {
    float min_ratio, min_obst_ratio, max_goal_dist;
    uint32_t hash;
} sim3_result_t;

/* As sim2; the bias turns pref about +z. */
static sim3_result_t sim3(int n, vec3* pos, const vec3* goal, const sphere3* obst, int n_obst, float r,
                          float vmax, float tau, float dt, int steps, float bias)
{
    vec3 vel[MAX_AGENTS] = {{0}}, nv[MAX_AGENTS];
    sim3_result_t res = {INFINITY, INFINITY, 0.0f, 2166136261u};
    for (int step = 0; step < steps; ++step) {
        for (int i = 0; i < n; ++i) {
            orca_plane3_t planes[MAX_LINES], ps[MAX_LINES];
            orca_line2_t ls[MAX_LINES];
            int m = 0;
            for (int o = 0; o < n_obst; ++o)
                m += orca3_plane_sphere(vec3_sub(obst[o].c, pos[i]), obst[o].r + r, vel[i], 1.0f / tau,
                                        1.0f / dt, &planes[m]);
            int n_static = m;
            for (int j = 0; j < n; ++j) {
                if (j == i) continue;
                m += orca3_plane_agent(vec3_sub(pos[j], pos[i]), vec3_sub(vel[i], vel[j]), 2.0f * r,
                                       1.0f / tau, 1.0f / dt, 0.5f, vel[i], &planes[m]);
            }
            vec3 pref = vec3_clamp_length(vec3_sub(goal[i], pos[i]), vmax);
            vec2 turned = vec2_rotate(vec2_make(pref.x, pref.y), bias);
            pref = vec3_make(turned.x, turned.y, pref.z);
            orca3_solve(planes, m, n_static, vmax, pref, ps, ls, &nv[i]);
            cr_assert(finite3(nv[i]));
            cr_assert_leq(vec3_length(nv[i]), vmax * (1.0f + TOL));
        }
        for (int i = 0; i < n; ++i) {
            vel[i] = nv[i];
            pos[i] = vec3_add(pos[i], vec3_scale(vel[i], dt));
        }
        for (int i = 0; i < n; ++i) {
            for (int j = i + 1; j < n; ++j)
                res.min_ratio = fminf(res.min_ratio, vec3_distance(pos[i], pos[j]) / (2.0f * r));
            for (int o = 0; o < n_obst; ++o)
                res.min_obst_ratio =
                    fminf(res.min_obst_ratio, vec3_distance(pos[i], obst[o].c) / (obst[o].r + r));
        }
    }
    for (int i = 0; i < n; ++i) res.max_goal_dist = fmaxf(res.max_goal_dist, vec3_distance(pos[i], goal[i]));
    res.hash = fnv(res.hash, pos, sizeof(vec3) * (size_t)n);
    res.hash = fnv(res.hash, vel, sizeof(vec3) * (size_t)n);
    return res;
}

static sim3_result_t cube3(int steps)
{
    vec3 pos[8], goal[8];
    for (int i = 0; i < 8; ++i) {
        pos[i] = vec3_make(i & 1 ? 3.0f : -3.0f, i & 2 ? 3.0f : -3.0f, i & 4 ? 3.0f : -3.0f);
        goal[i] = vec3_neg(pos[i]);
    }
    return sim3(8, pos, goal, NULL, 0, 0.5f, 1.0f, 2.0f, 0.1f, steps, BIAS);
}

Test(orca, sim_two_agents_swap_3d)
{
    vec3 pos[2] = {{-4, 0, 0}, {4, 0, 0}}, goal[2] = {{4, 0, 0}, {-4, 0, 0}};
    sim3_result_t r = sim3(2, pos, goal, NULL, 0, 0.5f, 1.0f, 2.0f, 0.1f, 300, BIAS);
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g", (double)r.min_ratio);
    cr_assert_lt(r.max_goal_dist, 0.05f, "goal miss %g", (double)r.max_goal_dist);
    /* exactly head-on on the x axis, no bias: they close in and jam */
    vec3 p2[2] = {{-4, 0, 0}, {4, 0, 0}};
    r = sim3(2, p2, goal, NULL, 0, 0.5f, 1.0f, 2.0f, 0.1f, 300, 0.0f);
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g", (double)r.min_ratio);
    cr_assert_gt(r.max_goal_dist, 3.0f);
    cr_assert_float_eq(p2[0].y, 0.0f, 0.0f);
}

/* Eight agents on the corners of a cube swap with the opposite corner, all
 * through the centre. */
Test(orca, sim_cube_corners_3d)
{
    sim3_result_t r = cube3(600);
    cr_assert_geq(r.min_ratio, 0.99f, "closest %g", (double)r.min_ratio);
    cr_assert_lt(r.max_goal_dist, 0.05f, "goal miss %g", (double)r.max_goal_dist);
    cr_assert_eq(cube3(600).hash, r.hash);
}

/* Agents driven at a static sphere (straight at it, and slightly off) pass
 * around it, never inside the sum of radii less 1%. */
Test(orca, sim_sphere_obstacle_3d)
{
    sphere3 ob = {{0, 0, 0}, 1.0f};
    vec3 pos[3] = {{-5, 0, 0}, {0.2f, -5, 0.1f}, {0, 0.3f, 5}};
    vec3 goal[3] = {{5, 0, 0}, {0, 5, 0}, {0, 0, -5}};
    for (int i = 0; i < 3; ++i) {
        sim3_result_t r = sim3(1, &pos[i], &goal[i], &ob, 1, 0.5f, 1.0f, 2.0f, 0.1f, 400, BIAS);
        cr_assert_geq(r.min_obst_ratio, 0.99f, "agent %d: closest %g", i, (double)r.min_obst_ratio);
        cr_assert_lt(r.max_goal_dist, 0.05f, "agent %d: goal miss %g", i, (double)r.max_goal_dist);
    }
}

/* orca2_lines_agents: the lines orca2_line_agent writes, in the same order
 * and bit for bit, a neighbor a SIMD lane: apart pairs on the arc and on
 * both legs, overlapping pairs, head-on and resting pairs (no direction),
 * zero and out-of-range shares, huge and NaN inputs, and counts that leave a
 * partial lane. */
Test(orca, lines_of_many_neighbors_match_one_at_a_time)
{
    uint64_t s = 0x5eed1e55u;
    enum { N = 37, P = N + 16 }; /* the arrays are read a whole lane at a time */
    for (int round = 0; round < 2000; ++round) {
        float px[P], py[P], vx[P], vy[P], rad[P], share[P];
        int count = 1 + (int)(rng_splitmix64(&s) % N);
        for (int m = count; m < P; ++m) /* padding: anything, NaN included */
            px[m] = py[m] = vx[m] = vy[m] = rad[m] = share[m] = m % 2 ? NAN : 1.0f;
        for (int m = 0; m < count; ++m) {
            px[m] = uniform(&s, -20.0f, 20.0f);
            py[m] = uniform(&s, -20.0f, 20.0f);
            vx[m] = uniform(&s, -3.0f, 3.0f);
            vy[m] = uniform(&s, -3.0f, 3.0f);
            rad[m] = uniform(&s, 0.0f, 4.0f);
            share[m] = uniform(&s, 0.0f, 1.0f) < 0.5f ? 0.5f : uniform(&s, -0.2f, 1.3f);
            switch (rng_splitmix64(&s) % 16) {
            case 0: px[m] = py[m] = 0.0f; break;                       /* same spot */
            case 1: vx[m] = px[m] * 0.1f, vy[m] = py[m] * 0.1f; break; /* w = 0 */
            case 2: px[m] *= 0.01f, py[m] *= 0.01f; break;             /* overlap */
            case 3: px[m] = 1e30f; break;                              /* huge */
            case 4: vy[m] = NAN; break;
            case 5: rad[m] = -1.0f; break;
            case 6: rad[m] = INFINITY; break;
            case 7: py[m] = 0.0f, vy[m] = 0.0f, vx[m] = 2.0f; break; /* on the axis */
            case 8: px[m] = 1e-25f, py[m] = 0.0f; break;             /* tiny */
            default: break;
            }
        }
        vec2 vel = uniform2(&s, -2.0f, 2.0f);
        float inv_tau = 1.0f / uniform(&s, 0.5f, 10.0f), inv_dt = 4.0f;
        orca_line2_t ref[N], got[N];
        int n_ref = 0;
        for (int m = 0; m < count; ++m)
            n_ref += orca2_line_agent((vec2){px[m], py[m]}, (vec2){vx[m], vy[m]}, rad[m], inv_tau, inv_dt,
                                      share[m], vel, &ref[n_ref]);
        int n_got = orca2_lines_agents(px, py, vx, vy, rad, share, count, inv_tau, inv_dt, vel, got);
        cr_assert_eq(n_got, n_ref, "round %d: %d lines, one at a time %d", round, n_got, n_ref);
        cr_assert_eq(memcmp(got, ref, (size_t)n_ref * sizeof *ref), 0, "round %d: the lines differ", round);
    }
    /* a common value that is not finite: no line, as one at a time */
    float one[16], two[16], r[16], sh[16];
    for (int m = 0; m < 16; ++m) one[m] = 1.0f, two[m] = 2.0f, r[m] = sh[m] = 0.5f;
    orca_line2_t l;
    cr_expect_eq(orca2_lines_agents(two, one, one, one, r, sh, 1, NAN, 4.0f, (vec2){0, 0}, &l), 0);
    cr_expect_eq(orca2_lines_agents(two, one, one, one, r, sh, 1, 0.5f, 4.0f, (vec2){INFINITY, 0}, &l), 0);
}

Test(orca, planes_of_many_neighbors_match_one_at_a_time)
{
    uint64_t s = 0x3d5eed55u;
    enum { N = 37, P = N + 16 }; /* the arrays are read a whole lane at a time */
    int cone = 0, capped = 0;
    for (int round = 0; round < 2000; ++round) {
        float px[P], py[P], pz[P], vx[P], vy[P], vz[P], rad[P], share[P];
        int count = 1 + (int)(rng_splitmix64(&s) % N);
        for (int m = count; m < P; ++m) /* padding: anything, NaN included */
            px[m] = py[m] = pz[m] = vx[m] = vy[m] = vz[m] = rad[m] = share[m] = m % 2 ? NAN : 1.0f;
        for (int m = 0; m < count; ++m) {
            px[m] = uniform(&s, -20.0f, 20.0f);
            py[m] = uniform(&s, -20.0f, 20.0f);
            pz[m] = uniform(&s, -20.0f, 20.0f);
            vx[m] = uniform(&s, -3.0f, 3.0f);
            vy[m] = uniform(&s, -3.0f, 3.0f);
            vz[m] = uniform(&s, -3.0f, 3.0f);
            rad[m] = uniform(&s, 0.0f, 4.0f);
            share[m] = uniform(&s, 0.0f, 1.0f) < 0.5f ? 0.5f : uniform(&s, -0.2f, 1.3f);
            switch (rng_splitmix64(&s) % 18) {
            case 0: px[m] = py[m] = pz[m] = 0.0f; break;                                     /* same spot */
            case 1: vx[m] = px[m] * 0.1f, vy[m] = py[m] * 0.1f, vz[m] = pz[m] * 0.1f; break; /* w = 0 */
            case 2: px[m] *= 0.01f, py[m] *= 0.01f, pz[m] *= 0.01f; break;                   /* overlap */
            case 3: pz[m] = 1e30f; break;                                                    /* huge */
            case 4: vz[m] = NAN; break;
            case 5: rad[m] = -1.0f; break;
            case 6: rad[m] = INFINITY; break;
            case 7: py[m] = pz[m] = 0.0f, vy[m] = vz[m] = 0.0f, vx[m] = 2.0f; break; /* v on the axis */
            case 8: px[m] = 1e-25f, py[m] = pz[m] = 0.0f; break;                     /* tiny */
            case 9: vx[m] = -px[m], vy[m] = -py[m], vz[m] = -pz[m]; break;           /* head-on */
            default: break;
            }
        }
        vec3 vel = uniform3(&s, -2.0f, 2.0f);
        float inv_tau = 1.0f / uniform(&s, 0.5f, 10.0f), inv_dt = 4.0f;
        orca_plane3_t ref[N], got[N];
        int n_ref = 0;
        for (int m = 0; m < count; ++m) {
            vec3 p = {px[m], py[m], pz[m]}, v = {vx[m], vy[m], vz[m]};
            vec3 w = vec3_sub(v, vec3_scale(p, inv_tau));
            float wp = vec3_dot(w, p), r = rad[m] > 0.0f ? rad[m] : 0.0f;
            capped += wp < 0.0f && wp * wp > r * r * vec3_dot(w, w);
            cone += !(wp < 0.0f && wp * wp > r * r * vec3_dot(w, w));
            n_ref += orca3_plane_agent(p, v, rad[m], inv_tau, inv_dt, share[m], vel, &ref[n_ref]);
        }
        int n_got = orca3_planes_agents(px, py, pz, vx, vy, vz, rad, share, count, inv_tau, inv_dt, vel, got);
        cr_assert_eq(n_got, n_ref, "round %d: %d planes, one at a time %d", round, n_got, n_ref);
        cr_assert_eq(memcmp(got, ref, (size_t)n_ref * sizeof *ref), 0, "round %d: the planes differ", round);
    }
    cr_expect_gt(cone, 1000, "the cone's side was tried");
    cr_expect_gt(capped, 1000, "the cap was tried");
    /* a common value that is not finite: no plane, as one at a time */
    float one[16], two[16], r[16], sh[16];
    for (int m = 0; m < 16; ++m) one[m] = 1.0f, two[m] = 2.0f, r[m] = sh[m] = 0.5f;
    orca_plane3_t pl;
    cr_expect_eq(orca3_planes_agents(two, one, one, one, one, one, r, sh, 1, NAN, 4.0f, (vec3){0, 0, 0}, &pl),
                 0);
    cr_expect_eq(
        orca3_planes_agents(two, one, one, one, one, one, r, sh, 1, 0.5f, 4.0f, (vec3){INFINITY, 0, 0}, &pl),
        0);
}

/* The programs of a lane of agents at once (orca_lanes.h orca2_lp_lanes,
 * orca3_lp_lanes, and orca2_solve_failed / orca3_solve_failed for the
 * lanes that fail) give every lane orca2_solve's and orca3_solve's bits:
 * random lines and planes through a disk around the origin, 0 to 24 of
 * them a lane, many infeasible, targets inside and outside the speed
 * limit. */
static float unit_rand(uint64_t* s) { return (float)(rng_splitmix64(s) >> 40) * (1.0f / 16777216.0f); }

Test(orca, lanes_programs_give_the_scalar_bits)
{
    enum { L = SHOAL_LANES, MAXN = 24, N = MAXN * SHOAL_LANES };
    uint64_t s = 0x1a2e5;
    int failed_2d = 0, failed_3d = 0, lanes = 0;
    for (int round = 0; round < 400; ++round) {
        _Alignas(64) float pl[6][N], tl[4][N];
        _Alignas(64) int32_t cnt[L];
        _Alignas(64) float t[3][L], lim[L];
        orca_line2_t lines[L][MAXN];
        orca_plane3_t planes[L][MAXN];
        int nmax = 0;
        for (int l = 0; l < L; ++l) {
            cnt[l] = (int32_t)(rng_splitmix64(&s) % (MAXN + 1));
            nmax = cnt[l] > nmax ? cnt[l] : nmax;
            lim[l] = round % 7 == 0 ? 0.0f : 0.5f + 2.0f * unit_rand(&s);
            for (int a = 0; a < 3; ++a) t[a][l] = 6.0f * unit_rand(&s) - 3.0f;
            for (int m = 0; m < cnt[l]; ++m) {
                const float ang = 6.2831853f * unit_rand(&s), off = 2.5f * unit_rand(&s) - 0.8f;
                const vec2 d = {cosf(ang), sinf(ang)};
                lines[l][m] = (orca_line2_t){{-d.y * off, d.x * off}, d};
                vec3 nrm = {2.0f * unit_rand(&s) - 1.0f, 2.0f * unit_rand(&s) - 1.0f,
                            2.0f * unit_rand(&s) - 1.0f};
                nrm = vec3_normalize(nrm);
                if (vec3_length(nrm) == 0.0f) nrm = (vec3){0.0f, 0.0f, 1.0f};
                planes[l][m] = (orca_plane3_t){vec3_scale(nrm, -off), nrm};
            }
        }
        for (int m = 0; m < MAXN; ++m)
            for (int l = 0; l < L; ++l) {
                const size_t at = (size_t)m * L + (size_t)l;
                const orca_line2_t ln = m < cnt[l] ? lines[l][m] : (orca_line2_t){{0, 0}, {0, 0}};
                const orca_plane3_t pn = m < cnt[l] ? planes[l][m] : (orca_plane3_t){{0, 0, 0}, {0, 0, 0}};
                tl[0][at] = ln.point.x, tl[1][at] = ln.point.y, tl[2][at] = ln.dir.x, tl[3][at] = ln.dir.y;
                pl[0][at] = pn.point.x, pl[1][at] = pn.point.y, pl[2][at] = pn.point.z;
                pl[3][at] = pn.normal.x, pl[4][at] = pn.normal.y, pl[5][at] = pn.normal.z;
            }
        const lanei n = lanei_load(cnt);
        const lanef radius = lane_load(lim);
        /* 2D */
        {
            lanef bx = lane_load(t[0]), by = lane_load(t[1]);
            uint32_t odd;
            lane_clamp_length2(&bx, &by, radius, &odd);
            cr_assert_eq(odd, 0u);
            lanei at;
            const uint32_t failed = orca2_lp_lanes(tl[0], tl[1], tl[2], tl[3], n, nmax, radius,
                                                   lane_load(t[0]), lane_load(t[1]), &bx, &by, &at);
            _Alignas(64) float ox[L], oy[L];
            _Alignas(64) int32_t fat[L];
            lane_store(ox, bx);
            lane_store(oy, by);
            lanei_store(fat, at);
            for (int l = 0; l < L; ++l) {
                orca_line2_t scratch[MAXN];
                vec2 want, got = {ox[l], oy[l]};
                const orca_status_t st =
                    orca2_solve(lines[l], cnt[l], 0, lim[l], (vec2){t[0][l], t[1][l]}, scratch, &want);
                if (failed >> l & 1u) {
                    failed_2d++;
                    cr_assert_eq(orca2_solve_failed(lines[l], cnt[l], 0, lim[l], fat[l], got, scratch, &got),
                                 st);
                } else {
                    cr_assert_eq(st, ORCA_FEASIBLE, "round %d lane %d", round, l);
                }
                cr_assert(memcmp(&got, &want, sizeof got) == 0,
                          "2D round %d lane %d: (%a, %a) against (%a, %a)", round, l, (double)got.x,
                          (double)got.y, (double)want.x, (double)want.y);
            }
        }
        /* 3D */
        {
            lanef bx = lane_load(t[0]), by = lane_load(t[1]), bz = lane_load(t[2]);
            uint32_t odd, redo;
            lane_clamp_length3(&bx, &by, &bz, radius, &odd);
            cr_assert_eq(odd, 0u);
            lanei at;
            float* const tmp[4] = {tl[0], tl[1], tl[2], tl[3]};
            const float* const pp[6] = {pl[0], pl[1], pl[2], pl[3], pl[4], pl[5]};
            const uint32_t failed = orca3_lp_lanes(pp, n, nmax, radius, lane_load(t[0]), lane_load(t[1]),
                                                   lane_load(t[2]), tmp, &bx, &by, &bz, &at, &redo);
            _Alignas(64) float o[3][L];
            _Alignas(64) int32_t fat[L];
            lane_store(o[0], bx);
            lane_store(o[1], by);
            lane_store(o[2], bz);
            lanei_store(fat, at);
            for (int l = 0; l < L; ++l) {
                orca_plane3_t scratch[MAXN];
                orca_line2_t line_scratch[MAXN];
                vec3 want, got = {o[0][l], o[1][l], o[2][l]};
                const vec3 pref = {t[0][l], t[1][l], t[2][l]};
                const orca_status_t st =
                    orca3_solve(planes[l], cnt[l], 0, lim[l], pref, scratch, line_scratch, &want);
                cr_assert_eq(redo >> l & 1u, 0u, "no case here needs the scalar functions");
                if (failed >> l & 1u) {
                    failed_3d++;
                    cr_assert_eq(orca3_solve_failed(planes[l], cnt[l], 0, lim[l], fat[l], got, scratch,
                                                    line_scratch, &got),
                                 st);
                } else {
                    cr_assert_eq(st, ORCA_FEASIBLE, "round %d lane %d", round, l);
                }
                cr_assert(memcmp(&got, &want, sizeof got) == 0, "3D round %d lane %d", round, l);
            }
        }
        lanes += L;
    }
    /* both kinds of lanes were met, often */
    cr_expect_gt(failed_2d, lanes / 20, "%d of %d 2D programs failed", failed_2d, lanes);
    cr_expect_gt(failed_3d, lanes / 20, "%d of %d 3D programs failed", failed_3d, lanes);
    cr_expect_lt(failed_2d, lanes - lanes / 20, "%d of %d 2D programs failed", failed_2d, lanes);
    cr_expect_lt(failed_3d, lanes - lanes / 20, "%d of %d 3D programs failed", failed_3d, lanes);
}
