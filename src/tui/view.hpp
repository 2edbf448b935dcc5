// The TUI's screen, as pure code: LeetView keeps what the user chose (focus, pages, panes and their sizes,
// the three filters, grid sizes, chart modes and guides, zooms, the help overlay), reacts to input events
// (view_input.cpp, through the key table), and renders a ViewModel (what the app knows about the runs) into
// a CellGrid (view.cpp lays out; view_grid.cpp, view_sidebar.cpp and view_status.cpp draw). Nothing here
// reads files or the clock, so frames are golden-tested. Layout: a left sidebar (the run overview, or the
// runs list in a workspace), a centre column of the metrics grid (the run's logged metrics when it has any,
// else its system metrics; key 1) over the media pane (key 3) and the console-logs pane (key 4), a right
// sidebar of system charts (GPU, CPU, RAM, disk, network first; not shown when the centre already shows them)
// and a status bar. Sidebars give way, right first, when the centre would get too narrow; below the smallest
// usable size a message replaces the layout. Pane edges can be dragged; `0` puts the sizes back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runview/detail_reader.hpp"
#include "runview/metric_groups.hpp"
#include "runview/run_model.hpp"
#include "tui/cell_grid.hpp"
#include "tui/color_scheme.hpp"
#include "tui/console_pane.hpp"
#include "tui/input.hpp"
#include "tui/key_table.hpp"
#include "tui/leet_path.hpp"
#include "tui/line_chart.hpp"
#include "tui/media_pane.hpp"
#include "tui/process_table.hpp"

namespace runmon::runview {
class MediaLog;  // runview/media_log.hpp: the images a run logged
}  // namespace runmon::runview

