#!/usr/bin/env bash
# Repeated interleaved rounds on a shared, noisy machine: each round runs the
# issue-3 scenes at 100,000 agents (2D and 3D, 1 and 2 threads) and the pair
# kernel, once per build, one after the other, and prints one JSON line per
# run. Run it for a while and summarize with benchmark/summary.py: the best run
# of each scene is what the machine can do, the median what it did most of
# the time, and per-round ratios compare builds under the same load.
#   benchmark/sweep.sh SECONDS OLD_SHOAL [NEW_SHOAL] > runs.jsonl
set -euo pipefail
seconds=$1
shift
builds=("$@")
end=$(($(date +%s) + seconds))
round=0
while [ "$(date +%s)" -lt "$end" ]; do
  round=$((round + 1))
  for scene in "2 1" "2 2" "3 1" "3 2"; do
    read -r dim threads <<<"$scene"
    for i in "${!builds[@]}"; do
      "${builds[$i]}" bench flock --dim "$dim" --agents 100000 --neighbors 20 --threads "$threads" \
        --steps 100 --json | python3 -c "
import json, sys, time
d = json.load(sys.stdin)
print(json.dumps({'time': time.time(), 'round': $round, 'build': $i, 'dim': d['dim'],
                  'agents': d['agents'], 'threads': d['threads'], 'rate': d['agent_steps_per_s'],
                  'pairs': d['pair_tests_per_s'], 'hash': d['state_hash'],
                  'bytes_per_agent': d['bytes_per_agent'],
                  'systems': {s['name']: s['ms_per_step'] for s in d['systems'] if s['ms_per_step'] > 0.005}}))"
    done
  done
  for dim in 2 3; do
    for i in "${!builds[@]}"; do
      "${builds[$i]}" bench kernel --dim "$dim" --steps 1000 --json | python3 -c "
import json, sys, time
d = json.load(sys.stdin)
print(json.dumps({'time': time.time(), 'round': $round, 'build': $i, 'kernel': $dim,
                  'pairs': d['pair_tests_per_s']}))"
    done
  done
done
