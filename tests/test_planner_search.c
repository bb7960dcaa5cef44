/* Planner search (sections 3.1, 3.3 and 5 of the trim-trajectory planning
 * paper: online path planning over pre-integrated trim trajectories):
 * behaviors stay in [0, 1] and follow the paper's Seek formula; the sphere
 * scene agrees with a brute-force exact test in double; the best-first
 * search returns the optimum of exhaustive enumeration on small trees; the
 * strategies visit the states they should, always include the straight
 * control and steer around a wall; bad inputs give messages; results repeat
 * bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simd/vec.h"
#include "modules/planner/planner_search.h"
#include "modules/planner/trim.h"
#include "support.h"

static vec3 uniform3(uint64_t* s, float lo, float hi, int dims)
{
    vec3 v = {uniform(s, lo, hi), uniform(s, lo, hi), uniform(s, lo, hi)};
    if (dims == 2) v.z = 0.0f;
    return v;
}

static void* test_alloc(void* ctx, size_t bytes)
{
    (void)ctx;
    return malloc(bytes);
}

static void test_free(void* ctx, void* p, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    free(p);
}

static trim_table_t build_table(int axes, int samples, float max_rate, float interval, int substeps)
{
    trim_spec_t spec;
    memset(&spec, 0, sizeof spec);
    spec.axes = axes;
    for (int a = 0; a < TRIM_MAX_AXES; ++a) spec.samples[a] = 1;
    for (int a = 0; a < axes; ++a) {
        spec.samples[a] = samples;
        spec.max_rate[a] = max_rate;
    }
    spec.interval = interval;
    spec.substeps = substeps;
    trim_table_t t;
    memset(&t, 0, sizeof t);
    cr_assert_eq(trim_table_build(&t, &spec, test_alloc, NULL), 0, "trim_table_build");
    return t;
}

/* A scene in 16-byte aligned heap memory. */
typedef struct test_scene {
    void* memory;
    plan_scene_t* scene;
} test_scene_t;

static test_scene_t make_scene(const plan_sphere_t* spheres, int32_t count, float horizon)
{
    test_scene_t ts;
    size_t bytes = plan_scene_bytes(count);
    cr_assert_gt(bytes, 0);
    ts.memory = aligned_alloc(16, (bytes + 15u) & ~(size_t)15u);
    cr_assert_not_null(ts.memory);
    ts.scene = plan_scene_build(ts.memory, spheres, count, horizon);
    cr_assert_not_null(ts.scene, "plan_scene_build");
    return ts;
}

typedef struct test_scratch {
    void* memory;
    plan_scratch_t s;
} test_scratch_t;

static test_scratch_t make_scratch(int32_t nodes)
{
    test_scratch_t ts;
    size_t bytes = plan_scratch_bytes(nodes);
    ts.memory = malloc(bytes);
    cr_assert_not_null(ts.memory);
    plan_scratch_init(&ts.s, ts.memory, bytes);
    cr_assert_geq(ts.s.node_capacity, nodes);
    return ts;
}

/* ---- 1. Behaviors in [0, 1], Composite, bounded ------------------------- */

static plan_segment_t random_segment(uint64_t* rng, int degenerate)
{
    plan_segment_t s;
    s.t0 = uniform(rng, 0.0f, 5.0f);
    s.duration = uniform(rng, 0.0f, 2.0f);
    s.p0 = uniform3(rng, -20.0f, 20.0f, 3);
    s.p1 = degenerate & 1 ? s.p0 : vec3_add(s.p0, uniform3(rng, -3.0f, 3.0f, 3));
    s.d0 = vec3_normalize(uniform3(rng, -1.0f, 1.0f, 3));
    s.d1 = degenerate & 4 ? vec3_zero() : vec3_normalize(uniform3(rng, -1.0f, 1.0f, 3));
    s.q1 = quat_identity();
    return s;
}

Test(planner_search, behaviors_stay_in_unit_range_and_composite_is_the_product)
{
    uint64_t rng = 11;
    plan_sphere_t spheres[40];
    for (int i = 0; i < 40; ++i)
        spheres[i] = (plan_sphere_t){
            .center = uniform3(&rng, -20.0f, 20.0f, 3),
            .radius = uniform(&rng, 0.1f, 3.0f),
            .velocity = i % 3 ? vec3_zero() : uniform3(&rng, -1.0f, 1.0f, 3),
        };
    test_scene_t ts = make_scene(spheres, 40, 8.0f);
    int seen_zero = 0, seen_one = 0, seen_mid = 0;
    for (int it = 0; it < 20000; ++it) {
        int degenerate = it % 8; /* bit 0: p0 == p1; bit 1: target == p1; bit 2: d1 = 0 */
        plan_segment_t s = random_segment(&rng, degenerate);
        plan_behavior_t b[5];
        for (int k = 0; k < 5; ++k) {
            b[k].kind = (plan_behavior_kind_t)k;
            b[k].point = degenerate & 2 ? s.p1 : uniform3(&rng, -30.0f, 30.0f, 3);
            b[k].velocity = degenerate & 2 ? vec3_zero() : uniform3(&rng, -2.0f, 2.0f, 3);
        }
        float product = 1.0f;
        for (int k = 0; k < 5; ++k) {
            float g = plan_goodness(&b[k], &s, ts.scene, 0.5f);
            cr_assert(g >= 0.0f && g <= 1.0f, "kind %d gave %g (iteration %d)", k, (double)g, it);
            seen_zero += g == 0.0f;
            seen_one += g == 1.0f;
            seen_mid += g > 0.0f && g < 1.0f;
            product *= g;
        }
        float comp = plan_composite(b, 5, &s, ts.scene, 0.5f);
        cr_assert(comp == product, "composite %g != product %g", (double)comp, (double)product);
        /* Subsets too, in another order of kinds. */
        plan_behavior_t two[2] = {b[4], b[1]};
        float p2 = plan_goodness(&b[4], &s, ts.scene, 0.5f) * plan_goodness(&b[1], &s, ts.scene, 0.5f);
        cr_assert(plan_composite(two, 2, &s, ts.scene, 0.5f) == p2);
    }
    cr_assert_gt(seen_zero, 0);
    cr_assert_gt(seen_one, 0);
    cr_assert_gt(seen_mid, 1000);

    /* NaN inputs still give a number in [0, 1]. */
    plan_segment_t s = random_segment(&rng, 0);
    s.p1.x = NAN;
    for (int k = 0; k < 5; ++k) {
        plan_behavior_t b = {(plan_behavior_kind_t)k, vec3_make(1, 2, 3), vec3_zero()};
        float g = plan_goodness(&b, &s, ts.scene, 0.5f);
        cr_assert(g >= 0.0f && g <= 1.0f, "NaN segment, kind %d: %g", k, (double)g);
    }
    cr_assert(plan_composite(NULL, 0, &s, NULL, 0.0f) == 1.0f);
    /* AvoidCollision without a scene: nothing to hit. */
    plan_behavior_t avoid = {PLAN_AVOID_COLLISION, vec3_zero(), vec3_zero()};
    cr_assert(plan_goodness(&avoid, &s, NULL, 1.0f) == 1.0f);

    cr_assert(plan_bounded(0.0f) == 0.0f);
    cr_assert(plan_bounded(-1.0f) == 0.0f);
    cr_assert(plan_bounded(NAN) == 0.0f);
    cr_assert(plan_bounded(INFINITY) == 1.0f);
    cr_assert(fabsf(plan_bounded(1.0f) - 0.5f) < 1e-7f);
    cr_assert(fabsf(plan_bounded(3.0f) - 0.75f) < 1e-7f);
    float prev = 0.0f;
    for (int i = 1; i <= 2000; ++i) {
        float h = 1e-3f * (float)i * (float)i;
        float f = plan_bounded(h);
        cr_assert(f >= prev && f <= 1.0f, "not monotone at h = %g", (double)h);
        prev = f;
    }
    cr_assert_gt(plan_bounded(1e7f), 0.999999f);
    free(ts.memory);
}

/* ---- 2. Seek and its relatives ------------------------------------------ */

static plan_segment_t segment(vec3 p0, vec3 p1, vec3 d1, float t0, float duration)
{
    plan_segment_t s;
    s.t0 = t0;
    s.duration = duration;
    s.p0 = p0;
    s.p1 = p1;
    s.d0 = d1;
    s.d1 = d1;
    s.q1 = quat_identity();
    return s;
}

