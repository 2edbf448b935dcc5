// Input events, decoupled from the terminal library: the terminal layer turns what it reads into these, and
// the pure view code (view.hpp) reacts to them, so key handling is tested without a terminal.
#pragma once

#include <cstdint>

namespace runmon::tui {

enum class KeyCode : uint8_t {
  kNone,
  kCharacter,  // a printable character: InputEvent::character
  kEnter,
  kEscape,
  kBackspace,
  kTab,
  kBackTab,
  kUp,
  kDown,
  kLeft,
  kRight,
  kPageUp,
  kPageDown,
  kHome,
  kEnd,
  kCtrlC,
  kCtrlL,
  kCtrlO,
  kCtrlSlash,      // ctrl+/ (sent as ctrl+_)
  kCtrlBackslash,  // ctrl+\ (the terminal is raw: no SIGQUIT)
  kAltCharacter,   // alt (meta) with a printable character: InputEvent::character
  kWheelUp,        // mouse wheel, at InputEvent::x, y (cell coordinates)
  kWheelDown,
  kMouseClick,    // left button press at InputEvent::x, y
  kMouseDrag,     // the mouse moved with the left button held, to InputEvent::x, y
  kMouseRelease,  // the left button was released at InputEvent::x, y
  kResize,        // the terminal changed size
};

struct InputEvent {
  KeyCode code = KeyCode::kNone;
  char32_t character = 0;
  int x = 0;
  int y = 0;
};

inline InputEvent CharacterEvent(char32_t character) {
  return {KeyCode::kCharacter, character, 0, 0};
}
inline InputEvent KeyEvent(KeyCode code) {
  return {code, 0, 0, 0};
}

}  // namespace runmon::tui
