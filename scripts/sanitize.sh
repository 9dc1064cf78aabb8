#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer (issue 26): the
# library, the tool and the tests built with -fsanitize=address,undefined in build-asan/,
# then ctest without the MPI label (Open MPI's own allocations drown ASan's report) nor
# the tuning variants (the kernel tests again under other JIT flags), and the benchmarks.
# The JIT compiles the kernels with -fsanitize=address as well (jit.cpp does so whenever the
# host is under ASan), so an out-of-bounds access in generated code is caught, not only the
# runtime's. UBSan findings abort (no recovery); leaks are not checked (the JIT keeps
# loaded objects for the process's life on purpose). Tests that cap the address space
# (RLIMIT_AS) skip themselves: ASan reserves terabytes of it. tessel's own SIGBUS and
# SIGSEGV guards (mapped .tsb files) need those signals, so ASan leaves them alone.
#   bash scripts/sanitize.sh [BUILD_DIR]       (CI runs it after the main suite)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${1:-build-asan}
flags="-O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DTESSEL_BUILD_BENCH=OFF -DTESSEL_BUILD_FUZZ=OFF > /dev/null
cmake --build "$dir" -j"$(nproc)"
export ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_sigbus=0:allow_user_segv_handler=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
exec ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" --timeout 900 -LE "mpi|tuning"
