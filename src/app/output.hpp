// Rendering of samples for `runmon sample`: one JSON object per line (W&B's _timestamp, _runtime and every
// key) or a readable table with titles and units from the metric catalog. Pure: strings in, string out.
#pragma once

#include <string>
#include <string_view>

#include "core/sample.hpp"

namespace runmon {

// Appends `text` to `out` as a JSON string literal (quotes, escapes, control characters, invalid UTF-8
// bytes replaced so the line stays valid JSON).
void AppendJsonString(std::string& out, std::string_view text);

// {"_timestamp":...,"_runtime":...,"key":value,...}\n. Non-finite values are left out (JSON has none).
std::string FormatSampleJson(const Sample& sample);

// A block of aligned lines: key, value, unit, title.
std::string FormatSampleTable(const Sample& sample, uint64_t number);

}  // namespace runmon
