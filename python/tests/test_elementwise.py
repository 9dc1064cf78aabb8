# Element-wise functions in the text form (max, min, abs, comparisons) against NumPy on the
# dense arrays: a missing entry is 0 under plus_times, so np.maximum(B.toarray(), ...) is
# the oracle, sparse operands included.
import numpy as np
import pytest
import scipy.sparse as sp

import tessel


def rand_csr(m, n, density, seed):
    M = sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float64)
    M.data -= 0.5  # negative values: max(x, 0) differs from a union
    return M


B = rand_csr(30, 20, 0.2, 1)
C = rand_csr(30, 20, 0.2, 2)
Bd, Cd = B.toarray(), C.toarray()


@pytest.mark.parametrize("text,expect", [
    ("A(i,j) = max(B(i,j), C(i,j))", np.maximum(Bd, Cd)),
    ("A(i,j) = min(B(i,j), C(i,j))", np.minimum(Bd, Cd)),
    ("A(i,j) = abs(B(i,j)) * 2", np.abs(Bd) * 2),
    ("A(i,j) = B(i,j) < C(i,j)", (Bd < Cd).astype(float)),
    ("A(i,j) = B(i,j) <= C(i,j)", (Bd <= Cd).astype(float)),
    ("A(i,j) = B(i,j) == C(i,j)", (Bd == Cd).astype(float)),
    ("A(i,j) = B(i,j) != C(i,j)", (Bd != Cd).astype(float)),
    ("A(i,j) = max(B(i,j), 0) - min(C(i,j), 0)", np.maximum(Bd, 0) - np.minimum(Cd, 0)),
])
@pytest.mark.parametrize("threads", [1, 2])
def test_elementwise_matches_numpy(text, expect, threads):
    A = tessel.evaluate(text, B=B, C=C, threads=threads)
    np.testing.assert_allclose(A.to_numpy(), expect, rtol=1e-12)


def test_reduction_of_max_matches_numpy():
    a = tessel.evaluate("a(i) = max(B(i,j), C(i,j))", B=B, C=C)
    np.testing.assert_allclose(a.to_numpy(), np.maximum(Bd, Cd).sum(axis=1), rtol=1e-12)
