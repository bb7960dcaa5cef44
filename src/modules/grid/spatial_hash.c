/* The spatial hash: see spatial_hash.h for what it leaves behind.
 *
 * The counting sort is stable and deterministic for any thread count: the
 * agents are cut into `blocks` contiguous ranges (one per worker, but any
 * cut gives the same result), each block counts its keys, a prefix over
 * (bucket, block) in that order gives every block its write position in
 * every bucket, and each block scatters its agents in row order. Within a
 * bucket, agents thus stay in row order whoever processed them. */
#include "modules/grid/grid.h"

#include <string.h>

#include "ecs/parallel.h"
#include "simd/lanes.h"
#include "modules/agent.h"

#define MIN_BUCKETS 1024
#define PREFIX_CHUNK 1024
#define SERIAL_PREFIX (1 << 14)

static size_t padded(int32_t n) { return (size_t)n + SHOAL_PAD_FLOATS; }

static void free_arrays(world_t* w, grid_t* g)
{
    const allocator_t* a = &w->alloc;
    size_t n = padded(g->capacity);
    mem_free(a, g->key, n * sizeof(uint32_t));
    mem_free(a, g->order, n * sizeof(int32_t));
    mem_free(a, g->sx, n * sizeof(float));
    mem_free(a, g->sy, n * sizeof(float));
    mem_free(a, g->sz, n * sizeof(float));
    mem_free(a, g->svx, n * sizeof(float));
    mem_free(a, g->svy, n * sizeof(float));
    mem_free(a, g->svz, n * sizeof(float));
    mem_free(a, g->scomp, n * sizeof(int32_t));
    g->scomp = NULL;
    g->key = NULL;
    g->order = NULL;
    g->sx = g->sy = g->sz = g->svx = g->svy = g->svz = NULL;
    g->capacity = 0;
}

/* The runs of buckets' memory (grid_t.runs) for `buckets` buckets. */
static size_t run_bytes(int32_t buckets)
{
    return ((size_t)(buckets >> GRID_RUN_SHIFT) + 1) * GRID_RUN_FIELDS * sizeof(int32_t);
}

/* The grid module's data, built or not. */
static grid_t* grid_of(const world_t* w) { return (grid_t*)w->module_data[MOD_GRID]; }

/* Grow the per-agent arrays and the bucket arrays.
 * Nothing is freed until every new block is had, so a failure leaves the
 * grid as it was. */
static int grid_reserve(world_t* w, grid_t* g, int32_t n, int32_t buckets, int32_t blocks)
{
    const allocator_t* a = &w->alloc;
    int three = w->dims == 3;
    if (n > g->capacity) {
        int32_t cap = n + n / 4;
        if (cap > w->agents.capacity) cap = w->agents.capacity; /* never more than agents */
        size_t m = padded(cap);
        void* p[9] = {mem_calloc(a, m * 4),
                      mem_calloc(a, m * 4),
                      mem_calloc(a, m * 4),
                      mem_calloc(a, m * 4),
                      three ? mem_calloc(a, m * 4) : NULL,
                      mem_calloc(a, m * 4),
                      mem_calloc(a, m * 4),
                      three ? mem_calloc(a, m * 4) : NULL,
                      mem_calloc(a, m * 4)};
        int ok = 1;
        for (int i = 0; i < 9; ++i)
            if (!p[i] && (three || (i != 4 && i != 7))) ok = 0;
        if (!ok) {
            for (int i = 0; i < 9; ++i) mem_free(a, p[i], m * 4);
            return 0;
        }
        free_arrays(w, g);
        g->key = p[0];
        g->order = p[1];
        g->sx = p[2];
        g->sy = p[3];
        g->sz = p[4];
        g->svx = p[5];
        g->svy = p[6];
        g->svz = p[7];
        g->scomp = p[8];
        g->capacity = cap;
    }
    if (buckets > g->bucket_capacity || blocks > g->worker_capacity) {
        int32_t bcap = buckets > g->bucket_capacity ? buckets : g->bucket_capacity;
        int32_t wcap = blocks > g->worker_capacity ? blocks : g->worker_capacity;
        int32_t* start = mem_alloc(a, ((size_t)bcap + 1) * sizeof(int32_t));
        int32_t* hist = mem_alloc(a, (size_t)wcap * bcap * sizeof(int32_t));
        int32_t* runs = mem_alloc(a, run_bytes(bcap));
        if (!start || !hist || !runs) {
            mem_free(a, start, ((size_t)bcap + 1) * sizeof(int32_t));
            mem_free(a, hist, (size_t)wcap * bcap * sizeof(int32_t));
            mem_free(a, runs, run_bytes(bcap));
            return 0;
        }
        mem_free(a, g->cell_start, ((size_t)g->bucket_capacity + 1) * sizeof(int32_t));
        mem_free(a, g->histogram, (size_t)g->worker_capacity * g->bucket_capacity * sizeof(int32_t));
        mem_free(a, g->runs, run_bytes(g->bucket_capacity));
        g->cell_start = start;
        g->histogram = hist;
        g->runs = runs;
        g->bucket_capacity = bcap;
        g->worker_capacity = wcap;
    }
    return 1;
}

/* The sorted cells (grid_t.scell) of a hashed grid of n agents: grown
 * like the per-agent arrays, nothing freed until every new array is had. */
static void free_cells(world_t* w, grid_t* g)
{
    for (int a = 0; a < 3; ++a) {
        mem_free(&w->alloc, g->scell[a], padded(g->cell_capacity) * sizeof(int32_t));
        g->scell[a] = NULL;
    }
    g->cell_capacity = 0;
}

static int reserve_cells(world_t* w, grid_t* g, int32_t n)
{
    if (n <= g->cell_capacity) return 1;
    int32_t cap = n + n / 4;
    if (cap > w->agents.capacity) cap = w->agents.capacity;
    int32_t* p[3] = {NULL, NULL, NULL};
    int ok = 1;
    for (int a = 0; a < (g->dims == 3 ? 3 : 2); ++a) {
        p[a] = mem_alloc(&w->alloc, padded(cap) * sizeof(int32_t));
        ok &= p[a] != NULL;
    }
    if (!ok) {
        for (int a = 0; a < 3; ++a) mem_free(&w->alloc, p[a], padded(cap) * sizeof(int32_t));
        return 0;
    }
    free_cells(w, g);
    for (int a = 0; a < 3; ++a) g->scell[a] = p[a];
    g->cell_capacity = cap;
    return 1;
}

/* The largest value of a column of non-negative floats, a lane at a time
 * on every worker: the maximum is the same in any order, so the split
 * changes nothing. Rows [0, count) are padded to whole lanes with zeros. */
typedef struct max_ctx {
    const float* col;
    float* best; /* per worker */
} max_ctx_t;

static void max_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    max_ctx_t* c = (max_ctx_t*)vctx;
    lanef m = lane_zero();
    int32_t i = begin;
    for (; i + SHOAL_LANES <= end; i += SHOAL_LANES) m = lane_max(m, lane_loadu(c->col + i));
    float lanes[SHOAL_LANES];
    lane_storeu(lanes, m);
    float r = c->best[worker];
    for (int k = 0; k < SHOAL_LANES; ++k) r = lanes[k] > r ? lanes[k] : r;
    for (; i < end; ++i) r = c->col[i] > r ? c->col[i] : r;
    c->best[worker] = r;
}

