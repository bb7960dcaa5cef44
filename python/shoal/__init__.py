"""shoal: a data-oriented, multithreaded crowd and fleet simulator.

    import numpy as np, shoal
    world = shoal.World(dimensions=2, threads=2)
    ids = world.add_agents(np.random.rand(1000, 2) * 100,
                           behaviors={"separate": 1, "align": 1, "cohere": 1, "wander": 1})
    world.step(100)
    xy = world.positions          # (1000, 2) float32, the library's columns, no copy

Columns are numpy arrays over the library's own memory: reading a million
positions costs nothing. They stay valid (and the world alive) as long as
you hold them, but their rows follow storage order: once agents are added
or removed or a step reorders storage, an old array turns read only and
world.check(array) raises StaleArrayError; take a new one (O(1)).
docs/python.md has the whole API.
"""
from ._shoal import (
    BEHAVIORS,
    BusyError,
    CapacityError,
    Error,
    FileError,
    InvalidArgumentError,
    InvalidTypeError,
    NotFoundError,
    OutOfMemoryError,
    ParseError,
    Recorder,
    StaleArrayError,
    StaleHandleError,
    World,
    export,
    navmesh_available,
    population,
    read_recording,
    version,
    view,
)
from ._scenarios import scenario_path, scenarios
from .collect import Collector
from .plot import plot
from .ensemble import ensemble

__all__ = [
    "BEHAVIORS", "BusyError", "CapacityError", "Collector", "Error", "FileError", "InvalidArgumentError",
    "InvalidTypeError", "NotFoundError", "OutOfMemoryError", "ParseError", "Recorder", "StaleArrayError",
    "StaleHandleError", "World", "ensemble", "export", "navmesh_available", "plot", "population", "read_recording",
    "scenario_path", "scenarios", "version", "view",
]
__version__ = version()
