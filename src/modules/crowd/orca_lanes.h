/* ORCA's agent lines a SIMD lane of neighbors at a time (orca.h's
 * orca2_lines_agents), for callers that hold the lane's inputs in
 * registers already (crowd.c gathers them from the spatial hash's sorted
 * arrays). Included by orca.c and crowd.c only. */
#ifndef SHOAL_SYSTEMS_ORCA_LANES_H
#define SHOAL_SYSTEMS_ORCA_LANES_H

#include <math.h>

#include "simd/lanes.h"
#include "modules/crowd/orca.h"

/* x is finite: x - x is 0 for finite x and NaN for inf and NaN. */
static inline lanem lane_finite(lanef x) { return lane_cmp_eq(lane_sub(x, x), lane_zero()); }

/* x - x: 0 where x is finite, NaN elsewhere; a sum of them is 0 exactly
 * where every one is finite (one compare for many). */
static inline lanef lane_unfinite(lanef x) { return lane_sub(x, x); }
static inline lanem lane_finite4(lanef a, lanef b, lanef c, lanef d)
{
    return lane_cmp_eq(
        lane_add(lane_add(lane_unfinite(a), lane_unfinite(b)), lane_add(lane_unfinite(c), lane_unfinite(d))),
        lane_zero());
}
static inline lanem lane_finite6(lanef a, lanef b, lanef c, lanef d, lanef e, lanef f)
{
    return lane_cmp_eq(lane_add(lane_add(lane_add(lane_unfinite(a), lane_unfinite(b)),
                                         lane_add(lane_unfinite(c), lane_unfinite(d))),
                                lane_add(lane_unfinite(e), lane_unfinite(f))),
                       lane_zero());
}

/* orca2_line_agent's fast case a lane at a time: lane l's line (point pt,
 * direction d) from neighbor inputs p, v (relative position and velocity),
 * rad, sh and the agent's itau and vel, each lane of its own (a lane of
 * neighbors of one agent, or a lane of agents with a neighbor each).
 * `fast`: the lanes computed here (the others need the scalar function);
 * `good`: those of them that give a line (finite). */
typedef struct orca2_lane_lines {
    lanef pt_x, pt_y, d_x, d_y;
    uint32_t fast, good;
} orca2_lane_lines_t;