float grid_column_max(world_t* w, const float* col, int32_t count)
{
    if (count <= 0) return 0.0f;
    float best[SHOAL_MAX_THREADS];
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    for (int32_t k = 0; k < workers; ++k) best[k] = 0.0f;
    max_ctx_t c = {col, best};
    par_for(w, count, 16384, PAR_STATIC, max_range, &c);
    float r = 0.0f;
    for (int32_t k = 0; k < workers; ++k) r = best[k] > r ? best[k] : r;
    return r;
}

/* The largest reach any module's agents need this step (grid_use_t.reach),
 * or a negative value when no module's agents use the grid; *cell_runs:
 * whether one of those modules reads cells' runs (grid_use_t.cell_runs). Reaches are
 * finite and non-negative (checked when set), so the maximum is the same in
 * any order and on any split over workers. */
static float grid_reach(world_t* w, int32_t* cell_runs)
{
    float r = -1.0f;
    *cell_runs = 0;
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const grid_use_t* use = w->registry->modules[m]->grid;
        if (!use || !use->reach) continue;
        float reach = use->reach(w);
        r = reach > r ? reach : r;
        if (reach >= 0.0f && use->cell_runs) *cell_runs = 1;
    }
    return r;
}

/* Cell edge: the largest reach, a hair wider so that float rounding of
 * position/cell can never put a neighbor at exactly the radius two cells
 * away; a configured cell_size may only make cells larger. */
static float cell_edge(const world_t* w, float r)
{
    r *= 1.0f + 1e-5f;
    if (w->cell_size > r) r = w->cell_size;
    return r > 0.0f ? r : 1.0f;
}

static void configure(world_t* w, grid_t* g, int32_t n, float reach)
{
    float cell = cell_edge(w, reach);
    g->dims = w->dims;
    g->wrap = w->wrap;
    g->direct = 0;
    double total = 1.0;
    for (int k = 0; k < 3; ++k) {
        g->n[k] = 1;
        g->origin[k] = w->bounds_min[k];
        g->extent[k] = w->bounds_max[k] - w->bounds_min[k];
        g->inv_cell[k] = 1.0f / cell;
        if (k < w->dims && w->wrap) {
            /* Whole cells only, each at least `cell` wide. */
            double cells = floor((double)g->extent[k] / cell);
            if (cells < 1.0) cells = 1.0;
            if (cells > 1 << 20) cells = 1 << 20;
            g->n[k] = (int32_t)cells;
            g->inv_cell[k] = (float)(cells / (double)g->extent[k]);
            total *= cells;
        }
    }
    int32_t pow2 = MIN_BUCKETS;
    while ((pow2 < n || pow2 < g->buckets_at_least) && pow2 < (1 << 30)) pow2 <<= 1;
    /* A torus indexes its cells directly unless it has far more cells than
     * agents (a huge sparse box): then its cells are hashed like unbounded
     * space, with coordinates still wrapped. */
    if (w->wrap && total <= 4.0 * pow2) {
        g->direct = 1;
        g->bucket_count = (int32_t)total;
        g->bucket_mask = 0;
    } else {
        g->bucket_count = pow2;
        g->bucket_mask = (uint32_t)pow2 - 1u;
    }
    /* Z order's square of blocks (a cube in 3D) as large as the table's
     * runs allow: the runs' count's log, halved (a third) up */
    int32_t runs_log = 0;
    while ((64 << runs_log) < g->bucket_count) runs_log++;
    g->block_shift = g->dims == 3 ? (runs_log + 2) / 3 : (runs_log + 1) / 2;
}

/* Wrap a coordinate into [origin, origin + extent) (torus), exactly as the
 * wrap system does, so sorted copies and stored positions agree. */
static inline float wrap_into(float p, float origin, float extent)
{
    float f = p - origin;
    if (f >= 0.0f && f < extent) return p;
    f -= extent * floorf(f / extent);
    if (f >= extent) f = 0.0f; /* rounding at the upper edge */
    return origin + f;
}

/* At most this many sort blocks (each a histogram of its own). */
#define MAX_BLOCKS 64

typedef struct sort_ctx {
    world_t* w;
    grid_t* g;
    int32_t n;
    int32_t blocks;
    int32_t block_size;
    int32_t chunk; /* buckets per prefix chunk */
    int32_t chunks;
    int32_t* chunk_base;
    const uint32_t* ids;   /* the agents' ids' low words, when every id is below 2^32; else NULL */
    uint32_t* sorted_ids;  /* those ids in sorted order (the velocity copies' memory, written later) */
    uint32_t* sorted_keys; /* with ids, their buckets in sorted order (the same: svy's) */
    /* the order the count and the scatter take the agents in: the last
     * hash's sorted order (its array, sx's memory from then on), or NULL: row order */
    const int32_t* prev;
    int32_t* largest; /* per worker: the largest bucket its prefix saw */
    /* Block b's keys lie in [lo[b], hi[b]] (hi < lo: an empty block), and
     * its histogram holds only that range: the count of bucket q is at
     * histogram[b * bucket_count + q - lo[b]]. Storage sorted by cell (the
     * reorder) gives each block a narrow range, so clearing, counting and
     * the prefix cost about one pass over the buckets in all, not one per
     * block. */
    int32_t lo[MAX_BLOCKS];
    int32_t hi[MAX_BLOCKS];
    int identity; /* the table was just reordered: sorted position k is row k */
    /* The neighbors component is on every agent with its row r at agent
     * row r (what a reorder leaves), so each sorted agent has its
     * component row without a look-up. */
    int comp_in_order;
} sort_ctx_t;

/* Bucket of agent row i, from the same wrapped coordinates the sorted
 * copies hold, so the neighbor kernel finds every agent in the cell it
 * computes. */
static inline uint32_t agent_key(const grid_t* g, const float* px, const float* py, const float* pz,
                                 int32_t i)
{
    float x = px[i], y = py[i], z = pz ? pz[i] : 0.0f;
    if (g->wrap) {
        x = wrap_into(x, g->origin[0], g->extent[0]);
        y = wrap_into(y, g->origin[1], g->extent[1]);
        if (pz) z = wrap_into(z, g->origin[2], g->extent[2]);
    }
    int32_t ix = grid_coord(g, x, 0), iy = grid_coord(g, y, 1);
    int32_t iz = pz ? grid_coord(g, z, 2) : 0;
    return grid_bucket(g, ix, iy, iz);
}

/* Cell coordinates of one lane of positions along an axis of a direct grid
 * (torus), or 0 in *ok when any lane is outside the box (the caller then
 * takes the scalar path, which wraps). Inside the box this is grid_coord's
 * arithmetic, operation for operation: (p - origin) * inv_cell, floor, and
 * n subtracted at the upper edge. */
