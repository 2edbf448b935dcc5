// The terminal module's entry (see TerminalModule in terminal.hpp and modules/module_loader.hpp).
#include "tui/terminal.hpp"

extern "C" const void* runmon_terminal_module() {
  using runmon::tui::TerminalModule;
  static const TerminalModule table{
      .header = {.abi = TerminalModule::kModuleAbi, .table_size = sizeof(TerminalModule)},
      .start = &runmon::tui::StartCursesTerminal,
  };
  return &table;
}
