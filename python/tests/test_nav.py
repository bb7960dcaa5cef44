"""Navigation fields from Python: pedestrians round a U-shaped wall to an
area goal, fields against the Euclidean distance in the open, the arrays'
shapes and values, the grid's parameters, and every refusal leaving the
world as it was."""
import numpy as np
import pytest

import shoal

CUP = [(-5, 4), (0, 4), (0, -4), (-5, -4)]
ROOM = [[3, -2], [7, -2], [7, 2], [3, 2]]


def segment_distance(p, a, b):
    """Distance from each point of p (N, 2) to the segment a-b."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    t = np.clip(((p - a) @ d) / (d @ d), 0.0, 1.0)
    return np.linalg.norm(a + t[:, None] * d - p, axis=1)


def test_navigate_is_a_behavior():
    assert shoal.BEHAVIORS[13] == "navigate" and shoal.BEHAVIORS[14] == "navmesh" and len(shoal.BEHAVIORS) == 15


def test_pedestrians_behind_a_u_shaped_wall_all_reach_an_area_goal():
    w = shoal.World(threads=2, seed=3)
    w.add_wall(CUP)
    goal = w.add_nav_goal(area=np.array(ROOM, dtype=np.float64))
    assert goal == 0 and w.nav_goal_count == 1
    # inside the cup: the way out is back, away from the goal
    rng = np.random.default_rng(7)
    n = 40
    start = np.column_stack([rng.uniform(-4.5, -1.0, n), rng.uniform(-3.5, 3.5, n)])
    ids = w.add_agents(start, crowd="pedestrian", behaviors={"navigate": 1.0}, nav={"goal": goal})
    radius = w.column("radius")[0]
    s = w.nav_stats()
    assert s["agents"] == n and s["arrived"] == 0
    dt, steps = 0.05, 0
    while steps < 2400:
        w.step(20, dt=dt)
        steps += 20
        xy = w.positions.astype(float)
        for a, b in zip(CUP[:-1], CUP[1:]):
            closest = segment_distance(xy, a, b).min()
            assert closest >= 0.9 * radius, f"step {steps}: an agent {closest:.3f} m from the wall"
        s = w.nav_stats(goal)
        assert s["no_way"] == 0
        if s["arrived"] == n:
            break
    assert s["arrived"] == n, f"{s['arrived']} of {n} arrived in {steps} steps: {s}"
    assert w.nav_stats() == s
    # every one of them in the room (within arrive distance of it)
    xy = w.positions[w.rows(ids)]
    assert (xy[:, 0] > 3 - 0.5).all() and (xy[:, 0] < 7.5).all() and (np.abs(xy[:, 1]) < 2.5).all()
    assert s["mean_remaining"] == 0.0


def test_a_field_in_the_open_is_the_euclidean_distance():
    w = shoal.World(threads=1)
    g = w.add_nav_goal(point=(0, 0))
    w.set_nav(margin=10)
    with pytest.raises(shoal.NotFoundError, match="nav_update"):
        w.nav_field(g)
    w.nav_update()
    grid = w.nav_grid()
    assert (grid["nx"], grid["ny"], grid["blocked"]) == (200, 200, 0)
    assert grid["cell"] == pytest.approx(0.1)
    T = w.nav_field(g)
    assert T.dtype == np.float32 and T.shape == (200, 200) and T.flags.c_contiguous
    x = grid["origin"][0] + (np.arange(grid["nx"]) + 0.5) * grid["cell"]
    y = grid["origin"][1] + (np.arange(grid["ny"]) + 0.5) * grid["cell"]
    d = np.hypot(x[None, :], y[:, None])  # row j is y, column i is x
    far = d >= 1.0
    worst = np.max(np.abs(T[far] - d[far]) / d[far])
    assert worst < 0.02, f"worst relative error {worst}"
    assert not w.nav_blocked().any()


def test_the_field_has_the_grid_shape_and_inf_in_walls():
    w = shoal.World(threads=1)
    w.add_wall(CUP)
    g = w.add_nav_goal(line=((6, -3), (6, 3)))
    w.nav_update()
    grid = w.nav_grid()
    T = w.nav_field(g)
    blocked = w.nav_blocked()
    assert T.shape == blocked.shape == (grid["ny"], grid["nx"])
    assert blocked.dtype == np.bool_ and blocked.sum() == grid["blocked"] > 0
    assert np.isinf(T[blocked]).all()
    assert np.isfinite(T[~blocked]).all()  # every open cell has a way round the cup
    assert (T >= 0).all() and grid["bytes"] > 0

    def cell(x, y):
        return (int((y - grid["origin"][1]) // grid["cell"]), int((x - grid["origin"][0]) // grid["cell"]))

    for p in [(0, 0), (-2.5, 4), (0, -4), (-5, -4)]:  # on the wall
        assert blocked[cell(*p)] and np.isinf(T[cell(*p)])
    # inside the cup the way is round the wall: 8 m straight, about 18 m out
    # of the cup's mouth and round its side
    assert 16 < T[cell(-2, 0)] < 20
    assert T[cell(6, 0)] == T.min() < grid["cell"]  # on the line


def test_nav_parameters_round_trip():
    w = shoal.World(threads=1)
    p = w.get_nav()
    assert p == {"cell": pytest.approx(0.1), "clearance": 0.25, "wall_distance": 0.5, "wall_speed": 0.5,
                 "bounds": None, "margin": 2.0, "max_bytes": 2.0 ** 30, "density_weight": 0.0,
                 "density_interval": 20}
    w.set_nav(cell=0.2, clearance=0.3, wall_distance=0.0, wall_speed=1, bounds=((-10, -8), (10, 8)),
              max_bytes=1e8)
    q = w.get_nav()
    assert q["cell"] == pytest.approx(0.2) and q["clearance"] == pytest.approx(0.3)
    assert q["wall_distance"] == 0 and q["wall_speed"] == 1 and q["max_bytes"] == 1e8
    assert q["bounds"] == ((-10, -8), (10, 8)) and q["margin"] == 2.0
    w.set_nav(**q)
    assert w.get_nav() == q
    w.add_nav_goal(point=(1, 1))
    w.nav_update()
    grid = w.nav_grid()
    assert (grid["nx"], grid["ny"]) == (100, 80) and grid["origin"] == (-10, -8)
    # keywords left out take the library's defaults again
    w.set_nav()
    assert w.get_nav() == p


def test_goals_per_agent_and_a_removed_goal():
    w = shoal.World(threads=1)
    a = w.add_nav_goal(point=(10, 0))
    b = w.add_nav_goal(point=(-10, 0))
    assert (a, b) == (0, 1) and w.nav_goal_count == 2
    goals = np.array([a, b, a, b, a])
    ids = w.add_agents(np.column_stack([np.zeros(5), np.arange(5) * 2.0]), crowd="pedestrian",
                       behaviors={"navigate": 1},
                       nav={"goal": goals, "arrive_distance": [0.3, 0.3, 0.5, 0.5, 0.3]})
    w.step(1, dt=0.05)
    assert w.nav_stats(a)["agents"] == 3 and w.nav_stats(b)["agents"] == 2
    w.step(40, dt=0.05)
    xy = w.positions[w.rows(ids)]
    assert (xy[goals == a, 0] > 1).all() and (xy[goals == b, 0] < -1).all()
    w.remove_nav_goal(b)
    assert w.nav_goal_count == 1
    w.step(1, dt=0.05)
    assert w.nav_stats(b)["no_way"] == 2 and w.nav_stats(a)["no_way"] == 0
    with pytest.raises(shoal.NotFoundError):
        w.nav_field(b)
    with pytest.raises(shoal.NotFoundError):
        w.remove_nav_goal(b)
    # a new goal gets a new id
    assert w.add_nav_goal(point=(0, 10)) == 2


def test_a_goal_inside_a_wall_is_refused_once_the_grid_is_built():
    w = shoal.World(threads=1)
    w.add_wall(CUP)
    w.add_nav_goal(area=ROOM)
    w.nav_update()
    before = (w.state_hash, w.nav_goal_count, w.nav_grid())
    with pytest.raises(shoal.InvalidArgumentError, match="no walkable cell"):
        w.add_nav_goal(point=(0, 0))
    with pytest.raises(shoal.InvalidArgumentError, match="no walkable cell"):
        w.add_nav_goal(line=((0, -2), (0, 2)))
    assert (w.state_hash, w.nav_goal_count, w.nav_grid()) == before
    w.nav_field(0)  # the fields are still solved


def test_a_3d_world_has_no_navigation():
    w = shoal.World(dimensions=3, threads=1)
    with pytest.raises(shoal.InvalidArgumentError, match="2D"):
        w.add_nav_goal(point=(1, 1))
    with pytest.raises(shoal.InvalidArgumentError, match="2D"):
        w.set_nav(cell=0.2)
    with pytest.raises(shoal.InvalidArgumentError, match="2D"):
        w.nav_update()
    with pytest.raises(shoal.InvalidArgumentError, match="3D"):
        w.add_agents(np.zeros((1, 3)), behaviors={"navigate": 1}, nav={"goal": 0})
    assert w.nav_goal_count == 0 and len(w) == 0


@pytest.mark.parametrize("kwargs,match", [
    ({}, "exactly one of"),
    ({"point": (1, 1), "area": ROOM}, "exactly one of.*got point, area"),
    ({"point": (1, 1, 1)}, r"point: expected a point \(x, y\), got shape \(3,\)"),
    ({"point": [[1, 1]]}, r"point: expected a point"),
    ({"point": "here"}, r"point: expected a point"),
    ({"line": ((0, 0), (1, 1), (2, 2))}, r"line: expected two points .* got shape \(3, 2\)"),
    ({"line": ((0, 0), (0, 0))}, "two equal points"),
    ({"area": [(0, 0), (1, 1)]}, r"area: expected a polygon of 3 to 16 points"),
    ({"area": np.zeros((17, 2))}, r"area: expected a polygon of 3 to 16 points, .* got shape \(17, 2\)"),
    ({"area": [(0, 0), (1, 1), (2, 2)]}, "zero area"),
    ({"point": (np.nan, 0)}, "finite"),
    ({"point": (1e30, 0)}, r"within \+-1e\+18"),
])
def test_bad_goals_are_refused(kwargs, match):
    w = shoal.World(threads=1)
    w.add_nav_goal(point=(5, 5))
    h = w.state_hash
    with pytest.raises(shoal.InvalidArgumentError, match=match):
        w.add_nav_goal(**kwargs)
    assert w.nav_goal_count == 1 and w.state_hash == h
    assert w.add_nav_goal(point=(6, 6)) == 1  # no id was used up


def test_an_unknown_goal_kind_is_a_type_error():
    w = shoal.World(threads=1)
    with pytest.raises(TypeError):
        w.add_nav_goal(circle=((0, 0), 1))
    with pytest.raises(TypeError):
        w.add_nav_goal((0, 0))  # keyword only: the kind is named


@pytest.mark.parametrize("kwargs,error,match", [
    ({"wall_speed": 0}, shoal.InvalidArgumentError, "wall_speed"),
    ({"clearance": 0.01}, shoal.InvalidArgumentError, "clearance"),
    ({"cell": -1}, shoal.InvalidArgumentError, "cell"),
    ({"cell": float("nan")}, shoal.InvalidArgumentError, "cell"),
    ({"cell": "0.1"}, shoal.InvalidTypeError, "cell: expected a number"),
    ({"bounds": ((5, 5), (0, 0))}, shoal.InvalidArgumentError, "bounds"),
    ({"bounds": ((0, 0, 0), (1, 1, 1))}, shoal.InvalidArgumentError, "bounds"),
    ({"cell": 1e-4, "clearance": 0.25}, shoal.CapacityError, "max_bytes"),
])
def test_bad_nav_parameters_are_refused(kwargs, error, match):
    w = shoal.World(threads=1)
    w.add_wall(CUP)
    w.add_nav_goal(area=ROOM)
    w.set_nav(cell=0.125)
    before = w.get_nav()
    with pytest.raises(error, match=match):
        w.set_nav(**kwargs)
    assert w.get_nav() == before


def test_bad_navigating_agents_and_ids_are_refused():
    w = shoal.World(threads=1)
    g = w.add_nav_goal(point=(5, 0))
    w.add_agents([[0, 0]], behaviors={"navigate": 1}, nav={"goal": g})
    h = w.state_hash
    with pytest.raises(shoal.InvalidArgumentError, match="nav.goal"):
        w.add_agents([[1, 0]], behaviors={"navigate": 1}, nav={"goal": 9})
    with pytest.raises(shoal.InvalidArgumentError, match="nav.goal"):
        w.add_agents([[1, 0]], behaviors={"navigate": 1})  # no goal
    with pytest.raises(shoal.InvalidArgumentError, match="nav.goal"):
        w.add_agents([[1, 0], [2, 0]], behaviors={"navigate": 1}, nav={"goal": [g, 9]})
    with pytest.raises(shoal.InvalidArgumentError, match="nav.goal: 0.5 is not an integer"):
        w.add_agents([[1, 0]], behaviors={"navigate": 1}, nav={"goal": 0.5})
    with pytest.raises(shoal.InvalidArgumentError, match="arrive_distance"):
        w.add_agents([[1, 0]], behaviors={"navigate": 1}, nav={"goal": g, "arrive_distance": -1})
    with pytest.raises(shoal.InvalidArgumentError, match="did you mean 'goal'"):
        w.add_agents([[1, 0]], behaviors={"navigate": 1}, nav={"gaol": g})
    with pytest.raises(shoal.InvalidArgumentError, match="did you mean 'navigate'"):
        w.add_agents([[1, 0]], behaviors={"navigat": 1}, nav={"goal": g})
    assert len(w) == 1 and w.state_hash == h
    with pytest.raises(shoal.NotFoundError):
        w.remove_nav_goal(9)
    with pytest.raises(shoal.NotFoundError):
        w.nav_stats(9)
    with pytest.raises(shoal.InvalidArgumentError, match="nav_blocked"):
        w.nav_field(-1)
    with pytest.raises(shoal.InvalidTypeError):
        w.nav_field(0.0)
    with pytest.raises(shoal.InvalidTypeError):
        w.remove_nav_goal("0")
    assert w.nav_goal_count == 1


def test_walkers_leave_through_the_quickest_of_two_exit_lines():
    """One goal of two exit segments, one at each end of a corridor: every
    walker leaves, each through the nearer one, and is counted."""
    w = shoal.World(threads=1, seed=5)
    w.add_wall([(-10, 2), (10, 2)])
    w.add_wall([(-10, -2), (10, -2)])
    exits = w.add_nav_goal(line=[((-10, -2), (-10, 2)), ((10, -2), (10, 2))], exit=True)
    xs = np.array([-6.0, -3.0, -1.0, 1.5, 4.0, 7.0])
    w.add_agents(np.column_stack([xs, np.zeros_like(xs)]), crowd="pedestrian",
                 behaviors={"navigate": 1.0}, nav={"goal": exits})
    for _ in range(40):
        w.step(10, dt=0.05)
        if w.agent_count == 0:
            break
    assert w.agent_count == 0
    assert w.nav_stats(exits)["exited"] == 6
    assert w.get_nav()["density_weight"] == 0.0


def test_congestion_parameters_round_trip_and_are_checked():
    w = shoal.World(threads=1)
    w.set_nav(density_weight=1.5, density_interval=10)
    p = w.get_nav()
    assert p["density_weight"] == 1.5 and p["density_interval"] == 10
    with pytest.raises(shoal.InvalidArgumentError):
        w.set_nav(density_weight=-1.0)
    with pytest.raises((shoal.InvalidArgumentError, ValueError, TypeError)):
        w.set_nav(density_interval=0)
    assert w.get_nav() == p


LOBBY = [(-2, -2), (2, -2), (2, 2), (-2, 2)]


def journey_world(n=9):
    """A lobby (area) to wait in, two rooms by round robin 2 to 1."""
    w = shoal.World(threads=2, seed=11)
    lobby = w.add_nav_goal(area=LOBBY)
    north = w.add_nav_goal(area=[(-2, 6), (2, 6), (2, 9), (-2, 9)])
    south = w.add_nav_goal(area=[(-2, -9), (2, -9), (2, -6), (-2, -6)])
    j = w.add_journey([
        {"goal": lobby, "wait": 1.0, "then": ("round_robin", [(1, 2), (2, 1)])},
        {"goal": north},
        {"goal": south, "then": "end"},
    ])
    rng = np.random.default_rng(3)
    start = np.column_stack([rng.uniform(-9, -6, n), rng.uniform(-1.5, 1.5, n)])
    ids = w.add_agents(start, crowd="pedestrian", behaviors={"navigate": 1.0}, nav={"journey": j})
    return w, ids, (lobby, north, south), j


def test_a_journey_waits_in_a_lobby_then_splits_by_round_robin():
    w, ids, (lobby, north, south), j = journey_world()
    assert j == 0 and w.journey_count == 1
    s = w.nav_state(ids)
    assert set(s) == {"goal", "stage", "status", "remaining", "waited", "delay"}
    assert s["goal"].dtype == np.int32 and s["remaining"].dtype == np.float32
    assert (s["stage"] == 0).all() and (s["goal"] == lobby).all() and (s["waited"] == 0).all()
    waited = np.zeros(len(ids), dtype=np.float32)
    for _ in range(120):
        w.step(10, dt=0.05)
        s = w.nav_state(ids)
        waited = np.maximum(waited, np.where(s["stage"] == 0, s["waited"], 0))
        if (s["stage"] > 0).all() and (s["status"] == 1).all():
            break
    assert (s["status"] == 1).all(), s
    assert (waited > 0.5).all(), "everyone waited in the lobby"
    assert (waited <= 1.0 + 1e-4).all(), "and no longer than the stage's wait"
    # two to the north for every one to the south: 6 and 3 of 9, exactly
    assert (s["stage"] == 1).sum() == 6 and (s["stage"] == 2).sum() == 3
    assert (s["goal"] == np.where(s["stage"] == 1, north, south)).all()
    y = w.positions[w.rows(ids)][:, 1]
    assert ((y > 5.5) == (s["stage"] == 1)).all() and ((y < -5.5) == (s["stage"] == 2)).all()
    # arrived inside the room; one pressed by later arrivals may stand up
    # to about a body's width past its edge, still arrived
    assert (s["remaining"] < 0.5).all(), s["remaining"]


def test_a_journey_to_an_exit_empties_the_world():
    w = shoal.World(threads=1, seed=2)
    lobby = w.add_nav_goal(area=LOBBY)
    out = w.add_nav_goal(line=((6, -2), (6, 2)), exit=True)
    j = w.add_journey([{"goal": lobby, "wait": 0.5, "then": ("quickest", [1])}, {"goal": out}])
    ids = w.add_agents([[-6, -1], [-6, 1], [-7, 0]], crowd="pedestrian", behaviors={"navigate": 1.0},
                       nav={"journey": j})
    for _ in range(60):
        w.step(10, dt=0.05)
        if w.agent_count == 0:
            break
    assert w.agent_count == 0
    assert w.nav_stats(out)["exited"] == 3 and w.nav_stats()["exited"] == 3
    with pytest.raises(shoal.StaleHandleError):
        w.nav_state(ids)


@pytest.mark.parametrize("stages, error, match", [
    ([], shoal.InvalidArgumentError, "expected 1 to 16 stages, got 0"),
    ([{"goal": 0}] * 17, shoal.InvalidArgumentError, "expected 1 to 16 stages, got 17"),
    ({"goal": 0}, shoal.InvalidTypeError, "expected a list of stage dicts"),
    ([(0, 1.0)], shoal.InvalidTypeError, r"stages\[0\]: expected a dict"),
    ([{"wait": 1}], shoal.InvalidArgumentError, r"stages\[0\]: 'goal' is required"),
    ([{"goal": 0, "wiat": 1}], shoal.InvalidArgumentError, "unknown key 'wiat'"),
    ([{"goal": 7}], shoal.InvalidArgumentError, r"stages\[0\]\.goal must be a live nav goal"),
    ([{"goal": 0.0}], shoal.InvalidTypeError, r"stages\[0\]\.goal: expected an integer"),
    ([{"goal": 0, "wait": -1}], shoal.InvalidArgumentError, r"stages\[0\]\.wait must be a finite value >= 0"),
    ([{"goal": 0, "wait": "1"}], shoal.InvalidTypeError, r"stages\[0\]\.wait: expected a number"),
    ([{"goal": 0, "then": "ned"}], shoal.InvalidArgumentError, "did you mean 'end'"),
    ([{"goal": 0, "then": ("fixd", 0)}], shoal.InvalidArgumentError, "unknown transition 'fixd'"),
    ([{"goal": 0, "then": ("fixed", 1)}], shoal.InvalidArgumentError, r"then: fixed: 1 is not in \[0, 0\]"),
    ([{"goal": 0, "then": 3}], shoal.InvalidTypeError, r"stages\[0\]\.then: expected \"end\""),
    ([{"goal": 0, "then": ("quickest", [0] * 5)}], shoal.InvalidArgumentError, "expected 1 to 4 candidates, got 5"),
    ([{"goal": 0, "then": ("quickest", 0)}], shoal.InvalidTypeError, "quickest: expected a list"),
    ([{"goal": 0, "then": ("round_robin", [0])}], shoal.InvalidTypeError, r"round_robin\[0\]: expected \(stage, weight\)"),
    ([{"goal": 0, "then": ("round_robin", [(0, 0)])}], shoal.InvalidArgumentError,
     r"round_robin\[0\] weight: 0 is not in \[1, 1000000\]"),
])
def test_bad_journeys_are_refused(stages, error, match):
    w = shoal.World(threads=1)
    w.add_nav_goal(point=(1, 0))
    h = w.state_hash
    with pytest.raises(error, match=match):
        w.add_journey(stages)
    assert w.journey_count == 0 and w.state_hash == h


def test_bad_journey_agents_and_nav_state_reads_are_refused():
    w = shoal.World(threads=1)
    g = w.add_nav_goal(point=(3, 0))
    j = w.add_journey([{"goal": g}])
    walker = w.add_agents([[0, 0]], behaviors={"navigate": 1}, nav={"journey": j})
    plain = w.add_agents([[1, 1]])
    h = w.state_hash
    with pytest.raises(shoal.InvalidArgumentError, match="nav.journey"):
        w.add_agents([[1, 0]], behaviors={"navigate": 1}, nav={"journey": 4})
    with pytest.raises(shoal.InvalidArgumentError, match="nav.journey: 0.5 is not an integer"):
        w.add_agents([[1, 0]], behaviors={"navigate": 1}, nav={"journey": 0.5})
    assert len(w) == 2 and w.state_hash == h
    with pytest.raises(shoal.NotFoundError, match=r"nav_state: handles\[1\]: .*does not navigate"):
        w.nav_state(np.concatenate([walker, plain]))
    s = w.nav_state(walker)
    assert s["stage"][0] == 0 and s["goal"][0] == g
    assert w.nav_state(np.zeros(0, dtype=np.uint64))["goal"].shape == (0,)


def test_start_delays_hold_walkers_and_count_down():
    w = shoal.World(threads=1, seed=2)
    w.add_wall([(0, 0), (20, 0), (20, 10), (0, 10)], closed=True)
    goal = w.add_nav_goal(line=((18, 1), (18, 9)))
    start = np.array([[2.0, 2.0], [2.0, 4.0], [2.0, 6.0]])
    ids = w.add_agents(start, crowd="pedestrian", behaviors={"navigate": 1.0},
                       nav={"goal": goal, "start_delay": np.array([0.0, 1.0, 5.0])})
    st = w.nav_state(ids)
    assert st["delay"].tolist() == [0.0, 1.0, 5.0]
    w.step(40, dt=0.05)  # 2 s
    xy = w.positions[w.rows(ids)]
    assert xy[0, 0] > 3.0 and xy[1, 0] > 2.5  # walking
    assert abs(xy[2, 0] - 2.0) < 0.01  # still standing
    st = w.nav_state(ids)
    assert st["delay"][0] == 0.0 and st["delay"][1] == 0.0
    assert abs(st["delay"][2] - 3.0) < 1e-3
    with pytest.raises(shoal.InvalidArgumentError, match="nav.start_delay"):
        w.add_agents([[3, 3]], crowd="pedestrian", behaviors={"navigate": 1.0},
                     nav={"goal": goal, "start_delay": -1.0})
    assert len(w) == 3


def test_a_slow_zone_slows_walkers_and_bends_the_field():
    def corridor(zone):
        w = shoal.World(threads=1)
        w.add_wall([(0, 0), (30, 0), (30, 3), (0, 3)], closed=True)
        goal = w.add_nav_goal(line=((28, 0.3), (28, 2.7)))
        if zone:
            assert w.add_nav_zone([(10, 0), (20, 0), (20, 3), (10, 3)], 0.5) == 0
            assert w.nav_zone_count == 1
        w.add_agents([[2, 1.5]], crowd="pedestrian", behaviors={"navigate": 1.0}, nav={"goal": goal})
        for step in range(1, 2000):
            w.step(1, dt=0.05)
            if w.nav_stats()["arrived"] == 1:
                return step * 0.05
        raise AssertionError("did not arrive")
    t0, t1 = corridor(False), corridor(True)
    assert abs(t1 - (t0 + 10 / 1.34)) < 0.03 * t1, (t0, t1)


def test_bad_zones_are_refused_with_the_world_unchanged():
    w = shoal.World(threads=1)
    h = w.state_hash
    square = [(1, 1), (2, 1), (2, 2), (1, 2)]
    for factor, text in ((0.0, "speed_factor"), (1.5, "speed_factor"), (float("nan"), "speed_factor")):
        with pytest.raises(shoal.InvalidArgumentError, match=text):
            w.add_nav_zone(square, factor)
    with pytest.raises(shoal.InvalidArgumentError, match="zero area"):
        w.add_nav_zone([(1, 1), (2, 1), (3, 1)], 0.5)
    with pytest.raises(shoal.InvalidArgumentError, match="shape"):
        w.add_nav_zone([(1, 1), (2, 1)], 0.5)
    with pytest.raises(shoal.InvalidTypeError):
        w.add_nav_zone(square, "slow")
    with pytest.raises(shoal.NotFoundError):
        w.remove_nav_zone(0)
    assert w.nav_zone_count == 0 and w.state_hash == h
    z = w.add_nav_zone(square, 0.5)
    assert w.state_hash != h
    w.remove_nav_zone(z)
    assert w.nav_zone_count == 0
    w3 = shoal.World(dimensions=3)
    with pytest.raises(shoal.InvalidArgumentError, match="2D"):
        w3.add_nav_zone(square, 0.5)


def test_a_recording_holds_the_fields_as_arrays(tmp_path):
    # A world with goals records its fields (format version 5): read back as
    # arrays, within the stated error of the world's own; a world without
    # goals records version 4, with no field records.
    w = shoal.World(threads=1, seed=3)
    w.add_wall(CUP)
    goal = w.add_nav_goal(area=np.array(ROOM, dtype=np.float64))
    w.add_agents(np.array([[-3.0, 0.0], [-2.0, 1.0]]), crowd="pedestrian", behaviors={"navigate": 1.0},
                 nav={"goal": goal})
    path = tmp_path / "nav.rec"
    with w.record(path) as rec:
        rec.step(3)
    r = shoal.read_recording(path)
    assert r["version"] == 5 and len(r["nav"]) == 1
    nav = r["nav"][0]
    assert nav["frame"] == 1 and nav["step"] == 1  # a world built here solves in its first step
    field, blocked = w.nav_field(goal), w.nav_blocked()
    grid = w.nav_grid()
    assert nav["fields"].shape == (1, grid["ny"], grid["nx"]) and nav["cell"] == pytest.approx(grid["cell"])
    np.testing.assert_array_equal(nav["goals"], [goal])
    np.testing.assert_array_equal(nav["blocked"], blocked)
    np.testing.assert_array_equal(np.isfinite(nav["fields"][0]), np.isfinite(field))
    finite = np.isfinite(field)
    err = np.abs(nav["fields"][0][finite] - field[finite]).max()
    assert 0 < nav["max_error"][0] < 1e-3 and err <= nav["max_error"][0] * 1.001 + 1e-6

    plain = shoal.World(threads=1)
    plain.add_agents(np.zeros((1, 2)))
    with plain.record(tmp_path / "plain.rec") as rec:
        rec.step(2)
    r = shoal.read_recording(tmp_path / "plain.rec")
    assert r["version"] == 4 and r["nav"] == []
