// Fuzzes the dashboard's layout validation (PUT /api/layout bodies): any bytes in; a layout it accepts is
// valid JSON, validates again to itself (the normal form is a fixed point), and stays within the limits.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "web/api.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = runmon::fuzz::AsText(data, size);
  const auto layout = runmon::web::ValidateLayout(body);
  if (!layout) {
    FUZZ_CHECK(!layout.error().empty());
    return 0;
  }
  const auto parsed = nlohmann::json::parse(*layout, nullptr, false);
  FUZZ_CHECK(!parsed.is_discarded());
  FUZZ_CHECK(parsed["panels"].size() <= 100);
  const auto again = runmon::web::ValidateLayout(*layout);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *layout);
  return 0;
}
