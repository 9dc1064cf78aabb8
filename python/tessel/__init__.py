"""tessel: a compiler for sparse and dense tensor algebra, from Python.

State what to compute in index notation and how each tensor is stored (its format);
tessel generates C for that combination, compiles it (cached on disk) and runs it::

    import numpy as np, scipy.sparse as sp, tessel

    B = tessel.from_scipy(sp.random(1000, 800, density=0.01, format="csr"), name="B")
    c = tessel.from_numpy(np.random.rand(800), name="c")
    a = tessel.Tensor("a", (1000,))                      # dense by default
    i, j = tessel.index_vars("i j")
    a[i] = B[i, j] * c[j]
    a.evaluate(threads=2)
    y = a.to_numpy()

    # the same, as text, with the output created from the inputs' dimensions
    y = tessel.evaluate("a(i) = B(i,j) * c(j)", B=B, c=c).to_numpy()
    # or without the notation
    y = tessel.einsum("ij,j->i", B, c)

Zero-copy inputs: ``from_numpy`` of a C-contiguous array and ``from_scipy`` of a
canonical CSR/CSC matrix point the tensor at the array's own memory (the array is kept
alive by the tensor). Such a tensor is a read-only *input*: changing the array changes
what the next kernel run reads, and it cannot be the output of an assignment.

Errors are ``tessel.Error`` subclasses; wrong input raises ``tessel.UserError`` (a
``ValueError``) or one of its subclasses (``NotationError``, ``DimensionError``,
``FormatError``, ``ParseError``, ``ScheduleError``, ``FileError`` ...).
"""

import os as _os
import re as _re
import statistics as _statistics

import numpy as _np

from . import _tessel
from ._tessel import (  # noqa: F401  (re-exported)
    Access,
    CompileError,
    DimensionError,
    DistributionError,
    EnvironmentError,
    Error,
    Expr,
    FileError,
    Format,
    FormatError,
    IndexVar,
    InternalError,
    MemoryLimitError,
    NotationError,
    OutOfMemoryError,
    OverflowError,
    ParseError,
    Schedule,
    ScheduleError,
    UserError,
    CSR,
    CSC,
    DCSR,
    DCSC,
    COO,
    CSF,
    sum,
)

__all__ = [
    "Tensor", "Format", "IndexVar", "Schedule", "Kernel", "index_vars", "sum",
    "from_numpy", "from_scipy", "as_tensor", "read", "evaluate", "compile", "einsum",
    "CSR", "CSC", "DCSR", "DCSC", "COO", "CSF", "dense_format",
    "Error", "UserError", "ParseError", "NotationError", "DimensionError", "FormatError",
    "OverflowError", "FileError", "MemoryLimitError", "ScheduleError", "DistributionError",
    "EnvironmentError", "OutOfMemoryError", "CompileError", "InternalError",
    "Machine", "DistTensor", "DistributedKernel", "distributed_compile", "world_rank", "world_size",
]

_DTYPES = (_np.float64, _np.float32, _np.int64, _np.int32, _np.bool_)


def dense_format(order):
    """The all-dense format of `order` levels (row-major)."""
    return _tessel.dense_format(order)


def _as_format(format, order):
    if format is None:
        return _tessel.dense_format(order)
    if isinstance(format, Format):
        return format
    if isinstance(format, str):
        return Format(format)
    raise TypeError("format must be a tessel.Format or a string such as 'ds', not %r" % (format,))


def index_vars(names):
    """Index variables from a string of names: ``i, j, k = tessel.index_vars("i j k")``
    (names separated by spaces or commas). Returns a tuple (one variable: that variable)."""
    parts = [n for n in _re.split(r"[\s,]+", names.strip()) if n]
    vs = tuple(IndexVar(n) for n in parts)
    return vs[0] if len(vs) == 1 else vs


def _vars_of(key):
    if isinstance(key, tuple):
        vs = list(key)
    else:
        vs = [key]
    for v in vs:
        if not isinstance(v, IndexVar):
            raise TypeError("tensors are indexed by tessel.IndexVar objects (tessel.index_vars), not %r" % (v,))
    return vs


