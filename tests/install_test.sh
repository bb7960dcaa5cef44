#!/usr/bin/env bash
# Installs a built shoal to a temporary prefix and builds examples/host
# against the installed package the ways a host programmer would:
#   - CMake, find_package(shoal) -> shoal::shoal (shared) and shoal::static;
#   - pkg-config, the example's Makefile (shared) and a static link by hand.
# Each host binary is run (it exits non-zero on any library error). Then
# examples/custom_system (user components and parallel systems through
# shoal/extend.h) is built the same ways, with CMake against shoal::shoal
# and with its Makefile, and run: it checks its own results and that 1 and
# 2 threads give one world, and exits non-zero otherwise. Also
# checks the installed layout, the SONAME, and that the shared library
# exports exactly the SHOAL_API functions of the installed headers: every
# exported symbol starts with shoal_, every declared function is exported.
# In a build with the command (BUILD_DIR/shoal), also installs it like a
# tool: bin/shoal, share/shoal/scenarios, share/shoal/viewer; then moves the
# whole prefix elsewhere and runs `shoal run` from an unrelated directory,
# with no scenario (the shipped default), a bare scenario name, through a
# link and through PATH, comparing state hashes with the build tree's runs.
#
# usage: install_test.sh BUILD_DIR SOURCE_DIR [C_COMPILER] [SANITIZE] [CONFIG]
#   SANITIZE: the build's SHOAL_SANITIZE (e.g. address,undefined). A host of a
#   sanitized libshoal must be built with the same -fsanitize flags.
# Everything is written under a temporary directory, removed on exit.
set -euo pipefail

build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
cc=${3:-cc}
sanitize=${4:-}
config=${5:-}

host_flags="-Wall -Wextra -Wpedantic -Werror"
if [ -n "$sanitize" ]; then
  host_flags="$host_flags -fsanitize=$sanitize -fno-omit-frame-pointer"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shoal-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

step() { echo "== install_test: $*"; }
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

step "cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix" ${config:+--config "$config"} > "$tmp/install.log" ||
  { cat "$tmp/install.log"; fail "cmake --install"; }

# Layout. GNUInstallDirs may choose lib, lib64 or lib/<multiarch>.
pc=$(find "$prefix" -name shoal.pc -path '*/pkgconfig/*')
if [ -z "$pc" ] || [ "$(echo "$pc" | wc -l)" -ne 1 ]; then
  fail "expected one shoal.pc, found: '$pc'"
