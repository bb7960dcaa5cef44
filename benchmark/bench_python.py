"""The Python package's costs against the C paths, measured in one run.

    PYTHONPATH=build/release/python /usr/bin/python3 benchmark/bench_python.py [--agents 100000] [--threads 2] [--rounds 3] [--cli build/release/shoal]

1. Reading all positions of 1M agents: the time to get world.positions, and
   whether its data pointer is the library's position.x column (no copy).
2. A flock stepped from Python against `shoal bench flock` with the same
   scene (box sized for 20 neighbors within 2 m, the bench's definition),
   agents and threads: agent-steps/s of 100 timed steps after 10, rounds
   alternated, best of each side.
3. Creating the world and adding the agents from arrays (World(...) and
   World.add_agents) against the library's share of the C bench's setup
   (add_seconds: shoal_world_create and the bulk adds).
Prints one JSON object."""
import argparse
import json
import math
import os
import subprocess
import time

import numpy as np

import shoal


def flock_world(n, threads, seed=11):
    side = math.sqrt(n * math.pi * 2.0 * 2.0 / 20.0)
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0, side, (n, 2)).astype(np.float32)
    heading = rng.uniform(-math.pi, math.pi, n).astype(np.float32)
    vel = np.column_stack([2 * np.cos(heading), 2 * np.sin(heading)]).astype(np.float32)
    # timed as the C bench times its add_seconds: world creation and the bulk add
    t0 = time.perf_counter()
    w = shoal.World(threads=threads, seed=1, bounds=((0, 0), (side, side)), wrap=True, capacity=n)
    w.add_agents(pos, velocities=vel, headings=heading,
                 behaviors={"separate": 1.5, "align": 1.0, "cohere": 1.0, "wander": 1.0},
                 vehicle={"max_speed": 4.0, "radius": 0.3}, neighbors={"radius": 2.0},
                 wander={"cruise_speed": 2.0})
    return w, time.perf_counter() - t0


def python_rate(n, threads, steps=100, warmup=10):
    w, add = flock_world(n, threads)
    w.step(warmup)
    t0 = time.perf_counter()
    w.step(steps)
    return n * steps / (time.perf_counter() - t0), add


def cli_rate(cli, n, threads):
    out = subprocess.run([cli, "bench", "flock", "--agents", str(n), "--threads", str(threads), "--json",
                          "--no-hash"], check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return d["agent_steps_per_s"], d["add_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=100000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cli", default=os.environ.get("SHOAL_CLI", "build/release/shoal"))
    args = ap.parse_args()

    big, _ = flock_world(1_000_000, args.threads)
    t0 = time.perf_counter()
    for _ in range(1000):
        p = big.positions
    read_us = (time.perf_counter() - t0) / 1000 * 1e6
    same = p.ctypes.data == big.column("position.x").ctypes.data and not p.flags.owndata
    del p, big

    py, c, py_add, c_add = [], [], [], []
    for _ in range(args.rounds):
        r, a = python_rate(args.agents, args.threads)
        py.append(r)
        py_add.append(a)
        r, a = cli_rate(args.cli, args.agents, args.threads)
        c.append(r)
        c_add.append(a)
    print(json.dumps({
        "machine_threads": os.cpu_count(), "agents": args.agents, "threads": args.threads,
        "rounds": args.rounds,
        "positions_1M": {"microseconds": round(read_us, 2), "data_is_library_column": bool(same)},
        "step": {"python_agent_steps_per_s": max(py), "cli_agent_steps_per_s": max(c),
                 "python_over_cli": max(py) / max(c), "python_all": py, "cli_all": c},
        "add": {"python_seconds": min(py_add), "cli_library_seconds": min(c_add),
                "python_over_cli": min(py_add) / min(c_add)},
    }, indent=1))


if __name__ == "__main__":
    main()
