# Round trips between scipy.sparse (csr, csc, coo; int32 and int64 indices) and every tessel
# matrix format at both index widths, for each value dtype; non-canonical input (unsorted
# indices, duplicates) is summed as SciPy sums it.
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import tessel

FORMATS = ["dd", "ds", "ds:1,0", "sd", "ss", "ss:1,0", "uq", "uq:1,0", "db", "sb"]
WIDTHS = [32, 64]
KINDS = ["csr", "csc", "coo"]
INDEX_DTYPES = [np.int32, np.int64]
VALUE_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.bool_]


def sample(kind, idx, dtype, shape=(23, 17), density=0.15, seed=0):
    rng = np.random.default_rng(seed)
    m = sp.random(*shape, density=density, format="coo", random_state=seed)
    values = rng.integers(1, 9, m.nnz) if dtype != np.float64 else m.data
    m = sp.coo_matrix((values.astype(dtype), (m.row, m.col)), shape=shape).asformat(kind)
    if kind == "coo":
        m.row, m.col = m.row.astype(idx), m.col.astype(idx)
    else:
        m.indptr, m.indices = m.indptr.astype(idx), m.indices.astype(idx)
    return m


def dense_of(m):
    return m.toarray()


@pytest.mark.parametrize("fmt,width", list(itertools.product(FORMATS, WIDTHS)))
@pytest.mark.parametrize("kind,idx", list(itertools.product(KINDS, INDEX_DTYPES)))
def test_scipy_to_every_format_and_back(fmt, width, kind, idx):
    m = sample(kind, idx, np.float64)
    f = tessel.Format(fmt, pos_width=width, crd_width=width)
    t = tessel.from_scipy(m, name="B", format=f)
    assert t.shape == m.shape
    assert t.format == f, "asked for %s, got %s" % (f, t.format)
    assert t.format.pos_width == width and t.format.crd_width == width
    np.testing.assert_array_equal(t.to_numpy(), dense_of(m))
    for out in KINDS:
        r = t.to_scipy(out)
        assert r.format == out and r.shape == m.shape
        np.testing.assert_array_equal(r.toarray(), dense_of(m))
    if fmt.split(":")[0][-1] not in "db":  # a dense or bitmap last level stores zeros too
        assert t.nnz == m.nnz


@pytest.mark.parametrize("dtype", VALUE_DTYPES)
@pytest.mark.parametrize("fmt", ["ds", "ds:1,0", "ss", "uq", "dd"])
def test_value_dtypes_round_trip(dtype, fmt):
    m = sample("csr", np.int32, dtype, seed=3)
    t = tessel.from_scipy(m, name="B", format=fmt)
    assert t.dtype == np.dtype(dtype), "%s kept %s as %s" % (fmt, np.dtype(dtype), t.dtype)
    np.testing.assert_array_equal(t.to_numpy(), dense_of(m))
    r = t.to_scipy("csr")
    assert r.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(r.toarray(), dense_of(m))


@pytest.mark.parametrize("fmt", FORMATS)
def test_conversions_between_formats(fmt):
    m = sample("csr", np.int64, np.float64, seed=4)
    t = tessel.from_scipy(m, name="B")
    u = t.convert(fmt)
    for g in FORMATS:  # and on to every other format
        np.testing.assert_array_equal(u.convert(g).to_numpy(), dense_of(m))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["ds", "ds:1,0", "ss", "uq", "dd"])
def test_non_canonical_input_is_summed(kind, fmt):
    # rows with unsorted columns and repeated (row, col) pairs: SciPy's meaning is the sum
    row = np.array([0, 0, 0, 2, 2, 1, 0])
    col = np.array([3, 1, 3, 0, 0, 2, 1])
    val = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    if kind == "coo":
        m = sp.coo_matrix((val, (row, col)), shape=(3, 4))
    else:
        # build the compressed arrays by hand so that they stay unsorted with duplicates
        major, minor = (row, col) if kind == "csr" else (col, row)
        order = np.argsort(major, kind="stable")
        n = 3 if kind == "csr" else 4
        indptr = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=n))])
        cls = sp.csr_matrix if kind == "csr" else sp.csc_matrix
        m = cls((val[order], minor[order], indptr), shape=(3, 4))
        assert not m.has_canonical_format
    want = np.zeros((3, 4))
    np.add.at(want, (row, col), val)
    t = tessel.from_scipy(m, name="B", format=fmt)
    np.testing.assert_array_equal(t.to_numpy(), want)
    np.testing.assert_array_equal(t.to_scipy("csr").toarray(), want)
    # the caller's matrix is left as it was
    assert m.nnz == 7


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (1, 1), (4, 6)])
@pytest.mark.parametrize("fmt", ["ds", "ds:1,0", "ss", "uq", "dd"])
def test_empty_and_degenerate(shape, fmt):
    m = sp.csr_matrix(shape)
    t = tessel.from_scipy(m, name="B", format=fmt)
    assert t.shape == shape
    for out in KINDS:
        r = t.to_scipy(out)
        assert r.shape == shape and r.nnz == 0


def test_out_of_range_index_is_refused():
    # SciPy's constructor does not check index bounds; tessel does (each row's last index
    # of a canonical matrix, every index otherwise) before a kernel could read past x
    for indices in ([0, 5], [7, 1]):
        m = sp.csr_matrix((np.array([1.0, 2.0]), np.array(indices), np.array([0, 1, 2])), shape=(2, 3))
        with pytest.raises(tessel.DimensionError, match="out of range"):
            tessel.from_scipy(m, name="B")
    # unsorted, so copied and summed: the bad index is still found
    m = sp.csr_matrix((np.array([1.0, 2.0]), np.array([9, 0]), np.array([0, 2, 2])), shape=(2, 3))
    with pytest.raises((tessel.DimensionError, ValueError)):
        tessel.from_scipy(m, name="B")
