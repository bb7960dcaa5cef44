#!/usr/bin/env bash
# Instructions per agent-step of shoal and of RVO2 on the same scene and the
# same steps, counted by callgrind: a figure that machine load does not move,
# printed beside the wall-clock ratio of one plain run of each.
#
#   benchmark/instructions.sh [--scenario grid|gridshuf|circle] [--dim 2|3]
#                             [--agents N] [--from S1] [--to S2] [--top K] [--json]
#
# Each program runs twice on one thread under callgrind, for S1 and for S2
# steps (defaults 10 and 110, 20,000 agents, the grid): the difference of
# the two runs' instructions, over (S2 - S1) x N, is what steps S1+1 to S2
# cost, setup and the final quality measure cancelling out. --top K also
# lists shoal's K costliest functions (inclusive) over those steps.
#
# SHOAL, RVO2_DRIVER and RVO2_3D_DRIVER name the binaries (build/release/shoal,
# build/rvo2/rvo2_crowd, build/rvo2/rvo2_crowd3d: benchmark/rvo2/build.sh).
# Valgrind 3.19 does not decode AVX-512: on a machine that has it, build both
# for AVX2, e.g.
#   cmake -S . -B build/avx2 -DCMAKE_BUILD_TYPE=Release -DSHOAL_NATIVE=OFF \
#         -DCMAKE_C_FLAGS=-march=x86-64-v3 -DCMAKE_CXX_FLAGS=-march=x86-64-v3 && \
#   cmake --build build/avx2 --target shoal_cli
#   RVO2_MARCH=x86-64-v3 benchmark/rvo2/build.sh RVO2_DIR build/rvo2-avx2
#   SHOAL=build/avx2/shoal RVO2_DRIVER=build/rvo2-avx2/rvo2_crowd benchmark/instructions.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scenario=grid dim=2 agents=20000 from=10 to=110 top=0 json=0
usage() {
  echo "usage: $0 [--scenario grid|gridshuf|circle] [--dim 2|3] [--agents N] [--from S1] [--to S2] [--top K] [--json]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --scenario) scenario=${2:?}; shift ;;
    --dim) dim=${2:?}; shift ;;
    --agents) agents=${2:?}; shift ;;
    --from) from=${2:?}; shift ;;
    --to) to=${2:?}; shift ;;
    --top) top=${2:?}; shift ;;
    --json) json=1 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "instructions.sh: unknown option $1" >&2; usage ;;
  esac
  shift
done
for v in "$agents" "$from" "$to" "$top"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "instructions.sh: '$v' is not a whole number" >&2; usage; }
done
[ "$to" -gt "$from" ] && [ "$from" -ge 1 ] ||
  { echo "instructions.sh: need 1 <= --from < --to (got $from, $to)" >&2; exit 2; }
