// Shared helpers for tests.
#include "support/test_support.h"

#include <fstream>

#include "runtime/index_arrays.h"

#include <filesystem>
#include <set>
#include <stdexcept>

#include <stdlib.h>

#ifndef TESSEL_DATA_DIR
#define TESSEL_DATA_DIR "../shared/data"
#endif

namespace tessel::testing {

CooData entries(const std::vector<int64_t>& dims, const std::vector<std::pair<std::vector<int64_t>, double>>& es) {
  CooData c;
  c.dims = dims;
  for (const auto& [at, v] : es) c.add(at, v);
  return c;
}

std::vector<double> denseArray(const CooData& c) {
  size_t size = 1;
  for (int64_t d : c.dims) size *= static_cast<size_t>(d);
  std::vector<double> out(size);
  for (int64_t e = 0; e < c.nnz(); e++) {
    size_t at = 0;
    for (int m = 0; m < c.order(); m++)
      at = at * static_cast<size_t>(c.dims[m]) + static_cast<size_t>(c.coords[e * c.order() + m]);
    out[at] += c.values[e];
  }
  return out;
}

CooData randomCoo(const std::vector<int64_t>& dims, double density, std::mt19937_64& rng,
                  bool duplicates, bool integers) {
  CooData c;
  c.dims = dims;
  int64_t total = 1;
  for (auto d : dims) total *= d;
  std::uniform_real_distribution<double> u(0, 1), val(-2, 2);
  std::uniform_int_distribution<int> ival(-3, 3);
  std::vector<int64_t> coord(dims.size());
  for (int64_t lin = 0; lin < total; lin++) {
    if (u(rng) >= density) continue;
    int64_t r = lin;
    for (int m = static_cast<int>(dims.size()) - 1; m >= 0; m--) {
      coord[m] = r % dims[m];
      r /= dims[m];
    }
    int copies = duplicates && u(rng) < 0.3 ? 2 : 1;
    for (int k = 0; k < copies; k++) c.add(coord, integers ? ival(rng) : val(rng));
  }
  // Shuffle so packing sees unsorted input.
  std::vector<size_t> perm(c.values.size());
  for (size_t i = 0; i < perm.size(); i++) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  CooData s;
  s.dims = dims;
  std::vector<int64_t> cs(dims.size());
  for (size_t e : perm) {
    for (size_t m = 0; m < dims.size(); m++) cs[m] = c.coords[e * dims.size() + m];
    s.add(cs, c.values[e]);
  }
  return s;
}

std::vector<int64_t> indexArray(const void* a, int64_t n, IndexWidth w) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[i] = readIndex(a, w, i);
  return v;
}

TensorBase makeTensor(const std::string& name, const CooData& data, const Format& f, Datatype type) {
  TensorBase t(name, type, data.dims, f);
  t.setFromCoo(data);
  return t;
}

namespace {
/// The assignment `expr` over the inputs and an output of `outFormat`.
Assignment bindAssignment(const std::string& expr, const std::vector<Operand>& inputs, const Format& outFormat,
                          Datatype outType, TensorBase& out) {
  std::vector<TensorUse> uses = scanTensors(expr);
  std::map<std::string, TensorBase> tensors;
  for (auto& in : inputs) tensors[in.name] = makeTensor(in.name, in.data, in.format, in.type);
  // Output dims: from the input mode indexed by the same variable name.
  std::map<std::string, TensorBase> probe = tensors;
  std::vector<int64_t> outDims(uses[0].order, 1);
  probe[uses[0].name] = TensorBase(uses[0].name, outType, outDims, DenseFormat(uses[0].order));
  Assignment pa = parseAssignment(expr, probe);
  const auto& lhsVars = pa.lhs.node().vars;
  for (size_t m = 0; m < lhsVars.size(); m++)
    for (const ExprNode* n : rhsAccesses(pa))
      for (size_t q = 0; q < n->vars.size(); q++)
        if (n->vars[q].name() == lhsVars[m].name()) outDims[m] = n->tensor.dims()[q];
  out = TensorBase(uses[0].name, outType, outDims, outFormat);
  tensors[uses[0].name] = out;
  return parseAssignment(expr, tensors);
}

}  // namespace