static inline lanei lane_coord(const grid_t* g, lanef p, int axis, int* ok)
{
    lanef f = lane_sub(p, lane_set1(g->origin[axis]));
    lanem inside = lane_mask_and(lane_cmp_ge(f, lane_zero()), lane_cmp_lt(f, lane_set1(g->extent[axis])));
    *ok &= lane_mask_all(inside);
    lanef n = lane_set1((float)g->n[axis]);
    lanef c = lane_floor(lane_mul(f, lane_set1(g->inv_cell[axis])));
    return lane_ftoi(lane_select(lane_cmp_ge(c, n), lane_sub(c, n), c));
}

/* Block b's key range and histogram: the agents at positions
 * [b * block_size, ...) of `via` (NULL: those rows themselves). */
static void block_histogram(sort_ctx_t* c, int32_t b, const int32_t* via)
{
    grid_t* g = c->g;
    int32_t lo = b * c->block_size, hi = lo + c->block_size;
    if (hi > c->n) hi = c->n;
    if (lo >= hi) {
        c->lo[b] = 0;
        c->hi[b] = -1;
        return;
    }
    uint32_t kmin = UINT32_MAX, kmax = 0;
    for (int32_t k = lo; k < hi; ++k) {
        const uint32_t key = g->key[via ? via[k] : k];
        kmin = key < kmin ? key : kmin;
        kmax = key > kmax ? key : kmax;
    }
    c->lo[b] = (int32_t)kmin;
    c->hi[b] = (int32_t)kmax;
    int32_t* hist = g->histogram + (size_t)b * g->bucket_count;
    memset(hist, 0, ((size_t)(kmax - kmin) + 1) * sizeof(int32_t));
    for (int32_t k = lo; k < hi; ++k) hist[g->key[via ? via[k] : k] - kmin]++;
}

static void count_blocks(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    sort_ctx_t* c = (sort_ctx_t*)vctx;
    grid_t* g = c->g;
    const float* px = AGENT_F(c->w, AC_POS_X);
    const float* py = AGENT_F(c->w, AC_POS_Y);
    const float* pz = g->dims == 3 ? AGENT_F(c->w, AC_POS_Z) : NULL;
    for (int32_t b = begin; b < end; ++b) {
        int32_t lo = b * c->block_size, hi = lo + c->block_size;
        if (hi > c->n) hi = c->n;
        int32_t i = lo;
        if (g->direct) {
            /* Keys a lane at a time; positions are normally inside the box
             * already (the wrap system keeps them there). */
            lanei n0 = lanei_set1(g->n[0]), n1 = lanei_set1(g->n[1]);
            for (; i + SHOAL_LANES <= hi; i += SHOAL_LANES) {
                int ok = 1;
                lanei ix = lane_coord(g, lane_loadu(px + i), 0, &ok);
                lanei iy = lane_coord(g, lane_loadu(py + i), 1, &ok);
                lanei iz = pz ? lane_coord(g, lane_loadu(pz + i), 2, &ok) : lanei_set1(0);
                if (ok) {
                    lanei k = lanei_add(lanei_mul(lanei_add(lanei_mul(iz, n1), iy), n0), ix);
                    lanei_storeu((int32_t*)g->key + i, k);
                } else {
                    for (int32_t j = i; j < i + SHOAL_LANES; ++j) g->key[j] = agent_key(g, px, py, pz, j);
                }
            }
        } else if (!g->wrap) {
            for (; i + SHOAL_LANES <= hi; i += SHOAL_LANES) {
                const lanei ix = lane_grid_coord(g, lane_loadu(px + i), 0);
                const lanei iy = lane_grid_coord(g, lane_loadu(py + i), 1);
                const lanei iz = pz ? lane_grid_coord(g, lane_loadu(pz + i), 2) : lanei_set1(0);
                lanei_storeu((int32_t*)g->key + i, lane_grid_bucket(g, ix, iy, iz));
            }
        }
        for (; i < hi; ++i) g->key[i] = agent_key(g, px, py, pz, i);
        /* in the last hash's order, counted (count_prev) once every key is known */
        if (!c->prev) block_histogram(c, b, NULL);
    }
}

/* count_blocks' counts where the agents go in the last hash's order
 * (c->prev), from the keys count_blocks wrote. That order keeps each
 * block's buckets close together and each bucket's agents mostly in order
 * of id (only those an agent entered since the last hash are not:
 * sort_buckets). */
static void count_prev(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    sort_ctx_t* c = (sort_ctx_t*)vctx;
    for (int32_t b = begin; b < end; ++b) block_histogram(c, b, c->prev);
}

/* The blocks whose key range meets buckets [qlo, qhi), in block order. */
static int32_t chunk_blocks(const sort_ctx_t* c, int32_t qlo, int32_t qhi, int32_t* list)
{
    int32_t m = 0;
    for (int32_t b = 0; b < c->blocks; ++b)
        if (c->lo[b] < qhi && c->hi[b] >= qlo) list[m++] = b; /* an empty block: hi = -1 */
    return m;
}

/* Chunk totals over all blocks. */
static void prefix_totals(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    sort_ctx_t* c = (sort_ctx_t*)vctx;
    grid_t* g = c->g;
    int32_t list[MAX_BLOCKS];
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t qlo = ch * c->chunk, qhi = qlo + c->chunk;
        if (qhi > g->bucket_count) qhi = g->bucket_count;
        int32_t m = chunk_blocks(c, qlo, qhi, list), total = 0;
        for (int32_t j = 0; j < m; ++j) {
            int32_t b = list[j];
            const int32_t* hist = g->histogram + (size_t)b * g->bucket_count;
            int32_t from = qlo > c->lo[b] ? qlo : c->lo[b];
            int32_t to = qhi - 1 < c->hi[b] ? qhi - 1 : c->hi[b];
            for (int32_t q = from; q <= to; ++q) total += hist[q - c->lo[b]];
        }
        c->chunk_base[ch * c->chunk] = total;
    }
}

/* Buckets [q0, q1) of a chunk a bucket at a time: each one's start, and
 * each block's offset in it (blocks whose keys it is outside have none). */
static inline void prefix_buckets(const sort_ctx_t* c, grid_t* g, const int32_t* list, int32_t m, int32_t q0,
                                  int32_t q1, int32_t* running, int32_t* largest)
{
    for (int32_t q = q0; q < q1; ++q) {
        g->cell_start[q] = *running;
        for (int32_t j = 0; j < m; ++j) {
            int32_t b = list[j];
            if (q < c->lo[b] || q > c->hi[b]) continue;
            int32_t* slot = g->histogram + (size_t)b * g->bucket_count + (q - c->lo[b]);
            int32_t count = *slot;
            *slot = *running;
            *running += count;
        }
        int32_t size = *running - g->cell_start[q];
        *largest = size > *largest ? size : *largest;
    }
}

/* Turn counts into write positions, (bucket, block) order, noting the
 * largest bucket (which sizes the neighbors' packs). */
