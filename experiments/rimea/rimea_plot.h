/* What `shoal validate rimea --plots DIR` draws (experiments/rimea/plot_rimea.c): the
 * figures the tests of experiments/rimea/validate_rimea.c measured, each written
 * here by the test as it runs (a test's rimea_result_t points at this
 * data when --plots is given, NULL otherwise). Nothing here is measured
 * for the pictures alone, and collecting it changes no world: what the
 * tests print is the same with or without --plots. */
#ifndef SHOAL_CLI_RIMEA_PLOT_H
#define SHOAL_CLI_RIMEA_PLOT_H

enum {
    RIMEA_PLOT_SEEDS = 100,   /* --seeds at most */
    RIMEA_PLOT_DENSITIES = 6, /* test 4's corridor densities (--quick 3) */
    RIMEA_PLOT_RINGS = 4,     /* test 4's single-file rings: 14, 25, 34, 45 walkers */
    RIMEA_PLOT_FD_MAX = RIMEA_PLOT_DENSITIES * 2 * RIMEA_PLOT_SEEDS,
    RIMEA_PLOT_WIDTHS = 5,      /* the bottleneck's openings */
    RIMEA_PLOT_PREMOVEMENT = 10 /* test 5's walkers */
};

/* Which tests filled their part (bits of rimea_plot_data_t.ran). */
enum {
    RIMEA_PLOT_TEST4 = 1u << 0,
    RIMEA_PLOT_TEST5 = 1u << 1,
    RIMEA_PLOT_TEST9 = 1u << 2,
    RIMEA_PLOT_TEST13 = 1u << 3,
    RIMEA_PLOT_TEST15 = 1u << 4,
    RIMEA_PLOT_BOTTLENECK = 1u << 5
};

/* Test 13 on one seed: after each step (of dt, from dt on) the walkers in
 * the 2 m x 2 m before the room's exit, in the corridor's last 2 m (the
 * foot of the stairs, also 4 m^2) and in the whole corridor; and the two
 * counts of the corridor it judges, with the times they were taken. */
typedef struct rimea_stairs_run_t {
    int steps, capacity; /* samples taken, room for them */
    int* door;           /* [steps] each */
    int* foot;
    int* corridor;
    double door_s, foot_s; /* how long each held 8 or more (2 per m^2), s */
    double queue_t[2];     /* when the first reached the stairs, and 20 s later (< 0: never) */
    int queue[2];          /* the corridor's count then */
} rimea_stairs_run_t;

typedef struct rimea_plot_data_t {
    int quick, seeds; /* --quick, and seeds 1 to `seeds` ran */
    double dt;        /* s, every test's step */
    unsigned ran;     /* RIMEA_PLOT_* */

    /* test 4, 2D: every run (density, start, seed): the corridor's density
     * and the mean speed measured over fd_measure_s after fd_warm_s */
    int fd_count;
    double fd_density[RIMEA_PLOT_FD_MAX], fd_speed[RIMEA_PLOT_FD_MAX];
    unsigned char fd_lattice[RIMEA_PLOT_FD_MAX];
    double fd_warm_s, fd_measure_s;
    /* test 4, single file: per seed and ring, the mean speed and the line
     * density (walkers per m), and each seed's fit 1/rho = a + b v */
    int sf_walkers[RIMEA_PLOT_RINGS];
    double sf_speed[RIMEA_PLOT_SEEDS][RIMEA_PLOT_RINGS], sf_density[RIMEA_PLOT_SEEDS][RIMEA_PLOT_RINGS];
    double sf_a[RIMEA_PLOT_SEEDS], sf_b[RIMEA_PLOT_SEEDS];

    /* test 5: per seed and walker, its premovement time and when it started
     * (< 0: it never did) */
    double pm_delay[RIMEA_PLOT_SEEDS][RIMEA_PLOT_PREMOVEMENT],
        pm_started[RIMEA_PLOT_SEEDS][RIMEA_PLOT_PREMOVEMENT];

    /* test 9: walkers, and per seed the times to empty through 4 and 2
     * exits (past 1200 s: someone was still inside at 1200 s) */
    int ev9_walkers;
    double ev9_four[RIMEA_PLOT_SEEDS], ev9_two[RIMEA_PLOT_SEEDS];
    /* test 15: walkers, and per seed the times to empty the short straight
     * corridor, the long one and the corner (past 600 s: not empty) */
    int ev15_walkers;
    double ev15_short[RIMEA_PLOT_SEEDS], ev15_long[RIMEA_PLOT_SEEDS], ev15_corner[RIMEA_PLOT_SEEDS];

    /* test 13, per seed (the test allocates the arrays, the command frees
     * them with the data) */
    rimea_stairs_run_t stairs[RIMEA_PLOT_SEEDS];

    /* the bottleneck: per opening and seed, the flow per m of width
     * measured (the 10th to the 140th through; 0 when fewer than 140 got
     * through) */
    double bn_width[RIMEA_PLOT_WIDTHS];
    double bn_per_m[RIMEA_PLOT_WIDTHS][RIMEA_PLOT_SEEDS];
} rimea_plot_data_t;

/* The pictures and the test each needs, in the order they are drawn. */
typedef struct rimea_picture_t {
    const char* file;
    unsigned needs;   /* RIMEA_PLOT_*: drawn when any of them ran */
    const char* from; /* the tests, e.g. "test 4" */
    int width, height;
} rimea_picture_t;

#define RIMEA_PICTURES 5
extern const rimea_picture_t rimea_pictures[RIMEA_PICTURES];

/* Draw each picture whose tests ran into dir (which exists); drawn[k] is
 * set to 1 for each rimea_pictures[k] written. Returns 0, or -1 with a
 * message naming the file in err. */
int rimea_write_plots(const char* dir, const rimea_plot_data_t* d, int* drawn, char* err, int err_size);

#endif /* SHOAL_CLI_RIMEA_PLOT_H */
