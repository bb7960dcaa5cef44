"""Measurement lines and areas from Python: walkers counted once each way at
their time, the flow series, a lattice's density, numpy arrays of the right
types, one result for 1 and 2 threads, and every refusal leaving the world
as it was."""
import numpy as np
import pytest

import shoal

SPEED = 1.25
DT = 0.05


def walkers(w, xs, ys, direction):
    """Agents that seek a far target along x at SPEED, starting at it."""
    n = len(xs)
    pos = np.column_stack([xs, ys])
    return w.add_agents(pos, velocities=np.column_stack([np.full(n, direction * SPEED), np.zeros(n)]),
                        headings=np.full(n, 0.0 if direction > 0 else np.pi),
                        targets=np.column_stack([np.full(n, direction * 1e6), ys]),
                        behaviors={"seek": 1.0}, vehicle={"max_speed": SPEED})


def test_walkers_are_counted_once_each_way_at_their_time():
    w = shoal.World(threads=1)
    xe = -0.4 - 0.6 * np.arange(10)
    xw = 0.5 + 0.7 * np.arange(6)
    east = walkers(w, xe, np.linspace(-4, 4, 10), 1)
    west = walkers(w, xw, np.linspace(-4, 4, 6), -1)
    door = w.add_measure_line((0, -5), (0, 5), name="door", window=0.5)
    assert door == 0 and w.measure_line_count == 1
    w.step(200, dt=DT)
    s = w.measure_line(door)
    assert s["name"] == "door" and s["positive"] == 10 and s["negative"] == 6 and s["group"] is None
    assert s["duration"] == pytest.approx(10.0)
    assert s["mean_flow"] == pytest.approx(16 / s["duration"])
    c = w.measure_line_crossings(door)
    assert c["time"].dtype == np.float64 and c["step"].dtype == np.uint64
    assert c["direction"].dtype == np.int32 and c["agent"].dtype == np.uint64
    assert len(c["time"]) == 16 and (np.diff(c["time"]) >= 0).all()
    for ids, xs, sign in ((east, xe, 1), (west, xw, -1)):
        for h, x in zip(ids, xs):
            k = np.flatnonzero(c["agent"] == h)
            assert len(k) == 1
            assert c["direction"][k[0]] == sign
            assert c["time"][k[0]] == pytest.approx(abs(x) / SPEED, abs=1e-3)
    assert s["first_time"] == c["time"][0] and s["last_time"] == c["time"][-1]
    flow = w.measure_line_flow(door)
    assert flow.dtype == np.float64 and len(flow) == 20
    assert flow.sum() * 0.5 == pytest.approx(16)


def test_a_lattice_has_its_density():
    w = shoal.World(threads=1)
    g = 0.8 * (np.arange(-10, 10) + 0.5)
    xy = np.array([(x, y) for x in g for y in g])
    w.add_agents(xy)
    a = w.add_measure_area([(-2.4, -2.4), (2.4, -2.4), (2.4, 2.4), (-2.4, 2.4)], name="box", every=2)
    b = w.add_measure_area(np.array([(-2.1, -1.9), (2.5, -1.9), (2.5, 2.35), (-2.1, 2.35)]), cell_radius=1.5)
    assert w.measure_area_count == 2
    w.step(10, dt=DT)
    s = w.measure_area_samples(a)
    assert list(s["step"]) == [2, 4, 6, 8, 10]
    assert s["count"].dtype == np.int32 and s["density"].dtype == np.float32
    assert (s["count"] == 36).all()
    assert s["density"] == pytest.approx(1 / 0.64)
    assert s["voronoi_density"] == pytest.approx(1 / 0.64, rel=1e-3)
    assert (s["speed"] == 0).all()
    m = w.measure_area(b)
    assert m["name"] == "area1" and m["samples"] == 10 and m["cell_radius"] == 1.5
    assert m["mean_voronoi_density"] == pytest.approx(1 / 0.64, rel=1e-3)
    assert w.measure_area(a, 0.0, 0.25)["samples"] == 2


def crowd(threads):
    w = shoal.World(threads=threads, seed=5)
    rng = np.random.default_rng(2)
    n = 120
    side = np.where(np.arange(n) % 2 == 0, -1.0, 1.0)
    pos = np.column_stack([side * rng.uniform(3, 10, n), rng.uniform(-4, 4, n)])
    w.add_agents(pos, targets=np.column_stack([-side * 30, pos[:, 1]]), behaviors={"seek": 1.0},
                 crowd="pedestrian", groups=np.arange(n) % 3)
    w.add_measure_line((0, -5), (0, 5))
    w.add_measure_line((1, -5), (1, 5), group=1)
    w.add_measure_area([(-2, -4), (2, -4), (2, 4), (-2, 4)], every=3)
    w.step(120, dt=DT)
    return w


def test_one_result_for_1_and_2_threads():
    one, two = crowd(1), crowd(2)
    assert one.state_hash == two.state_hash
    for k in range(2):
        a, b = one.measure_line_crossings(k), two.measure_line_crossings(k)
        assert len(a["time"]) > 5
        for key in ("time", "step", "direction"):
            assert np.array_equal(a[key], b[key])
    sa, sb = one.measure_area_samples(0), two.measure_area_samples(0)
    for key in sa:
        assert np.array_equal(sa[key], sb[key]), key


def test_bad_input_is_refused_with_the_world_unchanged():
    w = shoal.World(threads=1)
    with pytest.raises(shoal.InvalidArgumentError, match="same point"):
        w.add_measure_line((1, 1), (1, 1))
    with pytest.raises(shoal.InvalidArgumentError, match="window"):
        w.add_measure_line((0, 0), (1, 0), window=0)
    with pytest.raises(shoal.InvalidArgumentError, match="expected two points"):
        w.add_measure_line((0, 0, 0), (1, 0))
    with pytest.raises(shoal.InvalidArgumentError, match="longer than 31 bytes"):
        w.add_measure_line((0, 0), (1, 0), name="x" * 40)
    with pytest.raises(shoal.InvalidArgumentError, match="zero area"):
        w.add_measure_area([(0, 0), (1, 1), (2, 2)])
    with pytest.raises(shoal.InvalidArgumentError, match="3 to 16 points"):
        w.add_measure_area([(0, 0), (1, 1)])
    with pytest.raises(shoal.InvalidArgumentError, match="every"):
        w.add_measure_area([(0, 0), (1, 0), (0, 1)], every=0)
    assert w.measure_line_count == 0 and w.measure_area_count == 0
    with pytest.raises(shoal.NotFoundError, match="no measurement line 0"):
        w.measure_line(0)
    with pytest.raises(shoal.NotFoundError):
        w.measure_line_crossings(2)
    with pytest.raises(shoal.NotFoundError):
        w.measure_area_samples(0)
    w3 = shoal.World(dimensions=3, threads=1)
    with pytest.raises(shoal.InvalidArgumentError, match="3D"):
        w3.add_measure_line((0, 0), (1, 0))
