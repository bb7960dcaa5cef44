/* The grid module: the spatial hash (sense stage), a uniform grid of cells
 * whose edge is the largest neighbor radius, so every neighbor of an agent
 * lies in the 3x3 (2D) or 3x3x3 (3D) block of cells around it. It is a
 * service of its own: a module whose agents look for neighbors says so in
 * module_t.grid (grid_use_t below), and the grid names no other module.
 * Rebuilt every step by a stable parallel counting sort, then each bucket
 * sorted by the agents' global ids, which leaves:
 *
 * - `order`: agent rows sorted by bucket, within a bucket by global id (by
 *   cell, then global id, where a module reads cells' runs: grid_cell_run);
 * - `cell_start`: for each bucket b, its agents are order[cell_start[b] ..
 *   cell_start[b + 1]);
 * - sorted copies of positions and velocities (`sx`, `svx`, ...), so the
 *   neighbor kernel reads each cell's candidates as one contiguous run.
 *
 * Bounded worlds (wrap) index cells directly; unbounded worlds map integer
 * cell coordinates into a power-of-two table, a block of 8 x 8 cells (4 x 4
 * x 4 in 3D) at a time: a block's cells take a run of 64 buckets, so the
 * cells around an agent lie close together in bucket order (and in the
 * agent table after a reorder), and the blocks take their runs in Z order
 * (Morton: the bits of the block's coordinates interleaved) over a square
 * (a cube) of blocks that repeats across the plane, so that the blocks
 * around one lie close too along both axes, and a crowd of the table's
 * size in blocks takes it with no two blocks in one run. Every
 * reorder_interval steps the agent
 * table itself is permuted into bucket order, so the per-step copy into
 * sorted arrays reads memory nearly sequentially.
 *
 * The table's size follows the agent count, and a world split over
 * processes has other counts on each, so what a consumer sees must not
 * follow it: cells of two blocks whose runs of buckets coincide share
 * buckets, and which cells do changes with the size. So consumers see
 * cells, not buckets: the neighbors' packs take each cell's agents as one
 * run by global id (grid_cell_run), whatever shares its bucket, and
 * nearest lists order candidates at one distance by cell, then global id
 * (grid_before). */
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
 * copies (with, on a hashed grid, each sorted agent's cell and, where
 * asked, each bucket in order of cell). */
enum {
    GRID_PHASE_CELL,
    GRID_PHASE_COUNT,
    GRID_PHASE_PREFIX,
    GRID_PHASE_SCATTER,
    GRID_PHASE_REORDER,
    GRID_PHASE_COPY,
    GRID_PHASES
};

/* A phase's name in reports (bench crowd's hash_phases, bench flock's
 * sense_phases): cell_edge, count, prefix, scatter, reorder, copy. */
static inline const char* grid_phase_name(int phase)
{
    static const char* const names[GRID_PHASES] = {"cell_edge", "count",   "prefix",
                                                   "scatter",   "reorder", "copy"};
    return phase >= 0 && phase < GRID_PHASES ? names[phase] : "?";
}

