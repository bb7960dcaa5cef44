"""The binding against misuse: recordings every reader takes."""
import numpy as np
import pytest

import shoal

FLOCK = {"separate": 1.5, "align": 1.0, "cohere": 1.0, "wander": 0.5}


def flock(n=200, threads=1, seed=1, dims=2):
    w = shoal.World(dimensions=dims, threads=threads, seed=seed)
    rng = np.random.default_rng(seed)
    w.add_agents(rng.uniform(0, 40, size=(n, dims)), behaviors=FLOCK)
    return w


# -- recordings ---------------------------------------------------------------

def test_recorder_frames_read_back_exactly(tmp_path):
    w = shoal.World(threads=1, dimensions=2)
    ids = w.add_agents(np.random.default_rng(3).uniform(0, 10, (20, 2)), behaviors={"wander": 1})
    path = tmp_path / "frames.rec"
    expected = []
    with w.record(path) as rec:
        for k in range(6):
            rec.frame()
            expected.append((w.step_count, w.handles() & 0xFFFFFFFF, w.positions.copy()))
            if k == 2:
                w.remove_agents(ids[:5])
            w.step(k % 3)  # 0 steps between two frames too
    r = shoal.read_recording(path)
    assert r["complete"] and list(r["steps"]) == [s for s, _, _ in expected]
    for i, (_, rows, pos) in enumerate(expected):
        cols = np.searchsorted(r["ids"], rows)
        np.testing.assert_array_equal(r["positions"][i][cols], pos)
        assert r["present"][i].sum() == len(rows)


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
