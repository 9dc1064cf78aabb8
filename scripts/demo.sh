#!/usr/bin/env bash
# Build tessel (scripts/setup.sh) and run the demo program.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec build/bin/tessel-demo "$@"
