// Small, allocation-free helpers shared by the /proc and /sys parsers and the vendor tools' parsers: line
// and field iteration and strict integer and decimal parsing. Kernel and tool text is untrusted input here
// (fixtures, fuzzers, hostile mounts).
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace runmon::text {

inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Yields the lines of a text, without their '\n'.
class Lines {
 public:
  explicit Lines(std::string_view text) : rest_(text) {}
  bool Next(std::string_view& line) {
    if (rest_.empty()) return false;
    const size_t nl = rest_.find('\n');
    line = rest_.substr(0, nl);
    rest_ = nl == std::string_view::npos ? std::string_view() : rest_.substr(nl + 1);
    return true;
  }

 private:
  std::string_view rest_;
};

// Yields whitespace-separated fields.
class Fields {
 public:
  explicit Fields(std::string_view text) : rest_(text) {}
  bool Next(std::string_view& field) {
    while (!rest_.empty() && IsSpace(rest_.front())) rest_.remove_prefix(1);
    if (rest_.empty()) return false;
    size_t end = 0;
    while (end < rest_.size() && !IsSpace(rest_[end])) ++end;
    field = rest_.substr(0, end);
    rest_.remove_prefix(end);
    return true;
  }
  std::string_view Rest() const { return rest_; }

 private:
  std::string_view rest_;
};

inline std::optional<uint64_t> ParseU64(std::string_view s) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

inline std::optional<int64_t> ParseI64(std::string_view s) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// A finite decimal number and nothing else: an optional minus, digits, one point, an exponent ("91.0",
// "-3", "1e3"). from_chars alone would also take "inf", "nan" and, in some modes, hexadecimal: "N/A", "",
// "0x12", "1_000", "1.4.14", "1e999" and text around the number are nullopt.
inline std::optional<double> ParseDecimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  for (char c : s) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == 'e' ||
          c == 'E')) {
      return std::nullopt;
    }
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace runmon::text
