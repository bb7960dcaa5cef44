# cython: language_level=3, boundscheck=False, wraparound=False, embedsignature=True
"""The compiled core of the shoal package: worlds, columns as numpy arrays
without copies, bulk agent calls, snapshots and recordings. Import `shoal`,
not this module (shoal/__init__.py re-exports what users need)."""

cimport numpy as cnp
from cpython.bytes cimport PyBytes_AsString, PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from libc.math cimport isfinite

from cpython.ref cimport Py_INCREF

from cshoal cimport *

import difflib
import json
import numbers
import operator
import os
import weakref

import numpy as np

cnp.import_array()

# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class Error(Exception):
    """Base class of every error the library reports. `status` is the
    library's status name ("invalid argument", ...); str() is its message:
    what, where and what was expected."""

    status = "error"


class InvalidArgumentError(Error, ValueError):
    """Bad input: a value out of range, NaN, a wrong shape or name."""

    status = "invalid argument"


class StaleHandleError(Error, LookupError):
    """A handle of a removed agent, the null handle or another world's."""

    status = "stale handle"


class OutOfMemoryError(Error, MemoryError):
    """The library could not get the memory a call needed; nothing changed."""
    status = "out of memory"


class ParseError(Error, ValueError):
    """A file's contents are malformed or invalid."""

    status = "parse error"


class FileError(Error, OSError):
    """A file could not be opened, read or written."""

    status = "i/o error"


class CapacityError(Error, OverflowError):
    """A documented size limit was reached."""

    status = "capacity"


class InvalidTypeError(InvalidArgumentError, TypeError):
    """An argument of the wrong type (a float or a str where an integer is
    needed, a bool where a number is): also a TypeError."""

    status = "invalid argument"


class BusyError(Error, RuntimeError):
    """Not allowed now: the world is in a call in another thread (a step)."""

    status = "busy"


class NotFoundError(Error, LookupError):
    """A named thing (column, system, preset) does not exist."""

    status = "not found"


class StaleArrayError(Error, ValueError):
    """An array taken from a world before its rows moved (agents added or
    removed, or storage reordered by a step)."""

    status = "stale array"


_ERRORS = {
    SHOAL_ERR_INVALID_ARGUMENT: InvalidArgumentError,
    SHOAL_ERR_STALE_HANDLE: StaleHandleError,
    SHOAL_ERR_OUT_OF_MEMORY: OutOfMemoryError,
    SHOAL_ERR_PARSE: ParseError,
    SHOAL_ERR_IO: FileError,
    SHOAL_ERR_CAPACITY: CapacityError,
    SHOAL_ERR_BUSY: BusyError,
    SHOAL_ERR_NOT_FOUND: NotFoundError,
}


def _error(int status, message):
    cls = _ERRORS.get(status, Error)
    if not message:
        message = shoal_status_string(<shoal_status_t>status).decode()
    return cls(message)


cdef inline str _text(const char* s):
    return s.decode("utf-8", "replace") if s != NULL else ""


cdef int _check_err(shoal_status_t status, shoal_error_t* err) except -1:
    if status != SHOAL_OK:
        raise _error(status, _text(err.message))
    return 0


def navmesh_available():
    """Whether the shoal library was built with Recast and Detour, which
    navigation meshes need (World.set_navmesh, the "navmesh" behavior).
    Without them those are refused with NotFoundError saying so."""
    return shoal_navmesh_available() != 0


def version():
    """The version of the shoal library the module is built on."""
    return _text(shoal_version())


def _suggest(name, choices):
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


# ---------------------------------------------------------------------------
# Agent definitions from keyword arguments
# ---------------------------------------------------------------------------

BEHAVIORS = tuple(_text(shoal_behavior_name(i)) for i in range(SHOAL_BEHAVIOR_COUNT_))

# Sections of the agent definition that take a dict of fields, and their
# fields (the library's names, docs/scenarios.md).
_SECTIONS = {
    "vehicle": ("mass", "inertia", "max_force", "max_torque", "max_speed", "max_turn_rate", "radius"),
    "control": ("speed_gain", "heading_gain", "turn_damping"),
    "neighbors": ("radius", "fov", "max_neighbors", "separation_gain", "alignment_gain", "cohesion_gain"),
    "wander": ("cruise_speed", "strength", "noise"),
    "avoid": ("lookahead_time", "gain", "tangential"),
    "crowd": ("neighbor_distance", "max_neighbors", "time_horizon", "time_horizon_walls",
              "responsibility", "preferred_speed", "time_gap", "side_preference"),
    "nav": ("goal", "journey", "arrive_distance", "start_delay"),
    "navmesh": ("goal", "arrive_distance"),
}
_SCALARS = ("arrive_gain", "depart_gain", "contacts")
_VECTORS = ("threat",)


cdef int _set_field(shoal_agent_def_t* d, str section, str field, double v) except -1:
    # One numeric field of the definition by name (names checked before).
    if section == "behaviors":
        d.weights[BEHAVIORS.index(field)] = <float>v
    elif section == "vehicle":
        if field == "mass": d.vehicle.mass = <float>v
        elif field == "inertia": d.vehicle.inertia = <float>v
        elif field == "max_force": d.vehicle.max_force = <float>v
        elif field == "max_torque": d.vehicle.max_torque = <float>v
        elif field == "max_speed": d.vehicle.max_speed = <float>v
        elif field == "max_turn_rate": d.vehicle.max_turn_rate = <float>v
        elif field == "radius": d.vehicle.radius = <float>v
    elif section == "control":
        if field == "speed_gain": d.control.speed_gain = <float>v
        elif field == "heading_gain": d.control.heading_gain = <float>v
        elif field == "turn_damping": d.control.turn_damping = <float>v
    elif section == "neighbors":
        if field == "radius": d.neighbors.radius = <float>v
        elif field == "fov": d.neighbors.fov = <float>v
        elif field == "max_neighbors": d.neighbors.max_neighbors = _int_field(section, field, v)
        elif field == "separation_gain": d.neighbors.separation_gain = <float>v
        elif field == "alignment_gain": d.neighbors.alignment_gain = <float>v
        elif field == "cohesion_gain": d.neighbors.cohesion_gain = <float>v
    elif section == "wander":
        if field == "cruise_speed": d.wander.cruise_speed = <float>v
        elif field == "strength": d.wander.strength = <float>v
        elif field == "noise": d.wander.noise = <float>v
    elif section == "avoid":
        if field == "lookahead_time": d.avoid.lookahead_time = <float>v
        elif field == "gain": d.avoid.gain = <float>v
        elif field == "tangential": d.avoid.tangential = _int_field(section, field, v)
    elif section == "crowd":
        d.crowd.enabled = 1
        if field == "neighbor_distance": d.crowd.neighbor_distance = <float>v
        elif field == "max_neighbors": d.crowd.max_neighbors = _int_field(section, field, v)
        elif field == "time_horizon": d.crowd.time_horizon = <float>v
        elif field == "time_horizon_walls": d.crowd.time_horizon_walls = <float>v
        elif field == "responsibility": d.crowd.responsibility = <float>v
        elif field == "preferred_speed": d.crowd.preferred_speed = <float>v
        elif field == "time_gap": d.crowd.time_gap = <float>v
        elif field == "side_preference": d.crowd.side_preference = <float>v
    elif section == "nav":
        if field == "goal": d.nav.goal = _int_field(section, field, v)
        elif field == "journey": d.nav.journey = _int_field(section, field, v)
        elif field == "arrive_distance": d.nav.arrive_distance = <float>v
        elif field == "start_delay": d.nav.start_delay = <float>v
    elif section == "navmesh":
        if field == "goal.x": d.navmesh.goal[0] = <float>v
        elif field == "goal.y": d.navmesh.goal[1] = <float>v
        elif field == "arrive_distance": d.navmesh.arrive_distance = <float>v
    elif section == "":
        if field == "arrive_gain": d.arrive_gain = <float>v
        elif field == "depart_gain": d.depart_gain = <float>v
        elif field == "contacts": d.contacts = _int_field(section, field, v)
        elif field == "threat.x": d.threat[0] = <float>v
        elif field == "threat.y": d.threat[1] = <float>v
        elif field == "threat.z": d.threat[2] = <float>v
    return 0


cdef int32_t _int_field(str section, str field, double v) except? -1:
    if not isfinite(v) or v != <double><int64_t>v or v < -2147483648.0 or v > 2147483647.0:
        where = f"{section}.{field}" if section else field
        raise InvalidArgumentError(f"{where}: {v!r} is not an integer")
    return <int32_t>v


def _agent_fields(count, dims, behaviors, vehicle, control, neighbors, wander, avoid, crowd, nav, navmesh,
                  extra):
    """Flatten the keyword arguments of add_agents into (section, field,
    value) with each value a float or a float64 array of `count` values."""
    out = []

    def value(where, v):
        a = _array(where, v, np.float64, f"one number or an array of {count} (one per agent)")
        if a.ndim == 0:
            return float(a)
        if a.shape != (count,):
            raise InvalidArgumentError(
                f"{where}: expected one number or an array of {count} (one per agent), got shape {a.shape}")
        return a

    if behaviors is not None:
        if not isinstance(behaviors, dict):
            raise InvalidArgumentError("behaviors: expected a dict of behavior name to weight, "
                                       "e.g. {'seek': 1.0, 'separate': 2.0}")
        for name, w in behaviors.items():
            if name not in BEHAVIORS:
                raise InvalidArgumentError(
                    f"behaviors: unknown behavior '{name}'{_suggest(str(name), BEHAVIORS)}; "
                    f"known: {', '.join(BEHAVIORS)}")
            out.append(("behaviors", name, value(f"behaviors['{name}']", w)))
    for section, given in (("vehicle", vehicle), ("control", control), ("neighbors", neighbors),
                           ("wander", wander), ("avoid", avoid), ("crowd", crowd), ("nav", nav),
                           ("navmesh", navmesh)):
        if given is None or (section == "crowd" and (isinstance(given, str) or isinstance(given, bool))):
            continue  # a crowd preset name or True: _base_def takes it
        if not isinstance(given, dict):
            raise InvalidArgumentError(f"{section}: expected a dict of field to value")
        for field, v in given.items():
            if section == "crowd" and field == "preset":
                continue
            if field not in _SECTIONS[section]:
                raise InvalidArgumentError(
                    f"{section}: unknown field '{field}'{_suggest(str(field), _SECTIONS[section])}; "
                    f"known: {', '.join(_SECTIONS[section])}")
            if section == "navmesh" and field == "goal":
                out.extend(_navmesh_goal(count, v))
                continue
            out.append((section, field, value(f"{section}.{field}", v)))
    for field, v in extra.items():
        if v is None:
            continue
        if field in _VECTORS:
            a = _point(field, v, dims)
            for k, axis in enumerate("xyz"[:dims]):
                out.append(("", f"{field}.{axis}", float(a[k])))
        else:
            out.append(("", field, value(field, v)))
    return out


def _navmesh_goal(count, v):
    """navmesh={"goal": ...}: one point (x, y) for all or an (N, 2) array,
    as the fields goal.x and goal.y."""
    expected = f"a point (x, y) or an array of shape ({count}, 2) (one per agent)"
    a = _array("navmesh.goal", v, np.float64, expected)
    if a.shape == (2,):
        return [("navmesh", "goal.x", float(a[0])), ("navmesh", "goal.y", float(a[1]))]
    if a.shape != (count, 2):
        raise InvalidArgumentError(f"navmesh.goal: expected {expected}, got shape {a.shape}")
    return [("navmesh", "goal.x", np.ascontiguousarray(a[:, 0])),
            ("navmesh", "goal.y", np.ascontiguousarray(a[:, 1]))]


cdef int _base_def(shoal_agent_def_t* d, crowd) except -1:
    cdef shoal_error_t err
    d[0] = shoal_agent_default_def()
    preset = None
    if isinstance(crowd, str):
        preset = crowd
    elif isinstance(crowd, dict):
        preset = crowd.get("preset")
        d.crowd.enabled = 1
    elif crowd is True:
        d.crowd.enabled = 1
    elif crowd is not None and crowd is not False:
        raise InvalidArgumentError("crowd: expected a preset name ('pedestrian', 'rvo2'), a dict or True")
    if preset is not None:
        name = _name("crowd: preset", preset)
        memset(&err, 0, sizeof(err))
        _check_err(shoal_crowd_preset(name, &d.crowd, &d.vehicle, &err), &err)
        d.crowd.enabled = 1
    return 0


# ---------------------------------------------------------------------------
# Arrays over the library's columns
# ---------------------------------------------------------------------------

cdef class _Lease:
    """Keeps the world and the memory blocks behind an array alive. Every
    array handed out has one as its base."""
    cdef readonly World world
    cdef readonly uint64_t version
    cdef void* blocks[4]
    cdef int nblocks

    def __dealloc__(self):
        cdef int i
        if self.world is not None and self.world._pins != NULL:
            for i in range(self.nblocks):
                pins_unpin(self.world._pins, self.blocks[i])


_TYPENUM = {SHOAL_COLUMN_F32: cnp.NPY_FLOAT32, SHOAL_COLUMN_I32: cnp.NPY_INT32,
            SHOAL_COLUMN_U32: cnp.NPY_UINT32, SHOAL_COLUMN_U64: cnp.NPY_UINT64}
_ITEMSIZE = {SHOAL_COLUMN_F32: 4, SHOAL_COLUMN_I32: 4, SHOAL_COLUMN_U32: 4, SHOAL_COLUMN_U64: 8}


# ---------------------------------------------------------------------------
# World
# ---------------------------------------------------------------------------

