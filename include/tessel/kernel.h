// Compiling and running an assignment.
//
//   auto k = Kernel::compile(A.assignment());   // lower -> C -> JIT (cached)
//   k->run(A.assignment());                     // assemble the output, compute values
//   auto p = Kernel::compile(A.assignment(), parseSchedule("...", A.assignment()));
//   p->run(A.assignment(), 2);                  // on 2 threads
//   Assignment a = y.assignment();              // another semiring (tessel/operators.h):
//   a.semiring = Semiring::minPlus();           //   y(i) = min_j A(i,j) + x(j)
//   Kernel::compile(a)->run(a);
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessel/jit.h"
#include "tessel/notation.h"
#include "tessel/schedule.h"

namespace tessel {

struct RunTimes {
  double assembleSeconds = 0;
  double computeSeconds = 0;
};

/// Called after each pass of the compiler with the pass's name and the program as it
/// stands, printed (IR as pseudo-code, the last one as C).
using PassObserver = std::function<void(const std::string& pass, const std::string& text)>;

class Kernel {
 public:
  /// Lower, emit C and JIT-compile. Throws NotationError/DimensionError/FormatError
  /// for bad input, CompileError if the system compiler fails.
  /// A schedule that does not fit the assignment throws ScheduleError.
  /// `A(..) += e` with a sum in e compiles two stages, T = e (scheduled) and A += T.
  static std::shared_ptr<Kernel> compile(const Assignment& a, const Schedule& schedule = {},
                                         const JitOptions& jit = {});
  /// The loops the compiler picks without a schedule, outermost first: the index
  /// variables a schedule starts from.
  static std::vector<IndexVar> loopOrder(const Assignment& a);
  /// The C code compile() would build, without compiling it (both stages, if two).
  static std::string emitC(const Assignment& a, const Schedule& schedule = {});
  /// The same, calling `afterEachPass` after every pass (`tessel emit --passes`).
  static std::string emitC(const Assignment& a, const Schedule& schedule, const PassObserver& afterEachPass);

  /// Run on the tensors of `a` (same formats and types as compiled for): the output
  /// is (re)assembled and computed. `threads` > 0 sets the thread count of parallel
  /// loops (0: OpenMP's default, OMP_NUM_THREADS or all cores).
  RunTimes run(const Assignment& a, int threads = 0) const;

  const std::string& source() const { return source_; }
  /// Every stage came from the JIT cache.
  bool cacheHit() const;
  double compileSeconds() const { return compileSeconds_; }

  struct Impl;
  ~Kernel();

 private:
  Kernel() = default;
  std::string source_;
  double compileSeconds_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel
