/* Measurement lines and areas (shoal/measure.h, docs/measure.md): the
 * module, its lines' crossings and the public API. The areas' samples are
 * measure_area.c's.
 *
 * A crossing needs where an agent was at the step's start: measure_start,
 * last of the sense stage, notes every agent's position by slot (so that
 * the rows a removal or a reorder moves do not matter), and measure, first
 * of the observe stage, tests each agent's straight path of the step
 * against every line. Both run only in worlds with a line. The crossings
 * of a step are sorted (line, time, slot) before they are appended, and
 * the areas' sums run in an order of their own (measure_area.c), so the
 * figures are the same bits for any thread count and row order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/memory.h"
#include "ecs/parallel.h"
#include "modules/measure/measure.h"

/* ---- memory ----------------------------------------------------------------- */

/* Grow *p (of *cap elements of `size` bytes) to hold `need`; 0 when out of
 * memory (the block as it was). */
static int grow(world_t* w, void** p, int64_t* cap, int64_t need, size_t size)
{
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void* q = mem_alloc(&w->alloc, (size_t)c * size);
    if (!q) return 0;
    if (*cap) memcpy(q, *p, (size_t)*cap * size);
    mem_free(&w->alloc, *p, (size_t)*cap * size);
    *p = q;
    *cap = c;
    return 1;
}

int measure_reserve_candidates(world_t* w, measure_world_t* mw, int64_t n)
{
    if (n <= mw->cand_capacity) return 1;
    int64_t cap = mw->cand_capacity ? mw->cand_capacity : 64;
    while (cap < n) cap *= 2;
    measure_cand_t* cand = mem_alloc(&w->alloc, (size_t)cap * sizeof *cand);
    double(*share)[2] = mem_alloc(&w->alloc, (size_t)cap * sizeof *share);
    if (!cand || !share) {
        mem_free(&w->alloc, cand, (size_t)cap * sizeof *cand);
        mem_free(&w->alloc, share, (size_t)cap * sizeof *share);
        return 0;
    }
    mem_free(&w->alloc, mw->cand, (size_t)mw->cand_capacity * sizeof *mw->cand);
    mem_free(&w->alloc, mw->share, (size_t)mw->cand_capacity * sizeof *mw->share);
    mw->cand = cand;
    mw->share = share;
    mw->cand_capacity = cap;
    return 1;
}

int measure_reserve_grid(world_t* w, measure_world_t* mw, int64_t starts, int64_t n)
{
    void* p = mw->grid_start;
    if (!grow(w, &p, &mw->grid_start_capacity, starts, sizeof *mw->grid_start)) return 0;
    mw->grid_start = p;
    p = mw->grid_items;
    if (!grow(w, &p, &mw->grid_items_capacity, n > 0 ? n : 1, sizeof *mw->grid_items)) return 0;
    mw->grid_items = p;
    return 1;
}

static int measure_init(world_t* w)
{
    measure_world_t* mw = mem_calloc(&w->alloc, sizeof *mw);
    w->module_data[MOD_MEASURE] = mw;
    return mw != NULL;
}

static void measure_release(world_t* w)
{
    measure_world_t* mw = measure_of(w);
    if (!mw) return;
    for (int32_t i = 0; i < mw->line_count; ++i)
        mem_free(&w->alloc, mw->lines[i].crossings,
                 (size_t)mw->lines[i].crossing_capacity * sizeof *mw->lines[i].crossings);
    for (int32_t i = 0; i < mw->area_count; ++i)
        mem_free(&w->alloc, mw->areas[i].samples,
                 (size_t)mw->areas[i].sample_capacity * sizeof *mw->areas[i].samples);
    mem_free(&w->alloc, mw->lines, (size_t)mw->line_capacity * sizeof *mw->lines);
    mem_free(&w->alloc, mw->areas, (size_t)mw->area_capacity * sizeof *mw->areas);
    mem_free(&w->alloc, mw->start, (size_t)mw->slot_capacity * sizeof *mw->start);
    mem_free(&w->alloc, mw->stamp, (size_t)mw->slot_capacity * sizeof *mw->stamp);
    mem_free(&w->alloc, mw->generation, (size_t)mw->slot_capacity * sizeof *mw->generation);
    mem_free(&w->alloc, mw->fresh, (size_t)mw->fresh_capacity * sizeof *mw->fresh);
    mem_free(&w->alloc, mw->fresh_line, (size_t)mw->fresh_capacity * sizeof *mw->fresh_line);
    mem_free(&w->alloc, mw->cand, (size_t)mw->cand_capacity * sizeof *mw->cand);
    mem_free(&w->alloc, mw->share, (size_t)mw->cand_capacity * sizeof *mw->share);
    mem_free(&w->alloc, mw->grid_start, (size_t)mw->grid_start_capacity * sizeof *mw->grid_start);
    mem_free(&w->alloc, mw->grid_items, (size_t)mw->grid_items_capacity * sizeof *mw->grid_items);
    mem_free(&w->alloc, mw, sizeof *mw);
    w->module_data[MOD_MEASURE] = NULL;
}

