/* Fuzz target: sequences of calls on one small world, through the extension
 * API (shoal/extend.h) and the calls around it. The input is decoded as a
 * list of operations, each an opcode byte and its arguments: add and remove
 * agents (one at a time and in bulk), user components, serial and parallel
 * user systems (which read and write columns, add and remove agents from
 * inside the step and try between-steps calls there), columns by name (bad
 * names included), walls (zig-zags of up to FUZZ_MAX_ZIGZAG points too),
 * obstacles, steps with any dt, snapshots saved to memory and loaded,
 * teleports, targets, row handles and the state hash.
 *
 * After every call: a call that fails gives a message and changes nothing
 * (docs/errors.md: the state hash, the counts of agents, walls, wall
 * segments, obstacles, components and systems, and the structure version
 * are as before); a step with a dt the header allows succeeds, one it does
 * not is refused; a saved world loads again with the same state hash; the
 * world stays usable (a last step at 1/60 s succeeds).
 *
 * Limits, so that one input stays fast: one thread, at most FUZZ_MAX_OPS
 * operations and FUZZ_MAX_STEPS steps, at most FUZZ_MAX_AGENTS agents
 * (further adds are skipped), at most FUZZ_MAX_WALL_POINTS wall points in
 * all, and at most fuzz_max_wall_segments() (fuzz.h: 2,100 when fuzzing,
 * every size in the replay ctests) segments of walls' grids built in all: a
 * step after a change of the walls (or a load) rebuilds the grid, so a step
 * that would pass that budget is skipped. */
#include <math.h>

#include "shoal/shoal.h"
#include "shoal/snapshot.h"
#include "tests/fuzz/fuzz.h"

enum {
    FUZZ_MAX_OPS = 64,
    FUZZ_MAX_STEPS = 12,
    FUZZ_MAX_AGENTS = 64,
    FUZZ_MAX_HANDLES = 256,
    FUZZ_MAX_WALL_POINTS = 8192,
    FUZZ_MAX_ZIGZAG = 4200,
    FUZZ_MAX_BULK = 12
};

/* ---- reading the input ---------------------------------------------------- */

typedef struct reader_t {
    const uint8_t* data;
    size_t size, at;
} reader_t;

static uint8_t next_byte(reader_t* r) { return r->at < r->size ? r->data[r->at++] : 0; }

static int done(const reader_t* r) { return r->at >= r->size; }

/* Values at and around every limit the library documents, and NaN and the
 * infinities; a byte of 0xf0 or more is followed by 4 raw bytes. */
static float next_float(reader_t* r)
{
    static const float table[] = {0.0f,     -0.0f,  1.0f,   -1.0f,   0.5f,     1.0f / 60.0f, 1e-6f, 9.9e-7f,
                                  1e-30f,   1e-40f, 1e-45f, 1000.0f, 1000.5f,  1e5f,         1e9f,  1.1e9f,
                                  1e18f,    2e18f,  3e38f,  NAN,     INFINITY, -INFINITY,    10.0f, 5000.0f,
                                  -5000.0f, 100.0f, 0.3f,   2.0f,    -10.0f,   0.05f,        3.0f,  0.2f};
    uint8_t b = next_byte(r);
    if (b >= 0xf0) {
        uint8_t raw[4] = {next_byte(r), next_byte(r), next_byte(r), next_byte(r)};
        float f;
        memcpy(&f, raw, sizeof f);
        return f;
    }
    return table[b % (sizeof table / sizeof table[0])];
}

/* Small positions: most of the time within 16 m, so that agents meet. */
static float next_coord(reader_t* r)
{
    uint8_t b = next_byte(r);
    if (b < 0xc0) return (float)(b % 32) - 16.0f + (float)(b / 32) * 0.25f;
    return next_float(r);
}

/* ---- the run of calls -------------------------------------------------------- */

typedef struct fuzz_t {
    shoal_world_t* w;
    int32_t dims;
    shoal_agent_t handles[FUZZ_MAX_HANDLES]; /* every handle given out, live or not */
    int32_t handle_count;
    int32_t wall_points;
    int32_t steps;
    int32_t systems_added; /* user systems added (names sys3, sys4, ...) */
    int32_t walls_changed; /* the next step rebuilds the walls' grid */
    int32_t grid_segments; /* segments of the grids built so far */
} fuzz_t;

