// Running the built `tessel` tool in tests: fork/execv with an argument vector (no
// shell), stdout and stderr captured; helpers to read result files and check errors.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#ifndef TESSEL_TOOL
#define TESSEL_TOOL "build/bin/tessel"
#endif

namespace tessel::testing {

struct Result {
  int code = -1;
  std::string out, err;
};

/// Run the tool with `args`, capturing output through files in `scratchDir`.
Result runTool(const std::filesystem::path& scratchDir, const std::vector<std::string>& args);

std::string slurp(const std::filesystem::path& p);

using Entries = std::map<std::vector<int64_t>, double>;
/// Entries of a .tns (1-based, '#' comments) or .mtx (coordinate) file, 0-based.
Entries readEntries(const std::filesystem::path& p);
/// Compare as dense functions (missing = 0).
::testing::AssertionResult sameEntries(const Entries& expected, const Entries& actual);

/// Exit code, stdout and stderr, for failure messages.
std::string show(const Result& r);
/// Exit 2 with exactly one line "tessel: error: ..." on stderr mentioning each string.
void expectUserError(const Result& r, const std::vector<std::string>& mentions = {});

}  // namespace tessel::testing
