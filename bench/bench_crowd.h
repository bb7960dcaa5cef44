/* `shoal bench crowd` (bench/bench_crowd.c), dispatched from `shoal bench`
 * (bench/bench_flock.c): argv[0] is "crowd", the options follow. */
#ifndef SHOAL_BENCH_CROWD_H
#define SHOAL_BENCH_CROWD_H

int bench_crowd(int argc, char** argv);

#endif /* SHOAL_BENCH_CROWD_H */