static fuzz_t F;

static void keep_handle(shoal_agent_t id)
{
    if (F.handle_count < FUZZ_MAX_HANDLES) F.handles[F.handle_count++] = id;
}

/* A handle: one given out before, the null handle, or a forged one. */
static shoal_agent_t pick_handle(uint8_t b)
{
    shoal_agent_t h = {0, 0, 0};
    if (b >= 0xf8) {
        h.index1 = (uint32_t)(b & 7) + 1;
        h.world0 = (uint16_t)(b * 7);
        h.generation = (uint16_t)(b & 3);
        return h;
    }
    if (b >= 0xf0 || F.handle_count == 0) return h;
    return F.handles[b % F.handle_count];
}

/* What a failed call must leave as it was. */
typedef struct state_t {
    uint64_t hash, version;
    int32_t agents, walls, segments, obstacles, components, systems;
} state_t;

static state_t state_of(const shoal_world_t* w)
{
    state_t s;
    s.hash = shoal_world_state_hash(w);
    s.version = shoal_world_structure_version(w);
    s.agents = shoal_world_agent_count(w);
    s.walls = shoal_world_wall_count(w);
    s.segments = 0;
    FUZZ_CHECK(shoal_world_wall_segments(w, NULL, 0, &s.segments) == SHOAL_OK, "wall_segments: %s",
               shoal_world_last_error(w));
    s.obstacles = shoal_world_obstacle_count(w);
    s.components = shoal_world_component_count(w);
    s.systems = shoal_world_system_count(w);
    return s;
}

static void check_unchanged(const char* call, shoal_status_t st, const state_t* before)
{
    if (st == SHOAL_OK) return;
    const char* msg = shoal_world_last_error(F.w);
    FUZZ_CHECK(msg != NULL && msg[0] != '\0', "%s failed (%s) without a message", call,
               shoal_status_string(st));
    state_t after = state_of(F.w);
    FUZZ_CHECK(after.hash == before->hash, "%s failed (%s: %s) and changed the state hash", call,
               shoal_status_string(st), msg);
    FUZZ_CHECK(after.version == before->version, "%s failed and changed the structure version", call);
    FUZZ_CHECK(after.agents == before->agents && after.walls == before->walls &&
                   after.segments == before->segments && after.obstacles == before->obstacles &&
                   after.components == before->components && after.systems == before->systems,
               "%s failed (%s) and changed a count", call, msg);
}

/* Run one call; if it fails, check that it changed nothing. Built with
 * -DFUZZ_TRACE, every call and its status are printed (to write seeds). */
#ifdef FUZZ_TRACE
#define TRACE_CALL(name, st)                                                                                 \
    fprintf(stderr, "%s: %s %s\n", name, shoal_status_string(st), st ? shoal_world_last_error(F.w) : "")
#else
#define TRACE_CALL(name, st) ((void)0)
#endif
#define CALL(name, expr)                                                                                     \
    do {                                                                                                     \
        state_t before_ = state_of(F.w);                                                                     \
        shoal_status_t st_ = (expr);                                                                         \
        TRACE_CALL(name, st_);                                                                               \
        check_unchanged(name, st_, &before_);                                                                \
        last = st_;                                                                                          \
        (void)last;                                                                                          \
    } while (0)

/* ---- names ------------------------------------------------------------------ */

static const char* const COLUMN_NAMES[] = {"position.x",
                                           "position.y",
                                           "position.z",
                                           "velocity.x",
                                           "velocity.y",
                                           "velocity.z",
                                           "heading",
                                           "orientation.w",
                                           "orientation.z",
                                           "angular_velocity.z",
                                           "target.x",
                                           "threat.y",
                                           "max_speed",
                                           "radius",
                                           "group",
                                           "desired.x",
                                           "desired.y",
                                           "desired.z",
                                           "u0",
                                           "u1",
                                           "u2",
                                           "u.vec",
                                           "health",
                                           "",
                                           "position",
                                           "position.x ",
                                           "a_name_of_exactly_31_characters",
                                           "a_name_of_exactly_32_characters_",
                                           "bad name",
                                           "b\xff",
                                           NULL,
                                           "u0\n"};
#define NAME_COUNT ((int)(sizeof COLUMN_NAMES / sizeof COLUMN_NAMES[0]))

