// The amd family on the amd-gpus host tree (tests/fixtures/hosts/README.md lists its values): which DRM
// entries are cards and how they are numbered, each card's keys from sysfs and hwmon with the omissions its
// files call for, the second reading, metadata, the index rule beside NVIDIA GPUs, x_stats_gpu_device_ids,
// why the family is absent, files that break, the run's own share of each card, and the vendor tool (the
// fake rocm-smi of tests/fakes/amd_tools) filling what sysfs lacks or naming the cards sysfs does not show.
#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectors/builtin.hpp"
#include "fixture_tree.hpp"

namespace runmon {
namespace {

using test::Collected;
using test::FakeClocks;
using test::FixtureTree;
using test::HostFixture;

const CollectorFamily& Amd() {
  for (const CollectorFamily* family : CollectorFamilies()) {
    if (family->name == "amd") return *family;
  }
  ADD_FAILURE() << "no amd family";
  return *CollectorFamilies().front();
}

std::filesystem::path FakeRocmSmiDir() {
  return std::filesystem::path(RUNMON_FIXTURES_DIR).parent_path() / "fakes" / "amd_tools" / "rocm_smi";
}

class AmdTree : public ::testing::Test {
 protected:
  CollectorContext Context(Settings settings = Settings{}, std::optional<long> pid = std::nullopt) {
    CollectorContext ctx = test::FixtureContext(tree_.paths(), pid, clocks_, settings);
    ctx.warn = [this](const std::string& message) { warnings_.push_back(message); };
    ctx.publish_metadata = [this](const nlohmann::json& meta) { published_.push_back(meta); };
    return ctx;
  }
  Collected Collect(Collector& collector, uint64_t index = 0) {
    Collected collected;
    collected.status = collector.Collect(Tick{.index = index}, collected.batch);
    return collected;
  }
  // The gpu.N prefixes that have any key.
  static std::set<std::string> Gpus(const Collected& collected) {
    std::set<std::string> gpus;
    for (const auto& key : collected.Keys()) gpus.insert(key.substr(0, key.find('.', 4)));
    return gpus;
  }