namespace runmon::tui {

// What a LeetView starts with: grid sizes, which panes show, the chart guides, the panes' sizes and the
// colours (from `runmon leet config`; the defaults are LEET's). The view keeps it current as the user
// changes the layout (settings()), so the app can write it back to the config as W&B's LEET does.
struct LeetViewSettings {
  struct Grid {
    int rows = 4;
    int columns = 3;
    friend bool operator==(const Grid&, const Grid&) = default;
  };
  Grid metrics_grid{4, 3};
  Grid system_grid{6, 2};
  Grid media_grid{1, 2};
  Grid workspace_metrics_grid{3, 3};
  Grid symon_grid{3, 3};
  bool left_sidebar_visible = true;
  bool right_sidebar_visible = true;
  bool metrics_grid_visible = true;
  bool console_logs_visible = false;
  bool media_visible = false;
  int chart_guides = 0;  // 0 off, 1 dots, 2 horizontal lines
  // Shares of the terminal a mouse drag gave the panes; 0: the default size. Clamped to 0.05-0.9.
  double left_sidebar_fraction = 0;
  double right_sidebar_fraction = 0;
  double console_logs_fraction = 0;
  double media_fraction = 0;
  // Colour schemes (indices into ColorSchemeNames()) and modes; see color_scheme.hpp.
  int color_scheme = kDefaultColorScheme;  // logged metrics, runs
  int per_plot_color_scheme = kDefaultPerPlotColorScheme;
  int tag_color_scheme = kDefaultColorScheme;
  int system_color_scheme = kDefaultColorScheme;
  int french_fries_color_scheme = kDefaultFrenchFriesColorScheme;
  ColorMode single_run_color_mode = ColorMode::kPerSeries;
  ColorMode system_color_mode = ColorMode::kPerSeries;
  friend bool operator==(const LeetViewSettings&, const LeetViewSettings&) = default;
};

struct RunListEntry {
  std::string name;                                       // display name, else id, else directory name
  std::string started;                                    // "2026-11-29 19:45"
  runview::RunState state = runview::RunState::kCrashed;  // kNotARunLog: shown with a warning mark
  bool selected = false;
  bool summarised = true;  // false: not read yet (state unknown)
  bool damaged = false;    // damage was seen in the log (shown with a warning mark)
  std::string id = {};     // the run's id (its colour derives from it)
};

struct ViewModel {
  LeetMode mode = LeetMode::kSingleRun;
  std::string location;            // the wandb directory or the run log, for the status bar
  std::vector<RunListEntry> runs;  // workspace: newest first
  // The runs charted (one in single-run view; the selected runs in a workspace) and their labels.
  std::vector<const runview::RunModel*> chart_runs;
  std::vector<std::string> chart_run_labels;
  // The run the overview describes (single-run view), its state and its warnings.
  const runview::RunModel* overview_run = nullptr;
  runview::RunState overview_state = runview::RunState::kRunning;
  std::vector<std::string> warnings;
  bool loading = false;  // the log is still being read
  double loaded_fraction = 1;
  bool can_go_back = false;  // esc returns to the workspace
  double now_seconds = 0;    // for the runtime of a running run
  // The console output the console-logs pane shows (the open run's; in a workspace, the first charted
  // run's) and that run's label.
  const runview::ConsoleLog* console = nullptr;
  std::string console_label;
  // `leet symon`: this machine's system charts in the centre (3x3, LEET's symon grid), no right sidebar
  // repeating them.
  bool symon = false;
  // symon: the processes on the GPUs (null: none listed, or not symon).
  const GpuProcessSnapshot* gpu_processes = nullptr;
  // The images the charted run logged, for the media pane (key 3; null: none).
  const runview::MediaLog* media = nullptr;
};

enum class ViewAction {
  kNone,
  kRedraw,
  kQuit,
  kRestart,          // read the run (or start the monitor) again from the start
  kOpenRun,          // open the run at run_cursor()
  kBack,             // back to the workspace
  kToggleSelection,  // select or deselect the run at run_cursor()
};

enum class Pane { kLeft, kCentre, kRight, kConsole, kMedia, kProcesses };

// How a chart is drawn; `y` cycles them (the heatmap only for percentages).
enum class ChartMode : uint8_t { kLinear, kLog, kHeatmap };

// The filters: the centre's charts (`/`; when the centre shows system charts, the system filter), the
// system charts (`\`), the overview's lines (`o`).
enum class FilterTarget : uint8_t { kNone, kMetrics, kSystem, kOverview };

class LeetView {
 public:
  explicit LeetView(LeetViewSettings settings = {});

  ViewAction Handle(const InputEvent& event);
  // Renders a frame. The layout it computes (grids, pages, chart positions) is kept for the next events.
  CellGrid Render(const ViewModel& model, int width, int height);

  size_t run_cursor() const { return run_cursor_; }
  void set_run_cursor(size_t cursor) { run_cursor_ = cursor; }
  bool help_visible() const { return help_visible_; }
  bool filter_editing() const { return editing_ != FilterTarget::kNone; }
  FilterTarget filter_target() const { return editing_; }
  const runview::MetricFilter& filter() const { return metrics_filter_; }
  const runview::MetricFilter& system_filter() const { return system_filter_; }
  const runview::MetricFilter& overview_filter() const { return overview_filter_; }
  Pane focus() const { return focus_; }
  bool left_visible() const { return left_visible_; }
  bool right_visible() const { return right_visible_; }
  bool metrics_visible() const { return metrics_visible_; }
  ChartSpec::Guides guides() const { return guides_; }
  const ConsolePane& console_pane() const { return console_; }
  const MediaPane& media_pane() const { return media_; }
  const ProcessTablePane& process_table() const { return processes_; }
  // The settings as the user left them: grid sizes (r/c), guides (g), pane sizes (a drag; 0 the default,
  // after `0`) and, in a single run's view, which panes show (1-4, [, ]): what the config keeps.
  const LeetViewSettings& settings() const { return settings_; }
  // A pane edge is being dragged (the sizes are still changing).
  bool dragging() const { return dragging_ != Edge::kNone; }
  // The source of view models was replaced (alt+r): the runs charted may sit where the old ones were, so the
  // chart groups and the media shown are forgotten rather than matched by address.
  void SourceReplaced();
  // What the media pane decodes images with (the app loads the image module); see MediaPane::SetDecoder.
  void SetImageDecoder(media::ImageDecoder decoder, std::string missing) {
    media_.SetDecoder(decoder, std::move(missing));
  }
  // Large images decoded on a thread of their own (leet's screen; see MediaPane::SetBackgroundDecoding):
  // while images_decoding() the app polls for images_decoded(), which the next render draws.
  void SetBackgroundImageDecoding(bool on) { media_.SetBackgroundDecoding(on); }
  bool images_decoding() const { return media_.decoding(); }
  bool images_decoded() const { return media_.decoded_waiting(); }

