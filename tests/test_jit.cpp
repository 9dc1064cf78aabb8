// Tests for the JIT: compile, cache hits, flags in the key, diagnostics, the cache
// directory's creation and permissions, and detection of a corrupted cached object.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

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

TEST_F(JitTest, KernelsAreCheckedUnderAddressSanitizer) {
#if !defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the host is not built with AddressSanitizer (scripts/sanitize.sh)";
#else
  // Under ASan the JIT instruments the kernels it compiles too: a store one past a heap
  // array aborts with ASan's report instead of passing unseen.
  auto m = jitCompile(
      "#include <stdlib.h>\n"
      "int past(int n) { volatile int* a = malloc(n * sizeof(int)); a[0] = 0; a[n] = 1;\n"
      "  int r = a[0]; free((void*)a); return r; }\n",
      fastOptions());
  auto past = reinterpret_cast<int (*)(int)>(m->symbol("past"));
  EXPECT_DEATH(past(16), "heap-buffer-overflow");
#endif
}

TEST_F(JitTest, SyntaxErrorReportsDiagnostics) {
  std::string log;
  try {
    jitCompile("int broken(int a) { return a +; }\n", fastOptions());
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    // One line: the compiler's first error (with its location) and where the full log is.
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("error"), std::string::npos) << msg;
    EXPECT_NE(msg.find(".c:1"), std::string::npos) << msg;
    size_t at = msg.find("full log: ");
    ASSERT_NE(at, std::string::npos) << msg;
    log = msg.substr(at + 10, msg.find(' ', at + 10) - at - 10);
  }
  // The log holds the command line and the diagnostics.
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("-shared"), std::string::npos) << log;
  EXPECT_NE(text.find("error"), std::string::npos) << text;
  // No object, checksum or temporary is left behind.
  EXPECT_EQ(countFiles(cache_, ".so"), 0u);
  EXPECT_EQ(countFiles(cache_, ".sum"), 0u);
  for (auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  // On request, the message holds the command and the whole log.
  ScopedEnv verbose("TESSEL_CC_LOG", std::string("1"));
  try {
    jitCompile("int broken(int a) { return a +; }\n", fastOptions());
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("-shared"), std::string::npos) << msg;
    EXPECT_NE(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST_F(JitTest, LongDiagnosticsStayInTheLog) {
  std::string src;
  for (int i = 0; i < 100; ++i) src += "int f" + std::to_string(i) + "(void) { return x" + std::to_string(i) + "; }\n";
  try {
    jitCompile(src, fastOptions());
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("x0"), std::string::npos) << msg;  // the first error
    EXPECT_EQ(msg.find("x99"), std::string::npos) << msg;
  }
  ASSERT_EQ(countFiles(cache_, ".log"), 1u);
  for (auto& e : fs::directory_iterator(cache_))
    if (e.path().extension() == ".log") {
      std::ifstream in(e.path());
      std::string text((std::istreambuf_iterator<char>(in)), {});
      EXPECT_NE(text.find("x99"), std::string::npos);
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

namespace {

/// True once `pid` has exited (a zombie not yet reaped by init counts), within 2 s.
bool processGone(pid_t pid) {
  for (int k = 0; k < 200; ++k) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(st, line);
    size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && (line[close + 2] == 'Z' || line[close + 2] == 'X'))
      return true;
    ::usleep(10000);
  }
  return false;
}

pid_t readPid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

void setAge(const std::string& path, int seconds) {
  struct timespec t[2];
  ::clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= seconds;
  t[1] = t[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), t, 0), 0) << path;
}

double ageOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<double>(std::time(nullptr) - st.st_mtime);
}

/// `add` with another body: a different kernel exporting the same symbol.
const char* kSubSource = "int add(int a, int b) { return a - b; }\n";

}  // namespace

