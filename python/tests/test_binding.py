"""The binding's own rules, against misuse: one call at a time on a world
(every method, not only step), worlds that were never created, refused
adds that leave no trace, recordings every reader takes, and arguments
checked before they reach the library (NUL characters, integer ranges,
types, shapes)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import shoal

FLOCK = {"separate": 1.5, "align": 1.0, "cohere": 1.0, "wander": 0.5}


def flock(n=200, threads=1, seed=1, dims=2):
    w = shoal.World(dimensions=dims, threads=threads, seed=seed)
    rng = np.random.default_rng(seed)
    w.add_agents(rng.uniform(0, 40, size=(n, dims)), behaviors=FLOCK)
    return w


# -- one call at a time ------------------------------------------------------

RACE = """
import json, sys, threading
import numpy as np
import shoal

tmp = sys.argv[1]
w = shoal.World(threads=2, seed=1)
w.add_agents(np.random.default_rng(1).uniform(0, 40, (20000, 2)), behaviors={"separate": 1, "wander": 1})
ids = w.handles()[:3]
recorder = w.record(tmp + "/r.rec")
calls = {
    "state_hash": lambda: w.state_hash, "structure_version": lambda: w.structure_version,
    "step_count": lambda: w.step_count, "time": lambda: w.time, "agent_count": lambda: w.agent_count,
    "len": lambda: len(w), "dimensions": lambda: w.dimensions, "threads": lambda: w.threads,
    "obstacle_count": lambda: w.obstacle_count, "wall_count": lambda: w.wall_count,
    "handles": lambda: w.handles(), "rows": lambda: w.rows(ids), "is_valid": lambda: w.is_valid(int(ids[0])),
    "system_stats": lambda: w.system_stats(), "reset_stats": lambda: w.reset_stats(),
    "crowd_stats": lambda: w.crowd_stats(), "column_names": lambda: w.column_names(),
    "column": lambda: w.column("position.x"), "positions": lambda: w.positions,
    "is_current": lambda: w.is_current(np.zeros(1)),
    "set_system_enabled": lambda: w.set_system_enabled("integrate", True),
    "set_targets": lambda: w.set_targets(ids, np.zeros((3, 2))),
    "teleport": lambda: w.teleport(ids, np.zeros((3, 2))),
    "remove_agents": lambda: w.remove_agents(ids[:1]),
    "add_agents": lambda: w.add_agents(np.zeros((1, 2))),
    "add_obstacle": lambda: w.add_obstacle((0, 0), 1.0),
    "add_wall": lambda: w.add_wall([[0, 0], [1, 0]]),
    "add_component": lambda: w.add_component("busy_probe", np.float32),
    "to_bytes": lambda: w.to_bytes(), "save": lambda: w.save(tmp + "/busy.snap"),
    "record": lambda: w.record(tmp + "/busy.rec"), "recorder.frame": recorder.frame,
    "step": lambda: w.step(1), "init": lambda: w.__init__(),
    "set_nav": lambda: w.set_nav(), "get_nav": lambda: w.get_nav(),
    "add_nav_goal": lambda: w.add_nav_goal(point=(5, 5)), "remove_nav_goal": lambda: w.remove_nav_goal(0),
    "nav_goal_count": lambda: w.nav_goal_count, "nav_update": lambda: w.nav_update(),
    "nav_grid": lambda: w.nav_grid(), "nav_field": lambda: w.nav_field(0), "nav_blocked": lambda: w.nav_blocked(),
    "nav_stats": lambda: w.nav_stats(),
}
refused = set()
done = threading.Event()

def stepper():
    w.step(60)
    done.set()

t = threading.Thread(target=stepper)
t.start()
while not done.is_set():
    try:
        w.step(0)
    except shoal.BusyError:
        break  # the step runs now
while not done.is_set() and len(refused) < len(calls):
    for name, call in calls.items():
        try:
            call()
        except shoal.BusyError:
            refused.add(name)
        except shoal.Error:
            pass
