/* Planner agents' search: goodness behaviors, the sphere scene and the
 * best-first search of Algorithm 1 of the trim-trajectory planning paper
 * (online path planning over pre-integrated trim trajectories).
 * planner_search.h says what each function computes; this file says how
 * and why.
 *
 * Nothing here allocates, prints or reads global state: a search reads its
 * query, its scene and its table and writes only the caller's scratch and
 * result, so searches of one frame can run on any number of threads and
 * give the same answers. The only clock read is the optional time budget. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime for the time budget */

#include "modules/planner/planner_search.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "base/msg.h"

static inline float clamp01(float x)
{
    /* Written so that NaN lands on 0: a behavior never hands the search a
     * NaN, which would poison every value summed from it. */
    if (!(x > 0.0f)) return 0.0f;
    return x < 1.0f ? x : 1.0f;
}

/* AvoidCollision's rule for a segment that starts inside a sphere: it hits
 * that sphere unless it moves away from its center all along (the leaving
 * rule of plan_scene_hit_ex). Without the rule a vehicle inside an obstacle
 * (single-step search runs into them) scored every segment 0, could not
 * tell the ways out from the ways in, took the first control and turned
 * about inside: 22 % of the single-step searches in the 2D seek experiment
 * started inside an asteroid, every one scoring 0 (README, planner). */
#define PLAN_AVOID_LEAVING 1

static inline int vec3_finite(vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }
static inline int vec3_has_nan(vec3 v) { return isnan(v.x) || isnan(v.y) || isnan(v.z); }

/* ------------------------------------------------------------------------ */
/* Scene: a multi-resolution spatial hash of spheres                         */
/* ------------------------------------------------------------------------ */

/* Level l has cells of (smallest sweep diameter) * 2^l. 32 levels span a factor of 4e9
 * between the smallest and the largest sphere; anything larger still goes
 * into the top level, where the query's inflation by the level's largest
 * radius keeps it found (only slower). */
#define SCENE_MAX_LEVELS 32
/* Cell coordinates are clamped here so that far-away spheres and segments
 * stay representable; clamping is monotone, so boxes still contain their
 * spheres' cells. */
#define SCENE_COORD_LIMIT 1.0e9f
/* A moving sphere is indexed by a sphere holding its whole sweep over
 * [0, horizon]; the sweep radius is enlarged by this fraction so that
 * rounding in the query times (t = depth * interval) cannot step outside
 * it. Queries whose times leave [-SCENE_TIME_SLACK h, (1 + SCENE_TIME_SLACK) h]
 * are answered by scanning every sphere instead. */
#define SCENE_SWEEP_SLACK 1.0e-3f
#define SCENE_TIME_SLACK 1.0e-4f
/* The broad phase widens its boxes by this fraction of their reach and of
 * the coordinates' magnitude, so float rounding in the box never drops a
 * sphere that the exact test (rounded differently) would call a hit. */
#define SCENE_BOX_SLACK 1.0e-5f

/* One sphere as stored: its own motion (and the window it exists in) for
 * the exact test and the cell of its sweep for the broad phase. 56 bytes. */
typedef struct scene_item {
    vec3 center; /* at time 0 */
    float radius;
    vec3 velocity;
    int32_t cell[3];
    int32_t owner;      /* 0: an obstacle; else the vehicle whose track this is */
    float t_from, t_to; /* windowed when t_to > t_from */
} scene_item_t;

typedef struct scene_level {
    float cell; /* m */
    float inv_cell;
    float reach; /* largest sweep radius stored in this level */
    uint32_t bucket_mask;
    int32_t bucket_base; /* first bucket of this level in `starts` */
    int32_t first, end;  /* items of this level: [first, end) */
} scene_level_t;

/* The header of the caller's block; items and starts follow it in the same
 * block (pointers into it: the block must not be moved once built). */
struct plan_scene {
    int32_t count;
    int32_t level_count;
    int32_t flat;     /* every sphere in z = 0, not moving in z: hash x and y only */
    float t_lo, t_hi; /* query times the sweeps cover */
    scene_level_t levels[SCENE_MAX_LEVELS];
    scene_item_t* items; /* sorted by (level, bucket) */
    int32_t* starts;     /* bucket b's items: [starts[b], starts[b + 1]) */
};

static inline size_t align16(size_t n) { return (n + 15u) & ~(size_t)15u; }

/* Per level a power-of-two table of at least twice its spheres: at most
 * 4 n buckets in all, plus the closing entry. */
static inline size_t scene_bucket_bound(int32_t count) { return 4u * (size_t)count + 1u; }

/* A build sorts by bucket in parallel (plan_scene_build_par with a loop,
 * SCENE_PAR_MIN spheres or more): a stable radix sort of SCENE_RADIX-bit
 * digits over SCENE_CHUNKS fixed chunks of the input, each chunk's counts
 * its own, so the order is the counting sort's whatever the threads. */
#define SCENE_PAR_MIN 4096
#define SCENE_CHUNKS 64
#define SCENE_RADIX 8
#define SCENE_DIGITS (1 << SCENE_RADIX)

/* Scratch of a build, per sphere: its sweep's radius (-1: an input is not
 * finite) and center, then its cell in its level. */
typedef struct scene_sweep {
    float radius;
    vec3 center;
    int32_t cell[3];
} scene_sweep_t;

size_t plan_scene_bytes(int32_t sphere_count)
{
    if (sphere_count < 0) return 0;
    size_t n = (size_t)sphere_count;
    if (n > (SIZE_MAX / 4u - 4096u) / sizeof(scene_item_t)) return 0;
    return align16(sizeof(plan_scene_t)) + align16(n * sizeof(scene_item_t)) +
           align16(scene_bucket_bound(sphere_count) * sizeof(int32_t)) + align16(n * sizeof(uint32_t)) +
           align16(n * sizeof(scene_sweep_t)) +
           /* the parallel sort: keys and spheres twice, the chunks' counts */
           2u * align16(n * sizeof(uint32_t)) + 2u * align16(n * sizeof(int32_t)) +
           align16((size_t)SCENE_CHUNKS * SCENE_DIGITS * sizeof(int32_t));
}

static inline float min_finite(float a, float b) { return a < b ? a : b; }
static inline float max_finite(float a, float b) { return a > b ? a : b; }

static inline int32_t scene_coord(float p, float inv_cell)
{
    /* floor(p / cell) clamped, the same value as floorf-then-clamp: clamping
     * first keeps the cast in range, and the floor is done on the integer
     * (floorf is a library call without -fno-trapping-math, and this is
     * the hottest line of a query). */
    float x = p * inv_cell;
    if (x > SCENE_COORD_LIMIT) x = SCENE_COORD_LIMIT;
    if (!(x >= -SCENE_COORD_LIMIT)) x = -SCENE_COORD_LIMIT; /* NaN too: no UB in the cast */
    int32_t i = (int32_t)x;
    return i - (x < (float)i);
}

static inline uint32_t scene_hash(int32_t ix, int32_t iy, int32_t iz)
{
    /* Large odd multipliers spread neighboring cells over the table (the
     * same mix as the agents' spatial hash). */
    uint32_t h = (uint32_t)ix * 0x8da6b343u ^ (uint32_t)iy * 0xd8163841u ^ (uint32_t)iz * 0xcb1ab31fu;
    return h ^ (h >> 15);
}

