"""Navigation meshes from Python: pedestrians round a wall, each to a goal
of its own or all to one, the mesh's parameters and stats, and every
refusal leaving the world as it was. In a build without Recast and Detour
(shoal.navmesh_available() is False) each test checks the documented
refusal instead: NotFoundError saying what is missing."""
import numpy as np
import pytest

import shoal

WALL = [(0, -5), (0, 5)]
AVAILABLE = shoal.navmesh_available()


def expect_unavailable(call):
    """Without Recast: the call raises NotFoundError naming what is
    missing."""
    with pytest.raises(shoal.NotFoundError, match="built without Recast/Detour.*librecast-dev"):
        call()


def test_navmesh_available_is_a_bool():
    assert isinstance(shoal.navmesh_available(), bool)
    assert "navmesh_available" in shoal.__all__
    assert shoal.BEHAVIORS[14] == "navmesh"


def test_pedestrians_round_a_wall_each_reach_a_goal_of_their_own():
    w = shoal.World(threads=2, seed=5)
    w.add_wall(WALL)
    rng = np.random.default_rng(11)
    n = 20
    start = np.column_stack([rng.uniform(-4.5, -1.5, n), np.linspace(-3.5, 3.5, n)])
    goals = np.column_stack([np.full(n, 4.0), np.linspace(-3.8, 3.8, n)])
    if not AVAILABLE:
        before = w.state_hash
        expect_unavailable(lambda: w.set_navmesh(bounds=((-8, -8), (8, 8))))
        expect_unavailable(lambda: w.add_agents(start, crowd="pedestrian", behaviors={"navmesh": 1.0},
                                                navmesh={"goal": goals}))
        expect_unavailable(w.navmesh_update)
        assert w.agent_count == 0 and w.state_hash == before
        assert w.navmesh_stats()["polygons"] == 0
        return
    w.set_navmesh(bounds=((-8, -8), (8, 8)), replans_per_step=8)
    ids = w.add_agents(start, crowd="pedestrian", behaviors={"navmesh": 1.0},
                       navmesh={"goal": goals, "arrive_distance": 0.3})
    w.navmesh_update()
    s = w.navmesh_stats()
    assert s["agents"] == n and s["arrived"] == 0 and s["waiting"] == n and s["polygons"] > 2
    w.step(1, dt=0.05)
    s = w.navmesh_stats()
    assert s["replans"] == 8 and s["pending"] == n - 8, s
    steps = 1
    while steps < 2400:
        w.step(20, dt=0.05)
        steps += 20
        s = w.navmesh_stats()
        assert s["no_way"] == 0 and s["off_mesh"] == 0, s
        if s["arrived"] == n:
            break
    assert s["arrived"] == n, f"{s['arrived']} of {n} arrived in {steps} steps: {s}"
    # each one at its own goal: the per-agent goals reached the library
    xy = w.positions[w.rows(ids)].astype(float)
    assert (np.linalg.norm(xy - goals, axis=1) < 0.5).all(), xy


def test_one_goal_for_all():
    w = shoal.World(threads=1)
    w.add_wall(WALL)
    start = np.array([[-2.0, -1.0], [-2.0, 1.0], [-3.0, 0.0]])
    if not AVAILABLE:
        expect_unavailable(lambda: w.add_agents(start, behaviors={"navmesh": 1.0}, navmesh={"goal": (3, 0)}))
        assert w.agent_count == 0
        return
    # the floor must reach the goal: the walls' box and its margin would not
    w.set_navmesh(bounds=((-6, -6), (6, 6)))
    w.add_agents(start, crowd="pedestrian", behaviors={"navmesh": 1.0},
                 navmesh={"goal": (3, 0), "arrive_distance": 1.0})
    for _ in range(60):
        w.step(20, dt=0.05)
        if w.navmesh_stats()["arrived"] == 3:
            break
    assert w.navmesh_stats()["arrived"] == 3
    xy = w.positions.astype(float)
    assert (np.linalg.norm(xy - [3, 0], axis=1) < 1.5).all(), xy


def test_parameters_round_trip_and_default():
    w = shoal.World(threads=1)
    default = w.get_navmesh()
    assert default == {"cell": pytest.approx(0.1), "agent_radius": 0.25, "bounds": None, "margin": 2.0,
                       "replans_per_step": 64, "replan_interval": 100, "off_path_distance": 1.0}
    if not AVAILABLE:
        expect_unavailable(lambda: w.set_navmesh(cell=0.2))
        assert w.get_navmesh() == default
        return
    w.set_navmesh(cell=0.2, agent_radius=0.4, bounds=((-1, -2), (3, 4)), margin=0.5, replans_per_step=5,
                  replan_interval=0, off_path_distance=2)
    p = w.get_navmesh()
    assert p == {"cell": pytest.approx(0.2), "agent_radius": pytest.approx(0.4),
                 "bounds": ((-1, -2), (3, 4)), "margin": 0.5, "replans_per_step": 5, "replan_interval": 0,
                 "off_path_distance": 2.0}
    hash_before = w.state_hash
    w.set_navmesh(**w.get_navmesh())
    assert w.get_navmesh() == p and w.state_hash == hash_before
    # a parameter left out takes the default again
    w.set_navmesh()
    assert w.get_navmesh() == default


