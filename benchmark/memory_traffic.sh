#!/usr/bin/env bash
# Bytes a step moves to and from memory, per agent and per function, on any
# machine: two cachegrind runs of one `shoal bench flock` command on one
# thread, differing only in their step count, with a last-level cache far
# smaller than the world (32 MiB by default, as a 10M world is to a 300 MiB
# L3), so that what a pass misses there is what it streams from memory. The
# difference of the two runs is the steps alone (setup cancels out).
#   benchmark/memory_traffic.sh SHOAL [--ll BYTES] [--top N] [-- BENCH_FLOCK_ARGS...]
# e.g. benchmark/memory_traffic.sh build/release/shoal -- --agents 1000000
# Counts are last-level read and write misses (cachegrind's DLmr + DLmw)
# times 64 bytes; write-backs are not counted. About 2 minutes at 1M agents.
set -euo pipefail
shoal=${1:?usage: memory_traffic.sh SHOAL [--ll BYTES] [--top N] [-- ARGS...]}
shift
ll=33554432
top=12
while [ $# -gt 0 ]; do
  case "$1" in
    --ll) ll=$2; shift 2 ;;
    --top) top=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "memory_traffic.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
command -v valgrind > /dev/null || { echo "memory_traffic.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
agents=1000000
args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do
  case "${args[$i]}" in
    --agents) agents=${args[$((i + 1))]} ;;
    --agents=*) agents=${args[$i]#--agents=} ;;
  esac
done
pids=()
for s in 2 5; do
  valgrind --tool=cachegrind --cache-sim=yes --LL="$ll,16,64" --cachegrind-out-file="$tmp/cg.$s" \
    "$shoal" bench flock --agents "$agents" --threads 1 --steps $s --warmup 1 --no-hash "${args[@]}" \
    > "$tmp/out.$s" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do
  if ! wait "$p"; then
    # valgrind 3.19 (Debian 12) cannot run AVX-512 code: on such a machine,
    # measure a build for AVX2 (cmake -DSHOAL_NATIVE=OFF -DCMAKE_C_FLAGS=-march=x86-64-v3).
    echo "memory_traffic.sh: the run under valgrind failed (an AVX-512 build? valgrind 3.19 runs AVX2 at most); its output:" >&2
    tail -n 5 "$tmp"/out.* >&2
    exit 1
  fi
done
cg_diff "$tmp/cg.2" "$tmp/cg.5" > "$tmp/diff" 2> /dev/null
cg_annotate --show=Ir,DLmr,DLmw "$tmp/diff" 2> /dev/null > "$tmp/table"
python3 - "$tmp/table" "$agents" "$top" "$ll" <<'EOF'
import re, sys
table, agents, top, ll = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
steps = 3
rows = []
total = None
for line in open(table):
    body = re.sub(r'\(\s*[\d.]+%\)', ' ', line)
    nums = [t for t in body.split() if re.fullmatch(r'[\d,]+', t)]
    if len(nums) != 3 or not re.match(r'\s*[\d,]+', line):
        continue
    ir, rd, wr = (int(x.replace(',', '')) for x in nums)
    name = line.split(')')[-1].strip()
    if 'PROGRAM TOTALS' in line:
        total = (ir, rd, wr)
    else:
        rows.append((rd + wr, ir, rd, wr, name.split(':')[-1]))
per = lambda lines: lines * 64.0 / (agents * steps)
print(f"{agents} agents, 1 thread, last level {ll >> 20} MiB: bytes per agent-step missed there")
if total:
    print(f"  all     {per(total[1] + total[2]):7.1f} B  (read {per(total[1]):.1f}, write {per(total[2]):.1f}); "
          f"{total[0] / (agents * steps):.0f} instructions per agent-step")
for lines, ir, rd, wr, name in sorted(rows, reverse=True)[:top]:
    if lines == 0:
        break
    print(f"  {per(lines):7.1f} B  (read {per(rd):5.1f}, write {per(wr):5.1f})  {name}")
EOF
