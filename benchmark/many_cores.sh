#!/usr/bin/env bash
# The many-core measurements in one command, for a machine with 16 cores:
#   benchmark/many_cores.sh [--quick] [OUT_DIR]
# runs the thread sweeps and big flocks the many-core targets are stated in
# (benchmark/README.md, "Scripts"; docs/dev/threads-and-scaling.md), writes every run's JSON lines into OUT_DIR
# (default: $OUT, else ./many-cores) and prints a summary beside the
# targets. `shoal` must be on PATH (the device tool's build-and-run.sh puts
# its build there). --quick runs the same commands on small worlds and two
# threads: a check of the script, not a measurement. At full size, about 4
# minutes on the 16-core Xeon (estimated from benchmark/README.md's figures; the
# ceilings make the sweeps two to three times as long; the splits add about
# half a minute).
set -euo pipefail
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
out=${1:-${OUT:-./many-cores}}
mkdir -p "$out"
if [ $quick = 1 ]; then
  T=1,2; TOP=2; A100K=4000; A1M=8000; A10M=80000; A100M=160000; CROWD=3000; JAM=2000; PLAN=200; R=1
else
  T=1,2,4,8,16; TOP=16; A100K=100000; A1M=1000000; A10M=10000000; A100M=100000000; CROWD=100000; JAM=20000; PLAN=10000; R=3
fi
say() { echo "== $*" >&2; }

say "flock 2D ${A100K}: threads $T"
shoal bench scaling flock --threads $T --agents $A100K --rounds $R --ceiling --json > "$out/scaling-flock-100k.jsonl"
# the same, the OpenMP threads pinned to cores (libgomp's own binding: the
# sweep's runs and its ceiling's worlds step on the same pinned team)
say "flock 2D ${A100K}, threads pinned: threads 1,$TOP"
OMP_PROC_BIND=close OMP_PLACES=cores shoal bench scaling flock --threads 1,$TOP --agents $A100K --rounds $R \
  --ceiling --json > "$out/scaling-flock-100k-pinned.jsonl"
say "flock 2D ${A1M}: threads 1,$TOP"
shoal bench scaling flock --threads 1,$TOP --agents $A1M --rounds $R --ceiling --json > "$out/scaling-flock-1m.jsonl"
say "flock 3D ${A100K}: threads $T"
shoal bench scaling flock3d --threads $T --agents $A100K --rounds $R --ceiling --json > "$out/scaling-flock3d-100k.jsonl"
say "crowd grid ${CROWD}: threads 1,$TOP"
shoal bench scaling crowd --threads 1,$TOP --agents $CROWD --steps 20 --warmup 2 --rounds 1 --json \
  > "$out/scaling-crowd.jsonl"
# the crowd grid's dense crossing (its jam), serial (-1) against colored
# contact sweeps (0, the default; bench crowd --colored-sweeps-after), on 1
# and all threads
: > "$out/crowd-jam.jsonl"
for n in 1 $TOP; do
  for after in -1 0; do
    say "crowd grid ${JAM} jam, $n threads, colored sweeps after $after"
    shoal bench crowd --agents $JAM --steps 150 --warmup 0 --quality-every 0 --threads $n \
      --colored-sweeps-after $after --json >> "$out/crowd-jam.jsonl"
  done
done
say "planner ${PLAN}: threads 1,$TOP"
shoal bench scaling planner --threads 1,$TOP --agents $PLAN --steps 300 --rounds 1 --ceiling --json \
  > "$out/scaling-planner.jsonl"
# how each scene's loops split over all the threads, found on one (bench
# split): the speed-up the step's own cuts allow, beside the sweeps' measured
# ones
: > "$out/split.jsonl"
for sc in "flock --agents $A100K" "flock --agents $A1M --steps 20 --warmup 2" "flock3d --agents $A100K" \
          "crowd --agents $CROWD --steps 20 --warmup 2" "planner --agents $PLAN --steps 120"; do
  say "split $sc, as $TOP threads would"
  shoal bench split $sc --threads $TOP --json >> "$out/split.jsonl"
done
say "loops: one region per loop against one region for all"
: > "$out/loops.jsonl"
for n in $(echo "${T#1,}" | tr , ' '); do
  shoal bench loops --threads "$n" --loops 20000 --json >> "$out/loops.jsonl"
done
# the spatial hash's phases (bench flock's sense_phases) on 1 and all threads
: > "$out/sense.jsonl"
for n in $A100K $A1M; do
  for t in 1 $TOP; do
    say "flock 2D $n, $t threads: the spatial hash's phases"
    shoal bench flock --agents $n --threads $t --steps 64 --warmup 2 --no-hash --json >> "$out/sense.jsonl"
  done
