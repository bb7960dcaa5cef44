#!/usr/bin/env bash
# Two shoal binaries timed in turn, each round from fresh copies of both
# files. The same bytes run at different speeds from one load of the file to
# another (the pages the kernel gives its code and how they are mapped): on a
# 2-core Zen 5 VM one binary took 79 ns an agent in the crowd's orca pass at
# 1M agents while a copy of it took 69, and a third instance went from 60 to
# 79 when the page cache was dropped. A copy made afresh every round puts
# each binary in new pages each time, so that such luck spreads over both
# instead of favoring one of them. Usage:
#   benchmark/fresh_copies.sh ROUNDS OLD_SHOAL NEW_SHOAL -- BENCH_ARGS...
# e.g. benchmark/fresh_copies.sh 6 /tmp/old build/release/shoal -- bench crowd \
#        --scenario circle --agents 100000 --threads 1 --quality-every 0
# BENCH_ARGS must make the binary print one JSON object with
# agent_steps_per_s (`--json` is added). The order alternates by round.
# Prints each run, each binary's median rate, and the median over rounds of
# new / old; the state hashes must agree unless results were meant to change.
set -euo pipefail
if [ $# -lt 4 ] || [ "$4" != "--" ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
rounds=$1 old=$2 new=$3
shift 4
for bin in "$old" "$new"; do
  [ -x "$bin" ] || { echo "fresh_copies.sh: $bin is not an executable" >&2; exit 1; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
runs="$dir/runs"
: >"$runs"
for round in $(seq "$rounds"); do
  cp "$old" "$dir/old.$round"
  cp "$new" "$dir/new.$round"
  order="old new"
  [ $((round % 2)) -eq 0 ] && order="new old"
  for which in $order; do
    "$dir/$which.$round" "$@" --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(json.dumps({'round': $round, 'which': '$which', 'rate': d['agent_steps_per_s'],
                  'hash': d.get('state_hash')}))" >>"$runs"
    rm -f "$dir/$which.$round"
  done
done
python3 - "$runs" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
for r in runs:
    print("round %d %-3s %.3f M agent-steps/s  state_hash %s" % (r["round"], r["which"], r["rate"] / 1e6, r["hash"]))
rate = {w: [r["rate"] for r in runs if r["which"] == w] for w in ("old", "new")}
for w in ("old", "new"):
    print("%s: median %.3f M, best %.3f M" % (w, statistics.median(rate[w]) / 1e6, max(rate[w]) / 1e6))
by_round = {}
for r in runs:
    by_round.setdefault(r["round"], {})[r["which"]] = r["rate"]
ratios = [v["new"] / v["old"] for v in by_round.values() if "old" in v and "new" in v]
print("new / old: median of per-round ratios %.3f (min %.3f, max %.3f)" % (
    statistics.median(ratios), min(ratios), max(ratios)))
hashes = {r["hash"] for r in runs}
if len(hashes) > 1:
    print("state hashes differ: %s" % " ".join(sorted(str(h) for h in hashes)))
PY
