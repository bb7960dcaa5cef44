/* Population of a group beyond its spawn shape: the polygon spawn area, the
 * placement rules (random with a minimum spacing, or a lattice) and the
 * per-agent parameter distributions. The schema half (spawn.points,
 * spawn.placement, spawn.min_spacing, "distributions") is read here for
 * scenario.c; the plan half runs in populate (scenario_populate.c) before
 * anything is added, so that a group that cannot be placed fails with the
 * world untouched. docs/scenarios.md is the reference.
 *
 * Decisions:
 * - Every draw is rng_unit(seed, key, counter, stream) with key = group
 *   index << 32 | agent index in the group, on streams of their own: an
 *   agent's draws depend on the file and the seed only, and a group's do
 *   not move when an earlier group changes its count. Groups without the
 *   new keys are placed as before (scenario_populate.c's place_agent).
 * - A polygon is triangulated once (ear clipping) when read; a random point
 *   picks a triangle by area and a point in it, three draws, no rejection.
 * - A minimum spacing is kept by rejection: up to MAX_ATTEMPTS candidates
 *   per agent, then the plan fails naming the group. Candidates are also
 *   refused within the agent's radius of a wall, and within min_spacing of
 *   any agent of an earlier group.
 * - A lattice takes the free lattice points nearest the area's center
 *   first, so a partly filled area holds one compact block.
 * - A truncated normal is drawn by inverting its distribution function
 *   (one draw, no redraw loop); min and max default to 0 and +inf.
 */
#include "shoal/scenario.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/memory.h"
#include "ecs/rng.h"
#include "io/scenario_model.h"

#define SPAWN_STREAM 0x5ba3c0d1u
#define DIST_STREAM 0xd157b0e5u
#define MAX_ATTEMPTS 1000
#define SQRT3_2 0.86602540378443864676

static const char* const PLACEMENT_NAMES[] = {"random", "lattice", "square_lattice"};
static const char* const DISTRIBUTION_FIELDS[] = {"crowd.preferred_speed", "crowd.time_gap", "vehicle.radius",
                                                  "vehicle.max_speed", "nav.start_delay"};
static const char* const DISTRIBUTION_KEYS[] = {"normal", "uniform", "table", "min", "max"};
static const char* const NORMAL_KEYS[] = {"mean", "sd"};

/* ---- Polygons ---- */

static double cross3(const float a[2], const float b[2], const float c[2])
{
    return ((double)b[0] - a[0]) * ((double)c[1] - a[1]) - ((double)b[1] - a[1]) * ((double)c[0] - a[0]);
}

/* Whether segments ab and cd share a point (touching counts). */
static int segments_meet(const float a[2], const float b[2], const float c[2], const float d[2])
{
    double d1 = cross3(c, d, a), d2 = cross3(c, d, b), d3 = cross3(a, b, c), d4 = cross3(a, b, d);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return 1;
#define ON(p, q, r, dd)                                                                                      \
    ((dd) == 0 && fmin((p)[0], (q)[0]) <= (r)[0] && (r)[0] <= fmax((p)[0], (q)[0]) &&                        \
     fmin((p)[1], (q)[1]) <= (r)[1] && (r)[1] <= fmax((p)[1], (q)[1]))
    return ON(c, d, a, d1) || ON(c, d, b, d2) || ON(a, b, c, d3) || ON(a, b, d, d4);
#undef ON
}

/* Whether the corner a-b-c turns straight back (c on the line ab, behind b). */
static int folds_back(const float a[2], const float b[2], const float c[2])
{
    return cross3(a, b, c) == 0.0 &&
           ((double)b[0] - a[0]) * ((double)c[0] - b[0]) + ((double)b[1] - a[1]) * ((double)c[1] - b[1]) <
               0.0;
}

/* Ear clipping of the simple polygon g->polygon into g->triangles; 0 when no
 * ear is found (which a simple polygon always has). */
static int triangulate(group_t* g, int ccw)
{
    int n = g->polygon_count, m = n;
    uint8_t idx[SPAWN_MAX_POLYGON];
    for (int i = 0; i < n; i++) idx[i] = (uint8_t)(ccw ? i : n - 1 - i);
    double total = 0.0;
    g->triangle_count = 0;
    while (m >= 3) {
        int found = -1;
        for (int k = 0; k < m && found < 0; k++) {
            const float *a = g->polygon[idx[(k + m - 1) % m]], *b = g->polygon[idx[k]],
                        *c = g->polygon[idx[(k + 1) % m]];
            double cr = cross3(a, b, c);
            if (cr < 0.0) continue;
            int ear = 1;
            for (int j = 0; j < m && ear && cr > 0.0; j++) {
                const float* q = g->polygon[idx[j]];
                if (q == a || q == b || q == c) continue;
                if (cross3(a, b, q) >= 0.0 && cross3(b, c, q) >= 0.0 && cross3(c, a, q) >= 0.0) ear = 0;
            }
            if (ear) found = k;
        }
        if (found < 0) return 0;
        uint8_t* t = g->triangles[g->triangle_count];
        t[0] = idx[(found + m - 1) % m];
        t[1] = idx[found];
        t[2] = idx[(found + 1) % m];
        total += 0.5 * cross3(g->polygon[t[0]], g->polygon[t[1]], g->polygon[t[2]]);
        g->triangle_cumulative[g->triangle_count++] = total;
        memmove(idx + found, idx + found + 1, (size_t)(m - found - 1));
        m--;
        if (m < 3) break;
    }
    for (int i = 0; i < g->triangle_count; i++) g->triangle_cumulative[i] /= total;
    return total > 0.0;
}

/* "points" of a polygon: 3 to 64 points [x, y], a simple polygon (no edge
 * crosses or touches another but its neighbors at their shared point) of
 * nonzero area; its centroid becomes the group's center. */
