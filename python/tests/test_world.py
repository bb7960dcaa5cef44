"""The Python package against the library: round trips, lifetimes of
arrays, every error path, the command's state_hash, and the threaded step."""
import gc
import json
import os
import re
import subprocess
import threading
import time

import numpy as np
import pytest

import shoal

SCENARIOS = os.environ.get("SHOAL_SCENARIOS", os.path.join(os.path.dirname(__file__), "..", "..", "scenarios"))
FLOCK = {"separate": 1.5, "align": 1.0, "cohere": 1.0, "wander": 0.5}


def flock(n=500, threads=1, seed=1, dims=2):
    w = shoal.World(dimensions=dims, threads=threads, seed=seed)
    rng = np.random.default_rng(seed)
    w.add_agents(rng.uniform(0, 40, size=(n, dims)), behaviors=FLOCK)
    return w


# -- construction and round trips ------------------------------------------

def test_keywords_give_the_library_defaults():
    w = shoal.World()
    assert w.dimensions == 2 and len(w) == 0 and w.step_count == 0
    assert w.dt == pytest.approx(1 / 60)
    w3 = shoal.World(dimensions=3, threads=1, bounds=((0, 0, 0), (10, 10, 10)), wrap=True)
    assert w3.dimensions == 3 and w3.threads == 1


def test_add_agents_round_trip_positions_targets_groups():
    w = shoal.World(threads=1)
    pos = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float64)
    ids = w.add_agents(pos, targets=[[9, 9], [8, 8], [7, 7]], groups=[0, 1, 2], behaviors={"seek": 1})
    assert ids.dtype == np.uint64 and ids.shape == (3,)
    rows = w.rows(ids)
    np.testing.assert_array_equal(w.positions[rows], pos.astype(np.float32))
    np.testing.assert_array_equal(w.targets[rows], [[9, 9], [8, 8], [7, 7]])
    np.testing.assert_array_equal(w.groups[rows], [0, 1, 2])
    np.testing.assert_array_equal(np.sort(w.handles()), np.sort(ids))


def test_per_agent_parameters_reach_each_agent():
    w = shoal.World(threads=1)
    speeds = np.array([1.0, 2.0, 3.0, 2.0])
    ids = w.add_agents(np.zeros((4, 2)) + np.arange(4)[:, None] * 10, vehicle={"max_speed": speeds},
                       behaviors={"seek": [1, 0, 1, 0]})
    rows = w.rows(ids)
    np.testing.assert_array_equal(w.column("max_speed")[rows], speeds.astype(np.float32))


def test_teleport_and_set_targets():
    w = shoal.World(threads=1)
    ids = w.add_agents(np.zeros((2, 2)), behaviors={"seek": 1})
    w.teleport(ids, [[5, 5], [-5, 2]])
    w.set_targets(ids, [[1, 1], [2, 2]])
    rows = w.rows(ids)
    np.testing.assert_array_equal(w.positions[rows], [[5, 5], [-5, 2]])
    np.testing.assert_array_equal(w.targets[rows], [[1, 1], [2, 2]])


def test_remove_agents():
    w = flock(100)
    ids = w.handles()
    w.remove_agents(ids[:40])
    assert len(w) == 60
    assert not w.is_valid(ids[0]) and w.is_valid(ids[50])


def test_snapshot_file_and_bytes_round_trip(tmp_path):
    w = flock(300, threads=2)
    w.step(20)
    path = tmp_path / "w.snap"
    w.save(path)
    a = shoal.World.load(path, threads=1)
    b = shoal.World.from_bytes(w.to_bytes(), threads=2)
    assert a.state_hash == w.state_hash == b.state_hash
    for x in (w, a, b):
        x.step(30)
    assert a.state_hash == w.state_hash == b.state_hash


def test_user_component_is_writable_and_follows_agents():
    w = flock(200)
    energy = w.add_component("energy", np.float32, default=1.0)
    assert energy.flags.writeable and energy.shape == (200,)
    np.testing.assert_array_equal(energy, 1.0)
    ids = w.handles()
    energy[w.rows(ids)] = np.arange(200, dtype=np.float32)
    w.step(40)  # reorders storage
    e = w.column("energy")
    np.testing.assert_array_equal(e[w.rows(ids)], np.arange(200, dtype=np.float32))
    wide = w.add_component("rgb", np.uint32, width=3)
    assert wide.shape == (200, 3)


