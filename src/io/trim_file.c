/* Trim tables in files: the file format (below), saving (atomically, by
 * the output rule of atomic_file.c) and loading (bounded, from a regular
 * file or from memory), and the world's public calls that save and load
 * its table. The tables themselves, their building and their use are the
 * planner module's (modules/planner/trim.c, planner_world.c). */
#define _POSIX_C_SOURCE 200809L

#include "io/trim_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/msg.h"
#include "io/atomic_file.h"
#include "io/file_read.h"
#include "modules/planner/planner.h"

/* File format, every field little-endian:
 *   0  char[8] "SHOALTRM"
 *   8  u32     version (1)
 *  12  i32     axes
 *  16  i32[3]  samples
 *  28  f32[3]  max_rate
 *  40  f32     interval
 *  44  i32     substeps
 *  48  i32     controls
 *  52  f32[10] per entry (pos xyz, facing xyz, rot wxyz), controls^2 of
 *              them in table order [initial * controls + final]
 *  end u64     FNV-1a 64 of every byte before it */
#define TRIM_FILE_VERSION 1u
#define TRIM_HEADER_BYTES 52
#define TRIM_ENTRY_BYTES 40
#define TRIM_CHECKSUM_BYTES 8
/* Entries go through a stack buffer this many at a time. */
#define TRIM_IO_ENTRIES 256

static const char trim_magic[8] = {'S', 'H', 'O', 'A', 'L', 'T', 'R', 'M'};


/* ------------------------------------------------------------------------ */
/* Files                                                                      */
/* ------------------------------------------------------------------------ */

static void encode_header(uint8_t* p, const trim_spec_t* s, int32_t controls)
{
    memcpy(p, trim_magic, sizeof trim_magic);
    put_u32(p + 8, TRIM_FILE_VERSION);
    put_i32(p + 12, s->axes);
    for (int a = 0; a < TRIM_MAX_AXES; ++a) put_i32(p + 16 + 4 * a, s->samples[a]);
    for (int a = 0; a < TRIM_MAX_AXES; ++a) put_f32(p + 28 + 4 * a, s->max_rate[a]);
    put_f32(p + 40, s->interval);
    put_i32(p + 44, s->substeps);
    put_i32(p + 48, controls);
}

static void encode_entry(uint8_t* p, const trim_entry_t* e)
{
    const float v[10] = {e->pos.x,    e->pos.y, e->pos.z, e->facing.x, e->facing.y,
                         e->facing.z, e->rot.w, e->rot.x, e->rot.y,    e->rot.z};
    for (int i = 0; i < 10; ++i) put_f32(p + 4 * i, v[i]);
}

/* Decodes one entry; 0 when a value is not finite. */
static int decode_entry(const uint8_t* p, trim_entry_t* e)
{
    float v[10];
    int finite = 1;
    for (int i = 0; i < 10; ++i) {
        v[i] = get_f32(p + 4 * i);
        if (!isfinite(v[i])) finite = 0;
    }
    e->pos = (vec3){v[0], v[1], v[2]};
    e->facing = (vec3){v[3], v[4], v[5]};
    e->rot = (quat){v[6], v[7], v[8], v[9]};
    return finite;
}

static uint64_t file_bytes(int32_t controls)
{
    return (uint64_t)TRIM_HEADER_BYTES + (uint64_t)controls * (uint64_t)controls * TRIM_ENTRY_BYTES +
           TRIM_CHECKSUM_BYTES;
}

