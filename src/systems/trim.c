/* Pre-integrated trim trajectories (issue 6, seed 004 section 3.2); the
 * header says what each function computes, this file how.
 *
 * The one integrator. Substep k (0-based) of n = spec->substeps, with
 * h = interval / n, from controls ci to cf:
 *
 *   s   = ((float)k + 0.5f) / (float)n            (k >= n: the final rates)
 *   w_a = wi_a + (wf_a - wi_a) * s                 for each axis a
 *   Om  = (0, roll, -pitch, yaw)                   body rates as a quaternion
 *   d   = rot (x) Om                               Hamilton product, quat_mul
 *   rot = quat_normalize(rot + (0.5f * h) * d)     componentwise, then unit
 *   f   = quat_forward(rot)
 *   pos = pos + f * h                              componentwise
 *
 * Why these choices:
 * - Rates at the substep's midpoint: for linearly interpolated rates the
 *   midpoint rule integrates the turned angle exactly, so a yaw-only
 *   trajectory turns (wi + wf) T / 2 up to the quaternion step's own error.
 * - Rotation by an explicit Euler step of dq/dt = 0.5 q (0, omega_body)
 *   (body-frame rates multiply on the right), not by an exact axis-angle
 *   increment: it needs only +, -, *, / and sqrt, which IEEE 754 rounds
 *   correctly, so with -ffp-contract=off a table built on one machine equals
 *   the online integration on any other, bit for bit. sinf/cosf differ
 *   between C libraries and would break that for saved tables.
 * - The position advances along the facing *after* the rotation update
 *   (semi-implicit Euler): the last substep then moves along the stored
 *   facing vector. Either order is first order in h.
 * - In 2D (axes == 1) the rates are (0, 0, yaw): rot keeps x = y = 0 and
 *   the facing keeps z = 0 exactly (every product feeding them has a zero
 *   factor), so planar trajectories stay exactly planar.
 *
 * The table is built from trim_rel_start and rel_step, the body of
 * trim_integrate_step, so the stored end states are the online integration
 * by construction (the tests compare them bit for bit).
 */
#define _POSIX_C_SOURCE 200809L

#include "systems/trim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "io/bytes.h"
#include "io/file_read.h"
#include "systems/msg.h"

_Static_assert(sizeof(trim_entry_t) == 40, "a trim entry is 10 floats (seed 004: 40 bytes)");
_Static_assert(sizeof(float) == sizeof(uint32_t), "the file format stores IEEE binary32 floats");

/* Bounds checked by trim_spec_valid. */
#define TRIM_MAX_SAMPLES 64
#define TRIM_MAX_SUBSTEPS 100000
/* s: the shortest Euler substep (interval / substeps) a spec may ask for. */
#define TRIM_MIN_SUBSTEP 1e-6
/* A table may hold at most this many bytes of entries (controls^2 * 40):
 * about 2,590 controls. The paper's largest model had 80,000 paths, 3.2 MB. */
#define TRIM_MAX_TABLE_BYTES ((uint64_t)256 << 20)

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

static const char trim_magic[8] = { 'S', 'H', 'O', 'A', 'L', 'T', 'R', 'M' };

/* Without caller hooks the table lives in the C heap. */
static void* trim_default_alloc(void* ctx, size_t bytes)
{
    (void)ctx;
    return malloc(bytes);
}

static void trim_default_free(void* ctx, void* p, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    free(p);
}

/* ------------------------------------------------------------------------ */
/* Specs and controls                                                         */
/* ------------------------------------------------------------------------ */

/* Product of the used axes' samples; only meaningful for a valid spec. */
static int32_t spec_controls(const trim_spec_t* spec)
{
    int32_t n = 1;
    for (int32_t a = 0; a < spec->axes; ++a) n *= spec->samples[a];
    return n;
}

/* The spec a table keeps: unused axes read as one sample of rate 0, so
 * that two tables of the same model compare (and save) equal whatever the
 * caller left in those fields. */
