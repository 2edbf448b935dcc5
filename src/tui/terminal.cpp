// The terminal layer on ncursesw (with terminal_input.cpp, the only files in runmon that include
// <curses.h>): it blits CellGrids incrementally and turns what ncurses reads into InputEvents.
//
// Odd cases and the choices made for them:
// - ncurses' initscr() exits the process on an unknown TERM; newterm() with a NULL check does not, so an
//   unknown or missing TERM is an error message like any other.
// - The locale: setlocale(LC_ALL, "") for the user's UTF-8 codeset, and C.UTF-8 for LC_CTYPE when that
//   codeset is not UTF-8 (LANG=C in a container). LC_NUMERIC goes back to "C" so that no strtod or printf
//   elsewhere in runmon starts reading or writing decimal commas.
// - Width: the grid decides which characters are double width (a continuation cell follows them) and the C
//   library's wcwidth, which ncurses uses, decides how the screen takes them. When the two disagree the
//   grid's layout wins: a character the terminal takes as wide where the grid has one cell shows as U+FFFD,
//   one the terminal takes as narrow where the grid has two cells is followed by a space. Characters the
//   locale cannot show become '?', zero-width ones are put on a space.
// - Drawing compares the glyphs sent last time (character, attributes, colour pair) with the new frame's and
//   sends only the ones that changed; a size change or ctrl+L forgets them and repaints the whole screen.
// - Colours are xterm-256 indices. Pairs are allocated on first use and cached per (fg, bg); terminals with
//   fewer than 256 colours get the nearest of their 8 or 16; when pairs run out, pair 0 (the default).
// - Read keeps waiting, up to its timeout, past keys it does not know (F-keys, ctrl+letters other than C
//   and L), so nullopt always means "nothing to react to"; an interrupted or failed read also ends in
//   nullopt. A negative timeout waits without a limit. Ctrl+L also makes the next Draw repaint every cell.
// - Fatal signals (SIGTERM, SIGHUP, SIGQUIT, and SIGINT, for which ncurses' own handler would exit with
//   status 1): endwin is not async-signal-safe, so the handler writes reset sequences prepared at start from
//   terminfo (mouse off, default colours and attributes, screen cleared, cursor visible, keypad local,
//   leave the alternate screen), restores the saved termios with tcsetattr (which is async-signal-safe),
//   then re-raises the signal with its default disposition, so the exit status says which signal it was.
//   The handlers are installed before newterm, so ncurses leaves these signals alone; SIGWINCH stays with
//   ncurses, which reports it as KEY_RESIZE. The previous handlers come back when the terminal is closed.
// - The mouse: press, release, wheel and drags (xterm's button-event mode, so a mouse that only moves sends
//   nothing). Alt+key arrives as ESC and the key at once; ESC alone is the escape key after ncurses' delay.
#include "tui/terminal.hpp"

#include "tui/terminal_input.hpp"

#include <curses.h>
#include <langinfo.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <clocale>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <unordered_map>
#include <vector>

namespace runmon::tui {
namespace {

constexpr std::array<int, 4> kFatalSignals = {SIGTERM, SIGHUP, SIGQUIT, SIGINT};
constexpr int kMaxColorPairs = 32767;  // init_pair takes a short
constexpr mmask_t kMouseEvents =
    BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON4_PRESSED | BUTTON5_PRESSED | REPORT_MOUSE_POSITION;
// xterm's button-event tracking: motion is reported only while a button is held (a drag), where the
// any-event mode ncurses asks for with REPORT_MOUSE_POSITION would wake runmon on every move of the mouse.
constexpr const char* kButtonEventTracking = "\x1b[?1003l\x1b[?1002h";
constexpr const char* kButtonEventTrackingOff = "\x1b[?1002l";

// What the signal handler needs, prepared before it is armed: plain storage, no allocation in the handler.
struct SignalRestore {
  std::array<char, 512> bytes{};
  size_t size = 0;
  int fd = -1;
  termios saved_modes{};
  bool have_modes = false;
};
SignalRestore g_restore;
volatile sig_atomic_t g_restore_armed = 0;
std::atomic<bool> g_terminal_active{false};
std::array<struct sigaction, kFatalSignals.size()> g_previous_actions{};

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t written = write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
}

void RestoreAndReraise(int signal_number) {
  const int saved_errno = errno;
  if (g_restore_armed != 0) {
    g_restore_armed = 0;
    WriteAll(g_restore.fd, g_restore.bytes.data(), g_restore.size);
    if (g_restore.have_modes) tcsetattr(g_restore.fd, TCSANOW, &g_restore.saved_modes);
  }
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  // Still blocked while this handler runs: delivered, with the default action, as soon as it returns.
  raise(signal_number);
  errno = saved_errno;
}

sigset_t FatalSignalSet() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal_number : kFatalSignals) sigaddset(&set, signal_number);
  return set;
}

void InstallSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = RestoreAndReraise;
  action.sa_mask = FatalSignalSet();  // one restore at a time, even when several signals come together
  action.sa_flags = 0;
  for (size_t i = 0; i < kFatalSignals.size(); ++i) {
    sigaction(kFatalSignals[i], &action, &g_previous_actions[i]);
  }
}

void RemoveSignalHandlers() {
  for (size_t i = 0; i < kFatalSignals.size(); ++i) {
    sigaction(kFatalSignals[i], &g_previous_actions[i], nullptr);
  }
}

// A terminfo string capability without its "$<5>"-style padding (the handler writes it raw); empty when the
// terminal lacks it.
std::string Capability(const char* name) {
  const char* value = tigetstr(name);
  if (value == nullptr || value == reinterpret_cast<const char*>(-1)) return {};
  std::string out;
  for (const char* p = value; *p != '\0'; ++p) {
    if (p[0] == '$' && p[1] == '<') {
      const char* end = std::strchr(p, '>');
      if (end != nullptr) {
        p = end;
        continue;
      }
    }
    out += *p;
  }
  return out;
}

// What the signal handler writes: about what endwin sends, in its order. Mouse reporting is turned off the
// way ncurses turns it on (XM, else xterm's modes when the terminal has a mouse key; without either ncurses
// sends nothing). The screen is cleared rather than the cursor put on the last line: nothing of the picture
// stays on a terminal without an alternate screen, and tmux, when it leaves an alternate screen that was
// resized, brings back the lines above the cursor.
std::string ResetSequences() {
  std::string out = "\x18";  // CAN: ends any escape sequence the interrupted code had half written
  const std::string xm = Capability("XM");
  const std::string kmous = Capability("kmous");
  if (!xm.empty()) {
    const char* off = tiparm(xm.c_str(), 0);
    if (off != nullptr) out += off;
    if (!kmous.empty()) out += kButtonEventTrackingOff;  // the drag mode runmon adds; XM does not know it
  } else if (kmous.starts_with("\x1b[<")) {
    out += "\x1b[?1006;1002;1000l";
  } else if (!kmous.empty()) {
    out += "\x1b[?1002;1000l";
  }
  out += Capability("op");
  out += Capability("sgr0");
  out += Capability("clear");
  out += Capability("cnorm");
  out += Capability("rmkx");
  out += Capability("rmcup");
  return out;
}

// Sets what the signal handler writes and arms it; the fatal signals are blocked meanwhile.
void ArmRestore(const std::string& bytes) {
  const sigset_t fatal = FatalSignalSet();
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &fatal, &previous);
  g_restore.size = std::min(bytes.size(), g_restore.bytes.size());
  std::memcpy(g_restore.bytes.data(), bytes.data(), g_restore.size);
  g_restore_armed = 1;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void DisarmRestore() {
  const sigset_t fatal = FatalSignalSet();
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &fatal, &previous);
  g_restore_armed = 0;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

