/* Travel-time fields over a nav grid (nav_field.c), and their gradient.
 *
 * A field is T(x), the least time to reach a goal from x over walkable
 * cells, the viscosity solution of the eikonal equation
 *     |grad T(x)| = 1 / F(x),  T = T0 on the goal cells,
 * with F a per-cell speed factor (1 in the open; a caller lowers it near
 * walls so that paths keep clearance). T is in metres at unit speed (the
 * time at F = 1 m/s): a crowd's agents follow its direction, not its value.
 *
 * Why the fast marching method (J. A. Sethian, "A fast marching level set
 * method for monotonically advancing fronts", PNAS 93(4), 1996): it visits
 * each cell once in order of increasing T (a binary heap of the front),
 * so a solve costs O(n log n) for n cells and is exact in its order, with
 * no sweeps to converge. A graph search over 4 or 8 neighbors measures
 * paths along those directions only: 4 neighbors make a diagonal 41 %
 * long, 8 neighbors a direction 22.5 degrees off an axis 8 % long. The
 * upwind differences of the eikonal equation measure any direction.
 * Where two accepted cells lie upwind along an axis (T2 <= T1) the update
 * uses the second-order one-sided difference
 *     D-x T = (3 T - 4 T1 + T2) / (2 h)
 * (the higher-accuracy fast marching method of Sethian, "Level Set
 * Methods and Fast Marching Methods", 1999; compared with other stencils
 * by Hassouna and Farag, "MultiStencils fast marching methods", IEEE PAMI
 * 29(9), 2007), else the first-order (T - T1) / h. Measured from a point
 * goal (tests/test_nav_field.c, 16 directions, 20 to 80 cells away):
 * within 0.5 % of the Euclidean distance with the cells within 5 cells of
 * the point seeded with exact times (nav_field_point_goal), 1.2 % from the
 * point's cell alone; the first-order scheme alone is 2.4 % (seeded) to
 * 4.6 % (not) long on the diagonals.
 *
 * Deterministic: serial, ties in the heap broken by the cell index, so a
 * field is the same bits for any thread count (several goals' fields can
 * be solved on separate workers).
 *
 * Memory per cell: the field 4 bytes (the caller's), the solve 4 more
 * while it runs (the heap position of every cell), and 8 bytes per cell
 * of the front (the heap), a small part of the cells. NAV_CELL_BYTES
 * (nav_grid.h) counts the grid, the field and the positions.
 *
 * Next: the nav module (goals as points, lines and areas, a field per
 * goal solved on the workers, their state in the hash and snapshots), the
 * navigate behavior (an agent's desired velocity along the gradient), a
 * cost rising near walls (F below 1), and dynamic costs (F from the
 * density, re-solved every k steps). */
#ifndef SHOAL_MODULES_NAV_FIELD_H
#define SHOAL_MODULES_NAV_FIELD_H

#include <stdint.h>

#include "modules/nav/nav_grid.h"

/* Solve the field of the goal cells goal[k] (indices into the grid), each
 * starting at time goal_time[k] (>= 0; NULL: every one at 0), into
 * T[nx * ny]. speed: F per cell (NULL: 1 everywhere); a cell whose speed
 * is not a finite value > 0 counts as blocked. Blocked goal cells are left
 * out (a goal inside a wall's clearance reaches nothing). Every cell not
 * reached, blocked ones included, gets T = +INFINITY (isinf).
 *
 * SHOAL_OK; SHOAL_ERR_INVALID_ARGUMENT for a NULL grid or T, goal_count
 * < 0, a NULL goal with goal_count > 0, a goal index outside the grid or a
 * goal time that is not a finite value >= 0 (T untouched);
 * SHOAL_ERR_OUT_OF_MEMORY when the scratch cannot be allocated (T
 * untouched). */
shoal_status_t nav_field_solve(const nav_grid_t* g, const float* speed, const int32_t* goal,
                               const float* goal_time, int32_t goal_count, float* T);

/* The same, stopping once the front passes `limit`: cells farther than
 * that get INFINITY, as unreached ones do. The march visits only the
 * cells within limit of the goals (a band along walls for their distance),
 * not the whole grid. */
shoal_status_t nav_field_solve_within(const nav_grid_t* g, const float* speed, const int32_t* goal,
                                      const float* goal_time, int32_t goal_count, float limit, float* T);

/* The goal cells of a point goal (x, y): every walkable cell whose center
 * is within `radius` of the point and in straight sight of it (no blocked
 * cell on the way), with its exact time |center - point| / F(cell) (speed
 * NULL: F = 1), and always the point's own cell when it is walkable.
 * Seeding the cells around a point with exact times removes the error the
 * point singularity would otherwise spread over the whole field (the
 * difference scheme is first-order there whatever its order elsewhere);
 * a radius of 2 to 3 cells is enough. Writes at most `cap` cells to
 * goal / goal_time in index order and returns how many there are (more
 * than cap: call again with more room); 0 when the point is outside the
 * grid or its cell is blocked. */
int32_t nav_field_point_goal(const nav_grid_t* g, const float* speed, float x, float y, float radius,
                             int32_t* goal, float* goal_time, int32_t cap);

/* The unit direction of steepest descent of T at (x, y), into dir[2]:
 * 1 when there is one, 0 when there is none (dir = 0, 0): the point is
 * outside the grid, its cell is walkable but unreached (an enclosed goal),
 * or it is at a minimum (the goal itself).
 *
 * T is interpolated bilinearly between the four cell centers around the
 * point. A corner that is blocked, unreached, outside the grid or joined
 * to the point's cell only through such corners (two walkable diagonal
 * cells across a thin diagonal wall) has no usable value: it gets that of
 * its usable neighbors in the square plus h / 2, as if the wall stood a
 * little higher than the floor beside it. The descent then always has a
 * component away from the wall, so a point next to a wall moves along it
 * towards the goal, never into it. A point in a blocked cell (an agent
 * pushed into the clearance) takes the square's usable corner nearest to
 * it as its cell, and is led out towards the goal. (A cell that only a
 * speed of 0 made a wall is unreached, not blocked, to this function: a
 * point in it gets no direction. Walls belong in the grid.) */
int32_t nav_field_gradient(const nav_grid_t* g, const float* T, float x, float y, float dir[2]);

#endif /* SHOAL_MODULES_NAV_FIELD_H */