/* The times of [0, horizon] a sphere exists in: all of them, or its window
 * clipped to them (a window outside them shrinks to its nearest end). */
static inline void sweep_window(const plan_sphere_t* s, float horizon, float* a, float* b)
{
    *a = 0.0f;
    *b = horizon;
    if (!(s->t_to > s->t_from)) return;
    if (s->t_from > *a) *a = s->t_from < horizon ? s->t_from : horizon;
    if (s->t_to < *b) *b = s->t_to > *a ? s->t_to : *a;
}

/* The sphere holding a sphere's sweep over its times in [0, horizon]:
 * centered on its position halfway through them. */
static inline float sweep_radius(const plan_sphere_t* s, float horizon)
{
    float a, b;
    sweep_window(s, horizon, &a, &b);
    return s->radius + vec3_length(s->velocity) * (0.5f * (b - a)) * (1.0f + SCENE_SWEEP_SLACK);
}

static inline vec3 sweep_center(const plan_sphere_t* s, float horizon)
{
    float a, b;
    sweep_window(s, horizon, &a, &b);
    return vec3_add(s->center, vec3_scale(s->velocity, 0.5f * (a + b)));
}

typedef struct build_ctx {
    const plan_sphere_t* spheres;
    float horizon;
    plan_scene_t* sc;
    uint32_t* keys;
    scene_sweep_t* sweep;
    /* the parallel sort: a pass reads (kin, iin; iin NULL: sphere i is i)
     * and writes (kout, iout) by the digit at `shift`; each chunk's count
     * of each digit, then where its next one goes */
    const uint32_t* kin;
    const int32_t* iin;
    uint32_t* kout;
    int32_t* iout;
    int32_t* counts;
    int32_t* digit_base; /* SCENE_DIGITS: where each digit's run starts */
    int32_t n;
    int shift;
    const int32_t* order;     /* the sorted spheres, for build_items */
    struct chunk_part* parts; /* SCENE_CHUNKS: what each chunk of spheres found */
    int32_t count;
} build_ctx_t;

/* What one chunk of the spheres found (reduced in chunk order: minima,
 * maxima, sums and flags, the same for any split). */
typedef struct chunk_part {
    int32_t bad, raised; /* an input not finite; a sphere off z = 0 */
    float smallest;      /* the smallest sweep diameter above 0 */
    int32_t per_level[SCENE_MAX_LEVELS];
    float reach[SCENE_MAX_LEVELS]; /* the largest sweep radius of each level */
} chunk_part_t;

static inline int32_t chunk_first(int32_t n, int32_t chunk)
{
    return (int32_t)((int64_t)n * chunk / SCENE_CHUNKS);
}

/* Each chunk's count of each digit. */
static void radix_count(int32_t begin, int32_t end, void* vctx)
{
    const build_ctx_t* c = (const build_ctx_t*)vctx;
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t* count = c->counts + (size_t)ch * SCENE_DIGITS;
        memset(count, 0, SCENE_DIGITS * sizeof *count);
        for (int32_t i = chunk_first(c->n, ch); i < chunk_first(c->n, ch + 1); ++i)
            count[(c->kin[i] >> c->shift) & (SCENE_DIGITS - 1)]++;
    }
}

/* Each digit's counts turned into where each chunk's run starts within the
 * digit's run, and the digit's total into digit_base (a prefix over the
 * digits then makes those the runs' starts). */
static void radix_prefix(int32_t begin, int32_t end, void* vctx)
{
    const build_ctx_t* c = (const build_ctx_t*)vctx;
    for (int32_t d = begin; d < end; ++d) {
        int32_t at = 0;
        for (int32_t ch = 0; ch < SCENE_CHUNKS; ++ch) {
            int32_t* slot = &c->counts[(size_t)ch * SCENE_DIGITS + (size_t)d];
            const int32_t here = *slot;
            *slot = at;
            at += here;
        }
        c->digit_base[d] = at;
    }
}

/* Each chunk's spheres to where its digits' runs start (radix_prefix's
 * starts within each digit's run, from digit_base). */
static void radix_scatter(int32_t begin, int32_t end, void* vctx)
{
    const build_ctx_t* c = (const build_ctx_t*)vctx;
    for (int32_t ch = begin; ch < end; ++ch) {
        int32_t* next = c->counts + (size_t)ch * SCENE_DIGITS;
        for (int32_t i = chunk_first(c->n, ch); i < chunk_first(c->n, ch + 1); ++i) {
            const uint32_t k = c->kin[i];
            const uint32_t d = (k >> c->shift) & (SCENE_DIGITS - 1);
            const int32_t at = c->digit_base[d] + next[d]++;
            c->kout[at] = k;
            c->iout[at] = c->iin ? c->iin[i] : i;
        }
    }
}

static void store_item(scene_item_t* it, const plan_sphere_t* s, const scene_sweep_t* w)
{
    it->center = s->center;
    it->radius = s->radius;
    it->velocity = s->velocity;
    it->cell[0] = w->cell[0];
    it->cell[1] = w->cell[1];
    it->cell[2] = w->cell[2];
    it->owner = s->owner;
    it->t_from = s->t_from;
    it->t_to = s->t_to;
}

/* Items [begin, end) from the sorted spheres. */
static void build_items(int32_t begin, int32_t end, void* vctx)
{
    const build_ctx_t* c = (const build_ctx_t*)vctx;
    for (int32_t j = begin; j < end; ++j) {
        const int32_t i = c->order[j];
        store_item(&c->sc->items[j], &c->spheres[i], &c->sweep[i]);
    }
}

/* Each sphere's sweep (radius and center), -1 as the radius when an input
 * is not finite, over chunks [begin, end) of the spheres. */
static void build_sweeps(int32_t begin, int32_t end, void* vctx)
{
    const build_ctx_t* c = (const build_ctx_t*)vctx;
    for (int32_t ch = begin; ch < end; ++ch) {
        chunk_part_t* part = &c->parts[ch];
        part->bad = part->raised = 0;
        part->smallest = INFINITY;
        for (int32_t i = chunk_first(c->count, ch); i < chunk_first(c->count, ch + 1); ++i) {
            const plan_sphere_t* s = &c->spheres[i];
            scene_sweep_t* o = &c->sweep[i];
            int ok = vec3_finite(s->center) && vec3_finite(s->velocity) && isfinite(s->radius) &&
                     s->radius >= 0.0f && isfinite(s->t_from) && isfinite(s->t_to) && s->owner >= 0;
            float r = ok ? sweep_radius(s, c->horizon) : -1.0f;
            vec3 ctr = ok ? sweep_center(s, c->horizon) : (vec3){0.0f, 0.0f, 0.0f};
            ok = ok && isfinite(r) && vec3_finite(ctr);
            o->radius = ok ? r : -1.0f;
            o->center = ctr;
            part->bad |= !ok;
            part->raised |= s->center.z != 0.0f || s->velocity.z != 0.0f;
            float d = 2.0f * o->radius;
            if (d > 0.0f && d < part->smallest) part->smallest = d;
        }
    }
}

/* Each sphere's level (keys) and each chunk's count and reach per level,
 * over chunks [begin, end). */