TEST_F(JitTest, CompilerTimeoutStopsItsProcessGroup) {
  // A "compiler" that starts a helper and never finishes.
  std::string script = root_ + "/slow-cc";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "echo $$ > " << root_ << "/driver.pid\n"
                        << "sleep 300 &\n"
                        << "echo $! > " << root_ << "/helper.pid\n"
                        << "echo 'slow-cc: still compiling'\n"
                        << "wait\n";
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  JitOptions o = fastOptions();
  o.compiler = script;
  ScopedEnv timeout("TESSEL_CC_TIMEOUT", std::string("1"));
  auto t0 = std::chrono::steady_clock::now();
  try {
    jitCompile(kAddSource, o);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("timed out after 1 s"), std::string::npos) << msg;
    EXPECT_NE(msg.find("TESSEL_CC_TIMEOUT"), std::string::npos) << msg;
    EXPECT_NE(msg.find("slow-cc: still compiling"), std::string::npos) << msg;
    EXPECT_NE(msg.find(".log"), std::string::npos) << msg;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 10.0);
  // The driver and what it started are gone: the whole process group was killed.
  pid_t driver = readPid(root_ + "/driver.pid"), helper = readPid(root_ + "/helper.pid");
  ASSERT_GT(driver, 0);
  ASSERT_GT(helper, 0);
  EXPECT_TRUE(processGone(driver));
  EXPECT_TRUE(processGone(helper));
  for (auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  // The option wins over the environment; a malformed setting is an error.
  o.timeoutSeconds = 0.5;
  EXPECT_THROW(jitCompile(kAddSource, o), CompileError);
  ScopedEnv bad("TESSEL_CC_TIMEOUT", std::string("soon"));
  EXPECT_THROW(jitCompile(kAddSource, fastOptions()), CompileError);
}

TEST_F(JitTest, ObjectCarriesItsCacheKey) {
  auto m = jitCompile(kAddSource, fastOptions());
  std::string key = fs::path(m->path()).stem().string();
  EXPECT_EQ(std::string(static_cast<const char*>(m->symbol("tessel_cache_key"))), key);
}

TEST_F(JitTest, SwappedObjectIsRecompiled) {
  std::string a, b;
  {
    a = jitCompile(kAddSource, fastOptions())->path();
    b = jitCompile(kSubSource, fastOptions())->path();
  }
  auto sum = [](const std::string& so) { return so.substr(0, so.size() - 3) + ".sum"; };
  // Another kernel's object with its own (matching) checksum: only the key tells.
  fs::copy_file(b, a, fs::copy_options::overwrite_existing);
  fs::copy_file(sum(b), sum(a), fs::copy_options::overwrite_existing);
  {
    auto m = jitCompile(kAddSource, fastOptions());
    EXPECT_FALSE(m->cacheHit());
    EXPECT_EQ(reinterpret_cast<AddFn>(m->symbol("add"))(3, 4), 7);
  }
  auto again = jitCompile(kAddSource, fastOptions());
  EXPECT_TRUE(again->cacheHit());
  EXPECT_EQ(reinterpret_cast<AddFn>(again->symbol("add"))(3, 4), 7);
  again.reset();
  // A symbolic link to the other object is not followed.
  fs::remove(a);
  fs::create_symlink(b, a);
  fs::copy_file(sum(b), sum(a), fs::copy_options::overwrite_existing);
  {
    auto m = jitCompile(kAddSource, fastOptions());
    EXPECT_FALSE(m->cacheHit());
    EXPECT_EQ(reinterpret_cast<AddFn>(m->symbol("add"))(3, 4), 7);
  }
  EXPECT_FALSE(fs::is_symlink(a));
  // Nor does a FIFO in its place block the load.
  fs::remove(a);
  ASSERT_EQ(::mkfifo(a.c_str(), 0600), 0);
  auto m = jitCompile(kAddSource, fastOptions());
  EXPECT_FALSE(m->cacheHit());
  EXPECT_EQ(reinterpret_cast<AddFn>(m->symbol("add"))(3, 4), 7);
  // The other kernel still loads as itself.
  EXPECT_EQ(reinterpret_cast<AddFn>(jitCompile(kSubSource, fastOptions())->symbol("add"))(3, 4), -1);
}

TEST_F(JitTest, CacheDirectoryParentsAreChecked) {
  std::string pub = root_ + "/pub";
  ASSERT_EQ(::mkdir(pub.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(pub.c_str(), 0777), 0);
  {
    ScopedEnv env("TESSEL_CACHE_DIR", pub + "/cache");
    try {
      jitCacheDirectory();
      FAIL() << "expected CompileError";
    } catch (const CompileError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("'" + pub + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("sticky"), std::string::npos) << msg;
    }
    EXPECT_THROW(jitCompile(kAddSource, fastOptions()), CompileError);
    // With the sticky bit (like /tmp) others cannot rename the cache: accepted.
    ASSERT_EQ(::chmod(pub.c_str(), 01777), 0);
    EXPECT_EQ(reinterpret_cast<AddFn>(jitCompile(kAddSource, fastOptions())->symbol("add"))(1, 2), 3);
  }
  // A cache others can read: a warning, once.
  std::string shared = root_ + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0755), 0);
  ScopedEnv env("TESSEL_CACHE_DIR", shared);
  ::testing::internal::CaptureStderr();
  jitCacheDirectory();
  jitCacheDirectory();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning"), std::string::npos) << err;
  EXPECT_NE(err.find("0755"), std::string::npos) << err;
  EXPECT_EQ(err.find("warning"), err.rfind("warning")) << err;
}