std::string storageProblem(const TensorBase& t) {
  const tessel_tensor_t& r = t.raw();
  const Format& f = t.format();
  int64_t positions = 1;  // of the level above
  for (int k = 0; k < f.order(); k++) {
    const int64_t dim = t.dims()[f.modeOfLevel(k)];
    const std::string at = t.name() + " level " + std::to_string(k) + ": ";
    LevelKind kind = f.level(k);
    if (kind == LevelKind::Dense) {
      positions *= dim;
      continue;
    }
    if (kind == LevelKind::Bitmap) {  // one uint8 flag per slot in crd[k], each 0 or 1
      positions *= dim;
      if (r.crd_size[k] != positions || (positions > 0 && !r.crd[k])) return at + "flags have the wrong size";
      for (int64_t q = 0; q < positions; q++)
        if (static_cast<const uint8_t*>(r.crd[k])[q] > 1) return at + "flag not 0 or 1 at " + std::to_string(q);
      continue;
    }
    int64_t entries = positions;  // a Singleton has one per parent position
    if (kind != LevelKind::Singleton) {
      if (!r.pos[k] || r.pos_size[k] != positions + 1) return at + "pos has the wrong size";
      if (readIndex(r.pos[k], f.posWidth(), 0) != 0) return at + "pos does not start at 0";
      for (int64_t p = 0; p < positions; p++)
        if (readIndex(r.pos[k], f.posWidth(), p + 1) < readIndex(r.pos[k], f.posWidth(), p))
          return at + "pos decreases at " + std::to_string(p);
      entries = readIndex(r.pos[k], f.posWidth(), positions);
    }
    if (r.crd_size[k] != entries) return at + "crd_size differs from pos";
    for (int64_t q = 0; q < entries; q++) {
      int64_t c = readIndex(r.crd[k], f.crdWidth(), q);
      if (c < 0 || c >= dim) return at + "coordinate out of range at " + std::to_string(q);
    }
    if (kind == LevelKind::Compressed || kind == LevelKind::CompressedNU)
      for (int64_t p = 0; p < positions; p++)
        for (int64_t q = readIndex(r.pos[k], f.posWidth(), p) + 1; q < readIndex(r.pos[k], f.posWidth(), p + 1); q++) {
          int64_t prev = readIndex(r.crd[k], f.crdWidth(), q - 1), c = readIndex(r.crd[k], f.crdWidth(), q);
          if (c < prev || (kind == LevelKind::Compressed && c == prev))
            return at + "coordinates not sorted" + (kind == LevelKind::Compressed ? " and unique" : "") +
                   " in segment " + std::to_string(p);
        }
    positions = entries;
  }
  if (r.vals_size != positions) return t.name() + ": vals_size " + std::to_string(r.vals_size) + " for " +
                                        std::to_string(positions) + " positions";
  return "";
}

