/* A group's steering behaviors in a scenario file: the "behaviors" object
 * (which behaviors run, and their weights) and the parameter objects
 * "neighbors", "wander", "pursuit", "follow", "avoid", "nav" and "navmesh", with the
 * references they hold from a group's agents to other agents (a pursuit
 * target, a leader) and to the scenario's nav goals. docs/scenarios.md is the reference for every key.
 *
 * Decisions:
 * - Defaults are the shoal_*_default() functions, so a key left out means
 *   what it means in the C API.
 * - Handles exist only once populate has added the agents, so a reference
 *   names a group and an index in it, and may only point to an earlier group
 *   (or, as "leader": "previous", to the agent before in the same group).
 *   Names are looked up among all groups of the file, so that a later
 *   group's name is reported as a forward reference rather than as unknown,
 *   and a name shared by two groups as ambiguous.
 * - pursue, evade and follow without an agent to steer by, and navigate
 *   or navmesh without a goal, would do nothing at all; that is an error,
 *   for the same reason an unknown key is one.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/scenario_model.h"

/* Behavior keys, in shoal_behavior_t order. */
static const char* const BEHAVIOR_KEYS[] = {"seek",   "flee",   "arrive", "depart",   "separate",
                                            "align",  "cohere", "wander", "pursue",   "evade",
                                            "follow", "avoid",  "dseek",  "navigate", "navmesh"};
_Static_assert(COUNT_OF(BEHAVIOR_KEYS) == SHOAL_BEHAVIOR_COUNT_, "a behavior key per behavior");

static const char* const WEIGHT_GAIN_KEYS[] = {"weight", "gain"};
static const char* const NEIGHBORS_KEYS[] = {
    "radius", "fov", "fov_deg", "max_neighbors", "separation_gain", "alignment_gain", "cohesion_gain"};
static const char* const WANDER_KEYS[] = {"cruise_speed", "strength", "noise"};
static const char* const PURSUIT_KEYS[] = {"target", "max_prediction"};
static const char* const FOLLOW_KEYS[] = {"leader", "first_leader", "behind", "behind_per_speed",
                                          "arrive_gain"};
static const char* const AVOID_KEYS[] = {"lookahead_time", "gain", "tangential"};
static const char* const CROWD_KEYS[] = {"preset",          "neighbor_distance",  "max_neighbors",
                                         "time_horizon",    "time_horizon_walls", "responsibility",
                                         "preferred_speed", "time_gap",           "side_preference"};
static const char* const DSEEK_KEYS[] = {"waypoint", "direction", "speed", "route", "r_min", "reach_radius"};
static const char* const WAYPOINT_KEYS[] = {"position", "direction", "speed"};
static const char* const FORMATION_KEYS[] = {"anchor", "offsets"};
static const char* const PLANNER_KEYS[] = {
    "speed",    "radius",   "goal",     "point",     "target",        "avoid_collisions",
    "strategy", "discount", "optimism", "max_depth", "min_depth",     "max_expansions",
    "k_skip",   "n_v",      "collapse", "damping",   "time_budget_ms"};
static const char* const NAV_KEYS[] = {"goal", "journey", "arrive_distance", "start_delay"};
static const char* const NAVMESH_KEYS[] = {"goal", "arrive_distance"};
static const char* const GROUND_KEYS[] = {"preset", "radius", "v_max"};
static const char* const REF_KEYS[] = {"group", "index"};
static const char* const PREVIOUS[] = {"previous"};

void behaviors_set_defaults(group_t* g)
{
    shoal_agent_def_t def = shoal_agent_default_def();
    g->arrive_gain = def.arrive_gain;
    g->depart_gain = def.depart_gain;
    g->neighbors = shoal_neighbors_default();
    g->wander = shoal_wander_default();
    g->pursuit = shoal_pursuit_default();
    g->follow = shoal_follow_default();
    g->avoid = shoal_avoid_default();
    g->dseek = shoal_dseek_default();
    g->crowd = shoal_crowd_default();
    g->planner = shoal_planner_default();
    g->nav = shoal_nav_default();
    g->navmesh = shoal_navmesh_default();
    g->ground = def.ground; /* not enabled: the "car" preset, the paper's follower */
    g->pursuit_target.group = g->leader.group = g->first_leader.group = g->planner_target.group = -1;
}

