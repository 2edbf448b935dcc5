// A fake module for module_loader_test: its entry returns a FakeModule table whose abi is FAKE_MODULE_ABI
// (the expected one, or another to stand for a module from another build) and counts the entry's calls.
#include "fake_module_table.hpp"

namespace {

int Answer() {
  return 42;
}

}  // namespace

extern "C" const void* runmon_fake_module() {
  using runmon::testing::FakeModule;
  static const FakeModule table{
      .header = {.abi = FAKE_MODULE_ABI, .table_size = sizeof(FakeModule)},
      .answer = &Answer,
  };
  return &table;
}
