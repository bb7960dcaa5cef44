/* Snapshots, the reading half: bytes in the format of docs/snapshot.md to a
 * new world. The writer is snapshot.c.
 *
 * Decisions:
 * - Everything that can be judged from the bytes alone (magic, version,
 *   sizes, the checksum) is judged before a world exists. Then a world is
 *   created from the runtime half of the caller's definition and filled
 *   section by section; any fault destroys it, so a caller never sees a
 *   half-loaded world.
 * - A checksum only catches accidents; a forged file passes it. So every
 *   count is checked against the bytes left before anything is allocated,
 *   every index and link against what it points into, and every agent is
 *   read back as a definition and put through the same validation as
 *   shoal_agent_add, plus checks of the state columns no definition has
 *   (the planner's interval, the route cursor) and of every float being
 *   finite. Any bytes thus give a world the systems can step, or an error.
 * - Derived data is rebuilt rather than trusted: sparse indexes from the
 *   slot columns, path arc lengths by pf_path_build, the adaptive
 *   permutation from the seed. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ecs/world.h"
#include "base/bytes.h"
#include "io/file_read.h"
#include "io/snapshot_format.h"
#include "shoal/snapshot.h"
#include "systems/dseek.h"
#include "systems/ground.h"
#include "systems/obstacles.h"
#include "systems/planner.h"
#include "systems/spatial_hash.h"

typedef struct reader {
    const uint8_t* p;
    size_t off;
    size_t end; /* of the current section's payload */
    const char* section;
    char msg[480];
    int failed;
} reader_t;

