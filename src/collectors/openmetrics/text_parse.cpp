// Prometheus text 0.0.4 / OpenMetrics 1.0 parser (see text_parse.hpp for the lenient choices). One pass over
// the body, one line at a time; every scan moves forward only, so hostile input costs time linear in its
// size and memory bounded by the limits.
#include "collectors/openmetrics/text_parse.hpp"

#include "core/utf8.hpp"
#include "prometheus_text/prometheus_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

namespace runmon::openmetrics {
namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t';
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && (IsBlank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A token as a float into *out; false (and *out untouched) when it is not one.
bool ReadFloat(std::string_view token, double* out) {
  const std::optional<double> value = prometheus_text::ParseFloat(token);
  if (value) *out = *value;
  return value.has_value();
}

void AppendQuoted(std::string& out, std::string_view s) {
  out += '"';
  prometheus_text::AppendEscapedQuoted(out, s);
  out += '"';
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct FamilyState {
  MetricType type = MetricType::kUnknown;
  bool typed = false;
  bool has_samples = false;
  bool has_help = false;
  bool has_unit = false;
  size_t index = SIZE_MAX;  // into ParseResult::families, once a metadata line names it
};

// The sample-name suffixes a TYPE'd family x has (x itself always belongs to x).
bool SuffixBelongs(MetricType type, std::string_view suffix) {
  switch (type) {
    case MetricType::kCounter:
      return suffix == "_total" || suffix == "_created";
    case MetricType::kHistogram:
      return suffix == "_bucket" || suffix == "_sum" || suffix == "_count" || suffix == "_created";
    case MetricType::kGaugeHistogram:
      return suffix == "_bucket" || suffix == "_gsum" || suffix == "_gcount";
    case MetricType::kSummary:
      return suffix == "_sum" || suffix == "_count" || suffix == "_created";
    case MetricType::kInfo:
      return suffix == "_info";
    default:
      return false;
  }
}

constexpr std::string_view kSuffixes[] = {"_total", "_created", "_bucket", "_sum",
                                          "_count", "_gcount",  "_gsum",   "_info"};

std::optional<MetricType> ParseTypeWord(std::string_view word) {
  if (word == "counter") return MetricType::kCounter;
  if (word == "gauge") return MetricType::kGauge;
  if (word == "histogram") return MetricType::kHistogram;
  if (word == "summary") return MetricType::kSummary;
  if (word == "untyped") return MetricType::kUntyped;
  if (word == "unknown") return MetricType::kUnknown;
  if (word == "gaugehistogram") return MetricType::kGaugeHistogram;
  if (word == "stateset") return MetricType::kStateSet;
  if (word == "info") return MetricType::kInfo;
  return std::nullopt;
}

// Whether text's last non-blank line is "# EOF".
bool EndsWithEof(std::string_view text) {
  while (!text.empty() && (IsBlank(text.back()) || text.back() == '\r' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  if (text.size() < 5 || text.substr(text.size() - 5) != "# EOF") return false;
  text.remove_suffix(5);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text.empty() || text.back() == '\n';
}

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options) : text_(text), options_(options) {
    om_ = options.format == TextFormat::kOpenMetrics ||
          (options.format == TextFormat::kAuto && EndsWithEof(text));
    result_.openmetrics = om_;
  }

  ParseResult Run() {
    size_t pos = 0;
    size_t line_no = 0;
    while (pos < text_.size()) {
      ++line_no;
      const size_t remaining = text_.size() - pos;
      const size_t window = std::min(remaining, options_.max_line_bytes + 1);
      const void* found = std::memchr(text_.data() + pos, '\n', window);
      if (found == nullptr) {
        if (remaining > options_.max_line_bytes) {
          Stop(line_no, "line longer than max_line_bytes; parsing stopped");
          break;
        }
        const std::string_view last = TrimBlanks(text_.substr(pos));
        if (om_ && last == "# EOF") {
          result_.saw_eof = true;
        } else if (!last.empty()) {
          Error(line_no, "last line has no '\\n' (cut-off body?); ignored");
        }
        pos = text_.size();
        break;
      }
      const size_t end = static_cast<size_t>(static_cast<const char*>(found) - text_.data());
      const std::string_view line = TrimBlanks(text_.substr(pos, end - pos));
      pos = end + 1;
      if (line.empty()) continue;
      if (line[0] == '#') {
        if (ParseComment(line, line_no)) {  // "# EOF"
          if (text_.substr(pos).find_first_not_of(" \t\r\n") != std::string_view::npos) {
            Error(line_no + 1, "text after # EOF; ignored");
          }
          break;
        }
        continue;
      }
      if (!ParseSample(line, line_no)) break;
    }
    if (options_.format == TextFormat::kOpenMetrics && !result_.saw_eof && !result_.truncated) {
      Error(line_no, "missing # EOF");
    }
    return std::move(result_);
  }

 private:
  void Error(size_t line_no, std::string_view reason) {
    ++result_.error_count;
    if (result_.errors.size() < options_.max_errors) {
      std::string message = "line " + std::to_string(line_no) + ": ";
      message += reason;
      result_.errors.push_back(std::move(message));
    }
  }
  void Stop(size_t line_no, std::string_view reason) {
    result_.truncated = true;
    Error(line_no, reason);
  }

  // A quoted string at s[*i] == '"', unescaped into out. Returns an error reason, or nullptr.
  static const char* ParseQuoted(std::string_view s, size_t* i, std::string* out) {
    if (const char* error = prometheus_text::ReadQuoted(s, i, out)) return error;
    if (!IsValidUtf8(*out)) return "invalid UTF-8 in quoted string";
    return nullptr;
  }

  // A metric name, legacy or quoted, at s[*i]. Returns an error reason, or nullptr.
  static const char* ParseName(std::string_view s, size_t* i, std::string* out) {
    if (*i < s.size() && s[*i] == '"') {
      if (const char* error = ParseQuoted(s, i, out)) return error;
      if (out->empty()) return "empty metric name";
      return nullptr;
    }
    size_t p = *i;
    if (p >= s.size() || !prometheus_text::IsMetricNameStart(s[p])) return "invalid metric name";
    while (p < s.size() && prometheus_text::IsMetricNameChar(s[p])) ++p;
    out->assign(s.data() + *i, p - *i);
    *i = p;
    return nullptr;
  }

  static void SkipBlanks(std::string_view s, size_t* i) {
    while (*i < s.size() && IsBlank(s[*i])) ++*i;
  }

  // A label set at s[*i] == '{'. name_out, when given, receives a quoted metric name written as the first
  // item ({"my.metric", a="b"}). Returns an error reason, or nullptr; labels come back sorted.
  const char* ParseLabels(std::string_view s, size_t* i, Labels* labels, std::string* name_out) {
    size_t p = *i + 1;
    bool first = true;
    std::string name;
    while (true) {
      SkipBlanks(s, &p);
      if (p >= s.size()) return "unterminated label set";
      if (s[p] == '}') {
        ++p;
        break;
      }
      bool quoted = false;
      if (s[p] == '"') {
        if (const char* error = ParseQuoted(s, &p, &name)) return error;
        if (name.empty()) return "empty label name";
        quoted = true;
      } else {
        const size_t start = p;
        if (!prometheus_text::IsLabelNameStart(s[p])) return "invalid label name";
        while (p < s.size() && prometheus_text::IsLabelNameChar(s[p])) ++p;
        name.assign(s.data() + start, p - start);
      }
      SkipBlanks(s, &p);
      if (quoted && first && name_out != nullptr && p < s.size() && (s[p] == ',' || s[p] == '}')) {
        if (!name_out->empty()) return "metric name given twice";
        *name_out = std::move(name);
        name.clear();
      } else {
        if (p >= s.size()) return "unterminated label set";
        if (s[p] != '=') return "expected '=' after label name";
        ++p;
        SkipBlanks(s, &p);
        if (p >= s.size() || s[p] != '"') return "label value must be quoted";
        if (labels->size() >= options_.max_labels) return "more than max_labels labels";
        std::string value;
        if (const char* error = ParseQuoted(s, &p, &value)) return error;
        labels->emplace_back(std::move(name), std::move(value));
        name.clear();
      }
      first = false;
      SkipBlanks(s, &p);
      if (p >= s.size()) return "unterminated label set";
      if (s[p] == ',') {
        ++p;
      } else if (s[p] != '}') {
        return "expected ',' or '}' in label set";
      }
    }
    *i = p;
    if (labels->size() > 1) {
      std::sort(labels->begin(), labels->end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t k = 1; k < labels->size(); ++k) {
        if ((*labels)[k - 1].first == (*labels)[k].first) return "duplicate label name";
      }
    }
    return nullptr;
  }

  static std::string_view NextToken(std::string_view s, size_t* i) {
    const size_t start = *i;
    while (*i < s.size() && !IsBlank(s[*i])) ++*i;
    return s.substr(start, *i - start);
  }

  // A timestamp token: integer milliseconds (Prometheus) or float seconds (OpenMetrics).
  const char* ParseTimestamp(std::string_view token, double* seconds) const {
    if (om_) {
      if (!ReadFloat(token, seconds) || !std::isfinite(*seconds)) return "invalid timestamp";
      return nullptr;
    }
    std::string_view digits = token;
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
    int64_t ms = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ms);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      return "invalid timestamp (Prometheus text: integer milliseconds)";
    }
    *seconds = static_cast<double>(ms) / 1000.0;
    return nullptr;
  }

  // Returns false to stop parsing.
  bool ParseSample(std::string_view line, size_t line_no) {
    MetricSample sample;
    sample.line = line_no;
    size_t p = 0;
    const char* error = nullptr;
    if (line[0] != '{') {
      error = ParseName(line, &p, &sample.name);
      if (error == nullptr && p < line.size() && !IsBlank(line[p]) && line[p] != '{') {
        error = "invalid character in metric name";
      }
      SkipBlanks(line, &p);
    }
    if (error == nullptr && p < line.size() && line[p] == '{') {
      std::string* name_out = sample.name.empty() ? &sample.name : nullptr;
      error = ParseLabels(line, &p, &sample.labels, name_out);
    }
    if (error == nullptr && sample.name.empty()) error = "missing metric name";
    if (error == nullptr) {
      SkipBlanks(line, &p);
      const std::string_view token = NextToken(line, &p);
      if (token.empty()) {
        error = "missing value";
      } else if (!ReadFloat(token, &sample.value)) {
        error = "invalid value";
      }
    }
    if (error == nullptr) {
      SkipBlanks(line, &p);
      if (p < line.size() && line[p] != '#') {
        double seconds = 0;
        error = ParseTimestamp(NextToken(line, &p), &seconds);
        sample.timestamp_seconds = seconds;
        SkipBlanks(line, &p);
      }
    }
    if (error == nullptr && p < line.size() && line[p] != '#') error = "unexpected text after sample";
    if (error == nullptr && p < line.size()) {
      // " # {labels} value [timestamp]"
      ++p;  // '#'
      SkipBlanks(line, &p);
      if (p >= line.size() || line[p] != '{') {
        error = "expected exemplar label set after '#'";
      } else {
        Exemplar exemplar;
        error = ParseLabels(line, &p, &exemplar.labels, nullptr);
        if (error == nullptr) {
          SkipBlanks(line, &p);
          const std::string_view token = NextToken(line, &p);
          if (token.empty()) {
            error = "missing exemplar value";
          } else if (!ReadFloat(token, &exemplar.value)) {
            error = "invalid exemplar value";
          }
        }
        if (error == nullptr) {
          SkipBlanks(line, &p);
          if (p < line.size()) {
            double seconds = 0;
            const bool saved = om_;
            om_ = true;  // exemplar timestamps are float seconds in both formats
            error = ParseTimestamp(NextToken(line, &p), &seconds);
            om_ = saved;
            exemplar.timestamp_seconds = seconds;
            SkipBlanks(line, &p);
          }
        }
        if (error == nullptr && p < line.size()) error = "unexpected text after exemplar";
        if (error == nullptr) sample.exemplar = std::move(exemplar);
      }
    }
    if (error != nullptr) {
      Error(line_no, error);
      return true;
    }
    if (result_.samples.size() >= options_.max_samples) {
      Stop(line_no, "more than max_samples samples; parsing stopped");
      return false;
    }
    Resolve(sample);
    result_.samples.push_back(std::move(sample));
    return true;
  }

  // Sets the sample's family and type.
  void Resolve(MetricSample& sample) {
    if (cache_state_ != nullptr && sample.name == cache_name_) {
      sample.family = cache_family_;
      sample.type = cache_state_->type;
      return;
    }
    FamilyState* state = nullptr;
    std::string_view family = sample.name;
    if (auto it = families_.find(std::string_view(sample.name)); it != families_.end() && it->second.typed) {
      state = &it->second;
    } else {
      for (std::string_view suffix : kSuffixes) {
        const std::string_view name = sample.name;
        if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) continue;
        const std::string_view base = name.substr(0, name.size() - suffix.size());
        auto base_it = families_.find(base);
        if (base_it != families_.end() && base_it->second.typed &&
            SuffixBelongs(base_it->second.type, suffix)) {
          state = &base_it->second;
          family = base_it->first;
          break;
        }
      }
    }
    if (state == nullptr) {
      // Untyped: remembered so that a later TYPE line for it can be recognised as "after samples".
      state = &families_.try_emplace(sample.name).first->second;
      if (!state->typed) state->type = om_ ? MetricType::kUnknown : MetricType::kUntyped;
    }
    state->has_samples = true;
    sample.family = std::string(family);
    sample.type = state->typed ? state->type : (om_ ? MetricType::kUnknown : MetricType::kUntyped);
    cache_name_ = sample.name;
    cache_family_ = sample.family;
    cache_state_ = state;
    // An untyped state's type can change with a later TYPE line; Resolve is re-run then (cache cleared).
  }