static inline orca2_lane_lines_t orca2_lines_core(lanef p_x, lanef p_y, lanef v_x, lanef v_y, lanef rad,
                                                  lanef sh, lanef itau, lanef velx, lanef vely)
{
    const lanef zero = lane_zero(), one = lane_set1(1.0f);
    lanem ok = lane_cmp_eq(lane_add(lane_add(lane_add(lane_unfinite(p_x), lane_unfinite(p_y)),
                                             lane_add(lane_unfinite(v_x), lane_unfinite(v_y))),
                                    lane_unfinite(rad)),
                           zero);
    ok = lane_mask_and(ok, lane_cmp_gt(sh, zero));
    const lanef r = lane_select(lane_cmp_gt(rad, zero), rad, zero);
    const lanef dist_sq = lane_add(lane_mul(p_x, p_x), lane_mul(p_y, p_y)), r_sq = lane_mul(r, r);
    ok = lane_mask_and(ok, lane_cmp_gt(dist_sq, r_sq)); /* overlap: the scalar code */
    const lanef w_x = lane_sub(v_x, lane_mul(p_x, itau)), w_y = lane_sub(v_y, lane_mul(p_y, itau));
    const lanef wp = lane_add(lane_mul(w_x, p_x), lane_mul(w_y, p_y));
    const lanef w_sq = lane_add(lane_mul(w_x, w_x), lane_mul(w_y, w_y));
    const lanef w_len = lane_sqrt(w_sq);
    /* vec2_normalize's slow cases (no direction, or an infinite length) */
    ok = lane_mask_and(ok, lane_mask_and(lane_cmp_gt(w_len, zero), lane_cmp_lt(w_len, lane_set1(INFINITY))));
    const lanem cap =
        lane_mask_and(lane_cmp_lt(wp, zero), lane_cmp_gt(lane_mul(wp, wp), lane_mul(r_sq, w_sq)));
    /* The normal n: on the cut-off arc w / |w|; on a leg, perp(g) on the
     * left, -perp(g) on the right, g the leg's direction over dist_sq. Each
     * lane's numerator and denominator picked before the one division (a
     * negated quotient is the quotient of the negated numerator): the
     * scalar code's values, two divisions a lane instead of six. */
    const lanef leg = lane_sqrt(lane_sub(dist_sq, r_sq));
    const lanem left = lane_cmp_gt(lane_sub(lane_mul(p_x, w_y), lane_mul(p_y, w_x)), zero);
    const lanef pxl = lane_mul(p_x, leg), pyl = lane_mul(p_y, leg), pxr = lane_mul(p_x, r),
                pyr = lane_mul(p_y, r);
    /* left: (-g.y, g.x) = (-(pyl + pxr), pxl - pyr) / dist_sq; right: (g.y, -g.x) = (pyl - pxr, -(pxl + pyr)) / dist_sq */
    const lanef ln_x = lane_select(left, lane_neg(lane_add(pyl, pxr)), lane_sub(pyl, pxr));
    const lanef ln_y = lane_select(left, lane_sub(pxl, pyr), lane_neg(lane_add(pxl, pyr)));
    const lanef den = lane_select(cap, w_len, dist_sq);
    const lanef n_x = lane_div(lane_select(cap, w_x, ln_x), den),
                n_y = lane_div(lane_select(cap, w_y, ln_y), den);
    /* u = n s: on the arc s = r itau - |w|, on a leg s = -(v . n) */
    const lanef s = lane_select(cap, lane_sub(lane_mul(r, itau), w_len),
                                lane_neg(lane_add(lane_mul(v_x, n_x), lane_mul(v_y, n_y))));
    const lanef u_x = lane_mul(n_x, s), u_y = lane_mul(n_y, s);
    const lanef cs = lane_select(lane_cmp_gt(sh, one), one, sh);
    orca2_lane_lines_t o;
    o.pt_x = lane_add(velx, lane_mul(u_x, cs));
    o.pt_y = lane_add(vely, lane_mul(u_y, cs));
    o.d_x = n_y;
    o.d_y = lane_neg(n_x);
    const lanem fin = lane_finite4(o.pt_x, o.pt_y, o.d_x, o.d_y);
    o.fast = lane_mask_bits(ok);
    o.good = lane_mask_bits(lane_mask_and(ok, fin));
    return o;
}

/* orca3_plane_agent's fast case a lane at a time, as orca2_lines_core: lane
 * l's plane (point pt, normal n) from neighbor inputs p, v, rad, sh and the
 * agent's itau and vel, each lane of its own. */
typedef struct orca3_lane_planes {
    lanef pt_x, pt_y, pt_z, n_x, n_y, n_z;
    uint32_t fast, good;
} orca3_lane_planes_t;

