/* The contact pass (docs/crowds.md, "The walking model"): after
 * everything moved, the overlap left between agents that take part
 * (participants: every crowd agent, and any other agent whose definition
 * asks for `contacts`), and between a participant and an obstacle or a wall,
 * is resolved by moving positions; a participant that was moved then has
 * the velocity it really moved at over the step (ground vehicles keep
 * their model's state).
 *
 * contacts_prepare (first of integrate, before anything moves), for the
 * participants that are not crowd agents: their body (vehicle.radius and
 * mass; a ground vehicle's own), where they start (walls are crossed from
 * that side only) and their CONTACT_K nearest participants in the spatial
 * hash within reach of a contact this step (the sum of radii and what both
 * can travel in dt). Crowd agents' candidates come from the orca pass and
 * their start from crowd_move, both the crowd module's data, read through
 * crowd_contacts (crowd.h); nothing to do in a world of crowd agents
 * alone. A ground vehicle's body is the ground module's (ground_body).
 *
 * contacts (last of integrate but wrap): Jacobi iterations, so that any
 * split over threads gives the same bits: each participant computes its
 * push from the positions of the previous iteration, then all move. Of a
 * shared overlap, two crowd agents take half each; a participant and
 * another participant shares by inverse mass; a crowd agent against an
 * agent that does not take part, an obstacle or a wall takes all of it (a
 * participant that is not a crowd agent ignores agents that do not take
 * part). A participant with several contacts moves by their sum times
 * CONTACT_RELAX / contacts (capped at the sum), which keeps packed clusters
 * from overshooting. The first iteration checks every participant (in a
 * world of crowd agents alone it passes over those too far from their
 * candidates to touch them, first_clear, and screens the rest of a lane
 * of rows against their candidates at once, run_apart); later ones check only the marked
 * (they overlapped at their last check, moved, or a candidate moved), and
 * once those hold, a check of every participant confirms it (skipping
 * those that neither moved nor have a candidate that moved since their
 * last check, which would find what it found). Iterations
 * stop once the largest overlap is at most CONTACT_TOLERANCE of the
 * smaller radius (a reduction by max, the same for any split). In a world of
 * crowd agents alone the first check also makes the watch list, of those
 * that may touch anything this step, and the rest of the pass takes those
 * alone, with the same result ("Who may touch", below). Jacobi converges slowly in a packed cluster (a crowd
 * pressed together from all sides): after CONTACT_MAX_ITER iterations
 * without convergence (at once, when no overlap is deeper than
 * CONTACT_SHALLOW), Gauss-Seidel sweeps take over, over the
 * participants still overlapping (and those they push), each overlap
 * resolved at once (reading the positions just written; the first
 * CONTACT_SOR_SWEEPS sweeps over-relaxed), until the
 * tolerance holds, checked over every participant, or after
 * CONTACT_MAX_SWEEPS sweeps. The sweeps are colored (below): the cells of
 * one color take their turns at once, the workers sharing them, in an
 * order that the data alone fixes, so that no thread count, storage order
 * or split of the cells changes the result; the few participants that
 * cannot take a colored turn follow on the calling thread by global id. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "modules/ground/ground.h"
#include "ecs/parallel.h"
#include "modules/contacts/contacts.h"
#include "modules/crowd/crowd.h"
#include "modules/grid/grid_nearest.h"
#include "modules/obstacles/obstacles.h"
#include "modules/grid/grid.h"
#include "modules/agent.h"
#include "modules/walls/walls.h"

#define CONTACT_TOLERANCE 0.005f
#define CONTACT_MAX_ITER 16
/* A step whose first check finds no overlap deeper than CONTACT_SHALLOW of
 * the smaller radius (a jam ORCA pressed together: its plan radius leaves
 * at most about a tenth) hands what is left to the (over-relaxed) sweeps
 * after CONTACT_SHALLOW_ITER iterations: with none, the sweeps alone threw
 * a walker back across the door's line in 7 of 40 seeds of
 * scenarios/nav_u_wall.json, with 2 in 3 (4 iterations: 4; plain sweeps
 * after 4 iterations: 4). Deeper overlaps (bodies spawned on top of each
 * other) take all CONTACT_MAX_ITER: the sweeps resolve each overlap at
 * once and can carry a body along an overlapping chain farther than its
 * candidates' range allows for, where Jacobi's relaxed pushes spread it. */
#define CONTACT_SHALLOW 0.25f
#define CONTACT_SHALLOW_ITER 2
#define CONTACT_RELAX 1.5f
/* In a step whose first check found only shallow overlaps, the first
 * CONTACT_SOR_SWEEPS sweeps push each overlapping pair CONTACT_SOR times
 * its overlap apart (successive over-relaxation: in a packed cluster a
 * pair resolved exactly is pressed together again by its neighbors' turns,
 * and the overshoot leaves them room); later sweeps push by the overlap,
 * so that a cluster the overshoot cannot settle (a crowd pressed against
 * walls) ends as plain sweeps end it. Deep overlaps are never
 * over-relaxed: an overshoot carries bodies along an overlapping chain
 * past their candidates. The grid jam of `shoal bench crowd`: a quarter
 * of the sweeps' turns (docs/dev/crowd-performance.md). */
#define CONTACT_SOR 1.8f
#define CONTACT_SOR_SWEEPS 8
/* The first check takes rows a lane at a time with at most this many
 * obstacles (each tested against every lane). */
#define CONTACT_RUN_OBSTACLES 16
/* ... and screens a run's rows the bound left against their candidates a
 * lane at a time (run_apart) when at least this many are left (fewer are
 * cheaper one at a time) */
#ifndef CONTACT_RUN_APART
#define CONTACT_RUN_APART 3
#endif
#define CONTACT_MAX_SWEEPS 512

_Static_assert(CONTACT_K >= CROWD_CONTACT_K,
               "a contact row keeps at least as many candidates as a crowd row");

/* Whether the path from (sx, sy) to (px, py) crosses segment sg: it starts
 * strictly on one side of the segment's line, ends on the line or on the
 * other side, and meets the line within the segment (its ends included).
 * *t is where along the path it meets the line. A path that passes round
 * the segment's end crosses its line but not the segment: a walker who
 * steps past the end of a wall or through a door goes on (a test of the
 * line alone put it back on the wall's end, step after step). A path that
 * starts on the line leaves it either way (only a start placed there can
 * be: no step ends on a wall it met). Every sign is the one formula's, so
 * a side computed once is the side found again. */
/* How many float steps of the coordinates' size a crossing walker is put
 * off a wall's line at least (wall_push). */
#define CONTACT_WALL_ULPS 8.0f

static int wall_path_hits(const float sg[4], float sx, float sy, float px, float py, float* t)
{
    float ex = sg[2] - sg[0], ey = sg[3] - sg[1];
    float os = ex * (sy - sg[1]) - ey * (sx - sg[0]);
    float op = ex * (py - sg[1]) - ey * (px - sg[0]);
    if (os == 0.0f || (os > 0.0f ? op > 0.0f : op < 0.0f)) return 0;
    float dx = px - sx, dy = py - sy;
    float oa = dx * (sg[1] - sy) - dy * (sg[0] - sx);
    float ob = dx * (sg[3] - sy) - dy * (sg[2] - sx);
    if ((oa > 0.0f && ob > 0.0f) || (oa < 0.0f && ob < 0.0f)) return 0;
    *t = os / (os - op);
    return 1;
}

/* The push that puts an agent of radius ri at (px, py), which was at
 * (x0, y0) before it moved, back out of segment sg on the side it came
 * from: 0 when clear. A center whose path crossed the segment goes back
 * to the start's side. Returns the overlap over ri. */
static float wall_push(const float sg[4], float px, float py, float x0, float y0, float ri, float push[2])
{
    float qx, qy, t;
    walls_nearest(sg, px, py, &qx, &qy);
    float ex = sg[2] - sg[0], ey = sg[3] - sg[1];
    float dx = px - qx, dy = py - qy, dist = sqrtf(dx * dx + dy * dy);
    if (wall_path_hits(sg, x0, y0, px, py, &t)) {
        /* crossed: to the start's side, ri away */
        float s0 = ex * (y0 - sg[1]) - ey * (x0 - sg[0]);
        float len = sqrtf(ex * ex + ey * ey), side = s0 > 0.0f ? 1.0f : -1.0f;
        float nx = -ey / len * side, ny = ex / len * side;
        /* at least a few float steps off the line at these coordinates:
         * a radius of 1e-30 m would land back on it, and a path that
         * starts on the line may leave it either way */
        float off = fmaxf(ri, CONTACT_WALL_ULPS * FLT_EPSILON * (fabsf(qx) + fabsf(qy) + 1.0f));
        push[0] = qx + nx * off - px;
        push[1] = qy + ny * off - py;
        return (ri + dist) / ri;
    }
    if (!(dist < ri)) return 0.0f;
    float ux, uy;
    if (dist > 0.0f) {
        ux = dx / dist;
        uy = dy / dist;
    } else { /* on an end point: back toward the start */
        float bx = x0 - px, by = y0 - py, b = sqrtf(bx * bx + by * by);
        ux = b > 0.0f ? bx / b : 1.0f;
        uy = b > 0.0f ? by / b : 0.0f;
    }
    push[0] = (ri - dist) * ux;
    push[1] = (ri - dist) * uy;
    return (ri - dist) / ri;
}

/* The first wall the path from (sx, sy) to (px, py) crosses: where along
 * the path it meets it (0 to 1), or 2 when it crosses none. Every segment
 * the path meets has a point within the path's length of its end. */
static float wall_first_hit(const wall_set_t* ws, int32_t worker, float sx, float sy, float px, float py)
{
    float dx = px - sx, dy = py - sy;
    float len = sqrtf(dx * dx + dy * dy);
    float first = 2.0f;
    if (!(len > 0.0f)) return first;
    wall_query_t q;
    walls_query_begin(&q, ws, worker, px, py, len * 1.001f + FLT_MIN);
    for (int32_t s; (s = walls_query_next(&q)) >= 0;) {
        float t;
        if (wall_path_hits(ws->seg[s], sx, sy, px, py, &t)) first = t < first ? t : first;
    }
    walls_query_end(&q);
    return first;
}

typedef struct contact_ctx {
    world_t* w;
    const grid_t* g;
    agent_view_t a;
    const int32_t* crowd_row;   /* agent row of each crowd row */
    const int32_t* contact_row; /* agent row of each contact row */
    const int32_t* crowd_near;  /* crowd_near_stride per crowd row (orca pass) */
    /* where each crowd row started this step (crowd_move); a contact row's
     * start is the scratch's x0, y0, z0 (contacts_prepare) */
    const float *crowd_x0, *crowd_y0, *crowd_z0;
    const component_t* crowd;
    const component_t* contact;
    const uint32_t* slots;
    const obstacle_set_t* obs;
    contact_world_t* cw;
    const wall_set_t* walls;
    float* worst;    /* per worker: largest overlap over the smaller radius */
    int32_t nc, nt;  /* crowd rows, contact rows */
    int only_active; /* this pass: participants not marked active keep their place */
    /* this pass checks again only the participants marked active, or one
     * of whose candidates (or itself) the pass moved (cw->row_moved): the
     * others would find what their last check found, which their flags
     * and where they go still hold */
    int recheck;
    /* this pass: a crowd row whose nearest candidate was at least this much
     * farther than the sum of radii when the orca pass found it (plus what
     * the row itself moved since) cannot touch any of them: clear[r]
     * (crowd_world_t), 0: the test is off */
    const float* clear;
    const float* wall_clear; /* with walls, clear's for them (crowd_world_t): no wall nearer */
    float reach;
    /* with clear: each sorted position's crowd row (-1: none) and how far
     * its agent moved this step plus its radius (contact_world_t), for a
     * bound by a row's own candidates (first_clear_lanes; NULL: none) */
    const int32_t* sorted_crow;
    const float* sorted_reach;
    int crow_in_order; /* crowd row r is agent row r */
    float dt;
    /* The watch list ("Who may touch", below): the margin (m; 0: no list),
     * this pass's participants when it takes those alone (NULL: every
     * one), and where a push of a participant off the list is flagged */
    float margin;
    const int32_t* list;
    int32_t list_n;
    int* spill;
    float relax; /* this sweep's factor on a pair's push (CONTACT_SOR) */
} contact_ctx_t;

static inline int32_t part_row(const contact_ctx_t* x, int32_t p)
{
    return p < x->nc ? x->crowd_row[p] : x->contact_row[p - x->nc];
}

/* Where participant p was before this step moved it. */
static inline float part_x0(const contact_ctx_t* x, int32_t p)
{
    return p < x->nc ? x->crowd_x0[p] : x->cw->x0[p];
}
static inline float part_y0(const contact_ctx_t* x, int32_t p)
{
    return p < x->nc ? x->crowd_y0[p] : x->cw->y0[p];
}
static inline float part_z0(const contact_ctx_t* x, int32_t p)
{
    return p < x->nc ? x->crowd_z0[p] : x->cw->z0[p];
}

/* Participant p's candidates: *k of them (the first -1 ends them early). */
static inline const int32_t* part_near(const contact_ctx_t* x, int32_t p, int* k)
{
    const int stride = crowd_near_stride(x->w->dims == 3);
    *k = p < x->nc ? stride : CONTACT_K;
    return p < x->nc ? x->crowd_near + (size_t)p * (size_t)stride
                     : x->cw->near + (size_t)(p - x->nc) * CONTACT_K;
}

/* The participant of agent row j, or -1 when it does not take part. */
static inline int32_t part_of(const contact_ctx_t* x, int32_t j)
{
    uint32_t s = x->slots[j];
    int32_t r = component_row(x->crowd, s);
    if (r >= 0 || x->nt == 0) return r;
    r = component_row(x->contact, s);
    return r >= 0 ? x->nc + r : -1;
}

/* Participant p's body radius (i: its agent row). */
static inline float part_radius(const contact_ctx_t* x, int32_t p, int32_t i)
{
    return p < x->nc ? x->a.radius[i] : x->cw->radius[p];
}

static inline float part_inv_mass(const contact_ctx_t* x, int32_t p, int32_t i)
{
    if (p >= x->nc) return x->cw->inv_mass[p];
    float m = x->a.mass[i];
    return m > 0.0f ? 1.0f / m : 1.0f;
}

/* Of an overlap between participant p (agent row i) and agent row j
 * (participant q or -1), the part p takes: 0 when p ignores j. */