namespace {

/// Compile `a` with `s`, run on `threads`, and compare with the reference evaluator;
/// a failure names `what` and shows the generated code. The kernel runs three times into
/// the same output (once for +=, which adds each time) and both the first result and the
/// last are checked: the second run finds the trimmed first result's arrays, the third
/// the room the second kept.
::testing::AssertionResult runMatches(const Assignment& a, const TensorBase& out, const Schedule& s, int threads,
                                      double tol, const std::string& what) {
  CooData expected = referenceEvaluate(a);
  auto kernel = Kernel::compile(a, s);
  for (int run = 1; run <= (a.accumulate ? 1 : 3); run++) {
    kernel->run(a, threads);
    if (run == 2) continue;
    std::string why;
    if (!tensorsClose(expected, out.toCoo(), tol, tol, &why) || !(why = storageProblem(out)).empty())
      return ::testing::AssertionFailure() << what << ", run " << run << ": " << why << "\n" << Kernel::emitC(a, s);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

::testing::AssertionResult matchesReference(const std::string& expr, const std::vector<Operand>& inputs,
                                            const Format& outFormat, Datatype outType, double tol) {
  TensorBase out;
  Assignment a = bindAssignment(expr, inputs, outFormat, outType, out);
  return runMatches(a, out, {}, 0, tol, expr + " with output format " + outFormat.str());
}

::testing::AssertionResult matchesReferenceScheduled(
    const std::string& expr, const std::vector<Operand>& inputs, const Format& outFormat,
    const std::function<std::string(const std::vector<IndexVar>& order)>& schedule, int threads, double tol) {
  TensorBase out;
  Assignment a = bindAssignment(expr, inputs, outFormat, Datatype::Float64, out);
  std::string text = schedule(Kernel::loopOrder(a));
  return runMatches(a, out, parseSchedule(text, a), threads, tol,
                    expr + " with output format " + outFormat.str() + ", schedule " + text + ", " +
                        std::to_string(threads) + " threads");
}

::testing::AssertionResult matchesReferenceEachRound(const std::string& expr,
                                                     const std::vector<std::vector<Operand>>& rounds,
                                                     const Format& outFormat, int threads,
                                                     const std::function<void(size_t, const TensorBase&)>& after) {
  TensorBase out;
  Assignment a = bindAssignment(expr, rounds.at(0), outFormat, Datatype::Float64, out);
  Schedule s = threads > 1 ? defaultParallelSchedule(a, threads) : Schedule{};
  auto kernel = Kernel::compile(a, s);
  for (size_t r = 0; r < rounds.size(); r++) {
    for (const Operand& in : rounds[r])
      for (const ExprNode* n : rhsAccesses(a))
        if (n->tensor.name() == in.name) TensorBase(n->binding).setFromCoo(in.data);
    CooData expected = referenceEvaluate(a);
    kernel->run(a, threads);
    std::string why;
    if (!tensorsClose(expected, out.toCoo(), 1e-9, 1e-9, &why) || !(why = storageProblem(out)).empty())
      return ::testing::AssertionFailure() << expr << " into " << outFormat.str() << ", round " << r << " on "
                                           << threads << " threads: " << why << "\n"
                                           << Kernel::emitC(a, s);
    if (after) after(r, out);
  }
  return ::testing::AssertionSuccess();
}

std::filesystem::path makeScratchDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  return tmpl;
}

void removeScratchDir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

Assignment makeAssignment(const IndexExpr& lhs, const IndexExpr& rhs, bool acc) {
  Assignment a;
  a.lhs = lhs;
  a.rhs = rhs;
  a.accumulate = acc;
  return a;
}

std::string dataDir() {
  std::string d = TESSEL_DATA_DIR;
  return std::filesystem::is_directory(d) ? d : "";
}

void expectScheduleRejected(const std::map<std::string, TensorBase>& tensors, const std::string& expr,
                            const std::string& schedule, const std::vector<std::string>& parts) {
  SCOPED_TRACE(expr + " with " + schedule);
  Assignment a = parseAssignment(expr, tensors);
  try {
    Kernel::emitC(a, parseSchedule(schedule, a));
    ADD_FAILURE() << "accepted";
  } catch (const ScheduleError& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

namespace {
uint32_t crc32(const std::string& s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}
}  // namespace

std::string gzipStored(const std::string& data) {
  std::string g = {'\x1f', '\x8b', '\x08', '\0', '\0', '\0', '\0', '\0', '\0', '\x03'};
  g += '\x01';  // final block, stored
  uint16_t len = static_cast<uint16_t>(data.size()), nlen = static_cast<uint16_t>(~len);
  g += static_cast<char>(len & 0xff);
  g += static_cast<char>(len >> 8);
  g += static_cast<char>(nlen & 0xff);
  g += static_cast<char>(nlen >> 8);
  g += data;
  for (uint32_t v : {crc32(data), static_cast<uint32_t>(data.size())})
    for (int i = 0; i < 4; ++i) g += static_cast<char>((v >> (8 * i)) & 0xff);
  return g;
}

void expectAllThreads(const std::string& expr, const std::vector<Operand>& in, const Format& out,
                      const std::string& schedule) {
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE(expr + " with " + schedule + " on " + std::to_string(threads) + " threads");
    EXPECT_TRUE(matchesReferenceScheduled(
        expr, in, out, [&](const std::vector<IndexVar>&) { return schedule; }, threads));
  }
}

std::string ScratchDirTest::file(const std::string& name, const std::string& bytes) const {
  std::ofstream(path(name), std::ios::binary) << bytes;
  return path(name);
}

const std::vector<std::string>& productChains() {
  static const std::vector<std::string> chains = {
      "A(i,l) = B(i,j) * C(j,k) * D(k,l)",           "A(i,l) = B(i,j) * C(i,k) * D(j,k) * E(j,l)",
      "A(i,k) = B(i,j) * C(j,k) * D(j,k)",           "A(i,l) = B(i,j) * C(j,k) * D(k,l) * E(i,l)",
      "A(i,j) = B(i,k) * C(k,l) * D(l,j)",           "A(i,l) = B(i,k) * C(k,j) * D(k,j) * E(j,l)",
      "a(i) = B(i,j) * C(j,k) * x(k)",               "A(i,j,l) = B(i,j,k) * C(k,l)"};
  return chains;
}

}  // namespace tessel::testing
