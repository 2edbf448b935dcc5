// leet's key table (see key_table.hpp). The order is the help's order.
#include "tui/key_table.hpp"

#include <algorithm>

namespace runmon::tui {
namespace {

constexpr KeyChord Char(char32_t character) {
  return {KeyCode::kCharacter, character};
}
constexpr KeyChord Key(KeyCode code) {
  return {code, 0};
}

constexpr uint8_t kRunsOnly = kRunScreen | kWorkspaceScreen;
constexpr uint8_t kWithOverview = kRunScreen | kSymonScreen;

constexpr std::array<KeyBinding, 40> kBindings = {{
    {{Char(U'h'), Char(U'?')}, "h ?", "this help (arrows scroll, other keys close)", Command::kHelp},
    {{Char(U'q'), Key(KeyCode::kCtrlC)}, "q ctrl+c", "quit", Command::kQuit},
    {{KeyChord{KeyCode::kAltCharacter, U'r'}}, "alt+r", "restart (read the run again)", Command::kRestart},
    {{Char(U'/')}, "/", "filter the centre's charts (tab: glob)", Command::kEditMetricsFilter},
    {{Key(KeyCode::kCtrlL), Key(KeyCode::kCtrlSlash)},
     "ctrl+l ctrl+/",
     "clear that filter",
     Command::kClearMetricsFilter},
    {{Char(U'\\')}, "\\", "filter the system charts", Command::kEditSystemFilter},
    {{Key(KeyCode::kCtrlBackslash)}, "ctrl+\\", "clear the system filter", Command::kClearSystemFilter},
    {{Char(U'o')}, "o", "filter the overview", Command::kEditOverviewFilter, kWithOverview},
    {{Key(KeyCode::kCtrlO)},
     "ctrl+o",
     "clear the overview filter",
     Command::kClearOverviewFilter,
     kWithOverview},
    {{Key(KeyCode::kEscape)}, "esc", "clear the filters / back to runs", Command::kBack},
    {{Char(U'1')}, "1", "metrics grid", Command::kToggleMetrics, kRunsOnly},
    {{Char(U'[')}, "[", "left sidebar", Command::kToggleLeft},
    {{Char(U']'), Char(U'2')}, "] 2", "system sidebar", Command::kToggleRight, kRunsOnly},
    {{Char(U'3')}, "3", "media: the images the run logged", Command::kToggleMedia, kRunsOnly},
    {{Char(U'4')}, "4", "console logs (end follows)", Command::kToggleConsole, kRunsOnly},
    {{Char(U'0')}, "0", "reset the pane sizes", Command::kResetLayout},
    {{Key(KeyCode::kTab)}, "tab", "next pane", Command::kNextPane},
    {{Key(KeyCode::kBackTab)}, "shift+tab", "previous pane", Command::kPreviousPane},
    {{Key(KeyCode::kUp), Char(U'w')}, "arrows wasd", "move focus", Command::kUp},
    {{Key(KeyCode::kDown), Char(U's')}, "", "", Command::kDown},
    {{Key(KeyCode::kLeft), Char(U'a')}, "", "", Command::kLeft},
    {{Key(KeyCode::kRight), Char(U'd')}, "", "", Command::kRight},
    {{Char(U'n'), Key(KeyCode::kPageDown)}, "n N pgdn pgup", "next / previous page", Command::kNextPage},
    {{Char(U'N'), Key(KeyCode::kPageUp)}, "", "", Command::kPreviousPage},
    {{Key(KeyCode::kHome)}, "home end", "first / last page", Command::kFirst},
    {{Key(KeyCode::kEnd)}, "", "", Command::kLast},
    {{Char(U'y')}, "y", "chart: linear, log, heatmap (%)", Command::kCycleChartMode},
    {{Char(U'g')}, "g", "chart guides: off, dots, lines", Command::kCycleGuides},
    {{Char(U'+'), Char(U'='), Char(U'-')}, "+ - wheel", "zoom the focused chart", Command::kZoomIn},
    {{Char(U'r'), Char(U'c')}, "r c then 1-9", "grid rows / columns", Command::kGridRows},
    {{Key(KeyCode::kEnter)}, "enter", "open the run (runs list)", Command::kOpenRun, kWorkspaceScreen},
    {{Char(U' ')}, "space", "overlay the run (runs list)", Command::kToggleRun, kWorkspaceScreen},
    // What the mouse does, for the help: the handler reads these from the event's position.
    {{}, "click", "focus a chart or pane", Command::kNone},
    {{}, "drag", "resize a pane by its edge", Command::kNone},
    // The process table's own keys (symon), while it has the focus (process_table.hpp).
    {{}, "table < >", "sort by the column left / right", Command::kNone, kSymonScreen},
    {{}, "table v", "reverse the order", Command::kNone, kSymonScreen},
    // The media pane's own keys, while it has the focus (media_pane.hpp).
    {{}, "media ← →  ↑ ↓", "a step back / on; ten steps", Command::kNone, kRunsOnly},
    {{}, "media home end", "the first / last image", Command::kNone, kRunsOnly},
    {{}, "media l", "link scrubbing across keys", Command::kNone, kRunsOnly},
    {{}, "media enter esc", "the image alone / back", Command::kNone, kRunsOnly},
}};

bool Matches(const KeyChord& chord, const InputEvent& event) {
  if (chord.code == KeyCode::kNone || chord.code != event.code) return false;
  const bool has_character = chord.code == KeyCode::kCharacter || chord.code == KeyCode::kAltCharacter;
  return !has_character || chord.character == event.character;
}

}  // namespace

std::span<const KeyBinding> KeyBindings() {
  return kBindings;
}

std::optional<Command> FindCommand(const InputEvent& event, Screen screen) {
  for (const KeyBinding& binding : kBindings) {
    if ((binding.screens & screen) == 0 || binding.command == Command::kNone) continue;
    if (std::any_of(binding.chords.begin(), binding.chords.end(),
                    [&](const KeyChord& chord) { return Matches(chord, event); })) {
      // '-' shares zoom's row but zooms out; 'c' shares the grid row but sets columns.
      if (binding.command == Command::kZoomIn && event.character == U'-') return Command::kZoomOut;
      if (binding.command == Command::kGridRows && event.character == U'c') return Command::kGridColumns;
      return binding.command;
    }
  }
  return std::nullopt;
}

std::string KeyTableMarkdown() {
  std::string out =
      "# leet's keys\n\n"
      "Generated from leet's key table (`src/tui/key_table.cpp`) by `runmon leet --print-keys`; the help\n"
      "overlay (`h`) lists the same rows. Where: run (a run open), workspace (the runs list), symon\n"
      "(`runmon leet symon`). Rows named after a pane work while that pane has the focus.\n\n"
      "| Keys | Action | Where |\n|---|---|---|\n";
  for (const KeyBinding& binding : kBindings) {
    if (binding.keys.empty()) continue;
    std::string where;
    for (const auto& [screen, name] : {std::pair{kRunScreen, "run"}, std::pair{kWorkspaceScreen, "workspace"},
                                       std::pair{kSymonScreen, "symon"}}) {
      if ((binding.screens & screen) != 0) where += (where.empty() ? "" : ", ") + std::string(name);
    }
    out += "| `" + std::string(binding.keys) + "` | " + std::string(binding.description) + " | " + where +
           " |\n";
  }
  return out;
}

}  // namespace runmon::tui
