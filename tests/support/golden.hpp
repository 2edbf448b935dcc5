// Golden text files for rendered frames: compares a CellGrid's text with tests/fixtures/<name>, or rewrites
// the file when RUNMON_UPDATE_GOLDEN=1 (then review the diff before committing it).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace runmon::test {

// Where two frames first differ, as "line N:\n  actual:   ...\n  expected: ...".
inline std::string FirstDifference(const std::string& actual, const std::string& expected) {
  std::istringstream a(actual);
  std::istringstream b(expected);
  std::string line_a;
  std::string line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) return "no difference";
    if (line_a != line_b || more_a != more_b) {
      return "line " + std::to_string(line) + ":\n  actual:   " + (more_a ? line_a : "(none)") +
             "\n  expected: " + (more_b ? line_b : "(none)");
    }
  }
}

inline void ExpectGolden(const std::filesystem::path& file, const std::string& actual) {
  const char* update = std::getenv("RUNMON_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << actual << '\n';
    return;
  }
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << file << " (RUNMON_UPDATE_GOLDEN=1 writes it)";
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!expected.empty() && expected.back() == '\n') expected.pop_back();
  EXPECT_TRUE(actual == expected) << "frame differs from " << file << ": "
                                  << FirstDifference(actual, expected) << "\nactual frame:\n"
                                  << actual;
}

}  // namespace runmon::test