def _stem_name(path):
    stem = _os.path.splitext(_os.path.basename(path))[0]
    name = _re.sub(r"[^A-Za-z0-9_]", "_", stem) or "T"
    return name if not name[0].isdigit() else "T" + name


class Tensor:
    """A tensor: name, shape, format, element type, and its storage.

    ``Tensor("B", (m, n), format="ds")`` makes an empty CSR matrix;
    ``format`` is a :class:`Format` or its text ("ds", "ds:1,0", "dd", "sss", ...),
    dense (all "d") when omitted. ``dtype`` is float64 (default), float32, int64, int32
    or bool. Tensors are handles: copies share storage.

    Index it with index variables to build assignments: ``a[i] = B[i, j] * c[j]``,
    ``A[i, j] += B[i, j]``, then ``a.evaluate()``.
    """

    __slots__ = ("_t",)

    def __init__(self, name, shape, format=None, dtype=_np.float64):
        shape = tuple(int(d) for d in shape)
        self._t = _tessel.TensorBase(name, list(shape), _as_format(format, len(shape)), _np.dtype(dtype))

    @classmethod
    def _wrap(cls, t):
        obj = cls.__new__(cls)
        obj._t = t
        return obj

    # -- properties -------------------------------------------------------------------
    @property
    def name(self):
        """The tensor's name (as it appears in expressions and generated code)."""
        return self._t.name

    @property
    def shape(self):
        """Dimensions, one per mode."""
        return self._t.shape

    @property
    def ndim(self):
        return self._t.order

    @property
    def dtype(self):
        """The element type as a numpy.dtype."""
        return self._t.dtype

    @property
    def format(self):
        """The tensor's :class:`Format`."""
        return self._t.format

    @property
    def nnz(self):
        """Stored values (explicit zeros included; every entry of a dense tensor)."""
        return self._t.stored

    @property
    def borrowed(self):
        """True when the arrays belong to a NumPy/SciPy object or a mapped file (zero-copy input)."""
        return self._t.borrowed

    def __repr__(self):
        return "tessel.Tensor(%r, %r, format=%r, dtype=%s, nnz=%d)" % (
            self.name, self.shape, str(self.format), self.dtype, self.nnz)

    # -- contents ---------------------------------------------------------------------
    def insert(self, coords, value):
        """Add `value` at `coords` (duplicates are summed); call :meth:`pack` after inserting."""
        self._t.insert([int(c) for c in coords], float(value))
        return self

    def pack(self):
        """Build the level arrays from the inserted entries."""
        self._t.pack()
        return self

    def at(self, *coords):
        """The value at a coordinate (0 where nothing is stored), as float."""
        if len(coords) == 1 and isinstance(coords[0], (tuple, list)):
            coords = coords[0]
        return self._t.at([int(c) for c in coords])

    def to_coo(self):
        """Stored entries: (coords int64 array of shape (nnz, ndim), values float64 array)."""
        return self._t.to_coo()

    def set_from_coo(self, coords, values):
        """Replace the contents with entries (coords of shape (nnz, ndim), values), packed in this format."""
        coords = _np.asarray(coords, dtype=_np.int64).reshape(-1, max(self.ndim, 1))
        self._t.set_from_coo(coords, _np.asarray(values, dtype=_np.float64))
        return self

    def convert(self, format, name=""):
        """A new tensor with the same values in another format (copies)."""
        return Tensor._wrap(self._t.convert(_as_format(format, self.ndim), name))

    def to_numpy(self, copy=True):
        """The tensor as a dense numpy.ndarray of its dtype.

        ``copy=False`` returns a view of the values of a dense (row-major) tensor: no copy,
        writes go to the tensor, and the view is valid until the tensor is packed or
        computed again. Other formats raise ValueError with copy=False.
        """
        if not copy:
            f = self.format
            if not f.is_dense or list(f.mode_order) != list(range(self.ndim)):
                raise ValueError("to_numpy(copy=False) needs a dense row-major tensor, %s is %s" % (self.name, f))
            return self._t.array("vals").reshape(self.shape)
        return self._t.to_dense()

    def __array__(self, dtype=None):
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)

    def to_scipy(self, format="csr", copy=True):
        """The matrix as a scipy.sparse matrix: "csr", "csc" or "coo".

        A "ds" tensor gives its own arrays for "csr" (and "ds:1,0" for "csc"): copied, or
        with ``copy=False`` as views valid until the tensor is packed or computed again.
        Other formats go through coordinates (a dense tensor drops its zeros).
        """
        import scipy.sparse as sp
        if self.ndim != 2:
            raise ValueError("to_scipy needs a matrix; %s has %d modes" % (self.name, self.ndim))
        if format not in ("csr", "csc", "coo"):
            raise ValueError("to_scipy format is 'csr', 'csc' or 'coo', not %r" % (format,))
        f = self.format
        want = {"csr": [0, 1], "csc": [1, 0]}.get(format)
        if f.levels == "ds" and want is not None and list(f.mode_order) == want:
            indptr, indices, data = self._t.array("pos", 1), self._t.array("crd", 1), self._t.array("vals")
            n = int(indptr[-1])
            indices, data = indices[:n], data[:n]
            if copy:
                indptr, indices, data = indptr.copy(), indices.copy(), data.copy()
            cls = sp.csr_matrix if format == "csr" else sp.csc_matrix
            return cls((data, indices, indptr), shape=self.shape, copy=False)
        if copy is False:
            raise ValueError("to_scipy(%r, copy=False) needs format %s, %s is %s"
                             % (format, "ds" if format == "csr" else "ds:1,0", self.name, f))
        if f.is_dense:
            return sp.coo_matrix(self.to_numpy()).asformat(format)
        coords, values = self._t.to_coo()
        m = sp.coo_matrix((values.astype(self.dtype), (coords[:, 0], coords[:, 1])), shape=self.shape)
        return m.asformat(format)

    def write(self, path):
        """Write to `path`: .mtx (matrices), .tns (FROSTT) or .tsb (tessel binary, this format)."""
        self._t.write(_os.fspath(path))

    # -- index notation ---------------------------------------------------------------
    def __getitem__(self, key):
        return self._t.access(_vars_of(key))

    def __setitem__(self, key, expr):
        vs = _vars_of(key)
        if isinstance(expr, _tessel.Accumulate):  # a[i] += e
            self._t.accumulate(vs, expr.expr)
        elif isinstance(expr, Expr):
            self._t.assign(vs, expr)
        elif isinstance(expr, (int, float, _np.number)):
            self._t.assign(vs, float(expr))
        else:
            raise TypeError("the right-hand side must be an index expression or a number, not %r" % (expr,))

    @property
    def assignment(self):
        """The recorded assignment as text ("a(i) = B(i,j) * c(j)"); NotationError if none."""
        return self._t.assignment()

    def compile(self, schedule=None, threads=1, semiring=None):
        """Compile the recorded assignment; returns a :class:`Kernel` (run it with ``.run()``).

        ``schedule`` is a :class:`Schedule` or its text ("split(i,i0,i1,32),parallelize(i0)");
        without one tessel chooses (a product of three or more tensors runs as a fused nest,
        loopfuse, or as separate kernels, precompute of the producer, where a cost model says it
        saves at least 20% of the perfect nest's work; with threads > 1 rows run in parallel;
        ``Kernel.schedule`` shows the choice). ``semiring``:
        "plus_times" (default), "min_plus", "max_times", "max_plus".
        """
        if self.borrowed:
            raise UserError("tensor %s uses memory it does not own (a NumPy/SciPy buffer or a mapped file): "
                            "it is a read-only input and cannot be an output; make it with "
                            "from_numpy(..., copy=True) or convert() it" % self.name)
        return Kernel(_tessel.compile(self._t, schedule, int(threads), semiring))

    def evaluate(self, schedule=None, threads=1, semiring=None):
        """Compile (JIT, cached on disk) and run the recorded assignment; returns self."""
        self.compile(schedule, threads, semiring).run()
        return self

    def emit(self, schedule=None, threads=1, semiring=None):
        """The C code generated for the recorded assignment (not compiled)."""
        return self._t.emit(schedule, int(threads), semiring)