 private:
  struct GridState {
    int rows = 4;
    int columns = 3;
    size_t page = 0;
    size_t focused = 0;  // index within the page
    // From the last render:
    int shown_rows = 1;
    int shown_columns = 1;
    size_t chart_count = 0;
    size_t page_size() const { return static_cast<size_t>(shown_rows * shown_columns); }
    size_t pages() const { return chart_count == 0 ? 1 : (chart_count + page_size() - 1) / page_size(); }
  };
  struct PlacedChart {
    Rect area;
    Pane pane = Pane::kCentre;
    size_t index_in_page = 0;
    std::string id;
    bool percent = false;   // the heatmap is offered
    double full_span = 0;   // the x range of the chart's data (0: no data)
    double shown_span = 0;  // the x range shown
  };
  // A pane edge the mouse can drag, from the last render.
  enum class Edge : uint8_t { kNone, kLeftSidebar, kRightSidebar, kConsole, kMedia };
  struct Layout {
    int width = 0;
    int body_height = 0;
    int left_edge_x = -1;   // the left sidebar's right border
    int right_edge_x = -1;  // the right sidebar's first column
    int console_edge_y = -1;
    int media_edge_y = -1;
    int left_width = 0;  // the panes' sizes, for the limits of a drag
    int right_width = 0;
    int media_height = 0;
    int console_height = 0;
  };

  ViewAction RunCommand(Command command);
  ViewAction HandleConsoleInput(const InputEvent& event);
  ViewAction HandleFilterInput(const InputEvent& event);
  ViewAction HandleMouse(const InputEvent& event);
  ViewAction StartFilter(FilterTarget target, std::string_view prompt);
  ViewAction ClearFilter(FilterTarget target);
  runview::MetricFilter& FilterFor(FilterTarget target);
  FilterTarget CentreFilterTarget() const;
  ViewAction Move(int dx, int dy);
  ViewAction Page(int delta);
  ViewAction FirstOrLast(bool last);
  ViewAction Zoom(const std::string& chart_id, bool in);
  ViewAction CycleChartMode();
  ChartMode ModeOf(const runview::ChartGroup& group) const;
  void AssignRunColors(const ViewModel& model);
  void ColorSeries(const runview::ChartGroup& group, ChartSpec& spec) const;
  GridState* FocusedGrid();
  const PlacedChart* FocusedChart() const;
  void CycleFocus(int direction);
  void KeepPanesShown();
  void RefreshGroups(const ViewModel& model);
  // Points a chart's series at full-resolution points over [x0, x1] where a run has them to read.
  void UseDetail(const runview::ChartGroup& group, double x0, double x1, ChartSpec& spec);
  Screen CurrentScreen() const;

