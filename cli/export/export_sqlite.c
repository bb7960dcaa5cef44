/* A recording as a JuPedSim trajectory database (docs/export.md), which
 * PedPy reads with load_trajectory_from_jupedsim_sqlite and
 * load_walkable_area_from_jupedsim_sqlite.
 *
 * The schema is JuPedSim's version 2 (jupedsim/sqlite_serialization.py,
 * SqliteTrajectoryWriter, DATABASE_VERSION 2): the newest that PedPy's
 * walkable-area reader accepts (versions 1 and 2), and one that JuPedSim
 * itself upgrades to its version 3 by changing only the version number.
 *
 *   trajectory_data(frame INTEGER, id INTEGER, pos_x REAL, pos_y REAL,
 *                   ori_x REAL, ori_y REAL), index frame_id_idx(frame, id)
 *   metadata(key TEXT PRIMARY KEY, value TEXT): version 2, fps, and the
 *                   walkable area's xmin, xmax, ymin, ymax
 *   geometry(hash INTEGER UNIQUE, wkt TEXT): the walkable area, a POLYGON
 *   frame_data(frame INTEGER, geometry_hash INTEGER): each frame's geometry
 *
 * plus tables of shoal's own (shoal_agents, shoal_walls, shoal_obstacles)
 * for what the schema has no place for; readers of JuPedSim files ignore
 * tables they do not know.
 *
 * Decisions worth knowing:
 * - JuPedSim frames are evenly spaced (time = frame / fps). A recording has
 *   a frame every record_every steps and one after the last step whatever
 *   record_every is (docs/recording.md), so frame = (step - first step) /
 *   record_every and fps = 1 / (dt record_every); a frame off that grid
 *   (the last one, usually) is left out and counted, not squeezed in at the
 *   wrong time.
 * - An id names one agent for PedPy: the agent's global id (recording
 *   format version 4: given in the order agents were added, never reused).
 *   Older recordings have none, and a slot (index1) can be reused by a
 *   later agent with another generation: there id = index1 + (generation -
 *   1) 2^32, the slot itself for an agent of generation 1, which is every
 *   agent of a run that removes none. metadata's shoal_agent_ids says
 *   which ("global" or "handle").
 * - The geometry is JuPedSim's walkable area, a polygon: the torus box, or
 *   the box around every position, wall and obstacle with 1 m to spare,
 *   less what agents cannot walk. Built with GEOS (SHOAL_WITH_GEOS, Debian's
 *   libgeos-dev): less every wall segment thickened to WALL_THICKNESS (a
 *   wall has no width in shoal; agents keep their radius from it, more than
 *   half this) and every static obstacle's disc (a 32-gon inside its
 *   circle), overlaps and all; where walls cut the box into parts, the part
 *   with the most agents in the first exported frame (PedPy's area is one
 *   polygon), the others counted in metadata shoal_area_parts_left_out.
 *   Without GEOS, only the static obstacles are cut out, as 32-gons around
 *   their circles, and not those that overlap one cut out before them (a
 *   polygon's holes may not touch); the walls are only in shoal_walls.
 *   shoal_obstacles says which obstacles are cut out (in_walkable_area),
 *   metadata shoal_walls_in_walkable_area whether the walls are.
 * - The database is built in a temporary file beside the target, in one
 *   transaction without a journal (nothing needs rolling back: a failure
 *   removes the file), and moved into place when complete. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"
#include "cli/export/export.h"
#include "io/atomic_file.h"

#if SHOAL_WITH_SQLITE

#include <sqlite3.h>

#define JUPEDSIM_DATABASE_VERSION 2
#define HOLE_SIDES 32
#define PI 3.14159265358979323846
#define AREA_MARGIN 1.0    /* m around the data, when the world is not a torus */
#define WALL_THICKNESS 0.1 /* m: a wall segment as the walkable area leaves it out (with GEOS) */

int export_sqlite_available(void) { return 1; }

/* ---- the walkable area ---- */

typedef struct text_t {
    char* data;
    size_t length, capacity;
    int failed;
} text_t;

