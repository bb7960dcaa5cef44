#!/bin/sh
# Build the RVO2 drivers of `shoal bench crowd` (benchmark/rvo2/driver.cc)
# against source checkouts of RVO2 (https://github.com/snape/RVO2) and,
# optionally, RVO2-3D (https://github.com/snape/RVO2-3D), both Apache-2.0
# and never copied into this repository.
#
#   benchmark/rvo2/build.sh RVO2_DIR [RVO2_3D_DIR [OUT_DIR]]
#   benchmark/rvo2/build.sh RVO2_DIR [OUT_DIR]          (2D only, as before)
#
# RVO2_DIR may be - to build the 3D driver only. A second argument that
# holds src/Vector3.h is RVO2_3D_DIR; otherwise it is OUT_DIR. OUT_DIR
# defaults to build/rvo2 in this repository (ignored by git).
#
# The 2D driver is OUT_DIR/rvo2_crowd, the 3D one OUT_DIR/rvo2_crowd3d
# (driver.cc with -DCROWD_RVO3D; the two libraries share header and
# namespace names, so they cannot share a binary). Each is built with
# g++ -O3 -march=native -fopenmp from the library's src/*.cc and the driver
# in one step; CXX overrides g++. RVO2-3D's CMake build generates its
# Export.h; here OUT_DIR/rvo2_3d_include/Export.h defines RVO3D_EXPORT as
# nothing (a static build). The checkouts' commits go to
# OUT_DIR/rvo2_commit.txt and OUT_DIR/rvo2_3d_commit.txt.
set -eu
usage() {
    echo "usage: $0 RVO2_DIR|- [RVO2_3D_DIR [OUT_DIR]]  (RVO2_DIR/src/RVOSimulator.cc," \
         "RVO2_3D_DIR/src/Vector3.h must exist)" >&2
    exit 2
}
[ $# -ge 1 ] || usage
rvo2d=$1
rvo3d=
if [ $# -ge 2 ] && [ -f "$2/src/Vector3.h" ]; then
    rvo3d=$(cd "$2" && pwd)
    outarg=${3:-}
else
    outarg=${2:-}
fi
if [ "$rvo2d" = - ]; then
    [ -n "$rvo3d" ] || usage
    rvo2d=
else
    [ -f "$rvo2d/src/RVOSimulator.cc" ] || usage
    rvo2d=$(cd "$rvo2d" && pwd)
fi
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${outarg:-$here/build/rvo2}
mkdir -p "$out"
flags="-std=c++17 -O3 -march=${RVO2_MARCH:-native} -fopenmp -DNDEBUG -Wall -Wextra"

if [ -n "$rvo2d" ]; then
    ${CXX:-g++} $flags -I"$rvo2d/src" -I"$here" -I"$here/src" \
        "$here/benchmark/rvo2/driver.cc" "$rvo2d"/src/*.cc -o "$out/rvo2_crowd"
    if [ -d "$rvo2d/.git" ]; then
        git -C "$rvo2d" rev-parse HEAD > "$out/rvo2_commit.txt" 2>/dev/null || true
    fi
    echo "$out/rvo2_crowd"
fi

if [ -n "$rvo3d" ]; then
    inc="$out/rvo2_3d_include"
    mkdir -p "$inc"
    printf '%s\n' '/* written by shoal benchmark/rvo2/build.sh: a static build of RVO2-3D */' \
        '#ifndef RVO3D_EXPORT_H_' '#define RVO3D_EXPORT_H_' '#define RVO3D_EXPORT' \
        '#endif' > "$inc/Export.h"
    ${CXX:-g++} $flags -DCROWD_RVO3D -I"$rvo3d/src" -I"$inc" -I"$here" -I"$here/src" \
        "$here/benchmark/rvo2/driver.cc" "$rvo3d"/src/*.cc -o "$out/rvo2_crowd3d"
    if [ -d "$rvo3d/.git" ]; then
        git -C "$rvo3d" rev-parse HEAD > "$out/rvo2_3d_commit.txt" 2>/dev/null || true
    fi
    echo "$out/rvo2_crowd3d"
fi