static inline float part_share(const contact_ctx_t* x, int32_t p, int32_t i, int32_t q, int32_t j)
{
    if (q < 0) return p < x->nc ? 1.0f : 0.0f;
    if (p < x->nc && q < x->nc) return 0.5f;
    float mi = part_inv_mass(x, p, i), mj = part_inv_mass(x, q, j);
    return mi / (mi + mj);
}

/* Overlap of a body at p, radius ri, with agent row j of radius rj: 0 when
 * apart; else 1, with the overlap o (m), rel = o over the smaller radius,
 * and u the unit vector from p toward j (two bodies on top of each other
 * split along x by row, i being the first's row). */
static inline int agent_overlap(const contact_ctx_t* x, int32_t i, const float p[3], float ri, int32_t j,
                                float rj, float* o, float* rel, float u[3])
{
    const agent_view_t* a = &x->a;
    const grid_t* g = x->g;
    const int three = x->w->dims == 3;
    float d[3] = {a->px[j] - p[0], a->py[j] - p[1], three ? a->pz[j] - p[2] : 0.0f};
    if (g->wrap)
        for (int ax = 0; ax < (three ? 3 : 2); ++ax) d[ax] = image(g, d[ax], ax);
    float dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], sum = ri + rj;
    if (!(dist2 < sum * sum) || !(rj > 0.0f)) return 0;
    float dist = sqrtf(dist2);
    *o = sum - dist;
    *rel = *o / (ri < rj ? ri : rj);
    u[0] = 1.0f;
    u[1] = u[2] = 0.0f;
    if (dist > 0.0f) {
        for (int ax = 0; ax < 3; ++ax) u[ax] = d[ax] / dist;
    } else if (j < i) {
        u[0] = -1.0f;
    }
    return 1;
}

/* The same against obstacle ob (center, radius); rel is over ri. */
static inline int obstacle_overlap(const float ob[4], const float p[3], float ri, int three, float* o,
                                   float* rel, float u[3])
{
    float d[3] = {ob[0] - p[0], ob[1] - p[1], three ? ob[2] - p[2] : 0.0f};
    float dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], sum = ri + ob[3];
    if (!(dist2 < sum * sum)) return 0;
    float dist = sqrtf(dist2);
    *o = sum - dist;
    *rel = *o / ri;
    u[0] = 1.0f;
    u[1] = u[2] = 0.0f;
    if (dist > 0.0f)
        for (int ax = 0; ax < 3; ++ax) u[ax] = d[ax] / dist;
    return 1;
}

/* Candidate k (a sorted position) of participant p (agent row i, at pos,
 * radius ri): 1 when p pushes against it and they overlap, with its agent
 * row j, participant q (or -1), p's share and the overlap (o, rel, u as
 * agent_overlap). With crowd agents alone (every participant's body its
 * vehicle.radius, every share > 0), the overlap is tested first, so the
 * many candidates that do not touch cost no look-up of who they are. */
static inline int candidate(const contact_ctx_t* x, int32_t p, int32_t i, const float pos[3], float ri,
                            int32_t k, int32_t* j, int32_t* q, float* share, float* o, float* rel, float u[3])
{
    const int32_t agents = x->w->agents.count;
    *j = x->g->order[k];
    if (*j == i || *j < 0 || *j >= agents) return 0;
    if (x->nt == 0) {
        if (!agent_overlap(x, i, pos, ri, *j, x->a.radius[*j], o, rel, u)) return 0;
        *q = part_of(x, *j);
        *share = part_share(x, p, i, *q, *j);
        return 1;
    }
    *q = part_of(x, *j);
    *share = part_share(x, p, i, *q, *j);
    if (!(*share > 0.0f)) return 0;
    float rj = *q >= 0 ? part_radius(x, *q, *j) : x->a.radius[*j];
    return agent_overlap(x, i, pos, ri, *j, rj, o, rel, u);
}

/* candidate() for a crowd row (agent row i) in a world of crowd agents
 * alone, whose candidate is agent row j, a row of the table other than
 * i (cand_lanes): its participant q, and its share by part_share (half;
 * all against an agent that does not take part). */
static inline int crowd_candidate(const contact_ctx_t* x, int32_t i, const float pos[3], float ri, int32_t j,
                                  int32_t* q, float* share, float* o, float* rel, float u[3])
{
    if (!agent_overlap(x, i, pos, ri, j, x->a.radius[j], o, rel, u)) return 0;
    *q = component_row(x->crowd, x->slots[j]);
    *share = *q >= 0 ? 0.5f : 1.0f;
    return 1;
}

/* Whether any of the 8 flags at f is set (scans skip idle stretches). */
static inline int any8(const uint8_t* f)
{
    uint64_t word;
    memcpy(&word, f, sizeof word);
    return word != 0;
}

/* The first of flags f[r, end) that may be set, from r (a multiple of 8)
 * past the idle ones, 32 at a time, then 8: r itself, end, or one whose
 * run of 8 (or the fewer left) has one set. */
static inline int32_t skip_idle(const uint8_t* f, int32_t r, int32_t end)
{
    for (; r + 32 <= end; r += 32) {
        uint64_t word[4];
        memcpy(word, f + r, sizeof word);
        if ((word[0] | word[1] | word[2] | word[3]) != 0) break;
    }
    while (r + 8 <= end && !any8(f + r)) r += 8;
    return r;
}

/* A crowd row's candidates a lane at a time, in a world of crowd agents
 * alone (x->nt == 0), where a candidate's body is its vehicle radius: per
 * candidate its agent row, where it is and its radius, and which of them
 * count (cand_lanes). A screen (cand_screen) then says which overlap a body,
 * with agent_overlap's arithmetic lane by lane: the candidates that do not
 * touch cost no scalar test, and a row whose candidates all stay apart none
 * of candidate()'s look-ups. */
#define CAND_CHUNKS ((CONTACT_K + SHOAL_LANES - 1) / SHOAL_LANES)
typedef struct cand_lanes {
    lanei j[CAND_CHUNKS];                   /* agent rows; the agent itself where none */
    int32_t row[CAND_CHUNKS * SHOAL_LANES]; /* the same, one by one */
    lanef x[CAND_CHUNKS], y[CAND_CHUNKS], z[CAND_CHUNKS];
    lanef sum2[CAND_CHUNKS]; /* (ri + rj)^2 */
    /* bit m: candidate m is one (before the first -1, not the agent
     * itself, a row of the table, a radius > 0) */
    uint32_t valid;
    int chunks;
} cand_lanes_t;

/* The bits below the lowest of `end` (every bit when none): a row's
 * candidates end at its first -1, and end holds the -1s' bits. */
static inline uint32_t before_first(uint32_t end) { return (end & (0u - end)) - 1u; }

/* Candidates chunk ch of a crowd row's near[0, n), -1 past n: read a whole
 * lane at a time (the crowd module's allocation holds a lane past its last
 * row's candidates), the lanes past n masked. */
static inline lanei cand_chunk(const int32_t* near, int n, int ch)
{
    const int base = ch * SHOAL_LANES;
    return lanei_select(lane_mask_first(n - base), lanei_loadu(near + base), lanei_set1(-1));
}

/* The agent rows of crowd row r's candidates (agent row i) and which are
 * rows of the table (c->valid, before the radius test); positions are
 * cand_bodies'. A crowd row lists crowd_near_stride candidates at most,
 * -1 after them where it has fewer (crowd.c). */
static inline void cand_rows(const contact_ctx_t* x, int32_t r, int32_t i, cand_lanes_t* c)
{
    const int three = x->w->dims == 3;
    const int n = crowd_near_stride(three);
    const int32_t* near = x->crowd_near + (size_t)r * (size_t)n;
    const lanei self = lanei_set1(i), agents = lanei_set1(x->w->agents.count);
    uint32_t valid = 0, end = 0;
    c->chunks = (n + SHOAL_LANES - 1) / SHOAL_LANES;
    for (int ch = 0; ch < c->chunks; ++ch) {
        const lanei k = cand_chunk(near, n, ch);
        const lanem listed = lanei_nonneg(k);
        const lanei j = lanei_gather(x->g->order, lanei_select(listed, k, lanei_set1(0)));
        const lanem ok = lane_mask_and(lane_mask_and(listed, lanei_nonneg(j)),
                                       lane_mask_andnot(lanei_cmp_gt(agents, j), lanei_cmp_eq(j, self)));
        c->j[ch] = lanei_select(ok, j, self);
        lanei_storeu(c->row + ch * SHOAL_LANES, c->j[ch]);
        valid |= lane_mask_bits(ok) << (ch * SHOAL_LANES);
        end |= lane_mask_bits(lane_mask_and(lane_mask_first(n - ch * SHOAL_LANES), lane_mask_not(listed)))
               << (ch * SHOAL_LANES);
    }
    /* the candidates end at the first -1 */
    c->valid = valid & before_first(end);
}

/* Where the candidates are now. */
static inline void cand_where(const contact_ctx_t* x, cand_lanes_t* c)
{
    const int three = x->w->dims == 3;
    for (int ch = 0; ch < c->chunks; ++ch) {
        c->x[ch] = lane_gather(x->a.px, c->j[ch]);
        c->y[ch] = lane_gather(x->a.py, c->j[ch]);
        if (three) c->z[ch] = lane_gather(x->a.pz, c->j[ch]);
    }
}

/* ... and their bodies against one of radius ri (those of radius 0 never
 * touch: agent_overlap). */
static inline void cand_bodies(const contact_ctx_t* x, float ri, cand_lanes_t* c)
{
    const lanef zero = lane_zero(), rl = lane_set1(ri);
    uint32_t pos = 0;
    for (int ch = 0; ch < c->chunks; ++ch) {
        const lanef rj = lane_gather(x->a.radius, c->j[ch]), sum = lane_add(rl, rj);
        c->sum2[ch] = lane_mul(sum, sum);
        pos |= lane_mask_bits(lane_cmp_gt(rj, zero)) << (ch * SHOAL_LANES);
    }
    c->valid &= pos;
    cand_where(x, c);
}

/* Chunk ch of the candidates' d^2 from p, as agent_overlap computes it. */
static inline lanef cand_d2(const contact_ctx_t* x, const cand_lanes_t* c, int ch, const float p[3])
{
    const grid_t* g = x->g;
    const lanef dx = lane_image(g, lane_sub(c->x[ch], lane_set1(p[0])), 0);
    const lanef dy = lane_image(g, lane_sub(c->y[ch], lane_set1(p[1])), 1);
    lanef d2 = lane_add(lane_mul(dx, dx), lane_mul(dy, dy));
    if (x->w->dims == 3) {
        const lanef dz = lane_image(g, lane_sub(c->z[ch], lane_set1(p[2])), 2);
        d2 = lane_add(d2, lane_mul(dz, dz));
    }
    return d2;
}

/* The candidates (of those in `among`) that overlap a body at p, tested as
 * agent_overlap tests them (dist2 < (ri + rj)^2, the same operations in
 * the same order: in 2D its d[2] * d[2] adds +0 to a sum of squares, which
 * leaves it as it is). */
static inline uint32_t cand_screen(const contact_ctx_t* x, const cand_lanes_t* c, const float p[3],
                                   uint32_t among)
{
    uint32_t hit = 0;
    for (int ch = 0; ch < c->chunks; ++ch)
        hit |= lane_mask_bits(lane_cmp_lt(cand_d2(x, c, ch, p), c->sum2[ch])) << (ch * SHOAL_LANES);
    return hit & c->valid & among;
}

/* Whether the pass moved any of the candidates c->j (cand_rows). */
static inline int cand_moved(const contact_ctx_t* x, const cand_lanes_t* c)
{
    uint32_t moved = 0;
    for (int ch = 0; ch < c->chunks; ++ch)
        moved |= lane_mask_bits(lanei_cmp_gt(lanei_gather(x->cw->row_moved, c->j[ch]), lanei_set1(0)))
                 << (ch * SHOAL_LANES);
    return (moved & c->valid) != 0;
}

/* A margin of a few ulps of coordinates about (px, py, pz), for bounds
 * computed in float (first_clear_lanes takes the same a lane at a time). */
static inline float round_margin(float px, float py, float pz)
{
    return 1e-4f + 3e-7f * (fabsf(px) + fabsf(py) + fabsf(pz));
}

/* The first check of a step in a world of crowd agents alone (contacts_run
 * says when): whether crowd row r (agent row i, at p, radius ri) is too far
 * from every one of its candidates to touch it. When the orca pass listed
 * them, the nearest was clear[r] away (center to center); since then only
 * crowd_move moved anyone, the row by |v| dt and any other by at most the
 * largest such distance, and no radius is above the largest. A margin of a
 * few ulps of the coordinates covers rounding. */
static inline int first_clear(const contact_ctx_t* x, int32_t r, int32_t i, const float p[3], float ri)
{
    if (!x->clear || r >= x->nc) return 0;
    const agent_view_t* a = &x->a;
    const int three = x->w->dims == 3;
    float vz = three ? a->vz[i] : 0.0f;
    float mine = sqrtf(a->vx[i] * a->vx[i] + a->vy[i] * a->vy[i] + vz * vz) * x->dt;
    float margin = round_margin(p[0], p[1], p[2]);
    return x->clear[r] - mine - ri - x->reach > margin + x->margin;
}

/* Column col of the agent rows i of the SHOAL_LANES crowd rows from r:
 * loaded where crowd row r is agent row r (x->crow_in_order), else
 * gathered. */
static inline lanef run_column(const contact_ctx_t* x, const float* col, lanei i, int32_t r)
{
    return x->crow_in_order ? lane_loadu(col + r) : lane_gather(col, i);
}

/* first_clear for the SHOAL_LANES crowd rows from r, a lane each (the same
 * operations in the same order: in 2D the + 0 of vz and of |p[2]| leave a
 * sum as it is): bit l, row r + l is clear; in *apart, bit l when it is
 * clear of walls and obstacles (whatever its candidates). With walls (x->wall_clear),
 * also clear of every wall: none was nearer than wall_clear[r] to where the
 * orca pass found the row (its start), and a wall it meets is within the
 * radius and the path's length (1.001 of it: contact_row_finish) of where
 * it is now, which is `mine` from the start. */
