#!/usr/bin/env bash
# Distributed SpMV (issue 29) against PETSc MatMult (MPIAIJ), interleaved per rank count and
# input; one JSON line per run. tessel runs rows (xy->x), rows by non-zeros (xy->~x) and
# fused non-zeros ((xy)->~f) pieces of CSR; PETSc its own equal-rows layout.
#   bench/distributed_sparse.sh BUILD_DIR "1 2" [MATRIX.mtx ...]   (default: R-MAT 16 and 18)
set -uo pipefail
build=${1:-build}; ranks=${2:-"1 2"}; shift 2 || true
mpi=(mpirun --oversubscribe --bind-to core:overload-allowed -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
inputs=("$@")
[ ${#inputs[@]} = 0 ] && inputs=(--rmat=16 --rmat=18)
for p in $ranks; do
  for in in "${inputs[@]}"; do
    case "$in" in --rmat=*) src=(--rmat "${in#--rmat=}") ;; *) src=(--matrix "$in") ;; esac
    for d in rows nz fused; do
      timeout 300 "${mpi[@]}" -np "$p" "$build/bin/bench_distributed" --kernel spmv "${src[@]}" --dist $d --reps 20
    done
    [ -x "$build/bin/bench_petsc_spmv" ] && timeout 300 "${mpi[@]}" -np "$p" "$build/bin/bench_petsc_spmv" "${src[@]}" --reps 20
  done
done
