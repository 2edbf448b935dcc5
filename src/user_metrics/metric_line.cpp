// The metrics channel's lines parsed into history items (see metric_line.hpp). Most lines are one flat
// object of numbers, which a scanner of its own takes without the JSON library (ParseFlatMetricLine: a few
// times faster, for the 100,000 lines a second a training loop may send); the rest go to the general path,
// which builds a JSON document and flattens it. In the general path Python's NaN and Infinity
// words are swapped for marker strings before the JSON parser sees them (outside strings JSON has no
// capital letters, so the words cannot be mistaken) and swapped back into the values' JSON after; the
// nesting is checked on the text first, so a line of a million '[' is refused before it becomes a value.
#include "user_metrics/metric_line.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon::user_metrics {
namespace {

using Json = nlohmann::ordered_json;

struct Word {
  std::string_view word;    // as Python writes it
  std::string_view marker;  // the JSON string put in its place, as the JSON writer writes it back too
};
// A NUL begins each marker: a line's own strings could hold one only escaped, and a value that happens to
// be a marker's text is taken for the word it marks, which is what a writer of it would mean. Keys never
// hold a NUL (a word where a key should be is refused that way).
constexpr std::array<Word, 3> kWords = {{
    {"-Infinity", "\"\\u0000runmon:-Infinity\""},
    {"Infinity", "\"\\u0000runmon:Infinity\""},
    {"NaN", "\"\\u0000runmon:NaN\""},
}};

// The line with Python's words replaced by markers, and whether any was; an error for a capital letter
// outside a string that starts none of them, or nesting deeper than `max_depth`.
Result<std::pair<std::string, bool>> ReplaceWords(std::string_view line, int max_depth) {
  std::string out;
  bool replaced = false;
  bool in_string = false;
  bool escaped = false;
  int depth = 0;
  size_t copied = 0;  // line[0, copied) is in `out`
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return Error{fmt::format("nested deeper than {} levels", max_depth)};
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == 'N' || c == 'I' || (c == '-' && i + 1 < line.size() && line[i + 1] == 'I')) {
      const Word* found = nullptr;
      for (const Word& word : kWords) {
        if (line.substr(i).starts_with(word.word)) {
          found = &word;
          break;
        }
      }
      if (found == nullptr) return Error{fmt::format("not JSON (at byte {})", i + 1)};
      out.append(line.substr(copied, i - copied));
      out.append(found->marker);
      i += found->word.size() - 1;
      copied = i + 1;
      replaced = true;
    }
  }
  if (!replaced) return std::pair<std::string, bool>{std::string(), false};
  out.append(line.substr(copied));
  return std::pair<std::string, bool>{std::move(out), true};
}

// The value's JSON with the markers back as Python's words.
std::string ValueJson(const Json& value, bool words) {
  std::string text = value.dump();
  if (!words) return text;
  for (const Word& word : kWords) {
    for (size_t at = text.find(word.marker); at != std::string::npos; at = text.find(word.marker, at)) {
      text.replace(at, word.marker.size(), word.word);
      at += word.word.size();
    }
  }
  return text;
}

class Flattener {
 public:
  Flattener(const MetricLineLimits& limits, bool words, std::vector<MetricItem>& items)
      : limits_(limits), words_(words), items_(items) {}

  Status Add(const std::string& key, const Json& value) {
    if (key.size() > limits_.max_key_bytes) {
      return Error{fmt::format("a key is longer than {} bytes", limits_.max_key_bytes)};
    }
    if (value.is_null()) return OkStatus();
    if (value.is_object()) {
      for (const auto& [name, member] : value.items()) {
        if (name.empty()) return Error{fmt::format("\"{}\" holds an empty key", Shown(key))};
        if (name.find('\0') != std::string::npos) return Error{"a key holds a NUL"};
        if (auto added = Add(key + "." + name, member); !added) return added;
      }
      return OkStatus();
    }
    if (items_.size() >= limits_.max_items) {
      return Error{fmt::format("more than {} values", limits_.max_items)};
    }
    items_.push_back({key, ValueJson(value, words_)});
    return OkStatus();
  }