static const char* const COMPONENT_FILTERS[] = {NULL,    "neighbors", "wander",  "pursuit", "follow", "avoid",
                                                "dseek", "ground",    "planner", "crowd",   "",       "u0"};

/* ---- systems ----------------------------------------------------------------- */

/* What a serial system does, chosen when it is added. */
enum { SYS_READ, SYS_ADD, SYS_REMOVE, SYS_BUSY, SYS_WRITE, SYS_MODES };
static int sys_modes[SYS_MODES] = {SYS_READ, SYS_ADD, SYS_REMOVE, SYS_BUSY, SYS_WRITE};

static shoal_status_t serial_system(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    int mode = *(const int*)ctx;
    int32_t n = shoal_world_agent_count(w);
    shoal_column_t c;
    switch (mode) {
    case SYS_READ:
        if (shoal_world_column(w, "position.x", &c) == SHOAL_OK) {
            FUZZ_CHECK(c.count == n && c.width == 1 && c.type == SHOAL_COLUMN_F32, "position.x");
            volatile float sum = 0.0f;
            for (int32_t i = 0; i < c.count; ++i) sum += ((const float*)c.data)[i];
            (void)sum;
        }
        break;
    case SYS_ADD:
        if (n < FUZZ_MAX_AGENTS) {
            shoal_agent_def_t d = shoal_agent_default_def();
            d.position[0] = (float)(F.handle_count % 7);
            d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
            d.contacts = 1;
            shoal_agent_t id;
            FUZZ_CHECK(shoal_agent_add(w, &d, &id) == SHOAL_OK, "add inside a step: %s",
                       shoal_world_last_error(w));
            keep_handle(id);
        }
        break;
    case SYS_REMOVE:
        if (F.handle_count > 0) (void)shoal_agent_remove(w, F.handles[F.steps % F.handle_count]);
        break;
    case SYS_BUSY: {
        const float pts[4] = {0, 0, 1, 1};
        FUZZ_CHECK(shoal_world_add_wall(w, pts, 2, 0, NULL) != SHOAL_OK || F.dims == 3,
                   "add_wall inside a step");
        shoal_component_def_t cd = {"late", SHOAL_COLUMN_F32, 1, NULL};
        FUZZ_CHECK(shoal_world_add_component(w, &cd) == SHOAL_ERR_BUSY, "add_component inside a step");
        size_t size = 0;
        FUZZ_CHECK(shoal_world_save_snapshot_memory(w, NULL, 0, &size) == SHOAL_ERR_BUSY,
                   "save_snapshot inside a step");
        FUZZ_CHECK(shoal_world_step(w, 0.01f) != SHOAL_OK, "a step inside a step");
        shoal_agent_def_t d = shoal_agent_default_def();
        FUZZ_CHECK(shoal_agents_add(w, &d, NULL, 1, NULL) == SHOAL_ERR_BUSY, "agents_add inside a step");
        break;
    }
    case SYS_WRITE:
        for (int k = 0; k < 3; ++k) {
            if (shoal_world_column(w, COLUMN_NAMES[18 + k], &c) != SHOAL_OK || !c.writable) continue;
            FUZZ_CHECK(c.count == n && c.width >= 1 && c.width <= 16, "component u%d", k);
            size_t bytes = (size_t)c.count * (size_t)c.width * (c.type == SHOAL_COLUMN_U64 ? 8 : 4);
            for (size_t i = 0; i < bytes; ++i) ((uint8_t*)c.data)[i] = (uint8_t)(i * 31 + F.steps);
        }
        break;
    default: break;
    }
    return SHOAL_OK;
}

/* What a parallel system does. */
enum { PAR_WRITE, PAR_BAD_NAME, PAR_ROWS, PAR_MODES };
static int par_modes[PAR_MODES] = {PAR_WRITE, PAR_BAD_NAME, PAR_ROWS};

