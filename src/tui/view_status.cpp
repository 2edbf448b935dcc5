// The view's status bar (the run, loading, the first warning; the filter prompt while one is edited) and
// the help overlay, which lists the key table (key_table.hpp) for the screen shown.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tui/view.hpp"
#include "tui/view_style.hpp"

namespace runmon::tui {

using namespace view_style;

void LeetView::RenderStatus(CellGrid& grid, Rect area, const ViewModel& model) {
  grid.Fill(area, U' ', kStatusStyle);
  if (editing_ != FilterTarget::kNone) {
    const std::string prompt = filter_prompt_ + filter_text_;
    int x = area.x;
    x += grid.PutText(x, area.y, prompt, Style{255, 236, kBold}, area.width - 1);
    grid.Set(x, area.y, U'▏', Style{255, 236, kBold});
    grid.PutText(x + 2, area.y,
                 fmt::format("{} · tab: {} · enter applies · esc cancels", filter_glob_ ? "glob" : "regex",
                             filter_glob_ ? "regex" : "glob"),
                 kStatusStyle, area.x + area.width - x - 2);
    return;
  }
  std::string left;
  Style left_style = kStatusStyle;
  if (model.mode == LeetMode::kWorkspace) {
    left =
        fmt::format(" {} · {} run{}", model.location, model.runs.size(), model.runs.size() == 1 ? "" : "s");
  } else if (model.overview_run != nullptr) {
    const runview::RunOverview& overview = model.overview_run->overview();
    left = fmt::format(" {} · {}", runview::ShortName(overview.name.empty() ? overview.id : overview.name),
                       runview::RunStateName(model.overview_state));
  }
  if (focus_ == Pane::kMedia && !media_.status_label().empty()) left += " · " + media_.status_label();
  if (model.loading) left += fmt::format(" · loading {:.0f}%", model.loaded_fraction * 100);
  const std::string right = "h help · q quit ";
  const int right_width = DisplayWidth(right);
  int x = area.x + grid.PutText(area.x, area.y, left, left_style, area.width - right_width - 1);
  if (!model.warnings.empty()) {
    const int room = area.x + area.width - right_width - x - 3;
    if (room > 4)
      x += grid.PutText(x + 2, area.y, "⚠ " + model.warnings.front(), Style{214, 236, kBold}, room) + 2;
  }
  grid.PutText(area.x + area.width - right_width, area.y, right, kStatusStyle, right_width);
}

void LeetView::RenderHelp(CellGrid& grid) {
  // The key table's rows for this screen; a row without keys is the second half of the one above it.
  const Screen screen = CurrentScreen();
  std::vector<const KeyBinding*> rows;
  for (const KeyBinding& binding : KeyBindings()) {
    if ((binding.screens & screen) != 0 && !binding.keys.empty()) rows.push_back(&binding);
  }
  const int width = std::min(grid.width() - 2, 66);
  const int height = std::min(grid.height() - 2, static_cast<int>(rows.size()) + 4);
  const Rect box{(grid.width() - width) / 2, (grid.height() - height) / 2, width, height};
  grid.Fill(box, U' ', {});
  grid.DrawBox(box, kFocusStyle, "Keys");
  // Rows that do not fit scroll (arrows, pages, wheel); marks say there is more above or below.
  const size_t room = static_cast<size_t>(std::max(height - 3, 1));
  help_scroll_ = std::min(help_scroll_, rows.size() > room ? rows.size() - room : 0);
  for (size_t i = 0; i < room && help_scroll_ + i < rows.size(); ++i) {
    const KeyBinding& row = *rows[help_scroll_ + i];
    const int y = box.y + 1 + static_cast<int>(i);
    grid.PutText(box.x + 2, y, row.keys, kBoldStyle, 16);
    grid.PutText(box.x + 18, y, row.description, {}, width - 21);
  }
  if (help_scroll_ > 0) grid.Set(box.x + width - 2, box.y + 1, U'↑', kDimStyle);
  if (help_scroll_ + room < rows.size()) grid.Set(box.x + width - 2, box.y + height - 3, U'↓', kDimStyle);
  grid.PutText(box.x + 2, box.y + height - 2,
               screen == kSymonScreen ? "runmon leet symon: this machine, live"
                                      : "runmon leet: charts of a run log, live",
               kDimStyle, width - 4);
}

}  // namespace runmon::tui
