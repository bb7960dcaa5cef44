/* Populate: adds a loaded scenario (scenario_model.h) to a world, obstacles,
 * walls, nav goals and navmesh parameters first, then the agents of each
 * group in file order, placed from the scenario's seed.
 *
 * Decisions:
 * - Placement draws are rng_unit(seed, agent index in the scenario, draw,
 *   stream) with a fixed draw number per purpose, so an agent's placement is a
 *   pure function of its index: no generator state, no dependence on order.
 * - Groups are added in file order, which is why a reference may only point
 *   to an earlier group: its handles exist by then.
 * - Adding uses only the public API, like any host would. A failure leaves
 *   the world as it was; that is the one thing the public API cannot do, and
 *   populate_all_or_nothing, at the end of this file, is the only code here
 *   that reaches into the world for it.
 */
#include "shoal/scenario.h"

#include <math.h>
#include <string.h>

#include "ecs/rng.h"
#include "io/scenario_model.h"

/* Random stream of placement, apart from the streams the world draws from. */
#define PLACEMENT_STREAM 0x5ce7a210u

/* Draw numbers (rng_unit's counter) of one agent's placement. A box uses
 * draws 0 to 2 for x, y, z. */
enum { DRAW_RADIUS = 0, DRAW_ANGLE = 1, DRAW_AZIMUTH = 2, DRAW_HEADING = 3, DRAW_PITCH = 4 };

/* ---- Placement ---- */

/* Angle of direction (x, y, z) for an "inward" (sign -1) or "outward" (+1)
 * heading or pitch. The center itself has no direction: 0 there. */
static double radial_angle(const double off[3], double sign, int pitch)
{
    if (off[0] == 0.0 && off[1] == 0.0 && (!pitch || off[2] == 0.0)) return 0.0;
    return pitch ? atan2(sign * off[2], hypot(off[0], off[1])) : atan2(sign * off[1], sign * off[0]);
}

/* Fills the placed fields of def for agent `key` (its index in the scenario),
 * at `planned` (x, y) when the group's position comes from the plan.
 * A disc's radius is R sqrt(u) in 2D and R cbrt(u) in 3D so that density is
 * uniform over the area or volume; a 3D direction is uniform on the sphere
 * (z uniform in [-1, 1], azimuth uniform). */
static void place_agent(const shoal_scenario_t* s, const group_t* g, uint64_t key, const double* planned,
                        shoal_agent_def_t* def)
{
    const int d3 = s->dimensions == 3;
    double u[5], off[3] = {0.0, 0.0, 0.0};
    for (uint32_t k = 0; k < 5; k++) u[k] = rng_unit(s->seed, key, k, PLACEMENT_STREAM);

    if (planned != NULL) { /* a position of the plan (scenario_spawn.c): 2D */
        off[0] = planned[0] - g->center[0];
        off[1] = planned[1] - g->center[1];
    } else if (g->shape == SHAPE_DISC || g->shape == SHAPE_RING) {
        int disc = g->shape == SHAPE_DISC;
        if (d3) {
            double r = g->radius * (disc ? cbrt(u[DRAW_RADIUS]) : 1.0);
            double z = 1.0 - 2.0 * u[DRAW_ANGLE], phi = 2.0 * PI * u[DRAW_AZIMUTH];
            double rho = sqrt(fmax(0.0, 1.0 - z * z));
            off[0] = r * rho * cos(phi);
            off[1] = r * rho * sin(phi);
            off[2] = r * z;
        } else {
            double r = g->radius * (disc ? sqrt(u[DRAW_RADIUS]) : 1.0);
            double a = 2.0 * PI * u[DRAW_ANGLE];
            off[0] = r * cos(a);
            off[1] = r * sin(a);
        }
    } else if (g->shape == SHAPE_BOX) {
        for (int k = 0; k < (d3 ? 3 : 2); k++) off[k] = (u[k] - 0.5) * g->size[k];
    }

    double heading = g->heading, pitch = 0.0;
    if (g->heading_mode == DIR_RANDOM) heading = 2.0 * PI * u[DRAW_HEADING] - PI;
    if (g->heading_mode >= DIR_INWARD)
        heading = radial_angle(off, g->heading_mode == DIR_INWARD ? -1.0 : 1.0, 0);
    if (d3) {
        pitch = g->pitch;
        if (g->pitch_mode == DIR_RANDOM) pitch = (u[DRAW_PITCH] - 0.5) * (PI / 2.0);
        if (g->pitch_mode >= DIR_INWARD)
            pitch = radial_angle(off, g->pitch_mode == DIR_INWARD ? -1.0 : 1.0, 1);
    }
    const double forward[3] = {cos(pitch) * cos(heading), cos(pitch) * sin(heading), sin(pitch)};

    for (int k = 0; k < 3; k++) {
        def->position[k] = (float)(g->center[k] + off[k]);
        def->velocity[k] = g->speed > 0.0f ? (float)(g->speed * forward[k]) : 0.0f; /* no -0 */
        /* The antipode: the spawn position reflected through the center. */
        def->target[k] = g->target_antipode ? (float)(g->center[k] - off[k])
                         : g->target_offset ? def->position[k] + g->target[k]
                                            : g->target[k];
        def->threat[k] = g->threat[k];
    }
    def->heading = (float)heading;
    def->pitch = (float)pitch;
}