static shoal_status_t parse_polygon(parser_t* p, const cJSON* v, group_t* g)
{
    const cJSON* pts = MEMBER(v, "points");
    if (pts == NULL) return parser_missing(p, "points", "(shape \"polygon\" is given by its corners)");
    int n = cJSON_IsArray(pts) ? cJSON_GetArraySize(pts) : -1;
    if (n < 3 || n > SPAWN_MAX_POLYGON) {
        char got[32];
        if (n >= 0) snprintf(got, sizeof got, "%d points", n);
        return parser_fail(p, "points", "expected an array of 3 to %d points [x, y], got %s",
                           SPAWN_MAX_POLYGON, n >= 0 ? got : parser_type_name(pts));
    }
    if (MEMBER(v, "center") != NULL)
        return parser_fail(p, "center", "not used with shape \"polygon\": its points are where it is");
    size_t old = parser_push(p, "points", 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    g->polygon_count = 0;
    cJSON_ArrayForEach(e, pts)
    {
        char name[24];
        float q[3] = {0.0f, 0.0f, 0.0f};
        snprintf(name, sizeof name, "[%d]", (int)g->polygon_count);
        if ((st = parser_read_vector(p, e, name, -DBL_MAX, "[x, y]", "[x, y]", q)) != SHOAL_OK) break;
        g->polygon[g->polygon_count][0] = q[0];
        g->polygon[g->polygon_count][1] = q[1];
        g->polygon_count++;
    }
    parser_pop(p, old);
    TRY(st);
    double area = 0.0, cx = 0.0, cy = 0.0, per = 0.0;
    for (int i = 0; i < n; i++) {
        const float *a = g->polygon[i], *b = g->polygon[(i + 1) % n];
        double c = (double)a[0] * b[1] - (double)b[0] * a[1];
        area += c;
        cx += ((double)a[0] + b[0]) * c;
        cy += ((double)a[1] + b[1]) * c;
        per += hypot((double)b[0] - a[0], (double)b[1] - a[1]);
    }
    area *= 0.5;
    if (!(fabs(area) > 1e-9 * per * per))
        return parser_fail(p, "points", "the polygon has no area (its points are on one line or repeated)");
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int adjacent = j == i + 1 || (i == 0 && j == n - 1);
            const float *a = g->polygon[i], *b = g->polygon[(i + 1) % n], *c = g->polygon[j],
                        *d = g->polygon[(j + 1) % n];
            int meet = adjacent ? folds_back(j == i + 1 ? a : c, j == i + 1 ? b : a, j == i + 1 ? d : b)
                                : segments_meet(a, b, c, d);
            if (meet)
                return parser_fail(p, "points",
                                   "edges %d-%d and %d-%d meet: a spawn polygon must be simple (its edges "
                                   "may not cross or touch)",
                                   i, (i + 1) % n, j, (j + 1) % n);
        }
    if (!triangulate(g, area > 0.0))
        return parser_fail(p, "points", "could not be split into triangles (is it simple?)");
    g->center[0] = (float)(cx / (6.0 * area));
    g->center[1] = (float)(cy / (6.0 * area));
    g->area = fabs(area);
    g->perimeter = per;
    return SHOAL_OK;
}

/* Whether (x, y) is inside the polygon (crossing number). */
static int polygon_contains(const group_t* g, double x, double y)
{
    int in = 0, n = g->polygon_count;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        double xi = g->polygon[i][0], yi = g->polygon[i][1], xj = g->polygon[j][0], yj = g->polygon[j][1];
        if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) in = !in;
    }
    return in;
}

shoal_status_t spawn_parse_area(parser_t* p, const cJSON* v, group_t* g)
{
    const cJSON* place = MEMBER(v, "placement");
    const int given = place != NULL || MEMBER(v, "min_spacing") != NULL;
    if (g->shape == SHAPE_POLYGON || given) {
        if (p->dimensions != 2)
            return parser_fail(p,
                               g->shape == SHAPE_POLYGON ? "shape"
                               : place != NULL           ? "placement"
                                                         : "min_spacing",
                               "%s only allowed in 2D scenarios (dimensions is 3)",
                               g->shape == SHAPE_POLYGON ? "a polygon is" : "placement rules are");
    }
    if (g->shape == SHAPE_POLYGON)
        TRY(parse_polygon(p, v, g));
    else if (MEMBER(v, "points") != NULL)
        return parser_fail(p, "points", "only used with \"shape\": \"polygon\"");
    if (g->shape == SHAPE_DISC)
        g->area = PI * (double)g->radius * g->radius, g->perimeter = 2.0 * PI * g->radius;
    if (g->shape == SHAPE_RING) g->area = 0.0, g->perimeter = 2.0 * PI * g->radius;
    if (g->shape == SHAPE_BOX)
        g->area = (double)g->size[0] * g->size[1], g->perimeter = 2.0 * ((double)g->size[0] + g->size[1]);
    if (place != NULL)
        TRY(parser_read_choice(p, place, "placement", PLACEMENT_NAMES, COUNT_OF(PLACEMENT_NAMES),
                               &g->placement, NULL));
    TRY(parser_get_float(p, v, "min_spacing", 0.0, 1, &g->min_spacing));
    if (g->placement != PLACE_RANDOM) {
        if (g->min_spacing <= 0.0f)
            return parser_missing(p, "min_spacing", "(a lattice's points are min_spacing apart)");
        if (g->shape != SHAPE_DISC && g->shape != SHAPE_BOX && g->shape != SHAPE_POLYGON)
            return parser_fail(p, "placement",
                               "\"%s\" fills an area: shape must be disc, box or polygon, got %s",
                               PLACEMENT_NAMES[g->placement], g->shape == SHAPE_RING ? "ring" : "point");
    }
    if (g->min_spacing > 0.0f && g->shape == SHAPE_POINT)
        return parser_fail(p, "min_spacing",
                           "needs room between agents: shape point puts them all on one spot");
    if (g->min_spacing > 0.0f && !(g->area > 0.0 || g->perimeter > 0.0))
        return parser_fail(p, "min_spacing",
                           "needs room between agents: the spawn area is empty (size or radius 0)");
    return SHOAL_OK;
}