Test(planner_search, seek_follows_the_papers_formula)
{
    vec3 o = vec3_zero(), x = vec3_make(1, 0, 0), y = vec3_make(0, 1, 0);
    plan_behavior_t seek = {PLAN_SEEK, vec3_make(10, 0, 0), vec3_zero()};
    plan_segment_t toward = segment(o, x, x, 0.0f, 1.0f);
    plan_segment_t away = segment(o, vec3_neg(x), vec3_neg(x), 0.0f, 1.0f);
    plan_segment_t across = segment(o, y, y, 0.0f, 1.0f);
    float gt = plan_goodness(&seek, &toward, NULL, 0.0f);
    float ga = plan_goodness(&seek, &away, NULL, 0.0f);
    float gc = plan_goodness(&seek, &across, NULL, 0.0f);
    cr_assert(gt > gc && gc > ga, "toward %g, across %g, away %g", (double)gt, (double)gc, (double)ga);
    cr_assert(fabsf(gt - 1.0f) < 1e-6f, "straight at the target: %g", (double)gt);
    cr_assert(ga < 1e-6f, "straight away: %g", (double)ga);

    /* Hand case: p1 = (1, 0, 0), facing +y, target (4, 4, 0): e = (3, 4)/5,
     * g = 1/4 (1 + 0.8)(1 + 0.6) = 0.72; flee: 1/4 (1 - 0.8)(1 - 0.6) = 0.02. */
    plan_segment_t hand = segment(o, x, y, 1.0f, 1.0f);
    plan_behavior_t b = {PLAN_SEEK, vec3_make(4, 4, 0), vec3_zero()};
    cr_assert(fabsf(plan_goodness(&b, &hand, NULL, 0.0f) - 0.72f) < 1e-6f, "%g",
              (double)plan_goodness(&b, &hand, NULL, 0.0f));
    b.kind = PLAN_FLEE;
    cr_assert(fabsf(plan_goodness(&b, &hand, NULL, 0.0f) - 0.02f) < 1e-6f);
    /* Pursue predicts at t0 + duration = 2 s: (0, 4) + 2 (2, 0) = (4, 4). */
    b = (plan_behavior_t){PLAN_PURSUE, vec3_make(0, 4, 0), vec3_make(2, 0, 0)};
    cr_assert(fabsf(plan_goodness(&b, &hand, NULL, 0.0f) - 0.72f) < 1e-6f, "%g",
              (double)plan_goodness(&b, &hand, NULL, 0.0f));
    b.kind = PLAN_EVADE;
    cr_assert(fabsf(plan_goodness(&b, &hand, NULL, 0.0f) - 0.02f) < 1e-6f);
    /* Seek of the target's position now (not predicted) gives another value. */
    b.kind = PLAN_SEEK;
    cr_assert(fabsf(plan_goodness(&b, &hand, NULL, 0.0f) - 0.72f) > 0.01f);

    /* Degenerate: standing still on the target. Both unit vectors are zero:
     * each factor is 1, g = 1/4. */
    plan_segment_t still = segment(x, x, x, 0.0f, 1.0f);
    plan_behavior_t at = {PLAN_SEEK, x, vec3_zero()};
    cr_assert(plan_goodness(&at, &still, NULL, 0.0f) == 0.25f);
    at.kind = PLAN_FLEE;
    cr_assert(plan_goodness(&at, &still, NULL, 0.0f) == 0.25f);
    /* Moving but facing nowhere (zero d1): the facing factor is 1/2 of its best. */
    plan_segment_t blind = segment(o, x, vec3_zero(), 0.0f, 1.0f);
    cr_assert(fabsf(plan_goodness(&seek, &blind, NULL, 0.0f) - 0.5f) < 1e-6f);
}

/* ---- 3. Scene against brute force --------------------------------------- */

/* Exact in double: the segment relative to the sphere's motion. Returns
 * the distance minus the contact distance (<= 0 is a hit). */
static double brute_gap(const plan_sphere_t* s, vec3 p0, float t0, vec3 p1, float t1, float radius)
{
    double a[3] = {(double)p0.x - (double)s->velocity.x * t0 - s->center.x,
                   (double)p0.y - (double)s->velocity.y * t0 - s->center.y,
                   (double)p0.z - (double)s->velocity.z * t0 - s->center.z};
    double b[3] = {(double)p1.x - (double)s->velocity.x * t1 - s->center.x,
                   (double)p1.y - (double)s->velocity.y * t1 - s->center.y,
                   (double)p1.z - (double)s->velocity.z * t1 - s->center.z};
    double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double len2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    double u = 0.0;
    if (len2 > 0.0) {
        u = -(a[0] * ab[0] + a[1] * ab[1] + a[2] * ab[2]) / len2;
        u = u < 0.0 ? 0.0 : (u > 1.0 ? 1.0 : u);
    }
    double q[3] = {a[0] + u * ab[0], a[1] + u * ab[1], a[2] + u * ab[2]};
    return sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) - ((double)s->radius + radius);
}

static void scene_matches_brute_force(int dims, uint64_t seed)
{
    enum { N = 600 };
    static plan_sphere_t spheres[N];
    uint64_t rng = seed;
    const float horizon = 6.0f;
    for (int i = 0; i < N; ++i) {
        /* Radii from 0.02 to 25 m, log-uniform: eleven levels of cells. */
        float r = 0.02f * powf(2.0f, uniform(&rng, 0.0f, 10.3f));
        if (i == 0) r = 0.02f;
        if (i == 1) r = 25.0f;
        vec3 v = i % 4 == 0 ? uniform3(&rng, -3.0f, 3.0f, dims) : vec3_zero();
        spheres[i] = (plan_sphere_t){
            .center = uniform3(&rng, -200.0f, 200.0f, dims),
            .radius = r,
            .velocity = v,
        };
    }
    /* A few points (radius 0) and a cluster of small spheres. */
    for (int i = 2; i < 12; ++i) spheres[i].radius = 0.0f;
    for (int i = 12; i < 80; ++i) {
        spheres[i].center = uniform3(&rng, -5.0f, 5.0f, dims);
        spheres[i].radius = uniform(&rng, 0.02f, 0.2f);
    }
    test_scene_t ts = make_scene(spheres, N, horizon);
    int hits = 0, misses = 0, ambiguous = 0;
    for (int it = 0; it < 6000; ++it) {
        vec3 p0 = it % 3 == 0 ? uniform3(&rng, -6.0f, 6.0f, dims) : uniform3(&rng, -210.0f, 210.0f, dims);
        float len = it % 5 == 0 ? uniform(&rng, 20.0f, 300.0f) : uniform(&rng, 0.0f, 8.0f);
        if (it % 17 == 0) len = 0.0f;
        vec3 dir = vec3_normalize(uniform3(&rng, -1.0f, 1.0f, dims));
        vec3 p1 = vec3_add(p0, vec3_scale(dir, len));
        if (dims == 2 && it % 9 == 0) {
            /* Off the plane of a flat scene: only spheres reaching up (or
             * down) to the segment count. */
            p0.z = uniform(&rng, -30.0f, 30.0f);
            p1.z = p0.z + uniform(&rng, -3.0f, 3.0f);
        }
        float t0 = uniform(&rng, 0.0f, horizon - 1.0f);
        float t1 = t0 + uniform(&rng, 0.0f, 1.0f);
        if (it % 11 == 0) t1 = horizon;        /* the sweep's end */
        if (it % 13 == 0) t1 = horizon + 4.0f; /* beyond: answered by a scan */
        float radius = it % 7 == 0 ? 0.0f : uniform(&rng, 0.0f, 2.0f);
        double gap = INFINITY;
        for (int i = 0; i < N; ++i) {
            double g = brute_gap(&spheres[i], p0, t0, p1, t1, radius);
            if (g < gap) gap = g;
        }
        int got = plan_scene_hit(ts.scene, p0, t0, p1, t1, radius);
        if (fabs(gap) < 1e-3) {
            ++ambiguous; /* float rounding may go either way */
            continue;
        }
        int want = gap <= 0.0;
        cr_assert_eq(got, want, "dims %d, iteration %d: scene says %d, brute force %d (gap %g)", dims, it,
                     got, want, gap);
        hits += want;
        misses += !want;
    }
    cr_assert_gt(hits, 600, "hits %d", hits);
    cr_assert_gt(misses, 600, "misses %d", misses);
    cr_assert_lt(ambiguous, 20);
    free(ts.memory);
}

Test(planner_search, scene_agrees_with_brute_force_2d) { scene_matches_brute_force(2, 21); }
Test(planner_search, scene_agrees_with_brute_force_3d) { scene_matches_brute_force(3, 22); }

