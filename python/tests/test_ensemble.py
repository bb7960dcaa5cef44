"""shoal.ensemble: rows in run order whatever the workers, each run the
world World.from_scenario (and `shoal run --seed S`) gives, settings written
into the file, bad plans refused."""
import json
import os
import subprocess

import numpy as np
import pytest

import shoal

SCENARIOS = os.environ.get("SHOAL_SCENARIOS", os.path.join(os.path.dirname(__file__), "..", "..", "scenarios"))
TINY = os.path.join(SCENARIOS, "tiny.json")
DEFAULT = os.path.join(SCENARIOS, "default.json")


def test_rows_do_not_depend_on_the_workers_and_are_the_worlds_runs():
    one = shoal.ensemble(TINY, seeds=range(1, 5), steps=30, workers=1)
    two = shoal.ensemble(TINY, seeds=range(1, 5), steps=30, workers=2)
    assert one.dtype == two.dtype and len(one) == 4
    assert list(one["run"]) == [0, 1, 2, 3] and list(one["seed"]) == [1, 2, 3, 4]
    for name in one.dtype.names:
        assert np.array_equal(one[name], two[name]), name
    for row in one:
        w = shoal.World.from_scenario(TINY, seed=int(row["seed"]))
        w.step(30)
        assert row["state_hash"] == f"{w.state_hash:016x}"
    assert len(set(one["state_hash"])) == 4


def test_a_grid_of_settings_reaches_the_runs():
    t = shoal.ensemble(DEFAULT, seeds=[3, 4], steps=20,
                       settings={"crowd.time_gap": [0.6, 1.4], "world.reorder_interval": [0, 7]}, workers=2)
    assert len(t) == 8
    assert list(t["point"]) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert list(t["crowd.time_gap"]) == [0.6, 0.6, 0.6, 0.6, 1.4, 1.4, 1.4, 1.4]
    assert list(t["world.reorder_interval"]) == [0, 0, 7, 7, 0, 0, 7, 7]
    # the reorder interval changes no result, the time gap does
    assert t["state_hash"][0] == t["state_hash"][2] and t["state_hash"][0] != t["state_hash"][4]
    assert np.all(t["crowd.agents"] == 1600)


@pytest.mark.skipif("SHOAL_CLI" not in os.environ, reason="needs the command (SHOAL_CLI, set by ctest)")
def test_the_same_rows_as_the_command(tmp_path):
    out = tmp_path / "rows.jsonl"
    subprocess.run([os.environ["SHOAL_CLI"], "ensemble", DEFAULT, "--seeds", "1-3", "--steps", "15",
                    "--set", "crowd.time_gap=0.8,1.2", "--out", str(out), "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    t = shoal.ensemble(DEFAULT, seeds=[1, 2, 3], steps=15, settings={"crowd.time_gap": [0.8, 1.2]}, workers=2)
    assert [r["state_hash"] for r in rows] == list(t["state_hash"])
    assert [r["crowd.closest_pair"] for r in rows] == pytest.approx(list(t["crowd.closest_pair"]), rel=1e-7)


def test_bad_plans_are_refused():
    with pytest.raises(ValueError, match="no seeds"):
        shoal.ensemble(TINY, seeds=[])
    with pytest.raises(ValueError, match="at least one value"):
        shoal.ensemble(TINY, settings={"count": []})
    with pytest.raises(shoal.ParseError, match="count"):
        shoal.ensemble(TINY, seeds=[1], steps=2, settings={"count": [-4]}, workers=1)


def test_global_ids_follow_their_agents():
    w = shoal.World(threads=1, seed=2)
    w.add_agents(np.random.default_rng(1).random((300, 2)) * 50, behaviors={"separate": 1, "wander": 1})
    handles, ids = w.handles(), w.global_ids
    assert sorted(ids) == list(range(300))
    w.remove_agents(handles[:1])
    w.add_agents(np.zeros((1, 2)))
    assert 300 in set(w.global_ids) and 0 not in set(w.global_ids)
    before = dict(zip(w.handles(), w.global_ids))
    w.step(40)  # reorders move rows; ids stay with their agents
    assert dict(zip(w.handles(), w.global_ids)) == before