static int r_fail(reader_t* rd, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int r_fail(reader_t* rd, const char* fmt, ...)
{
    if (rd->failed) return 0;
    char text[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(rd->msg, sizeof rd->msg, "section %s: %s", rd->section, text);
    rd->failed = 1;
    return 0;
}

/* Bytes left in the current section. */
static size_t r_left(const reader_t* rd) { return rd->end - rd->off; }

static const uint8_t* r_take(reader_t* rd, size_t n)
{
    if (rd->failed) return NULL;
    if (r_left(rd) < n) {
        r_fail(rd, "ends at byte %zu, %zu bytes short", rd->end, n - r_left(rd));
        return NULL;
    }
    const uint8_t* p = rd->p + rd->off;
    rd->off += n;
    return p;
}

static uint32_t r_u32(reader_t* rd)
{
    const uint8_t* p = r_take(rd, 4);
    return p ? get_u32(p) : 0;
}

static int32_t r_i32(reader_t* rd)
{
    const uint8_t* p = r_take(rd, 4);
    return p ? get_i32(p) : 0;
}

static uint64_t r_u64(reader_t* rd)
{
    const uint8_t* p = r_take(rd, 8);
    return p ? get_u64(p) : 0;
}

static float r_f32(reader_t* rd)
{
    const uint8_t* p = r_take(rd, 4);
    return p ? get_f32(p) : 0.0f;
}

static double r_f64(reader_t* rd)
{
    const uint8_t* p = r_take(rd, 8);
    return p ? get_f64(p) : 0.0;
}

/* A count of items of `item_bytes` each that must fit in what is left of
 * the section and below `limit`: checked before anything is allocated. */
static int r_count(reader_t* rd, uint32_t count, size_t item_bytes, uint32_t limit, const char* what)
{
    if (rd->failed) return 0;
    if (count > limit) return r_fail(rd, "%s %u is above the limit %u", what, count, limit);
    if (item_bytes && (uint64_t)count * item_bytes > r_left(rd))
        return r_fail(rd, "%s %u needs %llu bytes, only %zu are left", what, count,
                      (unsigned long long)count * item_bytes, r_left(rd));
    return 1;
}

static int r_finite(reader_t* rd, float v, const char* what, int32_t index)
{
    if (isfinite(v)) return 1;
    return r_fail(rd, "%s %d is not finite (%g)", what, (int)index, (double)v);
}

static int begin_section(reader_t* rd, size_t total, uint32_t tag, const char* name)
{
    rd->section = name;
    rd->end = total - SNAP_CHECKSUM_BYTES;
    uint32_t got = r_u32(rd);
    uint32_t zero = r_u32(rd);
    uint64_t bytes = r_u64(rd);
    if (rd->failed) return 0;
    if (got != tag) {
        char text[5] = {(char)got, (char)(got >> 8), (char)(got >> 16), (char)(got >> 24), 0};
        for (int i = 0; i < 4; ++i)
            if (text[i] < 32 || text[i] > 126) text[i] = '?';
        return r_fail(rd, "expected here (byte %zu), found tag '%s'", rd->off - SNAP_SECTION_BYTES, text);
    }
    if (zero != 0) return r_fail(rd, "reserved field is %u, expected 0", zero);
    if (bytes > r_left(rd))
        return r_fail(rd, "declares %llu bytes, only %zu are left", (unsigned long long)bytes, r_left(rd));
    rd->end = rd->off + (size_t)bytes;
    return 1;
}

static int end_section(reader_t* rd)
{
    if (rd->failed) return 0;
    if (rd->off != rd->end) return r_fail(rd, "%zu bytes left unread", rd->end - rd->off);
    return 1;
}

/* ---- the world ---------------------------------------------------------- */

typedef struct world_head {
    shoal_world_def_t def;
    uint32_t tag;
    uint64_t step_count;
    double time;
    uint32_t has_grid;
    uint64_t steps_since_reorder;
} world_head_t;

static int read_world(reader_t* rd, const shoal_world_def_t* user, world_head_t* h)
{
    h->def = *user;
    shoal_world_def_t* d = &h->def;
    uint32_t dims = r_u32(rd), wrap = r_u32(rd);
    d->seed = r_u64(rd);
    h->tag = r_u32(rd);
    for (int k = 0; k < 3; ++k) d->bounds_min[k] = r_f32(rd);
    for (int k = 0; k < 3; ++k) d->bounds_max[k] = r_f32(rd);
    d->cell_size = r_f32(rd);
    d->reorder_interval = r_i32(rd);
    h->step_count = r_u64(rd);
    h->time = r_f64(rd);
    h->has_grid = r_u32(rd);
    h->steps_since_reorder = r_u64(rd);
    if (!end_section(rd)) return 0;
    if (dims != 2 && dims != 3) return r_fail(rd, "dimensions must be 2 or 3, got %u", dims);
    if (wrap > 1) return r_fail(rd, "wrap must be 0 or 1, got %u", wrap);
    d->dimensions = (int32_t)dims;
    d->wrap = (int32_t)wrap;
    if (h->tag == 0 || h->tag > 0xffffu)
        return r_fail(rd, "handle tag must be in 1..65535, got %u", h->tag);
    if (!(isfinite(h->time) && h->time >= 0.0))
        return r_fail(rd, "time must be finite and >= 0 s, got %g", h->time);
    if (h->has_grid > 1) return r_fail(rd, "grid flag must be 0 or 1, got %u", h->has_grid);
    if (h->steps_since_reorder > (uint64_t)INT64_MAX)
        return r_fail(rd, "reorder phase %llu is out of range",
                      (unsigned long long)h->steps_since_reorder);
    /* Unused axes of a 2D world are stored as 0: anything else is not a
     * world this library wrote. */
    for (int k = (int)dims; k < 3; ++k)
        if (d->bounds_min[k] != 0.0f || d->bounds_max[k] != 0.0f)
            return r_fail(rd, "bounds of axis %d must be 0 in a 2D world", k);
    /* Checked here too (shoal_world_create would), so that a failing
     * create can only be the caller's definition. */
    for (int k = 0; k < (int)dims; ++k) {
        if (!isfinite(d->bounds_min[k]) || !isfinite(d->bounds_max[k]))
            return r_fail(rd, "bounds of axis %d must be finite", k);
        if (wrap && !(d->bounds_max[k] > d->bounds_min[k]))
            return r_fail(rd, "with wrap, bounds_max[%d] must be > bounds_min[%d]", k, k);
    }
    if (!(isfinite(d->cell_size) && d->cell_size >= 0.0f))
        return r_fail(rd, "cell size must be finite and >= 0 m, got %g", (double)d->cell_size);
    if (d->reorder_interval < 0)
        return r_fail(rd, "reorder interval must be >= 0, got %d", (int)d->reorder_interval);
    return 1;
}

static int read_slots(reader_t* rd, world_t* w)
{
    uint32_t high = r_u32(rd);
    uint32_t free_head = r_u32(rd);
    if (!r_count(rd, high, 16, INT32_MAX / 2, "slot count")) return 0;
    if ((int32_t)high > w->slot_capacity) {
        slot_t* fresh = (slot_t*)mem_calloc(&w->alloc, (size_t)high * sizeof(slot_t));
        if (!fresh) return r_fail(rd, "out of memory for %u slots", high);
        mem_free(&w->alloc, w->slots, (size_t)w->slot_capacity * sizeof(slot_t));
        w->slots = fresh;
        w->slot_capacity = (int32_t)high;
    }
    uint32_t free_count = 0;
    for (uint32_t i = 0; i < high; ++i) {
        slot_t* s = &w->slots[i];
        uint32_t generation = r_u32(rd), state = r_u32(rd);
        int32_t row = r_i32(rd);
        uint32_t next = r_u32(rd);
        if (rd->failed) return 0;
        if (generation == 0 || generation > 0xffffu)
            return r_fail(rd, "slot %u: generation must be in 1..65535, got %u", i, generation);
        if (state != SLOT_FREE && state != SLOT_LIVE)
            return r_fail(rd, "slot %u: state must be 0 (free) or 1 (live), got %u", i, state);
        s->generation = (uint16_t)generation;
        s->state = (uint8_t)state;
        s->remove_queued = 0;
        if (state == SLOT_LIVE) {
            if (row < 0 || next != 0)
                return r_fail(rd, "slot %u: a live slot needs a row >= 0 and link 0, got %d and %u", i,
                              (int)row, next);
            s->row = row;
            s->next_free = 0;
        } else {
            if (row != -1 || (next >= high && next != UINT32_MAX))
                return r_fail(rd, "slot %u: a free slot needs row -1 and a link below %u (or none), "
                                  "got %d and %u", i, high, (int)row, next);
            s->row = -1;
            s->next_free = next;
            free_count++;
        }
    }
    if (!end_section(rd)) return 0;
    /* The free list must visit every free slot exactly once: a walk of
     * free_count free slots that then ends cannot repeat one (a repeat
     * would loop forever) and so covers them all. */
    uint32_t at = free_head;
    for (uint32_t n = 0; n < free_count; ++n) {
        if (at >= high || w->slots[at].state != SLOT_FREE)
            return r_fail(rd, "the free list reaches %u after %u links: not a free slot", at, n);
        at = w->slots[at].next_free;
    }
    if (at != UINT32_MAX)
        return r_fail(rd, "the free list does not end after the %u free slots", free_count);
    w->slot_high = (int32_t)high;
    w->free_head = free_head;
    return 1;
}

/* Columns of a table; the caller gave it room for `count` rows. */
static int read_columns(reader_t* rd, table_t* t, int32_t count)
{
    for (int32_t c = 0; c < t->column_count; ++c) {
        if (t->elem_size[c] == 0) continue;
        const uint8_t* p = r_take(rd, (size_t)count * 4);
        if (!p) return 0;
        uint32_t* col = (uint32_t*)t->columns[c];
        for (int32_t i = 0; i < count; ++i) col[i] = get_u32(p + (size_t)i * 4);
    }
    t->count = count;
    return 1;
}

static size_t used_columns(const table_t* t)
{
    size_t n = 0;
    for (int32_t c = 0; c < t->column_count; ++c) n += t->elem_size[c] != 0;
    return n;
}

static int read_agents(reader_t* rd, world_t* w)
{
    table_t* t = &w->agents;
    uint32_t count = r_u32(rd), columns = r_u32(rd);
    if (rd->failed) return 0;
    if (columns != (uint32_t)t->column_count)
        return r_fail(rd, "%u agent columns, this version has %d", columns, (int)t->column_count);
    if (!r_count(rd, count, used_columns(t) * 4, INT32_MAX / 2, "agent count")) return 0;
    if (!table_reserve(t, &w->alloc, (int32_t)count) || !world_reserve_row_mask(w))
        return r_fail(rd, "out of memory for %u agents", count);
    if (!read_columns(rd, t, (int32_t)count)) return 0;
    if (!end_section(rd)) return 0;
    /* Rows and live slots must map one to one. */
    int32_t live = 0;
    for (int32_t s = 0; s < w->slot_high; ++s) live += w->slots[s].state == SLOT_LIVE;
    if (live != (int32_t)count)
        return r_fail(rd, "%u agents but %d live slots", count, (int)live);
    const uint32_t* slots = table_slots(t);
    for (int32_t r = 0; r < (int32_t)count; ++r) {
        uint32_t s = slots[r];
        if (s >= (uint32_t)w->slot_high || w->slots[s].state != SLOT_LIVE || w->slots[s].row != r)
            return r_fail(rd, "agent row %d names slot %u, which is not a live slot of that row", (int)r, s);
    }
    return 1;
}

static int read_component(reader_t* rd, world_t* w, int k)
{
    component_t* comp = &w->comps[k];
    table_t* t = &comp->table;
    uint32_t id = r_u32(rd), count = r_u32(rd), columns = r_u32(rd);
    if (rd->failed) return 0;
    if (id != (uint32_t)k) return r_fail(rd, "component %u where component %d was expected", id, k);
    if (columns != (uint32_t)t->column_count)
        return r_fail(rd, "component %d: %u columns, this version has %d", k, columns, (int)t->column_count);
    if (!r_count(rd, count, used_columns(t) * 4, (uint32_t)w->agents.count, "component rows")) return 0;
    if (!component_reserve_slots(comp, &w->alloc, w->slot_capacity) ||
        !table_reserve_within(t, &w->alloc, (int32_t)count, w->agents.capacity))
        return r_fail(rd, "out of memory for %u rows of component %d", count, k);
    if (!read_columns(rd, t, (int32_t)count)) return 0;
    if (!end_section(rd)) return 0;
    const uint32_t* slots = table_slots(t);
    const int32_t* rows = TABLE_COL(t, int32_t, COMP_ROW);
    for (int32_t r = 0; r < (int32_t)count; ++r) {
        uint32_t s = slots[r];
        if (s >= (uint32_t)w->slot_high || w->slots[s].state != SLOT_LIVE)
            return r_fail(rd, "component %d row %d names slot %u, not a live agent", k, (int)r, s);
        if (comp->sparse[s] >= 0)
            return r_fail(rd, "component %d: slot %u has two rows (%d and %d)", k, s,
                          (int)comp->sparse[s], (int)r);
        if (rows[r] != w->slots[s].row)
            return r_fail(rd, "component %d row %d: agent row %d, but slot %u is at row %d", k, (int)r,
                          (int)rows[r], s, (int)w->slots[s].row);
        comp->sparse[s] = r;
    }
    return 1;
}

static int read_obstacles(reader_t* rd, world_t* w)
{
    uint32_t high = r_u32(rd), count = r_u32(rd), moving = r_u32(rd);
    uint32_t version = r_u32(rd);
    if (!r_count(rd, high, 28, INT32_MAX / 64, "obstacle ids")) return 0;
    if (high > 0) {
        size_t cap = high;
        obstacles_of(w)->obstacles = mem_alloc(&w->alloc, cap * sizeof *obstacles_of(w)->obstacles);
        obstacles_of(w)->obstacle_velocities = mem_calloc(&w->alloc, cap * sizeof *obstacles_of(w)->obstacle_velocities);
        obstacles_of(w)->obstacle_capacity = (int32_t)high;
        if (!obstacles_of(w)->obstacles || !obstacles_of(w)->obstacle_velocities)
            return r_fail(rd, "out of memory for %u obstacles", high);
    }
    uint32_t live = 0, live_moving = 0;
    for (uint32_t i = 0; i < high; ++i) {
        float* o = obstacles_of(w)->obstacles[i];
        float* v = obstacles_of(w)->obstacle_velocities[i];
        for (int k = 0; k < 4; ++k) o[k] = r_f32(rd);
        for (int k = 0; k < 3; ++k) v[k] = r_f32(rd);
        if (rd->failed) return 0;
        for (int k = 0; k < 4; ++k)
            if (!r_finite(rd, o[k], "obstacle value of id", (int32_t)i)) return 0;
        for (int k = 0; k < 3; ++k)
            if (!r_finite(rd, v[k], "obstacle velocity of id", (int32_t)i)) return 0;
        int nonzero = v[0] != 0.0f || v[1] != 0.0f || v[2] != 0.0f;
        if (w->dims == 2 && (o[2] != 0.0f || v[2] != 0.0f))
            return r_fail(rd, "obstacle %u: z must be 0 in a 2D world", i);
        if (o[3] < 0.0f) {
            if (nonzero) return r_fail(rd, "obstacle %u: a free id must have zero velocity", i);
            continue;
        }
        live++;
        live_moving += nonzero != 0;
    }
    if (!end_section(rd)) return 0;
    if (live != count || live_moving != moving)
        return r_fail(rd, "counts say %u obstacles (%u moving), the ids hold %u (%u moving)", count,
                      moving, live, live_moving);
    obstacles_of(w)->obstacle_high = (int32_t)high;
    obstacles_of(w)->obstacle_count = (int32_t)count;
    obstacles_of(w)->moving_obstacles = (int32_t)moving;
    obstacles_of(w)->obstacle_version = version;
    return 1;
}

static int read_routes(reader_t* rd, world_t* w)
{
    uint32_t points = r_u32(rd), routes = r_u32(rd);
    if (!r_count(rd, points, 28, INT32_MAX / 64, "route points")) return 0;
    if (!r_count(rd, routes, 8, points, "routes")) return 0;
    if (points > 0) {
        routes_of(w)->route_points = mem_alloc(&w->alloc, (size_t)points * sizeof *routes_of(w)->route_points);
        if (!routes_of(w)->route_points) return r_fail(rd, "out of memory for %u route points", points);
        routes_of(w)->route_point_capacity = (int32_t)points;
    }
    if (routes > 0) {
        routes_of(w)->routes = mem_alloc(&w->alloc, (size_t)routes * sizeof *routes_of(w)->routes);
        if (!routes_of(w)->routes) return r_fail(rd, "out of memory for %u routes", routes);
        routes_of(w)->route_capacity = (int32_t)routes;
    }
    for (uint32_t i = 0; i < points; ++i) {
        shoal_waypoint_t* p = &routes_of(w)->route_points[i];
        for (int k = 0; k < 3; ++k) p->position[k] = r_f32(rd);
        for (int k = 0; k < 3; ++k) p->direction[k] = r_f32(rd);
        p->speed = r_f32(rd);
        for (int k = 0; k < 3; ++k)
            if (!r_finite(rd, p->position[k], "position of route point", (int32_t)i) ||
                !r_finite(rd, p->direction[k], "direction of route point", (int32_t)i))
                return 0;
        if (!r_finite(rd, p->speed, "speed of route point", (int32_t)i)) return 0;
        if (p->speed < 0.0f) return r_fail(rd, "route point %u: speed %g is negative", i, (double)p->speed);
    }
    for (uint32_t i = 0; i < routes; ++i) {
        int32_t start = r_i32(rd), n = r_i32(rd);
        if (rd->failed) return 0;
        if (start < 0 || n < 1 || (int64_t)start + n > (int64_t)points)
            return r_fail(rd, "route %u: points [%d, %d + %d) are not within the %u route points", i,
                          (int)start, (int)start, (int)n, points);
        routes_of(w)->routes[i][0] = start;
        routes_of(w)->routes[i][1] = n;
    }
    if (!end_section(rd)) return 0;
    routes_of(w)->route_point_count = (int32_t)points;
    routes_of(w)->route_count = (int32_t)routes;
    return 1;
}

static int read_path(reader_t* rd, world_t* w, ground_world_t* g, uint32_t i)
{
    uint32_t count = r_u32(rd);
    float half_width = r_f32(rd);
    if (!r_count(rd, count, 12, INT32_MAX / 16, "waypoint count")) return 0;
    const uint8_t* raw = r_take(rd, (size_t)count * 12);
    if (!raw) return 0;
    size_t n = count;
    float* xyz = (float*)malloc(n * 3 * sizeof(float) + 1);
    vec3* points = (vec3*)mem_alloc(&w->alloc, n * sizeof(vec3));
    float* s = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    int ok = xyz && (points || n == 0) && (s || n == 0);
    char why[256] = "out of memory";
    ground_path_t* p = &g->paths[i];
    if (ok) {
        for (size_t k = 0; k < 3 * n; ++k) xyz[k] = get_f32(raw + 4 * k);
        for (size_t k = 0; ok && w->dims == 2 && k < n; ++k)
            if (xyz[3 * k + 2] != 0.0f) {
                snprintf(why, sizeof why, "waypoint %zu: z must be 0 in a 2D world", k);
                ok = 0;
            }
        ok = ok && pf_path_build(&p->path, points, s, xyz, (int32_t)count, half_width, why, sizeof why);
    }
    free(xyz);
    if (!ok) {
        mem_free(&w->alloc, points, n * sizeof(vec3));
        mem_free(&w->alloc, s, n * sizeof(float));
        memset(p, 0, sizeof *p);
        return r_fail(rd, "path %u: %s", i, why);
    }
    p->points = points;
    p->s = s;
    g->path_count = (int32_t)i + 1; /* owned by the world from here on */
    return 1;
}

static int read_ground(reader_t* rd, world_t* w)
{
    uint32_t present = r_u32(rd);
    if (rd->failed) return 0;
    if (present > 1) return r_fail(rd, "presence flag must be 0 or 1, got %u", present);
    if (!present) return end_section(rd);
    ground_world_t* g = ground_world_get(w);
    if (!g) return r_fail(rd, "out of memory");
    uint32_t paths = r_u32(rd);
    /* A path takes at least 8 + 2 * 12 bytes. */
    if (!r_count(rd, paths, 32, INT32_MAX / 64, "path count")) return 0;
    if (paths > 0) {
        g->paths = (ground_path_t*)mem_calloc(&w->alloc, (size_t)paths * sizeof *g->paths);
        if (!g->paths) return r_fail(rd, "out of memory for %u paths", paths);
        g->path_capacity = (int32_t)paths;
    }
    for (uint32_t i = 0; i < paths; ++i)
        if (!read_path(rd, w, g, i)) return 0;
    uint32_t nx = r_u32(rd), ny = r_u32(rd);
    float ox = r_f32(rd), oy = r_f32(rd), cell = r_f32(rd);
    if (rd->failed) return 0;
    if (nx == 0 || ny == 0) {
        if (nx != 0 || ny != 0 || ox != 0.0f || oy != 0.0f || cell != 0.0f)
            return r_fail(rd, "flat ground must be stored as nx = ny = 0 and zeros");
        return end_section(rd);
    }
    if (nx < 2 || ny < 2) return r_fail(rd, "terrain of %u x %u samples: both must be >= 2", nx, ny);
    if ((uint64_t)nx * ny > (uint64_t)(INT32_MAX / (int64_t)sizeof(float)))
        return r_fail(rd, "terrain of %u x %u samples is too large", nx, ny);
    if (!r_count(rd, nx * ny, 4, UINT32_MAX, "terrain samples")) return 0;
    if (!isfinite(ox) || !isfinite(oy) || !(isfinite(cell) && cell > 0.0f))
        return r_fail(rd, "terrain origin must be finite and its cell finite and > 0");
    size_t n = (size_t)nx * ny;
    float* heights = (float*)mem_alloc(&w->alloc, n * sizeof(float));
    if (!heights) return r_fail(rd, "out of memory for %zu terrain samples", n);
    g->heights = heights;
    g->terrain.nx = (int32_t)nx;
    g->terrain.ny = (int32_t)ny;
    g->terrain.origin_x = ox;
    g->terrain.origin_y = oy;
    g->terrain.cell = cell;
    g->terrain.heights = heights;
    for (size_t i = 0; i < n; ++i) {
        heights[i] = r_f32(rd);
        if (!r_finite(rd, heights[i], "terrain height", (int32_t)i)) return 0;
    }
    return end_section(rd);
}

static int read_planner(reader_t* rd, world_t* w)
{
    uint32_t present = r_u32(rd);
    if (rd->failed) return 0;
    if (present > 1) return r_fail(rd, "presence flag must be 0 or 1, got %u", present);
    if (!present) return end_section(rd);
    planner_world_t* pw = planner_world_get(w);
    if (!pw) return r_fail(rd, "out of memory");
    uint32_t has_table = r_u32(rd);
    if (rd->failed) return 0;
    if (has_table > 1) return r_fail(rd, "table flag must be 0 or 1, got %u", has_table);
    if (has_table) {
        trim_spec_t spec;
        memset(&spec, 0, sizeof spec);
        spec.axes = r_i32(rd);
        for (int a = 0; a < TRIM_MAX_AXES; ++a) spec.samples[a] = r_i32(rd);
        for (int a = 0; a < TRIM_MAX_AXES; ++a) spec.max_rate[a] = r_f32(rd);
        spec.interval = r_f32(rd);
        spec.substeps = r_i32(rd);
        int32_t controls = r_i32(rd);
        float slack = r_f32(rd);
        if (rd->failed) return 0;
        char why[200];
        if (!trim_spec_valid(&spec, why, sizeof why)) return r_fail(rd, "trim table: %s", why);
        /* A valid spec has at most 262,144 controls and 256 MiB of entries. */
        if (controls < 1 || controls > (1 << 18)) return r_fail(rd, "trim table: %d controls", (int)controls);
        uint64_t entries = (uint64_t)controls * (uint64_t)controls;
        if (entries * 40u > r_left(rd))
            return r_fail(rd, "trim table of %d controls needs %llu bytes, only %zu are left",
                          (int)controls, (unsigned long long)(entries * 40u), r_left(rd));
        size_t bytes = (size_t)entries * sizeof(trim_entry_t);
        trim_entry_t* e = (trim_entry_t*)mem_alloc(&w->alloc, bytes);
        if (!e) return r_fail(rd, "out of memory for the trim table (%zu bytes)", bytes);
        const uint8_t* p = r_take(rd, (size_t)entries * 40u);
        for (size_t i = 0; i < (size_t)entries; ++i) {
            const uint8_t* q = p + i * 40u;
            e[i].pos = (vec3){get_f32(q), get_f32(q + 4), get_f32(q + 8)};
            e[i].facing = (vec3){get_f32(q + 12), get_f32(q + 16), get_f32(q + 20)};
            e[i].rot = (quat){get_f32(q + 24), get_f32(q + 28), get_f32(q + 32), get_f32(q + 36)};
        }
        trim_table_t t;
        memset(&t, 0, sizeof t);
        if (trim_table_adopt(&t, &spec, controls, e, why, sizeof why) != 0) {
            mem_free(&w->alloc, e, bytes);
            return r_fail(rd, "trim table: %s", why);
        }
        if (planner_restore_table(w, &t, slack, "trim table") != SHOAL_OK)
            return r_fail(rd, "%s", w->error);
    }
    pw->substep_clock = r_u64(rd);
    pw->leftover = r_f64(rd);
    if (rd->failed) return 0;
    if (!(isfinite(pw->leftover) && pw->leftover >= 0.0))
        return r_fail(rd, "planner clock leftover must be finite and >= 0 s, got %g", pw->leftover);
    return end_section(rd);
}

static int read_systems(reader_t* rd, world_t* w)
{
    uint32_t count = r_u32(rd);
    if (!r_count(rd, count, SNAP_NAME_BYTES + 12, WORLD_MAX_SYSTEMS, "system count")) return 0;
    int32_t builtin = 0, expected = 0;
    for (int32_t i = 0; i < w->system_count; ++i) expected += !system_is_user(&w->systems[i]);
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t* raw = r_take(rd, SNAP_NAME_BYTES);
        uint32_t stage = r_u32(rd), enabled = r_u32(rd), user = r_u32(rd);
        if (rd->failed) return 0;
        char name[SNAP_NAME_BYTES];
        memcpy(name, raw, sizeof name);
        if (name[SNAP_NAME_BYTES - 1] != '\0' || name[0] == '\0')
            return r_fail(rd, "system %u: the name is empty or not NUL-terminated", i);
        if (enabled > 1 || user > 1 || stage >= SHOAL_STAGE_COUNT_)
            return r_fail(rd, "system '%s': stage %u, enabled %u, user %u out of range", name, stage,
                          enabled, user);
        if (user) continue; /* user systems are the caller's to add again */
        /* Systems of earlier versions whose work is now done otherwise:
         * control and integrate leave ground vehicles and planner agents
         * out instead of these zeroing their rows. */
        if (strcmp(name, "ground_control") == 0 || strcmp(name, "planner_control") == 0) continue;
        system_t* found = NULL;
        for (int32_t k = 0; k < w->system_count; ++k)
            if (strcmp(w->systems[k].name, name) == 0) found = &w->systems[k];
        if (!found || system_is_user(found) || (uint32_t)found->stage != stage)
            return r_fail(rd, "built-in system '%s' (stage %u) does not exist in this version", name, stage);
        found->enabled = (int32_t)enabled;
        builtin++;
    }
    if (!end_section(rd)) return 0;
    if (builtin != expected)
        return r_fail(rd, "%d built-in systems listed, this version has %d", (int)builtin, (int)expected);
    return 1;
}

/* User components: each added to the world as its description says (the
 * same checks as shoal_world_add_component), then its column read. */
static int read_user(reader_t* rd, world_t* w)
{
    uint32_t count = r_u32(rd);
    if (!r_count(rd, count, SNAP_NAME_BYTES + 12, SHOAL_MAX_USER_COMPONENTS, "user component count")) return 0;
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t* raw = r_take(rd, SNAP_NAME_BYTES);
        uint32_t type = r_u32(rd), width = r_u32(rd);
        if (rd->failed) return 0;
        char name[SNAP_NAME_BYTES];
        memcpy(name, raw, sizeof name);
        if (name[SNAP_NAME_BYTES - 1] != '\0') return r_fail(rd, "user component %u: the name is not NUL-terminated", i);
        if (type < SHOAL_COLUMN_F32 || type > SHOAL_COLUMN_U64 || width < 1 || width > 16)
            return r_fail(rd, "user component %u: type %u, width %u out of range", i, type, width);
        uint32_t words = width * (type == SHOAL_COLUMN_U64 ? 2u : 1u);
        uint32_t def_words[32];
        for (uint32_t k = 0; k < words; ++k) def_words[k] = r_u32(rd);
        if (rd->failed) return 0;
        shoal_component_def_t cdef = {name, (shoal_column_type_t)type, (int32_t)width, def_words};
        if (shoal_world_add_component(w, &cdef) != SHOAL_OK)
            return r_fail(rd, "user component %u: %s", i, w->error);
        uint64_t n = (uint64_t)w->agents.count * words;
        if (n * 4 > r_left(rd)) return r_fail(rd, "user component '%s': %llu words, only %zu bytes left", name,
                                              (unsigned long long)n, r_left(rd));
        uint32_t* col = (uint32_t*)w->user.columns[w->user_count];
        for (uint64_t k = 0; k < n; ++k) col[k] = r_u32(rd);
    }
    return end_section(rd);
}

