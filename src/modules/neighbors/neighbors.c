/* Separation, alignment and cohesion over the spatial hash ("Group
 * behaviors" of "Behavior-based control examples", after Reynolds),
 * written once on the lane layer.
 *
 * Work goes cell by cell: the agents of a cell's 3x3 (3x3x3) block of cells
 * lie contiguous in a per-worker buffer (a pack), and every agent of the
 * cell that has the neighbors component runs the pair kernel over it a full
 * lane at a time, two agents per pass. On a direct grid the pack is a
 * window of a strip that grows column by column along a row of cells (see
 * nb_strip), so each cell is copied 3 (9) times per step instead of 9
 * (27); hashed grids and narrow tori pack each block anew.
 *
 * For agent i and each neighbor j (within radius, inside the field of view,
 * not i itself), with d = x_j - x_i (minimal image on a torus) and w_j = 1:
 *   separation  S = sum -d / |d|^2        V_sep = K_sep S
 *   alignment   A = sum v_j               V_ali = K_align A / n
 *   cohesion    C = sum d                 V_coh = K_coh C / n  (= x_cm - x)
 * and desired += c_sep V_sep + c_ali V_ali + c_coh V_coh. Cohesion uses
 * offsets rather than absolute positions, which keeps precision far from
 * the origin and is exact across torus edges.
 *
 * With max_neighbors > 0 and more neighbors than that, only the nearest
 * count (ties broken by packing order); that path is scalar and rare. */
#include <math.h>
#include <string.h>

#include "modules/neighbors/neighbors.h"
#include "ecs/columns.h"
#include "ecs/parallel.h"
#include "ecs/rng.h"
#include "simd/lanes.h"
#include "simd/vec.h"
#include "modules/grid/grid.h"
#include "modules/agent.h"

#include "modules/neighbors/neighbors_pack.h"
#include "modules/neighbors/neighbors_kernel.h"

typedef struct nb_ctx {
    world_t* w;
    grid_t* g;
    const neighbors_world_t* nw;
    int64_t* worker_agents;
    int64_t* worker_pairs;
    int64_t* worker_found;
    int32_t params_row; /* 0: every row's parameters are row 0's (params_one); -1: each its own */
} nb_ctx_t;


typedef struct nb_out {
    const float *k_sep, *k_ali, *k_coh, *w_sep, *w_ali, *w_coh;
    float *dx, *dy, *dz; /* dz NULL in 2D */
} nb_out_t;

/* desired += c_sep V_sep + c_ali V_ali + c_coh V_coh, with the parameters
 * of component row cr. */
static inline void apply_sums(const nb_out_t* o, int32_t cr, int32_t row, const sums_t* r)
{
    if (r->n == 0.0f) return;
    float inv_n = 1.0f / r->n;
    float ks = o->k_sep[cr] * o->w_sep[cr];
    float ka = o->k_ali[cr] * o->w_ali[cr] * inv_n;
    float kc = o->k_coh[cr] * o->w_coh[cr] * inv_n;
    o->dx[row] += ks * r->sep[0] + ka * r->ali[0] + kc * r->coh[0];
    o->dy[row] += ks * r->sep[1] + ka * r->ali[1] + kc * r->coh[1];
    if (o->dz) o->dz[row] += ks * r->sep[2] + ka * r->ali[2] + kc * r->coh[2];
}

/* What the agent passes of one range read and write. */
typedef struct nb_env {
    world_t* w;
    const grid_t* g;
    nb_out_t out;
    const float* radius;
    const float* fov_cos;
    const int32_t* max;
    /* Parameters of component row cr are at row cr & pmask: 0 when every
     * parameter column holds one value, so all agents read row 0 (a few
     * cache lines) instead of their own rows (several misses per agent
     * once rows drift from the sorted order between reorders). */
    int32_t pmask;
    const neighbors_world_t* nw; /* the packs' size this step */
} nb_env_t;

typedef struct nb_counts {
    int64_t touched, pairs, found;
} nb_counts_t;

/* The pack of cell c's block. */
static inline int32_t pack_cell(const grid_t* g, const int32_t c[3], nb_scratch_t* s, int32_t* self_base)
{
    int32_t cells[MAX_BLOCK][3];
    float shift[MAX_BLOCK][3];
    int own;
    int count = block_cells(g, c, cells, shift, &own);
    return pack_block(g, (const int32_t(*)[3])cells, (const float(*)[3])shift, count, own, s, self_base);
}