typedef struct grid_t {
    int32_t dims;
    int32_t wrap;
    int32_t direct;    /* buckets are cell indices (torus) rather than hashes */
    float inv_cell[3]; /* cells per meter along each axis */
    int32_t n[3];      /* cells per axis (torus) */
    float origin[3];   /* bounds_min (torus) */
    float extent[3];   /* bounds_max - bounds_min (torus) */
    int32_t bucket_count;
    uint32_t bucket_mask; /* hashed: bucket_count - 1 */
    /* hashed: blocks of cells take their runs of buckets in Z order over
     * squares (cubes) of 1 << block_shift blocks a side (grid_bucket) */
    int32_t block_shift;
    /* A hashed table of at least this many buckets (0: as many as the
     * agent count asks for). Tests set it: no result may depend on the
     * table's size. */
    int32_t buckets_at_least;

    int32_t count;    /* agents sorted this step (0: no grid this step) */
    int32_t capacity; /* of the per-agent arrays */
    int32_t bucket_capacity;
    int32_t worker_capacity;
    uint32_t* key;       /* bucket of each agent row */
    int32_t* order;      /* sorted position -> agent row */
    int32_t* cell_start; /* bucket_count + 1 */
    /* Hashed grids, when cell_runs: per run of GRID_RUN_BUCKETS buckets,
     * GRID_RUN_FIELDS ints: the block of cells whose agents it holds (x, y,
     * z: cell coordinates shifted right by GRID_BLOCK_SHIFT) and what it
     * holds (GRID_RUN_*). */
    int32_t* runs;
    /* This step's hashed buckets are in order of cell and runs says what
     * each run holds: a module whose agents use the grid asked for it
     * (grid_use_t.cell_runs). grid_cell_run needs it. */
    int32_t cell_runs;
    int32_t* histogram; /* blocks x bucket_count */
    float* sx;
    float* sy;
    float* sz; /* sorted positions (wrapped into the box) */
    float* svx;
    float* svy;
    float* svz; /* sorted velocities */
    /* Hashed grids: each sorted agent's cell along each axis (x, y, and z
     * in 3D: grid_coord of its sorted position), cell_capacity agents. */
    int32_t* scell[3];
    int32_t cell_capacity;
    int32_t* scomp;    /* sorted position -> row of the component that asked for
                           * sorted rows (grid_use_t.sorted_rows), or -1 */
    int32_t rows_comp; /* that component's index in w->comps, -1: none */
    /* A sense stage has built the grid since the world was made (or the
     * snapshot it was loaded from says so); until then grid_data is NULL. */
    int32_t built;
    /* Nanoseconds the last spatial hash spent in each phase (GRID_PHASE_*),
     * on the calling thread's clock, for benchmarks: a clock read between
     * phases, a few a step. */
    int64_t phase_ns[GRID_PHASES];
    /* key holds each agent row's sorted position (built on first use after
     * the hash, see grid_position) */
    int32_t positions_valid;
    /* order is the last hash's, of count agents, and no row has moved since
     * (the world's structure_version is order_version): the next hash
     * counts and scatters its agents in that order (any order of them gives
     * the same buckets, each sorted by id; this one leaves the fewest to
     * sort) */
    int32_t order_ok;
    uint64_t order_version;
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

/* What a module needs of the spatial hash (module_t.grid points to one).
 * The sense stage builds the grid when any module's reach is >= 0, with a
 * cell edge of the largest reach; with none, the grid is empty that step
 * (count 0). */
typedef struct grid_use_t {
    /* The largest distance (m, >= 0) at which the module's agents look for
     * others through the grid this step, or a negative value when none of
     * its agents does. Called by the spatial hash on the calling thread,
     * outside any parallel pass (it may run one: grid_column_max). The
     * largest of the answers is the same in any order, so the registry's
     * order of the modules changes nothing. */
    float (*reach)(world_t* w);
    /* Memory of the module's own sized by this step's grid (`count` agents,
     * the largest bucket holding `largest`), grown after the grid counted its
     * buckets and before it moved anything, so that a step out of memory
     * fails before any change; 0 when out of memory (the error is set). NULL:
     * none. */
    int (*sized)(world_t* w, const grid_t* g, int32_t count, int32_t largest);
    /* Nonzero: the grid keeps, per sorted position, the agent's row of this
     * module's component (grid_t.scomp, -1: none), and the module's
     * row_removed hook calls grid_sorted_row_removed. One module at most
     * asks (the first in registry order has them). */
    int sorted_rows;
    /* Nonzero: the module reads cells' runs (grid_cell_run), so in a step
     * where its agents use the grid (reach >= 0) every bucket of a hashed
     * grid is put in order of cell. Finding nearest agents (grid_nearest.h)
     * needs no such order. */
    int cell_runs;
} grid_use_t;

extern const module_t grid_module;

/* The spatial hash of the last sense stage (the grid module's data), NULL
 * until a sense stage has built one. */
static inline grid_t* grid_data(const world_t* w)
{
    grid_t* g = (grid_t*)w->module_data[MOD_GRID];
    return g && g->built ? g : NULL;
}

/* The grid loaded from a snapshot had been built (the file's WRLD flag):
 * grid_data answers as it did in the world that was saved. */
void grid_note_built(world_t* w);

/* The largest value of a column of `count` non-negative floats (0 for
 * none), a lane at a time on the world's workers: the same for any split.
 * For reach hooks; outside any parallel pass. */
float grid_column_max(world_t* w, const float* col, int32_t count);

/* Rows that move after the spatial hash ran and before the step ends (a
 * system's removal applied at a stage boundary, or a setter that drops an
 * agent's component) keep this step's grid true to the tables, so a pass
 * over the sorted rows reads and writes the rows the agents now have. The
 * agents still count as they were sensed (a removed agent stays a neighbor
 * of others for the rest of the step). */
/* The row of the sorted-rows component (grid_use_t.sorted_rows) of the
 * agent at `agent_row` was removed, and the agent at `moved_agent_row`
 * (-1: none) had its row moved into `cr`: that module's row_removed. */
void grid_sorted_row_removed(world_t* w, int32_t agent_row, int32_t cr, int32_t moved_agent_row);

/* Hashed grids: a block of cells (8 x 8, 4 x 4 x 4) takes a run of
 * GRID_RUN_BUCKETS buckets, one a cell; a cell's block is its coordinates
 * shifted right by GRID_BLOCK_SHIFT(dims). */
#define GRID_RUN_BUCKETS 64
#define GRID_RUN_SHIFT 6
#define GRID_BLOCK_SHIFT(dims) ((dims) == 3 ? 2 : 3)
#define GRID_RUN_FIELDS 4
/* What a run of buckets holds (the last of its GRID_RUN_FIELDS): nothing;
 * the cells of one block, so that each bucket holds one cell; or cells of
 * several blocks, so that a bucket may hold several cells, each one run of
 * its agents (in order of cell coordinates z, y, x). */
enum { GRID_RUN_EMPTY, GRID_RUN_ONE, GRID_RUN_SHARED };

/* Hashed grids: a cell's place in its block's run of buckets (row order
 * within the block). */
static inline uint32_t grid_within(int three, int32_t ix, int32_t iy, int32_t iz)
{
    if (three) return ((uint32_t)iz & 3u) << 4 | ((uint32_t)iy & 3u) << 2 | ((uint32_t)ix & 3u);
    return ((uint32_t)iy & 7u) << 3 | ((uint32_t)ix & 7u);
}

/* The low 16 bits of x spread to the even bits (grid_spread2), the low 10
 * to every third bit (grid_spread3): Z order's interleaving. */
static inline uint32_t grid_spread2(uint32_t x)
{
    x = (x | x << 8) & 0x00FF00FFu;
    x = (x | x << 4) & 0x0F0F0F0Fu;
    x = (x | x << 2) & 0x33333333u;
    return (x | x << 1) & 0x55555555u;
}
static inline uint32_t grid_spread3(uint32_t x)
{
    x = (x | x << 16) & 0x030000FFu;
    x = (x | x << 8) & 0x0300F00Fu;
    x = (x | x << 4) & 0x030C30C3u;
    return (x | x << 2) & 0x09249249u;
}
static inline lanei lane_grid_spread2(lanei x)
{
    x = lanei_and(lanei_or(x, lanei_slli(x, 8)), lanei_set1(0x00FF00FF));
    x = lanei_and(lanei_or(x, lanei_slli(x, 4)), lanei_set1(0x0F0F0F0F));
    x = lanei_and(lanei_or(x, lanei_slli(x, 2)), lanei_set1(0x33333333));
    return lanei_and(lanei_or(x, lanei_slli(x, 1)), lanei_set1(0x55555555));
}
static inline lanei lane_grid_spread3(lanei x)
{
    x = lanei_and(lanei_or(x, lanei_slli(x, 16)), lanei_set1(0x030000FF));
    x = lanei_and(lanei_or(x, lanei_slli(x, 8)), lanei_set1(0x0300F00F));
    x = lanei_and(lanei_or(x, lanei_slli(x, 4)), lanei_set1(0x030C30C3));
    return lanei_and(lanei_or(x, lanei_slli(x, 2)), lanei_set1(0x09249249));
}

/* Bucket of integer cell coordinates (already wrapped in torus mode). */
static inline uint32_t grid_bucket(const grid_t* g, int32_t ix, int32_t iy, int32_t iz)
{
    if (g->direct) return (uint32_t)((iz * g->n[1] + iy) * g->n[0] + ix);
    /* Blocks of 8 x 8 cells (4 x 4 x 4 in 3D) take a run of 64 buckets in
     * row order, so neighboring cells sit close in the sorted arrays and,
     * after a reorder, in the agent table. The blocks take their runs in Z
     * order over a square (cube) of 1 << block_shift blocks a side,
     * repeated across the plane: the block's coordinates modulo the side,
     * their bits interleaved (x lowest), the bits past the table's runs
     * dropped. A block's neighbors along either axis mostly sit a few runs
     * away (rows of blocks put the one above a whole row of runs away),
     * and a box of as many blocks as the table has runs, 1 << block_shift
     * along x and the rest halved as evenly as powers of two allow along
     * y (y before z in 3D), takes it without two blocks sharing a run. */
    const int three = g->dims == 3;
    const uint32_t m = (1u << (uint32_t)g->block_shift) - 1u;
    uint32_t h;
    if (three)
        h = grid_spread3((uint32_t)(ix >> 2) & m) | grid_spread3((uint32_t)(iy >> 2) & m) << 1 |
            grid_spread3((uint32_t)(iz >> 2) & m) << 2;
    else
        h = grid_spread2((uint32_t)(ix >> 3) & m) | grid_spread2((uint32_t)(iy >> 3) & m) << 1;
    return (h << 6 | grid_within(three, ix, iy, iz)) & g->bucket_mask;
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

/* grid_coord and grid_bucket a lane of positions at a time, on an unbounded
 * hashed grid (not wrapped, not direct): the same operations, so the same
 * cells and buckets. */
static inline lanei lane_grid_coord(const grid_t* g, lanef p, int axis)
{
    lanef f = lane_floor(lane_mul(p, lane_set1(g->inv_cell[axis])));
    f = lane_select(lane_cmp_le(f, lane_set1(1.0e9f)), f, lane_set1(1.0e9f)); /* NaN too */
    f = lane_select(lane_cmp_lt(f, lane_set1(-1.0e9f)), lane_set1(-1.0e9f), f);
    return lane_ftoi(f);
}

static inline lanei lane_grid_bucket(const grid_t* g, lanei ix, lanei iy, lanei iz)
{
    lanei within, h;
    if (g->dims == 3) {
        const lanei three = lanei_set1(3);
        within = lanei_or(lanei_or(lanei_slli(lanei_and(iz, three), 4), lanei_slli(lanei_and(iy, three), 2)),
                          lanei_and(ix, three));
        const lanei m = lanei_set1((1 << g->block_shift) - 1);
        h = lanei_or(lanei_or(lane_grid_spread3(lanei_and(lanei_srai(ix, 2), m)),
                              lanei_slli(lane_grid_spread3(lanei_and(lanei_srai(iy, 2), m)), 1)),
                     lanei_slli(lane_grid_spread3(lanei_and(lanei_srai(iz, 2), m)), 2));
    } else {
        const lanei seven = lanei_set1(7);
        within = lanei_or(lanei_slli(lanei_and(iy, seven), 3), lanei_and(ix, seven));
        const lanei m = lanei_set1((1 << g->block_shift) - 1);
        h = lanei_or(lane_grid_spread2(lanei_and(lanei_srai(ix, 3), m)),
                     lanei_slli(lane_grid_spread2(lanei_and(lanei_srai(iy, 3), m)), 1));
    }
    return lanei_and(lanei_or(lanei_slli(h, 6), within), lanei_set1((int32_t)g->bucket_mask));
}

/* The key of 2D cells (x, y): y * 2^16 + x modulo 2^32, as int32_t. For
 * two cells less than 2^15 apart along each axis, the difference of their
 * keys modulo 2^32 as int32_t (lanei_sub_wrap) is y's difference * 2^16
 * plus x's: above 0 where the first comes before the second
 * (grid_cell_less), 0 where they are one cell, wherever they are. */
static inline lanei lane_grid_cell_key(lanei x, lanei y)
{
    return lanei_add_wrap(lanei_mul_wrap(y, lanei_set1(65536)), x);
}

static inline int32_t grid_cell_key(int32_t x, int32_t y)
{
    return (int32_t)((uint32_t)y * 65536u + (uint32_t)x);
}

/* Integer cell of sorted agent k: the cell the spatial hash put it in. */
static inline void grid_sorted_cell(const grid_t* g, int32_t k, int32_t c[3])
{
    if (!g->direct) {
        c[0] = g->scell[0][k];
        c[1] = g->scell[1][k];
        c[2] = g->dims == 3 ? g->scell[2][k] : 0;
        return;
    }
    c[0] = grid_coord(g, g->sx[k], 0);
    c[1] = grid_coord(g, g->sy[k], 1);
    c[2] = g->dims == 3 ? grid_coord(g, g->sz[k], 2) : 0;
}

/* Whether cell a comes before cell b: by z, then y, then x. */
static inline int grid_cell_less(const int32_t a[3], const int32_t b[3])
{
    if (a[2] != b[2]) return a[2] < b[2];
    if (a[1] != b[1]) return a[1] < b[1];
    return a[0] < b[0];
}

/* The sorted agents [*lo, *hi) of the cell at (x, y, z) (wrapped on a
 * torus), by global id; an empty run when it has none, whatever else its
 * bucket holds. A hashed grid only when it has cell_runs. */
static inline void grid_cell_run(const grid_t* g, int32_t x, int32_t y, int32_t z, int32_t* lo, int32_t* hi)
{
    const uint32_t b = grid_bucket(g, x, y, z);
    int32_t k0 = g->cell_start[b], k1 = g->cell_start[b + 1];
    if (!g->direct && k0 < k1) {
        const int32_t* run = g->runs + (size_t)(b >> GRID_RUN_SHIFT) * GRID_RUN_FIELDS;
        const int sh = GRID_BLOCK_SHIFT(g->dims);
        if (run[3] == GRID_RUN_ONE) {
            /* the bucket holds the cell of (x, y, z)'s block, or another
             * block's (this one has none) */
            if (run[0] != x >> sh || run[1] != y >> sh || run[2] != z >> sh) k1 = k0;
        } else {
            /* cells in order: those before, the cell's, those after */
            const int32_t want[3] = {x, y, z};
            int32_t c[3];
            while (k0 < k1 && (grid_sorted_cell(g, k0, c), grid_cell_less(c, want))) ++k0;
            int32_t k = k0;
            while (k < k1 && (grid_sorted_cell(g, k, c), c[0] == x && c[1] == y && c[2] == z)) ++k;
            k1 = k;
        }
    }
    *lo = k0;
    *hi = k1;
}

/* Whether sorted agent a comes before sorted agent b among candidates at
 * one distance: by cell (grid_cell_less), within a cell by global id. On a
 * direct grid that is the sorted order; on a hashed one, it is within a
 * cell (its agents share a bucket, by global id) but not across cells: the
 * buckets' order follows the table. */
static inline int grid_before(const grid_t* g, int32_t a, int32_t b)
{
    if (g->direct) return a < b;
    for (int axis = g->dims == 3 ? 2 : 1; axis >= 0; --axis) { /* z (3D), y, then x */
        const int32_t ca = g->scell[axis][a], cb = g->scell[axis][b];
        if (ca != cb) return ca < cb;
    }
    return a < b;
}

/* grid_before for a lane of pairs of sorted agents (a, b): lanes where a
 * comes before b. Every index a valid sorted position. */
static inline lanem lane_grid_before(const grid_t* g, lanei a, lanei b)
{
    lanem before = lanei_cmp_gt(b, a);
    if (g->direct) return before;
    for (int axis = 0; axis < (g->dims == 3 ? 3 : 2); ++axis) { /* x, y, then z: z decides first */
        const lanei ca = lanei_gather(g->scell[axis], a), cb = lanei_gather(g->scell[axis], b);
        before = lane_mask_or(lanei_cmp_gt(cb, ca), lane_mask_and(lanei_cmp_eq(ca, cb), before));
    }
    return before;
}

int64_t spatial_hash_run(world_t* w, float dt, void* ctx);
int64_t wrap_run(world_t* w, float dt, void* ctx);
/* wrap's pass, for the scheduler to fuse; idle in a world without wrap. */
rows_fn* wrap_rows(world_t* w, float dt, void* ctx);
int wrap_idle(const world_t* w);

#endif /* SHOAL_SPATIAL_HASH_H */
