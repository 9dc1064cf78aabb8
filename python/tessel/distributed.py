"""Distributed tensor algebra over MPI (DISTAL / SpDISTAL) from Python.

Run the same script on every rank (``mpirun -np 4 /usr/bin/python3 spmv.py``); without a
launcher the process is a one-rank machine and needs no MPI::

    import numpy as np, scipy.sparse as sp, tessel

    m = tessel.Machine()                                  # every rank, as a 1-D grid
    P = m.size
    Bs = sp.random(1000, 800, density=0.01, format="csr", random_state=1)
    x = np.arange(800.0)                                  # the same global data on every rank
    B = tessel.DistTensor("B", Bs.shape, "xy->x", m, format="ds")  # CSR pieces, rows in blocks
    B.from_scipy_global(Bs)
    c = tessel.DistTensor("c", (800,), "", m)             # replicated
    c.from_numpy_global(x)
    a = tessel.DistTensor("a", (1000,), "x->x", m)
    k = tessel.distributed_compile("a(i) = B(i,j) * c(j)", [a, B, c], m,
                                   "divide(i,io,ii,%d),distribute(io),communicate({a,B,c},io)" % P)
    stats = k.run()                                       # collective
    y = a.gather()                                        # rank 0: a NumPy array; others: None

Every call marked *collective* must be made by every rank, in the same order.

MPI's lifetime: tessel starts MPI (MPI_Init_thread) the first time it needs the ranks
under a launcher, unless MPI is already initialized (e.g. by ``from mpi4py import MPI``,
which then also finalizes it). When tessel started MPI it finalizes it at interpreter exit
(atexit); mpi4py imported afterwards sees MPI initialized and leaves finalization to tessel.
Under more than one rank an uncaught exception ends every rank (sys.excepthook), so that
the others do not wait for it forever.
"""

import atexit as _atexit
import os as _os
import sys as _sys

import numpy as _np

from . import _tessel

__all__ = ["Machine", "DistTensor", "DistributedKernel", "distributed_compile", "world_rank", "world_size"]

_mpi_state = {"checked": False, "owner": False}


def _finalize():
    if _mpi_state["owner"]:
        _mpi_state["owner"] = False
        _tessel.finalize_distributed()


def _install_abort_hook():
    """An uncaught exception on one rank ends every rank (after the usual traceback),
    instead of leaving the others waiting in a collective call forever."""
    previous = _sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        try:
            _sys.stderr.flush()
        finally:
            _tessel.abort_all_ranks(1, "tessel: rank %d: uncaught %s: ending every rank"
                                    % (_tessel.world_rank(), kind.__name__))

    _sys.excepthook = hook


def _ensure_mpi():
    """Start MPI once (under a launcher) and decide who finalizes it."""
    if _mpi_state["checked"]:
        return
    mpi = _sys.modules.get("mpi4py.MPI")
    already = False
    if mpi is not None:
        try:
            already = bool(mpi.Is_initialized())
        except Exception:  # pragma: no cover
            already = False
    size = _tessel.world_size()  # starts MPI under a launcher (no-op without one)
    _mpi_state["checked"] = True
    if size > 1:
        _install_abort_hook()
    if not already:
        # tessel initialized MPI (or nobody did): end it at exit. finalize_distributed does
        # nothing when MPI was never initialized or is already finalized.
        _mpi_state["owner"] = True
        _atexit.register(_finalize)


def world_rank():
    """This process's rank (0 without a launcher)."""
    _ensure_mpi()
    return _tessel.world_rank()


def world_size():
    """The number of ranks (1 without a launcher)."""
    _ensure_mpi()
    return _tessel.world_size()


def _grid_text(grid):
    if isinstance(grid, str):
        return grid
    if isinstance(grid, (int, _np.integer)):
        return str(int(grid))
    if isinstance(grid, (tuple, list)):
        if not grid:
            raise ValueError("a machine grid needs at least one dimension")
        return "x".join(str(int(d)) for d in grid)
    raise TypeError("a grid is text ('2x2'), an int or a tuple of ints, not %r" % (grid,))


class Machine:
    """The machine: a grid of ranks, and `threads` threads inside each rank.

    ``Machine()`` is every rank running as a one-dimensional grid; ``Machine("2x2")``,
    ``Machine(4)`` or ``Machine((2, 2))`` a grid that must have as many ranks as are
    running (DistributionError otherwise).
    """

    __slots__ = ("_m",)

    def __init__(self, grid=None, threads=1):
        _ensure_mpi()
        if grid is None:
            self._m = _tessel.Machine.world(int(threads))
        else:
            self._m = _tessel.Machine(_grid_text(grid), int(threads))

    @property
    def grid(self):
        """The grid's dimensions, as a tuple."""
        return self._m.grid

    @property
    def threads(self):
        return self._m.threads

    @property
    def size(self):
        """The number of ranks in the grid."""
        return self._m.size

    @property
    def rank(self):
        """This process's rank."""
        return _tessel.world_rank()

    def __repr__(self):
        return repr(self._m)


