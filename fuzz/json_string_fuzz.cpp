// Fuzzes output's AppendJsonString: the result is one valid JSON string (nlohmann parses it) that reads
// back as the input when the input is valid UTF-8, and as the input with each invalid byte replaced by
// U+FFFD otherwise.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "app/output.hpp"
#include "fuzz_check.hpp"

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, surrogates or > U+10FFFF), or 0.
// Written independently of output.cpp, table-style after Unicode 15 Table 3-7.
size_t WellFormedLength(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0x100u; };
  auto in = [](unsigned b, unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
  const unsigned b0 = at(i);
  if (b0 <= 0x7F) return 1;
  if (in(b0, 0xC2, 0xDF)) return in(at(i + 1), 0x80, 0xBF) ? 2 : 0;
  if (b0 == 0xE0) return in(at(i + 1), 0xA0, 0xBF) && in(at(i + 2), 0x80, 0xBF) ? 3 : 0;
  if (in(b0, 0xE1, 0xEC) || in(b0, 0xEE, 0xEF)) {
    return in(at(i + 1), 0x80, 0xBF) && in(at(i + 2), 0x80, 0xBF) ? 3 : 0;
  }
  if (b0 == 0xED) return in(at(i + 1), 0x80, 0x9F) && in(at(i + 2), 0x80, 0xBF) ? 3 : 0;
  if (b0 == 0xF0) {
    return in(at(i + 1), 0x90, 0xBF) && in(at(i + 2), 0x80, 0xBF) && in(at(i + 3), 0x80, 0xBF) ? 4 : 0;
  }
  if (in(b0, 0xF1, 0xF3)) {
    return in(at(i + 1), 0x80, 0xBF) && in(at(i + 2), 0x80, 0xBF) && in(at(i + 3), 0x80, 0xBF) ? 4 : 0;
  }
  if (b0 == 0xF4) {
    return in(at(i + 1), 0x80, 0x8F) && in(at(i + 2), 0x80, 0xBF) && in(at(i + 3), 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  std::string expected;
  bool valid = true;
  for (size_t i = 0; i < text.size();) {
    if (const size_t n = WellFormedLength(text, i)) {
      expected.append(text.substr(i, n));
      i += n;
    } else {
      expected += "\xEF\xBF\xBD";
      valid = false;
      ++i;
    }
  }

  std::string out = "prefix";  // appends, never replaces
  runmon::AppendJsonString(out, text);
  FUZZ_CHECK(out.starts_with("prefix"));
  const std::string_view literal = std::string_view(out).substr(6);
  for (char c : literal) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20);  // no raw control characters

  const auto json = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!json.is_discarded());
  FUZZ_CHECK(json.is_string());
  const auto& decoded = json.get_ref<const std::string&>();
  FUZZ_CHECK(decoded == expected);
  if (valid) FUZZ_CHECK(decoded == text);
  // Serializing again with nlohmann (strict UTF-8) must not throw.
  FUZZ_CHECK(!json.dump().empty());
  return 0;
}