  FamilyState& Family(const std::string& name) {
    FamilyState& state = families_.try_emplace(name).first->second;
    if (state.index == SIZE_MAX) {
      state.index = result_.families.size();
      MetricFamily family;
      family.name = name;
      result_.families.push_back(std::move(family));
    }
    return state;
  }

  // A '#' line. Returns true for "# EOF" in OpenMetrics (stop).
  bool ParseComment(std::string_view line, size_t line_no) {
    size_t p = 1;
    const bool spaced = p < line.size() && IsBlank(line[p]);
    SkipBlanks(line, &p);
    const std::string_view keyword = NextToken(line, &p);
    if (spaced && om_ && keyword == "EOF" && p == line.size()) {
      result_.saw_eof = true;
      return true;
    }
    const bool metadata = spaced && (keyword == "HELP" || keyword == "TYPE" || keyword == "UNIT");
    if (!metadata) {
      if (om_) Error(line_no, "invalid comment line (OpenMetrics allows only HELP, TYPE, UNIT and EOF)");
      return false;
    }
    SkipBlanks(line, &p);
    std::string name;
    if (const char* error = ParseName(line, &p, &name)) {
      Error(line_no, error);
      return false;
    }
    if (p < line.size() && !IsBlank(line[p])) {
      Error(line_no, "invalid character in metric name");
      return false;
    }
    if (p < line.size()) ++p;  // one blank before the text
    const std::string_view rest = line.substr(p);
    cache_state_ = nullptr;
    if (keyword == "HELP") {
      std::string help = prometheus_text::UnescapeHelp(rest);
      if (!IsValidUtf8(help)) {
        Error(line_no, "invalid UTF-8 in HELP text");
        return false;
      }
      FamilyState& state = Family(name);
      if (state.has_help) {
        Error(line_no, "second HELP line for the family; ignored");
        return false;
      }
      state.has_help = true;
      result_.families[state.index].help = std::move(help);
      return false;
    }
    if (keyword == "UNIT") {
      const std::string_view unit = TrimBlanks(rest);
      for (char c : unit) {
        if (!prometheus_text::IsMetricNameChar(c)) {
          Error(line_no, "invalid unit");
          return false;
        }
      }
      FamilyState& state = Family(name);
      if (state.has_unit) {
        Error(line_no, "second UNIT line for the family; ignored");
        return false;
      }
      state.has_unit = true;
      result_.families[state.index].unit = std::string(unit);
      return false;
    }
    // TYPE
    const auto type = ParseTypeWord(TrimBlanks(rest));
    if (!type) {
      Error(line_no, "unknown metric type");
      return false;
    }
    FamilyState& state = Family(name);
    if (state.typed) {
      Error(line_no, "second TYPE line for the family; ignored");
      return false;
    }
    bool seen = state.has_samples;
    for (std::string_view suffix : kSuffixes) {
      if (seen || !SuffixBelongs(*type, suffix)) continue;
      std::string child = name;
      child += suffix;
      const auto it = families_.find(std::string_view(child));
      seen = it != families_.end() && it->second.has_samples;
    }
    if (seen && om_) {
      Error(line_no, "TYPE after samples of the family (OpenMetrics forbids it); ignored");
      return false;
    }
    state.typed = true;
    state.type = *type;
    result_.families[state.index].typed = true;
    result_.families[state.index].type = *type;
    return false;
  }

