// The `runmon leet` loop: a LeetSession (files), a LeetView (pure screen) and the Terminal. See
// leet_command.hpp.
#include "app/leet_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "app/cli_common.hpp"
#include "app/leet_config_command.hpp"
#include "app/symon_source.hpp"
#include "core/wall_clock.hpp"
#include "media/image.hpp"
#include "modules/module_loader.hpp"
#include "tui/key_table.hpp"
#include "tui/leet_path.hpp"
#include "tui/session.hpp"
#include "tui/terminal.hpp"
#include "tui/view.hpp"

namespace runmon {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kLoadSlice = std::chrono::milliseconds(40);  // loading: a frame at least this often
constexpr auto kIdleSlice = std::chrono::milliseconds(10);
constexpr int kPollMilliseconds = 250;       // how often a caught-up run is checked for new records
constexpr int kDecodePollMilliseconds = 20;  // while images decode: how soon one that is done is drawn
constexpr auto kClockRedraw = std::chrono::seconds(1);

bool ParseSize(const std::string& text, int& width, int& height) {
  int consumed = 0;
  return std::sscanf(text.c_str(), "%dx%d%n", &width, &height, &consumed) == 2 &&
         static_cast<size_t>(consumed) == text.size() && width > 0 && height > 0 && width <= 1000 &&
         height <= 1000;
}

// The media pane's decoder, from the image module (libpng and libjpeg are mapped only then); a module that
// cannot be loaded leaves the pane saying why in each tile.
void UseImageModule(tui::LeetView& view) {
  auto module = LoadModule<media::ImageModule>();
  if (module) {
    view.SetImageDecoder((*module)->decode, {});
  } else {
    view.SetImageDecoder(nullptr, module.error());
  }
}

int PrintFrame(tui::LeetSession& session, int width, int height, const tui::LeetViewSettings& settings) {
  tui::LeetView view(settings);
  UseImageModule(view);
  session.Work(Clock::now(), std::chrono::seconds(10));  // a workspace's summaries
  // Building a frame's model opens the runs it charts (a workspace's run under the cursor): then read them.
  (void)session.BuildViewModel(view, WallSeconds());
  while (session.loading()) session.Work(Clock::now(), std::chrono::seconds(1));
  const auto frame = view.Render(session.BuildViewModel(view, WallSeconds()), width, height);
  fmt::print("{}\n", frame.ToString());
  return 0;
}

// The interactive loop over a source of view models: a LeetSession (run logs) or a SymonSource. alt+r
// replaces the source with what `restart` makes (the run read afresh, the monitor started anew); the view
// keeps its layout. A restart that fails keeps the source it had and says why in the status bar. The
// layout the user changes is written back to the config (`keeper`); a failure to is said there too.
template <typename Source, typename Restart>
int RunLoop(std::unique_ptr<Source> source, Restart restart, const tui::LeetViewSettings& settings,
            LeetLayoutKeeper& keeper) {
  auto terminal_module = LoadModule<tui::TerminalModule>();
  if (!terminal_module) {
    Warn(terminal_module.error());
    return 1;
  }
  auto terminal = (*terminal_module)->start();
  if (!terminal) {
    Warn(terminal.error());
    return 1;
  }
  tui::Terminal& screen = **terminal;
  tui::LeetView view(settings);
  UseImageModule(view);
  view.SetBackgroundImageDecoding(true);
  bool dirty = true;
  bool clock_matters = true;
  std::string restart_failure;
  std::string layout_failure;
  auto last_draw = Clock::time_point{};
  for (;;) {
    const auto now = Clock::now();
    const bool loading = source->loading();
    if (source->Work(now, loading ? kLoadSlice : kIdleSlice)) dirty = true;
    if (view.images_decoded()) dirty = true;
    // The clock redraws only what can change with time alone: a running run's runtime and its state (a
    // writer that is gone, a W&B run that went quiet).
    if (dirty || (clock_matters && Clock::now() - last_draw >= kClockRedraw)) {
      auto model = source->BuildViewModel(view, WallSeconds());
      if (!restart_failure.empty()) model.warnings.insert(model.warnings.begin(), restart_failure);
      if (!layout_failure.empty()) model.warnings.insert(model.warnings.begin(), layout_failure);
      // symon's frames come with its samples, which carry the clock along.
      clock_matters = !model.symon &&
                      (model.loading || model.overview_state == runview::RunState::kRunning ||
                       std::any_of(model.runs.begin(), model.runs.end(), [](const tui::RunListEntry& run) {
                         return run.state == runview::RunState::kRunning;
                       }));
      screen.Draw(view.Render(model, screen.width(), screen.height()));
      last_draw = Clock::now();
      dirty = false;
    }
    // While loading, only take what input is already there; otherwise wait for input or the next poll.
    int timeout = source->loading()        ? 0
                  : view.images_decoding() ? kDecodePollMilliseconds
                                           : kPollMilliseconds;
    while (auto event = screen.Read(timeout)) {
      const auto action = view.Handle(*event);
      if (action == tui::ViewAction::kRestart) {
        auto fresh = restart();
        restart_failure = fresh ? std::string() : "restart failed: " + fresh.error();
        if (fresh) {
          source = std::move(*fresh);
          view.SourceReplaced();
        }
        dirty = true;
        break;
      }
      if (!source->Apply(action, view)) {
        keeper.Keep(view.settings());
        return 0;
      }
      if (action != tui::ViewAction::kNone) dirty = true;
      timeout = 0;
    }
    // The layout the user left, kept once a drag is over (not at each step of it).
    if (!view.dragging()) {
      if (auto kept = keeper.Keep(view.settings()); kept && *kept != layout_failure) {
        layout_failure = std::move(*kept);
        dirty = true;
      }
    }
  }
}

int RunSymon(const LeetOptions& options, int frame_width, int frame_height,
             const tui::LeetViewSettings& settings) {
  auto source = SymonSource::Start(options.symon_interval);
  if (!source) {
    Warn(fmt::format("symon: {}", source.error()));
    return 2;
  }
  if (frame_width > 0) {
    // Two samples: the first and one interval later, so rates have a value.
    (*source)->WaitForSamples(2, std::chrono::seconds(30));
    // The table's CPU % needs two listings; a hung driver holds the frame 3 s at most.
    (*source)->WaitForGpuProcesses(2, std::chrono::seconds(3));
    tui::LeetView view(settings);
    fmt::print(
        "{}\n",
        view.Render((*source)->BuildViewModel(view, WallSeconds()), frame_width, frame_height).ToString());
    // Out before the sampler's and the GPU watch's threads are stopped: a teardown that goes wrong
    // must not take the frame with it.
    std::fflush(stdout);
    return 0;
  }
  LeetLayoutKeeper keeper(options.config_path, settings);
  return RunLoop(
      std::move(*source), [&] { return SymonSource::Start(options.symon_interval); }, settings, keeper);
}

}  // namespace