/* The handle of the agent `ref` names, from the handles added so far: groups
 * are added in file order, so group j's agents follow the earlier groups'. */
static shoal_agent_t ref_handle(const shoal_scenario_t* s, const shoal_agent_t* added, agent_ref_t ref)
{
    const shoal_agent_t none = {0, 0, 0};
    if (ref.group < 0) return none;
    int32_t first = 0;
    for (int32_t j = 0; j < ref.group; j++) first += s->groups[j].count;
    return added[first + ref.index];
}

/* ---- Adding ---- */

/* What one populate has added so far, so that a failure can take exactly
 * that away again: handles in the order added, and obstacle ids. */
typedef struct added_t {
    shoal_agent_t* agents;
    int32_t* obstacles;
    int32_t agent_count, obstacle_count;
    float* placement;   /* add_group_bulk's arrays */
    double* plan;       /* x, y of every agent when spawn_needs_plan, else NULL */
    int32_t* nav_goals; /* the world's id of each of the scenario's nav goals */
    int32_t* journeys;  /* and of each of its journeys */
} added_t;

/* A group's agents in one shoal_agents_add: each one's placement (position,
 * velocity, target, heading, pitch) in arrays, the rest from `def`. The
 * arrays are `block`: 11 floats per agent of the largest group. */
static shoal_status_t add_group_bulk(const shoal_scenario_t* scenario, const group_t* g, uint64_t key,
                                     const double* plan, shoal_world_t* world, shoal_agent_def_t* def,
                                     shoal_agent_t* out, float* block)
{
    size_t n = (size_t)g->count;
    float *pos = block, *vel = block + 3 * n, *tgt = block + 6 * n, *head = block + 9 * n,
          *pitch = block + 10 * n;
    for (size_t i = 0; i < n; ++i) {
        place_agent(scenario, g, key + i, plan != NULL ? plan + 2 * (key + i) : NULL, def);
        memcpy(pos + 3 * i, def->position, 3 * sizeof(float));
        memcpy(vel + 3 * i, def->velocity, 3 * sizeof(float));
        memcpy(tgt + 3 * i, def->target, 3 * sizeof(float));
        head[i] = def->heading;
        pitch[i] = def->pitch;
    }
    shoal_agent_arrays_t arrays = {
        .positions = pos, .velocities = vel, .headings = head, .targets = tgt, .pitches = pitch};
    return shoal_agents_add(world, def, &arrays, g->count, out);
}

/* The navigation grid, its goals and then its journeys, in file order
 * (a journey's stages name goals by the scenario's index: the world's ids
 * go in). The rollback forgets them (world_rollback). */
