#!/usr/bin/env bash
# shoal against RVO2 on one scene of `shoal bench crowd`, interleaved: each
# round runs shoal, then the RVO2 driver (benchmark/rvo2/build.sh), so both see
# the same machine load. Both get the same thread count (shoal --threads T,
# RVO2 OMP_NUM_THREADS=T and --threads T). Usage:
#   benchmark/rvo2/compare.sh [--scenario S] [--dim 2|3] [--agents N] [--steps S] [--warmup W]
#                         [--threads T] [--quality-every K] [--rounds R] [--raw FILE]
# Defaults: grid, 2D, 100000 agents, 100 steps after 10 warm-up, 2 threads,
# quality at the end only (0), 3 rounds. --dim 3 runs the 3D scene against
# RVO2-3D (build/rvo2/rvo2_crowd3d). SHOAL, RVO2_DRIVER and RVO2_3D_DRIVER
# override the binaries (build/release/shoal, build/rvo2/rvo2_crowd,
# build/rvo2/rvo2_crowd3d). Prints one line per run and the ratio
# shoal / RVO2 of agent_steps_per_s: best over best, and the median of the
# per-round ratios. --raw appends every run's JSON to FILE.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
shoal=${SHOAL:-$here/build/release/shoal}
scenario=grid dim=2 agents=100000 steps=100 warmup=10 threads=2 every=0 rounds=3 raw=
while [ $# -gt 0 ]; do
  case $1 in
    --scenario) scenario=$2 ;;
    --dim) dim=$2 ;;
    --agents) agents=$2 ;;
    --steps) steps=$2 ;;
    --warmup) warmup=$2 ;;
    --threads) threads=$2 ;;
    --quality-every) every=$2 ;;
    --rounds) rounds=$2 ;;
    --raw) raw=$2 ;;
    *) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
case $dim in
  2) rvo2=${RVO2_DRIVER:-$here/build/rvo2/rvo2_crowd} ;;
  3) rvo2=${RVO2_3D_DRIVER:-$here/build/rvo2/rvo2_crowd3d} ;;
  *) echo "compare.sh: --dim is 2 or 3" >&2; exit 2 ;;
esac
for bin in "$shoal" "$rvo2"; do
  [ -x "$bin" ] || { echo "compare.sh: $bin is missing (build it first)" >&2; exit 1; }
done
args=(--scenario "$scenario" --dim "$dim" --agents "$agents" --steps "$steps" --warmup "$warmup"
      --threads "$threads" --quality-every "$every" --json)
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
for round in $(seq "$rounds"); do
  OMP_NUM_THREADS=$threads "$shoal" bench crowd "${args[@]}" | sed "s/^{/{\"round\":$round,/" >> "$runs"
  OMP_NUM_THREADS=$threads "$rvo2" "${args[@]}" | sed "s/^{/{\"round\":$round,/" >> "$runs"
done
[ -n "$raw" ] && cat "$runs" >> "$raw"
python3 - "$runs" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
def fmt(x):
    return "null" if x is None else "%.4f" % x
for r in runs:
    print("round %d %-5s %s %dD %d agents, %d threads: %.3f M agent-steps/s, min pair %s, overlaps %d, "
          "mean dist to goal %.3f, arrived %.4f%s" % (
        r["round"], r["sim"], r["scenario"], r["dim"], r["agents"], r["threads"],
        r["agent_steps_per_s"] / 1e6, fmt(r["min_pair_distance"]), r["overlaps"],
        r["mean_dist_to_goal"], r["arrived"], "  hash " + r["state_hash"] if "state_hash" in r else ""))
peer = next(r["sim"] for r in runs if r["sim"] != "shoal")  # rvo2 or rvo2-3d
best = {s: max(r["agent_steps_per_s"] for r in runs if r["sim"] == s) for s in ("shoal", peer)}
ratios = []
for k in sorted({r["round"] for r in runs}):
    rate = {r["sim"]: r["agent_steps_per_s"] for r in runs if r["round"] == k}
    ratios.append(rate["shoal"] / rate[peer])
print("shoal / %s: best over best %.2fx (%.3f M / %.3f M), median per round %.2fx" % (
    peer, best["shoal"] / best[peer], best["shoal"] / 1e6, best[peer] / 1e6, statistics.median(ratios)))
PY
