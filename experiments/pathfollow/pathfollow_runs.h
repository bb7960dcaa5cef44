/* Runs of the path-following experiment: vehicles driving the courses of
 * courses.h through a shoal world, the per-run metrics of Table I of de
 * Schaetzen and Sestini, "Efficient ground vehicle path following in game
 * AI", the black-box tuner and the soak run. */
#ifndef SHOAL_CLI_PATHFOLLOW_RUNS_H
#define SHOAL_CLI_PATHFOLLOW_RUNS_H

#include <stdio.h>

#include "shoal/shoal.h"
#include "experiments/pathfollow/courses.h"

#define PF_RUN_DT (1.0f / 30.0f) /* s: the game's 30 Hz frame */
#define PF_RUN_TIME_LIMIT 240.0  /* s: a run not finished by then is incomplete */

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
} run_result_t;

/* A 3D world (one thread) with course c's terrain and obstacles, no path
 * and no agents yet; NULL with a message in err on a library error. */
shoal_world_t* pf_course_world(const course_t* c, char* err, int err_size);

/* Drive `count` vehicles (each with its own vehicle and follower
 * parameters; follow[i].path is set here) over course c in one world, until
 * all are done or the time limit. When csv_paths[i] is not NULL, write that
 * vehicle's trajectory there as CSV. Returns 0, or -1 with a message in err
 * (a library error or a file that could not be written). */
int pf_run_course(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                  const shoal_path_follow_t* follow, const char* const* csv_paths, run_result_t* out,
                  char* err, int err_size);

/* A start perturbed from the course's nominal one (waypoint 0, facing
 * waypoint 1, at rest): moved `lateral` m to the left of the first segment
 * (negative: right), turned by `yaw` rad (counter-clockwise) and rolling
 * forward at `speed` m/s. */
typedef struct pf_start_t {
    float lateral, yaw, speed;
} pf_start_t;

/* The ranges of the Table I trials' starts, at spread 1: lateral offset
 * uniform in +-PF_TRIAL_LATERAL m, heading uniform in +-PF_TRIAL_YAW rad,
 * speed uniform in [0, PF_TRIAL_SPEED) m/s. */
#define PF_TRIAL_LATERAL 1.0f
#define PF_TRIAL_YAW 0.17453293f /* 10 degrees */
#define PF_TRIAL_SPEED 3.0f

/* The start of trial `trial` of `vehicle` on `course` (indices) from
 * `seed`: a pure function of its arguments (counter-based draws, ecs/rng.h),
 * so any trial can be rerun alone and every follower gets the same starts.
 * `spread` scales the three ranges (0: the nominal start). */
pf_start_t pf_trial_start(uint64_t seed, int vehicle, int course, int trial, float spread);

/* The path of trial `trial` on `course` (index) from `seed`: every
 * waypoint but the first and the last moved by a uniform draw in a disc of
 * radius `jitter` m, its z put back on the ground; the same for every
 * vehicle and follower of that trial (a pure function, as above). Writes
 * c->count xyz triples to xyz (jitter 0: the course's own path). */
void pf_trial_path(const course_t* c, uint64_t seed, int course, int trial, float jitter, float* xyz);

/* pf_run_course with each vehicle i starting from starts[i] (NULL: every
 * vehicle from the nominal start). */
int pf_run_course_from(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                       const shoal_path_follow_t* follow, const pf_start_t* starts,
                       const char* const* csv_paths, run_result_t* out, char* err, int err_size);

/* The same with an observer: `observe` (optional) sees every vehicle's
 * state and ground status after every frame until it completes. */
typedef void pf_observe_fn(void* ctx, int vehicle, double t, const shoal_agent_state_t* s,
                           const shoal_ground_status_t* g);
int pf_run_course_observed(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                           const shoal_path_follow_t* follow, const char* const* csv_paths,
                           pf_observe_fn* observe, void* ctx, run_result_t* out, char* err, int err_size);
int pf_run_course_full(const course_t* c, int count, const shoal_ground_vehicle_t* vehicles,
                       const shoal_path_follow_t* follow, const pf_start_t* starts,
                       const char* const* csv_paths, pf_observe_fn* observe, void* ctx, run_result_t* out,
                       char* err, int err_size);

/* The parameters the tuner searches, as a vector. */
enum { PF_TUNE_DIM = 5 };
void pf_tune_apply(const double x[PF_TUNE_DIM], shoal_path_follow_t* f);
void pf_tune_extract(const shoal_path_follow_t* f, double x[PF_TUNE_DIM]);

/* Nelder-Mead over the PF_TUNE_DIM parameters for one vehicle on the tuning
 * courses, starting from `start`; at most max_evals evaluations of the cost
 * (total time, with penalties for stuck events, teleports, unfinished runs
 * and time outside the corridor). Writes the best parameters to `best` and
 * returns the number of evaluations, or -1 on error. */
int pf_tune_vehicle(const shoal_ground_vehicle_t* vehicle, const shoal_path_follow_t* start, int max_evals,
                    shoal_path_follow_t* best, double* best_cost, char* err, int err_size);

/* The soak run: 64 vehicles (the six presets in turn) drive random routes
 * through the town for `seconds`, each vehicle taking a new route when it
 * finishes one. Seeds differ per trial. With `contacts`, the vehicles'
 * bodies (their collision radius) take part in the world's contact pass
 * (shoal_agent_def_t.contacts): they push each other apart instead of
 * driving through each other. Either way the run counts how often two
 * vehicles touch: after every frame, a pair closer than the sum of their
 * radii plus SOAK_TOUCH_SLACK is touching. */
#define SOAK_TOUCH_SLACK 0.05f /* m */
typedef struct soak_result {
    double drive_seconds; /* summed over vehicles, recoveries excluded */
    int stuck_events;
    int teleports;
    int routes_completed;
    int stuck_by_preset[6]; /* the presets in gv order: buggy, car, apc, truck, tank, hovercraft */
    int64_t touches;        /* pairs of vehicles that started touching (a pair touching over
                           * several frames counts once) */
    int64_t touch_frames;   /* pair-frames spent touching */
    double overlap_max;     /* m: the deepest overlap of two bodies after any frame (with
                           * contacts: what the contact pass left) */
} soak_result_t;
int pf_soak(shoal_follower_t follower, const shoal_path_follow_t* per_vehicle, int vehicles, double seconds,
            uint64_t seed, int contacts, soak_result_t* out, char* err, int err_size);

#endif
