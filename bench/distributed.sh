#!/usr/bin/env bash
# Distributed kernels vs ScaLAPACK pdgemm, interleaved per rank count (issue 28), one JSON
# line per run on stdout. Every system uses the same OpenBLAS kernel on one thread per rank.
#   bench/distributed.sh BUILD_DIR "1 2 4 8 16" [quick]
# Needs bench_distributed (tessel) and bench_pdgemm (ScaLAPACK; PDGEMM=path overrides).
set -uo pipefail
build=${1:-build}; ranks=${2:-"1 2"}; quick=${3:-}
pd=${PDGEMM:-$build/bin/bench_pdgemm}
mpi=(mpirun --oversubscribe --bind-to core:overload-allowed -x OPENBLAS_NUM_THREADS=1 -x OMP_NUM_THREADS=1)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
# The bundled OpenBLAS (PDGEMM_LIB) serves both systems: the same dgemm kernel.
[ -n "${PDGEMM_LIB:-}" ] && mpi+=(-x LD_LIBRARY_PATH="$PDGEMM_LIB")
pdenv=()
[ -n "${OPENBLAS_CORETYPE:-}" ] && mpi+=(-x OPENBLAS_CORETYPE)
shapes=("4096 4096 4096" "8192 8192 8192" "8192 8192 1024")
[ -n "$quick" ] && shapes=("2048 2048 2048" "2048 2048 512")
for p in $ranks; do
  for s in "${shapes[@]}"; do
    read -r m n k <<<"$s"
    reps=3
    # one rank on 8192^3 takes ~25 s a run: skip it (the 1-rank dgemm rate comes from 4096)
    if [ "$p" -lt 4 ] && [ "$m" -ge 8192 ] && [ "$k" -ge 8192 ]; then continue; fi
    timeout 300 "${mpi[@]}" -np "$p" "$build/bin/bench_distributed" --kernel gemm --m "$m" --n "$n" --k "$k" --reps $reps
    [ -x "$pd" ] && timeout 300 "${mpi[@]}" "${pdenv[@]}" -np "$p" "$pd" --m "$m" --n "$n" --k "$k" --reps $reps
  done
done