/* First bucket in [q, end) holding agents, or end. */
static inline int32_t next_occupied(const grid_t* g, int32_t q, int32_t end)
{
    while (q < end && g->cell_start[q + 1] == g->cell_start[q]) ++q;
    return q;
}

/* Agent inputs of sorted agent k (component row cr) at pack index self. */
static inline __attribute__((always_inline)) void agent_load(const nb_env_t* e, int32_t k, int32_t cr,
                                                             int32_t self, agent_in_t* a)
{
    const grid_t* g = e->g;
    a->x[0] = g->sx[k];
    a->x[1] = g->sy[k];
    a->x[2] = g->dims == 3 ? g->sz[k] : 0.0f;
    a->radius = e->radius[cr & e->pmask];
    a->r2 = a->radius * a->radius;
    a->fov_cos = e->fov_cos[cr & e->pmask];
    a->self = self;
    a->fwd[0] = a->fwd[1] = a->fwd[2] = 0.0f;
    if (a->fov_cos > -1.0f) {
        vec3 f = agent_forward(e->w, g->order[k]);
        a->fwd[0] = f.x;
        a->fwd[1] = f.y;
        a->fwd[2] = f.z;
    }
}

/* The agents [first, hi) of one cell, whose block is packed in s (m
 * candidates, sorted agent k at pack index k + self0): capped agents run
 * alone, the others in pairs through kernel2, an odd one last alone. */
static inline __attribute__((always_inline)) void cell_agents(const nb_env_t* e, nb_scratch_t* s, int32_t m,
                                                              int32_t self0, int32_t first, int32_t hi,
                                                              nb_counts_t* n, const int variant)
{
    const grid_t* g = e->g;
    int32_t pend = -1, touched = 0;
    for (int32_t k = first; k < hi; ++k) {
        int32_t cr = g->scomp[k];
        if (cr < 0) continue;
        ++touched;
        if (e->max[cr & e->pmask] > 0) {
            agent_in_t a;
            agent_load(e, k, cr, k + self0, &a);
            sums_t r;
            kernel_v(g, s, m, &a, &r, s->d2, variant);
            int32_t cap = e->max[cr & e->pmask];
            if (r.n > (float)cap) nearest_sums(g, s, m, &a, cap, &r);
            n->found += (int64_t)r.n;
            apply_sums(&e->out, cr & e->pmask, g->order[k], &r);
            continue;
        }
        if (pend < 0) {
            pend = k;
            continue;
        }
        int32_t pcr = g->scomp[pend];
        agent_in_t a, b;
        agent_load(e, pend, pcr, pend + self0, &a);
        agent_load(e, k, cr, k + self0, &b);
        sums_t ra, rb;
        kernel2_v(g, s, m, &a, &b, &ra, &rb, variant);
        n->found += (int64_t)ra.n + (int64_t)rb.n;
        apply_sums(&e->out, pcr & e->pmask, g->order[pend], &ra);
        apply_sums(&e->out, cr & e->pmask, g->order[k], &rb);
        pend = -1;
    }
    if (pend >= 0) {
        int32_t pcr = g->scomp[pend];
        agent_in_t a;
        agent_load(e, pend, pcr, pend + self0, &a);
        sums_t r;
        kernel_v(g, s, m, &a, &r, NULL, variant);
        n->found += (int64_t)r.n;
        apply_sums(&e->out, pcr & e->pmask, g->order[pend], &r);
    }
    n->touched += touched;
    n->pairs += (int64_t)touched * m;
}

/* A direct grid: a bucket is one cell, packed once for all its agents,
 * through strips when the grid allows them. */
