/* Obstacle avoidance keeps agents out at its defaults: over the grid of
 * experiments/avoid/avoid_grid.h (7 lateral offsets of the obstacle from the straight
 * path, max speeds 2, 5 and 8 m/s, obstacle radii 0.5 to 4 m), no agent
 * that seeks, arrives, flocks or directed-seeks with AVOID at
 * shoal_avoid_default() (normal field, and the same with the tangential
 * field) lets its body overlap the obstacle at any step, and every agent
 * with somewhere to go gets past it (avoiding by stopping or turning back
 * would not count; a flock without a goal that the obstacle turned keeps
 * its new course).
 * `shoal experiment avoid` prints the same grid's figures. */
#include <criterion/criterion.h>

#include "experiments/avoid/avoid_grid.h"

static void grid_keeps_out(int dims, avoid_grid_behavior_t behavior, int tangential)
{
    shoal_avoid_t avoid = shoal_avoid_default();
    avoid.tangential = tangential;
    for (int o = 0; o < AVOID_GRID_OFFSETS; ++o)
        for (int v = 0; v < AVOID_GRID_SPEEDS; ++v)
            for (int r = 0; r < AVOID_GRID_RADII; ++r) {
                avoid_grid_case_t c = {
                    .dims = dims, .behavior = behavior, .offset = o, .speed = v, .radius = r, .avoid = avoid};
                avoid_grid_outcome_t res;
                cr_assert_eq(avoid_grid_run(&c, &res), SHOAL_OK);
                cr_assert_geq(res.clearance, 0.0f,
                              "%dD %s, %s field, offset %g, speed %g, r_o %g: %g m inside the obstacle", dims,
                              avoid_grid_behavior_name(behavior), tangential ? "tangential" : "normal",
                              (double)avoid_grid_offsets[o], (double)avoid_grid_speeds[v],
                              (double)avoid_grid_radii[r], -(double)res.clearance);
                if (behavior == AVOID_GRID_FLOCK) continue; /* a flock without a goal may turn away */
                cr_assert(res.passed, "%dD %s, %s field, offset %g, speed %g, r_o %g: not past the obstacle",
                          dims, avoid_grid_behavior_name(behavior), tangential ? "tangential" : "normal",
                          (double)avoid_grid_offsets[o], (double)avoid_grid_speeds[v],
                          (double)avoid_grid_radii[r]);
            }
}

Test(avoid_grid, seek_normal_2d) { grid_keeps_out(2, AVOID_GRID_SEEK, 0); }
Test(avoid_grid, seek_tangential_2d) { grid_keeps_out(2, AVOID_GRID_SEEK, 1); }
Test(avoid_grid, arrive_normal_2d) { grid_keeps_out(2, AVOID_GRID_ARRIVE, 0); }
Test(avoid_grid, arrive_tangential_2d) { grid_keeps_out(2, AVOID_GRID_ARRIVE, 1); }
Test(avoid_grid, flock_normal_2d) { grid_keeps_out(2, AVOID_GRID_FLOCK, 0); }
Test(avoid_grid, flock_tangential_2d) { grid_keeps_out(2, AVOID_GRID_FLOCK, 1); }
Test(avoid_grid, flock_seek_normal_2d) { grid_keeps_out(2, AVOID_GRID_FLOCK_SEEK, 0); }
Test(avoid_grid, flock_seek_tangential_2d) { grid_keeps_out(2, AVOID_GRID_FLOCK_SEEK, 1); }
Test(avoid_grid, dseek_normal_2d) { grid_keeps_out(2, AVOID_GRID_DSEEK, 0); }
Test(avoid_grid, dseek_tangential_2d) { grid_keeps_out(2, AVOID_GRID_DSEEK, 1); }
Test(avoid_grid, seek_normal_3d) { grid_keeps_out(3, AVOID_GRID_SEEK, 0); }
Test(avoid_grid, seek_tangential_3d) { grid_keeps_out(3, AVOID_GRID_SEEK, 1); }
Test(avoid_grid, arrive_normal_3d) { grid_keeps_out(3, AVOID_GRID_ARRIVE, 0); }
Test(avoid_grid, arrive_tangential_3d) { grid_keeps_out(3, AVOID_GRID_ARRIVE, 1); }
Test(avoid_grid, flock_normal_3d) { grid_keeps_out(3, AVOID_GRID_FLOCK, 0); }
Test(avoid_grid, flock_tangential_3d) { grid_keeps_out(3, AVOID_GRID_FLOCK, 1); }
Test(avoid_grid, flock_seek_normal_3d) { grid_keeps_out(3, AVOID_GRID_FLOCK_SEEK, 0); }
Test(avoid_grid, flock_seek_tangential_3d) { grid_keeps_out(3, AVOID_GRID_FLOCK_SEEK, 1); }
Test(avoid_grid, dseek_normal_3d) { grid_keeps_out(3, AVOID_GRID_DSEEK, 0); }
Test(avoid_grid, dseek_tangential_3d) { grid_keeps_out(3, AVOID_GRID_DSEEK, 1); }