/* ---- Distributions ---- */

/* Standard normal distribution function and its inverse (Acklam's rational
 * approximation, relative error below 1.2e-9, refined by one Halley step). */
static double normal_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

static double normal_quantile(double u)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01, -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    double x;
    if (u < 0.02425) {
        double q = sqrt(-2.0 * log(u));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    } else if (u > 1.0 - 0.02425) {
        double q = sqrt(-2.0 * log(1.0 - u));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    } else {
        double q = u - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
    }
    double e = normal_cdf(x) - u, step = e * sqrt(2.0 * PI) * exp(0.5 * x * x);
    return x - step / (1.0 + 0.5 * x * step);
}

/* The smallest and largest value a distribution draws. */
static double dist_low(const distribution_t* d)
{
    if (d->kind == DIST_NORMAL) return d->lo;
    if (d->kind == DIST_UNIFORM) return d->a;
    double m = DBL_MAX;
    for (int i = 0; i < d->table_count; i++)
        if (d->cumulative[i] > (i > 0 ? d->cumulative[i - 1] : 0.0)) m = fmin(m, d->table[i]);
    return m;
}

static double dist_draw(const distribution_t* d, uint64_t seed, uint64_t key, uint32_t counter)
{
    /* The middle of one of 2^24 equal steps: never 0 or 1. */
    double u = ((double)rng_unit(seed, key, counter, DIST_STREAM) * 16777216.0 + 0.5) / 16777216.0;
    if (d->kind == DIST_UNIFORM) return d->a + (d->b - d->a) * u;
    if (d->kind == DIST_TABLE) {
        for (int i = 0; i < d->table_count - 1; i++)
            if (u < d->cumulative[i]) return d->table[i];
        return d->table[d->table_count - 1];
    }
    double fa = normal_cdf((d->lo - d->a) / d->b),
           fb = isinf(d->hi) ? 1.0 : normal_cdf((d->hi - d->a) / d->b);
    double x = d->a + d->b * normal_quantile(fa + u * (fb - fa));
    return fmin(fmax(x, d->lo), d->hi); /* the approximation's last ulps */
}

/* One field's distribution: {"normal": {"mean", "sd"}, "min", "max"},
 * {"uniform": [lo, hi]} or {"table": [[value, weight], ...]}. */