/* Before a step: room for every slot's start, so that a step out of memory
 * fails before anything changed. Slots of agents added inside the step
 * have none (they are measured from their first whole step). */
static int measure_reserve_step(world_t* w)
{
    measure_world_t* mw = measure_of(w);
    if (mw->line_count == 0 || w->slot_high <= mw->slot_capacity) return 1;
    int32_t cap = mw->slot_capacity ? mw->slot_capacity : 64;
    while (cap < w->slot_high) cap *= 2;
    float(*start)[2] = mem_alloc(&w->alloc, (size_t)cap * sizeof *start);
    uint64_t* stamp = mem_calloc(&w->alloc, (size_t)cap * sizeof *stamp);
    uint16_t* gen = mem_alloc(&w->alloc, (size_t)cap * sizeof *gen);
    if (!start || !stamp || !gen) {
        mem_free(&w->alloc, start, (size_t)cap * sizeof *start);
        mem_free(&w->alloc, stamp, (size_t)cap * sizeof *stamp);
        mem_free(&w->alloc, gen, (size_t)cap * sizeof *gen);
        world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "world_step: out of memory for the measure lines' %d slots",
                   (int)cap);
        return 0;
    }
    mem_free(&w->alloc, mw->start, (size_t)mw->slot_capacity * sizeof *mw->start);
    mem_free(&w->alloc, mw->stamp, (size_t)mw->slot_capacity * sizeof *mw->stamp);
    mem_free(&w->alloc, mw->generation, (size_t)mw->slot_capacity * sizeof *mw->generation);
    mw->start = start;
    mw->stamp = stamp;
    mw->generation = gen;
    mw->slot_capacity = cap;
    return 1;
}

/* An all-or-nothing loader (a scenario's populate) forgets the lines and
 * areas it added. */
static void measure_mark(const world_t* w, int64_t note[WORLD_MARK_WORDS])
{
    note[0] = measure_of(w)->line_count;
    note[1] = measure_of(w)->area_count;
}

static void measure_rollback(world_t* w, const int64_t note[WORLD_MARK_WORDS])
{
    measure_world_t* mw = measure_of(w);
    while (mw->line_count > note[0]) {
        measure_line_rec_t* l = &mw->lines[--mw->line_count];
        mem_free(&w->alloc, l->crossings, (size_t)l->crossing_capacity * sizeof *l->crossings);
        memset(l, 0, sizeof *l);
    }
    while (mw->area_count > note[1]) {
        measure_area_rec_t* a = &mw->areas[--mw->area_count];
        mem_free(&w->alloc, a->samples, (size_t)a->sample_capacity * sizeof *a->samples);
        memset(a, 0, sizeof *a);
    }
}

const module_t measure_module = {
    .name = "measure",
    .init = measure_init,
    .release = measure_release,
    .reserve_step = measure_reserve_step,
    .mark = measure_mark,
    .rollback = measure_rollback,
};

/* ---- the systems ------------------------------------------------------------- */

int measure_start_idle(const world_t* w) { return measure_of(w)->line_count == 0; }