fi
libdir=$(dirname "$(dirname "$pc")")
# The license (MIT) is installed and named by shoal.pc and the CMake package.
[ -f "$prefix/share/doc/shoal/LICENSE" ] || fail "missing share/doc/shoal/LICENSE"
grep -q "^# License: MIT" "$pc" || fail "shoal.pc does not name the license"
grep -rq "set(shoal_LICENSE MIT)" "$libdir/cmake/shoal/shoalConfig.cmake" || fail "shoalConfig.cmake does not name the license"
# Every public header is installed (shoal.h includes the others), and each
# compiles on its own, so a host may include any one of them first.
for f in "$source_dir"/include/shoal/*.h; do
  h=include/shoal/$(basename "$f")
  [ -f "$prefix/$h" ] || fail "missing $h"
  # (the typedef: a header of macros only would leave an empty unit)
  printf '#include <shoal/%s>\ntypedef int header_test_t;\n' "$(basename "$f")" > "$tmp/header.c"
  # shellcheck disable=SC2086
  "$cc" -std=c11 $host_flags -I"$prefix/include" -c "$tmp/header.c" -o "$tmp/header.o" ||
    fail "$h does not compile on its own"
done
for f in libshoal.a libshoal.so cmake/shoal/shoalConfig.cmake cmake/shoal/shoalConfigVersion.cmake \
         cmake/shoal/shoalSharedTargets.cmake cmake/shoal/shoalStaticTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "missing ${libdir#"$prefix"/}/$f"
done
soname=$(readelf -d "$libdir/libshoal.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case "$soname" in
  libshoal.so.[0-9]*) ;;
  *) fail "SONAME is '$soname', expected libshoal.so.<abi>" ;;
esac
[ -e "$libdir/$soname" ] || fail "no $soname link next to libshoal.so"
real=$(basename "$(readlink -f "$libdir/libshoal.so")")
echo "   libdir ${libdir#"$prefix"/}, SONAME $soname, file $real"

step "exported symbols of libshoal.so"
nm -D --defined-only "$libdir/libshoal.so" | awk '{print $NF, $(NF-1)}' | sort > "$tmp/exported"
bad=$(awk '$1 !~ /^shoal_/' "$tmp/exported")
[ -z "$bad" ] || fail "symbols exported without the shoal_ prefix (not SHOAL_API?):
$bad"
awk '$2 ~ /^[TtWi]$/ {print $1}' "$tmp/exported" > "$tmp/functions"
[ -s "$tmp/functions" ] || fail "libshoal.so exports no function"
# Every SHOAL_API function of the installed headers must be exported.
# (export.h defines SHOAL_API; the others use it.)
find "$prefix/include/shoal" -name '*.h' ! -name export.h -exec cat {} + | tr '\n' ' ' |
  grep -oE 'SHOAL_API [^;{}()]*[A-Za-z_0-9]+ *\(' | grep -oE '[A-Za-z_0-9]+ *\($' | tr -d ' (' |
  grep '^shoal_' | sort -u > "$tmp/declared" || true
[ -s "$tmp/declared" ] || fail "found no SHOAL_API declaration in the installed headers"
missing=$(comm -23 "$tmp/declared" "$tmp/functions")
[ -z "$missing" ] || fail "declared SHOAL_API in the headers but not exported:
$missing"
echo "   $(wc -l < "$tmp/functions") functions exported, all shoal_*;" \
  "$(wc -l < "$tmp/declared") declared SHOAL_API, all exported"

# Runs a host build; all four must agree on the final state hash (same
# seed, same library, shared or static).
run_host() {
  local status=0
  "$2" > "$tmp/$1.out" || status=$?
  cat "$tmp/$1.out"
  [ $status -eq 0 ] || fail "the host ($1) exited with $status"
  sed -n 's/.*state hash \([0-9a-f]*\)$/\1/p' "$tmp/$1.out" > "$tmp/$1.hash"
  [ -s "$tmp/$1.hash" ] || fail "the host ($1) printed no state hash"
}

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# CMake: find_package(shoal) from the prefix, shared then static.
for variant in shared static; do
  step "CMake host, $variant"
  bdir=$tmp/cmake-$variant
  static=OFF
  [ "$variant" = static ] && static=ON
  cmake -S "$source_dir/examples/host" -B "$bdir" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$host_flags" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DHOST_LINK_STATIC=$static > "$tmp/cmake-$variant.log" 2>&1 ||
    { cat "$tmp/cmake-$variant.log"; fail "configuring the host ($variant)"; }
  found=$(sed -n 's/^shoal_DIR:PATH=//p' "$bdir/CMakeCache.txt")
  [ "$(cd "$found" && pwd -P)" = "$(cd "$libdir/cmake/shoal" && pwd -P)" ] ||
    fail "find_package(shoal) found $found, not the temporary prefix"
  cmake --build "$bdir" > "$tmp/build-$variant.log" 2>&1 ||
    { cat "$tmp/build-$variant.log"; fail "building the host ($variant)"; }
  if [ $variant = shared ]; then
    needed "$bdir/host" | grep -x "$soname" > /dev/null || fail "the CMake shared host does not need $soname"
  else
    ! needed "$bdir/host" | grep libshoal > /dev/null || fail "the CMake static host needs libshoal.so"
  fi
  run_host "cmake-$variant" "$bdir/host"
done

export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion shoal) || fail "pkg-config does not find shoal"

step "pkg-config host (examples/host/Makefile), shared, shoal $version"
mkdir "$tmp/pc-shared"
make -s -C "$tmp/pc-shared" -f "$source_dir/examples/host/Makefile" CC="$cc" \
  CFLAGS="-O2 $host_flags" ||
  fail "make with pkg-config: $(pkg-config --cflags --libs shoal)"
needed "$tmp/pc-shared/host" | grep -x "$soname" > /dev/null || fail "the pkg-config host does not need $soname"
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} run_host pc-shared "$tmp/pc-shared/host"

step "pkg-config host, static libshoal.a with shared system libraries"
# `pkg-config --static --libs shoal` would make every dependency static too,
# and Debian's static libhwloc needs libudev.a, which no package here ships.
# So, as hosts linking libshoal.a usually do, take shoal's own Libs.private
# (its --static line minus its modules' and minus -L/-lshoal) and the
# Requires.private modules' shared libraries: this still checks both fields.
private=$(pkg-config --print-requires-private shoal | awk '{print $1}' | tr '\n' ' ')
[ -n "$private" ] || fail "shoal.pc has no Requires.private"
# shellcheck disable=SC2086
pkg-config --static --libs $private | tr ' ' '\n' | sed '/^$/d' | sort -u > "$tmp/deps-static"
own=$(pkg-config --static --libs shoal | tr ' ' '\n' | sed '/^$/d' | grep -v -e '^-L' -e '^-lshoal$' |
  grep -vxF -f "$tmp/deps-static" | tr '\n' ' ' || true)
echo "$own" | grep -e -fopenmp > /dev/null || fail "shoal.pc's Libs.private lacks -fopenmp: '$own'"
mkdir "$tmp/pc-static"
# shellcheck disable=SC2046,SC2086  # pkg-config output is meant to be split
"$cc" -std=c11 -O2 $host_flags $(pkg-config --cflags shoal) -o "$tmp/pc-static/host" \
  "$source_dir/examples/host/host.c" "$libdir/libshoal.a" $own $(pkg-config --libs $private) -lm ||
  fail "static link with: libshoal.a $own $(pkg-config --libs $private)"
! needed "$tmp/pc-static/host" | grep libshoal > /dev/null || fail "the static host needs libshoal.so"
run_host pc-static "$tmp/pc-static/host"

hashes=$(cat "$tmp"/*.hash | sort -u)
[ "$(echo "$hashes" | wc -l)" -eq 1 ] || fail "the host builds disagree on the state hash: $hashes"

# examples/custom_system: the extension API from an installed package.
# (Its state hash is its own world's, unrelated to the host's.)
step "CMake custom_system, shared"
bdir=$tmp/cmake-custom
cmake -S "$source_dir/examples/custom_system" -B "$bdir" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$host_flags" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$tmp/cmake-custom.log" 2>&1 ||
  { cat "$tmp/cmake-custom.log"; fail "configuring custom_system"; }
cmake --build "$bdir" > "$tmp/build-custom.log" 2>&1 ||
  { cat "$tmp/build-custom.log"; fail "building custom_system"; }
needed "$bdir/custom_system" | grep -x "$soname" > /dev/null || fail "custom_system does not need $soname"
"$bdir/custom_system" || fail "custom_system (CMake) exited with $?"

step "pkg-config custom_system (examples/custom_system/Makefile), shared"
mkdir "$tmp/pc-custom"
make -s -C "$tmp/pc-custom" -f "$source_dir/examples/custom_system/Makefile" CC="$cc" \
  CFLAGS="-O2 $host_flags" || fail "make custom_system with pkg-config"
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/pc-custom/custom_system" ||
  fail "custom_system (pkg-config) exited with $?"

# The command, installed like a tool, from a prefix moved after installing.
tool="no shoal command in this build"
if [ -x "$build_dir/shoal" ]; then
  step "the shoal command and its files, from a moved prefix"
  [ -x "$prefix/bin/shoal" ] || fail "missing bin/shoal"
  for f in "$source_dir"/scenarios/*.json; do
    [ -f "$prefix/share/shoal/scenarios/$(basename "$f")" ] ||
      fail "missing share/shoal/scenarios/$(basename "$f")"
  done
  [ -f "$prefix/share/shoal/viewer/viewer.html" ] || fail "missing share/shoal/viewer/viewer.html"
  moved=$tmp/elsewhere/shoal-prefix
  mkdir -p "$tmp/elsewhere" "$tmp/cwd"
  mv "$prefix" "$moved"
  # state_hash and file of a `shoal run ... --json` line.
  run_json() {
    local out status=0
    out=$("$@" --steps 3 --threads 1 --json) || status=$?
    [ $status -eq 0 ] || fail "'$*' exited with $status"
    hash=$(echo "$out" | sed -n 's/.*"state_hash":"\([0-9a-f]*\)".*/\1/p')
    file=$(echo "$out" | sed -n 's/.*"file":"\([^"]*\)".*/\1/p')
    [ -n "$hash" ] || fail "'$*' printed no state_hash: $out"
  }
  run_json "$build_dir/shoal" run "$source_dir/scenarios/default.json"
  want_default=$hash
  run_json "$build_dir/shoal" run "$source_dir/scenarios/tiny.json"
  want_tiny=$hash
  cd "$tmp/cwd"
  run_json "$moved/bin/shoal" run
  [ "$hash" = "$want_default" ] || fail "'shoal run' from the moved prefix: hash $hash, not default.json's $want_default"
  [ "$file" = "$(cd "$moved" && pwd -P)/share/shoal/scenarios/default.json" ] ||
    fail "'shoal run' from the moved prefix ran $file, not its share/shoal/scenarios/default.json"
  run_json "$moved/bin/shoal" run tiny.json
  [ "$hash" = "$want_tiny" ] || fail "'shoal run tiny.json' from the moved prefix: hash $hash, not $want_tiny"
  run_json "$moved/bin/shoal" run scenarios/tiny.json
  [ "$hash" = "$want_tiny" ] || fail "'shoal run scenarios/tiny.json' from the moved prefix: hash $hash"
  ln -s "$moved/bin/shoal" "$tmp/cwd/shoal-link"
  run_json "$tmp/cwd/shoal-link" run
  [ "$hash" = "$want_default" ] || fail "'shoal run' through a link: hash $hash, not $want_default"
  run_json env PATH="$moved/bin:$PATH" shoal run
  [ "$hash" = "$want_default" ] || fail "'shoal run' through PATH: hash $hash, not $want_default"
  # A name found nowhere fails, saying where it looked.
  status=0
  "$moved/bin/shoal" run no_such_scenario.json 2> "$tmp/missing.err" || status=$?
  [ $status -eq 1 ] || fail "a missing scenario exited with $status, not 1"
  grep -F "$(cd "$moved" && pwd -P)/share/shoal/scenarios" "$tmp/missing.err" > /dev/null ||
    fail "a missing scenario's error does not name the shipped scenarios: $(cat "$tmp/missing.err")"
  cd - > /dev/null
  tool="the command ran from a moved prefix"
fi

step "ok: 4 host builds ran, state hash $hashes; 2 custom_system builds ran; $tool"
