// leet's settings: the table of the keys runmon models, parsing a JSON document into them (the keys it
// does not model kept aside), serialising them back in W&B's order, and the per-field operations that
// --set and the editor share. See leet_config.hpp. The nesting check runs on the text before the JSON
// parser: the parser itself is iterative, but copying and printing a kept value recurse, so a document of
// a million '[' must never become a value.
#include "tui/leet_config.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/utf8.hpp"

namespace runmon::tui {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDepth = 64;
constexpr size_t kExcerptColumns = 40;
constexpr double kPaneStep = 0.05;

// W&B's keys in the order its Config struct declares them (how wandb-leet.json is written).
constexpr std::array<std::string_view, 30> kTopLevelOrder = {
    "startup_mode",
    "chart_guides",
    "metrics_grid",
    "system_grid",
    "media_grid",
    "workspace_metrics_grid",
    "workspace_system_grid",
    "workspace_media_grid",
    "symon_grid",
    "run_layout",
    "workspace_layout",
    "color_scheme",
    "tag_color_scheme",
    "per_plot_color_scheme",
    "system_color_scheme",
    "french_fries_color_scheme",
    "system_color_mode",
    "system_tail_window_minutes",
    "single_run_color_mode",
    "heartbeat_interval_seconds",
    "left_sidebar_visible",
    "right_sidebar_visible",
    "metrics_grid_visible",
    "console_logs_visible",
    "media_visible",
    "workspace_overview_visible",
    "workspace_metrics_grid_visible",
    "workspace_system_metrics_visible",
    "workspace_console_logs_visible",
    "workspace_media_visible",
};
constexpr std::array<std::string_view, 2> kGridOrder = {"rows", "cols"};
constexpr std::array<std::string_view, 5> kLayoutOrder = {"left_sidebar", "right_sidebar", "system", "media",
                                                          "logs"};

constexpr std::array<std::string_view, 2> kStartupModes = {"workspace_latest", "single_run_latest"};
constexpr std::array<std::string_view, 3> kChartGuides = {"off", "dots", "horizontal"};

// Accessors of one member each, for the table's function pointers.
template <GridSize LeetConfig::*Grid, int GridSize::*Side>
double GetGrid(const LeetConfig& c) {
  return (c.*Grid).*Side;
}
template <GridSize LeetConfig::*Grid, int GridSize::*Side>
void SetGrid(LeetConfig& c, double v) {
  (c.*Grid).*Side = static_cast<int>(v);
}
template <double PaneFractions::*Pane>
double GetPane(const LeetConfig& c) {
  return c.run_layout.*Pane;
}
template <double PaneFractions::*Pane>
void SetPane(LeetConfig& c, double v) {
  c.run_layout.*Pane = v;
}
template <int LeetConfig::*Value>
double GetInt(const LeetConfig& c) {
  return c.*Value;
}
template <int LeetConfig::*Value>
void SetInt(LeetConfig& c, double v) {
  c.*Value = static_cast<int>(v);
}
template <bool LeetConfig::*Flag>
double GetBool(const LeetConfig& c) {
  return c.*Flag ? 1 : 0;
}
template <bool LeetConfig::*Flag>
void SetBool(LeetConfig& c, double v) {
  c.*Flag = v != 0;
}

template <GridSize LeetConfig::*Grid, int GridSize::*Side>
constexpr LeetConfigField GridField(std::string_view key, std::string_view label,
                                    std::string_view description) {
  return {key,          label, description,         LeetFieldKind::kInt, kMinGridSize,
          kMaxGridSize, {},    GetGrid<Grid, Side>, SetGrid<Grid, Side>};
}
template <double PaneFractions::*Pane>
constexpr LeetConfigField PaneField(std::string_view key, std::string_view label,
                                    std::string_view description) {
  return {key, label, description, LeetFieldKind::kFraction, 0, 0, {}, GetPane<Pane>, SetPane<Pane>};
}
template <int LeetConfig::*Value>
constexpr LeetConfigField IntField(std::string_view key, std::string_view label, std::string_view description,
                                   int min, int max) {
  return {key, label, description, LeetFieldKind::kInt, min, max, {}, GetInt<Value>, SetInt<Value>};
}
template <bool LeetConfig::*Flag>
constexpr LeetConfigField BoolField(std::string_view key, std::string_view label,
                                    std::string_view description) {
  return {key, label, description, LeetFieldKind::kBool, 0, 1, {}, GetBool<Flag>, SetBool<Flag>};
}

// An option of `options` (an enum, or an index into a list of names), kept as its index.
template <typename T, T LeetConfig::*Member>
constexpr LeetConfigField EnumField(std::string_view key, std::string_view label,
                                    std::string_view description, std::span<const std::string_view> options) {
  return {key,
          label,
          description,
          LeetFieldKind::kEnum,
          0,
          0,
          options,
          [](const LeetConfig& c) { return static_cast<double>(c.*Member); },
          [](LeetConfig& c, double v) { c.*Member = static_cast<T>(static_cast<int>(v)); }};
}
template <int LeetConfig::*Scheme>
constexpr LeetConfigField SchemeField(std::string_view key, std::string_view label,
                                      std::string_view description) {
  return EnumField<int, Scheme>(key, label, description, kColorSchemeNames);
}
template <ColorMode LeetConfig::*Mode>
constexpr LeetConfigField ModeField(std::string_view key, std::string_view label,
                                    std::string_view description) {
  return EnumField<ColorMode, Mode>(key, label, description, kColorModeNames);
}

using C = LeetConfig;
using P = PaneFractions;
constexpr auto kRows = &GridSize::rows;
constexpr auto kCols = &GridSize::cols;

const std::array<LeetConfigField, 30> kFields = {
    EnumField<StartupMode, &C::startup_mode>(
        "startup_mode", "Startup mode", "With no PATH: open the workspace or the latest run.", kStartupModes),
    EnumField<ChartGuides, &C::chart_guides>(
        "chart_guides", "Chart guides", "Guides behind the line charts: none, dots or lines.", kChartGuides),
    GridField<&C::metrics_grid, kRows>("metrics_grid.rows", "Metrics grid rows",
                                       "Rows of charts in the centre grid of a run's metrics."),
    GridField<&C::metrics_grid, kCols>("metrics_grid.cols", "Metrics grid cols",
                                       "Columns of charts in the centre grid of a run's metrics."),
    GridField<&C::system_grid, kRows>("system_grid.rows", "System grid rows",
                                      "Rows of charts in the right sidebar (system metrics)."),
    GridField<&C::system_grid, kCols>("system_grid.cols", "System grid cols",
                                      "Columns of charts in the right sidebar (system metrics)."),
    GridField<&C::media_grid, kRows>("media_grid.rows", "Media grid rows",
                                     "Rows of images in the media pane."),
    GridField<&C::media_grid, kCols>("media_grid.cols", "Media grid cols",
                                     "Columns of images in the media pane."),
    GridField<&C::workspace_metrics_grid, kRows>("workspace_metrics_grid.rows", "Workspace metrics grid rows",
                                                 "Rows of charts in a workspace's centre grid."),
    GridField<&C::workspace_metrics_grid, kCols>("workspace_metrics_grid.cols", "Workspace metrics grid cols",
                                                 "Columns of charts in a workspace's centre grid."),
    GridField<&C::symon_grid, kRows>("symon_grid.rows", "Symon grid rows",
                                     "Rows of charts in `runmon leet symon`."),
    GridField<&C::symon_grid, kCols>("symon_grid.cols", "Symon grid cols",
                                     "Columns of charts in `runmon leet symon`."),
    PaneField<&P::left_sidebar>("run_layout.left_sidebar", "Left sidebar width",
                                "Share of the width for the left sidebar (default: leet's own)."),
    PaneField<&P::right_sidebar>("run_layout.right_sidebar", "Right sidebar width",
                                 "Share of the width for the right sidebar (default: leet's own)."),
    PaneField<&P::media>("run_layout.media", "Media pane height",
                         "Share of the height for the media pane (default: leet's own)."),
    PaneField<&P::logs>("run_layout.logs", "Console logs height",
                        "Share of the height for the console logs pane (default: leet's own)."),
    SchemeField<&C::color_scheme>("color_scheme", "Color scheme",
                                  "Palette of the logged metrics' charts and of the runs."),
    SchemeField<&C::tag_color_scheme>("tag_color_scheme", "Tag color scheme",
                                      "Palette of the run's tags in the overview."),
    SchemeField<&C::per_plot_color_scheme>(
        "per_plot_color_scheme", "Per-plot color scheme",
        "Palette of a single run's charts in per_plot mode (gradients look well here)."),
    SchemeField<&C::system_color_scheme>("system_color_scheme", "System color scheme",
                                         "Palette of the system charts."),
    SchemeField<&C::french_fries_color_scheme>(
        "french_fries_color_scheme", "Heatmap color scheme",
        "Ramp of the percentage heatmaps, 0 % to 100 % (sequential palettes work best)."),
    ModeField<&C::system_color_mode>(
        "system_color_mode", "System color mode",
        "per_series: charts in the palette's first colour; per_plot: each chart its own colour."),
    IntField<&C::system_tail_window_minutes>(
        "system_tail_window_minutes", "System tail window (min)",
        "Minutes of history W&B's LEET shows in a live system chart at first; runmon's charts show the whole "
        "run (kept for W&B).",
        1, 10080),
    ModeField<&C::single_run_color_mode>(
        "single_run_color_mode", "Single-run color mode",
        "per_series: a run's charts in the run's colour; per_plot: each chart its own colour."),
    IntField<&C::heartbeat_interval_seconds>(
        "heartbeat_interval_seconds", "Heartbeat interval (sec)",
        "How often W&B's LEET rereads a quiet live run; runmon's leet checks every 250 ms (kept for W&B).", 1,
        3600),
    BoolField<&C::left_sidebar_visible>("left_sidebar_visible", "Left sidebar visible",
                                        "Show the left sidebar (the run overview) at start."),
    BoolField<&C::right_sidebar_visible>("right_sidebar_visible", "Right sidebar visible",
                                         "Show the right sidebar (system charts) at start."),
    BoolField<&C::metrics_grid_visible>("metrics_grid_visible", "Metrics grid visible",
                                        "Show the centre grid of charts at start."),
    BoolField<&C::console_logs_visible>("console_logs_visible", "Console logs visible",
                                        "Show the console logs pane at start."),
    BoolField<&C::media_visible>("media_visible", "Media visible", "Show the media pane at start."),
};

std::string_view GroupOf(std::string_view key) {
  const size_t dot = key.find('.');
  return dot == std::string_view::npos ? std::string_view{} : key.substr(0, dot);
}
std::string_view LeafOf(std::string_view key) {
  const size_t dot = key.find('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}
bool IsModeledGroup(std::string_view key) {
  return std::any_of(kFields.begin(), kFields.end(),
                     [key](const LeetConfigField& f) { return GroupOf(f.key) == key; });
}
bool IsModeledLeaf(std::string_view group, std::string_view leaf) {
  return std::any_of(kFields.begin(), kFields.end(), [&](const LeetConfigField& f) {
    return GroupOf(f.key) == group && LeafOf(f.key) == leaf;
  });
}

// `object`'s members with the names in `order` first, in that order, then the rest as they were.
Json Ordered(const Json& object, std::span<const std::string_view> order) {
  Json out = Json::object();
  for (const std::string_view name : order) {
    const auto it = object.find(name);
    if (it != object.end()) out[std::string(name)] = *it;
  }
  for (const auto& [name, value] : object.items()) {
    if (!out.contains(name)) out[name] = value;
  }
  return out;
}

// A value for a warning: JSON, non-ASCII escaped (nothing hostile reaches a terminal), cut short.
std::string Excerpt(const Json& value) {
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true);
  if (text.size() > kExcerptColumns) text = text.substr(0, kExcerptColumns - 3) + "...";
  return text;
}

Status CheckNesting(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return Error{fmt::format("nested deeper than {} levels", kMaxDepth)};
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return OkStatus();
}

std::string RangeText(const LeetConfigField& field) {
  if (field.kind == LeetFieldKind::kFraction)
    return fmt::format("0 or {}-{}", kMinPaneFraction, kMaxPaneFraction);
  return fmt::format("{}-{}", field.min, field.max);
}

std::string OptionsText(const LeetConfigField& field) {
  std::string text;
  for (const std::string_view option : field.options)
    text += (text.empty() ? "" : ", ") + std::string(option);
  return text;
}

bool FractionInRange(double value) {
  return value == 0 || (value >= kMinPaneFraction && value <= kMaxPaneFraction);
}

// The JSON value for `key` read into `config`; what is wrong with it otherwise.
std::optional<std::string> ReadValue(const LeetConfigField& field, const Json& value, LeetConfig& config) {
  switch (field.kind) {
    case LeetFieldKind::kBool:
      if (!value.is_boolean()) return fmt::format("{} is not true or false", Excerpt(value));
      field.set(config, value.get<bool>() ? 1 : 0);
      return std::nullopt;
    case LeetFieldKind::kInt: {
      if (!value.is_number_integer()) return fmt::format("{} is not a whole number", Excerpt(value));
      // A number past int64_t's range is held unsigned.
      const bool huge = value.is_number_unsigned() &&
                        value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      const int64_t number = huge ? 0 : value.get<int64_t>();
      if (huge || number < field.min || number > field.max)
        return fmt::format("{} is out of range ({})", Excerpt(value), RangeText(field));
      field.set(config, static_cast<double>(number));
      return std::nullopt;
    }
    case LeetFieldKind::kEnum: {
      if (value.is_string()) {
        const auto& text = value.get_ref<const std::string&>();
        for (size_t i = 0; i < field.options.size(); ++i) {
          if (field.options[i] == text) {
            field.set(config, static_cast<double>(i));
            return std::nullopt;
          }
        }
      }
      return fmt::format("{} is not one of {}", Excerpt(value), OptionsText(field));
    }
    case LeetFieldKind::kFraction: {
      if (!value.is_number()) return fmt::format("{} is not a number", Excerpt(value));
      const double number = value.get<double>();
      if (!std::isfinite(number) || !FractionInRange(number))
        return fmt::format("{} is out of range ({})", Excerpt(value), RangeText(field));
      field.set(config, number);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

Json ValueJson(const LeetConfigField& field, const LeetConfig& config) {
  const double value = field.get(config);
  switch (field.kind) {
    case LeetFieldKind::kBool:
      return value != 0;
    case LeetFieldKind::kInt:
      return static_cast<int64_t>(value);
    case LeetFieldKind::kEnum:
      return std::string(field.options[static_cast<size_t>(value)]);
    case LeetFieldKind::kFraction:
      if (value == 0) return 0;
      return value;
  }
  return nullptr;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::span<const LeetConfigField> LeetConfigFields() {
  return kFields;
}

const LeetConfigField* FindLeetConfigField(std::string_view key) {
  for (const LeetConfigField& field : LeetConfigFields()) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

Result<ParsedLeetConfig> ParseLeetConfig(std::string_view text) {
  if (text.size() > kMaxLeetConfigBytes) {
    return Error{fmt::format("larger than 1 MiB ({} bytes)", text.size())};
  }
  ParsedLeetConfig parsed;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return parsed;  // empty: the defaults
  if (auto nesting = CheckNesting(text); !nesting) return Error{nesting.error()};
  Json document;
  try {
    document = Json::parse(text);
  } catch (const Json::parse_error& error) {
    // The byte the parser stopped at, counted from 1 (the end of the text for a truncated document).
    return Error{fmt::format("not valid JSON (at byte {})", std::min(error.byte, text.size()))};
  } catch (const Json::out_of_range&) {
    return Error{"not valid JSON (a number too large for a double)"};
  }
  if (!document.is_object()) return Error{"not a JSON object"};

  for (const LeetConfigField& field : LeetConfigFields()) {
    const std::string_view group = GroupOf(field.key);
    const Json* holder = &document;
    if (!group.empty()) {
      const auto it = document.find(group);
      if (it == document.end() || !it->is_object()) continue;  // warned below, once per group
      holder = &*it;
    }
    const auto it = holder->find(LeafOf(field.key));
    if (it == holder->end()) continue;
    if (auto problem = ReadValue(field, *it, parsed.config)) {
      parsed.warnings.push_back(fmt::format("{}: {}; the default {} is used", field.key, *problem,
                                            FormatLeetConfigValue(field, LeetConfig{})));
    }
  }

  Json others = Json::object();
  const Json ordered = Ordered(document, kTopLevelOrder);
  for (const auto& [name, value] : ordered.items()) {
    if (IsModeledGroup(name)) {
      if (!value.is_object()) {
        parsed.warnings.push_back(
            fmt::format("{}: {} is not an object; the defaults are used", name, Excerpt(value)));
        continue;
      }
      Json rest = Json::object();
      for (const auto& [leaf, leaf_value] : value.items()) {
        if (!IsModeledLeaf(name, leaf)) rest[leaf] = leaf_value;
      }
      if (!rest.empty()) {
        others[name] = Ordered(rest, name == "run_layout" ? std::span<const std::string_view>(kLayoutOrder)
                                                          : std::span<const std::string_view>(kGridOrder));
      }
    } else if (!IsModeledLeaf({}, name)) {
      others[name] = value;
    }
  }
  if (!others.empty()) parsed.config.other_keys_json = others.dump();
  return parsed;
}

std::string SerializeLeetConfig(const LeetConfig& config) {
  Json others = Json::object();
  if (!config.other_keys_json.empty()) {
    others = Json::parse(config.other_keys_json, nullptr, /*allow_exceptions=*/false);
    if (!others.is_object()) others = Json::object();
  }
  Json out = Json::object();
  for (const std::string_view name : kTopLevelOrder) {
    const std::string key(name);
    if (IsModeledGroup(name)) {
      const std::span<const std::string_view> order = name == "run_layout"
                                                          ? std::span<const std::string_view>(kLayoutOrder)
                                                          : std::span<const std::string_view>(kGridOrder);
      Json kept = others.contains(key) && others[key].is_object() ? others[key] : Json::object();
      for (const LeetConfigField& field : LeetConfigFields()) {
        if (GroupOf(field.key) == name) kept[std::string(LeafOf(field.key))] = ValueJson(field, config);
      }
      out[key] = Ordered(kept, order);
    } else if (const LeetConfigField* field = FindLeetConfigField(name)) {
      out[key] = ValueJson(*field, config);
    } else if (others.contains(key)) {
      out[key] = others[key];
    }
  }
  for (const auto& [name, value] : others.items()) {
    if (!out.contains(name)) out[name] = value;
  }
  return out.dump(2) + "\n";
}

std::string FormatLeetConfigValue(const LeetConfigField& field, const LeetConfig& config) {
  const double value = field.get(config);
  switch (field.kind) {
    case LeetFieldKind::kBool:
      return value != 0 ? "true" : "false";
    case LeetFieldKind::kInt:
      return fmt::format("{}", static_cast<int64_t>(value));
    case LeetFieldKind::kEnum:
      return std::string(field.options[static_cast<size_t>(value)]);
    case LeetFieldKind::kFraction:
      return value == 0 ? "default" : fmt::format("{}", value);
  }
  return {};
}

Status SetLeetConfigValue(const LeetConfigField& field, std::string_view text, LeetConfig& config) {
  text = Trim(text);
  const std::string shown = fmt::format("'{}'", ToValidUtf8(text.substr(0, 40)));
  switch (field.kind) {
    case LeetFieldKind::kBool: {
      const std::string lower = AsciiLowercase(text);
      if (lower == "true" || lower == "yes" || lower == "on" || lower == "1") {
        field.set(config, 1);
      } else if (lower == "false" || lower == "no" || lower == "off" || lower == "0") {
        field.set(config, 0);
      } else {
        return Error{fmt::format("{}: {} is not true or false", field.key, shown)};
      }
      return OkStatus();
    }
    case LeetFieldKind::kInt: {
      long long value = 0;
      const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || status == std::errc::invalid_argument || end != text.data() + text.size())
        return Error{fmt::format("{}: {} is not a whole number", field.key, shown)};
      if (status == std::errc::result_out_of_range || value < field.min || value > field.max)
        return Error{fmt::format("{}: {} is out of range ({})", field.key, shown, RangeText(field))};
      field.set(config, static_cast<double>(value));
      return OkStatus();
    }
    case LeetFieldKind::kEnum:
      for (size_t i = 0; i < field.options.size(); ++i) {
        if (field.options[i] == text) {
          field.set(config, static_cast<double>(i));
          return OkStatus();
        }
      }
      return Error{fmt::format("{}: {} is not one of {}", field.key, shown, OptionsText(field))};
    case LeetFieldKind::kFraction: {
      if (text == "default") {
        field.set(config, 0);
        return OkStatus();
      }
      double value = 0;
      const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || status != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
        return Error{fmt::format("{}: {} is not a number", field.key, shown)};
      if (!FractionInRange(value))
        return Error{fmt::format("{}: {} is out of range ({})", field.key, shown, RangeText(field))};
      field.set(config, value);
      return OkStatus();
    }
  }
  return OkStatus();
}

Status ApplyLeetConfigAssignment(std::string_view assignment, LeetConfig& config) {
  const size_t equals = assignment.find('=');
  const std::string shown = ToValidUtf8(assignment.substr(0, 60));
  if (equals == std::string_view::npos) return Error{fmt::format("'{}' is not KEY=VALUE", shown)};
  const std::string_view key = Trim(assignment.substr(0, equals));
  const LeetConfigField* field = FindLeetConfigField(key);
  if (field == nullptr) {
    if (IsModeledGroup(key)) {
      return Error{fmt::format("{} is a group: set {}.{} or {}.{}", key, key,
                               key == "run_layout" ? "left_sidebar" : "rows", key,
                               key == "run_layout" ? "logs" : "cols")};
    }
    return Error{fmt::format("'{}' is not a setting (runmon leet config --print shows them)",
                             ToValidUtf8(key.substr(0, 60)))};
  }
  return SetLeetConfigValue(*field, assignment.substr(equals + 1), config);
}

void AdjustLeetConfigValue(const LeetConfigField& field, int delta, LeetConfig& config) {
  const double value = field.get(config);
  switch (field.kind) {
    case LeetFieldKind::kBool:
      field.set(config, value != 0 ? 0 : 1);
      return;
    case LeetFieldKind::kInt:
      field.set(config, std::clamp(value + delta, double(field.min), double(field.max)));
      return;
    case LeetFieldKind::kEnum: {
      const auto count = static_cast<long>(field.options.size());
      const long next = ((static_cast<long>(value) + delta) % count + count) % count;
      field.set(config, static_cast<double>(next));
      return;
    }
    case LeetFieldKind::kFraction: {
      // Up from the default size is the smallest share; down past the smallest is the default size again.
      double next = value == 0 && delta > 0 ? kMinPaneFraction : value + kPaneStep * delta;
      next = std::round(next * 100) / 100;
      field.set(config, next < kMinPaneFraction ? 0 : std::min(next, kMaxPaneFraction));
      return;
    }
  }
}

void ResetLeetConfigValue(const LeetConfigField& field, LeetConfig& config) {
  field.set(config, field.get(LeetConfig{}));
}

}  // namespace runmon::tui
