/* Directed seek's module-wide data: the world's waypoint routes (dseek.c). */
#ifndef SHOAL_SYSTEMS_DSEEK_H
#define SHOAL_SYSTEMS_DSEEK_H

#include "systems/components.h"

/* Route r is route_points[routes[r][0] .. routes[r][0] + routes[r][1]). */
typedef struct route_set_t {
    shoal_waypoint_t* route_points;
    int32_t route_point_count;
    int32_t route_point_capacity;
    int32_t (*routes)[2];
    int32_t route_count;
    int32_t route_capacity;
} route_set_t;

static inline route_set_t* routes_of(const world_t* w) { return (route_set_t*)w->module_data[MOD_DSEEK]; }

extern const module_t dseek_module;

#endif /* SHOAL_SYSTEMS_DSEEK_H */