static inline uint32_t first_clear_lanes(const contact_ctx_t* x, int32_t r, uint32_t* apart)
{
    const agent_view_t* a = &x->a;
    const int three = x->w->dims == 3;
    const lanei i = lanei_loadu(x->crowd_row + r);
    const lanef vx = run_column(x, a->vx, i, r), vy = run_column(x, a->vy, i, r);
    const lanef px = run_column(x, a->px, i, r), py = run_column(x, a->py, i, r);
    const lanef pz = three ? run_column(x, a->pz, i, r) : lane_zero();
    lanef v2 = lane_add(lane_mul(vx, vx), lane_mul(vy, vy));
    lanef far = lane_add(lane_abs(px), lane_abs(py));
    if (three) {
        const lanef vz = run_column(x, a->vz, i, r);
        v2 = lane_add(v2, lane_mul(vz, vz));
        far = lane_add(far, lane_abs(pz));
    }
    const lanef mine = lane_mul(lane_sqrt(v2), lane_set1(x->dt));
    const lanef margin = lane_add(lane_set1(1e-4f), lane_mul(lane_set1(3e-7f), far));
    const lanef ri = run_column(x, a->radius, i, r), least = lane_add(margin, lane_set1(x->margin));
    const lanef slack = lane_sub(lane_sub(lane_sub(lane_loadu(x->clear + r), mine), ri), lane_set1(x->reach));
    /* apart: clear of walls and obstacles */
    lanem away = lane_cmp_ge(ri, ri);
    if (x->wall_clear) {
        const lanef walls =
            lane_sub(lane_sub(lane_loadu(x->wall_clear + r), ri), lane_mul(lane_set1(2.01f), mine));
        away = lane_cmp_gt(walls, least);
    }
    /* obstacles: obstacle_overlap's test */
    const obstacle_set_t* obs = x->obs;
    for (int32_t k = 0; k < obs->obstacle_high; ++k) {
        const float* ob = obs->obstacles[k];
        if (ob[3] < 0.0f) continue;
        const lanef dx = lane_sub(lane_set1(ob[0]), px), dy = lane_sub(lane_set1(ob[1]), py);
        lanef d2 = lane_add(lane_mul(dx, dx), lane_mul(dy, dy));
        if (three) {
            const lanef dz = lane_sub(lane_set1(ob[2]), pz);
            d2 = lane_add(d2, lane_mul(dz, dz));
        }
        const lanef sum = lane_add(ri, lane_set1(ob[3]));
        away = lane_mask_andnot(away, lane_cmp_lt(d2, lane_mul(sum, sum)));
    }
    *apart = lane_mask_bits(away);
    lanem clear = lane_cmp_gt(slack, least);
    if (x->sorted_reach && !lane_mask_all(clear)) {
        /* the rows everyone's largest move left: the same bound with the
         * largest move and radius among their own candidates (their sum,
         * contact_world_t.sorted_reach) */
        const int n = crowd_near_stride(three);
        const lanei slots = lanei_add(lanei_mul(lanei_iota(), lanei_set1(n)), lanei_set1(r * n));
        lanef theirs = lane_zero();
        for (int m = 0; m < n; ++m) {
            const lanei k = lanei_gather(x->crowd_near, lanei_add(slots, lanei_set1(m)));
            theirs = lane_max(theirs, lane_gather_or(x->sorted_reach, k, lanei_nonneg(k), theirs));
        }
        const lanef own = lane_sub(lane_sub(lane_sub(lane_loadu(x->clear + r), mine), ri), theirs);
        clear = lane_mask_or(clear, lane_cmp_gt(own, least));
    }
    return lane_mask_bits(lane_mask_and(clear, away));
}

/* For the SHOAL_LANES crowd rows from r, a lane each (a run of the first
 * check), their candidates a slot at a time: bit l, none of row r + l's
 * candidates overlaps it, and in *near, one is within the sum of radii
 * and x->margin of it. The tests are cand_screen's and cand_near's, on the
 * candidates cand_rows and cand_bodies take (up to the first -1, not the
 * agent itself, a row of the table, a radius above 0), with the same
 * operations in the same order: a row's answers are the row at a time's. */
static inline uint32_t run_apart(const contact_ctx_t* x, int32_t r, uint32_t* near)
{
    const agent_view_t* a = &x->a;
    const grid_t* g = x->g;
    const int three = x->w->dims == 3;
    const int n = crowd_near_stride(three);
    const lanei i = lanei_loadu(x->crowd_row + r), agents = lanei_set1(x->w->agents.count);
    const lanef px = run_column(x, a->px, i, r), py = run_column(x, a->py, i, r);
    const lanef pz = three ? run_column(x, a->pz, i, r) : lane_zero();
    const lanef ri = run_column(x, a->radius, i, r), reach = lane_add(ri, lane_set1(x->margin)),
                zero = lane_zero();
    const lanei slots = lanei_add(lanei_mul(lanei_iota(), lanei_set1(n)), lanei_set1(r * n));
    lanem listed = lane_cmp_ge(ri, ri), hit = lane_cmp_lt(ri, ri), close = hit;
    for (int m = 0; m < n; ++m) {
        const lanei k = lanei_gather(x->crowd_near, lanei_add(slots, lanei_set1(m)));
        listed = lane_mask_and(listed, lanei_nonneg(k)); /* the candidates end at the first -1 */
        const lanei j = lanei_gather_or(g->order, k, listed, i);
        lanem ok = lane_mask_and(lane_mask_and(listed, lanei_nonneg(j)),
                                 lane_mask_andnot(lanei_cmp_gt(agents, j), lanei_cmp_eq(j, i)));
        const lanei jj = lanei_select(ok, j, i);
        const lanef rj = lane_gather(a->radius, jj);
        ok = lane_mask_and(ok, lane_cmp_gt(rj, zero));
        const lanef dx = lane_image(g, lane_sub(lane_gather(a->px, jj), px), 0);
        const lanef dy = lane_image(g, lane_sub(lane_gather(a->py, jj), py), 1);
        lanef d2 = lane_add(lane_mul(dx, dx), lane_mul(dy, dy));
        if (three) {
            const lanef dz = lane_image(g, lane_sub(lane_gather(a->pz, jj), pz), 2);
            d2 = lane_add(d2, lane_mul(dz, dz));
        }
        const lanef sum = lane_add(ri, rj), s = lane_add(reach, rj);
        hit = lane_mask_or(hit, lane_mask_and(ok, lane_cmp_lt(d2, lane_mul(sum, sum))));
        close = lane_mask_or(close, lane_mask_and(ok, lane_cmp_lt(d2, lane_mul(s, s))));
        if (!lane_mask_any(listed)) break;
    }
    *near = lane_mask_bits(close);
    return lane_mask_bits(lane_mask_not(hit));
}

/* Whether any of the candidates c (cand_bodies) is within the sum of radii
 * plus `margin` of a body at p, radius ri. */
static inline int cand_near(const contact_ctx_t* x, const cand_lanes_t* c, const float p[3], float ri,
                            float margin)
{
    const lanef reach = lane_set1(ri + margin);
    uint32_t near = 0;
    for (int ch = 0; ch < c->chunks; ++ch) {
        const lanef s = lane_add(reach, lane_gather(x->a.radius, c->j[ch]));
        near |= lane_mask_bits(lane_cmp_lt(cand_d2(x, c, ch, p), lane_mul(s, s))) << (ch * SHOAL_LANES);
    }
    return (near & c->valid) != 0;
}

/* Whether crowd row r, at (px, py), has no wall within `reach` of it (the
 * radius and its path's length, 1.001 of it, from its start this step):
 * none was within wall_clear[r] of its start (crowd_world_t), and such a
 * wall would be within twice the reach of it. A query of no reach finds
 * nothing at once (walls_query_begin). */
static inline int walls_far(const contact_ctx_t* x, int32_t r, float px, float py, float reach)
{
    if (!x->wall_clear || r >= x->nc) return 0;
    const float margin = round_margin(px, py, 0.0f);
    return x->wall_clear[r] > 2.0f * reach + margin;
}

/* Participant r's flags after its check, and where it goes when it met
 * anything (contact_apply moves only those). */
static inline void contact_row_done(contact_world_t* cw, int32_t r, const float p[3], const float push[3],
                                    float worst, int32_t contacts, int three)
{
    cw->active[r] = worst > CONTACT_TOLERANCE;
    cw->moved[r] = contacts > 0;
    if (contacts == 0) return;
    cw->touched[r] = 1;
    float k = contacts > 1 ? CONTACT_RELAX / (float)contacts : 1.0f;
    if (k > 1.0f) k = 1.0f;
    cw->cx[r] = p[0] + k * push[0];
    cw->cy[r] = p[1] + k * push[1];
    if (three) cw->cz[r] = p[2] + k * push[2];
}

/* The rest of participant r's check (agent row i at p, radius ri), after
 * its candidates gave push, worst and contacts: obstacles, walls, then
 * where it goes and its flags. Returns its largest overlap. */
static float contact_row_finish(const contact_ctx_t* x, int32_t r, int32_t i, const float p[3], float ri,
                                float push[3], float worst, int32_t contacts, int32_t worker)
{
    const int three = x->w->dims == 3;
    contact_world_t* cw = x->cw;
    (void)i;
    const obstacle_set_t* obs = x->obs;
    for (int32_t k = 0; k < obs->obstacle_high; ++k) {
        float ov, rel, u[3];
        if (obs->obstacles[k][3] < 0.0f || !obstacle_overlap(obs->obstacles[k], p, ri, three, &ov, &rel, u))
            continue;
        worst = rel > worst ? rel : worst;
        for (int ax = 0; ax < 3; ++ax) push[ax] -= ov * u[ax];
        contacts++;
    }
    if (!three && x->walls->seg_count > 0) {
        float x0 = part_x0(x, r), y0 = part_y0(x, r);
        /* past the path's length by a margin: far out, float's steps
         * can make the crossed wall's distance equal to it */
        float reach = ri + 1.001f * sqrtf((p[0] - x0) * (p[0] - x0) + (p[1] - y0) * (p[1] - y0));
        wall_query_t q;
        walls_query_begin(&q, x->walls, worker, p[0], p[1],
                          walls_far(x, r, p[0], p[1], reach) ? 0.0f : reach);
        for (int32_t s; (s = walls_query_next(&q)) >= 0;) {
            float wp[2];
            float rel = wall_push(x->walls->seg[s], p[0], p[1], x0, y0, ri, wp);
            if (rel <= 0.0f) continue;
            worst = rel > worst ? rel : worst;
            push[0] += wp[0];
            push[1] += wp[1];
            contacts++;
        }
        walls_query_end(&q);
    }
    contact_row_done(cw, r, p, push, worst, contacts, three);
    return worst;
}

/* Whether the pass moved participant r (agent row i) or any of its
 * candidates. */
static inline int near_moved(const contact_ctx_t* x, int32_t r, int32_t i)
{
    const int32_t* moved = x->cw->row_moved;
    const int32_t agents = x->w->agents.count;
    int kn;
    const int32_t* near = part_near(x, r, &kn);
    int any = moved[i];
    for (int m = 0; x->g && m < kn && near[m] >= 0; ++m) {
        const int32_t j = x->g->order[near[m]];
        any |= j >= 0 && j < agents && moved[j];
    }
    return any;
}

/* Candidate k's part of participant r's push (agent row i at p, radius
 * ri), when they overlap: its share of the overlap, and the row's largest
 * overlap and count of contacts. */
static inline void contact_pair(const contact_ctx_t* x, int32_t r, int32_t i, const float p[3], float ri,
                                int32_t k, float push[3], float* mine, int32_t* contacts)
{
    int32_t j, q;
    float share, o, rel, u[3];
    if (!candidate(x, r, i, p, ri, k, &j, &q, &share, &o, &rel, u)) return;
    *mine = rel > *mine ? rel : *mine;
    for (int ax = 0; ax < 3; ++ax) push[ax] -= share * o * u[ax];
    (*contacts)++;
}

/* The same for a crowd row's candidate at agent row j (crowd_candidate). */
static inline void crowd_pair(const contact_ctx_t* x, int32_t i, const float p[3], float ri, int32_t j,
                              float push[3], float* mine, int32_t* contacts)
{
    int32_t q;
    float share, o, rel, u[3];
    if (!crowd_candidate(x, i, p, ri, j, &q, &share, &o, &rel, u)) return;
    *mine = rel > *mine ? rel : *mine;
    for (int ax = 0; ax < 3; ++ax) push[ax] -= share * o * u[ax];
    (*contacts)++;
}