/* A number in [lo, hi] (of a float field). */
static shoal_status_t get_float_in(parser_t* p, const cJSON* v, const char* key, double lo, double hi,
                                   int exclusive_lo, int exclusive_hi, float* out)
{
    char a[32], b[32], c[32];
    float x = *out;
    TRY(parser_get_float(p, v, key, lo, exclusive_lo, &x));
    if (exclusive_hi ? !((double)x < hi) : !((double)x <= hi))
        return parser_fail(p, key, "must be in %s%s, %s%s, got %s", exclusive_lo ? "(" : "[",
                           json_format_number(a, lo), json_format_number(b, hi), exclusive_hi ? ")" : "]",
                           json_format_number(c, (double)x));
    *out = x;
    return SHOAL_OK;
}

static shoal_status_t get_int32(parser_t* p, const cJSON* v, const char* key, double lo, double hi,
                                int32_t* out)
{
    int64_t x = *out;
    TRY(parser_get_integer(p, v, key, lo, hi, &x));
    *out = (int32_t)x;
    return SHOAL_OK;
}

/* ---- "behaviors" ---- */

/* One behavior entry: {"weight"} or, for arrive and depart, {"weight", "gain"}.
 * A "gain" on any other is an unknown key: the rest have none, or keep their
 * parameters in their own object. */
static shoal_status_t parse_behavior(parser_t* p, const cJSON* v, float* weight, float* gain)
{
    *weight = 1.0f;
    TRY(parser_check_object(p, v, WEIGHT_GAIN_KEYS, gain != NULL ? 2 : 1));
    TRY(parser_get_float(p, v, "weight", 0.0, 0, weight));
    return gain != NULL ? parser_get_float(p, v, "gain", 0.0, 1, gain) : SHOAL_OK;
}

static shoal_status_t parse_behaviors(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, BEHAVIOR_KEYS, COUNT_OF(BEHAVIOR_KEYS)));
    for (int b = 0; b < (int)COUNT_OF(BEHAVIOR_KEYS); b++) {
        const cJSON* e = MEMBER(v, BEHAVIOR_KEYS[b]);
        if (e == NULL) continue;
        float* gain = b == SHOAL_BEHAVIOR_ARRIVE   ? &g->arrive_gain
                      : b == SHOAL_BEHAVIOR_DEPART ? &g->depart_gain
                                                   : NULL;
        size_t old = parser_push(p, BEHAVIOR_KEYS[b], 0);
        shoal_status_t s = parse_behavior(p, e, &g->weights[b], gain);
        parser_pop(p, old);
        TRY(s);
    }
    return SHOAL_OK;
}

/* ---- references to agents ---- */

/* The name group element `g` (index j) has: its "name", else "group<j>". */
static const char* file_group_name(const cJSON* g, int j, char buf[32])
{
    const cJSON* name = cJSON_IsObject(g) ? MEMBER(g, "name") : NULL;
    if (cJSON_IsString(name)) return name->valuestring;
    snprintf(buf, 32, "group%d", j);
    return buf;
}

/* The index of the group named by `v`, which must be an earlier group. */
static shoal_status_t resolve_group(parser_t* p, const cJSON* v, int32_t* out)
{
    char shown[64], buf[32];
    if (!cJSON_IsString(v))
        return parser_fail(p, "group", "expected a group name (a string), got %s", parser_type_name(v));
    const char* name = v->valuestring;
    int found = -1, again = -1, j = 0;
    const cJSON* g = NULL;
    cJSON_ArrayForEach(g, p->groups_json)
    {
        if (strcmp(file_group_name(g, j, buf), name) == 0) {
            if (found < 0)
                found = j;
            else if (again < 0)
                again = j;
        }
        j++;
    }
    parser_printable(shown, name);
    if (found < 0) {
        /* Suggest among the groups a reference could name: the earlier ones. */
        const char* close = NULL;
        for (int k = 0; k < p->group && close == NULL; k++)
            close = parser_suggest(name, (const char* const*)&p->groups[k].name, 1);
        return parser_fail(p, "group", "no group is named '%s'%s%s%s", shown, close ? "; did you mean '" : "",
                           close ? close : "", close ? "'?" : "");
    }
    if (again >= 0)
        return parser_fail(p, "group",
                           "'%s' names more than one group (groups[%d] and groups[%d]); a "
                           "referenced group needs a name of its own",
                           shown, found, again);
    if (found > p->group)
        return parser_fail(p, "group",
                           "'%s' is groups[%d], which comes later: a forward reference. A "
                           "reference may only point to an earlier group, because groups are "
                           "added in file order",
                           shown, found);
    if (found == p->group)
        return parser_fail(p, "group",
                           "'%s' is this group: a reference may only point to an earlier group "
                           "(use \"leader\": \"previous\" to follow within a group)",
                           shown);
    *out = found;
    return SHOAL_OK;
}

