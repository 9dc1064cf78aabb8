#!/usr/bin/env python3
"""What Python costs around a kernel (issue 32's "must be fast"): a scipy.sparse CSR matrix
of NNZ entries and ROWS rows passed into SpMV and a NumPy result back, against the kernel's
own compute time, medians over REPS runs.

  PYTHONPATH=build/python /usr/bin/python3 bench/python/overhead.py [--rows 2000000] [--nnz 100000000]

Each call's overhead is its time seen from Python minus the kernel's own time in that same
call (assembly + compute, as the kernel measures them), so noise in the kernel's time does
not count as overhead. Medians over REPS calls of:
  run         Kernel.run() + to_numpy(copy=False): the compile-once path;
  evaluate    from_scipy(B) + from_numpy(x) + compile (an in-memory JIT-cache hit, and a
              fresh output array) + run + to_numpy(copy=False): what tessel.evaluate does;
  from_scipy  the binding alone: the first call checks the matrix (SciPy's canonical-format
              check, O(nnz), which SciPy caches, and tessel's O(rows) range check,
              remembered on the matrix); later calls with the same arrays;
  scipy       SciPy's own B @ x, for scale.
It also checks that the tensor reads the matrix's own arrays (no copy) and that the result
equals SciPy's B @ x. Prints one line per phase and a JSON summary.
"""
import argparse
import json
import os
import platform
import statistics
import time

import numpy as np
import scipy.sparse as sp

import tessel


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def banded_csr(rows, nnz):
    """rows x rows CSR with nnz // rows sorted, distinct columns per row (no SciPy work:
    built from the three arrays directly)."""
    k = max(1, nnz // rows)
    spacing = max(1, (rows - 1) // (2 * k))
    offsets = np.arange(k, dtype=np.int64) * spacing
    shift = np.arange(rows, dtype=np.int64) % max(1, rows - int(offsets[-1]))
    indices = (shift[:, None] + offsets[None, :]).reshape(-1).astype(np.int32)
    indptr = np.arange(0, rows * k + 1, k, dtype=np.int64 if rows * k >= 2**31 else np.int32)
    data = np.random.default_rng(1).random(rows * k)
    return sp.csr_matrix((data, indices, indptr), shape=(rows, rows), copy=False)


def median_seconds(f, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--nnz", type=int, default=100_000_000)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    B = banded_csr(args.rows, args.nnz)
    x = np.random.default_rng(2).random(args.rows)
    text = "y(i) = B(i,j) * c(j)"

    t0 = time.perf_counter()
    bound = tessel.from_scipy(B, name="B")
    first_bind = time.perf_counter() - t0
    zero_copy = (bound.borrowed and
                 bound._t.array("vals").__array_interface__["data"][0] == B.data.__array_interface__["data"][0] and
                 bound._t.array("crd", 1).__array_interface__["data"][0] == B.indices.__array_interface__["data"][0])
    later_bind = median_seconds(lambda: tessel.from_scipy(B, name="B"), args.reps)

    k = tessel.compile(text, B=B, c=x, threads=args.threads)
    k.run(args.threads)
    kernel, run, evaluate = [], [], []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        assemble, compute = k._k.run(args.threads)
        k.output.to_numpy(copy=False)
        t1 = time.perf_counter()
        kernel.append(assemble + compute)
        run.append((t1 - t0 - assemble - compute) / (assemble + compute))
        t0 = time.perf_counter()
        e = tessel.compile(text, B=tessel.from_scipy(B, name="B"), c=tessel.from_numpy(x, name="c"),
                           threads=args.threads)
        assemble, compute = e._k.run(args.threads)
        e.output.to_numpy(copy=False)
        t1 = time.perf_counter()
        evaluate.append((t1 - t0 - assemble - compute) / (assemble + compute))
    kernel, run, evaluate = statistics.median(kernel), statistics.median(run), statistics.median(evaluate)
    scipy = median_seconds(lambda: B @ x, args.reps)
    y = tessel.evaluate(text, B=B, c=x, threads=args.threads).to_numpy()
    right = bool(np.allclose(y, B @ x, rtol=1e-12, atol=0))

    print("cpu: %s; %d x %d CSR, %d entries (%.0f MB of arrays), %d thread(s)" % (
        cpu_model(), args.rows, args.rows, B.nnz, (B.data.nbytes + B.indices.nbytes + B.indptr.nbytes) / 1e6,
        args.threads))
    print("kernel      %8.2f ms" % (kernel * 1e3))
    print("run         overhead %6.2f%% of the kernel   (Kernel.run + to_numpy view)" % (100 * run))
    print("evaluate    overhead %6.2f%% of the kernel   (bind SciPy/NumPy, JIT cache, fresh output, run, view)" % (
        100 * evaluate))
    print("from_scipy  %8.2f ms first call (checks the matrix once), %.3f ms later" % (
        first_bind * 1e3, later_bind * 1e3))
    print("scipy       %8.2f ms   (B @ x, for scale)" % (scipy * 1e3))
    print("zero copy: %s; result equals SciPy's B @ x: %s" % (zero_copy, right))
    print(json.dumps({"cpu": cpu_model(), "rows": args.rows, "nnz": int(B.nnz), "threads": args.threads,
                      "kernel_s": kernel, "run_overhead_pct": 100 * run, "evaluate_overhead_pct": 100 * evaluate,
                      "from_scipy_first_s": first_bind, "from_scipy_later_s": later_bind, "scipy_s": scipy,
                      "zero_copy": zero_copy, "correct": right}))
    return 0 if zero_copy and right else 1


if __name__ == "__main__":
    raise SystemExit(main())
