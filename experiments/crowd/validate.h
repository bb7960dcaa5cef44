/* What `shoal validate crowd --plots DIR` draws (experiments/crowd/plot_validate.c):
 * the figures experiments/crowd/validate_crowd.c prints, and a few series it collects
 * only for the pictures (trajectories, the lane order every second, each
 * step's worst overlap, final positions). Collecting them reads the worlds
 * and never changes what they do: the printed figures are the same with
 * or without --plots. */
#ifndef SHOAL_CLI_VALIDATE_H
#define SHOAL_CLI_VALIDATE_H

#include <stdint.h>

/* Weidmann's fundamental diagram (m/s at rho per m^2). */
#define WEIDMANN_V0 1.34
#define WEIDMANN_GAMMA 1.913
#define WEIDMANN_RHO_MAX 5.4
double validate_weidmann(double rho);

enum {
    VALIDATE_PATH_MAX = 601,     /* free walking: 30 s at dt 0.05 s, and the start */
    VALIDATE_DENSITIES = 10,     /* fundamental diagram */
    VALIDATE_WIDTHS = 5,         /* bottleneck */
    VALIDATE_EVACUEES = 100,     /* bottleneck room */
    VALIDATE_ORDER_MAX = 64,     /* counter-flow lane order, once a second */
    VALIDATE_CORRIDOR_MAX = 256, /* counter-flow agents drawn */
    VALIDATE_BOX_AGENTS = 144,   /* compression */
    VALIDATE_BOX_STEPS = 200
};

typedef struct validate_plot_data_t {
    int quick;
    double dt;
    double radius; /* of a pedestrian, m */
    /* free walking: 10 m down corridors along angle_deg[k] */
    double angle_deg[3], seconds[3], spread;
    int path_count[3];
    float path[3][2 * VALIDATE_PATH_MAX]; /* x, y from the start to the first step past 10 m */
    /* fundamental diagram in the periodic corridor */
    double corridor_length, corridor_width;
    int densities;
    double density[VALIDATE_DENSITIES], speed[VALIDATE_DENSITIES], speed_random[VALIDATE_DENSITIES];
    double warm_s, measure_s;
    /* bottleneck: flow[k] < 0 when width[k] clogged */
    int widths;
    double width[VALIDATE_WIDTHS], flow[VALIDATE_WIDTHS];
    int fit; /* 1 when slope, intercept and r2 hold a fit */
    double slope, intercept, r2;
    int passed[VALIDATE_WIDTHS];                          /* how many got out */
    double pass_time[VALIDATE_WIDTHS][VALIDATE_EVACUEES]; /* s, in order */
    /* counter-flow */
    double counter_seconds;
    int order_count; /* lane order at order_time[i] s, from 0 */
    double order_time[VALIDATE_ORDER_MAX], order[VALIDATE_ORDER_MAX];
    int agents, stuck;
    float final_xy[2 * VALIDATE_CORRIDOR_MAX];
    uint8_t final_group[VALIDATE_CORRIDOR_MAX], final_stuck[VALIDATE_CORRIDOR_MAX];
    /* compression in the 5 m box: each step's largest pair overlap and wall
     * penetration (over a radius, 0 when none), and the worst of them */
    double box_side;
    int box_steps;
    double step_overlap[VALIDATE_BOX_STEPS], step_penetration[VALIDATE_BOX_STEPS];
    double overlap, penetration;
    float box_xy[2 * VALIDATE_BOX_AGENTS];
} validate_plot_data_t;

/* Write free_walk.png, fundamental.png, bottleneck.png, counterflow.png
 * and compression.png into dir (which exists), 800 x 500 px each. Returns
 * 0, or -1 with a message naming the file in err. */
int validate_write_plots(const char* dir, const validate_plot_data_t* d, char* err, int err_size);

/* Make dir and its parents as needed, and check that it is a directory
 * this process can write into. Returns 0, or -1 with a message naming
 * the path in err. */
int validate_plot_dir(const char* dir, char* err, int err_size);

#endif /* SHOAL_CLI_VALIDATE_H */