static void contact_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const contact_ctx_t* x = (const contact_ctx_t*)vctx;
    const agent_view_t* a = &x->a;
    const grid_t* g = x->g;
    const int three = x->w->dims == 3;
    contact_world_t* cw = x->cw;
    float worst = x->worst[worker];
    const int watching = x->clear && x->margin > 0.0f; /* the first check makes the watch list */
    /* the first check of crowd agents alone, without obstacles or walls: a
     * run of SHOAL_LANES rows all clear of their candidates at once (they
     * meet nothing: their flags say so) */
    const int runs = x->clear && g && x->nt == 0 && !cw->runs_off &&
                     x->obs->obstacle_high <= CONTACT_RUN_OBSTACLES &&
                     (x->w->dims == 3 || x->walls->seg_count == 0 || x->wall_clear);
    int32_t run_at = -1;
    uint32_t run_left = 0; /* the run's lanes still to check */
    int64_t screened = 0;  /* runs_screened, added once (a shared counter) */
    const uint32_t run_all = SHOAL_LANES == 32 ? ~0u : (1u << SHOAL_LANES) - 1u;
    for (int32_t e = begin; e < end; ++e) {
        int in_run = 0; /* a lane of a run that its bounds and screens left */
        if (runs) {     /* the first check alone: neither a list nor marks */
            if (!run_left && run_at >= 0 && e < run_at + SHOAL_LANES) e = run_at + SHOAL_LANES;
            if (e >= end) break;
            if (!run_left && !(e & (SHOAL_LANES - 1)) && e + SHOAL_LANES <= end) {
                /* a run: the lanes that meet nothing (quiet) get their
                 * flags here (near: a candidate is within the margin), the
                 * others are checked a row at a time, in order */
                run_at = e;
                uint32_t apart = 0, near = 0;
                const uint32_t clear = first_clear_lanes(x, e, &apart);
                uint32_t quiet = clear;
                /* those the bound left: apart from walls and obstacles,
                 * and their candidates (run_apart), they meet nothing too */
                if (clear != run_all && __builtin_popcount(run_all & ~clear) >= CONTACT_RUN_APART) {
                    quiet |= run_apart(x, e, &near) & apart;
                    screened++;
                    near &= ~clear;
                }
                memset(cw->active + e, 0, SHOAL_LANES);
                memset(cw->moved + e, 0, SHOAL_LANES);
                if (watching) {
                    memset(cw->watch + e, 0, SHOAL_LANES);
                    for (uint32_t b = near & quiet; b; b &= b - 1u) cw->watch[e + __builtin_ctz(b)] = 1;
                }
                run_left = run_all & ~quiet;
                if (!run_left) {
                    e += SHOAL_LANES - 1;
                    continue;
                }
            }
            if (run_left) {
                e = run_at + __builtin_ctz(run_left);
                run_left &= run_left - 1u;
                in_run = 1;
            }
        }
        int32_t r = e;
        if (x->list)
            r = x->list[e];
        else if (x->only_active && !(e & 7) && (r = e = skip_idle(cw->active, e, end)) >= end)
            break;
        if (x->only_active && !cw->active[r]) continue; /* the others stay where they are */
        int32_t i = part_row(x, r);
        /* crowd agents alone: the candidates a lane at a time */
        const int lanes = g && x->nt == 0;
        cand_lanes_t c;
        c.chunks = 0;
        if (x->recheck && !cw->active[r]) {
            int again = lanes ? cw->row_moved[i] : near_moved(x, r, i);
            if (!again && lanes) {
                cand_rows(x, r, i, &c);
                again = cand_moved(x, &c);
            }
            if (!again) continue;
        }
        float p[3] = {a->px[i], a->py[i], three ? a->pz[i] : 0.0f};
        float ri = part_radius(x, r, i);
        float push[3] = {0.0f, 0.0f, 0.0f};
        float mine = 0.0f; /* this row's, then folded into the block's */
        int32_t contacts = 0;
        int kn;
        const int32_t* near = part_near(x, r, &kn);
        /* crowd agents alone: only the candidates that overlap (none when
         * they were too far to touch: first_clear), in their order */
        uint32_t hit = 0;
        int near_any = 0;
        if (lanes && (in_run || !first_clear(x, r, i, p, ri))) {
            if (!c.chunks) cand_rows(x, r, i, &c);
            cand_bodies(x, ri, &c);
            hit = cand_screen(x, &c, p, ~0u);
            near_any = watching && cand_near(x, &c, p, ri, x->margin);
        }
        for (int m = 0; g && !lanes && m < kn && near[m] >= 0; ++m)
            contact_pair(x, r, i, p, ri, near[m], push, &mine, &contacts);
        for (; hit; hit &= hit - 1u)
            crowd_pair(x, i, p, ri, c.row[__builtin_ctz(hit)], push, &mine, &contacts);
        mine = contact_row_finish(x, r, i, p, ri, push, mine, contacts, worker);
        if (watching) cw->watch[r] = (uint8_t)(near_any || cw->moved[r]); /* moved: it met anything */
        worst = mine > worst ? mine : worst;
    }
    x->worst[worker] = worst;
    if (screened) __atomic_fetch_add(&cw->runs_screened, screened, __ATOMIC_RELAXED);
}

/* Each participant the last iteration pushed goes where it computed, and
 * is marked for the next check with the participants among its
 * candidates (whom it may now press on). Marks are stores of 1 that
 * several workers may make to one flag: relaxed atomic stores, whose
 * union is the same for any split. */
static void contact_apply(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const contact_ctx_t* x = (const contact_ctx_t*)vctx;
    const int three = x->w->dims == 3;
    const int32_t agents = x->w->agents.count;
    contact_world_t* cw = x->cw;
    uint8_t* moved = cw->moved;
    uint8_t* active = cw->active;
    for (int32_t e = begin; e < end; ++e) {
        int32_t r = e;
        if (x->list)
            r = x->list[e];
        else if (!(e & 7) && (r = e = skip_idle(moved, e, end)) >= end)
            break;
        if (!moved[r]) continue;
        moved[r] = 0;
        int32_t i = part_row(x, r);
        x->a.px[i] = x->cw->cx[r];
        x->a.py[i] = x->cw->cy[r];
        if (three) x->a.pz[i] = x->cw->cz[r];
        x->cw->row_moved[i] = 1;
        __atomic_store_n(active + r, (uint8_t)1, __ATOMIC_RELAXED);
        if (x->g && x->nt == 0) { /* crowd agents alone: the candidates' rows a lane at a time */
            if (x->sorted_crow) {
                /* by sorted position, this step's crowd rows: those up to
                 * the first -1 other than r itself (cand_rows' rows) */
                _Alignas(64) int32_t crow[CAND_CHUNKS * SHOAL_LANES];
                const int n = crowd_near_stride(three);
                const lanei self = lanei_set1(r);
                uint32_t listed = 0, other = 0;
                for (int ch = 0; ch * SHOAL_LANES < n; ++ch) {
                    const lanei k = cand_chunk(x->crowd_near + (size_t)r * (size_t)n, n, ch);
                    const lanem in = lanei_nonneg(k);
                    const lanei q = lanei_gather_or(x->sorted_crow, k, in, lanei_set1(-1));
                    lanei_store(crow + ch * SHOAL_LANES, q);
                    listed |= lane_mask_bits(in) << (ch * SHOAL_LANES);
                    other |= lane_mask_bits(lane_mask_andnot(lanei_nonneg(q), lanei_cmp_eq(q, self)))
                             << (ch * SHOAL_LANES);
                }
                const uint32_t stop = ~listed & ((1u << n) - 1u);
                for (uint32_t left = other & listed & before_first(stop); left; left &= left - 1u) {
                    const int32_t q = crow[__builtin_ctz(left)];
                    if (!x->list || cw->watch[q]) __atomic_store_n(active + q, (uint8_t)1, __ATOMIC_RELAXED);
                }
                continue;
            }
            cand_lanes_t c;
            cand_rows(x, r, i, &c);
            for (uint32_t left = c.valid; left; left &= left - 1u) {
                const int32_t q = component_row(x->crowd, x->slots[c.row[__builtin_ctz(left)]]);
                if (q >= 0 && (!x->list || cw->watch[q]))
                    __atomic_store_n(active + q, (uint8_t)1, __ATOMIC_RELAXED);
            }
            continue;
        }
        int kn;
        const int32_t* near = part_near(x, r, &kn);
        for (int m = 0; x->g && m < kn && near[m] >= 0; ++m) {
            int32_t j = x->g->order[near[m]];
            int32_t q = j >= 0 && j < agents && j != i ? part_of(x, j) : -1;
            if (q >= 0) __atomic_store_n(active + q, (uint8_t)1, __ATOMIC_RELAXED);
        }
    }
}

/* In participant r's turn (agent row i at p, radius ri), its overlap with
 * candidate k resolved at once, when they overlap (pushed apart by the
 * sweep's x->relax times the overlap: CONTACT_SOR): both bodies pushed
 * when the other takes part (and marked); *worst: the largest overlap met
 * (over the smaller radius). k < 0: a crowd row's candidate at agent row
 * j (crowd_candidate). */
static inline void sweep_pair(const contact_ctx_t* x, int32_t r, int32_t i, const float p[3], float ri,
                              int32_t k, int32_t j, const int32_t* entry, uint8_t* act, float* worst)
{
    const agent_view_t* a = &x->a;
    const int three = x->w->dims == 3;
    contact_world_t* cw = x->cw;
    int32_t q;
    float share, o, rel, u[3];
    if (k >= 0 ? !candidate(x, r, i, p, ri, k, &j, &q, &share, &o, &rel, u)
               : !crowd_candidate(x, i, p, ri, j, &q, &share, &o, &rel, u))
        return;
    *worst = rel > *worst ? rel : *worst;
    cw->touched[r] = 1;
    cw->row_moved[i] = 1;
    o *= x->relax;
    float mine = share * o;
    if (x->list && q >= 0 && !cw->watch[q]) { /* off the list: kept to be put back (contact_put_back) */
        cw->saved_x[j] = a->px[j];
        cw->saved_y[j] = a->py[j];
        if (three) cw->saved_z[j] = a->pz[j];
        cw->watch[q] = 2;
        __atomic_store_n(x->spill, 1, __ATOMIC_RELAXED);
    }
    a->px[i] -= mine * u[0];
    a->py[i] -= mine * u[1];
    if (three) a->pz[i] -= mine * u[2];
    if (q >= 0) {
        a->px[j] += (o - mine) * u[0];
        a->py[j] += (o - mine) * u[1];
        if (three) a->pz[j] += (o - mine) * u[2];
        cw->row_moved[j] = 1;
        cw->active[q] = 1;
        if (entry && entry[q] >= 0) act[entry[q]] = 1;
        cw->touched[q] = 1;
    }
}

/* Participant r's turn in a Gauss-Seidel sweep: each overlap it meets is
 * resolved at once (reading the positions just written), pushing both
 * bodies when the other takes part (and marking it); it stays marked while
 * it met an overlap past the tolerance. It reads and writes only itself
 * and its candidates. Returns the largest overlap it met (over the smaller
 * radius). */
static inline __attribute__((always_inline)) float
sweep_row(const contact_ctx_t* x, int32_t r, const int32_t* entry, uint8_t* act, int32_t worker)
{
    const agent_view_t* a = &x->a;
    const grid_t* g = x->g;
    const int three = x->w->dims == 3;
    contact_world_t* cw = x->cw;
    uint8_t* active = cw->active;
    float worst = 0.0f;
    int32_t i = part_row(x, r);
    float ri = part_radius(x, r, i);
    int kn;
    const int32_t* near = part_near(x, r, &kn);
    if (g && x->nt == 0) {
        /* crowd agents alone: a screen of every candidate left, again
         * after each push from where this body is now (the push moved it
         * and the candidate, who is not left: the others are where they
         * were gathered) */
        cand_lanes_t c;
        cand_rows(x, r, i, &c);
        cand_bodies(x, ri, &c);
        float p[3] = {a->px[i], a->py[i], three ? a->pz[i] : 0.0f};
        for (uint32_t hit = cand_screen(x, &c, p, ~0u); hit;) {
            const int m = __builtin_ctz(hit);
            sweep_pair(x, r, i, p, ri, -1, c.row[m], entry, act, &worst);
            p[0] = a->px[i];
            p[1] = a->py[i];
            p[2] = three ? a->pz[i] : 0.0f;
            hit = cand_screen(x, &c, p, ~1u << m);
        }
    }
    for (int m = 0; g && x->nt != 0 && m < kn && near[m] >= 0; ++m) {
        const float p[3] = {a->px[i], a->py[i], three ? a->pz[i] : 0.0f}; /* as moved so far */
        sweep_pair(x, r, i, p, ri, near[m], -1, entry, act, &worst);
    }
    const obstacle_set_t* obs = x->obs;
    for (int32_t k = 0; k < obs->obstacle_high; ++k) {
        const float p[3] = {a->px[i], a->py[i], three ? a->pz[i] : 0.0f};
        float ov, rel, u[3];
        if (obs->obstacles[k][3] < 0.0f || !obstacle_overlap(obs->obstacles[k], p, ri, three, &ov, &rel, u))
            continue;
        worst = rel > worst ? rel : worst;
        cw->touched[r] = 1;
        cw->row_moved[i] = 1;
        a->px[i] -= ov * u[0];
        a->py[i] -= ov * u[1];
        if (three) a->pz[i] -= ov * u[2];
    }
    if (!three && x->walls->seg_count > 0) {
        float x0 = part_x0(x, r), y0 = part_y0(x, r);
        float reach =
            ri + 1.001f * sqrtf((a->px[i] - x0) * (a->px[i] - x0) + (a->py[i] - y0) * (a->py[i] - y0));
        if (walls_far(x, r, a->px[i], a->py[i], reach)) reach = 0.0f;
        wall_query_t q;
        walls_query_begin(&q, x->walls, worker, a->px[i], a->py[i], reach);
        for (int32_t s; (s = walls_query_next(&q)) >= 0;) {
            float wp[2];
            float rel = wall_push(x->walls->seg[s], a->px[i], a->py[i], x0, y0, ri, wp);
            if (rel <= 0.0f) continue;
            worst = rel > worst ? rel : worst;
            cw->touched[r] = 1;
            cw->row_moved[i] = 1;
            a->px[i] += wp[0];
            a->py[i] += wp[1];
        }
        walls_query_end(&q);
    }
    active[r] = worst > CONTACT_TOLERANCE;
    if (entry && entry[r] >= 0) act[entry[r]] = active[r];
    return worst;
}

/* The participants' turns by their agents' global ids (qsort has no
 * context argument: the sweep's, for its thread). */
static _Thread_local const contact_ctx_t* turn_ctx;

static int by_global_id(const void* a, const void* b)
{
    uint64_t x = agent_global_id(turn_ctx->w, part_row(turn_ctx, *(const int32_t*)a));
    uint64_t y = agent_global_id(turn_ctx->w, part_row(turn_ctx, *(const int32_t*)b));
    return (x > y) - (x < y);
}

/* One Gauss-Seidel sweep, on the calling thread, over the participants
 * marked active when it starts (and flagged in `only`, when given), by
 * their agents' global ids: the order no storage order, reorder interval
 * or thread count changes (participant order follows the rows a reorder
 * left). One marked during the sweep takes its turn in the next. entry
 * and act: the colored order's flags to keep (NULL: none). Returns the
 * largest overlap (over the smaller radius) it met. */
static float sweep_by_id(const contact_ctx_t* x, int32_t count, const uint8_t* only, const int32_t* entry,
                         uint8_t* act)
{
    const uint8_t* active = x->cw->active;
    const uint8_t* skip = only ? only : active;
    int32_t* turns = x->cw->turns;
    int32_t n = 0;
    for (int32_t r = 0; r < count; ++r) {
        if (!(r & 7) && (r = skip_idle(skip, r, count)) >= count) break;
        if (active[r] && (!only || only[r])) turns[n++] = r;
    }
    /* rows in the order of their agents' ids unless a reorder or
     * removals changed it: then sorted */
    uint64_t last = 0;
    int32_t sorted = 1;
    for (int32_t k = 0; k < n && sorted; ++k) {
        const uint64_t id = agent_global_id(x->w, part_row(x, turns[k]));
        sorted = k == 0 || id > last;
        last = id;
    }
    turn_ctx = x;
    if (!sorted) qsort(turns, (size_t)n, sizeof *turns, by_global_id);
    float worst = 0.0f;
    for (int32_t k = 0; k < n; ++k) {
        const float mine = sweep_row(x, turns[k], entry, act, 0);
        worst = mine > worst ? mine : worst;
    }
    return worst;
}