  void RenderLeft(CellGrid& grid, Rect area, const ViewModel& model);
  void RenderOverview(CellGrid& grid, Rect area, const ViewModel& model);
  void RenderTags(CellGrid& grid, int x, int y, int end_x, const std::vector<std::string>& tags) const;
  void RenderRunsList(CellGrid& grid, Rect area, const ViewModel& model);
  void RenderGrid(CellGrid& grid, Rect area, Pane pane, const std::string& heading,
                  const std::vector<const runview::ChartGroup*>& charts, const runview::MetricFilter& filter,
                  GridState& state);
  void RenderCentre(CellGrid& grid, Rect area, const ViewModel& model,
                    const std::vector<const runview::ChartGroup*>& charts,
                    const runview::MetricFilter& filter);
  void RenderStatus(CellGrid& grid, Rect area, const ViewModel& model);
  void RenderHelp(CellGrid& grid);

  LeetViewSettings settings_;
  Pane focus_ = Pane::kCentre;
  bool left_visible_ = true;
  bool right_visible_ = true;
  bool metrics_visible_ = true;
  bool help_visible_ = false;
  size_t help_scroll_ = 0;  // the help's first row shown
  ChartSpec::Guides guides_ = ChartSpec::Guides::kOff;
  FilterTarget editing_ = FilterTarget::kNone;
  std::string filter_text_;    // while editing
  std::string filter_prompt_;  // what the prompt starts with: the key that opened it
  bool filter_glob_ = false;
  runview::MetricFilter metrics_filter_;
  runview::MetricFilter system_filter_;
  runview::MetricFilter overview_filter_;
  runview::MetricFilter filter_before_edit_;
  Command pending_grid_key_ = Command::kNone;  // rows or columns, waiting for a digit
  GridState centre_;
  GridState right_;
  ConsolePane console_;
  MediaPane media_;
  ProcessTablePane processes_;                      // symon
  const runview::MediaLog* shown_media_ = nullptr;  // the log the media pane showed last
  size_t run_cursor_ = 0;
  size_t run_count_ = 0;
  size_t runs_scroll_ = 0;
  size_t overview_scroll_ = 0;
  std::map<std::string, ChartMode> chart_modes_;  // chart id -> a mode `y` chose
  std::map<std::string, double> zoom_;            // chart id -> visible x span
  // A chart's full-resolution points for runs loaded from their summary index, when its window covers few
  // enough segments (zoomed, or a short run): chart id -> the window last read, kept while the window and
  // the runs' data stay the same.
  struct ChartDetail {
    double x0 = 0;
    double x1 = 0;
    uint64_t data_version = 0;
    std::vector<std::shared_ptr<const runview::DetailWindow>> windows;  // per charted run (null: none)
  };
  std::map<std::string, ChartDetail> detail_;
  std::vector<const runview::RunModel*> chart_runs_;  // this frame's
  std::vector<PlacedChart> placed_;                   // from the last render
  Layout layout_;                                     // from the last render
  Edge dragging_ = Edge::kNone;
  bool left_shown_ = false;  // from the last render (a sidebar may give way)
  bool right_shown_ = false;
  bool centre_shows_history_ = false;
  std::optional<LeetMode> shown_mode_;  // the mode of the last render
  bool symon_shown_ = false;            // the last render was symon's

  // Chart groups, rebuilt when the charted runs or their key sets change.
  std::vector<std::pair<const runview::RunModel*, uint64_t>> groups_signature_;
  std::vector<runview::ChartGroup> system_groups_;   // catalog order
  std::vector<runview::ChartGroup> sidebar_groups_;  // sidebar order
  std::vector<runview::ChartGroup> history_groups_;

  // Colours (color_scheme.hpp): the charted runs' own (this frame; their ids beside them for the runs
  // list), and each chart's per-plot colour, given in the order the charts first appear (W&B's).
  std::vector<int16_t> run_colors_;
  std::vector<std::string> run_color_ids_;
  std::map<std::string, size_t> plot_colors_;  // "m " or "s " (metrics, system) + chart id -> its index
  size_t next_history_plot_color_ = 0;
  size_t next_system_plot_color_ = 0;
};

}  // namespace runmon::tui
