// The libtpu SDK loader against the fake libtpu.so (tests/fakes/libtpu): a table refused for each check
// (null, its header, each required slot null) with the reason and no slot called; a misaligned table
// read; the VERS_1.0 entry taken where the plain symbol is another version's; the client refused when
// CreateClient fails or gives none; metrics read as scripted (the value shapes of W&B's tests,
// ../shared/fixtures/tpu/libtpu_sdk_value_examples.json, copied here), invalid UTF-8 kept as bytes; libtpu's
// errors turned into their messages (cut at 64 KiB, "unknown error" when empty) and destroyed; every cap at
// its bound and one past it; the client destroyed with the SDK. The fake's counters prove after every test
// that nothing leaked and no handle was misused. Then FindLibtpu on temporary trees: the environment's three
// variables (file, directory, missing, directory without libtpu.so, their precedence) and the system search
// in its order, newest python first.
#include <dlfcn.h>
#include <stdlib.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectors/tpu/libtpu_sdk.hpp"
#include "fakes/libtpu/fake_libtpu_counters.h"
#include "support/temp_dir.hpp"

namespace runmon::tpu {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::TempDir;
using testing::ElementsAre;
using testing::HasSubstr;

constexpr std::size_t kCap = 64 * 1024;

// The loader's own dlopen of the same file shares this handle.
void* FakeHandle(const char* library) {
  void* handle = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(::dlerror());
  return handle;
}

FakeLibtpuCounters Counters(const char* library = FAKE_LIBTPU_PATH) {
  const auto read =
      reinterpret_cast<FakeLibtpuCountersFunction>(::dlsym(FakeHandle(library), "fake_libtpu_counters"));
  if (read == nullptr) throw std::runtime_error(std::string(library) + " has no fake_libtpu_counters");
  FakeLibtpuCounters counters{};
  read(&counters);
  return counters;
}

// Metrics shaped as in W&B's SDK value examples.
json GoodScenario() {
  return {
      {"tensorcore_util", {{"description", ""}, {"values", {"75.5", "80.2"}}}},
      {"hlo_queue_size", {{"description", ""}, {"values", {"tensor_core-0: 3", "tensor_core-1: 7"}}}},
      {"hlo_execution_timing",
       {{"description", "mean, p50, p90, p95, p999"},
        {"values", {"program_main, 100.0, 50.0, 90.0, 95.0, 999.0"}}}},
      {"grpc_tcp_delivery_rate",
       {{"description", "p50, p90, p95, p999"}, {"values", {"100.0", "200.0", "300.0", "400.0"}}}},
      {"ici_link_health", {{"description", "link health"}, {"values", json::array()}}},
  };
}

class LibtpuSdkTest : public testing::Test {
 protected:
  void SetUp() override { before_ = Counters(); }

  // After every test: each client and error handle the loader got was destroyed, once, and no slot it
  // does not use was called.
  void TearDown() override {
    const FakeLibtpuCounters after = Counters();
    EXPECT_EQ(after.clients_created - before_.clients_created,
              after.clients_destroyed - before_.clients_destroyed);
    EXPECT_EQ(after.errors_created - before_.errors_created,
              after.errors_destroyed - before_.errors_destroyed);
    EXPECT_EQ(after.bad_handles, before_.bad_handles);
    EXPECT_EQ(after.unexpected_slot_calls, before_.unexpected_slot_calls);
  }

  void UseScenario(const json& scenario) {
    const fs::path file = dir_.path() / ("scenario" + std::to_string(scenarios_++) + ".json");
    std::ofstream(file) << scenario.dump();
    ASSERT_EQ(::setenv("RUNMON_FAKE_LIBTPU_SCENARIO", file.c_str(), 1), 0);
  }

  std::unique_ptr<LibtpuSdk> Open(const json& scenario) {
    UseScenario(scenario);
    auto sdk = OpenLibtpuSdk(FAKE_LIBTPU_PATH);
    if (!sdk) ADD_FAILURE() << sdk.error();
    return sdk ? std::move(sdk).value() : nullptr;
  }

