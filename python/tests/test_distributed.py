"""Distributed tensors and kernels from Python at one rank (no launcher, no MPI started):
the same calls that python/tests/mpi_spmv.py makes under mpirun (ctest Python.mpi.npN)."""
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import tessel


def rows_schedule(out, tensors, P=1):
    return "divide(i,io,ii,%d),distribute(io),communicate({%s},io)" % (P, ",".join([out] + tensors))


@pytest.fixture(scope="module")
def machine():
    return tessel.Machine()


def test_machine_and_world(machine):
    assert tessel.world_rank() == 0 and tessel.world_size() == 1
    assert machine.grid == (1,) and machine.size == 1 and machine.threads == 1
    assert tessel.Machine(1).grid == (1,)
    assert tessel.Machine("1", threads=2).threads == 2
    assert tessel.Machine((1, 1)).grid == (1, 1)
    with pytest.raises(tessel.DistributionError, match="ranks"):
        tessel.Machine("2x2")  # 4 ranks, 1 running
    with pytest.raises(tessel.DistributionError):
        tessel.Machine("2y2")


def test_spmv_csr_rows(machine):
    Bs = sp.random(40, 30, density=0.1, format="csr", random_state=3)
    x = np.linspace(0.0, 1.0, 30)
    B = tessel.DistTensor("B", Bs.shape, "xy->x", machine, format="ds").from_scipy_global(Bs)
    c = tessel.DistTensor("c", (30,), "", machine).from_numpy_global(x)
    a = tessel.DistTensor("a", (40,), "x->x", machine)
    assert B.sparse and str(B.format) == "ds" and not a.sparse and a.format is None
    k = tessel.distributed_compile("a(i) = B(i,j) * c(j)", [a, B, c], machine, rows_schedule("a", ["B", "c"]))
    assert "divide(i,io,ii,1)" in k.schedule
    stats = k.run()
    assert set(stats) >= {"seconds", "compute", "comm", "max_bytes_sent", "tensors"}
    assert set(stats["tensors"]) == {"a", "B", "c"}
    assert set(stats["tensors"]["c"]) == {"max_bytes_received", "total_bytes_sent", "formula_bytes", "messages",
                                          "broadcasts", "reductions"}
    y = a.gather()
    assert isinstance(y, np.ndarray) and y.shape == (40,)
    np.testing.assert_allclose(y, Bs @ x, rtol=1e-12, atol=1e-12)
    # run again with new values in c (the same tensors)
    c.from_numpy_global(2 * x)
    k.run()
    np.testing.assert_allclose(a.gather(), Bs @ (2 * x), rtol=1e-12, atol=1e-12)
    assert "a" in k.emit()


def test_spmv_by_nonzeros(machine):
    Bs = sp.random(25, 25, density=0.2, format="csr", random_state=5)
    x = np.arange(25.0)
    for dist, sched in [("xy->~x", rows_schedule("a", ["B", "c"])),
                        ("(xy)->~f", "fuse(i,j,f),pos(f,fp,B),divide(fp,fo,fi,1),distribute(fo),"
                                     "communicate({a,B,c},fo)")]:
        B = tessel.DistTensor("B", Bs.shape, dist, machine, format="ds").from_scipy_global(Bs)
        c = tessel.DistTensor("c", (25,), "", machine).from_numpy_global(x)
        a = tessel.DistTensor("a", (25,), "x->x", machine)
        tessel.distributed_compile("a(i) = B(i,j) * c(j)", [a, B, c], machine, sched).run()
        np.testing.assert_allclose(a.gather(), Bs @ x, rtol=1e-12, err_msg=dist)


def test_dense_gemm(machine):
    A = np.arange(12.0).reshape(4, 3)
    Bm = np.cos(np.arange(15.0)).reshape(3, 5)
    tA = tessel.DistTensor("A", (4, 3), "xy->x", machine).from_numpy_global(A)
    tB = tessel.DistTensor("B", (3, 5), "", machine).from_numpy_global(Bm)
    tC = tessel.DistTensor("C", (4, 5), "xy->x", machine)
    k = tessel.distributed_compile("C(i,j) = A(i,k) * B(k,j)", {"C": tC, "A": tA, "B": tB}, machine)
    assert k.schedule  # owner computes by C's distribution
    k.run()
    np.testing.assert_allclose(tC.gather(), A @ Bm, rtol=1e-12)
    # local(): a view of this rank's piece (the whole tensor at one rank)
    assert tC.piece == ((0, 4), (0, 5))
    view = tC.local()
    np.testing.assert_allclose(view, A @ Bm, rtol=1e-12)
    view[0, 0] = 42.0  # writes go to the tensor
    assert tC.gather()[0, 0] == 42.0
    assert tC.all_pieces() == [((0, 4), (0, 5))]


