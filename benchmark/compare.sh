#!/usr/bin/env bash
# Interleaved comparison of two `shoal` builds on the issue-3 scenes: for each
# scene, each build runs in turn, REPEAT times, so both see the same machine
# load. Take the best run of each. Usage:
#   benchmark/compare.sh OLD_SHOAL NEW_SHOAL [REPEAT]
set -euo pipefail
old=$1 new=$2 repeat=${3:-2}
run() { # bin dim agents threads steps
  "$1" bench flock --dim "$2" --agents "$3" --neighbors 20 --threads "$4" --steps "$5" --json
}
for scene in "2 100000 1" "2 100000 2" "3 100000 1" "3 100000 2" "2 1000000 2" "2 1000000 1"; do
  read -r dim agents threads <<<"$scene"
  steps=100; [ "$agents" -ge 1000000 ] && steps=30
  for _ in $(seq "$repeat"); do
    for which in old new; do
      bin=$old; [ $which = new ] && bin=$new
      run "$bin" "$dim" "$agents" "$threads" "$steps" | python3 -c "
import json, sys; d = json.load(sys.stdin)
print('$which dim=%d agents=%d threads=%d rate=%.2fM pairs=%.3fG neighbors=%.2f bytes/agent=%.1f hash=%s' % (
    d['dim'], d['agents'], d['threads'], d['agent_steps_per_s'] / 1e6, d['pair_tests_per_s'] / 1e9,
    d['mean_neighbors'], d['bytes_per_agent'], d['state_hash']))"
    done
  done
done
for dim in 2 3; do
  for _ in $(seq "$repeat"); do
    for which in old new; do
      bin=$old; [ $which = new ] && bin=$new
      "$bin" bench kernel --dim "$dim" --steps 1000 --json | python3 -c "
import json, sys; d = json.load(sys.stdin)
print('$which kernel dim=$dim pairs=%.3fG' % (d['pair_tests_per_s'] / 1e9))"
    done
  done
done