/* {"group": name, "index": i}: agent i of an earlier group. */
static shoal_status_t parse_ref(parser_t* p, const cJSON* v, agent_ref_t* out)
{
    char shown[64];
    TRY(parser_check_object(p, v, REF_KEYS, COUNT_OF(REF_KEYS)));
    const cJSON* group = MEMBER(v, "group");
    if (group == NULL) return parser_missing(p, "group", NULL);
    int32_t gi = -1;
    int64_t index = 0;
    TRY(resolve_group(p, group, &gi));
    TRY(parser_get_integer(p, v, "index", 0.0, INT32_MAX, &index));
    const group_t* target = &p->groups[gi];
    if (index >= target->count) {
        parser_printable(shown, target->name);
        if (target->count == 0) return parser_fail(p, "index", "group '%s' has no agents", shown);
        return parser_fail(p, "index", "must be < %d, the size of group '%s', got %lld", (int)target->count,
                           shown, (long long)index);
    }
    out->group = gi;
    out->index = (int32_t)index;
    return SHOAL_OK;
}

/* ---- parameter objects ---- */

/* A planner agent (shoal/planner.h): the object makes the group's agents
 * planner agents; every key is a shoal_planner_t field. "goal" is "none",
 * "seek" (the default), "flee", "pursue" or "evade"; seek and flee use
 * "point", pursue and evade need "target", an agent reference. */
static shoal_status_t parse_planner(parser_t* p, const cJSON* v, group_t* g)
{
    static const char* const goals[] = {"none", "seek", "flee", "pursue", "evade"};
    static const char* const strategies[] = {"single_step", "uniform", "adaptive"};
    shoal_planner_t* pl = &g->planner;
    TRY(parser_check_object(p, v, PLANNER_KEYS, COUNT_OF(PLANNER_KEYS)));
    pl->enabled = 1;
    TRY(parser_get_float(p, v, "speed", 0.0, 1, &pl->speed));
    TRY(parser_get_float(p, v, "radius", 0.0, 0, &pl->radius));
    const cJSON* goal = MEMBER(v, "goal");
    if (goal) {
        int32_t which = 0;
        TRY(parser_read_choice(p, goal, "goal", goals, COUNT_OF(goals), &which, NULL));
        pl->goal = (shoal_plan_goal_t)which;
    }
    TRY(parser_get_point(p, v, "point", pl->goal_point));
    PARSE_MEMBER(p, v, "target", parse_ref, &g->planner_target);
    int uses_agent = pl->goal == SHOAL_PLAN_GOAL_PURSUE || pl->goal == SHOAL_PLAN_GOAL_EVADE;
    if (uses_agent && g->planner_target.group < 0)
        return parser_missing(p, "target",
                              pl->goal == SHOAL_PLAN_GOAL_PURSUE ? " (goal \"pursue\" needs an agent)"
                                                                 : " (goal \"evade\" needs an agent)");
    if (!uses_agent && g->planner_target.group >= 0)
        return parser_fail(p, "target", "is only for goal \"pursue\" or \"evade\"");
    TRY(parser_get_bool(p, v, "avoid_collisions", &pl->avoid_collisions));
    const cJSON* strategy = MEMBER(v, "strategy");
    if (strategy) {
        int32_t which = 0;
        TRY(parser_read_choice(p, strategy, "strategy", strategies, COUNT_OF(strategies), &which, NULL));
        pl->strategy = (shoal_plan_strategy_t)which;
    }
    TRY(get_float_in(p, v, "discount", 0.0, 1.0, 1, 1, &pl->discount));
    TRY(get_float_in(p, v, "optimism", -1.0, 1.0, 0, 0, &pl->optimism));
    TRY(get_int32(p, v, "max_depth", 1, 64, &pl->max_depth));
    /* min_depth's default follows a smaller max_depth */
    if (!MEMBER(v, "min_depth") && pl->min_depth > pl->max_depth) pl->min_depth = pl->max_depth;
    TRY(get_int32(p, v, "min_depth", 1, pl->max_depth, &pl->min_depth));
    TRY(get_int32(p, v, "max_expansions", 1, 1000000, &pl->max_expansions));
    TRY(get_int32(p, v, "k_skip", 1, INT32_MAX, &pl->k_skip));
    TRY(get_int32(p, v, "n_v", 1, INT32_MAX, &pl->n_v));
    TRY(get_float_in(p, v, "collapse", 0.0, 1.0, 1, 0, &pl->collapse));
    TRY(get_float_in(p, v, "damping", 0.0, 1.0, 0, 1, &pl->damping));
    return get_float_in(p, v, "time_budget_ms", 0.0, 60000.0, 0, 0, &pl->time_budget_ms);
}