static inline __attribute__((always_inline)) void range_direct_v(const nb_env_t* e, nb_scratch_t* s,
                                                                 int32_t begin, int32_t end, nb_counts_t* n,
                                                                 const int variant)
{
    const grid_t* g = e->g;
    const int strips = strips_ok(g);
    /* A strip holds per - 2 lanes: a column appended past `room` would not
     * fit for sure, so the strip moves its last columns to the front. */
    const int32_t column_most = e->nw->largest * (g->dims == 3 ? 9 : 3);
    nb_strip_t st = {.y = INT32_MIN, .room = (int32_t)e->nw->per - 2 * SHOAL_MAX_LANES - column_most};
    for (int32_t q = next_occupied(g, begin, end); q < end; q = next_occupied(g, q + 1, end)) {
        int32_t lo = g->cell_start[q], hi = g->cell_start[q + 1];
        int32_t first = lo; /* a cell without the component is not packed */
        while (first < hi && g->scomp[first] < 0) ++first;
        if (first == hi) continue;
        int32_t self_base = 0, m;
        if (strips) {
            int32_t cell[3], base;
            cell_of_bucket(g, (uint32_t)q, cell);
            m = strip_block(g, s, &st, cell, &base, &self_base, variant >= KV_3D);
            nb_scratch_t v = *s;
            v.cx += base;
            v.cy += base;
            v.cz += base;
            v.cvx += base;
            v.cvy += base;
            v.cvz += base;
            cell_agents(e, &v, m, self_base - lo, first, hi, n, variant);
        } else {
            int32_t cell[3];
            cell_of_bucket(g, (uint32_t)q, cell);
            m = pack_cell(g, cell, s, &self_base);
            cell_agents(e, s, m, self_base - lo, first, hi, n, variant);
        }
    }
}

#define RANGE_DIRECT(name, variant)                                                                          \
    static __attribute__((noinline)) void name(const nb_env_t* e, nb_scratch_t* s, int32_t begin,            \
                                               int32_t end, nb_counts_t* n)                                  \
    {                                                                                                        \
        range_direct_v(e, s, begin, end, n, variant);                                                        \
    }
RANGE_DIRECT(range_direct_2d, KV_2D)
RANGE_DIRECT(range_direct_2d_wrap, KV_2D_WRAP)
RANGE_DIRECT(range_direct_3d, KV_3D)
RANGE_DIRECT(range_direct_3d_wrap, KV_3D_WRAP)

static void range_direct(const nb_env_t* e, nb_scratch_t* s, int32_t begin, int32_t end, nb_counts_t* n)
{
    static void (*const by_variant[4])(const nb_env_t*, nb_scratch_t*, int32_t, int32_t, nb_counts_t*) = {
        range_direct_2d, range_direct_2d_wrap, range_direct_3d, range_direct_3d_wrap};
    by_variant[kernel_variant(e->g)](e, s, begin, end, n);
}

/* A hashed grid: a bucket may hold several cells, each one run of its
 * agents (grid_cell_run); each cell's block is packed once for the agents
 * of the cell. */
static void range_hashed(const nb_env_t* e, nb_scratch_t* s, int32_t begin, int32_t end, nb_counts_t* n)
{
    const grid_t* g = e->g;
    for (int32_t q = begin; q < end; ++q) {
        int32_t k = g->cell_start[q];
        const int32_t hi = g->cell_start[q + 1];
        while (k < hi) {
            int32_t cell[3], lo, run_end;
            grid_sorted_cell(g, k, cell);
            grid_cell_run(g, cell[0], cell[1], cell[2], &lo, &run_end); /* lo is k */
            int32_t first = k; /* a cell without the component is not packed */
            while (first < run_end && g->scomp[first] < 0) ++first;
            if (first < run_end) {
                int32_t self_base = 0;
                int32_t m = pack_cell(g, cell, s, &self_base);
                cell_agents(e, s, m, self_base - lo, first, run_end, n, -1);
            }
            k = run_end;
        }
    }
}

/* Floats of one worker's scratch: a pack (6 arrays) and the capped path's
 * d2 and idx. */
#define NB_ARRAYS 8

/* Candidates a worker's pack arrays hold at least. */
#define NB_STRIP_FLOATS 2048

static void worker_scratch(const neighbors_world_t* nw, int32_t worker, nb_scratch_t* s)
{
    size_t per = nw->per;
    float* block = nw->mem + (size_t)worker * per * NB_ARRAYS;
    s->cx = block;
    s->cy = block + per;
    s->cz = block + 2 * per;
    s->cvx = block + 3 * per;
    s->cvy = block + 4 * per;
    s->cvz = block + 5 * per;
    s->d2 = block + 6 * per;
    s->idx = (int32_t*)(block + 7 * per);
}