  // The error OpenLibtpuSdk gives for `scenario`.
  std::string Refusal(const json& scenario) {
    UseScenario(scenario);
    auto sdk = OpenLibtpuSdk(FAKE_LIBTPU_PATH);
    if (sdk) {
      ADD_FAILURE() << "the SDK was opened";
      return "";
    }
    return sdk.error();
  }

  // What one metric read from `scenario` gives.
  Result<SdkMetricValues> ReadOne(const json& scenario, const std::string& name) {
    auto sdk = Open(scenario);
    if (sdk == nullptr) return Error{"not opened"};
    return sdk->ReadMetric(name);
  }

  std::string ReadError(const json& scenario, const std::string& name) {
    auto read = ReadOne(scenario, name);
    if (read) {
      ADD_FAILURE() << name << " was read";
      return "";
    }
    return read.error();
  }

  FakeLibtpuCounters before_{};
  TempDir dir_{"runmon-libtpu-sdk"};
  int scenarios_ = 0;
};

TEST_F(LibtpuSdkTest, ReadsTheScriptedMetricsAndDestroysTheClientAtTheEnd) {
  auto sdk = Open(GoodScenario());
  ASSERT_NE(sdk, nullptr);
  EXPECT_EQ(Counters().clients_created - before_.clients_created, 1u);

  auto gauge = sdk->ReadMetric("tensorcore_util");
  ASSERT_TRUE(gauge) << gauge.error();
  EXPECT_EQ(gauge->description, "");
  EXPECT_THAT(gauge->values, ElementsAre("75.5", "80.2"));

  auto queue = sdk->ReadMetric("hlo_queue_size");
  ASSERT_TRUE(queue) << queue.error();
  EXPECT_THAT(queue->values, ElementsAre("tensor_core-0: 3", "tensor_core-1: 7"));

  auto timing = sdk->ReadMetric("hlo_execution_timing");
  ASSERT_TRUE(timing) << timing.error();
  EXPECT_EQ(timing->description, "mean, p50, p90, p95, p999");
  EXPECT_THAT(timing->values, ElementsAre("program_main, 100.0, 50.0, 90.0, 95.0, 999.0"));

  auto rate = sdk->ReadMetric("grpc_tcp_delivery_rate");
  ASSERT_TRUE(rate) << rate.error();
  EXPECT_EQ(rate->description, "p50, p90, p95, p999");
  EXPECT_THAT(rate->values, ElementsAre("100.0", "200.0", "300.0", "400.0"));

  auto empty = sdk->ReadMetric("ici_link_health");
  ASSERT_TRUE(empty) << empty.error();
  EXPECT_EQ(empty->description, "link health");
  EXPECT_TRUE(empty->values.empty());

  EXPECT_EQ(Counters().clients_destroyed, before_.clients_destroyed);
  sdk.reset();
  EXPECT_EQ(Counters().clients_destroyed - before_.clients_destroyed, 1u);
}

TEST_F(LibtpuSdkTest, TakesTheVers10EntryWhereThePlainSymbolIsAnotherVersion) {
  // In this library a plain dlsym finds GetLibtpuSdkApi@@VERS_2.0, which gives no table.
  const char* library = FAKE_LIBTPU_TWO_VERSIONS_PATH;
  void* handle = FakeHandle(library);
  void* vers_1_0 = ::dlvsym(handle, "GetLibtpuSdkApi", "VERS_1.0");
  void* plain = ::dlsym(handle, "GetLibtpuSdkApi");
  ASSERT_NE(vers_1_0, nullptr);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(vers_1_0, plain);

  const FakeLibtpuCounters before = Counters(library);
  UseScenario(GoodScenario());
  auto sdk = OpenLibtpuSdk(library);
  ASSERT_TRUE(sdk) << sdk.error();
  auto read = (*sdk)->ReadMetric("tensorcore_util");
  ASSERT_TRUE(read) << read.error();
  EXPECT_THAT(read->values, ElementsAre("75.5", "80.2"));
  sdk.value().reset();
  const FakeLibtpuCounters after = Counters(library);
  EXPECT_EQ(after.api_calls - before.api_calls, 1u);
  EXPECT_EQ(after.clients_created - before.clients_created, 1u);
  EXPECT_EQ(after.clients_destroyed - before.clients_destroyed, 1u);
  EXPECT_EQ(after.bad_handles, before.bad_handles);
}

TEST_F(LibtpuSdkTest, RefusesANullTableWithoutCallingASlot) {
  const std::string error = Refusal({{"null_api", true}});
  EXPECT_THAT(error, HasSubstr(FAKE_LIBTPU_PATH));
  EXPECT_THAT(error, HasSubstr("GetLibtpuSdkApi returned a null table"));
  EXPECT_EQ(Counters().api_calls - before_.api_calls, 1u);
  EXPECT_EQ(Counters().slot_calls, before_.slot_calls);
}

TEST_F(LibtpuSdkTest, RefusesAnUnexpectedHeaderWithoutCallingASlot) {
  for (const auto& [word0, word1] : std::vector<std::pair<int, int>>{{1, 1}, {0, 0}, {0, 2}, {1, 0}}) {
    const std::string error = Refusal({{"header", {word0, word1}}});
    EXPECT_THAT(error, HasSubstr(fmt::format("unexpected table header {} {} (expected 0 1)", word0, word1)));
  }
  EXPECT_EQ(Counters().slot_calls, before_.slot_calls);
  EXPECT_EQ(Counters().clients_created, before_.clients_created);
}

TEST_F(LibtpuSdkTest, RefusesEachNullRequiredSlotWithoutCallingASlot) {
  const std::vector<std::pair<std::string, std::string>> slots{
      {"ErrorMessage", "0x8"},    {"DestroyError", "0x10"}, {"CreateClient", "0x20"},
      {"DestroyClient", "0x28"},  {"GetMetric", "0x50"},    {"GetMetricDescription", "0x58"},
      {"GetMetricValues", "0x60"}};
  for (const auto& [slot, offset] : slots) {
    json scenario = GoodScenario();
    scenario["null_slot"] = slot;
    EXPECT_THAT(Refusal(scenario), HasSubstr("required slot " + slot + " at offset " + offset + " is null"));
  }
  EXPECT_EQ(Counters().slot_calls, before_.slot_calls);
  EXPECT_EQ(Counters().clients_created, before_.clients_created);
}

TEST_F(LibtpuSdkTest, ReadsATableAtAnOddAddress) {
  json scenario = GoodScenario();
  scenario["unaligned_table"] = true;
  auto read = ReadOne(scenario, "tensorcore_util");
  ASSERT_TRUE(read) << read.error();
  EXPECT_THAT(read->values, ElementsAre("75.5", "80.2"));
}

TEST_F(LibtpuSdkTest, ARelativePathIsTheWorkingDirectorysFile) {
  // A copy under a name of its own: dlopen would take a bare name matching a loaded library's for it.
  fs::copy_file(FAKE_LIBTPU_PATH, dir_.path() / "libtpu-relative.so");
  const fs::path before = fs::current_path();
  fs::current_path(dir_.path());
  UseScenario(GoodScenario());
  auto sdk = OpenLibtpuSdk("libtpu-relative.so");
  fs::current_path(before);
  ASSERT_TRUE(sdk) << sdk.error();
  EXPECT_TRUE((*sdk)->ReadMetric("tensorcore_util"));
}

TEST_F(LibtpuSdkTest, RefusesAFileWithoutTheEntryOrThatCannotBeLoaded) {
  // libm, as this process has it loaded.
  Dl_info libm{};
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(static_cast<double (*)(double)>(::cos)), &libm), 0);
  ASSERT_NE(libm.dli_fname, nullptr);
  EXPECT_THAT(OpenLibtpuSdk(libm.dli_fname).error(), HasSubstr("no GetLibtpuSdkApi exported"));
  const fs::path missing = dir_.path() / "libtpu.so";
  const auto error = OpenLibtpuSdk(missing).error();
  EXPECT_THAT(error, HasSubstr(missing.string()));
  EXPECT_THAT(error, HasSubstr("cannot load"));
}

