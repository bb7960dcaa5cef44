#!/usr/bin/env bash
# The serial share of a step, per system (benchmark/serial_share.py), from two
# callgrind runs of one bench command on one thread that differ only in
# their step count, so that the first steps' one-time work cancels out.
#   benchmark/serial_share.sh V0 V1 [--per K] [--top N] [--json] -- COMMAND...
# Every {} in COMMAND becomes V0, then V1; each run makes V*K steps (K = 1 by
# default; 60 for the planner's --sim-seconds at 60 Hz). For example:
#   benchmark/serial_share.sh 8 40 -- build/release/shoal bench flock \
#       --agents 100000 --threads 1 --warmup 0 --steps {}
#   benchmark/serial_share.sh 1 2 --per 60 -- build/release/shoal bench planner \
#       --threads 1 --sim-seconds {}
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: serial_share.sh V0 V1 [--per K] [--top N] [--json] -- COMMAND..." >&2; exit 2; }
[ $# -ge 4 ] || usage
v0=$1 v1=$2
shift 2
per=1 extra=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --per) per=${2:?}; shift 2 ;;
    --top) extra+=(--top "${2:?}"); shift 2 ;;
    --json) extra+=(--json); shift ;;
    *) usage ;;
  esac
done
[ "${1:-}" = "--" ] || usage
shift
[ $# -gt 0 ] || usage
command -v valgrind >/dev/null || { echo "serial_share.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
profile() {  # value output
  local args=() a
  for a in "${cmd[@]}"; do args+=("${a//\{\}/$1}"); done
  valgrind --tool=callgrind --toggle-collect=shoal_world_step --callgrind-out-file="$2" "${args[@]}" \
    >"$2.stdout" 2>"$2.stderr" || { cat "$2.stderr" >&2; exit 1; }
}
cmd=("$@")
profile "$v0" "$tmp/base.out"
profile "$v1" "$tmp/run.out"
python3 "$here/serial_share.py" "$tmp/run.out" --steps $((v1 * per)) \
  --base "$tmp/base.out" --base-steps $((v0 * per)) "${extra[@]}"
