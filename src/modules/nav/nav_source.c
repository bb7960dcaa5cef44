/* Sources of the nav module (shoal/nav.h "sources"): agents added over
 * time, at a rate, in a box, with a minimum spacing.
 *
 * Decisions:
 * - The system runs last in the observe stage, serially: each source adds
 *   the agents due by the end of the step (from `start`, one every 1 /
 *   rate seconds, `count` in all), queued as any add inside a step and
 *   live for the next step. Due agents that find no room (32 draws) wait.
 * - Draws are rng_bits(world seed, source, draw number): the same points
 *   for any thread count, and after a snapshot (the draw count is state).
 * - The spacing is checked against the agents in the box widened by the
 *   spacing (one scan of the agent table a step with anything due) and the
 *   agents this step added.
 * - A source's definition is saved as its bytes with a fingerprint of the
 *   layout (its size and the offsets of its parts); another layout refuses
 *   the file. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "modules/nav/nav.h"
#include "ecs/rng.h"
#include "modules/agent.h"

#define SOURCE_DRAWS 32

static uint64_t def_layout(void)
{
    uint64_t h = rng_mix64(sizeof(shoal_agent_def_t));
    const size_t parts[] = {
        offsetof(shoal_agent_def_t, vehicle),    offsetof(shoal_agent_def_t, weights),
        offsetof(shoal_agent_def_t, target),     offsetof(shoal_agent_def_t, neighbors),
        offsetof(shoal_agent_def_t, dseek),      offsetof(shoal_agent_def_t, ground),
        offsetof(shoal_agent_def_t, planner),    offsetof(shoal_agent_def_t, crowd),
        offsetof(shoal_agent_def_t, nav),        offsetof(shoal_agent_def_t, contacts),
        offsetof(shoal_agent_def_t, user_value), offsetof(shoal_agent_def_t, internal_value)};
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; ++k) h = rng_mix64(h ^ parts[k]);
    return h;
}

/* The bytes of a definition that are its fields (not the tail padding). */
#define DEF_BYTES (offsetof(shoal_agent_def_t, internal_value) + sizeof(int32_t))

int nav_sources_idle(const world_t* w)
{
    const nav_world_t* nw = nav_of(w);
    for (int32_t s = 0; s < nw->source_count; ++s)
        if (nw->sources[s].added < nw->sources[s].src.count) return 0;
    return 1;
}

/* Agents due from source s by time t. */
static int64_t due_by(const nav_source_rec_t* r, double t)
{
    if (t < (double)r->src.start) return 0;
    double n = floor((t - (double)r->src.start) * (double)r->src.rate + 1e-9) + 1.0;
    return n < (double)r->src.count ? (int64_t)n : r->src.count;
}

typedef struct near_t {
    float* xy;
    int32_t count, capacity;
} near_t;

static int near_push(world_t* w, near_t* n, float x, float y)
{
    if (n->count == n->capacity) {
        int32_t cap = n->capacity ? 2 * n->capacity : 64;
        float* xy = mem_alloc(&w->alloc, (size_t)cap * 2 * sizeof *xy);
        if (!xy) return 0;
        if (n->count) memcpy(xy, n->xy, (size_t)n->count * 2 * sizeof *xy);
        mem_free(&w->alloc, n->xy, (size_t)n->capacity * 2 * sizeof *xy);
        n->xy = xy;
        n->capacity = cap;
    }
    n->xy[2 * n->count] = x;
    n->xy[2 * n->count + 1] = y;
    n->count++;
    return 1;
}

int64_t nav_sources_run(world_t* w, float dt, void* ctx)
{
    (void)ctx;
    nav_world_t* nw = nav_of(w);
    const double t_end = w->time + (double)dt;
    int64_t added = 0;
    const float* px = AGENT_F(w, AC_POS_X);
    const float* py = AGENT_F(w, AC_POS_Y);
    for (int32_t s = 0; s < nw->source_count; ++s) {
        nav_source_rec_t* r = &nw->sources[s];
        int64_t due = due_by(r, t_end) - r->added;
        if (due <= 0) continue;
        const float* a = r->src.area;
        const float gap = r->src.spacing;
        near_t near = {0};
        for (int32_t i = 0; i < w->agents.count; ++i)
            if (px[i] >= a[0] - gap && px[i] <= a[2] + gap && py[i] >= a[1] - gap && py[i] <= a[3] + gap &&
                !near_push(w, &near, px[i], py[i])) {
                mem_free(&w->alloc, near.xy, (size_t)near.capacity * 2 * sizeof *near.xy);
                return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "nav_sources: out of memory");
            }
        shoal_status_t st = SHOAL_OK;
        for (int64_t k = 0; k < due && st == SHOAL_OK; ++k) {
            int placed = 0;
            float x = 0.0f, y = 0.0f;
            for (int d = 0; d < SOURCE_DRAWS && !placed; ++d) {
                uint64_t bits =
                    rng_bits(w->seed, 0x736f757263650000ull | (uint64_t)s, (uint64_t)r->draws++, 0);
                float u = (float)(bits >> 40) * (1.0f / 16777216.0f);
                float v = (float)(bits & 0xffffff) * (1.0f / 16777216.0f);
                x = a[0] + u * (a[2] - a[0]);
                y = a[1] + v * (a[3] - a[1]);
                placed = 1;
                for (int32_t q = 0; q < near.count && placed; ++q) {
                    float ex = near.xy[2 * q] - x, ey = near.xy[2 * q + 1] - y;
                    placed = ex * ex + ey * ey >= gap * gap;
                }
            }
            if (!placed) break; /* the rest wait for room */
            shoal_agent_def_t d = r->def;
            d.position[0] = x;
            d.position[1] = y;
            st = shoal_agent_add(w, &d, NULL);
            if (st == SHOAL_OK) {
                r->added++;
                added++;
                if (!near_push(w, &near, x, y))
                    st = world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "nav_sources: out of memory");
            }
        }
        mem_free(&w->alloc, near.xy, (size_t)near.capacity * 2 * sizeof *near.xy);
        if (st != SHOAL_OK) return st;
    }
    return added;
}

