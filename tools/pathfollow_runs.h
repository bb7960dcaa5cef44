/* Runs of the path-following experiment (issue 5): vehicles driving the
 * courses of courses.h through a shoal world, the per-run metrics of the
 * paper's Table I, the black-box tuner and the soak run. */
#ifndef SHOAL_TOOLS_PATHFOLLOW_RUNS_H
#define SHOAL_TOOLS_PATHFOLLOW_RUNS_H

#include <stdio.h>

#include "shoal/shoal.h"
#include "tools/courses.h"

#define PF_RUN_DT (1.0f / 30.0f)   /* s: the game's 30 Hz frame */
#define PF_RUN_TIME_LIMIT 240.0    /* s: a run not finished by then is incomplete */

/* The metrics of one vehicle on one course. */
typedef struct run_result {
    int completed;     /* reached the end before the time limit */
    int stuck_events;  /* stuck events (each starts a recovery or a teleport) */
    int teleports;     /* of which ended in a teleport */
    double time;       /* s to complete (the time limit when incomplete) */
    double cte_mean;   /* m, mean over frames */
    double inside_pct; /* % of frames inside the corridor */
    double speed_mean; /* m/s: distance driven / time */
    double distance;   /* m driven */
    double stuck_time; /* s spent in recovery manoeuvres */
} run_result;

/* A 3D world (one thread) with course c's terrain and obstacles, no path
 * and no agents yet; NULL with a message in err on a library error. */
shoal_world_t* pf_course_world(const course_t* c, char* err, int err_size);

/* Drive `count` vehicles (each with its own vehicle and follower
 * parameters; follow[i].path is set here) over course c in one world, until
 * all are done or the time limit. When csv_paths[i] is not NULL, write that
 * vehicle's trajectory there as CSV. Returns 0, or -1 with a message in err
 * (a library error or a file that could not be written). */
int pf_run_course(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                  const shoal_path_follow_t* follow, const char* const* csv_paths,
                  run_result* out, char* err, int err_size);

/* The same with an observer: `observe` (optional) sees every vehicle's
 * state and ground status after every frame until it completes. */
typedef void pf_observe_fn(void* ctx, int vehicle, double t, const shoal_agent_state_t* s,
                           const shoal_ground_status_t* g);
int pf_run_course_observed(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                           const shoal_path_follow_t* follow, const char* const* csv_paths,
                           pf_observe_fn* observe, void* ctx, run_result* out, char* err,
                           int err_size);

/* The parameters the tuner searches, as a vector. */
enum { PF_TUNE_DIM = 5 };
void pf_tune_apply(const double x[PF_TUNE_DIM], shoal_path_follow_t* f);
void pf_tune_extract(const shoal_path_follow_t* f, double x[PF_TUNE_DIM]);

/* Nelder-Mead over the PF_TUNE_DIM parameters for one vehicle on the tuning
 * courses, starting from `start`; at most max_evals evaluations of the cost
 * (total time, with penalties for stuck events, teleports, unfinished runs
 * and time outside the corridor). Writes the best parameters to `best` and
 * returns the number of evaluations, or -1 on error. */
int pf_tune_vehicle(const shoal_ground_vehicle_t* vehicle, const shoal_path_follow_t* start,
                    int max_evals, shoal_path_follow_t* best, double* best_cost, char* err,
                    int err_size);

/* The soak run: 64 vehicles (the six presets in turn) drive random routes
 * through the town for `seconds`, each vehicle taking a new route when it
 * finishes one. Seeds differ per trial. */
typedef struct soak_result {
    double drive_seconds; /* summed over vehicles, recoveries excluded */
    int stuck_events;
    int teleports;
    int routes_completed;
    int stuck_by_preset[6]; /* the presets in gv order: buggy, car, apc, truck, tank, hovercraft */
} soak_result;
int pf_soak(shoal_follower_t follower, const shoal_path_follow_t* per_vehicle, int vehicles,
            double seconds, uint64_t seed, soak_result* out, char* err, int err_size);

#endif