static void text_add(text_t* t, const char* format, ...) __attribute__((format(printf, 2, 3)));
static void text_add(text_t* t, const char* format, ...)
{
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, format);
        size_t room = t->capacity - t->length;
        int n = vsnprintf(t->data ? t->data + t->length : NULL, room, format, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if ((size_t)n < room) {
            t->length += (size_t)n;
            return;
        }
        size_t capacity = t->capacity ? t->capacity * 2 : 4096;
        while (capacity - t->length <= (size_t)n) capacity *= 2;
        char* data = realloc(t->data, capacity);
        if (data == NULL) {
            t->failed = 1;
            return;
        }
        t->data = data;
        t->capacity = capacity;
    }
}

typedef struct area_t {
    double min[2], max[2];
    text_t wkt;
    unsigned char* cut; /* per obstacle: 1 if cut out as a hole */
    int32_t cut_count, kept_out_count;
    int walls_cut;          /* the walls are cut out (GEOS) */
    int32_t parts_left_out; /* parts of the box the walls cut off, left out (GEOS) */
} area_t;

static void grow_box(double min[2], double max[2], double x, double y, double r)
{
    min[0] = fmin(min[0], x - r);
    min[1] = fmin(min[1], y - r);
    max[0] = fmax(max[0], x + r);
    max[1] = fmax(max[1], y + r);
}

static int is_static(const shoal_recording_obstacle_t* o)
{
    return o->velocity[0] == 0.0f && o->velocity[1] == 0.0f && o->velocity[2] == 0.0f;
}

#if SHOAL_WITH_GEOS
#include <geos_c.h>

static void geos_message(const char* message, void* user)
{
    char* out = user;
    if (out[0] == '\0') snprintf(out, 256, "%s", message);
}

/* The walkable area with GEOS into area->wkt: the box less every wall
 * segment thickened to WALL_THICKNESS and every static obstacle's disc;
 * where that leaves several parts, the one holding the most of the
 * `count` points (ties: the larger). Returns 0, -1 out of memory, -3 when
 * GEOS fails (its message in why). */
