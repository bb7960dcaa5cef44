/* Optimal reciprocal collision avoidance (ORCA): the math of van den Berg,
 * Guy, Lin and Manocha, "Reciprocal n-body collision avoidance" (ISRR 2009,
 * STAR 70, 2011), for one agent at a time. Pure functions: no state, no
 * globals, no allocation (callers hand in every array), no printing; safe to
 * call from any thread. The same inputs give the same bits (the library
 * compiles with -ffp-contract=off; nothing here depends on an evaluation
 * order C leaves open).
 *
 * Units are SI (m, m/s, s). 2D is the x-y plane (docs/design.md, "Units and frames"); 3D is
 * right-handed.
 *
 * ## The constraints
 *
 * For an agent A and a neighbour B, with p = p_B - p_A (relative position),
 * v = v_A - v_B (relative velocity) and R = r_A + r_B (combined radius), the
 * truncated velocity obstacle is the set of relative velocities that bring
 * the two within R before the time horizon tau:
 *   VO = { v | exists t in (0, tau] : |t v - p| < R },
 * a cone from the origin around p, cut off by the disk (ball) of centre
 * p / tau and radius R / tau. u is the vector from v to the nearest point of
 * VO's boundary and n the boundary's outward normal there. A's permitted
 * set is the half-plane (half-space)
 *   ORCA = { x | (x - (v_A + share u)) . n >= 0 },
 * share being A's part of the avoidance: 0.5 when B runs ORCA too, 1 when B
 * will not avoid (a static or careless neighbour). v_A is A's current
 * velocity, the paper's v_opt.
 *
 * Overlapping agents (|p| <= R). Every relative velocity collides at t = 0,
 * so, as the paper says, the cut-off disk of the time step is used instead
 * (tau replaced by dt): the constraint pushes v out of the disk of centre
 * p / dt and radius R / dt, i.e. asks for the overlap to be gone after one
 * step (share of it from this agent).
 *
 * ## The linear programs
 *
 * orca2_solve / orca3_solve return the velocity closest to the preferred one
 * within the disk (ball) of radius max_speed that satisfies every
 * constraint, by the incremental algorithm (Seidel's, without shuffling: the
 * constraints are taken in the order given, so the result is one fixed
 * function of the input). When no such velocity exists (dense crowds), the
 * paper's fallback for densely packed agents runs instead: the velocity of the disk that
 * minimises the largest violation (the distance by which it lies on the
 * forbidden side) over the agent constraints, lines[n_static .. n), while the
 * first n_static (walls, static obstacles) stay hard. That is the paper's
 * linear program over (v, d) one dimension up, solved as it does: each time
 * constraint i is violated by more than the current d, by the LP of one
 * dimension less over the hard constraints and, for every earlier agent
 * constraint j, the set where j is violated no more than i (its boundary is
 * the bisector of the two), maximising the progress along i's normal.
 * Should the hard constraints themselves have no common point in the disk
 * (an agent pushed out of two walls at once, or out of one faster than
 * max_speed), the same fallback runs with no hard constraint at all.
 *
 * Symmetry. ORCA is deterministic and symmetric: agents placed and driven
 * with perfect symmetry (two exactly head-on, a ring of agents all bound for
 * the centre) get constraints that only slow them down, and they close in
 * ever more slowly without passing (a jam; still no collision). Callers
 * break such symmetry in the preferred velocities, e.g. by turning every one
 * by the same small angle or by a small deterministic perturbation per
 * agent; tests/test_orca.c shows both the jam and its
 * resolution.
 */
#ifndef SHOAL_ORCA_H
#define SHOAL_ORCA_H

#include "simd/vec.h"

/* Two unit vectors whose cross product (2D: sine of the angle between them)
 * or difference is at most this in size are taken as parallel. */
#define ORCA_PARALLEL 1e-6f
/* Parallel constraints: one lies inside the other's permitted side unless it
 * is out by more than this times (1 + radius of the disk), so that a
 * constraint given twice, or two that agree to rounding, stay feasible. */
#define ORCA_SLACK 1e-6f

/* A 2D half-plane: the points left of the directed line through `point`
 * along `dir`, i.e. cross(dir, x - point) >= 0, the line included. `dir` is
 * a unit vector; a line whose dir is (0, 0) constrains nothing (the solvers
 * accept it and skip it). */
typedef struct orca_line2 {
    vec2 point;
    vec2 dir;
} orca_line2_t;

/* A 3D half-space: (x - point) . normal >= 0. `normal` is a unit vector; a
 * zero normal constrains nothing. */
typedef struct orca_plane3 {
    vec3 point;
    vec3 normal;
} orca_plane3_t;

