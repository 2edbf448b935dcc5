// What the rocm-smi and amd-smi parsers share: reading a number out of a tool's text ("(800Mhz)", "91.0",
// "N/A"), the checks that keep a value that cannot be true out of runmon (a busy share over 100 %, a
// negative power, a temperature hotter than silicon survives, used memory over the total), and PCI bus
// addresses in the one spelling sysfs uses ("0000:2f:00.0"), so a tool's card pairs with the card sysfs
// found. Pure functions over untrusted text (fuzzed through both parsers).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "collectors/amd/amd_card_reading.hpp"

namespace runmon::amd {

// The number in `text`, after trimming white space, one pair of surrounding parentheses and one of the
// `units` suffixes (each tried as given; none is required). Only a finite decimal number is taken: "N/A",
// "N/A (Secondary die)", "0x12", "nan", "1e999" and an empty text are nullopt.
std::optional<double> ParseToolNumber(std::string_view text,
                                      std::initializer_list<std::string_view> units = {});

// A count of bytes as a tool spells it: digits only, up to 2^64-1.
std::optional<uint64_t> ParseToolBytes(std::string_view text);

// A double that is a whole number of bytes (JSON numbers arrive as doubles once past 2^64): nullopt when
// negative, fractional, not finite or past 2^63.
std::optional<uint64_t> BytesFromDouble(double value);

// "0000:2F:00.0" (or "2f:00.0", domain 0 implied) as "0000:2f:00.0"; nullopt for anything that is not a
// PCI address.
std::optional<std::string> NormalizePciBus(std::string_view text);

// Leaves unset each value of `values` that cannot be true: shares outside 0-100 %, negative or absurd
// power, clocks, fan speed or energy, temperatures at or below absolute zero or above 200 °C, used memory
// over its total (the used bytes are dropped, the total kept).
void DropImpossibleValues(CardValues& values);

// A metadata string as the tool printed it, trimmed; empty for "N/A" and the like.
std::string MetadataText(std::string_view text);

}  // namespace runmon::amd