static int build_area_geos(const shoal_recording_geometry_t* g, const float* points, int32_t count,
                           area_t* area, char* why, size_t why_size)
{
    char message[256] = "";
    GEOSContextHandle_t ctx = GEOS_init_r();
    if (ctx == NULL) return -1;
    GEOSContext_setErrorMessageHandler_r(ctx, geos_message, message);
    int rc = -3;
    const size_t most = (size_t)g->wall_count + (size_t)g->obstacle_count;
    GEOSGeometry** cuts = calloc(most + 1, sizeof *cuts);
    GEOSGeometry *box = NULL, *all = NULL, *blocked = NULL, *left = NULL;
    GEOSWKTWriter* writer = NULL;
    char* text = NULL;
    unsigned n = 0; /* cuts made and still ours */
    if (cuts == NULL) {
        rc = -1;
        goto done;
    }
    for (int32_t w = 0; w < g->wall_count; ++w) {
        GEOSCoordSequence* seq = GEOSCoordSeq_create_r(ctx, 2, 2);
        if (seq == NULL) goto done;
        GEOSCoordSeq_setXY_r(ctx, seq, 0, g->walls[4 * w], g->walls[4 * w + 1]);
        GEOSCoordSeq_setXY_r(ctx, seq, 1, g->walls[4 * w + 2], g->walls[4 * w + 3]);
        GEOSGeometry* line = GEOSGeom_createLineString_r(ctx, seq);
        if (line == NULL) goto done;
        cuts[n] = GEOSBuffer_r(ctx, line, 0.5 * WALL_THICKNESS, 8);
        GEOSGeom_destroy_r(ctx, line);
        if (cuts[n] == NULL) goto done;
        n += 1;
    }
    for (int32_t o = 0; o < g->obstacle_count; ++o) {
        const shoal_recording_obstacle_t* ob = &g->obstacles[o];
        if (!is_static(ob) || !(ob->radius > 0.0f)) continue;
        GEOSGeometry* center = GEOSGeom_createPointFromXY_r(ctx, ob->center[0], ob->center[1]);
        if (center == NULL) goto done;
        cuts[n] = GEOSBuffer_r(ctx, center, ob->radius, HOLE_SIDES / 4);
        GEOSGeom_destroy_r(ctx, center);
        if (cuts[n] == NULL) goto done;
        area->cut[o] = 1;
        area->cut_count += 1;
        n += 1;
    }
    box = GEOSGeom_createRectangle_r(ctx, area->min[0], area->min[1], area->max[0], area->max[1]);
    if (box == NULL) goto done;
    if (n > 0) {
        all = GEOSGeom_createCollection_r(ctx, GEOS_GEOMETRYCOLLECTION, cuts, n);
        if (all == NULL) goto done;
        n = 0; /* the collection owns them now */
        blocked = GEOSUnaryUnion_r(ctx, all);
        if (blocked == NULL) goto done;
        left = GEOSDifference_r(ctx, box, blocked);
    } else {
        left = GEOSGeom_clone_r(ctx, box);
    }
    if (left == NULL) goto done;
    /* Several parts: the one with the most points, the larger of a tie. */
    const GEOSGeometry* part = left;
    const int parts =
        GEOSGeomTypeId_r(ctx, left) == GEOS_MULTIPOLYGON ? GEOSGetNumGeometries_r(ctx, left) : 1;
    if (parts > 1) {
        int32_t best_count = -1;
        double best_area = -1.0;
        for (int k = 0; k < parts; ++k) {
            const GEOSGeometry* p = GEOSGetGeometryN_r(ctx, left, k);
            const GEOSPreparedGeometry* prepared = GEOSPrepare_r(ctx, p);
            if (prepared == NULL) goto done;
            int32_t inside = 0;
            for (int32_t i = 0; i < count; ++i) {
                GEOSGeometry* pt = GEOSGeom_createPointFromXY_r(ctx, points[2 * i], points[2 * i + 1]);
                if (pt == NULL) {
                    GEOSPreparedGeom_destroy_r(ctx, prepared);
                    goto done;
                }
                inside += GEOSPreparedContains_r(ctx, prepared, pt) == 1;
                GEOSGeom_destroy_r(ctx, pt);
            }
            GEOSPreparedGeom_destroy_r(ctx, prepared);
            double a = 0.0;
            GEOSArea_r(ctx, p, &a);
            if (inside > best_count || (inside == best_count && a > best_area)) {
                best_count = inside;
                best_area = a;
                part = p;
            }
        }
        area->parts_left_out = parts - 1;
    }
    if (GEOSGeomTypeId_r(ctx, part) != GEOS_POLYGON) {
        snprintf(message, sizeof message, "the walls and obstacles leave no walkable polygon");
        goto done;
    }
    writer = GEOSWKTWriter_create_r(ctx);
    if (writer == NULL) goto done;
    GEOSWKTWriter_setTrim_r(ctx, writer, 1);
    text = GEOSWKTWriter_write_r(ctx, writer, part);
    if (text == NULL) goto done;
    text_add(&area->wkt, "%s", text);
    area->walls_cut = 1;
    rc = area->wkt.failed ? -1 : 0;
done:
    if (rc == -3) snprintf(why, why_size, "GEOS: %s", message[0] ? message : "the walkable area failed");
    if (text != NULL) GEOSFree_r(ctx, text);
    if (writer != NULL) GEOSWKTWriter_destroy_r(ctx, writer);
    for (unsigned k = 0; k < n; ++k) GEOSGeom_destroy_r(ctx, cuts[k]);
    free(cuts);
    if (left != NULL) GEOSGeom_destroy_r(ctx, left);
    if (blocked != NULL) GEOSGeom_destroy_r(ctx, blocked);
    if (all != NULL) GEOSGeom_destroy_r(ctx, all);
    if (box != NULL) GEOSGeom_destroy_r(ctx, box);
    GEOS_finish_r(ctx);
    return rc;
}
#endif

/* The walkable area of the frames in `exported` (docs at the top).
 * Returns 0, -1 when out of memory, -2 when a frame cannot be read (the
 * reader's message in *err), -3 when GEOS fails (its message in *err). */
