/* Crowd agents (shoal/crowd.h): reciprocal collision avoidance in the
 * decide stage, then a kinematic move in the integrate stage (docs/crowds.md,
 * "The walking model"). The math of ORCA is orca.c; this
 * file finds each agent's constraints and applies the result.
 *
 * orca (decide, after every steering system): for each crowd agent, the
 * preferred velocity is what the behaviors summed (the desired velocity),
 * capped at crowd.preferred_speed when that is set, plus a jitter of at
 * most CROWD_JITTER per axis drawn by counter (no shared state) that
 * breaks the stalls of symmetric scenes. Its neighbors are the
 * max_neighbors nearest agents within neighbor_distance, found in the
 * spatial hash (the block of cells around the agent's cell that covers
 * neighbor_distance; on a hashed grid a bucket shared by two cells of the
 * block is read once), ties in distance broken by cell and global id
 * (grid_before), so the choice is one function of the world, whatever the
 * size of the hash's table (in an unbounded world of crowd
 * agents alone, most steps take them from the list each agent keeps of
 * those near it: the same ones, "Neighbor lists" below). Each gives a
 * half-plane (half-space
 * in 3D) for bodies of CROWD_PLAN_RADIUS times the sum of radii; a neighbor that is a crowd agent takes the agent's share
 * `responsibility` of the avoidance, any other agent (which will not move
 * aside for it) the whole of it. The world's obstacles closer than
 * time_horizon_walls * max_speed + their radius and the agent's are hard
 * constraints, first in the list: each is an agent at the obstacle's
 * velocity that takes no share. The velocity the linear program picks
 * (within |v| <= vehicle.max_speed) becomes the desired velocity. A
 * keep-right agent (side_preference > 0, 2D) that moves against the way it
 * wants to go takes no share in avoiding crowd neighbors that want the
 * opposite way (what each neighbor's behaviors asked for, copied before
 * any agent's orca result overwrites it): a walker caught in the other
 * direction's lane presses out of it instead of riding along.
 *
 * crowd_move (integrate): a crowd agent moves at its desired velocity:
 * v := desired, p += v dt; its heading (2D: lane_atan2, a lane of agents at
 * a time) or yaw and pitch (3D, no roll) turn to the velocity when it moves
 * faster than CROWD_STILL_SPEED, angular velocity, force and torque are 0.
 * control and integrate leave crowd agents out (step.c).
 *
 * Every agent's result is its own arithmetic over data no system writes in
 * the stage, so any split over threads gives the same bits. */

/* The orca pass at two widths where the build's lanes are 16 (AVX-512),
 * unless SHOAL_CROWD_LANES_16 is defined: this file at 8 lanes, and its
 * kernels (from crowd_view_t to orca_range) a second time at 16 as
 * orca_range_wide (crowd_wide.c, CROWD_WIDE defined). Every width gives the
 * same bits, so each pass takes either (orca_run): 16 lanes in 3D and for
 * lists longer than 12 on average (between one 8-lane register and one
 * 16-lane; the circle's average 8 to 8.0001, the grid's about 37), else 8.
 * The kernels gather a neighbor's data a lane at a time, and on AMD's Zen 5
 * a 16-lane gather takes about 1.6 times an 8-lane one; the circle's lists
 * hold 8, half a 16-lane register. Measured on Zen 5 at 30766da (the orca system, 100k
 * agents, one thread, 3 to 5 alternating runs, docs/dev/crowd-performance.md):
 * 8 lanes 16 % faster than 16 on the circle, 16 lanes 4 to 5 % faster on
 * the grid, the 3D grid and the sphere. Nothing of the kernels' lanes
 * crosses between the two files (orca_ctx_t holds none; orca.c's functions
 * take arrays). */
#if !defined(CROWD_WIDE) && !defined(SHOAL_SIMD_WIDTH) && !defined(SHOAL_DISABLE_SIMD) &&                    \
    defined(__AVX512F__) && !defined(SHOAL_CROWD_LANES_16)
#define SHOAL_SIMD_WIDTH 8
#define CROWD_HAS_WIDE 1
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "ecs/rng.h"
#include "simd/lane_math.h"
#include "simd/lanes.h"
#include "simd/vec.h"
#include "modules/contacts/contacts.h"
#include "modules/crowd/crowd.h"
#include "modules/grid/grid_nearest.h"
#include "modules/obstacles/obstacles.h"
#include "modules/crowd/orca.h"
#include "modules/crowd/orca_lanes.h"
#include "modules/grid/grid.h"
#include "modules/agent.h"
#include "modules/walls/walls.h"

/* Below this speed (m/s) a crowd agent keeps its heading. */
#define CROWD_STILL_SPEED 1e-3f
/* Symmetry breaking: the preferred velocity moves by up to this much (m/s
 * per axis) in a direction drawn from (world seed, agent, step). Perfectly
 * symmetric scenes (a circle of agents bound for their antipodes) otherwise
 * stall: mirror-image constraints keep every agent's optimum on its line. */
#define CROWD_JITTER 1e-4f
#define CROWD_STREAM 0xc40dd17u
/* Obstacles taken as constraints per agent, the nearest first. */
#define CROWD_MAX_OBSTACLES 32
/* ORCA plans against neighbors with this fraction of the sum of radii. The
 * contact pass holds bodies at the full sum, so touching neighbors keep a
 * small gap in planning and may slide past each other; with the full sum
 * every touching pair counts as overlapping and each must move apart at
 * once, which locks dense jams (docs/crowds.md "Jams"). */
#define CROWD_PLAN_RADIUS 0.95f
/* A neighbor walks head-on against an agent when the cosine between what
 * the two want (their velocities before orca) is below minus this: within
 * about 26 degrees of opposite. */
#define CROWD_HEAD_ON 0.9f
/* The time gap's leader (crowd.time_gap): wants to go within 60 degrees
 * of the agent's way (the cosine above this: walkers converging on a door
 * from either side lead each other, as in a bottleneck's zipper), and
 * walks it faster than CROWD_GAP_LEADER of the agent's preferred speed (0.1
 * m/s for a pedestrian); the cap never goes below CROWD_GAP_FLOOR of it
 * (0.067 m/s); the free walk is the distance less CROWD_GAP_BODY of the
 * sum of radii. */
#define CROWD_GAP_SAME_WAY 0.5f
#define CROWD_GAP_LEADER 0.075f
#define CROWD_GAP_FLOOR 0.05f
#define CROWD_GAP_BODY 0.85f
/* A walker held up by its leader looks for a freer way: the preferred
 * direction turned by each of these angles to either side (cos, sin). */
#define CROWD_TURNS 4
static const float crowd_turn_cos[CROWD_TURNS] = {0.98480775f, 0.93969262f, 0.86602540f, 0.70710678f};
#define CROWD_TURN_GAIN 0.1f
static const float crowd_turn_sin[CROWD_TURNS] = {0.17364818f, 0.34202014f, 0.5f, 0.70710678f};

_Static_assert(CROWD_MAX_NEIGHBORS <= NEAREST_MAX, "a crowd agent's neighbors fit a nearest list");
_Static_assert(CROWD_REC == 8, "a sorted record is eight floats (lane_store_rows8)");

#ifndef CROWD_WIDE /* the rest but the kernels: once, in this file's own build */

shoal_crowd_t shoal_crowd_default(void)
{
    shoal_crowd_t c;
    memset(&c, 0, sizeof c);
    c.neighbor_distance = 5.0f;
    c.max_neighbors = 10;
    c.time_horizon = 2.0f;
    c.time_horizon_walls = 1.0f;
    c.responsibility = 0.5f;
    c.preferred_speed = 0.0f;
    c.time_gap = 0.0f;
    c.side_preference = 0.0f;
    return c;
}

typedef struct crowd_preset {
    const char* name;
    shoal_crowd_t crowd;
    float radius, max_speed;
} crowd_preset_t;

static const crowd_preset_t presets[] = {
    {"pedestrian", {1, 3.0f, 10, 2.0f, 0.3f, 0.5f, 1.34f, 1.1f, 1.0f}, 0.21f, 2.0f},
    {"rvo2", {1, 15.0f, 10, 10.0f, 10.0f, 0.5f, 1.0f, 0.0f, 0.0f}, 1.5f, 2.0f},
};

shoal_status_t shoal_crowd_preset(const char* name, shoal_crowd_t* crowd, shoal_vehicle_t* vehicle,
                                  shoal_error_t* err)
{
    if (err) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    if (!crowd || !vehicle) {
        if (err) {
            err->status = SHOAL_ERR_INVALID_ARGUMENT;
            snprintf(err->message, sizeof err->message, "crowd_preset: %s is NULL",
                     crowd ? "vehicle" : "crowd");
        }
        return SHOAL_ERR_INVALID_ARGUMENT;
    }
    const int n = (int)(sizeof presets / sizeof presets[0]);
    for (int i = 0; name && i < n; ++i)
        if (strcmp(presets[i].name, name) == 0) {
            *crowd = presets[i].crowd;
            vehicle->radius = presets[i].radius;
            vehicle->max_speed = presets[i].max_speed;
            return SHOAL_OK;
        }
    if (err) {
        err->status = SHOAL_ERR_NOT_FOUND;
        snprintf(err->message, sizeof err->message, "crowd_preset: no preset named '%s' (presets: %s, %s)",
                 name ? name : "(null)", presets[0].name, presets[1].name);
    }
    return SHOAL_ERR_NOT_FOUND;
}

#endif /* CROWD_WIDE */

/* ---- the orca pass's kernels (also compiled as crowd_wide.c) ------------- */

#if defined(CROWD_WIDE) || defined(CROWD_HAS_WIDE)
void orca_range_wide(int32_t begin, int32_t end, int32_t worker, void* vctx); /* crowd_wide.c */
#endif

/* The crowd component's columns. */
typedef struct crowd_view {
    const int32_t* agent_row;
    const float *dist, *tau, *tau_walls, *resp, *pref_speed, *time_gap, *side;
    const int32_t* max_nb;
} crowd_view_t;

static crowd_view_t crowd_view_of(const world_t* w)
{
    const int k = COMP_CROWD;
    return (crowd_view_t){.agent_row = COMP_I(w, k, COMP_ROW),
                          .dist = COMP_F(w, k, CR_NEIGHBOR_DISTANCE),
                          .tau = COMP_F(w, k, CR_TAU),
                          .tau_walls = COMP_F(w, k, CR_TAU_WALLS),
                          .resp = COMP_F(w, k, CR_RESPONSIBILITY),
                          .pref_speed = COMP_F(w, k, CR_PREFERRED_SPEED),
                          .time_gap = COMP_F(w, k, CR_TIME_GAP),
                          .side = COMP_F(w, k, CR_SIDE_PREFERENCE),
                          .max_nb = COMP_I(w, k, CR_MAX_NEIGHBORS)};
}

#define CROWD_COUNTS 4
typedef struct orca_ctx {
    world_t* w;
    const grid_t* g;
    agent_view_t a;
    crowd_view_t c;
    const component_t* crowd;
    const uint32_t* slots;
    const uint32_t *id_lo, *id_hi; /* the agents' global ids, by agent row */
    const obstacle_set_t* obs;
    const wall_set_t* walls;
    float inv_dt;
    uint64_t seed_round, step;
    int32_t* near;            /* crowd_near_stride per crowd row, for the contact pass */
    const float* intent;      /* 2 per crowd row: what each wanted before orca (2D) */
    const float* bold;        /* per crowd row: boldness (crowd_world_t) */
    int64_t* relaxed;         /* per worker */
    const int32_t* sorted_at; /* each agent row's sorted position (grid_positions) */
    float* hint;              /* per crowd row (crowd_world_t) */
    float dt;
    const int32_t* scrow; /* per sorted position: crowd row (crowd_world_t), or NULL */
    const float* sradius; /* per sorted position: radius */
    float* srec;          /* per sorted position: CROWD_REC floats (crowd_world_t.sorted_rec) */
    float* clear;         /* per crowd row (crowd_world_t) */
    float* wall_clear;    /* per crowd row (crowd_world_t) */
    float* rmax;          /* per worker: the largest radius (sorted_range) */
    /* Neighbor lists (below): the crowd world when this pass uses them
     * (sorted_range then measures how far each agent moved since the last
     * pass, against the positions it kept then when prev_ok, the largest
     * per worker in moved_w), else NULL; whether the lists kept from
     * earlier passes hold (else every row builds its own); moved and
     * moved_last (crowd_world_t). */
    crowd_world_t* lists;
    int list_fresh, prev_ok;
    int crow_in_order; /* crowd row r is agent row r (sorted_range) */
    double moved;
    float moved_last;
    float* moved_w;
    float key_r2;         /* 2D: lists below this list_r2 settle ties by cell keys (list_ties_before) */
    int64_t* list_counts; /* CROWD_COUNTS per worker: lists held, lists built, lists a
                           * packet's first tests passed and their entries */
} orca_ctx_t;

/* The prefetching helpers (sorted_range_prefetch, orca_packet_prefetch).
 * Always inlined: gcc takes a function of prefetches alone for one with no
 * effect and drops the calls to it. `bytes` from p, a 64-byte line at a
 * time, to be read (write 0) or written (write 1, a constant). */
static inline __attribute__((always_inline)) void prefetch_span(const void* p, size_t bytes, int write)
{
    for (size_t j = 0; j < bytes; j += 64) {
        if (write)
            __builtin_prefetch((const char*)p + j, 1);
        else
            __builtin_prefetch((const char*)p + j, 0);
    }
}

/* Whether row `last` of a packet lies in a line of 16 4-byte values that
 * the packet before (SHOAL_LANES rows earlier) did not reach: in a run of
 * packets, every line of a 4-byte column once (every packet at 16 lanes). */
static inline int packet_starts_line(int64_t last)
{
    return SHOAL_LANES >= 16 || ((last ^ (last - SHOAL_LANES)) >> 4) != 0;
}

/* sorted_range's reads and writes SORTED_PREFETCH_AHEAD sorted positions
 * on from k, asked for now: its columns in sorted order, a line of 16
 * positions at a time, and the records (sorted_rec, 32 bytes a position)
 * and the rows' last positions (prev, 16 bytes a row, at about the same
 * rows where the crowd's rows are in cell order) of a lane of positions.
 * On the crowd benchmark's circle at 100k agents (one thread, a Zen 4),
 * perf's samples in sorted_range went from 395 and 419 to 318 and 332
 * with the orca pass's unchanged. */
#define SORTED_PREFETCH_AHEAD 64
static inline __attribute__((always_inline)) void sorted_range_prefetch(const orca_ctx_t* x, int32_t k,
                                                                        int32_t end)
{
    const grid_t* g = x->g;
    const int32_t at = k + SORTED_PREFETCH_AHEAD;
    if (at + SHOAL_LANES > end) return;
    if (x->srec) prefetch_span(x->srec + (size_t)at * CROWD_REC, SHOAL_LANES * CROWD_REC * sizeof(float), 1);
    if (x->lists && x->crow_in_order)
        prefetch_span(x->lists->prev + (size_t)at * 4, SHOAL_LANES * 4 * sizeof(float), 1);
    const int32_t last = at + SHOAL_LANES - 1;
    if (!packet_starts_line(last)) return;
    __builtin_prefetch(g->order + last);
    __builtin_prefetch(g->sx + last);
    __builtin_prefetch(g->sy + last);
    __builtin_prefetch(g->svx + last);
    __builtin_prefetch(g->svy + last);
    if (g->dims == 3) {
        __builtin_prefetch(g->sz + last);
        __builtin_prefetch(g->svz + last);
    }
    __builtin_prefetch(x->a.radius + last);
    __builtin_prefetch(x->scrow + last, 1);
    __builtin_prefetch(x->sradius + last, 1);
}

/* The keys (lane_grid_cell_key) of the cells of sorted positions
 * [k, k + SHOAL_LANES) of a 2D grid, 0 on a direct grid (whose sorted
 * order settles ties alone): list_ties_before's. */
static inline lanei sorted_cell_key(const grid_t* g, int32_t k)
{
    if (g->direct) return lanei_set1(0);
    return lane_grid_cell_key(lanei_loadu(g->scell[0] + k), lanei_loadu(g->scell[1] + k));
}

/* Each sorted position's crowd row, radius and record (crowd_world_t):
 * prev, in 2D, with the cell key (sorted_cell_key) where 3D holds z. */
static void sorted_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const orca_ctx_t* x = (const orca_ctx_t*)vctx;
    int32_t* crow = (int32_t*)x->scrow;
    float* rad = (float*)x->sradius;
    float most = x->rmax[worker];
    const grid_t* g = x->g;
    const int three = g->dims == 3;
    float moved = x->lists ? x->moved_w[worker] : 0.0f;
    int32_t k = begin;
    {
        /* a lane of sorted positions at a time: the same rows, radii and
         * moves (maxima, in any order the same) */
        const lanei cap = lanei_set1(x->crowd->sparse_capacity);
        const float* z = three ? g->sz : NULL;
        lanef most_l = lane_set1(most), moved_l = lane_set1(moved);
        for (; k + SHOAL_LANES <= end; k += SHOAL_LANES) {
            sorted_range_prefetch(x, k, end);
            const lanei j = lanei_loadu(g->order + k);
            lanei cr = j; /* the crowd's rows in agent-row order */
            if (!x->crow_in_order) {
                const lanei slot = lanei_gather((const int32_t*)x->slots, j);
                /* component_row: slots past the sparse index hold no row (as
                 * unsigned: a slot's top bit set is past it too) */
                const lanem known =
                    lane_mask_andnot(lanei_cmp_gt(cap, slot), lanei_cmp_gt(lanei_set1(0), slot));
                cr = lanei_gather_or(x->crowd->sparse, slot, known, lanei_set1(-1));
            }
            const lanef rr = lane_gather(x->a.radius, j);
            lanei_storeu(crow + k, cr);
            lane_storeu(rad + k, rr);
            most_l = lane_select(lane_cmp_gt(rr, most_l), rr, most_l);
            const lanef sx = lane_loadu(g->sx + k), sy = lane_loadu(g->sy + k);
            const lanef sz = z ? lane_loadu(z + k) : lane_zero();
            if (x->srec) {
                const lanef cols[CROWD_REC] = {sx,
                                               sy,
                                               lane_loadu(g->svx + k),
                                               lane_loadu(g->svy + k),
                                               rr,
                                               lanei_bits_f(cr),
                                               sz,
                                               z ? lane_loadu(g->svz + k) : lane_zero()};
                lane_store_rows8(x->srec + (size_t)k * CROWD_REC, cols);
            }
            if (!x->lists) continue;
            const lanem has = lanei_nonneg(cr);
            const lanei at = lanei_slli(lanei_select(has, cr, lanei_set1(0)), 2);
            float* prev = x->lists->prev;
            if (x->prev_ok) {
                const lanef dx = lane_sub(sx, lane_gather_or(prev, at, has, sx)),
                            dy = lane_sub(sy, lane_gather_or(prev, lanei_add(at, lanei_set1(1)), has, sy)),
                            dz = z ? lane_sub(sz, lane_gather_or(prev, lanei_add(at, lanei_set1(2)), has, sz))
                                   : lane_zero();
                const lanef d =
                    lane_sqrt(lane_add(lane_add(lane_mul(dx, dx), lane_mul(dy, dy)), lane_mul(dz, dz)));
                const lanef far = lane_select(lane_cmp_eq(d, d), d, lane_set1(INFINITY));
                moved_l =
                    lane_select(lane_mask_and(has, lane_mask_not(lane_cmp_le(d, moved_l))), far, moved_l);
            }
            _Alignas(64) int32_t a4[SHOAL_LANES];
            _Alignas(64) float q[3][SHOAL_LANES];
            lanei_store(a4, at);
            lane_store(q[0], sx);
            lane_store(q[1], sy);
            lane_store(q[2], z ? sz : lanei_bits_f(sorted_cell_key(g, k)));
            const uint32_t bits = lane_mask_bits(has);
            for (int l = 0; l < SHOAL_LANES; ++l) {
                if (!(bits >> l & 1u)) continue;
                const int32_t kl = k + l;
                prev[a4[l]] = q[0][l];
                prev[a4[l] + 1] = q[1][l];
                prev[a4[l] + 2] = q[2][l];
                memcpy(prev + a4[l] + 3, &kl, sizeof kl);
            }
        }
        _Alignas(64) float t[2][SHOAL_LANES];
        lane_store(t[0], most_l);
        lane_store(t[1], moved_l);
        for (int l = 0; l < SHOAL_LANES; ++l) {
            most = t[0][l] > most ? t[0][l] : most;
            moved = t[1][l] > moved ? t[1][l] : moved;
        }
    }
    for (; k < end; ++k) {
        int32_t j = g->order[k];
        crow[k] = x->crow_in_order ? j : component_row(x->crowd, x->slots[j]);
        rad[k] = x->a.radius[j];
        most = rad[k] > most ? rad[k] : most;
        if (x->srec) {
            float* e = x->srec + (size_t)k * CROWD_REC;
            e[CROWD_REC_X] = g->sx[k];
            e[CROWD_REC_Y] = g->sy[k];
            e[CROWD_REC_VX] = g->svx[k];
            e[CROWD_REC_VY] = g->svy[k];
            e[CROWD_REC_R] = rad[k];
            memcpy(e + CROWD_REC_CROW, crow + k, sizeof(int32_t));
            e[CROWD_REC_Z] = three ? g->sz[k] : 0.0f;
            e[CROWD_REC_VZ] = three ? g->svz[k] : 0.0f;
        }
        if (x->lists && crow[k] >= 0) {
            /* how far it moved since the last pass (a NaN counts as
             * infinitely far), then where it is now */
            float* q = x->lists->prev + 4 * (size_t)crow[k];
            float z = three ? g->sz[k] : 0.0f;
            if (x->prev_ok) {
                float dx = g->sx[k] - q[0], dy = g->sy[k] - q[1], dz = three ? z - q[2] : 0.0f;
                float d = sqrtf(dx * dx + dy * dy + dz * dz);
                if (!(d <= moved)) moved = d == d ? d : INFINITY;
            }
            if (!three) {
                const int32_t key = g->direct ? 0 : grid_cell_key(g->scell[0][k], g->scell[1][k]);
                memcpy(&z, &key, sizeof z);
            }
            q[0] = g->sx[k];
            q[1] = g->sy[k];
            q[2] = z;
            memcpy(q + 3, &k, sizeof k);
        }
    }
    x->rmax[worker] = most;
    if (x->lists) x->moved_w[worker] = moved;
}

/* What each crowd agent's behaviors asked for, before orca overwrites it:
 * its neighbors read it to tell who walks the other way. */
static void intent_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const orca_ctx_t* x = (const orca_ctx_t*)vctx;
    float* intent = (float*)x->intent;
    float* bold = (float*)x->bold;
    for (int32_t r = begin; r < end; ++r) {
        int32_t i = x->c.agent_row[r];
        intent[2 * (size_t)r] = x->a.dx[i];
        intent[2 * (size_t)r + 1] = x->a.dy[i];
        uint64_t h = ((uint64_t)x->id_lo[i] | (uint64_t)x->id_hi[i] << 32) * 0x9E3779B97F4A7C15ull;
        h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
        bold[r] = (float)(h >> 40) * (1.0f / 16777216.0f);
    }
}

