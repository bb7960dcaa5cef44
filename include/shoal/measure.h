/* shoal/measure.h: measurement lines and areas, written with the results
 * (docs/measure.md is the reference: what each figure means, its formula,
 * unit and cost).
 *
 * A line is a segment that counts the agents whose path in a step crosses
 * it, each crossing with its direction, time and agent: the flow through a
 * door or across a corridor. An area is a polygon sampled every `every`
 * steps: the agents inside, their classic density N / |A|, their mean
 * speed, and the Voronoi density and speed of Steffen and Seyfried
 * ("Methods for measuring pedestrian density, flow, speed and direction
 * with minimal scatter", 2010), the figures of fundamental diagrams.
 *
 * Measurements are observations: their systems run in the observe stage,
 * read positions and velocities and change nothing else. They are not
 * state: not in the state hash, not saved in snapshots (a resumed run's
 * measurements start at the resume, with the lines and areas its caller
 * adds again). The results are the same bits for any thread count.
 *
 * 2D worlds only (INVALID_ARGUMENT in 3D). Every call below refuses bad
 * input with a message naming what and where, and leaves the world as it
 * was; adds may not be called inside a step (BUSY). */
#ifndef SHOAL_INCLUDE_MEASURE_H
#define SHOAL_INCLUDE_MEASURE_H

#include <stdint.h>

#include "shoal/export.h"
#include "shoal/id.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHOAL_MEASURE_NAME_MAX 32    /* bytes of a name, its NUL included */
#define SHOAL_MEASURE_AREA_POINTS 16 /* the most corners of an area */
#define SHOAL_MAX_MEASURES 1024      /* the most lines, and the most areas, of a world */

/* A measurement line: the segment from -> to. A crossing is positive when
 * the agent goes from the left of from -> to to its right (for a line
 * drawn toward +y, an agent walking toward +x), negative the other way. */
typedef struct shoal_measure_line_t {
    const char* name; /* copied (at most SHOAL_MEASURE_NAME_MAX - 1 bytes); NULL: "line<id>".
                       * Default NULL */
    float from[2];    /* m */
    float to[2];      /* m; not equal to from */
    int64_t group;    /* count only agents of this group (shoal_agent_def_t.group, 0 to
                       * 2^32 - 1); -1: every agent. Default -1 */
    float window;     /* s, > 0: the width of the flow series' windows
                       * (shoal_world_measure_line_flow). Default 1 */
} shoal_measure_line_t;

SHOAL_API shoal_measure_line_t shoal_measure_line_default(void);

/* A measurement area: the simple polygon points[0 .. count), either
 * orientation. */
typedef struct shoal_measure_area_t {
    const char* name;                           /* as a line's; NULL: "area<id>". Default NULL */
    int32_t count;                              /* corners, 3 to SHOAL_MEASURE_AREA_POINTS. Default 0 */
    float points[SHOAL_MEASURE_AREA_POINTS][2]; /* m */
    int32_t every;     /* steps, 1 to 1000000: sampled at the end of every step whose number
                          * (shoal_world_step_count after it) is a multiple of this. Default 1 */
    int64_t group;     /* count only agents of this group; -1: every agent. Default -1.
                          * Voronoi cells are made from every agent whatever the group */
    float cell_radius; /* m, > 0: each agent's Voronoi cell is cut to the regular 32-gon of
                          * this circumradius round it, so that an agent with no neighbor on a
                          * side has a bounded cell, and by the walls it faces (the foot of its
                          * perpendicular inside the segment); a neighbor behind a wall does
                          * not cut it. Default 2 */
} shoal_measure_area_t;

SHOAL_API shoal_measure_area_t shoal_measure_area_default(void);

/* Add a line or an area; *out_id (optional) is its id: lines are numbered
 * 0, 1, 2, ... in the order added, areas likewise. A line counts from the
 * next step on, an area samples from the next step on. Refused (world
 * unchanged, INVALID_ARGUMENT): a 3D world, points not finite or beyond
 * 1e18 m, a line of zero length, an area of fewer than 3 or more than 16
 * corners or of zero area, a group out of range, a window or cell radius
 * not > 0, `every` out of range, a name too long; CAPACITY past
 * SHOAL_MAX_MEASURES; BUSY inside a step. */
SHOAL_API shoal_status_t shoal_world_add_measure_line(shoal_world_t* world, const shoal_measure_line_t* line,
                                                      int32_t* out_id);