static shoal_status_t parse_neighbors(parser_t* p, const cJSON* v, group_t* g)
{
    shoal_neighbors_t* n = &g->neighbors;
    TRY(parser_check_object(p, v, NEIGHBORS_KEYS, COUNT_OF(NEIGHBORS_KEYS)));
    TRY(parser_get_float(p, v, "radius", 0.0, 1, &n->radius));
    const cJSON* rad = MEMBER(v, "fov");
    const cJSON* deg = MEMBER(v, "fov_deg");
    if (rad != NULL && deg != NULL)
        return parser_fail(p, "fov_deg", "give either fov (radians) or fov_deg (degrees), not both");
    /* The full cone angle, compared as the float the world will check. */
    float fov = n->fov;
    const char* key = deg != NULL ? "fov_deg" : "fov";
    double scale = deg != NULL ? PI / 180.0 : 1.0;
    TRY(parser_get_float(p, v, key, 0.0, 1, &fov));
    if (rad != NULL || deg != NULL) {
        float angle = (float)(fov * scale);
        if (!(angle > 0.0f && angle <= (float)(2.0 * PI)))
            return parser_fail(p, key, "must be in (0, %s], got %g", deg != NULL ? "360" : "2 pi = 6.283185",
                               (double)fov);
        n->fov = angle;
    }
    int64_t cap = n->max_neighbors;
    TRY(parser_get_integer(p, v, "max_neighbors", 0.0, INT32_MAX, &cap));
    n->max_neighbors = (int32_t)cap;
    TRY(parser_get_float(p, v, "separation_gain", 0.0, 0, &n->separation_gain));
    TRY(parser_get_float(p, v, "alignment_gain", 0.0, 0, &n->alignment_gain));
    return parser_get_float(p, v, "cohesion_gain", 0.0, 0, &n->cohesion_gain);
}

static shoal_status_t parse_wander(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, WANDER_KEYS, COUNT_OF(WANDER_KEYS)));
    TRY(parser_get_float(p, v, "cruise_speed", 0.0, 0, &g->wander.cruise_speed));
    TRY(parser_get_float(p, v, "strength", 0.0, 0, &g->wander.strength));
    return parser_get_float(p, v, "noise", 0.0, 0, &g->wander.noise);
}

static shoal_status_t parse_pursuit(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, PURSUIT_KEYS, COUNT_OF(PURSUIT_KEYS)));
    PARSE_MEMBER(p, v, "target", parse_ref, &g->pursuit_target);
    return parser_get_float(p, v, "max_prediction", 0.0, 0, &g->pursuit.max_prediction);
}

static shoal_status_t parse_follow(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, FOLLOW_KEYS, COUNT_OF(FOLLOW_KEYS)));
    const cJSON* leader = MEMBER(v, "leader");
    if (cJSON_IsString(leader)) {
        if (strcmp(leader->valuestring, PREVIOUS[0]) != 0) {
            char shown[64];
            const char* close = parser_suggest(leader->valuestring, PREVIOUS, 1);
            return parser_fail(p, "leader",
                               "expected {\"group\": name, \"index\": i} or \"previous\", got "
                               "\"%s\"%s",
                               parser_printable(shown, leader->valuestring),
                               close ? "; did you mean \"previous\"?" : "");
        }
        g->follow_previous = 1;
    } else if (leader != NULL && !cJSON_IsObject(leader)) {
        return parser_fail(p, "leader", "expected {\"group\": name, \"index\": i} or \"previous\", got %s",
                           parser_type_name(leader));
    } else {
        PARSE_MEMBER(p, v, "leader", parse_ref, &g->leader);
    }
    if (!g->follow_previous && MEMBER(v, "first_leader") != NULL)
        return parser_fail(p, "first_leader", "only used with \"leader\": \"previous\"");
    PARSE_MEMBER(p, v, "first_leader", parse_ref, &g->first_leader);
    TRY(parser_get_float(p, v, "behind", 0.0, 0, &g->follow.behind));
    TRY(parser_get_float(p, v, "behind_per_speed", 0.0, 0, &g->follow.behind_per_speed));
    return parser_get_float(p, v, "arrive_gain", 0.0, 1, &g->follow.arrive_gain);
}

static shoal_status_t parse_avoid(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, AVOID_KEYS, COUNT_OF(AVOID_KEYS)));
    TRY(parser_get_float(p, v, "lookahead_time", 0.0, 0, &g->avoid.lookahead_time));
    TRY(parser_get_float(p, v, "gain", 0.0, 0, &g->avoid.gain));
    return parser_get_bool(p, v, "tangential", &g->avoid.tangential);
}

/* A crowd agent: {"preset", "neighbor_distance", "max_neighbors",
 * "time_horizon", "time_horizon_walls", "responsibility",
 * "preferred_speed"}. A preset fills every crowd field and the vehicle's
 * radius and max_speed, except those the group's "vehicle" object gives. */
