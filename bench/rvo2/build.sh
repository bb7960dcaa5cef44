#!/bin/sh
# Build the RVO2 driver of `shoal bench crowd` (bench/rvo2/driver.cc) against
# an RVO2 source checkout (https://github.com/snape/RVO2, Apache-2.0), which
# is never copied into this repository.
#
#   bench/rvo2/build.sh RVO2_DIR [OUT_DIR]
#
# OUT_DIR defaults to build/rvo2 in this repository (ignored by git). The
# driver is OUT_DIR/rvo2_crowd, built with g++ -O3 -march=native -fopenmp
# from RVO2's src/*.cc and the driver in one step. CXX overrides g++.
set -eu
if [ $# -lt 1 ] || [ ! -f "$1/src/RVOSimulator.cc" ]; then
    echo "usage: $0 RVO2_DIR [OUT_DIR]  (RVO2_DIR/src/RVOSimulator.cc must exist)" >&2
    exit 2
fi
rvo=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$here/build/rvo2}
mkdir -p "$out"
${CXX:-g++} -std=c++17 -O3 -march=native -fopenmp -DNDEBUG -Wall -Wextra \
    -I"$rvo/src" -I"$here" -I"$here/src" \
    "$here/bench/rvo2/driver.cc" "$rvo"/src/*.cc -o "$out/rvo2_crowd"
if [ -d "$rvo/.git" ]; then
    git -C "$rvo" rev-parse HEAD > "$out/rvo2_commit.txt" 2>/dev/null || true
fi
echo "$out/rvo2_crowd"
