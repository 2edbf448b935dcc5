// This process's environment as NAME=value strings, read once by whoever builds a collector context (the
// app, the in-process API): collectors never call getenv, they get these strings.
#pragma once

#include <string>
#include <vector>

extern char** environ;

namespace runmon {

inline std::vector<std::string> ProcessEnvironmentStrings() {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) out.emplace_back(*entry);
  return out;
}

}  // namespace runmon