/* ---- validation of the agents --------------------------------------------- */

/* Integer columns (int32 or uint32) of each component; the rest are floats,
 * which must be finite. */
/* Columns that hold no float to check: the slot and agent row, and those
 * their module flags (COLUMN_BITS: integers, bit patterns, statistics). */
static int column_is_int(const world_t* w, int k, int c)
{
    if (c == 0 || c == COMP_ROW) return 1;
    const uint8_t* flags = w->comp_module[k]->column_flags;
    return flags != NULL && (flags[c] & COLUMN_BITS) != 0;
}

static int agent_column_is_int(int c)
{
    return c == AC_SLOT || c == AC_GROUP || c == AC_USER_LO || c == AC_USER_HI;
}

static int check_floats(reader_t* rd, const world_t* w)
{
    rd->section = "AGNT";
    const table_t* t = &w->agents;
    for (int c = 0; c < t->column_count; ++c) {
        if (t->elem_size[c] == 0 || agent_column_is_int(c)) continue;
        const float* v = (const float*)t->columns[c];
        for (int32_t r = 0; r < t->count; ++r)
            if (!isfinite(v[r]))
                return r_fail(rd, "agent row %d (slot %u), column %d is not finite", (int)r,
                              table_slots(t)[r], c);
    }
    rd->section = "COMP";
    for (int k = 0; k < COMP_COUNT_; ++k) {
        const table_t* ct = &w->comps[k].table;
        for (int c = 0; c < ct->column_count; ++c) {
            if (column_is_int(w, k, c)) continue;
            const float* v = (const float*)ct->columns[c];
            for (int32_t r = 0; r < ct->count; ++r)
                if (!isfinite(v[r]))
                    return r_fail(rd, "component %d row %d (slot %u), column %d is not finite", k,
                                  (int)r, table_slots(ct)[r], c);
        }
    }
    return 1;
}

