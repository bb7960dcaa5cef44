/* `shoal bench nav` (bench/bench_nav.c), dispatched from `shoal bench`
 * (bench/bench_flock.c): argv[0] is "nav", the options follow. */
#ifndef SHOAL_BENCH_NAV_H
#define SHOAL_BENCH_NAV_H

int bench_nav(int argc, char** argv);

#endif /* SHOAL_BENCH_NAV_H */
