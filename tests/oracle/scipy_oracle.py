#!/usr/bin/env python3
"""An oracle tessel did not write: the tool's results against NumPy/SciPy.

Runs `tessel run` on real matrices from ../shared/data (when present) and on generated
ones, for expressions whose reductions are easy to get wrong (a sum added to a term
without it, a residual, an explicit sum, a sparse product plus a matrix), on 1 and 2
threads, and compares every result with the same computation in SciPy.

usage: scipy_oracle.py TESSEL_TOOL DATA_DIR
Prints "N passed, M failed"; exits 1 on any failure, 77 (skipped) without SciPy.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.io
    import scipy.sparse
except ImportError as e:  # the Debian packages python3-numpy / python3-scipy
    print(f"skipped: {e}")
    sys.exit(77)

TOOL, DATA = sys.argv[1], sys.argv[2]
# Real matrices (square ones for the products), if the shared data is there.
REAL = ["bcsstk01.mtx", "west0067.mtx", "impcol_a.mtx", "jazz.mtx", "cryg2500.mtx", "lp_ship04l.mtx"]
passed, failed = 0, 0


def write_vector(path, v):
    with open(path, "w") as f:
        for i, x in enumerate(v):
            f.write(f"{i + 1} {x!r}\n")


def read_vector(path, n):
    v = np.zeros(n)
    with open(path) as f:
        for line in f:
            if line.startswith("#"):  # FROSTT comments (tessel's dims comment)
                continue
            i, x = line.split()
            v[int(i) - 1] = float(x)
    return v


def tessel(args, cwd):
    r = subprocess.run([TOOL, "run"] + args, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tessel run {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def check(name, got, want):
    global passed, failed
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    if got.shape == want.shape and np.allclose(got, want, rtol=1e-9, atol=1e-9 * scale):
        passed += 1
    else:
        failed += 1
        diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else "shape"
        print(f"FAIL {name}: max difference {diff}")


def run_matrix(label, mtx, d):
    A = scipy.sparse.csr_matrix(scipy.io.mmread(mtx))
    m, n = A.shape
    rng = np.random.default_rng(m * 7919 + n)
    x, b, z = rng.uniform(-1, 1, n), rng.uniform(-1, 1, m), rng.uniform(-1, 1, m)
    for f, v in (("x", x), ("b", b), ("z", z)):
        write_vector(os.path.join(d, f + ".tns"), v)
    ins = ["-f", "A:ds", "-i", f"A:{mtx}", "-i", "x:x.tns", "-i", "b:b.tns", "-i", "z:z.tns"]
    cases = [
        ("r(i) = b(i) - A(i,j) * x(j)", b - A @ x),
        ("r(i) = A(i,j) * x(j) + 2 * z(i)", A @ x + 2 * z),
        ("r(i) = -(A(i,j) * x(j)) + b(i) - z(i)", b - z - A @ x),
        ("r(i) = sum(j, A(i,j) * x(j) + b(i))", A @ x + n * b),
        ("r(i) = A(i,j) * x(j) + A(i,k) * (x(k) * 3)", 4 * (A @ x)),
    ]
    for threads in ("1", "2"):
        for expr, want in cases:
            used = []
            for k in range(0, len(ins), 2):
                name = ins[k + 1].split(":")[0]
                if ins[k] == "-f" or name + "(" in expr:
                    used += ins[k:k + 2]
            tessel([expr] + used + ["-o", "r:r.tns", "--threads", threads], d)
            check(f"{label} {expr} ({threads} threads)", read_vector(os.path.join(d, "r.tns"), m), want)
        # A scalar: x.x + 1, printed on stdout.
        out = tessel(["s = x(i) * x(i) + 1", "-i", "x:x.tns", "--threads", threads], d)
        check(f"{label} s = x.x + 1 ({threads} threads)", float(out.split()[-1]), x @ x + 1)
        if m == n and A.nnz <= 20000:
            tessel(["C(i,j) = A(i,k) * A(k,j) + A(i,j)", "-f", "A:ds", "-f", "C:ds", "-i", f"A:{mtx}",
                    "-o", "C:C.mtx", "--threads", threads], d)
            C = scipy.sparse.csr_matrix(scipy.io.mmread(os.path.join(d, "C.mtx")), shape=(m, n))
            check(f"{label} C = A*A + A ({threads} threads)", C.toarray(), (A @ A + A).toarray())


def main():
    with tempfile.TemporaryDirectory(prefix="tessel-oracle-") as d:
        for kind, args in (("uniform", "300,200,6"), ("rmat", "9,8"), ("uniform", "1,1,1")):
            g = os.path.join(d, f"gen-{kind}.mtx")
            subprocess.run([TOOL, "generate", kind, args, "-o", g, "--seed", "3"], check=True)
            run_matrix(f"generated {kind} {args}", g, d)
        real = [f for f in REAL if os.path.exists(os.path.join(DATA, "matrices", f))]
        if not real:
            print(f"note: no matrices under {DATA}/matrices; the real-data cases are skipped")
        for f in real:
            run_matrix(f, os.path.join(DATA, "matrices", f), d)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