int measure_idle(const world_t* w)
{
    const measure_world_t* mw = measure_of(w);
    if (mw->line_count > 0) return 0;
    for (int32_t a = 0; a < mw->area_count; ++a)
        if ((w->step_count + 1) % (uint64_t)mw->areas[a].def.every == 0) return 0;
    return 1;
}

typedef struct start_ctx_t {
    world_t* w;
    measure_world_t* mw;
} start_ctx_t;

static void start_range(int32_t begin, int32_t end, int32_t worker, void* ctx)
{
    (void)worker;
    start_ctx_t* c = ctx;
    const world_t* w = c->w;
    measure_world_t* mw = c->mw;
    const uint32_t* slot = TABLE_COL(&w->agents, uint32_t, AC_SLOT);
    const float* px = AGENT_F(w, AC_POS_X);
    const float* py = AGENT_F(w, AC_POS_Y);
    const uint64_t stamp = w->step_count + 1;
    for (int32_t r = begin; r < end; ++r) {
        uint32_t s = slot[r];
        if (s >= (uint32_t)mw->slot_capacity) continue;
        mw->start[s][0] = px[r];
        mw->start[s][1] = py[r];
        mw->stamp[s] = stamp;
        mw->generation[s] = w->slots[s].generation;
    }
}

int64_t measure_start_run(world_t* w, float dt, void* ctx)
{
    (void)dt;
    (void)ctx;
    measure_world_t* mw = measure_of(w);
    if (mw->line_count == 0) return 0;
    start_ctx_t c = {w, mw};
    par_for(w, w->agents.count, 4096, PAR_STATIC, start_range, &c);
    return w->agents.count;
}

/* The signed side of (x, y) to the line a -> b: > 0 on its left. */
static double side_of(const measure_line_rec_t* l, double x, double y)
{
    const double ax = l->def.from[0], ay = l->def.from[1];
    const double dx = (double)l->def.to[0] - ax, dy = (double)l->def.to[1] - ay;
    return dx * (y - ay) - dy * (x - ax);
}

/* Whether the path p0 -> p1 crosses line l; *frac is where along the path,
 * *dir the direction. A point on the line counts as on its right, so that
 * an agent that stops on it and walks on is counted once. */
static int crosses(const measure_line_rec_t* l, double x0, double y0, double x1, double y1, double* frac,
                   int32_t* dir)
{
    const double s0 = side_of(l, x0, y0), s1 = side_of(l, x1, y1);
    const int left0 = s0 > 0.0, left1 = s1 > 0.0;
    if (left0 == left1) return 0;
    const double t = s0 / (s0 - s1); /* s0 != s1: one is > 0, the other not */
    const double qx = x0 + t * (x1 - x0), qy = y0 + t * (y1 - y0);
    const double ax = l->def.from[0], ay = l->def.from[1];
    const double dx = (double)l->def.to[0] - ax, dy = (double)l->def.to[1] - ay;
    const double u = ((qx - ax) * dx + (qy - ay) * dy) / (dx * dx + dy * dy);
    if (!(u >= 0.0 && u <= 1.0)) return 0;
    *frac = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    *dir = left0 ? 1 : -1;
    return 1;
}

static int fresh_cmp(const void* pa, const void* pb)
{
    const shoal_measure_crossing_t *a = pa, *b = pb;
    /* the line is in reserved_ while they are sorted */
    if (a->reserved_ != b->reserved_) return a->reserved_ < b->reserved_ ? -1 : 1;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->agent.index1 != b->agent.index1) return a->agent.index1 < b->agent.index1 ? -1 : 1;
    return 0;
}

/* The step's crossings of every line, serially in row order, then sorted
 * and appended. */