/* ---- Neighbor lists ---------------------------------------------------------
 *
 * A crowd row keeps the agents that were near it, so that most steps it
 * ranks those few again instead of scanning the cells around it. When a
 * list was built, every agent closer than sqrt(list_r2) was on it. Since
 * then no agent moved more than drift = moved - list_base (each orca pass
 * adds the largest distance any agent moved since the last one, measured
 * on the spatial hash's copies of the positions, whatever moved them) and
 * this one moved `own` from where it was then, so an agent not on the
 * list is at least sqrt(list_r2) - drift - own away now (own is at most
 * drift: a standing agent keeps its list twice as long as one that walks
 * at the fastest's speed).
 * When the list's cap-th nearest is closer than that, or, with fewer than
 * cap in range, when that is the whole range, the list's nearest are the
 * world's: the list find_neighbors gives, ties and all. Otherwise the row
 * scans the cells within its hint's distance and a skin (room for a few
 * passes of motion) and keeps what it finds. Only in unbounded worlds of
 * crowd agents alone; any change of rows drops every list (orca_run)
 * but the sense stage's reorder, which moves them with their agents
 * (crowd_agents_permuted): on the crowd benchmark's circle at 20k agents,
 * 615.0 to 602.4 instructions an agent-step (steps 11 to 60, one reorder),
 * its sphere 1,527.7 to 1,507.4; its grid's dense lists, longer than the
 * move keeps, are built again as before (1,270.8 to 1,273.8).
 * Margins of a few parts in 10^5 cover rounding. */
#define CROWD_LIST_EPS 2e-5f
#define CROWD_LIST_ABS 1e-5f
#define CROWD_LIST_MOVED_MAX 1e4
/* The lists' allocation for n rows: a lane past the last row's, so that a
 * row's list is read a whole lane at a time (the lanes past it masked). */
static inline size_t crowd_list_bytes(size_t n)
{
    return n ? (n * CROWD_LIST_MAX + SHOAL_MAX_LANES) * sizeof(int32_t) : 0;
}
/* The skin a list is built with: a multiple of the last pass's largest
 * move (each pass eats twice that), CROWD_LIST_SKIN (CROWD_LIST_SKIN_3D in
 * 3D) where the row had cap neighbors within its hint (a thick skin
 * lengthens the list it ranks every pass, by the skin's area in 2D and its
 * volume in 3D), CROWD_LIST_SKIN_SPARSE where it had fewer (its list holds
 * those in range and the skin's worth more, few: a thick skin saves
 * builds); between CROWD_LIST_SKIN_MIN and CROWD_LIST_SKIN_MAX
 * (CROWD_LIST_SKIN_MAX_SPARSE where sparse) of the neighbor distance.
 * Measured (callgrind) on the crowd benchmark's grid and circle in 2D, its
 * grid in 3D and on default.json; the sparse skin doubled to 32 moves
 * (capped at 0.6 of the distance, not 0.3) builds the circle's lists every
 * 17 passes instead of 9, each holding 8 agents instead of 6: 883 to 787
 * instructions an agent-step, the others unchanged. The dense skin, 6
 * moves until the checks of held lists got cheaper, is 16: the grid's 1,729
 * to 1,677 (8: 1,702, 12: 1,674, 20: 1,678). */
#define CROWD_LIST_SKIN 16.0f
#define CROWD_LIST_SKIN_3D 2.0f
#define CROWD_LIST_SKIN_SPARSE 32.0f
#define CROWD_LIST_SKIN_MIN 0.05f
#define CROWD_LIST_SKIN_MAX 0.3f
#define CROWD_LIST_SKIN_MAX_SPARSE 0.6f
/* A dense 3D row whose list would hold fewer than CROWD_LIST_SHORT_3D
 * agents within its hint's distance and CROWD_LIST_SKIN_SHORT_3D of the
 * neighbor distance (counted at its last list's density, or, with none,
 * as cap within the hint's distance over 1.1) is built that wide: its list
 * lives longer for a few more entries. Where the list would be longer, the
 * wider box scans more and a cut at CROWD_LIST_MAX ends the list short of
 * the skin anyway. Measured on the crowd benchmark in 3D (callgrind, 20k
 * agents, steps 11 to 60): the sphere 1,507.4 to 1,346.0 instructions an
 * agent-step (lists built at about 16 % of agent-steps, 10 % after, of 21
 * entries, 27 after), the grid 2,615.9 to 2,622.5; the same wide skin for
 * every dense 3D row took the sphere to 1,345 and the grid to 3,411 (most
 * of its builds cut, or failed at ties in the lattice). Expected counts
 * of 34 and 38 gave the same figures, 30 and 44 worse. */
#define CROWD_LIST_SKIN_SHORT_3D 0.2f
#define CROWD_LIST_SHORT_3D 36.0f

/* How many of a list's first f distances e2 and sorted positions k2 are
 * in (d^2, grid_before) order (nearest_before), strictly: f when all are.
 * Both arrays hold valid sorted positions up to the lane past n. */
static inline int32_t crowd_list_ordered(const grid_t* g, float* e2, int32_t* k2, int32_t n, int32_t f)
{
    const int32_t end = (n + SHOAL_LANES - 1) / SHOAL_LANES * SHOAL_LANES;
    lane_storeu(e2 + end, lane_zero());
    lanei_storeu(k2 + end, lanei_set1(0));
    for (int32_t m = 0; m < f; m += SHOAL_LANES) {
        const lanei ka = lanei_loadu(k2 + m);
        const lanef ea = lane_loadu(e2 + m), eb = lane_loadu(e2 + m + 1);
        const lanem first = lane_mask_first(f - 1 - m), tie = lane_mask_and(first, lane_cmp_eq(ea, eb));
        lanem ok = lane_cmp_lt(ea, eb);
        if (lane_mask_any(tie))
            ok = lane_mask_or(ok, lane_mask_and(tie, lane_grid_before(g, ka, lanei_loadu(k2 + m + 1))));
        const uint32_t bad = lane_mask_bits(lane_mask_andnot(first, ok));
        if (bad) return m + __builtin_ctz(bad) + 1;
    }
    return f;
}

/* Entry (e, k, agent row j) put at position `at` of a list whose entries
 * before it are in (d^2, grid_before) order, then moved down past those it
 * comes before, which move up one. */
static inline void list_sift(const grid_t* g, float* e2, int32_t* k2, int32_t* j2, int32_t at, float e,
                             int32_t k, int32_t j)
{
    for (; at > 0 && nearest_before(g, e, k, e2[at - 1], k2[at - 1]); --at) {
        e2[at] = e2[at - 1];
        k2[at] = k2[at - 1];
        j2[at] = j2[at - 1];
    }
    e2[at] = e;
    k2[at] = k;
    j2[at] = j;
}

/* Whether a list's nearest are the world's (see above): c of them in
 * range (at most cap), the cap-th at d^2 d2_cap when c == cap, every agent
 * off the list at least `bound` away. */
static inline int crowd_list_holds(int32_t c, int32_t cap, float d2_cap, float range, float bound)
{
    return c >= cap ? sqrtf(d2_cap) < bound : range <= bound;
}

/* Crowd row r's list built from the runs c: every agent within d^2 R2 of p
 * (the agent at sorted position self left out), or the CROWD_LIST_MAX - 8
 * to CROWD_LIST_MAX nearest of them; nb from it. 1 when the list holds now
 * (crowd_listed), else 0 with nothing kept. */
static int crowd_list_build(const orca_ctx_t* x, int32_t r, const float p[3], int32_t self, float R2,
                            float range, const nearest_runs_t* c, nearest_t* nb)
{
    crowd_world_t* cw = x->lists;
    const grid_t* g = x->g;
    const int32_t cap = nb->cap;
    _Alignas(64) float sd[NEAREST_SCAN + SHOAL_MAX_LANES];
    int32_t sk[NEAREST_SCAN];
    int32_t m = 0;
    if (!nearest_scan(g, p, c, R2, self, R2, sd, sk, &m)) return 0;
    /* every candidate with d^2 below `listed` stays */
    float listed = R2;
    m = nearest_cut(sd, sk, m, CROWD_LIST_MAX - 8, CROWD_LIST_MAX, &listed, m);
    if (m > CROWD_LIST_MAX) return 0; /* ties at the bound */
    /* the nearest cap of them, in order (from a copy: picking reorders) */
    _Alignas(64) float td[CROWD_LIST_MAX + SHOAL_MAX_LANES];
    int32_t tk[CROWD_LIST_MAX + SHOAL_MAX_LANES];
    memcpy(td, sd, (size_t)m * sizeof *td);
    memcpy(tk, sk, (size_t)m * sizeof *tk);
    nearest_t got;
    got.count = 0;
    got.cap = cap;
    nearest_pick(g, td, tk, m, listed, m, &got);
    const float r2 = range * range;
    int32_t in = 0;
    while (in < got.count && got.d2[in] < r2) in++;
    const float bound = sqrtf(listed) * (1.0f - CROWD_LIST_EPS) - CROWD_LIST_ABS;
    if (!crowd_list_holds(in, cap, in >= cap ? got.d2[cap - 1] : 0.0f, range, bound)) return 0;
    /* the list: those nearest first, in order, then the others as scanned
     * (keys past the last of them) */
    int32_t* rows = cw->list + (size_t)r * CROWD_LIST_MAX;
    int32_t n = 0;
    for (int32_t m2 = 0; m2 < got.count; ++m2) rows[n++] = g->order[got.k[m2]];
    if (got.count > 0) {
        /* a lane of candidates at a time, those after the last kept into
         * a copy (a compressed lane is stored whole) */
        const float last_d2 = got.d2[got.count - 1];
        const int32_t last_k = got.k[got.count - 1];
        const lanef last = lane_set1(last_d2);
        const lanei lastk = lanei_set1(last_k);
        int32_t rest[CROWD_LIST_MAX + SHOAL_MAX_LANES];
        int32_t q = 0;
        for (int32_t i = 0; i < m; i += SHOAL_LANES) {
            const lanem real = lane_mask_first(m - i);
            const lanef d = lane_loadu(sd + i);
            const lanei k = lanei_select(real, lanei_loadu(sk + i), lastk);
            lanem after = lane_mask_and(real, lane_cmp_gt(d, last));
            const lanem tie = lane_mask_and(real, lane_cmp_eq(d, last));
            if (lane_mask_any(tie))
                after = lane_mask_or(after, lane_mask_and(tie, lane_grid_before(g, lastk, k)));
            const uint32_t bits = lane_mask_bits(after);
            if (bits)
                q += lanei_compress_store(rest + q, lanei_gather_or(g->order, k, after, lanei_set1(0)), bits);
        }
        memcpy(rows + n, rest, (size_t)q * sizeof *rows);
        n += q;
    }
    cw->list_n[r] = n;
    cw->list_r2[r] = listed;
    cw->list_base[r] = x->moved;
    cw->list_ax[r] = p[0];
    cw->list_ay[r] = p[1];
    cw->list_az[r] = p[2];
    const int32_t kept = in < cap ? in : cap;
    for (int32_t m2 = 0; m2 < kept; ++m2) {
        nb->d2[m2] = got.d2[m2];
        nb->k[m2] = got.k[m2];
    }
    nb->count = kept;
    return 1;
}

/* The bound of crowd row r's list (see above) for its agent at p, as
 * crowd_listed computes it: no other agent moved more than drift since the
 * list was built, and this one moved `own`. */
static inline float crowd_list_bound(const orca_ctx_t* x, int32_t r, const float p[3])
{
    const crowd_world_t* cw = x->lists;
    const float drift = (float)(x->moved - cw->list_base[r]);
    const float ox = p[0] - cw->list_ax[r], oy = p[1] - cw->list_ay[r], oz = p[2] - cw->list_az[r];
    const float own = sqrtf(ox * ox + oy * oy + oz * oz);
    return sqrtf(cw->list_r2[r]) * (1.0f - CROWD_LIST_EPS) - (drift + own) * (1.0f + CROWD_LIST_EPS) -
           CROWD_LIST_ABS;
}

/* How list_lane_d2 reads a list's entries: by sorted position (the
 * crowd's rows not in agent-row order), or where crowd row r is agent row r
 * by row from sorted_range's copy, gathered a float at a time or loaded a
 * row at a time. On a Zen 5 (where a gather of 8 takes about as long as 16
 * loads) the loads took the grid's orca pass from 126 to 114 ns an agent
 * at 100k, one thread, for 13 % more instructions: they read the lists that
 * fit one lane (most of the circle's), the gathers the longer ones, so that
 * the grid's count stays where it was. In 3D, where gathers are slow (the
 * cores that read records, crowd_records_pay), longer lists are loaded too:
 * on a Zen 4 the 3D sphere at 100k on one thread ran 1.095 times as fast
 * (median of 6 rounds from fresh copies), the 3D grid 1.070, for 1,378.0
 * -> 1,442.6 instructions an agent-step on the sphere (RVO2-3D: 14,253).
 * The 2D grid gained 1.090 the same way but its count went from 1,321.4 to
 * 1,473.5, past a fifth of RVO2's 7,195: 2D keeps its gathers. */
enum { LIST_BY_SORTED, LIST_BY_ROW_GATHERS, LIST_BY_ROW_LOADS };

/* A lane of a held list's entries, those of rows in the lanes of `in` (the
 * lanes past them the agent itself, at sorted position self: d^2 0):
 * their sorted positions to *k (-1 where one is not in the hash, its d^2
 * then of no use; k may be NULL by row, where every agent is in the
 * hash: lists are kept only while all are), their positions to q (in 2D
 * z 0, or their cell keys by loads: sorted_cell_key), their d^2 from
 * (px, py, pz) as find_neighbors computes it; read as
 * `how` says (above). */
static inline lanef list_lane_d2(const orca_ctx_t* x, const int32_t* rows, lanem in, int how, int32_t self,
                                 lanef px, lanef py, lanef pz, int three, lanei* k, lanef q[3])
{
    const grid_t* g = x->g;
    if (how == LIST_BY_ROW_LOADS) {
        /* each one's position from sorted_range's copy (prev, the same
         * values) and its sorted position beside it, a row's four in one
         * load (lane_rows4); the lanes past the list read a row in range
         * (their entries are stale or never written) and take the agent
         * itself. (A select of the rows would do, but gcc makes it a masked
         * load, with which the orca pass took 1.6 times as long on a Zen
         * 5.) */
        /* twice the rows: a table of 160-byte lists ends far below 2^30 rows */
        _Alignas(64) uint32_t half[SHOAL_LANES];
        const lanei at =
            lanei_min(lanei_max(lanei_loadu(rows), lanei_set1(0)), lanei_set1(x->lists->capacity - 1));
        lanei_store((int32_t*)half, lanei_add(at, at));
        lanef v[4];
        lane_rows4(x->lists->prev, half, v); /* x, y, z, sorted position a row */
        if (k) *k = lanei_select(in, lane_bits_i(v[3]), lanei_set1(self));
        q[0] = lane_select(in, v[0], px);
        q[1] = lane_select(in, v[1], py);
        q[2] = three ? lane_select(in, v[2], pz) : v[2]; /* 2D: the cell keys */
    } else if (how == LIST_BY_ROW_GATHERS) {
        /* the same values a float at a time, the sorted position from
         * the hash's index (the same) */
        const lanei r = lanei_loadu(rows);
        const lanei r4 = lanei_slli(r, 2);
        const float* at = x->lists->prev;
        if (k) *k = lanei_gather_or(x->sorted_at, r, in, lanei_set1(self));
        q[0] = lane_gather_or(at, r4, in, px);
        q[1] = lane_gather_or(at + 1, r4, in, py);
        q[2] = three ? lane_gather_or(at + 2, r4, in, pz) : lane_zero();
    } else {
        *k = lanei_gather_or(x->sorted_at, lanei_loadu(rows), in, lanei_set1(self));
        const lanei at = lanei_max(*k, lanei_set1(0));
        q[0] = lane_gather(g->sx, at);
        q[1] = lane_gather(g->sy, at);
        q[2] = three ? lane_gather(g->sz, at) : lane_zero();
    }
    const lanef dx = lane_sub(q[0], px), dy = lane_sub(q[1], py);
    lanef e = lane_add(lane_mul(dx, dx), lane_mul(dy, dy));
    if (three) {
        const lanef dz = lane_sub(q[2], pz);
        e = lane_add(e, lane_mul(dz, dz));
    }
    return e;
}

/* grid_before of each lane's agent, at sorted position k and position q
 * (list_lane_d2), and the next lane's, as bits. keyed (2D): q[2] holds the
 * cells' keys (sorted_cell_key), every two of the lane's cells less than
 * 2^15 apart along each axis: a key's difference decides. Else the cells
 * computed as the hash computes them (grid_coord), not read, and compared
 * as the floats they are before grid_coord's conversion: its floor,
 * clamped to 1e9 cells either way by a min and a max (which order infinite
 * positions as its compares and selects do; a NaN never gets here: its d^2
 * is NaN). three: the grid's dimensions are 3 (else 2). The keys, read
 * with the positions, took the crowd benchmark's circle (20k agents, one
 * thread, steps 11 to 110, callgrind) from 684.3 to 671.1 instructions an
 * agent-step: in the packets' loop of one-lane lists, a lane's ties cost
 * about a third of the floats' 32 instructions. */
static inline uint32_t list_ties_before(const grid_t* g, lanei k, const lanef q[3], int three, int keyed)
{
    lanem before = lanei_cmp_gt(lanei_next(k), k);
    if (g->direct) return lane_mask_bits(before);
    if (keyed && !three) {
        const lanei key = lane_bits_i(q[2]);
        const lanei d = lanei_sub_wrap(lanei_next(key), key);
        const lanei zero = lanei_set1(0);
        return lane_mask_bits(
            lane_mask_or(lanei_cmp_gt(d, zero), lane_mask_and(lanei_cmp_eq(d, zero), before)));
    }
    const lanef lo = lane_set1(-1.0e9f), hi = lane_set1(1.0e9f);
    for (int axis = 0; axis < (three ? 3 : 2); ++axis) { /* x, y, then z: z decides first */
        const lanef c =
            lane_min(lane_max(lane_floor(lane_mul(q[axis], lane_set1(g->inv_cell[axis]))), lo), hi);
        const lanef cn = lane_next(c);
        before = lane_mask_or(lane_cmp_gt(cn, c), lane_mask_and(lane_cmp_eq(c, cn), before));
    }
    return lane_mask_bits(before);
}

/* A held list whose front, the lanes of `front` of (e, k), is its nearest
 * in order: nb from those of them in range, 1 when the list holds (see
 * crowd_list_holds), else 0. */
static inline int list_front_holds(lanef e, lanei k, lanem front, int32_t cap, float range, float bound,
                                   nearest_t* nb)
{
    const int32_t c =
        __builtin_popcount(lane_mask_bits(lane_mask_and(front, lane_cmp_lt(e, lane_set1(range * range)))));
    lane_storeu(nb->d2, e);
    lanei_storeu(nb->k, k);
    if (!crowd_list_holds(c, cap, c == cap && cap > 0 ? nb->d2[cap - 1] : 0.0f, range, bound)) return 0;
    nb->count = c;
    return 1;
}

/* crowd_list_held of a list of n rows (0 < n <= SHOAL_LANES, n at most
 * nb's cap) in one lane, all of it the front, its d^2 e and sorted
 * positions k at hand (list_lane_d2 of the list's rows): found in order
 * with no ties, or with ties that cells and sorted positions settle, its
 * steps in registers: 1 when it holds (nb filled), 0 when it does not; -1
 * when it is out of order or tied past what the lane settles
 * (crowd_list_held then sorts it). The entries' positions q as
 * list_lane_d2 gave them; three: a 3D grid (else 2D); keyed: ties by cell
 * keys (list_ties_before). */
static inline __attribute__((always_inline)) int list_held_in_lane(const orca_ctx_t* x, int32_t n,
                                                                   float bound, float range, lanef e, lanei k,
                                                                   const lanef* q, int three, int keyed,
                                                                   nearest_t* nb)
{
    if (!lane_mask_all(lane_mask_and(lane_cmp_eq(e, e), lanei_nonneg(k)))) return 0;
    const uint32_t before = lane_mask_bits(lane_mask_first(n - 1));
    const lanef next = lane_next(e);
    const uint32_t lt = lane_mask_bits(lane_cmp_lt(e, next)) & before;
    /* ties (a symmetric start meets them often), by cell from the
     * positions at hand, then by sorted position (grid_before): settled
     * whether there are any or not, with no branch on it. Where about half
     * the rows had one (the crowd benchmark's even circle, whose float
     * positions give equal distances to both sides), the branch went the
     * wrong way often enough to cost the orca pass about a tenth. */
    const uint32_t tie = lane_mask_bits(lane_cmp_eq(e, next)) & before;
    if ((lt | tie) != before) return -1;
    if ((lt | (tie & list_ties_before(x->g, k, q, three, keyed))) == before)
        return list_front_holds(e, k, lane_mask_first(n), nb->cap, range, bound, nb);
    return -1;
}

/* Whether crowd row r's list of n (> 0) rows, every agent off it at least
 * bound (> 0) away, gives nb (cap at most CROWD_LIST_MAX) its nearest:
 * 1 when it holds, nb then filled; else 0. p is the agent's position, the
 * copy in the hash at sorted position self; in_order: crowd row r is agent
 * row r (x->crow_in_order). Its entries may be reordered either way (any
 * order of a list is the list). */
