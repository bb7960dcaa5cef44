/* Pre-integrated trim trajectories (section 3.2 of the trim-trajectory
 * planning paper); the header says what each function computes, this file
 * how.
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

#include "modules/planner/trim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"

_Static_assert(sizeof(trim_entry_t) == 40, "a trim entry is 10 floats (40 bytes, as in the planning paper)");
_Static_assert(sizeof(float) == sizeof(uint32_t), "the file format stores IEEE binary32 floats");

/* Bounds checked by trim_spec_valid. */
#define TRIM_MAX_SAMPLES 64
#define TRIM_MAX_SUBSTEPS 100000
/* s: the shortest Euler substep (interval / substeps) a spec may ask for. */
#define TRIM_MIN_SUBSTEP 1e-6
/* A table may hold at most this many bytes of entries (controls^2 * 40):
 * about 2,590 controls. The paper's largest model had 80,000 paths, 3.2 MB. */
#define TRIM_MAX_TABLE_BYTES ((uint64_t)256 << 20)

/* Without caller hooks the table lives in the C heap. */
void* trim_heap_alloc(void* ctx, size_t bytes)
{
    (void)ctx;
    return malloc(bytes);
}

void trim_heap_free(void* ctx, void* p, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    free(p);
}

/* ------------------------------------------------------------------------ */
/* Specs and controls                                                         */
/* ------------------------------------------------------------------------ */

/* Product of the used axes' samples; only meaningful for a valid spec. */
int32_t trim_spec_controls(const trim_spec_t* spec)
{
    int32_t n = 1;
    for (int32_t a = 0; a < spec->axes; ++a) n *= spec->samples[a];
    return n;
}

/* The spec a table keeps: unused axes read as one sample of rate 0, so
 * that two tables of the same model compare (and save) equal whatever the
 * caller left in those fields. */
trim_spec_t trim_spec_canonical(const trim_spec_t* spec)
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
            set_msg(msg, msg_size, "samples[%d] must be in [1, %d], got %d", (int)a, TRIM_MAX_SAMPLES,
                    (int)spec->samples[a]);
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
        set_msg(msg, msg_size, "substeps must be in [1, %d], got %d", TRIM_MAX_SUBSTEPS, (int)spec->substeps);
        return 0;
    }
    /* The world flies dt / (interval / substeps) Euler substeps per planner
     * agent and step (at most 2^20): a substep far below any vehicle's time
     * scale buys no accuracy and makes every step that long (a forged table
     * or snapshot with a denormal interval took 2^20 substeps per agent). */
    double substep = (double)spec->interval / (double)spec->substeps;
    if (substep < TRIM_MIN_SUBSTEP) {
        set_msg(msg, msg_size, "interval / substeps (the Euler substep) must be at least %g s, got %g s",
                TRIM_MIN_SUBSTEP, substep);
        return 0;
    }
    /* samples <= 64 on <= 3 axes: the product fits int32 (262,144). */
    uint64_t n = (uint64_t)trim_spec_controls(spec);
    uint64_t bytes = n * n * sizeof(trim_entry_t);
    if (bytes > TRIM_MAX_TABLE_BYTES) {
        set_msg(msg, msg_size,
                "samples give %llu controls, a table of %llu bytes (controls^2 * 40); "
                "at most %llu bytes (256 MiB) are allowed",
                (unsigned long long)n, (unsigned long long)bytes, (unsigned long long)TRIM_MAX_TABLE_BYTES);
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
int32_t trim_spec_straight(const trim_spec_t* spec)
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

trim_rel_t trim_rel_start(void) { return (trim_rel_t){.pos = vec3_zero(), .rot = quat_identity(), .k = 0}; }

/* The substep itself, from the two controls' rates: trim_integrate_step
 * and the table build both come here, the build with the rates looked up
 * once per entry instead of once per substep. */
static inline void rel_step(const float wi[TRIM_MAX_AXES], const float wf[TRIM_MAX_AXES], int32_t substeps,
                            float interval, trim_rel_t* r)
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
    quat omega = {0.0f, w[2], -w[1], w[0]};
    quat q = r->rot;
    quat d = quat_mul(q, omega);
    float hh = 0.5f * h;
    r->rot = quat_normalize((quat){q.w + hh * d.w, q.x + hh * d.x, q.y + hh * d.y, q.z + hh * d.z});

    vec3 f = quat_forward(r->rot);
    r->pos = (vec3){r->pos.x + f.x * h, r->pos.y + f.y * h, r->pos.z + f.z * h};
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
    vec3 scaled = {rel_pos.x * speed, rel_pos.y * speed, rel_pos.z * speed};
    vec3 d = quat_rotate(start.rot, scaled);
    trim_pose_t out;
    out.pos = (vec3){start.pos.x + d.x, start.pos.y + d.y, start.pos.z + d.z};
    out.rot = quat_normalize(quat_mul(start.rot, rel_rot));
    return out;
}

