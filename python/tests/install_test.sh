#!/usr/bin/env bash
# The offline install a user runs (docs/python.md), in a temporary copy of
# the sources the package needs: a virtual environment that sees Debian's
# numpy, `pip install --no-build-isolation ./python` with no package index,
# then the package used from an unrelated directory. The library is
# compiled at -O0 here (SHOAL_CMAKE_ARGS): this checks the install, not speed.
set -euo pipefail
py=${1:?python interpreter, Debian /usr/bin/python3}
root=${2:?project source directory}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
cp -r "$root/CMakeLists.txt" "$root/LICENSE" "$root/cmake" "$root/include" "$root/src" "$root/python" \
  "$root/scenarios" "$root/cli" "$work/src/"
rm -rf "$work/src/python/build" "$work/src/python/"*.egg-info
"$py" -m venv --system-site-packages "$work/venv"
SHOAL_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Debug" \
  "$work/venv/bin/pip" install --no-build-isolation --no-index --quiet "$work/src/python"
# the license is in the metadata and beside the module
"$work/venv/bin/pip" show shoal | grep -x "License: MIT" > /dev/null || { echo "pip show shoal: no 'License: MIT'"; exit 1; }
mkdir "$work/elsewhere"
cd "$work/elsewhere"
"$work/venv/bin/python" - <<'PY'
import numpy as np
import shoal
assert "/venv/" in shoal.__file__, shoal.__file__
import os
with open(os.path.join(os.path.dirname(shoal.__file__), "LICENSE")) as f:
    assert f.readline().strip() == "MIT License"
# the type stub and the PEP 561 marker are installed beside the module
for name in ("_shoal.pyi", "py.typed"):
    assert os.path.isfile(os.path.join(os.path.dirname(shoal.__file__), name)), name
w = shoal.World(threads=2, seed=3)
ids = w.add_agents(np.random.default_rng(3).uniform(0, 20, (300, 2)),
                   behaviors={"separate": 1, "align": 1, "cohere": 1})
w.step(30)
p = w.positions
assert p.shape == (300, 2) and p.ctypes.data == w.column("position.x").ctypes.data
# the shipped scenarios came along, and load by name from anywhere
assert "tiny.json" in shoal.scenarios(), shoal.scenarios()
t = shoal.World.from_scenario("tiny.json", threads=1)
with t.record("t.rec") as r:
    r.step(10)
# the command's writers came along too
assert shoal.export("t.rec", csv="t.csv", sqlite="t.sqlite")["t.csv"]["rows"] == 11 * 200
assert "data-version" in open(shoal.view("t.rec")).read()
print("installed shoal", shoal.__version__, "from", shoal.__file__, "state_hash", format(w.state_hash, "016x"))
PY