static inline __attribute__((always_inline)) int crowd_list_held(const orca_ctx_t* x, int32_t r,
                                                                 const float p[3], int three, int in_order,
                                                                 int32_t self, int32_t n, float bound,
                                                                 float range, nearest_t* nb)
{
    const crowd_world_t* cw = x->lists;
    const grid_t* g = x->g;
    const int32_t cap = nb->cap;
    const float r2 = range * range;
    int32_t* rows = cw->list + (size_t)r * CROWD_LIST_MAX;
    const int32_t f = n < cap ? n : cap; /* the front: the first f, in order */
    const lanef px = lane_set1(p[0]), py = lane_set1(p[1]), pz = lane_set1(p[2]);
    /* a list in one lane by loads, longer ones by gathers, or in 3D by
     * loads too where gathers are slow (LIST_BY_*) */
    const int how = !in_order ? LIST_BY_SORTED : three && x->srec ? LIST_BY_ROW_LOADS : LIST_BY_ROW_GATHERS;
    if (n <= SHOAL_LANES && n <= cap) {
        const int how1 = in_order ? LIST_BY_ROW_LOADS : LIST_BY_SORTED;
        lanei k;
        lanef q[3];
        const lanef e = list_lane_d2(x, rows, lane_mask_first(n), how1, self, px, py, pz, three, &k, q);
        const int one = list_held_in_lane(x, n, bound, range, e, k, q, three, 0, nb);
        if (one >= 0) return one;
    } else if (n <= 2 * SHOAL_LANES && f <= SHOAL_LANES) {
        /* a list in two lanes whose front fits in the first, found in
         * order with no ties and none of the rest at or below the front's
         * last: the same in registers */
        lanei k, k_more = lanei_set1(0);
        lanef q[3];
        const lanef e = list_lane_d2(x, rows, lane_mask_first(n), how, self, px, py, pz, three, &k, q);
        /* the rest's sorted positions are of no use but to tell one not
         * in the hash, which in_order none is */
        const lanef e_more = list_lane_d2(x, rows + SHOAL_LANES, lane_mask_first(n - SHOAL_LANES), how, self,
                                          px, py, pz, three, in_order ? NULL : &k_more, q);
        if (!lane_mask_all(lane_mask_and(lane_mask_and(lane_cmp_eq(e, e), lanei_nonneg(k)),
                                         lane_mask_and(lane_cmp_eq(e_more, e_more), lanei_nonneg(k_more)))))
            return 0;
        const uint32_t before = lane_mask_bits(lane_mask_first(f - 1));
        if ((lane_mask_bits(lane_cmp_lt(e, lane_next(e))) & before) == before) {
            const lanef last = lane_broadcast_at(e, f - 1);
            const lanem rest = lane_mask_andnot(lane_mask_first(n), lane_mask_first(f)),
                        rest_more = lane_mask_first(n - SHOAL_LANES);
            if (!lane_mask_any(lane_mask_or(lane_mask_and(rest, lane_cmp_le(e, last)),
                                            lane_mask_and(rest_more, lane_cmp_le(e_more, last)))))
                return list_front_holds(e, k, lane_mask_first(f), cap, range, bound, nb);
        }
    }
    /* each one's d^2 (as find_neighbors computes it), a lane at a
     * time over the rows; the entries are reordered in place (any
     * order of the list is the list) */
    float e2[CROWD_LIST_MAX + 2 * SHOAL_MAX_LANES];
    int32_t k2[CROWD_LIST_MAX + 2 * SHOAL_MAX_LANES];
    const lanei none = lanei_set1(0), step = lanei_set1(SHOAL_LANES);
    /* whether a d^2 is NaN or an agent is not sorted (the list is
     * then built again): the d^2 summed (a NaN stays one; no sum of
     * them is a NaN otherwise) and the positions or'ed (a sign bit
     * stays), a lane at a time; the lanes past n hold the agent
     * itself at d^2 0, an agent not sorted (-1) is read at 0 */
    lanef sum = lane_zero();
    lanei any = none;
    lanei left = lanei_sub(lanei_set1(n), lanei_iota()); /* > 0 where a lane holds one */
    for (int32_t m = 0; m < n; m += SHOAL_LANES) {
        lanei k;
        lanef q[3];
        const lanef e =
            list_lane_d2(x, rows + m, lanei_cmp_gt(left, none), how, self, px, py, pz, three, &k, q);
        left = lanei_sub(left, step);
        sum = lane_add(sum, e);
        any = lanei_or(any, k);
        lanei_storeu(k2 + m, k);
        lane_storeu(e2 + m, e);
    }
    const int bad = !lane_mask_all(lane_mask_and(lane_cmp_eq(sum, sum), lanei_nonneg(any)));
    /* the first cap in order (the rest of the list, in any order,
     * only has to come after them) */
    const int32_t ordered = bad ? -1 : crowd_list_ordered(g, e2, k2, n, f);
    if (ordered >= 0) {
        /* the front into (d^2, grid_before) order from its first out
         * of order (last pass's order mostly holds, so few move) */
        for (int32_t m = ordered; m < f; ++m) list_sift(g, e2, k2, rows, m, e2[m], k2[m], rows[m]);
        /* one of the rest before the front's last takes its place
         * in the front, the last going to the one's place: the
         * front ends as the f first of the list. Only where one of
         * the rest is at most the last's d^2 (their least, a lane
         * at a time); then a lane at a time against the last as it
         * was at the lane's start (it only comes earlier), each
         * found checked against it as it is. Past n a lane of
         * +inf, never before it. */
        if (f < n) {
            lane_storeu(e2 + n, lane_set1(INFINITY));
            lanef least = lane_loadu(e2 + f);
            for (int32_t m0 = f + SHOAL_LANES; m0 < n; m0 += SHOAL_LANES)
                least = lane_min(least, lane_loadu(e2 + m0));
            if (lane_mask_any(lane_cmp_le(least, lane_set1(e2[f - 1])))) {
                for (int32_t m0 = f; m0 < n; m0 += SHOAL_LANES) {
                    uint32_t may = lane_mask_bits(lane_cmp_le(lane_loadu(e2 + m0), lane_set1(e2[f - 1])));
                    while (may) {
                        const int32_t m = m0 + __builtin_ctz(may);
                        may &= may - 1;
                        const float e = e2[m];
                        const int32_t k = k2[m], j = rows[m];
                        if (!nearest_before(g, e, k, e2[f - 1], k2[f - 1])) continue;
                        e2[m] = e2[f - 1];
                        k2[m] = k2[f - 1];
                        rows[m] = rows[f - 1];
                        list_sift(g, e2, k2, rows, f - 1, e, k, j);
                    }
                }
            }
        }
        /* those of the front in range (it is in order: a prefix),
         * copied a lane at a time (nb holds a lane past any cap) */
        int32_t c = 0;
        for (int32_t m = 0; m < f; m += SHOAL_LANES)
            c += __builtin_popcount(lane_mask_bits(
                lane_mask_and(lane_mask_first(f - m), lane_cmp_lt(lane_loadu(e2 + m), lane_set1(r2)))));
        for (int32_t m = 0; m < c; m += SHOAL_LANES) {
            lane_storeu(nb->d2 + m, lane_loadu(e2 + m));
            lanei_storeu(nb->k + m, lanei_loadu(k2 + m));
        }
        if (crowd_list_holds(c, cap, c == cap ? nb->d2[cap - 1] : 0.0f, range, bound)) {
            nb->count = c;
            return 1; /* held */
        }
    }
    return 0;
}

/* Crowd row r's list built (see crowd_listed): 2 with nb from it, else 0
 * with the list dropped (find_nearest's to answer). */
static int crowd_list_rebuild(const orca_ctx_t* x, int32_t r, const float p[3], int32_t self, float range,
                              float hint, nearest_cache_t* runs, nearest_t* nb)
{
    crowd_world_t* cw = x->lists;
    const grid_t* g = x->g;
    const float r2 = range * range;
    /* Built: the cells within the hint's distance and the skin, then within
     * the range and the skin when those hold too few. */
    const int dense = hint > 0.0f && hint < r2;
    const float thick = g->dims == 3 ? CROWD_LIST_SKIN_3D : CROWD_LIST_SKIN;
    float skin = (dense ? thick : CROWD_LIST_SKIN_SPARSE) * x->moved_last;
    skin = skin > CROWD_LIST_SKIN_MIN * range ? skin : CROWD_LIST_SKIN_MIN * range;
    const float most = (dense ? CROWD_LIST_SKIN_MAX : CROWD_LIST_SKIN_MAX_SPARSE) * range;
    skin = skin < most ? skin : most;
    float reach = (dense ? sqrtf(hint) : range) + skin;
    if (dense && g->dims == 3) {
        const float wide = sqrtf(hint) + CROWD_LIST_SKIN_SHORT_3D * range;
        if (wide > reach) {
            const int32_t had = x->list_fresh ? cw->list_n[r] : 0;
            const float q = had > 0 ? wide * wide / cw->list_r2[r] : 1.21f * wide * wide / hint;
            if ((float)(had > 0 ? had : nb->cap) * q * sqrtf(q) < CROWD_LIST_SHORT_3D) reach = wide;
        }
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
        int32_t lo[3], hi[3];
        nearest_cells_within(g, p, reach, lo, hi);
        if (nearest_runs_of(g, lo, hi, &runs->list) < 0) break;
        if (crowd_list_build(x, r, p, self, reach * reach, range, &runs->list, nb)) return 2;
        if (!(reach < range + skin)) break;
        reach = range + skin;
    }
    cw->list_n[r] = 0;
    return 0;
}

/* nb (cap at most CROWD_LIST_MAX) from crowd row r's list, rebuilt when it
 * no longer holds: 1 when the list held, 2 when it was built, 0 to leave
 * it to find_nearest. p is the agent's position, self its sorted
 * position. Inlined into its callers (as a call, 58 and 65 more
 * instructions an agent-step on the crowd benchmark's grid and circle:
 * its arguments, the caller's state kept across it). */
static inline __attribute__((always_inline)) int crowd_listed(const orca_ctx_t* x, int32_t r,
                                                              const float p[3], int32_t self, float range,
                                                              float hint, nearest_cache_t* runs,
                                                              nearest_t* nb)
{
    crowd_world_t* cw = x->lists;
    const grid_t* g = x->g;
    const int three = g->dims == 3;
    /* the query point must be the agent's copy in the hash, whose moves
     * the drift counts */
    if (nb->cap > CROWD_LIST_MAX || self < 0 ||
        !(g->sx[self] == p[0] && g->sy[self] == p[1] && (!three || g->sz[self] == p[2]))) {
        cw->list_n[r] = 0;
        return 0;
    }
    const int32_t n = x->list_fresh ? cw->list_n[r] : 0;
    if (n > 0) {
        const float bound = crowd_list_bound(x, r, p);
        if (bound > 0.0f && crowd_list_held(x, r, p, three, x->crow_in_order, self, n, bound, range, nb))
            return 1;
    }
    return crowd_list_rebuild(x, r, p, self, range, hint, runs, nb);
}

/* The time gap's free walk (orca_range) along each of `dirs` directions
 * u[0..dirs) at once, a lane of neighbors at a time, in 2D with each sorted
 * position's crowd row and radius known (x->scrow): a leader is judged
 * against the agent's way (u[0]), the room along each direction. Each lane
 * computes the scalar loop's values with its operations, and the
 * qualifying lanes fold into each minimum in neighbor order, so the results
 * are the same bits. nb->k is padded past count with a valid position. */
static inline void gap_free_walk_lanes(const orca_ctx_t* x, const grid_t* g, const nearest_t* nb,
                                       const float p[3], float ri, const vec3* u, int dirs, float speed,
                                       float* free_walk)
{
    for (int t = 0; t < dirs; ++t) free_walk[t] = INFINITY;
    const lanef p0 = lane_set1(p[0]), p1 = lane_set1(p[1]), ux = lane_set1(u[0].x), uy = lane_set1(u[0].y);
    const lanef r_i = lane_set1(ri), zero = lane_zero();
    const lanef leader = lane_set1(CROWD_GAP_LEADER * speed), same_way = lane_set1(CROWD_GAP_SAME_WAY);
    const lanef body = lane_set1(CROWD_GAP_BODY);
    const lanei izero = lanei_set1(0);
    for (int32_t m0 = 0; m0 < nb->count; m0 += SHOAL_LANES) {
        const lanei k = lanei_loadu(nb->k + m0);
        const lanem mk = lane_mask_first(nb->count - m0); /* the last lane: what it holds */
        const lanef d_x = lane_image(g, lane_sub(lane_gather_or(g->sx, k, mk, p0), p0), 0);
        const lanef d_y = lane_image(g, lane_sub(lane_gather_or(g->sy, k, mk, p1), p1), 1);
        const lanef rad = lane_add(r_i, lane_gather_or(x->sradius, k, mk, zero));
        const lanef rad2 = lane_mul(rad, rad);
        const lanef dd = lane_add(lane_mul(d_x, d_x), lane_mul(d_y, d_y));
        const lanef lv_x = lane_gather_or(g->svx, k, mk, zero), lv_y = lane_gather_or(g->svy, k, mk, zero);
        lanem ok = lane_cmp_gt(lane_add(lane_mul(lv_x, ux), lane_mul(lv_y, uy)), leader);
        /* what a crowd neighbor wanted; any other's velocity */
        const lanei cr = lanei_gather_or(x->scrow, k, mk, lanei_set1(-1));
        const lanem crowd_j = lanei_nonneg(cr);
        const lanei at = lanei_max(cr, izero);
        const lanei at2 = lanei_add(at, at);
        const lanef w_x = lane_gather_or(x->intent, at2, crowd_j, lv_x);
        const lanef w_y = lane_gather_or(x->intent, lanei_add(at2, lanei_set1(1)), crowd_j, lv_y);
        const lanef w_len = lane_sqrt(lane_add(lane_mul(w_x, w_x), lane_mul(w_y, w_y)));
        ok = lane_mask_and(
            ok, lane_cmp_gt(lane_add(lane_mul(w_x, ux), lane_mul(w_y, uy)), lane_mul(same_way, w_len)));
        /* ahead along the pair's common way: of two converging walkers
         * only one is the other's leader */
        const lanef c_x = lane_add(lane_mul(ux, w_len), w_x), c_y = lane_add(lane_mul(uy, w_len), w_y);
        ok = lane_mask_and(ok, lane_cmp_gt(lane_add(lane_mul(d_x, c_x), lane_mul(d_y, c_y)), zero));
        ok = lane_mask_and(ok, lane_mask_first(nb->count - m0));
        if (!lane_mask_bits(ok)) continue;
        for (int t = 0; t < dirs; ++t) {
            const lanef tx = lane_set1(u[t].x), ty = lane_set1(u[t].y);
            const lanef along = lane_add(lane_mul(d_x, tx), lane_mul(d_y, ty));
            const lanef lateral2 = lane_sub(dd, lane_mul(along, along));
            uint32_t bits = lane_mask_bits(
                lane_mask_and(ok, lane_mask_and(lane_cmp_gt(along, zero), lane_cmp_lt(lateral2, rad2))));
            if (!bits) continue;
            float room[SHOAL_MAX_LANES];
            lane_storeu(room, lane_sub(along, lane_mul(body, lane_sqrt(lane_sub(rad2, lateral2)))));
            while (bits) {
                const int l = __builtin_ctz(bits);
                bits &= bits - 1u;
                free_walk[t] = room[l] < free_walk[t] ? room[l] : free_walk[t];
            }
        }
    }
}

/* Who sees whom (the pedestrian model, crowd.time_gap > 0): an agent's
 * share of avoiding a crowd neighbor grows with how far ahead of it the
 * neighbor is and shrinks with how far ahead of the neighbor it is, the
 * two shares of a pair summing to twice responsibility (one for 0.5), so
 * that the pair still avoids in full. Attention is CROWD_SEE_BEHIND for a
 * neighbor straight behind, 1 straight ahead, linear in the cosine
 * between: a walker pressed from behind walks on, the one behind yields
 * (pedestrians look ahead: Helbing and Molnar, "Social force model for
 * pedestrian dynamics", 1995, weigh what is behind less). Crowd row cr < 0
 * (not a crowd agent): avoided in full, 1.
 *
 * Who goes first: two walkers held up side by side before a door, each
 * pressed on a jamb and neither ahead of the other, would split the
 * avoidance evenly and creep at each other for seconds (a clog of the
 * narrow door). People settle it at once: one goes, the other waits.
 * Each walker has a boldness in [0, 1) drawn from its global id; the share
 * moves by CROWD_BOLD x held x same x (the neighbor's boldness - its
 * own), held from 0 at half the preferred speed or faster to 1 standing
 * (walking freely nothing changes) and same from 0 for a neighbor that
 * wants the opposite way (head-on pairs keep their lanes) to 2 for one
 * that wants the agent's way. */
#define CROWD_SEE_AHEAD 0.8f
#define CROWD_BOLD 2.0f
#define CROWD_BOLD_HEAD_ON 1.0f
static inline float attention_share(const orca_ctx_t* x, int32_t cr, float dx, float dy, vec3 way,
                                    float share, float mine, float held)
{
    if (cr < 0) return 1.0f;
    const float* q = x->intent + 2 * (size_t)cr;
    float len = sqrtf(dx * dx + dy * dy), qlen = sqrtf(q[0] * q[0] + q[1] * q[1]);
    float cx = way.x * qlen + q[0], cy = way.y * qlen + q[1];
    float ahead = (dx * cx + dy * cy) / fmaxf(2.0f * len * qlen, 1e-6f);
    float same = fmaxf(0.0f, (q[0] * way.x + q[1] * way.y) / fmaxf(qlen, 1e-6f) + CROWD_BOLD_HEAD_ON);
    float s = share * (1.0f + CROWD_SEE_AHEAD * ahead + CROWD_BOLD * held * same * (x->bold[cr] - mine));
    return fminf(1.0f, fmaxf(0.0f, s));
}

/* attention_share a lane of neighbors at a time: the same operations. */
static inline lanef attention_share_lanes(const orca_ctx_t* x, lanei cr, lanef dx, lanef dy, vec3 way,
                                          float share, float mine, float held)
{
    const lanem crowd_j = lanei_nonneg(cr);
    const lanei at = lanei_max(cr, lanei_set1(0));
    const lanei at2 = lanei_add(at, at);
    const lanef qx = lane_gather_or(x->intent, at2, crowd_j, lane_zero()),
                qy = lane_gather_or(x->intent, lanei_add(at2, lanei_set1(1)), crowd_j, lane_zero());
    const lanef len = lane_sqrt(lane_add(lane_mul(dx, dx), lane_mul(dy, dy)));
    const lanef qlen = lane_sqrt(lane_add(lane_mul(qx, qx), lane_mul(qy, qy)));
    const lanef one = lane_set1(1.0f);
    const lanef cx = lane_add(lane_mul(lane_set1(way.x), qlen), qx);
    const lanef cy = lane_add(lane_mul(lane_set1(way.y), qlen), qy);
    const lanef ahead = lane_div(lane_add(lane_mul(dx, cx), lane_mul(dy, cy)),
                                 lane_max(lane_mul(lane_mul(lane_set1(2.0f), len), qlen), lane_set1(1e-6f)));
    const lanef same =
        lane_max(lane_zero(),
                 lane_add(lane_div(lane_add(lane_mul(qx, lane_set1(way.x)), lane_mul(qy, lane_set1(way.y))),
                                   lane_max(qlen, lane_set1(1e-6f))),
                          lane_set1(CROWD_BOLD_HEAD_ON)));
    const lanef bold = lane_mul(lane_mul(lane_set1(CROWD_BOLD * held), same),
                                lane_sub(lane_gather_or(x->bold, at, crowd_j, lane_zero()), lane_set1(mine)));
    const lanef s = lane_min(
        one, lane_max(lane_zero(),
                      lane_mul(lane_set1(share),
                               lane_add(lane_add(one, lane_mul(lane_set1(CROWD_SEE_AHEAD), ahead)), bold))));
    return lane_select(crowd_j, s, one);
}

/* How far a disc of radius r at (px, py) can move along the unit u before
 * it touches one of the segments keep[0..kept) (INFINITY: none in the
 * way). A segment it already touches stops it only when u closes in. */
static float crowd_wall_room(const wall_set_t* walls, const int32_t* keep, int32_t kept, float px, float py,
                             float r, vec3 u)
{
    float best = INFINITY;
    for (int32_t m = 0; m < kept; ++m) {
        const float* sg = walls->seg[keep[m]];
        float qx, qy;
        walls_nearest(sg, px, py, &qx, &qy);
        float ox = qx - px, oy = qy - py;
        if (ox * ox + oy * oy <= r * r * 1.0001f) {
            if (ox * u.x + oy * u.y > 0.0f) return 0.0f;
            continue;
        }
        /* the segment's middle: the line reached at distance r */
        float ex = sg[2] - sg[0], ey = sg[3] - sg[1], len2 = ex * ex + ey * ey;
        if (len2 > 0.0f) {
            float inv = 1.0f / sqrtf(len2), nx = -ey * inv, ny = ex * inv;
            float h = nx * (px - sg[0]) + ny * (py - sg[1]);
            if (h < 0.0f) {
                h = -h;
                nx = -nx;
                ny = -ny;
            }
            float close = -(nx * u.x + ny * u.y);
            if (close > 0.0f && h > r) {
                float t = (h - r) / close;
                float cx = px + t * u.x - r * nx - sg[0], cy = py + t * u.y - r * ny - sg[1];
                float along = (cx * ex + cy * ey) / len2;
                if (along >= 0.0f && along <= 1.0f && t < best) best = t;
            }
        }
        /* its ends: circles of radius r */
        for (int e = 0; e < 2; ++e) {
            float mx = px - sg[2 * e], my = py - sg[2 * e + 1];
            float b = mx * u.x + my * u.y, c = mx * mx + my * my - r * r, disc = b * b - c;
            if (c > 0.0f && b < 0.0f && disc >= 0.0f) {
                float t = -b - sqrtf(disc);
                if (t < best) best = t;
            }
        }
    }
    return best;
}

/* Keep right's closest neighbor coming the other way (orca_range), a lane
 * of neighbors at a time under the same conditions as gap_free_walk_lanes:
 * the same bits as the scalar loop. */
static inline float keep_right_closest_lanes(const orca_ctx_t* x, const grid_t* g, const nearest_t* nb,
                                             const float p[3], float ri, vec3 u, vec3 right, float look,
                                             float speed)
{
    float closest = 0.0f;
    const lanef p0 = lane_set1(p[0]), p1 = lane_set1(p[1]), ux = lane_set1(u.x), uy = lane_set1(u.y);
    const lanef rx = lane_set1(right.x), ry = lane_set1(right.y), vlook = lane_set1(look);
    const lanef r_i = lane_set1(ri), zero = lane_zero(), two = lane_set1(2.0f), one = lane_set1(1.0f);
    const lanef against = lane_set1(-0.25f * speed);
    for (int32_t m0 = 0; m0 < nb->count; m0 += SHOAL_LANES) {
        const lanei k = lanei_loadu(nb->k + m0);
        const lanem mk = lane_mask_first(nb->count - m0); /* the last lane: what it holds */
        const lanef d_x = lane_image(g, lane_sub(lane_gather_or(g->sx, k, mk, p0), p0), 0);
        const lanef d_y = lane_image(g, lane_sub(lane_gather_or(g->sy, k, mk, p1), p1), 1);
        const lanef along = lane_add(lane_mul(d_x, ux), lane_mul(d_y, uy));
        const lanef lateral = lane_add(lane_mul(d_x, rx), lane_mul(d_y, ry));
        const lanef rad = lane_add(r_i, lane_gather_or(x->sradius, k, mk, zero));
        const lanef comes = lane_add(lane_mul(lane_gather_or(g->svx, k, mk, zero), ux),
                                     lane_mul(lane_gather_or(g->svy, k, mk, zero), uy));
        lanem ok = lane_mask_and(lane_cmp_gt(along, zero), lane_cmp_lt(along, vlook));
        ok = lane_mask_and(ok, lane_cmp_lt(lane_abs(lateral), lane_mul(two, rad)));
        ok = lane_mask_and(ok, lane_cmp_lt(comes, against));
        uint32_t bits = lane_mask_bits(lane_mask_and(ok, lane_mask_first(nb->count - m0)));
        if (!bits) continue;
        float near_by[SHOAL_MAX_LANES];
        lane_storeu(near_by, lane_sub(one, lane_div(along, vlook)));
        while (bits) {
            const int l = __builtin_ctz(bits);
            bits &= bits - 1u;
            closest = near_by[l] > closest ? near_by[l] : closest;
        }
    }
    return closest;
}

/* An agent's position, velocity and radius in every lane (nb_lane_gather),
 * or a lane of agents' each in its lane (orca_packet). */
typedef struct nb_origin {
    lanef p0, p1, p2, vx0, vy0, vz0, r_i;
} nb_origin_t;

static inline nb_origin_t nb_origin(const float p[3], vec3 vel, float ri)
{
    return (nb_origin_t){lane_set1(p[0]),  lane_set1(p[1]),  lane_set1(p[2]), lane_set1(vel.x),
                         lane_set1(vel.y), lane_set1(vel.z), lane_set1(ri)};
}

/* A lane of neighbors' ORCA inputs, gathered from the sorted arrays at
 * positions k in the lanes of mk (the others reading nothing): offsets from
 * the agents o, velocities relative to theirs, planning radii with theirs,
 * crowd rows (-1 in the lanes past mk). */
typedef struct nb_lane {
    lanef dx, dy, dz, rvx, rvy, rvz, rad;
    lanei cr;
} nb_lane_t;

