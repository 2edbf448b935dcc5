// runmon's optional parts, loaded when a command first needs them. The HTTP servers (cpp-httplib, which
// brings OpenSSL and Brotli) and the terminal (ncursesw) are built as modules, runmon-modules/<name>.so
// beside the executable, so that `runmon run` and `runmon sample` never map those libraries: each costs
// resident memory at start whether it is used or not. The executable exports the runmon symbols its modules
// call (that code is linked into it whole: cmake/RunmonModules.cmake), so a module holds only the code that
// needs its library.
//
// A module defines one C symbol, its entry, returning a table of functions (ModuleTable below). The table's
// abi must equal the one the executable was built with; a module from another build is refused with that
// said, not called.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace runmon {

// The first member of every module's table.
struct ModuleHeader {
  std::uint32_t abi = 0;         // the table's layout version
  std::uint32_t table_size = 0;  // sizeof the table, a second check of the layout
};

// Where modules are looked for: <directory of the executable>/runmon-modules (a build tree), else
// <directory of the executable>/../lib/runmon/modules (installed: cmake/RunmonInstall.cmake).
std::filesystem::path ModuleDirectory();

// Opens `directory`/`name`.so (once per process; kept open) and calls its entry `entry`, a function
// `const void* entry()`. Errors name the file and what failed: a missing file, a missing entry, a wrong abi.
Result<const void*> LoadModuleTable(const std::filesystem::path& directory, std::string_view name,
                                    const char* entry, std::uint32_t abi, std::uint32_t table_size);

// The typed form: Table starts with a ModuleHeader and declares kModuleName, kModuleEntry and kModuleAbi.
template <typename Table>
Result<const Table*> LoadModule(const std::filesystem::path& directory = ModuleDirectory()) {
  auto table = LoadModuleTable(directory, Table::kModuleName, Table::kModuleEntry, Table::kModuleAbi,
                               static_cast<std::uint32_t>(sizeof(Table)));
  if (!table) return Error{table.error()};
  return static_cast<const Table*>(*table);
}

}  // namespace runmon
