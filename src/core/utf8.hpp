// UTF-8 checks shared by everything that passes text on: protobuf strings in the run log must be valid
// UTF-8, JSON output replaces what is not, and exposition parsers reject it. Overlong forms, surrogates
// and code points above U+10FFFF are invalid.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace runmon {

// Length of the valid UTF-8 sequence starting at text[i] (1 for ASCII), or 0 when none starts there.
size_t Utf8SequenceLength(std::string_view text, size_t i);
bool IsValidUtf8(std::string_view text);
// Replaces each byte that does not start a valid sequence with U+FFFD.
std::string ToValidUtf8(std::string_view text);
// Appends `code_point` (a Unicode scalar value: at most U+10FFFF, no surrogate) as UTF-8.
void AppendUtf8(std::string& out, char32_t code_point);
// ASCII letters lowered, every other byte kept (so UTF-8 stays valid): case-insensitive matching of names.
std::string AsciiLowercase(std::string_view text);

}  // namespace runmon