def test_recording_reads_back_as_arrays(tmp_path):
    w = flock(50)
    path = tmp_path / "r.rec"
    with w.record(path, every=5) as rec:
        rec.step(20)
    r = shoal.read_recording(path)
    assert r["positions"].shape == (5, 50, 2) and r["complete"]
    assert list(r["steps"]) == [0, 5, 10, 15, 20]
    index1 = w.handles() & 0xFFFFFFFF  # each row's id as a recording keeps it
    order = np.searchsorted(r["ids"], index1)
    np.testing.assert_array_equal(r["positions"][-1][order], w.positions)
    assert r["present"].all()


def test_system_stats_are_dicts():
    w = flock(100)
    w.step(3)
    stats = w.system_stats()
    assert stats and {"name", "stage", "calls", "ns_total", "agents", "enabled"} <= set(stats[0])
    assert any(s["calls"] == 3 for s in stats)


def test_walls_obstacles_and_crowds():
    w = shoal.World(threads=1)
    w.add_wall([[-5, -5], [5, -5], [5, 5], [-5, 5]], closed=True)
    oid = w.add_obstacle((0, 0), 1.0)
    assert w.wall_count == 1 and w.obstacle_count == 1 and oid == 0
    ids = w.add_agents([[-3, 0], [3, 0]], targets=[[3, 0], [-3, 0]], behaviors={"seek": 1},
                       crowd="pedestrian")
    w.step(200)
    s = w.crowd_stats()
    assert s["agents"] == 2 and s["closest_pair"] >= 0.99


# -- the command's state hash ----------------------------------------------

@pytest.mark.skipif("SHOAL_CLI" not in os.environ, reason="needs the shoal command (SHOAL_CLI)")
@pytest.mark.parametrize("scenario,threads", [("flock2d.json", 1), ("flock2d.json", 2), ("default.json", 2)])
def test_same_state_hash_as_the_command(scenario, threads):
    path = os.path.join(SCENARIOS, scenario)
    steps = 60
    out = subprocess.run([os.environ["SHOAL_CLI"], "run", path, "--steps", str(steps), "--threads",
                          str(threads), "--json"], check=True, capture_output=True, text=True).stdout
    expected = int(json.loads(out)["state_hash"], 16)  # the command prints it in hex
    w = shoal.World.from_scenario(path, threads=threads)
    w.step(steps)
    assert w.state_hash == expected


# -- lifetimes --------------------------------------------------------------

def test_array_data_is_the_library_column():
    w = flock(1000)
    x = w.column("position.x")
    p = w.positions
    assert p.ctypes.data == x.ctypes.data  # no copy: the same memory
    assert p.strides[0] == 4
    assert w.column("position.y").ctypes.data == x.ctypes.data + p.strides[1]
    assert not p.flags.owndata


def test_column_outlives_del_world():
    w = flock(300)
    w.step(5)
    p = w.positions
    expected = p.copy()
    del w
    gc.collect()
    np.testing.assert_array_equal(p, expected)  # the world lives on in the array's base


def test_view_after_agents_are_added_is_stale_and_kept_alive():
    w = shoal.World(threads=1, capacity=16)
    w.add_agents(np.ones((10, 2)))
    p = w.positions
    e = w.add_component("e", np.float32)
    before = p.copy()
    w.add_agents(np.zeros((5000, 2)))  # the table grows: its old block is freed by the library
    assert not w.is_current(p) and not p.flags.writeable and not e.flags.writeable
    with pytest.raises(shoal.StaleArrayError):
        w.check(p)
    with pytest.raises(ValueError):
        e[0] = 1.0
    kept, waiting = w._blocks_kept()
    assert kept >= 1 and waiting >= 1  # the old block waits for the arrays
    np.testing.assert_array_equal(p, before)  # still readable: not freed under the array
    del p, e
    gc.collect()
    assert w._blocks_kept()[1] == 0  # released with the last array
    q = w.positions
    assert w.is_current(q) and q.shape == (5010, 2)