static inline nb_lane_t nb_lane_gather_at(const orca_ctx_t* x, const grid_t* g, lanei k, lanem mk,
                                          const nb_origin_t* o, int three)
{
    nb_lane_t nl;
    nl.dx = lane_image(g, lane_sub(lane_gather_or(g->sx, k, mk, o->p0), o->p0), 0);
    nl.dy = lane_image(g, lane_sub(lane_gather_or(g->sy, k, mk, o->p1), o->p1), 1);
    nl.rvx = lane_sub(o->vx0, lane_gather_or(g->svx, k, mk, o->vx0));
    nl.rvy = lane_sub(o->vy0, lane_gather_or(g->svy, k, mk, o->vy0));
    nl.dz = nl.rvz = lane_zero();
    if (three) {
        nl.dz = lane_image(g, lane_sub(lane_gather_or(g->sz, k, mk, o->p2), o->p2), 2);
        nl.rvz = lane_sub(o->vz0, lane_gather_or(g->svz, k, mk, o->vz0));
    }
    nl.rad =
        lane_mul(lane_set1(CROWD_PLAN_RADIUS), lane_add(o->r_i, lane_gather_or(x->sradius, k, mk, o->r_i)));
    nl.cr = lanei_gather_or(x->scrow, k, mk, lanei_set1(-1));
    return nl;
}

/* nb_lane_gather_at's values from the sorted records (x->srec), a record
 * a lane (lane_rows4), in the lanes of mk the same bits; the lanes past mk
 * (k 0 there, as orca_packet_neighbor gathers it) hold record 0's values,
 * which no line of theirs is read for. Only where the world does not wrap
 * (orca_packet's worlds), whose offsets need no image. */
static inline nb_lane_t nb_lane_records_at(const orca_ctx_t* x, lanei k, const nb_origin_t* o, int three)
{
    _Alignas(64) uint32_t half[SHOAL_LANES];
    lanei_store((int32_t*)half, lanei_slli(k, 2)); /* a record is 32 bytes: 4 k pairs of floats */
    lanef v[4], w[4];
    lane_rows4(x->srec + CROWD_REC_X, half, v);
    lane_rows4(x->srec + CROWD_REC_R, half, w);
    nb_lane_t nl;
    nl.dx = lane_sub(v[0], o->p0);
    nl.dy = lane_sub(v[1], o->p1);
    nl.rvx = lane_sub(o->vx0, v[2]);
    nl.rvy = lane_sub(o->vy0, v[3]);
    nl.dz = nl.rvz = lane_zero();
    if (three) {
        nl.dz = lane_sub(w[2], o->p2);
        nl.rvz = lane_sub(o->vz0, w[3]);
    }
    nl.rad = lane_mul(lane_set1(CROWD_PLAN_RADIUS), lane_add(o->r_i, w[0]));
    nl.cr = lane_bits_i(w[1]);
    return nl;
}

/* nb_lane_gather_at of one agent's neighbors at sorted positions
 * ks[0..SHOAL_LANES), the first `left` of them real (a short last lane
 * gathers only what it holds). */
static inline nb_lane_t nb_lane_gather(const orca_ctx_t* x, const grid_t* g, const int32_t* ks, int32_t left,
                                       const nb_origin_t* o, int three)
{
    return nb_lane_gather_at(x, g, lanei_loadu(ks), lane_mask_first(left), o, three);
}

/* Crowd row r's (agent row i, at p) neighbors for ORCA into nb, nearest
 * first, up to its cap (the larger of its max_nb and the contact pass's
 * keep), not yet cut to max_nb: from its list (x->lists), else found;
 * which of the two went to *listed (crowd_listed's answer). */
static inline __attribute__((always_inline)) void orca_search(const orca_ctx_t* x, int32_t r, int32_t i,
                                                              const float p[3], int three,
                                                              nearest_cache_t* runs, nearest_t* nb,
                                                              int* listed)
{
    const grid_t* g = x->g;
    const crowd_view_t* c = &x->c;
    nb->count = 0;
    const int32_t keep = crowd_near_stride(three);
    nb->cap = c->max_nb[r] > keep ? c->max_nb[r] : keep;
    int32_t self = i < g->count ? x->sorted_at[i] : -1;
    const float hint = x->hint[r];
    *listed = x->lists ? crowd_listed(x, r, p, self, c->dist[r], hint, runs, nb) : 0;
    if (!*listed && !find_nearest(g, p, c->dist[r], self, hint, runs, nb))
        find_neighbors(g, p, c->dist[r], self, nb);
}

/* Crowd row r's first `keep` neighbors in nb (sorted positions), -1 past
 * them, to its near (the contact pass's candidates, keep a row,
 * crowd_near_stride): a copy of fixed size where it has keep or more (a
 * few moves), else a lane at a time (nb->k holds a lane past any count). */
static inline void orca_near(const orca_ctx_t* x, int32_t r, const nearest_t* nb, int32_t keep)
{
    _Static_assert(CROWD_CONTACT_K_2D == 8 && CROWD_CONTACT_K == 12, "orca_near's copies");
    int32_t* near = x->near + (size_t)r * (size_t)keep;
    if (nb->count >= keep) { /* copies of fixed sizes: a few moves */
        if (keep == CROWD_CONTACT_K_2D)
            memcpy(near, nb->k, sizeof(int32_t) * CROWD_CONTACT_K_2D);
        else
            memcpy(near, nb->k, sizeof(int32_t) * CROWD_CONTACT_K);
        return;
    }
    /* whole lanes stored in place, the rest of keep one at a time, -1
     * past count */
    int32_t m = 0;
    for (; m + SHOAL_LANES <= keep; m += SHOAL_LANES) {
        /* -1 or'ed into the lanes past count, rather than a select, which
         * gcc makes a masked load of nb->k: such a load waits for the
         * stores that wrote it a moment before */
        const lanei past = lanei_select(lane_mask_first(nb->count - m), lanei_set1(0), lanei_set1(-1));
        lanei_storeu(near + m, lanei_or(lanei_loadu(nb->k + m), past));
    }
    for (; m < keep; ++m) near[m] = m < nb->count ? nb->k[m] : -1;
}

/* orca_near of a list held in one lane (list_held_in_lane), its sorted
 * positions k at hand: the same entries from the register rather than
 * from nb->k, which was stored a moment before (gcc makes a masked load of
 * orca_near's select, and such a load waits for the store). */
static inline void orca_near_lane(const orca_ctx_t* x, int32_t r, const nearest_t* nb, lanei k, int32_t keep)
{
#if SHOAL_LANES == 8
    if (keep == CROWD_CONTACT_K_2D) {
        lanei_storeu(x->near + (size_t)r * CROWD_CONTACT_K_2D,
                     lanei_select(lane_mask_first(nb->count), k, lanei_set1(-1)));
        return;
    }
#endif
    (void)k;
    orca_near(x, r, nb, keep);
}

/* Crowd row r's (agent row i, at p) neighbors for ORCA into nb, at most
 * its max_nb, nearest first; its nearest few for the contact pass (near),
 * its clearance, and the next step's hint of how far to look. */
static inline __attribute__((always_inline)) void orca_neighbors(const orca_ctx_t* x, int32_t r, int32_t i,
                                                                 const float p[3], float vmax, int three,
                                                                 int32_t worker, nearest_cache_t* runs,
                                                                 nearest_t* nb)
{
    const crowd_view_t* c = &x->c;
    x->clear[r] = INFINITY;
    nb->count = 0;
    if (!x->g) {
        const int keep = crowd_near_stride(three);
        int32_t* near = x->near + (size_t)r * (size_t)keep;
        for (int m = 0; m < keep; ++m) near[m] = -1;
        return;
    }
    int listed;
    orca_search(x, r, i, p, three, runs, nb, &listed);
    if (listed) x->list_counts[CROWD_COUNTS * worker + listed - 1]++;
    /* next step's hint: the farthest kept, moved apart by both at
     * full speed for a step, and a tenth more */
    if (nb->count == nb->cap) {
        float far = 1.1f * sqrtf(nb->d2[nb->count - 1]) + 2.0f * vmax * x->dt;
        x->hint[r] = far * far;
    } else {
        x->hint[r] = 0.0f;
    }
    orca_near(x, r, nb, crowd_near_stride(three));
    if (nb->count > 0) x->clear[r] = sqrtf(nb->d2[0]);
    if (nb->count > c->max_nb[r]) nb->count = c->max_nb[r];
}

/* The jitter's draws (rng_signed_unit of three windows of one draw's 64
 * bits, keyed by the agent's global id) of crowd rows [r0, r0 + m), m at
 * most CROWD_JITTER_BLOCK: a block at a time, in loops of plain 64-bit
 * arithmetic that the compiler vectorizes. */
#define CROWD_JITTER_BLOCK 64
static void crowd_jitter_block(const orca_ctx_t* x, int32_t r0, int32_t m, float out[3][CROWD_JITTER_BLOCK])
{
    uint64_t bits[CROWD_JITTER_BLOCK];
    const int32_t* row = x->c.agent_row + r0;
    if (x->crow_in_order) { /* crowd row r is agent row r: ids read in order */
        const uint32_t *lo = x->id_lo + r0, *hi = x->id_hi + r0;
        for (int32_t k = 0; k < m; ++k)
            bits[k] = rng_stream(
                rng_base_from(x->seed_round, (uint64_t)lo[k] | (uint64_t)hi[k] << 32, x->step), CROWD_STREAM);
    } else {
        for (int32_t k = 0; k < m; ++k) {
            const uint64_t gid = (uint64_t)x->id_lo[row[k]] | (uint64_t)x->id_hi[row[k]] << 32;
            bits[k] = rng_stream(rng_base_from(x->seed_round, gid, x->step), CROWD_STREAM);
        }
    }
    for (int32_t k = 0; k < m; ++k) {
        const uint64_t b = bits[k];
        out[0][k] = rng_signed_unit(b);
        out[1][k] = rng_signed_unit(b << 24);
        out[2][k] = rng_signed_unit(b << 48 | b >> 16);
    }
}

/* Whether crowd rows [r, r + SHOAL_LANES) all plan as plain ORCA agents
 * (orca_packet): no time gap and no keeping right. */
static inline int orca_plain(const crowd_view_t* c, int32_t r)
{
    const lanef zero = lane_zero();
    return !lane_mask_any(lane_mask_or(lane_cmp_gt(lane_loadu(c->time_gap + r), zero),
                                       lane_cmp_gt(lane_loadu(c->side + r), zero)));
}

/* Lane l's offset of the field at byte `offset` of nbs[l] from nbs
 * (orca_packet_neighbors), in int32_t (nearest_t holds whole int32_t and
 * floats). */
static inline lanei orca_packet_at(size_t offset)
{
    _Static_assert(sizeof(nearest_t) % sizeof(int32_t) == 0 && sizeof(float) == sizeof(int32_t),
                   "nearest_t in whole int32_t");
    return lanei_add(lanei_mul(lanei_iota(), lanei_set1((int32_t)(sizeof(nearest_t) / sizeof(int32_t)))),
                     lanei_set1((int32_t)(offset / sizeof(int32_t))));
}

/* Lane l's offset of nbs[l].k from nbs, in int32_t. */
static inline lanei orca_packet_k(void) { return orca_packet_at(offsetof(nearest_t, k)); }

/* crowd_listed's first tests of a packet's rows, a row to a lane: each
 * one's sorted position, list length, cap and bound. */
typedef struct orca_listable {
    _Alignas(64) float bound[SHOAL_LANES];
    _Alignas(64) int32_t self[SHOAL_LANES];
    _Alignas(64) int32_t n[SHOAL_LANES];
    _Alignas(64) int32_t cap[SHOAL_LANES];
    uint32_t in_lane; /* lanes whose list fits one lane and nb's cap (n <= SHOAL_LANES, n <= cap) */
} orca_listable_t;

/* The rows of crowd rows [r0, r0 + SHOAL_LANES) whose lists pass
 * crowd_listed's first tests (the agent's copy in the hash, a list, a
 * bound above 0), as bits, their values in ls: crowd_listed's operations
 * a row to a lane, where crowd row r is agent row r (else none pass here:
 * each row then takes crowd_listed whole). */
static inline uint32_t orca_packet_listable(const orca_ctx_t* x, int32_t r0, int three, int32_t keep,
                                            orca_listable_t* ls)
{
    const grid_t* g = x->g;
    const crowd_world_t* cw = x->lists;
    if (!g || !cw || !x->list_fresh || !x->crow_in_order) {
        *ls = (orca_listable_t){.n = {0}}; /* (gcc cannot tell that no lane is read unset) */
        return 0;
    }
    const agent_view_t* a = &x->a;
    const crowd_view_t* c = &x->c;
    const lanef px = lane_loadu(a->px + r0), py = lane_loadu(a->py + r0);
    const lanef pz = three ? lane_loadu(a->pz + r0) : lane_zero();
    const lanei self =
        lanei_select(lanei_cmp_gt(lanei_set1(g->count), lanei_add(lanei_set1(r0), lanei_iota())),
                     lanei_loadu(x->sorted_at + r0), lanei_set1(-1));
    const lanei cap = lanei_max(lanei_loadu(c->max_nb + r0), lanei_set1(keep));
    const lanei n = lanei_loadu(cw->list_n + r0);
    lanem ok =
        lane_mask_and(lanei_nonneg(self), lane_mask_not(lanei_cmp_gt(cap, lanei_set1(CROWD_LIST_MAX))));
    ok = lane_mask_and(ok, lanei_cmp_gt(n, lanei_set1(0)));
    {
        /* its copy in the hash as sorted_range just kept it beside its list
         * (cw->prev, at its crowd row, which is its agent row: the rows of
         * a packet, in order, their records side by side) */
        _Alignas(64) uint32_t half[SHOAL_LANES];
        for (int l = 0; l < SHOAL_LANES; ++l) half[l] = 2u * (uint32_t)(r0 + l);
        lanef q[4];
        lane_rows4(cw->prev, half, q);
        ok = lane_mask_and(ok, lane_mask_and(lane_cmp_eq(q[0], px), lane_cmp_eq(q[1], py)));
        if (three) ok = lane_mask_and(ok, lane_cmp_eq(q[2], pz));
    }
    lanei_store(ls->self, self);
    lanei_store(ls->n, n);
    lanei_store(ls->cap, cap);
    /* in 2D, within the cell keys' reach too (orca_run's key_r2) */
    const lanem keyed = three ? lane_mask_first(SHOAL_LANES)
                              : lane_cmp_lt(lane_loadu(cw->list_r2 + r0), lane_set1(x->key_r2));
    ls->in_lane = lane_mask_bits(lane_mask_andnot(
        keyed, lane_mask_or(lanei_cmp_gt(n, lanei_set1(SHOAL_LANES)), lanei_cmp_gt(n, cap))));
    if (!lane_mask_any(ok)) {
        lane_store(ls->bound, lane_zero());
        return 0;
    }
    _Alignas(64) float drift[SHOAL_LANES];
    for (int l = 0; l < SHOAL_LANES; ++l) drift[l] = (float)(x->moved - cw->list_base[r0 + l]);
    const lanef ox = lane_sub(px, lane_loadu(cw->list_ax + r0)),
                oy = lane_sub(py, lane_loadu(cw->list_ay + r0)),
                oz = lane_sub(pz, lane_loadu(cw->list_az + r0));
    const lanef own = lane_sqrt(lane_add(lane_add(lane_mul(ox, ox), lane_mul(oy, oy)), lane_mul(oz, oz)));
    const lanef bound =
        lane_sub(lane_sub(lane_mul(lane_sqrt(lane_loadu(cw->list_r2 + r0)), lane_set1(1.0f - CROWD_LIST_EPS)),
                          lane_mul(lane_add(lane_load(drift), own), lane_set1(1.0f + CROWD_LIST_EPS))),
                 lane_set1(CROWD_LIST_ABS));
    ok = lane_mask_and(ok, lane_cmp_gt(bound, lane_zero()));
    lane_store(ls->bound, bound);
    return lane_mask_bits(ok);
}

/* A packet's agents' values of an agent column: at their rows, or from
 * agent row `at` on where the rows are in order (at >= 0: a load). */
static inline lanef packet_column(const float* col, lanei rows, int32_t at)
{
    return at >= 0 ? lane_loadu(col + at) : lane_gather(col, rows);
}

/* packet_column's way back: v into an agent column, from agent row `at`
 * on where the rows are in order (at >= 0: a store), else at the rows
 * row[0..SHOAL_LANES). */
static inline void packet_column_store(float* col, const int32_t* row, int32_t at, lanef v)
{
    if (at >= 0) {
        lane_storeu(col + at, v);
        return;
    }
    _Alignas(64) float vals[SHOAL_LANES];
    lane_store(vals, v);
    for (int l = 0; l < SHOAL_LANES; ++l) col[row[l]] = vals[l];
}

/* The neighbors' records a packet's rows will read, CROWD_PREFETCH_AHEAD
 * sorted positions on, asked for now. A packet reads its neighbors'
 * records by sorted position (sorted_rec: 32 bytes each) and their
 * positions by agent row (the lists' prev: 16 bytes), both near its own
 * (on the crowd benchmark's circle, 96 % of neighbors lie within 128
 * sorted positions), in an order the core's own prefetchers did not follow:
 * at 100k agents, where those records no longer fit the second-level
 * cache, perf put the packets' waits on those loads. Where crowd row r is
 * agent row r, the rows CROWD_PREFETCH_AHEAD on read the records at the
 * sorted positions about as far on; asking for them a packet at a time
 * keeps the front of that window on its way. Tuned on the circle at 100k
 * on a Zen 4 (64, 128, 160, 224 and 320 tried). Where the neighbors are
 * gathered from the sorted arrays instead (the cores that do not read
 * records, crowd_records_pay), the same window of each of those arrays:
 * on a Zen 5 the circle at 1M agents, one thread, ran 1.087 times as fast
 * (median of 6 rounds from fresh copies), at 100k 0.989 (8 rounds). */
#define CROWD_PREFETCH_AHEAD 160
#define CROWD_PREFETCH_ROWS 48
static inline __attribute__((always_inline)) void orca_packet_prefetch(const orca_ctx_t* x, int32_t r0)
{
    const grid_t* g = x->g;
    if (!g || !x->crow_in_order || r0 + CROWD_PREFETCH_AHEAD + SHOAL_LANES > g->count) return;
    const int32_t ahead = r0 + CROWD_PREFETCH_AHEAD;
    if (x->srec) {
        const int32_t s = x->sorted_at[ahead];
        if (s >= 0 && s + SHOAL_LANES <= g->count)
            prefetch_span(x->srec + (size_t)s * CROWD_REC, SHOAL_LANES * CROWD_REC * sizeof(float), 0);
    } else if (x->scrow) {
        /* the same window of the sorted arrays nb_lane_gather_at reads */
        const int32_t s = x->sorted_at[ahead];
        if (s >= 0 && s + SHOAL_LANES <= g->count) {
            const void* const cols[] = {g->sx + s,
                                        g->sy + s,
                                        g->svx + s,
                                        g->svy + s,
                                        x->sradius + s,
                                        x->scrow + s,
                                        g->dims == 3 ? (const void*)(g->sz + s) : NULL,
                                        g->dims == 3 ? (const void*)(g->svz + s) : NULL};
            for (size_t c = 0; c < sizeof cols / sizeof cols[0]; ++c)
                if (cols[c]) prefetch_span(cols[c], SHOAL_LANES * sizeof(float), 0);
        }
    }
    if (x->lists) prefetch_span(x->lists->prev + (size_t)ahead * 4, SHOAL_LANES * 4 * sizeof(float), 0);
    /* the rows' own columns (packet_column's loads, crowd_listed's first
     * tests, the hint and clearance written): the line of the last row
     * of the packet CROWD_PREFETCH_ROWS on, which in a run of packets
     * meets every line of a 4-byte column (8 rows of list_base's doubles:
     * the one 8 rows before too, where a packet spans 16) */
    const size_t at = (size_t)(r0 + CROWD_PREFETCH_ROWS + SHOAL_LANES - 1);
    if (at >= (size_t)g->count || at >= (size_t)x->crowd->table.count) return;
    if (x->lists) {
        __builtin_prefetch(x->lists->list_base + at);
        if (SHOAL_LANES > 8) __builtin_prefetch(x->lists->list_base + at - 8);
    }
    /* the rest a line of 16 rows at a time */
    if (!packet_starts_line((int64_t)at)) return;
    const agent_view_t* av = &x->a;
    const crowd_view_t* c = &x->c;
    const int three = g->dims == 3;
    /* (every one of them there: a row's columns and the pass's, with no
     * test of each, which cost the circle about 2 instructions an
     * agent-step) */
    const float* const cols[] = {av->px,        av->py,  av->vx, av->vy,  av->radius,    av->dx,  av->dy,
                                 av->max_speed, c->dist, c->tau, c->resp, c->pref_speed, x->hint, x->clear};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; ++k) __builtin_prefetch(cols[k] + at);
    if (three) {
        __builtin_prefetch(av->pz + at);
        __builtin_prefetch(av->vz + at);
        __builtin_prefetch(av->dz + at);
    }
    __builtin_prefetch(c->agent_row + at);
    __builtin_prefetch(c->max_nb + at);
    __builtin_prefetch(x->sorted_at + at);
    if (x->lists) {
        const crowd_world_t* cw = x->lists;
        __builtin_prefetch(cw->list_n + at);
        __builtin_prefetch(cw->list_r2 + at);
        __builtin_prefetch(cw->list_ax + at);
        __builtin_prefetch(cw->list_ay + at);
        __builtin_prefetch(cw->list_az + at);
    }
}

/* The neighbors of crowd rows [r0, r0 + SHOAL_LANES) (orca_neighbors),
 * lane l's in nbs[l], how many it plans with in cnt[l] (none when it takes
 * no share); returns the most of them. Each row searched alone
 * (orca_search), then their hints, clearances and counts a row to a lane
 * (orca_neighbors' operations, in its order). */
