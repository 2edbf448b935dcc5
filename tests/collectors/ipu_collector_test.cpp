// The ipu family with runmon's gcipuinfo helper run by a real python3 against the fake gcipuinfo module
// (tests/fakes/gcipuinfo, on the injected PYTHONPATH) and the fake gc-info (tests/fakes/gc_info): the keys
// of the run's devices on first sight and after, every device without a monitored process, the
// metadata, getDevices raising or hanging (the tick is bounded, a hung helper is ended and started again),
// a helper that exits mid-run, a constructor that raises, the module missing (the family ends quietly;
// runmon info says why), gc-info in its place, and no python3 at all.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectors/builtin.hpp"
#include "collectors/ipu/ipu_collector.hpp"
#include "fixture_tree.hpp"
#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"

namespace runmon {
namespace {

namespace fs = std::filesystem;
using test::Collected;
using test::CollectTick;

const CollectorFamily& Ipu() {
  for (const CollectorFamily* family : CollectorFamilies()) {
    if (family->name == "ipu") return *family;
  }
  ADD_FAILURE() << "no ipu family";
  return *CollectorFamilies().front();
}

fs::path FakesDir() {
  return fs::path(RUNMON_FIXTURES_DIR).parent_path() / "fakes";
}

std::string IpuFixture(const std::string& name) {
  return (fs::path(RUNMON_FIXTURES_DIR) / "ipu" / name).string();
}

// The keys of ipu.{id}.* in a batch, by device.
std::set<std::string> Devices(const Collected& collected) {
  std::set<std::string> devices;
  for (const auto& key : collected.Keys()) devices.insert(key.substr(0, key.find('.', 4)));
  return devices;
}

// The first tick with something to show (keys or an error): python3's start may outlast a tick's wait,
// and until the helper has said anything a tick is quietly empty.
Collected FirstHeard(Collector& collector) {
  Collected collected;
  testing::WaitUntil(
      [&] {
        collected = CollectTick(collector, 0);
        return !collected.status.ok() || !collected.batch.empty();
      },
      std::chrono::milliseconds(20'000));
  return collected;
}

class IpuFamily : public ::testing::Test {
 protected:
  // A context whose environment has the fakes on its paths: the module (unless `with_module` is false),
  // gc-info when asked for, /usr/bin and /bin for python3, sh, cat and sed.
  CollectorContext Context(const std::string& fixture, const std::string& behaviour = "normal",
                           bool with_module = true, bool with_gc_info = false,
                           std::optional<long> pid = static_cast<long>(::getpid())) {
    CollectorContext ctx;
    ctx.paths = HostPaths::System();
    ctx.pid = pid;
    ctx.settings.interval_seconds = 1;
    std::string path = "/usr/bin:/bin";
    if (with_gc_info) path = (FakesDir() / "gc_info").string() + ":" + path;
    ctx.environment = {{"PATH", path},
                       {"RUNMON_FAKE_GCIPUINFO_FIXTURE", IpuFixture(fixture)},
                       {"RUNMON_FAKE_GCIPUINFO_PID", std::to_string(::getpid())},
                       {"RUNMON_FAKE_GCIPUINFO_BEHAVIOUR", behaviour},
                       {"RUNMON_FAKE_GCIPUINFO_LOG", log_.string()},
                       {"RUNMON_FAKE_GC_INFO_DIR", IpuFixture("gc_info")},
                       {"RUNMON_FAKE_GC_INFO_PID", std::to_string(::getpid())}};
    if (with_module) ctx.environment["PYTHONPATH"] = (FakesDir() / "gcipuinfo").string();
    ctx.warn = [this](const std::string& message) {
      std::lock_guard lock(mutex_);
      warnings_.push_back(message);
    };
    ctx.publish_metadata = [this](const nlohmann::json& meta) { published_.push_back(meta); };
    return ctx;
  }

  std::unique_ptr<Collector> Started(const CollectorContext& ctx) {
    FamilyStart started = Ipu().start(ctx);
    EXPECT_EQ(started.collectors.size(), 1u) << started.absent_reason;
    return started.collectors.empty() ? nullptr : std::move(started.collectors[0]);
  }

  // The fake module's calls of one kind ("construct", "getDevices").
  int Calls(const std::string& kind) const {
    std::ifstream in(log_);
    int calls = 0;
    for (std::string line; std::getline(in, line);) calls += line.starts_with(kind) ? 1 : 0;
    return calls;
  }

  std::vector<std::string> Warnings() {
    std::lock_guard lock(mutex_);
    return warnings_;
  }

  test::TempDir dir_{"runmon-ipu"};
  fs::path log_ = dir_.path() / "gcipuinfo.log";
  std::mutex mutex_;
  std::vector<std::string> warnings_;
  std::vector<nlohmann::json> published_;
};

TEST_F(IpuFamily, TheRunsDeviceInFullOnFirstSightThenItsVariableFields) {
  auto collector = Started(Context("gcipuinfo_getDevices_mock.json"));
  ASSERT_TRUE(collector);
  const Collected t0 = FirstHeard(*collector);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  // W&B's expected first sample (shared/fixtures/ipu_graphcore/README.md), the PID the monitored one.
  std::map<std::string, double> values;
  for (const auto& metric : t0.batch.items()) values[metric.key] = metric.value;
  const std::map<std::string, double> expected = {{"ipu.1.user process id", ::getpid()},
                                                  {"ipu.1.average board temp (C)", 30},
                                                  {"ipu.1.average die temp (C)", 39},
                                                  {"ipu.1.board ipu index", 1},
                                                  {"ipu.1.clock (MHz)", 1300},
                                                  {"ipu.1.id", 1},
                                                  {"ipu.1.ipu power (W)", 120},
                                                  {"ipu.1.ipu utilisation (%)", 21.25},
                                                  {"ipu.1.ipu utilisation (session) (%)", 15.65}};
  EXPECT_EQ(values, expected);
  const Collected t1 = CollectTick(*collector, 1);
  ASSERT_TRUE(t1.status.ok()) << t1.status.error();
  const std::vector<std::string> later = t1.Keys();
  EXPECT_EQ(std::set<std::string>(later.begin(), later.end()),
            (std::set<std::string>{"ipu.1.average board temp (C)", "ipu.1.average die temp (C)",
                                   "ipu.1.clock (MHz)", "ipu.1.ipu power (W)", "ipu.1.ipu utilisation (%)",
                                   "ipu.1.ipu utilisation (session) (%)"}));
  // One helper, set to update on every query, asked once per tick.
  EXPECT_EQ(Calls("construct"), 1);
  EXPECT_EQ(Calls("setUpdateMode True"), 1);
  EXPECT_EQ(Calls("getDevices"), 2);
  EXPECT_TRUE(Warnings().empty()) << Warnings().front();
}

TEST_F(IpuFamily, RealValueFormats) {
  auto collector = Started(Context("gcipuinfo_real_format.json"));
  ASSERT_TRUE(collector);
  const Collected t0 = FirstHeard(*collector);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  EXPECT_EQ(Devices(t0), (std::set<std::string>{"ipu.0"}));  // 1 is idle, 2 another process's
  EXPECT_DOUBLE_EQ(t0["ipu.0.average board temp (C)"], 36.2);
  EXPECT_DOUBLE_EQ(t0["ipu.0.average die temp (C)"], 33.4);
  EXPECT_DOUBLE_EQ(t0["ipu.0.clock (MHz)"], 1300);
  EXPECT_DOUBLE_EQ(t0["ipu.0.ipu utilisation (%)"], 99.96);
  EXPECT_DOUBLE_EQ(t0["ipu.0.link speed (GT/s)"], 16);
  EXPECT_DOUBLE_EQ(t0["ipu.0.total board power (W)"], 99.5);
  EXPECT_DOUBLE_EQ(t0["ipu.0.link correctable error count"], 0);
  EXPECT_DOUBLE_EQ(t0["ipu.0.numa node"], 0);
  for (const char* absent :
       {"ipu.0.ipu power (W)", "ipu.0.ipu power", "ipu.0.firmware version", "ipu.0.pci id",
        "ipu.0.process start time", "ipu.0.parity error threshold interval", "ipu.0.board type"}) {
    EXPECT_FALSE(t0.Has(absent)) << absent;
  }
}

TEST_F(IpuFamily, EveryDeviceWithoutAMonitoredProcess) {
  auto collector = Started(Context("gcipuinfo_real_format.json", "normal", true, false, std::nullopt));
  ASSERT_TRUE(collector);
  const Collected t0 = FirstHeard(*collector);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  EXPECT_EQ(Devices(t0), (std::set<std::string>{"ipu.0", "ipu.1", "ipu.2"}));
  EXPECT_DOUBLE_EQ(t0["ipu.2.ipu power (W)"], 120);
}

TEST_F(IpuFamily, MetadataOnceWithTheFirstAnswer) {
  auto collector = Started(Context("gcipuinfo_getDevices_mock.json"));
  ASSERT_TRUE(collector);
  ASSERT_TRUE(FirstHeard(*collector).status.ok());
  ASSERT_TRUE(CollectTick(*collector, 1).status.ok());
  ASSERT_EQ(published_.size(), 1u);
  const nlohmann::json expected = {{"ipu",
                                    {{"device_count", 3},
                                     {"devices",
                                      {{{"id", "0"}, {"board ipu index", "1"}, {"board type", "C2"}},
                                       {{"id", "1"}, {"board ipu index", "1"}, {"board type", "C2"}},
                                       {{"id", "2"}, {"board ipu index", "1"}, {"board type", "C2"}}}},
                                     {"vendor", "Graphcore"}}}};
  EXPECT_EQ(published_[0], expected);
}

TEST_F(IpuFamily, GetDevicesRaisingIsTheTicksError) {
  auto collector = Started(Context("gcipuinfo_getDevices_mock.json", "raise"));
  ASSERT_TRUE(collector);
  const Collected t0 = FirstHeard(*collector);
  ASSERT_FALSE(t0.status.ok());
  EXPECT_EQ(t0.status.error(), "gcipuinfo: getDevices: RuntimeError: IPU 0 is not responding (fake)");
  EXPECT_TRUE(t0.batch.empty());
  EXPECT_FALSE(collector->Ended());
}

// Most hosts have python3 and no module: until the helper has said so (or anything), a tick without an
// answer is no failure, so a short interval does not report the helper's start as an error.
TEST_F(IpuFamily, ATickWhileTheHelperStartsIsNoError) {
  auto collector = Started(Context("gcipuinfo_getDevices_mock.json", "constructor-hang"));
  ASSERT_TRUE(collector);
  const Collected t0 = CollectTick(*collector, 0);
  EXPECT_TRUE(t0.status.ok()) << t0.status.error();
  EXPECT_TRUE(t0.batch.empty());
  EXPECT_FALSE(collector->Ended());
}

TEST_F(IpuFamily, ConstructorRaisingIsTheTicksError) {
  auto collector = Started(Context("gcipuinfo_getDevices_mock.json", "constructor-raise"));
  ASSERT_TRUE(collector);
  const Collected t0 = FirstHeard(*collector);
  ASSERT_FALSE(t0.status.ok());
  EXPECT_EQ(t0.status.error(), "gcipuinfo: RuntimeError: no IPU driver loaded (fake)");
  EXPECT_FALSE(collector->Ended());
}

// A helper built by hand, with short waits: a hung getDevices bounds each tick, and once it has missed
// three answers for a second the helper is ended and started again, and answers again.
TEST_F(IpuFamily, AHungHelperIsEndedAndStartedAgain) {
  CollectorContext ctx = Context("gcipuinfo_getDevices_mock.json", "hang");
  ctx.environment["RUNMON_FAKE_GCIPUINFO_AFTER"] = "1";  // the first call answers
  IpuOptions options;
  options.paths = ctx.paths;
  options.pid = ctx.pid;
  options.monotonic_seconds = Clocks::System().monotonic_seconds;
  options.wait_seconds = 0.3;
  options.hung_after_seconds = 1.0;
  options.starters.helper = [&ctx](std::shared_ptr<ipu::IpuAnswers> answers) {
    return ipu::StartHelperSource(StartStreamingTool, ToolSearchPath(ctx), ToolEnvironment(ctx.environment),
                                  std::move(answers), ctx.warn);
  };
  auto collector = MakeIpuCollector(std::move(options));
  const Collected first = FirstHeard(*collector);
  ASSERT_TRUE(first.status.ok()) << first.status.error();
  ASSERT_FALSE(first.batch.empty());
  const Collected hung = CollectTick(*collector, 1);
  ASSERT_FALSE(hung.status.ok());
  EXPECT_EQ(hung.status.error(), "gcipuinfo: no answer within 0.3 s");
  EXPECT_TRUE(hung.batch.empty());
  // Ticks go on failing until the helper is ended; a new one answers its first call again.
  ASSERT_TRUE(testing::WaitUntil([&] { return !CollectTick(*collector, 2).batch.empty(); },
                                 std::chrono::milliseconds(30'000)));
  // (More than once when a request reached a new helper still starting up: its second call hangs.)
  EXPECT_GE(Calls("construct"), 2);
  const auto warnings = Warnings();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.front().find("no answer for"), std::string::npos) << warnings.front();
}

TEST_F(IpuFamily, AHelperThatExitsIsStartedAgain) {
  CollectorContext ctx = Context("gcipuinfo_getDevices_mock.json", "exit");
  ctx.environment["RUNMON_FAKE_GCIPUINFO_AFTER"] = "1";
  auto collector = Started(ctx);
  ASSERT_TRUE(collector);
  ASSERT_TRUE(FirstHeard(*collector).status.ok());
  EXPECT_FALSE(CollectTick(*collector, 1).status.ok());  // it exits in getDevices
  ASSERT_TRUE(testing::WaitUntil([&] { return !CollectTick(*collector, 2).batch.empty(); },
                                 std::chrono::milliseconds(20'000)));
  EXPECT_GE(Calls("construct"), 2);  // (again when a request reached a new helper still starting up)
  const auto warnings = Warnings();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.front().find("python3: exited with status 1"), std::string::npos) << warnings.front();
}

TEST_F(IpuFamily, WithoutTheModuleTheCollectorEndsQuietly) {
  auto collector = Started(Context("gcipuinfo_getDevices_mock.json", "normal", /*with_module=*/false));
  ASSERT_TRUE(collector);
  // Quiet from the first tick to the end: no keys, no error.
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        const Collected tick = CollectTick(*collector, 0);
        EXPECT_TRUE(tick.status.ok()) << tick.status.error();
        EXPECT_TRUE(tick.batch.empty());
        return collector->Ended();
      },
      std::chrono::milliseconds(20'000)));
  collector.reset();
  EXPECT_TRUE(Warnings().empty()) << Warnings().front();
}

TEST_F(IpuFamily, ProbeGivesTheMetadataOrWhyNot) {
  auto probed = Ipu().probe(Context("gcipuinfo_real_format.json"));
  ASSERT_TRUE(probed.ok()) << probed.error();
  EXPECT_EQ((*probed)["ipu"]["device_count"], 3);
  EXPECT_EQ((*probed)["ipu"]["devices"][0]["board type"], "C600");
  auto missing = Ipu().probe(Context("gcipuinfo_real_format.json", "normal", /*with_module=*/false));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), "No module named 'gcipuinfo'");
}

TEST_F(IpuFamily, GcInfoWhereTheModuleIsMissing) {
  auto collector = Started(Context("gcipuinfo_getDevices_mock.json", "normal", /*with_module=*/false,
                                   /*with_gc_info=*/true));
  ASSERT_TRUE(collector);
  // The helper first says the module is missing, then gc-info answers: ask until the first sight comes.
  Collected t0;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        t0 = CollectTick(*collector, 0);
        return !t0.batch.empty();
      },
      std::chrono::milliseconds(20'000)));
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  EXPECT_FALSE(collector->Ended());
  EXPECT_EQ(Devices(t0), (std::set<std::string>{"ipu.0"}));  // device 1 has no user process
  EXPECT_DOUBLE_EQ(t0["ipu.0.average board temp (C)"], 17.8);
  EXPECT_DOUBLE_EQ(t0["ipu.0.ipu utilisation (%)"], 42.5);
  EXPECT_DOUBLE_EQ(t0["ipu.0.total board power (W)"], 12.6);
  EXPECT_DOUBLE_EQ(t0["ipu.0.user process id"], ::getpid());
  const Collected t1 = CollectTick(*collector, 1);
  ASSERT_TRUE(t1.status.ok()) << t1.status.error();
  EXPECT_TRUE(t1.Has("ipu.0.clock (MHz)"));
  EXPECT_FALSE(t1.Has("ipu.0.total board power (W)"));
  auto probed = Ipu().probe(Context("gcipuinfo_getDevices_mock.json", "normal", false, true));
  ASSERT_TRUE(probed.ok()) << probed.error();
  EXPECT_EQ((*probed)["ipu"]["device_count"], 2);
}

// Without python3 on PATH (only what the fake gc-info needs: cat, sed), gc-info is the source from the
// start, and no helper is tried.
TEST_F(IpuFamily, GcInfoWithoutPython3) {
  CollectorContext ctx = Context("gcipuinfo_getDevices_mock.json", "normal", false, true);
  const fs::path tools = dir_.path() / "bin";
  fs::create_directories(tools);
  for (const char* tool : {"cat", "sed", "sleep"}) fs::create_symlink(fs::path("/bin") / tool, tools / tool);
  ctx.environment["PATH"] = (FakesDir() / "gc_info").string() + ":" + tools.string();
  auto collector = Started(ctx);
  ASSERT_TRUE(collector);
  const Collected t0 = FirstHeard(*collector);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  EXPECT_DOUBLE_EQ(t0["ipu.0.average die temp (C)"], 20);
  EXPECT_EQ(Calls("construct"), 0);
}

// The host's IPUs and PIDs are not a fixture tree's: under another root nothing is started.
TEST_F(IpuFamily, AbsentUnderAnotherRoot) {
  CollectorContext ctx = Context("gcipuinfo_getDevices_mock.json");
  ctx.paths = HostPaths::Under(dir_.path());
  FamilyStart started = Ipu().start(ctx);
  EXPECT_TRUE(started.collectors.empty());
  EXPECT_EQ(started.absent_reason,
            "the proc and sys roots are not this host's own (--root): gcipuinfo and gc-info would read this "
            "host's IPUs");
  EXPECT_FALSE(Ipu().probe(ctx).ok());
  EXPECT_EQ(Calls("construct"), 0);
}

TEST_F(IpuFamily, AbsentWithoutPython3OrGcInfo) {
  CollectorContext ctx = Context("gcipuinfo_getDevices_mock.json");
  ctx.environment["PATH"] = dir_.path().string();
  FamilyStart started = Ipu().start(ctx);
  EXPECT_TRUE(started.collectors.empty());
  EXPECT_EQ(started.absent_reason, "neither python3 (for the gcipuinfo module) nor gc-info is on PATH (" +
                                       dir_.path().string() + ")");
  auto probed = Ipu().probe(ctx);
  ASSERT_FALSE(probed.ok());
  EXPECT_EQ(probed.error(), started.absent_reason);
}

}  // namespace
}  // namespace runmon