  FixtureTree tree_{HostFixture("amd-gpus")};
  FakeClocks clocks_{1000.0, 50.0};
  std::vector<std::string> warnings_;
  std::vector<nlohmann::json> published_;
};

TEST_F(AmdTree, CardsAreAmdgpuCardsInCardNumberOrder) {
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u) << started.absent_reason;
  const Collected t0 = Collect(*started.collectors[0]);
  ASSERT_TRUE(t0.status.ok()) << t0.status.error();
  // card0, card2, card3, card10; not card1 (ASPEED), card4 (radeon), the connectors or renderD*.
  EXPECT_EQ(Gpus(t0), (std::set<std::string>{"gpu.0", "gpu.1", "gpu.2", "gpu.3"}));
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_F(AmdTree, EveryCardsValuesFromItsFiles) {
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u) << started.absent_reason;
  const Collected t0 = Collect(*started.collectors[0]);
  // card0: the MI250 with every file.
  EXPECT_DOUBLE_EQ(t0["gpu.0.gpu"], 87);
  EXPECT_DOUBLE_EQ(t0["gpu.0.memoryReadWriteActivity"], 34);
  EXPECT_DOUBLE_EQ(t0["gpu.0.memoryAllocatedBytes"], 17175674880.0);
  EXPECT_DOUBLE_EQ(t0["gpu.0.memoryAllocated"], 25);
  EXPECT_DOUBLE_EQ(t0["gpu.0.gttMemoryAllocatedBytes"], 1210056704.0);
  EXPECT_DOUBLE_EQ(t0["gpu.0.gttMemoryAllocated"], 0.8957481736741897);
  EXPECT_DOUBLE_EQ(t0["gpu.0.powerWatts"], 288);
  EXPECT_DOUBLE_EQ(t0["gpu.0.enforcedPowerLimitWatts"], 450);
  EXPECT_DOUBLE_EQ(t0["gpu.0.powerPercent"], 64);
  EXPECT_DOUBLE_EQ(t0["gpu.0.tempEdge"], 41);
  EXPECT_DOUBLE_EQ(t0["gpu.0.tempJunction"], 49);
  EXPECT_DOUBLE_EQ(t0["gpu.0.tempMemory"], 56);
  EXPECT_DOUBLE_EQ(t0["gpu.0.temp"], 56);  // the memory sensor, as W&B reads it
  EXPECT_DOUBLE_EQ(t0["gpu.0.smClock"], 1500);
  EXPECT_DOUBLE_EQ(t0["gpu.0.memoryClock"], 1600);
  EXPECT_DOUBLE_EQ(t0["gpu.0.fanSpeed"], 40);
  EXPECT_DOUBLE_EQ(t0["gpu.0.fanRpm"], 1920);
  EXPECT_DOUBLE_EQ(t0["gpu.0.energyJoules"], 0);
  EXPECT_DOUBLE_EQ(t0["gpu.0.memoryOverDrive"], 0);
  // card2: power1_input only (Linux 6.6+), no memory sensor: temp is the junction's.
  EXPECT_DOUBLE_EQ(t0["gpu.1.gpu"], 12);
  EXPECT_DOUBLE_EQ(t0["gpu.1.memoryAllocated"], 9.379579872984856);
  EXPECT_DOUBLE_EQ(t0["gpu.1.powerWatts"], 95);
  EXPECT_DOUBLE_EQ(t0["gpu.1.powerPercent"], 38);
  EXPECT_DOUBLE_EQ(t0["gpu.1.temp"], 44);
  EXPECT_FALSE(t0.Has("gpu.1.tempMemory"));
  EXPECT_DOUBLE_EQ(t0["gpu.1.smClock"], 1254);
  EXPECT_DOUBLE_EQ(t0["gpu.1.fanSpeed"], 60);
  EXPECT_DOUBLE_EQ(t0["gpu.1.memoryOverDrive"], 2);
  EXPECT_FALSE(t0.Has("gpu.1.energyJoules"));
  // card3: no hwmon at all: nothing of power, temperature or fan, never 0.
  EXPECT_DOUBLE_EQ(t0["gpu.2.gpu"], 55);
  EXPECT_DOUBLE_EQ(t0["gpu.2.memoryAllocated"], 37.5);
  EXPECT_DOUBLE_EQ(t0["gpu.2.smClock"], 1502);
  EXPECT_DOUBLE_EQ(t0["gpu.2.memoryClock"], 1200);
  for (const char* leaf : {"powerWatts", "powerPercent", "enforcedPowerLimitWatts", "temp", "tempEdge",
                           "fanSpeed", "fanRpm", "energyJoules"}) {
    EXPECT_FALSE(t0.Has(std::string("gpu.2.") + leaf)) << leaf;
  }
  // card10: the APU; the average power wins over the current one; GTT is most of its memory.
  EXPECT_DOUBLE_EQ(t0["gpu.3.gpu"], 7);
  EXPECT_FALSE(t0.Has("gpu.3.memoryReadWriteActivity"));
  EXPECT_DOUBLE_EQ(t0["gpu.3.memoryAllocated"], 75);
  EXPECT_DOUBLE_EQ(t0["gpu.3.gttMemoryAllocatedBytes"], 6442450944.0);
  EXPECT_DOUBLE_EQ(t0["gpu.3.gttMemoryAllocated"], 9.375);
  EXPECT_DOUBLE_EQ(t0["gpu.3.powerWatts"], 27);
  EXPECT_DOUBLE_EQ(t0["gpu.3.powerPercent"], 60);
  EXPECT_DOUBLE_EQ(t0["gpu.3.temp"], 52);
  EXPECT_DOUBLE_EQ(t0["gpu.3.memoryClock"], 2800);
  EXPECT_FALSE(t0.Has("gpu.3.fanSpeed"));
}

TEST_F(AmdTree, TheSecondReadingFromTheSameOpenFiles) {
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  Collect(*started.collectors[0]);
  tree_.MirrorFrom(HostFixture("amd-gpus") / "t1");
  clocks_.Advance(1.0);
  const Collected t1 = Collect(*started.collectors[0], 1);
  EXPECT_DOUBLE_EQ(t1["gpu.0.gpu"], 91);
  EXPECT_DOUBLE_EQ(t1["gpu.1.gpu"], 14);
  EXPECT_DOUBLE_EQ(t1["gpu.0.energyJoules"], 288);  // 288 W over the second
}

TEST_F(AmdTree, EnergyCountsOnWhenTheCounterStartsAgain) {
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  const std::string energy = "sys/devices/pci0000:00/0000:00:01.1/0000:03:00.0/hwmon/hwmon2/energy1_input";
  ASSERT_TRUE(tree_.Exists(energy)) << "the tree moved card0's hwmon";
  Collect(*started.collectors[0]);
  tree_.Write(energy, "1000010000000\n");  // +10 J
  EXPECT_DOUBLE_EQ(Collect(*started.collectors[0], 1)["gpu.0.energyJoules"], 10);
  tree_.Write(energy, "5000000\n");  // the driver was reloaded: the counter starts from 0 again
  EXPECT_DOUBLE_EQ(Collect(*started.collectors[0], 2)["gpu.0.energyJoules"], 10);
  tree_.Write(energy, "7000000\n");  // +2 J since then
  EXPECT_DOUBLE_EQ(Collect(*started.collectors[0], 3)["gpu.0.energyJoules"], 12);
}

TEST_F(AmdTree, MetadataInWandbsLayout) {
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  Collect(*started.collectors[0]);
  Collect(*started.collectors[0], 1);
  ASSERT_EQ(published_.size(), 1u);  // once
  const nlohmann::json& meta = published_.front();
  EXPECT_EQ(meta["gpu_count"], 4);
  EXPECT_EQ(meta["gpu"], "AMD INSTINCT MI250 (MCM) OAM AC MBA");
  ASSERT_EQ(meta["gpu_amd"].size(), 4u);
  const nlohmann::json& first = meta["gpu_amd"][0];
  EXPECT_EQ(first["id"], "0");
  EXPECT_EQ(first["uniqueId"], "0x5c0b1e2a9f3d4e71");
  EXPECT_EQ(first["vbiosVersion"], "113-D65201-042");
  EXPECT_EQ(first["sku"], "D65201");
  EXPECT_EQ(first["model"], "0x740c");
  EXPECT_EQ(first["maxPower"], "450.0");
  EXPECT_EQ(meta["gpu_amd"][1]["sku"], "D41201");  // six characters, as rocm-smi cuts it
  EXPECT_EQ(meta["gpu_amd"][3].count("uniqueId"), 0u);
  const nlohmann::json& devices = meta["runmon"]["amd"]["devices"];
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[3]["key"], "gpu.3");
  EXPECT_EQ(devices[3]["card"], "card10");
  EXPECT_EQ(devices[3]["pciBusId"], "0000:c4:00.0");
  EXPECT_EQ(devices[0]["memoryTotal"], "68702699520");
  EXPECT_EQ(meta["runmon"]["amd"]["driverVersion"], "6.3.6");
  // runmon info's probe gives the same facts.
  auto probed = Amd().probe(Context());
  ASSERT_TRUE(probed) << probed.error();
  EXPECT_EQ(*probed, meta);
}