static shoal_status_t parse_crowd(parser_t* p, const cJSON* v, const cJSON* group, group_t* g)
{
    TRY(parser_check_object(p, v, CROWD_KEYS, COUNT_OF(CROWD_KEYS)));
    g->crowd.enabled = 1;
    const cJSON* preset = cJSON_GetObjectItemCaseSensitive(v, "preset");
    if (preset) {
        static const char* const names[] = {"pedestrian", "rvo2"};
        int32_t which = 0;
        TRY(parser_read_choice(p, preset, "preset", names, COUNT_OF(names), &which, NULL));
        shoal_vehicle_t vehicle = g->vehicle;
        if (shoal_crowd_preset(names[which], &g->crowd, &vehicle, NULL) != SHOAL_OK)
            return parser_fail(p, "preset", "the library has no preset '%s'", names[which]);
        const cJSON* given = cJSON_GetObjectItemCaseSensitive(group, "vehicle");
        if (!cJSON_GetObjectItemCaseSensitive(given, "radius")) g->vehicle.radius = vehicle.radius;
        if (!cJSON_GetObjectItemCaseSensitive(given, "max_speed")) g->vehicle.max_speed = vehicle.max_speed;
    }
    TRY(parser_get_float(p, v, "neighbor_distance", 0.0, 1, &g->crowd.neighbor_distance));
    int64_t max_nb = g->crowd.max_neighbors;
    TRY(parser_get_integer(p, v, "max_neighbors", 1, 64, &max_nb));
    g->crowd.max_neighbors = (int32_t)max_nb;
    TRY(parser_get_float(p, v, "time_horizon", 0.0, 1, &g->crowd.time_horizon));
    TRY(parser_get_float(p, v, "time_horizon_walls", 0.0, 1, &g->crowd.time_horizon_walls));
    TRY(parser_get_float(p, v, "responsibility", 0.0, 0, &g->crowd.responsibility));
    if (g->crowd.responsibility > 1.0f)
        return parser_fail(p, "responsibility", "must be in [0, 1], got %g", (double)g->crowd.responsibility);
    TRY(parser_get_float(p, v, "preferred_speed", 0.0, 0, &g->crowd.preferred_speed));
    TRY(parser_get_float(p, v, "time_gap", 0.0, 0, &g->crowd.time_gap));
    TRY(parser_get_float(p, v, "side_preference", 0.0, 0, &g->crowd.side_preference));
    if (g->crowd.side_preference > 1.0f)
        return parser_fail(p, "side_preference", "must be in [0, 1], got %g",
                           (double)g->crowd.side_preference);
    return SHOAL_OK;
}

/* A direction: any nonzero vector, normalized. */
static shoal_status_t read_direction(parser_t* p, const cJSON* v, const char* key, float out[3])
{
    float d[3] = {0.0f, 0.0f, 0.0f};
    TRY(parser_read_vector(p, v, key, -DBL_MAX, "[dx, dy]", "[dx, dy, dz]", d));
    double n = sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);
    if (!(n > 1e-6)) return parser_fail(p, key, "must be a nonzero vector");
    for (int k = 0; k < 3; ++k) out[k] = (float)(d[k] / n);
    return SHOAL_OK;
}

/* {"position": [..], "direction": [..], "speed": v} */
static shoal_status_t parse_waypoint(parser_t* p, const cJSON* v, shoal_waypoint_t* out)
{
    TRY(parser_check_object(p, v, WAYPOINT_KEYS, COUNT_OF(WAYPOINT_KEYS)));
    const cJSON* pos = cJSON_GetObjectItemCaseSensitive(v, "position");
    const cJSON* dir = cJSON_GetObjectItemCaseSensitive(v, "direction");
    if (!pos) return parser_missing(p, "position", NULL);
    if (!dir) return parser_missing(p, "direction", NULL);
    TRY(parser_read_vector(p, pos, "position", -DBL_MAX, "[x, y]", "[x, y, z]", out->position));
    TRY(read_direction(p, dir, "direction", out->direction));
    return parser_get_float(p, v, "speed", 0.0, 0, &out->speed);
}