static void parallel_system(shoal_world_t* w, const shoal_block_t* b, void* ctx)
{
    int mode = *(const int*)ctx;
    int32_t n = shoal_world_agent_count(w);
    FUZZ_CHECK(b->count >= 0 && (b->rows != NULL || b->first + b->count <= n), "block %d+%d of %d",
               (int)b->first, (int)b->count, (int)n);
    shoal_column_t pos, user;
    if (mode == PAR_BAD_NAME) {
        FUZZ_CHECK(shoal_world_column(w, "no.such.column", &pos) == SHOAL_ERR_NOT_FOUND, "bad name");
        return;
    }
    if (shoal_world_column(w, "position.x", &pos) != SHOAL_OK) return;
    int have_user = shoal_world_column(w, "u0", &user) == SHOAL_OK && user.writable;
    for (int32_t i = 0; i < b->count; ++i) {
        int32_t row = b->rows ? b->rows[i] : b->first + i;
        FUZZ_CHECK(row >= 0 && row < n, "row %d of %d", (int)row, (int)n);
        if (mode == PAR_ROWS) {
            shoal_agent_t id;
            FUZZ_CHECK(shoal_world_row_handles(w, row, 1, &id) == SHOAL_OK, "row_handles");
            FUZZ_CHECK(shoal_agent_row(w, id) == row, "agent_row of row %d", (int)row);
        } else if (have_user) {
            size_t elem = user.type == SHOAL_COLUMN_U64 ? 8 : 4;
            uint8_t* at = (uint8_t*)user.data + (size_t)row * (size_t)user.width * elem;
            float x = ((const float*)pos.data)[row];
            memcpy(at, &x, sizeof x); /* any bits: the column is the user's */
        }
    }
}

/* ---- operations -------------------------------------------------------------- */

static void op_add_agent(reader_t* r)
{
    uint8_t flags = next_byte(r);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.position[0] = next_coord(r);
    d.position[1] = next_coord(r);
    if (F.dims == 3) d.position[2] = next_coord(r);
    d.vehicle.radius = (flags & 0x40) ? next_float(r) : 0.3f;
    d.vehicle.max_speed = (flags & 0x80) ? next_float(r) : 2.0f;
    d.target[0] = next_coord(r);
    d.target[1] = next_coord(r);
    d.contacts = flags & 1;
    if (flags & 2) {
        d.crowd = shoal_crowd_default();
        d.crowd.enabled = 1;
        if (flags & 0x20) d.crowd.time_horizon_walls = next_float(r);
        if (flags & 0x20) d.crowd.time_horizon = next_float(r);
    }
    d.weights[SHOAL_BEHAVIOR_SEEK] = (flags & 4) ? 1.0f : 0.0f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = (flags & 8) ? 1.0f : 0.0f;
    d.weights[SHOAL_BEHAVIOR_WANDER] = (flags & 0x10) ? 0.5f : 0.0f;
    if (shoal_world_agent_count(F.w) >= FUZZ_MAX_AGENTS) return;
    shoal_agent_t id = {0, 0, 0};
    shoal_status_t last;
    CALL("agent_add", shoal_agent_add(F.w, &d, &id));
    if (last == SHOAL_OK) keep_handle(id);
}

static void op_agents_add(reader_t* r)
{
    uint8_t b = next_byte(r);
    int32_t count = (int32_t)(b % (FUZZ_MAX_BULK + 2)) - 1; /* -1 .. FUZZ_MAX_BULK */
    if (count > 0 && shoal_world_agent_count(F.w) + count > FUZZ_MAX_AGENTS) return;
    float pos[FUZZ_MAX_BULK * 3], vel[FUZZ_MAX_BULK * 3];
    uint64_t values[FUZZ_MAX_BULK];
    for (int i = 0; i < FUZZ_MAX_BULK * 3; ++i) {
        pos[i] = (float)((i * 7) % 13) - 6.0f;
        vel[i] = 0.0f;
    }
    for (int i = 0; i < FUZZ_MAX_BULK; ++i) values[i] = (uint64_t)i;
    if (b & 0x80) pos[next_byte(r) % (FUZZ_MAX_BULK * 3)] = next_float(r);
    if (b & 0x40) vel[next_byte(r) % (FUZZ_MAX_BULK * 3)] = next_float(r);
    shoal_agent_arrays_t a;
    memset(&a, 0, sizeof a);
    a.positions = pos;
    a.velocities = (b & 0x20) ? vel : NULL;
    a.user_values = values;
    shoal_agent_def_t d = shoal_agent_default_def();
    d.contacts = 1;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    shoal_agent_t ids[FUZZ_MAX_BULK];
    shoal_status_t last;
    CALL("agents_add", shoal_agents_add(F.w, &d, &a, count, (b & 0x10) ? NULL : ids));
    if (last == SHOAL_OK && !(b & 0x10))
        for (int32_t i = 0; i < count; ++i) keep_handle(ids[i]);
}