class Kernel:
    """A compiled assignment bound to its tensors.

    ``run()`` assembles and computes the output again (reading the inputs' current
    values); ``time(reps)`` is the median seconds of a run; ``source`` is the C code.
    """

    __slots__ = ("_k",)

    def __init__(self, k):
        self._k = k

    @property
    def source(self):
        """The generated C code."""
        return self._k.source

    @property
    def output(self):
        """The output :class:`Tensor`."""
        return Tensor._wrap(self._k.output)

    @property
    def schedule(self):
        """The schedule compiled with, as text ("" for none)."""
        return self._k.schedule

    @property
    def reason(self):
        """Why tessel chose the schedule when none was given ("fused at blocks of i
        (loopfuse): the cost model's estimate is ..."), as ``tessel run --time`` says;
        "" for a schedule given, or where the choice is the plain default."""
        return self._k.reason

    @property
    def threads(self):
        """The threads ``run()`` uses by default: those compiled for, or 1 where tessel's
        choice found too little work to share (its reason then says "one thread")."""
        return self._k.threads

    @property
    def compile_seconds(self):
        return self._k.compile_seconds

    @property
    def cache_hit(self):
        """True when the compiled code came from the JIT cache."""
        return self._k.cache_hit

    def run(self, threads=None):
        """Assemble and compute the output; returns the output :class:`Tensor`."""
        self._k.run(threads)
        return self.output

    def time(self, reps=10, warmup=1, threads=None):
        """Median seconds (assembly + compute, as the kernel measures them) over `reps` runs."""
        for _ in range(int(warmup)):
            self._k.run(threads)
        times = []
        for _ in range(max(1, int(reps))):
            a, c = self._k.run(threads)
            times.append(a + c)
        return _statistics.median(times)

    def __repr__(self):
        return "tessel.Kernel(%r, schedule=%r)" % (self._k.assignment, self._k.schedule)