/* Only fast small moving spheres: segments placed where a sphere is at
 * time t, so the sweeps' whole length matters to the index. */
static void scene_moving_matches_brute_force(int dims, uint64_t seed)
{
    enum { N = 300 };
    static plan_sphere_t spheres[N];
    uint64_t rng = seed;
    const float horizon = 6.0f;
    for (int i = 0; i < N; ++i) {
        vec3 dir = vec3_normalize(uniform3(&rng, -1.0f, 1.0f, dims));
        spheres[i] = (plan_sphere_t){
            .center = uniform3(&rng, -100.0f, 100.0f, dims),
            .radius = uniform(&rng, 0.05f, 0.3f),
            .velocity = vec3_scale(dir, uniform(&rng, 2.0f, 6.0f)),
        };
    }
    test_scene_t ts = make_scene(spheres, N, horizon);
    int hits = 0, misses = 0;
    for (int it = 0; it < 6000; ++it) {
        const plan_sphere_t* near = &spheres[rng_splitmix64(&rng) % N];
        float t0 = uniform(&rng, 0.0f, horizon - 0.5f);
        float t1 = fminf(horizon, t0 + uniform(&rng, 0.0f, 1.0f));
        float tm = uniform(&rng, t0, t1);
        vec3 at = vec3_add(near->center, vec3_scale(near->velocity, tm));
        vec3 p0 = vec3_add(at, uniform3(&rng, -1.0f, 1.0f, dims));
        vec3 p1 = vec3_add(at, uniform3(&rng, -1.0f, 1.0f, dims));
        float radius = uniform(&rng, 0.0f, 0.5f);
        double gap = INFINITY;
        for (int i = 0; i < N; ++i) {
            double g = brute_gap(&spheres[i], p0, t0, p1, t1, radius);
            if (g < gap) gap = g;
        }
        if (fabs(gap) < 1e-3) continue;
        int want = gap <= 0.0;
        int got = plan_scene_hit(ts.scene, p0, t0, p1, t1, radius);
        cr_assert_eq(got, want, "dims %d, iteration %d: scene says %d, brute force %d (gap %g)", dims, it,
                     got, want, gap);
        hits += want;
        misses += !want;
    }
    cr_assert_gt(hits, 300, "hits %d", hits);
    cr_assert_gt(misses, 300, "misses %d", misses);
    free(ts.memory);
}

Test(planner_search, scene_moving_spheres_agree_with_brute_force)
{
    scene_moving_matches_brute_force(2, 41);
    scene_moving_matches_brute_force(3, 42);
}

Test(planner_search, scene_moving_sphere_and_bad_input)
{
    /* A sphere crossing the vehicle's path: a hit only when both are there
     * at the same time. */
    plan_sphere_t s = {
        .center = vec3_make(10, -10, 0),
        .radius = 1.0f,
        .velocity = vec3_make(0, 2, 0),
    }; /* at (10, 0) when t = 5 */
    test_scene_t ts = make_scene(&s, 1, 10.0f);
    vec3 a = vec3_make(0, 0, 0), b = vec3_make(20, 0, 0);
    cr_assert_eq(plan_scene_hit(ts.scene, a, 0.0f, b, 10.0f, 0.5f), 1); /* crosses x = 10 at t = 5 */
    cr_assert_eq(plan_scene_hit(ts.scene, a, 6.0f, b, 16.0f, 0.5f), 0); /* there at t = 11 */
    cr_assert_eq(plan_scene_hit(ts.scene, a, 0.0f, b, 2.0f, 0.5f), 0);  /* passes before it */
    cr_assert_eq(plan_scene_hit(ts.scene, vec3_make(10, 0, 0), 5.0f, vec3_make(10, 0, 0), 5.0f, 0.0f), 1);
    /* Static spheres still block at all times. */
    free(ts.memory);

    plan_sphere_t bad = {
        .center = vec3_make(NAN, 0, 0),
        .radius = 1.0f,
        .velocity = vec3_zero(),
    };
    size_t bytes = plan_scene_bytes(1);
    void* mem = aligned_alloc(16, (bytes + 15u) & ~(size_t)15u);
    cr_assert_null(plan_scene_build(mem, &bad, 1, 1.0f));
    bad = (plan_sphere_t){
        .center = vec3_zero(),
        .radius = -1.0f,
        .velocity = vec3_zero(),
    };
    cr_assert_null(plan_scene_build(mem, &bad, 1, 1.0f));
    bad = (plan_sphere_t){
        .center = vec3_zero(),
        .radius = 1.0f,
        .velocity = vec3_make(0, INFINITY, 0),
    };
    cr_assert_null(plan_scene_build(mem, &bad, 1, 1.0f));
    bad = (plan_sphere_t){
        .center = vec3_zero(),
        .radius = 1.0f,
        .velocity = vec3_zero(),
    };
    cr_assert_null(plan_scene_build(mem, &bad, 1, NAN));
    cr_assert_null(plan_scene_build(mem, &bad, -1, 1.0f));
    /* Empty scene: nothing is hit. */
    plan_scene_t* empty = plan_scene_build(mem, NULL, 0, 1.0f);
    cr_assert_not_null(empty);
    cr_assert_eq(plan_scene_hit(empty, a, 0.0f, b, 1.0f, 100.0f), 0);
    free(mem);
    /* The bound grows with the count only. */
    cr_assert_lt(plan_scene_bytes(10), plan_scene_bytes(11));
}

/* ---- 4. Exhaustive search on a small tree ------------------------------- */

static float damping_of(const trim_table_t* t, int32_t c, float damping)
{
    float rates[TRIM_MAX_AXES];
    trim_control_rates(&t->spec, c, rates);
    float worst = 0.0f;
    for (int a = 0; a < t->spec.axes; ++a)
        if (t->spec.max_rate[a] > 0.0f) worst = fmaxf(worst, fabsf(rates[a]) / t->spec.max_rate[a]);
    return 1.0f - damping * worst;
}

/* g of the segment from `from` (executing control ci) under cf at depth k;
 * *crash: AvoidCollision says it hits. */
static float step_goodness(const plan_query_t* q, trim_pose_t from, int32_t ci, int32_t cf, int k,
                           float damping, trim_pose_t* to, int* crash)
{
    const trim_table_t* t = q->table;
    *to = trim_apply(t, from, ci, cf, q->speed);
    plan_segment_t s;
    s.t0 = (float)k * t->spec.interval;
    s.duration = t->spec.interval;
    s.p0 = from.pos;
    s.p1 = to->pos;
    s.d0 = quat_forward(from.rot);
    s.d1 = quat_forward(to->rot);
    s.q1 = to->rot;
    *crash = 0;
    for (int32_t i = 0; i < q->behavior_count; ++i)
        if (q->behaviors[i].kind == PLAN_AVOID_COLLISION &&
            plan_goodness(&q->behaviors[i], &s, q->scene, q->radius) == 0.0f)
            *crash = 1;
    return plan_composite(q->behaviors, q->behavior_count, &s, q->scene, q->radius) *
           damping_of(t, cf, damping);
}

/* How the search ranks candidate leaves: not crashed first, then depth (up
 * to min_depth = 3), then ev. */
typedef struct leaf_key {
    int live, depth;
    float ev, v;
} leaf_key_t;

static int key_better(leaf_key_t a, leaf_key_t b)
{
    if (a.live != b.live) return a.live > b.live;
    if (a.depth != b.depth) return a.depth > b.depth;
    return a.ev > b.ev;
}

static void consider(leaf_key_t k, leaf_key_t* best)
{
    if (best->depth == 0 || key_better(k, *best)) *best = k;
}