int trim_table_save(const trim_table_t* t, const char* path, char* msg, int msg_size)
{
    if (path == NULL) {
        set_msg(msg, msg_size, "trim table: path must not be NULL");
        return -1;
    }
    if (t == NULL || t->entries == NULL) {
        set_msg(msg, msg_size, "trim table %s: nothing to save (no entries)", path);
        return -1;
    }
    char why[160];
    if (!trim_spec_valid(&t->spec, why, sizeof why)) {
        set_msg(msg, msg_size, "trim table %s: bad spec: %s", path, why);
        return -1;
    }
    if (t->controls != trim_spec_controls(&t->spec)) {
        set_msg(msg, msg_size, "trim table %s: controls %d does not match the spec's %d", path,
                (int)t->controls, (int)trim_spec_controls(&t->spec));
        return -1;
    }

    /* Encoded in memory, then written beside the destination and renamed
     * over it (io/atomic_file.h): readers see the old file or the whole new
     * one, never a partial write. */
    uint64_t total_bytes = file_bytes(t->controls);
    uint8_t* data = (uint8_t*)malloc((size_t)total_bytes);
    if (data == NULL) {
        set_msg(msg, msg_size, "trim table %s: out of memory (%llu bytes)", path,
                (unsigned long long)total_bytes);
        return -1;
    }
    trim_spec_t s = trim_spec_canonical(&t->spec);
    encode_header(data, &s, t->controls);
    size_t total = (size_t)t->controls * (size_t)t->controls;
    for (size_t i = 0; i < total; ++i)
        encode_entry(data + TRIM_HEADER_BYTES + i * TRIM_ENTRY_BYTES, &t->entries[i]);
    size_t body = (size_t)total_bytes - TRIM_CHECKSUM_BYTES;
    put_u64(data + body, fnv1a(FNV1A_OFFSET, data, body));
    char why_io[480];
    int failed = atomic_write_file(path, data, (size_t)total_bytes, why_io, sizeof why_io);
    free(data);
    if (failed) {
        set_msg(msg, msg_size, "trim table %s: %s", path, why_io);
        return -1;
    }
    return 0;
}

/* Where a table is read from: a file, streamed through a stack buffer, or
 * bytes in memory. The parser below reads only through source_read, so a
 * file and a buffer go through the same checks (and fuzzing the memory load
 * covers the file load). */
typedef struct trim_source {
    const char* name; /* in messages: the path, or the caller's name */
    uint64_t size;    /* bytes in all */
    FILE* file;       /* NULL: read from data */
    const uint8_t* data;
    uint64_t at; /* bytes of data consumed */
} trim_source_t;

/* n bytes into buf; 0 when there are fewer left (or the file fails). */
static int source_read(trim_source_t* src, uint8_t* buf, size_t n)
{
    if (src->file != NULL) return fread(buf, 1, n, src->file) == n;
    if (n > src->size - src->at) return 0;
    memcpy(buf, src->data + src->at, n);
    src->at += n;
    return 1;
}

