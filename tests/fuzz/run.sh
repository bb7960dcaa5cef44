#!/usr/bin/env bash
# Run libFuzzer targets of a fuzz build for a fixed time each, one at a time.
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]      (default: every target)
# e.g. tests/fuzz/run.sh build/fuzz 600 scenario
# Each target starts from its seed corpus tests/fuzz/corpus/<target>/ (read,
# never written) and keeps what it finds in BUILD_DIR/fuzz-work/<target>/;
# a crash writes its input to BUILD_DIR/fuzz-artifacts/ and fails the run.
# Add a fixed crash's input to the seed corpus: the replay ctests keep it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}"
seconds="${2:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}"
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=()
  for d in "$here"/corpus/*/; do targets+=("$(basename "$d")"); done
fi
mkdir -p "$build/fuzz-artifacts"
status=0
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "run.sh: no $bin (cmake --preset fuzz && cmake --build --preset fuzz)"; exit 2; }
  work="$build/fuzz-work/$t"
  mkdir -p "$work"
  dict=()
  [ -f "$here/$t.dict" ] && dict=(-dict="$here/$t.dict")
  echo "== fuzz_$t for $seconds s"
  # -timeout: an input that takes 10 s is a bug (a loader must stay fast;
  # FUZZ_TIMEOUT changes it, for long runs on a machine loaded by others,
  # where a 1 s input can take 15 s of wall-clock time);
  # -rss_limit_mb, -malloc_limit_mb: so is one that needs 2 GB in all or
  # 256 MB at once (inputs are at most 64 KB).
  log="$build/fuzz-$t.log"
  rc=0
  # FUZZ_SEED and FUZZ_RUNS (CI sets both) make a run repeatable: the same
  # mutations in the same order, at most FUZZ_RUNS inputs within the time.
  repeat=()
  [ -n "${FUZZ_SEED:-}" ] && repeat+=(-seed="$FUZZ_SEED")
  [ -n "${FUZZ_RUNS:-}" ] && repeat+=(-runs="$FUZZ_RUNS")
  "$bin" "${repeat[@]}" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -malloc_limit_mb=256 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" "${dict[@]}" \
    "$work" "$here/corpus/$t" >"$log" 2>&1 || rc=$?
  grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::(number_of_executed_units|peak_rss_mb)|ERROR|SUMMARY|fuzz check failed|Test unit written" "$log" || true
  if [ $rc -ne 0 ]; then
    echo "run.sh: fuzz_$t FAILED (exit $rc; log: $log)"
    status=1
  fi
done
exit $status
