// _tessel: the extension module under the Python package `tessel` (python/tessel/).
// Thin bindings of the C++ API; the Pythonic layer (NumPy/SciPy conversion, einsum,
// text-form evaluate) lives in python/tessel/__init__.py.
//
// Zero-copy inputs: a tensor made from a NumPy or SciPy buffer points its level arrays
// into that buffer and keeps the Python object alive through Storage::external (as
// mapBinary() does for a file mapping): such a tensor is read-only input for kernels.
#include <pybind11/numpy.h>
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "tessel/tessel.h"

namespace py = pybind11;
using namespace tessel;

namespace {

// ---------------------------------------------------------------------------------------
// Exceptions: tessel::Error's hierarchy as Python classes. UserError is also a
// ValueError; EnvironmentError and InternalError are RuntimeErrors.

struct Exceptions {
  PyObject *error, *user, *parse, *notation, *dimension, *format, *overflow, *file, *memoryLimit,
      *schedule, *distribution, *environment, *outOfMemory, *compile, *internal;
} exc;

PyObject* newException(py::module_& m, const char* name, std::vector<PyObject*> bases, const char* doc) {
  py::tuple b(bases.size());
  for (size_t i = 0; i < bases.size(); i++) b[i] = py::reinterpret_borrow<py::object>(bases[i]);
  std::string qualified = std::string("tessel.") + name;
  PyObject* e = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, b.ptr(), nullptr);
  if (!e) throw py::error_already_set();
  m.add_object(name, py::handle(e));
  return e;
}

void registerExceptions(py::module_& m) {
  exc.error = newException(m, "Error", {PyExc_Exception}, "Base of every tessel error.");
  exc.user = newException(m, "UserError", {exc.error, PyExc_ValueError},
                          "The input (expression, format, file, size, schedule) was wrong.");
  exc.parse = newException(m, "ParseError", {exc.user}, "Malformed expression text.");
  exc.notation = newException(m, "NotationError", {exc.user},
                              "Unknown, repeated or inconsistently used index variables or tensors.");
  exc.dimension = newException(m, "DimensionError", {exc.user},
                               "Tensor dimensions disagree with each other or with an index variable.");
  exc.format = newException(m, "FormatError", {exc.user}, "A format is invalid or does not fit the tensor.");
  exc.overflow = newException(m, "OverflowError", {exc.user, PyExc_OverflowError},
                              "A size or index does not fit the chosen index width.");
  exc.file = newException(m, "FileError", {exc.user, PyExc_OSError}, "A file could not be read or is malformed.");
  exc.memoryLimit = newException(m, "MemoryLimitError", {exc.user, PyExc_MemoryError},
                                 "The input needs more memory than the limit (TESSEL_MAX_MEMORY).");
  exc.schedule = newException(m, "ScheduleError", {exc.user}, "A schedule command is invalid.");
  exc.distribution = newException(m, "DistributionError", {exc.user}, "A machine grid or distribution is invalid.");
  exc.environment = newException(m, "EnvironmentError", {exc.error, PyExc_RuntimeError},
                                 "The system failed tessel (C compiler, cache directory, threads).");
  exc.outOfMemory = newException(m, "OutOfMemoryError", {exc.environment, PyExc_MemoryError},
                                 "An allocation within the memory limit failed.");
  exc.compile = newException(m, "CompileError", {exc.environment},
                             "The system C compiler failed or a kernel could not be loaded.");
  exc.internal = newException(m, "InternalError", {exc.error, PyExc_RuntimeError}, "A bug in tessel.");

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ParseError& e) {
      PyErr_SetString(exc.parse, e.what());
    } catch (const NotationError& e) {
      PyErr_SetString(exc.notation, e.what());
    } catch (const DimensionError& e) {
      PyErr_SetString(exc.dimension, e.what());
    } catch (const FormatError& e) {
      PyErr_SetString(exc.format, e.what());
    } catch (const tessel::OverflowError& e) {
      PyErr_SetString(exc.overflow, e.what());
    } catch (const FileError& e) {
      PyErr_SetString(exc.file, e.what());
    } catch (const MemoryLimitError& e) {
      PyErr_SetString(exc.memoryLimit, e.what());
    } catch (const ScheduleError& e) {
      PyErr_SetString(exc.schedule, e.what());
    } catch (const DistributionError& e) {
      PyErr_SetString(exc.distribution, e.what());
    } catch (const UserError& e) {
      PyErr_SetString(exc.user, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(exc.outOfMemory, e.what());
    } catch (const CompileError& e) {
      PyErr_SetString(exc.compile, e.what());
    } catch (const tessel::EnvironmentError& e) {
      PyErr_SetString(exc.environment, e.what());
    } catch (const InternalError& e) {
      PyErr_SetString(exc.internal, e.what());
    } catch (const tessel::Error& e) {
      PyErr_SetString(exc.error, e.what());
    }
  });
}

