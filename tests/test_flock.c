/* The spatial hash and the neighbor kernel against a brute-force O(N^2)
 * reference in double precision, in 2D and 3D, bounded (torus) and
 * unbounded, with and without field of view and neighbor cap; plus edge
 * cases and determinism across thread counts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/world.h"
#include "modules/registry.h"
#include "simd/vec.h"
#include "support.h"

typedef struct flock_case {
    int dims;
    int wrap;
    float fov;    /* rad; 2 pi = off */
    int cap;      /* max_neighbors */
    float offset; /* added to every coordinate (far from the origin) */
    int count;
    float box;       /* side of the spawn box, m */
    int reorder;     /* reorder_interval */
    int shared;      /* 1: every agent gets the same parameters */
    int change_one;  /* 1: one step, then one agent's radius changes */
    int sense_edits; /* 1: a sense-stage system removes agents and drops components */
} flock_case_t;

static shoal_world_t* flock_world(const flock_case_t* fc, int threads, shoal_backend_t backend)
{
    shoal_world_def_t def = shoal_world_default_def();
    def.dimensions = fc->dims;
    def.thread_count = threads;
    def.backend = backend;
    def.seed = 5;
    def.reorder_interval = fc->reorder;
    if (fc->wrap) {
        def.wrap = 1;
        for (int k = 0; k < fc->dims; ++k) {
            def.bounds_min[k] = fc->offset;
            def.bounds_max[k] = fc->offset + fc->box;
        }
    }
    shoal_world_t* w = NULL;
    shoal_error_t err;
    cr_assert_eq(shoal_world_create(&def, &w, &err), SHOAL_OK, "%s", err.message);
    return w;
}

static void add_flockers(shoal_world_t* w, const flock_case_t* fc, uint64_t seed)
{
    for (int i = 0; i < fc->count; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        for (int k = 0; k < 3; ++k) {
            d.position[k] = k < fc->dims
                                ? fc->offset + rng_range(seed, (uint64_t)i, 0, (uint32_t)k, 0.0f, fc->box)
                                : 0.0f;
            d.velocity[k] = k < fc->dims ? rng_range(seed, (uint64_t)i, 1, (uint32_t)k, -2.0f, 2.0f) : 0.0f;
        }
        d.heading = rng_range(seed, (uint64_t)i, 2, 0, -3.0f, 3.0f);
        d.pitch = fc->dims == 3 ? rng_range(seed, (uint64_t)i, 2, 1, -1.0f, 1.0f) : 0.0f;
        d.weights[SHOAL_BEHAVIOR_SEPARATE] =
            fc->shared ? 1.2f : rng_range(seed, (uint64_t)i, 3, 0, 0.5f, 2.0f);
        d.weights[SHOAL_BEHAVIOR_ALIGN] = fc->shared ? 0.8f : rng_range(seed, (uint64_t)i, 3, 1, 0.5f, 2.0f);
        d.weights[SHOAL_BEHAVIOR_COHERE] = fc->shared ? 1.5f : rng_range(seed, (uint64_t)i, 3, 2, 0.5f, 2.0f);
        d.neighbors.radius = fc->shared ? 2.0f : rng_range(seed, (uint64_t)i, 4, 0, 1.0f, 3.0f);
        d.neighbors.fov = fc->fov;
        d.neighbors.max_neighbors = fc->cap;
        d.neighbors.separation_gain = 0.7f;
        d.neighbors.alignment_gain = 1.3f;
        d.neighbors.cohesion_gain = 0.4f;
        /* A fifth of the agents only take part as neighbors. */
        if (i % 5 == 4) {
            d.weights[SHOAL_BEHAVIOR_SEPARATE] = d.weights[SHOAL_BEHAVIOR_ALIGN] =
                d.weights[SHOAL_BEHAVIOR_COHERE] = 0.0f;
        }
        d.vehicle.max_speed = 10.0f;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK, "%s", shoal_world_last_error(w));
    }
}

typedef struct snapshot {
    int n;
    shoal_agent_t* ids;
    shoal_agent_def_t* defs;
    shoal_agent_state_t* states;
} snapshot_t;