Test(planner_search, best_first_matches_exhaustive_search_at_depth_3)
{
    trim_table_t table = build_table(1, 5, 1.2f, 1.0f, 10);
    cr_assert_eq(table.controls, 5);
    test_scratch_t sc = make_scratch(1 + 5 + 25 + 125);
    uint64_t rng = 31;
    int not_straight = 0, with_crashes = 0, clear_depth3 = 0;
    for (int run = 0; run < 300; ++run) {
        enum { NS = 30 };
        plan_sphere_t spheres[NS];
        int ns = run % 4 == 0 ? 0 : NS;
        for (int i = 0; i < ns; ++i)
            spheres[i] = (plan_sphere_t){
                .center = uniform3(&rng, -4.0f, 14.0f, 2),
                .radius = uniform(&rng, 0.2f, 1.5f),
                .velocity = i % 5 == 0 ? uniform3(&rng, -1.0f, 1.0f, 2) : vec3_zero(),
            };
        test_scene_t ts = make_scene(spheres, ns, 3.0f);
        plan_behavior_t beh[2] = {{PLAN_SEEK, uniform3(&rng, -20.0f, 20.0f, 2), vec3_zero()},
                                  {PLAN_AVOID_COLLISION, vec3_zero(), vec3_zero()}};
        if (run % 5 == 1)
            beh[0] = (plan_behavior_t){PLAN_PURSUE, uniform3(&rng, -20.0f, 20.0f, 2),
                                       uniform3(&rng, -2.0f, 2.0f, 2)};
        plan_query_t q;
        memset(&q, 0, sizeof q);
        q.table = &table;
        q.pose = (trim_pose_t){vec3_zero(), quat_from_yaw(uniform(&rng, -3.0f, 3.0f))};
        q.control = (int32_t)(rng_splitmix64(&rng) % 5);
        q.speed = uniform(&rng, 1.0f, 3.0f);
        q.radius = 0.3f;
        q.behaviors = beh;
        q.behavior_count = 2;
        q.scene = ts.scene;
        plan_params_t p = plan_params_default(PLAN_UNIFORM);
        p.k_skip = 1;
        p.max_depth = p.min_depth = 3;
        p.max_expansions = 100000;
        p.optimism = uniform(&rng, -1.0f, 1.0f);
        p.discount = uniform(&rng, 0.5f, 0.95f);
        p.damping = run % 2 ? 0.0f : 0.1f;
        float d = p.discount, rem = p.optimism / (1.0f - d);
        float opt[4] = {rem, d * rem, d * d * rem, d * d * d * rem};

        /* Exhaustive: every (c1, c2, c3), v = g1 + g2 d + g3 d^2; a crashed
         * segment ends its path. */
        leaf_key_t best = {0, 0, 0, 0}, best_under[5];
        float g_first[5];
        int visited = 1, expanded = 1, crashes = 0;
        for (int32_t c1 = 0; c1 < 5; ++c1) {
            trim_pose_t s1, s2, s3;
            int k1, k2, k3;
            best_under[c1] = (leaf_key_t){0, 0, 0, 0};
            float g1 = step_goodness(&q, q.pose, q.control, c1, 0, p.damping, &s1, &k1);
            float v1 = g1;
            g_first[c1] = g1;
            ++visited;
            crashes += k1;
            consider((leaf_key_t){!k1, 1, v1 + opt[1], v1}, &best_under[c1]);
            if (k1) continue;
            ++expanded;
            for (int32_t c2 = 0; c2 < 5; ++c2) {
                float g2 = step_goodness(&q, s1, c1, c2, 1, p.damping, &s2, &k2);
                float v2 = v1 + g2 * d;
                ++visited;
                crashes += k2;
                consider((leaf_key_t){!k2, 2, v2 + opt[2], v2}, &best_under[c1]);
                if (k2) continue;
                ++expanded;
                for (int32_t c3 = 0; c3 < 5; ++c3) {
                    float g3 = step_goodness(&q, s2, c2, c3, 2, p.damping, &s3, &k3);
                    float v3 = v2 + g3 * (d * d);
                    ++visited;
                    crashes += k3;
                    consider((leaf_key_t){!k3, 3, v3 + opt[3], v3}, &best_under[c1]);
                }
            }
        }
        int32_t argmax = 0;
        for (int32_t c = 0; c < 5; ++c) {
            consider(best_under[c], &best);
            if (key_better(best_under[c], best_under[argmax])) argmax = c;
        }

        plan_result_t r;
        char msg[200] = "";
        cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(r.visited, visited, "run %d: visited %d, exhaustive %d", run, r.visited, visited);
        cr_assert_eq(r.expanded, expanded);
        cr_assert_eq(r.budget_hit, 0);
        cr_assert_eq(r.depth, best.depth, "run %d: depth %d, exhaustive %d", run, r.depth, best.depth);
        cr_assert(fabsf(r.value - best.v) <= 1e-5f, "run %d: value %g, exhaustive %g", run, (double)r.value,
                  (double)best.v);
        /* The chosen first control starts an optimal path (ties allowed). */
        leaf_key_t mine = best_under[r.control];
        cr_assert(mine.live == best.live && mine.depth == best.depth && mine.ev >= best.ev - 1e-5f,
                  "run %d: control %d leads to %g, the optimum %g starts with %d", run, r.control,
                  (double)mine.v, (double)best.v, argmax);
        cr_assert(fabsf(r.goodness - g_first[r.control]) <= 1e-6f);
        not_straight += argmax != table.straight;
        with_crashes += crashes > 0;
        clear_depth3 += best.live && best.depth == 3;
        free(ts.memory);
    }
    /* The cases are not all "go straight", obstacles matter, and most runs
     * have a clear path of full depth. */
    cr_assert_gt(not_straight, 60, "%d", not_straight);
    cr_assert_gt(with_crashes, 60, "%d", with_crashes);
    cr_assert_gt(clear_depth3, 120, "%d", clear_depth3);
    free(sc.memory);
    trim_table_free(&table, test_free, NULL);
}

/* ---- 5. Strategies ------------------------------------------------------- */

static plan_query_t base_query(const trim_table_t* t, const plan_behavior_t* b, int32_t nb)
{
    plan_query_t q;
    memset(&q, 0, sizeof q);
    q.table = t;
    q.pose = (trim_pose_t){vec3_zero(), quat_identity()};
    q.control = t->straight;
    q.speed = 2.0f;
    q.radius = 0.5f;
    q.behaviors = b;
    q.behavior_count = nb;
    return q;
}

