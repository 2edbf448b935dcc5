// Fuzzes ParseCpuListCount ("0-3,8,10-11"), alone and as runmon reads it from a /proc/PID/status text
// through FindColonField: no crash; an accepted list counts 1..2^20 CPUs; a found field lies in the text.
#include <cstddef>
#include <cstdint>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "fuzz_check.hpp"

namespace {

void CheckCount(const runmon::Result<unsigned>& count) {
  if (!count) {
    FUZZ_CHECK(!count.error().empty());
    return;
  }
  FUZZ_CHECK(*count >= 1);
  FUZZ_CHECK(*count <= (1u << 20));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text = runmon::fuzz::AsText(data, size);
  CheckCount(runmon::ParseCpuListCount(text));
  if (const auto field = runmon::FindColonField(text, "Cpus_allowed_list")) {
    FUZZ_CHECK(field->data() >= text.data() && field->data() + field->size() <= text.data() + text.size());
    CheckCount(runmon::ParseCpuListCount(*field));
  }
  return 0;
}