static snapshot_t take_snapshot(shoal_world_t* w)
{
    snapshot_t s;
    s.n = shoal_world_agent_count(w);
    s.ids = calloc((size_t)s.n, sizeof *s.ids);
    s.defs = calloc((size_t)s.n, sizeof *s.defs);
    s.states = calloc((size_t)s.n, sizeof *s.states);
    shoal_agent_batch_t b = {.ids = s.ids};
    int32_t got;
    cr_assert_eq(shoal_world_read_agents(w, &b, s.n, &got), SHOAL_OK);
    for (int i = 0; i < s.n; ++i) {
        cr_assert_eq(shoal_agent_get_def(w, s.ids[i], &s.defs[i]), SHOAL_OK);
        cr_assert_eq(shoal_agent_get_state(w, s.ids[i], &s.states[i]), SHOAL_OK);
    }
    return s;
}

static void free_snapshot(snapshot_t* s)
{
    free(s->ids);
    free(s->defs);
    free(s->states);
}

static double min_image_d(double d, double ext, int wrap)
{
    if (!wrap) return d;
    if (d > 0.5 * ext) return d - ext;
    if (d < -0.5 * ext) return d + ext;
    return d;
}

/* V_flock of agent i from the snapshot, and a scale for comparing it: the
 * sum of the absolute values of its terms. Returns 0 when some candidate
 * lies so close to the radius or the field of view's edge that float
 * rounding may decide either way (then no comparison is fair: one
 * neighbor more or less moves the result by a whole term). */
static int reference(const snapshot_t* s, const flock_case_t* fc, int i, double out[3], double scale[3])
{
    const shoal_agent_def_t* di = &s->defs[i];
    const float* xi = s->states[i].position;
    double fwd[3] = {0, 0, 0};
    if (fc->dims == 2) {
        fwd[0] = cos(s->states[i].heading);
        fwd[1] = sin(s->states[i].heading);
    } else {
        const float* q = s->states[i].orientation;
        quat qq = {q[0], q[1], q[2], q[3]};
        vec3 f = quat_forward(qq);
        fwd[0] = f.x;
        fwd[1] = f.y;
        fwd[2] = f.z;
    }
    double r = di->neighbors.radius;
    double fov_cos = di->neighbors.fov >= (double)VEC_TWO_PI ? -1.0 : cos(0.5 * di->neighbors.fov);
    /* Collect neighbors with their distances. */
    int* nb = malloc((size_t)s->n * sizeof *nb);
    double* d2s = malloc((size_t)s->n * sizeof *d2s);
    int m = 0, ambiguous = 0;
    for (int j = 0; j < s->n; ++j) {
        if (j == i) continue;
        double d[3];
        for (int k = 0; k < 3; ++k)
            d[k] = min_image_d((double)s->states[j].position[k] - xi[k], fc->box, fc->wrap && k < fc->dims);
        double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        if (fabs(d2 - r * r) <= 1e-5 * r * r) ambiguous = 1;
        if (d2 > r * r) continue;
        double dot = fwd[0] * d[0] + fwd[1] * d[1] + fwd[2] * d[2];
        if (fov_cos > -1.0 && fabs(dot - fov_cos * sqrt(d2)) <= 1e-5 * sqrt(d2)) ambiguous = 1;
        if (fov_cos > -1.0 && dot < fov_cos * sqrt(d2)) continue;
        nb[m] = j;
        d2s[m] = d2;
        m++;
    }
    if (fc->cap > 0 && m > fc->cap) { /* keep the nearest cap */
        for (int a = 0; a < fc->cap; ++a)
            for (int b = a + 1; b < m; ++b)
                if (d2s[b] < d2s[a]) {
                    double t = d2s[a];
                    d2s[a] = d2s[b];
                    d2s[b] = t;
                    int u = nb[a];
                    nb[a] = nb[b];
                    nb[b] = u;
                }
        m = fc->cap;
    }
    double sep[3] = {0}, ali[3] = {0}, coh[3] = {0}, asep[3] = {0}, aali[3] = {0}, acoh[3] = {0};
    for (int a = 0; a < m; ++a) {
        int j = nb[a];
        double d[3];
        for (int k = 0; k < 3; ++k)
            d[k] = min_image_d((double)s->states[j].position[k] - xi[k], fc->box, fc->wrap && k < fc->dims);
        double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        for (int k = 0; k < 3; ++k) {
            sep[k] += -d[k] / d2;
            asep[k] += fabs(d[k] / d2);
            ali[k] += s->states[j].velocity[k];
            aali[k] += fabs(s->states[j].velocity[k]);
            coh[k] += d[k];
            acoh[k] += fabs(d[k]);
        }
    }
    double ks = di->neighbors.separation_gain * di->weights[SHOAL_BEHAVIOR_SEPARATE];
    double ka = m ? di->neighbors.alignment_gain * di->weights[SHOAL_BEHAVIOR_ALIGN] / m : 0;
    double kc = m ? di->neighbors.cohesion_gain * di->weights[SHOAL_BEHAVIOR_COHERE] / m : 0;
    for (int k = 0; k < 3; ++k) {
        out[k] = ks * sep[k] + ka * ali[k] + kc * coh[k];
        scale[k] = ks * asep[k] + ka * aali[k] + kc * acoh[k];
    }
    free(nb);
    free(d2s);
    return !ambiguous;
}