static shoal_status_t parse_distribution(parser_t* p, const cJSON* v, distribution_t* d)
{
    char c[32];
    if (!cJSON_IsObject(v))
        return parser_fail(
            p, NULL, "expected an object {\"normal\": ...}, {\"uniform\": ...} or {\"table\": ...}, got %s",
            parser_type_name(v));
    TRY(parser_check_object(p, v, DISTRIBUTION_KEYS, COUNT_OF(DISTRIBUTION_KEYS)));
    const cJSON *normal = MEMBER(v, "normal"), *uniform = MEMBER(v, "uniform"), *table = MEMBER(v, "table");
    if ((normal != NULL) + (uniform != NULL) + (table != NULL) != 1)
        return parser_fail(p, NULL, "expected exactly one of \"normal\", \"uniform\" or \"table\", got %d",
                           (normal != NULL) + (uniform != NULL) + (table != NULL));
    if (normal == NULL && (MEMBER(v, "min") != NULL || MEMBER(v, "max") != NULL))
        return parser_fail(p, MEMBER(v, "min") != NULL ? "min" : "max",
                           "only used with \"normal\" (a uniform or table distribution is bounded already)");
    if (normal != NULL) {
        float mean = 0.0f, sd = 0.0f, lo = 0.0f, hi = FLT_MAX;
        size_t at = parser_push(p, "normal", 0);
        shoal_status_t st = cJSON_IsObject(normal)
                                ? parser_check_object(p, normal, NORMAL_KEYS, COUNT_OF(NORMAL_KEYS))
                                : parser_fail(p, NULL, "expected an object {\"mean\": m, \"sd\": s}, got %s",
                                              parser_type_name(normal));
        if (st == SHOAL_OK && MEMBER(normal, "mean") == NULL) st = parser_missing(p, "mean", NULL);
        if (st == SHOAL_OK && MEMBER(normal, "sd") == NULL) st = parser_missing(p, "sd", NULL);
        if (st == SHOAL_OK) st = parser_get_float(p, normal, "mean", -FLT_MAX, 0, &mean);
        if (st == SHOAL_OK) st = parser_get_float(p, normal, "sd", 0.0, 1, &sd);
        parser_pop(p, at);
        TRY(st);
        TRY(parser_get_float(p, v, "min", 0.0, 0, &lo));
        TRY(parser_get_float(p, v, "max", 0.0, 0, &hi));
        if (!(hi > lo)) return parser_fail(p, "max", "must be > min (%g), got %g", (double)lo, (double)hi);
        d->kind = DIST_NORMAL;
        d->a = mean;
        d->b = sd;
        d->lo = lo;
        d->hi = hi == FLT_MAX ? INFINITY : hi;
        double mass = (isinf(d->hi) ? 1.0 : normal_cdf((d->hi - mean) / sd)) - normal_cdf((lo - mean) / sd);
        if (!(mass > 1e-6))
            return parser_fail(
                p, NULL,
                "min %g to max %s holds almost none of normal(mean %g, sd %g) (a share of %.2g): "
                "widen the bounds or move the mean",
                (double)lo, isinf(d->hi) ? "inf" : (snprintf(c, sizeof c, "%g", (double)hi), c), (double)mean,
                (double)sd, mass);
        return SHOAL_OK;
    }
    if (uniform != NULL) {
        if (!cJSON_IsArray(uniform) || cJSON_GetArraySize(uniform) != 2)
            return parser_fail(p, "uniform", "expected [lo, hi], got %s", parser_type_name(uniform));
        float lo = 0.0f, hi = 0.0f;
        size_t at = parser_push(p, "uniform", 0);
        shoal_status_t st = parser_read_float(p, cJSON_GetArrayItem(uniform, 0), "[0]", 0.0, 0, &lo);
        if (st == SHOAL_OK) st = parser_read_float(p, cJSON_GetArrayItem(uniform, 1), "[1]", 0.0, 0, &hi);
        if (st == SHOAL_OK && hi < lo)
            st = parser_fail(p, "[1]", "must be >= lo (%g), got %g", (double)lo, (double)hi);
        parser_pop(p, at);
        TRY(st);
        d->kind = DIST_UNIFORM;
        d->a = d->lo = lo;
        d->b = d->hi = hi;
        return SHOAL_OK;
    }
    int n = cJSON_IsArray(table) ? cJSON_GetArraySize(table) : -1;
    if (n < 1 || n > DIST_MAX_TABLE)
        return parser_fail(p, "table", "expected an array of 1 to %d pairs [value, weight], got %s",
                           DIST_MAX_TABLE, n < 0 ? parser_type_name(table) : "an array of other length");
    size_t old = parser_push(p, "table", 0);
    shoal_status_t st = SHOAL_OK;
    double total = 0.0;
    const cJSON* e = NULL;
    d->table_count = 0;
    cJSON_ArrayForEach(e, table)
    {
        size_t at = parser_push(p, NULL, d->table_count);
        float value = 0.0f, weight = 0.0f;
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2)
            st = parser_fail(p, NULL, "expected a pair [value, weight], got %s", parser_type_name(e));
        if (st == SHOAL_OK) st = parser_read_float(p, cJSON_GetArrayItem(e, 0), "[0]", 0.0, 0, &value);
        if (st == SHOAL_OK) st = parser_read_float(p, cJSON_GetArrayItem(e, 1), "[1]", 0.0, 0, &weight);
        parser_pop(p, at);
        if (st != SHOAL_OK) break;
        d->table[d->table_count] = value;
        total += weight;
        d->cumulative[d->table_count++] = total;
    }
    if (st == SHOAL_OK && !(total > 0.0)) st = parser_fail(p, NULL, "the weights must not all be 0");
    parser_pop(p, old);
    TRY(st);
    for (int i = 0; i < d->table_count; i++) d->cumulative[i] /= total;
    d->kind = DIST_TABLE;
    return SHOAL_OK;
}

shoal_status_t spawn_parse_distributions(parser_t* p, const cJSON* v, group_t* g)
{
    if (!cJSON_IsObject(v))
        return parser_fail(p, NULL, "expected an object of field name to distribution, got %s",
                           parser_type_name(v));
    TRY(parser_check_object(p, v, DISTRIBUTION_FIELDS, COUNT_OF(DISTRIBUTION_FIELDS)));
    for (int f = 0; f < DIST_FIELDS; f++) {
        const cJSON* e = MEMBER(v, DISTRIBUTION_FIELDS[f]);
        if (e == NULL) continue;
        if ((f == DIST_PREFERRED_SPEED || f == DIST_TIME_GAP) && !g->crowd.enabled)
            return parser_fail(p, DISTRIBUTION_FIELDS[f], "the group has no \"crowd\" object to draw it for");
        if (f == DIST_START_DELAY && !(g->weights[SHOAL_BEHAVIOR_NAVIGATE] > 0.0f))
            return parser_fail(p, DISTRIBUTION_FIELDS[f],
                               "the group does not navigate (no \"navigate\" weight) to draw it for");
        size_t at = parser_push(p, DISTRIBUTION_FIELDS[f], 0);
        shoal_status_t st = parse_distribution(p, e, &g->distributions[f]);
        parser_pop(p, at);
        TRY(st);
        g->has_distributions = 1;
    }
    const distribution_t* r = &g->distributions[DIST_RADIUS];
    if (r->kind != DIST_NONE && g->crowd.enabled && !(dist_low(r) > 0.0))
        return parser_fail(p, "vehicle.radius", "a crowd agent needs a radius > 0, and this draws down to %g",
                           dist_low(r));
    const distribution_t* m = &g->distributions[DIST_MAX_SPEED];
    if (m->kind != DIST_NONE && g->speed > dist_low(m))
        return parser_fail(p, "vehicle.max_speed", "draws down to %g, below spawn.speed (%g): give it a min",
                           dist_low(m), (double)g->speed);
    return SHOAL_OK;
}

static uint64_t agent_key(int32_t gi, int32_t index)
{
    return (uint64_t)(uint32_t)gi << 32 | (uint32_t)index;
}