// ---------------------------------------------------------------------------------------
// Datatypes and buffers

Datatype datatypeOfDtype(const py::dtype& d) {
  const char k = d.kind();
  const auto size = d.itemsize();
  if (k == 'f' && size == 8) return Datatype::Float64;
  if (k == 'f' && size == 4) return Datatype::Float32;
  if (k == 'i' && size == 8) return Datatype::Int64;
  if (k == 'i' && size == 4) return Datatype::Int32;
  if (k == 'b' && size == 1) return Datatype::Bool;
  throw py::type_error("tessel holds float64, float32, int64, int32 or bool values, not " +
                       py::str(static_cast<const py::object&>(d)).cast<std::string>());
}

py::dtype dtypeOf(Datatype t) { return py::dtype::from_args(py::str(datatypeName(t))); }

IndexWidth widthOfDtype(const py::dtype& d, const char* what) {
  if (d.kind() == 'i' && d.itemsize() == 4) return IndexWidth::W32;
  if (d.kind() == 'i' && d.itemsize() == 8) return IndexWidth::W64;
  throw py::type_error(std::string(what) + " must be int32 or int64");
}

/// Keeps a Python object alive from C++ (Storage::external); drops it under the GIL.
std::shared_ptr<void> holdPython(py::object o) {
  auto* held = new py::object(std::move(o));
  return std::shared_ptr<void>(held, [](void* q) {
    auto* obj = static_cast<py::object*>(q);
    if (!Py_IsInitialized()) return;  // interpreter gone: leak rather than crash
    py::gil_scoped_acquire gil;
    delete obj;
  });
}

void requireContiguous(const py::array& a, const char* what) {
  if (!(a.flags() & py::array::c_style)) throw py::value_error(std::string(what) + " must be C-contiguous");
}

/// Point t's storage at arrays owned by `owner` (read-only use).
void installExternal(TensorBase& t, const tessel_tensor_t& raw, py::object owner) {
  Storage& s = t.impl()->storage;
  s.release();
  s.raw = raw;
  s.external = holdPython(std::move(owner));
  t.impl()->packed = true;
  t.impl()->pendingCoords.clear();
  t.impl()->pendingVals.clear();
}

/// A tensor whose arrays installExternal is about to provide. TensorBase's constructor
/// builds a readable empty tensor (a dense one all zeros: an O(size) allocation and
/// memset, wasted here), so it is made with empty dims and given its own afterwards; the
/// constructor's checks are made on the real dims first (a throwaway 1-entry-per-mode
/// tensor would not check the widths against them).
TensorBase unfilledTensor(const std::string& name, Datatype type, const std::vector<int64_t>& dims,
                          const Format& f) {
  const IndexWidth cw = f.crdWidth();
  for (size_t m = 0; m < dims.size(); m++) {
    if (dims[m] < 0) throw DimensionError("tensor " + name + ": dimension " + std::to_string(dims[m]) + " is negative");
    if (dims[m] > 0 && dims[m] - 1 > (cw == IndexWidth::W32 ? int64_t{INT32_MAX} : INT64_MAX))
      throw OverflowError("tensor " + name + ": dimension " + std::to_string(dims[m]) +
                          " does not fit 32-bit coordinates (use int64 indices)");
  }
  TensorBase t(name, type, std::vector<int64_t>(dims.size(), 0), f);
  t.impl()->var = TensorVar(name, type, dims, f);
  return t;
}

/// A dense tensor over a C-contiguous array: zero-copy (the array stays alive with the
/// tensor), or a malloc'd copy when `copy`.
TensorBase fromDense(py::array a, const std::string& name, bool copy) {
  requireContiguous(a, "the array");
  const Datatype type = datatypeOfDtype(a.dtype());
  if (a.ndim() > TESSEL_MAX_ORDER)
    throw FormatError("an array of " + std::to_string(a.ndim()) + " dimensions; at most " +
                      std::to_string(TESSEL_MAX_ORDER) + " are supported");
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  TensorBase t = unfilledTensor(name, type, dims, DenseFormat(static_cast<int>(dims.size())));
  tessel_tensor_t raw{};
  raw.order = static_cast<int32_t>(dims.size());
  for (size_t k = 0; k < dims.size(); k++) raw.dims[k] = dims[k];
  raw.vals_size = static_cast<int64_t>(a.size());
  if (copy) {
    const size_t bytes = static_cast<size_t>(a.nbytes());
    void* v = std::malloc(bytes ? bytes : 1);
    if (!v) throw OutOfMemoryError("tensor " + name + ": no memory for " + std::to_string(bytes) + " bytes");
    if (bytes) std::memcpy(v, a.data(), bytes);
    Storage& s = t.impl()->storage;
    s.release();
    raw.vals = v;
    s.raw = raw;
    t.impl()->packed = true;
    return t;
  }
  raw.vals = const_cast<void*>(a.data());
  installExternal(t, raw, a);
  return t;
}

