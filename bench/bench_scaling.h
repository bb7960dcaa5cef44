/* `shoal bench scaling` (bench/bench_scaling.c), dispatched from
 * `shoal bench` (bench/bench_flock.c): argv[0] is "scaling", the scene and
 * the options follow. */
#ifndef SHOAL_BENCH_SCALING_H
#define SHOAL_BENCH_SCALING_H

int bench_scaling(int argc, char** argv);

#endif /* SHOAL_BENCH_SCALING_H */
