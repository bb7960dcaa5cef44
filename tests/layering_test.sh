#!/usr/bin/env bash
# The layers of src/ (docs/design.md, "Modules and the open core"), each
# including only from those below it:
#   base/     byte helpers and the message convention (nothing of ours)
#   simd/     lanes and vectors (base)
#   ecs/      the core (base, simd): no module, no file format
#   modules/  the modules (base, simd, ecs), one folder each
#   io/       file formats (everything above)
# Fails, naming each offending line, if a layer ever includes from above,
# or if a module's folder includes another module's private header: what
# modules/<m>/ offers the others is modules/<m>/<m>.h and <m>_*.h.
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
check base "simd|ecs|modules|io"
check simd "ecs|modules|io"
check ecs "modules|io"
check modules "io"
folders=0
for dir in "$src"/modules/*/; do
  m=$(basename "$dir")
  folders=$((folders + 1))
  check "modules/$m" "io"
  # modules/<other>/<header> where <header> is neither <other>.h nor <other>_*.h
  bad=$(grep -nE '#[[:space:]]*include[[:space:]]*"modules/[a-z_0-9]+/' "$dir"*.[ch] |
    awk -v self="$m" '{
      match($0, /"modules\/[a-z_0-9]+\/[a-z_0-9.]+"/)
      inc = substr($0, RSTART + 9, RLENGTH - 10)
      split(inc, part, "/")
      other = part[1]; header = part[2]
      if (other != self && header != other ".h" && index(header, other "_") != 1) print
    }')
  if [ -n "$bad" ]; then
    echo "src/modules/$m/ includes another module's private header:"
    echo "$bad"
    status=1
  fi
done
if [ "$folders" -lt 10 ]; then
  echo "layering_test: only $folders module folders under $src/modules"
  status=1
fi
exit $status