static void prefix_offsets(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    sort_ctx_t* c = (sort_ctx_t*)vctx;
    grid_t* g = c->g;
    int32_t largest = c->largest[worker];
    int32_t list[MAX_BLOCKS];
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t qlo = ch * c->chunk, qhi = qlo + c->chunk;
        if (qhi > g->bucket_count) qhi = g->bucket_count;
        int32_t m = chunk_blocks(c, qlo, qhi, list);
        int32_t running = c->chunk_base[ch * c->chunk];
        /* A lane of buckets at a time where every block's counts cover the
         * lane (hashed keys spread each block over the table; one block
         * spans its least to its largest key): the same sums, each
         * bucket's start and each block's offset in it. Before and after
         * that span, a bucket at a time. */
        int32_t clo = qlo, chi = qhi - 1;
        for (int32_t j = 0; j < m; ++j) {
            clo = c->lo[list[j]] > clo ? c->lo[list[j]] : clo;
            chi = c->hi[list[j]] < chi ? c->hi[list[j]] : chi;
        }
        if (m == 0 || chi - clo + 1 < SHOAL_LANES) {
            prefix_buckets(c, g, list, m, qlo, qhi, &running, &largest);
            continue;
        }
        prefix_buckets(c, g, list, m, qlo, clo, &running, &largest);
        int32_t q = clo;
        lanei run = lanei_set1(running), most = lanei_set1(largest);
        for (; q + SHOAL_LANES <= chi + 1; q += SHOAL_LANES) {
            lanei t = lanei_set1(0);
            for (int32_t j = 0; j < m; ++j)
                t = lanei_add(
                    t, lanei_loadu(g->histogram + (size_t)list[j] * g->bucket_count + (q - c->lo[list[j]])));
            /* each bucket's start: the running total and the sizes before
             * it in the lane */
            const lanei upto = lanei_prefix_sum(t);
            lanei start = lanei_add(run, lanei_sub(upto, t));
            run = lanei_add(run, lanei_broadcast_last(upto));
            most = lanei_max(most, t);
            lanei_storeu(g->cell_start + q, start);
            for (int32_t j = 0; j < m; ++j) {
                int32_t* slot = g->histogram + (size_t)list[j] * g->bucket_count + (q - c->lo[list[j]]);
                const lanei count = lanei_loadu(slot);
                lanei_storeu(slot, start);
                start = lanei_add(start, count);
            }
        }
        _Alignas(64) int32_t lanes[SHOAL_LANES];
        lanei_store(lanes, run);
        running = lanes[0];
        lanei_store(lanes, most);
        for (int l = 0; l < SHOAL_LANES; ++l) largest = lanes[l] > largest ? lanes[l] : largest;
        prefix_buckets(c, g, list, m, q, qhi, &running, &largest);
    }
    c->largest[worker] = largest;
}

/* The sorted copies' sources and targets. */
typedef struct sorted_view {
    const float *px, *py, *pz, *vx, *vy, *vz;
    const uint32_t* slots;
    const component_t* comp;
    const int32_t* comp_agent_row;
    int32_t comp_count;
} sorted_view_t;

static sorted_view_t sorted_sources(const world_t* w, const grid_t* g)
{
    int three = g->dims == 3;
    const component_t* comp = g->rows_comp >= 0 ? &w->comps[g->rows_comp] : NULL;
    sorted_view_t v = {.px = AGENT_F(w, AC_POS_X),
                       .py = AGENT_F(w, AC_POS_Y),
                       .pz = three ? AGENT_F(w, AC_POS_Z) : NULL,
                       .vx = AGENT_F(w, AC_VEL_X),
                       .vy = AGENT_F(w, AC_VEL_Y),
                       .vz = three ? AGENT_F(w, AC_VEL_Z) : NULL,
                       .slots = table_slots(&w->agents),
                       .comp = comp,
                       .comp_agent_row = comp ? TABLE_COL(&comp->table, int32_t, COMP_ROW) : NULL,
                       .comp_count = comp ? comp->table.count : 0};
    return v;
}

/* Sorted position k holds agent row r. in_order: the component is on every
 * agent in agent-row order (sort_ctx.comp_in_order), so its row is r. */
static inline void put_sorted(grid_t* g, const sorted_view_t* v, int32_t k, int32_t r, int in_order)
{
    /* Component rows follow agent-row order, so in a flock where every
     * agent has the component, component row r usually belongs to agent row
     * r: checking that (a near-sequential read) avoids the sparse index's
     * random one. */
    g->scomp[k] = in_order || (r < v->comp_count && v->comp_agent_row[r] == r) ? r
                  : v->comp ? component_row(v->comp, v->slots[r])
                            : -1;
    float x = v->px[r], y = v->py[r];
    if (g->wrap) {
        x = wrap_into(x, g->origin[0], g->extent[0]);
        y = wrap_into(y, g->origin[1], g->extent[1]);
    }
    g->sx[k] = x;
    g->sy[k] = y;
    g->svx[k] = v->vx[r];
    g->svy[k] = v->vy[r];
    if (v->pz) {
        g->sz[k] = g->wrap ? wrap_into(v->pz[r], g->origin[2], g->extent[2]) : v->pz[r];
        g->svz[k] = v->vz[r];
    }
}

static void scatter_blocks(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    sort_ctx_t* c = (sort_ctx_t*)vctx;
    grid_t* g = c->g;
    for (int32_t b = begin; b < end; ++b) {
        int32_t* next = g->histogram + (size_t)b * g->bucket_count;
        uint32_t lo = (uint32_t)c->lo[b];
        int32_t first = b * c->block_size, last = first + c->block_size;
        if (last > c->n) last = c->n;
        const int32_t* prev = c->prev;
        if (c->ids) { /* each agent's id beside it (sort_buckets) */
            for (int32_t k = first; k < last; ++k) {
                const int32_t i = prev ? prev[k] : k;
                const uint32_t key = g->key[i];
                int32_t at = next[key - lo]++;
                g->order[at] = i;
                c->sorted_ids[at] = c->ids[i];
                c->sorted_keys[at] = key;
            }
        } else {
            for (int32_t k = first; k < last; ++k) {
                const int32_t i = prev ? prev[k] : k;
                g->order[next[g->key[i] - lo]++] = i;
            }
        }
    }
}

/* Each bucket's agents by global id: the scatter leaves them in row order,
 * which depends on the history of the storage (when it was last reordered,
 * which agents were removed), while ids do not. Neighbor candidates then
 * come in an order that no storage, reorder interval or split of the world
 * changes, and so do the floating-point sums over them. A bucket holds a
 * few agents; one already in id order (a reorder leaves every bucket so)
 * costs a comparison per agent. */

static inline void cas(uint64_t* v, int a, int b)
{
    uint64_t x = v[a], y = v[b];
    uint64_t swap = (x ^ y) & (0u - (uint64_t)(x > y)); /* a mask, not a branch */
    v[a] = x ^ swap;
    v[b] = y ^ swap;
}

/* Eight words in order: the 19 compare-exchanges of the smallest network
 * for eight (Knuth, The Art of Computer Programming 3, 5.3.4). */
static inline void sort8(uint64_t* v)
{
    cas(v, 0, 2), cas(v, 1, 3), cas(v, 4, 6), cas(v, 5, 7);
    cas(v, 0, 4), cas(v, 1, 5), cas(v, 2, 6), cas(v, 3, 7);
    cas(v, 0, 1), cas(v, 2, 3), cas(v, 4, 5), cas(v, 6, 7);
    cas(v, 2, 4), cas(v, 3, 5);
    cas(v, 1, 4), cas(v, 3, 6);
    cas(v, 1, 2), cas(v, 3, 4), cas(v, 5, 6);
}

