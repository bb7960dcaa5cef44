"""Per-step figures of a world into numpy arrays (as Mesa's DataCollector
gathers a model's): a study's loop without writing one.

    c = shoal.Collector(world, every=10, means=("speed", "position.x"))
    c.run(600)                 # steps the world, a sample every 10 steps and after the last
    c.data["mean_speed"]       # numpy arrays, one entry a sample
    c.to_csv("figures.csv")

A sample holds: step, time, agents; the mean over the agents of each name in
`means` ("speed" is the length of the velocity; any other name is a column,
World.column_names()); with crowd=True the crowd statistics
(World.crowd_stats: arrived, closest_pair, overlapping, ...); with lines=True
each measurement line's crossings so far (line_<name>_positive and
_negative) and with areas=True each measurement area's last sample's count
and density (area_<name>_count, _density)."""
import csv
import math
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

import numpy as np

if TYPE_CHECKING:
    from ._shoal import World

_CROWD = ("agents", "arrived", "closest_pair", "overlapping", "relaxed_last_step", "contact_iterations",
          "wall_penetration", "in_walls")


class Collector:
    """Samples a world's figures every `every` steps (see the module's text).
    means: names of columns to average over the agents ("speed" for the
    velocity's length); crowd, lines, areas: add the crowd statistics, the
    measurement lines' crossings and the measurement areas' last samples."""

    def __init__(self, world: "World", every: int = 1, means: Union[str, Sequence[str]] = ("speed",),
                 crowd: bool = False, lines: bool = False, areas: bool = False) -> None:
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"Collector: every must be an integer >= 1, got {every!r}")
        if isinstance(means, str):
            means = (means,)
        known = set(world.column_names()) | {"speed"}
        for name in means:
            if name not in known:
                raise ValueError(f"Collector: no column {name!r} to average (World.column_names(), or "
                                 f"'speed')")
        self.world = world
        self.every = int(every)
        self.means = tuple(means)
        self.crowd = bool(crowd)
        self.lines = bool(lines)
        self.areas = bool(areas)
        self._rows: List[Dict[str, Any]] = []
        self._names: List[str] = []

    def _figures(self):
        w = self.world
        row = {"step": w.step_count, "time": w.time, "agents": w.agent_count}
        for name in self.means:
            if w.agent_count == 0:
                row[f"mean_{name}"] = math.nan
            elif name == "speed":
                row["mean_speed"] = float(np.linalg.norm(w.velocities, axis=1).mean())
            else:
                row[f"mean_{name}"] = float(np.mean(w.column(name)))
        if self.crowd:
            s = w.crowd_stats()
            for key in _CROWD:
                v = s[key]
                row[f"crowd_{key}"] = math.nan if v is None else v
        if self.lines:
            for i in range(w.measure_line_count):
                m = w.measure_line(i)
                row[f"line_{m['name'] or i}_positive"] = m["positive"]
                row[f"line_{m['name'] or i}_negative"] = m["negative"]
        if self.areas:
            for i in range(w.measure_area_count):
                samples = w.measure_area_samples(i)
                name = w.measure_area(i)["name"] or i
                last = len(samples["count"]) - 1
                row[f"area_{name}_count"] = samples["count"][last] if last >= 0 else math.nan
                row[f"area_{name}_density"] = samples["density"][last] if last >= 0 else math.nan
        return row

    def sample(self) -> None:
        """Take one sample now."""
        row = self._figures()
        if not self._rows:
            self._names = list(row)
        elif list(row) != self._names:
            raise ValueError("Collector: the figures changed between samples (a measurement line or area "
                             "was added): start another Collector")
        self._rows.append(row)

    def run(self, steps: int, dt: Optional[float] = None) -> "Collector":
        """Step the world `steps` times (dt: the world's unless given),
        sampling before the first step when nothing was sampled yet, every
        `every` steps, and after the last step."""
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
            raise ValueError(f"Collector.run: steps must be an integer >= 0, got {steps!r}")
        if not self._rows:
            self.sample()
        done = 0
        while done < steps:
            n = min(self.every, steps - done)
            self.world.step(n, dt)
            done += n
            self.sample()
        return self

    @property
    def data(self) -> Dict[str, np.ndarray]:
        """The samples as a dict of numpy arrays, one entry a sample (a new
        copy each time)."""
        if not self._rows:
            return {}
        out = {}
        for name in self._names:
            values = [r[name] for r in self._rows]
            out[name] = np.asarray(values, dtype=np.uint64 if name == "step" else
                                   np.int64 if name == "agents" else np.float64)
        return out

    def to_csv(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the samples to `path` as CSV: a header, then a row a sample."""
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(self._names)
            for r in self._rows:
                writer.writerow([repr(r[n]) if isinstance(r[n], float) else r[n] for n in self._names])
