"""Distributed kernels from Python under mpirun (ctest Python.mpi.npN, label mpi;python):

    mpirun -np 3 /usr/bin/python3 python/tests/mpi_spmv.py

Every rank builds the same global inputs (seeded), places them (from_scipy_global /
from_numpy_global), runs SpMV by rows (xy->x), SpMV by fused non-zeros ((xy)->~f), SpMM
by rows, SpAdd with a sparse (CSR) output and a dense GEMM on a 2-D grid where the ranks
make one, then reads and writes a .mtx in parallel. Rank 0 checks every gathered result
against NumPy/SciPy; the verdict is reduced over the ranks so that every rank exits 1 on
a mismatch (and 0 otherwise). Not collected by pytest (no test_ prefix).

With --mpi4py, mpi4py initializes MPI first (tessel must not initialize nor finalize it
again), its communicator's rank and size must be tessel's, and the verdict is reduced by
mpi4py (ctest Python.mpi4py.npN where python3-mpi4py is installed).
"""
import os
import sys
import tempfile

import numpy as np
import scipy.sparse as sp

if "--mpi4py" in sys.argv[1:]:
    from mpi4py import MPI  # before tessel: MPI is mpi4py's to start and to end
else:
    MPI = None

_here = os.path.dirname(os.path.abspath(__file__))
try:
    import tessel
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(_here)), "build", "python"))
    import tessel
from tessel import _tessel


def check(name, got, want, failures):
    if hasattr(got, "toarray"):
        got = got.toarray()
    if hasattr(want, "toarray"):
        want = want.toarray()
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-10, atol=1e-10):
        diff = np.abs(got - want).max() if got.shape == want.shape else "shape %r vs %r" % (got.shape, want.shape)
        failures.append("%s: mismatch (%s)" % (name, diff))


