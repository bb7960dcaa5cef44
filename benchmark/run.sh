#!/usr/bin/env bash
# Sweep `shoal bench flock` over the scenes of benchmark/README.md and print one
# CSV line per run (best of --repeat runs by agent_steps_per_s).
# Usage: benchmark/run.sh [--quick] [--repeat N] > benchmark/results/<machine>/flock.csv
set -euo pipefail
cd "$(dirname "$0")/.."
shoal=./build/release/shoal
repeat=3
steps=100
scenes="2:100000:20 3:100000:20 2:1000000:20"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) repeat=1; steps=20; scenes="2:20000:20 3:20000:20" ;;
    --repeat) repeat="$2"; shift ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
echo "dim,agents,neighbors,threads,reorder,steps,agent_steps_per_s,pair_tests_per_s,mean_neighbors,bytes_per_agent,state_hash"
for scene in $scenes; do
  IFS=: read -r dim agents k <<<"$scene"
  for threads in 1 2; do
    for reorder in 0 1 8 32; do
      best=""
      for _ in $(seq "$repeat"); do
        line=$($shoal bench flock --dim "$dim" --agents "$agents" --neighbors "$k" --threads "$threads" \
               --reorder "$reorder" --steps "$steps" --json)
        best=$(python3 - "$line" "$best" <<'PY'
import json, sys
new = json.loads(sys.argv[1])
old = json.loads(sys.argv[2]) if sys.argv[2] else None
print(json.dumps(new if old is None or new["agent_steps_per_s"] > old["agent_steps_per_s"] else old))
PY
)
      done
      python3 - "$best" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
print(",".join(str(x) for x in [d["dim"], d["agents"], d["neighbors_target"], d["threads"],
      d["reorder_interval"], d["steps"], round(d["agent_steps_per_s"]), round(d["pair_tests_per_s"]),
      round(d["mean_neighbors"], 2), round(d["bytes_per_agent"], 1), d["state_hash"]]))
PY
    done
  done
done