/* An array of waypoints into a malloc'd array. */
static shoal_status_t parse_waypoints(parser_t* p, const cJSON* v, const char* key, shoal_waypoint_t** out,
                                      int32_t* count)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1)
        return parser_fail(p, key, "expected a non-empty array of waypoints, got %s", parser_type_name(v));
    int32_t n = cJSON_GetArraySize(v);
    *out = calloc((size_t)n, sizeof **out);
    if (!*out) return parser_out_of_memory(p);
    *count = n;
    size_t old = parser_push(p, key, 0);
    int32_t i = 0;
    const cJSON* item;
    cJSON_ArrayForEach(item, v)
    {
        size_t at = parser_push(p, NULL, i);
        shoal_status_t st = parse_waypoint(p, item, &(*out)[i]);
        parser_pop(p, at);
        if (st != SHOAL_OK) {
            parser_pop(p, old);
            return st;
        }
        i++;
    }
    parser_pop(p, old);
    return SHOAL_OK;
}

/* Directed seek: one waypoint {"waypoint": [..], "direction": [..] (any
 * nonzero vector; normalized), "speed"} or a "route" of waypoint objects,
 * plus "r_min" and "reach_radius". */
static shoal_status_t parse_dseek(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, DSEEK_KEYS, COUNT_OF(DSEEK_KEYS)));
    const cJSON* wp = cJSON_GetObjectItemCaseSensitive(v, "waypoint");
    const cJSON* dir = cJSON_GetObjectItemCaseSensitive(v, "direction");
    const cJSON* route = cJSON_GetObjectItemCaseSensitive(v, "route");
    if (route && (wp || dir))
        return parser_fail(p, "route", "give either \"route\" or \"waypoint\" and \"direction\", not both");
    if (route) {
        TRY(parse_waypoints(p, route, "route", &g->route, &g->route_length));
    } else {
        if (!wp) return parser_missing(p, "waypoint", "(or a \"route\")");
        if (!dir) return parser_missing(p, "direction", NULL);
        TRY(parser_read_vector(p, wp, "waypoint", -DBL_MAX, "[x, y]", "[x, y, z]",
                               g->dseek.waypoint.position));
        TRY(read_direction(p, dir, "direction", g->dseek.waypoint.direction));
        TRY(parser_get_float(p, v, "speed", 0.0, 0, &g->dseek.waypoint.speed));
    }
    TRY(parser_get_float(p, v, "r_min", 0.0, 0, &g->dseek.r_min));
    return parser_get_float(p, v, "reach_radius", 0.0, 0, &g->dseek.reach_radius);
}

/* Directed formation arrival: {"anchor": waypoint, "offsets": [[x, y(, z)],
 * ...]} with one offset per agent of the group, in the formation's frame
 * (+x along the anchor direction, +y to its left). */
static shoal_status_t parse_formation(parser_t* p, const cJSON* v, group_t* g)
{
    TRY(parser_check_object(p, v, FORMATION_KEYS, COUNT_OF(FORMATION_KEYS)));
    const cJSON* anchor = cJSON_GetObjectItemCaseSensitive(v, "anchor");
    const cJSON* offsets = cJSON_GetObjectItemCaseSensitive(v, "offsets");
    if (!anchor) return parser_missing(p, "anchor", NULL);
    if (!offsets) return parser_missing(p, "offsets", NULL);
    size_t at = parser_push(p, "anchor", 0);
    shoal_status_t st = parse_waypoint(p, anchor, &g->formation_anchor);
    parser_pop(p, at);
    TRY(st);
    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != g->count)
        return parser_fail(p, "offsets", "expected an array of %d offsets (one per agent of the group)",
                           (int)g->count);
    if (g->count == 0) return SHOAL_OK;
    g->formation_offsets = calloc((size_t)g->count, sizeof *g->formation_offsets);
    if (!g->formation_offsets) return parser_out_of_memory(p);
    size_t old = parser_push(p, "offsets", 0);
    int32_t i = 0;
    const cJSON* item;
    cJSON_ArrayForEach(item, offsets)
    {
        char name[24];
        snprintf(name, sizeof name, "[%d]", (int)i);
        st = parser_read_vector(p, item, name, -DBL_MAX, "[x, y]", "[x, y, z]", g->formation_offsets[i]);
        if (st != SHOAL_OK) break;
        i++;
    }
    parser_pop(p, old);
    return st;
}

/* Navigation (shoal_nav_t): {"goal": a name or an index of the top-level
 * nav.goals, or "journey": one of nav.journeys, "arrive_distance" and
 * "start_delay"}. */