// Adds an NVIDIA GPU bound to the nvidia driver at `address` on the PCI bus.
void AddNvidiaGpu(FixtureTree& tree, const std::string& address) {
  const std::string device = "sys/devices/pci0000:00/" + address;
  tree.Write(device + "/vendor", "0x10de\n").Write(device + "/class", "0x030200\n");
  tree.Mkdir("sys/bus/pci/devices").Mkdir("sys/bus/pci/drivers/nvidia");
  std::filesystem::create_directory_symlink("../../../devices/pci0000:00/" + address,
                                            tree.Path("sys/bus/pci/devices/" + address));
  std::filesystem::create_directory_symlink("../../../bus/pci/drivers/nvidia", tree.Path(device + "/driver"));
}

TEST_F(AmdTree, AfterTheNvidiaGpusOfTheHost) {
  AddNvidiaGpu(tree_, "0000:17:00.0");
  AddNvidiaGpu(tree_, "0000:18:00.0");
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  const Collected t0 = Collect(*started.collectors[0]);
  EXPECT_EQ(Gpus(t0), (std::set<std::string>{"gpu.2", "gpu.3", "gpu.4", "gpu.5"}));
  EXPECT_DOUBLE_EQ(t0["gpu.2.gpu"], 87);  // card0
  const nlohmann::json& meta = published_.front();
  EXPECT_EQ(meta["gpu_count"], 6);   // the host's, as the NVIDIA family writes it too
  EXPECT_EQ(meta.count("gpu"), 0u);  // the GPU type is the first GPU's: NVIDIA's
  EXPECT_EQ(meta["gpu_amd"][0]["id"], "2");
}

