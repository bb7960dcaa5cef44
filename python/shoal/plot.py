"""A recording's traces drawn with matplotlib (python3-matplotlib): the
package's own plot, beside `shoal plot run`'s.

    shoal.plot("run.rec", "traces.png")

Each agent's path from its first frame to its last, colored by group, over
the walls and obstacles the recording holds; a crowd of thousands is drawn
as a uniform sample of at most `max_agents` paths (chosen by global id, so
the same agents every time), the title saying how many of how many."""
import os
from typing import Any, Dict, Optional, Union

import numpy as np


def _sample(keys, count):
    """Indices of at most `count` of `keys`, the smallest by a hash of each
    key (a uniform sample that does not depend on where agents are)."""
    if keys.shape[0] <= count:
        return np.arange(keys.shape[0])
    x = keys.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return np.sort(np.argsort(x, kind="stable")[:count])


def plot(recording: Union[str, "os.PathLike[str]", Dict[str, Any]], out: Optional[Union[str, "os.PathLike[str]"]] = None,
         max_agents: int = 400, ax: Any = None, title: Optional[str] = None) -> Any:
    """Draw the traces of `recording` (a path, or read_recording's dict):
    x and y of every sampled agent's frames (x and z for a 3D recording's
    side view is not drawn here: x, y from above), walls as lines, static
    obstacles as discs and moving ones as their start. out: a file to save
    (PNG, SVG, PDF by its extension) or None; ax: a matplotlib Axes to draw
    on (default: a new figure). Returns the Axes."""
    try:
        import matplotlib
        if ax is None and out is not None and "MPLBACKEND" not in os.environ:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection
        from matplotlib.patches import Circle
    except ImportError:
        raise ImportError("shoal.plot needs matplotlib (Debian: python3-matplotlib)") from None
    from . import read_recording

    r = recording if isinstance(recording, dict) else read_recording(recording)
    if isinstance(max_agents, bool) or not isinstance(max_agents, (int, np.integer)) or max_agents < 1:
        raise ValueError(f"plot: max_agents must be an integer >= 1, got {max_agents!r}")
    keys = r["global_ids"] if r.get("global_ids") is not None else r["ids"]
    cols = _sample(np.asarray(keys), int(max_agents))
    pos = r["positions"][:, cols, :2]
    present = r["present"][:, cols]
    groups = r["groups"][cols]
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 8))
    cmap = plt.get_cmap("tab10")
    for g in np.unique(groups):
        segments = []
        for k in np.nonzero(groups == g)[0]:
            path = pos[present[:, k], k]
            if path.shape[0] >= 2:
                segments.append(path)
        if not segments:
            continue
        alpha = float(np.clip(30.0 / len(segments), 0.15, 0.9))
        names = r.get("group_names") or []
        label = names[g] if g < len(names) else f"group {g}"
        ax.add_collection(LineCollection(segments, colors=[cmap(int(g) % 10)], linewidths=0.8, alpha=alpha,
                                         label=label))
    for x0, y0, x1, y1 in r.get("walls", np.zeros((0, 4))):
        ax.plot([x0, x1], [y0, y1], color="black", linewidth=1.5)
    obstacles = r.get("obstacles")
    if obstacles is not None:
        for c, rad in zip(obstacles["center"], obstacles["radius"]):
            ax.add_patch(Circle((c[0], c[1]), rad, facecolor="0.7", edgecolor="0.3"))
    ax.set_aspect("equal")
    ax.autoscale_view()
    total = r["positions"].shape[1]
    shown = len(cols)
    name = r.get("scenario_name") or "recording"
    ax.set_title(title if title is not None else
                 f"{name}: {shown} of {total} agents" if shown < total else f"{name}: {total} agents")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    if len(np.unique(groups)) > 1:
        ax.legend(loc="best", fontsize="small")
    if out is not None:
        ax.figure.savefig(out, dpi=120, bbox_inches="tight")
    return ax