static shoal_status_t parse_nav(parser_t* p, const cJSON* v, group_t* g)
{
    char shown[64];
    const struct shoal_scenario_t* s = p->scenario;
    if (p->dimensions != 2)
        return parser_fail(p, NULL, "navigation fields are 2D; this scenario is %dD", (int)p->dimensions);
    TRY(parser_check_object(p, v, NAV_KEYS, COUNT_OF(NAV_KEYS)));
    const cJSON* goal = MEMBER(v, "goal");
    if (cJSON_IsString(goal)) {
        int found = -1;
        for (int32_t i = 0; i < s->nav_goal_count && found < 0; i++)
            if (strcmp(s->nav_goals[i].name, goal->valuestring) == 0) found = i;
        if (found < 0) {
            parser_printable(shown, goal->valuestring);
            if (s->nav_goal_count == 0)
                return parser_fail(p, "goal", "no nav goal is named '%s': the scenario has no nav.goals",
                                   shown);
            const char* close = NULL;
            for (int32_t i = 0; i < s->nav_goal_count && close == NULL; i++)
                close = parser_suggest(goal->valuestring, (const char* const*)&s->nav_goals[i].name, 1);
            return parser_fail(p, "goal", "no nav goal is named '%s'%s%s%s", shown,
                               close ? "; did you mean '" : "", close ? close : "", close ? "'?" : "");
        }
        g->nav.goal = found;
    } else if (goal != NULL) {
        if (!cJSON_IsNumber(goal))
            return parser_fail(p, "goal", "expected a goal name (a string) or an index of nav.goals, got %s",
                               parser_type_name(goal));
        if (s->nav_goal_count == 0)
            return parser_fail(p, "goal", "the scenario has no nav.goals for an index to count");
        int64_t index = 0;
        TRY(parser_get_integer(p, v, "goal", 0.0, s->nav_goal_count - 1, &index));
        g->nav.goal = (int32_t)index;
    }
    const cJSON* journey = MEMBER(v, "journey");
    if (journey != NULL) {
        if (goal != NULL)
            return parser_fail(p, "journey",
                               "give either \"goal\" or \"journey\", not both: a journey gives the goal "
                               "stage by stage");
        const char** names = NULL; /* the journeys' names, for a reference by name */
        if (s->journey_count > 0) {
            if ((names = calloc((size_t)s->journey_count, sizeof *names)) == NULL)
                return parser_out_of_memory(p);
            for (int32_t i = 0; i < s->journey_count; i++) names[i] = s->journeys[i].name;
        }
        shoal_status_t st = scenario_read_ref(p, journey, "journey", names, s->journey_count, "journey",
                                              "nav.journeys", &g->nav.journey);
        free(names);
        TRY(st);
    }
    TRY(parser_get_float(p, v, "start_delay", 0.0, 0, &g->nav.start_delay));
    return parser_get_float(p, v, "arrive_distance", 0.0, 0, &g->nav.arrive_distance);
}

/* Navigation by mesh (shoal_navmesh_t): {"goal": [x, y], the point every
 * agent of the group goes to, and "arrive_distance"}. */
static shoal_status_t parse_navmesh(parser_t* p, const cJSON* v, group_t* g)
{
    if (p->dimensions != 2)
        return parser_fail(p, NULL, "navigation meshes are 2D; this scenario is %dD", (int)p->dimensions);
    TRY(parser_check_object(p, v, NAVMESH_KEYS, COUNT_OF(NAVMESH_KEYS)));
    const cJSON* goal = MEMBER(v, "goal");
    if (goal != NULL) {
        float xy[3] = {0.0f, 0.0f, 0.0f};
        TRY(parser_read_vector(p, goal, "goal", -DBL_MAX, "[x, y]", "[x, y, z]", xy));
        g->navmesh.goal[0] = xy[0];
        g->navmesh.goal[1] = xy[1];
        g->navmesh_goal = 1;
    }
    return parser_get_float(p, v, "arrive_distance", 0.0, 0, &g->navmesh.arrive_distance);
}

/* Ground vehicles on the navmesh (shoal_ground_t): {"preset": a vehicle
 * preset, "radius": its collision radius, "v_max": its follower's top
 * speed}; the vehicle model and the follower's other values are the
 * preset's and shoal_path_follow_default()'s. Their path comes from the
 * mesh: the group's behavior is navmesh alone (checked below). */
static shoal_status_t parse_ground(parser_t* p, const cJSON* v, group_t* g)
{
    if (p->dimensions != 2)
        return parser_fail(p, NULL,
                           "ground vehicles in scenarios drive on navigation meshes, which are 2D; "
                           "this scenario is %dD",
                           (int)p->dimensions);
    TRY(parser_check_object(p, v, GROUND_KEYS, COUNT_OF(GROUND_KEYS)));
    g->ground.enabled = 1;
    const cJSON* preset = MEMBER(v, "preset");
    if (preset) {
        static const char* const names[] = {"buggy", "car", "apc", "truck", "tank", "hovercraft"};
        int32_t which = 0;
        TRY(parser_read_choice(p, preset, "preset", names, COUNT_OF(names), &which, NULL));
        if (shoal_ground_vehicle_preset(names[which], &g->ground.vehicle, NULL) != SHOAL_OK)
            return parser_fail(p, "preset", "the library has no preset '%s'", names[which]);
    }
    TRY(parser_get_float(p, v, "radius", 0.0, 0, &g->ground.vehicle.radius));
    TRY(parser_get_float(p, v, "v_max", 0.0, 1, &g->ground.follow.v_max));
    if (g->ground.follow.v_max < g->ground.follow.v_min)
        return parser_fail(p, "v_max", "must be >= the follower's v_min (%g m/s), got %g",
                           (double)g->ground.follow.v_min, (double)g->ground.follow.v_max);
    return SHOAL_OK;
}