/* After the spatial hash (a user system in the sense stage runs after the
 * built-in ones): remove every 7th agent of the snapshot (applied at the
 * stage boundary, which moves rows) and turn off the flocking behaviors of
 * every 11th (the setter drops its neighbors row at once). */
static int removed_in_sense(int i) { return i % 7 == 3; }
static int dropped_in_sense(int i) { return i % 11 == 5; }

static shoal_status_t sense_edits(shoal_world_t* w, float dt, void* ctx)
{
    (void)dt;
    const snapshot_t* s = (const snapshot_t*)ctx;
    for (int i = 0; i < s->n; ++i) {
        if (removed_in_sense(i)) cr_assert_eq(shoal_agent_remove(w, s->ids[i]), SHOAL_OK);
        if (dropped_in_sense(i) && !removed_in_sense(i))
            for (int b = SHOAL_BEHAVIOR_SEPARATE; b <= SHOAL_BEHAVIOR_COHERE; ++b)
                cr_assert_eq(shoal_agent_set_behavior(w, s->ids[i], (shoal_behavior_t)b, 0.0f), SHOAL_OK);
    }
    return SHOAL_OK;
}

static void check_against_brute_force(flock_case_t fc)
{
    shoal_world_t* w = flock_world(&fc, 1, SHOAL_BACKEND_SERIAL);
    add_flockers(w, &fc, 17);
    /* Integrate and control must not run: the test reads the desired
     * velocity the decide stage left, from the state before the step. */
    cr_assert_eq(shoal_world_set_system_enabled(w, "control", 0), SHOAL_OK);
    cr_assert_eq(shoal_world_set_system_enabled(w, "integrate", 0), SHOAL_OK);
    if (fc.change_one) {
        /* A step with the parameters as they are, then a new radius for
         * one agent that takes part: the next step must use it. */
        step_n(w, 1, 0.01f);
        snapshot_t before = take_snapshot(w);
        int i = 0;
        while (before.defs[i].weights[SHOAL_BEHAVIOR_SEPARATE] == 0.0f) ++i;
        shoal_neighbors_t n = before.defs[i].neighbors;
        n.radius *= 1.4f;
        cr_assert_eq(shoal_agent_set_neighbors(w, before.ids[i], &n), SHOAL_OK);
        free_snapshot(&before);
    }
    snapshot_t s = take_snapshot(w);
    if (fc.sense_edits)
        cr_assert_eq(shoal_world_add_system(w, "sense_edits", SHOAL_STAGE_SENSE, sense_edits, &s), SHOAL_OK);
    step_n(w, 1, 0.01f);
    int checked = 0, with_neighbors = 0, skipped = 0;
    for (int i = 0; i < s.n; ++i) {
        if (s.defs[i].weights[SHOAL_BEHAVIOR_SEPARATE] == 0.0f) continue;
        /* Removed agents are gone; agents that lost the behaviors get none
         * of it. The others still see every agent as the hash sensed it. */
        if (fc.sense_edits && (removed_in_sense(i) || dropped_in_sense(i))) continue;
        double ref[3], scale[3];
        if (!reference(&s, &fc, i, ref, scale)) {
            skipped++;
            continue;
        }
        int32_t row = w->slots[s.ids[i].index1 - 1].row;
        float got[3] = {AGENT_F(w, AC_DESIRED_X)[row], AGENT_F(w, AC_DESIRED_Y)[row],
                        fc.dims == 3 ? AGENT_F(w, AC_DESIRED_Z)[row] : 0.0f};
        for (int k = 0; k < fc.dims; ++k) {
            double tol = 1e-5 * (scale[k] + 1e-6);
            cr_assert_leq(fabs(got[k] - ref[k]), tol,
                          "agent %d axis %d: got %.9g, reference %.9g (scale %.3g) [dims %d wrap %d "
                          "fov %g cap %d offset %g]",
                          i, k, (double)got[k], ref[k], scale[k], fc.dims, fc.wrap, (double)fc.fov, fc.cap,
                          (double)fc.offset);
        }
        checked++;
        with_neighbors += scale[0] > 0.0;
    }
    cr_assert_gt(checked, fc.sense_edits ? fc.count / 3 : fc.count / 2);
    cr_assert_lt(skipped, checked / 20 + 5, "%d agents had a candidate on the edge of float rounding",
                 skipped);
    cr_assert_gt(with_neighbors, checked / 2, "the density gives most agents neighbors");
    free_snapshot(&s);
    shoal_world_destroy(w);
}