static int32_t pick_handles(reader_t* r, shoal_agent_t* ids)
{
    int32_t count = (int32_t)(next_byte(r) % (FUZZ_MAX_BULK + 1));
    for (int32_t i = 0; i < count; ++i) ids[i] = pick_handle(next_byte(r));
    return count;
}

static void op_remove(reader_t* r)
{
    shoal_status_t last;
    uint8_t b = next_byte(r);
    if (b & 1) {
        CALL("agent_remove", shoal_agent_remove(F.w, pick_handle(next_byte(r))));
        return;
    }
    shoal_agent_t ids[FUZZ_MAX_BULK];
    int32_t count = pick_handles(r, ids);
    CALL("agents_remove", shoal_agents_remove(F.w, ids, (b & 2) ? -count : count));
}

static void op_add_component(reader_t* r)
{
    uint8_t b = next_byte(r);
    shoal_component_def_t c;
    c.name = COLUMN_NAMES[next_byte(r) % NAME_COUNT];
    c.type = (shoal_column_type_t)((b & 7) % 6); /* 0 and 5 are refused */
    c.width = (int32_t)(next_byte(r) % 18);
    uint64_t dflt[16];
    for (int i = 0; i < 16; ++i) dflt[i] = 0x3f80000000000000ull * (uint64_t)(i & 1) + (uint64_t)i;
    c.default_value = (b & 0x80) ? dflt : NULL;
    shoal_status_t last;
    CALL("add_component", shoal_world_add_component(F.w, (b & 0x40) && (b & 0x20) ? NULL : &c));
}

static void op_column(reader_t* r)
{
    uint8_t b = next_byte(r);
    const char* name = COLUMN_NAMES[b % NAME_COUNT];
    shoal_column_t c;
    shoal_status_t last;
    CALL("column", shoal_world_column(F.w, name, (next_byte(r) & 0x80) ? NULL : &c));
    if (last != SHOAL_OK) return;
    FUZZ_CHECK(c.count == shoal_world_agent_count(F.w), "column %s: %d rows", name, (int)c.count);
    FUZZ_CHECK(c.width >= 1 && c.width <= 16, "column %s: width %d", name, (int)c.width);
    FUZZ_CHECK(c.type >= SHOAL_COLUMN_F32 && c.type <= SHOAL_COLUMN_U64, "column %s: type", name);
    FUZZ_CHECK(c.version == shoal_world_structure_version(F.w), "column %s: version", name);
    FUZZ_CHECK(c.count == 0 || c.data != NULL, "column %s: no data", name);
    FUZZ_CHECK(((uintptr_t)c.data & 63) == 0, "column %s: not 64-byte aligned", name);
    size_t bytes = (size_t)c.count * (size_t)c.width * (c.type == SHOAL_COLUMN_U64 ? 8 : 4);
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < bytes; ++i) sum ^= ((const uint8_t*)c.data)[i];
    (void)sum;
    /* Write a user component (any bits; desired.* only from the decide stage). */
    if (c.writable && strncmp(name, "desired", 7) != 0 && bytes > 0) {
        uint8_t v = next_byte(r);
        size_t at = (size_t)next_byte(r) % bytes;
        ((uint8_t*)c.data)[at] = v;
    }
}

static void op_add_system(reader_t* r)
{
    uint8_t b = next_byte(r);
    uint8_t s = next_byte(r);
    shoal_stage_t stage = (shoal_stage_t)((int)(s % 8) - 1); /* -1 .. 6 */
    char name[40];
    const char* nm = name;
    switch (next_byte(r) % 5) {
    case 0: nm = NULL; break;
    case 1: nm = ""; break;
    case 2: snprintf(name, sizeof name, "%s", "a_system_name_of_thirty_two_byte"); break;
    case 3: snprintf(name, sizeof name, "sys%d", (int)(s % 3)); break; /* maybe taken */
    default: snprintf(name, sizeof name, "sys%d", (int)F.systems_added + 3); break;
    }
    shoal_status_t last;
    if (b & 1) {
        void* ctx = &par_modes[(b >> 1) % PAR_MODES];
        const char* comp =
            COMPONENT_FILTERS[(b >> 3) % (sizeof COMPONENT_FILTERS / sizeof COMPONENT_FILTERS[0])];
        int32_t min_block = (b & 0x80) ? -1 : (int32_t)(next_byte(r) % 8);
        CALL("add_parallel_system",
             shoal_world_add_parallel_system(F.w, nm, stage, comp, min_block,
                                             (s & 0x80) ? NULL : parallel_system, ctx));
    } else {
        void* ctx = &sys_modes[(b >> 1) % SYS_MODES];
        CALL("add_system", shoal_world_add_system(F.w, nm, stage, (s & 0x80) ? NULL : serial_system, ctx));
    }
    if (last == SHOAL_OK) F.systems_added++;
}