done
# 10M against 1M on all cores, interleaved, best of R; then 100M once
: > "$out/big.jsonl"
for r in $(seq $R); do
  for n in $A1M $A10M; do
    say "flock 2D $n, $TOP threads, round $r"
    shoal bench flock --agents $n --threads $TOP --steps 30 --warmup 2 --no-hash --json >> "$out/big.jsonl"
  done
done
say "flock 2D $A100M, $TOP threads"
shoal bench flock --agents $A100M --threads $TOP --steps 3 --warmup 1 --no-hash --json >> "$out/big.jsonl"

python3 - "$out" "$A1M" "$A10M" "$A100M" <<'PY'
import json, sys, os
out, a1m, a10m, a100m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def lines(name):
    with open(os.path.join(out, name)) as f:
        return [json.loads(l) for l in f if l.strip()]
print("scene                          threads  best rate    speed-up  target  hashes  ceiling  eff.  per world")
targets = {"scaling-flock-100k.jsonl": 11, "scaling-flock-100k-pinned.jsonl": 11, "scaling-flock-1m.jsonl": 13, "scaling-flock3d-100k.jsonl": 12,
           "scaling-crowd.jsonl": 12, "scaling-planner.jsonl": 12}
for name, target in targets.items():
    for d in lines(name):
        tag = "%s %d%s" % (d["scene"], d["agents"], " pinned" if "pinned" in name else "")
        mark = ("%5.1fx" % target) if d["threads"] == 16 else ""
        ceil = ("%6.2fx  %3.0f %%  %5.0f %%" % (d["ceiling_speedup"], 100 * d["efficiency"], 100 * d["ceiling_per_world"])
                if d.get("ceiling_speedup") is not None else "")
        print("%-30s %7d  %10.4g  %7.2fx  %6s  %-6s  %s" % (tag, d["threads"], d["best_rate"], d["speedup"], mark,
                                                     "agree" if d["hashes_agree"] else "DIFFER", ceil))
    hs = [s for d in lines(name) for s in d["systems"] if s["name"] == "spatial_hash" and s.get("speedup")]
    if hs and name == "scaling-flock-1m.jsonl":
        print("%-30s %7s  spatial_hash speed-up %.2fx (target 10x)" % ("", "", hs[-1]["speedup"]))
for d in lines("split.jsonl"):
    print("split %-8s %8d, as %2d threads would: split bound %5.2fx, typical calls %5.2fx, %.1f loops a step "
          "(the step's own cuts; bench split)" % (d["scene"], d["agents"], d["threads"], d["split_bound"],
          d["typical_split_bound"], d["loops_per_step"]))
for d in lines("loops.jsonl"):
    print("loops of %d items, %2d threads: %6.0f ns per loop in a region each, %6.0f in one region (work alone: %.0f)"
          % (d["items"], d["threads"], d["forkjoin_ns_per_loop"], d["region_ns_per_loop"], d["serial_ns_per_loop"]))
jam = lines("crowd-jam.jsonl")
for d in jam:
    base = [e for e in jam if e["threads"] == 1 and e["colored_sweeps_after"] == d["colored_sweeps_after"]]
    cont = {s["name"]: s for s in d["systems"]}.get("contacts", {})
    print("crowd grid %d jam, %2d threads, colored sweeps after %d: %.4g agent-steps/s (%.2fx 1 thread), "
          "contacts %.0f ns per agent, hash %s" % (d["agents"], d["threads"], d["colored_sweeps_after"],
          d["agent_steps_per_s"], d["agent_steps_per_s"] / base[0]["agent_steps_per_s"] if base else 0.0,
          cont.get("ns_per_agent", 0.0), d["state_hash"]))
sense = lines("sense.jsonl")
for d in sense:
    p = d.get("sense_phases", {})
    print("spatial hash, %d agents, %d threads, ms/step: %s" % (d["agents"], d["threads"],
          ", ".join("%s %.3f" % (k, v) for k, v in p.items())))
big = lines("big.jsonl")
def best(n):
    runs = [d for d in big if d["agents"] == n]
    return max(runs, key=lambda d: d["agent_steps_per_s"]) if runs else None
b1, b10, b100 = best(a1m), best(a10m), best(a100m)
if b1 and b10:
    print("flock 2D %d at %d threads: %.4g agent-steps/s = %.0f %% of %d's %.4g (target 90 %%), %.1f bytes per agent"
          % (a10m, b10["threads"], b10["agent_steps_per_s"], 100 * b10["agent_steps_per_s"] / b1["agent_steps_per_s"],
             a1m, b1["agent_steps_per_s"], b10["bytes_per_agent"]))
if b100:
    print("flock 2D %d: setup %.2f s, of which the library (world_create, bulk adds) %.2f s (target 10 s); %.4g agent-steps/s"
          % (a100m, b100["setup_seconds"], b100["add_seconds"], b100["agent_steps_per_s"]))
PY