static int lines_run(world_t* w, measure_world_t* mw, float dt)
{
    const uint32_t* slot = TABLE_COL(&w->agents, uint32_t, AC_SLOT);
    const uint32_t* group = TABLE_COL(&w->agents, uint32_t, AC_GROUP);
    const float* px = AGENT_F(w, AC_POS_X);
    const float* py = AGENT_F(w, AC_POS_Y);
    const uint64_t stamp = w->step_count + 1;
    const float span[2] = {w->bounds_max[0] - w->bounds_min[0], w->bounds_max[1] - w->bounds_min[1]};
    mw->fresh_count = 0;
    for (int32_t r = 0; r < w->agents.count; ++r) {
        const uint32_t s = slot[r];
        if (s >= (uint32_t)mw->slot_capacity || mw->stamp[s] != stamp ||
            mw->generation[s] != w->slots[s].generation)
            continue;
        const double x0 = mw->start[s][0], y0 = mw->start[s][1];
        double ddx = (double)px[r] - x0, ddy = (double)py[r] - y0;
        if (w->wrap) { /* a torus: the short way round, not the jump of the wrap */
            if (ddx > 0.5 * span[0]) ddx -= span[0];
            if (ddx < -0.5 * span[0]) ddx += span[0];
            if (ddy > 0.5 * span[1]) ddy -= span[1];
            if (ddy < -0.5 * span[1]) ddy += span[1];
        }
        if (ddx == 0.0 && ddy == 0.0) continue;
        const double x1 = x0 + ddx, y1 = y0 + ddy;
        for (int32_t k = 0; k < mw->line_count; ++k) {
            const measure_line_rec_t* l = &mw->lines[k];
            if (l->def.group >= 0 && (int64_t)group[r] != l->def.group) continue;
            double frac;
            int32_t dir;
            if (!crosses(l, x0, y0, x1, y1, &frac, &dir)) continue;
            if (!grow(w, (void**)&mw->fresh, &mw->fresh_capacity, mw->fresh_count + 1, sizeof *mw->fresh)) {
                world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "measure: out of memory for %lld crossings",
                           (long long)mw->fresh_count + 1);
                return 0;
            }
            shoal_measure_crossing_t* c = &mw->fresh[mw->fresh_count++];
            memset(c, 0, sizeof *c);
            c->time = w->time + frac * (double)dt;
            c->step = stamp;
            c->agent = (shoal_agent_t){s + 1, w->tag, w->slots[s].generation};
            c->direction = dir;
            c->reserved_ = k;
        }
    }
    if (mw->fresh_count == 0) return 1;
    qsort(mw->fresh, (size_t)mw->fresh_count, sizeof *mw->fresh, fresh_cmp);
    /* room in every line first, so that nothing is appended when memory
     * runs out */
    for (int64_t i = 0, j; i < mw->fresh_count; i = j) {
        const int32_t k = mw->fresh[i].reserved_;
        for (j = i; j < mw->fresh_count && mw->fresh[j].reserved_ == k; ++j) {}
        measure_line_rec_t* l = &mw->lines[k];
        if (!grow(w, (void**)&l->crossings, &l->crossing_capacity, l->crossing_count + (j - i),
                  sizeof *l->crossings)) {
            world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "measure: out of memory for line '%s''s crossings",
                       l->name);
            return 0;
        }
    }
    for (int64_t i = 0; i < mw->fresh_count; ++i) {
        shoal_measure_crossing_t c = mw->fresh[i];
        measure_line_rec_t* l = &mw->lines[c.reserved_];
        c.reserved_ = 0;
        l->crossings[l->crossing_count++] = c;
        if (c.direction > 0)
            l->positive++;
        else
            l->negative++;
    }
    return 1;
}

int64_t measure_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    measure_world_t* mw = measure_of(w);
    if (mw->line_count > 0 && !lines_run(w, mw, dt)) return SHOAL_ERR_OUT_OF_MEMORY;
    const uint64_t step = w->step_count + 1;
    int sampled = 0;
    for (int32_t a = 0; a < mw->area_count; ++a)
        if (step % (uint64_t)mw->areas[a].def.every == 0) {
            if (!measure_area_sample(w, mw, &mw->areas[a], w->time + (double)dt, step))
                return SHOAL_ERR_OUT_OF_MEMORY;
            sampled = 1;
        }
    /* the agents it looked at: every one, or none when idle */
    return mw->line_count > 0 || sampled ? w->agents.count : 0;
}

/* ---- the API ---------------------------------------------------------------- */

shoal_measure_line_t shoal_measure_line_default(void)
{
    shoal_measure_line_t l;
    memset(&l, 0, sizeof l);
    l.group = -1;
    l.window = 1.0f;
    return l;
}

