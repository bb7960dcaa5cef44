"""shoal.ensemble: one scenario run over seeds and a grid of settings.

The plan and the rows are those of `shoal ensemble` (docs/ensemble.md): run k
is parameter point k // len(seeds) (the product of the settings' values, the
first setting varying slowest) and seed seeds[k % len(seeds)]; a run is the
scenario file with the settings written into it, made and stepped as
World.from_scenario_string makes and steps it, which is what `shoal run
--seed S` does, so its state_hash is that command's. Runs go to a pool of
worker processes started fresh ("spawn": no OpenMP runtime is copied into
a child); the rows come back in run order whatever the workers.
"""
import json
import multiprocessing
import os
from typing import Any, Iterable, Mapping, Optional, Sequence, Union
from concurrent.futures import ProcessPoolExecutor

import numpy as np

# The top-level keys of a scenario file: a setting whose first name is one
# of them is set there, any other in every group.
_ROOT_KEYS = ("name", "dimensions", "seed", "dt", "steps", "threads", "world", "groups", "obstacles", "walls",
              "nav", "navmesh", "measure")


def _set_path(node, names, value, key):
    name = names[0]
    if isinstance(node, list):
        try:
            i = int(name)
        except ValueError:
            raise ValueError(f"ensemble: setting {key!r}: {name!r} is no index of an array") from None
        if not 0 <= i < len(node):
            raise ValueError(f"ensemble: setting {key!r}: {i} is no index of an array of {len(node)}")
        if len(names) == 1:
            node[i] = value
        else:
            _set_path(node[i], names[1:], value, key)
    elif isinstance(node, dict):
        if len(names) == 1:
            node[name] = value
        else:
            _set_path(node.setdefault(name, {}), names[1:], value, key)
    else:
        raise ValueError(f"ensemble: setting {key!r}: {name!r} is below a value that is not an object")


def _apply(doc, key, value):
    names = key.split(".")
    if not all(names):
        raise ValueError(f"ensemble: setting {key!r} is not a dotted path of names")
    if names[0] in _ROOT_KEYS:
        _set_path(doc, names, value, key)
        return
    groups = doc.get("groups")
    if not isinstance(groups, list) or not groups:
        raise ValueError(f"ensemble: setting {key!r}: {names[0]!r} is not a top-level key of a scenario "
                         "and the file has no groups to set it in")
    for g in groups:
        _set_path(g, names, value, key)


def _run(task):
    """One run in a worker: its row as a dict of names to values."""
    import shoal
    k, point, seed, settings, text, source, steps, threads = task
    w = shoal.World.from_scenario_string(text, seed=seed, threads=threads, source=source)
    agents = w.agent_count
    n = w.scenario_steps if steps is None else int(steps)
    agent_steps = 0
    for _ in range(n):  # as `shoal run` counts agent-steps: the agents alive at each step
        agent_steps += w.agent_count
        w.step(1)
    row = {"run": k, "point": point, "seed": seed}
    row.update(settings)
    row["state_hash"] = f"{w.state_hash:016x}"
    row.update({"agents": agents, "dimensions": w.dimensions, "steps": n, "agent_steps": agent_steps})
    crowd = w.crowd_stats()
    if crowd["agents"] > 0:
        row.update({f"crowd.{name}": value for name, value in crowd.items()})
    if w.nav_goal_count > 0:
        row["nav.goals"] = w.nav_goal_count
        row.update({f"nav.{name}": value for name, value in w.nav_stats().items()})
    return row


def ensemble(path: Union[str, "os.PathLike[str]"], seeds: Optional[Iterable[int]] = None,
             settings: Optional[Mapping[str, Sequence[Any]]] = None, steps: Optional[int] = None,
             threads: int = 1, workers: Optional[int] = None) -> np.ndarray:
    """Run the scenario file `path` for every seed (default: the file's
    seed) at every point of `settings` ({dotted key: [values]}, as
    `shoal ensemble --set KEY=V1,V2`), each run with `threads` threads and
    `steps` steps (default: the file's), on `workers` processes (default:
    the cores over the threads). Returns a numpy structured array, a row a
    run in run order: run, point, seed, each setting, state_hash (16 hex
    digits, as `shoal run` prints it) and the run's figures (agents, steps,
    agent_steps, crowd.*, nav.* when it has them; a figure a run lacks is
    NaN)."""
    with open(path, "rb") as f:
        base = json.loads(f.read())
    seeds = [int(base.get("seed", 1))] if seeds is None else [int(s) for s in seeds]
    if not seeds:
        raise ValueError("ensemble: no seeds")
    if any(not 0 <= s < 1 << 64 for s in seeds):
        raise ValueError("ensemble: seeds are integers in [0, 2^64)")
    settings = dict(settings or {})
    keys = list(settings)
    values = [list(settings[k]) for k in keys]
    if any(not v for v in values):
        raise ValueError("ensemble: every setting needs at least one value")
    points = 1
    for v in values:
        points *= len(v)
    tasks = []
    for point in range(points):
        chosen, rest = {}, point
        for key, vals in reversed(list(zip(keys, values))):
            chosen[key] = vals[rest % len(vals)]
            rest //= len(vals)
        chosen = {key: chosen[key] for key in keys}
        doc = json.loads(json.dumps(base))
        for key in keys:
            _apply(doc, key, chosen[key])
        text = json.dumps(doc)
        for i, seed in enumerate(seeds):
            tasks.append((point * len(seeds) + i, point, seed, chosen, text, str(path), steps, threads))
    if workers is None:
        workers = max(1, (os.cpu_count() or 1) // max(1, int(threads)))
    workers = max(1, min(int(workers), len(tasks)))
    if workers == 1:
        rows = [_run(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            rows = list(pool.map(_run, tasks))
    return _table(rows, keys)


def _table(rows, keys):
    names = []
    for row in rows:
        for name in row:
            if name not in names:
                names.append(name)
    fields = []
    for name in names:
        if name in ("run", "point"):
            fields.append((name, np.int64))
        elif name == "seed":
            fields.append((name, np.uint64))
        elif name == "state_hash":
            fields.append((name, "U16"))
        elif name in keys and not all(isinstance(r.get(name), (int, float)) and not isinstance(r.get(name), bool)
                                      for r in rows):
            fields.append((name, object))
        else:
            fields.append((name, np.float64))
    out = np.zeros(len(rows), dtype=fields)
    for i, row in enumerate(rows):
        for name, kind in fields:
            value = row.get(name)
            if value is None:
                value = float("nan") if kind is np.float64 else value
            out[name][i] = value
    return out
