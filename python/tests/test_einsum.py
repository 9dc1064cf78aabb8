# tessel.einsum against numpy.einsum.
import numpy as np
import pytest
import scipy.sparse as sp

import tessel

rng = np.random.default_rng(42)
A = rng.random((6, 5))
B = rng.random((5, 4))
v5 = rng.random(5)
v6 = rng.random(6)
T = rng.random((3, 5, 4))
Q = rng.random((5, 5))
Q3 = rng.random((4, 4, 3))
Bat = rng.random((2, 3, 6, 5))   # a batch of 2 x 3 matrices 6 x 5
Bat2 = rng.random((2, 3, 5, 4))


@pytest.mark.parametrize("spec,ops", [
    ("ij,j->i", (A, v5)),          # matrix-vector
    ("ij,jk->ik", (A, B)),          # matrix-matrix
    ("ij,jk", (A, B)),              # implicit output
    ("ij->", (A,)),                 # total sum
    ("ij->j", (A,)),                # column sums
    ("ij->ji", (A,)),               # transpose
    ("i,j->ij", (v6, v5)),          # outer product
    ("i,i->", (v5, v5)),            # inner product
    ("ijk,jk->i", (T, B)),          # 3-tensor contraction
    ("ijk,kl->ijl", (T, B.T)),      # 3-tensor times matrix
    ("ij,ij->ij", (A, A)),          # element-wise
    ("ii->i", (Q,)),                 # diagonal
    ("ii", (Q,)),                    # trace (implicit output)
    ("ii->", (Q,)),                  # trace
    ("iij->ij", (Q3,)),              # generalized diagonal
    ("ii,i->i", (Q, v5)),            # diagonal times a vector
    ("ij,jj->i", (A, Q)),            # a diagonal inside a product
    ("...ij,...jk->...ik", (Bat, Bat2)),  # batched matrix multiply
    ("...ij,j->...i", (Bat, v5)),    # batched matrix-vector
    ("...ij,...jk", (Bat, Bat2)),    # implicit output with an ellipsis
    ("i...->...", (A,)),             # an ellipsis at the end
    ("...ij,jk->...ik", (A, B)),     # an ellipsis standing for nothing
    ("...,...->...", (v5, v5)),      # only an ellipsis
])
def test_einsum_matches_numpy(spec, ops):
    got = tessel.einsum(spec, *ops)
    expect = np.einsum(spec, *ops)
    assert np.shape(got) == np.shape(expect)
    np.testing.assert_allclose(got, expect, rtol=1e-12)


def test_einsum_sparse_inputs_stay_sparse():
    S = sp.random(6, 5, density=0.3, format="csr", random_state=1)
    np.testing.assert_allclose(tessel.einsum("ij,j->i", S, v5), S @ v5, rtol=1e-12)
    np.testing.assert_allclose(tessel.einsum("ij,jk->ik", S, B), S @ B, rtol=1e-12)
    C = sp.random(5, 6, density=0.3, format="csc", random_state=2)
    np.testing.assert_allclose(tessel.einsum("ji,j->i", C, v5), C.T @ v5, rtol=1e-12)
    out = tessel.einsum("ij,ij->ij", S, A, format="ds")
    assert sp.issparse(out)
    np.testing.assert_allclose(out.toarray(), S.multiply(A).toarray(), rtol=1e-12)


def test_einsum_tensors_and_threads():
    S = tessel.from_scipy(sp.random(200, 100, density=0.05, format="csr", random_state=3), name="S")
    x = rng.random(100)
    one = tessel.einsum("ij,j->i", S, x)
    two = tessel.einsum("ij,j->i", S, x, threads=2)
    np.testing.assert_allclose(one, two, rtol=1e-12)


def test_einsum_errors():
    with pytest.raises(tessel.DimensionError):
        tessel.einsum("ij,j->i", A, v6)
    with pytest.raises(ValueError):
        tessel.einsum("ii->", A)  # not square
    with pytest.raises(ValueError):
        tessel.einsum("ij->ii", A)
    with pytest.raises(ValueError):
        tessel.einsum("...ijk,k->i", A, v5)  # more subscripts than dimensions
    with pytest.raises(ValueError):
        tessel.einsum("ij,j->k", A, v5)
    with pytest.raises(ValueError):
        tessel.einsum("ij,j->i", A)




def test_einsum_sparse_diagonal():
    S = sp.random(7, 7, density=0.4, format="csr", random_state=5)
    np.testing.assert_allclose(tessel.einsum("ii->i", S), S.diagonal(), rtol=1e-15)
    np.testing.assert_allclose(tessel.einsum("ii", S), S.diagonal().sum(), rtol=1e-12)
    x = rng.random(7)
    np.testing.assert_allclose(tessel.einsum("ii,i->i", S, x), S.diagonal() * x, rtol=1e-12)