@pytest.mark.parametrize("params, error, match", [
    ({"cell": 0.01}, shoal.InvalidArgumentError, "cell"),
    ({"cell": 11}, shoal.InvalidArgumentError, "cell"),
    ({"cell": float("nan")}, shoal.InvalidArgumentError, "cell"),
    ({"agent_radius": 0}, shoal.InvalidArgumentError, "agent_radius"),
    ({"margin": -1}, shoal.InvalidArgumentError, "margin"),
    ({"replans_per_step": 0}, shoal.InvalidArgumentError, "replans_per_step"),
    ({"replan_interval": -1}, shoal.InvalidArgumentError, "replan_interval"),
    ({"off_path_distance": 0}, shoal.InvalidArgumentError, "off_path_distance"),
    ({"bounds": ((5, 5), (0, 0))}, shoal.InvalidArgumentError, "bounds"),
    ({"bounds": ((0, 0), (1e5, 1e5)), "cell": 0.02}, shoal.CapacityError, ""),
])
def test_bad_parameters_are_refused_with_the_world_unchanged(params, error, match):
    w = shoal.World(threads=1)
    before = w.get_navmesh()
    if not AVAILABLE:
        expect_unavailable(lambda: w.set_navmesh(**params))
    else:
        with pytest.raises(error, match=match):
            w.set_navmesh(**params)
    assert w.get_navmesh() == before


@pytest.mark.parametrize("params, error, match", [
    ({"cell": "0.1"}, shoal.InvalidTypeError, "set_navmesh: cell: expected a number"),
    ({"replans_per_step": 1.5}, shoal.InvalidArgumentError, "replans_per_step"),
    ({"bounds": ((0, 0, 0), (1, 1, 1))}, shoal.InvalidArgumentError, "bounds"),
])
def test_bad_types_are_refused_before_the_library(params, error, match):
    w = shoal.World(threads=1)
    with pytest.raises(error, match=match):
        w.set_navmesh(**params)
    with pytest.raises(TypeError):
        w.set_navmesh(cel=0.1)


@pytest.mark.parametrize("navmesh, match", [
    ({"goal": (1, 2, 3)}, r"navmesh.goal: expected a point \(x, y\) or an array of shape \(3, 2\)"),
    ({"goal": np.zeros((2, 2))}, r"navmesh.goal: .*got shape \(2, 2\)"),
    ({"goal": np.zeros((3, 3))}, r"navmesh.goal: .*got shape \(3, 3\)"),
    ({"gaol": (1, 2)}, "navmesh: unknown field 'gaol'.*did you mean 'goal'"),
    ({"arrive_distance": [1, 2]}, "navmesh.arrive_distance"),
])
def test_bad_agent_fields_add_no_agent(navmesh, match):
    w = shoal.World(threads=1)
    before = w.state_hash
    with pytest.raises(shoal.InvalidArgumentError, match=match):
        w.add_agents(np.zeros((3, 2)), behaviors={"navmesh": 1.0}, navmesh=navmesh)
    assert w.agent_count == 0 and w.state_hash == before


def test_library_refusals_of_agent_fields_add_no_agent():
    w = shoal.World(threads=1)
    before = w.state_hash
    goals = np.array([[1.0, 0.0], [np.inf, 0.0], [2.0, 0.0]])
    # a non-finite goal or a negative arrive distance: the library's
    # checks, or without Recast its refusal; either way nothing is added
    error = shoal.InvalidArgumentError if AVAILABLE else shoal.NotFoundError
    with pytest.raises(error):
        w.add_agents(np.zeros((3, 2)), behaviors={"navmesh": 1.0}, navmesh={"goal": goals})
    with pytest.raises(error):
        w.add_agents(np.zeros((3, 2)), behaviors={"navmesh": 1.0},
                     navmesh={"goal": (1, 1), "arrive_distance": -1})
    assert w.agent_count == 0 and w.state_hash == before


def test_navmesh_is_2d_only():
    w = shoal.World(dimensions=3, threads=1)
    error = shoal.InvalidArgumentError if AVAILABLE else shoal.NotFoundError
    with pytest.raises(error, match="3D" if AVAILABLE else "Recast/Detour"):
        w.set_navmesh()
    with pytest.raises(error):
        w.add_agents(np.zeros((2, 3)), behaviors={"navmesh": 1.0}, navmesh={"goal": (1, 1)})
    assert w.agent_count == 0


def test_a_whole_path_round_the_wall():
    w = shoal.World(threads=1)
    w.add_wall(WALL)
    if not AVAILABLE:
        expect_unavailable(lambda: w.navmesh_path((-3, 0), (3, 0)))
        return
    w.set_navmesh(bounds=((-10, -10), (10, 10)))
    h = w.state_hash
    points, partial = w.navmesh_path((-3, 0), (3, 0))
    assert points.dtype == np.float32 and points.ndim == 2 and points.shape[1] == 2
    assert len(points) >= 3 and not partial
    assert np.allclose(points[0], (-3, 0), atol=0.3) and np.allclose(points[-1], (3, 0), atol=0.3)
    # round an end of the wall, keeping the mesh's clearance from it
    assert np.abs(points[1:-1, 1]).min() > 5.0
    assert w.state_hash == h
    with pytest.raises(shoal.NotFoundError, match="no walkable polygon within 2 m"):
        w.navmesh_path((-3, 0), (50, 50))
    with pytest.raises(shoal.InvalidArgumentError, match="navmesh_path: goal"):
        w.navmesh_path((-3, 0), (1, 2, 3))