/// The first row whose pos decreases or holds an index outside [0, inner), or -1. With
/// `canonical` (each row's indices strictly increase), only each row's first and last.
template <typename P, typename C>
int64_t firstBadRow(const void* pos, const void* crd, int64_t outer, int64_t inner, bool canonical) {
  const P* ptr = static_cast<const P*>(pos);
  const C* idx = static_cast<const C*>(crd);
  for (int64_t p = 0; p < outer; p++) {
    const int64_t lo = ptr[p], hi = ptr[p + 1];
    if (lo > hi) return p;
    if (canonical) {
      if (lo < hi && (idx[lo] < 0 || idx[hi - 1] >= inner)) return p;
    } else {
      bool ok = true;
      for (int64_t q = lo; q < hi; q++) ok &= idx[q] >= 0 && idx[q] < inner;
      if (!ok) return p;
    }
  }
  return -1;
}

/// A CSR (or, `columns`, CSC) tensor ("ds", "ds:1,0") over the three SciPy arrays, without
/// copying them.
/// Every index is range-checked, unless `canonical`: the caller vouches (SciPy's cached
/// has_canonical_format) that each row's indices strictly increase, so checking each
/// row's first and last index is enough: O(rows) instead of a pass over all entries.
/// `checked`: the caller checked these very arrays before (from_scipy remembers it on the
/// matrix), so nothing is checked again but indptr's ends.
TensorBase fromCompressed(const std::string& name, int64_t rows, int64_t cols, py::array indptr,
                          py::array indices, py::array data, bool columns, bool canonical, bool checked) {
  requireContiguous(indptr, "indptr");
  requireContiguous(indices, "indices");
  requireContiguous(data, "data");
  if (indptr.ndim() != 1 || indices.ndim() != 1 || data.ndim() != 1)
    throw py::value_error("indptr, indices and data must be one-dimensional");
  const Datatype type = datatypeOfDtype(data.dtype());
  const IndexWidth pw = widthOfDtype(indptr.dtype(), "indptr");
  const IndexWidth cw = widthOfDtype(indices.dtype(), "indices");
  Format f({LevelKind::Dense, LevelKind::Compressed}, columns ? std::vector<int>{1, 0} : std::vector<int>{0, 1}, pw, cw);
  TensorBase t = unfilledTensor(name, type, {rows, cols}, f);
  const int64_t outer = columns ? cols : rows, inner = columns ? rows : cols;
  if (indptr.size() != outer + 1)
    throw DimensionError("tensor " + name + ": indptr has " + std::to_string(indptr.size()) + " entries, expected " +
                         std::to_string(outer + 1));
  const void* const ptr = indptr.data();  // the raw pointers once: data() is an API call
  const void* const idx = indices.data();
  auto at = [&](int64_t p) -> int64_t {
    return pw == IndexWidth::W32 ? static_cast<const int32_t*>(ptr)[p] : static_cast<const int64_t*>(ptr)[p];
  };
  const int64_t nnz = at(outer);
  if (at(0) != 0 || nnz < 0 || nnz > indices.size() || nnz > data.size())
    throw DimensionError("tensor " + name + ": indptr does not fit indices and data");
  const int64_t bad = checked ? -1
                    : pw == IndexWidth::W32
                          ? (cw == IndexWidth::W32 ? firstBadRow<int32_t, int32_t>(ptr, idx, outer, inner, canonical)
                                                   : firstBadRow<int32_t, int64_t>(ptr, idx, outer, inner, canonical))
                          : (cw == IndexWidth::W32 ? firstBadRow<int64_t, int32_t>(ptr, idx, outer, inner, canonical)
                                                   : firstBadRow<int64_t, int64_t>(ptr, idx, outer, inner, canonical));
  if (bad >= 0) {
    if (at(bad) > at(bad + 1)) throw DimensionError("tensor " + name + ": indptr decreases at " + std::to_string(bad));
    throw DimensionError("tensor " + name + ": an index of " + std::string(columns ? "column " : "row ") +
                         std::to_string(bad) + " is out of range [0, " + std::to_string(inner) + ")");
  }
  tessel_tensor_t raw{};
  raw.order = 2;
  raw.dims[0] = outer;
  raw.dims[1] = inner;
  raw.pos[1] = const_cast<void*>(indptr.data());
  raw.pos_size[1] = outer + 1;
  raw.crd[1] = const_cast<void*>(indices.data());
  raw.crd_size[1] = nnz;
  raw.vals = const_cast<void*>(data.data());
  raw.vals_size = nnz;
  installExternal(t, raw, py::make_tuple(indptr, indices, data));
  return t;
}

