// Between leet's config and its view: the settings a view starts with, and what its user changed written
// back (grid sizes, panes shown, guides, pane sizes). The colours only go one way: leet has no key to change
// them, `runmon leet config` has.
#include <algorithm>

#include "tui/leet_config.hpp"

namespace runmon::tui {
namespace {

LeetViewSettings::Grid ToGrid(const GridSize& size) {
  return {size.rows, size.cols};
}

// A grid size the view kept, in the config's range (the view clamps what it shows the same way).
GridSize FromGrid(const LeetViewSettings::Grid& grid) {
  const auto clamp = [](int value) {
    return value < kMinGridSize ? kMinGridSize : std::min(value, kMaxGridSize);
  };
  return {clamp(grid.rows), clamp(grid.columns)};
}

double Fraction(double value) {
  return value == 0 ? 0 : std::clamp(value, kMinPaneFraction, kMaxPaneFraction);
}

}  // namespace

LeetViewSettings ToViewSettings(const LeetConfig& config) {
  LeetViewSettings settings;
  settings.metrics_grid = ToGrid(config.metrics_grid);
  settings.system_grid = ToGrid(config.system_grid);
  settings.media_grid = ToGrid(config.media_grid);
  settings.workspace_metrics_grid = ToGrid(config.workspace_metrics_grid);
  settings.symon_grid = ToGrid(config.symon_grid);
  settings.left_sidebar_visible = config.left_sidebar_visible;
  settings.right_sidebar_visible = config.right_sidebar_visible;
  settings.metrics_grid_visible = config.metrics_grid_visible;
  settings.console_logs_visible = config.console_logs_visible;
  settings.media_visible = config.media_visible;
  settings.chart_guides = static_cast<int>(config.chart_guides);
  settings.left_sidebar_fraction = config.run_layout.left_sidebar;
  settings.right_sidebar_fraction = config.run_layout.right_sidebar;
  settings.console_logs_fraction = config.run_layout.logs;
  settings.media_fraction = config.run_layout.media;
  settings.color_scheme = config.color_scheme;
  settings.per_plot_color_scheme = config.per_plot_color_scheme;
  settings.tag_color_scheme = config.tag_color_scheme;
  settings.system_color_scheme = config.system_color_scheme;
  settings.french_fries_color_scheme = config.french_fries_color_scheme;
  settings.single_run_color_mode = config.single_run_color_mode;
  settings.system_color_mode = config.system_color_mode;
  return settings;
}

void ApplyViewSettings(const LeetViewSettings& settings, LeetConfig& config) {
  config.metrics_grid = FromGrid(settings.metrics_grid);
  config.system_grid = FromGrid(settings.system_grid);
  config.media_grid = FromGrid(settings.media_grid);
  config.workspace_metrics_grid = FromGrid(settings.workspace_metrics_grid);
  config.symon_grid = FromGrid(settings.symon_grid);
  config.left_sidebar_visible = settings.left_sidebar_visible;
  config.right_sidebar_visible = settings.right_sidebar_visible;
  config.metrics_grid_visible = settings.metrics_grid_visible;
  config.console_logs_visible = settings.console_logs_visible;
  config.media_visible = settings.media_visible;
  config.chart_guides = static_cast<ChartGuides>(std::clamp(settings.chart_guides, 0, 2));
  config.run_layout.left_sidebar = Fraction(settings.left_sidebar_fraction);
  config.run_layout.right_sidebar = Fraction(settings.right_sidebar_fraction);
  config.run_layout.logs = Fraction(settings.console_logs_fraction);
  config.run_layout.media = Fraction(settings.media_fraction);
}

}  // namespace runmon::tui
