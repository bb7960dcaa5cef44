"""A per-agent rule written with numpy on a user component, between steps.

    /usr/bin/python3 python/examples/custom_rule.py [--agents N] [--steps S]

Each boid carries an `energy` (a user component: a library column that
follows its agent through reorders and is saved in snapshots). Between
steps numpy drains energy with speed and refills it at rest; tired boids
(energy below 0.2) are sent to the nearest of four feeding spots by a bulk
target write, rested ones back to the flock's center. Nothing is copied
agent by agent: the rule reads the columns as arrays and writes back in
one call."""
import argparse

import numpy as np

import shoal

SPOTS = np.array([[20, 20], [80, 20], [20, 80], [80, 80]], dtype=np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=5000)
    ap.add_argument("--steps", type=int, default=900)
    args = ap.parse_args()

    world = shoal.World(seed=5)
    rng = np.random.default_rng(5)
    world.add_agents(rng.uniform(0, 100, (args.agents, 2)), targets=np.full((args.agents, 2), 50.0),
                     behaviors={"separate": 1.5, "align": 0.5, "cohere": 0.3, "arrive": 1.0})
    world.add_component("energy", np.float32, default=1.0)
    every = 10
    for step in range(0, args.steps, every):
        world.step(every)
        energy = world.column("energy")  # writable, no copy; new each time rows may have moved
        speed = np.linalg.norm(world.velocities, axis=1)
        energy -= 0.06 * speed * every * world.dt
        energy += 0.4 * (speed < 0.5) * every * world.dt
        np.clip(energy, 0.0, 1.0, out=energy)
        tired = energy < 0.2
        p = world.positions
        nearest = SPOTS[np.argmin(((p[:, None, :] - SPOTS[None]) ** 2).sum(axis=2), axis=1)]
        targets = np.where(tired[:, None], nearest, p.mean(axis=0))
        world.set_targets(world.handles(), targets)
        if step % 150 == 0:
            print(f"t = {world.time:5.1f} s: {int(tired.sum()):5d} tired, mean energy {energy.mean():.3f}")
    print(f"state_hash {world.state_hash:016x}")


if __name__ == "__main__":
    main()