# -- conversions ------------------------------------------------------------------------

def from_numpy(array, name="A", copy=False):
    """A dense tensor from a NumPy array (any number of dimensions).

    A C-contiguous array of float64, float32, int64, int32 or bool is used in place
    (zero-copy): the tensor's values are the array's buffer, kept alive by the tensor.
    Use such a tensor as a read-only input: later writes to the array are seen by the
    next kernel run. Other arrays (non-contiguous, other dtypes) are copied (converted to
    float64 when their dtype is not supported); so is every array with ``copy=True``.
    """
    a = _np.asarray(array)
    if a.dtype not in [_np.dtype(d) for d in _DTYPES]:
        if a.dtype.kind == "c":
            raise TypeError("tessel has no complex values")
        a = a.astype(_np.float64)
        return Tensor._wrap(_tessel.from_dense(a, name, False))
    a = _np.ascontiguousarray(a)
    return Tensor._wrap(_tessel.from_dense(a, name, bool(copy)))


def _canonical(m):
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    return m


def _values_dtype(data):
    if data.dtype in [_np.dtype(d) for d in _DTYPES]:
        return data
    if data.dtype.kind == "c":
        raise TypeError("tessel has no complex values")
    return data.astype(_np.float64)


def from_scipy(matrix, name="B", format=None):
    """A tensor from a scipy.sparse matrix or array.

    CSR becomes format "ds" and CSC "ds:1,0" without copying (the tensor reads the
    matrix's indptr, indices and data, whose int32/int64 dtypes set the index widths),
    when the matrix is canonical (sorted indices, no duplicates; otherwise a canonical
    copy is made) and its values have a supported dtype. COO is copied into format COO
    ("uq"); other scipy formats are converted to CSR first. ``format`` asks for another
    tessel format (a copy). Like :func:`from_numpy`, a zero-copy tensor is a read-only input.
    """
    import scipy.sparse as sp
    if not sp.issparse(matrix):
        raise TypeError("from_scipy needs a scipy.sparse matrix, not %s" % type(matrix).__name__)
    m = matrix
    kind = m.format
    if kind not in ("csr", "csc", "coo"):
        m, kind = m.tocsr(), "csr"
    target = None if format is None else _as_format(format, 2)
    zero_copy = {"csr": Format("ds"), "csc": Format("ds:1,0")}
    if kind in zero_copy and (target is None or (target.levels == "ds" and
                                                 list(target.mode_order) == list(zero_copy[kind].mode_order))):
        m = _canonical(m)
        indptr, indices = m.indptr, m.indices
        if target is not None:  # the widths asked for
            indptr = indptr.astype(_np.int64 if target.pos_width == 64 else _np.int32, copy=False)
            indices = indices.astype(_np.int64 if target.crd_width == 64 else _np.int32, copy=False)
        indptr, indices = _np.ascontiguousarray(indptr), _np.ascontiguousarray(indices)
        data = _np.ascontiguousarray(_values_dtype(m.data))
        # The index check runs once per matrix and set of arrays (O(rows), each row's first
        # and last index; SciPy's has_canonical_format vouches for the order within rows),
        # remembered on the matrix as SciPy remembers that flag: a later call with the same
        # arrays binds in O(1). As with SciPy, indices changed in place afterwards are not
        # seen: pass a new matrix (m.copy()) after changing its arrays in place.
        key = (indptr.__array_interface__["data"][0], indices.__array_interface__["data"][0],
               data.__array_interface__["data"][0], indptr.shape[0], int(indptr[-1]) if len(indptr) else 0,
               tuple(m.shape), indptr.dtype.str, indices.dtype.str, kind)
        checked = getattr(m, "_tessel_checked", None) == key
        t = _tessel.from_compressed(name, int(m.shape[0]), int(m.shape[1]), indptr, indices, data,
                                    kind == "csc", True, checked)
        try:
            m._tessel_checked = key
        except AttributeError:  # pragma: no cover (a matrix type without a __dict__)
            pass
        return Tensor._wrap(t)
    coo = m.tocoo()
    data = _values_dtype(coo.data)
    t = Tensor(name, m.shape, target if target is not None else COO(2), data.dtype)
    coords = _np.stack([coo.row.astype(_np.int64), coo.col.astype(_np.int64)], axis=1)
    t._t.set_from_coo(coords, data.astype(_np.float64))
    return t


