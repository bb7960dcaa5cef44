"""Mean walking speed against density, from a crowd's trajectories, with numpy only.

    /usr/bin/python3 python/examples/crowd_density.py [--seconds 20] [--out fd.png]

Pedestrians (the library's `pedestrian` crowd preset with a time gap of
0.5 s, which makes them slow down in dense crowds: docs/crowds.md) walk along a periodic
corridor at several densities; their positions are sampled every 0.5 s
straight from world.positions, and the speed of each is its displacement
over the interval (unwrapped across the periodic boundary). The means go
beside Weidmann's fundamental diagram (v0 1.34 m/s, gamma 1.913 /m^2,
rho_max 5.4 /m^2)."""
import argparse

import numpy as np

import shoal

LENGTH, WIDTH = 20.0, 4.0


def weidmann(rho):
    return 1.34 * (1.0 - np.exp(-1.913 * (1.0 / rho - 1.0 / 5.4)))


def walk(density, seconds, seed):
    n = int(round(density * LENGTH * WIDTH))
    world = shoal.World(seed=seed, threads=1, bounds=((0, 0), (LENGTH, WIDTH)), wrap=True)
    world.add_wall([[0, 0], [LENGTH, 0]])
    world.add_wall([[0, WIDTH], [LENGTH, WIDTH]])
    # a jittered lattice that fits n bodies of radius 0.2 m
    cols = int(np.ceil(np.sqrt(n * LENGTH / WIDTH)))
    rows = int(np.ceil(n / cols))
    gx, gy = np.meshgrid((np.arange(cols) + 0.5) * LENGTH / cols, (np.arange(rows) + 0.5) * WIDTH / rows)
    start = np.stack([gx.ravel(), gy.ravel()], axis=1)[:n]
    ids = world.add_agents(start, targets=np.column_stack([np.full(n, 1e6), start[:, 1]]),
                           behaviors={"seek": 1.0},
                           crowd={"preset": "pedestrian", "time_gap": 0.5})
    world.step(int(5.0 / world.dt))  # settle
    every = int(0.5 / world.dt)
    speeds = []
    prev = world.positions[world.rows(ids)].copy()
    for _ in range(int(seconds / 0.5)):
        world.step(every)
        now = world.positions[world.rows(ids)]
        dx = now[:, 0] - prev[:, 0]
        dx -= LENGTH * np.round(dx / LENGTH)  # across the periodic edge
        speeds.append(dx / (every * world.dt))
        prev = now.copy()
    return n / (LENGTH * WIDTH), float(np.mean(speeds))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--densities", default="0.5,1,2,3,4")
    ap.add_argument("--out", default=None, help="a PNG of the diagram (needs matplotlib)")
    args = ap.parse_args()
    rows = []
    print("density /m^2   mean speed m/s   Weidmann m/s")
    for d in [float(x) for x in args.densities.split(",")]:
        rho, v = walk(d, args.seconds, seed=1)
        rows.append((rho, v))
        print(f"{rho:12.2f}   {v:14.3f}   {weidmann(rho):12.3f}")
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        r = np.linspace(0.3, 5.3, 100)
        plt.plot(r, weidmann(r), label="Weidmann")
        plt.plot(*zip(*rows), "o", label="shoal, pedestrian preset")
        plt.xlabel("density (1/m^2)")
        plt.ylabel("mean speed (m/s)")
        plt.legend()
        plt.savefig(args.out, dpi=90)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
