// leet's keys, in one table: the view's input handler looks commands up in it and the help overlay lists
// it, so a key cannot work without being listed or be listed without working. A binding names the keys that
// give a command (LEET's, from W&B's keybindings.go, where runmon has the feature), how the help spells
// them, and the screens it applies to (a run, a workspace, symon). Mouse gestures have rows of their own
// for the help; the handler reads them from the event's position, not from the table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tui/input.hpp"

namespace runmon::tui {

enum class Command : uint8_t {
  kNone,  // a help row only (mouse gestures)
  kHelp,
  kQuit,
  kRestart,
  kEditMetricsFilter,
  kEditSystemFilter,
  kEditOverviewFilter,
  kClearMetricsFilter,
  kClearSystemFilter,
  kClearOverviewFilter,
  kBack,
  kToggleLeft,
  kToggleRight,
  kToggleMetrics,
  kToggleMedia,
  kToggleConsole,
  kResetLayout,
  kCycleGuides,
  kCycleChartMode,
  kZoomIn,
  kZoomOut,
  kGridRows,
  kGridColumns,
  kNextPane,
  kPreviousPane,
  kUp,
  kDown,
  kLeft,
  kRight,
  kNextPage,
  kPreviousPage,
  kFirst,
  kLast,
  kOpenRun,
  kToggleRun,
};

// Where a binding applies.
enum Screen : uint8_t {
  kRunScreen = 1,
  kWorkspaceScreen = 2,
  kSymonScreen = 4,
  kEveryScreen = kRunScreen | kWorkspaceScreen | kSymonScreen,
};

struct KeyChord {
  KeyCode code = KeyCode::kNone;
  char32_t character = 0;  // for kCharacter and kAltCharacter
};

struct KeyBinding {
  std::array<KeyChord, 4> chords;  // kNone entries are unused
  std::string_view keys;           // as the help shows them: "n N pgdn pgup"
  std::string_view description;
  Command command = Command::kNone;
  uint8_t screens = kEveryScreen;
};

std::span<const KeyBinding> KeyBindings();

// The command `event` gives on `screen`; nullopt when none (an unbound key, a mouse event).
std::optional<Command> FindCommand(const InputEvent& event, Screen screen);

// The table as docs/leet-keys.md holds it (`runmon leet --print-keys`): a Markdown table of every row with
// keys, and the screens it applies to.
std::string KeyTableMarkdown();

}  // namespace runmon::tui
