# tessel's exceptions as Python exceptions, with their messages.
import numpy as np
import pytest
import scipy.sparse as sp

import tessel


def test_hierarchy():
    assert issubclass(tessel.UserError, tessel.Error) and issubclass(tessel.UserError, ValueError)
    for e in (tessel.ParseError, tessel.NotationError, tessel.DimensionError, tessel.FormatError,
              tessel.ScheduleError, tessel.FileError):
        assert issubclass(e, tessel.UserError)
    assert issubclass(tessel.FileError, OSError)
    assert issubclass(tessel.CompileError, tessel.EnvironmentError)
    assert issubclass(tessel.EnvironmentError, RuntimeError)


def test_unknown_index_var_in_output():
    B = sp.random(4, 5, density=0.5, format="csr", random_state=1)
    with pytest.raises(tessel.NotationError, match="k"):
        tessel.evaluate("a(k) = B(i,j) * c(j)", B=B, c=np.ones(5))


def test_unknown_tensor():
    with pytest.raises(tessel.NotationError, match="c"):
        tessel.evaluate("a(i) = B(i,j) * c(j)", B=np.ones((2, 2)))


def test_dimension_mismatch():
    B = tessel.from_numpy(np.ones((4, 5)), name="B")
    c = tessel.from_numpy(np.ones(6), name="c")
    a = tessel.Tensor("a", (4,))
    i, j = tessel.index_vars("i j")
    with pytest.raises(tessel.DimensionError, match="index variable j") as e:
        a[i] = B[i, j] * c[j]
    assert "6 in c" in str(e.value)
    with pytest.raises(ValueError):  # a UserError is a ValueError
        tessel.evaluate("a(i) = B(i,j) * c(j)", B=B, c=c)


def test_parse_error():
    with pytest.raises(tessel.ParseError):
        tessel.evaluate("a(i) = B(i,j) * * c(j)", B=np.ones((2, 2)), c=np.ones(2))


def test_bad_schedule():
    with pytest.raises(tessel.ScheduleError):
        tessel.evaluate("a(i) = B(i,j) * c(j)", B=np.ones((2, 2)), c=np.ones(2), schedule="split(q,q0,q1,4)")


def test_bad_format_and_file(tmp_path):
    with pytest.raises(tessel.FormatError):
        tessel.Tensor("a", (3, 3), format="x")
    with pytest.raises(tessel.FormatError):
        tessel.Tensor("a", (3, 3), format="d")
    with pytest.raises(tessel.FileError):
        tessel.read(tmp_path / "missing.mtx")
    p = tmp_path / "bad.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
    with pytest.raises(tessel.FileError):
        tessel.read(p)


def test_no_assignment_and_bad_index():
    a = tessel.Tensor("a", (3,))
    with pytest.raises(tessel.NotationError):
        a.evaluate()
    with pytest.raises(TypeError):
        a[0]
    with pytest.raises(TypeError):
        tessel.from_numpy(np.ones(3, dtype=np.complex128))


def test_borrowed_tensor_is_not_an_output():
    a = tessel.from_numpy(np.zeros(3), name="a")
    b = tessel.from_numpy(np.ones(3), name="b")
    i = tessel.index_vars("i")
    a[i] = b[i]
    with pytest.raises(tessel.UserError, match="read-only input"):
        a.evaluate()


def test_dtype_mismatch_names_the_tensors():
    # an integer output would truncate float operands before they are combined: refused
    B = tessel.from_numpy(np.full((3, 4), 0.5), name="B")
    c = tessel.from_numpy(np.ones(4), name="c")
    a = tessel.Tensor("a", (3,), dtype=np.int32)
    i, j = tessel.index_vars("i j")
    with pytest.raises(tessel.NotationError, match="tensor a is int32 but B is float64"):
        a[i] = B[i, j] * c[j]
    # integer operands into a float output are exact: fine
    Bi = tessel.from_numpy(np.full((3, 4), 2, dtype=np.int64), name="Bi")
    f = tessel.Tensor("f", (3,))
    f[i] = Bi[i, j] * c[j]
    f.evaluate()
    np.testing.assert_array_equal(f.to_numpy(), [8.0, 8.0, 8.0])
