// Parsing of durations and of W&B's x_stats_* settings. Lists and maps arrive as JSON text (W&B's form);
// a bare comma-separated list is accepted for lists as a convenience.
#include "config/settings.hpp"

#include "config/openmetrics_settings.hpp"
#include "core/utf8.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Result<double> ParseFiniteDouble(std::string_view text) {
  text = Trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return Error{fmt::format("'{}' is not a number", text)};
  }
  return value;
}

Result<long> ParseInteger(std::string_view text) {
  text = Trim(text);
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size()) {
    return Error{fmt::format("'{}' is not an integer", text)};
  }
  if (ec == std::errc::result_out_of_range) return Error{fmt::format("{} is out of range", text)};
  return value;
}

Result<bool> ParseBool(std::string_view text) {
  std::string lower(Trim(text));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off") return false;
  return Error{fmt::format("'{}' is not a boolean (true/false)", text)};
}

// A JSON list of strings, or a comma-separated list.
Result<std::vector<std::string>> ParseStringList(std::string_view text) {
  text = Trim(text);
  std::vector<std::string> out;
  // Text that starts like JSON is JSON (W&B's form) and must be a list of strings.
  if (!text.empty() && (text.front() == '[' || text.front() == '{' || text.front() == '"')) {
    const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_array()) return Error{"not a valid JSON list of strings"};
    for (const auto& item : json) {
      if (!item.is_string()) return Error{"list items must be strings"};
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const auto item = Trim(text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Status ValidateJson(std::string_view text, bool want_object_or_array) {
  const auto json = nlohmann::json::parse(Trim(text), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Error{"not valid JSON"};
  if (want_object_or_array && !json.is_object() && !json.is_array()) {
    return Error{"expected a JSON object or list"};
  }
  return OkStatus();
}

enum class SettingKind {
  kInterval,
  kPid,
  kTree,
  kNoCgroup,
  kDiskPaths,
  kCpuCount,
  kCpuLogicalCount,
  kGpuCount,
  kGpuType,
  kPerCore,
  kJsonOther,
  kOpenMetricsEndpoints,
  kOpenMetricsFilters,
  kOpenMetricsHeaders,
  kStringOther,
  kIntOther,
  kLabel
};

struct KnownSetting {
  std::string_view name;
  SettingKind kind;
};

constexpr KnownSetting kKnownSettings[] = {
    {"x_stats_sampling_interval", SettingKind::kInterval},
    {"x_stats_pid", SettingKind::kPid},
    {"x_stats_track_process_tree", SettingKind::kTree},
    {"x_stats_no_cgroup", SettingKind::kNoCgroup},
    {"x_stats_disk_paths", SettingKind::kDiskPaths},
    {"x_stats_cpu_count", SettingKind::kCpuCount},
    {"x_stats_cpu_logical_count", SettingKind::kCpuLogicalCount},
    {"x_stats_gpu_count", SettingKind::kGpuCount},
    {"x_stats_gpu_type", SettingKind::kGpuType},
    {"x_stats_per_core_cpu", SettingKind::kPerCore},
    {"x_stats_gpu_device_ids", SettingKind::kJsonOther},
    {"x_stats_open_metrics_endpoints", SettingKind::kOpenMetricsEndpoints},
    {"x_stats_open_metrics_filters", SettingKind::kOpenMetricsFilters},
    {"x_stats_open_metrics_http_headers", SettingKind::kOpenMetricsHeaders},
    {"x_stats_buffer_size", SettingKind::kIntOther},
    {"x_stats_neuron_monitor_config_path", SettingKind::kStringOther},
    {"x_stats_dcgm_exporter", SettingKind::kStringOther},
    {"x_stats_coreweave_metadata_base_url", SettingKind::kStringOther},
    {"x_stats_coreweave_metadata_endpoint", SettingKind::kStringOther},
    {"x_label", SettingKind::kLabel},
};

Status Apply(Settings& s, const KnownSetting& setting, std::string_view value) {
  switch (setting.kind) {
    case SettingKind::kInterval: {
      auto seconds = ParseDurationSeconds(value);
      if (!seconds) return Error{seconds.error()};
      // W&B (Go) treats 0 as "use the default".
      const double interval = *seconds == 0 ? kDefaultIntervalSeconds : *seconds;
      if (interval < kMinIntervalSeconds) {
        return Error{fmt::format("the interval must be at least {} s", kMinIntervalSeconds)};
      }
      s.interval_seconds = interval;
      return OkStatus();
    }
    case SettingKind::kPid: {
      auto pid = ParseInteger(value);
      if (!pid) return Error{pid.error()};
      s.pid = *pid;
      return OkStatus();
    }
    case SettingKind::kTree:
    case SettingKind::kNoCgroup:
    case SettingKind::kPerCore: {
      auto b = ParseBool(value);
      if (!b) return Error{b.error()};
      (setting.kind == SettingKind::kTree       ? s.track_process_tree
       : setting.kind == SettingKind::kNoCgroup ? s.no_cgroup
                                                : s.per_core_cpu) = *b;
      return OkStatus();
    }
    case SettingKind::kDiskPaths: {
      auto list = ParseStringList(value);
      if (!list) return Error{list.error()};
      auto paths = NormalizeDiskPaths(*list);
      if (!paths) return Error{paths.error()};
      s.disk_paths = std::move(*paths);
      return OkStatus();
    }
    case SettingKind::kCpuCount:
    case SettingKind::kCpuLogicalCount:
    case SettingKind::kGpuCount: {
      auto n = ParseInteger(value);
      if (!n) return Error{n.error()};
      if (*n < 0) return Error{"must not be negative"};
      (setting.kind == SettingKind::kCpuCount          ? s.cpu_count
       : setting.kind == SettingKind::kCpuLogicalCount ? s.cpu_logical_count
                                                       : s.gpu_count) = *n;
      return OkStatus();
    }
    case SettingKind::kGpuType:
      s.gpu_type = std::string(value);
      return OkStatus();
    case SettingKind::kJsonOther: {
      if (auto ok = ValidateJson(value, true); !ok) return ok;
      s.other[std::string(setting.name)] = std::string(Trim(value));
      return OkStatus();
    }
    case SettingKind::kOpenMetricsEndpoints:
    case SettingKind::kOpenMetricsFilters:
    case SettingKind::kOpenMetricsHeaders: {
      if (auto ok = ValidateJson(value, true); !ok) return ok;
      const std::string_view text = Trim(value);
      Status parsed = OkStatus();
      if (setting.kind == SettingKind::kOpenMetricsEndpoints) {
        if (auto endpoints = ParseOpenMetricsEndpoints(text); !endpoints) parsed = Error{endpoints.error()};
      } else if (setting.kind == SettingKind::kOpenMetricsFilters) {
        if (auto filters = ParseOpenMetricsFilters(text); !filters) parsed = Error{filters.error()};
      } else if (auto headers = ParseOpenMetricsHeaders(text); !headers) {
        parsed = Error{headers.error()};
      }
      if (!parsed) return parsed;
      s.other[std::string(setting.name)] = std::string(text);
      return OkStatus();
    }
    case SettingKind::kIntOther: {
      auto n = ParseInteger(value);
      if (!n) return Error{n.error()};
      if (*n < 0) return Error{"must not be negative"};  // x_stats_buffer_size, a count of samples
      s.other[std::string(setting.name)] = std::to_string(*n);
      return OkStatus();
    }
    case SettingKind::kStringOther:
      s.other[std::string(setting.name)] = std::string(value);
      return OkStatus();
    case SettingKind::kLabel:
      if (auto ok = ValidateLabel(value); !ok) return ok;
      s.label = std::string(value);
      return OkStatus();
  }
  return Error{"unhandled setting"};
}

}  // namespace

Result<double> ParseDurationSeconds(std::string_view text) {
  text = Trim(text);
  double scale = 1;
  std::string_view number = text;
  struct Suffix {
    std::string_view text;
    double scale;
  };
  // Longest suffixes first, so "ms" is not read as "s".
  for (const Suffix suffix : {Suffix{"ms", 1e-3}, Suffix{"s", 1}, Suffix{"m", 60}, Suffix{"h", 3600}}) {
    if (text.size() > suffix.text.size() && text.ends_with(suffix.text)) {
      scale = suffix.scale;
      number = text.substr(0, text.size() - suffix.text.size());
      break;
    }
  }
  auto value = ParseFiniteDouble(number);
  if (!value) return Error{fmt::format("'{}' is not a duration (examples: 0.5, 500ms, 15s, 2m)", text)};
  if (*value < 0) return Error{fmt::format("'{}': a duration cannot be negative", text)};
  const double seconds = *value * scale;
  if (!std::isfinite(seconds) || seconds > 86400.0 * 365) {
    return Error{fmt::format("'{}': a duration must be under a year", text)};
  }
  return seconds;
}

Result<std::vector<std::string>> NormalizeDiskPaths(const std::vector<std::string>& paths) {
  if (paths.empty()) return Error{"needs at least one path"};
  std::vector<std::string> out;
  for (const auto& path : paths) {
    if (path.empty()) return Error{"a path cannot be empty"};
    if (path.find('\0') != std::string::npos) return Error{"a path cannot contain a NUL byte"};
    std::string normal = path.front() == '/' ? "/" : "";
    size_t start = 0;
    while (start < path.size()) {
      const size_t slash = std::min(path.find('/', start), path.size());
      const std::string_view component = std::string_view(path).substr(start, slash - start);
      if (!component.empty() && component != ".") {
        if (!normal.empty() && normal.back() != '/') normal += '/';
        normal += component;
      }
      start = slash + 1;
    }
    if (normal.empty()) normal = ".";
    if (std::find(out.begin(), out.end(), normal) == out.end()) out.push_back(std::move(normal));
  }
  return out;
}

Status ValidateLabel(std::string_view label) {
  if (label.size() > kMaxLabelBytes) return Error{fmt::format("a label is at most {} bytes", kMaxLabelBytes)};
  if (!IsValidUtf8(label)) return Error{"a label must be valid UTF-8"};
  if (std::any_of(label.begin(), label.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return Error{"a label cannot hold control characters"};
  }
  return OkStatus();
}

Status ApplyWandbSetting(Settings& settings, std::string_view name, std::string_view value) {
  const std::string full_name = name.starts_with("x_") ? std::string(name) : "x_stats_" + std::string(name);
  for (const auto& known : kKnownSettings) {
    if (known.name == full_name) {
      auto status = Apply(settings, known, value);
      // Headers (tokens) and endpoint URLs (passwords) are not repeated: the messages name what is wrong.
      const bool secret =
          known.kind == SettingKind::kOpenMetricsHeaders || known.kind == SettingKind::kOpenMetricsEndpoints;
      if (!status && secret) return Error{fmt::format("setting {}: {}", name, status.error())};
      if (!status) return Error{fmt::format("setting {}={}: {}", name, value, status.error())};
      return OkStatus();
    }
  }
  return Error{
      fmt::format("unknown setting '{}' (known: {})", name, fmt::join(KnownWandbSettingNames(), ", "))};
}

Status ApplySetAssignment(Settings& settings, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Error{fmt::format("'{}' is not of the form x_stats_NAME=VALUE", assignment)};
  }
  return ApplyWandbSetting(settings, Trim(assignment.substr(0, eq)), assignment.substr(eq + 1));
}

std::optional<std::string> SettingNameFromEnvironment(std::string_view variable) {
  if (variable == "WANDB_X_LABEL" || variable == "WANDB__LABEL") return "x_label";
  std::string_view rest;
  if (variable.starts_with("WANDB_X_STATS_")) {
    rest = variable.substr(std::string_view("WANDB_X_STATS_").size());
  } else if (variable.starts_with("WANDB__STATS_")) {
    rest = variable.substr(std::string_view("WANDB__STATS_").size());
  } else {
    return std::nullopt;
  }
  if (rest.empty()) return std::nullopt;
  std::string name = "x_stats_";
  for (char c : rest) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

Status ApplyEnvironment(Settings& settings, const std::vector<std::string>& environment) {
  for (const auto& entry : environment) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const auto name = SettingNameFromEnvironment(std::string_view(entry).substr(0, eq));
    if (!name) continue;
    auto status = ApplyWandbSetting(settings, *name, std::string_view(entry).substr(eq + 1));
    if (!status) {
      return Error{fmt::format("environment variable {}: {}", entry.substr(0, eq), status.error())};
    }
  }
  return OkStatus();
}

std::vector<std::string_view> KnownWandbSettingNames() {
  std::vector<std::string_view> names;
  for (const auto& known : kKnownSettings) names.push_back(known.name);
  return names;
}

}  // namespace runmon