/// A NumPy view of one of t's arrays ("pos", "crd" at a level, or "vals"), keeping the
/// tensor's storage alive. Valid until the tensor is packed or computed again.
py::array arrayView(const TensorBase& t, const std::string& kind, int level) {
  const tessel_tensor_t& r = t.raw();
  auto keep = new std::shared_ptr<TensorImpl>(t.impl());
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<TensorImpl>*>(p); });
  if (kind == "vals") {
    py::dtype d = dtypeOf(t.datatype());
    return py::array(d, {r.vals_size}, {}, r.vals, base);
  }
  if (level < 0 || level >= t.order()) throw py::index_error("no level " + std::to_string(level));
  const bool pos = kind == "pos";
  if (!pos && kind != "crd") throw py::value_error("array kind is pos, crd or vals");
  const IndexWidth w = pos ? t.format().posWidth() : t.format().crdWidth();
  py::dtype d = w == IndexWidth::W32 ? py::dtype::of<int32_t>() : py::dtype::of<int64_t>();
  if (!pos && t.format().level(level) == LevelKind::Bitmap) d = py::dtype::of<uint8_t>();
  void* data = pos ? r.pos[level] : r.crd[level];
  const int64_t n = pos ? r.pos_size[level] : r.crd_size[level];
  if (!data) return py::array(d, std::vector<py::ssize_t>{0});
  return py::array(d, {n}, {}, data, base);
}

/// Dense copy (row-major over the tensor's modes), in the tensor's datatype.
py::array toDense(const TensorBase& t) {
  py::dtype d = dtypeOf(t.datatype());
  std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end());
  py::array out(d, shape);
  const size_t es = static_cast<size_t>(datatypeSize(t.datatype()));
  auto* o = static_cast<unsigned char*>(out.mutable_data());
  std::memset(o, 0, static_cast<size_t>(out.nbytes()));
  const tessel_tensor_t& r = t.raw();
  const Format& f = t.format();
  bool identity = true;
  for (int k = 0; k < f.order(); k++) identity = identity && f.modeOfLevel(k) == k;
  if (f.isAllDense() && identity) {
    if (r.vals_size && r.vals) std::memcpy(o, r.vals, static_cast<size_t>(r.vals_size) * es);
    return out;
  }
  std::vector<int64_t> at;
  CooData c = t.toCoo(at);
  const int n = t.order();
  const auto* v = static_cast<const unsigned char*>(r.vals);
  for (int64_t e = 0; e < c.nnz(); e++) {
    int64_t lin = 0;
    for (int m = 0; m < n; m++) lin = lin * t.dim(m) + c.coords[e * n + m];
    std::memcpy(o + static_cast<size_t>(lin) * es, v + static_cast<size_t>(at[e]) * es, es);
  }
  return out;
}

py::tuple toCoo(const TensorBase& t) { return python::cooArrays(t.toCoo()); }

void setFromCoo(TensorBase& t, py::array_t<int64_t, py::array::c_style | py::array::forcecast> coords,
                py::array_t<double, py::array::c_style | py::array::forcecast> values) {
  CooData c;
  c.dims = t.dims();
  const int64_t n = values.size();
  if (coords.size() != n * t.order())
    throw DimensionError("tensor " + t.name() + ": " + std::to_string(n) + " values but " +
                         std::to_string(coords.size()) + " coordinates (order " + std::to_string(t.order()) + ")");
  c.coords.assign(coords.data(), coords.data() + coords.size());
  c.values.assign(values.data(), values.data() + n);
  t.setFromCoo(c);
}

void insert(TensorBase& t, const std::vector<int64_t>& coords, double value) {
  switch (t.datatype()) {
    case Datatype::Float64: Tensor<double>(t).insert(coords, value); break;
    case Datatype::Float32: Tensor<float>(t).insert(coords, static_cast<float>(value)); break;
    case Datatype::Int64: Tensor<int64_t>(t).insert(coords, static_cast<int64_t>(value)); break;
    case Datatype::Int32: Tensor<int32_t>(t).insert(coords, static_cast<int32_t>(value)); break;
    case Datatype::Bool: Tensor<bool>(t).insert(coords, value != 0); break;
  }
}

// ---------------------------------------------------------------------------------------
// Kernels

/// `A(..) += e` written as `A[...] += e` in Python: Access.__iadd__ returns this, and
/// Tensor.__setitem__ records it as an accumulation.
struct Accumulate {
  Access access;
  IndexExpr expr;
};

