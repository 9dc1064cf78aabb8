// _tessel's distributed part: tessel/distributed.h's machine, tensors and kernels, for
// python/tessel/distributed.py (machines from text or tuples, global NumPy/SciPy data,
// gather to NumPy or SciPy, MPI finalization at exit). Collective calls release the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "tessel/tessel.h"

namespace py = pybind11;
using namespace tessel;

namespace {

py::tuple boxTuple(const std::vector<Extent>& box) {
  py::tuple t(box.size());
  for (size_t k = 0; k < box.size(); k++) t[k] = py::make_tuple(box[k].lo, box[k].hi);
  return t;
}

py::object pieceObject(const std::optional<std::vector<Extent>>& p) {
  if (!p) return py::none();
  return boxTuple(*p);
}

CooData cooOf(const std::vector<int64_t>& dims, const std::string& name,
              py::array_t<int64_t, py::array::c_style | py::array::forcecast> coords,
              py::array_t<double, py::array::c_style | py::array::forcecast> values) {
  CooData c;
  c.dims = dims;
  const int64_t n = values.size(), order = static_cast<int64_t>(dims.size());
  if (coords.size() != n * order)
    throw DimensionError("tensor " + name + ": " + std::to_string(n) + " values but " + std::to_string(coords.size()) +
                         " coordinates (order " + std::to_string(order) + ")");
  c.coords.assign(coords.data(), coords.data() + coords.size());
  c.values.assign(values.data(), values.data() + n);
  // Checked here for dense tensors too (their setFromCoo keeps what lies in the piece).
  for (int64_t e = 0; e < n; e++)
    for (int64_t k = 0; k < order; k++) {
      const int64_t x = c.coords[static_cast<size_t>(e * order + k)];
      if (x < 0 || x >= dims[static_cast<size_t>(k)])
        throw DimensionError("tensor " + name + ": coordinate " + std::to_string(x) + " of mode " +
                             std::to_string(k) + " is out of range (extent " + std::to_string(dims[static_cast<size_t>(k)]) + ")");
    }
  return c;
}

py::dict statsDict(const DistRunStats& s) {
  py::dict d;
  d["seconds"] = s.seconds;
  d["compute"] = s.computeSeconds;
  d["comm"] = s.commSeconds;
  d["max_bytes_sent"] = s.maxBytesSent;
  py::dict per;
  for (const DistRunStats::PerTensor& t : s.tensors) {
    py::dict e;
    e["max_bytes_received"] = t.maxBytesReceived;
    e["total_bytes_sent"] = t.totalBytesSent;
    e["formula_bytes"] = t.formulaBytes;
    e["messages"] = t.messages;
    e["broadcasts"] = t.broadcasts;
    e["reductions"] = t.reductions;
    per[py::str(t.name)] = e;
  }
  d["tensors"] = per;
  return d;
}

}  // namespace

