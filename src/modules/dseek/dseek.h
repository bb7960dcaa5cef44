/* Directed seek's module-wide data: the world's waypoint routes (dseek.c). */
#ifndef SHOAL_SYSTEMS_DSEEK_H
#define SHOAL_SYSTEMS_DSEEK_H

#include "modules/registry.h"

/* dseek: DS_ROUTE, DS_INDEX and DS_ARC are int32. DS_ARC (since snapshot
 * version 6): the waypoint circle the agent flies its final arc on (+1 or
 * -1, its orientation; dseek_follow_circle_2d/3d), 0 while it plans. */
enum {
    DS_SLOT = 0,
    DS_ROW,
    DS_WEIGHT,
    DS_WP_X,
    DS_WP_Y,
    DS_WP_Z,
    DS_DIR_X,
    DS_DIR_Y,
    DS_DIR_Z,
    DS_SPEED,
    DS_ROUTE,
    DS_INDEX,
    DS_R_MIN,
    DS_REACH,
    DS_ARC,
    DS_COUNT_
};

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

int64_t dseek_run(world_t* w, float dt, void* ctx);
int64_t dseek_track_run(world_t* w, float dt, void* ctx);
/* Nothing to do this step: no directed-seek rows. */
int dseek_track_idle(const world_t* w);

#endif /* SHOAL_SYSTEMS_DSEEK_H */
