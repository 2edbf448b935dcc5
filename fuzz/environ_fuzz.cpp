// Fuzzes FindEnvironValue (/proc/PID/environ): no crash; a value found is the rest of one NUL-ended entry
// that starts with NAME=, so it holds no NUL; and a variable appended to the input is always found.
#include <cstdint>
#include <string>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view environ = runmon::fuzz::AsText(data, size);
  if (auto value = runmon::FindEnvironValue(environ, "CUDA_VISIBLE_DEVICES")) {
    FUZZ_CHECK(value->find('\0') == std::string_view::npos);
    FUZZ_CHECK(value->data() >= environ.data() &&
               value->data() + value->size() <= environ.data() + environ.size());
  }
  // Appended after a NUL, a variable no earlier entry defines is found with its value.
  std::string extended(environ);
  extended += std::string("\0RUNMON_FUZZ_MARK=42", 20);
  if (extended.find("RUNMON_FUZZ_MARK=") == extended.size() - 19) {
    auto found = runmon::FindEnvironValue(extended, "RUNMON_FUZZ_MARK");
    FUZZ_CHECK(found && *found == "42");
  }
  return 0;
}
