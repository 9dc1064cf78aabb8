#!/usr/bin/env bash
# Regenerates docs/performance.md: builds Release, runs the single-thread SpMV/SpMM
# benchmark (tessel vs a hand-written C loop, same compiler and flags) and the file I/O
# benchmark, and writes the CSVs to bench/results/ and the report to docs/performance.md.
# With --io-only, runs only the I/O benchmark and replaces the report's last section,
# "## I/O throughput".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
mkdir -p bench/results

# The "I/O throughput" section from bench/bench_io's CSV ($1).
io_section() {
  echo "## I/O throughput"
  echo
  echo "\`bench/bench_io.cpp\`: a random 2M x 2M matrix with $(sed -n '2p' "$1" | cut -d, -f8) entries"
  echo "(generateUniformMatrix), written and read back in each format in a temporary directory;"
  echo "medians of 3 runs, one thread. Files are read right after being written, so they come"
  echo "from the page cache: text figures are parsing/formatting speed, binary figures copy"
  echo "speed. MB/s is the file size (10^6 bytes) over wall time and over the thread's CPU time"
  echo "(user + system), which is the fair figure when the machine is shared. Targets: reading"
  echo "\`.mtx\` text at least 150 MB/s on one core; loading \`.tsb\` bound by memory/page-cache"
  echo "speed (compare \`memcpy\`: into a new buffer, page faults included, and into a warm one)."
  echo "\`map\` is \`mapBinary\` (structure validated; with or without the payload checksum)."
  echo
  echo "| operation | format | file (MB) | wall (s) | MB/s (wall) | CPU (s) | MB/s (CPU) |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  tail -n +2 "$1" | awk -F, '{ printf "| %s | %s | %.1f | %.3f | %.0f | %.3f | %.0f |\n", $1, $2, $3/1e6, $4, $5, $6, $7 }'
}

if [[ ${1:-} == --io-only ]]; then
  build/bin/bench_io -o bench/results/io.csv >/dev/null
  doc=$(mktemp)
  trap 'rm -f "$doc"' EXIT
  sed '/^## I\/O throughput$/,$d' docs/performance.md > "$doc"
  { cat "$doc"; io_section bench/results/io.csv; } > docs/performance.md
  echo "updated the I/O section of docs/performance.md and bench/results/io.csv"
  exit 0
fi
csv=bench/results/spmv_spmm.csv
log=$(mktemp)
trap 'rm -f "$log"' EXIT
build/bin/bench_spmv_spmm -o "$csv" 2>"$log"
triad=$(sed -n 's/^triad_GBps=//p' "$log")
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
cc_version=$(${TESSEL_CC:-cc} --version | head -1)
{
  echo "# Performance"
  echo
  echo "Regenerate with \`bash bench/run.sh\` (a few minutes). Single thread; medians of repeated,"
  echo "interleaved runs. Machine: $(nproc) cores, ${cpu}; JIT compiler: ${cc_version},"
  echo "flags \`-O3 -march=native -falign-loops=64 -fopenmp\`. Measured STREAM triad (1 thread): **${triad} GB/s**."
  echo
  echo "## CSR SpMV and SpMM: generated code vs a hand-written C loop"
  echo
  echo "The hand-written loops (in \`bench/bench_spmv_spmm.cpp\`) are compiled by the same JIT with the"
  echo "same compiler and flags. \`compute/hand\` is tessel's generated compute function over the"
  echo "hand-written loop (below 1.10 is the target; below 1 is faster); \`run\` adds output assembly"
  echo "and argument checks. \`GB/s\` counts the minimum traffic (matrix arrays once, x and y once),"
  echo "and \`of triad\` divides it by the STREAM figure above. Matrices from ../shared/data fit in"
  echo "cache, so they can exceed 1.0; \`banded-2M\` is bandwidth-bound, \`uniform-2M\` reads x at"
  echo "random and is bound by memory latency, not bandwidth."
  echo
  echo "| kernel | matrix | rows | nnz | K | compute (ms) | run (ms) | hand (ms) | compute/hand | GB/s | of triad |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$csv" | awk -F, '{ printf "| %s | %s | %d | %d | %d | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |\n", $1, $2, $3, $5, $6, $7*1e3, $8*1e3, $9*1e3, $10, $11, $12 }'
  echo
  echo "## Findings"
  echo
  echo "- SpMV: the generated loop is the hand-written loop (one sorted iterator becomes a plain"
  echo "  \`for\` over positions with a scalar accumulator); remaining differences are noise."
  echo "- Loop alignment matters on this machine: with gcc's default alignment the generated SpMV"
  echo "  inner loop happened to straddle a 64-byte boundary and ran about 25% slower than the"
  echo "  identical hand-written instructions. The JIT therefore compiles with"
  echo "  \`-falign-loops=64\` (the hand-written baseline gets the same flags)."
  echo "- A dense output keeps its buffer between runs (zeroed in the assemble phase); re-allocating"
  echo "  it made the compute phase page-fault on every run (SpMM with 256 MB outputs ran 2.5x slower)."
  echo "- SpMM: the generated loop nest (i, k, j) accumulates straight into the output row and is"
  echo "  faster than the hand-written version, which zeroes each output row first."
  echo "- uniform-2M reads x (16 MB) at random positions: about 30 ns per non-zero, the machine's"
  echo "  memory latency, for both codes. Bandwidth is not the limit there; banded-2M shows the"
  echo "  bandwidth-bound case."
  echo
} > docs/performance.md
build/bin/bench_io -o bench/results/io.csv >/dev/null
io_section bench/results/io.csv >> docs/performance.md
echo "wrote docs/performance.md, $csv and bench/results/io.csv"
