#!/usr/bin/env bash
# Install the Debian packages tessel needs (only the missing ones), then configure and
# build into build/. Safe to run any number of times. With --bench, also the peer
# libraries the benchmarks compare against (Eigen, SuiteSparse:GraphBLAS, PETSc, ScaLAPACK,
# Trilinos Tpetra, CombBLAS).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(cmake ninja-build gcc g++ libgtest-dev libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
          clang lld libclang-rt-14-dev   # clang, lld, the runtime: fuzz targets (fuzz/)
          python3-numpy python3-scipy    # the SciPy oracle test (tests/oracle/), the Python package
          python3-dev pybind11-dev python3-pybind11 python3-pytest  # the Python package (python/) and its tests
          python3-mpi4py                 # tessel with mpi4py (optional for the package; ctest Python.mpi4py)
          doxygen python3-networkx       # the API reference (target docs, ctest Docs.Reference); graph oracle tests
          libopenmpi-dev openmpi-bin libopenblas-dev)  # distributed kernels (MPI) and BLAS leaves
if [[ ${1:-} == --bench ]]; then
  packages+=(libeigen3-dev libgraphblas-dev petsc-dev libscalapack-openmpi-dev
             libtrilinos-tpetra-dev libtrilinos-teuchos-dev libtrilinos-kokkos-dev  # Tpetra (SpMV peer)
             libtrilinos-kokkos-kernels-dev libtrilinos-epetra-dev libcombblas-dev)  # CombBLAS (SpGEMM peer)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