static void sweep(int dims)
{
    /* Densities: about 6-15 neighbors per agent in both dimensions. */
    float box = dims == 2 ? 24.0f : 11.0f;
    for (int wrap = 0; wrap <= 1; ++wrap)
        for (int fov = 0; fov <= 1; ++fov)
            for (int cap = 0; cap <= 1; ++cap) {
                flock_case_t fc = {
                    .dims = dims,
                    .wrap = wrap,
                    .fov = fov ? 2.1f : VEC_TWO_PI,
                    .cap = cap ? 4 : 0,
                    .count = 700,
                    .box = box,
                    .reorder = 8,
                };
                check_against_brute_force(fc);
            }
}

Test(flock, matches_brute_force_2d, .timeout = 60) { sweep(2); }
Test(flock, matches_brute_force_3d, .timeout = 60) { sweep(3); }

/* One parameter set for the whole flock (the pass then reads one row of
 * parameters for every agent), and the same after one agent's radius
 * changed (the pass must see that the parameters differ again). */
Test(flock, shared_parameters_match_brute_force, .timeout = 60)
{
    for (int dims = 2; dims <= 3; ++dims)
        for (int change = 0; change <= 1; ++change) {
            flock_case_t fc = {
                .dims = dims,
                .wrap = 1,
                .fov = VEC_TWO_PI,
                .count = 700,
                .box = dims == 2 ? 24.0f : 11.0f,
                .reorder = 8,
                .shared = 1,
                .change_one = change,
            };
            check_against_brute_force(fc);
        }
}

/* The neighbors pass redoes its check of the parameter columns when the
 * component's version moves: a definition written again as it was leaves
 * it alone, a changed one moves it. */
Test(flock, component_version_moves_only_when_a_row_changes)
{
    flock_case_t fc = {
        .dims = 2,
        .wrap = 1,
        .fov = VEC_TWO_PI,
        .count = 50,
        .box = 24.0f,
        .reorder = 8,
        .shared = 1,
    };
    shoal_world_t* w = flock_world(&fc, 1, SHOAL_BACKEND_SERIAL);
    add_flockers(w, &fc, 3);
    snapshot_t s = take_snapshot(w);
    const uint64_t* version = &w->comps[COMP_NEIGHBORS].version;
    uint64_t v0 = *version;
    shoal_neighbors_t n = s.defs[0].neighbors;
    cr_assert_eq(shoal_agent_set_neighbors(w, s.ids[0], &n), SHOAL_OK);
    cr_assert_eq(*version, v0, "the same values written again");
    cr_assert_eq(shoal_agent_set_behavior(w, s.ids[0], SHOAL_BEHAVIOR_WANDER, 1.0f), SHOAL_OK);
    cr_assert_eq(*version, v0, "another component's weight");
    n.radius += 0.25f;
    cr_assert_eq(shoal_agent_set_neighbors(w, s.ids[0], &n), SHOAL_OK);
    cr_assert_neq(*version, v0, "a new radius");
    free_snapshot(&s);
    shoal_world_destroy(w);
}

