"""The walkable area `shoal export --sqlite` writes, read as PedPy reads a
JuPedSim database (its geometry table's WKT, made one shape with shapely):
one valid polygon, the walls and static obstacles cut out, and every
trajectory point inside it, as PedPy's analyses require."""
import os
import sqlite3
import subprocess

import pytest

try:
    from shapely import wkt as shapely_wkt
    from shapely.geometry import LineString, Point, Polygon
    from shapely.ops import unary_union
except ImportError:  # not a skip: the README's setup installs python3-shapely
    shapely_wkt = None

SCENARIOS = os.environ.get("SHOAL_SCENARIOS", os.path.join(os.path.dirname(__file__), "..", "..", "scenarios"))


@pytest.mark.skipif("SHOAL_CLI" not in os.environ, reason="needs the shoal command (SHOAL_CLI, set by ctest)")
def test_the_walkable_area_leaves_out_walls_and_obstacles_and_holds_every_agent(tmp_path):
    if shapely_wkt is None:
        pytest.fail("needs python3-shapely (the README's first command installs it)")
    db = tmp_path / "plaza.sqlite"
    subprocess.run([os.environ["SHOAL_CLI"], "run", os.path.join(SCENARIOS, "default.json"), "--steps", "200",
                    "--record-every", "10", "--threads", "1", "--quiet", "--export", str(db)],
                   check=True, capture_output=True)
    con = sqlite3.connect(db)
    meta = dict(con.execute("SELECT key, value FROM metadata"))
    if meta["shoal_walls_in_walkable_area"] != "1":
        pytest.fail("the command was built without GEOS (SHOAL_WITH_GEOS): the walls are not in the area")
    # PedPy: every geometry's WKT, as one shape
    shapes = [shapely_wkt.loads(row[0]) for row in con.execute("SELECT wkt FROM geometry")]
    area = unary_union(shapes)
    assert isinstance(area, Polygon) and area.is_valid, area.geom_type
    box = area.envelope
    assert area.area < box.area
    # the walls are cut out: no wall segment's points are walkable
    walls = con.execute("SELECT x0, y0, x1, y1 FROM shoal_walls").fetchall()
    assert len(walls) > 0
    for x0, y0, x1, y1 in walls:
        segment = LineString([(x0, y0), (x1, y1)])
        assert not area.intersects(segment.interpolate(0.5, normalized=True)), (x0, y0, x1, y1)
        assert area.distance(segment) >= 0.049, "walls are left out 5 cm each side"
    # and so are the static obstacles' discs
    for x, y, r, vx, vy, cut in con.execute("SELECT x, y, radius, vx, vy, in_walkable_area FROM shoal_obstacles"):
        if vx == 0 and vy == 0 and r > 0:
            assert cut == 1
            assert not area.contains(Point(x, y))
    # every trajectory point is in the walkable area
    points = con.execute("SELECT pos_x, pos_y FROM trajectory_data").fetchall()
    assert len(points) > 1000
    outside = [p for p in points if not area.covers(Point(p))]
    assert not outside, f"{len(outside)} of {len(points)} points outside, e.g. {outside[:3]}"
    assert float(meta["xmin"]) <= box.bounds[0] + 1e-6 and float(meta["xmax"]) >= box.bounds[2] - 1e-6
