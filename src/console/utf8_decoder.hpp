// Incremental UTF-8 decoding of a byte stream that arrives in chunks, as Go's `range` over a string decodes
// (W&B's terminal emulator reads console text that way): every byte that does not start a valid sequence
// (overlong forms, surrogates and code points above U+10FFFF included) becomes U+FFFD, one per byte. A
// sequence cut by the end of a chunk waits for the next one instead of turning into U+FFFD, so chunking
// never changes the result; Finish() ends the stream.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/utf8.hpp"

namespace runmon::console {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

using runmon::AppendUtf8;
// Appends `runes` as UTF-8 (runs of ASCII, most console text, at once).
void AppendRunes(std::string& out, std::u32string_view runes);
std::string EncodeUtf8(std::u32string_view runes);

class Utf8Decoder {
 public:
  // Calls emit(char32_t) for each code point `bytes` completes.
  template <typename Emit>
  void Decode(std::string_view bytes, Emit&& emit);
  // What is left of a cut sequence, as U+FFFD per byte.
  template <typename Emit>
  void Finish(Emit&& emit);
  // No cut sequence waits for more bytes.
  bool idle() const { return carry_.empty(); }

 private:
  // Decodes one code point at text[i]; returns its length (0: a valid sequence cut by the end of text).
  static size_t DecodeAt(std::string_view text, size_t i, char32_t& rune);

  std::string carry_;  // at most 3 bytes of a sequence cut by a chunk's end
};

template <typename Emit>
void Utf8Decoder::Decode(std::string_view bytes, Emit&& emit) {
  size_t i = 0;
  if (!carry_.empty()) {
    // Complete the cut sequence, a byte at a time. Every byte carried so far fits the sequence, so when the
    // one added does not, each carried byte is a U+FFFD (as a decoder that saw them together would say) and
    // the added byte starts afresh.
    while (i < bytes.size()) {
      carry_ += bytes[i++];
      char32_t rune = 0;
      const size_t length = DecodeAt(carry_, 0, rune);
      if (length == 0) continue;  // still cut
      if (length == carry_.size()) {
        emit(rune);
      } else {
        for (size_t k = 1; k < carry_.size(); ++k) emit(kReplacementCharacter);
        --i;
      }
      carry_.clear();
      break;
    }
    if (!carry_.empty()) return;  // the chunk ended inside the sequence
  }
  while (i < bytes.size()) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    if (byte < 0x80) {
      emit(static_cast<char32_t>(byte));
      ++i;
      continue;
    }
    char32_t rune = 0;
    const size_t length = DecodeAt(bytes, i, rune);
    if (length == 0) {
      carry_.assign(bytes.substr(i));
      return;
    }
    emit(rune);
    i += length;
  }
}

template <typename Emit>
void Utf8Decoder::Finish(Emit&& emit) {
  for (size_t k = 0; k < carry_.size(); ++k) emit(kReplacementCharacter);
  carry_.clear();
}

}  // namespace runmon::console