/* State columns that no definition carries. */
static int check_state(reader_t* rd, const world_t* w)
{
    rd->section = "COMP";
    const table_t* ds = &w->comps[COMP_DSEEK].table;
    for (int32_t r = 0; r < ds->count; ++r) {
        int32_t route = COMP_I(w, COMP_DSEEK, DS_ROUTE)[r], index = COMP_I(w, COMP_DSEEK, DS_INDEX)[r];
        int32_t len = route >= 0 && route < routes_of(w)->route_count ? routes_of(w)->routes[route][1] : 0;
        if (index < 0 || index > len)
            return r_fail(rd, "directed-seek row %d: waypoint index %d is outside [0, %d]", (int)r,
                          (int)index, (int)len);
    }
    const table_t* pl = &w->comps[COMP_PLANNER].table;
    if (pl->count == 0) return 1;
    if (!planner_data(w) || !planner_data(w)->has_table)
        return r_fail(rd, "%d planner agents but no trim table", (int)pl->count);
    const trim_table_t* t = &planner_data(w)->table;
    const int k = COMP_PLANNER;
    for (int32_t r = 0; r < pl->count; ++r) {
        int32_t kk = COMP_I(w, k, PL_K)[r], len = COMP_I(w, k, PL_LEN)[r];
        int32_t ci = COMP_I(w, k, PL_CI)[r], cf = COMP_I(w, k, PL_CF)[r], next = COMP_I(w, k, PL_NEXT)[r];
        int32_t now = COMP_I(w, k, PL_PLAN_NOW)[r], overlap = COMP_I(w, k, PL_OVERLAP)[r];
        int32_t hits = COMP_I(w, k, PL_COLLISIONS)[r];
        uint32_t offset = COMP_U(w, k, PL_PERM_OFFSET)[r];
        if (len < 1 || len > t->spec.substeps || kk < 0 || kk > len)
            return r_fail(rd, "planner row %d: substeps %d of %d (the table has %d per interval)",
                          (int)r, (int)kk, (int)len, (int)t->spec.substeps);
        if (ci < 0 || ci >= t->controls || cf < 0 || cf >= t->controls || next < -1 ||
            next >= t->controls || offset >= (uint32_t)t->controls)
            return r_fail(rd, "planner row %d: controls %d -> %d, next %d, offset %u outside the "
                              "table's %d", (int)r, (int)ci, (int)cf, (int)next, offset,
                          (int)t->controls);
        if ((now != 0 && now != 1) || (overlap != 0 && overlap != 1) || hits < 0)
            return r_fail(rd, "planner row %d: flags %d, %d or collision count %d out of range",
                          (int)r, (int)now, (int)overlap, (int)hits);
    }
    return 1;
}

