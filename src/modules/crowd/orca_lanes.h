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
    lanem ok = lane_mask_and(lane_mask_and(lane_finite(p_x), lane_finite(p_y)),
                             lane_mask_and(lane_finite(v_x), lane_finite(v_y)));
    ok = lane_mask_and(ok, lane_mask_and(lane_finite(rad), lane_cmp_gt(sh, zero)));
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
    /* On the cut-off arc. */
    const lanef cn_x = lane_div(w_x, w_len), cn_y = lane_div(w_y, w_len);
    const lanef cu_s = lane_sub(lane_mul(r, itau), w_len);
    const lanef cu_x = lane_mul(cn_x, cu_s), cu_y = lane_mul(cn_y, cu_s);
    /* On a leg. */
    const lanef leg = lane_sqrt(lane_sub(dist_sq, r_sq));
    const lanem left = lane_cmp_gt(lane_sub(lane_mul(p_x, w_y), lane_mul(p_y, w_x)), zero);
    const lanef pxl = lane_mul(p_x, leg), pyl = lane_mul(p_y, leg), pxr = lane_mul(p_x, r),
                pyr = lane_mul(p_y, r);
    const lanef gl_x = lane_div(lane_sub(pxl, pyr), dist_sq), gl_y = lane_div(lane_add(pyl, pxr), dist_sq);
    const lanef gr_x = lane_div(lane_add(pxl, pyr), dist_sq), gr_y = lane_div(lane_sub(pyl, pxr), dist_sq);
    /* left: n = perp(g) = (-g.y, g.x); right: n = -perp(g) = (g.y, -g.x) */
    const lanef ln_x = lane_select(left, lane_neg(gl_y), gr_y);
    const lanef ln_y = lane_select(left, gl_x, lane_neg(gr_x));
    const lanef lu_s = lane_neg(lane_add(lane_mul(v_x, ln_x), lane_mul(v_y, ln_y)));
    const lanef lu_x = lane_mul(ln_x, lu_s), lu_y = lane_mul(ln_y, lu_s);
    const lanef n_x = lane_select(cap, cn_x, ln_x), n_y = lane_select(cap, cn_y, ln_y);
    const lanef u_x = lane_select(cap, cu_x, lu_x), u_y = lane_select(cap, cu_y, lu_y);
    const lanef cs = lane_select(lane_cmp_gt(sh, one), one, sh);
    orca2_lane_lines_t o;
    o.pt_x = lane_add(velx, lane_mul(u_x, cs));
    o.pt_y = lane_add(vely, lane_mul(u_y, cs));
    o.d_x = n_y;
    o.d_y = lane_neg(n_x);
    const lanem fin = lane_mask_and(lane_mask_and(lane_finite(o.pt_x), lane_finite(o.pt_y)),
                                    lane_mask_and(lane_finite(o.d_x), lane_finite(o.d_y)));
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
 * the bits run_lp2 gives it. Returns the lanes whose program failed (their
 * (bx, by) then unspecified: orca2_solve runs them). */
static inline uint32_t orca2_lp_lanes(const float* px, const float* py, const float* dx, const float* dy,
                                      lanei n, int nmax, lanef radius, lanef tx, lanef ty, lanef* bx,
                                      lanef* by)
{
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
        failed = lane_mask_or(failed, lane_mask_and(bad, fail));
    }
    *bx = x;
    *by = y;
    return lane_mask_bits(failed);
}

#endif /* SHOAL_SYSTEMS_ORCA_LANES_H */
