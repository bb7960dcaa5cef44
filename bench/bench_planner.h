/* `shoal bench planner` (bench/bench_planner.c), dispatched from
 * `shoal bench` (bench/bench_flock.c): argv[0] is "planner", the options
 * follow. */
#ifndef SHOAL_BENCH_PLANNER_H
#define SHOAL_BENCH_PLANNER_H

int bench_planner(int argc, char** argv);

#endif /* SHOAL_BENCH_PLANNER_H */