/* Bucket [at, at + m) of the sorted order by the agents' ids below 2^32
 * (the scatter put each beside its agent). */
static void sort_bucket_ids(grid_t* g, uint32_t* sorted_ids, int32_t at, int32_t m)
{
    int32_t* o = g->order + at;
    uint32_t* id = sorted_ids + at;
    if (m <= 8) {
        /* each agent as one word, its id above its row, sorted by a
         * network of compare-exchanges (no branch: an insertion sort
         * mispredicts about once an agent); most buckets hold about six */
        uint64_t v[8];
        for (int32_t k = 0; k < 8; ++k) v[k] = k < m ? (uint64_t)id[k] << 32 | (uint32_t)o[k] : UINT64_MAX;
        sort8(v);
        for (int32_t k = 0; k < m; ++k) {
            o[k] = (int32_t)(uint32_t)v[k];
            id[k] = (uint32_t)(v[k] >> 32);
        }
        return;
    }
    for (int32_t i = 1; i < m; ++i) { /* larger buckets: by insertion */
        int32_t r = o[i];
        uint32_t x = id[i];
        int32_t j = i;
        for (; j > 0 && id[j - 1] > x; --j) {
            o[j] = o[j - 1];
            id[j] = id[j - 1];
        }
        o[j] = r;
        id[j] = x;
    }
}

static void sort_buckets(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    sort_ctx_t* c = (sort_ctx_t*)vctx;
    grid_t* g = c->g;
    const uint32_t* lo = TABLE_COL(&c->w->agents, uint32_t, AC_ID_LO);
    const uint32_t* hi = TABLE_COL(&c->w->agents, uint32_t, AC_ID_HI);
    int32_t first = begin * c->chunk, last = end * c->chunk;
    if (last > g->bucket_count) last = g->bucket_count;
    if (c->ids) {
        /* ids below 2^32: the chunk's sorted positions a lane at a time,
         * each against the one before it; a bucket goes in order of id
         * where two of its agents are out of it (as a reorder leaves
         * none: most buckets are in order, and the few an agent entered
         * are not). The same buckets as a look at every bucket finds. */
        const int32_t k0 = g->cell_start[first], k1 = g->cell_start[last];
        const uint32_t* key = c->sorted_keys;
        uint32_t* id = c->sorted_ids;
        const lanei flip = lanei_set1(INT32_MIN); /* unsigned order as signed */
        uint32_t done = UINT32_MAX;               /* the bucket last put in order */
        int32_t k = k0 + 1;
        for (; k + SHOAL_LANES <= k1; k += SHOAL_LANES) {
            const lanei same =
                lanei_xor(lanei_loadu((const int32_t*)key + k), lanei_loadu((const int32_t*)key + k - 1));
            const lanem one = lanei_cmp_eq(same, lanei_set1(0));
            const lanem after = lanei_cmp_gt(lanei_xor(lanei_loadu((const int32_t*)id + k - 1), flip),
                                             lanei_xor(lanei_loadu((const int32_t*)id + k), flip));
            for (uint32_t bad = lane_mask_bits(lane_mask_and(one, after)); bad; bad &= bad - 1) {
                const uint32_t b = key[k + __builtin_ctz(bad)];
                if (b == done) continue;
                done = b;
                sort_bucket_ids(g, id, g->cell_start[b], g->cell_start[b + 1] - g->cell_start[b]);
            }
        }
        for (; k < k1; ++k) {
            if (key[k] != key[k - 1] || id[k - 1] < id[k] || key[k] == done) continue;
            done = key[k];
            sort_bucket_ids(g, id, g->cell_start[done], g->cell_start[done + 1] - g->cell_start[done]);
        }
        return;
    }
    for (int32_t b = first; b < last; ++b) {
        int32_t at = g->cell_start[b], m = g->cell_start[b + 1] - at;
        if (m < 2) continue;
        int32_t* o = g->order + at;
        for (int32_t i = 1; i < m; ++i) { /* ids of 64 bits, read from the rows */
            int32_t r = o[i];
            uint64_t v = (uint64_t)lo[r] | (uint64_t)hi[r] << 32;
            int32_t j = i;
            for (; j > 0; --j) {
                int32_t q = o[j - 1];
                if (((uint64_t)lo[q] | (uint64_t)hi[q] << 32) <= v) break;
                o[j] = q;
            }
            o[j] = r;
        }
    }
}

/* Worlds of up to this many agents copy a lane of sorted agents at a time
 * (below). */
#define COPY_LANES_MAX (1 << 17)

/* The sorted copies, read through the order: near-sequential reads of
 * rows that a recent reorder left in cell order, sequential writes.
 * (Writing them from the scatter instead, in row order, was slower: its
 * writes land out of order across eight arrays.) With the component in
 * agent-row order the component row is the agent row, with no look-up,
 * and in a world of up to COPY_LANES_MAX agents the copies go a lane at a
 * time with gathers (also when no component's rows are kept: -1); a lane with an agent outside a torus box goes through
 * put_sorted's wrap, which gives the others the same bits. On a 2-core
 * AVX-512 Zen 5 (32 MiB L3), one thread: the lanes took 159-177 us a step
 * at 100k agents against 208-214 one at a time, but 1.49 against 1.02 ms
 * at 400k and 4.5 against 3.0 ms at 1M, where most reads miss the cache. */
static void sorted_cells(int32_t begin, int32_t end, int32_t worker, void* vctx);

static void copy_sorted(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    sort_ctx_t* c = (sort_ctx_t*)vctx;
    grid_t* g = c->g;
    sorted_view_t v = sorted_sources(c->w, g);
    const int in_order = c->comp_in_order;
    int32_t k = begin;
    /* in component order, or with no component's rows to keep (-1) */
    const int no_rows = v.comp == NULL || v.comp_count == 0;
    if ((in_order || no_rows) && c->n <= COPY_LANES_MAX) {
        const int three = v.pz != NULL;
        const lanef o0 = lane_set1(g->origin[0]), o1 = lane_set1(g->origin[1]), o2 = lane_set1(g->origin[2]);
        const lanef e0 = lane_set1(g->extent[0]), e1 = lane_set1(g->extent[1]), e2 = lane_set1(g->extent[2]);
        for (; k + SHOAL_LANES <= end; k += SHOAL_LANES) {
            lanei r;
            if (c->identity) {
                r = lanei_add(lanei_iota(), lanei_set1(k));
                lanei_storeu(g->order + k, r);
            } else {
                r = lanei_loadu(g->order + k);
            }
            lanef x = lane_gather(v.px, r), y = lane_gather(v.py, r);
            lanef z = three ? lane_gather(v.pz, r) : lane_zero();
            if (g->wrap) {
                lanef fx = lane_sub(x, o0), fy = lane_sub(y, o1);
                lanem in = lane_mask_and(lane_mask_and(lane_cmp_ge(fx, lane_zero()), lane_cmp_lt(fx, e0)),
                                         lane_mask_and(lane_cmp_ge(fy, lane_zero()), lane_cmp_lt(fy, e1)));
                if (three) {
                    lanef fz = lane_sub(z, o2);
                    in = lane_mask_and(in, lane_mask_and(lane_cmp_ge(fz, lane_zero()), lane_cmp_lt(fz, e2)));
                }
                if (!lane_mask_all(in)) {
                    for (int32_t j = k; j < k + SHOAL_LANES; ++j) put_sorted(g, &v, j, g->order[j], in_order);
                    continue;
                }
            }
            lane_storeu(g->sx + k, x);
            lane_storeu(g->sy + k, y);
            lane_storeu(g->svx + k, lane_gather(v.vx, r));
            lane_storeu(g->svy + k, lane_gather(v.vy, r));
            if (three) {
                lane_storeu(g->sz + k, z);
                lane_storeu(g->svz + k, lane_gather(v.vz, r));
            }
            lanei_storeu(g->scomp + k, no_rows ? lanei_set1(-1) : r);
        }
    }
    for (; k < end; ++k) {
        if (c->identity) g->order[k] = k; /* after a reorder, position k is row k */
        put_sorted(g, &v, k, g->order[k], in_order);
    }
    /* their cells while the copies are at hand: one pass less over every
     * agent, and one wait for the workers */
    if (!g->direct) sorted_cells(begin, end, worker, g);
}

