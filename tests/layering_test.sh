#!/usr/bin/env bash
# The layers of src/ (DESIGN.md "Modules: the core knows no system"), each
# including only from those below it:
#   base/     byte helpers and the message convention (nothing of ours)
#   simd/     lanes and vectors (base)
#   ecs/      the core (base, simd): no module, no file format
#   systems/  the modules (base, simd, ecs)
#   io/       file formats (everything above)
# Fails, naming each offending line, if a layer ever includes from above.
set -u
src="$1/src"
status=0
check() { # dir, forbidden include prefixes (regex alternation)
  local dir=$1 forbidden=$2 n
  n=$(ls "$src/$dir"/*.[ch] 2>/dev/null | wc -l)
  if [ "$n" -lt 1 ]; then
    echo "layering_test: no files under $src/$dir"
    status=1
    return
  fi
  local bad
  bad=$(grep -nE "#[[:space:]]*include[[:space:]]*\"($forbidden)/" "$src/$dir"/*.[ch] || true)
  if [ -n "$bad" ]; then
    echo "src/$dir/ includes from a layer above it:"
    echo "$bad"
    status=1
  else
    echo "layering: src/$dir/ ($n files) includes nothing from $forbidden"
  fi
}
check base "simd|ecs|systems|io"
check simd "ecs|systems|io"
check ecs "systems|io"
check systems "io"
exit $status
