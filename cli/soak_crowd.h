/* The crowd scene of `shoal soak` (`shoal soak --crowd`): pedestrians among
 * rooms, doors, a corridor and free-standing walls, in an unbounded 2D
 * world (cli/soak_crowd.c says what it checks). */
#ifndef SHOAL_CLI_SOAK_CROWD_H
#define SHOAL_CLI_SOAK_CROWD_H

#include <stdint.h>

typedef struct soak_crowd_options_t {
    double minutes;     /* 0: only steps limits the run */
    int64_t steps;      /* 0: only minutes limits the run */
    int threads;        /* of the main world */
    int shadow_threads; /* 0: no shadow world */
    int agents;         /* pedestrians targeted */
    uint64_t seed;
    int json;
    double progress; /* s between progress lines; 0 = none */
} soak_crowd_options_t;

/* Run the crowd soak; prints its report and returns a CLI_EXIT_* code. */
int soak_crowd_run(const soak_crowd_options_t* options);

/* Resident memory now and at its peak, in MiB (cli/cmd_soak.c). */
double soak_rss_mib(void);
double soak_peak_rss_mib(void);

#endif /* SHOAL_CLI_SOAK_CROWD_H */