def main():
    m = tessel.Machine()
    P, me = m.size, tessel.world_rank()
    failures = []
    if MPI is not None:
        comm = MPI.COMM_WORLD
        if (comm.Get_rank(), comm.Get_size()) != (me, P):
            failures.append("mpi4py says rank %d of %d" % (comm.Get_rank(), comm.Get_size()))
        if tessel.distributed._mpi_state["owner"]:
            failures.append("tessel took over finalizing the MPI that mpi4py started")
    rows, cols = 61, 47
    Bs = sp.random(rows, cols, density=0.08, format="csr", random_state=7)
    Bs = Bs.tolil()
    Bs[rows // 3, :] = 1.5  # one heavy row: the by-non-zeros pieces split it
    Bs = Bs.tocsr()
    x = np.linspace(-1.0, 1.0, cols)

    rows_schedule = "divide(i,io,ii,%d),distribute(io),communicate({a,B,c},io)" % P
    B = tessel.DistTensor("B", Bs.shape, "xy->x", m, format="ds").from_scipy_global(Bs)
    c = tessel.DistTensor("c", (cols,), "", m).from_numpy_global(x)
    a = tessel.DistTensor("a", (rows,), "x->x", m)
    stats = tessel.distributed_compile("a(i) = B(i,j) * c(j)", [a, B, c], m, rows_schedule).run()
    got = a.gather()
    if me == 0:
        check("spmv rows", got, Bs @ x, failures)
        if set(stats["tensors"]) != {"a", "B", "c"}:
            failures.append("stats name %r" % sorted(stats["tensors"]))

    Bf = tessel.DistTensor("B", Bs.shape, "(xy)->~f", m, format="ds").from_scipy_global(Bs)
    af = tessel.DistTensor("a", (rows,), "x->x", m)
    k = tessel.distributed_compile(
        "a(i) = B(i,j) * c(j)", [af, Bf, c], m,
        "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi,%d),distribute(fo),communicate({a,B,c},fo)" % P)
    k.run()
    got = af.gather()
    if me == 0:
        check("spmv fused non-zeros", got, Bs @ x, failures)
    # every rank holds about nnz/P entries (a piece each)
    local = Bf.local()
    held = 0 if local is None else local.nnz
    if _tessel.max_over_ranks(held) > Bs.nnz // P + 2:
        failures.append("(xy)->~f: a piece holds %d of %d entries" % (held, Bs.nnz))

    # SpMM by rows, the dense operand replicated
    K = 4
    Xd = np.arange(cols * K, dtype=float).reshape(cols, K) / 10.0
    A = tessel.DistTensor("A", (rows, K), "xy->x", m)
    C = tessel.DistTensor("C", (cols, K), "", m).from_numpy_global(Xd)
    tessel.distributed_compile("A(i,k) = B(i,j) * C(j,k)", [A, B, C], m,
                               "divide(i,io,ii,%d),distribute(io),communicate({A,B,C},io)" % P).run()
    got = A.gather()
    if me == 0:
        check("spmm rows", got, Bs @ Xd, failures)

    # SpAdd with a sparse output: every tensor's rows in blocks, CSR pieces
    Cs = sp.random(rows, cols, density=0.05, format="csr", random_state=11)
    Bb = tessel.DistTensor("B", Bs.shape, "xy->x", m, format="ds").from_scipy_global(Bs)
    Cb = tessel.DistTensor("C", Bs.shape, "xy->x", m, format="ds").from_scipy_global(Cs)
    Ab = tessel.DistTensor("A", Bs.shape, "xy->x", m, format="ds")
    tessel.distributed_compile("A(i,j) = B(i,j) + C(i,j)", [Ab, Bb, Cb], m,
                               "divide(i,io,ii,%d),distribute(io),communicate({A,B,C},io)" % P).run()
    got = Ab.gather()
    if me == 0:
        if not sp.issparse(got):
            failures.append("spadd: gather gave %s, not a scipy matrix" % type(got).__name__)
        else:
            check("spadd (sparse output)", got, Bs + Cs, failures)
            if got.nnz != (Bs + Cs).nnz:
                failures.append("spadd: %d stored entries, scipy has %d" % (got.nnz, (Bs + Cs).nnz))

    # dense GEMM owner-computes on a 2-D grid when P factors as 2 x P/2, else rows
    grid = (2, P // 2) if P % 2 == 0 and P > 1 else (P,)
    g = tessel.Machine(grid)
    dist = "xy->xy" if len(grid) == 2 else "xy->x"
    n1, n2, n3 = 9, 7, 5
    Ad = np.arange(n1 * n3, dtype=float).reshape(n1, n3) - 3.0
    Bd = np.cos(np.arange(n3 * n2, dtype=float)).reshape(n3, n2)
    GA = tessel.DistTensor("A", (n1, n3), dist, g).from_numpy_global(Ad)
    GB = tessel.DistTensor("B", (n3, n2), dist, g).from_numpy_global(Bd)
    GC = tessel.DistTensor("C", (n1, n2), dist, g)
    tessel.distributed_compile("C(i,j) = A(i,k) * B(k,j)", [GC, GA, GB], g).run()
    got = GC.gather()
    if me == 0:
        check("gemm on %r" % (grid,), got, Ad @ Bd, failures)
    else:
        if got is not None:
            failures.append("rank %d: gather returned %r, not None" % (me, type(got)))
    # local(): this rank's block of C, a view in global coordinates
    view = GC.local()
    if GC.piece is not None and view is not None:
        (r0, r1), (c0, c1) = GC.piece
        if view.shape != (r1 - r0, c1 - c0) or not np.allclose(view, (Ad @ Bd)[r0:r1, c0:c1]):
            failures.append("rank %d: local() of C is not its block" % me)

    # parallel read and write of a .mtx: rank 0 writes the file, every rank reads its part
    d = tempfile.mkdtemp(prefix="tessel-mpi-") if me == 0 else None
    path = os.path.join(d, "B.mtx") if me == 0 else None
    # every rank needs the same path: share it through the ranks' common file system
    # (the directory name goes over MPI as digits, one reduction per character)
    path = _share_text(path, me)
    if me == 0:
        tessel.from_scipy(Bs, name="B").write(path)
    _barrier()
    Br = tessel.DistTensor("B", Bs.shape, "xy->~x", m, format="ds").read(path)
    out = path[:-4] + "_out.mtx"
    Br.write(out)
    got = Br.gather()
    if me == 0:
        check("read xy->~x", got, Bs, failures)
        check("write", tessel.read(out).to_scipy(), Bs, failures)
        for f in (path, out):
            os.remove(f)
        os.rmdir(os.path.dirname(path))

    for f in failures:
        print("mpi_spmv (rank %d of %d): %s" % (me, P, f), file=sys.stderr)
    if MPI is not None:
        bad = MPI.COMM_WORLD.allreduce(1 if failures else 0, op=MPI.MAX)
    else:
        bad = _tessel.max_over_ranks(1 if failures else 0)
    if me == 0:
        print("mpi_spmv%s: %s on %d ranks" % (" (mpi4py)" if MPI is not None else "", "FAILED" if bad else "OK", P))
    return 1 if bad else 0


def _share_text(text, me):
    """Rank 0's text on every rank (collective), by sum reductions of its bytes."""
    data = (text or "").encode() if me == 0 else b""
    n = _tessel.sum_over_ranks(len(data))
    out = bytearray()
    for k in range(n):
        out.append(_tessel.sum_over_ranks(data[k] if me == 0 else 0))
    return out.decode()


def _barrier():
    _tessel.sum_over_ranks(0)


if __name__ == "__main__":
    sys.exit(main())