int RunLeetCommand(const LeetOptions& options) {
  if (options.print_keys) {
    fmt::print("{}", tui::KeyTableMarkdown());
    return 0;
  }
  int frame_width = 0;
  int frame_height = 0;
  if (!options.print_frame.empty() && !ParseSize(options.print_frame, frame_width, frame_height)) {
    Warn(fmt::format("--print-frame: '{}' is not WIDTHxHEIGHT (1 to 1000 each)", options.print_frame));
    return 2;
  }
  const tui::LeetConfig config = LoadLeetConfigForView(options.config_path);
  const tui::LeetViewSettings settings = tui::ToViewSettings(config);
  if (options.symon) return RunSymon(options, frame_width, frame_height, settings);
  std::optional<std::filesystem::path> path;
  if (options.path) path = *options.path;
  auto target = tui::ResolveLeetPath(path);
  if (!target) {
    Warn(target.error());
    return 1;
  }
  // With no PATH, startup_mode workspace_latest opens the workspace (the latest run first in its list)
  // rather than the latest run itself.
  if (!path && config.startup_mode == tui::StartupMode::kWorkspaceLatest) {
    target->mode = tui::LeetMode::kWorkspace;
    target->run_log.clear();
  }
  auto session = tui::LeetSession::Open(*target);
  if (!session) {
    Warn(session.error());
    return 1;
  }
  if (frame_width > 0) return PrintFrame(**session, frame_width, frame_height, settings);
  LeetLayoutKeeper keeper(options.config_path, settings);
  return RunLoop(
      std::move(*session), [target = *target] { return tui::LeetSession::Open(target); }, settings, keeper);
}

}  // namespace runmon