static void neighbors_range(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    nb_ctx_t* c = (nb_ctx_t*)vctx;
    world_t* w = c->w;
    const grid_t* g = c->g;
    const component_t* comp = &w->comps[COMP_NEIGHBORS];
    const nb_env_t e = {
        .w = w,
        .g = g,
        .out = {TABLE_COL(&comp->table, float, NB_K_SEP), TABLE_COL(&comp->table, float, NB_K_ALI),
                TABLE_COL(&comp->table, float, NB_K_COH), TABLE_COL(&comp->table, float, NB_W_SEP),
                TABLE_COL(&comp->table, float, NB_W_ALI), TABLE_COL(&comp->table, float, NB_W_COH),
                AGENT_F(w, AC_DESIRED_X), AGENT_F(w, AC_DESIRED_Y),
                g->dims == 3 ? AGENT_F(w, AC_DESIRED_Z) : NULL},
        .radius = TABLE_COL(&comp->table, float, NB_RADIUS),
        .fov_cos = TABLE_COL(&comp->table, float, NB_FOV_COS),
        .max = TABLE_COL(&comp->table, int32_t, NB_MAX),
        .pmask = c->params_row,
        .nw = c->nw};
    nb_scratch_t s;
    worker_scratch(c->nw, worker, &s);
    nb_counts_t n = {0, 0, 0};
    if (g->direct)
        range_direct(&e, &s, begin, end, &n);
    else
        range_hashed(&e, &s, begin, end, &n);
    c->worker_agents[worker] += n.touched;
    c->worker_pairs[worker] += n.pairs;
    c->worker_found[worker] += n.found;
}

/* The first bucket whose agents start at sorted position k or after. */
static int32_t bucket_at(const grid_t* g, int32_t k)
{
    int32_t lo = 0, hi = g->bucket_count; /* cell_start[bucket_count] is the agent count */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (g->cell_start[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sorted agents [begin, end): the buckets whose first agent lies there
 * (an empty bucket goes with the range holding where it would start), so
 * every bucket is visited once, by the range of its agents. */
static void neighbors_agents(int32_t begin, int32_t end, int32_t worker, void* vctx)
{
    const grid_t* g = ((const nb_ctx_t*)vctx)->g;
    int32_t first = bucket_at(g, begin), stop = end >= g->count ? g->bucket_count : bucket_at(g, end);
    if (first < stop) neighbors_range(first, stop, worker, vctx);
}

/* Blocks of sorted agents: 2048, or fewer where that leaves a worker
 * under sixteen (the pass is most of a flock's step, its cells' costs
 * uneven), at least 256, a multiple of 16. */
static int32_t neighbors_block(const world_t* w, int32_t n)
{
    int64_t workers = w->thread_count > 0 ? w->thread_count : 1;
    int64_t block = (int64_t)n / (16 * workers);
    return block > 2048 ? 2048 : block < 256 ? 256 : (int32_t)((block + 15) / 16 * 16);
}

/* Floats of the per-worker scratch this step needs (NB_ARRAYS arrays of
 * `*per` floats per worker): a block of 9 (27) buckets holds at most that
 * many times the largest, and never more than all agents. */
static size_t pack_floats(const world_t* w, const grid_t* g, int32_t count, int32_t largest, size_t* per_out)
{
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    int64_t most = (int64_t)largest * (g->dims == 3 ? 27 : 9);
    if (most > count) most = count;
    /* Strips want room for many columns before they have to start over. */
    if (most < NB_STRIP_FLOATS) most = NB_STRIP_FLOATS;
    size_t per = (size_t)most + 2 * SHOAL_MAX_LANES;
    per = (per + 15) / 16 * 16; /* keep every array 64-byte aligned */
    *per_out = per;
    return per * NB_ARRAYS * (size_t)workers;
}

/* Size the packs for this step's grid of `count` agents whose largest
 * bucket holds `largest`, and grow them (grid_use_t.sized). */
static int neighbors_sized(world_t* w, const grid_t* g, int32_t count, int32_t largest)
{
    neighbors_world_t* nw = neighbors_data(w);
    size_t per;
    size_t need = pack_floats(w, g, count, largest, &per);
    nw->per = 0;
    if (need > nw->mem_floats) {
        float* mem = mem_alloc(&w->alloc, need * sizeof(float));
        if (!mem) {
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "neighbors: out of memory for packs of %zu candidates",
                       per);
            return 0;
        }
        mem_free(&w->alloc, nw->mem, nw->mem_floats * sizeof(float));
        nw->mem = mem;
        nw->mem_floats = need;
    }
    nw->per = per;
    nw->largest = largest;
    return 1;
}

/* Whether every column the agent passes read holds one value: then they
 * read row 0's parameters (nb_ctx.params_row). */
static int params_one(world_t* w)
{
    static const int cols[] = {NB_RADIUS, NB_FOV_COS, NB_MAX,   NB_K_SEP, NB_K_ALI,
                               NB_K_COH,  NB_W_SEP,   NB_W_ALI, NB_W_COH};
    return component_columns_one(&w->comps[COMP_NEIGHBORS], cols, (int)(sizeof cols / sizeof cols[0]));
}

int64_t neighbors_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    grid_t* g = grid_data(w);
    if (!g || g->count == 0) return 0;
    neighbors_world_t* nw = neighbors_data(w);
    /* The grid was built for crowd or contact agents only: no flock agent
     * to visit, and no bucket walk (0.7 ms a step for 100k crowd agents). */
    if (w->comps[COMP_NEIGHBORS].table.count == 0) {
        nw->pair_tests = nw->neighbor_sum = nw->kernel_agents = 0;
        return 0;
    }
    int32_t workers = w->thread_count > 0 ? w->thread_count : 1;
    int64_t wagents[SHOAL_MAX_THREADS], wpairs[SHOAL_MAX_THREADS], wfound[SHOAL_MAX_THREADS];
    memset(wagents, 0, (size_t)workers * sizeof *wagents);
    memset(wpairs, 0, (size_t)workers * sizeof *wpairs);
    memset(wfound, 0, (size_t)workers * sizeof *wfound);
    nb_ctx_t c = {.w = w,
                  .g = g,
                  .nw = nw,
                  .worker_agents = wagents,
                  .worker_pairs = wpairs,
                  .worker_found = wfound,
                  .params_row = params_one(w) ? 0 : -1};
    /* The spatial hash sized and grew the packs (neighbors_sized) before
     * the step changed anything. */
    size_t per = nw->per;
    if (per == 0 || per * NB_ARRAYS * (size_t)workers > nw->mem_floats) {
        world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "neighbors: the spatial hash did not run this step");
        return -(int64_t)SHOAL_ERR_INVALID_ARGUMENT;
    }
    /* Each worker starts on its own share of the sorted agents (the cells
     * whose agents lie there), the share the copies gave it and the row
     * passes around this one give it (storage is in cell order since the
     * last reorder), then helps with what is left of the others. Cut by
     * cells, shares would follow the box, not the agents: a flock's
     * clusters put more agents in some. */
    par_for(w, g->count, neighbors_block(w, g->count), PAR_AFFINE, neighbors_agents, &c);
    int64_t touched = 0;
    nw->pair_tests = nw->neighbor_sum = 0;
    for (int32_t i = 0; i < workers; ++i) {
        touched += wagents[i];
        nw->pair_tests += wpairs[i];
        nw->neighbor_sum += wfound[i];
    }
    nw->kernel_agents = touched;
    return touched;
}

