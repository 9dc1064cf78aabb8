// Distributed tensor files under mpirun (ctest MPI.files.npN, 1-4 ranks): the parallel
// read places exactly what the serial read plus setFromCoo places, for every kind of
// distribution, on hand-written files (known entries), symmetric, pattern, empty, fewer
// lines than ranks, one row spanning every rank's byte range, a 3-tensor, and the shared
// SuiteSparse matrices when present; a bad line on the last rank fails every rank with
// its "path:line"; the parallel write is byte for byte writeTensorFile's of the gathered
// entries, and atomic. Every rank runs every test (the same collectives in the same
// order); a test fails when it fails on any rank.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>

#include "runtime/spmd/comm.h"
#include "tessel/distributed.h"
#include "tessel/error.h"
#include "tessel/io.h"

using namespace tessel;

namespace {

std::string g_dir;  // the same scratch directory on every rank

std::string scratch(const std::string& name) { return g_dir + "/" + name; }

/// Rank 0 writes `text` to `name`; every rank returns its path after the barrier.
std::string file(const std::string& name, const std::string& text) {
  const std::string path = scratch(name);
  if (comm::rank() == 0) std::ofstream(path, std::ios::binary) << text;
  comm::barrier();
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int worldGridSize() { return comm::size(); }

struct Placement {
  std::string dist;
  Grid grid;
  bool sparse;
};

std::vector<Placement> placements(int order) {
  const int p = worldGridSize();
  std::vector<Placement> out;
  if (order == 2) {
    for (const char* d : {"xy->x", "xy->y", "xy->*", ""}) out.push_back({d, Grid(p), false});
    for (const char* d : {"xy->x", "xy->~x", "(xy)->~f", "xy->*", ""}) out.push_back({d, Grid(p), true});
    if (p == 4) {
      out.push_back({"xy->xy", Grid(std::vector<int>{2, 2}), false});
      out.push_back({"xy->x*", Grid(std::vector<int>{2, 2}), false});
    }
  } else {
    for (const char* d : {"xyz->x", "xyz->z", ""}) out.push_back({d, Grid(p), false});
    for (const char* d : {"xyz->x", "xyz->~x", "(xy)z->~f", "(xyz)->~f"}) out.push_back({d, Grid(p), true});
  }
  return out;
}

DistTensor make(const Placement& pl, const std::vector<int64_t>& dims) {
  const std::string sparseFormat = dims.size() == 2 ? "ds" : "dss";
  return pl.sparse ? DistTensor("T", dims, pl.dist, pl.grid, Format::parse(sparseFormat))
                   : DistTensor("T", dims, pl.dist, pl.grid);
}

/// This rank's pieces of a and b are equal (boxes, entries and values, bit for bit).
void expectSamePieces(const DistTensor& a, const DistTensor& b, const std::string& what) {
  ASSERT_EQ(a.piece(), b.piece()) << what;
  ASSERT_EQ(a.allPieces(), b.allPieces()) << what;
  if (a.sparse()) {
    ASSERT_EQ(a.sparsePiece().defined(), b.sparsePiece().defined()) << what;
    if (!a.sparsePiece().defined()) return;
    CooData x = a.sparsePiece().toCoo(), y = b.sparsePiece().toCoo();
    EXPECT_EQ(x.dims, y.dims) << what;
    EXPECT_EQ(x.coords, y.coords) << what;
    EXPECT_EQ(x.values, y.values) << what;
  } else {
    ASSERT_EQ(a.localSize(), b.localSize()) << what;
    for (int64_t i = 0; i < a.localSize(); i++) ASSERT_EQ(a.data()[i], b.data()[i]) << what << " at " << i;
  }
}

/// Every distribution: the parallel read equals the serial read and setFromCoo.
void checkReadEveryWay(const std::string& path) {
  const CooData serial = readTensorFile(path).data;
  for (const Placement& pl : placements(serial.order())) {
    DistTensor a = make(pl, serial.dims), b = make(pl, serial.dims);
    a.read(path);
    b.setFromCoo(serial);
    expectSamePieces(a, b, path + " " + pl.dist + (pl.sparse ? " sparse" : " dense"));
  }
  // The shares, rank after rank, are the serial reader's entries in its order.
  TensorFilePart part = readTensorFilePart(path);
  EXPECT_EQ(part.totalEntries, serial.nnz());
  EXPECT_EQ(part.entries.dims, serial.dims);
}

/// A .mtx with known entries (a duplicate, a zero value) and its dense form by hand.
const char* kSmall =
    "%%MatrixMarket matrix coordinate real general\n"
    "% a comment\n"
    "4 3 6\n"
    "1 1 1.5\n"
    "4 3 -2\n"
    "\n"
    "2 2 3\n"
    "1 1 0.25\n"
    "3 1 0\n"
    "4 1 7e-3\n";

TEST(DistFiles, SmallKnownEntries) {
  const std::string path = file("small.mtx", kSmall);
  checkReadEveryWay(path);
  DistTensor t("T", {4, 3}, "xy->x", Grid(worldGridSize()));
  t.read(path);
  CooData all = t.gather();
  if (comm::rank() == 0) {
    // Non-zeros in row-major order, the duplicate (1,1) summed: 1.5 + 0.25.
    EXPECT_EQ(all.coords, (std::vector<int64_t>{0, 0, 1, 1, 3, 0, 3, 2}));
    EXPECT_EQ(all.values, (std::vector<double>{1.75, 3, 7e-3, -2}));
  }
}

TEST(DistFiles, SymmetricPatternEmptyFewLines) {
  checkReadEveryWay(file("sym.mtx",
                         "%%MatrixMarket matrix coordinate real symmetric\n5 5 4\n1 1 2\n3 1 -1\n5 2 4\n5 5 1\n"));
  checkReadEveryWay(file("skew.mtx", "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 2 -7\n"));
  checkReadEveryWay(file("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 4 3\n1 4\n3 1\n1 4\n"));
  checkReadEveryWay(file("empty.mtx", "%%MatrixMarket matrix coordinate real general\n6 5 0\n"));
  checkReadEveryWay(file("one.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n2 3 9\n"));
  checkReadEveryWay(file("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n"));
}

TEST(DistFiles, OneRowAcrossEveryRank) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n7 300 302\n";
  for (int j = 1; j <= 300; j++) text += "4 " + std::to_string(j) + " " + std::to_string(j * 0.5) + "\n";
  text += "1 1 1\n7 300 2\n";
  checkReadEveryWay(file("row.mtx", text));
}

TEST(DistFiles, ThreeTensor) {
  std::string text = "# a 3-tensor\n";
  for (int i = 1; i <= 40; i++)
    text += std::to_string(i % 7 + 1) + " " + std::to_string(i % 5 + 1) + " " + std::to_string(i % 3 + 1) + " " +
            std::to_string(i) + ".5\n";
  checkReadEveryWay(file("t3.tns", text));
}

TEST(DistFiles, SharedMatrices) {
  int found = 0;
  for (const char* m : {"bcsstk13", "lp_ship04l", "karate", "bcsstk01", "ash219"}) {
    const std::string path = std::string(TESSEL_DATA_DIR) + "/matrices/" + m + ".mtx";
    if (::access(path.c_str(), R_OK) != 0) continue;
    found++;
    checkReadEveryWay(path);
  }
  if (!found) GTEST_SKIP() << "no shared matrices under " << TESSEL_DATA_DIR << "/matrices";
}

TEST(DistFiles, BadLineOnTheLastRankFailsEveryRank) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n9 9 40\n";
  for (int k = 0; k < 39; k++) text += std::to_string(k % 9 + 1) + " " + std::to_string(k % 4 + 1) + " 1.0\n";
  text += "3 x 1.0\n";  // line 42, in the last rank's range
  const std::string path = file("bad.mtx", text);
  DistTensor t("T", {9, 9}, "xy->x", Grid(worldGridSize()));
  try {
    t.read(path);
    ADD_FAILURE() << "no error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.where(), path + ":42");
    EXPECT_NE(std::string(e.what()).find("non-numeric column index 'x'"), std::string::npos) << e.what();
  }
  // Too few entries: every rank names the last line.
  const std::string shortPath = file("short.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 1\n2 2 2\n");
  EXPECT_THROW(t.read(shortPath), FileError);
  // Other dims than the tensor's.
  DistTensor u("U", {5, 5}, "xy->x", Grid(worldGridSize()));
  EXPECT_THROW(u.read(file("small2.mtx", kSmall)), DimensionError);
}

