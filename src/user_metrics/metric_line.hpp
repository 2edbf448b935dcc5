// One line of the command's metrics channel (`runmon run` gives the command RUNMON_RUN_SOCKET; the Python
// module and <runmon/log.hpp> write to it): a JSON object, `{"loss": 0.31, "lr": 3e-4, "_step": 12}`,
// parsed into W&B history items. Pure.
//   - Nested objects are flattened with '.' ({"train": {"loss": 1}} is "train.loss"), W&B's way of naming
//     nested history keys; an empty object is left out. Numbers, booleans, strings and arrays are values
//     (their JSON is the item's value_json: a flat line's numbers as written, others as the parsed value
//     writes back); null is no value and is left out (a missing value is omitted).
//   - Python's json module writes the floats nan and inf as the bare words NaN, Infinity and -Infinity,
//     which JSON has not; they are taken as values too, and kept as W&B keeps them (value_json NaN, ...).
//   - Keys starting with '_' are runmon's: `_step` (a whole number, 0 to 2^53) is the row's step,
//     `_timestamp` (seconds since the epoch, finite) when the values were logged; `_runtime` and any other
//     `_` key are left out (runmon writes `_runtime`, `_step` and `_timestamp` itself).
//   - `{"_summary": {...}}` sets summary values instead (runmon.summary()): a line of that key alone.
// Errors say what is wrong in a few words ("not JSON (at byte 7)", "_step is not a whole number from 0").
// Limits keep a hostile line cheap: nesting deeper than max_depth, more than max_items values or a key
// longer than max_key_bytes is an error; the line's length is the reader's limit (metric_channel.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::user_metrics {

struct MetricItem {
  std::string key;         // flattened ("train.loss")
  std::string value_json;  // "0.31", "true", "\"text\"", "[1,2]", "NaN"
  friend bool operator==(const MetricItem&, const MetricItem&) = default;
};

struct MetricLine {
  std::vector<MetricItem> items;  // in the line's order
  std::optional<int64_t> step;
  std::optional<double> timestamp;
  bool summary = false;  // the items are summary values
};

struct MetricLineLimits {
  int max_depth = 16;
  size_t max_items = 10000;
  size_t max_key_bytes = 1024;
};

inline constexpr int64_t kMaxStep = int64_t{1} << 53;

Result<MetricLine> ParseMetricLine(std::string_view line, const MetricLineLimits& limits = {});
// The two paths ParseMetricLine takes, for the fuzz target to compare: the flat lines' scanner (nothing
// where the line is not one it takes; numbers kept as written) and the general parser (numbers written
// back from their parsed value). Where both take a line they give the same items, numbers equal as values.
std::optional<MetricLine> ParseFlatMetricLine(std::string_view line, const MetricLineLimits& limits = {});
Result<MetricLine> ParseMetricLineInGeneral(std::string_view line, const MetricLineLimits& limits = {});

}  // namespace runmon::user_metrics