static inline __attribute__((always_inline)) int32_t orca_packet_neighbors(const orca_ctx_t* x, int32_t r0,
                                                                           int three, int32_t worker,
                                                                           nearest_cache_t* runs,
                                                                           nearest_t* nbs, int32_t* cnt)
{
    const agent_view_t* a = &x->a;
    const crowd_view_t* c = &x->c;
    const int32_t keep = crowd_near_stride(three);
    int32_t found[3] = {0, 0, 0};
    orca_packet_prefetch(x, r0);
    orca_listable_t ls;
    const uint32_t listable = orca_packet_listable(x, r0, three, keep, &ls);
    /* First the rows whose list fits one lane and holds as it stands (in
     * order, its front all of it: most rows of most steps), in a loop of
     * their own, each as crowd_list_held would take it; then the others
     * whole, these lanes' failures included. Lanes are independent. */
    uint32_t done = 0, lapsed = 0;
    if (listable & ls.in_lane) {
        const crowd_world_t* cw = x->lists;
        const lanef ax = lane_loadu(a->px + r0), ay = lane_loadu(a->py + r0); /* in order: row r0 + l */
        const lanef az = three ? lane_loadu(a->pz + r0) : lane_zero();
        const uint32_t in_lane = listable & ls.in_lane;
        /* the next packet's lists on their way (the rows in the table) */
        if (r0 + 2 * SHOAL_LANES <= cw->capacity) {
            const int32_t* next = cw->list + (size_t)(r0 + SHOAL_LANES) * CROWD_LIST_MAX;
            for (int l = 0; l < SHOAL_LANES; ++l) __builtin_prefetch(next + (size_t)l * CROWD_LIST_MAX);
        }
        /* each one's d^2, sorted positions and positions (which ties
         * need) first, the loads of every row under way at once with no
         * branch between them; then each one's tests */
        _Alignas(64) float qs[SHOAL_LANES][3][SHOAL_LANES];
        for (uint32_t bits = in_lane; bits; bits &= bits - 1u) {
            const int l = __builtin_ctz(bits);
            lanei k;
            lanef q[3];
            const lanef e =
                list_lane_d2(x, cw->list + (size_t)(r0 + l) * CROWD_LIST_MAX, lane_mask_first(ls.n[l]),
                             LIST_BY_ROW_LOADS, ls.self[l], lane_broadcast_at(ax, l),
                             lane_broadcast_at(ay, l), lane_broadcast_at(az, l), three, &k, q);
            lane_storeu(nbs[l].d2, e);
            lanei_storeu(nbs[l].k, k);
            if (three) { /* 2D: only the cell keys, which settle ties */
                lane_store(qs[l][0], q[0]);
                lane_store(qs[l][1], q[1]);
            }
            lane_store(qs[l][2], q[2]);
        }
        for (uint32_t bits = in_lane; bits; bits &= bits - 1u) {
            const int l = __builtin_ctz(bits);
            const int32_t r = r0 + l;
            nearest_t* nb = &nbs[l];
            nb->count = 0;
            nb->cap = ls.cap[l];
            const lanei k = lanei_loadu(nb->k);
            const lanef q[3] = {three ? lane_load(qs[l][0]) : lane_zero(),
                                three ? lane_load(qs[l][1]) : lane_zero(), lane_load(qs[l][2])};
            const int held = list_held_in_lane(x, ls.n[l], ls.bound[l], c->dist[r], lane_loadu(nb->d2), k, q,
                                               three, !three, nb);
            if (held == 1) {
                done |= 1u << l;
                orca_near_lane(x, r, nb, k, keep);
            } else if (held == 0) {
                lapsed |= 1u << l; /* crowd_list_held would find the same */
            }
        }
        found[1] += __builtin_popcount(done);
    }
    for (uint32_t bits = ~done & lane_mask_bits(lane_mask_first(SHOAL_LANES)); bits; bits &= bits - 1u) {
        const int l = __builtin_ctz(bits);
        const int32_t r = r0 + l, i = c->agent_row[r];
        const float p[3] = {a->px[i], a->py[i], three ? a->pz[i] : 0.0f};
        nearest_t* nb = &nbs[l];
        int listed;
        if (listable >> l & 1u) { /* orca_search with crowd_listed's first tests passed */
            nb->count = 0;
            nb->cap = ls.cap[l];
            const float range = c->dist[r], hint = x->hint[r];
            listed = !(lapsed >> l & 1u) &&
                             crowd_list_held(x, r, p, three, 1, ls.self[l], ls.n[l], ls.bound[l], range, nb)
                         ? 1
                         : crowd_list_rebuild(x, r, p, ls.self[l], range, hint, runs, nb);
            if (!listed && !find_nearest(x->g, p, range, ls.self[l], hint, runs, nb))
                find_neighbors(x->g, p, range, ls.self[l], nb);
        } else {
            orca_search(x, r, i, p, three, runs, nb, &listed);
        }
        found[listed]++;
        orca_near(x, r, nb, keep);
    }
    int64_t* counts = x->list_counts + CROWD_COUNTS * worker;
    counts[0] += found[1];
    counts[1] += found[2];
#if defined(CROWD_HAS_WIDE) || defined(CROWD_WIDE)
    if (listable) { /* for orca_run's choice of width */
        counts[2] += __builtin_popcount(listable);
        for (int l = 0; l < SHOAL_LANES; ++l) counts[3] += listable >> l & 1u ? ls.n[l] : 0;
    }
#endif
    /* each lane's nbs[l].count, .cap and .d2 */
    const int32_t* base = (const int32_t*)(const void*)nbs;
    const float* based = (const float*)(const void*)nbs;
    const lanei count = lanei_gather(base, orca_packet_at(offsetof(nearest_t, count)));
    const lanei cap = lanei_gather(base, orca_packet_at(offsetof(nearest_t, cap)));
    const lanei d2at = orca_packet_at(offsetof(nearest_t, d2));
    const lanem full = lanei_cmp_eq(count, cap), some = lanei_cmp_gt(count, lanei_set1(0));
    const lanef last =
        lane_gather_or(based, lanei_add(d2at, lanei_sub(count, lanei_set1(1))), full, lane_zero());
    const lanef vmax =
        packet_column(a->max_speed, lanei_loadu(c->agent_row + r0), x->crow_in_order ? r0 : -1);
    const lanef far = lane_add(lane_mul(lane_set1(1.1f), lane_sqrt(last)),
                               lane_mul(lane_mul(lane_set1(2.0f), vmax), lane_set1(x->dt)));
    lane_storeu(x->hint + r0, lane_select(full, lane_mul(far, far), lane_zero()));
    const lanef first = lane_gather_or(based, d2at, some, lane_zero());
    lane_storeu(x->clear + r0, lane_select(some, lane_sqrt(first), lane_set1(INFINITY)));
    const lanei max_nb = lanei_loadu(c->max_nb + r0);
    const lanei n = lanei_select(lanei_cmp_gt(count, max_nb), max_nb, count);
    /* responsibility 0 ignores others */
    const lanei planned = lanei_select(lane_cmp_gt(lane_loadu(c->resp + r0), lane_zero()), n, lanei_set1(0));
    lanei_storeu(cnt, planned);
    int32_t kept[SHOAL_LANES], nmax = 0;
    lanei_storeu(kept, n);
    for (int l = 0; l < SHOAL_LANES; ++l) {
        nbs[l].count = kept[l];
        nmax = cnt[l] > nmax ? cnt[l] : nmax;
    }
    return nmax;
}

/* orca_packet_neighbors for each number of dimensions, `three` known to
 * the compiler, apart from the packets' lines and programs. Called with
 * `three` as a value, it took more instructions an agent-step (the circle
 * 617.9 against 606.0, the 2D grid 1,321.4 against 1,282.1); merged into
 * orca_packet, the 2D grid ran 0.92 times as fast as apart (two sets of 6
 * rounds on a Zen 4, the circle 1.07). */
static __attribute__((noinline)) int32_t orca_packet_neighbors2(const orca_ctx_t* x, int32_t r0,
                                                                int32_t worker, nearest_cache_t* runs,
                                                                nearest_t* nbs, int32_t* cnt)
{
    return orca_packet_neighbors(x, r0, 0, worker, runs, nbs, cnt);
}

static __attribute__((noinline)) int32_t orca_packet_neighbors3(const orca_ctx_t* x, int32_t r0,
                                                                int32_t worker, nearest_cache_t* runs,
                                                                nearest_t* nbs, int32_t* cnt)
{
    return orca_packet_neighbors(x, r0, 1, worker, runs, nbs, cnt);
}

/* The agents of crowd rows [r0, r0 + SHOAL_LANES), a row to a lane, as
 * orca_range reads them: their rows, positions, velocities and radii (o),
 * speed limits, preferred velocities (capped, with the jitter j[0..dims)),
 * 1 / time_horizon, shares, and how many neighbors each plans with (cnt,
 * none where a velocity or time is not finite). */
typedef struct packet_agents {
    lanei rows, n;
    nb_origin_t o;
    lanef vmax, tx, ty, tz, itau, share;
} packet_agents_t;

static inline packet_agents_t orca_packet_agents(const orca_ctx_t* x, int32_t r0, int three,
                                                 const float* const j[3], const int32_t* cnt)
{
    const agent_view_t* a = &x->a;
    const crowd_view_t* c = &x->c;
    const lanef zero = lane_zero();
    packet_agents_t pa;
    pa.rows = lanei_loadu(c->agent_row + r0);
    const lanei rows = pa.rows;
    const int32_t at = x->crow_in_order ? r0 : -1;
    pa.o.p0 = packet_column(a->px, rows, at);
    pa.o.p1 = packet_column(a->py, rows, at);
    pa.o.p2 = three ? packet_column(a->pz, rows, at) : zero;
    pa.o.vx0 = packet_column(a->vx, rows, at);
    pa.o.vy0 = packet_column(a->vy, rows, at);
    pa.o.vz0 = three ? packet_column(a->vz, rows, at) : zero;
    pa.o.r_i = packet_column(a->radius, rows, at);
    pa.vmax = packet_column(a->max_speed, rows, at);
    lanef tx = packet_column(a->dx, rows, at), ty = packet_column(a->dy, rows, at);
    lanef tz = three ? packet_column(a->dz, rows, at) : zero;
    const lanef cap = lane_loadu(c->pref_speed + r0);
    lanef len2 = lane_add(lane_mul(tx, tx), lane_mul(ty, ty));
    if (three) len2 = lane_add(len2, lane_mul(tz, tz));
    const lanem over = lane_mask_and(lane_cmp_gt(cap, zero), lane_cmp_gt(len2, lane_mul(cap, cap)));
    const lanef sc = lane_div(cap, lane_sqrt(len2));
    const lanef jit = lane_set1(CROWD_JITTER);
    pa.tx = lane_add(lane_select(over, lane_mul(tx, sc), tx), lane_mul(jit, lane_loadu(j[0])));
    pa.ty = lane_add(lane_select(over, lane_mul(ty, sc), ty), lane_mul(jit, lane_loadu(j[1])));
    pa.tz = three ? lane_add(lane_select(over, lane_mul(tz, sc), tz), lane_mul(jit, lane_loadu(j[2]))) : zero;
    pa.itau = lane_div(lane_set1(1.0f), lane_loadu(c->tau + r0));
    pa.share = lane_loadu(c->resp + r0);
    lanem go =
        lane_mask_and(lane_finite(pa.itau), lane_mask_and(lane_finite(pa.o.vx0), lane_finite(pa.o.vy0)));
    if (three) go = lane_mask_and(go, lane_finite(pa.o.vz0));
    if (!isfinite(x->inv_dt)) go = lane_mask_from_bits(0);
    pa.n = lanei_select(go, lanei_loadu(cnt), lanei_set1(0));
    return pa;
}

/* The m-th neighbor of every lane of a packet whose rows plan with more
 * than m (act), as nb_lane_gather_at reads it from nbs (kat:
 * orca_packet_k), and in *s each lane's share of it: its own against a
 * crowd agent, all of it against any other. */
static inline nb_lane_t orca_packet_neighbor(const orca_ctx_t* x, const nearest_t* nbs, lanei kat, int32_t m,
                                             lanem act, const packet_agents_t* pa, int three, lanef* s)
{
    const lanei k =
        lanei_gather_or((const int32_t*)(const void*)nbs, lanei_add(kat, lanei_set1(m)), act, lanei_set1(0));
    const nb_lane_t nb =
        x->srec ? nb_lane_records_at(x, k, &pa->o, three) : nb_lane_gather_at(x, x->g, k, act, &pa->o, three);
    *s = lane_select(lanei_nonneg(nb.cr), pa->share, lane_set1(1.0f));
    return nb;
}

/* ORCA for crowd rows [r0, r0 + SHOAL_LANES) at once, a row to a lane: 2D,
 * plain (orca_plain), crowd rows of the sorted positions known, no walls,
 * no obstacles, no wrapping. Each row's neighbors as orca_range finds them;
 * then every lane's preferred velocity, its m-th neighbor's line for every
 * m (orca2_lines_core: the row's lines, in its order, bit for bit) and
 * the linear program of all of them at once (orca2_lp_lanes); a row whose
 * program fails goes to the fallback from where it failed
 * (orca2_solve_failed). The same bits as orca_range's row at a time. jx,
 * jy: the rows' jitter draws. */
static void orca_packet(const orca_ctx_t* x, int32_t r0, const float* jx, const float* jy, int32_t worker,
                        nearest_cache_t* runs, int64_t* relaxed)
{
    enum { L = SHOAL_LANES };
    const agent_view_t* a = &x->a;
    nearest_t nbs[L]; /* lane l's m-th neighbor: nbs[l].k[m] */
    _Alignas(64) float lpx[CROWD_MAX_NEIGHBORS * L], lpy[CROWD_MAX_NEIGHBORS * L];
    _Alignas(64) float ldx[CROWD_MAX_NEIGHBORS * L], ldy[CROWD_MAX_NEIGHBORS * L];
    _Alignas(64) int32_t cnt[L];
    const int32_t nmax = orca_packet_neighbors2(x, r0, worker, runs, nbs, cnt);
    const lanei kat = orca_packet_k(); /* where each lane's neighbors start */
    const float* const jit[3] = {jx, jy, NULL};
    const packet_agents_t pa = orca_packet_agents(x, r0, 0, jit, cnt);
    lanei n = pa.n;

    /* the m-th line of every lane at once */
    _Alignas(64) int32_t nl[L];
    int diverged = 0;
    for (int32_t m = 0; m < nmax; ++m) {
        const lanem act = lanei_cmp_gt(n, lanei_set1(m));
        const uint32_t on = lane_mask_bits(act);
        if (!on) break;
        lanef s;
        const nb_lane_t nb = orca_packet_neighbor(x, nbs, kat, m, act, &pa, 0, &s);
        const orca2_lane_lines_t ln =
            orca2_lines_core(nb.dx, nb.dy, nb.rvx, nb.rvy, nb.rad, s, pa.itau, pa.o.vx0, pa.o.vy0);
        lane_store(lpx + (size_t)m * L, ln.pt_x);
        lane_store(lpy + (size_t)m * L, ln.pt_y);
        lane_store(ldx + (size_t)m * L, ln.d_x);
        lane_store(ldy + (size_t)m * L, ln.d_y);
        if (!diverged && (ln.good & on) == on) continue;
        /* rare: a lane whose line needs the scalar function, or gives none;
         * from here on each lane's lines are placed one at a time */
        if (!diverged) {
            lanei_store(nl, n);
            for (int l = 0; l < L; ++l) nl[l] = nl[l] < m ? nl[l] : m;
            diverged = 1;
        }
        _Alignas(64) float in[9][L];
        const lanef ins[9] = {nb.dx, nb.dy, nb.rvx, nb.rvy, nb.rad, s, pa.itau, pa.o.vx0, pa.o.vy0};
        for (int v = 0; v < 9; ++v) lane_store(in[v], ins[v]);
        for (int l = 0; l < L; ++l) {
            if (!(on >> l & 1u)) continue;
            orca_line2_t line;
            int w;
            if (ln.fast >> l & 1u) {
                line = (orca_line2_t){{lpx[(size_t)m * L + l], lpy[(size_t)m * L + l]},
                                      {ldx[(size_t)m * L + l], ldy[(size_t)m * L + l]}};
                w = (int)(ln.good >> l & 1u);
            } else {
                w = orca2_line_agent((vec2){in[0][l], in[1][l]}, (vec2){in[2][l], in[3][l]}, in[4][l],
                                     in[6][l], x->inv_dt, in[5][l], (vec2){in[7][l], in[8][l]}, &line);
            }
            if (!w) continue;
            const size_t at = (size_t)nl[l]++ * L + (size_t)l;
            lpx[at] = line.point.x;
            lpy[at] = line.point.y;
            ldx[at] = line.dir.x;
            ldy[at] = line.dir.y;
        }
    }
    if (diverged) n = lanei_load(nl);

    /* the programs: orca2_solve's speed limit, target and first best */
    const lanef zero = lane_zero();
    const lanef radius = lane_select(
        lane_mask_and(lane_cmp_gt(pa.vmax, zero), lane_cmp_lt(pa.vmax, lane_set1(INFINITY))), pa.vmax, zero);
    const lanem tfin = lane_mask_and(lane_finite(pa.tx), lane_finite(pa.ty));
    const lanef tx = lane_select(tfin, pa.tx, zero), ty = lane_select(tfin, pa.ty, zero);
    lanef bx = tx, by = ty;
    uint32_t odd;
    lane_clamp_length2(&bx, &by, radius, &odd);
    _Alignas(64) float out[4][L];
    if (odd) { /* vec2_normalize's slow case: a length past the floats */
        _Alignas(64) float lim[L];
        lane_store(out[0], bx);
        lane_store(out[1], by);
        lane_store(out[2], tx);
        lane_store(out[3], ty);
        lane_store(lim, radius);
        for (int l = 0; l < L; ++l) {
            if (!(odd >> l & 1u)) continue;
            const vec2 b = vec2_clamp_length((vec2){out[2][l], out[3][l]}, lim[l]);
            out[0][l] = b.x;
            out[1][l] = b.y;
        }
        bx = lane_load(out[0]);
        by = lane_load(out[1]);
    }
    lanei fail_at;
    const uint32_t failed = orca2_lp_lanes(lpx, lpy, ldx, ldy, n, nmax, radius, tx, ty, &bx, &by, &fail_at);
    lane_store(out[0], bx);
    lane_store(out[1], by);
    _Alignas(64) int32_t row[L];
    lanei_store(row, pa.rows);
    const int32_t from = x->crow_in_order ? r0 : -1;
    packet_column_store(a->dx, row, from, bx);
    packet_column_store(a->dy, row, from, by);
    if (failed) {
        _Alignas(64) float lim[L];
        lane_store(lim, pa.vmax);
        lanei_store(nl, n);
        _Alignas(64) int32_t fat[L];
        lanei_store(fat, fail_at);
        orca_line2_t lines[CROWD_MAX_NEIGHBORS], scratch[CROWD_MAX_NEIGHBORS];
        for (int l = 0; l < L; ++l) {
            if (!(failed >> l & 1u)) continue;
            for (int32_t m = 0; m < nl[l]; ++m) {
                const size_t at = (size_t)m * L + (size_t)l;
                lines[m] = (orca_line2_t){{lpx[at], lpy[at]}, {ldx[at], ldy[at]}};
            }
            /* the fallback from where the program failed, with its best so far */
            vec2 o;
            const orca_status_t st = orca2_solve_failed(lines, nl[l], 0, lim[l], fat[l],
                                                        (vec2){out[0][l], out[1][l]}, scratch, &o);
            a->dx[row[l]] = o.x;
            a->dy[row[l]] = o.y;
            *relaxed += st != ORCA_FEASIBLE;
        }
    }
}

/* orca_packet in 3D: the rows' planes a neighbor of every lane at a time
 * (orca3_planes_core) and their programs together (orca3_lp_lanes); a row
 * whose program fails goes to the fallback from where it failed
 * (orca3_solve_failed), one that met a case only the scalar functions take
 * is solved from the start (orca3_solve). The same bits as one at a time.
 * jx, jy, jz: the rows' jitter draws. */
static void orca_packet3(const orca_ctx_t* x, int32_t r0, const float* jx, const float* jy, const float* jz,
                         int32_t worker, nearest_cache_t* runs, int64_t* relaxed)
{
    enum { L = SHOAL_LANES, N = CROWD_MAX_NEIGHBORS * SHOAL_LANES };
    const agent_view_t* a = &x->a;
    nearest_t nbs[L];
    _Alignas(64) float pl[6][N]; /* the planes' points and normals, plane m of lane l at m * L + l */
    _Alignas(64) float tl[4][N]; /* orca3_lp_lanes' lines */
    _Alignas(64) int32_t cnt[L];
    const int32_t nmax = orca_packet_neighbors3(x, r0, worker, runs, nbs, cnt);
    const lanei kat = orca_packet_k();
    const float* const jit[3] = {jx, jy, jz};
    const packet_agents_t pa = orca_packet_agents(x, r0, 1, jit, cnt);
    lanei n = pa.n;

    _Alignas(64) int32_t nl[L];
    int diverged = 0;
    for (int32_t m = 0; m < nmax; ++m) {
        const lanem act = lanei_cmp_gt(n, lanei_set1(m));
        const uint32_t on = lane_mask_bits(act);
        if (!on) break;
        lanef s;
        const nb_lane_t nb = orca_packet_neighbor(x, nbs, kat, m, act, &pa, 1, &s);
        const orca3_lane_planes_t q = orca3_planes_core(nb.dx, nb.dy, nb.dz, nb.rvx, nb.rvy, nb.rvz, nb.rad,
                                                        s, pa.itau, pa.o.vx0, pa.o.vy0, pa.o.vz0);
        const size_t at = (size_t)m * L;
        lane_store(pl[0] + at, q.pt_x);
        lane_store(pl[1] + at, q.pt_y);
        lane_store(pl[2] + at, q.pt_z);
        lane_store(pl[3] + at, q.n_x);
        lane_store(pl[4] + at, q.n_y);
        lane_store(pl[5] + at, q.n_z);
        if (!diverged && (q.good & on) == on) continue;
        /* rare: as orca_packet's lines */
        if (!diverged) {
            lanei_store(nl, n);
            for (int l = 0; l < L; ++l) nl[l] = nl[l] < m ? nl[l] : m;
            diverged = 1;
        }
        _Alignas(64) float in[12][L];
        const lanef ins[12] = {nb.dx,  nb.dy, nb.dz,   nb.rvx,   nb.rvy,   nb.rvz,
                               nb.rad, s,     pa.itau, pa.o.vx0, pa.o.vy0, pa.o.vz0};
        for (int v = 0; v < 12; ++v) lane_store(in[v], ins[v]);
        for (int l = 0; l < L; ++l) {
            if (!(on >> l & 1u)) continue;
            orca_plane3_t plane;
            int w;
            if (q.fast >> l & 1u) {
                plane = (orca_plane3_t){{pl[0][at + l], pl[1][at + l], pl[2][at + l]},
                                        {pl[3][at + l], pl[4][at + l], pl[5][at + l]}};
                w = (int)(q.good >> l & 1u);
            } else {
                w = orca3_plane_agent((vec3){in[0][l], in[1][l], in[2][l]},
                                      (vec3){in[3][l], in[4][l], in[5][l]}, in[6][l], in[8][l], x->inv_dt,
                                      in[7][l], (vec3){in[9][l], in[10][l], in[11][l]}, &plane);
            }
            if (!w) continue;
            const size_t to = (size_t)nl[l]++ * L + (size_t)l;
            pl[0][to] = plane.point.x;
            pl[1][to] = plane.point.y;
            pl[2][to] = plane.point.z;
            pl[3][to] = plane.normal.x;
            pl[4][to] = plane.normal.y;
            pl[5][to] = plane.normal.z;
        }
    }
    if (diverged) n = lanei_load(nl);

    /* orca3_solve's speed limit, target and first best, then the programs */
    const lanef zero = lane_zero();
    const lanef radius = lane_select(
        lane_mask_and(lane_cmp_gt(pa.vmax, zero), lane_cmp_lt(pa.vmax, lane_set1(INFINITY))), pa.vmax, zero);
    const lanem tfin =
        lane_mask_and(lane_mask_and(lane_finite(pa.tx), lane_finite(pa.ty)), lane_finite(pa.tz));
    const lanef tx = lane_select(tfin, pa.tx, zero), ty = lane_select(tfin, pa.ty, zero),
                tz = lane_select(tfin, pa.tz, zero);
    lanef bx = tx, by = ty, bz = tz;
    uint32_t odd;
    lane_clamp_length3(&bx, &by, &bz, radius, &odd);
    const float* const planes[6] = {pl[0], pl[1], pl[2], pl[3], pl[4], pl[5]};
    float* const tmp[4] = {tl[0], tl[1], tl[2], tl[3]};
    lanei fail_at;
    uint32_t redo;
    const uint32_t failed =
        odd | orca3_lp_lanes(planes, n, nmax, radius, tx, ty, tz, tmp, &bx, &by, &bz, &fail_at, &redo);
    _Alignas(64) float out[6][L];
    lane_store(out[0], bx);
    lane_store(out[1], by);
    lane_store(out[2], bz);
    _Alignas(64) int32_t row[L];
    lanei_store(row, pa.rows);
    const int32_t from = x->crow_in_order ? r0 : -1;
    packet_column_store(a->dx, row, from, bx);
    packet_column_store(a->dy, row, from, by);
    packet_column_store(a->dz, row, from, bz);
    if (failed) {
        lane_store(out[3], tx);
        lane_store(out[4], ty);
        lane_store(out[5], tz);
        _Alignas(64) float lim[L];
        lane_store(lim, pa.vmax);
        lanei_store(nl, n);
        _Alignas(64) int32_t fat[L];
        lanei_store(fat, fail_at);
        orca_plane3_t planes3[CROWD_MAX_NEIGHBORS], scratch[CROWD_MAX_NEIGHBORS];
        orca_line2_t line_scratch[CROWD_MAX_NEIGHBORS];
        for (int l = 0; l < L; ++l) {
            if (!(failed >> l & 1u)) continue;
            for (int32_t m = 0; m < nl[l]; ++m) {
                const size_t at = (size_t)m * L + (size_t)l;
                planes3[m] =
                    (orca_plane3_t){{pl[0][at], pl[1][at], pl[2][at]}, {pl[3][at], pl[4][at], pl[5][at]}};
            }
            /* the fallback from where the program failed, with its best so
             * far; lanes that met a case only the scalar functions take,
             * from the start */
            vec3 o;
            const orca_status_t st =
                (odd | redo) >> l & 1u
                    ? orca3_solve(planes3, nl[l], 0, lim[l], (vec3){out[3][l], out[4][l], out[5][l]}, scratch,
                                  line_scratch, &o)
                    : orca3_solve_failed(planes3, nl[l], 0, lim[l], fat[l],
                                         (vec3){out[0][l], out[1][l], out[2][l]}, scratch, line_scratch, &o);
            a->dx[row[l]] = o.x;
            a->dy[row[l]] = o.y;
            a->dz[row[l]] = o.z;
            *relaxed += st != ORCA_FEASIBLE;
        }
    }
}