def test_step_turns_old_arrays_read_only_when_rows_move():
    w = flock(300)
    e = w.add_component("e", np.float32)
    v0 = w.structure_version
    w.step(1)
    assert w.structure_version != v0  # the first step reorders storage
    assert not e.flags.writeable


# -- errors -----------------------------------------------------------------

def test_errors_carry_the_library_message():
    w = shoal.World(threads=1)
    with pytest.raises(shoal.InvalidArgumentError, match="max_speed") as ex:
        w.add_agents(np.zeros((3, 2)), vehicle={"max_speed": -1})
    assert isinstance(ex.value, ValueError) and isinstance(ex.value, shoal.Error)
    assert len(w) == 0


def test_all_or_nothing_with_per_agent_values():
    w = shoal.World(threads=1)
    with pytest.raises(shoal.InvalidArgumentError):
        w.add_agents(np.zeros((4, 2)), vehicle={"max_speed": [1, 2, -3, 4]})
    assert len(w) == 0


@pytest.mark.parametrize("kwargs,match", [
    (dict(behaviors={"seeek": 1}), "did you mean 'seek'"),
    (dict(vehicle={"max_sped": 1}), "did you mean 'max_speed'"),
    (dict(velocities=np.zeros((2, 2))), "expected 3 rows"),
    (dict(headings=[1, 2]), "expected 3 values"),
    (dict(groups=[-1, 0, 1]), "non-negative"),
    (dict(vehicle={"max_speed": [1, 2]}), "one per agent"),
    (dict(neighbors={"max_neighbors": 2.5}), "not an integer"),
])
def test_bad_agent_input(kwargs, match):
    w = shoal.World(threads=1)
    with pytest.raises(shoal.InvalidArgumentError, match=match):
        w.add_agents(np.zeros((3, 2)), **kwargs)
    assert len(w) == 0


def test_unknown_crowd_preset():
    w = shoal.World(threads=1)
    with pytest.raises(shoal.NotFoundError, match="walker.*pedestrian"):
        w.add_agents(np.zeros((3, 2)), crowd="walker")
    assert len(w) == 0


def test_bad_shapes_and_values():
    w = shoal.World(threads=1)
    with pytest.raises(shoal.InvalidArgumentError, match="shape"):
        w.add_agents(np.zeros((3, 4)))
    with pytest.raises(shoal.InvalidArgumentError):
        w.add_agents(np.array([[np.nan, 0.0]]))
    with pytest.raises(shoal.InvalidArgumentError, match="dt"):
        w.step(1, dt=0)
    with pytest.raises(shoal.InvalidArgumentError):
        w.step(-1)
    with pytest.raises(shoal.InvalidArgumentError):
        shoal.World(dimensions=4)
    with pytest.raises(shoal.InvalidArgumentError, match="wrap"):
        shoal.World(wrap=True)
    with pytest.raises(shoal.InvalidArgumentError):
        w.add_wall([[0, 0], [0, 0]])
    with pytest.raises(shoal.InvalidArgumentError):
        w.add_obstacle((0, 0), -1)


def test_stale_handles_and_unknown_columns():
    w = flock(10)
    ids = w.handles()
    w.remove_agents(ids[:1])
    with pytest.raises(shoal.StaleHandleError):
        w.remove_agents(ids[:1])
    with pytest.raises(shoal.StaleHandleError):
        w.rows(ids[:1])
    with pytest.raises(shoal.StaleHandleError):
        w.set_targets(ids[:1], [[0, 0]])
    with pytest.raises(shoal.NotFoundError):
        w.column("nope")
    with pytest.raises(shoal.NotFoundError):
        w.column("position.z")  # 2D
    with pytest.raises(shoal.NotFoundError):
        w.orientations
    with pytest.raises(shoal.NotFoundError):
        w.set_system_enabled("no_such_system", False)