def test_gather_shapes_and_sparse_output(machine):
    Bs = sp.random(9, 8, density=0.3, format="csr", random_state=1)
    Cs = sp.random(9, 8, density=0.3, format="csr", random_state=2)
    B = tessel.DistTensor("B", Bs.shape, "xy->x", machine, format="ds").from_scipy_global(Bs)
    C = tessel.DistTensor("C", Bs.shape, "xy->x", machine, format="ds").from_scipy_global(Cs)
    A = tessel.DistTensor("A", Bs.shape, "xy->x", machine, format="ds")
    tessel.distributed_compile("A(i,j) = B(i,j) + C(i,j)", [A, B, C], machine,
                               rows_schedule("A", ["B", "C"])).run()
    got = A.gather()
    assert sp.issparse(got) and got.format == "csr" and got.shape == (9, 8)
    np.testing.assert_allclose(got.toarray(), (Bs + Cs).toarray(), rtol=1e-12)
    # the piece of a sparse tensor is a tessel.Tensor in its format
    piece = A.local()
    assert isinstance(piece, tessel.Tensor) and str(piece.format) == "ds"
    np.testing.assert_allclose(piece.to_scipy().toarray(), (Bs + Cs).toarray(), rtol=1e-12)
    coords, values = A.gather_coo()
    assert coords.shape == (got.nnz, 2) and values.shape == (got.nnz,)
    # a sparse 3-tensor gathers as (coords, values); a dense vector as a 1-D array
    T = tessel.DistTensor("T", (3, 4, 2), "xyz->x", machine, format="dss")
    T.set_from_coo([[0, 1, 1], [2, 3, 0], [0, 1, 1]], [1.0, 2.0, 3.0])  # duplicates summed
    tc, tv = T.gather()
    assert tc.tolist() == [[0, 1, 1], [2, 3, 0]] and tv.tolist() == [4.0, 2.0]
    v = tessel.DistTensor("v", (6,), "x->x", machine)
    assert v.gather().shape == (6,) and not v.gather().any()
    s = tessel.DistTensor("s", (3, 3), "xy->x", machine, format="ds").from_numpy_global(np.eye(3))
    assert s.gather().nnz == 3


def test_read_write(machine, tmp_path):
    Bs = sp.random(12, 10, density=0.3, format="csr", random_state=9)
    path = tmp_path / "B.mtx"
    tessel.from_scipy(Bs, name="B").write(path)
    B = tessel.DistTensor("B", Bs.shape, "xy->~x", machine, format="ds").read(path)
    np.testing.assert_allclose(B.gather().toarray(), Bs.toarray(), rtol=1e-12)
    out = tmp_path / "out.mtx"
    B.write(out)
    np.testing.assert_allclose(tessel.read(out).to_scipy().toarray(), Bs.toarray(), rtol=1e-12)
    D = tessel.DistTensor("D", (12, 10), "xy->x", machine).read(path)
    np.testing.assert_allclose(D.gather(), Bs.toarray(), rtol=1e-12)


def test_errors(machine):
    with pytest.raises(tessel.DistributionError):
        tessel.DistTensor("B", (4, 4), "xyz->x", machine)  # order 2, three names
    with pytest.raises(tessel.DistributionError):
        tessel.DistTensor("B", (4, 4), "xy->~x", machine)  # by non-zeros: sparse only
    t = tessel.DistTensor("B", (4, 4), "xy->x", machine)
    with pytest.raises(tessel.DimensionError):
        t.from_numpy_global(np.zeros((3, 4)))
    with pytest.raises(tessel.DimensionError):
        t.set_from_coo([[0, 1, 2]], [1.0])
    with pytest.raises(tessel.DimensionError, match="out of range"):
        t.set_from_coo([[4, 0]], [1.0])  # dense: checked like sparse
    with pytest.raises(TypeError):
        tessel.distributed_compile("B(i,j) = B(i,j)", [np.zeros((4, 4))], machine)
    with pytest.raises(tessel.Error):
        a = tessel.DistTensor("a", (4,), "x->x", machine)
        tessel.distributed_compile("a(i) = B(i,j) * c(j)", [a, t], machine)  # c is missing


def _env():
    env = dict(os.environ)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(tessel.__file__)))
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_no_mpi_needed_without_launcher():
    # a fresh interpreter: importing tessel and using a 1-rank machine does not need MPI or mpi4py
    code = ("import tessel, sys; m = tessel.Machine(); "
            "assert 'mpi4py' not in sys.modules and tessel.world_size() == 1; print('ok')")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_with_mpi4py_at_one_rank():
    pytest.importorskip("mpi4py")
    code = ("from mpi4py import MPI; import tessel; c = MPI.COMM_WORLD; "
            "m = tessel.Machine(c.size); assert (c.rank, c.size) == (tessel.world_rank(), tessel.world_size()); "
            "print('ok')")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
