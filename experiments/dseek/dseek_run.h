/* One directed-seek run through the world (experiments/dseek/cmd_dseek.c), shared by
 * `shoal dseek` and `shoal plot dseek`. */
#ifndef SHOAL_CLI_DSEEK_RUN_H
#define SHOAL_CLI_DSEEK_RUN_H

#include <stdint.h>

#include "shoal/shoal.h"

typedef struct dseek_pose {
    float p[3];
    float d[3]; /* unit heading */
    float heading, pitch;
} dseek_pose_t;

/* Parse "x,y,heading" (dims 2) or "x,y,z,dx,dy,dz" (dims 3). 1 on success. */
int dseek_parse_pose(const char* text, int dims, dseek_pose_t* out);

typedef struct dseek_sim_result {
    double position_error, heading_error_deg, path_length, time;
    double turned;     /* rad: the heading's total turning until the result's pass */
    int first_attempt; /* 1 when the first pass within 0.25 rmin at a heading within 30
                          degrees of b's was the arrival (reached on the first try) */
    int64_t steps;
    int reached;
} dseek_sim_result_t;

/* Called with the agent's state before every step (t = 0 first). */
typedef void dseek_sample_fn(void* ctx, int dims, double t, const shoal_agent_state_t* s);

/* The vehicles of `shoal dseek`:
 * - kinematic: max turn rate V / rmin, force, torque and gains high enough
 *   that speed and heading follow their commands within a few steps;
 * - core: the default vehicle and controller with only V and the turn rate
 *   V / rmin set;
 * - default: shoal_agent_default_def()'s vehicle and controller untouched
 *   (V 5 m/s, turn rate 3 rad/s, force 20 N, torque 20 N m, gains 4, 9, 6);
 * - formation: the patrol vehicle of scenarios/formation.json (V 8 m/s,
 *   turn rate 2 rad/s, force and torque 400, gains 10, 100, 20). */
typedef enum dseek_vehicle {
    DSEEK_VEHICLE_KINEMATIC,
    DSEEK_VEHICLE_CORE,
    DSEEK_VEHICLE_DEFAULT,
    DSEEK_VEHICLE_FORMATION,
} dseek_vehicle_t;

/* For default and formation: their speed and r_min = V / max_turn_rate
 * (the others keep what is passed). */
void dseek_vehicle_limits(dseek_vehicle_t vehicle, double* rmin, double* speed);

/* Fly one agent from a to b on `vehicle` (directed seek derives its radius
 * from the vehicle). The arrival: the first local minimum of the distance
 * to b (measured on the segments between samples) within 0.05 rmin with
 * the heading within 3 degrees of b's. Passes that miss do not end the run
 * (close starts cross b before they can turn); it goes on until an arrival
 * or max_time, and first_attempt says whether the first pass that looked
 * like an arrival (within 0.25 rmin, heading within 30 degrees) was one.
 * The result reports the arrival, else the closest pass.
 * sample (optional) sees every state. Returns 0 (and prints) on a library
 * error. */
int dseek_simulate(int dims, const dseek_pose_t* a, const dseek_pose_t* b, double rmin, double speed,
                   double dt, double max_time, dseek_vehicle_t vehicle, dseek_sample_fn* sample, void* ctx,
                   dseek_sim_result_t* out);

#endif