cdef class World:
    """A simulated world: agents, obstacles, walls and the systems that step
    them (docs/python.md).

    World(dimensions=2, threads=0, seed=1, bounds=None, wrap=False,
          cell_size=0, reorder_interval=32, capacity=1024, dt=1/60)

    threads: 0 takes $SHOAL_THREADS, else the machine's physical cores.
    bounds: ((xmin, ymin[, zmin]), (xmax, ymax[, zmax])); with wrap=True
    the box is a torus. dt is the default step of step().
    """
    cdef shoal_world_t* _w
    cdef pin_table_t* _pins
    cdef readonly float dt
    """The step step() takes when given no dt, seconds (a scenario's dt)."""
    cdef readonly str scenario_name
    """The scenario's name (from_scenario), else ""."""
    cdef readonly int scenario_steps
    """The steps the scenario file asks for (from_scenario), else 0."""
    cdef readonly tuple group_names
    """The scenario's group names in file order: group label k is the k-th."""
    cdef int _busy
    cdef object _views
    cdef tuple _components
    cdef object __weakref__

    def __cinit__(self):
        self._w = NULL
        self._pins = NULL
        self._busy = 0
        self._views = []
        self._components = ()
        self.dt = 1.0 / 60.0
        self.scenario_name = ""
        self.scenario_steps = 0
        self.group_names = ()

    def __init__(self, dimensions=2, threads=0, seed=1, bounds=None, wrap=False,
                 cell_size=0.0, reorder_interval=32, capacity=1024, dt=1.0 / 60.0):
        # A World is created once: a second __init__ would replace the world
        # under arrays, recorders and a step running in another thread.
        if self._busy:
            raise BusyError("World.__init__: the world is in a call in another thread")
        if self._w != NULL:
            raise Error("World.__init__: this World is already created; make a new World instead")
        cdef shoal_world_def_t d = shoal_world_default_def()
        d.dimensions = _int("dimensions", dimensions, -2147483648, 2147483647)
        d.thread_count = _int("threads", threads, -2147483648, 2147483647)
        d.seed = _u64("seed", seed)
        d.wrap = 1 if wrap else 0
        d.cell_size = <float>_real("cell_size", cell_size)
        d.reorder_interval = _int("reorder_interval", reorder_interval, -2147483648, 2147483647)
        d.initial_capacity = _int("capacity", capacity, -2147483648, 2147483647)
        if bounds is not None:
            lo, hi = _bounds(bounds, d.dimensions if d.dimensions in (2, 3) else 3)
            for k in range(3):
                d.bounds_min[k] = lo[k]
                d.bounds_max[k] = hi[k]
        elif wrap:
            raise InvalidArgumentError("wrap=True needs bounds=((xmin, ymin), (xmax, ymax))")
        fdt = _dt(dt)
        self._create(&d)
        self.dt = fdt

    cdef int _hook(self, shoal_world_def_t* d) except -1:
        # The world allocates through the block table (pins.h), so arrays
        # over its columns never see freed memory. A table left by a failed
        # creation holds no block: it is replaced.
        if self._pins != NULL:
            pins_destroy(self._pins)
            self._pins = NULL
        self._pins = pins_create()
        if self._pins == NULL:
            raise MemoryError("shoal: cannot create the world's block table")
        d.alloc = pins_alloc
        d.free = pins_free
        d.alloc_user_ctx = self._pins
        return 0

    cdef int _create(self, shoal_world_def_t* d) except -1:
        # Busy while the GIL is released: no other thread starts a call or
        # a second creation meanwhile, and self._w is set only once the
        # world is whole.
        cdef shoal_error_t err
        cdef shoal_status_t st
        cdef shoal_world_t* w = NULL
        memset(&err, 0, sizeof(err))
        self._hook(d)
        self._busy = 1
        try:
            with nogil:
                st = shoal_world_create(d, &w, &err)
        finally:
            self._busy = 0
        _check_err(st, &err)
        self._w = w
        return 0

    def __dealloc__(self):
        if self._w != NULL:
            shoal_world_destroy(self._w)
            self._w = NULL
        if self._pins != NULL:
            pins_destroy(self._pins)
            self._pins = NULL

    # -- construction from files ------------------------------------------

    @staticmethod
    def from_scenario(path, seed=None, threads=None):
        """A world made and populated from a scenario file (docs/scenarios.md),
        as `shoal run` makes it: its dt becomes the world's default step and
        `scenario_steps` the steps the file asks for. seed and threads
        override the file's. A name that is no file here ("tiny.json",
        "tiny", "scenarios/tiny.json") is one of the scenarios shipped with
        the package (shoal.scenarios()), as `shoal run` finds them."""
        cdef shoal_scenario_t* sc = NULL
        cdef shoal_error_t err
        memset(&err, 0, sizeof(err))
        s = None if seed is None else _u64("seed", seed)
        t = None if threads is None else _int("threads", threads, -2147483648, 2147483647)
        p = _path("from_scenario: path", _shipped_if_missing(path))
        _check_err(shoal_scenario_load_file(p, &sc, &err), &err)
        return World._from_loaded(sc, s, t)

    @staticmethod
    def from_scenario_string(text, seed=None, threads=None, source="<string>"):
        """World.from_scenario for a scenario's JSON text (str or bytes);
        `source` names it in error messages."""
        cdef shoal_scenario_t* sc = NULL
        cdef shoal_error_t err
        memset(&err, 0, sizeof(err))
        b = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        src = str(source).encode("utf-8")
        s = None if seed is None else _u64("seed", seed)
        t = None if threads is None else _int("threads", threads, -2147483648, 2147483647)
        _check_err(shoal_scenario_load_string(b, len(b), src, &sc, &err), &err)
        return World._from_loaded(sc, s, t)

    @staticmethod
    cdef World _from_loaded(shoal_scenario_t* sc, s, t):
        """The world of a loaded scenario, which it destroys."""
        cdef shoal_world_def_t d
        cdef World w = World.__new__(World)
        cdef shoal_status_t st
        try:
            if s is not None:
                shoal_scenario_set_seed(sc, s)
            d = shoal_scenario_world_def(sc)
            if t is not None:
                d.thread_count = t
            w._create(&d)
            with nogil:
                st = shoal_scenario_populate(sc, w._w)
            w._check(st)
            w.dt = shoal_scenario_dt(sc)
            w.scenario_name = _text(shoal_scenario_name(sc))
            w.scenario_steps = shoal_scenario_steps(sc)
            w.group_names = tuple(_text(shoal_scenario_group_name(sc, i))
                                  for i in range(shoal_scenario_group_count(sc)))
        finally:
            shoal_scenario_destroy(sc)
        return w

    @staticmethod
    def load(path, threads=None, dt=1.0 / 60.0):
        """A world loaded from a snapshot file (World.save)."""
        cdef shoal_world_def_t d = shoal_world_default_def()
        cdef World w = World.__new__(World)
        cdef shoal_error_t err
        cdef shoal_status_t st
        memset(&err, 0, sizeof(err))
        if threads is not None:
            d.thread_count = _int("threads", threads, -2147483648, 2147483647)
        cdef bytes pb = _path("load: path", path)
        cdef const char* p = pb
        w.dt = _dt(dt)
        w._hook(&d)
        with nogil:
            st = shoal_world_load_snapshot(p, &d, &w._w, &err)
        _check_err(st, &err)
        return w

    @staticmethod
    def from_bytes(data, threads=None, dt=1.0 / 60.0):
        """A world loaded from snapshot bytes (World.to_bytes)."""
        cdef shoal_world_def_t d = shoal_world_default_def()
        cdef World w = World.__new__(World)
        cdef shoal_error_t err
        cdef const unsigned char[::1] view = memoryview(data).cast("B")
        cdef shoal_status_t st
        memset(&err, 0, sizeof(err))
        if threads is not None:
            d.thread_count = _int("threads", threads, -2147483648, 2147483647)
        w.dt = _dt(dt)
        w._hook(&d)
        cdef size_t n = view.shape[0]
        cdef const void* ptr = &view[0] if n > 0 else NULL
        with nogil:
            st = shoal_world_load_snapshot_memory(ptr, n, &d, &w._w, &err)
        _check_err(st, &err)
        return w

    def save(self, path):
        """Save a snapshot file (bit-exact: loading it and stepping gives the
        same states as stepping this world). Written beside `path` and renamed
        over it, so `path` is never half written."""
        cdef bytes pb = _path("save: path", path)
        cdef const char* p = pb
        cdef shoal_status_t st
        self._enter()
        try:
            with nogil:
                st = shoal_world_save_snapshot(self._w, p)
        finally:
            self._busy = 0
        self._check(st)

    def to_bytes(self):
        """The world's snapshot as bytes."""
        cdef size_t size = 0
        self._enter()
        try:
            self._check(shoal_world_save_snapshot_memory(self._w, NULL, 0, &size))
            out = PyBytes_FromStringAndSize(NULL, size)
            self._check(shoal_world_save_snapshot_memory(self._w, PyBytes_AsString(out), size, &size))
        finally:
            self._busy = 0
        return out

    # -- plumbing ----------------------------------------------------------

    cdef int _check(self, shoal_status_t st) except -1:
        if st != SHOAL_OK:
            raise _error(st, _text(shoal_world_last_error(self._w)))
        return 0

    cdef int _ready(self) except -1:
        # Every call that touches the world goes through here: a world takes
        # one call at a time, and a call made while another thread is in one
        # (a step, with the GIL released) would read or change it mid-way.
        if self._w == NULL:
            raise Error("the World is not created (made with World.__new__, or its __init__ failed)")
        if self._busy:
            raise BusyError("the world is in a call in another thread (a step); "
                            "a world takes one call at a time")
        return 0

    cdef int _enter(self) except -1:
        # _ready, and the world is ours until self._busy = 0: for calls that
        # release the GIL or run Python code between library calls.
        self._ready()
        self._busy = 1
        return 0

    cdef _moved(self):
        # After a call that may have moved rows: arrays of older versions
        # become read only (their rows no longer match the agents).
        cdef uint64_t now = shoal_world_structure_version(self._w)
        keep = []
        for ref, version in self._views:
            a = ref()
            if a is None:
                continue
            if version != now:
                a.flags.writeable = False
            else:
                keep.append((ref, version))
        self._views = keep

    # -- state -------------------------------------------------------------

    @property
    def dimensions(self):
        """2 or 3."""
        self._ready()
        return shoal_world_dimensions(self._w)

    @property
    def threads(self):
        """The world's thread count (threads=0 chose it: $SHOAL_THREADS, else
        the physical cores; each step then runs on them or on the calling
        thread alone, whichever it measured faster)."""
        self._ready()
        return shoal_world_thread_count(self._w)

    @property
    def agent_count(self):
        """Live agents (len(world) too)."""
        self._ready()
        return shoal_world_agent_count(self._w)

    def __len__(self):
        self._ready()
        return shoal_world_agent_count(self._w)

    @property
    def step_count(self):
        """Steps taken since the world was made (a loaded snapshot's count
        goes on)."""
        self._ready()
        return shoal_world_step_count(self._w)

    @property
    def time(self):
        """Simulated seconds."""
        self._ready()
        return shoal_world_time(self._w)

    @property
    def state_hash(self):
        """A 64-bit digest of all simulation state, the same for any thread
        count (the `state_hash` that `shoal run --json` prints)."""
        self._ready()
        return shoal_world_state_hash(self._w)

    @property
    def structure_version(self):
        """Changes whenever rows move (adds, removes, reorders by a step)."""
        self._ready()
        return shoal_world_structure_version(self._w)

    def __repr__(self):
        if self._w == NULL:
            return "<shoal.World (not created)>"
        if self._busy:
            return "<shoal.World (in a call in another thread)>"
        return (f"<shoal.World {self.dimensions}D, {self.agent_count} agents, "
                f"step {self.step_count}, {self.threads} threads>")

    # -- stepping ----------------------------------------------------------

    def step(self, n=1, dt=None):
        """Advance n steps of dt seconds (default: the world's dt). The GIL
        is released while the library runs, so other Python threads go on;
        the world itself takes no other call until the step returns."""
        cdef float fdt = self.dt if dt is None else _dt(dt)
        cdef int64_t count = _int("step: n", n, 0, (1 << 63) - 1)
        cdef int64_t i
        cdef shoal_status_t st = SHOAL_OK
        self._enter()
        try:
            with nogil:
                i = 0
                while i < count:
                    st = shoal_world_step(self._w, fdt)
                    if st != SHOAL_OK:
                        break
                    i += 1
        finally:
            self._busy = 0
            self._moved()
        self._check(st)

    # -- agents ------------------------------------------------------------

    def add_agents(self, positions, *, velocities=None, headings=None, targets=None, groups=None,
                   user_values=None, pitches=None, behaviors=None, vehicle=None, control=None,
                   neighbors=None, wander=None, avoid=None, crowd=None, nav=None, navmesh=None,
                   threat=None, arrive_gain=None, depart_gain=None, contacts=None):
        """Add len(positions) agents in bulk; returns their handles (uint64).

        positions: (N, dims) (a 2D world refuses (N, 3)); velocities, targets
        likewise; headings, pitches (3D), groups, user_values: N values
        (groups and user_values integers in their range). behaviors: {name:
        weight}; vehicle, control, neighbors, wander, avoid, crowd, nav: dicts
        of the library's fields (docs/scenarios.md; nav: goal, an id from
        add_nav_goal, or journey, an id from add_journey, arrive_distance,
        and start_delay, the seconds each stands before it starts, read
        with the "navigate" weight). navmesh: goal, a
        point (x, y) for all or an (N, 2) array, one per agent, and
        arrive_distance, read with the "navmesh" weight.
        Every number may be one value for all or an array of N (agents
        sharing values go in one library call each). crowd: a preset name ('pedestrian', 'rvo2'),
        True, or a dict (with 'preset' optionally). All or nothing: bad
        input adds no agent and leaves the world as it was."""
        self._enter()
        try:
            return self._add(positions, velocities, headings, targets, groups, user_values, pitches,
                             behaviors, vehicle, control, neighbors, wander, avoid, crowd, nav, navmesh,
                             dict(threat=threat, arrive_gain=arrive_gain, depart_gain=depart_gain,
                                  contacts=contacts))
        finally:
            self._busy = 0
            self._moved()

    cdef _add(self, positions, velocities, headings, targets, groups, user_values, pitches,
              behaviors, vehicle, control, neighbors, wander, avoid, crowd, nav, navmesh, extra):
        cdef int dims = shoal_world_dimensions(self._w)
        pos = _points("positions", positions, None, dims)
        cdef Py_ssize_t n = pos.shape[0]
        if n > 2147483647:
            raise InvalidArgumentError(f"positions: {n} agents is more than one call takes (2^31 - 1)")
        vel = _points("velocities", velocities, n, dims)
        tgt = _points("targets", targets, n, dims)
        hd = _per_agent("headings", headings, n, np.float32)
        pt = _per_agent("pitches", pitches, n, np.float32)
        grp = _per_agent("groups", groups, n, np.uint32)
        usr = _per_agent("user_values", user_values, n, np.uint64)
        fields = _agent_fields(n, dims, behaviors, vehicle, control, neighbors, wander, avoid, crowd, nav,
                               navmesh, extra)
        cdef shoal_agent_def_t base
        _base_def(&base, crowd)
        for section, field, v in fields:
            if not isinstance(v, np.ndarray):
                _set_field(&base, section, field, v)
        varying = [(s, f, v) for s, f, v in fields if isinstance(v, np.ndarray)]
        handles = np.zeros(n, dtype=np.uint64)
        if n == 0:
            return handles
        # Agents that share every varying value go in one library call each.
        # All or nothing means nothing at all: a refused call must leave the
        # world as it was (handles, structure version, state hash), which
        # removing the groups already added would not (their slots' next
        # generations), so everything the library would refuse is checked
        # before the first group goes in: the per-agent arrays here, each
        # group's definition by the library (a call with no agents checks
        # the definition and changes nothing).
        _check_arrays(dims, pos, vel, tgt, hd, pt)
        if shoal_world_agent_count(self._w) + n > _MAX_AGENTS:
            raise CapacityError(f"agents_add: at most {_MAX_AGENTS} agents")
        if not varying:
            self._add_rows(&base, pos, vel, tgt, hd, pt, grp, usr, handles, None)
            return handles
        table = np.stack([v for _, _, v in varying], axis=1)
        keys, inverse = np.unique(table, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        cdef shoal_agent_def_t d
        for k in range(keys.shape[0]):
            self._group_def(&base, &d, varying, keys[k])
            self._check(shoal_agents_add(self._w, &d, NULL, 0, NULL))
        added = []
        try:
            for k in range(keys.shape[0]):
                self._group_def(&base, &d, varying, keys[k])
                rows = np.flatnonzero(inverse == k)
                self._add_rows(&d, pos, vel, tgt, hd, pt, grp, usr, handles, rows)
                added.append(rows)
        except BaseException:
            # Only running out of memory gets here (or an interrupt): take
            # back what earlier groups added.
            if added:
                done = np.ascontiguousarray(handles[np.concatenate(added)])
                shoal_agents_remove(self._w, <const shoal_agent_t*>cnp.PyArray_DATA(done),
                                    <int32_t>done.shape[0])
            raise
        return handles

    cdef int _group_def(self, shoal_agent_def_t* base, shoal_agent_def_t* d, varying, key) except -1:
        d[0] = base[0]
        for j, (section, field, _) in enumerate(varying):
            _set_field(d, section, field, float(key[j]))
        return 0

    cdef _add_rows(self, shoal_agent_def_t* d, pos, vel, tgt, hd, pt, grp, usr, handles, rows):
        cdef shoal_agent_arrays_t a
        memset(&a, 0, sizeof(a))
        if rows is not None:
            pos = pos[rows]
            vel = None if vel is None else vel[rows]
            tgt = None if tgt is None else tgt[rows]
            hd = None if hd is None else hd[rows]
            pt = None if pt is None else pt[rows]
            grp = None if grp is None else grp[rows]
            usr = None if usr is None else usr[rows]
        pos = np.ascontiguousarray(pos)
        cdef int32_t count = <int32_t>pos.shape[0]
        a.positions = <const float*>_ptr(pos)
        if vel is not None:
            vel = np.ascontiguousarray(vel)
            a.velocities = <const float*>_ptr(vel)
        if tgt is not None:
            tgt = np.ascontiguousarray(tgt)
            a.targets = <const float*>_ptr(tgt)
        if hd is not None:
            hd = np.ascontiguousarray(hd)
            a.headings = <const float*>_ptr(hd)
        if pt is not None:
            pt = np.ascontiguousarray(pt)
            a.pitches = <const float*>_ptr(pt)
        if grp is not None:
            grp = np.ascontiguousarray(grp)
            a.groups = <const uint32_t*>_ptr(grp)
        if usr is not None:
            usr = np.ascontiguousarray(usr)
            a.user_values = <const uint64_t*>_ptr(usr)
        out = np.zeros(count, dtype=np.uint64)
        cdef shoal_status_t st
        cdef shoal_agent_t* ids = <shoal_agent_t*>_ptr(out)
        with nogil:
            st = shoal_agents_add(self._w, d, &a, count, ids)
        self._check(st)
        if rows is None:
            handles[:] = out
        else:
            handles[rows] = out

    def remove_agents(self, handles):
        """Remove agents by handle; all are checked first (a stale or repeated
        handle removes none)."""
        ids = _handles("handles", handles)
        self._enter()
        try:
            self._check(shoal_agents_remove(self._w, <const shoal_agent_t*>_ptr(ids), <int32_t>ids.shape[0]))
        finally:
            self._busy = 0
            self._moved()

    def set_targets(self, handles, targets):
        """Set the seek/arrive target of each agent: targets (N, dims)."""
        self._ready()
        ids = _handles("handles", handles)
        t = np.ascontiguousarray(_points("targets", targets, ids.shape[0], shoal_world_dimensions(self._w)))
        self._enter()
        try:
            self._check(shoal_agents_set_targets(self._w, <const shoal_agent_t*>_ptr(ids),
                                                 <int32_t>ids.shape[0], <const float*>_ptr(t)))
        finally:
            self._busy = 0

    def teleport(self, handles, positions, velocities=None):
        """Move agents to positions (N, dims), with velocities (default 0)."""
        self._ready()
        cdef int dims = shoal_world_dimensions(self._w)
        ids = _handles("handles", handles)
        p = np.ascontiguousarray(_points("positions", positions, ids.shape[0], dims))
        v = None if velocities is None else np.ascontiguousarray(_points("velocities", velocities, ids.shape[0], dims))
        self._enter()
        try:
            self._check(shoal_agents_teleport(self._w, <const shoal_agent_t*>_ptr(ids), <int32_t>ids.shape[0],
                                              <const float*>_ptr(p),
                                              <const float*>(_ptr(v) if v is not None else NULL)))
        finally:
            self._busy = 0

    def is_valid(self, handle):
        """Whether a handle names a live agent of this world."""
        cdef uint64_t h = _u64("handle", handle)
        self._ready()
        return bool(shoal_agent_is_valid(self._w, (<shoal_agent_t*>&h)[0]))

    def rows(self, handles):
        """The row of each handle in the current storage order (the index
        into every column array); raises for a stale handle."""
        ids = _handles("handles", handles)
        out = np.empty(ids.shape[0], dtype=np.int64)
        cdef const shoal_agent_t* p = <const shoal_agent_t*>_ptr(ids)
        cdef Py_ssize_t i
        cdef int32_t r
        self._enter()
        try:
            for i in range(ids.shape[0]):
                r = shoal_agent_row(self._w, p[i])
                if r < 0:
                    raise _error(SHOAL_ERR_STALE_HANDLE, _text(shoal_world_last_error(self._w)))
                out[i] = r
        finally:
            self._busy = 0
        return out

    def handles(self):
        """Every live agent's handle, in row order (a new array: handles are
        not stored as a column)."""
        cdef int32_t n
        self._enter()
        try:
            n = shoal_world_agent_count(self._w)
            out = np.zeros(n, dtype=np.uint64)
            if n:
                self._check(shoal_world_row_handles(self._w, 0, n, <shoal_agent_t*>_ptr(out)))
        finally:
            self._busy = 0
        return out

    @property
    def global_ids(self):
        """Every live agent's global id, in row order (a new uint64 array):
        given in the order agents were added (0, 1, 2, ...), never reused,
        the same whatever the storage order, kept by snapshots."""
        cdef int32_t n
        cdef int32_t got = 0
        cdef shoal_agent_batch_t b
        memset(&b, 0, sizeof(b))
        self._enter()
        try:
            n = shoal_world_agent_count(self._w)
            out = np.zeros(n, dtype=np.uint64)
            if n:
                b.global_ids = <uint64_t*>_ptr(out)
                self._check(shoal_world_read_agents(self._w, &b, n, &got))
        finally:
            self._busy = 0
        return out

    # -- columns -----------------------------------------------------------

    def column(self, name):
        """The library's column `name` as a numpy array, without copying:
        shape (agents,) or (agents, width) for wider user components.
        Built-in columns are read only (except desired.*); user components
        are writable. Valid while the rows stay where they are: once agents
        are added or removed or a step reorders storage, the array turns read
        only and world.check(array) raises StaleArrayError; take a new one."""
        return self._columns((name,), False)

    @property
    def positions(self):
        """(agents, dims) float32 view of the x, y[, z] position columns: no
        copy (strides span the library's separate columns)."""
        return self._columns(self._axes("position"), True)

    @property
    def velocities(self):
        """(agents, dims) float32 view of the velocity columns: no copy."""
        return self._columns(self._axes("velocity"), True)

    @property
    def targets(self):
        """(agents, dims) float32 view of the target columns: no copy."""
        return self._columns(self._axes("target"), True)

    @property
    def headings(self):
        """(agents,) float32 heading column (2D; the yaw in 3D): no copy."""
        return self._columns(("heading",), False)

    @property
    def orientations(self):
        """(agents, 4) float32 view (w, x, y, z) of a 3D world's orientation
        quaternions: no copy."""
        self._ready()
        if shoal_world_dimensions(self._w) != 3:
            raise NotFoundError("orientations: a 2D world has headings, not quaternions")
        return self._columns(tuple(f"orientation.{a}" for a in "wxyz"), True)

    @property
    def groups(self):
        """(agents,) uint32 group labels: no copy."""
        return self._columns(("group",), False)

    def _axes(self, prefix):
        self._ready()
        return tuple(f"{prefix}.{a}" for a in "xyz"[:shoal_world_dimensions(self._w)])

    def column_names(self):
        """Names of the built-in columns this world has, then user components."""
        names = ["position", "velocity", "heading", "orientation", "angular_velocity", "target",
                 "threat", "desired"]
        out = []
        cdef shoal_column_t c
        self._enter()
        try:
            for base in names:
                for a in ("", ".x", ".y", ".z", ".w"):
                    nm = (base + a).encode()
                    if shoal_world_column(self._w, nm, &c) == SHOAL_OK:
                        out.append(base + a)
        finally:
            self._busy = 0
        for nm in ("max_speed", "radius", "group"):
            out.append(nm)
        out.extend(self._user_names())
        return out

    def _user_names(self):
        return list(self._components)

    cdef _columns(self, names, bint vector):
        self._enter()
        try:
            return self._columns_held(names, vector)
        finally:
            self._busy = 0

    cdef _columns_held(self, names, bint vector):
        cdef shoal_column_t cols[4]
        cdef int k = len(names)
        cdef int i
        for i in range(k):
            nm = _name("column", names[i])
            self._check(shoal_world_column(self._w, nm, &cols[i]))
        cdef cnp.npy_intp shape[2]
        cdef cnp.npy_intp strides[2]
        cdef int nd
        cdef Py_ssize_t item = _ITEMSIZE[cols[0].type]
        cdef Py_ssize_t step = 0
        shape[0] = cols[0].count
        if vector:
            nd = 2
            shape[1] = k
            strides[0] = item
            step = <char*>cols[1].data - <char*>cols[0].data if k > 1 else item
            for i in range(1, k):
                if <char*>cols[i].data - <char*>cols[0].data != i * step:
                    raise Error(f"{names[0]}: the columns are not evenly spaced; read them one by one "
                                f"with world.column()")
            strides[1] = step
        elif cols[0].width > 1:
            nd = 2
            shape[1] = cols[0].width
            strides[0] = item * cols[0].width
            strides[1] = item
        else:
            nd = 1
            strides[0] = item
        cdef _Lease lease = _Lease.__new__(_Lease)
        lease.world = self
        lease.version = cols[0].version
        lease.nblocks = 0
        cdef void* block
        for i in range(k):
            if cols[i].data == NULL:
                continue
            block = pins_pin(self._pins, cols[i].data)
            if block == NULL:
                raise Error(f"{names[i]}: the column is not in a block of this world")
            lease.blocks[lease.nblocks] = block
            lease.nblocks += 1
        cdef int flags = cnp.NPY_ARRAY_ALIGNED
        if cols[0].writable:
            flags |= cnp.NPY_ARRAY_WRITEABLE
        cdef cnp.ndarray arr = <cnp.ndarray>cnp.PyArray_New(np.ndarray, nd, shape, _TYPENUM[cols[0].type],
                                                            strides, cols[0].data, 0, flags, None)
        Py_INCREF(lease)
        cnp.PyArray_SetBaseObject(arr, lease)  # steals the reference
        self._views.append((weakref.ref(arr), cols[0].version))
        if len(self._views) > 256:
            self._views = [(r, v) for r, v in self._views if r() is not None]
        return arr

    def is_current(self, array):
        """Whether an array taken from this world still matches its rows."""
        self._ready()
        base = array
        while base is not None and not isinstance(base, _Lease):
            base = getattr(base, "base", None)
        if base is None or (<_Lease>base).world is not self:
            raise InvalidArgumentError("is_current: the array was not taken from this world")
        return (<_Lease>base).version == shoal_world_structure_version(self._w)

    def check(self, array):
        """Raise StaleArrayError if `array` was taken before the rows moved."""
        if not self.is_current(array):
            raise StaleArrayError("the array was taken before agents were added, removed or reordered; "
                                  "take it again from the world")

    def add_component(self, name, dtype=np.float32, width=1, default=None):
        """Add a user component: a named column every agent has, `width`
        values of dtype (float32, int32, uint32, uint64) per agent, saved in
        snapshots and part of the state hash. Returns its array. `default`:
        one value or `width` values, in the dtype's range."""
        types = {np.dtype(np.float32): SHOAL_COLUMN_F32, np.dtype(np.int32): SHOAL_COLUMN_I32,
                 np.dtype(np.uint32): SHOAL_COLUMN_U32, np.dtype(np.uint64): SHOAL_COLUMN_U64}
        nm = _name("add_component: name", name)
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise InvalidTypeError(f"add_component: dtype {dtype!r} is not a numpy dtype") from None
        if dt not in types:
            raise InvalidArgumentError(f"add_component: dtype {dt} is not one of float32, int32, uint32, uint64")
        cdef shoal_component_def_t d
        d.name = nm
        d.type = types[dt]
        d.width = _int("add_component: width", width, -2147483648, 2147483647)
        d.default_value = NULL
        dv = None
        if default is not None:
            where = "add_component: default"
            wide = max(d.width, 1)
            if dt.kind == "f":
                a = _array(where, default, dt, f"one number or {wide} (the width)")
            else:
                a = _int_array(where, default, dt)
            if a.ndim == 0:
                a = np.broadcast_to(a, (wide,))
            if a.shape != (wide,):
                raise InvalidArgumentError(f"{where}: expected one value or {wide} (the width), got shape {a.shape}")
            dv = np.ascontiguousarray(a)
            d.default_value = cnp.PyArray_DATA(dv)
        self._enter()
        try:
            self._check(shoal_world_add_component(self._w, &d))
        finally:
            self._busy = 0
        self._components = self._components + (name,)
        return self.column(name)

    # -- obstacles and walls ------------------------------------------------

    def add_obstacle(self, center, radius, velocity=None):
        """A sphere (circle in 2D) obstacle; returns its id. velocity makes it
        a moving one."""
        cdef float c[3]
        cdef float v[3]
        cdef int32_t oid = -1
        self._ready()
        cdef int dims = shoal_world_dimensions(self._w)
        _point3("center", center, c, dims)
        if velocity is not None:
            _point3("velocity", velocity, v, dims)
        cdef float r = <float>_real("radius", radius)
        self._enter()
        try:
            if velocity is None:
                self._check(shoal_world_add_obstacle(self._w, c, r, &oid))
            else:
                self._check(shoal_world_add_moving_obstacle(self._w, c, v, r, &oid))
        finally:
            self._busy = 0
        return oid

    def add_wall(self, points, closed=False):
        """A wall (2D): a polyline through points (K, 2), or a closed polygon."""
        p = np.ascontiguousarray(_array("add_wall: points", points, np.float32, "an array of shape (K, 2)"))
        if p.ndim != 2 or p.shape[1] != 2:
            raise InvalidArgumentError(f"add_wall: points must have shape (K, 2), got {p.shape}")
        cdef int32_t wid = -1
        self._enter()
        try:
            self._check(shoal_world_add_wall(self._w, <const float*>_ptr(p), <int32_t>p.shape[0],
                                             1 if closed else 0, &wid))
        finally:
            self._busy = 0
        return wid

    @property
    def obstacle_count(self):
        """Obstacles (circles in 2D, spheres in 3D) in the world."""
        self._ready()
        return shoal_world_obstacle_count(self._w)

    @property
    def wall_count(self):
        """Walls (polylines and polygons, 2D) in the world."""
        self._ready()
        return shoal_world_wall_count(self._w)

    # -- navigation (2D) -----------------------------------------------------

    def set_nav(self, *, cell=None, clearance=None, wall_distance=None, wall_speed=None, bounds=None,
                margin=None, max_bytes=None, density_weight=None, density_interval=None):
        """Set the navigation grid (shoal/nav.h). Every parameter is set: one
        left out (None) takes the library's default, not its value before.

        cell: the cell's side, m (default 0.1); clearance: cells whose center
        is within this of a wall or obstacle are blocked, at least cell / 2
        (0.25); wall_distance: the field's speed falls over this distance from
        blocked cells (0.5, 0 = no slowdown); wall_speed: the speed next to
        them, in (0, 1] (0.5); bounds: ((x0, y0), (x1, y1)) the grid's extent,
        or None for the box of the walls, obstacles and goals widened by
        margin m (2); max_bytes: the most the grid and fields may take (2^30,
        else CapacityError); density_weight: congestion, every density_interval
        steps (20) the fields are solved again with each cell's speed divided
        by 1 + density_weight * (agents per m^2 there) (0 = static). The fields are solved again in the next step
        (or nav_update). Refused (InvalidArgumentError naming the field,
        CapacityError) with the world unchanged."""
        cdef shoal_nav_params_t p = shoal_nav_params_default()
        if cell is not None:
            p.cell = <float>_real("set_nav: cell", cell)
        if clearance is not None:
            p.clearance = <float>_real("set_nav: clearance", clearance)
        if wall_distance is not None:
            p.wall_distance = <float>_real("set_nav: wall_distance", wall_distance)
        if wall_speed is not None:
            p.wall_speed = <float>_real("set_nav: wall_speed", wall_speed)
        if margin is not None:
            p.margin = <float>_real("set_nav: margin", margin)
        if max_bytes is not None:
            p.max_bytes = _real("set_nav: max_bytes", max_bytes)
        if density_weight is not None:
            p.density_weight = <float>_real("set_nav: density_weight", density_weight)
        if density_interval is not None:
            p.density_interval = <int32_t>_int("set_nav: density_interval", density_interval, 1, 1000000)
        if bounds is not None:
            lo, hi = _bounds(bounds, 2)
            p.bounds[0] = lo[0]
            p.bounds[1] = lo[1]
            p.bounds[2] = hi[0]
            p.bounds[3] = hi[1]
        self._enter()
        try:
            self._check(shoal_world_set_nav(self._w, &p))
        finally:
            self._busy = 0

    def get_nav(self):
        """The navigation grid's parameters as a dict of set_nav's keywords
        (bounds None when the grid takes the box of the walls and goals), so
        that world.set_nav(**world.get_nav()) changes nothing."""
        cdef shoal_nav_params_t p
        self._ready()
        self._check(shoal_world_get_nav(self._w, &p))
        box = None
        if p.bounds[0] != 0 or p.bounds[1] != 0 or p.bounds[2] != 0 or p.bounds[3] != 0:
            box = ((p.bounds[0], p.bounds[1]), (p.bounds[2], p.bounds[3]))
        return {"cell": p.cell, "clearance": p.clearance, "wall_distance": p.wall_distance,
                "wall_speed": p.wall_speed, "bounds": box, "margin": p.margin, "max_bytes": p.max_bytes,
                "density_weight": p.density_weight, "density_interval": p.density_interval}

    def add_nav_goal(self, *, point=None, line=None, area=None, exit=False):
        """Add a navigation goal; returns its id (0, 1, 2, ... in the order
        added, never reused). Exactly one of: point=(x, y); line=((x0, y0),
        (x1, y1)), a segment such as an exit, or several segments
        [((x0, y0), (x1, y1)), ...] (up to 8: a building's exits, each
        walker taking the quickest); area=[(x, y), ...], a polygon of 3 to 16
        points. Numpy arrays are taken. exit=True: agents that arrive leave
        the world, counted in nav_stats()["exited"]. Agents go there with
        behaviors={"navigate": w} and nav={"goal": id}. Refused with the
        world unchanged: a 3D world, points not finite, a line of zero length,
        an area of zero area, a goal with no walkable cell once the grid is
        built (inside a wall's clearance), fields beyond max_bytes."""
        given = [(k, v) for k, v in (("point", point), ("line", line), ("area", area)) if v is not None]
        if len(given) != 1:
            raise InvalidArgumentError("add_nav_goal: expected exactly one of point=(x, y), "
                                       "line=((x0, y0), (x1, y1)) or area=[(x, y), ...], got "
                                       + (", ".join(k for k, _ in given) if given else "none"))
        kind, v = given[0]
        cdef shoal_nav_goal_t g
        memset(&g, 0, sizeof(g))
        where = f"add_nav_goal: {kind}"
        if kind == "point":
            a = _array(where, v, np.float32, "a point (x, y)")
            if a.shape != (2,):
                raise InvalidArgumentError(f"{where}: expected a point (x, y), got shape {a.shape}")
            a = a.reshape(1, 2)
            g.kind = SHOAL_NAV_POINT
        elif kind == "line":
            a = _array(where, v, np.float32, "two points ((x0, y0), (x1, y1))")
            if a.ndim == 3 and a.shape[1:] == (2, 2) and 1 <= a.shape[0] <= SHOAL_NAV_GOAL_POINTS // 2:
                a = a.reshape(-1, 2)
            elif a.shape != (2, 2):
                raise InvalidArgumentError(f"{where}: expected two points ((x0, y0), (x1, y1)) or 1 to "
                                           f"{SHOAL_NAV_GOAL_POINTS // 2} segments of two, "
                                           f"got shape {a.shape}")
            g.kind = SHOAL_NAV_LINE
        else:
            expected = f"a polygon of 3 to {SHOAL_NAV_GOAL_POINTS} points, shape (K, 2)"
            a = _array(where, v, np.float32, expected)
            if a.ndim != 2 or a.shape[1] != 2 or not 3 <= a.shape[0] <= SHOAL_NAV_GOAL_POINTS:
                raise InvalidArgumentError(f"{where}: expected {expected}, got shape {a.shape}")
            g.kind = SHOAL_NAV_AREA
        g.count = <int32_t>a.shape[0]
        g.exit = 1 if exit else 0
        for k in range(a.shape[0]):
            g.points[k][0] = a[k, 0]
            g.points[k][1] = a[k, 1]
        cdef int32_t gid = -1
        self._enter()
        try:
            self._check(shoal_world_add_nav_goal(self._w, &g, &gid))
        finally:
            self._busy = 0
        return gid

    def remove_nav_goal(self, goal):
        """Remove a goal: agents navigating to it stop getting a direction
        (NotFoundError for an id that is not a live goal)."""
        cdef int32_t gid = _int("remove_nav_goal: goal", goal, -2147483648, 2147483647)
        self._enter()
        try:
            self._check(shoal_world_remove_nav_goal(self._w, gid))
        finally:
            self._busy = 0

    @property
    def nav_goal_count(self):
        """Goals in the world (removed ones not counted)."""
        self._ready()
        return shoal_world_nav_goal_count(self._w)

    def add_nav_zone(self, polygon, speed_factor):
        """Add a speed zone (stairs, a slow floor); returns its id (0, 1, 2,
        ... in the order added, never reused). polygon: 3 to 16 points
        [(x, y), ...] (a numpy array is taken); speed_factor in (0, 1]: a
        navigating agent's desired speed inside is multiplied by it, and the
        fields count its cells as slower, so that routes go round it when
        that is quicker (docs/nav.md). Refused with the world unchanged: a
        3D world, points not finite, a polygon of zero area, a factor out of
        range."""
        expected = f"a polygon of 3 to {SHOAL_NAV_ZONE_POINTS} points, shape (K, 2)"
        a = _array("add_nav_zone: polygon", polygon, np.float32, expected)
        if a.ndim != 2 or a.shape[1] != 2 or not 3 <= a.shape[0] <= SHOAL_NAV_ZONE_POINTS:
            raise InvalidArgumentError(f"add_nav_zone: polygon: expected {expected}, got shape {a.shape}")
        cdef shoal_nav_zone_t z = shoal_nav_zone_default()
        z.count = <int32_t>a.shape[0]
        z.speed_factor = <float>_real("add_nav_zone: speed_factor", speed_factor)
        for k in range(a.shape[0]):
            z.points[k][0] = a[k, 0]
            z.points[k][1] = a[k, 1]
        cdef int32_t zid = -1
        self._enter()
        try:
            self._check(shoal_world_add_nav_zone(self._w, &z, &zid))
        finally:
            self._busy = 0
        return zid

    def remove_nav_zone(self, zone):
        """Remove a speed zone (NotFoundError for an id that is not a live
        zone)."""
        cdef int32_t zid = _int("remove_nav_zone: zone", zone, -2147483648, 2147483647)
        self._enter()
        try:
            self._check(shoal_world_remove_nav_zone(self._w, zid))
        finally:
            self._busy = 0

    @property
    def nav_zone_count(self):
        """Speed zones in the world (removed ones not counted)."""
        self._ready()
        return shoal_world_nav_zone_count(self._w)

    def nav_update(self):
        """Build the grid and solve every field that is out of date, as the
        next step would: to read fields before the first step, or to pay for
        the solve outside a timed loop. The GIL is released meanwhile."""
        cdef shoal_status_t st
        self._enter()
        try:
            with nogil:
                st = shoal_world_nav_update(self._w)
        finally:
            self._busy = 0
        self._check(st)

    def nav_grid(self):
        """The grid as the last step or nav_update built it: origin (the
        lower-left corner of cell (0, 0)), cell, nx, ny, blocked (cells
        blocked by walls and obstacles), bytes (what the grid and fields
        take). nx = ny = 0 before it is built."""
        cdef shoal_nav_grid_info_t g
        self._ready()
        self._check(shoal_world_nav_grid(self._w, &g))
        return {"origin": (g.origin[0], g.origin[1]), "cell": g.cell, "nx": g.nx, "ny": g.ny,
                "blocked": g.blocked, "bytes": g.bytes}

    cdef _nav_array(self, int32_t goal):
        cdef shoal_nav_grid_info_t g
        cdef int64_t n = 0
        self._enter()
        try:
            self._check(shoal_world_nav_grid(self._w, &g))
            # Checks the goal and that the fields are solved, and gives the size.
            self._check(shoal_world_nav_field(self._w, goal, NULL, 0, &n))
            if n != <int64_t>g.nx * g.ny:
                raise Error(f"nav_field: the library gave {n} cells for a grid of {g.nx} x {g.ny}")
            out = np.empty((g.ny, g.nx), dtype=np.float32)
            if n:
                self._check(shoal_world_nav_field(self._w, goal, <float*>_ptr(out), n, &n))
        finally:
            self._busy = 0
        return out

    def nav_field(self, goal):
        """A goal's travel-time field: a new float32 array of shape (ny, nx),
        out[j, i] the time (m at unit speed) from cell (i, j), whose center is
        origin + ((i + 0.5) cell, (j + 0.5) cell), to the goal round walls;
        inf at blocked cells and cells with no way to the goal. NotFoundError
        for an id that is not a live goal, or when the fields are not solved
        since the last change (step, or call nav_update). The blocked cells
        are nav_blocked()."""
        cdef int32_t gid = _int("nav_field: goal", goal, -2147483648, 2147483647)
        if gid < 0:
            raise InvalidArgumentError(f"nav_field: goal must be a goal id (>= 0), got {gid}; "
                                       f"the blocked cells are nav_blocked()")
        return self._nav_array(gid)

    def nav_blocked(self):
        """The grid's blocked cells: a new bool array of shape (ny, nx), laid
        out as nav_field's. NotFoundError when the grid is not built since the
        last change (step, or call nav_update); a world without goals builds
        none."""
        return self._nav_array(-1) != 0

    def nav_stats(self, goal=-1):
        """How the navigating agents stand after the last step, for one goal
        or (-1) all: agents (with a nonzero "navigate" weight), arrived,
        no_way (walled in, or their goal removed), off_grid, in_walls,
        exited (agents that left through the goal, an exit, so far),
        mean_remaining (the mean travel time, m, left over those not
        arrived)."""
        cdef shoal_nav_stats_t s
        cdef int32_t gid = _int("nav_stats: goal", goal, -2147483648, 2147483647)
        self._ready()
        self._check(shoal_world_nav_stats(self._w, gid, &s))
        return {"agents": s.agents, "arrived": s.arrived, "no_way": s.no_way, "off_grid": s.off_grid,
                "in_walls": s.in_walls, "exited": s.exited, "mean_remaining": s.mean_remaining}

    # -- measurement lines and areas (2D) --------------------------------------

    def add_measure_line(self, a, b, *, name=None, group=None, window=1.0):
        """Add a measurement line, the segment a = (x0, y0) to b = (x1, y1);
        returns its id (0, 1, 2, ... in the order added). It counts, from the
        next step on, every agent whose path in a step crosses it: positive
        from the left of a -> b to its right, negative the other way.
        group: count only agents of that group (an int); None: every agent.
        window: seconds, the width of measure_line_flow's windows.
        name: at most 31 bytes (default "line<id>"). Not state: not saved in
        snapshots, not in the state hash (docs/measure.md)."""
        cdef shoal_measure_line_t l = shoal_measure_line_default()
        pa = _array("add_measure_line: a", a, np.float32, "a point (x, y)")
        pb = _array("add_measure_line: b", b, np.float32, "a point (x, y)")
        if pa.shape != (2,) or pb.shape != (2,):
            raise InvalidArgumentError(f"add_measure_line: expected two points (x, y), got shapes "
                                       f"{pa.shape} and {pb.shape}")
        l.from_[0] = pa[0]
        l.from_[1] = pa[1]
        l.to[0] = pb[0]
        l.to[1] = pb[1]
        l.group = -1 if group is None else _int("add_measure_line: group", group, 0, 4294967295)
        l.window = _real("add_measure_line: window", window)
        cdef bytes raw
        if name is not None:
            raw = _name_bytes("add_measure_line: name", name)
            l.name = raw
        cdef int32_t lid = -1
        self._enter()
        try:
            self._check(shoal_world_add_measure_line(self._w, &l, &lid))
        finally:
            self._busy = 0
        return lid

    def add_measure_area(self, polygon, *, name=None, every=1, group=None, cell_radius=2.0):
        """Add a measurement area, a simple polygon of 3 to 16 points (K, 2)
        in either orientation; returns its id. From the next step on it is
        sampled at the end of every step whose number is a multiple of
        `every`: agents inside, classic density, mean speed, and the Voronoi
        density and speed of Steffen and Seyfried (2010), each agent's cell
        cut to a 32-gon of circumradius cell_radius (m) round it.
        group: count only agents of that group; None: every agent."""
        cdef shoal_measure_area_t ar = shoal_measure_area_default()
        expected = f"a polygon of 3 to {SHOAL_MEASURE_AREA_POINTS} points, shape (K, 2)"
        pts = _array("add_measure_area: polygon", polygon, np.float32, expected)
        if pts.ndim != 2 or pts.shape[1] != 2 or not 3 <= pts.shape[0] <= SHOAL_MEASURE_AREA_POINTS:
            raise InvalidArgumentError(f"add_measure_area: polygon: expected {expected}, got shape {pts.shape}")
        ar.count = <int32_t>pts.shape[0]
        for k in range(pts.shape[0]):
            ar.points[k][0] = pts[k, 0]
            ar.points[k][1] = pts[k, 1]
        ar.every = _int("add_measure_area: every", every, -2147483648, 2147483647)
        ar.group = -1 if group is None else _int("add_measure_area: group", group, 0, 4294967295)
        ar.cell_radius = _real("add_measure_area: cell_radius", cell_radius)
        cdef bytes raw
        if name is not None:
            raw = _name_bytes("add_measure_area: name", name)
            ar.name = raw
        cdef int32_t aid = -1
        self._enter()
        try:
            self._check(shoal_world_add_measure_area(self._w, &ar, &aid))
        finally:
            self._busy = 0
        return aid

    @property
    def measure_line_count(self):
        """Measurement lines in the world."""
        self._ready()
        return shoal_world_measure_line_count(self._w)

    @property
    def measure_area_count(self):
        """Measurement areas in the world."""
        self._ready()
        return shoal_world_measure_area_count(self._w)

    def measure_line(self, line):
        """A line's figures: name, from, to, group (None: every agent),
        window, positive, negative (crossings each way), first_time and
        last_time (s; None with none), start_time, duration (s counted) and
        mean_flow ((positive + negative) / duration, 1/s)."""
        cdef shoal_measure_line_stats_t s
        cdef int32_t lid = _int("measure_line: line", line, -2147483648, 2147483647)
        self._ready()
        self._check(shoal_world_measure_line_stats(self._w, lid, &s))
        return {"name": s.name.decode("utf-8", "replace"), "from": (s.from_[0], s.from_[1]),
                "to": (s.to[0], s.to[1]), "group": None if s.group < 0 else s.group, "window": s.window,
                "positive": s.positive, "negative": s.negative,
                "first_time": None if s.positive + s.negative == 0 else s.first_time,
                "last_time": None if s.positive + s.negative == 0 else s.last_time,
                "start_time": s.start_time, "duration": s.duration, "mean_flow": s.mean_flow}

    def measure_line_crossings(self, line):
        """A line's crossings in time order, as new arrays: time (float64,
        s), step (uint64), direction (int32, +1 or -1), agent (uint64
        handles, as add_agents gives them)."""
        cdef int32_t lid = _int("measure_line_crossings: line", line, -2147483648, 2147483647)
        self._ready()
        cdef int64_t n = shoal_world_measure_line_crossings(self._w, lid, NULL, 0)
        if n < 0:
            self._check(SHOAL_ERR_NOT_FOUND)
        raw = np.zeros(n, dtype=_CROSSING_DTYPE)
        if n:
            shoal_world_measure_line_crossings(self._w, lid, <shoal_measure_crossing_t*>_ptr(raw), n)
        return {"time": raw["time"].copy(), "step": raw["step"].copy(), "direction": raw["direction"].copy(),
                "agent": raw["agent"].copy()}

    def measure_line_flow(self, line):
        """The flow over time: a new float64 array, element k the crossings
        (both ways) in window [start + k window, start + (k + 1) window)
        divided by the window, 1/s; up to the window of the present."""
        cdef int32_t lid = _int("measure_line_flow: line", line, -2147483648, 2147483647)
        self._ready()
        cdef int64_t n = shoal_world_measure_line_flow(self._w, lid, NULL, 0)
        if n < 0:
            self._check(SHOAL_ERR_NOT_FOUND)
        out = np.zeros(n, dtype=np.float64)
        if n:
            shoal_world_measure_line_flow(self._w, lid, <double*>_ptr(out), n)
        return out

    def measure_area(self, area, t0=float("-inf"), t1=float("inf")):
        """An area's figures, means over its samples at times in [t0, t1]:
        name, area (m^2), every, group, cell_radius, samples (in the window),
        total_samples, mean_count, mean_density, mean_voronoi_density
        (1/m^2), mean_speed (over samples with somebody inside),
        mean_voronoi_speed (m/s)."""
        cdef shoal_measure_area_stats_t s
        cdef int32_t aid = _int("measure_area: area", area, -2147483648, 2147483647)
        self._ready()
        self._check(shoal_world_measure_area_stats(self._w, aid, float(t0), float(t1), &s))
        return {"name": s.name.decode("utf-8", "replace"), "area": s.area, "every": s.every,
                "group": None if s.group < 0 else s.group, "cell_radius": s.cell_radius,
                "samples": s.samples, "total_samples": s.total_samples, "mean_count": s.mean_count,
                "mean_density": s.mean_density, "mean_voronoi_density": s.mean_voronoi_density,
                "mean_speed": s.mean_speed, "mean_voronoi_speed": s.mean_voronoi_speed}

    def measure_area_samples(self, area):
        """An area's samples in order, as new arrays: time (float64, s, the
        step's end), step (uint64), count (int32), density,
        voronoi_density (float32, 1/m^2), speed, voronoi_speed (float32,
        m/s)."""
        cdef int32_t aid = _int("measure_area_samples: area", area, -2147483648, 2147483647)
        self._ready()
        cdef int64_t n = shoal_world_measure_area_samples(self._w, aid, NULL, 0)
        if n < 0:
            self._check(SHOAL_ERR_NOT_FOUND)
        raw = np.zeros(n, dtype=_SAMPLE_DTYPE)
        if n:
            shoal_world_measure_area_samples(self._w, aid, <shoal_measure_sample_t*>_ptr(raw), n)
        return {k: raw[k].copy() for k in ("time", "step", "count", "density", "voronoi_density", "speed",
                                           "voronoi_speed")}

    # -- navigation meshes (2D, a build with Recast) --------------------------

    def set_navmesh(self, *, cell=None, agent_radius=None, bounds=None, margin=None, replans_per_step=None,
                    replan_interval=None, off_path_distance=None):
        """Set the navigation mesh's parameters (shoal/navmesh.h). Every
        parameter is set: one left out (None) takes the library's default,
        not its value before.

        cell: Recast's cell, m, 0.02 to 10 (default 0.1); agent_radius: the
        mesh keeps this far from walls and obstacles, > 0 (0.25);
        bounds: ((x0, y0), (x1, y1)) the floor, or None for the box of the
        walls and static obstacles widened by margin m (2);
        replans_per_step: the most paths planned in a step, 1 to 1000000
        (64); replan_interval: plan again after this many steps, 0 to
        1000000, 0 = only when needed (100); off_path_distance: plan again
        when farther than this from the way to the next corner, > 0 (1).
        The mesh is baked again before the next step (or navmesh_update).
        Refused (InvalidArgumentError naming the field, CapacityError for a
        floor too large, NotFoundError in a build without Recast, see
        shoal.navmesh_available()) with the world unchanged."""
        cdef shoal_navmesh_params_t p = shoal_navmesh_params_default()
        if cell is not None:
            p.cell = <float>_real("set_navmesh: cell", cell)
        if agent_radius is not None:
            p.agent_radius = <float>_real("set_navmesh: agent_radius", agent_radius)
        if margin is not None:
            p.margin = <float>_real("set_navmesh: margin", margin)
        if replans_per_step is not None:
            p.replans_per_step = <int32_t>_int("set_navmesh: replans_per_step", replans_per_step,
                                               -2147483648, 2147483647)
        if replan_interval is not None:
            p.replan_interval = <int32_t>_int("set_navmesh: replan_interval", replan_interval,
                                              -2147483648, 2147483647)
        if off_path_distance is not None:
            p.off_path_distance = <float>_real("set_navmesh: off_path_distance", off_path_distance)
        if bounds is not None:
            lo, hi = _bounds(bounds, 2)
            p.bounds[0] = lo[0]
            p.bounds[1] = lo[1]
            p.bounds[2] = hi[0]
            p.bounds[3] = hi[1]
        self._enter()
        try:
            self._check(shoal_world_set_navmesh(self._w, &p))
        finally:
            self._busy = 0

    def get_navmesh(self):
        """The navigation mesh's parameters as a dict of set_navmesh's
        keywords (bounds None when the floor is the box of the walls), so
        that world.set_navmesh(**world.get_navmesh()) changes nothing."""
        cdef shoal_navmesh_params_t p
        self._ready()
        self._check(shoal_world_get_navmesh(self._w, &p))
        box = None
        if p.bounds[0] != 0 or p.bounds[1] != 0 or p.bounds[2] != 0 or p.bounds[3] != 0:
            box = ((p.bounds[0], p.bounds[1]), (p.bounds[2], p.bounds[3]))
        return {"cell": p.cell, "agent_radius": p.agent_radius, "bounds": box, "margin": p.margin,
                "replans_per_step": p.replans_per_step, "replan_interval": p.replan_interval,
                "off_path_distance": p.off_path_distance}

    def navmesh_update(self):
        """Bake the navigation mesh now if it is out of date, as the next
        step would (CapacityError for a floor too large for Recast). The GIL
        is released meanwhile."""
        cdef shoal_status_t st
        self._enter()
        try:
            with nogil:
                st = shoal_world_navmesh_update(self._w)
        finally:
            self._busy = 0
        self._check(st)

    def navmesh_path(self, start, goal):
        """The whole path the navigation mesh gives from start (x, y) to goal
        (x, y), each taken to the mesh's nearest point within 2 m: a new
        float32 array (K, 2) of its corners, the first the start's point on
        the mesh, the last the path's end, and whether that end falls short
        of the goal (no way there): (points, partial). For a ground
        vehicle's path, or a host's own use. Bakes the mesh first if it is
        out of date. NotFoundError when an end has no polygon within 2 m
        (or without Recast and Detour)."""
        cdef float a[2]
        cdef float b[2]
        cdef int32_t n = 0, partial = 0, room
        cdef float[:, ::1] view
        s = _point("navmesh_path: start", start, 2)
        g = _point("navmesh_path: goal", goal, 2)
        a[0] = s[0]
        a[1] = s[1]
        b[0] = g[0]
        b[1] = g[1]
        self._ready()
        self._check(shoal_world_navmesh_path(self._w, a, b, NULL, 0, &n, &partial))
        out = np.zeros((max(n, 1), 2), dtype=np.float32)
        view = out
        room = n
        self._check(shoal_world_navmesh_path(self._w, a, b, &view[0, 0], room, &n, &partial))
        return out[:n], bool(partial)

    def navmesh_stats(self):
        """How the agents with the "navmesh" behavior stand after the last
        step: agents, arrived (within arrive_distance of their path's end),
        no_way (at the end of a path that stops short of the goal),
        off_mesh (no polygon within 2 m of them or their goal: straight for
        the goal), waiting (no path yet), and of the mesh and the last step:
        polygons (0: none baked), replans (paths planned), pending (agents
        that wanted a path and did not get one)."""
        cdef shoal_navmesh_stats_t s
        self._ready()
        self._check(shoal_world_navmesh_stats(self._w, &s))
        return {"agents": s.agents, "arrived": s.arrived, "no_way": s.no_way, "off_mesh": s.off_mesh,
                "waiting": s.waiting, "polygons": s.polygons, "replans": s.replans, "pending": s.pending}

    def add_journey(self, stages):
        """Add a journey: a list of 1 to 16 stages, each a dict {"goal": a
        goal id, "wait": seconds to stay once arrived (0), "then": how to
        move on ("end")}; returns its id (0, 1, 2, ... in the order added;
        journeys cannot be removed). "then" is "end" (stay at the goal),
        ("fixed", i) (to stage i), ("round_robin", [(i, weight), ...]) (1 to
        4 stages in turn, weight agents to each in a round), or ("quickest",
        [i, ...]) (1 to 4: the stage whose goal the agent would reach
        soonest). A stage at an exit goal ends the journey there. Agents take
        one with behaviors={"navigate": w}, nav={"journey": id}; they start
        at stage 0. Refused (InvalidArgumentError naming the stage and key,
        InvalidTypeError, CapacityError) with the world unchanged."""
        cdef shoal_journey_t j
        memset(&j, 0, sizeof(j))
        if isinstance(stages, (str, bytes, dict)) or not hasattr(stages, "__len__"):
            raise InvalidTypeError(f"add_journey: stages: expected a list of stage dicts, got {_describe(stages)}")
        if not 1 <= len(stages) <= SHOAL_JOURNEY_STAGES:
            raise InvalidArgumentError(f"add_journey: stages: expected 1 to {SHOAL_JOURNEY_STAGES} stages, "
                                       f"got {len(stages)}")
        n = len(stages)
        j.count = <int32_t>n
        for s, stage in enumerate(stages):
            where = f"add_journey: stages[{s}]"
            if not isinstance(stage, dict):
                raise InvalidTypeError(f"{where}: expected a dict with 'goal', 'wait', 'then', got {_describe(stage)}")
            for key in stage:
                if key not in ("goal", "wait", "then"):
                    raise InvalidArgumentError(f"{where}: unknown key {key!r}"
                                               f"{_suggest(str(key), ('goal', 'wait', 'then'))}; "
                                               f"known: goal, wait, then")
            if "goal" not in stage:
                raise InvalidArgumentError(f"{where}: 'goal' is required (a goal id from add_nav_goal)")
            j.stages[s].goal = <int32_t>_int(f"{where}.goal", stage["goal"], -2147483648, 2147483647)
            j.stages[s].wait = <float>_real(f"{where}.wait", stage.get("wait", 0.0))
            self._transition(where + ".then", stage.get("then", "end"), n, &j.stages[s])
        cdef int32_t jid = -1
        self._enter()
        try:
            self._check(shoal_world_add_journey(self._w, &j, &jid))
        finally:
            self._busy = 0
        return jid

    cdef int _transition(self, where, then, int n, shoal_journey_stage_t* st) except -1:
        kinds = ("end", "fixed", "round_robin", "quickest")
        expected = ('"end", ("fixed", i), ("round_robin", [(i, weight), ...]) or '
                    '("quickest", [i, ...])')
        if isinstance(then, str):
            if then != "end":
                raise InvalidArgumentError(f"{where}: expected {expected}, got {then!r}"
                                           f"{_suggest(then, kinds)}")
            st.transition = SHOAL_TRANSITION_END
            st.next_count = 0
            return 0
        if not isinstance(then, (tuple, list)) or len(then) != 2 or not isinstance(then[0], str):
            raise InvalidTypeError(f"{where}: expected {expected}, got {_describe(then)}")
        kind, arg = then
        if kind not in kinds[1:]:
            raise InvalidArgumentError(f"{where}: unknown transition {kind!r}{_suggest(kind, kinds)}; "
                                       f"expected {expected}")
        if kind == "fixed":
            st.transition = SHOAL_TRANSITION_FIXED
            st.next_count = 1
            st.next[0] = <int32_t>_int(f"{where}: fixed", arg, 0, n - 1)
            return 0
        if isinstance(arg, (str, bytes, dict)) or not hasattr(arg, "__len__"):
            raise InvalidTypeError(f"{where}: {kind}: expected a list of 1 to {SHOAL_JOURNEY_NEXT} "
                                   f"{'(stage, weight) pairs' if kind == 'round_robin' else 'stages'}, "
                                   f"got {_describe(arg)}")
        if not 1 <= len(arg) <= SHOAL_JOURNEY_NEXT:
            raise InvalidArgumentError(f"{where}: {kind}: expected 1 to {SHOAL_JOURNEY_NEXT} candidates, "
                                       f"got {len(arg)}")
        st.next_count = <int32_t>len(arg)
        if kind == "quickest":
            st.transition = SHOAL_TRANSITION_QUICKEST
            for k, i in enumerate(arg):
                st.next[k] = <int32_t>_int(f"{where}: quickest[{k}]", i, 0, n - 1)
            return 0
        st.transition = SHOAL_TRANSITION_ROUND_ROBIN
        for k, pair in enumerate(arg):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise InvalidTypeError(f"{where}: round_robin[{k}]: expected (stage, weight), "
                                       f"got {_describe(pair)}")
            st.next[k] = <int32_t>_int(f"{where}: round_robin[{k}] stage", pair[0], 0, n - 1)
            st.next_weight[k] = <int32_t>_int(f"{where}: round_robin[{k}] weight", pair[1], 1, 1000000)
        return 0

    @property
    def journey_count(self):
        """Journeys in the world."""
        self._ready()
        return shoal_world_journey_count(self._w)

    def nav_state(self, handles):
        """Where navigating agents stand after the last step, one entry per
        handle: a dict of new arrays goal (int32: the goal each heads for, its
        journey's stage's on a journey), stage (int32: its journey's stage,
        -1 without one), status (int32: 0 moving, 1 arrived, 2 no way, 3 off
        the grid, 4 in a wall's clearance), remaining (float32: travel time,
        m at unit speed, left to the goal; inf unknown), waited (float32:
        seconds waited at the stage's goal) and delay (float32: seconds it
        still stands before it starts, nav={"start_delay": ...}; 0 once
        walking). StaleHandleError for a handle
        that is not live (an agent that left through an exit among them),
        NotFoundError for an agent that does not navigate."""
        ids = _handles("handles", handles)
        cdef Py_ssize_t n = ids.shape[0], i
        goal = np.empty(n, dtype=np.int32)
        stage = np.empty(n, dtype=np.int32)
        status = np.empty(n, dtype=np.int32)
        remaining = np.empty(n, dtype=np.float32)
        waited = np.empty(n, dtype=np.float32)
        delay = np.empty(n, dtype=np.float32)
        cdef const shoal_agent_t* p = <const shoal_agent_t*>_ptr(ids)
        cdef shoal_nav_agent_t a
        cdef shoal_status_t st
        self._enter()
        try:
            for i in range(n):
                st = shoal_agent_get_nav_state(self._w, p[i], &a)
                if st != SHOAL_OK:
                    raise _error(st, f"nav_state: handles[{i}]: {_text(shoal_world_last_error(self._w))}")
                goal[i] = a.goal
                stage[i] = a.stage
                status[i] = a.status
                remaining[i] = a.remaining
                waited[i] = a.waited
                delay[i] = a.delay
        finally:
            self._busy = 0
        return {"goal": goal, "stage": stage, "status": status, "remaining": remaining, "waited": waited,
                "delay": delay}

    # -- statistics ----------------------------------------------------------

    def system_stats(self):
        """One dict per system, in the order they run: name, stage, enabled,
        calls, ns_total, agents, ms_per_call."""
        cdef shoal_system_stats_t s
        out = []
        self._enter()
        try:
            for i in range(shoal_world_system_count(self._w)):
                self._check(shoal_world_system_stats(self._w, i, &s))
                out.append({"name": _text(s.name), "stage": _text(shoal_stage_name(s.stage)),
                            "enabled": bool(s.enabled), "calls": s.calls, "ns_total": s.ns_total,
                            "agents": s.agents,
                            "ms_per_call": (s.ns_total / s.calls / 1e6) if s.calls else 0.0})
        finally:
            self._busy = 0
        return out

    def reset_stats(self):
        self._ready()
        shoal_world_reset_stats(self._w)

    def set_system_enabled(self, name, enabled=True):
        nm = _name("set_system_enabled: name", name)
        self._ready()
        self._check(shoal_world_set_system_enabled(self._w, nm, 1 if enabled else 0))

    def crowd_stats(self):
        """Crowd agents' figures: agents, arrived, closest_pair (over the sum
        of radii, every pair), overlapping, relaxed_last_step,
        contact_iterations, wall_penetration (the deepest a body reaches into
        a wall, over its radius) and in_walls (agents over 1 % of it)."""
        cdef shoal_crowd_stats_t s
        self._ready()
        self._check(shoal_world_crowd_stats(self._w, &s))
        return {"agents": s.agents, "arrived": s.arrived, "closest_pair": s.closest_pair,
                "overlapping": s.overlapping, "relaxed_last_step": s.relaxed_last_step,
                "contact_iterations": s.contact_iterations,
                "wall_penetration": s.wall_penetration, "in_walls": s.in_walls}

    def _blocks_kept(self):
        """(blocks whose free was put off for an array, blocks waiting now):
        for tests."""
        if self._pins == NULL:
            raise Error("the World is not created (made with World.__new__, or its __init__ failed)")
        return pins_kept(self._pins), pins_waiting(self._pins)

    # -- recordings ----------------------------------------------------------

    def record(self, path, every=1):
        """A Recorder writing this world's frames to `path` (see Recorder)."""
        self._ready()
        return Recorder(self, path, every)


# ---------------------------------------------------------------------------
# Recordings
# ---------------------------------------------------------------------------

cdef class Recorder:
    """Writes a world's frames to a recording file (docs/recording.md):
    call frame() between steps, or step(n) to step and record every
    `every` steps; close() (or a with block) ends the file."""
    cdef shoal_recorder_t* _r
    cdef World _world
    cdef readonly int every
    """Steps between frames that step(n) records."""

    def __cinit__(self, World world not None, path, every=1):
        cdef shoal_recording_header_t h = shoal_recording_default_header()
        cdef shoal_error_t err
        memset(&err, 0, sizeof(err))
        cdef int32_t k = _int("every", every, -2147483648, 2147483647)
        if k < 1:
            raise InvalidArgumentError(f"every must be >= 1, got {k}")
        p = _path("record: path", path)
        world._ready()
        self._world = world
        self.every = k
        h.dimensions = shoal_world_dimensions(world._w)
        h.dt = world.dt
        h.record_every = k
        name = world.scenario_name.encode()
        groups = "\n".join(world.group_names).encode()
        h.scenario_name = name
        h.group_names = groups
        # A world with navigation goals records their fields (format
        # version 5, as `shoal run --record` does); without, version 4.
        version = 5 if shoal_world_nav_goal_count(world._w) > 0 else 4
        _check_err(shoal_recording_open_version(p, &h, version, &self._r, &err), &err)

    def frame(self):
        """Append the world as it is now."""
        cdef shoal_error_t err
        cdef shoal_status_t st
        memset(&err, 0, sizeof(err))
        if self._r == NULL:
            raise Error("the recorder is closed")
        # The GIL stays held: close() in another thread must not free the
        # recorder under the write.
        self._world._enter()
        try:
            st = shoal_recording_write_frame(self._r, self._world._w, &err)
        finally:
            self._world._busy = 0
        _check_err(st, &err)

    def step(self, n=1, dt=None):
        """Step the world n times, writing a frame every `every` steps (and
        one before the first step when nothing is written yet)."""
        cdef int64_t count = _int("Recorder.step: n", n, 0, (1 << 63) - 1)
        if self._r == NULL:
            raise Error("the recorder is closed")
        if shoal_recording_frames_written(self._r) == 0:
            self.frame()
        for i in range(count):
            self._world.step(1, dt)
            if self._world.step_count % self.every == 0:
                self.frame()

    @property
    def frames(self):
        """Frames written so far."""
        return shoal_recording_frames_written(self._r) if self._r != NULL else 0

    def close(self):
        cdef shoal_error_t err
        memset(&err, 0, sizeof(err))
        if self._r != NULL:
            r = self._r
            self._r = NULL
            _check_err(shoal_recording_close(r, &err), &err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __dealloc__(self):
        if self._r != NULL:
            shoal_recording_close(self._r, NULL)


def _plain(v):
    """numpy arrays and numbers as JSON's lists and numbers."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def population(count, spawn=None, distributions=None, *, vehicle=None, crowd=None, walls=None, seed=1):
    """Positions and per-agent values of `count` agents placed and drawn as a
    scenario file's group places and draws them (docs/scenarios.md: the same
    code, so the same file's group gets the same values for the same seed):

        pop = shoal.population(500, {"shape": "polygon", "points": corners,
                                     "placement": "lattice", "min_spacing": 0.6},
                               {"crowd.preferred_speed": {"normal": {"mean": 1.34, "sd": 0.26},
                                                          "min": 0.46, "max": 1.61}},
                               crowd="pedestrian", walls=[wall_points], seed=7)
        ids = world.add_agents(**pop, behaviors={"seek": 1}, targets=goal)

    spawn: the group's "spawn" object (shape, center, radius, size, points,
    placement, min_spacing, heading, speed); distributions: its
    "distributions" object; vehicle: a dict of vehicle fields; crowd: a
    preset name, True or a dict, as add_agents takes it; walls: arrays of
    points (N, 2), or dicts {"points": ..., "closed": bool}, that min_spacing
    keeps a radius clear of (they are not added to any world). 2D.
    Returns a dict of add_agents' keyword arguments: positions (count, 2),
    headings and velocities, vehicle (radius and max_speed one per agent,
    and the vehicle fields given), and crowd (when given: the preset or
    fields given, and preferred_speed and time_gap one per agent). A file's
    error is raised as ParseError naming the key ("spawn.points: ..."); an
    area that cannot take count agents, as CapacityError."""
    n = _int("count", count, 0, 100000000)
    group = {"name": "population", "count": n}
    if spawn is not None:
        group["spawn"] = _plain(spawn)
    if distributions is not None:
        group["distributions"] = _plain(distributions)
    if vehicle is not None:
        group["vehicle"] = _plain(vehicle)
    crowd_given = crowd is not None and crowd is not False
    if crowd_given:
        if isinstance(crowd, str):
            group["crowd"] = {"preset": crowd}
        elif crowd is True:
            group["crowd"] = {}
        else:
            group["crowd"] = _plain(crowd)
    scenario = {"dimensions": 2, "seed": _u64("seed", seed), "steps": 0, "groups": [group]}
    if walls is not None:
        ws = []
        for wall in walls:
            ws.append(_plain(wall) if isinstance(wall, dict) else {"points": _plain(np.asarray(wall))})
        scenario["walls"] = ws
    try:
        text = json.dumps(scenario, allow_nan=True)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"population: {e}") from None
    try:
        w = World.from_scenario_string(text, threads=1, source="population")
    except Error as e:
        # The scenario is this call's: name the keys as the caller gave them.
        msg = (str(e).replace("scenario_populate: group 'population' (groups[0])", "population")
               .replace("groups[0].", ""))
        raise type(e)(msg) from None
    cdef World world = w
    cdef int32_t i
    cdef shoal_agent_def_t d
    handles = world.handles()
    cdef shoal_agent_t* ids = <shoal_agent_t*>_ptr(handles)
    radius = np.empty(n, np.float32)
    max_speed = np.empty(n, np.float32)
    preferred = np.empty(n, np.float32)
    gap = np.empty(n, np.float32)
    positions = np.empty((n, 2), np.float32)
    velocities = np.empty((n, 2), np.float32)
    headings = np.empty(n, np.float32)
    for i in range(n):
        world._check(shoal_agent_get_def(world._w, ids[i], &d))
        positions[i, 0] = d.position[0]
        positions[i, 1] = d.position[1]
        velocities[i, 0] = d.velocity[0]
        velocities[i, 1] = d.velocity[1]
        headings[i] = d.heading
        radius[i] = d.vehicle.radius
        max_speed[i] = d.vehicle.max_speed
        preferred[i] = d.crowd.preferred_speed
        gap[i] = d.crowd.time_gap
    out = {"positions": positions, "velocities": velocities, "headings": headings}
    veh = dict(vehicle) if vehicle is not None else {}
    veh["radius"] = radius
    veh["max_speed"] = max_speed
    out["vehicle"] = veh
    if crowd_given:
        cr = {"preset": crowd} if isinstance(crowd, str) else {} if crowd is True else dict(crowd)
        cr["preferred_speed"] = preferred
        cr["time_gap"] = gap
        out["crowd"] = cr
    return out


def export(recording, csv=None, sqlite=None, force=False):
    """Write a recording's trajectories as `shoal export` writes them (the
    same code; docs/export.md): csv, a path for the CSV (every agent of every
    frame: ids, global id, group, position, heading or quaternion, speed);
    sqlite, a path for JuPedSim's trajectory database, which PedPy reads
    (2D; the walkable area has the walls when the package was built with
    GEOS). Each file is written whole or not at all; an existing one is
    kept unless force. The recording must be complete. Returns a dict a
    file: {path: {"rows", "frames", "frames_skipped", "obstacles_cut",
    "obstacles_kept_out"}}."""
    cdef shoal_recording_reader_t* rd = NULL
    cdef shoal_error_t err
    cdef export_summary_t summary
    cdef char msg[1024]
    cdef int rc
    cdef export_format_t fmt
    cdef const char* cout
    cdef int f = 1 if force else 0
    memset(&err, 0, sizeof(err))
    targets = []
    if csv is not None:
        targets.append((EXPORT_CSV, _path("export: csv", csv)))
    if sqlite is not None:
        targets.append((EXPORT_SQLITE, _path("export: sqlite", sqlite)))
    if not targets:
        raise InvalidArgumentError("export: nothing to write: give csv=PATH, sqlite=PATH or both")
    if len(targets) == 2 and targets[0][1] == targets[1][1]:
        raise InvalidArgumentError("export: csv and sqlite name the same file")
    if sqlite is not None and not export_sqlite_available():
        raise InvalidArgumentError("export: sqlite: this package was built without SQLite (install "
                                   "libsqlite3-dev and build it again); csv works")
    p = _path("export: recording", recording)
    # Every check that can fail before anything is written, for every file
    for fmt_value, out in targets:
        fmt = fmt_value
        if export_check_target(fmt, out, f, msg, sizeof(msg)) != 0:
            text = msg.decode('utf-8', 'replace').replace("give --force", "give force=True")
            raise FileError(f"export: {text}")
    _check_err(shoal_recording_reader_open(p, 0, &rd, &err), &err)
    result = {}
    try:
        for fmt_value, out in targets:
            fmt = fmt_value
            if export_check_dimensions(fmt, shoal_recording_reader_header(rd).dimensions, msg, sizeof(msg)) != 0:
                raise InvalidArgumentError(f"export: {out.decode('utf-8', 'replace')}: "
                                           f"{msg.decode('utf-8', 'replace')}")
        for fmt_value, out in targets:
            fmt = fmt_value
            memset(&summary, 0, sizeof(summary))
            cout = out
            with nogil:
                rc = export_write(fmt, rd, cout, f, &summary, msg, sizeof(msg))
            if rc != 0:
                raise FileError(f"export: {msg.decode('utf-8', 'replace')}")
            result[os.fsdecode(out)] = {"rows": summary.rows, "frames": summary.frames,
                                        "frames_skipped": summary.frames_skipped,
                                        "obstacles_cut": summary.obstacles_cut,
                                        "obstacles_kept_out": summary.obstacles_kept_out}
    finally:
        shoal_recording_reader_close(rd)
    return result


def view(recording, out=None, every=None, max_agents=None):
    """Write the page `shoal view` writes (the same code): one HTML file,
    no network or server, that plays the recording in a browser (a 2D top
    view and a 3D orbit view, trails, colors, an agent's figures on a click;
    docs/recording.md). out: the page's path (default: the recording's
    path + ".html"); every: every N-th frame; max_agents: at most M agents a
    frame (a uniform sample). Without either, a recording whose page would
    pass 128 MiB is thinned to fit, as the command does. A recording cut
    short gives a page of its complete frames. Returns the page's path."""
    cdef shoal_recording_reader_t* rd = NULL
    cdef shoal_error_t err
    cdef view_page_plan_t plan
    cdef view_page_t about
    cdef char why[1024]
    cdef const char* co
    cdef int rc
    memset(&err, 0, sizeof(err))
    cdef int32_t e = 0 if every is None else _int("view: every", every, 1, 2147483647)
    cdef int32_t m = 0 if max_agents is None else _int("view: max_agents", max_agents, 1, 2147483647)
    p = _path("view: recording", recording)
    o = _path("view: out", os.fsdecode(p) + ".html" if out is None else out)
    _check_err(shoal_recording_reader_open(p, SHOAL_RECORDING_ALLOW_TRUNCATED, &rd, &err), &err)
    try:
        view_page_plan(rd, e, m, &plan)
        about.input = p
        about.shown = plan.shown
        about.note = plan.note
        about.warning = shoal_recording_reader_damage(rd)
        about.version = shoal_recording_reader_version(rd)
        co = o
        with nogil:
            rc = view_page_write(co, &about, rd, plan.thin, why, sizeof(why))
        if rc != 0:
            raise FileError(f"view: {why.decode('utf-8', 'replace')}")
    finally:
        shoal_recording_reader_close(rd)
    return os.fsdecode(o)


