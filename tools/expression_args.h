// What `run` and `emit` share: the tensors an expression mentions and their formats
// from `-f NAME:LEVELS[:ORDER]` arguments.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli_common.h"

namespace tessel::cli {

struct ExpressionArgs {
  std::vector<TensorUse> uses;            ///< output first, then inputs
  std::map<std::string, TensorUse> byName;
  std::map<std::string, Format> formats;  ///< from -f
  std::map<std::string, Datatype> types;  ///< from -t

  const TensorUse& output() const { return uses.at(0); }
  /// Throws UsageError if `name` is not in the expression.
  void requireKnown(const std::string& name, const char* option) const;
  /// -f if given, else the default (inputs d then s; output dense).
  Format formatOf(const TensorUse& u) const;
  /// -t if given, else float64.
  Datatype typeOf(const TensorUse& u) const;
};

/// Scan the expression and parse the -f (NAME:LEVELS[:ORDER]) and -t (NAME:TYPE) arguments.
ExpressionArgs parseExpressionArgs(const std::string& expr, const std::vector<std::string>& formatArgs,
                                   const std::vector<std::string>& typeArgs = {});
/// Output dims from the extents of the same index variables in the inputs (`inputs`
/// by name; an entry for the output itself, += starting values, is not used): parses
/// once with a placeholder output to learn which variable indexes which input mode.
std::vector<int64_t> inferOutputDims(const std::string& expr, const TensorUse& out,
                                     std::map<std::string, TensorVar> inputs);
/// Help text of -t (run and emit).
extern const char* const kTypeHelp;

/// The generated C code for the expression with these formats (no data needed).
/// The schedule text given with -s, else defaultSchedule (fusion, then the parallel default).
ScheduleChoice chooseSchedule(const std::string& text, int threads, const Assignment& a);

/// The semiring named by --semiring ("": not given, plus_times); UsageError naming the
/// option and the known names.
Semiring semiringOption(const std::string& name);
/// Parses `expr` into an assignment over `semiring`, checked; an operator the semiring
/// lacks is a ParseError at its column ("semiring min_plus has no '-' at column 12").
/// An expression with `@(add,mul)` keeps its own semiring: a `semiring` that was `given`
/// (--semiring, plus_times included) must name the same one, else UsageError. The
/// assignment's semiring is then the one in effect.
Assignment parseOver(const std::string& expr, const std::map<std::string, TensorBase>& tensors,
                     const Semiring& semiring, bool given = false);

/// The output mask `tessel run --emit-c` and `tessel emit` compile for (no data needed).
struct MaskSpec {
  bool on = false;
  bool valued = false, complement = false, replace = false;
  MaskForm form = MaskForm::Auto;
  Format format;
};
/// --mask-form: auto (or empty), pull or push; UsageError otherwise.
MaskForm maskFormOption(const std::string& text);
/// The mask `tessel emit --mask` compiles for (`on`: --mask given; a mask option
/// without it is a UsageError), in `format` (default: d then s).
MaskSpec maskSpecOf(bool on, const std::string& format, bool valued, bool complement, bool replace,
                    const std::string& form, const ExpressionArgs& args);
/// The name a --mask FILE's tensor prints with: M, unless the expression has an M.
std::string maskName(const ExpressionArgs& args);
/// The C code for the expression with the given schedule (-s text) or thread count;
/// `afterEachPass`, when set, sees the program after every pass.
std::string generatedCode(const std::string& expr, const ExpressionArgs& args, const std::string& schedule = "",
                          int threads = 1, const PassObserver& afterEachPass = {},
                          const Semiring& semiring = Semiring::plusTimes(), const MaskSpec& mask = {},
                          bool semiringGiven = false);
/// Help text of --semiring (run and emit).
extern const char* const kSemiringHelp;

}  // namespace tessel::cli