#ifdef CROWD_WIDE
void orca_range_wide(int32_t begin, int32_t end, int32_t worker, void* vctx)
#else
static void orca_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
#endif
{
    const orca_ctx_t* x = (const orca_ctx_t*)vctx;
    const world_t* w = x->w;
    const grid_t* g = x->g;
    const agent_view_t* a = &x->a;
    const crowd_view_t* c = &x->c;
    const int three = w->dims == 3;
    /* + SHOAL_MAX_LANES: room for a whole lane of lines past the last
     * (orca2_lines_lane) */
    orca_line2_t lines[CROWD_MAX_NEIGHBORS + CROWD_MAX_OBSTACLES + SHOAL_MAX_LANES];
    orca_line2_t line_scratch[CROWD_MAX_NEIGHBORS + CROWD_MAX_OBSTACLES];
    orca_plane3_t planes[CROWD_MAX_NEIGHBORS + CROWD_MAX_OBSTACLES];
    orca_plane3_t plane_scratch[CROWD_MAX_NEIGHBORS + CROWD_MAX_OBSTACLES];
    int64_t relaxed = 0;
    nearest_cache_t runs; /* this range's queries, of this step's grid */
    nearest_cache_init(&runs);
    _Alignas(64) float jitter[3][CROWD_JITTER_BLOCK];
    int32_t jitter_at = begin, jitter_end = begin;
    /* a lane of plain rows at a time where the world allows (orca_packet) */
    const int packets =
        g && x->scrow && !g->wrap && (three || x->walls->seg_count == 0) && x->obs->obstacle_high == 0;
    for (int32_t r = begin; r < end; ++r) {
        if (r == jitter_end) {
            jitter_at = r;
            jitter_end = end - r < CROWD_JITTER_BLOCK ? end : r + CROWD_JITTER_BLOCK;
            crowd_jitter_block(x, r, jitter_end - r, jitter);
        }
        if (packets && jitter_end - r >= SHOAL_LANES && orca_plain(c, r)) {
            const int32_t j = r - jitter_at;
            if (three)
                orca_packet3(x, r, jitter[0] + j, jitter[1] + j, jitter[2] + j, worker, &runs, &relaxed);
            else
                orca_packet(x, r, jitter[0] + j, jitter[1] + j, worker, &runs, &relaxed);
            r += SHOAL_LANES - 1;
            continue;
        }
        int32_t i = c->agent_row[r];
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
        vec3 vel = {a->vx[i], a->vy[i], three ? a->vz[i] : 0.0f};
        vec3 pref = {a->dx[i], a->dy[i], three ? a->dz[i] : 0.0f};
        float cap = c->pref_speed[r];
        if (cap > 0.0f) {
            float len2 = vec3_dot(pref, pref);
            if (len2 > cap * cap) pref = vec3_scale(pref, cap / sqrtf(len2));
        }
        pref.x += CROWD_JITTER * jitter[0][r - jitter_at];
        pref.y += CROWD_JITTER * jitter[1][r - jitter_at];
        if (three) pref.z += CROWD_JITTER * jitter[2][r - jitter_at];
        float ri = a->radius[i], vmax = a->max_speed[i];
        float inv_tau = 1.0f / c->tau[r], inv_tau_w = 1.0f / c->tau_walls[r];
        float share = c->resp[r];
        int32_t n = 0;

        /* Obstacles: hard constraints, first. */
        const obstacle_set_t* obs = x->obs;
        float reach_w = c->tau_walls[r] * vmax + ri;
        for (int32_t o = 0; o < obs->obstacle_high && n < CROWD_MAX_OBSTACLES; ++o) {
            const float* ob = obs->obstacles[o];
            if (ob[3] < 0.0f) continue;
            vec3 d = {ob[0] - a->px[i], ob[1] - a->py[i], three ? ob[2] - a->pz[i] : 0.0f};
            float lim = reach_w + ob[3];
            if (vec3_dot(d, d) >= lim * lim) continue;
            const float* ov = obs->obstacle_velocities[o];
            vec3 rv = {vel.x - ov[0], vel.y - ov[1], three ? vel.z - ov[2] : 0.0f};
            if (three) {
                n += orca3_plane_agent(d, rv, ri + ob[3], inv_tau_w, x->inv_dt, 1.0f, vel, &planes[n]);
            } else {
                n += orca2_line_agent((vec2){d.x, d.y}, (vec2){rv.x, rv.y}, ri + ob[3], inv_tau_w, x->inv_dt,
                                      1.0f, (vec2){vel.x, vel.y}, &lines[n]);
            }
        }
        /* Walls (2D): hard constraints too. */
        int32_t wall_keep[CROWD_MAX_OBSTACLES];
        int32_t kept = 0;
        if (!three && x->walls->seg_count > 0) {
            /* Room for what the obstacles left; past it the nearest
             * segments are kept (the query's order among them), not the
             * first found: a wall of many short segments has hundreds in
             * reach, and the ones in front of the agent matter. */
            const int32_t room = CROWD_MAX_OBSTACLES - n;
            float keep_d2[CROWD_MAX_OBSTACLES];
            /* no wall nearer than reach_w or the nearest found (the query
             * lists every segment within reach_w) */
            float wall_d2 = room > 0 ? reach_w * reach_w : 0.0f;
            wall_query_t q;
            walls_query_begin(&q, x->walls, worker, a->px[i], a->py[i], reach_w);
            for (int32_t s; room > 0 && (s = walls_query_next(&q)) >= 0;) {
                float qx, qy;
                walls_nearest(x->walls->seg[s], a->px[i], a->py[i], &qx, &qy);
                float d2 = (qx - a->px[i]) * (qx - a->px[i]) + (qy - a->py[i]) * (qy - a->py[i]);
                wall_d2 = d2 < wall_d2 ? d2 : wall_d2;
                if (kept < room) {
                    wall_keep[kept] = s;
                    keep_d2[kept++] = d2;
                    continue;
                }
                int32_t far = 0;
                for (int32_t m = 1; m < kept; ++m) far = keep_d2[m] > keep_d2[far] ? m : far;
                if (d2 >= keep_d2[far]) continue;
                for (int32_t m = far; m + 1 < kept; ++m) { /* the order found, kept */
                    wall_keep[m] = wall_keep[m + 1];
                    keep_d2[m] = keep_d2[m + 1];
                }
                wall_keep[kept - 1] = s;
                keep_d2[kept - 1] = d2;
            }
            walls_query_end(&q);
            x->wall_clear[r] = sqrtf(wall_d2);
            for (int32_t m = 0; m < kept; ++m) {
                const float* sg = x->walls->seg[wall_keep[m]];
                vec2 p0 = {sg[0] - a->px[i], sg[1] - a->py[i]}, p1 = {sg[2] - a->px[i], sg[3] - a->py[i]};
                n += orca2_line_wall(p0, p1, ri, (vec2){vel.x, vel.y}, inv_tau_w, x->inv_dt, &lines[n]);
            }
        }
        const int32_t n_static = n;

        /* Neighbors. The nearest few are kept for the contact pass. */
        nearest_t nb;
        orca_neighbors(x, r, i, p, vmax, three, worker, &runs, &nb);
        if (g) {
            float gap_time = c->time_gap[r], speed = sqrtf(vec3_dot(pref, pref));
            /* Carried backwards (2D, keeping right): moving against the
             * way the agent wants to go. ORCA plans from the current
             * velocities, so a walker caught in the other direction's lane
             * sits in a cage of neighbors at its own velocity: no relative
             * motion, every constraint forbids closing in on a touching
             * neighbor, and the one velocity they all allow is the cage's.
             * It then takes no share in avoiding the neighbors that walk
             * head-on against it (below): it presses on, turned right, and
             * the contact pass parts them. */
            const vec3 way = speed > 0.0f ? vec3_scale(pref, 1.0f / speed) : pref;
            const int carried = c->side[r] > 0.0f && !three && vec3_dot(vel, way) < 0.0f;
            /* The time gap (Tordeux, Chraibi and Seyfried's collision-free
             * speed model): no faster than the free walk to the leader,
             * the nearest neighbor ahead that blocks the agent's way, takes
             * time_gap seconds, and never slower than CROWD_GAP_FLOOR of
             * the preferred speed. A leader is ahead in the preferred
             * direction with its center within the sum of radii of the
             * agent's line (the agent's body would touch it), ahead of the
             * agent along their common way, wants to go the same way (its
             * behaviors' velocity in 2D, else its velocity, within
             * CROWD_GAP_SAME_WAY) and walks it faster than
             * CROWD_GAP_LEADER of the agent's preferred speed. A one-way
             * crowd then slows with density as
             * Weidmann's data do. A neighbor that comes the other way,
             * crosses, stands or is held up itself is left to ORCA: waiting
             * for it deadlocks crossing flows (the agents queued behind
             * each flow's front stop pressing, and nobody steps aside), and
             * the floor keeps a crowd at a door pressing on. */
            /* a lane of neighbors at a time (2D, crowd rows known): nb.k
             * padded past count with a position that exists */
            const int lanes2d = !three && x->scrow && nb.count > 0;
            if (lanes2d)
                for (int32_t m = nb.count; m < nb.count + SHOAL_LANES; ++m) nb.k[m] = nb.k[0];
            if (gap_time > 0.0f && speed > 0.0f) {
                /* the way first, then turned left and right by each angle */
                vec3 u[1 + 2 * CROWD_TURNS];
                float free_walk[1 + 2 * CROWD_TURNS];
                u[0] = way;
                int dirs = 1;
                if (!three)
                    for (int t = 0; t < CROWD_TURNS; ++t) {
                        const float cs = crowd_turn_cos[t], sn = crowd_turn_sin[t];
                        u[dirs++] = (vec3){cs * way.x - sn * way.y, sn * way.x + cs * way.y, 0.0f};
                        u[dirs++] = (vec3){cs * way.x + sn * way.y, cs * way.y - sn * way.x, 0.0f};
                    }
                if (lanes2d) gap_free_walk_lanes(x, g, &nb, p, ri, u, dirs, speed, free_walk);
                if (!lanes2d) {
                    for (int t = 0; t < dirs; ++t) free_walk[t] = INFINITY;
                    for (int32_t m = 0; m < nb.count; ++m) {
                        int32_t k = nb.k[m];
                        vec3 d = {image(g, g->sx[k] - p[0], 0), image(g, g->sy[k] - p[1], 1),
                                  three ? image(g, g->sz[k] - p[2], 2) : 0.0f};
                        float rad = ri + (x->scrow ? x->sradius[k] : a->radius[g->order[k]]);
                        vec3 lv = {g->svx[k], g->svy[k], three ? g->svz[k] : 0.0f};
                        float walks = vec3_dot(lv, way);
                        if (!(walks > CROWD_GAP_LEADER * speed)) continue;
                        vec3 wants = lv;
                        int32_t cr = three      ? -1
                                     : x->scrow ? x->scrow[k]
                                                : component_row(x->crowd, x->slots[g->order[k]]);
                        if (cr >= 0)
                            wants = (vec3){x->intent[2 * (size_t)cr], x->intent[2 * (size_t)cr + 1], 0.0f};
                        float w_len = sqrtf(vec3_dot(wants, wants));
                        if (!(vec3_dot(wants, way) > CROWD_GAP_SAME_WAY * w_len)) continue;
                        vec3 common = {way.x * w_len + wants.x, way.y * w_len + wants.y,
                                       way.z * w_len + wants.z};
                        if (!(vec3_dot(d, common) > 0.0f)) continue;
                        float dd = vec3_dot(d, d);
                        for (int t = 0; t < dirs; ++t) {
                            float along = vec3_dot(d, u[t]);
                            float lateral2 = dd - along * along;
                            if (!(along > 0.0f) || !(lateral2 < rad * rad)) continue;
                            float room = along - CROWD_GAP_BODY * sqrtf(rad * rad - lateral2);
                            free_walk[t] = room < free_walk[t] ? room : free_walk[t];
                        }
                    }
                }
                const float floor_speed = CROWD_GAP_FLOOR * speed;
                float limit = fmaxf(floor_speed, fmaxf(0.0f, free_walk[0]) / gap_time);
                vec3 go = way;
                if (limit < speed && dirs > 1) {
                    /* Held up: take the turned way that gains most along
                     * the way, if it gains clearly (Moussaid, Helbing and
                     * Theraulaz, "How simple rules determine pedestrian
                     * behavior and crowd disasters", 2011: the direction
                     * of freest progress). Walls limit a turned way too. */
                    float best = limit * (1.0f + CROWD_TURN_GAIN);
                    for (int t = 1; t < dirs; ++t) {
                        float f = fminf(free_walk[t], crowd_wall_room(x->walls, wall_keep, kept, a->px[i],
                                                                      a->py[i], ri, u[t]));
                        float sp = fminf(speed, fmaxf(floor_speed, fmaxf(0.0f, f) / gap_time));
                        float gain = sp * crowd_turn_cos[(t - 1) / 2];
                        if (gain > best) {
                            best = gain;
                            limit = sp;
                            go = u[t];
                        }
                    }
                }
                if (limit < speed || go.x != way.x || go.y != way.y)
                    pref = vec3_scale(go, fminf(limit, speed));
            }
            /* Keep right (2D): a neighbor coming the other way (faster
             * than a quarter of the agent's preferred speed toward it),
             * ahead within time_horizon of walking and within two sums
             * of radii of its line, turns the preferred velocity to the
             * right by up to atan(side_preference), more the closer it
             * is; the speed stays. Both of a pair turn to their own
             * right, so they pass left side to left side, and opposite
             * flows sort into lanes instead of pressing head-on. */
            float side = c->side[r];
            speed = sqrtf(vec3_dot(pref, pref));
            if (side > 0.0f && !three && speed > 0.0f) {
                vec3 u = vec3_scale(pref, 1.0f / speed);
                vec3 right = {u.y, -u.x, 0.0f};
                float look = c->tau[r] * speed, closest = 0.0f;
                if (lanes2d) closest = keep_right_closest_lanes(x, g, &nb, p, ri, u, right, look, speed);
                for (int32_t m = 0; !lanes2d && m < nb.count; ++m) {
                    int32_t k = nb.k[m];
                    vec3 d = {image(g, g->sx[k] - p[0], 0), image(g, g->sy[k] - p[1], 1), 0.0f};
                    float along = vec3_dot(d, u), lateral = vec3_dot(d, right);
                    float rad = ri + (x->scrow ? x->sradius[k] : a->radius[g->order[k]]);
                    float comes = g->svx[k] * u.x + g->svy[k] * u.y;
                    if (!(along > 0.0f) || !(along < look) || !(fabsf(lateral) < 2.0f * rad) ||
                        !(comes < -0.25f * speed))
                        continue;
                    float near_by = 1.0f - along / look;
                    closest = near_by > closest ? near_by : closest;
                }
                if (closest > 0.0f) {
                    vec3 turned = vec3_add(pref, vec3_scale(right, side * speed * closest));
                    pref = vec3_scale(turned, speed / sqrtf(vec3_dot(turned, turned)));
                }
            }
            if (!(share > 0.0f)) nb.count = 0; /* responsibility 0 ignores others */
            const int seen = !three && gap_time > 0.0f && speed > 0.0f;
            /* how held up it is: 1 standing, 0 at half its preferred speed or faster */
            const float held = seen ? fmaxf(0.0f, 1.0f - sqrtf(vec3_dot(vel, vel)) / (0.5f * speed)) : 0.0f;
            if (!three && x->scrow && !carried) {
                /* 2D: each lane of neighbors' offsets, velocities, radii and
                 * shares gathered from the sorted arrays straight into
                 * registers, then their lines (orca2_lines_lane: the same
                 * values, ops and order as the arrays below) */
                const vec2 v2 = {vel.x, vel.y};
                if (nb.count > 0 && isfinite(inv_tau) && isfinite(x->inv_dt) && isfinite(v2.x) &&
                    isfinite(v2.y)) {
                    const lanef mine = lane_set1(share), whole = lane_set1(1.0f);
                    const nb_origin_t o = nb_origin(p, vel, ri);
                    for (int32_t m0 = 0; m0 < nb.count; m0 += SHOAL_LANES) {
                        const int lanes = nb.count - m0 < SHOAL_LANES ? nb.count - m0 : SHOAL_LANES;
                        const nb_lane_t nl = nb_lane_gather(x, g, nb.k + m0, lanes, &o, 0);
                        lanef s = lane_select(lanei_nonneg(nl.cr), mine, whole);
                        if (seen)
                            s = attention_share_lanes(x, nl.cr, nl.dx, nl.dy, way, share, x->bold[r], held);
                        n += orca2_lines_lane(nl.dx, nl.dy, nl.rvx, nl.rvy, nl.rad, s, lanes, inv_tau,
                                              x->inv_dt, v2, 1, &lines[n]);
                    }
                }
            } else {
                /* The neighbors' offsets first, then their lines (planes in 3D) a
                 * SIMD lane each (orca2_lines_agents, orca3_planes_agents: the
                 * same ones in the same order as one at a time). */
                enum { B = CROWD_MAX_NEIGHBORS + SHOAL_MAX_LANES }; /* read a whole lane at a time */
                float bx[B], by[B], bz[B], bvx[B], bvy[B], bvz[B], brad[B], bs[B];
                int32_t nn = 0;
                const int lanes3d = three && x->scrow && nb.count > 0;
                if (lanes3d) {
                    /* 3D, crowd rows known (nobody is carried or seen):
                     * each lane of neighbors gathered from the sorted
                     * arrays, as the loop below computes them; nb.k padded
                     * past count with the first, as the arrays are below */
                    for (int32_t m = nb.count; m < nb.count + SHOAL_LANES; ++m) nb.k[m] = nb.k[0];
                    const lanef mine = lane_set1(share), whole = lane_set1(1.0f);
                    const nb_origin_t o = nb_origin(p, vel, ri);
                    for (int32_t m0 = 0; m0 < nb.count; m0 += SHOAL_LANES) {
                        const nb_lane_t nl = nb_lane_gather(x, g, nb.k + m0, nb.count - m0, &o, 1);
                        lane_storeu(bx + m0, nl.dx);
                        lane_storeu(by + m0, nl.dy);
                        lane_storeu(bz + m0, nl.dz);
                        lane_storeu(bvx + m0, nl.rvx);
                        lane_storeu(bvy + m0, nl.rvy);
                        lane_storeu(bvz + m0, nl.rvz);
                        lane_storeu(brad + m0, nl.rad);
                        lane_storeu(bs + m0, lane_select(lanei_nonneg(nl.cr), mine, whole));
                    }
                    nn = nb.count;
                }
                for (int32_t m = 0; !lanes3d && m < nb.count; ++m) {
                    int32_t k = nb.k[m];
                    int32_t crow = x->scrow ? x->scrow[k] : component_row(x->crowd, x->slots[g->order[k]]);
                    if (carried && crow >= 0) {
                        const float* q = x->intent + 2 * (size_t)crow;
                        float qa = q[0] * way.x + q[1] * way.y;
                        if (qa < -CROWD_HEAD_ON * sqrtf(q[0] * q[0] + q[1] * q[1])) continue;
                    }
                    vec3 d = {image(g, g->sx[k] - p[0], 0), image(g, g->sy[k] - p[1], 1),
                              three ? image(g, g->sz[k] - p[2], 2) : 0.0f};
                    vec3 rv = {vel.x - g->svx[k], vel.y - g->svy[k], three ? vel.z - g->svz[k] : 0.0f};
                    int crowd_j = crow >= 0;
                    float s = crowd_j ? share : 1.0f;
                    if (seen) s = attention_share(x, crow, d.x, d.y, way, share, x->bold[r], held);
                    float rad =
                        CROWD_PLAN_RADIUS * (ri + (x->scrow ? x->sradius[k] : a->radius[g->order[k]]));
                    bx[nn] = d.x, by[nn] = d.y, bz[nn] = d.z, bvx[nn] = rv.x, bvy[nn] = rv.y, bvz[nn] = rv.z;
                    brad[nn] = rad, bs[nn] = s;
                    nn++;
                }
                for (int32_t m = nn; nn > 0 && m < nn + SHOAL_MAX_LANES; ++m) {
                    bx[m] = bx[0], by[m] = by[0], bz[m] = bz[0], bvx[m] = bvx[0], bvy[m] = bvy[0],
                    bvz[m] = bvz[0];
                    brad[m] = brad[0], bs[m] = bs[0];
                }
                if (nn > 0 && three)
                    n += orca3_planes_agents(bx, by, bz, bvx, bvy, bvz, brad, bs, nn, inv_tau, x->inv_dt, vel,
                                             &planes[n]);
                else if (nn > 0)
                    n += orca2_lines_agents(bx, by, bvx, bvy, brad, bs, nn, inv_tau, x->inv_dt,
                                            (vec2){vel.x, vel.y}, &lines[n]);
            }
        }

        orca_status_t st;
        if (three) {
            vec3 out;
            st = orca3_solve(planes, n, n_static, vmax, pref, plane_scratch, line_scratch, &out);
            a->dx[i] = out.x;
            a->dy[i] = out.y;
            a->dz[i] = out.z;
        } else {
            vec2 out;
            st = orca2_solve(lines, n, n_static, vmax, (vec2){pref.x, pref.y}, line_scratch, &out);
            a->dx[i] = out.x;
            a->dy[i] = out.y;
        }
        relaxed += st != ORCA_FEASIBLE;
    }
    x->relaxed[worker] += relaxed;
}

/* Whether any of the count crowd rows has a time gap or keeps right. */
#ifndef CROWD_WIDE /* the rest: once */

static int crowd_any_pedestrian(const crowd_view_t* c, int32_t count)
{
    const lanef zero = lane_zero();
    int32_t r = 0;
    for (; r + SHOAL_LANES <= count; r += SHOAL_LANES)
        if (lane_mask_any(lane_mask_or(lane_cmp_gt(lane_loadu(c->time_gap + r), zero),
                                       lane_cmp_gt(lane_loadu(c->side + r), zero))))
            return 1;
    for (; r < count; ++r)
        if (c->time_gap[r] > 0.0f || c->side[r] > 0.0f) return 1;
    return 0;
}

int crowd_lanes(const world_t* w)
{
    const crowd_world_t* cw = crowd_data(w);
    return cw && cw->orca_lanes ? cw->orca_lanes : SHOAL_LANES;
}

