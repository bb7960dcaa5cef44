/* The built-in modules and their components, in registry order. Each
 * module's column enum is in its own header (modules/<name>/<name>.h).
 *
 * An agent has a component exactly when one of its behaviors that needs it
 * has a nonzero weight; the component's table holds that behavior's
 * parameters (and state, for wander). Column 0 of every component is the
 * owning slot (uint32).
 *
 * Column 1 is the owning agent's current row in the agent table (int32),
 * kept up to date by the world through removals and reorders, so systems
 * reach agent columns without a random lookup in the slot table.
 *
 * Component rows are kept in agent-row order after every reorder of the
 * agent table, so a system that walks a component densely also walks the
 * agent columns forward. */
#ifndef SHOAL_MODULES_REGISTRY_H
#define SHOAL_MODULES_REGISTRY_H

#include "ecs/world.h"

/* The built-in modules, in registry order (step.c): the order of their
 * components in w->comps, and of their module-wide data in the state hash
 * and in snapshots. */
enum module_id {
    /* No component, hash or snapshot section: its place changes no
     * component number, state hash or file. First, because its system is
     * the first of the step and every module after it may use the grid. */
    MOD_GRID = 0,  /* data: the spatial hash (grid_t, modules/grid/grid.h) */
    MOD_NEIGHBORS, /* component NEIGHBORS; data: the packs of its pass */
    MOD_WANDER,
    MOD_PURSUIT,
    MOD_FOLLOW,
    MOD_AVOID,
    MOD_OBSTACLES, /* no component; data: the world's obstacles (obstacles.h) */
    MOD_DSEEK,     /* data: routes */
    MOD_GROUND,    /* data: paths, terrain (ground_world_t) */
    MOD_PLANNER,   /* data: trim table, scene, search memory (planner_world_t) */
    MOD_WALLS,     /* no component; data: the world's walls (walls.h) */
    MOD_CROWD,     /* component CROWD; data: statistics (crowd_world_t) */
    MOD_CONTACT,   /* component CONTACT; data: the contact pass's scratch (contact_world_t) */
    MOD_NAV,       /* component NAV; data: goals, the walkable grid, fields (nav_world_t) */
    MOD_NAVMESH,   /* component NAVMESH; data: parameters, the baked mesh, queries (navmesh_world_t) */
    MOD_MEASURE,   /* no component, hash or snapshot section; data: lines, areas, results (measure_world_t) */
    MOD_COUNT_
};

enum component_id {
    COMP_NEIGHBORS = 0, /* separation, alignment, cohesion */
    COMP_WANDER,
    COMP_PURSUIT, /* pursue, evade */
    COMP_FOLLOW,
    COMP_AVOID,
    COMP_DSEEK,
    COMP_GROUND,  /* ground vehicles: an agent has it when ground.enabled */
    COMP_PLANNER, /* planner agents: an agent has it when planner.enabled */
    COMP_CROWD,   /* crowd agents: an agent has it when crowd.enabled */
    COMP_CONTACT, /* agents other than crowd agents that take part in contacts */
    COMP_NAV,     /* agents that navigate: an agent has it when NAVIGATE has weight */
    COMP_NAVMESH, /* agents on navmesh paths: an agent has it when NAVMESH has weight */
    COMP_COUNT_
};

#define COMP_F(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, float, (col))
#define COMP_U(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, uint32_t, (col))
#define COMP_I(w, comp, col) TABLE_COL(&(w)->comps[(comp)].table, int32_t, (col))

#endif /* SHOAL_MODULES_REGISTRY_H */
