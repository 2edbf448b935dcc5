// The table of the fake modules that module_loader_test loads (fake_module.cpp, built twice: with the
// abi the test expects and with another).
#pragma once

#include <cstdint>
#include <string_view>

#include "modules/module_loader.hpp"

namespace runmon::testing {

struct FakeModule {
  static constexpr std::string_view kModuleName = "fake";
  static constexpr const char* kModuleEntry = "runmon_fake_module";
  static constexpr std::uint32_t kModuleAbi = 7;
  ModuleHeader header;
  int (*answer)();
};

}  // namespace runmon::testing