static int load_source(trim_table_t* t, trim_source_t* src, trim_alloc_fn* alloc_fn, trim_free_fn* free_fn,
                       void* ctx, char* msg, int msg_size)
{
    const char* path = src->name;
    uint64_t got = src->size;
    uint8_t buf[TRIM_IO_ENTRIES * TRIM_ENTRY_BYTES];
    size_t head = got < TRIM_HEADER_BYTES ? (size_t)got : TRIM_HEADER_BYTES;
    if (!source_read(src, buf, head)) {
        set_msg(msg, msg_size, "trim table %s: read failed", path);
        return -1;
    }
    /* The magic is judged on the bytes there are: a stub of another file is
     * "not a trim table", a cut-off trim table is "truncated". */
    size_t magic_have = head < sizeof trim_magic ? head : sizeof trim_magic;
    if (memcmp(buf, trim_magic, magic_have) != 0) {
        set_msg(msg, msg_size, "trim table %s: not a trim table (bad magic)", path);
        return -1;
    }
    const uint64_t min_bytes = TRIM_HEADER_BYTES + TRIM_CHECKSUM_BYTES;
    if (got < min_bytes) {
        set_msg(msg, msg_size, "trim table %s: truncated: expected at least %llu bytes, got %llu", path,
                (unsigned long long)min_bytes, (unsigned long long)got);
        return -1;
    }
    uint32_t version = get_u32(buf + 8);
    if (version != TRIM_FILE_VERSION) {
        set_msg(msg, msg_size, "trim table %s: unsupported version %lu (this build reads %u)", path,
                (unsigned long)version, TRIM_FILE_VERSION);
        return -1;
    }
    trim_spec_t s;
    s.axes = get_i32(buf + 12);
    for (int a = 0; a < TRIM_MAX_AXES; ++a) s.samples[a] = get_i32(buf + 16 + 4 * a);
    for (int a = 0; a < TRIM_MAX_AXES; ++a) s.max_rate[a] = get_f32(buf + 28 + 4 * a);
    s.interval = get_f32(buf + 40);
    s.substeps = get_i32(buf + 44);
    int32_t controls = get_i32(buf + 48);
    char why[160];
    if (!trim_spec_valid(&s, why, sizeof why)) {
        set_msg(msg, msg_size, "trim table %s: bad spec: %s", path, why);
        return -1;
    }
    for (int a = 0; a < TRIM_MAX_AXES; ++a) {
        if (!isfinite(s.max_rate[a])) {
            set_msg(msg, msg_size, "trim table %s: bad spec: max_rate[%d] is not finite", path, a);
            return -1;
        }
    }
    if (controls != trim_spec_controls(&s)) {
        set_msg(msg, msg_size, "trim table %s: controls %d does not match the spec's %d", path, (int)controls,
                (int)trim_spec_controls(&s));
        return -1;
    }
    uint64_t expected = file_bytes(controls);
    if (got != expected) {
        set_msg(msg, msg_size, "trim table %s: %s: expected %llu bytes, got %llu", path,
                got < expected ? "truncated" : "trailing data", (unsigned long long)expected,
                (unsigned long long)got);
        return -1;
    }

    size_t bytes = trim_entries_bytes(controls);
    trim_entry_t* entries = (trim_entry_t*)alloc_fn(ctx, bytes);
    if (entries == NULL) {
        set_msg(msg, msg_size, "trim table %s: out of memory (%zu bytes)", path, bytes);
        return -1;
    }
    uint64_t h = fnv1a(FNV1A_OFFSET, buf, TRIM_HEADER_BYTES);
    size_t total = (size_t)controls * (size_t)controls;
    size_t first_bad = total; /* first entry holding a non-finite value */
    const char* fault = NULL;
    for (size_t i = 0; i < total; i += TRIM_IO_ENTRIES) {
        size_t m = total - i < TRIM_IO_ENTRIES ? total - i : TRIM_IO_ENTRIES;
        size_t want = m * TRIM_ENTRY_BYTES;
        if (!source_read(src, buf, want)) {
            fault = "read failed (file changed while reading?)";
            break;
        }
        h = fnv1a(h, buf, want);
        for (size_t j = 0; j < m; ++j)
            if (!decode_entry(buf + j * TRIM_ENTRY_BYTES, &entries[i + j]) && first_bad == total)
                first_bad = i + j;
    }
    if (fault == NULL) {
        if (!source_read(src, buf, TRIM_CHECKSUM_BYTES)) {
            fault = "read failed (file changed while reading?)";
        } else if (get_u64(buf) != h) {
            set_msg(msg, msg_size, "trim table %s: checksum mismatch (stored %016llx, computed %016llx)",
                    path, (unsigned long long)get_u64(buf), (unsigned long long)h);
            fault = "";
        }
    }
    /* A valid checksum over a non-finite value means the writer itself was
     * wrong, not the disk: still refused, a NaN would poison every plan. */
    if (fault == NULL && first_bad < total) {
        set_msg(msg, msg_size, "trim table %s: entry %zu (initial %zu, final %zu) holds a non-finite value",
                path, first_bad, first_bad / (size_t)controls, first_bad % (size_t)controls);
        fault = "";
    }
    if (fault != NULL) {
        if (fault[0] != '\0') set_msg(msg, msg_size, "trim table %s: %s", path, fault);
        free_fn(ctx, entries, bytes);
        return -1;
    }

    t->spec = trim_spec_canonical(&s);
    t->controls = controls;
    t->straight = trim_spec_straight(&s);
    t->entries = entries;
    return 0;
}