static void build_levels(int32_t begin, int32_t end, void* vctx)
{
    const build_ctx_t* c = (const build_ctx_t*)vctx;
    const plan_scene_t* sc = c->sc;
    for (int32_t ch = begin; ch < end; ++ch) {
        chunk_part_t* part = &c->parts[ch];
        for (int l = 0; l < SCENE_MAX_LEVELS; ++l) {
            part->per_level[l] = 0;
            part->reach[l] = 0.0f;
        }
        for (int32_t i = chunk_first(c->count, ch); i < chunk_first(c->count, ch + 1); ++i) {
            float r = c->sweep[i].radius;
            int l = 0;
            while (l < SCENE_MAX_LEVELS - 1 && sc->levels[l].cell < 2.0f * r) ++l;
            c->keys[i] = (uint32_t)l;
            part->per_level[l]++;
            if (r > part->reach[l]) part->reach[l] = r;
        }
    }
}

/* starts from the sorted keys (kin), sorted positions [begin, end): where
 * the key rises, the buckets it passes start there. */
static void build_starts(int32_t begin, int32_t end, void* vctx)
{
    const build_ctx_t* c = (const build_ctx_t*)vctx;
    int32_t* starts = c->sc->starts;
    for (int32_t j = begin; j < end; ++j) {
        const int64_t from = j > 0 ? (int64_t)c->kin[j - 1] + 1 : 0;
        for (int64_t b = from; b <= (int64_t)c->kin[j]; ++b) starts[b] = j;
    }
}

/* Each sphere's cell in its level (keys: the level), then its bucket. */
static void build_cells(int32_t begin, int32_t end, void* vctx)
{
    const build_ctx_t* c = (const build_ctx_t*)vctx;
    const plan_scene_t* sc = c->sc;
    for (int32_t i = begin; i < end; ++i) {
        const scene_level_t* lv = &sc->levels[c->keys[i]];
        scene_sweep_t* o = &c->sweep[i];
        o->cell[0] = scene_coord(o->center.x, lv->inv_cell);
        o->cell[1] = scene_coord(o->center.y, lv->inv_cell);
        o->cell[2] = sc->flat ? 0 : scene_coord(o->center.z, lv->inv_cell);
        c->keys[i] =
            (uint32_t)lv->bucket_base + (scene_hash(o->cell[0], o->cell[1], o->cell[2]) & lv->bucket_mask);
    }
}

plan_scene_t* plan_scene_build(void* memory, const plan_sphere_t* spheres, int32_t count, float horizon)
{
    return plan_scene_build_par(memory, spheres, count, horizon, NULL, NULL);
}

plan_scene_t* plan_scene_build_par(void* memory, const plan_sphere_t* spheres, int32_t count, float horizon,
                                   plan_run_fn* run, void* par)
{
    if (memory == NULL || count < 0 || (count > 0 && spheres == NULL)) return NULL;
    if (((uintptr_t)memory & 15u) != 0) return NULL;
    if (!(isfinite(horizon) && horizon >= 0.0f)) return NULL;
    if (plan_scene_bytes(count) == 0) return NULL;

    unsigned char* base = memory;
    plan_scene_t* sc = (plan_scene_t*)base;
    base += align16(sizeof(plan_scene_t));
    memset(sc, 0, sizeof *sc);
    sc->items = (scene_item_t*)base;
    base += align16((size_t)count * sizeof(scene_item_t));
    sc->starts = (int32_t*)base;
    base += align16(scene_bucket_bound(count) * sizeof(int32_t));
    uint32_t* keys = (uint32_t*)base; /* a level, then a bucket, per sphere */
    base += align16((size_t)count * sizeof(uint32_t));
    build_ctx_t c;
    memset(&c, 0, sizeof c);
    c.spheres = spheres;
    c.horizon = horizon;
    c.sc = sc;
    c.keys = keys;
    c.sweep = (scene_sweep_t*)base;
    base += align16((size_t)count * sizeof(scene_sweep_t));

    /* Every sphere's sweep; any input not finite: no scene. Chunks of the
     * spheres in parallel (or here), each with what it found. */
    chunk_part_t parts[SCENE_CHUNKS];
    c.parts = parts;
    c.count = count;
    if (run && count >= SCENE_PAR_MIN)
        run(par, SCENE_CHUNKS, build_sweeps, &c);
    else
        build_sweeps(0, SCENE_CHUNKS, &c);
    sc->flat = 1;
    /* Level 0's cells are as wide as the smallest sweep; points (radius 0,
     * static) do not set it, they fit any cell. */
    float smallest = INFINITY;
    for (int32_t ch = 0; ch < SCENE_CHUNKS; ++ch) {
        if (parts[ch].bad) return NULL;
        if (parts[ch].raised) sc->flat = 0;
        if (parts[ch].smallest < smallest) smallest = parts[ch].smallest;
    }
    sc->count = count;
    sc->t_lo = -SCENE_TIME_SLACK * horizon;
    sc->t_hi = horizon + SCENE_TIME_SLACK * horizon;
    if (!(smallest < INFINITY)) smallest = 1.0f;
    if (smallest < 1e-30f) smallest = 1e-30f; /* keeps 1 / cell finite */

    /* Pass 1: each sphere goes to the first level whose cells are at least
     * its sweep's diameter, so a query only needs to look one level-reach
     * around its box. */
    for (int l = 0; l < SCENE_MAX_LEVELS; ++l) {
        sc->levels[l].cell = ldexpf(smallest, l);
        sc->levels[l].inv_cell = 1.0f / sc->levels[l].cell;
    }
    if (run && count >= SCENE_PAR_MIN)
        run(par, SCENE_CHUNKS, build_levels, &c);
    else
        build_levels(0, SCENE_CHUNKS, &c);
    int32_t level_count = 1;
    int32_t per_level[SCENE_MAX_LEVELS] = {0};
    for (int32_t ch = 0; ch < SCENE_CHUNKS; ++ch)
        for (int l = 0; l < SCENE_MAX_LEVELS; ++l) {
            per_level[l] += parts[ch].per_level[l];
            if (parts[ch].reach[l] > sc->levels[l].reach) sc->levels[l].reach = parts[ch].reach[l];
            if (parts[ch].per_level[l] > 0 && l + 1 > level_count) level_count = l + 1;
        }
    sc->level_count = level_count;

    int32_t bucket_total = 0, item_total = 0;
    for (int l = 0; l < level_count; ++l) {
        scene_level_t* lv = &sc->levels[l];
        uint32_t buckets = 0;
        if (per_level[l] > 0) {
            buckets = 1;
            while (buckets < 2u * (uint32_t)per_level[l]) buckets <<= 1;
        }
        lv->bucket_mask = buckets ? buckets - 1u : 0u;
        lv->bucket_base = bucket_total;
        lv->first = item_total;
        lv->end = item_total + per_level[l];
        bucket_total += (int32_t)buckets;
        item_total += per_level[l];
    }

    /* Pass 2: every sphere's cell and bucket, then a stable counting sort
     * by global bucket (levels in order), so each level's items are
     * contiguous and each bucket's are in input order: the layout, and so
     * every query, depends only on the input. */
    if (run && count > 0)
        run(par, count, build_cells, &c);
    else
        build_cells(0, count, &c);
    int32_t* starts = sc->starts;
    if (run && count >= SCENE_PAR_MIN) {
        /* a stable radix sort of (bucket, sphere), a digit a pass */
        uint32_t* kbuf[2];
        int32_t* ibuf[2];
        for (int k = 0; k < 2; ++k) {
            kbuf[k] = (uint32_t*)base;
            base += align16((size_t)count * sizeof(uint32_t));
            ibuf[k] = (int32_t*)base;
            base += align16((size_t)count * sizeof(int32_t));
        }
        c.counts = (int32_t*)base;
        int32_t digit_base[SCENE_DIGITS];
        c.digit_base = digit_base;
        c.n = count;
        c.kin = keys;
        c.iin = NULL;
        int pass = 0;
        for (int shift = 0; shift == 0 || (shift < 32 && ((uint32_t)bucket_total - 1u) >> shift != 0);
             shift += SCENE_RADIX, ++pass) {
            c.shift = shift;
            c.kout = kbuf[pass & 1];
            c.iout = ibuf[pass & 1];
            run(par, SCENE_CHUNKS, radix_count, &c);
            run(par, SCENE_DIGITS, radix_prefix, &c);
            int32_t at = 0;
            for (int32_t d = 0; d < SCENE_DIGITS; ++d) {
                const int32_t here = digit_base[d];
                digit_base[d] = at;
                at += here;
            }
            run(par, SCENE_CHUNKS, radix_scatter, &c);
            c.kin = c.kout;
            c.iin = c.iout;
        }
        c.order = c.iin;
        run(par, count, build_starts, &c);
        for (int64_t b = (int64_t)c.kin[count - 1] + 1; b <= bucket_total; ++b) starts[b] = count;
        run(par, count, build_items, &c);
        return sc;
    }
    memset(starts, 0, ((size_t)bucket_total + 1u) * sizeof(int32_t));
    for (int32_t i = 0; i < count; ++i) starts[keys[i] + 1]++;
    for (int32_t b = 0; b < bucket_total; ++b) starts[b + 1] += starts[b];
    for (int32_t i = 0; i < count; ++i) store_item(&sc->items[starts[keys[i]]++], &spheres[i], &c.sweep[i]);
    /* Each start now holds its bucket's end: shift them back one. */
    for (int32_t b = bucket_total; b > 0; --b) starts[b] = starts[b - 1];
    starts[0] = 0;
    return sc;
}

