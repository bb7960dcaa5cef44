#!/usr/bin/env bash
# Runs each example of python/examples/, shortened, with the built package
# (PYTHONPATH from ctest), and checks what it prints and writes.
set -euo pipefail
py=${1:?python interpreter}
src=${2:?python/ directory}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$out"

# docs/hello.md: every walker out of the room (exit 0), the last line the hash
"$py" "$src/examples/hello.py" | tee hello.txt
grep -q " 0 in the room$" hello.txt
grep -q "^state_hash [0-9a-f]\{16\}$" hello.txt

"$py" "$src/examples/flock_plot.py" --agents 500 --steps 60 --out flock.png | tee flock.txt
grep -q "500 agents, 60 steps" flock.txt
[ "$(head -c 8 flock.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || { echo "flock.png is not a PNG"; exit 1; }

"$py" "$src/examples/crowd_density.py" --seconds 2 --densities 0.5,3 | tee fd.txt
# two densities, each with a finite mean speed, and the denser one slower
"$py" - fd.txt <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and l.split()[0][0].isdigit()]
assert len(rows) == 2, rows
(d0, v0, _), (d1, v1, _) = [[float(x) for x in r] for r in rows]
assert d0 < d1 and 0 < v1 < v0 <= 1.5, rows
PY

"$py" "$src/examples/custom_rule.py" --agents 800 --steps 600 | tee rule.txt
grep -q "^state_hash [0-9a-f]\{16\}$" rule.txt
# the rule ran: someone got tired at some point
"$py" - rule.txt <<'PY'
import sys
tired = [int(l.split()[4]) for l in open(sys.argv[1]) if l.startswith("t =")]
assert tired and max(tired) > 0, tired
PY
"$py" "$src/examples/evacuation.py" --agents 60 | tee evac.txt
# everyone out, each by the door chosen for them
"$py" - evac.txt <<'PY'
import re, sys
text = open(sys.argv[1]).read()
west, east = map(int, re.search(r"60 pedestrians: (\d+) to the west door, (\d+) to the east door", text).groups())
assert west > 0 and east > 0 and west + east == 60, text
assert re.search(r"all 60 out in [0-9.]+ s", text), text
last = [l for l in text.splitlines() if l.startswith("t =")][-1]
assert last.endswith(f": {west} out west, {east} out east"), last
PY
echo "examples: ok"
