// Whole-line checks on console output, eight bytes at a time: the recorder looks at every byte of a flood
// (hundreds of MB/s), and most lines are plain ASCII that it can take as they are once it knows so. The
// word-at-a-time tests are exact (not "maybe"): a byte is tested only against bytes that, with every high
// bit clear, cannot carry into a neighbour.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace runmon::console {
namespace ascii_scan_detail {

inline constexpr uint64_t kOnes = 0x0101010101010101ull;
inline constexpr uint64_t kHighs = 0x8080808080808080ull;

inline uint64_t Word(const char* at) {
  uint64_t word = 0;
  std::memcpy(&word, at, sizeof(word));
  return word;
}
// Some byte of `word` (every high bit clear) is `byte`.
inline bool Has(uint64_t word, unsigned char byte) {
  const uint64_t x = word ^ (kOnes * byte);
  return ((x - kOnes) & ~x & kHighs) != 0;
}
inline bool PlainByte(unsigned char byte) {
  return byte < 0x80 && byte != '\r' && byte != '\n' && byte != 0x1B;
}
inline bool PrintableByte(unsigned char byte) {
  return byte >= 0x20 && byte <= 0x7E;
}

}  // namespace ascii_scan_detail

// Every byte is ASCII other than `\r`, `\n` and ESC (what the coalescer puts on a line as it is).
inline bool AllPlain(std::string_view bytes) {
  using namespace ascii_scan_detail;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    const uint64_t word = Word(bytes.data() + i);
    if ((word & kHighs) != 0 || Has(word, '\r') || Has(word, '\n') || Has(word, 0x1B)) return false;
  }
  for (; i < bytes.size(); ++i) {
    if (!PlainByte(static_cast<unsigned char>(bytes[i]))) return false;
  }
  return true;
}

// Every byte is printable ASCII, 0x20 to 0x7E.
inline bool AllPrintable(std::string_view bytes) {
  using namespace ascii_scan_detail;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    const uint64_t word = Word(bytes.data() + i);
    // With every high bit clear: a byte is at least 0x20 when adding 0x60 sets its high bit, and at most
    // 0x7E when adding 1 does not.
    if ((word & kHighs) != 0 || ((word + kOnes * 0x60) & kHighs) != kHighs || ((word + kOnes) & kHighs) != 0)
      return false;
  }
  for (; i < bytes.size(); ++i) {
    if (!PrintableByte(static_cast<unsigned char>(bytes[i]))) return false;
  }
  return true;
}

}  // namespace runmon::console