/* ---- each agent's cell (hashed grids) ------------------------------------
 *
 * Every sorted agent's cell is kept (grid_t.scell): candidates at one
 * distance go by cell (grid_before), and cells' runs are found by them. */

/* grid_coord's cells along an axis of a lane of sorted coordinates, as
 * floats: its arithmetic (the clamps, a torus's corrections) operation for
 * operation, so each lane holds grid_coord's integer exactly. */
static inline lanef lane_cell(const grid_t* g, lanef p, int axis)
{
    const lanef c = g->wrap ? lane_sub(p, lane_set1(g->origin[axis])) : p;
    lanef f = lane_floor(lane_mul(c, lane_set1(g->inv_cell[axis])));
    const lanef top = lane_set1(1.0e9f), bottom = lane_set1(-1.0e9f), zero = lane_zero();
    f = lane_select(lane_cmp_le(f, top), f, top); /* a NaN goes to the top */
    f = lane_select(lane_cmp_lt(f, bottom), bottom, f);
    if (g->wrap) {
        const lanef n = lane_set1((float)g->n[axis]);
        f = lane_select(lane_cmp_ge(f, n), lane_sub(f, n), f);
        f = lane_select(lane_cmp_lt(f, zero), lane_add(f, n), f);
        f = lane_select(lane_mask_and(lane_cmp_ge(f, zero), lane_cmp_lt(f, n)), f, zero);
    }
    return f;
}

/* The cells of sorted agents [begin, end), a lane at a time. */
static void sorted_cells(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    grid_t* g = (grid_t*)vctx;
    const float* at[3] = {g->sx, g->sy, g->sz};
    for (int a = 0; a < (g->dims == 3 ? 3 : 2); ++a) {
        int32_t k = begin;
        for (; k + SHOAL_LANES <= end; k += SHOAL_LANES)
            lanei_storeu(g->scell[a] + k, lane_ftoi(lane_cell(g, lane_loadu(at[a] + k), a)));
        for (; k < end; ++k) g->scell[a][k] = grid_coord(g, at[a][k], a);
    }
}

/* ---- each cell one run (hashed grids, cell_runs) ---------------------------
 *
 * The scatter and sort_buckets leave each bucket by global id. Where cells
 * of two blocks share a bucket (their runs of buckets coincide, as the
 * table's size decides), their agents interleave; for a module that visits
 * cells (grid_cell_run: the neighbors' packs) each bucket holding more than
 * one cell is put in order of cell, each cell's agents still by global id.
 * A run of buckets whose agents lie in one block (nearly all of them where
 * the blocks are fewer than the runs) needs no look at its buckets: its
 * cells have a bucket each. The nearest agents (grid_nearest.h) are found
 * from whole buckets and need no such order: a world of crowds alone is
 * spared it. */

/* Sorted positions [k0, k0 + m) of a 4-byte column reordered: entry j
 * takes the value at k0 + perm[j]. tmp: room for m values. */
static void permute_run(void* column, int32_t k0, const int32_t* perm, int32_t m, int32_t* tmp)
{
    if (!column) return;
    unsigned char* at = (unsigned char*)column + (size_t)k0 * 4;
    for (int32_t j = 0; j < m; ++j) memcpy(tmp + j, at + (size_t)perm[j] * 4, 4);
    memcpy(at, tmp, (size_t)m * 4);
}

/* Bucket [k0, k1) (by global id) by cell, each cell's agents kept in
 * order, when they lie in more than one cell. The keys and the histogram,
 * spent by now, lend their entries k0 .. k1 - 1 (n entries at least each:
 * a hashed table has as many buckets as agents) for the permutation and a
 * copy. The cells a bucket holds are few: each pass takes the least of
 * those left. */
static void group_bucket(grid_t* g, int32_t k0, int32_t k1)
{
    int32_t first[3], c[3];
    grid_sorted_cell(g, k0, first);
    int32_t k = k0 + 1;
    for (; k < k1; ++k) {
        grid_sorted_cell(g, k, c);
        if (c[0] != first[0] || c[1] != first[1] || c[2] != first[2]) break;
    }
    if (k == k1) return; /* one cell */
    const int32_t m = k1 - k0;
    int32_t* perm = (int32_t*)(void*)g->key + k0;
    int32_t* left = g->histogram + k0; /* 1: not placed yet */
    for (int32_t j = 0; j < m; ++j) left[j] = 1;
    for (int32_t placed = 0, from = 0; placed < m;) {
        while (!left[from]) ++from; /* the first not placed */
        int32_t least[3];
        grid_sorted_cell(g, k0 + from, least);
        for (int32_t j = from + 1; j < m; ++j) {
            if (!left[j]) continue;
            grid_sorted_cell(g, k0 + j, c);
            if (grid_cell_less(c, least)) memcpy(least, c, sizeof least);
        }
        for (int32_t j = from; j < m; ++j) {
            if (!left[j]) continue;
            grid_sorted_cell(g, k0 + j, c);
            if (c[0] == least[0] && c[1] == least[1] && c[2] == least[2]) {
                perm[placed++] = j;
                left[j] = 0;
            }
        }
    }
    void* columns[11] = {g->order, g->scomp, g->sx,       g->sy,       g->sz,      g->svx,
                         g->svy,   g->svz,   g->scell[0], g->scell[1], g->scell[2]};
    for (int i = 0; i < 11; ++i) permute_run(columns[i], k0, perm, m, left);
}

/* Runs of buckets [begin, end): what each holds (grid_t.runs), and the
 * buckets of a run holding several blocks' cells by cell. */