void spawn_agent_values(const shoal_scenario_t* s, int32_t gi, int32_t index, shoal_vehicle_t* vehicle,
                        shoal_crowd_t* crowd)
{
    const group_t* g = &s->groups[gi];
    *vehicle = g->vehicle;
    *crowd = g->crowd;
    if (!g->has_distributions) return;
    float* fields[DIST_START_DELAY] = {&crowd->preferred_speed, &crowd->time_gap, &vehicle->radius,
                                       &vehicle->max_speed};
    for (int f = 0; f < DIST_START_DELAY; f++)
        if (g->distributions[f].kind != DIST_NONE)
            *fields[f] = (float)dist_draw(&g->distributions[f], s->seed, agent_key(gi, index), (uint32_t)f);
    /* Only where one of them is drawn: a group's own values stay as given. */
    int drawn = g->distributions[DIST_PREFERRED_SPEED].kind != DIST_NONE ||
                g->distributions[DIST_MAX_SPEED].kind != DIST_NONE;
    if (drawn && crowd->preferred_speed > vehicle->max_speed) crowd->preferred_speed = vehicle->max_speed;
}

void spawn_agent_start_delay(const shoal_scenario_t* s, int32_t gi, int32_t index, shoal_nav_t* nav)
{
    const group_t* g = &s->groups[gi];
    nav->start_delay = g->nav.start_delay;
    const distribution_t* d = &g->distributions[DIST_START_DELAY];
    if (d->kind != DIST_NONE)
        nav->start_delay = (float)dist_draw(d, s->seed, agent_key(gi, index), (uint32_t)DIST_START_DELAY);
}

/* ---- The plan ---- */

int spawn_needs_plan(const shoal_scenario_t* s)
{
    for (int32_t gi = 0; gi < s->group_count; gi++)
        if (spawn_planned(&s->groups[gi])) return 1;
    return 0;
}

/* A hash grid of points for the spacing test: cells of side `cell`, heads
 * of `size` (a power of 2) lists threaded through next. */
typedef struct grid_t {
    const double* xy;
    int32_t *head, *next;
    uint32_t size;
    double cell;
} grid_t;

static uint32_t grid_slot(const grid_t* gr, int64_t ix, int64_t iy)
{
    return (uint32_t)(((uint64_t)ix * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)iy * 0xc2b2ae3d27d4eb4full)) >> 7 &
           (gr->size - 1);
}

static void grid_add(grid_t* gr, int32_t i)
{
    uint32_t h =
        grid_slot(gr, (int64_t)floor(gr->xy[2 * i] / gr->cell), (int64_t)floor(gr->xy[2 * i + 1] / gr->cell));
    gr->next[i] = gr->head[h];
    gr->head[h] = i;
}

/* Whether a point of the grid is closer than min to (x, y). */
static int grid_near(const grid_t* gr, double x, double y, double min)
{
    int64_t cx = (int64_t)floor(x / gr->cell), cy = (int64_t)floor(y / gr->cell);
    for (int64_t dy = -1; dy <= 1; dy++)
        for (int64_t dx = -1; dx <= 1; dx++)
            for (int32_t i = gr->head[grid_slot(gr, cx + dx, cy + dy)]; i >= 0; i = gr->next[i]) {
                double ex = gr->xy[2 * i] - x, ey = gr->xy[2 * i + 1] - y;
                if (ex * ex + ey * ey < min * min) return 1;
            }
    return 0;
}

/* The scenario's wall segments near one group's area: a grid of
 * WALL_GRID x WALL_GRID cells over the area's bounding box, each listing the
 * segments within `reach` (the group's largest radius) of it, so that a
 * candidate tests the few walls near it. With no room for the lists (a
 * very long wall across a large area), every segment is tested. */
#define WALL_GRID 32
#define WALL_GRID_ITEMS ((size_t)1 << 22)
typedef struct walls_t {
    const double* segs; /* ax, ay, bx, by of every segment */
    int32_t seg_count;
    double lo[2], cell[2], reach;
    int32_t* start; /* WALL_GRID^2 + 1 offsets into items, or NULL */
    int32_t* items;
    size_t item_count;
} walls_t;

static int seg_near(const double* sg, double x, double y, double r)
{
    double ux = sg[2] - sg[0], uy = sg[3] - sg[1], px = x - sg[0], py = y - sg[1];
    double len2 = ux * ux + uy * uy, t = len2 > 0.0 ? (px * ux + py * uy) / len2 : 0.0;
    t = fmin(fmax(t, 0.0), 1.0);
    double ex = px - t * ux, ey = py - t * uy;
    return ex * ex + ey * ey < r * r;
}

/* The cell range [c0, c1] on axis k of [lo, hi], clamped; 0 if outside. */
static int cell_range(const walls_t* w, int k, double lo, double hi, int* c0, int* c1)
{
    double a = floor((lo - w->lo[k]) / w->cell[k]), b = floor((hi - w->lo[k]) / w->cell[k]);
    if (b < 0.0 || a > WALL_GRID - 1 || a != a || b != b) return 0;
    *c0 = a < 0.0 ? 0 : (int)a;
    *c1 = b > WALL_GRID - 1 ? WALL_GRID - 1 : (int)b;
    return 1;
}

/* Fills w's grid for an area of bounding box [lo, hi] and radii up to
 * reach; leaves start NULL when the lists would not fit. */