TEST_F(LibtpuSdkTest, CreateClientFailingIsItsMessageAndTheErrorIsDestroyed) {
  json scenario = GoodScenario();
  scenario["create_client_error"] = "FAILED_PRECONDITION: the TPU is held by another process";
  EXPECT_THAT(Refusal(scenario),
              HasSubstr("CreateClient: FAILED_PRECONDITION: the TPU is held by another process"));
  EXPECT_EQ(Counters().errors_created - before_.errors_created, 1u);
  EXPECT_EQ(Counters().errors_destroyed - before_.errors_destroyed, 1u);
  EXPECT_EQ(Counters().clients_created, before_.clients_created);
}

TEST_F(LibtpuSdkTest, RefusesANullClientAndDestroysNothing) {
  json scenario = GoodScenario();
  scenario["null_client"] = true;
  EXPECT_THAT(Refusal(scenario), HasSubstr("CreateClient gave a null client"));
  EXPECT_EQ(Counters().slot_calls - before_.slot_calls, 1u);
  EXPECT_EQ(Counters().clients_destroyed, before_.clients_destroyed);
}

TEST_F(LibtpuSdkTest, AMetricErrorIsItsMessageAndIsDestroyed) {
  json scenario = GoodScenario();
  scenario["duty_cycle_pct"] = {{"error", "NOT_READY: no program is running"}};
  auto sdk = Open(scenario);
  ASSERT_NE(sdk, nullptr);
  auto read = sdk->ReadMetric("duty_cycle_pct");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error(), "GetMetric(duty_cycle_pct): NOT_READY: no program is running");
  EXPECT_EQ(Counters().errors_created - before_.errors_created, 1u);
  EXPECT_EQ(Counters().errors_destroyed - before_.errors_destroyed, 1u);
  // The client still answers.
  auto gauge = sdk->ReadMetric("tensorcore_util");
  ASSERT_TRUE(gauge) << gauge.error();
  EXPECT_THAT(gauge->values, ElementsAre("75.5", "80.2"));
}

