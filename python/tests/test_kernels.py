# Kernels from Python against NumPy/SciPy: SpMV, SpMM, SDDMM, element-wise add, in the
# notation API and the text form; schedules and threads; timing and emitted code.
import os

import numpy as np
import pytest
import scipy.sparse as sp

import tessel

RTOL = 1e-10


def rand_csr(m, n, density, seed):
    return sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float64)


def test_spmv_notation():
    Bs = rand_csr(60, 45, 0.1, 1)
    c = np.random.default_rng(2).random(45)
    B = tessel.from_scipy(Bs, name="B")
    cv = tessel.from_numpy(c, name="c")
    a = tessel.Tensor("a", (60,))
    i, j = tessel.index_vars("i j")
    a[i] = B[i, j] * cv[j]
    assert a.assignment == "a(i) = B(i,j) * c(j)"
    assert a.evaluate() is a
    np.testing.assert_allclose(a.to_numpy(), Bs @ c, rtol=RTOL)


def test_spmv_text_form_creates_output():
    Bs = rand_csr(50, 40, 0.2, 3)
    c = np.random.default_rng(4).random(40)
    a = tessel.evaluate("a(i) = B(i,j) * c(j)", B=Bs, c=c)
    assert isinstance(a, tessel.Tensor) and a.shape == (50,) and a.format.is_dense
    np.testing.assert_allclose(a.to_numpy(), Bs @ c, rtol=RTOL)


def test_spmm_csr_times_dense():
    Bs = rand_csr(30, 40, 0.15, 5)
    C = np.random.default_rng(6).random((40, 7))
    A = tessel.evaluate("A(i,k) = B(i,j) * C(j,k)", B=Bs, C=C)
    np.testing.assert_allclose(A.to_numpy(), Bs @ C, rtol=RTOL)


def test_sddmm():
    Bs = rand_csr(25, 20, 0.2, 7)
    rng = np.random.default_rng(8)
    C, D = rng.random((25, 6)), rng.random((6, 20))
    B = tessel.from_scipy(Bs, name="B")
    A = tessel.Tensor("A", (25, 20), format="ds")
    i, j, k = tessel.index_vars("i j k")
    A[i, j] = B[i, j] * tessel.from_numpy(C, name="C")[i, k] * tessel.from_numpy(D, name="D")[k, j]
    A.evaluate()
    expect = Bs.multiply(C @ D).toarray()
    np.testing.assert_allclose(A.to_numpy(), expect, rtol=RTOL)
    assert A.nnz == Bs.nnz
    np.testing.assert_allclose(A.to_scipy("csr").toarray(), expect, rtol=RTOL)


def test_elementwise_add_sparse_output():
    Bs, Cs = rand_csr(20, 30, 0.1, 9), rand_csr(20, 30, 0.1, 10)
    A = tessel.evaluate("A(i,j) = B(i,j) + C(i,j)", B=Bs, C=Cs, format="ds")
    assert A.format.levels == "ds"
    np.testing.assert_allclose(A.to_scipy().toarray(), (Bs + Cs).toarray(), rtol=RTOL)


def test_expression_operators_and_scalars():
    rng = np.random.default_rng(11)
    b, c = rng.random(12), rng.random(12)
    B, C = tessel.from_numpy(b, name="b"), tessel.from_numpy(c, name="c")
    a = tessel.Tensor("a", (12,))
    i = tessel.index_vars("i")
    a[i] = 2.0 * B[i] - C[i] / 4 + 1 - (-B[i])
    a.evaluate()
    np.testing.assert_allclose(a.to_numpy(), 2 * b - c / 4 + 1 + b, rtol=RTOL)


def test_accumulate():
    rng = np.random.default_rng(12)
    b = rng.random(10)
    a = tessel.from_numpy(np.ones(10), name="a", copy=True)
    B = tessel.from_numpy(b, name="b")
    i = tessel.index_vars("i")
    a[i] += B[i]
    assert "+=" in a.assignment
    a.evaluate()
    np.testing.assert_allclose(a.to_numpy(), 1 + b, rtol=RTOL)