  std::string_view text_;
  const ParseOptions& options_;
  bool om_ = false;
  ParseResult result_;
  std::unordered_map<std::string, FamilyState, StringHash, std::equal_to<>> families_;
  std::string cache_name_;
  std::string cache_family_;
  FamilyState* cache_state_ = nullptr;
};

}  // namespace

std::string_view MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kUnknown:
      return "unknown";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kUntyped:
      return "untyped";
    case MetricType::kGaugeHistogram:
      return "gaugehistogram";
    case MetricType::kStateSet:
      return "stateset";
    case MetricType::kInfo:
      return "info";
  }
  return "unknown";
}

ParseResult ParseExposition(std::string_view text, const ParseOptions& options) {
  return Parser(text, options).Run();
}

std::vector<size_t> FindDuplicateSeries(const std::vector<MetricSample>& samples) {
  std::vector<size_t> duplicates;
  std::unordered_set<std::string> seen;
  std::string key;
  auto append = [&key](std::string_view s) {
    key += std::to_string(s.size());
    key += ':';
    key += s;
  };
  for (size_t i = 0; i < samples.size(); ++i) {
    key.clear();
    append(samples[i].name);
    for (const auto& [name, value] : samples[i].labels) {
      append(name);
      append(value);
    }
    if (!seen.insert(key).second) duplicates.push_back(i);
  }
  return duplicates;
}