static shoal_status_t check_source(world_t* w, const char* where, const shoal_nav_source_t* s)
{
    if (!def_check_coordinates(w, where, "area", s->area, 4)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!(s->area[2] > s->area[0] && s->area[3] > s->area[1]))
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT,
                          "%s: area must be x0, y0, x1, y1 with x1 > x0 and y1 > y0, got %g, %g, %g, %g",
                          where, (double)s->area[0], (double)s->area[1], (double)s->area[2],
                          (double)s->area[3]);
    if (!def_check_min(w, where, "rate", s->rate, 0.0f, 1)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_min(w, where, "spacing", s->spacing, 0.0f, 0)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!def_check_min(w, where, "start", s->start, 0.0f, 0)) return SHOAL_ERR_INVALID_ARGUMENT;
    if (s->count < 1)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: count must be >= 1, got %d", where,
                          (int)s->count);
    if (!s->def) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: def is NULL", where);
    shoal_agent_def_t d = *s->def;
    d.position[0] = s->area[0];
    d.position[1] = s->area[1];
    shoal_status_t st = agent_validate_def(w, &d, where);
    for (int32_t m = 0; st == SHOAL_OK && m < w->registry->module_count; ++m) {
        const module_t* mod = w->registry->modules[m];
        if (mod->validate_add) st = mod->validate_add(w, &d, where);
    }
    return st;
}