def read_recording(path, allow_truncated=False):
    """Read a recording into arrays (a dict), one column per agent:

    global_ids (A,) uint64, every agent's global id (World.global_ids),
    ascending, or None for a recording made before format version 4, whose
    columns are its handle ids instead (an agent that reused a removed
    agent's slot then shares its column); ids (A,) each column's handle id
    (index1); steps (F,), times (F,); positions (F, A, dims) float32, NaN
    where an agent is absent from a frame; headings (F, A) in 2D or
    orientations (F, A, 4) in 3D; groups (A,) each agent's group; present
    (F, A) bool; header fields: version, dimensions, dt, record_every,
    scenario_name, group_names, complete; the geometry as it was at frame 0
    (none in version 1 files): walls (W, 4) float32 segments x0 y0 x1 y1,
    obstacles, a dict of arrays: id (B,), center (B, 3), radius (B,),
    velocity (B, 3), time (s: a moving obstacle is at center + velocity (t -
    time)); nav, the navigation field records (format version 5; [] before
    it or without fields), in order, each a dict: frame (the first frame it
    applies to: the latest record at or before a frame is its fields), step,
    time, origin (2,) float32, cell, blocked (ny, nx) bool, goals (G,) int32
    goal ids, fields (G, ny, nx) float32 travel times (inf where blocked or
    no way; row j is y = origin[1] + (j + 0.5) cell), max_error (G,) float32
    (the quantization's bound, beyond float rounding).

    Any recording a Recorder (or `shoal run --record`) wrote is read, however
    far its frames decode: the returned arrays are the memory it takes.
    allow_truncated: keep the frames before damage or a missing end (complete
    is then False) instead of raising ParseError."""
    cdef shoal_recording_reader_t* rd = NULL
    cdef shoal_error_t err
    cdef shoal_recording_frame_t f
    cdef shoal_recording_geometry_t g
    cdef shoal_recording_nav_t nv
    cdef shoal_status_t st
    memset(&err, 0, sizeof(err))
    p = _path("read_recording: path", path)
    # Frame by frame, not shoal_recording_load: that one holds the whole
    # decoded file and refuses more than SHOAL_RECORDING_LOAD_LIMIT of it,
    # which a recording of a still crowd reaches in a few megabytes of file.
    # Opened as shoal_recording_load opens it (frames before damage kept),
    # with its rule: a frame that fails to decode is reported before damage
    # further on, and either is an error unless allow_truncated.
    _check_err(shoal_recording_reader_open(p, SHOAL_RECORDING_ALLOW_TRUNCATED, &rd, &err), &err)
    cdef const shoal_recording_header_t* h
    cdef int32_t frames, i
    cdef int dims
    try:
        h = shoal_recording_reader_header(rd)
        dims = h.dimensions
        frames = shoal_recording_reader_frame_count(rd)
        complete = bool(shoal_recording_reader_is_complete(rd))
        damage = _text(shoal_recording_reader_damage(rd))
        # First pass: each frame's agent keys (global ids from version 4,
        # else handle ids), to know every agent's column; a frame with the
        # same agents as the one before shares its array.
        version = shoal_recording_reader_version(rd)
        key_type = np.uint64 if version >= 4 else np.uint32
        all_ids = []
        ids = np.zeros(0, key_type)
        last = ids
        for i in range(frames):
            st = shoal_recording_reader_frame(rd, i, &f, &err)
            if st != SHOAL_OK:
                if st == SHOAL_ERR_PARSE and allow_truncated:
                    frames = i
                    complete = False
                    break
                _check_err(st, &err)
            if f.count == 0:
                now = np.zeros(0, key_type)
            elif version >= 4:
                now = np.asarray(<const uint64_t[:f.count]>f.global_ids)
            else:
                now = np.asarray(<const uint32_t[:f.count]>f.ids)
            if not np.array_equal(now, last):
                last = now.copy()
                ids = np.union1d(ids, last)
            all_ids.append(last)
        if damage and not allow_truncated:
            raise ParseError(damage)
        A = ids.shape[0]
        handles = np.zeros(A, dtype=np.uint32) if version >= 4 else ids
        pos = np.full((frames, A, dims), np.nan, dtype=np.float32)
        present = np.zeros((frames, A), dtype=bool)
        steps = np.zeros(frames, dtype=np.uint64)
        times = np.zeros(frames, dtype=np.float64)
        groups = np.zeros(A, dtype=np.uint32)
        if dims == 2:
            ang = np.full((frames, A), np.nan, dtype=np.float32)
        else:
            ang = np.full((frames, A, 4), np.nan, dtype=np.float32)
        # Second pass: the values (in order again, as version 3 decodes).
        last = None
        for i in range(frames):
            _check_err(shoal_recording_reader_frame(rd, i, &f, &err), &err)
            steps[i] = f.step
            times[i] = f.time
            if f.count == 0:
                continue
            if all_ids[i] is not last:
                last = all_ids[i]
                cols = slice(None) if np.array_equal(last, ids) else np.searchsorted(ids, last)
            pos[i, cols] = np.asarray(<const float[:f.count * dims]>f.positions).reshape(f.count, dims)
            present[i, cols] = True
            groups[cols] = np.asarray(<const uint32_t[:f.count]>f.groups)
            if version >= 4:
                handles[cols] = np.asarray(<const uint32_t[:f.count]>f.ids)
            if dims == 2:
                ang[i, cols] = np.asarray(<const float[:f.count]>f.headings)
            else:
                ang[i, cols] = np.asarray(<const float[:f.count * 4]>f.orientations).reshape(f.count, 4)
        out = {"ids": handles, "global_ids": ids if version >= 4 else None,
               "steps": steps, "times": times, "positions": pos, "present": present,
               "groups": groups, "version": version, "dimensions": dims, "dt": h.dt,
               "record_every": h.record_every,
               "scenario_name": _text(h.scenario_name),
               "group_names": [name for name in _text(h.group_names).split("\n") if name],
               "complete": complete}
        out["headings" if dims == 2 else "orientations"] = ang
        walls = np.zeros((0, 4), dtype=np.float32)
        obstacles = {"id": np.zeros(0, np.int32), "center": np.zeros((0, 3), np.float32),
                     "radius": np.zeros(0, np.float32), "velocity": np.zeros((0, 3), np.float32), "time": 0.0}
        if shoal_recording_reader_geometry(rd, &g) == SHOAL_OK:
            if g.wall_count > 0:
                walls = np.asarray(<const float[:4 * g.wall_count]>g.walls).reshape(g.wall_count, 4).copy()
            B = g.obstacle_count
            obstacles["time"] = g.time
            obstacles["id"] = np.array([g.obstacles[k].id for k in range(B)], dtype=np.int32)
            obstacles["center"] = np.array([[g.obstacles[k].center[j] for j in range(3)] for k in range(B)],
                                           dtype=np.float32).reshape(B, 3)
            obstacles["radius"] = np.array([g.obstacles[k].radius for k in range(B)], dtype=np.float32)
            obstacles["velocity"] = np.array([[g.obstacles[k].velocity[j] for j in range(3)] for k in range(B)],
                                             dtype=np.float32).reshape(B, 3)
        out["walls"] = walls
        out["obstacles"] = obstacles
        navs = []
        for i in range(shoal_recording_reader_nav_count(rd)):
            _check_err(shoal_recording_reader_nav(rd, i, &nv, &err), &err)
            if nv.frame >= frames:
                break  # after the frames kept (allow_truncated)
            G = nv.goal_count
            cells = nv.nx * nv.ny
            blocked = np.zeros((nv.ny, nv.nx), dtype=bool)
            fields = np.zeros((G, nv.ny, nv.nx), dtype=np.float32)
            if cells > 0:
                blocked = np.asarray(<const uint8_t[:cells]>nv.blocked).reshape(nv.ny, nv.nx).astype(bool)
            if cells > 0 and G > 0:
                fields = np.asarray(<const float[:G * cells]>nv.fields).reshape(G, nv.ny, nv.nx).copy()
            navs.append({"frame": nv.frame, "step": nv.step, "time": nv.time,
                         "origin": np.array([nv.origin[0], nv.origin[1]], dtype=np.float32),
                         "cell": nv.cell, "blocked": blocked,
                         "goals": np.array([nv.goals[k] for k in range(G)], dtype=np.int32),
                         "fields": fields,
                         "max_error": np.array([nv.max_error[k] for k in range(G)], dtype=np.float32)})
        out["nav"] = navs
        return out
    finally:
        shoal_recording_reader_close(rd)