TEST_F(JitTest, EvictsLeastRecentlyUsedBeyondTheSizeLimit) {
  std::string k1 = jitCompile(kAddSource, fastOptions())->path();
  // A hit makes an old object the most recently used.
  setAge(k1, 1000);
  EXPECT_TRUE(jitCompile(kAddSource, fastOptions())->cacheHit());
  EXPECT_LT(ageOf(k1), 100.0);
  // Three objects of 400 KB, used 300, 200 and 100 s ago; files that are not the cache's.
  auto fake = [&](char c, int age) {
    std::string stem = cache_ + "/" + std::string(64, c);
    std::ofstream(stem + ".so") << std::string(400 * 1024, 'x');
    std::ofstream(stem + ".sum") << "0\n";
    setAge(stem + ".so", age);
    setAge(stem + ".sum", age);
    return stem;
  };
  std::string a = fake('a', 300), b = fake('b', 200), c = fake('c', 100);
  std::ofstream(cache_ + "/notes.txt") << std::string(500 * 1024, 'n');
  std::string staleTmp = cache_ + "/" + std::string(64, 'd') + ".tmp.AbCdEf.so";
  std::string freshTmp = cache_ + "/" + std::string(64, 'e') + ".tmp.AbCdEf.so";
  std::ofstream(staleTmp) << "partial";
  std::ofstream(freshTmp) << "partial";
  setAge(staleTmp, 7200);
  // Over 1 MB after the next compile: the least recently used object goes, and only it.
  ScopedEnv limit("TESSEL_CACHE_MAX_MB", std::string("1"));
  auto k2 = jitCompile(kSubSource, fastOptions());
  EXPECT_FALSE(k2->cacheHit());
  EXPECT_FALSE(fs::exists(a + ".so"));
  EXPECT_FALSE(fs::exists(a + ".sum"));
  EXPECT_TRUE(fs::exists(b + ".so"));
  EXPECT_TRUE(fs::exists(c + ".so"));
  EXPECT_TRUE(fs::exists(k1));
  EXPECT_TRUE(fs::exists(k2->path()));
  EXPECT_TRUE(fs::exists(cache_ + "/notes.txt"));
  EXPECT_FALSE(fs::exists(staleTmp));
  EXPECT_TRUE(fs::exists(freshTmp));
  EXPECT_TRUE(jitCompile(kAddSource, fastOptions())->cacheHit());
  // A limit of 0 keeps only the object just compiled.
  {
    ScopedEnv zero("TESSEL_CACHE_MAX_MB", std::string("0"));
    JitOptions o = fastOptions();
    o.flags.push_back("-DTESSEL_EVICT_ALL=1");
    auto k3 = jitCompile(kAddSource, o);
    EXPECT_EQ(countFiles(cache_, ".so"), 2u);  // k3 and the fresh temporary
    EXPECT_TRUE(fs::exists(k3->path()));
    EXPECT_FALSE(fs::exists(k1));
  }
  ScopedEnv bad("TESSEL_CACHE_MAX_MB", std::string("lots"));
  EXPECT_THROW(jitCompile("int f(void) { return 1; }\n", fastOptions()), CompileError);
}

TEST_F(JitTest, SignalDuringCompilationStopsTheCompiler) {
  // SIGTERM to a process compiling: its handler kills the compiler's process group (which
  // a terminal's Ctrl-C would not reach), then the process dies of the signal.
  std::string script = root_ + "/hung-cc";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "sleep 300 &\n"
                        << "echo $! > " << root_ << "/helper.pid.tmp\n"
                        << "mv " << root_ << "/helper.pid.tmp " << root_ << "/helper.pid\n"
                        << "wait\n";
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  JitOptions o = fastOptions();
  o.compiler = script;
  o.timeoutSeconds = 0;  // none: only the signal ends it
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      jitCompile(kAddSource, o);
    } catch (...) {
    }
    ::_exit(0);
  }
  pid_t helper = -1;
  for (int k = 0; k < 200 && helper <= 0; k++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fs::exists(root_ + "/helper.pid")) helper = readPid(root_ + "/helper.pid");
  }
  ASSERT_GT(helper, 0) << "the compiler never started";
  ::kill(child, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_TRUE(processGone(helper));
}