static trim_spec_t spec_canonical(const trim_spec_t* spec)
{
    trim_spec_t c = *spec;
    for (int32_t a = c.axes; a < TRIM_MAX_AXES; ++a) {
        c.samples[a] = 1;
        c.max_rate[a] = 0.0f;
    }
    return c;
}

int trim_spec_valid(const trim_spec_t* spec, char* msg, int msg_size)
{
    if (spec == NULL) {
        set_msg(msg, msg_size, "spec must not be NULL");
        return 0;
    }
    if (spec->axes < 1 || spec->axes > TRIM_MAX_AXES) {
        set_msg(msg, msg_size, "axes must be in [1, %d], got %d", TRIM_MAX_AXES, (int)spec->axes);
        return 0;
    }
    for (int32_t a = 0; a < spec->axes; ++a) {
        if (spec->samples[a] < 1 || spec->samples[a] > TRIM_MAX_SAMPLES) {
            set_msg(msg, msg_size, "samples[%d] must be in [1, %d], got %d", (int)a,
                    TRIM_MAX_SAMPLES, (int)spec->samples[a]);
            return 0;
        }
        if (!(isfinite(spec->max_rate[a]) && spec->max_rate[a] > 0.0f)) {
            set_msg(msg, msg_size, "max_rate[%d] must be finite and > 0, got %g", (int)a,
                    (double)spec->max_rate[a]);
            return 0;
        }
    }
    if (!(isfinite(spec->interval) && spec->interval > 0.0f)) {
        set_msg(msg, msg_size, "interval must be finite and > 0, got %g", (double)spec->interval);
        return 0;
    }
    if (spec->substeps < 1 || spec->substeps > TRIM_MAX_SUBSTEPS) {
        set_msg(msg, msg_size, "substeps must be in [1, %d], got %d", TRIM_MAX_SUBSTEPS,
                (int)spec->substeps);
        return 0;
    }
    /* The world flies dt / (interval / substeps) Euler substeps per planner
     * agent and step (at most 2^20): a substep far below any vehicle's time
     * scale buys no accuracy and makes every step that long (a forged table
     * or snapshot with a denormal interval took 2^20 substeps per agent). */
    double substep = (double)spec->interval / (double)spec->substeps;
    if (substep < TRIM_MIN_SUBSTEP) {
        set_msg(msg, msg_size,
                "interval / substeps (the Euler substep) must be at least %g s, got %g s",
                TRIM_MIN_SUBSTEP, substep);
        return 0;
    }
    /* samples <= 64 on <= 3 axes: the product fits int32 (262,144). */
    uint64_t n = (uint64_t)spec_controls(spec);
    uint64_t bytes = n * n * sizeof(trim_entry_t);
    if (bytes > TRIM_MAX_TABLE_BYTES) {
        set_msg(msg, msg_size,
                "samples give %llu controls, a table of %llu bytes (controls^2 * 40); "
                "at most %llu bytes (256 MiB) are allowed",
                (unsigned long long)n, (unsigned long long)bytes,
                (unsigned long long)TRIM_MAX_TABLE_BYTES);
        return 0;
    }
    return 1;
}

/* Sample i of n on [-max, max]. The integer numerator makes the middle
 * sample of an odd count exactly 0, the ends exactly +-max, and samples i
 * and n-1-i exact negatives of each other (mirror symmetry of the table). */
static float axis_rate(float max_rate, int32_t i, int32_t n)
{
    if (n <= 1) return 0.0f;
    return max_rate * ((float)(2 * i - (n - 1)) / (float)(n - 1));
}

void trim_control_rates(const trim_spec_t* spec, int32_t c, float rates[TRIM_MAX_AXES])
{
    for (int a = 0; a < TRIM_MAX_AXES; ++a) rates[a] = 0.0f;
    /* Out-of-range controls (and a bad axis count) fly straight rather than
     * index past the sampling: the library does not abort. */
    if (spec->axes < 1 || spec->axes > TRIM_MAX_AXES || c < 0) return;
    int32_t rest = c;
    for (int32_t a = 0; a < spec->axes; ++a) {
        int32_t n = spec->samples[a];
        if (n < 1) return;
        rates[a] = axis_rate(spec->max_rate[a], rest % n, n);
        rest /= n;
    }
    if (rest != 0)
        for (int a = 0; a < TRIM_MAX_AXES; ++a) rates[a] = 0.0f;
}