namespace {

void AppendLabel(std::string& out, const std::pair<std::string, std::string>& label) {
  if (prometheus_text::IsValidLabelName(label.first)) {
    out += label.first;
  } else {
    AppendQuoted(out, label.first);
  }
  out += '=';
  AppendQuoted(out, label.second);
}

void AppendTimestamp(std::string& out, double seconds, bool openmetrics) {
  out += ' ';
  if (openmetrics) {
    prometheus_text::AppendFloat(out, seconds);
  } else {
    out += std::to_string(std::llround(seconds * 1000.0));
  }
}

}  // namespace

std::string FormatSample(const MetricSample& sample, TextFormat format) {
  const bool openmetrics = format == TextFormat::kOpenMetrics;
  std::string out;
  const bool legacy = prometheus_text::IsValidMetricName(sample.name);
  if (legacy) out += sample.name;
  if (!legacy || !sample.labels.empty()) {
    out += '{';
    bool first = true;
    if (!legacy) {
      AppendQuoted(out, sample.name);
      first = false;
    }
    for (const auto& label : sample.labels) {
      if (!first) out += ',';
      first = false;
      AppendLabel(out, label);
    }
    out += '}';
  }
  out += ' ';
  prometheus_text::AppendFloat(out, sample.value);
  if (sample.timestamp_seconds) AppendTimestamp(out, *sample.timestamp_seconds, openmetrics);
  if (sample.exemplar) {
    out += " # {";
    bool first = true;
    for (const auto& label : sample.exemplar->labels) {
      if (!first) out += ',';
      first = false;
      AppendLabel(out, label);
    }
    out += "} ";
    prometheus_text::AppendFloat(out, sample.exemplar->value);
    if (sample.exemplar->timestamp_seconds) AppendTimestamp(out, *sample.exemplar->timestamp_seconds, true);
  }
  return out;
}

}  // namespace runmon::openmetrics