 private:
  static std::string Shown(const std::string& key) {
    return key.size() > 40 ? key.substr(0, 37) + "..." : key;
  }

  const MetricLineLimits& limits_;
  const bool words_;
  std::vector<MetricItem>& items_;
};

std::optional<int64_t> WholeStep(const Json& value) {
  if (value.is_number_unsigned()) {
    const uint64_t step = value.get<uint64_t>();
    if (step <= static_cast<uint64_t>(kMaxStep)) return static_cast<int64_t>(step);
  } else if (value.is_number_integer()) {
    const int64_t step = value.get<int64_t>();
    if (step >= 0 && step <= kMaxStep) return step;
  }
  return std::nullopt;
}

}  // namespace

Result<MetricLine> ParseMetricLineInGeneral(std::string_view line, const MetricLineLimits& limits) {
  auto replaced = ReplaceWords(line, limits.max_depth);
  if (!replaced) return Error{replaced.error()};
  const bool words = replaced->second;
  Json document;
  try {
    document = Json::parse(words ? std::string_view(replaced->first) : line);
  } catch (const Json::parse_error& error) {
    // Where the parser stopped, counted from 1 (the line's end for a truncated one).
    const size_t at = std::min(error.byte, line.size());
    return Error{words ? std::string("not JSON") : fmt::format("not JSON (at byte {})", at)};
  } catch (const Json::out_of_range&) {
    return Error{"not JSON (a number too large for a double)"};
  }
  if (!document.is_object()) return Error{"not a JSON object"};

  MetricLine parsed;
  Flattener flattener(limits, words, parsed.items);
  for (const auto& [key, value] : document.items()) {
    if (key.empty()) return Error{"an empty key"};
    if (key.find('\0') != std::string::npos) return Error{"a key holds a NUL"};
    if (key == "_summary") {
      if (!value.is_object()) return Error{"_summary is not an object"};
      if (document.size() != 1) return Error{"_summary comes alone"};
      parsed.summary = true;
      for (const auto& [name, member] : value.items()) {
        if (name.empty()) return Error{"an empty key"};
        if (name.find('\0') != std::string::npos) return Error{"a key holds a NUL"};
        if (auto added = flattener.Add(name, member); !added) return Error{added.error()};
      }
    } else if (key == "_step") {
      parsed.step = WholeStep(value);
      if (!parsed.step) return Error{"_step is not a whole number from 0 to 2^53"};
    } else if (key == "_timestamp") {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
        return Error{"_timestamp is not a time (seconds since 1970)"};
      }
      parsed.timestamp = value.get<double>();
    } else if (key.front() == '_') {
      continue;  // runmon's own keys (_runtime) are written by runmon
    } else if (auto added = flattener.Add(key, value); !added) {
      return Error{added.error()};
    }
  }
  return parsed;
}

namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// A JSON number at the start of `text` (RFC 8259's grammar, nothing more): its length, 0 when there is none.
size_t NumberLength(std::string_view text, bool& integer) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - from;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return 0;
  }
  integer = true;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (digits() == 0) return 0;
    integer = false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return 0;
    integer = false;
  }
  return i;
}

// Whether a number's text stays well within a double's range whatever its digits: at most 40 characters,
// 20 digits before the point and an exponent within 250 (anything else is left to the general path,
// which refuses what overflows).
bool PlainNumber(std::string_view text) {
  if (text.size() > 40) return false;
  size_t i = text.front() == '-' ? 1 : 0;
  size_t integer_digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    ++integer_digits;
    ++i;
  }
  const size_t e = text.find_first_of("eE", i);
  if (e == std::string_view::npos) return integer_digits <= 20;
  std::string_view digits = text.substr(e + 1);
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) digits.remove_prefix(1);
  int exponent = 0;
  if (digits.size() > 3) return false;
  std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
  return integer_digits <= 20 && exponent <= 250;
}

}  // namespace