TEST_F(AmdTree, DeviceIdsSelectKeys) {
  Settings settings;
  settings.other["x_stats_gpu_device_ids"] = "[1, 3]";
  FamilyStart started = Amd().start(Context(settings));
  ASSERT_EQ(started.collectors.size(), 1u);
  const Collected t0 = Collect(*started.collectors[0]);
  EXPECT_EQ(Gpus(t0), (std::set<std::string>{"gpu.1", "gpu.3"}));
  EXPECT_DOUBLE_EQ(t0["gpu.3.gpu"], 7);  // card10 keeps its index
  settings.other["x_stats_gpu_device_ids"] = "[7]";
  started = Amd().start(Context(settings));
  EXPECT_TRUE(started.collectors.empty());
  EXPECT_EQ(started.absent_reason, "no AMD GPU is selected by x_stats_gpu_device_ids");
}

TEST_F(AmdTree, AbsentWithTheReason) {
  tree_.Write("sys/module/amdgpu/initstate", "coming\n");
  FamilyStart started = Amd().start(Context());
  EXPECT_TRUE(started.collectors.empty());
  EXPECT_NE(started.absent_reason.find("not ready"), std::string::npos) << started.absent_reason;
  EXPECT_FALSE(Amd().probe(Context()));
  tree_.Remove("sys/module/amdgpu");
  started = Amd().start(Context());
  EXPECT_NE(started.absent_reason.find("not loaded"), std::string::npos) << started.absent_reason;
  FixtureTree bare;
  bare.Write("sys/module/amdgpu/initstate", "live\n").Mkdir("sys/class/drm");
  CollectorContext ctx = test::FixtureContext(bare.paths(), std::nullopt, clocks_);
  started = Amd().start(ctx);
  EXPECT_NE(started.absent_reason.find("drives no card"), std::string::npos) << started.absent_reason;
}

TEST_F(AmdTree, ABrokenFileLosesOnlyItsKeyAndIsSaidOnce) {
  const std::string busy = "sys/devices/pci0000:00/0000:00:01.1/0000:03:00.0/gpu_busy_percent";
  ASSERT_TRUE(tree_.Exists(busy));
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  tree_.Write(busy, "garbage\n");
  Collected t0 = Collect(*started.collectors[0]);
  EXPECT_TRUE(t0.status.ok());
  EXPECT_FALSE(t0.Has("gpu.0.gpu"));
  EXPECT_TRUE(t0.Has("gpu.0.memoryAllocated"));
  EXPECT_TRUE(t0.Has("gpu.1.gpu"));
  tree_.Write(busy, "250\n");  // more than 100 %: cannot be true
  Collected t1 = Collect(*started.collectors[0], 1);
  EXPECT_FALSE(t1.Has("gpu.0.gpu"));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("gpu_busy_percent"), std::string::npos) << warnings_[0];
  tree_.Write(busy, "64\n");
  EXPECT_DOUBLE_EQ(Collect(*started.collectors[0], 2)["gpu.0.gpu"], 64);
}

