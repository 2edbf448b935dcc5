// leet's persisted settings (`runmon leet config`), in the JSON of W&B's LEET (wandb-leet.json): the same
// key names, so a W&B file reads. runmon models the keys it has a feature for (grid sizes, which panes
// show, chart guides, the panes' sizes, the colour schemes and modes, the startup view, two timings);
// every other key (W&B's workspace grids and panes) is kept as it was and written back on save, in W&B's
// key order. leet writes the layout the user leaves back into the file (ApplyViewSettings), as W&B does.
// Parsing is a pure function from text: a value of the wrong type or out of its range is replaced by the
// default with a warning naming the key, invalid JSON, a document that is not an object, one nested
// deeper than 64 levels or larger than 1 MiB is an error. The startup mode's default is runmon's
// (single_run_latest: `runmon leet` has always opened the latest run); W&B's is workspace_latest.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "tui/color_scheme.hpp"
#include "tui/view.hpp"

namespace runmon::tui {

inline constexpr size_t kMaxLeetConfigBytes = 1 << 20;
inline constexpr int kMinGridSize = 1;
inline constexpr int kMaxGridSize = 9;
inline constexpr double kMinPaneFraction = 0.05;  // a pane fraction is 0 (the default size) or in here
inline constexpr double kMaxPaneFraction = 0.9;

enum class StartupMode { kWorkspaceLatest, kSingleRunLatest };
enum class ChartGuides { kOff, kDots, kHorizontal };

struct GridSize {
  int rows = 1;
  int cols = 1;
  friend bool operator==(const GridSize&, const GridSize&) = default;
};

// Shares of the terminal for the panes (W&B's run_layout); 0: the default size.
struct PaneFractions {
  double left_sidebar = 0;
  double right_sidebar = 0;
  double logs = 0;
  double media = 0;
  friend bool operator==(const PaneFractions&, const PaneFractions&) = default;
};

struct LeetConfig {
  StartupMode startup_mode = StartupMode::kSingleRunLatest;
  ChartGuides chart_guides = ChartGuides::kOff;
  GridSize metrics_grid{4, 3};
  GridSize system_grid{6, 2};
  GridSize media_grid{1, 2};
  GridSize workspace_metrics_grid{3, 3};
  GridSize symon_grid{3, 3};
  PaneFractions run_layout;
  int color_scheme = kDefaultColorScheme;  // colour schemes: indices into kColorSchemeNames
  int tag_color_scheme = kDefaultColorScheme;
  int per_plot_color_scheme = kDefaultPerPlotColorScheme;
  int system_color_scheme = kDefaultColorScheme;
  int french_fries_color_scheme = kDefaultFrenchFriesColorScheme;
  ColorMode system_color_mode = ColorMode::kPerSeries;
  int system_tail_window_minutes = 10;
  ColorMode single_run_color_mode = ColorMode::kPerSeries;
  int heartbeat_interval_seconds = 15;
  bool left_sidebar_visible = true;
  bool right_sidebar_visible = true;
  bool metrics_grid_visible = true;
  bool console_logs_visible = false;
  bool media_visible = false;
  // The keys runmon does not model, as compact JSON of an object in W&B's key order ("" when none).
  std::string other_keys_json;
  friend bool operator==(const LeetConfig&, const LeetConfig&) = default;
};

struct ParsedLeetConfig {
  LeetConfig config;
  std::vector<std::string> warnings;  // "metrics_grid.rows: 12 is out of range (1-9); the default 4 is used"
};

Result<ParsedLeetConfig> ParseLeetConfig(std::string_view text);
// Pretty-printed (two-space indent), W&B's key order, the keys runmon does not model in their places,
// ending in a newline. Parsing it gives the same config back, without warnings.
std::string SerializeLeetConfig(const LeetConfig& config);

// What the view starts with.
LeetViewSettings ToViewSettings(const LeetConfig& config);
// What a view's user changed (grid sizes, panes shown, guides, pane sizes) written into `config`; the
// colours and the rest of `config` stay.
void ApplyViewSettings(const LeetViewSettings& settings, LeetConfig& config);

// One setting, as `--set` and the editor name it: "metrics_grid.rows", "chart_guides".
enum class LeetFieldKind { kBool, kInt, kEnum, kFraction };
struct LeetConfigField {
  std::string_view key;
  std::string_view label;
  std::string_view description;
  LeetFieldKind kind = LeetFieldKind::kBool;
  int min = 0;  // kInt
  int max = 0;
  std::span<const std::string_view> options;  // kEnum, in their cycling order
  // The value as a number: a bool 0 or 1, an enum its option's index, an int or a fraction itself.
  double (*get)(const LeetConfig&) = nullptr;
  void (*set)(LeetConfig&, double) = nullptr;
};

// Every setting, in W&B's key order.
std::span<const LeetConfigField> LeetConfigFields();
const LeetConfigField* FindLeetConfigField(std::string_view key);
// The value as shown: true/false, a number, an option, a fraction or "default" for a fraction of 0.
std::string FormatLeetConfigValue(const LeetConfigField& field, const LeetConfig& config);
// Sets the field from text (true/false/yes/no/on/off/1/0, a whole number, an option, a fraction);
// an error says what the field takes.
Status SetLeetConfigValue(const LeetConfigField& field, std::string_view text, LeetConfig& config);
// `KEY=VALUE`, as --set takes it.
Status ApplyLeetConfigAssignment(std::string_view assignment, LeetConfig& config);
// One step: a bool toggles, an int moves by `delta` within its range, an enum cycles, a fraction moves by
// 0.05 within its range (down from the smallest is 0, the default size).
void AdjustLeetConfigValue(const LeetConfigField& field, int delta, LeetConfig& config);
void ResetLeetConfigValue(const LeetConfigField& field, LeetConfig& config);

// Where the file is: `flag` (--config), else RUNMON_CONFIG_DIR/leet.json, else
// XDG_CONFIG_HOME/runmon/leet.json (an absolute XDG_CONFIG_HOME only, as the XDG spec says), else
// HOME/.config/runmon/leet.json. Empty values count as unset. Fails when none is given.
struct LeetConfigLocation {
  std::optional<std::string> flag;
  std::optional<std::string> runmon_config_dir;
  std::optional<std::string> xdg_config_home;
  std::optional<std::string> home;
};
Result<std::filesystem::path> LeetConfigPath(const LeetConfigLocation& location);

// The file read and parsed; a missing file is the defaults (exists false). Refuses what is not a regular
// file and a file larger than 1 MiB, without reading it.
struct LoadedLeetConfig {
  ParsedLeetConfig parsed;
  bool exists = false;
};
Result<LoadedLeetConfig> LoadLeetConfigFile(const std::filesystem::path& path);
// Writes atomically: a temporary file in the same directory (mode 0600), fsync, rename over the file,
// fsync of the directory. Missing directories are made with mode 0700. A symbolic link at `path` is
// followed, so the file it names is replaced and the link kept.
Status SaveLeetConfigFile(const std::filesystem::path& path, const LeetConfig& config);

}  // namespace runmon::tui