def _grid_dims(machine_or_grid):
    if isinstance(machine_or_grid, Machine):
        return list(machine_or_grid.grid)
    if machine_or_grid is None:
        return [world_size()]
    text = _grid_text(machine_or_grid)
    return [int(d) for d in text.lower().split("x")]


class DistTensor:
    """A float64 tensor whose pieces live on the ranks that own them.

    ``DistTensor(name, shape, distribution, machine_or_grid, format=None)``:
    `distribution` in tessel's notation ("xy->x" rows in blocks, "xy->xy" 2-D blocks,
    "x->*" or "" replicated; for sparse tensors also "xy->~x" and "(xy)->~f", by
    non-zeros); `machine_or_grid` a :class:`Machine` or a grid ("2x2", 4, (2, 2));
    `format` ("ds" for CSR, a :class:`tessel.Format`) makes each rank's piece sparse.
    """

    __slots__ = ("_t",)

    def __init__(self, name, shape, distribution="xy->x", machine_or_grid=None, format=None):
        _ensure_mpi()
        from . import _as_format
        shape = [int(d) for d in shape]
        fmt = None if format is None else _as_format(format, len(shape))
        self._t = _tessel.DistTensor(name, shape, distribution or "", _grid_dims(machine_or_grid), fmt)

    # -- properties -------------------------------------------------------------------
    @property
    def name(self):
        return self._t.name

    @property
    def shape(self):
        return self._t.shape

    @property
    def ndim(self):
        return len(self._t.shape)

    @property
    def distribution(self):
        """The distribution as text ("" when replicated on every rank)."""
        return self._t.distribution

    @property
    def grid(self):
        return self._t.grid

    @property
    def sparse(self):
        """True when the pieces are stored in a sparse format."""
        return self._t.sparse

    @property
    def format(self):
        """The pieces' :class:`tessel.Format` (None for a dense tensor)."""
        return self._t.format

    @property
    def piece(self):
        """This rank's box: a tuple of (lo, hi) per dimension, or None (it holds no piece)."""
        return self._t.piece

    def all_pieces(self):
        """Every rank's box (a list indexed by rank, None where a rank holds nothing). Collective."""
        return self._t.all_pieces()

    def __repr__(self):
        return "tessel.DistTensor(%r, %r, %r, grid=%r%s)" % (
            self.name, self.shape, self.distribution, self.grid,
            "" if not self.sparse else ", format=%r" % str(self.format))

    # -- this rank's piece --------------------------------------------------------------
    def local(self):
        """This rank's piece (None when it holds none).

        Dense: a NumPy float64 view of the piece (no copy; shape the box's sizes, global
        coordinates offset by ``piece``'s lo); writes go to the tensor. Sparse: a
        :class:`tessel.Tensor` of the piece's format, coordinates relative to ``piece``'s lo.
        """
        if self.sparse:
            from . import Tensor
            p = self._t.local_sparse()
            return None if p is None else Tensor._wrap(p)
        return self._t.local_dense()

    # -- contents -----------------------------------------------------------------------
    def from_numpy_global(self, array):
        """Fill from the whole tensor as a NumPy array that every rank passes alike
        (not collective). Each rank keeps its piece: a dense tensor copies its box, a
        sparse one keeps the array's non-zeros. Returns self."""
        a = _np.asarray(array, dtype=_np.float64)
        if tuple(a.shape) != tuple(self.shape):
            from . import DimensionError
            raise DimensionError("tensor %s has shape %r, the array %r" % (self.name, self.shape, a.shape))
        if self.sparse:
            nz = _np.nonzero(a)
            coords = _np.stack([c.astype(_np.int64) for c in nz], axis=1) if a.ndim else _np.zeros((0, 0), _np.int64)
            self._t.set_from_coo(coords.reshape(-1, max(a.ndim, 1)), a[nz])
            return self
        view = self._t.local_dense()
        if view is not None and view.size:
            view[...] = a[tuple(slice(lo, hi) for lo, hi in self.piece)]
        return self

    def from_scipy_global(self, matrix):
        """Fill from a scipy.sparse matrix that every rank passes alike (not collective).
        Returns self."""
        coo = matrix.tocoo()
        coords = _np.stack([coo.row.astype(_np.int64), coo.col.astype(_np.int64)], axis=1)
        return self.set_from_coo(coords, coo.data)

    def set_from_coo(self, coords, values):
        """Fill from global entries (coords of shape (nnz, ndim), values) that every rank
        passes alike; each rank keeps those in its piece, duplicates summed (not
        collective; DistTensor::setFromCoo). Returns self."""
        coords = _np.asarray(coords, dtype=_np.int64).reshape(-1)
        self._t.set_from_coo(coords, _np.asarray(values, dtype=_np.float64).reshape(-1))
        return self

    def set_from_parts(self, coords, values):
        """Collective: every rank passes a share of the entries (any share, e.g. its
        slice of a file); the entries travel to the ranks whose pieces hold them. Returns self."""
        coords = _np.asarray(coords, dtype=_np.int64).reshape(-1)
        self._t.set_from_parts(coords, _np.asarray(values, dtype=_np.float64).reshape(-1))
        return self

    def read(self, path):
        """Collective: read a .mtx/.tns (in parallel, each rank its byte range) or .tsb file
        into the pieces. Returns self."""
        self._t.read(_os.fspath(path))
        return self

    def write(self, path):
        """Collective: write the tensor to one .mtx/.tns/.tsb file (every rank its part)."""
        self._t.write(_os.fspath(path))

    def gather_coo(self):
        """Collective: on rank 0 (coords (nnz, ndim) int64, values float64) of every
        non-zero (dense) or stored entry (sparse) in row-major order; None on other ranks."""
        coords, values = self._t.gather()
        return (coords, values) if _tessel.world_rank() == 0 else None

    def gather(self):
        """Collective: the whole tensor on rank 0, None on the others.

        Dense tensors: a NumPy array of the tensor's shape. Sparse matrices: a
        scipy.sparse CSR matrix (stored entries, explicit zeros kept); sparse tensors of
        other orders: (coords, values) as :meth:`gather_coo`.
        """
        got = self.gather_coo()
        if got is None:
            return None
        coords, values = got
        if not self.sparse:
            out = _np.zeros(self.shape, dtype=_np.float64)
            if values.size:
                out[tuple(coords[:, k] for k in range(self.ndim))] = values
            return out
        if self.ndim == 2:
            import scipy.sparse as sp
            m = sp.coo_matrix((values, (coords[:, 0], coords[:, 1])), shape=self.shape).tocsr()
            return m
        return coords, values


