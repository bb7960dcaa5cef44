/* The scenario schema: what each key of a scenario file means, turned into
 * the in-memory scenario (scenario_model.h), and the public calls that load
 * a scenario from a file or a string, destroy it and read it. A group's
 * behaviors, routes and formation are in scenario_behaviors.c; the JSON
 * reading itself (types, ranges, unknown keys, paths in messages) is in
 * json_reader.c; adding a scenario to a world is scenario_populate.c.
 * docs/scenarios.md is the reference for every key.
 *
 * Decisions:
 * - Defaults are set before the file is read, so a key left out means its
 *   documented default, and the C API's defaults (shoal_world_default_def,
 *   shoal_vehicle_default, ...) where the key mirrors a C field.
 * - References to agents (pursuit targets, leaders) are checked while
 *   parsing, so that populate only looks handles up.
 * - With "wrap", a spawn region must lie inside the box. The world would wrap
 *   a position outside it silently, which hides a box or spawn mistake.
 */
#include "shoal/scenario.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs/world.h" /* SHOAL_MAX_THREADS, the limit of "threads" */
#include "io/file_read.h"
#include "io/scenario_model.h"

#define MAX_BYTES ((size_t)FILE_LIMIT_SCENARIO)
#define MAX_AGENTS 100000000
#define MAX_NAME 255

/* Known keys of each kind of object (a group's behavior keys are in
 * scenario_behaviors.c). */
static const char* const ROOT_KEYS[] = {"name",    "dimensions", "seed",    "dt",        "steps",
                                        "threads", "world",      "groups",  "obstacles", "walls",
                                        "nav",     "navmesh",    "measure", "collect"};
static const char* const COLLECT_KEYS[] = {"every", "means", "crowd", "lines", "areas"};
/* What "collect.means" may name: "speed", then the agent columns of
 * shoal_world_column (shoal/extend.h) that are floats; those from
 * COLLECT_FIRST_3D on exist in 3D worlds only. */
static const char* const COLLECT_MEANS[] = {"speed",
                                            "position.x",
                                            "position.y",
                                            "velocity.x",
                                            "velocity.y",
                                            "heading",
                                            "target.x",
                                            "target.y",
                                            "threat.x",
                                            "threat.y",
                                            "desired.x",
                                            "desired.y",
                                            "max_speed",
                                            "radius",
                                            "angular_velocity.z",
                                            "position.z",
                                            "velocity.z",
                                            "target.z",
                                            "threat.z",
                                            "desired.z",
                                            "orientation.w",
                                            "orientation.x",
                                            "orientation.y",
                                            "orientation.z",
                                            "angular_velocity.x",
                                            "angular_velocity.y"};
#define COLLECT_FIRST_3D 15
static const char* const WORLD_KEYS[] = {"wrap", "bounds_min", "bounds_max", "cell_size", "reorder_interval"};
static const char* const OBSTACLE_KEYS[] = {"center", "radius"};
static const char* const WALL_KEYS[] = {"points", "closed"};
static const char* const NAV_KEYS[] = {
    "cell",      "clearance",      "wall_distance",    "wall_speed", "bounds",   "margin",
    "max_bytes", "density_weight", "density_interval", "goals",      "journeys", "zones"};
static const char* const NAVMESH_KEYS[] = {
    "cell", "agent_radius", "bounds", "margin", "replans_per_step", "replan_interval", "off_path_distance"};
static const char* const NAV_GOAL_KEYS[] = {"name", "point", "line", "area", "exit"};
static const char* const NAV_ZONE_KEYS[] = {"polygon", "speed_factor"};
static const char* const JOURNEY_KEYS[] = {"name", "stages"};
static const char* const STAGE_KEYS[] = {"name", "goal", "wait", "then"};
static const char* const TRANSITION_KEYS[] = {"fixed", "round_robin", "quickest"};
static const char* const GROUP_KEYS[] = {
    "name",      "count",   "spawn",   "vehicle", "control", "behaviors",    "target",    "threat",
    "neighbors", "wander",  "pursuit", "follow",  "avoid",   "dseek",        "formation", "crowd",
    "contacts",  "planner", "nav",     "navmesh", "ground",  "distributions"};
static const char* const SPAWN_KEYS[] = {"shape", "center", "radius", "size",      "heading",
                                         "pitch", "speed",  "points", "placement", "min_spacing"};
static const char* const VEHICLE_KEYS[] = {"mass",      "inertia",       "max_force", "max_torque",
                                           "max_speed", "max_turn_rate", "radius"};
static const char* const CONTROL_KEYS[] = {"speed_gain", "heading_gain", "turn_damping"};
static const char* const SHAPE_NAMES[] = {"point", "disc", "ring", "box", "polygon"};
static const char* const DIRECTION_NAMES[] = {"random", "inward", "outward"};

/* ---- Scenario structure ---- */

/* heading or pitch: radians, or "random", "inward" or "outward". */
static shoal_status_t get_direction(parser_t* p, const cJSON* obj, const char* key, int32_t* mode,
                                    float* angle)
{
    const cJSON* v = MEMBER(obj, key);
    int32_t choice = 0;
    if (v == NULL) return SHOAL_OK;
    TRY(parser_read_choice(p, v, key, DIRECTION_NAMES, COUNT_OF(DIRECTION_NAMES), &choice, angle));
    *mode = choice < 0 ? DIR_FIXED : DIR_RANDOM + choice;
    return SHOAL_OK;
}

static shoal_status_t parse_spawn(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, SPAWN_KEYS, COUNT_OF(SPAWN_KEYS)));
    const cJSON* shape = MEMBER(v, "shape");
    if (shape != NULL)
        TRY(parser_read_choice(p, shape, "shape", SHAPE_NAMES, COUNT_OF(SHAPE_NAMES), &g->shape, NULL));
    TRY(parser_get_point(p, v, "center", g->center));
    TRY(parser_get_float(p, v, "radius", 0.0, 0, &g->radius));
    const cJSON* size = MEMBER(v, "size");
    if (size != NULL) TRY(parser_read_vector(p, size, "size", 0.0, "[w, h]", "[w, h, d]", g->size));
    TRY(get_direction(p, v, "heading", &g->heading_mode, &g->heading));
    /* 2D agents have no pitch; accepting one would hide a mistake. */
    if (p->dimensions == 2 && MEMBER(v, "pitch") != NULL)
        return parser_fail(p, "pitch", "only allowed in 3D scenarios (dimensions is 2)");
    TRY(get_direction(p, v, "pitch", &g->pitch_mode, &g->pitch));
    TRY(parser_get_float(p, v, "speed", 0.0, 0, &g->speed));
    return spawn_parse_area(p, v, g); /* points, placement, min_spacing (scenario_spawn.c) */
}

static shoal_status_t parse_vehicle(parser_t* p, const cJSON* v, shoal_vehicle_t* out)
{
    TRY(parser_check_object(p, v, VEHICLE_KEYS, COUNT_OF(VEHICLE_KEYS)));
    TRY(parser_get_float(p, v, "mass", 0.0, 1, &out->mass));
    TRY(parser_get_float(p, v, "inertia", 0.0, 1, &out->inertia));
    TRY(parser_get_float(p, v, "max_force", 0.0, 0, &out->max_force));
    TRY(parser_get_float(p, v, "max_torque", 0.0, 0, &out->max_torque));
    TRY(parser_get_float(p, v, "max_speed", 0.0, 0, &out->max_speed));
    TRY(parser_get_float(p, v, "max_turn_rate", 0.0, 0, &out->max_turn_rate));
    return parser_get_float(p, v, "radius", 0.0, 0, &out->radius);
}

static shoal_status_t parse_control(parser_t* p, const cJSON* v, shoal_control_t* out)
{
    TRY(parser_check_object(p, v, CONTROL_KEYS, COUNT_OF(CONTROL_KEYS)));
    TRY(parser_get_float(p, v, "speed_gain", 0.0, 0, &out->speed_gain));
    TRY(parser_get_float(p, v, "heading_gain", 0.0, 0, &out->heading_gain));
    return parser_get_float(p, v, "turn_damping", 0.0, 0, &out->turn_damping);
}