SHOAL_API shoal_status_t shoal_world_add_measure_area(shoal_world_t* world, const shoal_measure_area_t* area,
                                                      int32_t* out_id);
SHOAL_API int32_t shoal_world_measure_line_count(const shoal_world_t* world);
SHOAL_API int32_t shoal_world_measure_area_count(const shoal_world_t* world);

/* One crossing of a line. */
typedef struct shoal_measure_crossing_t {
    double time;         /* s, world time: the step's start plus the fraction of the step at
                          * which the agent's straight path met the line */
    uint64_t step;       /* the step's number (shoal_world_step_count after it) */
    shoal_agent_t agent; /* who crossed (its handle may be stale by now) */
    int32_t direction;   /* +1 or -1 (shoal_measure_line_t) */
    int32_t reserved_;
} shoal_measure_crossing_t;

/* A line's figures. */
typedef struct shoal_measure_line_stats_t {
    char name[SHOAL_MEASURE_NAME_MAX];
    float from[2], to[2];
    int64_t group;
    float window;
    int64_t positive, negative; /* crossings each way */
    double first_time;          /* s, the first crossing's time; NaN with none */
    double last_time;           /* s, the last crossing's; NaN with none */
    double start_time;          /* s, world time when it started counting (the add) */
    double duration;            /* s, world time counted: now - start_time */
    double mean_flow;           /* 1/s, (positive + negative) / duration; 0 when duration is 0 */
} shoal_measure_line_stats_t;

SHOAL_API shoal_status_t shoal_world_measure_line_stats(const shoal_world_t* world, int32_t id,
                                                        shoal_measure_line_stats_t* out);
/* The line's crossings in the order they happened (time, then agent):
 * copies min(capacity, total) into out (which may be NULL with capacity 0)
 * and returns the total, or -1 for a bad id (error recorded). */
SHOAL_API int64_t shoal_world_measure_line_crossings(const shoal_world_t* world, int32_t id,
                                                     shoal_measure_crossing_t* out, int64_t capacity);
/* The flow over time: window k is [start_time + k window, start_time +
 * (k + 1) window), out[k] its crossings (both ways) divided by the
 * window, in 1/s. Windows up to the one that holds the present (the last
 * is partial: divided by the whole window all the same). Copies
 * min(capacity, total) and returns the total, -1 for a bad id. */
SHOAL_API int64_t shoal_world_measure_line_flow(const shoal_world_t* world, int32_t id, double* out,
                                                int64_t capacity);

/* One sample of an area, at the end of a step. */
typedef struct shoal_measure_sample_t {
    double time;           /* s, world time at the end of the step */
    uint64_t step;         /* shoal_world_step_count after the step */
    int32_t count;         /* agents inside (of the group) */
    float density;         /* classic density count / |A|, 1/m^2 */
    float voronoi_density; /* rho_V = sum_i |V_i n A| / (|V_i| |A|), 1/m^2 */
    float speed;           /* mean speed of the agents inside, m/s; 0 with none */
    float voronoi_speed;   /* v_V = sum_i |V_i n A| |v_i| / |A|, m/s */
    int32_t reserved_;
} shoal_measure_sample_t;

/* An area's figures, means of its samples whose time is in [t0, t1]. */
typedef struct shoal_measure_area_stats_t {
    char name[SHOAL_MEASURE_NAME_MAX];
    int32_t count; /* corners */
    int32_t every;
    int64_t group;
    float cell_radius;
    double area;     /* m^2, |A| */
    int64_t samples; /* samples in the window (all of them: `total_samples`) */
    int64_t total_samples;
    double mean_count;   /* means over the window's samples; 0 with none */
    double mean_density; /* 1/m^2 */
    double mean_voronoi_density;
    double mean_speed; /* m/s: the mean of the samples' speeds, samples with nobody inside
                          * left out */
    double mean_voronoi_speed;
} shoal_measure_area_stats_t;

/* Means over the samples taken at times in [t0, t1] (any t0 <= t1; -inf
 * and inf for all of them). */
SHOAL_API shoal_status_t shoal_world_measure_area_stats(const shoal_world_t* world, int32_t id, double t0,
                                                        double t1, shoal_measure_area_stats_t* out);
/* The area's samples in order: copies min(capacity, total), returns the
 * total, -1 for a bad id. */
SHOAL_API int64_t shoal_world_measure_area_samples(const shoal_world_t* world, int32_t id,
                                                   shoal_measure_sample_t* out, int64_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* SHOAL_INCLUDE_MEASURE_H */
