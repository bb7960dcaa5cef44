/* Directed seek's module-wide data: the world's waypoint routes (dseek.c). */
#ifndef SHOAL_SYSTEMS_DSEEK_H
#define SHOAL_SYSTEMS_DSEEK_H

#include "systems/components.h"

/* What the decide system planned for one dseek row this step, for the
 * tracking system of the control stage: not state (written and read within
 * one step, never hashed or saved). */
typedef struct dseek_track_t {
    float turn_rate[3]; /* rad/s, world frame: the turn rate fed forward (2D: [2]) */
    float steer[3];     /* unit: the direction directed seek asked for */
    float min_gain;     /* 1/s: the least turn rate per radian of heading error */
    int32_t active;     /* 0: the row had no waypoint this step; control's output stands */
} dseek_track_t;

/* Route r is route_points[routes[r][0] .. routes[r][0] + routes[r][1]).
 * track: one entry per dseek row (track_capacity of them). */
typedef struct route_set_t {
    shoal_waypoint_t* route_points;
    int32_t route_point_count;
    int32_t route_point_capacity;
    int32_t (*routes)[2];
    int32_t route_count;
    int32_t route_capacity;
    dseek_track_t* track;
    int32_t track_capacity;
    int32_t planned_rows;  /* rows planned by the last run of dseek (agents that go live
                              later in the step have no plan yet) */
    uint64_t planned_step; /* the step it ran in (the user may disable it) */
} route_set_t;

static inline route_set_t* routes_of(const world_t* w) { return (route_set_t*)w->module_data[MOD_DSEEK]; }

extern const module_t dseek_module;

#endif /* SHOAL_SYSTEMS_DSEEK_H */
