/* The obstacle-avoidance grid: agents with the AVOID behavior and one other
 * (seek, arrive, a flock, directed seek) travel past one obstacle placed
 * off their straight path, over a grid of lateral offsets, vehicle speeds
 * and obstacle radii, with the normal and with the tangential field. Each
 * run reports its least clearance |p - c_o| - (r_o + r_B) over every step
 * and agent (below 0: the agent's body entered the obstacle) and whether
 * every agent got past the obstacle.
 *
 * `shoal experiment avoid` prints the grid's figures and
 * tests/test_avoid_grid.c asserts them; both call this file, which uses the
 * public API only. */
#ifndef SHOAL_CLI_AVOID_GRID_H
#define SHOAL_CLI_AVOID_GRID_H

#include "shoal/shoal.h"

typedef enum avoid_grid_behavior_t {
    AVOID_GRID_SEEK,       /* SEEK 1: a target 15 m behind the obstacle */
    AVOID_GRID_ARRIVE,     /* ARRIVE 1 (K_arrival 1) at a target 3 m behind the obstacle */
    AVOID_GRID_FLOCK,      /* five agents in a V, SEPARATE, ALIGN, COHERE 1 each, no target: a
                        * flock the obstacle turns keeps its new course, so it need not get past */
    AVOID_GRID_FLOCK_SEEK, /* the same flock with SEEK 0.5 toward the target: a flock going somewhere */
    AVOID_GRID_DSEEK,      /* DSEEK 1: that target as a waypoint, heading +x */
    AVOID_GRID_BEHAVIORS
} avoid_grid_behavior_t;

#define AVOID_GRID_OFFSETS 7
#define AVOID_GRID_SPEEDS 3
#define AVOID_GRID_RADII 4
#define AVOID_GRID_RUNS (AVOID_GRID_OFFSETS * AVOID_GRID_SPEEDS * AVOID_GRID_RADII)

/* Lateral offsets of the obstacle's center from the straight path, as
 * shares of r_o + r_B (0: head-on; 0.95: a graze). */
extern const float avoid_grid_offsets[AVOID_GRID_OFFSETS];
/* Vehicle max speeds, m/s; each run starts at that speed along +x. */
extern const float avoid_grid_speeds[AVOID_GRID_SPEEDS];
/* Obstacle radii r_o, m. */
extern const float avoid_grid_radii[AVOID_GRID_RADII];

/* Short lower-case name ("seek", "arrive", "flock", "dseek"). */
const char* avoid_grid_behavior_name(avoid_grid_behavior_t b);

/* One run of the grid. */
typedef struct avoid_grid_case_t {
    int dims; /* 2 or 3 */
    avoid_grid_behavior_t behavior;
    int offset, speed, radius; /* indices into the tables above */
    shoal_avoid_t avoid;       /* AVOID's parameters (start from shoal_avoid_default) */
} avoid_grid_case_t;

typedef struct avoid_grid_outcome_t {
    float clearance; /* m: least |p - c_o| - (r_o + r_B) over steps and agents */
    int entered;     /* clearance < 0 */
    int passed;      /* every agent got beyond the obstacle (x > c_x + r_o + r_B) at some step */
} avoid_grid_outcome_t;

/* Runs one case (one world, one thread). Returns SHOAL_OK, or the status of
 * the library call that failed. */
shoal_status_t avoid_grid_run(const avoid_grid_case_t* c, avoid_grid_outcome_t* out);

/* One behavior and field over the whole grid. */
typedef struct avoid_grid_summary_t {
    int runs;
    int entries;     /* runs with an entry */
    int not_passed;  /* runs in which some agent did not get past */
    float clearance; /* m: least clearance of all runs */
} avoid_grid_summary_t;

/* Every offset, speed and radius of one behavior, dims and avoid setting. */
shoal_status_t avoid_grid_summarize(int dims, avoid_grid_behavior_t behavior, const shoal_avoid_t* avoid,
                                    avoid_grid_summary_t* out);

#endif /* SHOAL_CLI_AVOID_GRID_H */