static void op_system_enabled(reader_t* r)
{
    char name[16];
    uint8_t b = next_byte(r);
    const char* nm = name;
    if (b & 0x40)
        nm = (b & 0x20) ? NULL : "contacts";
    else
        snprintf(name, sizeof name, "sys%d", (int)(b % 8));
    shoal_status_t last;
    CALL("set_system_enabled", shoal_world_set_system_enabled(F.w, nm, b & 1));
}

static void op_add_wall(reader_t* r)
{
    uint8_t b = next_byte(r);
    int32_t closed = (int32_t)((b & 0x1f) % 3); /* 2 is refused */
    int32_t count;
    float* pts;
    if (b & 0x80) {
        /* A zig-zag between two corners of a box of side `span`, every
         * segment across the whole box: the walls' grid's worst case (4,100
         * points across 10 km wrapped its 32-bit counts). Counts grow as the
         * square of the byte, so that most zig-zags stay short. */
        uint8_t n = next_byte(r);
        count = 2 + (int32_t)n * n / 15;
        if (count > FUZZ_MAX_ZIGZAG) count = FUZZ_MAX_ZIGZAG;
        float span = next_float(r);
        pts = malloc((size_t)count * 2 * sizeof *pts);
        if (!pts) return;
        for (int32_t i = 0; i < count; ++i) {
            pts[2 * i] = (i & 1) ? span / 2 : -span / 2;
            pts[2 * i + 1] = (i & 1) ? span / 2 - span * 1e-7f * (float)i : -span / 2;
        }
    } else {
        count = (int32_t)(next_byte(r) % 24);
        pts = malloc(((size_t)count + 1) * 2 * sizeof *pts);
        if (!pts) return;
        for (int32_t i = 0; i < 2 * count; ++i) pts[i] = next_coord(r);
    }
    if (F.wall_points + count > FUZZ_MAX_WALL_POINTS) {
        free(pts);
        return;
    }
    int32_t id = 12345;
    shoal_status_t last;
    CALL("add_wall", shoal_world_add_wall(F.w, (b & 0x40) && count == 0 ? NULL : pts,
                                          (b & 0x20) ? -count : count, closed, &id));
    FUZZ_CHECK(last == SHOAL_OK ? id >= 0 : id == -1, "add_wall: id %d", (int)id);
    if (last == SHOAL_OK) F.wall_points += count;
    if (last == SHOAL_OK) F.walls_changed = 1;
    free(pts);
}

static void op_remove_wall(reader_t* r)
{
    int32_t id = (int32_t)next_byte(r) % 12 - 2;
    shoal_status_t last;
    CALL("remove_wall", shoal_world_remove_wall(F.w, id));
    if (last == SHOAL_OK) F.walls_changed = 1;
}

static void op_obstacle(reader_t* r)
{
    uint8_t b = next_byte(r);
    shoal_status_t last;
    if (b & 1) {
        int32_t id = (int32_t)(b >> 1) % 10 - 1;
        CALL("remove_obstacle", shoal_world_remove_obstacle(F.w, id));
        return;
    }
    float c[3] = {next_coord(r), next_coord(r), next_coord(r)};
    float radius = next_float(r);
    int32_t id;
    if (b & 2) {
        float v[3] = {next_float(r), next_float(r), 0.0f};
        CALL("add_moving_obstacle", shoal_world_add_moving_obstacle(F.w, c, v, radius, &id));
    } else {
        CALL("add_obstacle", shoal_world_add_obstacle(F.w, c, radius, &id));
    }
}

/* shoal_world_step's contract: finite, >= 1e-6 s (the shortest step) and
 * <= 1000 s. */