[ "$dim" = 2 ] || [ "$dim" = 3 ] || { echo "instructions.sh: --dim must be 2 or 3" >&2; exit 2; }
shoal=${SHOAL:-$here/build/release/shoal}
if [ "$dim" = 3 ]; then rvo=${RVO2_3D_DRIVER:-$here/build/rvo2/rvo2_crowd3d}; else rvo=${RVO2_DRIVER:-$here/build/rvo2/rvo2_crowd}; fi
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
[ -x "$shoal" ] || { echo "instructions.sh: no shoal at $shoal (set SHOAL)" >&2; exit 1; }
[ -x "$rvo" ] || { echo "instructions.sh: no RVO2 driver at $rvo (benchmark/rvo2/build.sh; set RVO2_DRIVER)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count NAME STEPS PROGRAM ARGS...: callgrind of one run, its output in $tmp/NAME-STEPS.cg
count() {
  local name=$1 steps=$2
  shift 2
  if ! OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/$name-$steps.cg" "$@" \
    >"$tmp/$name-$steps.out" 2>"$tmp/$name-$steps.err"; then
    echo "instructions.sh: $name under callgrind failed:" >&2
    tail -n 5 "$tmp/$name-$steps.err" >&2
    grep -q "unhandled instruction" "$tmp/$name-$steps.err" &&
      echo "instructions.sh: valgrind cannot decode this build's instructions: build for AVX2 (see the header of $0)" >&2
    exit 1
  fi
}
scene=(--scenario "$scenario" --agents "$agents" --warmup 0 --threads 1 --quality-every 0 --dim "$dim")
for s in "$from" "$to"; do
  count shoal "$s" "$shoal" bench crowd "${scene[@]}" --steps "$s"
  count rvo2 "$s" "$rvo" "${scene[@]}" --steps "$s"
done
# one plain run of each, for the wall-clock ratio beside the counts
OMP_NUM_THREADS=1 "$shoal" bench crowd "${scene[@]}" --steps $((to - from)) --warmup "$from" --json >"$tmp/shoal.json"
OMP_NUM_THREADS=1 "$rvo" "${scene[@]}" --steps $((to - from)) --warmup "$from" --json >"$tmp/rvo2.json"

python3 - "$tmp" "$from" "$to" "$agents" "$top" "$json" "$scenario" "$dim" <<'EOF'
import json, re, subprocess, sys
tmp, s0, s1, n, top, as_json, scenario, dim = sys.argv[1:]
s0, s1, n, top = int(s0), int(s1), int(n), int(top)
per = (s1 - s0) * n

def total(path):
    for line in open(path):
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    raise SystemExit(f"instructions.sh: no total in {path}")

def inclusive(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S.*?)\s*(\[.*\])?$", line)
        if m and ":" in m.group(2):
            name = re.sub(r"\s*\([\d,]+x\)$", "", m.group(2).split(":")[-1]).strip()
            got[name] = max(got.get(name, 0), int(m.group(1).replace(",", "")))
    return got

sh = (total(f"{tmp}/shoal-{s1}.cg") - total(f"{tmp}/shoal-{s0}.cg")) / per
rv = (total(f"{tmp}/rvo2-{s1}.cg") - total(f"{tmp}/rvo2-{s0}.cg")) / per
shj = json.load(open(f"{tmp}/shoal.json"))
rvj = json.load(open(f"{tmp}/rvo2.json"))
wall = shj["agent_steps_per_s"] / rvj["agent_steps_per_s"]
funcs = []
if top > 0:
    a, b = inclusive(f"{tmp}/shoal-{s0}.cg"), inclusive(f"{tmp}/shoal-{s1}.cg")
    # the command, the step's frame and the thread pool: every system runs inside them
    skip = {"main", "(below main)", "cmd_bench", "cli_run_kind", "bench_crowd", "shoal_world_step",
            "par_region", "world_run_step", "world_run_system", "par_run", "par_for"}
    rows = sorted(((b[k] - a.get(k, 0)) / per, k) for k in b
                  if k not in skip and "'" not in k and not k.startswith(("__libc", "0x", "_dl_")))
    funcs = [{"function": k, "per_agent_step": round(v, 1)} for v, k in reversed(rows[-top:])]
res = {"scenario": scenario, "dim": int(dim), "agents": n, "steps": [s0 + 1, s1],
       "shoal_per_agent_step": round(sh, 1), "rvo2_per_agent_step": round(rv, 1),
       "instruction_ratio": round(rv / sh, 3), "wall_clock_ratio": round(wall, 3),
       "shoal_lanes": shj.get("lanes"), "shoal_state_hash": shj.get("state_hash"), "shoal_top": funcs}
if as_json == "1":
    print(json.dumps(res))
else:
    print(f"{scenario} {dim}D, {n} agents, steps {s0 + 1} to {s1}, one thread (shoal {shj.get('lanes')} lanes)")
    print(f"instructions per agent-step: shoal {sh:,.0f}, RVO2 {rv:,.0f}: RVO2 / shoal {rv / sh:.2f}")
    print(f"wall clock, one plain run each: shoal / RVO2 agent-steps/s {wall:.2f}")
    for f in funcs:
        print(f"  {f['per_agent_step']:10,.1f}  {f['function']}")
EOF