def test_file_errors(tmp_path):
    with pytest.raises(shoal.FileError):
        shoal.World.from_scenario(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"groups": [{"count": -1}]}')
    with pytest.raises(shoal.ParseError) as ex:
        shoal.World.from_scenario(bad)
    assert "bad.json" in str(ex.value)
    with pytest.raises(shoal.ParseError):
        shoal.World.from_bytes(b"not a snapshot")
    with pytest.raises(shoal.FileError):
        shoal.World.load(tmp_path / "missing.snap")
    with pytest.raises(shoal.FileError):
        shoal.read_recording(tmp_path / "missing.rec")
    with pytest.raises(shoal.FileError):
        flock(3).save(tmp_path / "no" / "such" / "dir.snap")


def test_component_errors():
    w = flock(5)
    with pytest.raises(shoal.InvalidArgumentError):
        w.add_component("x", np.float64)
    with pytest.raises(shoal.InvalidArgumentError):
        w.add_component("bad name!", np.float32)
    w.add_component("e", np.float32)
    with pytest.raises(shoal.InvalidArgumentError):
        w.add_component("e", np.float32)


def test_is_current_refuses_foreign_arrays():
    w = flock(5)
    with pytest.raises(shoal.InvalidArgumentError):
        w.is_current(np.zeros(3))


# -- threads ----------------------------------------------------------------

def test_step_releases_the_gil_and_the_world_refuses_a_second_call():
    w = flock(20000, threads=2)
    ticks = []
    refused = []
    done = threading.Event()

    def stepper():
        w.step(60)
        done.set()

    t = threading.Thread(target=stepper)
    t.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        try:
            w.add_agents(np.zeros((1, 2)))
        except shoal.BusyError:
            refused.append(1)
        time.sleep(0.001)
    t.join()
    assert len(ticks) >= 5  # this thread ran during the step
    assert refused  # and the world refused a call while stepping
    assert w.step_count == 60


def test_thread_counts_agree():
    hashes = set()
    for threads in (1, 2, 3):
        w = flock(3000, threads=threads, seed=7)
        w.step(40)
        hashes.add(w.state_hash)
    assert len(hashes) == 1


def test_the_shipped_scenarios_load_by_name(tmp_path, monkeypatch):
    names = shoal.scenarios()
    assert {"default.json", "tiny.json", "flock2d.json"} <= set(names)
    assert os.path.isfile(shoal.scenario_path("tiny"))
    monkeypatch.chdir(tmp_path)  # no scenarios/ here: the names are the package's
    hashes = set()
    for name in ("tiny.json", "tiny", "scenarios/tiny.json", os.path.join(SCENARIOS, "tiny.json")):
        w = shoal.World.from_scenario(name, threads=1)
        w.step(20)
        hashes.add(w.state_hash)
    assert len(hashes) == 1, "one scenario, one world"
    with pytest.raises(shoal.FileError, match="did you mean 'tiny.json'"):
        shoal.World.from_scenario("tinyy.json")
    # a path with other directories is the user's: not replaced by a shipped file
    with pytest.raises(shoal.FileError, match="no/such"):
        shoal.World.from_scenario("no/such/tiny.json")


def test_a_collector_samples_every_k_steps_into_arrays_and_csv(tmp_path):
    w = shoal.World.from_scenario("default.json", threads=1)
    line = w.add_measure_line((-5.0, -20.0), (-5.0, 20.0), name="gate")
    c = shoal.Collector(w, every=10, means=("speed", "position.x"), crowd=True, lines=True)
    c.run(45)
    d = c.data
    assert list(d["step"]) == [0, 10, 20, 30, 40, 45]  # before, every 10, after the last
    assert d["mean_speed"].shape == (6,) and d["mean_speed"][0] == 0.0 and d["mean_speed"][-1] > 0.3
    # the same figures the world gives at the end
    assert d["mean_position.x"][-1] == pytest.approx(float(np.mean(w.column("position.x"))))
    assert d["crowd_agents"][-1] == w.crowd_stats()["agents"]
    m = w.measure_line(line)
    assert d["line_gate_positive"][-1] == m["positive"] and d["line_gate_negative"][-1] == m["negative"]
    assert np.all(np.diff(d["line_gate_positive"]) >= 0), "crossings only grow"
    path = tmp_path / "figures.csv"
    c.to_csv(path)
    rows = path.read_text().splitlines()
    assert rows[0].split(",")[:4] == ["step", "time", "agents", "mean_speed"] and len(rows) == 7
    assert float(rows[-1].split(",")[3]) == d["mean_speed"][-1]
    with pytest.raises(ValueError, match="no column 'sped'"):
        shoal.Collector(w, means=("sped",))
    with pytest.raises(ValueError, match="every"):
        shoal.Collector(w, every=0)