/// The parallel write against writeTensorFile of the gathered (row-major) entries.
void checkWriteEveryWay(const std::string& input, const std::string& ext) {
  const CooData serial = readTensorFile(input).data;
  int n = 0;
  for (const Placement& pl : placements(serial.order())) {
    if (ext == ".mtx" && serial.order() != 2) continue;
    DistTensor t = make(pl, serial.dims);
    t.read(input);
    const std::string out = scratch("w" + std::to_string(n) + ext), ref = scratch("r" + std::to_string(n++) + ext);
    t.write(out);
    CooData gathered = pl.sparse ? CooData() : t.gather();
    if (comm::rank() == 0) {
      if (pl.sparse) {  // the stored entries, row-major
        TensorBase whole("T", Datatype::Float64, serial.dims, Format::parse(serial.order() == 2 ? "ds" : "dss"));
        whole.setFromCoo(serial);
        gathered = whole.toCoo();
      }
      writeTensorFile(ref, gathered);
      EXPECT_EQ(slurp(out), slurp(ref)) << input << " " << pl.dist << (pl.sparse ? " sparse" : " dense") << ext;
    }
    comm::barrier();
  }
}

TEST(DistFiles, WriteEqualsSerialWriter) {
  checkWriteEveryWay(file("small3.mtx", kSmall), ".mtx");
  checkWriteEveryWay(file("small4.mtx", kSmall), ".tns");
  checkWriteEveryWay(file("empty2.mtx", "%%MatrixMarket matrix coordinate real general\n6 5 0\n"), ".tns");
  checkWriteEveryWay(file("empty3.mtx", "%%MatrixMarket matrix coordinate real general\n6 5 0\n"), ".mtx");
  std::string text;
  for (int i = 1; i <= 30; i++)
    text += std::to_string(i % 6 + 1) + " " + std::to_string(i % 4 + 1) + " " + std::to_string(i % 3 + 1) + " " +
            std::to_string(i) + ".25\n";
  checkWriteEveryWay(file("t4.tns", text), ".tns");
  const std::string path = std::string(TESSEL_DATA_DIR) + "/matrices/bcsstk13.mtx";
  if (::access(path.c_str(), R_OK) == 0) checkWriteEveryWay(path, ".mtx");
}