Test(planner_search, strategies_visit_what_they_should)
{
    trim_table_t t = build_table(1, 17, 1.6f, 1.0f, 10);
    cr_assert_eq(t.controls, 17);
    cr_assert_eq(t.straight, 8);
    int32_t perm[17];
    /* The straight control last: adaptive reads it only through the rule. */
    for (int i = 0; i < 17; ++i) perm[i] = (i + 9) % 17;
    plan_behavior_t ahead = {PLAN_SEEK, vec3_make(50, 0, 0), vec3_zero()};
    plan_query_t q = base_query(&t, &ahead, 1);
    q.permutation = perm;
    test_scratch_t sc = make_scratch(6000);
    plan_result_t r;
    char msg[200] = "";

    /* Single-step: the root and all its successors, whatever the depths say. */
    plan_params_t p = plan_params_default(PLAN_SINGLE_STEP);
    p.max_depth = 6;
    p.min_depth = 3;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(r.visited, 1 + 17);
    cr_assert_eq(r.expanded, 1);
    cr_assert_eq(r.depth, 1);
    cr_assert_eq(r.control, t.straight);

    /* Uniform, k_skip 3: controls 0, 3, ..., 15 and the straight one (8). */
    p = plan_params_default(PLAN_UNIFORM);
    p.k_skip = 3;
    p.max_depth = p.min_depth = 1;
    p.damping = 0.0f;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(r.visited, 1 + 6 + 1);
    cr_assert_eq(r.control, t.straight, "control %d", r.control);

    /* Adaptive, one control at depth 0 (perm[0] = 9) plus the straight one. */
    p = plan_params_default(PLAN_ADAPTIVE);
    p.n_v = 1;
    p.max_depth = p.min_depth = 1;
    p.damping = 0.0f;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(r.visited, 1 + 2);
    cr_assert_eq(r.control, t.straight, "control %d", r.control);
    /* With the offset on the straight control, it is read and not added twice. */
    q.permutation_offset = 16;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(r.visited, 1 + 1);
    q.permutation_offset = 0;

    /* Full trees at depth 3: uniform k_skip 1 visits everything, k_skip 2
     * (9 controls, the straight one among them) fewer, adaptive
     * (9, 5, 3 per state, + straight) fewer still. */
    p = plan_params_default(PLAN_UNIFORM);
    p.max_depth = p.min_depth = 3;
    p.max_expansions = 100000;
    p.k_skip = 1;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(r.visited, 1 + 17 + 289 + 4913);
    cr_assert_eq(r.budget_hit, 0);
    p.k_skip = 2;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    int uniform_visited = r.visited;
    cr_assert_eq(uniform_visited, 1 + 9 + 81 + 729);
    p.strategy = PLAN_ADAPTIVE;
    p.n_v = 9; /* 9, 5, 3 per state (the default collapses from all 17) */
    p.collapse = 0.6f;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_geq(r.visited, 1 + 9 + 9 * 5 + 45 * 3, "adaptive visited %d", r.visited);
    cr_assert_leq(r.visited, 1 + 10 + 10 * 6 + 60 * 4, "adaptive visited %d", r.visited);
    cr_assert_lt(r.visited, uniform_visited);

    /* Budgets: expansions, the pool, time. */
    p = plan_params_default(PLAN_UNIFORM);
    p.max_expansions = 5;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(r.expanded, 5);
    cr_assert_eq(r.budget_hit, 1);
    cr_assert_eq(r.visited, 1 + 5 * 9);
    test_scratch_t small = make_scratch(30);
    p.max_expansions = 1000;
    cr_assert_eq(plan_search(&p, &q, &small.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(r.budget_hit, 1);
    cr_assert_leq(r.visited, small.s.node_capacity);
    cr_assert_eq(r.expanded, (small.s.node_capacity - 1) / 9);
    p.max_seconds = 1e-9;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_geq(r.expanded, 1);
    cr_assert_eq(r.budget_hit, 1);
    cr_assert(r.control >= 0 && r.control < 17);
    free(small.memory);
    free(sc.memory);
    trim_table_free(&t, test_free, NULL);
}

/* The executed segment hits a sphere (brute force, linear segments as the
 * behaviors see them). */
static int executed_hit(const plan_sphere_t* s, int n, vec3 p0, vec3 p1, float radius)
{
    for (int i = 0; i < n; ++i)
        if (brute_gap(&s[i], p0, 0.0f, p1, 0.0f, radius) <= 0.0) return 1;
    return 0;
}

/* A wall of spheres across the way to the target; the vehicle replans every
 * interval (receding horizon) and executes the chosen control. Returns the
 * collisions; *closest: the nearest it came to the target. */
static int run_wall(plan_strategy_t strategy, float* closest, float* mean_g)
{
    trim_table_t t = build_table(1, 17, 1.6f, 1.0f, 10);
    /* 14 m wide, spheres overlapping: no gap. Wide enough that single-step
     * search stays stuck in front of it; narrow enough that a 12 m horizon
     * (6 intervals at 2 m/s) sees around its ends. */
    enum { NW = 13 };
    plan_sphere_t wall[NW];
    for (int i = 0; i < NW; ++i)
        wall[i] = (plan_sphere_t){
            .center = vec3_make(14.0f, -6.0f + 1.0f * (float)i, 0.0f),
            .radius = 0.8f,
            .velocity = vec3_zero(),
        };
    plan_params_t p = plan_params_default(strategy);
    test_scene_t ts = make_scene(wall, NW, (float)p.max_depth * t.spec.interval);
    plan_behavior_t beh[2] = {{PLAN_SEEK, vec3_make(30, 0, 0), vec3_zero()},
                              {PLAN_AVOID_COLLISION, vec3_zero(), vec3_zero()}};
    int32_t perm[17];
    for (int i = 0; i < 17; ++i) perm[i] = (i * 7 + 3) % 17;
    plan_query_t q = base_query(&t, beh, 2);
    q.scene = ts.scene;
    q.permutation = perm;
    q.speed = 2.0f;
    q.radius = 0.5f;
    test_scratch_t sc = make_scratch(1 + p.max_expansions * 18);
    int collisions = 0;
    float sum_g = 0.0f;
    *closest = INFINITY;
    for (int step = 0; step < 60; ++step) {
        plan_result_t r;
        char msg[200] = "";
        cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
        q.permutation_offset += 5;
        if (strategy != PLAN_SINGLE_STEP) {
            cr_assert_geq(r.depth, p.min_depth, "step %d: depth %d", step, r.depth);
            /* The first segment of the chosen path is clear... */
            cr_assert_gt(r.goodness, 0.0f, "step %d: the chosen first segment collides", step);
        }
        sum_g += r.goodness;
        trim_pose_t next = trim_apply(&t, q.pose, q.control, r.control, q.speed);
        collisions += executed_hit(wall, NW, q.pose.pos, next.pos, q.radius);
        q.pose = next;
        q.control = r.control;
        *closest = fminf(*closest, vec3_distance(q.pose.pos, beh[0].point));
    }
    *mean_g = sum_g / 60.0f;
    free(sc.memory);
    free(ts.memory);
    trim_table_free(&t, test_free, NULL);
    return collisions;
}

Test(planner_search, uniform_and_adaptive_go_around_a_wall)
{
    float closest_u, closest_a, closest_s, g_u, g_a, g_s;
    int coll_u = run_wall(PLAN_UNIFORM, &closest_u, &g_u);
    int coll_a = run_wall(PLAN_ADAPTIVE, &closest_a, &g_a);
    int coll_s = run_wall(PLAN_SINGLE_STEP, &closest_s, &g_s);
    cr_assert_eq(coll_u, 0, "uniform collided %d times", coll_u);
    cr_assert_eq(coll_a, 0, "adaptive collided %d times", coll_a);
    cr_assert_lt(closest_u, 3.0f, "uniform came within %g m of the target", (double)closest_u);
    cr_assert_lt(closest_a, 3.0f, "adaptive came within %g m of the target", (double)closest_a);
    /* Single-step sees one interval ahead: it cannot find the wall's end
     * and runs into it. Once inside, every segment touches a sphere; before
     * the leaving rule all of them scored 0, the search took the first
     * control and the vehicle turned about inside the wall (46 of the 60
     * segments in it, stuck 15 m from the target). With the rule it takes
     * the ways out, and past the wall's middle the way out is forward. */
    cr_assert_gt(coll_s, 0, "single-step runs into the wall");
    cr_assert_lt(coll_s, 40, "single-step spent %d of 60 segments in the wall", coll_s);
    cr_log_info("wall: uniform %d collisions, %.2f m, g %.3f; adaptive %d, %.2f m, g %.3f; "
                "single-step %d, %.2f m, g %.3f",
                coll_u, (double)closest_u, (double)g_u, coll_a, (double)closest_a, (double)g_a, coll_s,
                (double)closest_s, (double)g_s);
}

/* ---- 6. Bad parameters and queries -------------------------------------- */

static void expect_param_error(plan_params_t p, const char* want)
{
    char msg[200] = "";
    cr_assert_eq(plan_params_valid(&p, msg, sizeof msg), 0, "accepted, wanted \"%s\"", want);
    cr_assert(strstr(msg, want) != NULL, "message \"%s\", wanted \"%s\"", msg, want);
}

Test(planner_search, bad_parameters_are_named)
{
    char msg[200] = "";
    for (int s = 0; s < 3; ++s) {
        plan_params_t d = plan_params_default((plan_strategy_t)s);
        cr_assert_eq(plan_params_valid(&d, msg, sizeof msg), 1, "%s", msg);
    }
    plan_params_t d = plan_params_default(PLAN_UNIFORM);
    cr_assert(d.discount == 0.8f && d.optimism == 0.5f && d.max_depth == 6 && d.min_depth == 3 &&
              d.max_expansions == 400 && d.max_seconds == 0.0 && d.k_skip == 2 && d.n_v == 121 &&
              d.collapse == 0.2f && d.damping == 0.02f);
    plan_params_t ss = plan_params_default(PLAN_SINGLE_STEP);
    cr_assert(ss.max_depth == 1 && ss.min_depth == 1);

    plan_params_t p;
    p = d;
    p.discount = 1.5f;
    expect_param_error(p, "discount must be in (0, 1), got 1.5");
    p = d;
    p.discount = 0.0f;
    expect_param_error(p, "discount must be in (0, 1), got 0");
    p = d;
    p.discount = NAN;
    expect_param_error(p, "discount must be in (0, 1)");
    p = d;
    p.optimism = -1.5f;
    expect_param_error(p, "optimism must be in [-1, 1], got -1.5");
    p = d;
    p.max_depth = 0;
    expect_param_error(p, "max_depth must be in [1, 64], got 0");
    p = d;
    p.max_depth = 65;
    expect_param_error(p, "max_depth must be in [1, 64], got 65");
    p = d;
    p.min_depth = 7;
    expect_param_error(p, "min_depth must be in [1, max_depth = 6], got 7");
    p = d;
    p.min_depth = 0;
    expect_param_error(p, "min_depth");
    p = d;
    p.max_expansions = 0;
    expect_param_error(p, "max_expansions must be >= 1, got 0");
    p = d;
    p.max_seconds = -1.0;
    expect_param_error(p, "max_seconds must be finite and >= 0");
    p = d;
    p.max_seconds = INFINITY;
    expect_param_error(p, "max_seconds");
    p = d;
    p.k_skip = 0;
    expect_param_error(p, "k_skip must be >= 1, got 0");
    p = d;
    p.n_v = 0;
    expect_param_error(p, "n_v must be >= 1, got 0");
    p = d;
    p.collapse = 0.0f;
    expect_param_error(p, "collapse must be in (0, 1], got 0");
    p = d;
    p.collapse = 1.01f;
    expect_param_error(p, "collapse must be in (0, 1]");
    p = d;
    p.damping = 1.0f;
    expect_param_error(p, "damping must be in [0, 1), got 1");
    p = d;
    p.strategy = (plan_strategy_t)7;
    expect_param_error(p, "strategy");
    p = d;
    p.collapse = 1.0f;
    p.damping = 0.0f;
    p.optimism = -1.0f;
    cr_assert_eq(plan_params_valid(&p, msg, sizeof msg), 1, "%s", msg); /* the closed ends */
    cr_assert_eq(plan_params_valid(NULL, msg, sizeof msg), 0);
}

static void expect_query_error(const plan_params_t* p, const plan_query_t* q, plan_scratch_t* s,
                               const char* want)
{
    char msg[200] = "";
    plan_result_t r, before;
    memset(&r, 0x5a, sizeof r);
    before = r;
    cr_assert_eq(plan_search(p, q, s, &r, msg, sizeof msg), -1, "accepted, wanted \"%s\"", want);
    cr_assert(strstr(msg, want) != NULL, "message \"%s\", wanted \"%s\"", msg, want);
    cr_assert(memcmp(&r, &before, sizeof r) == 0, "result written on an error");
}

Test(planner_search, bad_queries_are_named)
{
    trim_table_t t = build_table(1, 17, 1.6f, 1.0f, 10);
    plan_behavior_t beh[3] = {{PLAN_SEEK, vec3_make(5, 0, 0), vec3_zero()},
                              {PLAN_AVOID_COLLISION, vec3_zero(), vec3_zero()},
                              {PLAN_FLEE, vec3_make(-5, 0, 0), vec3_zero()}};
    plan_query_t good = base_query(&t, beh, 3);
    plan_params_t p = plan_params_default(PLAN_UNIFORM);
    test_scratch_t sc = make_scratch(4000);
    plan_result_t r;
    char msg[200] = "";
    cr_assert_eq(plan_search(&p, &good, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);

    plan_query_t q;
    q = good;
    q.pose.pos.y = NAN;
    expect_query_error(&p, &q, &sc.s, "pose.pos is NaN");
    q = good;
    q.pose.rot.w = NAN;
    expect_query_error(&p, &q, &sc.s, "pose.rot");
    q = good;
    q.speed = NAN;
    expect_query_error(&p, &q, &sc.s, "speed must be finite and > 0");
    q = good;
    q.speed = 0.0f;
    expect_query_error(&p, &q, &sc.s, "speed must be finite and > 0 (m/s), got 0");
    q = good;
    q.speed = -1.0f;
    expect_query_error(&p, &q, &sc.s, "speed");
    q = good;
    q.radius = -1.0f;
    expect_query_error(&p, &q, &sc.s, "radius");
    q = good;
    q.table = NULL;
    expect_query_error(&p, &q, &sc.s, "query.table is NULL");
    q = good;
    q.control = 17;
    expect_query_error(&p, &q, &sc.s, "control must be in [0, 17), got 17");
    q = good;
    q.control = -1;
    expect_query_error(&p, &q, &sc.s, "control must be in [0, 17), got -1");
    q = good;
    q.behavior_count = -1;
    expect_query_error(&p, &q, &sc.s, "behavior_count");
    q = good;
    q.behaviors = NULL;
    expect_query_error(&p, &q, &sc.s, "behavior_count");
    plan_behavior_t nan_beh[3] = {beh[0], beh[1], beh[2]};
    nan_beh[2].point.z = NAN;
    q = good;
    q.behaviors = nan_beh;
    expect_query_error(&p, &q, &sc.s, "behaviors[2].point is NaN");
    nan_beh[2].point.z = 0.0f;
    nan_beh[2].velocity.x = INFINITY;
    expect_query_error(&p, &q, &sc.s, "behaviors[2].velocity is infinite");
    nan_beh[2].velocity.x = 0.0f;
    nan_beh[0].kind = (plan_behavior_kind_t)9;
    expect_query_error(&p, &q, &sc.s, "behaviors[0].kind");

    /* An empty control set. */
    trim_table_t empty = t;
    empty.controls = 0;
    q = good;
    q.table = &empty;
    q.control = 0;
    expect_query_error(&p, &q, &sc.s, "has no controls");

    /* Adaptive needs a permutation of the controls. */
    plan_params_t pa = plan_params_default(PLAN_ADAPTIVE);
    q = good;
    expect_query_error(&pa, &q, &sc.s, "permutation");
    int32_t perm[17];
    for (int i = 0; i < 17; ++i) perm[i] = i;
    perm[4] = 17;
    q.permutation = perm;
    expect_query_error(&pa, &q, &sc.s, "permutation[4] = 17");
    perm[4] = 4;
    cr_assert_eq(plan_search(&pa, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);

    /* Bad params through plan_search; scratch too small or missing. */
    plan_params_t pb = p;
    pb.discount = 1.5f;
    expect_query_error(&pb, &good, &sc.s, "discount must be in (0, 1), got 1.5");
    test_scratch_t tiny = make_scratch(5);
    expect_query_error(&p, &good, &tiny.s, "the first expansion needs 10");
    expect_query_error(&p, &good, NULL, "scratch");
    cr_assert_eq(plan_search(&p, &good, &sc.s, NULL, msg, sizeof msg), -1);
    cr_assert_eq(plan_search(&p, NULL, &sc.s, &r, msg, sizeof msg), -1);
    /* A NULL message buffer is fine. */
    q = good;
    q.speed = 0.0f;
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, NULL, 0), -1);
    free(tiny.memory);
    free(sc.memory);
    trim_table_free(&t, test_free, NULL);
}

/* ---- 7. Determinism ------------------------------------------------------ */

Test(planner_search, same_query_same_result)
{
    trim_table_t t = build_table(2, 7, 1.5f, 1.0f, 10);
    uint64_t rng = 71;
    enum { NS = 200 };
    plan_sphere_t spheres[NS];
    for (int i = 0; i < NS; ++i)
        spheres[i] = (plan_sphere_t){
            .center = uniform3(&rng, -40.0f, 40.0f, 3),
            .radius = uniform(&rng, 0.5f, 3.0f),
            .velocity = i % 3 ? vec3_zero() : uniform3(&rng, -1.0f, 1.0f, 3),
        };
    test_scene_t ts = make_scene(spheres, NS, 6.0f);
    plan_behavior_t beh[2] = {{PLAN_PURSUE, vec3_make(30, 10, -5), vec3_make(-1, 0, 0.5f)},
                              {PLAN_AVOID_COLLISION, vec3_zero(), vec3_zero()}};
    int32_t perm[49];
    for (int i = 0; i < 49; ++i) perm[i] = (i * 10 + 3) % 49;
    plan_query_t q = base_query(&t, beh, 2);
    q.scene = ts.scene;
    q.permutation = perm;
    q.permutation_offset = 12345;
    q.pose = (trim_pose_t){vec3_make(-35, -5, 2), quat_from_yaw_pitch_roll(0.3f, 0.1f, 0.0f)};
    test_scratch_t a = make_scratch(400 * 50 + 1), b = make_scratch(400 * 50 + 1);
    for (int s = 0; s < 3; ++s) {
        plan_params_t p = plan_params_default((plan_strategy_t)s);
        plan_result_t r1, r2;
        char msg[200] = "";
        cr_assert_eq(plan_search(&p, &q, &a.s, &r1, msg, sizeof msg), 0, "%s", msg);
        /* Another scratch, full of other bytes. */
        memset(b.memory, 0xa5, plan_scratch_bytes(400 * 50 + 1));
        cr_assert_eq(plan_search(&p, &q, &b.s, &r2, msg, sizeof msg), 0, "%s", msg);
        cr_assert(memcmp(&r1, &r2, sizeof r1) == 0, "strategy %d: results differ", s);
        cr_assert_eq(plan_search(&p, &q, &a.s, &r2, msg, sizeof msg), 0, "%s", msg);
        cr_assert(memcmp(&r1, &r2, sizeof r1) == 0, "strategy %d: results differ", s);
        cr_assert_gt(r1.visited, 1);
    }
    free(a.memory);
    free(b.memory);
    free(ts.memory);
    trim_table_free(&t, test_free, NULL);
}

/* ---- the search tree hook (plan_tree_node, for `shoal plot search`) ----- */

Test(planner_search, tree_hook_reads_the_search_without_changing_it)
{
    trim_table_t t = build_table(1, 17, 1.6f, 1.0f, 10);
    plan_sphere_t spheres[3] = {{vec3_make(6, 1, 0), 1.5f, vec3_zero(), 0.0f, 0.0f, 0},
                                {vec3_make(9, -3, 0), 2.0f, vec3_zero(), 0.0f, 0.0f, 0},
                                {vec3_make(2, -1, 0), 0.6f, vec3_zero(), 0.0f, 0.0f, 0}};
    test_scene_t ts = make_scene(spheres, 3, 8.0f);
    plan_behavior_t beh[2] = {{PLAN_SEEK, vec3_make(20, 0, 0), vec3_zero()},
                              {PLAN_AVOID_COLLISION, vec3_zero(), vec3_zero()}};
    plan_query_t q = base_query(&t, beh, 2);
    q.scene = ts.scene;
    int32_t perm[17];
    for (int i = 0; i < 17; ++i) perm[i] = (i * 5) % 17;
    q.permutation = perm;
    test_scratch_t a = make_scratch(400 * 18 + 1), b = make_scratch(400 * 18 + 1);
    for (int st = 0; st < 3; ++st) {
        plan_params_t p = plan_params_default((plan_strategy_t)st);
        plan_result_t r1, r2;
        char msg[200] = "";
        cr_assert_eq(plan_search(&p, &q, &a.s, &r1, msg, sizeof msg), 0, "%s", msg);
        int crashed = 0;
        plan_tree_node_t root;
        cr_assert_eq(plan_tree_node(&a.s, 0, &root), 0);
        cr_assert_eq(root.parent, -1);
        cr_assert_eq(root.depth, 0);
        cr_assert_eq(root.control, q.control);
        for (int32_t i = 1; i < r1.visited; ++i) {
            plan_tree_node_t n, par;
            cr_assert_eq(plan_tree_node(&a.s, i, &n), 0);
            cr_assert(n.parent >= 0 && n.parent < i, "strategy %d: state %d has parent %d", st, i, n.parent);
            cr_assert_eq(plan_tree_node(&a.s, n.parent, &par), 0);
            cr_assert_eq(n.depth, par.depth + 1);
            cr_assert(!par.crashed, "a crashed state was expanded");
            /* The pose is the table's successor of the parent, bit for bit. */
            trim_pose_t want = trim_apply(&t, par.pose, par.control, n.control, q.speed);
            cr_assert(memcmp(&want, &n.pose, sizeof want) == 0, "strategy %d: state %d pose", st, i);
            crashed += n.crashed;
        }
        cr_assert_gt(crashed, 0, "strategy %d: no segment hit the spheres in front", st);
        /* The leaf's first step is the result's control, its depth the result's. */
        plan_tree_node_t leaf;
        cr_assert_eq(plan_tree_node(&a.s, r1.leaf, &leaf), 0);
        cr_assert_eq(leaf.depth, r1.depth);
        cr_assert(!leaf.crashed);
        int32_t i = r1.leaf;
        plan_tree_node_t n = leaf;
        while (n.depth > 1) {
            i = n.parent;
            plan_tree_node(&a.s, i, &n);
        }
        cr_assert_eq(n.control, r1.control);
        /* Reading the tree changed nothing: another scratch, same answer. */
        cr_assert_eq(plan_search(&p, &q, &b.s, &r2, msg, sizeof msg), 0, "%s", msg);
        cr_assert(memcmp(&r1, &r2, sizeof r1) == 0, "strategy %d: results differ", st);
    }
    plan_tree_node_t out;
    cr_assert_eq(plan_tree_node(&a.s, -1, &out), -1);
    cr_assert_eq(plan_tree_node(&a.s, a.s.node_capacity, &out), -1);
    cr_assert_eq(plan_tree_node(NULL, 0, &out), -1);
    free(a.memory);
    free(b.memory);
    free(ts.memory);
    trim_table_free(&t, test_free, NULL);
}

/* ---- windowed spheres, owners, leaving ------------------------------------ */

/* A vehicle's track is pieces of linear motion, each existing only in its
 * window; its owner's own queries leave it out; found through the index as
 * by a scan. */
Test(planner_search, windowed_spheres_exist_only_in_their_windows)
{
    /* From (0, 0) at t = 2 to (10, 0) at t = 4: center at t = 0 is (-10, 0). */
    plan_sphere_t s[2] = {{vec3_make(-10, 0, 0), 1.0f, vec3_make(5, 0, 0), 2.0f, 4.0f, 7},
                          {vec3_make(50, 50, 0), 1.0f, vec3_zero(), 0.0f, 0.0f, 0}};
    test_scene_t ts = make_scene(s, 2, 6.0f);
    /* Standing at (5, 0): passed at t = 3 only. */
    vec3 at = vec3_make(5, 0, 0);
    cr_assert(plan_scene_hit(ts.scene, at, 3.0f, at, 3.0f, 0.5f));
    cr_assert(!plan_scene_hit(ts.scene, at, 1.0f, at, 1.0f, 0.5f), "before its window");
    cr_assert(!plan_scene_hit(ts.scene, at, 5.0f, at, 5.0f, 0.5f), "after its window");
    /* A segment through t = 3: hit; one over [0, 1.9] at the same place: not. */
    cr_assert(plan_scene_hit(ts.scene, at, 2.5f, vec3_make(5, 1, 0), 3.5f, 0.5f));
    cr_assert(!plan_scene_hit(ts.scene, at, 0.0f, vec3_make(5, 1, 0), 1.9f, 0.5f));
    /* Where its motion would put it at t = 5 (15, 0), had it no window. */
    cr_assert(!plan_scene_hit(ts.scene, vec3_make(15, 0, 0), 5.0f, vec3_make(15, 0, 0), 5.0f, 0.5f));
    /* Its owner does not see it; others do. */
    cr_assert(!plan_scene_hit_ex(ts.scene, at, 3.0f, at, 3.0f, 0.5f, 7, 0));
    cr_assert(plan_scene_hit_ex(ts.scene, at, 3.0f, at, 3.0f, 0.5f, 8, 0));
    /* Obstacles (owner 0) are seen by everyone. */
    vec3 rock = vec3_make(50, 50, 0);
    cr_assert(plan_scene_hit_ex(ts.scene, rock, 0.0f, rock, 0.0f, 0.5f, 7, 0));
    /* A negative owner or a window that is not finite is refused. */
    plan_sphere_t bad = s[0];
    bad.owner = -1;
    void* mem = aligned_alloc(16, (plan_scene_bytes(1) + 15u) & ~(size_t)15u);
    cr_assert_null(plan_scene_build(mem, &bad, 1, 6.0f));
    bad = s[0];
    bad.t_to = INFINITY;
    cr_assert_null(plan_scene_build(mem, &bad, 1, 6.0f));
    free(mem);
    free(ts.memory);
}

/* Many random windowed pieces: the index finds exactly what a scan of every
 * piece finds (owner and window rules included). */
Test(planner_search, windowed_index_agrees_with_a_scan)
{
    enum { N = 600 };
    static plan_sphere_t s[N];
    uint64_t rng = 99;
    for (int i = 0; i < N; ++i) {
        float ta = uniform(&rng, -0.1f, 7.0f);
        s[i] = (plan_sphere_t){.center = uniform3(&rng, -80.0f, 80.0f, 2),
                               .radius = uniform(&rng, 0.5f, 3.0f),
                               .velocity = uniform3(&rng, -6.0f, 6.0f, 2),
                               .t_from = ta,
                               .t_to = ta + uniform(&rng, 0.1f, 1.5f),
                               .owner = 1 + (int32_t)(rng_splitmix64(&rng) % 50)};
    }
    test_scene_t ts = make_scene(s, N, 8.0f);
    int hits = 0;
    for (int k = 0; k < 4000; ++k) {
        vec3 p0 = uniform3(&rng, -80.0f, 80.0f, 2), p1 = vec3_add(p0, uniform3(&rng, -6.0f, 6.0f, 2));
        float t0 = uniform(&rng, 0.0f, 7.0f), t1 = t0 + 1.0f;
        int32_t self = (int32_t)(rng_splitmix64(&rng) % 52);
        int want = 0;
        for (int i = 0; i < N && !want; ++i) {
            if (s[i].owner == self) continue;
            /* A sphere no sample below can reach is skipped, which changes
             * no answer: none when the windows do not meet, nor when the
             * segment (within half its length of its middle) and the
             * sphere's center over the shared window (within half its path
             * of that path's middle) are farther apart than the radii
             * (margins for rounding). The scan then costs a few spheres a
             * query, not 600. */
            float from = fmaxf(t0, s[i].t_from), to = fminf(t1, s[i].t_to);
            if (from > to + 1e-3f) continue;
            vec3 c_from = vec3_add(s[i].center, vec3_scale(s[i].velocity, from));
            vec3 c_to = vec3_add(s[i].center, vec3_scale(s[i].velocity, to));
            float reach = 0.5f * vec3_length(vec3_sub(p1, p0)) + 0.5f * vec3_length(vec3_sub(c_to, c_from)) +
                          s[i].radius + 0.5f + 0.1f + 1e-3f * vec3_length(s[i].velocity);
            vec3 apart =
                vec3_sub(vec3_scale(vec3_add(p0, p1), 0.5f), vec3_scale(vec3_add(c_from, c_to), 0.5f));
            if (vec3_dot(apart, apart) > reach * reach) continue;
            /* brute force: 2000 samples of the segment within the window */
            for (int j = 0; j <= 2000 && !want; ++j) {
                float u = (float)j / 2000.0f, t = t0 + u * (t1 - t0);
                if (t < s[i].t_from || t > s[i].t_to) continue;
                vec3 v = vec3_add(p0, vec3_scale(vec3_sub(p1, p0), u));
                vec3 c = vec3_add(s[i].center, vec3_scale(s[i].velocity, t));
                vec3 d = vec3_sub(v, c);
                want = vec3_dot(d, d) < (s[i].radius + 0.5f) * (s[i].radius + 0.5f) * 0.999f;
            }
        }
        int got = plan_scene_hit_ex(ts.scene, p0, t0, p1, t1, 0.5f, self, 0);
        if (want) cr_assert(got, "query %d: a hit the index missed", k);
        hits += got;
    }
    cr_assert_gt(hits, 100, "the test exercises hits (%d)", hits);
    free(ts.memory);
}

/* A segment that starts inside a sphere and moves away from its center
 * does not hit it under the leaving rule (AvoidCollision's); one that goes
 * deeper or stays does. A search started inside a sphere then tells the
 * ways out (goodness > 0) from the ways in: before, every segment scored 0. */
Test(planner_search, leaving_a_sphere_is_not_a_hit)
{
    plan_sphere_t rock = {
        .center = vec3_make(0, 0, 0),
        .radius = 3.0f,
        .velocity = vec3_zero(),
    };
    test_scene_t ts = make_scene(&rock, 1, 6.0f);
    vec3 in = vec3_make(1, 0, 0);
    cr_assert(plan_scene_hit(ts.scene, in, 0.0f, vec3_make(5, 0, 0), 1.0f, 0.5f), "pure geometry: a hit");
    cr_assert(!plan_scene_hit_ex(ts.scene, in, 0.0f, vec3_make(5, 0, 0), 1.0f, 0.5f, 0, 1), "leaving");
    cr_assert(plan_scene_hit_ex(ts.scene, in, 0.0f, vec3_make(-5, 0, 0), 1.0f, 0.5f, 0, 1),
              "through the center");
    cr_assert(plan_scene_hit_ex(ts.scene, in, 0.0f, in, 1.0f, 0.5f, 0, 1), "standing inside");
    /* Outside, a segment into it is a hit either way. */
    cr_assert(plan_scene_hit_ex(ts.scene, vec3_make(6, 0, 0), 0.0f, vec3_make(2, 0, 0), 1.0f, 0.5f, 0, 1));

    /* The search from inside, facing the center. */
    trim_table_t t = build_table(1, 17, 1.6f, 1.0f, 10);
    plan_behavior_t beh[2] = {{PLAN_SEEK, vec3_make(-30, 0, 0), vec3_zero()},
                              {PLAN_AVOID_COLLISION, vec3_zero(), vec3_zero()}};
    plan_query_t q;
    memset(&q, 0, sizeof q);
    q.table = &t;
    q.pose.pos = vec3_make(2.0f, 0.0f, 0.0f);
    q.pose.rot = quat_from_yaw(0.3f); /* away from the center, a little off the x axis */
    q.control = t.straight;
    q.speed = 2.0f;
    q.radius = 0.5f;
    q.behaviors = beh;
    q.behavior_count = 2;
    q.scene = ts.scene;
    test_scratch_t sc = make_scratch(20000);
    plan_params_t p = plan_params_default(PLAN_SINGLE_STEP);
    plan_result_t r;
    char msg[256];
    cr_assert_eq(plan_search(&p, &q, &sc.s, &r, msg, sizeof msg), 0, "%s", msg);
    cr_assert_gt(r.goodness, 0.0f, "a way out scores");
    plan_tree_node_t n;
    cr_assert_eq(plan_tree_node(&sc.s, r.leaf, &n), 0);
    cr_assert_gt(vec3_length(n.pose.pos), 2.0f, "and leads out");
    free(sc.memory);
    free(ts.memory);
    trim_table_free(&t, test_free, NULL);
}

/* ---- The parallel build ---------------------------------------------------- */

/* A loop that runs the pieces of [0, n) last first, in uneven sizes (as
 * workers might finish them): the build must not depend on it. */
static void backwards_run(void* par, int32_t n, plan_body_fn* body, void* ctx)
{
    int32_t* calls = (int32_t*)par;
    int32_t end = n;
    for (int32_t piece = 1; end > 0; ++piece) {
        int32_t size = 1 + (piece * 7919) % (n / 5 + 1);
        int32_t begin = end > size ? end - size : 0;
        body(begin, end, ctx);
        (*calls)++;
        end = begin;
    }
}

/* plan_scene_build_par gives plan_scene_build's scene, item for item, on
 * scenes large enough for its parallel sort (static, moving and windowed
 * spheres of many sizes, vehicles' tracks, in 2D and 3D), and refuses the
 * same bad input. */
Test(planner_search, parallel_build_is_the_serial_one)
{
    for (int flat = 0; flat <= 1; ++flat) {
        enum { N = 20000 };
        static plan_sphere_t sp[N];
        uint64_t rng = 0x5eedbu + (uint64_t)flat;
        for (int32_t i = 0; i < N; ++i) {
            plan_sphere_t* s = &sp[i];
            s->center = uniform3(&rng, -500.0f, 500.0f, flat ? 2 : 3);
            s->radius = i % 13 == 0 ? 0.0f : uniform(&rng, 0.1f, i % 101 == 0 ? 40.0f : 3.0f);
            s->velocity = i % 3 == 0 ? vec3_zero() : uniform3(&rng, -5.0f, 5.0f, flat ? 2 : 3);
            s->t_from = s->t_to = 0.0f;
            if (i % 2) { /* a piece of a track */
                s->t_from = uniform(&rng, -1.0f, 4.0f);
                s->t_to = s->t_from + uniform(&rng, 0.1f, 2.0f);
            }
            s->owner = i % 2 ? 1 + i / 4 : 0;
        }
        size_t bytes = plan_scene_bytes(N);
        void* m1 = aligned_alloc(16, (bytes + 15u) & ~(size_t)15u);
        void* m2 = aligned_alloc(16, (bytes + 15u) & ~(size_t)15u);
        cr_assert(m1 && m2);
        plan_scene_t* serial = plan_scene_build(m1, sp, N, 3.0f);
        int32_t calls = 0;
        plan_scene_t* par = plan_scene_build_par(m2, sp, N, 3.0f, backwards_run, &calls);
        cr_assert(serial && par);
        cr_expect_gt(calls, 10, "the loop was used");
        cr_expect(plan_scene_same(serial, par), "flat %d: the parallel build differs", flat);
        /* and the check can tell scenes apart */
        plan_scene_t* other = plan_scene_build(m1, sp, N - 1, 3.0f);
        cr_expect(!plan_scene_same(other, par));
        sp[N / 2].velocity.x = NAN;
        cr_expect_null(plan_scene_build_par(m2, sp, N, 3.0f, backwards_run, &calls));
        free(m1);
        free(m2);
    }
}