// The common line without the JSON library: one flat object whose keys are printable ASCII without
// escapes and whose values are numbers, true, false, null or Python's words. Anything else (nesting,
// strings, arrays, escapes, other bytes, a key twice, an error of any kind) is left to the general path,
// so what this one gives is what that one would (the fuzz target compares them), but for numbers, which
// keep the writer's text (`3e-4`) where the general path writes the parsed double back (`0.0003`).
std::optional<MetricLine> ParseFlatMetricLine(std::string_view line, const MetricLineLimits& limits) {
  size_t i = 0;
  const auto skip = [&] {
    while (i < line.size() && IsSpace(line[i])) ++i;
  };
  skip();
  if (i >= line.size() || line[i] != '{' || limits.max_depth < 1) return std::nullopt;
  ++i;
  skip();
  MetricLine parsed;
  std::vector<std::string_view> keys;  // every key, `_` ones and nulls too: one twice is the general path's
  // A flat line has at most as many keys as colons: one allocation each for the keys and the items.
  const auto colons = static_cast<size_t>(std::count(line.begin(), line.end(), ':'));
  keys.reserve(colons);
  parsed.items.reserve(std::min(colons, limits.max_items));
  if (i < line.size() && line[i] == '}') {
    ++i;
  } else {
    for (;;) {
      if (i >= line.size() || line[i] != '"') return std::nullopt;
      const size_t key_start = ++i;
      while (i < line.size() && line[i] != '"') {
        const auto byte = static_cast<unsigned char>(line[i]);
        if (byte < 0x20 || byte >= 0x7F || byte == '\\') return std::nullopt;
        ++i;
      }
      if (i >= line.size()) return std::nullopt;
      const std::string_view key = line.substr(key_start, i - key_start);
      ++i;
      skip();
      if (key.empty() || key.size() > limits.max_key_bytes || i >= line.size() || line[i] != ':' ||
          std::find(keys.begin(), keys.end(), key) != keys.end()) {
        return std::nullopt;
      }
      keys.push_back(key);
      ++i;
      skip();
      const std::string_view rest = line.substr(i);
      std::string value_json;
      bool present = true;
      bool integer = false;
      const bool step = key == "_step";
      const bool timestamp = key == "_timestamp";
      if (const size_t length = NumberLength(rest, integer); length > 0) {
        const std::string_view number = rest.substr(0, length);
        if (!PlainNumber(number)) return std::nullopt;
        i += length;
        if (step) {
          int64_t value = 0;
          const auto [end, error] = std::from_chars(number.data(), number.data() + length, value);
          if (!integer || error != std::errc() || end != number.data() + length || value < 0 ||
              value > kMaxStep) {
            return std::nullopt;
          }
          parsed.step = value;
        } else if (timestamp) {
          double seconds = 0;
          std::from_chars(number.data(), number.data() + length, seconds);
          if (seconds < 0) return std::nullopt;
          parsed.timestamp = seconds;
        } else {
          value_json = number;  // as the writer wrote it: valid JSON, the same number
        }
      } else {
        std::string_view word;
        for (const std::string_view candidate : {"true", "false", "null", "NaN", "Infinity", "-Infinity"}) {
          if (rest.starts_with(candidate)) word = candidate;
        }
        if (word.empty() || step || timestamp) return std::nullopt;
        i += word.size();
        present = word != "null";
        value_json = word;
      }
      if (key.front() == '_') {
        if (!step && !timestamp && key == "_summary") return std::nullopt;
      } else if (present) {
        if (parsed.items.size() >= limits.max_items) return std::nullopt;
        parsed.items.push_back({std::string(key), std::move(value_json)});
      }
      skip();
      if (i < line.size() && line[i] == ',') {
        ++i;
        skip();
        continue;
      }
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      return std::nullopt;
    }
  }
  skip();
  if (i != line.size()) return std::nullopt;
  return parsed;
}

Result<MetricLine> ParseMetricLine(std::string_view line, const MetricLineLimits& limits) {
  if (auto flat = ParseFlatMetricLine(line, limits)) return std::move(*flat);
  return ParseMetricLineInGeneral(line, limits);
}

}  // namespace runmon::user_metrics
