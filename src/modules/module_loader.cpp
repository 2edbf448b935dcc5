// Finds and opens runmon's modules (see module_loader.hpp). Opened handles are never closed: code of a
// module may still run in threads it started (a server) until the process exits.
#include "modules/module_loader.hpp"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <system_error>

#include <fmt/format.h>

namespace runmon {
namespace {

std::mutex& LoaderMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

std::filesystem::path ModuleDirectory() {
  std::error_code error;
  // The executable's own path, whatever argv[0] or the working directory say.
  const auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "runmon-modules";
  // A build tree's runmon-modules beside the executable, else an installed tree's lib/runmon/modules.
  const auto beside = executable.parent_path() / "runmon-modules";
  const auto installed = executable.parent_path().parent_path() / "lib" / "runmon" / "modules";
  if (!std::filesystem::is_directory(beside, error) && std::filesystem::is_directory(installed, error)) {
    return installed;
  }
  return beside;
}

Result<const void*> LoadModuleTable(const std::filesystem::path& directory, std::string_view name,
                                    const char* entry, std::uint32_t abi, std::uint32_t table_size) {
  const std::filesystem::path file = directory / fmt::format("{}.so", name);
  const std::lock_guard lock(LoaderMutex());
  static std::map<std::string, void*> opened;
  void*& handle = opened[file.string()];
  if (handle == nullptr) {
    dlerror();
    handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return Error{fmt::format("the {} module cannot be loaded: {}", name,
                               why != nullptr ? why : file.string() + ": not loadable")};
    }
  }
  using EntryFunction = const void* (*)();
  auto* function = reinterpret_cast<EntryFunction>(dlsym(handle, entry));
  if (function == nullptr) {
    return Error{
        fmt::format("the {} module {} has no entry {} (not a runmon module?)", name, file.string(), entry)};
  }
  const void* table = function();
  const auto* header = static_cast<const ModuleHeader*>(table);
  if (header == nullptr || header->abi != abi || header->table_size != table_size) {
    return Error{fmt::format(
        "the {} module {} is from another build of runmon (interface {}/{}, this runmon needs {}/{})", name,
        file.string(), header != nullptr ? header->abi : 0, header != nullptr ? header->table_size : 0, abi,
        table_size)};
  }
  return table;
}

}  // namespace runmon