static shoal_status_t add_nav(const shoal_scenario_t* scenario, shoal_world_t* world, added_t* added)
{
    shoal_status_t status = SHOAL_OK;
    if (scenario->has_nav) status = shoal_world_set_nav(world, &scenario->nav);
    for (int32_t i = 0; i < scenario->nav_goal_count && status == SHOAL_OK; i++)
        status = shoal_world_add_nav_goal(world, &scenario->nav_goals[i].goal, &added->nav_goals[i]);
    for (int32_t i = 0; i < scenario->nav_zone_count && status == SHOAL_OK; i++)
        status = shoal_world_add_nav_zone(world, &scenario->nav_zones[i], NULL);
    for (int32_t i = 0; i < scenario->journey_count && status == SHOAL_OK; i++) {
        shoal_journey_t j = scenario->journeys[i].journey;
        for (int32_t k = 0; k < j.count; k++) j.stages[k].goal = added->nav_goals[j.stages[k].goal];
        status = shoal_world_add_journey(world, &j, &added->journeys[i]);
    }
    return status;
}

/* Whether a group of the scenario gives the navmesh behavior a weight. */
static int uses_navmesh(const shoal_scenario_t* scenario)
{
    for (int32_t gi = 0; gi < scenario->group_count; gi++)
        if (scenario->groups[gi].weights[SHOAL_BEHAVIOR_NAVMESH] > 0.0f) return 1;
    return 0;
}

/* Adds the obstacles, walls, nav goals and navmesh parameters, then group
 * by group its route (agents name it), its agents and its formation,
 * through the public API, recording into `added` what it added; last, when
 * the scenario has nav goals, builds the grid and solves their fields
 * (shoal_world_nav_update), and when agents navigate by mesh, bakes it
 * (shoal_world_navmesh_update), so that a goal with no walkable cell, a
 * grid over its memory limit or a floor too large for Recast fails here
 * rather than at the first step. Stops at the first failure, whose message
 * the world holds. */
static shoal_status_t add_scenario(const shoal_scenario_t* scenario, shoal_world_t* world, added_t* added)
{
    shoal_status_t status = SHOAL_OK;
    for (int32_t i = 0; i < scenario->obstacle_count && status == SHOAL_OK; i++) {
        const obstacle_t* o = &scenario->obstacles[i];
        status =
            shoal_world_add_obstacle(world, o->center, o->radius, &added->obstacles[added->obstacle_count]);
        added->obstacle_count += status == SHOAL_OK;
    }
    /* Walls: the rollback forgets them (world_rollback). */
    for (int32_t i = 0; i < scenario->wall_count && status == SHOAL_OK; i++) {
        const wall_t* wl = &scenario->walls[i];
        status = shoal_world_add_wall(world, wl->points, wl->count, wl->closed, NULL);
    }
    if (status == SHOAL_OK) status = add_nav(scenario, world, added);
    /* The mesh's parameters before the agents that plan on it; the
     * rollback restores the world's own (world_rollback). Without Recast
     * and Detour the world refuses them, and a navmesh agent, saying so. */
    if (status == SHOAL_OK && scenario->has_navmesh)
        status = shoal_world_set_navmesh(world, &scenario->navmesh);
    /* The rollback forgets the lines and areas (world_rollback). */
    if (status == SHOAL_OK) status = scenario_add_measure(scenario, world);

    uint64_t key = 0;
    for (int32_t gi = 0; gi < scenario->group_count && status == SHOAL_OK; gi++) {
        const group_t* g = &scenario->groups[gi];
        int32_t route = -1;
        if (g->route_length > 0) status = shoal_world_add_route(world, g->route, g->route_length, &route);
        if (status != SHOAL_OK) break;
        shoal_agent_t* members = added->agents + added->agent_count;
        shoal_agent_def_t def = shoal_agent_default_def();
        def.vehicle = g->vehicle;
        def.control = g->control;
        memcpy(def.weights, g->weights, sizeof def.weights);
        def.arrive_gain = g->arrive_gain;
        def.depart_gain = g->depart_gain;
        def.neighbors = g->neighbors;
        def.wander = g->wander;
        def.pursuit = g->pursuit;
        def.pursuit.target = ref_handle(scenario, added->agents, g->pursuit_target);
        def.follow = g->follow;
        def.follow.leader = ref_handle(scenario, added->agents, g->leader);
        def.avoid = g->avoid;
        def.dseek = g->dseek;
        def.crowd = g->crowd;
        def.planner = g->planner;
        def.planner.goal_agent = ref_handle(scenario, added->agents, g->planner_target);
        def.contacts = g->contacts;
        def.nav = g->nav;
        def.navmesh = g->navmesh;
        def.ground = g->ground;
        if (g->nav.goal >= 0) def.nav.goal = added->nav_goals[g->nav.goal];
        if (g->nav.journey >= 0) def.nav.journey = added->journeys[g->nav.journey];
        if (route >= 0) def.dseek.route = route;
        def.group = (uint32_t)gi;
        const double* plan = spawn_planned(g) ? added->plan : NULL;
        if (g->follow_previous || g->has_distributions) {
            /* "previous": each agent follows the one added just before, in
             * this group; "distributions": each agent draws its values.
             * One definition each. */
            for (int32_t i = 0; i < g->count && status == SHOAL_OK; i++, key++) {
                if (g->follow_previous)
                    def.follow.leader = i == 0 ? ref_handle(scenario, added->agents, g->first_leader)
                                               : added->agents[added->agent_count - 1];
                spawn_agent_values(scenario, gi, i, &def.vehicle, &def.crowd);
                spawn_agent_start_delay(scenario, gi, i, &def.nav);
                place_agent(scenario, g, key, plan != NULL ? plan + 2 * key : NULL, &def);
                status = shoal_agent_add(world, &def, &added->agents[added->agent_count]);
                added->agent_count += status == SHOAL_OK;
            }
        } else {
            /* One definition and the placed values per agent, in one bulk
             * add (the same world as one add after another). */
            status = add_group_bulk(scenario, g, key, plan, world, &def, members, added->placement);
            if (status == SHOAL_OK) added->agent_count += g->count;
            key += (uint64_t)g->count;
        }
        if (status == SHOAL_OK && g->formation_offsets)
            status = shoal_formation_arrive(world, members, g->count, (const float(*)[3])g->formation_offsets,
                                            &g->formation_anchor);
    }
    if (status == SHOAL_OK && scenario->nav_goal_count > 0) status = shoal_world_nav_update(world);
    if (status == SHOAL_OK && uses_navmesh(scenario)) status = shoal_world_navmesh_update(world);
    return status;
}