int plan_scene_same(const plan_scene_t* a, const plan_scene_t* b)
{
    if (a->count != b->count || a->level_count != b->level_count || a->flat != b->flat ||
        a->t_lo != b->t_lo || a->t_hi != b->t_hi)
        return 0;
    int32_t buckets = 0;
    for (int l = 0; l < a->level_count; ++l) {
        const scene_level_t *x = &a->levels[l], *y = &b->levels[l];
        if (x->cell != y->cell || x->inv_cell != y->inv_cell || x->reach != y->reach ||
            x->bucket_mask != y->bucket_mask || x->bucket_base != y->bucket_base || x->first != y->first ||
            x->end != y->end)
            return 0;
        buckets = x->bucket_base + (x->end > x->first ? (int32_t)x->bucket_mask + 1 : 0);
    }
    for (int32_t b2 = 0; b2 <= buckets; ++b2)
        if (a->starts[b2] != b->starts[b2]) return 0;
    for (int32_t i = 0; i < a->count; ++i) {
        const scene_item_t *x = &a->items[i], *y = &b->items[i];
        if (memcmp(&x->center, &y->center, sizeof x->center) != 0 || x->radius != y->radius ||
            memcmp(&x->velocity, &y->velocity, sizeof x->velocity) != 0 || x->cell[0] != y->cell[0] ||
            x->cell[1] != y->cell[1] || x->cell[2] != y->cell[2] || x->owner != y->owner ||
            x->t_from != y->t_from || x->t_to != y->t_to)
            return 0;
    }
    return 1;
}

/* What a query leaves out: the vehicle's own track, and (leaving) the
 * spheres it starts inside of and moves out of. */
typedef struct query_rules {
    int32_t self;
    int leaving;
} query_rules_t;

/* The exact test: with the sphere moving at u and the vehicle going
 * linearly from p0 at t0 to p1 at t1, their difference is linear in time,
 * so the segment from p0 - u t0 to p1 - u t1 against the sphere's center at
 * time 0 is the whole story (static spheres: u = 0). A windowed sphere is
 * tested over the part of the segment within its window only. */
static inline int item_hit(const scene_item_t* it, vec3 p0, float t0, vec3 p1, float t1, float radius,
                           const query_rules_t* rules)
{
    if (it->owner != 0 && it->owner == rules->self) return 0;
    float lo = 0.0f, hi = 1.0f;
    if (it->t_to > it->t_from) {
        if (t1 > t0) {
            float inv = 1.0f / (t1 - t0);
            float a = (it->t_from - t0) * inv, b = (it->t_to - t0) * inv;
            if (a > lo) lo = a;
            if (b < hi) hi = b;
            if (lo > hi) return 0;
        } else if (t0 < it->t_from || t0 > it->t_to) {
            return 0;
        }
    }
    vec3 a = vec3_sub(vec3_sub(p0, vec3_scale(it->velocity, t0)), it->center);
    vec3 b = vec3_sub(vec3_sub(p1, vec3_scale(it->velocity, t1)), it->center);
    vec3 ab = vec3_sub(b, a);
    float len2 = vec3_dot(ab, ab);
    float rr = it->radius + radius;
    /* Leaving: inside at the start and moving away from the center (the
     * squared distance, convex in s, grows from s = 0): never closer. */
    if (rules->leaving && lo == 0.0f && vec3_dot(a, ab) > 0.0f && vec3_dot(a, a) <= rr * rr) return 0;
    float s = lo;
    if (len2 > 0.0f) {
        s = -vec3_dot(a, ab) / len2;
        s = s < lo ? lo : (s > hi ? hi : s);
    }
    vec3 q = vec3_add(a, vec3_scale(ab, s));
    return vec3_dot(q, q) <= rr * rr;
}

static int scan_items(const plan_scene_t* sc, int32_t first, int32_t end, vec3 p0, float t0, vec3 p1,
                      float t1, float radius, const query_rules_t* rules)
{
    for (int32_t i = first; i < end; ++i)
        if (item_hit(&sc->items[i], p0, t0, p1, t1, radius, rules)) return 1;
    return 0;
}

int plan_scene_hit(const plan_scene_t* scene, vec3 p0, float t0, vec3 p1, float t1, float radius)
{
    return plan_scene_hit_ex(scene, p0, t0, p1, t1, radius, 0, 0);
}