/* What the solvers did. */
typedef enum orca_status {
    ORCA_FEASIBLE = 0,    /* every constraint holds; the velocity is the
                               closest one to the preferred velocity */
    ORCA_RELAXED = 1,     /* infeasible: the largest violation of the agent
                               constraints is minimised, the first n_static
                               hold */
    ORCA_RELAXED_ALL = 2, /* even the first n_static have no common point in
                               the disk (ball): the largest violation over all
                               constraints is minimised */
    ORCA_NO_ARRAY = -1    /* n > 0 and the constraints or a scratch array
                               are NULL: no constraint was applied, the
                               result is pref clamped to the disk (ball) */
} orca_status_t;

/* ------------------------------------------------------------------------ */
/* 2D                                                                         */
/* ------------------------------------------------------------------------ */

/* The ORCA half-plane of an agent against one neighbour.
 *   rel_pos  neighbour's position minus the agent's (m)
 *   rel_vel  agent's velocity minus the neighbour's (m/s), current velocities
 *   radius   sum of the two radii (m, >= 0)
 *   inv_tau  1 / time horizon (1/s, >= 0; 0 is an infinite horizon)
 *   inv_dt   1 / time step (1/s, > 0), used only when the two overlap
 *   share    the agent's part of the avoidance, clamped to [0, 1]: 0.5 when
 *            both avoid, 1 when the neighbour does not
 *   vel      the agent's own current velocity (the paper's v_opt)
 * Returns 1 and writes *out; returns 0 and leaves *out alone when there is no
 * constraint: share <= 0 (or NaN) ignores the neighbour, and a non-finite
 * input (or a result that would overflow) gives no constraint either.
 *
 * Degenerate inputs. Head-on (relative velocity along rel_pos, a tie between
 * the two legs of the cone) takes the right leg, seen from the agent looking
 * at the neighbour, so two agents meeting head-on both pass on their right
 * and their constraints mirror each other. Overlapping with the relative
 * velocity exactly p / dt (the centre of the disk, no normal): the normal is
 * -rel_pos / |rel_pos|, away from the neighbour. Coincident agents with equal
 * velocities (rel_pos = rel_vel = 0) have no direction at all: the normal is
 * +x for both, so the constraints push both the same way; a crowd system that
 * can meet this must break the tie itself (e.g. a tiny offset by index). */
int orca2_line_agent(vec2 rel_pos, vec2 rel_vel, float radius, float inv_tau, float inv_dt, float share,
                     vec2 vel, orca_line2_t* out);

/* The half-plane of an agent against a static wall, the segment from p0 to
 * p1 (positions relative to the agent's centre, m), seen as the capsule of
 * the agent's radius around the segment. As in the paper the
 * constraint is taken relative to v_opt = 0 and the obstacle takes no share:
 * the truncated velocity obstacle of a convex obstacle is convex and its
 * point nearest the origin is q_c = (q - radius q^) inv_tau, q being the
 * segment's point nearest the agent, q^ = q / |q|, so the half-plane
 *   v . q^ <= (|q| - radius) inv_tau
 * (inv_tau = 1 / tau_obst, the obstacles' time horizon) holds the velocities
 * that would take tau_obst or longer to close the gap; it always holds
 * v = 0, and sliding along the wall is free. With inv_tau = 0 the agent may
 * not approach at all.
 *
 * Overlap (|q| <= radius; the choice of this module): the half-plane
 *   v . (-q^) >= (radius - |q|) inv_dt
 * forbids moving further in and asks for the penetration back within one
 * step. It does not hold v = 0: with two such walls, or a push faster than
 * max_speed, among the solvers' first n_static constraints, their
 * ORCA_RELAXED_ALL case takes over. A centre exactly
 * on the segment (q = 0) has no q^: the segment's normal is used, the side
 * the agent's velocity comes from (-vel's side; the left of p0 -> p1 when vel
 * runs along the wall or is zero); a segment of zero length with the agent on
 * it pushes against vel, or along +x when vel is zero.
 *   vel      the agent's current velocity (m/s), used only as just said
 * Returns 1 and writes *out, or 0 (no constraint, *out untouched) for a
 * non-finite input or a result that would overflow. */
/* orca2_line_agent for count neighbors at once, a SIMD lane each: neighbor
 * m has rel_pos (px[m], py[m]), rel_vel (vx[m], vy[m]), radius[m] and
 * share[m]; inv_tau, inv_dt and vel are common. Writes the lines that
 * orca2_line_agent would write, in the same order and bit for bit (every
 * lane does the scalar arithmetic; the rare cases, overlap or a direction
 * that will not normalize, take the scalar function), and returns how many.
 * Each array is read a whole SIMD lane at a time: it must hold initialized
 * values (any) up to count rounded up to SHOAL_MAX_LANES. out must have room
 * for count lines. */
