#!/usr/bin/env python3
"""An oracle tessel did not write: masked products from `tessel run --mask` against SciPy.

On real graphs from ../shared/data (karate, ca-GrQc, jazz; symmetrized, no self-loops)
with L their strictly lower triangle: C<L> = L*L (triangle counting's kernel: its sum
is the triangle count), C<!L> = L*L (the complement), C<L,valued> with a mask holding
explicit zeros, and a masked SpMV frontier y<!v>(j) = x(i)*A(i,j) -- each in the pull
and push forms, on 1 and 2 threads -- compared entry by entry with the same computation
in SciPy.

usage: mask_oracle.py TESSEL_TOOL DATA_DIR
Prints "N passed, M failed"; exits 1 on any failure, 77 (skipped) without SciPy or data.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
except ImportError as e:  # the Debian packages python3-numpy / python3-scipy
    print(f"skipped: {e}")
    sys.exit(77)

TOOL, DATA = sys.argv[1], sys.argv[2]
GRAPHS = {"karate.mtx": 45, "ca-GrQc.mtx": 48260, "jazz.mtx": None}
passed, failed = 0, 0


def tessel(args, cwd):
    r = subprocess.run([TOOL, "run"] + args, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tessel run {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")


def read_entries(path, shape):
    """A .tns (1-based, '#' comments) as a dict of 0-based coordinates."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split()
            out[tuple(int(c) - 1 for c in parts[:-1])] = float(parts[-1])
    return out


def as_entries(m):
    m = sp.coo_matrix(m)
    return {(int(i), int(j)): float(v) for i, j, v in zip(m.row, m.col, m.data) if v != 0}


def check(name, got, want):
    global passed, failed
    got = {k: v for k, v in got.items() if v != 0}  # .tns omits zeros under plus_times
    if got == want:
        passed += 1
    else:
        failed += 1
        diff = sorted(set(got.items()) ^ set(want.items()))[:5]
        print(f"FAIL {name}: {len(got)} entries, want {len(want)}; first differences {diff}")


def lower_triangle(path):
    a = scipy.io.mmread(path).tocsr()
    a = ((a + a.T) != 0).astype(float)
    a = (a - sp.diags(a.diagonal())).tocsr()  # no self-loops
    a.eliminate_zeros()
    return sp.tril(a, -1).tocsr()


def main():
    if not os.path.isdir(os.path.join(DATA, "matrices")):
        print("skipped: no shared data")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="tessel-mask-oracle-") as d:
        for graph, triangles in GRAPHS.items():
            src = os.path.join(DATA, "matrices", graph)
            if not os.path.exists(src):
                continue
            L = lower_triangle(src)
            n = L.shape[0]
            lpath = os.path.join(d, "L.mtx")
            scipy.io.mmwrite(lpath, L)
            LL = L @ L
            want = as_entries(LL.multiply(L))
            if triangles is not None and sum(want.values()) != triangles:
                print(f"FAIL {graph}: SciPy counts {sum(want.values())} triangles, the known count is {triangles}")
                globals()["failed"] += 1
            # The complement: L*L where L has no entry.
            comp = as_entries(LL - LL.multiply(L))
            # A valued mask: L with every third entry an explicit zero.
            V = L.copy().tocoo()
            V.data = np.where(np.arange(V.nnz) % 3 == 0, 0.0, 1.0)
            vpath = os.path.join(d, "V.mtx")
            scipy.io.mmwrite(vpath, V)
            Vnz = sp.csr_matrix((V.data, (V.row, V.col)), shape=L.shape)
            Vnz.eliminate_zeros()
            valued = as_entries(LL.multiply(Vnz != 0))
            out = os.path.join(d, "C.tns")
            for form in ("pull", "push"):
                for threads in ("1", "2"):
                    base = ["C(i,j) = L(i,k) * L(k,j)", "-i", f"L:{lpath}", "-f", "C:ds", "-o", f"C:{out}",
                            "--mask-form", form, "--threads", threads]
                    label = f"{graph} {form} {threads} threads"
                    tessel(base + ["--mask", "L"], d)
                    check(f"C<L> = L*L on {label}", read_entries(out, L.shape), want)
                    tessel(base + ["--mask", vpath, "--mask-values"], d)
                    check(f"C<V,valued> = L*L on {label}", read_entries(out, L.shape), valued)
                    if n <= 2000:  # the complement's result is dense-ish: the smaller graphs
                        tessel(base + ["--mask", "L", "--complement"], d)
                        check(f"C<!L> = L*L on {label}", read_entries(out, L.shape), comp)
            # A BFS frontier step: y<!visited>(j) = x(i) * A(i,j) (plus_times on 0/1 data
            # counts the frontier's edges into each unvisited vertex).
            A = (L + L.T).tocsr()
            rng = np.random.default_rng(7)
            x = (rng.random(n) < 0.05).astype(float)
            visited = np.maximum(x, (rng.random(n) < 0.3).astype(float))
            apath, xpath, vispath = (os.path.join(d, f) for f in ("A.mtx", "x.tns", "v.tns"))
            scipy.io.mmwrite(apath, A)
            for path, vec in ((xpath, x), (vispath, visited)):
                with open(path, "w") as f:
                    f.write(f"# tessel dims: {n}\n")
                    for i in np.nonzero(vec)[0]:
                        f.write(f"{i + 1} 1\n")
            y = A.T @ x
            want_y = {(int(j),): float(y[j]) for j in range(n) if y[j] != 0 and not visited[j]}
            for form in ("pull", "push"):
                for threads in ("1", "2"):
                    tessel(["y(j) = x(i) * A(i,j)", "-i", f"A:{apath}", "-i", f"x:{xpath}", "-f", "x:s", "-f", "y:s",
                            "--mask", vispath, "--mask-format", "s", "--complement", "--mask-form", form,
                            "--threads", threads, "-o", f"y:{os.path.join(d, 'y.tns')}"], d)
                    check(f"y<!visited> = x*A on {graph} {form} {threads} threads",
                          read_entries(os.path.join(d, "y.tns"), (n,)), want_y)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
