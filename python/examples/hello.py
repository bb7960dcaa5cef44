"""Hello, shoal, from Python: a crowd leaves a room by its door.

The room of examples/hello/hello.c: 8 m x 8 m, walled, a 1.2 m door in its
east wall, 64 pedestrians on a lattice inside, an exit line 2 m beyond the
door. Prints how many are left each 10 s; exit status 0 when all are out
within 120 s of simulated time.

    PYTHONPATH=build/release/python /usr/bin/python3 python/examples/hello.py
"""
import sys

import numpy as np

import shoal

world = shoal.World(dimensions=2)  # unbounded; threads: automatic
# the room: one wall from the door's top round to its bottom
world.add_wall([(8, 0.6), (8, 4), (0, 4), (0, -4), (8, -4), (8, -0.6)])
# the exit: a line 2 m beyond the door; agents that reach it leave
goal = world.add_nav_goal(line=[(10, -3), (10, 3)], exit=True)

# 64 pedestrians 0.8 m apart, each walking down the exit's field
i, j = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
positions = np.column_stack([1.0 + 0.8 * i.ravel(), -2.8 + 0.8 * j.ravel()])
world.add_agents(positions, crowd="pedestrian", behaviors={"navigate": 1}, nav={"goal": goal})

dt = 0.05  # s
for step in range(1, 2401):
    world.step(1, dt)
    if step % 200 == 0 or len(world) == 0:
        print(f"t = {step * dt:5.1f} s: {len(world):2d} in the room")
    if len(world) == 0:
        break
print(f"state_hash {world.state_hash:016x}")
sys.exit(0 if len(world) == 0 else 1)