static int dt_allowed(float dt) { return isfinite(dt) && dt >= 1e-6f && dt <= 1000.0f; }

static void op_step(reader_t* r)
{
    float dt = next_float(r);
    if (F.steps >= FUZZ_MAX_STEPS) return;
    if (F.walls_changed && dt_allowed(dt)) {
        int32_t segments = 0;
        (void)shoal_world_wall_segments(F.w, NULL, 0, &segments);
        if (F.grid_segments + segments > fuzz_max_wall_segments()) return;
        F.grid_segments += segments;
        F.walls_changed = 0;
    }
    F.steps++;
    uint64_t count = shoal_world_step_count(F.w);
    shoal_status_t last;
    CALL("step", shoal_world_step(F.w, dt));
    if (dt_allowed(dt)) {
        FUZZ_CHECK(last == SHOAL_OK, "step of %g s: %s", (double)dt, shoal_world_last_error(F.w));
        FUZZ_CHECK(shoal_world_step_count(F.w) == count + 1, "step count");
    } else {
        FUZZ_CHECK(last != SHOAL_OK, "a step of %g s was taken", (double)dt);
    }
}

/* Save to memory; load the bytes into a second world (a tag of its own
 * while the first lives) or, replacing the first, into its place (handles
 * kept). Either way the state hash of the loaded world is the saved one's. */
static void op_snapshot(reader_t* r)
{
    uint8_t b = next_byte(r);
    size_t size = 0;
    shoal_status_t last;
    CALL("save_snapshot_memory (measure)", shoal_world_save_snapshot_memory(F.w, NULL, 0, &size));
    FUZZ_CHECK(last == SHOAL_OK && size > 0, "measure: %s", shoal_world_last_error(F.w));
    uint8_t* bytes = malloc(size);
    if (!bytes) return;
    size_t written = 0;
    if (b & 1) {
        /* Too small a buffer: CAPACITY, nothing written. */
        CALL("save_snapshot_memory (short)",
             shoal_world_save_snapshot_memory(F.w, bytes, size - 1, &written));
        FUZZ_CHECK(last == SHOAL_ERR_CAPACITY, "a short buffer gave %s", shoal_status_string(last));
    }
    CALL("save_snapshot_memory", shoal_world_save_snapshot_memory(F.w, bytes, size, &written));
    FUZZ_CHECK(last == SHOAL_OK && written == size, "save: %s", shoal_world_last_error(F.w));
    uint64_t hash = shoal_world_state_hash(F.w);
    int32_t agents = shoal_world_agent_count(F.w), walls = shoal_world_wall_count(F.w);
    int32_t components = shoal_world_component_count(F.w);
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    shoal_error_t err;
    shoal_world_t* loaded = NULL;
    if (b & 2) {
        shoal_world_destroy(F.w);
        F.w = NULL;
    }
    shoal_status_t st = shoal_world_load_snapshot_memory(bytes, size, &def, &loaded, &err);
    free(bytes);
    FUZZ_CHECK(st == SHOAL_OK, "a saved world does not load: %s", err.message);
    FUZZ_CHECK(shoal_world_agent_count(loaded) == agents && shoal_world_wall_count(loaded) == walls &&
                   shoal_world_component_count(loaded) == components,
               "the loaded world differs");
    if (F.w == NULL) {
        /* The same tag: the same handles, the same hash. Systems are the
         * caller's to add again. */
        FUZZ_CHECK(shoal_world_state_hash(loaded) == hash, "a save and load changed the state hash");
        F.w = loaded;
        F.systems_added = 0;
        F.walls_changed = 1;
    } else {
        shoal_world_destroy(loaded);
    }
}