TEST_F(AmdTree, TheRunsOwnShareOfEachCard) {
  FamilyStart started = Amd().start(Context(Settings{}, 5000));
  ASSERT_EQ(started.collectors.size(), 1u);
  const Collected t0 = Collect(*started.collectors[0]);
  // 5000's client 42 (two descriptors) on card0, counted once; 5100 uses card0 too but is not the run's.
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.memoryAllocatedBytes"], 4294967296.0);
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.memoryAllocated"], 6.2515262515262515);
  EXPECT_FALSE(t0.Has("gpu.process.0.gpu"));  // no earlier reading to compare with
  // The card's own values, repeated while the run uses it.
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.temp"], 56);
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.powerWatts"], 288);
  EXPECT_DOUBLE_EQ(t0["gpu.process.0.powerPercent"], 64);
  // 5001, the child, on card2 with an old kernel's keys.
  EXPECT_DOUBLE_EQ(t0["gpu.process.1.memoryAllocatedBytes"], 1073741824.0);
  EXPECT_DOUBLE_EQ(t0["gpu.process.1.memoryAllocated"], 3.126526624328285);
  EXPECT_TRUE(t0.Has("gpu.process.1.gpu"));
  EXPECT_FALSE(t0.Has("gpu.process.2.memoryAllocatedBytes"));  // card3: the run holds nothing there
  EXPECT_FALSE(t0.Has("gpu.process.3.memoryAllocatedBytes"));
  tree_.MirrorFrom(HostFixture("amd-gpus") / "t1");
  clocks_.Advance(1.0);
  const Collected t1 = Collect(*started.collectors[0], 1);
  EXPECT_DOUBLE_EQ(t1["gpu.process.0.gpu"], 75);  // gfx 0.45 s + compute 0.30 s over the second
}

TEST_F(AmdTree, NoMonitoredProcessNoShare) {
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  for (const auto& key : Collect(*started.collectors[0]).Keys())
    EXPECT_FALSE(key.starts_with("gpu.process.")) << key;
}

