// Tests for the JIT: compile, cache hits, flags in the key, diagnostics, the cache
// directory's creation and permissions, and detection of a corrupted cached object.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "runtime/sha256.h"
#include "tessel/error.h"
#include "tessel/jit.h"

namespace fs = std::filesystem;
using namespace tessel;

namespace {

const char* kAddSource = "int add(int a, int b) { return a + b; }\n";

/// Sets an environment variable for the scope, restoring the old value afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// A fresh, private cache directory per test (removed at the end).
class JitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tessel-jit-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    cache_ = root_ + "/cache";
    env_.emplace("TESSEL_CACHE_DIR", cache_);
  }
  void TearDown() override {
    env_.reset();
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }
  static JitOptions fastOptions() {
    JitOptions o;
    o.flags = {"-O1", "-std=gnu11"};
    return o;
  }
  static size_t countFiles(const std::string& dir, const std::string& ext) {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ext) ++n;
    return n;
  }

  std::string root_, cache_;
  std::optional<ScopedEnv> env_;
};

using AddFn = int (*)(int, int);

}  // namespace

TEST(Sha256, KnownVectors) {
  using detail::Sha256;
  EXPECT_EQ(Sha256::hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Incremental updates across block boundaries give the same digest.
  std::string million(1000000, 'a');
  Sha256 h;
  for (size_t i = 0; i < million.size(); i += 997) h.update(million.data() + i, std::min<size_t>(997, million.size() - i));
  EXPECT_EQ(h.hexDigest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_F(JitTest, CompilesAndCalls) {
  auto m = jitCompile(kAddSource, fastOptions());
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->cacheHit());
  auto add = reinterpret_cast<AddFn>(m->symbol("add"));
  EXPECT_EQ(add(2, 40), 42);
  EXPECT_EQ(add(-5, 3), -2);
  EXPECT_EQ(fs::path(m->path()).parent_path().string(), cache_);
  EXPECT_EQ(fs::path(m->path()).extension(), ".so");
  // The source and checksum sit next to the object; no temporaries are left.
  std::string stem = m->path().substr(0, m->path().size() - 3);
  EXPECT_TRUE(fs::exists(stem + ".c"));
  EXPECT_TRUE(fs::exists(stem + ".sum"));
  for (auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  // The checksum is the SHA-256 of the object.
  std::ifstream so(m->path(), std::ios::binary), sum(stem + ".sum");
  std::string soBytes((std::istreambuf_iterator<char>(so)), {}), recorded;
  sum >> recorded;
  EXPECT_EQ(recorded, detail::Sha256::hex(soBytes));
}

TEST_F(JitTest, MissingSymbolThrows) {
  auto m = jitCompile(kAddSource, fastOptions());
  EXPECT_THROW(m->symbol("no_such_function"), CompileError);
}

TEST_F(JitTest, SecondCompileIsFastCacheHit) {
  auto first = jitCompile(kAddSource, fastOptions());
  EXPECT_FALSE(first->cacheHit());
  auto t0 = std::chrono::steady_clock::now();
  auto second = jitCompile(kAddSource, fastOptions());
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(second->cacheHit());
  EXPECT_EQ(second->path(), first->path());
  EXPECT_LT(ms, 100.0);
  EXPECT_EQ(reinterpret_cast<AddFn>(second->symbol("add"))(1, 2), 3);
  // Also a hit after every handle has been closed.
  first.reset();
  second.reset();
  auto third = jitCompile(kAddSource, fastOptions());
  EXPECT_TRUE(third->cacheHit());
  EXPECT_EQ(reinterpret_cast<AddFn>(third->symbol("add"))(20, 22), 42);
}

TEST_F(JitTest, DifferentFlagsGiveDifferentObjects) {
  JitOptions a = fastOptions();
  JitOptions b = fastOptions();
  b.flags.push_back("-DTESSEL_UNUSED_MACRO=1");
  auto ma = jitCompile(kAddSource, a);
  auto mb = jitCompile(kAddSource, b);
  EXPECT_FALSE(mb->cacheHit());
  EXPECT_NE(ma->path(), mb->path());
  EXPECT_EQ(countFiles(cache_, ".so"), 2u);
  // A different source also gets its own object.
  auto mc = jitCompile("int sub(int a, int b) { return a - b; }\n", a);
  EXPECT_FALSE(mc->cacheHit());
  EXPECT_NE(mc->path(), ma->path());
}

TEST_F(JitTest, FlagsAreUsed) {
  JitOptions o = fastOptions();
  o.flags.push_back("-DTESSEL_K=7");
  auto m = jitCompile("int k(void) { return TESSEL_K; }\n", o);
  EXPECT_EQ(reinterpret_cast<int (*)()>(m->symbol("k"))(), 7);
}

TEST_F(JitTest, DefaultOptionsCompile) {
  // The default flags (-O3 -march=native -fopenmp -std=gnu11) work with the system compiler.
  auto m = jitCompile(
      "int sum(const int* a, int n) { int s = 0;\n"
      "#pragma omp parallel for reduction(+:s)\n"
      "  for (int i = 0; i < n; i++) s += a[i];\n  return s; }\n");
  int data[5] = {1, 2, 3, 4, 5};
  EXPECT_EQ(reinterpret_cast<int (*)(const int*, int)>(m->symbol("sum"))(data, 5), 15);
}

TEST_F(JitTest, SyntaxErrorReportsDiagnostics) {
  try {
    jitCompile("int broken(int a) { return a +; }\n", fastOptions());
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("error"), std::string::npos) << msg;
    EXPECT_NE(msg.find("-shared"), std::string::npos) << msg;  // the command line
    EXPECT_NE(msg.find(".c:1"), std::string::npos) << msg;     // the compiler's location
  }
  // No object, checksum or temporary is left behind.
  EXPECT_EQ(countFiles(cache_, ".so"), 0u);
  EXPECT_EQ(countFiles(cache_, ".sum"), 0u);
  for (auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

TEST_F(JitTest, LongDiagnosticsAreTruncated) {
  std::string src;
  for (int i = 0; i < 100; ++i) src += "int f" + std::to_string(i) + "(void) { return x" + std::to_string(i) + "; }\n";
  try {
    jitCompile(src, fastOptions());
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("omitted"), std::string::npos);
    EXPECT_LT(std::count(msg.begin(), msg.end(), '\n'), 50);
  }
}

TEST_F(JitTest, MissingCompiler) {
  JitOptions o = fastOptions();
  o.compiler = "tessel-no-such-compiler-xyz";
  try {
    jitCompile(kAddSource, o);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("not found"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tessel-no-such-compiler-xyz"), std::string::npos) << msg;
  }
  for (auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

TEST_F(JitTest, CompilerFromEnvironment) {
  {
    ScopedEnv cc("TESSEL_CC", std::string("tessel-no-such-compiler-env"));
    EXPECT_THROW(jitCompile(kAddSource, fastOptions()), CompileError);
  }
  // An explicit compiler wins over TESSEL_CC.
  ScopedEnv cc("TESSEL_CC", std::string("tessel-no-such-compiler-env"));
  JitOptions o = fastOptions();
  o.compiler = "cc";
  EXPECT_EQ(reinterpret_cast<AddFn>(jitCompile(kAddSource, o)->symbol("add"))(1, 1), 2);
}

TEST_F(JitTest, CacheDirectoryCreatedPrivate) {
  std::string nested = root_ + "/a/b/c";
  ScopedEnv env("TESSEL_CACHE_DIR", nested);
  EXPECT_EQ(jitCacheDirectory(), nested);
  struct stat st;
  ASSERT_EQ(::stat(nested.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((root_ + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);
  auto m = jitCompile(kAddSource, fastOptions());
  EXPECT_EQ(fs::path(m->path()).parent_path().string(), nested);
}

TEST_F(JitTest, CacheDirectoryFallbacks) {
  ScopedEnv noTessel("TESSEL_CACHE_DIR", std::nullopt);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", root_ + "/xdg");
    EXPECT_EQ(jitCacheDirectory(), root_ + "/xdg/tessel");
  }
  ScopedEnv noXdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv home("HOME", root_ + "/home");
  EXPECT_EQ(jitCacheDirectory(), root_ + "/home/.cache/tessel");
  EXPECT_TRUE(fs::is_directory(root_ + "/home/.cache/tessel"));
}

TEST_F(JitTest, CacheDirectoryRefusedIfUnsafe) {
  std::string open = root_ + "/open";
  ASSERT_EQ(::mkdir(open.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  {
    ScopedEnv env("TESSEL_CACHE_DIR", open);
    EXPECT_THROW(jitCacheDirectory(), CompileError);
    EXPECT_THROW(jitCompile(kAddSource, fastOptions()), CompileError);
  }
  ASSERT_EQ(::chmod(open.c_str(), 0720), 0);  // group-writable
  {
    ScopedEnv env("TESSEL_CACHE_DIR", open);
    EXPECT_THROW(jitCacheDirectory(), CompileError);
  }
  std::string file = root_ + "/file";
  std::ofstream(file) << "x";
  {
    ScopedEnv env("TESSEL_CACHE_DIR", file);
    try {
      jitCacheDirectory();
      FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
      EXPECT_NE(std::string(e.what()).find("not a directory"), std::string::npos) << e.what();
    }
  }
}

TEST_F(JitTest, CorruptedObjectIsRecompiled) {
  std::string path;
  {
    auto m = jitCompile(kAddSource, fastOptions());
    path = m->path();
  }  // closed before the file is touched
  {
    // Overwrite bytes in the middle of the object, in place.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f);
    f.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
    f.write("CORRUPTED!", 10);
  }
  auto m = jitCompile(kAddSource, fastOptions());
  EXPECT_FALSE(m->cacheHit());
  EXPECT_EQ(m->path(), path);
  EXPECT_EQ(reinterpret_cast<AddFn>(m->symbol("add"))(3, 4), 7);
  m.reset();
  EXPECT_TRUE(jitCompile(kAddSource, fastOptions())->cacheHit());

  // A missing checksum also forces a rebuild.
  fs::remove(path.substr(0, path.size() - 3) + ".sum");
  EXPECT_FALSE(jitCompile(kAddSource, fastOptions())->cacheHit());
  // So does a truncated object.
  fs::resize_file(path, 100);
  EXPECT_FALSE(jitCompile(kAddSource, fastOptions())->cacheHit());
}

TEST_F(JitTest, ConcurrentProcessesShareTheCache) {
  // Several processes compile the same new source at once; all must load a complete object
  // and the cache must end with exactly one object and no temporaries.
  const std::string src = "long mul3(long x) { return 3 * x; }\n";
  std::vector<pid_t> kids;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 1;
      try {
        auto m = jitCompile(src, fastOptions());
        rc = reinterpret_cast<long (*)(long)>(m->symbol("mul3"))(14) == 42 ? 0 : 2;
      } catch (...) {
        rc = 3;
      }
      ::_exit(rc);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  EXPECT_EQ(countFiles(cache_, ".so"), 1u);
  for (auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  EXPECT_TRUE(jitCompile(src, fastOptions())->cacheHit());
}

TEST_F(JitTest, RelativeCacheDirectoryBecomesAbsolute) {
  auto old = fs::current_path();
  fs::current_path(root_);
  {
    ScopedEnv env("TESSEL_CACHE_DIR", std::string("rel/cache"));
    std::string dir = jitCacheDirectory();
    EXPECT_EQ(dir, fs::canonical(root_).string() + "/rel/cache");
  }
  fs::current_path(old);
}
