/* `shoal bench loops` (bench/bench_loops.c), dispatched from `shoal bench`
 * (bench/bench_flock.c): argv[0] is "loops", the options follow. */
#ifndef SHOAL_BENCH_LOOPS_H
#define SHOAL_BENCH_LOOPS_H

int bench_loops(int argc, char** argv);

#endif /* SHOAL_BENCH_LOOPS_H */
