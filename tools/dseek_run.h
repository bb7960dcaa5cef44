/* One directed-seek run through the world (tools/cmd_dseek.c), shared by
 * `shoal dseek` and `shoal plot dseek`. */
#ifndef SHOAL_TOOLS_DSEEK_RUN_H
#define SHOAL_TOOLS_DSEEK_RUN_H

#include <stdint.h>

#include "shoal/shoal.h"

typedef struct dseek_pose {
    float p[3];
    float d[3]; /* unit heading */
    float heading, pitch;
} dseek_pose;

/* Parse "x,y,heading" (dims 2) or "x,y,z,dx,dy,dz" (dims 3). 1 on success. */
int dseek_parse_pose(const char* text, int dims, dseek_pose* out);

typedef struct dseek_sim_result {
    double position_error, heading_error_deg, path_length, time;
    int64_t steps;
    int reached;
} dseek_sim_result;

/* Called with the agent's state before every step (t = 0 first). */
typedef void dseek_sample_fn(void* ctx, int dims, double t, const shoal_agent_state_t* s);

/* Fly one agent from a to b. kinematic: the near-kinematic vehicle (max
 * turn rate V / rmin, so DSEEK plans with r = 1.15 rmin); else the core's
 * default vehicle and controller with only its speed and turn rate set.
 * sample (optional) sees every state. Returns 0 (and prints) on a library
 * error. */
int dseek_simulate(int dims, const dseek_pose* a, const dseek_pose* b, double rmin, double speed,
                   double dt, double max_time, int kinematic, dseek_sample_fn* sample, void* ctx,
                   dseek_sim_result* out);

#endif
