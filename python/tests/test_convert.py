# NumPy and SciPy conversions: zero-copy where the layouts match, round trips, file I/O.
import numpy as np
import pytest
import scipy.sparse as sp

import tessel


def addr(a):
    return a.__array_interface__["data"][0]


def test_from_numpy_is_zero_copy():
    x = np.random.default_rng(1).random((4, 5))
    t = tessel.from_numpy(x, name="X")
    assert t.borrowed and t.shape == (4, 5) and t.format.is_dense and t.dtype == np.float64
    assert addr(t._t.array("vals")) == addr(x)  # the tensor's values are the array's buffer
    x[2, 3] = 42.0
    assert t.at(2, 3) == 42.0
    np.testing.assert_array_equal(t.to_numpy(), x)


def test_from_numpy_copies_when_needed():
    x = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    t = tessel.from_numpy(x, name="X")
    assert addr(t._t.array("vals")) != addr(x)
    np.testing.assert_array_equal(t.to_numpy(), x)
    y = np.arange(6, dtype=np.int16)  # unsupported dtype: float64 copy
    assert tessel.from_numpy(y).dtype == np.float64
    z = np.arange(6, dtype=np.int32)
    assert tessel.from_numpy(z).dtype == np.int32
    c = tessel.from_numpy(z, copy=True)
    assert not c.borrowed and addr(c._t.array("vals")) != addr(z)


def test_to_numpy_view_and_copy():
    t = tessel.from_numpy(np.arange(6.0).reshape(2, 3), name="T", copy=True)
    v = t.to_numpy(copy=False)
    assert addr(v) == addr(t._t.array("vals"))
    c = t.to_numpy()
    assert addr(c) != addr(v)
    np.testing.assert_array_equal(np.asarray(t), c)
    with pytest.raises(ValueError):
        tessel.from_scipy(sp.eye(3, format="csr")).to_numpy(copy=False)


@pytest.mark.parametrize("idx", [np.int32, np.int64])
def test_from_scipy_csr_zero_copy(idx):
    m = sp.random(30, 20, density=0.2, format="csr", random_state=2)
    m.indptr, m.indices = m.indptr.astype(idx), m.indices.astype(idx)
    t = tessel.from_scipy(m, name="B")
    width = 32 if idx == np.int32 else 64
    assert t.format.levels == "ds" and t.format.pos_width == width and t.format.crd_width == width
    assert t.borrowed
    assert addr(t._t.array("pos", 1)) == addr(m.indptr)
    assert addr(t._t.array("crd", 1)) == addr(m.indices)
    assert addr(t._t.array("vals")) == addr(m.data)
    np.testing.assert_array_equal(t.to_numpy(), m.toarray())


def test_from_scipy_csc_is_mode_ordered():
    m = sp.random(15, 25, density=0.2, format="csc", random_state=3)
    t = tessel.from_scipy(m, name="B")
    assert str(t.format) == "ds:1,0" and t.shape == (15, 25)
    assert addr(t._t.array("vals")) == addr(m.data)
    np.testing.assert_array_equal(t.to_numpy(), m.toarray())


def test_from_scipy_non_canonical_is_copied():
    m = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3, 3])), shape=(2, 3))
    assert not m.has_canonical_format
    t = tessel.from_scipy(m, name="B")
    np.testing.assert_array_equal(t.to_numpy(), m.toarray())


@pytest.mark.parametrize("kind", ["csr", "csc", "coo"])
def test_scipy_round_trips(kind):
    m = sp.random(40, 30, density=0.1, format=kind, random_state=4)
    t = tessel.from_scipy(m, name="B")
    if kind == "coo":
        assert t.format.levels == "uq"
    for out in ("csr", "csc", "coo"):
        r = t.to_scipy(out)
        assert r.format == out and r.shape == m.shape
        np.testing.assert_array_equal(r.toarray(), m.toarray())
    # the native layout comes back as views without copying
    if kind != "coo":
        v = t.to_scipy(kind, copy=False)
        assert addr(v.data) == addr(m.data)


def test_formats_and_convert():
    m = sp.random(12, 9, density=0.3, format="csr", random_state=5)
    t = tessel.from_scipy(m, name="B")
    for f in ["dd", "ds:1,0", "ss", "uq", tessel.CSC(), tessel.Format("ds", pos_width=64, crd_width=64)]:
        u = t.convert(f)
        np.testing.assert_array_equal(u.to_numpy(), m.toarray())
    assert repr(tessel.Format("ds", pos_width=64, crd_width=64)) == "Format('ds', pos_width=64, crd_width=64)"
    assert tessel.Format("ds", mode_order=[1, 0]) == tessel.CSC()
    b = tessel.Tensor("b", (4, 4), format="ds", dtype=np.float32)
    b.insert((1, 2), 3.0).insert((1, 2), 1.0).pack()
    assert b.dtype == np.float32 and b.at(1, 2) == 4.0 and b.nnz == 1


@pytest.mark.parametrize("ext", [".mtx", ".tns", ".tsb"])
def test_file_round_trip(tmp_path, ext):
    m = sp.random(20, 10, density=0.2, format="csr", random_state=6)
    t = tessel.from_scipy(m, name="B")
    p = tmp_path / ("m" + ext)
    t.write(p)
    r = tessel.read(p)
    assert r.name == "m"
    np.testing.assert_allclose(r.to_numpy(), m.toarray(), rtol=1e-15)
    if ext == ".tsb":
        mapped = tessel.read(p, mmap=True)
        assert mapped.borrowed
        np.testing.assert_array_equal(mapped.to_numpy(), m.toarray())
    other = tessel.read(p, format="dd")
    assert other.format.is_dense
    np.testing.assert_allclose(other.to_numpy(), m.toarray(), rtol=1e-15)


def test_3_tensor_tns(tmp_path):
    rng = np.random.default_rng(7)
    x = rng.random((3, 4, 5))
    x[x < 0.5] = 0
    t = tessel.from_numpy(x, name="X").convert("sss")
    t.write(tmp_path / "x.tns")
    r = tessel.read(tmp_path / "x.tns")
    # .tns dims are the largest index in each mode
    got = r.to_numpy()
    np.testing.assert_allclose(got, x[: got.shape[0], : got.shape[1], : got.shape[2]])
