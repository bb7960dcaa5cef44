/* `shoal bench small` (bench/bench_small.c), dispatched from `shoal bench`
 * (bench/bench_flock.c): argv[0] is "small", the options follow. */
#ifndef SHOAL_BENCH_SMALL_H
#define SHOAL_BENCH_SMALL_H

int bench_small(int argc, char** argv);

#endif /* SHOAL_BENCH_SMALL_H */