static int build_area(shoal_recording_reader_t* rec, const shoal_recording_geometry_t* g,
                      const int64_t* jframe, area_t* area, shoal_error_t* err)
{
    const shoal_recording_header_t* h = shoal_recording_reader_header(rec);
    memset(area, 0, sizeof *area);
    const double hole_radius_scale = 1.0 / cos(PI / HOLE_SIDES); /* circumscribed */
    if (h->wrap && h->bounds_max[0] > h->bounds_min[0] && h->bounds_max[1] > h->bounds_min[1]) {
        for (int k = 0; k < 2; ++k) {
            area->min[k] = h->bounds_min[k];
            area->max[k] = h->bounds_max[k];
        }
    } else {
        area->min[0] = area->min[1] = INFINITY;
        area->max[0] = area->max[1] = -INFINITY;
        if (h->bounds_max[0] > h->bounds_min[0] && h->bounds_max[1] > h->bounds_min[1]) {
            grow_box(area->min, area->max, h->bounds_min[0], h->bounds_min[1], 0.0);
            grow_box(area->min, area->max, h->bounds_max[0], h->bounds_max[1], 0.0);
        }
        for (int32_t f = 0; f < shoal_recording_reader_frame_count(rec); ++f) {
            if (jframe[f] < 0) continue;
            shoal_recording_frame_t fr;
            if (shoal_recording_reader_frame(rec, f, &fr, err) != SHOAL_OK) return -2;
            for (int32_t i = 0; i < fr.count; ++i)
                grow_box(area->min, area->max, fr.positions[2 * i], fr.positions[2 * i + 1], 0.0);
        }
        for (int32_t s = 0; s < g->wall_count; ++s) {
            grow_box(area->min, area->max, g->walls[4 * s], g->walls[4 * s + 1], 0.0);
            grow_box(area->min, area->max, g->walls[4 * s + 2], g->walls[4 * s + 3], 0.0);
        }
        for (int32_t o = 0; o < g->obstacle_count; ++o) {
            const shoal_recording_obstacle_t* ob = &g->obstacles[o];
            if (is_static(ob))
                grow_box(area->min, area->max, ob->center[0], ob->center[1], ob->radius * hole_radius_scale);
        }
        if (!(area->min[0] <= area->max[0])) { /* nothing at all */
            area->min[0] = area->min[1] = 0.0;
            area->max[0] = area->max[1] = 0.0;
        }
        for (int k = 0; k < 2; ++k) {
            area->min[k] -= AREA_MARGIN;
            area->max[k] += AREA_MARGIN;
        }
    }

    area->cut = calloc((size_t)g->obstacle_count + 1, 1);
    if (area->cut == NULL) return -1;
#if SHOAL_WITH_GEOS
    /* The agents of the first exported frame choose the part the walls
     * leave them in. */
    float* points = NULL;
    int32_t count = 0;
    for (int32_t f = 0; f < shoal_recording_reader_frame_count(rec); ++f) {
        if (jframe[f] < 0) continue;
        shoal_recording_frame_t fr;
        if (shoal_recording_reader_frame(rec, f, &fr, err) != SHOAL_OK) return -2;
        points = malloc(((size_t)fr.count + 1) * 2 * sizeof *points);
        if (points == NULL) return -1;
        memcpy(points, fr.positions, (size_t)fr.count * 2 * sizeof *points);
        count = fr.count;
        break;
    }
    int built = build_area_geos(g, points, count, area, err->message, sizeof err->message);
    free(points);
    return built;
#else
    text_t* t = &area->wkt;
    text_add(t, "POLYGON ((%.9g %.9g, %.9g %.9g, %.9g %.9g, %.9g %.9g, %.9g %.9g)", area->min[0],
             area->min[1], area->max[0], area->min[1], area->max[0], area->max[1], area->min[0], area->max[1],
             area->min[0], area->min[1]);
    for (int32_t o = 0; o < g->obstacle_count; ++o) {
        const shoal_recording_obstacle_t* ob = &g->obstacles[o];
        double cx = ob->center[0], cy = ob->center[1], r = ob->radius * hole_radius_scale;
        int fits = is_static(ob) && ob->radius > 0.0f && cx - r > area->min[0] && cx + r < area->max[0] &&
                   cy - r > area->min[1] && cy + r < area->max[1];
        /* Holes of a valid polygon do not touch: keep the first of any two
         * that would (quadratic, but scenes have few obstacles). */
        for (int32_t p = 0; fits && p < o; ++p) {
            if (!area->cut[p]) continue;
            const shoal_recording_obstacle_t* other = &g->obstacles[p];
            double dx = cx - other->center[0], dy = cy - other->center[1];
            double reach = r + other->radius * hole_radius_scale;
            fits = dx * dx + dy * dy > reach * reach * 1.0001;
        }
        if (!fits) {
            area->kept_out_count += 1;
            continue;
        }
        area->cut[o] = 1;
        area->cut_count += 1;
        /* Clockwise, the shell being counter-clockwise. */
        text_add(t, ", (");
        for (int k = 0; k <= HOLE_SIDES; ++k) {
            double a = -2.0 * PI * (double)(k % HOLE_SIDES) / HOLE_SIDES;
            text_add(t, "%s%.9g %.9g", k ? ", " : "", cx + r * cos(a), cy + r * sin(a));
        }
        text_add(t, ")");
    }
    text_add(t, ")");
    return t->failed ? -1 : 0;
#endif
}