static void walls_index(walls_t* w, const allocator_t* alloc, const double lo[2], const double hi[2],
                        double reach)
{
    w->start = NULL;
    w->items = NULL;
    w->item_count = 0;
    w->reach = reach;
    for (int k = 0; k < 2; k++) {
        w->lo[k] = lo[k];
        w->cell[k] = fmax((hi[k] - lo[k]) / WALL_GRID, 1e-6);
    }
    if (w->seg_count == 0 || !(reach > 0.0)) return;
    size_t total = 0;
    int x0, x1, y0, y1;
    for (int32_t i = 0; i < w->seg_count; i++) {
        const double* sg = w->segs + 4 * i;
        if (cell_range(w, 0, fmin(sg[0], sg[2]) - reach, fmax(sg[0], sg[2]) + reach, &x0, &x1) &&
            cell_range(w, 1, fmin(sg[1], sg[3]) - reach, fmax(sg[1], sg[3]) + reach, &y0, &y1))
            total += (size_t)(x1 - x0 + 1) * (size_t)(y1 - y0 + 1);
    }
    if (total > WALL_GRID_ITEMS) return;
    w->start = mem_calloc(alloc, (WALL_GRID * WALL_GRID + 1) * sizeof(int32_t));
    w->items = total > 0 ? mem_alloc(alloc, total * sizeof(int32_t)) : NULL;
    if (w->start == NULL || (total > 0 && w->items == NULL)) {
        mem_free(alloc, w->start, (WALL_GRID * WALL_GRID + 1) * sizeof(int32_t));
        mem_free(alloc, w->items, total * sizeof(int32_t));
        w->start = NULL; /* a full scan instead: slower, not wrong */
        w->items = NULL;
        return;
    }
    w->item_count = total;
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t i = 0; i < w->seg_count; i++) {
            const double* sg = w->segs + 4 * i;
            if (!cell_range(w, 0, fmin(sg[0], sg[2]) - reach, fmax(sg[0], sg[2]) + reach, &x0, &x1) ||
                !cell_range(w, 1, fmin(sg[1], sg[3]) - reach, fmax(sg[1], sg[3]) + reach, &y0, &y1))
                continue;
            for (int cy = y0; cy <= y1; cy++)
                for (int cx = x0; cx <= x1; cx++) {
                    int32_t c = cy * WALL_GRID + cx;
                    if (pass == 0)
                        w->start[c + 1]++;
                    else
                        w->items[w->start[c]++] = i;
                }
        }
        if (pass == 0)
            for (int c = 0; c < WALL_GRID * WALL_GRID; c++) w->start[c + 1] += w->start[c];
        else /* the fill moved each start to the next cell's: back one cell */
            for (int c = WALL_GRID * WALL_GRID; c > 0; c--) w->start[c] = w->start[c - 1];
    }
    w->start[0] = 0;
}

static void walls_release(walls_t* w, const allocator_t* alloc)
{
    if (w->start != NULL) mem_free(alloc, w->start, (WALL_GRID * WALL_GRID + 1) * sizeof(int32_t));
    if (w->items != NULL) mem_free(alloc, w->items, w->item_count * sizeof(int32_t));
    w->start = NULL;
    w->items = NULL;
}

/* Whether (x, y) is within r of one of the scenario's walls. */
static int near_wall(const walls_t* w, double x, double y, double r)
{
    if (!(r > 0.0)) return 0;
    int x0, x1, y0, y1;
    if (w->start != NULL && r <= w->reach && cell_range(w, 0, x, x, &x0, &x1) &&
        cell_range(w, 1, y, y, &y0, &y1) && x >= w->lo[0] && y >= w->lo[1] &&
        x < w->lo[0] + WALL_GRID * w->cell[0] && y < w->lo[1] + WALL_GRID * w->cell[1]) {
        int32_t c = y0 * WALL_GRID + x0;
        for (int32_t k = w->start[c]; k < w->start[c + 1]; k++)
            if (seg_near(w->segs + 4 * w->items[k], x, y, r)) return 1;
        return 0;
    }
    for (int32_t i = 0; i < w->seg_count; i++)
        if (seg_near(w->segs + 4 * i, x, y, r)) return 1;
    return 0;
}

/* A uniform random point of the group's area (a ring: its circle). */
static void random_point(const shoal_scenario_t* s, const group_t* g, uint64_t key, uint32_t attempt,
                         double out[2])
{
    double u[3];
    for (uint32_t k = 0; k < 3; k++) u[k] = rng_unit(s->seed, key, 4u * attempt + k, SPAWN_STREAM);
    double x = 0.0, y = 0.0;
    if (g->shape == SHAPE_DISC || g->shape == SHAPE_RING) {
        double r = g->radius * (g->shape == SHAPE_DISC ? sqrt(u[0]) : 1.0), a = 2.0 * PI * u[1];
        x = g->center[0] + r * cos(a);
        y = g->center[1] + r * sin(a);
    } else if (g->shape == SHAPE_BOX) {
        x = g->center[0] + (u[0] - 0.5) * g->size[0];
        y = g->center[1] + (u[1] - 0.5) * g->size[1];
    } else if (g->shape == SHAPE_POLYGON) {
        int t = 0;
        while (t < g->triangle_count - 1 && u[0] >= g->triangle_cumulative[t]) t++;
        double b1 = u[1], b2 = u[2];
        if (b1 + b2 > 1.0) b1 = 1.0 - b1, b2 = 1.0 - b2;
        const float *a = g->polygon[g->triangles[t][0]], *b = g->polygon[g->triangles[t][1]],
                    *c = g->polygon[g->triangles[t][2]];
        x = a[0] + b1 * ((double)b[0] - a[0]) + b2 * ((double)c[0] - a[0]);
        y = a[1] + b1 * ((double)b[1] - a[1]) + b2 * ((double)c[1] - a[1]);
    } else {
        x = g->center[0];
        y = g->center[1];
    }
    out[0] = x;
    out[1] = y;
}

/* Whether (x, y) is in the group's area (its edge included, to rounding). */
static int in_area(const group_t* g, double x, double y)
{
    double dx = x - g->center[0], dy = y - g->center[1];
    if (g->shape == SHAPE_DISC) return dx * dx + dy * dy <= (double)g->radius * g->radius * (1.0 + 1e-9);
    if (g->shape == SHAPE_BOX)
        return fabs(dx) <= 0.5 * g->size[0] * (1.0 + 1e-9) && fabs(dy) <= 0.5 * g->size[1] * (1.0 + 1e-9);
    return polygon_contains(g, x, y);
}

