// The Prometheus text primitives. See prometheus_text.hpp for the syntax each one follows.
#include "prometheus_text/prometheus_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace runmon::prometheus_text {
namespace {

bool IsAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsAsciiDigit(char c) {
  return c >= '0' && c <= '9';
}

bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

}  // namespace

bool IsMetricNameStart(char c) {
  return IsAsciiLetter(c) || c == '_' || c == ':';
}
bool IsMetricNameChar(char c) {
  return IsMetricNameStart(c) || IsAsciiDigit(c);
}
bool IsValidMetricName(std::string_view name) {
  return !name.empty() && IsMetricNameStart(name[0]) &&
         std::all_of(name.begin(), name.end(), IsMetricNameChar);
}

bool IsLabelNameStart(char c) {
  return IsAsciiLetter(c) || c == '_';
}
bool IsLabelNameChar(char c) {
  return IsLabelNameStart(c) || IsAsciiDigit(c);
}
bool IsValidLabelName(std::string_view name) {
  return !name.empty() && IsLabelNameStart(name[0]) && std::all_of(name.begin(), name.end(), IsLabelNameChar);
}
bool IsReservedLabelName(std::string_view name) {
  return name.starts_with("__");
}

void AppendEscapedQuoted(std::string& out, std::string_view value) {
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

const char* ReadQuoted(std::string_view text, size_t* pos, std::string* out) {
  size_t p = *pos + 1;
  out->clear();
  while (true) {
    size_t q = p;
    while (q < text.size() && text[q] != '"' && text[q] != '\\') ++q;
    out->append(text.data() + p, q - p);
    if (q >= text.size()) return "unterminated quoted string";
    if (text[q] == '"') {
      *pos = q + 1;
      return nullptr;
    }
    if (q + 1 >= text.size()) return "unterminated quoted string";
    const char escaped = text[q + 1];
    if (escaped == '\\') {
      *out += '\\';
    } else if (escaped == '"') {
      *out += '"';
    } else if (escaped == 'n') {
      *out += '\n';
    } else {
      return "invalid escape in quoted string (only \\\\, \\\" and \\n)";
    }
    p = q + 2;
  }
}

void AppendEscapedHelp(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

std::string UnescapeHelp(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() &&
        (text[i + 1] == '\\' || text[i + 1] == 'n' || text[i + 1] == '"')) {
      out += text[i + 1] == 'n' ? '\n' : text[i + 1];
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

void AppendFloat(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    char buffer[64];  // the longest shortest form of a double is 24 characters
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out.append(buffer, result.ptr);
  }
}

std::optional<double> ParseFloat(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  if (EqualsIgnoreCase(text, "inf") || EqualsIgnoreCase(text, "infinity")) {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (EqualsIgnoreCase(text, "nan")) return std::numeric_limits<double>::quiet_NaN();
  std::chars_format format = std::chars_format::general;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    if (text.find_first_of("pP") == std::string_view::npos) return std::nullopt;
    format = std::chars_format::hex;
  }
  // from_chars takes no sign and no "inf"/"nan" here: the first character must start a mantissa.
  const bool hex_digit = (text[0] >= 'a' && text[0] <= 'f') || (text[0] >= 'A' && text[0] <= 'F');
  if (!(IsAsciiDigit(text[0]) || text[0] == '.' || (format == std::chars_format::hex && hex_digit))) {
    return std::nullopt;
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, format);
  if (end != text.data() + text.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Too small (a negative exponent, or no exponent and no nonzero integer digit) is zero; too big an error.
    const size_t exponent = text.find_first_of(format == std::chars_format::hex ? "pP" : "eE");
    bool tiny;
    if (exponent != std::string_view::npos) {
      tiny = exponent + 1 < text.size() && text[exponent + 1] == '-';
    } else {
      const std::string_view integer = text.substr(0, text.find('.'));
      tiny = integer.find_first_not_of('0') == std::string_view::npos;
    }
    if (!tiny) return std::nullopt;
    value = 0;
  } else if (ec != std::errc()) {
    return std::nullopt;
  }
  return negative ? -value : value;
}

}  // namespace runmon::prometheus_text