/* FNV-1a, 64 bits: the geometry's key. JuPedSim uses Python's hash() of the
 * text, which differs between processes; readers only match it against
 * frame_data. */
static int64_t text_hash(const char* text, size_t length)
{
    uint64_t x = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < length; ++i) {
        x ^= (unsigned char)text[i];
        x *= 0x100000001b3ull;
    }
    int64_t out;
    memcpy(&out, &x, sizeof out);
    return out;
}

/* ---- writing ---- */

typedef struct db_t {
    sqlite3* db;
    const char* path;
    char* msg;
    int msg_size;
} db_t;

static int fail_db(db_t* d, const char* what)
{
    set_msg(d->msg, d->msg_size, "cannot write %s: SQLite: %s: %s", d->path, what,
            d->db ? sqlite3_errmsg(d->db) : "cannot open");
    return -1;
}

static int exec(db_t* d, const char* sql)
{
    if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) != SQLITE_OK) return fail_db(d, sql);
    return 0;
}

static int prepare(db_t* d, const char* sql, sqlite3_stmt** out)
{
    if (sqlite3_prepare_v2(d->db, sql, -1, out, NULL) != SQLITE_OK) return fail_db(d, sql);
    return 0;
}

static int step_reset(db_t* d, sqlite3_stmt* st, const char* what)
{
    if (sqlite3_step(st) != SQLITE_DONE) return fail_db(d, what);
    sqlite3_reset(st);
    return 0;
}

static int put_meta(db_t* d, sqlite3_stmt* st, const char* key, const char* format, ...)
    __attribute__((format(printf, 4, 5)));
static int put_meta(db_t* d, sqlite3_stmt* st, const char* key, const char* format, ...)
{
    char value[4096];
    va_list ap;
    va_start(ap, format);
    vsnprintf(value, sizeof value, format, ap);
    va_end(ap);
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
    return step_reset(d, st, "insert into metadata");
}

static const char schema[] =
    "PRAGMA journal_mode=OFF;"
    "PRAGMA synchronous=OFF;"
    "BEGIN;"
    "CREATE TABLE trajectory_data (frame INTEGER NOT NULL, id INTEGER NOT NULL,"
    " pos_x REAL NOT NULL, pos_y REAL NOT NULL, ori_x REAL NOT NULL, ori_y REAL NOT NULL);"
    "CREATE TABLE metadata(key TEXT NOT NULL UNIQUE PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE geometry(hash INTEGER NOT NULL, wkt TEXT NOT NULL);"
    "CREATE UNIQUE INDEX geometry_hash ON geometry(hash);"
    "CREATE TABLE frame_data(frame INTEGER NOT NULL, geometry_hash INTEGER NOT NULL);"
    "CREATE TABLE shoal_agents(id INTEGER PRIMARY KEY, handle_index INTEGER NOT NULL,"
    " handle_generation INTEGER NOT NULL, group_label INTEGER NOT NULL, group_name TEXT NOT NULL);"
    "CREATE TABLE shoal_walls(segment INTEGER PRIMARY KEY, x0 REAL NOT NULL, y0 REAL NOT NULL,"
    " x1 REAL NOT NULL, y1 REAL NOT NULL);"
    "CREATE TABLE shoal_obstacles(id INTEGER PRIMARY KEY, x REAL NOT NULL, y REAL NOT NULL,"
    " radius REAL NOT NULL, vx REAL NOT NULL, vy REAL NOT NULL, time REAL NOT NULL,"
    " in_walkable_area INTEGER NOT NULL);";

/* Line `label` of the header's group names (length in *n), or "". */
static const char* group_name(const char* names, uint32_t label, int* n)
{
    const char* start = names;
    for (uint32_t k = 0; k < label && start != NULL; ++k) {
        start = strchr(start, '\n');
        if (start != NULL) start += 1;
    }
    if (start == NULL) {
        *n = 0;
        return "";
    }
    const char* end = strchr(start, '\n');
    *n = (int)(end != NULL ? (size_t)(end - start) : strlen(start));
    return start;
}