static void group_runs(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    grid_t* g = (grid_t*)vctx;
    const int dims = g->dims == 3 ? 3 : 2, sh = GRID_BLOCK_SHIFT(g->dims);
    for (int32_t r = begin; r < end; ++r) {
        int32_t* run = g->runs + (size_t)r * GRID_RUN_FIELDS;
        const int32_t b0 = r << GRID_RUN_SHIFT;
        const int32_t k0 = g->cell_start[b0], k1 = g->cell_start[b0 + GRID_RUN_BUCKETS];
        if (k0 == k1) {
            run[3] = GRID_RUN_EMPTY;
            continue;
        }
        int one = 1;
        run[2] = 0;
        for (int a = 0; a < dims; ++a) {
            const int32_t* cell = g->scell[a];
            const int32_t block = cell[k0] >> sh;
            for (int32_t k = k0 + 1; k < k1; ++k) one &= (cell[k] >> sh) == block;
            run[a] = block;
        }
        run[3] = one ? GRID_RUN_ONE : GRID_RUN_SHARED;
        if (one) continue;
        for (int32_t b = b0; b < b0 + GRID_RUN_BUCKETS; ++b)
            if (g->cell_start[b + 1] - g->cell_start[b] > 1)
                group_bucket(g, g->cell_start[b], g->cell_start[b + 1]);
    }
}

int64_t spatial_hash_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    int32_t n = w->agents.count;
    grid_t* g = grid_of(w);
    uint64_t since = world_now_ns(), now;
    /* No module's agents use the grid: it stays empty this step. */
    int32_t cell_runs = 0;
    float reach = n > 0 ? grid_reach(w, &cell_runs) : -1.0f;
    if (!(reach >= 0.0f)) {
        g->count = 0;
        return 0;
    }
    g->built = 1;
    memset(g->phase_ns, 0, sizeof g->phase_ns);
#define PHASE_DONE(k) (now = world_now_ns(), g->phase_ns[k] = (int64_t)(now - since), since = now)
    configure(w, g, n, reach);
    g->cell_runs = cell_runs && !g->direct;
    PHASE_DONE(GRID_PHASE_CELL);
    /* One block per worker (at most MAX_BLOCKS), none under 4096 agents. */
    int32_t blocks = w->thread_count > 0 ? w->thread_count : 1;
    if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
    if (blocks > (n + 4095) / 4096) blocks = (n + 4095) / 4096;
    /* the last hash's order, when no row has moved since (kept below) */
    const int32_t* was_order = g->order;
    const int keep_order = g->order_ok && g->count == n && g->order_version == w->structure_version;
    g->order_ok = 0;
    if (!grid_reserve(w, g, n, g->bucket_count, blocks) || (!g->direct && !reserve_cells(w, g, n))) {
        g->count = 0;
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "spatial_hash: out of memory for %d agents", (int)n);
        return -(int64_t)SHOAL_ERR_OUT_OF_MEMORY;
    }
    /* Keyed to the step count, which a failed step does not advance: a
     * step repeated after running out of memory reorders as the first try
     * did (a stable sort of sorted rows changes nothing), so the storage
     * order, and the floating-point sums that follow it, stay those of a
     * run that never failed. */
    const int reorder = w->reorder_interval > 0 && w->step_count % (uint64_t)w->reorder_interval == 0;
    /* A chunk's base is kept in cell_start at the chunk's first bucket: that
     * is the value prefix_offsets writes there anyway, and nothing else reads
     * it before, so the prefix needs no memory of its own. */
    int32_t largest[SHOAL_MAX_THREADS];
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    memset(largest, 0, (size_t)workers * sizeof *largest);
    /* About four prefix chunks per worker, of at least PREFIX_CHUNK
     * buckets: the positions are the same for any cut. */
    int32_t chunk = (int32_t)(((int64_t)g->bucket_count + 4 * workers - 1) / (4 * workers));
    if (chunk < PREFIX_CHUNK) chunk = PREFIX_CHUNK;
    sort_ctx_t c = {.w = w,
                    .g = g,
                    .n = n,
                    .blocks = blocks,
                    .block_size = (n + blocks - 1) / blocks,
                    .chunk = chunk,
                    .chunks = (g->bucket_count + chunk - 1) / chunk,
                    .chunk_base = g->cell_start,
                    .ids = w->next_id <= UINT32_MAX ? TABLE_COL(&w->agents, uint32_t, AC_ID_LO) : NULL,
                    .sorted_ids = (uint32_t*)g->svx,
                    .sorted_keys = (uint32_t*)g->svy,
                    .largest = largest};
    if (keep_order && g->order == was_order) {
        /* the last order becomes sx's memory, which the copies write again
         * (until then it holds the order), and sx's the new order's: the
         * same arrays, swapped rather than copied */
        _Static_assert(sizeof(float) == sizeof(int32_t), "an order in sx's memory");
        int32_t* last = g->order;
        g->order = (int32_t*)(void*)g->sx;
        g->sx = (float*)(void*)last;
        c.prev = last;
    }
    par_for(w, blocks, 1, PAR_STATIC | PAR_TASKS, count_blocks, &c);
    if (c.prev) par_for(w, blocks, 1, PAR_STATIC | PAR_TASKS, count_prev, &c);
    PHASE_DONE(GRID_PHASE_COUNT);
    /* The prefix visits every bucket once and every block's range once. Up
     * to SERIAL_PREFIX of those it is quicker on this thread than two
     * parallel rounds (each a wake-up and a barrier). */
    int64_t visits = g->bucket_count;
    for (int32_t b = 0; b < blocks; ++b) visits += c.hi[b] - c.lo[b] + 1;
    const int serial = visits <= SERIAL_PREFIX || c.chunks == 1;
    if (serial)
        prefix_totals(0, c.chunks, 0, &c);
    else
        par_for(w, c.chunks, 1, PAR_STATIC | PAR_TASKS, prefix_totals, &c);
    int32_t running = 0;
    for (int32_t ch = 0; ch < c.chunks; ++ch) {
        int32_t t = c.chunk_base[ch * chunk];
        c.chunk_base[ch * chunk] = running;
        running += t;
    }
    if (serial)
        prefix_offsets(0, c.chunks, 0, &c);
    else
        par_for(w, c.chunks, 1, PAR_STATIC | PAR_TASKS, prefix_offsets, &c);
    g->cell_start[g->bucket_count] = n;
    PHASE_DONE(GRID_PHASE_PREFIX);
    int32_t most = 0;
    for (int32_t i = 0; i < workers; ++i) most = largest[i] > most ? largest[i] : most;
    /* The users' memory sized from the bucket counts just made (the
     * neighbors' packs), before the agent table is reordered: out of
     * memory here changes nothing. */
    for (int32_t m = 0; m < w->registry->module_count; ++m) {
        const grid_use_t* use = w->registry->modules[m]->grid;
        if (use && use->sized && !use->sized(w, g, n, most)) {
            g->count = 0;
            return -(int64_t)SHOAL_ERR_OUT_OF_MEMORY;
        }
    }
    since = world_now_ns(); /* the users' sizing is no phase */
    par_for(w, blocks, 1, PAR_STATIC | PAR_TASKS, scatter_blocks, &c);
    par_for(w, c.chunks, 1, PAR_STATIC | PAR_TASKS, sort_buckets, &c);
    PHASE_DONE(GRID_PHASE_SCATTER);

    if (reorder) {
        /* Every reorder_interval steps, put the agent table itself in cell
         * order: the sorted order becomes the identity and later copies
         * read memory almost sequentially. The sorted-copy arrays
         * (written after this) are the permutation's scratch columns; the
         * bucket keys, spent once scattered, hold the components' row
         * permutations. */
        float* spare[6] = {g->sx, g->sy, g->svx, g->svy, g->sz, g->svz};
        world_permute_agents_parallel(w, g->order, spare, g->dims == 3 ? 6 : 4, (int32_t*)g->key);
        c.identity = 1;
    }
    PHASE_DONE(GRID_PHASE_REORDER);
    /* Known without a scan while no row moved: a reorder leaves every
     * component on every agent in agent-row order, and notes it. */
    c.comp_in_order = g->rows_comp >= 0 && world_component_in_agent_order(w, g->rows_comp);
    par_for(w, n, grid_agent_block(w, n), PAR_AFFINE, copy_sorted, &c); /* and sorted_cells */
    if (g->cell_runs) par_for(w, g->bucket_count >> GRID_RUN_SHIFT, 64, PAR_STATIC, group_runs, g);
    PHASE_DONE(GRID_PHASE_COPY);
