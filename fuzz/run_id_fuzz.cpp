// Fuzzes the checks on user-supplied run ids and the UTF-8 repair applied to names, arguments and host
// names before they go into protobuf strings: ToValidUtf8 always yields valid UTF-8, leaves valid text
// unchanged and only ever grows the text; an id ValidateRunId accepts is valid UTF-8, 1 to 128 bytes,
// with no path separator, so it can name files.
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "runlog/run_directory.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runmon::runlog;
  const std::string_view input = runmon::fuzz::AsText(data, size);
  const std::string repaired = ToValidUtf8(input);
  FUZZ_CHECK(IsValidUtf8(repaired));
  FUZZ_CHECK(repaired.size() >= input.size());
  if (IsValidUtf8(input)) FUZZ_CHECK(repaired == input);
  FUZZ_CHECK(ToValidUtf8(repaired) == repaired);
  if (ValidateRunId(input).ok()) {
    FUZZ_CHECK(!input.empty() && input.size() <= 128);
    FUZZ_CHECK(IsValidUtf8(input));
    FUZZ_CHECK(input.find('/') == std::string_view::npos && input.find('\0') == std::string_view::npos);
    FUZZ_CHECK(input != "." && input != "..");
    FUZZ_CHECK(!runmon::fuzz::HasSpace(input.substr(0, 1)) &&
               !runmon::fuzz::HasSpace(input.substr(input.size() - 1)));
  }
  return 0;
}