def test_export_writes_what_the_command_writes(tmp_path):
    import sqlite3
    w = shoal.World.from_scenario("tiny.json", threads=1)
    rec = tmp_path / "tiny.rec"
    with w.record(rec, every=5) as r:
        r.step(30)
    csv, db = tmp_path / "tiny.csv", tmp_path / "tiny.sqlite"
    out = shoal.export(rec, csv=csv, sqlite=db)
    assert out[str(csv)]["frames"] == 7 and out[str(csv)]["rows"] == 7 * 200
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("frame,step,time,id,generation,global_id,group") and len(lines) == 1 + 7 * 200
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM trajectory_data").fetchone()[0] == 7 * 200
    assert con.execute("SELECT value FROM metadata WHERE key = 'shoal_agent_ids'").fetchone()[0] == "global"
    con.close()
    with pytest.raises(shoal.FileError, match="force=True"):
        shoal.export(rec, csv=csv)
    assert shoal.export(rec, csv=csv, force=True)[str(csv)]["rows"] == 7 * 200
    with pytest.raises(shoal.InvalidArgumentError, match="nothing to write"):
        shoal.export(rec)
    if "SHOAL_CLI" in os.environ:  # the command's bytes
        cli_csv = tmp_path / "cli.csv"
        subprocess.run([os.environ["SHOAL_CLI"], "export", str(rec), "--csv", str(cli_csv)], check=True,
                       capture_output=True)
        assert cli_csv.read_bytes() == csv.read_bytes()


def test_view_writes_the_page_the_command_writes(tmp_path):
    w = shoal.World.from_scenario("tiny.json", threads=1)
    rec = tmp_path / "tiny.rec"
    with w.record(rec) as r:
        r.step(20)
    page = shoal.view(rec, every=2)
    assert page == str(rec) + ".html"
    text = open(page).read()
    assert 'id="recording" data-name="tiny.rec"' in text and 'data-version="4"' in text
    assert "every 2nd frame (11 of 21)" in text, "the page says what it holds"
    # No address outside the libraries put in the page (three.js and fzstd name some in their text).
    own = re.sub(r'<script id="(three|fzstd)-js">.*?</script>', "", text, flags=re.S)
    assert "http://" not in own and "https://" not in own
    with pytest.raises(shoal.InvalidArgumentError):
        shoal.view(rec, every=0)
    if "SHOAL_CLI" in os.environ:  # the command's bytes
        cli_page = tmp_path / "cli.html"
        subprocess.run([os.environ["SHOAL_CLI"], "view", str(rec), "-o", str(cli_page), "--every", "2"],
                       check=True, capture_output=True)
        assert cli_page.read_bytes() == open(page, "rb").read()


def test_plot_draws_a_sample_of_the_traces_with_the_walls(tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:  # not a skip: the README's setup installs python3-matplotlib
        pytest.fail("needs python3-matplotlib")
    w = shoal.World.from_scenario("default.json", threads=1)
    rec = tmp_path / "plaza.rec"
    with w.record(rec, every=10) as r:
        r.step(100)
    out = tmp_path / "plaza.png"
    ax = shoal.plot(rec, out, max_agents=100)
    assert out.stat().st_size > 10_000
    assert ax.get_title() == "plaza: 100 of 1600 agents"
    lines = [c for c in ax.collections if c.get_label() and not c.get_label().startswith("_")]
    assert sum(len(c.get_segments()) for c in lines) == 100, "one trace a sampled agent"
    assert len(ax.lines) == 8 * 2 // 2, "the plaza's 8 wall segments"
    assert len(ax.patches) == 4, "its 4 obstacles"
    again = shoal.plot(shoal.read_recording(rec), max_agents=100)
    assert [len(c.get_segments()) for c in again.collections] == [len(c.get_segments()) for c in ax.collections]