static inline orca3_lane_planes_t orca3_planes_core(lanef p_x, lanef p_y, lanef p_z, lanef v_x, lanef v_y,
                                                    lanef v_z, lanef rad, lanef sh, lanef itau, lanef velx,
                                                    lanef vely, lanef velz)
{
    const lanef zero = lane_zero(), one = lane_set1(1.0f), inf = lane_set1(INFINITY);
    lanem ok = lane_cmp_eq(lane_add(lane_add(lane_add(lane_add(lane_unfinite(p_x), lane_unfinite(p_y)),
                                                      lane_add(lane_unfinite(p_z), lane_unfinite(v_x))),
                                             lane_add(lane_unfinite(v_y), lane_unfinite(v_z))),
                                    lane_unfinite(rad)),
                           zero);
    ok = lane_mask_and(ok, lane_cmp_gt(sh, zero));
    const lanef r = lane_select(lane_cmp_gt(rad, zero), rad, zero);
    const lanef dist_sq = lane_add(lane_add(lane_mul(p_x, p_x), lane_mul(p_y, p_y)), lane_mul(p_z, p_z));
    const lanef r_sq = lane_mul(r, r);
    ok = lane_mask_and(ok, lane_cmp_gt(dist_sq, r_sq)); /* overlap: the scalar code */
    const lanef w_x = lane_sub(v_x, lane_mul(p_x, itau)), w_y = lane_sub(v_y, lane_mul(p_y, itau)),
                w_z = lane_sub(v_z, lane_mul(p_z, itau));
    const lanef wp = lane_add(lane_add(lane_mul(w_x, p_x), lane_mul(w_y, p_y)), lane_mul(w_z, p_z));
    const lanef w_sq = lane_add(lane_add(lane_mul(w_x, w_x), lane_mul(w_y, w_y)), lane_mul(w_z, w_z));
    const lanef w_len = lane_sqrt(w_sq);
    /* vec3_normalize's slow cases (no direction, or an infinite length) */
    ok = lane_mask_and(ok, lane_mask_and(lane_cmp_gt(w_len, zero), lane_cmp_lt(w_len, inf)));
    const lanem cap =
        lane_mask_and(lane_cmp_lt(wp, zero), lane_cmp_gt(lane_mul(wp, wp), lane_mul(r_sq, w_sq)));
    /* The spherical cap. */
    const lanef cn_x = lane_div(w_x, w_len), cn_y = lane_div(w_y, w_len), cn_z = lane_div(w_z, w_len);
    const lanef cu_s = lane_sub(lane_mul(r, itau), w_len);
    /* The cone's side: a the axis, b the unit part of v across it. */
    const lanef dist = lane_sqrt(dist_sq), inv_dist = lane_div(one, dist);
    const lanef a_x = lane_mul(p_x, inv_dist), a_y = lane_mul(p_y, inv_dist), a_z = lane_mul(p_z, inv_dist);
    const lanef c = lane_div(lane_sqrt(lane_sub(dist_sq, r_sq)), dist), s = lane_div(r, dist);
    const lanef va = lane_add(lane_add(lane_mul(v_x, a_x), lane_mul(v_y, a_y)), lane_mul(v_z, a_z));
    const lanef t_x = lane_sub(v_x, lane_mul(a_x, va)), t_y = lane_sub(v_y, lane_mul(a_y, va)),
                t_z = lane_sub(v_z, lane_mul(a_z, va));
    const lanef t_len =
        lane_sqrt(lane_add(lane_add(lane_mul(t_x, t_x), lane_mul(t_y, t_y)), lane_mul(t_z, t_z)));
    /* b's slow cases (v along the axis) only matter on the cone */
    ok = lane_mask_and(ok,
                       lane_mask_or(cap, lane_mask_and(lane_cmp_gt(t_len, zero), lane_cmp_lt(t_len, inf))));
    const lanef b_x = lane_div(t_x, t_len), b_y = lane_div(t_y, t_len), b_z = lane_div(t_z, t_len);
    const lanef sn_x = lane_sub(lane_mul(b_x, c), lane_mul(a_x, s)),
                sn_y = lane_sub(lane_mul(b_y, c), lane_mul(a_y, s)),
                sn_z = lane_sub(lane_mul(b_z, c), lane_mul(a_z, s));
    const lanef su_s =
        lane_neg(lane_add(lane_add(lane_mul(v_x, sn_x), lane_mul(v_y, sn_y)), lane_mul(v_z, sn_z)));
    orca3_lane_planes_t o;
    o.n_x = lane_select(cap, cn_x, sn_x);
    o.n_y = lane_select(cap, cn_y, sn_y);
    o.n_z = lane_select(cap, cn_z, sn_z);
    const lanef u_s = lane_select(cap, cu_s, su_s);
    const lanef u_x = lane_mul(o.n_x, u_s), u_y = lane_mul(o.n_y, u_s), u_z = lane_mul(o.n_z, u_s);
    const lanef cs = lane_select(lane_cmp_gt(sh, one), one, sh);
    o.pt_x = lane_add(velx, lane_mul(u_x, cs));
    o.pt_y = lane_add(vely, lane_mul(u_y, cs));
    o.pt_z = lane_add(velz, lane_mul(u_z, cs));
    const lanem fin = lane_finite6(o.pt_x, o.pt_y, o.pt_z, o.n_x, o.n_y, o.n_z);
    o.fast = lane_mask_bits(ok);
    o.good = lane_mask_bits(lane_mask_and(ok, fin));
    return o;
}