/* The control whose every axis sits at the sample nearest 0: the middle
 * one for odd counts, the one just below 0 for even counts. */
static int32_t spec_straight(const trim_spec_t* spec)
{
    int32_t c = 0, stride = 1;
    for (int32_t a = 0; a < spec->axes; ++a) {
        c += (spec->samples[a] - 1) / 2 * stride;
        stride *= spec->samples[a];
    }
    return c;
}

/* ------------------------------------------------------------------------ */
/* Integration                                                                */
/* ------------------------------------------------------------------------ */

trim_rel_t trim_rel_start(void)
{
    return (trim_rel_t){ .pos = vec3_zero(), .rot = quat_identity(), .k = 0 };
}

/* The substep itself, from the two controls' rates: trim_integrate_step
 * and the table build both come here, the build with the rates looked up
 * once per entry instead of once per substep. */
static inline void rel_step(const float wi[TRIM_MAX_AXES], const float wf[TRIM_MAX_AXES],
                            int32_t substeps, float interval, trim_rel_t* r)
{
    float w[TRIM_MAX_AXES];
    int32_t n = substeps > 0 ? substeps : 1;
    /* Past the interval the rates have reached the target and stay there,
     * as a vehicle given no new control would fly. */
    if (r->k < n) {
        float s = ((float)r->k + 0.5f) / (float)n;
        for (int a = 0; a < TRIM_MAX_AXES; ++a) w[a] = wi[a] + (wf[a] - wi[a]) * s;
    } else {
        for (int a = 0; a < TRIM_MAX_AXES; ++a) w[a] = wf[a];
    }
    float h = interval / (float)n;

    /* Body rates: yaw about +z, pitch about -y (nose up), roll about +x. */
    quat omega = { 0.0f, w[2], -w[1], w[0] };
    quat q = r->rot;
    quat d = quat_mul(q, omega);
    float hh = 0.5f * h;
    r->rot = quat_normalize((quat){ q.w + hh * d.w, q.x + hh * d.x, q.y + hh * d.y, q.z + hh * d.z });

    vec3 f = quat_forward(r->rot);
    r->pos = (vec3){ r->pos.x + f.x * h, r->pos.y + f.y * h, r->pos.z + f.z * h };
    if (r->k < INT32_MAX) r->k += 1;
}

void trim_integrate_step(const trim_spec_t* spec, int32_t ci, int32_t cf, trim_rel_t* r)
{
    float wi[TRIM_MAX_AXES], wf[TRIM_MAX_AXES];
    trim_control_rates(spec, ci, wi);
    trim_control_rates(spec, cf, wf);
    rel_step(wi, wf, spec->substeps, spec->interval, r);
}

trim_pose_t trim_compose(trim_pose_t start, vec3 rel_pos, quat rel_rot, float speed)
{
    /* Fixed order, shared by plans and execution: scale the unit-speed
     * offset, rotate it into the world, add; the orientation is renormalized
     * so that chains of intervals do not drift off the unit sphere. */
    vec3 scaled = { rel_pos.x * speed, rel_pos.y * speed, rel_pos.z * speed };
    vec3 d = quat_rotate(start.rot, scaled);
    trim_pose_t out;
    out.pos = (vec3){ start.pos.x + d.x, start.pos.y + d.y, start.pos.z + d.z };
    out.rot = quat_normalize(quat_mul(start.rot, rel_rot));
    return out;
}

