/* The spatial hash (sense stage): a uniform grid of cells whose edge is the
 * largest neighbor radius, so every neighbor of an agent lies in the 3x3
 * (2D) or 3x3x3 (3D) block of cells around it. Rebuilt every step by a
 * stable parallel counting sort, which leaves:
 *
 * - `order`: agent rows sorted by cell (within a cell, by row);
 * - `cell_start`: for each bucket b, its agents are order[cell_start[b] ..
 *   cell_start[b + 1]);
 * - sorted copies of positions and velocities (`sx`, `svx`, ...), so the
 *   neighbor kernel reads each cell's candidates as one contiguous run.
 *
 * Bounded worlds (wrap) index cells directly; unbounded worlds hash integer
 * cell coordinates into a power-of-two table, a block of 8 x 8 cells (4 x 4
 * x 4 in 3D) at a time: a block's cells take a run of 64 buckets, so the
 * cells around an agent lie close together in bucket order (and in the
 * agent table after a reorder), while hashing the blocks keeps any layout
 * of agents spread over the table. Every reorder_interval steps the agent
 * table itself is permuted into bucket order, so the per-step copy into
 * sorted arrays reads memory nearly sequentially. */
#ifndef SHOAL_SPATIAL_HASH_H
#define SHOAL_SPATIAL_HASH_H

#include <math.h>
#include <stdint.h>

#include "ecs/world.h"
#include "simd/lanes.h"
#include "modules/registry.h"

/* Extra floats after every per-agent array, so lane loads that run past
 * the last agent stay inside the allocation (the neighbors' packing reads
 * up to two lanes past a run). */
#define SHOAL_PAD_FLOATS (2 * SHOAL_MAX_LANES)

/* The spatial hash's phases, as grid_t.phase_ns counts them: the cell
 * edge (the largest radius), the keys and per-block counts, the prefix,
 * the scatter, the reorder of storage (its steps only) and the sorted
 * copies. */
enum { GRID_PHASE_CELL, GRID_PHASE_COUNT, GRID_PHASE_PREFIX, GRID_PHASE_SCATTER, GRID_PHASE_REORDER,
       GRID_PHASE_COPY, GRID_PHASES };

typedef struct grid_t {
    int32_t dims;
    int32_t wrap;
    int32_t direct;       /* buckets are cell indices (torus) rather than hashes */
    float inv_cell[3];    /* cells per meter along each axis */
    int32_t n[3];         /* cells per axis (torus) */
    float origin[3];      /* bounds_min (torus) */
    float extent[3];      /* bounds_max - bounds_min (torus) */
    int32_t bucket_count;
    uint32_t bucket_mask; /* hashed: bucket_count - 1 */

    int32_t count;        /* agents sorted this step (0: no grid this step) */
    int32_t capacity;     /* of the per-agent arrays */
    int32_t bucket_capacity;
    int32_t worker_capacity;
    uint32_t* key;        /* bucket of each agent row */
    int32_t* order;       /* sorted position -> agent row */
    int32_t* cell_start;  /* bucket_count + 1 */
    int32_t* histogram;   /* blocks x bucket_count */
    float* sx; float* sy; float* sz;     /* sorted positions (wrapped into the box) */
    float* svx; float* svy; float* svz;  /* sorted velocities */
    int32_t* scomp;       /* sorted position -> neighbors component row, or -1 */
    float* nb_mem;        /* the neighbors system's per-worker packs */
    size_t nb_mem_floats;
    size_t nb_per;        /* floats per pack array this step (0: not sized) */
    int32_t nb_largest;   /* agents in the largest bucket this step */
    /* Counters of the last neighbors pass, for benchmarks: candidate pairs
     * examined, neighbors found, agents processed. */
    int64_t pair_tests;
    int64_t neighbor_sum;
    int64_t kernel_agents;
    /* Nanoseconds the last spatial hash spent in each phase (GRID_PHASE_*),
     * on the calling thread's clock, for benchmarks: a clock read between
     * phases, a few a step. */
    int64_t phase_ns[GRID_PHASES];
    /* key holds each agent row's sorted position (built on first use after
     * the hash, see grid_position) */
    int32_t positions_valid;
} grid_t;

/* Each agent row's sorted position this step (agent rows [0, g->count)),
 * built on first use after the hash: one thread, not inside a parallel
 * pass. */
const int32_t* grid_positions(grid_t* g);
/* The same, built by the world's workers (from a system, outside any
 * parallel pass): each sorted position writes its own row's entry. */
const int32_t* grid_positions_par(world_t* w, grid_t* g);

/* Blocks (in agents) for the affine loops over the sorted agents (the
 * copies, the neighbors): 2048, or fewer where that leaves a worker under
 * eight blocks, at least 512, a multiple of 16. */