bool CodesetIsUtf8() {
  const char* codeset = nl_langinfo(CODESET);
  return codeset != nullptr && (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
}

void SetUpLocale() {
  std::setlocale(LC_ALL, "");
  if (!CodesetIsUtf8()) std::setlocale(LC_CTYPE, "C.UTF-8");
  std::setlocale(LC_NUMERIC, "C");
}

// xterm's first 16 colours, for mapping the 256-colour palette onto terminals with 8 or 16.
struct Rgb {
  int r;
  int g;
  int b;
};
constexpr std::array<Rgb, 16> kBasicColors = {{{0, 0, 0},
                                               {205, 0, 0},
                                               {0, 205, 0},
                                               {205, 205, 0},
                                               {0, 0, 238},
                                               {205, 0, 205},
                                               {0, 205, 205},
                                               {229, 229, 229},
                                               {127, 127, 127},
                                               {255, 0, 0},
                                               {0, 255, 0},
                                               {255, 255, 0},
                                               {92, 92, 255},
                                               {255, 0, 255},
                                               {0, 255, 255},
                                               {255, 255, 255}}};

Rgb PaletteRgb(int index) {
  if (index < 16) return kBasicColors[static_cast<size_t>(index)];
  if (index < 232) {
    constexpr std::array<int, 6> kLevels = {0, 95, 135, 175, 215, 255};
    const int cube = index - 16;
    return {kLevels[static_cast<size_t>(cube / 36)], kLevels[static_cast<size_t>(cube / 6 % 6)],
            kLevels[static_cast<size_t>(cube % 6)]};
  }
  const int gray = 8 + 10 * (index - 232);
  return {gray, gray, gray};
}

int NearestBasicColor(int index, int available) {
  const Rgb want = PaletteRgb(index);
  int best = 0;
  int best_distance = 1 << 30;
  for (int candidate = 0; candidate < available; ++candidate) {
    const Rgb have = kBasicColors[static_cast<size_t>(candidate)];
    const int distance = (want.r - have.r) * (want.r - have.r) + (want.g - have.g) * (want.g - have.g) +
                         (want.b - have.b) * (want.b - have.b);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

attr_t Attributes(uint8_t attributes) {
  attr_t out = A_NORMAL;
  if ((attributes & kBold) != 0) out |= A_BOLD;
  if ((attributes & kDim) != 0) out |= A_DIM;
  if ((attributes & kReverse) != 0) out |= A_REVERSE;
  if ((attributes & kUnderline) != 0) out |= A_UNDERLINE;
  return out;
}

// One screen position as sent to ncurses. `continuation`: covered by the wide glyph to its left.
struct Glyph {
  std::array<wchar_t, 3> text{};  // a spacing character, maybe a zero-width one on it, NUL-terminated
  attr_t attributes = A_NORMAL;
  short pair = 0;
  bool continuation = false;
  friend bool operator==(const Glyph&, const Glyph&) = default;
};

class CursesTerminal final : public Terminal {
 public:
  CursesTerminal(SCREEN* screen, bool button_event_tracking)
      : screen_(screen), button_event_tracking_(button_event_tracking) {
    SetUpColors();
    UpdateSize();
  }

  ~CursesTerminal() override {
    // Cleared first for the reasons ResetSequences gives. The signal handlers stay armed until endwin is
    // done: a signal in between only sends the same resets twice.
    werase(stdscr);
    wnoutrefresh(stdscr);
    doupdate();
    if (button_event_tracking_) putp(kButtonEventTrackingOff);  // endwin turns off only what ncurses set
    endwin();
    DisarmRestore();
    delscreen(screen_);
    RemoveSignalHandlers();
    g_terminal_active = false;
  }

  CursesTerminal(const CursesTerminal&) = delete;
  CursesTerminal& operator=(const CursesTerminal&) = delete;

  int width() const override { return width_; }
  int height() const override { return height_; }

  void Draw(const CellGrid& frame) override {
    int rows = 0;
    int columns = 0;
    getmaxyx(stdscr, rows, columns);
    if (rows != height_ || columns != width_) UpdateSize();

    BuildGlyphs(frame);
    const bool full = !shown_valid_ || shown_.size() != next_.size();
    for (int y = 0; y < height_; ++y) {
      for (int x = 0; x < width_; ++x) {
        const size_t index = static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x);
        const Glyph& glyph = next_[index];
        if (glyph.continuation || (!full && glyph == shown_[index])) continue;
        cchar_t cell{};
        setcchar(&cell, glyph.text.data(), glyph.attributes, glyph.pair, nullptr);
        // The bottom-right cell "fails" (the cursor cannot advance past it) but is drawn.
        mvwadd_wch(stdscr, y, x, &cell);
      }
    }
    shown_.swap(next_);
    shown_valid_ = true;
    wnoutrefresh(stdscr);
    doupdate();
  }

  std::optional<InputEvent> Read(int timeout_ms) override {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
    while (true) {
      int wait_ms = -1;
      if (timeout_ms >= 0) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        wait_ms = static_cast<int>(std::max<decltype(left)>(left, 0));
      }
      wtimeout(stdscr, wait_ms);
      wint_t key = 0;
      const int kind = wget_wch(stdscr, &key);
      if (kind == ERR) return std::nullopt;
      std::optional<InputEvent> event = TranslateInput(kind, static_cast<uint32_t>(key));
      if (!event) continue;
      if (event->code == KeyCode::kCtrlL) {
        shown_valid_ = false;  // repaint everything on the next Draw
        clearok(curscr, TRUE);
      } else if (event->code == KeyCode::kResize) {
        UpdateSize();
      }
      return event;
    }
  }

 private:
  void UpdateSize() {
    int rows = 0;
    int columns = 0;
    getmaxyx(stdscr, rows, columns);
    height_ = std::max(rows, 0);
    width_ = std::max(columns, 0);
    shown_valid_ = false;
    clearok(curscr, TRUE);
  }

  void SetUpColors() {
    if (!has_colors() || start_color() == ERR) return;
    colors_ = COLORS;
    default_colors_ = use_default_colors() == OK;
    max_pairs_ = std::min(COLOR_PAIRS, kMaxColorPairs);
  }

  int MapColor(int16_t color, bool foreground) const {
    if (color < 0 || color > 255) {
      if (default_colors_) return -1;
      return foreground ? COLOR_WHITE : COLOR_BLACK;
    }
    if (colors_ >= 256 || color < std::min(colors_, 16)) return color;
    return NearestBasicColor(color, std::min(colors_, 16));
  }

  short PairFor(const Style& style) {
    if (colors_ < 8) return 0;
    const int fg = MapColor(style.fg, true);
    const int bg = MapColor(style.bg, false);
    const int key = (fg + 1) * 512 + (bg + 1);
    if (const auto found = pairs_.find(key); found != pairs_.end()) return found->second;
    short pair = 0;
    const bool is_default =
        default_colors_ ? (fg == -1 && bg == -1) : (fg == COLOR_WHITE && bg == COLOR_BLACK);
    if (!is_default && next_pair_ < max_pairs_) {
      const auto candidate = static_cast<short>(next_pair_);
      if (init_pair(candidate, static_cast<short>(fg), static_cast<short>(bg)) == OK) {
        pair = candidate;
        ++next_pair_;
      }
    }
    pairs_.emplace(key, pair);
    return pair;
  }

  Glyph MakeGlyph(wchar_t character, const Style& style) {
    Glyph glyph;
    glyph.text[0] = character;
    glyph.attributes = Attributes(style.attributes);
    glyph.pair = PairFor(style);
    return glyph;
  }

  // The glyphs for `frame` at the current size (see the file comment for the width rules).
  void BuildGlyphs(const CellGrid& frame) {
    const size_t total = static_cast<size_t>(width_) * static_cast<size_t>(height_);
    next_.assign(total, Glyph{});
    const Cell blank;
    for (int y = 0; y < height_; ++y) {
      const bool row_in_frame = y < frame.height();
      Glyph* row = next_.data() + static_cast<size_t>(y) * static_cast<size_t>(width_);
      for (int x = 0; x < width_; ++x) {
        if (row[x].continuation) continue;
        const Cell& cell = row_in_frame && x < frame.width() ? frame.at(x, y) : blank;
        const char32_t code_point = cell.code_point;
        if (code_point == 0) {  // a continuation cell without its wide character
          row[x] = MakeGlyph(L' ', cell.style);
          continue;
        }
        const bool grid_wide = row_in_frame && x + 1 < frame.width() && frame.at(x + 1, y).code_point == 0;
        const auto character = static_cast<wchar_t>(code_point);
        const int columns = IsPrintable(code_point) ? wcwidth(character) : -1;
        if (columns < 0) {
          row[x] = MakeGlyph(L'?', cell.style);
        } else if (columns == 0) {
          row[x] = MakeGlyph(L' ', cell.style);
          row[x].text[1] = character;
        } else if (columns == 1) {
          row[x] = MakeGlyph(character, cell.style);  // a continuation cell after it shows as a space
        } else if (!grid_wide) {
          row[x] = MakeGlyph(L'\uFFFD', cell.style);
        } else if (x + 1 < width_) {
          row[x] = MakeGlyph(character, cell.style);
          row[x + 1].continuation = true;
        } else {
          row[x] = MakeGlyph(L' ', cell.style);  // would straddle the right edge
        }
      }
    }
  }

  SCREEN* screen_;
  bool button_event_tracking_;  // the drag mode was turned on (and must be turned off)
  int width_ = 0;
  int height_ = 0;
  int colors_ = 0;  // 0: no colour
  bool default_colors_ = false;
  int max_pairs_ = 0;
  int next_pair_ = 1;
  std::unordered_map<int, short> pairs_;
  std::vector<Glyph> shown_;  // what the screen shows (valid when shown_valid_)
  std::vector<Glyph> next_;
  bool shown_valid_ = false;
};

}  // namespace