# ---------------------------------------------------------------------------
# Argument helpers
# ---------------------------------------------------------------------------

cdef void* _ptr(a):
    return cnp.PyArray_DATA(<cnp.ndarray>a)


# Limits the library checks, mirrored for what the binding checks before
# a library call (docs/errors.md, shoal_agent_add): fewer than 2^30 agents,
# coordinates within +-1e18 m.
_MAX_AGENTS = (1 << 30) - 1
_MAX_COORDINATE = np.float32(1e18)


def _describe(v):
    if isinstance(v, np.ndarray):
        return f"an array of shape {v.shape} and dtype {v.dtype}"
    text = repr(v)
    return f"{type(v).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _int(where, v, lo=-(1 << 63), hi=(1 << 63) - 1):
    """An integer argument in [lo, hi]: an int or a numpy integer, never a
    bool, a float (1.5 is not silently 1) or a str ('3' is not 3)."""
    if isinstance(v, (bool, np.bool_)):
        raise InvalidTypeError(f"{where}: expected an integer, got a bool ({v!r})")
    try:
        x = operator.index(v)
    except TypeError:
        raise InvalidTypeError(f"{where}: expected an integer, got {_describe(v)}") from None
    if x < lo or x > hi:
        raise InvalidArgumentError(f"{where}: {x} is not in [{lo}, {hi}]")
    return x