/* ---- colored sweeps ---------------------------------------------------------
 *
 * The sweeps by the world's workers (after the first colored_after of a
 * step, which run on the calling thread by global id; 0 by default, -1:
 * none colored: contact_world_t). Each
 * participant has the cell of the spatial hash its sorted position is in
 * (its position when the hash was built), colored by the cell's
 * coordinates modulo 3 on each axis (9 colors in 2D, 27 in 3D). A colored
 * participant whose candidates are all in its cell or the next ones (at
 * most one cell away on each axis, checked at its first turn) reads and
 * writes only agents in those cells. Two cells of one color are at least
 * three apart on some axis, so the cells next to one and to the other are
 * disjoint: such participants of different cells of one color touch
 * disjoint sets of agents and flags, and take their turns at once. A sweep
 * takes the colors in turn; within a color the workers take the hash's
 * buckets (a bucket holds whole cells), each bucket's participants in
 * sorted order; then the others (not in the hash, a cell whose bucket is
 * not the hash's, a candidate farther) take theirs on the calling thread,
 * by global id. Within a cell the turns go by global id (a bucket's order),
 * and cells of one color sharing a bucket touch disjoint agents, so the
 * order of the turns that touch a given agent is fixed by the data alone:
 * the same result for any thread count, bucket count or split of the cells
 * over processes (not the serial sweeps' result). Only unbounded worlds: a
 * torus wraps its cells, and its sweeps are serial, by global id. The plan
 * (cells, colors, the colored order) is made once a step, when the colored
 * sweeps start. A colored participant's active flag
 * is kept twice, by participant and in the colored order (cs_act), so
 * that a color's run skips the idle ones eight at a time. */
#define CS_NONE 255
enum { CS_UNKNOWN = 0, CS_PARALLEL = 1, CS_SERIAL = 2 }; /* cs_elig */
#define CS_COLORS 27
#define CS_CHUNKS 64

/* v modulo 3, from 0 to 2, for a cell coordinate (grid_coord clamps them
 * to +-1e9): v plus a multiple of 3 that makes it positive, unsigned. */
static inline int32_t mod3(int32_t v) { return (int32_t)(((uint32_t)v + 1200000000u) % 3u); }

/* A cell's color: its coordinates modulo 3. */
static inline uint8_t cs_color_of(const int32_t cell[3])
{
    return (uint8_t)(mod3(cell[0]) + 3 * mod3(cell[1]) + 9 * mod3(cell[2]));
}

typedef struct cs_ctx {
    const contact_ctx_t* x;
    const int32_t* sorted_at;              /* agent row -> sorted position */
    int32_t sorted;                        /* g->count */
    int32_t count;                         /* participants */
    int32_t chunk_n[CS_CHUNKS][CS_COLORS]; /* colored per chunk and color, then where they go */
    int32_t start[CS_COLORS + 1];          /* where each color's run begins */
    int32_t parts[CS_COLORS];              /* the chunks of each color's run */
    int32_t cut[CS_COLORS][CS_CHUNKS + 1]; /* where they begin, then the run's end */
    int32_t color;                         /* the color a sweep is at */
    int resync;                            /* cs_act is to be made again from the participants' flags */
    /* with counting (a plan of a watch list), the participants flagged in
     * cs_restf: none, and the sweeps by global id have nothing to take */
    int counting;
    int32_t rest;
    float* worst; /* per worker */
} cs_ctx_t;

static inline int32_t cs_first(int32_t n, int32_t ch) { return (int32_t)((int64_t)n * ch / CS_CHUNKS); }

/* Each sorted position's color (from its cell, grid_t.scell) and bucket, a
 * bucket's run at a time (CS_NONE when its cell's bucket is not the one the
 * hash put it in, which the same positions rule out), and no participant
 * yet. */
static void cs_cells(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const cs_ctx_t* c = (const cs_ctx_t*)vctx;
    const grid_t* g = c->x->g;
    contact_world_t* cw = c->x->cw;
    for (int32_t b = begin; b < end; ++b)
        for (int32_t k = g->cell_start[b]; k < g->cell_start[b + 1]; ++k) {
            int32_t cell[3];
            grid_sorted_cell(g, k, cell);
            const int in = (int32_t)grid_bucket(g, cell[0], cell[1], cell[2]) == b;
            cw->cs_color[k] = in ? cs_color_of(cell) : (uint8_t)CS_NONE;
            cw->cs_bucket[k] = b;
            cw->cs_part[k] = -1;
        }
}

/* Each participant at its sorted position, when it has one in the hash
 * and its cell a color; the others are swept on the calling thread
 * (cs_restf). Whether a colored one's candidates allow its turn in
 * parallel is found at its first turn (cs_eligible). */
static void cs_map(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const cs_ctx_t* c = (const cs_ctx_t*)vctx;
    const contact_ctx_t* x = c->x;
    const grid_t* g = x->g;
    contact_world_t* cw = x->cw;
    for (int32_t r = begin; r < end; ++r) {
        const int32_t i = part_row(x, r);
        const int32_t k = i >= 0 && i < c->sorted ? c->sorted_at[i] : -1;
        const int ok = k >= 0 && k < c->sorted && g->order[k] == i && cw->cs_color[k] != CS_NONE;
        if (ok) cw->cs_part[k] = r;
        cw->cs_restf[r] = (uint8_t)!ok;
        cw->cs_elig[r] = ok ? CS_UNKNOWN : CS_SERIAL;
        cw->cs_entry[r] = -1;
    }
}

/* Whether colored participant r's candidates are all in the hash and at
 * most a cell away from its own on each axis. */
static int cs_eligible(const cs_ctx_t* c, int32_t r)
{
    const contact_ctx_t* x = c->x;
    const grid_t* g = x->g;
    int32_t own[3], cell[3];
    grid_sorted_cell(g, c->sorted_at[part_row(x, r)], own);
    int kn;
    const int32_t* near = part_near(x, r, &kn);
    if (r < x->nc && !g->direct) {
        /* a crowd row's candidates a lane at a time: the same tests of
         * those before the first -1 (cand_chunk reads a lane past them) */
        const int three = g->dims == 3;
        const int n = three ? CROWD_CONTACT_K : CROWD_CONTACT_K_2D;
        const lanei sorted = lanei_set1(c->sorted), low = lanei_set1(-2), high = lanei_set1(2);
        const lanei ox = lanei_set1(own[0]), oy = lanei_set1(own[1]), oz = lanei_set1(own[2]);
        uint32_t listed = 0, fail = 0;
        for (int ch = 0; ch * SHOAL_LANES < n; ++ch) {
            const lanei k = cand_chunk(near, n, ch);
            const lanem in = lane_mask_and(lanei_nonneg(k), lanei_cmp_gt(sorted, k));
            lanei d = lanei_sub(lanei_gather_or(g->scell[0], k, in, ox), ox);
            lanem ok = lane_mask_and(lanei_cmp_gt(d, low), lanei_cmp_gt(high, d));
            d = lanei_sub(lanei_gather_or(g->scell[1], k, in, oy), oy);
            ok = lane_mask_and(ok, lane_mask_and(lanei_cmp_gt(d, low), lanei_cmp_gt(high, d)));
            if (three) {
                d = lanei_sub(lanei_gather_or(g->scell[2], k, in, oz), oz);
                ok = lane_mask_and(ok, lane_mask_and(lanei_cmp_gt(d, low), lanei_cmp_gt(high, d)));
            }
            listed |= lane_mask_bits(lanei_nonneg(k)) << (ch * SHOAL_LANES);
            fail |= lane_mask_bits(lane_mask_not(lane_mask_and(in, ok))) << (ch * SHOAL_LANES);
        }
        /* the candidates end at the first -1 (none past n) */
        return (fail & listed & before_first(~listed & ((1u << n) - 1u))) == 0;
    }
    for (int m = 0; m < kn && near[m] >= 0; ++m) {
        const int32_t kk = near[m];
        if (kk >= c->sorted) return 0;
        grid_sorted_cell(g, kk, cell);
        for (int ax = 0; ax < 3; ++ax) {
            const int64_t d = (int64_t)cell[ax] - own[ax];
            if (d < -1 || d > 1) return 0;
        }
    }
    return 1;
}

/* Each chunk of sorted positions: its colored participants per color. */
static void cs_count(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    cs_ctx_t* c = (cs_ctx_t*)vctx;
    const contact_world_t* cw = c->x->cw;
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t* n = c->chunk_n[ch];
        for (int32_t col = 0; col < CS_COLORS; ++col) n[col] = 0;
        for (int32_t k = cs_first(c->sorted, ch); k < cs_first(c->sorted, ch + 1); ++k)
            if (cw->cs_part[k] >= 0) n[cw->cs_color[k]]++;
    }
}

/* ... and to where they go: by color, then sorted position. */
static void cs_scatter(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    cs_ctx_t* c = (cs_ctx_t*)vctx;
    contact_world_t* cw = c->x->cw;
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t* at = c->chunk_n[ch];
        for (int32_t k = cs_first(c->sorted, ch); k < cs_first(c->sorted, ch + 1); ++k) {
            if (cw->cs_part[k] < 0) continue;
            const int32_t e = at[cw->cs_color[k]]++;
            cw->cs_list[e] = cw->cs_part[k];
            cw->cs_lbucket[e] = cw->cs_bucket[k];
            cw->cs_entry[cw->cs_part[k]] = e;
            cw->cs_act[e] = cw->active[cw->cs_part[k]];
        }
    }
}

/* First entry of color run [lo, hi) at or after e that starts a bucket. */
static inline int32_t cs_bucket_start(const contact_world_t* cw, int32_t lo, int32_t hi, int32_t e)
{
    while (e > lo && e < hi && cw->cs_lbucket[e] == cw->cs_lbucket[e - 1]) e++;
    return e;
}

/* The plan of a step with a watch list: its participants alone, in the
 * order the plan of every participant gives them (by color, then sorted
 * position: the others never take a turn while the list holds). */
static void cs_plan_watched(cs_ctx_t* c)
{
    const contact_ctx_t* x = c->x;
    const grid_t* g = x->g;
    contact_world_t* cw = x->cw;
    memset(cw->cs_restf, 0, (size_t)c->count);
    memset(cw->cs_entry, 0xff, (size_t)c->count * sizeof *cw->cs_entry);
    c->counting = 1;
    c->rest = 0;
    int32_t at[CS_COLORS] = {0};
    for (int32_t e = 0; e < x->list_n; ++e) {
        const int32_t r = x->list[e], i = part_row(x, r);
        const int32_t k = i >= 0 && i < c->sorted ? c->sorted_at[i] : -1;
        int ok = k >= 0 && k < c->sorted && g->order[k] == i;
        int32_t cell[3];
        uint32_t b = 0;
        if (ok) {
            grid_sorted_cell(g, k, cell);
            b = grid_bucket(g, cell[0], cell[1], cell[2]);
            ok = g->cell_start[b] <= k && k < g->cell_start[b + 1]; /* cs_cells' test */
        }
        cw->cs_elig[r] = ok ? CS_UNKNOWN : CS_SERIAL;
        cw->cs_restf[r] = (uint8_t)!ok;
        c->rest += !ok;
        if (!ok) continue;
        const uint8_t col = cs_color_of(cell);
        cw->cs_color[k] = col;
        cw->cs_bucket[k] = (int32_t)b;
        cw->cs_part[k] = r;
        cw->cs_mark[k] = 1;
        at[col]++;
    }
    int32_t n = 0;
    for (int32_t col = 0; col < CS_COLORS; ++col) {
        c->start[col] = n;
        n += at[col];
        at[col] = c->start[col];
    }
    c->start[CS_COLORS] = n;
    for (int32_t k = 0; k < c->sorted; ++k) {
        if (!(k & 7) && (k = skip_idle(cw->cs_mark, k, c->sorted)) >= c->sorted) break;
        if (!cw->cs_mark[k]) continue;
        cw->cs_mark[k] = 0;
        const int32_t e = at[cw->cs_color[k]]++, r = cw->cs_part[k];
        cw->cs_list[e] = r;
        cw->cs_lbucket[e] = cw->cs_bucket[k];
        cw->cs_entry[r] = e;
        cw->cs_act[e] = cw->active[r];
    }
}

/* The colored participants of this step by color (cs_ctx); 0 when the
 * colored sweeps do not apply (a torus, no hash, too little scratch: the
 * serial sweep then). With a watch list (x->list), those on it alone. */
static int cs_plan(world_t* w, const contact_ctx_t* x, int32_t count, cs_ctx_t* c)
{
    const grid_t* g = x->g;
    contact_world_t* cw = x->cw;
    if (!g || g->wrap || g->direct || g->count <= 0 || g->count > cw->cs_sorted_capacity ||
        count > cw->cs_part_capacity)
        return 0;
    c->x = x;
    c->sorted = g->count;
    c->count = count;
    c->sorted_at = grid_positions_par(w, grid_data(w));
    c->counting = 0;
    if (x->list) {
        cs_plan_watched(c);
    } else {
        par_for(w, g->bucket_count, 1024, PAR_STATIC, cs_cells, c);
        par_for(w, count, 512, PAR_STATIC, cs_map, c);
        par_for(w, CS_CHUNKS, 1, PAR_STATIC | PAR_TASKS, cs_count, c);
        int32_t at = 0;
        for (int32_t col = 0; col < CS_COLORS; ++col) {
            c->start[col] = at;
            for (int32_t ch = 0; ch < CS_CHUNKS; ++ch) {
                const int32_t here = c->chunk_n[ch][col];
                c->chunk_n[ch][col] = at;
                at += here;
            }
        }
        c->start[CS_COLORS] = at;
        par_for(w, CS_CHUNKS, 1, PAR_STATIC | PAR_TASKS, cs_scatter, c);
    }
    /* each color's run in chunks of about 64 (CS_CHUNKS at most), cut
     * only between buckets */
    for (int32_t col = 0; col < CS_COLORS; ++col) {
        const int32_t lo = c->start[col], hi = c->start[col + 1], n = hi - lo;
        c->parts[col] = n < 64 ? 1 : n / 64 < CS_CHUNKS ? n / 64 : CS_CHUNKS;
        for (int32_t part = 0; part <= c->parts[col]; ++part)
            c->cut[col][part] =
                cs_bucket_start(cw, lo, hi, lo + (int32_t)((int64_t)n * part / c->parts[col]));
    }
    c->resync = 0;
    return 1;
}

/* The colored order's flags from the participants' (after a check of
 * every participant wrote those). */
static void cs_resync(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const contact_world_t* cw = ((const cs_ctx_t*)vctx)->x->cw;
    for (int32_t e = begin; e < end; ++e) cw->cs_act[e] = cw->active[cw->cs_list[e]];
}

