// The terminal layer's input translation (see terminal_input.hpp): ncurses' characters, key codes and
// mouse reports as InputEvents. Keys it does not know (F-keys, ctrl+letters other than C, L, O, \ and /)
// are nullopt, so the reader waits on past them.
#include "tui/terminal_input.hpp"

#include <curses.h>

#include <cwchar>

namespace runmon::tui {
namespace {

// An escape that a printable character follows at once is alt with that character (terminals send meta as
// ESC first). ESC [ and ESC O start a sequence ncurses did not know (alt+arrow on some terminals): it is read
// to its final byte and dropped. ESC ESC with a sequence or key after it is dropped too (alt+arrow
// elsewhere), ESC ESC alone is one escape key; anything else after an escape is read again as itself.
std::optional<InputEvent> AfterEscape(int depth = 0) {
  wtimeout(stdscr, 0);
  wint_t next = 0;
  const int kind = wget_wch(stdscr, &next);
  if (kind == OK && (next == L'[' || next == L'O')) {
    const bool csi = next == L'[';
    for (int i = 0; i < 32 && wget_wch(stdscr, &next) == OK; ++i) {
      if (!csi || (next >= 0x40 && next <= 0x7e)) break;  // SS3: one byte; CSI: up to its final byte
    }
    return std::nullopt;
  }
  if (kind == OK && next == 27 && depth == 0) {
    const auto second = AfterEscape(1);
    return second && second->code == KeyCode::kEscape ? second : std::nullopt;
  }
  if (kind == OK && IsPrintable(static_cast<char32_t>(next))) {
    return InputEvent{KeyCode::kAltCharacter, static_cast<char32_t>(next), 0, 0};
  }
  if (kind == KEY_CODE_YES) {
    ungetch(static_cast<int>(next));
  } else if (kind == OK) {
    unget_wch(static_cast<wchar_t>(next));
  }
  return KeyEvent(KeyCode::kEscape);
}

std::optional<InputEvent> TranslateCharacter(wint_t key) {
  switch (key) {
    case L'\r':
    case L'\n':
      return KeyEvent(KeyCode::kEnter);
    case 27:
      return AfterEscape();
    case 127:
    case 8:
      return KeyEvent(KeyCode::kBackspace);
    case L'\t':
      return KeyEvent(KeyCode::kTab);
    case 3:
      return KeyEvent(KeyCode::kCtrlC);
    case 15:
      return KeyEvent(KeyCode::kCtrlO);
    case 28:
      return KeyEvent(KeyCode::kCtrlBackslash);
    case 31:
      return KeyEvent(KeyCode::kCtrlSlash);
    case 12:
      return KeyEvent(KeyCode::kCtrlL);
    default:
      break;
  }
  const auto code_point = static_cast<char32_t>(key);
  if (!IsPrintable(code_point)) return std::nullopt;
  return CharacterEvent(code_point);
}

std::optional<InputEvent> TranslateMouse() {
  MEVENT mouse{};
  if (getmouse(&mouse) != OK) return std::nullopt;
  InputEvent event;
  if ((mouse.bstate & BUTTON4_PRESSED) != 0) {
    event.code = KeyCode::kWheelUp;
  } else if ((mouse.bstate & BUTTON5_PRESSED) != 0) {
    event.code = KeyCode::kWheelDown;
  } else if ((mouse.bstate & BUTTON1_PRESSED) != 0) {
    event.code = KeyCode::kMouseClick;
  } else if ((mouse.bstate & BUTTON1_RELEASED) != 0) {
    event.code = KeyCode::kMouseRelease;
  } else if ((mouse.bstate & REPORT_MOUSE_POSITION) != 0) {
    event.code = KeyCode::kMouseDrag;
  } else {
    return std::nullopt;
  }
  event.x = mouse.x;
  event.y = mouse.y;
  return event;
}

std::optional<InputEvent> TranslateKey(int key) {
  switch (key) {
    case KEY_UP:
      return KeyEvent(KeyCode::kUp);
    case KEY_DOWN:
      return KeyEvent(KeyCode::kDown);
    case KEY_LEFT:
      return KeyEvent(KeyCode::kLeft);
    case KEY_RIGHT:
      return KeyEvent(KeyCode::kRight);
    case KEY_PPAGE:
      return KeyEvent(KeyCode::kPageUp);
    case KEY_NPAGE:
      return KeyEvent(KeyCode::kPageDown);
    case KEY_HOME:
    case KEY_FIND:  // what some terminals (vt220, linux console keymaps) call Home ...
      return KeyEvent(KeyCode::kHome);
    case KEY_END:
    case KEY_SELECT:  // ... and End
      return KeyEvent(KeyCode::kEnd);
    case KEY_BTAB:
      return KeyEvent(KeyCode::kBackTab);
    case KEY_ENTER:
      return KeyEvent(KeyCode::kEnter);
    case KEY_BACKSPACE:
      return KeyEvent(KeyCode::kBackspace);
    case KEY_RESIZE:
      return KeyEvent(KeyCode::kResize);
    case KEY_MOUSE:
      return TranslateMouse();
    default:
      return std::nullopt;
  }
}

}  // namespace

bool IsPrintable(char32_t code_point) {
  if (code_point < 0x20 || (code_point >= 0x7f && code_point < 0xa0)) return false;
  if (code_point >= 0xd800 && code_point < 0xe000) return false;
  return code_point <= 0x10ffff;
}

std::optional<InputEvent> TranslateInput(int kind, uint32_t key) {
  return kind == KEY_CODE_YES ? TranslateKey(static_cast<int>(key))
                              : TranslateCharacter(static_cast<wint_t>(key));
}

}  // namespace runmon::tui
