"""Pedestrians leave a walled room by its two doors, each by the nearer one
round the walls: the doors' travel-time fields, read at the agents' cells
with numpy, choose each agent's goal, and one add_agents call sends them.

    PYTHONPATH=build/release/python /usr/bin/python3 python/examples/evacuation.py --agents 200

Prints, every 5 s, how many have gone through each door, and when the
last one did."""
import argparse

import numpy as np

import shoal


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=120.0, help="give up after this long")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    world = shoal.World(threads=2, seed=args.seed)
    # a 20 m x 10 m room with a 2 m door in the middle of each end wall
    world.add_wall([(0, 4), (0, 0), (20, 0), (20, 4)])
    world.add_wall([(0, 6), (0, 10), (20, 10), (20, 6)])
    doors = [world.add_nav_goal(line=((-3, 3), (-3, 7))),  # outside the west door
             world.add_nav_goal(line=((23, 3), (23, 7)))]  # and the east one
    world.nav_update()

    # starts on a 0.8 m lattice (no two pedestrians overlap), jittered
    rng = np.random.default_rng(args.seed)
    lattice = np.stack(np.meshgrid(np.arange(1, 19.01, 0.8), np.arange(1, 9.01, 0.8)), -1).reshape(-1, 2)
    if args.agents > len(lattice):
        raise SystemExit(f"--agents: at most {len(lattice)} fit in the room")
    start = lattice[rng.choice(len(lattice), args.agents, replace=False)]
    start += rng.uniform(-0.2, 0.2, start.shape)

    # each agent's travel time to each door, read at its cell
    grid = world.nav_grid()
    cell = ((start - grid["origin"]) // grid["cell"]).astype(int)
    times = np.stack([world.nav_field(d)[cell[:, 1], cell[:, 0]] for d in doors], axis=1)
    goal = np.array(doors)[np.argmin(times, axis=1)]
    world.add_agents(start, crowd="pedestrian", behaviors={"navigate": 1.0}, nav={"goal": goal})
    print(f"{args.agents} pedestrians: {np.sum(goal == doors[0])} to the west door, "
          f"{np.sum(goal == doors[1])} to the east door")

    # Whoever is through a door leaves the world: standing at the goal line
    # they would block the door for the others.
    dt, out, t, last = 0.05, [0, 0], 0.0, 0.0
    while len(world) and t < args.seconds:
        world.step(10, dt=dt)
        t += 10 * dt
        x = world.positions[:, 0]
        west, east = x < -0.5, x > 20.5
        if west.any() or east.any():
            out[0] += int(west.sum())
            out[1] += int(east.sum())
            world.remove_agents(world.handles()[west | east])
            last = t
        if t % 5 < 1e-6 or t % 5 > 5 - 1e-6 or not len(world):
            print(f"t = {t:5.1f} s: {out[0]} out west, {out[1]} out east")
    if len(world):
        print(f"{sum(out)} of {args.agents} out after {args.seconds:.0f} s")
    else:
        print(f"all {args.agents} out in {last:.1f} s")
    print(f"state_hash {world.state_hash:016x}")


if __name__ == "__main__":
    main()