class DistributedKernel:
    """A distributed assignment compiled for its tensors and machine
    (:func:`distributed_compile`)."""

    __slots__ = ("_k", "_tensors", "expr")

    def __init__(self, k, tensors, expr):
        self._k, self._tensors, self.expr = k, tensors, expr

    def run(self, tensors=None):
        """Collective: compute the output; returns the run's statistics as a dict:
        ``seconds`` (whole run), ``compute`` (leaf kernels), ``comm`` (transfers), each the
        slowest rank's; ``max_bytes_sent``; ``tensors``: per tensor name
        ``max_bytes_received``, ``total_bytes_sent``, ``formula_bytes``, ``messages``,
        ``broadcasts``, ``reductions``. `tensors`: others with the same names, shapes and
        distributions (default: those compiled with)."""
        ts = self._tensors if tensors is None else _tensor_list(tensors)
        return self._k.run([t._t for t in ts])

    def emit(self):
        """The SPMD program with its communication, and the leaf kernel's C code."""
        return self._k.emit()

    @property
    def schedule(self):
        """The schedule used (the given one, or owner computes by the output's distribution)."""
        return self._k.schedule

    def __repr__(self):
        return "tessel.DistributedKernel(%r, schedule=%r)" % (self.expr, self.schedule)


def _tensor_list(tensors):
    if isinstance(tensors, dict):
        tensors = list(tensors.values())
    out = list(tensors)
    for t in out:
        if not isinstance(t, DistTensor):
            raise TypeError("distributed kernels take tessel.DistTensor objects, not %r" % (t,))
    return out


def distributed_compile(expr, tensors, machine=None, schedule=""):
    """Collective: compile `expr` (index notation over the tensors' names, float64) for
    `machine` (default: every rank as a 1-D grid) with a distributed schedule (text:
    divide, split, reorder, fuse, pos, distribute, communicate, rotate, substitute,
    parallelize, unroll). An empty schedule owner-computes by the output's distribution.
    `tensors`: a list (or dict) of :class:`DistTensor`. Returns a :class:`DistributedKernel`."""
    ts = _tensor_list(tensors)
    if machine is None:
        machine = Machine()
    elif not isinstance(machine, Machine):
        machine = Machine(machine)
    k = _tessel.DistributedKernel.compile(expr, [t._t for t in ts], machine._m, schedule or "")
    return DistributedKernel(k, ts, expr)