/* Every agent as a definition, through shoal_agent_add's validation, and
 * its components exactly those its definition needs. */
static int check_agents(reader_t* rd, world_t* w)
{
    rd->section = "AGNT";
    for (int32_t r = 0; r < w->agents.count; ++r) {
        uint32_t s = table_slots(&w->agents)[r];
        shoal_agent_t id = {s + 1, w->tag, w->slots[s].generation};
        shoal_agent_def_t def;
        if (shoal_agent_get_def(w, id, &def) != SHOAL_OK ||
            agent_validate_def(w, &def, "agent") != SHOAL_OK)
            return r_fail(rd, "agent row %d (slot %u): %s", (int)r, s, w->error);
        for (int k = 0; k < COMP_COUNT_; ++k)
            if (agent_needs_component(w, &def, k) != (component_row(&w->comps[k], s) >= 0))
                return r_fail(rd, "agent row %d (slot %u): component %d %s", (int)r, s, k,
                              agent_needs_component(w, &def, k) ? "is missing" : "is not used by its weights");
    }
    return 1;
}

/* ---- loading ---------------------------------------------------------------- */


static shoal_status_t load(const uint8_t* p, size_t size, const char* source, const shoal_world_def_t* def,
                           shoal_world_t** out, shoal_error_t* err)
{
    /* The frame of the file, all judged before anything is built. */
    size_t have = size < sizeof snap_magic ? size : sizeof snap_magic;
    if (size == 0 || memcmp(p, snap_magic, have) != 0)
        return error_set(err, SHOAL_ERR_PARSE, "%s: not a shoal snapshot (bad magic)", source);
    const size_t min = SNAP_HEADER_BYTES + SNAP_CHECKSUM_BYTES;
    if (size < min)
        return error_set(err, SHOAL_ERR_PARSE, "%s: truncated: %zu bytes, a snapshot has at least %zu",
                       source, size, min);
    uint32_t version = get_u32(p + 8);
    if (version != 1 && version != SHOAL_SNAPSHOT_VERSION)
        return error_set(err, SHOAL_ERR_PARSE, "%s: snapshot version %u; this library reads versions 1 and %d",
                       source, version, SHOAL_SNAPSHOT_VERSION);
    uint32_t sections = version == 1 ? SNAP_SECTION_COUNT_V1 : SNAP_SECTION_COUNT;
    uint64_t declared = get_u64(p + 16);
    if (declared != size)
        return error_set(err, SHOAL_ERR_PARSE, "%s: %s: the header says %llu bytes, there are %zu", source,
                       declared > size ? "truncated" : "trailing bytes", (unsigned long long)declared,
                       size);
    uint64_t stored = get_u64(p + size - SNAP_CHECKSUM_BYTES);
    uint64_t computed = fnv1a(FNV1A_OFFSET, p, size - SNAP_CHECKSUM_BYTES);
    if (stored != computed)
        return error_set(err, SHOAL_ERR_PARSE,
                       "%s: checksum mismatch (stored %016llx, computed %016llx): the file is damaged",
                       source, (unsigned long long)stored, (unsigned long long)computed);
    if (get_u32(p + 12) != SNAP_HEADER_BYTES || get_u32(p + 24) != sections || get_u32(p + 28) != 0)
        return error_set(err, SHOAL_ERR_PARSE,
                       "%s: header: %u header bytes, %u sections, flags %u; expected %u, %u and 0",
                       source, get_u32(p + 12), get_u32(p + 24), get_u32(p + 28), SNAP_HEADER_BYTES,
                       sections);

    reader_t rd;
    memset(&rd, 0, sizeof rd);
    rd.p = p;
    rd.off = SNAP_HEADER_BYTES;
    shoal_world_def_t user = def ? *def : shoal_world_default_def();
    world_head_t head;
    if (!begin_section(&rd, size, SNAP_WORLD, "WRLD") || !read_world(&rd, &user, &head))
        return error_set(err, SHOAL_ERR_PARSE, "%s: %s", source, rd.msg);
    shoal_world_t* w = NULL;
    shoal_error_t cerr;
    shoal_status_t st = shoal_world_create(&head.def, &w, &cerr);
    if (st != SHOAL_OK)
        return error_set(err, st, "%s: %s", source, cerr.message);
    world_tag_adopt(w, (uint16_t)head.tag); /* or a fresh tag when a live world holds it */
    w->step_count = head.step_count;
    w->time = head.time;
    if (head.has_grid) {
        w->module_data[MOD_NEIGHBORS] = (grid_t*)mem_calloc(&w->alloc, sizeof(grid_t));
        if (!grid_data(w)) r_fail(&rd, "out of memory");
        /* the reorder phase follows from the step count restored above */
    }
    int ok = !rd.failed && begin_section(&rd, size, SNAP_SLOTS, "SLOT") && read_slots(&rd, w) &&
             begin_section(&rd, size, SNAP_AGENTS, "AGNT") && read_agents(&rd, w);
    for (int k = 0; ok && k < COMP_COUNT_; ++k)
        ok = begin_section(&rd, size, SNAP_COMPONENT, "COMP") && read_component(&rd, w, k);
    ok = ok && begin_section(&rd, size, SNAP_OBSTACLES, "OBST") && read_obstacles(&rd, w) &&
         begin_section(&rd, size, SNAP_ROUTES, "ROUT") && read_routes(&rd, w) &&
         begin_section(&rd, size, SNAP_GROUND, "GRND") && read_ground(&rd, w) &&
         begin_section(&rd, size, SNAP_PLANNER, "PLAN") && read_planner(&rd, w) &&
         begin_section(&rd, size, SNAP_SYSTEMS, "SYST") && read_systems(&rd, w);
    if (version >= 2) ok = ok && begin_section(&rd, size, SNAP_USER, "USER") && read_user(&rd, w);
    if (ok && rd.off != size - SNAP_CHECKSUM_BYTES) {
        ok = r_fail(&rd, "%zu bytes between the last section and the checksum",
                    size - SNAP_CHECKSUM_BYTES - rd.off);
    }
    if (ok) world_retag_stored_handles(w, (uint16_t)head.tag);
    ok = ok && check_floats(&rd, w) && check_state(&rd, w) && check_agents(&rd, w);
    if (!ok) {
        shoal_status_t status = strstr(rd.msg, "out of memory") ? SHOAL_ERR_OUT_OF_MEMORY : SHOAL_ERR_PARSE;
        shoal_world_destroy(w);
        return error_set(err, status, "%s: %s", source, rd.msg);
    }
    w->error[0] = '\0';
    *out = w;
    return SHOAL_OK;
}