/* One lane group of orca2_lines_agents: neighbor l < lanes has rel_pos
 * (p_x, p_y), rel_vel (v_x, v_y), radius rad and share sh in lane l (lanes
 * past `lanes` are padding: any values). inv_tau, inv_dt and vel must be
 * finite (orca2_lines_agents checks). Writes the lines orca2_line_agent
 * would write for lanes 0..lanes-1, in order and bit for bit, and returns
 * how many. `whole`: out has room for SHOAL_LANES lines, so a group whose
 * lanes all give a line is stored a whole lane at once (what lands past
 * the lines written is unspecified). */
static inline int orca2_lines_lane(lanef p_x, lanef p_y, lanef v_x, lanef v_y, lanef rad, lanef sh, int lanes,
                                   float inv_tau, float inv_dt, vec2 vel, int whole, orca_line2_t* out)
{
    int written = 0;
    const orca2_lane_lines_t ln =
        orca2_lines_core(p_x, p_y, v_x, v_y, rad, sh, lane_set1(inv_tau), lane_set1(vel.x), lane_set1(vel.y));
    const lanef pt_x = ln.pt_x, pt_y = ln.pt_y, d_x = ln.d_x, d_y = ln.d_y;
    const uint32_t fast = ln.fast, good = ln.good;
    float o[4][SHOAL_MAX_LANES];
    lane_storeu(o[0], pt_x);
    lane_storeu(o[1], pt_y);
    lane_storeu(o[2], d_x);
    lane_storeu(o[3], d_y);
    const uint32_t all = (1u << lanes) - 1u; /* lanes past count are only padding */
    if ((fast & all) == all) {
        /* every lane computed here: write each, keep the good ones (a
         * whole lane of good ones at once) */
        if ((lanes == SHOAL_LANES || whole) && (good & all) == all) {
            _Static_assert(sizeof(orca_line2_t) == 4 * sizeof(float), "a line is four floats");
            lane_store_interleaved4((float*)(out + written), pt_x, pt_y, d_x, d_y);
            return written + lanes;
        }
        for (int l = 0; l < lanes; ++l) {
            out[written] = (orca_line2_t){{o[0][l], o[1][l]}, {o[2][l], o[3][l]}};
            written += (int)(good >> l & 1u);
        }
        return written;
    }
    float in[6][SHOAL_MAX_LANES]; /* the rare cases: the scalar function's inputs */
    lane_storeu(in[0], p_x);
    lane_storeu(in[1], p_y);
    lane_storeu(in[2], v_x);
    lane_storeu(in[3], v_y);
    lane_storeu(in[4], rad);
    lane_storeu(in[5], sh);
    for (int l = 0; l < lanes; ++l) {
        if (fast >> l & 1u) {
            if (good >> l & 1u) out[written++] = (orca_line2_t){{o[0][l], o[1][l]}, {o[2][l], o[3][l]}};
        } else {
            written += orca2_line_agent((vec2){in[0][l], in[1][l]}, (vec2){in[2][l], in[3][l]}, in[4][l],
                                        inv_tau, inv_dt, in[5][l], vel, &out[written]);
        }
    }
    return written;
}

