#!/usr/bin/env bash
# The layers of src/ (DESIGN.md "Modules: the core knows no system"): the
# core (src/ecs/) includes nothing from the modules (src/systems/) or from
# the file formats (src/io/). Fails, naming each offending line, if it ever
# does again.
set -u
src="$1/src"
bad=$(grep -rnE '#[[:space:]]*include[[:space:]]*"(systems|io)/' "$src/ecs" || true)
if [ -n "$bad" ]; then
  echo "src/ecs/ includes module or io headers:"
  echo "$bad"
  exit 1
fi
# The check itself must see the files it guards.
n=$(ls "$src"/ecs/*.c "$src"/ecs/*.h 2>/dev/null | wc -l)
if [ "$n" -lt 5 ]; then
  echo "layering_test: found only $n files under $src/ecs"
  exit 1
fi
echo "layering: src/ecs/ ($n files) includes nothing from src/systems/ or src/io/"
