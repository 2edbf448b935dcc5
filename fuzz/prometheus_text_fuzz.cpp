// Fuzzes the Prometheus text primitives: ReadQuoted on any input never reads past it and, when it accepts a
// string, escaping its value gives text that reads back the same; any input escaped and quoted reads back
// as itself; HELP text survives escaping and unescaping; a float ParseFloat accepts is written so that it
// reads back as the same double (NaN as NaN); and the input's first eight bytes as a double round-trip.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "prometheus_text/prometheus_text.hpp"

namespace {

namespace text = runmon::prometheus_text;

bool SameDouble(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(a)) == 0;
}

std::string Quoted(std::string_view value) {
  std::string out = "\"";
  text::AppendEscapedQuoted(out, value);
  out += '"';
  return out;
}

void CheckQuotedRoundTrip(std::string_view value) {
  const std::string quoted = Quoted(value);
  FUZZ_CHECK(quoted.find('\n') == std::string::npos);
  size_t pos = 0;
  std::string back;
  FUZZ_CHECK(text::ReadQuoted(quoted, &pos, &back) == nullptr);
  FUZZ_CHECK(pos == quoted.size());
  FUZZ_CHECK(back == value);
}

void CheckFloatRoundTrip(double value) {
  std::string written;
  text::AppendFloat(written, value);
  const std::optional<double> back = text::ParseFloat(written);
  FUZZ_CHECK(back.has_value());
  FUZZ_CHECK(SameDouble(*back, value));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = runmon::fuzz::AsText(data, size);

  std::string value;
  size_t pos = 0;
  const std::string quoted_input = "\"" + std::string(input);
  if (text::ReadQuoted(quoted_input, &pos, &value) == nullptr) {
    FUZZ_CHECK(pos >= 2 && pos <= quoted_input.size() && quoted_input[pos - 1] == '"');
    CheckQuotedRoundTrip(value);
  } else {
    FUZZ_CHECK(pos == 0);
  }
  CheckQuotedRoundTrip(input);

  std::string help;
  text::AppendEscapedHelp(help, input);
  FUZZ_CHECK(help.find('\n') == std::string::npos);
  FUZZ_CHECK(text::UnescapeHelp(help) == input);

  if (const std::optional<double> parsed = text::ParseFloat(input)) CheckFloatRoundTrip(*parsed);
  if (size >= sizeof(double)) {
    double bits = 0;
    std::memcpy(&bits, data, sizeof(bits));
    CheckFloatRoundTrip(bits);
  }

  if (text::IsValidMetricName(input)) FUZZ_CHECK(!input.empty() && text::IsMetricNameStart(input[0]));
  if (text::IsValidLabelName(input)) FUZZ_CHECK(text::IsValidMetricName(input));
  return 0;
}