/// No file in `dir` whose name holds the temporaries' marker.
bool noTemporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return true;
  bool none = true;
  while (dirent* e = ::readdir(d))
    if (std::string(e->d_name).find(".tessel-tmp.") != std::string::npos) none = false;
  ::closedir(d);
  return none;
}

TEST(DistFiles, WriteIsAtomic) {
  DistTensor t("T", {4, 3}, "xy->x", Grid(worldGridSize()));
  t.read(file("small5.mtx", kSmall));
  // No such directory: nothing is created.
  EXPECT_THROW(t.write(scratch("missing/out.mtx")), FileError);
  // The target is a directory: the rename fails after every rank wrote; the temporary goes.
  const std::string target = scratch("adir.mtx");
  if (comm::rank() == 0) ::mkdir(target.c_str(), 0755);
  comm::barrier();
  EXPECT_THROW(t.write(target), FileError);
  comm::barrier();
  struct stat st;
  EXPECT_TRUE(::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
  EXPECT_TRUE(noTemporaries(g_dir));
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints gtest's report; every rank's verdict decides the exit code.
  if (comm::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  std::string dir;
  if (comm::rank() == 0) {
    char tmpl[] = "/tmp/tessel-dist-files-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  g_dir = comm::broadcast(0, dir);
  int rc = RUN_ALL_TESTS();
  const int worst = static_cast<int>(comm::maxOver(static_cast<int64_t>(rc)));
  comm::barrier();
  if (comm::rank() == 0) std::system(("rm -rf '" + g_dir + "'").c_str());
  if (rc != 0) std::fprintf(stderr, "rank %d: failed\n", comm::rank());
  comm::finalize();
  return worst;
}
