/* `shoal bench planner` (bench/bench_planner.c), dispatched from
 * `shoal bench` (bench/bench_flock.c): argv as cmd_bench got it, argv[1]
 * being "planner". */
#ifndef SHOAL_BENCH_PLANNER_H
#define SHOAL_BENCH_PLANNER_H

int bench_planner(int argc, char** argv);

#endif /* SHOAL_BENCH_PLANNER_H */
