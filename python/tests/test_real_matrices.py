# tessel against SciPy on every real matrix in ../shared/data/matrices (skipped when absent):
# SpMV, SpMM, the sparse sum A + A^T, SpGEMM A * A^T (sparse output) and an SDDMM, each read
# by tessel.read and by scipy.io.mmread independently.
import glob
import os

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import tessel

_DATA = os.environ.get("TESSEL_DATA_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data")
_FILES = sorted(glob.glob(os.path.join(_DATA, "matrices", "*.mtx")))


def _name(path):
    return os.path.basename(path)


@pytest.fixture(scope="module", params=_FILES or [None], ids=[_name(p) for p in _FILES] or ["no-data"])
def pair(request):
    if request.param is None:
        pytest.skip("no matrices under " + os.path.join(_DATA, "matrices"))
    ref = sp.csr_matrix(scipy.io.mmread(request.param), dtype=np.float64)
    ref.sum_duplicates()
    B = tessel.read(request.param, name="B")
    return ref, B


def test_read_matches_scipy(pair):
    ref, B = pair
    assert B.shape == ref.shape
    got = B.to_scipy("csr")
    assert abs(got - ref).max() == 0 if ref.nnz else got.nnz == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_spmv_and_spmm(pair, threads):
    ref, B = pair
    rng = np.random.default_rng(1)
    x = rng.random(ref.shape[1])
    y = tessel.evaluate("y(i) = B(i,j) * x(j)", B=B, x=x, threads=threads).to_numpy()
    np.testing.assert_allclose(y, ref @ x, rtol=1e-10, atol=1e-12 * max(1.0, abs(ref).max()))
    X = rng.random((ref.shape[1], 8))
    Y = tessel.evaluate("Y(i,k) = B(i,j) * X(j,k)", B=B, X=X, threads=threads).to_numpy()
    np.testing.assert_allclose(Y, ref @ X, rtol=1e-10, atol=1e-12 * max(1.0, abs(ref).max()))


def test_sparse_sum_and_product(pair):
    ref, B = pair
    if ref.nnz > 400_000:
        pytest.skip("large: SpGEMM on the small and mid-sized matrices only")
    Bt = tessel.from_scipy(ref.T.tocsr(), name="C")
    S = tessel.evaluate("S(i,j) = B(i,k) * C(k,j)", B=B, C=Bt, format="ds").to_scipy("csr")
    want = (ref @ ref.T).tocsr()
    assert S.shape == want.shape
    assert abs(S - want).max() <= 1e-10 * max(1.0, abs(want).max()) if want.nnz else S.nnz == 0
    if ref.shape[0] == ref.shape[1]:
        T = tessel.evaluate("T(i,j) = B(i,j) + C(i,j)", B=B, C=Bt, format="ds").to_scipy("csr")
        assert abs(T - (ref + ref.T)).max() <= 1e-12 * max(1.0, abs(ref).max())


def test_sddmm(pair):
    ref, B = pair
    rng = np.random.default_rng(2)
    U, V = rng.random((ref.shape[0], 4)), rng.random((4, ref.shape[1]))
    got = tessel.evaluate("A(i,j) = B(i,j) * U(i,k) * V(k,j)", B=B, U=U, V=V, format="ds").to_scipy("csr")
    c = ref.tocoo()  # (U V) at B's entries only: U V itself may not fit in memory
    dots = np.einsum("ek,ke->e", U[c.row], V[:, c.col])
    want = sp.csr_matrix((c.data * dots, (c.row, c.col)), shape=ref.shape)
    assert abs(got - want).max() <= 1e-10 * max(1.0, abs(want).max()) if want.nnz else got.nnz == 0
