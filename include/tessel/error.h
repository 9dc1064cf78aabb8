// Typed exceptions: every user-facing failure in tessel is one of these.
//
// UserError and its subclasses mean "the input was wrong" (the tool exits 2);
// EnvironmentError and its subclasses (CompileError, OutOfMemoryError) mean the system
// tessel runs on failed it (exit 3); InternalError and anything else is a bug (exit 1).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessel {

/// Base of all tessel exceptions.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

/// The input (expression, format, file, size, schedule) was wrong.
class UserError : public Error {
 public:
  explicit UserError(const std::string& msg) : Error(msg) {}
};

/// Malformed expression text; `column` is 1-based.
class ParseError : public UserError {
 public:
  ParseError(const std::string& msg, std::string text, int column)
      : UserError(format(msg, text, column)), text_(std::move(text)), column_(column) {}
  int column() const { return column_; }
  const std::string& text() const { return text_; }

 private:
  static std::string format(const std::string& msg, const std::string& text, int column);
  std::string text_;
  int column_;
};

/// Unknown, repeated or inconsistently used index variables; bad operators.
class NotationError : public UserError {
 public:
  explicit NotationError(const std::string& msg) : UserError(msg) {}
};

/// Tensor dimensions disagree with each other or with an index variable's extent.
class DimensionError : public UserError {
 public:
  explicit DimensionError(const std::string& msg) : UserError(msg) {}
};

/// A format is invalid or does not fit the tensor (wrong number of levels, bad mode order...),
/// or no loop order is consistent with the formats of the operands.
class FormatError : public UserError {
 public:
  explicit FormatError(const std::string& msg) : UserError(msg) {}
};

/// A size or index does not fit the chosen index width (or int64).
class OverflowError : public UserError {
 public:
  explicit OverflowError(const std::string& msg) : UserError(msg) {}
};

/// `s` with bytes that cannot be shown safely (control bytes, invalid UTF-8) as `\xNN`,
/// so that bytes from an input file never reach a terminal raw.
std::string escapeBytes(const std::string& s);

/// A file could not be read or is malformed. `where` is "file:line" or "file:byte N".
/// The message is escaped (escapeBytes): it may quote the file's bytes.
class FileError : public UserError {
 public:
  FileError(const std::string& where, const std::string& msg)
      : UserError(escapeBytes(where + ": " + msg)), where_(where) {}
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

/// What the input asks for needs more memory than the limit (TESSEL_MAX_MEMORY, default
/// a fraction of physical memory); raised before allocating.
class MemoryLimitError : public UserError {
 public:
  explicit MemoryLimitError(const std::string& msg) : UserError(msg) {}
};

/// A schedule command is invalid (named command and reason).
class ScheduleError : public UserError {
 public:
  explicit ScheduleError(const std::string& msg) : UserError(msg) {}
};

/// A machine grid or a tensor distribution is invalid (named tensor and rule).
class DistributionError : public UserError {
 public:
  explicit DistributionError(const std::string& msg) : UserError(msg) {}
};

/// The environment failed tessel: no usable C compiler or cache directory, a thread or
/// process that could not be created, memory that ran out below the limit.
class EnvironmentError : public Error {
 public:
  explicit EnvironmentError(const std::string& msg) : Error(msg) {}
};

/// An allocation within the memory limit failed (the system ran out).
class OutOfMemoryError : public EnvironmentError {
 public:
  explicit OutOfMemoryError(const std::string& msg) : EnvironmentError(msg) {}
};

/// The system C compiler failed or a compiled object could not be loaded.
class CompileError : public EnvironmentError {
 public:
  explicit CompileError(const std::string& msg) : EnvironmentError(msg) {}
};

/// A broken internal invariant (a bug in tessel). Checked in release builds too.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& msg) : Error(msg) {}
};

}  // namespace tessel

/// Internal invariant check that survives NDEBUG.
#define TESSEL_CHECK(cond, msg)                                                          \
  do {                                                                                   \
    if (!(cond))                                                                         \
      throw ::tessel::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                    ": internal error: " + (msg));                        \
  } while (0)