def as_tensor(x, name="A"):
    """A :class:`Tensor` from a Tensor (as is), a scipy.sparse matrix (:func:`from_scipy`),
    a NumPy array or anything array-like (:func:`from_numpy`), or a number (order 0)."""
    if isinstance(x, Tensor):
        return x
    try:
        import scipy.sparse as sp
        if sp.issparse(x):
            return from_scipy(x, name=name)
    except ImportError:  # pragma: no cover
        pass
    return from_numpy(x, name=name)


def read(path, format=None, name=None, mmap=False):
    """Read a tensor file: Matrix Market (.mtx), FROSTT (.tns) or tessel binary (.tsb).

    Without `format`, a .tsb keeps its own format and dtype (``mmap=True`` maps it
    read-only instead of copying); text files are packed in CSR for matrices, a
    compressed vector for order 1, dense-then-compressed levels for higher orders
    (64-bit indices where 32 bits do not fit), as float64.
    """
    path = _os.fspath(path)
    fmt = None if format is None else _as_format(format, 0)
    return Tensor._wrap(_tessel.read(path, fmt, name or _stem_name(path), bool(mmap)))


# -- text form --------------------------------------------------------------------------

def _bind(text, out, format, dtype, tensors):
    uses = _tessel.scan(text)
    out_name, out_order, _, accumulated = uses[0]
    bound = {}
    for nm, _order, is_out, _acc in uses:
        if is_out:
            continue
        if nm not in tensors:
            raise NotationError("unknown tensor %s in %r: pass it as %s=..." % (nm, text, nm))
        bound[nm] = as_tensor(tensors[nm], name=nm)
    if out is None and out_name in tensors:
        out = tensors[out_name]
    if out is None:
        if accumulated:
            raise NotationError("%r accumulates into %s: pass the output tensor (out=...)" % (text, out_name))
        dims = _tessel.infer_output_dims(text, {k: v._t for k, v in bound.items()})
        out = Tensor(out_name, dims, _as_format(format, len(dims)), dtype)
    elif not isinstance(out, Tensor):
        out = from_numpy(out, name=out_name, copy=True)  # an owned copy: outputs are written
    bound[out_name] = out
    _tessel.parse(text, {k: v._t for k, v in bound.items()})
    return out


