#!/usr/bin/env bash
# Build tessel (scripts/setup.sh) and run the whole test suite; exits with ctest's code.
# Under CI=true the suite then runs again under ASan + UBSan (scripts/sanitize.sh, a
# second build; about 14 minutes on 2 cores; TESSEL_SANITIZE=0 skips it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
if [[ ${CI:-} != true || ${TESSEL_SANITIZE:-1} == 0 ]]; then
  exec ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
fi
rc=0
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600 || rc=$?
echo "== the suite under ASan + UBSan (scripts/sanitize.sh)"
bash scripts/sanitize.sh build-asan || rc=$((rc ? rc : $?))
exit "$rc"
