// Fuzzes the process table's parsers (process_identity_parse.hpp) on one input read as a status file, a
// passwd file, a cmdline and a stat text: no crash; a formatted command line is valid UTF-8 with no control
// character, NUL or bidirectional override left, and stays within its bound (plus the "…").
#include <cstdint>
#include <string>

#include "collectors/linux/parse/process_identity_parse.hpp"
#include "core/utf8.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = runmon::fuzz::AsText(data, size);
  (void)runmon::ParsePidStatusRealUid(input);
  for (const auto& [uid, name] : runmon::ParsePasswdNames(input)) {
    FUZZ_CHECK(!name.empty() && name.size() <= 64 && name.find(':') == std::string::npos);
  }
  const auto args = runmon::SplitCmdline(input, 16);
  FUZZ_CHECK(args.size() <= 16);
  for (const auto& arg : args) FUZZ_CHECK(arg.find('\0') == std::string_view::npos);
  (void)runmon::IsRunmonRunCommand(args);
  const std::string line = runmon::FormatCommandLine(input, 80);
  FUZZ_CHECK(line.size() <= 80 + 3);
  FUZZ_CHECK(runmon::IsValidUtf8(line));
  for (unsigned char c : line) FUZZ_CHECK(c >= 0x20 && c != 0x7F);
  FUZZ_CHECK(line.find("\xe2\x80\xae") == std::string::npos && line.find("\xc2\x9b") == std::string::npos);
  if (auto comm = runmon::ParsePidStatComm(input)) {
    FUZZ_CHECK(comm->data() >= input.data() && comm->data() + comm->size() <= input.data() + input.size());
  }
  return 0;
}