int64_t neighbors_bench_kernel(int dims, int32_t candidates, int64_t iterations, double* seconds)
{
    /* A cube (square) of candidates of side 2, radius 1 around its center:
     * about half (a third in 3D) of the candidates are neighbors, which is
     * what a 3x3 block with K neighbors per agent looks like. */
    if (candidates < 1) candidates = 1;
    if (candidates > 1 << 16) candidates = 1 << 16;
    size_t per = ((size_t)candidates + 2 * SHOAL_MAX_LANES + 15) / 16 * 16;
    allocator_t alloc = allocator_default();
    float* mem = mem_alloc(&alloc, per * 8 * sizeof(float));
    if (!mem) {
        *seconds = 0.0;
        return 0;
    }
    grid_t g;
    memset(&g, 0, sizeof g);
    g.dims = dims;
    /* The copy of the kernel `bench flock` runs: its torus packs carry
     * shifted images, so it uses the kernel without minimal image. */
    g.wrap = 0;
    nb_scratch_t s = {.cx = mem,
                      .cy = mem + per,
                      .cz = mem + 2 * per,
                      .cvx = mem + 3 * per,
                      .cvy = mem + 4 * per,
                      .cvz = mem + 5 * per,
                      .d2 = mem + 6 * per,
                      .idx = (int32_t*)(mem + 7 * per)};
    for (int32_t j = 0; j < candidates + SHOAL_LANES; ++j) {
        int live = j < candidates;
        /* Past the end: what pack_finish leaves there. */
        s.cx[j] = live ? rng_range(1, (uint64_t)j, 0, 0, -1.5f, 1.5f) : INFINITY;
        s.cy[j] = live ? rng_range(1, (uint64_t)j, 0, 1, -1.5f, 1.5f) : INFINITY;
        s.cz[j] = !live ? INFINITY : dims == 3 ? rng_range(1, (uint64_t)j, 0, 2, -1.5f, 1.5f) : 0.0f;
        s.cvx[j] = live ? rng_range(1, (uint64_t)j, 1, 0, -1.0f, 1.0f) : 0.0f;
        s.cvy[j] = live ? rng_range(1, (uint64_t)j, 1, 1, -1.0f, 1.0f) : 0.0f;
        s.cvz[j] = 0.0f;
    }
    agent_in_t a;
    memset(&a, 0, sizeof a);
    a.radius = 1.0f;
    a.r2 = 1.0f;
    a.fov_cos = -1.0f;
    a.self = 0;
    float sink[20] = {0.0f};
    uint64_t t0 = world_now_ns();
    /* Agents go through in pairs, as the flock step runs them (kernel2);
     * each pass is two agents' worth of pair tests. */
    agent_in_t b = a;
    for (int64_t it = 0; it < iterations; it += 2) {
        /* Move the agents around so the compiler cannot hoist the kernel. */
        int32_t ia = (int32_t)(it % candidates), ib = (int32_t)((it + 1) % candidates);
        a.x[0] = s.cx[ia];
        a.x[1] = s.cy[ia];
        a.x[2] = s.cz[ia];
        a.self = ia;
        b.x[0] = s.cx[ib];
        b.x[1] = s.cy[ib];
        b.x[2] = s.cz[ib];
        b.self = ib;
        sums_t ra, rb;
        kernel2(&g, &s, candidates, &a, &b, &ra, &rb);
        /* Every sum is used, as the step uses them (otherwise the compiler
         * drops the alignment and cohesion sums from the loop), each into
         * its own total so that no chain of additions sets the pace. */
        for (int c = 0; c < 3; ++c) {
            sink[c] += ra.sep[c];
            sink[3 + c] += ra.ali[c];
            sink[6 + c] += ra.coh[c];
            sink[9 + c] += rb.sep[c];
            sink[12 + c] += rb.ali[c];
            sink[15 + c] += rb.coh[c];
        }
        sink[18] += ra.n;
        sink[19] += rb.n;
    }
    *seconds = (double)(world_now_ns() - t0) * 1e-9;
    float total = 0.0f;
    for (int k = 0; k < 20; ++k) total += sink[k];
    volatile float keep = total;
    (void)keep;
    mem_free(&alloc, mem, per * 8 * sizeof(float));
    return (iterations + 1) / 2 * 2 * candidates;
}

