/* `shoal bench split` (bench/bench_split.c), dispatched from `shoal bench`
 * (bench/bench_flock.c): argv[0] is "split", the scene and the options
 * follow. */
#ifndef SHOAL_BENCH_SPLIT_H
#define SHOAL_BENCH_SPLIT_H

int bench_split(int argc, char** argv);

#endif /* SHOAL_BENCH_SPLIT_H */
