#!/usr/bin/env bash
# Distributed sparse kernels (issue 29) against PETSc (MPIAIJ), interleaved per rank count,
# input and kernel; one JSON line per run. tessel runs its distributions of CSR pieces
# (rows xy->x, rows by non-zeros xy->~x, fused non-zeros (xy)->~f where the kernel takes
# them); PETSc its own equal-rows layout (bench/peers/peer_petsc_mpi.cpp). SDDMM and the
# 3-tensor kernels have no PETSc peer: their figure is strong scaling. Where built, Tpetra's
# SpMV (bench/peers/peer_tpetra.cpp) follows PETSc's for spmv, and CombBLAS's SpGEMM
# (bench/peers/peer_combblas.cpp) for spgemm at square rank counts (its grid is square).
#   bench/distributed_sparse.sh BUILD_DIR "1 2" [MATRIX.mtx ...]   (default: R-MAT 16 and 18)
#   KERNELS="spmv spmm" bench/distributed_sparse.sh ...             (default: all five)
set -uo pipefail
build=${1:-build}; ranks=${2:-"1 2"}; shift 2 || true
mpi=(mpirun --oversubscribe --bind-to core:overload-allowed -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
inputs=("$@")
[ ${#inputs[@]} = 0 ] && inputs=(--rmat=16 --rmat=18)
kernels=${KERNELS:-"spmv spmm spadd3 spgemm sddmm"}
reps=${REPS:-20}
square() {  # is $1 a perfect square?
  local q=1
  while [ $((q * q)) -lt "$1" ]; do q=$((q + 1)); done
  [ $((q * q)) = "$1" ]
}
dists_of() {
  case $1 in
    spmv|spmm|sddmm) echo "rows nz fused" ;;
    spgemm) echo "rows nz" ;;
    spadd3) echo "rows" ;;
  esac
}
for p in $ranks; do
  for in in "${inputs[@]}"; do
    case "$in" in --rmat=*) src=(--rmat "${in#--rmat=}") ;; *) src=(--matrix "$in") ;; esac
    for k in $kernels; do
      for d in $(dists_of "$k"); do
        timeout 300 "${mpi[@]}" -np "$p" "$build/bin/bench_distributed" --kernel "$k" "${src[@]}" --dist "$d" --reps "$reps"
      done
      if [ "$k" != sddmm ] && [ -x "$build/bin/bench_petsc_sparse" ]; then
        timeout 300 "${mpi[@]}" -np "$p" "$build/bin/bench_petsc_sparse" --kernel "$k" "${src[@]}" --reps "$reps"
      fi
      if [ "$k" = spmv ] && [ -x "$build/bin/bench_tpetra_spmv" ]; then
        timeout 300 "${mpi[@]}" -np "$p" "$build/bin/bench_tpetra_spmv" "${src[@]}" --reps "$reps"
      fi
      if [ "$k" = spgemm ] && [ -x "$build/bin/bench_combblas_spgemm" ] && square "$p"; then
        timeout 300 "${mpi[@]}" -np "$p" "$build/bin/bench_combblas_spgemm" "${src[@]}" --reps "$reps"
      fi
    done
  done
done