int orca2_lines_agents(const float* px, const float* py, const float* vx, const float* vy,
                       const float* radius, const float* share, int count, float inv_tau, float inv_dt,
                       vec2 vel, orca_line2_t* out);

int orca2_line_wall(vec2 p0, vec2 p1, float radius, vec2 vel, float inv_tau, float inv_dt, orca_line2_t* out);

/* The velocity within |v| <= max_speed closest to `pref` that satisfies every
 * line (see the top of this file), or the fallback's velocity; the status
 * says which.
 *   lines     n half-planes (n >= 0), the first n_static of them hard in the
 *             fallback (0 <= n_static <= n; clamped)
 *   scratch   room for n lines (the fallback's constraints); NULL only
 *             when n is 0, else ORCA_NO_ARRAY
 * max_speed that is NaN, infinite or <= 0 is read as 0 (the disk is the
 * origin: the result is 0); a non-finite pref is read as zero; n = 0 returns
 * pref clamped to the disk. The result is always finite and within the disk
 * (to rounding). */
orca_status_t orca2_solve(const orca_line2_t* lines, int n, int n_static, float max_speed, vec2 pref,
                          orca_line2_t* scratch, vec2* out);

/* orca2_solve's fallback alone, for a caller that ran the program itself
 * (orca_lanes.h orca2_lp_lanes) and saw it fail at line `fail` (< n) with
 * x the best over the lines before it: what orca2_solve gives then. */
orca_status_t orca2_solve_failed(const orca_line2_t* lines, int n, int n_static, float max_speed, int fail,
                                 vec2 x, orca_line2_t* scratch, vec2* out);

/* ------------------------------------------------------------------------ */
/* 3D                                                                         */
/* ------------------------------------------------------------------------ */

/* The ORCA half-space of an agent against one neighbour, spheres of combined
 * radius `radius`; parameters and return as orca2_line_agent. The velocity
 * obstacle is a cone with a spherical cap. Head-on (relative velocity on the
 * cone's axis), every generator of the cone is nearest: the one on the side
 * perp(rel_pos) is taken, perp being a fixed odd function (perp(-a) =
 * -perp(a): the cross product with the coordinate axis along a's smallest
 * component, ties to the lower axis), so two agents head-on dodge in opposite
 * directions. The other degenerate cases are as in 2D. */
int orca3_plane_agent(vec3 rel_pos, vec3 rel_vel, float radius, float inv_tau, float inv_dt, float share,
                      vec3 vel, orca_plane3_t* out);

/* orca3_plane_agent for count neighbors at once, a SIMD lane each, as
 * orca2_lines_agents is for orca2_line_agent: the same planes in the same
 * order, bit for bit (lanes in the scalar code's rarer cases are computed
 * by it). Every array must be readable up to count rounded up to
 * SHOAL_MAX_LANES; out must have room for count planes. */
int orca3_planes_agents(const float* px, const float* py, const float* pz, const float* vx, const float* vy,
                        const float* vz, const float* radius, const float* share, int count, float inv_tau,
                        float inv_dt, vec3 vel, orca_plane3_t* out);

/* The half-space of an agent against a static sphere: the agent case against
 * a neighbour at rest that takes no share of the avoidance (share 1).
 *   rel_center  the sphere's centre minus the agent's position (m)
 *   radius      the sphere's radius plus the agent's (m) */
int orca3_plane_sphere(vec3 rel_center, float radius, vec3 vel, float inv_tau, float inv_dt,
                       orca_plane3_t* out);

/* As orca2_solve in the ball |v| <= max_speed. Scratch: room for n planes
 * (the fallback's constraints) and n lines (the 2D program on a plane, in
 * that plane's coordinates); NULL only when n is 0, else ORCA_NO_ARRAY. */
orca_status_t orca3_solve(const orca_plane3_t* planes, int n, int n_static, float max_speed, vec3 pref,
                          orca_plane3_t* plane_scratch, orca_line2_t* line_scratch, vec3* out);

/* As orca2_solve_failed, for orca3_solve (orca_lanes.h orca3_lp_lanes). */
orca_status_t orca3_solve_failed(const orca_plane3_t* planes, int n, int n_static, float max_speed, int fail,
                                 vec3 x, orca_plane3_t* plane_scratch, orca_line2_t* line_scratch, vec3* out);

#endif /* SHOAL_ORCA_H */