t.join()
recorder.close()
print(json.dumps({"steps": w.step_count, "ran": sorted(set(calls) - refused)}))
"""


def test_every_method_is_refused_while_another_thread_steps(tmp_path):
    # Every call raced with a step at least once and must have been refused.
    # In a child process: a call that does run during the step may corrupt
    # the world or hang it, which must fail this test, not the whole run.
    r = subprocess.run([sys.executable, "-c", RACE, str(tmp_path)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["steps"] == 60
    assert out["ran"] == [], f"ran during the step: {out['ran']}"


def test_reinitialising_a_world_is_refused():
    w = flock(50)
    w.step(3)
    before = (w.state_hash, len(w), w.step_count)
    with pytest.raises(shoal.Error, match="already"):
        w.__init__(dimensions=3)
    assert (w.state_hash, len(w), w.step_count) == before and w.dimensions == 2
    w.step(1)  # still usable


def test_init_after_a_failed_init_works():
    w = shoal.World.__new__(shoal.World)
    with pytest.raises(shoal.InvalidArgumentError):
        w.__init__(dimensions=4)
    w.__init__(dimensions=2, threads=1)
    w.add_agents(np.zeros((2, 2)))
    assert len(w) == 2


def test_an_uncreated_world_raises_and_never_crashes(tmp_path):
    # In a child process: a crash must fail this test, not the whole run.
    script = textwrap.dedent(f"""
        import numpy as np, shoal
        w = shoal.World.__new__(shoal.World)
        assert "not created" in repr(w)
        calls = {{
            "state_hash": lambda: w.state_hash, "structure_version": lambda: w.structure_version,
            "step_count": lambda: w.step_count, "time": lambda: w.time, "len": lambda: len(w),
            "agent_count": lambda: w.agent_count, "dimensions": lambda: w.dimensions,
            "threads": lambda: w.threads, "obstacle_count": lambda: w.obstacle_count,
            "wall_count": lambda: w.wall_count, "handles": lambda: w.handles(),
            "rows": lambda: w.rows([1]), "is_valid": lambda: w.is_valid(1),
            "system_stats": lambda: w.system_stats(), "reset_stats": lambda: w.reset_stats(),
            "crowd_stats": lambda: w.crowd_stats(), "column_names": lambda: w.column_names(),
            "column": lambda: w.column("position.x"), "positions": lambda: w.positions,
            "orientations": lambda: w.orientations, "_axes": lambda: w._axes("position"),
            "_blocks_kept": lambda: w._blocks_kept(), "is_current": lambda: w.is_current(np.zeros(1)),
            "set_system_enabled": lambda: w.set_system_enabled("integrate", True),
            "set_targets": lambda: w.set_targets([1], [[0, 0]]),
            "teleport": lambda: w.teleport([1], [[0, 0]]),
            "remove_agents": lambda: w.remove_agents([1]),
            "add_agents": lambda: w.add_agents(np.zeros((1, 2))),
            "add_obstacle": lambda: w.add_obstacle((0, 0), 1.0),
            "add_wall": lambda: w.add_wall([[0, 0], [1, 0]]),
            "add_component": lambda: w.add_component("e", np.float32),
            "to_bytes": lambda: w.to_bytes(), "save": lambda: w.save({str(tmp_path / 'x.snap')!r}),
            "record": lambda: w.record({str(tmp_path / 'x.rec')!r}), "step": lambda: w.step(1),
            "set_nav": lambda: w.set_nav(), "get_nav": lambda: w.get_nav(),
            "add_nav_goal": lambda: w.add_nav_goal(point=(1, 1)), "remove_nav_goal": lambda: w.remove_nav_goal(0),
            "nav_goal_count": lambda: w.nav_goal_count, "nav_update": lambda: w.nav_update(),
            "nav_grid": lambda: w.nav_grid(), "nav_field": lambda: w.nav_field(0),
            "nav_blocked": lambda: w.nav_blocked(), "nav_stats": lambda: w.nav_stats(),
        }}
        for name, call in calls.items():
            try:
                call()
            except shoal.Error:
                continue
            raise SystemExit(f"{{name}} ran on a world that was never created")
        try:
            shoal.Recorder(None, {str(tmp_path / 'y.rec')!r})
        except TypeError:
            pass
        else:
            raise SystemExit("Recorder(None) was accepted")
        print("ok")
        """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr)


# -- recordings ---------------------------------------------------------------

def test_recorder_frames_read_back_exactly(tmp_path):
    w = shoal.World(threads=1, dimensions=2)
    ids = w.add_agents(np.random.default_rng(3).uniform(0, 10, (20, 2)), behaviors={"wander": 1})
    path = tmp_path / "frames.rec"
    expected = []
    with w.record(path) as rec:
        for k in range(6):
            rec.frame()
            expected.append((w.step_count, w.global_ids.copy(), w.handles() & 0xFFFFFFFF,
                             w.positions.copy()))
            if k == 2:
                w.remove_agents(ids[:5])
                # newcomers take the removed agents' slots, with ids of their own
                w.add_agents(np.random.default_rng(4).uniform(0, 10, (3, 2)))
            w.step(k % 3)  # 0 steps between two frames too
    r = shoal.read_recording(path)
    assert r["complete"] and r["version"] == 4 and list(r["steps"]) == [e[0] for e in expected]
    # one column per agent: 20, then 3 more in reused slots
    np.testing.assert_array_equal(r["global_ids"], np.arange(23, dtype=np.uint64))
    assert len(set(r["ids"][20:]) & set(r["ids"][:5])) == 3
    for i, (_, gids, slots, pos) in enumerate(expected):
        cols = np.searchsorted(r["global_ids"], gids)
        np.testing.assert_array_equal(r["global_ids"][cols], gids)
        np.testing.assert_array_equal(r["ids"][cols], slots)
        np.testing.assert_array_equal(r["positions"][i][cols], pos)
        assert r["present"][i].sum() == len(gids)


def test_a_recording_of_a_still_crowd_past_the_whole_file_limit_reads_back(tmp_path):
    # 200,000 agents that do not move, 224 frames: 2.3 MB of file that
    # decodes to 1.08 GB, past what the library's whole-file reader holds
    # (SHOAL_RECORDING_LOAD_LIMIT, 1 GiB). What a Recorder writes, the
    # package reads.
    n, frames = 200_000, 224
    w = shoal.World(threads=1)
    w.add_agents(np.random.default_rng(1).uniform(0, 100, (n, 2)))
    path = tmp_path / "still.rec"
    with w.record(path) as rec:
        for _ in range(frames):
            rec.frame()
    assert n * frames * 24 > 1 << 30
    r = shoal.read_recording(path)
    assert r["complete"] and r["positions"].shape == (frames, n, 2) and r["present"].all()
    order = np.searchsorted(r["ids"], w.handles() & 0xFFFFFFFF)
    np.testing.assert_array_equal(r["positions"][-1][order], w.positions)
    np.testing.assert_array_equal(r["headings"][0][order], w.headings)


def test_a_recording_left_open_reads_only_when_truncation_is_allowed(tmp_path):
    w = flock(30)
    path = tmp_path / "open.rec"
    rec = w.record(path)
    rec.step(4)
    with pytest.raises(shoal.ParseError, match="end record"):
        shoal.read_recording(path)
    r = shoal.read_recording(path, allow_truncated=True)
    assert not r["complete"] and list(r["steps"]) == [0, 1, 2, 3, 4]
    rec.close()
    assert shoal.read_recording(path)["complete"]


# -- refused adds leave no trace ------------------------------------------------

def _same_agents(x, y):
    """Handles of two worlds name the same slots and generations (their
    world0 bits tell the worlds apart)."""
    world0 = np.uint64(0xFFFF << 32)
    np.testing.assert_array_equal(x & ~world0, y & ~world0)


def _twins():
    a, b = shoal.World(threads=1, seed=5), shoal.World(threads=1, seed=5)
    for w in (a, b):
        w.add_agents(np.arange(6, dtype=float).reshape(3, 2), behaviors={"seek": 1})
    return a, b


@pytest.mark.parametrize("kwargs", [
    # the refused value belongs to the last group of agents the binding adds
    dict(vehicle={"max_speed": [1.0, 2.0, 3.0, 1e12]}),
    dict(neighbors={"fov": [1.0, 2.0, 3.0, 7.0]}),
    dict(vehicle={"max_speed": [1.0, 2.0, 3.0, 4.0]}, velocities=[[0, 0], [0, 0], [0, 0], [np.inf, 0]]),
    dict(vehicle={"max_speed": [1.0, 2.0, 3.0, 4.0]}, targets=[[0, 0], [0, 0], [0, 0], [1e30, 0]]),
    dict(vehicle={"max_speed": [1.0, 2.0, 3.0, 4.0]}, headings=[0, 0, 0, np.nan]),
])
def test_a_refused_add_leaves_the_world_bit_identical(kwargs):
    a, b = _twins()
    v0 = b.structure_version
    positions = np.array([[0, 0], [1, 1], [2, 2], [3, 3]], dtype=float)
    with pytest.raises(shoal.InvalidArgumentError):
        b.add_agents(positions, **kwargs)
    assert len(b) == 3 and b.structure_version == v0
    assert b.state_hash == a.state_hash
    later = np.ones((4, 2))
    _same_agents(b.add_agents(later), a.add_agents(later))
    a.step(5)
    b.step(5)
    assert b.state_hash == a.state_hash


def test_a_refused_add_with_a_bad_position_in_a_later_group():
    a, b = _twins()
    positions = np.array([[0, 0], [1, 1], [2, 2], [np.nan, 3]], dtype=float)
    with pytest.raises(shoal.InvalidArgumentError, match="positions"):
        b.add_agents(positions, vehicle={"max_speed": [1.0, 2.0, 3.0, 4.0]})
    assert b.state_hash == a.state_hash
    _same_agents(b.add_agents(np.ones((2, 2))), a.add_agents(np.ones((2, 2))))


# -- arguments ------------------------------------------------------------------

def test_nul_in_a_path_is_refused(tmp_path):
    w = flock(10)
    cut = tmp_path / "a.snap"
    with pytest.raises(ValueError, match="NUL"):
        w.save(str(cut) + "\0.other")
    assert not cut.exists()
    with pytest.raises(ValueError, match="NUL"):
        w.record(str(tmp_path / "r.rec") + "\0x")
    assert not (tmp_path / "r.rec").exists()
    w.save(cut)
    for call in (lambda: shoal.World.load(str(cut) + "\0x"),
                 lambda: shoal.read_recording(str(cut) + "\0x"),
                 lambda: shoal.World.from_scenario(str(cut) + "\0x")):
        with pytest.raises(shoal.InvalidArgumentError, match="NUL"):
            call()


def test_nul_in_a_name_is_refused():
    w = flock(10)
    with pytest.raises(shoal.InvalidArgumentError, match="NUL"):
        w.add_component("energy\0x", np.float32)
    assert "energy" not in w.column_names()
    with pytest.raises(shoal.InvalidArgumentError, match="NUL"):
        w.column("position.x\0junk")
    with pytest.raises(shoal.InvalidArgumentError, match="NUL"):
        w.set_system_enabled("integrate\0x", False)
    with pytest.raises(shoal.InvalidArgumentError, match="NUL"):
        w.add_agents(np.zeros((1, 2)), crowd="pedestrian\0x")


@pytest.mark.parametrize("kwargs,match", [
    (dict(groups=[2**40 + 7]), "groups"),
    (dict(groups=[2**32]), "groups"),
    (dict(groups=[1.5]), "groups"),
    (dict(groups=[True]), "groups"),
    (dict(user_values=[2**64]), "user_values"),
    (dict(user_values=[-1]), "user_values"),
    (dict(user_values=[1.0]), "user_values"),
])
def test_integers_out_of_range_are_refused(kwargs, match):
    w = shoal.World(threads=1)
    with pytest.raises(shoal.InvalidArgumentError, match=match):
        w.add_agents(np.zeros((1, 2)), **kwargs)
    assert len(w) == 0


def test_integers_at_the_edges_are_kept():
    w = shoal.World(threads=1)
    ids = w.add_agents(np.zeros((2, 2)), groups=[0, 2**32 - 1])
    np.testing.assert_array_equal(w.groups[w.rows(ids)], [0, 2**32 - 1])


@pytest.mark.parametrize("dtype,default", [
    (np.uint64, -1), (np.uint32, 2**32), (np.int32, 2**31), (np.int32, 1.5), (np.uint32, [1, 2]),
    (np.float32, "x"),
])
def test_component_defaults_out_of_range_are_refused(dtype, default):
    w = flock(5)
    with pytest.raises(shoal.InvalidArgumentError, match="default"):
        w.add_component("c", dtype, default=default)
    assert "c" not in w.column_names()


def test_component_defaults_at_the_edges_are_kept():
    w = flock(5)
    np.testing.assert_array_equal(w.add_component("a", np.uint64, default=2**64 - 1), 2**64 - 1)
    np.testing.assert_array_equal(w.add_component("b", np.int32, default=-2**31), -2**31)
    np.testing.assert_array_equal(w.add_component("c", np.uint32, width=2, default=[1, 2]), [[1, 2]] * 5)


@pytest.mark.parametrize("n", [1.5, "3", True, np.bool_(True), None, 2.0])
def test_step_counts_must_be_integers(n, tmp_path):
    w = flock(5)
    with pytest.raises(TypeError, match="step"):
        w.step(n)
    assert w.step_count == 0
    with pytest.raises(TypeError):
        w.record(tmp_path / "r.rec").step(n)


def test_step_takes_numpy_integers():
    w = flock(5)
    w.step(np.int64(2))
    w.step(np.uint8(1))
    assert w.step_count == 3


@pytest.mark.parametrize("call", [
    lambda w: shoal.World(dimensions=2.5),
    lambda w: shoal.World(threads="2"),
    lambda w: shoal.World(capacity=1.5),
    lambda w: shoal.World(seed=1.5),
    lambda w: shoal.World(dt="0.1"),
    lambda w: w.step(1, dt="0.1"),
    lambda w: w.is_valid(1.0),
    lambda w: w.add_component("e", np.float32, width=1.5),
    lambda w: w.record("unused.rec", every=1.5),
    lambda w: shoal.World.from_scenario("x.json", threads=1.5),
])
def test_integers_and_numbers_are_not_taken_from_other_types(call):
    w = flock(5)
    with pytest.raises(TypeError):
        call(w)


def test_dt_that_rounds_to_zero_is_refused():
    with pytest.raises(shoal.InvalidArgumentError, match="dt"):
        shoal.World(dt=1e-50)


@pytest.mark.parametrize("call,match", [
    (lambda w: w.add_agents([[0, 0], [1]]), r"positions.*\(N, 2\)"),
    (lambda w: w.add_agents([["a", "b"]]), r"positions.*\(N, 2\)"),
    (lambda w: w.add_agents(np.zeros((2, 2)), headings=[[1, 2]]), r"headings.*\(2,\)"),
    (lambda w: w.add_agents(np.zeros((2, 2)), headings="north"), "headings"),
    (lambda w: w.add_agents(np.zeros((2, 2)), groups=[[1], [2]]), "groups"),
    (lambda w: w.add_agents(np.zeros((2, 2)), vehicle={"max_speed": "fast"}), "vehicle.max_speed"),
    (lambda w: w.add_agents(np.zeros((2, 2)), vehicle={"max_speed": [[1, 2]]}), "vehicle.max_speed"),
    (lambda w: w.add_agents(np.zeros((2, 2)), threat="here"), "threat"),
    (lambda w: w.add_agents(np.zeros((2, 2)), threat=[1, 2, 3]), r"threat.*\(x, y\)"),
    (lambda w: w.set_targets(w.handles()[:2], [[0, 0], [1]]), "targets"),
    (lambda w: w.teleport(w.handles()[:1], [[0, 0, 0]]), r"positions.*\(N, 2\)"),
    (lambda w: w.remove_agents([[1, 2]]), "handles"),
    (lambda w: w.remove_agents(["a"]), "handles"),
    (lambda w: w.remove_agents([1.5]), "handles"),
    (lambda w: w.remove_agents([True]), "handles"),
    (lambda w: w.add_obstacle((0, 0, 1), 1.0), r"center.*\(x, y\)"),
    (lambda w: w.add_obstacle("here", 1.0), "center"),
    (lambda w: w.add_obstacle((0, 0), 1.0, velocity=(1, 0, 0)), r"velocity.*\(x, y\)"),
    (lambda w: w.add_wall([[0, 0], [1]]), "add_wall"),
    (lambda w: w.add_component("e", np.float32, width=2, default=[1, 2, 3]), "default"),
    (lambda w: shoal.World(bounds=((0, 0, 0), (1, 1, 1))), "bounds"),
])
def test_bad_shapes_raise_the_package_error_naming_the_argument(call, match):
    w = flock(5)
    n = len(w)
    with pytest.raises(shoal.InvalidArgumentError, match=match):
        call(w)
    assert len(w) == n


def test_a_2d_world_refuses_xyz_positions():
    w = shoal.World(threads=1)
    with pytest.raises(shoal.InvalidArgumentError, match=r"positions: .*\(N, 2\).*\(3, 3\)"):
        w.add_agents(np.ones((3, 3)))
    with pytest.raises(shoal.InvalidArgumentError, match="targets"):
        w.add_agents(np.ones((3, 2)), targets=np.ones((3, 3)))
    with pytest.raises(shoal.InvalidArgumentError, match="velocities"):
        w.add_agents(np.ones((3, 2)), velocities=np.ones((3, 3)))
    assert len(w) == 0


def test_a_3d_world_needs_xyz_positions():
    w = shoal.World(threads=1, dimensions=3)
    with pytest.raises(shoal.InvalidArgumentError, match=r"positions: .*\(N, 3\)"):
        w.add_agents(np.ones((3, 2)))
    w.add_agents(np.ones((3, 3)))
    assert len(w) == 3


def test_every_public_name_has_a_docstring():
    # help() and IDEs show what each does: every public function, class,
    # method and property of the package says so
    missing = []
    for name in shoal.__all__:
        obj = getattr(shoal, name)
        if not (getattr(obj, "__doc__", None) or "").strip():
            missing.append(name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            for member in dir(obj):
                if member.startswith("_"):
                    continue
                if not (getattr(getattr(obj, member), "__doc__", None) or "").strip():
                    missing.append(f"{name}.{member}")
    assert not missing, missing
