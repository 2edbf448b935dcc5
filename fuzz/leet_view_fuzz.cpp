// Fuzzes the TUI from a run log to a frame: the input's first 4 bytes pick the frame size (up to 200x60),
// the next byte says how many of the following bytes are key presses, and the rest is a run log. The log
// is read record by record into a RunModel (W&B's records with any keys, values and names), rendered in
// single-run view (or symon's, by a bit of the height), with the run's console output and images, then
// each key byte is turned into an input event (characters, arrows, pages, tab, enter, esc, ctrl and alt
// keys, wheel, click, drag and release at a position) and the frame is rendered again after each. Checks:
// every frame has the requested size, holds no control characters (hostile names cannot reach the terminal),
// and each continuation cell follows a double-width character.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "runlog/record_reader.hpp"
#include "tui/view.hpp"

namespace {

using runmon::tui::CellGrid;
using runmon::tui::CodePointWidth;
using runmon::tui::InputEvent;
using runmon::tui::KeyCode;

void CheckFrame(const CellGrid& grid, int width, int height) {
  FUZZ_CHECK(grid.width() == width && grid.height() == height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const char32_t c = grid.at(x, y).code_point;
      FUZZ_CHECK(!(c != 0 && (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0))));
      if (c == 0) FUZZ_CHECK(x > 0 && CodePointWidth(grid.at(x - 1, y).code_point) == 2);
    }
  }
}

InputEvent EventFor(uint8_t byte, int width, int height) {
  static constexpr std::array kKeys = {KeyCode::kEnter,         KeyCode::kEscape,      KeyCode::kBackspace,
                                       KeyCode::kTab,           KeyCode::kBackTab,     KeyCode::kUp,
                                       KeyCode::kDown,          KeyCode::kLeft,        KeyCode::kRight,
                                       KeyCode::kPageUp,        KeyCode::kPageDown,    KeyCode::kHome,
                                       KeyCode::kEnd,           KeyCode::kCtrlL,       KeyCode::kWheelUp,
                                       KeyCode::kWheelDown,     KeyCode::kMouseClick,  KeyCode::kMouseDrag,
                                       KeyCode::kMouseRelease,  KeyCode::kCtrlO,       KeyCode::kCtrlSlash,
                                       KeyCode::kCtrlBackslash, KeyCode::kAltCharacter};
  if (byte >= 0x20 && byte < 0x7F) return runmon::tui::CharacterEvent(byte);  // q quits only in the app
  InputEvent event = runmon::tui::KeyEvent(kKeys[byte % kKeys.size()]);
  if (event.code == KeyCode::kAltCharacter) event.character = byte % 2 == 0 ? U'r' : U'x';
  event.x = width > 0 ? (byte * 7) % width : 0;
  event.y = height > 0 ? (byte * 3) % height : 0;
  return event;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const int width = (data[0] | (data[1] << 8)) % 201;
  const int height = (data[2] | (data[3] << 8)) % 61;
  const size_t key_count = std::min<size_t>(data[4], size - 5);
  const uint8_t* keys = data + 5;
  const std::string_view log(reinterpret_cast<const char*>(keys + key_count), size - 5 - key_count);

  runmon::runlog::RecordReader reader(runmon::runlog::MemorySource(log));
  runmon::runview::RunModel model;
  while (reader.Next() == runmon::runlog::ReadOutcome::kRecord) model.Ingest(reader.record());

  runmon::tui::ViewModel view_model;
  view_model.mode = runmon::tui::LeetMode::kSingleRun;
  view_model.chart_runs = {&model};
  view_model.chart_run_labels = {model.overview().name};
  view_model.overview_run = &model;
  view_model.warnings = {model.overview().name};
  view_model.now_seconds = 1.8e9;
  view_model.console = &model.console();
  view_model.media = &model.media();
  view_model.symon = (data[3] & 0x80) != 0;  // symon's layout: the process table (none listed) instead
  runmon::tui::LeetView view;
  CheckFrame(view.Render(view_model, width, height), width, height);
  for (size_t i = 0; i < key_count; ++i) {
    view.Handle(EventFor(keys[i], width, height));
    CheckFrame(view.Render(view_model, width, height), width, height);
  }
  return 0;
}