int trim_table_load(trim_table_t* t, const char* path, trim_alloc_fn* alloc_fn, trim_free_fn* free_fn,
                    void* ctx, char* msg, int msg_size)
{
    if (path == NULL || t == NULL) {
        set_msg(msg, msg_size, "trim table: path and t must not be NULL");
        return -1;
    }
    /* A regular file no larger than the largest valid table, opened
     * without blocking (io/file_read.h). */
    uint64_t size = 0;
    file_read_error_t error;
    char why[256];
    FILE* f = file_open_regular(path, TRIM_MAX_FILE_BYTES, &size, &error, why, sizeof why);
    if (f == NULL) {
        set_msg(msg, msg_size, "trim table %s: %s", path, why);
        return -1;
    }
    trim_source_t src = {.name = path, .size = size, .file = f};
    int rc = load_source(t, &src, alloc_fn ? alloc_fn : trim_heap_alloc, free_fn ? free_fn : trim_heap_free,
                         ctx, msg, msg_size);
    fclose(f);
    return rc;
}

int trim_table_load_memory(trim_table_t* t, const void* data, size_t size, const char* name,
                           trim_alloc_fn* alloc_fn, trim_free_fn* free_fn, void* ctx, char* msg, int msg_size)
{
    if (t == NULL || (data == NULL && size > 0)) {
        set_msg(msg, msg_size, "trim table: t and data must not be NULL");
        return -1;
    }
    trim_source_t src = {.name = name ? name : "(memory)", .size = size, .data = (const uint8_t*)data};
    return load_source(t, &src, alloc_fn ? alloc_fn : trim_heap_alloc, free_fn ? free_fn : trim_heap_free,
                       ctx, msg, msg_size);
}

/* ---- the world's calls ------------------------------------------------------ */

shoal_status_t shoal_world_save_trim_table(const shoal_world_t* w, const char* path)
{
    static const char* where = "world_save_trim_table";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (!path) return world_failc(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: path is NULL", where);
    if (!planner_data(w) || !planner_data(w)->has_table)
        return world_failc(w, SHOAL_ERR_NOT_FOUND,
                           "%s: the world has no trim table yet (set one, or add a planner agent)", where);
    char msg[512];
    if (trim_table_save(&planner_data(w)->table, path, msg, sizeof msg) != 0)
        return world_failc(w, SHOAL_ERR_IO, "%s: %s", where, msg);
    return SHOAL_OK;
}

shoal_status_t shoal_world_load_trim_table(shoal_world_t* w, const char* path)
{
    static const char* where = "world_load_trim_table";
    if (!w) return SHOAL_ERR_INVALID_ARGUMENT;
    if (w->in_step) return world_fail(w, SHOAL_ERR_BUSY, "%s: called from inside a step", where);
    if (!path) return world_fail(w, SHOAL_ERR_INVALID_ARGUMENT, "%s: path is NULL", where);
    /* Unreadable, not a regular file or too large: IO, before the parser
     * (whose failures are PARSE). */
    uint64_t size = 0;
    file_read_error_t error;
    char why[256];
    FILE* probe = file_open_regular(path, TRIM_MAX_FILE_BYTES, &size, &error, why, sizeof why);
    if (!probe) return world_fail(w, SHOAL_ERR_IO, "%s: %s: %s", where, path, why);
    fclose(probe);
    trim_table_t fresh;
    memset(&fresh, 0, sizeof fresh);
    char msg[480];
    void* ctx = (void*)(uintptr_t)&w->alloc;
    if (trim_table_load(&fresh, path, planner_table_alloc, planner_table_free, ctx, msg, sizeof msg) != 0)
        return world_fail(w, strstr(msg, "out of memory") ? SHOAL_ERR_OUT_OF_MEMORY : SHOAL_ERR_PARSE,
                          "%s: %s", where, msg);
    return planner_install_loaded_table(w, &fresh, where);
}