static shoal_status_t parse_group(parser_t* p, const cJSON* v, int index, group_t* g, int64_t* total)
{
    char buf[32];
    TRY(parser_check_object(p, v, GROUP_KEYS, COUNT_OF(GROUP_KEYS)));
    g->shape = SHAPE_DISC;
    g->heading_mode = DIR_RANDOM;
    g->pitch_mode = DIR_FIXED;
    g->radius = 10.0f;
    g->size[0] = g->size[1] = 20.0f;
    g->size[2] = p->dimensions == 3 ? 20.0f : 0.0f;
    g->vehicle = shoal_vehicle_default();
    g->control = shoal_control_default();
    behaviors_set_defaults(g);

    const cJSON* name = MEMBER(v, "name");
    if (name != NULL) {
        TRY(parser_read_name(p, name, "name", MAX_NAME, &g->name));
    } else {
        snprintf(buf, sizeof buf, "group%d", index);
        if ((g->name = json_copy_string(buf)) == NULL) return parser_out_of_memory(p);
    }
    if (MEMBER(v, "count") == NULL) return parser_missing(p, "count", NULL);
    int64_t count = 0;
    TRY(parser_get_integer(p, v, "count", 0.0, MAX_AGENTS, &count));
    if ((*total += count) > MAX_AGENTS)
        return parser_fail(p, "count", "the total agent count would be %" PRId64 ", above the limit of %d",
                           *total, MAX_AGENTS);
    g->count = (int32_t)count;

    PARSE_MEMBER(p, v, "spawn", parse_spawn, g);
    PARSE_MEMBER(p, v, "vehicle", parse_vehicle, &g->vehicle);
    PARSE_MEMBER(p, v, "control", parse_control, &g->control);
    TRY(parser_get_bool(p, v, "contacts", &g->contacts));
    const cJSON* target = MEMBER(v, "target");
    if (cJSON_IsString(target)) {
        static const char* const antipode[] = {"antipode"};
        int32_t unused = 0;
        TRY(parser_read_choice(p, target, "target", antipode, 1, &unused, NULL));
        g->target_antipode = 1;
    } else if (cJSON_IsObject(target)) {
        static const char* const offset_keys[] = {"offset"};
        size_t at = parser_push(p, "target", 0);
        shoal_status_t st = parser_check_object(p, target, offset_keys, 1);
        if (st == SHOAL_OK && MEMBER(target, "offset") == NULL) st = parser_missing(p, "offset", NULL);
        if (st == SHOAL_OK) st = parser_get_point(p, target, "offset", g->target);
        parser_pop(p, at);
        TRY(st);
        g->target_offset = 1;
    } else {
        TRY(parser_get_point(p, v, "target", g->target));
    }
    TRY(parser_get_point(p, v, "threat", g->threat));
    TRY(behaviors_parse_group(p, v, g));
    PARSE_MEMBER(p, v, "distributions", spawn_parse_distributions, g);

    /* The world would clamp a faster start; say so instead of hiding it
     * (a drawn max_speed is checked with its distribution). */
    if (g->speed > g->vehicle.max_speed && g->distributions[DIST_MAX_SPEED].kind == DIST_NONE) {
        char a[32], b[32];
        return parser_fail(p, "spawn.speed", "must be <= vehicle.max_speed (%s), got %s",
                           json_format_number(a, g->vehicle.max_speed), json_format_number(b, g->speed));
    }
    return SHOAL_OK;
}

/* "world": space and the spatial hash. Bounds belong to wrap: without it
 * space is unbounded and a box would be ignored, so giving one is an error. */
