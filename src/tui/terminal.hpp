// The only place the TUI meets the terminal (ncursesw, in terminal.cpp): it shows CellGrids and reads input
// events. Everything above it is pure. Drawing is incremental: only cells that differ from the previous
// frame are sent, so an idle tailing view costs next to nothing. The terminal is restored on destruction
// and on SIGTERM, SIGHUP, SIGQUIT and SIGINT (then the signal is raised again, so the exit status says
// so); the mouse is enabled for wheel events and clicks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "modules/module_loader.hpp"
#include "tui/cell_grid.hpp"
#include "tui/input.hpp"

namespace runmon::tui {

class Terminal {
 public:
  virtual ~Terminal() = default;
  virtual int width() const = 0;
  virtual int height() const = 0;
  // Shows `frame` (sized to the terminal; cells outside are ignored, missing ones blank).
  virtual void Draw(const CellGrid& frame) = 0;
  // Waits up to `timeout_ms` (0: just polls) for an event; nullopt when none came.
  virtual std::optional<InputEvent> Read(int timeout_ms) = 0;
};

// Starts ncursesw on the controlling terminal (stdin/stdout must be a terminal). Fails with a message when
// they are not, or when the terminal cannot be set up (TERM unknown).
Result<std::unique_ptr<Terminal>> StartCursesTerminal();

// The terminal module, runmon-modules/terminal.so (terminal.cpp and terminal_module.cpp): the runmon
// executable starts the terminal through it and so never links ncursesw.
struct TerminalModule {
  static constexpr std::string_view kModuleName = "terminal";
  static constexpr const char* kModuleEntry = "runmon_terminal_module";
  static constexpr std::uint32_t kModuleAbi = 1;
  ModuleHeader header;
  Result<std::unique_ptr<Terminal>> (*start)();
};

}  // namespace runmon::tui
