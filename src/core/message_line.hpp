// One message, one line: control characters in what a message quotes (a value, a file name, a key) are
// escaped as \xNN, so a hostile name cannot forge or erase lines of runmon's warnings.
#pragma once

#include <string>
#include <string_view>

namespace runmon {

inline std::string EscapeControlCharacters(std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line;
  line.reserve(message.size());
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      line += "\\x";
      line += kHex[byte >> 4];
      line += kHex[byte & 0xf];
    } else {
      line += c;
    }
  }
  return line;
}

}  // namespace runmon