/* ---- the module: separation, alignment and cohesion's component ---------- */

/* Its agents look for neighbors as far as their radius (grid_use_t.reach). */
static float neighbors_reach(world_t* w)
{
    const component_t* c = &w->comps[COMP_NEIGHBORS];
    if (c->table.count == 0) return -1.0f;
    const float* radius = TABLE_COL(&c->table, float, NB_RADIUS);
    /* A radius column that the last reorder found holding one value, and
     * that no definition changed since, is that value: no pass over it. */
    if (component_one_columns(c) >> NB_RADIUS & 1u) return radius[0] > 0.0f ? radius[0] : 0.0f;
    return grid_column_max(w, radius, c->table.count);
}

static const grid_use_t neighbors_grid = {neighbors_reach, neighbors_sized, 1, 1};

static int neighbors_init(world_t* w)
{
    w->module_data[MOD_NEIGHBORS] = mem_calloc(&w->alloc, sizeof(neighbors_world_t));
    return w->module_data[MOD_NEIGHBORS] != NULL;
}

static void neighbors_release(world_t* w)
{
    neighbors_world_t* nw = neighbors_data(w);
    if (!nw) return;
    mem_free(&w->alloc, nw->mem, nw->mem_floats * sizeof(float));
    mem_free(&w->alloc, nw, sizeof *nw);
    w->module_data[MOD_NEIGHBORS] = NULL;
}

static int neighbors_needs(const shoal_agent_def_t* d)
{
    const float* wt = d->weights;
    return wt[SHOAL_BEHAVIOR_SEPARATE] != 0.0f || wt[SHOAL_BEHAVIOR_ALIGN] != 0.0f ||
           wt[SHOAL_BEHAVIOR_COHERE] != 0.0f;
}

