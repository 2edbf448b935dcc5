// Fuzzes DecodeTick (a queued record's payload as remote write reads it back from disk): no crash, leak or
// hang on damaged, truncated or hostile bytes; an error always says what; and the format is canonical, so
// what decodes encodes back to exactly the input, with no more values than the input could hold.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "remote_write/sample_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runmon::remote_write;
  const std::string_view payload = runmon::fuzz::AsText(data, size);
  DecodedTick tick;
  const runmon::Status decoded = DecodeTick(payload, &tick);
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.error().starts_with("queued tick: "));
    return 0;
  }
  FUZZ_CHECK(tick.values.size() <= size / 9);
  for (const TickValue& value : tick.values) FUZZ_CHECK(value.key.size() <= kMaxTickKeyBytes);
  std::string again;
  EncodeTick(tick.timestamp_ms, tick.values, &again);
  FUZZ_CHECK(again == payload);
  return 0;
}
