#!/usr/bin/env bash
# Build tessel (scripts/setup.sh) and run the whole test suite; exits with ctest's code.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