def _u64(where, v):
    return _int(where, v, 0, (1 << 64) - 1)


def _real(where, v):
    """A number argument: int, float or numpy number, not a bool or a str."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise InvalidTypeError(f"{where}: expected a number, got {_describe(v)}")
    return float(v)


def _dt(v):
    x = _real("dt", v)
    # The library takes a float: a dt that rounds to 0 there is refused here.
    if not (x > 0.0 and x <= 1000.0 and np.float32(x) > 0):
        raise InvalidArgumentError(f"dt: expected seconds in (0, 1000], got {v!r}")
    return x


def _path(where, path):
    """A file name as the C library takes it. A NUL would end it early (the
    call would act on another file): refused."""
    try:
        p = os.fsencode(path)
    except TypeError:
        raise InvalidTypeError(f"{where}: expected a path (str, bytes or os.PathLike), "
                               f"got {_describe(path)}") from None
    if b"\0" in p:
        raise InvalidArgumentError(f"{where}: {os.fsdecode(p)!r} contains a NUL character")
    return p


def _name(where, name):
    """A name (column, system, component, preset) as the C library takes it."""
    if not isinstance(name, str):
        raise InvalidTypeError(f"{where}: expected a name (str), got {_describe(name)}")
    if "\0" in name:
        raise InvalidArgumentError(f"{where}: {name!r} contains a NUL character")
    return name.encode("utf-8")


def _array(where, v, dtype, expected):
    """Numbers as an array of a float dtype, or the package's error naming
    the argument (never numpy's own for ragged or non-numeric input)."""
    try:
        a = np.asarray(v)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{where}: expected {expected}, got {_describe(v)}") from None
    if a.dtype.kind not in "biuf":
        raise InvalidArgumentError(f"{where}: expected {expected}, got {_describe(v)}")
    with np.errstate(over="ignore"):  # beyond float32: inf, which the checks refuse
        return a.astype(dtype, copy=False)


def _int_array(where, v, dtype, expected=None):
    """Integers as an array of an integer dtype, each in its range (never
    wrapped: 2^40 + 7 is not 7 in a uint32, -1 not 2^64 - 1 in a uint64)."""
    info = np.iinfo(dtype)
    span = f"{'non-negative ' if info.min == 0 else ''}integers in [{info.min}, {info.max}]"
    want = f"{expected}: {span}" if expected else span
    try:
        a = np.asarray(v)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgumentError(f"{where}: expected {want}, got {_describe(v)}") from None
    if a.dtype.kind not in "iu":  # bool, float, str, or Python ints beyond 64 bits
        raise InvalidArgumentError(f"{where}: expected {want}, got {_describe(v)}")
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < info.min or hi > info.max:
            raise InvalidArgumentError(f"{where}: expected {want}, got {lo if lo < info.min else hi}")
    return a.astype(dtype, copy=False)


def _bounds(bounds, dims):
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise InvalidArgumentError("bounds: expected ((xmin, ymin[, zmin]), (xmax, ymax[, zmax]))") from None
    lo = _array("bounds", lo, np.float64, "((xmin, ymin[, zmin]), (xmax, ymax[, zmax]))")
    hi = _array("bounds", hi, np.float64, "((xmin, ymin[, zmin]), (xmax, ymax[, zmax]))")
    if lo.shape != (dims,) or hi.shape != (dims,):
        raise InvalidArgumentError(f"bounds: expected {dims} numbers for each corner of a {dims}D world, "
                                   f"got shapes {lo.shape} and {hi.shape}")
    return list(lo) + [0.0] * (3 - dims), list(hi) + [0.0] * (3 - dims)


def _shipped_if_missing(path):
    """`path` itself when it is a file here or not a plain name; else the
    shipped scenario of that name (FileError when there is none)."""
    try:
        name = os.fsdecode(path)
    except TypeError:
        return path  # not a path at all: _path says so
    if os.path.exists(name) or os.path.dirname(name) not in ("", "scenarios"):
        return path
    from shoal._scenarios import scenario_path
    try:
        return scenario_path(name)
    except FileNotFoundError as e:
        raise FileError(f"from_scenario: {e}") from None


def _points(where, v, expected, dims):
    """(N, 3) float32, C-contiguous, from (N, dims) input; None stays None.
    A 2D world refuses (N, 3) (its z would be dropped), a 3D one (N, 2)."""
    if v is None:
        return None
    a = _array(where, v, np.float32, f"an array of shape (N, {dims})")
    if a.ndim != 2 or a.shape[1] != dims:
        raise InvalidArgumentError(f"{where}: expected an array of shape (N, {dims}) in a {dims}D world, "
                                   f"got shape {a.shape}")
    if expected is not None and a.shape[0] != expected:
        raise InvalidArgumentError(f"{where}: expected {expected} rows (one per agent), got {a.shape[0]}")
    out = np.zeros((a.shape[0], 3), dtype=np.float32)
    out[:, :dims] = a
    return out


def _per_agent(where, v, n, dtype):
    if v is None:
        return None
    if np.dtype(dtype).kind == "f":
        a = _array(where, v, dtype, f"one number or {n} (one per agent)")
    else:
        a = _int_array(where, v, dtype, f"one value or {n} (one per agent)")
    if a.ndim == 0:
        a = np.broadcast_to(a, (n,))
    if a.shape != (n,):
        raise InvalidArgumentError(f"{where}: expected {n} values (one per agent, shape ({n},)) or one for all, "
                                   f"got shape {a.shape}")
    return np.ascontiguousarray(a)


def _check_arrays(dims, pos, vel, tgt, hd, pt):
    """What shoal_agents_add checks of its per-agent arrays, before any of
    the calls that add an add_agents' groups: finite, and coordinates within
    +-1e18 m. Pitches count in 3D only, as there."""
    for name, a, coordinate in (("positions", pos, True), ("velocities", vel, False),
                                ("headings", hd, False), ("targets", tgt, True),
                                ("pitches", pt if dims == 3 else None, False)):
        if a is None:
            continue
        if a.ndim == 2:
            a = a[:, :dims]
        ok = np.abs(a) <= _MAX_COORDINATE if coordinate else np.isfinite(a)
        if not ok.all():
            at = tuple(int(k) for k in np.argwhere(~ok)[0])
            rule = "finite and within +-1e18 m" if coordinate else "finite"
            raise InvalidArgumentError(f"agents_add: {name}[{', '.join(map(str, at))}] must be {rule}, "
                                       f"got {float(a[at])!r}")


# shoal_measure_crossing_t and shoal_measure_sample_t, field for field.
_CROSSING_DTYPE = np.dtype([("time", np.float64), ("step", np.uint64), ("agent", np.uint64),
                            ("direction", np.int32), ("reserved", np.int32)])
_SAMPLE_DTYPE = np.dtype([("time", np.float64), ("step", np.uint64), ("count", np.int32),
                          ("density", np.float32), ("voronoi_density", np.float32), ("speed", np.float32),
                          ("voronoi_speed", np.float32), ("reserved", np.int32)])


def _name_bytes(where, name):
    if not isinstance(name, str):
        raise InvalidTypeError(f"{where}: expected a str, got {type(name).__name__}")
    raw = name.encode("utf-8")
    if b"\0" in raw:
        raise InvalidArgumentError(f"{where}: a name may not hold a NUL character")
    return raw


def _handles(where, v):
    a = _int_array(where, v, np.uint64, "agent handles")
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise InvalidArgumentError(f"{where}: expected one handle or a 1-D array of handles, got shape {a.shape}")
    return np.ascontiguousarray(a)


def _point(where, v, dims):
    expected = "a point (x, y)" if dims == 2 else "a point (x, y, z)"
    a = _array(where, v, np.float64, expected)
    if a.shape != (dims,):
        raise InvalidArgumentError(f"{where}: expected {expected} in a {dims}D world, got shape {a.shape}")
    return a


cdef int _point3(where, v, float* out, int dims) except -1:
    a = _point(where, v, dims)
    out[0] = a[0]
    out[1] = a[1]
    out[2] = a[2] if dims == 3 else 0.0
    return 0