shoal_measure_area_t shoal_measure_area_default(void)
{
    shoal_measure_area_t a;
    memset(&a, 0, sizeof a);
    a.every = 1;
    a.group = -1;
    a.cell_radius = 2.0f;
    return a;
}

static shoal_status_t measure_entry(world_t* w, const char* where)
{
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (w->dims != 2)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: measurement lines and areas are 2D, this world is 3D", where);
    return SHOAL_OK;
}

static shoal_status_t check_name(world_t* w, const char* where, const char* name)
{
    if (name && strlen(name) >= SHOAL_MEASURE_NAME_MAX)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: name '%.40s...' is longer than %d bytes", where,
                          name, SHOAL_MEASURE_NAME_MAX - 1);
    return SHOAL_OK;
}

static shoal_status_t check_group(world_t* w, const char* where, int64_t group)
{
    if (group < -1 || group > (int64_t)UINT32_MAX)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: group must be -1 (every agent) or 0 to 4294967295, got %lld", where,
                          (long long)group);
    return SHOAL_OK;
}

shoal_status_t shoal_world_add_measure_line(shoal_world_t* w, const shoal_measure_line_t* line,
                                            int32_t* out_id)
{
    static const char* where = "world_add_measure_line";
    if (out_id) *out_id = -1;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, line, where, "line");
    shoal_status_t st = measure_entry(w, where);
    if (st == SHOAL_OK) st = check_name(w, where, line->name);
    if (st == SHOAL_OK) st = check_group(w, where, line->group);
    if (st != SHOAL_OK) return st;
    if (!def_check_coordinates(w, where, "from", line->from, 2) ||
        !def_check_coordinates(w, where, "to", line->to, 2) ||
        !def_check_min(w, where, "window", line->window, 0.0f, 1))
        return SHOAL_ERR_INVALID_ARGUMENT;
    if (line->from[0] == line->to[0] && line->from[1] == line->to[1])
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: from and to are the same point (%g, %g): a line needs a length", where,
                          (double)line->from[0], (double)line->from[1]);
    measure_world_t* mw = measure_of(w);
    if (mw->line_count >= SHOAL_MAX_MEASURES)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: %d lines were added, the most a world takes", where,
                          SHOAL_MAX_MEASURES);
    int64_t cap = mw->line_capacity;
    void* lines = mw->lines;
    if (!grow(w, &lines, &cap, mw->line_count + 1, sizeof *mw->lines))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    mw->lines = lines;
    mw->line_capacity = (int32_t)cap;
    const int32_t id = mw->line_count++;
    measure_line_rec_t* l = &mw->lines[id];
    memset(l, 0, sizeof *l);
    l->def = *line;
    if (line->name)
        snprintf(l->name, sizeof l->name, "%s", line->name);
    else
        snprintf(l->name, sizeof l->name, "line%d", (int)id);
    l->def.name = NULL; /* the record may move: names are read from rec.name */
    l->start_time = w->time;
    if (out_id) *out_id = id;
    return SHOAL_OK;
}

