/* The in-memory scenario: what the schema (scenario.c, and
 * scenario_behaviors.c for a group's behaviors) builds from a file, and what
 * populate (scenario_populate.c) adds to a world. Plain structs, not the
 * cJSON tree: the tree is freed once the file is read, so populate has no
 * JSON left to fail on. Nothing outside src/io uses it. */
#ifndef SHOAL_IO_SCENARIO_MODEL_H
#define SHOAL_IO_SCENARIO_MODEL_H

#include <stdint.h>

#include "io/json_reader.h"
#include "shoal/shoal.h"
#include "shoal/scenario.h"

#define PI 3.14159265358979323846

enum { SHAPE_POINT, SHAPE_DISC, SHAPE_RING, SHAPE_BOX, SHAPE_POLYGON };
/* spawn.placement, as in PLACEMENT_NAMES: random draws, or the points of a
 * hexagonal or square lattice at min_spacing. */
enum { PLACE_RANDOM, PLACE_LATTICE, PLACE_SQUARE_LATTICE };
/* The fields a group's "distributions" may draw per agent, as in
 * DISTRIBUTION_FIELDS (scenario_spawn.c); the index is the draw's counter. */
enum { DIST_PREFERRED_SPEED, DIST_TIME_GAP, DIST_RADIUS, DIST_MAX_SPEED, DIST_START_DELAY, DIST_FIELDS };
enum { DIST_NONE, DIST_NORMAL, DIST_UNIFORM, DIST_TABLE };
#define SPAWN_MAX_POLYGON 64
#define DIST_MAX_TABLE 64
enum { DIR_FIXED, DIR_RANDOM, DIR_INWARD, DIR_OUTWARD }; /* DIR_RANDOM.. as in DIRECTION_NAMES */

/* One agent of the scenario named by group and index within it; group -1 is
 * nobody. References are checked while parsing (the group exists, comes
 * before the referring group, and has the index), so populate only looks the
 * handle up. */
typedef struct agent_ref_t {
    int32_t group, index;
} agent_ref_t;

/* One field's per-agent distribution: normal(a = mean, b = sd) truncated
 * to [lo, hi], uniform on [a, b], or a table of values with cumulative
 * weights (the last is 1). */
typedef struct distribution_t {
    int32_t kind, table_count;
    double a, b, lo, hi;
    float table[DIST_MAX_TABLE];
    double cumulative[DIST_MAX_TABLE];
} distribution_t;

typedef struct group_t {
    char* name;
    int32_t count, shape, heading_mode, pitch_mode;
    float heading, pitch; /* rad, used when the mode is DIR_FIXED */
    float center[3], size[3], radius, speed;
    shoal_vehicle_t vehicle;
    shoal_control_t control;
    float weights[SHOAL_BEHAVIOR_SLOTS], arrive_gain, depart_gain;
    int32_t target_antipode;
    int32_t target_offset; /* target = spawn position + target (the offset) */
    float target[3], threat[3];
    /* Behavior parameters; the handles in pursuit and follow stay null here
     * and are filled from the references below by populate. */
    shoal_neighbors_t neighbors;
    shoal_wander_t wander;
    shoal_pursuit_t pursuit;
    shoal_follow_t follow;
    shoal_avoid_t avoid;
    shoal_dseek_t dseek;
    shoal_crowd_t crowd;        /* enabled by a "crowd" object */
    shoal_planner_t planner;    /* enabled by a "planner" object */
    agent_ref_t planner_target; /* planner.target: the goal agent of pursue / evade */
    int32_t contacts;           /* "contacts": true */
    shoal_waypoint_t* route;    /* dseek.route in the file: made a world route by populate */
    int32_t route_length;
    shoal_waypoint_t formation_anchor;
    float (*formation_offsets)[3]; /* one per agent when the group arrives in formation */
    agent_ref_t pursuit_target, leader, first_leader;
    int32_t follow_previous; /* each agent follows the one added before it in this group */
    shoal_nav_t nav;         /* nav.goal: an index into the scenario's nav_goals, nav.journey one
                              * into its journeys; -1 none */
    shoal_ground_t ground;   /* enabled by a "ground" object: ground vehicles on the navmesh */
    shoal_navmesh_t navmesh; /* the group's "navmesh": its goal and arrive_distance */
    int32_t navmesh_goal;    /* "navmesh" gave a goal */
    /* spawn.placement and spawn.min_spacing (0: not given); a polygon's
     * points (center is their centroid), its triangles (indices into
     * polygon) and their cumulative areas, which random placement picks
     * by. */
    int32_t placement;
    float min_spacing;
    int32_t polygon_count, triangle_count;
    float polygon[SPAWN_MAX_POLYGON][2];
    uint8_t triangles[SPAWN_MAX_POLYGON - 2][3];
    double triangle_cumulative[SPAWN_MAX_POLYGON - 2];
    double area, perimeter; /* of the spawn area (a ring: 0 and its length) */
    distribution_t distributions[DIST_FIELDS];
    int32_t has_distributions;
} group_t;

/* A wall: count points (x, y), open or closed (shoal_world_add_wall). */
typedef struct wall_t {
    float* points;
    int32_t count, closed;
} wall_t;

/* A goal of the top-level "nav" object: its name (given, or "goal<i>")
 * and its shape, added by populate in file order. */
typedef struct nav_goal_t {
    char* name;
    shoal_nav_goal_t goal;
} nav_goal_t;