shoal_status_t shoal_world_add_source(shoal_world_t* w, const shoal_nav_source_t* source, int32_t* out_id)
{
    static const char* where = "world_add_source";
    if (out_id) *out_id = -1;
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    REQUIRE_PTR(w, source, where, "source");
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (w->dims != 2)
        return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: sources are 2D, this world is 3D", where);
    shoal_status_t st = check_source(w, where, source);
    if (st != SHOAL_OK) return st;
    nav_world_t* nw = nav_of(w);
    if (nw->source_count >= SHOAL_MAX_SOURCES)
        return world_fail(w, SHOAL_ERR_CAPACITY, "%s: %d sources, the most a world takes", where,
                          SHOAL_MAX_SOURCES);
    if (nw->source_count == nw->source_capacity) {
        int32_t cap = nw->source_capacity ? 2 * nw->source_capacity : 4;
        nav_source_rec_t* rs = mem_calloc(&w->alloc, (size_t)cap * sizeof *rs);
        if (!rs) return world_fail(w, SHOAL_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
        if (nw->source_count) memcpy(rs, nw->sources, (size_t)nw->source_count * sizeof *rs);
        mem_free(&w->alloc, nw->sources, (size_t)nw->source_capacity * sizeof *rs);
        nw->sources = rs;
        nw->source_capacity = cap;
        for (int32_t s = 0; s < nw->source_count; ++s) nw->sources[s].src.def = &nw->sources[s].def;
    }
    nav_source_rec_t* r = &nw->sources[nw->source_count];
    memset(r, 0, sizeof *r);
    r->src = *source;
    memcpy(&r->def, source->def, DEF_BYTES);
    r->src.def = &r->def;
    if (out_id) *out_id = nw->source_count;
    nw->source_count++;
    return SHOAL_OK;
}

shoal_status_t shoal_world_source_stats(const shoal_world_t* w, int32_t id, int64_t* out_added,
                                        int64_t* out_waiting)
{
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    const nav_world_t* nw = nav_of(w);
    if (id < 0 || id >= nw->source_count)
        return world_failc(w, SHOAL_ERR_NOT_FOUND, "world_source_stats: %d is not a source (%d)", (int)id,
                           (int)nw->source_count);
    const nav_source_rec_t* r = &nw->sources[id];
    if (out_added) *out_added = r->added;
    if (out_waiting) *out_waiting = due_by(r, w->time) - r->added > 0 ? due_by(r, w->time) - r->added : 0;
    return SHOAL_OK;
}


uint64_t nav_sources_hash(const world_t* w, uint64_t h, hash_absorb_fn* absorb)
{
    const nav_world_t* nw = nav_of(w);
    for (int32_t s = 0; s < nw->source_count; ++s) {
        const nav_source_rec_t* r = &nw->sources[s];
        h = absorb(h, 0x736f757263650000ull | (uint32_t)s);
        for (int k = 0; k < 4; k += 2)
            h = absorb(h, f32_bits(r->src.area[k]) << 32 | f32_bits(r->src.area[k + 1]));
        h = absorb(h, f32_bits(r->src.rate) << 32 | (uint32_t)r->src.count);
        h = absorb(h, f32_bits(r->src.spacing) << 32 | f32_bits(r->src.start));
        h = absorb(h, (uint64_t)r->added);
        h = absorb(h, (uint64_t)r->draws);
        const unsigned char* b = (const unsigned char*)&r->def;
        uint64_t word = 0;
        for (size_t i = 0; i < DEF_BYTES; ++i) {
            word = word << 8 | b[i];
            if (i % 8 == 7 || i + 1 == DEF_BYTES) {
                h = absorb(h, word);
                word = 0;
            }
        }
    }
    return h;
}

/* u32 sources, then per source: f32 area[4], rate, i32 count, f32 spacing,
 * start, u64 added, draws, u64 the definition's layout, u32 its bytes and
 * the bytes. */
void nav_sources_save(const world_t* w, byte_writer_t* wr)
{
    const nav_world_t* nw = nav_of(w);
    bw_u32(wr, (uint32_t)nw->source_count);
    for (int32_t s = 0; s < nw->source_count; ++s) {
        const nav_source_rec_t* r = &nw->sources[s];
        for (int k = 0; k < 4; ++k) bw_f32(wr, r->src.area[k]);
        bw_f32(wr, r->src.rate);
        bw_i32(wr, r->src.count);
        bw_f32(wr, r->src.spacing);
        bw_f32(wr, r->src.start);
        bw_u64(wr, (uint64_t)r->added);
        bw_u64(wr, (uint64_t)r->draws);
        bw_u64(wr, def_layout());
        bw_u32(wr, (uint32_t)DEF_BYTES);
        bw_bytes(wr, &r->def, DEF_BYTES);
    }
}

int nav_sources_load(world_t* w, byte_reader_t* rd)
{
    nav_world_t* nw = nav_of(w);
    uint32_t n = br_u32(rd);
    if (rd->failed) return 0;
    if (!br_count(rd, n, 64, SHOAL_MAX_SOURCES, "sources")) return 0;
    if (n == 0) return 1;
    nw->sources = mem_calloc(&w->alloc, (size_t)n * sizeof *nw->sources);
    if (!nw->sources) return br_fail(rd, "out of memory for %u sources", n);
    nw->source_capacity = (int32_t)n;
    for (uint32_t s = 0; s < n; ++s) {
        nav_source_rec_t* r = &nw->sources[s];
        shoal_nav_source_t src;
        memset(&src, 0, sizeof src);
        for (int k = 0; k < 4; ++k) src.area[k] = br_f32(rd);
        src.rate = br_f32(rd);
        src.count = br_i32(rd);
        src.spacing = br_f32(rd);
        src.start = br_f32(rd);
        uint64_t added = br_u64(rd), draws = br_u64(rd), layout = br_u64(rd);
        uint32_t bytes = br_u32(rd);
        if (rd->failed) return 0;
        if (layout != def_layout() || bytes != DEF_BYTES)
            return br_fail(rd,
                           "source %u: its agent definition has another layout (%u bytes): saved by another "
                           "build of shoal",
                           s, bytes);
        const uint8_t* b = br_take(rd, DEF_BYTES);
        if (!b) return 0;
        memcpy(&r->def, b, DEF_BYTES);
        if (added > (uint64_t)src.count || draws > (uint64_t)INT64_MAX)
            return br_fail(rd, "source %u: %llu added of %d", s, (unsigned long long)added, (int)src.count);
        src.def = &r->def;
        if (check_source(w, "source", &src) != SHOAL_OK) return br_fail(rd, "source %u: %s", s, w->error);
        r->src = src;
        r->added = (int64_t)added;
        r->draws = (int64_t)draws;
    }
    nw->source_count = (int32_t)n;
    return 1;
}

void nav_sources_release(world_t* w)
{
    nav_world_t* nw = nav_of(w);
    mem_free(&w->alloc, nw->sources, (size_t)nw->source_capacity * sizeof *nw->sources);
    nw->sources = NULL;
    nw->source_count = nw->source_capacity = 0;
}
