// Schedule text split into commands, before any command is interpreted: the single-node
// parser (schedule_parser.cpp) and the distributed lowering both start from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

struct ScheduleText {
  std::string name;               ///< "split"
  std::vector<std::string> args;  ///< split at top-level commas, trimmed: {"i","i0","i1","32"}
  std::string text;               ///< "split(i,i0,i1,32)": how errors name the command
};

/// "a(x,y), b(z)" -> commands (separated by commas or semicolons at the top level).
/// ScheduleError for text that is not name(arguments).
std::vector<ScheduleText> splitScheduleText(const std::string& text);

/// The argument `arg` of command `c` as an integer of at least 1 (a split size, a piece
/// count, an unroll factor); ScheduleError naming the command otherwise.
int64_t positiveArgument(const ScheduleText& c, const std::string& arg);

}  // namespace tessel