/* A journey of the top-level "nav" object: its name (given, or
 * "journey<i>"), its stages' names (given, or "stage<i>"; kept so that a
 * failed parse frees them with the scenario) and the journey, whose stage
 * goals are indices into the scenario's nav_goals until populate maps them
 * to the world's ids. */
typedef struct journey_t {
    char* name;
    char* stage_names[SHOAL_JOURNEY_STAGES];
    shoal_journey_t journey;
} journey_t;

/* A line or an area of the top-level "measure" object (shoal/measure.h):
 * its name (given, or "line<i>" / "area<i>"; the def's name is set from
 * it by populate) and its def. */
typedef struct measure_line_spec_t {
    char* name;
    shoal_measure_line_t line;
} measure_line_spec_t;

typedef struct measure_area_spec_t {
    char* name;
    shoal_measure_area_t area;
} measure_area_spec_t;

typedef struct obstacle_t {
    float center[3], radius;
} obstacle_t;

struct shoal_scenario_t {
    char* name;
    int32_t dimensions, steps, threads, agent_count, group_count, obstacle_count, wall_count;
    uint64_t seed;
    float dt;
    /* "world": space and spatial hash, as in shoal_world_def_t */
    int32_t wrap, reorder_interval;
    float bounds_min[3], bounds_max[3], cell_size;
    group_t* groups;
    obstacle_t* obstacles;
    wall_t* walls;
    /* "nav": the grid's parameters (set on the world only when has_nav),
     * the goals and the journeys */
    int32_t has_nav, nav_goal_count, journey_count;
    shoal_nav_params_t nav;
    nav_goal_t* nav_goals;
    journey_t* journeys;
    /* "nav.zones": the speed zones, added by populate after the goals */
    shoal_nav_zone_t* nav_zones;
    int32_t nav_zone_count;
    /* "navmesh": the mesh's parameters, set on the world only when
     * has_navmesh */
    int32_t has_navmesh;
    shoal_navmesh_params_t navmesh;
    /* "measure": lines and areas, added by populate before the agents */
    int32_t measure_line_count, measure_area_count;
    measure_line_spec_t* measure_lines;
    measure_area_spec_t* measure_areas;
    /* "collect": what `shoal run --collect` samples */
    shoal_scenario_collect_t collect;
};

/* scenario_behaviors.c: defaults of a group's behavior fields, and the
 * group keys "behaviors", "neighbors", "wander", "pursuit", "follow",
 * "avoid", "dseek", "formation", "planner", "crowd", "nav" and "navmesh" of the group
 * object `v` (whose other keys scenario.c reads); p->scenario holds the
 * goals and journeys a "nav" object may name. */
void behaviors_set_defaults(group_t* g);
/* scenario.c: a reference v (obj-member or element `key`) to one of `n`
 * named things: a name of `names` (a close one suggested) or an index;
 * `what` and `list` name them in messages ("nav goal", "nav.goals"). */
shoal_status_t scenario_read_ref(parser_t* p, const cJSON* v, const char* key, const char* const* names,
                                 int32_t n, const char* what, const char* list, int32_t* out);
shoal_status_t behaviors_parse_group(parser_t* p, const cJSON* v, group_t* g);
/* scenario_measure.c: the top-level "measure" object (read after the
 * groups, which its "group" keys name), freeing it, and adding its lines
 * and areas to a world. */
shoal_status_t scenario_parse_measure(parser_t* p, const cJSON* v, struct shoal_scenario_t* s);
void scenario_free_measure(struct shoal_scenario_t* s);
shoal_status_t scenario_add_measure(const struct shoal_scenario_t* s, shoal_world_t* world);

/* scenario_spawn.c: spawn.shape "polygon" (its "points") and
 * spawn.placement / spawn.min_spacing of the spawn object v, read after
 * the other spawn keys; and the group key "distributions", read after the
 * rest of the group. */
shoal_status_t spawn_parse_area(parser_t* p, const cJSON* v, group_t* g);
shoal_status_t spawn_parse_distributions(parser_t* p, const cJSON* v, group_t* g);
/* Whether populate must plan positions (some group has a polygon, a
 * lattice or a minimum spacing). */
int spawn_needs_plan(const struct shoal_scenario_t* s);
/* The per-agent values of agent `index` of group `gi`: its vehicle and
 * crowd with the group's distributions drawn (preferred speed then clamped
 * to the agent's max_speed). */
void spawn_agent_values(const struct shoal_scenario_t* s, int32_t gi, int32_t index, shoal_vehicle_t* vehicle,
                        shoal_crowd_t* crowd);
/* Agent `index` of group `gi`'s nav.start_delay: the group's, or drawn
 * from its "nav.start_delay" distribution. */
void spawn_agent_start_delay(const struct shoal_scenario_t* s, int32_t gi, int32_t index, shoal_nav_t* nav);
/* Positions (x, y; 2 doubles an agent, scenario order) of the groups that
 * need a plan, filled into xy, where the other groups' agents already are.
 * Scratch from `alloc` (an allocator_t). On failure, a message in msg. */
struct allocator_t;
shoal_status_t spawn_plan(const struct shoal_scenario_t* s, const struct allocator_t* alloc, double* xy,
                          char* msg, size_t msg_size);
/* Whether group g's agents are placed from the plan. */
static inline int spawn_planned(const group_t* g)
{
    return g->shape == SHAPE_POLYGON || g->min_spacing > 0.0f;
}

#endif /* SHOAL_IO_SCENARIO_MODEL_H */