/* One color's turns: chunks of its run, cut only between buckets. */
static void cs_sweep_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const cs_ctx_t* c = (const cs_ctx_t*)vctx;
    contact_world_t* cw = c->x->cw;
    const int32_t* cut = c->cut[c->color];
    float worst = c->worst[worker];
    for (int32_t part = begin; part < end; ++part) {
        const int32_t stop = cut[part + 1];
        for (int32_t e = cut[part]; e < stop; ++e) {
            if (!(e & 7) && (e = skip_idle(cw->cs_act, e, stop)) >= stop) break;
            if (!cw->cs_act[e]) continue;
            const int32_t r = cw->cs_list[e];
            if (cw->cs_elig[r] == CS_UNKNOWN) { /* its first turn: only its task writes its flags */
                const int ok = cs_eligible(c, r);
                cw->cs_elig[r] = ok ? CS_PARALLEL : CS_SERIAL;
                cw->cs_restf[r] = (uint8_t)!ok;
                if (!ok && c->counting) __atomic_fetch_add(&((cs_ctx_t*)vctx)->rest, 1, __ATOMIC_RELAXED);
            }
            if (cw->cs_elig[r] != CS_PARALLEL) continue;
            const float mine = sweep_row(c->x, r, cw->cs_entry, cw->cs_act, worker);
            worst = mine > worst ? mine : worst;
        }
    }
    c->worst[worker] = worst;
}

/* One colored sweep (cs_plan made c): the largest overlap it met. */
static float contact_sweep_colored(world_t* w, cs_ctx_t* c)
{
    const contact_world_t* cw = c->x->cw;
    const int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    for (int32_t k = 0; k < workers; ++k) c->worst[k] = 0.0f;
    if (c->resync) par_for(w, c->start[CS_COLORS], 2048, PAR_STATIC, cs_resync, c);
    c->resync = 0;
    const int32_t colors = c->x->w->dims == 3 ? 27 : 9;
    for (int32_t col = 0; col < colors; ++col) {
        const int32_t n = c->start[col + 1] - c->start[col];
        if (n == 0) continue;
        c->color = col;
        par_for(w, c->parts[col], 1, PAR_STATIC | PAR_TASKS, cs_sweep_range, c);
    }
    float worst = 0.0f;
    for (int32_t k = 0; k < workers; ++k) worst = c->worst[k] > worst ? c->worst[k] : worst;
    /* the others, by global id */
    const float rest = !c->counting || __atomic_load_n(&c->rest, __ATOMIC_RELAXED) != 0
                           ? sweep_by_id(c->x, c->count, cw->cs_restf, cw->cs_entry, cw->cs_act)
                           : 0.0f;
    return rest > worst ? rest : worst;
}

static contact_ctx_t contact_ctx_of(world_t* w, float* worst)
{
    contact_ctx_t x;
    memset(&x, 0, sizeof x);
    x.w = w;
    x.g = grid_data(w);
    if (x.g && x.g->count == 0) x.g = NULL;
    x.a = agent_view(w);
    const crowd_contacts_t crowd = crowd_contacts(w);
    x.crowd = crowd.comp;
    x.contact = &w->comps[COMP_CONTACT];
    x.nc = crowd.count;
    x.nt = x.contact->table.count;
    x.crowd_row = crowd.agent_row;
    x.contact_row = COMP_I(w, COMP_CONTACT, COMP_ROW);
    x.crowd_near = crowd.near;
    x.crowd_x0 = crowd.x0;
    x.crowd_y0 = crowd.y0;
    x.crowd_z0 = crowd.z0;
    x.slots = table_slots(&w->agents);
    x.obs = obstacles_of(w);
    x.cw = contact_data(w);
    x.walls = walls_of(w);
    x.worst = worst;
    return x;
}

/* ---- contacts_prepare ------------------------------------------------------ */

typedef struct prepare_ctx {
    contact_ctx_t x;
    float* reach; /* per worker: largest radius, then largest travel in dt */
    float* travel;
    float dt, radius_max, travel_max;
    const int32_t* sorted_at; /* each agent row's sorted position */
} prepare_ctx_t;

/* The body of each contact row (participant x->nc + q) and where it
 * starts; the largest radius and travel in dt over participants [begin,
 * end) (crowd rows only contribute those). */
static void prepare_bodies(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    prepare_ctx_t* c = (prepare_ctx_t*)vctx;
    const contact_ctx_t* x = &c->x;
    const agent_view_t* a = &x->a;
    contact_world_t* cw = x->cw;
    float rmax = c->reach[worker], tmax = c->travel[worker];
    for (int32_t r = begin; r < end; ++r) {
        int32_t i = part_row(x, r);
        float radius = a->radius[i], mass = a->mass[i], vmax = a->max_speed[i];
        /* a ground vehicle's body is its own (the agent's columns keep
         * vehicle.radius and .mass as defined) */
        if (r >= x->nc) ground_body(x->w, x->slots[i], &radius, &mass, &vmax);
        if (r >= x->nc) {
            cw->radius[r] = radius;
            cw->inv_mass[r] = mass > 0.0f ? 1.0f / mass : 1.0f;
            cw->x0[r] = a->px[i];
            cw->y0[r] = a->py[i];
            if (x->w->dims == 3) cw->z0[r] = a->pz[i];
        }
        float speed =
            sqrtf(a->vx[i] * a->vx[i] + a->vy[i] * a->vy[i] + (x->w->dims == 3 ? a->vz[i] * a->vz[i] : 0.0f));
        float travel = fmaxf(speed, vmax) * c->dt;
        rmax = radius > rmax ? radius : rmax;
        tmax = travel > tmax ? travel : tmax;
    }
    c->reach[worker] = rmax;
    c->travel[worker] = tmax;
}

/* The nearest participants of each contact row. */
static void prepare_near(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const prepare_ctx_t* c = (const prepare_ctx_t*)vctx;
    const contact_ctx_t* x = &c->x;
    const grid_t* g = x->g;
    const agent_view_t* a = &x->a;
    const int three = x->w->dims == 3;
    for (int32_t q = begin; q < end; ++q) {
        int32_t* near = x->cw->near + (size_t)q * CONTACT_K;
        for (int m = 0; m < CONTACT_K; ++m) near[m] = -1;
        if (!g) continue;
        int32_t r = x->nc + q, i = part_row(x, r);
        float p[3] = {a->px[i], a->py[i], three ? a->pz[i] : 0.0f};
        if (g->wrap)
            for (int ax = 0; ax < (three ? 3 : 2); ++ax) {
                float e = g->extent[ax], f = p[ax] - g->origin[ax];
                if (!(f >= 0.0f && f < e)) {
                    f -= e * floorf(f / e);
                    if (f >= e) f = 0.0f;
                    p[ax] = g->origin[ax] + f;
                }
            }
        /* a contact needs the bodies to touch after both moved */
        float range = x->cw->radius[r] + c->radius_max + 2.0f * c->travel_max;
        nearest_t nb;
        nb.count = 0;
        nb.cap = NEAREST_MAX;
        find_neighbors(g, p, range, i < g->count ? c->sorted_at[i] : -1, &nb);
        /* the nearest that take part */
        int32_t kept = 0;
        for (int32_t m = 0; m < nb.count && kept < CONTACT_K; ++m)
            if (part_of(x, g->order[nb.k[m]]) >= 0) near[kept++] = nb.k[m];
    }
}

int contacts_prepare_idle(const world_t* w) { return w->comps[COMP_CONTACT].table.count == 0; }

int64_t contacts_prepare_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    float worst[SHOAL_MAX_THREADS], reach[SHOAL_MAX_THREADS], travel[SHOAL_MAX_THREADS];
    prepare_ctx_t c;
    memset(&c, 0, sizeof c);
    c.x = contact_ctx_of(w, worst);
    int32_t count = c.x.nc + c.x.nt;
    if (c.x.nt == 0) return 0; /* crowd rows: the orca pass and crowd_move did it */
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    for (int32_t k = 0; k < workers; ++k) reach[k] = travel[k] = 0.0f;
    c.reach = reach;
    c.travel = travel;
    c.dt = dt;
    par_for(w, count, 1024, PAR_STATIC, prepare_bodies, &c);
    for (int32_t k = 0; k < workers; ++k) {
        c.radius_max = reach[k] > c.radius_max ? reach[k] : c.radius_max;
        c.travel_max = travel[k] > c.travel_max ? travel[k] : c.travel_max;
    }
    if (c.x.g) c.sorted_at = grid_positions_par(w, grid_data(w));
    par_for(w, c.x.nt, 64, PAR_AFFINE, prepare_near, &c);
    return c.x.nt;
}

/* ---- contacts --------------------------------------------------------------- */

typedef struct velocity_ctx {
    const contact_ctx_t* x;
    float inv_dt;
} velocity_ctx_t;

/* A participant the pass moved walks at what it moved: v = (p - p0) / dt
 * (position-based dynamics), so that next step the others see how fast it
 * really goes (a crowd agent held in a jam no longer shows the velocity it
 * pressed with). Ground vehicles keep their model's state. Its agent row's
 * row_moved goes back to 0: the pass sets it only for participants it marks
 * touched. */
static void contact_velocities(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const velocity_ctx_t* c = (const velocity_ctx_t*)vctx;
    const contact_ctx_t* x = c->x;
    const contact_world_t* cw = x->cw;
    const agent_view_t* a = &x->a;
    const int three = x->w->dims == 3;
    for (int32_t r = begin; r < end; ++r) {
        if (!(r & 7) && (r = skip_idle(cw->touched, r, end)) >= end) break;
        if (!cw->touched[r]) continue;
        int32_t i = part_row(x, r);
        cw->row_moved[i] = 0; /* for the next pass (contact_world_t) */
        if (r >= x->nc && ground_is_vehicle(x->w, x->slots[i])) continue;
        a->vx[i] = (a->px[i] - part_x0(x, r)) * c->inv_dt;
        a->vy[i] = (a->py[i] - part_y0(x, r)) * c->inv_dt;
        if (three) a->vz[i] = (a->pz[i] - part_z0(x, r)) * c->inv_dt;
    }
}

/* Walls are never crossed, whatever the pushes added up to (several walls
 * at a corner, a neighbor's push, a step far longer than the walls' reach
 * in ORCA): a participant whose path over the step crosses a wall goes
 * back along it to just before the first wall it meets, or to its start
 * when rounding leaves that point on the wall or past it. Only those the
 * pass moved: the first check of everyone tested every path with the same
 * predicate (wall_push), and a crossing there is a push. Each row writes
 * only its own agent. */
static void contact_walls_hold(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const contact_ctx_t* x = (const contact_ctx_t*)vctx;
    const agent_view_t* a = &x->a;
    contact_world_t* cw = x->cw;
    for (int32_t r = begin; r < end; ++r) {
        if (!(r & 7) && (r = skip_idle(cw->touched, r, end)) >= end) break;
        if (!cw->touched[r]) continue;
        int32_t i = part_row(x, r);
        float sx = part_x0(x, r), sy = part_y0(x, r), px = a->px[i], py = a->py[i];
        float t = wall_first_hit(x->walls, worker, sx, sy, px, py);
        if (t >= 2.0f) continue;
        float k = 0.999f * t, nx = sx + k * (px - sx), ny = sy + k * (py - sy);
        if (wall_first_hit(x->walls, worker, sx, sy, nx, ny) < 2.0f) {
            nx = sx;
            ny = sy;
        }
        a->px[i] = nx;
        a->py[i] = ny;
        cw->touched[r] = 1;
    }
}

/* ---- who may touch ----------------------------------------------------------
 *
 * In a world of crowd agents alone, the first check of a step (which sees
 * every participant) also puts on the watch list each one that met
 * anything or has a candidate within the sum of radii plus a margin
 * (CONTACT_WATCH of the largest radius, or more after a pass whose list
 * moved farther: contact_world_t.watch_next, at most CONTACT_WATCH_MAX of
 * it); each of the others is at least the margin clear of all its
 * candidates. The rest of the pass (the
 * iterations, the checks of everyone, the sweeps' plan and their checks)
 * then takes those on the list alone, which holds while no one on it has
 * moved more than CONTACT_WATCH_HOLD of the margin from where the pass
 * began (checked after each iteration and sweep, the only places where
 * anyone moves) and no sweep pushed anyone off it: then no one off the
 * list can touch a candidate, and a check of it would find what its first
 * check found, which its flags still hold. The result is the pass over
 * everyone's, bit for bit. A list that does not hold puts back where
 * everyone was and the flags, and the pass starts again with a list of
 * twice the margin, over everyone when that does not hold either
 * (contact_world_t.watch_dropped and watch_widened count those: on the
 * benchmark's 3D grid, where 4 lists of 110 steps drop, the retries hold
 * and the pass over everyone is spared). A jam of crowd agents
 * moves each body a few centimeters a pass, and most of a crowd is far
 * from touching: the list is about the participants in a jam. */
#define CONTACT_WATCH 0.15f
#define CONTACT_WATCH_HOLD 0.75f
#define CONTACT_WATCH_MAX 1.0f
/* The next margin: this much farther than the list moved, over the hold
 * (callgrind on the grid and the plaza: 1.25 to 2 within 4 %) */
#define CONTACT_WATCH_GROW 1.5f

/* The watch list from the first check's flags, by participant, with where
 * each one on it was (the first check moved no one). Returns its length. */
static int32_t watch_collect(const contact_ctx_t* x, int32_t count)
{
    contact_world_t* cw = x->cw;
    const agent_view_t* a = &x->a;
    const int three = x->w->dims == 3;
    int32_t n = 0;
    for (int32_t r = 0; r < count; ++r) {
        if (!(r & 7) && (r = skip_idle(cw->watch, r, count)) >= count) break;
        if (!cw->watch[r]) continue;
        cw->watch_list[n++] = r;
        const int32_t i = part_row(x, r);
        cw->saved_x[i] = a->px[i];
        cw->saved_y[i] = a->py[i];
        if (three) cw->saved_z[i] = a->pz[i];
    }
    return n;
}

/* How far the farthest on the watch list moved from where the pass began
 * (INFINITY when a sweep pushed anyone off the list, or a NaN). */
