#!/usr/bin/env bash
# Runs one fuzz target for a bounded time from its seed corpus (ctest: Fuzz.<target>).
# Usage: run_fuzzer.sh FUZZER SEED_DIR SECONDS ARTIFACT_DIR [SKIP_REASON]
# Exit 77 (ctest skip) when the target could not be built. New corpus entries go to a
# temporary directory, never into the committed seeds; a crashing input is saved under
# ARTIFACT_DIR (reproduce with: FUZZER ARTIFACT).
set -u
fuzzer=$1 seeds=$2 secs=$3 artifacts=$4 reason=${5:-}
if [[ -n $reason ]]; then
  echo "SKIP: fuzz targets not built: $reason"
  exit 77
fi
if [[ ! -x $fuzzer ]]; then
  echo "SKIP: $fuzzer is not built (build the tessel-fuzzers target)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts"
# libFuzzer exits 77 on a crash by default, which ctest would read as a skip: a found
# bug must fail the test.
TMPDIR=$work "$fuzzer" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 \
  -print_final_stats=1 -artifact_prefix="$artifacts/$(basename "$fuzzer")-" "$work" "$seeds"