int64_t orca_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    const component_t* crowd = &w->comps[COMP_CROWD];
    int32_t count = crowd->table.count;
    if (count == 0) return 0;
    const grid_t* g = grid_data(w);
    if (g && g->count == 0) g = NULL;
    int64_t relaxed[SHOAL_MAX_THREADS];
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    memset(relaxed, 0, (size_t)workers * sizeof *relaxed);
    orca_ctx_t x = {
        .w = w,
        .g = g,
        .a = agent_view(w),
        .c = crowd_view_of(w),
        .crowd = crowd,
        .slots = table_slots(&w->agents),
        .id_lo = TABLE_COL(&w->agents, uint32_t, AC_ID_LO),
        .id_hi = TABLE_COL(&w->agents, uint32_t, AC_ID_HI),
        .obs = obstacles_of(w),
        .walls = walls_of(w),
        .inv_dt = 1.0f / dt,
        .seed_round = rng_seed_round(w->seed),
        .step = w->step_count,
        .near = crowd_data(w)->near,
        .intent = crowd_data(w)->intent,
        .bold = crowd_data(w)->bold,
        .relaxed = relaxed,
        .sorted_at = g ? grid_positions_par(w, grid_data(w)) : NULL,
        .hint = crowd_data(w)->hint,
        .dt = dt,
        .clear = crowd_data(w)->clear,
        .wall_clear = crowd_data(w)->wall_clear,
    };
    crowd_world_t* cw = crowd_data(w);
    cw->radius_step = -1;
    /* Neighbor lists: in an unbounded world of crowd agents alone, kept
     * while its rows stay as they were. */
    const int lists = g && !g->wrap && g->count <= cw->sorted_capacity && cw->list &&
                      w->agents.count == count && g->count == count && !cw->lists_off;
    int64_t list_counts[CROWD_COUNTS * SHOAL_MAX_THREADS];
    memset(list_counts, 0, (size_t)(CROWD_COUNTS * workers) * sizeof *list_counts);
    x.list_counts = list_counts;
    if (!lists || cw->list_structure != w->structure_version || cw->list_rows != count ||
        cw->list_removed != cw->removed)
        cw->prev_ok = 0;
    float moved_w[SHOAL_MAX_THREADS];
    if (g && g->count <= cw->sorted_capacity) { /* else looked up per neighbor */
        float rmax[SHOAL_MAX_THREADS];
        for (int32_t k = 0; k < workers; ++k) rmax[k] = moved_w[k] = 0.0f;
        x.scrow = cw->sorted_crow;
        x.sradius = cw->sorted_radius;
        x.srec = cw->rec_reads ? cw->sorted_rec : NULL;
        x.rmax = rmax;
        x.lists = lists ? cw : NULL;
        x.prev_ok = cw->prev_ok;
        x.crow_in_order = world_component_in_agent_order(w, COMP_CROWD);
        x.moved_w = moved_w;
        par_for(w, g->count, 1024, PAR_STATIC, sorted_range, &x);
        cw->radius_max = 0.0f;
        for (int32_t k = 0; k < workers; ++k)
            cw->radius_max = rmax[k] > cw->radius_max ? rmax[k] : cw->radius_max;
        cw->radius_step = (int64_t)w->step_count;
        x.rmax = NULL;
    }
    if (lists) {
        float most = 0.0f;
        for (int32_t k = 0; k < workers; ++k) most = moved_w[k] > most ? moved_w[k] : most;
        /* past CROWD_LIST_MOVED_MAX summed (or in one move) every list is
         * built again: the sum stays where a double's rounding of it is far
         * below what each pass adds for it (the 1e-9) */
        x.list_fresh = cw->prev_ok && most < CROWD_LIST_MOVED_MAX && cw->moved < CROWD_LIST_MOVED_MAX;
        if (x.list_fresh) {
            cw->moved += (double)most * (1.0 + 1e-5) + 1e-9;
            cw->moved_last = most;
        } else {
            cw->moved = 0.0; /* every row builds its list this pass */
        }
        x.moved = cw->moved;
        x.moved_last = cw->moved_last;
        /* A list's entries were within sqrt(list_r2) of where its agent was
         * when it was built and have moved less than that since (while its
         * bound is above 0): any two of them are less than 4 sqrt(list_r2)
         * apart, fewer than 32,000 cells (and a few more for rounding)
         * below key_r2, which the keys need (sorted_cell_key). */
        if (g && g->dims == 2) {
            const float inv = g->inv_cell[0] > g->inv_cell[1] ? g->inv_cell[0] : g->inv_cell[1];
            const float reach = 8000.0f / inv;
            x.key_r2 = g->direct ? INFINITY : reach * reach;
        }
        cw->prev_ok = 1;
        cw->list_structure = w->structure_version;
        cw->list_rows = count;
        cw->list_removed = cw->removed;
    }
    /* what neighbors want and how bold they are: read only by rows with a
     * time gap or keeping right (2D) */
    if (w->dims == 2 && crowd_any_pedestrian(&x.c, count))
        par_for(w, count, 1024, PAR_STATIC, intent_range, &x);
    /* 16 lanes in 3D and for lists longer than 12 on average at the last
     * pass, where the build has them (CROWD_HAS_WIDE, above) */
    rows_fn* range = orca_range;
    cw->orca_lanes = SHOAL_LANES;
#ifdef CROWD_HAS_WIDE
    if (cw->lanes_forced ? cw->lanes_forced == 16 : w->dims == 3 || cw->list_long) {
        range = orca_range_wide;
        cw->orca_lanes = 16;
    }
#endif
    /* Neighbor counts vary with density: claimed blocks, started where the
     * rows' data already is. */
    par_for(w, count, 64, PAR_AFFINE, range, &x);
    int64_t total = 0, listable = 0, entries = 0;
    for (int32_t k = 0; k < workers; ++k) {
        total += relaxed[k];
        cw->list_held += list_counts[CROWD_COUNTS * k];
        cw->list_built += list_counts[CROWD_COUNTS * k + 1];
        listable += list_counts[CROWD_COUNTS * k + 2];
        entries += list_counts[CROWD_COUNTS * k + 3];
    }
    cw->list_long = entries > 12 * listable;
    crowd_data(w)->relaxed_last = total;
    crowd_data(w)->relaxed_total += total;
    return count;
}

/* ---- integrate: crowd_move ----------------------------------------------- */

typedef struct move_ctx {
    world_t* w;
    agent_view_t a;
    const int32_t* agent_row;
    float *x0, *y0, *z0;
    float* row_travel; /* per crowd row: |v| dt */
    float dt;
    float* travel; /* per worker: the largest |v| dt */
    int lanes;     /* lanes of consecutive rows are moved at once */
} move_ctx_t;

/* quat_from_yaw_pitch_roll(yaw, pitch, 0) a lane at a time: (cos, 0, 0,
 * sin) of half the yaw times (cos, 0, -sin, 0) of half the pitch, into q
 * (w, x, y, z). */
static inline void lane_yaw_pitch_quat(lanef yaw, lanef pitch, lanef q[4])
{
    const lanef half = lane_set1(0.5f);
    lanef sy, cy, sp, cp;
    lane_sincos(lane_mul(half, yaw), &sy, &cy);
    lane_sincos(lane_mul(half, pitch), &sp, &cp);
    q[0] = lane_mul(cy, cp);
    q[1] = lane_mul(sy, sp);
    q[2] = lane_neg(lane_mul(cy, sp));
    q[3] = lane_mul(sy, cp);
}

static void move_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const move_ctx_t* x = (const move_ctx_t*)vctx;
    const agent_view_t* a = &x->a;
    const int three = x->w->dims == 3;
    const float dt = x->dt;
    /* headings a lane of agents at a time, and in 3D orientations
     * (lane_atan2, lane_sincos: the same bits at every width); where a
     * lane's crowd rows are consecutive agent rows (every row after a
     * reorder), all of it a lane at a time */
    float hx[SHOAL_MAX_LANES], hy[SHOAL_MAX_LANES], hz[SHOAL_MAX_LANES], hh[SHOAL_MAX_LANES],
        turn[SHOAL_MAX_LANES];
    float qw[SHOAL_MAX_LANES], qx[SHOAL_MAX_LANES], qy[SHOAL_MAX_LANES], qz[SHOAL_MAX_LANES];
    float fastest = 0.0f; /* the largest |v|^2 */
    /* 2D lanes of agents in consecutive rows, whole: the largest |v|^2 of
     * those and whether one was NaN kept apart, and folded in at the end
     * (a maximum in any order) */
    const lanef vdt = lane_set1(dt), zero = lane_zero(),
                still = lane_set1(CROWD_STILL_SPEED * CROWD_STILL_SPEED);
    lanef fast_l = zero;
    uint32_t nan_l = 0;
    for (int32_t r0 = begin; r0 < end; r0 += SHOAL_LANES) {
        const int32_t n = end - r0 < SHOAL_LANES ? end - r0 : SHOAL_LANES;
        const int32_t i0 = x->agent_row[r0];
        if (x->lanes && n == SHOAL_LANES &&
            lane_mask_all(
                lanei_cmp_eq(lanei_loadu(x->agent_row + r0), lanei_add(lanei_set1(i0), lanei_iota())))) {
            /* the scalar loop's operations, a lane at a time */
            const lanef vx = lane_loadu(a->dx + i0), vy = lane_loadu(a->dy + i0);
            const lanef vz = three ? lane_loadu(a->dz + i0) : zero;
            const lanef px = lane_loadu(a->px + i0), py = lane_loadu(a->py + i0);
            lane_storeu(x->x0 + r0, px);
            lane_storeu(x->y0 + r0, py);
            lane_storeu(a->vx + i0, vx);
            lane_storeu(a->vy + i0, vy);
            lane_storeu(a->px + i0, lane_add(px, lane_mul(vx, vdt)));
            lane_storeu(a->py + i0, lane_add(py, lane_mul(vy, vdt)));
            lane_storeu(a->fx + i0, zero);
            lane_storeu(a->fy + i0, zero);
            lane_storeu(a->tz + i0, zero);
            lane_storeu(a->oz + i0, zero);
            const lanef h2 = lane_add(lane_mul(vx, vx), lane_mul(vy, vy));
            const lanef v2 = lane_add(h2, lane_mul(vz, vz));
            fast_l = lane_select(lane_cmp_gt(v2, fast_l), v2, fast_l);
            nan_l |= lane_mask_bits(lane_mask_not(lane_cmp_eq(v2, v2)));
            lane_storeu(x->row_travel + r0, lane_mul(lane_sqrt(v2), vdt));
            if (!three) {
                const lanem moving = lane_cmp_gt(h2, still);
                if (lane_mask_any(moving))
                    lane_storeu(a->heading + i0,
                                lane_select(moving, lane_atan2(vy, vx), lane_loadu(a->heading + i0)));
                continue;
            }
            const lanef pz = lane_loadu(a->pz + i0);
            lane_storeu(x->z0 + r0, pz);
            lane_storeu(a->vz + i0, vz);
            lane_storeu(a->pz + i0, lane_add(pz, lane_mul(vz, vdt)));
            lane_storeu(a->fz + i0, zero);
            lane_storeu(a->tx + i0, zero);
            lane_storeu(a->ty + i0, zero);
            lane_storeu(a->ox + i0, zero);
            lane_storeu(a->oy + i0, zero);
            const lanef horiz = lane_sqrt(h2);
            const lanem moving = lane_cmp_gt(lane_add(lane_mul(horiz, horiz), lane_mul(vz, vz)), still);
            if (!lane_mask_any(moving)) continue;
            const lanef yaw = lane_atan2(vy, vx);
            lanef q[4];
            lane_yaw_pitch_quat(yaw, lane_atan2(vz, horiz), q);
            float* const at[5] = {a->heading, a->qw, a->qx, a->qy, a->qz};
            const lanef to[5] = {yaw, q[0], q[1], q[2], q[3]};
            for (int c = 0; c < 5; ++c)
                lane_storeu(at[c] + i0, lane_select(moving, to[c], lane_loadu(at[c] + i0)));
            continue;
        }
        uint32_t moving = 0;
        for (int32_t l = 0; l < n; ++l) {
            const int32_t r = r0 + l, i = x->agent_row[r];
            float vx = a->dx[i], vy = a->dy[i], vz = three ? a->dz[i] : 0.0f;
            x->x0[r] = a->px[i];
            x->y0[r] = a->py[i];
            if (three) x->z0[r] = a->pz[i];
            a->vx[i] = vx;
            a->vy[i] = vy;
            a->px[i] += vx * dt;
            a->py[i] += vy * dt;
            a->fx[i] = a->fy[i] = 0.0f;
            a->tz[i] = 0.0f;
            a->oz[i] = 0.0f;
            const float v2 = vx * vx + vy * vy + vz * vz;
            x->row_travel[r] = sqrtf(v2) * dt;
            fastest = v2 > fastest ? v2 : fastest; /* NaN: not counted (the check is then off, below) */
            if (!(v2 == v2)) fastest = INFINITY;
            hx[l] = vx;
            hy[l] = vy;
            if (three) {
                a->vz[i] = vz;
                a->pz[i] += vz * dt;
                a->fz[i] = a->tx[i] = a->ty[i] = 0.0f;
                a->ox[i] = a->oy[i] = 0.0f;
                const float horiz = sqrtf(vx * vx + vy * vy);
                hz[l] = vz;
                hh[l] = horiz;
                moving |= (uint32_t)(horiz * horiz + vz * vz > CROWD_STILL_SPEED * CROWD_STILL_SPEED) << l;
            } else {
                moving |= (uint32_t)(vx * vx + vy * vy > CROWD_STILL_SPEED * CROWD_STILL_SPEED) << l;
            }
        }
        if (!moving) continue;
        for (int32_t l = n; l < SHOAL_LANES; ++l) hx[l] = 1.0f, hy[l] = 0.0f, hz[l] = 0.0f, hh[l] = 1.0f;
        const lanef yaw = lane_atan2(lane_loadu(hy), lane_loadu(hx));
        lane_storeu(turn, yaw);
        if (three) {
            lanef q[4];
            lane_yaw_pitch_quat(yaw, lane_atan2(lane_loadu(hz), lane_loadu(hh)), q);
            lane_storeu(qw, q[0]);
            lane_storeu(qx, q[1]);
            lane_storeu(qy, q[2]);
            lane_storeu(qz, q[3]);
        }
        for (int32_t l = 0; l < n; ++l) {
            if (!(moving >> l & 1u)) continue;
            const int32_t i = x->agent_row[r0 + l];
            a->heading[i] = turn[l];
            if (three) {
                a->qw[i] = qw[l];
                a->qx[i] = qx[l];
                a->qy[i] = qy[l];
                a->qz[i] = qz[l];
            }
        }
    }
    float lanes_fast[SHOAL_MAX_LANES];
    lane_storeu(lanes_fast, fast_l);
    for (int l = 0; l < SHOAL_LANES; ++l) fastest = lanes_fast[l] > fastest ? lanes_fast[l] : fastest;
    if (nan_l) fastest = INFINITY;
    const float t = sqrtf(fastest) * dt;
    x->travel[worker] = t > x->travel[worker] ? t : x->travel[worker];
}

int64_t crowd_move_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    int32_t count = w->comps[COMP_CROWD].table.count;
    if (count == 0) return 0;
    float travel[SHOAL_MAX_THREADS];
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    for (int32_t k = 0; k < workers; ++k) travel[k] = 0.0f;
    move_ctx_t x = {.w = w,
                    .a = agent_view(w),
                    .agent_row = COMP_I(w, COMP_CROWD, COMP_ROW),
                    .x0 = crowd_data(w)->x0,
                    .y0 = crowd_data(w)->y0,
                    .z0 = crowd_data(w)->z0,
                    .row_travel = crowd_data(w)->travel,
                    .dt = dt,
                    .travel = travel,
                    .lanes = !crowd_data(w)->move_rows};
    par_for(w, count, 1024, PAR_STATIC, move_range, &x);
    crowd_world_t* cw = crowd_data(w);
    cw->travel_max = 0.0f;
    for (int32_t k = 0; k < workers; ++k)
        cw->travel_max = travel[k] > cw->travel_max ? travel[k] : cw->travel_max;
    cw->travel_step = (int64_t)w->step_count;
    return count;
}

/* ---- statistics ------------------------------------------------------------ */

/* Statistics over every pair: each agent with a body in a cell of a grid
 * of side twice the largest radius, sorted by cell; each crowd agent
 * checks the agents of its cell and the cells round it. */
typedef struct stat_item_t {
    uint64_t key;
    int32_t row;
} stat_item_t;

static int stat_item_cmp(const void* pa, const void* pb)
{
    const stat_item_t *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

static inline uint64_t stat_key(int64_t cx, int64_t cy, int64_t cz)
{
    uint64_t h = (uint64_t)cx * 0x9E3779B97F4A7C15ull ^ (uint64_t)cy * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)cz * 0x165667B19E3779F9ull;
    return h ^ (h >> 29);
}

/* The space the statistics judge in: the world's torus when it wraps
 * (read from the world, as there may be no grid before the first step). */
typedef struct stat_space_t {
    int wrap;
    double origin[3], extent[3];
} stat_space_t;

/* The cell of coordinate v along axis ax; on a torus the cells tile the
 * box (n of them, each at least `cell` wide). */
static inline int64_t stat_cell(const stat_space_t* sp, float v, int ax, double cell, int64_t* n)
{
    if (sp->wrap) {
        double e = sp->extent[ax], f = (double)v - sp->origin[ax];
        f -= e * floor(f / e);
        if (!(f >= 0.0 && f < e)) f = 0.0;
        int64_t m = (int64_t)fmin(floor(e / cell), 1e9);
        if (m < 1) m = 1;
        *n = m;
        int64_t c = (int64_t)(f / (e / (double)m));
        return c >= m ? m - 1 : c;
    }
    *n = 0;
    double c = floor((double)v / cell);
    return isfinite(c) && fabs(c) < 1e15 ? (int64_t)c : 0;
}

/* The nearest image of offset d on a torus. */
static inline float stat_image(const stat_space_t* sp, float d, int ax)
{
    if (!sp->wrap) return d;
    double e = sp->extent[ax];
    return (float)((double)d - e * nearbyint((double)d / e));
}

shoal_status_t shoal_world_crowd_stats(const shoal_world_t* w, shoal_crowd_stats_t* out)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "crowd_stats: out is NULL");
    if (w->in_step) return world_failc(w, SHOAL_ERR_BUSY, "crowd_stats: called from inside a step");
    const component_t* crowd = &w->comps[COMP_CROWD];
    const crowd_world_t* cw = crowd_data(w);
    const agent_view_t a = agent_view(w);
    const int three = w->dims == 3;
    const int32_t* agent_row = COMP_I(w, COMP_CROWD, COMP_ROW);
    const int32_t agents = w->agents.count;
    stat_space_t space = {.wrap = w->wrap != 0};
    for (int ax = 0; ax < 3; ++ax) {
        space.origin[ax] = w->bounds_min[ax];
        space.extent[ax] = (double)w->bounds_max[ax] - w->bounds_min[ax];
        if (ax < (three ? 3 : 2) && !(space.extent[ax] > 0.0)) space.wrap = 0;
    }
    const stat_space_t* sp = &space;
    shoal_crowd_stats_t st;
    memset(&st, 0, sizeof st);
    st.agents = crowd->table.count;
    st.closest_pair = INFINITY;
    st.relaxed_last_step = (int32_t)cw->relaxed_last;
    st.contact_iterations = contact_data(w)->iterations_last;
    float rmax = 0.0f;
    int32_t bodies = 0;
    for (int32_t i = 0; i < agents; ++i)
        if (a.radius[i] > 0.0f && isfinite(a.radius[i])) {
            rmax = a.radius[i] > rmax ? a.radius[i] : rmax;
            bodies++;
        }
    stat_item_t* items = NULL;
    if (st.agents > 0 && bodies > 1) {
        items = (stat_item_t*)mem_alloc(&w->alloc, (size_t)bodies * sizeof *items);
        if (!items)
            return world_failc(w, SHOAL_ERR_OUT_OF_MEMORY, "crowd_stats: out of memory for %d agents",
                               (int)bodies);
    }
    const double cell = 2.0 * (double)rmax;
    int64_t n[3] = {0, 0, 0};
    if (items) {
        int32_t k = 0;
        for (int32_t i = 0; i < agents; ++i) {
            if (!(a.radius[i] > 0.0f && isfinite(a.radius[i]))) continue;
            int64_t cx = stat_cell(sp, a.px[i], 0, cell, &n[0]), cy = stat_cell(sp, a.py[i], 1, cell, &n[1]),
                    cz = three ? stat_cell(sp, a.pz[i], 2, cell, &n[2]) : 0;
            items[k].key = stat_key(cx, cy, cz);
            items[k++].row = i;
        }
        qsort(items, (size_t)bodies, sizeof *items, stat_item_cmp);
    }
    const wall_set_t* ws = walls_of(w);
    const int walls_now = !three && ws->built_valid && ws->built == ws->version;
    for (int32_t r = 0; r < crowd->table.count; ++r) {
        int32_t i = agent_row[r];
        float ri = a.radius[i];
        float ex = a.target_x[i] - a.px[i], ey = a.target_y[i] - a.py[i],
              ez = three ? a.target_z[i] - a.pz[i] : 0.0f;
        st.arrived += ex * ex + ey * ey + ez * ez <= ri * ri;
        int over = 0;
        if (items) {
            int64_t ci[3] = {stat_cell(sp, a.px[i], 0, cell, &n[0]), stat_cell(sp, a.py[i], 1, cell, &n[1]),
                             three ? stat_cell(sp, a.pz[i], 2, cell, &n[2]) : 0};
            const int zr = three ? 1 : 0;
            /* the cells round it, each once (a wrapped axis of fewer than 3 cells repeats them) */
            uint64_t done[27];
            int done_n = 0;
            for (int dz = -zr; dz <= zr; ++dz)
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        int64_t c[3] = {ci[0] + dx, ci[1] + dy, ci[2] + dz};
                        for (int ax = 0; ax < 3; ++ax)
                            if (n[ax] > 0) c[ax] = ((c[ax] % n[ax]) + n[ax]) % n[ax];
                        uint64_t key = stat_key(c[0], c[1], c[2]);
                        int seen = 0;
                        for (int m = 0; m < done_n; ++m) seen |= done[m] == key;
                        if (seen) continue;
                        done[done_n++] = key;
                        /* the first item of this key */
                        int32_t lo = 0, hi = bodies;
                        while (lo < hi) {
                            int32_t mid = lo + (hi - lo) / 2;
                            if (items[mid].key < key)
                                lo = mid + 1;
                            else
                                hi = mid;
                        }
                        for (int32_t m = lo; m < bodies && items[m].key == key; ++m) {
                            int32_t j = items[m].row;
                            if (j == i) continue;
                            float d[3] = {a.px[j] - a.px[i], a.py[j] - a.py[i],
                                          three ? a.pz[j] - a.pz[i] : 0.0f};
                            for (int ax = 0; ax < (three ? 3 : 2); ++ax) d[ax] = stat_image(sp, d[ax], ax);
                            float ratio = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / (ri + a.radius[j]);
                            st.closest_pair = ratio < st.closest_pair ? ratio : st.closest_pair;
                            over |= ratio < 0.99f;
                        }
                    }
        }
        st.overlapping += over;
        /* walls: how deep the body is into the nearest segment in reach */
        if (!three && ws->segments > 0 && ri > 0.0f) {
            float deepest = 0.0f;
            if (walls_now) {
                wall_query_t q;
                walls_query_begin(&q, ws, 0, a.px[i], a.py[i], ri);
                for (int32_t s; (s = walls_query_next(&q)) >= 0;) {
                    float qx, qy;
                    walls_nearest(ws->seg[s], a.px[i], a.py[i], &qx, &qy);
                    float dist = hypotf(qx - a.px[i], qy - a.py[i]);
                    if (dist < ri) deepest = fmaxf(deepest, (ri - dist) / ri);
                }
                walls_query_end(&q);
            } else { /* walls changed since the last step: their points, segment by segment */
                for (int32_t wi = 0; wi < ws->wall_high; ++wi) {
                    const int32_t* f = ws->walls[wi];
                    int32_t cnt = f[WF_COUNT], segs = f[WF_CLOSED] ? cnt : cnt - 1;
                    for (int32_t k = 0; cnt > 1 && k < segs; ++k) {
                        const float* p0 = ws->points[f[WF_FIRST] + k];
                        const float* p1 = ws->points[f[WF_FIRST] + (k + 1) % cnt];
                        const float sg[4] = {p0[0], p0[1], p1[0], p1[1]};
                        float qx, qy;
                        walls_nearest(sg, a.px[i], a.py[i], &qx, &qy);
                        float dist = hypotf(qx - a.px[i], qy - a.py[i]);
                        if (dist < ri) deepest = fmaxf(deepest, (ri - dist) / ri);
                    }
                }
            }
            st.wall_penetration = fmaxf(st.wall_penetration, deepest);
            st.in_walls += deepest > 0.01f;
        }
    }
    if (items) mem_free(&w->alloc, items, (size_t)bodies * sizeof *items);
    *out = st;
    return SHOAL_OK;
}

