// Prints the exposition of EveryPatternSample() for `promtool check metrics` (promtool_check.cmake).
#include <cstdio>

#include "export/exposition.hpp"
#include "export/fixture_samples.hpp"

int main() {
  const std::string text = runmon::RenderExposition(runmon::test::EveryPatternSample(),
                                                    {.host = "node-1", .run_id = "abc123"}, 42);
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() ? 0 : 1;
}
