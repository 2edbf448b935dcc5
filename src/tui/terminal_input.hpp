// The terminal layer's input translation (terminal_input.cpp): what one ncurses read means as an
// InputEvent. Internal to runmon_tui_terminal; the header itself includes nothing of curses.
#pragma once

#include <cstdint>
#include <optional>

#include "tui/input.hpp"

namespace runmon::tui {

// Whether a code point may be drawn: not C0 or C1 controls, not a surrogate, within Unicode.
bool IsPrintable(char32_t code_point);

// The event of one wget_wch result (`kind` is its return: OK for a character, KEY_CODE_YES for a key
// code) or nullopt for input nothing reacts to. An escape reads on at once (timeout 0) to tell alt+key and
// sequences the terminal database does not know from the escape key.
std::optional<InputEvent> TranslateInput(int kind, uint32_t key);

}  // namespace runmon::tui
