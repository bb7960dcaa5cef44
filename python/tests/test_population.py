"""shoal.population and World.from_scenario_string: spawn areas, placement
rules and per-agent distributions as scenario files have them, fed to
add_agents."""
import json

import numpy as np
import pytest

import shoal

L_SHAPE = [[0, 0], [10, 0], [10, 5], [5, 5], [5, 10], [0, 10]]
WEIDMANN = {"normal": {"mean": 1.34, "sd": 0.26}, "min": 0.46, "max": 1.61}


def inside_l(p):
    x, y = p[:, 0], p[:, 1]
    eps = 1e-4
    return (x >= -eps) & (y >= -eps) & (x <= 10 + eps) & (y <= 10 + eps) & ~((x > 5 + eps) & (y > 5 + eps))


def closest_pair(p):
    d = np.linalg.norm(p[:, None, :].astype(np.float64) - p[None, :, :], axis=-1)
    np.fill_diagonal(d, np.inf)
    return d.min()


def test_polygon_random_inside_and_reproducible():
    a = shoal.population(2000, {"shape": "polygon", "points": L_SHAPE}, seed=3)
    b = shoal.population(2000, {"shape": "polygon", "points": np.array(L_SHAPE, dtype=np.float32)}, seed=3)
    c = shoal.population(2000, {"shape": "polygon", "points": L_SHAPE}, seed=4)
    assert a["positions"].shape == (2000, 2) and a["positions"].dtype == np.float32
    assert inside_l(a["positions"]).all()
    np.testing.assert_array_equal(a["positions"], b["positions"])
    assert not np.array_equal(a["positions"], c["positions"])
    upper = (a["positions"][:, 1] > 5).mean()  # the arm above y = 5 holds a third of the area
    assert abs(upper - 1 / 3) < 0.04


@pytest.mark.parametrize("placement", ["random", "lattice", "square_lattice"])
def test_min_spacing_holds_for_every_pair_and_from_walls(placement):
    wall = np.array([[5.0, -1.0], [5.0, 11.0]])
    pop = shoal.population(90, {"shape": "polygon", "points": L_SHAPE, "placement": placement,
                                "min_spacing": 0.7}, vehicle={"radius": 0.3}, walls=[wall], seed=2)
    p = pop["positions"]
    assert inside_l(p).all()
    assert closest_pair(p) >= 0.7 - 1e-5
    assert (np.abs(p[:, 0] - 5.0) >= 0.3 - 1e-5).all()
    assert (pop["vehicle"]["radius"] == np.float32(0.3)).all()


def test_hexagonal_lattice_count_in_a_box():
    box = {"shape": "box", "size": [10, 10], "placement": "lattice", "min_spacing": 1}
    assert shoal.population(115, box)["positions"].shape == (115, 2)
    with pytest.raises(shoal.CapacityError, match=r"population: 116 agents do not fit its spawn area \(100 m\^2\) "
                                                   r"on a hexagonal lattice at min_spacing 1 m: it has 115 free"):
        shoal.population(116, box)


def test_distributions_moments_bounds_and_clamp():
    pop = shoal.population(2000, {"radius": 30}, {"crowd.preferred_speed": WEIDMANN,
                                                  "vehicle.radius": {"uniform": [0.18, 0.22]},
                                                  "crowd.time_gap": {"table": [[0.4, 1], [0.8, 3]]}},
                           crowd="pedestrian", seed=5)
    v = pop["crowd"]["preferred_speed"]
    assert v.shape == (2000,) and v.min() >= np.float32(0.46) and v.max() <= np.float32(1.61)
    assert abs(v.mean() - 1.2692) < 0.02  # the truncated normal's mean
    r = pop["vehicle"]["radius"]
    assert r.min() >= np.float32(0.18) and r.max() <= np.float32(0.22) and abs(r.mean() - 0.2) < 0.002
    assert abs((pop["crowd"]["time_gap"] == np.float32(0.8)).mean() - 0.75) < 0.04
    assert pop["crowd"]["preset"] == "pedestrian"

    both = shoal.population(500, None, {"crowd.preferred_speed": {"uniform": [1.0, 1.6]},
                                        "vehicle.max_speed": {"table": [[1.2, 1], [1.4, 1]]}}, crowd=True)
    assert (both["crowd"]["preferred_speed"] <= both["vehicle"]["max_speed"]).all()


def test_population_feeds_add_agents():
    pop = shoal.population(200, {"shape": "box", "size": [20, 10], "min_spacing": 0.6, "heading": 0},
                           {"crowd.preferred_speed": WEIDMANN, "vehicle.radius": {"uniform": [0.18, 0.22]}},
                           crowd="pedestrian", seed=9)
    w = shoal.World(threads=1)
    ids = w.add_agents(**pop, behaviors={"seek": 1}, targets=np.tile([40.0, 0.0], (200, 1)))
    rows = w.rows(ids)
    np.testing.assert_array_equal(w.positions[rows], pop["positions"])
    np.testing.assert_array_equal(w.column("radius")[rows], pop["vehicle"]["radius"])
    assert (pop["headings"] == 0).all()
    w.step(20)
    assert w.crowd_stats()["agents"] == 200


def test_same_values_as_the_scenario_file():
    spawn = {"shape": "polygon", "points": L_SHAPE, "min_spacing": 0.5}
    dists = {"vehicle.radius": {"uniform": [0.18, 0.22]}}
    pop = shoal.population(100, spawn, dists, crowd="pedestrian", seed=12)
    text = json.dumps({"seed": 12, "groups": [{"count": 100, "spawn": spawn, "distributions": dists,
                                               "crowd": {"preset": "pedestrian"}}]})
    w = shoal.World.from_scenario_string(text, threads=1)
    np.testing.assert_array_equal(w.positions, pop["positions"])
    np.testing.assert_array_equal(w.column("radius"), pop["vehicle"]["radius"])
    assert w.scenario_name == "scenario" and w.group_names == ("group0",)


def test_errors_name_the_key_and_add_nothing():
    with pytest.raises(shoal.ParseError, match=r"population: spawn.points: expected an array of 3 to 64 points"):
        shoal.population(10, {"shape": "polygon", "points": [[0, 0], [1, 0]]})
    with pytest.raises(shoal.ParseError, match=r"spawn.points: edges 0-1 and 2-3 meet"):
        shoal.population(10, {"shape": "polygon", "points": [[0, 0], [2, 2], [2, 0], [0, 1]]})
    with pytest.raises(shoal.ParseError, match=r"distributions.crowd.time_gap: the group has no \"crowd\""):
        shoal.population(10, None, {"crowd.time_gap": {"uniform": [0.5, 1]}})
    with pytest.raises(shoal.ParseError, match=r"unknown key 'distributions.vehicle.radiu'"):
        shoal.population(10, None, {"vehicle.radiu": {"uniform": [0.5, 1]}})
    with pytest.raises(shoal.CapacityError, match=r"population: 1000 agents cannot fit its spawn area"):
        shoal.population(1000, {"shape": "disc", "radius": 5, "min_spacing": 0.5})
    with pytest.raises(shoal.ParseError, match=r"<mine>: groups\[0\].spawn.placement: expected one of"):
        shoal.World.from_scenario_string('{"groups": [{"count": 1, "spawn": {"placement": "grid"}}]}',
                                         source="<mine>")
