/* `shoal bench navmesh` (bench/bench_navmesh.c), dispatched from `shoal
 * bench` (bench/bench_flock.c): argv[0] is "navmesh", the options follow. */
#ifndef SHOAL_BENCH_NAVMESH_H
#define SHOAL_BENCH_NAVMESH_H

int bench_navmesh(int argc, char** argv);

#endif /* SHOAL_BENCH_NAVMESH_H */