OutputRace raceOf(const std::string& s) {
  if (s == "no_races") return OutputRace::NoRaces;
  if (s == "ignore_races") return OutputRace::IgnoreRaces;
  if (s == "atomics") return OutputRace::Atomics;
  if (s == "temporary") return OutputRace::Temporary;
  throw ScheduleError("parallelize: unknown output race strategy '" + s +
                      "' (no_races, ignore_races, atomics, temporary)");
}

/// A compiled assignment with the tensors it runs on.
struct PyKernel {
  std::shared_ptr<Kernel> kernel;
  Assignment assignment;
  TensorBase output;  ///< the assignment's output access does not own it: this does
  Schedule schedule;
  std::string reason;  ///< why tessel chose the schedule (none given), else empty
  int threads = 1;
};

Assignment assignmentOf(const TensorBase& out, const std::optional<std::string>& semiring) {
  Assignment a = out.assignment();
  if (semiring && !semiring->empty()) a.semiring = Semiring::byName(*semiring);
  return a;
}

ScheduleChoice scheduleOf(const Assignment& a, const py::object& schedule, int threads) {
  // No schedule: tessel's choice (loop fusion by the cost model, the parallel default).
  if (schedule.is_none()) return defaultSchedule(a, threads);
  if (py::isinstance<py::str>(schedule)) {
    std::string text = schedule.cast<std::string>();
    if (text.empty()) return defaultSchedule(a, threads);
    return {parseSchedule(text, a), "", threads};
  }
  return {schedule.cast<Schedule>(), "", threads};
}

PyKernel compileKernel(const TensorBase& out, const py::object& schedule, int threads,
                       const std::optional<std::string>& semiring) {
  PyKernel k;
  k.assignment = assignmentOf(out, semiring);
  k.output = out;
  ScheduleChoice choice = scheduleOf(k.assignment, schedule, threads);
  k.schedule = std::move(choice.schedule);
  k.reason = std::move(choice.reason);
  k.threads = choice.threads;  // the choice may keep a small kernel on one thread
  py::gil_scoped_release nogil;
  k.kernel = Kernel::compile(k.assignment, k.schedule);
  return k;
}

/// The output of `text` as a new dense-dims guess: each mode's extent is that of its index
/// variable on the right-hand side (inputs by name in `tensors`).
std::vector<int64_t> inferOutputDims(const std::string& text, const std::map<std::string, TensorBase>& tensors) {
  std::vector<TensorUse> uses = scanTensors(text);
  std::map<std::string, TensorVar> vars;
  for (const TensorUse& u : uses) {
    if (u.isOutput) {
      vars[u.name] = TensorVar(u.name, Datatype::Float64, std::vector<int64_t>(u.order, 1), DenseFormat(u.order));
    } else {
      auto it = tensors.find(u.name);
      if (it == tensors.end()) throw NotationError("unknown tensor " + u.name + " (pass it as " + u.name + "=...)");
      vars[u.name] = it->second.tensorVar();
    }
  }
  Assignment a = parseAssignment(text, vars);
  std::map<std::string, int64_t> extent;
  for (const ExprNode* n : rhsAccesses(a))
    for (size_t m = 0; m < n->vars.size(); m++) {
      const std::string& v = n->vars[m].name();
      const int64_t d = n->tensor.dim(static_cast<int>(m));
      auto [it, fresh] = extent.emplace(v, d);
      if (!fresh && it->second != d)
        throw DimensionError("index variable " + v + " has extent " + std::to_string(it->second) + " and " +
                             std::to_string(d) + " (tensor " + n->tensor.name() + ")");
    }
  std::vector<int64_t> dims;
  const ExprNode& lhs = a.lhsNode();
  for (const IndexVar& v : lhs.vars) {
    auto it = extent.find(v.name());
    if (it == extent.end())
      throw NotationError("index variable " + v.name() + " of output " + lhs.tensor.name() +
                          " is used by no tensor on the right-hand side: its extent is unknown (pass the output)");
    dims.push_back(it->second);
  }
  return dims;
}

}  // namespace

py::tuple tessel::python::cooArrays(const CooData& c) {
  const int n = c.order();
  py::array_t<int64_t> coords({static_cast<py::ssize_t>(c.nnz()), static_cast<py::ssize_t>(n)});
  if (!c.coords.empty()) std::memcpy(coords.mutable_data(), c.coords.data(), c.coords.size() * sizeof(int64_t));
  py::array_t<double> vals(static_cast<py::ssize_t>(c.nnz()));
  if (c.nnz()) std::memcpy(vals.mutable_data(), c.values.data(), c.values.size() * sizeof(double));
  return py::make_tuple(coords, vals);
}