/* The 2D program of a lane of agents at once (orca2_solve without static
 * lines): lane l's lines are at index l of the rows of px, py, dx, dy (line
 * i of every lane in row i, SHOAL_LANES floats a row), n[l] of them, at
 * most nmax; radius and (tx, ty) its speed limit and preferred velocity,
 * (bx, by) on entry the best without lines (vec2_clamp_length of the
 * target). run_lp2's steps in every lane: the lines in order, a violated
 * one's best point found against those before it, so each lane ends with
 * the bits run_lp2 gives it. Returns the lanes whose program failed: their
 * (bx, by) the best over the lines before the one that failed, its index
 * in *fail_at (when not NULL), as run_lp2 leaves them. */
static inline uint32_t orca2_lp_lanes(const float* px, const float* py, const float* dx, const float* dy,
                                      lanei n, int nmax, lanef radius, lanef tx, lanef ty, lanef* bx,
                                      lanef* by, lanei* fail_at)
{
    lanei where = lanei_set1(0);
    const lanef zero = lane_zero();
    const lanef slack = lane_mul(lane_set1(ORCA_SLACK), lane_add(lane_set1(1.0f), radius));
    const lanef neg_slack = lane_neg(slack), parallel = lane_set1(ORCA_PARALLEL);
    lanem failed = lane_mask_from_bits(0);
    lanef x = *bx, y = *by;
    for (int i = 0; i < nmax; ++i) {
        const lanef pix = lane_loadu(px + (size_t)i * SHOAL_LANES),
                    piy = lane_loadu(py + (size_t)i * SHOAL_LANES);
        const lanef dix = lane_loadu(dx + (size_t)i * SHOAL_LANES),
                    diy = lane_loadu(dy + (size_t)i * SHOAL_LANES);
        /* side2: cross(dir, x - point) */
        const lanef side = lane_sub(lane_mul(dix, lane_sub(y, piy)), lane_mul(diy, lane_sub(x, pix)));
        const lanem live = lane_mask_andnot(lanei_cmp_gt(n, lanei_set1(i)), failed);
        const lanem bad = lane_mask_and(live, lane_cmp_lt(side, zero));
        if (!lane_mask_any(bad)) continue;
        /* best_on_line2 (the nearest to the target) in the lanes of bad */
        const lanef off = lane_abs(lane_sub(lane_mul(dix, piy), lane_mul(diy, pix)));
        lanem fail = lane_cmp_gt(off, radius);
        const lanef half = lane_mul(lane_sqrt(lane_sub(radius, off)), lane_sqrt(lane_add(radius, off)));
        const lanef mid = lane_neg(lane_add(lane_mul(pix, dix), lane_mul(piy, diy)));
        lanef lo = lane_sub(mid, half), hi = lane_add(mid, half);
        for (int j = 0; j < i; ++j) {
            const lanef pjx = lane_loadu(px + (size_t)j * SHOAL_LANES),
                        pjy = lane_loadu(py + (size_t)j * SHOAL_LANES);
            const lanef djx = lane_loadu(dx + (size_t)j * SHOAL_LANES),
                        djy = lane_loadu(dy + (size_t)j * SHOAL_LANES);
            const lanef rate = lane_sub(lane_mul(djx, diy), lane_mul(djy, dix));
            const lanef at0 = lane_sub(lane_mul(djx, lane_sub(piy, pjy)), lane_mul(djy, lane_sub(pix, pjx)));
            const lanem par = lane_cmp_le(lane_abs(rate), parallel);
            fail = lane_mask_or(fail, lane_mask_and(par, lane_cmp_lt(at0, neg_slack)));
            const lanef t = lane_div(lane_neg(at0), rate);
            const lanem up = lane_cmp_gt(rate, zero);
            lo = lane_select(lane_mask_andnot(lane_mask_and(up, lane_cmp_gt(t, lo)), par), t, lo);
            hi = lane_select(lane_mask_andnot(lane_mask_andnot(lane_cmp_lt(t, hi), up), par), t, hi);
            fail = lane_mask_or(fail, lane_cmp_gt(lo, hi));
        }
        const lanef along = lane_add(lane_mul(lane_sub(tx, pix), dix), lane_mul(lane_sub(ty, piy), diy));
        const lanef t = lane_min(lane_max(along, lo), hi);
        const lanem moved = lane_mask_andnot(bad, fail);
        x = lane_select(moved, lane_add(pix, lane_mul(dix, t)), x);
        y = lane_select(moved, lane_add(piy, lane_mul(diy, t)), y);
        where = lanei_select(lane_mask_and(bad, fail), lanei_set1(i), where);
        failed = lane_mask_or(failed, lane_mask_and(bad, fail));
    }
    *bx = x;
    *by = y;
    if (fail_at) *fail_at = where;
    return lane_mask_bits(failed);
}