/* The bounding box of the group's area. */
static void area_bounds(const group_t* g, double lo[2], double hi[2])
{
    for (int k = 0; k < 2; k++) {
        double half = g->shape == SHAPE_BOX ? 0.5 * g->size[k] : g->radius;
        lo[k] = g->center[k] - half;
        hi[k] = g->center[k] + half;
    }
    if (g->shape == SHAPE_POLYGON)
        for (int i = 0; i < g->polygon_count; i++)
            for (int k = 0; k < 2; k++) {
                lo[k] = i == 0 ? g->polygon[i][k] : fmin(lo[k], g->polygon[i][k]);
                hi[k] = i == 0 ? g->polygon[i][k] : fmax(hi[k], g->polygon[i][k]);
            }
}

typedef struct candidate_t {
    double d2, x, y;
} candidate_t;

static int candidate_order(const void* pa, const void* pb)
{
    const candidate_t *a = pa, *b = pb;
    if (a->d2 != b->d2) return a->d2 < b->d2 ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    return (a->x > b->x) - (a->x < b->x);
}

/* The lattice points of the group's area that are free (no wall within
 * the agent's radius, no earlier agent within the spacing), nearest the
 * center first, into xy; searched in a growing disc around the center so
 * that a large area with few agents costs what its agents do. */
static shoal_status_t plan_lattice(const shoal_scenario_t* s, int32_t gi, const allocator_t* alloc,
                                   const walls_t* walls, grid_t* gr, double* xy, int32_t first, char* msg,
                                   size_t msg_size)
{
    const group_t* g = &s->groups[gi];
    const double sp = g->min_spacing, row = g->placement == PLACE_LATTICE ? sp * SQRT3_2 : sp;
    double lo[2], hi[2];
    area_bounds(g, lo, hi);
    double far = 0.0;
    for (int c = 0; c < 4; c++)
        far =
            fmax(far, hypot((c & 1 ? hi[0] : lo[0]) - g->center[0], (c & 2 ? hi[1] : lo[1]) - g->center[1]));
    double reach = sqrt(g->count * sp * row / PI) * 1.5 + 2.0 * sp;
    for (;;) {
        double r = fmin(reach, far + sp);
        int64_t j0 = (int64_t)floor((fmax(lo[1], g->center[1] - r) - g->center[1]) / row) - 1,
                j1 = (int64_t)ceil((fmin(hi[1], g->center[1] + r) - g->center[1]) / row) + 1,
                i0 = (int64_t)floor((fmax(lo[0], g->center[0] - r) - g->center[0]) / sp) - 1,
                i1 = (int64_t)ceil((fmin(hi[0], g->center[0] + r) - g->center[0]) / sp) + 1;
        double cells = (double)(j1 - j0 + 1) * (double)(i1 - i0 + 1);
        if (cells > 1e8) {
            snprintf(msg, msg_size,
                     "group '%s' (groups[%d]): a lattice at min_spacing %g m over this area has %.3g points, "
                     "more than placement searches (1e8)",
                     g->name, (int)gi, sp, cells);
            return SHOAL_ERR_CAPACITY;
        }
        size_t bytes = (size_t)cells * sizeof(candidate_t);
        candidate_t* cand = mem_alloc(alloc, bytes);
        if (cand == NULL) {
            snprintf(msg, msg_size, "out of memory for %.0f lattice points of group '%s'", cells, g->name);
            return SHOAL_ERR_OUT_OF_MEMORY;
        }
        size_t n = 0;
        for (int64_t j = j0; j <= j1; j++)
            for (int64_t i = i0; i <= i1; i++) {
                double shift = g->placement == PLACE_LATTICE && (j & 1) ? 0.5 : 0.0;
                double x = g->center[0] + ((double)i + shift) * sp, y = g->center[1] + (double)j * row;
                double d2 = (x - g->center[0]) * (x - g->center[0]) + (y - g->center[1]) * (y - g->center[1]);
                if (d2 > r * r || !in_area(g, x, y) || grid_near(gr, x, y, sp)) continue;
                cand[n++] = (candidate_t){d2, x, y};
            }
        qsort(cand, n, sizeof *cand, candidate_order);
        /* Walls per agent: the k-th agent takes the nearest free point its
         * own radius allows. */
        int32_t placed = 0;
        for (size_t c = 0; c < n && placed < g->count; c++) {
            shoal_vehicle_t vehicle;
            shoal_crowd_t crowd;
            spawn_agent_values(s, gi, placed, &vehicle, &crowd);
            if (near_wall(walls, cand[c].x, cand[c].y, vehicle.radius)) continue;
            xy[2 * (first + placed)] = cand[c].x;
            xy[2 * (first + placed) + 1] = cand[c].y;
            placed++;
        }
        mem_free(alloc, cand, bytes);
        if (placed == g->count) {
            for (int32_t k = 0; k < placed; k++) grid_add(gr, first + k);
            return SHOAL_OK;
        }
        if (r >= far + sp) {
            snprintf(
                msg, msg_size,
                "group '%s' (groups[%d]): %d agents do not fit its spawn area (%g m^2) on a %s lattice at "
                "min_spacing %g m: it has %d free points (less those within an agent's radius of a wall "
                "or min_spacing of an earlier group's agent)",
                g->name, (int)gi, (int)g->count, g->area,
                g->placement == PLACE_LATTICE ? "hexagonal" : "square", sp, (int)placed);
            return SHOAL_ERR_CAPACITY;
        }
        reach *= 2.0;
    }
}

