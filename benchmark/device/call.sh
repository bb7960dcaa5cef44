#!/usr/bin/env bash
# Everything the 16-core device machine is wanted for, in one call (after
# benchmark/device/prepare.sh here; `shoal` on PATH, as build-and-run.sh puts it):
#   the processor; every golden hash at its SIMD width (to pin the 16-lane
#   entries of tests/golden_hashes.inc); benchmark/many_cores.sh (the many-core
#   targets, with `bench loops`), its JSON lines packed into $OUT/many-cores.tgz.
# About 4 minutes of runs after the build on the 16-core Xeon (estimated).
#   benchmark/device/call.sh [--quick]
q=${1:-}
lscpu | grep -E '^Model name|^CPU\(s\)|^Thread|^Core|^Socket|^NUMA node\(|^L3' | cut -c1-100
grep -qw avx512f /proc/cpuinfo && echo "AVX-512: yes" || echo "AVX-512: no"
echo "== golden hashes"
timeout 180 bash benchmark/device/golden.sh
echo "== many_cores.sh $q"
rm -rf /tmp/many-cores
timeout 420 bash benchmark/many_cores.sh $q /tmp/many-cores
echo "many_cores.sh exit $?"
tar -czf "${OUT:-/tmp}/many-cores.tgz" -C /tmp many-cores