/* Agent i of `frame`'s id in the database: its global id, or for a
 * recording without them its handle's (index1 + (generation - 1) 2^32).
 * Global ids are below 2^63 (one agent a nanosecond would take three
 * centuries to reach it). */
static int64_t agent_key(const shoal_recording_frame_t* frame, int32_t i)
{
    if (frame->global_ids != NULL) return (int64_t)(frame->global_ids[i] & (uint64_t)INT64_MAX);
    const uint32_t generation = frame->generations[i];
    return (int64_t)frame->ids[i] + (int64_t)(generation > 0 ? generation - 1 : 0) * ((int64_t)1 << 32);
}

/* Present in `frame` with the same generation? (ids ascend) */
static int in_frame(const shoal_recording_frame_t* frame, uint32_t id, uint32_t generation)
{
    int32_t lo = 0, hi = frame->count;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (frame->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < frame->count && frame->ids[lo] == id && frame->generations[lo] == generation;
}

static int write_rows(db_t* d, shoal_recording_reader_t* rec, const int64_t* jframe, int64_t geometry_hash,
                      export_summary_t* summary)
{
    const shoal_recording_header_t* h = shoal_recording_reader_header(rec);
    sqlite3_stmt *row = NULL, *frame_row = NULL, *agent = NULL;
    int rc = -1;
    if (prepare(d, "INSERT INTO trajectory_data VALUES(?, ?, ?, ?, ?, ?)", &row) != 0 ||
        prepare(d, "INSERT INTO frame_data VALUES(?, ?)", &frame_row) != 0 ||
        prepare(d, "INSERT OR IGNORE INTO shoal_agents VALUES(?, ?, ?, ?, ?)", &agent) != 0)
        goto done;
    /* In order: reading frame f leaves f - 1 (prev) valid. */
    shoal_recording_frame_t prev = {0};
    for (int32_t f = 0; f < shoal_recording_reader_frame_count(rec); ++f) {
        shoal_recording_frame_t fr;
        shoal_error_t err = {SHOAL_OK, ""};
        if (shoal_recording_reader_frame(rec, f, &fr, &err) != SHOAL_OK) {
            set_msg(d->msg, d->msg_size, "%s; %s not written", err.message, d->path);
            goto done;
        }
        if (jframe[f] >= 0) {
            sqlite3_bind_int64(frame_row, 1, jframe[f]);
            sqlite3_bind_int64(frame_row, 2, geometry_hash);
            if (step_reset(d, frame_row, "insert into frame_data") != 0) goto done;
            for (int32_t i = 0; i < fr.count; ++i) {
                int64_t id = agent_key(&fr, i);
                double heading = fr.headings[i];
                sqlite3_bind_int64(row, 1, jframe[f]);
                sqlite3_bind_int64(row, 2, id);
                sqlite3_bind_double(row, 3, fr.positions[2 * i]);
                sqlite3_bind_double(row, 4, fr.positions[2 * i + 1]);
                sqlite3_bind_double(row, 5, cos(heading));
                sqlite3_bind_double(row, 6, sin(heading));
                if (step_reset(d, row, "insert into trajectory_data") != 0) goto done;
                /* An agent gets its shoal_agents row where it first appears
                 * (OR IGNORE covers one that a skipped frame hid). */
                if (f > 0 && in_frame(&prev, fr.ids[i], fr.generations[i])) continue;
                int n = 0;
                const char* name = group_name(h->group_names, fr.groups[i], &n);
                sqlite3_bind_int64(agent, 1, id);
                sqlite3_bind_int64(agent, 2, fr.ids[i]);
                sqlite3_bind_int64(agent, 3, fr.generations[i]);
                sqlite3_bind_int64(agent, 4, fr.groups[i]);
                sqlite3_bind_text(agent, 5, name, n, SQLITE_TRANSIENT);
                if (step_reset(d, agent, "insert into shoal_agents") != 0) goto done;
            }
            summary->rows += fr.count;
            summary->frames += 1;
        } else {
            summary->frames_skipped += 1;
        }
        prev = fr;
    }
    rc = 0;
done:
    sqlite3_finalize(row);
    sqlite3_finalize(frame_row);
    sqlite3_finalize(agent);
    return rc;
}

static int write_geometry(db_t* d, const shoal_recording_geometry_t* g, const area_t* area,
                          int64_t geometry_hash)
{
    sqlite3_stmt *geo = NULL, *wall = NULL, *obstacle = NULL;
    int rc = -1;
    if (prepare(d, "INSERT INTO geometry VALUES(?, ?)", &geo) != 0 ||
        prepare(d, "INSERT INTO shoal_walls VALUES(?, ?, ?, ?, ?)", &wall) != 0 ||
        prepare(d, "INSERT INTO shoal_obstacles VALUES(?, ?, ?, ?, ?, ?, ?, ?)", &obstacle) != 0)
        goto done;
    sqlite3_bind_int64(geo, 1, geometry_hash);
    sqlite3_bind_text(geo, 2, area->wkt.data, (int)area->wkt.length, SQLITE_STATIC);
    if (step_reset(d, geo, "insert into geometry") != 0) goto done;
    for (int32_t s = 0; s < g->wall_count; ++s) {
        sqlite3_bind_int64(wall, 1, s);
        for (int k = 0; k < 4; ++k) sqlite3_bind_double(wall, 2 + k, g->walls[4 * s + k]);
        if (step_reset(d, wall, "insert into shoal_walls") != 0) goto done;
    }
    for (int32_t o = 0; o < g->obstacle_count; ++o) {
        const shoal_recording_obstacle_t* ob = &g->obstacles[o];
        sqlite3_bind_int64(obstacle, 1, ob->id);
        sqlite3_bind_double(obstacle, 2, ob->center[0]);
        sqlite3_bind_double(obstacle, 3, ob->center[1]);
        sqlite3_bind_double(obstacle, 4, ob->radius);
        sqlite3_bind_double(obstacle, 5, ob->velocity[0]);
        sqlite3_bind_double(obstacle, 6, ob->velocity[1]);
        sqlite3_bind_double(obstacle, 7, g->time);
        sqlite3_bind_int(obstacle, 8, area->cut[o]);
        if (step_reset(d, obstacle, "insert into shoal_obstacles") != 0) goto done;
    }
    rc = 0;
done:
    sqlite3_finalize(geo);
    sqlite3_finalize(wall);
    sqlite3_finalize(obstacle);
    return rc;
}

static int write_metadata(db_t* d, const shoal_recording_reader_t* rec, double fps, const area_t* area,
                          double time0)
{
    const shoal_recording_header_t* h = shoal_recording_reader_header(rec);
    sqlite3_stmt* meta = NULL;
    if (prepare(d, "INSERT INTO metadata VALUES(?, ?)", &meta) != 0) return -1;
    int rc = put_meta(d, meta, "version", "%d", JUPEDSIM_DATABASE_VERSION) != 0 ||
                     put_meta(d, meta, "fps", "%.9g", fps) != 0 ||
                     put_meta(d, meta, "xmin", "%.9g", area->min[0]) != 0 ||
                     put_meta(d, meta, "xmax", "%.9g", area->max[0]) != 0 ||
                     put_meta(d, meta, "ymin", "%.9g", area->min[1]) != 0 ||
                     put_meta(d, meta, "ymax", "%.9g", area->max[1]) != 0 ||
                     put_meta(d, meta, "shoal_dt", "%.9g", (double)h->dt) != 0 ||
                     put_meta(d, meta, "shoal_record_every", "%d", (int)h->record_every) != 0 ||
                     put_meta(d, meta, "shoal_time0", "%.17g", time0) != 0 ||
                     put_meta(d, meta, "shoal_units", "%s", h->units[0] ? h->units : "m,s,rad") != 0 ||
                     put_meta(d, meta, "shoal_scenario_name", "%s", h->scenario_name) != 0 ||
                     put_meta(d, meta, "shoal_recording_version", "%d",
                              (int)shoal_recording_reader_version(rec)) != 0 ||
                     put_meta(d, meta, "shoal_agent_ids", "%s",
                              shoal_recording_reader_version(rec) >= 4 ? "global" : "handle") != 0 ||
                     put_meta(d, meta, "shoal_walls_in_walkable_area", "%d", area->walls_cut) != 0 ||
                     put_meta(d, meta, "shoal_wall_thickness", "%.9g",
                              area->walls_cut ? WALL_THICKNESS : 0.0) != 0 ||
                     put_meta(d, meta, "shoal_area_parts_left_out", "%d", (int)area->parts_left_out) != 0
                 ? -1
                 : 0;
    sqlite3_finalize(meta);
    return rc;
}

int export_sqlite(shoal_recording_reader_t* rec, const char* path, int force, export_summary_t* summary,
                  char* msg, int msg_size)
{
    const shoal_recording_header_t* h = shoal_recording_reader_header(rec);
    if (export_check_dimensions(EXPORT_SQLITE, h->dimensions, msg, msg_size) != 0) return -1;
    const int32_t frames = shoal_recording_reader_frame_count(rec);
    const int64_t every = h->record_every > 0 ? h->record_every : 1;
    /* In single precision, the precision of dt: 1 / (0.1f 4) is 2.5, not
     * 2.49999996. */
    const double fps = (double)(1.0f / (h->dt * (float)every));

    /* JuPedSim frame numbers: (step - first step) / record_every, on the
     * grid and increasing; -1 for a frame left out. */
    int64_t* jframe = malloc(((size_t)frames + 1) * sizeof *jframe);
    if (jframe == NULL) {
        set_msg(msg, msg_size, "%s: out of memory", path);
        return -1;
    }
    uint64_t first_step = 0;
    double time0 = 0.0;
    int64_t last = -1;
    for (int32_t f = 0; f < frames; ++f) {
        shoal_recording_frame_t fr; /* the step and time: nothing decoded */
        shoal_recording_reader_frame_info(rec, f, &fr);
        if (f == 0) {
            first_step = fr.step;
            time0 = fr.time;
        }
        uint64_t d = fr.step - first_step;
        int64_t j = d % (uint64_t)every == 0 ? (int64_t)(d / (uint64_t)every) : -1;
        jframe[f] = j > last ? j : -1;
        if (jframe[f] >= 0) last = j;
    }

    shoal_recording_geometry_t g;
    if (shoal_recording_reader_geometry(rec, &g) != SHOAL_OK) memset(&g, 0, sizeof g); /* version 1 */
    area_t area;
    shoal_error_t err = {SHOAL_OK, ""};
    int built = build_area(rec, &g, jframe, &area, &err);
    if (built != 0) {
        free(jframe);
        free(area.wkt.data);
        free(area.cut);
        if (built == -2 || built == -3)
            set_msg(msg, msg_size, "%s; %s not written", err.message, path);
        else
            set_msg(msg, msg_size, "%s: out of memory", path);
        return -1;
    }
    int64_t geometry_hash = text_hash(area.wkt.data, area.wkt.length);

    atomic_file_t file;
    int flags = ATOMIC_FILE_REGULAR_ONLY | (force ? 0 : ATOMIC_FILE_NO_REPLACE);
    int rc = -1;
    db_t d = {NULL, path, msg, msg_size};
    if (atomic_file_open_with(&file, path, flags, msg, msg_size) != 0) goto done;
    if (sqlite3_open_v2(file.tmp, &d.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fail_db(&d, "open");
        goto fail;
    }
    if (exec(&d, schema) != 0 || write_metadata(&d, rec, fps, &area, time0) != 0 ||
        write_geometry(&d, &g, &area, geometry_hash) != 0 ||
        write_rows(&d, rec, jframe, geometry_hash, summary) != 0 ||
        exec(&d, "CREATE INDEX frame_id_idx ON trajectory_data(frame, id); COMMIT;") != 0)
        goto fail;
    if (sqlite3_close(d.db) != SQLITE_OK) {
        fail_db(&d, "close");
        d.db = NULL;
        goto fail;
    }
    d.db = NULL;
    /* SQLite wrote through its own descriptor; the commit fsyncs the same
     * file through file.f and moves it into place. */
    if (atomic_file_commit(&file, msg, msg_size) != 0) goto done;
    summary->obstacles_cut = area.cut_count;
    summary->obstacles_kept_out = area.kept_out_count;
    rc = 0;
    goto done;
fail:
    sqlite3_close(d.db);
    atomic_file_discard(&file);
done:
    free(jframe);
    free(area.wkt.data);
    free(area.cut);
    return rc;
}

#else /* !SHOAL_WITH_SQLITE */

int export_sqlite_available(void) { return 0; }

/* Unreachable through the command, which checks export_check_target first;
 * says the same for any other caller. */
int export_sqlite(shoal_recording_reader_t* rec, const char* path, int force, export_summary_t* summary,
                  char* msg, int msg_size)
{
    (void)rec;
    (void)force;
    (void)summary;
    return export_check_target(EXPORT_SQLITE, path, 1, msg, msg_size);
}

#endif