#undef PHASE_DONE
    g->count = n;
    g->positions_valid = 0;
    g->order_ok = 1;
    g->order_version = w->structure_version;
    return n;
}

int32_t grid_agent_block(const world_t* w, int32_t n)
{
    /* 100k agents on 16 threads in blocks of 2048: 49 blocks, the busiest
     * worker a third over an even share; blocks of 784: 128. */
    int64_t workers = w->thread_count > 0 ? w->thread_count : 1;
    int64_t block = (int64_t)n / (8 * workers);
    return block > 2048 ? 2048 : block < 512 ? 512 : (int32_t)((block + 15) / 16 * 16);
}

/* ---- rows that move after the hash (see spatial_hash.h) ---------------- */

/* Sorted position of the agent at `row` in this step's grid, or -1 (rows
 * past the sorted count hold agents added since). The positions live in
 * key, free once the scatter is done, and are built on first use: rows
 * rarely move within a step. */
const int32_t* grid_positions(grid_t* g)
{
    int32_t* pos = (int32_t*)(void*)g->key;
    if (!g->positions_valid) {
        for (int32_t k = 0; k < g->count; ++k) pos[g->order[k]] = k;
        g->positions_valid = 1;
    }
    return pos;
}

static void positions_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    grid_t* g = (grid_t*)vctx;
    int32_t* pos = (int32_t*)(void*)g->key;
    for (int32_t k = begin; k < end; ++k) pos[g->order[k]] = k;
}

const int32_t* grid_positions_par(world_t* w, grid_t* g)
{
    if (!g->positions_valid) {
        par_for(w, g->count, 4096, PAR_STATIC, positions_range, g);
        g->positions_valid = 1;
    }
    return (const int32_t*)(const void*)g->key;
}

static int32_t grid_position(grid_t* g, int32_t row)
{
    const int32_t* pos = grid_positions(g);
    return row >= 0 && row < g->count ? pos[row] : -1;
}

void grid_sorted_row_removed(world_t* w, int32_t agent_row, int32_t cr, int32_t moved_agent_row)
{
    grid_t* g = grid_data(w);
    if (!g || g->count == 0) return;
    int32_t k = grid_position(g, agent_row);
    if (k >= 0) g->scomp[k] = -1;
    int32_t moved = grid_position(g, moved_agent_row);
    if (moved >= 0) g->scomp[moved] = cr;
}

static void grid_agent_row_moved(world_t* w, int32_t from, int32_t to)
{
    grid_t* g = grid_data(w);
    if (!g || g->count == 0) return;
    int32_t k = grid_position(g, from);
    if (to < g->count) ((int32_t*)(void*)g->key)[to] = k;
    if (k >= 0) g->order[k] = to;
}

/* ---- wrap: keep positions inside a torus box (integrate stage) ---------- */

typedef struct wrap_ctx {
    world_t* w;
} wrap_ctx_t;

static void wrap_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    (void)worker;
    world_t* w = ((wrap_ctx_t*)vctx)->w;
    for (int k = 0; k < w->dims; ++k) {
        float* p = AGENT_F(w, AC_POS_X + k);
        float origin = w->bounds_min[k], extent = w->bounds_max[k] - w->bounds_min[k];
        /* Nearly every agent is still inside: test a lane at a time and
         * rewrite only lanes that left the box. (Columns are padded to
         * whole lanes, so the last load stays inside the column.) */
        lanef lo = lane_set1(origin), ext = lane_set1(extent);
        for (int32_t i = begin; i < end; i += SHOAL_LANES) {
            lanef f = lane_sub(lane_loadu(p + i), lo);
            if (lane_mask_all(lane_mask_and(lane_cmp_ge(f, lane_zero()), lane_cmp_lt(f, ext)))) continue;
            int32_t stop = i + SHOAL_LANES < end ? i + SHOAL_LANES : end;
            for (int32_t j = i; j < stop; ++j) p[j] = wrap_into(p[j], origin, extent);
        }
    }
}

int wrap_idle(const world_t* w) { return !w->wrap; }

rows_fn* wrap_rows(world_t* w, float dt, void* ctx)
{
    (void)dt;
    ((wrap_ctx_t*)ctx)->w = w;
    return wrap_range;
}

int64_t wrap_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    if (!w->wrap) return 0;
    wrap_ctx_t c = {w};
    par_for(w, w->agents.count, 4096, PAR_AFFINE, wrap_range, &c);
    return w->agents.count;
}

/* ---- the module ------------------------------------------------------------ */

static int grid_init(world_t* w)
{
    grid_t* g = (grid_t*)mem_calloc(&w->alloc, sizeof(grid_t));
    w->module_data[MOD_GRID] = g;
    if (!g) return 0;
    /* The component whose rows the grid keeps per sorted position: the
     * first module that asks for them (components are numbered in registry
     * order among the modules that have one). */
    g->rows_comp = -1;
    for (int k = 0; k < w->comp_count && g->rows_comp < 0; ++k) {
        const grid_use_t* use = w->comp_module[k]->grid;
        if (use && use->sorted_rows) g->rows_comp = k;
    }
    return 1;
}

static void grid_release(world_t* w)
{
    grid_t* g = grid_of(w);
    if (!g) return;
    const allocator_t* a = &w->alloc;
    free_arrays(w, g);
    free_cells(w, g);
    mem_free(a, g->cell_start, ((size_t)g->bucket_capacity + 1) * sizeof(int32_t));
    mem_free(a, g->histogram, (size_t)g->worker_capacity * g->bucket_capacity * sizeof(int32_t));
    mem_free(a, g->runs, run_bytes(g->bucket_capacity));
    mem_free(a, g, sizeof *g);
    w->module_data[MOD_GRID] = NULL;
}

void grid_note_built(world_t* w) { grid_of(w)->built = 1; }

/* No component, state hash or snapshot section: the grid is rebuilt by
 * every sense stage from the agents' positions. Its memory grows inside
 * the spatial hash, before it changes anything (it depends on the step's
 * bucket counts), so it has no reserve hook. */
const module_t grid_module = {
    .name = "grid",
    .init = grid_init,
    .release = grid_release,
    .agent_row_moved = grid_agent_row_moved,
};