def test_explicit_sum_and_scalar_output():
    rng = np.random.default_rng(13)
    b, c = rng.random(9), rng.random(9)
    s = tessel.Tensor("s", ())
    i = tessel.index_vars("i")
    s[()] = tessel.sum(i, tessel.from_numpy(b, name="b")[i] * tessel.from_numpy(c, name="c")[i])
    s.evaluate()
    assert s.at() == pytest.approx(b @ c, rel=RTOL)


def test_schedules_and_threads_agree():
    Bs = rand_csr(300, 200, 0.05, 14)
    c = np.random.default_rng(15).random(200)
    expect = Bs @ c
    plain = tessel.evaluate("a(i) = B(i,j) * c(j)", B=Bs, c=c)
    two = tessel.evaluate("a(i) = B(i,j) * c(j)", B=Bs, c=c, threads=2)
    text = tessel.evaluate("a(i) = B(i,j) * c(j)", B=Bs, c=c, threads=2,
                           schedule="split(i,i0,i1,16),parallelize(i0,cpu_thread,no_races)")
    for r in (plain, two, text):
        np.testing.assert_allclose(r.to_numpy(), expect, rtol=RTOL)
    # a Schedule object over the assignment's own index variables
    B = tessel.from_scipy(Bs, name="B")
    cv = tessel.from_numpy(c, name="c")
    a = tessel.Tensor("a", (300,))
    i, j, i0, i1 = tessel.index_vars("i j i0 i1")
    a[i] = B[i, j] * cv[j]
    s = tessel.Schedule().split(i, i0, i1, 32).parallelize(i0, "no_races")
    assert str(s) == "split(i,i0,i1,32),parallelize(i0,cpu_thread,no_races)"
    a.evaluate(schedule=s, threads=2)
    np.testing.assert_allclose(a.to_numpy(), expect, rtol=RTOL)


def test_compile_run_time_and_emit():
    Bs = rand_csr(100, 100, 0.05, 16)
    c = np.random.default_rng(17).random(100)
    k = tessel.compile("a(i) = B(i,j) * c(j)", B=Bs, c=c)
    assert "B_vals" in k.source and "c_vals" in k.source and "a_vals" in k.source
    out = k.run()
    np.testing.assert_allclose(out.to_numpy(), Bs @ c, rtol=RTOL)
    t = k.time(reps=3)
    assert isinstance(t, float) and t >= 0
    B = tessel.from_scipy(Bs, name="B")
    a = tessel.Tensor("a", (100,))
    i, j = tessel.index_vars("i j")
    a[i] = B[i, j] * tessel.from_numpy(c, name="c")[j]
    code = a.emit()
    assert isinstance(code, str) and len(code) > 100
    assert a.emit(schedule="split(i,i0,i1,8)") != code


def test_automatic_fusion_says_why():
    # Graph attention with one feature matrix: scores on B's edges, then aggregation of
    # the same rows of H. Without a schedule tessel fuses at j (the producer's and the
    # consumer's H rows are one gather) and the kernel says why; a given schedule has no
    # reason. Checked against NumPy/SciPy.
    Bs = rand_csr(120, 120, 0.08, 40)
    rng = np.random.default_rng(41)
    C, H = rng.random((120, 16)), rng.random((120, 16))
    expect = Bs.multiply(C @ H.T) @ H
    text = "A(i,l) = B(i,j) * C(i,k) * H(j,k) * H(j,l)"
    k = tessel.compile(text, B=Bs, C=C, H=H)
    assert "loopfuse(j)" in k.schedule, k.schedule
    assert k.reason.startswith("fused at j (loopfuse): the cost model's estimate is "), k.reason
    np.testing.assert_allclose(k.run().to_numpy(), expect, rtol=RTOL)
    # Asked for 2 threads, the choice keeps this small kernel on one, and runs it there.
    two = tessel.compile(text, B=Bs, C=C, H=H, threads=2)
    assert two.reason.endswith("; one thread (too little work to share)") and two.threads == 1, two.reason
    np.testing.assert_allclose(two.run().to_numpy(), expect, rtol=RTOL)
    given = tessel.compile(text, B=Bs, C=C, H=H, schedule="loopfuse(i)", threads=2)
    assert given.schedule == "loopfuse(i)" and given.reason == "" and given.threads == 2
    np.testing.assert_allclose(given.run().to_numpy(), expect, rtol=RTOL)