TEST_F(LibtpuSdkTest, AnUnknownMetricIsLibtpusError) {
  EXPECT_EQ(ReadError(GoodScenario(), "tpu_throttle_score"),
            "GetMetric(tpu_throttle_score): NOT_FOUND: no metric tpu_throttle_score");
}

TEST_F(LibtpuSdkTest, DescriptionAndValuesErrorsAreTheirMessages) {
  json scenario = GoodScenario();
  scenario["hbm_capacity_total"] = {{"description_error", "INTERNAL: no description"}};
  scenario["hbm_capacity_usage"] = {{"values_error", "INTERNAL: no values"}};
  EXPECT_EQ(ReadError(scenario, "hbm_capacity_total"),
            "GetMetricDescription(hbm_capacity_total): INTERNAL: no description");
  EXPECT_EQ(ReadError(scenario, "hbm_capacity_usage"),
            "GetMetricValues(hbm_capacity_usage): INTERNAL: no values");
  EXPECT_EQ(Counters().errors_destroyed - before_.errors_destroyed, 2u);
}

TEST_F(LibtpuSdkTest, AnEmptyErrorMessageIsUnknownError) {
  json scenario = GoodScenario();
  scenario["duty_cycle_pct"] = {{"error", ""}};
  EXPECT_EQ(ReadError(scenario, "duty_cycle_pct"), "GetMetric(duty_cycle_pct): unknown error");
}

TEST_F(LibtpuSdkTest, AnErrorMessageIsCutAt64KiB) {
  json scenario = GoodScenario();
  scenario["duty_cycle_pct"] = {{"error", std::string(kCap + 100, 'e')}};
  EXPECT_EQ(ReadError(scenario, "duty_cycle_pct"), "GetMetric(duty_cycle_pct): " + std::string(kCap, 'e'));
}