shoal_status_t behaviors_parse_group(parser_t* p, const cJSON* v, group_t* g)
{
    PARSE_MEMBER(p, v, "behaviors", parse_behaviors, g);
    PARSE_MEMBER(p, v, "neighbors", parse_neighbors, g);
    PARSE_MEMBER(p, v, "wander", parse_wander, g);
    PARSE_MEMBER(p, v, "pursuit", parse_pursuit, g);
    PARSE_MEMBER(p, v, "follow", parse_follow, g);
    PARSE_MEMBER(p, v, "avoid", parse_avoid, g);
    PARSE_MEMBER(p, v, "dseek", parse_dseek, g);
    PARSE_MEMBER(p, v, "formation", parse_formation, g);
    PARSE_MEMBER(p, v, "planner", parse_planner, g);
    PARSE_MEMBER(p, v, "nav", parse_nav, g);
    PARSE_MEMBER(p, v, "navmesh", parse_navmesh, g);
    PARSE_MEMBER(p, v, "ground", parse_ground, g);
    const cJSON* crowd = MEMBER(v, "crowd");
    if (crowd) {
        size_t at = parser_push(p, "crowd", 0);
        shoal_status_t st = parse_crowd(p, crowd, v, g);
        parser_pop(p, at);
        TRY(st);
    }

    /* A behavior that has no agent to steer by would be silently inert. */
    if (g->pursuit_target.group < 0) {
        if (g->weights[SHOAL_BEHAVIOR_PURSUE] > 0.0f)
            return parser_missing(p, "pursuit.target", "(behaviors.pursue needs an agent)");
        if (g->weights[SHOAL_BEHAVIOR_EVADE] > 0.0f)
            return parser_missing(p, "pursuit.target", "(behaviors.evade needs an agent)");
    }
    if (g->weights[SHOAL_BEHAVIOR_FOLLOW] > 0.0f && g->leader.group < 0 && !g->follow_previous)
        return parser_missing(p, "follow.leader", "(behaviors.follow needs a leader)");
    if (g->weights[SHOAL_BEHAVIOR_NAVIGATE] > 0.0f && g->nav.goal < 0 && g->nav.journey < 0) {
        char why[200], shown[64];
        snprintf(why, sizeof why,
                 "(behaviors.navigate of group '%s' needs a goal: a name or an index of the "
                 "top-level nav.goals, or a nav.journey)",
                 parser_printable(shown, g->name));
        return parser_missing(p, "nav.goal", why);
    }
    if (g->ground.enabled) {
        /* A ground vehicle's follower drives it: the behaviors' steering
         * would be ignored, and a path is what it needs. */
        char shown[64];
        parser_printable(shown, g->name);
        if (!(g->weights[SHOAL_BEHAVIOR_NAVMESH] > 0.0f))
            return parser_fail(p, "ground",
                               "the ground vehicles of group '%s' need behaviors.navmesh (and navmesh.goal): "
                               "their path comes from the navigation mesh",
                               shown);
        for (int b = 0; b < SHOAL_BEHAVIOR_COUNT_; ++b)
            if (b != SHOAL_BEHAVIOR_NAVMESH && g->weights[b] != 0.0f)
                return parser_fail(p, "ground",
                                   "the ground vehicles of group '%s' are driven by their path follower: "
                                   "behaviors.%s would do nothing (navmesh is their only behavior)",
                                   shown, BEHAVIOR_KEYS[b]);
        if (g->crowd.enabled || g->planner.enabled)
            return parser_fail(p, "ground", "group '%s' cannot be ground vehicles and %s agents at once",
                               shown, g->crowd.enabled ? "crowd" : "planner");
    }
    if (g->weights[SHOAL_BEHAVIOR_NAVMESH] > 0.0f && !g->navmesh_goal) {
        char why[200], shown[64];
        snprintf(why, sizeof why, "(behaviors.navmesh of group '%s' needs a goal: [x, y])",
                 parser_printable(shown, g->name));
        return parser_missing(p, "navmesh.goal", why);
    }
    return SHOAL_OK;
}
