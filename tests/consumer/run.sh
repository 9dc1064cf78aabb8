#!/usr/bin/env bash
# tests/consumer/run.sh BUILD_DIR: tessel as another project uses it (ctest Install.ConsumerProject).
#  1. `cmake --install BUILD_DIR --prefix TMP/prefix`; the installed package files name no
#     source or build path; the installed tool runs a kernel.
#  2. tests/consumer built with find_package(tessel CONFIG REQUIRED) + tessel::tessel, run
#     from another directory.
#  3. the same main.cpp with `c++ -std=c++20 main.cpp $(pkg-config --cflags --libs tessel)`.
#  4. tessel as a subproject: FetchContent with FETCHCONTENT_SOURCE_DIR_TESSEL set to this
#     tree (add_subdirectory underneath) into a fresh build directory; only the library is
#     built (ccache when available). TESSEL_CONSUMER_SKIP_SUBPROJECT=1 skips it.
# Exit 0 when all pass, 77 (skipped) for a sanitizer build; the first failure stops it (set -e).
# TESSEL_CONSUMER_KEEP=1 keeps the temporary directory.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$src/tests/consumer
jobs=${TESSEL_CONSUMER_JOBS:-2}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-consumer.XXXXXX")
[[ -n ${TESSEL_CONSUMER_KEEP:-} ]] || trap 'rm -rf "$tmp"' EXIT
export TESSEL_CACHE_DIR=$tmp/jit-cache OMP_NUM_THREADS=2

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" | head -1; }
cxx=$(cache_value CMAKE_CXX_COMPILER)
# A sanitizer build's library needs the sanitizer runtimes in every program that links it.
if [[ $(cache_value CMAKE_CXX_FLAGS) == *-fsanitize* ]]; then
  echo "skipped: $build is a sanitizer build (CMAKE_CXX_FLAGS has -fsanitize)"
  exit 77
fi
generator=$(cache_value CMAKE_GENERATOR)
launcher=$(cache_value CMAKE_CXX_COMPILER_LAUNCHER)
if [[ -z $launcher ]] && command -v ccache >/dev/null 2>&1; then launcher=ccache; fi
cmake_args=(-G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx")
[[ -n $launcher ]] && cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" -DCMAKE_C_COMPILER_LAUNCHER="$launcher")

step() { echo "== $*"; }
# Run the consumer from a directory that is neither the source nor a build tree.
run_consumer() {
  mkdir -p "$tmp/cwd"
  (cd "$tmp/cwd" && "$@")
}

step "install $build into $tmp/prefix"
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
config=$(find "$prefix" -name tesselConfig.cmake | head -1)
pc=$(find "$prefix" -name tessel.pc | head -1)
lib=$(find "$prefix" -name 'libtessel.*' | head -1)
for f in "$prefix/include/tessel/tessel.h" "$prefix/include/tessel/runtime_abi.h" "$config" \
         "$(dirname "$config")/tesselConfigVersion.cmake" "$(dirname "$config")/tesselTargets.cmake" "$pc" "$lib"; do
  [[ -n $f && -f $f ]] || { echo "missing after install: ${f:-(not found)}"; find "$prefix"; exit 1; }
done
if [[ -n $(cache_value TESSEL_BUILD_TOOLS) && $(cache_value TESSEL_BUILD_TOOLS) != OFF ]]; then
  [[ -x $prefix/bin/tessel ]] || { echo "missing after install: bin/tessel"; exit 1; }
fi
# The package files are relocatable: no source, build or configure-time prefix in them.
if grep -rIl -e "$src" -e "$build" "$prefix/lib" "$prefix/include" 2>/dev/null | grep -v '\.so\|\.a$'; then
  echo "installed text files name the source or build tree (above)"
  exit 1
fi
cat "$pc"

if [[ -x $prefix/bin/tessel ]]; then
  step "installed tool: SpMV on generated inputs, --check"
  run_consumer "$prefix/bin/tessel" run "a(i) = B(i,j) * c(j)" -f B:ds -g B:uniform:200,300,5 -g c:dense:300 --check
fi

step "find_package(tessel CONFIG REQUIRED) + tessel::tessel"
cmake -S "$here" -B "$tmp/package" "${cmake_args[@]}" -DTESSEL_CONSUMER_MODE=package \
      -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/package.log" || { cat "$tmp/package.log"; exit 1; }
grep "consumer:" "$tmp/package.log"
cmake --build "$tmp/package" -j"$jobs"
run_consumer "$tmp/package/consumer"

step "c++ -std=c++20 main.cpp \$(pkg-config --cflags --libs tessel)"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
read -ra flags <<<"$(pkg-config --cflags --libs tessel)"
echo "pkg-config: ${flags[*]}"
libdir=$(pkg-config --variable=libdir tessel)
"$cxx" -std=c++20 -O1 "$here/main.cpp" "${flags[@]}" -Wl,-rpath,"$libdir" -o "$tmp/consumer-pc"
run_consumer "$tmp/consumer-pc"
unset PKG_CONFIG_PATH

if [[ ${TESSEL_CONSUMER_SKIP_SUBPROJECT:-0} != 1 ]]; then
  step "FetchContent (FETCHCONTENT_SOURCE_DIR_TESSEL=$src, add_subdirectory underneath)"
  cmake -S "$here" -B "$tmp/fetch" "${cmake_args[@]}" -DTESSEL_CONSUMER_MODE=fetch \
        -DFETCHCONTENT_SOURCE_DIR_TESSEL="$src" >"$tmp/fetch.log" || { cat "$tmp/fetch.log"; exit 1; }
  cmake --build "$tmp/fetch" -j"$jobs"
  # A subproject builds the library alone: no tool, tests or examples (tessel's executables
  # all go to its bin/).
  if [[ -n $(ls -A "$tmp/fetch/_deps/tessel-build/bin" 2>/dev/null) ]]; then
    echo "the subproject built more than the library:" "$tmp"/fetch/_deps/tessel-build/bin/*
    exit 1
  fi
  run_consumer "$tmp/fetch/consumer"
fi
echo "consumer: all ways passed"
