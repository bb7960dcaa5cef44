/* A module outside the built-in registry, as a contributor would add one
 * (docs/modules.md): the odometer. An agent whose user value has
 * ODOMETER_TAG gets its component, one state column, the distance it has
 * moved; the module's data is the distance of all of them together and
 * the steps counted, hashed and saved in a snapshot section of its own.
 *
 * Everything of it is in this folder; what registers it is one module row
 * and one system row, appended to the built-in registry's (odometer_registry). */
#ifndef SHOAL_TESTS_TOY_ODOMETER_H
#define SHOAL_TESTS_TOY_ODOMETER_H

#include "ecs/world.h"

/* The user value bit that asks for an odometer. */
#define ODOMETER_TAG (1ull << 62)

/* Its columns: the two every component has, then its own. */
enum { ODO_SLOT = 0, ODO_ROW, ODO_DISTANCE, ODO_COUNT_ };

/* Its module-wide data. */
typedef struct odometer_world_t {
    double total;  /* m, over every agent with an odometer */
    int64_t steps; /* steps the system ran with rows */
} odometer_world_t;

extern const module_t odometer_module;

/* The built-in registry with the odometer's module row and system row
 * after the built-in ones. `declared`: 0 gives a system row that declares
 * none of what it writes (for the write check's test). */
const registry_t* odometer_registry(int declared);

/* The odometer's data in world w, its component's index there, and the
 * distance of the agent of handle id (-1 when it has no odometer). */
const odometer_world_t* odometer_of(const world_t* w);
int32_t odometer_component(const world_t* w);
double odometer_distance(const world_t* w, shoal_agent_t id);

#endif /* SHOAL_TESTS_TOY_ODOMETER_H */