shoal_status_t shoal_world_add_measure_area(shoal_world_t* w, const shoal_measure_area_t* area,
                                            int32_t* out_id)
{
    static const char* where = "world_add_measure_area";
    if (out_id) *out_id = -1;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, area, where, "area");
    shoal_status_t st = measure_entry(w, where);
    if (st == SHOAL_OK) st = check_name(w, where, area->name);
    if (st == SHOAL_OK) st = check_group(w, where, area->group);
    if (st != SHOAL_OK) return st;
    if (area->count < 3 || area->count > SHOAL_MEASURE_AREA_POINTS)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: an area has 3 to %d corners, got count %d",
                          where, SHOAL_MEASURE_AREA_POINTS, (int)area->count);
    for (int32_t k = 0; k < area->count; ++k) {
        char field[32];
        snprintf(field, sizeof field, "points[%d]", (int)k);
        if (!def_check_coordinates(w, where, field, area->points[k], 2)) return SHOAL_ERR_INVALID_ARGUMENT;
    }
    if (area->every < 1 || area->every > 1000000)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: every must be 1 to 1000000 steps, got %d",
                          where, (int)area->every);
    if (!def_check_min(w, where, "cell_radius", area->cell_radius, 0.0f, 1))
        return SHOAL_ERR_INVALID_ARGUMENT;
    const double signed_area = measure_polygon_area(area->points, area->count);
    if (!(fabs(signed_area) > 0.0) || !isfinite(signed_area))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: the polygon of %d corners has zero area", where,
                          (int)area->count);
    measure_world_t* mw = measure_of(w);
    if (mw->area_count >= SHOAL_MAX_MEASURES)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: %d areas were added, the most a world takes", where,
                          SHOAL_MAX_MEASURES);
    int64_t cap = mw->area_capacity;
    void* areas = mw->areas;
    if (!grow(w, &areas, &cap, mw->area_count + 1, sizeof *mw->areas))
        return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    mw->areas = areas;
    mw->area_capacity = (int32_t)cap;
    const int32_t id = mw->area_count++;
    measure_area_rec_t* a = &mw->areas[id];
    memset(a, 0, sizeof *a);
    a->def = *area;
    a->def.name = NULL;
    if (area->name)
        snprintf(a->name, sizeof a->name, "%s", area->name);
    else
        snprintf(a->name, sizeof a->name, "area%d", (int)id);
    for (int32_t k = area->count; k < SHOAL_MEASURE_AREA_POINTS; ++k)
        a->def.points[k][0] = a->def.points[k][1] = 0;
    if (signed_area < 0.0) /* counterclockwise, for the clipping */
        for (int32_t k = 0; k < area->count; ++k) {
            a->def.points[k][0] = area->points[area->count - 1 - k][0];
            a->def.points[k][1] = area->points[area->count - 1 - k][1];
        }
    a->area = fabs(signed_area);
    a->box[0] = a->box[2] = a->def.points[0][0];
    a->box[1] = a->box[3] = a->def.points[0][1];
    for (int32_t k = 1; k < area->count; ++k) {
        a->box[0] = fminf(a->box[0], a->def.points[k][0]);
        a->box[1] = fminf(a->box[1], a->def.points[k][1]);
        a->box[2] = fmaxf(a->box[2], a->def.points[k][0]);
        a->box[3] = fmaxf(a->box[3], a->def.points[k][1]);
    }
    if (out_id) *out_id = id;
    return SHOAL_OK;
}

int32_t shoal_world_measure_line_count(const shoal_world_t* w) { return w ? measure_of(w)->line_count : 0; }
int32_t shoal_world_measure_area_count(const shoal_world_t* w) { return w ? measure_of(w)->area_count : 0; }

static const measure_line_rec_t* line_of(const world_t* w, int32_t id, const char* where)
{
    const measure_world_t* mw = measure_of(w);
    if (id < 0 || id >= mw->line_count) {
        world_failc(w, SHOAL_ERR_NOT_FOUND, "%s: no measurement line %d (%d added)", where, (int)id,
                    (int)mw->line_count);
        return NULL;
    }
    return &mw->lines[id];
}

static const measure_area_rec_t* area_of(const world_t* w, int32_t id, const char* where)
{
    const measure_world_t* mw = measure_of(w);
    if (id < 0 || id >= mw->area_count) {
        world_failc(w, SHOAL_ERR_NOT_FOUND, "%s: no measurement area %d (%d added)", where, (int)id,
                    (int)mw->area_count);
        return NULL;
    }
    return &mw->areas[id];
}

shoal_status_t shoal_world_measure_line_stats(const shoal_world_t* w, int32_t id,
                                              shoal_measure_line_stats_t* out)
{
    static const char* where = "world_measure_line_stats";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out is NULL", where);
    const measure_line_rec_t* l = line_of(w, id, where);
    if (!l) return SHOAL_ERR_NOT_FOUND;
    memset(out, 0, sizeof *out);
    memcpy(out->name, l->name, sizeof out->name);
    memcpy(out->from, l->def.from, sizeof out->from);
    memcpy(out->to, l->def.to, sizeof out->to);
    out->group = l->def.group;
    out->window = l->def.window;
    out->positive = l->positive;
    out->negative = l->negative;
    out->first_time = l->crossing_count ? l->crossings[0].time : NAN;
    out->last_time = l->crossing_count ? l->crossings[l->crossing_count - 1].time : NAN;
    out->start_time = l->start_time;
    out->duration = w->time - l->start_time;
    out->mean_flow = out->duration > 0.0 ? (double)(l->positive + l->negative) / out->duration : 0.0;
    return SHOAL_OK;
}