static shoal_status_t parse_collect(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    if (!cJSON_IsObject(v)) return parser_fail(p, NULL, "expected an object, got %s", parser_type_name(v));
    TRY(parser_check_object(p, v, COLLECT_KEYS, COUNT_OF(COLLECT_KEYS)));
    shoal_scenario_collect_t* c = &s->collect;
    c->given = 1;
    int64_t every = c->every;
    TRY(parser_get_integer(p, v, "every", 1.0, INT32_MAX, &every));
    c->every = (int32_t)every;
    TRY(parser_get_bool(p, v, "crowd", &c->crowd));
    TRY(parser_get_bool(p, v, "lines", &c->lines));
    TRY(parser_get_bool(p, v, "areas", &c->areas));
    const cJSON* means = MEMBER(v, "means");
    if (means == NULL) return SHOAL_OK;
    if (!cJSON_IsArray(means))
        return parser_fail(p, "means", "expected an array of column names, got %s", parser_type_name(means));
    int n = cJSON_GetArraySize(means);
    if (n > SHOAL_SCENARIO_MAX_MEANS)
        return parser_fail(p, "means", "names %d columns, above the limit of %d", n,
                           SHOAL_SCENARIO_MAX_MEANS);
    c->mean_count = 0;
    size_t old = parser_push(p, "means", 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    cJSON_ArrayForEach(e, means)
    {
        size_t at = parser_push(p, NULL, c->mean_count);
        int k = -1;
        for (int i = 0; cJSON_IsString(e) && i < (int)COUNT_OF(COLLECT_MEANS); ++i)
            if (strcmp(e->valuestring, COLLECT_MEANS[i]) == 0) k = i;
        if (!cJSON_IsString(e)) {
            st = parser_fail(p, NULL, "expected a column name (a string), got %s", parser_type_name(e));
        } else if (k < 0) {
            char shown[64];
            const char* close = parser_suggest(e->valuestring, COLLECT_MEANS, COUNT_OF(COLLECT_MEANS));
            st = parser_fail(p, NULL,
                             "\"%s\" is no column to average (\"speed\", or a float column: \"position.x\", "
                             "\"velocity.y\", \"heading\", \"max_speed\", ... docs/scenarios.md)%s%s%s",
                             parser_printable(shown, e->valuestring), close ? "; did you mean \"" : "",
                             close ? close : "", close ? "\"?" : "");
        } else if (k >= COLLECT_FIRST_3D && s->dimensions != 3) {
            st = parser_fail(p, NULL, "\"%s\" is a column of 3D worlds; this scenario is %dD",
                             COLLECT_MEANS[k], (int)s->dimensions);
        } else {
            c->means[c->mean_count++] = COLLECT_MEANS[k];
        }
        parser_pop(p, at);
        if (st != SHOAL_OK) break;
    }
    parser_pop(p, old);
    return st;
}

static shoal_status_t parse_world(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    char key[32];
    TRY(parser_check_object(p, v, WORLD_KEYS, COUNT_OF(WORLD_KEYS)));
    TRY(parser_get_bool(p, v, "wrap", &s->wrap));
    for (int i = 0; i < 2; i++) {
        const char* name = i == 0 ? "bounds_min" : "bounds_max";
        if (MEMBER(v, name) == NULL) {
            if (s->wrap) return parser_missing(p, name, "(wrap is true: the box is the torus)");
        } else if (!s->wrap) {
            return parser_fail(p, name,
                               "only used with \"wrap\": true (without it space "
                               "is unbounded)");
        }
        TRY(parser_get_point(p, v, name, i == 0 ? s->bounds_min : s->bounds_max));
    }
    for (int k = 0; s->wrap && k < p->dimensions; k++) {
        if (!(s->bounds_max[k] > s->bounds_min[k])) {
            snprintf(key, sizeof key, "bounds_max[%d]", k);
            return parser_fail(p, key, "must be > bounds_min[%d] (%g) with wrap, got %g", k,
                               (double)s->bounds_min[k], (double)s->bounds_max[k]);
        }
    }
    int64_t reorder = s->reorder_interval;
    TRY(parser_get_float(p, v, "cell_size", 0.0, 0, &s->cell_size));
    TRY(parser_get_integer(p, v, "reorder_interval", 0.0, INT32_MAX, &reorder));
    s->reorder_interval = (int32_t)reorder;
    return SHOAL_OK;
}

/* The first axis on which [lo, hi] leaves the wrapped box, or -1. The box is
 * closed here: on a torus bounds_max is the same place as bounds_min. */
static int outside_box(const shoal_scenario_t* s, const double lo[3], const double hi[3])
{
    for (int k = 0; s->wrap && k < s->dimensions; k++)
        if (lo[k] < s->bounds_min[k] || hi[k] > s->bounds_max[k]) return k;
    return -1;
}

static shoal_status_t parse_obstacle(parser_t* p, const cJSON* v, const shoal_scenario_t* s, obstacle_t* o)
{
    TRY(parser_check_object(p, v, OBSTACLE_KEYS, COUNT_OF(OBSTACLE_KEYS)));
    if (MEMBER(v, "center") == NULL) return parser_missing(p, "center", NULL);
    if (MEMBER(v, "radius") == NULL) return parser_missing(p, "radius", NULL);
    TRY(parser_get_point(p, v, "center", o->center));
    TRY(parser_get_float(p, v, "radius", 0.0, 0, &o->radius));
    const double c[3] = {o->center[0], o->center[1], o->center[2]};
    int k = outside_box(s, c, c);
    if (k >= 0)
        return parser_fail(p, "center", "%c = %g is outside the wrapped world box (%g to %g)", "xyz"[k],
                           (double)o -> center[k], (double)s -> bounds_min[k], (double)s -> bounds_max[k]);
    return SHOAL_OK;
}

/* "obstacles": spheres (circles in 2D) that avoid steers around. */
static shoal_status_t parse_obstacles(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    if (!cJSON_IsArray(v))
        return parser_fail(p, NULL, "expected an array of objects, got %s", parser_type_name(v));
    int n = cJSON_GetArraySize(v);
    if (n > 0 && (s->obstacles = calloc((size_t)n, sizeof *s->obstacles)) == NULL)
        return parser_out_of_memory(p);
    const cJSON* e = NULL;
    cJSON_ArrayForEach(e, v)
    {
        size_t at = parser_push(p, NULL, s->obstacle_count);
        shoal_status_t st = parse_obstacle(p, e, s, &s->obstacles[s->obstacle_count]);
        parser_pop(p, at);
        TRY(st);
        s->obstacle_count++;
    }
    return SHOAL_OK;
}

/* A wall: {"points": [[x, y], ...], "closed": false}. The world checks the
 * rest when populate adds it (zero-length segments, coordinates). */
static shoal_status_t parse_wall(parser_t* p, const cJSON* v, wall_t* wl)
{
    TRY(parser_check_object(p, v, WALL_KEYS, COUNT_OF(WALL_KEYS)));
    const cJSON* pts = MEMBER(v, "points");
    if (pts == NULL) return parser_missing(p, "points", NULL);
    TRY(parser_get_bool(p, v, "closed", &wl->closed));
    int least = wl->closed ? 3 : 2;
    if (!cJSON_IsArray(pts) || cJSON_GetArraySize(pts) < least ||
        cJSON_GetArraySize(pts) > SHOAL_MAX_WALL_POINTS)
        return parser_fail(p, "points", "expected an array of %d to %d points [x, y] for %s wall, got %s",
                           least, SHOAL_MAX_WALL_POINTS, wl->closed ? "a closed" : "an open",
                           cJSON_IsArray(pts) ? "fewer or more" : parser_type_name(pts));
    int n = cJSON_GetArraySize(pts);
    wl->points = calloc((size_t)n * 2, sizeof(float));
    if (!wl->points) return parser_out_of_memory(p);
    size_t old = parser_push(p, "points", 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    cJSON_ArrayForEach(e, pts)
    {
        char name[24];
        snprintf(name, sizeof name, "[%d]", (int)wl->count);
        float q[3] = {0.0f, 0.0f, 0.0f};
        st = parser_read_vector(p, e, name, -DBL_MAX, "[x, y]", "[x, y]", q);
        if (st != SHOAL_OK) break;
        wl->points[2 * wl->count] = q[0];
        wl->points[2 * wl->count + 1] = q[1];
        wl->count++;
    }
    parser_pop(p, old);
    return st;
}

/* "walls": line segments of a 2D world (shoal/crowd.h). */
static shoal_status_t parse_walls(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    if (!cJSON_IsArray(v))
        return parser_fail(p, NULL, "expected an array of objects, got %s", parser_type_name(v));
    if (s->dimensions != 2 && cJSON_GetArraySize(v) > 0)
        return parser_fail(p, NULL, "walls are line segments of a 2D world; a 3D scenario uses obstacles");
    int n = cJSON_GetArraySize(v);
    if (n > 0 && (s->walls = calloc((size_t)n, sizeof *s->walls)) == NULL) return parser_out_of_memory(p);
    const cJSON* e = NULL;
    cJSON_ArrayForEach(e, v)
    {
        size_t at = parser_push(p, NULL, s->wall_count);
        shoal_status_t st = parse_wall(p, e, &s->walls[s->wall_count]);
        parser_pop(p, at);
        s->wall_count++; /* freed with the scenario even when it failed */
        TRY(st);
    }
    return SHOAL_OK;
}

/* ---- "nav": the navigation grid and its goals ---- */

/* An array of `least` to `most` points [x, y] into goal->points. */
static shoal_status_t read_goal_points(parser_t* p, const cJSON* v, const char* key, int least, int most,
                                       shoal_nav_goal_t* goal)
{
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < least || n > most) {
        char got[48];
        if (n < 0)
            snprintf(got, sizeof got, "%s", parser_type_name(v));
        else
            snprintf(got, sizeof got, "%d point%s", n, n == 1 ? "" : "s");
        if (least == most)
            return parser_fail(p, key, "expected an array of %d points [x, y], got %s", least, got);
        return parser_fail(p, key, "expected an array of %d to %d points [x, y], got %s", least, most, got);
    }
    size_t old = parser_push(p, key, 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    goal->count = 0;
    cJSON_ArrayForEach(e, v)
    {
        char name[24];
        snprintf(name, sizeof name, "[%d]", (int)goal->count);
        float q[3] = {0.0f, 0.0f, 0.0f};
        st = parser_read_vector(p, e, name, -DBL_MAX, "[x, y]", "[x, y]", q);
        if (st != SHOAL_OK) break;
        goal->points[goal->count][0] = q[0];
        goal->points[goal->count][1] = q[1];
        goal->count++;
    }
    parser_pop(p, old);
    return st;
}

/* "line": one segment [[x, y], [x, y]], or segments [[[x, y], [x, y]],
 * ...] (1 to SHOAL_NAV_GOAL_POINTS / 2: the exits of a building), told
 * apart by the first element's first element (a number or an array). */
static shoal_status_t read_goal_line(parser_t* p, const cJSON* v, shoal_nav_goal_t* g)
{
    const int most = SHOAL_NAV_GOAL_POINTS / 2;
    const cJSON* first = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, 0) : NULL;
    const cJSON* inner = cJSON_IsArray(first) ? cJSON_GetArrayItem(first, 0) : NULL;
    if (!cJSON_IsArray(inner)) {
        TRY(read_goal_points(p, v, "line", 2, 2, g));
        if (g->points[0][0] == g->points[1][0] && g->points[0][1] == g->points[1][1])
            return parser_fail(p, "line", "the two points are equal: a line goal needs a length");
        return SHOAL_OK;
    }
    int n = cJSON_GetArraySize(v);
    if (n > most) return parser_fail(p, "line", "holds %d segments, above the limit of %d", n, most);
    size_t old = parser_push(p, "line", 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    int k = 0;
    cJSON_ArrayForEach(e, v)
    {
        char name[16];
        snprintf(name, sizeof name, "[%d]", k);
        shoal_nav_goal_t seg;
        if ((st = read_goal_points(p, e, name, 2, 2, &seg)) != SHOAL_OK) break;
        if (seg.points[0][0] == seg.points[1][0] && seg.points[0][1] == seg.points[1][1]) {
            st = parser_fail(p, name, "the two points are equal: a segment needs a length");
            break;
        }
        memcpy(g->points[2 * k], seg.points, 2 * sizeof seg.points[0]);
        k++;
    }
    parser_pop(p, old);
    g->count = 2 * k;
    return st;
}

/* Twice the signed area of an area goal's polygon (the shoelace sum). */
static double polygon_area2(const shoal_nav_goal_t* g)
{
    double a = 0.0;
    for (int32_t k = 0; k < g->count; k++) {
        const float* u = g->points[k];
        const float* w = g->points[(k + 1) % g->count];
        a += (double)u[0] * w[1] - (double)w[0] * u[1];
    }
    return a;
}

/* A goal: {"name", one of "point": [x, y], "line": [[x, y], [x, y]] (or
 * segments of them), "area": [[x, y], ...], and "exit"}. The world checks the rest when populate adds it
 * (coordinates beyond 1e18 m, a goal with no walkable cell). */
static shoal_status_t parse_nav_goal(parser_t* p, const cJSON* v, int index, nav_goal_t* out,
                                     const nav_goal_t* earlier)
{
    static const char* const shapes[] = {"point", "line", "area"};
    char buf[32], shown[64];
    TRY(parser_check_object(p, v, NAV_GOAL_KEYS, COUNT_OF(NAV_GOAL_KEYS)));
    const cJSON* name = MEMBER(v, "name");
    if (name != NULL) {
        TRY(parser_read_name(p, name, "name", MAX_NAME, &out->name));
    } else {
        snprintf(buf, sizeof buf, "goal%d", index);
        if ((out->name = json_copy_string(buf)) == NULL) return parser_out_of_memory(p);
    }
    for (int j = 0; j < index; j++)
        if (strcmp(earlier[j].name, out->name) == 0)
            return parser_fail(p, name != NULL ? "name" : NULL,
                               "'%s' is already the name of nav.goals[%d]: goal names must be unique",
                               parser_printable(shown, out->name), j);
    int kind = -1;
    for (int k = 0; k < 3; k++) {
        if (MEMBER(v, shapes[k]) == NULL) continue;
        if (kind >= 0)
            return parser_fail(p, shapes[k],
                               "a goal is one shape: give one of \"point\", \"line\" or "
                               "\"area\", not both \"%s\" and \"%s\"",
                               shapes[kind], shapes[k]);
        kind = k;
    }
    if (kind < 0) return parser_missing(p, "point", "(or \"line\" or \"area\": a goal needs a shape)");
    shoal_nav_goal_t* g = &out->goal;
    g->kind = kind;
    const cJSON* shape = MEMBER(v, shapes[kind]);
    if (kind == SHOAL_NAV_POINT) {
        float q[3] = {0.0f, 0.0f, 0.0f};
        TRY(parser_read_vector(p, shape, "point", -DBL_MAX, "[x, y]", "[x, y]", q));
        g->count = 1;
        g->points[0][0] = q[0];
        g->points[0][1] = q[1];
    } else if (kind == SHOAL_NAV_LINE) {
        TRY(read_goal_line(p, shape, g));
    } else {
        TRY(read_goal_points(p, shape, "area", 3, SHOAL_NAV_GOAL_POINTS, g));
        if (!(fabs(polygon_area2(g)) > 0.0))
            return parser_fail(p, "area", "the polygon has zero area: its points lie on one line");
    }
    return parser_get_bool(p, v, "exit", &g->exit);
}

/* A double > 0 and at most `max` (max_bytes, which a float would round). */
static shoal_status_t get_positive_double(parser_t* p, const cJSON* obj, const char* key, double max,
                                          double* out)
{
    char a[32], b[32];
    const cJSON* v = MEMBER(obj, key);
    if (v == NULL) return SHOAL_OK;
    if (!cJSON_IsNumber(v)) return parser_fail(p, key, "expected a number, got %s", parser_type_name(v));
    double d = v->valuedouble;
    if (!(d > 0.0 && d <= max))
        return parser_fail(p, key, "must be > 0 and <= %s, got %s", json_format_number(a, max),
                           json_format_number(b, d));
    *out = d;
    return SHOAL_OK;
}

/* "bounds": [x0, y0, x1, y1] with x1 > x0 and y1 > y0, or all 0 (which
 * means `all_zero`, in the message). */
static shoal_status_t get_bounds(parser_t* p, const cJSON* v, const char* all_zero, float out[4])
{
    const cJSON* bounds = MEMBER(v, "bounds");
    if (bounds == NULL) return SHOAL_OK;
    if (!cJSON_IsArray(bounds) || cJSON_GetArraySize(bounds) != 4)
        return parser_fail(p, "bounds", "expected an array of 4 numbers [x0, y0, x1, y1], got %s",
                           cJSON_IsArray(bounds) ? "another count" : parser_type_name(bounds));
    size_t old = parser_push(p, "bounds", 0);
    const cJSON* e = NULL;
    int k = 0;
    shoal_status_t st = SHOAL_OK;
    cJSON_ArrayForEach(e, bounds)
    {
        char name[16];
        snprintf(name, sizeof name, "[%d]", k);
        if ((st = parser_read_float(p, e, name, -DBL_MAX, 0, &out[k])) != SHOAL_OK) break;
        k++;
    }
    parser_pop(p, old);
    TRY(st);
    int any = out[0] != 0.0f || out[1] != 0.0f || out[2] != 0.0f || out[3] != 0.0f;
    if (any && !(out[2] > out[0] && out[3] > out[1]))
        return parser_fail(p, "bounds", "must be [x0, y0, x1, y1] with x1 > x0 and y1 > y0 (or all 0: %s)",
                           all_zero);
    return SHOAL_OK;
}

static shoal_status_t parse_nav_goals(parser_t* p, const cJSON* v, shoal_scenario_t* s);
static shoal_status_t parse_nav_zones(parser_t* p, const cJSON* v, shoal_scenario_t* s);
static shoal_status_t parse_journeys(parser_t* p, const cJSON* v, shoal_scenario_t* s);

/* "nav": the navigation grid (shoal_nav_params_t, every key optional with
 * shoal_nav_params_default()'s value), "goals" and "journeys". 2D only. The grid's own
 * checks are made here too, so that the message names the key. */
static shoal_status_t parse_nav(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    char a[32];
    if (s->dimensions != 2)
        return parser_fail(p, NULL, "navigation fields are 2D; this scenario is %dD", (int)s->dimensions);
    TRY(parser_check_object(p, v, NAV_KEYS, COUNT_OF(NAV_KEYS)));
    shoal_nav_params_t* n = &s->nav;
    s->has_nav = 1;
    TRY(parser_get_float(p, v, "cell", 0.0, 1, &n->cell));
    TRY(parser_get_float(p, v, "clearance", 0.0, 0, &n->clearance));
    if (n->clearance < 0.5f * n->cell)
        return parser_fail(p, MEMBER(v, "clearance") != NULL ? "clearance" : "cell",
                           "clearance (%g m) must be at least half the cell (%g m): a wall could leak "
                           "between cells",
                           (double)n->clearance, 0.5 * (double)n->cell);
    TRY(parser_get_float(p, v, "wall_distance", 0.0, 0, &n->wall_distance));
    TRY(parser_get_float(p, v, "wall_speed", 0.0, 1, &n->wall_speed));
    if (n->wall_speed > 1.0f)
        return parser_fail(p, "wall_speed", "must be in (0, 1], got %s",
                           json_format_number(a, n->wall_speed));
    TRY(get_bounds(p, v, "the box of the walls, obstacles and goals", n->bounds));
    TRY(parser_get_float(p, v, "margin", 0.0, 0, &n->margin));
    TRY(get_positive_double(p, v, "max_bytes", 1e18, &n->max_bytes));
    TRY(parser_get_float(p, v, "density_weight", 0.0, 0, &n->density_weight));
    int64_t interval = n->density_interval;
    TRY(parser_get_integer(p, v, "density_interval", 1.0, 1000000.0, &interval));
    n->density_interval = (int32_t)interval;

    TRY(parse_nav_goals(p, v, s));
    TRY(parse_nav_zones(p, v, s));
    return parse_journeys(p, v, s);
}

/* A speed zone: {"polygon": [[x, y], ...] (3 to SHOAL_NAV_ZONE_POINTS),
 * "speed_factor": in (0, 1]}. */
static shoal_status_t parse_nav_zone(parser_t* p, const cJSON* v, shoal_nav_zone_t* z)
{
    char a[32];
    TRY(parser_check_object(p, v, NAV_ZONE_KEYS, COUNT_OF(NAV_ZONE_KEYS)));
    const cJSON* polygon = MEMBER(v, "polygon");
    if (polygon == NULL) return parser_missing(p, "polygon", "(the zone's points [[x, y], ...])");
    if (MEMBER(v, "speed_factor") == NULL) return parser_missing(p, "speed_factor", "(in (0, 1])");
    shoal_nav_goal_t pts; /* the goals' reader of points */
    memset(&pts, 0, sizeof pts);
    TRY(read_goal_points(p, polygon, "polygon", 3, SHOAL_NAV_ZONE_POINTS, &pts));
    pts.kind = SHOAL_NAV_AREA;
    if (!(fabs(polygon_area2(&pts)) > 0.0))
        return parser_fail(p, "polygon", "the polygon has zero area: its points lie on one line");
    *z = shoal_nav_zone_default();
    z->count = pts.count;
    memcpy(z->points, pts.points, (size_t)pts.count * sizeof z->points[0]);
    TRY(parser_get_float(p, v, "speed_factor", 0.0, 1, &z->speed_factor));
    if (z->speed_factor > 1.0f)
        return parser_fail(p, "speed_factor", "must be in (0, 1], got %s",
                           json_format_number(a, z->speed_factor));
    return SHOAL_OK;
}

/* "zones": the array of speed zones, in file order. */
static shoal_status_t parse_nav_zones(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    const cJSON* zones = MEMBER(v, "zones");
    if (zones == NULL) return SHOAL_OK;
    if (!cJSON_IsArray(zones))
        return parser_fail(p, "zones", "expected an array of objects, got %s", parser_type_name(zones));
    int count = cJSON_GetArraySize(zones);
    if (count > SHOAL_MAX_NAV_ZONES)
        return parser_fail(p, "zones", "holds %d zones, above the limit of %d", count, SHOAL_MAX_NAV_ZONES);
    if (count > 0 && (s->nav_zones = calloc((size_t)count, sizeof *s->nav_zones)) == NULL)
        return parser_out_of_memory(p);
    size_t old = parser_push(p, "zones", 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    cJSON_ArrayForEach(e, zones)
    {
        size_t at = parser_push(p, NULL, s->nav_zone_count);
        st = parse_nav_zone(p, e, &s->nav_zones[s->nav_zone_count++]);
        parser_pop(p, at);
        if (st != SHOAL_OK) break;
    }
    parser_pop(p, old);
    return st;
}

/* "goals": the array of goals, in file order. */
static shoal_status_t parse_nav_goals(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    const cJSON* goals = MEMBER(v, "goals");
    if (goals == NULL) return SHOAL_OK;
    if (!cJSON_IsArray(goals))
        return parser_fail(p, "goals", "expected an array of objects, got %s", parser_type_name(goals));
    int count = cJSON_GetArraySize(goals);
    if (count > SHOAL_MAX_NAV_GOALS)
        return parser_fail(p, "goals", "holds %d goals, above the limit of %d", count, SHOAL_MAX_NAV_GOALS);
    if (count > 0 && (s->nav_goals = calloc((size_t)count, sizeof *s->nav_goals)) == NULL)
        return parser_out_of_memory(p);
    size_t old = parser_push(p, "goals", 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    cJSON_ArrayForEach(e, goals)
    {
        size_t at = parser_push(p, NULL, s->nav_goal_count);
        int i = s->nav_goal_count++; /* freed with the scenario even when it failed */
        st = parse_nav_goal(p, e, i, &s->nav_goals[i], s->nav_goals);
        parser_pop(p, at);
        if (st != SHOAL_OK) break;
    }
    parser_pop(p, old);
    return st;
}

/* ---- "navmesh": the navigation mesh's parameters ---- */

/* "navmesh": shoal_navmesh_params_t, every key optional with
 * shoal_navmesh_params_default()'s value. 2D only. The library's own checks
 * are made here too, so that the message names the key; whether this build
 * has Recast and Detour is the world's to say, at populate. */
static shoal_status_t parse_navmesh(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    char a[32];
    if (s->dimensions != 2)
        return parser_fail(p, NULL, "navigation meshes are 2D; this scenario is %dD", (int)s->dimensions);
    TRY(parser_check_object(p, v, NAVMESH_KEYS, COUNT_OF(NAVMESH_KEYS)));
    shoal_navmesh_params_t* n = &s->navmesh;
    s->has_navmesh = 1;
    TRY(parser_get_float(p, v, "cell", 0.02, 0, &n->cell));
    if (n->cell > 10.0f)
        return parser_fail(p, "cell", "must be 0.02 to 10 m, got %s", json_format_number(a, n->cell));
    TRY(parser_get_float(p, v, "agent_radius", 0.0, 1, &n->agent_radius));
    TRY(get_bounds(p, v, "the box of the walls and obstacles widened by margin", n->bounds));
    TRY(parser_get_float(p, v, "margin", 0.0, 0, &n->margin));
    int64_t replans = n->replans_per_step, interval = n->replan_interval;
    TRY(parser_get_integer(p, v, "replans_per_step", 1.0, 1000000.0, &replans));
    TRY(parser_get_integer(p, v, "replan_interval", 0.0, 1000000.0, &interval));
    n->replans_per_step = (int32_t)replans;
    n->replan_interval = (int32_t)interval;
    return parser_get_float(p, v, "off_path_distance", 0.0, 1, &n->off_path_distance);
}

/* ---- "nav.journeys": stages from goal to goal ---- */

shoal_status_t scenario_read_ref(parser_t* p, const cJSON* v, const char* key, const char* const* names,
                                 int32_t n, const char* what, const char* list, int32_t* out)
{
    char shown[64];
    if (cJSON_IsString(v)) {
        for (int32_t i = 0; i < n; i++)
            if (strcmp(names[i], v->valuestring) == 0) {
                *out = i;
                return SHOAL_OK;
            }
        parser_printable(shown, v->valuestring);
        if (n == 0)
            return parser_fail(p, key, "no %s is named '%s': the scenario has no %s", what, shown, list);
        const char* close = parser_suggest(v->valuestring, names, (size_t)n);
        return parser_fail(p, key, "no %s is named '%s'%s%s%s", what, shown, close ? "; did you mean '" : "",
                           close ? close : "", close ? "'?" : "");
    }
    if (!cJSON_IsNumber(v))
        return parser_fail(p, key, "expected a %s name (a string) or an index of %s, got %s", what, list,
                           parser_type_name(v));
    if (n == 0) return parser_fail(p, key, "the scenario has no %s for an index to count", list);
    int64_t index = 0;
    TRY(parser_read_integer(p, v, key, 0.0, n - 1, &index));
    *out = (int32_t)index;
    return SHOAL_OK;
}

/* Reading one journey: its stages' names, and the goals' names, for
 * references by name. */
typedef struct journey_refs_t {
    const char* const* goals;
    int32_t goal_count;
    const char* const* stages;
    int32_t stage_count;
} journey_refs_t;

static shoal_status_t read_stage_ref(parser_t* p, const cJSON* v, const char* key, const journey_refs_t* r,
                                     int32_t* out)
{
    return scenario_read_ref(p, v, key, r->stages, r->stage_count, "stage", "this journey's stages", out);
}

/* The candidates of a transition: an array of 1 to SHOAL_JOURNEY_NEXT
 * stages, for round_robin each a stage or [stage, weight]. */
static shoal_status_t read_candidates(parser_t* p, const cJSON* v, const char* key, int weighted,
                                      const journey_refs_t* r, shoal_journey_stage_t* st)
{
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 1 || n > SHOAL_JOURNEY_NEXT) {
        const char* item = weighted ? "stages or [stage, weight] pairs" : "stages";
        if (n < 0)
            return parser_fail(p, key, "expected an array of 1 to %d %s, got %s", SHOAL_JOURNEY_NEXT, item,
                               parser_type_name(v));
        return parser_fail(p, key, "expected an array of 1 to %d %s, got %d", SHOAL_JOURNEY_NEXT, item, n);
    }
    size_t old = parser_push(p, key, 0);
    const cJSON* e = NULL;
    shoal_status_t status = SHOAL_OK;
    int k = 0;
    cJSON_ArrayForEach(e, v)
    {
        char name[16];
        snprintf(name, sizeof name, "[%d]", k);
        st->next_weight[k] = 1;
        if (weighted && cJSON_IsArray(e)) {
            if (cJSON_GetArraySize(e) != 2) {
                status =
                    parser_fail(p, name, "expected [stage, weight], got %d elements", cJSON_GetArraySize(e));
                break;
            }
            size_t at = parser_push(p, name, 0);
            int64_t weight = 1;
            status = read_stage_ref(p, cJSON_GetArrayItem(e, 0), "[0]", r, &st->next[k]);
            if (status == SHOAL_OK)
                status = parser_read_integer(p, cJSON_GetArrayItem(e, 1), "[1]", 1.0, 1000000.0, &weight);
            parser_pop(p, at);
            st->next_weight[k] = (int32_t)weight;
        } else {
            status = read_stage_ref(p, e, name, r, &st->next[k]);
        }
        if (status != SHOAL_OK) break;
        k++;
    }
    parser_pop(p, old);
    st->next_count = k;
    return status;
}

/* "then": "end" (the default), or one of {"fixed": stage}, {"round_robin":
 * [stage or [stage, weight], ...]}, {"quickest": [stage, ...]}. */
static shoal_status_t parse_then(parser_t* p, const cJSON* v, const journey_refs_t* r,
                                 shoal_journey_stage_t* st)
{
    char shown[64];
    static const char* const expected =
        "expected \"end\" or an object of one transition: {\"fixed\": stage}, "
        "{\"round_robin\": [stage or [stage, weight], ...]} or "
        "{\"quickest\": [stage, ...]}";
    st->transition = SHOAL_TRANSITION_END;
    st->next_count = 0;
    if (cJSON_IsString(v)) {
        if (strcmp(v->valuestring, "end") == 0) return SHOAL_OK;
        return parser_fail(p, NULL, "%s, got \"%s\"", expected, parser_printable(shown, v->valuestring));
    }
    if (!cJSON_IsObject(v)) return parser_fail(p, NULL, "%s, got %s", expected, parser_type_name(v));
    TRY(parser_check_object(p, v, TRANSITION_KEYS, COUNT_OF(TRANSITION_KEYS)));
    int kind = -1;
    for (int k = 0; k < (int)COUNT_OF(TRANSITION_KEYS); k++) {
        if (MEMBER(v, TRANSITION_KEYS[k]) == NULL) continue;
        if (kind >= 0)
            return parser_fail(p, TRANSITION_KEYS[k],
                               "a stage has one transition: not both \"%s\" and \"%s\"",
                               TRANSITION_KEYS[kind], TRANSITION_KEYS[k]);
        kind = k;
    }
    if (kind < 0) return parser_fail(p, NULL, "%s, got an empty object", expected);
    const cJSON* arg = MEMBER(v, TRANSITION_KEYS[kind]);
    if (kind == 0) {
        st->transition = SHOAL_TRANSITION_FIXED;
        st->next_count = 1;
        return read_stage_ref(p, arg, "fixed", r, &st->next[0]);
    }
    st->transition = kind == 1 ? SHOAL_TRANSITION_ROUND_ROBIN : SHOAL_TRANSITION_QUICKEST;
    return read_candidates(p, arg, TRANSITION_KEYS[kind], kind == 1, r, st);
}

/* A stage: {"name", "goal": a goal's name or index, "wait": s, "then"}. A
 * stage at an exit ends its journey there (the agents leave): a wait or a
 * transition there would never be used, and is refused. */
static shoal_status_t parse_stage(parser_t* p, const cJSON* v, const shoal_scenario_t* s,
                                  const journey_refs_t* r, shoal_journey_stage_t* st)
{
    char shown[64];
    const cJSON* goal = MEMBER(v, "goal");
    if (goal == NULL) return parser_missing(p, "goal", "(a stage is a goal to walk to)");
    TRY(scenario_read_ref(p, goal, "goal", r->goals, r->goal_count, "nav goal", "nav.goals", &st->goal));
    TRY(parser_get_float(p, v, "wait", 0.0, 0, &st->wait));
    const cJSON* then = MEMBER(v, "then");
    if (then != NULL) {
        size_t at = parser_push(p, "then", 0);
        shoal_status_t status = parse_then(p, then, r, st);
        parser_pop(p, at);
        TRY(status);
    }
    if (s->nav_goals[st->goal].goal.exit) {
        parser_printable(shown, s->nav_goals[st->goal].name);
        if (st->wait > 0.0f)
            return parser_fail(
                p, "wait", "goal '%s' is an exit: agents leave on arriving there, so they never wait", shown);
        if (st->transition != SHOAL_TRANSITION_END)
            return parser_fail(p, "then",
                               "goal '%s' is an exit: agents leave on arriving there, so the journey ends "
                               "there (leave \"then\" out)",
                               shown);
    }
    return SHOAL_OK;
}

/* A journey: {"name", "stages": [stage, ...]}, 1 to SHOAL_JOURNEY_STAGES
 * stages named uniquely (a transition may name a later stage). */
static shoal_status_t parse_journey(parser_t* p, const cJSON* v, int index, shoal_scenario_t* s,
                                    const char* const* goal_names)
{
    char buf[32], shown[64];
    journey_t* out = &s->journeys[index];
    TRY(parser_check_object(p, v, JOURNEY_KEYS, COUNT_OF(JOURNEY_KEYS)));
    const cJSON* name = MEMBER(v, "name");
    if (name != NULL) {
        TRY(parser_read_name(p, name, "name", MAX_NAME, &out->name));
    } else {
        snprintf(buf, sizeof buf, "journey%d", index);
        if ((out->name = json_copy_string(buf)) == NULL) return parser_out_of_memory(p);
    }
    for (int j = 0; j < index; j++)
        if (strcmp(s->journeys[j].name, out->name) == 0)
            return parser_fail(p, name != NULL ? "name" : NULL,
                               "'%s' is already the name of nav.journeys[%d]: journey names must be unique",
                               parser_printable(shown, out->name), j);
    const cJSON* stages = MEMBER(v, "stages");
    if (stages == NULL) return parser_missing(p, "stages", NULL);
    int n = cJSON_IsArray(stages) ? cJSON_GetArraySize(stages) : -1;
    if (n < 0)
        return parser_fail(p, "stages", "expected an array of 1 to %d objects, got %s", SHOAL_JOURNEY_STAGES,
                           parser_type_name(stages));
    if (n < 1 || n > SHOAL_JOURNEY_STAGES)
        return parser_fail(p, "stages", "expected an array of 1 to %d objects, got %d", SHOAL_JOURNEY_STAGES,
                           n);

    /* Names first: a transition may name a stage further on. */
    size_t old = parser_push(p, "stages", 0);
    shoal_status_t st = SHOAL_OK;
    const cJSON* e = NULL;
    int k = 0;
    cJSON_ArrayForEach(e, stages)
    {
        size_t at = parser_push(p, NULL, k);
        st = parser_check_object(p, e, STAGE_KEYS, COUNT_OF(STAGE_KEYS));
        const cJSON* sn = st == SHOAL_OK ? MEMBER(e, "name") : NULL;
        if (st == SHOAL_OK && sn != NULL) {
            st = parser_read_name(p, sn, "name", MAX_NAME, &out->stage_names[k]);
        } else if (st == SHOAL_OK) {
            snprintf(buf, sizeof buf, "stage%d", k);
            if ((out->stage_names[k] = json_copy_string(buf)) == NULL) st = parser_out_of_memory(p);
        }
        for (int j = 0; j < k && st == SHOAL_OK; j++)
            if (strcmp(out->stage_names[j], out->stage_names[k]) == 0)
                st = parser_fail(p, sn != NULL ? "name" : NULL,
                                 "'%s' is already the name of stages[%d]: stage names must be unique in a "
                                 "journey",
                                 parser_printable(shown, out->stage_names[k]), j);
        parser_pop(p, at);
        if (st != SHOAL_OK) break;
        k++;
    }
    journey_refs_t refs = {.goals = goal_names,
                           .goal_count = s->nav_goal_count,
                           .stages = (const char* const*)out->stage_names,
                           .stage_count = n};
    out->journey.count = n;
    k = 0;
    if (st == SHOAL_OK) cJSON_ArrayForEach(e, stages)
        {
            size_t at = parser_push(p, NULL, k);
            st = parse_stage(p, e, s, &refs, &out->journey.stages[k]);
            parser_pop(p, at);
            if (st != SHOAL_OK) break;
            k++;
        }
    parser_pop(p, old);
    return st;
}

/* "journeys": the array of journeys, after the goals their stages name. */
static shoal_status_t parse_journeys(parser_t* p, const cJSON* v, shoal_scenario_t* s)
{
    const cJSON* journeys = MEMBER(v, "journeys");
    if (journeys == NULL) return SHOAL_OK;
    if (!cJSON_IsArray(journeys))
        return parser_fail(p, "journeys", "expected an array of objects, got %s", parser_type_name(journeys));
    int count = cJSON_GetArraySize(journeys);
    if (count > SHOAL_MAX_JOURNEYS)
        return parser_fail(p, "journeys", "holds %d journeys, above the limit of %d", count,
                           SHOAL_MAX_JOURNEYS);
    if (count == 0) return SHOAL_OK;
    s->journeys = calloc((size_t)count, sizeof *s->journeys);
    const char** goal_names = calloc(s->nav_goal_count > 0 ? (size_t)s->nav_goal_count : 1, sizeof(char*));
    if (s->journeys == NULL || goal_names == NULL) {
        free(goal_names);
        return parser_out_of_memory(p);
    }
    for (int32_t i = 0; i < s->nav_goal_count; i++) goal_names[i] = s->nav_goals[i].name;
    size_t old = parser_push(p, "journeys", 0);
    const cJSON* e = NULL;
    shoal_status_t st = SHOAL_OK;
    cJSON_ArrayForEach(e, journeys)
    {
        size_t at = parser_push(p, NULL, s->journey_count);
        int i = s->journey_count++; /* freed with the scenario even when it failed */
        st = parse_journey(p, e, i, s, goal_names);
        parser_pop(p, at);
        if (st != SHOAL_OK) break;
    }
    parser_pop(p, old);
    free(goal_names);
    return st;
}

/* With wrap, the spawn region (its bounding box, which for a disc, ring or
 * box is the region itself as far as leaving an axis-aligned box goes) must
 * lie inside the world box. */
static shoal_status_t check_spawn_in_box(parser_t* p, const shoal_scenario_t* s, const group_t* g)
{
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        double half = g->shape == SHAPE_BOX ? 0.5 * g->size[k] : g->shape == SHAPE_POINT ? 0.0 : g->radius;
        lo[k] = g->center[k] - half;
        hi[k] = g->center[k] + half;
    }
    if (g->shape == SHAPE_POLYGON) /* its bounding box (a polygon is 2D: z is the center's) */
        for (int i = 0; i < g->polygon_count; i++)
            for (int k = 0; k < 2; k++) {
                lo[k] = i == 0 || g->polygon[i][k] < lo[k] ? g->polygon[i][k] : lo[k];
                hi[k] = i == 0 || g->polygon[i][k] > hi[k] ? g->polygon[i][k] : hi[k];
            }
    int k = outside_box(s, lo, hi);
    if (k < 0) return SHOAL_OK;
    char shown[64];
    return parser_fail(p, "spawn",
                       "group '%s' spawns agents at %c from %g to %g, outside the wrapped world "
                       "box (world.bounds_min[%d] = %g to world.bounds_max[%d] = %g)",
                       parser_printable(shown, g->name), "xyz"[k], lo[k], hi[k], k,
                       (double)s -> bounds_min[k], k, (double)s -> bounds_max[k]);
}

static shoal_status_t parse_root(parser_t* p, const cJSON* root, shoal_scenario_t* s)
{
    if (!cJSON_IsObject(root))
        return json_error(p->err, SHOAL_ERR_PARSE, p->source, "the top level must be an object, got %s",
                          parser_type_name(root));
    TRY(parser_check_object(p, root, ROOT_KEYS, COUNT_OF(ROOT_KEYS)));

    /* dimensions first, whatever the key order: vector lengths depend on it. */
    const cJSON* dims = MEMBER(root, "dimensions");
    if (dims != NULL) {
        char a[32];
        if (!cJSON_IsNumber(dims))
            return parser_fail(p, "dimensions", "expected an integer, got %s", parser_type_name(dims));
        if (dims->valuedouble != 2.0 && dims->valuedouble != 3.0)
            return parser_fail(p, "dimensions", "must be 2 or 3, got %s",
                               json_format_number(a, dims->valuedouble));
        s->dimensions = (int32_t)dims->valuedouble;
    }
    p->dimensions = s->dimensions;

    const cJSON* name = MEMBER(root, "name");
    if (name != NULL) TRY(parser_read_name(p, name, "name", MAX_NAME, &s->name));
    int64_t steps = s->steps, threads = s->threads;
    TRY(parser_get_uint64(p, root, "seed", &s->seed));
    TRY(parser_get_float(p, root, "dt", 0.0, 1, &s->dt));
    /* The shortest and longest step a world takes (shoal_world_step): any
     * other would load and then fail at its first step. */
    if (s->dt < WORLD_MIN_DT)
        return parser_fail(p, "dt", "must be >= %g seconds, got %g", (double)WORLD_MIN_DT, (double)s->dt);
    if (s->dt > WORLD_MAX_DT)
        return parser_fail(p, "dt", "must be <= %g seconds, got %g", (double)WORLD_MAX_DT, (double)s->dt);
    TRY(parser_get_integer(p, root, "steps", 0.0, INT32_MAX, &steps));
    TRY(parser_get_integer(p, root, "threads", 0.0, SHOAL_MAX_THREADS, &threads));
    s->steps = (int32_t)steps;
    s->threads = (int32_t)threads;
    /* World and obstacles before groups: spawn regions are checked against
     * the world box. */
    PARSE_MEMBER(p, root, "world", parse_world, s);
    PARSE_MEMBER(p, root, "obstacles", parse_obstacles, s);
    PARSE_MEMBER(p, root, "walls", parse_walls, s);
    /* nav before groups: a group's nav.goal or nav.journey names one of its
     * goals or journeys. */
    s->nav = shoal_nav_params_default();
    PARSE_MEMBER(p, root, "nav", parse_nav, s);
    s->navmesh = shoal_navmesh_params_default();
    PARSE_MEMBER(p, root, "navmesh", parse_navmesh, s);
    p->scenario = s;

    const cJSON* groups = MEMBER(root, "groups");
    if (groups == NULL) return parser_missing(p, "groups", NULL);
    if (!cJSON_IsArray(groups))
        return parser_fail(p, "groups", "expected an array of objects, got %s", parser_type_name(groups));
    int n = cJSON_GetArraySize(groups);
    if (n == 0) return parser_fail(p, "groups", "must hold at least one group");
    if ((s->groups = calloc((size_t)n, sizeof *s->groups)) == NULL) return parser_out_of_memory(p);

    int64_t total = 0;
    const cJSON* g = NULL;
    size_t old = parser_push(p, "groups", 0);
    p->groups = s->groups;
    p->groups_json = groups;
    cJSON_ArrayForEach(g, groups)
    {
        size_t at = parser_push(p, NULL, s->group_count);
        /* Counted before parsing so that destroy frees a partly read group. */
        int i = p->group = s->group_count++;
        shoal_status_t st = parse_group(p, g, i, &s->groups[i], &total);
        if (st == SHOAL_OK) st = check_spawn_in_box(p, s, &s->groups[i]);
        parser_pop(p, at);
        TRY(st);
    }
    parser_pop(p, old);
    s->agent_count = (int32_t)total;
    PARSE_MEMBER(p, root, "measure", scenario_parse_measure, s); /* after the groups it names */
    PARSE_MEMBER(p, root, "collect", parse_collect, s);
    if (s->name == NULL && (s->name = json_copy_string("scenario")) == NULL) return parser_out_of_memory(p);
    return SHOAL_OK;
}


/* ---- Loading ---- */

shoal_status_t shoal_scenario_load_string(const char* json, size_t length, const char* source_name,
                                          shoal_scenario_t** out, shoal_error_t* err)
{
    const char* source = source_name != NULL ? source_name : "<string>";
    if (out != NULL) *out = NULL;
    if (out == NULL || (json == NULL && length > 0))
        return json_error(err, SHOAL_ERR_INVALID_ARGUMENT, source, "%s is NULL",
                          out == NULL ? "out" : "json");
    if (length > MAX_BYTES)
        return json_error(err, SHOAL_ERR_CAPACITY, source,
                          "%zu bytes is above the 64 MiB limit for a scenario", length);

    cJSON* root = NULL;
    shoal_status_t status = json_parse(json, length, source, &root, err);
    shoal_scenario_t* s = NULL;
    if (status == SHOAL_OK && (s = calloc(1, sizeof *s)) == NULL)
        status = json_error(err, SHOAL_ERR_OUT_OF_MEMORY, source, "out of memory");
    if (status == SHOAL_OK) {
        s->dimensions = 2;
        s->seed = 1;
        s->dt = 1.0f / 60.0f;
        s->steps = 600;
        s->collect = shoal_scenario_collect(NULL);
        shoal_world_def_t world = shoal_world_default_def();
        s->wrap = world.wrap;
        memcpy(s->bounds_min, world.bounds_min, sizeof s->bounds_min);
        memcpy(s->bounds_max, world.bounds_max, sizeof s->bounds_max);
        s->cell_size = world.cell_size;
        s->reorder_interval = world.reorder_interval;
        parser_t p = {
            .source = source, .err = err, .text = json, .text_length = length, .root = root, .dimensions = 2};
        status = parse_root(&p, root, s);
    }
    cJSON_Delete(root);
    if (status != SHOAL_OK) {
        shoal_scenario_destroy(s);
        return status;
    }
    if (err != NULL) {
        err->status = SHOAL_OK;
        err->message[0] = '\0';
    }
    *out = s;
    return SHOAL_OK;
}

/* The whole file (io/file_read.h: a regular file of at most MAX_BYTES,
 * opened without blocking). */
static shoal_status_t read_file(const char* path, char** out, size_t* out_length, shoal_error_t* err)
{
    char msg[256];
    void* data = NULL;
    file_read_error_t e = file_read_all(path, MAX_BYTES, &data, out_length, msg, sizeof msg);
    if (e == FILE_READ_TOO_LARGE) return json_error(err, SHOAL_ERR_CAPACITY, path, "%s for a scenario", msg);
    if (e == FILE_READ_NO_MEMORY) return json_error(err, SHOAL_ERR_OUT_OF_MEMORY, path, "%s", msg);
    if (e != FILE_READ_OK) return json_error(err, SHOAL_ERR_IO, path, "%s", msg);
    *out = (char*)data;
    return SHOAL_OK;
}

shoal_status_t shoal_scenario_load_file(const char* path, shoal_scenario_t** out, shoal_error_t* err)
{
    if (out != NULL) *out = NULL;
    if (path == NULL || out == NULL)
        return json_error(err, SHOAL_ERR_INVALID_ARGUMENT, NULL, "%s is NULL", path == NULL ? "path" : "out");
    char* text = NULL;
    size_t length = 0;
    TRY(read_file(path, &text, &length, err));
    shoal_status_t status = shoal_scenario_load_string(text, length, path, out, err);
    free(text);
    return status;
}

void shoal_scenario_destroy(shoal_scenario_t* scenario)
{
    if (scenario == NULL) return;
    for (int32_t i = 0; i < scenario->group_count; i++) {
        free(scenario->groups[i].name);
        free(scenario->groups[i].route);
        free(scenario->groups[i].formation_offsets);
    }
    free(scenario->groups);
    free(scenario->obstacles);
    for (int32_t i = 0; i < scenario->wall_count; i++) free(scenario->walls[i].points);
    free(scenario->walls);
    for (int32_t i = 0; i < scenario->nav_goal_count; i++) free(scenario->nav_goals[i].name);
    free(scenario->nav_goals);
    free(scenario->nav_zones);
    for (int32_t i = 0; i < scenario->journey_count; i++) {
        free(scenario->journeys[i].name);
        for (int k = 0; k < SHOAL_JOURNEY_STAGES; k++) free(scenario->journeys[i].stage_names[k]);
    }
    free(scenario->journeys);
    scenario_free_measure(scenario);
    free(scenario->name);
    free(scenario);
}

const char* shoal_scenario_name(const shoal_scenario_t* scenario)
{
    return scenario != NULL ? scenario->name : "";
}

shoal_scenario_collect_t shoal_scenario_collect(const shoal_scenario_t* scenario)
{
    if (scenario != NULL) return scenario->collect;
    shoal_scenario_collect_t c = {0};
    c.every = 1;
    c.mean_count = 1;
    c.means[0] = COLLECT_MEANS[0];
    return c;
}

int32_t shoal_scenario_steps(const shoal_scenario_t* scenario)
{
    return scenario != NULL ? scenario->steps : 0;
}

float shoal_scenario_dt(const shoal_scenario_t* scenario) { return scenario != NULL ? scenario->dt : 0.0f; }

int32_t shoal_scenario_agent_count(const shoal_scenario_t* scenario)
{
    return scenario != NULL ? scenario->agent_count : 0;
}

uint64_t shoal_scenario_seed(const shoal_scenario_t* scenario)
{
    return scenario != NULL ? scenario->seed : 0;
}

void shoal_scenario_set_seed(shoal_scenario_t* scenario, uint64_t seed)
{
    if (scenario != NULL) scenario->seed = seed;
}

shoal_world_def_t shoal_scenario_world_def(const shoal_scenario_t* scenario)
{
    shoal_world_def_t def = shoal_world_default_def();
    if (scenario != NULL) {
        def.dimensions = scenario->dimensions;
        def.seed = scenario->seed;
        def.thread_count = scenario->threads;
        def.wrap = scenario->wrap;
        memcpy(def.bounds_min, scenario->bounds_min, sizeof def.bounds_min);
        memcpy(def.bounds_max, scenario->bounds_max, sizeof def.bounds_max);
        def.cell_size = scenario->cell_size;
        def.reorder_interval = scenario->reorder_interval;
    }
    return def;
}

int32_t shoal_scenario_group_count(const shoal_scenario_t* scenario)
{
    return scenario ? scenario->group_count : 0;
}

const char* shoal_scenario_group_name(const shoal_scenario_t* scenario, int32_t index)
{
    if (!scenario || index < 0 || index >= scenario->group_count) return NULL;
    return scenario->groups[index].name;
}

int32_t shoal_scenario_group_size(const shoal_scenario_t* scenario, int32_t index)
{
    if (!scenario || index < 0 || index >= scenario->group_count) return 0;
    return scenario->groups[index].count;
}