trim_pose_t trim_apply(const trim_table_t* t, trim_pose_t start, int32_t ci, int32_t cf, float speed)
{
    /* A control outside the table leaves the pose where it is. */
    if (t == NULL || t->entries == NULL || ci < 0 || cf < 0 || ci >= t->controls || cf >= t->controls)
        return start;
    const trim_entry_t* e = &t->entries[(size_t)ci * (size_t)t->controls + (size_t)cf];
    return trim_compose(start, e->pos, e->rot, speed);
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                     */
/* ------------------------------------------------------------------------ */

size_t trim_entries_bytes(int32_t controls)
{
    return (size_t)controls * (size_t)controls * sizeof(trim_entry_t);
}

int trim_table_build(trim_table_t* t, const trim_spec_t* spec, trim_alloc_fn* alloc_fn, void* ctx)
{
    if (t == NULL || !trim_spec_valid(spec, NULL, 0)) return -1;
    if (alloc_fn == NULL) alloc_fn = trim_heap_alloc;
    trim_spec_t s = trim_spec_canonical(spec);
    int32_t n = trim_spec_controls(&s);
    trim_entry_t* entries = (trim_entry_t*)alloc_fn(ctx, trim_entries_bytes(n));
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
    t->straight = trim_spec_straight(&s);
    t->entries = entries;
    return 0;
}

int trim_table_adopt(trim_table_t* t, const trim_spec_t* spec, int32_t controls, trim_entry_t* entries,
                     char* msg, int msg_size)
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
    trim_spec_t s = trim_spec_canonical(spec);
    if (controls != trim_spec_controls(&s)) {
        set_msg(msg, msg_size, "controls %d does not match the spec's %d", (int)controls,
                (int)trim_spec_controls(&s));
        return -1;
    }
    size_t total = (size_t)controls * (size_t)controls;
    for (size_t i = 0; i < total; ++i) {
        const trim_entry_t* e = &entries[i];
        const float v[10] = {e->pos.x,    e->pos.y, e->pos.z, e->facing.x, e->facing.y,
                             e->facing.z, e->rot.w, e->rot.x, e->rot.y,    e->rot.z};
        for (int k = 0; k < 10; ++k) {
            if (!isfinite(v[k])) {
                set_msg(msg, msg_size, "entry %zu (initial %zu, final %zu) holds a non-finite value", i,
                        i / (size_t)controls, i % (size_t)controls);
                return -1;
            }
        }
    }
    t->spec = s;
    t->controls = controls;
    t->straight = trim_spec_straight(&s);
    t->entries = entries;
    return 0;
}

void trim_table_free(trim_table_t* t, trim_free_fn* free_fn, void* ctx)
{
    if (t == NULL) return;
    if (t->entries != NULL) {
        if (free_fn == NULL) free_fn = trim_heap_free;
        free_fn(ctx, t->entries, trim_entries_bytes(t->controls));
    }
    memset(t, 0, sizeof *t);
}

size_t trim_table_bytes(const trim_table_t* t)
{
    if (t == NULL || t->entries == NULL || t->controls <= 0) return 0;
    return trim_entries_bytes(t->controls);
}