TEST_F(LibtpuSdkTest, ADescriptionOf64KiBIsReadAndOneByteMoreRefused) {
  json scenario = GoodScenario();
  scenario["description_len"] = kCap;
  auto read = ReadOne(scenario, "tensorcore_util");
  ASSERT_TRUE(read) << read.error();
  EXPECT_EQ(read->description, std::string(kCap, 'd'));

  scenario["description_len"] = kCap + 1;
  EXPECT_EQ(ReadError(scenario, "tensorcore_util"),
            "GetMetricDescription(tensorcore_util) gave 65537 bytes, over the 65536 byte cap");
}

TEST_F(LibtpuSdkTest, A4096ValueListIsReadAndOneValueMoreRefused) {
  json scenario = GoodScenario();
  scenario["value_count"] = 4096;
  auto read = ReadOne(scenario, "tensorcore_util");
  ASSERT_TRUE(read) << read.error();
  ASSERT_EQ(read->values.size(), 4096u);
  EXPECT_EQ(read->values[0], "75.5");
  EXPECT_EQ(read->values[4095], "80.2");

  scenario["value_count"] = 4097;
  EXPECT_EQ(ReadError(scenario, "tensorcore_util"),
            "GetMetricValues(tensorcore_util) gave 4097 values, over the 4096 value cap");
}

TEST_F(LibtpuSdkTest, RefusesANullValueArrayWithACount) {
  json scenario = GoodScenario();
  scenario["null_values_with_count"] = true;
  EXPECT_EQ(ReadError(scenario, "tensorcore_util"),
            "GetMetricValues(tensorcore_util) gave a null value array of 2 values");
  // A null array with no values is simply no values.
  auto empty = ReadOne(GoodScenario(), "ici_link_health");
  ASSERT_TRUE(empty) << empty.error();
  EXPECT_TRUE(empty->values.empty());
}

TEST_F(LibtpuSdkTest, ANullEntryIsAnEmptyValue) {
  json scenario = GoodScenario();
  scenario["null_entry_at"] = 1;
  auto read = ReadOne(scenario, "tensorcore_util");
  ASSERT_TRUE(read) << read.error();
  EXPECT_THAT(read->values, ElementsAre("75.5", ""));
}

TEST_F(LibtpuSdkTest, AValueOf64KiBIsReadAndOneWithoutANulWithinIsRefused) {
  json scenario = GoodScenario();
  scenario["long_value"] = {{"values", {std::string(kCap, 'v')}}};
  auto read = ReadOne(scenario, "long_value");
  ASSERT_TRUE(read) << read.error();
  EXPECT_THAT(read->values, ElementsAre(std::string(kCap, 'v')));

  scenario["unterminated_value"] = true;
  EXPECT_EQ(ReadError(scenario, "tensorcore_util"),
            "GetMetricValues(tensorcore_util) value 2 has no end within the 65536 byte cap");
}

TEST_F(LibtpuSdkTest, KeepsInvalidUtf8AsBytes) {
  json scenario = GoodScenario();
  scenario["hlo_queue_size"] = {{"values_hex", {"ff41", "c328"}}};
  auto read = ReadOne(scenario, "hlo_queue_size");
  ASSERT_TRUE(read) << read.error();
  EXPECT_THAT(read->values, ElementsAre(std::string("\xff\x41"), std::string("\xc3\x28")));
}

TEST_F(LibtpuSdkTest, RefusesANameWithANulByteWithoutCallingASlot) {
  auto sdk = Open(GoodScenario());
  ASSERT_NE(sdk, nullptr);
  const unsigned long long slot_calls = Counters().slot_calls;
  auto read = sdk->ReadMetric(std::string("tensorcore_util\0x", 17));
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error(), HasSubstr("NUL"));
  EXPECT_EQ(Counters().slot_calls, slot_calls);
}