def compile(text, out=None, schedule=None, threads=1, format=None, dtype=_np.float64, semiring=None, **tensors):
    """Compile an assignment given as text over named tensors; returns a :class:`Kernel`.

    ``tessel.compile("a(i) = B(i,j) * c(j)", B=B, c=c, schedule="...", threads=2)``.
    Inputs may be Tensors, NumPy arrays or scipy.sparse matrices (converted as by
    :func:`as_tensor`, named by their keyword). The output is `out`, or a keyword named
    like it, or a new tensor (dims from the inputs, `format` -- dense by default --
    and `dtype`).
    """
    o = _bind(text, out, format, dtype, tensors)
    return o.compile(schedule, threads, semiring)


def evaluate(text, out=None, schedule=None, threads=1, format=None, dtype=_np.float64, semiring=None, **tensors):
    """Compute an assignment given as text and return its output :class:`Tensor`.

    ``a = tessel.evaluate("a(i) = B(i,j) * c(j)", B=B, c=c, threads=2)``; arguments as
    for :func:`compile`.
    """
    return compile(text, out, schedule, threads, format, dtype, semiring, **tensors).run()


# -- einsum -----------------------------------------------------------------------------

def _split_einsum(spec, n):
    """The operands' and the output's subscripts as written, "..." kept; output None when implicit."""
    spec = spec.replace(" ", "")
    lhs, out = spec.split("->") if "->" in spec else (spec, None)
    ins = lhs.split(",")
    if len(ins) != n:
        raise ValueError("einsum: %r names %d operands but %d were given" % (spec, len(ins), n))
    for sub in ins + ([out] if out is not None else []):
        rest = sub.replace("...", "", 1)
        if not all(c.isalpha() for c in rest):
            raise ValueError("einsum: subscripts are letters and one '...', not %r" % (sub,))
    return ins, out


def _expand_ellipsis(ins, out, ndims):
    """Replace "..." by letters not used elsewhere, as NumPy broadcasts it: the dimensions
    it stands for are the operands' leading ones, aligned at the right."""
    used = set("".join(ins) + (out or ""))
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    widest = 0
    for sub, nd in zip(ins, ndims):
        if "..." in sub:
            widest = max(widest, nd - (len(sub) - 3))
            if nd < len(sub) - 3:
                raise ValueError("einsum: subscripts %r name more dimensions than the operand's %d" % (sub, nd))
    ell = "".join(spare[:widest])
    new_ins = []
    for sub, nd in zip(ins, ndims):
        if "..." in sub:
            k = nd - (len(sub) - 3)
            sub = sub.replace("...", ell[widest - k:])
        new_ins.append(sub)
    if out is None:
        letters = "".join(new_ins)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    elif "..." in out:
        out = out.replace("...", ell)
    elif ell and any("..." in sub for sub in ins):
        pass  # "...ij->ij": the ellipsis' dimensions are summed
    return new_ins, out