/* ---- The one place this file reaches into the world ----
 *
 * A populate adds everything or leaves the world exactly as it found it: not
 * only its agents, obstacles and routes, but the handles, obstacle ids and
 * route ids that later adds will get, and so the state hash. The public API
 * can remove agents and obstacles, but cannot give back a slot's generation,
 * an obstacle id or a route, so this function takes the core's mark before
 * the adds (world_mark: the slots and each module's extent) and, on
 * failure, removes the obstacles it added and rolls the world back to the
 * mark (world_rollback).
 *
 * It also does the three other things the public API has no call for:
 * refusing to run inside a step (adds would be queued, and could not be
 * undone), taking its scratch from the world's allocator (a host that gives
 * the world its memory gives it for this too), and recording errors on the
 * world. Each group's add (shoal_agents_add) is all or nothing by itself;
 * a populate of several groups, routes and obstacles still needs this
 * rewind when a later one fails.
 *
 * world.h is included here, not at the top, so that the compiler holds the
 * code above to the public API.
 */
#include "ecs/world.h"

static shoal_status_t populate_all_or_nothing(const shoal_scenario_t* scenario, shoal_world_t* world)
{
    if (shoal_world_dimensions(world) != scenario->dimensions)
        return world_fail(world, SHOAL_ERR_INVALID_ARGUMENT,
                          "scenario_populate: scenario '%s' is %dD but the world is %dD", scenario->name,
                          (int)scenario->dimensions, (int)shoal_world_dimensions(world));

    if (world->in_step)
        return world_fail(world, SHOAL_ERR_BUSY, "scenario_populate: called from inside a step");
    size_t n = scenario->agent_count > 0 ? (size_t)scenario->agent_count : 1;
    size_t m = scenario->obstacle_count > 0 ? (size_t)scenario->obstacle_count : 1;
    size_t largest = 1;
    for (int32_t gi = 0; gi < scenario->group_count; gi++)
        if ((size_t)scenario->groups[gi].count > largest) largest = (size_t)scenario->groups[gi].count;
    size_t p = largest * 11 * sizeof(float);
    size_t q = (scenario->nav_goal_count > 0 ? (size_t)scenario->nav_goal_count : 1) * sizeof(int32_t);
    size_t r = (scenario->journey_count > 0 ? (size_t)scenario->journey_count : 1) * sizeof(int32_t);
    added_t added = {.agents = mem_alloc(&world->alloc, n * sizeof *added.agents),
                     .obstacles = mem_alloc(&world->alloc, m * sizeof *added.obstacles),
                     .placement = mem_alloc(&world->alloc, p),
                     .nav_goals = mem_alloc(&world->alloc, q),
                     .journeys = mem_alloc(&world->alloc, r)};
    if (added.agents == NULL || added.obstacles == NULL || added.placement == NULL ||
        added.nav_goals == NULL || added.journeys == NULL) {
        mem_free(&world->alloc, added.agents, n * sizeof *added.agents);
        mem_free(&world->alloc, added.obstacles, m * sizeof *added.obstacles);
        mem_free(&world->alloc, added.placement, p);
        mem_free(&world->alloc, added.nav_goals, q);
        mem_free(&world->alloc, added.journeys, r);
        return world_fail(world, SHOAL_ERR_OUT_OF_MEMORY, "scenario_populate: out of memory for %zu handles",
                          n + m);
    }
    /* Positions that need a plan first: every agent's, those of the groups
     * placed as before included (a spacing keeps clear of them), before
     * anything is added, so that a group that does not fit changes nothing. */
    size_t xy = spawn_needs_plan(scenario) ? n * 2 * sizeof(double) : 0;
    shoal_status_t status = SHOAL_OK;
    if (xy > 0 && (added.plan = mem_alloc(&world->alloc, xy)) == NULL)
        status = world_fail(world, SHOAL_ERR_OUT_OF_MEMORY,
                            "scenario_populate: out of memory for placing %zu agents", n);
    if (added.plan != NULL) {
        uint64_t key = 0;
        for (int32_t gi = 0; gi < scenario->group_count; gi++)
            for (int32_t i = 0; i < scenario->groups[gi].count; i++, key++)
                if (!spawn_planned(&scenario->groups[gi])) {
                    shoal_agent_def_t def = shoal_agent_default_def();
                    place_agent(scenario, &scenario->groups[gi], key, NULL, &def);
                    added.plan[2 * key] = def.position[0];
                    added.plan[2 * key + 1] = def.position[1];
                }
        char msg[512];
        status = spawn_plan(scenario, &world->alloc, added.plan, msg, sizeof msg);
        if (status != SHOAL_OK) status = world_fail(world, status, "scenario_populate: %s", msg);
    }
    world_mark_t mark;
    world_mark(world, &mark);

    if (status == SHOAL_OK) status = add_scenario(scenario, world, &added);
    /* Undo newest first, exactly: the handles, obstacle ids and routes to
     * come are those the world would have given without this call. The
     * world's last error still describes the add that failed: undoing does
     * not fail. */
    if (status != SHOAL_OK) {
        while (added.obstacle_count > 0)
            shoal_world_remove_obstacle(world, added.obstacles[--added.obstacle_count]);
        world_rollback(world, &mark, added.agents, added.agent_count);
    }
    mem_free(&world->alloc, added.agents, n * sizeof *added.agents);
    mem_free(&world->alloc, added.obstacles, m * sizeof *added.obstacles);
    mem_free(&world->alloc, added.placement, p);
    mem_free(&world->alloc, added.nav_goals, q);
    mem_free(&world->alloc, added.journeys, r);
    mem_free(&world->alloc, added.plan, xy);
    return status;
}

shoal_status_t shoal_scenario_populate(const shoal_scenario_t* scenario, shoal_world_t* world)
{
    if (scenario == NULL || world == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    return populate_all_or_nothing(scenario, world);
}

/* The lines and areas alone, all or nothing as populate is. */
shoal_status_t shoal_scenario_add_measures(const shoal_scenario_t* scenario, shoal_world_t* world)
{
    if (scenario == NULL || world == NULL) return SHOAL_ERR_INVALID_ARGUMENT;
    world_mark_t mark;
    world_mark(world, &mark);
    shoal_status_t status = scenario_add_measure(scenario, world);
    if (status != SHOAL_OK) world_rollback(world, &mark, NULL, 0);
    return status;
}