void tessel::python::registerDistributed(py::module_& m) {
  m.def("world_rank", &worldRank, "This process's MPI rank (0 without a launcher); starts MPI under one.");
  m.def("world_size", &worldSize, "The number of ranks (1 without a launcher); starts MPI under one.");
  m.def("finalize_distributed", &finalizeDistributed,
        "MPI_Finalize when MPI was initialized and is not finalized yet (else nothing).");
  m.def("abort_all_ranks", [](int code, const std::string& message) { abortAllRanks(code, message); },
        "End every rank with `code`, printing `message` from this one (not collective).");
  m.def("sum_over_ranks", [](int64_t v) {
    py::gil_scoped_release nogil;
    return sumOverRanks(v);
  }, "Collective: the sum of v over all ranks.");
  m.def("max_over_ranks", [](int64_t v) {
    py::gil_scoped_release nogil;
    return reduceOverRanks(v, true);
  }, "Collective: the largest v over all ranks.");

  py::class_<Machine>(m, "Machine", "The ranks (a grid) and the threads inside each rank.")
      .def(py::init([](const std::string& grid, int threads) {
             Machine mc = Machine::parse(grid, threads);
             mc.checkRanks();
             return mc;
           }),
           py::arg("grid"), py::arg("threads") = 1)
      .def_static("world", &Machine::world, py::arg("threads") = 1)
      .def_property_readonly("grid", [](const Machine& mc) { return py::tuple(py::cast(mc.grid.dims())); })
      .def_property_readonly("threads", [](const Machine& mc) { return mc.threads; })
      .def_property_readonly("size", [](const Machine& mc) { return mc.grid.size(); })
      .def("__repr__", [](const Machine& mc) {
        return "tessel.Machine('" + mc.grid.str() + "', threads=" + std::to_string(mc.threads) + ")";
      });

  py::class_<DistTensor>(m, "DistTensor", "A distributed float64 tensor (use tessel.DistTensor).")
      .def(py::init([](const std::string& name, const std::vector<int64_t>& dims, const std::string& distribution,
                       const std::vector<int>& grid, std::optional<Format> format) {
             if (format) return DistTensor(name, dims, distribution, Grid(grid), *format);
             return DistTensor(name, dims, distribution, Grid(grid));
           }),
           py::arg("name"), py::arg("dims"), py::arg("distribution"), py::arg("grid"), py::arg("format") = py::none())
      .def_property_readonly("name", &DistTensor::name)
      .def_property_readonly("shape", [](const DistTensor& t) { return py::tuple(py::cast(t.dims())); })
      .def_property_readonly("distribution", [](const DistTensor& t) { return t.distribution().str(); })
      .def_property_readonly("grid", [](const DistTensor& t) { return py::tuple(py::cast(t.grid().dims())); })
      .def_property_readonly("sparse", &DistTensor::sparse)
      .def_property_readonly("format", [](const DistTensor& t) -> py::object {
        if (!t.sparse()) return py::none();
        return py::cast(t.sparsePieceFormat());
      })
      .def_property_readonly("piece", [](const DistTensor& t) { return pieceObject(t.piece()); })
      .def("all_pieces", [](const DistTensor& t) {
        std::vector<std::optional<std::vector<Extent>>> all;
        {
          py::gil_scoped_release nogil;
          all = t.allPieces();
        }
        py::list out;
        for (const auto& p : all) out.append(pieceObject(p));
        return out;
      })
      .def_property_readonly("local_size", &DistTensor::localSize)
      .def("local_dense", [](DistTensor& t) -> py::object {
        // A view of this rank's dense piece (row-major over its box) that keeps the
        // tensor's storage alive (the handle shares it).
        if (t.sparse()) throw py::value_error("tensor " + t.name() + " is sparse: its piece is local_sparse()");
        const auto& box = t.piece();
        if (!box) return py::none();
        std::vector<py::ssize_t> shape;
        for (const Extent& e : *box) shape.push_back(static_cast<py::ssize_t>(e.size()));
        auto keep = new DistTensor(t);
        py::capsule base(keep, [](void* p) { delete static_cast<DistTensor*>(p); });
        double* data = t.data();
        if (!data) return py::array_t<double>(shape);  // an empty piece: nothing to view
        return py::array_t<double>(shape, data, base);
      })
      .def("local_sparse", [](const DistTensor& t) -> py::object {
        if (!t.sparse()) throw py::value_error("tensor " + t.name() + " is dense: its piece is local_dense()");
        const TensorBase& p = t.sparsePiece();
        if (!p.defined()) return py::none();
        return py::cast(p);
      })
      .def("set_from_coo", [](DistTensor& t, py::array_t<int64_t, py::array::c_style | py::array::forcecast> coords,
                              py::array_t<double, py::array::c_style | py::array::forcecast> values) {
        CooData c = cooOf(t.dims(), t.name(), coords, values);
        py::gil_scoped_release nogil;
        t.setFromCoo(c);
      })
      .def("set_from_parts", [](DistTensor& t, py::array_t<int64_t, py::array::c_style | py::array::forcecast> coords,
                                py::array_t<double, py::array::c_style | py::array::forcecast> values) {
        CooData c = cooOf(t.dims(), t.name(), coords, values);
        py::gil_scoped_release nogil;
        t.setFromParts(c);
      })
      .def("read", [](DistTensor& t, const std::string& path) {
        py::gil_scoped_release nogil;
        t.read(path);
      })
      .def("write", [](const DistTensor& t, const std::string& path) {
        py::gil_scoped_release nogil;
        t.write(path);
      })
      .def("gather", [](const DistTensor& t) {
        CooData c;
        {
          py::gil_scoped_release nogil;
          c = t.gather();
        }
        return python::cooArrays(c);
      });

  py::class_<DistributedKernel, std::shared_ptr<DistributedKernel>>(m, "DistributedKernel",
                                                                      "A compiled distributed assignment.")
      .def_static("compile", [](const std::string& expr, const std::vector<DistTensor>& tensors, const Machine& mc,
                                const std::string& schedule) {
        py::gil_scoped_release nogil;
        return DistributedKernel::compile(expr, tensors, mc, schedule);
      }, py::arg("expr"), py::arg("tensors"), py::arg("machine"), py::arg("schedule") = "")
      .def("run", [](const DistributedKernel& k, const std::vector<DistTensor>& tensors) {
        DistRunStats s;
        {
          py::gil_scoped_release nogil;
          s = k.run(tensors);
        }
        return statsDict(s);
      })
      .def("emit", &DistributedKernel::emit)
      .def_property_readonly("schedule", &DistributedKernel::schedule);
}