TEST_F(LibtpuSdkTest, AnOpenSdkKeepsItsTableWhenALaterOneIsRefused) {
  auto first = Open(GoodScenario());
  ASSERT_NE(first, nullptr);
  json broken = GoodScenario();
  broken["null_slot"] = "GetMetric";
  EXPECT_THAT(Refusal(broken), HasSubstr("required slot GetMetric"));
  auto read = first->ReadMetric("tensorcore_util");
  ASSERT_TRUE(read) << read.error();
  EXPECT_THAT(read->values, ElementsAre("75.5", "80.2"));
}

// ---- FindLibtpu -----------------------------------------------------------------------------------------

class FindLibtpuTest : public testing::Test {
 protected:
  // A regular file at `path` (its directories made).
  fs::path Touch(const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "ELF";
    return path;
  }
  fs::path Root() const { return dir_.path() / "root"; }
  fs::path Home() const { return dir_.path() / "home/user"; }

  TempDir dir_{"runmon-find-libtpu"};
};

TEST_F(FindLibtpuTest, AVariableNamingAFileIsThatFile) {
  const fs::path file = Touch(dir_.path() / "custom/libtpu-nightly.so");
  EXPECT_EQ(FindLibtpu({{"TPU_LIBRARY_PATH", file.string()}}, false), file);
  EXPECT_EQ(FindLibtpu({{"LIBTPU_PATH", "  " + file.string() + "\n"}}, false), file);
}

TEST_F(FindLibtpuTest, AVariableNamingADirectoryIsItsLibtpu) {
  const fs::path file = Touch(dir_.path() / "wheel/libtpu/libtpu.so");
  EXPECT_EQ(FindLibtpu({{"WANDB_LIBTPU_PATH", file.parent_path().string()}}, false), file);
}

TEST_F(FindLibtpuTest, AVariableNamingNothingUsableIsSkipped) {
  const fs::path file = Touch(dir_.path() / "lib/libtpu.so");
  fs::create_directories(dir_.path() / "empty");
  fs::create_directories(dir_.path() / "dir/libtpu.so");  // a directory named libtpu.so is no library
  for (const fs::path& unusable :
       {dir_.path() / "missing.so", dir_.path() / "empty", dir_.path() / "dir", fs::path("")}) {
    EXPECT_EQ(FindLibtpu({{"WANDB_LIBTPU_PATH", unusable.string()}, {"LIBTPU_PATH", file.string()}}, false),
              file)
        << unusable;
    EXPECT_EQ(FindLibtpu({{"WANDB_LIBTPU_PATH", unusable.string()}}, false), std::nullopt) << unusable;
  }
}

TEST_F(FindLibtpuTest, TheVariablesTakePrecedenceInTheirOrder) {
  const fs::path wandb = Touch(dir_.path() / "wandb/libtpu.so");
  const fs::path tpu_library = Touch(dir_.path() / "tpu_library/libtpu.so");
  const fs::path libtpu = Touch(dir_.path() / "libtpu/libtpu.so");
  std::map<std::string, std::string> environment{{"WANDB_LIBTPU_PATH", wandb.string()},
                                                 {"TPU_LIBRARY_PATH", tpu_library.string()},
                                                 {"LIBTPU_PATH", libtpu.string()}};
  EXPECT_EQ(FindLibtpu(environment, false), wandb);
  environment.erase("WANDB_LIBTPU_PATH");
  EXPECT_EQ(FindLibtpu(environment, false), tpu_library);
  environment.erase("TPU_LIBRARY_PATH");
  EXPECT_EQ(FindLibtpu(environment, false), libtpu);
  environment.erase("LIBTPU_PATH");
  EXPECT_EQ(FindLibtpu(environment, false), std::nullopt);
}