/* Random points at least min_spacing apart, by rejection. */
static shoal_status_t plan_random(const shoal_scenario_t* s, int32_t gi, const walls_t* walls, grid_t* gr,
                                  double* xy, int32_t first, char* msg, size_t msg_size)
{
    const group_t* g = &s->groups[gi];
    const double sp = g->min_spacing;
    const int ring = g->shape == SHAPE_RING;
    /* No arrangement holds more discs of diameter sp than the densest
     * packing of the area grown by sp / 2 all round. */
    double dense = g->shape == SHAPE_RING
                       ? g->perimeter / sp + 1.0
                       : (g->area + 0.5 * sp * g->perimeter + PI * sp * sp / 4.0) / (SQRT3_2 * sp * sp);
    if (sp > 0.0 && g->count > dense) {
        snprintf(msg, msg_size,
                 "group '%s' (groups[%d]): %d agents cannot fit its spawn area (%g %s) at min_spacing %g m "
                 "however placed (at most about %.0f)",
                 g->name, (int)gi, (int)g->count, ring ? g->perimeter : g->area,
                 ring ? "m long: a ring is a line" : "m^2", sp, floor(dense));
        return SHOAL_ERR_CAPACITY;
    }
    for (int32_t i = 0; i < g->count; i++) {
        shoal_vehicle_t vehicle;
        shoal_crowd_t crowd;
        spawn_agent_values(s, gi, i, &vehicle, &crowd);
        uint64_t key = agent_key(gi, i);
        double q[2];
        uint32_t a = 0;
        for (;; a++) {
            if (a == (sp > 0.0 ? MAX_ATTEMPTS : 1)) {
                snprintf(msg, msg_size,
                         "group '%s' (groups[%d]): placed %d of %d agents in its spawn area (%g %s) at "
                         "min_spacing %g m, then %d random draws found no free spot (random placement fills "
                         "about half of the densest packing, here about %.0f agents): lower count or "
                         "min_spacing%s",
                         g->name, (int)gi, (int)i, (int)g->count, ring ? g->perimeter : g->area,
                         ring ? "m long: a ring is a line" : "m^2", sp, MAX_ATTEMPTS, floor(dense),
                         ring ? "" : ", or use \"placement\": \"lattice\"");
                return SHOAL_ERR_CAPACITY;
            }
            random_point(s, g, key, a, q);
            if (sp <= 0.0) break;
            if (!near_wall(walls, q[0], q[1], vehicle.radius) && !grid_near(gr, q[0], q[1], sp)) break;
        }
        xy[2 * (first + i)] = q[0];
        xy[2 * (first + i) + 1] = q[1];
        if (sp > 0.0) grid_add(gr, first + i);
    }
    return SHOAL_OK;
}

shoal_status_t spawn_plan(const shoal_scenario_t* s, const allocator_t* alloc, double* xy, char* msg,
                          size_t msg_size)
{
    size_t n = s->agent_count > 0 ? (size_t)s->agent_count : 1;
    uint32_t size = 1;
    while (size < 2 * n && size < (1u << 30)) size <<= 1;
    int32_t segs = 0;
    for (int32_t w = 0; w < s->wall_count; w++)
        segs += s->walls[w].closed ? s->walls[w].count : s->walls[w].count - 1;
    size_t seg_bytes = (segs > 0 ? (size_t)segs : 1) * 4 * sizeof(double);
    int32_t* head = mem_alloc(alloc, size * sizeof(int32_t));
    int32_t* next = mem_alloc(alloc, n * sizeof(int32_t));
    double* seg = mem_alloc(alloc, seg_bytes);
    shoal_status_t st = SHOAL_OK;
    if (head == NULL || next == NULL || seg == NULL) {
        snprintf(msg, msg_size, "out of memory for placing %zu agents", n);
        st = SHOAL_ERR_OUT_OF_MEMORY;
    }
    walls_t walls = {.segs = seg, .seg_count = segs};
    for (int32_t w = 0, i = 0; w < s->wall_count && seg != NULL; w++) {
        const wall_t* wl = &s->walls[w];
        for (int k = 0; k < (wl->closed ? wl->count : wl->count - 1); k++, i++) {
            const float *a = wl->points + 2 * k, *b = wl->points + 2 * ((k + 1) % wl->count);
            double* d = seg + 4 * i;
            d[0] = a[0], d[1] = a[1], d[2] = b[0], d[3] = b[1];
        }
    }
    int32_t first = 0;
    for (int32_t gi = 0; gi < s->group_count && st == SHOAL_OK; gi++) {
        const group_t* g = &s->groups[gi];
        if (spawn_planned(g)) {
            /* Every earlier agent, in a grid of this group's spacing. */
            grid_t gr = {xy, head, next, size, g->min_spacing > 0.0f ? g->min_spacing : 1.0};
            for (uint32_t h = 0; h < size; h++) head[h] = -1;
            double reach = 0.0, lo[2], hi[2];
            if (g->min_spacing > 0.0f) {
                for (int32_t i = 0; i < first; i++) grid_add(&gr, i);
                for (int32_t i = 0; i < g->count; i++) {
                    shoal_vehicle_t vehicle;
                    shoal_crowd_t crowd;
                    spawn_agent_values(s, gi, i, &vehicle, &crowd);
                    reach = fmax(reach, vehicle.radius);
                }
            }
            area_bounds(g, lo, hi);
            walls_index(&walls, alloc, lo, hi, reach);
            st = g->placement == PLACE_RANDOM
                     ? plan_random(s, gi, &walls, &gr, xy, first, msg, msg_size)
                     : plan_lattice(s, gi, alloc, &walls, &gr, xy, first, msg, msg_size);
            walls_release(&walls, alloc);
        }
        first += g->count;
    }
    mem_free(alloc, head, size * sizeof(int32_t));
    mem_free(alloc, next, n * sizeof(int32_t));
    mem_free(alloc, seg, seg_bytes);
    return st;
}
