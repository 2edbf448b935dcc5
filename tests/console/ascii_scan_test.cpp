// ascii_scan: the eight-bytes-at-a-time whole-line checks say what a byte-by-byte check says, for every
// byte value at every position of texts long enough to have whole words and a tail (and every offset, so
// unaligned loads are covered too).
#include "console/ascii_scan.hpp"

#include <gtest/gtest.h>

#include <string>

namespace runmon::console {
namespace {

bool PlainByByte(std::string_view bytes) {
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80 || byte == '\r' || byte == '\n' || byte == 0x1B) return false;
  }
  return true;
}

bool PrintableByByte(std::string_view bytes) {
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7E) return false;
  }
  return true;
}

TEST(AsciiScan, EveryByteAtEveryPositionIsJudgedAsByteByByte) {
  const std::string base(40, 'y');
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t length = 0; length <= 25; ++length) {
      const std::string_view clean = std::string_view(base).substr(offset, length);
      ASSERT_TRUE(AllPlain(clean));
      ASSERT_TRUE(AllPrintable(clean));
      for (size_t at = 0; at < length; ++at) {
        for (int value = 0; value < 256; ++value) {
          std::string text = base;
          text[offset + at] = static_cast<char>(value);
          const std::string_view bytes = std::string_view(text).substr(offset, length);
          ASSERT_EQ(AllPlain(bytes), PlainByByte(bytes))
              << "byte " << value << " at " << at << " of " << length;
          ASSERT_EQ(AllPrintable(bytes), PrintableByByte(bytes))
              << "byte " << value << " at " << at << " of " << length;
        }
      }
    }
  }
}

TEST(AsciiScan, NeighbouringBytesDoNotHideEachOther) {
  // A byte just below or above a bound next to one that would carry or borrow into it.
  for (const std::string& text :
       {std::string("\x1f\x7f", 2), std::string("\x7e\x20\x1f", 3), std::string("yyyyyyy\x7f"),
        std::string("\x0c\x0e\x1a\x1c\x0b\x09yy"), std::string("yyyyyyyy\x7e\x7e\x7e\x7e\x7e\x7e\x7e\x1f")}) {
    EXPECT_EQ(AllPlain(text), PlainByByte(text)) << ::testing::PrintToString(text);
    EXPECT_EQ(AllPrintable(text), PrintableByByte(text)) << ::testing::PrintToString(text);
  }
}

}  // namespace
}  // namespace runmon::console