/* Agents removed, and components dropped, by a system that runs after the
 * spatial hash: the neighbors pass of that step writes each remaining agent's
 * own row with its own parameters (bounded and unbounded, shared and mixed
 * parameters). */
Test(flock, edits_after_the_spatial_hash_match_brute_force, .timeout = 60)
{
    for (int dims = 2; dims <= 3; ++dims)
        for (int wrap = 0; wrap <= 1; ++wrap)
            for (int shared = 0; shared <= 1; ++shared) {
                flock_case_t fc = {.dims = dims,
                                   .wrap = wrap,
                                   .fov = VEC_TWO_PI,
                                   .count = 700,
                                   .box = dims == 2 ? 24.0f : 11.0f,
                                   .reorder = 8,
                                   .shared = shared,
                                   .sense_edits = 1};
                check_against_brute_force(fc);
            }
}

/* Torus rows with more agents than a worker's strip holds (2,048
 * candidates), so strips move their last columns to the front and go on. */
Test(flock, long_strips_match_brute_force, .timeout = 120)
{
    flock_case_t two = {
        .dims = 2,
        .wrap = 1,
        .fov = VEC_TWO_PI,
        .count = 8000,
        .box = 24.0f,
        .reorder = 8,
    };
    check_against_brute_force(two);
    flock_case_t three = {
        .dims = 3,
        .wrap = 1,
        .fov = VEC_TWO_PI,
        .count = 7000,
        .box = 11.0f,
        .reorder = 8,
    };
    check_against_brute_force(three);
}

Test(flock, matches_brute_force_far_from_origin, .timeout = 60)
{
    /* Unbounded cells at coordinates of 1e6 m: far outside any grid. */
    flock_case_t fc2 = {
        .dims = 2,
        .fov = VEC_TWO_PI,
        .offset = 1.0e6f,
        .count = 500,
        .box = 24.0f,
        .reorder = 8,
    };
    check_against_brute_force(fc2);
    flock_case_t fc3 = {
        .dims = 3,
        .fov = VEC_TWO_PI,
        .offset = -1.0e6f,
        .count = 500,
        .box = 11.0f,
        .reorder = 8,
    };
    check_against_brute_force(fc3);
    /* And a torus whose box sits there. */
    flock_case_t ft = {
        .dims = 2,
        .wrap = 1,
        .fov = VEC_TWO_PI,
        .offset = 1.0e6f,
        .count = 500,
        .box = 24.0f,
        .reorder = 8,
    };
    check_against_brute_force(ft);
}

Test(flock, neighbors_are_found_across_the_torus_edge)
{
    flock_case_t fc = {
        .dims = 2,
        .wrap = 1,
        .fov = VEC_TWO_PI,
        .box = 20.0f,
        .reorder = 8,
    };
    shoal_world_t* w = flock_world(&fc, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_COHERE] = 1.0f;
    d.neighbors.radius = 1.0f;
    d.position[0] = 0.2f;
    d.position[1] = 5.0f;
    shoal_agent_t a, b;
    cr_assert_eq(shoal_agent_add(w, &d, &a), SHOAL_OK);
    d.position[0] = 19.8f; /* 0.4 m away through the edge */
    cr_assert_eq(shoal_agent_add(w, &d, &b), SHOAL_OK);
    cr_assert_eq(shoal_world_set_system_enabled(w, "integrate", 0), SHOAL_OK);
    step_n(w, 1, 0.01f);
    float da = AGENT_F(w, AC_DESIRED_X)[w->slots[a.index1 - 1].row];
    float db = AGENT_F(w, AC_DESIRED_X)[w->slots[b.index1 - 1].row];
    cr_assert_float_eq(da, -0.4f, 1e-5f, "cohesion of the agent at 0.2 points through the edge: %g", da);
    cr_assert_float_eq(db, 0.4f, 1e-5f, "%g", db);
    shoal_world_destroy(w);
}

