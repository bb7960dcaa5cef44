#!/usr/bin/env bash
# One sweep of the crowd comparison (benchmark/README.md, "Crowd"; docs/dev/crowd-performance.md):
#   1. shoal against RVO2, interleaved (compare.sh, 3 rounds each): 2D grid
#      and circle, then the 3D sphere (circle) and 3D grid against RVO2-3D,
#      at 100k agents on 1 and 2 threads;
#   2. shoal alone, 2D grid at 100k and at 1M agents, interleaved per round
#      (100k then 1M): 3 rounds on 2 threads (SCALE_ROUNDS), 1 on 1 thread.
# Every run is 100 timed steps after 10 warm-up, quality at the end only.
#   benchmark/rvo2/sweep.sh RAW_FILE [LOG_FILE]
# RAW_FILE gets every run's JSON, one a line, with "group" (pairs / scale)
# and "round" fields added; LOG_FILE (default RAW_FILE.log) gets compare.sh's
# summaries and the load average before each group. SKIP_3D_GRID=1 leaves
# the 3D grid out; AGENTS, BIG, STEPS and WARMUP override 100000, 1000000,
# 100 and 10 (for a quick try).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
shoal=${SHOAL:-$here/build/release/shoal}
raw=${1:?usage: sweep.sh RAW_FILE [LOG_FILE]}
log=${2:-$raw.log}
steps=${STEPS:-100} warmup=${WARMUP:-10} agents=${AGENTS:-100000} big=${BIG:-1000000}
: > "$log"
note() { echo "== $* (load: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S))" | tee -a "$log"; }

pair() {  # dim scenario threads
  note "pairs: $2 ${1}D, $3 threads"
  local tmp
  tmp=$(mktemp)
  bash "$here/benchmark/rvo2/compare.sh" --dim "$1" --scenario "$2" --agents "$agents" --steps "$steps" \
    --warmup "$warmup" --threads "$3" --quality-every 0 --rounds 3 --raw "$tmp" | tee -a "$log"
  sed 's/^{/{"group":"pairs",/' "$tmp" >> "$raw"
  rm -f "$tmp"
}

for t in 1 2; do pair 2 grid $t; done
for t in 1 2; do pair 2 circle $t; done
for t in 1 2; do pair 3 circle $t; done
if [ "${SKIP_3D_GRID:-0}" != 1 ]; then
  for t in 1 2; do pair 3 grid $t; done
fi

scale() {  # threads round
  for n in "$agents" "$big"; do
    note "scale: grid 2D, $n agents, $1 threads, round $2"
    OMP_NUM_THREADS=$1 "$shoal" bench crowd --scenario grid --agents "$n" --steps "$steps" --warmup "$warmup" \
      --threads "$1" --quality-every 0 --json | sed "s/^{/{\"group\":\"scale\",\"round\":$2,/" | tee -a "$raw" \
      | python3 -c 'import json,sys; r=json.load(sys.stdin); print("  %.3f M agent-steps/s, hash %s" % (r["agent_steps_per_s"] / 1e6, r["state_hash"]))' \
      | tee -a "$log"
  done
}
for r in $(seq "${SCALE_ROUNDS:-3}"); do scale 2 "$r"; done
scale 1 1
note "done"