static float watch_moved(const contact_ctx_t* x)
{
    if (__atomic_load_n(x->spill, __ATOMIC_RELAXED)) return INFINITY;
    const contact_world_t* cw = x->cw;
    const agent_view_t* a = &x->a;
    const int three = x->w->dims == 3;
    float most = 0.0f;
    int32_t e = 0;
    if (x->nt == 0) {
        /* crowd rows alone: a lane at a time, the largest d^2 (a NaN as
         * +inf) by lane, then over the lanes (a maximum in any order) */
        const lanef inf = lane_set1(INFINITY);
        lanef most_l = lane_zero();
        for (; e + SHOAL_LANES <= x->list_n; e += SHOAL_LANES) {
            const lanei i = lanei_gather(x->crowd_row, lanei_loadu(x->list + e));
            const lanef dx = lane_sub(lane_gather(a->px, i), lane_gather(cw->saved_x, i)),
                        dy = lane_sub(lane_gather(a->py, i), lane_gather(cw->saved_y, i));
            lanef d2 = lane_add(lane_mul(dx, dx), lane_mul(dy, dy));
            if (three) {
                const lanef dz = lane_sub(lane_gather(a->pz, i), lane_gather(cw->saved_z, i));
                d2 = lane_add(d2, lane_mul(dz, dz));
            }
            most_l = lane_max(most_l, lane_select(lane_cmp_eq(d2, d2), d2, inf));
        }
        _Alignas(64) float t[SHOAL_LANES];
        lane_store(t, most_l);
        for (int l = 0; l < SHOAL_LANES; ++l) most = t[l] > most ? t[l] : most;
    }
    for (; e < x->list_n; ++e) {
        const int32_t i = part_row(x, x->list[e]);
        const float dx = a->px[i] - cw->saved_x[i], dy = a->py[i] - cw->saved_y[i];
        const float dz = three ? a->pz[i] - cw->saved_z[i] : 0.0f;
        const float d2 = dx * dx + dy * dy + dz * dz;
        if (!(d2 <= most)) most = d2 == d2 ? d2 : INFINITY;
    }
    return sqrtf(most);
}

/* Whether the watch list still holds (above). */
static int watch_holds(const contact_ctx_t* x) { return watch_moved(x) <= CONTACT_WATCH_HOLD * x->margin; }

/* The iterations and sweeps of one pass (x as contacts_run set it up): 1
 * when done, with the largest overlap left and the iterations and sweeps
 * it took; 0 when its watch list did not hold (x->margin > 0), which
 * leaves the positions and flags to be put back. */
static int contact_pass(world_t* w, contact_ctx_t* x, int32_t count, float* most_out, int32_t* iter_out,
                        int32_t* sweep_out)
{
    contact_world_t* cw = x->cw;
    float* worst = x->worst;
    const int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    int32_t iter = 0;
    float most = 0.0f;
    memset(cw->touched, 0, (size_t)count);
    memset(cw->moved, 0, (size_t)count);
    /* Most participants touch nothing: after the first pass, iterations
     * check only those marked (that overlapped at their last check, moved,
     * or have a candidate that moved). Once the marked ones hold, one pass
     * over every participant confirms it (a candidate list need not hold
     * whoever lists it) or marks what is left. */
    int full = 1;
    int32_t max_iter = CONTACT_MAX_ITER;
    int shallow = 0; /* the first check found no overlap deeper than CONTACT_SHALLOW */
    const float sor = cw->sor > 0.0f ? cw->sor : CONTACT_SOR;
    for (;;) {
        for (int32_t k = 0; k < workers; ++k) worst[k] = 0.0f;
        x->only_active = !full;
        par_for(w, x->list ? x->list_n : count, 512, PAR_STATIC, contact_range, x);
        most = 0.0f;
        for (int32_t k = 0; k < workers; ++k) most = worst[k] > most ? worst[k] : most;
        if (!x->recheck && most <= CONTACT_SHALLOW) { /* the first check */
            max_iter = CONTACT_SHALLOW_ITER;
            shallow = 1;
        }
        if (x->clear && x->margin > 0.0f) { /* it made the list */
            x->list_n = watch_collect(x, count);
            x->list = cw->watch_list;
        }
        x->clear = NULL; /* the first check only */
        x->recheck = 1;  /* after it, the checks of everyone skip who would find the same */
        if (most <= CONTACT_TOLERANCE && !full) {
            full = 1; /* the marked ones hold: check them all */
            continue;
        }
        if (most <= CONTACT_TOLERANCE || iter >= max_iter) break;
        par_for(w, x->list ? x->list_n : count, 1024, PAR_STATIC, contact_apply, x);
        if (x->list && !watch_holds(x)) return 0;
        iter++;
        full = 0;
    }
    x->only_active = 0;
    /* Gauss-Seidel sweeps over those still overlapping, colored (after
     * colored_after serial ones: none by default); once
     * they hold, one parallel check of every participant (one never marked
     * may meet a neighbor a sweep moved) marks what is left, if anything. */
    cs_ctx_t cs;
    cs.worst = worst;
    int colored = 0;
    int32_t sweep = 0;
    for (; most > CONTACT_TOLERANCE && sweep < CONTACT_MAX_SWEEPS; ++sweep, ++iter) {
        if (cw->colored_after >= 0 && sweep == cw->colored_after) colored = cs_plan(w, x, count, &cs);
        x->relax = shallow && sweep < CONTACT_SOR_SWEEPS ? sor : 1.0f;
        most = colored ? contact_sweep_colored(w, &cs) : sweep_by_id(x, count, NULL, NULL, NULL);
        if (x->list && !watch_holds(x)) return 0;
        if (most <= CONTACT_TOLERANCE) {
            for (int32_t k = 0; k < workers; ++k) worst[k] = 0.0f;
            par_for(w, x->list ? x->list_n : count, 512, PAR_STATIC, contact_range, x);
            cs.resync = 1; /* the check wrote the participants' flags */
            most = 0.0f;
            for (int32_t k = 0; k < workers; ++k) most = worst[k] > most ? worst[k] : most;
        }
    }
    *most_out = most;
    *iter_out = iter;
    *sweep_out = sweep;
    return 1;
}

/* A pass whose watch list did not hold: everyone it moved (those on the
 * list, and those a sweep pushed off it) back where the pass began, their
 * flags cleared (contact_velocities). */
static void contact_put_back(const contact_ctx_t* x, int32_t count)
{
    contact_world_t* cw = x->cw;
    const agent_view_t* a = &x->a;
    for (int32_t r = 0; r < count; ++r) {
        if (!(r & 7) && (r = skip_idle(cw->touched, r, count)) >= count) break;
        if (!cw->touched[r]) continue;
        const int32_t i = part_row(x, r);
        a->px[i] = cw->saved_x[i];
        a->py[i] = cw->saved_y[i];
        if (x->w->dims == 3) a->pz[i] = cw->saved_z[i];
        cw->row_moved[i] = 0;
    }
}

/* Each sorted position's reach for the first check: how far its agent
 * moved this step plus its radius (everyone's largest of both where it is
 * not a crowd row). */
typedef struct reach_ctx {
    const crowd_contacts_t* crw;
    float* out;
    float most;
    int in_order; /* crowd row r is agent row r */
} reach_ctx_t;

static void reach_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const reach_ctx_t* c = (const reach_ctx_t*)vctx;
    const crowd_contacts_t* crw = c->crw;
    int32_t k = begin;
    if (c->in_order) /* every sorted position's agent a crowd row */
        for (; k + SHOAL_LANES <= end; k += SHOAL_LANES)
            lane_storeu(c->out + k, lane_add(lane_gather(crw->travel, lanei_loadu(crw->sorted_crow + k)),
                                             lane_loadu(crw->sorted_radius + k)));
    for (; k + SHOAL_LANES <= end; k += SHOAL_LANES) {
        const lanei q = lanei_loadu(crw->sorted_crow + k);
        const lanef t = lane_gather_or(crw->travel, q, lanei_nonneg(q), lane_zero());
        lane_storeu(c->out + k, lane_select(lanei_nonneg(q), lane_add(t, lane_loadu(crw->sorted_radius + k)),
                                            lane_set1(c->most)));
    }
    for (; k < end; ++k) {
        const int32_t q = crw->sorted_crow[k];
        c->out[k] = q >= 0 ? crw->travel[q] + crw->sorted_radius[k] : c->most;
    }
}

/* The sorted positions' reaches of this step (most where one is not a
 * crowd row; in_order: crowd row r is agent row r); NULL when there is no
 * room for them. */
static const float* sorted_reach(world_t* w, const crowd_contacts_t* crw, float most, int in_order)
{
    contact_world_t* cw = contact_data(w);
    const grid_t* g = grid_data(w);
    if (g->count > cw->sorted_reach_capacity) {
        const int32_t cap = g->count + g->count / 2;
        float* f = (float*)mem_alloc(&w->alloc, (size_t)cap * sizeof(float));
        if (!f) return NULL;
        mem_free(&w->alloc, cw->sorted_reach, (size_t)cw->sorted_reach_capacity * sizeof(float));
        cw->sorted_reach = f;
        cw->sorted_reach_capacity = cap;
    }
    reach_ctx_t c = {crw, cw->sorted_reach, most, in_order};
    par_for(w, g->count, 2048, PAR_STATIC, reach_range, &c);
    return cw->sorted_reach;
}

int64_t contacts_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    float worst[SHOAL_MAX_THREADS];
    contact_ctx_t x = contact_ctx_of(w, worst);
    contact_world_t* cw = x.cw;
    int32_t count = x.nc + x.nt;
    cw->iterations_last = 0;
    cw->sweeps_last = 0;
    cw->overlap_last = 0.0f;
    cw->watch_last = -1;
    if (count == 0) return 0;
    /* The first check may pass over crowd rows that were too far from
     * their candidates to touch them (first_clear), and the rest of the
     * pass take the watch list alone: in a world of crowd agents alone
     * (every agent in the spatial hash is one), whose orca pass and
     * crowd_move both ran this step, and without user systems (which could
     * move anyone in between). */
    const crowd_contacts_t crw = crowd_contacts(w);
    int clear_ok = x.g && x.nt == 0 && x.g->count == x.nc && crw.clear &&
                   crw.radius_step == (int64_t)w->step_count && crw.travel_step == (int64_t)w->step_count;
    for (int32_t k = 0; clear_ok && k < w->system_count; ++k) clear_ok = !system_is_user(&w->systems[k]);
    const float reach = clear_ok ? crw.travel_max + crw.radius_max : INFINITY;
    int spill = 0;
    x.spill = &spill;
    if (clear_ok && reach < INFINITY) {
        x.clear = crw.clear;
        if (w->dims == 2 && x.walls->seg_count > 0 && !cw->runs_off) x.wall_clear = crw.wall_clear;
        x.reach = reach;
        x.sorted_crow = crw.sorted_crow;
        x.crow_in_order = world_component_in_agent_order(w, COMP_CROWD);
        x.sorted_reach = sorted_reach(w, &crw, reach, x.crow_in_order);
        x.dt = dt;
        x.margin = (cw->watch_margin < 0.0f ? CONTACT_WATCH : cw->watch_margin) * crw.radius_max;
        if (cw->watch_margin < 0.0f && cw->watch_next > x.margin) x.margin = cw->watch_next;
    }
    const contact_ctx_t start = x;
    float most = 0.0f;
    int32_t iter = 0, sweep = 0;
    const float widest = CONTACT_WATCH_MAX * crw.radius_max;
    /* a list that did not hold: the pass again from where it began, once
     * with twice the margin (up to the widest: the next pass's margin),
     * then over everyone */
    int held = contact_pass(w, &x, count, &most, &iter, &sweep);
    if (held && x.list) {
        const float next = CONTACT_WATCH_GROW * watch_moved(&x) / CONTACT_WATCH_HOLD;
        cw->watch_next = next < widest ? next : widest;
    }
    const float wider = 2.0f * start.margin < widest ? 2.0f * start.margin : widest;
    for (int retry = 0; !held; ++retry) {
        contact_put_back(&x, count);
        cw->watch_dropped++;
        cw->watch_next = wider;
        x = start;
        spill = 0;
        x.margin = retry == 0 && wider > start.margin ? wider : 0.0f;
        held = contact_pass(w, &x, count, &most, &iter, &sweep);
        cw->watch_widened += held && x.list;
    }
    cw->watch_last = x.list ? x.list_n : -1;
    if (w->dims == 2 && x.walls->seg_count > 0) par_for(w, count, 512, PAR_STATIC, contact_walls_hold, &x);
    cw->iterations_last = iter;
    cw->sweeps_last = sweep;
    cw->overlap_last = most;
    velocity_ctx_t vc = {&x, 1.0f / dt};
    par_for(w, count, 1024, PAR_STATIC, contact_velocities, &vc);
    return count;
}

/* ---- the module ------------------------------------------------------------ */

/* The per-participant float arrays, in one list for growing and freeing. */
#define CONTACT_FLOAT_ARRAYS 8
static void contact_float_arrays(contact_world_t* cw, float** out[CONTACT_FLOAT_ARRAYS])
{
    float** all[CONTACT_FLOAT_ARRAYS] = {&cw->cx, &cw->cy, &cw->cz,     &cw->x0,
                                         &cw->y0, &cw->z0, &cw->radius, &cw->inv_mass};
    memcpy(out, all, sizeof all);
}

/* Scratch for `parts` participants and `rows` contact rows; 0 when out of
 * memory (the old scratch stays). */
