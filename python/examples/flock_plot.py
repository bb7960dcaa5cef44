"""A 2D flock stepped from Python and drawn with matplotlib.

    /usr/bin/python3 python/examples/flock_plot.py [--agents N] [--steps S] [--out flock.png]

Every frame is read straight from the library's columns (world.positions and
world.velocities are numpy views, no copies)."""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import shoal  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--out", default="flock.png")
    args = ap.parse_args()

    size = 120.0
    world = shoal.World(dimensions=2, seed=3, bounds=((0, 0), (size, size)), wrap=True)
    rng = np.random.default_rng(3)
    world.add_agents(rng.uniform(0, size, (args.agents, 2)),
                     velocities=rng.normal(0, 1, (args.agents, 2)),
                     behaviors={"separate": 1.5, "align": 1.0, "cohere": 0.6, "wander": 0.3},
                     neighbors={"radius": 4.0})
    fig, axes = plt.subplots(1, 3, figsize=(15, 5))
    shots = [0, args.steps // 4, args.steps]
    done = 0
    for ax, at in zip(axes, shots):
        world.step(at - done)
        done = at
        p, v = world.positions, world.velocities
        ax.quiver(p[:, 0], p[:, 1], v[:, 0], v[:, 1], np.arctan2(v[:, 1], v[:, 0]), cmap="hsv",
                  scale=120, width=0.002)
        order = np.linalg.norm(v.mean(axis=0)) / max(np.linalg.norm(v, axis=1).mean(), 1e-9)
        ax.set(title=f"t = {world.time:.1f} s, order {order:.2f}", xlim=(0, size), ylim=(0, size),
               aspect="equal", xlabel="x (m)", ylabel="y (m)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    ms = sum(s["ns_total"] for s in world.system_stats()) / 1e6 / max(world.step_count, 1)
    print(f"{args.agents} agents, {world.step_count} steps, {ms:.2f} ms a step; wrote {args.out}")


if __name__ == "__main__":
    main()
