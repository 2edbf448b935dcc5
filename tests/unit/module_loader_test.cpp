// modules/module_loader: a module in a directory loads once and its table is used; a missing file, a file
// without the entry and a module of another interface version are refused with words naming them.
#include "modules/module_loader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fake_module_table.hpp"

namespace runmon {
namespace {

using testing::FakeModule;

const std::filesystem::path kGood = FAKE_MODULES_DIR "/good";
const std::filesystem::path kOtherBuild = FAKE_MODULES_DIR "/other-build";

TEST(ModuleLoader, AModuleLoadsAndItsTableIsUsed) {
  auto module = LoadModule<FakeModule>(kGood);
  ASSERT_TRUE(module) << module.error();
  EXPECT_EQ((*module)->answer(), 42);
  auto again = LoadModule<FakeModule>(kGood);
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(*again, *module);  // the same table: opened once
}

TEST(ModuleLoader, AMissingModuleIsNamed) {
  auto module = LoadModule<FakeModule>(FAKE_MODULES_DIR "/nowhere");
  ASSERT_FALSE(module);
  EXPECT_NE(module.error().find("the fake module cannot be loaded"), std::string::npos) << module.error();
  EXPECT_NE(module.error().find("nowhere/fake.so"), std::string::npos) << module.error();
}

TEST(ModuleLoader, AFileWithoutTheEntryIsRefused) {
  auto table =
      LoadModuleTable(kGood, "fake", "runmon_no_such_entry", FakeModule::kModuleAbi, sizeof(FakeModule));
  ASSERT_FALSE(table);
  EXPECT_NE(table.error().find("has no entry runmon_no_such_entry"), std::string::npos) << table.error();
}

TEST(ModuleLoader, AModuleOfAnotherBuildIsRefused) {
  auto module = LoadModule<FakeModule>(kOtherBuild);
  ASSERT_FALSE(module);
  EXPECT_NE(module.error().find("is from another build of runmon (interface 8/"), std::string::npos)
      << module.error();
}

TEST(ModuleLoader, AFileThatIsNotASharedObjectIsRefused) {
  const auto directory = std::filesystem::temp_directory_path() / "runmon-module-loader-test";
  std::filesystem::create_directories(directory);
  std::ofstream(directory / "fake.so") << "not an ELF file\n";
  auto module = LoadModule<FakeModule>(directory);
  std::filesystem::remove_all(directory);
  ASSERT_FALSE(module);
  EXPECT_NE(module.error().find("the fake module cannot be loaded"), std::string::npos) << module.error();
}

TEST(ModuleLoader, TheDirectoryIsBesideTheExecutable) {
  const auto executable = std::filesystem::read_symlink("/proc/self/exe");
  EXPECT_EQ(ModuleDirectory(), executable.parent_path() / "runmon-modules");
}

}  // namespace
}  // namespace runmon