def _diagonal(x, sub):
    """x with each repeated subscript taken once (its generalized diagonal), and the new
    subscripts: a NumPy view for arrays, the diagonal for a scipy.sparse matrix."""
    if len(set(sub)) == len(sub):
        return x, sub
    keep = "".join(dict.fromkeys(sub))
    try:
        import scipy.sparse as sp
        if sp.issparse(x):
            return _np.asarray(x.diagonal()), keep  # a matrix: "ii" is its only repeat
    except ImportError:  # pragma: no cover
        pass
    if isinstance(x, Tensor):
        x = x.to_numpy()
    return _np.einsum("%s->%s" % (sub, keep), _np.asarray(x)), keep


def einsum(spec, *operands, format=None, schedule=None, threads=1):
    """NumPy-style einsum computed by tessel: ``tessel.einsum("ij,j->i", B, c)``.

    Operands are NumPy arrays, scipy.sparse matrices (kept sparse: CSR/CSC used in
    place) or Tensors. Each letter becomes an index variable; operands are named A, B,
    ... in order (Tensors keep their names). Without "->" the output has the letters
    used once, in alphabetical order (as numpy.einsum). "..." stands for the leading
    dimensions as NumPy broadcasts them (equal extents; an operand may have fewer); a
    subscript repeated within one operand ("ii->i", "ii", "iij->ij") takes its diagonal
    first (a NumPy view; a sparse matrix's diagonal). The result is a NumPy array (a
    float for a scalar result), or, when `format` names a sparse output format, a
    scipy.sparse CSR matrix (matrices) or a Tensor. Values are float64 (integer NumPy
    inputs are converted).
    """
    ins, out = _split_einsum(spec, len(operands))
    ndims = []
    for x in operands:
        shape = getattr(x, "shape", None)
        ndims.append(len(shape) if shape is not None else _np.ndim(x))
    ins, out = _expand_ellipsis(ins, out, ndims)
    if len(set(out)) != len(out):
        raise ValueError("einsum: output subscripts %r repeat a letter" % (out,))
    for c in out:
        if c not in "".join(ins):
            raise ValueError("einsum: output subscript %r appears in no operand" % c)
    names = [chr(ord("A") + k) if k < 26 else "T%d" % k for k in range(len(operands))]
    tensors = []
    for k, (name, x, sub) in enumerate(zip(names, operands, ins)):
        nd = ndims[k]
        if nd != len(sub):
            raise ValueError("einsum: operand %d has %d dimensions but subscripts %r" % (k, nd, sub))
        x, sub = _diagonal(x, sub)
        ins[k] = sub
        if not isinstance(x, Tensor):
            try:
                import scipy.sparse as sp
                sparse = sp.issparse(x)
            except ImportError:  # pragma: no cover
                sparse = False
            if not sparse:
                x = _np.asarray(x)
                if x.dtype != _np.float64:
                    x = x.astype(_np.float64)
        tensors.append(as_tensor(x, name=name))
    letters = {c: IndexVar(c) for c in "".join(ins) + out}
    extent = {}
    for t, sub in zip(tensors, ins):
        for c, d in zip(sub, t.shape):
            if extent.setdefault(c, d) != d:
                raise DimensionError("einsum: subscript %r has extent %d and %d" % (c, extent[c], d))
    shape = tuple(extent[c] for c in out)
    fmt = _as_format(format, len(out))
    result = Tensor("Out", shape, fmt)
    rhs = None
    for t, sub in zip(tensors, ins):
        acc = t[tuple(letters[c] for c in sub)] if sub else t[()]
        rhs = acc if rhs is None else rhs * acc
    result[tuple(letters[c] for c in out)] = rhs
    result.evaluate(schedule=schedule, threads=threads)
    if fmt.is_dense:
        arr = result.to_numpy()
        return arr[()] if arr.ndim == 0 else arr
    return result.to_scipy("csr") if result.ndim == 2 else result


# -- distributed (MPI) ------------------------------------------------------------------
from .distributed import (  # noqa: E402,F401  (re-exported)
    DistributedKernel,
    DistTensor,
    Machine,
    distributed_compile,
    world_rank,
    world_size,
)
