#!/usr/bin/env bash
# Prepares .devcarry/ for the 16-core machine: ../shared/device/prepare.sh,
# plus what this tree needs beyond it: zstd's packages (recordings link it),
# a build for that machine's processor without the Python package (its
# python3 has numpy and Cython, and its module is not what is measured
# there), and no build folder made on this machine (its cache names this
# machine's paths).
set -eu
top=$(git rev-parse --show-toplevel)
cd "$top"
bash ../shared/device/prepare.sh
for p in libzstd-dev libzstd1; do
  ls .devcarry/debs/${p}_*.deb >/dev/null 2>&1 || (cd .devcarry/debs && apt-get download $p)
done
chmod u+w .devcarry/build-and-run.sh
# -DSHOAL_NATIVE=ON: the measured build is for that machine's processor (a
# plain configure builds for the x86-64 baseline); -DSHOAL_VIEWER_LIBS=OFF:
# no npm there, which reaches no registry.
grep -q SHOAL_WITH_PYTHON .devcarry/build-and-run.sh ||
  sed -i 's/-DSHOAL_WITH_PLOT=OFF \\/-DSHOAL_WITH_PLOT=OFF -DSHOAL_WITH_PYTHON=OFF -DSHOAL_NATIVE=ON -DSHOAL_VIEWER_LIBS=OFF \\/' \
    .devcarry/build-and-run.sh
grep -q 'SHOAL_WITH_PYTHON=OFF -DSHOAL_NATIVE=ON' .devcarry/build-and-run.sh
rm -rf .devcarry/build
echo "then: the device tool's run with carry [\".devcarry\"] and: bash .devcarry/build-and-run.sh 'bash benchmark/device/call.sh'"