static int contact_reserve(world_t* w, int32_t parts, int32_t rows)
{
    contact_world_t* cw = contact_data(w);
    if (rows > cw->near_capacity) {
        int32_t cap = rows < 64 ? 64 : rows + rows / 2;
        int32_t* near = (int32_t*)mem_alloc(&w->alloc, (size_t)cap * CONTACT_K * sizeof(int32_t));
        if (!near) {
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "contacts: out of memory for %d agents", (int)rows);
            return 0;
        }
        if (cw->near_capacity > 0)
            memcpy(near, cw->near, (size_t)cw->near_capacity * CONTACT_K * sizeof(int32_t));
        for (size_t k = (size_t)cw->near_capacity * CONTACT_K; k < (size_t)cap * CONTACT_K; ++k) near[k] = -1;
        mem_free(&w->alloc, cw->near, (size_t)cw->near_capacity * CONTACT_K * sizeof(int32_t));
        cw->near = near;
        cw->near_capacity = cap;
    }
    if (parts <= cw->capacity) return 1;
    int32_t cap = parts < 64 ? 64 : parts + parts / 2;
    size_t old = (size_t)cw->capacity, n = (size_t)cap;
    float* f[CONTACT_FLOAT_ARRAYS];
    int ok = 1;
    for (int k = 0; k < CONTACT_FLOAT_ARRAYS; ++k)
        ok &= (f[k] = (float*)mem_alloc(&w->alloc, n * sizeof(float))) != NULL;
    uint8_t* active = (uint8_t*)mem_calloc(&w->alloc, n);
    uint8_t* touched = (uint8_t*)mem_calloc(&w->alloc, n);
    uint8_t* moved = (uint8_t*)mem_calloc(&w->alloc, n);
    uint8_t* watch = (uint8_t*)mem_calloc(&w->alloc, n);
    int32_t* turns = (int32_t*)mem_alloc(&w->alloc, n * sizeof(int32_t));
    int32_t* watch_list = (int32_t*)mem_alloc(&w->alloc, n * sizeof(int32_t));
    if (!ok || !active || !touched || !moved || !watch || !turns || !watch_list) {
        for (int k = 0; k < CONTACT_FLOAT_ARRAYS; ++k) mem_free(&w->alloc, f[k], n * sizeof(float));
        mem_free(&w->alloc, turns, n * sizeof(int32_t));
        mem_free(&w->alloc, watch_list, n * sizeof(int32_t));
        mem_free(&w->alloc, active, n);
        mem_free(&w->alloc, touched, n);
        mem_free(&w->alloc, moved, n);
        mem_free(&w->alloc, watch, n);
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "contacts: out of memory for %d agents", (int)parts);
        return 0;
    }
    float** mine[CONTACT_FLOAT_ARRAYS];
    contact_float_arrays(cw, mine);
    for (int k = 0; k < CONTACT_FLOAT_ARRAYS; ++k) {
        if (old) memcpy(f[k], *mine[k], old * sizeof(float));
        mem_free(&w->alloc, *mine[k], old * sizeof(float));
        *mine[k] = f[k];
    }
    mem_free(&w->alloc, cw->active, old);
    mem_free(&w->alloc, cw->touched, old);
    mem_free(&w->alloc, cw->moved, old);
    mem_free(&w->alloc, cw->watch, old);
    mem_free(&w->alloc, cw->turns, old * sizeof(int32_t));
    mem_free(&w->alloc, cw->watch_list, old * sizeof(int32_t));
    cw->turns = turns;
    cw->watch_list = watch_list;
    cw->watch = watch;
    cw->active = active;
    cw->touched = touched;
    cw->moved = moved;
    cw->capacity = cap;
    return 1;
}

/* The colored sweeps' scratch: `parts` participants, `sorted` positions
 * in the spatial hash (at most every agent). 0 when out of memory (the old
 * scratch stays). */
static int cs_reserve(world_t* w, int32_t parts, int32_t sorted)
{
    contact_world_t* cw = contact_data(w);
    const allocator_t* a = &w->alloc;
    if (sorted > cw->cs_sorted_capacity) {
        int32_t cap = sorted < 64 ? 64 : sorted + sorted / 2;
        size_t n = (size_t)cap, old = (size_t)cw->cs_sorted_capacity;
        uint8_t* color = (uint8_t*)mem_alloc(a, n);
        int32_t* bucket = (int32_t*)mem_alloc(a, n * sizeof(int32_t));
        int32_t* part = (int32_t*)mem_alloc(a, n * sizeof(int32_t));
        uint8_t* mark = (uint8_t*)mem_calloc(a, n);
        if (!color || !bucket || !part || !mark) {
            mem_free(a, color, n);
            mem_free(a, bucket, n * sizeof(int32_t));
            mem_free(a, part, n * sizeof(int32_t));
            mem_free(a, mark, n);
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "contacts: out of memory for %d agents", (int)sorted);
            return 0;
        }
        mem_free(a, cw->cs_color, old);
        mem_free(a, cw->cs_bucket, old * sizeof(int32_t));
        mem_free(a, cw->cs_part, old * sizeof(int32_t));
        mem_free(a, cw->cs_mark, old);
        cw->cs_mark = mark;
        cw->cs_color = color;
        cw->cs_bucket = bucket;
        cw->cs_part = part;
        cw->cs_sorted_capacity = cap;
    }
    if (parts > cw->cs_part_capacity) {
        int32_t cap = parts < 64 ? 64 : parts + parts / 2;
        size_t n = (size_t)cap, old = (size_t)cw->cs_part_capacity;
        int32_t* list = (int32_t*)mem_alloc(a, n * sizeof(int32_t));
        int32_t* lbucket = (int32_t*)mem_alloc(a, n * sizeof(int32_t));
        uint8_t* elig = (uint8_t*)mem_alloc(a, n);
        uint8_t* restf = (uint8_t*)mem_alloc(a, n);
        int32_t* entry = (int32_t*)mem_alloc(a, n * sizeof(int32_t));
        uint8_t* act = (uint8_t*)mem_alloc(a, n);
        if (!list || !lbucket || !elig || !restf || !entry || !act) {
            mem_free(a, list, n * sizeof(int32_t));
            mem_free(a, lbucket, n * sizeof(int32_t));
            mem_free(a, elig, n);
            mem_free(a, restf, n);
            mem_free(a, entry, n * sizeof(int32_t));
            mem_free(a, act, n);
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "contacts: out of memory for %d agents", (int)parts);
            return 0;
        }
        mem_free(a, cw->cs_list, old * sizeof(int32_t));
        mem_free(a, cw->cs_lbucket, old * sizeof(int32_t));
        mem_free(a, cw->cs_elig, old);
        mem_free(a, cw->cs_restf, old);
        mem_free(a, cw->cs_entry, old * sizeof(int32_t));
        mem_free(a, cw->cs_act, old);
        cw->cs_entry = entry;
        cw->cs_act = act;
        cw->cs_list = list;
        cw->cs_lbucket = lbucket;
        cw->cs_elig = elig;
        cw->cs_restf = restf;
        cw->cs_part_capacity = cap;
    }
    return 1;
}

/* A moved flag and a saved position for each of `rows` agent rows; 0 when
 * out of memory (the old ones stay). */
static int row_moved_reserve(world_t* w, int32_t rows)
{
    contact_world_t* cw = contact_data(w);
    if (rows <= cw->row_moved_capacity) return 1;
    int32_t cap = rows < 64 ? 64 : rows + rows / 2;
    const size_t n = (size_t)cap, old = (size_t)cw->row_moved_capacity;
    int32_t* f = (int32_t*)mem_calloc(&w->alloc, n * sizeof *f);
    float* sx = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    float* sy = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    float* sz = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    if (!f || !sx || !sy || !sz) {
        mem_free(&w->alloc, f, n * sizeof *f);
        mem_free(&w->alloc, sx, n * sizeof(float));
        mem_free(&w->alloc, sy, n * sizeof(float));
        mem_free(&w->alloc, sz, n * sizeof(float));
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "contacts: out of memory for %d agents", (int)rows);
        return 0;
    }
    mem_free(&w->alloc, cw->row_moved, old * sizeof *f);
    mem_free(&w->alloc, cw->saved_x, old * sizeof(float));
    mem_free(&w->alloc, cw->saved_y, old * sizeof(float));
    mem_free(&w->alloc, cw->saved_z, old * sizeof(float));
    cw->row_moved = f;
    cw->saved_x = sx;
    cw->saved_y = sy;
    cw->saved_z = sz;
    cw->row_moved_capacity = cap;
    return 1;
}

static int32_t participants(const world_t* w)
{
    return crowd_contacts(w).count + w->comps[COMP_CONTACT].table.count;
}

/* Before a step: scratch for every participant now live or queued. */
static int contact_reserve_step(world_t* w)
{
    int32_t parts = participants(w);
    if (parts == 0) return 1;
    return contact_reserve(w, parts + w->pending_adds,
                           w->comps[COMP_CONTACT].table.count + w->pending_adds) &&
           row_moved_reserve(w, w->agents.count + w->pending_adds) &&
           (contact_data(w)->colored_after < 0 ||
            cs_reserve(w, parts + w->pending_adds, w->agents.count + w->pending_adds));
}

static int contact_needs(const shoal_agent_def_t* d) { return d->contacts != 0 && !d->crowd.enabled; }

/* Agents that take part in contacts look for bodies that touch: a cell of
 * two of their radii at least, a ground vehicle's own (grid_use_t.reach;
 * crowd agents look farther, as far as their neighbor distance). */
static float contact_reach(world_t* w)
{
    const component_t* ct = &w->comps[COMP_CONTACT];
    if (ct->table.count == 0) return -1.0f;
    const int32_t* rows = TABLE_COL(&ct->table, int32_t, COMP_ROW);
    const float* body = TABLE_COL(&w->agents, float, AC_RADIUS);
    float r = 0.0f;
    for (int32_t k = 0; k < ct->table.count; ++k) r = 2.0f * body[rows[k]] > r ? 2.0f * body[rows[k]] : r;
    const float vehicle = 2.0f * ground_radius_max(w);
    return vehicle > r ? vehicle : r;
}

static const grid_use_t contact_grid = {contact_reach, NULL, 0, 0};

/* A participant added inside a step (it goes live at a stage boundary). */
static int contact_reserve_add(world_t* w, const shoal_agent_def_t* d)
{
    if (!d->crowd.enabled && !contact_needs(d)) return 1;
    int32_t more = w->pending_adds + 1;
    return contact_reserve(w, participants(w) + more, w->comps[COMP_CONTACT].table.count + more) &&
           row_moved_reserve(w, w->agents.count + more) &&
           (contact_data(w)->colored_after < 0 ||
            cs_reserve(w, participants(w) + more, w->agents.count + more));
}

/* Contact row r goes; the last row moves into it: its candidates follow. */
static void contact_row_removed(world_t* w, int32_t agent_row, int32_t r, int32_t moved_agent_row)
{
    (void)agent_row;
    contact_world_t* cw = contact_data(w);
    near_row_removed(cw->near, cw->near_capacity, CONTACT_K, r, w->comps[COMP_CONTACT].table.count - 1,
                     moved_agent_row);
}

static int contact_init(world_t* w)
{
    contact_world_t* cw = (contact_world_t*)mem_calloc(&w->alloc, sizeof *cw);
    w->module_data[MOD_CONTACT] = cw;
    if (cw) {
        cw->watch_margin = -1.0f;
        cw->watch_last = -1;
    }
    return cw != NULL;
}

static void contact_release(world_t* w)
{
    contact_world_t* cw = contact_data(w);
    if (!cw) return;
    size_t n = (size_t)cw->capacity;
    float** mine[CONTACT_FLOAT_ARRAYS];
    contact_float_arrays(cw, mine);
    for (int k = 0; k < CONTACT_FLOAT_ARRAYS; ++k) mem_free(&w->alloc, *mine[k], n * sizeof(float));
    mem_free(&w->alloc, cw->active, n);
    mem_free(&w->alloc, cw->touched, n);
    mem_free(&w->alloc, cw->moved, n);
    mem_free(&w->alloc, cw->watch, n);
    mem_free(&w->alloc, cw->turns, n * sizeof(int32_t));
    mem_free(&w->alloc, cw->watch_list, n * sizeof(int32_t));
    mem_free(&w->alloc, cw->sorted_reach, (size_t)cw->sorted_reach_capacity * sizeof(float));
    mem_free(&w->alloc, cw->near, (size_t)cw->near_capacity * CONTACT_K * sizeof(int32_t));
    size_t ns = (size_t)cw->cs_sorted_capacity, np = (size_t)cw->cs_part_capacity;
    mem_free(&w->alloc, cw->cs_color, ns);
    mem_free(&w->alloc, cw->cs_bucket, ns * sizeof(int32_t));
    mem_free(&w->alloc, cw->cs_part, ns * sizeof(int32_t));
    mem_free(&w->alloc, cw->cs_mark, ns);
    mem_free(&w->alloc, cw->cs_list, np * sizeof(int32_t));
    mem_free(&w->alloc, cw->cs_lbucket, np * sizeof(int32_t));
    mem_free(&w->alloc, cw->cs_elig, np);
    mem_free(&w->alloc, cw->cs_restf, np);
    mem_free(&w->alloc, cw->cs_entry, np * sizeof(int32_t));
    mem_free(&w->alloc, cw->cs_act, np);
    mem_free(&w->alloc, cw->row_moved, (size_t)cw->row_moved_capacity * sizeof *cw->row_moved);
    mem_free(&w->alloc, cw->saved_x, (size_t)cw->row_moved_capacity * sizeof(float));
    mem_free(&w->alloc, cw->saved_y, (size_t)cw->row_moved_capacity * sizeof(float));
    mem_free(&w->alloc, cw->saved_z, (size_t)cw->row_moved_capacity * sizeof(float));
    mem_free(&w->alloc, cw, sizeof *cw);
    w->module_data[MOD_CONTACT] = NULL;
}

static shoal_status_t contact_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    if (d->contacts != 0 && d->contacts != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: contacts must be 0 or 1, got %d", where,
                          (int)d->contacts);
    if (!contact_needs(d)) return SHOAL_OK;
    if (d->planner.enabled)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: a planner agent (planner.enabled) cannot take part in contacts: it flies the "
                          "trajectory it planned",
                          where);
    float body = d->ground.enabled ? d->ground.vehicle.radius : d->vehicle.radius;
    if (!(body > 0.0f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: %s must be > 0 m for an agent with contacts, got %g", where,
                          d->ground.enabled ? "ground.vehicle.radius" : "vehicle.radius", (double)body);
    return SHOAL_OK;
}

static void contact_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                              int fresh)
{
    (void)slot;
    (void)d;
    (void)forward;
    contact_world_t* cw = contact_data(w);
    if (fresh && r < cw->near_capacity) /* no candidates until its first contacts_prepare */
        for (int m = 0; m < CONTACT_K; ++m) cw->near[(size_t)r * CONTACT_K + m] = -1;
}

static void contact_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    (void)w;
    (void)r;
    d->contacts = 1;
}

/* Membership only: `contacts` is in no column (read_row says 1). */
static const column_def_t contact_columns[CT_COUNT_] = {COLUMNS_SLOT_ROW};

const module_t contact_module = {
    .name = "contact",
    .column_count = CT_COUNT_,
    .columns = contact_columns,
    .init = contact_init,
    .release = contact_release,
    .needs = contact_needs,
    .validate = contact_validate,
    .reserve_add_in_step = contact_reserve_add,
    .reserve_step = contact_reserve_step,
    .row_removed = contact_row_removed,
    .write_row = contact_write_row,
    .read_row = contact_read_row,
    .snapshot_since = 4,
    .grid = &contact_grid,
};