int64_t shoal_world_measure_line_crossings(const shoal_world_t* w, int32_t id, shoal_measure_crossing_t* out,
                                           int64_t capacity)
{
    if (!w) return -1;
    const measure_line_rec_t* l = line_of(w, id, "world_measure_line_crossings");
    if (!l) return -1;
    const int64_t n = capacity < l->crossing_count ? capacity : l->crossing_count;
    if (out && n > 0) memcpy(out, l->crossings, (size_t)n * sizeof *out);
    return l->crossing_count;
}

int64_t shoal_world_measure_line_flow(const shoal_world_t* w, int32_t id, double* out, int64_t capacity)
{
    if (!w) return -1;
    const measure_line_rec_t* l = line_of(w, id, "world_measure_line_flow");
    if (!l) return -1;
    const double win = (double)l->def.window, duration = w->time - l->start_time;
    /* a microsecond less: 400 steps of 0.05f add up to a hair over 20 s */
    const int64_t total = duration > 1e-6 ? (int64_t)ceil((duration - 1e-6) / win) : 0;
    const int64_t n = out ? (capacity < total ? capacity : total) : 0;
    for (int64_t k = 0; k < n; ++k) out[k] = 0.0;
    for (int64_t i = 0; i < l->crossing_count; ++i) {
        int64_t k = (int64_t)floor((l->crossings[i].time - l->start_time) / win);
        if (k >= total) k = total - 1; /* a crossing at the very end of the last window */
        if (k >= 0 && k < n) out[k] += 1.0 / win;
    }
    return total;
}

shoal_status_t shoal_world_measure_area_stats(const shoal_world_t* w, int32_t id, double t0, double t1,
                                              shoal_measure_area_stats_t* out)
{
    static const char* where = "world_measure_area_stats";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!out) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: out is NULL", where);
    const measure_area_rec_t* a = area_of(w, id, where);
    if (!a) return SHOAL_ERR_NOT_FOUND;
    if (isnan(t0) || isnan(t1) || t0 > t1)
        return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: the window [%g, %g] is empty or NaN", where,
                           t0, t1);
    memset(out, 0, sizeof *out);
    memcpy(out->name, a->name, sizeof out->name);
    out->count = a->def.count;
    out->every = a->def.every;
    out->group = a->def.group;
    out->cell_radius = a->def.cell_radius;
    out->area = a->area;
    out->total_samples = a->sample_count;
    double n = 0, count = 0, rho = 0, rho_v = 0, v = 0, v_v = 0, with = 0;
    for (int64_t i = 0; i < a->sample_count; ++i) {
        const shoal_measure_sample_t* s = &a->samples[i];
        if (s->time < t0 || s->time > t1) continue;
        n += 1;
        count += s->count;
        rho += s->density;
        rho_v += s->voronoi_density;
        v_v += s->voronoi_speed;
        if (s->count > 0) {
            v += s->speed;
            with += 1;
        }
    }
    out->samples = (int64_t)n;
    if (n > 0) {
        out->mean_count = count / n;
        out->mean_density = rho / n;
        out->mean_voronoi_density = rho_v / n;
        out->mean_voronoi_speed = v_v / n;
    }
    if (with > 0) out->mean_speed = v / with;
    return SHOAL_OK;
}

int64_t shoal_world_measure_area_samples(const shoal_world_t* w, int32_t id, shoal_measure_sample_t* out,
                                         int64_t capacity)
{
    if (!w) return -1;
    const measure_area_rec_t* a = area_of(w, id, "world_measure_area_samples");
    if (!a) return -1;
    const int64_t n = capacity < a->sample_count ? capacity : a->sample_count;
    if (out && n > 0) memcpy(out, a->samples, (size_t)n * sizeof *out);
    return a->sample_count;
}