static void op_teleport(reader_t* r)
{
    uint8_t b = next_byte(r);
    shoal_status_t last;
    if (b & 1) {
        shoal_agent_t id = pick_handle(next_byte(r));
        float p[3] = {next_coord(r), next_coord(r), next_coord(r)};
        float v[3] = {next_float(r), next_float(r), 0.0f};
        float heading = next_float(r);
        float q[4] = {(b & 2) ? 0.0f : 1.0f, 0.0f, 0.0f, (b & 4) ? next_float(r) : 0.0f};
        CALL("agent_teleport", shoal_agent_teleport(F.w, id, p, v, heading, q));
        return;
    }
    shoal_agent_t ids[FUZZ_MAX_BULK];
    int32_t count = pick_handles(r, ids);
    float p[FUZZ_MAX_BULK * 3], v[FUZZ_MAX_BULK * 3];
    for (int i = 0; i < FUZZ_MAX_BULK * 3; ++i) {
        p[i] = (float)(i % 9) - 4.0f;
        v[i] = 1.0f;
    }
    if (b & 2) p[next_byte(r) % (FUZZ_MAX_BULK * 3)] = next_float(r);
    if (b & 4) v[next_byte(r) % (FUZZ_MAX_BULK * 3)] = next_float(r);
    if (b & 8) {
        CALL("agents_set_targets", shoal_agents_set_targets(F.w, ids, count, (b & 0x10) ? NULL : p));
    } else {
        CALL("agents_teleport",
             shoal_agents_teleport(F.w, ids, count, (b & 0x10) ? NULL : p, (b & 0x20) ? NULL : v));
    }
}

/* Rows, handles and the state hash agree. */
static void op_rows(reader_t* r)
{
    uint8_t b = next_byte(r);
    int32_t n = shoal_world_agent_count(F.w);
    shoal_agent_t ids[FUZZ_MAX_AGENTS * 2];
    shoal_status_t last;
    if (b & 1) {
        int32_t first = (int32_t)next_byte(r) % 80 - 8, count = (int32_t)next_byte(r) % 80 - 8;
        CALL("row_handles", shoal_world_row_handles(F.w, first, count, count > 0 ? ids : NULL));
        if (last == SHOAL_OK) FUZZ_CHECK(first >= 0 && count >= 0 && first + count <= n, "bad range taken");
        return;
    }
    CALL("row_handles", shoal_world_row_handles(F.w, 0, n, ids));
    FUZZ_CHECK(last == SHOAL_OK, "row_handles of every row: %s", shoal_world_last_error(F.w));
    for (int32_t i = 0; i < n; ++i) {
        FUZZ_CHECK(shoal_agent_is_valid(F.w, ids[i]), "row %d: an invalid handle", (int)i);
        FUZZ_CHECK(shoal_agent_row(F.w, ids[i]) == i, "row %d: agent_row", (int)i);
    }
    int32_t live = 0;
    for (int32_t i = 0; i < F.handle_count; ++i) live += shoal_agent_row(F.w, F.handles[i]) >= 0;
    FUZZ_CHECK(live <= n, "%d handles name rows, %d rows", (int)live, (int)n);
    uint64_t h = shoal_world_state_hash(F.w);
    FUZZ_CHECK(h == shoal_world_state_hash(F.w), "state hash not repeatable");
}

typedef void op_fn(reader_t* r);
static op_fn* const OPS[] = {op_add_agent, op_agents_add,     op_remove,   op_add_component,
                             op_column,    op_add_system,     op_add_wall, op_remove_wall,
                             op_obstacle,  op_step,           op_snapshot, op_teleport,
                             op_rows,      op_system_enabled, op_step,     op_add_agent};
#define OP_COUNT ((int)(sizeof OPS / sizeof OPS[0]))

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    reader_t in = {data, size, 0};
    memset(&F, 0, sizeof F);
    uint8_t first = next_byte(&in);
    shoal_world_def_t def = shoal_world_default_def();
    def.thread_count = 1;
    def.dimensions = (first & 1) ? 3 : 2;
    def.reorder_interval = (int32_t)(first >> 1) % 4; /* rows move often */
    shoal_error_t err;
    FUZZ_CHECK(shoal_world_create(&def, &F.w, &err) == SHOAL_OK, "world_create: %s", err.message);
    F.dims = def.dimensions;
    for (int op = 0; op < FUZZ_MAX_OPS && !done(&in); ++op) OPS[next_byte(&in) % OP_COUNT](&in);
    /* Still usable. */
    int32_t segments = 0;
    (void)shoal_world_wall_segments(F.w, NULL, 0, &segments);
    if (!F.walls_changed || F.grid_segments + segments <= fuzz_max_wall_segments())
        FUZZ_CHECK(shoal_world_step(F.w, 1.0f / 60.0f) == SHOAL_OK, "a last step: %s",
                   shoal_world_last_error(F.w));
    (void)shoal_world_state_hash(F.w);
    shoal_world_destroy(F.w);
    F.w = NULL;
    return 0;
}