Result<std::unique_ptr<Terminal>> StartCursesTerminal() {
  if (isatty(STDIN_FILENO) == 0) return Error{"the terminal UI needs a terminal, but stdin is not a tty"};
  if (isatty(STDOUT_FILENO) == 0) return Error{"the terminal UI needs a terminal, but stdout is not a tty"};
  if (g_terminal_active.exchange(true)) return Error{"the terminal UI is already running"};

  SetUpLocale();
  g_restore = SignalRestore{};
  g_restore.fd = STDOUT_FILENO;
  g_restore.have_modes = tcgetattr(STDOUT_FILENO, &g_restore.saved_modes) == 0;
  InstallSignalHandlers();  // before newterm, so that ncurses does not take SIGINT and SIGTERM

  const char* term = std::getenv("TERM");
  const std::string term_name = term == nullptr ? "" : term;
  SCREEN* screen = newterm(nullptr, stdout, stdin);
  std::string problem;
  if (screen == nullptr) {
    problem =
        term_name.empty() ? "TERM is not set" : "TERM '" + term_name + "' is not in the terminfo database";
  } else {
    set_term(screen);
    if (Capability("cup").empty()) {  // "dumb", "unknown": ncurses would scroll lines instead of drawing
      problem = "TERM '" + term_name + "' cannot move the cursor";
      endwin();
      delscreen(screen);
    }
  }
  if (!problem.empty()) {
    RemoveSignalHandlers();
    g_terminal_active = false;
    return Error{"cannot set up the terminal: " + problem + " (try TERM=xterm-256color)"};
  }
  ArmRestore(ResetSequences());
  raw();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  mouseinterval(0);
  // Through ncurses' own output, so it follows the mode mousemask sets rather than racing it.
  const bool button_event_tracking = mousemask(kMouseEvents, nullptr) != 0 && !Capability("kmous").empty();
  if (button_event_tracking) putp(kButtonEventTracking);
  return std::unique_ptr<Terminal>(std::make_unique<CursesTerminal>(screen, button_event_tracking));
}

}  // namespace runmon::tui