static const column_def_t neighbors_columns[NB_COUNT_] = {
    COLUMNS_SLOT_ROW,
    [NB_RADIUS] = COLUMN_ABOVE("neighbors.radius", neighbors.radius, 0.0),
    [NB_FOV] = COLUMN_ABOVE_IN("neighbors.fov", neighbors.fov, 0.0f, VEC_TWO_PI, "(0, 2 pi] rad"),
    [NB_FOV_COS] = {.name = "neighbors.fov_cos",
                    .field = COLUMN_NO_FIELD,
                    .type = COLUMN_F32,
                    .flags = COLUMN_DERIVED},
    [NB_MAX] = COLUMN_INT_IN("neighbors.max_neighbors", neighbors.max_neighbors, 0, COLUMN_INT_NO_MAX,
                             ">= 0 (0 = no cap)"),
    [NB_K_SEP] = COLUMN_AT_LEAST("neighbors.separation_gain", neighbors.separation_gain, 0.0),
    [NB_K_ALI] = COLUMN_AT_LEAST("neighbors.alignment_gain", neighbors.alignment_gain, 0.0),
    [NB_K_COH] = COLUMN_AT_LEAST("neighbors.cohesion_gain", neighbors.cohesion_gain, 0.0),
    [NB_W_SEP] = COLUMN_WEIGHT("weights[separate]", SHOAL_BEHAVIOR_SEPARATE),
    [NB_W_ALI] = COLUMN_WEIGHT("weights[align]", SHOAL_BEHAVIOR_ALIGN),
    [NB_W_COH] = COLUMN_WEIGHT("weights[cohere]", SHOAL_BEHAVIOR_COHERE),
};

static shoal_status_t neighbors_validate(world_t* w, const shoal_agent_def_t* d, const char* where)
{
    return columns_check(w, d, where, neighbors_columns, NB_COUNT_);
}

/* Then the cosine of half the field of view, which the pass compares with. */
static void neighbors_write_row(world_t* w, int32_t r, uint32_t slot, const shoal_agent_def_t* d,
                                vec3 forward, int fresh)
{
    (void)slot;
    (void)forward;
    (void)fresh;
    columns_write(w, COMP_NEIGHBORS, r, d, neighbors_columns, NB_COUNT_);
    float fov = d->neighbors.fov;
    /* A full circle must pass every neighbor: cos(pi) = -1 exactly. */
    COMP_F(w, COMP_NEIGHBORS, NB_FOV_COS)[r] = fov >= VEC_TWO_PI ? -1.0f : cosf(0.5f * fov);
}

static void neighbors_read_row(const world_t* w, int32_t r, shoal_agent_def_t* d)
{
    columns_read(w, COMP_NEIGHBORS, r, d, neighbors_columns, NB_COUNT_);
}

/* ---- defaults ------------------------------------------------------------ */

shoal_neighbors_t shoal_neighbors_default(void)
{
    shoal_neighbors_t n = {.radius = 2.0f,
                           .fov = VEC_TWO_PI,
                           .separation_gain = 1.0f,
                           .alignment_gain = 1.0f,
                           .cohesion_gain = 1.0f};
    return n;
}

void neighbors_defaults(shoal_agent_def_t* d) { d->neighbors = shoal_neighbors_default(); }

const module_t neighbors_module = {
    .name = "neighbors",
    .column_count = NB_COUNT_,
    .columns = neighbors_columns,
    .init = neighbors_init,
    .release = neighbors_release,
    .defaults = neighbors_defaults,
    .needs = neighbors_needs,
    .validate = neighbors_validate,
    .write_row = neighbors_write_row,
    .read_row = neighbors_read_row,
    .row_removed = grid_sorted_row_removed,
    .grid = &neighbors_grid,
};
/* ---- the setter ------------------------------------------------------------ */

static void edit_neighbors(shoal_agent_def_t* d, const void* a)
{
    d->neighbors = *(const shoal_neighbors_t*)a;
}

shoal_status_t shoal_agent_set_neighbors(shoal_world_t* w, shoal_agent_t id, const shoal_neighbors_t* n)
{
    REQUIRE_PTR(w, n, "agent_set_neighbors", "neighbors");
    return agent_edit(w, id, "agent_set_neighbors", edit_neighbors, n, AGENT_EDIT_COMPONENT(COMP_NEIGHBORS));
}