TEST_F(FindLibtpuTest, TheSystemDirectoriesInOrderAfterTheVariables) {
  const std::map<std::string, std::string> environment{{"HOME", Home().string()}};
  // Each candidate, first to last; the test removes them one after another.
  const std::vector<fs::path> candidates{
      Touch(Root() / "lib/libtpu.so"),
      Touch(Root() / "usr/lib/libtpu.so"),
      Touch(Root() / "usr/local/lib/libtpu.so"),
      Touch(Home() / ".local/lib/python3.11/site-packages/libtpu/libtpu.so"),
      Touch(Home() / ".local/lib/python3.10/site-packages/libtpu/libtpu.so"),
      Touch(Home() / ".local/lib/python3.9/site-packages/libtpu/libtpu.so"),
      Touch(Home() / ".venv/lib/python3.12/site-packages/libtpu/libtpu.so"),
      Touch(Root() / "usr/local/lib/python3.11/dist-packages/libtpu/libtpu.so"),
      Touch(Root() / "usr/local/lib/python3.10/dist-packages/libtpu/libtpu.so"),
      Touch(Root() / "usr/local/lib/python3.10/dist-packages/torch_xla/lib/libtpu.so"),
  };
  const fs::path variable = Touch(dir_.path() / "variable/libtpu.so");
  std::map<std::string, std::string> with_variable = environment;
  with_variable["LIBTPU_PATH"] = variable.string();
  EXPECT_EQ(FindLibtpu(with_variable, true, Root()), variable);

  for (const fs::path& candidate : candidates) {
    EXPECT_EQ(FindLibtpu(environment, true, Root()), candidate);
    fs::remove(candidate);
  }
  EXPECT_EQ(FindLibtpu(environment, true, Root()), std::nullopt);
}

TEST_F(FindLibtpuTest, TheSystemSearchTakesALinkToAFileAndSkipsADirectoryNamedLibtpu) {
  const fs::path file = Touch(dir_.path() / "real/libtpu.so.0.0.39");
  fs::create_directories(Root() / "lib/libtpu.so");
  fs::create_directories(Root() / "usr/lib");
  fs::create_symlink(file, Root() / "usr/lib/libtpu.so");
  EXPECT_EQ(FindLibtpu({}, true, Root()), Root() / "usr/lib/libtpu.so");
}

TEST_F(FindLibtpuTest, WithoutTheSystemSearchOnlyTheVariablesCount) {
  Touch(Root() / "lib/libtpu.so");
  Touch(Home() / ".local/lib/python3.11/site-packages/libtpu/libtpu.so");
  EXPECT_EQ(FindLibtpu({{"HOME", Home().string()}}, false, Root()), std::nullopt);
  const fs::path variable = Touch(dir_.path() / "variable/libtpu.so");
  EXPECT_EQ(FindLibtpu({{"HOME", Home().string()}, {"TPU_LIBRARY_PATH", variable.string()}}, false, Root()),
            variable);
}

TEST_F(FindLibtpuTest, WithoutHomeItsDirectoriesAreSkipped) {
  const fs::path local = Touch(Home() / ".local/lib/python3.11/site-packages/libtpu/libtpu.so");
  EXPECT_EQ(FindLibtpu({}, true, Root()), std::nullopt);
  EXPECT_EQ(FindLibtpu({{"HOME", ""}}, true, Root()), std::nullopt);
  EXPECT_EQ(FindLibtpu({{"HOME", Home().string()}}, true, Root()), local);
  const fs::path venv = Touch(Home() / ".venv/lib/python3.11/site-packages/libtpu/libtpu.so");
  fs::remove(local);
  EXPECT_EQ(FindLibtpu({{"HOME", Home().string()}}, true, Root()), venv);
}

TEST_F(FindLibtpuTest, TheFakeLibraryIsFoundByItsDirectory) {
  const fs::path library(FAKE_LIBTPU_PATH);
  const auto found = FindLibtpu({{"WANDB_LIBTPU_PATH", library.parent_path().string()}}, false);
  ASSERT_TRUE(found);
  EXPECT_TRUE(fs::equivalent(*found, library));
}

}  // namespace
}  // namespace runmon::tpu