shoal_status_t shoal_world_load_snapshot_memory(const void* data, size_t size, const shoal_world_def_t* def,
                                                shoal_world_t** out_world, shoal_error_t* err)
{
    error_set(err, SHOAL_OK, "%s", "");
    if (!out_world)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot_memory: out_world is NULL");
    *out_world = NULL;
    if (!data && size > 0)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot_memory: data is NULL");
    return load((const uint8_t*)data, size, "snapshot", def, out_world, err);
}

shoal_status_t shoal_world_load_snapshot(const char* path, const shoal_world_def_t* def,
                                         shoal_world_t** out_world, shoal_error_t* err)
{
    error_set(err, SHOAL_OK, "%s", "");
    if (!out_world)
        return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot: out_world is NULL");
    *out_world = NULL;
    if (!path) return error_set(err, SHOAL_ERR_INVALID_ARGUMENT, "world_load_snapshot: path is NULL");
    /* A regular file of at most 4 GiB, opened without blocking
     * (io/file_read.h). */
    void* data = NULL;
    size_t size = 0;
    char msg[256];
    file_read_error_t e = file_read_all(path, FILE_LIMIT_SNAPSHOT, &data, &size, msg, sizeof msg);
    if (e != FILE_READ_OK)
        return error_set(err, e == FILE_READ_TOO_LARGE   ? SHOAL_ERR_CAPACITY
                              : e == FILE_READ_NO_MEMORY ? SHOAL_ERR_OUT_OF_MEMORY
                                                         : SHOAL_ERR_IO,
                         "%s: %s", path, msg);
    shoal_status_t st = load((const uint8_t*)data, size, path, def, out_world, err);
    free(data);
    return st;
}