class AmdTreeWithTool : public AmdTree {
 protected:
  // A context whose vendor tool is the fake rocm-smi printing `json`.
  CollectorContext ToolContext(const std::string& json) {
    tree_.Write("tool/rocm-smi.json", json);
    CollectorContext ctx = Context();
    ctx.settings.interval_seconds = 0.2;
    ctx.environment = {{"RUNMON_AMD_TOOL_PATH", FakeRocmSmiDir().string()},
                       {"RUNMON_FAKE_AMD_FIXTURE", tree_.Path("tool/rocm-smi.json").string()},
                       {"PATH", "/usr/bin:/bin"}};
    return ctx;
  }
  // Collects until `key` appears (the tool runs in the background), at most `ticks` times 50 ms.
  Collected CollectUntil(Collector& collector, const std::string& key, int ticks = 200) {
    Collected collected;
    for (int i = 0; i < ticks; ++i) {
      clocks_.Advance(0.05);
      collected = Collect(collector, static_cast<uint64_t>(i));
      if (collected.Has(key)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return collected;
  }
};

TEST_F(AmdTreeWithTool, FillsWhatSysfsLacksAndNothingElse) {
  // card3 has no hwmon: its power and temperature come from the tool; card0's busy stays sysfs's.
  FamilyStart started = Amd().start(ToolContext(R"json({
    "card0": {"PCI Bus": "0000:03:00.0", "GPU use (%)": "5", "Average Graphics Package Power (W)": "1.0"},
    "card2": {"PCI Bus": "0000:83:00.0", "GPU use (%)": "99", "Average Graphics Package Power (W)": "201.0",
              "Max Graphics Package Power (W)": "300.0", "Temperature (Sensor junction) (C)": "61.0"},
    "card9": {"PCI Bus": "0000:99:00.0", "GPU use (%)": "42"},
    "system": {
  "Driver version" : "6.3.6"
}
})json"));
  ASSERT_EQ(started.collectors.size(), 1u);
  const Collected filled = CollectUntil(*started.collectors[0], "gpu.2.powerWatts");
  EXPECT_DOUBLE_EQ(filled["gpu.2.powerWatts"], 201);
  EXPECT_DOUBLE_EQ(filled["gpu.2.powerPercent"], 67);
  EXPECT_DOUBLE_EQ(filled["gpu.2.temp"], 61);
  EXPECT_DOUBLE_EQ(filled["gpu.2.gpu"], 55);  // sysfs has it
  EXPECT_DOUBLE_EQ(filled["gpu.0.gpu"], 87);
  EXPECT_DOUBLE_EQ(filled["gpu.0.powerWatts"], 288);
  EXPECT_FALSE(filled.Has("gpu.4.gpu"));  // a tool card sysfs does not have is not a card of its own
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

TEST_F(AmdTreeWithTool, AToolThatFailsIsSaidOnceAndSysfsGoesOn) {
  FamilyStart started = Amd().start(ToolContext("this is not JSON"));
  ASSERT_EQ(started.collectors.size(), 1u);
  Collected last;
  for (int i = 0; i < 40 && warnings_.empty(); ++i) {
    clocks_.Advance(0.05);
    last = Collect(*started.collectors[0], static_cast<uint64_t>(i));
    EXPECT_TRUE(last.status.ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("rocm-smi"), std::string::npos) << warnings_[0];
  EXPECT_DOUBLE_EQ(last["gpu.0.gpu"], 87);
  EXPECT_FALSE(last.Has("gpu.2.powerWatts"));
}

TEST_F(AmdTreeWithTool, TheToolNamesTheCardsWhenSysfsShowsNone) {
  tree_.Remove("sys/class/drm");
  FamilyStart started = Amd().start(ToolContext(R"json({
    "card0": {"PCI Bus": "0000:03:00.0", "GPU use (%)": "12", "Card Series": "AMD INSTINCT MI250"
}
, "card1" : {
  "PCI Bus" : "0000:43:00.0", "GPU use (%)" : "34"
}
})json"));
  ASSERT_EQ(started.collectors.size(), 1u) << started.absent_reason;
  const Collected collected = CollectUntil(*started.collectors[0], "gpu.1.gpu");
  EXPECT_DOUBLE_EQ(collected["gpu.0.gpu"], 12);
  EXPECT_DOUBLE_EQ(collected["gpu.1.gpu"], 34);
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_EQ(published_[0]["gpu_count"], 2);
  EXPECT_EQ(published_[0]["gpu"], "AMD INSTINCT MI250");
  EXPECT_EQ(published_[0]["runmon"]["amd"]["devices"][1]["pciBusId"], "0000:43:00.0");
  // runmon info asks the tool once, and waits for it.
  auto probed = Amd().probe(ToolContext(tree_.Read("tool/rocm-smi.json")));
  ASSERT_TRUE(probed) << probed.error();
  EXPECT_EQ((*probed)["gpu_count"], 2);
}

TEST_F(AmdTreeWithTool, InfoSaysWhyWhenTheToolFindsNothingEither) {
  tree_.Remove("sys/class/drm");
  auto probed = Amd().probe(ToolContext("{}"));
  ASSERT_FALSE(probed);
  EXPECT_NE(probed.error().find("cannot be read"), std::string::npos) << probed.error();
  EXPECT_NE(probed.error().find("rocm-smi"), std::string::npos) << probed.error();
}

TEST_F(AmdTree, ValuesNoCardReadsNeverLeave) {
  const std::string card0 = "sys/devices/pci0000:00/0000:00:01.1/0000:03:00.0/";
  const std::string hwmon = card0 + "hwmon/hwmon2/";
  ASSERT_TRUE(tree_.Exists(hwmon + "temp1_input"));
  tree_.Write(hwmon + "temp1_input", "900000000\n");          // 900,000 °C
  tree_.Write(hwmon + "power1_average", "99000000000000\n");  // 99 MW
  tree_.Write(hwmon + "pwm1_enable", "0\n");                  // fan control off: the RPM share counts
  tree_.Write(hwmon + "fan1_input", "9000\n");                // over fan1_max
  tree_.Write(card0 + "pp_mclk_od", "250\n");                 // an overdrive of 250 %
  FamilyStart started = Amd().start(Context());
  ASSERT_EQ(started.collectors.size(), 1u);
  const Collected t0 = Collect(*started.collectors[0]);
  for (const char* key : {"gpu.0.tempEdge", "gpu.0.powerWatts", "gpu.0.powerPercent", "gpu.0.fanSpeed",
                          "gpu.0.memoryOverDrive"}) {
    EXPECT_FALSE(t0.Has(key)) << key;
  }
  EXPECT_DOUBLE_EQ(t0["gpu.0.fanRpm"], 9000);
  EXPECT_DOUBLE_EQ(t0["gpu.0.tempJunction"], 49);  // the card's other values stay
}

TEST_F(AmdTreeWithTool, ASelectionOfNoneOfTheCardsIsNotTheToolsToFill) {
  Settings settings;
  settings.other["x_stats_gpu_device_ids"] = "[9]";
  CollectorContext ctx = ToolContext(R"json({"card0": {"PCI Bus": "0000:03:00.0", "GPU use (%)": "5"}})json");
  ctx.settings.other = settings.other;
  FamilyStart started = Amd().start(ctx);
  EXPECT_TRUE(started.collectors.empty());
  EXPECT_EQ(started.absent_reason, "no AMD GPU is selected by x_stats_gpu_device_ids");
  EXPECT_FALSE(Amd().probe(ctx));
}

TEST_F(AmdTreeWithTool, TheToolsCardsFollowTheSelectionToo) {
  tree_.Remove("sys/class/drm");
  CollectorContext ctx = ToolContext(R"json({
    "card0": {"PCI Bus": "0000:03:00.0", "GPU use (%)": "12"},
    "card1": {"PCI Bus": "0000:43:00.0", "GPU use (%)": "34"}})json");
  ctx.settings.other["x_stats_gpu_device_ids"] = "[1]";
  FamilyStart started = Amd().start(ctx);
  ASSERT_EQ(started.collectors.size(), 1u);
  const Collected collected = CollectUntil(*started.collectors[0], "gpu.1.gpu");
  EXPECT_DOUBLE_EQ(collected["gpu.1.gpu"], 34);
  EXPECT_FALSE(collected.Has("gpu.0.gpu"));
  ASSERT_EQ(published_.size(), 1u);
  ASSERT_EQ(published_[0]["gpu_amd"].size(), 1u);
  EXPECT_EQ(published_[0]["gpu_amd"][0]["id"], "1");
}

TEST_F(AmdTreeWithTool, AMergedValueIsCheckedAgain) {
  // card3 (gpu.2) loses its VRAM total; the tool's total is smaller than sysfs's used bytes.
  tree_.Remove("sys/devices/pci0000:80/0000:80:03.1/0000:83:00.0/mem_info_vram_total");
  FamilyStart started = Amd().start(ToolContext(R"json({
    "card2": {"PCI Bus": "0000:83:00.0", "VRAM Total Memory (B)": "1000", "Average Graphics Package Power (W)": "201.0"}})json"));
  ASSERT_EQ(started.collectors.size(), 1u);
  const Collected merged = CollectUntil(*started.collectors[0], "gpu.2.powerWatts");
  EXPECT_DOUBLE_EQ(merged["gpu.2.powerWatts"], 201);
  EXPECT_FALSE(merged.Has("gpu.2.memoryAllocated"));
  EXPECT_FALSE(merged.Has("gpu.2.memoryAllocatedBytes"));
}

TEST_F(AmdTree, NoToolUnderAnotherRoot) {
  // The tree is not the host's own: a tool on PATH would read the host's /sys, so none is started, and a
  // tree without cards stays absent.
  tree_.Remove("sys/class/drm");
  CollectorContext ctx = Context();
  ctx.environment = {{"PATH", FakeRocmSmiDir().string()}};
  FamilyStart started = Amd().start(ctx);
  EXPECT_TRUE(started.collectors.empty());
}

}  // namespace
}  // namespace runmon
