#!/usr/bin/env bash
# Builds benchmark/device/golden_probe.c against the library that
# .devcarry/build-and-run.sh built (or $SHOAL_BUILD) and runs it: every golden
# hash at this machine's SIMD width. Run from the project root.
set -eu
b=${SHOAL_BUILD:-.devcarry/build}
deps=/tmp/shoal-deps # where build-and-run.sh unpacked the carried packages
${CC:-gcc} -O2 -std=c11 -march=native -fopenmp -D_POSIX_C_SOURCE=200809L -DSHOAL_SOURCE_DIR="\"$PWD\"" \
  -Ibenchmark/device/shim -Iinclude -Isrc -Itests -I"$b" -I$deps/usr/include \
  benchmark/device/golden_probe.c "$b/libshoal.a" -L$deps/usr/lib/x86_64-linux-gnu -lhwloc -lcjson -lzstd -lm \
  -o /tmp/shoal_golden_probe
/tmp/shoal_golden_probe