Test(flock, agents_crossing_the_edge_stay_in_the_box)
{
    flock_case_t fc = {
        .dims = 2,
        .wrap = 1,
        .fov = VEC_TWO_PI,
        .box = 10.0f,
        .reorder = 8,
    };
    shoal_world_t* w = flock_world(&fc, 1, SHOAL_BACKEND_SERIAL);
    shoal_agent_def_t d = shoal_agent_default_def();
    d.weights[SHOAL_BEHAVIOR_SEEK] = 1.0f;
    d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
    d.target[0] = 1000.0f; /* keeps driving +x through the edge */
    d.position[1] = 5.0f;
    d.velocity[0] = 5.0f;
    shoal_agent_t id;
    cr_assert_eq(shoal_agent_add(w, &d, &id), SHOAL_OK);
    int wrapped = 0;
    float prev = 0.0f;
    for (int s = 0; s < 600; ++s) {
        step_n(w, 1, 1.0f / 60.0f);
        shoal_agent_state_t st;
        shoal_agent_get_state(w, id, &st);
        cr_assert(st.position[0] >= 0.0f && st.position[0] < 10.0f, "x = %g", st.position[0]);
        if (st.position[0] < prev) wrapped++;
        prev = st.position[0];
    }
    cr_assert_geq(wrapped, 2, "crossed the edge %d times", wrapped);
    shoal_world_destroy(w);
}

static void all_at_one_point(int dims)
{
    flock_case_t fc = {
        .dims = dims,
        .fov = VEC_TWO_PI,
        .box = 1.0f,
        .reorder = 8,
    };
    shoal_world_t* w = flock_world(&fc, 1, SHOAL_BACKEND_SERIAL);
    for (int i = 0; i < 300; ++i) {
        shoal_agent_def_t d = shoal_agent_default_def();
        d.position[0] = 3.0f;
        d.position[1] = -2.0f;
        d.weights[SHOAL_BEHAVIOR_SEPARATE] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_ALIGN] = 1.0f;
        d.weights[SHOAL_BEHAVIOR_COHERE] = 1.0f;
        d.neighbors.max_neighbors = i % 2 ? 7 : 0;
        cr_assert_eq(shoal_agent_add(w, &d, NULL), SHOAL_OK);
    }
    step_n(w, 30, 1.0f / 60.0f);
    int n = shoal_world_agent_count(w);
    float* pos = calloc((size_t)n * 3, sizeof *pos);
    shoal_agent_batch_t b = {.positions = pos};
    int32_t got;
    shoal_world_read_agents(w, &b, n, &got);
    float spread = 0.0f;
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) cr_assert(isfinite(pos[3 * i + k]), "agent %d is not finite", i);
        spread = fmaxf(spread, fabsf(pos[3 * i] - 3.0f));
    }
    cr_assert_gt(spread, 0.01f, "coincident agents separate");
    for (int i = 0; i < n; ++i) {
        cr_assert(isfinite(AGENT_F(w, AC_DESIRED_X)[i]) && isfinite(AGENT_F(w, AC_DESIRED_Y)[i]));
    }
    free(pos);
    shoal_world_destroy(w);
}

Test(flock, all_agents_at_one_point_give_no_nan_2d) { all_at_one_point(2); }
Test(flock, all_agents_at_one_point_give_no_nan_3d) { all_at_one_point(3); }

/* The state hash after `steps` steps of a case's flock (seed `seed`). */
static uint64_t case_hash(flock_case_t fc, int threads, shoal_backend_t backend, uint64_t seed, int steps)
{
    shoal_world_t* w = flock_world(&fc, threads, backend);
    add_flockers(w, &fc, seed);
    step_n(w, steps, 1.0f / 60.0f);
    uint64_t h = shoal_world_state_hash(w);
    shoal_world_destroy(w);
    return h;
}

static uint64_t flock_hash(int dims, int wrap, int threads, shoal_backend_t backend, int reorder)
{
    flock_case_t fc = {
        .dims = dims,
        .wrap = wrap,
        .fov = 2.5f,
        .cap = 6,
        .count = 3000,
        .box = dims == 2 ? 60.0f : 18.0f,
        .reorder = reorder,
    };
    return case_hash(fc, threads, backend, 23, 40);
}

