// ParseError's message: the reason, the text, and a caret under the offending column.
#include "tessel/error.h"

namespace tessel {

std::string ParseError::format(const std::string& msg, const std::string& text, int column) {
  std::string out = msg + " at column " + std::to_string(column) + "\n  " + text + "\n  ";
  // Keep tabs so the caret lines up under the same character.
  for (int k = 0; k + 1 < column; k++)
    out += (k < static_cast<int>(text.size()) && text[k] == '\t') ? '\t' : ' ';
  out += '^';
  return out;
}

}  // namespace tessel