PYBIND11_MODULE(_tessel, m) {
  m.doc() = "tessel's C++ API (use the package tessel, not this module)";
  registerExceptions(m);

  py::class_<Format>(m, "Format", R"doc(A tensor format: one level kind per level, a mode order, index widths.

Format("ds") is CSR, Format("ds:1,0") CSC, Format("dd") a dense matrix (level letters:
d dense, s compressed, u compressed non-unique, q singleton, b bitmap).
Format("ds", mode_order=[1, 0], pos_width=64, crd_width=64) sets everything.)doc")
      .def(py::init([](const std::string& text, std::optional<std::vector<int>> modeOrder, int posWidth,
                       int crdWidth) {
             Format f = Format::parse(text);
             auto width = [](int w) {
               if (w != 32 && w != 64) throw FormatError("index widths are 32 or 64 bits, not " + std::to_string(w));
               return w == 32 ? IndexWidth::W32 : IndexWidth::W64;
             };
             return Format(f.levels(), modeOrder ? *modeOrder : f.modeOrder(), width(posWidth), width(crdWidth));
           }),
           py::arg("levels"), py::arg("mode_order") = py::none(), py::arg("pos_width") = 32, py::arg("crd_width") = 32)
      .def_property_readonly("order", &Format::order)
      .def_property_readonly("levels", [](const Format& f) {
        std::string s;
        for (LevelKind k : f.levels()) s += levelLetter(k);
        return s;
      }, "Level letters in storage order, e.g. 'ds'.")
      .def_property_readonly("mode_order", &Format::modeOrder)
      .def_property_readonly("pos_width", [](const Format& f) { return static_cast<int>(f.posWidth()); })
      .def_property_readonly("crd_width", [](const Format& f) { return static_cast<int>(f.crdWidth()); })
      .def_property_readonly("is_dense", &Format::isAllDense)
      .def("__str__", &Format::str)
      .def("__repr__", [](const Format& f) {
        std::string s = "Format('" + f.str() + "'";
        if (f.posWidth() != IndexWidth::W32 || f.crdWidth() != IndexWidth::W32)
          s += ", pos_width=" + std::to_string(static_cast<int>(f.posWidth())) +
               ", crd_width=" + std::to_string(static_cast<int>(f.crdWidth()));
        return s + ")";
      })
      .def(py::self == py::self)
      .def("__hash__", [](const Format& f) { return py::hash(py::str(f.str() + std::to_string(static_cast<int>(f.posWidth())) + std::to_string(static_cast<int>(f.crdWidth())))); });
  m.def("CSR", &CSR);
  m.def("CSC", &CSC);
  m.def("DCSR", &DCSR);
  m.def("DCSC", &DCSC);
  m.def("COO", &COO, py::arg("order") = 2);
  m.def("CSF", &CSF, py::arg("order") = 3);
  m.def("dense_format", &DenseFormat, py::arg("order"));
  m.def("fitting_widths", &withFittingWidths);
  m.def("default_file_format", &defaultBinaryFormat);

  py::class_<IndexVar>(m, "IndexVar", "An index variable (identity, not name, decides equality).")
      .def(py::init<>())
      .def(py::init<const std::string&>(), py::arg("name"))
      .def_property_readonly("name", &IndexVar::name)
      .def("__repr__", [](const IndexVar& v) { return "IndexVar('" + v.name() + "')"; })
      .def("__str__", &IndexVar::name)
      .def("__eq__", [](const IndexVar& a, const IndexVar& b) { return a == b; })
      .def("__hash__", [](const IndexVar& v) { return static_cast<py::ssize_t>(v.id()); });

  py::class_<IndexExpr>(m, "Expr", "An index expression (B[i, j] * c[j] + 1.0).")
      .def("__add__", [](const IndexExpr& a, const IndexExpr& b) { return a + b; })
      .def("__add__", [](const IndexExpr& a, double b) { return a + IndexExpr(b); })
      .def("__radd__", [](const IndexExpr& a, double b) { return IndexExpr(b) + a; })
      .def("__sub__", [](const IndexExpr& a, const IndexExpr& b) { return a - b; })
      .def("__sub__", [](const IndexExpr& a, double b) { return a - IndexExpr(b); })
      .def("__rsub__", [](const IndexExpr& a, double b) { return IndexExpr(b) - a; })
      .def("__mul__", [](const IndexExpr& a, const IndexExpr& b) { return a * b; })
      .def("__mul__", [](const IndexExpr& a, double b) { return a * IndexExpr(b); })
      .def("__rmul__", [](const IndexExpr& a, double b) { return IndexExpr(b) * a; })
      .def("__truediv__", [](const IndexExpr& a, const IndexExpr& b) { return a / b; })
      .def("__truediv__", [](const IndexExpr& a, double b) { return a / IndexExpr(b); })
      .def("__rtruediv__", [](const IndexExpr& a, double b) { return IndexExpr(b) / a; })
      .def("__neg__", [](const IndexExpr& a) { return -a; })
      .def("__str__", &IndexExpr::str)
      .def("__repr__", [](const IndexExpr& e) { return "Expr(" + e.str() + ")"; });
  py::class_<Access, IndexExpr>(m, "Access", "A tensor accessed by index variables: B[i, j].")
      .def_property_readonly("vars", &Access::vars)
      .def("__iadd__", [](const Access& a, const IndexExpr& e) { return Accumulate{a, e}; })
      .def("__iadd__", [](const Access& a, double e) { return Accumulate{a, IndexExpr(e)}; });
  py::class_<Accumulate>(m, "Accumulate", "`A[i] += e` before Tensor.__setitem__ records it.")
      .def_property_readonly("access", [](const Accumulate& a) { return a.access; })
      .def_property_readonly("expr", [](const Accumulate& a) { return a.expr; });
  m.def("sum", [](const IndexVar& v, const IndexExpr& e) { return tessel::sum(v, e); }, py::arg("var"),
        py::arg("expr"), "sum(j, e): e summed over every value of j (an explicit reduction).");

  py::class_<Schedule>(m, "Schedule", R"doc(Loop transformations (tessel/schedule.h). Methods chain:
Schedule().split(i, i0, i1, 32).parallelize(i0). The text form
"split(i,i0,i1,32),parallelize(i0,cpu_thread,no_races)" is accepted wherever a schedule is.)doc")
      .def(py::init<>())
      .def("split", &Schedule::split, py::return_value_policy::reference_internal)
      .def("divide", &Schedule::divide, py::return_value_policy::reference_internal)
      .def("pos", py::overload_cast<const IndexVar&, const IndexVar&, const Access&>(&Schedule::pos),
           py::return_value_policy::reference_internal)
      .def("pos", py::overload_cast<const IndexVar&, const IndexVar&, const std::string&>(&Schedule::pos),
           py::return_value_policy::reference_internal)
      .def("fuse", &Schedule::fuse, py::return_value_policy::reference_internal)
      .def("reorder", &Schedule::reorder, py::return_value_policy::reference_internal)
      .def("precompute", py::overload_cast<const IndexVar&>(&Schedule::precompute),
           py::return_value_policy::reference_internal)
      .def("precompute", py::overload_cast<const IndexExpr&, const std::string&>(&Schedule::precompute),
           py::return_value_policy::reference_internal)
      .def("precompute",
           py::overload_cast<const IndexExpr&, const std::string&, const IndexVar&>(&Schedule::precompute),
           py::return_value_policy::reference_internal)
      .def("parallelize",
           [](Schedule& s, const IndexVar& i, const std::string& race) -> Schedule& {
             return s.parallelize(i, CPUThread, raceOf(race));
           },
           py::arg("var"), py::arg("race") = "no_races", py::return_value_policy::reference_internal)
      .def("unroll", &Schedule::unroll, py::return_value_policy::reference_internal)
      .def("bound",
           [](Schedule& s, const IndexVar& i, const IndexVar& ib, int64_t n, bool exact) -> Schedule& {
             return s.bound(i, ib, n, exact ? BoundKind::MaxExact : BoundKind::UpperBound);
           },
           py::arg("var"), py::arg("bound_var"), py::arg("extent"), py::arg("exact") = true,
           py::return_value_policy::reference_internal)
      .def("__str__", &Schedule::str)
      .def("__repr__", [](const Schedule& s) { return "Schedule('" + s.str() + "')"; });

  py::class_<TensorBase>(m, "TensorBase", "A tensor bound to storage (use tessel.Tensor).")
      .def(py::init([](const std::string& name, const std::vector<int64_t>& dims, const Format& f, py::dtype d) {
             return TensorBase(name, datatypeOfDtype(d), dims, f);
           }))
      .def_property_readonly("name", &TensorBase::name)
      .def_property_readonly("shape", [](const TensorBase& t) { return py::tuple(py::cast(t.dims())); })
      .def_property_readonly("dtype", [](const TensorBase& t) { return dtypeOf(t.datatype()); })
      .def_property_readonly("format", &TensorBase::format)
      .def_property_readonly("order", &TensorBase::order)
      .def_property_readonly("stored", &TensorBase::storedCount)
      .def_property_readonly("borrowed", [](const TensorBase& t) { return t.impl()->storage.external != nullptr; })
      .def("same", [](const TensorBase& a, const TensorBase& b) { return a.impl() == b.impl(); })
      .def("insert", &insert)
      .def("pack", &TensorBase::pack)
      .def("at", &TensorBase::at)
      .def("to_coo", &toCoo)
      .def("set_from_coo", &setFromCoo)
      .def("to_dense", &toDense)
      .def("array", &arrayView, py::arg("kind"), py::arg("level") = 0)
      .def("convert", &TensorBase::convert, py::arg("format"), py::arg("name") = "")
      .def("access", [](const TensorBase& t, const std::vector<IndexVar>& vars) { return Access(t, vars); })
      .def("assign", [](const TensorBase& t, const std::vector<IndexVar>& vars, const IndexExpr& e) {
        Access a(t, vars);
        a = e;
      })
      .def("assign", [](const TensorBase& t, const std::vector<IndexVar>& vars, double e) {
        Access a(t, vars);
        a = IndexExpr(e);
      })
      .def("accumulate", [](const TensorBase& t, const std::vector<IndexVar>& vars, const IndexExpr& e) {
        Access a(t, vars);
        a += e;
      })
      .def("assignment", [](const TensorBase& t) { return t.assignment().str(); })
      .def("has_assignment", [](const TensorBase& t) { return t.impl()->assignment.has_value(); })
      .def("emit", [](const TensorBase& t, const py::object& schedule, int threads, std::optional<std::string> semiring) {
        Assignment a = assignmentOf(t, semiring);
        Schedule s = scheduleOf(a, schedule, threads).schedule;
        return Kernel::emitC(a, s);
      })
      .def("write", [](const TensorBase& t, const std::string& path) {
        py::gil_scoped_release nogil;
        if (isBinaryTensorPath(path))
          writeBinary(path, t);
        else
          writeTensorFile(path, t.toCoo());
      });

  m.def("from_dense", &fromDense, py::arg("array"), py::arg("name"), py::arg("copy") = false);
  m.def("from_compressed", &fromCompressed, py::arg("name"), py::arg("rows"), py::arg("cols"), py::arg("indptr"),
        py::arg("indices"), py::arg("data"), py::arg("columns"), py::arg("canonical") = false, py::arg("checked") = false);
  m.def("read", [](const std::string& path, std::optional<Format> format, const std::string& name, bool map) {
    py::gil_scoped_release nogil;
    if (isBinaryTensorPath(path) && !format) return map ? mapBinary(path, name) : readBinary(path, name);
    FileContents c = readTensorFile(path);
    Format f = format ? *format
                      : withFittingWidths(defaultBinaryFormat(c.data.order()), c.data.dims, c.data.nnz());
    TensorBase t(name, Datatype::Float64, c.data.dims, f);
    t.setFromCoo(c.data);
    return t;
  });
  m.def("parse", [](const std::string& text, const std::map<std::string, TensorBase>& tensors) {
    Assignment a = parseAssignment(text, tensors);
    auto it = tensors.find(scanTensors(text).at(0).name);  // output first
    if (it == tensors.end()) throw NotationError("no output tensor for " + text);
    TensorBase out = it->second;
    out.setAssignment(a);
    return out;
  }, "Parse `text`, bind its names to `tensors`, record the assignment in its output; returns the output.");
  m.def("scan", [](const std::string& text) {
    py::list out;
    for (const TensorUse& u : scanTensors(text)) out.append(py::make_tuple(u.name, u.order, u.isOutput, u.accumulated));
    return out;
  }, "(name, order, is_output, accumulated) for each tensor in `text`, output first.");
  m.def("infer_output_dims", &inferOutputDims);

  py::class_<PyKernel>(m, "Kernel", "A compiled assignment (tessel.compile, Tensor.compile).")
      .def_property_readonly("source", [](const PyKernel& k) { return k.kernel->source(); }, "The generated C code.")
      .def_property_readonly("compile_seconds", [](const PyKernel& k) { return k.kernel->compileSeconds(); })
      .def_property_readonly("cache_hit", [](const PyKernel& k) { return k.kernel->cacheHit(); })
      .def_property_readonly("schedule", [](const PyKernel& k) { return k.schedule.str(); })
      .def_property_readonly("reason", [](const PyKernel& k) { return k.reason; },
                             "Why tessel chose the schedule, when none was given (as `tessel run --time` says).")
      .def_property_readonly("threads", [](const PyKernel& k) { return k.threads; })
      .def_property_readonly("assignment", [](const PyKernel& k) { return k.assignment.str(); })
      .def_property_readonly("output", [](const PyKernel& k) { return k.output; })
      .def("run", [](const PyKernel& k, std::optional<int> threads) {
        RunTimes t;
        {
          py::gil_scoped_release nogil;
          t = k.kernel->run(k.assignment, threads ? *threads : k.threads);
        }
        return py::make_tuple(t.assembleSeconds, t.computeSeconds);
      }, py::arg("threads") = py::none(), "Assemble and compute the output; returns (assemble, compute) seconds.");
  m.def("compile", &compileKernel, py::arg("output"), py::arg("schedule") = py::none(), py::arg("threads") = 1,
        py::arg("semiring") = py::none());
  python::registerDistributed(m);
}