int32_t grid_agent_block(const world_t* w, int32_t n);

/* The spatial hash of the last sense stage (module-wide data of the
 * neighbors module), NULL before the first step. */
static inline grid_t* grid_data(const world_t* w) { return (grid_t*)w->module_data[MOD_NEIGHBORS]; }

/* Rows that move after the spatial hash ran and before the step ends (a
 * system's removal applied at a stage boundary, or a setter that drops an
 * agent's neighbors component) keep this step's grid true to the tables, so
 * the neighbors pass reads and writes the rows the agents now have. The
 * agents still count as they were sensed (a removed agent stays a neighbor
 * of others for the rest of the step). */
/* The neighbors row of the agent at `agent_row` was removed, and the agent
 * at `moved_agent_row` (-1: none) had its row moved into `cr`. */
void grid_neighbors_row_removed(world_t* w, int32_t agent_row, int32_t cr, int32_t moved_agent_row);
/* The agent at row `from` (the last) moved into row `to` (removed). */
void grid_agent_row_moved(world_t* w, int32_t from, int32_t to);

/* Size the neighbors system's packs for this step's grid of `count` agents
 * whose largest bucket holds `largest`, and grow them: the spatial hash
 * calls it before it reorders anything, so a step out of memory fails
 * before any change. 0 when out of memory (the world's error is set). */
int neighbors_reserve(world_t* w, grid_t* g, int32_t count, int32_t largest);

/* Run the neighbor pair kernel for `iterations` agents (two per pass, as
 * the flock step runs them) over one pack of `candidates` agents that stays
 * in cache, with no hashing or packing: the ceiling the flock step is
 * measured against. Returns the pair tests done
 * and sets *seconds to the time taken. */
int64_t neighbors_bench_kernel(int dims, int32_t candidates, int64_t iterations, double* seconds);

/* Bucket of integer cell coordinates (already wrapped in torus mode). */
static inline uint32_t grid_bucket(const grid_t* g, int32_t ix, int32_t iy, int32_t iz)
{
    if (g->direct) return (uint32_t)((iz * g->n[1] + iy) * g->n[0] + ix);
    /* Blocks of 8 x 8 cells (4 x 4 x 4 in 3D) take a run of 64 buckets in
     * row order, so neighboring cells sit close in the sorted arrays and,
     * after a reorder, in the agent table; large odd multipliers spread the
     * blocks over the table. */
    uint32_t within, h;
    if (g->dims == 3) {
        within = ((uint32_t)iz & 3u) << 4 | ((uint32_t)iy & 3u) << 2 | ((uint32_t)ix & 3u);
        h = (uint32_t)(ix >> 2) * 0x8da6b343u ^ (uint32_t)(iy >> 2) * 0xd8163841u ^ (uint32_t)(iz >> 2) * 0xcb1ab31fu;
    } else {
        within = ((uint32_t)iy & 7u) << 3 | ((uint32_t)ix & 7u);
        h = (uint32_t)(ix >> 3) * 0x8da6b343u ^ (uint32_t)(iy >> 3) * 0xd8163841u;
    }
    h ^= h >> 15;
    return (h << 6 | within) & g->bucket_mask;
}

/* Integer cell coordinate of a position along one axis. On a torus the
 * position must already be wrapped into the box. */
static inline int32_t grid_coord(const grid_t* g, float p, int axis)
{
    float c = g->wrap ? (p - g->origin[axis]) * g->inv_cell[axis] : p * g->inv_cell[axis];
    float f = floorf(c);
    /* Clamp so that wildly distant agents stay representable (a NaN, from
     * a position that overflowed, goes to the upper clamp). */
    if (!(f <= 1.0e9f)) f = 1.0e9f;
    if (f < -1.0e9f) f = -1.0e9f;
    int32_t i = (int32_t)f;
    if (g->wrap) {
        /* Positions are wrapped into the box first, so i is in [0, n]
         * (n only by rounding at the upper edge): no division needed. */
        if (i >= g->n[axis]) i -= g->n[axis];
        if (i < 0) i += g->n[axis];
        /* Only a non-finite position is still outside: cell 0 keeps the
         * bucket in range. */
        if ((uint32_t)i >= (uint32_t)g->n[axis]) i = 0;
    }
    return i;
}

void grid_destroy(world_t* w);

int64_t spatial_hash_run(world_t* w, float dt, void* ctx);
int64_t wrap_run(world_t* w, float dt, void* ctx);
/* wrap's pass, for the scheduler to fuse; idle in a world without wrap. */
rows_fn* wrap_rows(world_t* w, float dt, void* ctx);
int wrap_idle(const world_t* w);

#endif /* SHOAL_SPATIAL_HASH_H */