/* vec2_clamp_length and vec3_clamp_length of a lane, for the lanes whose
 * length is a float (the others, in *odd, need the scalar function). */
static inline void lane_clamp_length2(lanef* x, lanef* y, lanef max_len, uint32_t* odd)
{
    const lanef len_sq = lane_add(lane_mul(*x, *x), lane_mul(*y, *y));
    const lanem over = lane_cmp_gt(len_sq, lane_mul(max_len, max_len));
    const lanef len = lane_sqrt(len_sq);
    *odd = lane_mask_bits(lane_mask_andnot(over, lane_cmp_lt(len, lane_set1(INFINITY))));
    *x = lane_select(over, lane_mul(lane_div(*x, len), max_len), *x);
    *y = lane_select(over, lane_mul(lane_div(*y, len), max_len), *y);
}

static inline void lane_clamp_length3(lanef* x, lanef* y, lanef* z, lanef max_len, uint32_t* odd)
{
    const lanef len_sq = lane_add(lane_add(lane_mul(*x, *x), lane_mul(*y, *y)), lane_mul(*z, *z));
    const lanem over = lane_cmp_gt(len_sq, lane_mul(max_len, max_len));
    const lanef len = lane_sqrt(len_sq);
    *odd = lane_mask_bits(lane_mask_andnot(over, lane_cmp_lt(len, lane_set1(INFINITY))));
    *x = lane_select(over, lane_mul(lane_div(*x, len), max_len), *x);
    *y = lane_select(over, lane_mul(lane_div(*y, len), max_len), *y);
    *z = lane_select(over, lane_mul(lane_div(*z, len), max_len), *z);
}

/* The 3D program of a lane of agents at once (orca3_solve without static
 * planes), as orca2_lp_lanes: lane l's planes at index l of the rows of
 * the point (px, py, pz) and normal (nx, ny, nz) arrays, n[l] of them, at
 * most nmax; (bx, by, bz) on entry vec3_clamp_length of the target. A
 * violated plane's best point (best_on_plane3) from the lines of the
 * planes before it in its plane, in tmp (4 rows of nmax * SHOAL_LANES
 * floats: points x, y, directions x, y), and their 2D program in lanes.
 * Returns the lanes whose program failed: their (bx, by, bz) the best over
 * the planes before the one that failed, its index in *fail_at, as run_lp3
 * leaves them, except those in *redo, which met a case only the scalar
 * functions take (their result unspecified: orca3_solve runs them). */