static void determinism(int dims)
{
    for (int wrap = 0; wrap <= 1; ++wrap) {
        uint64_t ref = flock_hash(dims, wrap, 1, SHOAL_BACKEND_SERIAL, 8);
        for (int t = 2; t <= 3; ++t)
            cr_assert_eq(flock_hash(dims, wrap, t, SHOAL_BACKEND_OPENMP, 8), ref,
                         "%dD wrap %d: %d OpenMP threads differ from serial", dims, wrap, t);
        cr_assert_eq(flock_hash(dims, wrap, 1, SHOAL_BACKEND_SERIAL, 8), ref, "repeat differs");
    }
}

/* Dense rows that refill strips, a shared parameter set, no field of view
 * or cap (two agents per kernel pass): one hash for 1, 2 and 3 threads. */
static uint64_t dense_hash(int dims, int threads, shoal_backend_t backend)
{
    flock_case_t fc = {
        .dims = dims,
        .wrap = 1,
        .fov = VEC_TWO_PI,
        .count = dims == 2 ? 8000 : 7000,
        .box = dims == 2 ? 24.0f : 11.0f,
        .reorder = 8,
        .shared = 1,
    };
    return case_hash(fc, threads, backend, 29, 10);
}

Test(flock, one_hash_for_any_thread_count_with_long_strips, .timeout = 120)
{
    for (int dims = 2; dims <= 3; ++dims) {
        uint64_t ref = dense_hash(dims, 1, SHOAL_BACKEND_SERIAL);
        for (int t = 2; t <= 3; ++t)
            cr_assert_eq(dense_hash(dims, t, SHOAL_BACKEND_OPENMP), ref, "%dD: %d threads differ", dims, t);
    }
}

Test(flock, one_hash_for_any_thread_count_2d, .timeout = 120) { determinism(2); }
Test(flock, one_hash_for_any_thread_count_3d, .timeout = 120) { determinism(3); }

Test(flock, reordering_storage_keeps_handles_and_results)
{
    /* Reordering changes only the order of summation inside a cell: over a
     * few steps the two runs agree to float rounding, and every handle
     * still names the same agent (checked through its user value). */
    flock_case_t fc = {
        .dims = 2,
        .wrap = 1,
        .fov = 2.5f,
        .cap = 6,
        .count = 2000,
        .box = 50.0f,
        .reorder = 1,
    };
    shoal_world_t* w1 = flock_world(&fc, 1, SHOAL_BACKEND_SERIAL);
    fc.reorder = 0;
    shoal_world_t* w0 = flock_world(&fc, 1, SHOAL_BACKEND_SERIAL);
    add_flockers(w1, &fc, 3);
    add_flockers(w0, &fc, 3);
    snapshot_t s = take_snapshot(w0); /* the same slots exist in both worlds */
    /* Handles of w1: same index and generation, its own world tag. */
    shoal_agent_t* ids1 = calloc((size_t)s.n, sizeof *ids1);
    shoal_agent_batch_t b1 = {.ids = ids1};
    int32_t got;
    shoal_world_read_agents(w1, &b1, s.n, &got);
    for (int i = 0; i < s.n; ++i)
        cr_assert_eq(shoal_agent_set_user_value(w1, ids1[i], (uint64_t)ids1[i].index1), SHOAL_OK);
    step_n(w1, 5, 1.0f / 60.0f);
    step_n(w0, 5, 1.0f / 60.0f);
    for (int i = 0; i < s.n; ++i) {
        shoal_agent_t id1 = ids1[i];
        uint64_t v;
        cr_assert_eq(shoal_agent_get_user_value(w1, id1, &v), SHOAL_OK);
        cr_assert_eq(v, id1.index1, "a reorder moved an agent away from its handle");
        shoal_agent_t id0 = id1;
        id0.world0 = s.ids[0].world0;
        shoal_agent_state_t a0, a1;
        cr_assert_eq(shoal_agent_get_state(w0, id0, &a0), SHOAL_OK);
        cr_assert_eq(shoal_agent_get_state(w1, id1, &a1), SHOAL_OK);
        for (int k = 0; k < 2; ++k)
            cr_assert_float_eq(a0.position[k], a1.position[k], 1e-3f, "agent %d axis %d", i, k);
    }
    free(ids1);
    free_snapshot(&s);
    shoal_world_destroy(w0);
    shoal_world_destroy(w1);
}