trim_pose_t trim_apply(const trim_table_t* t, trim_pose_t start, int32_t ci, int32_t cf,
                       float speed)
{
    /* A control outside the table leaves the pose where it is. */
    if (t == NULL || t->entries == NULL || ci < 0 || cf < 0 || ci >= t->controls ||
        cf >= t->controls)
        return start;
    const trim_entry_t* e = &t->entries[(size_t)ci * (size_t)t->controls + (size_t)cf];
    return trim_compose(start, e->pos, e->rot, speed);
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                     */
/* ------------------------------------------------------------------------ */

static size_t entries_bytes(int32_t controls)
{
    return (size_t)controls * (size_t)controls * sizeof(trim_entry_t);
}

int trim_table_build(trim_table_t* t, const trim_spec_t* spec, trim_alloc_fn* alloc_fn,
                     void* ctx)
{
    if (t == NULL || !trim_spec_valid(spec, NULL, 0)) return -1;
    if (alloc_fn == NULL) alloc_fn = trim_default_alloc;
    trim_spec_t s = spec_canonical(spec);
    int32_t n = spec_controls(&s);
    trim_entry_t* entries = (trim_entry_t*)alloc_fn(ctx, entries_bytes(n));
    if (entries == NULL) return -1;

    for (int32_t ci = 0; ci < n; ++ci) {
        float wi[TRIM_MAX_AXES];
        trim_control_rates(&s, ci, wi);
        for (int32_t cf = 0; cf < n; ++cf) {
            float wf[TRIM_MAX_AXES];
            trim_control_rates(&s, cf, wf);
            trim_rel_t r = trim_rel_start();
            for (int32_t k = 0; k < s.substeps; ++k) rel_step(wi, wf, s.substeps, s.interval, &r);
            trim_entry_t* e = &entries[(size_t)ci * (size_t)n + (size_t)cf];
            e->pos = r.pos;
            e->facing = quat_forward(r.rot);
            e->rot = r.rot;
        }
    }
    t->spec = s;
    t->controls = n;
    t->straight = spec_straight(&s);
    t->entries = entries;
    return 0;
}

int trim_table_adopt(trim_table_t* t, const trim_spec_t* spec, int32_t controls,
                     trim_entry_t* entries, char* msg, int msg_size)
{
    char why[160];
    if (t == NULL || entries == NULL) {
        set_msg(msg, msg_size, "trim table: t and entries must not be NULL");
        return -1;
    }
    if (!trim_spec_valid(spec, why, sizeof why)) {
        set_msg(msg, msg_size, "bad spec: %s", why);
        return -1;
    }
    trim_spec_t s = spec_canonical(spec);
    if (controls != spec_controls(&s)) {
        set_msg(msg, msg_size, "controls %d does not match the spec's %d", (int)controls,
                (int)spec_controls(&s));
        return -1;
    }
    size_t total = (size_t)controls * (size_t)controls;
    for (size_t i = 0; i < total; ++i) {
        const trim_entry_t* e = &entries[i];
        const float v[10] = { e->pos.x, e->pos.y, e->pos.z, e->facing.x, e->facing.y,
                              e->facing.z, e->rot.w, e->rot.x, e->rot.y, e->rot.z };
        for (int k = 0; k < 10; ++k) {
            if (!isfinite(v[k])) {
                set_msg(msg, msg_size, "entry %zu (initial %zu, final %zu) holds a non-finite value",
                        i, i / (size_t)controls, i % (size_t)controls);
                return -1;
            }
        }
    }
    t->spec = s;
    t->controls = controls;
    t->straight = spec_straight(&s);
    t->entries = entries;
    return 0;
}

void trim_table_free(trim_table_t* t, trim_free_fn* free_fn, void* ctx)
{
    if (t == NULL) return;
    if (t->entries != NULL) {
        if (free_fn == NULL) free_fn = trim_default_free;
        free_fn(ctx, t->entries, entries_bytes(t->controls));
    }
    memset(t, 0, sizeof *t);
}

size_t trim_table_bytes(const trim_table_t* t)
{
    if (t == NULL || t->entries == NULL || t->controls <= 0) return 0;
    return entries_bytes(t->controls);
}

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
    const float v[10] = { e->pos.x,    e->pos.y,    e->pos.z, e->facing.x, e->facing.y,
                          e->facing.z, e->rot.w,    e->rot.x, e->rot.y,    e->rot.z };
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
    e->pos = (vec3){ v[0], v[1], v[2] };
    e->facing = (vec3){ v[3], v[4], v[5] };
    e->rot = (quat){ v[6], v[7], v[8], v[9] };
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
    if (t->controls != spec_controls(&t->spec)) {
        set_msg(msg, msg_size, "trim table %s: controls %d does not match the spec's %d", path,
                (int)t->controls, (int)spec_controls(&t->spec));
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
    trim_spec_t s = spec_canonical(&t->spec);
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
    const char* name;    /* in messages: the path, or the caller's name */
    uint64_t size;       /* bytes in all */
    FILE* file;          /* NULL: read from data */
    const uint8_t* data;
    uint64_t at;         /* bytes of data consumed */
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

static int load_source(trim_table_t* t, trim_source_t* src, trim_alloc_fn* alloc_fn,
                       trim_free_fn* free_fn, void* ctx, char* msg, int msg_size)
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
        set_msg(msg, msg_size, "trim table %s: truncated: expected at least %llu bytes, got %llu",
                path, (unsigned long long)min_bytes, (unsigned long long)got);
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
    if (controls != spec_controls(&s)) {
        set_msg(msg, msg_size, "trim table %s: controls %d does not match the spec's %d", path,
                (int)controls, (int)spec_controls(&s));
        return -1;
    }
    uint64_t expected = file_bytes(controls);
    if (got != expected) {
        set_msg(msg, msg_size, "trim table %s: %s: expected %llu bytes, got %llu", path,
                got < expected ? "truncated" : "trailing data", (unsigned long long)expected,
                (unsigned long long)got);
        return -1;
    }

    size_t bytes = entries_bytes(controls);
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
            set_msg(msg, msg_size,
                    "trim table %s: checksum mismatch (stored %016llx, computed %016llx)", path,
                    (unsigned long long)get_u64(buf), (unsigned long long)h);
            fault = "";
        }
    }
    /* A valid checksum over a non-finite value means the writer itself was
     * wrong, not the disk: still refused, a NaN would poison every plan. */
    if (fault == NULL && first_bad < total) {
        set_msg(msg, msg_size,
                "trim table %s: entry %zu (initial %zu, final %zu) holds a non-finite value", path,
                first_bad, first_bad / (size_t)controls, first_bad % (size_t)controls);
        fault = "";
    }
    if (fault != NULL) {
        if (fault[0] != '\0') set_msg(msg, msg_size, "trim table %s: %s", path, fault);
        free_fn(ctx, entries, bytes);
        return -1;
    }

    t->spec = spec_canonical(&s);
    t->controls = controls;
    t->straight = spec_straight(&s);
    t->entries = entries;
    return 0;
}

int trim_table_load(trim_table_t* t, const char* path, trim_alloc_fn* alloc_fn,
                    trim_free_fn* free_fn, void* ctx, char* msg, int msg_size)
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
    trim_source_t src = { .name = path, .size = size, .file = f };
    int rc = load_source(t, &src, alloc_fn ? alloc_fn : trim_default_alloc,
                         free_fn ? free_fn : trim_default_free, ctx, msg, msg_size);
    fclose(f);
    return rc;
}

int trim_table_load_memory(trim_table_t* t, const void* data, size_t size, const char* name,
                           trim_alloc_fn* alloc_fn, trim_free_fn* free_fn, void* ctx, char* msg,
                           int msg_size)
{
    if (t == NULL || (data == NULL && size > 0)) {
        set_msg(msg, msg_size, "trim table: t and data must not be NULL");
        return -1;
    }
    trim_source_t src = { .name = name ? name : "(memory)", .size = size,
                          .data = (const uint8_t*)data };
    return load_source(t, &src, alloc_fn ? alloc_fn : trim_default_alloc,
                       free_fn ? free_fn : trim_default_free, ctx, msg, msg_size);
}