static inline uint32_t orca3_lp_lanes(const float* const pl[6], lanei n, int nmax, lanef radius, lanef tx,
                                      lanef ty, lanef tz, float* const tmp[4], lanef* bx, lanef* by,
                                      lanef* bz, lanei* fail_at, uint32_t* redo)
{
    lanei where = lanei_set1(0);
    *redo = 0;
    const lanef zero = lane_zero(), one = lane_set1(1.0f), inf = lane_set1(INFINITY);
    const lanef slack = lane_mul(lane_set1(ORCA_SLACK), lane_add(one, radius));
    const lanef neg_slack = lane_neg(slack), parallel = lane_set1(ORCA_PARALLEL);
    uint32_t failed = 0;
    lanef x = *bx, y = *by, z = *bz;
    for (int i = 0; i < nmax; ++i) {
        const size_t at = (size_t)i * SHOAL_LANES;
        const lanef pix = lane_loadu(pl[0] + at), piy = lane_loadu(pl[1] + at), piz = lane_loadu(pl[2] + at);
        const lanef nx = lane_loadu(pl[3] + at), ny = lane_loadu(pl[4] + at), nz = lane_loadu(pl[5] + at);
        /* side3: (x - point) . normal */
        const lanef side = lane_add(lane_add(lane_mul(lane_sub(x, pix), nx), lane_mul(lane_sub(y, piy), ny)),
                                    lane_mul(lane_sub(z, piz), nz));
        const lanem live = lane_mask_andnot(lanei_cmp_gt(n, lanei_set1(i)), lane_mask_from_bits(failed));
        const lanem bad = lane_mask_and(live, lane_cmp_lt(side, zero));
        if (!lane_mask_any(bad)) continue;
        /* best_on_plane3 in the lanes of bad */
        const lanef h = lane_add(lane_add(lane_mul(pix, nx), lane_mul(piy, ny)), lane_mul(piz, nz));
        const lanef off = lane_abs(h);
        lanem fail = lane_cmp_gt(off, radius);
        const lanef rho = lane_mul(lane_sqrt(lane_sub(radius, off)), lane_sqrt(lane_add(radius, off)));
        const lanef c_x = lane_mul(nx, h), c_y = lane_mul(ny, h), c_z = lane_mul(nz, h);
        /* e1 = odd_perp3(normal): across the normal and its smallest axis */
        const lanef ax = lane_abs(nx), ay = lane_abs(ny), az = lane_abs(nz);
        const lanem on_x = lane_mask_and(lane_cmp_le(ax, ay), lane_cmp_le(ax, az));
        const lanem on_y = lane_mask_andnot(lane_cmp_le(ay, az), on_x);
        const lanem on_z = lane_mask_not(lane_mask_or(on_x, on_y));
        const lanef kx = lane_select(on_x, one, zero), ky = lane_select(on_y, one, zero),
                    kz = lane_select(on_z, one, zero);
        const lanef q_x = lane_sub(lane_mul(ny, kz), lane_mul(nz, ky)),
                    q_y = lane_sub(lane_mul(nz, kx), lane_mul(nx, kz)),
                    q_z = lane_sub(lane_mul(nx, ky), lane_mul(ny, kx));
        const lanef q_len =
            lane_sqrt(lane_add(lane_add(lane_mul(q_x, q_x), lane_mul(q_y, q_y)), lane_mul(q_z, q_z)));
        /* vec3_normalize's slow case: the lane goes to the scalar functions */
        const uint32_t odd_e1 =
            lane_mask_bits(lane_mask_not(lane_mask_and(lane_cmp_gt(q_len, zero), lane_cmp_lt(q_len, inf))));
        const lanef e1x = lane_div(q_x, q_len), e1y = lane_div(q_y, q_len), e1z = lane_div(q_z, q_len);
        /* e2 = normal x e1 */
        const lanef e2x = lane_sub(lane_mul(ny, e1z), lane_mul(nz, e1y)),
                    e2y = lane_sub(lane_mul(nz, e1x), lane_mul(nx, e1z)),
                    e2z = lane_sub(lane_mul(nx, e1y), lane_mul(ny, e1x));
        for (int j = 0; j < i; ++j) {
            const size_t jt = (size_t)j * SHOAL_LANES;
            const lanef njx = lane_loadu(pl[3] + jt), njy = lane_loadu(pl[4] + jt),
                        njz = lane_loadu(pl[5] + jt);
            const lanef m_x = lane_add(lane_add(lane_mul(e1x, njx), lane_mul(e1y, njy)), lane_mul(e1z, njz));
            const lanef m_y = lane_add(lane_add(lane_mul(e2x, njx), lane_mul(e2y, njy)), lane_mul(e2z, njz));
            const lanef k = lane_add(lane_add(lane_mul(lane_sub(c_x, lane_loadu(pl[0] + jt)), njx),
                                              lane_mul(lane_sub(c_y, lane_loadu(pl[1] + jt)), njy)),
                                     lane_mul(lane_sub(c_z, lane_loadu(pl[2] + jt)), njz));
            const lanef len = lane_sqrt(lane_add(lane_mul(m_x, m_x), lane_mul(m_y, m_y)));
            const lanem par = lane_mask_not(lane_cmp_gt(len, parallel));
            fail = lane_mask_or(fail, lane_mask_and(par, lane_cmp_lt(k, neg_slack)));
            const lanef inv = lane_div(one, len);
            const lanef u_x = lane_mul(m_x, inv), u_y = lane_mul(m_y, inv);
            const lanef f = lane_div(lane_neg(k), len);
            /* a parallel plane's line holds everywhere: (0, 0), (0, 0) */
            lane_storeu(tmp[0] + jt, lane_select(par, zero, lane_mul(u_x, f)));
            lane_storeu(tmp[1] + jt, lane_select(par, zero, lane_mul(u_y, f)));
            lane_storeu(tmp[2] + jt, lane_select(par, zero, u_y));
            lane_storeu(tmp[3] + jt, lane_select(par, zero, lane_neg(u_x)));
        }
        const lanef t3x = lane_sub(tx, c_x), t3y = lane_sub(ty, c_y), t3z = lane_sub(tz, c_z);
        const lanef t2x = lane_add(lane_add(lane_mul(t3x, e1x), lane_mul(t3y, e1y)), lane_mul(t3z, e1z));
        const lanef t2y = lane_add(lane_add(lane_mul(t3x, e2x), lane_mul(t3y, e2y)), lane_mul(t3z, e2z));
        lanef yx = t2x, yy = t2y;
        uint32_t odd;
        lane_clamp_length2(&yx, &yy, rho, &odd);
        const uint32_t odd_here = lane_mask_bits(bad) & (odd | odd_e1);
        *redo |= odd_here;
        uint32_t bits = lane_mask_bits(lane_mask_andnot(bad, fail)) & ~odd_here;
        bits &= ~orca2_lp_lanes(tmp[0], tmp[1], tmp[2], tmp[3],
                                lanei_select(lane_mask_from_bits(bits), lanei_set1(i), lanei_set1(0)), i, rho,
                                t2x, t2y, &yx, &yy, NULL);
        const lanem moved = lane_mask_from_bits(bits);
        x = lane_select(moved, lane_add(c_x, lane_add(lane_mul(e1x, yx), lane_mul(e2x, yy))), x);
        y = lane_select(moved, lane_add(c_y, lane_add(lane_mul(e1y, yx), lane_mul(e2y, yy))), y);
        z = lane_select(moved, lane_add(c_z, lane_add(lane_mul(e1z, yx), lane_mul(e2z, yy))), z);
        const uint32_t now = lane_mask_bits(bad) & ~bits;
        where = lanei_select(lane_mask_from_bits(now & ~odd_here), lanei_set1(i), where);
        failed |= now;
    }
    *bx = x;
    *by = y;
    *bz = z;
    *fail_at = where;
    return failed;
}

#endif /* SHOAL_SYSTEMS_ORCA_LANES_H */