def test_kernel_rereads_inputs():
    c = np.arange(5, dtype=np.float64)
    ct = tessel.from_numpy(c, name="c")
    a = tessel.Tensor("a", (5,))
    i = tessel.index_vars("i")
    a[i] = 2 * ct[i]
    k = a.compile()
    k.run()
    np.testing.assert_array_equal(a.to_numpy(), 2 * c)
    c[:] = 10  # zero-copy: the next run reads the array's new values
    k.run()
    np.testing.assert_array_equal(a.to_numpy(), np.full(5, 20.0))


def test_semiring_min_plus():
    Bs = rand_csr(20, 20, 0.2, 18)
    x = np.random.default_rng(19).random(20)
    y = tessel.evaluate("y(i) = B(i,j) * x(j)", B=Bs, x=x, semiring="min_plus")
    dense = Bs.tocoo()
    expect = np.full(20, np.inf)
    for r, c, v in zip(dense.row, dense.col, dense.data):
        expect[r] = min(expect[r], v + x[c])
    got = y.to_numpy()
    assert np.allclose(got[np.isfinite(expect)], expect[np.isfinite(expect)])


def test_real_matrix_spmv(matrices_dir):
    path = os.path.join(matrices_dir, "bcsstk01.mtx")
    if not os.path.exists(path):
        pytest.skip("bcsstk01.mtx missing")
    import scipy.io
    ref = scipy.io.mmread(path).tocsr()
    B = tessel.read(path)
    assert B.shape == ref.shape and B.format.levels == "ds"
    x = np.random.default_rng(20).random(ref.shape[1])
    y = tessel.evaluate("y(i) = B(i,j) * x(j)", B=B, x=x, threads=2)
    np.testing.assert_allclose(y.to_numpy(), ref @ x, rtol=1e-9)
    np.testing.assert_allclose(tessel.einsum("ij,j->i", ref, x), ref @ x, rtol=1e-9)


def test_spttm_spttm_into_a_sparse_output_against_numpy(data_dir):
    # <SpTTM, SpTTM> on knowledge-graph tensors, the output sparse where B has fibers
    # (ssd), as tessel chooses (T(k,m) = C * D first) and fused at j, against NumPy's
    # einsum over the dense B.
    path = os.path.join(data_dir, "tensors", "kg-nations.tns")
    if not os.path.exists(path):
        pytest.skip("kg-nations.tns missing")
    B = tessel.read(path, format="sss", name="B")
    coords, vals = B.to_coo()
    dense = np.zeros(B.shape)
    np.add.at(dense, tuple(coords.T), vals)
    rng = np.random.default_rng(33)
    C, D = rng.random((B.shape[2], 32)), rng.random((32, 64))
    expect = np.einsum("ijk,kl,lm->ijm", dense, C, D)
    text = "A(i,j,m) = B(i,j,k) * C(k,l) * D(l,m)"
    for schedule in (None, "loopfuse(j)"):
        k = tessel.compile(text, B=B, C=C, D=D, format="ssd", schedule=schedule)
        if schedule is None:
            assert k.schedule.startswith("precompute(C(k,l) * D(l,m),T)"), (k.schedule, k.reason)
        A = k.run()
        np.testing.assert_allclose(A.to_numpy(), expect, rtol=RTOL)
        # Stored: a row of 64 values for each fiber (i,j) of B.
        fibers = len({(i, j) for i, j, _ in coords})
        assert len(A.to_coo()[1]) == fibers * 64