/* ---- the module ------------------------------------------------------------ */

/* The contact candidates' allocation for n rows: CROWD_CONTACT_K words a
 * row whatever the dimension's stride (the reorder's scratch takes them
 * all: crowd_move_out) and a lane past the last row's, so that a row's
 * candidates are read a whole lane at a time (the lanes past them masked:
 * contacts.c, cand_chunk). */
static inline size_t crowd_near_bytes(size_t n)
{
    return (n * CROWD_CONTACT_K + SHOAL_MAX_LANES) * sizeof(int32_t);
}

/* Contact candidates for `rows` crowd rows; 0 when out of memory. */
static int crowd_reserve(world_t* w, int32_t rows)
{
    crowd_world_t* cw = crowd_data(w);
    if (rows <= cw->capacity) return 1;
    int32_t cap = rows < 64 ? 64 : rows + rows / 2;
    size_t old = (size_t)cw->capacity, n = (size_t)cap;
    int32_t* near = (int32_t*)mem_alloc(&w->alloc, crowd_near_bytes(n));
    float* intent = (float*)mem_alloc(&w->alloc, n * 2 * sizeof(float));
    float* bold = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    float* hint = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    float* clear = (float*)mem_alloc(&w->alloc, n * 2 * sizeof(float)); /* clear, wall_clear */
    int32_t* list = (int32_t*)mem_alloc(&w->alloc, crowd_list_bytes(n));
    int32_t* list_n = (int32_t*)mem_alloc(&w->alloc, n * sizeof(int32_t));
    float* list_r2 = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    double* list_base = (double*)mem_alloc(&w->alloc, n * sizeof(double));
    float* prev = (float*)mem_alloc(&w->alloc, n * 7 * sizeof(float));  /* prev, list_a[xyz] */
    float* start = (float*)mem_alloc(&w->alloc, n * 4 * sizeof(float)); /* x0, y0, z0, travel */
    if (!near || !intent || !bold || !hint || !clear || !list || !list_n || !list_r2 || !list_base || !prev ||
        !start) {
        mem_free(&w->alloc, near, crowd_near_bytes(n));
        mem_free(&w->alloc, intent, n * 2 * sizeof(float));
        mem_free(&w->alloc, bold, n * sizeof(float));
        mem_free(&w->alloc, hint, n * sizeof(float));
        mem_free(&w->alloc, clear, n * 2 * sizeof(float));
        mem_free(&w->alloc, list, crowd_list_bytes(n));
        mem_free(&w->alloc, list_n, n * sizeof(int32_t));
        mem_free(&w->alloc, list_r2, n * sizeof(float));
        mem_free(&w->alloc, list_base, n * sizeof(double));
        mem_free(&w->alloc, prev, n * 7 * sizeof(float));
        mem_free(&w->alloc, start, n * 4 * sizeof(float));
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "crowd: out of memory for %d crowd agents", (int)rows);
        return 0;
    }
    if (old) memcpy(near, cw->near, old * CROWD_CONTACT_K * sizeof(int32_t));
    for (size_t k = old * CROWD_CONTACT_K; k < n * CROWD_CONTACT_K + SHOAL_MAX_LANES; ++k) near[k] = -1;
    if (old) memcpy(hint, cw->hint, old * sizeof(float));
    for (size_t k = old; k < n; ++k) hint[k] = 0.0f;
    if (old) memcpy(clear, cw->clear, old * sizeof(float));
    if (old) memcpy(clear + n, cw->wall_clear, old * sizeof(float));
    for (size_t k = old; k < n; ++k) clear[k] = clear[n + k] = 0.0f;
    mem_free(&w->alloc, cw->near, crowd_near_bytes(old));
    mem_free(&w->alloc, cw->intent, old * 2 * sizeof(float));
    mem_free(&w->alloc, cw->bold, old * sizeof(float));
    mem_free(&w->alloc, cw->hint, old * sizeof(float));
    mem_free(&w->alloc, cw->clear, old * 2 * sizeof(float));
    /* the lists and prev start over (orca_run drops them: the rows changed) */
    for (size_t k = 0; k < n; ++k) list_n[k] = 0;
    mem_free(&w->alloc, cw->list, crowd_list_bytes(old));
    mem_free(&w->alloc, cw->list_n, old * sizeof(int32_t));
    mem_free(&w->alloc, cw->list_r2, old * sizeof(float));
    mem_free(&w->alloc, cw->list_base, old * sizeof(double));
    mem_free(&w->alloc, cw->prev, old * 7 * sizeof(float));
    /* the starts of this step, when a crowd agent added inside it grows
     * the scratch between crowd_move and the contact pass */
    if (old) {
        memcpy(start, cw->x0, old * sizeof(float));
        memcpy(start + n, cw->y0, old * sizeof(float));
        memcpy(start + 2 * n, cw->z0, old * sizeof(float));
        memcpy(start + 3 * n, cw->travel, old * sizeof(float));
    }
    mem_free(&w->alloc, cw->x0, old * 4 * sizeof(float));
    cw->x0 = start;
    cw->y0 = start + n;
    cw->z0 = start + 2 * n;
    cw->travel = start + 3 * n;
    cw->near = near;
    cw->intent = intent;
    cw->bold = bold;
    cw->hint = hint;
    cw->clear = clear;
    cw->wall_clear = clear + n;
    cw->list = list;
    cw->list_n = list_n;
    cw->list_r2 = list_r2;
    cw->list_base = list_base;
    cw->prev = prev;
    cw->list_ax = prev + 4 * n;
    cw->list_ay = prev + 5 * n;
    cw->list_az = prev + 6 * n;
    cw->prev_ok = 0;
    cw->capacity = cap;
    return 1;
}

/* Per sorted position scratch for `agents` agents; 0 when out of memory. */
static int crowd_reserve_sorted(world_t* w, int32_t agents)
{
    crowd_world_t* cw = crowd_data(w);
    if (agents <= cw->sorted_capacity && (cw->sorted_rec || !cw->rec_reads)) return 1;
    int32_t cap = agents < 64 ? 64 : agents + agents / 2;
    size_t old = (size_t)cw->sorted_capacity, n = (size_t)cap;
    int32_t* crow = (int32_t*)mem_alloc(&w->alloc, n * sizeof(int32_t));
    float* rad = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    float* rec = cw->rec_reads ? (float*)mem_alloc(&w->alloc, n * CROWD_REC * sizeof(float)) : NULL;
    if (!crow || !rad || (cw->rec_reads && !rec)) {
        mem_free(&w->alloc, crow, n * sizeof(int32_t));
        mem_free(&w->alloc, rad, n * sizeof(float));
        mem_free(&w->alloc, rec, n * CROWD_REC * sizeof(float));
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "crowd: out of memory for %d agents", (int)agents);
        return 0;
    }
    mem_free(&w->alloc, cw->sorted_crow, old * sizeof(int32_t));
    mem_free(&w->alloc, cw->sorted_radius, old * sizeof(float));
    mem_free(&w->alloc, cw->sorted_rec, old * CROWD_REC * sizeof(float));
    cw->sorted_crow = crow;
    cw->sorted_radius = rad;
    cw->sorted_rec = rec;
    cw->sorted_capacity = cap;
    return 1;
}

/* Before a step: scratch for every crowd row now live or queued, and for
 * every agent the spatial hash may sort. */
static int crowd_reserve_step(world_t* w)
{
    int32_t rows = w->comps[COMP_CROWD].table.count;
    return rows == 0 || (crowd_reserve(w, rows + w->pending_adds) &&
                         crowd_reserve_sorted(w, w->agents.count + w->pending_adds));
}

/* A crowd agent added inside a step (it goes live at a stage boundary). */
static int crowd_reserve_add(world_t* w, const shoal_agent_def_t* d)
{
    return !d->crowd.enabled || crowd_reserve(w, w->comps[COMP_CROWD].table.count + w->pending_adds + 1);
}

/* The reorder's move of the neighbor lists (crowd_agents_permuted): the
 * agents' permutation and, in `near` (the orca pass's, spent at the sense
 * stage), per old row its values (CROWD_MOVE_WORDS words) and at word
 * CROWD_MOVE_INV its new row. */
enum { CROWD_MOVE_WORDS = 11, CROWD_MOVE_INV = CROWD_CONTACT_K - 1 };
_Static_assert(CROWD_MOVE_WORDS <= CROWD_MOVE_INV, "a row's values and new row fit its near");
_Static_assert(sizeof(float) == sizeof(int32_t) && sizeof(double) == 2 * sizeof(int32_t), "words");
typedef struct crowd_move_ctx {
    crowd_world_t* cw;
    const int32_t* perm;
    int32_t count;
} crowd_move_ctx_t;

static void crowd_move_inverse(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const crowd_move_ctx_t* c = (const crowd_move_ctx_t*)vctx;
    for (int32_t i = begin; i < end; ++i)
        c->cw->near[(size_t)c->perm[i] * CROWD_CONTACT_K + CROWD_MOVE_INV] = i;
}

/* Row r's values (after the list's length, word 0) to the words v (out)
 * or from them: one table for both ways. */
static inline void crowd_move_words(crowd_world_t* cw, int32_t r, int32_t* v, int out)
{
    const struct {
        void* at;
        int word;
        size_t bytes;
    } f[] = {
        {&cw->list_r2[r], 1, sizeof(float)}, {&cw->list_base[r], 2, sizeof(double)},
        {&cw->list_ax[r], 4, sizeof(float)}, {&cw->list_ay[r], 5, sizeof(float)},
        {&cw->list_az[r], 6, sizeof(float)}, {cw->prev + 4 * (size_t)r, 7, 3 * sizeof(float)},
        {&cw->hint[r], 10, sizeof(float)},
    };
    for (size_t k = 0; k < sizeof f / sizeof f[0]; ++k) {
        if (out)
            memcpy(v + f[k].word, f[k].at, f[k].bytes);
        else
            memcpy(f[k].at, v + f[k].word, f[k].bytes);
    }
}

/* Old row o's values into its near, its list's entries renamed to the new
 * rows and copied to the back of its own row (a list longer than half a
 * row is dropped: its front and back would meet). */
static void crowd_move_out(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const crowd_move_ctx_t* c = (const crowd_move_ctx_t*)vctx;
    crowd_world_t* cw = c->cw;
    for (int32_t o = begin; o < end; ++o) {
        int32_t* v = cw->near + (size_t)o * CROWD_CONTACT_K;
        int32_t* row = cw->list + (size_t)o * CROWD_LIST_MAX;
        int32_t n = cw->list_n[o];
        if (n < 0 || n > CROWD_LIST_MAX / 2) n = 0;
        for (int32_t j = 0; j < n; ++j) {
            const int32_t e = row[j];
            if (e < 0 || e >= c->count) {
                n = 0;
                break;
            }
            row[CROWD_LIST_MAX - n + j] = cw->near[(size_t)e * CROWD_CONTACT_K + CROWD_MOVE_INV];
        }
        v[0] = n;
        crowd_move_words(cw, o, v, 1);
    }
}

/* New row i from old row perm[i]: its values and its list from the back
 * of the old row to the front of its own. */
static void crowd_move_in(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const crowd_move_ctx_t* c = (const crowd_move_ctx_t*)vctx;
    crowd_world_t* cw = c->cw;
    for (int32_t i = begin; i < end; ++i) {
        const int32_t o = c->perm[i];
        const int32_t* v = cw->near + (size_t)o * CROWD_CONTACT_K;
        const int32_t n = v[0];
        int32_t* to = cw->list + (size_t)i * CROWD_LIST_MAX;
        const int32_t* from = cw->list + (size_t)o * CROWD_LIST_MAX + (CROWD_LIST_MAX - n);
        for (int32_t j = 0; j < n; ++j) to[j] = from[j];
        cw->list_n[i] = n;
        crowd_move_words(cw, i, (int32_t*)v, 0);
    }
}

static void crowd_move_done(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    const crowd_move_ctx_t* c = (const crowd_move_ctx_t*)vctx;
    memset(c->cw->near + (size_t)begin * CROWD_CONTACT_K, 0xff,
           (size_t)(end - begin) * CROWD_CONTACT_K * sizeof(int32_t)); /* -1 throughout */
}

/* The reorder moved the agent rows: the neighbor lists, where they hold
 * (kept for this world, the crowd's rows moved with the agents'), move
 * with them, their entries renamed, rather than be built again; so do the
 * hints. Each list is the same set of agents, so nothing computed from
 * them changes. `near` serves as the move's scratch and is left empty (-1),
 * as the orca pass that writes it before the contact pass reads it finds
 * it. */
static void crowd_agents_permuted(world_t* w, const int32_t* perm, uint64_t was_version,
                                  const uint8_t* in_order)
{
    crowd_world_t* cw = crowd_data(w);
    const int32_t count = w->comps[COMP_CROWD].table.count;
    if (!cw || !cw->list || cw->lists_off || !cw->prev_ok || cw->list_structure != was_version ||
        cw->list_rows != count || cw->list_removed != cw->removed || w->agents.count != count ||
        !in_order[COMP_CROWD] || count > cw->capacity || count == 0)
        return;
    crowd_move_ctx_t c = {cw, perm, count};
    par_for(w, count, 4096, PAR_STATIC, crowd_move_inverse, &c);
    par_for(w, count, 4096, PAR_STATIC, crowd_move_out, &c);
    par_for(w, count, 4096, PAR_STATIC, crowd_move_in, &c);
    par_for(w, count, 4096, PAR_STATIC, crowd_move_done, &c);
    cw->list_structure = w->structure_version;
}

/* Crowd row r goes; the last row moves into it: its contact candidates
 * follow it. */
static void crowd_row_removed(world_t* w, int32_t agent_row, int32_t r, int32_t moved_agent_row)
{
    (void)agent_row;
    crowd_world_t* cw = crowd_data(w);
    cw->removed++; /* drops the neighbor lists */
    int32_t last = w->comps[COMP_CROWD].table.count - 1;
    near_row_removed(cw->near, cw->capacity, crowd_near_stride(w->dims == 3), r, last, moved_agent_row);
    if (cw->hint && r < cw->capacity && last < cw->capacity)
        cw->hint[r] = moved_agent_row >= 0 ? cw->hint[last] : 0.0f;
    if (cw->clear && r < cw->capacity && last < cw->capacity) {
        cw->clear[r] = moved_agent_row >= 0 ? cw->clear[last] : 0.0f;
        cw->wall_clear[r] = moved_agent_row >= 0 ? cw->wall_clear[last] : 0.0f;
    }
}

/* Whether this machine's cores read a lane of neighbors faster as records
 * (two 16-byte loads a lane and transposes) than as gathers, a gather a
 * value: at 100k on one thread, from fresh copies, a Zen 4 (AMD family 19h)
 * ran the circle 1.06 to 1.10 times as many agent-steps/s with records, the
 * grid 1.05 and the 3D sphere 1.07 (docs/dev/crowd-performance.md); on a
 * Zen 5 (family 1Ah), whose gathers are about twice as fast, records of four
 * of the values had run at 0.92 of the gathers' rate.
 * So gathers there and on later AMD families, records elsewhere (other x86
 * cores, and builds where a gather is emulated a value at a time). */
static int crowd_records_pay(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned int a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return 1;
    const int amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u; /* "AuthenticAMD" */
    if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return 1;
    unsigned int family = (a >> 8) & 0xfu;
    if (family == 0xfu) family += (a >> 20) & 0xffu;
    return family < 0x1au;
#else
    return 1;
#endif
}

static int crowd_init(world_t* w)
{
    crowd_world_t* cw = (crowd_world_t*)mem_calloc(&w->alloc, sizeof *cw);
    w->module_data[MOD_CROWD] = cw;
    if (cw) {
        cw->radius_step = cw->travel_step = -1;
        cw->rec_reads = crowd_records_pay();
    }
    return cw != NULL;
}

static void crowd_release(world_t* w)
{
    crowd_world_t* cw = crowd_data(w);
    if (!cw) return;
    size_t n = (size_t)cw->capacity;
    mem_free(&w->alloc, cw->near, crowd_near_bytes(n));
    mem_free(&w->alloc, cw->intent, n * 2 * sizeof(float));
    mem_free(&w->alloc, cw->bold, n * sizeof(float));
    mem_free(&w->alloc, cw->hint, n * sizeof(float));
    mem_free(&w->alloc, cw->clear, n * 2 * sizeof(float));
    mem_free(&w->alloc, cw->list, crowd_list_bytes(n));
    mem_free(&w->alloc, cw->list_n, n * sizeof(int32_t));
    mem_free(&w->alloc, cw->list_r2, n * sizeof(float));
    mem_free(&w->alloc, cw->list_base, n * sizeof(double));
    mem_free(&w->alloc, cw->prev, n * 7 * sizeof(float));
    mem_free(&w->alloc, cw->x0, n * 4 * sizeof(float));
    mem_free(&w->alloc, cw->sorted_crow, (size_t)cw->sorted_capacity * sizeof(int32_t));
    mem_free(&w->alloc, cw->sorted_radius, (size_t)cw->sorted_capacity * sizeof(float));
    mem_free(&w->alloc, cw->sorted_rec, (size_t)cw->sorted_capacity * CROWD_REC * sizeof(float));
    mem_free(&w->alloc, cw, sizeof *cw);
    w->module_data[MOD_CROWD] = NULL;
}

/* Crowd agents look for neighbors as far as their neighbor distance
 * (grid_use_t.reach). */
static float crowd_reach(world_t* w)
{
    const component_t* c = &w->comps[COMP_CROWD];
    if (c->table.count == 0) return -1.0f;
    return grid_column_max(w, TABLE_COL(&c->table, float, CR_NEIGHBOR_DISTANCE), c->table.count);
}

static const grid_use_t crowd_grid = {crowd_reach, NULL, 0, 0};
static void crowd_defaults(shoal_agent_def_t* d) { d->crowd = shoal_crowd_default(); }

static int crowd_needs(const shoal_agent_def_t* d) { return d->crowd.enabled != 0; }

#define CROWD_STRING_(x) #x
#define CROWD_STRING(x) CROWD_STRING_(x)

/* CR_SIDE_PREFERENCE came with snapshot version 4: files of version 3 load it as 0. */
static const column_def_t crowd_columns[CR_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [CR_NEIGHBOR_DISTANCE] = COLUMN_ABOVE("crowd.neighbor_distance", crowd.neighbor_distance, 0.0),
    [CR_MAX_NEIGHBORS] = COLUMN_INT_IN("crowd.max_neighbors", crowd.max_neighbors, 1, CROWD_MAX_NEIGHBORS,
                                       "1 to " CROWD_STRING(CROWD_MAX_NEIGHBORS)),
    [CR_TAU] = COLUMN_ABOVE("crowd.time_horizon", crowd.time_horizon, 0.0),
    [CR_TAU_WALLS] = COLUMN_ABOVE("crowd.time_horizon_walls", crowd.time_horizon_walls, 0.0),
    [CR_RESPONSIBILITY] =
        COLUMN_AT_LEAST_IN("crowd.responsibility", crowd.responsibility, 0.0f, 1.0f, "[0, 1]"),
    [CR_PREFERRED_SPEED] = COLUMN_AT_LEAST("crowd.preferred_speed", crowd.preferred_speed, 0.0),
    [CR_TIME_GAP] = COLUMN_AT_LEAST("crowd.time_gap", crowd.time_gap, 0.0),
    [CR_SIDE_PREFERENCE] = {.name = "crowd.side_preference",
                            .field = COLUMN_FIELD(crowd.side_preference),
                            .type = COLUMN_F32,
                            .check = COLUMN_CHECK_AT_LEAST,
                            .lo = 0.0f,
                            .hi = 1.0f,
                            .range = "[0, 1]",
                            .since = 4},
};

/* Only a crowd agent's part: the table's checks, then those that span fields. */
static shoal_status_t crowd_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    const shoal_crowd_t* c = &d->crowd;
    if (c->enabled != 0 && c->enabled != 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: crowd.enabled must be 0 or 1, got %d", where,
                          (int)c->enabled);
    if (!c->enabled) return SHOAL_OK;
    shoal_status_t st = columns_check(w, d, where, crowd_columns, CR_COUNT_);
    if (st != SHOAL_OK) return st;
    if (d->ground.enabled || d->planner.enabled)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: a crowd agent (crowd.enabled) cannot also be a %s: each moves itself", where,
                          d->ground.enabled ? "ground vehicle (ground.enabled)"
                                            : "planner agent (planner.enabled)");
    if (!(d->vehicle.radius > 0.0f))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: vehicle.radius must be > 0 m for a crowd agent, got %g", where,
                          (double)d->vehicle.radius);
    return SHOAL_OK;
}

/* Then a fresh row has no contact candidates until its first orca pass. */
static void crowd_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d, vec3 forward,
                            int fresh)
{
    (void)slot;
    (void)forward;
    columns_write(w, COMP_CROWD, r, d, crowd_columns, CR_COUNT_);
    crowd_world_t* cw = crowd_data(w);
    const int keep = crowd_near_stride(w->dims == 3);
    if (fresh && r < cw->capacity)
        for (int m = 0; m < keep; ++m) cw->near[(size_t)r * (size_t)keep + (size_t)m] = -1;
}

static void crowd_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_CROWD, r, d, crowd_columns, CR_COUNT_);
    d->crowd.enabled = 1;
}

const module_t crowd_module = {
    .name = "crowd",
    .flags = MODULE_MOVES_ITSELF,
    .column_count = CR_COUNT_,
    .columns = crowd_columns,
    .init = crowd_init,
    .release = crowd_release,
    .defaults = crowd_defaults,
    .needs = crowd_needs,
    .validate = crowd_validate,
    .reserve_add_in_step = crowd_reserve_add,
    .reserve_step = crowd_reserve_step,
    .row_removed = crowd_row_removed,
    .agents_permuted = crowd_agents_permuted,
    .write_row = crowd_write_row,
    .read_row = crowd_read_row,
    .snapshot_since = 3,
    .grid = &crowd_grid,
};

#endif /* CROWD_WIDE */