int plan_scene_hit_ex(const plan_scene_t* scene, vec3 p0, float t0, vec3 p1, float t1, float radius,
                      int32_t self, int leaving)
{
    if (scene == NULL || scene->count == 0) return 0;
    const query_rules_t rules = {self, leaving};
    const query_rules_t* rl = &rules;
    /* A segment that is not finite cannot be shown clear: call it a hit. */
    if (!vec3_finite(p0) || !vec3_finite(p1) || !isfinite(t0) || !isfinite(t1) || !isfinite(radius)) return 1;
    if (radius < 0.0f) radius = 0.0f;
    /* Outside the times the sweeps cover, the index says nothing about
     * moving spheres: test them all. */
    if (t0 < scene->t_lo || t0 > scene->t_hi || t1 < scene->t_lo || t1 > scene->t_hi)
        return scan_items(scene, 0, scene->count, p0, t0, p1, t1, radius, rl);

    /* finite here: plain comparisons, not libm's fminf and fmaxf (a call
     * each, for their NaN rules); a zero's sign changes no cell below */
    vec3 lo = {min_finite(p0.x, p1.x), min_finite(p0.y, p1.y), min_finite(p0.z, p1.z)};
    vec3 hi = {max_finite(p0.x, p1.x), max_finite(p0.y, p1.y), max_finite(p0.z, p1.z)};
    float mag =
        max_finite(max_finite(max_finite(fabsf(lo.x), fabsf(hi.x)), max_finite(fabsf(lo.y), fabsf(hi.y))),
                   max_finite(fabsf(lo.z), fabsf(hi.z)));
    for (int l = 0; l < scene->level_count; ++l) {
        const scene_level_t* lv = &scene->levels[l];
        int32_t n = lv->end - lv->first;
        if (n == 0) continue;
        /* A sphere that touches the segment has its sweep center within
         * (sweep radius + vehicle radius) of it, hence inside the segment's
         * box grown by the level's largest sweep radius. */
        float reach = lv->reach + radius;
        reach += SCENE_BOX_SLACK * (reach + mag);
        int32_t c0[3], c1[3];
        c0[0] = scene_coord(lo.x - reach, lv->inv_cell);
        c1[0] = scene_coord(hi.x + reach, lv->inv_cell);
        c0[1] = scene_coord(lo.y - reach, lv->inv_cell);
        c1[1] = scene_coord(hi.y + reach, lv->inv_cell);
        if (scene->flat) {
            /* Every sphere center lies in z = 0: only a box reaching that
             * plane can touch one, and all of them hash with z cell 0. */
            if (lo.z - reach > 0.0f || hi.z + reach < 0.0f) continue;
            c0[2] = c1[2] = 0;
        } else {
            c0[2] = scene_coord(lo.z - reach, lv->inv_cell);
            c1[2] = scene_coord(hi.z + reach, lv->inv_cell);
        }
        double cells =
            ((double)c1[0] - c0[0] + 1.0) * ((double)c1[1] - c0[1] + 1.0) * ((double)c1[2] - c0[2] + 1.0);
        /* A long segment in a fine level covers more cells than the level
         * has spheres: testing them all is cheaper than walking the box. */
        if (cells > 2.0 * (double)n) {
            if (scan_items(scene, lv->first, lv->end, p0, t0, p1, t1, radius, rl)) return 1;
            continue;
        }
        for (int32_t iz = c0[2]; iz <= c1[2]; ++iz)
            for (int32_t iy = c0[1]; iy <= c1[1]; ++iy)
                for (int32_t ix = c0[0]; ix <= c1[0]; ++ix) {
                    uint32_t b = (uint32_t)lv->bucket_base + (scene_hash(ix, iy, iz) & lv->bucket_mask);
                    int32_t e = scene->starts[b + 1];
                    for (int32_t i = scene->starts[b]; i < e; ++i) {
                        const scene_item_t* it = &scene->items[i];
                        /* Other cells share the bucket; testing each
                         * sphere only from its own cell tests it once. */
                        if (it->cell[0] != ix || it->cell[1] != iy || it->cell[2] != iz) continue;
                        if (item_hit(it, p0, t0, p1, t1, radius, rl)) return 1;
                    }
                }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Behaviors                                                                  */
/* ------------------------------------------------------------------------ */

/* Seek (section 3.1): g = 1/4 (1 + d1^ . e^) (1 + m^ . e^), e = t - p1,
 * m = p1 - p0. A vector with no direction (the segment standing still, the
 * target reached, a zero facing) normalizes to zero here, so its factor is
 * the neutral 1 out of 2: 1/2 of the best. flee: e = p1 - t. */
static float seek_goodness(const plan_segment_t* s, vec3 target, int flee)
{
    vec3 e = flee ? vec3_sub(s->p1, target) : vec3_sub(target, s->p1);
    vec3 eu = vec3_normalize(e);
    vec3 du = vec3_normalize(s->d1);
    vec3 mu = vec3_normalize(vec3_sub(s->p1, s->p0));
    float g = 0.25f * (1.0f + vec3_dot(du, eu)) * (1.0f + vec3_dot(mu, eu));
    return clamp01(g);
}

/* The target's predicted position at the segment's end: linear motion. */
static inline vec3 predict(const plan_behavior_t* b, const plan_segment_t* s)
{
    return vec3_add(b->point, vec3_scale(b->velocity, s->t0 + s->duration));
}

float plan_goodness(const plan_behavior_t* b, const plan_segment_t* s, const plan_scene_t* scene,
                    float radius)
{
    if (b == NULL || s == NULL) return 0.0f;
    switch (b->kind) {
    case PLAN_SEEK: return seek_goodness(s, b->point, 0);
    case PLAN_FLEE: return seek_goodness(s, b->point, 1);
    case PLAN_PURSUE: return seek_goodness(s, predict(b, s), 0);
    case PLAN_EVADE: return seek_goodness(s, predict(b, s), 1);
    case PLAN_AVOID_COLLISION:
        return plan_scene_hit_ex(scene, s->p0, s->t0, s->p1, s->t0 + s->duration, radius, 0,
                                 PLAN_AVOID_LEAVING)
                   ? 0.0f
                   : 1.0f;
    }
    /* Unknown kinds rate every path 0 (plan_search rejects them first). */
    return 0.0f;
}

float plan_composite(const plan_behavior_t* b, int32_t count, const plan_segment_t* s,
                     const plan_scene_t* scene, float radius)
{
    float g = 1.0f;
    if (b == NULL) return g;
    for (int32_t i = 0; i < count; ++i) {
        g *= plan_goodness(&b[i], s, scene, radius);
        /* 0 stays 0 whatever follows: skip the rest (collision tests are
         * the expensive ones). The product is the same. */
        if (g == 0.0f) return 0.0f;
    }
    return g;
}

float plan_bounded(float h)
{
    if (!(h > 0.0f)) return 0.0f; /* h < 0 is outside the domain; NaN too */
    return clamp01(1.0f - 1.0f / (h + 1.0f));
}

/* ------------------------------------------------------------------------ */
/* Parameters                                                                 */
/* ------------------------------------------------------------------------ */

#define PLAN_DEPTH_LIMIT 64

plan_params_t plan_params_default(plan_strategy_t strategy)
{
    plan_params_t p;
    memset(&p, 0, sizeof p);
    p.strategy = strategy;
    p.discount = 0.8f;
    p.optimism = 0.5f;
    p.max_depth = strategy == PLAN_SINGLE_STEP ? 1 : 6;
    p.min_depth = strategy == PLAN_SINGLE_STEP ? 1 : 3;
    p.max_expansions = 400;
    p.max_seconds = 0.0;
    p.k_skip = 2;
    /* Adaptive: every control at the root (n_v is capped at the table's
     * count: 17 in 2D, 121 in 3D), then a steep collapse (121, 24, 5, 1, ...).
     * With n_v = 9 the root saw 9 random controls and the straight one and,
     * in a tight spot, could miss the one clear way out: 1 and 18
     * collisions over 60 runs of the 2D seek and 3D pursuit experiments,
     * against 0 with these values (shoal experiment planner). */
    p.n_v = 121;
    p.collapse = 0.2f;
    p.damping = 0.02f;
    return p;
}

int plan_params_valid(const plan_params_t* p, char* msg, int msg_size)
{
    if (p == NULL) {
        set_msg(msg, msg_size, "plan_params_valid: params are NULL");
        return 0;
    }
    if (p->strategy != PLAN_SINGLE_STEP && p->strategy != PLAN_UNIFORM && p->strategy != PLAN_ADAPTIVE) {
        set_msg(msg, msg_size, "strategy must be PLAN_SINGLE_STEP, PLAN_UNIFORM or PLAN_ADAPTIVE, got %d",
                (int)p->strategy);
        return 0;
    }
    if (!(p->discount > 0.0f && p->discount < 1.0f)) {
        set_msg(msg, msg_size, "discount must be in (0, 1), got %g", (double)p->discount);
        return 0;
    }
    if (!(p->optimism >= -1.0f && p->optimism <= 1.0f)) {
        set_msg(msg, msg_size, "optimism must be in [-1, 1], got %g", (double)p->optimism);
        return 0;
    }
    if (p->max_depth < 1 || p->max_depth > PLAN_DEPTH_LIMIT) {
        set_msg(msg, msg_size, "max_depth must be in [1, %d], got %d", PLAN_DEPTH_LIMIT, (int)p->max_depth);
        return 0;
    }
    if (p->min_depth < 1 || p->min_depth > p->max_depth) {
        set_msg(msg, msg_size, "min_depth must be in [1, max_depth = %d], got %d", (int)p->max_depth,
                (int)p->min_depth);
        return 0;
    }
    if (p->max_expansions < 1) {
        set_msg(msg, msg_size, "max_expansions must be >= 1, got %d", (int)p->max_expansions);
        return 0;
    }
    if (!(isfinite(p->max_seconds) && p->max_seconds >= 0.0)) {
        set_msg(msg, msg_size, "max_seconds must be finite and >= 0 (0 = no time budget), got %g",
                p->max_seconds);
        return 0;
    }
    if (p->k_skip < 1) {
        set_msg(msg, msg_size, "k_skip must be >= 1, got %d", (int)p->k_skip);
        return 0;
    }
    if (p->n_v < 1) {
        set_msg(msg, msg_size, "n_v must be >= 1, got %d", (int)p->n_v);
        return 0;
    }
    if (!(p->collapse > 0.0f && p->collapse <= 1.0f)) {
        set_msg(msg, msg_size, "collapse must be in (0, 1], got %g", (double)p->collapse);
        return 0;
    }
    if (!(p->damping >= 0.0f && p->damping < 1.0f)) {
        set_msg(msg, msg_size, "damping must be in [0, 1), got %g", (double)p->damping);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Search                                                                     */
/* ------------------------------------------------------------------------ */

/* One visited state. 56 bytes. */
typedef struct plan_node {
    trim_pose_t pose;
    float v;         /* sum of discounted goodness from the root */
    float ev;        /* v + d^depth / (1 - d) f */
    float g;         /* goodness of the segment from the parent */
    int32_t control; /* the control that led here (the root: the one executing) */
    int32_t parent;  /* -1 for the root */
    int32_t depth;
    int32_t crashed; /* the segment from the parent hits a sphere: the path ends here */
} plan_node_t;

/* Nodes and heap entries, plus slack to align the node array. */
size_t plan_scratch_bytes(int32_t nodes)
{
    if (nodes < 0) nodes = 0;
    return (size_t)nodes * (sizeof(plan_node_t) + sizeof(int32_t)) + 16u;
}

void plan_scratch_init(plan_scratch_t* s, void* memory, size_t bytes)
{
    if (s == NULL) return;
    s->memory = memory;
    s->bytes = bytes;
    s->node_capacity = 0;
    if (memory == NULL) return;
    size_t pad = (16u - ((uintptr_t)memory & 15u)) & 15u;
    if (bytes <= pad) return;
    size_t n = (bytes - pad) / (sizeof(plan_node_t) + sizeof(int32_t));
    if (n > (size_t)(INT32_MAX / 2)) n = (size_t)(INT32_MAX / 2);
    s->node_capacity = (int32_t)n;
}

/* Everything one search reads and writes. */
typedef struct search {
    const plan_params_t* p;
    const plan_query_t* q;
    const trim_table_t* t;
    plan_node_t* nodes;
    int32_t* heap;
    int32_t node_count, node_capacity;
    int32_t heap_count;
    int32_t max_depth, min_depth;
    float interval;
    float dpow[PLAN_DEPTH_LIMIT + 1]; /* d^k */
    float opt[PLAN_DEPTH_LIMIT + 1];  /* d^k / (1 - d) f: the optimistic remainder */
    int32_t adaptive_n[PLAN_DEPTH_LIMIT + 1];
    uint64_t cursor; /* adaptive: next read position in the permutation */
} search_t;

/* Heap order: higher ev first; among equal ev the earlier visited, so the
 * expansion order (and the result) is fixed by the query alone. */
static inline int heap_before(const search_t* s, int32_t a, int32_t b)
{
    float ea = s->nodes[a].ev, eb = s->nodes[b].ev;
    return ea > eb || (ea == eb && a < b);
}

static void heap_push(search_t* s, int32_t node)
{
    int32_t i = s->heap_count++;
    while (i > 0) {
        int32_t parent = (i - 1) / 2;
        if (!heap_before(s, node, s->heap[parent])) break;
        s->heap[i] = s->heap[parent];
        i = parent;
    }
    s->heap[i] = node;
}

static int32_t heap_pop(search_t* s)
{
    int32_t top = s->heap[0];
    int32_t last = s->heap[--s->heap_count];
    int32_t n = s->heap_count, i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_before(s, s->heap[c + 1], s->heap[c])) ++c;
        if (!heap_before(s, s->heap[c], last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n > 0) s->heap[i] = last;
    return top;
}

/* Damping (section 5, path aliasing): a slight bias toward
 * straighter controls, scaled by the control's largest rate relative to its
 * axis bound. */
static float damping_factor(const search_t* s, int32_t control)
{
    if (s->p->damping == 0.0f) return 1.0f;
    float rates[TRIM_MAX_AXES];
    trim_control_rates(&s->t->spec, control, rates);
    float worst = 0.0f;
    for (int a = 0; a < s->t->spec.axes && a < TRIM_MAX_AXES; ++a) {
        float m = s->t->spec.max_rate[a];
        if (m > 0.0f) {
            float r = fabsf(rates[a]) / m;
            if (r > worst) worst = r;
        }
    }
    if (worst > 1.0f) worst = 1.0f;
    return 1.0f - s->p->damping * worst;
}

/* Visit the successor of `parent` under `control`: evaluate the segment,
 * value the state (v(s) = v(s') + g d^(k-1), ev(s) = v(s) + d^k/(1-d) f)
 * and queue it unless it is at the depth limit. */
static void visit(search_t* s, int32_t parent_index, vec3 parent_forward, int32_t control)
{
    const plan_node_t* parent = &s->nodes[parent_index];
    const plan_query_t* q = s->q;
    trim_pose_t pose = trim_apply(s->t, parent->pose, parent->control, control, q->speed);
    int32_t k = parent->depth;
    plan_segment_t seg;
    seg.t0 = (float)k * s->interval;
    seg.duration = s->interval;
    seg.p0 = parent->pose.pos;
    seg.p1 = pose.pos;
    seg.d0 = parent_forward;
    seg.d1 = quat_forward(pose.rot);
    seg.q1 = pose.rot;
    /* Composite (the product, in the query's order, as plan_composite),
     * noting whether AvoidCollision vetoed the segment. Once the product is
     * 0 only collision tests still matter. */
    float g = 1.0f;
    int crashed = 0;
    for (int32_t i = 0; i < q->behavior_count; ++i) {
        const plan_behavior_t* b = &q->behaviors[i];
        if (g == 0.0f && b->kind != PLAN_AVOID_COLLISION) continue;
        float gi = plan_goodness(b, &seg, q->scene, q->radius);
        if (b->kind == PLAN_AVOID_COLLISION && gi == 0.0f) {
            crashed = 1;
            g = 0.0f;
            break;
        }
        /* AvoidCollision also keeps clear of the other vehicles' predicted
         * tracks: a segment that meets one scores 0, but, unlike an
         * obstacle, does not end the path. Predictions are guesses (the
         * other vehicle replans too); an obstacle is certain. When every
         * way is blocked by some vehicle's track, the search then still
         * takes one that clears the obstacles. */
        if (b->kind == PLAN_AVOID_COLLISION && q->agents != NULL &&
            plan_scene_hit_ex(q->agents, seg.p0, seg.t0, seg.p1, seg.t0 + seg.duration, q->radius, q->self,
                              PLAN_AVOID_LEAVING))
            gi = 0.0f;
        g *= gi;
    }
    g *= damping_factor(s, control);

    int32_t index = s->node_count++;
    plan_node_t* child = &s->nodes[index];
    child->pose = pose;
    child->g = g;
    child->v = parent->v + g * s->dpow[k];
    child->ev = child->v + s->opt[k + 1];
    child->control = control;
    child->parent = parent_index;
    child->depth = k + 1;
    child->crashed = crashed;
    /* A crashed state is a dead end. Algorithm 1 would expand it like any
     * other, and since a colliding segment only adds 0 to the sum, a path
     * through a thin wall that seeks well afterwards would outscore every
     * way around it: the vehicle would plan to tunnel, and hit. */
    if (child->depth < s->max_depth && !crashed) heap_push(s, index);
}

/* Successors of one expansion. Returns how many there will be (0 and
 * nothing visited when `go` is 0: the pool check asks first). */
static int32_t expand(search_t* s, int32_t index, int go)
{
    const trim_table_t* t = s->t;
    int32_t controls = t->controls, straight = t->straight;
    vec3 fwd = quat_forward(s->nodes[index].pose.rot);
    int32_t n = 0;
    switch (s->p->strategy) {
    case PLAN_SINGLE_STEP:
        for (int32_t j = 0; j < controls; ++j, ++n)
            if (go) visit(s, index, fwd, j);
        return n;
    case PLAN_UNIFORM: {
        int32_t k = s->p->k_skip;
        for (int32_t j = 0; j < controls; ++j) {
            /* The straight control rides along whatever k_skip says:
             * path aliasing (section 5). */
            if (j % k != 0 && j != straight) continue;
            ++n;
            if (go) visit(s, index, fwd, j);
        }
        return n;
    }
    case PLAN_ADAPTIVE: {
        int32_t want = s->adaptive_n[s->nodes[index].depth];
        const int32_t* perm = s->q->permutation;
        int has_straight = 0;
        for (int32_t i = 0; i < want; ++i)
            if (perm[(s->cursor + (uint64_t)i) % (uint64_t)controls] == straight) has_straight = 1;
        n = want + (has_straight ? 0 : 1);
        if (!go) return n;
        for (int32_t i = 0; i < want; ++i)
            visit(s, index, fwd, perm[(s->cursor + (uint64_t)i) % (uint64_t)controls]);
        if (!has_straight) visit(s, index, fwd, straight);
        /* The next expansion reads on where this one stopped, so the
         * circular permutation is walked through rather than reread. */
        s->cursor = (s->cursor + (uint64_t)want) % (uint64_t)controls;
        return n;
    }
    }
    return 0;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bad_vec(char* msg, int msg_size, const char* what, int index, vec3 v)
{
    const char* how = vec3_has_nan(v) ? "NaN" : "infinite";
    if (index >= 0)
        set_msg(msg, msg_size, "behaviors[%d].%s is %s", index, what, how);
    else
        set_msg(msg, msg_size, "%s is %s", what, how);
    return 0;
}

static int query_valid(const plan_params_t* p, const plan_query_t* q, char* msg, int msg_size)
{
    if (q == NULL) {
        set_msg(msg, msg_size, "plan_search: query is NULL");
        return 0;
    }
    const trim_table_t* t = q->table;
    if (t == NULL) {
        set_msg(msg, msg_size, "query.table is NULL");
        return 0;
    }
    if (t->controls < 1 || t->entries == NULL) {
        set_msg(msg, msg_size, "the trim table has no controls (controls = %d)", (int)t->controls);
        return 0;
    }
    if (t->straight < 0 || t->straight >= t->controls) {
        set_msg(msg, msg_size, "the trim table's straight control %d is outside [0, %d)", (int)t->straight,
                (int)t->controls);
        return 0;
    }
    if (!(isfinite(t->spec.interval) && t->spec.interval > 0.0f)) {
        set_msg(msg, msg_size, "the trim table's interval must be finite and > 0, got %g",
                (double)t->spec.interval);
        return 0;
    }
    if (q->control < 0 || q->control >= t->controls) {
        set_msg(msg, msg_size, "control must be in [0, %d), got %d", (int)t->controls, (int)q->control);
        return 0;
    }
    if (!vec3_finite(q->pose.pos)) return bad_vec(msg, msg_size, "pose.pos", -1, q->pose.pos);
    quat r = q->pose.rot;
    if (!(isfinite(r.w) && isfinite(r.x) && isfinite(r.y) && isfinite(r.z)) || quat_dot(r, r) == 0.0f) {
        set_msg(msg, msg_size, "pose.rot must be a finite unit quaternion, got (%g, %g, %g, %g)", (double)r.w,
                (double)r.x, (double)r.y, (double)r.z);
        return 0;
    }
    if (!(isfinite(q->speed) && q->speed > 0.0f)) {
        set_msg(msg, msg_size, "speed must be finite and > 0 (m/s), got %g", (double)q->speed);
        return 0;
    }
    if (!(isfinite(q->radius) && q->radius >= 0.0f)) {
        set_msg(msg, msg_size, "radius must be finite and >= 0 (m), got %g", (double)q->radius);
        return 0;
    }
    if (q->behavior_count < 0 || (q->behavior_count > 0 && q->behaviors == NULL)) {
        set_msg(msg, msg_size, "behavior_count must be >= 0 with behaviors given, got %d%s",
                (int)q->behavior_count, q->behaviors == NULL ? " and NULL behaviors" : "");
        return 0;
    }
    for (int32_t i = 0; i < q->behavior_count; ++i) {
        const plan_behavior_t* b = &q->behaviors[i];
        if ((int)b->kind < (int)PLAN_SEEK || (int)b->kind > (int)PLAN_AVOID_COLLISION) {
            set_msg(msg, msg_size, "behaviors[%d].kind %d is not a plan_behavior_kind_t", (int)i,
                    (int)b->kind);
            return 0;
        }
        if (b->kind == PLAN_AVOID_COLLISION) continue; /* uses neither point nor velocity */
        if (!vec3_finite(b->point)) return bad_vec(msg, msg_size, "point", (int)i, b->point);
        if (!vec3_finite(b->velocity)) return bad_vec(msg, msg_size, "velocity", (int)i, b->velocity);
    }
    if (p->strategy == PLAN_ADAPTIVE) {
        if (q->permutation == NULL) {
            set_msg(msg, msg_size, "adaptive search needs query.permutation (a permutation of [0, %d))",
                    (int)t->controls);
            return 0;
        }
        for (int32_t i = 0; i < t->controls; ++i)
            if (q->permutation[i] < 0 || q->permutation[i] >= t->controls) {
                set_msg(msg, msg_size, "permutation[%d] = %d is outside [0, %d)", (int)i,
                        (int)q->permutation[i], (int)t->controls);
                return 0;
            }
    }
    return 1;
}

int plan_search(const plan_params_t* p, const plan_query_t* q, plan_scratch_t* scratch, plan_result_t* out,
                char* msg, int msg_size)
{
    if (out == NULL) {
        set_msg(msg, msg_size, "plan_search: out is NULL");
        return -1;
    }
    if (!plan_params_valid(p, msg, msg_size)) return -1;
    if (!query_valid(p, q, msg, msg_size)) return -1;
    if (scratch == NULL || scratch->memory == NULL) {
        set_msg(msg, msg_size, "plan_search: scratch is NULL (see plan_scratch_init)");
        return -1;
    }

    search_t s;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.q = q;
    s.t = q->table;
    size_t pad = (16u - ((uintptr_t)scratch->memory & 15u)) & 15u;
    s.nodes = (plan_node_t*)((unsigned char*)scratch->memory + pad);
    s.node_capacity = scratch->node_capacity;
    s.heap = (int32_t*)(s.nodes + s.node_capacity);
    /* Single-step search expands the root only (section 3.3): depth 1. */
    s.max_depth = p->strategy == PLAN_SINGLE_STEP ? 1 : p->max_depth;
    s.min_depth = p->strategy == PLAN_SINGLE_STEP ? 1 : p->min_depth;
    s.interval = s.t->spec.interval;
    float d = p->discount, dk = 1.0f;
    double cd = 1.0;
    for (int k = 0; k <= PLAN_DEPTH_LIMIT; ++k) {
        s.dpow[k] = dk;
        s.opt[k] = dk / (1.0f - d) * p->optimism;
        dk *= d;
        /* N_v c^d successors at depth d, at least one, at most all. */
        double want = floor((double)p->n_v * cd + 0.5);
        if (want < 1.0) want = 1.0;
        if (want > (double)s.t->controls) want = (double)s.t->controls;
        s.adaptive_n[k] = (int32_t)want;
        cd *= (double)p->collapse;
    }
    s.cursor = (uint64_t)q->permutation_offset % (uint64_t)s.t->controls;

    /* The root: the query's state, with the control it is executing, so
     * the first interval starts from that control's rates. */
    if (s.node_capacity < 1) {
        set_msg(msg, msg_size, "scratch holds no nodes (see plan_scratch_bytes)");
        return -1;
    }
    plan_node_t* root = &s.nodes[0];
    root->pose = q->pose;
    root->v = 0.0f;
    root->ev = s.opt[0];
    root->g = 0.0f;
    root->control = q->control;
    root->parent = -1;
    root->depth = 0;
    root->crashed = 0;
    s.node_count = 1;
    int32_t first = expand(&s, 0, 0);
    if (s.node_capacity < 1 + first) {
        set_msg(msg, msg_size,
                "scratch holds %d nodes; the first expansion needs %d "
                "(see plan_scratch_bytes)",
                (int)s.node_capacity, (int)(1 + first));
        return -1;
    }
    heap_push(&s, 0);

    double start = p->max_seconds > 0.0 ? now_seconds() : 0.0;
    int32_t expanded = 0;
    int budget_hit = 0;
    while (s.heap_count > 0) {
        if (expanded >= p->max_expansions) {
            budget_hit = 1;
            break;
        }
        /* The root is always expanded, so there is always an answer. */
        if (expanded > 0 && p->max_seconds > 0.0 && now_seconds() - start >= p->max_seconds) {
            budget_hit = 1;
            break;
        }
        int32_t top = s.heap[0];
        int32_t need = expand(&s, top, 0);
        /* All of an expansion or none of it: a full pool ends the search
         * like a spent budget. */
        if (s.node_count + need > s.node_capacity) {
            budget_hit = 1;
            break;
        }
        heap_pop(&s);
        expand(&s, top, 1);
        ++expanded;
    }

    /* s_best: the highest ev among states of depth >= min_depth (ev, not
     * v, so that different depths compare on the same infinite-horizon
     * footing); the earlier visited on ties. Without any such state, the
     * best of the deepest. States whose last segment crashes come after
     * every other (their ancestors never crash: they were expanded), so
     * the chosen path is clear whenever some visited path is. Ranked by
     * the key (not crashed, min(depth, min_depth), ev, -index). */
    int32_t best = -1;
    for (int32_t i = 1; i < s.node_count; ++i) {
        const plan_node_t* n = &s.nodes[i];
        if (best < 0) {
            best = i;
            continue;
        }
        const plan_node_t* b = &s.nodes[best];
        if (n->crashed != b->crashed) {
            if (!n->crashed) best = i;
            continue;
        }
        int32_t dn = n->depth < s.min_depth ? n->depth : s.min_depth;
        int32_t db = b->depth < s.min_depth ? b->depth : s.min_depth;
        if (dn > db || (dn == db && n->ev > b->ev)) best = i;
    }
    int32_t first_step = best;
    while (s.nodes[first_step].depth > 1) first_step = s.nodes[first_step].parent;

    memset(out, 0, sizeof *out);
    out->control = s.nodes[first_step].control;
    out->goodness = s.nodes[first_step].g;
    out->value = s.nodes[best].v;
    out->depth = s.nodes[best].depth;
    out->expanded = expanded;
    out->visited = s.node_count;
    out->budget_hit = budget_hit;
    out->leaf = best;
    return 0;
}

int plan_tree_node(const plan_scratch_t* scratch, int32_t index, plan_tree_node_t* out)
{
    if (scratch == NULL || scratch->memory == NULL || out == NULL || index < 0 ||
        index >= scratch->node_capacity)
        return -1;
    /* The same alignment as plan_search's node array. */
    size_t pad = (16u - ((uintptr_t)scratch->memory & 15u)) & 15u;
    const plan_node_t* n = (const plan_node_t*)((const unsigned char*)scratch->memory + pad) + index;
    out->pose = n->pose;
    out->parent = n->parent;
    out->control = n->control;
    out->depth = n->depth;
    out->crashed = n->crashed;
    out->g = n->g;
    out->v = n->v;
    return 0;
}
