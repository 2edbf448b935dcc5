// Incremental UTF-8 decoding (see utf8_decoder.hpp).
#include "console/utf8_decoder.hpp"

namespace runmon::console {

void AppendRunes(std::string& out, std::u32string_view runes) {
  size_t i = 0;
  while (i < runes.size()) {
    size_t end = i;
    while (end < runes.size() && runes[end] < 0x80) ++end;
    if (end > i) {
      const size_t at = out.size();
      out.resize(at + (end - i));
      char* to = out.data() + at;
      for (size_t k = i; k < end; ++k) *to++ = static_cast<char>(runes[k]);
      i = end;
      continue;
    }
    AppendUtf8(out, runes[i++]);
  }
}

std::string EncodeUtf8(std::u32string_view runes) {
  std::string out;
  out.reserve(runes.size());
  AppendRunes(out, runes);
  return out;
}

size_t Utf8Decoder::DecodeAt(std::string_view text, size_t i, char32_t& rune) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = at(0);
  size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead < 0x80) {
    rune = lead;
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    rune = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    rune = lead & 0x0F;
    if (lead == 0xE0) second_min = 0xA0;  // overlong
    if (lead == 0xED) second_max = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    rune = lead & 0x07;
    if (lead == 0xF0) second_min = 0x90;  // overlong
    if (lead == 0xF4) second_max = 0x8F;  // above U+10FFFF
  } else {
    rune = kReplacementCharacter;
    return 1;
  }
  for (size_t k = 1; k < length; ++k) {
    if (i + k >= text.size()) return 0;  // cut: every byte so far fits
    const unsigned char byte = at(k);
    const unsigned char low = k == 1 ? second_min : 0x80;
    const unsigned char high = k == 1 ? second_max : 0xBF;
    if (byte < low || byte > high) {
      rune = kReplacementCharacter;
      return 1;
    }
    rune = (rune << 6) | (byte & 0x3F);
  }
  return length;
}

}  // namespace runmon::console
