// A program for tests/e2e/terminal_test.py: starts the terminal layer, draws a frame that exercises it (a
// box, ASCII, a double-width CJK string, braille, colours, the size and the process id) and lists every input
// event it reads as a line "event: ...". 'q' exits with status 0, ctrl+c with 130 (as a shell reports
// SIGINT); a terminal that cannot be started is reported on stderr with status 1.
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/utf8.hpp"
#include "tui/cell_grid.hpp"
#include "tui/input.hpp"
#include "tui/terminal.hpp"

namespace runmon::tui {
namespace {

std::string Utf8(char32_t code_point) {
  std::string out;
  AppendUtf8(out, code_point);
  return out;
}

std::string Describe(const InputEvent& event, const Terminal& terminal) {
  const std::string at = " " + std::to_string(event.x) + " " + std::to_string(event.y);
  switch (event.code) {
    case KeyCode::kNone:
      return "none";
    case KeyCode::kCharacter:
      return "char '" + Utf8(event.character) + "'";
    case KeyCode::kEnter:
      return "enter";
    case KeyCode::kEscape:
      return "escape";
    case KeyCode::kBackspace:
      return "backspace";
    case KeyCode::kTab:
      return "tab";
    case KeyCode::kBackTab:
      return "backtab";
    case KeyCode::kUp:
      return "up";
    case KeyCode::kDown:
      return "down";
    case KeyCode::kLeft:
      return "left";
    case KeyCode::kRight:
      return "right";
    case KeyCode::kPageUp:
      return "page-up";
    case KeyCode::kPageDown:
      return "page-down";
    case KeyCode::kHome:
      return "home";
    case KeyCode::kEnd:
      return "end";
    case KeyCode::kCtrlC:
      return "ctrl-c";
    case KeyCode::kCtrlL:
      return "ctrl-l";
    case KeyCode::kCtrlO:
      return "ctrl-o";
    case KeyCode::kCtrlSlash:
      return "ctrl-slash";
    case KeyCode::kCtrlBackslash:
      return "ctrl-backslash";
    case KeyCode::kAltCharacter:
      return "alt '" + Utf8(event.character) + "'";
    case KeyCode::kWheelUp:
      return "wheel-up" + at;
    case KeyCode::kWheelDown:
      return "wheel-down" + at;
    case KeyCode::kMouseClick:
      return "click" + at;
    case KeyCode::kMouseDrag:
      return "drag" + at;
    case KeyCode::kMouseRelease:
      return "release" + at;
    case KeyCode::kResize:
      return "resize " + std::to_string(terminal.width()) + "x" + std::to_string(terminal.height());
  }
  return "unknown";
}

CellGrid Frame(const Terminal& terminal, const std::deque<std::string>& events) {
  CellGrid grid(terminal.width(), terminal.height());
  grid.DrawBox(grid.bounds(), {}, "terminal_probe");
  const int inner = grid.width() - 4;
  grid.PutText(2, 1, "ascii: Hello, runmon!", {}, inner);
  grid.PutText(2, 2, "wide: 漢字テスト|", {}, inner);
  grid.PutText(2, 3, "braille: ⣿⣶⣤⣀⡇⠁⢸|", {}, inner);
  const int colour_x = 2 + grid.PutText(2, 4, "colour: ", {}, inner);
  const int green_end = colour_x + grid.PutText(colour_x, 4, "green", {.fg = 2, .attributes = kBold}, inner);
  grid.PutText(green_end + 1, 4, "orange", {.fg = 208, .bg = 236}, inner);
  grid.PutText(2, 5, "size: " + std::to_string(terminal.width()) + "x" + std::to_string(terminal.height()),
               {}, inner);
  grid.PutText(2, 6, "pid: " + std::to_string(getpid()), {}, inner);
  grid.PutText(2, 7, "q quits (status 0), ctrl+c quits (status 130)", {.attributes = kDim}, inner);
  int y = 8;
  for (const std::string& event : events) grid.PutText(2, y++, "event: " + event, {}, inner);
  return grid;
}

int Main() {
  Result<std::unique_ptr<Terminal>> started = StartCursesTerminal();
  if (!started.ok()) {
    std::fprintf(stderr, "terminal_probe: %s\n", started.error().c_str());
    return 1;
  }
  std::unique_ptr<Terminal> terminal = std::move(started.value());
  std::deque<std::string> events;
  while (true) {
    terminal->Draw(Frame(*terminal, events));
    const std::optional<InputEvent> event = terminal->Read(1000);
    if (!event) continue;
    if (event->code == KeyCode::kCharacter && event->character == U'q') return 0;
    if (event->code == KeyCode::kCtrlC) return 130;
    events.push_back(Describe(*event, *terminal));
    // The lines below the header and above the box's bottom edge.
    while (!events.empty() && static_cast<int>(events.size()) > terminal->height() - 9) events.pop_front();
  }
}

}  // namespace
}  // namespace runmon::tui

int main() {
  return runmon::tui::Main();
}
